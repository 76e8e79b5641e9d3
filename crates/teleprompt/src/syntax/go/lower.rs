//! Lowers a Go parse tree to the engine's program: resolves functions,
//! variables (to frame slots, with Go's scoping) and template names, and
//! turns pipelines into nested calls (`a | f b` is `f b a`).

use std::cell::RefCell;
use std::collections::HashMap;

use super::ast::*;
use super::engine::program::{
    push_text, Block, Const, Expr, Flavor, Func, Host, Instr, Key, Program, Span as PSpan, Template,
};
use super::includes::Loaded;
use crate::diagnostics::{closest, Findings, TemplateError};
use crate::functions::{ArgAt, Functions, Naming};
use crate::limits::Limits;
use crate::options::Strictness;
use crate::syntax::{builtin_types, host_calls};

type Result<T> = std::result::Result<T, TemplateError>;

/// Lowers `tree` (parsed from the start of `loaded.source`), with the
/// templates of the files it loaded, to a program; names that are not
/// built-ins resolve to the host's `functions`. Unknown functions, wrong
/// argument counts, undefined variables and missing templates do not stop
/// it: they are returned with a program that must not run. Spans are in
/// `loaded.source`.
pub(crate) fn lower(
    tree: &Tree,
    loaded: &Loaded,
    strictness: Strictness,
    functions: &Functions,
    limits: Limits,
) -> Result<(Program, Findings)> {
    let src = loaded.source.as_str();
    let hosts = Host::table(
        functions,
        Naming::Identifier,
        |name| Func::go_names().any(|(builtin, _)| builtin == name),
        ("Go templates", "function"),
    )?;
    // Template names first: a template may be called before it is defined.
    let set = choose(tree, loaded)?;
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (index, chosen) in set.iter().enumerate() {
        names.insert(&chosen.define.name, index);
    }
    // The files called by their name: each a template after the defines.
    let mut file_templates: HashMap<usize, usize> = HashMap::new();
    for (index, file) in loaded.files.iter().enumerate() {
        if file.called {
            file_templates.insert(index, set.len() + file_templates.len());
        }
    }
    let sites: HashMap<usize, usize> = loaded
        .sites
        .iter()
        .filter_map(|(site, file)| Some((*site, *file_templates.get(file)?)))
        .collect();
    let lowerer = Lowerer {
        src,
        names: &names,
        sites: &sites,
        misses: &loaded.misses,
        hosts: &hosts,
        found: RefCell::new(Findings::default()),
    };
    let mut templates = Vec::with_capacity(set.len() + file_templates.len());
    for chosen in &set {
        let mut scope = Scope::new();
        let body = lowerer.list(&chosen.define.list, &mut scope)?;
        templates.push(Template {
            name: chosen.define.name.clone().into_boxed_str(),
            body,
            slots: scope.max_slots,
        });
    }
    for file in loaded.files.iter().filter(|file| file.called) {
        let mut scope = Scope::new();
        let body = lowerer.list(&file.tree.root, &mut scope)?;
        templates.push(Template {
            name: file.name.clone().into_boxed_str(),
            body,
            slots: scope.max_slots,
        });
    }
    let mut scope = Scope::new();
    let body = lowerer.list(&tree.root, &mut scope)?;
    let found = lowerer.found.into_inner();
    let program = Program {
        source: src.into(),
        main: Template {
            name: "".into(),
            body,
            slots: scope.max_slots,
        },
        templates,
        strictness,
        limits,
        hosts: hosts.into_boxed_slice(),
        flavor: Flavor::Go,
        python: None,
    };
    Ok((program, found))
}

/// A definition chosen for a name, and the file it is in (`None`: the
/// prompt).
struct Chosen<'t> {
    define: &'t DefineNode,
    file: Option<usize>,
}

/// The definition each name of the set gets: an empty one never replaces
/// one that is not (Go's rule); two that are not empty are an error in
/// one file (as Go's parser says), and across files unless one is the
/// prompt's, which wins.
fn choose<'t>(tree: &'t Tree, loaded: &'t Loaded) -> Result<Vec<Chosen<'t>>> {
    let src = loaded.source.as_str();
    let mut chosen: Vec<Chosen<'t>> = Vec::new();
    let mut names: HashMap<&str, usize> = HashMap::new();
    let sources = std::iter::once((None, &tree.defines)).chain(
        loaded
            .files
            .iter()
            .enumerate()
            .map(|(index, file)| (Some(index), &file.tree.defines)),
    );
    for (file, defines) in sources {
        for define in defines {
            let Some(&index) = names.get(define.name.as_str()) else {
                names.insert(&define.name, chosen.len());
                chosen.push(Chosen { define, file });
                continue;
            };
            let Some(previous) = chosen.get_mut(index) else {
                continue;
            };
            if is_empty(&define.list, src) {
                continue;
            }
            if is_empty(&previous.define.list, src) {
                *previous = Chosen { define, file };
                continue;
            }
            if previous.file == file {
                return Err(TemplateError::parse(
                    Some(define.name_span.clone()),
                    format!(
                        "template: multiple definition of template {:?}",
                        define.name
                    ),
                )
                .with_kind("duplicate-template"));
            }
            let Some(earlier) = previous.file else {
                // The prompt's own definition wins.
                continue;
            };
            let origin = |index: usize| loaded.files.get(index).map_or("", |f| f.name.as_str());
            return Err(TemplateError::parse(
                Some(define.name_span.clone()),
                format!(
                    "template {:?} is defined in both {} and {}",
                    define.name,
                    origin(earlier),
                    file.map_or("", origin)
                ),
            )
            .with_kind("duplicate-template")
            .suggest(Some(
                "rename one of them, or define it in the prompt (the prompt's definition wins)"
                    .to_string(),
            )));
        }
    }
    Ok(chosen)
}

/// Go's `IsEmptyTree`: only spaces and comments.
pub(super) fn is_empty(list: &ListNode, src: &str) -> bool {
    list.nodes.iter().all(|node| match node {
        Node::Text(text) => src
            .get(text.span.clone())
            .is_none_or(|t| t.trim().is_empty()),
        Node::Comment(_) => true,
        _ => false,
    })
}

/// Variables in scope: names to slots of the template's frame.
struct Scope {
    vars: Vec<(String, u32)>,
    next: u32,
    max_slots: u32,
}

impl Scope {
    fn new() -> Scope {
        Scope {
            vars: vec![("$".to_string(), 0)],
            next: 1,
            max_slots: 1,
        }
    }

    fn mark(&self) -> (usize, u32) {
        (self.vars.len(), self.next)
    }

    fn reset(&mut self, mark: (usize, u32)) {
        self.vars.truncate(mark.0);
        self.next = mark.1;
    }

    fn declare(&mut self, name: &str) -> u32 {
        let slot = self.next;
        self.next += 1;
        self.max_slots = self.max_slots.max(self.next);
        self.vars.push((name.to_string(), slot));
        slot
    }

    fn lookup(&self, variable: &VariableNode) -> Result<u32> {
        self.vars
            .iter()
            .rev()
            .find(|(name, _)| *name == variable.name)
            .map(|(_, slot)| *slot)
            .ok_or_else(|| {
                let name_span = variable.span.start..variable.span.start + variable.name.len();
                TemplateError::parse(
                    Some(name_span),
                    format!("undefined variable {:?}", variable.name),
                )
                .suggest(
                    closest(
                        &variable.name,
                        self.vars
                            .iter()
                            .map(|(n, _)| n.as_str())
                            .filter(|n| *n != "$"),
                    )
                    .map(|c| format!("did you mean \"{c}\"?"))
                    .or_else(|| {
                        Some(format!(
                            "declare it first: {{{{ {} := … }}}}",
                            variable.name
                        ))
                    }),
                )
            })
    }
}

struct Lowerer<'t> {
    src: &'t str,
    names: &'t HashMap<&'t str, usize>,
    /// Calls that name a file (by the start of the quoted name): its
    /// template.
    sites: &'t HashMap<usize, usize>,
    /// Calls nothing resolves: what was looked for.
    misses: &'t HashMap<usize, std::sync::Arc<str>>,
    /// Host functions, sorted by name.
    hosts: &'t [Host],
    /// The errors lowering went on past.
    found: RefCell<Findings>,
}

fn span(range: &Span) -> PSpan {
    PSpan::new(range)
}

impl Lowerer<'_> {
    /// `result`, or `None` after noting its error: lowering goes on, with
    /// a stand-in where the failed part would be.
    fn soft<T>(&self, result: Result<T>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.found.borrow_mut().push(error);
                None
            }
        }
    }

    fn list(&self, list: &ListNode, scope: &mut Scope) -> Result<Block> {
        let mut out: Vec<Instr> = Vec::with_capacity(list.nodes.len());
        for node in &list.nodes {
            self.node(node, scope, &mut out)?;
        }
        Ok(out.into_boxed_slice())
    }

    fn scoped(&self, list: Option<&ListNode>, scope: &mut Scope) -> Result<Block> {
        let Some(list) = list else {
            return Ok(Box::new([]));
        };
        let mark = scope.mark();
        let block = self.list(list, scope);
        scope.reset(mark);
        block
    }

    fn node(&self, node: &Node, scope: &mut Scope, out: &mut Vec<Instr>) -> Result<()> {
        match node {
            Node::Text(text) => {
                let piece = self.src.get(text.span.clone()).unwrap_or("");
                if piece.is_empty() {
                    return Ok(());
                }
                push_text(out, piece, PSpan::new(&text.span));
            }
            Node::Comment(_) => {}
            Node::Action(action) => {
                let pipe = &action.pipe;
                let expr = self.pipe(pipe, scope)?;
                match pipe.decl.first() {
                    None => out.push(Instr::Print {
                        expr,
                        span: span(&action.span),
                    }),
                    Some(variable) => {
                        let slot = if pipe.is_assign {
                            self.soft(scope.lookup(variable)).unwrap_or(0)
                        } else {
                            scope.declare(&variable.name)
                        };
                        out.push(Instr::Set { slot, expr });
                    }
                }
            }
            Node::If(branch) | Node::With(branch) => {
                let mark = scope.mark();
                let cond = self.pipe(&branch.pipe, scope)?;
                let bind = match branch.pipe.decl.first() {
                    None => None,
                    Some(variable) if branch.pipe.is_assign => {
                        Some(self.soft(scope.lookup(variable)).unwrap_or(0))
                    }
                    Some(variable) => Some(scope.declare(&variable.name)),
                };
                let then = self.scoped(Some(&branch.list), scope)?;
                let otherwise = self.scoped(branch.else_list.as_ref(), scope)?;
                scope.reset(mark);
                out.push(if matches!(node, Node::If(_)) {
                    Instr::If {
                        cond,
                        bind,
                        then,
                        otherwise,
                    }
                } else {
                    Instr::With {
                        value: cond,
                        bind,
                        then,
                        otherwise,
                    }
                });
            }
            Node::Range(branch) => {
                let mark = scope.mark();
                let value = self.pipe(&branch.pipe, scope)?;
                let mut slots = Vec::with_capacity(2);
                for variable in &branch.pipe.decl {
                    slots.push(if branch.pipe.is_assign {
                        self.soft(scope.lookup(variable)).unwrap_or(0)
                    } else {
                        scope.declare(&variable.name)
                    });
                }
                let (key, elem) = match slots.as_slice() {
                    [] => (None, None),
                    [elem] => (None, Some(*elem)),
                    [key, elem, ..] => (Some(*key), Some(*elem)),
                };
                let body = self.scoped(Some(&branch.list), scope)?;
                let otherwise = self.scoped(branch.else_list.as_ref(), scope)?;
                scope.reset(mark);
                out.push(Instr::Range {
                    value,
                    key,
                    elem,
                    body,
                    otherwise,
                    span: span(&branch.span),
                    each: None,
                });
            }
            Node::Template(call) | Node::Block(call) => {
                let index = self
                    .names
                    .get(call.name.as_str())
                    .or_else(|| self.sites.get(&call.name_span.start))
                    .copied();
                let arg = match &call.pipe {
                    Some(pipe) => Some(self.pipe(pipe, scope)?),
                    None => None,
                };
                let Some(index) = index else {
                    // Only counted once the errors are full: no help to make.
                    let full = self.found.borrow().is_full();
                    let help = (!full)
                        .then(|| closest(&call.name, self.names.keys().copied()))
                        .flatten()
                        .map(|c| format!("did you mean \"{c}\"?"))
                        .or_else(|| {
                            self.misses
                                .get(&call.name_span.start)
                                .filter(|_| !full)
                                .map(|miss| miss.to_string())
                        });
                    self.found.borrow_mut().push(
                        TemplateError::parse(
                            Some(call.name_span.clone()),
                            format!("no such template {:?}", call.name),
                        )
                        .with_kind("unresolved-include")
                        .suggest(help),
                    );
                    return Ok(());
                };
                out.push(Instr::Call {
                    template: u32::try_from(index).unwrap_or(u32::MAX),
                    arg,
                    span: span(&call.span),
                    block: None,
                });
            }
            Node::Break(_) => out.push(Instr::Break),
            Node::Continue(_) => out.push(Instr::Continue),
        }
        Ok(())
    }

    fn pipe(&self, pipe: &PipeNode, scope: &Scope) -> Result<Expr> {
        let mut value: Option<Expr> = None;
        for cmd in &pipe.cmds {
            value = Some(self.command(cmd, value, scope)?);
        }
        value.ok_or_else(|| TemplateError::parse(Some(pipe.span.clone()), "missing value"))
    }

    fn command(&self, cmd: &CommandNode, piped: Option<Expr>, scope: &Scope) -> Result<Expr> {
        let Some(first) = cmd.args.first() else {
            return Err(TemplateError::parse(
                Some(cmd.span.clone()),
                "empty command",
            ));
        };
        if let Arg::Identifier(ident) = first {
            let func = self.soft(self.func(ident));
            let mut args = Vec::with_capacity(cmd.args.len());
            for arg in cmd.args.get(1..).unwrap_or(&[]) {
                args.push(self.arg(arg, scope)?);
            }
            args.extend(piped);
            let Some(func) = func else {
                return Ok(Expr::Const(Const::Null));
            };
            if self
                .soft(check_arity(func, args.len(), &cmd.span))
                .is_none()
            {
                return Ok(Expr::Const(Const::Null));
            }
            let given = cmd.args.get(1..).unwrap_or(&[]);
            let wrong =
                builtin_types::check(func, &ident.name, &args, self.src, &cmd.span, |index| {
                    builtin_types::Place {
                        span: given.get(index).map(Arg::span),
                        label: format!("argument {}", index + 1),
                    }
                });
            if !wrong.is_empty() {
                for error in wrong {
                    self.found.borrow_mut().push(error);
                }
                return Ok(Expr::Const(Const::Null));
            }
            if let Some(host) = self.host(func) {
                let checked = host_calls::check(host, &args, &[], |at| {
                    match at {
                        ArgAt::Positional(index) => given.get(index).map(Arg::span),
                        _ => None,
                    }
                    .unwrap_or_else(|| cmd.span.clone())
                });
                if self.soft(checked).is_none() {
                    return Ok(Expr::Const(Const::Null));
                }
            }
            return Ok(Expr::Call {
                func,
                args: args.into_boxed_slice(),
                span: span(&cmd.span),
            });
        }
        if let Arg::Nil(nil) = first {
            return Err(TemplateError::parse(
                Some(nil.clone()),
                "nil is not a command",
            ));
        }
        if cmd.args.len() > 1 || piped.is_some() {
            let text = self.src.get(first.span()).unwrap_or("");
            let at = if cmd.args.len() > 1 {
                cmd.span.clone()
            } else {
                first.span()
            };
            return Err(TemplateError::parse(
                Some(at),
                format!("can't give argument to non-function {text}"),
            )
            .suggest(Some(format!(
                "only functions take arguments; {text} is a value"
            ))));
        }
        self.arg(first, scope)
    }

    /// The host function `func` calls, if it is one.
    fn host(&self, func: Func) -> Option<&Host> {
        match func {
            Func::Host(index) => self.hosts.get(usize::from(index)),
            _ => None,
        }
    }

    fn func(&self, ident: &IdentNode) -> Result<Func> {
        if let Some((_, func)) = Func::go_names().find(|(name, _)| *name == ident.name) {
            return Ok(func);
        }
        if let Ok(index) = self
            .hosts
            .binary_search_by(|host| (*host.name).cmp(ident.name.as_str()))
        {
            // `Host::table` keeps the table within u16.
            return Ok(Func::Host(u16::try_from(index).unwrap_or(u16::MAX)));
        }
        let error = TemplateError::parse(
            Some(ident.span.clone()),
            format!("function {:?} not defined", ident.name),
        )
        .with_kind("unknown-function");
        if self.found.borrow().is_full() {
            // Only counted: no suggestion to look for.
            return Err(error);
        }
        let known = Func::go_names()
            .map(|(name, _)| name)
            .chain(self.hosts.iter().map(|host| &*host.name));
        Err(error.suggest(closest(&ident.name, known).map(|c| format!("did you mean \"{c}\"?"))))
    }

    fn keys(fields: &[Ident]) -> Box<[Key]> {
        fields
            .iter()
            .map(|ident| Key {
                name: ident.name.clone().into_boxed_str(),
                end: u32::try_from(ident.span.end).unwrap_or(u32::MAX),
            })
            .collect()
    }

    fn arg(&self, arg: &Arg, scope: &Scope) -> Result<Expr> {
        Ok(match arg {
            Arg::Dot(_) => Expr::Dot,
            Arg::Nil(_) => Expr::Const(Const::Null),
            Arg::Bool(b, _) => Expr::Const(Const::Bool(*b)),
            Arg::Number(number) => Expr::Const(match number.value {
                Number::Int(i) => Const::Int(i),
                Number::Float(f) => Const::Float(f),
            }),
            Arg::String(string) => Expr::Const(Const::Str(string.text.clone().into_boxed_str())),
            Arg::Field(field) => Expr::Path {
                base: Box::new(Expr::Dot),
                keys: Self::keys(&field.idents),
                span: span(&field.span),
            },
            Arg::Variable(variable) => {
                let slot = self.soft(scope.lookup(variable)).unwrap_or(0);
                if variable.fields.is_empty() {
                    Expr::Var(slot)
                } else {
                    Expr::Path {
                        base: Box::new(Expr::Var(slot)),
                        keys: Self::keys(&variable.fields),
                        span: span(&variable.span),
                    }
                }
            }
            Arg::Identifier(ident) => {
                let Some(func) = self.soft(self.func(ident)) else {
                    return Ok(Expr::Const(Const::Null));
                };
                if self.soft(check_arity(func, 0, &ident.span)).is_none() {
                    return Ok(Expr::Const(Const::Null));
                }
                Expr::Call {
                    func,
                    args: Box::new([]),
                    span: span(&ident.span),
                }
            }
            Arg::Chain(chain) => Expr::Path {
                base: Box::new(self.arg(&chain.node, scope)?),
                keys: Self::keys(&chain.fields),
                span: span(&chain.span),
            },
            Arg::Pipe(pipe) => {
                if let Some(variable) = pipe.decl.first() {
                    return Err(TemplateError::parse(
                        Some(variable.span.clone()),
                        "teleprompt does not allow declaring variables inside parentheses",
                    )
                    .suggest(Some(format!(
                        "declare {} in its own action first",
                        variable.name
                    ))));
                }
                self.pipe(pipe, scope)?
            }
        })
    }
}

fn check_arity(func: Func, got: usize, at: &Span) -> Result<()> {
    let (min, max) = func.arity();
    let message = match max {
        Some(max) if got > max || got < min => {
            if min == max {
                format!(
                    "wrong number of args for {}: want {min} got {got}",
                    func.name()
                )
            } else {
                format!(
                    "wrong number of args for {}: want {min} to {max} got {got}",
                    func.name()
                )
            }
        }
        None if got < min => format!(
            "wrong number of args for {}: want at least {min} got {got}",
            func.name()
        ),
        _ => return Ok(()),
    };
    Err(TemplateError::parse(Some(at.clone()), message).with_kind("wrong-arity"))
}

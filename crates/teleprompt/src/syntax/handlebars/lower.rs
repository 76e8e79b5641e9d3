//! Lowers a Handlebars tree to the engine's program. Helpers resolve at
//! compile time; `../` reads a slot where the block saved its parent
//! context; `@index`, `@key`, `@first`, `@last` and block parameters are
//! slots the loop sets; inline partials become named templates.

use std::cell::RefCell;
use std::collections::HashMap;

use super::ast::*;
use super::includes::Loaded;
use crate::diagnostics::{closest, Findings, TemplateError};
use crate::engine::flavor::handlebars::{Helper, HELPERS, MEDIA_TYPE, SECTION};
use crate::engine::program::{
    push_text, Block as PBlock, Const, Expr as PExpr, Flavor, Func, Host, Instr, Key,
    PartialContent, Program, Span as PSpan, Template,
};
use crate::functions::{ArgAt, Functions, Naming};
use crate::limits::Limits;
use crate::options::Strictness;
use crate::syntax::{builtin_types, host_calls, Origin};

type Result<T> = std::result::Result<T, TemplateError>;

/// Helpers that print or compute a value: `lookup`, the library's shared
/// functions, then the helpers of Semantic Kernel, Forge and Dotprompt
/// ([`HELPERS`]).
pub(crate) fn helpers() -> impl Iterator<Item = (&'static str, Func)> {
    [("lookup", Func::Lookup)]
        .into_iter()
        .chain(Func::SHARED.iter().copied())
        .chain(
            HELPERS
                .iter()
                .map(|&(name, helper)| (name, Func::Hbs(helper))),
        )
        .chain([
            (MEDIA_TYPE, Func::Hbs(Helper::MediaType)),
            (SECTION, Func::Section),
        ])
}

/// Helpers that only open blocks.
pub(crate) const BLOCK_HELPERS: &[&str] = &[
    "if",
    "unless",
    "each",
    "with",
    "message",
    "ifEquals",
    "unlessEquals",
];

/// Helpers the front end lowers itself: Semantic Kernel's variables.
const VARIABLE_HELPERS: &[&str] = &["set", "get"];

/// Helpers every Handlebars has (handlebars.js, Handlebars.Net and
/// handlebars-rust built-ins).
const BUILT_IN: &[&str] = &["if", "unless", "each", "with", "lookup", "log"];

/// Semantic Kernel's system helpers that teleprompt has (.NET's
/// `KernelSystemHelpers`, Python's `handlebars_system_helpers.py`, the
/// Handlebars.Net.Helpers arithmetic), and `role`, which SK's `<message>`
/// tags become.
const SEMANTIC_KERNEL: &[&str] = &[
    "message",
    "set",
    "get",
    "json",
    "concat",
    "array",
    "range",
    "or",
    "and",
    "equals",
    "add",
    "subtract",
    "multiply",
    "divide",
    "lessThan",
    "less_than",
    "lessThanOrEqual",
    "less_than_or_equal",
    "greaterThan",
    "greater_than",
    "greaterThanOrEqual",
    "greater_than_or_equal",
    "doubleOpen",
    "double_open",
    "doubleClose",
    "double_close",
    "role",
];

/// Dotprompt's helpers (the `dotprompt` npm package's `helpers.ts`).
const DOTPROMPT: &[&str] = &[
    MEDIA_TYPE,
    SECTION,
    "json",
    "role",
    "history",
    "section",
    "media",
    "ifEquals",
    "unlessEquals",
];

impl Origin {
    /// Whether `name` is a helper (printing, block or SK's variables) of
    /// the system the prompt was written for. teleprompt's own prompts
    /// have every helper teleprompt has; another system's prompt has its
    /// system's only, so any other name is the data's.
    pub(crate) fn has_helper(self, name: &str) -> bool {
        match self {
            Origin::Teleprompt => true,
            Origin::SemanticKernel => BUILT_IN.contains(&name) || SEMANTIC_KERNEL.contains(&name),
            Origin::Dotprompt => BUILT_IN.contains(&name) || DOTPROMPT.contains(&name),
        }
    }

    /// The system's name, in messages.
    fn system(self) -> &'static str {
        match self {
            Origin::Teleprompt => "teleprompt",
            Origin::SemanticKernel => "Semantic Kernel",
            Origin::Dotprompt => "Dotprompt",
        }
    }
}

/// Lowers `tree` with the partials read from files (`files.source` holds
/// the body and then the files' texts, where the trees' spans point).
pub(crate) fn lower(
    tree: &Tree,
    files: &Loaded,
    strictness: Strictness,
    functions: &Functions,
    origin: Origin,
    data_roles: &str,
    limits: Limits,
) -> Result<(Program, Findings)> {
    let src = files.source.as_str();
    let hosts = Host::table(
        functions,
        Naming::Handlebars,
        |name| {
            helpers().any(|(builtin, _)| builtin == name)
                || BLOCK_HELPERS.contains(&name)
                || VARIABLE_HELPERS.contains(&name)
                || name == "log"
        },
        ("Handlebars templates", "helper"),
    )?;
    let mut inlines: Vec<&Inline> = Vec::new();
    collect_inlines(&tree.nodes, &mut inlines);
    for partial in &files.partials {
        collect_inlines(&partial.nodes, &mut inlines);
    }
    // Every definition, by name (a name may be defined in several blocks).
    let mut partials: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, inline) in inlines.iter().enumerate() {
        partials.entry(&inline.name).or_default().push(index);
    }
    let lowerer = Lowerer {
        src,
        partials: &partials,
        inlines: &inlines,
        files,
        hosts: &hosts,
        origin,
        data_roles,
        found: RefCell::new(Findings::default()),
    };
    let mut templates = Vec::with_capacity(inlines.len() + files.partials.len());
    for inline in &inlines {
        let mut scope = Scope::new(&inline.body);
        scope.in_partial = true;
        let body = lowerer.nodes(&inline.body, &mut scope)?;
        templates.push(Template {
            name: inline.name.clone().into_boxed_str(),
            body,
            slots: scope.max,
        });
    }
    for partial in &files.partials {
        let mut scope = Scope::new(&partial.nodes);
        scope.in_partial = true;
        let body = lowerer.nodes(&partial.nodes, &mut scope)?;
        templates.push(Template {
            name: partial.name.clone().into_boxed_str(),
            body,
            slots: scope.max,
        });
    }
    let mut scope = Scope::new(&tree.nodes);
    let body = lowerer.nodes(&tree.nodes, &mut scope)?;
    let found = lowerer.found.into_inner();
    let program = Program {
        source: src.into(),
        main: Template {
            name: "".into(),
            body,
            slots: scope.max,
        },
        templates,
        strictness,
        limits,
        hosts: hosts.into_boxed_slice(),
        flavor: match origin {
            Origin::SemanticKernel => Flavor::HandlebarsSk,
            _ => Flavor::Handlebars,
        },
        python: None,
    };
    Ok((program, found))
}

/// The inline partials `nodes` define, nested ones included.
pub(super) fn collect_inlines<'t>(nodes: &'t [Node], out: &mut Vec<&'t Inline>) {
    for node in nodes {
        match node {
            Node::Inline(inline) => {
                out.push(inline);
                collect_inlines(&inline.body, out);
            }
            Node::Block(block) => {
                collect_inlines(&block.body, out);
                if let Some(inverse) = &block.inverse {
                    collect_inlines(inverse, out);
                }
            }
            Node::Partial(partial) => {
                if let Some(block) = &partial.block {
                    collect_inlines(block, out);
                }
            }
            _ => {}
        }
    }
}

/// The literal name a `{{set}}` tag gives (`set "x" …`, `set name="x" …`).
fn set_name(call: &Call) -> Option<&str> {
    let name = match (
        call.params.first(),
        call.hash.iter().find(|p| p.key == "name"),
    ) {
        (Some(first), _) => first,
        (None, Some(pair)) => &pair.value,
        (None, None) => return None,
    };
    match name {
        Expr::String(name, _) => Some(name),
        _ => None,
    }
}

/// The names the `{{set}}` tags of a template body give, each once (not
/// those of inline partials: a partial has its own variables).
fn set_names(nodes: &[Node], out: &mut Vec<String>) {
    for node in nodes {
        match node {
            Node::Mustache(mustache) if simple_name(&mustache.call.head) == Some("set") => {
                if let Some(name) = set_name(&mustache.call) {
                    if !out.iter().any(|n| n == name) {
                        out.push(name.to_string());
                    }
                }
            }
            Node::Block(block) => {
                set_names(&block.body, out);
                if let Some(inverse) = &block.inverse {
                    set_names(inverse, out);
                }
            }
            Node::Partial(partial) => {
                if let Some(block) = &partial.block {
                    set_names(block, out);
                }
            }
            _ => {}
        }
    }
}

/// Slots and names in scope while lowering one template.
struct Scope {
    next: u32,
    max: u32,
    /// Slots holding the parent contexts of the blocks that changed
    /// context (`#each`, `#with`, sections), innermost last.
    contexts: Vec<u32>,
    /// The first of the four slots of each enclosing loop, innermost last.
    loops: Vec<u32>,
    /// Block parameters in scope.
    params: Vec<(String, u32)>,
    /// The names `{{set}}` gives in this template, each with the slot
    /// reserved for it (slots 1..=n, never reused by blocks).
    reserved: Vec<(String, u32)>,
    /// The variables set so far (in source order): from its first `set` on,
    /// a name reads its variable, not the context.
    variables: Vec<(String, u32)>,
    /// The inline partials each enclosing body defines (a body's own
    /// definitions are seen from its start; a later one of the same name
    /// wins), innermost last.
    partial_scopes: Vec<Vec<(String, usize)>>,
    /// Lowering an inline partial's body, whose caller is not known: a name
    /// no enclosing body defines may be any definition in the template.
    in_partial: bool,
}

impl Scope {
    /// A scope for a template body: reserves a slot for each name that a
    /// `{{set}}` in it gives.
    fn new(nodes: &[Node]) -> Scope {
        let mut names = Vec::new();
        set_names(nodes, &mut names);
        let reserved: Vec<(String, u32)> = names.into_iter().zip(1u32..).collect();
        let next = 1 + u32::try_from(reserved.len()).unwrap_or(u32::MAX - 1);
        Scope {
            next,
            max: next,
            contexts: Vec::new(),
            loops: Vec::new(),
            params: Vec::new(),
            reserved,
            variables: Vec::new(),
            partial_scopes: Vec::new(),
            in_partial: false,
        }
    }

    fn alloc(&mut self, n: u32) -> u32 {
        let slot = self.next;
        self.next += n;
        self.max = self.max.max(self.next);
        slot
    }
}

struct Lowerer<'t> {
    src: &'t str,
    /// The inline partials' definitions by name (indexes into `inlines`).
    partials: &'t HashMap<&'t str, Vec<usize>>,
    /// The inline partials, in the order of their templates.
    inlines: &'t [&'t Inline],
    /// The partials read from files: their templates follow the inline
    /// partials'.
    files: &'t Loaded,
    hosts: &'t [Host],
    /// The system the prompt was written for: the helpers its names
    /// call, and SK's meaning for `json` and `equals`.
    origin: Origin,
    /// The roles data may choose (SK's history loop): names and commas.
    data_roles: &'t str,
    /// The errors lowering went on past (unknown helpers, wrong argument
    /// counts, missing partials, `../` above the root).
    found: RefCell<Findings>,
}

fn pspan(range: &Span) -> PSpan {
    PSpan::new(range)
}

/// The single plain name of a path (`if`, `each`, `plugin-function`), if it
/// is one.
fn simple_name(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Path(path)
            if !path.data && !path.explicit && path.parents == 0 && path.parts.len() == 1 =>
        {
            path.parts.first().map(|ident| ident.name.as_str())
        }
        _ => None,
    }
}

impl<'t> Lowerer<'t> {
    /// Notes an error that does not stop lowering.
    fn note(&self, error: TemplateError) {
        self.found.borrow_mut().push(error);
    }

    fn text(&self, span: &Span) -> &'t str {
        self.src.get(span.clone()).unwrap_or("")
    }

    /// With `.` as the plugin separator, a plugin function is written as a
    /// path (`Weather.GetForecast`): its text, when it names a host
    /// function (which then wins over the data's path of that spelling).
    fn dotted_host(&self, expr: &Expr) -> Option<&'t str> {
        let Expr::Path(path) = expr else {
            return None;
        };
        if path.data || path.explicit || path.parents > 0 || path.parts.len() < 2 {
            return None;
        }
        let text = self.text(&path.span);
        let plain = text.bytes().all(|b| b != b'/' && b != b'[');
        (plain && self.host_index(text).is_some()).then_some(text)
    }

    fn host_index(&self, name: &str) -> Option<usize> {
        self.hosts
            .binary_search_by(|host| (*host.name).cmp(name))
            .ok()
    }

    fn nodes(&self, nodes: &[Node], scope: &mut Scope) -> Result<PBlock> {
        let defined: Vec<(String, usize)> = nodes
            .iter()
            .filter_map(|node| match node {
                Node::Inline(inline) => {
                    let index = self
                        .inlines
                        .iter()
                        .position(|known| std::ptr::eq(*known, &**inline))?;
                    Some((inline.name.clone(), index))
                }
                _ => None,
            })
            .collect();
        let pushed = !defined.is_empty();
        if pushed {
            scope.partial_scopes.push(defined);
        }
        let mut out = Vec::with_capacity(nodes.len());
        let mut result = Ok(());
        for node in nodes {
            result = self.node(node, scope, &mut out);
            if result.is_err() {
                break;
            }
        }
        if pushed {
            scope.partial_scopes.pop();
        }
        result.map(|()| out.into_boxed_slice())
    }

    /// The template of the partial `name` as seen here: the nearest
    /// enclosing body's inline definition (its last one), else, inside a
    /// partial, the template's only inline definition of that name, else
    /// the partial file of that name.
    fn find_partial(&self, partial: &Partial, scope: &Scope) -> Result<Option<usize>> {
        let name = partial.name.as_str();
        for defined in scope.partial_scopes.iter().rev() {
            if let Some((_, index)) = defined.iter().rev().find(|(n, _)| n == name) {
                return Ok(Some(*index));
            }
        }
        let file = || {
            self.files
                .partials
                .iter()
                .position(|file| file.name == name)
                .map(|index| self.inlines.len() + index)
        };
        if !scope.in_partial {
            return Ok(file());
        }
        match self.partials.get(name).map(Vec::as_slice) {
            Some([index]) => Ok(Some(*index)),
            Some([_, _, ..]) => Err(TemplateError::parse(
                Some(partial.name_span.clone()),
                format!(
                    "the inline partial {name:?} is defined more than once, and this partial does not define it: which one is meant depends on the caller"
                ),
            )
            .suggest(Some(format!(
                "give the definitions of {name:?} different names"
            )))),
            _ => Ok(file()),
        }
    }

    /// An `if` on `cond`: `body` when it holds (or, with `positive` false,
    /// when it does not — `unless`, `unlessEquals`), else `inverse`.
    fn branch(
        &self,
        cond: PExpr,
        positive: bool,
        body: &[Node],
        inverse: &[Node],
        scope: &mut Scope,
    ) -> Result<Instr> {
        let body = self.scoped(body, scope)?;
        let inverse = self.scoped(inverse, scope)?;
        let (then, otherwise) = match positive {
            true => (body, inverse),
            false => (inverse, body),
        };
        Ok(Instr::If {
            cond,
            bind: None,
            then,
            otherwise,
        })
    }

    fn scoped(&self, nodes: &[Node], scope: &mut Scope) -> Result<PBlock> {
        let mark = (
            scope.next,
            scope.contexts.len(),
            scope.loops.len(),
            scope.params.len(),
        );
        let block = self.nodes(nodes, scope);
        scope.next = mark.0;
        scope.contexts.truncate(mark.1);
        scope.loops.truncate(mark.2);
        scope.params.truncate(mark.3);
        block
    }

    fn node(&self, node: &Node, scope: &mut Scope, out: &mut Vec<Instr>) -> Result<()> {
        match node {
            Node::Text(text) => {
                // The span of the text itself, where it stands as written
                // inside its node's (standalone lines lose their spaces).
                let written = self.src.get(text.span.clone()).unwrap_or_default();
                let span = match written.find(text.text.as_str()) {
                    Some(at) => text.span.start + at..text.span.start + at + text.text.len(),
                    None => text.span.clone(),
                };
                push_text(out, &text.text, pspan(&span));
            }
            Node::Comment(_) | Node::Inline(_) => {}
            Node::Mustache(mustache) => {
                let call = &mustache.call;
                match simple_name(&call.head) {
                    Some("log") => return Ok(()),
                    Some("set") if self.origin.has_helper("set") => {
                        return self.set(call, scope, out)
                    }
                    _ => {}
                }
                let bare = call.params.is_empty() && call.hash.is_empty();
                let misuse = simple_name(&call.head)
                    .filter(|_| bare)
                    .and_then(|name| Some((name, self.bare_misuse(name, scope)?)));
                if let Some((name, (message, help))) = misuse {
                    // `{{name}}` where `name` is a helper that cannot run
                    // without arguments (`role`, a block helper): the
                    // data's `name`, and the helper named when the data
                    // has none.
                    out.push(Instr::BareHelper {
                        name: name.into(),
                        span: pspan(&call.head.span()),
                        misuse: Some(Box::new((message.into(), help.into()))),
                    });
                    out.push(Instr::Print {
                        expr: self.expr(&call.head, scope)?,
                        span: pspan(&mustache.span),
                    });
                    return Ok(());
                }
                let expr = match self.literal_key(&call.head) {
                    Some(key) if call.params.is_empty() && call.hash.is_empty() => key,
                    _ => self.call(call, scope, true)?,
                };
                if let (PExpr::Call { .. }, Some(name), true) = (
                    &expr,
                    simple_name(&call.head),
                    call.params.is_empty() && call.hash.is_empty(),
                ) {
                    // `{{name}}` calls the helper, as in handlebars.js; when
                    // the data has `name` too, the render says so.
                    out.push(Instr::BareHelper {
                        name: name.into(),
                        span: pspan(&call.head.span()),
                        misuse: None,
                    });
                }
                out.push(Instr::Print {
                    expr,
                    span: pspan(&mustache.span),
                });
            }
            Node::Partial(partial) if !partial.indent.is_empty() => {
                let mut body = Vec::new();
                self.partial(partial, scope, &mut body)?;
                out.push(Instr::Indent {
                    indent: partial.indent.clone().into_boxed_str(),
                    body: body.into_boxed_slice(),
                    // The indentation as written, before the tag.
                    span: pspan(
                        &(partial.span.start.saturating_sub(partial.indent.len())
                            ..partial.span.start),
                    ),
                });
            }
            Node::Partial(partial) => self.partial(partial, scope, out)?,
            Node::Block(block) => self.block(block, scope, out)?,
        }
        Ok(())
    }

    /// A literal where a name goes (`{{"foo bar"}}`, `{{#"foo"}}…{{/"foo"}}`,
    /// `{{12.34}}`, `{{true}}`) reads the key of that name from the current
    /// context, as in handlebars.js; `None` for any other expression.
    fn literal_key(&self, head: &Expr) -> Option<PExpr> {
        let span = head.span();
        let name = match head {
            Expr::String(s, _) => s.clone(),
            Expr::Number(..) | Expr::Bool(..) | Expr::Null(..) => self.text(&span).to_string(),
            Expr::Path(_) | Expr::Sub(_) => return None,
        };
        Some(PExpr::Path {
            base: Box::new(PExpr::Dot),
            keys: Box::new([Key {
                name: name.into_boxed_str(),
                end: u32::try_from(span.end).unwrap_or(u32::MAX),
            }]),
            span: pspan(&span),
        })
    }

    /// `{{> name context key=value}}`, `{{#> name}}…{{/name}}` and
    /// `{{> @partial-block}}`.
    fn partial(&self, partial: &Partial, scope: &mut Scope, out: &mut Vec<Instr>) -> Result<()> {
        if partial.name == "@partial-block" {
            if partial.block.is_some() {
                return Err(TemplateError::parse(
                    Some(partial.name_span.clone()),
                    "@partial-block cannot open a partial block",
                )
                .suggest(Some("write {{> @partial-block}}".to_string())));
            }
            if let Some(extra) = partial
                .context
                .as_ref()
                .map(Expr::span)
                .or_else(|| partial.hash.first().map(|p| p.span.clone()))
            {
                return Err(TemplateError::parse(
                    Some(extra),
                    "{{> @partial-block}} takes no arguments: the block runs with the current context",
                ));
            }
            out.push(Instr::PartialBlock {
                span: pspan(&partial.span),
            });
            return Ok(());
        }
        let mut arg = match &partial.context {
            Some(context) => self.expr(context, scope)?,
            None => PExpr::Dot,
        };
        if !partial.hash.is_empty() {
            // `{{> card name="x"}}`: the partial runs with its
            // context extended by the keys (handlebars.js).
            let mut args = Vec::with_capacity(1 + 2 * partial.hash.len());
            args.push(arg);
            for pair in &partial.hash {
                args.push(PExpr::Const(Const::Str(pair.key.clone().into_boxed_str())));
                args.push(self.expr(&pair.value, scope)?);
            }
            arg = PExpr::Call {
                func: Func::Hbs(Helper::PartialContext),
                args: args.into_boxed_slice(),
                span: pspan(&partial.span),
            };
        }
        if let Some(dynamic) = &partial.dynamic {
            let block = match &partial.block {
                Some(block) => Some(Box::new(self.content(block, scope)?)),
                None => None,
            };
            out.push(Instr::CallNamed {
                name: self.expr(dynamic, scope)?,
                arg,
                span: pspan(&partial.span),
                block,
            });
            return Ok(());
        }
        let index = self.find_partial(partial, scope)?;
        match (index, &partial.block) {
            (Some(index), block) => {
                let block = match block {
                    Some(block) => Some(Box::new(self.content(block, scope)?)),
                    None => None,
                };
                out.push(Instr::Call {
                    template: u32::try_from(index).unwrap_or(u32::MAX),
                    arg: Some(arg),
                    span: pspan(&partial.span),
                    block,
                });
            }
            // A partial block whose partial does not exist renders its
            // content (handlebars.js's failover), with the context given.
            (None, Some(block)) if partial.context.is_none() && partial.hash.is_empty() => {
                let body = self.scoped(block, scope)?;
                out.extend(body.into_vec());
            }
            (None, Some(block)) => {
                let mark = scope.next;
                let parent = scope.alloc(1);
                out.push(Instr::Set {
                    slot: parent,
                    expr: PExpr::Dot,
                });
                scope.contexts.push(parent);
                let then = self.scoped(block, scope);
                scope.contexts.pop();
                scope.next = mark;
                out.push(Instr::With {
                    value: arg,
                    bind: None,
                    then: then?,
                    otherwise: Box::new([]),
                });
            }
            (None, None) if self.partials.contains_key(partial.name.as_str()) => {
                return Err(TemplateError::parse(
                    Some(partial.name_span.clone()),
                    format!(
                        "the inline partial {:?} is defined inside a block that does not hold this call",
                        partial.name
                    ),
                )
                .suggest(Some(
                    "an inline partial is seen only in the body that defines it: move the definition out of its block".to_string(),
                )));
            }
            (None, None) => {
                self.note(TemplateError::parse(
                    Some(partial.name_span.clone()),
                    format!("there is no partial named {:?}", partial.name),
                )
                .with_kind("unresolved-include")
                .suggest(
                    closest(
                        &partial.name,
                        self.partials
                            .keys()
                            .copied()
                            .chain(self.files.partials.iter().map(|file| file.name.as_str())),
                    )
                    .map(|c| format!("did you mean \"{c}\"?"))
                    .or_else(|| {
                        let name = &partial.name;
                        let file = match self.files.misses.get(name) {
                            Some(misses) => format!(
                                "put it in a file beside the prompt ({misses} in the include root)"
                            ),
                            None => format!(
                                "load the prompt from a file with {name}.hbs or _{name}.prompt beside it"
                            ),
                        };
                        Some(format!(
                            "define it in this template with {{{{#*inline \"{name}\"}}}}…{{{{/inline}}}}, or {file}"
                        ))
                    }),
                ));
            }
        }
        Ok(())
    }

    /// A partial block's content, lowered in the caller's scope. Its `../`
    /// reads levels of its own (handlebars.js's context stack when the
    /// content runs): the caller's contexts, and one more, the caller's dot,
    /// which the render fills when the content runs with another dot.
    fn content(&self, block: &[Node], scope: &mut Scope) -> Result<PartialContent> {
        let mut reads_parent = false;
        super::walk(block, &mut |expr| {
            reads_parent |= matches!(expr, Expr::Path(path) if path.parents > 0);
        });
        if !reads_parent {
            return Ok(PartialContent {
                body: self.scoped(block, scope)?,
                levels: None,
            });
        }
        let outer: Box<[u32]> = scope.contexts.iter().rev().copied().collect();
        let count = u32::try_from(outer.len()).unwrap_or(u32::MAX - 1);
        let mark = scope.next;
        let first = scope.alloc(count + 1);
        let levels = (0..=count).rev().map(|i| first + i).collect();
        let callers = std::mem::replace(&mut scope.contexts, levels);
        let body = self.scoped(block, scope);
        scope.contexts = callers;
        scope.next = mark;
        Ok(PartialContent {
            body: body?,
            levels: Some((first, outer)),
        })
    }

    fn one_param<'b>(&self, block: &'b Block, name: &str) -> Result<&'b Expr> {
        if let Some(pair) = block.call.hash.first() {
            return Err(TemplateError::parse(
                Some(pair.span.clone()),
                format!("{{{{#{name}}}}} takes no key=value arguments"),
            ));
        }
        match block.call.params.as_slice() {
            [one] => Ok(one),
            _ => Err(TemplateError::parse(
                Some(block.open.clone()),
                format!(
                    "{{{{#{name}}}}} takes one argument, got {}",
                    block.call.params.len()
                ),
            )),
        }
    }

    /// The tested value of `{{#if value}}` / `{{#unless value}}`; with
    /// handlebars.js's `includeZero=flag`, the number 0 is true when the
    /// flag is.
    fn condition(&self, block: &Block, helper: &str, scope: &Scope) -> Result<PExpr> {
        let mut include_zero = None;
        for pair in &block.call.hash {
            if pair.key == "includeZero" && include_zero.is_some() {
                return Err(TemplateError::parse(
                    Some(pair.span.clone()),
                    "includeZero= is given twice",
                ));
            }
            if pair.key != "includeZero" {
                return Err(TemplateError::parse(
                    Some(pair.span.clone()),
                    format!("{{{{#{helper}}}}} takes no {}= argument", pair.key),
                )
                .suggest(Some(
                    "its only key=value argument is includeZero=true".to_string(),
                )));
            }
            include_zero = Some(&pair.value);
        }
        let value = match block.call.params.as_slice() {
            [one] => self.expr(one, scope)?,
            _ => {
                return Err(TemplateError::parse(
                    Some(block.open.clone()),
                    format!(
                        "{{{{#{helper}}}}} takes one argument, got {}",
                        block.call.params.len()
                    ),
                ))
            }
        };
        let Some(flag) = include_zero else {
            return Ok(value);
        };
        Ok(PExpr::Call {
            func: Func::Hbs(Helper::IncludeZero),
            args: Box::new([value, self.expr(flag, scope)?]),
            span: pspan(&block.call.span),
        })
    }

    fn block(&self, block: &Block, scope: &mut Scope, out: &mut Vec<Instr>) -> Result<()> {
        let name = simple_name(&block.call.head);
        let (body, inverse): (&[Node], &[Node]) = {
            let inverse = block.inverse.as_deref().unwrap_or(&[]);
            if block.inverted {
                (inverse, &block.body)
            } else {
                (&block.body, inverse)
            }
        };
        let allow_params = |max: usize| -> Result<()> {
            match block.params.get(max) {
                Some(extra) => Err(TemplateError::parse(
                    Some(extra.span.clone()),
                    format!("this block takes at most {max} block parameters"),
                )),
                None => Ok(()),
            }
        };
        match name {
            Some(helper @ ("if" | "unless")) => {
                allow_params(0)?;
                let cond = self.condition(block, helper, scope)?;
                out.push(self.branch(cond, helper == "if", body, inverse, scope)?);
            }
            Some("with") => {
                allow_params(1)?;
                let value = self.expr(self.one_param(block, "with")?, scope)?;
                let mark = scope.next;
                let parent = scope.alloc(1);
                out.push(Instr::Set {
                    slot: parent,
                    expr: PExpr::Dot,
                });
                let otherwise = self.scoped(inverse, scope)?;
                let bind = block.params.first().map(|param| {
                    let slot = scope.alloc(1);
                    (param.name.clone(), slot)
                });
                let saved = scope.params.len();
                scope.params.extend(bind.clone());
                scope.contexts.push(parent);
                let then = self.scoped(body, scope);
                scope.contexts.pop();
                scope.params.truncate(saved);
                scope.next = mark;
                out.push(Instr::With {
                    value,
                    bind: bind.map(|(_, slot)| slot),
                    then: then?,
                    otherwise,
                });
            }
            Some("each") => {
                allow_params(2)?;
                let value = self.expr(self.one_param(block, "each")?, scope)?;
                let mark = scope.next;
                let parent = scope.alloc(1);
                out.push(Instr::Set {
                    slot: parent,
                    expr: PExpr::Dot,
                });
                let otherwise = self.scoped(inverse, scope)?;
                let meta = scope.alloc(4);
                let saved = scope.params.len();
                let mut slots = [None, None];
                for (i, param) in block.params.iter().enumerate() {
                    let slot = scope.alloc(1);
                    if let Some(place) = slots.get_mut(i) {
                        *place = Some(slot);
                    }
                    scope.params.push((param.name.clone(), slot));
                }
                scope.contexts.push(parent);
                scope.loops.push(meta);
                let body = self.scoped(body, scope);
                scope.loops.pop();
                scope.contexts.pop();
                scope.params.truncate(saved);
                scope.next = mark;
                out.push(Instr::Range {
                    value,
                    key: slots[1],
                    elem: slots[0],
                    body: body?,
                    otherwise,
                    span: pspan(&block.open),
                    each: Some(meta),
                });
            }
            Some(helper @ ("ifEquals" | "unlessEquals")) if self.origin.has_helper(helper) => {
                allow_params(0)?;
                if let Some(pair) = block.call.hash.first() {
                    return Err(TemplateError::parse(
                        Some(pair.span.clone()),
                        format!("{{{{#{helper}}}}} takes no key=value arguments"),
                    ));
                }
                let [a, b] = block.call.params.as_slice() else {
                    return Err(TemplateError::parse(
                        Some(block.open.clone()),
                        format!(
                            "{{{{#{helper}}}}} takes 2 arguments, got {}",
                            block.call.params.len()
                        ),
                    ));
                };
                let cond = PExpr::Call {
                    func: Func::Hbs(Helper::Equals),
                    args: Box::new([self.expr(a, scope)?, self.expr(b, scope)?]),
                    span: pspan(&block.call.span),
                };
                out.push(self.branch(cond, helper == "ifEquals", body, inverse, scope)?);
            }
            // A budget section: `{{#section "docs" priority=2}}…{{/section}}`.
            Some("section")
                if self.origin == Origin::Teleprompt && !block.call.params.is_empty() =>
            {
                allow_params(0)?;
                if block.inverse.is_some() || block.inverted {
                    return Err(TemplateError::parse(
                        Some(block.open.clone()),
                        "{{#section}} has no {{else}}",
                    ));
                }
                let [name] = block.call.params.as_slice() else {
                    return Err(TemplateError::parse(
                        Some(block.open.clone()),
                        "{{#section}} takes one argument, the name, and settings as key=value: {{#section \"docs\" priority=2 max_tokens=1500 truncate=true}}",
                    ));
                };
                let mut args = vec![self.expr(name, scope)?];
                for pair in &block.call.hash {
                    args.push(PExpr::Const(Const::Str(pair.key.as_str().into())));
                    args.push(self.expr(&pair.value, scope)?);
                }
                let call = |func, args: Vec<PExpr>| Instr::Print {
                    expr: PExpr::Call {
                        func,
                        args: args.into_boxed_slice(),
                        span: pspan(&block.call.span),
                    },
                    span: pspan(&block.open),
                };
                out.push(call(Func::BudgetSection, args));
                let body = self.scoped(body, scope)?;
                out.extend(body.into_vec());
                out.push(call(Func::EndSection, Vec::new()));
            }
            Some("message") if self.origin.has_helper("message") => {
                allow_params(0)?;
                if block.inverse.is_some() || block.inverted {
                    return Err(TemplateError::parse(
                        Some(block.open.clone()),
                        "{{#message}} has no {{else}}",
                    ));
                }
                let role = match (block.call.params.as_slice(), block.call.hash.as_slice()) {
                    ([role], []) => role,
                    ([], [pair]) if pair.key == "role" => &pair.value,
                    _ => {
                        return Err(TemplateError::parse(
                            Some(block.open.clone()),
                            "{{#message}} takes one argument: role=\"system\"",
                        ))
                    }
                };
                let role_span = role.span();
                let role = self.expr(role, scope)?;
                let (func, args): (Func, Box<[PExpr]>) = match role {
                    role @ PExpr::Const(_) => (Func::Role, Box::new([role])),
                    // Semantic Kernel's own history loop, `{{#each
                    // messages}}{{#message role=role}}`: the data's role, one
                    // of those the host allows data to choose.
                    role if self.origin == Origin::SemanticKernel => (
                        Func::DataRole,
                        Box::new([role, PExpr::Const(Const::Str(self.data_roles.into()))]),
                    ),
                    _ => {
                        self.note(builtin_types::role_not_literal(role_span));
                        (Func::Role, Box::new([PExpr::Const(Const::Null)]))
                    }
                };
                out.push(Instr::Print {
                    expr: PExpr::Call {
                        func,
                        args,
                        span: pspan(&block.call.span),
                    },
                    span: pspan(&block.open),
                });
                let body = self.scoped(body, scope)?;
                out.extend(body.into_vec());
            }
            Some(helper) if self.helper(helper).is_some() || !block.call.params.is_empty() => {
                let known = self.helper(helper).is_some();
                if known {
                    return Err(TemplateError::parse(
                        Some(block.call.head.span()),
                        format!("{helper} is not a block helper"),
                    )
                    .suggest(Some(format!("write {{{{{helper} …}}}} without #"))));
                }
                // Go on into its arguments and blocks for more errors.
                self.note(self.unknown_helper(helper, &block.call.head.span()));
                for param in &block.call.params {
                    self.expr(param, scope)?;
                }
                self.scoped(body, scope)?;
                self.scoped(inverse, scope)?;
            }
            _ => {
                allow_params(0)?;
                if !block.call.params.is_empty() || !block.call.hash.is_empty() {
                    return Err(TemplateError::parse(
                        Some(block.call.span.clone()),
                        format!(
                            "{} is not a helper: it takes no arguments",
                            self.text(&block.call.head.span())
                        ),
                    ));
                }
                // An inverse section `{{^name}}…{{else}}…{{/name}}` is a
                // section with its parts swapped (as handlebars.js runs it).
                let value = match self.literal_key(&block.call.head) {
                    Some(key) => key,
                    None => self.expr(&block.call.head, scope)?,
                };
                let mark = scope.next;
                let parent = scope.alloc(1);
                out.push(Instr::Set {
                    slot: parent,
                    expr: PExpr::Dot,
                });
                let otherwise = self.scoped(inverse, scope)?;
                let meta = scope.alloc(4);
                scope.contexts.push(parent);
                scope.loops.push(meta);
                let body = self.scoped(body, scope);
                scope.loops.pop();
                scope.contexts.pop();
                scope.next = mark;
                out.push(Instr::Section {
                    value,
                    body: body?,
                    otherwise,
                    span: pspan(&block.open),
                    each: meta,
                });
            }
        }
        Ok(())
    }

    /// Semantic Kernel's `{{set name="x" value=v}}` / `{{set "x" v}}`: the
    /// value goes into the slot reserved for `x`; from here on `{{x}}`
    /// and `{{get "x"}}` read it.
    fn set(&self, call: &Call, scope: &mut Scope, out: &mut Vec<Instr>) -> Result<()> {
        let usage = || {
            TemplateError::parse(
                Some(call.span.clone()),
                format!(
                    "set takes a name and a value, got {} argument{}",
                    call.params.len() + call.hash.len(),
                    if call.params.len() + call.hash.len() == 1 {
                        ""
                    } else {
                        "s"
                    }
                ),
            )
            .suggest(Some(
                "write {{set name=\"x\" value=…}} or {{set \"x\" …}}".to_string(),
            ))
        };
        if let Some(pair) = call
            .hash
            .iter()
            .find(|pair| pair.key != "name" && pair.key != "value")
        {
            return Err(TemplateError::parse(
                Some(pair.span.clone()),
                format!("set takes name= and value=, not {}=", pair.key),
            ));
        }
        let (name, value) = match (call.params.as_slice(), call.hash.as_slice()) {
            ([name, value], []) => (name, value),
            ([], [_, _]) => {
                let find = |key: &str| call.hash.iter().find(|p| p.key == key);
                match (find("name"), find("value")) {
                    (Some(name), Some(value)) => (&name.value, &value.value),
                    _ => return Err(usage()),
                }
            }
            _ => return Err(usage()),
        };
        let Expr::String(name, _) = name else {
            return Err(TemplateError::parse(
                Some(name.span()),
                "set needs the variable's name as a string literal",
            )
            .suggest(Some("write {{set name=\"x\" value=…}}".to_string())));
        };
        let value = self.expr(value, scope)?;
        let Some(&(_, slot)) = scope.reserved.iter().find(|(n, _)| n == name) else {
            return Err(TemplateError::parse(
                Some(call.span.clone()),
                "internal error: set outside its template",
            ));
        };
        if !scope.variables.iter().any(|(n, _)| n == name) {
            scope.variables.push((name.clone(), slot));
        }
        out.push(Instr::Set { slot, expr: value });
        Ok(())
    }

    /// Semantic Kernel's `{{get "x"}}`, `{{get name="x"}}`, `{{get "x"
    /// "prop"}}` and `{{get "x.prop"}}`: the variable `set` gave, or else
    /// the key of the root data.
    fn get(&self, call: &Call, scope: &Scope) -> Result<PExpr> {
        let (name, prop) = match (call.params.as_slice(), call.hash.as_slice()) {
            ([name], []) => (name, None),
            ([name, prop], []) => (name, Some(prop)),
            ([], [pair]) if pair.key == "name" => (&pair.value, None),
            _ => {
                return Err(TemplateError::parse(
                    Some(call.span.clone()),
                    "get takes a variable's name: {{get \"x\"}}, {{get name=\"x\"}} or {{get \"x\" \"property\"}}",
                ))
            }
        };
        fn literal(expr: &Expr) -> Result<(&str, usize)> {
            match expr {
                Expr::String(text, span) => Ok((text.as_str(), span.end)),
                other => Err(TemplateError::parse(
                    Some(other.span()),
                    "get needs the variable's name as a string literal",
                )),
            }
        }
        let (name, end) = literal(name)?;
        let mut parts: Vec<(&str, usize)> = name.split('.').map(|part| (part, end)).collect();
        if let Some(prop) = prop {
            parts.push(literal(prop)?);
        }
        let (first, rest) = match parts.split_first() {
            Some((first, rest)) => (first.0, rest),
            None => (name, &[][..]),
        };
        let (base, keys) = match scope.variables.iter().find(|(n, _)| n == first) {
            Some(&(_, slot)) => (PExpr::Var(slot), rest),
            None => (PExpr::Root, &parts[..]),
        };
        if keys.is_empty() {
            return Ok(base);
        }
        Ok(PExpr::Path {
            base: Box::new(base),
            keys: keys
                .iter()
                .map(|(part, end)| Key {
                    name: (*part).into(),
                    end: u32::try_from(*end).unwrap_or(u32::MAX),
                })
                .collect(),
            span: pspan(&call.span),
        })
    }

    /// For `{{name}}` (no arguments) where `name` is a helper of the
    /// prompt's system that cannot run without arguments (a block helper,
    /// `get`, `role`, `json`, …): the error and help to give when the data
    /// has no key `name` (when it has one, the mustache prints it, as
    /// handlebars.js does for a name that is no helper). `None` when the
    /// name is read as usual: a block parameter or variable, not a helper
    /// of the origin (then it is the data's), a helper that runs without
    /// arguments (`history`, `doubleOpen`) or a host function.
    fn bare_misuse(&self, name: &str, scope: &Scope) -> Option<(String, String)> {
        let in_scope = scope
            .params
            .iter()
            .chain(scope.variables.iter())
            .any(|(n, _)| n == name);
        if in_scope || !self.origin.has_helper(name) {
            return None;
        }
        let data = format!("the data has no key {name:?}");
        if BLOCK_HELPERS.contains(&name) {
            return Some((
                format!("{name} is a block helper, and {data}"),
                format!("write {{{{#{name} …}}}}…{{{{/{name}}}}}"),
            ));
        }
        if name == "get" {
            return Some((
                format!("get takes a variable's name, and {data}"),
                "write {{get \"x\"}}".to_string(),
            ));
        }
        let func = helpers().find(|(n, _)| *n == name).map(|(_, f)| f)?;
        let (min, _) = func.arity();
        let sk_equals = self.origin == Origin::SemanticKernel && func == Func::Hbs(Helper::Equals);
        if min == 0 || sk_equals || self.host_index(name).is_some() {
            return None;
        }
        Some((
            format!(
                "{name} takes {min} argument{}, got 0, and {data}",
                if min == 1 { "" } else { "s" }
            ),
            format!("give the data a key {name:?}, or call the helper: {{{{{name} …}}}}"),
        ))
    }

    fn helper(&self, name: &str) -> Option<Func> {
        if let Some((_, func)) = helpers().find(|(n, _)| *n == name) {
            if self.origin.has_helper(name) {
                return Some(func);
            }
        }
        self.host_index(name)
            .map(|index| Func::Host(u16::try_from(index).unwrap_or(u16::MAX)))
    }

    fn unknown_helper(&self, name: &str, span: &Span) -> TemplateError {
        let error = TemplateError::parse(
            Some(span.clone()),
            format!("there is no helper named {name:?}"),
        )
        .with_kind("unknown-helper");
        if self.found.borrow().is_full() {
            // Only counted: no suggestion to look for.
            return error;
        }
        let origin = self.origin;
        let known = helpers()
            .map(|(n, _)| n)
            .chain(BLOCK_HELPERS.iter().copied())
            .chain(VARIABLE_HELPERS.iter().copied())
            .chain(["log"])
            .filter(|n| origin.has_helper(n) && *n != MEDIA_TYPE)
            .chain(self.hosts.iter().map(|host| &*host.name));
        let suggestion = closest(name, known)
            .map(|c| format!("did you mean \"{c}\"?"))
            .or_else(|| {
                let teleprompt = helpers().any(|(n, _)| n == name)
                    || BLOCK_HELPERS.contains(&name)
                    || VARIABLE_HELPERS.contains(&name);
                teleprompt.then(|| {
                    format!(
                        "{name:?} is a helper of teleprompt's own prompts; this prompt is {}'s, \
                         whose Handlebars has no such helper",
                        origin.system()
                    )
                })
            });
        error.suggest(suggestion)
    }

    /// A call or a value. `top`: in a mustache, where a lone name that is
    /// not a helper is a path.
    fn call(&self, call: &Call, scope: &Scope, top: bool) -> Result<PExpr> {
        let name = simple_name(&call.head).or_else(|| self.dotted_host(&call.head));
        if let Some(block) = name.filter(|n| BLOCK_HELPERS.contains(n) && self.origin.has_helper(n))
        {
            return Err(TemplateError::parse(
                Some(call.head.span()),
                format!("{block} is a block helper"),
            )
            .suggest(Some(format!("write {{{{#{block} …}}}}…{{{{/{block}}}}}"))));
        }
        if name == Some("get") && self.origin.has_helper("get") {
            return self.get(call, scope);
        }
        if name == Some("set") && self.origin.has_helper("set") {
            return Err(TemplateError::parse(
                Some(call.head.span()),
                "set prints nothing: it cannot be an argument",
            )
            .suggest(Some(
                "write it as a tag of its own: {{set name=\"x\" value=…}}".to_string(),
            )));
        }
        let func = name.and_then(|n| self.helper(n));
        let Some(func) = func else {
            if call.params.is_empty() && call.hash.is_empty() && top {
                return self.expr(&call.head, scope);
            }
            if let Some(name) = name {
                // Go on into its arguments for more errors.
                self.note(self.unknown_helper(name, &call.head.span()));
                for param in &call.params {
                    self.expr(param, scope)?;
                }
                for pair in &call.hash {
                    self.expr(&pair.value, scope)?;
                }
                return Ok(PExpr::Const(Const::Null));
            }
            return Err(match name {
                Some(name) => self.unknown_helper(name, &call.head.span()),
                None => TemplateError::parse(
                    Some(call.head.span()),
                    format!(
                        "{} is not a helper, so it takes no arguments",
                        self.text(&call.head.span())
                    ),
                ),
            });
        };
        let mut args = Vec::with_capacity(call.params.len() + 1);
        for param in &call.params {
            args.push(self.expr(param, scope)?);
        }
        if func == Func::Join {
            // Handlebars order `join list ", "`; the engine's is separator first.
            args.reverse();
        }
        let mut func = func;
        if func == Func::Hbs(Helper::Json) && self.origin == Origin::SemanticKernel {
            func = Func::Hbs(Helper::SkJson);
        }
        if func == Func::Hbs(Helper::Concat) && self.origin == Origin::SemanticKernel {
            func = Func::Hbs(Helper::SkConcat);
        }
        if func == Func::Hbs(Helper::Equals)
            && self.origin == Origin::SemanticKernel
            && args.len() < 2
            && call.hash.is_empty()
        {
            // Semantic Kernel .NET's `equals` is false with fewer than two
            // arguments (`KernelSystemHelpers`).
            return Ok(PExpr::Const(Const::Bool(false)));
        }
        if let (Func::Hbs(Helper::Json), [pair]) = (func, call.hash.as_slice()) {
            if pair.key == "indent" {
                // Dotprompt's `{{json value indent=2}}`.
                func = Func::Hbs(Helper::JsonIndent);
                args.push(self.expr(&pair.value, scope)?);
            }
        }
        if let Func::Host(index) = func {
            return self.host_call(index, call, args, scope);
        }
        if !call.hash.is_empty() && func != Func::Hbs(Helper::JsonIndent) {
            return Err(TemplateError::parse(
                call.hash.first().map(|pair| pair.span.clone()),
                format!("{} takes no key=value arguments", name.unwrap_or("?")),
            ));
        }
        let (min, max) = func.arity();
        if args.len() < min || max.is_some_and(|max| args.len() > max) {
            let want = match max {
                Some(max) if max == min => format!("{min}"),
                Some(max) => format!("{min} to {max}"),
                None => format!("at least {min}"),
            };
            self.note(
                TemplateError::parse(
                    Some(call.span.clone()),
                    format!(
                        "{} takes {want} argument{}, got {}",
                        name.unwrap_or("?"),
                        if want == "1" { "" } else { "s" },
                        args.len()
                    ),
                )
                .with_kind("wrong-arity"),
            );
            return Ok(PExpr::Const(Const::Null));
        }
        let wrong = builtin_types::check(
            func,
            name.unwrap_or(func.name()),
            &args,
            self.src,
            &call.span,
            |index| {
                // The engine's order: `join`'s separator first, `json`'s
                // indent after the value.
                let source = match (func, index) {
                    (Func::Join, 0) => 1,
                    (Func::Join, 1) => 0,
                    _ => index,
                };
                match call.params.get(source) {
                    Some(param) => builtin_types::Place {
                        span: Some(param.span()),
                        label: format!("argument {}", source + 1),
                    },
                    None => builtin_types::Place {
                        span: call.hash.first().map(|pair| pair.value.span()),
                        label: call.hash.first().map_or_else(
                            || format!("argument {}", index + 1),
                            |pair| pair.key.clone(),
                        ),
                    },
                }
            },
        );
        if !wrong.is_empty() {
            for error in wrong {
                self.note(error);
            }
            return Ok(PExpr::Const(Const::Null));
        }
        Ok(PExpr::Call {
            func,
            args: args.into_boxed_slice(),
            span: pspan(&call.span),
        })
    }

    /// A host function call: positional arguments, then the hash ones as
    /// a last `Dict` (the function takes them by name), checked against the
    /// function's signature.
    fn host_call(
        &self,
        index: u16,
        call: &Call,
        mut args: Vec<PExpr>,
        scope: &Scope,
    ) -> Result<PExpr> {
        let mut hash = Vec::with_capacity(call.hash.len());
        for pair in &call.hash {
            hash.push(self.expr(&pair.value, scope)?);
        }
        if let Some(host) = self.hosts.get(usize::from(index)) {
            let named: Vec<(&str, &PExpr)> = call
                .hash
                .iter()
                .zip(&hash)
                .map(|(pair, value)| (pair.key.as_str(), value))
                .collect();
            let checked = host_calls::check(host, &args, &named, |at| {
                match at {
                    ArgAt::Positional(index) => call.params.get(index).map(Expr::span),
                    ArgAt::Named(index) => call.hash.get(index).map(|pair| pair.span.clone()),
                    ArgAt::Call => None,
                }
                .unwrap_or_else(|| call.span.clone())
            });
            if let Err(error) = checked {
                self.note(error);
                return Ok(PExpr::Const(Const::Null));
            }
        }
        if !hash.is_empty() {
            let mut pairs = Vec::with_capacity(hash.len() * 2);
            for (pair, value) in call.hash.iter().zip(hash) {
                pairs.push(PExpr::Const(Const::Str(pair.key.clone().into_boxed_str())));
                pairs.push(value);
            }
            args.push(PExpr::Call {
                func: Func::Dict,
                args: pairs.into_boxed_slice(),
                span: pspan(&call.span),
            });
        }
        Ok(PExpr::Call {
            func: Func::Host(index),
            args: args.into_boxed_slice(),
            span: pspan(&call.span),
        })
    }

    fn expr(&self, expr: &Expr, scope: &Scope) -> Result<PExpr> {
        Ok(match expr {
            Expr::String(s, _) => PExpr::Const(Const::Str(s.clone().into_boxed_str())),
            Expr::Number(Number::Int(i), _) => PExpr::Const(Const::Int(*i)),
            Expr::Number(Number::Float(f), _) => PExpr::Const(Const::Float(*f)),
            Expr::Bool(b, _) => PExpr::Const(Const::Bool(*b)),
            Expr::Null(_) => PExpr::Const(Const::Null),
            Expr::Sub(call) => self.call(call, scope, false)?,
            Expr::Path(path) => self.path(path, scope)?,
        })
    }

    fn path(&self, path: &Path, scope: &Scope) -> Result<PExpr> {
        let keys = |parts: &[Ident]| -> Box<[Key]> {
            parts
                .iter()
                .map(|ident| Key {
                    name: ident.name.clone().into_boxed_str(),
                    end: u32::try_from(ident.span.end).unwrap_or(u32::MAX),
                })
                .collect()
        };
        let (base, rest): (PExpr, &[Ident]) = if path.data {
            let Some((first, rest)) = path.parts.split_first() else {
                return Err(TemplateError::parse(
                    Some(path.span.clone()),
                    "@ needs a name: @index, @key, @first, @last or @root",
                ));
            };
            if path.parents > 0 {
                return Err(TemplateError::parse(
                    Some(path.span.clone()),
                    "@../ (data of an outer loop) is not supported",
                )
                .suggest(Some(
                    "name the outer loop's index: {{#each list as |item i|}}".to_string(),
                )));
            }
            let loop_slot = |offset: u32| -> Result<PExpr> {
                match scope.loops.last() {
                    Some(base) => Ok(PExpr::Var(base + offset)),
                    None => Err(TemplateError::parse(
                        Some(path.span.clone()),
                        format!("@{} is only defined inside {{{{#each}}}}", first.name),
                    )),
                }
            };
            let base = match first.name.as_str() {
                "root" => PExpr::Root,
                "key" => loop_slot(0)?,
                "index" => loop_slot(1)?,
                "first" => loop_slot(2)?,
                "last" => loop_slot(3)?,
                other => {
                    return Err(TemplateError::parse(
                        Some(path.span.clone()),
                        format!("there is no data variable @{other}"),
                    )
                    .suggest(
                        closest(other, ["root", "key", "index", "first", "last"])
                            .map(|c| format!("did you mean \"@{c}\"?")),
                    ))
                }
            };
            (base, rest)
        } else if path.parents > 0 {
            let depth = scope.contexts.len();
            let Some(slot) = depth
                .checked_sub(path.parents)
                .and_then(|i| scope.contexts.get(i))
            else {
                self.note(
                    TemplateError::parse(
                        Some(path.span.clone()),
                        format!(
                            "{} goes above the outermost context ({} level{} up, {depth} available)",
                            self.text(&path.span),
                            path.parents,
                            if path.parents == 1 { "" } else { "s" }
                        ),
                    )
                    .with_kind("above-root")
                    .suggest(Some("read from the root with @root.name".to_string())),
                );
                return Ok(PExpr::Const(Const::Null));
            };
            (PExpr::Var(*slot), &path.parts)
        } else if let Some((slot, rest)) = path.parts.split_first().and_then(|(first, rest)| {
            if path.explicit {
                return None;
            }
            scope
                .params
                .iter()
                .rev()
                .chain(scope.variables.iter())
                .find(|(name, _)| *name == first.name)
                .map(|(_, slot)| (*slot, rest))
        }) {
            (PExpr::Var(slot), rest)
        } else {
            (PExpr::Dot, &path.parts)
        };
        if rest.is_empty() {
            return Ok(base);
        }
        Ok(PExpr::Path {
            base: Box::new(base),
            keys: keys(rest),
            span: pspan(&path.span),
        })
    }
}

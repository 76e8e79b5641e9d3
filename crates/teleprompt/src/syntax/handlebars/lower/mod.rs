//! Lowers a Handlebars tree to the engine's program. Helpers resolve at
//! compile time; `../` reads a slot where the block saved its parent
//! context; `@index`, `@key`, `@first`, `@last` and block parameters are
//! slots the loop sets; inline partials become named templates.
//!
//! Here: the helper tables, `lower`, the scope of one template and the
//! walk over its nodes. Its rooms: `blocks.rs` (block helpers),
//! `partials.rs` (partials and partial blocks), `variables.rs` (Semantic
//! Kernel's `set` and `get`), `calls.rs` (helpers, host functions,
//! expressions and paths).

use std::cell::RefCell;
use std::collections::HashMap;

use super::ast::*;
use super::includes::Loaded;
use crate::diagnostics::{Findings, TemplateError};
use crate::engine::flavor::handlebars::{Helper, HELPERS, MEDIA_TYPE, SECTION};
use crate::engine::program::{
    push_text, Block as PBlock, Expr as PExpr, Flavor, Func, Host, Instr, Key, Program,
    Span as PSpan, Template,
};
use crate::functions::{Functions, Naming};
use crate::limits::Limits;
use crate::options::Strictness;
use crate::syntax::Origin;

mod blocks;
mod calls;
mod partials;
mod variables;

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
}

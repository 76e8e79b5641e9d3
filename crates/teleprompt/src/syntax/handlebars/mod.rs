//! Handlebars syntax on teleprompt's own engine (handlebars.js 4.x rules,
//! without HTML escaping: prompts are not HTML, so `{{x}}` and `{{{x}}}`
//! both print the value as it is).
//!
//! [`lex`] splits the body into text and tags and applies whitespace
//! control and the standalone-line rule, [`parse`] builds the public
//! [`ast::Tree`] (every node keeps its byte range), and `lower` turns the
//! tree into the engine's program, the same one Go templates compile to,
//! by the same steps ([`engine_front`](crate::syntax::engine_front)).
//!
//! Helpers: `if`, `unless`, `each`, `with`, `lookup`, `log` (prints
//! nothing), the helpers of Semantic Kernel, Forge and Dotprompt (their
//! table is in `engine/helpers.rs`: `set`/`get` variables, `json`,
//! `concat`, `range`, `eq`, `add`, `#ifEquals`, …), the shared functions (`tojson`/`toJSON`, `join list ", "`,
//! `lower`, `upper`, `trim`), the message helpers (`{{role "system"}}`,
//! `{{history}}`, `{{media url type}}`, and `{{#message role="system"}}…
//! {{/message}}`, which starts a message with that role before its body
//! and ends nothing: the next role starts the next message), and the
//! host's functions, hash arguments passed as a last map argument. Which
//! of these a prompt has is its origin's ([`crate::syntax::Origin`]: SK's
//! and Dotprompt's prompts have their system's only; any other name is
//! the data's). A helper that runs without arguments is called by a bare
//! `{{history}}` (read a data key of the same name as `{{this.history}}`);
//! a bare `{{role}}`, `{{json}}` or `{{each}}`, which cannot run that way,
//! reads the data. Partials are inline
//! (`{{#*inline "name"}}`) or files of the include root, read when the
//! prompt loads ([`files`]).

pub mod ast;
mod dotprompt_helpers;
pub(crate) use dotprompt_helpers::CONTEXT_KEY as DOTPROMPT_CONTEXT_KEY;
mod includes;
mod inputs;
pub mod lex;
mod lower;
pub mod parse;

use std::collections::BTreeSet;

use crate::diagnostics::{Findings, TemplateError};
use crate::engine;
use crate::syntax::engine_front::{self, Front, LoadedFiles, PlacedTemplate};
use crate::syntax::included::Placements;
use crate::syntax::CompileOptions;

/// A compiled Handlebars template, with where the partial files it read
/// sit in its source.
pub(crate) type HandlebarsTemplate = PlacedTemplate;

/// Likely mistakes of a chat prompt (see [`crate::analysis::chat`]).
pub(crate) fn chat_warnings(body: &str) -> Vec<TemplateError> {
    let Ok(tree) = parse::parse_nested(body, crate::limits::NESTING_CEILING) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    chat_nodes(&tree.nodes, true, &mut found);
    found
}

fn chat_nodes(nodes: &[ast::Node], top: bool, out: &mut Vec<TemplateError>) {
    use crate::analysis::chat::Item;
    fn marker(call: &ast::Call) -> Option<&str> {
        match &call.head {
            ast::Expr::Path(path) if !path.explicit && !path.data && path.parents == 0 => {
                match path.parts.as_slice() {
                    [only] => Some(only.name.as_str()),
                    _ => None,
                }
            }
            _ => None,
        }
    }
    let mut items = Vec::new();
    for node in nodes {
        items.push(match node {
            ast::Node::Text(text) if text.text.trim().is_empty() => Item::Blank,
            ast::Node::Text(text) => {
                let start = text.span.start + text.text.len() - text.text.trim_start().len();
                Item::Print(start..start + text.text.trim().len())
            }
            ast::Node::Comment(_) | ast::Node::Inline(_) => Item::Blank,
            ast::Node::Mustache(mustache) => match marker(&mustache.call) {
                Some("role") => Item::Role(mustache.span.clone()),
                Some("history") => Item::History(mustache.span.clone()),
                Some("set") => Item::Blank,
                _ => Item::Print(mustache.span.clone()),
            },
            ast::Node::Block(block) => {
                chat_nodes(&block.body, false, out);
                if let Some(inverse) = &block.inverse {
                    chat_nodes(inverse, false, out);
                }
                Item::Other
            }
            ast::Node::Partial(_) => Item::Other,
        });
    }
    out.extend(crate::analysis::chat::warnings(&items, top));
}

/// What the template reads of its data (`None` if it no longer parses).
pub(crate) fn read_inputs(body: &str) -> Option<crate::analysis::Inputs> {
    let tree = parse::parse_nested(body, crate::limits::NESTING_CEILING).ok()?;
    Some(inputs::inputs(&tree.nodes))
}

/// Parses and compiles a body; the strictness is fixed here.
#[cfg(test)]
pub(crate) fn compile(
    body: &str,
    options: &CompileOptions,
) -> Result<HandlebarsTemplate, TemplateError> {
    compile_as(body, options, false)
}

/// [`compile`], with Dotprompt's helpers when `dotprompt` is set.
#[cfg(test)]
pub(crate) fn compile_as(
    body: &str,
    options: &CompileOptions,
    dotprompt: bool,
) -> Result<HandlebarsTemplate, TemplateError> {
    match compile_all(body, options, dotprompt)? {
        (template, None) => Ok(template),
        (_, Some(error)) => Err(error),
    }
}

/// [`compile_as`], going on past the errors that do not stop it (unknown
/// helpers, wrong argument counts, missing partials, `../` above the
/// root): the template, and the first of those errors carrying the
/// others. A template with errors is only for warnings: it must not render.
/// The steps are [`engine_front::compile_all`]'s.
pub(crate) fn compile_all(
    body: &str,
    options: &CompileOptions,
    dotprompt: bool,
) -> Result<(HandlebarsTemplate, Option<TemplateError>), TemplateError> {
    let (template, (), found) =
        engine_front::compile_all(&Handlebars { dotprompt }, body, options)?;
    Ok((template, found))
}

/// Handlebars as an [`engine_front::Front`].
struct Handlebars {
    /// With Dotprompt's helpers.
    dotprompt: bool,
}

impl Front for Handlebars {
    type Tree = ast::Tree;
    type Loaded = includes::Loaded;
    type Kept = ();

    fn parse(&self, body: &str, max_nesting: usize) -> Result<ast::Tree, TemplateError> {
        let mut tree = parse::parse_nested(body, max_nesting)?;
        if self.dotprompt {
            dotprompt_helpers::rewrite(&mut tree)?;
        }
        Ok(tree)
    }

    fn load(
        &self,
        tree: &mut ast::Tree,
        body: &str,
        options: &CompileOptions,
    ) -> Result<includes::Loaded, TemplateError> {
        includes::load(
            tree,
            body,
            options.includes.as_ref(),
            self.dotprompt,
            options.limits.nesting(),
            options.limits.max_call_depth,
        )
    }

    fn lower(
        &self,
        tree: &ast::Tree,
        loaded: &includes::Loaded,
        options: &CompileOptions,
    ) -> Result<(engine::program::Program, Findings), TemplateError> {
        lower::lower(
            tree,
            loaded,
            options.strictness,
            &options.functions,
            options.origin,
            &options.data_roles,
            options.limits,
        )
    }

    fn root_reads(tree: &ast::Tree, loaded: &includes::Loaded) -> Option<BTreeSet<String>> {
        let mut reads = root_reads(&tree.nodes);
        for partial in &loaded.partials {
            reads = match (reads, root_reads(&partial.nodes)) {
                (Some(mut names), Some(more)) => {
                    names.extend(more);
                    Some(names)
                }
                _ => None,
            };
        }
        reads
    }

    fn keep(loaded: includes::Loaded) -> (Placements, ()) {
        (loaded.placed, ())
    }
}

impl LoadedFiles for includes::Loaded {
    fn source(&self) -> &str {
        &self.source
    }

    fn placed(&self) -> &Placements {
        &self.placed
    }
}

/// The first key of every path (a superset of the root names read), or
/// `None` when a path reads a context as a whole (`{{this}}`, `{{toJSON .}}`,
/// `@root`).
fn root_reads(nodes: &[ast::Node]) -> Option<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    let mut whole = false;
    walk(nodes, &mut |expr| {
        if let ast::Expr::Path(path) = expr {
            match path.parts.first() {
                Some(first) if path.data && first.name == "root" => match path.parts.get(1) {
                    Some(second) => {
                        names.insert(second.name.clone());
                    }
                    None => whole = true,
                },
                Some(_) if path.data => {}
                Some(first) => {
                    names.insert(first.name.clone());
                }
                None => whole = true,
            }
        }
    });
    (!whole).then_some(names)
}

/// Calls `f` on every expression of the tree (inline partial bodies too).
fn walk(nodes: &[ast::Node], f: &mut dyn FnMut(&ast::Expr)) {
    fn call(c: &ast::Call, f: &mut dyn FnMut(&ast::Expr)) {
        expr(&c.head, f);
        // `{{"foo"}}` and `{{#"foo"}}` read the key "foo"; `{{12.34}}` a
        // key spelled as written (counted as reading the whole context).
        if c.params.is_empty() && c.hash.is_empty() {
            let key = match &c.head {
                ast::Expr::String(name, span) => Some(vec![ast::Ident {
                    name: name.clone(),
                    span: span.clone(),
                }]),
                ast::Expr::Number(..) | ast::Expr::Bool(..) | ast::Expr::Null(..) => Some(vec![]),
                ast::Expr::Path(_) | ast::Expr::Sub(_) => None,
            };
            if let Some(parts) = key {
                f(&ast::Expr::Path(ast::Path {
                    data: false,
                    parents: 0,
                    explicit: false,
                    parts,
                    span: c.head.span(),
                }));
            }
        }
        // `{{get "x.y"}}` reads `x` (Semantic Kernel): seen as the path `x`.
        let is_get = matches!(&c.head, ast::Expr::Path(p) if !p.data && p.parts.len() == 1
            && p.parts.first().is_some_and(|i| i.name == "get"));
        let name = match (c.params.first(), c.hash.iter().find(|p| p.key == "name")) {
            (Some(ast::Expr::String(name, span)), _) => Some((name, span)),
            (
                None,
                Some(ast::HashPair {
                    value: ast::Expr::String(name, span),
                    ..
                }),
            ) => Some((name, span)),
            _ => None,
        };
        if let (true, Some((name, span))) = (is_get, name) {
            let first = name.split('.').next().unwrap_or("");
            f(&ast::Expr::Path(ast::Path {
                data: false,
                parents: 0,
                explicit: false,
                parts: vec![ast::Ident {
                    name: first.to_string(),
                    span: span.clone(),
                }],
                span: span.clone(),
            }));
        }
        for param in &c.params {
            expr(param, f);
        }
        for pair in &c.hash {
            expr(&pair.value, f);
        }
    }
    fn expr(e: &ast::Expr, f: &mut dyn FnMut(&ast::Expr)) {
        f(e);
        if let ast::Expr::Sub(c) = e {
            call(c, f);
        }
    }
    for node in nodes {
        match node {
            ast::Node::Mustache(m) => call(&m.call, f),
            ast::Node::Block(b) => {
                call(&b.call, f);
                walk(&b.body, f);
                if let Some(inverse) = &b.inverse {
                    walk(inverse, f);
                }
            }
            ast::Node::Partial(p) => {
                if let Some(context) = &p.context {
                    expr(context, f);
                }
                for pair in &p.hash {
                    expr(&pair.value, f);
                }
                if let Some(block) = &p.block {
                    walk(block, f);
                }
                if let Some(dynamic) = &p.dynamic {
                    expr(dynamic, f);
                }
            }
            ast::Node::Inline(i) => walk(&i.body, f),
            ast::Node::Text(_) | ast::Node::Comment(_) => {}
        }
    }
}

#[cfg(test)]
mod tests;

//! Go `text/template` syntax on teleprompt's own engine.
//!
//! [`lex`] splits the body into tokens, [`parse`] builds the public
//! [`ast::Tree`] (every node keeps its byte range, so `teleprompt check` can
//! walk it), and `lower` turns the tree into the engine's program, resolving
//! functions, variables and template names at compile time.
//!
//! The compile steps, and the template that renders, are the ones
//! Handlebars has too ([`engine_front`](crate::syntax::engine_front)):
//! this module says how Go does each step, and keeps the other files'
//! `define`s for what `check` finds on the trees.

pub mod ast;
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

/// A compiled Go template, with the files its templates came from.
#[derive(Debug)]
pub(crate) struct GoTemplate {
    placed: PlacedTemplate,
    /// `None` when every template is the prompt's own.
    included: Option<Box<Included>>,
}

/// The templates a prompt took from other files, for what `check` finds
/// on the trees.
#[derive(Debug)]
struct Included {
    /// The body followed by each file's body: the text of every span.
    source: String,
    /// The files' `define`s, and the body of each file a call names as a
    /// `define` of that name.
    defines: Vec<ast::DefineNode>,
}

impl GoTemplate {
    /// Whether the template may read `name` from the root of the data.
    pub(crate) fn reads(&self, name: &str) -> bool {
        self.placed.reads(name)
    }

    /// The bounds a render of the template is held to.
    pub(crate) fn limits(&self) -> crate::limits::Limits {
        self.placed.limits()
    }

    /// Renders against `data` in `scope`; errors in another file are
    /// placed there.
    pub(crate) fn render(
        &self,
        data: &crate::data::Data,
        scope: &mut crate::scope::RenderScope,
    ) -> Result<String, TemplateError> {
        self.placed.render(data, scope)
    }

    /// Where `span` of the source is: in the body, or in another file.
    pub(crate) fn place_span(&self, span: std::ops::Range<usize>) -> super::Place<'_> {
        self.placed.place_span(span)
    }

    /// `error` (spans in the body, or in another file's text after it)
    /// placed in the file it is in.
    pub(crate) fn place(&self, error: TemplateError) -> TemplateError {
        self.placed.place(error)
    }

    /// The tree of `body` (the text the template was compiled from) with
    /// the other files' templates as `define`s, and the text its spans
    /// are in (`None` if the body no longer parses).
    fn tree<'s>(&'s self, body: &'s str) -> Option<(ast::Tree, &'s str)> {
        let mut tree = parse::parse_nested(body, crate::limits::NESTING_CEILING).ok()?;
        match &self.included {
            Some(included) => {
                tree.defines.extend(included.defines.iter().cloned());
                Some((tree, included.source.as_str()))
            }
            None => Some((tree, body)),
        }
    }

    /// What the template reads of its data, other files' templates
    /// included (spans in them placed by [`GoTemplate::place`]).
    pub(crate) fn inputs(&self, body: &str) -> Option<crate::analysis::Inputs> {
        let (tree, _) = self.tree(body)?;
        Some(inputs::inputs(&tree))
    }

    /// [`scope_warnings`], in the other files' templates too.
    pub(crate) fn scope_warnings(
        &self,
        body: &str,
        known: &dyn Fn(&str) -> bool,
    ) -> Vec<TemplateError> {
        match self.tree(body) {
            Some((tree, source)) => tree_scope_warnings(&tree, source, known),
            None => Vec::new(),
        }
    }
}

/// Parses and compiles a body; the strictness is fixed here.
#[cfg(test)]
pub(crate) fn compile(body: &str, options: &CompileOptions) -> Result<GoTemplate, TemplateError> {
    match compile_all(body, options)? {
        (template, None) => Ok(template),
        (_, Some(error)) => Err(error),
    }
}

/// [`compile`], going on past the errors that do not stop it (unknown
/// functions, wrong argument counts, missing templates): the template,
/// and the first of those errors carrying the others. A template with
/// errors is only for warnings: it must not render. Templates the body
/// calls and does not define are read from other files of the include
/// root ([`files`]). The steps are [`engine_front::compile_all`]'s.
pub(crate) fn compile_all(
    body: &str,
    options: &CompileOptions,
) -> Result<(GoTemplate, Option<TemplateError>), TemplateError> {
    let (placed, included, found) = engine_front::compile_all(&Go, body, options)?;
    Ok((GoTemplate { placed, included }, found))
}

/// Go templates as an [`engine_front::Front`].
struct Go;

impl Front for Go {
    type Tree = ast::Tree;
    type Loaded = includes::Loaded;
    type Kept = Option<Box<Included>>;

    fn parse(&self, body: &str, max_nesting: usize) -> Result<ast::Tree, TemplateError> {
        parse::parse_nested(body, max_nesting)
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
            options.limits.nesting(),
            options.limits.max_template_bytes,
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
            options.limits,
        )
    }

    fn root_reads(tree: &ast::Tree, loaded: &includes::Loaded) -> Option<BTreeSet<String>> {
        // The files' templates, in the order [`Included`] lists them.
        let extra: Vec<&ast::ListNode> = loaded
            .files
            .iter()
            .flat_map(|file| {
                let called = file.called_as.iter().map(|_| &file.tree.root);
                called.chain(file.tree.defines.iter().map(|define| &define.list))
            })
            .collect();
        root_reads(tree, &extra)
    }

    fn keep(loaded: includes::Loaded) -> (Placements, Option<Box<Included>>) {
        if loaded.files.is_empty() {
            return (loaded.placed, None);
        }
        let mut defines = Vec::new();
        for file in loaded.files {
            for name in &file.called_as {
                defines.push(ast::DefineNode {
                    span: file.tree.root.span.clone(),
                    name: name.clone(),
                    name_span: file.tree.root.span.clone(),
                    list: file.tree.root.clone(),
                });
            }
            defines.extend(file.tree.defines);
        }
        let included = Included {
            source: loaded.source,
            defines,
        };
        (loaded.placed, Some(Box::new(included)))
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

/// What dot is where a word of the template stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dot {
    /// The root data: the main template, outside `range` and `with`.
    Root,
    /// The current element of a `range`, or the value of a `with`.
    Inner(&'static str),
    /// Whatever a `{{template}}` call passes to a `define` body.
    Unknown,
}

/// Calls `f` with every word of the template, templates of other files
/// (`extra`) included, and what dot is there.
fn visit(tree: &ast::Tree, extra: &[&ast::ListNode], f: &mut dyn FnMut(&ast::Arg, Dot)) {
    visit_list(&tree.root, Dot::Root, f);
    let defines = tree.defines.iter().map(|define| &define.list);
    for list in defines.chain(extra.iter().copied()) {
        visit_list(list, Dot::Unknown, f);
    }
}

fn visit_list(list: &ast::ListNode, dot: Dot, f: &mut dyn FnMut(&ast::Arg, Dot)) {
    for node in &list.nodes {
        match node {
            ast::Node::Action(action) => visit_pipe(&action.pipe, dot, f),
            ast::Node::If(branch) | ast::Node::Range(branch) | ast::Node::With(branch) => {
                visit_pipe(&branch.pipe, dot, f);
                let inner = match node {
                    ast::Node::If(_) => dot,
                    ast::Node::Range(_) => Dot::Inner("range"),
                    _ => Dot::Inner("with"),
                };
                visit_list(&branch.list, inner, f);
                if let Some(else_list) = &branch.else_list {
                    visit_list(else_list, dot, f);
                }
            }
            ast::Node::Template(call) | ast::Node::Block(call) => {
                if let Some(pipe) = &call.pipe {
                    visit_pipe(pipe, dot, f);
                }
            }
            ast::Node::Text(_)
            | ast::Node::Comment(_)
            | ast::Node::Break(_)
            | ast::Node::Continue(_) => {}
        }
    }
}

fn visit_pipe(pipe: &ast::PipeNode, dot: Dot, f: &mut dyn FnMut(&ast::Arg, Dot)) {
    for arg in pipe.cmds.iter().flat_map(|command| &command.args) {
        visit_arg(arg, dot, f);
    }
}

fn visit_arg(arg: &ast::Arg, dot: Dot, f: &mut dyn FnMut(&ast::Arg, Dot)) {
    f(arg, dot);
    match arg {
        ast::Arg::Chain(chain) => visit_arg(&chain.node, dot, f),
        ast::Arg::Pipe(inner) => visit_pipe(inner, dot, f),
        _ => {}
    }
}

/// Every field name the template uses, anywhere (a superset of the root
/// names it reads); `None` when it uses the root itself as a value: `.` at
/// the top level or in a `define` (which may be called with the root), or
/// `$` alone. Other files' templates (`extra`) count as `define`s.
fn root_reads(tree: &ast::Tree, extra: &[&ast::ListNode]) -> Option<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    let mut whole = false;
    visit(tree, extra, &mut |arg, dot| {
        let idents: &[ast::Ident] = match arg {
            ast::Arg::Dot(_) => {
                whole |= dot != Dot::Inner("range") && dot != Dot::Inner("with");
                &[]
            }
            ast::Arg::Field(field) => &field.idents,
            ast::Arg::Variable(variable) => {
                whole |= variable.name == "$" && variable.fields.is_empty();
                &variable.fields
            }
            ast::Arg::Chain(chain) => &chain.fields,
            _ => &[],
        };
        names.extend(idents.iter().map(|ident| ident.name.clone()));
    });
    (!whole).then_some(names)
}

/// Likely mistakes of a chat prompt (see [`crate::analysis::chat`]).
pub(crate) fn chat_warnings(body: &str) -> Vec<TemplateError> {
    let Ok(tree) = parse::parse_nested(body, crate::limits::NESTING_CEILING) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    chat_list(body, &tree.root, true, &mut found);
    // A file of `define`s and nothing else is templates for other
    // prompts to call, not a prompt with no message.
    if !tree.defines.is_empty() {
        found.retain(|warning| warning.kind != Some("no-message"));
    }
    found
}

fn chat_list(body: &str, list: &ast::ListNode, top: bool, out: &mut Vec<TemplateError>) {
    use crate::analysis::chat::Item;
    let mut items = Vec::new();
    for node in &list.nodes {
        items.push(match node {
            ast::Node::Text(text) => {
                let written = body.get(text.span.clone()).unwrap_or_default();
                if written.trim().is_empty() {
                    Item::Blank
                } else {
                    let start = text.span.start + written.len() - written.trim_start().len();
                    Item::Print(start..start + written.trim().len())
                }
            }
            ast::Node::Comment(_) => Item::Blank,
            ast::Node::Action(action) if !action.pipe.decl.is_empty() => Item::Blank,
            ast::Node::Action(action) => {
                let head = action
                    .pipe
                    .cmds
                    .first()
                    .and_then(|command| command.args.first());
                match head {
                    Some(ast::Arg::Identifier(ident)) if ident.name == "role" => {
                        Item::Role(action.span.clone())
                    }
                    Some(ast::Arg::Identifier(ident)) if ident.name == "history" => {
                        Item::History(action.span.clone())
                    }
                    _ => Item::Print(action.span.clone()),
                }
            }
            ast::Node::If(branch) | ast::Node::Range(branch) | ast::Node::With(branch) => {
                chat_list(body, &branch.list, false, out);
                if let Some(other) = &branch.else_list {
                    chat_list(body, other, false, out);
                }
                Item::Other
            }
            ast::Node::Template(_)
            | ast::Node::Block(_)
            | ast::Node::Break(_)
            | ast::Node::Continue(_) => Item::Other,
        });
    }
    out.extend(crate::analysis::chat::warnings(&items, top));
}

/// Sortie's most common mistake: `.issue.title` inside `{{range}}` or
/// `{{with}}`, where dot is the element, not the root. Warns where a field
/// chain inside them starts with a root name: one `known` says is a root
/// name (the prompt context's namespaces, the prompt's declared inputs),
/// or one the template reads from the root elsewhere (`.issue…` at the top
/// level, or `$.issue…`). As in Sortie's analyzer, `range` and `with`
/// change dot and `if`/`else` do not; `$` is always the root.
#[cfg(test)]
pub(crate) fn scope_warnings(body: &str, known: &dyn Fn(&str) -> bool) -> Vec<TemplateError> {
    let Ok(tree) = parse::parse_nested(body, crate::limits::NESTING_CEILING) else {
        return Vec::new();
    };
    tree_scope_warnings(&tree, body, known)
}

/// [`scope_warnings`] of a parsed tree, whose spans are in `body`.
fn tree_scope_warnings(
    tree: &ast::Tree,
    body: &str,
    known: &dyn Fn(&str) -> bool,
) -> Vec<TemplateError> {
    let mut root_names = BTreeSet::new();
    visit(tree, &[], &mut |arg, dot| match arg {
        ast::Arg::Field(field) if dot == Dot::Root => {
            root_names.extend(field.idents.first().map(|ident| ident.name.clone()));
        }
        ast::Arg::Variable(variable) if variable.name == "$" => {
            root_names.extend(variable.fields.first().map(|ident| ident.name.clone()));
        }
        _ => {}
    });
    let mut warnings = Vec::new();
    visit(tree, &[], &mut |arg, dot| {
        let (ast::Arg::Field(field), Dot::Inner(block)) = (arg, dot) else {
            return;
        };
        let Some(first) = field.idents.first() else {
            return;
        };
        if !root_names.contains(&first.name) && !known(&first.name) {
            return;
        }
        let text = body.get(field.span.clone()).unwrap_or_default();
        warnings.push(
            TemplateError::parse(
                Some(field.span.clone()),
                format!(
                    "{text} inside {{{{{block}}}}} reads the current {}, not the root data",
                    if block == "range" { "element" } else { "value" }
                ),
            )
            .with_kind("range-scope")
            .suggest(Some(format!("did you mean \"${text}\"?"))),
        );
    });
    warnings
}

#[cfg(test)]
mod tests;

//! Go `text/template` syntax on teleprompt's own engine.
//!
//! [`lex`] splits the body into tokens, [`parse`] builds the public
//! [`ast::Tree`] (every node keeps its byte range, so `teleprompt check` can
//! walk it), and `lower` turns the tree into the engine's program, resolving
//! functions, variables and template names at compile time.

pub mod ast;
pub mod lex;
mod lower;
pub mod parse;

use std::collections::BTreeSet;

use crate::diagnostics::TemplateError;
use crate::engine;
use crate::syntax::CompileOptions;
use crate::Data;

/// A compiled Go template.
#[derive(Debug)]
pub(crate) struct GoTemplate {
    program: engine::program::Program,
    /// Names the template may read from the root; `None`: it reads the
    /// root as a whole (`{{ toJSON . }}`), so any name.
    reads: Option<BTreeSet<String>>,
}

impl GoTemplate {
    /// Parses and compiles a body; the strictness is fixed here.
    pub(crate) fn compile(body: &str, options: &CompileOptions) -> Result<Self, TemplateError> {
        if u32::try_from(body.len()).is_err() {
            return Err(TemplateError::parse(
                None,
                "the template is larger than 4 GiB",
            ));
        }
        let tree = parse::parse(body)?;
        let program = lower::lower(&tree, body, options.strictness, &options.functions)?;
        let reads = root_reads(&tree);
        Ok(GoTemplate { program, reads })
    }

    /// Whether the template may read `name` from the root of the data.
    pub(crate) fn reads(&self, name: &str) -> bool {
        self.reads.as_ref().is_none_or(|names| names.contains(name))
    }

    /// Renders against `data`.
    pub(crate) fn render(&self, data: &Data) -> Result<String, TemplateError> {
        engine::render(&self.program, data)
    }
}

/// Every field name the template uses, anywhere (a superset of the root
/// names it reads); `None` when it uses the root itself as a value: `.` at
/// the top level or in a `define` (which may be called with the root), or
/// `$` alone.
fn root_reads(tree: &ast::Tree) -> Option<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    let mut whole = false;
    walk_list(&tree.root, true, &mut names, &mut whole);
    for define in &tree.defines {
        walk_list(&define.list, true, &mut names, &mut whole);
    }
    (!whole).then_some(names)
}

fn walk_list(
    list: &ast::ListNode,
    dot_is_root: bool,
    names: &mut BTreeSet<String>,
    whole: &mut bool,
) {
    for node in &list.nodes {
        match node {
            ast::Node::Action(action) => walk_pipe(&action.pipe, dot_is_root, names, whole),
            ast::Node::If(branch) | ast::Node::Range(branch) | ast::Node::With(branch) => {
                walk_pipe(&branch.pipe, dot_is_root, names, whole);
                let inner_is_root = dot_is_root && matches!(node, ast::Node::If(_));
                walk_list(&branch.list, inner_is_root, names, whole);
                if let Some(else_list) = &branch.else_list {
                    walk_list(else_list, dot_is_root, names, whole);
                }
            }
            ast::Node::Template(call) | ast::Node::Block(call) => {
                if let Some(pipe) = &call.pipe {
                    walk_pipe(pipe, dot_is_root, names, whole);
                }
            }
            ast::Node::Text(_)
            | ast::Node::Comment(_)
            | ast::Node::Break(_)
            | ast::Node::Continue(_) => {}
        }
    }
}

fn walk_pipe(
    pipe: &ast::PipeNode,
    dot_is_root: bool,
    names: &mut BTreeSet<String>,
    whole: &mut bool,
) {
    for command in &pipe.cmds {
        for arg in &command.args {
            walk_arg(arg, dot_is_root, names, whole);
        }
    }
}

fn walk_arg(arg: &ast::Arg, dot_is_root: bool, names: &mut BTreeSet<String>, whole: &mut bool) {
    let mut add = |idents: &[ast::Ident]| {
        names.extend(idents.iter().map(|ident| ident.name.clone()));
    };
    match arg {
        ast::Arg::Dot(_) => *whole |= dot_is_root,
        ast::Arg::Field(field) => add(&field.idents),
        ast::Arg::Variable(variable) => {
            *whole |= variable.name == "$" && variable.fields.is_empty();
            add(&variable.fields);
        }
        ast::Arg::Chain(chain) => {
            add(&chain.fields);
            walk_arg(&chain.node, dot_is_root, names, whole);
        }
        ast::Arg::Pipe(pipe) => walk_pipe(pipe, dot_is_root, names, whole),
        ast::Arg::Nil(_)
        | ast::Arg::Bool(..)
        | ast::Arg::Number(_)
        | ast::Arg::String(_)
        | ast::Arg::Identifier(_) => {}
    }
}

#[cfg(test)]
mod tests;

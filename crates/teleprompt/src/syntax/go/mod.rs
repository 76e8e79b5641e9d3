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

// The engine is shared with the Handlebars front end; until the crate root
// declares `mod engine;` it is compiled from here.
#[path = "../../engine/mod.rs"]
pub(crate) mod engine;

use crate::diagnostics::TemplateError;
use crate::syntax::CompileOptions;
use crate::Data;

/// A compiled Go template.
#[derive(Debug)]
pub(crate) struct GoTemplate {
    program: engine::program::Program,
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
        let program = lower::lower(&tree, body, options.strictness)?;
        Ok(GoTemplate { program })
    }

    /// Renders against `data`.
    pub(crate) fn render(&self, data: &Data) -> Result<String, TemplateError> {
        engine::render(&self.program, data)
    }
}

#[cfg(test)]
mod tests;

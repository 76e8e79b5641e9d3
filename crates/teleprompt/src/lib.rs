//! teleprompt renders the prompts of LLM agents from prompt files: optional
//! YAML front matter, then a template body in Jinja, Go text/template or
//! Handlebars syntax. Rendering is strict by default, and every error names
//! the file, the line and column in that file, and what is wrong.
//!
//! ```
//! use teleprompt::{Prompt, LoadOptions};
//! use serde_json::json;
//!
//! let source = "---\nsyntax: jinja\n---\nFix {{ issue.title }}.\n";
//! let prompt = Prompt::from_source("task.md", source, &LoadOptions::default())?;
//!
//! let rendered = prompt.render(json!({"issue": {"title": "the login form"}}))?;
//! assert_eq!(rendered.text(), "Fix the login form.\n");
//!
//! // A misspelled key is an error that points into the file.
//! let error = prompt.render(json!({"issue": {"tittle": "x"}})).unwrap_err();
//! assert_eq!(error.location().unwrap().line, 4);
//! assert_eq!(error.suggestion(), Some("did you mean \"issue.tittle\"?"));
//! # Ok::<(), teleprompt::Error>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod context;
pub mod data;
pub mod diagnostics;
pub mod document;
pub mod functions;
mod library;
pub mod messages;
mod options;
mod syntax;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

pub use crate::data::Data;
pub use crate::diagnostics::{Error, ErrorClass, Errors, Location};
pub use crate::document::Document;
pub use crate::library::{prompt_files, Library};
pub use crate::messages::Role;
pub use crate::options::{LoadOptions, MessageReader, OnError, Strictness, Syntax};

/// A compiled prompt: load it once, render it many times.
///
/// A `Prompt` is immutable and `Send + Sync`; renders borrow their data.
#[derive(Debug)]
pub struct Prompt {
    name: String,
    description: Option<String>,
    syntax: Syntax,
    strictness: Strictness,
    on_error: OnError,
    default_role: Role,
    continuation_prompt: Option<String>,
    defaults: Option<Arc<Value>>,
    document: Document,
    template: syntax::Template,
}

impl Prompt {
    /// Loads a prompt file with default options.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Prompt, Error> {
        Prompt::from_file_with(path, &LoadOptions::default())
    }

    /// Loads a prompt file.
    pub fn from_file_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Prompt, Error> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|error| {
            Error::new(ErrorClass::Io, format!("cannot read the file: {error}")).with_file(&origin)
        })?;
        let source = String::from_utf8(bytes).map_err(|error| {
            Error::new(
                ErrorClass::Document,
                format!(
                    "the file is not UTF-8 text (invalid byte at offset {})",
                    error.utf8_error().valid_up_to()
                ),
            )
            .with_file(&origin)
        })?;
        Prompt::from_source(&origin, &source, options)
    }

    /// Loads a prompt from text. `origin` is the file name used for the
    /// default name, the syntax by extension, and in error reports.
    pub fn from_source(origin: &str, source: &str, options: &LoadOptions) -> Result<Prompt, Error> {
        let document = Document::parse(origin, source)?;
        let metadata = document.metadata()?;
        let path = Path::new(origin);
        let syntax = metadata
            .syntax
            .or_else(|| Syntax::from_path(path))
            .or(options.syntax)
            .ok_or_else(|| {
                Error::new(
                    ErrorClass::Document,
                    format!(
                        "cannot tell the template syntax of this file: add `syntax: jinja` \
                         (or go, handlebars) to its front matter, give it an extension \
                         ({}), or pass --syntax",
                        Syntax::EXTENSIONS
                    ),
                )
                .with_file(origin)
            })?;
        let strictness = options
            .strict
            .or(metadata.strict)
            .unwrap_or_else(|| syntax.default_strictness());
        let default_role = metadata.default_role.unwrap_or(Role::User);
        let compile = syntax::CompileOptions { strictness };
        let template = syntax::Template::compile(
            syntax,
            &document.body,
            metadata.messages.unwrap_or_default(),
            default_role,
            &compile,
        )
        .map_err(|error| document.locate(error))?;
        Ok(Prompt {
            name: metadata.name.unwrap_or_else(|| document::file_stem(path)),
            description: metadata.description,
            syntax,
            strictness,
            on_error: metadata.on_error.unwrap_or_default(),
            default_role,
            continuation_prompt: metadata.continuation_prompt,
            defaults: metadata.defaults.map(Arc::new),
            document,
            template,
        })
    }

    /// Renders the prompt.
    ///
    /// `data` is anything that converts into [`Data`]: a `serde_json::Value`
    /// (moved, not copied), an `Arc<Value>`, or a `&Data` kept by the host.
    /// The prompt's `input.default` values sit underneath it.
    ///
    /// With `on_error: original` a failed render returns the unrendered body
    /// and the error in [`Rendered::recovered_error`].
    pub fn render(&self, data: impl Into<Data>) -> Result<Rendered, Error> {
        let data = data.into();
        let data = match &self.defaults {
            Some(defaults) => data.over(defaults.clone()),
            None => data,
        };
        match self.template.render(&data) {
            Ok(text) => Ok(Rendered {
                text,
                recovered: None,
            }),
            Err(error) => {
                let error = self.document.locate(error);
                match self.on_error {
                    OnError::Fail => Err(error),
                    OnError::Original => Ok(Rendered {
                        text: self.document.body.clone(),
                        recovered: Some(error),
                    }),
                }
            }
        }
    }

    /// The prompt's name: front matter `name`, else the file stem.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Front matter `description`.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The template syntax.
    pub fn syntax(&self) -> Syntax {
        self.syntax
    }

    /// The strictness the prompt renders with.
    pub fn strictness(&self) -> Strictness {
        self.strictness
    }

    /// What a failed render returns.
    pub fn on_error(&self) -> OnError {
        self.on_error
    }

    /// The role of text before the first role marker (front matter
    /// `default_role`, else `user`).
    pub fn default_role(&self) -> Role {
        self.default_role
    }

    /// Front matter `continuation_prompt`.
    pub fn continuation_prompt(&self) -> Option<&str> {
        self.continuation_prompt.as_deref()
    }

    /// The whole front matter, known keys and the host's own (`tracker`,
    /// `agent`, …) alike.
    pub fn metadata(&self) -> &Map<String, Value> {
        &self.document.front_matter
    }

    /// The file name the prompt was loaded from.
    pub fn origin(&self) -> &str {
        &self.document.origin
    }

    /// The template body as written (CRLF turned into LF).
    pub fn body(&self) -> &str {
        &self.document.body
    }
}

/// The result of a render.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    text: String,
    recovered: Option<Error>,
}

impl Rendered {
    /// The rendered text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes the rendered text.
    pub fn into_text(self) -> String {
        self.text
    }

    /// With `on_error: original`, the error that made the render fall back
    /// to the unrendered text. A host should log it.
    pub fn recovered_error(&self) -> Option<&Error> {
        self.recovered.as_ref()
    }
}

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Prompt>();
        assert_send_sync::<Library>();
        assert_send_sync::<Data>();
    }
}

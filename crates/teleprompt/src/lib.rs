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
mod engine;
pub mod functions;
mod library;
pub mod limits;
pub mod messages;
mod options;
mod syntax;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::messages::Markers;

pub use crate::context::PromptContext;
pub use crate::data::Data;
pub use crate::diagnostics::{Error, ErrorClass, Errors, Location};
pub use crate::document::Document;
pub use crate::library::{prompt_files, Library};
pub use crate::messages::{ChatMessage, ContentPart, Entry, Message, OutputFormat, Role};
pub use crate::options::{JinjaOptions, LoadOptions, MessageReader, OnError, Strictness, Syntax};

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
        let compile = syntax::CompileOptions {
            strictness,
            functions: options.functions.clone(),
            jinja: metadata.jinja.or(options.jinja),
            max_output: options.limits.max_output,
        };
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

    /// Renders the prompt against plain data.
    ///
    /// `data` is anything that converts into [`Data`]: a `serde_json::Value`
    /// (moved, not copied), an `Arc<Value>`, or a `&Data` kept by the host.
    /// The prompt's `input.default` values sit underneath it.
    ///
    /// With `on_error: original` a failed render returns the unrendered body
    /// and the error in [`Rendered::recovered_error`].
    pub fn render(&self, data: impl Into<Data>) -> Result<Rendered, Error> {
        self.render_with(data, &RenderOptions::default())
    }

    /// [`Prompt::render`] with options: the clock behind Jinja's
    /// `strftime_now` (a chat template's date line), for instance.
    pub fn render_with(
        &self,
        data: impl Into<Data>,
        options: &RenderOptions,
    ) -> Result<Rendered, Error> {
        let data = data.into();
        let data = match &self.defaults {
            Some(defaults) => data.over(defaults.clone()),
            None => data,
        };
        let turn = Turn {
            now: Some(options.clock.now().to_zoned(jiff::tz::TimeZone::UTC)),
            ..Turn::default()
        };
        self.render_data(&data, turn)
    }

    /// Renders one turn of a conversation: the data comes from `context`
    /// (clock, namespaces, args, turn, workspace), the history is placed
    /// where the template calls `history()` (or after the rendered
    /// messages), and every error carries the context's labels.
    pub fn render_turn(&self, context: &PromptContext) -> Result<Rendered, Error> {
        self.render_turn_with(context, &RenderOptions::default())
    }

    /// [`Prompt::render_turn`] with options.
    pub fn render_turn_with(
        &self,
        context: &PromptContext,
        options: &RenderOptions,
    ) -> Result<Rendered, Error> {
        let labels = context.labels();
        let label = |error: Error| error.with_labels(labels);
        if options.validate_history {
            context.validate_history().map_err(|error| {
                let rule = format!("rule {}: {}", error.rule.name(), error.rule.description());
                label(Error::new(ErrorClass::Input, error.to_string()).with_suggestion(Some(rule)))
            })?;
        }
        let reads = |name: &str| self.template.reads(name);
        let built = context
            .build_with_defaults(&reads, self.defaults.clone())
            .map_err(label)?;
        let turn = Turn {
            now: Some(context.now()),
            history: context.shared_history(),
            continuation: context.is_continuation(),
            warnings: built.warnings,
        };
        let mut rendered = self.render_data(&built.data, turn).map_err(label)?;
        rendered.recovered = rendered.recovered.map(label);
        Ok(rendered)
    }

    fn render_data(&self, data: &Data, turn: Turn) -> Result<Rendered, Error> {
        let markers = Markers::new();
        let env = syntax::RenderEnv {
            now: turn
                .now
                .unwrap_or_else(|| jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC)),
        };
        let output = messages::with_markers(&markers, || self.template.render(data, &env));
        let split = output
            .map_err(|error| self.document.locate(error))
            .and_then(|output| {
                if !output.contains(messages::OPEN) {
                    // No marker at all: one message, without a second scan.
                    return Ok(self.plain_split(output));
                }
                markers.split(&output, self.default_role).map_err(|error| {
                    Error::new(ErrorClass::Render, error.to_string()).with_file(self.origin())
                })
            });
        let (split, recovered) = match split {
            Ok(split) => (split, None),
            Err(error) if self.on_error == OnError::Original => {
                (self.plain_split(self.document.body.clone()), Some(error))
            }
            Err(error) => return Err(error),
        };
        let split = match turn.continuation && split.text.trim().is_empty() {
            true => {
                let fallback =
                    context::continuation_fallback("", true, self.continuation_prompt.as_deref());
                self.plain_split(fallback.to_string())
            }
            false => split,
        };
        Ok(Rendered {
            text: split.text,
            items: split.items,
            history: turn.history,
            warnings: turn.warnings,
            recovered,
        })
    }

    /// `text` as one message of the default role.
    fn plain_split(&self, text: String) -> messages::Split {
        let content = text.trim();
        let items = if content.is_empty() {
            Vec::new()
        } else {
            vec![messages::Item::Message(Message {
                role: self.default_role,
                content: vec![ContentPart::Text {
                    text: content.to_string(),
                }],
            })]
        };
        messages::Split { text, items }
    }

    /// Likely mistakes that neither stop loading nor rendering, each placed
    /// in the file (class [`ErrorClass::Warning`]): in Go syntax, a root
    /// name such as `.issue` read inside `range` or `with`, where dot is
    /// the element (`did you mean "$.issue.title"?`).
    pub fn warnings(&self) -> Vec<Error> {
        self.template
            .warnings()
            .into_iter()
            .map(|warning| self.document.locate(warning))
            .collect()
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

/// What a render adds to the data: the conversation around it.
#[derive(Default)]
struct Turn {
    /// The current time of the render.
    now: Option<jiff::Zoned>,
    history: Arc<Vec<ChatMessage>>,
    continuation: bool,
    warnings: Vec<String>,
}

/// Options of one render.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// Check the history against the tool-call rules before rendering
    /// (default `true`; [`Prompt::render_turn_with`]).
    pub validate_history: bool,
    /// The clock of [`Prompt::render_with`] (default: the system clock);
    /// a turn takes its [`PromptContext`]'s clock instead.
    pub clock: context::Clock,
}

impl Default for RenderOptions {
    fn default() -> RenderOptions {
        RenderOptions {
            validate_history: true,
            clock: context::Clock::System,
        }
    }
}

/// The result of a render: the text, and the messages the template wrote.
#[derive(Clone, Debug)]
pub struct Rendered {
    text: String,
    items: Vec<messages::Item>,
    history: Arc<Vec<ChatMessage>>,
    warnings: Vec<String>,
    recovered: Option<Error>,
}

impl Rendered {
    /// The rendered text, without role markers.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes the rendered text.
    pub fn into_text(self) -> String {
        self.text
    }

    /// The messages the template wrote, in order (without the history).
    /// Text before the first `role` call belongs to the prompt's
    /// `default_role`; whitespace-only messages are dropped.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.items.iter().filter_map(|item| match item {
            messages::Item::Message(message) => Some(message),
            messages::Item::History => None,
        })
    }

    /// The whole conversation to send: the rendered messages, with the
    /// history where the template placed it, or after them.
    pub fn conversation(&self) -> Vec<Entry<'_>> {
        messages::assemble(&self.items, &self.history)
    }

    /// The result in an output shape: `text`, teleprompt's `messages`,
    /// OpenAI chat, or Anthropic (system lifted to the top).
    pub fn to_format(&self, format: OutputFormat) -> Result<serde_json::Value, Error> {
        messages::shape(format, &self.text, &self.conversation())
            .map_err(|error| Error::new(ErrorClass::Render, error.to_string()))
    }

    /// Things the host should know that did not stop the render, such as
    /// an arg hidden by a namespace.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
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

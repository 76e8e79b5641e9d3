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
// On docs.rs, each item behind a cargo feature says which.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod analysis;
pub mod context;
pub mod data;
pub mod diagnostics;
pub mod document;
mod engine;
pub mod functions;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod library;
pub mod limits;
mod load;
pub mod messages;
mod options;
mod prompt;
mod render;
mod request;
pub mod schema;
mod scope;
mod syntax;
pub mod tokens;

#[cfg(feature = "unstable")]
#[doc(hidden)]
pub mod unstable;

pub use crate::context::PromptContext;
pub use crate::data::Data;
pub use crate::diagnostics::{Error, ErrorClass, Location};
pub use crate::document::Document;
#[cfg(feature = "watch")]
pub use crate::library::Watcher;
pub use crate::library::{
    prompt_files, FailedFile, Library, LibraryEntry, ReloadReport, SharedLibrary,
};
pub use crate::messages::{ContentPart, Entry, HistoryMessage, Message, OutputFormat, Role};
pub use crate::options::{CancelToken, RenderOptions};
pub use crate::options::{JinjaOptions, LoadOptions, MessageReader, OnError, Strictness, Syntax};
pub use crate::prompt::Prompt;
pub use crate::render::rendered::Rendered;
pub use crate::request::{RenderRequest, RequestError};

// The guide's pages and the root README are read through the links in
// `doctests/` (to `../../README.md` and `../../docs/`), so that the
// published crate, which holds copies of them, runs these doctests too.

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../doctests/README.md")]
struct ReadmeDoctests;

/// The crate README's Rust example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;

/// The tokens guide's Rust example (`docs/tokens.md`), compiled and run as
/// a doctest where the `tokens` feature is on.
#[cfg(all(doctest, feature = "tokens"))]
#[doc = include_str!("../doctests/tokens.md")]
struct TokensGuideDoctests;

/// The guide's Rust examples (`docs/library.md`), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../doctests/library.md")]
struct LibraryGuideDoctests;

/// The caching guide's Rust examples (`docs/caching-and-diffs.md`),
/// compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../doctests/caching-and-diffs.md")]
struct CachingGuideDoctests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Prompt>();
        assert_send_sync::<Library>();
        assert_send_sync::<Data>();
        assert_send_sync::<Rendered>();
    }
}

//! Google Dotprompt `.prompt` files as they are (checked against the
//! `dotprompt` npm package 1.1.2): the front matter's `model`, `config`,
//! `tools`, `output`, … stay metadata for the host; `input.schema`
//! (Picoschema) is checked before each render ([`crate::schema`]);
//! `input.default` sits under the data; the body is Handlebars, trimmed
//! of whitespace at both ends when the file has front matter; messages
//! follow Dotprompt's rules ([`MessageReader::Dotprompt`]). Dotprompt's
//! helpers are Handlebars syntax: `syntax/handlebars/dotprompt_helpers.rs`.
//!
//! [`MessageReader::Dotprompt`]: crate::MessageReader::Dotprompt

use serde_json::Value;

use crate::diagnostics::Error;
use crate::document::{Document, Metadata};
use crate::{options::MessageReader, options::Syntax};

/// The key of the data layer that holds the host's render context (the
/// helpers that read it define it).
pub(crate) use crate::syntax::handlebars::DOTPROMPT_CONTEXT_KEY as CONTEXT_KEY;

/// Completes `metadata` from a Dotprompt file's front matter, and trims
/// the body as Dotprompt does.
pub(crate) fn apply(document: &mut Document, metadata: &mut Metadata) -> Result<(), Error> {
    if metadata
        .syntax
        .is_some_and(|syntax| syntax != Syntax::Handlebars)
    {
        // A teleprompt prompt that names its syntax, by teleprompt's rules.
        return Ok(());
    }
    metadata.syntax = Some(Syntax::Handlebars);
    metadata.messages.get_or_insert(MessageReader::Dotprompt);
    if let Some(Value::Array(tools)) = document.front_matter.get("tools") {
        if let Some(bad) = tools.iter().find(|tool| !tool.is_string()) {
            return Err(document.key_error(
                "tools",
                format!(
                    "`tools` is a list of tool names, found {}",
                    crate::data::describe(bad)
                ),
            ));
        }
    }
    if !document.front_matter.is_empty() {
        document.trim_body();
    }
    Ok(())
}

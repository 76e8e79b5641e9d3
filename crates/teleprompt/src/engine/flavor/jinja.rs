//! Jinja's particulars on the engine: a value the lowered program does
//! not handle as Jinja does (the render goes to minijinja then), and a
//! chat template's messages as `transformers` hands them over.

use super::super::fail::error;
use super::super::program::Span;
use super::super::render::{Renderer, Result};
use super::super::value::Value;
use crate::data;
use crate::diagnostics::TemplateError;

/// A value a program lowered from Jinja does not handle the way Jinja
/// does (`what`: what it was to do with it): the template renders on
/// minijinja instead, which gives the result, or the error, Jinja gives.
#[cold]
pub(in crate::engine) fn not_jinja(
    span: Span,
    what: &str,
    value: &Value<'_>,
) -> Box<TemplateError> {
    Box::new(error(
        span,
        format!("cannot {what} {} here", value.kind_name()),
    ))
}

impl<'a> Renderer<'a> {
    /// Truth in a chat template: a message is empty when every key is
    /// null, as `transformers` drops them.
    #[inline(never)]
    pub(in crate::engine) fn message_truth(&self, value: &Value<'a>) -> bool {
        match value {
            Value::Object(view) if self.is_message(view) => view
                .keys()
                .iter()
                .any(|key| view.get(key).is_some_and(|found| !found.value().is_null())),
            other => other.is_true(),
        }
    }

    /// Whether `view` is one of a chat template's messages.
    pub(in crate::engine) fn is_message(&self, view: &data::View<'_>) -> bool {
        self.messages.as_ref().is_some_and(|messages| {
            !view.is_merged() && messages.contains(&std::ptr::from_ref(view.value()))
        })
    }

    /// Whether `items` (a list of the data, or a slice of one) holds a
    /// chat template's messages.
    pub(in crate::engine) fn holds_messages(&self, items: &[serde_json::Value]) -> bool {
        let range = items.as_ptr_range();
        self.messages.as_ref().is_some_and(|messages| {
            (range.start < messages.end && messages.start < range.end)
                || range.start == messages.start
        })
    }

    /// A chat template's message copied out (into a list a template
    /// builds: `run.tool_messages + [candidate]`) as `transformers` hands
    /// it over: its keys whose value is not null. A message with its
    /// reasoning (read under several names, see
    /// [`Renderer::message_field`]) is minijinja's to copy (`None`).
    pub(in crate::engine) fn message_json(
        &self,
        view: &data::View<'_>,
    ) -> Option<serde_json::Value> {
        let entries = view.value().as_object()?;
        let reasoning = ["reasoning_content", "thinking", "reasoning"];
        if reasoning.iter().any(|key| entries.contains_key(*key)) {
            return None;
        }
        Some(serde_json::Value::Object(
            entries
                .iter()
                .filter(|(_, value)| !value.is_null())
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        ))
    }

    /// A field of a chat template's message as `transformers` (5.x)
    /// hands it over: `None` where the key is absent or its value null;
    /// the reasoning, under whichever of its names it came
    /// (`reasoning_content`, `thinking`, `reasoning`), is also
    /// `reasoning_content` and `thinking` (as the Jinja front end reads it
    /// on minijinja).
    pub(in crate::engine) fn message_field<'v>(
        &self,
        view: &data::View<'v>,
        name: &str,
        _span: Span,
    ) -> Result<Option<data::View<'v>>> {
        let present = |key: &str| view.get(key).filter(|found| !found.value().is_null());
        let reasoning = || {
            ["reasoning_content", "thinking", "reasoning"]
                .into_iter()
                .find_map(present)
        };
        Ok(match name {
            "reasoning_content" => reasoning(),
            "thinking" => present("thinking").or_else(reasoning),
            _ => present(name),
        })
    }
}

/// Prints a value as Jinja does, where that is this engine's to print:
/// Python's `str()` of a bool; other values print on minijinja.
pub(in crate::engine) fn print(out: &mut String, value: &Value<'_>, span: Span) -> Result<()> {
    match value {
        Value::Bool(b) => {
            out.push_str(if *b { "True" } else { "False" });
            Ok(())
        }
        other => Err(not_jinja(span, "print", other)),
    }
}

/// Jinja's `length`: characters of a string, items of a list.
pub(in crate::engine) fn length<'a>(value: &Value<'_>, span: Span) -> Result<Value<'a>> {
    let len = match value {
        Value::Array(items) => items.len(),
        Value::Json(json) if json.is_array() => json.as_array().map_or(0, Vec::len),
        Value::Str(_) | Value::String(_) => value.as_str().unwrap_or("").chars().count(),
        other => return Err(not_jinja(span, "count", other)),
    };
    Ok(Value::Int(len as i64))
}

/// Jinja's `join` prints items with Python's `str()`: the same text as
/// here for strings and integers only.
pub(in crate::engine) fn check_join(list: &Value<'_>, span: Span) -> Result<()> {
    let plain = |item: &serde_json::Value| item.is_string() || item.is_i64();
    let items = match list {
        Value::Json(json) => json.as_array().map(Vec::as_slice),
        Value::Array(items) => Some(*items),
        _ => None,
    };
    match items {
        Some(items) if items.iter().all(plain) => Ok(()),
        _ => Err(not_jinja(span, "join", list)),
    }
}

/// A chat template's messages (the data's `messages` list), by where they
/// are: an object in this range is a message.
pub(in crate::engine) fn messages(
    data: &crate::data::Data,
) -> Option<std::ops::Range<*const serde_json::Value>> {
    match data.root().get("messages").map(|v| v.value()) {
        Some(serde_json::Value::Array(items)) => Some(items.as_ptr_range()),
        _ => None,
    }
}

/// A value of the data for Python's `json.dumps`: one value, or items of
/// a list (a slice of one).
pub(crate) enum JsonRef<'v> {
    Value(&'v serde_json::Value),
    Items(&'v [serde_json::Value]),
}

/// `tojson`'s options, as the template gave them (constants).
pub(crate) struct JsonOptions<'o> {
    pub ensure_ascii: bool,
    /// A number of spaces, or a text; `None` for one line.
    pub indent: Option<Indent<'o>>,
    pub sort_keys: bool,
}

/// `tojson`'s `indent`.
pub(crate) enum Indent<'o> {
    Spaces(i64),
    Text(&'o str),
}

/// What the Jinja front end computes for the engine as Python does,
/// shared with the filters it gives minijinja (so both paths print the
/// same text): the engine has no Python of its own.
pub(crate) struct Python {
    /// `tojson`: the JSON text, or why there is none (the render then
    /// runs on minijinja, which gives its error).
    pub tojson: fn(JsonRef<'_>, &JsonOptions<'_>) -> std::result::Result<String, String>,
    /// `strftime_now(format)` at the render's clock, of at most the
    /// given bytes: the text, or why there is none.
    pub strftime: fn(&jiff::Zoned, &str, usize) -> std::result::Result<String, String>,
    /// `str(value)` of a list or a map of the data (Python's `repr`), as
    /// the Jinja front end prints one on minijinja.
    pub repr: fn(JsonRef<'_>) -> std::result::Result<String, String>,
}

impl std::fmt::Debug for Python {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Python")
    }
}

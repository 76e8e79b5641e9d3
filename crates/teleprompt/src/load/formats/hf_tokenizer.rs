//! Hugging Face chat templates as models ship them: the `chat_template` of
//! a `tokenizer_config.json` (a string, or a list of named templates) with
//! the tokenizer's special tokens, or a `chat_template.jinja` file.
//!
//! `transformers` renders a chat template with the conversation
//! (`messages`), `tools` and `documents` (`None` unless given),
//! `add_generation_prompt` (`False` unless given), the special tokens
//! (`bos_token`, `eos_token`, …) and any extra keyword arguments. The
//! values it supplies itself become the prompt's defaults here, under the
//! host's data. (Its `{% generation %}`
//! tag is Jinja syntax: see `syntax/jinja/generation.rs`.)

use std::path::Path;

use serde_json::{Map, Value};

use crate::data::{describe, merge_under};
use crate::diagnostics::{closest, Error, ErrorClass, Location};
use crate::document::include_root::{content_hash, Dependency};
use crate::document::kind::FileKind;
use crate::document::{Document, Metadata};
use crate::limits::{self, Input};
use crate::options::Syntax;

/// The special tokens `transformers` passes to a chat template.
const SPECIAL_TOKENS: &[&str] = &[
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
    "additional_special_tokens",
];

/// The template to use from a list of named ones when none is asked for.
pub(crate) const DEFAULT_TEMPLATE_NAME: &str = "default";

/// The template `transformers` uses instead when tools are passed and no
/// template was named.
pub(crate) const TOOL_USE: &str = "tool_use";

/// A chat template read from a tokenizer config.
#[derive(Debug)]
pub(crate) struct ConfigTemplate {
    /// The template text.
    pub template: String,
    /// The name of the template chosen from a list, if the config has one.
    pub name: Option<String>,
    /// The special tokens as the template sees them.
    pub tokens: Map<String, Value>,
    /// With a list and no name asked for: the `tool_use` template, for
    /// renders that pass tools.
    pub tool_use: Option<String>,
}

/// Reads the chat template and special tokens of a `tokenizer_config.json`.
/// `template_name` picks one of a list of named templates (default
/// `"default"`). Every problem is a `document` error naming the file.
pub(crate) fn read_config(
    origin: &str,
    text: &str,
    template_name: Option<&str>,
) -> Result<ConfigTemplate, Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let config: Value = serde_json::from_str(text).map_err(|error| {
        Error::in_text(
            ErrorClass::Document,
            origin,
            text,
            Location {
                line: error.line().max(1),
                column: error.column().max(1),
            },
            format!(
                "this tokenizer config is not valid JSON: {}",
                json_reason(&error)
            ),
        )
    })?;
    let document_error =
        |message: String| Error::new(ErrorClass::Document, message).with_file(origin);
    let Value::Object(config) = config else {
        return Err(document_error(format!(
            "a tokenizer config is a JSON object, found {}",
            describe(&config)
        )));
    };
    let mut tool_use = None;
    let (template, name) = match config.get("chat_template") {
        Some(Value::String(template)) => (template.clone(), None),
        Some(Value::Array(templates)) => {
            let (template, name) = pick_named(templates, template_name).map_err(document_error)?;
            if template_name.is_none() {
                tool_use = pick_named(templates, Some(TOOL_USE))
                    .ok()
                    .map(|(template, _)| template);
            }
            (template, Some(name))
        }
        None | Some(Value::Null) => {
            return Err(document_error(
                "this tokenizer config has no `chat_template` (newer models ship it as \
                 chat_template.jinja beside the config)"
                    .to_string(),
            ))
        }
        Some(other) => {
            return Err(document_error(format!(
                "`chat_template` must be a string or a list of named templates, found {}",
                describe(other)
            )))
        }
    };
    if let (Some(asked), None) = (template_name, &name) {
        if asked != DEFAULT_TEMPLATE_NAME {
            return Err(document_error(format!(
                "this tokenizer config has a single chat template, not one named \"{asked}\""
            )));
        }
    }
    Ok(ConfigTemplate {
        template,
        name,
        tokens: special_tokens(&config),
        tool_use,
    })
}

/// The template named `wanted` (default `"default"`) of a list of
/// `{"name": …, "template": …}` entries.
fn pick_named(templates: &[Value], wanted: Option<&str>) -> Result<(String, String), String> {
    let wanted = wanted.unwrap_or(DEFAULT_TEMPLATE_NAME);
    let mut names = Vec::new();
    for entry in templates {
        let name = entry.get("name").and_then(Value::as_str);
        let template = entry.get("template").and_then(Value::as_str);
        let (Some(name), Some(template)) = (name, template) else {
            return Err(
                "each entry of the `chat_template` list needs a string `name` and `template`"
                    .to_string(),
            );
        };
        if name == wanted {
            return Ok((template.to_string(), name.to_string()));
        }
        names.push(name);
    }
    let suggestion = closest(wanted, names.iter().copied())
        .map(|name| format!(" (did you mean \"{name}\"?)"))
        .unwrap_or_default();
    Err(format!(
        "this tokenizer config has no chat template named \"{wanted}\"{suggestion}; it has: {}",
        names.join(", ")
    ))
}

/// The special tokens of a config: strings as they are, added-token
/// objects (`{"content": "<s>", …}`) as their content.
pub(crate) fn special_tokens(config: &Map<String, Value>) -> Map<String, Value> {
    let mut tokens = Map::new();
    for name in SPECIAL_TOKENS {
        let value = match config.get(*name) {
            Some(Value::Array(items)) => {
                Value::Array(items.iter().filter_map(token_text).collect())
            }
            Some(token) => match token_text(token) {
                Some(text) => text,
                None => continue,
            },
            None => continue,
        };
        tokens.insert((*name).to_string(), value);
    }
    tokens
}

fn token_text(token: &Value) -> Option<Value> {
    match token {
        Value::String(_) => Some(token.clone()),
        Value::Object(added) => added.get("content").filter(|c| c.is_string()).cloned(),
        _ => None,
    }
}

/// What `transformers` passes to every chat template unless the caller
/// does: `tools` and `documents` as `None`, `add_generation_prompt` false.
pub(crate) fn base_arguments() -> Value {
    serde_json::json!({
        "tools": null,
        "documents": null,
        "add_generation_prompt": false,
    })
}

/// The first line of a JSON error, without serde's position suffix.
fn json_reason(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

/// A `tokenizer_config.json` as a prompt: its chat template (the one
/// named `template_name` from a list) is the body, its special tokens are
/// defaults under the data. Lines in errors count in the template text.
/// With a list of named templates and no name asked for, also the
/// `tool_use` template, for renders with `tools`.
pub(crate) fn read(
    origin: &str,
    source: &str,
    template_name: Option<&str>,
) -> Result<(Document, Metadata, Option<Document>), Error> {
    let config = read_config(origin, source, template_name)?;
    let label = |name: Option<&str>| match name {
        Some(name) => format!("{origin} (chat_template \"{name}\")"),
        None => format!("{origin} (chat_template)"),
    };
    let document = Document::plain(&label(config.name.as_deref()), config.template);
    let tool_use = config
        .tool_use
        .map(|template| Document::plain(&label(Some(TOOL_USE)), template));
    let metadata = Metadata {
        syntax: Some(Syntax::ChatTemplate),
        defaults: Some(Value::Object(config.tokens)),
        ..Metadata::default()
    };
    Ok((document, metadata, tool_use))
}

/// What every chat template gets from its origin: the arguments
/// `transformers` passes (under the prompt's own defaults) and, for a
/// `…/MODEL/tokenizer_config.json` without a `name`, the model's folder
/// name as the prompt's name.
pub(crate) fn complete(metadata: &mut Metadata, path: &Path, kind: FileKind) {
    let base = base_arguments();
    metadata.defaults = Some(match metadata.defaults.take() {
        Some(own) => merge_under(own, &base),
        None => base,
    });
    if metadata.name.is_none() && matches!(kind, FileKind::TokenizerConfig | FileKind::ChatTemplate)
    {
        metadata.name = path
            .parent()
            .and_then(Path::file_name)
            .map(|dir| dir.to_string_lossy().into_owned());
    }
}

/// The special tokens of the `tokenizer_config.json` beside a
/// `chat_template.jinja` at `path` (the template prints them), and the
/// config as a file the load looked at. A missing or unreadable config
/// gives no tokens.
pub(crate) fn sibling_tokens(path: &Path, max_bytes: usize) -> (Option<Value>, Option<Dependency>) {
    let Some(config_path) = path.parent().map(|dir| dir.join("tokenizer_config.json")) else {
        return (None, None);
    };
    // Read under the one rule for files a file names: inside the
    // template's folder (a link out of it, a pipe, a device is not read).
    let bytes = path
        .parent()
        .and_then(|dir| {
            limits::read_inside(dir, "tokenizer_config.json", max_bytes, Input::Template).ok()
        })
        .map(|(_, bytes)| bytes);
    let dependency = Dependency {
        path: config_path.canonicalize().unwrap_or(config_path),
        name: "tokenizer_config.json".into(),
        hash: bytes.as_deref().map(content_hash),
    };
    let tokens = match bytes.and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok()) {
        Some(Value::Object(config)) => Some(Value::Object(special_tokens(&config))),
        _ => None,
    };
    (tokens, Some(dependency))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_as_strings_or_added_token_objects() {
        let config = r#"{"chat_template": "{{ bos_token }}", "bos_token": {"content": "<s>", "lstrip": false, "__type": "AddedToken"}, "eos_token": "</s>", "pad_token": null, "additional_special_tokens": ["<a>", {"content": "<b>"}]}"#;
        let read = read_config("tokenizer_config.json", config, None).unwrap();
        assert_eq!(read.template, "{{ bos_token }}");
        assert_eq!(
            Value::Object(read.tokens),
            serde_json::json!({"bos_token": "<s>", "eos_token": "</s>", "additional_special_tokens": ["<a>", "<b>"]})
        );
    }

    #[test]
    fn named_templates() {
        let config = r#"{"chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}]}"#;
        let read = read_config("c.json", config, None).unwrap();
        assert_eq!(
            (read.template.as_str(), read.name.as_deref()),
            ("D", Some("default"))
        );
        assert_eq!(read.tool_use.as_deref(), Some("T"));
        let read = read_config("c.json", config, Some("tool_use")).unwrap();
        assert_eq!(read.template, "T");
        assert_eq!(
            read.tool_use, None,
            "a template asked for by name is the only one"
        );
        let error = read_config("c.json", config, Some("tool_uses")).unwrap_err();
        assert!(
            error.message().contains("did you mean \"tool_use\"?"),
            "{error}"
        );
        assert!(
            error.message().contains("it has: default, tool_use"),
            "{error}"
        );
    }

    #[test]
    fn broken_configs_are_document_errors() {
        for (config, words) in [
            ("{\"chat_template\": ", "not valid JSON"),
            ("[1]", "a JSON object, found an array"),
            ("{}", "has no `chat_template`"),
            ("{\"chat_template\": 3}", "found a number"),
            (
                "{\"chat_template\": [{\"name\": 1}]}",
                "needs a string `name`",
            ),
        ] {
            let error = read_config("tokenizer_config.json", config, None).unwrap_err();
            assert_eq!(error.class(), ErrorClass::Document);
            assert!(error.message().contains(words), "{config}: {error}");
        }
        let error = read_config("t.json", r#"{"chat_template": "x"}"#, Some("rag")).unwrap_err();
        assert!(error.message().contains("single chat template"), "{error}");
    }
}

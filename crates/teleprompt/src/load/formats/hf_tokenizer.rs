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

use serde_json::{Map, Value};

use crate::data::describe;
use crate::diagnostics::{closest, Error, ErrorClass, Location};

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

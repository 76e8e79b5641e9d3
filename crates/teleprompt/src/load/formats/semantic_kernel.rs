//! Semantic Kernel's prompt YAML as SK writes it: `name`, `description`,
//! `template_format`, `template`, `input_variables` (each with `name`,
//! `description`, `default`, `is_required`, `json_schema`, …) and
//! `execution_settings`.
//!
//! - `template_format: handlebars` renders as Handlebars, `jinja2` as
//!   Jinja; SK's own `semantic-kernel` format and `liquid` are refused
//!   with a clear error;
//! - the template's `<message role="…">` blocks are read as messages (from
//!   the template text only, never from data), as SK reads them;
//! - `input_variables[].default` sits under the data; an input that is
//!   required (SK's default) and has no default must be in the data, or
//!   the render is an `input` error naming it;
//! - every other key (`execution_settings`, `output_variable`, …) is
//!   metadata for the host.
//!
//! Lines in errors count in the template text. The host's plugin functions
//! are helpers named as SK names them (`{{Weather-GetForecast city="Paris"}}`),
//! their arguments bound and converted as SK's function helpers do: see
//! [`crate::functions`].

use serde_json::{Map, Value};

use crate::data::{describe, parse_yaml};
use crate::diagnostics::Location;
use crate::diagnostics::{Error, ErrorClass};
use crate::document::{Document, Metadata};
use crate::{options::MessageReader, options::Syntax};

/// A prompt YAML read: its template as a document, the metadata, and the
/// names of the required inputs that have no default.
pub(crate) struct SkPrompt {
    pub document: Document,
    pub metadata: Metadata,
    pub required: Vec<String>,
}

/// Reads a Semantic Kernel prompt YAML. Every problem is a `document`
/// error naming the file.
pub(crate) fn read(origin: &str, source: &str) -> Result<SkPrompt, Error> {
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let config = parse_yaml(source).map_err(|(line, column, message)| {
        Error::in_text(
            ErrorClass::Document,
            origin,
            source,
            Location { line, column },
            message,
        )
    })?;
    let document_error =
        |message: String| Error::new(ErrorClass::Document, message).with_file(origin);
    let Value::Object(mut config) = config else {
        return Err(document_error(format!(
            "a Semantic Kernel prompt is a YAML mapping with a `template`, found {}",
            describe(&config)
        )));
    };
    let template = match config.remove("template") {
        Some(Value::String(template)) => template,
        None | Some(Value::Null) => {
            return Err(document_error(
                "this YAML has no `template`: a prompt in YAML is Semantic Kernel's format \
                 (name, template_format, template, input_variables)"
                    .to_string(),
            ))
        }
        Some(other) => {
            return Err(document_error(format!(
                "`template` must be a string, found {}",
                describe(&other)
            )))
        }
    };
    let syntax = match config.get("template_format") {
        None | Some(Value::Null) => {
            return Err(document_error(
                "set `template_format: handlebars` (or jinja2): SK's own `semantic-kernel` \
                 format, its default, is not supported"
                    .to_string(),
            ))
        }
        Some(Value::String(format)) => match format.to_ascii_lowercase().as_str() {
            "handlebars" => Syntax::Handlebars,
            "jinja2" | "jinja" => Syntax::Jinja,
            other => {
                return Err(document_error(format!(
                    "template_format `{other}` is not supported: use handlebars or jinja2"
                )))
            }
        },
        Some(other) => {
            return Err(document_error(format!(
                "`template_format` must be a string, found {}",
                describe(other)
            )))
        }
    };
    let mut defaults = Map::new();
    let mut required = Vec::new();
    match config.get("input_variables") {
        None | Some(Value::Null) => {}
        Some(Value::Array(inputs)) => {
            for input in inputs {
                let Some(name) = input.get("name").and_then(Value::as_str) else {
                    return Err(document_error(format!(
                        "each of `input_variables` needs a `name`, found {}",
                        describe(input)
                    )));
                };
                match input.get("default") {
                    Some(value) if !value.is_null() => {
                        defaults.insert(name.to_string(), value.clone());
                    }
                    // SK's `is_required` is true unless set false.
                    _ if input.get("is_required") != Some(&Value::Bool(false)) => {
                        required.push(name.to_string());
                    }
                    _ => {}
                }
            }
        }
        Some(other) => {
            return Err(document_error(format!(
                "`input_variables` must be a list, found {}",
                describe(other)
            )))
        }
    }
    let name = config
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string);
    let description = config
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_string);
    let document = Document::embedded(&format!("{origin} (template)"), config, template);
    let metadata = Metadata {
        name: name.filter(|name| !name.is_empty()),
        description,
        syntax: Some(syntax),
        defaults: (!defaults.is_empty()).then_some(Value::Object(defaults)),
        messages: Some(MessageReader::SkTags),
        ..Metadata::default()
    };
    Ok(SkPrompt {
        document,
        metadata,
        required,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_prompt_yaml_is_a_document_error() {
        for (yaml, words) in [
            (
                "- a\n- b\n",
                "a YAML mapping with a `template`, found an array",
            ),
            ("name: x\n", "has no `template`"),
            (
                "template: [1]\ntemplate_format: handlebars\n",
                "`template` must be a string",
            ),
            ("template: hi\n", "set `template_format: handlebars`"),
            (
                "template: hi\ntemplate_format: liquid\n",
                "`liquid` is not supported",
            ),
            (
                "template: hi\ntemplate_format: 3\n",
                "must be a string, found a number",
            ),
            (
                "template: hi\ntemplate_format: handlebars\ninput_variables: {a: 1}\n",
                "must be a list",
            ),
            (
                "template: hi\ntemplate_format: handlebars\ninput_variables: [{default: 1}]\n",
                "needs a `name`",
            ),
            ("template: [unclosed\n", "invalid YAML"),
        ] {
            let error = read("p.yaml", yaml).err().expect("an error");
            assert_eq!(error.class(), ErrorClass::Document, "{yaml}");
            assert!(error.message().contains(words), "{yaml}: {error}");
        }
    }

    #[test]
    fn deep_and_large_yaml_never_panics() {
        let deep = format!(
            "template: hi\ntemplate_format: handlebars\nexecution_settings: {}1{}\n",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let _ = read("p.yaml", &deep);
        let many: String = (0..20_000)
            .map(|i| format!("  - name: v{i}\n    default: {i}\n"))
            .collect();
        let large = format!("template: hi\ntemplate_format: handlebars\ninput_variables:\n{many}");
        let read = read("p.yaml", &large).expect("loads");
        assert!(read.required.is_empty());
    }
}

//! Microsoft Prompty files (`.prompty`) as they are: YAML front matter
//! with `model`, `inputs`, `sample` and `template`, and a template body
//! whose `system:` / `user:` / `assistant:` lines start messages.
//!
//! Their front matter is mapped onto a prompt's own keys:
//! - `template` (`jinja2`, the default, or `mustache`; also as
//!   `{format: …}`) picks the syntax (mustache renders as Handlebars);
//! - role lines are read from the template text (never from data), and text
//!   before the first one is a system message, as Prompty reads it;
//! - `inputs.NAME.default`, then `inputs.NAME.sample`, then the inline
//!   `sample` sit under the data, so a Prompty file renders on its own
//!   sample when no data is given;
//! - `model`, `authors`, `tags`, … stay metadata for the host.

use serde_json::{Map, Value};

use crate::data::{describe, merge_under};
use crate::diagnostics::Error;
use crate::document::{Document, Metadata};
use crate::messages::Role;
use crate::{MessageReader, Syntax};

/// True for a file that should be read as a Prompty file.
pub(crate) fn is_prompty(origin: &str) -> bool {
    std::path::Path::new(origin)
        .extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| ext.eq_ignore_ascii_case("prompty"))
}

/// Completes `metadata` from a Prompty file's front matter.
pub(crate) fn apply(document: &Document, metadata: &mut Metadata) -> Result<(), Error> {
    let front = &document.front_matter;
    if metadata.syntax.is_none() {
        metadata.syntax = Some(template_syntax(document, front.get("template"))?);
    }
    metadata.messages.get_or_insert(MessageReader::RoleLines);
    metadata.default_role.get_or_insert(Role::System);

    let mut below = Value::Object(Map::new());
    if let Some(inputs) = front.get("inputs").filter(|value| !value.is_null()) {
        let Value::Object(inputs) = inputs else {
            return Err(document.key_error(
                "inputs",
                format!("`inputs` must be a mapping of input names, found {}", describe(inputs)),
            ));
        };
        let mut defaults = Map::new();
        let mut samples = Map::new();
        for (name, spec) in inputs {
            let Value::Object(spec) = spec else {
                return Err(document.key_error(
                    "inputs",
                    format!(
                        "input `{name}` must be a mapping (type, description, default, sample), found {}",
                        describe(spec)
                    ),
                ));
            };
            if let Some(value) = spec.get("default") {
                defaults.insert(name.clone(), value.clone());
            }
            if let Some(value) = spec.get("sample") {
                samples.insert(name.clone(), value.clone());
            }
        }
        below = merge_under(Value::Object(defaults), &Value::Object(samples));
    }
    match front.get("sample") {
        None | Some(Value::Null) => {}
        Some(sample @ Value::Object(_)) => below = merge_under(below, sample),
        Some(Value::String(text)) if text.trim_start().starts_with("${") => {
            return Err(document.key_error(
                "sample",
                format!(
                    "`sample: {text}` refers to another file, which teleprompt does not read yet: \
                     put the sample inline, or pass it as data"
                ),
            ))
        }
        Some(other) => {
            return Err(document.key_error(
                "sample",
                format!("`sample` must be a mapping of input values, found {}", describe(other)),
            ))
        }
    }
    let has_values = below.as_object().is_some_and(|map| !map.is_empty());
    if has_values {
        metadata.defaults = Some(match metadata.defaults.take() {
            Some(own) => merge_under(own, &below),
            None => below,
        });
    }
    Ok(())
}

/// The syntax of `template: jinja2 | mustache` (or `{format: …}`).
fn template_syntax(document: &Document, template: Option<&Value>) -> Result<Syntax, Error> {
    let format = match template {
        None | Some(Value::Null) => return Ok(Syntax::Jinja),
        Some(Value::String(format)) => format.as_str(),
        Some(Value::Object(spec)) => match spec.get("format") {
            None | Some(Value::Null) => return Ok(Syntax::Jinja),
            Some(Value::String(format)) => format.as_str(),
            Some(other) => {
                return Err(document.key_error(
                    "template",
                    format!("`template.format` must be a string, found {}", describe(other)),
                ))
            }
        },
        Some(other) => {
            return Err(document.key_error(
                "template",
                format!("`template` must be a string or a mapping, found {}", describe(other)),
            ))
        }
    };
    match format.to_ascii_lowercase().as_str() {
        "jinja2" | "jinja" => Ok(Syntax::Jinja),
        "mustache" | "handlebars" => Ok(Syntax::Handlebars),
        other => Err(document.key_error(
            "template",
            format!("Prompty template format `{other}` is not supported: use jinja2 or mustache"),
        )),
    }
}

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
//!   sample when no data is given (Prompty 2's `inputSchema.properties`
//!   list with `default`/`example` too);
//! - `model`, `authors`, `tags`, … stay metadata for the host.

use serde_json::{Map, Value};

use crate::data::{describe, merge_under};
use crate::diagnostics::Error;
use crate::document::{Document, Metadata};
use crate::messages::Role;
use crate::{options::MessageReader, options::Syntax};

/// Completes `metadata` from a Prompty file's front matter.
pub(crate) fn apply(document: &Document, metadata: &mut Metadata) -> Result<(), Error> {
    let front = &document.front_matter;
    if metadata.syntax.is_none() {
        metadata.syntax = Some(template_syntax(document, front.get("template"))?);
    }
    metadata.messages.get_or_insert(MessageReader::RoleLines);
    metadata.default_role.get_or_insert(Role::System);

    let mut defaults = Map::new();
    let mut samples = Map::new();
    let mut threads = Vec::new();
    for (key, specs) in [
        ("inputs", front.get("inputs")),
        (
            "inputSchema",
            front
                .get("inputSchema")
                .and_then(|schema| schema.get("properties")),
        ),
    ] {
        for (name, spec) in input_specs(document, key, specs)? {
            if spec.get("kind").and_then(Value::as_str) == Some("thread")
                && !threads.contains(&name)
            {
                threads.push(name.clone());
            }
            if let Some(value) = spec.get("default") {
                defaults.insert(name.clone(), value.clone());
            }
            if let Some(value) = spec.get("sample").or_else(|| spec.get("example")) {
                samples.insert(name, value.clone());
            }
        }
    }
    match threads.as_slice() {
        [] => {}
        [name] => metadata.thread = Some(name.clone()),
        [first, second, ..] => {
            return Err(document.key_error(
                "inputs",
                format!(
                    "the inputs `{first}` and `{second}` are both `kind: thread`: \
                     teleprompt places one conversation per prompt"
                ),
            ))
        }
    }
    let mut below = merge_under(Value::Object(defaults), &Value::Object(samples));
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
                format!(
                    "`sample` must be a mapping of input values, found {}",
                    describe(other)
                ),
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

/// An input's name and its spec (`kind`, `default`, `example`, …).
type InputSpec = (String, Map<String, Value>);

/// The declared inputs, by name: Prompty 1 writes `inputs` as a mapping
/// of names to specs, Prompty 2 as a list of specs with a `name` (also
/// under `inputSchema.properties`).
fn input_specs(
    document: &Document,
    key: &str,
    specs: Option<&Value>,
) -> Result<Vec<InputSpec>, Error> {
    let bad = |what: String| document.key_error(key, what);
    match specs {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(by_name)) => by_name
            .iter()
            .map(|(name, spec)| match spec {
                Value::Object(spec) => Ok((name.clone(), spec.clone())),
                // A bare value is the input's example (Prompty 2's shorthand).
                other => Ok((
                    name.clone(),
                    Map::from_iter([("example".to_string(), other.clone())]),
                )),
            })
            .collect(),
        Some(Value::Array(list)) => list
            .iter()
            .map(|spec| {
                let name = spec.get("name").and_then(Value::as_str);
                match (spec, name) {
                    (Value::Object(spec), Some(name)) => Ok((name.to_string(), spec.clone())),
                    _ => Err(bad(format!(
                        "each input in `{key}` needs a `name`, found {}",
                        describe(spec)
                    ))),
                }
            })
            .collect(),
        Some(other) => Err(bad(format!(
            "`{key}` must be a mapping or a list of inputs, found {}",
            describe(other)
        ))),
    }
}

/// The syntax of `template: jinja2 | mustache` (or `{format: …}`).
fn template_syntax(document: &Document, template: Option<&Value>) -> Result<Syntax, Error> {
    let format = match template {
        None | Some(Value::Null) => return Ok(Syntax::Jinja),
        Some(Value::String(format)) => format.as_str(),
        Some(Value::Object(spec)) => match spec.get("format") {
            None | Some(Value::Null) => return Ok(Syntax::Jinja),
            Some(Value::String(format)) => format.as_str(),
            // Prompty 2: `format: {kind: jinja2}`.
            Some(Value::Object(format)) => match format.get("kind") {
                Some(Value::String(kind)) => kind.as_str(),
                _ => return Ok(Syntax::Jinja),
            },
            Some(other) => {
                return Err(document.key_error(
                    "template",
                    format!(
                        "`template.format` must be a string, found {}",
                        describe(other)
                    ),
                ))
            }
        },
        Some(other) => {
            return Err(document.key_error(
                "template",
                format!(
                    "`template` must be a string or a mapping, found {}",
                    describe(other)
                ),
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

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
use crate::document::include_root::Includes;
use crate::document::{Document, Metadata};
use crate::messages::Role;
use crate::{options::MessageReader, options::Syntax};

/// What a Prompty file's `${…}` references may read: the host's choice
/// ([`crate::LoadOptions::env_references`], `file_references`).
pub(crate) struct References<'a> {
    pub env: bool,
    pub files: bool,
    /// Where `${file:…}` reads (the prompt's folder in its include root).
    pub includes: Option<&'a Includes>,
}

/// The front matter keys teleprompt reads, whose `${…}` references are
/// resolved; the others (`model`, its connection, …) stay as written,
/// for the host.
const RESOLVED_KEYS: [&str; 4] = ["inputs", "inputSchema", "sample", "template"];

/// Completes `metadata` from a Prompty file's front matter.
pub(crate) fn apply(
    document: &Document,
    metadata: &mut Metadata,
    references: &References<'_>,
) -> Result<(), Error> {
    let mut front = Map::new();
    for key in RESOLVED_KEYS {
        if let Some(value) = document.front_matter.get(key) {
            let resolved = resolve(value, references, 0)
                .map_err(|message| document.key_error(key, message))?;
            front.insert(key.to_string(), resolved);
        }
    }
    let front = &front;
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
                    "`sample: {text}` is a reference teleprompt does not resolve \
                     (only `${{env:…}}` and `${{file:…}}`): put the sample inline, or pass it as data"
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

/// How deep a front matter value may nest for its references to be
/// resolved (YAML has already bounded it; this keeps the walk's stack
/// small).
const MAX_DEPTH: usize = 128;

/// `value` with its `${env:…}` and `${file:…}` references resolved, as
/// Prompty's loader resolves them: a string that is a whole reference
/// (starts with `${`, ends with `}`), as a mapping's value at any depth
/// (strings that are items of a list stay, as in Prompty); other
/// protocols stay as written. A reference the host has not allowed is an
/// error.
fn resolve(value: &Value, references: &References<'_>, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Ok(value.clone());
    }
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, item) in map {
                let item = match item {
                    Value::String(text) => {
                        reference(text, references)?.unwrap_or_else(|| item.clone())
                    }
                    other => resolve(other, references, depth + 1)?,
                };
                out.insert(key.clone(), item);
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(_) => Ok(item.clone()),
                other => resolve(other, references, depth + 1),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::String(text) if depth == 0 => {
            Ok(reference(text, references)?.unwrap_or_else(|| value.clone()))
        }
        other => Ok(other.clone()),
    }
}

/// The value of the reference `text`, if it is an `env` or `file` one.
fn reference(text: &str, references: &References<'_>) -> Result<Option<Value>, String> {
    let Some(inner) = text
        .strip_prefix("${")
        .and_then(|rest| rest.strip_suffix('}'))
    else {
        return Ok(None);
    };
    let (protocol, rest) = inner.split_once(':').unwrap_or((inner, ""));
    match protocol.to_ascii_lowercase().as_str() {
        "env" => {
            if !references.env {
                return Err(format!(
                    "`{text}` reads the environment, which the host has not allowed: \
                     LoadOptions::with_env_references(true) (the command: --allow-env), \
                     or put the value in the file"
                ));
            }
            let (name, default) = rest.split_once(':').unwrap_or((rest, ""));
            match std::env::var(name) {
                Ok(value) => Ok(Some(Value::String(value))),
                Err(std::env::VarError::NotUnicode(_)) => Err(format!(
                    "`{text}`: the environment variable {name} is not UTF-8 text"
                )),
                Err(std::env::VarError::NotPresent) if !default.is_empty() => {
                    Ok(Some(Value::String(default.to_string())))
                }
                Err(std::env::VarError::NotPresent) => Err(format!(
                    "`{text}`: the environment variable {name:?} is not set (and the reference gives no default)"
                )),
            }
        }
        "file" => {
            if !references.files {
                return Err(format!(
                    "`{text}` reads another file, which the host has not allowed: \
                     LoadOptions::with_file_references(true) (the command: --allow-files), \
                     or put the value inline"
                ));
            }
            let Some(includes) = references.includes else {
                return Err(format!(
                    "`{text}` reads another file, but this prompt has no folder to read it from \
                     (load it from a file, or give LoadOptions an include_root)"
                ));
            };
            let candidates = includes.beside_candidates(rest)?;
            let Some((_, file)) = includes.read_first(&candidates)? else {
                return Err(format!("`{text}`: no file {rest:?} beside the prompt"));
            };
            let extension = std::path::Path::new(rest)
                .extension()
                .and_then(|ext| ext.to_str());
            match extension {
                Some("json") => serde_json::from_str(&file.text)
                    .map(Some)
                    .map_err(|error| format!("`{text}`: {rest} is not JSON: {error}")),
                Some("yaml" | "yml") => crate::data::parse_yaml(&file.text).map(Some).map_err(
                    |(line, column, error)| {
                        format!("`{text}`: {rest} is not YAML ({line}:{column}): {error}")
                    },
                ),
                _ => Ok(Some(Value::String(file.text))),
            }
        }
        _ => Ok(None),
    }
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

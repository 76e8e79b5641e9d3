//! The check of data against declared inputs: the `jsonschema` crate does
//! the validating; this file turns what it finds into [`Violation`]s that
//! name the path in the data (`issue.labels[0]`), the declared type and
//! the value found.

use std::borrow::Cow;
use std::fmt;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use serde_json::{Map, Value};

use crate::data::View;
use crate::diagnostics::closest;

/// The violations one check reports at most (one more is collected, to
/// tell that there are more): data with a million wrong items gives a
/// short error.
pub const MAX_VIOLATIONS: usize = 50;

/// How many values of an enum a message lists.
const MAX_LISTED: usize = 20;

/// The most work — values in the data times values in the schema — whose
/// every mismatch is listed. The validator builds all of a value's errors
/// before the first can be read (an `anyOf` one for each of its branches),
/// so past this only the first mismatch is reported: 300 `anyOf` branches
/// over 30,000 items made nine million errors and 4 GB.
const MAX_LISTED_WORK: usize = 1 << 21;

/// The values in `value` (itself included), counted up to `cap`.
fn size(value: &Value, cap: usize) -> usize {
    let mut count = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        count += 1;
        if count >= cap {
            break;
        }
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    count
}

/// The errors of `value` against `validator` (compiled from `schema`):
/// none when it is valid; every one when listing them is cheap; else the
/// first, with `true` for "there may be more".
fn errors_of<'v>(
    validator: &'v Validator,
    value: &'v Value,
    schema: &Value,
) -> (Vec<ValidationError<'v>>, bool) {
    if validator.is_valid(value) {
        return (Vec::new(), false);
    }
    let schema_size = size(schema, MAX_LISTED_WORK).max(1);
    if size(value, MAX_LISTED_WORK / schema_size + 1) * schema_size <= MAX_LISTED_WORK {
        let errors = validator.iter_errors(value).take(MAX_VIOLATIONS + 1);
        return (errors.collect(), false);
    }
    (validator.validate(value).err().into_iter().collect(), true)
}

/// The line that says only the first mismatch is listed.
fn first_only() -> Violation {
    Violation {
        path: "…".to_string(),
        message: "only the first mismatch is shown: the data is too large to list them all"
            .to_string(),
    }
}

/// One way the data does not fit the declared inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Where in the data: `issue.labels[0]`.
    pub path: String,
    /// What is wrong there: `expected string, found 5`.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// One declared input (a property at the schema's top level).
pub(crate) struct Input {
    pub name: String,
    pub required: bool,
    /// Its own schema, with the top level's `$defs` for its references.
    schema: Value,
    /// Its validator; `None` when the whole schema is checked at once.
    validator: Option<Validator>,
}

/// Compiles a JSON Schema (checked against its meta-schema first).
/// Patterns (`pattern`, `patternProperties`) run on a linear-time regex
/// engine: one that needs backtracking (a lookaround, a backreference)
/// could take minutes on a long string of data, and is refused.
pub(crate) fn compile(schema: &Value) -> Result<Validator, String> {
    let options = jsonschema::options().with_pattern_options(jsonschema::PatternOptions::regex());
    options.build(schema).map_err(|error| {
        let at = error.instance_path().as_str().trim_start_matches('/');
        let message = match error.kind() {
            ValidationErrorKind::Format { format } if format == "regex" => format!(
                "{} is not a pattern teleprompt can run: it is malformed, or it needs \
                 backtracking (a lookaround such as `(?=`, a backreference such as `\\1`), \
                 which long data could make run for minutes; patterns run in linear time",
                error.instance()
            ),
            _ => error.to_string(),
        };
        if at.is_empty() {
            message
        } else {
            format!("at `{}`: {message}", at.replace('/', "."))
        }
    })
}

/// The declared inputs of a top-level object schema.
pub(crate) fn inputs(top: &Map<String, Value>) -> Vec<Input> {
    let required: Vec<&str> = match top.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let empty = Map::new();
    let properties = match top.get("properties") {
        Some(Value::Object(properties)) => properties,
        _ => &empty,
    };
    let mut out = Vec::new();
    for (name, schema) in properties {
        let mut schema = schema.clone();
        if let Value::Object(own) = &mut schema {
            for key in ["$schema", "$defs", "definitions"] {
                if let (Some(shared), false) = (top.get(key), own.contains_key(key)) {
                    own.insert(key.to_string(), shared.clone());
                }
            }
        }
        // A reference into the rest of the top level cannot be compiled
        // on its own: such a schema is checked whole instead.
        let validator = compile(&schema).ok();
        out.push(Input {
            name: name.clone(),
            required: required.contains(&name.as_str()),
            schema,
            validator,
        });
    }
    for name in required {
        if !properties.contains_key(name) {
            out.push(Input {
                name: name.to_string(),
                required: true,
                schema: Value::Bool(true),
                validator: None,
            });
        }
    }
    out
}

/// Whether every input could be compiled on its own.
pub(crate) fn all_compiled(inputs: &[Input]) -> bool {
    inputs
        .iter()
        .all(|input| input.validator.is_some() || input.schema == Value::Bool(true))
}

/// Checks each declared input on its own, its value borrowed from the data
/// (copied only where layers of data merge into it).
pub(crate) fn each_input(inputs: &[Input], json: &Value, root: View<'_>) -> Vec<Violation> {
    let mut found = Vec::new();
    for input in inputs {
        let Some(view) = root.get(&input.name) else {
            if input.required {
                found.push(missing(&input.name, &input.schema, json, &root));
            }
            continue;
        };
        let Some(validator) = &input.validator else {
            continue;
        };
        let value: Cow<'_, Value> = if view.is_merged() {
            Cow::Owned(view.to_json())
        } else {
            Cow::Borrowed(view.value())
        };
        let (errors, first_only_shown) = errors_of(validator, &value, &input.schema);
        for error in errors {
            if found.len() > MAX_VIOLATIONS {
                return found;
            }
            found.extend(violations(&error, Some(&input.name), &value, &input.schema));
        }
        if first_only_shown {
            found.push(first_only());
        }
    }
    found
}

/// Checks the declared part of the data against the whole schema.
pub(crate) fn whole(
    validator: &Validator,
    json: &Value,
    inputs: &[Input],
    root: View<'_>,
) -> Vec<Violation> {
    let mut declared = Map::new();
    for input in inputs {
        if let Some(view) = root.get(&input.name) {
            declared.insert(input.name.clone(), view.to_json());
        }
    }
    let value = Value::Object(declared);
    let mut found = Vec::new();
    let (errors, first_only_shown) = errors_of(validator, &value, json);
    for error in errors {
        if found.len() > MAX_VIOLATIONS {
            break;
        }
        if let ValidationErrorKind::Required { property } = error.kind() {
            if let Some(name) = property
                .as_str()
                .filter(|_| error.instance_path().as_str() == "")
            {
                // The missing-input message, with a did-you-mean on the
                // host's keys.
                let schema = inputs
                    .iter()
                    .find(|input| input.name == name)
                    .map_or(Value::Bool(true), |input| input.schema.clone());
                found.push(missing(name, &schema, &Value::Null, &root));
                continue;
            }
        }
        found.extend(violations(&error, None, &value, json));
    }
    if first_only_shown {
        found.push(first_only());
    }
    found
}

/// A required input the data lacks; a data key close to its name (and
/// not declared itself) is suggested.
fn missing(name: &str, schema: &Value, json: &Value, root: &View<'_>) -> Violation {
    let declared: Vec<&str> = json
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let keys = root.keys();
    let near = closest(
        name,
        keys.iter().copied().filter(|key| !declared.contains(key)),
    );
    let mut message = format!("missing (declared {})", describe_schema(schema));
    if let Some(near) = near {
        message.push_str(&format!(
            "; the data has \"{near}\": did you mean \"{name}\"?"
        ));
    }
    Violation {
        path: name.to_string(),
        message,
    }
}

/// What one error of the validator means, at its path in the data.
/// `prefix` is the input the validated value sits under; `schema` is the
/// schema the error's schema path counts in.
fn violations(
    error: &ValidationError<'_>,
    prefix: Option<&str>,
    value: &Value,
    schema: &Value,
) -> Vec<Violation> {
    let (path, at) = data_path(prefix, error.instance_path().as_str(), value);
    let keyword_parent = parent_pointer(error.schema_path().as_str());
    let schema_here = schema_at(schema, keyword_parent);
    let one = |message: String| {
        vec![Violation {
            path: path.clone(),
            message,
        }]
    };
    match error.kind() {
        ValidationErrorKind::Type { kind } => one(format!(
            "expected {}, found {}",
            // The types in the order the schema writes them.
            schema_here
                .and_then(|here| here.get("type"))
                .map_or_else(|| type_kind(kind), |_| describe_types(schema_here)),
            show(at.unwrap_or(error.instance()))
        )),
        ValidationErrorKind::Enum { options } => one(format!(
            "found {}, expected one of {}",
            show(at.unwrap_or(error.instance())),
            list(options)
        )),
        ValidationErrorKind::Constant { expected_value } => one(format!(
            "found {}, expected {}",
            show(at.unwrap_or(error.instance())),
            show(expected_value)
        )),
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let declared = schema_here
                .and_then(|here| here.get("properties"))
                .and_then(|properties| properties.get(name))
                .map(describe_schema);
            vec![Violation {
                path: child(&path, name),
                message: match declared {
                    Some(declared) => format!("missing (declared {declared})"),
                    None => "missing (required)".to_string(),
                },
            }]
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let declared: Vec<&str> = schema_here
                .and_then(|here| here.get("properties"))
                .and_then(Value::as_object)
                .map(|properties| properties.keys().map(String::as_str).collect())
                .unwrap_or_default();
            unexpected
                .iter()
                .map(|key| {
                    let mut message = "not declared".to_string();
                    if let Some(near) = closest(key, declared.iter().copied()) {
                        message.push_str(&format!(": did you mean \"{}\"?", child(&path, near)));
                    } else if !declared.is_empty() {
                        message.push_str(&format!(" (declared: {})", declared.join(", ")));
                    }
                    Violation {
                        path: child(&path, key),
                        message,
                    }
                })
                .collect()
        }
        _ => one(error.to_string()),
    }
}

/// The data path of a JSON Pointer into `value` (`/labels/0` under
/// `issue` → `issue.labels[0]`), and the value there. A number is an index
/// only where the data holds a list.
fn data_path<'v>(
    prefix: Option<&str>,
    pointer: &str,
    value: &'v Value,
) -> (String, Option<&'v Value>) {
    let mut path = prefix.unwrap_or_default().to_string();
    let mut at = Some(value);
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        match at {
            Some(Value::Array(items)) => {
                let index = segment.parse::<usize>().ok();
                path.push_str(&format!("[{segment}]"));
                at = index.and_then(|index| items.get(index));
            }
            other => {
                path = child(&path, &segment);
                at = other.and_then(|value| value.get(&segment));
            }
        }
    }
    if path.is_empty() {
        path.push_str("(the data)");
    }
    (path, at)
}

/// `parent.name`, or `parent["odd name"]` when the name is not a plain word.
fn child(parent: &str, name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    match (parent.is_empty(), plain) {
        (true, true) => name.to_string(),
        (false, true) => format!("{parent}.{name}"),
        (_, false) => format!("{parent}[{}]", Value::String(name.to_string())),
    }
}

/// The schema at a schema path, following local references (`$ref:
/// "#/$defs/person"`) where the path goes through them.
fn schema_at<'s>(root: &'s Value, pointer: &str) -> Option<&'s Value> {
    let mut here = root;
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        let target = match (segment.as_str(), here.get("$ref")) {
            ("$ref", Some(Value::String(reference))) => root.pointer(reference.strip_prefix('#')?),
            _ => match here {
                Value::Array(items) => items.get(segment.parse::<usize>().ok()?),
                other => other.get(&segment),
            },
        };
        here = target?;
    }
    Some(here)
}

/// The pointer to the schema object holding a keyword's pointer.
fn parent_pointer(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |slash| &pointer[..slash])
}

fn type_kind(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(one) => one.to_string(),
        TypeKind::Multiple(set) => set
            .iter()
            .map(|one| one.to_string())
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

/// The `type` of a schema, in words: `string or null`.
fn describe_types(schema: Option<&Value>) -> String {
    let kind = schema.and_then(|schema| schema.get("type"));
    match kind {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any value".to_string(),
    }
}

/// What a schema declares, in a few words: `string`, `string or null`,
/// `one of "a", "b"`, `array of string`, `object`, `any value`.
pub(crate) fn describe_schema(schema: &Value) -> String {
    if let Some(options) = schema.get("enum") {
        return format!("one of {}", list(options));
    }
    if schema.get("type").is_none() {
        return "any value".to_string();
    }
    let kind = describe_types(Some(schema));
    match schema.get("items").and_then(|items| items.get("type")) {
        Some(_) if kind.starts_with("array") => {
            let items = schema
                .get("items")
                .map_or_else(String::new, describe_schema);
            format!("{kind} of {items}")
        }
        _ => kind,
    }
}

/// The values of a list, shown and joined: `"a", "b"`.
fn list(options: &Value) -> String {
    match options {
        Value::Array(values) => {
            let mut shown: Vec<String> = values.iter().take(MAX_LISTED).map(show).collect();
            if values.len() > MAX_LISTED {
                shown.push(format!("… ({} in all)", values.len()));
            }
            shown.join(", ")
        }
        other => show(other),
    }
}

/// A value as found in the data, in compact JSON, cut if long.
fn show(value: &Value) -> String {
    const MAX: usize = 60;
    let text = value.to_string();
    if text.chars().count() <= MAX {
        return text;
    }
    let cut: String = text.chars().take(MAX - 1).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_read_as_the_template_writes_them() {
        let value = json!({"labels": ["a", 5], "0": {"x y": 1}});
        assert_eq!(
            data_path(Some("issue"), "/labels/1", &value),
            ("issue.labels[1]".to_string(), Some(&json!(5)))
        );
        assert_eq!(
            data_path(Some("issue"), "/0/x y", &value).0,
            "issue.0[\"x y\"]"
        );
        assert_eq!(data_path(None, "", &value).0, "(the data)");
    }

    #[test]
    fn schemas_are_described_in_words() {
        assert_eq!(
            describe_schema(&json!({"type": ["string", "null"]})),
            "string or null"
        );
        assert_eq!(
            describe_schema(&json!({"type": "array", "items": {"type": "string"}})),
            "array of string"
        );
        assert_eq!(
            describe_schema(&json!({"enum": ["a", "b"]})),
            "one of \"a\", \"b\""
        );
        assert_eq!(describe_schema(&json!({})), "any value");
    }
}

//! The paths a template reads checked against the declared inputs, without
//! rendering: `issue.titel` where the schema closes `issue` to its declared
//! properties is a warning of `teleprompt check` (with the property it
//! likely meant), and a value the schema declares a mapping or list is
//! known to print as the engine's raw form.
//!
//! The walk follows the JSON Schema (Picoschema is converted first) the
//! way the data would: a key into `properties`, a list's elements into
//! `items`, a local `$ref` (`#/$defs/…`) to what it points at. It says
//! nothing where the schema leaves a value open, so that a warning is
//! always worth reading:
//!
//! - a key is undeclared only where its object lists `properties` and
//!   takes no others (`additionalProperties: false` or
//!   `unevaluatedProperties: false`, as every Picoschema object without a
//!   wildcard does) and has no `patternProperties`;
//! - a value typed `any` (no keyword), an open object, a wildcard's
//!   values, a combination (`allOf`, `anyOf`, `oneOf`, `if`, `not`), a
//!   remote `$ref` or a `$ref` with other keywords beside it, and a tuple's
//!   `prefixItems` are not looked into;
//! - a key read of a declared scalar (`issue.title.length`) is left to the
//!   render, which reports it with the data at hand.

use std::ops::Range;

use serde_json::{Map, Value};

use super::InputSchema;
use crate::analysis::{dotted, Inputs, Step};
use crate::diagnostics::closest;

/// Local `$ref`s followed in a row before the walk gives up (a chain of
/// references, or a cycle).
const MAX_REF_HOPS: usize = 32;

/// Keywords that make a value's shape depend on more than its
/// `properties` and `items`: the walk does not look into such a value.
const COMBINATIONS: [&str; 8] = [
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "dependentSchemas",
    "patternProperties",
    "propertyNames",
];

/// Keywords that may stand beside a `$ref` without changing what it
/// declares.
const ANNOTATIONS: [&str; 5] = ["$ref", "description", "title", "default", "$comment"];

/// A path the template reads that the schema does not declare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UndeclaredRead {
    /// The path up to its first undeclared key (`issue.titel`).
    pub path: String,
    /// Where the template first reads it, in the template text.
    pub span: Option<Range<usize>>,
    /// The declared path it likely meant (`issue.title`).
    pub meant: Option<String>,
    /// Whether the schema closes the object the key is missing from
    /// (`additionalProperties: false`, every Picoschema object without a
    /// wildcard): the data can never hold the path.
    pub closed: bool,
    /// Whether the template prints or walks the value (or something below
    /// it), rather than only testing it (`if x`, `x is defined`).
    pub used: bool,
}

impl InputSchema {
    /// The paths `inputs` reads that the schema does not declare, at their
    /// first undeclared key, in the order of the text. A top-level name
    /// `known` says exists anyway (a default, the prompt context) is not
    /// reported.
    pub(crate) fn undeclared_reads(
        &self,
        inputs: &Inputs,
        known: &dyn Fn(&str) -> bool,
    ) -> Vec<UndeclaredRead> {
        let root = &self.inner.json;
        let properties = root.get("properties").and_then(Value::as_object);
        let mut found = Vec::new();
        for (name, read) in inputs.fields() {
            let path = vec![Step::Key(name.to_string())];
            if self.declares(name) {
                if let Some(schema) = properties.and_then(|properties| properties.get(name)) {
                    walk(root, schema, read, &mut path.clone(), &mut found);
                }
            } else if !known(name) {
                found.push(UndeclaredRead {
                    path: name.to_string(),
                    span: read.first().cloned(),
                    meant: closest(name, self.names()).map(str::to_string),
                    closed: closes(root),
                    used: read.used(),
                });
            }
        }
        found.sort_by_key(|read| read.span.as_ref().map_or(usize::MAX, |span| span.start));
        found
    }

    /// Whether the schema declares the value at `path` a mapping or a list
    /// (`type: object` or `array`, or `properties` without a type).
    pub(crate) fn declares_structure(&self, path: &[Step]) -> bool {
        let root = &self.inner.json;
        let mut schema = Some(root);
        for step in path {
            schema =
                schema
                    .and_then(|schema| resolve(root, schema))
                    .and_then(|schema| match step {
                        Step::Key(key) => schema.get("properties")?.as_object()?.get(key),
                        Step::Each => schema.get("items").filter(|items| items.is_object()),
                    });
        }
        let Some(schema) = schema.and_then(|schema| resolve(root, schema)) else {
            return false;
        };
        let structure = |kind: &Value| matches!(kind.as_str(), Some("object" | "array"));
        match schema.get("type") {
            Some(Value::Array(kinds)) => {
                kinds.iter().any(structure)
                    && kinds
                        .iter()
                        .all(|kind| structure(kind) || kind.as_str() == Some("null"))
            }
            Some(kind) => structure(kind),
            None => schema.get("properties").is_some_and(Value::is_object),
        }
    }
}

/// Checks what `read` reads of a value declared by `schema`, at `path`.
fn walk(
    root: &Value,
    schema: &Value,
    read: &Inputs,
    path: &mut Vec<Step>,
    found: &mut Vec<UndeclaredRead>,
) {
    let Some(schema) = resolve(root, schema) else {
        return;
    };
    if COMBINATIONS
        .iter()
        .any(|keyword| schema.get(*keyword).is_some())
    {
        return;
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let closed = properties.is_some()
        && ["additionalProperties", "unevaluatedProperties"]
            .iter()
            .any(|keyword| schema.get(*keyword) == Some(&Value::Bool(false)));
    for (key, inner) in read.fields() {
        path.push(Step::Key(key.to_string()));
        match properties.and_then(|properties| properties.get(key)) {
            Some(declared) => walk(root, declared, inner, path, found),
            None if closed => found.push(undeclared(path, inner, properties)),
            None => {}
        }
        path.pop();
    }
    if let (Some(each), Some(items)) = (read.items(), schema.get("items")) {
        if items.is_object() {
            path.push(Step::Each);
            walk(root, items, each, path, found);
            path.pop();
        }
    }
}

/// The warning's content for the undeclared key at the end of `path`.
fn undeclared(
    path: &[Step],
    read: &Inputs,
    declared: Option<&Map<String, Value>>,
) -> UndeclaredRead {
    let meant = match (path.split_last(), declared) {
        (Some((Step::Key(key), parent)), Some(declared)) => {
            closest(key, declared.keys().map(String::as_str)).map(|near| {
                let mut meant = parent.to_vec();
                meant.push(Step::Key(near.to_string()));
                dotted(&meant)
            })
        }
        _ => None,
    };
    UndeclaredRead {
        path: dotted(path),
        span: read.first().cloned(),
        meant,
        closed: true,
        used: read.used(),
    }
}

/// Whether `schema` takes no keys besides its `properties`.
fn closes(schema: &Value) -> bool {
    ["additionalProperties", "unevaluatedProperties"]
        .iter()
        .any(|keyword| schema.get(*keyword) == Some(&Value::Bool(false)))
        && !COMBINATIONS
            .iter()
            .any(|keyword| schema.get(*keyword).is_some())
}

/// `schema` with local `$ref`s followed; `None` where the walk cannot tell
/// what it declares (a remote or broken reference, one with other keywords
/// beside it, a long chain).
fn resolve<'s>(root: &'s Value, schema: &'s Value) -> Option<&'s Value> {
    let mut schema = schema;
    for _ in 0..MAX_REF_HOPS {
        let Some(reference) = schema.get("$ref") else {
            return schema.is_object().then_some(schema);
        };
        let beside = schema
            .as_object()
            .is_some_and(|map| map.keys().any(|key| !ANNOTATIONS.contains(&key.as_str())));
        if beside {
            return None;
        }
        let pointer = reference.as_str()?.strip_prefix('#')?;
        schema = if pointer.is_empty() {
            root
        } else {
            root.pointer(pointer)?
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(name: &str) -> Step {
        Step::Key(name.to_string())
    }

    fn reads(paths: &[&[Step]]) -> Inputs {
        let mut inputs = Inputs::default();
        for (at, path) in paths.iter().enumerate() {
            inputs.add_at(path, at * 10..at * 10 + 5, true);
        }
        inputs
    }

    #[test]
    fn closed_objects_refs_and_items_are_followed() {
        let schema = InputSchema::new(&json!({
            "type": "object",
            "$defs": {"label": {"type": "object", "properties": {"name": {}}, "additionalProperties": false}},
            "properties": {
                "issue": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "title": {"type": "string"},
                        "labels": {"type": "array", "items": {"$ref": "#/$defs/label"}},
                        "extra": {"type": "object"},
                    },
                },
                "open": {"type": "object", "properties": {"a": {}}},
                "loop": {"$ref": "#/properties/loop"},
            },
        }))
        .unwrap();
        let inputs = reads(&[
            &[key("issue"), key("titel")],
            &[key("issue"), key("labels"), Step::Each, key("nme")],
            &[key("issue"), key("extra"), key("anything")],
            &[key("open"), key("b")],
            &[key("loop"), key("x")],
            &[key("isue")],
        ]);
        let found = schema.undeclared_reads(&inputs, &|_| false);
        assert_eq!(
            found,
            [
                UndeclaredRead {
                    path: "issue.titel".into(),
                    span: Some(0..5),
                    meant: Some("issue.title".into()),
                    closed: true,
                    used: false,
                },
                UndeclaredRead {
                    path: "issue.labels[].nme".into(),
                    span: Some(10..15),
                    meant: Some("issue.labels[].name".into()),
                    closed: true,
                    used: false,
                },
                UndeclaredRead {
                    path: "isue".into(),
                    span: Some(50..55),
                    meant: Some("issue".into()),
                    closed: false,
                    used: false,
                },
            ]
        );
        assert!(schema.declares_structure(&[key("issue")]));
        assert!(schema.declares_structure(&[key("issue"), key("labels"), Step::Each]));
        assert!(!schema.declares_structure(&[key("issue"), key("title")]));
        assert!(!schema.declares_structure(&[key("loop")]));
    }

    #[test]
    fn picoschema_objects_are_closed_unless_wildcard() {
        let schema = InputSchema::new(&json!({
            "issue?": {"title": "string"},
            "meta": {"(*)": "string"},
        }))
        .unwrap();
        let inputs = reads(&[&[key("issue"), key("titel")], &[key("meta"), key("x")]]);
        let found = schema.undeclared_reads(&inputs, &|_| false);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "issue.titel");
        assert!(schema.declares_structure(&[key("issue")]));
    }
}

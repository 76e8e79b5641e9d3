//! Declared inputs: front matter `input.schema`, in Dotprompt's Picoschema
//! or as JSON Schema, and the check of a render's data against it.
//!
//! A schema is read once, when the prompt loads: Picoschema is turned into
//! JSON Schema ([`picoschema`]), and each declared input gets its own
//! compiled validator, so a render checks the values the prompt declares,
//! borrowed from the data, and nothing else (the host's other keys and
//! the prompt context's namespaces are not inputs).
//!
//! ```
//! use teleprompt::{LoadOptions, Prompt};
//! use serde_json::json;
//!
//! let source = "---\nsyntax: jinja\ninput:\n  schema:\n    name: string\n    tone?(enum): [warm, dry]\n---\nHi {{ name }}";
//! let prompt = Prompt::from_source("greet.md", source, &LoadOptions::default())?;
//! assert_eq!(prompt.render(json!({"name": "Ada"}))?.text(), "Hi Ada");
//!
//! let error = prompt.render(json!({"name": 5, "tone": "loud"})).unwrap_err();
//! assert_eq!(error.class(), teleprompt::ErrorClass::Input);
//! assert!(error.message().contains("name: expected string, found 5"));
//! # Ok::<(), teleprompt::Error>(())
//! ```

mod paths;
pub mod picoschema;
mod validate;

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

pub use validate::{Violation, MAX_VIOLATIONS};

/// The keywords that mark `input.schema` as JSON Schema rather than
/// Picoschema (a Picoschema field is never named like them: `type` and
/// `properties` would be odd input names, and Dotprompt reads them so too).
const JSON_SCHEMA_MARKERS: [&str; 7] = [
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "properties",
    "allOf",
    "anyOf",
];

/// The top-level keywords a JSON Schema may use for its inputs to be
/// checked one by one; any other keyword makes the whole declared part
/// of the data be checked at once.
const SPLITTABLE: [&str; 12] = [
    "$schema",
    "$id",
    "$defs",
    "definitions",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "title",
    "description",
    "default",
    "$comment",
];

/// A prompt's declared inputs, ready to check data against.
#[derive(Clone)]
pub struct InputSchema {
    inner: Arc<Inner>,
}

struct Inner {
    /// The schema as JSON Schema (Picoschema converted).
    json: Value,
    /// Whether it was written in Picoschema.
    picoschema: bool,
    /// The declared inputs, in the order written.
    inputs: Vec<validate::Input>,
    /// A validator of the whole schema, when its top level uses keywords
    /// beyond `properties` and `required` (`allOf`, `if`, …).
    whole: Option<jsonschema::Validator>,
    /// The schema's `default` values, as nested maps.
    defaults: Option<Value>,
}

impl fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputSchema")
            .field("json", &self.inner.json)
            .field("picoschema", &self.inner.picoschema)
            .finish_non_exhaustive()
    }
}

impl InputSchema {
    /// Reads `input.schema`: JSON Schema when its top level has `type`,
    /// `properties`, `$schema` (…), Picoschema otherwise (a mapping, or the
    /// whole input as one type: `any`). The error says
    /// what is wrong with the schema.
    pub fn new(schema: &Value) -> Result<InputSchema, String> {
        let (json, picoschema) = match schema {
            Value::Object(map) if is_json_schema(map) => {
                let mut json = map.clone();
                if !json.contains_key("type") && json.contains_key("properties") {
                    // As Dotprompt: `properties` alone means an object.
                    json.insert("type".into(), Value::String("object".into()));
                }
                (Value::Object(json), false)
            }
            Value::Object(_) | Value::String(_) => (picoschema::to_json_schema(schema)?, true),
            other => {
                let found = crate::data::describe(other);
                return Err(format!(
                    "`input.schema` must be a mapping (Picoschema or JSON Schema) or one Picoschema type, found {found}"
                ));
            }
        };
        match json.get("type") {
            Some(Value::String(kind)) if kind == "object" => {}
            None => {}
            Some(other) => {
                return Err(format!(
                    "`input.schema` declares the data as a whole, which is always an object: \
                     its `type` must be \"object\", found {other}"
                ))
            }
        }
        let whole_validator = validate::compile(&json)
            .map_err(|message| format!("`input.schema` is not a valid JSON Schema: {message}"))?;
        let Value::Object(top) = &json else {
            return Err("`input.schema` must be a mapping".into());
        };
        let splittable = top.keys().all(|key| SPLITTABLE.contains(&key.as_str()))
            && !matches!(top.get("additionalProperties"), Some(Value::Object(_)));
        let inputs = validate::inputs(top);
        let splittable = splittable && validate::all_compiled(&inputs);
        let defaults = defaults_of(&json);
        Ok(InputSchema {
            inner: Arc::new(Inner {
                picoschema,
                inputs,
                whole: (!splittable).then_some(whole_validator),
                defaults,
                json,
            }),
        })
    }

    /// The schema as JSON Schema (a Picoschema converted).
    pub fn json_schema(&self) -> &Value {
        &self.inner.json
    }

    /// Whether the schema was written in Picoschema.
    pub fn is_picoschema(&self) -> bool {
        self.inner.picoschema
    }

    /// Whether `name` is a declared input (at the top level).
    pub fn declares(&self, name: &str) -> bool {
        self.inner.inputs.iter().any(|input| input.name == name)
    }

    /// The declared top-level inputs' names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.inner.inputs.iter().map(|input| input.name.as_str())
    }

    /// The schema's `default` values, nested as the data is.
    pub fn defaults(&self) -> Option<&Value> {
        self.inner.defaults.as_ref()
    }

    /// Every way `root` (the data, defaults applied) does not fit, up to
    /// [`MAX_VIOLATIONS`] (one more when there are more).
    pub fn check(&self, root: crate::data::View<'_>) -> Vec<Violation> {
        match &self.inner.whole {
            None => validate::each_input(&self.inner.inputs, &self.inner.json, root),
            Some(whole) => validate::whole(whole, &self.inner.json, &self.inner.inputs, root),
        }
    }
}

impl InputSchema {
    /// Warnings for data keys that look like a misspelled optional input
    /// (`tnoe` when `tone?` is declared and absent): not errors, since the
    /// host's data may hold keys of its own.
    pub fn near_misses(&self, root: crate::data::View<'_>) -> Vec<String> {
        let inputs = &self.inner.inputs;
        let absent: Vec<&str> = inputs
            .iter()
            .filter(|input| !input.required && root.get(&input.name).is_none())
            .map(|input| input.name.as_str())
            .collect();
        if absent.is_empty() {
            return Vec::new();
        }
        root.keys()
            .into_iter()
            .filter(|key| !self.declares(key))
            .filter_map(|key| {
                crate::diagnostics::closest(key, absent.iter().copied()).map(|near| {
                    format!(
                        "the data has \"{key}\", which the prompt does not declare, and lacks \
                         the optional input \"{near}\": did you mean \"{near}\"?"
                    )
                })
            })
            .collect()
    }
}

fn is_json_schema(map: &Map<String, Value>) -> bool {
    let typed = matches!(
        map.get("type"),
        Some(Value::String(kind))
            if picoschema::SCALAR_TYPES.contains(&kind.as_str()) || kind == "object" || kind == "array"
    );
    typed
        || JSON_SCHEMA_MARKERS
            .iter()
            .any(|marker| match map.get(*marker) {
                Some(Value::Object(_)) => true,
                Some(value) => marker.starts_with('$') || value.is_array(),
                None => false,
            })
}

/// The `default`s of an object schema's properties, nested: a property
/// with its own `default` gives it; an object property without one gives
/// the defaults of its own properties.
fn defaults_of(schema: &Value) -> Option<Value> {
    let properties = schema.get("properties")?.as_object()?;
    let mut out = Map::new();
    for (name, property) in properties {
        if let Some(default) = property.get("default") {
            out.insert(name.clone(), default.clone());
        } else if let Some(nested) = defaults_of(property) {
            out.insert(name.clone(), nested);
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_form_is_told_by_the_top_level() {
        let pico = InputSchema::new(&json!({"name": "string"})).unwrap();
        assert!(pico.is_picoschema());
        let json_schema = InputSchema::new(&json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
        }))
        .unwrap();
        assert!(!json_schema.is_picoschema());
        let properties_only = InputSchema::new(&json!({"properties": {"a": {}}})).unwrap();
        assert_eq!(properties_only.json_schema()["type"], json!("object"));
        // A Picoschema input may be called `type` if it is not a type name.
        assert!(InputSchema::new(&json!({"type(enum)": ["a"]}))
            .unwrap()
            .is_picoschema());
    }

    #[test]
    fn bad_schemas_are_refused() {
        let error =
            InputSchema::new(&json!({"type": "object", "properties": {"a": {"type": "strin"}}}))
                .unwrap_err();
        assert!(
            error.starts_with("`input.schema` is not a valid JSON Schema"),
            "{error}"
        );
        assert!(InputSchema::new(&json!({"type": "string"}))
            .unwrap_err()
            .contains("must be \"object\""));
        assert!(InputSchema::new(&json!(["a"])).is_err());
    }

    #[test]
    fn defaults_nest() {
        let schema = InputSchema::new(&json!({
            "type": "object",
            "properties": {
                "tone": {"type": "string", "default": "warm"},
                "user": {"type": "object", "properties": {"lang": {"default": "en"}}},
                "plain": {"type": "string"},
            },
        }))
        .unwrap();
        assert_eq!(
            schema.defaults(),
            Some(&json!({"tone": "warm", "user": {"lang": "en"}}))
        );
    }
}

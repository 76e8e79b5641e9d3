//! Dotprompt's Picoschema turned into JSON Schema, by the rules of the
//! `dotprompt` npm package (1.x):
//!
//! - a field is `name: TYPE` or `name: TYPE, description`, with the
//!   scalar types `string`, `number`, `integer`, `boolean`, `null` and
//!   `any` (no `type` at all);
//! - `name?` makes the field optional and nullable (`[TYPE, "null"]`; an
//!   optional enum gains `null` among its values);
//! - `name(array): ITEM`, `name(object): {…}`, `name(enum): [a, b]`, each
//!   with an optional description: `name(array, the tags): string`;
//! - a nested mapping is an object; every field of an object is required
//!   unless marked `?`, and no other key is allowed unless the object has
//!   a wildcard `(*): TYPE`, which then types the other keys.
//!
//! Named schemas (a type name Dotprompt would ask its host to resolve) are
//! not supported: an unknown type is an error.

use serde_json::{json, Map, Value};

use crate::data::describe;
use crate::diagnostics::closest;

/// The scalar types, as Picoschema writes them.
pub const SCALAR_TYPES: [&str; 6] = ["any", "boolean", "integer", "null", "number", "string"];

/// The types written in parentheses after a field name.
const PAREN_TYPES: [&str; 3] = ["array", "object", "enum"];

/// The key that types the keys an object does not name.
const WILDCARD: &str = "(*)";

/// Nesting deeper than this is refused (a schema is written by hand).
const MAX_DEPTH: usize = 64;

/// A Picoschema mapping (the whole `input.schema`) as a JSON Schema.
/// The error names the field (`issue.kind`) and what is wrong.
pub fn to_json_schema(schema: &Value) -> Result<Value, String> {
    match schema {
        Value::Object(fields) => object(fields, "", 0),
        // The whole input as one type (`schema: any`, `schema: string, the
        // topic`), as Dotprompt reads it; a name no scalar type has would
        // be a schema the host registered (Genkit's `defineSchema`).
        Value::String(text) => scalar(text, "input.schema").map_err(|message| {
            match SCALAR_TYPES.contains(&split_description(text).0) {
                true => message,
                false => format!(
                    "{message}; a named schema (one the host registers, as Genkit's \
                     defineSchema) is not supported"
                ),
            }
        }),
        other => Err(format!(
            "a Picoschema is a mapping of input names to types, found {}",
            describe(other)
        )),
    }
}

/// `path` with `name` appended, for error messages.
fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// Any Picoschema value: a type string or a mapping of fields.
fn value(schema: &Value, path: &str, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!("`{path}` is nested more than {MAX_DEPTH} deep"));
    }
    match schema {
        Value::String(text) => scalar(text, path),
        Value::Object(fields) => object(fields, path, depth),
        other => Err(format!(
            "`{}` must be a type (such as `string`) or a mapping of fields, found {}",
            if path.is_empty() {
                "input.schema"
            } else {
                path
            },
            describe(other)
        )),
    }
}

/// `TYPE` or `TYPE, description`.
fn scalar(text: &str, path: &str) -> Result<Value, String> {
    let (name, description) = split_description(text);
    if !SCALAR_TYPES.contains(&name) {
        let mut message = format!(
            "`{path}` has the unknown type \"{name}\" (Picoschema types: {})",
            SCALAR_TYPES.join(", ")
        );
        if PAREN_TYPES.contains(&name) {
            message.push_str(&format!("; write `{path}({name}): …`"));
        } else if let Some(near) = closest(name, SCALAR_TYPES) {
            message.push_str(&format!("; did you mean \"{near}\"?"));
        }
        return Err(message);
    }
    let mut out = Map::new();
    if name != "any" {
        out.insert("type".into(), Value::String(name.to_string()));
    }
    if let Some(description) = description {
        out.insert("description".into(), Value::String(description.to_string()));
    }
    Ok(Value::Object(out))
}

/// Splits `TYPE, description` at its first comma.
fn split_description(text: &str) -> (&str, Option<&str>) {
    match text.split_once(',') {
        Some((name, description)) => (name.trim(), Some(description.trim_start())),
        None => (text.trim(), None),
    }
}

/// A mapping of fields: an object schema.
fn object(fields: &Map<String, Value>, path: &str, depth: usize) -> Result<Value, String> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut additional = Value::Bool(false);
    for (key, schema) in fields {
        if key == WILDCARD {
            additional = value(schema, &join(path, key), depth + 1)?;
            continue;
        }
        let field = Field::parse(key, path)?;
        let here = join(path, field.name);
        let mut property = match field.kind {
            None => {
                let mut property = value(schema, &here, depth + 1)?;
                if field.optional {
                    nullable(&mut property);
                }
                property
            }
            Some("array") => {
                let items = value(schema, &format!("{here}[]"), depth + 1)?;
                let kind = if field.optional {
                    json!(["array", "null"])
                } else {
                    json!("array")
                };
                json!({"type": kind, "items": items})
            }
            Some("object") => {
                let Value::Object(inner) = schema else {
                    return Err(format!(
                        "`{here}(object)` must be a mapping of fields, found {}",
                        describe(schema)
                    ));
                };
                let mut property = object(inner, &here, depth + 1)?;
                if field.optional {
                    nullable(&mut property);
                }
                property
            }
            Some("enum") => {
                let Value::Array(values) = schema else {
                    return Err(format!(
                        "`{here}(enum)` must be a list of the allowed values, found {}",
                        describe(schema)
                    ));
                };
                let mut values = values.clone();
                if field.optional && !values.contains(&Value::Null) {
                    values.push(Value::Null);
                }
                json!({"enum": values})
            }
            Some(other) => {
                let mut message = format!(
                    "`{key}`: the type in parentheses must be array, object or enum, found \"{other}\""
                );
                if let Some(near) = closest(other, PAREN_TYPES) {
                    message.push_str(&format!("; did you mean \"{near}\"?"));
                }
                return Err(message);
            }
        };
        if let (Some(description), Value::Object(map)) = (field.description, &mut property) {
            map.insert("description".into(), Value::String(description.to_string()));
        }
        if !field.optional {
            required.push(Value::String(field.name.to_string()));
        }
        properties.insert(field.name.to_string(), property);
    }
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    out.insert("additionalProperties".into(), additional);
    Ok(Value::Object(out))
}

/// Adds `null` to a schema's single `type` (an optional field).
fn nullable(property: &mut Value) {
    if let Some(kind) = property.get_mut("type") {
        if let Value::String(name) = kind {
            *kind = json!([name.clone(), "null"]);
        }
    }
}

/// A field key: `name`, `name?`, `name(TYPE)`, `name?(TYPE, description)`.
struct Field<'k> {
    name: &'k str,
    optional: bool,
    kind: Option<&'k str>,
    description: Option<&'k str>,
}

impl<'k> Field<'k> {
    fn parse(key: &'k str, path: &str) -> Result<Field<'k>, String> {
        let (head, paren) = match key.split_once('(') {
            Some((head, rest)) => {
                let Some(inside) = rest.strip_suffix(')') else {
                    return Err(format!(
                        "`{}`: the parenthesis after the field name is not closed",
                        join(path, key)
                    ));
                };
                (head, Some(inside))
            }
            None => (key, None),
        };
        let head = head.trim();
        let (name, optional) = match head.strip_suffix('?') {
            Some(name) => (name, true),
            None => (head, false),
        };
        if name.is_empty() {
            return Err(format!(
                "`{}`: a field needs a name before `?` or `(`",
                join(path, key)
            ));
        }
        let (kind, description) = match paren {
            Some(inside) => {
                let (kind, description) = split_description(inside);
                (Some(kind), description)
            }
            None => (None, None),
        };
        Ok(Field {
            name,
            optional,
            kind,
            description,
        })
    }
}

#[cfg(test)]
mod tests {
    //! Cases from the Picoschema reference (google.github.io/dotprompt)
    //! and the `dotprompt` package's spec tests (`picoschema` suite).
    use super::*;

    fn convert(yaml: &str) -> Value {
        let schema = crate::data::parse_yaml(yaml).expect("yaml");
        to_json_schema(&schema).unwrap_or_else(|error| panic!("{error}"))
    }

    fn fails(yaml: &str) -> String {
        let schema = crate::data::parse_yaml(yaml).expect("yaml");
        to_json_schema(&schema).expect_err("should fail")
    }

    #[test]
    fn scalars_with_and_without_description() {
        assert_eq!(
            convert("a: string\nb: number, the description\nc: number,no space, two, commas"),
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "b": {"type": "number", "description": "the description"},
                    "c": {"type": "number", "description": "no space, two, commas"},
                },
                "required": ["a", "b", "c"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn optional_fields_are_nullable_and_not_required() {
        assert_eq!(
            convert("req: string, required field\nnonreq?: boolean, optional field"),
            json!({
                "type": "object",
                "properties": {
                    "req": {"type": "string", "description": "required field"},
                    "nonreq": {"type": ["boolean", "null"], "description": "optional field"},
                },
                "required": ["req"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn any_has_no_type() {
        assert_eq!(
            convert("x?: any, anything")["properties"]["x"],
            json!({"description": "anything"})
        );
    }

    #[test]
    fn arrays_of_scalars_and_objects() {
        let schema =
            convert("tags(array, the tags): string\nitems?(array):\n  id: string\n  qty?: integer");
        assert_eq!(
            schema["properties"]["tags"],
            json!({"type": "array", "items": {"type": "string"}, "description": "the tags"})
        );
        assert_eq!(
            schema["properties"]["items"],
            json!({
                "type": ["array", "null"],
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "qty": {"type": ["integer", "null"]},
                    },
                    "required": ["id"],
                    "additionalProperties": false,
                },
            })
        );
        assert_eq!(schema["required"], json!(["tags"]));
    }

    #[test]
    fn enums_and_optional_enums() {
        let schema = convert("kind(enum, the kind): [a, b]\nsize?(enum): [S, M]");
        assert_eq!(
            schema["properties"]["kind"],
            json!({"enum": ["a", "b"], "description": "the kind"})
        );
        assert_eq!(
            schema["properties"]["size"],
            json!({"enum": ["S", "M", null]})
        );
    }

    #[test]
    fn nested_objects_and_wildcards() {
        let schema = convert(
            "issue:\n  title: string\n  meta(object, extra fields):\n    (*): any\n  opt?(object):\n    x: string",
        );
        let issue = &schema["properties"]["issue"];
        assert_eq!(issue["required"], json!(["title", "meta"]));
        assert_eq!(issue["additionalProperties"], json!(false));
        assert_eq!(
            issue["properties"]["meta"],
            json!({
                "type": "object",
                "properties": {},
                "additionalProperties": {},
                "description": "extra fields",
            })
        );
        assert_eq!(
            issue["properties"]["opt"]["type"],
            json!(["object", "null"])
        );
        let wildcard = convert("(*): string");
        assert_eq!(wildcard["additionalProperties"], json!({"type": "string"}));
    }

    #[test]
    fn the_reference_example_converts() {
        // The "full example" of the Picoschema reference page.
        let schema = convert(
            "product:\n  id: string, Unique identifier\n  description?: string\n  price: number\n  inStock: integer\n  isActive: boolean\n  category(enum, Main category): [ELECTRONICS, CLOTHING]\n  tags(array, List of tags): string\n  primaryImage:\n    url: string\n    altText: string\n  attributes(object, Custom attributes):\n    (*): any\n  variants?(array, variants):\n    id: string\n    name: string\n    price: number",
        );
        let product = &schema["properties"]["product"];
        assert_eq!(
            product["required"],
            json!([
                "id",
                "price",
                "inStock",
                "isActive",
                "category",
                "tags",
                "primaryImage",
                "attributes"
            ])
        );
        assert_eq!(
            product["properties"]["variants"]["type"],
            json!(["array", "null"])
        );
    }

    #[test]
    fn mistakes_are_named() {
        assert_eq!(
            fails("name: strng"),
            "`name` has the unknown type \"strng\" (Picoschema types: any, boolean, integer, \
             null, number, string); did you mean \"string\"?"
        );
        assert!(fails("tags: array").contains("write `tags(array): …`"));
        assert!(fails("kind(enmu): [a]").contains("did you mean \"enum\"?"));
        assert!(fails("kind(enum): a").contains("must be a list of the allowed values"));
        assert!(fails("n: 5").contains("found a number"));
        assert!(fails("a(array: string").contains("not closed"));
        assert!(fails("issue:\n  x: Strin").starts_with("`issue.x` has the unknown type"));
    }
}

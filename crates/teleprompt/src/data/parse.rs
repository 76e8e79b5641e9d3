//! JSON and YAML text into a [`Value`], with one rule serde_json's own
//! `Value` lacks: a key may appear once in a mapping. serde_json keeps the
//! last of two equal keys without a word; YAML forbids them. Both formats
//! go through the same visitor here, so both refuse a duplicate key with
//! the same message, naming the mapping's path in the data.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use serde_saphyr::budget::BudgetBreach;

/// Parses JSON text (a single value, whitespace around it).
pub(crate) fn json(text: &str) -> Result<Value, serde_json::Error> {
    let failed = Failed::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Node::root(&failed).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Parses one YAML document with `options` (whose duplicate-key policy
/// should be `Error`: the YAML reader knows merge keys, and where the
/// duplicate key is). On failure: the line, the column and the message
/// (a duplicate key's names its mapping, as a JSON duplicate's does).
pub(crate) fn yaml(
    text: &str,
    options: serde_saphyr::Options,
) -> Result<Value, (usize, usize, String)> {
    let failed = Failed::default();
    serde_saphyr::with_deserializer_from_str_with_options(text, options, |deserializer| {
        Node::root(&failed).deserialize(deserializer)
    })
    .map_err(|error| {
        let (line, column) = error
            .location()
            .map_or((1, 1), |at| (at.line() as usize, at.column() as usize));
        let message = match innermost(&error) {
            serde_saphyr::Error::DuplicateMappingKey { key: Some(key), .. } => {
                let place = failed.0.borrow_mut().take().unwrap_or_default();
                duplicate_key(&place, key)
            }
            serde_saphyr::Error::AliasReplayLimitExceeded { .. }
            | serde_saphyr::Error::Budget {
                breach: BudgetBreach::RecordedAnchorEvents { .. },
                ..
            } => format!(
                "its aliases expand to more than {} values beyond the file's own (an alias bomb?)",
                super::YAML_ALIAS_VALUES
            ),
            serde_saphyr::Error::Budget {
                breach: BudgetBreach::ScalarBytes { .. } | BudgetBreach::RecordedAnchorBytes { .. },
                ..
            } => format!(
                "its aliases expand to more than {} of text beyond the file's own (an alias bomb?)",
                crate::limits::describe_bytes(super::YAML_ALIAS_BYTES)
            ),
            _ => {
                let message = error.without_snippet().to_string();
                let message = message.lines().next().unwrap_or("invalid YAML");
                // The position is reported separately, counted in the real file.
                match message.rfind(" at line ") {
                    Some(cut) => message[..cut].to_string(),
                    None => message.to_string(),
                }
            }
        };
        (
            line.max(1),
            column.max(1),
            format!("invalid YAML: {message}"),
        )
    })
}

/// The error a YAML error wraps (in an alias, with a snippet), if any.
fn innermost(mut error: &serde_saphyr::Error) -> &serde_saphyr::Error {
    while let serde_saphyr::Error::AliasError { error: inner, .. }
    | serde_saphyr::Error::WithSnippet { error: inner, .. } = error
    {
        error = inner;
    }
    error
}

/// The path of the innermost mapping whose next key failed to read (the
/// YAML reader's duplicate key), kept for the message.
#[derive(Default)]
struct Failed(RefCell<Option<String>>);

impl Failed {
    fn mark(&self, place: &Place<'_>) {
        let mut failed = self.0.borrow_mut();
        if failed.is_none() {
            *failed = Some(place.to_string());
        }
    }
}

/// Where a value sits in the document, for messages: a chain of keys and
/// indexes kept on the stack, so parsing allocates nothing for it.
#[derive(Clone, Copy)]
enum Place<'a> {
    Root,
    Key(&'a Place<'a>, &'a str),
    Index(&'a Place<'a>, usize),
}

impl fmt::Display for Place<'_> {
    /// `issue.labels[0]`, as a template author writes the path.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Root => Ok(()),
            Place::Key(Place::Root, key) => f.write_str(key),
            Place::Key(parent, key) => write!(f, "{parent}.{key}"),
            Place::Index(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

/// The message for a key seen twice in the mapping at `place` (the path
/// text, empty at the top).
fn duplicate_key(place: &str, key: &str) -> String {
    if place.is_empty() {
        format!("duplicate key \"{key}\" (a key may appear once in a mapping)")
    } else {
        format!("duplicate key \"{key}\" in {place} (a key may appear once in a mapping)")
    }
}

/// Builds the value at one place of the document.
struct Node<'a> {
    place: Place<'a>,
    failed: &'a Failed,
}

impl<'a> Node<'a> {
    fn root(failed: &'a Failed) -> Node<'a> {
        Node {
            place: Place::Root,
            failed,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-shaped value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_i128<E: de::Error>(self, value: i128) -> Result<Value, E> {
        Number::deserialize(de::value::I128Deserializer::new(value)).map(Value::Number)
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<Value, E> {
        Number::deserialize(de::value::U128Deserializer::new(value)).map(Value::Number)
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        // JSON has no NaN or infinity (YAML's `.nan`, `.inf`): null, as
        // serde_json's own `Value` makes them.
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Node {
            place: Place::Index(&self.place, items.len()),
            failed: self.failed,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        loop {
            let key = match access.next_key_seed(Key) {
                Ok(Some(key)) => key,
                Ok(None) => break,
                Err(error) => {
                    self.failed.mark(&self.place);
                    return Err(error);
                }
            };
            match map.entry(key) {
                Entry::Occupied(entry) => {
                    let place = self.place.to_string();
                    return Err(de::Error::custom(duplicate_key(&place, entry.key())));
                }
                Entry::Vacant(entry) => {
                    let value = access.next_value_seed(Node {
                        place: Place::Key(&self.place, entry.key()),
                        failed: self.failed,
                    })?;
                    entry.insert(value);
                }
            }
        }
        Ok(Value::Object(map))
    }
}

/// A mapping key, as text.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for Key {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E>(self, key: &str) -> Result<String, E> {
        Ok(key.to_string())
    }

    fn visit_string<E>(self, key: String) -> Result<String, E> {
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_builds_what_serde_json_builds() {
        let text =
            r#"{"a": [1, -2, 3.5, 18446744073709551615, "x", null, true, {}], "b": {"c": []}}"#;
        assert_eq!(
            json(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert!(json("{} {}").is_err(), "one value only");
    }

    #[test]
    fn duplicate_keys_name_their_mapping() {
        let error = json("{\"a\": 1,\n \"a\": 2}").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("duplicate key \"a\" (a key may"),
            "{error}"
        );
        assert_eq!(error.line(), 2);
        let error = json(r#"{"issue": {"labels": [{"name": 1, "name": 2}]}}"#).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("duplicate key \"name\" in issue.labels[0] (a key"),
            "{error}"
        );
        // Equal keys in different mappings are not duplicates.
        assert_eq!(
            json(r#"{"a": {"x": 1}, "b": {"x": 2}}"#).unwrap(),
            json!({"a": {"x": 1}, "b": {"x": 2}})
        );
    }
}

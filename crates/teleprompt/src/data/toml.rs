//! TOML text into a [`Value`]: a document is a table, so the data is
//! always a map. TOML's kinds map onto data's: strings, 64-bit integers,
//! booleans, arrays and tables as they are; a float as a JSON number (NaN
//! and the infinities, which data cannot hold, are an error at their
//! place); a date, a time or a date-time as its RFC 3339 text, as TOML
//! writes it (`1979-05-27T07:32:00Z`), which templates print and compare
//! as text. Tables keep their keys in the order written.
//!
//! The parser refuses a key defined twice (TOML's own rule) and nests at
//! most 80 levels (its recursion limit), so hostile text stops with an
//! error instead of a deep stack.

use serde_json::{Map, Number, Value};

/// A TOML text that is not data: the message and where (a byte range of
/// the text, where the parser names one).
pub(crate) struct TomlError {
    pub message: String,
    pub at: Option<usize>,
}

/// Parses `text`, building only the top-level keys `keep` accepts (the
/// others are left null, as the other formats leave them).
pub(crate) fn parse(text: &str, keep: Option<&dyn Fn(&str) -> bool>) -> Result<Value, TomlError> {
    let table: toml::Table = toml::from_str(text).map_err(|error| TomlError {
        message: error.message().trim_end().to_string(),
        at: error.span().map(|span| span.start),
    })?;
    let mut map = Map::with_capacity(table.len());
    for (key, value) in table {
        let value = match keep {
            Some(keep) if !keep(&key) => Value::Null,
            _ => convert(value).map_err(|message| TomlError {
                message: format!("{message} (under the key \"{key}\")"),
                at: None,
            })?,
        };
        map.insert(key, value);
    }
    Ok(Value::Object(map))
}

/// One TOML value as data.
fn convert(value: toml::Value) -> Result<Value, String> {
    Ok(match value {
        toml::Value::String(text) => Value::String(text),
        toml::Value::Integer(int) => Value::Number(int.into()),
        toml::Value::Float(float) => Value::Number(Number::from_f64(float).ok_or_else(|| {
            format!("the float {float} is not data: JSON holds no NaN or infinity")
        })?),
        toml::Value::Boolean(flag) => Value::Bool(flag),
        toml::Value::Datetime(when) => Value::String(when.to_string()),
        toml::Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(convert)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        toml::Value::Table(table) => {
            let mut map = Map::with_capacity(table.len());
            for (key, value) in table {
                map.insert(key, convert(value)?);
            }
            Value::Object(map)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Result<Value, String> {
        parse(text, None).map_err(|error| error.message)
    }

    #[test]
    fn kinds_map_onto_data() {
        let text = r#"
title = "Fix login"
count = 3
ratio = 0.5
draft = false
created = 1979-05-27T07:32:00Z
day = 1979-05-27
labels = ["bug", "auth"]

[issue]
id = "PROJ-42"
nested = { a = 1, b = [1, 2] }

[[comments]]
body = "first"
[[comments]]
body = "second"
"#;
        assert_eq!(
            read(text).unwrap(),
            json!({
                "title": "Fix login", "count": 3, "ratio": 0.5, "draft": false,
                "created": "1979-05-27T07:32:00Z", "day": "1979-05-27",
                "labels": ["bug", "auth"],
                "issue": {"id": "PROJ-42", "nested": {"a": 1, "b": [1, 2]}},
                "comments": [{"body": "first"}, {"body": "second"}]
            })
        );
        // Keys stay in the order written.
        let keys: Vec<String> = read("b = 1\na = 2\nc = 3")
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["b", "a", "c"]);
    }

    #[test]
    fn what_is_not_data_is_an_error() {
        assert!(read("x = nan").unwrap_err().contains("not data"));
        assert!(read("[t]\nx = [1, inf]").unwrap_err().contains("\"t\""));
        // A key twice, a syntax error, nesting past the parser's limit.
        assert!(parse("a = 1\na = 2", None).unwrap_err().at.is_some());
        assert!(parse("a = ", None).is_err());
        let deep = format!("a = {}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse(&deep, None).is_err());
        let deep = format!("a = {}1{}", "{b = ".repeat(10_000), "}".repeat(10_000));
        assert!(parse(&deep, None).is_err());
    }

    #[test]
    fn keys_not_kept_are_null() {
        let keep = |key: &str| key == "a";
        let value = parse("a = 1\nb = { c = nan }", Some(&keep)).ok().unwrap();
        assert_eq!(value, json!({"a": 1, "b": null}));
    }
}

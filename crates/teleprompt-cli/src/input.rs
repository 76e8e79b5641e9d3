//! Reading the data a render uses: `--data` files or stdin, and `--set`.

use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};
use teleprompt::data::{insert_dotted, parse_text, Format};
use teleprompt::{Data, Error, ErrorClass};

/// One `--set KEY=VALUE`.
#[derive(Clone, Debug)]
pub struct Assignment {
    key: String,
    value: Value,
}

/// Parses `KEY=VALUE`: VALUE as JSON when it parses, else as a string.
pub fn parse_assignment(text: &str) -> Result<Assignment, String> {
    let (key, raw) = text
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {text:?}"))?;
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(format!("the key in {text:?} is empty or has an empty part"));
    }
    let value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
    Ok(Assignment {
        key: key.to_string(),
        value,
    })
}

/// The render data: `--set` values over the `--data` document.
pub fn build_data(source: Option<&str>, sets: &[Assignment]) -> Result<Data, Error> {
    let document = match source {
        None => Value::Object(Map::new()),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|error| {
                    Error::new(
                        ErrorClass::Io,
                        format!("cannot read data from stdin: {error}"),
                    )
                })?;
            parse_text(&text, None, "<stdin>")?
        }
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|error| {
                Error::new(
                    ErrorClass::Io,
                    format!("cannot read the data file {path}: {error}"),
                )
            })?;
            parse_text(&text, Format::from_path(Path::new(path)), path)?
        }
    };
    if !document.is_object() {
        return Err(Error::new(
            ErrorClass::Input,
            format!(
                "the data must be a mapping of names to values, found {}",
                teleprompt::document::describe(&document)
            ),
        ));
    }
    if sets.is_empty() {
        return Ok(Data::new(document));
    }
    let mut overrides = Map::new();
    for set in sets {
        insert_dotted(&mut overrides, &set.key, set.value.clone(), true);
    }
    Ok(Data::new(Value::Object(overrides)).over(document))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn assignments_parse_json_or_take_text() {
        let set = parse_assignment("a.b=3").unwrap();
        assert_eq!((set.key.as_str(), set.value), ("a.b", json!(3)));
        assert_eq!(parse_assignment("t=Fix it").unwrap().value, json!("Fix it"));
        assert_eq!(
            parse_assignment("l=[1,\"x\"]").unwrap().value,
            json!([1, "x"])
        );
        assert_eq!(parse_assignment("e=").unwrap().value, json!(""));
        assert!(parse_assignment("novalue").is_err());
        assert!(parse_assignment("a..b=1").is_err());
    }

    #[test]
    fn sets_win_over_data_and_merge_into_it() {
        let sets = [
            parse_assignment("issue.title=New").unwrap(),
            parse_assignment("attempt=2").unwrap(),
        ];
        let data = build_data(None, &sets).unwrap();
        assert_eq!(
            data.root().to_json(),
            json!({"issue": {"title": "New"}, "attempt": 2})
        );
    }
}

//! Host-given maps made ready once, when the host sets them: dotted keys
//! expanded (Rapida's canonicalisation) and the root copy of the args with the
//! context's own names taken out.

use crate::data::describe;
use serde_json::{Map, Value};

use crate::data::insert_dotted;
use crate::diagnostics::{Error, ErrorClass};

/// Root names the prompt context owns, whether or not a build fills them.
/// A conversation arg with one of these names is readable only as `args.<name>`.
pub const RESERVED: &[&str] = &[
    "system",
    "run",
    "attempt",
    "assistant",
    "conversation",
    "session",
    "message",
    "args",
    "env",
    "files",
    "readme",
    "custom_rules",
];

/// Reserved names that hold a single value rather than a namespace object.
const VALUE_NAMES: &[&str] = &["attempt", "files", "readme", "custom_rules"];

/// The object inside `value`, or an `input` error naming `what`.
pub fn expect_object(value: Value, what: &str) -> Result<Map<String, Value>, Error> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(Error::new(
            ErrorClass::Input,
            format!(
                "{what} must be a JSON object (a map of names to values), not {}",
                describe(&other)
            ),
        )),
    }
}

/// Expands the top-level dotted keys of `map` (`"message.language"`) into
/// nested maps. Plain keys are kept first; dotted keys then fill in, in
/// their order, never overwriting a value that is already set. Each dotted
/// key that is dropped for that reason gives a warning naming `what`.
pub fn expand_dotted(map: Map<String, Value>, what: &str) -> (Map<String, Value>, Vec<String>) {
    if !map.keys().any(|key| key.contains('.')) {
        return (map, Vec::new());
    }
    let (dotted, plain): (Vec<_>, Vec<_>) = map.into_iter().partition(|(key, _)| key.contains('.'));
    let mut out: Map<String, Value> = plain.into_iter().collect();
    let mut warnings = Vec::new();
    for (key, value) in dotted {
        if let Some(taken) = taken_prefix(&out, &key) {
            warnings.push(format!(
                "key \"{key}\" in {what} is ignored: \"{taken}\" is already set"
            ));
            continue;
        }
        insert_dotted(&mut out, &key, value, false);
    }
    (out, warnings)
}

/// The part of `dotted` that already holds a value in `map` and so blocks
/// inserting it (the whole key, or a prefix holding a leaf), if any.
fn taken_prefix(map: &Map<String, Value>, dotted: &str) -> Option<String> {
    let mut current = map;
    let mut end = 0;
    let mut parts = dotted.split('.').peekable();
    while let Some(part) = parts.next() {
        end += part.len();
        let found = current.get(part)?;
        let last = parts.peek().is_none();
        match found {
            Value::Object(inner) if !last => current = inner,
            _ => return Some(dotted.get(..end).unwrap_or(dotted).to_string()),
        }
        end += 1; // the dot
    }
    None
}

/// The copy of the args that sits at the root: every arg except the
/// [`RESERVED`] names, plus one warning per arg that was held back.
pub fn root_args(args: &Map<String, Value>) -> (Map<String, Value>, Vec<String>) {
    let mut root = Map::new();
    let mut warnings = Vec::new();
    for (key, value) in args {
        if RESERVED.contains(&key.as_str()) {
            warnings.push(hidden_warning(key));
        } else {
            root.insert(key.clone(), value.clone());
        }
    }
    (root, warnings)
}

fn hidden_warning(name: &str) -> String {
    let what = if VALUE_NAMES.contains(&name) {
        "context value"
    } else {
        "namespace"
    };
    format!("arg \"{name}\" is hidden by the {what} \"{name}\"; read it as args.{name}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        expect_object(value, "test").unwrap()
    }

    #[test]
    fn dotted_keys_nest_and_plain_keys_win() {
        let (map, warnings) = expand_dotted(
            object(json!({
                "message.language": "en",
                "message": {"text": "hi", "language": "fr"},
                "a.b.c": 1,
                "a.b.d": 2,
                "x": 5,
                "x.y": 6,
            })),
            "args",
        );
        assert_eq!(
            Value::Object(map),
            json!({
                "message": {"text": "hi", "language": "fr"},
                "x": 5,
                "a": {"b": {"c": 1, "d": 2}},
            })
        );
        assert_eq!(
            warnings,
            vec![
                "key \"message.language\" in args is ignored: \"message.language\" is already set",
                "key \"x.y\" in args is ignored: \"x\" is already set",
            ]
        );
    }

    #[test]
    fn odd_dotted_keys_do_not_panic() {
        let (map, _) = expand_dotted(object(json!({".": 1, "a..b": 2, "c.": 3, ".d": 4})), "args");
        assert_eq!(
            Value::Object(map),
            json!({"": {"": 1, "d": 4}, "a": {"": {"b": 2}}, "c": {"": 3}})
        );
    }

    #[test]
    fn reserved_args_stay_out_of_the_root() {
        let (root, warnings) =
            root_args(&object(json!({"name": "Ada", "message": "x", "files": []})));
        assert_eq!(Value::Object(root), json!({"name": "Ada"}));
        assert_eq!(
            warnings,
            vec![
                "arg \"message\" is hidden by the namespace \"message\"; read it as args.message",
                "arg \"files\" is hidden by the context value \"files\"; read it as args.files",
            ]
        );
    }

    #[test]
    fn non_objects_are_input_errors() {
        let error = expect_object(json!([1]), "the message namespace").unwrap_err();
        assert_eq!(error.class(), ErrorClass::Input);
        assert!(
            error.message().contains("not an array"),
            "{}",
            error.message()
        );
    }
}

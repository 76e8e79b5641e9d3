//! The function set every syntax shares: one implementation each, bound to
//! Jinja filters, Go functions and Handlebars helpers by the front ends.

use serde_json::Value;

/// Names of the shared functions, for did-you-mean and `check`.
pub const SHARED: &[&str] = &["tojson", "toJSON", "join", "lower", "upper", "trim"];

/// `tojson` / `toJSON`: compact JSON, keys in input order, no HTML escaping.
pub fn to_json(value: &Value) -> String {
    // Serializing a `Value` cannot fail: its keys are strings.
    serde_json::to_string(value).unwrap_or_default()
}

/// `tojson` with an indent (Jinja's `tojson(indent=2)`).
pub fn to_json_pretty(value: &Value, indent: usize) -> String {
    let indent = " ".repeat(indent);
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    match serde::Serialize::serialize(value, &mut serializer) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => to_json(value),
    }
}

/// `join`: the items' text with `separator` between them.
pub fn join<I, S>(separator: &str, items: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        out.push_str(item.as_ref());
    }
    out
}

/// `lower`: Unicode lower case.
pub fn lower(text: &str) -> String {
    text.to_lowercase()
}

/// `upper`: Unicode upper case.
pub fn upper(text: &str) -> String {
    text.to_uppercase()
}

/// `trim`: without leading and trailing whitespace.
pub fn trim(text: &str) -> String {
    text.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shared_functions() {
        assert_eq!(
            to_json(&json!({"b": 1, "a": "<x>"})),
            r#"{"b":1,"a":"<x>"}"#
        );
        assert_eq!(to_json_pretty(&json!([1]), 2), "[\n  1\n]");
        assert_eq!(join(", ", ["a", "b"]), "a, b");
        assert_eq!(lower("ÀB"), "àb");
        assert_eq!(upper("àb"), "ÀB");
        assert_eq!(trim("  x \n"), "x");
    }
}

//! JSON to gotmpl's value, as a Go host's data would be (included by path
//! from `all/` and `gotmpl/`): integers `Int` (as Go's `int` fields in a
//! host struct), other numbers `Float`, objects gotmpl's (sorted) maps.

use std::sync::Arc;

use gotmpl::Value;

pub fn to_gotmpl(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(u)) => Value::Uint(u),
            (None, None) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::String(s.as_str().into()),
        serde_json::Value::Array(items) => Value::List(items.iter().map(to_gotmpl).collect()),
        serde_json::Value::Object(map) => Value::Map(Arc::new(
            map.iter()
                .map(|(key, value)| (Arc::<str>::from(key.as_str()), to_gotmpl(value)))
                .collect(),
        )),
    }
}

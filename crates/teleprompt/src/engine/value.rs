//! Values while rendering: borrowed views of the data, template literals,
//! and the few values functions compute.

use std::rc::Rc;

use serde_json::Value as Json;

use crate::data::View;

/// A value during a render. Data is borrowed (`'a` is the render's borrow of
/// the data and the program); only function results own memory.
#[derive(Clone, Debug)]
pub(crate) enum Value<'a> {
    /// A key absent from its object (lenient and semi renders only: strict
    /// reports it where it is read).
    Missing,
    /// JSON null (Go's nil).
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer: a JSON number without fraction or exponent.
    Int(i64),
    /// An integer above `i64::MAX` (a 64-bit id): Go's `uint64`, as
    /// yaml.v3 reads it, printed with all its digits.
    UInt(u64),
    /// A float: any other JSON number.
    Float(f64),
    /// A string borrowed from the data or the template.
    Str(&'a str),
    /// A string a function made.
    String(Rc<str>),
    /// An array of the data (or a slice of one).
    Array(&'a [Json]),
    /// An object of the data, merged over lower layers.
    Object(View<'a>),
    /// An array or an object a host function returned (never a scalar:
    /// [`Value::owned`] maps those to the variants above). Reading into it
    /// (`.a.b`, `index`, `range`) clones the child it reaches: host results
    /// are small, and a clone keeps the value free of the data's borrow.
    Json(Rc<Json>),
}

impl<'a> Value<'a> {
    /// The value at a place in the data.
    pub(crate) fn from_view(view: View<'a>) -> Value<'a> {
        match view.value() {
            Json::Object(_) => Value::Object(view),
            other => Value::from_json(other),
        }
    }

    /// A JSON value of one layer (arrays never merge).
    pub(crate) fn from_json(json: &'a Json) -> Value<'a> {
        match json {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::number(n),
            Json::String(s) => Value::Str(s),
            Json::Array(items) => Value::Array(items),
            Json::Object(_) => Value::Object(View::single(json)),
        }
    }

    /// A JSON number: an integer when it is one (of 64 bits, signed or
    /// not), else a float.
    #[inline]
    pub(crate) fn number(n: &serde_json::Number) -> Value<'a> {
        if let Some(i) = n.as_i64() {
            return Value::Int(i);
        }
        match n.as_u64() {
            Some(u) => Value::UInt(u),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    /// A value a function made, owned.
    pub(crate) fn owned(json: Json) -> Value<'a> {
        match json {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(b),
            Json::Number(n) => Value::number(&n),
            Json::String(s) => Value::string(s),
            json @ (Json::Array(_) | Json::Object(_)) => Value::Json(Rc::new(json)),
        }
    }

    /// The value without the borrow of `'a`: borrowed arrays and objects are
    /// copied (used for children read out of a [`Value::Json`], which borrow
    /// its `Rc` only).
    pub(crate) fn detach<'b>(self) -> Value<'b> {
        match self {
            Value::Missing => Value::Missing,
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(b),
            Value::Int(i) => Value::Int(i),
            Value::UInt(u) => Value::UInt(u),
            Value::Float(f) => Value::Float(f),
            Value::Str(s) => Value::String(Rc::from(s)),
            Value::String(s) => Value::String(s),
            Value::Array(items) => Value::Json(Rc::new(Json::Array(items.to_vec()))),
            Value::Object(view) => Value::Json(Rc::new(view.to_json())),
            Value::Json(json) => Value::Json(json),
        }
    }

    /// A string a function made.
    pub(crate) fn string(text: String) -> Value<'a> {
        Value::String(Rc::from(text))
    }

    /// The text of a string value.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Go's truth: false, 0, "", nil and empty collections are false.
    pub(crate) fn is_true(&self) -> bool {
        match self {
            Value::Missing | Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::UInt(u) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::String(s) => !s.is_empty(),
            Value::Array(items) => !items.is_empty(),
            Value::Object(view) => !view.is_empty(),
            Value::Json(json) => match &**json {
                Json::Array(items) => !items.is_empty(),
                Json::Object(map) => !map.is_empty(),
                _ => true,
            },
        }
    }

    /// The Go type a JSON value decodes to, as `%T` prints it.
    pub(crate) fn go_type(&self) -> &'static str {
        match self {
            Value::Missing | Value::Null => "<nil>",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::UInt(_) => "uint64",
            Value::Float(_) => "float64",
            Value::Str(_) | Value::String(_) => "string",
            Value::Array(_) => "[]interface {}",
            Value::Object(_) => "map[string]interface {}",
            Value::Json(json) => Value::from_json(json).go_type(),
        }
    }

    /// A plain word for the kind of value, for messages.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Value::Missing => "missing",
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::UInt(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Str(_) | Value::String(_) => "a string",
            Value::Array(_) => "a list",
            Value::Object(_) => "a map",
            Value::Json(json) => Value::from_json(json).kind_name(),
        }
    }

    /// The value as owned JSON (copies; for `toJSON` output).
    pub(crate) fn to_json(&self) -> Json {
        match self {
            Value::Missing | Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::UInt(u) => Json::from(*u),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::Str(s) => Json::String((*s).to_string()),
            Value::String(s) => Json::String(s.to_string()),
            Value::Array(items) => Json::Array(items.to_vec()),
            Value::Object(view) => view.to_json(),
            Value::Json(json) => Json::clone(json),
        }
    }
}

/// Keys of an object in Go's map order (sorted by bytes).
pub(crate) fn sorted_keys<'a>(view: &View<'a>) -> Vec<&'a str> {
    let mut keys = view.keys();
    keys.sort_unstable();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_numbers_keep_int_and_float_apart() {
        let data = json!([3, 3.0, 3.5, -1, 18446744073709551615u64]);
        let items = data.as_array().unwrap();
        assert!(matches!(Value::from_json(&items[0]), Value::Int(3)));
        assert!(matches!(Value::from_json(&items[1]), Value::Float(f) if f == 3.0));
        assert!(matches!(Value::from_json(&items[2]), Value::Float(_)));
        assert!(matches!(Value::from_json(&items[3]), Value::Int(-1)));
        assert!(matches!(Value::from_json(&items[4]), Value::UInt(u64::MAX)));
    }

    #[test]
    fn truth() {
        let data = json!({"e": {}, "a": [0], "z": 0, "s": ""});
        let root = View::single(&data);
        assert!(!Value::from_view(root.get("e").unwrap()).is_true());
        assert!(Value::from_view(root.get("a").unwrap()).is_true());
        assert!(!Value::from_view(root.get("z").unwrap()).is_true());
        assert!(!Value::from_view(root.get("s").unwrap()).is_true());
        assert!(!Value::Null.is_true());
    }
}

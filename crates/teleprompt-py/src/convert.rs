//! Python objects to JSON values and back.
//!
//! Data crosses into Rust once per render, as a `serde_json::Value`: dicts
//! with `str` keys, lists and tuples, `str`, `int` (64-bit), `float`
//! (finite), `bool` and `None`. Anything else is a [`NotData`] error that
//! names where in the data it sits (`data["issue"]["created"]`), never a
//! silent `str()` of it.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// How deep data may nest: what JSON parsers allow, and far below what
/// would exhaust the stack (a list that contains itself stops here too
/// when it is not caught as a cycle first).
pub(crate) const MAX_DEPTH: usize = 128;

/// A value that is not data, and where it is.
#[derive(Debug)]
pub(crate) struct NotData {
    /// Where: `data["issue"]["labels"][2]`.
    pub path: String,
    /// What is wrong, and what to pass instead.
    pub message: String,
}

impl NotData {
    pub(crate) fn describe(&self) -> String {
        format!("{}: {}", self.path, self.message)
    }
}

/// Converts `object` (found at `root`, such as `data`) to a JSON value.
pub(crate) fn to_value(object: &Bound<'_, PyAny>, root: &str) -> Result<Value, NotData> {
    to_value_keeping(object, root, None)
}

/// Which top-level keys of the data to convert (the others are kept as
/// null, so that a misspelled name still finds them for its suggestion):
/// those the prompt may read ([`teleprompt::Prompt::reads`]).
pub(crate) type Keep<'a> = Option<&'a dyn Fn(&str) -> bool>;

/// [`to_value`], converting only the top-level keys `keep` accepts.
pub(crate) fn to_value_keeping(
    object: &Bound<'_, PyAny>,
    root: &str,
    keep: Keep<'_>,
) -> Result<Value, NotData> {
    let mut walk = Walk {
        root,
        steps: Vec::new(),
        open: Vec::new(),
        keep,
    };
    walk.value(object)
}

/// The conversion's position: the steps from the root (written out only
/// for an error), and the containers open on it (to tell a cycle from
/// deep data).
struct Walk<'r, 'py> {
    root: &'r str,
    steps: Vec<Step<'py>>,
    open: Vec<usize>,
    keep: Keep<'r>,
}

enum Step<'py> {
    Key(Bound<'py, PyString>),
    Index(usize),
}

impl<'py> Walk<'_, 'py> {
    fn fail(&self, message: impl Into<String>) -> NotData {
        let mut path = self.root.to_string();
        for step in &self.steps {
            match step {
                Step::Key(key) => {
                    let key = key.to_string_lossy();
                    path.push_str(&format!("[{}]", quoted(&key)));
                }
                Step::Index(index) => path.push_str(&format!("[{index}]")),
            }
        }
        NotData {
            path,
            message: message.into(),
        }
    }

    fn value(&mut self, object: &Bound<'py, PyAny>) -> Result<Value, NotData> {
        if object.is_none() {
            return Ok(Value::Null);
        }
        if let Ok(text) = object.cast::<PyString>() {
            return text
                .to_str()
                .map(|text| Value::String(text.to_string()))
                .map_err(|_| self.fail("a str that is not valid UTF-8 (a lone surrogate)"));
        }
        if let Ok(flag) = object.cast::<PyBool>() {
            return Ok(Value::Bool(flag.is_true()));
        }
        if object.is_instance_of::<PyInt>() {
            return self.integer(object);
        }
        if let Ok(number) = object.cast::<PyFloat>() {
            let number = number.value();
            return Number::from_f64(number).map(Value::Number).ok_or_else(|| {
                self.fail(format!(
                    "the float {number} has no JSON value (only finite numbers do)"
                ))
            });
        }
        if let Ok(dict) = object.cast::<PyDict>() {
            return self.nested(object, |walk| walk.dict(dict));
        }
        if let Ok(list) = object.cast::<PyList>() {
            return self.nested(object, |walk| walk.items(list.iter()));
        }
        if let Ok(tuple) = object.cast::<PyTuple>() {
            return self.nested(object, |walk| walk.items(tuple.iter()));
        }
        Err(self.fail(not_data_message(object)))
    }

    fn integer(&self, object: &Bound<'_, PyAny>) -> Result<Value, NotData> {
        if let Ok(small) = object.extract::<i64>() {
            return Ok(Value::from(small));
        }
        if let Ok(large) = object.extract::<u64>() {
            return Ok(Value::from(large));
        }
        // Beyond 64 bits: its digits, as a string, as a data file's
        // integer literal of that size is kept.
        object
            .str()
            .map(|digits| Value::String(digits.to_string()))
            .map_err(|_| self.fail("an int that cannot be printed"))
    }

    /// Converts a container, with the depth bound and the cycle check.
    fn nested(
        &mut self,
        object: &Bound<'py, PyAny>,
        convert: impl FnOnce(&mut Self) -> Result<Value, NotData>,
    ) -> Result<Value, NotData> {
        let id = object.as_ptr() as usize;
        if self.open.contains(&id) {
            return Err(self.fail("contains itself (a cycle): data must be a tree"));
        }
        if self.open.len() >= MAX_DEPTH {
            return Err(self.fail(format!("nests deeper than {MAX_DEPTH} levels")));
        }
        self.open.push(id);
        let result = convert(self);
        self.open.pop();
        result
    }

    fn dict(&mut self, dict: &Bound<'py, PyDict>) -> Result<Value, NotData> {
        let mut map = Map::with_capacity(dict.len());
        for (key, value) in dict.iter() {
            let key = match key.cast_into::<PyString>() {
                Ok(key) => key,
                Err(error) => {
                    let key = error.into_inner();
                    let kind = type_name(&key);
                    return Err(self.fail(format!(
                        "has a key of type {kind} ({}): data keys must be str",
                        short_repr(&key)
                    )));
                }
            };
            let Ok(text) = key.to_str() else {
                return Err(self.fail("has a key that is not valid UTF-8 (a lone surrogate)"));
            };
            let text = text.to_string();
            if let (Some(keep), true) = (self.keep, self.open.len() == 1) {
                if !keep(&text) {
                    map.insert(text, Value::Null);
                    continue;
                }
            }
            self.steps.push(Step::Key(key));
            let value = self.value(&value)?;
            self.steps.pop();
            map.insert(text, value);
        }
        Ok(Value::Object(map))
    }

    fn items(&mut self, items: impl Iterator<Item = Bound<'py, PyAny>>) -> Result<Value, NotData> {
        let mut list = Vec::new();
        for (index, item) in items.enumerate() {
            self.steps.push(Step::Index(index));
            list.push(self.value(&item)?);
            self.steps.pop();
        }
        Ok(Value::Array(list))
    }
}

/// Why a value of another type is not data, with what to pass instead.
fn not_data_message(object: &Bound<'_, PyAny>) -> String {
    let kind = type_name(object);
    let hint = if object.hasattr("model_dump").unwrap_or(false) {
        "; for a pydantic model pass model.model_dump(mode=\"json\")"
    } else if object.hasattr("isoformat").unwrap_or(false) {
        "; pass value.isoformat() for a date or time"
    } else if object.hasattr("__dataclass_fields__").unwrap_or(false) {
        "; pass dataclasses.asdict(value) for a dataclass"
    } else if kind == "set" || kind == "frozenset" {
        "; pass sorted(value) or list(value): a set has no order"
    } else if kind == "bytes" || kind == "bytearray" {
        "; decode it to a str first"
    } else {
        "; convert it to a dict, list, str, int, float, bool or None"
    };
    format!("a value of type {kind} is not data{hint}")
}

fn type_name(object: &Bound<'_, PyAny>) -> String {
    object
        .get_type()
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "?".to_string())
}

fn short_repr(object: &Bound<'_, PyAny>) -> String {
    let text = object
        .repr()
        .map(|text| text.to_string())
        .unwrap_or_else(|_| "?".to_string());
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// A key as Python writes it in a subscript.
pub(crate) fn quoted(key: &str) -> String {
    serde_json::to_string(key).unwrap_or_else(|_| format!("{key:?}"))
}

/// Converts a JSON value to Python objects.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        Value::Number(number) => {
            if let Some(small) = number.as_i64() {
                small.into_pyobject(py)?.into_any()
            } else if let Some(large) = number.as_u64() {
                large.into_pyobject(py)?.into_any()
            } else {
                number
                    .as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
            }
        }
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

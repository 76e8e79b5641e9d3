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
    let mut walk = Walk { open: Vec::new() };
    let converted = match (keep, object.cast::<PyDict>()) {
        (Some(keep), Ok(dict)) => walk.nested(object, |walk| walk.dict(dict, Some(keep))),
        _ => walk.value(object),
    };
    converted.map_err(|failed| failed.at(root))
}

/// The conversion's position: the containers open on it (to tell a cycle
/// from deep data). Where a value sits is not tracked on the way down: a
/// failure collects its steps on the way back up ([`Failed`]), so the
/// common case pays nothing for the error path.
struct Walk {
    open: Vec<usize>,
}

/// A value that is not data, on its way up: the steps from it to the
/// root (innermost first) and what is wrong. Boxed, so that a converted
/// value's `Result` stays the size of the value.
struct Failed {
    steps: Vec<Step>,
    message: String,
}

enum Step {
    Key(String),
    Index(usize),
}

type Converted = Result<Value, Box<Failed>>;

impl Failed {
    fn new(message: impl Into<String>) -> Box<Failed> {
        Box::new(Failed {
            steps: Vec::new(),
            message: message.into(),
        })
    }

    /// The failure found at `step` of the container that holds it.
    fn within(mut self: Box<Failed>, step: Step) -> Box<Failed> {
        self.steps.push(step);
        self
    }

    /// The failure with its path written out from `root`:
    /// `data["issue"]["labels"][2]`.
    fn at(self, root: &str) -> NotData {
        let Failed { steps, message } = self;
        let mut path = root.to_string();
        for step in steps.iter().rev() {
            match step {
                Step::Key(key) => {
                    path.push('[');
                    path.push_str(&quoted(key));
                    path.push(']');
                }
                Step::Index(index) => path.push_str(&format!("[{index}]")),
            }
        }
        NotData { path, message }
    }
}

impl Walk {
    fn value(&mut self, object: &Bound<'_, PyAny>) -> Converted {
        // The exact built-in types first, most frequent first (one pointer
        // comparison each); subclasses and the rest after.
        if let Ok(text) = object.cast_exact::<PyString>() {
            return string(text);
        }
        if let Ok(dict) = object.cast_exact::<PyDict>() {
            return self.nested(object, |walk| walk.dict(dict, None));
        }
        if let Ok(list) = object.cast_exact::<PyList>() {
            return self.nested(object, |walk| walk.list(list));
        }
        if object.is_exact_instance_of::<PyInt>() {
            return integer(object);
        }
        if object.is_none() {
            return Ok(Value::Null);
        }
        if let Ok(flag) = object.cast_exact::<PyBool>() {
            return Ok(Value::Bool(flag.is_true()));
        }
        if let Ok(number) = object.cast_exact::<PyFloat>() {
            return float(number);
        }
        self.other(object)
    }

    /// Subclasses of the data types, tuples, and what is not data.
    #[cold]
    fn other(&mut self, object: &Bound<'_, PyAny>) -> Converted {
        if let Ok(text) = object.cast::<PyString>() {
            return string(text);
        }
        if let Ok(flag) = object.cast::<PyBool>() {
            return Ok(Value::Bool(flag.is_true()));
        }
        if object.is_instance_of::<PyInt>() {
            return integer(object);
        }
        if let Ok(number) = object.cast::<PyFloat>() {
            return float(number);
        }
        if let Ok(dict) = object.cast::<PyDict>() {
            return self.nested(object, |walk| walk.dict(dict, None));
        }
        if let Ok(list) = object.cast::<PyList>() {
            return self.nested(object, |walk| walk.list(list));
        }
        if let Ok(tuple) = object.cast::<PyTuple>() {
            return self.nested(object, |walk| walk.items(tuple.iter()));
        }
        Err(Failed::new(not_data_message(object)))
    }

    /// Converts a container, with the depth bound and the cycle check.
    fn nested(
        &mut self,
        object: &Bound<'_, PyAny>,
        convert: impl FnOnce(&mut Self) -> Converted,
    ) -> Converted {
        let id = object.as_ptr() as usize;
        if self.open.contains(&id) {
            return Err(Failed::new(
                "contains itself (a cycle): data must be a tree",
            ));
        }
        if self.open.len() >= MAX_DEPTH {
            return Err(Failed::new(format!("nests deeper than {MAX_DEPTH} levels")));
        }
        self.open.push(id);
        let result = convert(self);
        self.open.pop();
        result
    }

    /// A dict; with `keep`, the top level's, whose keys `keep` refuses
    /// stay null.
    fn dict(&mut self, dict: &Bound<'_, PyDict>, keep: Keep<'_>) -> Converted {
        let mut map = Map::with_capacity(dict.len());
        for (key, value) in dict.iter() {
            let key = match key.cast_into_exact::<PyString>() {
                Ok(key) => key,
                Err(error) => match error.into_inner().cast_into::<PyString>() {
                    Ok(key) => key,
                    Err(error) => return Err(Failed::new(not_a_str_key(&error.into_inner()))),
                },
            };
            let Ok(text) = key.to_str() else {
                return Err(Failed::new(
                    "has a key that is not valid UTF-8 (a lone surrogate)",
                ));
            };
            if keep.is_some_and(|keep| !keep(text)) {
                map.insert(text.to_string(), Value::Null);
                continue;
            }
            match self.value(&value) {
                Ok(value) => {
                    map.insert(text.to_string(), value);
                }
                Err(failed) => return Err(failed.within(Step::Key(text.to_string()))),
            }
        }
        Ok(Value::Object(map))
    }

    fn list(&mut self, list: &Bound<'_, PyList>) -> Converted {
        let mut items = Vec::with_capacity(list.len());
        for (index, item) in list.iter().enumerate() {
            match self.value(&item) {
                Ok(value) => items.push(value),
                Err(failed) => return Err(failed.within(Step::Index(index))),
            }
        }
        Ok(Value::Array(items))
    }

    fn items<'py>(&mut self, items: impl Iterator<Item = Bound<'py, PyAny>>) -> Converted {
        let mut list = Vec::with_capacity(items.size_hint().0);
        for (index, item) in items.enumerate() {
            match self.value(&item) {
                Ok(value) => list.push(value),
                Err(failed) => return Err(failed.within(Step::Index(index))),
            }
        }
        Ok(Value::Array(list))
    }
}

fn string(text: &Bound<'_, PyString>) -> Converted {
    match text.to_str() {
        Ok(text) => Ok(Value::String(text.to_string())),
        Err(_) => Err(Failed::new(
            "a str that is not valid UTF-8 (a lone surrogate)",
        )),
    }
}

fn integer(object: &Bound<'_, PyAny>) -> Converted {
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
        .map_err(|_| Failed::new("an int that cannot be printed"))
}

fn float(number: &Bound<'_, PyFloat>) -> Converted {
    let number = number.value();
    Number::from_f64(number).map(Value::Number).ok_or_else(|| {
        Failed::new(format!(
            "the float {number} has no JSON value (only finite numbers do)"
        ))
    })
}

/// Why a dict key that is not a str is not data.
#[cold]
fn not_a_str_key(key: &Bound<'_, PyAny>) -> String {
    let kind = type_name(key);
    format!(
        "has a key of type {kind} ({}): data keys must be str",
        short_repr(key)
    )
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

/// How deep a pickled record may nest: data nests up to [`MAX_DEPTH`]
/// levels, and the record holds it a few levels down.
const MAX_RECORD_DEPTH: usize = 2 * MAX_DEPTH;

/// Reads a pickled record (JSON text the library's `Serialize` wrote). Its
/// nesting is measured first, so that forged state nested without end is
/// an error, not a stack overflow; below that bound, serde_json's own
/// recursion limit (128, less than data may nest) is lifted.
pub(crate) fn from_record<T: serde::de::DeserializeOwned>(state: &str) -> Result<T, String> {
    // A record is an object (serde would also read a struct from a list).
    if !state.trim_start().starts_with('{') && !state.trim().is_empty() {
        return Err("the state is not a JSON object".to_string());
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for byte in state.bytes() {
        match (in_string, escaped, byte) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'[' | b'{') => {
                depth += 1;
                if depth > MAX_RECORD_DEPTH {
                    return Err(format!("it nests deeper than {MAX_RECORD_DEPTH} levels"));
                }
            }
            (false, _, b']' | b'}') => depth = depth.saturating_sub(1),
            (false, _, _) => {}
        }
    }
    let mut reader = serde_json::Deserializer::from_str(state);
    reader.disable_recursion_limit();
    let value = T::deserialize(&mut reader).map_err(|error| error.to_string())?;
    reader.end().map_err(|error| error.to_string())?;
    Ok(value)
}

//! Python callables as host functions.
//!
//! `functions={"fetch": fetch}` makes `fetch` callable from every syntax;
//! `functions={"Weather": {"forecast": fn}}` makes a plugin (Handlebars
//! `{{Weather-forecast city}}`, Go and Jinja `Weather_forecast`). A call
//! takes the GIL, converts the arguments to Python, calls, and converts the
//! result back; an exception becomes the render error's message and its
//! `__cause__`.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use serde_json::Value;
use teleprompt::functions::{Functions, Plugin};

use crate::convert;
use crate::errors;

/// Reads `functions=`: a dict of names to callables or to dicts of them
/// (plugins).
pub(crate) fn from_python(
    py: Python<'_>,
    functions: Option<&Bound<'_, PyDict>>,
) -> PyResult<Functions> {
    let mut registry = Functions::new();
    let Some(functions) = functions else {
        return Ok(registry);
    };
    for (name, value) in functions.iter() {
        let name = key(py, &name)?;
        if let Ok(members) = value.cast::<PyDict>() {
            let mut plugin = Plugin::new(name.clone());
            for (member, function) in members.iter() {
                let member = key(py, &member)?;
                let display = format!("{name}.{member}");
                plugin = plugin.with(member, host_function(py, &display, &function)?);
            }
            registry = registry.with_plugin(plugin);
        } else {
            let function = host_function(py, &name, &value)?;
            registry = registry.with(name, function);
        }
    }
    Ok(registry)
}

fn key(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<String> {
    match name.cast::<PyString>() {
        Ok(name) => Ok(name.to_str()?.to_string()),
        Err(_) => Err(errors::input(py, "functions: every name must be a str")),
    }
}

type Call = dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync;

fn host_function(py: Python<'_>, name: &str, function: &Bound<'_, PyAny>) -> PyResult<Box<Call>> {
    if !function.is_callable() {
        return Err(errors::input(
            py,
            format!("functions: {name} is not callable (a function or a dict of functions)"),
        ));
    }
    let function: Py<PyAny> = function.clone().unbind();
    let name = name.to_string();
    Ok(Box::new(move |args: &[Value]| {
        Python::attach(|py| call(py, &name, function.bind(py), args))
    }))
}

fn call(
    py: Python<'_>,
    name: &str,
    function: &Bound<'_, PyAny>,
    args: &[Value],
) -> Result<Value, String> {
    let converted: PyResult<Vec<Bound<'_, PyAny>>> =
        args.iter().map(|arg| convert::to_python(py, arg)).collect();
    let result = converted
        .and_then(|args| PyTuple::new(py, args))
        .and_then(|args| function.call1(args));
    match result {
        Ok(value) => convert::to_value(&value, &format!("the result of {name}()"))
            .map_err(|problem| problem.describe()),
        Err(exception) => {
            let message = describe(py, &exception);
            errors::remember_host_exception(exception);
            Err(message)
        }
    }
}

/// `ValueError: no such issue`, as Python prints an exception's last line.
fn describe(py: Python<'_>, exception: &PyErr) -> String {
    let kind = exception
        .get_type(py)
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "Exception".to_string());
    let text = exception
        .value(py)
        .str()
        .map(|text| text.to_string())
        .unwrap_or_default();
    if text.is_empty() {
        kind
    } else {
        format!("{kind}: {text}")
    }
}

//! teleprompt errors as Python exceptions (`teleprompt.errors`).

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule};
use teleprompt::{Error, ErrorClass};

use crate::convert::{self, NotData};

thread_local! {
    /// The exception a host function raised during the render running on
    /// this thread: it becomes the `__cause__` of the `RenderError`.
    static HOST_EXCEPTION: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Keeps the exception a host function raised, for [`raise`] to chain.
pub(crate) fn remember_host_exception(error: PyErr) {
    HOST_EXCEPTION.with(|slot| *slot.borrow_mut() = Some(error));
}

/// Forgets a kept exception (before a render starts).
pub(crate) fn forget_host_exception() {
    HOST_EXCEPTION.with(|slot| slot.borrow_mut().take());
}

fn take_host_exception() -> Option<PyErr> {
    HOST_EXCEPTION.with(|slot| slot.borrow_mut().take())
}

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS
        .get_or_try_init(py, || {
            Ok(PyModule::import(py, "teleprompt.errors")?.unbind())
        })
        .map(|module| module.bind(py))
}

fn class_name(class: ErrorClass) -> &'static str {
    match class {
        ErrorClass::Document => "DocumentError",
        ErrorClass::Parse => "ParseError",
        ErrorClass::Render => "RenderError",
        ErrorClass::Input => "InputError",
        ErrorClass::Io => "FileError",
        _ => "TelepromptError",
    }
}

/// The Python exception for a teleprompt error; a host function's own
/// exception, if one caused it, as its `__cause__`.
pub(crate) fn raise(py: Python<'_>, error: &Error) -> PyErr {
    let cause = take_host_exception();
    let built = build(py, error);
    let exception = built.unwrap_or_else(|failure| failure);
    if cause.is_some() && error.class() == ErrorClass::Render {
        exception.set_cause(py, cause);
    }
    exception
}

/// The exception as a value (for `render_many(errors="return")`).
pub(crate) fn exception_object(py: Python<'_>, error: &Error) -> Py<PyAny> {
    raise(py, error).into_value(py).into_any()
}

fn build(py: Python<'_>, error: &Error) -> Result<PyErr, PyErr> {
    // A file that is missing or may not be read is also Python's
    // `FileNotFoundError` or `PermissionError`, with its errno.
    let name = match (error.class(), error.kind()) {
        (ErrorClass::Io, Some("not-found")) => "MissingFileError",
        (ErrorClass::Io, Some("permission-denied")) => "FilePermissionError",
        (class, _) => class_name(class),
    };
    let class = errors_module(py)?.getattr(name)?;
    let json = error.to_json();
    let fields = PyDict::new(py);
    fields.set_item("rule", error.rule())?;
    fields.set_item("code", error.code())?;
    fields.set_item("file", error.file_and_template().map(|(file, _)| file))?;
    let location = error.location();
    fields.set_item("line", location.map(|at| at.line))?;
    fields.set_item("column", location.map(|at| at.column))?;
    fields.set_item("path", json.get("path").and_then(|path| path.as_str()))?;
    fields.set_item("action", error.action())?;
    fields.set_item("suggestion", error.suggestion())?;
    let labels = PyDict::new(py);
    for (key, value) in error.labels() {
        labels.set_item(key, value)?;
    }
    fields.set_item("labels", labels)?;
    fields.set_item("report", error.report())?;
    fields.set_item("details", convert::to_python(py, &json)?)?;
    let exception = class.call((error.message(),), Some(&fields))?;
    Ok(PyErr::from_value(exception))
}

/// An `InputError` for data that does not convert, naming where it is.
pub(crate) fn not_data(py: Python<'_>, problem: NotData) -> PyErr {
    let error = Error::new(ErrorClass::Input, problem.describe());
    match build(py, &error) {
        Ok(exception) => {
            let value = exception.value(py);
            // The Python path of the value, not a template path.
            let _ = value.setattr("path", problem.path);
            exception
        }
        Err(failure) => failure,
    }
}

/// An `InputError` with a message (a bad option or argument).
pub(crate) fn input(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, &Error::new(ErrorClass::Input, message))
}

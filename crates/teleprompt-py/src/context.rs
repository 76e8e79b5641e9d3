//! `PromptContext`: what a host knows about a conversation and its turn.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use serde_json::Value;
use teleprompt::context::{Clock, Namespace};
use teleprompt::messages::history_from_value;
use teleprompt::HistoryMessage;

use crate::convert;
use crate::errors;

/// The context of one turn, for `Prompt.render_turn`: the host's data,
/// the namespaces (`assistant`, `conversation`, `session`, `message`),
/// the args, the history (OpenAI-style message dicts), the clock (`now`,
/// an aware `datetime` or RFC 3339 text; default: the system clock),
/// the turn and attempt numbers, and labels shown on every error.
///
/// `with_turn` and `with_history` make another context cheaply (the
/// history and namespaces are shared, not copied). `append` and `extend`
/// add the turn's messages to this one: only the new messages are checked
/// against the tool-call rules, and the history is extended in place,
/// without copying it, even while something else still holds it (another
/// context made from this one, or a `Rendered` of it, which keep the
/// messages they had).
#[pyclass(frozen, module = "teleprompt._teleprompt", name = "PromptContext")]
pub(crate) struct PromptContext {
    inner: Mutex<teleprompt::PromptContext>,
}

impl PromptContext {
    fn new_from(inner: teleprompt::PromptContext) -> PromptContext {
        PromptContext {
            inner: Mutex::new(inner),
        }
    }

    /// The context as it is now (a cheap clone: reference counts).
    pub(crate) fn snapshot(&self) -> teleprompt::PromptContext {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, teleprompt::PromptContext> {
        // A panic cannot happen while the lock is held (clones and pushes).
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn push(&self, messages: Vec<HistoryMessage>) {
        let mut inner = self.lock();
        let context = std::mem::take(&mut *inner);
        *inner = context.extend_history(messages);
    }
}

fn object(py: Python<'_>, value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<Value>> {
    match value.filter(|value| !value.is_none()) {
        None => Ok(None),
        Some(value) => convert::to_value(value, name)
            .map(Some)
            .map_err(|problem| errors::not_data(py, problem)),
    }
}

fn history(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Vec<HistoryMessage>> {
    let value =
        convert::to_value(value, "history").map_err(|problem| errors::not_data(py, problem))?;
    history_from_value(value).map_err(|error| errors::input(py, format!("bad history: {error}")))
}

/// `now` as RFC 3339 text: an aware `datetime`, or text (checked).
pub(crate) fn now_text(py: Python<'_>, now: &Bound<'_, PyAny>) -> PyResult<String> {
    parse_now(py, now).map(|(text, _)| text)
}

fn clock(py: Python<'_>, now: &Bound<'_, PyAny>) -> PyResult<Clock> {
    parse_now(py, now).map(|(_, clock)| clock)
}

/// `now` as text and as the clock it sets.
fn parse_now(py: Python<'_>, now: &Bound<'_, PyAny>) -> PyResult<(String, Clock)> {
    let text = if let Ok(text) = now.cast::<PyString>() {
        text.to_str()?.to_string()
    } else if now.hasattr("isoformat")? {
        if now.hasattr("tzinfo")? && now.getattr("tzinfo")?.is_none() {
            return Err(errors::input(
                py,
                "now: a datetime without a time zone is ambiguous; pass an aware one (datetime.now(timezone.utc))",
            ));
        }
        now.call_method0("isoformat")?.extract()?
    } else {
        return Err(errors::input(py, "now must be a datetime or RFC 3339 text"));
    };
    let clock = Clock::parse(&text)
        .map_err(|error| errors::input(py, format!("now: {}", error.message())))?;
    Ok((text, clock))
}

fn check(
    py: Python<'_>,
    result: Result<teleprompt::PromptContext, teleprompt::Error>,
) -> PyResult<teleprompt::PromptContext> {
    result.map_err(|error| errors::raise(py, &error))
}

#[pymethods]
impl PromptContext {
    #[new]
    #[pyo3(signature = (
        data = None, *, history = None, now = None, time_zone = None, turn = None,
        max_turns = None, attempt = None, assistant = None, conversation = None,
        session = None, message = None, args = None, custom_rules = None,
        client_language = None, labels = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        data: Option<&Bound<'_, PyAny>>,
        history: Option<&Bound<'_, PyAny>>,
        now: Option<&Bound<'_, PyAny>>,
        time_zone: Option<&str>,
        turn: Option<u32>,
        max_turns: Option<u32>,
        attempt: Option<u32>,
        assistant: Option<&Bound<'_, PyAny>>,
        conversation: Option<&Bound<'_, PyAny>>,
        session: Option<&Bound<'_, PyAny>>,
        message: Option<&Bound<'_, PyAny>>,
        args: Option<&Bound<'_, PyAny>>,
        custom_rules: Option<String>,
        client_language: Option<String>,
        labels: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PromptContext> {
        let mut context = teleprompt::PromptContext::new();
        if let Some(data) = object(py, data, "data")? {
            context = check(py, context.data(data))?;
        }
        for (namespace, fields) in [
            (Namespace::Assistant, assistant),
            (Namespace::Conversation, conversation),
            (Namespace::Session, session),
            (Namespace::Message, message),
        ] {
            if let Some(fields) = object(py, fields, namespace.as_str())? {
                context = check(py, context.namespace(namespace, fields))?;
            }
        }
        if let Some(fields) = object(py, args, "args")? {
            context = check(py, context.args(fields))?;
        }
        if let Some(history) = history.filter(|history| !history.is_none()) {
            context = context.with_history(self::history(py, history)?);
        }
        if let Some(now) = now.filter(|now| !now.is_none()) {
            context = context.clock(clock(py, now)?);
        }
        if let Some(zone) = time_zone {
            context = context
                .time_zone_named(zone)
                .map_err(|error| errors::input(py, format!("time_zone: {}", error.message())))?;
        }
        if let Some(turn) = turn {
            context = context.turn(turn);
        }
        if let Some(max) = max_turns {
            context = context.max_turns(max);
        }
        if let Some(attempt) = attempt {
            context = context.attempt(attempt);
        }
        if let Some(rules) = custom_rules {
            context = context.custom_rules(rules);
        }
        if let Some(language) = client_language {
            context = context.client_language(language);
        }
        if let Some(labels) = labels {
            for (key, value) in labels.iter() {
                let value = match value.cast::<PyString>() {
                    Ok(text) => text.to_str()?.to_string(),
                    Err(_) => value.str()?.to_string(),
                };
                context = context.label(key.extract::<String>()?, value);
            }
        }
        Ok(PromptContext::new_from(context))
    }

    /// The same context at another turn (and attempt, when given).
    #[pyo3(signature = (turn, attempt = None))]
    fn with_turn(&self, turn: u32, attempt: Option<u32>) -> PromptContext {
        let mut context = self.snapshot().turn(turn);
        if let Some(attempt) = attempt {
            context = context.attempt(attempt);
        }
        PromptContext::new_from(context)
    }

    /// The same context with another history.
    fn with_history(&self, py: Python<'_>, history: &Bound<'_, PyAny>) -> PyResult<PromptContext> {
        let history = self::history(py, history)?;
        Ok(PromptContext::new_from(
            self.snapshot().with_history(history),
        ))
    }

    /// Adds a message (an OpenAI-style dict) to the history.
    fn append(&self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<()> {
        let list = pyo3::types::PyList::new(py, [message])?;
        let messages = self::history(py, list.as_any())?;
        self.push(messages);
        Ok(())
    }

    /// Adds messages to the history, in order.
    fn extend(&self, py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<()> {
        let messages = self::history(py, messages)?;
        self.push(messages);
        Ok(())
    }

    /// The turn number (`run.turn_number`).
    #[getter]
    fn turn(&self) -> u32 {
        self.lock().turn_number()
    }

    /// The history, as message dicts.
    #[getter]
    fn history<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(self.lock().history())
            .map_err(|error| errors::input(py, format!("history: {error}")))?;
        convert::to_python(py, &value)
    }

    /// Pickles by what it holds (the library's serialized context): the
    /// copy renders the same in another process.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let context = self.snapshot();
        let state = py
            .detach(|| serde_json::to_string(&context))
            .map_err(|error| {
                errors::input(py, format!("cannot pickle this PromptContext: {error}"))
            })?;
        let restore = py
            .import("teleprompt._teleprompt")?
            .getattr("_restore_context")?;
        PyTuple::new(py, [restore, PyTuple::new(py, [state])?.into_any()])
    }

    fn __repr__(&self) -> String {
        let context = self.lock();
        format!(
            "PromptContext(turn={}, history={} messages)",
            context.turn_number(),
            context.history().len()
        )
    }
}

/// Makes a pickled `PromptContext` again; state that is not one
/// (corrupted, cut short, forged) is an `InputError`.
#[pyfunction]
pub(crate) fn _restore_context(py: Python<'_>, state: &str) -> PyResult<PromptContext> {
    convert::from_record(state)
        .map(PromptContext::new_from)
        .map_err(|error| errors::input(py, format!("cannot unpickle a PromptContext: {error}")))
}

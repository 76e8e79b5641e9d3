//! A render described as data: what a service request, a batch record or
//! a call from another language gives — data, history, turn, clock — read
//! from JSON and rendered the way `teleprompt render` renders. Like
//! `prompt.rs`, a face: it calls [`Prompt`]'s own render methods.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::context::Clock;
use crate::messages::history_from_value;
use crate::{
    context::PromptContext, diagnostics::Error, diagnostics::ErrorClass, options::RenderOptions,
    options::Syntax, prompt::Prompt, render::rendered::Rendered,
};

/// One render's inputs, every field optional; JSON field names as below
/// (an unknown field is refused, so a misspelled one is not ignored).
///
/// ```
/// use teleprompt::{LoadOptions, Prompt, RenderRequest};
/// let prompt = Prompt::from_source("task.j2", "Turn {{ run.turn_number }}: fix {{ issue }}.", &LoadOptions::default())?;
/// let request: RenderRequest = serde_json::from_str(r#"{"data": {"issue": "A-1"}, "turn": 2}"#).unwrap();
/// assert_eq!(request.render(&prompt).unwrap().text(), "Turn 2: fix A-1.");
/// # Ok::<(), teleprompt::Error>(())
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RenderRequest {
    /// The data: an object (absent or null: none).
    pub data: Option<Value>,
    /// The conversation so far: OpenAI-style messages (or an object with
    /// `messages`). A chat template receives them as `messages`.
    pub history: Option<Value>,
    /// The turn number (`run.turn_number`).
    pub turn: Option<u32>,
    /// `run.max_turns`.
    pub max_turns: Option<u32>,
    /// The retry number (`attempt`).
    pub attempt: Option<u32>,
    /// The render's clock, RFC 3339 (default: now).
    pub now: Option<String>,
    /// The time zone of `system.local_datetime`, an IANA name.
    pub time_zone: Option<String>,
    /// Shown on every error of this render.
    #[serde(default)]
    pub labels: Map<String, Value>,
    /// Check the history's tool calls (default true).
    pub validate_history: Option<bool>,
    /// When the render must stop ([`RenderOptions::deadline`]); not read
    /// from JSON: the host sets it.
    #[serde(skip)]
    pub deadline: Option<std::time::Instant>,
    /// A token that cancels the render ([`RenderOptions::cancel`]); not
    /// read from JSON: the host sets it.
    #[serde(skip)]
    pub cancel: Option<crate::options::CancelToken>,
}

/// Why a [`RenderRequest`] did not render.
#[derive(Debug)]
pub enum RequestError {
    /// A field that cannot be used as it is (`now` that is not RFC 3339,
    /// an unknown time zone, data that is not an object): the request's
    /// fault, not the prompt's.
    Malformed(String),
    /// The prompt did not render with it (`render` and `input` errors,
    /// such as a history that is not a list of messages).
    Render(Error),
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::Malformed(message) => f.write_str(message),
            RequestError::Render(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for RequestError {}

impl RenderRequest {
    /// A request of just `data`.
    pub fn with_data(data: Value) -> RenderRequest {
        RenderRequest {
            data: Some(data),
            ..RenderRequest::default()
        }
    }

    /// Renders `prompt` with this request: a chat template with exactly
    /// the data (and the history as `messages`), as `transformers` does;
    /// any other prompt as a turn ([`Prompt::render_turn_with`]) with the
    /// turn, clock, history and labels given.
    pub fn render(self, prompt: &Prompt) -> Result<Rendered, RequestError> {
        let malformed = RequestError::Malformed;
        let clock = match &self.now {
            Some(now) => {
                Clock::parse(now).map_err(|error| malformed(format!("now: {}", error.message())))?
            }
            None => Clock::default(),
        };
        let data = match self.data {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(Value::Object(data)) => Value::Object(data),
            Some(other) => {
                return Err(malformed(format!(
                    "data must be an object, not {}",
                    crate::data::describe(&other)
                )))
            }
        };
        if prompt.syntax() == Syntax::ChatTemplate {
            let mut data = data;
            if let (Some(history), Value::Object(map)) = (self.history, &mut data) {
                map.insert("messages".into(), history);
            }
            let mut options = RenderOptions::new().with_clock(clock);
            options.deadline = self.deadline;
            options.cancel = self.cancel;
            return prompt
                .render_with(data, &options)
                .map_err(RequestError::Render);
        }
        let mut context = PromptContext::new()
            .data(data)
            .map_err(RequestError::Render)?
            .clock(clock);
        if let Some(zone) = &self.time_zone {
            context = context
                .time_zone_named(zone)
                .map_err(|error| malformed(format!("time_zone: {}", error.message())))?;
        }
        if let Some(turn) = self.turn {
            context = context.turn(turn);
        }
        if let Some(max) = self.max_turns {
            context = context.max_turns(max);
        }
        if let Some(attempt) = self.attempt {
            context = context.attempt(attempt);
        }
        if let Some(history) = self.history {
            let history = history_from_value(history).map_err(|error| {
                RequestError::Render(Error::new(
                    ErrorClass::Input,
                    format!("bad history: {error}"),
                ))
            })?;
            context = context.with_history(history);
        }
        for (key, value) in self.labels {
            let value = match value {
                Value::String(text) => text,
                other => other.to_string(),
            };
            context = context.label(key, value);
        }
        let mut options =
            RenderOptions::new().with_validate_history(self.validate_history.unwrap_or(true));
        options.deadline = self.deadline;
        options.cancel = self.cancel;
        prompt
            .render_turn_with(&context, &options)
            .map_err(RequestError::Render)
    }
}

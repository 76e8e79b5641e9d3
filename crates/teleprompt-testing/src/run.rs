//! Running a test case: render, compare, and say how it differs.

use std::sync::Arc;

use serde_json::Value;

use teleprompt::context::Clock;
use teleprompt::messages::{ContentPart, Entry, StablePrefix};
use teleprompt::{Error, ErrorClass, Prompt, PromptContext, RenderOptions, Rendered};

use crate::{Expectation, ExpectedError, ExpectedMessage, TestCase};

/// The result of one case.
#[derive(Debug)]
pub struct CaseResult<'a> {
    /// The case.
    pub case: &'a TestCase,
    /// Pass, or how it failed.
    pub outcome: Outcome,
    /// What the render gave, in the shape the case expects (text or
    /// messages); `None` when it failed or the case expects an error.
    pub actual: Option<Actual>,
}

impl CaseResult<'_> {
    /// Whether the case passed.
    pub fn passed(&self) -> bool {
        matches!(self.outcome, Outcome::Pass)
    }
}

/// Whether a case passed.
#[derive(Debug)]
pub enum Outcome {
    /// What came out is what the case expects.
    Pass,
    /// It is not.
    Fail(Mismatch),
}

/// What a render gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Actual {
    /// The rendered text.
    Text(String),
    /// The conversation, as roles and contents.
    Messages(Vec<ExpectedMessage>),
}

/// How a case failed.
#[derive(Debug)]
pub enum Mismatch {
    /// The text differs (`expected` is `None` when the case has not
    /// recorded it yet).
    Text {
        /// `expect`.
        expected: Option<String>,
        /// The rendered text.
        actual: String,
    },
    /// The messages differ.
    Messages {
        /// `expect_messages`.
        expected: Option<Vec<ExpectedMessage>>,
        /// The rendered conversation.
        actual: Vec<ExpectedMessage>,
    },
    /// The case expects output; the render (or the load) failed.
    Error(Error),
    /// The case expects an error; the render succeeded.
    NoError {
        /// `expect_error`.
        expected: ExpectedError,
        /// The rendered text.
        actual: String,
    },
    /// The case expects an error; another one came.
    OtherError {
        /// `expect_error`.
        expected: ExpectedError,
        /// The error.
        actual: Error,
    },
    /// `prefix_stable: true`, and the next turn changes the prompt before
    /// the end of this turn's history.
    Prefix(Box<StablePrefix>),
}

impl Mismatch {
    /// What went wrong, in words: a line diff (`-` expected, `+` actual)
    /// for text and messages, the error report for an error.
    pub fn report(&self) -> String {
        match self {
            Mismatch::Text {
                expected: None,
                actual,
            } => format!(
                "no expected text is recorded (run with --update to record it); the render gave:\n{}",
                indent(actual)
            ),
            Mismatch::Text {
                expected: Some(expected),
                actual,
            } => format!("the text differs:\n{}", diff(expected, actual)),
            Mismatch::Messages {
                expected: None,
                actual,
            } => format!(
                "no expected messages are recorded (run with --update to record them); the render gave:\n{}",
                indent(&messages_text(actual))
            ),
            Mismatch::Messages { expected: Some(expected), actual } => format!(
                "the messages differ:\n{}",
                diff(&messages_text(expected), &messages_text(actual))
            ),
            Mismatch::Error(error) => format!("the render failed:\n{}", indent(&error.report())),
            Mismatch::NoError { expected, actual } => format!(
                "expected {}, but the render succeeded:\n{}",
                describe_expected(expected),
                indent(actual)
            ),
            Mismatch::OtherError { expected, actual } => format!(
                "expected {}, got:\n{}",
                describe_expected(expected),
                indent(&actual.report())
            ),
            Mismatch::Prefix(prefix) => prefix_report(prefix),
        }
    }
}

/// Why a case's prompt is not prefix-stable, in words.
fn prefix_report(prefix: &StablePrefix) -> String {
    let mut out = String::from(
        "the next turn (a day and an hour later, the history an exchange longer) changes the prompt before the end of this turn's history",
    );
    if let Some(change) = &prefix.change {
        out.push_str(&format!(
            ": message {}, line {}",
            change.message + 1,
            change.line
        ));
        if let Some(place) = change.written_at() {
            out.push_str(&format!(", written at {place}"));
        }
    }
    out.push_str(&format!(
        "; a provider's prompt cache keeps only the first {} bytes\n    help: print what changes every turn after the history, or in the last message\n",
        prefix.bytes
    ));
    out
}

fn describe_expected(expected: &ExpectedError) -> String {
    let class = expected
        .class
        .map_or("an".to_string(), |class| format!("a {class}"));
    match &expected.message_contains {
        Some(text) => format!("{class} error containing {text:?}"),
        None => format!("{class} error"),
    }
}

fn indent(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A unified line diff of `expected` and `actual`, three lines of context.
pub fn diff(expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(3)
        .missing_newline_hint(true)
        .header("expected", "actual")
        .to_string()
}

/// Messages as text for a diff: `[role]` then the content.
fn messages_text(messages: &[ExpectedMessage]) -> String {
    let mut out = String::new();
    for message in messages {
        out.push('[');
        out.push_str(&message.role);
        out.push_str("]\n");
        out.push_str(&message.content);
        if !message.content.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// Runs `case` against `prompt` (or against the error that kept the
/// prompt from loading).
pub fn run_case<'a>(prompt: Result<&Prompt, &Error>, case: &'a TestCase) -> CaseResult<'a> {
    let rendered = match prompt {
        Ok(prompt) => render(prompt, case),
        Err(error) => Err(error.clone()),
    };
    let (mut outcome, actual) = judge(case, rendered);
    if let (Outcome::Pass, Ok(prompt), true) = (&outcome, prompt, case.prefix_stable) {
        if let Err(mismatch) = prefix_stable(prompt, case) {
            outcome = Outcome::Fail(mismatch);
        }
    }
    CaseResult {
        case,
        outcome,
        actual,
    }
}

/// `prefix_stable: true`: the case's turn and the next one, rendered with
/// source maps; the next must keep the case's conversation up to the end
/// of its history.
fn prefix_stable(prompt: &Prompt, case: &TestCase) -> Result<(), Mismatch> {
    let options = RenderOptions::new().with_source_map(true);
    // One clock for both turns when the case gives none.
    let now = case.now.unwrap_or(Clock::Fixed(Clock::System.now()));
    let chat = TestCase::is_chat_template(prompt);
    // A turn number in both (a chat template has none: its data is all
    // it reads), so the two differ by one turn, not by having one.
    let this = TestCase {
        now: Some(now),
        turn: (!chat).then(|| case.turn.unwrap_or(1)),
        ..case.clone()
    };
    let later = now
        .now()
        .checked_add(std::time::Duration::from_secs(86_400 + 3_600 + 61))
        .map_err(|error| Mismatch::Error(Error::new(ErrorClass::Input, error.to_string())))?;
    let reply = |role: &str, content: &str| serde_json::json!({"role": role, "content": content});
    let exchange = [
        reply("assistant", "(the assistant's reply)"),
        reply("user", "(the user's next message)"),
    ];
    let mut history_value = match &case.history_value {
        Some(Value::Object(object)) => object.get("messages").cloned().unwrap_or(Value::Null),
        Some(other) => other.clone(),
        // A chat template's conversation may be in its data.
        None if chat => case
            .data
            .get("messages")
            .cloned()
            .unwrap_or(Value::Array(Vec::new())),
        None => Value::Array(Vec::new()),
    };
    if let Value::Array(messages) = &mut history_value {
        messages.extend(exchange.iter().cloned());
    }
    let history = teleprompt::messages::history_from_value(history_value.clone())
        .map_err(|error| Mismatch::Error(Error::new(ErrorClass::Input, error.to_string())))?;
    let next = TestCase {
        turn: (!chat).then(|| case.turn.unwrap_or(1).saturating_add(1)),
        now: Some(Clock::Fixed(later)),
        history: Some(history),
        history_value: Some(history_value),
        ..case.clone()
    };
    let first = render_with(prompt, &this, &options).map_err(Mismatch::Error)?;
    let second = render_with(prompt, &next, &options).map_err(Mismatch::Error)?;
    let prefix = second.stable_prefix(&first);
    match prefix.through_history {
        true => Ok(()),
        false => Err(Mismatch::Prefix(Box::new(prefix))),
    }
}

fn render(prompt: &Prompt, case: &TestCase) -> Result<Rendered, Error> {
    render_with(prompt, case, &RenderOptions::new())
}

/// Renders `case` with `base` options (the case's clock and context set
/// on them).
fn render_with(prompt: &Prompt, case: &TestCase, base: &RenderOptions) -> Result<Rendered, Error> {
    if TestCase::is_chat_template(prompt) {
        // What transformers gives a chat template: the data and the clock.
        let unused = [
            ("turn", case.turn.is_some()),
            ("max_turns", case.max_turns.is_some()),
            ("attempt", case.attempt.is_some()),
            ("time_zone", case.time_zone.is_some()),
            ("context", case.context.is_some()),
        ];
        if let Some((key, _)) = unused.iter().find(|(_, set)| *set) {
            return Err(Error::new(
                ErrorClass::Input,
                format!(
                    "a chat template renders from its data alone: `{key}` has no meaning here \
                     (give `messages`, `tools`, `add_generation_prompt`, … in `data`, or `history`)"
                ),
            )
            .with_file(prompt.origin()));
        }
        let options = base.clone().with_clock(case.now.unwrap_or_default());
        return prompt.render_with(case.chat_data(), &options);
    }
    let mut context = PromptContext::new().data(case.data.clone())?;
    if let Some(clock) = case.now {
        context = context.clock(clock);
    }
    if let Some(zone) = &case.time_zone {
        context = context.time_zone_named(zone)?;
    }
    if let Some(turn) = case.turn {
        context = context.turn(turn);
    }
    if let Some(max) = case.max_turns {
        context = context.max_turns(max);
    }
    if let Some(attempt) = case.attempt {
        context = context.attempt(attempt);
    }
    if let Some(history) = &case.history {
        context = context.with_history(history.clone());
    }
    let mut options = base.clone();
    options.context = case.context.clone().map(Arc::new);
    prompt.render_turn_with(&context, &options)
}

fn judge(case: &TestCase, rendered: Result<Rendered, Error>) -> (Outcome, Option<Actual>) {
    match (&case.expect, rendered) {
        (Expectation::Error(expected), Ok(rendered)) => (
            Outcome::Fail(Mismatch::NoError {
                expected: expected.clone(),
                actual: rendered.into_text(),
            }),
            None,
        ),
        (Expectation::Error(expected), Err(error)) => match error_matches(expected, &error) {
            true => (Outcome::Pass, None),
            false => (
                Outcome::Fail(Mismatch::OtherError {
                    expected: expected.clone(),
                    actual: error,
                }),
                None,
            ),
        },
        (_, Err(error)) => (Outcome::Fail(Mismatch::Error(error)), None),
        (Expectation::Text(expected), Ok(rendered)) => {
            let actual = rendered.into_text();
            let outcome = match expected.as_deref() == Some(actual.as_str()) {
                true => Outcome::Pass,
                false => Outcome::Fail(Mismatch::Text {
                    expected: expected.clone(),
                    actual: actual.clone(),
                }),
            };
            (outcome, Some(Actual::Text(actual)))
        }
        (Expectation::Messages(expected), Ok(rendered)) => {
            let actual = conversation(&rendered);
            let outcome = match expected.as_ref() == Some(&actual) {
                true => Outcome::Pass,
                false => Outcome::Fail(Mismatch::Messages {
                    expected: expected.clone(),
                    actual: actual.clone(),
                }),
            };
            (outcome, Some(Actual::Messages(actual)))
        }
    }
}

/// Whether `error` is the error a case expects: its class, and the text in
/// its message, the template text it points at, or its help.
fn error_matches(expected: &ExpectedError, error: &Error) -> bool {
    let class = expected.class.is_none_or(|class| class == error.class());
    let text = expected.message_contains.as_deref().is_none_or(|text| {
        [Some(error.message()), error.action(), error.suggestion()]
            .into_iter()
            .flatten()
            .any(|words| words.contains(text))
    });
    class && text
}

/// The whole conversation of a render as roles and contents.
fn conversation(rendered: &Rendered) -> Vec<ExpectedMessage> {
    rendered
        .conversation()
        .iter()
        .map(|entry| ExpectedMessage {
            role: entry.role().as_str().to_string(),
            content: match entry {
                Entry::Rendered(message) => message
                    .content
                    .iter()
                    .map(|part| match part {
                        ContentPart::Text { text } => text.clone(),
                        ContentPart::Media { url, .. } => format!("[media: {url}]"),
                        // An unfilled section and a cache breakpoint hold
                        // nothing, as in the text.
                        ContentPart::Section { .. } | ContentPart::CacheBreakpoint => String::new(),
                    })
                    .collect(),
                Entry::History(message) => match &message.content {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(text)) => text.clone(),
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .filter_map(|part| part.get("text").and_then(Value::as_str))
                        .collect(),
                    Some(other) => other.to_string(),
                },
            },
        })
        .collect()
}

//! Conversation history: reading it from JSON, checking its tool-call
//! sequencing, and placing it among the rendered messages.

use crate::data::describe;
use std::collections::HashSet;
use std::fmt;
use std::ops::Range;

use serde_json::Value;

use super::markers::Item;
use super::{History, HistoryMessage, Message, Role};
use crate::diagnostics::closest;

/// One of Rapida's four rules for the tool calls in a history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HistoryRule {
    /// An assistant message with tool calls is followed immediately by tool
    /// results.
    ToolCallsAnswered,
    /// The tool results after an assistant message answer exactly its call
    /// ids: none missing, none extra, none twice.
    ToolIdsMatch,
    /// A tool result follows an assistant message with tool calls.
    ToolResultHasCall,
    /// After tool results, the next message (if any) is from the assistant.
    AssistantAfterToolResults,
}

impl HistoryRule {
    /// A short stable name: `tool-calls-answered`, `tool-ids-match`,
    /// `tool-result-has-call`, `assistant-after-tool-results`.
    pub fn name(self) -> &'static str {
        match self {
            HistoryRule::ToolCallsAnswered => "tool-calls-answered",
            HistoryRule::ToolIdsMatch => "tool-ids-match",
            HistoryRule::ToolResultHasCall => "tool-result-has-call",
            HistoryRule::AssistantAfterToolResults => "assistant-after-tool-results",
        }
    }

    /// The rule in one sentence.
    pub fn description(self) -> &'static str {
        match self {
            HistoryRule::ToolCallsAnswered => {
                "an assistant message with tool calls must be followed immediately by tool results"
            }
            HistoryRule::ToolIdsMatch => "tool result ids must match the tool call ids",
            HistoryRule::ToolResultHasCall => {
                "a tool result needs a preceding assistant message with tool calls"
            }
            HistoryRule::AssistantAfterToolResults => {
                "after tool results, the next message must be from the assistant"
            }
        }
    }
}

impl fmt::Display for HistoryRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

/// A history that breaks one of the [`HistoryRule`]s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("history[{index}]: {message}")]
pub struct HistoryError {
    /// The 0-based position of the offending message.
    pub index: usize,
    /// The rule it breaks.
    pub rule: HistoryRule,
    /// What is wrong, naming the ids involved (without the `history[i]: `
    /// prefix that `Display` adds).
    pub message: String,
}

impl HistoryError {
    fn new(index: usize, rule: HistoryRule, message: String) -> HistoryError {
        HistoryError {
            index,
            rule,
            message,
        }
    }
}

/// History JSON that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HistoryParseError {
    /// Not JSON at all.
    #[error("the history is not valid JSON: {message} (line {line}, column {column})")]
    Json {
        /// serde_json's description.
        message: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// JSON, but neither an array nor an object with a `messages` array.
    #[error("the history must be a JSON array of messages or an object with a \"messages\" array, not {found}")]
    Shape {
        /// What was found instead.
        found: String,
    },
    /// One entry is not a chat message.
    #[error("history[{index}]: {message}")]
    Entry {
        /// The 0-based position of the entry.
        index: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// Reads a history in the OpenAI chat shape: a JSON array of messages, or an
/// object whose `messages` field is that array. As in data, a key twice in
/// one object is an error.
///
/// ```
/// let history = teleprompt::messages::parse_history(
///     r#"{"messages": [{"role": "user", "content": "hi"}]}"#,
/// )?;
/// assert_eq!(history.len(), 1);
/// # Ok::<(), teleprompt::messages::HistoryParseError>(())
/// ```
pub fn parse_history(json: &str) -> Result<Vec<HistoryMessage>, HistoryParseError> {
    let value: Value = crate::data::parse_json(json).map_err(|error| HistoryParseError::Json {
        message: json_error_text(&error),
        line: error.line(),
        column: error.column(),
    })?;
    history_from_value(value)
}

/// Like [`parse_history`], from JSON already parsed.
pub fn history_from_value(value: Value) -> Result<Vec<HistoryMessage>, HistoryParseError> {
    let entries = match value {
        Value::Array(entries) => entries,
        Value::Object(mut object) => match object.remove("messages") {
            Some(Value::Array(entries)) => entries,
            Some(other) => {
                return Err(HistoryParseError::Shape {
                    found: format!("an object whose \"messages\" is {}", describe(&other)),
                })
            }
            None => {
                return Err(HistoryParseError::Shape {
                    found: "an object without \"messages\"".to_string(),
                })
            }
        },
        other => {
            return Err(HistoryParseError::Shape {
                found: describe(&other).to_string(),
            })
        }
    };
    entries
        .into_iter()
        .enumerate()
        .map(|(index, entry)| {
            parse_entry(entry).map_err(|message| HistoryParseError::Entry { index, message })
        })
        .collect()
}

fn parse_entry(entry: Value) -> Result<HistoryMessage, String> {
    let Value::Object(object) = &entry else {
        return Err(format!(
            "expected a message object, found {}",
            describe(&entry)
        ));
    };
    match object.get("role") {
        None => return Err("the message has no \"role\"".to_string()),
        Some(Value::String(name)) => check_role_name(name)?,
        Some(other) => {
            return Err(format!(
                "\"role\" must be a string, not {}",
                describe(other)
            ))
        }
    }
    serde_json::from_value(entry).map_err(|error| json_error_text(&error))
}

fn check_role_name(name: &str) -> Result<(), String> {
    if Role::parse(name).is_some() {
        return Ok(());
    }
    let names = Role::ALL.map(Role::as_str);
    Err(match closest(name, names) {
        Some(near) => format!("unknown role \"{name}\": did you mean \"{near}\"?"),
        None => format!(
            "unknown role \"{name}\": use one of \"system\", \"developer\", \"user\", \"assistant\", \"tool\""
        ),
    })
}

/// serde_json's message without its " at line L column C" tail.
fn json_error_text(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(cut) if error.line() > 0 => text.get(..cut).unwrap_or(&text).to_string(),
        _ => text,
    }
}

/// Checks the tool-call sequencing of a history with Rapida's four rules
/// (see [`HistoryRule`]); the first broken rule is the error.
///
/// ```
/// use teleprompt::messages::{parse_history, validate_history, HistoryRule};
///
/// let history = parse_history(r#"[
///   {"role": "user", "content": "weather?"},
///   {"role": "assistant", "tool_calls": [{"id": "call_1", "function": {"name": "weather", "arguments": "{}"}}]},
///   {"role": "user", "content": "hello?"}
/// ]"#)?;
/// let error = validate_history(&history).unwrap_err();
/// assert_eq!(error.index, 2);
/// assert_eq!(error.rule, HistoryRule::ToolCallsAnswered);
/// # Ok::<(), teleprompt::messages::HistoryParseError>(())
/// ```
pub fn validate_history(history: &[HistoryMessage]) -> Result<(), HistoryError> {
    check(history)
}

/// Messages that the tool-call rules can be checked on: a slice, a
/// [`History`].
pub(crate) trait Messages {
    /// How many messages.
    fn count(&self) -> usize;
    /// The message at `index`.
    fn at(&self, index: usize) -> Option<&HistoryMessage>;
}

impl Messages for [HistoryMessage] {
    fn count(&self) -> usize {
        self.len()
    }

    fn at(&self, index: usize) -> Option<&HistoryMessage> {
        self.get(index)
    }
}

impl Messages for History {
    fn count(&self) -> usize {
        self.len()
    }

    fn at(&self, index: usize) -> Option<&HistoryMessage> {
        self.get(index)
    }
}

/// [`validate_history`] of any messages.
pub(crate) fn check<M: Messages + ?Sized>(history: &M) -> Result<(), HistoryError> {
    let mut index = 0;
    while let Some(message) = history.at(index) {
        index = match message.role {
            Role::Assistant if !message.tool_calls.is_empty() => {
                check_tool_round(history, index, message)?
            }
            Role::Tool => return Err(HistoryError::orphan_result(index, message)),
            _ => index + 1,
        };
    }
    Ok(())
}

/// Checks the tool results that follow the assistant message at `call_index`
/// and the message after them; returns the index after the results.
fn check_tool_round<M: Messages + ?Sized>(
    history: &M,
    call_index: usize,
    call: &HistoryMessage,
) -> Result<usize, HistoryError> {
    let first = call_index + 1;
    let end = (first..history.count())
        .find(|&index| {
            history
                .at(index)
                .is_none_or(|message| message.role != Role::Tool)
        })
        .unwrap_or(history.count());
    if end == first {
        let next = history.at(first).map(|next| next.role);
        return Err(HistoryError::unanswered(call_index, call, next));
    }
    check_ids(history, call_index, call, first..end)?;
    match history.at(end) {
        Some(next) if next.role != Role::Assistant => {
            Err(HistoryError::after_results(end, next.role, first))
        }
        _ => Ok(end),
    }
}

fn check_ids<M: Messages + ?Sized>(
    history: &M,
    call_index: usize,
    call: &HistoryMessage,
    results: Range<usize>,
) -> Result<(), HistoryError> {
    let calls: Vec<&str> = call.tool_calls.iter().map(|c| c.id.as_str()).collect();
    let called: HashSet<&str> = calls.iter().copied().collect();
    let round = || {
        results
            .clone()
            .filter_map(|index| Some((index, history.at(index)?)))
    };
    let mut answered: HashSet<&str> = HashSet::with_capacity(results.len());
    for (index, result) in round() {
        let Some(id) = result.tool_call_id.as_deref() else {
            return Err(HistoryError::result_without_id(index, call_index, call));
        };
        if !called.contains(id) {
            let answered: HashSet<&str> = round()
                .filter_map(|(_, message)| message.tool_call_id.as_deref())
                .collect();
            let missing = calls.iter().copied().filter(|id| !answered.contains(id));
            return Err(HistoryError::orphan_id(
                index, id, call_index, call, missing,
            ));
        }
        if !answered.insert(id) {
            return Err(HistoryError::answered_twice(index, id, call_index));
        }
    }
    let mut missing = calls
        .iter()
        .copied()
        .filter(|id| !answered.contains(id))
        .peekable();
    if missing.peek().is_none() {
        return Ok(());
    }
    Err(HistoryError::missing_results(call_index, missing, results))
}

/// The errors of the tool-call rules, one constructor each: the whole-history
/// check above and the incremental one of the context
/// (`crate::context`) word them alike.
impl HistoryError {
    /// Rule (a): the assistant message at `call_index` made tool calls and
    /// the next message (of role `next`, or none: the history ends) is not
    /// a tool result.
    pub(crate) fn unanswered(
        call_index: usize,
        call: &HistoryMessage,
        next: Option<Role>,
    ) -> HistoryError {
        let ids = quoted(call.tool_calls.iter().map(|c| c.id.as_str()));
        match next {
            Some(next) => HistoryError::new(
                call_index + 1,
                HistoryRule::ToolCallsAnswered,
                format!(
                    "expected tool results for the tool calls of history[{call_index}] ({ids}), found a {} message",
                    next.as_str()
                ),
            ),
            None => HistoryError::new(
                call_index,
                HistoryRule::ToolCallsAnswered,
                format!("the tool calls {ids} have no results: the history ends after them"),
            ),
        }
    }

    /// Rule (b): the tool result at `index` has no `tool_call_id`.
    pub(crate) fn result_without_id(
        index: usize,
        call_index: usize,
        call: &HistoryMessage,
    ) -> HistoryError {
        HistoryError::new(
            index,
            HistoryRule::ToolIdsMatch,
            format!(
                "tool result has no \"tool_call_id\"; the calls of history[{call_index}] are {}",
                quoted(call.tool_calls.iter().map(|c| c.id.as_str()))
            ),
        )
    }

    /// Rule (b): the tool result at `index` answers `id`, which is not among
    /// the calls; `missing` are the calls that no result of the round
    /// answers, in call order.
    pub(crate) fn orphan_id<'a>(
        index: usize,
        id: &str,
        call_index: usize,
        call: &HistoryMessage,
        missing: impl IntoIterator<Item = &'a str>,
    ) -> HistoryError {
        let missing = quoted(missing);
        let mut message = format!(
            "tool result \"{id}\" answers no tool call of history[{call_index}] (calls: {})",
            quoted(call.tool_calls.iter().map(|c| c.id.as_str()))
        );
        if !missing.is_empty() {
            message.push_str("; no result answers ");
            message.push_str(&missing);
        }
        HistoryError::new(index, HistoryRule::ToolIdsMatch, message)
    }

    /// Rule (b): the tool result at `index` answers `id` a second time.
    pub(crate) fn answered_twice(index: usize, id: &str, call_index: usize) -> HistoryError {
        HistoryError::new(
            index,
            HistoryRule::ToolIdsMatch,
            format!("tool result \"{id}\" answers the same tool call of history[{call_index}] a second time"),
        )
    }

    /// Rule (b): no result in `results` answers the `missing` calls of the
    /// assistant message at `call_index`.
    pub(crate) fn missing_results<'a>(
        call_index: usize,
        missing: impl IntoIterator<Item = &'a str>,
        results: Range<usize>,
    ) -> HistoryError {
        HistoryError::new(
            call_index,
            HistoryRule::ToolIdsMatch,
            format!(
                "tool calls {} have no result in history[{}..={}]",
                quoted(missing),
                results.start,
                results.end.saturating_sub(1)
            ),
        )
    }

    /// Rule (d): a message of role `role` at `index` follows the tool results
    /// that start at `first`.
    pub(crate) fn after_results(index: usize, role: Role, first: usize) -> HistoryError {
        HistoryError::new(
            index,
            HistoryRule::AssistantAfterToolResults,
            format!(
                "a {} message follows the tool results in history[{}..={}]; the next message after tool results must be from the assistant",
                role.as_str(),
                first,
                index.saturating_sub(1)
            ),
        )
    }

    /// Rule (c): the tool result at `index` follows no assistant message
    /// with tool calls.
    pub(crate) fn orphan_result(index: usize, message: &HistoryMessage) -> HistoryError {
        let what = match message.tool_call_id.as_deref() {
            Some(id) => format!("tool result \"{id}\""),
            None => "tool result".to_string(),
        };
        HistoryError::new(
            index,
            HistoryRule::ToolResultHasCall,
            format!("{what} does not follow an assistant message with tool calls"),
        )
    }
}

fn quoted<'a>(ids: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for (i, id) in ids.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('"');
        out.push_str(id);
        out.push('"');
    }
    out
}

/// One message of the final conversation: written by the template, or taken
/// from the history. Borrowed, so that assembling a conversation copies
/// neither the rendered messages nor the history.
///
/// Serialises as the message it holds: a [`Message`] (role and content
/// parts) or a [`HistoryMessage`] (OpenAI shape, as it came).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Entry<'a> {
    /// A message the template wrote.
    Rendered(&'a Message),
    /// A message of the history.
    History(&'a HistoryMessage),
}

impl Entry<'_> {
    /// Who speaks.
    pub fn role(&self) -> Role {
        match self {
            Entry::Rendered(message) => message.role,
            Entry::History(message) => message.role,
        }
    }
}

/// The final conversation: the rendered messages, with the history spliced
/// in where the template placed `history()`; without a placeholder, the
/// rendered messages come first and the history after them (Rapida's rule).
pub(crate) fn assemble<'a>(items: &'a [Item], history: &'a History) -> Vec<Entry<'a>> {
    assemble_marked(items, history).0
}

/// [`assemble`], with where the cache breakpoints that stand between
/// entries are (after the history: one after the entry count given).
pub(crate) fn assemble_marked<'a>(
    items: &'a [Item],
    history: &'a History,
) -> (Vec<Entry<'a>>, Vec<usize>) {
    let mut entries = Vec::with_capacity(items.len() + history.len());
    let mut marks = Vec::new();
    let mut placed = false;
    for item in items {
        match item {
            Item::Message(message) => entries.push(Entry::Rendered(message)),
            Item::History if !placed => {
                placed = true;
                entries.extend(history.iter().map(Entry::History));
            }
            Item::History => {}
            Item::CacheBreakpoint => marks.push(entries.len()),
        }
    }
    if !placed {
        entries.extend(history.iter().map(Entry::History));
    }
    (entries, marks)
}

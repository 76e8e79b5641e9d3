//! The history a context holds: the shared messages (a
//! [`History`], grown by appending), and what a turn needs from them (the
//! verdict of the tool-call rules, the latest user language), kept up to
//! date message by message so that a turn never reads the whole history
//! again.
//!
//! A clone of the context shares the messages, and so does a render's
//! [`crate::Rendered`]; an append writes the new message beside them
//! without copying any (see [`History`]), whatever else still holds them.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::messages::{History, HistoryError, HistoryMessage, Role};

/// The messages and what is known about them.
#[derive(Clone, Default)]
pub(super) struct Tracked {
    messages: History,
    known: Arc<Known>,
}

/// Facts about exactly the messages beside them, found when first asked
/// (a history set whole) and then carried along by each append.
#[derive(Clone, Default)]
struct Known {
    /// Where the tool-call rules stand.
    rules: OnceLock<RuleCheck>,
    /// The `language` of the latest user message that has a non-empty one.
    language: OnceLock<Option<Arc<str>>>,
}

impl std::fmt::Debug for Tracked {
    /// The length, not the messages: a context is printed in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History")
            .field("messages", &self.messages.len())
            .field("latest_language", &self.known.language.get())
            .finish()
    }
}

impl Tracked {
    /// A history set whole: nothing is known about it until asked.
    pub(super) fn new(messages: History) -> Tracked {
        Tracked {
            messages,
            known: Arc::default(),
        }
    }

    /// The shared messages.
    pub(super) fn messages(&self) -> &History {
        &self.messages
    }

    /// Appends one message; what is known follows it in constant time
    /// (times the message's own tool calls).
    pub(super) fn push(&mut self, message: HistoryMessage) {
        let language = user_language(&message).map(Arc::<str>::from);
        self.messages.push(message);
        let known = Arc::make_mut(&mut self.known);
        if let Some(rules) = known.rules.get_mut() {
            rules.push(&self.messages);
        }
        if let Some(language) = language {
            known.language = OnceLock::from(Some(language));
        }
    }

    /// The verdict of the tool-call rules: the same as
    /// [`crate::messages::validate_history`] on the messages.
    pub(super) fn verdict(&self) -> Result<(), HistoryError> {
        self.known
            .rules
            .get_or_init(|| RuleCheck::scan(&self.messages))
            .verdict(&self.messages)
    }

    /// The latest user message's language (searched backwards once, when
    /// first asked of a history set whole).
    pub(super) fn latest_language(&self) -> Option<&Arc<str>> {
        self.known
            .language
            .get_or_init(|| latest_user_language(&self.messages).map(Arc::from))
            .as_ref()
    }
}

/// A user message's non-empty `language`.
fn user_language(message: &HistoryMessage) -> Option<&str> {
    if message.role != Role::User {
        return None;
    }
    let language = message.extra.get("language")?.as_str()?;
    (!language.is_empty()).then_some(language)
}

/// The `language` of the latest user message that has a non-empty one.
pub(super) fn latest_user_language(messages: &History) -> Option<&str> {
    messages.iter().rev().find_map(user_language)
}

/// The tool-call rules checked one message at a time: after each message,
/// [`RuleCheck::verdict`] is what [`crate::messages::validate_history`]
/// says of the messages so far, the same error at the same index with the
/// same words.
///
/// That check stops at the first broken rule, so a broken rule is final:
/// messages after it change nothing. Until then, only the last tool round
/// can still change its verdict (a history that ends after tool calls, or
/// in the middle of their results, breaks a rule that the next message may
/// mend), so the state is that round: the index of the assistant message
/// that made the calls, where its results start, which calls they answer,
/// and the first result that broke rule (b), if any.
#[derive(Clone, Debug, Default)]
pub(super) struct RuleCheck {
    /// How many messages were checked.
    checked: usize,
    state: State,
}

#[derive(Clone, Debug, Default)]
enum State {
    /// No tool round open: the last message neither made tool calls nor
    /// is a tool result (or there is none).
    #[default]
    Clear,
    /// The last message, at `call`, is an assistant message with tool calls.
    Calls { call: usize },
    /// The last messages are the tool results of a round.
    Results(Round),
    /// A rule is broken: the verdict, whatever follows.
    Broken(HistoryError),
}

/// The tool results after the assistant message at `call`, from `first`.
#[derive(Clone, Debug)]
struct Round {
    call: usize,
    first: usize,
    /// By call position: whether a result answers the call with this id
    /// (set at the first call that has the id).
    answered: Vec<bool>,
    /// Call id → the first position with that id, for rounds with many
    /// calls (a few are searched in a line).
    positions: Option<HashMap<Box<str>, usize>>,
    /// The first result that broke rule (b).
    bad: Option<Bad>,
}

/// The first result of a round that broke rule (b), by index.
#[derive(Clone, Copy, Debug)]
enum Bad {
    /// It has no `tool_call_id`.
    WithoutId(usize),
    /// Its id is not among the calls.
    Orphan(usize),
    /// Its id was answered before in the round.
    Twice(usize),
}

/// Rounds with more calls than this index their ids in a map.
const LINEAR_CALLS: usize = 16;

impl RuleCheck {
    /// Checks a whole history (up to its first broken rule).
    pub(super) fn scan(messages: &History) -> RuleCheck {
        let mut check = RuleCheck::default();
        // The base first, as a slice: a tight loop, which matters when a
        // long history is set whole every turn.
        let (base, appended) = messages.split();
        for (index, message) in base.iter().enumerate() {
            if !check.scan_one(messages, index, message) {
                break;
            }
        }
        for (index, message) in (base.len()..).zip(appended) {
            if !check.scan_one(messages, index, message) {
                break;
            }
        }
        check.checked = messages.len();
        check
    }

    /// One message of [`RuleCheck::scan`]; false once a rule is broken.
    #[inline]
    fn scan_one(&mut self, messages: &History, index: usize, message: &HistoryMessage) -> bool {
        match self.state {
            State::Broken(_) => return false,
            // Most messages: outside any round, and opening none.
            State::Clear
                if message.role != Role::Tool
                    && (message.role != Role::Assistant || message.tool_calls.is_empty()) => {}
            _ => {
                self.checked = index;
                self.check(messages, index, message);
            }
        }
        true
    }

    /// Checks the last of `messages`, the ones before it being checked.
    pub(super) fn push(&mut self, messages: &History) {
        let Some(index) = messages.len().checked_sub(1) else {
            return;
        };
        if let Some(message) = messages.get(index) {
            self.check(messages, index, message);
        }
    }

    /// Checks `message`, at `index` of `messages`, the ones before it
    /// being checked (the ones after it are not looked at).
    fn check(&mut self, messages: &History, index: usize, message: &HistoryMessage) {
        debug_assert_eq!(self.checked, index, "messages checked out of order");
        self.checked = index + 1;
        let state = std::mem::take(&mut self.state);
        let open = match &state {
            State::Calls { call } => Some(*call),
            State::Results(round) => Some(round.call),
            State::Clear | State::Broken(_) => None,
        };
        let calls = open.and_then(|call| messages.get(call));
        self.state = match (state, calls) {
            (State::Broken(error), _) => State::Broken(error),
            (State::Calls { call }, Some(calls)) => {
                if message.role == Role::Tool {
                    let mut round = Round::new(call, index, calls);
                    round.answer(calls, index, message);
                    State::Results(round)
                } else {
                    State::Broken(HistoryError::unanswered(call, calls, Some(message.role)))
                }
            }
            (State::Results(mut round), Some(calls)) => {
                if message.role == Role::Tool {
                    round.answer(calls, index, message);
                    State::Results(round)
                } else if let Some(error) = round.error(messages, index) {
                    State::Broken(error)
                } else if message.role != Role::Assistant {
                    State::Broken(HistoryError::after_results(
                        index,
                        message.role,
                        round.first,
                    ))
                } else {
                    State::start(index, message)
                }
            }
            // No round open (a round's call is always among the messages).
            _ => State::start(index, message),
        };
    }

    /// What [`crate::messages::validate_history`] says of `messages`, the
    /// messages checked.
    pub(super) fn verdict(&self, messages: &History) -> Result<(), HistoryError> {
        debug_assert_eq!(self.checked, messages.len(), "verdict on other messages");
        match &self.state {
            State::Clear => Ok(()),
            State::Broken(error) => Err(error.clone()),
            State::Calls { call } => match messages.get(*call) {
                Some(calls) => Err(HistoryError::unanswered(*call, calls, None)),
                None => Ok(()),
            },
            State::Results(round) => match round.error(messages, messages.len()) {
                Some(error) => Err(error),
                None => Ok(()),
            },
        }
    }
}

impl State {
    /// The state after `message` at `index`, outside any round.
    fn start(index: usize, message: &HistoryMessage) -> State {
        match message.role {
            Role::Assistant if !message.tool_calls.is_empty() => State::Calls { call: index },
            Role::Tool => State::Broken(HistoryError::orphan_result(index, message)),
            _ => State::Clear,
        }
    }
}

impl Round {
    fn new(call: usize, first: usize, calls: &HistoryMessage) -> Round {
        let count = calls.tool_calls.len();
        let positions = (count > LINEAR_CALLS).then(|| {
            let mut positions = HashMap::with_capacity(count);
            for (position, tool_call) in calls.tool_calls.iter().enumerate() {
                positions
                    .entry(Box::from(tool_call.id.as_str()))
                    .or_insert(position);
            }
            positions
        });
        Round {
            call,
            first,
            answered: vec![false; count],
            positions,
            bad: None,
        }
    }

    /// The first call position with id `id`.
    fn position(&self, calls: &HistoryMessage, id: &str) -> Option<usize> {
        match &self.positions {
            Some(positions) => positions.get(id).copied(),
            None => calls.tool_calls.iter().position(|call| call.id == id),
        }
    }

    /// Takes the tool result at `index` into the round.
    fn answer(&mut self, calls: &HistoryMessage, index: usize, result: &HistoryMessage) {
        let Some(id) = result.tool_call_id.as_deref() else {
            self.bad.get_or_insert(Bad::WithoutId(index));
            return;
        };
        let Some(position) = self.position(calls, id) else {
            self.bad.get_or_insert(Bad::Orphan(index));
            return;
        };
        if let Some(answered) = self.answered.get_mut(position) {
            if *answered {
                self.bad.get_or_insert(Bad::Twice(index));
            }
            *answered = true;
        }
    }

    /// The ids of the calls that no result of the round answers, in call
    /// order.
    fn missing<'a>(&'a self, calls: &'a HistoryMessage) -> impl Iterator<Item = &'a str> + 'a {
        calls.tool_calls.iter().filter_map(move |call| {
            let answered = self
                .position(calls, &call.id)
                .and_then(|position| self.answered.get(position))
                .copied()
                .unwrap_or(false);
            (!answered).then_some(call.id.as_str())
        })
    }

    /// The broken rule of the round when the history is the first `end`
    /// of `messages` (the round's results last).
    fn error(&self, messages: &History, end: usize) -> Option<HistoryError> {
        let calls = messages.get(self.call)?;
        let id = |index: usize| {
            messages
                .get(index)
                .and_then(|message| message.tool_call_id.as_deref())
                .unwrap_or_default()
        };
        Some(match self.bad {
            Some(Bad::WithoutId(index)) => HistoryError::result_without_id(index, self.call, calls),
            Some(Bad::Orphan(index)) => {
                HistoryError::orphan_id(index, id(index), self.call, calls, self.missing(calls))
            }
            Some(Bad::Twice(index)) => HistoryError::answered_twice(index, id(index), self.call),
            None => {
                let mut missing = self.missing(calls).peekable();
                missing.peek()?;
                HistoryError::missing_results(self.call, missing, self.first..end)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn user(language: Option<&str>) -> HistoryMessage {
        let mut extra = Map::new();
        if let Some(language) = language {
            extra.insert("language".into(), json!(language));
        }
        HistoryMessage {
            role: Role::User,
            content: Some(json!("hi")),
            tool_calls: Vec::new(),
            tool_call_id: None,
            extra,
        }
    }

    #[test]
    fn latest_user_language_skips_empty_and_other_roles() {
        let mut assistant = user(Some("de"));
        assistant.role = Role::Assistant;
        let history = History::from(vec![
            user(Some("fr")),
            user(Some("")),
            assistant,
            user(None),
        ]);
        assert_eq!(latest_user_language(&history), Some("fr"));
        assert_eq!(latest_user_language(&History::new()), None);
    }

    #[test]
    fn a_language_the_host_sets_is_not_searched_for() {
        let history = vec![user(Some("fr")); 3];
        let host = crate::context::PromptContext::new()
            .with_history(history.clone())
            .message(json!({"language": "en"}))
            .unwrap();
        host.build(&|_| true).unwrap();
        assert!(host.history.known.language.get().is_none());
        let found = crate::context::PromptContext::new().with_history(history);
        found.build(&|_| true).unwrap();
        assert!(found.history.known.language.get().is_some());
    }

    #[test]
    fn an_append_keeps_what_is_known() {
        let mut history = Tracked::new(History::from(vec![user(Some("fr"))]));
        assert_eq!(history.latest_language().map(|l| &**l), Some("fr"));
        assert_eq!(history.verdict(), Ok(()));
        history.push(user(None));
        assert!(history.known.rules.get().is_some());
        assert_eq!(history.latest_language().map(|l| &**l), Some("fr"));
        history.push(user(Some("de")));
        assert_eq!(history.latest_language().map(|l| &**l), Some("de"));
        assert_eq!(history.verdict(), Ok(()));
    }
}

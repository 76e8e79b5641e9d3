//! The turn workload shared by crates/teleprompt/benches/turn.rs (criterion)
//! and bench/all (the all-engine race): the chat prompt that places the
//! history, its messages, and a conversation's context per turn. Included
//! by both with `#[path]`.

use serde_json::json;
use teleprompt::context::Clock;
use teleprompt::messages::{HistoryMessage, Role};
use teleprompt::PromptContext;

/// A chat prompt that places the history and reads the latest message.
pub const PROMPT: &str = r#"{{ role("system") -}}
You are {{ assistant.name }}. Today is {{ system.day_of_week }}, {{ system.current_date }}.
Answer in {{ message.language }}. This is turn {{ run.turn_number }}.
{{ history() }}
{{- role("user") }}{{ message.text }}
"#;

/// The `i`-th message of a conversation: users and assistants in turn; a
/// user's carries `language` when given.
pub fn message(i: usize, language: Option<&str>) -> HistoryMessage {
    let role = if i.is_multiple_of(2) {
        Role::User
    } else {
        Role::Assistant
    };
    let mut extra = serde_json::Map::new();
    if let (Role::User, Some(language)) = (role, language) {
        extra.insert("language".into(), json!(language));
    }
    HistoryMessage {
        role,
        content: Some(json!(format!(
            "message {i}: some words of the conversation"
        ))),
        tool_calls: Vec::new(),
        tool_call_id: None,
        extra,
    }
}

/// The conversation's context without a history; the host sets
/// `message.language` (so the history is never searched for it) or not.
pub fn conversation(host_language: bool) -> Result<PromptContext, teleprompt::Error> {
    let message = if host_language {
        json!({"text": "What changed?", "language": "English"})
    } else {
        json!({"text": "What changed?"})
    };
    PromptContext::new()
        .assistant(json!({"name": "Ada"}))?
        .message(message)
}

/// The context of turn `turn`: the conversation's, with the turn and a clock.
pub fn turn_context(conversation: &PromptContext, turn: u32) -> PromptContext {
    let now = jiff::Timestamp::from_second(1_790_000_000 + i64::from(turn)).expect("in range");
    conversation.clone().turn(turn).clock(Clock::Fixed(now))
}

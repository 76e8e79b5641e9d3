//! Whether a chat template only appends as its conversation grows: the
//! output for the first `k` messages is a prefix of the output for the
//! first `k + 1`. A server can then keep the cached prefix (the KV cache
//! of an open model) and a turn can be rendered by its new text alone;
//! a template that rewrites earlier turns (one that drops the reasoning
//! of all but the last assistant turn, say) cannot.
//!
//! Tried by rendering: each kind of turn the template takes (plain
//! text; with a system message or none; assistant reasoning, where the
//! template reads it; tool calls and results, where it reads those) is a
//! probe conversation, rendered at every length from its first user
//! message on, without and with the generation prompt (the output before an assistant turn, which the
//! model continues, is a prefix of the output with that turn). A kind
//! the template refuses (its `raise_exception`) is not judged.

use serde_json::{json, Value};

use super::render;
use crate::context::Clock;
use crate::data::Data;
use crate::diagnostics::{Error, ErrorClass};
use crate::load::Compiled;
use crate::options::{RenderOptions, Syntax};

/// A chat template whose output for a conversation one turn longer does
/// not start with its output for the shorter one: a server cannot keep the cached prefix
/// across turns, and a turn cannot be rendered by its new text alone.
/// Placed on the file, with the witness: the kind of turns, the lengths,
/// and both outputs where they part.
pub(crate) fn rewrite_warning(compiled: &std::sync::Arc<Compiled>) -> Option<Error> {
    if compiled.syntax != Syntax::ChatTemplate {
        return None;
    }
    let rewrite = first_rewrite(compiled)?;
    let (shorter, prompt) = match rewrite.generation_prompt {
        true => (rewrite.messages, " with the generation prompt"),
        false => (rewrite.messages, ""),
    };
    let message = format!(
        "this template is not append-only ({kind}): the output for {shorter} message(s){prompt} is not the start of the output for {longer}; they part at byte {at}: {before:?} becomes {after:?}",
        kind = rewrite.kind,
        longer = shorter + 1,
        at = rewrite.at,
        before = rewrite.before,
        after = rewrite.after,
    );
    Some(
        Error::new(ErrorClass::Warning, message)
            .with_file(compiled.origin())
            .with_kind("not-append-only")
            .with_suggestion(Some(
                "a server cannot reuse the cached prefix of an earlier turn: if that is not by design (a template may drop old reasoning on purpose), print earlier turns the same whatever follows them"
                    .to_string(),
            )),
    )
}

/// The most time the probes of one template take, together.
const PROBE_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Where a growing conversation rewrites the output.
#[derive(Clone, Debug)]
pub(crate) struct Rewrite {
    /// The kind of turns of the probe (`"tool calls"`, …).
    pub kind: &'static str,
    /// How many messages the shorter conversation has.
    pub messages: usize,
    /// Whether the shorter one was rendered with the generation prompt.
    pub generation_prompt: bool,
    /// The first byte where the longer output differs.
    pub at: usize,
    /// The shorter output and the longer one, around `at`.
    pub before: String,
    pub after: String,
}

/// The first rewrite of the first kind of conversation that shows one;
/// `None` when every kind the template takes only appends.
pub(crate) fn first_rewrite(compiled: &std::sync::Arc<Compiled>) -> Option<Rewrite> {
    let body = &compiled.document.body;
    let reads = |word: &str| {
        body.contains(word)
            || compiled
                .tool_use
                .as_ref()
                .is_some_and(|tool_use| tool_use.0.body.contains(word))
    };
    let mut probes = vec![
        ("text turns", text_turns(true)),
        ("no system message", text_turns(false)),
    ];
    if reads("reasoning_content") {
        probes.push(("assistant reasoning", reasoning_turns()));
    }
    if reads("tool_calls") {
        probes.push(("tool calls", tool_turns()));
    }
    // One clock for every render: a template that prints today's date
    // prints the same date in both.
    // All the probes share one deadline: a template made to spend its
    // whole step budget on every render costs `check` two seconds, not a
    // few dozen renders' worth (a probe cut short judges nothing).
    let options = RenderOptions::new()
        .with_clock(Clock::Fixed(jiff::Timestamp::UNIX_EPOCH))
        .with_deadline(std::time::Instant::now() + PROBE_TIME);
    let output = |messages: &[Value], generation_prompt: bool| {
        let data = json!({"messages": messages, "add_generation_prompt": generation_prompt});
        render(compiled, Data::new(data), &options)
            .ok()
            .map(|rendered| rendered.into_text())
    };
    for (kind, messages) in probes {
        // The output of each length, in turn: the one before is kept.
        let mut shorter = None::<String>;
        for length in 1..=messages.len() {
            let Some(now) = messages.get(..length) else {
                break;
            };
            let Some(longer) = output(now, false) else {
                break; // a kind of turn the template refuses
            };
            // From the first user message on: a conversation of a system
            // message alone is no state a conversation rests in.
            let asked = now
                .iter()
                .take(length - 1)
                .any(|message| message["role"] == "user");
            if let (Some(before), true) = (shorter.take(), asked) {
                if let Some(rewrite) = compare(kind, length - 1, false, &before, &longer) {
                    return Some(rewrite);
                }
            }
            // Before an assistant turn: the prompt the model continues.
            let next_is_assistant = messages
                .get(length)
                .is_some_and(|next| next["role"] == "assistant");
            if let (true, Some(with_next)) = (next_is_assistant, messages.get(..=length)) {
                if let (Some(prompted), Some(next)) = (output(now, true), output(with_next, false))
                {
                    if let Some(rewrite) = compare(kind, length, true, &prompted, &next) {
                        return Some(rewrite);
                    }
                }
            }
            shorter = Some(longer);
        }
    }
    None
}

/// `before` is a prefix of `after`, else where they part.
fn compare(
    kind: &'static str,
    messages: usize,
    generation_prompt: bool,
    before: &str,
    after: &str,
) -> Option<Rewrite> {
    if after.starts_with(before) {
        return None;
    }
    let at = before
        .bytes()
        .zip(after.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    Some(Rewrite {
        kind,
        messages,
        generation_prompt,
        at,
        before: around(before, at),
        after: around(after, at),
    })
}

/// Up to 30 characters of `text` on either side of byte `at`.
fn around(text: &str, at: usize) -> String {
    let mut start = at.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let (head, tail) = text.split_at(start);
    let from = head
        .char_indices()
        .rev()
        .nth(29)
        .map_or(0, |(index, _)| index);
    let to = tail
        .char_indices()
        .nth(30)
        .map_or(text.len(), |(index, _)| start + index);
    let ellipsis = |cut: bool| if cut { "…" } else { "" };
    format!(
        "{}{}{}",
        ellipsis(from > 0),
        text.get(from..to).unwrap_or_default(),
        ellipsis(to < text.len())
    )
}

fn turn(role: &str, content: &str) -> Value {
    json!({"role": role, "content": content})
}

fn text_turns(system: bool) -> Vec<Value> {
    let mut messages = Vec::new();
    if system {
        messages.push(turn("system", "You are a helpful assistant."));
    }
    messages.extend([
        turn("user", "What is the capital of France?"),
        turn("assistant", "Paris."),
        turn("user", "And of Japan?"),
        turn("assistant", "Tokyo."),
        turn("user", "Thanks!"),
    ]);
    messages
}

fn reasoning_turns() -> Vec<Value> {
    vec![
        turn("user", "What is 2 + 2?"),
        json!({"role": "assistant", "content": "4.", "reasoning_content": "Two and two make four."}),
        turn("user", "And 3 + 3?"),
        json!({"role": "assistant", "content": "6.", "reasoning_content": "Three and three make six."}),
        turn("user", "Thanks!"),
    ]
}

fn tool_turns() -> Vec<Value> {
    let call = |id: &str, city: &str| {
        json!({"role": "assistant", "content": "", "tool_calls": [{
            "id": id, "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": city}}
        }]})
    };
    let result = |id: &str, text: &str| json!({"role": "tool", "tool_call_id": id, "name": "get_weather", "content": text});
    vec![
        turn("user", "What is the weather in Paris?"),
        call("call_1", "Paris"),
        result("call_1", "Sunny, 18 °C."),
        turn("assistant", "It is sunny in Paris."),
        turn("user", "And in Tokyo?"),
        call("call_2", "Tokyo"),
        result("call_2", "Rain, 12 °C."),
        turn("assistant", "It rains in Tokyo."),
    ]
}

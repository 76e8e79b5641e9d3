//! Whether a prompt prints what changes every turn (the clock, the turn
//! number) before text that stays the same: a provider's prompt cache
//! (and an open-model server's KV cache) keeps a prompt only up to its
//! first changed byte, so such a prompt is paid for in full every turn.
//!
//! Tried by rendering: the prompt for one turn, then with the clock a day,
//! an hour, a minute and a second later, then as the next turn; where the
//! first message changes, the text after the change that is the same in
//! both is what the cache loses.
//!
//! [`StablePrefix`] says the same of two turns a host rendered: how much
//! of the previous turn's conversation the next keeps at its start, and
//! where the first change is — with the template span and data path that
//! wrote it, from the new turn's source map.

use super::render_turn;
use crate::context::{Clock, PromptContext};
use crate::diagnostics::{Error, ErrorClass};
use crate::load::Compiled;
use crate::messages::{ContentPart, Entry, StablePrefix};
use crate::options::{RenderOptions, Syntax};

/// Monday 2026-01-05 09:00:00 UTC, and a day, an hour, a minute and a
/// second later: every clock value differs.
const BASE: i64 = 1_767_603_600;
const LATER: i64 = BASE + 86_400 + 3_600 + 61;

/// The least text after a change that makes it worth a warning: a line
/// or so of fixed text (a closing tag alone is not).
const MOST_LOST: usize = 40;

/// The most time the probes of one prompt take, together.
const PROBE_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// A warning where the first message prints the clock or the turn
/// number before fixed text, with the line that changes.
pub(crate) fn per_turn_warning(compiled: &std::sync::Arc<Compiled>) -> Option<Error> {
    if compiled.syntax == Syntax::ChatTemplate {
        return None;
    }
    // With source maps: the warning names where the change is written.
    let options = RenderOptions::new()
        .with_deadline(std::time::Instant::now() + PROBE_TIME)
        .with_source_map(true);
    let first = |second: i64, turn: u32| -> Option<(String, String, crate::Rendered)> {
        let clock = Clock::Fixed(jiff::Timestamp::from_second(second).ok()?);
        let context = PromptContext::new().clock(clock).turn(turn);
        let rendered = render_turn(compiled, &context, &options).ok()?;
        let conversation = rendered.conversation();
        let Some(Entry::Rendered(message)) = conversation.first() else {
            return None;
        };
        let text = message
            .content
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<String>();
        let role = message.role.as_str().to_string();
        drop(conversation);
        Some((role, text, rendered))
    };
    let (role, base, base_rendered) = first(BASE, 1)?;
    // Each per-turn value that changes the message early: its name, the
    // bytes after its change that stay the same, and the line it changes.
    let mut found: Vec<(&str, usize, String)> = Vec::new();
    for (what, other) in [
        ("the clock", first(LATER, 1)),
        ("the turn number", first(BASE, 2)),
    ] {
        let Some((_, other, other_rendered)) = other else {
            continue;
        };
        if other == base {
            continue;
        }
        // Where the template writes the change (the lenient probe's map).
        let written = other_rendered
            .stable_prefix(&base_rendered)
            .change
            .and_then(|change| {
                let span = change.span?;
                let what = change.path.or(span.source).unwrap_or_default();
                Some(format!(
                    " (written at {}:{}:{}: `{what}`)",
                    span.file, span.line, span.column
                ))
            })
            .unwrap_or_default();
        let start = base
            .bytes()
            .zip(other.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let room = base.len().min(other.len()) - start;
        let same_end = base
            .bytes()
            .rev()
            .zip(other.bytes().rev())
            .take(room)
            .take_while(|(a, b)| a == b)
            .count();
        let lost = base.get(base.len() - same_end..).unwrap_or_default();
        if lost.trim().len() < MOST_LOST {
            continue;
        }
        let line_start = base
            .get(..start)
            .map_or(0, |head| head.rfind('\n').map_or(0, |at| at + 1));
        let line_end = base
            .get(start..)
            .and_then(|tail| tail.find('\n'))
            .map_or(base.len(), |at| start + at);
        let line = base.get(line_start..line_end).unwrap_or_default().trim();
        found.push((what, lost.len(), format!("{line:?}{written}")));
    }
    let (_, lost, _) = found.iter().max_by_key(|(_, lost, _)| *lost)?;
    let names: Vec<&str> = found.iter().map(|(what, _, _)| *what).collect();
    let lines: Vec<&str> = found.iter().map(|(_, _, line)| line.as_str()).collect();
    let (names, verb) = match names.as_slice() {
        [one] => (one.to_string(), "is"),
        more => (more.join(" and "), "are"),
    };
    let message = format!(
        "{names} {verb} printed in the first message ({role}) before {lost} bytes that stay the same every turn: a provider's prompt cache keeps a prompt only up to its first change, so every turn pays for all of it again"
    );
    Some(
        Error::new(ErrorClass::Warning, message)
            .with_file(compiled.origin())
            .with_kind("per-turn-prefix")
            .with_suggestion(Some(format!(
                "print {} after the text that stays the same (at the end of the message, or in the user's), so the cached prefix holds all of it",
                lines.join(" and ")
            ))),
    )
}

/// One message's texts as a cache compares them: its role, then its text
/// parts (media and sections by what they name).
pub(crate) fn compared<'e>(
    entry: &Entry<'e>,
) -> (crate::messages::Role, Vec<std::borrow::Cow<'e, str>>) {
    use std::borrow::Cow;
    let texts = match entry {
        Entry::Rendered(message) => message
            .content
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } => Some(Cow::Borrowed(text.as_str())),
                ContentPart::Media { url, content_type } => {
                    Some(Cow::Owned(format!("[{content_type}: {url}]")))
                }
                ContentPart::Section { name } => Some(Cow::Owned(format!("[section {name}]"))),
                ContentPart::CacheBreakpoint => None,
            })
            .collect(),
        Entry::History(message) => {
            let mut text = match &message.content {
                Some(serde_json::Value::String(text)) => text.clone(),
                Some(serde_json::Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            for call in &message.tool_calls {
                text.push_str(&format!(
                    "\n[tool call {}({})]",
                    call.function.name, call.function.arguments
                ));
            }
            vec![Cow::Owned(text)]
        }
    };
    (entry.role(), texts)
}

/// The first byte where `new` parts from `old` (their common length).
fn common(old: &str, new: &str) -> usize {
    old.char_indices()
        .zip(new.chars())
        .find(|((_, a), b)| a != b)
        .map_or(old.len().min(new.len()), |((at, _), _)| at)
}

/// [`StablePrefix`] of `new` against `old`, whose history ends at entry
/// `history_end` of its conversation; `text`: a chat template's outputs,
/// compared as one text each.
pub(crate) fn stable_prefix(
    old: &[Entry<'_>],
    new: &[Entry<'_>],
    history_end: usize,
    text: Option<(&str, &str)>,
) -> (StablePrefix, Option<(usize, usize, usize)>) {
    if let Some((old, new)) = text {
        let same = common(old, new);
        let change = (old != new).then_some((0, 0, same));
        let prefix = StablePrefix {
            bytes: same,
            messages: usize::from(old == new),
            through_history: same == old.len(),
            change: None,
        };
        return (prefix, change);
    }
    let mut bytes = 0;
    for (index, (old_entry, new_entry)) in old.iter().zip(new).enumerate() {
        let (old_role, old_texts) = compared(old_entry);
        let (new_role, new_texts) = compared(new_entry);
        if old_role == new_role && old_texts == new_texts {
            bytes += old_texts.iter().map(|text| text.len()).sum::<usize>();
            continue;
        }
        let mut change = (index, 0, 0);
        if old_role == new_role {
            for (part, (a, b)) in old_texts.iter().zip(&new_texts).enumerate() {
                if a == b {
                    bytes += a.len();
                    continue;
                }
                let same = common(a, b);
                bytes += same;
                change = (index, part, same);
                break;
            }
            if change == (index, 0, 0) && old_texts.len() != new_texts.len() {
                let part = old_texts.len().min(new_texts.len());
                change = (index, part, 0);
            }
        }
        let prefix = StablePrefix {
            bytes,
            messages: index,
            through_history: index >= history_end,
            change: None,
        };
        return (prefix, Some(change));
    }
    let kept = old.len().min(new.len());
    let change = (old.len() != new.len()).then_some((kept, 0, 0));
    let prefix = StablePrefix {
        bytes,
        messages: kept,
        through_history: kept >= history_end,
        change: None,
    };
    (prefix, change)
}

#[cfg(test)]
mod tests {
    use super::stable_prefix;
    use crate::messages::{ContentPart, Entry, Message, Role};

    fn message(role: Role, text: &str) -> Message {
        Message {
            role,
            content: vec![ContentPart::Text {
                text: text.to_string(),
            }],
            extra: Default::default(),
        }
    }

    #[test]
    fn the_prefix_ends_where_the_texts_part() {
        let monday = [
            message(Role::System, "Be brief.\nToday is Monday."),
            message(Role::User, "Hi"),
        ];
        let tuesday = [
            message(Role::System, "Be brief.\nToday is Tuesday."),
            message(Role::User, "Hi"),
        ];
        fn entries(messages: &[Message]) -> Vec<Entry<'_>> {
            messages.iter().map(Entry::Rendered).collect()
        }
        let (old, new) = (entries(&monday), entries(&tuesday));
        let (prefix, change) = stable_prefix(&old, &new, 2, None);
        assert_eq!((prefix.bytes, prefix.messages), (19, 0));
        assert_eq!(change, Some((0, 0, 19)));
        assert!(!prefix.through_history);
        let (prefix, change) = stable_prefix(&old, &old, 2, None);
        assert_eq!((prefix.bytes, prefix.messages, change), (28, 2, None));
        assert!(prefix.through_history);
        // A message more: the change is the new message, after all the
        // old ones (the history, here, ends after the first).
        let mut more = monday.to_vec();
        more.push(message(Role::User, "Hello?"));
        let longer = entries(&more);
        let (prefix, change) = stable_prefix(&old, &longer, 1, None);
        assert_eq!((prefix.messages, change), (2, Some((2, 0, 0))));
        assert!(prefix.through_history);
        // Another role: nothing of that message is kept.
        let developer = [
            message(Role::Developer, "Be brief.\nToday is Monday."),
            message(Role::User, "Hi"),
        ];
        let (prefix, change) = stable_prefix(&old, &entries(&developer), 0, None);
        assert_eq!((prefix.bytes, change), (0, Some((0, 0, 0))));
        // A chat template's texts.
        let (prefix, change) = stable_prefix(&[], &[], 0, Some(("<s>Hi", "<s>Hi there")));
        assert_eq!((prefix.bytes, change), (5, Some((0, 0, 5))));
        assert!(prefix.through_history);
    }
}

//! Whether a prompt prints what changes every turn (the clock, the turn
//! number) before text that stays the same: a provider's prompt cache
//! (and an open-model server's KV cache) keeps a prompt only up to its
//! first changed byte, so such a prompt is paid for in full every turn.
//!
//! Tried by rendering: the prompt for one turn, then with the clock a day,
//! an hour, a minute and a second later, then as the next turn; where the
//! first message changes, the text after the change that is the same in
//! both is what the cache loses.

use super::render_turn;
use crate::context::{Clock, PromptContext};
use crate::diagnostics::{Error, ErrorClass};
use crate::load::Compiled;
use crate::messages::{ContentPart, Entry};
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
    let options = RenderOptions::new().with_deadline(std::time::Instant::now() + PROBE_TIME);
    let first = |second: i64, turn: u32| -> Option<(String, String)> {
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
        Some((message.role.as_str().to_string(), text))
    };
    let (role, base) = first(BASE, 1)?;
    // Each per-turn value that changes the message early: its name, the
    // bytes after its change that stay the same, and the line it changes.
    let mut found: Vec<(&str, usize, String)> = Vec::new();
    for (what, other) in [
        ("the clock", first(LATER, 1)),
        ("the turn number", first(BASE, 2)),
    ] {
        let Some((_, other)) = other else { continue };
        if other == base {
            continue;
        }
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
        found.push((what, lost.len(), format!("{line:?}")));
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

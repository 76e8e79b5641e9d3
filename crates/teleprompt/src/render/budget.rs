//! A prompt's token budget (front matter `budget: {total: N}`): a turn
//! whose conversation comes to more tokens than `N`, by the prompt's
//! tokenizer, loses the oldest turns of its history until it fits.
//!
//! The history is cut by whole exchanges — a user message and every
//! message after it up to the next user message — so a tool call always
//! goes with its results, oldest first; the history's system messages
//! and its latest exchange (the latest user message and what follows it)
//! are never cut. How many exchanges to cut is told from the tokens of
//! the messages, then the turn is rendered again with the history left
//! and counted, so that a template that reads the history itself is
//! counted as it renders. A turn that does not fit once every exchange
//! that may go is gone is a `render` error with the numbers.

use std::ops::Range;

use crate::context::PromptContext;
use crate::diagnostics::{Error, ErrorClass};
use crate::messages::{HistoryMessage, Role};
use crate::tokens::{Budget, Cut};

use super::Rendered;

/// `rendered`, fitted to `total` tokens by cutting the history of
/// `context`; `render` renders the turn again with a shorter history.
pub(super) fn fit(
    rendered: Rendered,
    total: u64,
    context: &PromptContext,
    render: impl Fn(&PromptContext) -> Result<Rendered, Error>,
) -> Result<Rendered, Error> {
    let total = usize::try_from(total).unwrap_or(usize::MAX);
    let tokens = rendered.tokens()?;
    if tokens.total <= total {
        return Ok(with_report(rendered, total, tokens.total, Vec::new()));
    }
    let history = context.history();
    // Each history message's tokens, in order (the conversation's
    // history entries are the history, in order).
    let counts: Vec<usize> = tokens
        .messages
        .iter()
        .filter(|message| message.history)
        .map(|message| message.count)
        .collect();
    let exchanges = exchanges(history);
    let mut cut = 0; // exchanges cut so far
    let mut over = tokens.total;
    let mut cut_tokens = 0;
    loop {
        // Cut by the messages' own counts until the estimate fits.
        let before = cut;
        let mut estimate = over;
        while cut < exchanges.len() && estimate > total {
            let tokens: usize = exchanges[cut]
                .clone()
                .filter(|&index| history[index].role != Role::System)
                .map(|index| counts.get(index).copied().unwrap_or(0))
                .sum();
            estimate = estimate.saturating_sub(tokens);
            cut += 1;
        }
        if cut == before {
            return Err(too_big(total, over, history.len(), cut));
        }
        let kept = kept_history(history, &exchanges[..cut]);
        let dropped = history.len() - kept.len();
        cut_tokens = exchanges[..cut]
            .iter()
            .flat_map(Range::clone)
            .filter(|&index| history[index].role != Role::System)
            .map(|index| counts.get(index).copied().unwrap_or(0))
            .sum::<usize>()
            .max(cut_tokens);
        let shorter = context.clone().with_history(kept);
        let again = render(&shorter)?;
        let now = again.tokens()?.total;
        if now <= total {
            let reason = format!(
                "the oldest {cut} exchange(s) of the history, to fit the budget of {total} tokens \
                 (the history's system messages and its latest exchange are kept; a tool call goes \
                 with its results)"
            );
            let cuts = vec![Cut {
                part: "history".to_string(),
                messages: dropped,
                tokens: cut_tokens,
                reason,
            }];
            return Ok(with_report(again, total, now, cuts));
        }
        over = now;
    }
}

fn with_report(mut rendered: Rendered, total: usize, tokens: usize, cuts: Vec<Cut>) -> Rendered {
    rendered.budget = Some(Budget {
        total,
        tokens,
        cuts,
    });
    rendered
}

/// The exchanges of `history` that may be cut, oldest first: from each
/// user message (or the start) up to the next user message, the latest
/// one left out. System messages inside one stay when it is cut.
fn exchanges(history: &[HistoryMessage]) -> Vec<Range<usize>> {
    let mut starts: Vec<usize> = history
        .iter()
        .enumerate()
        .filter(|(_, message)| message.role == Role::User)
        .map(|(index, _)| index)
        .collect();
    let Some(&latest) = starts.last() else {
        return Vec::new(); // no user message: nothing to tell turns by
    };
    if starts.first() != Some(&0) {
        starts.insert(0, 0);
    }
    starts
        .windows(2)
        .map(|pair| pair[0]..pair[1])
        .filter(|range| range.end <= latest)
        .collect()
}

/// `history` without the messages of `cut`, but for its system messages.
fn kept_history(history: &[HistoryMessage], cut: &[Range<usize>]) -> Vec<HistoryMessage> {
    let end = cut.last().map_or(0, |range| range.end);
    history
        .iter()
        .enumerate()
        .filter(|(index, message)| *index >= end || message.role == Role::System)
        .map(|(_, message)| message.clone())
        .collect()
}

fn too_big(total: usize, tokens: usize, messages: usize, cut: usize) -> Error {
    let cut_note = match cut {
        0 => "the history has no exchange that may be cut".to_string(),
        n => format!(
            "{n} exchange(s) of the history were cut, of its {messages} messages; its system messages and its latest exchange are kept",
        ),
    };
    Error::new(
        ErrorClass::Render,
        format!(
            "the turn is {tokens} tokens, over its budget of {total} after every cut the budget may make ({cut_note})"
        ),
    )
    .with_kind("over-budget")
    .with_suggestion(Some(
        "raise `budget.total`, or shorten what the template writes or the latest messages"
            .to_string(),
    ))
}

//! A prompt's token budget (front matter `budget:`): a turn whose
//! conversation comes to more tokens than `budget.total`, by the prompt's
//! tokenizer, is cut until it fits, part by part, the lowest priority
//! first.
//!
//! The parts are the template's budget sections (`{% section "docs",
//! priority=2, max_tokens=2000, truncate=true %}`: every block with one
//! name is one section, each block an item of it) and the history
//! (`budget.history.priority`, 0 unless given). Among equal priorities
//! the history goes first, then sections from the last printed to the
//! first.
//!
//! - A section loses its last items first, whole; with `truncate=true`
//!   its last item left is cut short at a token boundary instead of
//!   dropped. Its `max_tokens` holds whatever the total.
//! - The history is cut by whole exchanges — a user message and every
//!   message after it up to the next user message — so a tool call always
//!   goes with its results, oldest first; the history's system messages
//!   and its latest exchange (the latest user message and what follows
//!   it) are never cut. `budget.history.max_tokens` holds whatever the
//!   total.
//!
//! How much to cut is told from each item's and each message's own
//! tokens; the turn is then counted again as it renders (the history cut
//! by rendering the turn again, so a template that reads the history
//! itself is counted as it renders; the sections cut in the printed
//! output, without rendering again). A turn that does not fit once every
//! part that may be cut is cut is a `render` error with the numbers.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::ops::Range;
use std::sync::Arc;

use crate::context::PromptContext;
use crate::diagnostics::{Error, ErrorClass};
use crate::load::Compiled;
use crate::messages::{History, HistoryMessage, Role, SectionSpec};
use crate::tokens::{Budget, BudgetSettings, Cut, SectionTokens, Tokenizer};

use super::Rendered;

/// The most times a turn is counted while it is cut: each count cuts at
/// least one more item, exchange or token, and the estimates are near, so
/// a real prompt needs a handful.
const MOST_COUNTS: usize = 16;

/// `rendered`, fitted to its budget by cutting its sections (in its
/// printed output) and the history of `context` (`render` renders the
/// turn again with a shorter history).
pub(super) fn fit(
    rendered: Rendered,
    settings: &BudgetSettings,
    compiled: &Compiled,
    context: &PromptContext,
    render: impl Fn(&PromptContext) -> Result<Rendered, Error>,
) -> Result<Rendered, Error> {
    let total = usize::try_from(settings.total).unwrap_or(usize::MAX);
    let history = context.history();
    let exchanges = exchanges(history);
    // Every count of the turn as it is cut: a text counted once is not
    // encoded again (the messages the cuts left as they were).
    let mut cache = crate::tokens::TokenCache::new();
    let tokens = rendered.tokens_with(&mut cache)?;
    // Each history message's tokens, in order.
    let counts: Vec<usize> = tokens
        .messages
        .iter()
        .filter(|message| message.history)
        .map(|message| message.count)
        .collect();
    let exchange_tokens: Vec<usize> = exchanges
        .iter()
        .map(|range| {
            range
                .clone()
                .filter(|&index| history.get(index).is_some_and(|m| m.role != Role::System))
                .map(|index| counts.get(index).copied().unwrap_or(0))
                .sum()
        })
        .collect();
    if tokens.total <= total && rendered.printed.is_none() && settings.history_max_tokens.is_none()
    {
        return Ok(with_report(
            rendered,
            total,
            tokens.total,
            Vec::new(),
            Vec::new(),
        ));
    }
    let mut state = State {
        exchanges: 0,
        history_why: None,
        sections: Vec::new(),
        index: HashMap::new(),
        held: HashMap::new(),
        history_order: None,
        order: HashMap::new(),
        history_own: 0,
        known: Default::default(),
        hasher: Default::default(),
        base: rendered,
        base_exchanges: 0,
    };
    // The history's own limit.
    if let Some(most) = settings.history_max_tokens {
        let most = usize::try_from(most).unwrap_or(usize::MAX);
        let mut left: usize = exchange_tokens.iter().sum::<usize>()
            + exchanges.last().map_or(0, |last| {
                (last.end..history.len())
                    .filter(|&index| history.get(index).is_some_and(|m| m.role != Role::System))
                    .map(|index| counts.get(index).copied().unwrap_or(0))
                    .sum()
            });
        while left > most && state.exchanges < exchanges.len() {
            left = left.saturating_sub(exchange_tokens[state.exchanges]);
            state.exchanges += 1;
            state.history_why = Some(format!("over its own limit of {most} tokens"));
        }
        state.history_own = state.exchanges;
        if state.exchanges > 0 {
            state.history_order = Some(0);
        }
    }
    let tokenizer =
        state.base.tokenizer.clone().ok_or_else(|| {
            Error::new(ErrorClass::Input, "a budget needs the prompt's tokenizer")
        })?;
    // The tokens of `state.base` as rendered (before its sections are
    // cut), once counted.
    let mut base_tokens = Some(tokens.total);
    // The render whose sections' blocks are counted (by its exchanges cut).
    let mut counted = None;
    for _ in 0..MOST_COUNTS {
        if state.base_exchanges != state.exchanges {
            let kept = kept_history(history, &exchanges[..state.exchanges]);
            state.base = render(&context.clone().with_history(kept))?;
            state.base_exchanges = state.exchanges;
            base_tokens = None;
        }
        if counted != Some(state.base_exchanges) {
            state.count(&tokenizer)?;
            counted = Some(state.base_exchanges);
        }
        state.plan();
        let whole = state
            .sections
            .iter()
            .all(|part| part.keep == part.items.len() && part.short.is_none());
        let (turn, now) = match whole {
            true => {
                let now = match base_tokens {
                    Some(now) => now,
                    None => state.base.tokens_with(&mut cache)?.total,
                };
                base_tokens = Some(now);
                (state.base.clone(), now)
            }
            false => {
                let turn = state.cut_turn(compiled, &tokenizer)?;
                let now = turn.tokens_with(&mut cache)?.total;
                (turn, now)
            }
        };
        if now <= total {
            let cuts = state.cuts(history, &exchanges, &exchange_tokens, total);
            let sections = state.report();
            return Ok(with_report(turn, total, now, cuts, sections));
        }
        // Cut by the parts' own counts until the estimate fits, the
        // lowest priority with something left first (the history first
        // among equals, then sections from the last printed); then count
        // the turn again.
        let mut over = now - total;
        let mut cut_any = false;
        // The sections in the order they are cut: priority, then the last
        // printed first.
        let mut queue: Vec<usize> = (0..state.sections.len()).rev().collect();
        queue.sort_by_key(|&index| state.sections[index].spec.priority);
        let mut queue = queue.into_iter().peekable();
        while over > 0 {
            let history_left = state.exchanges < exchanges.len();
            while queue
                .next_if(|&index| state.sections[index].keep == 0)
                .is_some()
            {}
            let section = queue
                .peek()
                .map(|&index| (index, state.sections[index].spec.priority));
            let cut = match (history_left, section) {
                (true, Some((_, priority))) if settings.history_priority <= priority => {
                    state.cut_history(&exchange_tokens, over)
                }
                (true, None) => state.cut_history(&exchange_tokens, over),
                (_, Some((index, _))) => state.cut_section(index, over),
                (false, None) if cut_any => break,
                (false, None) => {
                    return Err(too_big(total, now, history.len(), state.exchanges, &state))
                }
            };
            cut_any = true;
            // A cut counted as nothing (an empty block) still cuts.
            over = over.saturating_sub(cut.max(1));
        }
    }
    Err(Error::new(
        ErrorClass::Render,
        format!("the turn did not fit its budget of {total} tokens after {MOST_COUNTS} counts"),
    )
    .with_kind("over-budget"))
}

/// What the budget has cut so far.
struct State {
    /// Exchanges of the history cut, oldest first.
    exchanges: usize,
    /// Why the history was cut, when it was for its own limit.
    history_why: Option<String>,
    /// The sections, in the order they first appear in `base`.
    sections: Vec<Part>,
    /// Each section's index in `sections`, by name.
    index: HashMap<String, usize>,
    /// What the total cut of each section so far, by name (held when the
    /// turn is rendered again).
    held: HashMap<String, Kept>,
    /// When the history was first cut, and each section, by name: the
    /// order of the report's cuts.
    history_order: Option<usize>,
    order: HashMap<String, usize>,
    /// Exchanges the history's own limit cut (the first of `exchanges`).
    history_own: usize,
    /// The tokens of each block counted so far, by its text's hash and
    /// length.
    known: HashMap<(u64, usize), usize>,
    hasher: std::collections::hash_map::RandomState,
    /// The turn rendered with `base_exchanges` exchanges cut.
    base: Rendered,
    base_exchanges: usize,
}

/// One budget section: its blocks in `State::base`, and what is kept.
struct Part {
    spec: Arc<SectionSpec>,
    /// Each block's tokens, in order.
    items: Vec<usize>,
    /// Blocks kept, from the first.
    keep: usize,
    /// The last block kept, cut short to this many tokens.
    short: Option<usize>,
    /// Whether the budget (not the section's own limit) cut it.
    for_total: bool,
    /// Whether its own `max_tokens` cut it.
    for_own: bool,
}

/// How much of a section is kept: blocks from the first, and the last of
/// them cut short to a number of tokens. Ordered by how much is kept.
type Kept = (usize, Option<usize>);

/// The smaller of two keeps (a block cut short is less than it whole).
fn smaller(a: Kept, b: Kept) -> Kept {
    let key = |(keep, short): Kept| (keep, short.unwrap_or(usize::MAX));
    match key(a) <= key(b) {
        true => a,
        false => b,
    }
}

impl Part {
    /// Cuts `over` tokens or more from the end of the section (as
    /// counted block by block); gives the tokens cut.
    fn cut(&mut self, over: usize) -> usize {
        self.for_total = true;
        let mut cut = 0;
        while cut < over && self.keep > 0 {
            let last = match self.short {
                Some(short) => short,
                None => self.items[self.keep - 1],
            };
            if self.keep == 1 && self.spec.truncate && last > over - cut {
                self.short = Some(last - (over - cut));
                return over;
            }
            cut += last;
            self.keep -= 1;
            self.short = None;
        }
        cut
    }
}

impl State {
    /// The sections of `base` and each block's tokens.
    fn count(&mut self, tokenizer: &Tokenizer) -> Result<(), Error> {
        let mut sections: Vec<Part> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        if let Some(printed) = &self.base.printed {
            for span in &printed.sections {
                let text = printed.output.get(span.content.clone()).unwrap_or_default();
                // A block the turn printed the same before the history was
                // cut is not counted again.
                let key = (self.hasher.hash_one(text), text.len());
                let count = match self.known.get(&key) {
                    Some(&count) => count,
                    None => {
                        let count = tokenizer
                            .count(text)
                            .map_err(|message| Error::new(ErrorClass::Io, message))?;
                        self.known.insert(key, count);
                        count
                    }
                };
                match index.get(span.spec.name.as_str()) {
                    Some(&at) => sections[at].items.push(count),
                    None => {
                        index.insert(span.spec.name.clone(), sections.len());
                        sections.push(Part {
                            spec: span.spec.clone(),
                            items: vec![count],
                            keep: 0,
                            short: None,
                            for_total: false,
                            for_own: false,
                        });
                    }
                }
            }
        }
        self.sections = sections;
        self.index = index;
        Ok(())
    }

    /// What each section keeps: its own limit held, and what the total cut
    /// before.
    fn plan(&mut self) {
        for part in &mut self.sections {
            let mut kept: Kept = (part.items.len(), None);
            if let Some(most) = part.spec.max_tokens {
                let most = usize::try_from(most).unwrap_or(usize::MAX);
                let mut sum = 0;
                let mut keep = 0;
                while keep < part.items.len() && sum + part.items[keep] <= most {
                    sum += part.items[keep];
                    keep += 1;
                }
                if keep < part.items.len() {
                    part.for_own = true;
                    let next = self.order.len() + usize::from(self.history_order.is_some());
                    self.order.entry(part.spec.name.clone()).or_insert(next);
                    kept = match keep == 0 && part.spec.truncate {
                        true => (1, Some(most)),
                        false => (keep, None),
                    };
                }
            }
            if let Some(held) = self.held.get(&part.spec.name) {
                let least = smaller(kept, *held);
                part.for_total = least != kept;
                kept = least;
            }
            (part.keep, part.short) = kept;
        }
    }

    /// `base` with its sections cut as planned, split again.
    fn cut_turn(&self, compiled: &Compiled, tokenizer: &Tokenizer) -> Result<Rendered, Error> {
        let Some(printed) = &self.base.printed else {
            return Ok(self.base.clone());
        };
        // Each section's blocks seen so far.
        let mut seen: Vec<usize> = vec![0; self.sections.len()];
        let mut output = String::with_capacity(printed.output.len());
        let mut at = 0;
        for span in &printed.sections {
            output.push_str(&printed.output[at..span.content.start]);
            at = span.content.end;
            let Some(&at) = self.index.get(span.spec.name.as_str()) else {
                continue;
            };
            let part = &self.sections[at];
            let index = seen[at];
            seen[at] += 1;
            let text = &printed.output[span.content.clone()];
            if index + 1 < part.keep || (index + 1 == part.keep && part.short.is_none()) {
                output.push_str(text);
            } else if index + 1 == part.keep {
                let most = part.short.unwrap_or(0);
                let cut = tokenizer
                    .cut_at(text, most)
                    .map_err(|message| Error::new(ErrorClass::Io, message))?;
                output.push_str(&text[..cut]);
            }
        }
        output.push_str(&printed.output[at..]);
        let (split, _) = super::split_output(compiled, &printed.markers, output)?;
        let split = super::with_auto_breakpoints(compiled, split, &self.base.history);
        let mut turn = self.base.clone();
        turn.text = split.text;
        turn.items = split
            .items
            .map_or_else(Default::default, std::sync::OnceLock::from);
        turn.generations = split.generations;
        // The map was of the text before the cut (a cut text has none yet).
        turn.source_map = None;
        Ok(turn)
    }

    /// Cuts `over` tokens or more from the end of section `index`, and
    /// holds the cut for the renders after this one; gives the tokens cut.
    fn cut_section(&mut self, index: usize, over: usize) -> usize {
        let next = self.order.len() + usize::from(self.history_order.is_some());
        let part = &mut self.sections[index];
        self.order.entry(part.spec.name.clone()).or_insert(next);
        let cut = part.cut(over);
        self.held
            .insert(part.spec.name.clone(), (part.keep, part.short));
        cut
    }

    /// Cuts the oldest exchanges of the history whose tokens come to
    /// `over` or more (one at least); gives the tokens cut.
    fn cut_history(&mut self, exchange_tokens: &[usize], over: usize) -> usize {
        if self.history_order.is_none() {
            self.history_order = Some(self.order.len());
        }
        let mut cut = 0;
        while self.exchanges < exchange_tokens.len() && (cut < over || cut == 0) {
            cut += exchange_tokens[self.exchanges];
            self.exchanges += 1;
        }
        cut
    }

    /// The cuts made, for the report.
    fn cuts(
        &self,
        history: &History,
        exchanges: &[Range<usize>],
        exchange_tokens: &[usize],
        total: usize,
    ) -> Vec<Cut> {
        let mut cuts: Vec<(usize, Cut)> = Vec::new();
        if self.exchanges > 0 {
            let cut = self.exchanges;
            let kept = kept_history(history, &exchanges[..cut]);
            let for_total = format!("to fit the budget of {total} tokens");
            let why = match &self.history_why {
                Some(own) if self.history_own == cut => own.clone(),
                Some(own) => format!("{own}, then more {for_total}"),
                None => for_total,
            };
            cuts.push((self.history_order.unwrap_or(0), Cut {
                part: "history".to_string(),
                messages: history.len() - kept.len(),
                items: 0,
                truncated: false,
                tokens: exchange_tokens[..cut].iter().sum(),
                reason: format!(
                    "the oldest {cut} exchange(s) of the history, {why} (the history's system messages and its latest exchange are kept; a tool call goes with its results)"
                ),
            }));
        }
        for part in &self.sections {
            let kept: usize = part.items[..part.keep].iter().sum::<usize>()
                - part
                    .short
                    .map_or(0, |short| part.items[part.keep - 1].saturating_sub(short));
            let printed: usize = part.items.iter().sum();
            if kept == printed && part.keep == part.items.len() {
                continue;
            }
            let mut why = Vec::new();
            if part.for_own {
                if let Some(most) = part.spec.max_tokens {
                    why.push(format!("over its own limit of {most} tokens"));
                }
            }
            if part.for_total {
                why.push(format!(
                    "priority {}, to fit the budget of {total} tokens",
                    part.spec.priority
                ));
            }
            let what = match (part.items.len() - part.keep, part.short.is_some()) {
                (0, true) => "its last block cut short at a token boundary".to_string(),
                (n, true) => format!("its last {n} block(s) dropped and the one before cut short at a token boundary"),
                (n, false) => format!("its last {n} block(s) dropped"),
            };
            let order = self
                .order
                .get(&part.spec.name)
                .copied()
                .unwrap_or(usize::MAX);
            cuts.push((
                order,
                Cut {
                    part: part.spec.name.clone(),
                    messages: 0,
                    items: part.items.len() - part.keep,
                    truncated: part.short.is_some(),
                    tokens: printed - kept,
                    reason: format!("{what}: {}", why.join("; ")),
                },
            ));
        }
        cuts.sort_by_key(|(order, _)| *order);
        cuts.into_iter().map(|(_, cut)| cut).collect()
    }

    /// Each section's tokens after the cuts.
    fn report(&self) -> Vec<SectionTokens> {
        self.sections
            .iter()
            .map(|part| SectionTokens {
                name: part.spec.name.clone(),
                priority: part.spec.priority,
                items: part.keep,
                printed: part.items.len(),
                tokens: part.items[..part.keep].iter().sum::<usize>()
                    - part
                        .short
                        .map_or(0, |short| part.items[part.keep - 1].saturating_sub(short)),
            })
            .collect()
    }
}

fn with_report(
    mut rendered: Rendered,
    total: usize,
    tokens: usize,
    cuts: Vec<Cut>,
    sections: Vec<SectionTokens>,
) -> Rendered {
    rendered.printed = None;
    rendered.budget = Some(Budget {
        total,
        tokens,
        cuts,
        sections,
    });
    rendered
}

/// The exchanges of `history` that may be cut, oldest first: from each
/// user message (or the start) up to the next user message, the latest
/// one left out. System messages inside one stay when it is cut.
fn exchanges(history: &History) -> Vec<Range<usize>> {
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
fn kept_history(history: &History, cut: &[Range<usize>]) -> Vec<HistoryMessage> {
    let end = cut.last().map_or(0, |range| range.end);
    history
        .iter()
        .enumerate()
        .filter(|(index, message)| *index >= end || message.role == Role::System)
        .map(|(_, message)| message.clone())
        .collect()
}

fn too_big(total: usize, tokens: usize, messages: usize, cut: usize, state: &State) -> Error {
    let mut notes = match (messages, cut) {
        (0, _) => Vec::new(),
        (_, 0) => vec!["the history has no exchange that may be cut".to_string()],
        (_, n) => vec![format!(
            "{n} exchange(s) of the history were cut, of its {messages} messages; its system messages and its latest exchange are kept",
        )],
    };
    let names: Vec<String> = state
        .sections
        .iter()
        .take(3)
        .map(|part| format!("\"{}\"", part.spec.name))
        .collect();
    match state.sections.len() {
        0 => {}
        1 => notes.push(format!("the section {} was cut to nothing", names[0])),
        n if n <= 3 => notes.push(format!(
            "the sections {} were cut to nothing",
            names.join(", ")
        )),
        n => notes.push(format!(
            "the sections {} and {} more were cut to nothing",
            names.join(", "),
            n - 3
        )),
    }
    Error::new(
        ErrorClass::Render,
        format!(
            "the turn is {tokens} tokens, over its budget of {total} after every cut the budget may make{}",
            match notes.is_empty() {
                true => String::new(),
                false => format!(" ({})", notes.join("; ")),
            }
        ),
    )
    .with_kind("over-budget")
    .with_suggestion(Some(
        "raise `budget.total`, put what may go in sections, or shorten what the template writes or the latest messages"
            .to_string(),
    ))
}

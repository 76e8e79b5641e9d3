//! A turn of a conversation at several history lengths, as
//! crates/teleprompt/benches/turn.rs times it with criterion (its `turn`
//! and `turn_append` groups; the prompt, the messages and the context are
//! the same), here as engines of one race so that every length's runs are
//! interleaved: the growth from 10 to 10,000 messages is measured under
//! the same machine noise. There is no peer.
//!
//! - `teleprompt-turn-reuse-LEN`: the conversation's context (its history
//!   of LEN messages shared, never copied) is cloned, given the turn and
//!   the clock, and rendered (`render_turn`); the same history every turn.
//! - `teleprompt-turn-append-LEN`: the host appends the turn's message
//!   (`push_message`), then clones, sets the turn and the clock and renders;
//!   the `Rendered` and the clone are dropped before the next append, as
//!   hosts do. Appends run in blocks of `min(LEN, 32)`, so the history has
//!   LEN + 1 to LEN + 32 messages when rendered (10: 11 to 20).
//!
//! The race calls a closure per iteration and times whole runs, so the
//! append engine resets its conversation inside the timed call, once per
//! block: it takes a clone of the conversation saved at LEN messages. The
//! clone shares the history, and the block's appends write beside it
//! without copying it (`teleprompt::messages::History`); the saved
//! conversation was checked against the tool-call rules once, before the
//! race, and its clones share the verdict, so no reset scans the history.
//! The reset's time is measured apart and printed as its own JSON line
//! (`teleprompt-turn-append-reset-LEN`, `mean_ns`: reset time over all
//! calls), for the table to show what part of the append time it is.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::json;
use teleprompt::{LoadOptions, Prompt, PromptContext, Syntax};

use crate::race::{race, Engine};
use crate::turn_workload::{message, turn_context, PROMPT};
use crate::Args;

/// Appends between two resets of an append engine, at most.
const BLOCK: usize = 32;

/// The engines' names for a history of `len` messages: append, reuse.
pub fn engine_names(len: usize) -> [String; 2] {
    [
        format!("teleprompt-turn-append-{len}"),
        format!("teleprompt-turn-reuse-{len}"),
    ]
}

/// The conversation's context without a history; the host sets
/// `message.language`, so the history is never searched for it.
fn conversation() -> Result<PromptContext, String> {
    crate::turn_workload::conversation(true).map_err(|e| format!("turn context: {e}"))
}

/// Renders an untimed turn of `conversation` (checking its history once,
/// leaving the caches as a run of turns leaves them); its text's length.
fn first_turn(prompt: &Prompt, conversation: &PromptContext) -> Result<usize, String> {
    let rendered = prompt
        .render_turn(&turn_context(conversation, 0))
        .map_err(|e| format!("turn: {e}"))?;
    Ok(rendered.text().len())
}

/// The reuse engine: the same history every turn.
struct Reuse<'a> {
    prompt: &'a Prompt,
    conversation: PromptContext,
    turn: u32,
}

impl Reuse<'_> {
    fn turn(&mut self) {
        self.turn += 1;
        let context = turn_context(&self.conversation, self.turn);
        black_box(
            self.prompt
                .render_turn(black_box(&context))
                .expect("renders"),
        );
    }
}

/// The append engine: one message appended every turn, the conversation
/// set back to `len` messages every `block` turns.
struct Append<'a> {
    prompt: &'a Prompt,
    /// The conversation at `len` messages, its history checked.
    saved: PromptContext,
    /// Taken out while a turn appends to it.
    conversation: Option<PromptContext>,
    len: usize,
    block: usize,
    /// Turns left before the next reset.
    left: usize,
    turn: u32,
    calls: u64,
    resets: u64,
    reset_time: Duration,
}

impl<'a> Append<'a> {
    fn new(prompt: &'a Prompt, host: PromptContext, len: usize) -> Append<'a> {
        let block = len.clamp(1, BLOCK);
        let saved = host.with_history((0..len).map(|i| message(i, None)).collect::<Vec<_>>());
        // The check a history set whole gets once, here rather than in
        // the first turn of every block.
        saved.validate_history().expect("a valid history");
        Append {
            prompt,
            conversation: Some(saved.clone()),
            saved,
            len,
            block,
            left: block,
            turn: 0,
            calls: 0,
            resets: 0,
            reset_time: Duration::ZERO,
        }
    }

    fn turn(&mut self) {
        if self.left == 0 {
            let start = Instant::now();
            self.reset();
            self.reset_time += start.elapsed();
            self.resets += 1;
            self.left = self.block;
        }
        self.left -= 1;
        self.calls += 1;
        self.turn += 1;
        let conversation = self.conversation.take().expect("a conversation");
        let next = conversation.history().len();
        let conversation = conversation.push_message(message(next, None));
        let context = turn_context(&conversation, self.turn);
        // Dropped before the next append, as hosts do.
        black_box(
            self.prompt
                .render_turn(black_box(&context))
                .expect("renders"),
        );
        drop(context);
        self.conversation = Some(conversation);
    }

    /// Sets the conversation back to `len` messages without copying them.
    fn reset(&mut self) {
        self.conversation = Some(self.saved.clone());
    }
}

/// Races the append and reuse engines at every length in `lens` under the
/// template name `turn`, then prints each append engine's reset time.
pub fn bench(lens: &[usize], args: &Args) -> Result<(), String> {
    let options = LoadOptions::new().with_syntax(Syntax::Jinja);
    let prompt = Prompt::from_source("chat.j2", PROMPT, &options)
        .map_err(|e| format!("turn prompt: {e}"))?;
    let host = conversation()?;

    let mut appends = Vec::new();
    let mut reuses = Vec::new();
    let mut names = Vec::new();
    let mut bytes = Vec::new();
    for &len in lens {
        let append = Append::new(&prompt, host.clone(), len);
        bytes.push(first_turn(
            &prompt,
            append.conversation.as_ref().expect("set"),
        )?);
        appends.push(append);
        let reuse = Reuse {
            prompt: &prompt,
            conversation: host
                .clone()
                .with_history((0..len).map(|i| message(i, None)).collect::<Vec<_>>()),
            turn: 0,
        };
        bytes.push(first_turn(&prompt, &reuse.conversation)?);
        reuses.push(reuse);
        names.extend(engine_names(len));
    }
    if args.render_only {
        return Ok(());
    }
    // Engines in the order of the names: append and reuse at each length.
    let mut renders: Vec<Box<dyn FnMut() + '_>> = Vec::new();
    for (append, reuse) in appends.iter_mut().zip(reuses.iter_mut()) {
        renders.push(Box::new(move || append.turn()));
        renders.push(Box::new(move || reuse.turn()));
    }
    let mut engines: Vec<Engine<'_>> = names
        .iter()
        .zip(bytes)
        .zip(renders.iter_mut())
        .map(|((name, bytes), render)| Engine {
            // Static for the race's report; a few bytes per length.
            name: Box::leak(name.clone().into_boxed_str()),
            bytes,
            render: &mut **render,
        })
        .collect();
    race(
        "turn",
        args.runs,
        args.run_time,
        args.only.as_deref(),
        &mut engines,
    );
    drop(engines);
    drop(renders);
    for append in &appends {
        if append.calls == 0 {
            continue;
        }
        let line = json!({
            "engine": format!("teleprompt-turn-append-reset-{}", append.len),
            "template": "turn",
            "mean_ns": (append.reset_time.as_nanos() as f64 / append.calls as f64 * 10.0).round() / 10.0,
            "calls": append.calls,
            "resets": append.resets,
        });
        println!("{line}");
    }
    Ok(())
}

//! Per-turn rendering: the cost of a turn must stay flat as the history
//! grows, when the template does not iterate it.
//!
//! Each iteration does what a host does every turn and renders a chat
//! prompt that places the history, with 10, 1,000 or 10,000 messages:
//!
//! - `turn`: the conversation's context (its history shared, never copied)
//!   is cloned, given the turn and the clock, and rendered. The history is
//!   the same every turn, checked against the tool-call rules once.
//! - `turn_append`: the host appends the turn's message to the
//!   conversation (`push_message`), then clones, sets the turn and renders,
//!   as a conversation that grows does. Each append checks the new message
//!   alone. Appends run in blocks of at most 32 (fewer than the history's
//!   length); between blocks, untimed, the conversation is set back to its
//!   length (a fresh history, checked once), so a history of 10 messages
//!   has 11 to 20 when rendered, one of 10,000 has 10,001 to 10,032.
//! - `turn_append_language`: the same, with `message.language` read from
//!   the latest user message (the host sets none): appends keep it.
//! - `turn_append_kept`: `turn_append` by a host that still holds the
//!   previous turn's `Rendered` when it appends (it shares the history):
//!   the append writes the new message beside the shared ones without
//!   copying any (`teleprompt::messages::History`), so this one is flat
//!   too.
//! - `turn_new_history`: the host sets the history whole each turn
//!   (`with_history` with a history the context did not hold), so the whole
//!   history is checked each turn: it grows with the history, and hosts
//!   should append instead.
//!
//! Assembling the conversation to send (`Rendered::conversation`) is left
//! out: it lists every message, so it grows with the history by nature.
//!
//! Run: `cargo bench -p teleprompt --bench turn`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use teleprompt::messages::HistoryMessage;
use teleprompt::{LoadOptions, Prompt, PromptContext, Syntax};

#[path = "../../../bench/turn_workload.rs"]
mod turn_workload;
use turn_workload::{message, turn_context, PROMPT};

const LENGTHS: [usize; 3] = [10, 1_000, 10_000];

/// Appends between two resets of an append benchmark, at most.
const BLOCK: usize = 32;

fn history(len: usize) -> Arc<Vec<HistoryMessage>> {
    Arc::new((0..len).map(|i| message(i, None)).collect())
}

fn prompt() -> Prompt {
    let options = LoadOptions::new().with_syntax(Syntax::Jinja);
    Prompt::from_source("chat.j2", PROMPT, &options).expect("compiles")
}

fn conversation(host_language: bool) -> PromptContext {
    turn_workload::conversation(host_language).expect("objects")
}

fn turns(c: &mut Criterion) {
    let prompt = prompt();
    let mut group = c.benchmark_group("turn");
    for len in LENGTHS {
        let conversation = conversation(true).with_history(history(len));
        let mut turn = 0u32;
        group.bench_function(BenchmarkId::from_parameter(len), |b| {
            b.iter(|| {
                turn += 1;
                let context = turn_context(&conversation, turn);
                black_box(prompt.render_turn(black_box(&context)).expect("renders"))
            })
        });
    }
    group.finish();
}

/// Each iteration appends a message to the conversation and renders the
/// turn; see the module docs for the blocks.
fn appends(c: &mut Criterion, name: &str, host_language: bool, keep_rendered: bool) {
    let prompt = prompt();
    let language = (!host_language).then_some("English");
    let mut group = c.benchmark_group(name);
    for len in LENGTHS {
        let base: Vec<HistoryMessage> = (0..len).map(|i| message(i, language)).collect();
        let block = len.min(BLOCK) as u64;
        let mut turn = 0u32;
        group.bench_function(BenchmarkId::from_parameter(len), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                let mut done = 0;
                while done < iters {
                    let count = (iters - done).min(block);
                    // Untimed: a conversation of `len` messages, a fresh
                    // copy set whole, checked and searched once by a turn.
                    let messages = base.clone();
                    let mut conversation = conversation(host_language).with_history(messages);
                    // And a turn rendered, so that the timed ones find
                    // the caches as a run of turns leaves them, not as
                    // the copy of the history did.
                    let context = turn_context(&conversation, turn);
                    black_box(prompt.render_turn(&context).expect("renders"));
                    drop(context);
                    let mut kept = None;
                    let start = Instant::now();
                    for _ in 0..count {
                        turn += 1;
                        let next = conversation.history().len();
                        conversation = conversation.push_message(message(next, language));
                        let context = turn_context(&conversation, turn);
                        let rendered = prompt.render_turn(black_box(&context)).expect("renders");
                        if keep_rendered {
                            kept = Some(rendered);
                        } else {
                            black_box(rendered);
                        }
                    }
                    timed += start.elapsed();
                    black_box(kept);
                    done += count;
                }
                timed
            })
        });
    }
    group.finish();
}

fn append_turns(c: &mut Criterion) {
    appends(c, "turn_append", true, false);
}

fn append_language_turns(c: &mut Criterion) {
    appends(c, "turn_append_language", false, false);
}

fn append_kept_turns(c: &mut Criterion) {
    appends(c, "turn_append_kept", true, true);
}

fn new_history_turns(c: &mut Criterion) {
    let prompt = prompt();
    let mut group = c.benchmark_group("turn_new_history");
    for len in LENGTHS {
        let conversation = conversation(true);
        let history = history(len);
        let mut turn = 0u32;
        group.bench_function(BenchmarkId::from_parameter(len), |b| {
            b.iter(|| {
                turn += 1;
                let context = turn_context(&conversation, turn).with_history(history.clone());
                black_box(prompt.render_turn(black_box(&context)).expect("renders"))
            })
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    turns,
    append_turns,
    append_language_turns,
    append_kept_turns,
    new_history_turns
);
criterion_main!(benches);

//! Per-turn rendering: the cost of a turn must stay flat as the history
//! grows, when the template does not iterate it.
//!
//! Each iteration does what a host does every turn: takes the conversation's
//! context, sets the turn and the clock, and renders a chat prompt that
//! places the history. The history (10, 1,000 or 10,000 messages) is shared,
//! never copied, and checked against the tool-call rules once per history.
//! Assembling the conversation to send (`Rendered::conversation`) is left
//! out: it lists every message, so it grows with the history by nature.
//!
//! Run: `cargo bench -p teleprompt --bench turn`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use serde_json::json;
use teleprompt::context::Clock;
use teleprompt::messages::{ChatMessage, Role};
use teleprompt::{LoadOptions, Prompt, PromptContext, Syntax};

const PROMPT: &str = r#"{{ role("system") -}}
You are {{ assistant.name }}. Today is {{ system.day_of_week }}, {{ system.current_date }}.
Answer in {{ message.language }}. This is turn {{ run.turn_number }}.
{{ history() }}
{{- role("user") }}{{ message.text }}
"#;

fn history(len: usize) -> Arc<Vec<ChatMessage>> {
    let messages = (0..len)
        .map(|i| ChatMessage {
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            content: Some(json!(format!(
                "message {i}: some words of the conversation"
            ))),
            tool_calls: Vec::new(),
            tool_call_id: None,
            extra: serde_json::Map::new(),
        })
        .collect();
    Arc::new(messages)
}

fn turns(c: &mut Criterion) {
    let options = LoadOptions {
        syntax: Some(Syntax::Jinja),
        ..LoadOptions::default()
    };
    let prompt = Prompt::from_source("chat.j2", PROMPT, &options).expect("compiles");
    let mut group = c.benchmark_group("turn");
    for len in [10, 1_000, 10_000] {
        let conversation = PromptContext::new()
            .assistant(json!({"name": "Ada"}))
            .expect("an object")
            .message(json!({"text": "What changed?", "language": "English"}))
            .expect("an object")
            .with_history(history(len));
        let mut turn = 0u32;
        group.bench_function(BenchmarkId::from_parameter(len), |b| {
            b.iter(|| {
                turn += 1;
                let now = jiff::Timestamp::from_second(1_790_000_000 + i64::from(turn))
                    .expect("in range");
                let context = conversation.clone().turn(turn).clock(Clock::Fixed(now));
                black_box(prompt.render_turn(black_box(&context)).expect("renders"))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, turns);
criterion_main!(benches);

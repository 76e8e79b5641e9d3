//! Render benchmarks: teleprompt beside raw minijinja on the same template.
//!
//! - `prompt`: a prompt-sized template (a dozen variables, a short loop);
//! - `large`: a loop over 300 items;
//! - `unread`: the prompt-sized template with ~10 MB of data it never reads.
//!   teleprompt's time must match `prompt`; raw minijinja gets its context
//!   converted once, outside the timed loop, as a host would.
//!
//! Run: `cargo bench -p teleprompt --bench render`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};
use teleprompt::{Data, LoadOptions, Prompt};

const PROMPT: &str = r#"You are {{ assistant.name }}, helping {{ user.name }} with {{ issue.identifier }}.
Title: {{ issue.title }}
State: {{ issue.state | lower }}
{% if attempt %}This is retry {{ attempt }} of the task.{% else %}This is the first run.{% endif %}
Labels: {{ issue.labels | join(", ") }}
{% for b in issue.blocked_by %}- blocked by {{ b.identifier }} ({{ b.state }})
{% endfor %}
Turn {{ run.turn_number }} of {{ run.max_turns }}.
{{ issue.description }}
"#;

const LARGE: &str = r#"{% for item in items %}{{ loop.index }}. {{ item.name }} [{{ item.kind }}] {% if item.done %}done{% else %}open{% endif %}: {{ item.summary }}
{% endfor %}"#;

fn prompt_data() -> Value {
    json!({
        "assistant": {"name": "Ada"},
        "user": {"name": "Grace"},
        "attempt": 2,
        "run": {"turn_number": 3, "max_turns": 10},
        "issue": {
            "identifier": "PROJ-42",
            "title": "Login fails on Safari",
            "state": "In Progress",
            "labels": ["bug", "auth", "safari"],
            "blocked_by": [
                {"identifier": "PROJ-7", "state": "Done"},
                {"identifier": "PROJ-9", "state": "Todo"}
            ],
            "description": "Users on Safari 17 see a blank page after submitting the login form."
        }
    })
}

fn large_data() -> Value {
    let items: Vec<Value> = (0..300)
        .map(|i| {
            json!({
                "name": format!("item-{i}"),
                "kind": if i % 3 == 0 { "bug" } else { "task" },
                "done": i % 2 == 0,
                "summary": format!("Summary line for item number {i}, long enough to look real."),
            })
        })
        .collect();
    json!({ "items": items })
}

/// The prompt data plus ~10 MB under a key the template never reads.
fn unread_data() -> Value {
    let mut data = prompt_data();
    let history: Vec<Value> = (0..40_000)
        .map(|i| json!({"role": "user", "content": format!("message {i}: {}", "x".repeat(200))}))
        .collect();
    data["archive"] = Value::Array(history);
    data
}

fn teleprompt_prompt(source: &str) -> Prompt {
    let options = LoadOptions::new().with_syntax(teleprompt::Syntax::Jinja);
    Prompt::from_source("bench.j2", source, &options).expect("benchmark template compiles")
}

fn minijinja_env(source: &'static str) -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    // teleprompt keeps a prompt's final newline; render the same text.
    let syntax = minijinja::syntax::SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .build()
        .expect("default delimiters");
    env.set_syntax(syntax);
    env.add_template("bench", source)
        .expect("benchmark template compiles");
    env
}

fn compare(c: &mut Criterion, group: &str, source: &'static str, data: Value) {
    let prompt = teleprompt_prompt(source);
    let env = minijinja_env(source);
    let template = env.get_template("bench").expect("template exists");
    let context = minijinja::Value::from(minijinja::value::Serde(&data));
    let data = Data::new(data);
    assert_eq!(
        prompt.render(&data).expect("renders").text(),
        template.render(&context).expect("renders"),
        "both engines render the same text"
    );
    let mut group = c.benchmark_group(group);
    group.bench_function("teleprompt", |b| {
        b.iter(|| black_box(prompt.render(black_box(&data)).expect("renders")))
    });
    group.bench_function("minijinja", |b| {
        b.iter(|| black_box(template.render(black_box(&context)).expect("renders")))
    });
    group.finish();
}

/// A research-assistant prompt: an `if`, N documents each with a nested
/// loop over its tags (the Python comparison's workload, bench/python).
const DOCUMENTS: &str = include_str!("../../../bench/data/py_prompt.j2");

fn documents_data(n: usize) -> Value {
    let text = match n {
        10 => include_str!("../../../bench/data/py_prompt_10.json"),
        _ => include_str!("../../../bench/data/py_prompt_200.json"),
    };
    serde_json::from_str(text).expect("benchmark data parses")
}

fn benches(c: &mut Criterion) {
    compare(c, "documents_10", DOCUMENTS, documents_data(10));
    compare(c, "documents_200", DOCUMENTS, documents_data(200));
    compare(c, "prompt", PROMPT, prompt_data());
    compare(c, "large", LARGE, large_data());
    compare(c, "unread", PROMPT, unread_data());
}

criterion_group!(render, benches);
criterion_main!(render);

//! Chat-template benchmarks: teleprompt's `chat-template` syntax beside raw
//! minijinja on Hugging Face chat templates, with a 20-message conversation.
//!
//! - `llama3`: Meta Llama 3 8B Instruct's chat template (a loop of string
//!   concatenations with `trim`);
//! - `llama31`: Llama 3.1 8B Instruct's (the system message sliced off the
//!   list, a date line, tool branches not taken, a generation prompt).
//!
//! Each group times one render of `bench/data/chat_20.json` (system message
//! plus 19 alternating user/assistant turns, `add_generation_prompt`, the
//! special tokens, `date_string`; ~8.5 KB of output). teleprompt renders
//! through its public API (`Prompt::render(&data)`, `Data` built once); raw
//! minijinja is set up as `transformers` sets up Jinja2 (`trim_blocks`,
//! `lstrip_blocks`, no kept trailing newline, lenient undefined values,
//! Python's methods, `raise_exception`), its context converted once outside
//! the timed loop, as a host would keep it. Both must render the same text.
//! Python's Jinja2 is timed beside both by `bench/jinja/compare.py`.
//!
//! Run: `cargo bench -p teleprompt --bench chat_template`.

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::Value;
use teleprompt::{Data, LoadOptions, Prompt};

/// A file of `bench/data/`.
fn read_data(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// A minijinja environment as `transformers` builds its Jinja2 one. Its
/// `tojson` and `strftime_now` are left out: minijinja looks them up only
/// when called, and these templates call neither for this conversation.
fn minijinja_env(source: &str) -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    let syntax = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(false)
        .build()
        .expect("default delimiters");
    env.set_syntax(syntax);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function(
        "raise_exception",
        |message: String| -> Result<String, minijinja::Error> {
            Err(minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                message,
            ))
        },
    );
    env.add_template_owned("chat_template", source.to_string())
        .expect("chat template compiles");
    env
}

fn compare(c: &mut Criterion, name: &str, json: &Value) {
    let source = read_data(&format!("{name}_chat_template.jinja"));
    // The file name selects the chat-template syntax.
    let prompt = Prompt::from_source("chat_template.jinja", &source, &LoadOptions::default())
        .expect("chat template loads");
    let data = Data::new(json.clone());
    let env = minijinja_env(&source);
    let template = env.get_template("chat_template").expect("template exists");
    let context = minijinja::Value::from(minijinja::value::Serde(json));
    assert_eq!(
        prompt.render(&data).expect("renders").text(),
        template.render(&context).expect("renders"),
        "both engines render the same text"
    );
    let mut group = c.benchmark_group(format!("chat_template/{name}"));
    group.bench_function("teleprompt", |b| {
        b.iter(|| black_box(prompt.render(black_box(&data)).expect("renders")))
    });
    group.bench_function("minijinja", |b| {
        b.iter(|| black_box(template.render(black_box(&context)).expect("renders")))
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let json: Value = serde_json::from_str(&read_data("chat_20.json")).expect("valid JSON");
    compare(c, "llama3", &json);
    compare(c, "llama31", &json);
}

criterion_group!(chat_template, benches);
criterion_main!(chat_template);

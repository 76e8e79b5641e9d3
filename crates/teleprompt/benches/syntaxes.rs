//! One workload in the three syntaxes, beside the text written by hand:
//! the research-assistant prompt of `bench/all` (an `if`, N documents each
//! with a nested loop over its tags, documents numbered from 0), with 10
//! and 200 documents. `bench/all/run.sh` compares the same renders with
//! the other engines; this is teleprompt's side of each row, in criterion.
//!
//! Each syntax also renders recording a source map (`…/source_map`), and
//! recording and building it (`…/source_map_built`).
//!
//! Run: `cargo bench -p teleprompt --bench syntaxes`.

use std::fmt::Write;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::Value;
use teleprompt::{Data, LoadOptions, Prompt, RenderOptions};

const TEMPLATES: [(&str, &str, &str); 3] = [
    (
        "jinja",
        "py_prompt.j2",
        include_str!("../../../bench/all/templates/py_prompt.j2"),
    ),
    (
        "go",
        "py_prompt.gotmpl",
        include_str!("../../../bench/all/templates/py_prompt.gotmpl"),
    ),
    (
        "handlebars",
        "py_prompt.hbs",
        include_str!("../../../bench/all/templates/py_prompt.hbs"),
    ),
];

fn documents(n: usize) -> Value {
    let text = match n {
        10 => include_str!("../../../bench/data/py_prompt_10.json"),
        _ => include_str!("../../../bench/data/py_prompt_200.json"),
    };
    serde_json::from_str(text).expect("benchmark data parses")
}

/// The same text, written by hand from the JSON: what it could cost.
fn by_hand(json: &Value, capacity: usize) -> String {
    fn text<'v>(value: &'v Value, key: &str) -> &'v str {
        value.get(key).and_then(Value::as_str).unwrap_or_default()
    }
    let mut out = String::with_capacity(capacity);
    let user = &json["user"];
    out.push_str("You are ");
    out.push_str(text(&json["assistant"], "name"));
    out.push_str(", a research assistant for ");
    out.push_str(text(user, "name"));
    out.push_str(".\n");
    out.push_str(match user["premium"].as_bool() {
        Some(true) => "Answer in depth, with citations.",
        _ => "Answer briefly.",
    });
    out.push_str("\n\nQuestion: ");
    out.push_str(text(json, "question"));
    out.push_str("\n\nUse these documents:\n");
    for (i, d) in json["documents"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let year = d["year"].as_i64().unwrap_or_default();
        let _ = write!(
            out,
            "\n[{i}] {} ({}, {year})",
            text(d, "title"),
            text(d, "source")
        );
        if d["pinned"].as_bool() == Some(true) {
            out.push_str(" — pinned");
        }
        out.push_str("\nTags: ");
        for (j, tag) in d["tags"].as_array().into_iter().flatten().enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            out.push_str(tag.as_str().unwrap_or_default());
        }
        out.push('\n');
        out.push_str(text(d, "summary"));
        out.push('\n');
    }
    out.push_str("\nCite documents by their number. If none of them answers, say so.\n");
    out
}

fn benches(c: &mut Criterion) {
    for n in [10, 200] {
        let json = documents(n);
        let data = Data::new(json.clone());
        let expected = by_hand(&json, 0);
        let mut group = c.benchmark_group(format!("syntaxes/{n}"));
        for (syntax, name, source) in TEMPLATES {
            let prompt = Prompt::from_source(name, source, &LoadOptions::default()).expect("loads");
            let text = prompt.render(&data).expect("renders");
            assert_eq!(text.text(), expected, "{syntax} renders the text");
            group.bench_function(syntax, |b| {
                b.iter(|| black_box(prompt.render(black_box(&data)).expect("renders")))
            });
            // The same render recording its source map; then building it too.
            let mapped = RenderOptions::new().with_source_map(true);
            group.bench_function(format!("{syntax}/source_map"), |b| {
                b.iter(|| {
                    black_box(
                        prompt
                            .render_with(black_box(&data), &mapped)
                            .expect("renders"),
                    )
                })
            });
            group.bench_function(format!("{syntax}/source_map_built"), |b| {
                b.iter(|| {
                    let rendered = prompt
                        .render_with(black_box(&data), &mapped)
                        .expect("renders");
                    black_box(rendered.source_map().map(|map| map.messages.len()))
                })
            });
        }
        group.bench_function("by_hand", |b| {
            b.iter(|| black_box(by_hand(black_box(&json), expected.len())))
        });
        group.finish();
    }
}

criterion_group!(syntaxes, benches);
criterion_main!(syntaxes);

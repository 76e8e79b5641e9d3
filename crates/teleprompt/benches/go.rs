//! Go-syntax render benchmarks, on the template and data files that
//! bench/compare.sh also gives to gotmpl and to Go's text/template (see
//! bench/README.md for the cross-engine ratios):
//!
//! - `go_prompt`: a Sortie-style WORKFLOW prompt (if/else on `.attempt`,
//!   `range` over labels and `blocked_by`, `with`, `join`, `toJSON`,
//!   `printf`, `lower`);
//! - `go_large`: a `range` over 300 items with several fields and an `if`.
//!
//! Run: `cargo bench -p teleprompt --bench go`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::Value;
use teleprompt::{Data, LoadOptions, Prompt, Syntax};

const PROMPT: &str = include_str!("../../../bench/data/go_prompt.gotmpl");
const PROMPT_DATA: &str = include_str!("../../../bench/data/go_prompt.json");
const LARGE: &str = include_str!("../../../bench/data/go_large.gotmpl");
const LARGE_DATA: &str = include_str!("../../../bench/data/go_large.json");

fn bench(c: &mut Criterion, group: &str, source: &str, json: &str) {
    let options = LoadOptions::new().with_syntax(Syntax::Go);
    let prompt =
        Prompt::from_source("bench.gotmpl", source, &options).expect("benchmark template parses");
    let data: Value = serde_json::from_str(json).expect("benchmark data is JSON");
    let data = Data::new(data);
    let text = prompt.render(&data).expect("renders");
    assert!(!text.text().is_empty(), "the benchmark renders some text");

    let mut group = c.benchmark_group(group);
    group.bench_function("teleprompt", |b| {
        b.iter(|| black_box(prompt.render(black_box(&data)).expect("renders")))
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    bench(c, "go_prompt", PROMPT, PROMPT_DATA);
    bench(c, "go_large", LARGE, LARGE_DATA);
}

criterion_group!(go, benches);
criterion_main!(go);

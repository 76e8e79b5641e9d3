//! Token-counting benchmarks: how long `teleprompt::tokens::Tokenizer`
//! takes to count a long prompt.
//!
//! The text is ~100 KB of what prompts are made of, built here the same
//! way every run (a fixed pseudo-random pick of pieces, no file): English
//! paragraphs of instructions and retrieved documents, markdown headings
//! and lists, Rust, Python and shell code in fences, JSON, tables, numbers,
//! paths and URLs, and a little typographic non-ASCII (`—`, `“…”`, `é`).
//!
//! - `tokens/count/o200k_base`, `tokens/count/cl100k_base`: the OpenAI
//!   encodings (`bpe-openai`, in the binary);
//! - `tokens/count/qwen3`, `tokens/count/llama3_2`: Hugging Face
//!   `tokenizer.json` files (the `tokenizers` crate), read from
//!   `$TELEPROMPT_TOKENIZERS/NAME/tokenizer.json` (default
//!   `target/tokenizers`, where `crates/teleprompt-py/tests/fetch_tokenizers.sh`
//!   puts them). A file that is not there is skipped, with a note on
//!   stderr;
//! - `tokens/load/NAME`: reading and parsing that `tokenizer.json` (a
//!   fresh `Tokenizer` counting one word): what a process pays once.
//!
//! Each `count` call is `Tokenizer::count(&text)`, the tokenizer already
//! made (and, for a file, already parsed, outside the timed loop). With
//! `TELEPROMPT_TOKENS_BENCH_TEXT=FILE` the bench writes the text there, to
//! count it with other tools.
//!
//! The bench runs on mimalloc, the global allocator of the `teleprompt`
//! CLI and the Python package (a library leaves the choice to its host);
//! `tokenizers` allocates per character and per token, and glibc's malloc
//! nearly doubles a `tokenizer.json` count (to time it, remove the
//! `#[global_allocator]` below).
//!
//! - `tokens/turn/*`: the 201st turn of a 200-message ChatML conversation
//!   (~100 KB) with Qwen3's tokenizer: rendered alone (`render`), rendered
//!   and counted whole (`whole`), rendered and counted with the previous
//!   turn's tokens kept (`cached`, a `TokenCache`).
//!
//! Run: `cargo bench -p teleprompt --features tokens --bench tokens`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use teleprompt::tokens::Tokenizer;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How many bytes of text to count, at least.
const TEXT_BYTES: usize = 100 * 1024;

/// The Hugging Face tokenizers to time, by folder name.
const FILES: &[&str] = &["qwen3", "llama3_2"];

/// A small deterministic generator (64-bit LCG, Knuth's constants).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const NAMES: &[&str] = &[
    "Grace", "Linus", "Ada", "Margaret", "Ken", "Barbara", "Dennis", "Frances",
];
const PROJECTS: &[&str] = &[
    "acme/web",
    "northwind/billing",
    "contoso/search-api",
    "fabrikam/etl",
];
const TOPICS: &[&str] = &[
    "the login form",
    "the invoice export",
    "rate limiting",
    "the search index",
    "session cookies",
    "the retry policy",
];

const PROSE: &[&str] = &[
    "You are a careful senior engineer working on {project}. Read the issue, the relevant files and the test output below, then propose the smallest change that fixes the bug without breaking the public API. Explain your reasoning step by step before you write any code, and say which tests you would add.",
    "{name} reported that {topic} fails intermittently when more than {n} requests arrive within the same second. The logs show a timeout after {m} ms, followed by a retry that succeeds; users see a blank page in between. We suspect a race between the cache refresh and the request handler.",
    "The following documents were retrieved from the knowledge base. Use them only if they are relevant to the question; cite each one you use by its number, like [2], and do not invent sources. If the documents do not answer the question, say so plainly instead of guessing.",
    "Summarize the conversation so far in at most {n} words, keeping every decision, every open question and every number that was agreed on. Write it for someone who joins the project tomorrow and has not read the thread — be concrete, not vague.",
    "Our release process has three stages: a build on every pull request, a staging deploy after review, and a production rollout behind a feature flag at {n}% of traffic. A rollback takes about {m} seconds and is triggered automatically when the error rate doubles.",
    "When you answer, prefer short paragraphs and bullet points over long blocks of text. Quote error messages exactly, including their line numbers, and never paste secrets such as API keys, passwords or tokens, even when they appear in the input.",
    "In the meeting on Tuesday, {name} proposed moving {topic} to the new queue service. The “café” team (Zoë and René) agreed, provided that latency stays under {m} ms at the 99th percentile and that the migration can be paused at any point.",
    "Customer ticket #{n}: “I was charged twice for the same order and the refund has not arrived after {m} days. I have attached the bank statement. Please fix this as soon as possible; I am a long-time customer and this is very frustrating.”",
];

const CODE: &[&str] = &[
    "```rust\n/// Retries `operation` up to `attempts` times, doubling the delay.\npub fn retry<T, E>(attempts: u32, mut operation: impl FnMut() -> Result<T, E>) -> Result<T, E> {\n    let mut delay = Duration::from_millis({m});\n    for attempt in 1.. {\n        match operation() {\n            Ok(value) => return Ok(value),\n            Err(error) if attempt >= attempts => return Err(error),\n            Err(_) => {\n                std::thread::sleep(delay);\n                delay *= 2;\n            }\n        }\n    }\n    unreachable!()\n}\n```",
    "```python\ndef load_rows(path: str, limit: int = {n}) -> list[dict]:\n    \"\"\"Read a JSON Lines file, skipping blank lines.\"\"\"\n    rows = []\n    with open(path, encoding=\"utf-8\") as handle:\n        for number, line in enumerate(handle, start=1):\n            if not line.strip():\n                continue\n            try:\n                rows.append(json.loads(line))\n            except json.JSONDecodeError as error:\n                raise ValueError(f\"{path}:{number}: {error}\") from error\n            if len(rows) >= limit:\n                break\n    return rows\n```",
    "```json\n{\"id\": \"req-{n}\", \"user\": {\"name\": \"{name}\", \"plan\": \"pro\"}, \"items\": [{\"sku\": \"A-{m}\", \"qty\": 2, \"price\": 19.99}, {\"sku\": \"B-7\", \"qty\": 1, \"price\": 5.5}], \"shipping\": null, \"paid\": true}\n```",
    "```sh\n$ cargo test -p billing -- --nocapture\nrunning {n} tests\ntest invoice::tests::rounds_half_even ... ok\ntest invoice::tests::export_csv ... FAILED\n\nfailures:\n---- invoice::tests::export_csv stdout ----\nthread 'invoice::tests::export_csv' panicked at src/invoice.rs:{m}:9:\nassertion `left == right` failed\n```",
    "```typescript\nexport async function fetchUser(id: string): Promise<User | undefined> {\n  const response = await fetch(`/api/users/${id}`, { headers: { Accept: \"application/json\" } });\n  if (response.status === 404) return undefined;\n  if (!response.ok) throw new Error(`HTTP ${response.status}`);\n  return (await response.json()) as User;\n}\n```",
];

const LISTS: &[&str] = &[
    "- Reproduce the failure locally with `{n}` concurrent clients.\n- Add a regression test under `tests/{topic_slug}.rs`.\n- Keep the change under {m} lines if possible.\n- Update `CHANGELOG.md`.",
    "| metric | before | after |\n|---|---:|---:|\n| p50 latency | {m} ms | {n} ms |\n| p99 latency | 1,{m} ms | {n}0 ms |\n| errors / hour | {n} | 0 |",
    "1. Open https://example.com/docs/{topic_slug}?version={n}\n2. Check the settings in `/etc/{topic_slug}/config.yaml`.\n3. Restart the service with `systemctl restart app@{n}`.",
];

/// Fills `{name}`, `{project}`, `{topic}`, `{topic_slug}`, `{n}` and `{m}`.
fn fill(piece: &str, rng: &mut Lcg) -> String {
    let topic = TOPICS[rng.below(TOPICS.len())];
    piece
        .replace("{name}", NAMES[rng.below(NAMES.len())])
        .replace("{project}", PROJECTS[rng.below(PROJECTS.len())])
        .replace("{topic_slug}", &topic.replace("the ", "").replace(' ', "_"))
        .replace("{topic}", topic)
        .replace("{n}", &(2 + rng.below(5000)).to_string())
        .replace("{m}", &(10 + rng.below(900)).to_string())
}

/// The text to count: sections of a heading, prose, and now and then a
/// list or code, until it holds `TEXT_BYTES` bytes.
fn prompt_text() -> String {
    let mut rng = Lcg(0x7e1e_9a0b);
    let mut text = String::with_capacity(TEXT_BYTES + 4096);
    let mut section = 1;
    while text.len() < TEXT_BYTES {
        let topic = TOPICS[rng.below(TOPICS.len())];
        text.push_str(&format!("## {section}. Notes on {topic}\n\n"));
        for _ in 0..1 + rng.below(3) {
            text.push_str(&fill(PROSE[rng.below(PROSE.len())], &mut rng));
            text.push_str("\n\n");
        }
        match rng.below(3) {
            0 => text.push_str(&fill(CODE[rng.below(CODE.len())], &mut rng)),
            1 => text.push_str(&fill(LISTS[rng.below(LISTS.len())], &mut rng)),
            _ => text.push_str(&fill(PROSE[rng.below(PROSE.len())], &mut rng)),
        }
        text.push_str("\n\n");
        section += 1;
    }
    text
}

/// Where the Hugging Face tokenizers are.
fn tokenizers_dir() -> PathBuf {
    match std::env::var_os("TELEPROMPT_TOKENIZERS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/tokenizers"),
    }
}

fn benches(c: &mut Criterion) {
    let text = prompt_text();
    // The text itself, to count it with other tools (bench/README.md).
    if let Some(path) = std::env::var_os("TELEPROMPT_TOKENS_BENCH_TEXT") {
        std::fs::write(&path, &text).expect("writes the text");
    }
    let mut group = c.benchmark_group("tokens/count");
    group.throughput(Throughput::Bytes(text.len() as u64));
    let mut counted = Vec::new();
    for name in Tokenizer::NAMES {
        let tokenizer = Tokenizer::named(name).expect("a known encoding");
        counted.push((name.to_string(), tokenizer.count(&text).expect("counts")));
        group.bench_function(*name, |b| {
            b.iter(|| black_box(tokenizer.count(black_box(&text)).expect("counts")))
        });
    }
    let dir = tokenizers_dir();
    let mut files = Vec::new();
    for name in FILES {
        let path = dir.join(name).join("tokenizer.json");
        if !path.is_file() {
            eprintln!(
                "tokens bench: {} is missing, skipping {name} (crates/teleprompt-py/tests/fetch_tokenizers.sh target/tokenizers fetches it)",
                path.display()
            );
            continue;
        }
        let path = path.to_string_lossy().into_owned();
        let tokenizer = Tokenizer::named_or_file(&path).expect("a tokenizer.json path");
        // Parsed here, outside the timed loop.
        let count = match tokenizer.count(&text) {
            Ok(count) => count,
            Err(error) => {
                eprintln!("tokens bench: {path}: {error}; skipping {name}");
                continue;
            }
        };
        counted.push((name.to_string(), count));
        group.bench_function(*name, |b| {
            b.iter(|| black_box(tokenizer.count(black_box(&text)).expect("counts")))
        });
        files.push((name, path));
    }
    group.finish();
    let summary: Vec<String> = counted
        .iter()
        .map(|(name, count)| format!("{name} {count}"))
        .collect();
    eprintln!(
        "tokens bench: {} bytes ({} characters) of text; tokens: {}",
        text.len(),
        text.chars().count(),
        summary.join(", ")
    );

    let mut group = c.benchmark_group("tokens/load");
    group.sample_size(10);
    for (name, path) in &files {
        group.bench_function(**name, |b| {
            b.iter(|| {
                let tokenizer = Tokenizer::named_or_file(path).expect("a tokenizer.json path");
                black_box(tokenizer.count("hello").expect("loads"))
            })
        });
    }
    group.finish();
}

/// A support prompt with budget sections (rules, ten retrieved documents,
/// notes) and a 40-message history, `budget` front matter or none.
fn support_prompt(budget: &str) -> teleprompt::Prompt {
    let source = format!(
        "---\ntokenizer: o200k_base\n{budget}---\n\
         {{{{ role(\"system\") }}}}You answer questions about {{{{ product }}}}.\n\
         {{% section \"rules\", priority=9 %}}{{{{ rules }}}}{{% endsection %}}\n\
         Documents:\n\
         {{% for doc in docs %}}{{% section \"docs\", priority=2 %}}\n- {{{{ doc }}}}{{% endsection %}}{{% endfor %}}\n\
         {{% section \"notes\", truncate=true %}}\nNotes: {{{{ notes }}}}{{% endsection %}}\n\
         {{{{ history() }}}}"
    );
    teleprompt::Prompt::from_source("support.j2", &source, &teleprompt::LoadOptions::default())
        .expect("the bench prompt loads")
}

/// The turn the budget benches render: the prompt's data and a history of
/// 20 exchanges.
fn support_turn() -> teleprompt::PromptContext {
    let mut rng = Lcg(7);
    let sentence = |rng: &mut Lcg| {
        let mut out = PROSE[rng.below(PROSE.len())].to_string();
        out.push(' ');
        out
    };
    let docs: Vec<String> = (0..10)
        .map(|_| (0..6).map(|_| sentence(&mut rng)).collect())
        .collect();
    let mut history = Vec::new();
    for _ in 0..20 {
        history.push(serde_json::json!({"role": "user", "content": sentence(&mut rng)}));
        history.push(serde_json::json!({"role": "assistant", "content": sentence(&mut rng) + &sentence(&mut rng)}));
    }
    history.push(serde_json::json!({"role": "user", "content": "And how do I reset it?"}));
    teleprompt::PromptContext::new()
        .args(serde_json::json!({
            "product": "Northwind routers",
            "rules": (0..4).map(|_| sentence(&mut rng)).collect::<String>(),
            "docs": docs,
            "notes": (0..5).map(|_| sentence(&mut rng)).collect::<String>(),
        }))
        .expect("args")
        .with_history(
            serde_json::from_value::<Vec<teleprompt::HistoryMessage>>(serde_json::Value::Array(
                history,
            ))
            .expect("a history"),
        )
}

/// What a budget costs: the turn rendered and counted without one, with
/// one it fits, and with one that cuts sections and the history.
fn budget_benches(c: &mut Criterion) {
    let turn = support_turn();
    let unbudgeted = support_prompt("");
    let full = unbudgeted
        .render_turn(&turn)
        .expect("renders")
        .tokens()
        .expect("counts")
        .total;
    let fits = support_prompt(&format!("budget: {full}\n"));
    let cuts = support_prompt(&format!(
        "budget:\n  total: {}\n  history:\n    priority: 1\n",
        full / 2
    ));
    let report = cuts.render_turn(&turn).expect("fits after cuts");
    let report = report.budget().expect("a report");
    eprintln!(
        "tokens bench: the budget turn is {full} tokens; at {} the budget cuts {:?}",
        full / 2,
        report
            .cuts
            .iter()
            .map(|cut| (cut.part.as_str(), cut.tokens))
            .collect::<Vec<_>>()
    );
    let mut group = c.benchmark_group("tokens/budget");
    group.bench_function("render_and_count", |b| {
        b.iter(|| {
            let rendered = unbudgeted.render_turn(black_box(&turn)).expect("renders");
            black_box(rendered.tokens().expect("counts").total)
        })
    });
    group.bench_function("fits", |b| {
        b.iter(|| black_box(fits.render_turn(black_box(&turn)).expect("fits")))
    });
    group.bench_function("cuts", |b| {
        b.iter(|| black_box(cuts.render_turn(black_box(&turn)).expect("fits after cuts")))
    });
    group.finish();
}

/// A conversation's next turn counted whole, and with the previous turn's
/// tokens kept (`TokenCache`): ChatML (`axolotl-chatml.jinja`, a real
/// template) with Qwen3's tokenizer, 200 messages of the bench's text
/// (~100 KB), the last exchange new.
fn turn_benches(c: &mut Criterion) {
    let file = tokenizers_dir().join("qwen3/tokenizer.json");
    if !file.is_file() {
        eprintln!("tokens/turn: skipped, no {}", file.display());
        return;
    }
    let tokenizer = Tokenizer::named_or_file(&file.to_string_lossy()).expect("tokenizer");
    let template = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/chat-template/templates/axolotl-chatml.jinja"),
    )
    .expect("template");
    let options = teleprompt::LoadOptions::default().with_tokenizer(tokenizer);
    let prompt =
        teleprompt::Prompt::from_source("chat_template.jinja", &template, &options).expect("loads");
    let mut rng = Lcg(7);
    let messages: Vec<serde_json::Value> = (0..200)
        .map(|at| {
            let mut content = String::new();
            while content.len() < 500 {
                content.push_str(&fill(PROSE[rng.below(PROSE.len())], &mut rng));
                content.push('\n');
            }
            let role = ["user", "assistant"][at % 2];
            serde_json::json!({"role": role, "content": content})
        })
        .collect();
    let render = |messages: &[serde_json::Value]| {
        prompt
            .render(serde_json::json!({"messages": messages}))
            .expect("renders")
    };
    let mut primed = teleprompt::tokens::TokenCache::new();
    let earlier = render(&messages[..198])
        .tokens_with(&mut primed)
        .expect("counts");
    let whole = render(&messages).tokens().expect("counts");
    let mut check = primed.clone();
    let cached = render(&messages).tokens_with(&mut check).expect("counts");
    assert_eq!(cached.ids, whole.ids, "the cache gives the same ids");
    assert_eq!(cached.kept, earlier.total, "ChatML only appends");
    let mut group = c.benchmark_group("tokens/turn");
    group.bench_function("whole/qwen3", |b| {
        b.iter(|| black_box(render(black_box(&messages)).tokens().expect("counts").total))
    });
    group.bench_function("cached/qwen3", |b| {
        b.iter_batched(
            || primed.clone(),
            |mut cache| {
                let rendered = render(black_box(&messages));
                black_box(rendered.tokens_with(&mut cache).expect("counts").total)
            },
            criterion::BatchSize::SmallInput,
        )
    });
    group.bench_function("render/qwen3", |b| {
        b.iter(|| black_box(render(black_box(&messages)).text().len()))
    });
    group.finish();
}

criterion_group!(tokens, benches, budget_benches, turn_benches);
criterion_main!(tokens);

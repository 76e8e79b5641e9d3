//! Budgets: every `tests/data/budget/*.txt` file is one prompt with a
//! `budget:` rendered as a turn, and what the budget made of it.
//!
//! A file is sections, each introduced by a line `=== NAME` (lines before
//! the first are a comment saying what the case shows):
//!
//! - `=== prompt FILE` — the prompt file; FILE's extension gives the
//!   syntax (`prompt.j2`, `prompt.gotmpl`, `prompt.hbs`);
//! - `=== data` — JSON or YAML data (default `{}`);
//! - `=== history` — the turn's history, a JSON list of messages;
//! - `=== conversation` — the turn as OpenAI chat messages (pretty JSON);
//! - `=== budget` — `Rendered::budget()`, the report (pretty JSON);
//! - `=== error` — instead of both, the render's error message.
//!
//! With `TELEPROMPT_BLESS=1` a failing file's expected sections are
//! rewritten from what teleprompt did (review with `git diff`).

use std::fs;
use std::path::Path;

use teleprompt::{HistoryMessage, LoadOptions, OutputFormat, Prompt, PromptContext};

use crate::common::blessing;

const EXPECTED: &[&str] = &["conversation", "budget", "error"];

#[test]
fn every_budget_case_cuts_as_written() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/budget");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .expect("tests/data/budget")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    let mut failed = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("readable");
        let (comment, mut sections) = parse(&text);
        let actual = run(&sections);
        let expected: Vec<(String, String)> = sections
            .iter()
            .filter(|(header, _)| EXPECTED.contains(&name(header)))
            .map(|(header, body)| (name(header).to_string(), body.clone()))
            .collect();
        if expected == actual {
            continue;
        }
        if blessing() {
            sections.retain(|(header, _)| !EXPECTED.contains(&name(header)));
            sections.extend(actual);
            let mut out = comment.clone();
            for (header, body) in &sections {
                out.push_str(&format!("=== {header}\n{body}"));
            }
            fs::write(file, out).expect("writable");
            eprintln!("blessed {}", file.display());
        } else {
            failed.push(format!(
                "{}:\nexpected {expected:#?}\nactual {actual:#?}",
                file.display()
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{}\n(TELEPROMPT_BLESS=1 rewrites them)",
        failed.join("\n")
    );
}

fn name(header: &str) -> &str {
    header.split_whitespace().next().unwrap_or_default()
}

/// The comment, then each section's header and body (with its final
/// newline).
fn parse(text: &str) -> (String, Vec<(String, String)>) {
    let mut comment = String::new();
    let mut sections: Vec<(String, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        match (line.strip_prefix("=== "), sections.last_mut()) {
            (Some(header), _) => sections.push((header.trim_end().to_string(), String::new())),
            (None, Some((_, body))) => body.push_str(line),
            (None, None) => comment.push_str(line),
        }
    }
    (comment, sections)
}

/// What the case renders: the conversation and the report, or the error.
fn run(sections: &[(String, String)]) -> Vec<(String, String)> {
    let get = |wanted: &str| {
        sections
            .iter()
            .find(|(header, _)| name(header) == wanted)
            .map(|(header, body)| (header.clone(), body.clone()))
    };
    let (header, source) = get("prompt").expect("a prompt section");
    let file = header.split_whitespace().nth(1).unwrap_or("prompt.j2");
    let prompt = Prompt::from_source(file, &source, &LoadOptions::default())
        .unwrap_or_else(|error| panic!("{file} loads: {error}"));
    let data: serde_json::Value = match get("data") {
        Some((_, data)) => serde_saphyr::from_str(&data).expect("data"),
        None => serde_json::json!({}),
    };
    let history: Vec<HistoryMessage> = match get("history") {
        Some((_, history)) => serde_json::from_str(&history).expect("history"),
        None => Vec::new(),
    };
    let context = PromptContext::new()
        .args(data)
        .expect("args")
        .with_history(history);
    match prompt.render_turn(&context) {
        Ok(rendered) => {
            let conversation = rendered.to_format(OutputFormat::OpenAi).expect("openai");
            let report = serde_json::to_value(rendered.budget().expect("a report")).unwrap();
            vec![
                ("conversation".to_string(), pretty(&conversation)),
                ("budget".to_string(), pretty(&report)),
            ]
        }
        Err(error) => vec![("error".to_string(), format!("{}\n", error.message()))],
    }
}

fn pretty(value: &serde_json::Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(value).unwrap())
}

/// Hostile: 20,000 sections of one block each, every one its own name and
/// priority, and a budget that keeps ten of them (or none, then fails):
/// each cut is found without walking every section, so the turn is cut
/// in one count, not one per section (it took two minutes on an
/// unoptimized build when each cut searched all of them).
#[test]
fn twenty_thousand_sections_are_cut_in_one_pass() {
    let _alone = crate::common::exclusive();
    let body = "{% for i in range(20000) %}{% section \"s\" ~ i, priority=i %}word {% endsection %}{% endfor %}";
    let load = |total: u32, tail: &str| {
        let source = format!("---\ntokenizer: o200k_base\nbudget: {total}\n---\n{body}{tail}");
        Prompt::from_source("many.j2", &source, &LoadOptions::default()).expect("loads")
    };
    let started = std::time::Instant::now();
    let rendered = load(10, "")
        .render_turn(&PromptContext::new())
        .expect("fits");
    let report = rendered.budget().expect("a report");
    assert!(report.tokens <= 10, "{report:?}");
    // The lowest priorities went first: what is left is the last blocks.
    assert_eq!(report.sections[0].items, 0);
    assert_eq!(report.sections[19_999].items, 1);
    assert_eq!(
        report.cuts.len(),
        report.sections.iter().filter(|s| s.items == 0).count()
    );
    let error = load(3, "{{ role(\"user\") }}Hello there my friend")
        .render_turn(&PromptContext::new())
        .unwrap_err();
    assert!(
        error
            .message()
            .contains("and 19997 more were cut to nothing"),
        "{error}"
    );
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
}

/// Automatic cache breakpoints stay on a turn whose budget cut a section
/// (the cut is split again, and the breakpoints placed again).
#[test]
fn automatic_breakpoints_survive_a_cut() {
    let source =
        "---\ntokenizer: o200k_base\nbudget: 20\ncache: {breakpoints: auto, min_tokens: 1}\n---\n\
        {{ role('system') }}Be brief.{% section 'docs', priority=1 %} Lorem ipsum dolor sit amet, \
        consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna \
        aliqua.{% endsection %}{{ history() }}{{ role('user') }}Go on.";
    let prompt =
        teleprompt::Prompt::from_source("p.j2", source, &teleprompt::LoadOptions::default())
            .expect("loads");
    let history: Vec<teleprompt::HistoryMessage> =
        serde_json::from_value(serde_json::json!([{"role": "user", "content": "Hi"}])).unwrap();
    let rendered = prompt
        .render_turn(&teleprompt::PromptContext::new().with_history(history))
        .expect("fits");
    let budget = rendered.budget().expect("a budget");
    assert!(!budget.cuts.is_empty(), "the docs are cut: {budget:?}");
    let body = rendered
        .to_format(teleprompt::OutputFormat::Anthropic)
        .unwrap();
    assert_eq!(
        body.to_string().matches("cache_control").count(),
        2,
        "{body}"
    );
}

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

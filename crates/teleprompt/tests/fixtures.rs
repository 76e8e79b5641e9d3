//! Fixture-driven tests: every `tests/fixtures/<syntax>/*.txt` file is one case.
//!
//! A case is a file of sections, each introduced by a line `=== NAME`
//! (lines before the first section are comments):
//!
//! - `=== prompt [FILE]` — the whole prompt file (front matter and body);
//!   FILE names it (default `prompt.md`, so the folder's syntax applies).
//! - `=== data` — JSON or YAML data (default `{}`).
//! - `=== options` — `strict: LEVEL` lines (host overrides).
//! - `=== output` — the exact rendered text.
//! - `=== error` — `CLASS [LINE:COL]`, then the exact message, then
//!   optional `help: SUGGESTION` and `at: ACTION` lines.
//!
//! With both `output` and `error`, the render must recover (`on_error:
//! original`): return the output and carry the error. A marker ending in
//! ` -chomp` drops its section's final newline.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use teleprompt::{Error, LoadOptions, Prompt, Strictness, Syntax};

#[derive(Default, Debug)]
struct Case {
    prompt_file: String,
    sections: BTreeMap<String, String>,
}

fn parse_case(text: &str) -> Result<Case, String> {
    let mut case = Case {
        prompt_file: "prompt.md".into(),
        ..Case::default()
    };
    let mut current: Option<(String, bool)> = None;
    let mut buffer = String::new();
    let flush = |current: &mut Option<(String, bool)>, buffer: &mut String, case: &mut Case| {
        if let Some((name, chomp)) = current.take() {
            let mut content = std::mem::take(buffer);
            if chomp && content.ends_with('\n') {
                content.pop();
            }
            if case.sections.insert(name.clone(), content).is_some() {
                return Err(format!("section `{name}` appears twice"));
            }
        }
        buffer.clear();
        Ok(())
    };
    for line in text.split_inclusive('\n') {
        if let Some(marker) = line.strip_prefix("=== ") {
            flush(&mut current, &mut buffer, &mut case)?;
            let mut words = marker.split_whitespace();
            let name = words.next().unwrap_or_default().to_string();
            let mut chomp = false;
            for word in words {
                match word {
                    "-chomp" => chomp = true,
                    file if name == "prompt" => case.prompt_file = file.to_string(),
                    other => return Err(format!("unknown marker word `{other}`")),
                }
            }
            if !["prompt", "data", "options", "output", "error"].contains(&name.as_str()) {
                return Err(format!("unknown section `{name}`"));
            }
            current = Some((name, chomp));
        } else if current.is_some() {
            buffer.push_str(line);
        }
    }
    flush(&mut current, &mut buffer, &mut case)?;
    if !case.sections.contains_key("prompt") {
        return Err("no `=== prompt` section".into());
    }
    if !case.sections.contains_key("output") && !case.sections.contains_key("error") {
        return Err("no `=== output` or `=== error` section".into());
    }
    Ok(case)
}

fn load_options(case: &Case, syntax: Syntax) -> Result<LoadOptions, String> {
    let mut options = LoadOptions {
        syntax: Some(syntax),
        ..LoadOptions::default()
    };
    for line in case
        .sections
        .get("options")
        .map_or("", String::as_str)
        .lines()
    {
        match line.split_once(':').map(|(k, v)| (k.trim(), v.trim())) {
            Some(("strict", level)) => options.strict = Some(level.parse::<Strictness>()?),
            None if line.trim().is_empty() => {}
            _ => return Err(format!("unknown option line `{line}`")),
        }
    }
    Ok(options)
}

fn parse_data(text: &str) -> Result<serde_json::Value, String> {
    if text.trim().is_empty() {
        return Ok(serde_json::json!({}));
    }
    serde_json::from_str(text)
        .or_else(|_| serde_saphyr::from_str(text))
        .map_err(|e| format!("bad data section: {e}"))
}

/// Checks an error against an `=== error` section.
fn check_error(expected: &str, error: &Error) -> Result<(), String> {
    let mut lines = expected.lines();
    let head = lines.next().unwrap_or_default();
    let mut words = head.split_whitespace();
    let class = words.next().unwrap_or_default();
    let mismatch = |what: &str, want: &str, got: &str| {
        Err(format!(
            "{what}: expected `{want}`, got `{got}`\nfull error:\n{}",
            error.report()
        ))
    };
    if class != error.class().as_str() {
        return mismatch("class", class, error.class().as_str());
    }
    if let Some(place) = words.next() {
        let got = error
            .location()
            .map(|at| format!("{}:{}", at.line, at.column))
            .unwrap_or_else(|| "no location".into());
        if place != got {
            return mismatch("location", place, &got);
        }
    }
    if let Some(message) = lines.next() {
        if message != error.message() {
            return mismatch("message", message, error.message());
        }
    }
    for line in lines {
        if let Some(help) = line.strip_prefix("help: ") {
            let got = error.suggestion().unwrap_or("no suggestion");
            if help != got {
                return mismatch("help", help, got);
            }
        } else if let Some(action) = line.strip_prefix("at: ") {
            let got = error.action().unwrap_or("no action");
            if action != got {
                return mismatch("action", action, got);
            }
        } else if !line.trim().is_empty() {
            return Err(format!("unknown error line `{line}`"));
        }
    }
    Ok(())
}

fn run_case(case: &Case, syntax: Syntax) -> Result<(), String> {
    let options = load_options(case, syntax)?;
    let source = &case.sections["prompt"];
    let data = parse_data(case.sections.get("data").map_or("", String::as_str))?;
    let expected_output = case.sections.get("output");
    let expected_error = case.sections.get("error");
    let result =
        Prompt::from_source(&case.prompt_file, source, &options).and_then(|p| p.render(data));
    match (result, expected_output, expected_error) {
        (Ok(rendered), Some(output), error) => {
            if rendered.text() != output {
                return Err(format!(
                    "output differs\n--- expected\n{output}\n--- got\n{}\n---",
                    rendered.text()
                ));
            }
            match (rendered.recovered_error(), error) {
                (None, None) => Ok(()),
                (Some(got), Some(want)) => check_error(want, got),
                (Some(got), None) => Err(format!("unexpected recovered error: {got}")),
                (None, Some(_)) => Err("expected a recovered error, got none".into()),
            }
        }
        (Ok(rendered), None, _) => {
            Err(format!("expected an error, rendered:\n{}", rendered.text()))
        }
        (Err(error), _, Some(want)) => check_error(want, &error),
        (Err(error), _, None) => Err(format!("unexpected error:\n{}", error.report())),
    }
}

fn fixture_files(syntax: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(syntax);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|entry| Some(entry.ok()?.path()))
                .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn run_folder(syntax: Syntax) {
    let files = fixture_files(syntax.as_str());
    assert!(!files.is_empty(), "no fixtures for {syntax}");
    let mut failures = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        let outcome = fs::read_to_string(file)
            .map_err(|e| e.to_string())
            .and_then(|text| parse_case(&text))
            .and_then(|case| run_case(&case, syntax));
        if let Err(why) = outcome {
            failures.push(format!("{syntax}/{name}: {why}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
    println!("{} {syntax} fixtures passed", files.len());
}

#[test]
fn jinja_fixtures() {
    run_folder(Syntax::Jinja);
}

#[test]
fn go_fixtures() {
    run_folder(Syntax::Go);
}

#[test]
fn handlebars_fixtures() {
    run_folder(Syntax::Handlebars);
}

//! Fixture-driven tests: every `tests/fixtures/<syntax>/*.txt` file is one case.
//!
//! A case is a file of sections, each introduced by a line `=== NAME`
//! (lines before the first section are comments):
//!
//! - `=== prompt [FILE]` — the whole prompt file (front matter and body);
//!   FILE names it (default `prompt.md`, so the folder's syntax applies).
//! - `=== file NAME` — another file beside the prompt (a partial, an
//!   included template, a file of `define`s); NAME is its path relative to
//!   the prompt's folder. With any of these, the case's files are written
//!   to a folder of their own and the prompt is loaded from there
//!   (`Prompt::from_file`), so that its includes resolve in that folder.
//! - `=== data` — JSON or YAML data (default `{}`).
//! - `=== options` — host settings, one per line: `strict: LEVEL`,
//!   `now: RFC3339` (the clock of `strftime_now`), any bound of
//!   `teleprompt::limits::Limits` by its name (`max_output: 1000`,
//!   `max_value_bytes: 1 KiB`),
//!   `template_name: NAME`, `context: JSON` (a Dotprompt render context).
//! - `=== output` — the exact rendered text.
//! - `=== warnings` — the prompt's warnings (`Prompt::warnings`), one per
//!   line as `LINE:COL message`, or `LINE:COL [RULE] message` to check the
//!   rule too; a line `help: SUGGESTION` after one checks its suggestion;
//!   an empty section expects none. For a prompt that does not load, the
//!   warnings its error carries (`Error::warnings`).
//! - `=== errors` — every error loading the prompt found (`Error::all`),
//!   one per line as `LINE:COL RULE message`, in order; `FILE:LINE:COL`
//!   for an error placed in another file of the case.
//! - `=== error` — `CLASS [[FILE:]LINE:COL]` (FILE: the error is placed
//!   in that file of the case, not the prompt), then the exact message (all the
//!   lines up to the first `help:`, `at:` or `path:` line), then optional
//!   `help: SUGGESTION`, `at: ACTION` and `path: PATH` lines (`PATH`: the
//!   missing data's path, `Error::path`; `path: none` for none).
//!
//! With both `output` and `error`, the render must recover (`on_error:
//! original`): return the output and carry the error. A marker ending in
//! ` -chomp` drops its section's final newline.
//!
//! One prompt may be rendered with several data: `=== data NAME` goes with
//! `=== output NAME` (or `=== error NAME`); each NAME is a case of its own.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use teleprompt::context::Clock;
use teleprompt::{Error, LoadOptions, Prompt, RenderOptions, Strictness, Syntax};

#[derive(Default, Debug)]
struct Case {
    prompt_file: String,
    /// Other files (`=== file NAME`), by their path beside the prompt.
    files: Vec<(String, String)>,
    /// Sections by (name, case); the case is "" when the marker names none.
    sections: BTreeMap<(String, String), String>,
}

impl Case {
    fn get(&self, name: &str, case: &str) -> Option<&String> {
        self.sections.get(&(name.to_string(), case.to_string()))
    }

    /// The case names: every name given to a `data`, `output` or `error`
    /// section ("" for unnamed ones).
    fn cases(&self) -> Vec<String> {
        let mut cases: Vec<String> = self
            .sections
            .keys()
            .filter(|(name, _)| name != "prompt" && name != "options" && name != "errors")
            .map(|(_, case)| case.clone())
            .collect();
        cases.dedup();
        cases.sort();
        cases.dedup();
        cases
    }
}

fn parse_case(text: &str) -> Result<Case, String> {
    let mut case = Case {
        prompt_file: "prompt.md".into(),
        ..Case::default()
    };
    type Current = Option<((String, String), bool)>;
    let mut current: Current = None;
    let mut buffer = String::new();
    let flush = |current: &mut Current, buffer: &mut String, case: &mut Case| {
        if let Some((key, chomp)) = current.take() {
            let mut content = std::mem::take(buffer);
            if chomp && content.ends_with('\n') {
                content.pop();
            }
            if key.0 == "file" {
                if case.files.iter().any(|(name, _)| *name == key.1) {
                    return Err(format!("file `{}` appears twice", key.1));
                }
                case.files.push((key.1, content));
            } else if case.sections.insert(key.clone(), content).is_some() {
                return Err(format!("section `{} {}` appears twice", key.0, key.1));
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
            let mut case_name = String::new();
            for word in words {
                match word {
                    "-chomp" => chomp = true,
                    file if name == "prompt" => case.prompt_file = file.to_string(),
                    named
                        if ["data", "output", "error", "file"].contains(&name.as_str())
                            && case_name.is_empty() =>
                    {
                        case_name = named.to_string()
                    }
                    other => return Err(format!("unknown marker word `{other}`")),
                }
            }
            if ![
                "prompt", "file", "data", "options", "output", "error", "errors", "warnings",
            ]
            .contains(&name.as_str())
            {
                return Err(format!("unknown section `{name}`"));
            }
            if name == "file" && case_name.is_empty() {
                return Err("`=== file` needs the file's name".into());
            }
            current = Some(((name, case_name), chomp));
        } else if current.is_some() {
            buffer.push_str(line);
        }
    }
    flush(&mut current, &mut buffer, &mut case)?;
    if case.get("prompt", "").is_none() {
        return Err("no `=== prompt` section".into());
    }
    let mut cases = case.cases();
    if cases.is_empty() && case.get("errors", "").is_some() {
        cases.push(String::new());
    }
    if cases.is_empty() {
        return Err("no `=== output` or `=== error` section".into());
    }
    for name in &cases {
        if case.get("output", name).is_none()
            && case.get("error", name).is_none()
            && case.get("errors", "").is_none()
        {
            return Err(format!(
                "case `{name}` has no `=== output` or `=== error` section"
            ));
        }
    }
    Ok(case)
}

fn load_options(case: &Case, syntax: Syntax) -> Result<(LoadOptions, RenderOptions), String> {
    let mut options = LoadOptions {
        syntax: Some(syntax),
        ..LoadOptions::default()
    };
    let mut render = RenderOptions::default();
    for line in case.get("options", "").map_or("", String::as_str).lines() {
        match line.split_once(':').map(|(k, v)| (k.trim(), v.trim())) {
            Some(("strict", level)) => options.strict = Some(level.parse::<Strictness>()?),
            Some(("now", now)) => render.clock = Clock::parse(now).map_err(|e| e.to_string())?,
            Some((name, value)) if name.starts_with("max_") => {
                options.limits.set_text(name, value)?
            }
            Some(("template_name", name)) => options.template_name = Some(name.to_string()),
            Some(("context", json)) => {
                render.context = Some(std::sync::Arc::new(
                    serde_json::from_str(json).map_err(|e| e.to_string())?,
                ))
            }
            None if line.trim().is_empty() => {}
            _ => return Err(format!("unknown option line `{line}`")),
        }
    }
    Ok((options, render))
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
        let at = error
            .location()
            .map(|at| format!("{}:{}", at.line, at.column))
            .unwrap_or_else(|| "no location".into());
        // `FILE:LINE:COL`: the error is placed in another file of the case.
        let (got, place) = match place.rsplitn(3, ':').nth(2) {
            Some(file) => {
                let got_file = error.file().unwrap_or("no file");
                let same = got_file == file || got_file.ends_with(&format!("/{file}"));
                let shown = if same { file } else { got_file };
                (format!("{shown}:{at}"), place)
            }
            None => (at, place),
        };
        if place != got {
            return mismatch("location", place, &got);
        }
    }
    // The message runs to the first `help:`, `at:` or `path:` line (a
    // message of several lines, such as a list of input violations,
    // included).
    let mut lines = lines.peekable();
    let mut message: Option<String> = None;
    while let Some(line) = lines.next_if(|line| {
        message.is_none()
            || !["help: ", "at: ", "path: "]
                .iter()
                .any(|prefix| line.starts_with(prefix))
    }) {
        match &mut message {
            None => message = Some(line.to_string()),
            Some(message) => {
                message.push('\n');
                message.push_str(line);
            }
        }
    }
    if let Some(message) = message {
        let message = message.trim_end_matches('\n');
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
        } else if let Some(path) = line.strip_prefix("path: ") {
            let got = error.path().unwrap_or("none");
            if path != got {
                return mismatch("path", path, got);
            }
        } else if !line.trim().is_empty() {
            return Err(format!("unknown error line `{line}`"));
        }
    }
    Ok(())
}

/// Checks a prompt's warnings against a `=== warnings` section: one line
/// each, `LINE:COL message` or `LINE:COL [RULE] message` (then the rule is
/// compared too), optionally followed by a line `help: SUGGESTION`; in
/// order; an empty section expects none.
fn check_warnings(expected: &str, warnings: &[Error]) -> Result<(), String> {
    let mut want: Vec<(String, Option<String>)> = Vec::new();
    for line in expected.lines().filter(|line| !line.trim().is_empty()) {
        match (line.trim_start().strip_prefix("help: "), want.last_mut()) {
            (Some(help), Some((_, slot @ None))) => *slot = Some(help.to_string()),
            _ => want.push((line.to_string(), None)),
        }
    }
    let got: Vec<(String, Option<String>)> = warnings
        .iter()
        .enumerate()
        .map(|(index, warning)| {
            let at = warning
                .location()
                .map(|at| format!("{}:{}", at.line, at.column))
                .unwrap_or_else(|| "no location".into());
            let expected = want.get(index);
            let with_rule = expected.is_some_and(|(line, _)| {
                line.split_once(' ')
                    .is_some_and(|(_, rest)| rest.starts_with('['))
            });
            let line = match (with_rule, warning.kind()) {
                (true, Some(kind)) => format!("{at} [{kind}] {}", warning.message()),
                _ => format!("{at} {}", warning.message()),
            };
            let help = expected
                .and_then(|(_, help)| help.as_ref())
                .and(warning.suggestion().map(str::to_string));
            (line, help)
        })
        .collect();
    if got != want {
        let show = |list: &[(String, Option<String>)]| {
            list.iter()
                .map(|(line, help)| match help {
                    Some(help) => format!("{line}\nhelp: {help}"),
                    None => line.clone(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        return Err(format!(
            "warnings differ\n--- expected\n{}\n--- got\n{}\n---",
            show(&want),
            show(&got)
        ));
    }
    Ok(())
}

/// Checks every error of a failed load against an `=== errors` section:
/// one line each, `LINE:COL RULE message` (`FILE:LINE:COL` when placed in
/// one of the case's other `files`), in order.
fn check_errors(expected: &str, error: &Error, files: &[(String, String)]) -> Result<(), String> {
    let got: Vec<String> = error
        .all()
        .iter()
        .map(|error| {
            let at = error
                .location()
                .map(|at| format!("{}:{}", at.line, at.column))
                .unwrap_or_else(|| "no location".into());
            let file = error.file().and_then(|got| {
                files
                    .iter()
                    .map(|(name, _)| name)
                    .find(|name| got.ends_with(&format!("/{name}")))
            });
            let at = match file {
                Some(file) => format!("{file}:{at}"),
                None => at,
            };
            format!("{at} {} {}", error.rule(), error.message())
        })
        .collect();
    let want: Vec<&str> = expected
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    if got != want {
        return Err(format!(
            "errors differ\n--- expected\n{}\n--- got\n{}\n---",
            want.join("\n"),
            got.join("\n")
        ));
    }
    Ok(())
}

/// Runs every case of a fixture file; the failures, each with its case name.
fn run_cases(case: &Case, fixture: &str, syntax: Syntax) -> Result<(), String> {
    let mut cases = case.cases();
    if cases.is_empty() {
        // Only `=== errors`: the prompt does not load.
        cases.push(String::new());
    }
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|name| {
            let why = run_case(case, fixture, name, syntax).err()?;
            Some(match name.as_str() {
                "" => why,
                name => format!("[case {name}] {why}"),
            })
        })
        .collect();
    match failures.is_empty() {
        true => Ok(()),
        false => Err(failures.join("\n\n")),
    }
}

/// Writes the case's prompt and `=== file` sections into a folder of its
/// own (under the test's temporary folder): the prompt's path there.
fn write_files(case: &Case, fixture: &str, source: &str) -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("fixture-files")
        .join(fixture);
    let _ = fs::remove_dir_all(&dir);
    let files = case
        .files
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .chain([(case.prompt_file.as_str(), source)]);
    for (name, text) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        fs::write(&path, text).map_err(|e| e.to_string())?;
    }
    Ok(dir.join(&case.prompt_file))
}

fn run_case(case: &Case, fixture: &str, name: &str, syntax: Syntax) -> Result<(), String> {
    let (options, render) = load_options(case, syntax)?;
    let source = case.get("prompt", "").map_or("", String::as_str);
    let data = parse_data(case.get("data", name).map_or("", String::as_str))?;
    let expected_output = case.get("output", name);
    let expected_error = case.get("error", name);
    let prompt = if case.files.is_empty() {
        Prompt::from_source(&case.prompt_file, source, &options)
    } else {
        let fixture = format!("{}/{fixture}/{name}", syntax.as_str());
        Prompt::from_file_with(write_files(case, &fixture, source)?, &options)
    };
    match (&prompt, case.get("warnings", name)) {
        (Ok(prompt), Some(expected)) => check_warnings(expected, &prompt.warnings())?,
        (Err(error), Some(expected)) => check_warnings(expected, error.warnings())?,
        _ => {}
    }
    let expected_errors = case.get("errors", "");
    match (&prompt, expected_errors) {
        (Err(error), Some(expected)) => check_errors(expected, error, &case.files)?,
        (Ok(_), Some(_)) => return Err("expected load errors, the prompt loaded".into()),
        _ => {}
    }
    // Three renders of the same data: a layer's first render reads it
    // afresh, the second makes what the layer keeps, the third reuses it.
    // All three must agree with the fixture.
    let data = teleprompt::Data::new(data);
    for round in 1..=3 {
        let result = prompt
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|p| p.render_with(&data, &render));
        check_render(
            result,
            expected_output,
            expected_error,
            expected_errors.is_some(),
        )
        .map_err(|message| match round {
            1 => message,
            _ => format!("render {round} of the same data: {message}"),
        })?;
    }
    Ok(())
}

/// Checks one render's result against the fixture's expectations.
fn check_render(
    result: Result<teleprompt::Rendered, Error>,
    expected_output: Option<&String>,
    expected_error: Option<&String>,
    load_errors: bool,
) -> Result<(), String> {
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
        (Err(_), _, None) if load_errors => Ok(()),
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
            .and_then(|case| run_cases(&case, name.trim_end_matches(".txt"), syntax));
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
fn django_fixtures() {
    run_folder(Syntax::Django);
}

#[test]
fn chat_template_fixtures() {
    run_folder(Syntax::ChatTemplate);
}

#[test]
fn go_fixtures() {
    run_folder(Syntax::Go);
}

#[test]
fn handlebars_fixtures() {
    run_folder(Syntax::Handlebars);
}

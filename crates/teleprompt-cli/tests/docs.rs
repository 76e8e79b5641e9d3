//! Every `teleprompt` command that README.md and examples/README.md show,
//! run exactly as written:
//!
//! - each line of a `sh` block that starts with `teleprompt` (or
//!   `cargo run --release --`, the same binary) or pipes `echo '…'` into
//!   it: it must succeed. One that names `examples/` runs at the
//!   repository root, as a reader on a fresh clone runs it; the others
//!   in a copy of `tests/readme/project/`, the prompt folder they
//!   describe (`prompts/`, `issue.json`, `rows.jsonl`);
//! - a `text` block that starts with `$ teleprompt …`: it runs in
//!   `tests/readme/report/` and prints exactly the rest of the block;
//! - each `` `teleprompt …` `` span of examples/README.md (its "try it"
//!   column): it must succeed, at the root.
//!
//! A line of a `sh` block that is none of these must be one this file
//! knows not to run (the build and install commands), so a new kind of
//! example cannot go untested by accident.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn data(folder: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/readme")
        .join(folder)
}

/// The lines of `sh` blocks the tests do not run, by their start: the
/// build, the test command (CI's), the installs.
const NOT_RUN: &[&str] = &["cargo test --workspace", "cargo install ", "pip install "];

/// A code block of a Markdown file: its info string, first line number and
/// lines.
struct Block {
    info: String,
    line: usize,
    lines: Vec<String>,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (n, line) in markdown.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_string(),
                    line: n + 2,
                    lines: Vec::new(),
                })
            }
            (Some(_), Some(_)) => blocks.push(open.take().unwrap()),
            (Some(block), None) => block.lines.push(line.to_string()),
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "a code block is not closed");
    blocks
}

/// Words of a command line as a POSIX shell splits them (quotes, `\`, a
/// `#` comment; no expansions: the examples use none).
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            // A comment: `#` where a word starts.
            '#' if word.is_none() => break,
            ' ' | '\t' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' | '"' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    w.push(q);
                }
            }
            '\\' => {
                if let Some(next) = chars.next() {
                    word.get_or_insert_with(String::new).push(next);
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The logical lines of a `sh` block: `\`-continued lines joined, blank
/// lines skipped (comments are dropped by [`words`]).
fn commands(block: &Block) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in block.lines.iter().enumerate() {
        let (text, continued) = match line.trim_end().strip_suffix('\\') {
            Some(text) => (text, true),
            None => (line.trim_end(), false),
        };
        let entry = pending.get_or_insert_with(|| (block.line + i, String::new()));
        entry.1.push_str(text.trim());
        entry.1.push(' ');
        if !continued {
            let (n, command) = pending.take().unwrap();
            if !command.trim().is_empty() {
                out.push((n, command.trim().to_string()));
            }
        }
    }
    out
}

/// A command as run: stdin, the arguments after `teleprompt`.
struct Run {
    stdin: Option<String>,
    args: Vec<String>,
}

/// How a `sh` line runs, or `None` for a line that is not run.
fn parse(line: &str) -> Option<Run> {
    if NOT_RUN.iter().any(|start| line.starts_with(start)) {
        return None;
    }
    let (stdin, command) = match line.split_once(" | ") {
        Some((echo, command)) => {
            let mut echoed = words(echo);
            assert_eq!(
                echoed.remove(0),
                "echo",
                "a pipe from something but echo: {line}"
            );
            (Some(echoed.join(" ") + "\n"), command)
        }
        None => (None, line),
    };
    let mut args = words(command);
    let program: Vec<String> = if args.first().is_some_and(|a| a == "cargo") {
        args.drain(..4).collect()
    } else {
        args.drain(..1).collect()
    };
    assert!(
        program == ["teleprompt"] || program == ["cargo", "run", "--release", "--"],
        "a README command this test does not know how to run: {line}"
    );
    Some(Run { stdin, args })
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A fresh copy of the README's prompt folder.
fn project() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "teleprompt-docs-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&data("project"), &dir);
    dir
}

fn teleprompt(cwd: &Path, args: &[String]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_teleprompt"));
    command
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE");
    command
}

/// Runs a command to the end: exit status, stdout, stderr.
fn run(cwd: &Path, run: &Run) -> (bool, String, String) {
    let mut child = teleprompt(cwd, &run.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the teleprompt binary runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(run.stdin.as_deref().unwrap_or("").as_bytes())
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `teleprompt serve`, which runs until stopped: it must say it is
/// serving, then it is stopped. Its address is the default one; another
/// program on that port makes the line skipped, with a note.
fn serve(cwd: &Path, run: &Run, what: &str) {
    let mut child = teleprompt(cwd, &run.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the teleprompt binary runs");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = String::new();
    let serving = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains("serving") => break true,
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
            }
            Err(_) => break false,
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    if !serving && seen.contains("in use") {
        eprintln!("skipped {what}: its port is taken on this machine:\n{seen}");
        return;
    }
    assert!(serving, "{what} did not start serving:\n{seen}");
}

fn check_sh_line(file: &str, n: usize, line: &str) {
    let Some(command) = parse(line) else {
        return;
    };
    let what = format!("{file}:{n}: `{line}`");
    let at_root = command.args.iter().any(|a| a.contains("examples/"));
    let cwd = if at_root { root() } else { project() };
    if command.args.first().is_some_and(|a| a == "serve") {
        serve(&cwd, &command, &what);
        return;
    }
    let (ok, stdout, stderr) = run(&cwd, &command);
    assert!(ok, "{what} failed:\n{stdout}{stderr}");
    let wrote_file = command.args.iter().any(|a| a == "--output" || a == "-o");
    assert!(
        !stdout.is_empty() || wrote_file || command.args.first().is_some_and(|a| a == "check"),
        "{what} printed nothing"
    );
    if !at_root {
        std::fs::remove_dir_all(&cwd).unwrap();
    }
}

fn check_markdown(file: &str) -> usize {
    let markdown = std::fs::read_to_string(root().join(file)).unwrap();
    let mut ran = 0;
    for block in blocks(&markdown) {
        match block.info.as_str() {
            "sh" => {
                for (n, line) in commands(&block) {
                    check_sh_line(file, n, &line);
                    ran += usize::from(parse(&line).is_some());
                }
            }
            "text"
                if block
                    .lines
                    .first()
                    .is_some_and(|l| l.starts_with("$ teleprompt")) =>
            {
                let line = block.lines[0].strip_prefix("$ ").unwrap();
                let command = parse(line).unwrap();
                let (_, stdout, stderr) = run(&data("report"), &command);
                let expected = block.lines[1..].join("\n") + "\n";
                assert_eq!(
                    stdout + &stderr,
                    expected,
                    "{file}:{}: `{line}` prints something else than the block shows",
                    block.line
                );
                ran += 1;
            }
            _ => {}
        }
    }
    ran
}

#[test]
fn the_readme_s_commands_run_as_written() {
    let ran = check_markdown("README.md");
    // The quick start's render, the chat example, "The command"'s six,
    // the report; a README that lost its examples is a failure too.
    assert!(ran >= 9, "only {ran} commands of README.md ran");
}

#[test]
fn the_examples_readme_s_commands_run_as_written() {
    let file = "examples/README.md";
    let markdown = std::fs::read_to_string(root().join(file)).unwrap();
    let mut ran = check_markdown(file);
    for (n, line) in markdown.lines().enumerate() {
        for span in line.split('`').skip(1).step_by(2) {
            if span.starts_with("teleprompt ") {
                check_sh_line(file, n + 1, span);
                ran += 1;
            }
        }
    }
    // Nine examples and `teleprompt test examples/`.
    assert!(ran >= 10, "only {ran} commands of {file} ran");
}

#[test]
fn the_shell_words_are_split_as_a_shell_splits_them() {
    assert_eq!(
        words(r#"echo '{{ x }}' --set "a b"=1 c\ d a#b # a comment"#),
        ["echo", "{{ x }}", "--set", "a b=1", "c d", "a#b"]
    );
    let block = Block {
        info: "sh".into(),
        line: 10,
        lines: vec![
            "teleprompt render a.j2 \\".into(),
            "    --data d.json   # a comment".into(),
            String::new(),
            "echo 'x # y' | teleprompt render -".into(),
        ],
    };
    assert_eq!(
        commands(&block),
        [
            (
                10,
                "teleprompt render a.j2 --data d.json   # a comment".to_string()
            ),
            (13, "echo 'x # y' | teleprompt render -".to_string())
        ]
    );
    let run = parse("echo '{{ x }}' | teleprompt render - --set x=1").unwrap();
    assert_eq!(run.stdin.as_deref(), Some("{{ x }}\n"));
    assert_eq!(run.args, ["render", "-", "--set", "x=1"]);
    assert!(parse("cargo install --path crates/teleprompt-cli --locked").is_none());
}

#[test]
#[should_panic(expected = "does not know how to run")]
fn an_unknown_kind_of_command_is_a_failure() {
    parse("make install");
}

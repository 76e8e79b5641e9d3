//! `teleprompt batch` as a user runs it: a JSON Lines file in, one line
//! out per line in, in order, with the exit status. The runs a snapshot
//! file (tests/cmd/batch) cannot say are here: JSON lines checked with
//! their escapes beside a summary line whose timing varies, many generated
//! rows, output compared with the examples' expected files or with another
//! run, a run killed mid-way, a full disk. See tests/README.md.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The repository root (examples live there).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh directory under the target dir for one test.
fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("batch-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn teleprompt(args: &[&str]) -> Output {
    teleprompt_with_stdin(args, b"")
}

fn teleprompt_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_teleprompt"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the teleprompt binary runs");
    let mut input = child.stdin.take().expect("stdin is piped");
    let stdin = stdin.to_vec();
    // Written from a thread: the command writes while it reads.
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let output = child.wait_with_output().expect("teleprompt finishes");
    writer.join().expect("stdin written");
    output
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The output lines, each parsed.
fn records(bytes: &[u8]) -> Vec<Value> {
    text(bytes)
        .lines()
        .map(|line| serde_json::from_str(line).expect("each output line is JSON"))
        .collect()
}

/// A prompt file `name` in `dir` with `body`; its path as text.
fn write(dir: &Path, name: &str, body: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).expect("file written");
    path.to_str().expect("UTF-8 path").to_string()
}

fn greeting(dir: &Path) -> String {
    write(dir, "greet.j2", "Hello {{ name }}, you are {{ age }}.\n")
}

/// Rows of `name`/`age`, one a line.
fn people(count: usize) -> String {
    (0..count)
        .map(|i| format!("{{\"name\": \"p{i}\", \"age\": {i}}}\n"))
        .collect()
}

#[test]
fn text_rows_render_in_order() {
    let dir = tempdir("text");
    let prompt = greeting(&dir);
    let input = write(&dir, "rows.jsonl", people(3));
    let output = teleprompt(&["batch", &prompt, "--input", &input]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout),
        "{\"index\":0,\"output\":\"Hello p0, you are 0.\\n\"}\n\
         {\"index\":1,\"output\":\"Hello p1, you are 1.\\n\"}\n\
         {\"index\":2,\"output\":\"Hello p2, you are 2.\\n\"}\n"
    );
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with("batch: 3 rows, 3 rendered, 0 failed, "),
        "{stderr}"
    );
    assert!(stderr.contains(" rows/s"), "{stderr}");
}

#[test]
fn many_rows_keep_their_order_on_two_threads() {
    let dir = tempdir("order");
    let prompt = greeting(&dir);
    let input = write(&dir, "rows.jsonl", people(5000));
    let out = dir.join("out.jsonl");
    let output = teleprompt(&[
        "batch",
        &prompt,
        "--input",
        &input,
        "--output",
        out.to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(output.stdout.is_empty());
    let lines = records(&std::fs::read(&out).unwrap());
    assert_eq!(lines.len(), 5000);
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(
            line,
            &json!({"index": i, "output": format!("Hello p{i}, you are {i}.\n")})
        );
    }
    assert!(text(&output.stderr).starts_with("batch: 5000 rows, 5000 rendered, 0 failed, "));
}

/// A record renders as `teleprompt render` does with the same data,
/// history and clock.
#[test]
fn records_carry_history_and_clock() {
    let dir = tempdir("records");
    let history: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/rapida/history.json")).unwrap(),
    )
    .unwrap();
    let data = json!({
        "assistant": {"name": "Ada"},
        "conversation": {"id": "conv-42", "direction": "inbound"},
        "args": {"company": "Northwind Telecom", "name": "Grace", "age": 36},
        "company": "Northwind Telecom", "name": "Grace", "age": 36,
    });
    let record = json!({"data": data, "history": history, "now": "2026-11-21T09:05:03Z"});
    let input = write(&dir, "records.jsonl", format!("{record}\n{record}\n"));
    let output = teleprompt(&[
        "batch",
        "examples/rapida/assistant.j2",
        "--input",
        &input,
        "--rows-are",
        "records",
        "--format",
        "openai",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/rapida/expected.openai.json")).unwrap(),
    )
    .unwrap();
    let lines = records(&output.stdout);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["output"], expected);
    assert_eq!(lines[1]["output"], expected);
}

#[test]
fn stdin_to_stdout() {
    let dir = tempdir("stdin");
    let prompt = greeting(&dir);
    let output =
        teleprompt_with_stdin(&["batch", &prompt, "--input", "-"], people(2000).as_bytes());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let lines = records(&output.stdout);
    assert_eq!(lines.len(), 2000);
    assert_eq!(lines[1999]["output"], "Hello p1999, you are 1999.\n");
}

/// Every kind of bad line is an error line at its index, with its line
/// number; the rows around it render.
#[test]
fn bad_lines_are_error_lines_and_the_rest_renders() {
    let dir = tempdir("hostile");
    let prompt = greeting(&dir);
    let mut rows: Vec<u8> = Vec::new();
    rows.extend_from_slice(b"{\"name\": \"a\", \"age\": 1}\n"); // 0 ok
    rows.extend_from_slice(b"{\"name\": \"b\", \"age\": \n"); // 1 malformed JSON
    rows.extend_from_slice(b"[\"b\", 2]\n"); // 2 not an object
    rows.extend_from_slice(b"\n"); // 3 blank
    rows.extend_from_slice(b"   \r\n"); // 4 blank (whitespace)
    rows.extend_from_slice(b"{\"name\": \"\xff\xfe\", \"age\": 5}\n"); // 5 not UTF-8
    rows.extend_from_slice(format!("{{\"name\": \"{}\"}}\n", "x".repeat(500)).as_bytes()); // 6 too long
    rows.extend_from_slice(b"{\"name\": \"g\"}\n"); // 7 render error: no age
    rows.extend_from_slice(b"{\"name\": \"h\", \"name\": \"i\", \"age\": 8}\n"); // 8 duplicate key
    rows.extend_from_slice(b"null\n"); // 9 not an object
    rows.extend_from_slice(b"{\"name\": \"j\", \"age\": 10}"); // 10 ok, no newline
    let input = write(&dir, "rows.jsonl", &rows);
    let args = [
        "batch",
        &prompt,
        "--input",
        &input,
        "--max-data-bytes",
        "200",
    ];
    let output = teleprompt(&args);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.starts_with("batch: 11 rows, 2 rendered, 9 failed, "),
        "{stderr}"
    );
    let lines = records(&output.stdout);
    assert_eq!(lines.len(), 11, "rows in = outputs + errors");
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["index"], i);
    }
    assert_eq!(lines[0]["output"], "Hello a, you are 1.\n");
    assert_eq!(lines[10]["output"], "Hello j, you are 10.\n");
    let input_errors = [
        (1, "input/json", "invalid JSON"),
        (2, "input/not-object", "the line is an array"),
        (3, "input/blank-line", "the line is blank"),
        (4, "input/blank-line", "the line is blank"),
        (5, "input/not-utf8", "not UTF-8 text (byte 0xFF)"),
        (
            6,
            "input/too-long",
            "longer than 200 bytes (--max-data-bytes)",
        ),
        (8, "input/json", "name"),
        (9, "input/not-object", "the line is null"),
    ];
    for (index, rule, message) in input_errors {
        let error = &lines[index]["error"];
        assert_eq!(error["class"], "input", "{index}: {error}");
        assert_eq!(error["rule"], rule, "{index}: {error}");
        assert_eq!(error["line"], index + 1, "{index}: {error}");
        assert_eq!(error["file"], input.as_str(), "{index}: {error}");
        assert_eq!(error["path"], json!(null), "{index}: {error}");
        let text = error["message"].as_str().unwrap();
        assert!(text.contains(message), "{index}: {text}");
    }
    assert_eq!(lines[5]["error"]["column"], 11);
    // The template's error, as `check --format json` gives it.
    let error = &lines[7]["error"];
    assert_eq!(error["class"], "render");
    assert_eq!(error["file"], prompt.as_str());
    assert_eq!(
        (error["line"].clone(), error["column"].clone()),
        (json!(1), json!(30))
    );
    assert!(error["message"].as_str().unwrap().contains("age"));
    assert_eq!(error["path"], "age", "{error}");

    let allowed = teleprompt(&[&args[..], &["--allow-errors"]].concat());
    assert_eq!(allowed.status.code(), Some(0));
    assert_eq!(allowed.stdout, output.stdout);
}

#[test]
fn records_with_unknown_or_bad_fields_are_error_lines() {
    let dir = tempdir("bad-records");
    let prompt = greeting(&dir);
    let input = write(
        &dir,
        "records.jsonl",
        "{\"data\": {\"name\": \"a\", \"age\": 1}}\n\
         {\"data\": {\"name\": \"b\", \"age\": 2}, \"turns\": 3}\n\
         {\"data\": {\"name\": \"c\", \"age\": 3}, \"now\": \"yesterday\"}\n\
         {\"data\": [1]}\n\
         {\"name\": \"e\", \"age\": 5}\n\
         {\"data\": {\"name\": \"f\", \"age\": 6}, \"history\": 7}\n",
    );
    let output = teleprompt(&["batch", &prompt, "--input", &input, "--rows-are", "records"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let lines = records(&output.stdout);
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["output"], "Hello a, you are 1.\n");
    for (index, rule, message) in [
        (1, "input/record", "unknown field `turns`"),
        (2, "input/record", "now: "),
        (3, "input/record", "data must be an object"),
        (4, "input/record", "unknown field `name`"),
    ] {
        let error = &lines[index]["error"];
        assert_eq!(error["rule"], rule, "{error}");
        assert_eq!(error["line"], index + 1, "{error}");
        assert!(
            error["message"].as_str().unwrap().contains(message),
            "{error}"
        );
    }
    assert_eq!(lines[5]["error"]["class"], "input", "{}", lines[5]);
    assert!(lines[5]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("history"));
}

/// The output of an uninterrupted run, for the resume tests.
fn complete_run(dir: &Path, rows: usize) -> (String, String, Vec<u8>) {
    let prompt = greeting(dir);
    let mut rows = people(rows);
    // A failing row in the middle: resumed runs keep error lines too.
    rows.insert_str(
        rows.find("{\"name\": \"p7\"").unwrap(),
        "{\"name\": \"bad\"}\n",
    );
    let input = write(dir, "rows.jsonl", rows);
    let out = dir.join("complete.jsonl");
    let output = teleprompt(&[
        "batch",
        &prompt,
        "--input",
        &input,
        "--output",
        out.to_str().unwrap(),
        "--allow-errors",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    (prompt, input, std::fs::read(out).unwrap())
}

fn resume(prompt: &str, input: &str, out: &Path) -> Output {
    teleprompt(&[
        "batch",
        prompt,
        "--input",
        input,
        "--output",
        out.to_str().unwrap(),
        "--resume",
        "--allow-errors",
        "--jobs",
        "2",
    ])
}

/// FNV-1a 64, as docs/batch.md documents the state file's `input_hash`.
fn fnv(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The state file beside `out`.
fn state_path(out: &Path) -> PathBuf {
    let mut path = out.as_os_str().to_owned();
    path.push(".batch.json");
    PathBuf::from(path)
}

/// Leaves in `out` what a run killed after writing `rows` rows and saving
/// its state file there would leave: the state file says `rows`, and the
/// output holds those rows plus `extra` bytes written after it was saved
/// (whole lines and a partial one).
fn killed_after(complete_out: &Path, input: &str, out: &Path, rows: usize, extra: usize) {
    let complete = std::fs::read(complete_out).unwrap();
    let input = std::fs::read(input).unwrap();
    let line_ends = |bytes: &[u8], n: usize| -> usize {
        bytes
            .split_inclusive(|&b| b == b'\n')
            .take(n)
            .map(<[u8]>::len)
            .sum()
    };
    let (output_bytes, input_bytes) = (line_ends(&complete, rows), line_ends(&input, rows));
    let cut = (output_bytes + extra).min(complete.len());
    std::fs::write(out, &complete[..cut]).unwrap();
    let mut state: Value =
        serde_json::from_slice(&std::fs::read(state_path(complete_out)).unwrap()).unwrap();
    state["rows"] = json!(rows);
    state["output_bytes"] = json!(output_bytes);
    state["input_bytes"] = json!(input_bytes);
    state["input_hash"] = json!(fnv(&input[..input_bytes]));
    std::fs::write(state_path(out), serde_json::to_vec(&state).unwrap()).unwrap();
}

#[test]
fn the_state_file_says_what_wrote_the_output() {
    let dir = tempdir("state");
    let (_, input, complete) = complete_run(&dir, 30);
    let state: Value =
        serde_json::from_slice(&std::fs::read(dir.join("complete.jsonl.batch.json")).unwrap())
            .unwrap();
    let rows = std::fs::read(&input).unwrap();
    assert_eq!(state["teleprompt_batch"], 1);
    assert_eq!(state["rows"], 31);
    assert_eq!(state["output_bytes"], complete.len());
    assert_eq!(state["input_bytes"], rows.len());
    assert_eq!(state["input_hash"], fnv(&rows));
    assert_eq!(state["format"], "text");
    assert_eq!(state["rows_are"], "data");
    assert_eq!(state["prompt_version"].as_str().unwrap().len(), 16);
}

#[test]
fn resume_after_a_kill_gives_the_uninterrupted_output() {
    let dir = tempdir("resume-cut");
    let (prompt, input, complete) = complete_run(&dir, 200);
    let complete_out = dir.join("complete.jsonl");
    let out = dir.join("out.jsonl");
    // Killed before anything, after one row, mid-way, with rows written
    // after the state file was saved and a partial last line.
    for (rows, extra) in [
        (0, 0),
        (0, 5),
        (1, 0),
        (100, 0),
        (100, 333),
        (150, 1),
        (201, 0),
    ] {
        killed_after(&complete_out, &input, &out, rows, extra);
        let output = resume(&prompt, &input, &out);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{rows}+{extra}: {stderr}");
        assert_eq!(std::fs::read(&out).unwrap(), complete, "{rows}+{extra}");
        assert!(
            stderr.contains(&format!("(resumed after {rows} rows already written)")),
            "{stderr}"
        );
        // The state file is the complete run's.
        let state: Value =
            serde_json::from_slice(&std::fs::read(state_path(&out)).unwrap()).unwrap();
        assert_eq!(state["rows"], 201);
        assert_eq!(state["output_bytes"], complete.len());
    }
    // No output yet: --resume starts from row 0.
    std::fs::remove_file(&out).unwrap();
    std::fs::remove_file(state_path(&out)).unwrap();
    let output = resume(&prompt, &input, &out);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(std::fs::read(&out).unwrap(), complete);
}

#[test]
fn resume_on_a_complete_output_renders_nothing() {
    let dir = tempdir("resume-done");
    let (prompt, input, complete) = complete_run(&dir, 50);
    let out = dir.join("complete.jsonl");
    let output = resume(&prompt, &input, &out);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.starts_with("batch: 0 rows, 0 rendered, 0 failed, "),
        "{stderr}"
    );
    assert!(stderr.contains("resumed after 51 rows"), "{stderr}");
    assert_eq!(std::fs::read(&out).unwrap(), complete);
}

/// Each way an output is not this run's: refused with status 2, the
/// output and its state file left as they were.
#[test]
fn resume_refuses_an_output_that_is_not_this_runs() {
    let dir = tempdir("resume-bad");
    let (prompt, input, complete) = complete_run(&dir, 20);
    let complete_out = dir.join("complete.jsonl");
    let out = dir.join("out.jsonl");
    let lines: Vec<&[u8]> = complete.split_inclusive(|&b| b == b'\n').collect();
    let refused = |out: &Path, prompt: &str, input: &str, message: &str, extra: &[&str]| {
        let bytes = std::fs::read(out).unwrap();
        let state = std::fs::read(state_path(out)).ok();
        let mut args = vec![
            "batch",
            prompt,
            "--input",
            input,
            "--output",
            out.to_str().unwrap(),
            "--resume",
        ];
        args.extend_from_slice(extra);
        let output = teleprompt(&args);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{message}: {stderr}");
        assert!(stderr.starts_with("error: cannot resume"), "{stderr}");
        assert!(stderr.contains(message), "{message}: {stderr}");
        assert_eq!(std::fs::read(out).unwrap(), bytes, "{message}");
        assert_eq!(std::fs::read(state_path(out)).ok(), state, "{message}");
    };
    // A row edited within the rows already written.
    killed_after(&complete_out, &input, &out, 10, 0);
    let edited = write(
        &dir,
        "edited.jsonl",
        std::fs::read_to_string(&input)
            .unwrap()
            .replacen("\"p3\"", "\"P3\"", 1),
    );
    refused(
        &out,
        &prompt,
        &edited,
        "the input's first 10 rows are not the rows",
        &[],
    );
    // A row inserted, a row removed.
    let inserted = write(
        &dir,
        "inserted.jsonl",
        format!(
            "{{\"name\": \"new\", \"age\": 1}}\n{}",
            std::fs::read_to_string(&input).unwrap()
        ),
    );
    refused(
        &out,
        &prompt,
        &inserted,
        "are not the rows it was written from",
        &[],
    );
    let fewer = write(&dir, "fewer.jsonl", people(5));
    refused(
        &out,
        &prompt,
        &fewer,
        "holds 10 rows but the input has only 5",
        &[],
    );
    // The prompt changed (the same path, another text).
    let changed = write(&dir, "changed.j2", "Hi {{ name }}, you are {{ age }}.\n");
    let mut state: Value =
        serde_json::from_slice(&std::fs::read(state_path(&out)).unwrap()).unwrap();
    let version = state["prompt_version"].clone();
    refused(&out, &changed, &input, "prompt version", &[]);
    std::fs::write(&prompt, "Changed {{ name }}\n").unwrap();
    refused(
        &out,
        &prompt,
        &input,
        "the prompt or a file it includes changed",
        &[],
    );
    std::fs::write(&prompt, "Hello {{ name }}, you are {{ age }}.\n").unwrap();
    // Another format.
    refused(
        &out,
        &prompt,
        &input,
        "--format text",
        &["--format", "messages"],
    );
    // No state file: an output from an older teleprompt, or not ours.
    std::fs::remove_file(state_path(&out)).unwrap();
    refused(&out, &prompt, &input, "state file", &[]);
    // A state file that says more than the output holds, or another count.
    state["prompt_version"] = version;
    state["output_bytes"] = json!(complete.len() + 10);
    std::fs::write(state_path(&out), serde_json::to_vec(&state).unwrap()).unwrap();
    refused(&out, &prompt, &input, "fewer than the", &[]);
    // A gap in the rows, a foreign line.
    for (bytes, message) in [
        ([lines[0], lines[1], lines[3]].concat(), "line 3 of"),
        (
            [lines[0], b"{\"hello\": 1}\n", lines[2]].concat(),
            "line 2 of",
        ),
    ] {
        std::fs::write(&out, &bytes).unwrap();
        state["rows"] = json!(3);
        state["output_bytes"] = json!(bytes.len());
        std::fs::write(state_path(&out), serde_json::to_vec(&state).unwrap()).unwrap();
        refused(&out, &prompt, &input, message, &[]);
    }
    // --restart-on-mismatch starts over instead.
    let output = teleprompt(&[
        "batch",
        &prompt,
        "--input",
        &input,
        "--output",
        out.to_str().unwrap(),
        "--resume",
        "--restart-on-mismatch",
        "--allow-errors",
    ]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.starts_with("note: cannot resume"), "{stderr}");
    assert!(stderr.contains("starting over"), "{stderr}");
    assert_eq!(std::fs::read(&out).unwrap(), complete);
}

/// A run killed mid-way leaves whole lines; resuming it gives the
/// uninterrupted output. The killed run reads stdin, which is fed only
/// part of the rows and left open, so it is killed while it waits.
#[test]
#[cfg(unix)]
fn a_killed_run_resumes() {
    let dir = tempdir("killed");
    let prompt = greeting(&dir);
    let rows = people(10_000);
    let input = write(&dir, "many.jsonl", &rows);
    let complete = dir.join("complete.jsonl");
    let output = teleprompt(&[
        "batch",
        &prompt,
        "--input",
        &input,
        "--output",
        complete.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let complete = std::fs::read(&complete).unwrap();
    let out = dir.join("out.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_teleprompt"))
        .args(["batch", &prompt, "--input", "-", "--output"])
        .arg(&out)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the teleprompt binary runs");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let half: usize = rows.lines().take(6000).map(|line| line.len() + 1).sum();
    stdin.write_all(&rows.as_bytes()[..half]).unwrap();
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let written = |out: &Path| {
        std::fs::read(out).map_or(0, |bytes| bytes.iter().filter(|&&b| b == b'\n').count())
    };
    while written(&out) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    drop(stdin);
    let cut = std::fs::read(&out).unwrap();
    assert!(
        !cut.is_empty() && cut.len() < complete.len(),
        "{}",
        cut.len()
    );
    assert_eq!(cut, complete[..cut.len()], "a prefix of the output");
    let output = resume(&prompt, &input, &out);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(std::fs::read(&out).unwrap(), complete);
}

/// A full disk is a one-line error and status 1; a closed pipe ends
/// quietly with status 1.
#[test]
#[cfg(unix)]
fn write_errors_exit_1() {
    let dir = tempdir("write-errors");
    let prompt = greeting(&dir);
    let input = write(&dir, "rows.jsonl", people(50_000));
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let output = Command::new(env!("CARGO_BIN_EXE_teleprompt"))
            .args(["batch", &prompt, "--input", &input])
            .stdin(Stdio::null())
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(
            text(&output.stderr),
            "error: cannot write the output: No space left on device (os error 28)\n"
        );
        let output = teleprompt(&["batch", &prompt, "--input", &input, "--output", "/dev/full"]);
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(
            text(&output.stderr),
            "error: cannot write /dev/full: No space left on device (os error 28)\n"
        );
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_teleprompt"))
        .args(["batch", &prompt, "--input", &input])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(text(&output.stderr), "");
}

/// Hostile rows among good ones, on two threads: each is its own error
/// line, of the kind it is, and every other row renders.
#[test]
fn hostile_rows_are_each_their_error_line() {
    let dir = tempdir("hostile");
    let prompt = write(
        &dir,
        "loop.j2",
        "{{ name }}:{% for i in range(n) %}{% for j in range(n) %}{% endfor %}.{% endfor %}\n",
    );
    let mut rows: Vec<Vec<u8>> = Vec::new();
    let mut expected: Vec<Option<&str>> = Vec::new();
    let good = |rows: &mut Vec<Vec<u8>>, expected: &mut Vec<Option<&str>>, i: usize| {
        rows.push(format!("{{\"name\": \"p{i}\", \"n\": 3}}").into_bytes());
        expected.push(None);
    };
    let hostile: Vec<(Vec<u8>, &str)> = vec![
        // Longer than --max-data-bytes: skipped, not held.
        (
            format!("{{\"name\": \"{}\", \"n\": 1}}", "x".repeat(300_000)).into_bytes(),
            "input/too-long",
        ),
        // Deep: 100,000 nested arrays.
        (
            format!(
                "{{\"name\": {}{}, \"n\": 1}}",
                "[".repeat(100_000),
                "]".repeat(100_000)
            )
            .into_bytes(),
            "input/json",
        ),
        // A render that runs out of steps.
        (b"{\"name\": \"s\", \"n\": 10000}".to_vec(), "render"),
        // Malformed JSON lines.
        (b"{\"name\": ".to_vec(), "input/json"),
        (b"{\"name\": \"a\", \"n\": 1}}".to_vec(), "input/json"),
        (b"[1, 2]".to_vec(), "input/not-object"),
        (b"".to_vec(), "input/blank-line"),
        (
            b"{\"name\": \"\xff\xfe\", \"n\": 1}".to_vec(),
            "input/not-utf8",
        ),
        // A key twice.
        (
            b"{\"name\": \"a\", \"name\": \"b\", \"n\": 1}".to_vec(),
            "input/json",
        ),
    ];
    for (i, (row, kind)) in hostile.iter().enumerate() {
        good(&mut rows, &mut expected, i);
        rows.push(row.clone());
        expected.push(Some(kind));
    }
    good(&mut rows, &mut expected, 99);
    let input = write(
        &dir,
        "rows.jsonl",
        [rows.join(&b'\n'), b"\n".to_vec()].concat(),
    );
    let started = Instant::now();
    let output = teleprompt(&[
        "batch",
        &prompt,
        "--input",
        &input,
        "--jobs",
        "2",
        "--max-data-bytes",
        "256K",
        "--limit",
        "max_steps=20000",
    ]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let written = records(&output.stdout);
    assert_eq!(written.len(), expected.len(), "{stderr}");
    for (index, (line, kind)) in written.iter().zip(&expected).enumerate() {
        assert_eq!(line["index"], index);
        match kind {
            None => assert_eq!(
                line["output"],
                format!("p{}:...\n", line_name(index)),
                "{line}"
            ),
            Some(kind) => {
                let error = &line["error"];
                let rule = error["rule"].as_str().unwrap();
                assert!(
                    rule.starts_with(kind),
                    "row {index}: {rule} is not {kind}: {line}"
                );
                assert!(!error["message"].as_str().unwrap().is_empty());
            }
        }
    }
    let steps = written[5]["error"]["message"].as_str().unwrap();
    assert!(steps.contains("max_steps"), "{steps}");
    assert!(
        stderr.starts_with(&format!(
            "batch: {} rows, 10 rendered, 9 failed",
            expected.len()
        )),
        "{stderr}"
    );
}

/// The name of the good row at output line `index` in the hostile test:
/// good rows are at even lines, the last one is p99.
fn line_name(index: usize) -> usize {
    if index == 18 {
        99
    } else {
        index / 2
    }
}

/// A row that runs past --row-timeout is stopped and is its error line;
/// the rows after it are rendered meanwhile and written once it stops.
#[test]
fn a_slow_row_is_stopped_and_the_rest_renders() {
    let dir = tempdir("slow");
    let prompt = write(
        &dir,
        "loop.j2",
        "{{ name }}:{% for i in range(n) %}{% for j in range(n) %}{% endfor %}{% endfor %}\n",
    );
    let mut rows = String::new();
    for i in 0..200 {
        let n = if i == 5 || i == 150 { 100_000 } else { 1 };
        rows.push_str(&format!("{{\"name\": \"p{i}\", \"n\": {n}}}\n"));
    }
    let input = write(&dir, "rows.jsonl", rows);
    let out = dir.join("out.jsonl");
    let started = Instant::now();
    let output = teleprompt(&[
        "batch",
        &prompt,
        "--input",
        &input,
        "--output",
        out.to_str().unwrap(),
        "--jobs",
        "2",
        "--row-timeout",
        "300ms",
        "--limit",
        "max_steps=100000000000",
    ]);
    let elapsed = started.elapsed();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    // Each slow row is stopped at 300 ms: no row runs on for minutes.
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    let written = records(&std::fs::read(&out).unwrap());
    assert_eq!(written.len(), 200);
    for (index, line) in written.iter().enumerate() {
        assert_eq!(line["index"], index);
        if index == 5 || index == 150 {
            assert_eq!(line["error"]["rule"], "render/timeout", "{line}");
            // Stopped by its own deadline, not given up on.
            assert_eq!(
                line["error"]["message"],
                "the row took longer than 300 ms (--row-timeout): stopped"
            );
        } else {
            assert_eq!(line["output"], format!("p{index}:\n"), "{line}");
        }
    }
    // The state file counts every row: a resume renders nothing.
    let output = teleprompt(&[
        "batch",
        &prompt,
        "--input",
        &input,
        "--output",
        out.to_str().unwrap(),
        "--resume",
        "--allow-errors",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("resumed after 200 rows"));
    assert_eq!(records(&std::fs::read(&out).unwrap()).len(), 200);
}

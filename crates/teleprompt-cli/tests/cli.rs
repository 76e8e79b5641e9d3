//! The `teleprompt` command where a snapshot file (tests/cmd, run by
//! tests/cmd.rs) cannot say it: the examples against their expected files
//! (shared with the docs and other tests), and runs that need a device, a
//! named pipe or symlink made at run time, a resource limit or a closed
//! stream. See tests/README.md.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root (examples live there).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn teleprompt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_teleprompt"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .expect("the teleprompt binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every example renders to its expected output: (prompt, args, expected file).
const EXAMPLES: &[(&str, &[&str], &str)] = &[
    (
        "examples/rapida/assistant.j2",
        &[
            "--data=examples/rapida/data.yaml",
            "--history=examples/rapida/history.json",
            "--now=2026-11-21T09:05:03Z",
        ],
        "examples/rapida/expected.txt",
    ),
    (
        "examples/rapida/assistant.j2",
        &[
            "--data=examples/rapida/data.yaml",
            "--history=examples/rapida/history.json",
            "--now=2026-11-21T09:05:03Z",
            "--format=openai",
        ],
        "examples/rapida/expected.openai.json",
    ),
    (
        "examples/rapida/assistant.j2",
        &[
            "--data=examples/rapida/data.yaml",
            "--history=examples/rapida/history.json",
            "--now=2026-11-21T09:05:03Z",
            "--format=anthropic",
        ],
        "examples/rapida/expected.anthropic.json",
    ),
    // Dotprompt: messages as the dotprompt npm package 1.1.2 renders them
    // (text kept as rendered; @auth/@state from --context; model is
    // assistant).
    (
        "examples/dotprompt/support.prompt",
        &[
            "--data=examples/dotprompt/data.json",
            "--context=examples/dotprompt/context.json",
            "--history=examples/dotprompt/history.json",
            "--format=openai",
        ],
        "examples/dotprompt/expected.openai.json",
    ),
    // Prompty: messages as Prompty 2.1's `prepare` gives them (checked
    // with the prompty package); without data the inputs' examples apply.
    (
        "examples/prompty/support.prompty",
        &["--format=openai"],
        "examples/prompty/expected.sample.openai.json",
    ),
    (
        "examples/prompty/support.prompty",
        &["--data=examples/prompty/data.json", "--format=openai"],
        "examples/prompty/expected.openai.json",
    ),
    // A model's tokenizer_config.json as it ships (Qwen3, trimmed to the
    // keys that matter): transformers 5.23.0's apply_chat_template output.
    (
        "examples/hf/Qwen3-0.6B/tokenizer_config.json",
        &["--data=examples/hf/conversation.json"],
        "examples/hf/expected.txt",
    ),
    // The same prompt in pongo2's Django spelling (the output without the
    // teleprompt-only `role()` checked against pongo2 4.0.2).
    (
        "examples/rapida/assistant.django",
        &[
            "--data=examples/rapida/data.yaml",
            "--history=examples/rapida/history.json",
            "--now=2026-11-21T09:05:03Z",
        ],
        "examples/rapida/expected.django.txt",
    ),
    // Semantic Kernel's prompt YAML as it is: template_format handlebars,
    // input_variables with a default, <message> blocks read as messages.
    (
        "examples/semantic-kernel/story.yaml",
        &[
            "--data=examples/semantic-kernel/story.data.json",
            "--format=openai",
        ],
        "examples/semantic-kernel/story.expected.openai.json",
    ),
    (
        "examples/semantic-kernel/chat.hbs",
        &[
            "--data=examples/semantic-kernel/data.json",
            "--history=examples/semantic-kernel/history.json",
            "--format=openai",
        ],
        "examples/semantic-kernel/expected.openai.json",
    ),
    (
        "examples/sortie/WORKFLOW.md",
        &[
            "--syntax=go",
            "--data=examples/sortie/issue.yaml",
            "--max-turns=5",
            "--turn=1",
        ],
        "examples/sortie/first-run.expected.txt",
    ),
    (
        "examples/sortie/WORKFLOW.md",
        &[
            "--syntax=go",
            "--data=examples/sortie/issue.yaml",
            "--max-turns=5",
            "--turn=3",
        ],
        "examples/sortie/continuation.expected.txt",
    ),
    (
        "examples/sortie/WORKFLOW.md",
        &[
            "--syntax=go",
            "--data=examples/sortie/issue.yaml",
            "--max-turns=5",
            "--attempt=2",
        ],
        "examples/sortie/retry.expected.txt",
    ),
];

#[test]
fn examples_render_as_expected() {
    for (prompt, args, expected) in EXAMPLES {
        let mut all = vec!["render", prompt];
        all.extend_from_slice(args);
        let output = teleprompt(&all);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{prompt}: {}",
            text(&output.stderr)
        );
        let want = std::fs::read_to_string(root().join(expected)).expect("expected file");
        assert_eq!(text(&output.stdout), want, "{prompt}");
    }
}

/// A fresh directory under the target dir for one test.
fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A Jinja output bomb (a 10 MB string printed a thousand times, directly
/// or into a `{% set %}` block) stops at the output limit with a clear
/// error and exit status 1, under a 3 GB address-space limit.
#[test]
#[cfg(target_os = "linux")]
fn jinja_output_bombs_stop_at_the_output_limit() {
    for bomb in [
        "crates/teleprompt-cli/tests/data/output_bomb.j2",
        "crates/teleprompt-cli/tests/data/capture_bomb.j2",
    ] {
        let binary = env!("CARGO_BIN_EXE_teleprompt");
        let output = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -v 3000000 && exec \"{binary}\" render {bomb}"
            ))
            .current_dir(root())
            .output()
            .expect("sh runs");
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{bomb}: {stderr}");
        assert!(output.stdout.is_empty(), "{bomb}: nothing is printed");
        assert!(
            stderr.starts_with("error[TP03")
                && stderr.contains("]: the output is larger than 64 MiB"),
            "{bomb}: {stderr}"
        );
    }
}

/// The binary with its stdout and stderr sent to the given files.
#[cfg(unix)]
fn teleprompt_to(args: &[&str], stdout: Stdio, stderr: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_teleprompt"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .output()
        .expect("the teleprompt binary runs")
}

#[cfg(unix)]
fn dev_full() -> Option<Stdio> {
    let path = Path::new("/dev/full");
    path.exists()
        .then(|| std::fs::OpenOptions::new().write(true).open(path).ok())
        .flatten()
        .map(Stdio::from)
}

/// A full disk on stdout is a one-line error and status 1, never a panic.
#[test]
#[cfg(unix)]
fn stdout_write_errors_exit_1() {
    let dir = tempdir("dev-full-out");
    let prompt = dir.join("p.j2");
    std::fs::write(&prompt, "Hi {{ who }}\n").unwrap();
    let prompt = prompt.to_str().unwrap();
    for args in [
        &["render", prompt, "--set", "who=you"][..],
        &["check", prompt],
        &["--help"],
        &["render", "--help"],
    ] {
        let Some(full) = dev_full() else {
            return;
        };
        let output = teleprompt_to(args, full, Stdio::piped());
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        if args[0] != "--help" && args.get(1) != Some(&"--help") {
            assert_eq!(
                stderr, "error: cannot write the output: No space left on device (os error 28)\n",
                "{args:?}"
            );
        }
    }
}

/// A failing stderr keeps the status of the error it could not report;
/// a warning it cannot print makes a success status 1.
#[test]
#[cfg(unix)]
fn stderr_write_errors_keep_the_status() {
    let dir = tempdir("dev-full-err");
    let broken = dir.join("broken.j2");
    std::fs::write(&broken, "{{ x | nope }}\n").unwrap();
    let warns = dir.join("w.gotmpl");
    std::fs::write(&warns, "{{ range .a }}{{ .a.b }}{{ end }}\n").unwrap();
    let broken = broken.to_str().unwrap();
    let warns = warns.to_str().unwrap();
    for (args, status) in [
        (&["render", "does-not-exist.j2"][..], 2),
        (&["render", broken], 1),
        (&["check", broken], 1),
        (&["check", warns], 1),
        (&["render"], 2),
    ] {
        let Some(full) = dev_full() else {
            return;
        };
        let output = teleprompt_to(args, Stdio::piped(), full);
        assert_eq!(output.status.code(), Some(status), "{args:?}");
    }
}

/// A closed stdout (`teleprompt render … | head -c1`) ends the command
/// quietly with status 1, as a write error.
#[test]
#[cfg(unix)]
fn a_closed_stdout_exits_quietly() {
    let dir = tempdir("broken-pipe");
    let prompt = dir.join("big.j2");
    // 2 MB of text: more than any pipe buffer holds.
    std::fs::write(&prompt, "0123456789\n".repeat(200_000)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_teleprompt"))
        .args(["render", prompt.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the teleprompt binary runs");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("teleprompt finishes");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(text(&output.stderr), "");
}

/// A named pipe given as a path (`--data <(jq …)`) is read: the user
/// asked for it; only its size is bounded.
#[test]
#[cfg(unix)]
fn a_named_pipe_on_the_command_line_is_read() {
    let dir = tempdir("fifo-data");
    let prompt = dir.join("p.j2");
    std::fs::write(&prompt, "Hi {{ who }}\n").unwrap();
    let fifo = dir.join("data.json");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|status| status.success()) {
        return;
    }
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, r#"{"who": "the pipe"}"#))
    };
    let output = teleprompt(&[
        "render",
        prompt.to_str().unwrap(),
        "--data",
        fifo.to_str().unwrap(),
    ]);
    writer.join().unwrap().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Hi the pipe\n");
}

/// Runs the binary, killing it after `seconds`: a command that blocks fails
/// the test instead of hanging the suite.
#[cfg(unix)]
fn teleprompt_within(seconds: u64, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_teleprompt"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the teleprompt binary runs");
    let started = std::time::Instant::now();
    while child.try_wait().expect("status").is_none() {
        if started.elapsed() > std::time::Duration::from_secs(seconds) {
            let _ = child.kill();
            panic!("{args:?} still runs after {seconds} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("teleprompt finishes")
}

/// The workspace README is read only when it is a regular file inside the
/// workspace: a link to the process environment is refused (status 2,
/// nothing printed), a named pipe does not block, a link inside is read.
#[test]
#[cfg(unix)]
fn workspace_reads_stay_inside_the_workspace() {
    use std::os::unix::fs::symlink;
    let dir = tempdir("ws-cli");
    let prompt = dir.join("p.hbs");
    std::fs::write(&prompt, "README: {{readme}}\n").unwrap();
    let prompt = prompt.to_str().unwrap();
    let workspace = dir.join("repo");
    std::fs::create_dir_all(workspace.join("docs")).unwrap();
    let ws = format!("--workspace={}", workspace.display());
    let readme = workspace.join("README.md");

    std::fs::write(workspace.join("docs/intro.md"), "Linked inside.\n").unwrap();
    symlink("docs/intro.md", &readme).unwrap();
    let output = teleprompt_within(10, &["render", prompt, &ws]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "README: Linked inside.\n\n");

    if Path::new("/proc/self/environ").exists() {
        std::fs::remove_file(&readme).unwrap();
        symlink("/proc/self/environ", &readme).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_teleprompt"))
            .args(["render", prompt, &ws])
            .env("TELEPROMPT_TEST_SECRET", "sk-do-not-leak")
            .output()
            .expect("runs");
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(output.stdout.is_empty());
        assert!(
            stderr.starts_with("error[TP05")
                && stderr.contains(
                    "]: the workspace README README.md leads outside the workspace (to /proc/"
                ),
            "{stderr}"
        );
        assert!(!stderr.contains("sk-do-not-leak"), "{stderr}");
    }

    std::fs::remove_file(&readme).unwrap();
    if Command::new("mkfifo")
        .arg(&readme)
        .status()
        .is_ok_and(|status| status.success())
    {
        let output = teleprompt_within(10, &["render", prompt, &ws]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("README.md is a named pipe, not a regular file"),
            "{stderr}"
        );
    }
}

/// `teleprompt diff REV:PATH PATH`: the old version read from git (a repo
/// made here, with a commit), its include read from the working tree.
#[test]
fn diff_reads_the_old_version_from_a_git_revision() {
    let dir = tempdir("diff-git");
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    std::fs::create_dir_all(dir.join("prompts")).unwrap();
    std::fs::write(dir.join("prompts/rules.j2"), "Be brief.").unwrap();
    std::fs::write(
        dir.join("prompts/task.j2"),
        "{% include 'rules.j2' %}\nFix {{ issue }}.\n",
    )
    .unwrap();
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "first"]);
    std::fs::write(
        dir.join("prompts/task.j2"),
        "{% include 'rules.j2' %}\nFix {{ issue }}, with a test.\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_teleprompt"))
        .args([
            "diff",
            "HEAD:prompts/task.j2",
            "prompts/task.j2",
            "--set",
            "issue=the login form",
        ])
        .current_dir(&dir)
        .output()
        .expect("runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("--- prompts/task.j2 (HEAD)\n+++ prompts/task.j2\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("-Fix the login form.\n+Fix the login form, with a test.\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "the first 28 bytes stay the same; the change starts in message 1 (user), line 2"
        ),
        "{stdout}"
    );
    // A committed version larger than --max-template-bytes is read no
    // further than the limit, and refused.
    std::fs::write(dir.join("prompts/big.j2"), "x".repeat(100_000)).unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "big"]);
    let output = Command::new(env!("CARGO_BIN_EXE_teleprompt"))
        .args([
            "diff",
            "HEAD:prompts/big.j2",
            "prompts/task.j2",
            "--max-template-bytes",
            "1K",
        ])
        .current_dir(&dir)
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("HEAD:prompts/big.j2 is larger than 1024 bytes"),
        "{}",
        text(&output.stderr)
    );
}

/// `render --annotate` of a long text with many lines and values costs
/// its length: 40,000 lines, each a value and a line break, and one
/// literal text of 40,000 lines (a pass per line over every segment, or
/// over a long segment's start, took minutes).
#[test]
fn annotate_is_linear_in_lines_and_segments() {
    let dir = tempdir("annotate-linear");
    let mut body = String::from("---\nsyntax: go\n---\n");
    body.push_str(&"fixed line\n".repeat(40_000));
    body.push_str("{{ range .items }}{{ . }}\n{{ end }}");
    std::fs::write(dir.join("long.md"), body).unwrap();
    let items: Vec<String> = (0..40_000).map(|i| format!("item {i}")).collect();
    std::fs::write(
        dir.join("data.json"),
        serde_json::json!({ "items": items }).to_string(),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_teleprompt"))
        .args(["render", "long.md", "--data", "data.json", "--annotate"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    let elapsed = started.elapsed();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let out = text(&output.stdout);
    assert_eq!(out.lines().count(), 1 + 80_000, "a heading and every line");
    assert!(out.contains("\n40003:1 "), "the last fixed line is placed");
    assert!(
        out.contains(" items[39999] │ item 39999\n"),
        "and the last value"
    );
    assert!(elapsed < std::time::Duration::from_secs(20), "{elapsed:?}");
}

/// `teleprompt completions SHELL`: a script each shell reads, naming the
/// commands and the choices of a flag (`--format`'s values).
#[test]
fn completions_list_the_commands_and_choices() {
    for (shell, opening) in [
        ("bash", "_teleprompt()"),
        ("zsh", "#compdef teleprompt"),
        ("fish", "complete -c teleprompt"),
        ("elvish", "edit:completion:arg-completer[teleprompt]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let output = teleprompt(&["completions", shell]);
        assert!(output.status.success(), "{shell}: {}", text(&output.stderr));
        let script = text(&output.stdout);
        assert!(script.contains(opening), "{shell}: {script:.300}");
        assert!(
            script.contains("render") && script.contains("sourcemap"),
            "{shell}"
        );
    }
    let output = teleprompt(&["completions", "tcsh"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("possible values: bash"));
}

/// `teleprompt man [COMMAND]`: roff pages, each with its flags.
#[test]
fn manual_pages_are_roff() {
    let output = teleprompt(&["man"]);
    assert!(output.status.success());
    let page = text(&output.stdout);
    assert!(
        page.contains(".TH teleprompt 1") && page.contains("render"),
        "{page:.300}"
    );
    let output = teleprompt(&["man", "render"]);
    let page = text(&output.stdout);
    assert!(page.contains(".TH teleprompt\\-render 1") || page.contains(".TH teleprompt-render 1"));
    assert!(page.contains("\\-\\-output"), "{page:.500}");
    let output = teleprompt(&["man", "nope"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("the commands are render, check"));
}

/// `--version` names the version, and the commit where it was built in a
/// checkout.
#[test]
fn version_names_the_version() {
    let output = teleprompt(&["--version"]);
    assert!(output.status.success());
    let line = text(&output.stdout);
    let expected = format!("teleprompt {}", env!("CARGO_PKG_VERSION"));
    assert!(line.starts_with(&expected), "{line}");
    assert!(
        line.ends_with('\n') && line.lines().count() == 1,
        "{line:?}"
    );
}

/// `render --output` over a file that exists keeps its permissions and
/// replaces it whole; an output that cannot be written leaves it alone.
#[test]
#[cfg(unix)]
fn output_files_are_replaced_whole() {
    use std::os::unix::fs::PermissionsExt;
    let folder = tempdir("output-files");
    let out = folder.join("out.txt");
    std::fs::write(&out, "old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let path = out.display().to_string();
    let output = teleprompt(&["render", "-t", "new {{ x }}", "-s", "x=1", "-o", &path]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "new 1");
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    // A render that fails writes nothing.
    let output = teleprompt(&["render", "-t", "{{ missing }}", "-o", &path]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "new 1");
    // A folder that does not exist: status 1, said on stderr.
    let nowhere = folder.join("no/such/out.txt").display().to_string();
    let output = teleprompt(&["render", "-t", "x", "-o", &nowhere]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("cannot write the output to"));
    let entries = std::fs::read_dir(&folder).unwrap().count();
    assert_eq!(entries, 1, "no temporary file is left behind");
}

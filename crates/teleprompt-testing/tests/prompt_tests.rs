//! Prompt tests run through the runner: cases in front matter and in a
//! sibling tests file, what a failure says, and `update`.

use std::path::{Path, PathBuf};

use teleprompt::{ErrorClass, LoadOptions, Prompt};
use teleprompt_testing::{
    self as testing, Actual, CaseResult, Expectation, Mismatch, Outcome, PromptTests,
};

fn options() -> LoadOptions {
    LoadOptions::default()
}

/// The results of the front-matter cases of `source`.
fn run(origin: &str, source: &str) -> Vec<(String, Outcome, Option<Actual>)> {
    let tests = PromptTests::from_source(origin, source, &options()).expect("cases read");
    let prompt = Prompt::from_source(origin, source, &options());
    tests
        .run(prompt.as_ref())
        .into_iter()
        .map(
            |CaseResult {
                 case,
                 outcome,
                 actual,
             }| (case.name.clone(), outcome, actual),
        )
        .collect()
}

fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("prompt-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

const TRIAGE: &str = "---
name: triage
syntax: jinja
tests:
  - name: first run
    data: {issue: {title: Fix login}}
    now: 2026-01-05T09:00:00Z
    expect: |
      Triage Fix login on 2026-01-05.
  - name: later turn
    data: {issue: {title: Fix login}}
    now: 2026-01-06T09:00:00Z
    turn: 3
    expect: |
      Triage Fix login on 2026-01-06 (turn 3).
  - name: missing title
    data: {issue: {}}
    expect_error: {class: render, message_contains: issue.title}
---
Triage {{ issue.title }} on {{ system.current_date }}{% if run %} (turn {{ run.turn_number }}){% endif %}.
";

#[test]
fn front_matter_cases_pass() {
    let results = run("triage.md", TRIAGE);
    let names: Vec<&str> = results.iter().map(|(name, ..)| name.as_str()).collect();
    assert_eq!(names, ["first run", "later turn", "missing title"]);
    for (name, outcome, _) in &results {
        assert!(matches!(outcome, Outcome::Pass), "{name}: {outcome:?}");
    }
}

#[test]
fn a_changed_text_fails_with_a_line_diff() {
    let source = TRIAGE.replace(
        "Triage Fix login on 2026-01-05",
        "Triage Fix logout on 2026-01-05",
    );
    let results = run("triage.md", &source);
    let (_, Outcome::Fail(mismatch), Some(Actual::Text(actual))) = &results[0] else {
        panic!("the first case fails: {:?}", results[0].1);
    };
    assert_eq!(actual, "Triage Fix login on 2026-01-05.\n");
    assert!(matches!(mismatch, Mismatch::Text { .. }));
    let report = mismatch.report();
    assert!(report.contains("--- expected\n+++ actual\n"), "{report}");
    assert!(
        report.contains("\n-Triage Fix logout on 2026-01-05.\n"),
        "{report}"
    );
    assert!(
        report.contains("\n+Triage Fix login on 2026-01-05.\n"),
        "{report}"
    );
    // The other cases still pass.
    assert!(matches!(results[1].1, Outcome::Pass));
}

#[test]
fn the_clock_of_a_case_is_its_now() {
    let source = TRIAGE.replace(
        "now: 2026-01-06T09:00:00Z",
        "now: 2026-01-07T09:00:00+05:00",
    );
    let results = run("triage.md", &source);
    let (_, Outcome::Fail(mismatch), _) = &results[1] else {
        panic!("the date moved");
    };
    assert!(mismatch
        .report()
        .contains("+Triage Fix login on 2026-01-07"));
}

#[test]
fn an_error_of_another_class_or_text_fails() {
    let source = TRIAGE.replace(
        "class: render, message_contains: issue.title",
        "class: input",
    );
    let results = run("triage.md", &source);
    let (_, Outcome::Fail(Mismatch::OtherError { actual, .. }), None) = &results[2] else {
        panic!("expected another error: {:?}", results[2].1);
    };
    assert_eq!(actual.class(), ErrorClass::Render);
    let source = TRIAGE.replace(
        "message_contains: issue.title",
        "message_contains: issue.body",
    );
    assert!(matches!(run("triage.md", &source)[2].1, Outcome::Fail(_)));
    // Output where an error was expected.
    let source = TRIAGE.replace("data: {issue: {}}", "data: {issue: {title: x}}");
    let results = run("triage.md", &source);
    let (_, Outcome::Fail(mismatch @ Mismatch::NoError { .. }), _) = &results[2] else {
        panic!("rendered");
    };
    assert!(mismatch.report().contains("but the render succeeded"));
}

#[test]
fn a_load_error_can_be_expected() {
    let source = "---
syntax: jinja
tests:
  - expect_error: {class: parse}
  - expect: x
---
{% if %}
";
    let results = run("broken.j2", source);
    assert!(matches!(results[0].1, Outcome::Pass), "{:?}", results[0].1);
    assert_eq!(results[0].0, "case 1");
    assert!(matches!(results[1].1, Outcome::Fail(Mismatch::Error(_))));
}

#[test]
fn messages_compare_as_roles_and_contents_with_history_and_turn() {
    let source = r#"---
syntax: jinja
tests:
  - name: continuation
    turn: 3
    history: [{role: user, content: hi}, {role: assistant, content: hello}]
    data: {who: Ada}
    expect_messages:
      - {role: system, content: "You help Ada (turn 3)."}
      - {role: user, content: hi}
      - {role: assistant, content: hello}
      - {role: user, content: Go on.}
  - name: wrong order
    turn: 3
    history: [{role: user, content: hi}]
    data: {who: Ada}
    expect_messages:
      - {role: user, content: hi}
      - {role: system, content: "You help Ada (turn 3)."}
      - {role: user, content: Go on.}
---
{{ role("system") }}You help {{ who }} (turn {{ run.turn_number }}).
{{ history() }}
{{- role("user") }}Go on.
"#;
    let results = run("chat.j2", source);
    assert!(matches!(results[0].1, Outcome::Pass), "{:?}", results[0].1);
    let (_, Outcome::Fail(mismatch), Some(Actual::Messages(actual))) = &results[1] else {
        panic!("the order differs: {:?}", results[1].1);
    };
    assert_eq!(actual[0].role, "system");
    let report = mismatch.report();
    assert!(report.contains("the messages differ"), "{report}");
    assert!(
        report.contains("+[system]\n+You help Ada (turn 3).\n"),
        "{report}"
    );
}

#[test]
fn a_tests_file_beside_a_chat_template() {
    let dir = tempdir("chat-template");
    std::fs::write(
        dir.join("tiny.chat_template.jinja"),
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}\
         {% if add_generation_prompt %}<assistant>{% endif %}{{ strftime_now('%Y') }}",
    )
    .unwrap();
    std::fs::write(dir.join("data.json"), r#"{"add_generation_prompt": true}"#).unwrap();
    std::fs::write(
        dir.join("tiny.chat_template.tests.yaml"),
        "- name: history as messages\n  \
           history: [{role: user, content: Hi}]\n  \
           data: data.json\n  \
           now: 2031-06-01T00:00:00Z\n  \
           expect: \"<user>Hi\\n<assistant>2031\"\n\
         - name: messages in the data\n  \
           data: {messages: [{role: system, content: S}]}\n  \
           now: 2031-06-01T00:00:00Z\n  \
           expect: \"<system>S\\n2031\"\n",
    )
    .unwrap();
    let found = testing::prompts_to_test(std::slice::from_ref(&dir)).unwrap();
    assert!(found.unread.is_empty());
    let prompts = found.prompts;
    assert_eq!(prompts, [dir.join("tiny.chat_template.jinja")]);
    // The tests file names its prompt.
    let by_tests_file = testing::prompts_to_test(&[dir.join("tiny.chat_template.tests.yaml")])
        .unwrap()
        .prompts;
    assert_eq!(by_tests_file, prompts);
    let tests = PromptTests::read(&prompts[0], &options()).unwrap();
    let prompt = Prompt::from_file(&prompts[0]);
    for result in tests.run(prompt.as_ref()) {
        assert!(
            result.passed(),
            "{}: {:?}",
            result.case.name,
            result.outcome
        );
        assert!(!result.case.origin.front_matter);
    }
    // A turn means nothing to a chat template: the case says so.
    std::fs::write(
        dir.join("tiny.chat_template.tests.yaml"),
        "- turn: 2\n  expect: x\n",
    )
    .unwrap();
    let tests = PromptTests::read(&prompts[0], &options()).unwrap();
    let results = tests.run(prompt.as_ref());
    let Outcome::Fail(Mismatch::Error(error)) = &results[0].outcome else {
        panic!("{:?}", results[0].outcome);
    };
    assert!(
        error.message().contains("`turn` has no meaning here"),
        "{}",
        error.message()
    );
}

fn document_error(source: &str) -> teleprompt::Error {
    PromptTests::from_source("t.md", source, &options()).unwrap_err()
}

#[test]
fn a_misspelled_case_key_is_a_document_error_with_did_you_mean() {
    let error = document_error(
        "---\nsyntax: jinja\ntests:\n  - name: first\n    expect: x\n  - name: second\n    data: {}\n    expcet: y\n---\nx",
    );
    assert_eq!(error.class(), ErrorClass::Document);
    assert!(
        error
            .message()
            .contains("test case 2 (\"second\"): unknown key `expcet`"),
        "{}",
        error.message()
    );
    assert_eq!(error.suggestion(), Some("did you mean \"expect\"?"));
    // Placed on the misspelled key, in the second case (not the first
    // case's line, nor `tests:`).
    let at = error.location().unwrap();
    assert_eq!((at.line, at.column), (8, 5));
    // A key the message names but no line sets (a flow mapping): on
    // `tests:`.
    let error = document_error("---\ntests: [{expcet: y}]\n---\nx");
    assert_eq!(error.location().unwrap().line, 2);
    let error = document_error("---\ntests:\n  - expect_error: {clas: render}\n---\nx");
    assert_eq!(
        error.suggestion(),
        Some("did you mean \"expect_error.class\"?")
    );
}

#[test]
fn malformed_cases_are_document_errors_naming_the_case_and_key() {
    for (tests, words) in [
        ("tests: 5", "`tests` must be a list"),
        ("tests: [x]", "test case 1 must be a mapping"),
        (
            "tests:\n  - {name: a}",
            "test case 1 (\"a\"): no expectation",
        ),
        (
            "tests:\n  - {expect: a, expect_error: {}}",
            "give one expectation, not expect and expect_error",
        ),
        (
            "tests:\n  - {now: tomorrow, expect: a}",
            "test case 1 (\"case 1\"): `now`:",
        ),
        (
            "tests:\n  - {turn: -1, expect: a}",
            "`turn` must be a whole number",
        ),
        (
            "tests:\n  - {data: [1], expect: a}",
            "`data` must be a mapping",
        ),
        (
            "tests:\n  - {data: nowhere.yaml, expect: a}",
            "`data: nowhere.yaml` cannot be read",
        ),
        (
            "tests:\n  - {history: [{content: x}], expect: a}",
            "`history`",
        ),
        (
            "tests:\n  - {expect_error: {class: runtime}}",
            "`expect_error.class: runtime` is not one of",
        ),
        (
            "tests:\n  - {expect_messages: [{role: user, text: x}]}",
            "item 1 has an unknown key `text`",
        ),
        ("tests:\n  - {expect: 5}", "`expect` must be text"),
    ] {
        let error = document_error(&format!("---\nsyntax: jinja\n{tests}\n---\nx"));
        assert_eq!(error.class(), ErrorClass::Document, "{tests}");
        assert!(
            error.message().contains(words),
            "{tests}: {}",
            error.message()
        );
    }
}

#[test]
fn a_malformed_tests_file_names_its_line() {
    let dir = tempdir("malformed");
    std::fs::write(dir.join("p.j2"), "x").unwrap();
    std::fs::write(
        dir.join("p.tests.yaml"),
        "- name: a\n  expect: x\n- name: b\n  dat: {}\n  expect: y\n",
    )
    .unwrap();
    let error = PromptTests::read(dir.join("p.j2"), &options()).unwrap_err();
    assert_eq!(
        error.file(),
        Some(dir.join("p.tests.yaml").display().to_string().as_str())
    );
    assert_eq!(error.location().unwrap().line, 4);
    assert_eq!(error.suggestion(), Some("did you mean \"data\"?"));
    // The line of the case that sets the key, not an earlier case's.
    std::fs::write(
        dir.join("p.tests.yaml"),
        "- name: a\n  now: 2026-01-01T00:00:00Z\n  expect: x\n- name: b\n  now: soon\n  expect: y\n",
    )
    .unwrap();
    let error = PromptTests::read(dir.join("p.j2"), &options()).unwrap_err();
    assert!(
        error
            .message()
            .starts_with("test case 2 (\"b\"): `now`: \"soon\" is not"),
        "{}",
        error.message()
    );
    assert_eq!(error.location().unwrap().line, 5);
}

#[test]
fn update_rewrites_only_the_failing_expectations() {
    let dir = tempdir("update");
    let prompt_file = dir.join("hi.j2");
    let source = "---\n# a comment that stays\ntests:\n  - name: recorded\n    data: {who: Ada}\n    expect: \"Hi Ada!\\n\"\n  - name: stale\n    data: {who: Bob}\n    expect: |\n      Hello Bob\n  - name: new\n    data: {who: Cy}\n    expect:\n  - name: error\n    data: {}\n    expect_error: {class: render}\n---\nHi {{ who }}!\n";
    std::fs::write(&prompt_file, source).unwrap();
    std::fs::write(
        dir.join("hi.tests.yaml"),
        "# sibling cases\n- name: messages\n  data: {who: Di}\n  expect_messages: []\n",
    )
    .unwrap();
    let tests = PromptTests::read(&prompt_file, &options()).unwrap();
    let prompt = Prompt::from_file(&prompt_file);
    let results = tests.run(prompt.as_ref());
    let passed: Vec<bool> = results.iter().map(CaseResult::passed).collect();
    assert_eq!(passed, [true, false, false, true, false]);
    let updated = testing::update(&results);
    assert!(updated.errors.is_empty(), "{:?}", updated.errors);
    assert_eq!(updated.cases.len(), 3);
    let after = std::fs::read_to_string(&prompt_file).unwrap();
    assert_eq!(
        after,
        source
            .replace(
                "    expect: |\n      Hello Bob\n",
                "    expect: |\n      Hi Bob!\n"
            )
            .replace(
                "    expect:\n  - name: error",
                "    expect: |\n      Hi Cy!\n  - name: error"
            )
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("hi.tests.yaml")).unwrap(),
        "# sibling cases\n- name: messages\n  data: {who: Di}\n  expect_messages:\n    - role: user\n      content: \"Hi Di!\"\n"
    );
    // No temporary file is left behind, and now every case passes.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let tests = PromptTests::read(&prompt_file, &options()).unwrap();
    let prompt = Prompt::from_file(&prompt_file);
    assert!(tests.run(prompt.as_ref()).iter().all(CaseResult::passed));
    assert!(matches!(tests.cases[2].expect, Expectation::Text(Some(_))));
}

#[test]
fn update_refuses_what_it_cannot_rewrite_safely() {
    let dir = tempdir("flow");
    let prompt_file = dir.join("hi.j2");
    let source = "---\ntests: [{data: {who: Ada}, expect: old}]\n---\nHi {{ who }}\n";
    std::fs::write(&prompt_file, source).unwrap();
    let tests = PromptTests::read(&prompt_file, &options()).unwrap();
    let prompt = Prompt::from_file(&prompt_file);
    let updated = testing::update(&tests.run(prompt.as_ref()));
    assert!(updated.cases.is_empty());
    assert!(updated.errors[0]
        .message()
        .contains("cannot update test case 1 safely"));
    assert_eq!(std::fs::read_to_string(&prompt_file).unwrap(), source);
}

#[test]
fn the_guide_example_passes() {
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/check-and-tests.md"),
    )
    .expect("the guide's page on prompt tests");
    let section = readme
        .split("## Prompt tests\n")
        .nth(1)
        .expect("the section");
    let example = section
        .split("```yaml\n")
        .nth(1)
        .and_then(|block| block.split("```").next())
        .expect("a yaml block");
    let dir = tempdir("readme");
    std::fs::write(dir.join("triage.md"), example).unwrap();
    std::fs::write(dir.join("issue.yaml"), "issue: {title: Fix login}\n").unwrap();
    let tests = PromptTests::read(dir.join("triage.md"), &options()).unwrap();
    assert_eq!(tests.cases.len(), 3);
    let prompt = Prompt::from_file(dir.join("triage.md"));
    for result in tests.run(prompt.as_ref()) {
        assert!(
            result.passed(),
            "{}: {:?}",
            result.case.name,
            result.outcome
        );
    }
}

#[test]
fn tests_files_find_their_prompts_and_unread_ones_are_reported() {
    let dir = tempdir("finding");
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    let case = "- expect: x\n";
    // A prompt without front matter is found by its tests file; data
    // beside it with the same stem is not a prompt.
    write("plain.txt", "x");
    write("plain.json", "{}");
    write("plain.tests.yaml", case);
    // Two prompts with one stem: the whole file name tells them apart.
    write("assistant.j2", "x");
    write("assistant.django", "x");
    write("assistant.j2.tests.yaml", case);
    write("assistant.tests.yaml", case);
    // A tests file of no prompt, and one shadowed by another.
    write("ghost.tests.yaml", case);
    write("p.hbs", "x");
    write("p.tests.yaml", case);
    write("p.tests.yml", case);
    let found = testing::prompts_to_test(std::slice::from_ref(&dir)).unwrap();
    let names: Vec<String> = found
        .prompts
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["assistant.django", "assistant.j2", "p.hbs", "plain.txt"]
    );
    assert_eq!(
        testing::tests_file(&dir.join("assistant.django")),
        Some(dir.join("assistant.tests.yaml"))
    );
    let unread: Vec<String> = found.unread.iter().map(|e| e.report()).collect();
    assert_eq!(unread.len(), 2, "{unread:#?}");
    assert!(unread[0].contains("ghost.tests.yaml"), "{}", unread[0]);
    assert!(unread[0].contains("belongs to no prompt"), "{}", unread[0]);
    assert!(unread[1].contains("p.tests.yml"), "{}", unread[1]);
    assert!(unread[1].contains("is not read"), "{}", unread[1]);
    // Without the whole-name file, the stem is ambiguous.
    std::fs::remove_file(dir.join("assistant.j2.tests.yaml")).unwrap();
    let error = testing::prompt_of_tests_file(&dir.join("assistant.tests.yaml")).unwrap_err();
    assert!(
        error
            .message()
            .contains("several prompts are named \"assistant.*\" (assistant.django, assistant.j2)"),
        "{}",
        error.message()
    );
}

#[test]
fn unreadable_front_matter_without_tests_is_left_to_check() {
    let dir = tempdir("broken-front-matter");
    std::fs::write(dir.join("a.j2"), "---\nname: [unclosed\n---\nx").unwrap();
    let tests = PromptTests::read(dir.join("a.j2"), &options()).unwrap();
    assert!(tests.cases.is_empty());
    std::fs::write(
        dir.join("b.j2"),
        "---\nname: [unclosed\ntests:\n  - expect: x\n---\nx",
    )
    .unwrap();
    let error = PromptTests::read(dir.join("b.j2"), &options()).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Document);
}

/// The error a case with `key: value` (a path) gets when its tests are
/// read, for a prompt in `dir`.
fn path_case_error(dir: &Path, key: &str, value: &str, options: &LoadOptions) -> String {
    let prompt = dir.join("p.j2");
    std::fs::write(
        &prompt,
        format!("---\nsyntax: jinja\ntests:\n  - {key}: {value}\n    expect: x\n---\nx\n"),
    )
    .unwrap();
    match PromptTests::read(&prompt, options) {
        Ok(_) => format!("read {key}: {value}"),
        Err(error) => error.message().to_string(),
    }
}

// Issue 29 (hostile, part 4): a test's `data:`, `history:` and `context:`
// files are read under the one confinement rule (that of includes): a
// relative path without `..` inside the prompt's folder, no symbolic link
// out of it, regular files only (a FIFO never blocks), size-bounded.
#[test]
fn test_data_paths_stay_inside_the_prompt_folder() {
    let root = tempdir("confined");
    let dir = root.join("prompts");
    std::fs::create_dir_all(&dir).unwrap();
    let outside = root.join("secret.json");
    std::fs::write(&outside, r#"{"token": "SECRET-OUTSIDE"}"#).unwrap();
    std::fs::write(dir.join("ok.json"), r#"{"a": 1}"#).unwrap();
    let options = options();
    // The file inside is read.
    assert_eq!(
        path_case_error(&dir, "data", "ok.json", &options),
        "read data: ok.json"
    );
    for key in ["data", "history", "context"] {
        let error = path_case_error(&dir, key, "../secret.json", &options);
        assert!(error.contains("leaves its folder"), "{key}: {error}");
        let error = path_case_error(&dir, key, &outside.display().to_string(), &options);
        assert!(error.contains("leaves its folder"), "{key}: {error}");
        assert!(!error.contains("SECRET-OUTSIDE"), "{error}");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, dir.join("link.json")).unwrap();
        let error = path_case_error(&dir, "data", "link.json", &options);
        assert!(error.contains("leads outside its folder"), "{error}");
        assert!(!error.contains("SECRET-OUTSIDE"), "{error}");
        // A FIFO no one writes to: refused at once, never waited on.
        let fifo = dir.join("fifo.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (send, receive) = std::sync::mpsc::channel();
        let dir_for_thread = dir.clone();
        std::thread::spawn(move || {
            let error = path_case_error(&dir_for_thread, "history", "fifo.json", &options);
            let _ = send.send(error);
        });
        let error = receive
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("a FIFO as test data blocks");
        assert!(error.contains("not a regular file"), "{error}");
        // /proc files are not in the folder either.
        let error = path_case_error(&dir, "data", "/proc/self/environ", &LoadOptions::default());
        assert!(error.contains("leaves its folder"), "{error}");
    }
    // A file over max_data_bytes is refused unread.
    std::fs::write(
        dir.join("huge.json"),
        format!("{{\"a\": \"{}\"}}", "x".repeat(4096)),
    )
    .unwrap();
    let mut small = LoadOptions::default();
    small.limits.max_data_bytes = 1024;
    let error = path_case_error(&dir, "data", "huge.json", &small);
    assert!(
        error.contains("max-data-bytes") || error.contains("larger"),
        "{error}"
    );
    // A data file that does not parse is named with its line, not quoted.
    std::fs::write(dir.join("bad.json"), "{\"a\": SECRET-INSIDE}").unwrap();
    let prompt = dir.join("p.j2");
    std::fs::write(
        &prompt,
        "---\nsyntax: jinja\ntests:\n  - data: bad.json\n    expect: x\n---\nx\n",
    )
    .unwrap();
    let error = PromptTests::read(&prompt, &LoadOptions::default()).unwrap_err();
    let shown = format!("{error}");
    assert!(shown.contains("bad.json"), "{shown}");
    assert!(!shown.contains("SECRET-INSIDE"), "{shown}");
}

#[test]
fn prefix_stable_cases_render_the_next_turn() {
    // The date before the fixed instructions: the next turn changes the
    // system message, and the report says where the template wrote it.
    let source = "---
syntax: go
tests:
  - name: clock first
    now: 2026-01-05T09:00:00Z
    history: [{role: user, content: Fix the crash.}]
    prefix_stable: true
    expect_messages:
      - {role: system, content: \"Today is 2026-01-05.\\nYou fix bugs. Read the failing test first.\"}
      - {role: user, content: Fix the crash.}
---
{{ role \"system\" }}Today is {{ .system.current_date }}.
You fix bugs. Read the failing test first.{{ history }}";
    let results = run("agent.md", source);
    let (_, Outcome::Fail(mismatch), _) = &results[0] else {
        panic!("not prefix-stable: {:?}", results[0].1);
    };
    assert!(matches!(mismatch, Mismatch::Prefix(_)));
    let report = mismatch.report();
    assert!(
        report.contains("message 1, line 1, written at agent.md:12:29 (`system.current_date`)"),
        "{report}"
    );
    assert!(report.contains("keeps only the first 18 bytes"), "{report}");

    // The date after the history, in the last message: stable.
    let fixed = "---
syntax: go
tests:
  - name: clock last
    now: 2026-01-05T09:00:00Z
    history: [{role: user, content: Fix the crash.}]
    prefix_stable: true
    expect_messages:
      - {role: system, content: You fix bugs. Read the failing test first.}
      - {role: user, content: Fix the crash.}
      - {role: user, content: (Today is 2026-01-05.)}
---
{{ role \"system\" }}You fix bugs. Read the failing test first.{{ history }}{{ role \"user\" }}(Today is {{ .system.current_date }}.)";
    let results = run("agent.md", fixed);
    assert!(matches!(results[0].1, Outcome::Pass), "{:?}", results[0].1);

    // A chat template that only appends is stable, its messages in its data.
    let chat = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}";
    let tests = "- data: {messages: [{role: user, content: Hi}], add_generation_prompt: true}\n  prefix_stable: true\n  expect: \"<|user|>Hi<|end|><|assistant|>\"\n";
    let dir = tempdir("prefix-stable-chat");
    std::fs::write(dir.join("chat_template.jinja"), chat).unwrap();
    std::fs::write(dir.join("chat_template.tests.yaml"), tests).unwrap();
    let path = dir.join("chat_template.jinja");
    let cases = PromptTests::read(&path, &options()).expect("read");
    let prompt = Prompt::from_file_with(&path, &options());
    let results = cases.run(prompt.as_ref());
    assert!(results[0].passed(), "{:?}", results[0].outcome);
}

#[test]
fn prefix_stable_must_be_a_bool() {
    let error = document_error("---\ntests:\n  - prefix_stable: yes please\n    expect: x\n---\nx");
    assert!(
        error
            .message()
            .contains("`prefix_stable` must be true or false"),
        "{}",
        error.message()
    );
}

#[test]
fn prefix_stable_compares_two_turns_of_a_case_without_a_turn() {
    // A case without `turn` renders turns 1 and 2: the `run` namespace is
    // there in both, so a template that only tests for it is stable.
    let source = "---
tests:
  - now: 2026-01-05T09:00:00Z
    prefix_stable: true
    expect: Rules.
---
{{ role('system') }}Rules.{% if run is defined %} (an agent){% endif %}{{ history() }}";
    let results = run("agent.j2", source);
    assert!(matches!(results[0].1, Outcome::Pass), "{:?}", results[0].1);
}

//! `teleprompt check` reports: text (with and without colour), JSON, SARIF
//! (checked against the published SARIF 2.1.0 schema) and GitHub
//! annotations, on broken copies of every example.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The repository root (examples live there).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `teleprompt` in `dir` with `env` set and NO_COLOR / CLICOLOR_FORCE
/// unset unless given.
fn teleprompt_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_teleprompt"));
    command
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("the teleprompt binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh directory under the target directory.
fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("copy dir");
    for entry in fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// One broken example: the file, the text replaced, its replacement, the
/// rule expected, and whether the template is a string inside the file
/// (its lines are not the file's).
struct Broken {
    file: &'static str,
    find: &'static str,
    replace: &'static str,
    rule: &'static str,
    message: &'static str,
    embedded: bool,
}

const BROKEN: &[Broken] = &[
    Broken {
        file: "dotprompt/support.prompt",
        find: "{{question}}",
        replace: "{{uper question}}",
        rule: "parse/unknown-helper",
        message: "there is no helper named \"uper\"",
        embedded: false,
    },
    Broken {
        file: "forge/system.hbs",
        find: "{{custom_rules}}",
        replace: "{{uper custom_rules}}",
        rule: "parse/unknown-helper",
        message: "there is no helper named \"uper\"",
        embedded: false,
    },
    Broken {
        file: "hf/Qwen3-0.6B/tokenizer_config.json",
        find: "{{- message.content }}",
        replace: "{{- message.content | uper }}",
        rule: "parse/unknown-filter",
        message: "unknown filter \"uper\"",
        embedded: true,
    },
    Broken {
        file: "prompty/support.prompty",
        find: "{{ question }}",
        replace: "{{ question | uper }}",
        rule: "parse/unknown-filter",
        message: "unknown filter \"uper\"",
        embedded: false,
    },
    Broken {
        file: "rapida/assistant.j2",
        find: "{{ name }}",
        replace: "{{ name | uper }}",
        rule: "parse/unknown-filter",
        message: "unknown filter \"uper\"",
        embedded: false,
    },
    Broken {
        file: "rapida/assistant.django",
        find: "{{ value }}",
        replace: "{{ value|uper }}",
        rule: "parse/unknown-filter",
        message: "unknown filter \"uper\"",
        embedded: false,
    },
    Broken {
        file: "semantic-kernel/chat.hbs",
        find: "{{request}}",
        replace: "{{uper request}}",
        rule: "parse/unknown-helper",
        message: "there is no helper named \"uper\"",
        embedded: false,
    },
    Broken {
        file: "semantic-kernel/story.yaml",
        find: "{{topic}}",
        replace: "{{uper topic}}",
        rule: "parse/unknown-helper",
        message: "there is no helper named \"uper\"",
        embedded: true,
    },
    Broken {
        file: "sortie/WORKFLOW.md",
        find: "{{ .issue.description }}",
        replace: "{{ uper .issue.description }}",
        rule: "parse/unknown-function",
        message: "function \"uper\" not defined",
        embedded: false,
    },
];

/// A copy of examples/ in a temp dir with every file of [`BROKEN`] broken.
/// Returns the directory holding `examples/`.
fn broken_examples(name: &str) -> PathBuf {
    let dir = tempdir(name);
    copy_dir(&root().join("examples"), &dir.join("examples"));
    for broken in BROKEN {
        let path = dir.join("examples").join(broken.file);
        let source = fs::read_to_string(&path).expect("example");
        assert!(
            source.contains(broken.find),
            "{}: {}",
            broken.file,
            broken.find
        );
        fs::write(&path, source.replacen(broken.find, broken.replace, 1)).expect("write");
    }
    dir
}

/// The 1-based line and column of the typo (`uper`) in the broken file.
fn typo_position(dir: &Path, broken: &Broken) -> (usize, usize) {
    let source = fs::read_to_string(dir.join("examples").join(broken.file)).expect("read");
    let at =
        source.find(broken.replace).expect("injected") + broken.replace.find("uper").expect("typo");
    let before = &source[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.chars().rev().take_while(|c| *c != '\n').count() + 1;
    (line, column)
}

fn json_output(dir: &Path, args: &[&str]) -> (Output, Value) {
    let output = teleprompt_in(dir, args, &[]);
    let value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", text(&output.stdout)));
    (output, value)
}

#[test]
fn a_broken_copy_of_each_example_gives_the_expected_json() {
    let dir = broken_examples("reports-json");
    let (output, report) = json_output(
        &dir,
        &[
            "check",
            "examples",
            "--format",
            "json",
            "--label",
            "commit=abc123",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(output.stderr.is_empty(), "{}", text(&output.stderr));
    assert_eq!(report["valid"], false);
    let errors = report["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), BROKEN.len(), "{report:#}");
    for broken in BROKEN {
        let file = format!("examples/{}", broken.file);
        let error = errors
            .iter()
            .find(|error| error["file"] == file.as_str())
            .unwrap_or_else(|| panic!("no error for {file}: {report:#}"));
        assert_eq!(error["severity"], "error", "{error:#}");
        assert_eq!(error["rule"], broken.rule, "{error:#}");
        assert_eq!(error["class"], "parse", "{error:#}");
        assert_eq!(error["message"], broken.message, "{error:#}");
        assert_eq!(error["help"], "did you mean \"upper\"?", "{error:#}");
        assert_eq!(error["labels"]["commit"], "abc123", "{error:#}");
        let (line, column) = (error["line"].as_u64(), error["column"].as_u64());
        if broken.embedded {
            // Counted in the template string, which is named.
            assert!(error["template"].is_string(), "{error:#}");
            assert!(line.is_some() && column.is_some(), "{error:#}");
        } else {
            let (line, column) = typo_position(&dir, broken);
            assert_eq!(error["line"], line, "{file}: {error:#}");
            assert_eq!(error["column"], column, "{file}: {error:#}");
            assert_eq!(error["end"]["line"], line, "{error:#}");
            assert_eq!(error["end"]["column"], column + "uper".len(), "{error:#}");
        }
    }
}

#[test]
fn a_broken_copy_of_each_example_gives_valid_sarif() {
    let dir = broken_examples("reports-sarif");
    let (output, sarif) = json_output(
        &dir,
        &[
            "check",
            "examples",
            "--format=sarif",
            "--label",
            "commit=abc123",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert_valid_sarif(&sarif);
    let run = &sarif["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "teleprompt");
    assert_eq!(run["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|rule| rule["id"].as_str().expect("id"))
        .collect();
    for id in [
        "parse/unknown-filter",
        "parse/unknown-helper",
        "parse/unknown-function",
    ] {
        assert!(rules.contains(&id), "{rules:?}");
    }
    let results = run["results"].as_array().expect("results");
    assert_eq!(results.len(), BROKEN.len(), "{sarif:#}");
    for broken in BROKEN {
        let uri = format!("examples/{}", broken.file);
        let result = results
            .iter()
            .find(|result| {
                result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    == uri.as_str()
            })
            .unwrap_or_else(|| panic!("no result for {uri}: {sarif:#}"));
        assert_eq!(result["ruleId"], broken.rule, "{result:#}");
        assert_eq!(result["level"], "error", "{result:#}");
        let message = result["message"]["text"].as_str().expect("message");
        assert!(message.starts_with(broken.message), "{message}");
        assert!(
            message.contains("help: did you mean \"upper\"?"),
            "{message}"
        );
        assert_eq!(result["properties"]["labels"]["commit"], "abc123");
        let index = result["ruleIndex"].as_u64().expect("index") as usize;
        assert_eq!(rules[index], broken.rule);
        let region = &result["locations"][0]["physicalLocation"]["region"];
        if broken.embedded {
            assert!(region.is_null(), "{result:#}");
        } else {
            let (line, column) = typo_position(&dir, broken);
            assert_eq!(region["startLine"], line, "{result:#}");
            assert_eq!(region["startColumn"], column, "{result:#}");
            assert_eq!(region["endLine"], line, "{result:#}");
            assert_eq!(region["endColumn"], column + "uper".len(), "{result:#}");
        }
    }
}

/// Checks `sarif` against the SARIF 2.1.0 schema kept in tests/data/sarif.
fn assert_valid_sarif(sarif: &Value) {
    let schema_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif/sarif-2.1.0-rtm.5.json");
    let schema = fs::read_to_string(schema_path).expect("schema");
    // The schema's `language` patterns hold a lone `]`, a literal in
    // ECMAScript's lenient mode; escaped here so the Rust regex reads them
    // the same way (teleprompt never sets a language).
    let lenient = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    assert!(schema.contains(lenient));
    let schema = schema.replace(lenient, "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\\\]?$");
    let schema: Value = serde_json::from_str(&schema).expect("json");
    let validator = jsonschema::draft4::new(&schema).expect("the schema compiles");
    let problems: Vec<String> = validator
        .iter_errors(sarif)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}\n{sarif:#}");
    // The schema catches a broken log.
    let mut broken = sarif.clone();
    broken["version"] = "2.0.0".into();
    assert!(!validator.is_valid(&broken));
}

#[test]
fn clean_and_warning_runs_give_valid_sarif_and_json() {
    let dir = tempdir("reports-warning");
    fs::write(
        dir.join("w.gotmpl"),
        "{{ .issue.title }}\n{{ range .items }}{{ .issue.id }}{{ end }}\n",
    )
    .expect("write");
    let (output, sarif) = json_output(&dir, &["check", "w.gotmpl", "--format", "sarif"]);
    assert_eq!(output.status.code(), Some(0), "warnings pass");
    assert_valid_sarif(&sarif);
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["level"], "warning");
    assert_eq!(result["ruleId"], "warning/range-scope");

    let (output, json) = json_output(&dir, &["check", "w.gotmpl", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(json["valid"], true);
    assert_eq!(json["errors"], serde_json::json!([]));
    let warning = &json["warnings"][0];
    assert_eq!(warning["severity"], "warning");
    assert_eq!(warning["rule"], "warning/range-scope");
    assert_eq!(warning["line"], 2);
    assert_eq!(warning["column"], 22);
    assert_eq!(warning["end"], serde_json::json!({"line": 2, "column": 31}));

    // --deny-warnings makes the same run fail, in every format.
    for format in ["text", "json", "sarif", "github"] {
        let output = teleprompt_in(
            &dir,
            &["check", "w.gotmpl", "--deny-warnings", "--format", format],
            &[],
        );
        assert_eq!(output.status.code(), Some(1), "{format}");
    }
    let (_, json) = json_output(
        &dir,
        &["check", "w.gotmpl", "--format", "json", "--deny-warnings"],
    );
    assert_eq!(json["valid"], false);
    let output = teleprompt_in(&dir, &["check", "w.gotmpl", "--deny-warnings"], &[]);
    assert!(
        text(&output.stderr).contains("1 warning(s), denied by --deny-warnings"),
        "{}",
        text(&output.stderr)
    );

    // A clean file: an empty, valid log.
    fs::write(dir.join("ok.j2"), "Hello {{ name }}\n").expect("write");
    let (output, sarif) = json_output(&dir, &["check", "ok.j2", "--format", "sarif"]);
    assert_eq!(output.status.code(), Some(0));
    assert_valid_sarif(&sarif);
    assert_eq!(sarif["runs"][0]["results"], serde_json::json!([]));
}

#[test]
fn github_format_prints_workflow_annotations() {
    let dir = broken_examples("reports-github");
    let output = teleprompt_in(&dir, &["check", "examples", "--format", "github"], &[]);
    assert_eq!(output.status.code(), Some(1));
    let stdout = text(&output.stdout);
    let (line, column) = typo_position(&dir, &BROKEN[4]);
    let expected = format!(
        "::error file=examples/rapida/assistant.j2,line={line},col={column},endLine={line},\
         endColumn={},title=parse/unknown-filter::unknown filter \"uper\"%0Ahelp: did you mean \"upper\"?\n",
        column + 3
    );
    assert!(stdout.contains(&expected), "{stdout}");
    // A template inside a JSON file: the annotation is on the file, the
    // template's own line and column are in the message.
    assert!(
        stdout.lines().any(|line| line.starts_with(
            "::error file=examples/hf/Qwen3-0.6B/tokenizer_config.json,title=parse/unknown-filter::unknown filter \"uper\" (in `chat_template`, at "
        )),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), BROKEN.len(), "{stdout}");

    // Warnings are ::warning; properties are escaped.
    let dir = tempdir("reports-github-warning");
    fs::write(
        dir.join("a,b:c.gotmpl"),
        "{{ .issue.title }}\n{{ range .items }}{{ .issue.id }}{{ end }}\n",
    )
    .expect("write");
    let output = teleprompt_in(&dir, &["check", "a,b:c.gotmpl", "--format=github"], &[]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        text(&output.stdout),
        "::warning file=a%2Cb%3Ac.gotmpl,line=2,col=22,endLine=2,endColumn=30,\
         title=warning/range-scope::.issue.id inside {{range}} reads the current element, \
         not the root data%0Ahelp: did you mean \"$.issue.id\"?\n"
    );
}

#[test]
fn text_reports_are_coloured_only_when_asked() {
    let dir = tempdir("reports-colour");
    fs::write(dir.join("bad.j2"), "Hi {{ name | uper }}\n").expect("write");
    let escape = "\u{1b}[";
    // Not a terminal: no colour, the plain report as before.
    let plain = teleprompt_in(&dir, &["check", "bad.j2"], &[]);
    assert_eq!(plain.status.code(), Some(1));
    let plain = text(&plain.stderr);
    assert!(!plain.contains(escape), "{plain}");
    assert!(
        plain.starts_with(
            "error[parse]: unknown filter \"uper\"\n  --> bad.j2:1:14\n  |\n1 | Hi {{ name | uper }}\n  |              ^^^^\n"
        ),
        "{plain}"
    );
    // --color always colours, even with NO_COLOR; stripped, it is the same text.
    let coloured = teleprompt_in(
        &dir,
        &["check", "bad.j2", "--color", "always"],
        &[("NO_COLOR", "1")],
    );
    let coloured = text(&coloured.stderr);
    assert!(coloured.contains(escape), "{coloured}");
    assert_eq!(strip_ansi(&coloured), plain);
    // auto with CLICOLOR_FORCE colours; NO_COLOR wins over it.
    let forced = teleprompt_in(&dir, &["check", "bad.j2"], &[("CLICOLOR_FORCE", "1")]);
    assert!(text(&forced.stderr).contains(escape));
    let no_color = teleprompt_in(
        &dir,
        &["check", "bad.j2"],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
    );
    assert!(!text(&no_color.stderr).contains(escape));
    let never = teleprompt_in(
        &dir,
        &["check", "bad.j2", "--color=never"],
        &[("CLICOLOR_FORCE", "1")],
    );
    assert!(!text(&never.stderr).contains(escape));
    // A bad value is a usage error.
    let usage = teleprompt_in(&dir, &["check", "bad.j2", "--color=sometimes"], &[]);
    assert_eq!(usage.status.code(), Some(2));
    let usage = teleprompt_in(&dir, &["check", "bad.j2", "--format=xml"], &[]);
    assert_eq!(usage.status.code(), Some(2));
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn labels_ride_on_load_errors_of_check_and_render() {
    let dir = tempdir("reports-labels");
    fs::write(dir.join("bad.j2"), "Hi {{ name | uper }}\n").expect("write");
    let check = teleprompt_in(&dir, &["check", "bad.j2", "--label", "issue=PROJ-42"], &[]);
    assert!(
        text(&check.stderr).contains("  = issue: PROJ-42\n"),
        "{}",
        text(&check.stderr)
    );
    let render = teleprompt_in(&dir, &["render", "bad.j2", "--label", "issue=PROJ-42"], &[]);
    assert_eq!(render.status.code(), Some(1));
    assert!(
        text(&render.stderr).contains("  = issue: PROJ-42\n"),
        "{}",
        text(&render.stderr)
    );
    // A data error too.
    fs::write(dir.join("ok.j2"), "Hi {{ name }}\n").expect("write");
    fs::write(dir.join("bad.json"), "{").expect("write");
    let render = teleprompt_in(
        &dir,
        &[
            "render",
            "ok.j2",
            "--data=bad.json",
            "--label",
            "issue=PROJ-42",
        ],
        &[],
    );
    assert_eq!(render.status.code(), Some(1));
    assert!(
        text(&render.stderr).contains("  = issue: PROJ-42\n"),
        "{}",
        text(&render.stderr)
    );
    // Once only, when the library already attached it.
    let render = teleprompt_in(&dir, &["render", "ok.j2", "--label", "issue=PROJ-42"], &[]);
    assert_eq!(
        text(&render.stderr).matches("issue: PROJ-42").count(),
        1,
        "{}",
        text(&render.stderr)
    );
}

#[test]
fn an_unreadable_path_is_a_usage_error_in_every_format() {
    let dir = tempdir("reports-usage");
    for format in ["text", "json", "sarif", "github"] {
        let output = teleprompt_in(&dir, &["check", "missing-dir/", "--format", format], &[]);
        assert_eq!(output.status.code(), Some(2), "{format}");
    }
    let (_, sarif) = json_output(&dir, &["check", "missing.j2", "--format", "sarif"]);
    assert_valid_sarif(&sarif);
    assert_eq!(sarif["runs"][0]["results"][0]["ruleId"], "io");
}

#[test]
fn labels_ride_on_the_errors_of_test_and_inspect() {
    let dir = tempdir("reports-labels-test");
    fs::write(dir.join("bad.j2"), "Hi {{ name | uper }}\n").expect("write");
    let inspect = teleprompt_in(
        &dir,
        &["inspect", "bad.j2", "--label", "issue=PROJ-42"],
        &[],
    );
    assert_eq!(inspect.status.code(), Some(1));
    assert!(
        text(&inspect.stderr).contains("  = issue: PROJ-42\n"),
        "{}",
        text(&inspect.stderr)
    );
    // A case that fails and a tests file that cannot be read.
    fs::write(dir.join("hi.j2"), "Hi {{ name }}\n").expect("write");
    fs::write(
        dir.join("hi.tests.yaml"),
        "- name: greets\n  data: {name: Ada}\n  expect: \"Hello Ada\\n\"\n",
    )
    .expect("write");
    fs::write(dir.join("other.j2"), "{{ x }}\n").expect("write");
    fs::write(dir.join("other.tests.yaml"), "- name: [\n").expect("write");
    let test = teleprompt_in(&dir, &["test", ".", "--label", "issue=PROJ-42"], &[]);
    assert_eq!(test.status.code(), Some(1));
    let out = format!("{}{}", text(&test.stdout), text(&test.stderr));
    assert!(out.contains("FAIL    ./hi.j2: greets"), "{out}");
    assert_eq!(out.matches("= issue: PROJ-42\n").count(), 2, "{out}");
}

/// Issue 8: `check` reports every error of every file, not the first of
/// each: two unknown names per syntax, each with its place, and the
/// warning of a file whose only errors do not stop compiling.
#[test]
fn check_json_lists_every_error_of_every_file() {
    let dir = tempdir("every-error");
    fs::write(dir.join("two.j2"), "{{ x | uper }}\n{{ y | lowr }}").expect("write");
    fs::write(dir.join("two.gotmpl"), "{{ uper .x }}\n{{ lowr .y }}").expect("write");
    fs::write(dir.join("two.hbs"), "{{uper x}}\n{{lowr y}}").expect("write");
    fs::write(
        dir.join("scope.gotmpl"),
        "{{ .issue.title }}\n{{range .items}}{{.issue.title}}{{end}}\n{{ uper .x }}",
    )
    .expect("write");
    let (output, json) = json_output(&dir, &["check", ".", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{json}");
    let errors: Vec<(String, String, i64, i64)> = json["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|error| {
            (
                error["file"].as_str().unwrap_or_default().to_string(),
                error["rule"].as_str().unwrap_or_default().to_string(),
                error["line"].as_i64().unwrap_or_default(),
                error["column"].as_i64().unwrap_or_default(),
            )
        })
        .collect();
    for (file, rule, column) in [
        ("two.j2", "parse/unknown-filter", 8),
        ("two.gotmpl", "parse/unknown-function", 4),
        ("two.hbs", "parse/unknown-helper", 3),
    ] {
        for line in [1, 2] {
            assert!(
                errors.iter().any(|(f, r, l, c)| f.ends_with(file)
                    && r == rule
                    && *l == line
                    && *c == column),
                "{file}:{line}:{column} {rule} missing from {errors:?}"
            );
        }
    }
    assert!(errors.iter().any(|(f, r, l, _)| f.ends_with("scope.gotmpl")
        && r == "parse/unknown-function"
        && *l == 3));
    assert_eq!(errors.len(), 7, "{errors:?}");
    let warnings = json["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|warning| warning["rule"] == "warning/range-scope"
                && warning["file"]
                    .as_str()
                    .is_some_and(|f| f.ends_with("scope.gotmpl"))),
        "{warnings:?}"
    );
}

/// A hostile file of 10,000 unknown function calls reports at most
/// `MAX_ERRORS_PER_FILE` errors and says how many more there were, quickly.
#[test]
fn check_caps_the_errors_of_a_hostile_file() {
    let dir = tempdir("every-error-hostile");
    let body: String = (0..10_000)
        .map(|i| format!("{{{{ nope{i} .x }}}}\n"))
        .collect();
    fs::write(dir.join("many.gotmpl"), body).expect("write");
    let started = std::time::Instant::now();
    let (output, json) = json_output(&dir, &["check", "many.gotmpl", "--format", "json"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(output.status.code(), Some(1));
    let errors = json["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 101, "100 errors and the note");
    let note = errors.last().expect("note");
    assert_eq!(note["rule"], "parse/too-many-errors");
    assert_eq!(
        note["message"],
        "9900 more errors in this file not shown (at most 100 are reported per file)"
    );
    // The text summary counts them all.
    let text_run = teleprompt_in(&dir, &["check", "many.gotmpl"], &[]);
    assert!(
        text(&text_run.stderr).contains("10000 error(s) in 1 file(s)"),
        "{}",
        text(&text_run.stderr)
    );
}

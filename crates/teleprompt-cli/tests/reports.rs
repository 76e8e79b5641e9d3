//! `teleprompt check` reports where a snapshot file (tests/cmd/reports)
//! cannot say it: SARIF checked against the published SARIF 2.1.0 schema,
//! a file name that cannot be checked out everywhere, and a hostile file
//! made at run time. See tests/README.md.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Runs `teleprompt` in `dir` with NO_COLOR / CLICOLOR_FORCE unset.
fn teleprompt_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_teleprompt"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .output()
        .expect("the teleprompt binary runs")
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

/// The folder holding `examples/`, a broken copy of every example's
/// prompt (`upper` misspelled once in each), shared with the snapshots of
/// the JSON and GitHub reports (tests/cmd/reports/broken-examples-*.toml).
fn broken_examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cmd/reports/broken-examples")
}

/// One broken example: the file, the broken text, the rule expected,
/// whether the template is a string inside the file (its lines are not
/// the file's), and whether the prompt's system has `upper` to suggest
/// (Dotprompt's and Semantic Kernel's prompts have their own helpers only).
struct Broken {
    file: &'static str,
    replace: &'static str,
    rule: &'static str,
    message: &'static str,
    embedded: bool,
    suggests: bool,
}

const BROKEN: &[Broken] = &[
    Broken {
        file: "dotprompt/support.prompt",
        replace: "{{uper question}}",
        rule: "parse/unknown-helper",
        message: "there is no helper named \"uper\"",
        embedded: false,
        suggests: false,
    },
    Broken {
        file: "forge/system.hbs",
        replace: "{{uper custom_rules}}",
        rule: "parse/unknown-helper",
        message: "there is no helper named \"uper\"",
        embedded: false,
        suggests: true,
    },
    Broken {
        file: "hf/Qwen3-0.6B/tokenizer_config.json",
        replace: "{{- message.content | uper }}",
        // A chat template's unknown filter fails only the renders that
        // reach it, as in transformers: `check` warns.
        rule: "warning/unknown-filter",
        message: "unknown filter \"uper\": a render that reaches it fails",
        embedded: true,
        suggests: true,
    },
    Broken {
        file: "prompty/support.prompty",
        replace: "{{ question | uper }}",
        rule: "parse/unknown-filter",
        message: "unknown filter \"uper\"",
        embedded: false,
        suggests: true,
    },
    Broken {
        file: "rapida/assistant.j2",
        replace: "{{ name | uper }}",
        rule: "parse/unknown-filter",
        message: "unknown filter \"uper\"",
        embedded: false,
        suggests: true,
    },
    Broken {
        file: "rapida/assistant.django",
        replace: "{{ value|uper }}",
        rule: "parse/unknown-filter",
        message: "unknown filter \"uper\"",
        embedded: false,
        suggests: true,
    },
    Broken {
        file: "semantic-kernel/chat.hbs",
        replace: "{{uper request}}",
        rule: "parse/unknown-helper",
        message: "there is no helper named \"uper\"",
        embedded: false,
        suggests: true,
    },
    Broken {
        file: "semantic-kernel/story.yaml",
        replace: "{{uper topic}}",
        rule: "parse/unknown-helper",
        message: "there is no helper named \"uper\"",
        embedded: true,
        suggests: false,
    },
    Broken {
        file: "sortie/WORKFLOW.md",
        replace: "{{ uper .issue.description }}",
        rule: "parse/unknown-function",
        message: "function \"uper\" not defined",
        embedded: false,
        suggests: true,
    },
];

/// The 1-based line and column of the typo (`uper`) in the broken file.
fn typo_position(broken: &Broken) -> (usize, usize) {
    let source =
        fs::read_to_string(broken_examples().join("examples").join(broken.file)).expect("read");
    let at =
        source.find(broken.replace).expect("injected") + broken.replace.find("uper").expect("typo");
    let before = &source[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.chars().rev().take_while(|c| *c != '\n').count() + 1;
    (line, column)
}

fn json_output(dir: &Path, args: &[&str]) -> (Output, Value) {
    let output = teleprompt_in(dir, args);
    let value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", text(&output.stdout)));
    (output, value)
}

#[test]
fn a_broken_copy_of_each_example_gives_valid_sarif() {
    let dir = broken_examples();
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
    // Qwen3's template drops earlier turns' reasoning by design, which
    // `check` reports on the unbroken example too: one warning beside the
    // typos.
    let append_only = |result: &&Value| result["ruleId"] == "warning/not-append-only";
    let (kept, typos): (Vec<&Value>, Vec<&Value>) = results.iter().partition(append_only);
    assert_eq!(kept.len(), 1, "{sarif:#}");
    assert_eq!(
        kept[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "examples/hf/Qwen3-0.6B/tokenizer_config.json"
    );
    assert_eq!(typos.len(), BROKEN.len(), "{sarif:#}");
    for broken in BROKEN {
        let uri = format!("examples/{}", broken.file);
        let result = typos
            .iter()
            .find(|result| {
                result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    == uri.as_str()
            })
            .unwrap_or_else(|| panic!("no result for {uri}: {sarif:#}"));
        assert_eq!(result["ruleId"], broken.rule, "{result:#}");
        let level = match broken.rule.starts_with("warning/") {
            true => "warning",
            false => "error",
        };
        assert_eq!(result["level"], level, "{result:#}");
        let message = result["message"]["text"].as_str().expect("message");
        assert!(message.starts_with(broken.message), "{message}");
        assert_eq!(
            message.contains("help: did you mean \"upper\"?"),
            broken.suggests,
            "{message}"
        );
        assert_eq!(result["properties"]["labels"]["commit"], "abc123");
        let index = result["ruleIndex"].as_u64().expect("index") as usize;
        assert_eq!(rules[index], broken.rule);
        let region = &result["locations"][0]["physicalLocation"]["region"];
        if broken.embedded {
            assert!(region.is_null(), "{result:#}");
        } else {
            let (line, column) = typo_position(broken);
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
fn warning_and_clean_runs_give_valid_sarif() {
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

    // A clean file: an empty, valid log.
    fs::write(dir.join("ok.j2"), "Hello {{ name }}\n").expect("write");
    let (output, sarif) = json_output(&dir, &["check", "ok.j2", "--format", "sarif"]);
    assert_eq!(output.status.code(), Some(0));
    assert_valid_sarif(&sarif);
    assert_eq!(sarif["runs"][0]["results"], serde_json::json!([]));
}

/// Annotation properties are escaped: a file named `a,b:c.gotmpl`, made
/// here as no checkout on Windows could hold it.
#[test]
fn github_annotations_escape_the_file_name() {
    let dir = tempdir("reports-github-warning");
    fs::write(
        dir.join("a,b:c.gotmpl"),
        "{{ .issue.title }}\n{{ range .items }}{{ .issue.id }}{{ end }}\n",
    )
    .expect("write");
    let output = teleprompt_in(&dir, &["check", "a,b:c.gotmpl", "--format=github"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        text(&output.stdout),
        "::warning file=a%2Cb%3Ac.gotmpl,line=2,col=22,endLine=2,endColumn=30,\
         title=warning/range-scope::.issue.id inside {{range}} reads the current element, \
         not the root data%0Ahelp: did you mean \"$.issue.id\"?\n"
    );
}

#[test]
fn an_unreadable_path_gives_valid_sarif() {
    let dir = tempdir("reports-usage");
    let (output, sarif) = json_output(&dir, &["check", "missing.j2", "--format", "sarif"]);
    assert_eq!(output.status.code(), Some(2));
    assert_valid_sarif(&sarif);
    assert_eq!(sarif["runs"][0]["results"][0]["ruleId"], "io/not-found");
    let rule = &sarif["runs"][0]["tool"]["driver"]["rules"][0];
    assert_eq!(rule["properties"]["code"], "TP0501");
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
    let text_run = teleprompt_in(&dir, &["check", "many.gotmpl"]);
    assert!(
        text(&text_run.stderr).contains("10000 error(s) in 1 file(s)"),
        "{}",
        text(&text_run.stderr)
    );
}

/// Many files with many findings each: every format is one valid document
/// (JSON, SARIF) written as the files are checked, and each file's
/// findings stop at the cap with a count of the rest.
#[test]
fn many_findings_are_capped_per_file_in_every_format() {
    let dir = tempdir("many-findings");
    let errors: String = (0..150)
        .map(|i| format!("{{{{ v{i}|nosuch{i} }}}}\n"))
        .collect();
    // Undeclared reads are warnings at lenient (input.schema declares
    // only `a`).
    let warnings: String = (0..150).map(|i| format!("{{{{ w{i} }}}}\n")).collect();
    for n in 0..3 {
        fs::write(dir.join(format!("e{n}.j2")), &errors).unwrap();
        fs::write(
            dir.join(format!("w{n}.j2")),
            format!("---\nstrict: lenient\ninput:\n  schema:\n    a: string\n---\n{{{{ a }}}}\n{warnings}"),
        )
        .unwrap();
    }
    let (output, json) = json_output(&dir, &["check", ".", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let errors = json["errors"].as_array().unwrap();
    // 100 errors and a note per file.
    assert_eq!(errors.len(), 3 * 101, "{json:#}");
    assert_eq!(json["prompts"], 3);
    assert_eq!(json["valid"], false);
    let warnings = json["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 3 * 101);
    assert!(warnings.iter().any(|w| w["message"]
        .as_str()
        .unwrap()
        .starts_with("50 more warning(s) in this file")));
    let (_, sarif) = json_output(&dir, &["check", ".", "--format", "sarif"]);
    assert_valid_sarif(&sarif);
    assert_eq!(
        sarif["runs"][0]["results"].as_array().unwrap().len(),
        6 * 101
    );
    let output = teleprompt_in(&dir, &["check", ".", "--format", "github"]);
    assert_eq!(text(&output.stdout).lines().count(), 6 * 101);
    let output = teleprompt_in(&dir, &["check", ".", "--color", "never"]);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("\n450 error(s) in 3 file(s); 3 prompt(s) loaded cleanly\n")
            && stderr.ends_with("`.\n"),
        "{}",
        &stderr[stderr.len().saturating_sub(300)..]
    );
}

/// A closed-out input printed at strict or semi fails the check; only
/// tested, or at lenient, it is a warning (issue 29, item 9).
#[test]
fn a_closed_out_input_printed_is_a_check_error_at_strict() {
    let dir = tempdir("closed-misread");
    let prompt = |strict: &str, body: &str| {
        format!("---\nstrict: {strict}\ninput:\n  schema:\n    issue:\n      title: string\n---\n{body}\n")
    };
    fs::write(
        dir.join("printed.j2"),
        prompt("strict", "{{ issue.titel }}"),
    )
    .unwrap();
    fs::write(
        dir.join("semi.gotmpl"),
        prompt("semi", "{{ range .issue.tags }}{{ . }}{{ end }}"),
    )
    .unwrap();
    fs::write(
        dir.join("tested.hbs"),
        prompt("strict", "{{#if issue.urgent}}!{{/if}}"),
    )
    .unwrap();
    fs::write(
        dir.join("lenient.j2"),
        prompt("lenient", "{{ issue.titel }}"),
    )
    .unwrap();
    let (output, json) = json_output(&dir, &["check", ".", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{json:#}");
    let files = |list: &Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|problem| {
                format!(
                    "{} {}",
                    problem["file"].as_str().unwrap(),
                    problem["rule"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(
        files(&json["errors"]),
        [
            "./printed.j2 input/undeclared-input",
            "./semi.gotmpl input/undeclared-input"
        ],
        "{json:#}"
    );
    assert_eq!(
        files(&json["warnings"]),
        [
            "./lenient.j2 warning/undeclared-input",
            "./tested.hbs warning/undeclared-input"
        ],
        "{json:#}"
    );
}

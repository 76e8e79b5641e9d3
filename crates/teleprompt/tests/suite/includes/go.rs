//! Go `{{template "name"}}` of templates in other files of the include
//! root: what may not be read (links out of the root, FIFOs, too many
//! files), where errors in other files are placed, and what `check` and
//! `inspect` see of those files. The ordinary cases are fixtures
//! (`tests/fixtures/go/files_*.txt`).

use std::path::PathBuf;

use serde_json::json;
use teleprompt::{ErrorClass, Library, LoadOptions, Prompt};

use crate::common::{self, at, included_by, render};

fn dir(name: &str, files: &[(&str, &str)]) -> PathBuf {
    common::dir(&format!("go-includes/{name}"), files)
}

#[cfg(unix)]
#[test]
fn links_out_of_the_root_and_fifos_are_not_read() {
    let root = dir(
        "links",
        &[
            (
                "prompts/main.gotmpl",
                "before\n  {{template \"evil.gotmpl\" .}}",
            ),
            ("prompts/inside.gotmpl", "{{template \"alias.gotmpl\" .}}"),
            ("prompts/real.gotmpl", "real {{.x}}"),
            ("prompts/fifo.gotmpl", "{{template \"pipe.gotmpl\" .}}"),
            ("secret.gotmpl", "do not read"),
        ],
    );
    let prompts = root.join("prompts");
    std::os::unix::fs::symlink(root.join("secret.gotmpl"), prompts.join("evil.gotmpl")).unwrap();
    std::os::unix::fs::symlink(prompts.join("real.gotmpl"), prompts.join("alias.gotmpl")).unwrap();
    let error = render(&prompts.join("main.gotmpl"), json!({})).expect_err("link out");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert!(
        error.message().contains("outside the include root"),
        "{error}"
    );
    // Placed at the action that names it.
    assert_eq!(at(&error), ("main.gotmpl".to_string(), 2, 3));
    // A link that stays inside is followed.
    assert_eq!(
        render(&prompts.join("inside.gotmpl"), json!({"x": 1})).unwrap(),
        "real 1"
    );
    // A FIFO is refused, not opened (opening would block).
    let made = std::process::Command::new("mkfifo")
        .arg(prompts.join("pipe.gotmpl"))
        .status();
    if made.is_ok_and(|status| status.success()) {
        let error = render(&prompts.join("fifo.gotmpl"), json!({})).expect_err("fifo");
        assert!(error.message().contains("not a regular file"), "{error}");
        // The scan for a define skips it too, without blocking.
        std::fs::write(prompts.join("scan.gotmpl"), "{{template \"nowhere\" .}}").unwrap();
        let error = render(&prompts.join("scan.gotmpl"), json!({})).expect_err("missing");
        assert_eq!(error.message(), "no such template \"nowhere\"");
    }
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_root_defines_nothing() {
    // The scan for a define does not follow a link out of the root.
    let root = dir(
        "link-scan",
        &[
            ("prompts/main.gotmpl", "{{template \"secret\" .}}"),
            (
                "outside/defs.gotmpl",
                "{{define \"secret\"}}do not read{{end}}",
            ),
        ],
    );
    let prompts = root.join("prompts");
    std::os::unix::fs::symlink(
        root.join("outside/defs.gotmpl"),
        prompts.join("defs.gotmpl"),
    )
    .unwrap();
    let error = render(&prompts.join("main.gotmpl"), json!({})).expect_err("not read");
    assert_eq!(error.message(), "no such template \"secret\"");
}

#[test]
fn more_than_a_thousand_files_are_an_error() {
    // f0 names f1 … f1001, a line each.
    let names: Vec<String> = (0..=1001).map(|i| format!("f{i}.gotmpl")).collect();
    let texts: Vec<String> = (0..=1001)
        .map(|i| match i {
            0 => (1..=1001)
                .map(|n| format!("{{{{template \"f{n}.gotmpl\" .}}}}\n"))
                .collect(),
            _ => String::new(),
        })
        .collect();
    let files: Vec<(&str, &str)> = names
        .iter()
        .zip(&texts)
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    let root = dir("chain", &files);
    let error = render(&root.join("f0.gotmpl"), json!({})).expect_err("too many");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert_eq!(
        error.message(),
        "more than 1000 files are included: the most one prompt may read"
    );
    // Placed where the 1,001st is named.
    assert_eq!(at(&error), ("f0.gotmpl".to_string(), 1001, 1));

    // A root with more than 1,000 Go files is not looked through for a
    // define.
    let mut files: Vec<(String, String)> = (0..1001)
        .map(|i| (format!("d{i:04}.gotmpl"), String::new()))
        .collect();
    files.push(("main.gotmpl".into(), "{{template \"x\" .}}".into()));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    let root = dir("wide", &files);
    let error = render(&root.join("main.gotmpl"), json!({})).expect_err("too many");
    assert!(
        error
            .message()
            .starts_with("the include root holds more than 1000 files that may be Go templates"),
        "{error}"
    );
    assert_eq!(at(&error), ("main.gotmpl".to_string(), 1, 1));
}

#[test]
fn errors_in_nested_files_name_each_place_that_included_them() {
    let root = dir(
        "nested",
        &[
            ("main.gotmpl", "top\n {{template \"a.gotmpl\" .}}"),
            ("a.gotmpl", "a\n\n  {{template \"b.gotmpl\" .}}"),
            ("b.gotmpl", "b {{.issue.titel}}"),
            ("parse.gotmpl", "{{template \"c.gotmpl\" .}}"),
            ("c.gotmpl", "\n{{template \"d.gotmpl\" .}}"),
            ("d.gotmpl", "{{if .x}}"),
        ],
    );
    let error = render(
        &root.join("main.gotmpl"),
        json!({"issue": {"title": "Fix it"}}),
    )
    .expect_err("misspelled");
    assert_eq!(error.class(), ErrorClass::Render);
    assert_eq!(at(&error), ("b.gotmpl".to_string(), 1, 5));
    assert_eq!(error.suggestion(), Some("did you mean \"title\"?"));
    assert_eq!(included_by(&error), ["a.gotmpl:3:3", "main.gotmpl:2:2"]);

    let error = render(&root.join("parse.gotmpl"), json!({})).expect_err("broken");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert_eq!(at(&error), ("d.gotmpl".to_string(), 1, 1));
    assert_eq!(included_by(&error), ["c.gotmpl:2:1", "parse.gotmpl:1:1"]);
}

#[test]
fn a_render_error_names_the_call_that_led_into_the_file() {
    // The define is called from two places; the error names the one the
    // render went through.
    let root = dir(
        "calls",
        &[
            (
                "main.gotmpl",
                "{{template \"row\" .a}}\n{{template \"row\" .b}}",
            ),
            ("rows.gotmpl", "{{define \"row\"}}[{{.name}}]{{end}}"),
        ],
    );
    let error = render(
        &root.join("main.gotmpl"),
        json!({"a": {"name": "x"}, "b": {}}),
    )
    .expect_err("b has no name");
    assert_eq!(at(&error), ("rows.gotmpl".to_string(), 1, 20));
    assert_eq!(included_by(&error), ["main.gotmpl:2:1"]);
}

#[test]
fn what_other_files_read_counts_for_reads_inputs_and_warnings() {
    let root = dir(
        "reads",
        &[
            (
                "main.gotmpl",
                "---\ninput:\n  schema:\n    user: string\n    items(array): {name: string}\n---\n{{.user}}{{template \"rows\" .}}",
            ),
            (
                "rows.gotmpl",
                "{{define \"rows\"}}\n{{range .items}}{{.name}} {{.user}}{{end}}{{.persona}}{{end}}",
            ),
        ],
    );
    let prompt = Prompt::from_file(root.join("main.gotmpl")).expect("loads");
    // Only the other file reads `persona`: a data file must keep it.
    assert!(prompt.reads("persona"));
    let inputs = prompt.inputs().expect("parses");
    let names: Vec<&str> = inputs.names().collect();
    assert_eq!(names, ["items", "persona", "user"]);
    let warnings = prompt.warnings();
    let found: Vec<(String, usize, usize, Option<&'static str>)> = warnings
        .iter()
        .map(|warning| {
            let (file, line, column) = at(warning);
            (file, line, column, warning.kind())
        })
        .collect();
    // `.user` inside `range` (the element's, not the root's), which
    // input.schema does not declare for an element of `items`, and
    // `.persona`, which it does not declare at all.
    let rows = |line, column, kind| ("rows.gotmpl".to_string(), line, column, Some(kind));
    assert_eq!(
        found,
        [
            rows(2, 29, "range-scope"),
            rows(2, 29, "undeclared-input"),
            rows(2, 45, "undeclared-input")
        ]
    );
    // Both are printed, and Picoschema closes what it declares: at Go's
    // default strictness, errors of `check` (class input).
    let classes: Vec<ErrorClass> = warnings.iter().map(|warning| warning.class()).collect();
    assert_eq!(
        classes,
        [ErrorClass::Warning, ErrorClass::Input, ErrorClass::Input]
    );
}

#[test]
fn a_library_shares_defines_across_its_prompts() {
    let root = dir(
        "library",
        &[
            (
                "tasks/fix.md",
                "---\nsyntax: go\n---\n{{template \"persona\" .}} fixes {{.issue}}",
            ),
            (
                "tasks/review.md",
                "---\nsyntax: go\n---\n{{template \"persona\" .}} reviews {{.issue}}",
            ),
            (
                "common.md",
                "---\nname: common\nsyntax: go\n---\n{{define \"persona\"}}Sortie{{end}}",
            ),
        ],
    );
    let library = Library::load_dir(&root, &LoadOptions::default()).expect("loads");
    let fix = library.get("fix").expect("loaded");
    assert_eq!(
        fix.render(json!({"issue": "ABC-1"})).unwrap().text(),
        "Sortie fixes ABC-1"
    );
    let review = library.get("review").expect("loaded");
    assert_eq!(
        review.render(json!({"issue": "ABC-2"})).unwrap().text(),
        "Sortie reviews ABC-2"
    );
}

#[test]
fn from_source_reads_files_only_from_an_include_root() {
    let root = dir("source", &[("persona.gotmpl", "I am {{.name}}")]);
    let body = "---\nsyntax: go\n---\n{{template \"persona.gotmpl\" .}}";
    let error = Prompt::from_source("inline.md", body, &LoadOptions::default())
        .expect_err("no root, no files");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert_eq!(error.message(), "no such template \"persona.gotmpl\"");
    let options = LoadOptions::new().with_include_root(root);
    let prompt = Prompt::from_source("inline.md", body, &options).expect("loads");
    assert_eq!(
        prompt.render(json!({"name": "Ann"})).unwrap().text(),
        "I am Ann"
    );
}

#[test]
fn files_the_scan_cannot_use_are_skipped() {
    let root = dir(
        "skipped",
        &[
            ("main.gotmpl", "{{template \"persona\" .}}"),
            ("z.gotmpl", "{{define \"persona\"}}found{{end}}"),
            // Ignored, as a library ignores it.
            (".gitignore", "ignored/\n"),
            ("ignored/p.gotmpl", "{{define \"persona\"}}ignored{{end}}"),
            (
                "README.md",
                "# notes\n\n{{define \"persona\"}}not Go{{end}}",
            ),
        ],
    );
    std::fs::write(
        root.join("binary.gotmpl"),
        b"{{define \"persona\"}}\xff{{end}}",
    )
    .unwrap();
    assert_eq!(
        render(&root.join("main.gotmpl"), json!({})).unwrap(),
        "found"
    );
}

#[test]
fn the_prompt_and_its_files_share_the_template_size_limit() {
    let big = "x".repeat(300);
    let root = dir(
        "size",
        &[
            (
                "main.gotmpl",
                "{{template \"a.gotmpl\" .}}{{template \"b.gotmpl\" .}}",
            ),
            ("a.gotmpl", &big),
            ("b.gotmpl", &big),
        ],
    );
    let options = LoadOptions::new().with_limits(teleprompt::limits::Limits {
        max_template_bytes: 512,
        ..Default::default()
    });
    let error = Prompt::from_file_with(root.join("main.gotmpl"), &options).expect_err("too big");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert_eq!(
        error.message(),
        "with b.gotmpl the prompt and the files it includes hold 650 bytes, more than 512 (the limit max_template_bytes)"
    );
}

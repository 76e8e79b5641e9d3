//! Declared inputs (`input.schema`) through the library's render paths:
//! a turn's context namespaces are not inputs, a turn's errors carry its
//! labels, the Dotprompt example's schema is enforced, and a data file
//! keeps the declared inputs the template does not read.

use serde_json::json;
use teleprompt::context::{Clock, Namespace};
use teleprompt::{ErrorClass, LoadOptions, Prompt, PromptContext};

fn prompt(source: &str) -> Prompt {
    Prompt::from_source("task.md", source, &LoadOptions::default()).unwrap()
}

const TASK: &str = "---\nsyntax: jinja\ninput:\n  schema:\n    issue:\n      title: string\n---\n\
{{ issue.title }} at {{ system.current_date }} by {{ assistant.name }}";

#[test]
fn a_turn_checks_its_args_and_not_the_context_namespaces() {
    let prompt = prompt(TASK);
    let context = PromptContext::new()
        .clock(Clock::Fixed("2026-01-02T03:04:05Z".parse().unwrap()))
        .namespace(Namespace::Assistant, json!({"name": "Ava"}))
        .unwrap()
        .args(json!({"issue": {"title": "Fix login"}}))
        .unwrap();
    let rendered = prompt.render_turn(&context).unwrap();
    assert_eq!(rendered.text(), "Fix login at 2026-01-02 by Ava");

    let context = PromptContext::new()
        .args(json!({"issue": {"title": 5}}))
        .unwrap()
        .label("issue", "ABC-1");
    let error = prompt.render_turn(&context).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Input);
    assert_eq!(
        error.message(),
        "the data does not fit the prompt's declared inputs (`input.schema`):\n  \
         issue.title: expected string, found 5"
    );
    assert_eq!(error.location().map(|at| at.line), Some(3));
    assert_eq!(
        error.labels(),
        &[("issue".to_string(), "ABC-1".to_string())]
    );
}

#[test]
fn the_dotprompt_example_enforces_its_schema() {
    let Some(path) = crate::common::repository_file("examples/dotprompt/support.prompt") else {
        return;
    };
    let prompt = Prompt::from_file(path).unwrap();
    let schema = prompt
        .input_schema()
        .expect("support.prompt declares its inputs");
    assert!(schema.is_picoschema());
    let error = prompt.render(json!({"customer": "Ada"})).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Input);
    assert!(
        error
            .message()
            .ends_with("\n  question: missing (declared string)"),
        "{}",
        error.message()
    );
    let error = prompt
        .render(json!({"customer": "Ada", "question": "Why?", "product": 7}))
        .unwrap_err();
    assert!(
        error
            .message()
            .ends_with("\n  product: expected string or null, found 7"),
        "{}",
        error.message()
    );
}

#[test]
fn declared_inputs_are_kept_when_a_data_file_is_read() {
    let prompt = prompt(
        "---\nsyntax: jinja\ninput:\n  schema:\n    name: string\n    unused: integer\n---\n{{ name }}",
    );
    assert!(prompt.reads("unused"));
    assert!(!prompt.reads("other"));
    let error = prompt.render(json!({"name": "Ada"})).unwrap_err();
    assert!(error
        .message()
        .ends_with("unused: missing (declared integer)"));
}

#[test]
fn a_flood_of_violations_gives_a_short_error() {
    let prompt =
        prompt("---\nsyntax: jinja\ninput:\n  schema:\n    ids(array): integer\n---\n{{ ids }}");
    let ids: Vec<String> = (0..100_000).map(|i| i.to_string()).collect();
    let error = prompt.render(json!({ "ids": ids })).unwrap_err();
    let lines: Vec<&str> = error.message().lines().collect();
    assert_eq!(lines.len(), 1 + 50 + 1, "{}", error.message());
    assert_eq!(lines[1], "  ids[0]: expected integer, found \"0\"");
    assert_eq!(lines[51], "  … and more (the first 50 are shown)");
}

#[test]
fn schemas_never_reach_outside_the_file() {
    for reference in [
        "https://example.com/person.json",
        "file:///etc/passwd",
        "other.json",
    ] {
        let source = format!(
            "---\nsyntax: jinja\ninput:\n  schema:\n    type: object\n    properties:\n      p: {{$ref: \"{reference}\"}}\n---\n{{{{ p }}}}"
        );
        let error = Prompt::from_source("task.md", &source, &LoadOptions::default()).unwrap_err();
        assert_eq!(error.class(), ErrorClass::Document, "{reference}: {error}");
        assert!(
            error
                .message()
                .starts_with("`input.schema` is not a valid JSON Schema"),
            "{reference}: {error}"
        );
    }
}

#[test]
fn each_input_is_checked_with_the_shared_definitions() {
    // No keyword beyond `properties` at the top: each input on its own,
    // with the top level's `$defs`.
    let prompt = prompt(
        "---\nsyntax: jinja\ninput:\n  schema:\n    $defs:\n      person:\n        type: object\n        properties: {name: {type: string}}\n        additionalProperties: false\n    properties:\n      author: {$ref: \"#/$defs/person\"}\n---\n{{ author.name }}",
    );
    assert_eq!(
        prompt
            .render(json!({"author": {"name": "Ada"}}))
            .unwrap()
            .text(),
        "Ada"
    );
    let error = prompt
        .render(json!({"author": {"nmae": "Ada"}}))
        .unwrap_err();
    assert!(
        error
            .message()
            .ends_with("\n  author.nmae: not declared: did you mean \"author.name\"?"),
        "{}",
        error.message()
    );
}

#[test]
fn a_misspelled_optional_input_is_a_warning() {
    let prompt = prompt(
        "---\nsyntax: jinja\ninput:\n  schema:\n    name: string\n    tone?: string\n---\n{{ name }}{% if tone %} ({{ tone }}){% endif %}",
    );
    let rendered = prompt
        .render(json!({"name": "Ada", "tnoe": "dry", "ticket": 1}))
        .unwrap();
    assert_eq!(rendered.text(), "Ada");
    assert_eq!(
        rendered.warnings(),
        &[
            "the data has \"tnoe\", which the prompt does not declare, and lacks the optional \
           input \"tone\": did you mean \"tone\"?"
                .to_string()
        ]
    );
    let rendered = prompt
        .render(json!({"name": "Ada", "tone": "dry"}))
        .unwrap();
    assert_eq!(rendered.text(), "Ada (dry)");
    assert!(rendered.warnings().is_empty());
}

/// A schema whose `pattern` needs backtracking (a lookaround, a
/// backreference) is refused at load: on a long string it could run for
/// minutes. What a linear-time engine can match is matched in linear time.
#[test]
fn schema_patterns_run_in_linear_time_or_are_refused() {
    for pattern in ["(?=.*z)(a|b)*c", "(a)\\\\1", "(?<!x)a"] {
        let source = format!(
            "---\nsyntax: jinja\ninput:\n  schema:\n    type: object\n    properties:\n      p: {{type: string, pattern: \"{pattern}\"}}\n---\n{{{{ p }}}}"
        );
        let error = Prompt::from_source("task.md", &source, &LoadOptions::default()).unwrap_err();
        assert_eq!(error.class(), ErrorClass::Document, "{pattern}: {error}");
        assert!(
            error
                .message()
                .contains("is not a pattern teleprompt can run"),
            "{pattern}: {}",
            error.message()
        );
    }
    let prompt = prompt(
        "---\nsyntax: jinja\ninput:\n  schema:\n    type: object\n    properties:\n      p: {type: string, pattern: \"^(a|b)*c$\"}\n---\n{{ p | length }}",
    );
    let long = "ab".repeat(1 << 20);
    let started = std::time::Instant::now();
    let error = prompt.render(json!({ "p": long })).unwrap_err();
    assert!(error.message().contains("p: "), "{}", error.message());
    let rendered = prompt.render(json!({ "p": format!("{long}c") })).unwrap();
    assert_eq!(rendered.text(), ((2 << 20) + 1).to_string());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// 300 `anyOf` branches over 30,000 items that fit none: the check stays
/// small and quick, and says it shows only the first mismatch.
#[test]
fn a_wide_any_of_over_many_items_is_checked_in_bounded_memory() {
    let branches: Vec<serde_json::Value> = (0..300)
        .map(|i| json!({"const": format!("v{i}")}))
        .collect();
    let schema = json!({"type": "object", "properties": {"items": {"type": "array", "items": {"anyOf": branches}}}});
    let source =
        format!("---\nsyntax: jinja\ninput:\n  schema: {schema}\n---\n{{{{ items | length }}}}");
    let prompt = prompt(&source);
    let started = std::time::Instant::now();
    let error = prompt
        .render(json!({ "items": vec!["x"; 30_000] }))
        .unwrap_err();
    let lines: Vec<&str> = error.message().lines().collect();
    assert_eq!(lines.len(), 3, "{}", error.message());
    assert!(lines[1].starts_with("  items[0]: "), "{}", lines[1]);
    assert!(
        lines[2].contains("only the first mismatch is shown"),
        "{}",
        lines[2]
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // Valid data is checked as quickly.
    let rendered = prompt
        .render(json!({ "items": vec!["v7"; 30_000] }))
        .unwrap();
    assert_eq!(rendered.text(), "30000");
}

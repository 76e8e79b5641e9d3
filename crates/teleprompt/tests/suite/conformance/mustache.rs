//! Runs the mustache spec (its JSON files, at `../shared/conformance/mustache`
//! from the workspace root, or `TELEPROMPT_CONFORMANCE`; see
//! `conformance::data_dir`) against the Handlebars syntax, as handlebars.js
//! runs it. A clone without the data passes.
//!
//! Skipped, with the count of each reason printed per file: the optional
//! modules Handlebars does not have (`~lambdas`, code in other languages;
//! `~dynamic-names`, `{{>*name}}`; `~inheritance`, `{{<parent}}{{$block}}`),
//! cases that change the delimiters (`{{=<% %>=}}`: Handlebars has no such
//! tag, and handlebars.js skips them too), and expected outputs that depend
//! on HTML escaping (teleprompt never escapes).
//!
//! Cases run lenient, as mustache renders a missing name. Given partials
//! become inline partials before the template, each definition on lines of
//! its own so that the template's first line keeps its standalone tags.
//! [`DIFFERENCES`] lists the cases where Handlebars (teleprompt and
//! handlebars.js alike) differs from mustache on purpose: they are counted
//! apart, not as failures.

use super::Outcome;
use serde_json::Value;
use teleprompt::Strictness;

/// Passes reached per file; a regression below these fails the test.
const FLOORS: &[(&str, usize)] = &[
    ("comments.json", 11),
    ("interpolation.json", 40),
    ("inverted.json", 21),
    ("partials.json", 9),
    ("sections.json", 28),
];

const CRLF: &str = "a prompt's CRLF line endings become LF when it is read (in every syntax)";
const STACK: &str = "a Handlebars name is looked up in the current context only; mustache's walk up the context stack is handlebars.js's compat option, which teleprompt does not have";

/// Cases where teleprompt differs from mustache on purpose: (file, test
/// name, why).
const DIFFERENCES: &[(&str, &str, &str)] = &[
    ("comments.json", "Standalone Line Endings", CRLF),
    ("inverted.json", "Standalone Line Endings", CRLF),
    ("partials.json", "Standalone Line Endings", CRLF),
    ("sections.json", "Standalone Line Endings", CRLF),
    (
        "partials.json",
        "Failed Lookup",
        "an unknown partial is an error, as in handlebars.js (which skips this case)",
    ),
    (
        "partials.json",
        "Standalone Indentation",
        "a standalone partial indents every line it prints, interpolated ones too, as handlebars.js does (which skips this case)",
    ),
    ("sections.json", "Parent contexts", STACK),
    ("sections.json", "Variable test", STACK),
    ("sections.json", "List Contexts", STACK),
    ("sections.json", "Deeply Nested Contexts", STACK),
];

/// Runs one case.
fn run(case: &Value, file: &str) -> Outcome {
    let (Some(template), Some(expected)) = (
        case.get("template").and_then(Value::as_str),
        case.get("expected").and_then(Value::as_str),
    ) else {
        return Outcome::Skipped("no template or expected output");
    };
    let Some(partials) = super::inline_partials(case.get("partials")) else {
        return Outcome::Skipped("a partial that is not a string");
    };
    if template.contains("{{=") || partials.contains("{{=") {
        return Outcome::Skipped("changed delimiters");
    }
    if super::escaped(expected) {
        return Outcome::Skipped("HTML escaping");
    }
    let name = case.get("name").and_then(Value::as_str).unwrap_or("");
    let data = case.get("data").cloned().unwrap_or(Value::Null);
    let result = super::render(&format!("{partials}{template}"), data, Strictness::Lenient);
    let passed = result.as_deref() == Ok(expected);
    match DIFFERENCES
        .iter()
        .find(|(f, n, _)| *f == file && *n == name)
    {
        Some(_) if passed => Outcome::Stale,
        Some((_, _, why)) => Outcome::Differs(why),
        None if passed => Outcome::Passed,
        None => Outcome::Failed(format!("{result:?} (expected {expected:?})")),
    }
}

/// Why a whole file is skipped, if it is.
fn file_skip(file: &str) -> Option<&'static str> {
    match file {
        "~lambdas.json" => Some("lambdas (code in other languages)"),
        "~dynamic-names.json" => Some("the optional dynamic names module ({{>*name}})"),
        "~inheritance.json" => Some("the optional inheritance module ({{<parent}}{{$block}})"),
        _ => None,
    }
}

#[test]
fn mustache_spec() {
    let Some(files) = super::files("mustache") else {
        return;
    };
    let mut failures = Vec::new();
    for (file, spec) in &files {
        let file = file.as_str();
        let cases = spec
            .get("tests")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(reason) = file_skip(file) {
            println!("{file}: skipped ({} cases: {reason})", cases.len());
            continue;
        }
        let floor = FLOORS.iter().find(|(name, _)| *name == file);
        super::report(
            file,
            &cases,
            |case| format!("{}: {:?}", case["name"], case["template"]),
            |case| run(case, file),
            floor.map(|(_, floor)| *floor),
            &mut failures,
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

//! Runs handlebars.js's spec (as JSON, from the handlebars-spec project) when
//! it is present next to the repository, at `../shared/conformance/handlebars`
//! from the workspace root. A clone without it passes.
//!
//! Skipped cases: those that need JavaScript helpers or decorators, compile or
//! runtime options, AST/token dumps (`parser.json` and `tokenizer.json`
//! expected outputs, except their expected exceptions), and those whose
//! expected output depends on HTML escaping (teleprompt never escapes). Given
//! partials are prepended as inline partials. Cases that expect an exception
//! pass when compiling or rendering fails.

use std::fs;
use std::path::Path;

use serde_json::Value;
use teleprompt::{LoadOptions, Prompt, Strictness, Syntax};

/// Passes reached per file; a regression below these fails the test.
const FLOORS: &[(&str, usize)] = &[
    ("basic.json", 65),
    ("blocks.json", 24),
    ("builtins.json", 14),
    ("data.json", 2),
    ("helpers.json", 2),
    ("parser.json", 14),
    ("partials.json", 46),
    ("whitespace-control.json", 33),
];

fn escaped(expected: &str) -> bool {
    [
        "&amp;", "&lt;", "&gt;", "&quot;", "&#x27;", "&#x60;", "&#x3D;",
    ]
    .iter()
    .any(|entity| expected.contains(entity))
}

/// Runs one case: `None` when skipped, else whether it passed.
fn run(case: &Value, file: &str) -> Option<(bool, String)> {
    let template = case.get("template")?.as_str()?;
    for key in ["helpers", "decorators", "compileOptions", "runtimeOptions"] {
        if case.get(key).is_some_and(|v| !v.is_null()) {
            return None;
        }
    }
    let exception = case
        .get("exception")
        .is_some_and(|e| !e.is_null() && e != false);
    let expected = case.get("expected").and_then(Value::as_str);
    if !exception && (file == "parser.json" || file == "tokenizer.json") {
        return None;
    }
    if expected.is_some_and(escaped) {
        return None;
    }
    let mut body = String::new();
    if let Some(partials) = case.get("partials").and_then(Value::as_object) {
        for (name, partial) in partials {
            body.push_str(&format!(
                "{{{{#*inline \"{name}\"}}}}{}{{{{/inline}}}}",
                partial.as_str()?
            ));
        }
    }
    body.push_str(template);
    let data = case.get("data").cloned().unwrap_or(Value::Null);
    let result = render(&body, data);
    let passed = match (&result, exception, expected) {
        (Err(_), true, _) => true,
        (Ok(out), false, Some(want)) => out == want,
        _ => false,
    };
    Some((passed, format!("{result:?} (expected {expected:?})")))
}

/// Renders a case through the public API, lenient as handlebars.js is.
fn render(body: &str, data: Value) -> Result<String, String> {
    let options = LoadOptions {
        syntax: Some(Syntax::Handlebars),
        strict: Some(Strictness::Lenient),
        ..LoadOptions::default()
    };
    // An empty front matter keeps a body that starts with `---` a body.
    let source = format!("---\n---\n{body}");
    let prompt = Prompt::from_source("case.hbs", &source, &options)
        .map_err(|error| error.message().to_string())?;
    prompt
        .render(data)
        .map(|rendered| rendered.into_text())
        .map_err(|error| error.message().to_string())
}

#[test]
fn handlebars_spec() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/handlebars");
    let Ok(entries) = fs::read_dir(&dir) else {
        println!("no conformance data at {}: skipped", dir.display());
        return;
    };
    let mut files: Vec<_> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    files.sort();
    let verbose = std::env::var_os("HBS_VERBOSE").is_some();
    let mut failures = Vec::new();
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let file = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text = fs::read_to_string(path).expect("readable conformance file");
        let cases: Vec<Value> = serde_json::from_str(&text).expect("a list of cases");
        let (mut passed, mut ran) = (0, 0);
        for case in &cases {
            let Some((ok, detail)) = run(case, &file) else {
                continue;
            };
            ran += 1;
            if ok {
                passed += 1;
            } else if verbose {
                println!(
                    "FAIL {file} {} / {}: {:?}\n  {detail}",
                    case["description"], case["it"], case["template"]
                );
            }
        }
        println!(
            "{file}: {passed} of {ran} run passed ({} cases, {} skipped)",
            cases.len(),
            cases.len() - ran
        );
        if let Some((_, floor)) = FLOORS.iter().find(|(name, _)| *name == file) {
            if passed < *floor {
                failures.push(format!("{file}: {passed} passed, the floor is {floor}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

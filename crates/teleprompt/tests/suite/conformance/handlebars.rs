//! Runs handlebars.js's spec (as JSON, from the handlebars-spec project) when
//! it is present next to the repository, at `../shared/conformance/handlebars`
//! from the workspace root (or `TELEPROMPT_CONFORMANCE`; see
//! `conformance::data_dir`). A clone without it passes.
//!
//! Every case runs that needs no JavaScript and no HTML escaping. Skipped,
//! with the count of each reason printed per file:
//!
//! - cases that need JavaScript: helpers or decorators given as JavaScript
//!   source, and data, partials or options holding a JavaScript function (an
//!   object with a `"!code"` key);
//! - expected outputs that depend on HTML escaping (teleprompt never escapes);
//! - AST and token dumps (`parser.json` and `tokenizer.json`, except their
//!   expected exceptions);
//! - compile and runtime options teleprompt has no setting for (see
//!   [`option_skip`]). The options it honours: `strict: true` (strictness
//!   `strict`), `knownHelpersOnly` (teleprompt resolves every helper at
//!   load time anyway), `noEscape` (it never escapes), `data: false` when
//!   the case reads no `@` variable, and runtime `data` that is empty.
//!
//! Cases run lenient, as handlebars.js renders (strict when the case asks).
//! Given partials become inline partials before the template, each
//! definition on lines of its own so that the template's first line keeps its
//! standalone tags. Cases that expect an exception pass when compiling or
//! rendering fails. [`DIFFERENCES`] lists the cases where teleprompt differs
//! on purpose: they are counted apart, not as failures.

use super::Outcome;
use serde_json::Value;
use teleprompt::Strictness;

/// Passes reached per file; a regression below these fails the test.
const FLOORS: &[(&str, usize)] = &[
    ("basic.json", 65),
    ("blocks.json", 26),
    ("builtins.json", 13),
    ("data.json", 3),
    ("helpers.json", 2),
    ("parser.json", 14),
    ("partials.json", 49),
    ("strict.json", 13),
    ("whitespace-control.json", 33),
];

/// Cases where teleprompt differs from handlebars.js on purpose: (file,
/// template, compiled strict, why).
const DIFFERENCES: &[(&str, &str, bool, &str)] = &[
    (
        "basic.json",
        "{{#unless foo}}Goodbye{{../test}}{{test2}}{{/unless}}",
        false,
        "`../` above the outermost context is a load error at the path (handlebars.js prints nothing)",
    ),
    (
        "strict.json",
        "{{#unless foo}}success{{/unless}}",
        true,
        "at strictness `strict`, testing a missing value is an error (handlebars.js's strict mode lets a helper's argument be missing)",
    ),
];

/// Whether `value` holds a JavaScript function (`{"!code": true, …}`).
fn has_code(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("!code") || map.values().any(has_code),
        Value::Array(items) => items.iter().any(has_code),
        _ => false,
    }
}

/// Why a case's options cannot run, or `None` when teleprompt honours them
/// all. `reads_data`: the template or a partial uses an `@` variable.
fn option_skip(case: &Value, reads_data: bool) -> Option<&'static str> {
    let compile = case.get("compileOptions").and_then(Value::as_object);
    for (key, value) in compile.into_iter().flatten() {
        match key.as_str() {
            "strict" | "knownHelpersOnly" | "knownHelpers" | "noEscape" => {}
            "data" if value == true || !reads_data => {}
            "data" => return Some("option data: false (@ variables are always on)"),
            "compat" => return Some("option compat (mustache's lookup up the context stack)"),
            "assumeObjects" => {
                return Some(
                    "option assumeObjects (no strictness level fails on a missing parent only)",
                )
            }
            "preventIndent" => {
                return Some("option preventIndent (standalone partials always indent)")
            }
            "explicitPartialContext" => {
                return Some(
                    "option explicitPartialContext (a partial always gets the current context)",
                )
            }
            "ignoreStandalone" => {
                return Some("option ignoreStandalone (standalone lines always go)")
            }
            _ => return Some("other compile options"),
        }
    }
    let runtime = case.get("runtimeOptions").and_then(Value::as_object);
    for (key, value) in runtime.into_iter().flatten() {
        match (key.as_str(), value) {
            ("data", Value::Bool(false)) => {}
            ("data", Value::Object(map)) if map.is_empty() => {}
            ("data", _) => return Some("runtime data (@ variables given by the host)"),
            _ => return Some("other runtime options"),
        }
    }
    None
}

/// Runs one case.
fn run(case: &Value, file: &str) -> Outcome {
    let Some(template) = case.get("template").and_then(Value::as_str) else {
        return Outcome::Skipped("no template");
    };
    for key in ["helpers", "decorators"] {
        if case.get(key).is_some_and(|v| !v.is_null()) {
            return Outcome::Skipped("JavaScript helpers or decorators");
        }
    }
    if ["data", "partials", "compileOptions", "runtimeOptions"]
        .iter()
        .any(|key| case.get(*key).is_some_and(has_code))
    {
        return Outcome::Skipped("JavaScript functions in the data");
    }
    let exception = case
        .get("exception")
        .is_some_and(|e| !e.is_null() && e != false);
    let expected = case.get("expected").and_then(Value::as_str);
    if !exception && (file == "parser.json" || file == "tokenizer.json") {
        return Outcome::Skipped("AST or token dumps");
    }
    if expected.is_some_and(super::escaped) {
        return Outcome::Skipped("HTML escaping");
    }
    let Some(partials) = super::inline_partials(case.get("partials")) else {
        return Outcome::Skipped("a partial that is not a string");
    };
    if let Some(reason) = option_skip(case, template.contains('@') || partials.contains('@')) {
        return Outcome::Skipped(reason);
    }
    let strict = case
        .get("compileOptions")
        .and_then(|options| options.get("strict"))
        == Some(&Value::Bool(true));
    // Lenient as handlebars.js renders, strict when the case asks.
    let strictness = match strict {
        true => Strictness::Strict,
        false => Strictness::Lenient,
    };
    let data = case.get("data").cloned().unwrap_or(Value::Null);
    let result = super::render(&format!("{partials}{template}"), data, strictness);
    let passed = match (&result, exception, expected) {
        (Err(_), true, _) => true,
        (Ok(out), false, Some(want)) => out == want,
        _ => false,
    };
    match DIFFERENCES
        .iter()
        .find(|(f, t, s, _)| *f == file && *t == template && *s == strict)
    {
        Some(_) if passed => Outcome::Stale,
        Some((_, _, _, why)) => Outcome::Differs(why),
        None if passed => Outcome::Passed,
        None => Outcome::Failed(format!("{result:?} (expected {expected:?})")),
    }
}

#[test]
fn handlebars_spec() {
    let Some(files) = super::files("handlebars") else {
        return;
    };
    let mut failures = Vec::new();
    for (file, json) in &files {
        let file = file.as_str();
        let cases: Vec<Value> = json.as_array().cloned().expect("a list of cases");
        let floor = FLOORS.iter().find(|(name, _)| *name == file);
        super::report(
            file,
            &cases,
            |case| {
                format!(
                    "{} / {}: {:?}",
                    case["description"], case["it"], case["template"]
                )
            },
            |case| run(case, file),
            floor.map(|(_, floor)| *floor),
            &mut failures,
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

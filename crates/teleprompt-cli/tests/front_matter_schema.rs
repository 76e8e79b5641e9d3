//! `schemas/front-matter.schema.json`, the JSON Schema of teleprompt's
//! front matter for editors, holds to what teleprompt reads: it names
//! every key teleprompt knows, every example's and fixture's front matter
//! is valid against it, and the mistakes teleprompt refuses are invalid.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use teleprompt::document::{key, Document};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("schemas/front-matter.schema.json"))
        .expect("the schema file");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}

/// The front matter of every prompt file under `dir` that has one, and of
/// every fixture's `=== prompt` section but those whose case is the
/// `document` error teleprompt gives for that front matter.
fn front_matters(dir: &Path, out: &mut Vec<(String, serde_json::Map<String, Value>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            front_matters(&path, out);
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let origin = path.display().to_string();
        // A fixture file holds its prompt in a section; one that expects
        // document errors holds invalid front matter on purpose.
        if text.contains("\n=== error\ndocument")
            || (text.contains("\n=== errors\n") && text.contains(" document/front-matter"))
        {
            continue;
        }
        let source = match text.split_once("=== prompt") {
            Some((_, rest)) if origin.contains("fixtures") => {
                let rest = rest.split_once('\n').map_or("", |(_, body)| body);
                rest.split("\n=== ").next().unwrap_or_default().to_string()
            }
            _ => text,
        };
        if !source.starts_with("---") {
            continue;
        }
        if let Ok(document) = Document::parse(&origin, &source) {
            if !document.front_matter.is_empty() {
                out.push((origin, document.front_matter));
            }
        }
    }
}

#[test]
fn the_schema_names_every_key_teleprompt_reads() {
    let text = std::fs::read_to_string(root().join("schemas/front-matter.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let mut named: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    named.sort_unstable();
    let mut known = key::ALL.to_vec();
    known.sort_unstable();
    assert_eq!(named, known);
    let limits: Vec<&str> = schema["properties"]["limits"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(limits, teleprompt::limits::RENDER_LIMITS);
}

#[test]
fn every_example_and_fixture_front_matter_is_valid() {
    let validator = validator();
    let mut found = Vec::new();
    front_matters(&root().join("examples"), &mut found);
    front_matters(&root().join("crates/teleprompt/tests/fixtures"), &mut found);
    assert!(
        found.len() >= 20,
        "only {} front matters found",
        found.len()
    );
    let mut invalid = Vec::new();
    for (origin, front_matter) in &found {
        let instance = Value::Object(front_matter.clone());
        for error in validator.iter_errors(&instance) {
            invalid.push(format!("{origin}: {error} at {}", error.instance_path()));
        }
    }
    assert!(invalid.is_empty(), "{}", invalid.join("\n"));
}

#[test]
fn mistakes_teleprompt_refuses_are_invalid() {
    let validator = validator();
    for bad in [
        json!({"syntax": "mustache"}),
        json!({"strict": true}),
        json!({"on_error": "ignore"}),
        json!({"jinja": {"trim_block": true}}),
        json!({"limits": {"max_output": "lots"}}),
        json!({"limits": {"max_stepz": 1}}),
        json!({"input": {"defaults": {}}}),
        json!({"default_role": "narrator"}),
    ] {
        assert!(!validator.is_valid(&bad), "{bad} should be invalid");
    }
    for good in [
        json!({"name": "x", "syntax": "go", "strict": "semi", "limits": {"max_output": "1 MiB", "max_steps": 1000}}),
        json!({"model": "gemini", "tracker": {"kind": "linear"}}),
    ] {
        assert!(validator.is_valid(&good), "{good} should be valid");
    }
}

//! Host functions through the public API: a host registers functions in
//! `LoadOptions.functions`, and templates call them by name.

use serde_json::{json, Value};
use teleprompt::functions::Functions;
use teleprompt::{ErrorClass, LoadOptions, Location, Prompt, Strictness, Syntax};

/// A tracker lookup (`fetch`), a string function (`shout`) and one that
/// always fails (`offline`).
fn functions() -> Functions {
    Functions::new()
        .with("fetch", |args: &[Value]| match args {
            [Value::String(id)] if id.starts_with("ABC-") => Ok(json!({
                "identifier": id,
                "title": "Fix login",
                "labels": ["bug", "auth"],
                "blocked_by": [{"identifier": "ABC-2", "state": "open"}],
                "parent": null,
            })),
            [Value::String(id)] => Err(format!("no issue {id}")),
            _ => Err("fetch takes one issue identifier".to_string()),
        })
        .with("shout", |args: &[Value]| {
            let text = args
                .last()
                .and_then(Value::as_str)
                .ok_or("shout takes a string")?;
            Ok(json!(format!("{}!", text.to_uppercase())))
        })
        .with("offline", |_: &[Value]| {
            Err("the tracker is unreachable".to_string())
        })
}

mod go {
    use super::*;

    fn load(source: &str) -> Result<Prompt, teleprompt::Error> {
        Prompt::from_source(
            "p.gotmpl",
            source,
            &LoadOptions {
                syntax: Some(Syntax::Go),
                functions: functions(),
                ..Default::default()
            },
        )
    }

    fn render(source: &str, data: Value) -> String {
        load(source)
            .and_then(|prompt| prompt.render(data))
            .unwrap_or_else(|e| panic!("{source}: {}", e.report()))
            .into_text()
    }

    #[test]
    fn called_by_name_and_in_pipelines() {
        let data = json!({"id": "ABC-1", "name": "ann"});
        assert_eq!(render("{{ shout .name }}", data.clone()), "ANN!");
        assert_eq!(render("{{ .name | shout }}", data.clone()), "ANN!");
        assert_eq!(render("{{ shout \"x\" .name | lower }}", data), "ann!");
    }

    #[test]
    fn results_are_read_like_data() {
        let source = "\
{{- $issue := fetch .id -}}
{{ $issue.identifier }}: {{ $issue.title }}
Labels: {{ $issue.labels | join \", \" }}
{{ range $issue.blocked_by }}- blocked by {{ .identifier }} ({{ .state }})
{{ end -}}
{{ if $issue.parent }}parent {{ $issue.parent.identifier }}{{ else }}no parent{{ end }}
{{ toJSON $issue.labels }} {{ len $issue }} {{ index $issue.labels 0 }}";
        assert_eq!(
            render(source, json!({"id": "ABC-1"})),
            "ABC-1: Fix login\nLabels: bug, auth\n- blocked by ABC-2 (open)\nno parent\n[\"bug\",\"auth\"] 5 bug"
        );
    }

    #[test]
    fn a_host_error_is_a_render_error_at_the_call() {
        let source = "---\ndescription: one issue\n---\nIssue:\n  {{ fetch .id }}\n";
        let prompt = load(source).expect("loads");
        let error = prompt.render(json!({"id": "XYZ-9"})).unwrap_err();
        assert_eq!(error.class(), ErrorClass::Render);
        assert_eq!(error.message(), "error calling fetch: no issue XYZ-9");
        assert_eq!(error.location(), Some(Location { line: 5, column: 6 }));
        let error = load("{{ offline }}")
            .expect("loads")
            .render(json!({}))
            .unwrap_err();
        assert_eq!(
            error.message(),
            "error calling offline: the tracker is unreachable"
        );
    }

    #[test]
    fn unknown_names_suggest_host_functions() {
        let error = load("{{ fetc .id }}").unwrap_err();
        assert_eq!(error.class(), ErrorClass::Parse);
        assert_eq!(error.message(), "function \"fetc\" not defined");
        assert_eq!(error.suggestion(), Some("did you mean \"fetch\"?"));
    }

    #[test]
    fn a_host_function_cannot_take_a_builtin_name() {
        let error = Prompt::from_source(
            "p.gotmpl",
            "Hello",
            &LoadOptions {
                functions: functions().with("printf", |_: &[Value]| Ok(Value::Null)),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(error.class(), ErrorClass::Parse);
        assert_eq!(
            error.message(),
            "host function \"printf\" has the name of a built-in function"
        );
    }

    #[test]
    fn call_points_to_calling_by_name() {
        let error = load("{{ call \"fetch\" .id }}")
            .expect("loads")
            .render(json!({"id": "ABC-1"}))
            .unwrap_err();
        assert_eq!(
            error.message(),
            "call: the first argument is a string, not a function; host functions are called by name: {{ fetch .id }}"
        );
    }

    #[test]
    fn lenient_prompts_pass_missing_values_as_null() {
        let prompt = Prompt::from_source(
            "p.gotmpl",
            "[{{ shout .nope }}]",
            &LoadOptions {
                strict: Some(Strictness::Lenient),
                functions: functions(),
                ..Default::default()
            },
        )
        .expect("loads");
        let error = prompt.render(json!({})).unwrap_err();
        assert_eq!(error.message(), "error calling shout: shout takes a string");
    }
}

mod jinja {
    use super::*;

    fn load(source: &str) -> Result<Prompt, teleprompt::Error> {
        Prompt::from_source(
            "p.j2",
            source,
            &LoadOptions {
                functions: functions(),
                ..LoadOptions::default()
            },
        )
    }

    #[test]
    fn host_functions_are_functions_and_filters() {
        let prompt = load(
            "{% set issue = fetch(id) %}{{ issue.title }} [{{ issue.labels | join(', ') }}] \
             blocked by {{ issue.blocked_by[0].identifier }}; {{ issue.title | shout }}",
        )
        .unwrap();
        let rendered = prompt.render(json!({"id": "ABC-1"})).unwrap();
        assert_eq!(
            rendered.text(),
            "Fix login [bug, auth] blocked by ABC-2; FIX LOGIN!"
        );
    }

    #[test]
    fn a_failing_host_function_is_a_render_error_at_its_call() {
        let prompt = load("---\nname: x\n---\nok\n{{ fetch('NOPE-1') }}").unwrap();
        let error = prompt.render(json!({})).unwrap_err();
        assert_eq!(error.class(), ErrorClass::Render);
        assert_eq!(error.location().map(|at| at.line), Some(5));
        assert!(
            error
                .message()
                .contains("error calling fetch: no issue NOPE-1"),
            "{}",
            error.report()
        );
    }

    #[test]
    fn unknown_names_suggest_host_functions() {
        let error = load("{{ ftch(id) }}").unwrap_err();
        assert_eq!(error.class(), ErrorClass::Parse);
        assert_eq!(error.suggestion(), Some("did you mean \"fetch\"?"));
        let error = load("{{ id | shuot }}").unwrap_err();
        assert_eq!(error.suggestion(), Some("did you mean \"shout\"?"));
    }
}

/// A host function that panics fails the render, not the host.
#[test]
fn a_panicking_host_function_is_a_render_error() {
    let functions = Functions::new().with("boom", |_: &[Value]| -> Result<Value, String> {
        panic!("plugin bug")
    });
    for (name, source) in [("p.j2", "{{ boom() }}"), ("p.gotmpl", "{{ boom }}")] {
        let options = LoadOptions {
            functions: functions.clone(),
            ..LoadOptions::default()
        };
        let prompt = Prompt::from_source(name, source, &options).expect(name);
        let error = prompt.render(json!({})).unwrap_err();
        assert_eq!(error.class(), ErrorClass::Render, "{name}");
        assert!(
            error
                .message()
                .contains("error calling boom: the function panicked"),
            "{name}: {}",
            error.report()
        );
    }
}

/// Handlebars calls host functions as helpers, names with dashes included
/// (Semantic Kernel's `plugin-function`), with hash arguments as a final map.
#[test]
fn handlebars_calls_host_functions_as_helpers() {
    let functions = functions().with("weather-today", |args: &[Value]| {
        Ok(json!(format!("{args:?}")))
    });
    let options = LoadOptions {
        functions,
        ..LoadOptions::default()
    };
    let prompt = Prompt::from_source(
        "p.hbs",
        "{{shout name}} {{#with (fetch id)}}{{title}} [{{join labels \", \"}}]{{/with}} {{weather-today city unit=\"C\"}}",
        &options,
    )
    .expect("loads");
    let rendered = prompt
        .render(json!({"name": "ada", "id": "ABC-1", "city": "Lisbon"}))
        .expect("renders");
    assert_eq!(
        rendered.text(),
        "ADA! Fix login [bug, auth] [String(\"Lisbon\"), Object {\"unit\": String(\"C\")}]"
    );
    let error = Prompt::from_source("p.hbs", "{{shuot name}}", &options).unwrap_err();
    assert_eq!(error.suggestion(), Some("did you mean \"shout\"?"));
}

/// A host function called bare (`{{today}}`) while the current context has
/// a key of that name is a render error naming both (handlebars.js would
/// call the helper and hide the data); with arguments it is the helper, and
/// `{{this.today}}` / `{{./today}}` read the data.
#[test]
fn handlebars_bare_host_function_colliding_with_data() {
    let functions = functions().with("today", |_: &[Value]| Ok(json!("Monday")));
    let options = LoadOptions {
        functions,
        ..LoadOptions::default()
    };
    let load = |source: &str| Prompt::from_source("p.hbs", source, &options).expect("loads");
    let prompt = load("Day: {{today}}");
    assert_eq!(
        prompt.render(json!({})).expect("renders").text(),
        "Day: Monday"
    );
    let error = prompt.render(json!({"today": "Sunday"})).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Render);
    assert_eq!(
        error.message(),
        "{{today}} is ambiguous: \"today\" is a helper and a key of the data"
    );
    assert_eq!(error.location(), Some(Location { line: 1, column: 8 }));
    assert_eq!(
        error.suggestion(),
        Some("write {{this.today}} (or {{./today}}) for the data's value; the helper runs when the data has no key \"today\"")
    );
    let data = json!({"today": "Sunday", "fetch": "data", "id": "ABC-1"});
    assert_eq!(
        load("{{this.today}} {{./today}} {{#with (fetch id)}}{{title}}{{/with}} {{shout fetch}}")
            .render(data)
            .expect("renders")
            .text(),
        "Sunday Sunday Fix login DATA!"
    );
}

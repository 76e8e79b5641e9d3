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
            &LoadOptions::new()
                .with_syntax(Syntax::Go)
                .with_functions(functions()),
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
            &LoadOptions::new()
                .with_functions(functions().with("printf", |_: &[Value]| Ok(Value::Null))),
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
            &LoadOptions::new()
                .with_strictness(Strictness::Lenient)
                .with_functions(functions()),
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
            &LoadOptions::new().with_functions(functions()),
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
        let options = LoadOptions::new().with_functions(functions.clone());
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
    let options = LoadOptions::new().with_functions(functions);
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
    let options = LoadOptions::new().with_functions(functions);
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

/// Semantic Kernel's function helpers: host functions with declared
/// parameters, grouped in plugins.
///
/// Where the expected behaviour comes from:
/// - SK's `KernelFunctionHelpersTests.cs`
///   (microsoft/semantic-kernel, `dotnet/src/Extensions/Extensions.UnitTests/PromptTemplates/Handlebars/Helpers/`):
///   the `Foo` plugin below is its test plugin (`Bar()` → "Bar",
///   `Combine(string x, string y)` → y + x, `StringifyInt(int x)`), and the
///   cases marked "SK:" are its cases with its expected outputs; where SK
///   throws, the test names SK's message and checks ours.
/// - SK's `KernelFunctionHelpers.cs`: positional arguments fill the
///   parameters in order, hash arguments go by name; a numeric parameter
///   takes any value that parses as a number (`IsExpectedParameterType`),
///   other types must match; a missing required parameter is an error.
/// - SK's `HandlebarsPromptTemplateOptions.PrefixSeparator` (default "-"):
///   helpers are named `Plugin-Function`, the separator configurable.
/// - SK's Python `Jinja2PromptTemplate`: "plugin-function" is called
///   `plugin_function` in Jinja, whose names cannot hold `-`.
mod sk_function_helpers {
    use super::*;
    use teleprompt::functions::{Args, Param, ParamType, Plugin, Signature};

    /// SK's test plugin `Foo`, and a `Weather` plugin with defaults, a
    /// boolean and a function of its own that fails.
    fn plugins() -> Functions {
        let sk_test_plugin = Plugin::new("Foo")
            .with_signature(
                "Bar",
                Signature::new().describe("Return Bar"),
                |_: &Args| Ok(json!("Bar")),
            )
            .with_signature(
                "Combine",
                Signature::new()
                    .describe("Return words concatenated")
                    .with_param(Param::new("x", ParamType::String).describe("First word"))
                    .with_param(Param::new("y", ParamType::String).describe("Second word")),
                |args: &Args| Ok(json!(format!("{}{}", args.string("y")?, args.string("x")?))),
            )
            .with_signature(
                "StringifyInt",
                Signature::new()
                    .describe("Return number as string")
                    .param("x", ParamType::Integer),
                |args: &Args| Ok(json!(args.integer("x")?.to_string())),
            );
        let weather = Plugin::new("Weather")
            .with_signature(
                "GetForecast",
                Signature::new()
                    .param("city", ParamType::String)
                    .optional("days", ParamType::Integer, 1)
                    .optional("metric", ParamType::Boolean, true),
                |args: &Args| {
                    let city = args.string("city")?;
                    if city == "Atlantis" {
                        return Err(format!("no forecast for {city}"));
                    }
                    let unit = if args.boolean("metric")? { "C" } else { "F" };
                    Ok(json!(format!("{}d {city} {unit}", args.integer("days")?)))
                },
            )
            .with("Now", |args: &[Value]| Ok(json!(format!("now {args:?}"))));
        Functions::new()
            .with_plugin(sk_test_plugin)
            .with_plugin(weather)
    }

    /// What a case expects: the output, or an error's class, `line:col`
    /// and message.
    enum Want {
        Out(&'static str),
        Err(ErrorClass, (usize, usize), &'static str),
    }
    use Want::{Err as Fails, Out};
    const PARSE: ErrorClass = ErrorClass::Parse;
    const RENDER: ErrorClass = ErrorClass::Render;

    /// Runs cases of one file kind (`p.hbs`, `p.j2`, `p.gotmpl`) against
    /// `functions`: (template, data, expected).
    fn run(file: &str, functions: &Functions, cases: &[(&str, Value, Want)]) {
        let options = LoadOptions::new().with_functions(functions.clone());
        for (template, data, want) in cases {
            let result = Prompt::from_source(file, template, &options)
                .and_then(|prompt| prompt.render(data.clone()));
            match (result, want) {
                (Ok(rendered), Out(text)) => {
                    assert_eq!(rendered.text(), *text, "{file}: {template}");
                }
                (Err(error), Fails(class, (line, column), message)) => {
                    assert_eq!(error.message(), *message, "{file}: {template}");
                    assert_eq!(error.class(), *class, "{file}: {template}");
                    assert_eq!(
                        error.location(),
                        Some(Location {
                            line: *line,
                            column: *column
                        }),
                        "{file}: {template}"
                    );
                }
                (Ok(rendered), Fails(..)) => {
                    panic!("{file}: {template}: rendered {:?}", rendered.text())
                }
                (Err(error), Out(_)) => panic!("{file}: {template}: {}", error.report()),
            }
        }
    }

    #[test]
    fn handlebars() {
        let n = |value: Value| json!({ "n": value });
        run(
            "p.hbs",
            &plugins(),
            &[
                // SK: ItRendersFunctionsAsync.
                ("Foo {{Foo-Bar}}", json!({}), Out("Foo Bar")),
                // SK: ItRendersFunctionHelpersWithPositionalArgumentsAsync.
                (r#"{{Foo-Combine "Bar" "Baz"}}"#, json!({}), Out("BazBar")),
                // SK: ItRendersFunctionHelpersWitHashArgumentsAsync.
                (r#"{{Foo-Combine x="Bar" y="Baz"}}"#, json!({}), Out("BazBar")),
                // SK: ItThrowsExceptionWhenPositionalArgumentHasInvalidTypeAsync
                // ("Invalid parameter type for function"); a literal, so at load.
                (
                    r#"{{Foo-StringifyInt "twelve"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 20), "parameter `x` of `Foo-StringifyInt` must be an integer, found the string \"twelve\""),
                ),
                // SK: ShouldThrowExceptionWhenFunctionHelperHasInvalidParameterTypeAsync
                // ("Invalid argument type").
                (
                    r#"{{Foo-StringifyInt x="twelve"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 20), "parameter `x` of `Foo-StringifyInt` must be an integer, found the string \"twelve\""),
                ),
                // SK: ItThrowsExceptionWhenPositionalArgumentNumberIsIncorrectAsync
                // ("Invalid parameter count for function").
                (
                    r#"{{Foo-Combine "Bar"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 3), "parameter `y` of `Foo-Combine` is required"),
                ),
                // SK: ShouldThrowExceptionWhenMissingRequiredParameterAsync
                // ("Parameter .* is required for function").
                (
                    r#"{{Foo-Combine x="Bar"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 3), "parameter `y` of `Foo-Combine` is required"),
                ),
                // SK: ShouldThrowExceptionWhenArgumentsAreNotProvidedAsync
                // ("No arguments are provided for .*").
                (
                    "{{Foo-Combine}}",
                    json!({}),
                    Fails(PARSE, (1, 3), "parameter `x` of `Foo-Combine` is required"),
                ),
                // SK: ShouldThrowExceptionWhenFunctionHelperIsNotDefinedAsync
                // ("Template references a helper that cannot be resolved").
                (
                    r#"{{Foo-Random x="random"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 3), "there is no helper named \"Foo-Random\""),
                ),
                // SK's numeric check lets a string that parses as a number
                // through, and its invocation converts it.
                (r#"{{Foo-StringifyInt "12"}}"#, json!({}), Out("12")),
                ("{{Foo-StringifyInt 12}} {{Foo-StringifyInt n}}", n(json!("-7")), Out("12 -7")),
                ("{{Foo-StringifyInt n}}", n(json!(3.0)), Out("3")),
                // From the data, the same check runs when rendering.
                (
                    "{{Foo-StringifyInt n}}",
                    n(json!("twelve")),
                    Fails(RENDER, (1, 3), "parameter `x` of `Foo-StringifyInt` must be an integer, found the string \"twelve\""),
                ),
                (
                    "{{Foo-StringifyInt n}}",
                    n(json!(2.5)),
                    Fails(RENDER, (1, 3), "parameter `x` of `Foo-StringifyInt` must be an integer, found the number 2.5"),
                ),
                (
                    r#"{{Foo-Combine "a" n}}"#,
                    n(json!(null)),
                    Fails(RENDER, (1, 3), "parameter `y` of `Foo-Combine` must be a string, found null"),
                ),
                // A number is not a string, as in SK's type check.
                (
                    r#"{{Foo-Combine "a" 1}}"#,
                    json!({}),
                    Fails(PARSE, (1, 19), "parameter `y` of `Foo-Combine` must be a string, found the integer 1"),
                ),
                // Defaults, positional and hash mixed, conversions.
                (r#"{{Weather-GetForecast "Paris"}}"#, json!({}), Out("1d Paris C")),
                (
                    r#"{{Weather-GetForecast "Paris" days="3" metric="False"}}"#,
                    json!({}),
                    Out("3d Paris F"),
                ),
                (
                    "{{Weather-GetForecast city=n days=2}}",
                    n(json!("Oslo")),
                    Out("2d Oslo C"),
                ),
                (
                    r#"{{#with (Weather-GetForecast "Rome" days=2)}}[{{this}}]{{/with}}"#,
                    json!({}),
                    Out("[2d Rome C]"),
                ),
                // Extra, unknown and doubled arguments.
                (
                    r#"{{Foo-Combine "a" "b" "c"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 23), "`Foo-Combine` takes 2 arguments, found 3"),
                ),
                (
                    r#"{{Weather-GetForecast "a" 1 true "d"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 34), "`Weather-GetForecast` takes at most 3 arguments, found 4"),
                ),
                (
                    "{{Foo-Bar 1}}",
                    json!({}),
                    Fails(PARSE, (1, 11), "`Foo-Bar` takes no arguments, found 1"),
                ),
                (
                    r#"{{Weather-GetForecast citty="Paris"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 23), "`Weather-GetForecast` has no parameter `citty`"),
                ),
                (
                    r#"{{Foo-Combine "a" x="b"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 19), "parameter `x` of `Foo-Combine` is given twice (by position and by name)"),
                ),
                (
                    r#"{{Foo-Combine x="a" y="b" x="c"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 27), "parameter `x` of `Foo-Combine` is given twice"),
                ),
                (
                    r#"{{Weather-GetForecast "Paris" days="two"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 31), "parameter `days` of `Weather-GetForecast` must be an integer, found the string \"two\""),
                ),
                (
                    r#"{{Weather-GetForecast "Paris" metric="yes"}}"#,
                    json!({}),
                    Fails(PARSE, (1, 31), "parameter `metric` of `Weather-GetForecast` must be a boolean, found the string \"yes\""),
                ),
                // The function's own error.
                (
                    "Forecast:\n{{Weather-GetForecast n}}",
                    n(json!("Atlantis")),
                    Fails(RENDER, (2, 3), "error calling Weather-GetForecast: no forecast for Atlantis"),
                ),
                // An untyped plugin function takes the hash as a last object.
                (
                    r#"{{Weather-Now "x" tz="UTC"}}"#,
                    json!({}),
                    Out(r#"now [String("x"), Object {"tz": String("UTC")}]"#),
                ),
            ],
        );
    }

    #[test]
    fn jinja() {
        let n = |value: Value| json!({ "n": value });
        run(
            "p.j2",
            &plugins(),
            &[
                // SK's cases, with Jinja's spelling (`Foo_Bar`, as SK's Python Jinja2 templates).
                ("Foo {{ Foo_Bar() }}", json!({}), Out("Foo Bar")),
                (r#"{{ Foo_Combine("Bar", "Baz") }}"#, json!({}), Out("BazBar")),
                (r#"{{ Foo_Combine(x="Bar", y="Baz") }}"#, json!({}), Out("BazBar")),
                // As a filter, the filtered value is the first argument.
                (r#"{{ "Bar" | Foo_Combine("Baz") }}"#, json!({}), Out("BazBar")),
                (r#"{{ "Bar" | Foo_Combine(y="Baz") }}"#, json!({}), Out("BazBar")),
                (
                    r#"{{ Foo_StringifyInt("twelve") }}"#,
                    json!({}),
                    Fails(PARSE, (1, 21), "parameter `x` of `Foo_StringifyInt` must be an integer, found the string \"twelve\""),
                ),
                (
                    r#"{{ Foo_StringifyInt(x="twelve") }}"#,
                    json!({}),
                    Fails(PARSE, (1, 21), "parameter `x` of `Foo_StringifyInt` must be an integer, found the string \"twelve\""),
                ),
                (
                    r#"{{ Foo_Combine("Bar") }}"#,
                    json!({}),
                    Fails(PARSE, (1, 4), "parameter `y` of `Foo_Combine` is required"),
                ),
                (
                    r#"{{ Foo_Combine(x="Bar") }}"#,
                    json!({}),
                    Fails(PARSE, (1, 4), "parameter `y` of `Foo_Combine` is required"),
                ),
                (
                    "{{ Foo_Combine() }}",
                    json!({}),
                    Fails(PARSE, (1, 4), "parameter `x` of `Foo_Combine` is required"),
                ),
                (
                    r#"{{ Foo_Random(x="random") }}"#,
                    json!({}),
                    Fails(PARSE, (1, 4), "unknown function \"Foo_Random\""),
                ),
                (r#"{{ Foo_StringifyInt("12") }}"#, json!({}), Out("12")),
                ("{{ Foo_StringifyInt(n) }}", n(json!("7")), Out("7")),
                (
                    "{{ Foo_StringifyInt(n) }}",
                    n(json!("twelve")),
                    Fails(RENDER, (1, 4), "parameter `x` of `Foo_StringifyInt` must be an integer, found the string \"twelve\""),
                ),
                (
                    "{{ n | Foo_StringifyInt }}",
                    n(json!([1])),
                    Fails(RENDER, (1, 8), "parameter `x` of `Foo_StringifyInt` must be an integer, found an array of 1 item"),
                ),
                // Defaults, mixed, conversions; splats bind when rendering.
                (r#"{{ Weather_GetForecast("Paris") }}"#, json!({}), Out("1d Paris C")),
                (
                    r#"{{ Weather_GetForecast("Paris", metric=false, days="3") }}"#,
                    json!({}),
                    Out("3d Paris F"),
                ),
                ("{{ Foo_Combine(*n) }}", n(json!(["a", "b"])), Out("ba")),
                (
                    "{{ Foo_Combine(*n) }}",
                    n(json!(["a"])),
                    Fails(RENDER, (1, 4), "parameter `y` of `Foo_Combine` is required"),
                ),
                // Extra, unknown, doubled.
                (
                    r#"{{ Foo_Combine("a", "b", "c") }}"#,
                    json!({}),
                    Fails(PARSE, (1, 26), "`Foo_Combine` takes 2 arguments, found 3"),
                ),
                (
                    r#"{{ Weather_GetForecast(citty="Paris") }}"#,
                    json!({}),
                    Fails(PARSE, (1, 24), "`Weather_GetForecast` has no parameter `citty`"),
                ),
                (
                    r#"{{ Foo_Combine("a", x="b") }}"#,
                    json!({}),
                    Fails(PARSE, (1, 21), "parameter `x` of `Foo_Combine` is given twice (by position and by name)"),
                ),
                (
                    "{{ Weather_GetForecast(n) }}",
                    n(json!("Atlantis")),
                    Fails(RENDER, (1, 4), "error calling Weather_GetForecast: no forecast for Atlantis"),
                ),
                (
                    r#"{{ Weather_Now("x", tz="UTC") }}"#,
                    json!({}),
                    Out(r#"now [String("x"), Object {"tz": String("UTC")}]"#),
                ),
            ],
        );
    }

    #[test]
    fn go() {
        let n = |value: Value| json!({ "n": value });
        run(
            "p.gotmpl",
            &plugins(),
            &[
                // SK's cases with Go's spelling: positional arguments only.
                ("Foo {{ Foo_Bar }}", json!({}), Out("Foo Bar")),
                (r#"{{ Foo_Combine "Bar" "Baz" }}"#, json!({}), Out("BazBar")),
                // A pipeline's value is the last argument.
                (r#"{{ "Baz" | Foo_Combine "Bar" }}"#, json!({}), Out("BazBar")),
                (
                    r#"{{ Foo_StringifyInt "twelve" }}"#,
                    json!({}),
                    Fails(PARSE, (1, 21), "parameter `x` of `Foo_StringifyInt` must be an integer, found the string \"twelve\""),
                ),
                (
                    r#"{{ Foo_Combine "Bar" }}"#,
                    json!({}),
                    Fails(PARSE, (1, 4), "parameter `y` of `Foo_Combine` is required"),
                ),
                (
                    "{{ Foo_Combine }}",
                    json!({}),
                    Fails(PARSE, (1, 4), "parameter `x` of `Foo_Combine` is required"),
                ),
                (
                    "{{ Foo_Random }}",
                    json!({}),
                    Fails(PARSE, (1, 4), "function \"Foo_Random\" not defined"),
                ),
                (r#"{{ Foo_StringifyInt "12" }} {{ Foo_StringifyInt 12 }}"#, json!({}), Out("12 12")),
                ("{{ .n | Foo_StringifyInt }}", n(json!("7")), Out("7")),
                (
                    "{{ Foo_StringifyInt .n }}",
                    n(json!("twelve")),
                    Fails(RENDER, (1, 4), "parameter `x` of `Foo_StringifyInt` must be an integer, found the string \"twelve\""),
                ),
                (r#"{{ Weather_GetForecast "Paris" }}"#, json!({}), Out("1d Paris C")),
                (
                    r#"{{ Weather_GetForecast "Paris" "3" false }}"#,
                    json!({}),
                    Out("3d Paris F"),
                ),
                (
                    r#"{{ Foo_Combine "a" "b" "c" }}"#,
                    json!({}),
                    Fails(PARSE, (1, 24), "`Foo_Combine` takes 2 arguments, found 3"),
                ),
                (
                    r#"{{ "c" | Foo_Combine "a" "b" }}"#,
                    json!({}),
                    Fails(PARSE, (1, 10), "`Foo_Combine` takes 2 arguments, found 3"),
                ),
                (
                    "{{ Weather_GetForecast .n }}",
                    n(json!("Atlantis")),
                    Fails(RENDER, (1, 4), "error calling Weather_GetForecast: no forecast for Atlantis"),
                ),
            ],
        );
    }

    #[test]
    fn suggestions_show_the_signature_and_near_names() {
        let options = LoadOptions::new().with_functions(plugins());
        let load = |file: &str, source: &str| Prompt::from_source(file, source, &options);
        let error = load("p.hbs", "{{Weather-GetForecast days=2}}").unwrap_err();
        assert_eq!(
            error.suggestion(),
            Some("`Weather-GetForecast` takes (city: string, days: integer = 1, metric: boolean = true)")
        );
        let error = load("p.j2", r#"{{ Weather_GetForecast(citty="x") }}"#).unwrap_err();
        assert_eq!(error.suggestion(), Some("did you mean `city`?"));
        // At render time too.
        let error = load("p.j2", "{{ Foo_Combine(*n) }}")
            .unwrap()
            .render(json!({"n": ["a"]}))
            .unwrap_err();
        assert_eq!(
            error.suggestion(),
            Some("`Foo_Combine` takes (x: string, y: string)")
        );
        // Calling a plugin function with another syntax's spelling.
        let error = load("p.hbs", r#"{{Foo_Combine "a" "b"}}"#).unwrap_err();
        assert_eq!(error.suggestion(), Some("did you mean \"Foo-Combine\"?"));
        let error = load("p.gotmpl", "{{ FooBar }}").unwrap_err();
        assert_eq!(error.suggestion(), Some("did you mean \"Foo_Bar\"?"));
    }

    /// SK lets a host change the separator (`PrefixSeparator`): any
    /// characters a Handlebars name holds, or `.`. Go and Jinja keep
    /// `Plugin_Function`.
    #[test]
    fn custom_separators() {
        let cases = [
            ("_", r#"{{Foo_Combine "a" "b"}} {{Foo_Bar}}"#),
            (".", r#"{{Foo.Combine "a" "b"}} {{Foo.Bar}}"#),
            ("::", r#"{{Foo::Combine "a" "b"}} {{Foo::Bar}}"#),
            ("$", r#"{{Foo$Combine "a" "b"}} {{Foo$Bar}}"#),
        ];
        for (separator, template) in cases {
            let options = LoadOptions::new().with_functions(plugins().with_separator(separator));
            let render = |file: &str, source: &str| {
                Prompt::from_source(file, source, &options)
                    .and_then(|prompt| prompt.render(json!({})))
                    .map(|rendered| rendered.text().to_string())
            };
            assert_eq!(render("p.hbs", template).unwrap(), "ba Bar", "{separator}");
            assert_eq!(
                render("p.j2", r#"{{ Foo_Combine("a", "b") }}"#).unwrap(),
                "ba",
                "{separator}"
            );
            assert_eq!(
                render("p.gotmpl", r#"{{ Foo_Combine "a" "b" }}"#).unwrap(),
                "ba",
                "{separator}"
            );
            let error = render("p.hbs", r#"{{Foo-Combine "a" "b"}}"#).unwrap_err();
            assert_eq!(error.message(), "there is no helper named \"Foo-Combine\"");
        }
        // Every separator the host may set works in a helper name: the
        // check agrees with the Handlebars lexer.
        for byte in b'!'..=b'~' {
            let separator = char::from(byte).to_string();
            if byte.is_ascii_alphanumeric() {
                continue;
            }
            let options =
                LoadOptions::new().with_functions(plugins().with_separator(separator.as_str()));
            let template = format!(r#"{{{{Foo{separator}Combine "a" "b"}}}}"#);
            match Prompt::from_source("p.hbs", "hi", &options) {
                Ok(_) => {
                    let rendered = Prompt::from_source("p.hbs", &template, &options)
                        .and_then(|prompt| prompt.render(json!({})));
                    match rendered {
                        Ok(rendered) => assert_eq!(rendered.text(), "ba", "{template}"),
                        Err(error) => panic!("{template}: {}", error.report()),
                    }
                }
                Err(error) => assert!(
                    error.message().starts_with("the plugin separator"),
                    "{template}: {}",
                    error.message()
                ),
            }
        }
        // With `.`, a subexpression and a block argument work too; a
        // literal of the wrong type is found at load.
        let options = LoadOptions::new().with_functions(plugins().with_separator("."));
        let prompt = Prompt::from_source(
            "p.hbs",
            r#"{{#with (Weather.GetForecast "Paris" days=2)}}{{this}}{{/with}} {{Foo.Combine (Foo.Bar) "x"}}"#,
            &options,
        )
        .expect("loads");
        assert_eq!(prompt.render(json!({})).unwrap().text(), "2d Paris C xBar");
        let data = json!({"Foo": {"Bar": "data"}});
        let prompt =
            Prompt::from_source("p.hbs", "{{Foo.Bar}} {{this.Foo.Bar}}", &options).expect("loads");
        assert_eq!(prompt.render(data).unwrap().text(), "Bar data");
        let error =
            Prompt::from_source("p.hbs", r#"{{Foo.StringifyInt "x"}}"#, &options).unwrap_err();
        assert_eq!(
            error.message(),
            "parameter `x` of `Foo.StringifyInt` must be an integer, found the string \"x\""
        );
        // A separator Handlebars cannot read is refused when a Handlebars
        // prompt loads (Go and Jinja prompts do not use it).
        for separator in ["/", " ", "", "#", "{{"] {
            let options = LoadOptions::new().with_functions(plugins().with_separator(separator));
            let error = Prompt::from_source("p.hbs", "hi", &options).unwrap_err();
            assert_eq!(error.class(), ErrorClass::Parse);
            assert!(
                error.message().starts_with(&format!(
                    "the plugin separator {separator:?} cannot be part of a Handlebars helper name"
                )),
                "{}",
                error.message()
            );
            assert!(Prompt::from_source("p.j2", "hi", &options).is_ok());
        }
    }

    /// The host's own mistakes are load errors naming them.
    #[test]
    fn bad_declarations_fail_at_load() {
        let load = |functions: Functions| {
            let options = LoadOptions::new().with_functions(functions);
            Prompt::from_source("p.hbs", "hi", &options)
                .map(|_| ())
                .unwrap_err()
                .message()
                .to_string()
        };
        let nothing = |_: &Args| Ok(Value::Null);
        assert_eq!(
            load(Functions::new().with_plugin(Plugin::new("My-Plugin").with_signature(
                "f",
                Signature::new(),
                nothing
            ))),
            "plugin name \"My-Plugin\" is not a name: use ASCII letters, digits and _, not starting with a digit (as Semantic Kernel does)"
        );
        assert_eq!(
            load(Functions::new().with_signature(
                "f",
                Signature::new().optional("n", ParamType::Integer, "many"),
                nothing
            )),
            "the default of parameter `n` of host function `f` must be an integer, found the string \"many\""
        );
        assert_eq!(
            load(
                Functions::new().with_signature(
                    "f",
                    Signature::new()
                        .param("a", ParamType::Any)
                        .param("a", ParamType::Any),
                    nothing
                )
            ),
            "host function `f` declares parameter `a` twice"
        );
        assert_eq!(
            load(
                Functions::new()
                    .with("Foo-Bar", |_: &[Value]| Ok(Value::Null))
                    .with_plugin(Plugin::new("Foo").with_signature("Bar", Signature::new(), nothing))
            ),
            "two host functions are called \"Foo-Bar\" in this syntax: the function registered as \"Foo-Bar\" and plugin Foo's function Bar"
        );
    }

    /// Huge, deeply nested or many arguments are errors or values, never
    /// panics, and messages stay short.
    #[test]
    fn hostile_arguments() {
        let options = LoadOptions::new().with_functions(plugins());
        let render = |file: &str, source: &str, data: Value| {
            Prompt::from_source(file, source, &options).and_then(|prompt| prompt.render(data))
        };
        let digits = "9".repeat(1_000_000);
        for (file, source) in [
            ("p.hbs", "{{Foo-StringifyInt n}}"),
            ("p.j2", "{{ Foo_StringifyInt(n) }}"),
            ("p.gotmpl", "{{ Foo_StringifyInt .n }}"),
        ] {
            let error = render(file, source, json!({ "n": digits })).unwrap_err();
            assert!(error.message().len() < 150, "{file}: {}", error.message());
            assert!(
                error.message().starts_with("parameter `x` of `Foo"),
                "{file}: {}",
                error.message()
            );
        }
        // Deeper than serde_json parses (128 levels).
        let mut nested = json!("deep");
        for _ in 0..500 {
            nested = json!([nested]);
        }
        let error = render("p.hbs", "{{Foo-StringifyInt n}}", json!({ "n": nested })).unwrap_err();
        assert_eq!(
            error.message(),
            "parameter `x` of `Foo-StringifyInt` must be an integer, found an array of 1 item"
        );
        let many = format!("{{{{Foo-Combine {}}}}}", "\"a\" ".repeat(5_000));
        let error = render("p.hbs", &many, json!({})).unwrap_err();
        assert_eq!(
            error.message(),
            "`Foo-Combine` takes 2 arguments, found 5000"
        );
    }
}

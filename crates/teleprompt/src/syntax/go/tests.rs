//! Unit tests of the Go front end and the engine through it.

use serde_json::{json, Value};

use super::{parse, root_reads, GoTemplate};
use crate::diagnostics::TemplateError;
use crate::syntax::CompileOptions;
use crate::{Data, Strictness};

fn compile(src: &str, strictness: Strictness) -> Result<GoTemplate, TemplateError> {
    GoTemplate::compile(
        src,
        &CompileOptions {
            strictness,
            functions: Default::default(),
        },
    )
}

fn render_with(src: &str, data: Value, strictness: Strictness) -> Result<String, TemplateError> {
    compile(src, strictness)?.render(&Data::new(data))
}

fn render(src: &str, data: Value) -> String {
    render_with(src, data, Strictness::Strict).unwrap_or_else(|e| panic!("{src}: {e:?}"))
}

fn error(src: &str, data: Value) -> TemplateError {
    match render_with(src, data, Strictness::Strict) {
        Ok(text) => panic!("{src}: expected an error, got {text:?}"),
        Err(error) => error,
    }
}

#[test]
fn text_fields_and_pipelines() {
    assert_eq!(
        render("Hello {{ .name }}!", json!({"name": "x"})),
        "Hello x!"
    );
    assert_eq!(render("{{ .a.b.c }}", json!({"a": {"b": {"c": 3}}})), "3");
    assert_eq!(
        render("{{ .l | join \", \" }}", json!({"l": ["a", "b"]})),
        "a, b"
    );
    assert_eq!(
        render("{{ \"X\" | lower | printf \"%s!\" }}", json!({})),
        "x!"
    );
    assert_eq!(
        render("{{ .m }}", json!({"m": {"b": 1, "a": [1, null]}})),
        "map[a:[1 <nil>] b:1]"
    );
    assert_eq!(render("{{ .n }}", json!({"n": null})), "<no value>");
    assert_eq!(
        render("{{ 3.0 }} {{ .f }} {{ 1e6 }}", json!({"f": 2.5})),
        "3 2.5 1e+06"
    );
}

#[test]
fn control_flow() {
    let src = "{{ if .attempt }}retry {{ .attempt }}{{ else }}first{{ end }}";
    assert_eq!(render(src, json!({"attempt": null})), "first");
    assert_eq!(render(src, json!({"attempt": 0})), "first");
    assert_eq!(render(src, json!({"attempt": 2})), "retry 2");
    let src = "{{ range $i, $v := .l }}{{ $i }}={{ $v }} {{ else }}none{{ end }}";
    assert_eq!(render(src, json!({"l": ["a", "b"]})), "0=a 1=b ");
    assert_eq!(render(src, json!({"l": []})), "none");
    assert_eq!(
        render(
            "{{ range $k, $v := . }}{{ $k }}{{ $v }}{{ end }}",
            json!({"b": 2, "a": 1})
        ),
        "a1b2"
    );
    assert_eq!(render("{{ range 3 }}{{ . }}{{ end }}", json!({})), "012");
    assert_eq!(
        render("{{ range .l }}{{ if eq . 2 }}{{ continue }}{{ end }}{{ if eq . 4 }}{{ break }}{{ end }}{{ . }}{{ end }}", json!({"l": [1, 2, 3, 4, 5]})),
        "13"
    );
    assert_eq!(
        render(
            "{{ with .a }}{{ . }}{{ else with .b }}b{{ . }}{{ else }}none{{ end }}",
            json!({"a": 0, "b": 5})
        ),
        "b5"
    );
    assert_eq!(
        render(
            "{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}",
            json!({})
        ),
        "2"
    );
    assert_eq!(render("{{ define \"t\" }}[{{ . }}]{{ end }}{{ template \"t\" .a }}{{ block \"b\" 2 }}<{{ . }}>{{ end }}", json!({"a": 1})), "[1]<2>");
    assert_eq!(
        render(
            "{{ range .l }}{{ $.t }}{{ . }}{{ end }}",
            json!({"t": "T", "l": [1, 2]})
        ),
        "T1T2"
    );
}

#[test]
fn strictness_levels() {
    let e = error("{{ .issue.titl }}", json!({"issue": {"title": "x"}}));
    assert_eq!(e.message, "map has no entry for key \"titl\"");
    assert_eq!(e.suggestion.as_deref(), Some("did you mean \"title\"?"));
    assert_eq!(e.span, Some(3..14));
    let e = error(
        "{{ range .l }}{{ .issue }}{{ end }}",
        json!({"issue": 1, "l": [{"x": 1}]}),
    );
    assert_eq!(e.suggestion.as_deref(), Some("did you mean \"$.issue\"?"));
    assert!(error("{{ if .nope }}{{ end }}", json!({}))
        .message
        .contains("nope"));
    let semi = |src: &str| render_with(src, json!({"a": 1}), Strictness::Semi);
    assert_eq!(semi("{{ if .nope }}y{{ else }}n{{ end }}").unwrap(), "n");
    assert_eq!(semi("{{ if not .nope }}y{{ end }}").unwrap(), "y");
    assert!(semi("{{ .nope }}").is_err());
    assert!(semi("{{ if eq .nope 1 }}{{ end }}").is_err());
    let lenient = |src: &str| render_with(src, json!({"a": 1}), Strictness::Lenient);
    assert_eq!(
        lenient("[{{ .nope }}][{{ .nope.deeper }}]").unwrap(),
        "[][]"
    );
    assert_eq!(
        lenient("{{ range .nope }}x{{ else }}e{{ end }}").unwrap(),
        "e"
    );
}

#[test]
fn compile_errors() {
    let e = compile("{{ .x | lowr }}", Strictness::Strict).unwrap_err();
    assert_eq!(e.message, "function \"lowr\" not defined");
    assert_eq!(e.suggestion.as_deref(), Some("did you mean \"lower\"?"));
    assert_eq!(e.span, Some(8..12));
    let e = compile("{{ $y }}", Strictness::Strict).unwrap_err();
    assert_eq!(e.message, "undefined variable \"$y\"");
    let e = compile("{{ template \"nope\" }}", Strictness::Strict).unwrap_err();
    assert_eq!(e.message, "no such template \"nope\"");
    let e = compile("{{ .x 1 }}", Strictness::Strict).unwrap_err();
    assert_eq!(e.message, "can't give argument to non-function .x");
    let e = compile("{{ eq 1 }}", Strictness::Strict).unwrap_err();
    assert_eq!(
        e.message,
        "wrong number of args for eq: want at least 2 got 1"
    );
}

#[test]
fn bounds() {
    let e = render_with(
        "{{ define \"r\" }}{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}",
        json!({}),
        Strictness::Strict,
    )
    .unwrap_err();
    assert!(e.message.contains("nest more than"), "{}", e.message);
    let e = render_with(
        "{{ range 100000000 }}{{ end }}",
        json!({}),
        Strictness::Strict,
    )
    .unwrap_err();
    assert!(e.message.contains("loops ran more than"), "{}", e.message);
    let e = render_with(
        "{{ range 1000000 }}{{ printf \"%100d\" 1 }}{{ end }}",
        json!({}),
        Strictness::Strict,
    )
    .unwrap_err();
    assert!(e.message.contains("output is larger"), "{}", e.message);
}

#[test]
fn is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<GoTemplate>();
}

#[test]
fn root_reads_lists_field_names_or_everything() {
    let reads = |body: &str| root_reads(&parse::parse(body).expect("parses"));
    let names = reads("{{ .issue.title }}{{ range .files }}{{ . }}{{ end }}{{ $.env.os }}")
        .expect("the root is never used whole");
    assert!(names.contains("issue") && names.contains("files") && names.contains("env"));
    assert!(!names.contains("readme"));
    assert_eq!(reads("{{ toJSON . }}"), None);
    assert_eq!(reads("{{ if .a }}{{ . }}{{ end }}"), None, "if keeps the root as dot");
    assert_eq!(reads("{{ range $k, $v := $ }}{{ end }}"), None);
}

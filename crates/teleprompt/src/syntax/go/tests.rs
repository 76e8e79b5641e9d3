//! Unit tests of the Go front end and the engine through it.

use serde_json::{json, Value};

use super::{compile as compile_go, parse, root_reads, GoTemplate};
use crate::diagnostics::TemplateError;
use crate::functions::Functions;
use crate::scope::RenderScope;
use crate::syntax::CompileOptions;
use crate::{data::Data, options::Strictness};

fn compile(src: &str, strictness: Strictness) -> Result<GoTemplate, TemplateError> {
    compile_go(src, &CompileOptions::plain(strictness))
}

fn render_with(src: &str, data: Value, strictness: Strictness) -> Result<String, TemplateError> {
    let template = compile(src, strictness)?;
    let mut scope = RenderScope::at_epoch(template.limits());
    template.render(&Data::new(data), &mut scope)
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
    assert!(
        e.message
            .contains("more than 5000000 steps (the limit max_steps)"),
        "{}",
        e.message
    );
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
    let reads = |body: &str| root_reads(&parse::parse(body).expect("parses"), &[]);
    let names = reads("{{ .issue.title }}{{ range .files }}{{ . }}{{ end }}{{ $.env.os }}")
        .expect("the root is never used whole");
    assert!(names.contains("issue") && names.contains("files") && names.contains("env"));
    assert!(!names.contains("readme"));
    assert_eq!(reads("{{ toJSON . }}"), None);
    assert_eq!(
        reads("{{ if .a }}{{ . }}{{ end }}"),
        None,
        "if keeps the root as dot"
    );
    assert_eq!(reads("{{ range $k, $v := $ }}{{ end }}"), None);
}

/// Host functions for the tests: `greet` joins its arguments, `fetch`
/// returns an issue object, `nums` a list, `fail` an error, `count` the
/// number of its arguments, `kind` the JSON type of its only argument.
fn host_functions() -> Functions {
    Functions::new()
        .with("greet", |args: &[Value]| {
            let words: Vec<String> = args
                .iter()
                .map(|arg| match arg {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            Ok(json!(words.join("+")))
        })
        .with("fetch", |args: &[Value]| match args {
            [Value::Number(id)] => Ok(json!({
                "id": id,
                "title": "Fix login",
                "labels": ["bug", "auth"],
                "parent": {"identifier": "ABC-1", "state": null},
                "assignee": null,
            })),
            _ => Err(format!(
                "fetch takes one number, got {}",
                Value::from(args.to_vec())
            )),
        })
        .with("nums", |_: &[Value]| Ok(json!([3, 1.5, "x", null, true])))
        .with("fail", |_: &[Value]| Err("the tracker is down".to_string()))
        .with("count", |args: &[Value]| Ok(json!(args.len())))
        .with("half", |args: &[Value]| {
            Ok(json!(
                args.first().and_then(Value::as_f64).unwrap_or(0.0) / 2.0
            ))
        })
        .with("kind", |args: &[Value]| {
            Ok(json!(match args.first() {
                Some(Value::Null) => "null",
                Some(Value::Bool(_)) => "bool",
                Some(Value::Number(_)) => "number",
                Some(Value::String(_)) => "string",
                Some(Value::Array(_)) => "array",
                Some(Value::Object(_)) => "object",
                None => "none",
            }))
        })
}

fn compile_hosts(src: &str, strictness: Strictness) -> Result<GoTemplate, TemplateError> {
    compile_go(
        src,
        &CompileOptions {
            functions: host_functions(),
            ..CompileOptions::plain(strictness)
        },
    )
}

fn render_hosts_with(
    src: &str,
    data: Value,
    strictness: Strictness,
) -> Result<String, TemplateError> {
    let template = compile_hosts(src, strictness)?;
    let mut scope = RenderScope::at_epoch(template.limits());
    template.render(&Data::new(data), &mut scope)
}

fn render_hosts(src: &str, data: Value) -> String {
    render_hosts_with(src, data, Strictness::Strict).unwrap_or_else(|e| panic!("{src}: {e:?}"))
}

#[test]
fn host_functions_take_arguments_and_pipelines() {
    let data = json!({"name": "Ann", "x": 7, "l": [1, 2], "m": {"k": "v"}});
    assert_eq!(
        render_hosts("{{ greet \"hi\" .name 2 }}", data.clone()),
        "hi+Ann+2"
    );
    // A pipeline's value is the last argument, as in Go.
    assert_eq!(
        render_hosts("{{ .name | greet \"hi\" }}", data.clone()),
        "hi+Ann"
    );
    assert_eq!(
        render_hosts("{{ .x | greet \"a\" | greet \"b\" }}", data.clone()),
        "b+a+7"
    );
    assert_eq!(
        render_hosts("{{ count }} {{ count 1 2 3 }}", data.clone()),
        "0 3"
    );
    // A host function as an argument is called without arguments.
    assert_eq!(render_hosts("{{ greet count }}", data.clone()), "0");
    // Arguments arrive as JSON, data arrays and objects included.
    assert_eq!(
        render_hosts(
            "{{ kind .l }} {{ kind .m }} {{ kind nil }} {{ kind 1.5 }} {{ kind true }} {{ kind (fetch 1) }}",
            data.clone()
        ),
        "array object null number bool object"
    );
    assert_eq!(
        render_hosts("{{ greet .l .m }}", data),
        "[1,2]+{\"k\":\"v\"}"
    );
}

#[test]
fn host_results_are_values_like_data() {
    let data = json!({"id": 42});
    // Strings and numbers.
    assert_eq!(
        render_hosts("{{ greet \"a\" | printf \"%q\" }}", data.clone()),
        "\"a\""
    );
    assert_eq!(
        render_hosts("{{ count 1 2 | printf \"%d\" }} {{ half 3 }}", data.clone()),
        "2 1.5"
    );
    assert_eq!(
        render_hosts("{{ if eq (count 1) 1 }}one{{ end }}", data.clone()),
        "one"
    );
    // An object: printed as a Go map, fields, chains, with, index, len.
    let issue = "{{ $i := fetch .id }}";
    assert_eq!(
        render_hosts(
            &format!(
                "{issue}{{{{ $i.title }}}}|{{{{ $i.parent.identifier }}}}|{{{{ (fetch 1).id }}}}"
            ),
            data.clone()
        ),
        "Fix login|ABC-1|1"
    );
    assert_eq!(
        render_hosts(&format!("{issue}{{{{ with $i.parent }}}}{{{{ .identifier }}}}{{{{ end }}}}{{{{ if $i.assignee }}}}A{{{{ else }}}}none{{{{ end }}}}"), data.clone()),
        "ABC-1none"
    );
    assert_eq!(
        render_hosts(&format!("{issue}{{{{ index $i \"labels\" 1 }}}} {{{{ len $i }}}} {{{{ len $i.labels }}}} {{{{ $i.parent.state }}}}"), data.clone()),
        "auth 5 2 <no value>"
    );
    assert_eq!(
        render_hosts("{{ fetch .id }}", data.clone()),
        "map[assignee:<nil> id:42 labels:[bug auth] parent:map[identifier:ABC-1 state:<nil>] title:Fix login]"
    );
    // toJSON keeps the host's key order; join takes a host list.
    assert_eq!(
        render_hosts("{{ (fetch .id).parent | toJSON }}", data.clone()),
        "{\"identifier\":\"ABC-1\",\"state\":null}"
    );
    assert_eq!(
        render_hosts("{{ (fetch .id).labels | join \", \" }}", data.clone()),
        "bug, auth"
    );
    // Ranges: lists in order, objects by sorted keys.
    assert_eq!(
        render_hosts(
            "{{ range $n, $l := (fetch .id).labels }}{{ $n }}={{ $l }} {{ end }}",
            data.clone()
        ),
        "0=bug 1=auth "
    );
    assert_eq!(
        render_hosts(
            "{{ range $k, $v := (fetch .id).parent }}{{ $k }}:{{ $v }};{{ end }}",
            data.clone()
        ),
        "identifier:ABC-1;state:<no value>;"
    );
    assert_eq!(
        render_hosts(
            "{{ range (fetch .id).labels }}[{{ . | lower }}]{{ else }}none{{ end }}",
            data.clone()
        ),
        "[bug][auth]"
    );
    // A list with mixed values: printing, printf, index, slice, truth.
    assert_eq!(
        render_hosts("{{ nums }}", data.clone()),
        "[3 1.5 x <nil> true]"
    );
    assert_eq!(
        render_hosts(
            "{{ printf \"%v|%d|%T\" nums (index nums 0) nums }}",
            data.clone()
        ),
        "[3 1.5 x <nil> true]|3|[]interface {}"
    );
    assert_eq!(
        render_hosts(
            "{{ slice nums 1 3 }} {{ len (slice nums 4) }}",
            data.clone()
        ),
        "[1.5 x] 1"
    );
    assert_eq!(
        render_hosts(
            "{{ if nums }}yes{{ end }}{{ if slice nums 0 0 }}no{{ end }}",
            data.clone()
        ),
        "yes"
    );
    // Comparisons follow Go's rules for data: lists and maps are not comparable.
    let e = render_hosts_with("{{ eq nums nums }}", data.clone(), Strictness::Strict).unwrap_err();
    assert_eq!(e.message, "eq: non-comparable type []interface {}");
    assert_eq!(render_hosts("{{ eq (index nums 2) \"x\" }}", data), "true");
}

#[test]
fn host_results_keep_strictness() {
    let data = json!({"id": 1});
    let e =
        render_hosts_with("{{ (fetch .id).titl }}", data.clone(), Strictness::Strict).unwrap_err();
    assert_eq!(e.message, "map has no entry for key \"titl\"");
    assert_eq!(e.suggestion.as_deref(), Some("did you mean \"title\"?"));
    let e = render_hosts_with(
        "{{ (fetch .id).assignee.name }}",
        data.clone(),
        Strictness::Strict,
    )
    .unwrap_err();
    assert!(
        e.message.contains("is null, so it has no key \"name\""),
        "{}",
        e.message
    );
    let e = render_hosts_with(
        "{{ index (fetch .id) \"nope\" }}",
        data.clone(),
        Strictness::Strict,
    )
    .unwrap_err();
    assert_eq!(e.message, "map has no entry for key \"nope\"");
    assert_eq!(
        render_hosts_with(
            "[{{ (fetch .id).nope }}]",
            data.clone(),
            Strictness::Lenient
        )
        .unwrap(),
        "[]"
    );
    // A missing argument: an error where it is read, unless lenient (then null).
    let e = render_hosts_with("{{ kind .nope }}", data.clone(), Strictness::Semi).unwrap_err();
    assert_eq!(e.message, "map has no entry for key \"nope\"");
    assert_eq!(
        render_hosts_with("{{ kind .nope }}", data, Strictness::Lenient).unwrap(),
        "null"
    );
}

#[test]
fn host_function_errors() {
    let src = "Issue: {{ fetch .id | printf \"%v\" }}";
    let e = render_hosts_with(src, json!({"id": "x"}), Strictness::Strict).unwrap_err();
    assert_eq!(
        e.message,
        "error calling fetch: fetch takes one number, got [\"x\"]"
    );
    assert_eq!(e.span, Some(10..19), "the span of the call `fetch .id`");
    let e = render_hosts_with("{{ if fail }}{{ end }}", json!({}), Strictness::Strict).unwrap_err();
    assert_eq!(e.message, "error calling fail: the tracker is down");
    assert_eq!(e.span, Some(6..10));
    // Unknown functions: the suggestion knows the host's names too.
    let e = compile_hosts("{{ fech .id }}", Strictness::Strict).unwrap_err();
    assert_eq!(e.message, "function \"fech\" not defined");
    assert_eq!(e.suggestion.as_deref(), Some("did you mean \"fetch\"?"));
    assert_eq!(e.span, Some(3..7));
    let e = compile_hosts("{{ .x | lowr }}", Strictness::Strict).unwrap_err();
    assert_eq!(e.suggestion.as_deref(), Some("did you mean \"lower\"?"));
    // Without the registry, host names are unknown.
    let e = compile("{{ fetch 1 }}", Strictness::Strict).unwrap_err();
    assert_eq!(e.message, "function \"fetch\" not defined");
}

#[test]
fn host_function_named_like_a_builtin_fails_at_load() {
    let options = CompileOptions {
        strictness: Strictness::Strict,
        functions: Functions::new()
            .with("fetch", |_: &[Value]| Ok(Value::Null))
            .with("join", |_: &[Value]| Ok(Value::Null)),
        jinja: Default::default(),
        limits: crate::limits::Limits::DEFAULT,
        includes: None,
        origin: crate::syntax::Origin::Teleprompt,
        data_roles: "user,assistant".into(),
    };
    let e = compile_go("no functions used", &options).unwrap_err();
    assert_eq!(
        e.message,
        "host function \"join\" has the name of a built-in function"
    );
    assert_eq!(e.span, None);
}

#[test]
fn call_explains_how_host_functions_are_called() {
    let e = render_hosts_with("{{ call \"fetch\" 1 }}", json!({}), Strictness::Strict).unwrap_err();
    assert_eq!(
        e.message,
        "call: the first argument is a string, not a function; host functions are called by name: {{ fetch .id }}"
    );
    assert_eq!(
        e.suggestion.as_deref(),
        Some("write {{ fetch … }} instead of {{ call \"fetch\" … }}")
    );
    let e = render_hosts_with("{{ call fetch 1 }}", json!({}), Strictness::Strict).unwrap_err();
    assert!(
        e.message.starts_with("error calling fetch: "),
        "{}",
        e.message
    );
    let e = render_hosts_with("{{ call count }}", json!({}), Strictness::Strict).unwrap_err();
    assert!(
        e.message
            .starts_with("call: the first argument is an integer, not a function"),
        "{}",
        e.message
    );
    assert_eq!(e.suggestion, None);
}

#[test]
fn scope_warnings_catch_root_names_inside_range_and_with() {
    let body = "{{ .issue.title }}{{ range .issue.labels }}{{ . }} {{ .issue.identifier }}{{ end }}\
                {{ with .issue.parent }}{{ .identifier }}{{ .run.turn }}{{ end }}{{ if .run }}{{ end }}";
    let warnings = super::scope_warnings(body, &|_| false);
    let texts: Vec<_> = warnings
        .iter()
        .map(|w| {
            (
                body[w.span.clone().unwrap()].to_string(),
                w.suggestion.clone().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        texts,
        vec![
            (
                ".issue.identifier".to_string(),
                "did you mean \"$.issue.identifier\"?".to_string()
            ),
            (
                ".run.turn".to_string(),
                "did you mean \"$.run.turn\"?".to_string()
            ),
        ]
    );
    assert!(warnings[0]
        .message
        .ends_with("inside {{range}} reads the current element, not the root data"));
    assert!(super::scope_warnings(
        "{{ range .items }}{{ .name }}{{ end }}{{ $.title }}",
        &|_| false
    )
    .is_empty());
}

//! Expected strings come from CPython 3.11 with Jinja2 3.1.6
//! (`jinja2.Environment(keep_trailing_newline=True)`, `tojson` registered
//! as `transformers` defines it), unless a test says otherwise.

use serde_json::{json, Value};

use super::*;
use crate::data::Data;
use crate::options::Strictness;
use crate::options::Syntax;
use crate::scope::RenderScope;
use crate::syntax::jinja::JinjaTemplate;
use crate::syntax::CompileOptions;

fn render_in(
    dialect: Syntax,
    body: &str,
    data: Value,
    max_output: usize,
) -> Result<String, String> {
    let template = JinjaTemplate::compile(
        body,
        dialect,
        &CompileOptions {
            strictness: Strictness::Semi,
            functions: Default::default(),
            jinja: Default::default(),
            limits: crate::limits::Limits {
                max_output,
                ..crate::limits::Limits::DEFAULT
            },
            includes: None,
            origin: crate::syntax::Origin::Teleprompt,
            data_roles: "user,assistant".into(),
        },
    )
    .map_err(|error| error.message)?;
    let mut scope = RenderScope::at_epoch(template.limits());
    template
        .render(&Data::new(data), &mut scope)
        .map_err(|error| error.message)
}

fn render(body: &str, data: Value) -> String {
    render_in(Syntax::Jinja, body, data, 1 << 20).unwrap_or_else(|error| panic!("{body}: {error}"))
}

fn sample() -> Value {
    json!({
        "f": 1.0,
        "big": 12345678901234567890u64,
        "s": "it's \"q\" \\ \n\t\u{7}é\u{200b}😀",
        "l": [1, "a", null, true, 2.5],
        "m": {"a": 1, "b": [2]},
    })
}

#[test]
fn floats_print_as_python_repr() {
    assert_eq!(
        render(
            "{{ 1.0 }}|{{ 0.1 }}|{{ 1e16 }}|{{ 1e15 }}|{{ 1e-5 }}|{{ 0.0001 }}|{{ -0.0 }}|{{ 123456789012345.67 }}|{{ 1.5e300 }}|{{ -2.5e-7 }}",
            json!({})
        ),
        "1.0|0.1|1e+16|1000000000000000.0|1e-05|0.0001|-0.0|123456789012345.67|1.5e+300|-2.5e-07"
    );
    for (float, python) in [
        (f64::NAN, "nan"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
        (0.0, "0.0"),
        (5e-324, "5e-324"),
        (f64::MAX, "1.7976931348623157e+308"),
        (9007199254740993.0, "9007199254740992.0"),
        (1e22, "1e+22"),
        (0.000123, "0.000123"),
        (123456.789, "123456.789"),
    ] {
        assert_eq!(float_repr(float), python, "{float}");
    }
}

#[test]
fn values_print_as_python_str() {
    assert_eq!(
        render("{{ f }}|{{ big }}|{{ l }}|{{ m }}|{{ s }}", sample()),
        "1.0|12345678901234567890|[1, 'a', None, True, 2.5]|{'a': 1, 'b': [2]}|it's \"q\" \\ \n\t\u{7}é\u{200b}😀"
    );
    assert_eq!(
        render("{{ [s] }}", sample()),
        "['it\\'s \"q\" \\\\ \\n\\t\\x07é\\u200b😀']"
    );
    assert_eq!(
        render(
            "{{ (1,) }}|{{ (1, 'a') }}|{{ () }}|{{ [(1, 2)] }}",
            json!({})
        ),
        "(1,)|(1, 'a')|()|[(1, 2)]"
    );
    assert_eq!(
        render("{{ missing_ok is defined }}{{ none }}", json!({})),
        "FalseNone"
    );
}

#[test]
fn string_repr_quotes_and_escapes() {
    let repr = |text: &str| {
        let mut out = Out::new();
        write_string_repr(&mut out, text).unwrap();
        out.finish().unwrap()
    };
    assert_eq!(repr("it's"), "\"it's\"");
    assert_eq!(repr("\""), "'\"'");
    assert_eq!(repr("'\""), "'\\'\"'");
    assert_eq!(
        repr("a\u{7f}\u{a0}\u{ad}\u{2028}\u{200b}\u{e000}\u{10ffff}\u{fdd0}😀é\t\\'"),
        "\"a\\x7f\\xa0\\xad\\u2028\\u200b\\ue000\\U0010ffff\\ufdd0😀é\\t\\\\'\""
    );
}

#[test]
fn arithmetic_and_number_filters() {
    assert_eq!(
        render(
            "{{ 1/2 }}|{{ 10/2 }}|{{ 7//2 }}|{{ 7.0//2 }}|{{ 3|round }}|{{ 3.7|round }}|{{ 2.5|round }}|{{ 3.14159|round(2) }}|{{ 3.9|int }}|{{ 3|float }}|{{ 2**0.5 }}",
            json!({})
        ),
        "0.5|5.0|3|3.0|3|4.0|2.0|3.14|3|3.0|1.4142135623730951"
    );
}

#[test]
fn string_join_and_concatenation() {
    assert_eq!(
        render(
            "{{ none|string }}|{{ 1.0|string }}|{{ l|string }}|{{ [1.0, none, 'a', 1e16]|join(', ') }}|{{ l|join }}|{{ [{'n': 1.0}, {'n': 2}]|join('-', attribute='n') }}",
            sample()
        ),
        "None|1.0|[1, 'a', None, True, 2.5]|1.0, None, a, 1e+16|1aNoneTrue2.5|1.0-2"
    );
    // `~` is minijinja's; data objects print themselves as Python does.
    assert_eq!(
        render(
            "{{ 'x' ~ true }}|{{ 'x' ~ none }}|{{ 'x' ~ 1.0 }}|{{ 'x' ~ l }}|{{ 'x' ~ m }}",
            sample()
        ),
        "xTrue|xNone|x1.0|x[1, 'a', None, True, 2.5]|x{'a': 1, 'b': [2]}"
    );
}

#[test]
fn tojson_as_transformers() {
    assert_eq!(
        render(
            "{{ l|tojson }}|{{ m|tojson }}|{{ f|tojson }}|{{ big|tojson }}|{{ s|tojson }}|{{ s|tojson(ensure_ascii=true) }}",
            sample()
        ),
        "[1, \"a\", null, true, 2.5]|{\"a\": 1, \"b\": [2]}|1.0|12345678901234567890|\"it's \\\"q\\\" \\\\ \\n\\t\\u0007é\u{200b}😀\"|\"it's \\\"q\\\" \\\\ \\n\\t\\u0007\\u00e9\\u200b\\ud83d\\ude00\""
    );
    assert_eq!(
        render(
            "{{ m|tojson(indent=2) }}|{{ {'b': 1, 'a': [1, {}], 'c': []}|tojson(indent='\t', sort_keys=true) }}|{{ m|tojson(separators=(',', ':')) }}|{{ m|tojson(indent=1, separators=(', ', ': ')) }}",
            sample()
        ),
        "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}|{\n\t\"a\": [\n\t\t1,\n\t\t{}\n\t],\n\t\"b\": 1,\n\t\"c\": []\n}|{\"a\":1,\"b\":[2]}|{\n \"a\": 1, \n \"b\": [\n  2\n ]\n}"
    );
    assert_eq!(
        render(
            "{{ [1.0, 1e16, 1e-5]|tojson }}|{{ {1: 'a', 2.5: 'b', none: 'c'}|tojson }}",
            json!({})
        ),
        "[1.0, 1e+16, 1e-05]|{\"1\": \"a\", \"2.5\": \"b\", \"null\": \"c\"}"
    );
    // json.dumps(float('nan')), json.dumps([float('inf'), -float('inf')]).
    assert_eq!(
        render(
            "{{ (0*1e400)|tojson }}|{{ [1e400, -1e400]|tojson }}",
            json!({})
        ),
        "NaN|[Infinity, -Infinity]"
    );
    // json.dumps({"b": 1, "a": 2}, sort_keys=True), json.dumps([1, [2]], indent=0).
    assert_eq!(
        render(
            "{{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}|{{ [1, [2]]|tojson(indent=0) }}",
            json!({})
        ),
        "{\"a\": 2, \"b\": 1}|[\n1,\n[\n2\n]\n]"
    );
}

#[test]
fn tojson_arguments() {
    // Jinja syntax: `tojson(indent)` as Jinja2's own filter takes it.
    assert_eq!(render("{{ [1]|tojson(2) }}", json!({})), "[\n  1\n]");
    // A chat template: `transformers`' signature, the first argument is
    // `ensure_ascii` (`json.dumps(["é"], ensure_ascii=2)`).
    assert_eq!(
        render_in(
            Syntax::ChatTemplate,
            "{{ ['é']|tojson(2) }}",
            json!({}),
            1 << 20
        )
        .unwrap(),
        "[\"\\u00e9\"]"
    );
    let error = render_in(
        Syntax::Jinja,
        "{{ [1]|tojson(2, indent=2) }}",
        json!({}),
        1 << 20,
    )
    .unwrap_err();
    assert!(
        error.contains("multiple values for argument 'indent'"),
        "{error}"
    );
    let error = render_in(
        Syntax::Jinja,
        "{{ [1]|tojson(indent=2.5) }}",
        json!({}),
        1 << 20,
    )
    .unwrap_err();
    assert!(
        error.contains("indent must be an integer or a string"),
        "{error}"
    );
    let error = render_in(
        Syntax::Jinja,
        "{{ [1]|tojson(separators=',') }}",
        json!({}),
        1 << 20,
    )
    .unwrap_err();
    assert!(error.contains("separators must be two strings"), "{error}");
    let error = render_in(
        Syntax::Jinja,
        "{{ {'a': 1, 2: 3}|tojson(sort_keys=true) }}",
        json!({}),
        1 << 20,
    )
    .unwrap_err();
    assert!(error.contains("cannot order keys"), "{error}");
    // `toJSON` is teleprompt's compact JSON, floats kept.
    assert_eq!(
        render(
            "{{ {'a': [1.0, 2, none]}|toJSON }}|{{ f|toJSON }}",
            sample()
        ),
        "{\"a\":[1.0,2,null]}|1.0"
    );
}

#[test]
fn deep_and_cyclic_values_are_bounded() {
    let mut deep = json!(1);
    for _ in 0..(MAX_NESTING + 10) {
        deep = json!([deep]);
    }
    for body in [
        "{{ deep|tojson }}",
        "{{ deep }}",
        "{{ deep|string }}",
        "{{ [deep]|join }}",
    ] {
        let error =
            render_in(Syntax::Jinja, body, json!({"deep": deep.clone()}), 1 << 20).unwrap_err();
        assert!(
            error.contains("nested more than 500 levels"),
            "{body}: {error}"
        );
    }
    // `~` cannot fail: the too-deep part prints as `[...]`.
    assert_eq!(
        render_in(
            Syntax::Jinja,
            "{{ 'x' ~ deep }}",
            json!({"deep": deep}),
            1 << 20
        )
        .unwrap(),
        "x[...]"
    );
    // A namespace that holds itself.
    let error = render_in(
        Syntax::Jinja,
        "{% set ns = namespace(a=1) %}{% set ns.me = ns %}{{ ns|tojson }}",
        json!({}),
        1 << 20,
    )
    .unwrap_err();
    assert!(error.contains("nested more than 500 levels"), "{error}");
    let error = render_in(
        Syntax::Jinja,
        "{% set ns = namespace(a=1) %}{% set ns.me = ns %}{{ ns }}",
        json!({}),
        1 << 20,
    )
    .unwrap_err();
    assert!(error.contains("nested more than 500 levels"), "{error}");
}

#[test]
fn huge_results_stop_at_the_output_limit() {
    for body in [
        "{{ 'a\nb'|indent(1000000000) }}",
        "{{ 'a\nb'|indent(width=10**18) }}",
        "{{ [[1]]|tojson(indent=1000000000) }}",
        "{{ [[1]]|tojson(indent='x' * 100000) }}",
    ] {
        let error = render_in(Syntax::Jinja, body, json!({}), 1 << 16).unwrap_err();
        assert!(
            error.contains("the output is larger than"),
            "{body}: {error}"
        );
    }
    // Shared lists, doubled 30 times: 2^30 items if printed in full.
    let mut body = String::from("{% set x = [1] %}");
    for _ in 0..30 {
        body.push_str("{% set x = [x, x] %}");
    }
    for print in ["{{ x }}", "{{ x|tojson }}", "{{ x|join }}"] {
        let error =
            render_in(Syntax::Jinja, &format!("{body}{print}"), json!({}), 1 << 16).unwrap_err();
        assert!(
            error.contains("the output is larger than"),
            "{print}: {error}"
        );
    }
    // Unused, a huge width costs nothing (Python prints "abc").
    assert_eq!(render("{{ 'abc'|indent(1000000000) }}", json!({})), "abc");
}

#[test]
fn indent_filter_as_jinja2() {
    assert_eq!(
        render(
            "{{ 'a\nb\n'|indent }}|{{ 'a\nb'|indent(2, true) }}|{{ 'a\n\nb'|indent(1, blank=true) }}|{{ 'x'|indent('--', first=true) }}|{{ 'a\nb'|indent(true) }}|{{ 'a\nb'|indent(-2) }}",
            json!({})
        ),
        "a\n    b\n|  a\n  b|a\n \n b|--x|a\n b|a\nb"
    );
    let error = render_in(Syntax::Jinja, "{{ 5|indent }}", json!({}), 1 << 20).unwrap_err();
    assert!(
        error.contains("indent expects a string, not number"),
        "{error}"
    );
}

#[test]
fn strftime_now_in_the_dialects() {
    // The render clock here is 1970-01-01 00:00 UTC.
    assert_eq!(
        render_in(
            Syntax::ChatTemplate,
            "{{ strftime_now('%d %b %Y|%Z|%z') }}",
            json!({}),
            1 << 20
        )
        .unwrap(),
        "01 Jan 1970||"
    );
    assert_eq!(
        render("{{ strftime_now('%d %b %Y|%Z|%z') }}", json!({})),
        "01 Jan 1970|UTC|+0000"
    );
}

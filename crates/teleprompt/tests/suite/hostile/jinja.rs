//! Hostile Jinja templates: each stops with a clear error within the
//! budget (see the runner, `hostile/mod.rs`). The cases of issue 7 and the
//! shapes next to them: minijinja's operators (`~`, `+`, `*`) have no
//! bound of their own, so values doubled through a namespace, a macro's
//! arguments or a straight run of `set`s are the shapes to try.

use super::{case, many_keys, run};
use serde_json::json;
use teleprompt::ErrorClass::{Parse, Render};
use teleprompt::Syntax;

/// `{% set ns = namespace(v=INIT) %}` and a 40-pass loop setting `ns.v`.
fn doubling(init: &str, step: &str) -> String {
    format!(
        "{{% set ns = namespace(v={init}) %}}{{% for i in range(40) %}}{{% set ns.v = {step} %}}{{% endfor %}}{{{{ ns.v|length }}}}"
    )
}

#[test]
fn hostile_jinja_templates_stop_within_the_budget() {
    let mut straight = String::from("{% set a = 'xx' %}");
    for _ in 0..40 {
        straight.push_str("{% set a = a ~ a %}");
    }
    straight.push_str("{{ a|length }}");
    run(
        Syntax::Jinja,
        vec![
            // A message per pass: the messages of one render are a list too.
            case("200,000 messages", "{% for i in range(1000) %}{% for j in range(200) %}{{ role(\"user\") }}x{% endfor %}{% endfor %}", json!({}), Render, "messages and media parts"),
            // Python's str methods that cut a string into a list.
            case("str.split() into 4,000,000 words", "{{ s.split() | length }}", json!({"s": "a ".repeat(4_000_000)}), Render, "max_items"),
            case("str.split(sep) into 4,000,000 parts", "{{ s.split(' ') | length }}", json!({"s": "a ".repeat(4_000_000)}), Render, "max_items"),
            case("str.rsplit(sep) into 4,000,000 parts", "{{ s.rsplit(' ') | length }}", json!({"s": "a ".repeat(4_000_000)}), Render, "max_items"),
            case("str.splitlines() into 4,000,000 lines", "{{ s.splitlines() | length }}", json!({"s": "a\n".repeat(4_000_000)}), Render, "max_items"),
            // strftime_now with a format from data: a huge width, a format
            // that grows twelvefold (`%c`).
            case("strftime_now with a width of 10^9", "{{ strftime_now(f) }}", json!({"f": "%999999999Y"}), Render, "max_value_bytes"),
            case("strftime_now of a format that grows twelvefold", "{{ strftime_now(f) }}", json!({"f": "%c".repeat(1_000_000)}), Render, "max_value_bytes"),
            // A did-you-mean looks through every key (the data sits under
            // the prompt's own layers: they merged in quadratic time).
            case("a missing name among 100,000 top-level keys", "{{ missing_name }}", many_keys(100_000), Render, "missing_name"),
            case("40,000 nots", format!("{{{{ {}1 }}}}", "not ".repeat(40_000)), json!({}), Parse, "max_nesting"),
            case("a filter chain of 50,000", format!("{{{{ 1{} }}}}", "|abs".repeat(50_000)), json!({}), Parse, "max_nesting"),
            case("an attribute chain of 50,000", format!("{{{{ a{} }}}}", ".b".repeat(50_000)), json!({}), Parse, "max_nesting"),
            case("50,000 terms", format!("{{{{ 1{} }}}}", "+1".repeat(50_000)), json!({}), Parse, "max_nesting"),
            case("10,000 elifs", format!("{{% if x %}}a{}{{% endif %}}", "{% elif x %}b".repeat(10_000)), json!({"x": false}), Parse, "max_nesting"),
            case("a namespace string doubled with ~", doubling("'x'", "ns.v ~ ns.v"), json!({}), Render, "max_value_bytes"),
            case("a namespace string doubled with +", doubling("'x'", "ns.v + ns.v"), json!({}), Render, "max_value_bytes"),
            case("a namespace string doubled with * 2", doubling("'x'", "ns.v * 2"), json!({}), Render, "max_value_bytes"),
            case("a namespace string doubled with format", doubling("'x'", "'%s%s'|format(ns.v, ns.v)"), json!({}), Render, "max_value_bytes"),
            case("a namespace string doubled with join", doubling("'x'", "[ns.v, ns.v]|join"), json!({}), Render, "max_value_bytes"),
            case("a namespace list doubled with +", doubling("[1]", "ns.v + ns.v"), json!({}), Render, "max_items"),
            case("a namespace list nested twice per pass, printed", "{% set ns = namespace(l=[1]) %}{% for i in range(30) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l|string|length }}", json!({}), Render, "max_value_bytes"),
            case("a namespace map nested twice per pass, as JSON", "{% set ns = namespace(d={}) %}{% for i in range(30) %}{% set ns.d = {'a': ns.d, 'b': ns.d} %}{% endfor %}{{ ns.d|tojson|length }}", json!({}), Render, "max_value_bytes"),
            case("a straight run of 40 doubling sets", straight, json!({}), Render, "max_value_bytes"),
            case("a macro doubling its argument 40 deep", "{% macro f(s, n) %}{% if n %}{{ f(s ~ s, n - 1) }}{% endif %}{% endmacro %}{{ f('x', 40) }}", json!({}), Render, "max_value_bytes"),
            // minijinja (3.1) charges fuel for every byte an operator builds,
            // so the copying runs out of steps before the text built adds up
            // to 16 × max_output; a loop over the data runs without fuel, and
            // there that bound stops it.
            case("a string grown on each of 2,000,000 passes (quadratic copying)", "{% set ns = namespace(s='') %}{% for i in range(2000) %}{% for j in range(1000) %}{% set ns.s = ns.s ~ 'xxxxxxxxxxxxxxxxxxxx' %}{% endfor %}{% endfor %}", json!({}), Render, "max_steps"),
            case("a string grown on each pass over 200,000 items of the data (no fuel)", "{% set ns = namespace(s='') %}{% for x in items %}{% set ns.s = ns.s ~ x %}{% endfor %}{{ ns.s|length }}", json!({"items": vec!["xxxxxxxxxxxxxxxxxxxx"; 200_000]}), Render, "16 × the limit max_output"),
            case("a macro calling itself twice, 40 deep", "{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(40) }}", json!({}), Render, "max_steps"),
            case("a macro calling itself without end", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", json!({}), Render, "max_call_depth"),
            case("nested loops of 10^8 passes", "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}", json!({}), Render, "max_steps"),
            case("indent of a billion", "{{ ('x\\n' * 1000)|indent(1000000000) }}", json!({}), Render, "max_value_bytes"),
            case("a format width of a billion", "{{ '{:>1000000000}'.format(1) }}", json!({}), Render, "max_value_bytes"),
            case("replace with a huge replacement", "{{ (s * 1000)|replace('a', s * 100000)|length }}", json!({"s": "ab"}), Render, "max_value_bytes"),
            case("center of a billion", "{{ s.center(1000000000) }}", json!({"s": "x"}), Render, "max_value_bytes"),
            // Jinja2's `center` filter: the padded size checked first.
            case("center filter of a billion", "{{ s|center(1000000000) }}", json!({"s": "x"}), Render, "max_value_bytes"),
            case("center filter of 10**30", "{{ s|center(10**30) }}", json!({"s": "x"}), Render, "max_value_bytes"),
            // Jinja2's `wordwrap`, `urlize` and `xmlattr`: built within the bounds.
            case("wordwrap of 10 MB at width 1", "{{ (s * 5000000)|wordwrap(1)|length }}", json!({"s": "ab"}), Render, "max_value_bytes"),
            case("wordwrap with a wrapstring of 1 MB", "{{ (s * 1000)|wordwrap(1, wrapstring=w * 1000000)|length }}", json!({"s": "a b ", "w": "x"}), Render, "max_value_bytes"),
            case("urlize of 70,000 long links", "{{ (s * 70000)|urlize|length }}", json!({"s": format!("http://a.co/{} ", "x".repeat(200))}), Render, "max_value_bytes"),
            case("xmlattr of a value escaped sixfold", "{{ {'a': s * 10000000}|xmlattr|length }}", json!({"s": "\""}), Render, "max_value_bytes"),
            // A macro's `varargs` is one value: bounded by max_items.
            case("varargs of 200,000 arguments", "{% macro m() %}{{ varargs|length }}{% endmacro %}{{ m(*items) }}", json!({"items": vec![1; 200_000]}), Render, "max_items"),
            case("a varargs macro calling itself without end", "{% macro m() %}{{ m(*varargs, 1) }}{% endmacro %}{{ m() }}", json!({}), Render, "max_call_depth"),
            case("join of huge pieces", "{% set x = s * 10000000 %}{{ [x, x, x]|join(x)|length }}", json!({"s": "x"}), Render, "max_value_bytes"),
            case("a constant repeated to 100 MB", "{{ ('x' * 99999999)|length }}", json!({}), Parse, "max_value_bytes"),
            case("many constants of 10 MB", "{{ ('x' * 10000000)|length }}".repeat(5), json!({}), Parse, "max_value_bytes"),
            case("a string of 12 million characters as a list", "{{ (s * 2000000)|list|length }}", json!({"s": "xxxxxx"}), Render, "max_items"),
            case("a string split into 6 million words", "{{ (s * 3000000)|split|length }}", json!({"s": "x x "}), Render, "max_items"),
            case("printing 10^12 bytes", "{% for i in range(100000) %}{{ s * 10000000 }}{% endfor %}", json!({"s": "x"}), Render, "max_output"),
            case("a range of 10^9", "{{ range(1000000000)|length }}", json!({}), Render, "range has too many elements"),
        ],
    );
}

/// A loop over the data runs without fuel, but one instruction per pass
/// may walk a whole list or text: `xs|sum` inside `for x in xs` is
/// quadratic. teleprompt's filters, Python's methods and the reads of
/// long texts charge what they walk against `max_steps` (64 bytes a
/// step), and `x in xs` keeps the fuel (issue 29).
#[test]
fn work_per_pass_over_the_data_is_counted() {
    let xs: Vec<i64> = (0..200_000).collect();
    let long = "x".repeat(10_000_000);
    let unicode = "é".repeat(5_000_000);
    let data = json!({"xs": xs, "a": long, "b": long, "u": unicode});
    let messages: Vec<serde_json::Value> = (0..100_000)
        .map(|i| json!({"role": "user", "content": format!("message {i}")}))
        .collect();
    let chat = json!({ "messages": messages });
    let with = |name, template: &str, data: &serde_json::Value| {
        case(name, template, data.clone(), Render, "max_steps")
    };
    run(
        Syntax::Jinja,
        vec![
            with(
                "sum of the list on every pass",
                "{% for x in xs %}{% if xs|sum > 0 %}{% endif %}{% endfor %}",
                &data,
            ),
            with(
                "max of the list on every pass",
                "{% for x in xs %}{% if xs|max > x %}{% endif %}{% endfor %}",
                &data,
            ),
            with(
                "min of the list on every pass",
                "{% for x in xs %}{% if xs|min < x %}{% endif %}{% endfor %}",
                &data,
            ),
            with(
                "the list sorted on every pass",
                "{% for x in xs %}{% if (xs|sort)[0] == x %}{% endif %}{% endfor %}",
                &data,
            ),
            with(
                "the list searched with in on every pass",
                "{% for x in xs %}{% if x in xs %}{% endif %}{% endfor %}",
                &data,
            ),
            with(
                "two long texts compared on every pass",
                "{% for x in xs %}{% if a == b %}{% endif %}{% endfor %}",
                &data,
            ),
            with(
                "a long text searched with in on every pass",
                "{% for x in xs %}{% if 'y' in a %}{% endif %}{% endfor %}",
                &data,
            ),
            with(
                "str.count of a long text on every pass",
                "{% for x in xs %}{% if a.count('y') %}{% endif %}{% endfor %}",
                &data,
            ),
            with(
                "str.endswith of a long text on every pass",
                "{% for x in xs %}{% if a.endswith('y') %}{% endif %}{% endfor %}",
                &data,
            ),
            with(
                "a long text's characters on every pass",
                "{% for x in xs %}{% for c in u %}{% endfor %}{% endfor %}",
                &data,
            ),
            with(
                "length of a long Unicode text on every pass",
                "{% for x in xs %}{% if u|length < 0 %}{% endif %}{% endfor %}",
                &data,
            ),
            with(
                "the list joined on every pass",
                "{% for x in xs %}{% if (xs|join(','))|length < 0 %}{% endif %}{% endfor %}",
                &data,
            ),
            with(
                "the list as JSON on every pass",
                "{% for x in xs %}{% if (xs|tojson)|length < 0 %}{% endif %}{% endfor %}",
                &data,
            ),
        ],
    );
    run(
        Syntax::ChatTemplate,
        vec![with(
            "every message joined on every pass over the messages",
            "{% for m in messages %}{% if (messages|map(attribute='content')|join)|length < 0 %}{% endif %}{% endfor %}",
            &chat,
        )],
    );
}

/// `max_steps` counts where a template can run longer than its text and
/// data (`syntax/jinja/fuel.rs`): a loop over `range` or nested loops over
/// one list stop at the limit, while loops that each walk a part of the
/// data are bounded by the data and are not counted.
#[test]
fn max_steps_counts_only_templates_that_can_outrun_their_data() {
    use teleprompt::{LoadOptions, Prompt};
    let items: Vec<serde_json::Value> = (0..2000)
        .map(|i| json!({"name": format!("n{i}"), "tags": ["a", "b"]}))
        .collect();
    let data = json!({ "items": items });
    let limited = |body: &str| {
        let source = format!("---\nlimits:\n  max_steps: 1000\n---\n{body}");
        Prompt::from_source("p.j2", &source, &LoadOptions::default()).expect("loads")
    };
    let walk = limited(
        "{% for i in items %}{{ i.name }}{% for t in i.tags %}{{ t }}{% endfor %}{% endfor %}",
    );
    let text = walk
        .render(data.clone())
        .expect("a walk of the data is not counted");
    assert_eq!(
        text.text().len(),
        (0..2000).map(|i| format!("n{i}ab").len()).sum::<usize>()
    );
    for body in [
        "{% for i in range(2000) %}{{ i }}{% endfor %}",
        "{% for i in items %}{% for j in items %}{% endfor %}{% endfor %}",
        "{% set copy = items + items %}{% for i in copy %}{{ i.name }}{% endfor %}",
    ] {
        let error = limited(body).render(data.clone()).expect_err(body);
        assert!(error.to_string().contains("max_steps"), "{body}: {error}");
    }
}

/// A chat template's `+` on a safe string is rewritten into a filter call
/// at load (`python::markup`): the rewrite must keep the bounds and the
/// nesting limits of the operators it replaces.
#[test]
fn hostile_chat_template_markup_additions_stop_within_the_budget() {
    run(
        Syntax::ChatTemplate,
        vec![
            case("50,000 safe additions", format!("{{{{ 'x'|safe{} }}}}", " + 'y'".repeat(50_000)), json!({}), Parse, "max_nesting"),
            case("a safe string doubled with + through a namespace", doubling("'x'|safe", "ns.v|safe + ns.v"), json!({}), Render, "max_value_bytes"),
            case("a safe string doubled with + in a macro", "{% macro f(s, n) %}{% if n %}{{ f(s|safe + s, n - 1) }}{% endif %}{% endmacro %}{{ f('x', 40) }}", json!({}), Render, "max_value_bytes"),
            // minijinja charges fuel for the bytes `*` builds: the steps run out first.
            case("a safe addition printed 10^12 bytes", "{% for i in range(100000) %}{{ 'x'|safe + s * 10000000 }}{% endfor %}", json!({"s": "x"}), Render, "max_steps"),
        ],
    );
}

/// A chain of safe additions as long as the nesting limit allows renders,
/// flat (each `+` one more filter call in a row, not one more level).
#[test]
fn a_long_chain_of_safe_additions_renders() {
    use teleprompt::{LoadOptions, Prompt};
    let terms = 190;
    let body = format!("{{{{ '<'|safe{} }}}}", " + '\"'".repeat(terms));
    let options = LoadOptions::new().with_syntax(Syntax::ChatTemplate);
    let prompt = Prompt::from_source("chat_template.jinja", &body, &options).expect("loads");
    let text = prompt.render(json!({})).expect("renders").into_text();
    assert_eq!(text, format!("<{}", "&#34;".repeat(terms)));
}

/// A chain of 20,000 `set` names, each a key further into the data: the
/// load-time analysis of what the template reads stays linear (it held a
/// path of every length: 8,000 names took 1.8 GB, then overflowed the
/// stack).
#[test]
fn a_chain_of_set_names_each_a_key_further_loads_in_linear_time() {
    use teleprompt::{LoadOptions, Prompt};
    let _alone = crate::common::exclusive();
    let names = 20_000;
    // From the data, and from a value the template made (whose names the
    // fuel rule follows: a pass over the chain per link took 55 s).
    for first in ["x", "x|list"] {
        let mut body = format!("{{% set a0 = {first} %}}");
        for i in 1..names {
            body.push_str(&format!("{{% set a{i} = a{}.k %}}", i - 1));
        }
        body.push_str(&format!("{{{{ a{} }}}}", names - 1));
        let started = std::time::Instant::now();
        let prompt =
            Prompt::from_source("chain.j2", &body, &LoadOptions::default()).expect("loads");
        let _ = prompt.warnings();
        let inputs = prompt.inputs().expect("its inputs are known");
        assert!(inputs.names().any(|name| name == "x"));
        assert!(
            started.elapsed() < super::budget(),
            "{first}: {:?}",
            started.elapsed()
        );
    }
}

/// `check`'s append-only probes render a chat template a few dozen times:
/// a template that spends its whole step budget on every render costs them
/// one shared deadline (2 s), not a few dozen budgets.
#[test]
fn the_append_only_probes_of_a_slow_chat_template_share_one_deadline() {
    use teleprompt::{LoadOptions, Prompt};
    let _alone = crate::common::exclusive();
    // Close to the step budget on every render, and always within it, on
    // minijinja (the `with` block keeps it there: teleprompt's own
    // evaluator runs such loops many times faster).
    let body = "{% with kept = 1 %}{% endwith %}\
        {% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}\
        {% for m in messages %}{{ m.content }}{% endfor %}{% if messages|length > 3 %}!{% endif %}";
    let options = LoadOptions::new().with_syntax(Syntax::ChatTemplate);
    let prompt = Prompt::from_source("chat_template.jinja", body, &options).expect("loads");
    let one = std::time::Instant::now();
    prompt
        .render(serde_json::json!({"messages": []}))
        .expect("within the budget");
    eprintln!("one render: {:?}", one.elapsed());
    let started = std::time::Instant::now();
    let warnings = prompt.warnings();
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    eprintln!("the probes: {took:?}");
    // Cut short after 2 s, before the rewrite at the fourth message.
    assert!(
        warnings.iter().all(|w| w.kind() != Some("not-append-only")),
        "a probe cut short judges nothing: {warnings:?}"
    );
}

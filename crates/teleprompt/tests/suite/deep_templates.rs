//! Templates that nest deep: up to the bounds they load and render on a
//! thread with a small stack (2 MiB, Rust's default for spawned threads,
//! as in a tokio worker); past the bounds they are `parse` errors, never a
//! stack overflow that aborts the host.

use serde_json::json;
use teleprompt::{ErrorClass, LoadOptions, Prompt, Syntax};

/// Loads and renders `body` on a 2 MiB thread: the text, or the error's
/// class and message.
fn on_small_stack(syntax: Syntax, body: String) -> Result<String, (ErrorClass, String)> {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            let options = LoadOptions::new().with_syntax(syntax);
            let source = format!("---\n---\n{body}");
            Prompt::from_source("deep", &source, &options)
                .and_then(|prompt| prompt.render(json!({"x": true, "a": {"b": {"b": 1}}})))
                .map(|rendered| rendered.into_text())
                .map_err(|error| (error.class(), error.message().to_string()))
        })
        .expect("a thread")
        .join()
        .expect("no stack overflow")
}

fn refused(result: Result<String, (ErrorClass, String)>, words: &str) {
    match result {
        Err((ErrorClass::Parse, message)) => assert!(message.contains(words), "{message}"),
        other => panic!("expected a parse error with {words:?}, got {other:?}"),
    }
}

#[test]
fn jinja_chains_up_to_the_bound_render() {
    let depth = 190;
    for body in [
        format!("{{{{ 1{} }}}}", "|abs".repeat(depth)),
        format!("{{{{ {}1 }}}}", "not not ".repeat(depth / 2)),
        format!("{{{{ 1{} }}}}", "+1".repeat(depth)),
        // minijinja bounds brackets itself (about 70 deep).
        format!("{{{{ {}1{} }}}}", "(".repeat(60), ")".repeat(60)),
        format!(
            "{{% if not x %}}a{}{{% else %}}end{{% endif %}}",
            "{% elif not x %}b".repeat(500)
        ),
    ] {
        let text = on_small_stack(Syntax::Jinja, body.clone())
            .unwrap_or_else(|e| panic!("{}…: {e:?}", &body[..40]));
        assert!(!text.is_empty());
    }
}

#[test]
fn jinja_chains_past_the_bound_are_parse_errors() {
    for body in [
        format!("{{{{ 1{} }}}}", "|abs".repeat(50_000)),
        format!("{{{{ a{} }}}}", ".b".repeat(50_000)),
        format!("{{{{ {}1 }}}}", "not ".repeat(40_000)),
        format!("{{{{ 1{} }}}}", "+1".repeat(50_000)),
        format!("{{{{ {}1{} }}}}", "(".repeat(50_000), ")".repeat(50_000)),
    ] {
        refused(on_small_stack(Syntax::Jinja, body), "nests more than");
    }
    let elifs = "{% elif x %}b".repeat(10_000);
    refused(
        on_small_stack(Syntax::Jinja, format!("{{% if x %}}a{elifs}{{% endif %}}")),
        "elif branches",
    );
    // The dialects are checked too.
    refused(
        on_small_stack(
            Syntax::Django,
            format!("{{{{ 1{} }}}}", "|add:1".repeat(50_000)),
        ),
        "nests more than",
    );
}

#[test]
fn go_pipelines_are_bounded() {
    let text = on_small_stack(Syntax::Go, format!("{{{{ 1{} }}}}", " | print".repeat(99)))
        .expect("renders");
    assert_eq!(text, "1");
    refused(
        on_small_stack(
            Syntax::Go,
            format!("{{{{ 1{} }}}}", " | print".repeat(10_000)),
        ),
        "more than 100 commands",
    );
}

/// Templates that each call the next ten times, nine levels down: 10⁹
/// calls from a few hundred bytes, with no loop and within the depth
/// limit. Each call is a step of the render's budget.
fn call_tree(define: impl Fn(usize, &str) -> String, call: impl Fn(usize) -> String) -> String {
    let mut body = String::new();
    for level in 1..=9 {
        body.push_str(&define(level, &call(level - 1).repeat(10)));
    }
    body + &call(9)
}

#[test]
fn wide_call_trees_stop_at_the_step_budget() {
    // Timed, and as heavy as a hostile run: not beside those.
    let _alone = crate::common::exclusive();
    let go = call_tree(
        |level, calls| format!("{{{{define \"t{level}\"}}}}{calls}{{{{end}}}}"),
        |level| format!("{{{{template \"t{level}\"}}}}"),
    );
    let go = format!("{{{{define \"t0\"}}}}{{{{end}}}}{go}");
    let handlebars = call_tree(
        |level, calls| format!("{{{{#*inline \"t{level}\"}}}}{calls}{{{{/inline}}}}"),
        |level| format!("{{{{> t{level}}}}}"),
    );
    let handlebars = format!("{{{{#*inline \"t0\"}}}}{{{{/inline}}}}{handlebars}");
    for (syntax, body) in [(Syntax::Go, go), (Syntax::Handlebars, handlebars)] {
        let started = std::time::Instant::now();
        match on_small_stack(syntax, body) {
            Err((ErrorClass::Render, message)) => assert!(message.contains("steps"), "{message}"),
            other => panic!("{syntax:?}: expected the step budget, got {other:?}"),
        }
        assert!(
            started.elapsed().as_secs() < 30,
            "{syntax:?} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn deep_recursion_stops_at_the_call_depth() {
    let jinja =
        "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(100000) }}";
    let go = "{{define \"f\"}}{{template \"f\" .}}{{end}}{{template \"f\" .}}";
    let handlebars = "{{#*inline \"f\"}}{{> f}}{{/inline}}{{> f}}";
    for (syntax, body) in [
        (Syntax::Jinja, jinja),
        (Syntax::Go, go),
        (Syntax::Handlebars, handlebars),
    ] {
        match on_small_stack(syntax, body.to_string()) {
            Err((ErrorClass::Render, _)) => {}
            other => panic!("{syntax:?}: expected a render error, got {other:?}"),
        }
    }
}

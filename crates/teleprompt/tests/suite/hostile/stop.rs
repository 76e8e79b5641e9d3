//! Renders the host stops: a deadline ([`RenderOptions::with_deadline`])
//! or a cancel token ([`CancelToken`]) ends a render in flight within a
//! few milliseconds, in every syntax and on both of Jinja's paths, with a
//! `render` error of kind `timeout` or `cancelled`. The templates would
//! run for minutes: `max_steps` is raised out of the way (a host that
//! bounds renders by time rather than steps).

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use teleprompt::limits::Limits;
use teleprompt::{CancelToken, LoadOptions, Prompt, RenderOptions, Syntax};

/// How long after its deadline a render may still run: the checks come
/// every 256 steps, reads or prints (an unoptimized build is slower).
fn grace() -> Duration {
    if cfg!(debug_assertions) {
        Duration::from_millis(1500)
    } else {
        Duration::from_millis(300)
    }
}

fn load(syntax: Syntax, template: &str) -> Prompt {
    let limits = Limits {
        max_steps: u64::MAX,
        ..Limits::DEFAULT
    };
    let options = LoadOptions::new().with_syntax(syntax).with_limits(limits);
    Prompt::from_source("stopped", template, &options).expect("loads")
}

fn list(n: usize) -> Value {
    Value::Array((0..n).map(Value::from).collect())
}

/// Renders on a thread of its own (as serve and batch do), with a
/// deadline 100 ms away: the render ends with the deadline's error soon
/// after it.
fn stops_at_its_deadline(name: &str, syntax: Syntax, template: &str, data: Value) {
    let prompt = load(syntax, template);
    let deadline = Duration::from_millis(100);
    let (elapsed, result) = std::thread::spawn(move || {
        let start = Instant::now();
        let options = RenderOptions::new().with_deadline(start + deadline);
        let result = prompt.render_with(data, &options);
        (start.elapsed(), result)
    })
    .join()
    .expect("no panic");
    let error = result.expect_err(name);
    assert_eq!(error.kind(), Some("timeout"), "{name}: {error}");
    assert!(
        error.message().contains("ran past its deadline of"),
        "{name}: {error}"
    );
    assert!(
        elapsed < deadline + grace(),
        "{name}: stopped after {elapsed:?}"
    );
}

#[test]
fn renders_stop_at_their_deadline_in_every_syntax() {
    let _alone = crate::common::exclusive();
    let cases: [(&str, Syntax, &str, Value); 8] = [
        (
            "Go: range nested three deep over the data",
            Syntax::Go,
            "{{range .xs}}{{range $.xs}}{{range $.xs}}{{end}}{{end}}{{end}}",
            json!({"xs": list(2000)}),
        ),
        (
            "Handlebars: each nested three deep over the data",
            Syntax::Handlebars,
            "{{#each xs}}{{#each @root.xs}}{{#each @root.xs}}{{/each}}{{/each}}{{/each}}",
            json!({"xs": list(2000)}),
        ),
        (
            "Jinja with fuel: ranges nested, printing nothing",
            Syntax::Jinja,
            "{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100000) %}{% endfor %}{% endfor %}{% endfor %}",
            json!({}),
        ),
        (
            "Jinja with fuel: loops nested over one list of the data",
            Syntax::Jinja,
            "{% for a in xs %}{% for b in xs %}{% for c in xs %}{% endfor %}{% endfor %}{% endfor %}",
            json!({"xs": list(2000)}),
        ),
        (
            "Jinja with fuel: a macro calling itself twice, printing",
            Syntax::Jinja,
            "{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(60) }}",
            json!({}),
        ),
        (
            "Jinja without fuel: sum of the list on every pass over it",
            Syntax::Jinja,
            "{% for x in xs %}{% if xs|sum > 0 %}{% endif %}{% endfor %}",
            json!({"xs": list(200_000)}),
        ),
        (
            "Jinja without fuel: the list as JSON on every pass over it",
            Syntax::Jinja,
            "{% for x in xs %}{{ xs|tojson|length }}{% endfor %}",
            json!({"xs": list(200_000)}),
        ),
        (
            "chat template: every message joined on every pass",
            Syntax::ChatTemplate,
            "{% for m in messages %}{{ messages|map(attribute='content')|join|length }}{% endfor %}",
            json!({"messages": (0..50_000).map(|i| json!({"role": "user", "content": format!("m{i}")})).collect::<Vec<_>>()}),
        ),
    ];
    for (name, syntax, template, data) in cases {
        stops_at_its_deadline(name, syntax, template, data);
    }
}

#[test]
fn a_cancelled_token_stops_the_render_in_flight() {
    let _alone = crate::common::exclusive();
    for (syntax, template, data) in [
        (
            Syntax::Go,
            "{{range .xs}}{{range $.xs}}{{range $.xs}}{{end}}{{end}}{{end}}",
            json!({"xs": list(2000)}),
        ),
        (
            Syntax::Jinja,
            "{% for a in xs %}{% for b in xs %}{% for c in xs %}{{ c }}{% endfor %}{% endfor %}{% endfor %}",
            json!({"xs": list(2000)}),
        ),
    ] {
        let prompt = load(syntax, template);
        let token = CancelToken::new();
        let options = RenderOptions::new().with_cancel(token.clone());
        let render = std::thread::spawn(move || {
            let result = prompt.render_with(data, &options);
            (Instant::now(), result)
        });
        std::thread::sleep(Duration::from_millis(50));
        let cancelled = Instant::now();
        token.cancel();
        let (ended, result) = render.join().expect("no panic");
        let error = result.expect_err("cancelled");
        assert_eq!(error.kind(), Some("cancelled"), "{syntax}: {error}");
        assert_eq!(error.message(), "the render was cancelled by the host");
        assert!(ended.duration_since(cancelled) < grace(), "{syntax}");
    }
}

#[test]
fn a_stopped_render_is_not_recovered_and_a_finished_one_is_kept() {
    // `on_error: original` hides render errors, not the host's stop.
    let prompt = Prompt::from_source(
        "p.j2",
        "---\non_error: original\n---\n{% for x in xs %}{{ x }}{% endfor %}",
        &LoadOptions::default(),
    )
    .expect("loads");
    let token = CancelToken::new();
    let ok = prompt
        .render_with(
            json!({"xs": [1, 2]}),
            &RenderOptions::new().with_cancel(token.clone()),
        )
        .expect("not cancelled yet");
    assert_eq!(ok.text(), "12");
    token.cancel();
    let error = prompt
        .render_with(
            json!({"xs": list(10_000)}),
            &RenderOptions::new().with_cancel(token),
        )
        .expect_err("cancelled");
    assert_eq!(error.kind(), Some("cancelled"));
    // A deadline already past stops even a short render.
    let past = RenderOptions::new().with_deadline(Instant::now());
    let error = prompt
        .render_with(json!({"xs": list(10_000)}), &past)
        .expect_err("late");
    assert_eq!(error.kind(), Some("timeout"));
}

#[test]
fn a_token_cancelled_before_the_render_stops_even_a_short_one() {
    // Every evaluator looks at the token when it starts, not only every
    // few hundred steps: the Jinja direct path, Go, Handlebars.
    for (syntax, template) in [
        (Syntax::Jinja, "{% for i in range(3) %}{{ i }}{% endfor %}"),
        (Syntax::Go, "{{range .xs}}{{.}}{{end}}"),
        (Syntax::Handlebars, "{{#each xs}}{{this}}{{/each}}"),
    ] {
        let token = CancelToken::new();
        token.cancel();
        let error = load(syntax, template)
            .render_with(
                json!({"xs": [1, 2]}),
                &RenderOptions::new().with_cancel(token),
            )
            .expect_err("cancelled");
        assert_eq!(error.kind(), Some("cancelled"), "{syntax}: {error}");
    }
}

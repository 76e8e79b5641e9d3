//! Rendering the same `Data` again: from a layer's second Jinja render on,
//! the layer keeps the objects the template read (see `syntax/jinja/value.rs`).
//! Every render of the same data must give what the first gave: text,
//! errors with their paths and suggestions, merged layers, chat messages,
//! and renders from several threads at once.

use serde_json::{json, Value};
use teleprompt::{Data, LoadOptions, Prompt};

fn prompt(name: &str, source: &str) -> Prompt {
    Prompt::from_source(name, source, &LoadOptions::default()).expect("the prompt loads")
}

/// Renders `data` `times` times and returns the results, each as its text
/// or its error's message, path and suggestion.
fn renders(prompt: &Prompt, data: &Data, times: usize) -> Vec<String> {
    (0..times)
        .map(|_| match prompt.render(data) {
            Ok(rendered) => rendered.text().to_string(),
            Err(error) => format!(
                "error: {} | path {:?} | {:?} | {:?}",
                error.message(),
                error.path(),
                error.suggestion(),
                error.location()
            ),
        })
        .collect()
}

fn assert_same(results: &[String], first: &str) {
    for (round, result) in results.iter().enumerate() {
        assert_eq!(result, first, "render {} of the same data", round + 1);
    }
}

/// An object of 20 keys (past the few that are scanned) with one misspelt.
fn wide() -> Value {
    let mut map = serde_json::Map::new();
    for i in 0..20 {
        map.insert(format!("field_{i:02}"), json!(i));
    }
    map.insert("title".into(), json!("Fix login"));
    json!({ "issue": map })
}

#[test]
fn a_wide_object_reads_and_misses_alike_every_time() {
    let data = Data::new(wide());
    let found = prompt(
        "p.j2",
        "{{ issue.field_15 }} {{ issue.title }} {{ issue|length }}",
    );
    assert_same(&renders(&found, &data, 4), "15 Fix login 21");
    let missing = prompt("p.j2", "{{ issue.titel }}");
    let results = renders(&missing, &data, 4);
    assert!(
        results[0].contains("issue has no key \"titel\""),
        "{}",
        results[0]
    );
    assert!(
        results[0].contains("did you mean \\\"issue.title\\\"?"),
        "{}",
        results[0]
    );
    assert_same(&results, &results[0]);
}

#[test]
fn a_long_array_reads_its_elements_alike_every_time() {
    let items: Vec<Value> = (0..100)
        .map(|i| json!({"name": format!("item {i}"), "tags": [i, i + 1]}))
        .collect();
    let data = Data::new(json!({ "items": items }));
    let one = prompt(
        "p.j2",
        "{{ items[70].name }} {{ items[-1].tags[1] }} {{ items[33].tags|sum }}",
    );
    assert_same(&renders(&one, &data, 4), "item 70 100 67");
    let all = prompt(
        "p.j2",
        "{% for item in items %}{{ item.name[5:] }}{% if not loop.last %},{% endif %}{% endfor %}",
    );
    let expected: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    assert_same(&renders(&all, &data, 4), &expected.join(","));
    let past = prompt("p.j2", "{{ items[100].name }}");
    let results = renders(&past, &data, 3);
    assert!(results[0].starts_with("error: "), "{}", results[0]);
    assert_same(&results, &results[0]);
}

#[test]
fn merged_layers_read_alike_every_time() {
    let defaults = Data::new(json!({
        "user": {"name": "guest", "tier": "free", "prefs": {"tone": "plain", "lang": "en"}},
        "limit": 10
    }));
    let data = Data::new(json!({
        "user": {"name": "Sam", "prefs": {"tone": "warm"}},
        "question": "Why?"
    }))
    .over_data(&defaults);
    let template = prompt(
        "p.j2",
        "{{ user.name }}/{{ user.tier }}/{{ user.prefs.tone }}/{{ user.prefs.lang }}/{{ limit }}/{{ question }}\n\
         {% for key in user.prefs %}{{ key }} {% endfor %}{{ user.prefs|tojson }}",
    );
    assert_same(
        &renders(&template, &data, 4),
        "Sam/free/warm/en/10/Why?\ntone lang {\"tone\": \"warm\", \"lang\": \"en\"}",
    );
    let missing = prompt("p.j2", "{{ user.prefs.tones }}");
    let results = renders(&missing, &data, 3);
    assert!(
        results[0].contains("user.prefs has no key \"tones\""),
        "{}",
        results[0]
    );
    assert!(results[0].contains("user.prefs.tone"), "{}", results[0]);
    assert_same(&results, &results[0]);
}

#[test]
fn chat_messages_read_as_transformers_hands_them_every_time() {
    let data = Data::new(json!({
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": null, "reasoning": "think", "tool_calls": [{"id": "1"}]}
        ]
    }));
    let template = prompt(
        "chat_template.jinja",
        "{% for m in messages %}{{ m.role }}:{{ m.content is defined }}:{{ m.reasoning_content }}:{{ m|list|join(',') }};{% endfor %}",
    );
    assert_same(
        &renders(&template, &data, 4),
        "user:True::role,content;assistant:False:think:thinking,role,reasoning,tool_calls,reasoning_content;",
    );
}

#[test]
fn threads_render_the_same_data_at_once() {
    let documents: Vec<Value> = (0..50)
        .map(|i| json!({"title": format!("doc {i}"), "tags": ["a", "b", "c"]}))
        .collect();
    let data = Data::new(json!({ "documents": documents }));
    let template = prompt(
        "p.j2",
        "{% for d in documents %}{{ d.title }}[{{ d.tags|join('+') }}]{% endfor %}",
    );
    let expected = renders(&template, &data, 1).remove(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| assert_same(&renders(&template, &data, 50), &expected));
        }
    });
}

#[test]
fn turns_of_one_context_read_its_data_alike() {
    use teleprompt::PromptContext;
    let context = PromptContext::new()
        .data(json!({"issue": {"title": "Fix login", "labels": ["bug", "auth"]}}))
        .expect("data")
        .assistant(json!({"name": "Ava"}))
        .expect("namespace");
    let template = prompt(
        "p.j2",
        "{{ assistant.name }}: {{ issue.title }} [{{ issue.labels|join(', ') }}] turn {{ run.turn_number }}",
    );
    for turn in 1..=4 {
        let rendered = template
            .render_turn(&context.clone().turn(turn))
            .expect("renders");
        assert_eq!(
            rendered.text(),
            format!("Ava: Fix login [bug, auth] turn {turn}")
        );
    }
    let missing = prompt("p.j2", "{{ issue.titel }}");
    for turn in 1..=3 {
        let error = missing
            .render_turn(&context.clone().turn(turn))
            .expect_err("a misspelt key");
        assert_eq!(error.path(), Some("issue.titel"), "turn {turn}");
        assert_eq!(
            error.suggestion(),
            Some("did you mean \"issue.title\"?"),
            "turn {turn}"
        );
    }
}

#[test]
fn deep_and_huge_data_read_alike_every_time() {
    // 120 levels of nesting (data stops at 128), read to the bottom.
    let mut deep = json!({"leaf": "bottom"});
    for _ in 0..120 {
        deep = json!({ "next": deep });
    }
    let path = format!("{{{{ d{}.leaf }}}}", ".next".repeat(120));
    let data = Data::new(json!({ "d": deep }));
    assert_same(&renders(&prompt("p.j2", &path), &data, 3), "bottom");
    // 200,000 elements: one read near the end, its length, and a missing
    // index, alike on the first render and on those that keep the list.
    let items: Vec<Value> = (0..200_000).map(|i| json!({ "n": i })).collect();
    let data = Data::new(json!({ "items": items }));
    let one = prompt("p.j2", "{{ items[199998].n }} {{ items|length }}");
    assert_same(&renders(&one, &data, 3), "199998 200000");
    let past = renders(&prompt("p.j2", "{{ items[200000].n }}"), &data, 3);
    assert!(past[0].starts_with("error: "), "{}", past[0]);
    assert_same(&past, &past[0]);
}

//! Source maps (`Rendered::source_map`): every byte of every message
//! belongs to exactly one template span (or the history), in every
//! syntax; the spans are where the text is in the file as written; a
//! printed value of the data names its path.

use serde_json::{json, Value};
use teleprompt::messages::{SegmentKind, SourceMap};
use teleprompt::{LoadOptions, Prompt, RenderOptions};

/// The map of `source` (file `name`) rendered over `data`, checked: each
/// part covered whole, in order, without overlap; a literal text's bytes
/// are in the file at its span; a value with a path prints that value
/// of the data.
fn mapped(name: &str, source: &str, data: Value) -> (SourceMap, String) {
    let prompt = Prompt::from_source(name, source, &LoadOptions::default())
        .unwrap_or_else(|error| panic!("{name}: {error}"));
    let options = RenderOptions::new().with_source_map(true);
    let rendered = prompt
        .render_with(data.clone(), &options)
        .unwrap_or_else(|error| panic!("{name}: {error}"));
    let map = rendered.source_map().expect("asked for").clone();
    let plain = prompt.render(data.clone()).unwrap();
    assert_eq!(
        plain.text(),
        rendered.text(),
        "{name}: a map changes nothing"
    );
    assert!(plain.source_map().is_none());
    let conversation = rendered.conversation();
    assert_eq!(map.messages.len(), conversation.len(), "{name}");
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let mut annotated = String::new();
    let mut exact = 0;
    let mut texts = 0;
    for (message, entry) in map.messages.iter().zip(&conversation) {
        assert_eq!(message.role, entry.role());
        annotated.push_str(&format!("## {}\n", message.role.as_str()));
        for part in &message.parts {
            let mut at = 0;
            for segment in &part.segments {
                assert_eq!(segment.start, at, "{name}: segments follow each other");
                assert!(segment.end > segment.start, "{name}: no empty segment");
                at = segment.end;
                let text = &part.text[segment.start..segment.end];
                texts += usize::from(segment.kind == SegmentKind::Text);
                let origin = match (map.span_of(segment), segment.kind) {
                    (Some(span), kind) => {
                        assert_eq!(span.file, name);
                        let line = lines[span.line - 1];
                        let from: usize =
                            line.chars().take(span.column - 1).map(char::len_utf8).sum();
                        let offset: usize = lines[..span.line - 1]
                            .iter()
                            .map(|l| l.len())
                            .sum::<usize>()
                            + from;
                        let written = &source[offset..offset + span.len];
                        if kind == SegmentKind::Text {
                            // Byte for byte where the text stands as written.
                            exact += usize::from(written == text);
                            assert!(
                                written.contains(text),
                                "{name}: {text:?} is not in {written:?}"
                            );
                        } else {
                            assert_eq!(span.source.as_deref(), Some(written), "{name}");
                        }
                        format!("{:?} {}:{}", kind, span.line, span.column)
                    }
                    (None, kind) => format!("{kind:?}"),
                };
                let path = match map.path_of(segment) {
                    Some(path) => {
                        if segment.kind == SegmentKind::Value {
                            let value =
                                lookup(&data, path).unwrap_or_else(|| panic!("{name}: {path}"));
                            let printed = match value {
                                Value::String(text) => text.clone(),
                                other => other.to_string(),
                            };
                            assert!(
                                printed.contains(text),
                                "{name}: {path} is {printed:?}, not {text:?}"
                            );
                        }
                        format!(" {path}")
                    }
                    None => String::new(),
                };
                annotated.push_str(&format!("{origin}{path} {text:?}\n"));
            }
            assert_eq!(at, part.text.len(), "{name}: the part is covered whole");
        }
    }
    assert_eq!(
        exact, texts,
        "{name}: every literal text has its own bytes' span"
    );
    (map, annotated)
}

/// The value at a path as [`SourceMap`] writes it (`a.b[1]["c d"]`).
fn lookup<'a>(data: &'a Value, path: &str) -> Option<&'a Value> {
    let mut value = data;
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let key = &after[..end];
            value = match key.parse::<usize>() {
                Ok(index) => value.get(index)?,
                Err(_) => value.get(serde_json::from_str::<String>(key).ok()?)?,
            };
            rest = &after[end + 1..];
        } else {
            let rest_trimmed = rest.strip_prefix('.').unwrap_or(rest);
            let end = rest_trimmed.find(['.', '[']).unwrap_or(rest_trimmed.len());
            value = value.get(&rest_trimmed[..end])?;
            rest = &rest_trimmed[end..];
        }
    }
    Some(value)
}

/// The data of every case: an issue to triage.
fn issue() -> Value {
    json!({"issue": {"number": 7, "title": "Crash on start", "labels": ["bug", "ui"], "body": "  It crashes.  "}})
}

#[test]
fn jinja_on_the_direct_path() {
    // No role calls: the whole template lowers onto the engine, which
    // knows where each printed value is in the data.
    let source = "---\ndescription: a map\n---\nIssue #{{ issue.number }}: {{ issue.title }}\n{% for label in issue.labels %}- {{ label }}\n{% endfor %}{{ issue.body | trim }}";
    let (_, annotated) = mapped("triage.j2", source, issue());
    expect(
        &annotated,
        "\
         ## user\n\
         Text 4:1 \"Issue #\"\n\
         Value 4:11 issue.number \"7\"\n\
         Text 4:26 \": \"\n\
         Value 4:31 issue.title \"Crash on start\"\n\
         Text 4:45 \"\\n\"\n\
         Text 5:32 \"- \"\n\
         Value 5:37 issue.labels[0] \"bug\"\n\
         Text 5:45 \"\\n\"\n\
         Text 5:32 \"- \"\n\
         Value 5:37 issue.labels[1] \"ui\"\n\
         Text 5:45 \"\\n\"\n\
         Value 6:29 \"It crashes.\"\n\
         ",
    );
}

#[test]
fn jinja_on_minijinja() {
    // Role calls render on minijinja: spans as exact, no data paths (the
    // span's source shows the expression).
    let source = "---\ndescription: a map\n---\n{{ role('system') }}You triage issues.\n{{ role('user') }}Issue #{{ issue.number }}: {{ issue.title }}\n{% for label in issue.labels %}- {{ label | upper }}\n{% endfor %}";
    let (_, annotated) = mapped("triage.j2", source, issue());
    expect(
        &annotated,
        "\
         ## system\n\
         Text 4:21 \"You triage issues.\"\n\
         ## user\n\
         Text 5:19 \"Issue #\"\n\
         Value 5:29 \"7\"\n\
         Text 5:44 \": \"\n\
         Value 5:49 \"Crash on start\"\n\
         Text 5:63 \"\\n\"\n\
         Text 6:32 \"- \"\n\
         Value 6:37 \"BUG\"\n\
         Text 6:53 \"\\n\"\n\
         Text 6:32 \"- \"\n\
         Value 6:37 \"UI\"\n\
         ",
    );
}

#[test]
fn go_templates() {
    let source = "---\nsyntax: go\n---\n{{ role \"system\" }}You triage issues.\n{{ role \"user\" }}Issue #{{ .issue.number }}: {{ .issue.title }}\n{{ range $i, $l := .issue.labels }}- {{ $l }}\n{{ end }}";
    let (_, annotated) = mapped("triage.md", source, issue());
    expect(
        &annotated,
        "\
         ## system\n\
         Text 4:20 \"You triage issues.\"\n\
         ## user\n\
         Text 5:18 \"Issue #\"\n\
         Value 5:25 issue.number \"7\"\n\
         Text 5:44 \": \"\n\
         Value 5:46 issue.title \"Crash on start\"\n\
         Text 5:64 \"\\n\"\n\
         Text 6:36 \"- \"\n\
         Value 6:38 issue.labels[0] \"bug\"\n\
         Text 6:46 \"\\n\"\n\
         Text 6:36 \"- \"\n\
         Value 6:38 issue.labels[1] \"ui\"\n\
         ",
    );
}

#[test]
fn handlebars_with_an_indented_partial() {
    let source = "---\nsyntax: handlebars\n---\n{{#*inline \"labels\"}}{{#each issue.labels}}- {{this}}\n{{/each}}{{/inline}}{{role \"system\"}}You triage issues.\n{{role \"user\"}}Issue #{{issue.number}}: {{issue.title}}\n  {{> labels}}\nThat is all.";
    let (_, annotated) = mapped("triage.hbs", source, issue());
    expect(
        &annotated,
        "\
         ## system\n\
         Text 5:38 \"You triage issues.\"\n\
         ## user\n\
         Text 6:16 \"Issue #\"\n\
         Value 6:23 issue.number \"7\"\n\
         Text 6:39 \": \"\n\
         Value 6:41 issue.title \"Crash on start\"\n\
         Text 6:56 \"\\n\"\n\
         Text 7:1 \"  \"\n\
         Text 4:44 \"- \"\n\
         Value 4:46 issue.labels[0] \"bug\"\n\
         Text 4:54 \"\\n\"\n\
         Text 7:1 \"  \"\n\
         Text 4:44 \"- \"\n\
         Value 4:46 issue.labels[1] \"ui\"\n\
         Text 4:54 \"\\n\"\n\
         Text 8:1 \"That is all.\"\n\
         ",
    );
}

#[test]
fn history_messages_are_their_own() {
    let source = "{{ role('system') }}Be brief.{{ history() }}{{ role('user') }}Go on.";
    let prompt = Prompt::from_source("chat.j2", source, &LoadOptions::default()).unwrap();
    let context = teleprompt::PromptContext::new().with_history(vec![
        serde_json::from_value(json!({"role": "user", "content": "Hi"})).unwrap(),
        serde_json::from_value(json!({"role": "assistant", "content": "Hello"})).unwrap(),
    ]);
    let rendered = prompt
        .render_turn_with(&context, &RenderOptions::new().with_source_map(true))
        .unwrap();
    let map = rendered.source_map().unwrap();
    let kinds: Vec<(Option<usize>, SegmentKind, Option<&str>)> = map
        .segments()
        .map(|(_, _, segment)| {
            let message = map
                .messages
                .iter()
                .find(|m| m.parts.iter().any(|p| p.segments.contains(segment)));
            (
                message.and_then(|m| m.history),
                segment.kind,
                map.path_of(segment),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (None, SegmentKind::Text, None),
            (Some(0), SegmentKind::History, Some("history[0].content")),
            (Some(1), SegmentKind::History, Some("history[1].content")),
            (None, SegmentKind::Text, None),
        ]
    );
}

/// `actual` is `expected`; with `TELEPROMPT_BLESS=1` set, prints it to copy.
fn expect(actual: &str, expected: &str) {
    if actual != expected {
        println!("----\n{actual}----");
    }
    assert_eq!(actual, expected);
}

/// Two turns of a conversation: the second a day and an hour later,
/// with an exchange appended to the history.
fn two_turns(prompt: &Prompt) -> (teleprompt::Rendered, teleprompt::Rendered) {
    use teleprompt::context::Clock;
    let message = |role: &str, content: &str| -> teleprompt::HistoryMessage {
        serde_json::from_value(json!({"role": role, "content": content})).unwrap()
    };
    let mut history = vec![message("user", "Fix the crash.")];
    let clock = |at: &str| Clock::parse(at).unwrap();
    let options = RenderOptions::new().with_source_map(true);
    let first = teleprompt::PromptContext::new()
        .clock(clock("2026-01-05T09:00:00Z"))
        .turn(1)
        .with_history(history.clone());
    let first = prompt.render_turn_with(&first, &options).unwrap();
    history.push(message("assistant", "Looking at it."));
    history.push(message("user", "Any news?"));
    let second = teleprompt::PromptContext::new()
        .clock(clock("2026-01-06T10:00:00Z"))
        .turn(2)
        .with_history(history);
    let second = prompt.render_turn_with(&second, &options).unwrap();
    (first, second)
}

#[test]
fn the_stable_prefix_names_what_changed_first() {
    // The clock first: the prefix is lost at the date, which the map
    // places in the template and the data.
    let source = "---\nsyntax: go\n---\n{{ role \"system\" }}Today is {{ .system.current_date }}.\nYou fix bugs in the inventory service. Read the failing test first.{{ history }}";
    let prompt = Prompt::from_source("agent.md", source, &LoadOptions::default()).unwrap();
    let (first, second) = two_turns(&prompt);
    let prefix = second.stable_prefix(&first);
    assert_eq!(prefix.bytes, "Today is 2026-01-0".len());
    assert_eq!(prefix.messages, 0);
    assert!(!prefix.through_history);
    let change = prefix.change.expect("the turns differ");
    assert_eq!((change.message, change.part, change.line), (0, 0, 1));
    assert_eq!(change.path.as_deref(), Some("system.current_date"));
    let span = change.span.expect("mapped");
    assert_eq!((span.line, span.column), (4, 29));
    assert_eq!(span.source.as_deref(), Some("{{ .system.current_date }}"));

    // The clock after the fixed text, in the user's turn: everything up to
    // the end of the history is kept.
    let fixed = "---\nsyntax: go\n---\n{{ role \"system\" }}You fix bugs in the inventory service. Read the failing test first.{{ history }}{{ role \"user\" }}(It is {{ .system.current_date }}.)";
    let prompt = Prompt::from_source("agent.md", fixed, &LoadOptions::default()).unwrap();
    let (first, second) = two_turns(&prompt);
    let prefix = second.stable_prefix(&first);
    assert!(prefix.through_history, "{prefix:?}");
    assert_eq!(
        prefix.messages, 2,
        "the system message and the history's first"
    );
    assert_eq!(prefix.change.as_ref().map(|change| change.message), Some(2));
    // A turn against itself keeps all of it.
    let same = second.stable_prefix(&second);
    assert!(same.change.is_none() && same.through_history);
    assert_eq!(same.messages, second.conversation().len());
}

#[test]
fn a_chat_template_s_prefix_is_its_text() {
    let template = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}";
    let prompt =
        Prompt::from_source("chat_template.jinja", template, &LoadOptions::default()).unwrap();
    let options = RenderOptions::new().with_source_map(true);
    let turn = |messages: Value| {
        prompt
            .render_with(
                json!({"messages": messages, "add_generation_prompt": true}),
                &options,
            )
            .unwrap()
    };
    let first = turn(json!([{"role": "user", "content": "Hi"}]));
    let second = turn(json!([
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
    ]));
    let prefix = second.stable_prefix(&first);
    assert_eq!(prefix.bytes, first.text().len());
    assert!(prefix.through_history);
    let change = prefix.change.expect("it grew");
    assert_eq!(change.offset, first.text().len());
    assert_eq!(
        change.span.map(|span| span.column),
        Some(43),
        "the reply: `m.content`"
    );
}

#[test]
fn millions_of_one_byte_values_keep_the_trace_bounded() {
    // 1,100,000 values of one byte each: the trace stops at its bound, and
    // the map still covers the text (the rest without a span).
    let source = "---\nsyntax: go\n---\n{{ range .items }}{{ . }}{{ end }}";
    let prompt = Prompt::from_source("many.md", source, &LoadOptions::default()).unwrap();
    let items: Vec<&str> = std::iter::repeat_n("x", 1_100_000).collect();
    let rendered = prompt
        .render_with(
            json!({"items": items}),
            &RenderOptions::new().with_source_map(true),
        )
        .unwrap();
    let map = rendered.source_map().unwrap();
    let part = &map.messages[0].parts[0];
    assert_eq!(part.text.len(), 1_100_000);
    let last = part.segments.last().unwrap();
    assert_eq!(last.end, 1_100_000, "covered whole");
    assert_eq!(
        (last.kind, last.span),
        (SegmentKind::Fixed, None),
        "the rest past the bound"
    );
    assert!(part.segments.len() <= (1 << 20) + 1);
}

#[test]
fn a_long_output_on_minijinja_is_the_whole_template_s() {
    // Past the trace's bound in bytes, minijinja's spans are not asked
    // for (it notes them without a bound): one segment, the template's.
    let source = "{% macro x() %}{{ 'y' * 1000 }}{% endmacro %}{% for i in range(1200) %}{{ x() }}{% endfor %}";
    let prompt = Prompt::from_source("long.j2", source, &LoadOptions::default()).unwrap();
    let rendered = prompt
        .render_with(json!({}), &RenderOptions::new().with_source_map(true))
        .unwrap();
    let map = rendered.source_map().unwrap();
    let part = &map.messages[0].parts[0];
    assert_eq!(part.text.len(), 1_200_000);
    assert_eq!(part.segments.len(), 1);
    let span = map.span_of(&part.segments[0]).unwrap();
    assert_eq!((span.line, span.column, span.len), (1, 1, source.len()));
}

#[test]
fn dotprompt_parts_kept_as_printed_are_found() {
    // Dotprompt keeps a part's whitespace as printed: the user's text
    // starts with a line break after blank lines the split dropped.
    let source = "---\ninput:\n  schema:\n    question: string\n---\n{{role \"system\"}}\nBe brief.\n\n\n{{role \"user\"}}\n\n\n{{question}}\n";
    let (map, annotated) = mapped("ask.prompt", source, json!({"question": "Why?"}));
    assert!(
        map.segments()
            .all(|(_, _, segment)| segment.kind != SegmentKind::Fixed),
        "{annotated}"
    );
}

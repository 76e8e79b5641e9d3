//! Cache breakpoints (issue 26): `cache_breakpoint()` in every syntax ends
//! the text before it as a prefix a provider should cache. The Anthropic
//! shape marks the block it ends `cache_control` (the system prompt turns
//! into blocks to carry one); the text and the OpenAI shape are what they
//! are without it; misplaced breakpoints are errors that say where to put
//! them.

use serde_json::{json, Value};
use teleprompt::{ErrorClass, LoadOptions, OutputFormat, Prompt, PromptContext};

/// The same prompt in each syntax: fixed instructions, a breakpoint, the
/// day; the question, a breakpoint at its end.
const PROMPTS: &[(&str, &str)] = &[
    (
        "support.j2",
        "{{ role(\"system\") }}You are a support agent.\nBe brief.\n{{ cache_breakpoint() }}\nToday is {{ day }}.\
         {{ role(\"user\") }}{{ question }}{{ cache_breakpoint() }}",
    ),
    (
        "support.gotmpl",
        "{{role \"system\"}}You are a support agent.\nBe brief.\n{{cache_breakpoint}}\nToday is {{.day}}.\
         {{role \"user\"}}{{.question}}{{cache_breakpoint}}",
    ),
    (
        "support.hbs",
        "{{role \"system\"}}You are a support agent.\nBe brief.\n{{cache_breakpoint}}\nToday is {{day}}.\
         {{role \"user\"}}{{question}}{{cache_breakpoint}}",
    ),
];

fn data() -> Value {
    json!({"day": "Monday", "question": "How do I reset my router?"})
}

/// `count` user messages, each ended by a breakpoint.
fn breakpoints(count: usize) -> Prompt {
    let source = (0..count)
        .map(|index| format!("{{{{ role(\"user\") }}}}Part {index}{{{{ cache_breakpoint() }}}}"))
        .collect::<String>();
    load("parts.j2", &source)
}

fn load(name: &str, source: &str) -> Prompt {
    Prompt::from_source(name, source, &LoadOptions::default()).expect("loads")
}

#[test]
fn the_anthropic_shape_marks_the_block_a_breakpoint_ends() {
    for (name, source) in PROMPTS {
        let rendered = load(name, source).render(data()).expect("renders");
        assert_eq!(
            rendered.to_format(OutputFormat::Anthropic).unwrap(),
            json!({
                "system": [
                    {"type": "text", "text": "You are a support agent.\nBe brief.\n", "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": "\nToday is Monday."},
                ],
                "messages": [{"role": "user", "content": [
                    {"type": "text", "text": "How do I reset my router?", "cache_control": {"type": "ephemeral"}},
                ]}],
            }),
            "{name}"
        );
    }
}

/// A breakpoint prints nothing: the text, the OpenAI shape and the
/// Anthropic shape without breakpoints are those of the prompt without
/// them; the messages shape shows where they are.
#[test]
fn without_its_marks_the_output_is_the_prompt_s_without_breakpoints() {
    for (name, source) in PROMPTS {
        let with = load(name, source).render(data()).expect("renders");
        let without = load(
            name,
            &source
                .replace("{{ cache_breakpoint() }}", "")
                .replace("{{cache_breakpoint}}", ""),
        )
        .render(data())
        .expect("renders");
        assert_eq!(with.text(), without.text(), "{name}");
        assert_eq!(
            with.to_format(OutputFormat::OpenAi).unwrap(),
            without.to_format(OutputFormat::OpenAi).unwrap(),
            "{name}"
        );
        let anthropic = without.to_format(OutputFormat::Anthropic).unwrap();
        assert_eq!(
            anthropic["system"],
            json!("You are a support agent.\nBe brief.\n\nToday is Monday."),
            "{name}"
        );
        let messages = with.to_format(OutputFormat::Messages).unwrap();
        assert_eq!(
            messages["messages"][0]["content"][1],
            json!({"type": "cache_breakpoint"}),
            "{name}"
        );
    }
}

/// A breakpoint with nothing before it in its message ends the message
/// before (here, right after a role marker: the system prompt).
#[test]
fn a_breakpoint_that_starts_a_message_ends_the_one_before() {
    let prompt = load(
        "start.j2",
        "{{ role(\"system\") }}Be brief.{{ role(\"user\") }}{{ cache_breakpoint() }}Hi",
    );
    let shaped = prompt
        .render(json!({}))
        .unwrap()
        .to_format(OutputFormat::Anthropic)
        .unwrap();
    assert_eq!(
        shaped,
        json!({
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": "Hi"}],
        })
    );
}

/// The history before a breakpoint is cached with the rest: the
/// breakpoint at the end of the prompt's own message after the history
/// marks that message.
#[test]
fn a_breakpoint_after_the_history_s_next_message_caches_the_conversation() {
    let prompt = load(
        "turn.j2",
        "{{ role(\"system\") }}Be brief.{{ cache_breakpoint() }}{{ history() }}{{ role(\"user\") }}{{ question }}{{ cache_breakpoint() }}",
    );
    let context = PromptContext::new()
        .data(json!({"question": "And now?"}))
        .unwrap()
        .with_history(vec![
            serde_json::from_value(json!({"role": "user", "content": "Hi"})).unwrap(),
            serde_json::from_value(json!({"role": "assistant", "content": "Hello!"})).unwrap(),
        ]);
    let shaped = prompt
        .render_turn(&context)
        .unwrap()
        .to_format(OutputFormat::Anthropic)
        .unwrap();
    assert_eq!(
        shaped,
        json!({
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello!"},
                {"role": "user", "content": [{"type": "text", "text": "And now?", "cache_control": {"type": "ephemeral"}}]},
            ],
        })
    );
}

#[test]
fn misplaced_breakpoints_are_errors_that_say_where_to_put_them() {
    let render = |source: &str| {
        load("bad.j2", source)
            .render_turn(&PromptContext::new())
            .map(|_| ())
            .unwrap_err()
    };
    let first = render("{{ cache_breakpoint() }}Be brief.");
    assert_eq!(first.class(), ErrorClass::Render);
    assert!(
        first.message().contains("no text before it to end"),
        "{first}"
    );
    let in_section = render("{% section \"docs\" %}A{{ cache_breakpoint() }}{% endsection %}");
    assert!(
        in_section
            .message()
            .contains("the section \"docs\" holds a cache_breakpoint()"),
        "{in_section}"
    );
    let arguments = Prompt::from_source(
        "args.j2",
        "{{ cache_breakpoint(1) }}",
        &LoadOptions::default(),
    )
    .map(|_| ())
    .unwrap_err();
    assert!(
        arguments.message().contains("cache_breakpoint"),
        "{arguments}"
    );
}

/// Anthropic takes at most four breakpoints in a request: a fifth is an
/// error of the shape, not a request the API would refuse.
#[test]
fn five_breakpoints_are_one_too_many_for_anthropic() {
    let rendered = breakpoints(5).render(json!({})).unwrap();
    let error = rendered.to_format(OutputFormat::Anthropic).unwrap_err();
    assert!(
        error.message().contains("at most 4 cache breakpoints"),
        "{error}"
    );
    let four = breakpoints(4).render(json!({})).unwrap();
    assert!(four.to_format(OutputFormat::Anthropic).is_ok());
    assert!(four.to_format(OutputFormat::Bedrock).is_ok());
    // The OpenAI shape has no breakpoints: five are fine.
    assert!(rendered.to_format(OutputFormat::OpenAi).is_ok());
}

/// Other systems' prompts keep their own names: a Semantic Kernel
/// Handlebars prompt's `cache_breakpoint` is its data, and so is a
/// Django (pongo2) prompt's.
#[test]
fn other_systems_prompts_do_not_see_the_name() {
    let sk = Prompt::from_source(
        "sk.yaml",
        "name: t\ntemplate_format: handlebars\ntemplate: \"cached: {{cache_breakpoint}}\"\n",
        &LoadOptions::default(),
    )
    .expect("loads");
    assert_eq!(
        sk.render(json!({"cache_breakpoint": "yes"}))
            .unwrap()
            .text(),
        "cached: yes"
    );
    let django = Prompt::from_source(
        "p.django",
        "cached: {{ cache_breakpoint }}",
        &LoadOptions::default(),
    )
    .expect("loads");
    assert_eq!(
        django
            .render(json!({"cache_breakpoint": "yes"}))
            .unwrap()
            .text(),
        "cached: yes"
    );
}

/// The Bedrock Converse shape: system and content blocks, a `cachePoint`
/// block after the text each breakpoint ends.
#[test]
fn the_bedrock_shape_puts_a_cache_point_after_the_block() {
    for (name, source) in PROMPTS {
        let rendered = load(name, source).render(data()).expect("renders");
        assert_eq!(
            rendered.to_format(OutputFormat::Bedrock).unwrap(),
            json!({
                "system": [
                    {"text": "You are a support agent.\nBe brief.\n"},
                    {"cachePoint": {"type": "default"}},
                    {"text": "\nToday is Monday."},
                ],
                "messages": [{"role": "user", "content": [
                    {"text": "How do I reset my router?"},
                    {"cachePoint": {"type": "default"}},
                ]}],
            }),
            "{name}"
        );
    }
}

/// The history in the Bedrock shape: tool calls as `toolUse`, results as
/// `toolResult` in a user message (consecutive results in one), media
/// from base64 data URIs; a URL is an error (Converse takes bytes).
#[test]
fn the_bedrock_shape_carries_tools_and_media() {
    let prompt = load(
        "turn.j2",
        "{{ role(\"system\") }}Be brief.{{ cache_breakpoint() }}{{ history() }}\
         {{ role(\"user\") }}{{ media(\"data:image/png;base64,iVBORw0KGgo=\", \"image/png\") }}What is this?",
    );
    let history: Vec<teleprompt::HistoryMessage> = serde_json::from_value(json!([
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}},
            {"id": "b", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Rome\"}"}},
        ]},
        {"role": "tool", "tool_call_id": "a", "content": "Sunny"},
        {"role": "tool", "tool_call_id": "b", "content": "Rain"},
    ]))
    .unwrap();
    let context = PromptContext::new().with_history(history);
    let shaped = prompt
        .render_turn(&context)
        .unwrap()
        .to_format(OutputFormat::Bedrock)
        .unwrap();
    assert_eq!(
        shaped,
        json!({
            "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}],
            "messages": [
                {"role": "user", "content": [{"text": "Weather in Paris and Rome?"}]},
                {"role": "assistant", "content": [
                    {"toolUse": {"toolUseId": "a", "name": "weather", "input": {"city": "Paris"}}},
                    {"toolUse": {"toolUseId": "b", "name": "weather", "input": {"city": "Rome"}}},
                ]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": "a", "content": [{"text": "Sunny"}]}},
                    {"toolResult": {"toolUseId": "b", "content": [{"text": "Rain"}]}},
                ]},
                {"role": "user", "content": [
                    {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}},
                    {"text": "What is this?"},
                ]},
            ],
        })
    );
    let url = load(
        "url.j2",
        "{{ media(\"https://example.com/a.png\", \"image/png\") }}Hi",
    )
    .render(json!({}))
    .unwrap()
    .to_format(OutputFormat::Bedrock)
    .unwrap_err();
    assert!(url.message().contains("base64 data: URI"), "{url}");
    let error = breakpoints(5)
        .render(json!({}))
        .unwrap()
        .to_format(OutputFormat::Bedrock)
        .unwrap_err();
    assert!(
        error.message().contains("at most 4 cache points"),
        "{error}"
    );
}

/// A breakpoint right after `history()` ends the history's last message:
/// the conversation so far is the cached prefix (Anthropic's
/// `cache_control` on its last block, a Bedrock `cachePoint` after it),
/// whether a message of the template follows or not.
#[test]
fn a_breakpoint_after_the_history_ends_its_last_message() {
    let history: Vec<teleprompt::HistoryMessage> = serde_json::from_value(json!([
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "What now?"},
    ]))
    .unwrap();
    let context = PromptContext::new().with_history(history);
    for source in [
        "{{ role(\"system\") }}Be brief.{{ history() }}{{ cache_breakpoint() }}",
        "{{ role(\"system\") }}Be brief.{{ history() }}{{ cache_breakpoint() }}{{ role(\"user\") }}Answer in French.",
    ] {
        let rendered = load("end.j2", source).render_turn(&context).unwrap();
        let anthropic = rendered.to_format(OutputFormat::Anthropic).unwrap();
        assert_eq!(
            anthropic["messages"][2],
            json!({"role": "user", "content": [
                {"type": "text", "text": "What now?", "cache_control": {"type": "ephemeral"}},
            ]}),
            "{source}"
        );
        assert_eq!(anthropic["system"], json!("Be brief."), "{source}");
        let bedrock = rendered.to_format(OutputFormat::Bedrock).unwrap();
        assert_eq!(
            bedrock["messages"][2],
            json!({"role": "user", "content": [{"text": "What now?"}, {"cachePoint": {"type": "default"}}]}),
            "{source}"
        );
        // The text and the OpenAI shape do not change.
        let plain = load("plain.j2", &source.replace("{{ cache_breakpoint() }}", ""))
            .render_turn(&context)
            .unwrap();
        assert_eq!(
            rendered.to_format(OutputFormat::OpenAi).unwrap(),
            plain.to_format(OutputFormat::OpenAi).unwrap()
        );
    }
}

/// A Prompty file's messages follow Prompty's role lines: a breakpoint
/// there is an error that says so, not a silent mark.
#[test]
fn a_prompty_file_cannot_place_a_breakpoint() {
    let prompt = Prompt::from_source(
        "chat.prompty",
        "---\nname: chat\n---\nsystem:\nBe brief.{{ cache_breakpoint() }}\n\nuser:\nHi\n",
        &LoadOptions::default(),
    );
    let error = match prompt {
        Ok(prompt) => prompt.render(json!({})).map(|_| ()).unwrap_err(),
        Err(error) => error,
    };
    assert!(
        error
            .message()
            .contains("cache_breakpoint() is teleprompt's"),
        "{error}"
    );
}

/// The Anthropic body of `prompt`'s turn in `context`.
fn anthropic(prompt: &Prompt, context: &PromptContext) -> Value {
    let rendered = prompt.render_turn(context).unwrap();
    rendered.to_format(OutputFormat::Anthropic).unwrap()
}

/// How many blocks `body` marks `cache_control`.
fn marks(body: &Value) -> usize {
    body.to_string().matches("cache_control").count()
}

/// A system prompt of about 1,200 tokens (4,800 bytes), then the history.
fn long_rules() -> String {
    "Follow the house rules for every answer you give.\n".repeat(96)
}

#[test]
fn cache_key_names_the_prompt_and_its_version() {
    let source = |rules: &str| {
        format!("---\nname: support\ncache:\n  key: true\n---\n{{{{ role(\"system\") }}}}{rules}{{{{ role(\"user\") }}}}Hi")
    };
    let openai = |source: &str| {
        load("support.j2", source)
            .render(json!({}))
            .unwrap()
            .to_format(OutputFormat::OpenAi)
            .unwrap()
    };
    let first = openai(&source("Be brief."));
    let key = first["prompt_cache_key"]
        .as_str()
        .expect("a key")
        .to_string();
    assert!(key.starts_with("support@"), "{key}");
    assert_eq!(
        openai(&source("Be brief."))["prompt_cache_key"],
        key.as_str(),
        "stable"
    );
    assert_ne!(
        openai(&source("Be briefer."))["prompt_cache_key"],
        key.as_str(),
        "a new version, a new key"
    );
    // Named, and absent without `cache.key` (the OpenAI shape of existing
    // prompts does not change), and in no other shape.
    let named = "---\ncache: {key: support-v2}\n---\nHi";
    assert_eq!(openai(named)["prompt_cache_key"], "support-v2");
    assert!(openai("Hi").get("prompt_cache_key").is_none());
    let anthropic = load("support.j2", named)
        .render(json!({}))
        .unwrap()
        .to_format(OutputFormat::Anthropic)
        .unwrap();
    assert!(anthropic.get("prompt_cache_key").is_none());
}

#[test]
fn automatic_breakpoints_end_the_fixed_start_and_the_history() {
    let source = format!(
        "---\ncache:\n  breakpoints: auto\n---\n{{{{ role(\"system\") }}}}{}{{{{ history() }}}}{{{{ role(\"user\") }}}}Now, {{{{ question }}}}",
        long_rules()
    );
    let prompt = load("support.j2", &source);
    let history: Vec<teleprompt::HistoryMessage> = serde_json::from_value(json!([
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
    ]))
    .unwrap();
    let context = PromptContext::new()
        .data(json!({"question": "reset?"}))
        .unwrap()
        .with_history(history);
    let rendered = prompt.render_turn(&context).unwrap();
    let body = rendered.to_format(OutputFormat::Anthropic).unwrap();
    // The system prompt's block, and the history's last message.
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["content"][0]["cache_control"],
        json!({"type": "ephemeral"}),
        "{body:#}"
    );
    assert!(
        messages[2]["content"].is_string()
            || messages[2]["content"][0].get("cache_control").is_none()
    );
    // The text is what it was.
    let plain = load(
        "support.j2",
        &source.replace("breakpoints: auto", "breakpoints: manual"),
    );
    assert_eq!(plain.render_turn(&context).unwrap().text(), rendered.text());

    // Too short to cache: none placed.
    let short =
        "---\ncache: {breakpoints: auto}\n---\n{{ role(\"system\") }}Be brief.{{ history() }}";
    let body = anthropic(&load("short.j2", short), &context);
    assert_eq!(marks(&body), 0, "{body}");
    // A lower bound places them.
    let low = short.replace("{breakpoints: auto}", "{breakpoints: auto, min_tokens: 1}");
    let body = anthropic(&load("short.j2", &low), &context);
    assert_eq!(marks(&body), 2, "{body}");

    // The template's own breakpoints win: no automatic ones.
    let own = "---\ncache: {breakpoints: auto, min_tokens: 1}\n---\n{{ role(\"system\") }}Be brief.{{ cache_breakpoint() }} Today.{{ history() }}";
    let body = anthropic(&load("own.j2", own), &context);
    assert_eq!(marks(&body), 1, "{body}");
}

#[test]
fn cache_settings_are_checked() {
    for (front, message) in [
        ("cache: yes", "`cache` must be a mapping"),
        (
            "cache: {key: 3}",
            "`cache.key` must be true, false or a key of text",
        ),
        (
            "cache: {breakpoints: always}",
            "`cache.breakpoints` must be `auto` or `manual`",
        ),
        (
            "cache: {min_tokens: -1}",
            "`cache.min_tokens` must be a whole number",
        ),
        ("cache: {keys: true}", "`cache.keys` is not a cache key"),
    ] {
        let source = format!("---\n{front}\n---\nHi");
        let error = Prompt::from_source("p.j2", &source, &LoadOptions::default()).unwrap_err();
        assert_eq!(error.class(), ErrorClass::Document, "{front}");
        assert!(
            error.message().contains(message),
            "{front}: {}",
            error.message()
        );
    }
}

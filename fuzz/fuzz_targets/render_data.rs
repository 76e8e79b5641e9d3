//! Renders a fixed set of prompts — Go, Jinja, Django, Handlebars, chat
//! templates and the prompt files of `examples/`, with `role` and `history`
//! calls — against data built from the fuzz input, at the strictness the
//! input picks. The data is a tree of bounded depth whose strings carry
//! the marker code points U+E000/U+E001, marker-like text, role tags and
//! long repeats, whose numbers are huge, negative or fractional, and whose
//! map keys are mostly the names the prompts read; part of it goes in as
//! conversation args, a namespace and a conversation history. Some inputs
//! are read as JSON or YAML data text instead (the data parser, then the
//! same renders). Nothing may panic, hang or overflow the stack; renders
//! may fail.
//!
//! Run: `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run render_data`

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Number, Value};
use teleprompt::data::{insert_dotted, parse_text, Format};
use teleprompt::limits::Limits;
use teleprompt::messages::{history_from_value, parse_history, validate_history};
use teleprompt::{LoadOptions, OutputFormat, Prompt, PromptContext, Strictness, Syntax};

/// The fixed prompts: (origin, source, syntax, include root under
/// `examples/`).
const PROMPTS: &[(&str, &str, Option<Syntax>, Option<&str>)] = &[
    (
        "chat.gotmpl",
        r#"{{ role "system" }}You are {{ .name }}.{{ if .flag }} Flag on.{{ end }}
{{ range $i, $m := .messages }}{{ role "user" }}{{ $i }} {{ $m.role }}: {{ $m.content }}
{{ end }}{{ history }}{{ role "user" }}{{ .text }} {{ printf "%v|%q|%d|%s|%x|%8.3f|%-5v" .count .text .count .name .text .width .items }}
{{ with .issue }}{{ .title }} [{{ join ", " .labels }}] {{ len .labels }}{{ end }}
{{ range .items }}[{{ . }}|{{ tojson . }}]{{ else }}no items{{ end }}
{{ index .items 1 }} {{ slice .text 1 3 }} {{ eq .count 3 }} {{ lt .count .width }} {{ upper .name }} {{ trim .text }}
{{ html .text }} {{ js .text }} {{ urlquery .text }} {{ print .nested .count }}
{{ range $k, $v := .nested }}{{ $k }}={{ $v }};{{ end }}{{ .nested.a.b }}
"#,
        Some(Syntax::Go),
        None,
    ),
    (
        "loops.gotmpl",
        r#"{{ range $i := .count }}{{ $i }},{{ end }}
{{ range .items }}{{ range . }}<{{ . }}>{{ else }}-{{ end }}{{ end }}
{{ $s := .text }}{{ range .items }}{{ $s = printf "%s%s" $s $s }}{{ end }}{{ len $s }}
{{ with $x := index .nested "a" }}{{ $x }}{{ else }}none{{ end }}
{{ if and .flag (not .items) (or .name .text) }}yes{{ else if ge .width 10 }}wide{{ end }}
{{ tojson . }}
"#,
        Some(Syntax::Go),
        None,
    ),
    (
        "chat.j2",
        r#"{{ role("system") }}You are {{ name }}.{% if flag %} Flag on.{% endif %}
{% for m in messages %}{% if m.role == "assistant" %}{{ role("assistant") }}{% else %}{{ role("user") }}{% endif %}{{ m.content }}{% if m.tool_calls %}{% for c in m.tool_calls %} {{ c.function.name }}({{ c.function.arguments|tojson }}){% endfor %}{% endif %}
{% endfor %}{{ history() }}{{ role("user") }}{{ text }} {{ text|upper }} {{ text|title }} {{ text|indent(width) }}
{{ text|truncate(count) }} {{ "ab" * count }} {{ text * width }}
{% for i in range(count) %}{{ i }},{% endfor %}
{{ items|join(", ") }} {{ items|length }} {{ items|tojson }} {{ nested|tojson }} {{ nested.a.b }} {{ nested["a"] }}
{{ "{:>10}".format(text) }} {{ text.split(",")|list }} {{ count + width }} {{ count * width }} {{ count // width }} {{ count ** 2 }}
{{ items|sort|first }} {{ items|map("string")|join }} {{ nested|dictsort }} {{ items|unique|list }} {{ text|replace("a", text) }}
{% set ns = namespace(s=text) %}{% for i in items %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}
{{ count|round(2) }} {{ width|abs }} {{ count|int }} {{ width|float }} {{ text[count:width] }}
"#,
        Some(Syntax::Jinja),
        None,
    ),
    (
        "chat.django",
        r#"{{ role("system") }}Hello {{ name|default:"nobody" }}.
{{ text|truncatechars:count }} {{ text|ljust:width }} {{ text|center:width }} {{ text|wordwrap:width }}
{% for i in items %}{{ forloop.Counter }}={{ i|floatformat:2 }};{% empty %}none{% endfor %}
{{ count|add:width }} {{ items|join:", " }} {{ nested.a.b }} {% if flag && count > 2 %}y{% else %}n{% endif %}
{{ count|divisibleby:3 }} {{ text|capfirst }} {{ text|default_if_none:"x"|yesno }} {{ items|length }}
{% for key, value in nested sorted %}{{ key }}: {{ value }}
{% endfor %}{{ history() }}{{ role("user") }}{{ text }}
"#,
        Some(Syntax::Django),
        None,
    ),
    (
        "chat.hbs",
        r#"{{role "system"}}You are {{name}}.{{#if flag}} Flag on.{{/if}}
{{#each messages}}{{role "user"}}{{@index}} {{this.role}}: {{content}}
{{/each}}{{history}}{{role "user"}}{{text}} {{{text}}} {{json nested}}
{{#each items}}[{{this}}|{{@key}}|{{@first}}]{{else}}no items{{/each}}
{{#with issue}}{{title}} {{len labels}}{{/with}} {{add count width}} {{multiply count width}} {{concat text name}}
{{#each (range 0 count)}}{{this}},{{/each}} {{#unless flag}}off{{/unless}} {{lookup items 0}} {{nested.a.b}}
{{#each nested}}{{@key}}={{this}};{{/each}} {{upper text}} {{join items ", "}} {{eq count width}}
"#,
        Some(Syntax::Handlebars),
        None,
    ),
    (
        "qwen3/chat_template.jinja",
        include_str!("../../crates/teleprompt/tests/fixtures/chat-template/templates/trl-qwen3.jinja"),
        Some(Syntax::ChatTemplate),
        None,
    ),
    (
        "llama3.1/chat_template.jinja",
        include_str!("../../crates/teleprompt/tests/fixtures/chat-template/templates/trl-llama3_1.jinja"),
        Some(Syntax::ChatTemplate),
        None,
    ),
    (
        "mistral/chat_template.jinja",
        include_str!("../../crates/teleprompt/tests/fixtures/chat-template/templates/llamacpp-Mistral-Small-3.2-24B-Instruct-2506.jinja"),
        Some(Syntax::ChatTemplate),
        None,
    ),
    (
        "gpt-oss/chat_template.jinja",
        include_str!("../../crates/teleprompt/tests/fixtures/chat-template/templates/trl-gptoss.jinja"),
        Some(Syntax::ChatTemplate),
        None,
    ),
    (
        "gemma4/chat_template.jinja",
        include_str!("../../crates/teleprompt/tests/fixtures/chat-template/templates/trl-gemma4_v5.jinja"),
        Some(Syntax::ChatTemplate),
        None,
    ),
    (
        "WORKFLOW.md",
        include_str!("../../examples/sortie/WORKFLOW.md"),
        Some(Syntax::Go),
        None,
    ),
    (
        "assistant.j2",
        include_str!("../../examples/rapida/assistant.j2"),
        None,
        None,
    ),
    (
        "assistant.django",
        include_str!("../../examples/rapida/assistant.django"),
        None,
        None,
    ),
    (
        "chat.hbs",
        include_str!("../../examples/semantic-kernel/chat.hbs"),
        None,
        None,
    ),
    (
        "story.yaml",
        include_str!("../../examples/semantic-kernel/story.yaml"),
        None,
        None,
    ),
    (
        "support.prompty",
        include_str!("../../examples/prompty/support.prompty"),
        None,
        None,
    ),
    (
        "support.prompt",
        include_str!("../../examples/dotprompt/support.prompt"),
        None,
        Some("dotprompt"),
    ),
    (
        "system.hbs",
        include_str!("../../examples/forge/system.hbs"),
        None,
        Some("forge"),
    ),
];

const STRICTNESS: [Option<Strictness>; 4] = [
    None,
    Some(Strictness::Strict),
    Some(Strictness::Semi),
    Some(Strictness::Lenient),
];

/// Every prompt at every strictness, loaded once.
fn prompts() -> &'static [Prompt] {
    static PROMPTS_LOADED: OnceLock<Vec<Prompt>> = OnceLock::new();
    PROMPTS_LOADED.get_or_init(|| {
        let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut loaded = Vec::new();
        let mut errors = Vec::new();
        for &(origin, source, syntax, root) in PROMPTS {
            for strict in STRICTNESS {
                // Small budgets: the limits are reached after 64 KiB of
                // output and 200,000 steps, not after 64 MiB and millions
                // of loop passes, so that an input costs milliseconds and
                // the paths past a limit run often.
                let mut options = LoadOptions::new().with_limits(Limits {
                    max_output: 64 << 10,
                    max_value_bytes: 256 << 10,
                    max_steps: 200_000,
                    ..Limits::default()
                });
                options.syntax = syntax;
                options.strictness = strict;
                options.include_root = root.map(|root| examples.join(root));
                match Prompt::from_source(origin, source, &options) {
                    Ok(prompt) => loaded.push(prompt),
                    Err(error) => errors.push(format!("{origin} ({strict:?}): {error}")),
                }
            }
        }
        assert!(
            errors.is_empty(),
            "fixed prompts that do not load:\n{}",
            errors.join("\n")
        );
        loaded
    })
}

/// Names the prompts read, used for most map keys.
#[rustfmt::skip]
const KEYS: &[&str] = &[
    "name", "text", "count", "width", "flag", "items", "nested", "messages", "issue",
    "tools", "documents", "add_generation_prompt", "bos_token", "eos_token", "date_string",
    "enable_thinking", "reasoning_effort", "builtin_tools", "model_identity", "tools_in_user_message",
    "role", "content", "tool_calls", "tool_call_id", "function", "arguments", "id", "type",
    "reasoning_content", "thinking", "title", "labels", "identifier", "state", "url", "parent",
    "blocked_by", "description", "metadata", "run", "attempt", "turn_number", "max_turns",
    "is_continuation", "assistant", "tone", "args", "company", "age", "conversation",
    "direction", "transfer", "message", "language", "destinations", "request", "topic",
    "length", "reader", "firstName", "lastName", "products", "note", "question", "customer",
    "product", "screenshot", "files", "readme", "custom_rules", "system", "a", "b", "c",
    "image", "image_url", "parameters", "properties", "required", "0", "", "message.language",
    "assistant.name", "a.b",
];

/// Pieces that strings are made of, besides arbitrary text.
const FRAGMENTS: &[&str] = &[
    "\u{E000}",
    "\u{E001}",
    "\u{E000}teleprompt:",
    "\u{E000}teleprompt:role:system\u{E001}",
    "\u{E001}\u{E000}",
    "</message>",
    "<message role=\"system\">",
    "<message role='user'>",
    "\nsystem:\n",
    "assistant:",
    "<<<dotprompt:role:system>>>",
    "{{",
    "}}",
    "{% raw %}",
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "user",
    "assistant",
    "system",
    "tool",
    "model",
    "é",
    "\u{FEFF}",
    "\r\n",
    "\0",
    " ",
    ",",
    "%s%q%v%d",
    "{:>10}",
    "{0}",
    "\\u{E000}",
    "&amp;<>\"'",
];

const INTEGERS: &[i64] = &[
    0,
    1,
    -1,
    2,
    3,
    10,
    20,
    21,
    255,
    1_000,
    65_536,
    1_000_000,
    1_000_000_000,
    i32::MAX as i64,
    i64::MAX,
    i64::MIN,
    (1 << 53) + 1,
];

const FLOATS: &[f64] = &[
    0.0, -0.0, 0.1, 0.5, 1.5, 2.5, -2.5, 1e21, 1e-7, 1e308, -1e308, 5e-324, 1e9,
];

const MAX_DEPTH: u32 = 6;

fn string(u: &mut Unstructured) -> Result<String> {
    let mut text = String::new();
    for _ in 0..u.int_in_range(0..=4)? {
        let piece: &str = if u.ratio(1, 2)? {
            FRAGMENTS[u.choose_index(FRAGMENTS.len())?]
        } else {
            u.arbitrary()?
        };
        let times = match u.int_in_range(0..=15)? {
            0 => 100,
            1 => 1_000,
            2 => 10_000,
            _ => 1,
        };
        // Long, not huge: at most 64 KB per piece (the huge values come
        // from the counts and widths the prompts apply to them).
        let times = times.min((64 << 10) / piece.len().max(1)).max(1);
        text.push_str(&piece.repeat(times));
    }
    Ok(text)
}

fn number(u: &mut Unstructured) -> Result<Value> {
    Ok(match u.int_in_range(0..=4)? {
        0 => json!(INTEGERS[u.choose_index(INTEGERS.len())?]),
        1 => json!(u.arbitrary::<i64>()?),
        2 => json!(u.arbitrary::<u64>()?),
        3 => json!(FLOATS[u.choose_index(FLOATS.len())?]),
        _ => Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
    })
}

fn key(u: &mut Unstructured) -> Result<String> {
    Ok(if u.ratio(4, 5)? {
        KEYS[u.choose_index(KEYS.len())?].to_string()
    } else {
        string(u)?
    })
}

fn value(u: &mut Unstructured, depth: u32) -> Result<Value> {
    let kinds = if depth >= MAX_DEPTH { 4 } else { 7 };
    Ok(match u.int_in_range(0..=kinds)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => number(u)?,
        3 | 4 => Value::String(string(u)?),
        5 => {
            let mut list = Vec::new();
            for _ in 0..u.int_in_range(0..=6)? {
                list.push(value(u, depth + 1)?);
            }
            Value::Array(list)
        }
        6 => object(u, depth)?,
        _ => messages(u, depth)?,
    })
}

fn object(u: &mut Unstructured, depth: u32) -> Result<Value> {
    let mut map = Map::new();
    for _ in 0..u.int_in_range(0..=6)? {
        map.insert(key(u)?, value(u, depth + 1)?);
    }
    Ok(Value::Object(map))
}

/// A list of chat messages, mostly in the OpenAI shape.
fn messages(u: &mut Unstructured, depth: u32) -> Result<Value> {
    const ROLES: &[&str] = &[
        "system",
        "user",
        "assistant",
        "tool",
        "model",
        "developer",
        "ipython",
    ];
    let mut list = Vec::new();
    for _ in 0..u.int_in_range(0..=6)? {
        let mut message = Map::new();
        let role = if u.ratio(7, 8)? {
            ROLES[u.choose_index(ROLES.len())?].to_string()
        } else {
            string(u)?
        };
        message.insert("role".into(), Value::String(role));
        let content = match u.int_in_range(0..=3)? {
            0 | 1 => Value::String(string(u)?),
            2 => {
                json!([{"type": "text", "text": string(u)?}, {"type": "image", "url": string(u)?}])
            }
            _ => value(u, depth + 2)?,
        };
        message.insert("content".into(), content);
        if u.ratio(1, 3)? {
            let mut calls = Vec::new();
            for _ in 0..u.int_in_range(0..=3)? {
                let arguments = if u.arbitrary()? {
                    Value::String(string(u)?)
                } else {
                    value(u, depth + 3)?
                };
                calls.push(json!({
                    "id": string(u)?,
                    "type": "function",
                    "function": {"name": string(u)?, "arguments": arguments},
                }));
            }
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        if u.ratio(1, 4)? {
            message.insert("tool_call_id".into(), Value::String(string(u)?));
        }
        if u.ratio(1, 6)? {
            message.insert(key(u)?, value(u, depth + 2)?);
        }
        list.push(Value::Object(message));
    }
    Ok(Value::Array(list))
}

fn render(prompt: &Prompt, context: &PromptContext) {
    if std::env::var_os("RENDER_DATA_DEBUG").is_some() {
        // To see what a slow or failing input renders: the prompt and its data.
        let data = context
            .build(&|_| true)
            .map(|built| built.data.root().to_json());
        let text = format!("{data:?}");
        eprintln!(
            "{}: {}",
            prompt.origin(),
            &text[..text.floor_char_boundary(4000)]
        );
    }
    if let Ok(rendered) = prompt.render_turn(context) {
        for format in OutputFormat::ALL {
            let _ = rendered.to_format(format);
        }
    }
}

/// Data text: parsed as JSON, YAML or by its look, and as a history.
fn from_text(prompt: &Prompt, mode: u8, text: &str) {
    let format = [Some(Format::Json), Some(Format::Yaml), None][usize::from(mode / 4 % 3)];
    if let Ok(history) = parse_history(text) {
        let _ = validate_history(&history);
    }
    let Ok(data) = parse_text(text, format, "fuzz-data") else {
        return;
    };
    if let Ok(context) = PromptContext::new().data(data) {
        render(prompt, &context);
    }
}

fn from_tree(prompt: &Prompt, u: &mut Unstructured) -> Result<()> {
    let mut root = Map::new();
    for &name in KEYS {
        if u.ratio(1, 4)? {
            let value = if name == "messages" && u.ratio(3, 4)? {
                messages(u, 1)?
            } else {
                value(u, 1)?
            };
            root.insert(name.to_string(), value);
        }
    }
    for _ in 0..u.int_in_range(0..=2)? {
        let dotted = format!("{}.{}", key(u)?, key(u)?);
        let overwrite = u.arbitrary()?;
        insert_dotted(&mut root, &dotted, value(u, 2)?, overwrite);
    }
    let mut context = PromptContext::new()
        .turn(u.int_in_range(1..=3)?)
        .attempt(u.int_in_range(0..=2)?);
    if u.ratio(1, 4)? {
        context = context.max_turns(u.arbitrary()?);
    }
    if u.ratio(1, 4)? {
        context = context.custom_rules(string(u)?);
    }
    if u.ratio(1, 3)? {
        if let Ok(next) = context.clone().args(object(u, 1)?) {
            context = next;
        }
    }
    if u.ratio(1, 4)? {
        let fields = object(u, 1)?;
        let next = match u.int_in_range(0..=3)? {
            0 => context.clone().assistant(fields),
            1 => context.clone().conversation(fields),
            2 => context.clone().session(fields),
            _ => context.clone().message(fields),
        };
        if let Ok(next) = next {
            context = next;
        }
    }
    if u.ratio(1, 2)? {
        if let Ok(history) = history_from_value(messages(u, 1)?) {
            context = context.with_history(history);
            let _ = context.validate_history();
        }
    }
    if let Ok(context) = context.data(Value::Object(root)) {
        render(prompt, &context);
    }
    Ok(())
}

fuzz_target!(|bytes: &[u8]| {
    let prompts = prompts();
    let [mode, pick, rest @ ..] = bytes else {
        return;
    };
    let prompt = &prompts[usize::from(*pick) % prompts.len()];
    match mode % 4 {
        0 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                from_text(prompt, *mode, text);
            }
        }
        _ => {
            let _ = from_tree(prompt, &mut Unstructured::new(rest));
        }
    }
});

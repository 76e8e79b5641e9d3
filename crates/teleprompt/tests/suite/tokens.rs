//! Tokens (issue 25): the ids of every text of `tests/data/tokens/corpus.json`
//! — prompt-like text, long runs, and adversarial Unicode (combining
//! marks, ZWJ emoji, RTL, private-use marker characters, special-token
//! spellings) — are exactly what OpenAI's tiktoken gives
//! (`expected.json`, from `reference.mjs`); and a render's messages are
//! counted by the prompt's tokenizer.

use std::path::Path;

use serde_json::{json, Value};
use teleprompt::tokens::Tokenizer;
use teleprompt::{ErrorClass, LoadOptions, OutputFormat, Prompt};

fn data(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tokens")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).expect("the file")).expect("JSON")
}

#[test]
fn ids_are_tiktoken_s_on_the_corpus() {
    let corpus = data("corpus.json");
    let expected = data("expected.json");
    let texts: Vec<&str> = corpus
        .as_array()
        .expect("a list")
        .iter()
        .map(|text| text.as_str().expect("a text"))
        .collect();
    for name in Tokenizer::NAMES {
        let tokenizer = Tokenizer::named(name).expect("known");
        let lists = expected[*name].as_array().expect("ids per text");
        assert_eq!(lists.len(), texts.len(), "{name}");
        for (text, ids) in texts.iter().zip(lists) {
            let ids: Vec<u32> = serde_json::from_value(ids.clone()).expect("ids");
            assert_eq!(tokenizer.encode(text), Ok(ids.clone()), "{name}: {text:?}");
            assert_eq!(tokenizer.count(text), Ok(ids.len()), "{name}: {text:?}");
        }
    }
}

#[test]
fn a_render_counts_each_message_by_the_prompt_s_tokenizer() {
    let source = "---\ntokenizer: o200k_base\n---\n{{ role(\"system\") }}You fix bugs.\n{{ role(\"user\") }}Hello, world!{{ history() }}";
    let prompt = Prompt::from_source("fix.j2", source, &LoadOptions::default()).expect("loads");
    assert_eq!(prompt.tokenizer().map(|t| t.name()), Some("o200k_base"));
    let context = teleprompt::PromptContext::new().with_history(vec![serde_json::from_value(
        json!({"role": "assistant", "content": [{"type": "text", "text": "Hello, world!"}, {"type": "image_url", "image_url": {"url": "x"}}]}),
    )
    .expect("a message")]);
    let rendered = prompt.render_turn(&context).expect("renders");
    let tokens = rendered.to_format(OutputFormat::Tokens).expect("counted");
    let o200k = Tokenizer::named("o200k_base").unwrap();
    let system = o200k.encode("You fix bugs.").unwrap();
    assert_eq!(
        tokens,
        json!({
            "tokenizer": "o200k_base",
            "total": system.len() + 8,
            "messages": [
                {"role": "system", "count": system.len(), "ids": system},
                {"role": "user", "count": 4, "ids": [13225, 11, 2375, 0]},
                {"role": "assistant", "history": true, "count": 4, "ids": [13225, 11, 2375, 0]},
            ]
        })
    );
    // The host's tokenizer wins over the front matter's.
    let options = LoadOptions::default().with_tokenizer(Tokenizer::named("cl100k_base").unwrap());
    let prompt = Prompt::from_source("fix.j2", source, &options).expect("loads");
    let tokens = prompt.render(json!({})).unwrap().tokens().unwrap();
    assert_eq!(tokens.tokenizer, "cl100k_base");
}

#[test]
fn a_tokenizer_must_be_named_and_known() {
    let error = Prompt::from_source(
        "x.j2",
        "---\ntokenizer: o200k\n---\nhi",
        &LoadOptions::default(),
    )
    .expect_err("unknown");
    assert_eq!(error.class(), ErrorClass::Document);
    assert!(
        error.message().contains("unknown tokenizer `o200k`")
            && error.message().contains("o200k_base, cl100k_base"),
        "{error}"
    );
    let prompt = Prompt::from_source("x.j2", "hi", &LoadOptions::default()).unwrap();
    let error = prompt
        .render(json!({}))
        .unwrap()
        .tokens()
        .expect_err("none");
    assert_eq!(error.class(), ErrorClass::Input);
    assert!(error.message().contains("names no tokenizer"), "{error}");
}

fn folder(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("tokens")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (file, text) in files {
        std::fs::write(dir.join(file), text).expect("write");
    }
    dir
}

/// A Hugging Face `tokenizer.json` of a word-level vocabulary (the real
/// ones, checked against the `tokenizers` library, are in the Python
/// package's tests: they are megabytes).
const WORDS: &str = r#"{"version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [{"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "normalizer": null, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null, "decoder": null,
  "model": {"type": "WordLevel", "vocab": {"<unk>": 0, "hello": 1, "world": 2, "!": 3}, "unk_token": "<unk>"}}"#;

#[test]
fn a_tokenizer_json_beside_the_prompt_counts_its_tokens() {
    let dir = folder(
        "beside",
        &[
            ("tokenizer.json", WORDS),
            (
                "p.j2",
                "---\ntokenizer: tokenizer.json\n---\nhello world ! {{ who }}",
            ),
            ("up.j2", "---\ntokenizer: ../tokenizer.json\n---\nhi"),
            ("gone.j2", "---\ntokenizer: nothing.json\n---\nhi"),
            ("bad.j2", "---\ntokenizer: p.json\n---\nhi"),
            ("p.json", "{\"not\": \"a tokenizer\"}"),
        ],
    );
    let prompt = Prompt::from_file(dir.join("p.j2")).expect("loads");
    let tokens = prompt
        .render(json!({"who": "world"}))
        .unwrap()
        .tokens()
        .unwrap();
    assert_eq!(tokens.tokenizer, "tokenizer.json");
    assert_eq!(tokens.messages[0].ids, [1, 2, 3, 2]);
    // Outside the folder: refused when the prompt loads.
    let error = Prompt::from_file(dir.join("up.j2")).expect_err("outside");
    assert_eq!(error.class(), ErrorClass::Document, "{error}");
    // Missing, or not a tokenizer: the error of the first count.
    for file in ["gone.j2", "bad.j2"] {
        let prompt = Prompt::from_file(dir.join(file)).expect("loads");
        let error = prompt.render(json!({})).unwrap().tokens().expect_err(file);
        assert_eq!(error.class(), ErrorClass::Io, "{error}");
    }
}

#[test]
fn a_chat_template_counts_with_the_tokenizer_json_beside_it() {
    let dir = folder(
        "model",
        &[
            ("tokenizer.json", WORDS),
            (
                "chat_template.jinja",
                "{% for m in messages %}{{ m.content }} {% endfor %}!",
            ),
        ],
    );
    let prompt = Prompt::from_file(dir.join("chat_template.jinja")).expect("loads");
    assert_eq!(prompt.tokenizer().map(|t| t.name()), Some("tokenizer.json"));
    let data = json!({"messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "world"}]});
    let tokens = prompt.render(data).unwrap().tokens().unwrap();
    // One sequence, the whole output: a chat template's text is not
    // messages.
    assert_eq!(tokens.total, 3);
    assert_eq!(tokens.ids.as_deref(), Some(&[1, 2, 3][..]));
    assert!(tokens.messages.is_empty());
    assert_eq!(tokens.assistant_masks, None, "no generation block");
    // Without one beside it, none.
    let dir = folder("bare", &[("chat_template.jinja", "{{ messages|length }}")]);
    let prompt = Prompt::from_file(dir.join("chat_template.jinja")).expect("loads");
    assert!(prompt.tokenizer().is_none());
}

/// A `{% generation %}` block's text is the assistant mask, token for
/// token; blocks that print nothing, or a conversation with no assistant
/// turn, still give a mask (of zeros), as `transformers` does.
#[test]
fn a_chat_template_s_generation_blocks_are_its_assistant_masks() {
    let template = "{% for m in messages %}{% if m.role == 'assistant' %}\
        {% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %} \
        {% endfor %}!";
    let dir = folder(
        "generation",
        &[("tokenizer.json", WORDS), ("chat_template.jinja", template)],
    );
    let prompt = Prompt::from_file(dir.join("chat_template.jinja")).expect("loads");
    let masks = |messages: Value| {
        let tokens = prompt
            .render(json!({ "messages": messages }))
            .unwrap()
            .tokens()
            .unwrap();
        let (ids, masks) = (tokens.ids.unwrap(), tokens.assistant_masks.unwrap());
        assert_eq!(ids.len(), masks.len());
        (ids, masks)
    };
    let turn = |role: &str, content: &str| json!({"role": role, "content": content});
    assert_eq!(
        masks(json!([turn("user", "hello"), turn("assistant", "world")])),
        (vec![1, 2, 3], vec![0, 1, 0])
    );
    assert_eq!(
        masks(json!([
            turn("user", "hello"),
            turn("assistant", "world !"),
            turn("user", "hello"),
            turn("assistant", "hello world")
        ])),
        (vec![1, 2, 3, 1, 1, 2, 3], vec![0, 1, 1, 0, 1, 1, 0])
    );
    assert_eq!(
        masks(json!([turn("user", "hello")])),
        (vec![1, 3], vec![0, 0])
    );
}

/// With an OpenAI encoding (`--tokenizer o200k_base`), the mask starts at
/// the token that holds the block's first character: the space before
/// "Hello" is in that token.
#[test]
fn an_openai_encoding_masks_a_chat_template_too() {
    let options =
        LoadOptions::default().with_tokenizer(Tokenizer::named("o200k_base").expect("known"));
    let template = "{% for m in messages %}{{ m.role }}: {% if m.role == 'assistant' %}\
        {% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}{{ '\n' }}\
        {% endfor %}";
    let prompt = Prompt::from_source("chat_template.jinja", template, &options).expect("loads");
    let rendered = prompt
        .render(json!({"messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello! Ça va ? 🙂"},
        ]}))
        .unwrap();
    assert_eq!(rendered.text(), "user: Hi\nassistant: Hello! Ça va ? 🙂\n");
    let tokens = rendered.tokens().unwrap();
    let o200k = Tokenizer::named("o200k_base").unwrap();
    let ids = tokens.ids.unwrap();
    assert_eq!(ids, o200k.encode(rendered.text()).unwrap());
    // Up to "assistant:", the tokens are the same as those of the prefix
    // alone; from " Hello" to the newline (in the last token) they are
    // the assistant's.
    let before = o200k.encode("user: Hi\nassistant:").unwrap().len();
    let mut expected = vec![0u8; before];
    expected.resize(ids.len(), 1);
    assert_eq!(tokens.assistant_masks.unwrap(), expected);
}

/// A tokenizer that adds a BOS when asked for its special tokens.
const WITH_BOS: &str = r#"{"version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [{"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
                   {"id": 4, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "normalizer": null, "pre_tokenizer": {"type": "Whitespace"},
  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [4], "tokens": ["<s>"]}}},
  "decoder": null,
  "model": {"type": "WordLevel", "vocab": {"<unk>": 0, "hello": 1, "world": 2, "!": 3, "<s>": 4}, "unk_token": "<unk>"}}"#;

/// `check` warns where a chat template prints `bos_token` and its
/// tokenizer adds the same token again when a host encodes the text with
/// special tokens; the tokens teleprompt gives hold it once.
#[test]
fn a_template_that_prints_the_bos_its_tokenizer_adds_is_warned_of() {
    let template = "{{ bos_token }}{% for m in messages %}{{ m.content }} {% endfor %}";
    let config = r#"{"bos_token": "<s>", "eos_token": "!"}"#;
    let double = |tokenizer: &str, name: &str| {
        let dir = folder(
            name,
            &[
                ("tokenizer.json", tokenizer),
                ("tokenizer_config.json", config),
                ("chat_template.jinja", template),
            ],
        );
        let prompt = Prompt::from_file(dir.join("chat_template.jinja")).expect("loads");
        let warnings: Vec<_> = prompt
            .warnings()
            .into_iter()
            .filter(|warning| warning.kind() == Some("double-bos"))
            .collect();
        let ids = prompt
            .render(json!({"messages": [{"role": "user", "content": "hello"}]}))
            .unwrap()
            .tokens()
            .unwrap()
            .ids;
        (warnings, ids)
    };
    let (warnings, ids) = double(WITH_BOS, "bos-added");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let warning = &warnings[0];
    assert_eq!(warning.class(), ErrorClass::Warning);
    assert!(warning.message().contains("adds `<s>`"), "{warning}");
    let at = warning.location().expect("placed");
    assert_eq!((at.line, at.column), (1, 4), "on `bos_token`");
    assert_eq!(ids.as_deref(), Some(&[4, 1][..]), "one BOS");
    // A tokenizer that adds nothing: no warning.
    let (warnings, _) = double(WORDS, "bos-not-added");
    assert!(warnings.is_empty(), "{warnings:?}");
}

/// `RenderOptions::with_tokenizer` counts one render with another
/// tokenizer than the prompt's (a host that serves two models).
#[test]
fn a_render_may_count_with_the_host_s_tokenizer() {
    use teleprompt::{PromptContext, RenderOptions};
    let prompt = Prompt::from_source(
        "p.j2",
        "---\ntokenizer: o200k_base\n---\nHello, {{ name }}!",
        &LoadOptions::default(),
    )
    .unwrap();
    let cl100k = Tokenizer::named("cl100k_base").unwrap();
    let options = RenderOptions::new().with_tokenizer(cl100k.clone());
    let plain = prompt
        .render_with(json!({"name": "world"}), &options)
        .unwrap();
    let context = PromptContext::new().data(json!({"name": "world"})).unwrap();
    let turn = prompt.render_turn_with(&context, &options).unwrap();
    for rendered in [plain, turn] {
        let tokens = rendered.tokens().unwrap();
        assert_eq!(tokens.tokenizer, "cl100k_base");
        assert_eq!(
            tokens.messages[0].ids,
            cl100k.encode("Hello, world!").unwrap()
        );
    }
    let own = prompt
        .render(json!({"name": "world"}))
        .unwrap()
        .tokens()
        .unwrap();
    assert_eq!(own.tokenizer, "o200k_base");
}

/// A model whose tokenizer is not public is counted by a named stand-in,
/// flagged as an estimate in every count, with no ids; naming the model
/// itself says so.
#[test]
fn an_estimate_is_named_and_flagged() {
    let prompt = Prompt::from_source(
        "p.j2",
        "---\ntokenizer: estimate:o200k_base\n---\n{{ role(\"user\") }}Hello, {{ name }}!",
        &LoadOptions::default(),
    )
    .unwrap();
    let tokens = prompt
        .render(json!({"name": "world"}))
        .unwrap()
        .tokens()
        .unwrap();
    assert_eq!(tokens.tokenizer, "estimate:o200k_base");
    assert!(tokens.estimate);
    assert_eq!((tokens.total, tokens.messages[0].count), (4, 4));
    assert!(
        tokens.messages[0].ids.is_empty(),
        "a stand-in's ids mean nothing"
    );
    let shown = serde_json::to_value(&tokens).unwrap();
    assert_eq!(shown["estimate"], true);
    // A chat template: the total only.
    let options =
        LoadOptions::default().with_tokenizer(Tokenizer::named("estimate:cl100k_base").unwrap());
    let chat = Prompt::from_source(
        "chat_template.jinja",
        "{% for m in messages %}{{ m.content }}{% endfor %}",
        &options,
    )
    .unwrap();
    let tokens = chat
        .render(json!({"messages": [{"role": "user", "content": "Hello, world!"}]}))
        .unwrap()
        .tokens()
        .unwrap();
    assert_eq!((tokens.total, tokens.ids, tokens.estimate), (4, None, true));
    // Exact counts are not flagged.
    let exact = Tokenizer::named("o200k_base").unwrap();
    assert!(!exact.is_estimate());
    for private in ["claude-3-5-sonnet", "gemini-2.0-flash"] {
        let error = Tokenizer::named(private).unwrap_err();
        assert!(
            error.contains("is not public") && error.contains("estimate:o200k_base"),
            "{error}"
        );
    }
}

/// `budget:` cuts the oldest exchanges of the history until the turn fits:
/// whole exchanges (a tool call with its results), never the history's
/// system messages nor its latest exchange; the report says what went.
#[test]
fn a_budget_cuts_the_oldest_exchanges_of_the_history() {
    use teleprompt::{HistoryMessage, PromptContext};
    let history: Vec<HistoryMessage> = serde_json::from_value(json!([
        {"role": "system", "content": "Summary of the earlier conversation: the user plans a trip."},
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Sunny, 18 degrees."},
        {"role": "assistant", "content": "It is sunny in Paris, 18 degrees."},
        {"role": "user", "content": "And in Tokyo?"},
        {"role": "assistant", "content": "It rains in Tokyo."},
        {"role": "user", "content": "Book me a train to Lyon tomorrow morning."},
        {"role": "assistant", "content": "Done: the 8:04 from Paris Gare de Lyon."},
        {"role": "user", "content": "Thanks! What should I pack?"},
    ]))
    .unwrap();
    let template = "{{ role(\"system\") }}You plan trips.{{ history() }}";
    let load = |budget: &str| {
        let source = format!("---\ntokenizer: o200k_base\n{budget}---\n{template}");
        Prompt::from_source("trip.j2", &source, &LoadOptions::default()).unwrap()
    };
    let context = PromptContext::new().with_history(history.clone());
    let full = load("").render_turn(&context).unwrap().tokens().unwrap();
    let counts: Vec<usize> = full.messages.iter().map(|m| m.count).collect();
    // counts[0] is the template's system message; history message i is
    // counts[i + 1]. The first two exchanges: messages 1–4 and 5–6.
    let first_two: usize = counts[2..=7].iter().sum();
    let total = full.total - first_two;
    let prompt = load(&format!("budget:\n  total: {total}\n"));
    let rendered = prompt.render_turn(&context).unwrap();
    let report = rendered.budget().expect("a report").clone();
    assert_eq!((report.total, report.tokens), (total, total));
    assert_eq!(report.cuts.len(), 1);
    assert_eq!(
        (
            report.cuts[0].part.as_str(),
            report.cuts[0].messages,
            report.cuts[0].tokens
        ),
        ("history", 6, first_two)
    );
    let kept: Vec<_> = rendered
        .conversation()
        .iter()
        .map(|entry| serde_json::to_value(entry).unwrap()["content"].clone())
        .collect();
    assert_eq!(
        kept.len(),
        1 + 1 + 3,
        "the template's message, the summary, the last two exchanges"
    );
    assert_eq!(
        kept[1],
        "Summary of the earlier conversation: the user plans a trip."
    );
    assert_eq!(kept[2], "Book me a train to Lyon tomorrow morning.");
    // One token less: the third exchange goes too; never the latest.
    let tighter = load(&format!("budget: {}\n", total - 1))
        .render_turn(&context)
        .unwrap();
    assert_eq!(tighter.budget().unwrap().cuts[0].messages, 8);
    // A turn that fits is not cut, and says so.
    let roomy = load(&format!("budget: {}\n", full.total))
        .render_turn(&context)
        .unwrap();
    assert_eq!(roomy.budget().unwrap().cuts, []);
    // Too small for what may not be cut: an error with the numbers.
    let error = load("budget: 10\n").render_turn(&context).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Render);
    assert_eq!(error.kind(), Some("over-budget"));
    assert!(error.message().contains("over its budget of 10"), "{error}");
    // A budget needs a tokenizer.
    let error = Prompt::from_source("t.j2", "---\nbudget: 100\n---\nhi", &LoadOptions::default())
        .unwrap_err();
    assert!(error.message().contains("name the tokenizer"), "{error}");
    for bad in [
        "budget: 0",
        "budget: -3",
        "budget: {total: lots}",
        "budget: {max: 3}",
    ] {
        let source = format!("---\ntokenizer: o200k_base\n{bad}\n---\nhi");
        let error = Prompt::from_source("t.j2", &source, &LoadOptions::default()).unwrap_err();
        assert_eq!(error.class(), ErrorClass::Document, "{bad}: {error}");
    }
}

//! Tokens turn after turn (`TokenCache`): a turn counted with the
//! previous turn's tokens kept gives exactly what counting it alone gives
//! — ids, assistant masks, counts — whether the template only appends,
//! rewrites an earlier turn, or the data spells the tokenizer's special
//! tokens; `kept` is how many tokens at the start did not change. (The
//! twelve public tokenizers are checked the same way, over every
//! chat-template fixture, in the Python package's tests.)

use std::path::Path;

use serde_json::{json, Value};
use teleprompt::tokens::{TokenCache, Tokens};
use teleprompt::{LoadOptions, Prompt, RenderOptions};

/// A word-level `tokenizer.json` that cuts words as SentencePiece models
/// do (`Metaspace`, a `▁` put before the text's first word only): a word
/// at the start of a piece is another token than the same word after a
/// space, so encoding a text again from the wrong place shows. Its added
/// tokens: ChatML's two, and `<|im_start|>user`, which holds one of them
/// (a text may not be encoded again from a token another one holds).
const METASPACE: &str = r#"{"version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [
    {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 1, "content": "<|im_start|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 2, "content": "<|im_end|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 3, "content": "<|im_start|>user", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "normalizer": null,
  "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true},
  "post_processor": null, "decoder": null,
  "model": {"type": "WordLevel", "unk_token": "<unk>", "vocab": {
    "<unk>": 0, "<|im_start|>": 1, "<|im_end|>": 2, "<|im_start|>user": 3, "▁": 4,
    "user": 10, "▁user": 11, "assistant": 12, "▁assistant": 13, "system": 14, "▁system": 15,
    "hello": 20, "▁hello": 21, "world": 22, "▁world": 23, "again": 24, "▁again": 25,
    "é": 26, "▁é": 27, "naïve": 28, "▁naïve": 29}}}"#;

/// ChatML, each assistant turn in a `{% generation %}` block.
const CHATML: &str = "{% for m in messages %}<|im_start|>{{ m.role }} \
    {% if m.role == 'assistant' %}{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}\
    {% else %}{{ m.content }}<|im_end|>{% endif %} {% endfor %}\
    {% if add_generation_prompt %}<|im_start|>assistant {% endif %}";

/// A template that rewrites earlier turns: every assistant turn but the
/// last is printed as "again".
const FORGETFUL: &str = "{% for m in messages %}<|im_start|>{{ m.role }} \
    {% if m.role == 'assistant' and not loop.last %}again{% else %}{{ m.content }}{% endif %}<|im_end|> \
    {% endfor %}";

fn model(name: &str, template: &str) -> Prompt {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("token_cache")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("tokenizer.json"), METASPACE).expect("write");
    std::fs::write(dir.join("chat_template.jinja"), template).expect("write");
    Prompt::from_file(dir.join("chat_template.jinja")).expect("loads")
}

fn turn(role: &str, content: &str) -> Value {
    json!({"role": role, "content": content})
}

/// Counts `messages` with the cache and alone: the same tokens, but for
/// `kept`; gives the cached count.
fn both(prompt: &Prompt, cache: &mut TokenCache, messages: &[Value], prompted: bool) -> Tokens {
    let rendered = prompt
        .render(json!({"messages": messages, "add_generation_prompt": prompted}))
        .expect("renders");
    let cached = rendered.tokens_with(cache).expect("counts");
    let mut alone = rendered.tokens().expect("counts");
    assert_eq!(alone.kept, 0);
    alone.kept = cached.kept;
    assert_eq!(cached, alone, "{:?}", rendered.text());
    cached
}

#[test]
fn an_append_only_template_keeps_every_earlier_token() {
    let prompt = model("append", CHATML);
    let mut cache = TokenCache::new();
    let conversation = [
        turn("system", "hello world"),
        turn("user", "hello"),
        turn("assistant", "world é"),
        turn("user", "naïve hello"),
        turn("assistant", "again"),
    ];
    let mut before = 0;
    for length in 1..=conversation.len() {
        let tokens = both(&prompt, &mut cache, &conversation[..length], false);
        assert_eq!(tokens.kept, before, "turn {length}");
        assert!(tokens.total > before);
        before = tokens.total;
    }
    // The first word of the text, and the first after a special token,
    // are each their own token: the text was encoded from the right place.
    let ids = both(&prompt, &mut cache, &conversation, false).ids.unwrap();
    assert_eq!(
        ids[..4],
        [1, 14, 21, 23],
        "<|im_start|>system ▁hello ▁world"
    );
    // The generation prompt, then the answer: appended too.
    // The prompt's last token changes: the space it ends with is a token
    // alone ("▁"), and one with the answer's first word ("▁again") — the
    // prefix a server keeps ends before it.
    let prompted = both(&prompt, &mut cache, &conversation[..4], true);
    let answered = both(&prompt, &mut cache, &conversation, false);
    assert_eq!(answered.kept, prompted.total - 1);
    assert_eq!(
        answered
            .assistant_masks
            .unwrap()
            .iter()
            .filter(|&&m| m == 1)
            .count(),
        5
    );
}

#[test]
fn a_rewriting_template_keeps_the_tokens_before_the_rewrite() {
    let prompt = model("rewrite", FORGETFUL);
    let mut cache = TokenCache::new();
    let conversation = [
        turn("user", "hello"),
        turn("assistant", "world world"),
        turn("user", "hello"),
        turn("assistant", "é"),
    ];
    both(&prompt, &mut cache, &conversation[..2], false);
    let grown = both(&prompt, &mut cache, &conversation[..3], false);
    // "<|im_start|>user ▁hello <|im_end|> ▁ <|im_start|>assistant": the
    // old answer became "again" there.
    let ids = grown.ids.unwrap();
    assert_eq!(ids[..7], [3, 21, 2, 4, 1, 12, 25]);
    assert_eq!(grown.kept, 6, "up to where the answer was rewritten");
}

/// A user who types the template's own special tokens gets them read as
/// such by the tokenizer (as `transformers` does): the cache still agrees.
#[test]
fn data_that_spells_special_tokens_is_counted_the_same() {
    let prompt = model("spelled", CHATML);
    let mut cache = TokenCache::new();
    let mut messages = vec![turn("user", "hello <|im_end|> <|im_start|>assistant world")];
    both(&prompt, &mut cache, &messages, true);
    messages.push(turn("assistant", "<|im_start|>user<|im_start|>"));
    both(&prompt, &mut cache, &messages, false);
    messages.push(turn("user", "<|im_end|>"));
    let tokens = both(&prompt, &mut cache, &messages, true);
    assert!(tokens.kept > 0);
}

/// Turns that grow, shrink, rewrite and start over, drawn at random
/// (a fixed seed): each counted with the cache is what it is alone.
#[test]
fn random_turns_count_as_they_do_alone() {
    let prompts = [
        model("random-chatml", CHATML),
        model("random-forgetful", FORGETFUL),
    ];
    let words = [
        "hello",
        "world",
        "é",
        "naïve",
        "again",
        "<|im_start|>",
        "<|im_end|>",
        "x",
        " ",
        "user",
    ];
    let mut seed: u64 = 0x5eed;
    let mut next = |below: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % below
    };
    for prompt in &prompts {
        let mut cache = TokenCache::new();
        let mut messages: Vec<Value> = Vec::new();
        let mut kept_some = 0;
        for _ in 0..300 {
            let mut content = String::new();
            for _ in 0..1 + next(4) {
                content.push_str(words[next(words.len())]);
                if next(2) == 0 {
                    content.push(' ');
                }
            }
            let role = ["user", "assistant", "system"][next(3)];
            match next(10) {
                0 if !messages.is_empty() => {
                    let at = next(messages.len());
                    messages[at] = turn(role, &content);
                }
                1 => {
                    messages.pop();
                }
                2 if messages.len() > 8 => messages.clear(),
                _ => messages.push(turn(role, &content)),
            }
            let tokens = both(prompt, &mut cache, &messages, next(3) == 0);
            kept_some += usize::from(tokens.kept > 0);
        }
        assert!(kept_some > 150, "the cache was used: {kept_some} of 300");
    }
}

/// Another tokenizer's tokens are not kept; a prompt keeps its unchanged
/// messages and the start of the first changed one.
#[test]
fn a_prompt_keeps_its_unchanged_messages() {
    let prompt = Prompt::from_source(
        "turn.j2",
        "---\ntokenizer: o200k_base\n---\n{{ role(\"system\") }}You help with {{ topic }}.{{ role(\"user\") }}{{ question }}",
        &LoadOptions::default(),
    )
    .expect("loads");
    let mut cache = TokenCache::new();
    let render = |topic: &str, question: &str| {
        prompt
            .render(json!({"topic": topic, "question": question}))
            .expect("renders")
    };
    let first = render("tea", "Which is strongest?")
        .tokens_with(&mut cache)
        .unwrap();
    assert_eq!(first.kept, 0);
    let second = render("tea", "And the mildest?")
        .tokens_with(&mut cache)
        .unwrap();
    assert_eq!(second.kept, second.messages[0].count);
    assert_eq!(second, {
        let mut alone = render("tea", "And the mildest?").tokens().unwrap();
        alone.kept = second.kept;
        alone
    });
    let third = render("coffee", "And the mildest?")
        .tokens_with(&mut cache)
        .unwrap();
    // The system message changed at its last words: "You help with" is
    // kept, nothing after.
    assert!(
        third.kept > 0 && third.kept < third.messages[0].count,
        "{}",
        third.kept
    );
    // Counted with another tokenizer: nothing kept.
    let options = RenderOptions::new()
        .with_tokenizer(teleprompt::tokens::Tokenizer::named("cl100k_base").unwrap());
    let other = prompt
        .render_with(
            json!({"topic": "coffee", "question": "And the mildest?"}),
            &options,
        )
        .unwrap()
        .tokens_with(&mut cache)
        .unwrap();
    assert_eq!((other.tokenizer.as_str(), other.kept), ("cl100k_base", 0));
}

/// With an OpenAI encoding there is no place to encode again from: each
/// turn is encoded whole, and `kept` still says what did not change.
#[test]
fn an_openai_encoding_encodes_each_turn_whole() {
    let template = "---\ntokenizer: o200k_base\n---\n{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}";
    let prompt =
        Prompt::from_source("chat_template.jinja", template, &LoadOptions::default()).unwrap();
    let mut cache = TokenCache::new();
    let mut messages = vec![turn("user", "Hi")];
    let first = both(&prompt, &mut cache, &messages, false);
    messages.push(turn("assistant", "Hello!"));
    let second = both(&prompt, &mut cache, &messages, false);
    assert_eq!(second.kept, first.total);
}

/// A text twice in one turn, and again the next turn: each message keeps
/// its own ids.
#[test]
fn a_text_said_twice_is_counted_twice() {
    let prompt = Prompt::from_source(
        "echo.j2",
        "---\ntokenizer: o200k_base\n---\n{{ role(\"user\") }}{{ said }}{{ role(\"assistant\") }}{{ said }}{{ role(\"user\") }}{{ again }}",
        &LoadOptions::default(),
    )
    .expect("loads");
    let mut cache = TokenCache::new();
    for (said, again) in [
        ("Hello there", "Hello there"),
        ("Hello there", "Bye"),
        ("Bye", "Hello there"),
    ] {
        let rendered = prompt
            .render(json!({"said": said, "again": again}))
            .expect("renders");
        let cached = rendered.tokens_with(&mut cache).expect("counts");
        let alone = rendered.tokens().expect("counts");
        assert_eq!(cached.messages, alone.messages, "{said} / {again}");
        assert_eq!(cached.total, alone.total);
    }
}

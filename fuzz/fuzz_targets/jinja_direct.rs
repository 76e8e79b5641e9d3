//! Feeds arbitrary text to the Jinja loader as a plain Jinja body or a
//! chat template, at the strictness, over the data and with the whitespace
//! options (`trim_blocks`, `lstrip_blocks`, `keep_trailing_newline`) the
//! first byte picks, and renders it twice:
//! with the direct path (teleprompt's own evaluator, tried first where the
//! template lowers onto it) and on minijinja alone. Both must give the same
//! text, or the same error. Nothing may panic, hang or overflow the stack.
//!
//! Run: `cd fuzz && cargo +nightly fuzz run -s none jinja_direct -- -dict=jinja.dict`

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use teleprompt::limits::Limits;
use teleprompt::Strictness;

/// Data of every shape the direct path reads or declines: strings (with
/// case and space to change), integers at their limits, floats, booleans,
/// null, lists of one kind and of many, nested maps, keys named like
/// Jinja's globals and loop fields.
fn data() -> &'static [Value; 3] {
    static DATA: OnceLock<[Value; 3]> = OnceLock::new();
    DATA.get_or_init(|| {
        [
            json!({
                "user": {"name": "Ada", "age": 36, "premium": true, "nick": null, "tags": ["a", "b"]},
                "docs": [
                    {"title": "One", "tags": ["x", "y"], "year": 2015, "pinned": true, "score": 1.5},
                    {"title": "Two", "tags": [], "year": 2016, "pinned": false},
                    {"title": "ΣΊΣΥΦΟΣ Straße", "tags": ["z"], "year": -1, "pinned": null}
                ],
                "ids": [3, 1, 2, 9223372036854775807i64],
                "words": ["  a ", "B", ""],
                "mixed": [1, 2.5, "s", null, true, [1], {"k": "v"}],
                "empty": {},
                "n": 0,
                "big": 18446744073709551615u64,
                "s": "text",
                "range": "data's range",
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": {"x": 1}}}]},
                    {"role": "tool", "content": "ok", "tool_call_id": "c1"},
                    {"role": "assistant", "content": "done", "reasoning_content": "thought"},
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]}
                ],
                "bos_token": "<s>",
                "add_generation_prompt": true,
                "loop": {"index": "data's loop"}
            }),
            json!({"items": [[1, 2], [3]], "a": {"b": {"c": "deep"}}, "flag": false, "t": ""}),
            json!({}),
        ]
    })
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&mode, rest)) = bytes.split_first() else {
        return;
    };
    let Ok(body) = std::str::from_utf8(rest) else {
        return;
    };
    let strictness =
        [Strictness::Strict, Strictness::Semi, Strictness::Lenient][usize::from(mode % 3)];
    let data = data()[usize::from(mode / 3 % 3)].clone();
    let whitespace = mode / 9 % 8;
    // A chat template (transformers' environment, messages as it hands
    // them over) or plain Jinja.
    let chat = mode >= 128;
    let jinja = teleprompt::JinjaOptions::new()
        .with_trim_blocks(whitespace & 1 != 0)
        .with_lstrip_blocks(whitespace & 2 != 0)
        .with_keep_trailing_newline(whitespace & 4 != 0);
    let limits = Limits {
        max_output: 64 << 10,
        max_value_bytes: 16 << 10,
        max_steps: 200_000,
        ..Limits::default()
    };
    if let Some(both) =
        teleprompt::fuzzing::jinja_both(body, data, (strictness, chat), jinja, limits)
    {
        // The two count `max_steps` in their own units (the engine loop
        // passes and calls, minijinja instructions): a render that runs
        // out on minijinja alone may end on the direct path.
        let out_of_steps = matches!(&both.minijinja, Err(message) if message.contains("max_steps"));
        if !(out_of_steps && both.direct.is_ok()) {
            assert_eq!(
                both.direct, both.minijinja,
                "the direct path and minijinja differ"
            );
        }
    }
});

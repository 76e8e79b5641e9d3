//! Feeds arbitrary text to the Handlebars lexer and parser — as a plain
//! `.hbs` body, a Dotprompt `.prompt` file or a Semantic Kernel prompt
//! YAML, as the first byte picks; when it compiles, renders it against a
//! small fixed data set at the strictness the first byte picks. Nothing may
//! panic, hang or overflow the stack.
//!
//! Run: `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run handlebars_template`

#![no_main]

use libfuzzer_sys::fuzz_target;
use teleprompt::{LoadOptions, Strictness, Syntax};

fuzz_target!(|bytes: &[u8]| {
    let Some((&mode, rest)) = bytes.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let strict = match mode % 3 {
        0 => Strictness::Strict,
        1 => Strictness::Semi,
        _ => Strictness::Lenient,
    };
    let options = LoadOptions::new()
        .with_syntax(Syntax::Handlebars)
        .with_strictness(strict);
    let origin = match (mode / 3) % 4 {
        0 => "fuzz.prompt",
        1 => "fuzz.yaml",
        _ => "fuzz.hbs",
    };
    // What `teleprompt check` and `inspect` do with a file, then renders.
    let Some(prompt) = teleprompt_fuzz::load_as_check(origin, text, &options) else {
        return;
    };
    let data = serde_json::json!({
        "issue": {
            "identifier": "ENG-1",
            "title": "Fix it",
            "labels": ["bug", "p1"],
            "blocked_by": [{"identifier": "ENG-2", "state": "Todo"}],
            "parent": null,
            "n": 3,
            "f": 2.5
        },
        "attempt": null,
        "run": {"turn_number": 1, "max_turns": 5, "is_continuation": false},
        "list": [1, 2.5, "s", null, true, [1], {"k": "v"}],
        "empty": {}
    });
    let _ = prompt.render(data);
});

//! Prefix stability (issue 26): a Forge-style system prompt that prints
//! the time and the turn first loses its cached prefix every turn; with
//! the suggested fix (the time and turn after the fixed text) the prefix a
//! provider keeps is the whole system prompt up to them, turn after turn.
//! `check`'s `per-turn-prefix` warning fires on the first and not on the
//! second.

use serde_json::json;
use teleprompt::context::Clock;
use teleprompt::tokens::TokenCache;
use teleprompt::{HistoryMessage, LoadOptions, Prompt, PromptContext, Strictness};

/// The fixed part: instructions of a coding agent, ~1 KB.
const RULES: &str = "You are Forge, an expert software engineering assistant.\n\
    Read the files you change before you change them, keep every change as small as the task allows, \
    and run the project's tests after each change. Explain what you did and why in a few sentences; \
    quote errors exactly, with their file and line. Never commit secrets, never rewrite history that \
    others may have pulled, and ask before you delete anything you did not create. When a task is \
    ambiguous, say what you assumed. Prefer the project's own tools and conventions over your own: \
    its formatter, its linter, its test runner and the style of the code around the change. \
    Keep answers short unless asked for detail.\n";

fn prompts() -> (String, String) {
    let header = "---\ntokenizer: o200k_base\ndefault_role: system\n---\n";
    let clock = "Current time: {{system.local_datetime}}\nTurn: {{run.turn_number}}\n";
    let first = format!("{header}{clock}{RULES}");
    let last = format!("{header}{RULES}{clock}");
    (first, last)
}

/// The tokens each turn keeps from the one before, over 100 turns (a
/// minute apart, the history growing by an exchange a turn).
fn kept(source: &str) -> Vec<usize> {
    let prompt = Prompt::from_source("forge.hbs", source, &LoadOptions::default()).expect("loads");
    let mut cache = TokenCache::new();
    let mut history: Vec<HistoryMessage> = Vec::new();
    let start = jiff::Timestamp::from_second(1_767_603_600).unwrap();
    let mut kept = Vec::new();
    for turn in 1..=100u32 {
        let now = start + jiff::SignedDuration::from_mins(i64::from(turn));
        let context = PromptContext::new()
            .clock(Clock::Fixed(now))
            .turn(turn)
            .with_history(history.clone());
        let tokens = prompt
            .render_turn(&context)
            .expect("renders")
            .tokens_with(&mut cache)
            .expect("counts");
        if turn > 1 {
            kept.push(tokens.kept);
        }
        for (role, text) in [
            ("user", format!("Step {turn}, please.")),
            ("assistant", format!("Done with step {turn}.")),
        ] {
            history.push(serde_json::from_value(json!({"role": role, "content": text})).unwrap());
        }
    }
    kept
}

#[test]
fn the_suggested_fix_keeps_the_whole_system_prompt_cached() {
    let (first, last) = prompts();
    let rules = teleprompt::tokens::Tokenizer::named("o200k_base")
        .unwrap()
        .count(RULES.trim())
        .unwrap();
    // Clock first: a few tokens ("Current time: 2026-01-05 …") at most.
    let before = kept(&first);
    assert!(before.iter().all(|&kept| kept < 20), "{before:?}");
    // Clock last: every turn keeps at least the fixed rules.
    let after = kept(&last);
    // The report bench/README quotes (`-- --nocapture`).
    let spread = |kept: &[usize]| {
        let mut sorted = kept.to_vec();
        sorted.sort_unstable();
        let median = sorted[sorted.len() / 2];
        format!(
            "min {} median {median} max {}",
            sorted[0],
            sorted[sorted.len() - 1]
        )
    };
    println!(
        "100 turns, the rules {rules} tokens; tokens kept a turn: clock first {}; clock last {}",
        spread(&before),
        spread(&after)
    );
    assert!(
        after.iter().all(|&kept| kept >= rules),
        "{rules}: {after:?}"
    );
    // And `check`'s probe tells the two apart.
    let lenient = LoadOptions::default().with_strictness(Strictness::Lenient);
    let warning = Prompt::from_source("forge.hbs", &first, &lenient)
        .unwrap()
        .per_turn_warning()
        .expect("the time and turn come first");
    assert!(
        warning
            .message()
            .starts_with("the clock and the turn number are printed in the first message (system)"),
        "{warning}"
    );
    assert!(Prompt::from_source("forge.hbs", &last, &lenient)
        .unwrap()
        .per_turn_warning()
        .is_none());
}

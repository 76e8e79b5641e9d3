//! Appending to a context's history: the verdict of the tool-call rules
//! kept message by message is the verdict of `validate_history` on the whole
//! history (same index, rule and words) after every message; the latest user
//! language follows the appends; clones append independently.

use std::sync::Arc;

use serde_json::{json, Map, Value};
use teleprompt::context::{Clock, PromptContext};
use teleprompt::messages::{
    validate_history, History, HistoryError, HistoryMessage, Role, ToolCall,
};
use teleprompt::{LoadOptions, Prompt};

fn message(role: Role) -> HistoryMessage {
    HistoryMessage {
        role,
        content: Some(json!("text")),
        tool_calls: Vec::new(),
        tool_call_id: None,
        extra: Map::new(),
    }
}

fn user(language: Option<&str>) -> HistoryMessage {
    let mut user = message(Role::User);
    if let Some(language) = language {
        user.extra.insert("language".into(), json!(language));
    }
    user
}

fn calls(ids: &[&str]) -> HistoryMessage {
    let mut assistant = message(Role::Assistant);
    assistant.content = None;
    assistant.tool_calls = ids
        .iter()
        .map(|id| {
            serde_json::from_value::<ToolCall>(json!({"id": id, "function": {"name": "f"}}))
                .expect("a tool call")
        })
        .collect();
    assistant
}

fn result(id: Option<&str>) -> HistoryMessage {
    let mut tool = message(Role::Tool);
    tool.tool_call_id = id.map(str::to_string);
    tool
}

/// The messages the exhaustive check combines: every kind of message the
/// rules look at, ids that answer, ids that answer nothing, ids twice.
fn alphabet() -> Vec<HistoryMessage> {
    vec![
        user(None),
        user(Some("fr")),
        message(Role::System),
        message(Role::Assistant),
        calls(&["a"]),
        calls(&["a", "b"]),
        calls(&["a", "a"]),
        result(Some("a")),
        result(Some("b")),
        result(Some("c")),
        result(None),
    ]
}

/// The verdict as comparable parts (index, rule name, full text).
fn parts(verdict: &Result<(), HistoryError>) -> Option<(usize, &'static str, String)> {
    verdict
        .as_ref()
        .err()
        .map(|error| (error.index, error.rule.name(), error.to_string()))
}

/// Checks that `context` (built by appends) says what `validate_history`
/// says of its history, and so does a context given the same history whole.
fn assert_same_verdict(context: &PromptContext) {
    let history = context.history();
    let expected = validate_history(&history.to_vec());
    assert_eq!(parts(&history.validate()), parts(&expected));
    let appended = context.validate_history();
    assert_eq!(
        parts(&appended),
        parts(&expected),
        "appended: {}",
        describe(history)
    );
    let whole = PromptContext::new()
        .with_history(history.to_vec())
        .validate_history();
    assert_eq!(
        parts(&whole),
        parts(&expected),
        "whole: {}",
        describe(history)
    );
}

/// A history in short form, for failure messages.
fn describe(history: &History) -> String {
    let parts: Vec<String> = history
        .iter()
        .map(|message| match message.role {
            Role::Assistant if !message.tool_calls.is_empty() => {
                let ids: Vec<&str> = message.tool_calls.iter().map(|c| c.id.as_str()).collect();
                format!("calls{ids:?}")
            }
            Role::Tool => format!("tool({:?})", message.tool_call_id),
            role => role.as_str().to_string(),
        })
        .collect();
    parts.join(" ")
}

/// Every history of up to `depth` more messages of the alphabet, each
/// checked after its append. A parent is validated before its children
/// append (so they carry its verdict along), each child appends to a clone
/// of its parent, and the parent keeps its own history.
fn walk(context: &PromptContext, alphabet: &[HistoryMessage], depth: usize, count: &mut usize) {
    assert_same_verdict(context);
    *count += 1;
    if depth == 0 {
        return;
    }
    let len = context.history().len();
    for next in alphabet {
        let child = context.clone().push_message(next.clone());
        walk(&child, alphabet, depth - 1, count);
    }
    assert_eq!(context.history().len(), len);
}

#[test]
fn appends_give_the_verdict_of_the_whole_history_for_every_short_history() {
    let alphabet = alphabet();
    let mut count = 0;
    walk(&PromptContext::new(), &alphabet, 5, &mut count);
    // 1 + 11 + 11² + … + 11⁵ histories.
    assert_eq!(count, 177_156);
}

/// A small deterministic generator (xorshift64*).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// A long history that mostly follows the rules, with a mistake now and
/// then: a call left unanswered, a result with a wrong id, no id or an id
/// twice, a user speaking after results, an orphan result, rounds of up to
/// 40 calls (past the size where the check indexes ids in a map).
fn conversation(random: &mut Random, len: usize, mistakes: usize) -> Vec<HistoryMessage> {
    let mut history = Vec::with_capacity(len + 40);
    let mut next_id = 0;
    while history.len() < len {
        match random.below(4) {
            0 | 1 => {
                let language = ["fr", "de", ""][random.below(3)];
                history.push(user(random.chance(30).then_some(language)));
                history.push(message(Role::Assistant));
            }
            2 => {
                let count = if random.chance(10) {
                    17 + random.below(24)
                } else {
                    1 + random.below(3)
                };
                let ids: Vec<String> = (0..count)
                    .map(|_| {
                        next_id += 1;
                        format!("call_{next_id}")
                    })
                    .collect();
                let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                history.push(calls(&refs));
                let mut order: Vec<usize> = (0..count).collect();
                for i in (1..order.len()).rev() {
                    order.swap(i, random.below(i + 1));
                }
                for position in order {
                    let mistake = random.chance(mistakes);
                    let id = ids.get(position).map(String::as_str);
                    match (mistake, random.below(4)) {
                        (true, 0) => {}
                        (true, 1) => history.push(result(Some("nobody"))),
                        (true, 2) => history.push(result(None)),
                        (true, _) => {
                            history.push(result(id));
                            history.push(result(id));
                        }
                        (false, _) => history.push(result(id)),
                    }
                }
                if random.chance(mistakes) {
                    history.push(user(None));
                }
                history.push(message(Role::Assistant));
            }
            _ => {
                if random.chance(mistakes) {
                    history.push(result(Some("stray")));
                } else {
                    history.push(message(Role::System));
                }
            }
        }
    }
    history
}

#[test]
fn appends_give_the_verdict_of_the_whole_history_for_long_generated_histories() {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut broken = 0;
    let mut rules = std::collections::BTreeSet::new();
    for round in 0..300 {
        let mistakes = [0, 1, 3, 10][round % 4];
        let len = 20 + random.below(150);
        let history = conversation(&mut random, len, mistakes);
        let mut context = PromptContext::new();
        for (index, message) in history.iter().enumerate() {
            context = context.push_message(message.clone());
            // Ask now and then: once asked, the verdict follows each append
            // whether or not anyone asks again.
            if index % 7 == 0 || random.chance(50) {
                let expected = validate_history(&context.history().to_vec());
                rules.extend(parts(&expected).map(|(_, rule, _)| rule));
                assert_eq!(
                    parts(&context.validate_history()),
                    parts(&expected),
                    "round {round}, after message {index}: {}",
                    describe(context.history())
                );
            }
        }
        assert_same_verdict(&context);
        broken += usize::from(context.validate_history().is_err());
    }
    // The generator makes histories that pass and histories that break
    // each rule.
    assert!(
        (50..=250).contains(&broken),
        "{broken} broken histories of 300"
    );
    assert_eq!(rules.len(), 4, "{rules:?}");
}

#[test]
fn the_history_fixtures_give_the_same_verdict_after_each_append() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/history");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("the fixtures") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|extension| extension != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        let fixture: Value = serde_json::from_str(&text).expect("JSON");
        let history = teleprompt::messages::history_from_value(fixture["history"].clone())
            .expect("a history");
        let mut context = PromptContext::new();
        assert_same_verdict(&context);
        for message in history {
            context = context.push_message(message);
            assert_same_verdict(&context);
        }
        // The context's history is the fixture's: its final verdict is the
        // fixture's (checked against the text in the `messages` module).
        checked += 1;
    }
    assert!(checked >= 6);
}

#[test]
fn extend_history_is_appending_each_message() {
    let history = vec![user(Some("de")), calls(&["a", "b"]), result(Some("b"))];
    let extended = PromptContext::new()
        .push_message(user(None))
        .extend_history(history.clone());
    assert_eq!(extended.history().len(), 4);
    assert_same_verdict(&extended);
    assert_eq!(
        extended.validate_history().unwrap_err().to_string(),
        "history[2]: tool calls \"a\" have no result in history[3..=3]"
    );
    let answered = extended.extend_history([result(Some("a")), message(Role::Assistant)]);
    assert_eq!(answered.validate_history(), Ok(()));
}

#[test]
fn a_verdict_can_be_mended_by_the_next_message() {
    // A history that ends on tool calls breaks rule (a) until the results
    // arrive; one that ends on a partial round, rule (b).
    let context = PromptContext::new().push_message(calls(&["a", "b"]));
    assert!(context.validate_history().is_err());
    let context = context.push_message(result(Some("a")));
    assert_eq!(
        context.validate_history().unwrap_err().to_string(),
        "history[0]: tool calls \"b\" have no result in history[1..=1]"
    );
    let context = context.push_message(result(Some("b")));
    assert_eq!(context.validate_history(), Ok(()));
    let context = context.push_message(message(Role::Assistant));
    assert_eq!(context.validate_history(), Ok(()));
    // A broken rule stays broken.
    let broken = context.clone().push_message(result(Some("a")));
    let error = broken.validate_history().unwrap_err();
    let later = broken.push_message(message(Role::Assistant));
    assert_eq!(later.validate_history(), Err(error));
}

// --- clones -----------------------------------------------------------------

#[test]
fn clones_append_independently() {
    let base = PromptContext::new()
        .push_message(user(Some("fr")))
        .push_message(calls(&["a"]));
    // One clone asked for the verdict and the language before the split,
    // one not: both carry on alone.
    assert!(base.validate_history().is_err());
    let left = base.clone().push_message(result(Some("a")));
    let right = base
        .clone()
        .push_message(result(Some("z")))
        .push_message(user(Some("de")));
    assert_eq!(base.history().len(), 2);
    assert_eq!(left.history().len(), 3);
    assert_eq!(right.history().len(), 4);
    assert_eq!(left.validate_history(), Ok(()));
    assert_eq!(
        right.validate_history().unwrap_err().to_string(),
        "history[2]: tool result \"z\" answers no tool call of history[1] (calls: \"a\"); no result answers \"a\""
    );
    assert!(base.validate_history().is_err());
    assert_eq!(language(&base), json!("fr"));
    assert_eq!(language(&left), json!("fr"));
    assert_eq!(language(&right), json!("de"));
    assert_eq!(
        left.history().get(2).map(|m| &m.tool_call_id),
        Some(&Some("a".to_string()))
    );
    assert_eq!(
        right.history().get(2).map(|m| &m.tool_call_id),
        Some(&Some("z".to_string()))
    );
}

#[test]
fn an_append_copies_no_message_while_earlier_clones_hold_the_history() {
    let mut context = PromptContext::new().with_history(vec![user(Some("fr"))]);
    let first: *const HistoryMessage = &context.history()[0];
    let mut held = Vec::new();
    for turn in 0..100 {
        context = context.push_message(user(None));
        // A turn's clone, still held at the next append.
        held.push(context.clone().turn(turn + 1));
    }
    assert_eq!(context.history().len(), 101);
    // Every clone sees its own length and the very same messages.
    for (turn, clone) in held.iter().enumerate() {
        assert_eq!(clone.history().len(), turn + 2);
        assert!(std::ptr::eq(&clone.history()[0], first));
        let last = clone.history().last().expect("a message");
        assert!(std::ptr::eq(last, &context.history()[turn + 1]));
        assert_same_verdict(clone);
    }
}

#[test]
fn clones_that_append_at_one_place_branch() {
    // A base of a whole chunk and some: branches copy part of its last chunk.
    let mut base = PromptContext::new();
    for _ in 0..40 {
        base = base.push_message(user(None));
    }
    let branches: Vec<PromptContext> = (0..20)
        .map(|branch| {
            let mut context = base.clone();
            for step in 0..=branch {
                context = context.push_message(user(Some(&format!("{branch}.{step}"))));
            }
            context
        })
        .collect();
    assert_eq!(base.history().len(), 40);
    for (branch, context) in branches.iter().enumerate() {
        assert_eq!(context.history().len(), 41 + branch);
        for (step, message) in context.history().iter().skip(40).enumerate() {
            assert_eq!(message.extra["language"], json!(format!("{branch}.{step}")));
        }
        // The base's full chunk is shared by every branch.
        assert!(std::ptr::eq(&context.history()[0], &base.history()[0]));
        assert_eq!(language(context), json!(format!("{branch}.{branch}")));
    }
    assert_eq!(language(&base), json!(""));
}

#[test]
fn an_append_leaves_earlier_handles_and_renders_as_they_were() {
    let shared = Arc::new(vec![user(Some("fr"))]);
    let prompt = Prompt::from_source(
        "chat.j2",
        "{{ role('system') }}Hi.{{ history() }}",
        &LoadOptions::default(),
    )
    .expect("compiles");
    let context = PromptContext::new().with_history(shared.clone());
    let rendered = prompt.render_turn(&context).expect("renders");
    let context = context.push_message(message(Role::Assistant));
    assert_eq!(shared.len(), 1);
    assert_eq!(rendered.conversation().len(), 2);
    assert_eq!(context.history().len(), 2);
    let again = prompt.render_turn(&context).expect("renders");
    assert_eq!(again.conversation().len(), 3);
}

#[test]
fn renders_held_across_appends_keep_their_turn_and_share_the_messages() {
    let prompt = Prompt::from_source(
        "chat.j2",
        "{{ role('system') }}Hi.{{ history() }}",
        &LoadOptions::default(),
    )
    .expect("compiles");
    let mut context = PromptContext::new().with_history(vec![user(Some("fr"))]);
    let mut renders = Vec::new();
    // Past two chunks of appended messages, each render still held.
    for turn in 1..=70 {
        context = context.push_message(message(Role::Assistant));
        let rendered = prompt
            .render_turn(&context.clone().turn(turn))
            .expect("renders");
        renders.push(rendered);
    }
    for (turn, rendered) in renders.iter().enumerate() {
        let conversation = rendered.conversation();
        // The system message, the base message, and the turn's appends.
        assert_eq!(conversation.len(), turn + 3);
        for (entry, message) in conversation.iter().skip(1).zip(context.history()) {
            match entry {
                teleprompt::messages::Entry::History(entry) => {
                    assert!(std::ptr::eq(*entry, message), "turn {turn}: a copy");
                }
                other => panic!("not a history message: {other:?}"),
            }
        }
    }
}

#[test]
fn setting_the_same_history_again_is_the_same_history() {
    let shared = Arc::new(vec![user(Some("fr")), message(Role::Assistant)]);
    let context = PromptContext::new().with_history(shared.clone());
    let same = context.clone().with_history(shared.clone());
    assert!(History::ptr_eq(same.history(), context.history()));
    let again = same.clone().with_history(same.history().clone());
    assert!(History::ptr_eq(again.history(), context.history()));
    assert_eq!(same.validate_history(), Ok(()));
    let other = context.with_history(vec![calls(&["a"])]);
    assert!(other.validate_history().is_err());
}

// --- message.language -----------------------------------------------------------

fn language(context: &PromptContext) -> Value {
    let built = context
        .clone()
        .clock(Clock::Fixed(
            "2026-11-21T09:05:03Z".parse().expect("a time"),
        ))
        .build(&|_| true)
        .expect("builds");
    built
        .data
        .root()
        .get("message")
        .and_then(|message| message.get("language"))
        .map(|language| language.to_json())
        .unwrap_or(Value::Null)
}

#[test]
fn the_language_follows_the_appends() {
    let mut context = PromptContext::new().client_language("it");
    assert_eq!(language(&context), json!("it"));
    let steps = [
        (message(Role::Assistant), "it"),
        (user(None), "it"),
        (user(Some("fr")), "fr"),
        (user(Some("")), "fr"),
        (user(None), "fr"),
        (
            {
                let mut assistant = message(Role::Assistant);
                assistant.extra.insert("language".into(), json!("es"));
                assistant
            },
            "fr",
        ),
        (user(Some("de")), "de"),
        (
            {
                let mut odd = user(None);
                odd.extra.insert("language".into(), json!(42));
                odd
            },
            "de",
        ),
    ];
    for (index, (message, expected)) in steps.into_iter().enumerate() {
        context = context.push_message(message);
        assert_eq!(language(&context), json!(expected), "after message {index}");
        // A history set whole says the same.
        let whole = PromptContext::new()
            .client_language("it")
            .with_history(context.history().to_vec());
        assert_eq!(language(&whole), json!(expected), "whole, after {index}");
    }
}

#[test]
fn the_language_follows_appends_to_a_history_never_searched() {
    // Appends before anyone asked: the language is found when first asked.
    let context = PromptContext::new()
        .with_history(vec![user(Some("fr")), message(Role::Assistant)])
        .push_message(user(None));
    assert_eq!(language(&context), json!("fr"));
    let context = context.push_message(user(Some("pt")));
    assert_eq!(language(&context), json!("pt"));
}

#[test]
fn the_hosts_language_wins_over_appends() {
    let context = PromptContext::new()
        .message(json!({"language": "en", "text": "Hi"}))
        .expect("an object")
        .push_message(user(Some("fr")));
    assert_eq!(language(&context), json!("en"));
    let from_data = PromptContext::new()
        .data(json!({"message": {"language": null}}))
        .expect("an object")
        .push_message(user(Some("fr")));
    assert_eq!(language(&from_data), Value::Null);
    let without_language = PromptContext::new()
        .message(json!({"text": "Hi"}))
        .expect("an object")
        .push_message(user(Some("fr")));
    assert_eq!(language(&without_language), json!("fr"));
}

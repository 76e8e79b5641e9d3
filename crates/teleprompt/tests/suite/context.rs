//! The prompt context: precedence, namespaces, turns, language resolution,
//! the workspace provider, and a per-turn cost that does not grow with the
//! history.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use teleprompt::context::{
    Clock, Environment, Namespace, PromptContext, Workspace, BUILTIN_CONTINUATION_PROMPT, RESERVED,
};
use teleprompt::messages::{HistoryMessage, Role};
use teleprompt::{Data, ErrorClass, LoadOptions, Prompt};

const NOW: &str = "2026-11-21T09:05:03.250Z";

fn fixed() -> PromptContext {
    PromptContext::new().clock(Clock::Fixed(NOW.parse().unwrap()))
}

/// The merged value at a dotted path, `None` when absent.
fn read(data: &Data, path: &str) -> Option<Value> {
    path.split('.')
        .try_fold(data.root(), |view, key| view.get(key))
        .map(|view| view.to_json())
}

fn all(_: &str) -> bool {
    true
}

fn none(_: &str) -> bool {
    false
}

fn message(role: Role, language: Option<&str>) -> HistoryMessage {
    let mut extra = Map::new();
    if let Some(language) = language {
        extra.insert("language".into(), json!(language));
    }
    HistoryMessage {
        role,
        content: Some(json!("text")),
        tool_calls: Vec::new(),
        tool_call_id: None,
        extra,
    }
}

// --- system.* ---------------------------------------------------------------

#[test]
fn system_values_for_a_fixed_instant() {
    let context = fixed().time_zone_named("Asia/Kolkata").unwrap();
    let data = context.build(&all).unwrap().data;
    assert_eq!(
        read(&data, "system"),
        Some(json!({
            "current_date": "2026-11-21",
            "current_time": "09:05:03",
            "current_datetime": "2026-11-21T09:05:03Z",
            "day_of_week": "Saturday",
            "date_rfc1123": "Sat, 21 Nov 2026 09:05:03 UTC",
            "date_unix": 1_795_251_903,
            "date_unix_ms": 1_795_251_903_250_i64,
            "local_datetime": "2026-11-21 14:35:03 +05:30",
        }))
    );
}

#[test]
fn local_datetime_defaults_to_utc_and_follows_daylight_saving() {
    let data = fixed().build(&none).unwrap().data;
    assert_eq!(
        read(&data, "system.local_datetime"),
        Some(json!("2026-11-21 09:05:03 +00:00"))
    );
    let summer = PromptContext::new()
        .clock(Clock::Fixed("2026-07-01T12:00:00Z".parse().unwrap()))
        .time_zone_named("Europe/Paris")
        .unwrap();
    let data = summer.build(&none).unwrap().data;
    assert_eq!(
        read(&data, "system.local_datetime"),
        Some(json!("2026-07-01 14:00:00 +02:00"))
    );
}

#[test]
fn the_system_clock_moves() {
    let data = PromptContext::new().build(&none).unwrap().data;
    let unix = read(&data, "system.date_unix").and_then(|v| v.as_i64());
    assert!(unix.is_some_and(|seconds| seconds > 1_700_000_000));
}

#[test]
fn a_clock_from_rfc3339_text() {
    let clock = Clock::parse(" 2026-11-21T10:05:03.250+01:00 ").unwrap();
    let data = PromptContext::new().clock(clock).build(&none).unwrap().data;
    assert_eq!(
        read(&data, "system.current_datetime"),
        Some(json!("2026-11-21T09:05:03Z"))
    );
    let error = Clock::parse("2026-11-21").unwrap_err();
    assert_eq!(error.class(), ErrorClass::Input);
}

#[test]
fn an_unknown_time_zone_is_an_input_error() {
    let error = PromptContext::new()
        .time_zone_named("Mars/Olympus_Mons")
        .unwrap_err();
    assert_eq!(error.class(), ErrorClass::Input);
    assert!(error.message().contains("Mars/Olympus_Mons"));
}

// --- args, namespaces and precedence ------------------------------------------

#[test]
fn args_are_readable_at_the_root_and_under_args() {
    let context = fixed()
        .args(json!({"name": "Ada", "plan": {"tier": "pro"}}))
        .unwrap();
    let built = context.build(&all).unwrap();
    assert_eq!(read(&built.data, "name"), Some(json!("Ada")));
    assert_eq!(read(&built.data, "args.name"), Some(json!("Ada")));
    assert_eq!(read(&built.data, "plan.tier"), Some(json!("pro")));
    assert_eq!(read(&built.data, "args.plan.tier"), Some(json!("pro")));
    assert!(built.warnings.is_empty());
}

#[test]
fn a_root_arg_never_replaces_nor_merges_into_a_namespace() {
    let context = fixed()
        .message(json!({"text": "Hello"}))
        .unwrap()
        .args(json!({
            "message": {"text": "forged", "extra": "leak"},
            "system": {"current_date": "1999-01-01", "extra": "leak"},
            "attempt": 7,
            "session": {"mode": "forged"},
        }))
        .unwrap();
    let built = context.build(&all).unwrap();
    let data = &built.data;
    assert_eq!(read(data, "message.text"), Some(json!("Hello")));
    assert_eq!(read(data, "message.extra"), None);
    assert_eq!(read(data, "system.current_date"), Some(json!("2026-11-21")));
    assert_eq!(read(data, "system.extra"), None);
    // No turn was set, so there is no `attempt`; the arg still may not fill it.
    assert_eq!(read(data, "attempt"), None);
    // The host left `session` empty: the name is still the context's.
    assert_eq!(read(data, "session"), None);
    // Every hidden arg stays readable under args.
    assert_eq!(read(data, "args.message.text"), Some(json!("forged")));
    assert_eq!(read(data, "args.attempt"), Some(json!(7)));
    assert_eq!(read(data, "args.session.mode"), Some(json!("forged")));
    assert_eq!(
        built.warnings,
        vec![
            r#"arg "message" is hidden by the namespace "message"; read it as args.message"#,
            r#"arg "system" is hidden by the namespace "system"; read it as args.system"#,
            r#"arg "attempt" is hidden by the context value "attempt"; read it as args.attempt"#,
            r#"arg "session" is hidden by the namespace "session"; read it as args.session"#,
        ]
    );
}

#[test]
fn every_reserved_name_is_held_back_from_the_root() {
    let args: Map<String, Value> = RESERVED
        .iter()
        .map(|name| (name.to_string(), json!("from args")))
        .collect();
    let built = fixed()
        .args(Value::Object(args))
        .unwrap()
        .build(&none)
        .unwrap();
    assert_eq!(built.warnings.len(), RESERVED.len());
    for name in RESERVED {
        assert_ne!(read(&built.data, name), Some(json!("from args")), "{name}");
        assert_eq!(
            read(&built.data, &format!("args.{name}")),
            Some(json!("from args")),
            "{name}"
        );
    }
}

#[test]
fn namespaces_hold_what_the_host_gives() {
    let context = fixed()
        .assistant(json!({"name": "Ava", "id": "42"}))
        .unwrap()
        .conversation(json!({"id": 7, "direction": "inbound"}))
        .unwrap()
        .session(json!({"mode": "voice"}))
        .unwrap()
        .namespace(Namespace::Message, json!({"text": "Hi"}))
        .unwrap();
    let data = context.build(&none).unwrap().data;
    assert_eq!(read(&data, "assistant.name"), Some(json!("Ava")));
    assert_eq!(
        read(&data, "conversation.direction"),
        Some(json!("inbound"))
    );
    assert_eq!(read(&data, "session.mode"), Some(json!("voice")));
    assert_eq!(read(&data, "message.text"), Some(json!("Hi")));
    // Not read: no language resolved, no fallback added.
    assert_eq!(read(&data, "message.language"), None);
}

#[test]
fn namespaces_left_unset_are_absent() {
    let data = fixed().build(&all).unwrap().data;
    for name in [
        "assistant",
        "conversation",
        "session",
        "args",
        "custom_rules",
        "env",
    ] {
        assert_eq!(read(&data, name), None, "{name}");
    }
}

#[test]
fn non_objects_are_input_errors() {
    for bad in [json!(null), json!("text"), json!([1, 2]), json!(3)] {
        let error = PromptContext::new().args(bad.clone()).unwrap_err();
        assert_eq!(error.class(), ErrorClass::Input);
        let error = PromptContext::new().message(bad).unwrap_err();
        assert_eq!(error.class(), ErrorClass::Input);
        assert!(error.message().starts_with("the message namespace must be"));
    }
}

#[test]
fn dotted_keys_expand_without_overwriting() {
    let context = fixed()
        .args(json!({
            "user.profile.name": "Ada",
            "user.profile.role": "admin",
            "user": {"profile": {"role": "guest"}},
            "limit": 3,
            "limit.max": 9,
        }))
        .unwrap()
        .assistant(json!({"voice.speed": 1.5, "voice": {"name": "Ava"}}))
        .unwrap();
    let built = context.build(&none).unwrap();
    let data = &built.data;
    assert_eq!(
        read(data, "user.profile"),
        Some(json!({"role": "guest", "name": "Ada"}))
    );
    assert_eq!(read(data, "args.user.profile.name"), Some(json!("Ada")));
    assert_eq!(read(data, "limit"), Some(json!(3)));
    assert_eq!(
        read(data, "assistant.voice"),
        Some(json!({"name": "Ava", "speed": 1.5}))
    );
    assert_eq!(
        built.warnings,
        vec![
            r#"key "user.profile.role" in args is ignored: "user.profile.role" is already set"#,
            r#"key "limit.max" in args is ignored: "limit" is already set"#,
        ]
    );
}

#[test]
fn defaults_sit_under_runtime_values_and_above_the_fallbacks() {
    let defaults = Arc::new(json!({
        "name": "Guest",
        "tone": "friendly",
        "message": {"language": "English", "channel": "web"},
        "attempt": 99,
    }));
    let context = fixed()
        .turn(1)
        .args(json!({"name": "Ada"}))
        .unwrap()
        .message(json!({"text": "Hi"}))
        .unwrap();
    let data = context
        .build_with_defaults(&all, Some(defaults.clone()))
        .unwrap()
        .data;
    assert_eq!(read(&data, "name"), Some(json!("Ada")));
    assert_eq!(read(&data, "tone"), Some(json!("friendly")));
    assert_eq!(read(&data, "args.tone"), None);
    assert_eq!(read(&data, "message.text"), Some(json!("Hi")));
    assert_eq!(read(&data, "message.channel"), Some(json!("web")));
    assert_eq!(read(&data, "message.language"), Some(json!("English")));
    assert_eq!(read(&data, "attempt"), Some(Value::Null));

    // A language from the runtime beats the default.
    let data = context
        .clone()
        .client_language("fr")
        .build_with_defaults(&all, Some(defaults.clone()))
        .unwrap()
        .data;
    assert_eq!(read(&data, "message.language"), Some(json!("fr")));

    // Defaults put under a built Data by the caller land below the fallback.
    let data = context.build(&all).unwrap().data.over(defaults);
    assert_eq!(read(&data, "message.language"), Some(json!("")));
    assert_eq!(read(&data, "tone"), Some(json!("friendly")));
}

// --- message.language -------------------------------------------------------

#[test]
fn language_comes_from_the_latest_user_message_that_has_one() {
    let history = vec![
        message(Role::User, Some("de")),
        message(Role::User, Some("fr")),
        message(Role::Assistant, Some("es")),
        message(Role::User, None),
        message(Role::User, Some("")),
    ];
    let context = fixed().with_history(history).client_language("it");
    let data = context.build(&all).unwrap().data;
    assert_eq!(read(&data, "message"), Some(json!({"language": "fr"})));
}

#[test]
fn language_falls_back_to_the_client_then_to_empty() {
    let history = vec![
        message(Role::User, None),
        message(Role::Assistant, Some("es")),
    ];
    let context = fixed().with_history(history);
    let data = context
        .clone()
        .client_language("it")
        .build(&all)
        .unwrap()
        .data;
    assert_eq!(read(&data, "message.language"), Some(json!("it")));
    let data = context
        .clone()
        .client_language("")
        .build(&all)
        .unwrap()
        .data;
    assert_eq!(read(&data, "message.language"), Some(json!("")));
    let data = context.build(&all).unwrap().data;
    assert_eq!(read(&data, "message.language"), Some(json!("")));
}

#[test]
fn the_hosts_language_wins_even_when_empty() {
    let context = fixed()
        .with_history(vec![message(Role::User, Some("fr"))])
        .client_language("it");
    for explicit in [
        json!({"language": "pt"}),
        json!({"language": ""}),
        json!({"language": null}),
    ] {
        let expected = explicit["language"].clone();
        let data = context
            .clone()
            .message(explicit)
            .unwrap()
            .build(&all)
            .unwrap()
            .data;
        assert_eq!(read(&data, "message.language"), Some(expected));
    }
}

#[test]
fn a_dotted_message_language_is_the_hosts_own() {
    let context = fixed()
        .with_history(vec![message(Role::User, Some("fr"))])
        .message(json!({"message": "ignored", "language.code": "x", "text.plain": "Hi"}))
        .unwrap();
    let data = context.build(&all).unwrap().data;
    assert_eq!(read(&data, "message.language.code"), Some(json!("x")));
    assert_eq!(read(&data, "message.text.plain"), Some(json!("Hi")));
}

// --- turns --------------------------------------------------------------------

#[test]
fn first_run_continuation_and_retry() {
    let first = fixed().max_turns(5).build(&none).unwrap().data;
    assert_eq!(
        read(&first, "run"),
        Some(json!({"turn_number": 1, "max_turns": 5, "is_continuation": false}))
    );
    // Present and null, not absent: `{{ if .attempt }}` is false, not an error.
    assert_eq!(read(&first, "attempt"), Some(Value::Null));

    let continuation = fixed().turn(3).max_turns(5).build(&none).unwrap().data;
    assert_eq!(read(&continuation, "run.turn_number"), Some(json!(3)));
    assert_eq!(
        read(&continuation, "run.is_continuation"),
        Some(json!(true))
    );

    let retry = fixed().attempt(2).build(&none).unwrap().data;
    assert_eq!(read(&retry, "attempt"), Some(json!(2)));
    assert_eq!(read(&retry, "run.is_continuation"), Some(json!(false)));
    assert_eq!(read(&retry, "run.max_turns"), Some(Value::Null));
}

#[test]
fn whitespace_continuations_fall_back() {
    let first = fixed();
    let later = fixed().turn(2);
    assert_eq!(first.continuation_text(" \n\t", Some("Go on.")), " \n\t");
    assert_eq!(later.continuation_text(" \n\t", Some("Go on.")), "Go on.");
    assert_eq!(
        later.continuation_text("", Some("  ")),
        BUILTIN_CONTINUATION_PROMPT
    );
    assert_eq!(
        later.continuation_text("", None),
        BUILTIN_CONTINUATION_PROMPT
    );
    assert_eq!(
        later.continuation_text("Next: tests.", None),
        "Next: tests."
    );
    assert!(later.is_continuation() && !first.is_continuation());
    assert_eq!(later.turn_number(), 2);
}

// --- labels, history, custom rules ---------------------------------------------

#[test]
fn labels_are_kept_in_order() {
    let context = PromptContext::new()
        .label("issue", "PROJ-42")
        .label("turn", "3");
    let labels = context.labels().to_vec();
    assert_eq!(
        labels,
        vec![
            ("issue".to_string(), "PROJ-42".to_string()),
            ("turn".to_string(), "3".to_string())
        ]
    );
    let error = teleprompt::Error::new(ErrorClass::Render, "boom").with_labels(context.labels());
    assert_eq!(error.labels(), labels.as_slice());
}

#[test]
fn history_is_shared_and_stays_out_of_the_data() {
    let history = Arc::new(vec![message(Role::User, Some("fr"))]);
    let context = fixed().with_history(history.clone());
    let turn = context.clone().turn(2);
    // The very messages, not a copy.
    assert!(std::ptr::eq(&turn.history()[0], &history[0]));
    assert_eq!(turn.history().len(), 1);
    let data = turn.build(&all).unwrap().data;
    assert_eq!(read(&data, "history"), None);
    assert_eq!(read(&data, "messages"), None);
}

#[test]
fn custom_rules_are_a_host_string() {
    let data = fixed()
        .custom_rules("Always run the tests.")
        .build(&none)
        .unwrap()
        .data;
    assert_eq!(
        read(&data, "custom_rules"),
        Some(json!("Always run the tests."))
    );
}

// --- workspace ------------------------------------------------------------------

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let path =
            std::env::temp_dir().join(format!("teleprompt-context-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Scratch(path)
    }

    fn file(&self, relative: &str, text: &str) -> &Scratch {
        let path = self.0.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, text).unwrap();
        self
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn test_environment() -> Environment {
    Environment {
        os: "linux".into(),
        cwd: "/work/app".into(),
        shell: "/bin/zsh".into(),
        home: "/home/ada".into(),
    }
}

fn project(name: &str) -> Scratch {
    let scratch = Scratch::new(name);
    scratch
        .file(".gitignore", "target/\n*.log\n")
        .file(".env", "SECRET=1\n")
        .file("README.md", "# App\n\nDoes things.\n")
        .file("Cargo.toml", "[package]\n")
        .file("debug.log", "noise\n")
        .file("src/main.rs", "fn main() {}\n")
        .file("src/cli/args.rs", "\n")
        .file("target/debug/app", "\n")
        .file(".github/workflows/ci.yml", "\n");
    scratch
}

#[test]
fn workspace_values_when_read() {
    let scratch = project("read");
    let context = fixed()
        .workspace(Workspace::new(scratch.path()).environment(test_environment()))
        .custom_rules("Be brief.");
    let data = context.build(&all).unwrap().data;
    assert_eq!(
        read(&data, "env"),
        Some(json!({"os": "linux", "cwd": "/work/app", "shell": "/bin/zsh", "home": "/home/ada"}))
    );
    assert_eq!(
        read(&data, "files"),
        Some(json!(["Cargo.toml", "README.md", "src/"]))
    );
    assert_eq!(
        read(&data, "readme"),
        Some(json!("# App\n\nDoes things.\n"))
    );
    assert_eq!(read(&data, "custom_rules"), Some(json!("Be brief.")));
}

#[test]
fn files_go_to_the_configured_depth_and_honour_gitignore() {
    let scratch = project("depth");
    let workspace = Workspace::new(scratch.path()).max_depth(3);
    let data = fixed().workspace(workspace).build(&all).unwrap().data;
    assert_eq!(
        read(&data, "files"),
        Some(json!([
            "Cargo.toml",
            "README.md",
            "src/",
            "src/cli/",
            "src/cli/args.rs",
            "src/main.rs",
        ]))
    );
    let none_deep = Workspace::new(scratch.path()).max_depth(0);
    let data = fixed().workspace(none_deep).build(&all).unwrap().data;
    assert_eq!(read(&data, "files"), Some(json!([])));
}

#[test]
fn a_long_file_list_is_cut_with_a_marker() {
    let scratch = Scratch::new("many");
    for i in 0..30 {
        scratch.file(&format!("file{i:02}.txt"), "");
    }
    let workspace = Workspace::new(scratch.path()).max_entries(4);
    let data = fixed().workspace(workspace).build(&all).unwrap().data;
    assert_eq!(
        read(&data, "files"),
        Some(json!([
            "file00.txt",
            "file01.txt",
            "file02.txt",
            "file03.txt",
            "... (file list cut at 4 entries)",
        ]))
    );
}

#[test]
fn a_long_readme_is_cut_on_a_character_boundary() {
    let scratch = Scratch::new("readme");
    scratch.file("README.md", "ab€cd"); // € is 3 bytes: a b [€] c d
    let workspace = Workspace::new(scratch.path()).readme_max_bytes(4);
    let data = fixed().workspace(workspace).build(&all).unwrap().data;
    assert_eq!(
        read(&data, "readme"),
        Some(json!("ab\n[README.md truncated after 2 bytes]"))
    );
    let missing = Scratch::new("no-readme");
    let data = fixed()
        .workspace(Workspace::new(missing.path()))
        .build(&all)
        .unwrap()
        .data;
    assert_eq!(read(&data, "readme"), Some(json!("")));
}

#[test]
fn the_workspace_is_read_only_for_names_the_prompt_uses() {
    // A root that does not exist fails only when something reads it.
    let workspace = Workspace::new("/no/such/teleprompt/workspace").environment(test_environment());
    let context = fixed().workspace(workspace);
    let data = context.build(&|name| name == "env").unwrap().data;
    assert_eq!(read(&data, "env.shell"), Some(json!("/bin/zsh")));
    assert_eq!(read(&data, "files"), None);
    assert_eq!(read(&data, "readme"), None);
    let error = context.build(&|name| name == "files").unwrap_err();
    assert_eq!(error.class(), ErrorClass::Io);
}

#[test]
fn the_detected_environment_uses_the_workspace_root() {
    let scratch = Scratch::new("env");
    let environment = Environment::detect(scratch.path());
    assert_eq!(environment.os, std::env::consts::OS);
    assert_eq!(Path::new(&environment.cwd), scratch.path());
}

// --- rendering ------------------------------------------------------------------

#[test]
fn a_jinja_prompt_renders_against_the_context() {
    let source = "---\nsyntax: jinja\n---\n\
        {% if attempt %}Retry {{ attempt }}. {% endif %}\
        {% if run.is_continuation %}Turn {{ run.turn_number }}/{{ run.max_turns }}. {% endif %}\
        {{ assistant.name }} on {{ system.day_of_week }}: {{ name }}/{{ args.name }} \
        ({{ message.language }})\n";
    let prompt = Prompt::from_source("chat.md", source, &LoadOptions::default()).unwrap();
    let context = fixed()
        .assistant(json!({"name": "Ava"}))
        .unwrap()
        .args(json!({"name": "Ada"}))
        .unwrap()
        .with_history(vec![message(Role::User, Some("fr"))])
        .max_turns(5);
    let first = prompt.render(&context.build(&all).unwrap().data).unwrap();
    assert_eq!(first.text(), "Ava on Saturday: Ada/Ada (fr)\n");
    let retry = context.clone().turn(2).attempt(1);
    let again = prompt.render(&retry.build(&all).unwrap().data).unwrap();
    assert_eq!(
        again.text(),
        "Retry 1. Turn 2/5. Ava on Saturday: Ada/Ada (fr)\n"
    );
}

#[test]
fn the_root_shows_only_what_the_host_gave() {
    // Printed, iterated or JSON'd, the root is the host's data, the args
    // and the defaults; the context's own names (`system`, `assistant`,
    // `message`, `args`, …) are read by name only.
    let context = fixed()
        .assistant(json!({"name": "Ava"}))
        .unwrap()
        .args(json!({"topic": "owls"}))
        .unwrap()
        .custom_rules("Be brief.")
        .data(json!({"user": "Ada"}))
        .unwrap()
        .with_history(vec![message(Role::User, Some("fr"))]);
    let data = context.build(&all).unwrap().data;
    for (name, source, expected) in [
        (
            "root.hbs",
            "{{json this}}|{{#each this}}{{@key}} {{/each}}|{{assistant.name}} {{message.language}} {{args.topic}} {{system.current_date}}",
            r#"{"user":"Ada","topic":"owls"}|user topic |Ava fr owls 2026-11-21"#,
        ),
        (
            "root.gotmpl",
            "{{ toJSON . }}|{{ range $k, $v := . }}{{ $k }} {{ end }}|{{ .assistant.name }} {{ .message.language }} {{ .system.current_date }}",
            r#"{"user":"Ada","topic":"owls"}|topic user |Ava fr 2026-11-21"#,
        ),
    ] {
        let prompt = Prompt::from_source(name, source, &LoadOptions::default()).unwrap();
        let rendered = prompt.render(&data).unwrap();
        assert_eq!(rendered.text(), expected, "{name}");
    }
    // A misspelled namespace still finds its did-you-mean.
    let prompt = Prompt::from_source(
        "typo.hbs",
        "{{sytem.current_date}}",
        &LoadOptions::default(),
    )
    .unwrap();
    let error = prompt.render(&data).map(drop).unwrap_err().to_string();
    assert!(error.contains("system"), "{error}");
}

// --- cost per turn ------------------------------------------------------------------

fn conversation(messages: usize, args: usize) -> PromptContext {
    let history: Vec<HistoryMessage> = (0..messages)
        .map(|i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            message(role, None)
        })
        .collect();
    let args: Map<String, Value> = (0..args)
        .map(|i| (format!("arg{i}"), json!({"text": "x".repeat(40), "n": i})))
        .collect();
    fixed()
        .with_history(history)
        .args(Value::Object(args))
        .unwrap()
        .message(json!({"text": "Hi"}))
        .unwrap()
        .max_turns(50)
}

/// The best of several rounds of `iterations` per-turn builds.
fn time_turns(context: &PromptContext, iterations: u32) -> Duration {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            for turn in 0..iterations {
                let built = context.clone().turn(turn).build(&all).unwrap();
                std::hint::black_box(&built);
            }
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

#[test]
fn a_turn_costs_the_same_with_10_or_10_000_history_messages() {
    // Timed: not beside the suite's heavy tests.
    let _alone = crate::common::exclusive();
    let small = conversation(10, 10);
    let large = conversation(10_000, 10_000);
    // Warm up (the history's language is found once per history).
    time_turns(&small, 50);
    time_turns(&large, 50);
    let small_time = time_turns(&small, 2000);
    let large_time = time_turns(&large, 2000);
    let ratio = large_time.as_secs_f64() / small_time.as_secs_f64().max(1e-9);
    eprintln!("2000 turns: {small_time:?} with 10 messages, {large_time:?} with 10,000");
    assert!(
        ratio < 3.0,
        "10 messages: {small_time:?}, 10,000 messages: {large_time:?} (ratio {ratio:.2})"
    );
}

#[test]
fn turn_values_exist_once_the_host_sets_a_turn() {
    let data = fixed()
        .data(json!({"attempt": 2, "run": {"turn_number": 5}, "issue": {"id": "P-1"}}))
        .unwrap()
        .build(&all)
        .unwrap()
        .data;
    assert_eq!(read(&data, "attempt"), Some(json!(2)), "the host's data");
    assert_eq!(read(&data, "run.turn_number"), Some(json!(5)));
    assert_eq!(read(&data, "issue.id"), Some(json!("P-1")));

    let data = fixed()
        .data(json!({"attempt": 2, "issue": {"id": "P-1"}}))
        .unwrap()
        .turn(1)
        .build(&all)
        .unwrap()
        .data;
    assert_eq!(
        read(&data, "attempt"),
        Some(Value::Null),
        "the turn's value wins"
    );
    assert_eq!(read(&data, "run.is_continuation"), Some(json!(false)));
    assert!(fixed().data(json!([1])).is_err());
}

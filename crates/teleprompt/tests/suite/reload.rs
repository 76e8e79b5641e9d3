//! Reloading a library: changed files and the files they include are
//! rebuilt, a file that breaks keeps serving its last good version, and
//! renders on other threads never see a library half reloaded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::json;
use teleprompt::{Library, LoadOptions, SharedLibrary};

use crate::common::{dir, write};

fn render(library: &Library, name: &str, data: serde_json::Value) -> String {
    library
        .get(name)
        .unwrap_or_else(|| panic!("no prompt {name}"))
        .render(data)
        .unwrap_or_else(|error| panic!("{}", error.report()))
        .into_text()
}

#[test]
fn a_broken_edit_keeps_the_last_good_version_until_fixed() {
    let root = dir(
        "reload-last-good",
        &[("task.j2", "Fix {{ issue }}."), ("other.j2", "other")],
    );
    let mut library = Library::open(&root, &LoadOptions::default()).expect("readable");
    let first = library.entry("task").expect("loaded").version().to_string();

    // Nothing changed: nothing rebuilt, the same prompt object kept.
    let kept = Arc::clone(library.entry("task").expect("loaded").prompt());
    let report = library.reload().expect("readable");
    assert!(
        report.is_unchanged() && report.failed.is_empty(),
        "{report:?}"
    );
    assert!(Arc::ptr_eq(
        &kept,
        library.entry("task").expect("loaded").prompt()
    ));

    // A broken edit: the old version is served, the error listed.
    write(&root, "task.j2", "Fix {{ issue | shout }}.");
    let report = library.reload().expect("readable");
    assert!(report.is_unchanged(), "{report:?}");
    let [failed] = report.failed.as_slice() else {
        panic!("one failure expected: {report:?}");
    };
    assert!(failed.file.ends_with("task.j2"));
    assert_eq!(failed.kept.as_deref(), Some("task"));
    assert_eq!(failed.kept_version.as_deref(), Some(first.as_str()));
    assert!(failed.error.message().contains("shout"), "{}", failed.error);
    let entry = library.entry("task").expect("still served");
    assert_eq!(entry.version(), first);
    assert!(entry.error().is_some());
    assert_eq!(
        render(&library, "task", json!({"issue": "A-1"})),
        "Fix A-1."
    );
    assert_eq!(library.errors().count(), 1);
    // `load_dir` would refuse the directory as it is now.
    assert!(Library::load_dir(&root, &LoadOptions::default()).is_err());

    // Fixed: a new version, no error.
    write(&root, "task.j2", "Fix {{ issue }} now.");
    let report = library.reload().expect("readable");
    assert_eq!(report.updated, ["task"]);
    assert!(report.failed.is_empty());
    let entry = library.entry("task").expect("served");
    assert_ne!(entry.version(), first);
    assert!(entry.error().is_none());
    assert_eq!(
        render(&library, "task", json!({"issue": "A-1"})),
        "Fix A-1 now."
    );
    assert_eq!(library.errors().count(), 0);
}

#[test]
fn files_added_and_removed() {
    let root = dir("reload-add-remove", &[("a.j2", "a")]);
    let mut library = Library::open(&root, &LoadOptions::default()).expect("readable");
    write(&root, "sub/b.gotmpl", "b {{ .x }}");
    let report = library.reload().expect("readable");
    assert_eq!(report.added, ["b"]);
    assert_eq!(render(&library, "b", json!({"x": 1})), "b 1");
    std::fs::remove_file(root.join("a.j2")).expect("removable");
    let report = library.reload().expect("readable");
    assert_eq!(report.removed, ["a"]);
    assert!(library.get("a").is_none());
    // A new file that never loaded serves nothing and is listed.
    write(&root, "c.j2", "{% if %}");
    let report = library.reload().expect("readable");
    assert_eq!(report.failed.len(), 1);
    assert!(report.failed[0].kept.is_none());
    assert!(library.get("c").is_none());
    assert_eq!(library.errors().count(), 1);
}

#[test]
fn a_name_change_is_a_removal_and_an_addition() {
    let root = dir("reload-rename", &[("a.j2", "---\nname: first\n---\nx")]);
    let mut library = Library::open(&root, &LoadOptions::default()).expect("readable");
    write(&root, "a.j2", "---\nname: second\n---\nx");
    let report = library.reload().expect("readable");
    assert_eq!(report.added, ["second"]);
    assert_eq!(report.removed, ["first"]);
}

#[test]
fn a_prompt_is_rebuilt_when_a_file_it_includes_changes() {
    let root = dir(
        "reload-includes",
        &[
            ("main.hbs", "[{{> persona}}]"),
            ("persona.hbs", "I am {{name}}"),
            ("alone.hbs", "alone"),
        ],
    );
    let mut library = Library::open(&root, &LoadOptions::default()).expect("readable");
    let main = library.get("main").expect("loaded");
    assert_eq!(
        main.included_files()
            .map(|path| path.file_name().unwrap_or_default().to_owned())
            .collect::<Vec<_>>(),
        ["persona.hbs"]
    );
    assert_eq!(
        render(&library, "main", json!({"name": "Ann"})),
        "[I am Ann]"
    );
    write(&root, "persona.hbs", "I was {{name}}");
    let mut report = library.reload().expect("readable");
    report.updated.sort();
    // The partial is a prompt of its own too.
    assert_eq!(report.updated, ["main", "persona"]);
    assert_eq!(
        render(&library, "main", json!({"name": "Ann"})),
        "[I was Ann]"
    );

    // A file appears where the partial was looked for first (the name as
    // written, before `persona.hbs`): the prompt now uses it.
    write(&root, "persona", "plain {{name}}");
    let report = library.reload().expect("readable");
    assert_eq!(report.updated, ["main"]);
    assert_eq!(
        render(&library, "main", json!({"name": "Ann"})),
        "[plain Ann]"
    );

    // A partial that breaks breaks the prompt that includes it: the last
    // good version of both goes on.
    write(&root, "persona", "{{#if}}");
    let report = library.reload().expect("readable");
    assert!(report
        .failed
        .iter()
        .any(|f| f.kept.as_deref() == Some("main")));
    assert_eq!(
        render(&library, "main", json!({"name": "Ann"})),
        "[plain Ann]"
    );
}

#[test]
fn go_templates_from_other_files_are_rebuilt_with_them() {
    let root = dir(
        "reload-go-defines",
        &[
            ("task.gotmpl", "[{{ template \"sign\" . }}]"),
            ("defs.gotmpl", "{{ define \"sign\" }}by {{ .who }}{{ end }}"),
        ],
    );
    let mut library = Library::open(&root, &LoadOptions::default()).expect("readable");
    assert_eq!(render(&library, "task", json!({"who": "Ann"})), "[by Ann]");
    write(
        &root,
        "defs.gotmpl",
        "{{ define \"sign\" }}signed {{ .who }}{{ end }}",
    );
    let mut report = library.reload().expect("readable");
    report.updated.sort();
    assert_eq!(report.updated, ["defs", "task"]);
    assert_eq!(
        render(&library, "task", json!({"who": "Ann"})),
        "[signed Ann]"
    );
    // A second file defining the name: the prompt no longer loads (the
    // name is ambiguous), and its last good version goes on.
    write(&root, "more.gotmpl", "{{ define \"sign\" }}other{{ end }}");
    let report = library.reload().expect("readable");
    assert_eq!(report.added, ["more"]);
    assert!(
        report
            .failed
            .iter()
            .any(|f| f.kept.as_deref() == Some("task")),
        "{report:?}"
    );
    assert_eq!(
        render(&library, "task", json!({"who": "Ann"})),
        "[signed Ann]"
    );
}

#[test]
fn versions_are_the_same_across_loads() {
    let root = dir("reload-versions", &[("a.hbs", "x{{> b}}"), ("b.hbs", "y")]);
    let one = Library::open(&root, &LoadOptions::default()).expect("readable");
    let two = Library::open(&root, &LoadOptions::default()).expect("readable");
    assert_eq!(
        one.entry("a").expect("a").version(),
        two.entry("a").expect("a").version()
    );
    assert_ne!(
        one.entry("a").expect("a").version(),
        one.entry("b").expect("b").version()
    );
    // The same files in another folder: the same versions.
    let copy = dir(
        "reload-versions-copy",
        &[("a.hbs", "x{{> b}}"), ("b.hbs", "y")],
    );
    let three = Library::open(&copy, &LoadOptions::default()).expect("readable");
    assert_eq!(
        one.entry("a").expect("a").version(),
        three.entry("a").expect("a").version()
    );
}

#[test]
fn renders_go_on_while_the_library_reloads() {
    let root = dir(
        "reload-threads",
        &[("task.j2", "v1 {{ n }}"), ("other.gotmpl", "{{ .n }}")],
    );
    let shared = Arc::new(SharedLibrary::new(
        Library::open(&root, &LoadOptions::default()).expect("readable"),
    ));
    let stop = Arc::new(AtomicBool::new(false));
    let renderers: Vec<_> = (0..2)
        .map(|_| {
            let shared = Arc::clone(&shared);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut renders = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let library = shared.snapshot();
                    let text = render(&library, "task", json!({"n": 1}));
                    assert!(text == "v1 1" || text == "v2 1", "{text}");
                    renders += 1;
                }
                renders
            })
        })
        .collect();
    for round in 0..20 {
        let text = match round % 3 {
            0 => "v2 {{ n }}",
            1 => "v1 {{ n | nope }}",
            _ => "v1 {{ n }}",
        };
        write(&root, "task.j2", text);
        shared.reload().expect("readable");
    }
    stop.store(true, Ordering::Relaxed);
    for renderer in renderers {
        assert!(renderer.join().expect("no render failed") > 0);
    }
}

#[test]
fn libraries_of_prompts_have_nothing_to_reload() {
    let prompt =
        teleprompt::Prompt::from_source("a.j2", "a", &LoadOptions::default()).expect("loads");
    let mut library = Library::from_prompts([prompt]).expect("one name");
    assert!(library.reload().expect("nothing to read").is_unchanged());
    assert_eq!(library.len(), 1);
}

/// What a watcher passes on: each report's updated prompts and broken
/// files, or the reload's error.
#[cfg(feature = "watch")]
type Heard = std::sync::mpsc::Receiver<Result<(Vec<String>, Vec<String>), String>>;

/// A watcher of `root`'s library with a 50 ms debounce, and what it says.
#[cfg(feature = "watch")]
fn watched(root: &std::path::Path) -> (Arc<SharedLibrary>, teleprompt::Watcher, Heard) {
    let shared = Arc::new(SharedLibrary::new(
        Library::open(root, &LoadOptions::default()).expect("readable"),
    ));
    let (sender, receiver) = std::sync::mpsc::channel();
    let watcher = shared
        .watch(std::time::Duration::from_millis(50), move |result| {
            let heard = result
                .map(|report| {
                    let failed = report.failed.iter();
                    let failed = failed.map(|failed| failed.file.display().to_string());
                    (report.updated, failed.collect())
                })
                .map_err(|error| error.to_string());
            let _ = sender.send(heard);
        })
        .expect("watchable");
    (shared, watcher, receiver)
}

/// The next report within 10 s.
#[cfg(feature = "watch")]
fn next(heard: &Heard) -> (Vec<String>, Vec<String>) {
    let report = heard.recv_timeout(std::time::Duration::from_secs(10));
    report.expect("a report within 10 s").expect("reloads")
}

/// Asserts that the watcher says nothing for 600 ms (twelve debounces).
#[cfg(feature = "watch")]
fn assert_quiet(heard: &Heard) {
    let more = heard.recv_timeout(std::time::Duration::from_millis(600));
    assert!(more.is_err(), "an extra report: {more:?}");
}

#[cfg(feature = "watch")]
#[test]
fn the_watcher_reloads_once_per_change_and_then_settles() {
    let root = dir("reload-watch", &[("task.j2", "v1")]);
    let (shared, _watcher, heard) = watched(&root);
    write(&root, "task.j2", "v2");
    assert_eq!(next(&heard), (vec!["task".to_string()], vec![]));
    assert_eq!(render(&shared.snapshot(), "task", json!({})), "v2");
    // The reload read every file: reads are not changes.
    assert_quiet(&heard);
}

#[cfg(feature = "watch")]
#[test]
fn reading_the_files_is_not_a_change() {
    let root = dir("reload-watch-reads", &[("task.j2", "v1")]);
    let (shared, _watcher, heard) = watched(&root);
    for _ in 0..20 {
        std::fs::read(root.join("task.j2")).expect("readable");
        shared.reload().expect("reloads");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_quiet(&heard);
}

#[cfg(feature = "watch")]
#[test]
fn a_file_that_stays_broken_is_reported_once() {
    let root = dir("reload-watch-broken", &[("task.j2", "v1")]);
    let (_shared, _watcher, heard) = watched(&root);
    write(&root, "task.j2", "{{ broken");
    let (updated, failed) = next(&heard);
    assert!(updated.is_empty());
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].ends_with("task.j2"));
    // Saved again as it was: nothing new to say.
    write(&root, "task.j2", "{{ broken");
    assert_quiet(&heard);
    write(&root, "task.j2", "v3");
    assert_eq!(next(&heard), (vec!["task".to_string()], vec![]));
}

//! Loading a directory of prompts: which files are prompts, and every
//! broken one reported at once.

use std::path::Path;

use teleprompt::{prompt_files, ErrorClass, Library, LoadOptions};

use crate::common::dir;

#[test]
fn prompt_files_are_template_extensions_and_fronted_text_files() {
    let root = dir(
        "library-files",
        &[
            ("a.j2", "hi"),
            ("b.gotmpl", "hi"),
            ("notes/README.md", "# not a prompt"),
            ("notes/WORKFLOW.md", "---\nsyntax: go\n---\nhi"),
            ("ignored/c.j2", "hi"),
            (".gitignore", "ignored/\n"),
            ("data.json", "{}"),
            ("data.yaml", "template: not a prompt\n"),
            (
                "sk/story.yaml",
                "template_format: handlebars\ntemplate: hi\n",
            ),
            ("chat.prompty", "---\nname: p\n---\nuser:\nhi"),
            (
                "models/Qwen3/tokenizer_config.json",
                "{\"chat_template\": \"x\"}",
            ),
            ("models/Qwen3/config.json", "{}"),
        ],
    );
    let names: Vec<String> = prompt_files(&root)
        .expect("readable")
        .iter()
        .map(|path| {
            path.strip_prefix(&root)
                .expect("under the root")
                .display()
                .to_string()
        })
        .collect();
    assert!(!names.contains(&"ignored/c.j2".to_string()), "{names:?}");
    assert!(names.contains(&"a.j2".to_string()), "{names:?}");
    assert!(names.contains(&"b.gotmpl".to_string()), "{names:?}");
    assert!(
        names.contains(&"notes/WORKFLOW.md".to_string()),
        "{names:?}"
    );
    assert!(!names.contains(&"notes/README.md".to_string()), "{names:?}");
    assert!(!names.contains(&"data.json".to_string()), "{names:?}");
    // Other tools' prompt files, by name or content; their data is not.
    for prompt in [
        "sk/story.yaml",
        "chat.prompty",
        "models/Qwen3/tokenizer_config.json",
    ] {
        assert!(names.contains(&prompt.to_string()), "{prompt}: {names:?}");
    }
    assert!(!names.contains(&"data.yaml".to_string()), "{names:?}");
    assert!(
        !names.contains(&"models/Qwen3/config.json".to_string()),
        "{names:?}"
    );
}

#[test]
fn every_broken_file_is_reported_and_names_must_differ() {
    let root = dir(
        "library-broken",
        &[
            ("good.j2", "Hello {{ name }}"),
            ("bad_filter.j2", "{{ name | shout }}"),
            ("bad_yaml.j2", "---\nname: [\n---\nx"),
            ("one/task.j2", "a"),
            ("two/task.j2", "b"),
        ],
    );
    let errors = Library::load_dir(&root, &LoadOptions::default())
        .expect_err("broken files")
        .0;
    let mut found: Vec<(ErrorClass, String)> = errors
        .iter()
        .map(|error| {
            let file = Path::new(error.file().unwrap_or_default())
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            (error.class(), file)
        })
        .collect();
    found.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        found,
        vec![
            (ErrorClass::Parse, "bad_filter.j2".to_string()),
            (ErrorClass::Document, "bad_yaml.j2".to_string()),
            (ErrorClass::Document, "task.j2".to_string()),
        ],
        "{errors:?}"
    );
    assert!(errors.iter().any(|error| error
        .message()
        .starts_with("two prompts are named \"task\"")));
}

#[test]
fn a_clean_directory_loads_by_name() {
    let root = dir(
        "library-clean",
        &[
            ("system.j2", "---\nname: system\n---\nYou are {{ name }}."),
            ("task.gotmpl", "Fix {{ .issue }}."),
        ],
    );
    let library = Library::load_dir(&root, &LoadOptions::default()).expect("loads");
    assert_eq!(library.len(), 2);
    let task = library.get("task").expect("named by its file stem");
    let text = task
        .render(serde_json::json!({"issue": "PROJ-1"}))
        .expect("renders");
    assert_eq!(text.text(), "Fix PROJ-1.");
    assert!(library.get("nope").is_none());
}

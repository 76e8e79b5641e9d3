//! Jinja `include`, `import` and `extends` of files of the include root:
//! what may not be read (links out, FIFOs, too many files), deep chains,
//! where errors are placed, and what `inspect` and data reading see
//! through the files. Outputs and behaviour of the happy cases are in the
//! fixtures (`tests/fixtures/jinja/*include*`, `*import*`, `*extends*`),
//! checked against Python Jinja2 3.1.6.

use std::path::Path;

use serde_json::json;
use teleprompt::{ErrorClass, Library, LoadOptions, Prompt};

use crate::common::{at, dir, render};

fn labels(error: &teleprompt::Error) -> Vec<String> {
    error
        .labels()
        .iter()
        .map(|(key, value)| {
            let file = Path::new(value)
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("{key}: {file}")
        })
        .collect()
}

#[cfg(unix)]
#[test]
fn links_out_of_the_root_and_fifos_are_not_read() {
    let root = dir(
        "jinja-includes-links",
        &[
            ("prompts/main.j2", "a\n{% include \"evil.j2\" %}"),
            ("prompts/inside.j2", "{% include \"alias.j2\" %}"),
            ("prompts/real.j2", "real"),
            ("prompts/fifo.j2", "{% import \"pipe.j2\" as p %}"),
            ("secret.j2", "do not read"),
        ],
    );
    let prompts = root.join("prompts");
    std::os::unix::fs::symlink(root.join("secret.j2"), prompts.join("evil.j2")).unwrap();
    std::os::unix::fs::symlink(prompts.join("real.j2"), prompts.join("alias.j2")).unwrap();
    let error = render(&prompts.join("main.j2"), json!({})).expect_err("link out");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert_eq!(error.rule(), "parse/unresolved-include");
    assert_eq!(at(&error), ("main.j2".to_string(), 2, 12));
    assert!(
        error.message().contains("outside the include root"),
        "{error}"
    );
    // A link that stays inside is followed.
    assert_eq!(
        render(&prompts.join("inside.j2"), json!({})).unwrap(),
        "real"
    );
    // A FIFO is refused, not opened (opening would block).
    let made = std::process::Command::new("mkfifo")
        .arg(prompts.join("pipe.j2"))
        .status();
    if made.is_ok_and(|status| status.success()) {
        let error = render(&prompts.join("fifo.j2"), json!({})).expect_err("fifo");
        assert_eq!(error.rule(), "parse/unresolved-include");
        assert!(error.message().contains("not a regular file"), "{error}");
    }
}

#[test]
fn oversized_and_binary_files_are_errors() {
    let root = dir(
        "jinja-includes-size",
        &[
            ("big.j2", "{% include \"huge.j2\" %}"),
            ("bin.j2", "{% extends \"binary.j2\" %}"),
        ],
    );
    let huge = std::fs::File::create(root.join("huge.j2")).unwrap();
    huge.set_len(17 * 1024 * 1024).unwrap();
    std::fs::write(root.join("binary.j2"), b"ok \xff\xfe").unwrap();
    let error = render(&root.join("big.j2"), json!({})).expect_err("too big");
    assert!(error.message().contains("16 MiB"), "{error}");
    let error = render(&root.join("bin.j2"), json!({})).expect_err("binary");
    assert!(error.message().contains("not UTF-8"), "{error}");
}

#[test]
fn more_than_a_thousand_files_is_a_load_error() {
    // main includes f0 … f1000: 1,001 files.
    let mut files: Vec<(String, String)> = (0..=1000)
        .map(|i| (format!("parts/f{i}.j2"), format!("{i} ")))
        .collect();
    let body: String = (0..=1000)
        .map(|i| format!("{{% include \"parts/f{i}.j2\" %}}"))
        .collect();
    files.push(("main.j2".to_string(), body));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    let root = dir("jinja-includes-many", &files);
    let error = render(&root.join("main.j2"), json!({})).expect_err("too many");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert!(error.message().contains("more than 1000"), "{error}");
    assert_eq!(at(&error).0, "main.j2");

    // A thousand is allowed.
    let root = dir("jinja-includes-thousand", &files[..1000]);
    let body: String = (0..1000)
        .map(|i| format!("{{% include \"parts/f{i}.j2\" %}}"))
        .collect();
    std::fs::write(root.join("main.j2"), body).unwrap();
    let text = render(&root.join("main.j2"), json!({})).expect("a thousand files");
    assert!(
        text.starts_with("0 1 2 ") && text.ends_with("999 "),
        "{text}"
    );
}

#[test]
fn a_file_named_by_many_tags_is_read_once() {
    let body = "{% include \"a.j2\" %}{% include \"gone.j2\" ignore missing %}".repeat(20_000);
    let root = dir(
        "jinja-includes-many-tags",
        &[("main.j2", body.as_str()), ("a.j2", "a")],
    );
    let started = std::time::Instant::now();
    let text = render(&root.join("main.j2"), json!({})).expect("renders");
    assert_eq!(text, "a".repeat(20_000));
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
}

#[test]
fn deep_include_chains_load_and_stop_at_the_depth_limit() {
    // f0 includes f1 … includes f{n-1}, which reads the data.
    let chain = |name: &str, depth: usize| {
        let mut files: Vec<(String, String)> = (0..depth)
            .map(|i| {
                let text = if i + 1 < depth {
                    format!("{i}{{% include \"f{}.j2\" %}}", i + 1)
                } else {
                    "[{{ name }}]".to_string()
                };
                (format!("f{i}.j2"), text)
            })
            .collect();
        files.push(("main.j2".into(), "{% include \"f0.j2\" %}".into()));
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(name, text)| (name.as_str(), text.as_str()))
            .collect();
        dir(name, &files)
    };
    let root = chain("jinja-includes-chain", 20);
    assert_eq!(
        render(&root.join("main.j2"), json!({"name": "Ann"})).unwrap(),
        (0..19).map(|i| i.to_string()).collect::<String>() + "[Ann]"
    );
    // Deeper than a render may nest (each include is several levels of
    // `max_call_depth`): it loads, and the render stops with an error (no
    // stack overflow).
    let root = chain("jinja-includes-chain-deep", 90);
    let prompt = Prompt::from_file(root.join("main.j2")).expect("loads");
    let error = prompt.render(json!({"name": "Ann"})).expect_err("too deep");
    assert_eq!(error.class(), ErrorClass::Render, "{}", error.report());
    assert!(error.message().contains("max_call_depth"), "{error}");
    // Files nested past `max_call_depth` itself: no render could get
    // there, and the load stops at the file past it.
    let root = chain("jinja-includes-chain-deeper", 900);
    let error = Prompt::from_file(root.join("main.j2")).expect_err("too deep");
    assert_eq!(error.class(), ErrorClass::Parse, "{}", error.report());
    assert!(
        error
            .message()
            .contains("more than 100 deep (the limit max_call_depth)"),
        "{error}"
    );
    assert!(error.to_string().contains("f99.j2"), "{error}");
}

#[test]
fn errors_in_nested_files_name_the_file_that_included_them() {
    let root = dir(
        "jinja-includes-nested-errors",
        &[
            ("main.j2", "top\n{% include \"a.j2\" %}"),
            ("a.j2", "a\n  {% include \"b.j2\" %}"),
            ("b.j2", "b\nb {{ issue.titel }}"),
            ("parse.j2", "{% include \"a2.j2\" %}"),
            ("a2.j2", "\n{% include \"broken.j2\" %}"),
            ("broken.j2", "{{ x | nofilter }}"),
        ],
    );
    let error = render(&root.join("main.j2"), json!({"issue": {"title": "Fix it"}}))
        .expect_err("misspelled");
    assert_eq!(error.class(), ErrorClass::Render);
    assert_eq!(at(&error), ("b.j2".to_string(), 2, 6));
    assert_eq!(error.suggestion(), Some("did you mean \"issue.title\"?"));
    assert_eq!(
        labels(&error),
        ["included by: a.j2:2:14", "included by: main.j2:2:12"]
    );

    let error = render(&root.join("parse.j2"), json!({})).expect_err("unknown filter");
    assert_eq!(error.rule(), "parse/unknown-filter");
    assert_eq!(at(&error), ("broken.j2".to_string(), 1, 8));
    assert_eq!(
        labels(&error),
        ["included by: a2.j2:2:12", "included by: parse.j2:1:12"]
    );
}

#[test]
fn errors_in_an_included_file_at_the_prompt_name_the_tag() {
    let root = dir(
        "jinja-includes-site",
        &[
            (
                "main.j2",
                "---\nname: x\n---\nline\n  {% include \"card.j2\" %}",
            ),
            ("card.j2", "{{ user.nmae }}"),
        ],
    );
    let error = render(&root.join("main.j2"), json!({"user": {"name": "A"}})).expect_err("typo");
    assert_eq!(at(&error), ("card.j2".to_string(), 1, 4));
    assert_eq!(labels(&error), ["included by: main.j2:5:14"]);
}

#[test]
fn inspect_and_data_reading_follow_includes() {
    let root = dir(
        "jinja-includes-inputs",
        &[
            (
                "main.j2",
                "{% extends \"base.j2\" %}{% block body %}{% for task in tasks %}{% include \"task.j2\" %}{% endfor %}{% endblock %}{% block foot %}{{ super() }}.{% endblock %}",
            ),
            // `fallback` is never read: the prompt replaces its block.
            (
                "base.j2",
                "# {{ project.name }}\n{% block body %}{{ fallback }}{% endblock %}\n{% block foot %}{{ foot }}{% endblock %}",
            ),
            (
                "task.j2",
                "{% from \"fmt.j2\" import line with context %}{{ line(task.title) }} {{ task.owner.name }}",
            ),
            ("fmt.j2", "{% macro line(text) %}{{ prefix }} {{ text }}{% endmacro %}"),
        ],
    );
    let prompt = Prompt::from_file(root.join("main.j2")).expect("loads");
    let inputs = prompt.inputs().expect("inputs");
    assert_eq!(
        inputs.to_picoschema(),
        json!({
            "foot": "any",
            "prefix": "any",
            "project(object)": {"name": "any"},
            "tasks(array)": {"owner(object)": {"name": "any"}, "title": "any"},
        })
    );
    for name in ["project", "tasks", "prefix", "foot"] {
        assert!(prompt.reads(name), "{name}");
    }
    assert!(!prompt.reads("other"));
    let text = prompt
        .render(json!({
            "project": {"name": "P"},
            "prefix": "-",
            "foot": "F",
            "tasks": [{"title": "a", "owner": {"name": "Ann"}}],
        }))
        .unwrap()
        .into_text();
    assert_eq!(text, "# P\n- a Ann\nF.");
}

#[test]
fn from_source_reads_files_only_from_an_include_root() {
    let root = dir(
        "jinja-includes-source",
        &[("persona.j2", "I am {{ name }}")],
    );
    let body = "{% include \"persona.j2\" %}";
    let error = Prompt::from_source("inline.j2", body, &LoadOptions::default())
        .expect_err("no root, no files");
    assert_eq!(error.rule(), "parse/unresolved-include");
    assert!(
        error.message().contains("cannot read other template files"),
        "{error}"
    );
    let options = LoadOptions::new().with_include_root(root);
    let prompt = Prompt::from_source("inline.j2", body, &options).expect("loads");
    assert_eq!(
        prompt.render(json!({"name": "Ann"})).unwrap().text(),
        "I am Ann"
    );
}

#[test]
fn a_library_resolves_includes_in_its_root() {
    let root = dir(
        "jinja-includes-library",
        &[
            (
                "tasks/fix.j2",
                "{% include \"persona.j2\" %} fixes {{ issue }}",
            ),
            ("persona.j2", "Forge"),
        ],
    );
    let library = Library::load_dir(&root, &LoadOptions::default()).expect("loads");
    let prompt = library.get("fix").expect("loaded");
    assert_eq!(
        prompt.render(json!({"issue": "ABC-1"})).unwrap().text(),
        "Forge fixes ABC-1"
    );
}

#[test]
fn deep_import_chains_stop_at_the_depth_limit_and_long_extends_chains_do_not_load() {
    // f0 imports f1 … imports f899; each macro calls the next one's.
    let chain = |name: &str, depth: usize, text: &dyn Fn(usize, bool) -> String, main: &str| {
        let mut files: Vec<(String, String)> = (0..depth)
            .map(|i| (format!("f{i}.j2"), text(i, i + 1 < depth)))
            .collect();
        files.push(("main.j2".into(), main.into()));
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(name, text)| (name.as_str(), text.as_str()))
            .collect();
        dir(name, &files)
    };
    let root = chain(
        "jinja-includes-import-deep",
        900,
        &|i, more| match more {
            true => format!(
                "{{% import \"f{}.j2\" as m %}}{{% macro f() %}}{i}{{{{ m.f() }}}}{{% endmacro %}}",
                i + 1
            ),
            false => "{% macro f() %}[end]{% endmacro %}".to_string(),
        },
        "{% import \"f0.j2\" as m %}{{ m.f() }}",
    );
    // Nested past `max_call_depth`: no render could get there.
    let error = Prompt::from_file(root.join("main.j2")).expect_err("too deep");
    assert_eq!(error.class(), ErrorClass::Parse, "{}", error.report());
    assert!(error.message().contains("max_call_depth"), "{error}");

    // Each level's `super()` would nest the render a level deeper: a
    // chain of more than 32 templates is refused when it loads.
    let root = chain(
        "jinja-includes-extends-deep",
        50,
        &|i, more| match more {
            true => format!(
                "{{% extends \"f{}.j2\" %}}{{% block b %}}{i}{{{{ super() }}}}{{% endblock %}}",
                i + 1
            ),
            false => "{% block b %}[{{ name }}]{% endblock %}".to_string(),
        },
        "{% extends \"f0.j2\" %}",
    );
    let error = Prompt::from_file(root.join("main.j2")).expect_err("too long");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert!(error.message().contains("more than 32 deep"), "{error}");
}

#[test]
fn blocks_that_render_each_other_across_files_are_a_load_error() {
    // minijinja would nest a native stack frame per level, far past what
    // its depth limit allows (a stack overflow): refused at load.
    let root = dir(
        "jinja-includes-block-cycle",
        &[
            (
                "child.j2",
                "{% extends \"base.j2\" %}{% block a %}{{ self.b() }}{% endblock %}",
            ),
            (
                "base.j2",
                "{% block a %}{% endblock %}\n{% block b %}[{{ self.a() }}]{% endblock %}",
            ),
            (
                "super.j2",
                "{% extends \"base2.j2\" %}{% block b %}c{{ super() }}{% endblock %}",
            ),
            ("base2.j2", "{% block b %}b{{ self.b() }}{% endblock %}"),
        ],
    );
    let error = render(&root.join("child.j2"), json!({})).expect_err("endless");
    assert_eq!(error.rule(), "parse/block-cycle");
    assert_eq!(at(&error), ("base.j2".to_string(), 2, 18));
    assert_eq!(
        error.message(),
        "block \"a\" renders itself (a → b → a): a block cannot render itself, directly or through other blocks"
    );
    let error = render(&root.join("super.j2"), json!({})).expect_err("endless");
    assert_eq!(error.rule(), "parse/block-cycle");
    assert_eq!(at(&error), ("base2.j2".to_string(), 1, 18));
}

#[test]
fn a_library_reloads_a_prompt_when_a_file_it_includes_changes() {
    let root = dir(
        "jinja-includes-reload",
        &[
            ("task.j2", "{% extends \"layout/base.j2\" %}{% block body %}{% include \"parts/who.j2\" %}{% endblock %}"),
            ("layout/base.j2", "<{% block body %}{% endblock %}>"),
            ("parts/who.j2", "Ann"),
        ],
    );
    let mut library = Library::open(&root, &LoadOptions::default()).expect("readable");
    let prompt = library.get("task").expect("loaded");
    let included: Vec<String> = prompt
        .included_files()
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        included.iter().any(|path| path.ends_with("layout/base.j2"))
            && included.iter().any(|path| path.ends_with("parts/who.j2")),
        "{included:?}"
    );
    assert_eq!(prompt.render(json!({})).unwrap().into_text(), "<Ann>");
    std::fs::write(root.join("parts/who.j2"), "Bob").unwrap();
    library.reload().expect("readable");
    let prompt = library.get("task").expect("loaded");
    assert_eq!(prompt.render(json!({})).unwrap().into_text(), "<Bob>");
}

#[test]
fn many_tags_closing_a_long_cycle_stay_cheap() {
    // main → f0 → … → f98, which names main 50,000 times (99 deep: as
    // deep as files may nest, `max_call_depth`).
    let mut files: Vec<(String, String)> = (0..98)
        .map(|i| {
            (
                format!("f{i}.j2"),
                format!("{{% include \"f{}.j2\" %}}", i + 1),
            )
        })
        .collect();
    files.push(("f98.j2".into(), "{% include \"main.j2\" %}".repeat(50_000)));
    files.push(("main.j2".into(), "{% include \"f0.j2\" %}".into()));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    let root = dir("jinja-includes-long-cycles", &files);
    let started = std::time::Instant::now();
    let error = Prompt::from_file(root.join("main.j2")).expect_err("cycles");
    assert_eq!(error.rule(), "parse/include-cycle");
    assert!(error.all().len() <= 101, "{}", error.all().len());
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
}

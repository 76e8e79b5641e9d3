//! pongo2's `include`, `extends`, `import` and `ssi` (the `django` syntax)
//! of files of the include root: what may not be read (links out of the
//! root, huge files, files with no root), cycles and deep chains, and
//! where errors are placed. Outputs of the happy cases are in the fixtures
//! (`tests/fixtures/django/include*`, `extends*`, `import*`, `ssi*`),
//! rendered by pongo2 4.0.2.

use serde_json::json;
use teleprompt::{ErrorClass, Library, LoadOptions, Prompt};

use crate::common::{at, dir, included_by, render};

#[cfg(unix)]
#[test]
fn links_out_of_the_root_are_not_read_by_include_or_ssi() {
    let root = dir(
        "django-includes-links",
        &[
            ("prompts/main.django", "a\n{% include \"evil.html\" %}"),
            ("prompts/raw.django", "{% ssi \"evil.html\" %}"),
            ("prompts/inside.django", "{% ssi \"alias.html\" %}"),
            ("prompts/real.html", "{{ real }}"),
            ("secret.html", "do not read"),
        ],
    );
    let prompts = root.join("prompts");
    std::os::unix::fs::symlink(root.join("secret.html"), prompts.join("evil.html")).unwrap();
    std::os::unix::fs::symlink(prompts.join("real.html"), prompts.join("alias.html")).unwrap();
    for (file, place) in [("main.django", (2, 12)), ("raw.django", (1, 8))] {
        let error = render(&prompts.join(file), json!({})).expect_err("link out");
        assert_eq!(error.class(), ErrorClass::Parse);
        assert_eq!(error.rule(), "parse/unresolved-include", "{error}");
        assert_eq!(at(&error), (file.to_string(), place.0, place.1));
        assert!(
            error.message().contains("outside the include root"),
            "{error}"
        );
        assert!(!error.report().contains("do not read"));
    }
    // A link that stays inside is read (by ssi, as it is).
    assert_eq!(
        render(&prompts.join("inside.django"), json!({})).unwrap(),
        "{{ real }}"
    );
}

#[test]
fn huge_and_binary_files_are_errors() {
    let root = dir(
        "django-includes-size",
        &[
            ("big.django", "{% include \"huge.html\" %}"),
            ("bigssi.django", "{% ssi \"huge.html\" %}"),
            ("bin.django", "{% extends \"binary.html\" %}"),
        ],
    );
    let huge = std::fs::File::create(root.join("huge.html")).unwrap();
    huge.set_len(17 * 1024 * 1024).unwrap();
    std::fs::write(root.join("binary.html"), b"ok \xff\xfe").unwrap();
    for file in ["big.django", "bigssi.django"] {
        let started = std::time::Instant::now();
        let error = render(&root.join(file), json!({})).expect_err("too big");
        assert_eq!(error.class(), ErrorClass::Parse, "{error}");
        assert!(error.message().contains("16 MiB"), "{error}");
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }
    // Many `{% ssi %}` of one file: read once, and their texts together
    // bounded as one file is.
    let tags = "{% ssi \"part.txt\" %}".repeat(20_000);
    let root_many = dir(
        "django-includes-many-ssi",
        &[
            ("many.django", tags.as_str()),
            ("part.txt", &"x".repeat(1 << 20)),
        ],
    );
    let started = std::time::Instant::now();
    let error = render(&root_many.join("many.django"), json!({})).expect_err("too much");
    assert!(
        error.message().contains("add up to more than 16 MiB"),
        "{error}"
    );
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    let error = render(&root.join("bin.django"), json!({})).expect_err("binary");
    assert!(error.message().contains("not UTF-8"), "{error}");
}

#[test]
fn a_prompt_without_an_include_root_reads_no_file() {
    for body in ["{% include \"a.html\" %}", "{% ssi \"a.html\" %}"] {
        let error = Prompt::from_source("inline.django", body, &LoadOptions::default())
            .expect_err("no root");
        assert_eq!(error.class(), ErrorClass::Parse, "{error}");
        assert!(
            error.message().contains("cannot")
                && (error.message().contains("include root")
                    || error.message().contains("other template files")),
            "{error}"
        );
    }
}

#[test]
fn errors_in_included_and_extended_files_name_the_tag_that_used_them() {
    let root = dir(
        "django-includes-errors",
        &[
            ("main.django", "top\n{% include \"a.html\" with who=user %}"),
            ("a.html", "a\n  {% include \"b.html\" %}"),
            ("b.html", "b\nb {{ who.nmae|upper }}"),
            (
                "child.django",
                "{% extends \"base.html\" %}\n{% block x %}{{ who.nmae }}{% endblock %}",
            ),
            ("base.html", "[{% block x %}{% endblock %}]"),
        ],
    );
    let error = render(&root.join("main.django"), json!({"user": {"name": "Ada"}}))
        .expect_err("misspelled");
    assert_eq!(error.class(), ErrorClass::Render);
    assert_eq!(at(&error), ("b.html".to_string(), 2, 6));
    assert_eq!(included_by(&error), ["a.html:2:14", "main.django:2:12"]);

    let error = render(&root.join("child.django"), json!({"who": {"name": "Ada"}}))
        .expect_err("misspelled");
    assert_eq!(at(&error), ("child.django".to_string(), 2, 17));
}

#[test]
fn cycles_and_deep_chains_are_load_errors_in_bounded_time() {
    // a → b → c → a, by include, extends and parsed ssi.
    for tag in ["include", "extends", "ssi"] {
        let name = |n: &str| match tag {
            "ssi" => format!("{{% ssi \"{n}.html\" parsed %}}"),
            _ => format!("{{% {tag} \"{n}.html\" %}}"),
        };
        let root = dir(
            &format!("django-includes-cycle-{tag}"),
            &[
                ("main.django", &name("a")),
                ("a.html", &name("b")),
                ("b.html", &name("c")),
                ("c.html", &name("a")),
            ],
        );
        let error = render(&root.join("main.django"), json!({})).expect_err("cycle");
        assert_eq!(error.rule(), "parse/include-cycle", "{error}");
        assert!(
            error
                .message()
                .contains("a.html → b.html → c.html → a.html"),
            "{error}"
        );
    }
    // A chain of 40 templates extending each other: past the 32 one chain
    // may hold.
    let mut files: Vec<(String, String)> = (0..40)
        .map(|i| {
            let text = if i + 1 < 40 {
                format!("{{% extends \"l{}.html\" %}}{{% block a %}}{i}{{{{ block.Super }}}}{{% endblock %}}", i + 1)
            } else {
                "{% block a %}base{% endblock %}".to_string()
            };
            (format!("l{i}.html"), text)
        })
        .collect();
    files.push(("main.django".into(), "{% extends \"l0.html\" %}".into()));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let root = dir("django-includes-deep-extends", &files);
    let started = std::time::Instant::now();
    let error = render(&root.join("main.django"), json!({})).expect_err("too deep");
    assert!(error.message().contains("more than 32 deep"), "{error}");
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    // 20 deep renders, each level's block.Super in order.
    let mut shorter = files[20..40].to_vec();
    shorter.push(("main.django", "{% extends \"l20.html\" %}"));
    let root = dir("django-includes-extends-20", &shorter);
    let text = render(&root.join("main.django"), json!({})).unwrap();
    assert_eq!(
        text,
        (20..39).map(|i| i.to_string()).collect::<String>() + "base"
    );
    // Deeper includes than a render may nest: the render stops with an
    // error, no stack overflow.
    let mut files: Vec<(String, String)> = (0..90)
        .map(|i| {
            (
                format!("f{i}.html"),
                format!("{{% include \"f{}.html\" if_exists %}}", i + 1),
            )
        })
        .collect();
    files.push(("main.django".into(), "{% include \"f0.html\" %}".into()));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let root = dir("django-includes-deep", &files);
    let started = std::time::Instant::now();
    let prompt = Prompt::from_file(root.join("main.django")).expect("loads");
    let error = prompt.render(json!({})).expect_err("too deep");
    assert_eq!(error.class(), ErrorClass::Render, "{}", error.report());
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
}

#[test]
fn a_file_named_by_many_tags_is_read_once() {
    let body =
        "{% include \"a.html\" with n=1 %}{% include \"gone.html\" if_exists %}".repeat(20_000);
    let root = dir(
        "django-includes-many-tags",
        &[("main.django", body.as_str()), ("a.html", "{{ n }}")],
    );
    let started = std::time::Instant::now();
    let text = render(&root.join("main.django"), json!({})).expect("renders");
    assert_eq!(text, "1".repeat(20_000));
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
}

#[test]
fn a_library_reloads_a_prompt_when_a_file_it_reads_by_ssi_changes() {
    let root = dir(
        "django-includes-reload",
        &[
            ("main.django", "<{% ssi \"notes.txt\" %}>"),
            ("notes.txt", "one"),
        ],
    );
    let mut library = Library::open(&root, &LoadOptions::default()).expect("readable");
    let prompt = library.get("main").expect("loaded");
    assert_eq!(prompt.render(json!({})).unwrap().into_text(), "<one>");
    std::fs::write(root.join("notes.txt"), "two").unwrap();
    library.reload().expect("readable");
    let prompt = library.get("main").expect("loaded");
    assert_eq!(prompt.render(json!({})).unwrap().into_text(), "<two>");
}

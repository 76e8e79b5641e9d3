//! Handlebars partials from files: Dotprompt's `_name.prompt`, Forge's
//! template folder (`{{> forge-partial-system-info.md }}`), `name.hbs`;
//! where they are looked for, and what may not be read.

use serde_json::json;
use teleprompt::{ContentPart, ErrorClass, Library, LoadOptions, Prompt};

use crate::common::{at, dir, included_by, render};

#[test]
fn names_resolve_to_hbs_dotprompt_and_forge_files() {
    let root = dir(
        "partials-kinds",
        &[
            (
                "main.hbs",
                "{{> persona}}|{{> forge-partial-info.md }}|{{> common/tail who=name}}",
            ),
            ("persona.hbs", "I am {{name}}"),
            ("forge-partial-info.md", "os={{os}}"),
            ("common/tail.hbs", "[{{who}}: {{> sign}}]"),
            // Found beside common/tail.hbs first, not at the root.
            ("common/sign.hbs", "inner sign"),
            ("sign.hbs", "root sign"),
        ],
    );
    let text = render(
        &root.join("main.hbs"),
        json!({"name": "Ann", "os": "linux"}),
    )
    .unwrap_or_else(|e| panic!("{}", e.report()));
    assert_eq!(text, "I am Ann|os=linux|[Ann: inner sign]");
}

#[test]
fn dotprompt_partials_are_underscore_prompt_files() {
    // As the dotprompt npm package registers `_policy.prompt` as the
    // partial `policy` (checked with dotprompt 1.1.2).
    let root = dir(
        "partials-dotprompt",
        &[
            (
                "support.prompt",
                "---\ninput:\n  schema:\n    plan: string\n---\n{{role \"system\"}}\nRules:\n{{>policy plan=plan}}\n{{role \"user\"}}\nhi",
            ),
            ("_policy.prompt", "Plan {{plan}}: refunds in 30 days.\n"),
            // Another prompt, not the partial.
            ("policy.prompt", "---\nname: other\n---\nwrong file"),
        ],
    );
    let prompt = Prompt::from_file(root.join("support.prompt")).expect("loads");
    let rendered = prompt.render(json!({"plan": "premium"})).expect("renders");
    let messages: Vec<_> = rendered.messages().collect();
    assert_eq!(messages.len(), 2);
    assert_eq!(
        messages[0].content,
        [ContentPart::Text {
            text: "\nRules:\nPlan premium: refunds in 30 days.\n".to_string()
        }]
    );
    // A library lists the prompts, not the partials.
    let library = Library::load_dir(&root, &LoadOptions::default()).expect("loads");
    let names: Vec<_> = library.prompts().map(Prompt::name).collect();
    assert_eq!(names, ["other", "support"]);
}

#[test]
fn an_inline_partial_wins_over_a_file() {
    let root = dir(
        "partials-inline",
        &[
            (
                "main.hbs",
                "{{#*inline \"persona\"}}inline{{/inline}}{{> persona}}",
            ),
            ("persona.hbs", "file"),
        ],
    );
    assert_eq!(render(&root.join("main.hbs"), json!({})).unwrap(), "inline");
}

#[test]
fn recursive_partial_files_render_and_stop_at_the_depth_limit() {
    let root = dir(
        "partials-recursive",
        &[
            ("tree.hbs", "{{> node}}"),
            (
                "node.hbs",
                "{{name}}{{#if children}}({{#each children}}{{> node}}{{/each}}){{/if}}",
            ),
            ("loop.hbs", "{{> forever}}"),
            ("forever.hbs", "x{{> forever}}"),
        ],
    );
    let data = json!({"name": "a", "children": [{"name": "b"}, {"name": "c", "children": [{"name": "d"}]}]});
    assert_eq!(render(&root.join("tree.hbs"), data).unwrap(), "a(bc(d))");
    let error = render(&root.join("loop.hbs"), json!({})).expect_err("too deep");
    assert_eq!(error.class(), ErrorClass::Render, "{}", error.report());
}

#[test]
fn a_missing_partial_says_where_it_was_looked_for() {
    let root = dir("partials-missing", &[("main.hbs", "line\n{{> persnoa}}")]);
    let error = render(&root.join("main.hbs"), json!({})).expect_err("missing");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert_eq!(error.location().map(|l| (l.line, l.column)), Some((2, 5)));
    let help = error.suggestion().expect("a suggestion");
    assert!(help.contains("persnoa.hbs"), "{help}");
    assert!(help.contains("_persnoa.prompt"), "{help}");
}

#[test]
fn errors_inside_a_partial_file_point_into_it() {
    let root = dir(
        "partials-errors",
        &[
            ("parse.hbs", "a\n  {{> broken}}"),
            ("broken.hbs", "one\n{{#if x}}never closed"),
            ("render.hbs", "{{> reads}}"),
            ("reads.hbs", "one\ntwo {{issue.titel}}"),
        ],
    );
    let error = render(&root.join("parse.hbs"), json!({})).expect_err("broken");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert!(error.file().unwrap().ends_with("broken.hbs"), "{error}");
    assert_eq!(error.location().map(|l| l.line), Some(2));
    let label = &error.labels()[0];
    assert_eq!(label.0, "included by");
    assert!(label.1.ends_with("parse.hbs:2:7"), "{label:?}");

    let error = render(
        &root.join("render.hbs"),
        json!({"issue": {"title": "Fix it"}}),
    )
    .expect_err("misspelled");
    assert_eq!(error.class(), ErrorClass::Render);
    assert!(error.file().unwrap().ends_with("reads.hbs"), "{error}");
    assert_eq!(error.location().map(|l| (l.line, l.column)), Some((2, 7)));
    assert_eq!(error.suggestion(), Some("did you mean \"issue.title\"?"));
}

#[test]
fn names_may_not_leave_the_root() {
    let root = dir(
        "partials-escape",
        &[
            ("prompts/up.hbs", "{{> ../secret}}"),
            ("prompts/abs.hbs", "{{> \"/etc/hostname\"}}"),
            ("secret.hbs", "do not read"),
        ],
    );
    for file in ["up.hbs", "abs.hbs"] {
        let error = render(&root.join("prompts").join(file), json!({})).expect_err("outside");
        assert_eq!(error.class(), ErrorClass::Parse);
        assert!(error.message().contains("include root"), "{error}");
    }
}

#[cfg(unix)]
#[test]
fn links_out_of_the_root_and_fifos_are_not_read() {
    let root = dir(
        "partials-links",
        &[
            ("prompts/main.hbs", "{{> evil}}"),
            ("prompts/inside.hbs", "{{> alias}}"),
            ("prompts/real.hbs", "real"),
            ("prompts/fifo.hbs", "{{> pipe}}"),
            ("secret.hbs", "do not read"),
        ],
    );
    let prompts = root.join("prompts");
    std::os::unix::fs::symlink(root.join("secret.hbs"), prompts.join("evil.hbs")).unwrap();
    std::os::unix::fs::symlink(prompts.join("real.hbs"), prompts.join("alias.hbs")).unwrap();
    let error = render(&prompts.join("main.hbs"), json!({})).expect_err("link out");
    assert!(
        error.message().contains("outside the include root"),
        "{error}"
    );
    // A link that stays inside is followed.
    assert_eq!(
        render(&prompts.join("inside.hbs"), json!({})).unwrap(),
        "real"
    );
    // A FIFO is refused, not opened (opening would block).
    let made = std::process::Command::new("mkfifo")
        .arg(prompts.join("pipe.hbs"))
        .status();
    if made.is_ok_and(|status| status.success()) {
        let error = render(&prompts.join("fifo.hbs"), json!({})).expect_err("fifo");
        assert!(error.message().contains("not a regular file"), "{error}");
    }
}

#[test]
fn oversized_and_binary_partial_files_are_errors() {
    let root = dir(
        "partials-size",
        &[("big.hbs", "{{> huge}}"), ("bin.hbs", "{{> binary}}")],
    );
    let huge = std::fs::File::create(root.join("huge.hbs")).unwrap();
    huge.set_len(17 * 1024 * 1024).unwrap();
    std::fs::write(root.join("binary.hbs"), b"ok \xff\xfe").unwrap();
    let error = render(&root.join("big.hbs"), json!({})).expect_err("too big");
    assert!(error.message().contains("16 MiB"), "{error}");
    let error = render(&root.join("bin.hbs"), json!({})).expect_err("binary");
    assert!(error.message().contains("not UTF-8"), "{error}");
}

#[test]
fn from_source_reads_files_only_from_an_include_root() {
    let root = dir("partials-source", &[("persona.hbs", "I am {{name}}")]);
    let body = "---\nsyntax: handlebars\n---\n{{> persona}}";
    let error = Prompt::from_source("inline.hbs", body, &LoadOptions::default())
        .expect_err("no root, no files");
    assert_eq!(error.class(), ErrorClass::Parse);
    let options = LoadOptions::new().with_include_root(root);
    let prompt = Prompt::from_source("inline.hbs", body, &options).expect("loads");
    assert_eq!(
        prompt.render(json!({"name": "Ann"})).unwrap().text(),
        "I am Ann"
    );
}

#[test]
fn a_library_resolves_partials_in_its_root() {
    let root = dir(
        "partials-library",
        &[
            ("tasks/fix.hbs", "{{> persona}} fixes {{issue}}"),
            ("persona.hbs", "Forge"),
        ],
    );
    let library = Library::load_dir(&root, &LoadOptions::default()).expect("loads");
    let prompt = library.get("fix").expect("loaded");
    assert_eq!(
        prompt.render(json!({"issue": "ABC-1"})).unwrap().text(),
        "Forge fixes ABC-1"
    );
    // `persona.hbs` is a prompt of the library too (an `.hbs` file).
    assert!(library.get("persona").is_some());
}

#[test]
fn errors_in_nested_partial_files_name_each_include_innermost_first() {
    let root = dir(
        "partials-nested-errors",
        &[
            ("main.hbs", "top\n  {{> a}}"),
            ("a.hbs", "a\n {{> b}}"),
            ("b.hbs", "b {{issue.titel}}"),
            ("parse.hbs", "{{> a2}}"),
            ("a2.hbs", "\n{{> broken}}"),
            ("broken.hbs", "one\n{{#if x}}never closed"),
            ("unknown.hbs", "x {{> a3}}"),
            ("a3.hbs", "{{nohelper 1}}"),
            ("escape.hbs", "{{> a4}}"),
            ("a4.hbs", "\n\n{{> ../secret}}"),
        ],
    );
    let error = render(
        &root.join("main.hbs"),
        json!({"issue": {"title": "Fix it"}}),
    )
    .expect_err("misspelled");
    assert_eq!(error.class(), ErrorClass::Render);
    assert_eq!(at(&error), ("b.hbs".to_string(), 1, 5));
    assert_eq!(error.suggestion(), Some("did you mean \"issue.title\"?"));
    assert_eq!(included_by(&error), ["a.hbs:2:6", "main.hbs:2:7"]);

    // A file that does not parse: placed in it, with the includes that
    // led there.
    let error = render(&root.join("parse.hbs"), json!({})).expect_err("broken");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert_eq!(at(&error).0, "broken.hbs");
    assert_eq!(included_by(&error), ["a2.hbs:2:5", "parse.hbs:1:5"]);

    // Found when the partial file is compiled.
    let error = render(&root.join("unknown.hbs"), json!({})).expect_err("no helper");
    assert_eq!(error.class(), ErrorClass::Parse);
    assert_eq!(
        at(&error),
        ("a3.hbs".to_string(), 1, 3),
        "{}",
        error.report()
    );
    assert_eq!(included_by(&error), ["unknown.hbs:1:7"]);

    // A name a partial file may not read: placed at the name in that file.
    let error = render(&root.join("escape.hbs"), json!({})).expect_err("outside");
    assert!(error.message().contains("include root"), "{error}");
    assert_eq!(at(&error), ("a4.hbs".to_string(), 3, 5));
    assert_eq!(included_by(&error), ["escape.hbs:1:5"]);
}

#[test]
fn a_render_error_names_the_call_the_render_took() {
    let root = dir(
        "partials-two-sites",
        &[
            ("main.hbs", "{{> row a}}\n{{> row b}}"),
            ("row.hbs", "[{{name}}]"),
            ("both.hbs", "{{> x}}\n{{> y}}"),
            ("x.hbs", "x: {{> cell first}}"),
            ("y.hbs", "y:\n  {{> cell second}}"),
            ("cell.hbs", "<{{name}}>"),
        ],
    );
    let error = render(&root.join("main.hbs"), json!({"a": {"name": "A"}, "b": {}}))
        .expect_err("b has no name");
    assert_eq!(at(&error), ("row.hbs".to_string(), 1, 4));
    assert_eq!(included_by(&error), ["main.hbs:2:5"]);

    // `cell.hbs` was first included by `x.hbs`; this render reached it
    // through `y.hbs`.
    let data = json!({"first": {"name": "A"}, "second": {}});
    let error = render(&root.join("both.hbs"), data).expect_err("second has no name");
    assert_eq!(at(&error), ("cell.hbs".to_string(), 1, 4));
    assert_eq!(included_by(&error), ["y.hbs:2:7", "both.hbs:2:5"]);
    let data = json!({"first": {}, "second": {"name": "B"}});
    let error = render(&root.join("both.hbs"), data).expect_err("first has no name");
    assert_eq!(included_by(&error), ["x.hbs:1:8", "both.hbs:1:5"]);
}

#[test]
fn errors_through_partial_blocks_name_the_calls_that_led_there() {
    let root = dir(
        "partials-blocks",
        &[
            // In the layout, called as a partial block from the prompt.
            ("main.hbs", "top\n{{#> layout}}content{{/layout}}"),
            ("layout.hbs", "<{{> @partial-block}}>\n{{user.nmae}}"),
            // In a partial block's content, written in a partial file and
            // run by a partial the layout calls: the content was included
            // by the prompt's call of `page`, not through `frame`.
            ("outer.hbs", "{{> page}}"),
            ("page.hbs", "page\n{{#> shell}}[{{user.nmae}}]{{/shell}}"),
            ("shell.hbs", "shell {{> frame}}"),
            ("frame.hbs", "frame {{> @partial-block}}"),
            // In a partial the content calls.
            ("deep.hbs", "{{> page2}}"),
            ("page2.hbs", "{{#> shell}}\n {{> card}}{{/shell}}"),
            ("card.hbs", "{{user.nmae}}"),
            // A content run from within another partial block's content,
            // each through a partial in between.
            ("top.hbs", "{{> page3}}"),
            ("page3.hbs", "{{#> layout3}}{{user.nmae}}{{/layout3}}"),
            (
                "layout3.hbs",
                "{{#> inner3}}{{> @partial-block}}{{/inner3}}",
            ),
            ("inner3.hbs", "{{> via3}}"),
            ("via3.hbs", "{{> @partial-block}}"),
        ],
    );
    let data = json!({"user": {"name": "Ann"}});
    let error = render(&root.join("main.hbs"), data.clone()).expect_err("typo");
    assert_eq!(at(&error), ("layout.hbs".to_string(), 2, 3));
    assert_eq!(included_by(&error), ["main.hbs:2:6"]);

    let error = render(&root.join("outer.hbs"), data.clone()).expect_err("typo");
    assert_eq!(at(&error), ("page.hbs".to_string(), 2, 16));
    assert_eq!(included_by(&error), ["outer.hbs:1:5"]);

    let error = render(&root.join("deep.hbs"), data.clone()).expect_err("typo");
    assert_eq!(at(&error), ("card.hbs".to_string(), 1, 3));
    assert_eq!(included_by(&error), ["page2.hbs:2:6", "deep.hbs:1:5"]);

    let error = render(&root.join("top.hbs"), data).expect_err("typo");
    assert_eq!(at(&error), ("page3.hbs".to_string(), 1, 17));
    assert_eq!(included_by(&error), ["top.hbs:1:5"]);
}

#[test]
fn one_name_may_mean_a_file_in_each_folder() {
    // `{{> sign}}` in the body finds the root's sign.hbs; in
    // common/tail.hbs it finds common/sign.hbs, beside it, first.
    let root = dir(
        "partials-same-name",
        &[
            ("main.hbs", "{{> sign}}|{{> common/tail}}|{{> sign}}"),
            ("common/tail.hbs", "{{> sign}}"),
            ("sign.hbs", "root"),
            ("common/sign.hbs", "inner {{who.name}}"),
        ],
    );
    let text = render(&root.join("main.hbs"), json!({"who": {"name": "Ann"}}))
        .unwrap_or_else(|e| panic!("{}", e.report()));
    assert_eq!(text, "root|inner Ann|root");
    // An error in the second file is placed in it.
    let error = render(&root.join("main.hbs"), json!({"who": {}})).expect_err("no name");
    assert!(
        error
            .file()
            .is_some_and(|file| file.ends_with("common/sign.hbs")),
        "{}",
        error.report()
    );
    assert_eq!(
        error.location().map(|at| (at.line, at.column)),
        Some((1, 9))
    );
}

//! Whether each chat template of the fixtures only appends as its
//! conversation grows (`check`'s `not-append-only` warning): the verdict of
//! every template under `tests/fixtures/chat-template/templates/`, against
//! the checked-in listing `tests/data/append_only.txt` (`TELEPROMPT_BLESS=1`
//! rewrites it; review the change with `git diff`).

use std::path::Path;

use teleprompt::{ErrorClass, LoadOptions, Prompt};

use crate::common::blessing;

/// A template's verdict: `append-only`, or the kind of turns that
/// rewrites its output (with the lengths where it shows).
fn verdict(path: &Path) -> String {
    let source = std::fs::read_to_string(path).expect("readable");
    let prompt = match Prompt::from_source("chat_template.jinja", &source, &LoadOptions::default())
    {
        Ok(prompt) => prompt,
        Err(error) => return format!("does not load: {}", error.message()),
    };
    let rewrites: Vec<_> = prompt
        .warnings()
        .into_iter()
        .filter(|warning| warning.kind() == Some("not-append-only"))
        .collect();
    match rewrites.as_slice() {
        [] => "append-only".to_string(),
        [warning] => {
            assert_eq!(warning.class(), ErrorClass::Warning);
            let message = warning.message();
            // "… (KIND): the output for N message(s)[ with the generation
            // prompt] is not the start of the output for N+1; …"
            let kind = message
                .split_once('(')
                .and_then(|(_, rest)| rest.split_once(')'))
                .map_or("?", |(kind, _)| kind);
            let lengths = message
                .split_once("the output for ")
                .and_then(|(_, rest)| rest.split_once(';'))
                .map_or("?", |(lengths, _)| lengths);
            let lengths = lengths
                .replace(" message(s)", "")
                .replace(" is not the start of the output for ", " → ");
            format!("rewrites ({kind}): {lengths} messages")
        }
        more => panic!("one warning at most: {more:?}"),
    }
}

#[test]
fn every_fixture_template_s_append_only_verdict() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut templates: Vec<_> = std::fs::read_dir(root.join("fixtures/chat-template/templates"))
        .expect("templates")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jinja"))
        .collect();
    templates.sort();
    let mut listing = String::from(
        "# Whether each fixture chat template only appends as its conversation\n\
         # grows (tests/suite/append_only.rs; TELEPROMPT_BLESS=1 rewrites it).\n",
    );
    for path in &templates {
        let name = path.file_name().expect("name").to_string_lossy();
        listing.push_str(&format!("{name}: {}\n", verdict(path)));
    }
    let file = root.join("data/append_only.txt");
    if blessing() {
        std::fs::write(&file, &listing).expect("writable");
        return;
    }
    let expected = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        expected == listing,
        "the verdicts differ from tests/data/append_only.txt (run with TELEPROMPT_BLESS=1 and review with git diff):\n{}",
        listing
            .lines()
            .filter(|line| !expected.lines().any(|old| old == *line))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Both verdicts occur, with each kind of probe: the listing is no
    // blanket answer.
    for seen in [
        "append-only",
        "(text turns)",
        "(assistant reasoning)",
        "(tool calls)",
    ] {
        assert!(listing.contains(seen), "{seen}");
    }
}

/// The warning's witness: where the two outputs part, quoted from both.
#[test]
fn the_warning_shows_where_a_longer_conversation_rewrites_the_output() {
    let template = "{% for m in messages %}{{ m.role }}: {{ m.content }}\
        {% if loop.last %}<end>{% else %}<next>{% endif %}{% endfor %}";
    let prompt =
        Prompt::from_source("chat_template.jinja", template, &LoadOptions::default()).unwrap();
    let warning = prompt
        .warnings()
        .into_iter()
        .find(|warning| warning.kind() == Some("not-append-only"))
        .expect("warned");
    assert_eq!(
        warning.message(),
        "this template is not append-only (text turns): the output for 2 message(s) with the \
         generation prompt is not the start of the output for 3; they part at byte 79: \
         \"…hat is the capital of France?<end>\" becomes \
         \"…hat is the capital of France?<next>assistant: Paris.<end>\""
    );
    let fixed = "{% for m in messages %}{{ m.role }}: {{ m.content }}<next>{% endfor %}";
    let prompt =
        Prompt::from_source("chat_template.jinja", fixed, &LoadOptions::default()).unwrap();
    assert!(prompt.warnings().is_empty(), "{:?}", prompt.warnings());
}

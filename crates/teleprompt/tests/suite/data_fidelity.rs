//! Data keeps what its text says: YAML scalars read by the YAML 1.2 core
//! schema (the table in `tests/data/yaml_scalars.txt`), and numbers keep
//! their digits.

use std::path::Path;

use serde_json::{json, Value};
use teleprompt::data::{parse_text, Format};
use teleprompt::{LoadOptions, Prompt};

struct Row {
    scalar: String,
    go_printed: String,
    teleprompt: Value,
    note: String,
}

fn yaml_table() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/yaml_scalars.txt");
    let text = std::fs::read_to_string(&path).expect("the YAML scalar table");
    text.lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let columns: Vec<&str> = line.split('\t').collect();
            assert!(columns.len() >= 4, "a row of 4 or 5 columns: {line:?}");
            Row {
                scalar: columns[0].to_string(),
                go_printed: columns[2].to_string(),
                teleprompt: serde_json::from_str(columns[3])
                    .unwrap_or_else(|error| panic!("{line:?}: {error}")),
                note: columns.get(4).unwrap_or(&"").to_string(),
            }
        })
        .collect()
}

fn read_yaml(scalar: &str) -> Value {
    let data = parse_text(&format!("v: {scalar}\n"), Some(Format::Yaml), "t.yaml")
        .unwrap_or_else(|error| panic!("{scalar}: {}", error.report()));
    data["v"].clone()
}

#[test]
fn yaml_scalars_read_as_the_table_says() {
    let rows = yaml_table();
    assert!(rows.len() > 60);
    let mut wrong = Vec::new();
    for row in &rows {
        let value = read_yaml(&row.scalar);
        if value != row.teleprompt {
            wrong.push(format!("{}: {value} (want {})", row.scalar, row.teleprompt));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Where teleprompt reads a scalar as yaml.v3 does, the Go syntax prints
/// it as Go's text/template does (Sortie's WORKFLOW.md).
#[test]
fn yaml_scalars_print_as_sortie_prints_them() {
    let prompt = Prompt::from_source(
        "p.tmpl",
        "{{ if eq (printf \"%T\" .v) \"<nil>\" }}<no value>{{ else }}{{ .v }}{{ end }}",
        &LoadOptions::default(),
    )
    .expect("loads");
    let mut wrong = Vec::new();
    for row in yaml_table().iter().filter(|row| row.note.is_empty()) {
        let data = json!({ "v": read_yaml(&row.scalar) });
        let text = prompt.render(data).map(|r| r.text().to_string());
        match text {
            Ok(text) if text == row.go_printed => {}
            other => wrong.push(format!(
                "{}: {other:?} (Go: {})",
                row.scalar, row.go_printed
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn front_matter_reads_yaml_as_data_does() {
    // YAML 1.2 core: `012` is 12 (not YAML 1.1's octal 10), `0o17` is 15.
    let source = "---\ninput:\n  default:\n    country: NO\n    answer: yes\n    mode: 012\n    perm: 0o17\n---\n{{ country }} {{ answer }} {{ mode }} {{ perm }}";
    let prompt = Prompt::from_source("p.j2", source, &LoadOptions::default()).expect("loads");
    let rendered = prompt.render(json!({})).expect("renders");
    assert_eq!(rendered.text(), "NO yes 12 15");
}

const WIDE: &str = "12345678901234567890123";

#[test]
fn integers_too_large_for_64_bits_keep_their_digits_in_json() {
    let text = format!(
        r#"{{"s": "1e30 \"9\" -5", "a": [1, 2.5, {WIDE}, -{WIDE}, 1e30, 18446744073709551616],
            "o": {{"id": {WIDE}, "n": 18446744073709551615, "m": -9223372036854775809}}}}"#
    );
    let data = parse_text(&text, Some(Format::Json), "t.json").expect("parses");
    assert_eq!(
        data,
        json!({
            "s": "1e30 \"9\" -5",
            "a": [1, 2.5, WIDE, format!("-{WIDE}"), 1e30, "18446744073709551616"],
            "o": {"id": WIDE, "n": 18446744073709551615u64, "m": "-9223372036854775809"},
        })
    );
}

#[test]
fn integers_too_large_for_64_bits_keep_their_digits_in_yaml() {
    let text = format!(
        "a: &big {WIDE}\nb: *big\nc: [1, {WIDE}9, \"{WIDE}\", 1e30]\nbase: &base\n  id: -{WIDE}\nd:\n  <<: *base\n  n: 18446744073709551615\n"
    );
    let data = parse_text(&text, Some(Format::Yaml), "t.yaml").expect("parses");
    assert_eq!(
        data,
        json!({
            "a": WIDE,
            "b": WIDE,
            "c": [1, format!("{WIDE}9"), WIDE, 1e30],
            "base": {"id": format!("-{WIDE}")},
            "d": {"id": format!("-{WIDE}"), "n": 18446744073709551615u64},
        })
    );
}

/// Ids above `i64::MAX` (a `u64`) and beyond 64 bits print with all their
/// digits in every syntax and in `toJSON` / `tojson`, and integers still
/// compare.
#[test]
fn long_ids_print_all_their_digits_in_every_syntax() {
    let data = parse_text(
        &format!(
            r#"{{"u": 18446744073709551615, "w": {WIDE}, "list": [{WIDE}, 18446744073709551615]}}"#
        ),
        Some(Format::Json),
        "t.json",
    )
    .expect("parses");
    let cases = [
        (
            "p.tmpl",
            "{{ .u }} {{ .w }} {{ toJSON .list }} {{ gt .u 1 }} {{ printf \"%d %T\" .u .u }}",
        ),
        (
            "p.j2",
            "{{ u }} {{ w }} {{ list|tojson }} {{ u > 1 }} {{ u|tojson }}",
        ),
        (
            "p.hbs",
            "{{u}} {{w}} {{toJSON list}} {{#if (gt u 1)}}true{{/if}}",
        ),
    ];
    let wants = [
        format!("18446744073709551615 {WIDE} [\"{WIDE}\",18446744073709551615] true 18446744073709551615 uint64"),
        format!("18446744073709551615 {WIDE} [\"{WIDE}\", 18446744073709551615] True 18446744073709551615"),
        format!("18446744073709551615 {WIDE} [\"{WIDE}\",18446744073709551615] true"),
    ];
    for ((name, source), want) in cases.iter().zip(wants) {
        let prompt = Prompt::from_source(name, source, &LoadOptions::default()).expect(name);
        let rendered = prompt
            .render(data.clone())
            .unwrap_or_else(|error| panic!("{name}: {}", error.report()));
        assert_eq!(rendered.text(), want, "{name}");
    }
}

/// Data nests up to a depth (JSON 127 levels, YAML 64: its reader needs
/// more stack per level), and past it the error says so in plain words
/// (not a reader's debug text).
#[test]
fn data_nests_to_a_bound_named_in_plain_words() {
    for (format, most) in [(Format::Json, 127), (Format::Yaml, 64)] {
        // `most` levels: the object and `most - 1` lists.
        let nested =
            |lists: usize| format!("{{\"a\": {}1{}}}", "[".repeat(lists), "]".repeat(lists));
        assert!(
            parse_text(&nested(most - 1), Some(format), "t").is_ok(),
            "{format:?}"
        );
        let error = parse_text(&nested(most), Some(format), "t").unwrap_err();
        assert!(
            error
                .message()
                .ends_with(&format!("it nests deeper than {most} levels")),
            "{format:?}: {}",
            error.message()
        );
    }
}

//! `--update`: write what a failing case rendered as its expectation.
//!
//! Only the value of the case's `expect` (or `expect_messages`) changes:
//! the rest of the file (other cases, comments, the template body) stays
//! byte for byte. The edit is made on the lines of the file, for cases
//! written in block style (`- name: …` on its own lines, the key at the
//! start of a line); the edited file is read back and must hold exactly
//! the old document with that one value replaced, or nothing is written.
//! Files are replaced atomically (a temporary file in the same folder,
//! then a rename).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use teleprompt::document::{self, Document};
use teleprompt::{data, limits, Error, ErrorClass};

use crate::{Actual, CaseOrigin, CaseResult, Expectation, ExpectedMessage};

/// What [`update`] did.
#[derive(Debug, Default)]
pub struct Updated {
    /// The cases whose expectation was rewritten.
    pub cases: Vec<CaseOrigin>,
    /// The files that could not be rewritten safely (left as they were).
    pub errors: Vec<Error>,
}

/// Rewrites, in their files, the expectations of the failing cases of
/// `results` that rendered (a case that expects an error, or whose render
/// failed, is left alone). A file that cannot be rewritten safely is left
/// as it was, with an error in [`Updated::errors`].
pub fn update(results: &[CaseResult<'_>]) -> Updated {
    let mut by_file: BTreeMap<&PathBuf, Vec<(&CaseOrigin, &'static str, Value)>> = BTreeMap::new();
    for result in results {
        if result.passed() {
            continue;
        }
        let (key, value) = match (&result.case.expect, &result.actual) {
            (Expectation::Text(_), Some(Actual::Text(text))) => {
                ("expect", Value::String(text.clone()))
            }
            (Expectation::Messages(_), Some(Actual::Messages(messages))) => {
                ("expect_messages", messages_value(messages))
            }
            _ => continue,
        };
        let origin = &result.case.origin;
        by_file
            .entry(&origin.file)
            .or_default()
            .push((origin, key, value));
    }
    let mut updated = Updated::default();
    for (file, edits) in by_file {
        match update_file(file, &edits) {
            Ok(()) => updated
                .cases
                .extend(edits.iter().map(|(origin, _, _)| (*origin).clone())),
            Err(error) => updated.errors.push(error),
        }
    }
    updated
}

fn update_file(file: &Path, edits: &[(&CaseOrigin, &'static str, Value)]) -> Result<(), Error> {
    let bytes = limits::read_file(file, usize::MAX, limits::Input::Template)?;
    let origin = file.display().to_string();
    let mut text = String::from_utf8(bytes).map_err(|_| {
        Error::new(ErrorClass::Document, "the file is not UTF-8 text").with_file(&origin)
    })?;
    for (case, key, value) in edits {
        text = rewrite(&origin, &text, case.front_matter, case.index, key, value).map_err(
            |message| {
                Error::new(
                    ErrorClass::Document,
                    format!(
                        "cannot update test case {} safely: {message}; edit it by hand",
                        case.index + 1
                    ),
                )
                .with_file(&origin)
            },
        )?;
    }
    write_atomically(file, &text)
}

fn messages_value(messages: &[ExpectedMessage]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|message| serde_json::json!({"role": message.role, "content": message.content}))
            .collect(),
    )
}

/// Writes `text` to `path` through a temporary file in the same folder and
/// a rename: readers see the old file or the new one, never a part.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), Error> {
    let origin = path.display().to_string();
    let io = |error: std::io::Error| {
        Error::new(ErrorClass::Io, format!("cannot write the file: {error}")).with_file(&origin)
    };
    let (dir, name) = crate::folder_and_name(path);
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        if let Ok(metadata) = std::fs::metadata(path) {
            std::fs::set_permissions(&temp, metadata.permissions())?;
        }
        std::fs::rename(&temp, path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(io(error));
    }
    Ok(())
}

/// `text` with case `index`'s `key` set to `value`, checked by reading the
/// result back.
fn rewrite(
    origin: &str,
    text: &str,
    front_matter: bool,
    index: usize,
    key: &str,
    value: &Value,
) -> Result<String, String> {
    let crlf = text.contains("\r\n");
    let normal = text.replace("\r\n", "\n");
    let want = {
        let mut document = read(origin, &normal, front_matter)?;
        let case = cases_mut(&mut document, front_matter)
            .and_then(|cases| cases.get_mut(index))
            .and_then(Value::as_object_mut)
            .ok_or("the case is not where it was read")?;
        case.insert(key.to_string(), value.clone());
        document
    };
    // Block scalars first; quoted strings when the text does not fit one.
    for quoted in [false, true] {
        let edited = edit_lines(&normal, front_matter, index, key, value, quoted)?;
        let edited = match crlf {
            true => edited.replace('\n', "\r\n"),
            false => edited,
        };
        if read(origin, &edited, front_matter).ok().as_ref() == Some(&want) {
            return Ok(edited);
        }
    }
    Err("the edited file would not read back as intended".to_string())
}

/// The document the tests are in: the front matter, or the tests file.
fn read(origin: &str, text: &str, front_matter: bool) -> Result<Value, String> {
    match front_matter {
        true => Document::parse(origin, text)
            .map(|document| Value::Object(document.front_matter))
            .map_err(|error| error.message().to_string()),
        false => data::parse_yaml(text).map_err(|(_, _, message)| message),
    }
}

fn cases_mut(document: &mut Value, front_matter: bool) -> Option<&mut Vec<Value>> {
    match front_matter {
        true => document.get_mut(document::key::TESTS)?.as_array_mut(),
        false => document.as_array_mut(),
    }
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_content(line: &str) -> bool {
    let trimmed = line.trim();
    !trimmed.is_empty() && !trimmed.starts_with('#')
}

fn is_item(line: &str, indent: usize) -> bool {
    indent_of(line) == indent && {
        let rest = &line[indent..];
        rest == "-" || rest.starts_with("- ")
    }
}

/// The edit on the lines of the file.
fn edit_lines(
    text: &str,
    front_matter: bool,
    index: usize,
    key: &str,
    value: &Value,
    quoted: bool,
) -> Result<String, String> {
    let (bom, text) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let (start, end) = match front_matter {
        false => (0, lines.len()),
        true => {
            let close = lines
                .iter()
                .skip(1)
                .position(|line| line.trim_end() == "---")
                .map(|i| i + 1)
                .ok_or("the front matter is not closed")?;
            let tests = (1..close)
                .find(|&i| {
                    lines[i]
                        .strip_prefix("tests:")
                        .is_some_and(|rest| rest.trim().is_empty() || rest.trim().starts_with('#'))
                })
                .ok_or("`tests:` is not a block list on its own line")?;
            let end = (tests + 1..close)
                .find(|&i| {
                    is_content(lines[i]) && indent_of(lines[i]) == 0 && !lines[i].starts_with('-')
                })
                .unwrap_or(close);
            (tests + 1, end)
        }
    };
    let first = (start..end)
        .find(|&i| is_content(lines[i]))
        .ok_or("the list of cases is empty")?;
    let seq = indent_of(lines[first]);
    if !is_item(lines[first], seq) {
        return Err("the cases are not a block list (`- name: …`)".to_string());
    }
    let items: Vec<usize> = (first..end).filter(|&i| is_item(lines[i], seq)).collect();
    let item = *items
        .get(index)
        .ok_or("the case is not found in the list")?;
    let item_end = items.get(index + 1).copied().unwrap_or(end);
    let dash_rest = &lines[item][seq + 1..];
    let key_indent = match dash_rest.trim_start().is_empty() {
        false => seq + 1 + (dash_rest.len() - dash_rest.trim_start().len()),
        true => (item + 1..item_end)
            .find(|&i| is_content(lines[i]))
            .map(|i| indent_of(lines[i]))
            .ok_or("the case is empty")?,
    };
    let prefix = format!("{key}:");
    let sets_key = |line: &str| {
        line.get(key_indent..).is_some_and(|rest| {
            rest.strip_prefix(&prefix)
                .is_some_and(|after| after.is_empty() || after.starts_with([' ', '\t']))
        })
    };
    let key_line = (item..item_end)
        .find(|&i| (i == item || indent_of(lines[i]) == key_indent) && sets_key(lines[i]))
        .ok_or_else(|| format!("`{key}:` is not at the start of a line of the case"))?;
    let mut value_end = (key_line + 1..item_end)
        .find(|&i| !lines[i].trim().is_empty() && indent_of(lines[i]) <= key_indent)
        .unwrap_or(item_end);
    while value_end > key_line + 1 && lines[value_end - 1].trim().is_empty() {
        value_end -= 1;
    }
    let lead = match key_line == item {
        true => lines[item][..key_indent].to_string(),
        false => " ".repeat(key_indent),
    };
    let mut written = format!("{lead}{prefix}");
    match value {
        Value::Array(messages) if messages.is_empty() => written.push_str(" []"),
        Value::Array(messages) => {
            for message in messages {
                let role = message.get("role").and_then(Value::as_str).unwrap_or("");
                let content = message.get("content").and_then(Value::as_str).unwrap_or("");
                let inner = key_indent + 2;
                written.push_str(&format!("\n{}- role: {}", " ".repeat(inner), quote(role)));
                written.push_str(&format!("\n{}content:", " ".repeat(inner + 2)));
                written.push_str(&scalar(content, inner + 2, quoted));
            }
        }
        other => written.push_str(&scalar(other.as_str().unwrap_or(""), key_indent, quoted)),
    }
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    out.extend_from_slice(&lines[..key_line]);
    out.push(&written);
    out.extend_from_slice(&lines[value_end..]);
    Ok(format!("{bom}{}", out.join("\n")))
}

/// A plain word stays plain; anything else is a double-quoted string.
fn quote(text: &str) -> String {
    match !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        true => text.to_string(),
        false => Value::String(text.to_string()).to_string(),
    }
}

/// What follows `key:` for `text`: a literal block indented under the key,
/// or (for one line, or when `quoted`) a double-quoted string.
fn scalar(text: &str, key_indent: usize, quoted: bool) -> String {
    let printable = text
        .chars()
        .all(|c| c == '\n' || c == '\t' || !c.is_control())
        && !text.contains('\u{feff}');
    if quoted || !text.contains('\n') || !printable {
        // JSON's string syntax is YAML's double-quoted scalar.
        return format!(" {}", Value::String(text.to_string()));
    }
    let body = text.trim_end_matches('\n');
    let trailing = text.len() - body.len();
    let chomp = match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let indicator = match body.trim_start_matches('\n').starts_with([' ', '\t']) {
        true => "2",
        false => "",
    };
    let pad = " ".repeat(key_indent + 2);
    let mut out = format!(" |{indicator}{chomp}");
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    for _ in 1..trailing {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rewrites_only_the_value_in_front_matter() {
        let file = "---\nname: t # keep me\ntests:\n  - name: a\n    data: {x: 1}\n    expect: |\n      old\n      text\n\n  # a comment\n  - name: b\n    expect: \"kept\"\nother: 1\n---\nbody {{ x }}\n";
        let out = rewrite("t.md", file, true, 0, "expect", &json!("new\n  text\n")).unwrap();
        assert_eq!(
            out,
            "---\nname: t # keep me\ntests:\n  - name: a\n    data: {x: 1}\n    expect: |\n      new\n        text\n\n  # a comment\n  - name: b\n    expect: \"kept\"\nother: 1\n---\nbody {{ x }}\n"
        );
    }

    #[test]
    fn rewrites_a_sibling_file_case_on_its_dash_line() {
        let file = "- expect:\n  name: a\n- name: b\n  expect: x\n";
        let out = rewrite(
            "t.tests.yaml",
            file,
            false,
            0,
            "expect",
            &json!(" lead\nno newline"),
        )
        .unwrap();
        assert_eq!(
            out,
            "- expect: |2-\n     lead\n    no newline\n  name: a\n- name: b\n  expect: x\n"
        );
        let messages = json!([{"role": "system", "content": "Be brief.\n\n"}, {"role": "user", "content": "hi"}]);
        let file = "- name: b\n  expect_messages:\n";
        let out = rewrite("t.tests.yaml", file, false, 0, "expect_messages", &messages).unwrap();
        assert_eq!(
            out,
            "- name: b\n  expect_messages:\n    - role: system\n      content: |+\n        Be brief.\n\n    - role: user\n      content: \"hi\"\n"
        );
    }

    #[test]
    fn any_text_is_written_so_that_it_reads_back() {
        let texts = [
            "",
            " ",
            "\n",
            "\n\n",
            "a",
            "  lead\n",
            "\tTab\n",
            "trail  \n",
            "a\n\n\n",
            "\n\nstart",
            "# not a comment\n",
            "---\n",
            "---",
            "- item\n",
            "key: value\n",
            "'quoted'\n",
            "\"dq\"\n",
            "é ü 中文\n",
            "a\r\nb",
            "\u{7}bell\n",
            "x\u{85}y\n",
            "x\u{2028}y\n",
            "line\n  indented\n\nend",
            "   \n  \n",
            "\u{feff}bom\n",
            "a\\b\n",
        ];
        let layouts = [
            (true, "---\ntests:\n  - name: a\n    expect: old\n  - expect: |\n      other\n---\nbody\n"),
            (true, "---\ntests:\n- expect: old\n  name: a\nafter: 1\n---\nbody\n"),
            (false, "- name: a\n  expect: |\n    old\n\n# next\n- expect: other\n"),
            (false, "-   expect:\n    name: a\n"),
        ];
        let crlf = layouts.map(|(front_matter, file)| (front_matter, file.replace('\n', "\r\n")));
        for text in texts {
            for (front_matter, file) in layouts
                .iter()
                .copied()
                .chain(crlf.iter().map(|(f, t)| (*f, t.as_str())))
            {
                let out = rewrite("t", file, front_matter, 0, "expect", &json!(text));
                assert!(out.is_ok(), "{text:?} in {file:?}: {out:?}");
                let messages = json!([{"role": "user", "content": text}]);
                let out = rewrite("t", file, front_matter, 0, "expect", &messages);
                assert!(out.is_ok(), "messages {text:?} in {file:?}: {out:?}");
            }
        }
    }

    #[test]
    fn refuses_flow_style() {
        let file = "---\ntests: [{expect: a}]\n---\nx\n";
        assert!(rewrite("t.md", file, true, 0, "expect", &json!("b")).is_err());
    }
}

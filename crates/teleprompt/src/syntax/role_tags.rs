//! Opt-in readers for message roles written in a prompt's template text:
//! Semantic Kernel's `<message role="system">…</message>` blocks and
//! Prompty's `system:` lines. They rewrite the template text into `role`
//! calls before it compiles, so only the template can start a message:
//! the same text arriving in data is printed as text.

use serde_json::{Map, Value};

use crate::messages::Role;
use crate::syntax::edits::{Edit, Edited};
use crate::{options::MessageReader, options::Syntax};

/// Rewrites the role tags or lines of `body` into `role` calls of `syntax`.
pub(crate) fn rewrite(
    body: &str,
    reader: MessageReader,
    syntax: Syntax,
    default_role: Role,
    thread: Option<&str>,
) -> Edited {
    let mut edits = match reader {
        MessageReader::None | MessageReader::Dotprompt => Vec::new(),
        MessageReader::SkTags => sk_tags(body, syntax, default_role),
        MessageReader::RoleLines => role_lines(body, syntax),
    };
    if let Some(name) = thread {
        edits.extend(thread_prints(body, syntax, name));
        edits.sort_by_key(|edit| edit.original.start);
    }
    Edited::new(body, edits)
}

/// Where the template prints the thread input `name` on its own
/// (`{{ name }}`, trim marks allowed), the history is placed: Prompty
/// puts the conversation there. Other uses of the name read its value.
fn thread_prints(body: &str, syntax: Syntax, name: &str) -> Vec<Edit> {
    let (call, trims): (&str, &[char]) = match syntax {
        Syntax::Handlebars => ("history", &['~']),
        Syntax::Go => return Vec::new(),
        _ => ("history()", &['-', '+']),
    };
    let mut edits = Vec::new();
    if name.is_empty() {
        return edits;
    }
    for (at, _) in body.match_indices(name) {
        let end = at + name.len();
        let before = body.get(..at).unwrap_or_default().trim_end();
        let before = before.strip_suffix(trims).unwrap_or(before);
        let after = body.get(end..).unwrap_or_default().trim_start();
        let after = after.strip_prefix(trims).unwrap_or(after);
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let whole = !word(body.get(..at).and_then(|b| b.chars().next_back()))
            && !word(body.get(end..).and_then(|a| a.chars().next()));
        if whole && before.ends_with("{{") && after.starts_with("}}") {
            edits.push(Edit {
                original: at..end,
                replacement: call.to_string(),
            });
        }
    }
    edits
}

/// The template code that starts a message with `role` in `syntax`.
fn role_call(syntax: Syntax, role: Role) -> String {
    let role = role.as_str();
    match syntax {
        Syntax::Jinja | Syntax::Django | Syntax::ChatTemplate => {
            format!("{{{{ role(\"{role}\") }}}}")
        }
        Syntax::Go => format!("{{{{ role \"{role}\" }}}}"),
        Syntax::Handlebars => format!("{{{{role \"{role}\"}}}}"),
    }
}

/// `<message role="R">` opens a message of role R; `</message>` returns to
/// the default role (text between blocks is usually whitespace, dropped).
fn sk_tags(body: &str, syntax: Syntax, default_role: Role) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut at = 0;
    while let Some(found) = body.get(at..).and_then(|rest| rest.find('<')) {
        let start = at + found;
        let rest = body.get(start..).unwrap_or("");
        if let Some((len, role)) = opening_tag(rest) {
            edits.push(Edit {
                original: start..start + len,
                replacement: role_call(syntax, role),
            });
            at = start + len;
        } else if rest.starts_with("</message>") {
            let len = "</message>".len();
            edits.push(Edit {
                original: start..start + len,
                replacement: role_call(syntax, default_role),
            });
            at = start + len;
        } else {
            at = start + 1;
        }
    }
    edits
}

/// Parses `<message role="R">` (either quote, spaces allowed) at the start
/// of `text`: its length and role.
fn opening_tag(text: &str) -> Option<(usize, Role)> {
    let rest = text.strip_prefix("<message")?;
    let after_name = rest.trim_start();
    if after_name.len() == rest.len() {
        return None; // `<messages…` or `<message>`: not a role tag.
    }
    let rest = after_name.strip_prefix("role")?.trim_start();
    let rest = rest.strip_prefix('=')?.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &rest[1..];
    let end = rest.find(quote)?;
    let role = Role::parse(rest.get(..end)?)?;
    let rest = rest.get(end + 1..)?.trim_start();
    let rest = rest.strip_prefix('>')?;
    Some((text.len() - rest.len(), role))
}

/// A Prompty role line starts a message of that role: the line, trimmed,
/// is `role:` or `role[key=value, …]:`, optionally after one `#` (a
/// Markdown heading), the role `system`, `user`, `assistant` or
/// `developer` in any letter case — exactly the lines Prompty's parser
/// (`prompty` 2.1.0) takes. The attributes become fields of the message
/// (`name`). As Prompty reads the body from its first text, blanks before
/// the first line's text are dropped too.
fn role_lines(body: &str, syntax: Syntax) -> Vec<Edit> {
    let mut edits = Vec::new();
    // Prompty reads the body from its first text on: the blank lines
    // before it go, and so do the spaces before it on its line.
    let lead = body.len() - body.trim_start_matches(python_space).len();
    let first_line = body
        .get(..lead)
        .and_then(|blank| blank.rfind('\n'))
        .map_or(0, |newline| newline + 1);
    let mut start = 0;
    for line in body.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let role = (start >= first_line).then(|| role_line(content)).flatten();
        if start == first_line && lead > 0 {
            let blank = match role {
                Some(_) => first_line,
                None => lead,
            };
            if blank > 0 {
                edits.push(Edit {
                    original: 0..blank,
                    replacement: String::new(),
                });
            }
        }
        if let Some((role, attributes)) = role {
            edits.push(Edit {
                original: start..start + line.len(),
                replacement: format!("{}\n", role_call_with(syntax, role, &attributes)),
            });
        }
        start += line.len();
    }
    edits
}

/// The role call of a role line, with its attributes as a JSON object's
/// text (a string literal of `syntax`).
fn role_call_with(syntax: Syntax, role: Role, attributes: &Map<String, Value>) -> String {
    if attributes.is_empty() {
        return role_call(syntax, role);
    }
    // Braces inside keys and values as JSON escapes: no `{{` or `}}` of
    // the template's own syntax can appear in the literal.
    let mut json = String::from("{");
    for (index, (key, value)) in attributes.iter().enumerate() {
        if index > 0 {
            json.push(',');
        }
        let key = Value::String(key.clone()).to_string();
        json.push_str(&key.replace('{', "\\u007b").replace('}', "\\u007d"));
        json.push(':');
        let value = value.to_string();
        json.push_str(&value.replace('{', "\\u007b").replace('}', "\\u007d"));
    }
    json.push('}');
    let role = role.as_str();
    match syntax {
        Syntax::Jinja | Syntax::Django | Syntax::ChatTemplate => {
            format!(
                "{{{{ role(\"{role}\", \"{}\") }}}}",
                escape_backslashes(&json)
            )
        }
        Syntax::Go => format!(
            "{{{{ role \"{role}\" \"{}\" }}}}",
            escape_backslashes(&json)
        ),
        // Handlebars strings know only `\"`: a backslash stays as written.
        Syntax::Handlebars => format!("{{{{role \"{role}\" \"{}\"}}}}", json.replace('"', "\\\"")),
    }
}

/// `text` inside a double-quoted string literal with backslash escapes.
fn escape_backslashes(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Python's `str.isspace` (what Prompty's `strip()` and `\s` match).
fn python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `\w` (a Unicode letter, digit or `_`), near enough: Rust's
/// alphanumeric or `_`.
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The roles a Prompty role line names (not `tool`).
const LINE_ROLES: [Role; 4] = [Role::Assistant, Role::Developer, Role::System, Role::User];

/// Whether `line` is a Prompty role line, by its parser's boundary
/// pattern: `^\s*#?\s*(ROLE)(\[(?:\w+\s*=\s*(?:"[^"]*"|[^",\]]*)\s*,?\s*)+\])?\s*:\s*$`,
/// case-insensitive, on the stripped line. The role and the attributes.
fn role_line(line: &str) -> Option<(Role, Map<String, Value>)> {
    let text = line.trim_matches(python_space);
    let text = text.strip_prefix('#').unwrap_or(text);
    let text = text.trim_start_matches(python_space);
    let role = LINE_ROLES.into_iter().find(|role| {
        text.get(..role.as_str().len())
            .is_some_and(|name| name.eq_ignore_ascii_case(role.as_str()))
    })?;
    let rest = text.get(role.as_str().len()..)?;
    let (attributes, rest) = match rest.strip_prefix('[') {
        Some(after) => {
            let end = attribute_block_end(after)?;
            let block = rest.get(..end + 2)?;
            (parse_attributes(block), after.get(end + 1..)?)
        }
        None => (Map::new(), rest),
    };
    let rest = rest.trim_start_matches(python_space).strip_prefix(':')?;
    rest.trim_start_matches(python_space)
        .is_empty()
        .then_some((role, attributes))
}

/// The byte offset of the `]` that closes a role line's attribute block
/// (`text` starts after its `[`): one or more `key = value` items, each
/// value `"…"` or a run without `"`, `,` and `]`, each optionally followed
/// by a comma. `None` when the block does not fit.
fn attribute_block_end(text: &str) -> Option<usize> {
    let mut at = 0;
    let skip = |at: usize, keep: &dyn Fn(char) -> bool| {
        at + text
            .get(at..)
            .map_or(0, |rest| rest.len() - rest.trim_start_matches(keep).len())
    };
    loop {
        let key_end = skip(at, &word_char);
        if key_end == at {
            return None;
        }
        at = skip(key_end, &python_space);
        at += text.get(at..)?.starts_with('=').then_some(1)?;
        at = skip(at, &python_space);
        let rest = text.get(at..)?;
        at = match rest.strip_prefix('"').and_then(|value| value.find('"')) {
            Some(close) => at + close + 2,
            None => skip(at, &|c| !matches!(c, '"' | ',' | ']')),
        };
        at = skip(at, &python_space);
        if text.get(at..)?.starts_with(',') {
            at += 1;
        }
        at = skip(at, &python_space);
        if text.get(at..)?.starts_with(']') {
            return Some(at);
        }
    }
}

/// The attributes of a role line's block `[…]`, read as Prompty's parser
/// reads them: the brackets stripped, then every `key = "value"` (the
/// value up to a `"` or `,`, trimmed); `true`/`false` become booleans,
/// integers and finite decimals numbers (Python's `int`, then `float`),
/// the rest text; `nonce`, Prompty's own, is dropped; a key given twice
/// keeps its last value.
fn parse_attributes(block: &str) -> Map<String, Value> {
    let inner = block.trim_matches(['[', ']']);
    let mut attributes = Map::new();
    let mut at = 0;
    while at < inner.len() {
        let Some(rest) = inner.get(at..) else { break };
        let Some((key, value, length)) = attribute_at(rest) else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        at += length;
        if key != "nonce" {
            attributes.insert(key.to_string(), coerce(value.trim_matches(python_space)));
        }
    }
    attributes
}

/// `(\w+)\s*=\s*"?([^",]*)"?` matched at the start of `text`: the key,
/// the value and the length of the match.
fn attribute_at(text: &str) -> Option<(&str, &str, usize)> {
    let key_length = text.len() - text.trim_start_matches(word_char).len();
    if key_length == 0 {
        return None;
    }
    let key = text.get(..key_length)?;
    let rest = text.get(key_length..)?.trim_start_matches(python_space);
    let rest = rest.strip_prefix('=')?.trim_start_matches(python_space);
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    let value_length = rest.find(['"', ',']).unwrap_or(rest.len());
    let value = rest.get(..value_length)?;
    let rest = rest.get(value_length..)?;
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    Some((key, value, text.len() - rest.len()))
}

/// A role line attribute's value as Prompty types it: `true`/`false` (any
/// case), then Python's `int`, then its `float` (finite only: JSON has no
/// infinity), else the text.
fn coerce(value: &str) -> Value {
    if value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("false") {
        return Value::Bool(value.eq_ignore_ascii_case("true"));
    }
    let Some(plain) = python_underscores(value) else {
        return Value::String(value.to_string());
    };
    let digits = plain.strip_prefix(['+', '-']).unwrap_or(&plain);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(number) = plain.parse::<i64>() {
            return Value::from(number);
        }
        if let Ok(number) = plain.parse::<u64>() {
            return Value::from(number);
        }
        // Past 64 bits Python keeps the integer; JSON here cannot.
        return Value::String(value.to_string());
    }
    let decimal = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    match plain.parse::<f64>() {
        Ok(number) if decimal && number.is_finite() => serde_json::Number::from_f64(number)
            .map_or_else(|| Value::String(value.to_string()), Value::Number),
        _ => Value::String(value.to_string()),
    }
}

/// `text` without the underscores Python allows in a number (one between
/// two digits), or `None` when one is elsewhere.
fn python_underscores(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    for (at, byte) in bytes.iter().enumerate() {
        if *byte == b'_' {
            let before = at.checked_sub(1).and_then(|i| bytes.get(i));
            let after = bytes.get(at + 1);
            if !(before.is_some_and(u8::is_ascii_digit) && after.is_some_and(u8::is_ascii_digit)) {
                return None;
            }
        }
    }
    Some(text.replace('_', ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sk_tags_become_role_calls() {
        let body =
            "<message role=\"system\">Be brief.</message>\n<message role='user'>{{ q }}</message>";
        let edited = rewrite(body, MessageReader::SkTags, Syntax::Jinja, Role::User, None);
        assert_eq!(
            edited.text,
            "{{ role(\"system\") }}Be brief.{{ role(\"user\") }}\n{{ role(\"user\") }}{{ q }}{{ role(\"user\") }}"
        );
    }

    #[test]
    fn unknown_roles_and_other_tags_stay_text() {
        let body = "<message role=\"wizard\">x</message2><messages><b>";
        let edited = rewrite(body, MessageReader::SkTags, Syntax::Go, Role::User, None);
        assert_eq!(edited.text, body);
    }

    #[test]
    fn role_lines_read_as_prompty_reads_them() {
        let attrs = |line: &str| role_line(line).map(|(role, map)| (role, Value::Object(map)));
        use serde_json::json;
        assert_eq!(attrs("  # USER :  "), Some((Role::User, json!({}))));
        assert_eq!(attrs("## system:"), None);
        assert_eq!(attrs("tool:"), None);
        assert_eq!(attrs("user[]:"), None);
        assert_eq!(attrs("user [name=a]:"), None);
        assert_eq!(attrs("user[ name=a]:"), None);
        assert_eq!(attrs("user[k=a\"b]:"), None);
        assert_eq!(
            attrs("user[name=\"a,b\"]:"),
            Some((Role::User, json!({"name": "a"})))
        );
        assert_eq!(
            attrs("user[name=\"a]b\"]:"),
            Some((Role::User, json!({"name": "a]b"})))
        );
        assert_eq!(
            attrs("assistant[name=bob , n=3,ok=TRUE, f=1.5, z=01, big=99999999999999999999, u=1_0, e=inf]:"),
            Some((
                Role::Assistant,
                json!({"name": "bob", "n": 3, "ok": true, "f": 1.5, "z": 1, "big": "99999999999999999999", "u": 10, "e": "inf"})
            ))
        );
        assert_eq!(
            attrs("user[nonce=abc, name=q, name=r]:"),
            Some((Role::User, json!({"name": "r"})))
        );
    }

    /// Hostile: huge and malformed attribute lists are read in one pass
    /// (Prompty's own pattern needed possessive quantifiers against
    /// catastrophic backtracking, its issue 446).
    #[test]
    fn huge_and_malformed_attribute_lists_are_linear() {
        let started = std::time::Instant::now();
        let many: Vec<String> = (0..50_000).map(|i| format!("k{i}=\"v{i}\"")).collect();
        let line = format!("user[{}]:", many.join(", "));
        let (_, attributes) = role_line(&line).unwrap_or((Role::User, Map::new()));
        assert_eq!(attributes.len(), 50_000);
        let unclosed = format!("user[{}", "a=b ".repeat(50_000));
        assert_eq!(role_line(&unclosed), None);
        let quotes = format!("user[a=\"{}]:", "\\\"".repeat(50_000));
        assert_eq!(role_line(&quotes), None);
        let edited = rewrite(
            &format!("{line}\nhi\n"),
            MessageReader::RoleLines,
            Syntax::Jinja,
            Role::User,
            None,
        );
        assert!(edited.text.starts_with("{{ role(\"user\", \"{"));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn attributes_become_a_literal_of_each_syntax() {
        let mut map = Map::new();
        map.insert("name".into(), Value::String("a\"}}\\".into()));
        assert_eq!(
            role_call_with(Syntax::Jinja, Role::User, &map),
            r#"{{ role("user", "{\"name\":\"a\\\"\\u007d\\u007d\\\\\"}") }}"#
        );
        assert_eq!(
            role_call_with(Syntax::Handlebars, Role::User, &map),
            r#"{{role "user" "{\"name\":\"a\\"\u007d\u007d\\\"}"}}"#
        );
    }

    #[test]
    fn role_lines_become_role_calls() {
        let body = "system:\nBe brief.\n  User:  \n{{ .q }}\nnot a role: line\n";
        let edited = rewrite(body, MessageReader::RoleLines, Syntax::Go, Role::User, None);
        assert_eq!(
            edited.text,
            "{{ role \"system\" }}\nBe brief.\n{{ role \"user\" }}\n{{ .q }}\nnot a role: line\n"
        );
    }
}

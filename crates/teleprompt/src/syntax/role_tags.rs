//! Opt-in readers for message roles written in a prompt's template text:
//! Semantic Kernel's `<message role="system">…</message>` blocks and
//! Prompty's `system:` lines. They rewrite the template text into `role`
//! calls before it compiles, so only the template can start a message:
//! the same text arriving in data is printed as text.

use crate::messages::Role;
use crate::syntax::edits::{Edit, Edited};
use crate::{options::MessageReader, options::Syntax};

/// Rewrites the role tags or lines of `body` into `role` calls of `syntax`.
pub(crate) fn rewrite(
    body: &str,
    reader: MessageReader,
    syntax: Syntax,
    default_role: Role,
) -> Edited {
    let edits = match reader {
        MessageReader::None | MessageReader::Dotprompt => Vec::new(),
        MessageReader::SkTags => sk_tags(body, syntax, default_role),
        MessageReader::RoleLines => role_lines(body, syntax),
    };
    Edited::new(body, edits)
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

/// A line that is only `role:` (any case, surrounding spaces allowed, a
/// leading `#` too, as Prompty allows) starts a message of that role.
fn role_lines(body: &str, syntax: Syntax) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut start = 0;
    for line in body.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let role = content
            .trim()
            // Prompty also writes them as headings: `# system:`.
            .trim_start_matches('#')
            .trim()
            .strip_suffix(':')
            .and_then(|name| Role::parse(&name.trim().to_ascii_lowercase()));
        if let Some(role) = role {
            edits.push(Edit {
                original: start..start + line.len(),
                replacement: format!("{}\n", role_call(syntax, role)),
            });
        }
        start += line.len();
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sk_tags_become_role_calls() {
        let body =
            "<message role=\"system\">Be brief.</message>\n<message role='user'>{{ q }}</message>";
        let edited = rewrite(body, MessageReader::SkTags, Syntax::Jinja, Role::User);
        assert_eq!(
            edited.text,
            "{{ role(\"system\") }}Be brief.{{ role(\"user\") }}\n{{ role(\"user\") }}{{ q }}{{ role(\"user\") }}"
        );
    }

    #[test]
    fn unknown_roles_and_other_tags_stay_text() {
        let body = "<message role=\"wizard\">x</message2><messages><b>";
        let edited = rewrite(body, MessageReader::SkTags, Syntax::Go, Role::User);
        assert_eq!(edited.text, body);
    }

    #[test]
    fn role_lines_become_role_calls() {
        let body = "system:\nBe brief.\n  User:  \n{{ .q }}\nnot a role: line\n";
        let edited = rewrite(body, MessageReader::RoleLines, Syntax::Go, Role::User);
        assert_eq!(
            edited.text,
            "{{ role \"system\" }}\nBe brief.\n{{ role \"user\" }}\n{{ .q }}\nnot a role: line\n"
        );
    }
}

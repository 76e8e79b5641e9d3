//! Jinja2's HTML-safe strings (`markupsafe.Markup`), where a chat
//! template's output depends on them.
//!
//! In Jinja2, `"x"|safe` is a `Markup` string, and Python's `+` on one
//! escapes the other operand when it is a plain string: `"a"|safe + '"'`
//! is `a&#34;` (and `'"' + "a"|safe` is `&#34;a`), whatever the
//! autoescape setting. A real template prints JSON that way
//! (functionary v3.1: `"\n"|safe + t["function"]|tojson`, where
//! `transformers`' `tojson` returns a plain string). minijinja's `+`
//! concatenates without escaping and has no hook, so the load-time walk
//! (`check`) rewrites each `+` with an operand that is a safe string
//! (`x|safe`, `x|escape`, or another such `+`) in a chat template into a
//! call of [`MARKUP_ADD`]: `(a|safe)|__markup_add(b)`, and a chain
//! `a|safe + b + c` into calls in a row, `(a|safe)|__markup_add(b)|__markup_add(c)`.
//!
//! `escape` (`e`) is markupsafe's too: `&#34;` and `&#39;` for the quotes,
//! nothing else than `& < > " '` escaped (minijinja's own escapes `/` and
//! writes `&quot;`).

use minijinja::value::ValueKind;
use minijinja::{Environment, Error, ErrorKind, Value as JValue};

use super::Out;

/// The filter a rewritten `+` calls: `left|__markup_add(right)` (the
/// load-time walk writes the name out).
pub(in crate::syntax::jinja) const MARKUP_ADD: &str = "__markup_add";

/// The filters whose result is a safe string.
pub(in crate::syntax::jinja) const MARKUP_FILTERS: &[&str] = &["safe", "escape", "e"];

/// Registers `+` on safe strings and markupsafe's `escape`.
pub(in crate::syntax::jinja) fn register(env: &mut Environment<'static>) {
    env.add_filter(MARKUP_ADD, markup_add);
    env.add_filter("escape", escape_filter);
    env.add_filter("e", escape_filter);
}

/// markupsafe's `escape` of `text`, appended to `out`.
fn escape_into(out: &mut Out, text: &str) -> Result<(), Error> {
    let mut rest = text;
    while let Some(at) = rest.find(['&', '<', '>', '"', '\'']) {
        out.push_str(rest.get(..at).unwrap_or(""))?;
        let entity = match rest.as_bytes().get(at) {
            Some(b'&') => "&amp;",
            Some(b'<') => "&lt;",
            Some(b'>') => "&gt;",
            Some(b'"') => "&#34;",
            _ => "&#39;",
        };
        out.push_str(entity)?;
        rest = rest.get(at + 1..).unwrap_or("");
    }
    out.push_str(rest)
}

/// markupsafe's `escape` of `text`, within the render's bounds.
pub(in crate::syntax::jinja) fn escape_text(text: &str) -> Result<String, Error> {
    let mut out = Out::new();
    escape_into(&mut out, text)?;
    out.finish()
}

/// `value|escape`: a safe string stays as it is; anything else is printed
/// as Python's `str()` and escaped.
fn escape_filter(value: &JValue) -> Result<JValue, Error> {
    if value.is_safe() {
        return Ok(value.clone());
    }
    let text = super::display(value)?;
    let mut out = Out::new();
    escape_into(&mut out, &text)?;
    Ok(JValue::from_safe_string(out.text))
}

/// Python's `left + right` where one side may be a `Markup`: the plain
/// string side is escaped and the result is safe. Two plain strings
/// concatenate; any other operand next to a safe string is Python's
/// `TypeError`.
fn markup_add(left: &JValue, right: &JValue) -> Result<JValue, Error> {
    let (Some(l), Some(r)) = (left.as_str(), right.as_str()) else {
        let other = if left.kind() == ValueKind::String {
            right
        } else {
            left
        };
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "unsupported operand type for + with a safe string: {}",
                other.kind()
            ),
        ));
    };
    let mut out = Out::new();
    match (left.is_safe(), right.is_safe()) {
        (false, false) => {
            out.push_str(l)?;
            out.push_str(r)?;
            return Ok(JValue::from(out.text));
        }
        (true, true) => {
            out.push_str(l)?;
            out.push_str(r)?;
        }
        (true, false) => {
            out.push_str(l)?;
            escape_into(&mut out, r)?;
        }
        (false, true) => {
            escape_into(&mut out, l)?;
            out.push_str(r)?;
        }
    }
    super::super::current::build(out.text.len()).map_err(super::super::current::exceeded)?;
    Ok(JValue::from_safe_string(out.text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(source: &str) -> String {
        let mut env = Environment::new();
        register(&mut env);
        env.render_str(source, ())
            .unwrap_or_else(|e| format!("error: {e}"))
    }

    #[test]
    fn escapes_as_markupsafe() {
        assert_eq!(
            render(r#"{{ "<a href='x'>\"&/</a>"|e }}"#),
            "&lt;a href=&#39;x&#39;&gt;&#34;&amp;/&lt;/a&gt;"
        );
        assert_eq!(render(r#"{{ "<b>"|safe|e }}"#), "<b>");
    }

    #[test]
    fn plus_escapes_the_plain_side() {
        assert_eq!(
            render(r#"{{ "<"|safe|__markup_add('"') }}|{{ '"'|__markup_add("<"|safe) }}"#),
            "<&#34;|&#34;<"
        );
        assert_eq!(render(r#"{{ "<"|__markup_add(">") }}"#), "<>");
        assert!(render(r#"{{ "a"|safe|__markup_add(1) }}"#).starts_with("error"));
    }
}

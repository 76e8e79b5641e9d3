//! Jinja2's `indent` filter: `indent(width=4, first=False, blank=False)`.
//!
//! Jinja2 adds a newline to the text, splits it into lines with Python's
//! `str.splitlines()`, indents every line but the first (and blank lines
//! only with `blank`), and joins them with `\n`. So a trailing newline is
//! kept (minijinja's own filter drops it), and the line breaks Python knows
//! (`\r\n`, `\r`, `\v`, `\f`, `\x1c`–`\x1e`, `\x85`, U+2028, U+2029) all
//! become `\n`.

use minijinja::value::{Kwargs, Rest, ValueKind};
use minijinja::{ErrorKind, State, Value as JValue};

use super::json::Indention;
use super::{missing_is_error, undefined_error, Out};

/// `indent(width=4, first=False, blank=False)`, by position or by name.
pub(super) fn indent_filter(
    state: &State,
    value: &JValue,
    args: Rest<JValue>,
    kwargs: Kwargs,
) -> Result<JValue, minijinja::Error> {
    let [width, first, blank] = super::positional::<3>(&args, "indent")?;
    let width = named(width, &kwargs, "width")?;
    let first = named(first, &kwargs, "first")?.is_some_and(|value| value.is_true());
    let blank = named(blank, &kwargs, "blank")?.is_some_and(|value| value.is_true());
    kwargs.assert_all_used()?;
    let indention = match width {
        Some(width) => Indention::from_value(&width, "indent's width")?,
        None => Indention::Spaces(4),
    };
    let text = match value.kind() {
        ValueKind::String => value.as_str().unwrap_or_default(),
        ValueKind::Undefined if missing_is_error(state) => return Err(undefined_error()),
        ValueKind::Undefined => "",
        // Python cannot add a newline to anything else.
        kind => {
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!("indent expects a string, not {kind}"),
            ))
        }
    };
    let indented = indent(text, &indention, first, blank)?;
    Ok(if value.is_safe() {
        JValue::from_safe_string(indented)
    } else {
        JValue::from(indented)
    })
}

/// An argument given by position or by name (not both).
fn named(
    positional: Option<JValue>,
    kwargs: &Kwargs,
    name: &str,
) -> Result<Option<JValue>, minijinja::Error> {
    let by_name = kwargs.get::<Option<JValue>>(name)?;
    match (positional, by_name) {
        (Some(_), Some(_)) => Err(minijinja::Error::new(
            ErrorKind::TooManyArguments,
            format!("indent got multiple values for argument '{name}'"),
        )),
        (positional, by_name) => Ok(positional.or(by_name)),
    }
}

/// The text indented as Jinja2's `do_indent` indents it. The result is
/// built within the render's output budget (a huge width fails before
/// anything large is allocated).
fn indent(
    text: &str,
    indention: &Indention,
    first: bool,
    blank: bool,
) -> Result<String, minijinja::Error> {
    let mut out = Out::new();
    if first {
        indention.write(&mut out, 1)?;
    }
    // Jinja2 appends a newline before splitting, so `""` is one empty
    // line and a trailing newline leaves an empty last line.
    let mut lines = SplitLines::new(text);
    let extra = if text.is_empty() || ends_with_line_break(text) {
        Some("")
    } else {
        None
    };
    let mut lines = std::iter::from_fn(move || lines.next()).chain(extra);
    if let Some(line) = lines.next() {
        out.push_str(line)?;
    }
    for line in lines {
        out.push('\n')?;
        if blank || !line.is_empty() {
            indention.write(&mut out, 1)?;
        }
        out.push_str(line)?;
    }
    out.finish()
}

/// True for the characters Python's `str.splitlines()` breaks lines at.
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{b}'
            | '\u{c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// True when the text ends with a line break that the newline Jinja2 adds
/// does not join (`\r` + `\n` is one break).
fn ends_with_line_break(text: &str) -> bool {
    text.chars()
        .next_back()
        .is_some_and(|c| c != '\r' && is_line_break(c))
}

/// The lines of a text as Python's `str.splitlines()` finds them (without
/// their line breaks; `\r\n` is one break; no empty line after a final
/// break).
struct SplitLines<'a> {
    rest: &'a str,
}

impl<'a> SplitLines<'a> {
    fn new(text: &'a str) -> SplitLines<'a> {
        SplitLines { rest: text }
    }

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        match self.rest.char_indices().find(|(_, c)| is_line_break(*c)) {
            Some((at, c)) => {
                let line = self.rest.get(..at).unwrap_or_default();
                let mut end = at + c.len_utf8();
                if c == '\r'
                    && self
                        .rest
                        .get(end..)
                        .is_some_and(|rest| rest.starts_with('\n'))
                {
                    end += 1;
                }
                self.rest = self.rest.get(end..).unwrap_or_default();
                Some(line)
            }
            None => {
                let line = self.rest;
                self.rest = "";
                Some(line)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<&str> {
        let mut split = SplitLines::new(text);
        std::iter::from_fn(move || split.next()).collect()
    }

    #[test]
    fn splitlines_as_python() {
        // Expected lists from CPython 3.11 `str.splitlines()`.
        assert_eq!(lines(""), Vec::<&str>::new());
        assert_eq!(lines("a\n"), ["a"]);
        assert_eq!(lines("a\n\nb"), ["a", "", "b"]);
        assert_eq!(
            lines("a\r\nb\rc\u{b}d\u{85}e\u{2028}f\u{1c}"),
            ["a", "b", "c", "d", "e", "f"]
        );
        assert_eq!(lines("\r\r\n"), ["", ""]);
    }

    fn spaces(text: &str, width: usize, first: bool, blank: bool) -> String {
        indent(text, &Indention::Spaces(width), first, blank).unwrap()
    }

    #[test]
    fn indent_as_jinja2() {
        // Expected strings from Jinja2 3.1.6 `do_indent`.
        assert_eq!(spaces("", 2, false, false), "");
        assert_eq!(spaces("", 2, true, false), "  ");
        assert_eq!(spaces("a\nb", 2, false, false), "a\n  b");
        assert_eq!(spaces("a\n", 2, false, false), "a\n");
        assert_eq!(spaces("a\n", 2, true, true), "  a\n  ");
        assert_eq!(spaces("a\r", 2, false, true), "a");
        assert_eq!(
            spaces("a\r\nb\u{b}c\u{85}d\u{2028}e\n\nf", 2, false, false),
            "a\n  b\n  c\n  d\n  e\n\n  f"
        );
        assert_eq!(spaces("a\n\nb\n", 1, false, true), "a\n \n b\n ");
    }
}

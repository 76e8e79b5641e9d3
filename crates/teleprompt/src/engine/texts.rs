//! Jinja's text work on the direct path: the methods of strings
//! (`value.method(…)`), the `capitalize`, `title` and `indent` filters,
//! `'…'.format(…)`, `strftime_now`, Python's `repr` of data for
//! `| string`, and a character of a text by index.

use super::fail::internal;
use super::flavor::jinja::not_jinja;
use super::ops::{made_list, weigh};
use super::program::{Expr, Func, JinjaOp, Method, Span};
use super::render::{Renderer, Result};
use super::value::Value;

impl<'a> Renderer<'a> {
    /// `value | string` of a list or a map of the data or the template's
    /// (not a chat template's messages): Python's `repr`, written by the
    /// Jinja front end ([`super::program::Program::python`]).
    #[inline(never)]
    pub(super) fn python_repr(&mut self, value: &Value<'a>, span: Span) -> Result<Value<'a>> {
        use super::flavor::jinja::JsonRef;
        let python = self.program.python.as_ref().ok_or_else(|| internal(span))?;
        let json = match value {
            Value::Array(items) if !self.holds_messages(items) => JsonRef::Items(items),
            Value::Object(view) if !view.is_merged() && !self.is_message(view) => {
                JsonRef::Value(view.value())
            }
            Value::Json(json) => JsonRef::Value(json),
            other => return Err(not_jinja(span, "write", other)),
        };
        let (mut nodes, mut bytes) = (0, 0);
        match json {
            JsonRef::Value(json) => weigh(json, &mut nodes, &mut bytes),
            JsonRef::Items(items) => items
                .iter()
                .for_each(|item| weigh(item, &mut nodes, &mut bytes)),
        }
        self.tick_work(nodes, bytes, span)?;
        match (python.repr)(json) {
            Ok(text) => self.built_value(Func::Jinja(JinjaOp::String), text, span),
            Err(_) => Err(not_jinja(span, "write", value)),
        }
    }

    /// `strftime_now(format)`.
    #[inline(never)]
    pub(super) fn strftime(
        &mut self,
        op: JinjaOp,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let format = self.arg(args, 0, span, dot)?;
        let python = self.program.python.as_ref().ok_or_else(|| internal(span))?;
        // What it may build: no more than a value or the output may hold
        // (checked while it is built: a width pads before it is seen).
        let limits = &self.program.limits;
        let room = limits
            .max_value_bytes
            .min(limits.max_output.saturating_sub(self.out.len()));
        let text = format
            .as_str()
            .and_then(|format| (python.strftime)(self.scope.now(), format, room).ok());
        match text {
            Some(text) => self.built_value(Func::Jinja(op), text, span),
            None => Err(not_jinja(span, "format", &format)),
        }
    }

    /// `value.method(…)` ([`JinjaOp::Method`]): what minijinja's Python
    /// compatibility computes (Rust's Unicode whitespace for `strip()`);
    /// a value or an argument of another kind, an empty separator or
    /// pattern are minijinja's.
    #[inline(never)]
    pub(super) fn method(
        &mut self,
        method: Method,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let value = self.arg(args, 0, span, dot)?;
        let mut given = Vec::with_capacity(args.len().saturating_sub(1));
        for n in 1..args.len() {
            given.push(self.arg(args, n, span, dot)?);
        }
        if method == Method::Get {
            let key = given.first().and_then(Value::as_str);
            let found = match (&value, key) {
                (Value::Object(view), Some(key)) => match self.is_message(view) {
                    true => self.message_field(view, key, span)?,
                    false => view.get(key),
                }
                .map(Value::from_view),
                // A map the template built.
                (Value::Json(json), Some(key)) if json.is_object() => {
                    json.get(key).map(|found| Value::owned(found.clone()))
                }
                _ => return Err(not_jinja(span, "call a method of", &value)),
            };
            return Ok(found.unwrap_or_else(|| given.get(1).cloned().unwrap_or(Value::Null)));
        }
        if method == Method::Int {
            return int_of(&value).ok_or_else(|| not_jinja(span, "convert", &value));
        }
        let Some(text) = value.as_str() else {
            return Err(not_jinja(span, "call a method of", &value));
        };
        self.tick_work(0, text.len(), span)?;
        if matches!(method, Method::Capitalize | Method::Title | Method::Indent) {
            return self.text_filter(method, text, &given, span);
        }
        if method == Method::Format {
            return self.format(text, &given, span);
        }
        let decline = |what: &Value<'_>| Err(not_jinja(span, "call a method with", what));
        // An optional text argument (`none` is its absence).
        let optional = |n: usize| match given.get(n) {
            None | Some(Value::Null) => Ok(None),
            Some(found) => found.as_str().map(Some).ok_or_else(|| found.clone()),
        };
        let set = |chars: &str| chars.chars().collect::<Vec<char>>();
        let stripped = match method {
            Method::Strip => Some(match optional(0) {
                Ok(None) => text.trim(),
                Ok(Some(chars)) => text.trim_matches(&set(chars)[..]),
                Err(other) => return decline(&other),
            }),
            Method::Lstrip => Some(match optional(0) {
                Ok(None) => text.trim_start(),
                Ok(Some(chars)) => text.trim_start_matches(&set(chars)[..]),
                Err(other) => return decline(&other),
            }),
            Method::Rstrip => Some(match optional(0) {
                Ok(None) => text.trim_end(),
                Ok(Some(chars)) => text.trim_end_matches(&set(chars)[..]),
                Err(other) => return decline(&other),
            }),
            _ => None,
        };
        if let Some(stripped) = stripped {
            // A part of a borrowed text stays borrowed.
            return Ok(match &value {
                Value::Str(whole) => Value::Str(
                    &whole[stripped.as_ptr() as usize - whole.as_ptr() as usize..]
                        [..stripped.len()],
                ),
                _ => Value::string(stripped.to_string()),
            });
        }
        match method {
            Method::StartsWith | Method::EndsWith => {
                let test = |affix: &str| match method {
                    Method::StartsWith => text.starts_with(affix),
                    _ => text.ends_with(affix),
                };
                let found = match given.first() {
                    Some(affix) if affix.as_str().is_some() => test(affix.as_str().unwrap_or("")),
                    Some(Value::Array(items)) if items.iter().all(|item| item.is_string()) => {
                        items.iter().any(|item| test(item.as_str().unwrap_or("")))
                    }
                    other => return decline(other.unwrap_or(&Value::Missing)),
                };
                Ok(Value::Bool(found))
            }
            Method::Replace => {
                let (Some(old), Some(new)) = (
                    given
                        .first()
                        .and_then(Value::as_str)
                        .filter(|old| !old.is_empty()),
                    given.get(1).and_then(Value::as_str),
                ) else {
                    return decline(&given.first().cloned().unwrap_or(Value::Missing));
                };
                let count = match given.get(2) {
                    None => None,
                    Some(Value::Int(count)) if (0..=i64::from(i32::MAX)).contains(count) => {
                        usize::try_from(*count).ok()
                    }
                    Some(Value::Int(count)) if (i64::from(i32::MIN)..0).contains(count) => None,
                    Some(other) => return decline(other),
                };
                // What it may build, checked before it is built.
                let matches = text.matches(old).count().min(count.unwrap_or(usize::MAX));
                let len = text.len() - matches * old.len() + matches * new.len();
                self.fits(Func::Jinja(JinjaOp::Method(method)), len, span)?;
                let replaced = match count {
                    Some(count) => text.replacen(old, new, count),
                    None => text.replace(old, new),
                };
                self.built(Func::Jinja(JinjaOp::Method(method)), replaced, span)
            }
            Method::Split => {
                // `maxsplit`: at most that many splits (negative: all);
                // of whitespace, minijinja's.
                let limit = match given.get(1) {
                    None => usize::MAX,
                    Some(Value::Int(n)) if *n < 0 => usize::MAX,
                    Some(Value::Int(n)) => usize::try_from(*n).unwrap_or(usize::MAX),
                    Some(other) => return decline(other),
                };
                if limit != usize::MAX && !matches!(optional(0), Ok(Some(_))) {
                    return decline(&value);
                }
                // More items than a list may hold: minijinja's error.
                let count = match optional(0) {
                    Ok(None) => text.split_whitespace().count(),
                    Ok(Some(separator)) if !separator.is_empty() => {
                        text.matches(separator).count().min(limit) + 1
                    }
                    _ => 0,
                };
                if count > self.program.limits.max_items {
                    return decline(&value);
                }
                let parts: Vec<serde_json::Value> = match optional(0) {
                    Ok(None) => text
                        .split_whitespace()
                        .map(serde_json::Value::from)
                        .collect(),
                    Ok(Some(separator)) if !separator.is_empty() => text
                        .splitn(limit.saturating_add(1), separator)
                        .map(serde_json::Value::from)
                        .collect(),
                    Ok(Some(_)) => return decline(&Value::Str("")),
                    Err(other) => return decline(&other),
                };
                self.tick_work(parts.len(), 0, span)?;
                self.count_built(Func::Jinja(JinjaOp::Method(method)), text.len(), span)?;
                Ok(made_list(parts))
            }
            // A text the case change leaves as it is (ASCII, already in
            // that case: a message's role, mostly) is not built again.
            Method::Lower | Method::Upper
                if crate::functions::case_unchanged(text, method == Method::Upper) =>
            {
                Ok(value)
            }
            Method::Lower => self.built_value(
                Func::Jinja(JinjaOp::Method(method)),
                text.to_lowercase(),
                span,
            ),
            Method::Upper => self.built_value(
                Func::Jinja(JinjaOp::Method(method)),
                text.to_uppercase(),
                span,
            ),
            _ => Err(internal(span)),
        }
    }

    /// The `capitalize`, `title` and `indent` filters of `text`, as
    /// Jinja2 computes them; text they may compute otherwise on minijinja
    /// (not ASCII, other line breaks) is minijinja's.
    #[inline(never)]
    pub(super) fn text_filter(
        &mut self,
        method: Method,
        text: &str,
        given: &[Value<'a>],
        span: Span,
    ) -> Result<Value<'a>> {
        let func = Func::Jinja(JinjaOp::Method(method));
        let decline = || Err(not_jinja(span, "call a method of", &Value::Str("text")));
        let plain = |c: char| c.is_ascii() && (!c.is_ascii_control() || "\t\n\r".contains(c));
        let mut out = String::with_capacity(text.len());
        match method {
            Method::Capitalize | Method::Title => {
                if !text.chars().all(plain) {
                    return decline();
                }
                // A word starts the text, or (`title`) follows a run of
                // `-`, whitespace, `(`, `{`, `[`, `<`.
                let mut upper = true;
                for c in text.chars() {
                    let breaks =
                        method == Method::Title && (c.is_ascii_whitespace() || "-({[<".contains(c));
                    out.push(if upper {
                        c.to_ascii_uppercase()
                    } else {
                        c.to_ascii_lowercase()
                    });
                    upper = breaks;
                }
            }
            _ => {
                let breaks = [
                    '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
                    '\u{2029}',
                ];
                if text.contains(breaks) {
                    return decline();
                }
                let indention = match given.first() {
                    Some(Value::Int(width)) if (0..=1000).contains(width) => {
                        " ".repeat(*width as usize)
                    }
                    Some(width) if width.as_str().is_some() => {
                        width.as_str().unwrap_or("").to_string()
                    }
                    _ => return decline(),
                };
                let flag = |n: usize| match given.get(n) {
                    Some(Value::Bool(flag)) => Some(*flag),
                    _ => None,
                };
                let (Some(first), Some(blank)) = (flag(1), flag(2)) else {
                    return decline();
                };
                let lines: Vec<&str> = text.split('\n').collect();
                let extra = lines
                    .len()
                    .saturating_add(1)
                    .saturating_mul(indention.len());
                self.fits(func, text.len().saturating_add(extra), span)?;
                if first {
                    out.push_str(&indention);
                }
                for (i, line) in lines.iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                        if blank || !line.is_empty() {
                            out.push_str(&indention);
                        }
                    }
                    out.push_str(line);
                }
            }
        }
        self.built_value(func, out, span)
    }

    /// `text.format(args…)` ([`Method::Format`]): each `{}` the next
    /// argument, each `{N}` argument `N` (the lowering checked that the
    /// text has no other field, no `{{` or `}}`, and enough arguments),
    /// printed as minijinja's `str.format` prints a string, an integer or
    /// a boolean; others are minijinja's.
    #[inline(never)]
    pub(super) fn format(
        &mut self,
        text: &str,
        given: &[Value<'a>],
        span: Span,
    ) -> Result<Value<'a>> {
        let func = Func::Jinja(JinjaOp::Method(Method::Format));
        let mut out = String::with_capacity(text.len());
        let (mut rest, mut next) = (text, 0usize);
        while let Some((before, field)) = rest.split_once('{') {
            out.push_str(before);
            let (index, after) = field.split_once('}').ok_or_else(|| internal(span))?;
            let at = match index {
                "" => {
                    next += 1;
                    next - 1
                }
                digits => digits.parse().map_err(|_| internal(span))?,
            };
            match given.get(at).ok_or_else(|| internal(span))? {
                Value::Int(int) => out.push_str(&int.to_string()),
                Value::Bool(true) => out.push_str("True"),
                Value::Bool(false) => out.push_str("False"),
                other => match other.as_str() {
                    Some(piece) => out.push_str(piece),
                    None => return Err(not_jinja(span, "format", other)),
                },
            }
            self.fits(func, out.len(), span)?;
            rest = after;
        }
        out.push_str(rest);
        self.built_value(func, out, span)
    }
}

/// Python's `text[index]`: the character (from the end where negative).
pub(super) fn character<'v>(text: &Value<'v>, index: i64) -> Option<Value<'v>> {
    let whole = text.as_str()?;
    let count = match whole.is_ascii() {
        true => whole.len(),
        false => whole.chars().count(),
    };
    let len = i64::try_from(count).ok()?;
    let at = usize::try_from(if index < 0 { index + len } else { index }).ok()?;
    let (from, c) = whole.char_indices().nth(at)?;
    Some(match text {
        Value::Str(whole) => Value::Str(&whole[from..from + c.len_utf8()]),
        _ => Value::string(c.to_string()),
    })
}

/// The `int` filter of an integer, or of a string of ASCII digits (with
/// a `-`, at most 18): others are minijinja's.
fn int_of<'a>(value: &Value<'_>) -> Option<Value<'a>> {
    match value {
        Value::Int(i) => Some(Value::Int(*i)),
        other => {
            let text = other.as_str()?;
            let digits = text.strip_prefix('-').unwrap_or(text);
            let plain =
                (1..=18).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
            plain.then(|| text.parse().ok().map(Value::Int)).flatten()
        }
    }
}

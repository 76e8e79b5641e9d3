//! Values a render builds stay within its bounds
//! ([`crate::limits::Limits`]).
//!
//! - Filters and Python methods that build text much larger than their
//!   input (`replace` with a long replacement, `"{:>1000000000}".format(1)`,
//!   `"a".center(10**9)`, `sep.join(list)`) are checked before they run: a
//!   result that cannot fit is an error at once, not gigabytes allocated
//!   first.
//! - minijinja's operators have no hook, so the load-time walk (`check`)
//!   wraps each `~`, `+` and `*` that can build a string or list, and each
//!   filter or call whose value a `set` keeps, in a filter that checks the
//!   value: `{% set ns.s = ns.s ~ ns.s %}` is compiled as
//!   `{% set ns.s = (ns.s ~ ns.s)|__bounded %}`. A value can then at most
//!   double past `max_value_bytes` before the render stops, and the text
//!   built over a whole render is counted (16 × `max_output`), so a value
//!   grown a little on each of a million loop passes stops too, instead of
//!   copying for minutes.

use std::borrow::Cow;

use minijinja::value::{Rest, Value as JValue, ValueKind};
use minijinja::{Environment, Error, ErrorKind, State};

use super::current;
use super::python::Out;
use crate::limits::Exceeded;

/// The filter that checks what an operator built.
pub(super) const BOUND_FILTER: &str = "__bounded";

/// What closes a wrapped expression: `(` + expression + this.
pub(super) const BOUND_CLOSE: &str = ")|__bounded";

/// Registers the bound check.
pub(super) fn register(env: &mut Environment<'static>) {
    env.add_filter(BOUND_FILTER, bounded);
}

/// Passes `value` on when it is within the render's bounds: a string
/// counts as built text, a list or map by its number of items.
fn bounded(value: JValue) -> Result<JValue, Error> {
    if let Some(text) = value.as_str() {
        current::build(text.len()).map_err(current::exceeded)?;
    } else if matches!(
        value.kind(),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
    ) {
        // A list `+` builds is lazy (minijinja's merged sequence): its
        // length is known without walking it.
        check_items(value.len().unwrap_or(0))?;
    }
    Ok(value)
}

/// Wraps minijinja's growing filters with the size check.
pub(super) fn guard_filters(env: &mut Environment<'static>) {
    use minijinja::filters as f;
    let filters: [(&str, JValue, Predict); 2] = [
        ("replace", JValue::from_function(f::replace), replaced_size),
        ("format", JValue::from_function(f::format), formatted_size),
    ];
    for (name, builtin, predict) in filters {
        env.add_filter(
            name,
            move |state: &mut State, args: Rest<JValue>| -> Result<JValue, Error> {
                if let Some((value, rest)) = args.0.split_first() {
                    // The filter reads any value as its text (`[…]|list|replace`).
                    let text = as_text(value);
                    if name == "format" {
                        check_mapping_keys(&text)?;
                    }
                    reserve(predict(&text, rest))?;
                }
                let result = builtin.call(state, &args.0)?;
                counted(result)
            },
        );
    }
}

/// How many items `text.method(args)` gives at most, for the methods that
/// cut a string into a list (`split`, `rsplit`, `splitlines`); `None` for
/// the others.
fn listed_items(text: &str, method: &str, args: &[JValue]) -> Option<usize> {
    match method {
        "split" | "rsplit" => Some(match args.first().and_then(JValue::as_str) {
            Some(separator) if !separator.is_empty() => text.matches(separator).count() + 1,
            _ => text.split_whitespace().count(),
        }),
        "splitlines" => Some(text.lines().count()),
        _ => None,
    }
}

/// Fails unless a list of `items` fits in one value.
pub(super) fn check_items(items: usize) -> Result<(), Error> {
    let most = current::max_items();
    if items > most {
        return Err(current::exceeded(Exceeded::Items(most)));
    }
    Ok(())
}

/// Wraps minijinja's filters that cut a string into a list (`split`,
/// `lines`) with the item check, made before the list is.
pub(super) fn guard_listing_filters(env: &mut Environment<'static>) {
    use minijinja::filters as f;
    type Count = fn(&str, &[JValue]) -> usize;
    let filters: [(&str, JValue, Count); 2] = [
        (
            "split",
            JValue::from_function(f::split),
            |text, rest| match rest.first().and_then(JValue::as_str) {
                Some(separator) if !separator.is_empty() => text.matches(separator).count() + 1,
                _ => text.split_whitespace().count(),
            },
        ),
        ("lines", JValue::from_function(f::lines), |text, _| {
            text.bytes().filter(|&b| b == b'\n').count() + 1
        }),
    ];
    for (name, builtin, count) in filters {
        env.add_filter(
            name,
            move |state: &mut State, args: Rest<JValue>| -> Result<JValue, Error> {
                if let Some((value, rest)) = args.0.split_first() {
                    if let Some(text) = value.as_str() {
                        check_items(count(text, rest))?;
                    }
                }
                builtin.call(state, &args.0)
            },
        );
    }
}

/// Python's string methods (minijinja-contrib's `pycompat`), with the size
/// check for those that grow; a list's and a dict's (`python::methods`),
/// those that would change it refused (`sandboxed`: as `transformers`'
/// sandbox refuses them, in a chat template).
pub(super) fn method(
    sandboxed: bool,
    state: &mut State,
    value: &JValue,
    method: &str,
    args: &[JValue],
) -> Result<JValue, Error> {
    // The work a method does: a text's bytes (searched, compared,
    // copied), a mapping's items listed.
    match value.as_str() {
        Some(text) => super::work::charge(0, text.len())?,
        None if matches!(method, "items" | "keys" | "values") => {
            super::work::charge(value.len().unwrap_or(0), 0)?
        }
        None => {}
    }
    if let Some(text) = value.as_str() {
        // The methods that cut a string into a list: the item check, made
        // before the list is (as for the `split` and `lines` filters).
        if let Some(items) = listed_items(text, method, args) {
            check_items(items)?;
        }
        if let Some(result) = super::python::methods::str_method(text, method, args) {
            return result;
        }
        let predict: Option<Predict> = match method {
            "replace" => Some(replaced_size),
            "format" => Some(formatted_size),
            "center" | "ljust" | "rjust" | "zfill" => Some(centered_size),
            "join" => Some(joined_size),
            _ => None,
        };
        if method == "format" {
            check_field_indexes(text)?;
        }
        if let Some(predict) = predict {
            reserve(predict(text, args))?;
            let result =
                minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)?;
            return counted(result);
        }
    }
    if let Some(result) = super::python::methods::container_method(value, method, args, sandboxed) {
        return result;
    }
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

/// minijinja 3.0.5's `str.format` panics on a replacement field whose
/// index holds a character other than ASCII (`"{a[é]}".format(a=x)`, found
/// by fuzzing): such a field is a render error here, before minijinja
/// reads it.
fn check_field_indexes(format: &str) -> Result<(), Error> {
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
            }
            '{' => {
                // The field name runs to its conversion, spec or end.
                let mut in_index = false;
                for c in chars.by_ref() {
                    match c {
                        '[' => in_index = true,
                        ']' => in_index = false,
                        ':' | '!' | '}' if !in_index => break,
                        c if in_index && !c.is_ascii() => {
                            return Err(Error::new(
                                ErrorKind::InvalidOperation,
                                format!(
                                    "the format field index holds {c:?}: an index in a replacement field (`{{a[key]}}`) must be ASCII text"
                                ),
                            ));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// minijinja 3.1.0's `format` filter panics on a mapping key (`%(key)s`)
/// holding a character other than ASCII (`"%(é)s"|format(…)`, found by the
/// `jinja_direct` fuzz target): such a key is a render error here, before
/// minijinja reads it.
fn check_mapping_keys(format: &str) -> Result<(), Error> {
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        // `%%` is a `%`; `%(` opens a key, which runs to `)`.
        if c == '%' && chars.next() == Some('(') {
            for c in chars.by_ref() {
                if c == ')' {
                    break;
                }
                if !c.is_ascii() {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        format!(
                            "the format key holds {c:?}: a mapping key in a format (`%(key)s`) must be ASCII text"
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A result counted as built text, when it is a string.
fn counted(result: JValue) -> Result<JValue, Error> {
    if let Some(text) = result.as_str() {
        current::build(text.len()).map_err(current::exceeded)?;
    }
    Ok(result)
}

/// Bytes a call may build at most, from its input text and arguments.
type Predict = fn(&str, &[JValue]) -> usize;

fn reserve(bytes: usize) -> Result<(), Error> {
    Out::new().reserve(bytes)
}

/// A value as the filters read it: a string as it is, anything else as
/// it prints.
fn as_text(value: &JValue) -> Cow<'_, str> {
    match value.as_str() {
        Some(text) => Cow::Borrowed(text),
        None => Cow::Owned(value.to_string()),
    }
}

/// `text.replace(old, new[, count])`.
fn replaced_size(text: &str, args: &[JValue]) -> usize {
    let (Some(old), Some(new)) = (args.first().map(as_text), args.get(1).map(as_text)) else {
        return 0;
    };
    let (old, new) = (old.as_ref(), new.as_ref());
    if new.len() <= old.len() {
        return text.len();
    }
    let mut count = if old.is_empty() {
        text.chars().count() + 1
    } else {
        text.matches(old).count()
    };
    if let Some(most) = args
        .get(2)
        .and_then(|c| i64::try_from(c.clone()).ok())
        .filter(|c| *c >= 0)
    {
        count = count.min(usize::try_from(most).unwrap_or(usize::MAX));
    }
    text.len()
        .saturating_add(count.saturating_mul(new.len() - old.len()))
}

/// `format`: the format text, the arguments' text and every number written
/// in the format (widths and precisions; an over-estimate is harmless).
fn formatted_size(format: &str, args: &[JValue]) -> usize {
    let mut size = format.len();
    for arg in args {
        size = size.saturating_add(arg.as_str().map_or(32, str::len));
    }
    let mut number: usize = 0;
    for c in format.chars().chain([' ']) {
        match c.to_digit(10) {
            Some(digit) => {
                number = number.saturating_mul(10).saturating_add(digit as usize);
            }
            None => {
                size = size.saturating_add(number);
                number = 0;
            }
        }
    }
    size
}

/// `center(width)`, `ljust(width)`, …: at least the width.
fn centered_size(text: &str, args: &[JValue]) -> usize {
    let width = args
        .first()
        .and_then(|w| i64::try_from(w.clone()).ok())
        .and_then(|w| usize::try_from(w).ok())
        .unwrap_or(0);
    // The fill may be a multi-byte character.
    text.len().max(width.saturating_mul(4))
}

/// `separator.join(items)`.
fn joined_size(separator: &str, args: &[JValue]) -> usize {
    let Some(Ok(items)) = args.first().map(JValue::try_iter) else {
        return 0;
    };
    let mut size: usize = 0;
    for (i, item) in items.enumerate() {
        if i > 0 {
            size = size.saturating_add(separator.len());
        }
        size = size.saturating_add(item.as_str().map_or(32, str::len));
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predictions_cover_the_result() {
        let args = [JValue::from("x"), JValue::from("yyy")];
        assert_eq!(replaced_size("axbx", &args), 8);
        assert_eq!(
            replaced_size("axbx", &[args[0].clone(), args[1].clone(), JValue::from(1)]),
            6
        );
        assert_eq!(
            replaced_size("ab", &[JValue::from(""), JValue::from("--")]),
            8
        );
        assert!(formatted_size("{:>1000000000}", &[JValue::from(1)]) > 1_000_000_000);
        assert!(check_field_indexes("{a[é]}").is_err());
        assert!(check_mapping_keys("%(é)s").is_err());
        assert!(check_mapping_keys("%(\u{e001}").is_err());
        assert!(check_mapping_keys("%%(é)s %(a)s é %s").is_ok());
        assert!(check_field_indexes("{0[b]é}").is_ok());
        assert!(check_field_indexes("{{a[é]}} {:é>5} {é}").is_ok());
        assert!(check_field_indexes("{a.b[cé").is_err());
        assert!(centered_size("a", &[JValue::from(80)]) >= 80);
        let items = JValue::from(vec!["ab", "cd", "ef"]);
        assert_eq!(joined_size(", ", &[items]), 10);
    }
}

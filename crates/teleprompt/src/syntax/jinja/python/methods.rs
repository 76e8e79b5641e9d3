//! Python's methods that minijinja's Python compatibility lacks: `str`'s
//! `rsplit`, `removeprefix`, `removesuffix` (CPython 3.11's rules); a
//! list's `index` and `copy`, a dict's `copy`.
//!
//! The methods that change a list or a dict (`append`, `pop`, `update`, …)
//! are errors naming the method and what to write instead
//! ([`container_method`]): `transformers` renders chat templates in
//! Jinja2's immutable sandbox, which refuses them too (`SecurityError`);
//! in plain Jinja, Jinja2 would change the value, but minijinja's lists
//! and dicts never change once made.

use minijinja::value::{from_args, Value as JValue, ValueKind};
use minijinja::{Error, ErrorKind};

/// `text.method(*args)` for the methods here; `None` for any other.
pub(in crate::syntax::jinja) fn str_method(
    text: &str,
    method: &str,
    args: &[JValue],
) -> Option<Result<JValue, Error>> {
    Some(match method {
        "rsplit" => rsplit(text, args),
        "removeprefix" => from_args::<(&str,)>(args)
            .map(|(prefix,)| JValue::from(text.strip_prefix(prefix).unwrap_or(text))),
        "removesuffix" => from_args::<(&str,)>(args)
            .map(|(suffix,)| JValue::from(text.strip_suffix(suffix).unwrap_or(text))),
        _ => return None,
    })
}

/// The methods Jinja2's immutable sandbox refuses (those of Python's
/// `MutableSequence` and `MutableMapping`), each with what to write instead.
fn mutating(method: &str, map: bool) -> Option<&'static str> {
    Some(match (map, method) {
        (false, "append") => "build a new list: `{% set items = items + [item] %}`",
        (false, "extend") => "build a new list: `{% set items = items + more %}`",
        (false, "insert") => "build a new list: `{% set items = items[:i] + [item] + items[i:] %}`",
        (false, "pop") => "read `items[-1]` and keep `items[:-1]`",
        (false, "remove") => "build a new list: `{% set items = items|reject(\"equalto\", item)|list %}`",
        (false, "clear") => "build a new list: `{% set items = [] %}`",
        (false, "sort") => "use the filter: `items|sort`",
        (false, "reverse") => "use the filter: `items|reverse`",
        (true, "update" | "setdefault") => {
            "keep the values in a namespace: `{% set ns = namespace(key=value) %}`, `{% set ns.key = other %}`"
        }
        (true, "pop" | "popitem") => "read the value with `d.get(key)`",
        (true, "clear") => "build a new dict: `{% set d = {} %}`",
        _ => return None,
    })
}

/// `value.method(*args)` for a list or a dict: the methods that change it
/// are errors, `index` and `copy` are Python's; `None` for any other
/// method (or value).
pub(in crate::syntax::jinja) fn container_method(
    value: &JValue,
    method: &str,
    args: &[JValue],
    sandboxed: bool,
) -> Option<Result<JValue, Error>> {
    let map = match value.kind() {
        ValueKind::Seq => false,
        ValueKind::Map => true,
        _ => return None,
    };
    let kind = if map { "dict" } else { "list" };
    if let Some(instead) = mutating(method, map) {
        let why = if sandboxed {
            "transformers renders chat templates in Jinja2's immutable sandbox, which refuses it"
        } else {
            "a list or dict never changes once made in teleprompt's Jinja"
        };
        return Some(Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("{kind}.{method}() would change the {kind}: {why}; {instead}"),
        )));
    }
    Some(match (map, method) {
        (_, "copy") => from_args::<()>(args).map(|()| value.clone()),
        (false, "index") => list_index(value, args),
        _ => return None,
    })
}

/// `list.index(x[, start[, end]])`: the first place of `x` in
/// `list[start:end]` (Python's slice bounds), an error where it is not.
fn list_index(list: &JValue, args: &[JValue]) -> Result<JValue, Error> {
    let (wanted, start, end): (JValue, Option<i64>, Option<i64>) = from_args(args)?;
    let len = i64::try_from(list.len().unwrap_or(0)).unwrap_or(i64::MAX);
    let bound = |at: i64| {
        if at < 0 {
            (at + len).max(0)
        } else {
            at.min(len)
        }
    };
    let start = bound(start.unwrap_or(0));
    let end = bound(end.unwrap_or(len));
    for (at, item) in (0i64..).zip(list.try_iter()?) {
        if at >= end {
            break;
        }
        if at >= start && item == wanted {
            return Ok(JValue::from(at));
        }
    }
    Err(Error::new(
        ErrorKind::InvalidOperation,
        format!("{} is not in list", super::repr_lossy(&wanted)),
    ))
}

/// `str.rsplit(sep=None, maxsplit=-1)`: split from the right, at most
/// `maxsplit` times; without `sep`, at runs of whitespace, dropping the
/// whitespace at the ends (but not at the start of a remainder kept whole).
fn rsplit(text: &str, args: &[JValue]) -> Result<JValue, Error> {
    let (sep, maxsplit): (Option<Option<&str>>, Option<i64>) = from_args(args)?;
    let limit = match maxsplit {
        Some(n) if n >= 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
        _ => None,
    };
    let mut parts: Vec<&str> = Vec::new();
    match sep.flatten() {
        Some("") => {
            return Err(Error::new(ErrorKind::InvalidOperation, "empty separator"));
        }
        Some(sep) => match limit {
            Some(limit) => parts.extend(text.rsplitn(limit.saturating_add(1), sep)),
            None => parts.extend(text.rsplit(sep)),
        },
        None => {
            let mut rest = text.trim_end();
            while !rest.is_empty() {
                if limit.is_some_and(|limit| parts.len() >= limit) {
                    parts.push(rest);
                    break;
                }
                match rest.rfind(char::is_whitespace) {
                    Some(at) => {
                        let width = rest[at..].chars().next().map_or(1, char::len_utf8);
                        parts.push(&rest[at + width..]);
                        rest = rest[..at].trim_end();
                    }
                    None => {
                        parts.push(rest);
                        break;
                    }
                }
            }
        }
    }
    super::super::growth::check_items(parts.len())?;
    Ok(parts.into_iter().rev().map(JValue::from).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(text: &str, method: &str, args: &[JValue]) -> String {
        match str_method(text, method, args) {
            Some(Ok(value)) => super::super::display(&value)
                .map(|text| text.into_owned())
                .unwrap_or_default(),
            Some(Err(error)) => format!("error: {error}"),
            None => "none".to_string(),
        }
    }

    #[test]
    fn rsplit_as_python() {
        // Checked against CPython 3.11.
        let none = JValue::from(());
        assert_eq!(call("  a b  c ", "rsplit", &[]), "['a', 'b', 'c']");
        assert_eq!(
            call("  a b  c ", "rsplit", &[none.clone(), JValue::from(1)]),
            "['  a b', 'c']"
        );
        assert_eq!(
            call("  a b ", "rsplit", &[none.clone(), JValue::from(0)]),
            "['  a b']"
        );
        assert_eq!(call("   ", "rsplit", &[]), "[]");
        assert_eq!(
            call("a,b,,c", "rsplit", &[JValue::from(","), JValue::from(1)]),
            "['a,b,', 'c']"
        );
        assert_eq!(
            call("a,b,,c", "rsplit", &[JValue::from(",")]),
            "['a', 'b', '', 'c']"
        );
        assert!(call("a", "rsplit", &[JValue::from("")]).starts_with("error"));
        assert_eq!(
            call("x.jinja", "removesuffix", &[JValue::from(".jinja")]),
            "x"
        );
        assert_eq!(
            call("x.jinja", "removeprefix", &[JValue::from("y")]),
            "x.jinja"
        );
        assert_eq!(call("x", "append", &[]), "none");
    }
}

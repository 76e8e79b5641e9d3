//! Python's `str` methods that minijinja's Python compatibility lacks:
//! `rsplit`, `removeprefix`, `removesuffix` (CPython 3.11's rules).
//!
//! The methods that change a list or a dict (`append`, `pop`, `update`, …)
//! stay errors: `transformers` renders chat templates in Jinja2's immutable
//! sandbox, which refuses them too.

use minijinja::value::{from_args, Value as JValue};
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

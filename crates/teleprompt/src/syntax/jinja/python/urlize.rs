//! Jinja2's `urlize(trim_url_limit=None, nofollow=False, target=None,
//! rel=None, extra_schemes=None)`: the text escaped (markupsafe), each
//! word that is a URL (`http://`, `https://`, `www.`, a bare domain of a
//! common top-level domain, an IP address), a `mailto:` address or an
//! email address made a link, by Jinja2 3.1.6's rules: leading `(`/`<` and
//! trailing `)`/`>`/`.`/`,` kept out of the link unless they balance it,
//! `rel="noopener"` (Jinja2's default policy) on web links, a link without
//! a scheme given `https://`. The patterns are Jinja2's, written for Rust's
//! `regex`.
//!
//! The result is built through [`Out`], within the render's bounds.

use std::sync::LazyLock;

use minijinja::value::{Kwargs, Rest};
use minijinja::{Error, ErrorKind, Value as JValue};
use regex::Regex;

use super::{display, markup, Out};

static HTTP: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?xi)
        ^
        (
            (https?://|www\.)  # scheme or www
            (([\w%-]+\.)+)?  # subdomain
            (
                [a-z]{2,63}  # basic tld
            |
                xn--[\w%]{2,59}  # idna tld
            )
        |
            ([\w%-]{2,63}\.)+  # basic domain
            (com|net|int|edu|gov|org|info|mil)  # basic tld
        |
            (https?://)  # scheme
            (
                (([\d]{1,3})(\.[\d]{1,3}){3})  # IPv4
            |
                (\[([\da-f]{0,4}:){2}([\da-f]{0,4}:?){1,6}\])  # IPv6
            )
        )
        (:[\d]{1,5})?  # port
        ([/?\#]\S*)?  # path, query, and fragment
        $",
    )
    .ok()
});

static EMAIL: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\S+@\w[\w.-]*\.\w+$").ok());

static SCHEME: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^([\w.+-]{2,}:(/){0,2})$").ok());

fn matches(pattern: &LazyLock<Option<Regex>>, text: &str) -> bool {
    pattern.as_ref().is_some_and(|re| re.is_match(text))
}

/// Python's `str.isspace()` for one character (what `\s` matches).
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// `re.split(r"(\s+)", text)`: words and the whitespace between them.
fn words(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = 0;
    let mut space = None;
    for (at, c) in text.char_indices() {
        let is_space = is_py_space(c);
        if space != Some(is_space) && at > start {
            words.push(text.get(start..at).unwrap_or(""));
            start = at;
        }
        space = Some(is_space);
    }
    words.push(text.get(start..).unwrap_or(""));
    words
}

/// markupsafe's `escape`, as a string.
fn escaped(text: &str) -> Result<String, Error> {
    markup::escape_text(text)
}

/// `x[:limit] + "..."` where `x` is longer than `limit` (Python's slice,
/// a negative limit counting from the end).
fn trim(text: &str, limit: Option<i64>) -> String {
    let Some(limit) = limit else {
        return text.to_string();
    };
    let count = text.chars().count();
    if i64::try_from(count).is_ok_and(|count| count <= limit) {
        return text.to_string();
    }
    let keep = if limit >= 0 {
        usize::try_from(limit).unwrap_or(usize::MAX)
    } else {
        count.saturating_sub(usize::try_from(limit.unsigned_abs()).unwrap_or(usize::MAX))
    };
    let mut trimmed: String = text.chars().take(keep).collect();
    trimmed.push_str("...");
    trimmed
}

/// Leading `(`, `<` and `&lt;`.
fn split_head(word: &str) -> (&str, &str) {
    let mut rest = word;
    loop {
        if let Some(next) = rest.strip_prefix(['(', '<']) {
            rest = next;
        } else if let Some(next) = rest.strip_prefix("&lt;") {
            rest = next;
        } else {
            break;
        }
    }
    word.split_at(word.len() - rest.len())
}

/// Trailing `)`, `>`, `.`, `,`, newlines and `&gt;`.
fn split_tail(word: &str) -> (&str, &str) {
    let mut rest = word;
    loop {
        if let Some(next) = rest.strip_suffix([')', '>', '.', ',', '\n']) {
            rest = next;
        } else if let Some(next) = rest.strip_suffix("&gt;") {
            rest = next;
        } else {
            break;
        }
    }
    word.split_at(rest.len())
}

struct Link {
    limit: Option<i64>,
    rel: String,
    target: String,
    schemes: Option<Vec<String>>,
}

impl Link {
    /// One word, made a link where it is one.
    fn word(&self, word: &str, out: &mut Out) -> Result<(), Error> {
        // Whitespace, or a word no pattern can match: as it is.
        if !word.contains(['.', '@', ':']) {
            return out.push_str(word);
        }
        let (head, rest) = split_head(word);
        let (middle, tail) = split_tail(rest);
        let mut middle = middle.to_string();
        let mut tail = tail.to_string();
        for (open, close) in [("(", ")"), ("<", ">"), ("&lt;", "&gt;")] {
            let opened = middle.matches(open).count();
            if opened <= middle.matches(close).count() {
                continue;
            }
            for _ in 0..opened.min(tail.matches(close).count()) {
                let Some(at) = tail.find(close) else { break };
                let end = at + close.len();
                middle.push_str(tail.get(..end).unwrap_or(""));
                tail = tail.get(end..).unwrap_or("").to_string();
            }
        }
        out.push_str(head)?;
        let attrs = format!("{}{}", self.rel, self.target);
        if matches(&HTTP, &middle) {
            let scheme = if middle.starts_with("https://") || middle.starts_with("http://") {
                ""
            } else {
                "https://"
            };
            out.reserve(middle.len().saturating_mul(2))?;
            let shown = trim(&middle, self.limit);
            out.push_str(&format!("<a href=\"{scheme}{middle}\"{attrs}>{shown}</a>"))?;
        } else if middle
            .strip_prefix("mailto:")
            .is_some_and(|address| matches(&EMAIL, address))
        {
            let address = middle.get(7..).unwrap_or("");
            out.reserve(middle.len().saturating_mul(2))?;
            out.push_str(&format!("<a href=\"{middle}\">{address}</a>"))?;
        } else if middle.contains('@')
            && !middle.starts_with("www.")
            && !middle.starts_with('@')
            && !middle.contains(':')
            && matches(&EMAIL, &middle)
        {
            out.reserve(middle.len().saturating_mul(2))?;
            out.push_str(&format!("<a href=\"mailto:{middle}\">{middle}</a>"))?;
        } else {
            if let Some(schemes) = &self.schemes {
                for scheme in schemes {
                    if middle != *scheme && middle.starts_with(scheme.as_str()) {
                        out.reserve(middle.len().saturating_mul(2))?;
                        middle = format!("<a href=\"{middle}\"{attrs}>{middle}</a>");
                    }
                }
            }
            out.push_str(&middle)?;
        }
        out.push_str(&tail)
    }
}

fn error(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, message)
}

/// Jinja2's `urlize` filter.
pub(in crate::syntax::jinja) fn urlize_filter(
    value: &JValue,
    positional: Rest<JValue>,
    kwargs: Kwargs,
) -> Result<JValue, Error> {
    const NAMES: [&str; 5] = [
        "trim_url_limit",
        "nofollow",
        "target",
        "rel",
        "extra_schemes",
    ];
    if positional.len() > NAMES.len() {
        return Err(Error::new(
            ErrorKind::TooManyArguments,
            "urlize takes at most 5 arguments",
        ));
    }
    let mut args: [Option<JValue>; 5] = Default::default();
    for (slot, arg) in args.iter_mut().zip(positional.iter()) {
        *slot = Some(arg.clone());
    }
    for (slot, name) in args.iter_mut().zip(NAMES) {
        if let Some(given) = kwargs.get::<Option<JValue>>(name)? {
            if slot.is_some() {
                return Err(error(format!("urlize got {name} twice")));
            }
            *slot = Some(given);
        }
    }
    kwargs.assert_all_used()?;
    let [limit, nofollow, target, rel, schemes] = args.map(|arg| arg.filter(|v| !v.is_none()));
    let limit = match limit {
        None => None,
        Some(limit) => Some(i64::try_from(limit.clone()).map_err(|_| {
            error(format!(
                "urlize takes an integer trim_url_limit, not {limit}"
            ))
        })?),
    };
    let text_of = |name: &str, value: Option<JValue>| -> Result<Option<String>, Error> {
        match value {
            None => Ok(None),
            Some(value) => match value.as_str() {
                Some(text) => Ok(Some(text.to_string())),
                None => Err(error(format!(
                    "urlize takes a string {name}, not {}",
                    value.kind()
                ))),
            },
        }
    };
    let mut rel_parts: Vec<String> = text_of("rel", rel)?
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if nofollow.is_some_and(|v| v.is_true()) {
        rel_parts.push("nofollow".to_string());
    }
    // Jinja2's default policy, `urlize.rel`.
    rel_parts.push("noopener".to_string());
    rel_parts.sort();
    rel_parts.dedup();
    let rel = format!(" rel=\"{}\"", escaped(&rel_parts.join(" "))?);
    let target = match text_of("target", target)? {
        Some(target) if !target.is_empty() => format!(" target=\"{}\"", escaped(&target)?),
        _ => String::new(),
    };
    let schemes = match schemes {
        None => None,
        Some(schemes) => {
            let mut all = Vec::new();
            for scheme in schemes.try_iter()? {
                let Some(scheme) = scheme.as_str().filter(|s| matches(&SCHEME, s)) else {
                    return Err(error(format!(
                        "{} is not a valid URI scheme prefix",
                        super::repr_lossy(&scheme)
                    )));
                };
                all.push(scheme.to_string());
            }
            Some(all)
        }
    };
    let link = Link {
        limit,
        rel,
        target,
        schemes,
    };
    let text = display(value)?;
    let text = if value.is_safe() {
        text.into_owned()
    } else {
        escaped(&text)?
    };
    let mut out = Out::new();
    for word in words(&text) {
        link.word(word, &mut out)?;
    }
    Ok(JValue::from(out.finish()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile() {
        assert!(HTTP.is_some() && EMAIL.is_some() && SCHEME.is_some());
        assert!(matches(&HTTP, "www.example.com/x?y"));
        assert!(matches(&HTTP, "example.org"));
        assert!(!matches(&HTTP, "example.xyz"));
        assert!(matches(&HTTP, "http://[::1]:8080/"));
        assert_eq!(words("a  b\nc"), ["a", "  ", "b", "\n", "c"]);
        assert_eq!(split_tail("x).&gt;"), ("x", ").&gt;"));
        assert_eq!(split_head("(&lt;x"), ("(&lt;", "x"));
    }
}

//! minijinja's errors turned into teleprompt's: placed on the body as
//! written, with the missing path and the closest key that exists.

use std::cell::RefCell;
use std::error::Error as _;
use std::fmt;
use std::ops::Range;

use minijinja::machinery;
use minijinja::ErrorKind;
use serde_json::Value;

use crate::data::{path_to_string, Data, Segment};
use crate::diagnostics::{closest, TemplateError};
use crate::syntax::edits::Edited;

/// An undefined value that no missing key explains: a key read on a
/// string or number, or an index past the end of a list. Says which, when
/// the expression is a path into the data.
fn undefined_error(body: &str, span: Option<Range<usize>>, data: &Data) -> TemplateError {
    let Some(span) = span else {
        return TemplateError::render(None, "this value is undefined");
    };
    let range = expression_around(body, span.start);
    let text = body
        .get(range.clone())
        .unwrap_or_default()
        .trim_matches('.');
    match broken_step(text, data) {
        Some((message, path)) => TemplateError::render(Some(range), message).with_path(Some(path)),
        None => TemplateError::render(Some(range), format!("`{text}` is undefined")),
    }
}

/// Walks `a.b[2].c` through the data and describes the first step that
/// does not exist, with the path up to and including that step (the
/// data that is missing); `None` when the path does not start in the data.
fn broken_step(path: &str, data: &Data) -> Option<(String, String)> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (name, indexes) = part
            .split_once('[')
            .map_or((part, ""), |(n, rest)| (n, rest));
        if !name.is_empty() {
            steps.push(Segment::Key(name.into()));
        }
        for index in indexes.split('[') {
            let index = index.trim_end_matches(']');
            if !index.is_empty() {
                steps.push(Segment::Index(index.parse().ok()?));
            }
        }
    }
    let mut view = data.root();
    let mut walked: Vec<Segment> = Vec::new();
    for mut step in steps {
        // `xs.0`: a number after a dot is an index of a list.
        let number = match &step {
            Segment::Key(key) => key.parse::<usize>().ok(),
            Segment::Index(_) => None,
        };
        if let (Some(index), Value::Array(_)) = (number, view.value()) {
            step = Segment::Index(index);
        }
        let next = match &step {
            Segment::Key(key) => view.get(key),
            Segment::Index(index) => view.index(*index),
        };
        let next = next.filter(|_| {
            // `.1` reads the item numbered 1, never a map's key "1".
            !matches!((number, view.value()), (Some(_), Value::Object(_)))
        });
        let Some(next) = next else {
            if walked.is_empty() {
                return None;
            }
            let at = path_to_string(&walked);
            if let (Some(number), Value::Object(map)) = (number, view.value()) {
                let has = match map.contains_key(&number.to_string()) {
                    true => format!(" (it has the key \"{number}\")"),
                    false => String::new(),
                };
                let message = format!(
                    "{at} is a map{has}: `.{number}` reads the item numbered {number} of a list, not a key"
                );
                walked.push(step);
                return Some((message, path_to_string(&walked)));
            }
            let message = match (&step, view.value()) {
                (Segment::Index(index), Value::Array(items)) => format!(
                    "{at} has {} element(s): there is no {at}[{index}]",
                    items.len()
                ),
                (Segment::Key(key), Value::Object(_)) => format!("{at} has no key \"{key}\""),
                (Segment::Key(key), other) => format!(
                    "{at} is {}, so it has no key \"{key}\"",
                    crate::data::describe(other)
                ),
                (Segment::Index(index), other) => format!(
                    "{at} is {}, so it has no element {index}",
                    crate::data::describe(other)
                ),
            };
            walked.push(step);
            return Some((message, path_to_string(&walked)));
        };
        walked.push(step);
        view = next;
    }
    None
}

/// Block tags that need an `end…` tag (`set` only in its block form).
const BLOCK_TAGS: &[&str] = &[
    "for",
    "if",
    "macro",
    "call",
    "filter",
    "with",
    "autoescape",
    "block",
    "set",
];

/// The blocks of `body` as its tags open and close them: those left open
/// at the end (outermost first), or the first `end…` tag that closes no
/// open block of its name, with the block innermost open then. Each tag
/// is its name and span (from `{%` to `%}`).
struct Blocks<'b> {
    open: Vec<Tag<'b>>,
    stray: Option<(Tag<'b>, Option<Tag<'b>>)>,
}

/// A block tag: its name (`for`, `endif`) and span.
type Tag<'b> = (&'b str, Range<usize>);

fn blocks(body: &str, syntax: minijinja::syntax::SyntaxConfig) -> Blocks<'_> {
    use minijinja::machinery::Token;
    let mut open: Vec<Tag<'_>> = Vec::new();
    let mut tokens = machinery::tokenize(body, false, syntax).map_while(Result::ok);
    while let Some((token, span)) = tokens.next() {
        if !matches!(token, Token::BlockStart) {
            continue;
        }
        let Some((Token::Ident(word), _)) = tokens.next() else {
            continue;
        };
        let mut assigns = false;
        let mut end = body.len();
        for (token, span) in tokens.by_ref() {
            match token {
                Token::Assign => assigns = true,
                Token::BlockEnd => {
                    end = (span.end_offset as usize).min(body.len());
                    break;
                }
                _ => {}
            }
        }
        let tag = (span.start_offset as usize).min(end)..end;
        if let Some(closed) = word.strip_prefix("end") {
            if open.last().is_some_and(|(name, _)| *name == closed) {
                open.pop();
            } else if BLOCK_TAGS.contains(&closed) {
                let innermost = open.pop();
                return Blocks {
                    open,
                    stray: Some(((word, tag), innermost)),
                };
            }
        } else if BLOCK_TAGS.contains(&word) && !(word == "set" && assigns) {
            open.push((word, tag));
        }
    }
    Blocks { open, stray: None }
}

/// For "unexpected end of input": names the innermost block left open and
/// points at its opening tag, as the Go syntax does (`this if has no
/// {{end}}`), instead of at the end of the file; the end of the file is
/// pointed at too.
pub(super) fn unclosed_block_error(
    error: &minijinja::Error,
    body: &str,
    syntax: minijinja::syntax::SyntaxConfig,
) -> Option<TemplateError> {
    let detail = error.detail()?;
    if detail.starts_with("unknown statement end") {
        return stray_closer_error(body, syntax, error.line()?);
    }
    if !detail.starts_with("unexpected end of input") {
        return None;
    }
    let (word, tag) = blocks(body, syntax).open.pop()?;
    Some(
        TemplateError::parse(
            Some(tag),
            format!("unexpected end of template: this {word} has no {{% end{word} %}}"),
        )
        .suggest(Some(format!("add {{% end{word} %}} where it should end")))
        .with_label(format!("this {word} is never closed"))
        .with_secondary(body.len()..body.len(), "the template ends here"),
    )
}

/// For "unknown statement endif" (minijinja's words for an `end…` tag
/// that closes no open block of its name): says which block is open
/// there, and points at its opening tag too.
fn stray_closer_error(
    body: &str,
    syntax: minijinja::syntax::SyntaxConfig,
    line: usize,
) -> Option<TemplateError> {
    let ((word, tag), innermost) = blocks(body, syntax).stray?;
    // The tag minijinja stopped at, or none: another reading of the text
    // is not reported as this one.
    let tag_line = body
        .get(..tag.start)?
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1;
    if tag_line != line {
        return None;
    }
    let error = match innermost {
        Some((open, opener)) => TemplateError::parse(
            Some(tag),
            format!("{{% {word} %}} does not close the {open} open here"),
        )
        .suggest(Some(format!(
            "close the {open} with {{% end{open} %}} first"
        )))
        .with_label(format!("this does not close the {open}"))
        .with_secondary(opener, format!("the {open} opened here")),
        None => TemplateError::parse(Some(tag), format!("{{% {word} %}} closes no open block"))
            .with_label("no block is open here"),
    };
    Some(error)
}

/// Turns a minijinja error into a [`TemplateError`] on the body as written.
pub(super) fn convert_error(
    error: &minijinja::Error,
    body: &str,
    source: &Edited,
    render: Option<(&MissLog, &Data, &crate::limits::Limits)>,
) -> TemplateError {
    let span = error
        .range()
        .map(|range| source.to_original(range.start)..source.to_original(range.end))
        .or_else(|| {
            let line = error.line()?;
            let start = body
                .split_inclusive('\n')
                .take(line.saturating_sub(1))
                .map(str::len)
                .sum::<usize>();
            let end = body[start.min(body.len())..]
                .find('\n')
                .map_or(body.len(), |i| start + i);
            Some(start..end)
        });
    let detail = error.detail().map(str::to_string);
    let kind = error.kind();
    let generic = || match &detail {
        Some(detail) => format!("{kind}: {detail}"),
        None => kind.to_string(),
    };
    let Some((misses, data, limits)) = render else {
        // Syntax errors point at a place, not at an action to quote.
        let span = span.map(|span| span.start..span.start);
        return TemplateError::parse(span, generic());
    };
    if let Some(over) = error
        .source()
        .and_then(|source| source.downcast_ref::<crate::limits::Exceeded>())
    {
        return TemplateError::render(span, over.to_string());
    }
    if let Some(raised) = error
        .source()
        .and_then(|source| source.downcast_ref::<Raised>())
    {
        // The template's own words, as Jinja2's TemplateError carries them.
        return TemplateError::render(span, raised.0.clone());
    }
    if let Some(failure) = error
        .source()
        .and_then(|source| source.downcast_ref::<HostFailure>())
    {
        // A host function's call: its words, as in every syntax.
        return TemplateError::render(span, failure.0.message.clone())
            .suggest(failure.0.suggestion.clone());
    }
    if kind == ErrorKind::OutOfFuel {
        let over = crate::limits::Exceeded::Steps(limits.max_steps);
        return TemplateError::render(span, over.to_string());
    }
    if kind == ErrorKind::InvalidOperation
        && detail
            .as_deref()
            .is_some_and(|detail| detail.contains("recursion limit exceeded"))
    {
        let over = crate::limits::Exceeded::CallDepth(limits.max_call_depth);
        return TemplateError::render(span, over.to_string());
    }
    // A chat template's unknown name, reached (the load only warned):
    // worded as the load-time error is.
    let unknown = match kind {
        ErrorKind::UnknownFilter => Some(("filter", "unknown-filter")),
        ErrorKind::UnknownTest => Some(("test", "unknown-test")),
        ErrorKind::UnknownFunction => Some(("function", "unknown-function")),
        _ => None,
    };
    if let (Some((what, rule)), Some(range)) = (unknown, span.clone()) {
        if let Some(name) = body.get(range.clone()).filter(|name| {
            !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        }) {
            return TemplateError::render(Some(range), format!("unknown {what} \"{name}\""))
                .with_kind(rule);
        }
    }
    if kind == ErrorKind::UndefinedError {
        if let Some((miss, span)) = misses.explain(body, span.clone()) {
            return miss.to_error(Some(span), data);
        }
        // In text the translation added (the macros a Django `{% import %}`
        // copies): named from that text, placed where it was added.
        if let Some((miss, _)) = error
            .range()
            .and_then(|range| misses.explain(&source.text, Some(range)))
        {
            return miss.to_error(span, data);
        }
        return undefined_error(body, span, data);
    }
    TemplateError::render(span, generic())
}

/// The last keys a render looked up and did not find. minijinja's errors
/// say only "undefined value"; these name the path that was missing.
///
/// A ring of the last [`RECENT_MISSES`], written by the render's own thread
/// (through its scope) without a lock: a chat template tests many absent
/// keys on purpose (`'tool_calls' in message`), so a miss must cost little.
#[derive(Debug, Default)]
pub(crate) struct MissLog {
    recent: RefCell<Ring>,
}

#[derive(Debug, Default)]
struct Ring {
    slots: Vec<Miss>,
    /// Misses noted so far: the next one goes to `written % RECENT_MISSES`.
    written: usize,
}

/// Where a miss happened: its path from the root is worked out only when
/// an error needs it (a template may test many absent keys on purpose).
pub(super) trait MissPlace: fmt::Debug + Send + Sync {
    /// The path from the root of the data.
    fn path(&self) -> Vec<Segment>;
}

/// How many recent misses to keep: a failing expression is explained by one
/// of the last few lookups (later probes, such as globals, come after it).
const RECENT_MISSES: usize = 8;

#[derive(Clone, Debug)]
struct Miss {
    parent: std::sync::Arc<dyn MissPlace>,
    /// The key, as minijinja holds it (a shared string: no copy).
    key: minijinja::Value,
}

impl Miss {
    fn key(&self) -> &str {
        self.key.as_str().unwrap_or_default()
    }
}

impl MissLog {
    pub(super) fn record(&self, parent: std::sync::Arc<dyn MissPlace>, key: &str) {
        let Ok(mut ring) = self.recent.try_borrow_mut() else {
            return;
        };
        let miss = Miss {
            parent,
            key: minijinja::Value::from(key),
        };
        let at = ring.written % RECENT_MISSES;
        match ring.slots.get_mut(at) {
            Some(slot) => *slot = miss,
            None => ring.slots.push(miss),
        }
        ring.written += 1;
    }

    /// The misses kept, oldest first.
    fn in_order(&self) -> Vec<Miss> {
        let Ok(ring) = self.recent.try_borrow() else {
            return Vec::new();
        };
        let start = match ring.slots.len() < RECENT_MISSES {
            true => 0,
            false => ring.written % RECENT_MISSES,
        };
        let (newer, older) = ring.slots.split_at(start.min(ring.slots.len()));
        older.iter().chain(newer).cloned().collect()
    }

    /// The most recent miss whose key the failing source names, and the span
    /// of the expression naming it: inside the error's span if it is there,
    /// else on the same line (minijinja may point at a filter instead).
    fn explain(&self, body: &str, span: Option<Range<usize>>) -> Option<(Miss, Range<usize>)> {
        let span = span?;
        let line_start = body.get(..span.start)?.rfind('\n').map_or(0, |i| i + 1);
        let line_end = body
            .get(span.start..)?
            .find('\n')
            .map_or(body.len(), |i| span.start + i)
            .max(span.end);
        let mut recent = self.in_order();
        let found = recent.iter().rposition(|miss| {
            body.get(span.clone())
                .is_some_and(|text| contains_word(text, miss.key()))
        });
        if let Some(index) = found {
            // minijinja points at the failing step (`.c.d` of `a.b.c.d`):
            // widen to the whole path it belongs to.
            let start = expression_around(body, span.start).start.min(span.start);
            return Some((recent.remove(index), start..span.end));
        }
        let line = body.get(line_start..line_end)?;
        let (index, at) =
            recent.iter().enumerate().rev().find_map(|(index, miss)| {
                Some((index, line_start + find_word(line, miss.key())?))
            })?;
        Some((recent.remove(index), expression_around(body, at)))
    }
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where `word` occurs in `text` as a whole name.
fn find_word(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = text.get(..i).and_then(|t| t.chars().next_back());
        let after = text.get(i + word.len()..).and_then(|t| t.chars().next());
        !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char)
    })
}

fn contains_word(text: &str, word: &str) -> bool {
    find_word(text, word).is_some()
}

/// The dotted expression (`issue.labels[0].name`) around byte `at`.
fn expression_around(body: &str, at: usize) -> Range<usize> {
    let part = |c: char| is_name_char(c) || matches!(c, '.' | '[' | ']');
    let start = body
        .get(..at)
        .and_then(|t| t.char_indices().rev().find(|(_, c)| !part(*c)))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = body
        .get(at..)
        .and_then(|t| t.char_indices().find(|(_, c)| !part(*c)))
        .map_or(body.len(), |(i, _)| at + i);
    start..end
}

impl Miss {
    fn to_error(&self, span: Option<Range<usize>>, data: &Data) -> TemplateError {
        let mut path = self.parent.path();
        let parent = path_to_string(&path);
        let key = self.key();
        let message = if parent.is_empty() {
            format!("there is no variable \"{key}\"")
        } else {
            format!("{parent} has no key \"{key}\"")
        };
        let keys = data
            .lookup(&path)
            .map(|view| view.names())
            .unwrap_or_default();
        let suggestion = closest(key, keys).map(|key| {
            let full = if parent.is_empty() {
                key.to_string()
            } else {
                format!("{parent}.{key}")
            };
            format!("did you mean \"{full}\"?")
        });
        path.push(Segment::Key(key.into()));
        TemplateError::render(span, message)
            .suggest(suggestion)
            .with_path(Some(path_to_string(&path)))
    }
}

/// An error the template raised itself with `raise_exception(message)`
/// (Hugging Face chat templates reject bad conversations so): reported with
/// the template's message as it is.
#[derive(Debug)]
pub(super) struct Raised(pub(super) String);

impl fmt::Display for Raised {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Raised {}

/// A host function's call that failed (binding its arguments, or the
/// function itself): reported with its own message and suggestion.
#[derive(Debug)]
pub(super) struct HostFailure(pub(super) crate::functions::Failure);

impl fmt::Display for HostFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for HostFailure {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Root;

    impl MissPlace for Root {
        fn path(&self) -> Vec<Segment> {
            Vec::new()
        }
    }

    fn keys(log: &MissLog) -> Vec<String> {
        log.in_order()
            .iter()
            .map(|miss| miss.key().to_string())
            .collect()
    }

    #[test]
    fn the_log_keeps_the_latest_misses_oldest_first() {
        let log = MissLog::default();
        let place: std::sync::Arc<dyn MissPlace> = std::sync::Arc::new(Root);
        for i in 0..3 {
            log.record(place.clone(), &format!("k{i}"));
        }
        assert_eq!(keys(&log), ["k0", "k1", "k2"]);
        for i in 3..(RECENT_MISSES + 5) {
            log.record(place.clone(), &format!("k{i}"));
        }
        let expected: Vec<String> = (5..RECENT_MISSES + 5).map(|i| format!("k{i}")).collect();
        assert_eq!(keys(&log), expected);
        // The most recent miss named on the line explains the error.
        let body = "{{ k9 }} {{ k6 }}";
        let (miss, span) = log.explain(body, Some(3..5)).expect("k9 is noted");
        assert_eq!((miss.key(), span), ("k9", 3..5));
    }
}

//! Jinja2's `wordwrap` filter: each line of `str.splitlines()` wrapped by
//! Python's `textwrap.wrap` (CPython 3.11, with `expand_tabs=False` and
//! `replace_whitespace=False`, as Jinja2 3.1.6 calls it), the lines joined
//! with `wrapstring`.
//!
//! `textwrap` cuts a line into chunks (runs of ASCII whitespace and words;
//! with `break_on_hyphens`, also the parts of a hyphenated word and
//! em-dashes, by the rules of its `wordsep_re`, written out here by hand)
//! and fills each line with as many chunks as fit, dropping whitespace at
//! the ends of lines; a chunk longer than the width is cut (after its last
//! hyphen that fits, with `break_on_hyphens`) or, without
//! `break_long_words`, stands on a line of its own. Lengths are counted in
//! characters, as Python does.
//!
//! The result is built through [`Out`]: `wordwrap(1)` of a long text stops
//! at the render's bounds.

use minijinja::value::{Kwargs, Rest};
use minijinja::{Error, ErrorKind, Value as JValue};

use super::{display, Out};

/// `textwrap`'s whitespace: ASCII only (`'\t\n\x0b\x0c\r '`).
fn is_ws(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0b' | '\x0c' | '\r' | ' ')
}

/// Python's `\w`.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Python's `[^\d\W]`: a word character that is not a digit.
fn is_letter(c: char) -> bool {
    is_word(c) && !c.is_numeric()
}

/// `textwrap`'s `word_punct`: `[\w!"'&.,?]`.
fn is_word_punct(c: char) -> bool {
    is_word(c) || matches!(c, '!' | '"' | '\'' | '&' | '.' | ',' | '?')
}

/// Python's `str.isspace()` (what `chunk.strip() == ''` tests).
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `str.splitlines()`: the line boundaries it knows, `\r\n` as one.
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let boundary = matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !boundary {
            continue;
        }
        lines.push(text.get(start..at).unwrap_or(""));
        let mut end = at + c.len_utf8();
        if c == '\r' {
            if let Some(&(next, '\n')) = chars.peek() {
                chars.next();
                end = next + 1;
            }
        }
        start = end;
    }
    if start < text.len() {
        lines.push(text.get(start..).unwrap_or(""));
    }
    lines
}

/// The length of the run of `-` at `at`.
fn dashes(chars: &[char], at: usize) -> usize {
    chars
        .get(at..)
        .map_or(0, |rest| rest.iter().take_while(|&&c| c == '-').count())
}

/// `(?=-{2,}\w)` at `at`.
fn em_dash_ahead(chars: &[char], at: usize) -> bool {
    let run = dashes(chars, at);
    run >= 2 && chars.get(at + run).is_some_and(|&c| is_word(c))
}

fn letter_at(chars: &[char], at: Option<usize>) -> bool {
    at.and_then(|at| chars.get(at))
        .is_some_and(|&c| is_letter(c))
}

fn char_at(chars: &[char], at: Option<usize>, want: char) -> bool {
    at.and_then(|at| chars.get(at)) == Some(&want)
}

/// Where the hyphen at `at` ends a chunk: `textwrap`'s "hyphenated word"
/// alternative (two letters, or letter-hyphen-letter, before it; a
/// letter, an optional hyphen and a letter after it).
fn hyphen_breaks(chars: &[char], at: usize) -> bool {
    if chars.get(at) != Some(&'-') {
        return false;
    }
    let before = |back: usize| at.checked_sub(back);
    let behind = (letter_at(chars, before(2)) && letter_at(chars, before(1)))
        || (letter_at(chars, before(3))
            && char_at(chars, before(2), '-')
            && letter_at(chars, before(1)));
    if !behind {
        return false;
    }
    let next = at + 1;
    letter_at(chars, Some(next))
        && (letter_at(chars, Some(next + 1))
            || (char_at(chars, Some(next + 1), '-') && letter_at(chars, Some(next + 2))))
}

/// The chunks of a line (character ranges), as `wordsep_re.split` (with
/// `break_on_hyphens`) or `wordsep_simple_re.split` (without) cuts it.
fn chunks(chars: &[char], hyphens: bool) -> Vec<(usize, usize)> {
    let mut chunks = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let start = at;
        let ws = |i: usize| chars.get(i).is_some_and(|&c| is_ws(c));
        if ws(at) {
            while ws(at) {
                at += 1;
            }
        } else if !hyphens {
            while at < chars.len() && !ws(at) {
                at += 1;
            }
        } else if at > 0
            && chars.get(at - 1).is_some_and(|&c| is_word_punct(c))
            && em_dash_ahead(chars, at)
        {
            at += dashes(chars, at);
        } else {
            // A word: the shortest run of non-whitespace (at least one
            // character) after which one of the alternatives holds.
            let mut end = at + 1;
            loop {
                if hyphen_breaks(chars, end) {
                    end += 1;
                    break;
                }
                if end >= chars.len() || ws(end) {
                    break;
                }
                if chars.get(end - 1).is_some_and(|&c| is_word_punct(c))
                    && em_dash_ahead(chars, end)
                {
                    break;
                }
                end += 1;
            }
            at = end;
        }
        chunks.push((start, at));
    }
    chunks
}

/// A line of `wrap`: character ranges of the text, one after another.
type Line = [(usize, usize)];

/// `textwrap.wrap(line, width, …)`: each line in turn to `emit`, as
/// character ranges of `chars` (a line is its chunks, which follow each
/// other); the first error of `emit` stops it (a bound the output
/// passed: the rest is never wrapped).
fn wrap<E>(
    chars: &[char],
    width: usize,
    (long_words, hyphens): (bool, bool),
    emit: &mut dyn FnMut(&Line) -> Result<(), E>,
) -> Result<(), E> {
    // Where the next character that is not a space is, from each place:
    // a chunk (or what is left of one) is blank in constant time, so a
    // long run of spaces cut at width 1 stays linear.
    let mut next = chars.len();
    let mut next_text: Vec<usize> = (chars.iter().enumerate().rev())
        .map(|(at, &c)| {
            if !is_py_space(c) {
                next = at;
            }
            next
        })
        .collect();
    next_text.reverse();
    let blank = |(start, end): (usize, usize)| next_text.get(start).is_none_or(|&n| n >= end);
    let mut pending = chunks(chars, hyphens);
    pending.reverse();
    let mut emitted = false;
    let mut line: Vec<(usize, usize)> = Vec::new();
    while !pending.is_empty() {
        line.clear();
        let mut length = 0;
        if pending.last().is_some_and(|&chunk| blank(chunk)) && emitted {
            pending.pop();
        }
        while let Some(&(start, end)) = pending.last() {
            if length + (end - start) <= width {
                line.push((start, end));
                length += end - start;
                pending.pop();
            } else {
                break;
            }
        }
        if let Some(&(start, end)) = pending.last() {
            if end - start > width {
                // `_handle_long_word`.
                let room = if width < 1 { 1 } else { width - length };
                if long_words {
                    let mut cut = room;
                    if hyphens && end - start > room {
                        let hyphen = chars
                            .get(start..start + room)
                            .and_then(|head| head.iter().rposition(|&c| c == '-'));
                        if let Some(hyphen) = hyphen.filter(|&h| h > 0) {
                            let head = chars.get(start..start + hyphen).unwrap_or(&[]);
                            if head.iter().any(|&c| c != '-') {
                                cut = hyphen + 1;
                            }
                        }
                    }
                    line.push((start, start + cut));
                    if let Some(last) = pending.last_mut() {
                        *last = (start + cut, end);
                    }
                } else if line.is_empty() {
                    line.push((start, end));
                    pending.pop();
                }
            }
        }
        if line.last().is_some_and(|&chunk| blank(chunk)) {
            line.pop();
        }
        if !line.is_empty() {
            emit(&line)?;
            emitted = true;
        }
    }
    Ok(())
}

/// Jinja2's `wordwrap(width=79, break_long_words=True, wrapstring=None,
/// break_on_hyphens=True)`.
pub(in crate::syntax::jinja) fn wordwrap_filter(
    value: &JValue,
    positional: Rest<JValue>,
    kwargs: Kwargs,
) -> Result<JValue, Error> {
    const NAMES: [&str; 4] = [
        "width",
        "break_long_words",
        "wrapstring",
        "break_on_hyphens",
    ];
    let mut args: [Option<JValue>; 4] = Default::default();
    if positional.len() > NAMES.len() {
        return Err(Error::new(
            ErrorKind::TooManyArguments,
            "wordwrap takes at most 4 arguments",
        ));
    }
    for (slot, arg) in args.iter_mut().zip(positional.iter()) {
        *slot = Some(arg.clone());
    }
    for (slot, name) in args.iter_mut().zip(NAMES) {
        if let Some(given) = kwargs.get::<Option<JValue>>(name)? {
            if slot.is_some() {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("wordwrap got {name} twice"),
                ));
            }
            *slot = Some(given);
        }
    }
    kwargs.assert_all_used()?;
    let [width, long_words, wrapstring, hyphens] = args;
    let width = match width {
        None => 79,
        Some(width) => {
            let number = i128::try_from(width.clone()).map_err(|_| {
                Error::new(
                    ErrorKind::InvalidOperation,
                    format!("wordwrap takes an integer width, not {width}"),
                )
            })?;
            if number <= 0 {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("wordwrap takes a width of at least 1, not {number}"),
                ));
            }
            usize::try_from(number).unwrap_or(usize::MAX)
        }
    };
    let long_words = long_words.is_none_or(|v| v.is_true());
    let hyphens = hyphens.is_none_or(|v| v.is_true());
    let wrapstring = match wrapstring.filter(|v| !v.is_none()) {
        None => "\n".to_string(),
        Some(text) => match text.as_str() {
            Some(text) => text.to_string(),
            None => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("wordwrap takes a string wrapstring, not {}", text.kind()),
                ))
            }
        },
    };
    let text = display(value)?;
    let mut out = Out::new();
    let mut first = true;
    for paragraph in split_lines(&text) {
        let chars: Vec<char> = paragraph.chars().collect();
        // An empty paragraph still takes its place between the others.
        if !first {
            out.push_str(&wrapstring)?;
        }
        first = false;
        let mut index = 0;
        wrap::<Error>(&chars, width, (long_words, hyphens), &mut |line| {
            if index > 0 {
                out.push_str(&wrapstring)?;
            }
            index += 1;
            for &(start, end) in line {
                for &c in chars.get(start..end).unwrap_or(&[]) {
                    out.push(c)?;
                }
            }
            Ok(())
        })?;
    }
    Ok(JValue::from(out.finish()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        chunks(&chars, true)
            .into_iter()
            .map(|(start, end)| chars[start..end].iter().collect())
            .collect()
    }

    #[test]
    fn chunks_as_python() {
        // CPython 3.11: TextWrapper()._split(text).
        assert_eq!(
            split("Hello there -- you goof-ball, use the -b option!"),
            [
                "Hello", " ", "there", " ", "--", " ", "you", " ", "goof-", "ball,", " ", "use",
                " ", "the", " ", "-b", " ", "option!"
            ]
        );
        assert_eq!(
            split("a--b well--done x-y-z"),
            ["a", "--", "b", " ", "well", "--", "done", " ", "x-y-z"]
        );
        assert_eq!(split("abc-de-f"), ["abc-", "de-f"]);
        assert_eq!(split_lines("a\r\nb\rc\n\nd\n"), ["a", "b", "c", "", "d"]);
    }

    #[test]
    fn long_runs_wrap_in_linear_time() {
        // A run of spaces cut at width 1 is looked at once per cut: linear
        // (a scan of the rest at each cut took minutes).
        for text in [
            " ".repeat(2_000_000),
            "-".repeat(2_000_000),
            "a".repeat(2_000_000),
        ] {
            let chars: Vec<char> = text.chars().collect();
            let started = std::time::Instant::now();
            let mut lines = 0;
            let wrapped: Result<(), ()> = wrap(&chars, 1, (true, true), &mut |_| {
                lines += 1;
                Ok(())
            });
            assert!(wrapped.is_ok() && lines <= chars.len());
            assert!(started.elapsed() < std::time::Duration::from_secs(20));
        }
    }
}

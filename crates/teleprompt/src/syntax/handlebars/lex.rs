//! Splits a Handlebars body into text and tags, tokenizes the inside of
//! each tag, and applies whitespace control (`{{~ ~}}`) and the standalone
//! rule (a line holding only a block, `else`, comment or partial tag is
//! removed, with its line break).

use std::ops::Range;

use crate::diagnostics::TemplateError;

type Result<T> = std::result::Result<T, TemplateError>;

/// What kind of tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagKind {
    /// `{{expr}}` (also `{{else}}`, told apart by the parser).
    Mustache,
    /// `{{{expr}}}` or `{{&expr}}`.
    Raw,
    /// `{{#name}}`.
    Open,
    /// `{{^name}}` (or `{{^}}`, an `else`).
    OpenInverse,
    /// `{{/name}}`.
    Close,
    /// `{{! … }}`.
    Comment,
    /// `{{> name}}`.
    Partial,
    /// `{{#*inline "name"}}`.
    Inline,
    /// `{{#> name}}`: a partial block.
    PartialBlock,
}

/// A token inside a tag.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A name (`foo`, `..`, `.`, `this`, `[odd key]`).
    Id(String),
    /// `.` or `/` between the parts of a path.
    Sep,
    /// `@`.
    At,
    /// A string literal.
    Str(String),
    /// A number literal.
    Num(super::ast::Number),
    /// `true` / `false`.
    Bool(bool),
    /// `null` / `undefined`.
    Null,
    /// `=`.
    Equals,
    /// `(`.
    Open,
    /// `)`.
    Close,
    /// `as |`.
    OpenParams,
    /// `|`.
    Pipe,
}

/// A tag with its tokens.
#[derive(Clone, Debug)]
pub struct Tag {
    /// The kind.
    pub kind: TagKind,
    /// `{{~`.
    pub strip_left: bool,
    /// `~}}`.
    pub strip_right: bool,
    /// The tokens and their places.
    pub tokens: Vec<(Tok, Range<usize>)>,
    /// The whole tag.
    pub span: Range<usize>,
    /// The whitespace before a standalone partial tag (`  {{> row}}` alone
    /// on its line), which indents every line the partial prints.
    pub indent: String,
}

impl Tag {
    /// Whether the standalone rule applies to this tag.
    fn may_stand_alone(&self) -> bool {
        match self.kind {
            TagKind::Mustache => is_else(&self.tokens),
            TagKind::Raw => false,
            _ => true,
        }
    }
}

/// Whether a tag's tokens start with the word `else` (not `[else]`, the key).
pub(crate) fn is_else(tokens: &[(Tok, Range<usize>)]) -> bool {
    matches!(tokens.first(), Some((Tok::Id(name), span)) if name == "else" && span.len() == 4)
}

/// Text or a tag.
#[derive(Clone, Debug)]
pub enum Item {
    /// Literal text (escapes resolved).
    Text {
        /// What it prints.
        text: String,
        /// Where it is.
        span: Range<usize>,
    },
    /// A tag.
    Tag(Tag),
}

fn is_id_byte(b: u8) -> bool {
    !(b.is_ascii_whitespace() || b"!\"#%&'()*+,./;<=>@[\\]^`{|}~".contains(&b))
}

/// Splits `body` into items with whitespace control applied.
pub fn lex(body: &str) -> Result<Vec<Item>> {
    let bytes = body.as_bytes();
    let mut items: Vec<Item> = Vec::new();
    let mut pos = 0;
    let push_text = |items: &mut Vec<Item>, text: &str, span: Range<usize>| {
        if let Some(Item::Text {
            text: previous,
            span: previous_span,
        }) = items.last_mut()
        {
            if previous_span.end == span.start {
                previous.push_str(text);
                previous_span.end = span.end;
                return;
            }
        }
        items.push(Item::Text {
            text: text.to_string(),
            span,
        });
    };
    while pos < body.len() {
        let Some(found) = body.get(pos..).and_then(|rest| rest.find("{{")) else {
            push_text(&mut items, body.get(pos..).unwrap_or(""), pos..body.len());
            break;
        };
        let at = pos + found;
        let escaped = at > pos && bytes.get(at - 1) == Some(&b'\\');
        let double = escaped && at > pos + 1 && bytes.get(at - 2) == Some(&b'\\');
        if escaped && !double {
            // `\{{…`: literal text up to the next tag.
            push_text(&mut items, body.get(pos..at - 1).unwrap_or(""), pos..at);
            let mut next = body
                .get(at + 2..)
                .and_then(|rest| rest.find("{{"))
                .map_or(body.len(), |n| at + 2 + n);
            let mut backs = 0;
            while backs < 2 && next > at + 2 && bytes.get(next - 1) == Some(&b'\\') {
                next -= 1;
                backs += 1;
            }
            push_text(&mut items, body.get(at..next).unwrap_or(""), at..next);
            pos = next;
            continue;
        }
        let text_end = if double { at - 1 } else { at };
        if text_end > pos {
            push_text(&mut items, body.get(pos..text_end).unwrap_or(""), pos..at);
        }
        if body.get(at..).is_some_and(|rest| rest.starts_with("{{{{")) {
            // The raw block's tags stand alone as comments do; its content
            // is text.
            let (open, content, close) = raw_block(body, at)?;
            let mark = |span: Range<usize>| {
                Item::Tag(Tag {
                    kind: TagKind::Comment,
                    strip_left: false,
                    strip_right: false,
                    tokens: Vec::new(),
                    span,
                    indent: String::new(),
                })
            };
            items.push(mark(open));
            if !content.is_empty() {
                let text = body.get(content.clone()).unwrap_or("");
                items.push(Item::Text {
                    text: text.to_string(),
                    span: content,
                });
            }
            pos = close.end;
            items.push(mark(close));
            continue;
        }
        let tag = tag(body, at)?;
        pos = tag.span.end;
        items.push(Item::Tag(tag));
    }
    tidy(&mut items);
    Ok(items)
}

fn unclosed(at: usize, what: &str) -> TemplateError {
    TemplateError::parse(
        Some(at..at + 2),
        format!("{what} opened here is never closed"),
    )
    .suggest(Some("close it with }}".to_string()))
}

/// A raw block `{{{{raw}}}}…{{{{/raw}}}}` starting at `at`: the spans of
/// its opening tag, its content (printed as written: Semantic Kernel's
/// `raw` helper, handlebars.js raw block syntax) and its closing tag.
/// Only the `raw` helper opens one; raw blocks inside it nest.
fn raw_block(body: &str, at: usize) -> Result<(Range<usize>, Range<usize>, Range<usize>)> {
    const OPEN: &str = "{{{{raw}}}}";
    const CLOSE: &str = "{{{{/raw}}}}";
    let open_end = body
        .get(at + 4..)
        .and_then(|rest| rest.find("}}}}"))
        .map(|n| at + 4 + n + 4)
        .ok_or_else(|| unclosed(at, "the raw block tag"))?;
    let name = body.get(at + 4..open_end - 4).unwrap_or("").trim();
    if name != "raw" {
        return Err(TemplateError::parse(
            Some(at..open_end),
            format!("raw blocks are supported only for the raw helper, not {name:?}"),
        )
        .suggest(Some(format!("write {OPEN}…{CLOSE}"))));
    }
    let mut depth = 1usize;
    let mut from = open_end;
    loop {
        let rest = body.get(from..).unwrap_or("");
        let (Some(close), open) = (rest.find(CLOSE), rest.find(OPEN)) else {
            return Err(TemplateError::parse(
                Some(at..open_end),
                "the raw block opened here is never closed",
            )
            .suggest(Some(format!("close it with {CLOSE}"))));
        };
        match open {
            Some(open) if open < close => {
                depth += 1;
                from += open + OPEN.len();
            }
            _ => {
                depth -= 1;
                let close_at = from + close;
                if depth == 0 {
                    return Ok((
                        at..open_end,
                        open_end..close_at,
                        close_at..close_at + CLOSE.len(),
                    ));
                }
                from = close_at + CLOSE.len();
            }
        }
    }
}

/// Reads the tag starting at `at` (on `{{`).
fn tag(body: &str, at: usize) -> Result<Tag> {
    let bytes = body.as_bytes();
    let byte = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let mut i = at + 2;
    let strip_left = byte(i) == b'~';
    if strip_left {
        i += 1;
    }
    if byte(i) == b'!' {
        let long = body.get(i..).is_some_and(|rest| rest.starts_with("!--"));
        let end_mark = if long { "--" } else { "" };
        let search_from = if long { i + 3 } else { i + 1 };
        let mut from = search_from;
        loop {
            let Some(found) = body.get(from..).and_then(|rest| rest.find("}}")) else {
                return Err(unclosed(at, "the comment"));
            };
            let close = from + found;
            let strip_right = close > search_from && byte(close - 1) == b'~';
            let before = if strip_right { close - 1 } else { close };
            if body
                .get(search_from..before)
                .is_some_and(|inner| inner.ends_with(end_mark))
                && before >= search_from + end_mark.len()
            {
                return Ok(Tag {
                    kind: TagKind::Comment,
                    strip_left,
                    strip_right,
                    tokens: Vec::new(),
                    span: at..close + 2,
                    indent: String::new(),
                });
            }
            from = close + 2;
        }
    }
    let (kind, triple) = match byte(i) {
        b'{' => (TagKind::Raw, true),
        b'&' => (TagKind::Raw, false),
        b'#' if byte(i + 1) == b'*' => (TagKind::Inline, false),
        b'#' if byte(i + 1) == b'>' => (TagKind::PartialBlock, false),
        b'#' => (TagKind::Open, false),
        b'^' => (TagKind::OpenInverse, false),
        b'/' => (TagKind::Close, false),
        b'>' => (TagKind::Partial, false),
        b'=' => {
            return Err(TemplateError::parse(
                Some(at..i + 1),
                "changing the delimiters ({{=<% %>=}}) is not supported",
            ))
        }
        _ => (TagKind::Mustache, false),
    };
    if kind != TagKind::Mustache {
        i += if matches!(kind, TagKind::Inline | TagKind::PartialBlock) {
            2
        } else {
            1
        };
    }
    let mut tokens = Vec::new();
    loop {
        let b = byte(i);
        if i >= body.len() {
            return Err(unclosed(at, "{{"));
        }
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let closing = if triple { "}}}" } else { "}}" };
        let rest = body.get(i..).unwrap_or("");
        let (strip_right, len) = if rest.starts_with(closing) {
            (false, closing.len())
        } else if triple && rest.starts_with("~}}}") {
            return Err(TemplateError::parse(
                Some(i..i + 4),
                "a {{{ tag that strips the whitespace after it ends with }~}}, not ~}}}",
            ));
        } else if rest.starts_with('~') && rest.get(1..).is_some_and(|r| r.starts_with(closing)) {
            (true, closing.len() + 1)
        } else if triple && rest.starts_with("}~}}") {
            // handlebars.js's `}~}}` ends a `{{{` tag and strips after it.
            (true, 4)
        } else {
            (false, 0)
        };
        if len > 0 && !triple && byte(i + len) == b'}' {
            // handlebars.js reads `}}}` as the end of a `{{{` tag, so it
            // refuses `{{a}}}` (and `{{a}}}}`): a `}` after the tag is not text.
            let closer = if byte(i + len + 1) == b'}' {
                "}}}}"
            } else {
                "}}}"
            };
            let start = i + len - 2;
            return Err(TemplateError::parse(
                Some(start..start + closer.len()),
                format!("this tag opens with {{{{ but ends with {closer}"),
            )
            .suggest(Some(
                "end it with }} (with a space before a } that is text), or open it with {{{"
                    .to_string(),
            )));
        }
        if len > 0 {
            return Ok(Tag {
                kind,
                strip_left,
                strip_right,
                tokens,
                span: at..i + len,
                indent: String::new(),
            });
        }
        let start = i;
        let tok = match b {
            b'}' => {
                return Err(TemplateError::parse(
                    Some(i..i + 1),
                    if triple {
                        "a {{{ tag must end with }}}"
                    } else {
                        "unexpected }"
                    },
                ))
            }
            b'(' => {
                i += 1;
                Tok::Open
            }
            b')' => {
                i += 1;
                Tok::Close
            }
            b'=' => {
                i += 1;
                Tok::Equals
            }
            b'|' => {
                i += 1;
                Tok::Pipe
            }
            b'@' => {
                i += 1;
                Tok::At
            }
            b'"' | b'\'' => {
                let mut text = String::new();
                let mut j = i + 1;
                loop {
                    let Some(&c) = bytes.get(j) else {
                        return Err(TemplateError::parse(
                            Some(i..i + 1),
                            "this string is never closed",
                        ));
                    };
                    if c == b'\\' && bytes.get(j + 1) == Some(&b) {
                        text.push(char::from(b));
                        j += 2;
                    } else if c == b {
                        break;
                    } else {
                        let next = body.get(j..).and_then(|r| r.chars().next()).unwrap_or(' ');
                        text.push(next);
                        j += next.len_utf8();
                    }
                }
                i = j + 1;
                Tok::Str(text)
            }
            b'[' => {
                let Some(end) = body.get(i + 1..).and_then(|r| r.find(']')) else {
                    return Err(TemplateError::parse(
                        Some(i..i + 1),
                        "this [ is never closed",
                    ));
                };
                let name = body.get(i + 1..i + 1 + end).unwrap_or("").to_string();
                i += end + 2;
                Tok::Id(name)
            }
            b'.' if byte(i + 1) == b'.' => {
                i += 2;
                Tok::Id("..".to_string())
            }
            b'.' | b'/' => {
                let after_id = matches!(tokens.last(), Some((Tok::Id(_), r)) if r.end == i);
                i += 1;
                if after_id {
                    Tok::Sep
                } else if b == b'.' {
                    Tok::Id(".".to_string())
                } else {
                    return Err(TemplateError::parse(Some(start..i), "unexpected /"));
                }
            }
            _ if is_id_byte(b) => {
                let mut j = i;
                while j < body.len() && is_id_byte(byte(j)) {
                    j += 1;
                }
                // A number's fraction (`2.5`), as handlebars.js lexes
                // `-?[0-9]+(\.[0-9]+)?`; not a key inside a path (`a.1.2`).
                let in_path = matches!(tokens.last(), Some((Tok::Sep, r)) if r.end == i);
                let int = body.get(i..j).unwrap_or("");
                let int = int.strip_prefix('-').unwrap_or(int);
                if !in_path
                    && !int.is_empty()
                    && int.bytes().all(|b| b.is_ascii_digit())
                    && byte(j) == b'.'
                {
                    let mut k = j + 1;
                    while k < body.len() && byte(k).is_ascii_digit() {
                        k += 1;
                    }
                    if k > j + 1 && literal_ends(byte(k)) {
                        j = k;
                    }
                }
                let word = body.get(i..j).unwrap_or("");
                i = j;
                // As in handlebars.js, a literal is one only before `~`,
                // `}`, `)` or a space: `404/a`, `true.x` and `a.1.b` are
                // paths, `true=1` a key.
                let ends = literal_ends(byte(i));
                if word == "as"
                    && body
                        .get(i..)
                        .is_some_and(|r| r.trim_start().starts_with('|'))
                {
                    let skip = body.get(i..).map_or(0, |r| r.len() - r.trim_start().len());
                    i += skip + 1;
                    Tok::OpenParams
                } else if ends && (word == "true" || word == "false") {
                    Tok::Bool(word == "true")
                } else if ends && (word == "null" || word == "undefined") {
                    Tok::Null
                } else if let Some(number) = number(word).filter(|_| ends) {
                    Tok::Num(number)
                } else {
                    Tok::Id(word.to_string())
                }
            }
            _ => {
                let c = body.get(i..).and_then(|r| r.chars().next()).unwrap_or('?');
                return Err(TemplateError::parse(
                    Some(i..i + c.len_utf8()),
                    format!("unexpected {c:?} in a tag"),
                ));
            }
        };
        tokens.push((tok, start..i));
    }
}

/// Whether `next` (0 at the end of the body) may follow a literal
/// (`true`, `null`, `12.5`…): handlebars.js's lookahead `[~}\s)]`.
fn literal_ends(next: u8) -> bool {
    next == 0 || next.is_ascii_whitespace() || b"~})".contains(&next)
}

fn number(word: &str) -> Option<super::ast::Number> {
    let digits = word.strip_prefix('-').unwrap_or(word);
    let (int, frac) = match digits.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (digits, None),
    };
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match frac {
        None => Some(match word.parse::<i64>() {
            Ok(n) => super::ast::Number::Int(n),
            Err(_) => super::ast::Number::Float(word.parse().ok()?),
        }),
        Some(frac) if !frac.is_empty() && frac.bytes().all(|b| b.is_ascii_digit()) => {
            Some(super::ast::Number::Float(word.parse().ok()?))
        }
        Some(_) => None,
    }
}

/// Standalone lines first (judged on the text as written), then `~`.
fn tidy(items: &mut [Item]) {
    let text_of = |item: Option<&Item>| match item {
        Some(Item::Text { text, .. }) => Some(text.clone()),
        _ => None,
    };
    let mut standalone = vec![false; items.len()];
    for (i, item) in items.iter().enumerate() {
        let Item::Tag(tag) = item else { continue };
        if !tag.may_stand_alone() {
            continue;
        }
        let before = match i.checked_sub(1) {
            None => true,
            Some(p) => match text_of(items.get(p)) {
                Some(text) => match text.rfind('\n') {
                    Some(nl) => text.get(nl + 1..).is_some_and(|t| t.trim().is_empty()),
                    None => p == 0 && text.trim().is_empty(),
                },
                None => false,
            },
        };
        let after = match text_of(items.get(i + 1)) {
            None => i + 1 >= items.len(),
            Some(text) => match text.find('\n') {
                Some(nl) => text.get(..nl).is_some_and(|t| t.trim().is_empty()),
                None => i + 2 >= items.len() && text.trim().is_empty(),
            },
        };
        standalone[i] = before && after;
    }
    for i in 0..items.len() {
        let (strip_left, strip_right, alone) = match items.get(i) {
            Some(Item::Tag(tag)) => (
                tag.strip_left,
                tag.strip_right,
                standalone.get(i).copied().unwrap_or(false),
            ),
            _ => continue,
        };
        let mut indent = None;
        if let Some(Item::Text { text, .. }) = i.checked_sub(1).and_then(|p| items.get_mut(p)) {
            if strip_left {
                let kept = text.trim_end().len();
                text.truncate(kept);
            } else if alone {
                let kept = text.rfind('\n').map_or(0, |nl| nl + 1);
                indent = text.get(kept..).map(str::to_string);
                text.truncate(kept);
            }
        }
        if let (Some(indent), Some(Item::Tag(tag))) = (indent, items.get_mut(i)) {
            if tag.kind == TagKind::Partial {
                tag.indent = indent;
            }
        }
        if let Some(Item::Text { text, .. }) = items.get_mut(i + 1) {
            if strip_right {
                *text = text.trim_start().to_string();
            } else if alone {
                *text = match text.find('\n') {
                    Some(nl) => text.get(nl + 1..).unwrap_or("").to_string(),
                    None => String::new(),
                };
            }
        }
    }
}

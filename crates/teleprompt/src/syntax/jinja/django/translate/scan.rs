//! Reading a tag: its tokens (`scan_tag`), and the expression spellings
//! of pongo2 inside them rewritten as Jinja's (colon filter arguments,
//! `forloop.X`, `&&`, `||`, `!`, `<>`, `^`), with the token walks they use
//! (a filter argument's end, a bracket's match, juxtaposed expressions).

use std::ops::Range;

use super::{loop_attribute, parse_error, Kind, Tag, Token, Translator};
use crate::diagnostics::TemplateError;

impl Translator<'_> {
    /// Reads the tag opening at `start` up to its closing delimiter.
    pub(super) fn scan_tag(&self, start: usize, block: bool) -> Result<Tag, TemplateError> {
        let body = self.body;
        let bytes = body.as_bytes();
        let close = if block { b'%' } else { b'}' };
        let mut i = start + 2;
        let open_dash = bytes.get(i) == Some(&b'-');
        if open_dash {
            i += 1;
        }
        let mut tokens = Vec::new();
        loop {
            let Some(&c) = bytes.get(i) else {
                let what = if block {
                    "{% has no closing %}"
                } else {
                    "{{ has no closing }}"
                };
                return Err(
                    parse_error(start..start + 2, format!("this {what}")).suggest(Some(format!(
                        "close it with {}",
                        if block { "%}" } else { "}}" }
                    ))),
                );
            };
            if c.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            // The closing delimiter, with an optional `-` before it.
            if c == b'-' && bytes.get(i + 1) == Some(&close) && bytes.get(i + 2) == Some(&b'}') {
                return Ok(Tag {
                    span: start..i + 3,
                    open_dash,
                    close_dash: true,
                    tokens,
                });
            }
            if c == close && bytes.get(i + 1) == Some(&b'}') {
                return Ok(Tag {
                    span: start..i + 2,
                    open_dash,
                    close_dash: false,
                    tokens,
                });
            }
            let token_start = i;
            let kind = if c == b'"' || c == b'\'' {
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => {
                            return Err(parse_error(
                                token_start..token_start + 1,
                                "this string has no closing quote",
                            ))
                        }
                        Some(b'\\') => i += 2,
                        Some(&q) if q == c => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                Kind::Str
            } else if c.is_ascii_digit() {
                while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                        i += 1;
                    }
                }
                Kind::Number
            } else if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 {
                while bytes
                    .get(i)
                    .is_some_and(|&b| b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80)
                {
                    i += 1;
                }
                Kind::Ident
            } else {
                const PAIRS: &[&[u8; 2]] = &[
                    b"==", b"!=", b"<=", b">=", b"<>", b"&&", b"||", b"**", b"//",
                ];
                let two = bytes.get(i..i + 2);
                i += if PAIRS.iter().any(|pair| two == Some(&pair[..])) {
                    2
                } else {
                    1
                };
                Kind::Sym
            };
            // Never split a UTF-8 character.
            while i < bytes.len() && !body.is_char_boundary(i) {
                i += 1;
            }
            tokens.push(Token {
                kind,
                start: token_start,
                end: i.min(bytes.len()),
            });
        }
    }

    pub(super) fn is_sym(&self, token: Option<&Token>, sym: &str) -> bool {
        token.is_some_and(|t| t.kind == Kind::Sym && self.text(t) == sym)
    }

    pub(super) fn is_ident(&self, token: Option<&Token>, name: &str) -> bool {
        token.is_some_and(|t| t.kind == Kind::Ident && self.text(t) == name)
    }

    /// Rewrites the expression spellings of pongo2 inside `tokens`: colon
    /// filter arguments, `forloop.X`, `&&`, `||`, `!`, `<>`, `^`. With
    /// `filter_chain`, the first token is a filter name (`{% filter %}`).
    pub(super) fn expression(
        &mut self,
        tokens: &[Token],
        filter_chain: bool,
    ) -> Result<(), TemplateError> {
        let mut i = 0;
        while let Some(token) = tokens.get(i).copied() {
            let text = self.text(&token);
            let previous = i.checked_sub(1).and_then(|p| tokens.get(p));
            let is_filter_name = token.kind == Kind::Ident
                && ((filter_chain && i == 0) || self.is_sym(previous, "|"));
            if is_filter_name {
                self.filter_name(&token)?;
                if self.is_sym(tokens.get(i + 1), ":") {
                    let colon = tokens
                        .get(i + 1)
                        .map_or(token.end..token.end, |t| t.start..t.end);
                    let argument = filter_argument(self, tokens, i + 2).ok_or_else(|| {
                        parse_error(
                            colon.clone(),
                            format!("the filter \"{text}\" needs a value after ':'"),
                        )
                        .suggest(Some(format!("write {text}:\"text\" or {text}:value")))
                    })?;
                    self.edit(colon, "(");
                    let end = tokens.get(argument - 1).map_or(token.end, |t| t.end);
                    self.insert(end, ")");
                    i += 2;
                    continue;
                }
                i += 1;
                continue;
            }
            match (token.kind, text) {
                (Kind::Ident, "forloop") if !self.is_sym(previous, ".") => {
                    // `forloop.Parentloop.Parentloop…`: the loop that many
                    // levels out, kept under a name of its own.
                    let mut up = 0;
                    let mut end = token.end;
                    while self.is_sym(tokens.get(i + 1 + 2 * up), ".")
                        && tokens
                            .get(i + 2 + 2 * up)
                            .filter(|t| t.kind == Kind::Ident)
                            .is_some_and(|t| matches!(self.text(t), "Parentloop" | "parentloop"))
                    {
                        end = tokens.get(i + 2 + 2 * up).map_or(end, |t| t.end);
                        up += 1;
                    }
                    let name = match up {
                        0 => "loop".to_string(),
                        _ => self.keep_loop(up, token.start..end)?,
                    };
                    let after = i + 1 + 2 * up;
                    // The loop as a value (`{{ row(forloop, x) }}`): with
                    // pongo2's names for what a macro reads of it.
                    let name = match self.is_sym(tokens.get(after), ".") {
                        true => name,
                        false => format!("__django_forloop({name})"),
                    };
                    self.edit(token.start..end, name);
                    if self.is_sym(tokens.get(after), ".") {
                        if let Some(attribute) =
                            tokens.get(after + 1).filter(|t| t.kind == Kind::Ident)
                        {
                            if let Some(jinja) = loop_attribute(self.text(attribute)) {
                                self.edit(attribute.start..attribute.end, jinja);
                            }
                            i = after + 2;
                            continue;
                        }
                    }
                    i = after;
                    continue;
                }
                // `{{ block.Super }}`: the parent template's block.
                (Kind::Ident, "block")
                    if !self.is_sym(previous, ".")
                        && self.is_sym(tokens.get(i + 1), ".")
                        && self.is_ident(tokens.get(i + 2), "Super") =>
                {
                    let end = tokens.get(i + 2).map_or(token.end, |t| t.end);
                    // In a template that extends none, the block has no
                    // parent's: pongo2 prints nothing.
                    let parent = if self.extends { "super()" } else { "\"\"" };
                    self.edit(token.start..end, parent);
                    i += 3;
                    continue;
                }
                (Kind::Sym, "&&") => self.edit(token.start..token.end, " and "),
                (Kind::Sym, "||") => self.edit(token.start..token.end, " or "),
                (Kind::Sym, "<>") => self.edit(token.start..token.end, "!="),
                (Kind::Sym, "^") => self.edit(token.start..token.end, "**"),
                (Kind::Sym, "!") => self.edit(token.start..token.end, " not "),
                _ => {}
            }
            i += 1;
        }
        Ok(())
    }

    /// Filters pongo2 has that a prompt cannot use.
    pub(super) fn filter_name(&self, token: &Token) -> Result<(), TemplateError> {
        if self.text(token) == "random" {
            return Err(parse_error(
                token.start..token.end,
                "the filter \"random\" is not supported: a prompt renders the same way every time",
            )
            .suggest(Some("pick the element with first, last or an index".into())));
        }
        Ok(())
    }
}

/// Where a filter argument that starts at `tokens[i]` ends (exclusive): a
/// string, a number (with a sign), or a variable path (`a.b[0].c`, with
/// calls). `None` when nothing there is an argument.
pub(super) fn filter_argument(t: &Translator<'_>, tokens: &[Token], mut i: usize) -> Option<usize> {
    let first = tokens.get(i)?;
    match first.kind {
        Kind::Str | Kind::Number => return Some(i + 1),
        Kind::Sym if matches!(t.text(first), "-" | "+") => {
            return tokens
                .get(i + 1)
                .filter(|n| n.kind == Kind::Number)
                .map(|_| i + 2)
        }
        Kind::Sym if t.text(first) == "(" => return matching(t, tokens, i),
        Kind::Ident => {}
        Kind::Sym => return None,
    }
    i += 1;
    loop {
        match tokens.get(i) {
            Some(dot) if t.is_sym(Some(dot), ".") => match tokens.get(i + 1) {
                Some(next) if matches!(next.kind, Kind::Ident | Kind::Number) => i += 2,
                _ => return Some(i),
            },
            Some(open) if t.is_sym(Some(open), "[") || t.is_sym(Some(open), "(") => {
                i = matching(t, tokens, i)?;
            }
            _ => return Some(i),
        }
    }
}

/// The index after the bracket that closes the one at `tokens[i]`.
pub(super) fn matching(t: &Translator<'_>, tokens: &[Token], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, token) in tokens.iter().enumerate().skip(i) {
        if token.kind != Kind::Sym {
            continue;
        }
        match t.text(token) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits juxtaposed expressions (`ifequal a b`, `firstof a b "x"`): a new
/// expression starts where a value follows a value with no operator between.
pub(super) fn split_expressions(t: &Translator<'_>, tokens: &[Token]) -> Vec<Range<usize>> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut depth = 0usize;
    let mut after_value = false;
    for (i, token) in tokens.iter().enumerate() {
        let text = t.text(token);
        let starts_value = match token.kind {
            Kind::Str | Kind::Number => true,
            Kind::Ident => !matches!(text, "and" | "or" | "in" | "is" | "not" | "if" | "else"),
            Kind::Sym => matches!(text, "[" | "{") || (text == "(" && !after_value),
        };
        if depth == 0 && after_value && starts_value && i > start {
            parts.push(start..i);
            start = i;
        }
        match (token.kind, text) {
            (Kind::Sym, "(" | "[" | "{") => {
                depth += 1;
                after_value = false;
            }
            (Kind::Sym, ")" | "]" | "}") => {
                depth = depth.saturating_sub(1);
                after_value = true;
            }
            (Kind::Sym, "." | "|" | ":") => after_value = false,
            (Kind::Sym, _) => after_value = false,
            (Kind::Ident, "and" | "or" | "in" | "is" | "not" | "if" | "else") => {
                after_value = false
            }
            _ => after_value = true,
        }
        // `a.b` and `x|f`: the name after `.` or `|` continues the value.
        if token.kind == Kind::Ident
            && i > 0
            && tokens
                .get(i - 1)
                .is_some_and(|p| p.kind == Kind::Sym && matches!(t.text(p), "." | "|" | ":"))
        {
            after_value = true;
        }
    }
    if start < tokens.len() {
        parts.push(start..tokens.len());
    }
    parts
}

//! The Go template lexer: splits a body into text and the tokens of actions,
//! following `text/template/parse/lex.go` (trim markers, comments, numbers,
//! quoted strings, characters, fields and variables).

use std::ops::Range;

use crate::diagnostics::TemplateError;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// Plain text between actions (its span is already trimmed).
    Text,
    /// `{{` (or `{{- `).
    LeftDelim,
    /// `}}` (or ` -}}`).
    RightDelim,
    /// A comment action `{{/* … */}}`.
    Comment,
    /// `true` or `false`.
    Bool,
    /// A character constant `'a'`.
    Char,
    /// A number.
    Number,
    /// A complex number (not supported; lexed so the parser can say so).
    Complex,
    /// An interpreted string `"…"`.
    String,
    /// A raw string `` `…` ``.
    RawString,
    /// `.` alone.
    Dot,
    /// `.name`.
    Field,
    /// `$` or `$name`.
    Variable,
    /// A bare word: a function name.
    Identifier,
    /// A keyword.
    Keyword(Keyword),
    /// `nil`.
    Nil,
    /// `(`.
    LeftParen,
    /// `)`.
    RightParen,
    /// `|`.
    Pipe,
    /// `:=`.
    Declare,
    /// `=`.
    Assign,
    /// Another printable ASCII character, such as `,`.
    Punct,
    /// A run of spaces inside an action.
    Space,
    /// The end of the input.
    Eof,
}

/// Keywords of actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Keyword {
    Block,
    Break,
    Continue,
    Define,
    Else,
    End,
    If,
    Range,
    Template,
    With,
}

impl Keyword {
    fn from_word(word: &str) -> Option<Keyword> {
        Some(match word {
            "block" => Keyword::Block,
            "break" => Keyword::Break,
            "continue" => Keyword::Continue,
            "define" => Keyword::Define,
            "else" => Keyword::Else,
            "end" => Keyword::End,
            "if" => Keyword::If,
            "range" => Keyword::Range,
            "template" => Keyword::Template,
            "with" => Keyword::With,
            _ => return None,
        })
    }
}

/// One token: its kind and byte range in the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where it is.
    pub span: Range<usize>,
}

const LEFT: &str = "{{";
const RIGHT: &str = "}}";

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

fn has_left_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1] as char)
}

fn has_right_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(b[0] as char) && b[1] == b'-'
}

/// Splits `src` into tokens.
pub fn lex(src: &str) -> Result<Vec<Token>, TemplateError> {
    let mut lexer = Lexer {
        src,
        pos: 0,
        tokens: Vec::new(),
    };
    lexer.run()?;
    Ok(lexer.tokens)
}

struct Lexer<'s> {
    src: &'s str,
    pos: usize,
    tokens: Vec<Token>,
}

impl<'s> Lexer<'s> {
    fn rest(&self) -> &'s str {
        self.src.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn emit(&mut self, kind: TokenKind, start: usize) {
        self.tokens.push(Token {
            kind,
            span: start..self.pos,
        });
    }

    fn error(&self, start: usize, message: impl Into<String>) -> TemplateError {
        TemplateError::parse(Some(start..self.pos.max(start)), message)
    }

    fn at_right_delim(&self) -> Option<bool> {
        let rest = self.rest();
        if has_right_trim(rest) && rest.get(2..).is_some_and(|r| r.starts_with(RIGHT)) {
            Some(true)
        } else if rest.starts_with(RIGHT) {
            Some(false)
        } else {
            None
        }
    }

    fn run(&mut self) -> Result<(), TemplateError> {
        let mut trim_next = false;
        loop {
            let mut start = self.pos;
            if trim_next {
                let rest = self.rest();
                start += rest.len() - rest.trim_start_matches(is_space).len();
            }
            let rest = self.src.get(start..).unwrap_or("");
            let Some(found) = rest.find(LEFT) else {
                self.pos = self.src.len();
                if self.pos > start {
                    self.tokens.push(Token {
                        kind: TokenKind::Text,
                        span: start..self.pos,
                    });
                }
                self.emit(TokenKind::Eof, self.src.len());
                return Ok(());
            };
            let delim = start + found;
            let after = delim + LEFT.len();
            let left_trim = has_left_trim(self.src.get(after..).unwrap_or(""));
            let mut text_end = delim;
            if left_trim {
                let text = self.src.get(start..delim).unwrap_or("");
                text_end = start + text.trim_end_matches(is_space).len();
            }
            if text_end > start {
                self.tokens.push(Token {
                    kind: TokenKind::Text,
                    span: start..text_end,
                });
            }
            let inner = after + if left_trim { 2 } else { 0 };
            if self.src.get(inner..).is_some_and(|r| r.starts_with("/*")) {
                self.pos = inner + 2;
                let Some(close) = self.rest().find("*/") else {
                    self.pos = self.src.len();
                    return Err(TemplateError::parse(
                        Some(delim..delim + 2),
                        "unclosed comment",
                    ));
                };
                self.pos += close + 2;
                let Some(trim) = self.at_right_delim() else {
                    return Err(self.error(delim, "comment ends before closing delimiter"));
                };
                self.pos += if trim { 2 } else { 0 } + RIGHT.len();
                self.emit(TokenKind::Comment, delim);
                trim_next = trim;
                continue;
            }
            self.pos = after;
            self.emit(TokenKind::LeftDelim, delim);
            self.pos = inner;
            trim_next = self.lex_action(delim)?;
        }
    }

    /// Lexes the inside of an action up to and including its right
    /// delimiter; returns whether that delimiter trims the text after it.
    fn lex_action(&mut self, action_start: usize) -> Result<bool, TemplateError> {
        let mut paren_depth = 0usize;
        loop {
            if let Some(trim) = self.at_right_delim() {
                if paren_depth > 0 {
                    return Err(self.error(self.pos, "unclosed left paren"));
                }
                let start = self.pos;
                self.pos += if trim { 2 } else { 0 } + RIGHT.len();
                self.emit(TokenKind::RightDelim, start);
                return Ok(trim);
            }
            let start = self.pos;
            let Some(c) = self.bump() else {
                return Err(TemplateError::parse(
                    Some(action_start..self.src.len()),
                    "unclosed action",
                ));
            };
            match c {
                c if is_space(c) => {
                    self.pos = start;
                    let mut spaces = 0;
                    while self.peek().is_some_and(is_space) {
                        self.bump();
                        spaces += 1;
                    }
                    // A run of spaces that ends in " -}}": the last space
                    // belongs to the trim marker.
                    let before = self.pos - 1;
                    let tail = self.src.get(before..).unwrap_or("");
                    if has_right_trim(tail) && tail.get(2..).is_some_and(|r| r.starts_with(RIGHT)) {
                        self.pos = before;
                        if spaces == 1 {
                            continue;
                        }
                    }
                    self.emit(TokenKind::Space, start);
                }
                '=' => self.emit(TokenKind::Assign, start),
                ':' => {
                    if self.bump() != Some('=') {
                        return Err(self.error(start, "expected :="));
                    }
                    self.emit(TokenKind::Declare, start);
                }
                '|' => self.emit(TokenKind::Pipe, start),
                '"' => {
                    loop {
                        match self.bump() {
                            Some('\\') => match self.bump() {
                                None | Some('\n') => {
                                    return Err(self.error(start, "unterminated quoted string"))
                                }
                                Some(_) => {}
                            },
                            None | Some('\n') => {
                                return Err(self.error(start, "unterminated quoted string"))
                            }
                            Some('"') => break,
                            Some(_) => {}
                        }
                    }
                    self.emit(TokenKind::String, start);
                }
                '`' => {
                    match self.rest().find('`') {
                        Some(end) => self.pos += end + 1,
                        None => {
                            self.pos = self.src.len();
                            return Err(self.error(start, "unterminated raw quoted string"));
                        }
                    }
                    self.emit(TokenKind::RawString, start);
                }
                '$' => {
                    self.field_or_variable(start, TokenKind::Variable)?;
                }
                '\'' => {
                    loop {
                        match self.bump() {
                            Some('\\') => match self.bump() {
                                None | Some('\n') => {
                                    return Err(self.error(start, "unterminated character constant"))
                                }
                                Some(_) => {}
                            },
                            None | Some('\n') => {
                                return Err(self.error(start, "unterminated character constant"))
                            }
                            Some('\'') => break,
                            Some(_) => {}
                        }
                    }
                    self.emit(TokenKind::Char, start);
                }
                '.' if !self.peek().is_some_and(|c| c.is_ascii_digit()) => {
                    self.field_or_variable(start, TokenKind::Field)?;
                }
                '.' | '+' | '-' | '0'..='9' => {
                    self.pos = start;
                    self.number(start)?;
                }
                c if is_alphanumeric(c) => {
                    while self.peek().is_some_and(is_alphanumeric) {
                        self.bump();
                    }
                    if !self.at_terminator() {
                        return Err(self.bad_character(start));
                    }
                    let word = self.src.get(start..self.pos).unwrap_or("");
                    let kind = match word {
                        "true" | "false" => TokenKind::Bool,
                        "nil" => TokenKind::Nil,
                        _ => match Keyword::from_word(word) {
                            Some(keyword) => TokenKind::Keyword(keyword),
                            None => TokenKind::Identifier,
                        },
                    };
                    self.emit(kind, start);
                }
                '(' => {
                    paren_depth += 1;
                    self.emit(TokenKind::LeftParen, start);
                }
                ')' => {
                    if paren_depth == 0 {
                        return Err(self.error(start, "unexpected right paren"));
                    }
                    paren_depth -= 1;
                    self.emit(TokenKind::RightParen, start);
                }
                c if c.is_ascii() && !c.is_ascii_control() => self.emit(TokenKind::Punct, start),
                c => {
                    return Err(self.error(
                        start,
                        format!("unrecognized character in action: {}", describe_char(c)),
                    ))
                }
            }
        }
    }

    fn bad_character(&mut self, start: usize) -> TemplateError {
        let bad = self.peek().unwrap_or(' ');
        let at = self.pos;
        self.bump();
        TemplateError::parse(
            Some(start..self.pos),
            format!("bad character {}", describe_char(bad)),
        )
        .suggest(if at > start {
            None
        } else {
            Some("separate words in an action with spaces".to_string())
        })
    }

    fn field_or_variable(&mut self, start: usize, kind: TokenKind) -> Result<(), TemplateError> {
        if self.at_terminator() {
            let kind = if kind == TokenKind::Field {
                TokenKind::Dot
            } else {
                kind
            };
            self.emit(kind, start);
            return Ok(());
        }
        while self.peek().is_some_and(is_alphanumeric) {
            self.bump();
        }
        if !self.at_terminator() {
            return Err(self.bad_character(start));
        }
        self.emit(kind, start);
        Ok(())
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) if is_space(c) => true,
            Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            Some(_) => self.rest().starts_with(RIGHT),
        }
    }

    fn accept(&mut self, set: &str) -> bool {
        match self.peek() {
            Some(c) if set.contains(c) => {
                self.bump();
                true
            }
            _ => false,
        }
    }

    fn accept_run(&mut self, set: &str) {
        while self.accept(set) {}
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alphanumeric) {
            self.bump();
            return false;
        }
        true
    }

    fn number(&mut self, start: usize) -> Result<(), TemplateError> {
        let bad = |this: &Self| {
            this.error(
                start,
                format!(
                    "bad number syntax: {:?}",
                    this.src.get(start..this.pos).unwrap_or("")
                ),
            )
        };
        if !self.scan_number() {
            return Err(bad(self));
        }
        if matches!(self.peek(), Some('+' | '-')) {
            if !self.scan_number() || !self.src.get(..self.pos).is_some_and(|s| s.ends_with('i')) {
                return Err(bad(self));
            }
            self.emit(TokenKind::Complex, start);
        } else {
            self.emit(TokenKind::Number, start);
        }
        Ok(())
    }
}

/// Describes a character as Go's `%#U` does: `U+0040 '@'`.
pub(crate) fn describe_char(c: char) -> String {
    if c.is_control() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("U+{:04X} '{c}'", c as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        lex(src).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn text_and_actions() {
        use TokenKind::*;
        assert_eq!(
            kinds("a {{ .x | f 1 }} b"),
            vec![
                Text, LeftDelim, Space, Field, Space, Pipe, Space, Identifier, Space, Number,
                Space, RightDelim, Text, Eof
            ]
        );
    }

    #[test]
    fn trim_markers() {
        let tokens = lex("a  {{- 3 -}}  b").unwrap();
        assert_eq!(tokens[0].span, 0..1);
        assert_eq!(tokens[3].kind, TokenKind::RightDelim);
        assert_eq!(tokens[4].span, 14..15);
        // `{{-3}}` is the number -3, not a trim marker.
        assert_eq!(kinds("{{-3}}")[1], TokenKind::Number);
    }

    #[test]
    fn comments() {
        assert_eq!(
            kinds("a {{- /* c */ -}} b"),
            vec![
                TokenKind::Text,
                TokenKind::Comment,
                TokenKind::Text,
                TokenKind::Eof
            ]
        );
        assert_eq!(lex("{{/* x").unwrap_err().message, "unclosed comment");
        assert_eq!(
            lex("{{/* x */ }}").unwrap_err().message,
            "comment ends before closing delimiter"
        );
    }

    #[test]
    fn errors() {
        assert_eq!(lex("{{ .x ").unwrap_err().message, "unclosed action");
        assert_eq!(
            lex("{{ \"x }}").unwrap_err().message,
            "unterminated quoted string"
        );
        assert_eq!(lex("{{ (x }}").unwrap_err().message, "unclosed left paren");
        assert_eq!(
            lex("{{ 3k }}").unwrap_err().message,
            "bad number syntax: \"3k\""
        );
        assert_eq!(
            lex("{{ \u{1} }}").unwrap_err().message,
            "unrecognized character in action: U+0001"
        );
    }
}

//! The Go template parser: tokens to the [`Tree`](super::ast::Tree),
//! following `text/template/parse/parse.go`. It checks structure (ends,
//! else chains, break outside range, pipelines); names (functions,
//! variables, templates) are checked when the tree is lowered.

use super::ast::*;
use super::lex::{lex, Keyword, Token, TokenKind};
use crate::diagnostics::TemplateError;

/// Parses a template body with the default nesting bound.
#[cfg(test)]
pub fn parse(src: &str) -> std::result::Result<Tree, TemplateError> {
    parse_nested(src, crate::limits::Limits::default().max_nesting)
}

/// Parses a template body whose blocks and parentheses nest, and whose
/// pipelines chain, at most `max_nesting` deep.
pub fn parse_nested(src: &str, max_nesting: usize) -> std::result::Result<Tree, TemplateError> {
    let tokens = lex(src)?;
    let mut parser = Parser {
        src,
        tokens,
        pos: 0,
        range_depth: 0,
        depth: 0,
        max_nesting,
        defines: Vec::new(),
    };
    let root = parser.parse_top()?;
    Ok(Tree {
        root,
        defines: parser.defines,
    })
}

/// How a list ended.
enum End {
    /// `{{end}}`; the span of the whole action.
    Close(Span),
    /// `{{else}}`, or `{{else if`/`{{else with` with the keyword pending.
    Else(Span, Option<Keyword>),
    /// End of input.
    Eof(Span),
}

struct Parser<'s> {
    src: &'s str,
    tokens: Vec<Token>,
    pos: usize,
    range_depth: usize,
    depth: usize,
    /// How deep blocks and parentheses may nest, and how many commands a
    /// pipeline may have.
    max_nesting: usize,
    defines: Vec<DefineNode>,
}

type Result<T> = std::result::Result<T, TemplateError>;

impl<'s> Parser<'s> {
    fn peek(&self) -> Token {
        self.tokens.get(self.pos).cloned().unwrap_or(Token {
            kind: TokenKind::Eof,
            span: self.src.len()..self.src.len(),
        })
    }

    fn next(&mut self) -> Token {
        let token = self.peek();
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        token
    }

    fn skip_space(&mut self) {
        while self.peek().kind == TokenKind::Space {
            self.pos += 1;
        }
    }

    fn peek_non_space(&mut self) -> Token {
        self.skip_space();
        self.peek()
    }

    fn next_non_space(&mut self) -> Token {
        self.skip_space();
        self.next()
    }

    fn text(&self, span: &Span) -> &'s str {
        self.src.get(span.clone()).unwrap_or("")
    }

    fn describe(&self, token: &Token) -> String {
        match token.kind {
            TokenKind::Eof => "end of template".to_string(),
            TokenKind::RightDelim => "\"}}\"".to_string(),
            TokenKind::Keyword(_) => format!("<{}>", self.text(&token.span)),
            _ => {
                let text = self.text(&token.span);
                if text.chars().count() > 10 {
                    let cut: String = text.chars().take(10).collect();
                    format!("{cut:?}...")
                } else {
                    format!("{text:?}")
                }
            }
        }
    }

    fn unexpected(&self, token: &Token, context: &str) -> TemplateError {
        TemplateError::parse(
            Some(token.span.clone()),
            format!("unexpected {} in {context}", self.describe(token)),
        )
    }

    fn expect(&mut self, kind: TokenKind, context: &str) -> Result<Token> {
        let token = self.next_non_space();
        if token.kind != kind {
            return Err(self.unexpected(&token, context));
        }
        Ok(token)
    }

    fn enter(&mut self, span: &Span) -> Result<()> {
        self.depth += 1;
        if self.depth > self.max_nesting {
            return Err(TemplateError::parse(
                Some(span.clone()),
                format!(
                    "blocks and parentheses nest more than {} deep (the limit max_nesting)",
                    self.max_nesting
                ),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn parse_top(&mut self) -> Result<ListNode> {
        let start = self.peek().span.start;
        let mut nodes = Vec::new();
        loop {
            let token = self.peek();
            match token.kind {
                TokenKind::Eof => break,
                TokenKind::LeftDelim => {
                    let save = self.pos;
                    self.next();
                    if self.peek_non_space().kind == TokenKind::Keyword(Keyword::Define) {
                        self.next();
                        self.parse_define(token.span.start)?;
                        continue;
                    }
                    self.pos = save;
                }
                _ => {}
            }
            match self.text_or_action()? {
                Ok(node) => nodes.push(node),
                Err(End::Close(span)) => {
                    return Err(TemplateError::parse(Some(span), "unexpected {{end}}")
                        .suggest(Some("remove it, or open a block it closes".to_string())))
                }
                Err(End::Else(span, _)) => {
                    return Err(TemplateError::parse(Some(span), "unexpected {{else}}"))
                }
                Err(End::Eof(_)) => break,
            }
        }
        let end = nodes.last().map_or(start, |_| self.src.len());
        Ok(ListNode {
            span: start..end,
            nodes,
        })
    }

    fn parse_define(&mut self, start: usize) -> Result<()> {
        const CONTEXT: &str = "define clause";
        let name_token = self.next_non_space();
        let name = self.template_name(&name_token, CONTEXT)?;
        self.expect(TokenKind::RightDelim, CONTEXT)?;
        let saved_range = std::mem::take(&mut self.range_depth);
        let (list, end) = self.item_list(&(start..name_token.span.end))?;
        self.range_depth = saved_range;
        let end_span = match end {
            End::Close(span) => span,
            End::Else(span, _) => {
                return Err(TemplateError::parse(
                    Some(span),
                    format!("unexpected {{{{else}}}} in {CONTEXT}"),
                ))
            }
            End::Eof(span) => return Err(self.unexpected_eof(span, start, CONTEXT)),
        };
        self.defines.push(DefineNode {
            span: start..end_span.end,
            name,
            name_span: name_token.span,
            list,
        });
        Ok(())
    }

    /// The error of a block that the end of the template (`at`) reaches
    /// open: at its opening action (from `start`), pointing at the end too.
    fn unexpected_eof(&self, at: Span, start: usize, context: &str) -> TemplateError {
        let opener_end = self.src[start..]
            .find("}}")
            .map_or(self.src.len(), |i| start + i + 2)
            .min(self.src.len());
        TemplateError::parse(
            Some(start..opener_end),
            format!("unexpected end of template: this {context} has no {{{{end}}}}"),
        )
        .suggest(Some("add {{end}} where it should end".to_string()))
        .with_label(format!("this {context} is never closed"))
        .with_secondary(at.start..at.start, "the template ends here")
    }

    fn template_name(&mut self, token: &Token, context: &str) -> Result<String> {
        match token.kind {
            TokenKind::String | TokenKind::RawString => {
                unquote(self.text(&token.span), &token.span)
            }
            _ => Err(self.unexpected(token, context)),
        }
    }

    /// Parses nodes up to `{{end}}`, `{{else}}` or the end of the input.
    fn item_list(&mut self, opener: &Span) -> Result<(ListNode, End)> {
        self.enter(opener)?;
        let start = self.peek().span.start;
        let mut nodes = Vec::new();
        let end = loop {
            match self.text_or_action()? {
                Ok(node) => nodes.push(node),
                Err(end) => break end,
            }
        };
        self.leave();
        let last = nodes.last().map_or(start, |_| match &end {
            End::Close(span) | End::Else(span, _) | End::Eof(span) => span.start,
        });
        Ok((
            ListNode {
                span: start..last.max(start),
                nodes,
            },
            end,
        ))
    }

    fn text_or_action(&mut self) -> Result<std::result::Result<Node, End>> {
        let token = self.next();
        match token.kind {
            TokenKind::Text => Ok(Ok(Node::Text(TextNode { span: token.span }))),
            TokenKind::Comment => Ok(Ok(Node::Comment(token.span))),
            TokenKind::LeftDelim => self.action(token.span.start),
            TokenKind::Eof => Ok(Err(End::Eof(token.span))),
            _ => Err(self.unexpected(&token, "input")),
        }
    }

    fn action(&mut self, start: usize) -> Result<std::result::Result<Node, End>> {
        let token = self.next_non_space();
        let TokenKind::Keyword(keyword) = token.kind else {
            self.pos -= 1;
            let pipe = self.pipeline("command", TokenKind::RightDelim)?;
            let end = self
                .tokens
                .get(self.pos - 1)
                .map_or(self.src.len(), |t| t.span.end);
            return Ok(Ok(Node::Action(ActionNode {
                span: start..end,
                pipe,
            })));
        };
        let node = match keyword {
            Keyword::If => Node::If(self.control(start, "if")?),
            Keyword::Range => Node::Range(self.control(start, "range")?),
            Keyword::With => Node::With(self.control(start, "with")?),
            Keyword::Block => Node::Block(self.block(start)?),
            Keyword::Template => Node::Template(self.template(start)?),
            Keyword::Break | Keyword::Continue => {
                let word = if keyword == Keyword::Break {
                    "break"
                } else {
                    "continue"
                };
                let close = self.expect(TokenKind::RightDelim, &format!("{{{{{word}}}}}"))?;
                let span = start..close.span.end;
                if self.range_depth == 0 {
                    return Err(TemplateError::parse(
                        Some(span),
                        format!("{{{{{word}}}}} outside {{{{range}}}}"),
                    ));
                }
                if keyword == Keyword::Break {
                    Node::Break(span)
                } else {
                    Node::Continue(span)
                }
            }
            Keyword::End => {
                let close = self.expect(TokenKind::RightDelim, "end")?;
                return Ok(Err(End::Close(start..close.span.end)));
            }
            Keyword::Else => {
                let peek = self.peek_non_space();
                if let TokenKind::Keyword(k @ (Keyword::If | Keyword::With)) = peek.kind {
                    return Ok(Err(End::Else(start..peek.span.end, Some(k))));
                }
                let close = self.expect(TokenKind::RightDelim, "else")?;
                return Ok(Err(End::Else(start..close.span.end, None)));
            }
            Keyword::Define => {
                return Err(TemplateError::parse(
                    Some(start..token.span.end),
                    "{{define}} is only allowed at the top level of a template",
                ))
            }
        };
        Ok(Ok(node))
    }

    fn control(&mut self, start: usize, context: &'static str) -> Result<BranchNode> {
        let pipe = self.pipeline(context, TokenKind::RightDelim)?;
        let opener_end = self
            .tokens
            .get(self.pos - 1)
            .map_or(self.src.len(), |t| t.span.end);
        let opener = start..opener_end;
        if context == "range" {
            self.range_depth += 1;
        }
        let listed = self.item_list(&opener);
        if context == "range" {
            self.range_depth -= 1;
        }
        let (list, end) = listed?;
        let else_list = match end {
            End::Close(_) => None,
            End::Eof(span) => return Err(self.unexpected_eof(span, start, context)),
            End::Else(span, Some(keyword)) => {
                let allowed = matches!(
                    (context, keyword),
                    ("if", Keyword::If) | ("with", Keyword::With)
                );
                if !allowed {
                    return Err(TemplateError::parse(
                        Some(span),
                        format!(
                            "{{{{else {}}}}} is not allowed in {{{{{context}}}}}",
                            keyword_name(keyword)
                        ),
                    ));
                }
                // `{{else if …}}` is `{{else}}{{if …}}…{{end}}{{end}}` with one end.
                self.skip_space();
                self.next();
                self.enter(&span)?;
                let nested = self.control(span.start, context);
                self.leave();
                let nested = nested?;
                let node_span = nested.span.clone();
                let node = if keyword == Keyword::If {
                    Node::If(nested)
                } else {
                    Node::With(nested)
                };
                Some(ListNode {
                    span: node_span,
                    nodes: vec![node],
                })
            }
            End::Else(else_span, None) => {
                let (list, end) = self.item_list(&else_span)?;
                match end {
                    End::Close(_) => {}
                    End::Eof(span) => return Err(self.unexpected_eof(span, start, context)),
                    End::Else(span, _) => {
                        return Err(TemplateError::parse(
                            Some(span),
                            format!(
                            "expected {{{{end}}}}; found a second {{{{else}}}} in this {context}"
                        ),
                        ))
                    }
                }
                Some(list)
            }
        };
        Ok(BranchNode {
            span: opener,
            pipe,
            list,
            else_list,
        })
    }

    fn template(&mut self, start: usize) -> Result<TemplateNode> {
        const CONTEXT: &str = "template clause";
        let name_token = self.next_non_space();
        let name = self.template_name(&name_token, CONTEXT)?;
        let pipe = if self.peek_non_space().kind == TokenKind::RightDelim {
            self.next();
            None
        } else {
            Some(self.pipeline(CONTEXT, TokenKind::RightDelim)?)
        };
        let end = self
            .tokens
            .get(self.pos - 1)
            .map_or(self.src.len(), |t| t.span.end);
        Ok(TemplateNode {
            span: start..end,
            name,
            name_span: name_token.span,
            pipe,
        })
    }

    fn block(&mut self, start: usize) -> Result<TemplateNode> {
        const CONTEXT: &str = "block clause";
        let name_token = self.next_non_space();
        let name = self.template_name(&name_token, CONTEXT)?;
        let pipe = self.pipeline(CONTEXT, TokenKind::RightDelim)?;
        let opener_end = self
            .tokens
            .get(self.pos - 1)
            .map_or(self.src.len(), |t| t.span.end);
        let saved_range = std::mem::take(&mut self.range_depth);
        let listed = self.item_list(&(start..opener_end));
        self.range_depth = saved_range;
        let (list, end) = listed?;
        let end_span = match end {
            End::Close(span) => span,
            End::Else(span, _) => {
                return Err(TemplateError::parse(
                    Some(span),
                    format!("unexpected {{{{else}}}} in {CONTEXT}"),
                ))
            }
            End::Eof(span) => return Err(self.unexpected_eof(span, start, CONTEXT)),
        };
        self.defines.push(DefineNode {
            span: start..end_span.end,
            name: name.clone(),
            name_span: name_token.span.clone(),
            list,
        });
        Ok(TemplateNode {
            span: start..opener_end,
            name,
            name_span: name_token.span,
            pipe: Some(pipe),
        })
    }

    fn pipeline(&mut self, context: &str, end: TokenKind) -> Result<PipeNode> {
        let first = self.peek_non_space();
        let start = first.span.start;
        let mut decl = Vec::new();
        let mut is_assign = false;
        loop {
            let v = self.peek_non_space();
            if v.kind != TokenKind::Variable {
                break;
            }
            let save = self.pos;
            self.next();
            let next = self.peek_non_space();
            let variable = VariableNode {
                span: v.span.clone(),
                name: self.text(&v.span).to_string(),
                fields: Vec::new(),
            };
            match next.kind {
                TokenKind::Assign | TokenKind::Declare => {
                    is_assign = next.kind == TokenKind::Assign;
                    self.next();
                    decl.push(variable);
                    break;
                }
                TokenKind::Punct if self.text(&next.span) == "," => {
                    self.next();
                    decl.push(variable);
                    if context == "range" && decl.len() < 2 {
                        match self.peek_non_space().kind {
                            TokenKind::Variable | TokenKind::RightDelim | TokenKind::RightParen => {
                                continue
                            }
                            _ => {
                                return Err(TemplateError::parse(
                                    Some(next.span),
                                    "range can only initialize variables",
                                ))
                            }
                        }
                    }
                    return Err(TemplateError::parse(
                        Some(next.span),
                        format!("too many declarations in {context}"),
                    ));
                }
                _ => {
                    self.pos = save;
                    break;
                }
            }
        }
        let mut cmds = Vec::new();
        loop {
            let token = self.next_non_space();
            match token.kind {
                kind if kind == end => {
                    let end_pos = cmds
                        .last()
                        .map(|c: &CommandNode| c.span.end)
                        .or_else(|| decl.last().map(|d: &VariableNode| d.span.end))
                        .unwrap_or(start);
                    if cmds.is_empty() {
                        return Err(TemplateError::parse(
                            Some(token.span),
                            format!("missing value for {context}"),
                        ));
                    }
                    for (i, cmd) in cmds.iter().enumerate().skip(1) {
                        if let Some(
                            arg @ (Arg::Bool(..)
                            | Arg::Dot(_)
                            | Arg::Nil(_)
                            | Arg::Number(_)
                            | Arg::String(_)),
                        ) = cmd.args.first()
                        {
                            return Err(TemplateError::parse(
                                Some(arg.span()),
                                format!("non executable command in pipeline stage {}", i + 1),
                            ));
                        }
                    }
                    return Ok(PipeNode {
                        span: start..end_pos,
                        is_assign,
                        decl,
                        cmds,
                    });
                }
                TokenKind::Bool
                | TokenKind::Char
                | TokenKind::Complex
                | TokenKind::Dot
                | TokenKind::Field
                | TokenKind::Identifier
                | TokenKind::Number
                | TokenKind::Nil
                | TokenKind::RawString
                | TokenKind::String
                | TokenKind::Variable
                | TokenKind::LeftParen => {
                    self.pos -= 1;
                    let command = self.command()?;
                    // Each stage takes the last one's value: stages nest
                    // when the pipeline runs, so they count as nesting.
                    if cmds.len() >= self.max_nesting {
                        return Err(TemplateError::parse(
                            Some(command.span.clone()),
                            format!(
                                "a pipeline has more than {} commands (the limit max_nesting)",
                                self.max_nesting
                            ),
                        )
                        .suggest(Some(
                            "split it: keep a stage's value in a variable ({{ $x := … }})"
                                .to_string(),
                        )));
                    }
                    cmds.push(command);
                }
                _ => return Err(self.unexpected(&token, context)),
            }
        }
    }

    fn command(&mut self) -> Result<CommandNode> {
        let start = self.peek_non_space().span.start;
        let mut args = Vec::new();
        let mut end = start;
        loop {
            self.skip_space();
            if let Some(operand) = self.operand()? {
                end = operand.span().end;
                args.push(operand);
            }
            let token = self.next();
            match token.kind {
                TokenKind::Space => continue,
                TokenKind::RightDelim | TokenKind::RightParen => self.pos -= 1,
                TokenKind::Pipe => {}
                _ => return Err(self.unexpected(&token, "operand")),
            }
            break;
        }
        if args.is_empty() {
            return Err(TemplateError::parse(Some(start..start), "empty command"));
        }
        Ok(CommandNode {
            span: start..end,
            args,
        })
    }

    fn fields(&mut self) -> Vec<Ident> {
        let mut fields = Vec::new();
        while self.peek().kind == TokenKind::Field {
            let token = self.next();
            fields.push(Ident {
                name: self.text(&token.span).get(1..).unwrap_or("").to_string(),
                span: token.span,
            });
        }
        fields
    }

    fn operand(&mut self) -> Result<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().kind != TokenKind::Field {
            return Ok(Some(node));
        }
        let fields = self.fields();
        let end = fields.last().map_or(node.span().end, |f| f.span.end);
        Ok(Some(match node {
            Arg::Field(mut field) => {
                field.span.end = end;
                field.idents.extend(fields);
                Arg::Field(field)
            }
            Arg::Variable(mut variable) => {
                variable.span.end = end;
                variable.fields.extend(fields);
                Arg::Variable(variable)
            }
            Arg::Bool(..) | Arg::String(_) | Arg::Number(_) | Arg::Nil(_) | Arg::Dot(_) => {
                let span = node.span();
                return Err(TemplateError::parse(
                    Some(span.start..end),
                    format!("unexpected . after term {:?}", self.text(&span)),
                ));
            }
            other => Arg::Chain(ChainNode {
                span: other.span().start..end,
                node: Box::new(other),
                fields,
            }),
        }))
    }

    fn term(&mut self) -> Result<Option<Arg>> {
        let token = self.next_non_space();
        let span = token.span.clone();
        let text = self.text(&span);
        Ok(Some(match token.kind {
            TokenKind::Identifier => Arg::Identifier(IdentNode {
                span,
                name: text.to_string(),
            }),
            TokenKind::Dot => Arg::Dot(span),
            TokenKind::Nil => Arg::Nil(span),
            TokenKind::Variable => Arg::Variable(VariableNode {
                span,
                name: text.to_string(),
                fields: Vec::new(),
            }),
            TokenKind::Field => Arg::Field(FieldNode {
                span: span.clone(),
                idents: vec![Ident {
                    name: text.get(1..).unwrap_or("").to_string(),
                    span,
                }],
            }),
            TokenKind::Bool => Arg::Bool(text == "true", span),
            TokenKind::Char => {
                let value = unquote_char(text, &span)?;
                Arg::Number(NumberNode {
                    span,
                    value: Number::Int(i64::from(u32::from(value))),
                })
            }
            TokenKind::Complex => {
                return Err(TemplateError::parse(
                    Some(span),
                    "complex numbers are not supported",
                ))
            }
            TokenKind::Number => Arg::Number(NumberNode {
                value: parse_number(text)
                    .map_err(|m| TemplateError::parse(Some(span.clone()), m))?,
                span,
            }),
            TokenKind::LeftParen => {
                self.enter(&span)?;
                let pipe = self.pipeline("parenthesized pipeline", TokenKind::RightParen);
                self.leave();
                let mut pipe = pipe?;
                let close = self
                    .tokens
                    .get(self.pos - 1)
                    .map_or(self.src.len(), |t| t.span.end);
                pipe.span = span.start..close;
                Arg::Pipe(Box::new(pipe))
            }
            TokenKind::String | TokenKind::RawString => Arg::String(StringNode {
                text: unquote(text, &span)?,
                span,
            }),
            _ => {
                self.pos -= 1;
                return Ok(None);
            }
        }))
    }
}

fn keyword_name(keyword: Keyword) -> &'static str {
    match keyword {
        Keyword::If => "if",
        Keyword::With => "with",
        _ => "",
    }
}

/// Unquotes a Go string literal (interpreted or raw).
pub fn unquote(text: &str, span: &Span) -> Result<String> {
    let error = |message: &str| TemplateError::parse(Some(span.clone()), message.to_string());
    if let Some(raw) = text.strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
        return Ok(raw.replace('\r', ""));
    }
    let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
        return Err(error("malformed string literal"));
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut rest = inner;
    while !rest.is_empty() {
        let (piece, tail) = unescape(rest, b'"').map_err(|m| error(&m))?;
        match piece {
            Piece::Char(c) => {
                let mut buf = [0; 4];
                bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            Piece::Byte(b) => bytes.push(b),
        }
        rest = tail;
    }
    String::from_utf8(bytes).map_err(|_| {
        error("the string literal is not valid UTF-8 (a \\x or octal escape makes a lone byte)")
    })
}

fn unquote_char(text: &str, span: &Span) -> Result<char> {
    let error = || {
        TemplateError::parse(
            Some(span.clone()),
            format!("malformed character constant: {text}"),
        )
    };
    let inner = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .ok_or_else(error)?;
    let (piece, tail) = unescape(inner, b'\'').map_err(|_| error())?;
    if !tail.is_empty() {
        return Err(error());
    }
    match piece {
        Piece::Char(c) => Ok(c),
        Piece::Byte(b) => Ok(char::from(b)),
    }
}

enum Piece {
    Char(char),
    Byte(u8),
}

/// One character or escape of a quoted literal, as Go's `strconv.UnquoteChar`.
fn unescape(s: &str, quote: u8) -> std::result::Result<(Piece, &str), String> {
    let mut chars = s.chars();
    let c = chars.next().ok_or("invalid syntax")?;
    if c != '\\' {
        if c as u32 == u32::from(quote) {
            return Err("invalid syntax".into());
        }
        return Ok((Piece::Char(c), chars.as_str()));
    }
    let e = chars.next().ok_or("invalid syntax")?;
    let rest = chars.as_str();
    let simple = |c: char| Ok((Piece::Char(c), rest));
    match e {
        'a' => simple('\u{7}'),
        'b' => simple('\u{8}'),
        'f' => simple('\u{c}'),
        'n' => simple('\n'),
        'r' => simple('\r'),
        't' => simple('\t'),
        'v' => simple('\u{b}'),
        '\\' => simple('\\'),
        '\'' | '"' if e as u32 == u32::from(quote) => simple(e),
        'x' | 'u' | 'U' => {
            let n = match e {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            let digits = rest.get(..n).ok_or("invalid syntax")?;
            let value = u32::from_str_radix(digits, 16).map_err(|_| "invalid syntax")?;
            if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err("invalid syntax".into());
            }
            let rest = rest.get(n..).unwrap_or("");
            if e == 'x' {
                return Ok((Piece::Byte(value as u8), rest));
            }
            let c = char::from_u32(value).ok_or("invalid Unicode code point")?;
            Ok((Piece::Char(c), rest))
        }
        '0'..='7' => {
            let digits = s.get(1..4).ok_or("invalid syntax")?;
            if !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return Err("invalid syntax".into());
            }
            let value = u32::from_str_radix(digits, 8).map_err(|_| "invalid syntax")?;
            if value > 255 {
                return Err("invalid syntax".into());
            }
            Ok((Piece::Byte(value as u8), s.get(4..).unwrap_or("")))
        }
        _ => Err("invalid syntax".into()),
    }
}

/// Parses a number literal as `text/template` does: integers (decimal,
/// `0x`, `0o`, `0b`, leading-zero octal, underscores) are ints; literals
/// with a point or exponent are floats.
pub fn parse_number(text: &str) -> std::result::Result<Number, String> {
    let illegal = || format!("illegal number syntax: {text:?}");
    if text.ends_with('i') && !text.starts_with("0x") && !text.starts_with("0X") {
        return Err("complex numbers are not supported".to_string());
    }
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else {
        (10, lower.as_str())
    };
    let is_float = digits.contains('.')
        || (radix == 10 && digits.contains('e'))
        || (radix == 16 && digits.contains('p'));
    if !underscores_ok(body, radix != 10) {
        return Err(illegal());
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if clean.is_empty() || clean == "." {
        return Err(illegal());
    }
    if is_float {
        let value = match radix {
            10 => clean.parse::<f64>().map_err(|_| illegal())?,
            16 => parse_hex_float(&clean).ok_or_else(illegal)?,
            _ => return Err(illegal()),
        };
        return Ok(Number::Float(if negative { -value } else { value }));
    }
    let (radix, clean) = if radix == 10 && clean.len() > 1 && clean.starts_with('0') {
        (8, &clean[1..])
    } else {
        (radix, clean.as_str())
    };
    let magnitude = u64::from_str_radix(clean, radix).map_err(|e| {
        if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) {
            format!("integer overflow: {text:?}")
        } else {
            illegal()
        }
    })?;
    let value = if negative {
        if magnitude > i64::MAX as u64 + 1 {
            return Err(format!("integer overflow: {text:?}"));
        }
        (magnitude as i64).wrapping_neg()
    } else {
        i64::try_from(magnitude).map_err(|_| format!("integer overflow: {text:?}"))?
    };
    Ok(Number::Int(value))
}

fn parse_hex_float(text: &str) -> Option<f64> {
    let (mantissa, exponent) = match text.split_once('p') {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut value = 0f64;
    for c in int.chars() {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        value += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(value * 2f64.powi(exponent))
}

/// Go's rule: `_` may only separate digits (or follow a base prefix).
fn underscores_ok(text: &str, prefixed: bool) -> bool {
    if !text.contains('_') {
        return true;
    }
    let bytes = text.as_bytes();
    let mut prev = b'^';
    let mut i = 0;
    if prefixed && bytes.len() >= 2 {
        prev = b'0';
        i = 2;
    }
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'_' {
            if !(prev.is_ascii_hexdigit() || prev == b'0') || prev == b'_' {
                return false;
            }
        } else if prev == b'_' && !b.is_ascii_hexdigit() {
            return false;
        }
        prev = b;
        i += 1;
    }
    prev != b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(src: &str) -> String {
        parse(src).unwrap_err().message
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("0x1F"), Ok(Number::Int(31)));
        assert_eq!(parse_number("0o17"), Ok(Number::Int(15)));
        assert_eq!(parse_number("017"), Ok(Number::Int(15)));
        assert_eq!(parse_number("0b101"), Ok(Number::Int(5)));
        assert_eq!(parse_number("1_000"), Ok(Number::Int(1000)));
        assert_eq!(parse_number("-7"), Ok(Number::Int(-7)));
        assert_eq!(parse_number("1e3"), Ok(Number::Float(1000.0)));
        assert_eq!(parse_number("0x1p4"), Ok(Number::Float(16.0)));
        assert_eq!(
            parse_number("-9223372036854775808"),
            Ok(Number::Int(i64::MIN))
        );
        assert!(parse_number("9223372036854775808").is_err());
        assert!(parse_number("1__0").is_err());
    }

    #[test]
    fn strings() {
        assert_eq!(unquote(r#""a\tb\u00e9\x41""#, &(0..0)).unwrap(), "a\tbéA");
        assert_eq!(unquote("`a\\n`", &(0..0)).unwrap(), "a\\n");
        assert!(unquote(r#""\q""#, &(0..0)).is_err());
        assert_eq!(unquote_char(r"'\n'", &(0..0)).unwrap(), '\n');
    }

    #[test]
    fn structure() {
        let tree = parse("{{if .a}}x{{else if .b}}y{{else}}z{{end}}").unwrap();
        let Node::If(branch) = &tree.root.nodes[0] else {
            panic!()
        };
        assert!(matches!(
            branch.else_list.as_ref().unwrap().nodes[0],
            Node::If(_)
        ));
        let tree = parse("{{define \"a\"}}A{{end}}{{block \"b\" .}}B{{end}}").unwrap();
        assert_eq!(tree.defines.len(), 2);
    }

    #[test]
    fn structure_errors() {
        assert_eq!(err("{{end}}"), "unexpected {{end}}");
        assert_eq!(err("{{else}}"), "unexpected {{else}}");
        assert_eq!(err("{{break}}"), "{{break}} outside {{range}}");
        assert_eq!(err("{{if}}{{end}}"), "missing value for if");
        assert_eq!(
            err("{{.x | 3}}"),
            "non executable command in pipeline stage 2"
        );
        assert_eq!(
            err("{{if .a}}"),
            "unexpected end of template: this if has no {{end}}"
        );
        assert_eq!(
            err("{{range $i, $v, $w := .}}{{end}}"),
            "too many declarations in range"
        );
        assert_eq!(err("{{\"a\".x}}"), "unexpected . after term \"\\\"a\\\"\"");
        let deep = "(".repeat(200) + "1" + &")".repeat(200);
        assert!(err(&format!("{{{{{deep}}}}}")).contains("nest"));
    }
}

//! Builds the [`Tree`] from the lexer's items: blocks with their `else`
//! branches and `{{else if}}` chains, helper calls with positional and hash
//! arguments, subexpressions, paths, literals, partials and inline partials.

use std::ops::Range;

use super::ast::*;
use super::lex::{self, Item, Tag, TagKind, Tok};
use crate::diagnostics::TemplateError;

type Result<T> = std::result::Result<T, TemplateError>;

/// Parses a Handlebars body with the default nesting bound.
#[cfg(test)]
pub fn parse(body: &str) -> Result<Tree> {
    parse_nested(body, crate::limits::Limits::default().max_nesting)
}

/// Parses a Handlebars body whose blocks and subexpressions nest at most
/// `max_nesting` deep.
pub fn parse_nested(body: &str, max_nesting: usize) -> Result<Tree> {
    let items = lex::lex(body)?;
    let mut parser = Parser {
        body,
        items,
        pos: 0,
        depth: 0,
        max_nesting,
    };
    let (nodes, stop) = parser.list()?;
    match stop {
        Stop::End => Ok(Tree { nodes }),
        Stop::Else(tag) => Err(TemplateError::parse(
            Some(tag.span.clone()),
            format!("{} is outside any block", parser.text(&tag.span)),
        )),
        Stop::Close(tag) => Err(TemplateError::parse(
            Some(tag.span.clone()),
            format!(
                "{} closes a block that was never opened",
                parser.text(&tag.span)
            ),
        )),
    }
}

enum Stop {
    End,
    Else(Tag),
    Close(Tag),
}

struct Parser<'s> {
    body: &'s str,
    items: Vec<Item>,
    pos: usize,
    depth: usize,
    /// How deeply blocks and subexpressions may nest.
    max_nesting: usize,
}

/// A cursor over one tag's tokens.
struct Tokens<'t> {
    tokens: &'t [(Tok, Range<usize>)],
    pos: usize,
    /// Where the tag ends (for errors at the end).
    end: Range<usize>,
}

impl Tokens<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos).map(|(t, _)| t)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.tokens.get(self.pos + n).map(|(t, _)| t)
    }

    fn span(&self) -> Range<usize> {
        self.tokens
            .get(self.pos)
            .map_or(self.end.clone(), |(_, s)| s.clone())
    }

    fn next(&mut self) -> Option<(Tok, Range<usize>)> {
        let item = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        item
    }
}

impl<'s> Parser<'s> {
    fn text(&self, span: &Range<usize>) -> &'s str {
        self.body.get(span.clone()).unwrap_or("")
    }

    fn enter(&mut self, span: &Range<usize>) -> Result<()> {
        self.depth += 1;
        if self.depth > self.max_nesting {
            return Err(TemplateError::parse(
                Some(span.clone()),
                format!(
                    "blocks nest more than {} deep (the limit max_nesting)",
                    self.max_nesting
                ),
            ));
        }
        Ok(())
    }

    fn list(&mut self) -> Result<(Vec<Node>, Stop)> {
        let mut nodes = Vec::new();
        while let Some(item) = self.items.get(self.pos).cloned() {
            self.pos += 1;
            let tag = match item {
                Item::Text { text, span } => {
                    if !text.is_empty() {
                        nodes.push(Node::Text(Text { text, span }));
                    }
                    continue;
                }
                Item::Tag(tag) => tag,
            };
            match tag.kind {
                TagKind::Comment => nodes.push(Node::Comment(tag.span)),
                TagKind::Mustache if is_else(&tag) => return Ok((nodes, Stop::Else(tag))),
                TagKind::OpenInverse if tag.tokens.is_empty() => {
                    return Ok((nodes, Stop::Else(tag)))
                }
                TagKind::Close => return Ok((nodes, Stop::Close(tag))),
                TagKind::Mustache | TagKind::Raw => {
                    let mut tokens = self.cursor(&tag, 0);
                    let (call, params) = self.call(&mut tokens, None)?;
                    self.no_params(&params)?;
                    nodes.push(Node::Mustache(Mustache {
                        call,
                        raw: tag.kind == TagKind::Raw,
                        span: tag.span,
                    }));
                }
                TagKind::Open | TagKind::OpenInverse => {
                    self.enter(&tag.span)?;
                    let block = self.block(&tag, 0, None)?;
                    self.depth -= 1;
                    nodes.push(Node::Block(Box::new(block)));
                }
                TagKind::Partial => nodes.push(Node::Partial(self.partial(&tag)?)),
                TagKind::PartialBlock => {
                    self.enter(&tag.span)?;
                    let partial = self.partial_block(&tag)?;
                    self.depth -= 1;
                    nodes.push(Node::Partial(partial));
                }
                TagKind::Inline => {
                    self.enter(&tag.span)?;
                    let inline = self.inline(&tag)?;
                    self.depth -= 1;
                    nodes.push(Node::Inline(Box::new(inline)));
                }
            }
        }
        Ok((nodes, Stop::End))
    }

    fn cursor<'t>(&self, tag: &'t Tag, skip: usize) -> Tokens<'t> {
        let end = tag.span.end.saturating_sub(2)..tag.span.end;
        Tokens {
            tokens: &tag.tokens,
            pos: skip,
            end,
        }
    }

    fn no_params(&self, params: &[Ident]) -> Result<()> {
        match params.first() {
            Some(first) => Err(TemplateError::parse(
                Some(first.span.clone()),
                "block parameters (as |…|) are only allowed on a block's opening tag",
            )),
            None => Ok(()),
        }
    }

    /// A block from its opening tag (or from the `{{else if …}}` tag of a
    /// chain, whose tokens start after `else`: `skip` 1). `outer` is the
    /// opening tag of the chain, which the closing tag must match.
    fn block(&mut self, tag: &Tag, skip: usize, outer: Option<&Block>) -> Result<Block> {
        let mut tokens = self.cursor(tag, skip);
        if tokens.peek().is_none() {
            return Err(
                TemplateError::parse(Some(tag.span.clone()), "this block has no name").suggest(
                    Some("write {{#if …}}, {{#each …}}, {{#with …}}…".to_string()),
                ),
            );
        }
        let (call, params) = self.call(&mut tokens, None)?;
        let mut block = Block {
            inverted: tag.kind == TagKind::OpenInverse,
            call,
            params,
            body: Vec::new(),
            inverse: None,
            open: tag.span.clone(),
            close: tag.span.clone(),
        };
        let (body, stop) = self.list()?;
        block.body = body;
        let opener = outer.unwrap_or(&block);
        let close = match stop {
            Stop::End => return Err(self.never_closed(opener)),
            Stop::Close(close) => close,
            Stop::Else(else_tag) => {
                if else_tag.tokens.len() > 1 {
                    self.enter(&else_tag.span)?;
                    let chained = self.block(&else_tag, 1, Some(opener))?;
                    self.depth -= 1;
                    block.close = chained.close.clone();
                    block.inverse = Some(vec![Node::Block(Box::new(chained))]);
                    return Ok(block);
                }
                let (inverse, stop) = self.list()?;
                let close = match stop {
                    Stop::End => return Err(self.never_closed(opener)),
                    Stop::Else(again) => {
                        return Err(TemplateError::parse(
                            Some(again.span.clone()),
                            format!(
                                "{} appears twice in {}",
                                self.text(&again.span),
                                self.text(&opener.open)
                            ),
                        ))
                    }
                    Stop::Close(close) => close,
                };
                block.inverse = Some(inverse);
                close
            }
        };
        let opener = outer.unwrap_or(&block);
        self.check_close(opener, &close)?;
        block.close = close.span.clone();
        Ok(block)
    }

    fn never_closed(&self, opener: &Block) -> TemplateError {
        let name = self.text(&opener.call.head.span());
        TemplateError::parse(
            Some(opener.open.clone()),
            format!("{} opened here is never closed", self.text(&opener.open)),
        )
        .suggest(Some(format!("close it with {{{{/{name}}}}}")))
        .with_label(format!("this {} is never closed", block_word(name)))
        .with_secondary(self.end_of_template(), "the template ends here")
    }

    /// The end of the template, as a span (for a block it reaches open).
    fn end_of_template(&self) -> std::ops::Range<usize> {
        self.body.len()..self.body.len()
    }

    fn check_close(&self, opener: &Block, close: &Tag) -> Result<()> {
        let name = self.text(&opener.call.head.span());
        let closing = match (close.tokens.first(), close.tokens.last()) {
            (Some((_, first)), Some((_, last))) => self.text(&(first.start..last.end)),
            _ => "",
        };
        // `{{#'foo'}}` closes with `{{/"foo"}}`: a string is its value.
        let same_string = match (&opener.call.head, close.tokens.as_slice()) {
            (Expr::String(open, _), [(Tok::Str(closing), _)]) => open == closing,
            _ => false,
        };
        if name != closing && !same_string {
            return Err(TemplateError::parse(
                Some(close.span.clone()),
                format!(
                    "{} does not match {}",
                    self.text(&close.span),
                    self.text(&opener.open)
                ),
            )
            .suggest(Some(format!("close it with {{{{/{name}}}}}")))
            .with_label(format!("this does not close the {}", block_word(name)))
            .with_secondary(
                opener.open.clone(),
                format!("the {} opened here", block_word(name)),
            ));
        }
        Ok(())
    }

    fn partial(&mut self, tag: &Tag) -> Result<Partial> {
        let mut tokens = self.cursor(tag, 0);
        let mut dynamic = None;
        let (name, name_span) = match tokens.peek() {
            Some(Tok::Str(name)) => {
                let name = name.clone();
                let span = tokens.span();
                tokens.next();
                (name, span)
            }
            Some(Tok::Id(first)) => {
                let first = first.clone();
                let start = tokens.span().start;
                let mut end = tokens.span().end;
                tokens.next();
                let mut segments = 1;
                while tokens.peek() == Some(&Tok::Sep) {
                    tokens.next();
                    end = tokens.span().end;
                    tokens.next();
                    segments += 1;
                }
                // `{{> [odd name]}}` names the partial `odd name`.
                let name = if segments == 1 {
                    first
                } else {
                    self.text(&(start..end)).to_string()
                };
                (name, start..end)
            }
            Some(Tok::Num(_)) => {
                // `{{> 404}}`: the partial named "404".
                let span = tokens.span();
                tokens.next();
                (self.text(&span).to_string(), span)
            }
            Some(Tok::Open) => {
                let expr = self.expr(&mut tokens)?;
                let span = expr.span();
                dynamic = Some(expr);
                (self.text(&span).to_string(), span)
            }
            Some(Tok::At) if matches!(tokens.peek_at(1), Some(Tok::Id(name)) if name == "partial-block") =>
            {
                let start = tokens.span().start;
                tokens.next();
                let end = tokens.span().end;
                tokens.next();
                ("@partial-block".to_string(), start..end)
            }
            _ => {
                return Err(TemplateError::parse(
                    Some(tag.span.clone()),
                    "this partial has no name",
                ))
            }
        };
        let mut context = None;
        let mut hash = Vec::new();
        while tokens.peek().is_some() {
            if matches!(tokens.peek(), Some(Tok::Id(_))) && tokens.peek_at(1) == Some(&Tok::Equals)
            {
                hash.push(self.hash_pair(&mut tokens)?);
            } else if context.is_none() && hash.is_empty() {
                context = Some(self.expr(&mut tokens)?);
            } else {
                return Err(TemplateError::parse(
                    Some(tokens.span()),
                    "a partial takes one context and key=value pairs",
                ));
            }
        }
        Ok(Partial {
            name,
            name_span,
            context,
            hash,
            span: tag.span.clone(),
            block: None,
            dynamic,
            indent: tag.indent.clone(),
        })
    }

    /// `{{#> name context key=value}}…{{/name}}`, or a dynamic partial
    /// block `{{#> (expr)}}…{{/undefined}}` (handlebars.js closes it so: its
    /// name has no text to repeat).
    fn partial_block(&mut self, tag: &Tag) -> Result<Partial> {
        let mut partial = self.partial(tag)?;
        let opening = self.text(&tag.span).to_string();
        let how = match partial.dynamic {
            Some(_) => "close it with {{/undefined}} (handlebars.js's closing tag for a dynamic partial block)".to_string(),
            None => format!("close it with {{{{/{}}}}}", partial.name),
        };
        let (body, stop) = self.list()?;
        let close = match stop {
            Stop::Close(close) => close,
            Stop::End => {
                return Err(TemplateError::parse(
                    Some(tag.span.clone()),
                    format!("{opening} opened here is never closed"),
                )
                .suggest(Some(how))
                .with_label("this partial block is never closed")
                .with_secondary(self.end_of_template(), "the template ends here"))
            }
            Stop::Else(else_tag) => {
                return Err(TemplateError::parse(
                    Some(else_tag.span.clone()),
                    format!("a partial block ({opening}) has no {{{{else}}}}"),
                ))
            }
        };
        let closing = match (close.tokens.first(), close.tokens.last()) {
            (Some((_, first)), Some((_, last))) => self.text(&(first.start..last.end)),
            _ => "",
        };
        let matches = match partial.dynamic {
            Some(_) => closing == "undefined",
            None => closing == partial.name || closing == self.text(&partial.name_span),
        };
        if !matches {
            return Err(TemplateError::parse(
                Some(close.span.clone()),
                format!("{} does not match {opening}", self.text(&close.span)),
            )
            .suggest(Some(how))
            .with_label("this does not close the partial block")
            .with_secondary(tag.span.clone(), "the partial block opened here"));
        }
        partial.block = Some(body);
        Ok(partial)
    }

    fn inline(&mut self, tag: &Tag) -> Result<Inline> {
        let mut tokens = self.cursor(tag, 0);
        match tokens.next() {
            Some((Tok::Id(name), _)) if name == "inline" => {}
            _ => {
                return Err(TemplateError::parse(
                    Some(tag.span.clone()),
                    "the only decorator supported is {{#*inline \"name\"}}",
                ))
            }
        }
        let (name, name_span) = match tokens.next() {
            Some((Tok::Str(name), span)) => (name, span),
            _ => {
                return Err(TemplateError::parse(
                    Some(tag.span.clone()),
                    "an inline partial needs a name in quotes: {{#*inline \"name\"}}",
                ))
            }
        };
        let (body, stop) = self.list()?;
        match stop {
            Stop::Close(close) if matches!(close.tokens.as_slice(), [(Tok::Id(n), _)] if n == "inline") => {
                Ok(Inline {
                    name,
                    name_span,
                    body,
                    open: tag.span.clone(),
                })
            }
            Stop::Close(close) => Err(TemplateError::parse(
                Some(close.span.clone()),
                format!(
                    "{} does not match {}",
                    self.text(&close.span),
                    self.text(&tag.span)
                ),
            )
            .suggest(Some("close it with {{/inline}}".to_string()))
            .with_label("this does not close the inline partial")
            .with_secondary(tag.span.clone(), "the inline partial opened here")),
            Stop::Else(else_tag) => Err(TemplateError::parse(
                Some(else_tag.span.clone()),
                "an inline partial has no {{else}}",
            )),
            Stop::End => Err(TemplateError::parse(
                Some(tag.span.clone()),
                format!("{} opened here is never closed", self.text(&tag.span)),
            )
            .suggest(Some("close it with {{/inline}}".to_string()))
            .with_label("this inline partial is never closed")
            .with_secondary(self.end_of_template(), "the template ends here")),
        }
    }

    /// `head params… key=value… [as |a b|]`, up to `stop` (`)` in a
    /// subexpression) or the end of the tag.
    fn call(&mut self, tokens: &mut Tokens<'_>, stop: Option<&Tok>) -> Result<(Call, Vec<Ident>)> {
        let start = tokens.span().start;
        let head = self.expr(tokens)?;
        let mut params = Vec::new();
        let mut hash: Vec<HashPair> = Vec::new();
        let mut block_params = Vec::new();
        let mut end = head.span().end;
        loop {
            match tokens.peek() {
                None => break,
                Some(t) if Some(t) == stop => break,
                Some(Tok::OpenParams) => {
                    tokens.next();
                    loop {
                        match tokens.next() {
                            Some((Tok::Id(name), span)) => block_params.push(Ident { name, span }),
                            Some((Tok::Pipe, _)) => break,
                            _ => {
                                return Err(TemplateError::parse(
                                    Some(tokens.end.clone()),
                                    "block parameters need names and a closing |: as |item index|",
                                ))
                            }
                        }
                    }
                    if let Some(rest) = tokens.peek().filter(|t| Some(*t) != stop) {
                        let _ = rest;
                        return Err(TemplateError::parse(
                            Some(tokens.span()),
                            "nothing may follow the block parameters",
                        ));
                    }
                }
                Some(Tok::Id(_)) if tokens.peek_at(1) == Some(&Tok::Equals) => {
                    let pair = self.hash_pair(tokens)?;
                    end = pair.span.end;
                    hash.push(pair);
                }
                Some(_) => {
                    if !hash.is_empty() {
                        return Err(TemplateError::parse(
                            Some(tokens.span()),
                            "positional arguments must come before key=value arguments",
                        ));
                    }
                    let param = self.expr(tokens)?;
                    end = param.span().end;
                    params.push(param);
                }
            }
        }
        Ok((
            Call {
                head,
                params,
                hash,
                span: start..end,
            },
            block_params,
        ))
    }

    fn hash_pair(&mut self, tokens: &mut Tokens<'_>) -> Result<HashPair> {
        let Some((Tok::Id(key), key_span)) = tokens.next() else {
            return Err(TemplateError::parse(Some(tokens.span()), "expected a key"));
        };
        tokens.next(); // `=`
        if tokens.peek().is_none() {
            return Err(TemplateError::parse(
                Some(key_span.start..tokens.end.start),
                format!("{key}= has no value"),
            ));
        }
        let value = self.expr(tokens)?;
        let span = key_span.start..value.span().end;
        Ok(HashPair { key, value, span })
    }

    fn expr(&mut self, tokens: &mut Tokens<'_>) -> Result<Expr> {
        let span = tokens.span();
        match tokens.peek() {
            Some(Tok::Open) => {
                self.enter(&span)?;
                tokens.next();
                if tokens.peek() == Some(&Tok::Close) {
                    return Err(TemplateError::parse(
                        Some(span),
                        "an empty subexpression ()",
                    ));
                }
                let (mut call, params) = self.call(tokens, Some(&Tok::Close))?;
                self.no_params(&params)?;
                match tokens.next() {
                    Some((Tok::Close, close)) => call.span = span.start..close.end,
                    _ => return Err(TemplateError::parse(Some(span), "this ( is never closed")),
                }
                self.depth -= 1;
                Ok(Expr::Sub(Box::new(call)))
            }
            Some(Tok::Str(_)) | Some(Tok::Num(_)) | Some(Tok::Bool(_)) | Some(Tok::Null) => {
                let Some((tok, span)) = tokens.next() else {
                    return Err(TemplateError::parse(Some(span), "expected a value"));
                };
                Ok(match tok {
                    Tok::Str(s) => Expr::String(s, span),
                    Tok::Num(n) => Expr::Number(n, span),
                    Tok::Bool(b) => Expr::Bool(b, span),
                    _ => Expr::Null(span),
                })
            }
            Some(Tok::Id(_)) | Some(Tok::At) => self.path(tokens).map(Expr::Path),
            Some(other) => {
                let what = match other {
                    Tok::Equals => "=",
                    Tok::Close => ")",
                    Tok::Pipe => "|",
                    Tok::Sep => "a path separator",
                    _ => "this",
                };
                Err(TemplateError::parse(
                    Some(span),
                    format!("expected a value, found {what}"),
                ))
            }
            None => Err(TemplateError::parse(
                Some(span),
                "expected a value before the end of the tag",
            )),
        }
    }

    fn path(&mut self, tokens: &mut Tokens<'_>) -> Result<Path> {
        let start = tokens.span().start;
        let data = tokens.peek() == Some(&Tok::At);
        if data {
            tokens.next();
        }
        let mut path = Path {
            data,
            parents: 0,
            explicit: false,
            parts: Vec::new(),
            span: start..start,
        };
        let mut first = true;
        loop {
            let (name, span) = match tokens.next() {
                Some((Tok::Id(name), span)) => (name, span),
                Some((Tok::Num(_), span)) if !first => {
                    let number = self.text(&span).to_string();
                    return Err(TemplateError::parse(
                        Some(span),
                        format!("a path segment cannot be the number {number}"),
                    )
                    .suggest(Some(format!(
                        "read an element by index with brackets: [{number}]"
                    ))));
                }
                _ => {
                    return Err(TemplateError::parse(
                        Some(start..tokens.span().end),
                        "a path must end with a name",
                    ))
                }
            };
            path.span.end = span.end;
            // `[this]`, `[..]` and `[.]` are keys with those names.
            let bracketed = self.text(&span).starts_with('[');
            let special = !bracketed && (name == ".." || name == "." || name == "this");
            if special && !path.parts.is_empty() {
                return Err(TemplateError::parse(
                    Some(path.span.clone()),
                    format!(
                        "invalid path {}: {name} only goes at the start",
                        self.text(&path.span)
                    ),
                ));
            }
            if !special {
                path.parts.push(Ident { name, span });
            } else if name == ".." {
                path.parents += 1;
            } else if first {
                path.explicit = true;
            } else {
                return Err(TemplateError::parse(
                    Some(path.span.clone()),
                    format!("invalid path {}", self.text(&path.span)),
                ));
            }
            first = false;
            if tokens.peek() == Some(&Tok::Sep) {
                tokens.next();
            } else {
                break;
            }
        }
        Ok(path)
    }
}

fn is_else(tag: &Tag) -> bool {
    lex::is_else(&tag.tokens)
}

/// A block's helper as a label names it: `{{#each}}`, or "block" for a
/// name too long to repeat.
fn block_word(name: &str) -> String {
    match name.chars().count() {
        1..=40 => format!("{{{{#{name}}}}}"),
        _ => "block".to_string(),
    }
}

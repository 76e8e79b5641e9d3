//! Django/pongo2 text → Jinja text, as a list of [`Edit`]s on the body as
//! written. Text outside tags is never touched; inside `{{ … }}` and
//! `{% … %}` the edits are as small as they can be (a `:` becomes `(`, a
//! `)` is inserted), so an error minijinja finds in the translated text is
//! placed on the token the author wrote.

use std::ops::Range;

use crate::diagnostics::TemplateError;
use crate::syntax::edits::{Edit, Edited};

/// How deeply blocks may nest (a bound on the translator's stack and on
/// minijinja's parser, which recurses per block).
const MAX_DEPTH: usize = 200;

/// One token inside a tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    Str,
    Sym,
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

/// A `{{ … }}` or `{% … %}` found in the body.
struct Tag {
    /// The whole tag, delimiters included.
    span: Range<usize>,
    /// Where the opening `{{`/`{%` is (2 bytes) and whether a `-` follows it.
    open_dash: bool,
    close_dash: bool,
    /// The tokens between the delimiters (dashes excluded).
    tokens: Vec<Token>,
}

/// An open block tag, for matching its end tag.
struct Open {
    name: &'static str,
    span: Range<usize>,
    /// `ifchanged` without arguments captures its body: no `else` there.
    captures: bool,
}

/// Block tags the translator follows, each with its end tag.
const BLOCKS: &[&str] = &[
    "for",
    "if",
    "ifequal",
    "ifnotequal",
    "ifchanged",
    "with",
    "spaceless",
    "filter",
    "autoescape",
    "block",
    "macro",
];

/// `forloop.X` (pongo2's capitalised names and Django's lower-case ones) →
/// minijinja's `loop.x`.
fn loop_attribute(name: &str) -> Option<&'static str> {
    Some(match name {
        "Counter" | "counter" => "index",
        "Counter0" | "counter0" => "index0",
        "Revcounter" | "revcounter" => "revindex",
        "Revcounter0" | "revcounter0" => "revindex0",
        "First" | "first" => "first",
        "Last" | "last" => "last",
        _ => return None,
    })
}

/// pongo2's `{% templatetag %}` names.
fn template_tag(name: &str) -> Option<&'static str> {
    Some(match name {
        "openblock" => "{%",
        "closeblock" => "%}",
        "openvariable" => "{{",
        "closevariable" => "}}",
        "openbrace" => "{",
        "closebrace" => "}",
        "opencomment" => "{#",
        "closecomment" => "#}",
        _ => return None,
    })
}

/// Rewrites a Django/pongo2 body into Jinja.
pub(crate) fn translate(body: &str) -> Result<Edited, TemplateError> {
    let mut translator = Translator {
        body,
        edits: Vec::new(),
        open: Vec::new(),
        captures: 0,
    };
    translator.run()?;
    Ok(Edited::new(body, translator.edits))
}

struct Translator<'a> {
    body: &'a str,
    edits: Vec<Edit>,
    open: Vec<Open>,
    /// Counter for the names of captured `ifchanged` bodies.
    captures: usize,
}

fn parse_error(span: Range<usize>, message: impl Into<String>) -> TemplateError {
    TemplateError::parse(Some(span), message)
}

impl<'a> Translator<'a> {
    fn text(&self, token: &Token) -> &'a str {
        self.body.get(token.start..token.end).unwrap_or("")
    }

    fn edit(&mut self, original: Range<usize>, replacement: impl Into<String>) {
        self.edits.push(Edit {
            original,
            replacement: replacement.into(),
        });
    }

    fn insert(&mut self, at: usize, text: impl Into<String>) {
        self.edit(at..at, text);
    }

    fn run(&mut self) -> Result<(), TemplateError> {
        let body = self.body;
        let mut at = 0;
        while let Some(found) = body.get(at..).and_then(|rest| rest.find('{')) {
            let start = at + found;
            let next = body.as_bytes().get(start + 1).copied();
            match next {
                Some(b'#') => {
                    let Some(end) = body.get(start + 2..).and_then(|rest| rest.find("#}")) else {
                        return Err(parse_error(
                            start..start + 2,
                            "this comment has no closing #}",
                        )
                        .suggest(Some("end the comment with #}".into())));
                    };
                    at = start + 2 + end + 2;
                }
                Some(b'{') | Some(b'%') => {
                    let block = next == Some(b'%');
                    let tag = self.scan_tag(start, block)?;
                    at = tag.span.end;
                    if block {
                        at = self.block(tag)?;
                    } else {
                        self.expression(&tag.tokens, false)?;
                    }
                }
                _ => at = start + 1,
            }
        }
        if let Some(open) = self.open.pop() {
            let end = end_name(open.name);
            return Err(parse_error(
                open.span,
                format!(
                    "unexpected end of template: this {} has no {{% {end} %}}",
                    open.name
                ),
            )
            .suggest(Some(format!("add {{% {end} %}} where it should end"))));
        }
        Ok(())
    }

    /// Reads the tag opening at `start` up to its closing delimiter.
    fn scan_tag(&self, start: usize, block: bool) -> Result<Tag, TemplateError> {
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

    fn is_sym(&self, token: Option<&Token>, sym: &str) -> bool {
        token.is_some_and(|t| t.kind == Kind::Sym && self.text(t) == sym)
    }

    fn is_ident(&self, token: Option<&Token>, name: &str) -> bool {
        token.is_some_and(|t| t.kind == Kind::Ident && self.text(t) == name)
    }

    /// Rewrites the expression spellings of pongo2 inside `tokens`: colon
    /// filter arguments, `forloop.X`, `&&`, `||`, `!`, `<>`, `^`. With
    /// `filter_chain`, the first token is a filter name (`{% filter %}`).
    fn expression(&mut self, tokens: &[Token], filter_chain: bool) -> Result<(), TemplateError> {
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
                    self.edit(token.start..token.end, "loop");
                    if self.is_sym(tokens.get(i + 1), ".") {
                        if let Some(attribute) = tokens.get(i + 2).filter(|t| t.kind == Kind::Ident)
                        {
                            let name = self.text(attribute);
                            if matches!(name, "Parentloop" | "parentloop") {
                                return Err(parse_error(
                                    attribute.start..attribute.end,
                                    "forloop.Parentloop is not supported",
                                )
                                .suggest(Some(
                                    "keep the outer loop's value with {% with outer=forloop.Counter %} around the inner loop".into(),
                                )));
                            }
                            if let Some(jinja) = loop_attribute(name) {
                                self.edit(attribute.start..attribute.end, jinja);
                            }
                            i += 3;
                            continue;
                        }
                    }
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
    fn filter_name(&self, token: &Token) -> Result<(), TemplateError> {
        if self.text(token) == "random" {
            return Err(parse_error(
                token.start..token.end,
                "the filter \"random\" is not supported: a prompt renders the same way every time",
            )
            .suggest(Some("pick the element with first, last or an index".into())));
        }
        Ok(())
    }

    /// Translates one `{% … %}`; returns where scanning goes on.
    fn block(&mut self, tag: Tag) -> Result<usize, TemplateError> {
        let Some(name_token) = tag.tokens.first().copied() else {
            return Err(parse_error(tag.span.clone(), "this tag has no name")
                .suggest(Some("write a tag such as {% if … %} or {% for … %}".into())));
        };
        let name = self.text(&name_token);
        let args = tag.tokens.get(1..).unwrap_or_default();
        let name_span = name_token.start..name_token.end;
        let after = tag.span.end;
        match name {
            "for" => {
                self.push("for", &tag)?;
                self.for_tag(&tag, args)?;
            }
            "empty" => {
                if self.open.last().map(|o| o.name) != Some("for") {
                    return Err(parse_error(
                        tag.span.clone(),
                        "{% empty %} belongs inside a {% for %}",
                    ));
                }
                self.edit(name_span, "else");
            }
            "if" => {
                self.push("if", &tag)?;
                self.expression(args, false)?;
            }
            "elif" => self.expression(args, false)?,
            "else" => {
                if self.open.last().is_some_and(|o| o.captures) {
                    return Err(parse_error(
                        tag.span.clone(),
                        "{% ifchanged %} without values has no {% else %} here",
                    )
                    .suggest(Some(
                        "name the values it compares: {% ifchanged item.day %}".into(),
                    )));
                }
            }
            "ifequal" | "ifnotequal" => {
                let block = if name == "ifequal" {
                    "ifequal"
                } else {
                    "ifnotequal"
                };
                self.push(block, &tag)?;
                let parts = split_expressions(self, args);
                let [first, second] = parts.as_slice() else {
                    return Err(parse_error(
                        tag.span.clone(),
                        format!(
                            "{{% {name} %}} takes two values to compare, found {}",
                            parts.len()
                        ),
                    )
                    .suggest(Some(format!("write {{% {name} a b %}}"))));
                };
                self.edit(name_span, "if");
                let op = if name == "ifequal" { " ==" } else { " !=" };
                let first_end = args.get(first.end - 1).map_or(name_token.end, |t| t.end);
                self.insert(first_end, op);
                self.expression(args.get(first.clone()).unwrap_or_default(), false)?;
                self.expression(args.get(second.clone()).unwrap_or_default(), false)?;
            }
            "ifchanged" => self.ifchanged(&tag, args)?,
            "with" => {
                self.push("with", &tag)?;
                self.with_tag(&tag, args)?;
            }
            "firstof" => {
                let parts = split_expressions(self, args);
                if parts.is_empty() {
                    return Err(parse_error(
                        tag.span.clone(),
                        "{% firstof %} needs values to choose from",
                    ));
                }
                self.as_output(&tag, &name_token, "__django_firstof", args, &parts)?;
            }
            "cycle" => self.cycle(&tag, &name_token, args)?,
            "now" => self.now(&tag, &name_token, args)?,
            "widthratio" => self.widthratio(&tag, &name_token, args)?,
            "spaceless" => {
                self.push("spaceless", &tag)?;
                if let Some(extra) = args.first() {
                    return Err(parse_error(
                        extra.start..extra.end,
                        "{% spaceless %} takes no arguments",
                    ));
                }
                self.edit(name_span, "filter __django_spaceless");
            }
            "filter" => {
                self.push("filter", &tag)?;
                self.expression(args, true)?;
            }
            "autoescape" => {
                self.push("autoescape", &tag)?;
                match args.first().map(|t| self.text(t)) {
                    Some("on") | Some("off") if args.len() == 1 => {
                        let token = args.first().copied().unwrap_or(name_token);
                        let mode = if self.text(&token) == "on" {
                            "true"
                        } else {
                            "false"
                        };
                        self.edit(token.start..token.end, mode);
                    }
                    _ => {
                        return Err(parse_error(
                            tag.span.clone(),
                            "{% autoescape %} takes on or off",
                        )
                        .suggest(Some("write {% autoescape off %}".into())))
                    }
                }
            }
            "block" | "macro" => {
                self.push(if name == "block" { "block" } else { "macro" }, &tag)?;
                // pongo2's `{% macro name(…) export %}`: exporting means
                // nothing within one file.
                if let Some(last) = args.last().filter(|t| self.is_ident(Some(t), "export")) {
                    if args.len() > 1 {
                        self.edit(last.start..last.end, "");
                    }
                }
                self.expression(args, false)?;
            }
            "verbatim" => return self.verbatim(&tag, &name_token),
            // Jinja's own raw block: its text is left alone.
            "raw" => {
                return Ok(self
                    .find_end_tag(tag.span.end, "endraw")
                    .map_or(after, |(end_tag, _)| end_tag.end))
            }
            "comment" => return self.comment(&tag),
            "templatetag" => {
                let text = args
                    .first()
                    .filter(|_| args.len() == 1)
                    .and_then(|t| template_tag(self.text(t)));
                let Some(text) = text else {
                    return Err(parse_error(
                        tag.span.clone(),
                        "{% templatetag %} takes one of openblock, closeblock, openvariable, closevariable, openbrace, closebrace, opencomment, closecomment",
                    ));
                };
                let (open, close) = dashes(&tag);
                self.edit(tag.span.clone(), format!("{{{{{open} {text:?} {close}}}}}"));
            }
            "lorem" => {
                return Err(parse_error(
                    name_span,
                    "{% lorem %} is not supported: a prompt should hold real text",
                ))
            }
            "include" | "extends" | "import" | "ssi" => {
                return Err(parse_error(
                    name_span,
                    format!("{{% {name} %}}: templates from other files are not supported yet"),
                )
                .suggest(Some("put the text in this prompt".into())));
            }
            "set" => self.expression(args, false)?,
            end if end.starts_with("end") => self.end_tag(&tag, &name_token)?,
            _ => self.expression(args, false)?,
        }
        Ok(after)
    }

    fn push(&mut self, name: &'static str, tag: &Tag) -> Result<(), TemplateError> {
        if self.open.len() >= MAX_DEPTH {
            return Err(parse_error(
                tag.span.clone(),
                format!("blocks are nested more than {MAX_DEPTH} deep"),
            ));
        }
        self.open.push(Open {
            name,
            span: tag.span.clone(),
            captures: false,
        });
        Ok(())
    }

    fn end_tag(&mut self, tag: &Tag, name_token: &Token) -> Result<(), TemplateError> {
        let name = self.text(name_token);
        let Some(block) = name.strip_prefix("end") else {
            return Ok(());
        };
        if !BLOCKS.contains(&block) {
            // Not a block this dialect has: minijinja reports it.
            return Ok(());
        }
        let Some(open) = self.open.pop() else {
            return Err(parse_error(
                tag.span.clone(),
                format!("{{% {name} %}} closes no {{% {block} %}}"),
            )
            .suggest(Some("remove it, or open the block before it".into())));
        };
        if open.name != block {
            let expected = end_name(open.name);
            return Err(parse_error(
                tag.span.clone(),
                format!("{{% {name} %}} found where {{% {expected} %}} was expected"),
            )
            .suggest(Some(format!(
                "close the {} first with {{% {expected} %}}",
                open.name
            ))));
        }
        let span = name_token.start..name_token.end;
        match block {
            "ifequal" | "ifnotequal" => self.edit(span, "endif"),
            "spaceless" => self.edit(span, "endfilter"),
            "ifchanged" if open.captures => {
                let n = self.captures;
                self.captures += 1;
                let (_, close) = dashes(tag);
                // `{% endset %}{% if loop.changed(x) %}{{ x }}{% endif %}`,
                // the last tag keeping the author's closing dash.
                self.edit(
                    span.start..tag.span.end,
                    format!(
                        "endset %}}{{% if loop.changed(__django_changed_{n}) %}}{{{{ __django_changed_{n} }}}}{{% endif {close}%}}"
                    ),
                );
            }
            "ifchanged" => self.edit(span, "endif"),
            _ => {}
        }
        Ok(())
    }

    /// `for x in xs [reversed] [sorted]`, `for k, v in map`.
    fn for_tag(&mut self, tag: &Tag, args: &[Token]) -> Result<(), TemplateError> {
        let Some(in_at) = args.iter().position(|t| self.is_ident(Some(t), "in")) else {
            return Err(parse_error(
                tag.span.clone(),
                "{% for %} needs `in`: {% for item in items %}",
            ));
        };
        let pairs = args
            .get(..in_at)
            .is_some_and(|targets| targets.iter().any(|t| self.is_sym(Some(t), ",")));
        let mut expr_end = args.len();
        let mut sorted = false;
        let mut reversed = false;
        if expr_end > in_at + 2 && self.is_ident(args.get(expr_end - 1), "sorted") {
            sorted = true;
            expr_end -= 1;
        }
        if expr_end > in_at + 2 && self.is_ident(args.get(expr_end - 1), "reversed") {
            reversed = true;
            expr_end -= 1;
        }
        let expr = args.get(in_at + 1..expr_end).unwrap_or_default();
        let (Some(first), Some(last)) = (expr.first(), expr.last()) else {
            return Err(parse_error(
                tag.span.clone(),
                "{% for %} needs something to loop over after `in`",
            ));
        };
        let (start, end) = (first.start, last.end);
        let modifiers_end = args.last().map_or(end, |t| t.end);
        self.insert(start, "(");
        self.expression(expr, false)?;
        self.edit(
            end..modifiers_end,
            format!(")|__django_for({reversed}, {sorted}, {pairs})"),
        );
        Ok(())
    }

    /// `with a=b c=d` → `with a=b, c=d`; `with b as a` → `with a=b`.
    fn with_tag(&mut self, tag: &Tag, args: &[Token]) -> Result<(), TemplateError> {
        if args.is_empty() {
            return Err(parse_error(
                tag.span.clone(),
                "{% with %} needs a value to name: {% with name=value %}",
            ));
        }
        if args.iter().any(|t| self.is_ident(Some(t), "as")) {
            // Old style: `value as name [value as name]…`.
            let mut i = 0;
            while i < args.len() {
                let Some(as_at) = args
                    .get(i..)
                    .and_then(|rest| rest.iter().position(|t| self.is_ident(Some(t), "as")))
                    .map(|p| p + i)
                else {
                    let at = args.get(i).map_or(tag.span.clone(), |t| t.start..t.end);
                    return Err(parse_error(
                        at,
                        "expected `as name` after this value in {% with %}",
                    ));
                };
                let name = args.get(as_at + 1).filter(|t| t.kind == Kind::Ident);
                let (Some(value_start), Some(value_end), Some(name)) = (
                    args.get(i),
                    as_at.checked_sub(1).and_then(|p| args.get(p)),
                    name,
                ) else {
                    let at = args.get(as_at).map_or(tag.span.clone(), |t| t.start..t.end);
                    return Err(parse_error(
                        at,
                        "{% with value as name %} needs a value and a name",
                    ));
                };
                if as_at == i {
                    return Err(parse_error(
                        value_start.start..value_start.end,
                        "{% with value as name %} needs a value before `as`",
                    ));
                }
                let name_text = self.text(name).to_string();
                let (value_start, value_end, name) = (*value_start, *value_end, *name);
                self.insert(value_start.start, format!("{name_text}="));
                self.expression(args.get(i..as_at).unwrap_or_default(), false)?;
                let more = as_at + 2 < args.len();
                self.edit(value_end.end..name.end, if more { "," } else { "" });
                i = as_at + 2;
            }
            return Ok(());
        }
        // New style: `a=b c=d`; a pair starts at `name =`.
        let mut first = true;
        let mut depth = 0usize;
        for (i, token) in args.iter().enumerate() {
            if token.kind == Kind::Sym {
                match self.text(token) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            let starts_pair = depth == 0
                && token.kind == Kind::Ident
                && self.is_sym(args.get(i + 1), "=")
                && !self.is_sym(i.checked_sub(1).and_then(|p| args.get(p)), ".");
            if starts_pair {
                let previous = i.checked_sub(1).and_then(|p| args.get(p)).copied();
                if let Some(previous) = previous.filter(|p| !first && !self.is_sym(Some(p), ",")) {
                    self.edit(previous.end..token.start, ", ");
                }
                first = false;
            }
        }
        self.expression(args, false)
    }

    /// Turns a tag that prints into `{{ function(args…) }}`, keeping the
    /// author's dashes.
    fn as_output(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        function: &str,
        args: &[Token],
        parts: &[Range<usize>],
    ) -> Result<(), TemplateError> {
        self.edit(tag.span.start..tag.span.start + 2, "{{");
        let first_start = args.first().map_or(name_token.end, |t| t.start);
        self.edit(name_token.start..first_start, format!("{function}("));
        self.arguments(args, parts)?;
        let end = args.last().map_or(name_token.end, |t| t.end);
        self.insert(end, ")");
        let close = tag.span.end - 2;
        self.edit(close..tag.span.end, "}}");
        Ok(())
    }

    /// Joins juxtaposed expressions with commas (the space between them
    /// becomes `, `), translating each.
    fn arguments(&mut self, args: &[Token], parts: &[Range<usize>]) -> Result<(), TemplateError> {
        let mut previous_end = None;
        for part in parts {
            let tokens = args.get(part.clone()).unwrap_or_default();
            if let (Some(end), Some(first)) = (previous_end, tokens.first()) {
                self.edit(end..first.start, ", ");
            }
            self.expression(tokens, false)?;
            previous_end = tokens.last().map(|t| t.end);
        }
        Ok(())
    }

    /// `{% cycle a b %}`: `loop.cycle(a, b)` inside a loop, else the first.
    fn cycle(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        args: &[Token],
    ) -> Result<(), TemplateError> {
        if let Some(as_token) = args.iter().find(|t| self.is_ident(Some(t), "as")) {
            return Err(parse_error(
                as_token.start..as_token.end,
                "{% cycle … as name %} is not supported",
            )
            .suggest(Some(
                "print the cycle where it is used: {% cycle \"odd\" \"even\" %}".into(),
            )));
        }
        let parts = split_expressions(self, args);
        if parts.is_empty() {
            return Err(parse_error(
                tag.span.clone(),
                "{% cycle %} needs values to cycle through",
            ));
        }
        let in_loop = self.open.iter().any(|o| o.name == "for");
        let function = if in_loop {
            "loop.cycle"
        } else {
            "__django_first"
        };
        self.as_output(tag, name_token, function, args, &parts)
    }

    /// `{% now "layout" [fake] %}`.
    fn now(&mut self, tag: &Tag, name_token: &Token, args: &[Token]) -> Result<(), TemplateError> {
        let format = args.first().filter(|t| t.kind == Kind::Str);
        let fake = args.get(1).filter(|t| self.is_ident(Some(t), "fake"));
        let valid = format.is_some() && args.len() == 1 + usize::from(fake.is_some());
        if !valid {
            return Err(parse_error(
                tag.span.clone(),
                "{% now %} takes a layout string: {% now \"2006-01-02\" %}",
            ));
        }
        if let Some(fake) = fake.copied() {
            self.edit(fake.start..fake.end, "true");
            if let Some(format) = format {
                self.insert(format.end, ",");
            }
        }
        self.edit(tag.span.start..tag.span.start + 2, "{{");
        let first_start = args.first().map_or(name_token.end, |t| t.start);
        self.edit(name_token.start..first_start, "__django_now(");
        let end = args.last().map_or(name_token.end, |t| t.end);
        self.insert(end, ")");
        self.edit(tag.span.end - 2..tag.span.end, "}}");
        Ok(())
    }

    /// `{% widthratio value max width [as name] %}`.
    fn widthratio(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        args: &[Token],
    ) -> Result<(), TemplateError> {
        let as_at = args.iter().position(|t| self.is_ident(Some(t), "as"));
        let values = args.get(..as_at.unwrap_or(args.len())).unwrap_or_default();
        let parts = split_expressions(self, values);
        if parts.len() != 3 {
            return Err(parse_error(
                tag.span.clone(),
                "{% widthratio %} takes three values: {% widthratio value max width %}",
            ));
        }
        let Some(as_at) = as_at else {
            return self.as_output(tag, name_token, "__django_widthratio", values, &parts);
        };
        let (Some(as_token), Some(name)) = (
            args.get(as_at),
            args.get(as_at + 1)
                .filter(|t| t.kind == Kind::Ident && as_at + 2 == args.len()),
        ) else {
            return Err(parse_error(
                tag.span.clone(),
                "{% widthratio … as name %} needs one name after `as`",
            ));
        };
        let name_text = self.text(name).to_string();
        let first_start = values.first().map_or(name_token.end, |t| t.start);
        self.edit(
            name_token.start..first_start,
            format!("set {name_text} = __django_widthratio("),
        );
        self.arguments(values, &parts)?;
        let end = values.last().map_or(name_token.end, |t| t.end);
        self.edit(end..end, ")");
        self.edit(as_token.start..name.end, "");
        Ok(())
    }

    /// `{% ifchanged a b %}` → `{% if loop.changed(a, b) %}`; without
    /// values, the body is captured and compared.
    fn ifchanged(&mut self, tag: &Tag, args: &[Token]) -> Result<(), TemplateError> {
        if !self.open.iter().any(|o| o.name == "for") {
            return Err(parse_error(
                tag.span.clone(),
                "{% ifchanged %} belongs inside a {% for %}",
            ));
        }
        self.push("ifchanged", tag)?;
        let Some(name_token) = tag.tokens.first().copied() else {
            return Ok(());
        };
        if args.is_empty() {
            if let Some(open) = self.open.last_mut() {
                open.captures = true;
            }
            let n = self.captures;
            self.edit(
                name_token.start..name_token.end,
                format!("set __django_changed_{n}"),
            );
            return Ok(());
        }
        let parts = split_expressions(self, args);
        let first_start = args.first().map_or(name_token.end, |t| t.start);
        self.edit(name_token.start..first_start, "if loop.changed(");
        self.arguments(args, &parts)?;
        let end = args.last().map_or(name_token.end, |t| t.end);
        self.insert(end, ")");
        Ok(())
    }

    /// `{% verbatim %}…{% endverbatim %}` → `{% raw %}…{% endraw %}`.
    fn verbatim(&mut self, tag: &Tag, name_token: &Token) -> Result<usize, TemplateError> {
        let Some((end_tag, end_name)) = self.find_end_tag(tag.span.end, "endverbatim") else {
            return Err(parse_error(
                tag.span.clone(),
                "unexpected end of template: this verbatim has no {% endverbatim %}",
            )
            .suggest(Some("add {% endverbatim %} where it should end".into())));
        };
        self.edit(name_token.start..name_token.end, "raw");
        self.edit(end_name, "endraw");
        Ok(end_tag.end)
    }

    /// `{% comment %}…{% endcomment %}` → one `{# #}` with the same dashes.
    fn comment(&mut self, tag: &Tag) -> Result<usize, TemplateError> {
        let Some((end_tag, _)) = self.find_end_tag(tag.span.end, "endcomment") else {
            return Err(parse_error(
                tag.span.clone(),
                "unexpected end of template: this comment has no {% endcomment %}",
            )
            .suggest(Some("add {% endcomment %} where it should end".into())));
        };
        let open = if tag.open_dash { "-" } else { "" };
        let close = if self
            .body
            .get(end_tag.clone())
            .is_some_and(|t| t.ends_with("-%}"))
        {
            "-"
        } else {
            ""
        };
        self.edit(tag.span.start..end_tag.end, format!("{{#{open} {close}#}}"));
        Ok(end_tag.end)
    }

    /// The first `{% NAME %}` (dashes allowed) from `from`: the tag's span
    /// and the name's span.
    fn find_end_tag(&self, from: usize, name: &str) -> Option<(Range<usize>, Range<usize>)> {
        let body = self.body;
        let mut at = from;
        while let Some(found) = body.get(at..)?.find("{%") {
            let start = at + found;
            let mut i = start + 2;
            let rest = body.get(i..)?;
            let trimmed = rest.trim_start_matches('-').trim_start();
            i += rest.len() - trimmed.len();
            if let Some(after) = trimmed.strip_prefix(name) {
                let name_span = i..i + name.len();
                let tail = after.trim_start();
                let tail = tail.strip_prefix('-').unwrap_or(tail);
                if tail.starts_with("%}") {
                    let end = body.len() - tail.len() + 2;
                    return Some((start..end, name_span));
                }
            }
            at = start + 2;
        }
        None
    }
}

/// The dashes of a tag's delimiters, for a replacement that keeps them.
fn dashes(tag: &Tag) -> (&'static str, &'static str) {
    (
        if tag.open_dash { "-" } else { "" },
        if tag.close_dash { "-" } else { "" },
    )
}

fn end_name(block: &str) -> String {
    format!("end{block}")
}

/// Where a filter argument that starts at `tokens[i]` ends (exclusive): a
/// string, a number (with a sign), or a variable path (`a.b[0].c`, with
/// calls). `None` when nothing there is an argument.
fn filter_argument(t: &Translator<'_>, tokens: &[Token], mut i: usize) -> Option<usize> {
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
fn matching(t: &Translator<'_>, tokens: &[Token], i: usize) -> Option<usize> {
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
fn split_expressions(t: &Translator<'_>, tokens: &[Token]) -> Vec<Range<usize>> {
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

//! Django/pongo2 text → Jinja text, as a list of [`Edit`]s on the body as
//! written. Text outside tags is never touched; inside `{{ … }}` and
//! `{% … %}` the edits are as small as they can be (a `:` becomes `(`, a
//! `)` is inserted), so an error minijinja finds in the translated text is
//! placed on the token the author wrote.

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::diagnostics::TemplateError;
use crate::document::include_root::Includes;
use crate::syntax::edits::{Edit, Edited};

/// The next number for a `{% cycle %}` tag: unique in the process, so that
/// tags of different files never share a count.
static NEXT_CYCLE: AtomicU64 = AtomicU64::new(1);

/// How deeply blocks may nest (a bound on the translator's stack and on
/// minijinja's parser, which recurses per block).
const MAX_DEPTH: usize = 200;

/// How many values a named `{% cycle … as name %}` may have: each is a
/// branch of an `if` (see `Translator::cycle`), and an `if`'s `elif`s are
/// bounded.
const MAX_NAMED_CYCLE: usize = 256;

/// Words that are never a template's own names (Jinja's keywords and
/// constants, pongo2's `forloop`).
const NOT_NAMES: &[&str] = &[
    "true",
    "false",
    "none",
    "True",
    "False",
    "None",
    "and",
    "or",
    "not",
    "in",
    "is",
    "if",
    "else",
    "elif",
    "endif",
    "for",
    "endfor",
    "block",
    "endblock",
    "set",
    "endset",
    "with",
    "endwith",
    "macro",
    "endmacro",
    "call",
    "endcall",
    "filter",
    "endfilter",
    "import",
    "from",
    "include",
    "extends",
    "as",
    "recursive",
    "loop",
    "super",
    "self",
    "caller",
    "varargs",
    "kwargs",
    "namespace",
    "forloop",
    "only",
    "ignore",
    "missing",
    "context",
    "without",
];

/// How much text may restore, after the blocks of a template that others
/// extend, the names their blocks set (see
/// `Translator::restore_after_blocks`).
const MAX_RESTORED_BYTES: usize = 1 << 20;

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
    /// A `for` whose loop an inner loop reads as `forloop.Parentloop`:
    /// the name it is kept under, and the tag's closing dash.
    kept_as: Option<(String, bool)>,
    /// A `for`: the names it loops over (`for k, v in …`); a `block`: its
    /// name.
    targets: Vec<String>,
    /// A `for`: the names its body sets in the loop's own scope, which
    /// pongo2 keeps from one pass of the loop to the next.
    kept_names: Vec<String>,
    /// A `macro`: where its name is written.
    name_at: Option<Range<usize>>,
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

/// A Django/pongo2 template translated into Jinja.
#[derive(Debug, Default)]
pub(crate) struct Translation {
    pub edited: Edited,
    /// The macros marked `export`: all that `{% import %}` may take.
    pub exports: BTreeSet<String>,
    /// `{% include … with … only %}`: where its name starts (in the text
    /// as written) and the names it gives the template, the only ones the
    /// template sees.
    pub only: Vec<(usize, BTreeSet<String>)>,
    /// The macros at the template's top level, as written.
    macros: Vec<MacroSource>,
}

/// A macro at a template's top level: its name, where the name is, and
/// the whole `{% macro %}…{% endmacro %}` (in the text as written).
#[derive(Debug, Clone)]
struct MacroSource {
    name: String,
    name_at: Range<usize>,
    span: Range<usize>,
}

/// How deep imported macros that import macros are copied (see
/// `Translator::import`); deeper, the import is left to Jinja's.
const MAX_IMPORT_DEPTH: usize = 8;

/// Rewrites a Django/pongo2 body into Jinja; `includes` reads the files
/// of `{% ssi %}` (without them, one is an error).
pub(crate) fn translate(
    body: &str,
    includes: Option<&Includes>,
) -> Result<Translation, TemplateError> {
    translate_at(body, includes, 0, &std::cell::Cell::new(0))
}

/// [`translate`], `depth` imports deep, with the bytes of imported macros
/// copied so far in `copied` (see `Translator::import`).
fn translate_at(
    body: &str,
    includes: Option<&Includes>,
    depth: usize,
    copied: &std::cell::Cell<usize>,
) -> Result<Translation, TemplateError> {
    let mut translator = Translator {
        depth,
        copied,
        macros: Vec::new(),
        body,
        edits: Vec::new(),
        open: Vec::new(),
        captures: 0,
        includes,
        exports: BTreeSet::new(),
        only: Vec::new(),
        kept_loops: Vec::new(),
        extends: false,
        names_read: Vec::new(),
        block_ends: Vec::new(),
        ssi_read: Default::default(),
        ssi_bytes: 0,
    };
    translator.run()?;
    translator.restore_after_blocks();
    // The loops kept for `forloop.Parentloop`: a `{% set %}` right after
    // the `for` tag, first among the edits there (an edit of the next tag
    // may start at the same place).
    let mut edits = std::mem::take(&mut translator.kept_loops);
    edits.append(&mut translator.edits);
    Ok(Translation {
        edited: Edited::new(body, edits),
        exports: translator.exports,
        only: translator.only,
        macros: translator.macros,
    })
}

struct Translator<'a> {
    body: &'a str,
    /// How many imports deep this template is copied (see `import`).
    depth: usize,
    /// Bytes of imported macros copied, in this template and the ones it
    /// imports.
    copied: &'a std::cell::Cell<usize>,
    /// The macros at the top level (see [`Translation`]).
    macros: Vec<MacroSource>,
    edits: Vec<Edit>,
    open: Vec<Open>,
    /// Counter for the names of captured `ifchanged` bodies.
    captures: usize,
    /// Where `{% ssi %}` reads files.
    includes: Option<&'a Includes>,
    /// Macros marked `export`.
    exports: BTreeSet<String>,
    /// `include … only`: see [`Translation::only`].
    only: Vec<(usize, BTreeSet<String>)>,
    /// The `{% set %}` edits keeping loops for `forloop.Parentloop`.
    kept_loops: Vec<Edit>,
    /// Whether the template extends another (its blocks render there).
    extends: bool,
    /// The names the template's tags read, each with where it is.
    names_read: Vec<(usize, &'a str)>,
    /// In a template that extends none: each block's name and where its
    /// `{% endblock %}` ends (see `restore_after_blocks`).
    block_ends: Vec<(String, usize)>,
    /// The texts `{% ssi %}` read, by name (each file is read once), and
    /// how many bytes they printed into the translation.
    ssi_read: std::collections::HashMap<String, String>,
    ssi_bytes: usize,
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
                    self.note_names(&tag.tokens);
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

    /// The name of the loop `up` levels out from the innermost one
    /// (`forloop.Parentloop` is one), kept by a `{% set %}` right after
    /// its `for` tag.
    fn keep_loop(&mut self, up: usize, at: Range<usize>) -> Result<String, TemplateError> {
        let loops: Vec<usize> = (0..self.open.len())
            .filter(|&index| self.open.get(index).is_some_and(|open| open.name == "for"))
            .collect();
        let Some(&index) = loops.len().checked_sub(1 + up).and_then(|k| loops.get(k)) else {
            return Err(parse_error(
                at,
                "forloop.Parentloop here has no outer loop in this template",
            )
            .suggest(Some(
                "read forloop.Parentloop inside a loop that is itself inside a loop".into(),
            )));
        };
        let Some(open) = self.open.get_mut(index) else {
            return Ok("loop".into());
        };
        if let Some((name, _)) = &open.kept_as {
            return Ok(name.clone());
        }
        let name = format!("__django_loop_{}", open.span.start);
        let dash = self
            .body
            .get(open.span.clone())
            .is_some_and(|tag| tag.ends_with("-%}"));
        open.kept_as = Some((name.clone(), dash));
        let end = open.span.end;
        let close = if dash { "-" } else { "" };
        self.kept_loops.push(Edit {
            original: end..end,
            replacement: format!("{{% set {name} = loop {close}%}}"),
        });
        Ok(name)
    }

    /// `{% set name = … %}` in the scope of a loop or a block (not inside
    /// a `with` or macro there): pongo2 gives a loop one scope for all its
    /// passes, and a block none of its own, so the value is kept in a
    /// namespace for the loop's next pass, or for the text after the block
    /// (`keep_between_passes`, `keep_after_block`); minijinja starts each
    /// pass afresh and keeps a block's names to itself.
    fn keep_set(&mut self, tag: &Tag, args: &[Token]) {
        let (Some(name), true) = (
            args.first().filter(|t| t.kind == Kind::Ident),
            self.is_sym(args.get(1), "="),
        ) else {
            return;
        };
        let name = self.text(name).to_string();
        if let Some(keep) = self.keep_name(&name, self.open.len()) {
            let (_, close) = dashes(tag);
            self.insert(tag.span.end, format!("{keep} {close}%}}"));
        }
    }

    /// `name`, set in the scope of the open blocks `..depth`: the start of
    /// a `{% set %}` tag (its end left to the caller) that keeps it where
    /// pongo2 would see it again, if that is a loop's or a block's scope.
    fn keep_name(&mut self, name: &str, depth: usize) -> Option<String> {
        let extends = self.extends;
        let open = self
            .open
            .get_mut(..depth)?
            .iter_mut()
            .rev()
            .find(|open| matches!(open.name, "for" | "with" | "macro" | "block"))?;
        // A block of a template that extends another renders in that one:
        // its names go to the namespace the root template made for the
        // block (`open_block`), for the text after it there.
        if open.name == "block" && extends {
            let block = open.targets.first()?;
            let namespace = format!("__django_block_{block}");
            return Some(format!(
                "{{% if {namespace} is defined %}}{{% set {namespace}.{name} = {name} %}}{{% endif"
            ));
        }
        let kept = match open.name {
            "for" => !open.targets.iter().any(|target| target == name),
            "block" => !extends,
            _ => false,
        };
        if !kept {
            return None;
        }
        if !open.kept_names.iter().any(|kept| kept == name) {
            open.kept_names.push(name.to_string());
        }
        Some(format!(
            "{{% set __django_scope_{}.{name} = {name}",
            open.span.start
        ))
    }

    /// The names a tag reads: identifiers not after a `.`, not Jinja's
    /// words, not the translation's own.
    fn note_names(&mut self, tokens: &[Token]) {
        let mut after_dot = false;
        for token in tokens {
            let text = self.text(token);
            if token.kind == Kind::Ident
                && !after_dot
                && !NOT_NAMES.contains(&text)
                && !text.starts_with("__")
                && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && text.bytes().next().is_some_and(|b| !b.is_ascii_digit())
            {
                self.names_read.push((token.start, text));
            }
            after_dot = token.kind == Kind::Sym && text == ".";
        }
    }

    /// `{% block name %}` in a template that extends none: a namespace
    /// for the block made before it, where the block of a template that
    /// extends this one leaves the names it sets (`keep_name`).
    fn open_block(&mut self, tag: &Tag, args: &[Token]) {
        let Some(name) = args
            .first()
            .filter(|t| t.kind == Kind::Ident)
            .map(|t| self.text(t).to_string())
        else {
            return;
        };
        if !self.extends && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            let body = self.body;
            let text = body.get(tag.span.clone()).unwrap_or_default();
            let left = if text.starts_with("{%-") { "-" } else { "" };
            self.insert(
                tag.span.start,
                format!("{{%{left} set __django_block_{name} = namespace() %}}"),
            );
        }
        if let Some(open) = self.open.last_mut() {
            open.targets = vec![name];
        }
    }

    /// After each block of a template that extends none: the names read
    /// after it take the values the block of an extending template set
    /// (pongo2 gives a block no scope of its own, so what a child's block
    /// sets is seen after it in the parent). At most
    /// [`MAX_RESTORED_BYTES`] of such text; past it, names are not
    /// restored.
    fn restore_after_blocks(&mut self) {
        let mut block_ends = std::mem::take(&mut self.block_ends);
        // From the last block back, with the names read after each.
        block_ends.sort_by_key(|(_, end)| std::cmp::Reverse(*end));
        let mut names_read = std::mem::take(&mut self.names_read);
        names_read.sort_by_key(|(at, _)| *at);
        let mut names: BTreeSet<&str> = BTreeSet::new();
        let mut spent = 0usize;
        for (block, end) in block_ends {
            while names_read.last().is_some_and(|(at, _)| *at >= end) {
                if let Some((_, name)) = names_read.pop() {
                    names.insert(name);
                }
            }
            let namespace = format!("__django_block_{block}");
            let mut restore = String::new();
            for name in &names {
                restore.push_str(&format!(
                    "{{% if {namespace}.{name} is defined %}}{{% set {name} = {namespace}.{name} %}}{{% endif %}}"
                ));
                if spent.saturating_add(restore.len()) > MAX_RESTORED_BYTES {
                    return;
                }
            }
            spent = spent.saturating_add(restore.len());
            if !restore.is_empty() {
                self.insert(end, restore);
            }
        }
    }

    /// At `{% endblock %}`: a block that sets names gets a namespace made
    /// before it, and after it the names take the values the block left
    /// there (kept in turn for the scope around).
    fn keep_after_block(&mut self, open: &Open, end: &Tag) {
        if open.kept_names.is_empty() {
            return;
        }
        let namespace = format!("__django_scope_{}", open.span.start);
        let tag = self.body.get(open.span.clone()).unwrap_or_default();
        let left = if tag.starts_with("{%-") { "-" } else { "" };
        self.insert(
            open.span.start,
            format!("{{%{left} set {namespace} = namespace() %}}"),
        );
        let (_, right) = dashes(end);
        let mut restore = String::new();
        for (i, name) in open.kept_names.iter().enumerate() {
            let close = if i + 1 == open.kept_names.len() {
                right
            } else {
                ""
            };
            let outer = self
                .keep_name(name, self.open.len())
                .map(|keep| format!("{keep} %}}"))
                .unwrap_or_default();
            restore.push_str(&format!(
                "{{% if {namespace}.{name} is defined %}}{{% set {name} = {namespace}.{name} %}}{outer}{{% endif {close}%}}"
            ));
        }
        self.insert(end.span.end, restore);
    }

    /// At `{% endfor %}`: a loop whose body sets names in its own scope
    /// gets a namespace made before the loop, and each pass starts with
    /// the values the last pass left there.
    fn keep_between_passes(&mut self, open: &Open) {
        if open.kept_names.is_empty() {
            return;
        }
        let namespace = format!("__django_scope_{}", open.span.start);
        let tag = self.body.get(open.span.clone()).unwrap_or_default();
        let left = if tag.starts_with("{%-") { "-" } else { "" };
        let right = if tag.ends_with("-%}") { "-" } else { "" };
        self.insert(
            open.span.start,
            format!("{{%{left} set {namespace} = namespace() %}}"),
        );
        let mut restore = String::new();
        for (i, name) in open.kept_names.iter().enumerate() {
            let close = if i + 1 == open.kept_names.len() {
                right
            } else {
                ""
            };
            restore.push_str(&format!(
                "{{% if {namespace}.{name} is defined %}}{{% set {name} = {namespace}.{name} %}}{{% endif {close}%}}"
            ));
        }
        self.kept_loops.push(Edit {
            original: open.span.end..open.span.end,
            replacement: restore,
        });
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
                let targets: Vec<String> = args
                    .iter()
                    .take_while(|t| !self.is_ident(Some(t), "in"))
                    .filter(|t| t.kind == Kind::Ident)
                    .map(|t| self.text(t).to_string())
                    .collect();
                if let Some(open) = self.open.last_mut() {
                    open.targets = targets;
                }
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
                self.as_output(&tag, &name_token, "__django_firstof", "", args, &parts)?;
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
                if name == "block" {
                    self.open_block(&tag, args);
                } else if let (Some(first), Some(open)) = (args.first(), self.open.last_mut()) {
                    open.name_at = Some(first.start..first.end);
                }
                // pongo2's `{% macro name(…) export %}`: exporting means
                // nothing within one file.
                if let Some(last) = args.last().filter(|t| self.is_ident(Some(t), "export")) {
                    if args.len() > 1 {
                        self.edit(last.start..last.end, "");
                        if let Some(macro_name) = args.first().filter(|_| name == "macro") {
                            self.exports.insert(self.text(macro_name).to_string());
                        }
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
            "include" => self.include(&tag, &name_token, args)?,
            "import" => self.import(&tag, &name_token, args)?,
            "ssi" => self.ssi(&tag, &name_token, args)?,
            "extends" => self.extends(&tag, args)?,
            "set" => {
                self.expression(args, false)?;
                self.keep_set(&tag, args);
            }
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
            kept_as: None,
            targets: Vec::new(),
            kept_names: Vec::new(),
            name_at: None,
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
            "for" => self.keep_between_passes(&open),
            "macro" if self.open.is_empty() => {
                if let Some(name_at) = open.name_at.clone() {
                    self.macros.push(MacroSource {
                        name: self
                            .body
                            .get(name_at.clone())
                            .unwrap_or_default()
                            .to_string(),
                        name_at,
                        span: open.span.start..tag.span.end,
                    });
                }
            }
            "block" => {
                self.keep_after_block(&open, tag);
                if let (false, Some(name)) = (self.extends, open.targets.first()) {
                    self.block_ends.push((name.clone(), tag.span.end));
                }
            }
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
        leading: &str,
        args: &[Token],
        parts: &[Range<usize>],
    ) -> Result<(), TemplateError> {
        self.edit(tag.span.start..tag.span.start + 2, "{{");
        let first_start = args.first().map_or(name_token.end, |t| t.start);
        self.edit(
            name_token.start..first_start,
            format!("{function}({leading}"),
        );
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

    /// `{% cycle a b %}` → `{{ __django_cycle(N, a, b) }}`: pongo2 counts
    /// each tag's uses in a render (its own counter, across loops and
    /// macro calls); `{% cycle a b as name [silent] %}` also names the
    /// cycle (`{{ name }}` prints its value, `{% cycle name %}` moves it
    /// on, evaluating the next of `a b` then, as pongo2 does).
    fn cycle(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        args: &[Token],
    ) -> Result<(), TemplateError> {
        let id = NEXT_CYCLE.fetch_add(1, Ordering::Relaxed);
        let as_at = args.iter().position(|t| self.is_ident(Some(t), "as"));
        let values = args.get(..as_at.unwrap_or(args.len())).unwrap_or_default();
        let parts = split_expressions(self, values);
        if parts.is_empty() {
            return Err(parse_error(
                tag.span.clone(),
                "{% cycle %} needs values to cycle through",
            ));
        }
        let Some(as_at) = as_at else {
            return self.as_output(
                tag,
                name_token,
                "__django_cycle",
                &format!("{id}, "),
                args,
                &parts,
            );
        };
        let name = args.get(as_at + 1).filter(|t| t.kind == Kind::Ident);
        let silent = args
            .get(as_at + 2)
            .filter(|t| self.is_ident(Some(t), "silent"));
        let expected = as_at + 2 + usize::from(silent.is_some());
        let (Some(as_token), Some(name)) =
            (args.get(as_at), name.filter(|_| args.len() == expected))
        else {
            return Err(parse_error(
                tag.span.clone(),
                "{% cycle … as name %} takes one name after `as`, and then only `silent`",
            )
            .suggest(Some("write {% cycle \"odd\" \"even\" as row %}".into())));
        };
        if parts.len() > MAX_NAMED_CYCLE {
            return Err(parse_error(
                tag.span.clone(),
                format!("{{% cycle … as name %}} takes at most {MAX_NAMED_CYCLE} values"),
            ));
        }
        let name_text = self.text(name).to_string();
        // The values stay where they are written, each in a branch of a
        // macro that prints the one asked for: `{% cycle name %}`
        // evaluates the next value when it runs, as pongo2 does (a macro
        // reads the names around it as they are at the call).
        let values_macro = format!("__django_cycle_values_{id}");
        let first_start = values.first().map_or(name_token.end, |t| t.start);
        self.edit(
            name_token.start..first_start,
            format!("macro {values_macro}(__django_i) %}}{{% if __django_i == 0 %}}{{{{ "),
        );
        let mut previous_end = None;
        for (index, part) in parts.iter().enumerate() {
            let tokens = values.get(part.clone()).unwrap_or_default();
            if let (Some(end), Some(first)) = (previous_end, tokens.first()) {
                self.edit(
                    end..first.start,
                    format!(" }}}}{{% elif __django_i == {index} %}}{{{{ "),
                );
            }
            self.expression(tokens, false)?;
            previous_end = tokens.last().map(|t| t.end);
        }
        let end = values.last().map_or(name_token.end, |t| t.end);
        let last = args.last().map_or(end, |t| t.end);
        self.edit(
            end..as_token.start,
            format!(
                " }}}}{{% endif %}}{{% endmacro %}}{{% set {name_text} = __django_cycle_as({id}, {}, {values_macro}, {})",
                silent.is_some(),
                parts.len()
            ),
        );
        self.edit(as_token.start..last, "");
        if silent.is_none() {
            // Printed right after, by the name.
            let (_, close) = dashes(tag);
            let close_at = tag.span.end - 2 - close.len();
            self.edit(
                close_at..tag.span.end,
                format!("%}}{{{{ {name_text} {close}}}}}"),
            );
        }
        Ok(())
    }

    /// `{% include "name" [if_exists] [with a=b c=d [only]] %}`: Jinja's
    /// include (`ignore missing`), inside `{% with a=b, c=d %}` for the
    /// values given; with `only`, the template sees those values alone
    /// (checked when the files are read: see [`Translation::only`]).
    fn include(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        args: &[Token],
    ) -> Result<(), TemplateError> {
        let malformed = |at: Range<usize>| {
            parse_error(at, "malformed {% include %}: expected {% include \"name\" [if_exists] [with key=value … [only]] %}")
        };
        let Some(first) = args.first() else {
            return Err(malformed(tag.span.clone()));
        };
        // The name: a string, or an expression up to `if_exists` / `with`.
        let name_end = if first.kind == Kind::Str {
            1
        } else {
            args.iter()
                .position(|t| self.is_ident(Some(t), "if_exists") || self.is_ident(Some(t), "with"))
                .unwrap_or(args.len())
        };
        self.expression(args.get(..name_end).unwrap_or_default(), false)?;
        let mut i = name_end;
        let if_exists = self.is_ident(args.get(i), "if_exists");
        if if_exists {
            i += 1;
        }
        let name_last = args
            .get(name_end.saturating_sub(1))
            .copied()
            .unwrap_or(*first);
        // Each tag includes a copy of its own (pongo2 parses the file once
        // per tag): its cycles count apart from another tag's.
        let site = format!(
            "__django_site_path=__django_site({})",
            NEXT_CYCLE.fetch_add(1, Ordering::Relaxed)
        );
        if i == args.len() {
            self.edit(
                name_token.start..name_token.end,
                format!("with {site} %}}{{% include"),
            );
            let last = args.last().map_or(name_last.end, |t| t.end);
            let ignore = if if_exists { " ignore missing" } else { "" };
            self.edit(name_last.end..last, format!("{ignore} %}}{{% endwith"));
            return Ok(());
        }
        if !self.is_ident(args.get(i), "with") {
            let at = args.get(i).map_or(tag.span.clone(), |t| t.start..t.end);
            return Err(malformed(at));
        }
        i += 1;
        // `key=value` pairs, each value up to the next `key=` or `only`.
        let mut pairs: Vec<(String, Range<usize>)> = Vec::new();
        let mut only = false;
        while i < args.len() {
            let (Some(key), true) = (
                args.get(i).filter(|t| t.kind == Kind::Ident),
                self.is_sym(args.get(i + 1), "="),
            ) else {
                let at = args.get(i).map_or(tag.span.clone(), |t| t.start..t.end);
                return Err(parse_error(
                    at,
                    "expected key=value after `with` in {% include %}",
                ));
            };
            let start = i + 2;
            let mut end = start;
            let mut depth = 0usize;
            while let Some(token) = args.get(end) {
                if token.kind == Kind::Sym {
                    match self.text(token) {
                        "(" | "[" | "{" => depth += 1,
                        ")" | "]" | "}" => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
                let next_pair = depth == 0
                    && end > start
                    && token.kind == Kind::Ident
                    && self.is_sym(args.get(end + 1), "=")
                    && !self.is_sym(args.get(end - 1), ".");
                let is_only = depth == 0
                    && end > start
                    && end + 1 == args.len()
                    && self.is_ident(Some(token), "only");
                if next_pair || is_only {
                    break;
                }
                end += 1;
            }
            if end == start {
                return Err(parse_error(
                    key.start..key.end,
                    format!("`{}=` needs a value in {{% include %}}", self.text(key)),
                ));
            }
            pairs.push((self.text(key).to_string(), start..end));
            i = end;
            if self.is_ident(args.get(i), "only") {
                only = true;
                i += 1;
            }
        }
        // The values, translated, in a `{% with %}` around the include.
        let mut given = Vec::new();
        for (key, range) in &pairs {
            let tokens = args.get(range.clone()).unwrap_or_default();
            let (Some(first), Some(last)) = (tokens.first(), tokens.last()) else {
                continue;
            };
            let mark = self.edits.len();
            self.expression(tokens, false)?;
            let edits: Vec<Edit> = self
                .edits
                .drain(mark..)
                .map(|edit| Edit {
                    original: edit.original.start - first.start..edit.original.end - first.start,
                    replacement: edit.replacement,
                })
                .collect();
            let text = self.body.get(first.start..last.end).unwrap_or_default();
            given.push(format!("{key}={}", Edited::new(text, edits).text));
        }
        self.edit(
            name_token.start..name_token.end,
            format!("with {site}, {} %}}{{% include", given.join(", ")),
        );
        let last = args.last().map_or(name_last.end, |t| t.end);
        let mut tail = String::new();
        if if_exists {
            tail.push_str(" ignore missing");
        }
        if only {
            tail.push_str(" without context");
            self.only.push((
                first.start,
                pairs.iter().map(|(key, _)| key.clone()).collect(),
            ));
        }
        tail.push_str(" %}{% endwith");
        self.edit(name_last.end..last, tail);
        Ok(())
    }

    /// `{% import "file" a, b as c %}` → `{% from "file" import a, b as c
    /// with context %}`: pongo2 runs an imported macro in the context of
    /// the template that imports it.
    fn import(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        args: &[Token],
    ) -> Result<(), TemplateError> {
        let Some(file) = args.first().filter(|t| t.kind == Kind::Str) else {
            return Err(parse_error(
                tag.span.clone(),
                "{% import %} needs a file name in quotes: {% import \"macros.html\" greet %}",
            ));
        };
        let names = args.get(1..).unwrap_or_default();
        // name [as alias] (, name [as alias])*
        let mut expect_name = true;
        let mut k = 0;
        while let Some(token) = names.get(k) {
            let ok = if expect_name {
                let ok = token.kind == Kind::Ident;
                if ok && self.is_ident(names.get(k + 1), "as") {
                    k += 2;
                    names.get(k).is_some_and(|t| t.kind == Kind::Ident)
                } else {
                    ok
                }
            } else {
                self.is_sym(Some(token), ",")
            };
            if !ok {
                let at = names.get(k).map_or(tag.span.clone(), |t| t.start..t.end);
                return Err(parse_error(at, "{% import %} takes macro names, each optionally `as alias`, separated by commas"));
            }
            expect_name = !expect_name;
            k += 1;
        }
        if names.is_empty() || expect_name {
            return Err(parse_error(tag.span.clone(), "{% import %} needs at least one macro to import: {% import \"macros.html\" greet %}"));
        }
        self.edit(name_token.start..name_token.end, "from");
        self.insert(file.end, " import");
        let last = names.last().map_or(file.end, |t| t.end);
        self.insert(last, " with context");
        // pongo2 runs an imported macro in the importer's context as it is
        // at the call, and none of the imported file's top level: the
        // macros are copied here, and Jinja's import (kept for the checks
        // of the file, and its errors) never runs.
        let mut pairs = Vec::new();
        let mut k = 0;
        while let Some(token) = names.get(k) {
            let alias = if self.is_ident(names.get(k + 1), "as") {
                k += 2;
                names.get(k)
            } else {
                Some(token)
            };
            if let Some(alias) = alias {
                pairs.push((self.text(token), self.text(alias)));
            }
            k += 2;
        }
        let quoted = self.text(file);
        let name = quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default();
        if let Some(copies) = self.copy_macros(name, &pairs, file.start..file.end)? {
            let (open, close) = dashes(tag);
            self.insert(
                tag.span.start,
                format!("{{%{open} if true %}}{copies}{{% endif %}}{{% if false %}}"),
            );
            self.insert(tag.span.end, format!("{{% endif {close}%}}"));
        }
        Ok(())
    }

    /// The macros `pairs` (name, alias) of the file `name`, translated, to
    /// be defined where it is imported; `None` to leave the import to
    /// Jinja's (no include root, a file that does not read or translate,
    /// a name it does not export, too deep: Jinja's import reports it).
    fn copy_macros(
        &mut self,
        name: &str,
        pairs: &[(&str, &str)],
        at: Range<usize>,
    ) -> Result<Option<String>, TemplateError> {
        let Some(includes) = self.includes else {
            return Ok(None);
        };
        if self.depth >= MAX_IMPORT_DEPTH {
            return Ok(None);
        }
        let Ok(candidates) = includes.jinja_candidates(name) else {
            return Ok(None);
        };
        let Ok(Some((_, file))) = includes.read_first(&candidates) else {
            return Ok(None);
        };
        let text = file.text;
        let Ok(translation) = translate_at(&text, None, self.depth + 1, self.copied) else {
            return Ok(None);
        };
        let mut copies = String::new();
        for (macro_name, alias) in pairs {
            if !translation.exports.contains(*macro_name) {
                return Ok(None);
            }
            let Some(source) = translation.macros.iter().find(|m| m.name == *macro_name) else {
                return Ok(None);
            };
            let (Some(before), Some(after)) = (
                text.get(source.span.start..source.name_at.start),
                text.get(source.name_at.end..source.span.end),
            ) else {
                return Ok(None);
            };
            let renamed = format!("{before}{alias}{after}");
            let Ok(copy) = translate_at(&renamed, Some(includes), self.depth + 1, self.copied)
            else {
                return Ok(None);
            };
            copies.push_str(&copy.edited.text);
        }
        let copied = self.copied.get().saturating_add(copies.len());
        self.copied.set(copied);
        if copied > includes.max_bytes() {
            return Err(parse_error(
                at,
                format!(
                    "the macros {{% import %}} copies add up to more than {}: the most one template may import",
                    crate::limits::describe_bytes(includes.max_bytes())
                ),
            ));
        }
        Ok(Some(copies))
    }

    /// `{% ssi "file" %}` prints the file as it is; `{% ssi "file" parsed
    /// %}` renders it as a template here (an include).
    fn ssi(&mut self, tag: &Tag, name_token: &Token, args: &[Token]) -> Result<(), TemplateError> {
        let file = args.first().filter(|t| t.kind == Kind::Str);
        let parsed = args.get(1).filter(|t| self.is_ident(Some(t), "parsed"));
        let (Some(file), true) = (file, args.len() == 1 + usize::from(parsed.is_some())) else {
            return Err(parse_error(tag.span.clone(), "{% ssi %} takes a file name in quotes and optionally `parsed`: {% ssi \"notes.txt\" %}"));
        };
        if let Some(parsed) = parsed {
            let site = NEXT_CYCLE.fetch_add(1, Ordering::Relaxed);
            self.edit(
                name_token.start..name_token.end,
                format!("with __django_site_path=__django_site({site}) %}}{{% include"),
            );
            self.edit(file.end..parsed.end, " %}{% endwith");
            return Ok(());
        }
        let quoted = self.text(file);
        let name = quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default();
        let at = file.start..file.end;
        let Some(includes) = self.includes else {
            return Err(parse_error(at, format!("{{% ssi %}} of \"{name}\" cannot be read: this prompt has no include root (it is not a file)"))
                .with_kind("unresolved-include")
                .suggest(Some("load the prompt from a file, or set an include root".into())));
        };
        let read = match self.ssi_read.get(name) {
            Some(text) => Ok((Some(text.clone()), Vec::new())),
            None => includes.jinja_candidates(name).and_then(|candidates| {
                let read = includes.read_first(&candidates)?;
                Ok((read.map(|(_, file)| file.text), candidates))
            }),
        };
        let text = match read {
            Ok((Some(text), _)) => text,
            Ok((None, tried)) => {
                let tried: Vec<String> = tried
                    .iter()
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .collect();
                return Err(parse_error(
                    at,
                    format!(
                        "cannot find \"{name}\" for {{% ssi %}}: no file {} in the include root",
                        tried.join(", ")
                    ),
                )
                .with_kind("unresolved-include"));
            }
            Err(message) => {
                return Err(parse_error(
                    at,
                    format!("cannot read \"{name}\" for {{% ssi %}}: {message}"),
                )
                .with_kind("unresolved-include"));
            }
        };
        self.ssi_bytes = self.ssi_bytes.saturating_add(text.len());
        if self.ssi_bytes > includes.max_bytes() {
            return Err(parse_error(
                at,
                format!(
                    "the files {{% ssi %}} prints add up to more than {}: the most one template may print this way",
                    crate::limits::describe_bytes(includes.max_bytes())
                ),
            ));
        }
        self.ssi_read.insert(name.to_string(), text.clone());
        // A block tag still (trim_blocks applies to it as to `ssi`), that
        // prints the text: an empty filter block whose filter gives it.
        let (open, close) = dashes(tag);
        self.edit(
            tag.span.clone(),
            format!(
                "{{%{open} filter __django_text({}) %}}{{% endfilter {close}%}}",
                string_literal(&text)
            ),
        );
        Ok(())
    }

    /// `{% extends "file" %}`: as Jinja's, but only at the top level (as
    /// pongo2 wants it), and what comes before it is never printed (pongo2
    /// renders only the blocks of a template that extends another).
    fn extends(&mut self, tag: &Tag, args: &[Token]) -> Result<(), TemplateError> {
        if !self.open.is_empty() {
            return Err(parse_error(
                tag.span.clone(),
                "{% extends %} must stand at the top level of the template, outside any block",
            ));
        }
        if args.len() != 1 || args.first().is_none_or(|t| t.kind != Kind::Str) {
            return Err(parse_error(
                tag.span.clone(),
                "{% extends %} takes one file name in quotes: {% extends \"base.html\" %}",
            ));
        }
        self.extends = true;
        if self
            .body
            .get(..tag.span.start)
            .is_some_and(|before| !before.is_empty())
        {
            self.insert(0, "{% if false %}");
            self.insert(tag.span.start, "{% endif %}");
        }
        // What follows, blocks aside, never runs in pongo2 (its `set`s
        // and imports neither): in Jinja it would. minijinja registers the
        // blocks inside the `if` all the same.
        self.insert(tag.span.end, "{% if false %}");
        let end = self.body.len();
        self.insert(end, "{% endif %}");
        Ok(())
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
            return self.as_output(tag, name_token, "__django_widthratio", "", values, &parts);
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

/// `text` as a Jinja string literal.
fn string_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
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

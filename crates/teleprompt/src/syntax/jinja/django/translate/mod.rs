//! Django/pongo2 text → Jinja text, as a list of [`Edit`]s on the body as
//! written. Text outside tags is never touched; inside `{{ … }}` and
//! `{% … %}` the edits are as small as they can be (a `:` becomes `(`, a
//! `)` is inserted), so an error minijinja finds in the translated text is
//! placed on the token the author wrote.
//!
//! Here: the tokens and tags the translator reads, the `Translator` and its
//! pass over the body (`run`). Its rooms: `scan.rs` (a tag's tokens and the
//! expression spellings inside them), `blocks.rs` (block tags dispatched and
//! matched with their ends), `tags.rs` (one translation per tag Jinja
//! spells otherwise), `files.rs` (`include`, `import`, `ssi`, `extends`),
//! `scopes.rs` (pongo2's scopes kept in Jinja's: loops, `set`, blocks).

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::atomic::AtomicU64;

use crate::diagnostics::TemplateError;
use crate::document::include_root::Includes;
use crate::syntax::edits::{Edit, Edited};

mod blocks;
mod files;
mod scan;
mod scopes;
mod tags;

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
            .suggest(Some(format!("add {{% {end} %}} where it should end")))
            .with_label(format!("this {} is never closed", open.name))
            .with_secondary(self.body.len()..self.body.len(), "the template ends here"));
        }
        Ok(())
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

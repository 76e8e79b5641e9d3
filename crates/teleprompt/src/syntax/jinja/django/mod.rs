//! The Django/pongo2 dialect (`syntax: django`, alias `pongo2`), as
//! Rapida's prompts are written for pongo2: translated into Jinja that
//! minijinja runs, with pongo2's filters and tags added to the environment.
//!
//! The translation is a list of [`Edit`](crate::syntax::edits::Edit)s on
//! the body as written, so every error minijinja reports on the translated
//! text is placed back on the line and column the author wrote.
//!
//! What is translated (`translate`):
//! - filter arguments after a colon: `{{ name|default:"there" }}`;
//! - `forloop.Counter`, `Counter0`, `Revcounter`, `Revcounter0`, `First`,
//!   `Last` (and Django's lower-case names) → `loop.index`, …;
//!   `forloop.Parentloop` → the outer loop, kept by a `{% set %}` after its
//!   `for` tag;
//! - `{% for x in xs reversed sorted %}`, `{% for k, v in map %}`,
//!   `{% empty %}`; maps iterate in the data's order (pongo2's is random)
//!   unless `sorted`;
//! - `{% ifequal a b %}`, `{% ifnotequal %}`, `{% ifchanged %}`,
//!   `{% with a=b c=d %}` and `{% with b as a %}`, `{% firstof %}`,
//!   `{% cycle %}` (a count per tag through the render; `as name [silent]`
//!   names the cycle, whose values are read when `{% cycle name %}` runs),
//!   `{% now "layout" %}` on the render's clock,
//!   `{% widthratio %}`, `{% spaceless %}`, `{% verbatim %}`,
//!   `{% comment %}`, `{% templatetag %}`, `{% autoescape on|off %}`,
//!   `{% filter a|b:c %}`, `{% macro … export %}`;
//! - other files, read by `jinja/includes.rs` as Jinja's are:
//!   `{% include "x" [if_exists] [with a=b … [only]] %}` → `{% with a=b %}
//!   {% include "x" [ignore missing] [without context] %}{% endwith %}`
//!   (there, a name the template reads that `only` does not give is set
//!   to nothing around the include), `{% extends %}` (the rest of the
//!   template, blocks aside, in `{% if false %}`: pongo2 runs only the
//!   blocks of a template that extends another), `{{ block.Super }}` →
//!   `super()`, `{% import "m" a, b as c %}` → the macros `a` and `b`
//!   (marked `export`) copied from the file and defined here (as `a` and
//!   `c`), so that they read the importer's names as they are at the call
//!   and nothing of the file's top level, as in pongo2; beside them, in
//!   `{% if false %}`, `{% from "m" import a, b as c with context %}` for
//!   the checks of the file and its errors; `{% ssi "f" parsed %}` → an
//!   include, and `{% ssi "f" %}` → the file's text, read here;
//! - `{% set %}` in a loop's scope is kept in a namespace of the loop for
//!   the next pass, and in a block's for the text after it (pongo2 has one
//!   scope for a loop's passes, none for a block); a block of a template
//!   that extends none gets a namespace before it, where the same block of
//!   a template extending it leaves what it sets, for the names read after
//!   the block;
//! - operators `&&`, `||`, `!`, `<>`, `^`.
//!
//! Refused with a parse error: `{% lorem %}` and the `random` filter (a
//! prompt renders the same way every time).
//!
//! Printing follows pongo2: a float prints with six decimals (Go's `%f`),
//! booleans as `True`/`False`, null as nothing. Output is never
//! HTML-escaped (prompts are not HTML); `escape` still escapes when asked,
//! while `safe`, `urlize` and `urlizetrunc` print their text unchanged and
//! `truncatechars_html`/`truncatewords_html` truncate like their plain
//! forms.

mod filters;
mod golayout;
mod translate;

#[cfg(test)]
mod tests;

use minijinja::Environment;

pub(crate) use translate::translate;

/// Filters this dialect adds (for the load-time check of filter names).
pub(crate) const FILTERS: &[&str] = &[
    "add",
    "addslashes",
    "capfirst",
    "center",
    "cut",
    "date",
    "time",
    "default",
    "default_if_none",
    "divisibleby",
    "escape",
    "e",
    "escapejs",
    "first",
    "last",
    "floatformat",
    "get_digit",
    "iriencode",
    "join",
    "length",
    "length_is",
    "linebreaks",
    "linebreaksbr",
    "linenumbers",
    "ljust",
    "rjust",
    "lower",
    "upper",
    "make_list",
    "phone2numeric",
    "pluralize",
    "removetags",
    "safe",
    "slice",
    "split",
    "stringformat",
    "striptags",
    "title",
    "truncatechars",
    "truncatechars_html",
    "truncatewords",
    "truncatewords_html",
    "urlencode",
    "urlize",
    "urlizetrunc",
    "wordcount",
    "wordwrap",
    "yesno",
    "float",
    "integer",
    "__django_spaceless",
    "__django_for",
    "__django_text",
];

/// Adds the dialect's filters, helper functions and printing rules to `env`.
pub(crate) fn register(env: &mut Environment<'static>) {
    filters::register(env);
    env.set_formatter(|out, state, value| {
        if value.as_str().is_some() || value.is_undefined() {
            return super::format_value(out, state, value);
        }
        if value.is_number() || value.is_none() || value.kind() == minijinja::value::ValueKind::Bool
        {
            let text = minijinja::Value::from(filters::to_string(value));
            return super::format_value(out, state, &text);
        }
        super::format_value(out, state, value)
    });
}

//! What each flavor of program has of its own at render time: the
//! [`Flavor`] a front end compiles to, and where the flavors differ.
//!
//! - [`go`]: Go's `fmt` printing rules, used by `print`, `printf` and by
//!   actions.
//! - [`handlebars`]: the Handlebars-only helpers of Semantic Kernel, Forge
//!   and Dotprompt, with their table, and JavaScript's printing of values.
//! - [`jinja`]: Jinja's particulars: what a lowered program leaves to
//!   minijinja, a chat template's messages.

pub(crate) mod go;
pub(crate) mod handlebars;
pub(crate) mod jinja;

use super::fail::fail;
use super::program::Span;
use super::render::Result;
use super::value::Value;
use crate::options::{Strictness, Syntax};

/// The syntax a program was compiled from ([`Flavor::of`] a [`Syntax`]),
/// for the few rules where Go and Handlebars differ at render time (how null and lists print, the words of
/// a missing-key error). Checked only off the hot paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// Go `text/template`.
    Go,
    /// Handlebars.
    Handlebars,
    /// Handlebars in a prompt from Semantic Kernel: booleans print as
    /// .NET and Python print them (`True`, `False`).
    HandlebarsSk,
    /// Jinja, lowered where every construct of the template has its exact
    /// meaning here (`syntax/jinja/lower/`). Such a program renders only
    /// what it can render as Jinja does: values print as Python prints
    /// them, or not at all, and anything else is an error, after which
    /// the template renders on minijinja.
    Jinja,
    /// A Hugging Face chat template lowered as [`Flavor::Jinja`] is: a
    /// message of the data's `messages` also reads as `transformers` hands
    /// it over (a key whose value is null is absent; the reasoning aliases
    /// are minijinja's to read).
    ChatTemplate,
}

impl Flavor {
    /// The flavor a template of `syntax` compiles to, if the engine runs
    /// that syntax at all (a Django template runs on minijinja only).
    pub(crate) fn of(syntax: Syntax) -> Option<Flavor> {
        match syntax {
            Syntax::Go => Some(Flavor::Go),
            Syntax::Handlebars => Some(Flavor::Handlebars),
            Syntax::Jinja => Some(Flavor::Jinja),
            Syntax::ChatTemplate => Some(Flavor::ChatTemplate),
            Syntax::Django => None,
        }
    }

    /// Lowered from Jinja.
    #[inline]
    pub(crate) fn is_jinja(self) -> bool {
        matches!(self, Flavor::Jinja | Flavor::ChatTemplate)
    }

    /// Go: `$` is the frame's first slot, and a path read from it starts
    /// bare.
    #[inline]
    pub(crate) fn is_go(self) -> bool {
        self == Flavor::Go
    }

    /// Handlebars: an object is true even when empty, a list's elements
    /// read by key (`list.[0]`) and its `length`, and a missing key is told
    /// in Handlebars words.
    #[inline]
    pub(crate) fn is_handlebars(self) -> bool {
        matches!(self, Flavor::Handlebars | Flavor::HandlebarsSk)
    }

    /// A chat template: the data's messages read as `transformers` hands
    /// them over.
    #[inline]
    pub(crate) fn reads_messages(self) -> bool {
        self == Flavor::ChatTemplate
    }
}

/// Prints a value that is neither a string nor an integer (those print
/// alike in every flavor) as `flavor` prints it.
#[inline(never)]
pub(in crate::engine) fn print(
    flavor: Flavor,
    strictness: Strictness,
    out: &mut String,
    value: &Value<'_>,
    span: Span,
) -> Result<()> {
    match flavor {
        Flavor::Go => go::print(out, value, strictness, span),
        Flavor::Handlebars => handlebars::print(out, value, strictness, span),
        Flavor::HandlebarsSk => match value {
            Value::Bool(flag) => {
                out.push_str(if *flag { "True" } else { "False" });
                Ok(())
            }
            other => handlebars::print(out, other, strictness, span),
        },
        Flavor::Jinja | Flavor::ChatTemplate => jinja::print(out, value, span),
    }
}

/// Printing a missing value: an error unless the template is lenient
/// (Go and Handlebars).
pub(in crate::engine) fn print_missing(strictness: Strictness, span: Span) -> Result<()> {
    if strictness != Strictness::Lenient {
        return fail(span, "the value is missing: there is nothing to print");
    }
    Ok(())
}

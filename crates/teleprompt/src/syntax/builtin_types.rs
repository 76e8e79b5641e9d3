//! Load-time checks of literal arguments to built-in functions and
//! helpers, shared by the Go and Handlebars front ends: a literal (string,
//! number, boolean, null) whose type the render would refuse is a `parse`
//! error of kind `wrong-type`, placed on the argument. Paths, variables and
//! subexpressions are not checked: their type is known only at render.
//!
//! Each entry follows what `engine/render.rs` and `engine/helpers.rs`
//! accept, so that nothing the render takes is flagged:
//!
//! | function | argument (engine order) | wants |
//! |---|---|---|
//! | `lower`, `upper`, `trim`, `role` | 1 | a string |
//! | `media` | 1, 2 | a string |
//! | `join` | separator, list | a string, a list |
//! | `printf` | 1 (the format) | a string |
//! | Go `len` | 1 | a string, a list or a map |
//! | Go `index` (with an index) | 1 | a string, a list or a map |
//! | Go `slice` | 1, then the indexes | a string or a list, then integers |
//! | Handlebars `inc` | 1 | an integer |
//! | Handlebars `range` | 1, 2 | an integer, or a string that reads as one |
//! | SK `add`, `subtract`, `multiply`, `divide`, `lessThan`, `lessThanOrEqual`, `greaterThan`, `greaterThanOrEqual` | every | a number, or a string that reads as one |
//! | Dotprompt `json … indent=N` | indent | an integer |
//!
//! And one rule of another kind: the name given to `role` must be a
//! literal of the template ([`role_not_literal`]): a role chosen by data
//! could open a system message.

use std::ops::Range;

use crate::diagnostics::TemplateError;
use crate::engine::flavor::handlebars::Helper;
use crate::engine::program::{Const, Expr, Func};

/// What the render accepts of an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    String,
    /// A number, or a string that reads as one (Semantic Kernel converts).
    Number,
    /// An integer, strictly.
    Integer,
    /// An integer, or a string that reads as one.
    IntegerOrText,
    List,
    /// A string or a list.
    Sequence,
    /// A string, a list or a map.
    Collection,
}

impl Want {
    fn describe(self) -> &'static str {
        match self {
            Want::String => "a string",
            Want::Number => "a number",
            Want::Integer | Want::IntegerOrText => "an integer",
            Want::List => "a list",
            Want::Sequence => "a string or a list",
            Want::Collection => "a string, a list or a map",
        }
    }

    /// Whether the literal `value` fits.
    pub(crate) fn fits(self, value: &Const) -> bool {
        match (self, value) {
            (Want::String | Want::Sequence | Want::Collection, Const::Str(_)) => true,
            (Want::Number, Const::Int(_) | Const::Float(_)) => true,
            (Want::Number, Const::Str(text)) => {
                let text = text.trim();
                text.parse::<i64>().is_ok() || text.parse::<f64>().is_ok_and(f64::is_finite)
            }
            (Want::Integer | Want::IntegerOrText, Const::Int(_)) => true,
            (Want::IntegerOrText, Const::Str(text)) => text.trim().parse::<i64>().is_ok(),
            _ => false,
        }
    }
}

/// What argument `index` (from 0, in the engine's order) of `func`, called
/// with `count` arguments, must be; `None` when the render takes anything
/// (or when this check does not know).
pub(crate) fn wants(func: Func, index: usize, count: usize) -> Option<Want> {
    match (func, index) {
        (Func::Lower | Func::Upper | Func::Trim | Func::Role | Func::Media | Func::Section, _) => {
            Some(Want::String)
        }
        (Func::Join, 0) | (Func::Printf, 0) => Some(Want::String),
        (Func::Join, 1) => Some(Want::List),
        (Func::Len, 0) => Some(Want::Collection),
        // `index x` alone gives `x` back, whatever it is.
        (Func::Index, 0) if count > 1 => Some(Want::Collection),
        (Func::Slice, 0) => Some(Want::Sequence),
        (Func::Slice, _) => Some(Want::Integer),
        (Func::Hbs(Helper::Inc), 0) | (Func::Hbs(Helper::JsonIndent), 1) => Some(Want::Integer),
        (Func::Hbs(Helper::Range), _) => Some(Want::IntegerOrText),
        (
            Func::Hbs(
                Helper::Add
                | Helper::Subtract
                | Helper::Multiply
                | Helper::Divide
                | Helper::NumLt
                | Helper::NumLe
                | Helper::NumGt
                | Helper::NumGe,
            ),
            _,
        ) => Some(Want::Number),
        _ => None,
    }
}

/// Where an argument is, for a message.
pub(crate) struct Place {
    /// Its span in the source; `None` when it has none of its own (a
    /// piped value), and the error goes on the call.
    pub span: Option<Range<usize>>,
    /// Its name in the message: `argument 2`, `indent`.
    pub label: String,
}

/// The `wrong-type` errors of a call of `func` (written `name`) with the
/// lowered `args`: one per literal argument that cannot fit. `place` says
/// where argument `index` (engine order) is; `call` is the call's span;
/// `null` is how the syntax writes null (`nil`, `null`).
pub(crate) fn check(
    func: Func,
    name: &str,
    args: &[Expr],
    src: &str,
    call: &Range<usize>,
    place: impl Fn(usize) -> Place,
) -> Vec<TemplateError> {
    let mut errors = Vec::new();
    if let (Func::Role, Some(first)) = (func, args.first()) {
        if !matches!(first, Expr::Const(_)) {
            let Place { span, .. } = place(0);
            errors.push(role_not_literal(span.unwrap_or_else(|| call.clone())));
        }
    }
    for (index, arg) in args.iter().enumerate() {
        let Expr::Const(value) = arg else {
            continue;
        };
        let Some(want) = wants(func, index, args.len()) else {
            continue;
        };
        if want.fits(value) {
            continue;
        }
        let Place { span, label } = place(index);
        let text = span.as_ref().and_then(|span| src.get(span.clone()));
        let got = describe(value, text);
        errors.push(
            TemplateError::parse(
                Some(span.unwrap_or_else(|| call.clone())),
                format!("{name} wants {} as its {label}, got {got}", want.describe()),
            )
            .with_kind("wrong-type"),
        );
    }
    errors
}

/// The error of a role name that is not a literal of the template, at
/// `span`: data that could choose the role could open a system message.
pub(crate) fn role_not_literal(span: Range<usize>) -> TemplateError {
    TemplateError::parse(
        Some(span),
        "the role must be a literal of the template (\"system\", \"user\", \"assistant\"), \
         not a value: data must not choose who speaks",
    )
    .with_kind("role-not-literal")
    .suggest(Some(
        "to choose between roles, write each as a literal in a branch of an if".to_string(),
    ))
}

/// A literal as a message shows it: `the number 5`, `the string "a"`.
fn describe(value: &Const, text: Option<&str>) -> String {
    let shown = |fallback: String| text.map_or(fallback, str::to_string);
    match value {
        Const::Null => shown("null".to_string()),
        Const::Bool(b) => format!("the boolean {}", shown(b.to_string())),
        Const::Int(i) => format!("the number {}", shown(i.to_string())),
        Const::Float(f) => format!("the number {}", shown(f.to_string())),
        Const::Str(s) => format!("the string {}", shown(format!("{s:?}"))),
        Const::List(_) => "a list".to_string(),
        Const::Map(_) => "a map".to_string(),
    }
}

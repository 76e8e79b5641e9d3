//! Load-time checks of literal arguments to Jinja's built-in filters and
//! functions: a literal (string, number, boolean, none, or a list or map
//! written out) that the render would certainly refuse is a `parse` error
//! of kind `wrong-type`, placed on the literal. Variables and computed
//! values are not checked: their type is known only at render.
//!
//! Every entry was checked by rendering it (minijinja 3.0.5 with
//! teleprompt's filters): only what fails there is listed, and minijinja's
//! leniencies are kept (`'abc' | int` is 0, `none | list` is `[]`,
//! `indent('> ')` takes a string, `batch(2.0)` an integral float). Tests
//! are not checked: a test given the wrong type is false, not an error.

use std::ops::Range;

use minijinja::machinery::ast;
use minijinja::value::ValueKind;

use super::arity::Callable;

/// What a literal is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Lit {
    Str,
    Int(i128),
    Float(f64),
    Bool,
    None,
    List,
    Map,
}

/// The literal `expr` is, if it is one.
pub(super) fn literal(expr: &ast::Expr<'_>) -> Option<Lit> {
    match expr {
        ast::Expr::Const(c) => {
            let value = &c.value;
            match value.kind() {
                ValueKind::String => Some(Lit::Str),
                ValueKind::Bool => Some(Lit::Bool),
                ValueKind::None => Some(Lit::None),
                ValueKind::Number if value.is_integer() => {
                    i128::try_from(value.clone()).ok().map(Lit::Int)
                }
                ValueKind::Number => f64::try_from(value.clone()).ok().map(Lit::Float),
                ValueKind::Seq => Some(Lit::List),
                ValueKind::Map => Some(Lit::Map),
                _ => None,
            }
        }
        ast::Expr::List(_) | ast::Expr::Tuple(_) => Some(Lit::List),
        ast::Expr::Map(_) => Some(Lit::Map),
        _ => None,
    }
}

/// What the render takes, as the literals it refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    /// `round`, `abs`, `filesizeformat` input.
    Number,
    /// `length`, `count` input.
    Sized,
    /// `first`, `list`, `join`, `batch` … input: a string, list or map
    /// (`none` is taken where marked lenient).
    Iterable { none_ok: bool },
    /// `items`, `dictsort` input.
    Mapping,
    /// `split`, `lines` input; `strftime_now`, `role`.
    Text,
    /// `split`'s separator (none: whitespace).
    Separator,
    /// A count (`batch`, `slice`, `truncate`): a non-negative integer or
    /// an integral float; `none` where marked lenient.
    Count { none_ok: bool },
    /// `round`'s precision: an integer, an integral float, or none.
    Precision,
    /// `range`: integers (integral floats, booleans).
    RangeBound,
    /// `indent`'s width: an integer or a string (and none by keyword).
    Width { none_ok: bool },
}

fn integral(f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0
}

impl Want {
    fn describe(self) -> &'static str {
        match self {
            Want::Number => "a number",
            Want::Sized => "a string, a list or a map",
            Want::Iterable { .. } => "a string, a list or a map",
            Want::Mapping => "a map",
            Want::Text | Want::Separator => "a string",
            Want::Count { .. } => "a non-negative integer",
            Want::Precision | Want::RangeBound => "an integer",
            Want::Width { .. } => "an integer or a string",
        }
    }

    /// Whether the render certainly refuses `lit`.
    fn refuses(self, lit: Lit) -> bool {
        use Lit::*;
        match self {
            Want::Number => matches!(lit, Str | Bool | None | List | Map),
            Want::Sized => matches!(lit, Int(_) | Float(_) | Bool | None),
            Want::Iterable { none_ok } => {
                matches!(lit, Int(_) | Float(_) | Bool) || (!none_ok && lit == None)
            }
            Want::Mapping => matches!(lit, Str | Int(_) | Float(_) | Bool | List),
            Want::Text => matches!(lit, Int(_) | Float(_) | Bool | None | List | Map),
            Want::Separator => matches!(lit, Int(_) | Float(_) | Bool | List | Map),
            Want::Count { none_ok } => match lit {
                Str | List | Map => true,
                None => !none_ok,
                Int(i) => i < 0,
                Float(f) => !integral(f) || f < 0.0,
                Bool => false,
            },
            Want::Precision | Want::RangeBound => match lit {
                Str | List | Map => true,
                None => self == Want::RangeBound,
                Float(f) => !integral(f),
                Int(_) | Bool => false,
            },
            // By keyword, `none` is taken and only a list was seen refused.
            Want::Width { none_ok: true } => lit == List,
            Want::Width { none_ok: false } => matches!(lit, Float(_) | None | List | Map),
        }
    }
}

/// Where an argument is in a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slot<'a> {
    /// A filter's input, the value before `|`.
    Input,
    /// Positional argument `n` (from 0, after the input).
    Pos(usize),
    /// A keyword argument.
    Key(&'a str),
}

impl Slot<'_> {
    fn label(self) -> String {
        match self {
            Slot::Input => "input".to_string(),
            Slot::Pos(n) => format!("argument {}", n + 1),
            Slot::Key(key) => format!("`{key}`"),
        }
    }
}

const ITERABLE: Want = Want::Iterable { none_ok: false };
const ITERABLE_OR_NONE: Want = Want::Iterable { none_ok: true };

/// The checked filters: (names, slot, want).
const FILTERS: &[(&[&str], Slot<'static>, Want)] = &[
    (
        &["round", "abs", "filesizeformat"],
        Slot::Input,
        Want::Number,
    ),
    (&["length", "count"], Slot::Input, Want::Sized),
    (&["first", "last", "reverse"], Slot::Input, ITERABLE),
    (
        &[
            "list", "join", "sort", "min", "max", "unique", "batch", "slice",
        ],
        Slot::Input,
        ITERABLE_OR_NONE,
    ),
    (&["items", "dictsort"], Slot::Input, Want::Mapping),
    (&["split", "lines"], Slot::Input, Want::Text),
    (&["split"], Slot::Pos(0), Want::Separator),
    (
        &["batch", "slice"],
        Slot::Pos(0),
        Want::Count { none_ok: false },
    ),
    (&["truncate"], Slot::Pos(0), Want::Count { none_ok: true }),
    (
        &["truncate"],
        Slot::Key("length"),
        Want::Count { none_ok: true },
    ),
    (&["round"], Slot::Pos(0), Want::Precision),
    (&["round"], Slot::Key("precision"), Want::Precision),
    (&["indent"], Slot::Pos(0), Want::Width { none_ok: false }),
    (
        &["indent"],
        Slot::Key("width"),
        Want::Width { none_ok: true },
    ),
];

/// What the built-in `name` wants at `slot`; `None` when it is not checked.
fn wants(kind: Callable, name: &str, slot: Slot<'_>) -> Option<Want> {
    match kind {
        Callable::Filter => FILTERS
            .iter()
            .find(|(names, at, _)| names.contains(&name) && *at == slot)
            .map(|(_, _, want)| *want),
        Callable::Function => match (name, slot) {
            ("range", Slot::Pos(_)) => Some(Want::RangeBound),
            ("strftime_now" | "role", Slot::Pos(0)) => Some(Want::Text),
            _ => None,
        },
        Callable::Test => None,
    }
}

/// A literal as a message shows it.
fn describe(lit: Lit, text: &str) -> String {
    match lit {
        Lit::Str => format!("the string {text}"),
        Lit::Int(_) | Lit::Float(_) => format!("the number {text}"),
        Lit::Bool => format!("the boolean {text}"),
        Lit::None => text.to_string(),
        Lit::List => "a list".to_string(),
        Lit::Map => "a map".to_string(),
    }
}

/// Why the literal `lit` at `slot` of the built-in `name` cannot fit, if
/// it cannot: the message, placed on the literal's `span` in `body`.
pub(super) fn mismatch(
    kind: Callable,
    name: &str,
    slot: Slot<'_>,
    lit: Lit,
    body: &str,
    span: &Range<usize>,
) -> Option<String> {
    let want = wants(kind, name, slot)?;
    if !want.refuses(lit) {
        return None;
    }
    let text = body.get(span.clone()).unwrap_or("");
    Some(format!(
        "`{name}` wants {} as its {}, got {}",
        want.describe(),
        slot.label(),
        describe(lit, text)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leniencies_are_kept() {
        let f = Callable::Filter;
        assert!(wants(f, "int", Slot::Input).is_none());
        assert!(!Want::Count { none_ok: false }.refuses(Lit::Float(2.0)));
        assert!(Want::Count { none_ok: false }.refuses(Lit::Float(2.5)));
        assert!(!ITERABLE_OR_NONE.refuses(Lit::None));
        assert!(!ITERABLE.refuses(Lit::Str));
        assert!(!Want::Width { none_ok: false }.refuses(Lit::Str));
        assert!(wants(Callable::Test, "divisibleby", Slot::Pos(0)).is_none());
    }
}

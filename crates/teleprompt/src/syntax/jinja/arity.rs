//! How many arguments the built-in filters, tests and functions take, as
//! teleprompt registers them for Jinja (minijinja 3.1.0's built-ins,
//! minijinja-contrib's `truncate`, `filesizeformat` and `striptags`, and
//! teleprompt's own), so a call that cannot fit is a load error
//! (`parse/wrong-arity`) rather than a render error.
//!
//! Each count leaves out a filter's or test's input: `x | join(",")` is
//! `join(x, ",")`, one argument here. Only names whose signatures were read
//! in the source are listed; a name not listed is not checked (host
//! functions are checked against their own signatures).

use crate::options::Syntax;

/// The keyword arguments a callable takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Keywords {
    /// None: minijinja passes `k=v` on as one more positional argument,
    /// so a keyword counts as one argument past the positional ones.
    No,
    /// These names only (the callable rejects any other).
    Names(&'static [&'static str]),
    /// Not checked (the callable takes a value or the keywords as they
    /// come).
    Any,
}

/// What a callable takes: at least `min` and at most `max` (`None`: no
/// bound) positional arguments, and `keywords`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Arity {
    pub(super) min: usize,
    pub(super) max: Option<usize>,
    pub(super) keywords: Keywords,
}

const fn takes(min: usize, max: usize, keywords: Keywords) -> Arity {
    Arity {
        min,
        max: Some(max),
        keywords,
    }
}

const NONE: Arity = takes(0, 0, Keywords::No);
const ONE: Arity = takes(1, 1, Keywords::No);

/// The built-in filters (by name, after the input).
const FILTERS: &[(&str, Arity)] = &[
    ("safe", NONE),
    ("escape", NONE),
    ("e", NONE),
    ("lower", NONE),
    ("upper", NONE),
    ("title", NONE),
    ("capitalize", NONE),
    ("replace", takes(2, 2, Keywords::No)),
    ("length", NONE),
    ("count", NONE),
    (
        "dictsort",
        takes(0, 3, Keywords::Names(&["by", "case_sensitive", "reverse"])),
    ),
    ("items", NONE),
    ("reverse", NONE),
    ("trim", takes(0, 1, Keywords::No)),
    ("join", takes(0, 2, Keywords::Names(&["d", "attribute"]))),
    ("split", takes(0, 2, Keywords::No)),
    ("lines", NONE),
    ("default", takes(0, 2, Keywords::Any)),
    ("d", takes(0, 2, Keywords::Any)),
    (
        "round",
        takes(0, 2, Keywords::Names(&["precision", "method"])),
    ),
    ("abs", NONE),
    ("int", takes(0, 2, Keywords::Names(&["default", "base"]))),
    ("float", takes(0, 1, Keywords::Names(&["default"]))),
    ("attr", ONE),
    ("first", NONE),
    ("last", NONE),
    (
        "min",
        takes(0, 0, Keywords::Names(&["case_sensitive", "attribute"])),
    ),
    (
        "max",
        takes(0, 0, Keywords::Names(&["case_sensitive", "attribute"])),
    ),
    (
        "sort",
        takes(
            0,
            3,
            Keywords::Names(&["case_sensitive", "reverse", "attribute"]),
        ),
    ),
    ("list", NONE),
    ("string", NONE),
    ("bool", NONE),
    ("batch", takes(1, 2, Keywords::No)),
    ("slice", takes(1, 2, Keywords::No)),
    ("sum", takes(0, 2, Keywords::Names(&["attribute", "start"]))),
    (
        "indent",
        takes(0, 3, Keywords::Names(&["width", "first", "blank"])),
    ),
    (
        "groupby",
        takes(
            0,
            3,
            Keywords::Names(&["attribute", "default", "case_sensitive"]),
        ),
    ),
    (
        "unique",
        takes(0, 2, Keywords::Names(&["attribute", "case_sensitive"])),
    ),
    ("pprint", NONE),
    ("toJSON", takes(0, 1, Keywords::Names(&["indent"]))),
    (
        "truncate",
        takes(
            0,
            4,
            Keywords::Names(&["length", "killwords", "end", "leeway"]),
        ),
    ),
    ("filesizeformat", takes(0, 1, Keywords::Names(&["binary"]))),
    ("striptags", NONE),
    ("center", takes(0, 1, Keywords::Names(&["width"]))),
    ("wordcount", NONE),
    (
        "wordwrap",
        takes(
            0,
            4,
            Keywords::Names(&[
                "width",
                "break_long_words",
                "wrapstring",
                "break_on_hyphens",
            ]),
        ),
    ),
    (
        "urlize",
        takes(
            0,
            5,
            Keywords::Names(&[
                "trim_url_limit",
                "nofollow",
                "target",
                "rel",
                "extra_schemes",
            ]),
        ),
    ),
    ("xmlattr", takes(0, 1, Keywords::No)),
];

/// `tojson`'s keywords, in both of its forms.
const TOJSON_KEYWORDS: Keywords =
    Keywords::Names(&["indent", "ensure_ascii", "separators", "sort_keys"]);

/// The built-in tests (by name, after the tested value).
const TESTS: &[(&str, Arity)] = &[
    ("undefined", NONE),
    ("defined", NONE),
    ("none", NONE),
    ("safe", NONE),
    ("escaped", NONE),
    ("boolean", NONE),
    ("odd", NONE),
    ("even", NONE),
    ("divisibleby", ONE),
    ("number", NONE),
    ("integer", NONE),
    ("int", NONE),
    ("float", NONE),
    ("string", NONE),
    ("sequence", NONE),
    ("iterable", NONE),
    ("mapping", NONE),
    ("startingwith", ONE),
    ("endingwith", ONE),
    ("lower", NONE),
    ("upper", NONE),
    ("sameas", ONE),
    ("eq", ONE),
    ("equalto", ONE),
    ("==", ONE),
    ("ne", ONE),
    ("!=", ONE),
    ("lt", ONE),
    ("lessthan", ONE),
    ("<", ONE),
    ("le", ONE),
    ("<=", ONE),
    ("gt", ONE),
    ("greaterthan", ONE),
    (">", ONE),
    ("ge", ONE),
    (">=", ONE),
    ("in", ONE),
    ("true", NONE),
    ("false", NONE),
    ("filter", NONE),
    ("test", NONE),
    ("callable", NONE),
];

/// The global functions.
const FUNCTIONS: &[(&str, Arity)] = &[
    ("range", takes(1, 3, Keywords::No)),
    ("strftime_now", ONE),
    ("raise_exception", ONE),
    ("role", takes(1, 2, Keywords::No)),
    ("history", NONE),
    ("media", takes(2, 2, Keywords::No)),
    ("cache_breakpoint", NONE),
    ("cycler", takes(1, usize::MAX, Keywords::No)),
    ("joiner", takes(0, 1, Keywords::No)),
];

/// What kind of callable a call names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Callable {
    Filter,
    Test,
    Function,
}

fn find(table: &[(&str, Arity)], name: &str) -> Option<Arity> {
    table
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, arity)| *arity)
}

/// What the built-in `name` takes in `dialect`; `None` for a name that is
/// not checked.
pub(super) fn arity(kind: Callable, name: &str, dialect: Syntax) -> Option<Arity> {
    match kind {
        Callable::Filter => {
            // The Django dialect's filters replace some of Jinja's.
            if dialect == Syntax::Django && super::django::FILTERS.contains(&name) {
                return None;
            }
            match (name, dialect) {
                // `transformers`' `tojson(ensure_ascii, indent, separators,
                // sort_keys)`; Jinja2's `tojson(indent)`.
                ("tojson", Syntax::ChatTemplate) => Some(takes(0, 4, TOJSON_KEYWORDS)),
                ("tojson", _) => Some(takes(0, 1, TOJSON_KEYWORDS)),
                _ => find(FILTERS, name),
            }
        }
        Callable::Test => find(TESTS, name),
        Callable::Function => find(FUNCTIONS, name),
    }
}

/// Why a call of `name` with `positional` arguments and these keyword
/// names cannot fit `arity`, if it cannot.
pub(super) fn mismatch(
    name: &str,
    arity: Arity,
    positional: usize,
    keywords: &[&str],
) -> Option<(String, Option<String>)> {
    let count = |n: usize| match n {
        0 => "no arguments".to_string(),
        1 => "1 argument".to_string(),
        n => format!("{n} arguments"),
    };
    let want = match arity.max {
        Some(max) if max == arity.min => count(max),
        Some(max) => format!("{} to {max} arguments", arity.min),
        None => format!("at least {}", count(arity.min)),
    };
    if positional < arity.min || arity.max.is_some_and(|max| positional > max) {
        return Some((format!("`{name}` takes {want}, got {positional}"), None));
    }
    match arity.keywords {
        Keywords::No if !keywords.is_empty() && arity.max.is_some_and(|max| positional >= max) => {
            Some((format!("`{name}` takes no keyword arguments"), None))
        }
        Keywords::Names(names) => keywords.iter().find(|key| !names.contains(key)).map(|key| {
            let suggestion = crate::diagnostics::closest(key, names.iter().copied())
                .map(|close| format!("did you mean `{close}`?"))
                .or_else(|| Some(format!("it takes {}", quoted(names))));
            (
                format!("`{name}` takes no keyword argument `{key}`"),
                suggestion,
            )
        }),
        _ => None,
    }
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_leave_out_the_input() {
        let upper = arity(Callable::Filter, "upper", Syntax::Jinja).unwrap();
        assert_eq!(
            mismatch("upper", upper, 1, &[]).unwrap().0,
            "`upper` takes no arguments, got 1"
        );
        assert!(mismatch("upper", upper, 0, &[]).is_none());
        let range = arity(Callable::Function, "range", Syntax::Jinja).unwrap();
        assert_eq!(
            mismatch("range", range, 4, &[]).unwrap().0,
            "`range` takes 1 to 3 arguments, got 4"
        );
        let join = arity(Callable::Filter, "join", Syntax::Jinja).unwrap();
        assert!(mismatch("join", join, 1, &["attribute"]).is_none());
        assert!(mismatch("join", join, 0, &["sep"]).is_some());
    }

    #[test]
    fn django_filters_are_not_checked() {
        assert!(arity(Callable::Filter, "join", Syntax::Django).is_none());
        assert!(arity(Callable::Filter, "tojson", Syntax::ChatTemplate)
            .is_some_and(|arity| arity.max == Some(4)));
    }

    #[test]
    fn every_listed_name_is_known() {
        for (name, _) in FILTERS {
            assert!(super::super::names::FILTERS.contains(name), "{name}");
        }
        for (name, _) in TESTS {
            assert!(super::super::names::TESTS.contains(name), "{name}");
        }
    }
}

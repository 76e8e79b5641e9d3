//! Jinja2's `varargs` and `kwargs` in macros, which minijinja lacks: a
//! macro whose body reads them takes extra positional arguments (the
//! tuple `varargs`) and extra keyword arguments (the dict `kwargs`).
//!
//! The load-time walk (`check`) finds such macros; the text minijinja
//! compiles gives each two more parameters, `varargs=()` and `kwargs={}`,
//! and sets the macro's name, after `{% endmacro %}`, to a
//! [`CatchingMacro`] around it, which sorts each call's arguments into
//! the declared ones and the extras: `{% macro m(a) %}…{% endmacro %}{%
//! set m = __catching_macro(m, true, false) %}`. Its `arguments` are the
//! declared ones, as in Jinja2; a macro that reads neither stays
//! minijinja's (too many arguments are an error, as in Jinja2).

use std::ops::Range;
use std::sync::Arc;

use crate::syntax::edits::Edit;

use minijinja::value::{Kwargs, Object, ObjectRepr, Tuple};
use minijinja::{Environment, Error, ErrorKind, State, Value as JValue};

/// The function the rewritten text calls after a catching macro.
pub(super) const CATCHING_MACRO: &str = "__catching_macro";

/// The parameters added to a catching macro's signature.
pub(super) const EXTRA_PARAMETERS: &str = "varargs=(), kwargs={}";

pub(super) fn register(env: &mut Environment<'static>) {
    env.add_function(
        CATCHING_MACRO,
        |inner: JValue, varargs: bool, kwargs: bool| -> Result<JValue, Error> {
            let declared: Vec<JValue> = match inner.get_attr("arguments")?.try_iter() {
                Ok(names) => names
                    .filter(|name| !matches!(name.as_str(), Some("varargs" | "kwargs")))
                    .collect(),
                Err(_) => return Ok(inner),
            };
            Ok(JValue::from_object(CatchingMacro {
                inner,
                declared,
                varargs,
                kwargs,
            }))
        },
    );
}

/// The edits that make the macro at `span` of `text` (minijinja's span:
/// from `macro` to `endmacro`, without the tags' `{%` and `%}`) catch extra arguments: two parameters
/// more, and the macro's name set to a [`CatchingMacro`] after it (with
/// the `-` of `endmacro`'s `-%}`, so the text after it is trimmed alike).
pub(super) fn catching_edits(
    text: &str,
    span: Range<usize>,
    name: &str,
    varargs: bool,
    kwargs: bool,
) -> Vec<Edit> {
    let Some(tag) = text.get(span.clone()) else {
        return Vec::new();
    };
    let Some(head) = tag.find("%}").and_then(|end| tag.get(..end)) else {
        return Vec::new();
    };
    let Some(paren) = head.rfind(')') else {
        return Vec::new();
    };
    let before = head.get(..paren).unwrap_or("").trim_end();
    let comma = if before.ends_with(['(', ',']) {
        ""
    } else {
        ", "
    };
    // The span ends before `endmacro`'s `%}`.
    let Some(close) = text.get(span.end..).and_then(|rest| rest.find("%}")) else {
        return Vec::new();
    };
    let end = span.end + close;
    let trim = match text.get(..end).is_some_and(|before| before.ends_with('-')) {
        true => "-",
        false => "",
    };
    vec![
        Edit {
            original: span.start + paren..span.start + paren,
            replacement: format!("{comma}{EXTRA_PARAMETERS}"),
        },
        Edit {
            original: end + 2..end + 2,
            replacement: format!(
                "{{% set {name} = {CATCHING_MACRO}({name}, {varargs}, {kwargs}) {trim}%}}"
            ),
        },
    ]
}

/// A macro that reads `varargs` or `kwargs`, around minijinja's.
#[derive(Debug)]
pub(super) struct CatchingMacro {
    inner: JValue,
    /// The parameters the template declares.
    declared: Vec<JValue>,
    varargs: bool,
    kwargs: bool,
}

impl CatchingMacro {
    fn name(&self) -> String {
        self.inner
            .get_attr("name")
            .map(|name| name.to_string())
            .unwrap_or_default()
    }
}

impl Object for CatchingMacro {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        match key.as_str()? {
            "arguments" => Some(JValue::from(self.declared.clone())),
            "catch_varargs" => Some(JValue::from(self.varargs)),
            "catch_kwargs" => Some(JValue::from(self.kwargs)),
            other => self.inner.get_attr(other).ok(),
        }
    }

    fn call(self: &Arc<Self>, state: &mut State<'_, '_>, args: &[JValue]) -> Result<JValue, Error> {
        let (positional, given) = match args.split_last() {
            Some((last, rest)) if last.is_kwargs() => (rest, Some(Kwargs::try_from(last.clone())?)),
            _ => (args, None),
        };
        let declared = self.declared.len();
        let (passed, extra) = positional.split_at(positional.len().min(declared));
        if !extra.is_empty() && !self.varargs {
            return Err(Error::new(
                ErrorKind::TooManyArguments,
                format!(
                    "macro '{}' takes not more than {declared} argument(s)",
                    self.name()
                ),
            ));
        }
        super::growth::check_items(extra.len())?;
        let mut keywords: Vec<(String, JValue)> = Vec::new();
        let mut caught: Vec<(JValue, JValue)> = Vec::new();
        if let Some(given) = &given {
            for key in given.args() {
                let value: JValue = given.get(key)?;
                let known =
                    key == "caller" || self.declared.iter().any(|name| name.as_str() == Some(key));
                if known {
                    keywords.push((key.to_string(), value));
                } else if self.kwargs {
                    caught.push((JValue::from(key), value));
                } else {
                    return Err(Error::new(
                        ErrorKind::TooManyArguments,
                        format!("macro '{}' takes no keyword argument '{key}'", self.name()),
                    ));
                }
            }
        }
        keywords.push((
            "varargs".to_string(),
            JValue::from(Tuple::from(extra.to_vec())),
        ));
        keywords.push(("kwargs".to_string(), JValue::from_pairs(caught)));
        let mut call: Vec<JValue> = passed.to_vec();
        call.push(JValue::from(keywords.into_iter().collect::<Kwargs>()));
        self.inner.call(state, &call)
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.inner)
    }
}

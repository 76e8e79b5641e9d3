//! Load-time checks of host-function calls, shared by the Go and
//! Handlebars front ends: a call that cannot fit the function's signature
//! (argument count, names, a literal of the wrong type) is a `parse` error
//! at the argument, before any render.

use std::ops::Range;

use crate::diagnostics::TemplateError;
use crate::engine::program::{Const, Expr, Host};
use crate::functions::{ArgAt, BindError};

/// Checks a call of `host` with lowered `positional` and `named`
/// arguments; `place` says where an argument (or the call) is in the body.
pub(crate) fn check(
    host: &Host,
    positional: &[Expr],
    named: &[(&str, &Expr)],
    place: impl Fn(ArgAt) -> Range<usize>,
) -> Result<(), TemplateError> {
    if host.function.signature().is_none() {
        return Ok(());
    }
    let positional_values: Vec<Option<serde_json::Value>> =
        positional.iter().map(literal).collect();
    let named_values: Vec<Option<serde_json::Value>> =
        named.iter().map(|(_, expr)| literal(expr)).collect();
    let positional_refs: Vec<Option<&serde_json::Value>> =
        positional_values.iter().map(Option::as_ref).collect();
    let named_refs: Vec<(&str, Option<&serde_json::Value>)> = named
        .iter()
        .zip(&named_values)
        .map(|((key, _), value)| (*key, value.as_ref()))
        .collect();
    host.function
        .check(&host.name, &positional_refs, &named_refs)
        .map_err(|error: BindError| {
            TemplateError::parse(Some(place(error.at)), error.message).suggest(error.suggestion)
        })
}

/// A literal argument's value; `None` for anything computed.
fn literal(expr: &Expr) -> Option<serde_json::Value> {
    let Expr::Const(constant) = expr else {
        return None;
    };
    Some(match constant {
        Const::Null => serde_json::Value::Null,
        Const::Bool(b) => serde_json::Value::Bool(*b),
        Const::Int(i) => serde_json::Value::from(*i),
        Const::Float(f) => serde_json::Number::from_f64(*f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        Const::Str(s) => serde_json::Value::String(s.to_string()),
        Const::List(items) => serde_json::Value::Array(items.to_vec()),
        Const::Map(map) => serde_json::Value::clone(map),
    })
}

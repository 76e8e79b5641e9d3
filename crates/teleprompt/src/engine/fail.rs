//! How the evaluator builds its errors: each is a render error at a span
//! of the template ([`fail`], [`error`] to add a suggestion or a path
//! first), a function's error that starts with its name ([`func_error`]),
//! or a malformed program ([`internal`]). Errors travel boxed (see
//! [`Result`]), and are built in cold functions, off the hot paths.

use std::fmt::Display;

use super::program::{Func, Span};
use super::render::Result;
use crate::diagnostics::TemplateError;

/// A render error at `span`, to add a suggestion or a path to.
#[cold]
pub(super) fn error(span: Span, message: impl Into<String>) -> TemplateError {
    TemplateError::render(Some(span.range()), message)
}

/// Fails at `span` with `message`.
#[cold]
pub(super) fn fail<T>(span: Span, message: impl Into<String>) -> Result<T> {
    Err(Box::new(error(span, message)))
}

/// Fails with `message`, at no place of the template.
#[cold]
pub(super) fn fail_unplaced<T>(message: impl Into<String>) -> Result<T> {
    Err(Box::new(TemplateError::render(None, message)))
}

/// The error of `func` at `span`: `message` after the function's name
/// (`index: index out of range: 5`).
#[cold]
pub(super) fn func_error(func: Func, span: Span, message: impl Display) -> Box<TemplateError> {
    Box::new(error(span, format!("{}: {message}", func.name())))
}

/// A map without the key `name` (Go's words), with a suggestion and the
/// path read.
#[cold]
pub(super) fn no_entry(
    span: Span,
    name: &str,
    suggestion: Option<String>,
    path: Option<String>,
) -> Box<TemplateError> {
    Box::new(
        error(span, format!("map has no entry for key {name:?}"))
            .suggest(suggestion)
            .with_path(path),
    )
}

/// A program no front end makes: a bug, reported rather than panicking.
#[cold]
pub(super) fn internal(span: Span) -> Box<TemplateError> {
    Box::new(error(span, "internal error: malformed program"))
}

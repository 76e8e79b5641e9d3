//! The render's bounds bookkeeping: the output's size, the text
//! functions build, steps.

use super::fail::{fail, func_error};
use super::program::{Func, Span};
use super::render::{Renderer, Result};
use super::value::Value;
use crate::diagnostics::TemplateError;
use crate::limits::Exceeded;

impl<'a> Renderer<'a> {
    #[inline]
    pub(super) fn check_output(&self, span: Option<Span>) -> Result<()> {
        if self.out.len() > self.program.limits.max_output {
            return Err(self.output_error(span).into());
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    pub(super) fn output_error(&self, span: Option<Span>) -> TemplateError {
        let over = Exceeded::Output(self.program.limits.max_output);
        TemplateError::render(span.map(Span::range), over.to_string())
    }

    /// Fails when a function's text of `bytes` would be larger than one
    /// value may be.
    #[inline(never)]
    pub(super) fn fits(&self, func: Func, bytes: usize, span: Span) -> Result<()> {
        self.scope
            .budget
            .fits(bytes)
            .map_err(|over| func_error(func, span, over))
    }

    /// A text `func` built, counted against the render's budget
    /// ([`crate::scope::Budget::build`]).
    pub(super) fn built(&mut self, func: Func, text: String, span: Span) -> Result<Value<'a>> {
        self.count_built(func, text.len(), span)?;
        Ok(Value::string(text))
    }

    pub(super) fn count_built(&mut self, func: Func, bytes: usize, span: Span) -> Result<()> {
        self.scope
            .budget
            .build(bytes)
            .map_err(|over| func_error(func, span, over))
    }

    /// Counts one step (a loop pass, a template call, a function call)
    /// against `max_steps`.
    #[inline]
    pub(super) fn tick(&mut self, span: Span) -> Result<()> {
        self.iterations += 1;
        if self.iterations > self.program.limits.max_steps {
            return fail(
                span,
                Exceeded::Steps(self.program.limits.max_steps).to_string(),
            );
        }
        Ok(())
    }
}

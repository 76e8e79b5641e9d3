//! The render's bounds bookkeeping: the output's size, the text
//! functions build, steps, and the host's deadline or cancel token
//! (looked at every `Stop::EVERY` steps).

use super::fail::{fail, func_error};
use super::program::{Func, Span};
use super::render::{Renderer, Result};
use super::value::Value;
use crate::diagnostics::TemplateError;
use crate::limits::Exceeded;
use crate::scope::{Stop, BYTES_PER_STEP};

/// The bytes of text among `values` (what comparing them may read).
pub(super) fn text_bytes(values: &[Value<'_>]) -> usize {
    values
        .iter()
        .map(|value| match value {
            Value::Str(text) => text.len(),
            Value::String(text) => text.len(),
            _ => 0,
        })
        .sum()
}

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

    /// [`Renderer::built`] of a text that may be larger than one value may
    /// be (checked first: [`Renderer::fits`]).
    pub(super) fn built_value(
        &mut self,
        func: Func,
        text: String,
        span: Span,
    ) -> Result<Value<'a>> {
        self.fits(func, text.len(), span)?;
        self.built(func, text, span)
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

    /// Counts the work of an operation beyond its one step: `items`
    /// values it walks (a map's keys listed and sorted for a loop) and
    /// `bytes` of text it reads (strings compared), one step per
    /// [`BYTES_PER_STEP`]. So a loop that does much work per pass — a
    /// comparison of two long strings, a loop over a big map entered on
    /// every pass of another — runs out of steps as a loop of as many
    /// passes would.
    #[inline]
    pub(super) fn tick_work(&mut self, items: usize, bytes: usize, span: Span) -> Result<()> {
        let work = items.saturating_add(bytes / BYTES_PER_STEP);
        if work == 0 {
            return Ok(());
        }
        let work = u64::try_from(work).unwrap_or(u64::MAX);
        let before = self.iterations;
        self.iterations = self.iterations.saturating_add(work);
        if self.iterations > self.program.limits.max_steps {
            return fail(
                span,
                Exceeded::Steps(self.program.limits.max_steps).to_string(),
            );
        }
        if before / Stop::EVERY != self.iterations / Stop::EVERY {
            self.check_stop(span)?;
        }
        Ok(())
    }

    /// Fails once the host wants the render stopped (its deadline, its
    /// cancel token): asked every [`Stop::EVERY`] steps.
    #[cold]
    #[inline(never)]
    fn check_stop(&self, span: Span) -> Result<()> {
        if !self.scope.stop.is_armed() {
            return Ok(());
        }
        self.scope
            .stop
            .check()
            .or_else(|over| fail(span, over.to_string()))
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
        if self.iterations.is_multiple_of(Stop::EVERY) {
            self.check_stop(span)?;
        }
        Ok(())
    }
}

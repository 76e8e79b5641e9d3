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
        if bytes > self.program.limits.max_value_bytes {
            let over = Exceeded::Value(self.program.limits.max_value_bytes);
            return Err(func_error(func, span, over));
        }
        Ok(())
    }

    /// A text `func` built, counted against the render's bounds: one text
    /// at most `max_value_bytes`, all of them together 16 × `max_output`
    /// (a value grown a little on every pass of a long loop is copied
    /// each time: the total stops it before the copying takes minutes).
    pub(super) fn built(&mut self, func: Func, text: String, span: Span) -> Result<Value<'a>> {
        self.count_built(func, text.len(), span)?;
        Ok(Value::string(text))
    }

    pub(super) fn count_built(&mut self, func: Func, bytes: usize, span: Span) -> Result<()> {
        self.fits(func, bytes, span)?;
        self.built = self.built.saturating_add(bytes);
        let most = self.program.limits.max_built_bytes();
        if self.built > most {
            return Err(func_error(func, span, Exceeded::Built(most)));
        }
        Ok(())
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

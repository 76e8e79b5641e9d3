//! The options of one render.

use std::sync::Arc;

use serde_json::Value;

use crate::context::Clock;

/// Options of one render: [`RenderOptions::new`] and the `with_*` methods
/// (the struct is `#[non_exhaustive]`).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RenderOptions {
    /// Check the history against the tool-call rules before rendering
    /// (default `true`; [`Prompt::render_turn_with`](crate::Prompt::render_turn_with)).
    pub validate_history: bool,
    /// The clock of [`Prompt::render_with`](crate::Prompt::render_with) (default: the system clock);
    /// a turn takes its [`PromptContext`](crate::PromptContext)'s clock instead.
    pub clock: Clock,
    /// The host's render context (Dotprompt's `context`): a Dotprompt
    /// template reads its keys as data variables, `{{@state.step}}`,
    /// `{{@auth.uid}}`. The data cannot shadow them.
    pub context: Option<Arc<Value>>,
}

impl Default for RenderOptions {
    fn default() -> RenderOptions {
        RenderOptions {
            validate_history: true,
            clock: Clock::System,
            context: None,
        }
    }
}

impl RenderOptions {
    /// The default options: history checked, the system clock, no context.
    pub fn new() -> RenderOptions {
        RenderOptions::default()
    }

    /// Sets [`RenderOptions::validate_history`].
    pub fn with_validate_history(mut self, validate: bool) -> RenderOptions {
        self.validate_history = validate;
        self
    }

    /// Sets [`RenderOptions::clock`].
    pub fn with_clock(mut self, clock: Clock) -> RenderOptions {
        self.clock = clock;
        self
    }

    /// Sets [`RenderOptions::context`].
    pub fn with_context(mut self, context: impl Into<Arc<Value>>) -> RenderOptions {
        self.context = Some(context.into());
        self
    }
}

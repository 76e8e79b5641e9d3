//! One render's scope: what a render carries besides its template and its
//! data. The clock (Jinja's `strftime_now`), the budget (bytes printed and
//! built so far, against the template's limits), the role markers that
//! `role()`, `history()`, `media()` and `{% generation %}` print.
//!
//! The caller makes one per render ([`RenderScope::new`]) and hands it
//! down: the engine takes it as an argument; minijinja calls Jinja's
//! filters and functions without it, so a Jinja render sets it for them
//! while it runs (`syntax::jinja::current`). After the render, the caller
//! cuts the output at the scope's markers.

use jiff::Zoned;

use crate::limits::{Exceeded, Limits};
use crate::messages::Markers;

/// The scope of one render.
#[derive(Debug)]
pub(crate) struct RenderScope {
    /// The current time, in the time zone the host chose.
    now: Zoned,
    /// Bytes printed and built so far, and the limits they are held to.
    pub(crate) budget: Budget,
    /// This render's markers, with their secret.
    markers: Markers,
}

impl RenderScope {
    /// The scope of a render at `now`, held to `limits` (the template's),
    /// with fresh markers.
    pub(crate) fn new(now: Zoned, limits: Limits) -> RenderScope {
        RenderScope {
            now,
            budget: Budget::new(limits),
            markers: Markers::new(),
        }
    }

    /// The scope for Jinja's filters while a render runs on minijinja: the
    /// same clock and markers, with the budget lent (see
    /// [`RenderScope::take_back`]).
    pub(crate) fn lend(&mut self) -> RenderScope {
        RenderScope {
            now: self.now.clone(),
            budget: self.budget,
            markers: self.markers.clone(),
        }
    }

    /// What the scope [`RenderScope::lend`] made spent.
    pub(crate) fn take_back(&mut self, lent: RenderScope) {
        self.budget = lent.budget;
    }

    /// A scope at the Unix epoch, in UTC (for the tests, which render at a
    /// fixed time).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn at_epoch(limits: Limits) -> RenderScope {
        RenderScope::new(
            jiff::Timestamp::UNIX_EPOCH.to_zoned(jiff::tz::TimeZone::UTC),
            limits,
        )
    }

    /// The render's time.
    pub(crate) fn now(&self) -> &Zoned {
        &self.now
    }

    /// The render's markers, to cut its output at.
    pub(crate) fn markers(&self) -> &Markers {
        &self.markers
    }

    /// `role(name)`: the marker that starts a message. The error is a
    /// sentence for the template's author (an unknown role, `tool`).
    pub(crate) fn role(&self, name: &str) -> Result<String, String> {
        self.room_for_a_message()?;
        self.markers.template_role(name)
    }

    /// Fails once the render has made as many messages and media parts
    /// as one list may hold (`max_items`): 16 MiB of role lines would
    /// otherwise make two million messages, gigabytes of them.
    fn room_for_a_message(&self) -> Result<(), String> {
        let most = self.budget.limits().max_items;
        if self.markers.made() >= most {
            return Err(Exceeded::Messages(most).to_string());
        }
        Ok(())
    }

    /// `role(name, attributes)`: a message with fields besides its role
    /// (a Prompty role line's attributes, as a JSON object's text).
    pub(crate) fn role_with(&self, name: &str, attributes: &str) -> Result<String, String> {
        self.room_for_a_message()?;
        self.markers.template_role_with(name, attributes)
    }

    /// `history()`: the marker that places the conversation history.
    pub(crate) fn history(&self) -> String {
        self.markers.history()
    }

    /// `media(url, content_type)`: the marker of a media part.
    pub(crate) fn media(&self, url: &str, content_type: &str) -> Result<String, String> {
        self.room_for_a_message()?;
        self.markers
            .media(url, content_type)
            .map_err(|error| error.to_string())
    }

    /// Dotprompt's `section(name)`: the marker of a part the host fills.
    pub(crate) fn section(&self, name: &str) -> Result<String, String> {
        self.room_for_a_message()?;
        self.markers
            .section(name)
            .map_err(|error| error.to_string())
    }

    /// `text` between generation markers (a `{% generation %}` block).
    pub(crate) fn generation(&self, text: &str) -> String {
        self.markers.generation(text)
    }
}

/// What one render has printed and built, against its limits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// Bytes printed by Jinja's `{{ … }}` so far, captured output
    /// (`{% set %}` blocks, macros, filter blocks) included. (The engine
    /// bounds its output by the output's length.)
    printed: usize,
    /// Bytes of text functions, helpers, filters and operators have built.
    built: usize,
    limits: Limits,
}

impl Budget {
    /// Nothing spent yet, held to `limits`.
    pub(crate) fn new(limits: Limits) -> Budget {
        Budget {
            printed: 0,
            built: 0,
            limits,
        }
    }

    /// The limits the render is held to.
    #[inline]
    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Counts `bytes` more printed; an error once the render has printed
    /// more than `max_output`.
    #[inline]
    pub(crate) fn spend(&mut self, bytes: usize) -> Result<(), Exceeded> {
        self.printed = self.printed.saturating_add(bytes);
        if self.printed > self.limits.max_output {
            return Err(Exceeded::Output(self.limits.max_output));
        }
        Ok(())
    }

    /// Whether one text of `bytes` may be built (`max_value_bytes`).
    #[inline]
    pub(crate) fn fits(&self, bytes: usize) -> Result<(), Exceeded> {
        if bytes > self.limits.max_value_bytes {
            return Err(Exceeded::Value(self.limits.max_value_bytes));
        }
        Ok(())
    }

    /// Counts a text of `bytes` built: one text may be at most
    /// `max_value_bytes`, all of them together 16 × `max_output` (a value
    /// grown a little on every pass of a long loop is copied each time:
    /// the total stops it before the copying takes minutes).
    #[inline]
    pub(crate) fn build(&mut self, bytes: usize) -> Result<(), Exceeded> {
        self.fits(bytes)?;
        self.built = self.built.saturating_add(bytes);
        let most = self.limits.max_built_bytes();
        if self.built > most {
            return Err(Exceeded::Built(most));
        }
        Ok(())
    }

    /// The most bytes a text may have now: what the render may still
    /// print, or the size one value may have if that is less, with the
    /// bound that sets it.
    pub(crate) fn room(&self) -> (usize, Exceeded) {
        let printable = self.limits.max_output.saturating_sub(self.printed);
        if printable <= self.limits.max_value_bytes {
            (printable, Exceeded::Output(self.limits.max_output))
        } else {
            (
                self.limits.max_value_bytes,
                Exceeded::Value(self.limits.max_value_bytes),
            )
        }
    }
}

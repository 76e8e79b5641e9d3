//! The render scope ([`RenderScope`]) of the Jinja render running on this
//! thread. minijinja calls filters, functions and the formatter without a
//! handle on the render, so a render on minijinja lends its scope here
//! while it runs ([`with_scope`]) and takes back what it spent, with the
//! keys it looked for and did not find (its [`MissLog`], for its errors).
//! This is the crate's one thread-local; the engine (Go, Handlebars, and
//! Jinja's direct path) takes its scope as an argument.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use jiff::Zoned;

use super::errors::{MissLog, MissPlace};
use crate::limits::Exceeded;
use crate::scope::{RenderScope, Stop, BYTES_PER_STEP};

/// The error minijinja carries up to the render for a bound it went past:
/// the bound as its source, so that the render reports it in its own words.
pub(super) fn exceeded(over: Exceeded) -> minijinja::Error {
    minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, over.to_string())
        .with_source(over)
}

/// What a render on minijinja lends its filters.
struct Current {
    scope: RenderScope,
    /// Keys the render looked for and did not find.
    misses: MissLog,
    /// How often each pongo2 `{% cycle %}` tag has been used in this
    /// render, by the tag's number.
    cycles: std::collections::HashMap<u64, u64>,
    /// How often the render asked whether the host stopped it.
    polls: Cell<u64>,
    /// Why the render must end, once it must: the host stopped it, or
    /// the data it read went past `max_steps` (see [`read`]).
    halted: Cell<Option<Exceeded>>,
}

impl Current {
    /// Why the host stopped the render, if it has: the deadline and the
    /// token are looked at every [`Stop::EVERY`] calls.
    #[inline]
    fn poll(&self) -> Option<Exceeded> {
        if let Some(over) = self.halted.get() {
            return Some(over);
        }
        if !self.scope.stop.is_armed() {
            return None;
        }
        let polls = self.polls.get().wrapping_add(1);
        self.polls.set(polls);
        if !polls.is_multiple_of(Stop::EVERY) {
            return None;
        }
        self.look()
    }

    /// Why the host stopped the render, looking at the clock and token
    /// now.
    fn look(&self) -> Option<Exceeded> {
        if let Some(over) = self.halted.get() {
            return Some(over);
        }
        let over = self.scope.stop.check().err();
        self.halted.set(over);
        over
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
    /// Whether the running render has something to look at: a stop the
    /// host may set, or a reason to end already. Most renders have
    /// neither, and the reads and prints asking [`stopped`] cost one load.
    static WATCH: Cell<bool> = const { Cell::new(false) };
}

/// Whether the running render may have to stop (see `WATCH`).
#[inline]
fn watching() -> bool {
    WATCH.try_with(Cell::get).unwrap_or(false)
}

/// Puts the previous scope back when a render ends, even by a panic (a
/// render inside a host function of another render is possible).
struct Restore {
    previous: Option<Current>,
    /// The previous render's `WATCH`.
    previous_watch: bool,
    /// Whether the previous scope is still to be put back.
    armed: bool,
}

impl Restore {
    /// Puts the previous scope back; returns the render's own.
    fn finish(mut self) -> Option<Current> {
        self.armed = false;
        let _ = WATCH.try_with(|watch| watch.set(self.previous_watch));
        let previous = self.previous.take();
        CURRENT
            .try_with(|current| {
                let mut current = current.try_borrow_mut().ok()?;
                std::mem::replace(&mut *current, previous)
            })
            .ok()
            .flatten()
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let _ = WATCH.try_with(|watch| watch.set(self.previous_watch));
        let previous = self.previous.take();
        let _ = CURRENT.try_with(|current| {
            if let Ok(mut current) = current.try_borrow_mut() {
                *current = previous;
            }
        });
    }
}

/// Runs `f` (a render on minijinja) with `scope` lent as this thread's
/// current one ([`RenderScope::lend`]): what the render spent is `scope`'s
/// after; the keys it missed come back with its result.
pub(super) fn with_scope<R>(
    scope: &mut RenderScope,
    f: impl FnOnce() -> R,
) -> (R, MissLog, Option<Exceeded>) {
    let lent = Current {
        scope: scope.lend(),
        misses: MissLog::default(),
        cycles: Default::default(),
        polls: Cell::new(0),
        halted: Cell::new(None),
    };
    let previous = CURRENT.with(|current| current.replace(Some(lent)));
    let previous_watch = WATCH.with(|watch| watch.replace(scope.stop.is_armed()));
    let restore = Restore {
        previous,
        previous_watch,
        armed: true,
    };
    let result = f();
    let mut misses = MissLog::default();
    let mut halted = None;
    if let Some(lent) = restore.finish() {
        scope.take_back(lent.scope);
        misses = lent.misses;
        halted = lent.halted.get();
    }
    (result, misses, halted)
}

/// Runs `f` on the running render's scope (`None` outside a render, or
/// while the scope is borrowed).
fn with_current<R>(f: impl FnOnce(Option<&mut RenderScope>) -> R) -> R {
    let mut f = Some(f);
    let ran = CURRENT
        .try_with(|current| {
            let mut current = current.try_borrow_mut().ok()?;
            let f = f.take()?;
            Some(f(current.as_mut().map(|current| &mut current.scope)))
        })
        .ok()
        .flatten();
    match (ran, f) {
        (Some(result), _) => result,
        (None, Some(f)) => f(None),
        // `f` ran and so returned a result.
        (None, None) => unreachable!(),
    }
}

/// Notes that the running render looked for `key` in `place` and did not
/// find it (nothing outside a render).
pub(super) fn record_miss(place: Arc<dyn MissPlace>, key: &str) {
    // A shared borrow: the log has its own cell (a chat template tests
    // absent keys on every message, so this path stays short).
    let _ = CURRENT.try_with(|current| {
        if let Some(current) = current
            .try_borrow()
            .ok()
            .as_deref()
            .and_then(Option::as_ref)
        {
            current.misses.record(place, key);
        }
    });
}

/// The current render's time (the system clock outside a render).
pub(super) fn now() -> Zoned {
    CURRENT
        .try_with(|current| {
            current
                .borrow()
                .as_ref()
                .map(|current| current.scope.now().clone())
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| Zoned::now().with_time_zone(jiff::tz::TimeZone::UTC))
}

/// `function()` (`role`, `history`, `media`, `generation`): `f` on the
/// running render's scope. minijinja calls these only while a template
/// renders, and a render always sets its scope; the error is for a call
/// outside one.
pub(super) fn marker(
    function: &str,
    f: impl FnOnce(&RenderScope) -> Result<String, String>,
) -> Result<String, String> {
    with_current(|scope| match scope {
        Some(scope) => f(scope),
        None => Err(format!(
            "{function}() can only be called while a prompt renders"
        )),
    })
}

/// How often the pongo2 `{% cycle %}` tag `id` was used before in the
/// running render (0 outside a render); counts this use.
pub(super) fn next_cycle(id: u64) -> u64 {
    CURRENT
        .try_with(|current| {
            let mut current = current.try_borrow_mut().ok()?;
            let count = current.as_mut()?.cycles.entry(id).or_insert(0);
            let used = *count;
            *count = count.saturating_add(1);
            Some(used)
        })
        .ok()
        .flatten()
        .unwrap_or(0)
}

/// Why the host stopped the running render (its deadline, its cancel
/// token), once it has; `None` outside a render. Cheap: the clock and the
/// token are looked at every [`Stop::EVERY`] calls. The data's trees ask
/// it on every read, printing and teleprompt's filters through
/// [`spend`] and [`build`]: a loop over the data, or one that prints or
/// calls a filter, stops soon after the deadline. (A loop that does none
/// of these has fuel, or is bounded by the data.)
#[inline]
pub(super) fn stopped() -> Option<Exceeded> {
    if !watching() {
        return None;
    }
    CURRENT
        .try_with(|current| {
            let current = current.try_borrow().ok()?;
            current.as_ref()?.poll()
        })
        .ok()
        .flatten()
}

/// [`stopped`], looking at the clock and the token on every call: for
/// calls that start much work (`range`, whose loop asks nothing more).
pub(super) fn stopped_now() -> Option<Exceeded> {
    if !watching() {
        return None;
    }
    CURRENT
        .try_with(|current| {
            let current = current.try_borrow().ok()?;
            current.as_ref()?.look()
        })
        .ok()
        .flatten()
}

/// Counts `bytes` more printed output; an error once the render has
/// printed more than its budget, or the host has stopped it.
pub(super) fn spend(bytes: usize) -> Result<(), Exceeded> {
    stopped().map_or(Ok(()), Err)?;
    with_current(|scope| scope.map_or(Ok(()), |scope| scope.budget.spend(bytes)))
}

/// Counts a text of `bytes` that a filter or operator built: one text may
/// be at most `max_value_bytes`, all of them 16 × `max_output`; an error
/// too once the host has stopped the render.
pub(super) fn build(bytes: usize) -> Result<(), Exceeded> {
    stopped().map_or(Ok(()), Err)?;
    with_current(|scope| scope.map_or(Ok(()), |scope| scope.budget.build(bytes)))
}

/// Counts the text of a value read from the data (64 bytes a step, as
/// `work`): a loop over the data that compares or searches a long text
/// on every pass (`==`, `in`, which minijinja does without asking us)
/// reads it on every pass. `false` once the render must end (past
/// `max_steps`, or stopped by the host): the read gives nothing, and the
/// render reports why.
#[inline]
pub(super) fn read(text_bytes: usize) -> bool {
    let steps = text_bytes / BYTES_PER_STEP;
    if steps == 0 {
        return stopped().is_none();
    }
    CURRENT
        .try_with(|current| {
            let mut current = current.try_borrow_mut().ok()?;
            let current = current.as_mut()?;
            if current.poll().is_some() {
                return Some(false);
            }
            if let Err(over) = current.scope.budget.work(steps) {
                current.halted.set(Some(over));
                let _ = WATCH.try_with(|watch| watch.set(true));
                return Some(false);
            }
            Some(true)
        })
        .ok()
        .flatten()
        .unwrap_or(true)
}

/// Counts `steps` of work a filter did (`work`); an error once the
/// render's filters have done more than `max_steps`, or the host has
/// stopped it.
pub(super) fn work(steps: usize) -> Result<(), Exceeded> {
    stopped().map_or(Ok(()), Err)?;
    if steps == 0 {
        return Ok(());
    }
    with_current(|scope| scope.map_or(Ok(()), |scope| scope.budget.work(steps)))
}

/// The most items a list the render builds may have (unbounded outside a
/// render).
pub(super) fn max_items() -> usize {
    with_current(|scope| scope.map_or(usize::MAX, |scope| scope.budget.limits().max_items))
}

/// The most bytes a text a filter builds may have now: what the render may
/// still print, or the size one value may have if that is less, with the
/// bound that sets it (unbounded outside a render). Filters that build text
/// (`tojson`, `indent`, printing a list) stop at the room, so a huge result
/// fails before it is allocated.
pub(super) fn budget() -> (usize, Exceeded) {
    with_current(|scope| match scope {
        Some(scope) => scope.budget.room(),
        None => (usize::MAX, Exceeded::Output(usize::MAX)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;
    use crate::messages::{Item, Role, Split};

    fn role(name: &str) -> Result<String, String> {
        marker("role", |scope| scope.role(name))
    }

    fn history() -> Result<String, String> {
        marker("history", |scope| Ok(scope.history()))
    }

    fn roles(split: &Split) -> Vec<Role> {
        let roles = split.items.iter().filter_map(|item| match item {
            Item::Message(message) => Some(message.role),
            Item::History | Item::CacheBreakpoint => None,
        });
        roles.collect()
    }

    #[test]
    fn emit_outside_a_render_is_an_error() {
        assert_eq!(
            role("system").unwrap_err(),
            "role() can only be called while a prompt renders"
        );
        assert!(history().unwrap_err().starts_with("history()"));
    }

    #[test]
    fn emit_inside_a_render_uses_its_markers() {
        let mut scope = RenderScope::at_epoch(Limits::DEFAULT);
        let (output, _, _) = with_scope(&mut scope, || {
            format!(
                "{}sys{}hi",
                role("system").unwrap_or_default(),
                role("user").unwrap_or_default()
            )
        });
        let split = scope
            .markers()
            .split(&output, Role::User)
            .unwrap_or_default();
        assert_eq!(roles(&split), vec![Role::System, Role::User]);
        assert_eq!(split.text, "syshi");
        assert!(role("user").is_err(), "the render is over");
    }

    #[test]
    fn nested_renders_restore_the_outer_markers() {
        let mut outer = RenderScope::at_epoch(Limits::DEFAULT);
        let mut inner = RenderScope::at_epoch(Limits::DEFAULT);
        let outer_history = outer.history();
        let inner_history = inner.history();
        with_scope(&mut outer, || {
            with_scope(&mut inner, || {
                assert_eq!(history().ok(), Some(inner_history.clone()));
            });
            assert_eq!(history().ok(), Some(outer_history.clone()));
        });
    }

    #[test]
    fn a_panicking_render_restores_the_markers() {
        let mut outer = RenderScope::at_epoch(Limits::DEFAULT);
        let outer_history = outer.history();
        with_scope(&mut outer, || {
            let mut inner = RenderScope::at_epoch(Limits::DEFAULT);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                with_scope(&mut inner, || panic!("boom"))
            }));
            assert!(result.is_err());
            assert_eq!(history().ok(), Some(outer_history.clone()));
        });
    }

    #[test]
    fn the_render_keeps_what_its_filters_spent() {
        let limits = Limits {
            max_output: 10,
            ..Limits::DEFAULT
        };
        let mut scope = RenderScope::at_epoch(limits);
        with_scope(&mut scope, || {
            assert_eq!(spend(6), Ok(()));
        });
        assert_eq!(scope.budget.spend(5), Err(Exceeded::Output(10)));
    }
}

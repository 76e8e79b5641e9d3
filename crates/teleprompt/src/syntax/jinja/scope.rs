//! What one render of a Jinja template carries besides its data: the
//! current time (for `strftime_now`) and its budgets (output, the size of
//! one value, the text built in all). minijinja calls filters, functions
//! and the formatter without a handle on the render, so the render sets
//! them here, for its own thread, while it runs.

use std::cell::RefCell;
use std::sync::Arc;

use jiff::Zoned;

use super::errors::{MissLog, MissPlace};
use crate::limits::{Exceeded, Limits};

/// The state of the render running on this thread.
struct Scope {
    now: Zoned,
    /// Bytes printed by `{{ … }}` so far, captured output (`{% set %}`
    /// blocks, macros, filter blocks) included.
    printed: usize,
    /// Bytes of text filters and operators have built so far.
    built: usize,
    limits: Limits,
    /// Keys the template looked for and did not find, for its errors.
    misses: std::rc::Rc<MissLog>,
}

/// The error minijinja carries up to the render for a bound it went past:
/// the bound as its source, so that the render reports it in its own words.
pub(super) fn exceeded(over: Exceeded) -> minijinja::Error {
    minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, over.to_string())
        .with_source(over)
}

thread_local! {
    static CURRENT: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// Puts the previous scope back when a render ends, even by a panic (a
/// render inside a host function of another render is possible).
struct Restore(Option<Scope>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        let _ = CURRENT.try_with(|current| {
            if let Ok(mut current) = current.try_borrow_mut() {
                *current = previous;
            }
        });
    }
}

/// Runs `f` (a render) with `now` as the current time and `limits` as its
/// bounds, noting what it misses in `misses`.
pub(super) fn with_scope<R>(
    now: Zoned,
    limits: &Limits,
    misses: std::rc::Rc<MissLog>,
    f: impl FnOnce() -> R,
) -> R {
    let scope = Scope {
        now,
        printed: 0,
        built: 0,
        limits: *limits,
        misses,
    };
    let previous = CURRENT.with(|current| current.replace(Some(scope)));
    let _restore = Restore(previous);
    f()
}

/// Notes that the running render looked for `key` in `place` and did not
/// find it (nothing outside a render).
pub(super) fn record_miss(place: Arc<dyn MissPlace>, key: &str) {
    // A shared borrow: the log has its own cell (a chat template tests
    // absent keys on every message, so this path stays short).
    let _ = CURRENT.try_with(|current| {
        if let Some(scope) = current
            .try_borrow()
            .ok()
            .as_deref()
            .and_then(Option::as_ref)
        {
            scope.misses.record(place, key);
        }
    });
}

/// The current render's time (the system clock outside a render).
pub(super) fn now() -> Zoned {
    CURRENT
        .try_with(|current| current.borrow().as_ref().map(|scope| scope.now.clone()))
        .ok()
        .flatten()
        .unwrap_or_else(|| Zoned::now().with_time_zone(jiff::tz::TimeZone::UTC))
}

/// Runs `f` on the running render's scope (`None` outside a render, or
/// while the scope is borrowed).
fn with_current<R>(f: impl FnOnce(Option<&mut Scope>) -> R) -> R {
    let mut f = Some(f);
    let ran = CURRENT
        .try_with(|current| {
            let mut scope = current.try_borrow_mut().ok()?;
            let f = f.take()?;
            Some(f(scope.as_mut()))
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

/// Counts `bytes` more printed output; an error once the render has
/// printed more than its budget.
pub(super) fn spend(bytes: usize) -> Result<(), Exceeded> {
    with_current(|scope| {
        let Some(scope) = scope else {
            return Ok(());
        };
        scope.printed = scope.printed.saturating_add(bytes);
        if scope.printed > scope.limits.max_output {
            Err(Exceeded::Output(scope.limits.max_output))
        } else {
            Ok(())
        }
    })
}

/// Counts a text of `bytes` that a filter or operator built: one text may
/// be at most `max_value_bytes`, all of them 16 × `max_output`.
pub(super) fn build(bytes: usize) -> Result<(), Exceeded> {
    with_current(|scope| {
        let Some(scope) = scope else {
            return Ok(());
        };
        if bytes > scope.limits.max_value_bytes {
            return Err(Exceeded::Value(scope.limits.max_value_bytes));
        }
        scope.built = scope.built.saturating_add(bytes);
        if scope.built > scope.limits.max_built_bytes() {
            return Err(Exceeded::Built(scope.limits.max_built_bytes()));
        }
        Ok(())
    })
}

/// The most items a list the render builds may have (unbounded outside a
/// render).
pub(super) fn max_items() -> usize {
    with_current(|scope| scope.map_or(usize::MAX, |scope| scope.limits.max_items))
}

/// The most bytes a text a filter builds may have now: what the render may
/// still print, or the size one value may have if that is less, with the
/// bound that sets it (unbounded outside a render). Filters that build text
/// (`tojson`, `indent`, printing a list) stop at the room, so a huge result
/// fails before it is allocated.
pub(super) fn budget() -> (usize, Exceeded) {
    with_current(|scope| {
        let Some(scope) = scope else {
            return (usize::MAX, Exceeded::Output(usize::MAX));
        };
        let printable = scope.limits.max_output.saturating_sub(scope.printed);
        if printable <= scope.limits.max_value_bytes {
            (printable, Exceeded::Output(scope.limits.max_output))
        } else {
            (
                scope.limits.max_value_bytes,
                Exceeded::Value(scope.limits.max_value_bytes),
            )
        }
    })
}

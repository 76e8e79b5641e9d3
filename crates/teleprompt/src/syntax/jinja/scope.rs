//! What one render of a Jinja template carries besides its data: the
//! current time (for `strftime_now`) and the output budget. minijinja calls
//! filters, functions and the formatter without a handle on the render, so
//! the render sets them here, for its own thread, while it runs.

use std::cell::RefCell;

use jiff::Zoned;

/// The state of the render running on this thread.
struct Scope {
    now: Zoned,
    /// Bytes printed by `{{ … }}` so far, captured output (`{% set %}`
    /// blocks, macros, filter blocks) included.
    printed: usize,
    /// The most bytes a render may print.
    limit: usize,
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

/// Runs `f` (a render) with `now` as the current time and `limit` as the
/// output budget.
pub(super) fn with_scope<R>(now: Zoned, limit: usize, f: impl FnOnce() -> R) -> R {
    let scope = Scope {
        now,
        printed: 0,
        limit,
    };
    let previous = CURRENT.with(|current| current.replace(Some(scope)));
    let _restore = Restore(previous);
    f()
}

/// The current render's time (the system clock outside a render).
pub(super) fn now() -> Zoned {
    CURRENT
        .try_with(|current| current.borrow().as_ref().map(|scope| scope.now.clone()))
        .ok()
        .flatten()
        .unwrap_or_else(|| Zoned::now().with_time_zone(jiff::tz::TimeZone::UTC))
}

/// Counts `bytes` more printed output; `Err(limit)` once the render has
/// printed more than its budget.
pub(super) fn spend(bytes: usize) -> Result<(), usize> {
    CURRENT
        .try_with(|current| {
            let mut current = current.borrow_mut();
            let Some(scope) = current.as_mut() else {
                return Ok(());
            };
            scope.printed = scope.printed.saturating_add(bytes);
            if scope.printed > scope.limit {
                Err(scope.limit)
            } else {
                Ok(())
            }
        })
        .unwrap_or(Ok(()))
}

/// What the render running on this thread may still print, and its whole
/// budget: `(room, limit)` (unbounded outside a render). Filters that
/// build text (`tojson`, `indent`, printing a list) stop at the room, so a
/// huge result fails before it is allocated.
pub(super) fn budget() -> (usize, usize) {
    CURRENT
        .try_with(|current| {
            let current = current.try_borrow().ok()?;
            let scope = current.as_ref()?;
            Some((scope.limit.saturating_sub(scope.printed), scope.limit))
        })
        .ok()
        .flatten()
        .unwrap_or((usize::MAX, usize::MAX))
}

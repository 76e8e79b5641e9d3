//! A library shared by threads that render while it reloads.

use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;

use super::{Library, ReloadReport};
use crate::diagnostics::Error;

/// A [`Library`] that many threads render from while one reloads it.
///
/// A render takes a snapshot ([`SharedLibrary::snapshot`]) and keeps it
/// for as long as it runs; a reload builds the next snapshot beside the
/// current one and swaps it in whole. No render ever sees a library half
/// reloaded, and taking a snapshot never waits for a reload.
///
/// ```no_run
/// use std::sync::Arc;
/// use teleprompt::{Library, LoadOptions, SharedLibrary};
///
/// let shared = Arc::new(SharedLibrary::new(Library::open("prompts", &LoadOptions::default())?));
/// // On any thread:
/// let library = shared.snapshot();
/// if let Some(prompt) = library.get("task") {
///     let text = prompt.render(serde_json::json!({"issue": {"title": "Fix it"}}))?;
/// }
/// // When files change (or with the `watch` feature, `shared.watch(…)`):
/// let report = shared.reload()?;
/// for failed in &report.failed {
///     eprintln!("{}", failed.error.report());
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SharedLibrary {
    current: ArcSwap<Library>,
    /// One reload at a time: two at once would each build from the same
    /// snapshot and the later swap would drop the other's work.
    reloading: Mutex<()>,
}

impl SharedLibrary {
    /// Shares `library`.
    pub fn new(library: Library) -> SharedLibrary {
        SharedLibrary {
            current: ArcSwap::from_pointee(library),
            reloading: Mutex::new(()),
        }
    }

    /// The library as it is now; it stays whole however long it is kept.
    pub fn snapshot(&self) -> Arc<Library> {
        self.current.load_full()
    }

    /// Reloads into a new snapshot and swaps it in (see
    /// [`Library::reload`]); renders in progress finish on the old one.
    pub fn reload(&self) -> Result<ReloadReport, Error> {
        let _one_at_a_time = self
            .reloading
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut next = Library::clone(&self.current.load());
        let report = next.reload()?;
        self.current.store(Arc::new(next));
        Ok(report)
    }
}

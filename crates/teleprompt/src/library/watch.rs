//! Reloading a shared library when its files change (the `watch` feature).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{new_debouncer, DebounceEventResult, Debouncer};

use super::{ReloadReport, SharedLibrary};
use crate::diagnostics::{Error, ErrorClass};

/// Watches a library's folders; dropping it stops the watching.
pub struct Watcher {
    _debouncer: Debouncer<RecommendedWatcher>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watcher")
    }
}

impl SharedLibrary {
    /// Reloads the library whenever a file under its directory (or its
    /// include root, when that is elsewhere) changes: changes are
    /// gathered for `debounce` (an editor's save is several events), then
    /// one [`SharedLibrary::reload`] runs and `on_reload` hears how it
    /// went, on the watcher's thread. Dropping the [`Watcher`] stops it.
    ///
    /// Fails when the library was not read from a directory or the
    /// system cannot watch it.
    ///
    /// ```no_run
    /// use std::{sync::Arc, time::Duration};
    /// use teleprompt::{Library, LoadOptions, SharedLibrary};
    ///
    /// let shared = Arc::new(SharedLibrary::new(Library::open("prompts", &LoadOptions::default())?));
    /// let _watcher = shared.watch(Duration::from_millis(200), |result| match result {
    ///     Ok(report) => report.failed.iter().for_each(|f| eprintln!("{}", f.error.report())),
    ///     Err(error) => eprintln!("{}", error.report()),
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn watch(
        self: &Arc<Self>,
        debounce: Duration,
        mut on_reload: impl FnMut(Result<ReloadReport, Error>) + Send + 'static,
    ) -> Result<Watcher, Error> {
        let snapshot = self.snapshot();
        let Some(dir) = snapshot.dir() else {
            return Err(Error::new(
                ErrorClass::Io,
                "this library was not read from a directory: there is nothing to watch",
            ));
        };
        let mut folders: Vec<PathBuf> = vec![dir.to_path_buf()];
        if let Some(root) = &snapshot.options.include_root {
            let inside = |a: &PathBuf, b: &PathBuf| match (a.canonicalize(), b.canonicalize()) {
                (Ok(a), Ok(b)) => a.starts_with(b),
                _ => false,
            };
            if !inside(root, &folders[0]) {
                if inside(&folders[0], root) {
                    folders = vec![root.clone()];
                } else {
                    folders.push(root.clone());
                }
            }
        }
        let shared = Arc::clone(self);
        let mut debouncer = new_debouncer(debounce, move |events: DebounceEventResult| {
            if events.is_ok_and(|events| !events.is_empty()) {
                on_reload(shared.reload());
            }
        })
        .map_err(|error| watch_error(&dir.display().to_string(), &error))?;
        for folder in &folders {
            debouncer
                .watcher()
                .watch(folder, RecursiveMode::Recursive)
                .map_err(|error| watch_error(&folder.display().to_string(), &error))?;
        }
        Ok(Watcher {
            _debouncer: debouncer,
        })
    }
}

fn watch_error(folder: &str, error: &dyn std::fmt::Display) -> Error {
    Error::new(ErrorClass::Io, format!("cannot watch the folder: {error}")).with_file(folder)
}

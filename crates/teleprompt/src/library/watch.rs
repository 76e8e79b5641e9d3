//! Reloading a shared library when its files change (the `watch` feature).
//!
//! The watcher hears every event the system reports under the folders and
//! keeps only those that change a file: created, written, renamed or
//! removed. Opening or reading a file is an event too on Linux, and a
//! reload reads every file: counting those would make each reload cause
//! the next. Events are gathered until the folders have been quiet for the
//! debounce time (an editor's save is several events), then one reload
//! runs, and the host hears of it only when it changed something.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

use super::{ReloadReport, SharedLibrary};
use crate::diagnostics::{Error, ErrorClass};

/// Watches a library's folders; dropping it stops the watching.
pub struct Watcher {
    /// The system's watch; dropping it ends the events, and with them the
    /// thread that reloads.
    _watcher: RecommendedWatcher,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watcher")
    }
}

/// How long changes that never pause may put a reload off, in debounce
/// times: a file written without a break still gets reloaded.
const MOST_DEBOUNCES: u32 = 10;

/// Whether `kind` changes a file (and so may change a prompt).
fn changes_a_file(kind: &EventKind) -> bool {
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        // A system that cannot say what happened: assume a change.
        EventKind::Any | EventKind::Other => true,
    }
}

/// Waits for a change, then for `debounce` of quiet (at most
/// [`MOST_DEBOUNCES`] times `debounce` in all). `None` once the watch has
/// ended.
fn next_change(events: &Receiver<notify::Result<notify::Event>>, debounce: Duration) -> Option<()> {
    loop {
        match events.recv().ok()? {
            Ok(event) if changes_a_file(&event.kind) => break,
            // An error of the watch itself (a queue overflow): files may
            // have changed unseen.
            Err(_) => break,
            Ok(_) => {}
        }
    }
    let latest = Instant::now() + debounce * MOST_DEBOUNCES;
    let mut quiet_until = Instant::now() + debounce;
    loop {
        let now = Instant::now();
        let until = quiet_until.min(latest);
        if now >= until {
            return Some(());
        }
        match events.recv_timeout(until - now) {
            Ok(Ok(event)) if !changes_a_file(&event.kind) => {}
            Ok(_) => quiet_until = Instant::now() + debounce,
            Err(RecvTimeoutError::Timeout) => return Some(()),
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// What a reload's host has heard last: a report is passed on only when
/// it differs (a prompt added, updated or removed, or another set of
/// broken files or errors).
#[derive(Default)]
struct LastHeard {
    failed: Vec<(PathBuf, String)>,
}

impl LastHeard {
    /// Whether `result` is news to the host (and remembers it).
    fn is_news(&mut self, result: &Result<ReloadReport, Error>) -> bool {
        let Ok(report) = result else {
            return true;
        };
        let before = std::mem::take(&mut self.failed);
        self.remember(
            report
                .failed
                .iter()
                .map(|failed| (failed.file.clone(), failed.error.to_string())),
        );
        !report.is_unchanged() || self.failed != before
    }

    /// The broken files the host knows of now.
    fn remember(&mut self, failed: impl Iterator<Item = (PathBuf, String)>) {
        self.failed = failed.collect();
        self.failed.sort();
    }
}

impl SharedLibrary {
    /// Reloads the library whenever a file under its directory (or its
    /// include root, when that is elsewhere) changes — is created,
    /// written, renamed or removed; reading a file is not a change.
    /// Changes are gathered until the folders have been quiet for
    /// `debounce` (an editor's save is several events), then one
    /// [`SharedLibrary::reload`] runs, and `on_reload` hears how it went,
    /// on the watcher's thread, when that is news: a prompt added, updated
    /// or removed, another set of broken files or errors, or an error of
    /// the reload itself. Dropping the [`Watcher`] stops it.
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
        let (sender, events) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(sender)
            .map_err(|error| watch_error(&dir.display().to_string(), &error))?;
        for folder in &folders {
            watcher
                .watch(folder, RecursiveMode::Recursive)
                .map_err(|error| watch_error(&folder.display().to_string(), &error))?;
        }
        let shared = Arc::clone(self);
        let mut heard = LastHeard::default();
        heard.remember(
            snapshot
                .errors()
                .map(|(file, error)| (file.to_path_buf(), error.to_string())),
        );
        std::thread::Builder::new()
            .name("teleprompt-watch".into())
            .spawn(move || {
                while next_change(&events, debounce).is_some() {
                    let result = shared.reload();
                    if heard.is_news(&result) {
                        on_reload(result);
                    }
                }
            })
            .map_err(|error| watch_error(&dir.display().to_string(), &error))?;
        Ok(Watcher { _watcher: watcher })
    }
}

fn watch_error(folder: &str, error: &dyn std::fmt::Display) -> Error {
    Error::new(ErrorClass::Io, format!("cannot watch the folder: {error}")).with_file(folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_not_changes_and_writes_are() {
        let dir = std::env::temp_dir().join(format!("teleprompt-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        let file = dir.join("task.j2");
        std::fs::write(&file, "v1").expect("writable");
        let (sender, events) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(sender).expect("a watcher");
        watcher
            .watch(&dir, RecursiveMode::Recursive)
            .expect("watchable");
        let (changed, heard) = mpsc::channel();
        std::thread::spawn(move || {
            while next_change(&events, Duration::from_millis(20)).is_some() {
                let _ = changed.send(());
            }
        });
        for _ in 0..30 {
            std::fs::read(&file).expect("readable");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            heard.recv_timeout(Duration::from_millis(300)).is_err(),
            "reading the file counted as a change"
        );
        std::fs::write(&file, "v2").expect("writable");
        assert!(heard.recv_timeout(Duration::from_secs(10)).is_ok());
        drop(watcher);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn metadata_and_access_are_not_changes() {
        use notify::event::{CreateKind, MetadataKind, RemoveKind, RenameMode};
        let not = [
            EventKind::Access(AccessKind::Open(AccessMode::Any)),
            EventKind::Access(AccessKind::Close(AccessMode::Read)),
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)),
        ];
        let are = [
            EventKind::Create(CreateKind::File),
            EventKind::Remove(RemoveKind::File),
            EventKind::Modify(ModifyKind::Name(RenameMode::Both)),
            EventKind::Modify(ModifyKind::Data(notify::event::DataChange::Any)),
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            EventKind::Any,
        ];
        assert!(not.iter().all(|kind| !changes_a_file(kind)));
        assert!(are.iter().all(changes_a_file));
    }
}

//! A library of prompts: every prompt file of a directory, by name.
//!
//! A library is a snapshot. [`Library::reload`] reads the directory again
//! and rebuilds the prompts whose file, or a file they include, changed; a
//! file that no longer loads keeps serving its last good version, with the
//! error beside it. [`SharedLibrary`] swaps whole snapshots, so a render
//! in progress never sees a library half reloaded; with the `watch`
//! feature, [`SharedLibrary::watch`] reloads when files change.

mod shared;
mod walk;
#[cfg(feature = "watch")]
mod watch;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diagnostics::{Error, ErrorClass, Errors};
use crate::document::include_root::{content_hash, Dependency};
use crate::limits::{self, Input};
use crate::{options::LoadOptions, prompt::Prompt};

pub use shared::SharedLibrary;
#[cfg(feature = "unstable")]
pub(crate) use walk::files_under;
pub use walk::prompt_files;
#[cfg(feature = "watch")]
pub use watch::Watcher;

/// Prompts loaded once and looked up by name.
///
/// ```no_run
/// use teleprompt::{Library, LoadOptions};
/// let library = Library::load_dir("prompts", &LoadOptions::default())?;
/// let prompt = library.get("task").expect("prompts/task.j2 exists");
/// let text = prompt.render(serde_json::json!({"issue": {"title": "Fix it"}}))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Library {
    /// The directory the prompts come from (`None`: made of prompts).
    dir: Option<PathBuf>,
    /// The options every file loads with (the include root set).
    options: LoadOptions,
    entries: BTreeMap<String, LibraryEntry>,
    /// Every prompt file of the directory as last read.
    files: BTreeMap<PathBuf, FileState>,
}

/// A prompt file as last read.
#[derive(Clone, Debug)]
struct FileState {
    /// The hash of its bytes (`None`: it could not be read).
    hash: Option<u64>,
    /// The name of the prompt it serves, if it serves one.
    serves: Option<String>,
    /// Why its current text does not load.
    error: Option<Error>,
}

/// A prompt of a [`Library`], with where it came from.
#[derive(Clone, Debug)]
pub struct LibraryEntry {
    prompt: Arc<Prompt>,
    file: Option<PathBuf>,
    version: String,
    error: Option<Error>,
}

impl LibraryEntry {
    fn new(prompt: Arc<Prompt>, file: Option<PathBuf>) -> LibraryEntry {
        LibraryEntry {
            version: prompt.version(),
            prompt,
            file,
            error: None,
        }
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        self.prompt.name()
    }

    /// The prompt, shared: a host may keep it past the next reload.
    pub fn prompt(&self) -> &Arc<Prompt> {
        &self.prompt
    }

    /// The file it was loaded from (`None` for [`Library::from_prompts`]).
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The version served ([`Prompt::version`]).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Why the file's current text does not load, when it does not: the
    /// entry is then the last version that loaded.
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }
}

/// What a [`Library::reload`] changed.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ReloadReport {
    /// Prompts that are new, by name.
    pub added: Vec<String>,
    /// Prompts rebuilt into a new version (their file or a file they
    /// include changed).
    pub updated: Vec<String>,
    /// Prompts whose file is gone (or that took another name).
    pub removed: Vec<String>,
    /// Every file that does not load now.
    pub failed: Vec<FailedFile>,
}

impl ReloadReport {
    /// True when no prompt changed.
    pub fn is_unchanged(&self) -> bool {
        self.added.is_empty() && self.updated.is_empty() && self.removed.is_empty()
    }
}

/// A prompt file whose current text does not load.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FailedFile {
    /// The file.
    pub file: PathBuf,
    /// Why it does not load (the first error; [`Error::all`] has every one).
    pub error: Error,
    /// The prompt still served from the file's last good version, by name.
    pub kept: Option<String>,
    /// That version ([`Prompt::version`]).
    pub kept_version: Option<String>,
}

impl Library {
    /// Loads every prompt file under `dir` (see [`prompt_files`]). Fails
    /// with every broken file, not only the first, and every error of each
    /// (see [`Error::all`]).
    pub fn load_dir(dir: impl AsRef<Path>, options: &LoadOptions) -> Result<Library, Errors> {
        let library = Library::open(dir, options).map_err(|error| Errors(vec![error]))?;
        let errors: Vec<Error> = library
            .errors()
            .flat_map(|(_, error)| error.all())
            .collect();
        if errors.is_empty() {
            Ok(library)
        } else {
            Err(Errors(errors))
        }
    }

    /// Loads the prompt files under `dir` that load, and keeps the errors
    /// of the others ([`Library::errors`]): what a long-running host
    /// serves from. Fails only when the directory cannot be read.
    ///
    /// Files a prompt includes resolve in `dir` (beside the including file
    /// first) unless `options` names another include root.
    pub fn open(dir: impl AsRef<Path>, options: &LoadOptions) -> Result<Library, Error> {
        let dir = dir.as_ref().to_path_buf();
        let mut options = options.clone();
        options.include_root.get_or_insert_with(|| dir.clone());
        let mut library = Library {
            dir: Some(dir),
            options,
            ..Library::default()
        };
        library.reload()?;
        Ok(library)
    }

    /// A library of the given prompts; two prompts with one name are an error.
    pub fn from_prompts(prompts: impl IntoIterator<Item = Prompt>) -> Result<Library, Errors> {
        let mut library = Library::default();
        let mut errors = Vec::new();
        for prompt in prompts {
            if let Some(existing) = library.entries.get(prompt.name()) {
                errors.push(duplicate_name(prompt.origin(), prompt.name(), existing));
                continue;
            }
            library.entries.insert(
                prompt.name().to_string(),
                LibraryEntry::new(Arc::new(prompt), None),
            );
        }
        if errors.is_empty() {
            Ok(library)
        } else {
            Err(Errors(errors))
        }
    }

    /// Reads the directory again: new files are loaded, files that are
    /// gone are dropped, and a prompt is rebuilt when its file changed, a
    /// file it includes changed, a file it looked for and did not find
    /// appeared, or — for a prompt that includes files — a prompt file was
    /// added to the folder (it may define a Go template the prompt looked
    /// for). A file that no longer loads keeps serving its last good
    /// version, with the error in [`LibraryEntry::error`]; files that do
    /// not load are tried again at every reload.
    ///
    /// Fails, changing nothing, only when the directory cannot be read. A
    /// library made with [`Library::from_prompts`] has nothing to reload.
    pub fn reload(&mut self) -> Result<ReloadReport, Error> {
        let Some(dir) = self.dir.clone() else {
            return Ok(ReloadReport::default());
        };
        let found = prompt_files(&dir)?;
        let max_bytes = self.options.limits.max_template_bytes;
        // A new prompt file may be what a prompt that includes others
        // would now find (a Go file defining a template it looked
        // through the folder for): those prompts are rebuilt.
        let files_added = found.iter().any(|file| !self.files.contains_key(file));
        let mut report = ReloadReport::default();
        let mut entries = BTreeMap::new();
        let mut files = BTreeMap::new();
        for file in found {
            let old_state = self.files.get(&file);
            let old_entry = old_state
                .and_then(|state| state.serves.as_ref())
                .and_then(|name| self.entries.get(name))
                .filter(|entry| entry.file.as_deref() == Some(file.as_path()));
            let hash = limits::read_file(&file, max_bytes, Input::Template)
                .ok()
                .map(|bytes| content_hash(&bytes));
            let fresh = match (old_state, old_entry) {
                (Some(state), Some(entry)) => {
                    state.error.is_none()
                        && hash.is_some()
                        && state.hash == hash
                        && (!files_added || entry.prompt.dependencies().is_empty())
                        && entry
                            .prompt
                            .dependencies()
                            .iter()
                            .all(|dependency| unchanged(dependency, max_bytes))
                }
                _ => false,
            };
            let loaded = match old_entry.filter(|_| fresh) {
                Some(entry) => Ok(entry.clone()),
                None => Prompt::from_file_with(&file, &self.options)
                    .map(|prompt| LibraryEntry::new(Arc::new(prompt), Some(file.clone()))),
            }
            .and_then(|entry| match entries.get(entry.name()) {
                Some(existing) => Err(duplicate_name(
                    &file.display().to_string(),
                    entry.name(),
                    existing,
                )),
                None => Ok(entry),
            });
            let state = match loaded {
                Ok(entry) => {
                    let name = entry.name().to_string();
                    match old_entry {
                        Some(old) if old.name() == name => {
                            if old.version != entry.version || old.error.is_some() {
                                report.updated.push(name.clone());
                            }
                        }
                        _ => report.added.push(name.clone()),
                    }
                    entries.insert(name.clone(), entry);
                    FileState {
                        hash,
                        serves: Some(name),
                        error: None,
                    }
                }
                Err(error) => {
                    // The last good version goes on, unless another file
                    // took its name meanwhile.
                    let kept = old_entry.filter(|old| !entries.contains_key(old.name()));
                    report.failed.push(FailedFile {
                        file: file.clone(),
                        error: error.clone(),
                        kept: kept.map(|old| old.name().to_string()),
                        kept_version: kept.map(|old| old.version.clone()),
                    });
                    if let Some(old) = kept {
                        let mut old = old.clone();
                        old.error = Some(error.clone());
                        entries.insert(old.name().to_string(), old);
                    }
                    FileState {
                        hash,
                        serves: kept.map(|old| old.name().to_string()),
                        error: Some(error),
                    }
                }
            };
            files.insert(file, state);
        }
        for name in self.entries.keys() {
            if !entries.contains_key(name) {
                report.removed.push(name.clone());
            }
        }
        self.entries = entries;
        self.files = files;
        Ok(report)
    }

    /// The prompt named `name`.
    pub fn get(&self, name: &str) -> Option<&Prompt> {
        self.entries.get(name).map(|entry| entry.prompt.as_ref())
    }

    /// The prompt named `name`, with its file, version and error.
    pub fn entry(&self, name: &str) -> Option<&LibraryEntry> {
        self.entries.get(name)
    }

    /// Every prompt with its file, version and error, by name.
    pub fn entries(&self) -> impl Iterator<Item = &LibraryEntry> {
        self.entries.values()
    }

    /// All prompts, by name.
    pub fn prompts(&self) -> impl Iterator<Item = &Prompt> {
        self.entries.values().map(|entry| entry.prompt.as_ref())
    }

    /// Every file whose current text does not load, with the error (the
    /// first; [`Error::all`] has every one), in file order: files that
    /// serve nothing and files that serve their last good version.
    pub fn errors(&self) -> impl Iterator<Item = (&Path, &Error)> {
        self.files
            .iter()
            .filter_map(|(file, state)| Some((file.as_path(), state.error.as_ref()?)))
    }

    /// The directory the library reads (`None` when made of prompts).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Number of prompts.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the library holds no prompt.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// True when a file a prompt's load looked at is as it was then.
fn unchanged(dependency: &Dependency, max_bytes: usize) -> bool {
    match dependency.hash {
        None => std::fs::symlink_metadata(&dependency.path).is_err(),
        Some(hash) => limits::read_file(&dependency.path, max_bytes, Input::Template)
            .is_ok_and(|bytes| content_hash(&bytes) == hash),
    }
}

fn duplicate_name(origin: &str, name: &str, existing: &LibraryEntry) -> Error {
    let other = existing
        .file
        .as_ref()
        .map(|file| file.display().to_string())
        .unwrap_or_else(|| existing.prompt.origin().to_string());
    Error::new(
        ErrorClass::Document,
        format!(
            "two prompts are named \"{name}\": this file and {other}; set `name:` in the front matter of one"
        ),
    )
    .with_file(origin)
    .with_kind("duplicate-name")
}

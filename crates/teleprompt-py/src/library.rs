//! `Library`: a folder of prompt files, by name, reloadable.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use teleprompt::SharedLibrary;

use crate::errors;
use crate::prompt::{Options, PyPrompt, Recipe};

/// The prompt files of a folder, by name: `library["triage"]`.
///
/// Opening loads every file that loads and keeps the errors of the others
/// (`library.errors`); only a folder that cannot be read raises.
/// `reload()` reads the folder again and swaps in a new snapshot: prompts
/// already taken, and renders in flight, keep the version they had.
///
/// `watch=True` (or a debounce in seconds) reloads by itself when a file
/// under the folder changes, on a thread of its own; `on_reload`, if given,
/// is called there with what `reload()` returns. Closing the library
/// (`close()`, or its end) stops the watching.
#[pyclass(frozen, module = "teleprompt._teleprompt", name = "Library")]
pub(crate) struct Library {
    shared: Arc<SharedLibrary>,
    dir: PathBuf,
    options: Options,
    watcher: Mutex<Option<teleprompt::Watcher>>,
    /// The `on_reload` callback, shared with the watcher's thread; here so
    /// that Python's garbage collector sees it (a callback that refers to
    /// the library makes a cycle it can then break).
    on_reload: Arc<Mutex<Option<Py<PyAny>>>>,
}

#[pymethods]
impl Library {
    #[new]
    #[pyo3(signature = (dir, *, syntax = None, strict = None, functions = None, include_root = None, watch = None, on_reload = None, tokenizer = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        dir: PathBuf,
        syntax: Option<String>,
        strict: Option<String>,
        functions: Option<&Bound<'_, PyDict>>,
        include_root: Option<PathBuf>,
        watch: Option<&Bound<'_, PyAny>>,
        on_reload: Option<Py<PyAny>>,
        tokenizer: Option<String>,
    ) -> PyResult<Library> {
        let options =
            Options::read(syntax, strict, functions, include_root).with_tokenizer(tokenizer);
        let library = Library::open(py, dir, options)?;
        let debounce = match watch.filter(|watch| !watch.is_none()) {
            None => None,
            Some(flag) if flag.is_instance_of::<pyo3::types::PyBool>() => {
                flag.is_truthy()?.then_some(DEFAULT_DEBOUNCE)
            }
            Some(seconds) => {
                let seconds: f64 = seconds.extract()?;
                if !(seconds.is_finite() && (0.0..=3600.0).contains(&seconds)) {
                    return Err(errors::input(
                        py,
                        "watch must be True, False or a debounce of 0 to 3600 seconds",
                    ));
                }
                Some(Duration::from_secs_f64(seconds))
            }
        };
        if let Some(debounce) = debounce {
            library.watch(py, debounce, on_reload)?;
        }
        Ok(library)
    }

    /// Whether the library reloads by itself (`watch=`).
    #[getter]
    fn watching(&self) -> bool {
        self.watcher_slot().is_some()
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        // Locked only for an instant, with the GIL held, as here.
        if let Ok(slot) = self.on_reload.try_lock() {
            if let Some(callback) = &*slot {
                visit.call(callback)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        self.watcher_slot().take();
        if let Ok(mut slot) = self.on_reload.lock() {
            slot.take();
        }
    }

    /// Stops the watching (if any); the library keeps serving what it has.
    fn close(&self) {
        self.watcher_slot().take();
    }

    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<PyPrompt> {
        let snapshot = self.shared.snapshot();
        if let Some(entry) = snapshot.entry(name) {
            return Ok(self.prompt(entry));
        }
        // A file of that name that does not load: its error says why.
        for (file, error) in snapshot.errors() {
            if file.file_stem().and_then(|stem| stem.to_str()) == Some(name) {
                return Err(errors::raise(py, error));
            }
        }
        let names: Vec<&str> = snapshot.entries().map(|entry| entry.name()).collect();
        let hint = match teleprompt::diagnostics::closest(name, names.iter().copied()) {
            Some(close) => format!("; did you mean {close:?}?"),
            None => String::new(),
        };
        Err(PyKeyError::new_err(format!(
            "no prompt {name:?} in {}{hint}",
            self.dir.display()
        )))
    }

    /// The prompt `name`, or `default`.
    #[pyo3(signature = (name, default = None))]
    fn get(&self, py: Python<'_>, name: &str, default: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
        match self.shared.snapshot().entry(name) {
            Some(entry) => Ok(Bound::new(py, self.prompt(entry))?.into_any().unbind()),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    fn __contains__(&self, name: &str) -> bool {
        self.shared.snapshot().entry(name).is_some()
    }

    fn __len__(&self) -> usize {
        self.shared.snapshot().len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyList::new(py, self.names())?
            .try_iter()
            .map(|it| it.into_any())
    }

    /// The prompts' names, sorted.
    fn names(&self) -> Vec<String> {
        self.shared
            .snapshot()
            .entries()
            .map(|entry| entry.name().to_string())
            .collect()
    }

    /// The errors of the files that do not load (or no longer do: those
    /// serve their last good version), as exceptions.
    #[getter]
    fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let snapshot = self.shared.snapshot();
        let list = PyList::empty(py);
        for (_, error) in snapshot.errors() {
            list.append(errors::exception_object(py, error))?;
        }
        Ok(list)
    }

    /// The folder.
    #[getter]
    fn dir(&self) -> PathBuf {
        self.dir.clone()
    }

    /// Reads the folder again; returns what changed: a dict of `added`,
    /// `updated`, `removed` (names) and `failed` (exceptions).
    fn reload<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let report = py
            .detach(|| self.shared.reload())
            .map_err(|error| errors::raise(py, &error))?;
        report_dict(py, &report)
    }

    /// Renders the prompt `name` (see `Prompt.render`); `name` is
    /// positional-only, so that data may hold a `name`.
    #[pyo3(signature = (name, /, data = None, **kwargs))]
    fn render(
        &self,
        py: Python<'_>,
        name: &str,
        data: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<crate::prompt::Rendered> {
        self.__getitem__(py, name)?.render(py, data, kwargs)
    }

    fn __repr__(&self) -> String {
        format!(
            "Library({:?}, {} prompts)",
            self.dir.display().to_string(),
            self.shared.snapshot().len()
        )
    }

    /// Pickles by folder and options: the copy opens the folder again.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py
            .import("teleprompt._teleprompt")?
            .getattr("_restore_library")?;
        let state = (self.dir.clone(), self.options.to_dict(py)?);
        PyTuple::new(py, [restore, state.into_pyobject(py)?.into_any()])
    }
}

impl Library {
    fn open(py: Python<'_>, dir: PathBuf, options: Options) -> PyResult<Library> {
        let load_options = options.load_options(py)?;
        let opened = py.detach(|| teleprompt::Library::open(&dir, &load_options));
        let library = opened.map_err(|error| errors::raise(py, &error))?;
        Ok(Library {
            shared: Arc::new(SharedLibrary::new(library)),
            dir,
            options,
            watcher: Mutex::new(None),
            on_reload: Arc::new(Mutex::new(None)),
        })
    }

    fn watcher_slot(&self) -> std::sync::MutexGuard<'_, Option<teleprompt::Watcher>> {
        self.watcher
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts reloading on changes; `on_reload` hears each reload.
    fn watch(
        &self,
        py: Python<'_>,
        debounce: Duration,
        on_reload: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        if let Ok(mut slot) = self.on_reload.lock() {
            *slot = on_reload;
        }
        let callback_slot = Arc::clone(&self.on_reload);
        let watcher = self
            .shared
            .watch(debounce, move |result| {
                Python::attach(|py| {
                    // Taken out of the slot first: the call may run the
                    // garbage collector, which looks into the slot.
                    let callback = match callback_slot.lock() {
                        Ok(slot) => slot.as_ref().map(|callback| callback.clone_ref(py)),
                        Err(_) => None,
                    };
                    let Some(callback) = callback else {
                        return;
                    };
                    let argument = match &result {
                        Ok(report) => report_dict(py, report).map(|dict| dict.into_any()),
                        Err(error) => Ok(errors::exception_object(py, error).into_bound(py)),
                    };
                    let called = argument.and_then(|argument| callback.call1(py, (argument,)));
                    if let Err(exception) = called {
                        // Nowhere to raise it: Python's hook reports it.
                        exception.write_unraisable(py, Some(callback.bind(py)));
                    }
                });
            })
            .map_err(|error| errors::raise(py, &error))?;
        *self.watcher_slot() = Some(watcher);
        Ok(())
    }

    /// A prompt of the library, which pickles as its file with the
    /// library's options.
    fn prompt(&self, entry: &teleprompt::LibraryEntry) -> PyPrompt {
        let mut options = self.options.clone();
        options.include_root.get_or_insert_with(|| self.dir.clone());
        let origin = entry
            .file()
            .map(|file| file.display().to_string())
            .unwrap_or_else(|| entry.prompt().origin().to_string());
        PyPrompt {
            inner: entry.prompt().clone(),
            recipe: Recipe {
                origin,
                text: None,
                from_file: true,
                options,
            },
        }
    }
}

/// How long a watched library gathers changes before it reloads (an
/// editor's save is several events).
const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(200);

/// What a reload changed, as `reload()` returns it.
fn report_dict<'py>(
    py: Python<'py>,
    report: &teleprompt::ReloadReport,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("added", &report.added)?;
    dict.set_item("updated", &report.updated)?;
    dict.set_item("removed", &report.removed)?;
    let failed = PyList::empty(py);
    for file in &report.failed {
        failed.append(errors::exception_object(py, &file.error))?;
    }
    dict.set_item("failed", failed)?;
    Ok(dict)
}

/// Opens a pickled library again (without watching it).
#[pyfunction]
pub(crate) fn _restore_library(
    py: Python<'_>,
    dir: PathBuf,
    options: &Bound<'_, PyDict>,
) -> PyResult<Library> {
    let options = Options::from_dict(options)?;
    Library::open(py, dir, options)
}

//! `Prompt`, `Rendered` and `render_many`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use rayon::prelude::*;
use serde_json::{Map, Value};
use teleprompt::{LoadOptions, OutputFormat, RenderOptions, Strictness, Syntax};

use crate::context::PromptContext;
use crate::convert;
use crate::errors;
use crate::functions;

/// How a prompt was made, kept so that it can be made again in another
/// process (pickling) from its text and options alone.
#[derive(Clone)]
pub(crate) struct Recipe {
    /// The file name (`Prompt.from_file`) or the `name` given.
    pub origin: String,
    /// The whole text, front matter included (`None`: a library's
    /// prompt, read from `origin` when pickled).
    pub text: Option<String>,
    /// Loaded from the file `origin`.
    pub from_file: bool,
    pub options: Options,
}

/// The load options a Python caller can set.
#[derive(Clone, Default)]
pub(crate) struct Options {
    pub syntax: Option<String>,
    pub strict: Option<String>,
    pub include_root: Option<PathBuf>,
    pub functions: Option<Arc<Py<PyDict>>>,
    /// What counts tokens (`o200k_base`, `cl100k_base`), over the front
    /// matter's.
    pub tokenizer: Option<String>,
}

impl Options {
    pub(crate) fn read(
        syntax: Option<String>,
        strict: Option<String>,
        functions: Option<&Bound<'_, PyDict>>,
        include_root: Option<PathBuf>,
    ) -> Options {
        Options {
            syntax,
            strict,
            include_root,
            functions: functions.map(|functions| Arc::new(functions.clone().unbind())),
            tokenizer: None,
        }
    }

    /// With `tokenizer` over the front matter's.
    pub(crate) fn with_tokenizer(mut self, tokenizer: Option<String>) -> Options {
        self.tokenizer = tokenizer;
        self
    }

    pub(crate) fn load_options(&self, py: Python<'_>) -> PyResult<LoadOptions> {
        let mut options = LoadOptions::default();
        if let Some(syntax) = &self.syntax {
            options.syntax = Some(
                syntax
                    .parse::<Syntax>()
                    .map_err(|message| errors::input(py, format!("syntax: {message}")))?,
            );
        }
        if let Some(strict) = &self.strict {
            options.strictness = Some(
                strict
                    .parse::<Strictness>()
                    .map_err(|message| errors::input(py, format!("strict: {message}")))?,
            );
        }
        options.include_root = self.include_root.clone();
        if let Some(name) = &self.tokenizer {
            options.tokenizer = Some(
                teleprompt::tokens::Tokenizer::named_or_file(name)
                    .map_err(|message| errors::input(py, format!("tokenizer: {message}")))?,
            );
        }
        let functions = self.functions.as_ref().map(|functions| functions.bind(py));
        options.functions = functions::from_python(py, functions)?;
        Ok(options)
    }

    pub(crate) fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("syntax", &self.syntax)?;
        dict.set_item("strict", &self.strict)?;
        dict.set_item("include_root", &self.include_root)?;
        dict.set_item("tokenizer", &self.tokenizer)?;
        dict.set_item(
            "functions",
            self.functions.as_ref().map(|functions| functions.bind(py)),
        )?;
        Ok(dict)
    }

    pub(crate) fn from_dict(dict: &Bound<'_, PyDict>) -> PyResult<Options> {
        let item = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
            Ok(dict.get_item(key)?.filter(|value| !value.is_none()))
        };
        let syntax = item("syntax")?.map(|v| v.extract()).transpose()?;
        let strict = item("strict")?.map(|v| v.extract()).transpose()?;
        let include_root = item("include_root")?.map(|v| v.extract()).transpose()?;
        let functions = item("functions")?;
        let functions = functions.as_ref().map(|f| f.cast::<PyDict>()).transpose()?;
        let tokenizer = item("tokenizer")?.map(|v| v.extract()).transpose()?;
        Ok(Options::read(syntax, strict, functions, include_root).with_tokenizer(tokenizer))
    }
}

/// A compiled prompt: load it once, render it many times, from any thread.
///
/// `Prompt(source, name="prompt", syntax=None, strict=None, functions=None,
/// include_root=None)` compiles text; `Prompt.from_file(path, …)` a file.
#[pyclass(frozen, module = "teleprompt._teleprompt", name = "Prompt")]
pub(crate) struct PyPrompt {
    pub inner: Arc<teleprompt::Prompt>,
    pub recipe: Recipe,
}

impl PyPrompt {
    fn load(py: Python<'_>, recipe: Recipe) -> PyResult<PyPrompt> {
        let options = recipe.options.load_options(py)?;
        let origin = recipe.origin.clone();
        let text = recipe.text.clone().unwrap_or_default();
        let from_file = recipe.from_file;
        let loaded = py.detach(move || {
            if from_file && same_text(Path::new(&origin), &text) {
                teleprompt::Prompt::from_file_with(&origin, &options)
            } else {
                let mut options = options;
                if from_file && options.include_root.is_none() {
                    options.include_root = Path::new(&origin).parent().map(Path::to_path_buf);
                }
                teleprompt::Prompt::from_source(&origin, &text, &options)
            }
        });
        match loaded {
            Ok(prompt) => Ok(PyPrompt {
                inner: Arc::new(prompt),
                recipe,
            }),
            Err(error) => Err(errors::raise(py, &error)),
        }
    }

    /// The data of a render: `data` (a dict, or None), then the keyword
    /// arguments over it.
    fn data(
        &self,
        py: Python<'_>,
        data: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Value> {
        let prompt = &self.inner;
        let reads = |name: &str| prompt.reads(name);
        let mut map = match data.filter(|data| !data.is_none()) {
            None => Map::new(),
            Some(data) => match convert::to_value_keeping(data, "data", Some(&reads)) {
                Ok(Value::Object(map)) => map,
                Ok(other) => {
                    return Err(errors::input(
                        py,
                        format!(
                            "data must be a dict of names to values, not {}",
                            teleprompt::data::describe(&other)
                        ),
                    ))
                }
                Err(problem) => return Err(errors::not_data(py, problem)),
            },
        };
        if let Some(kwargs) = kwargs {
            for (key, value) in kwargs.iter() {
                let key: String = key.extract()?;
                if !prompt.reads(&key) {
                    map.insert(key, Value::Null);
                    continue;
                }
                let at = format!("data[{}]", convert::quoted(&key));
                let value = convert::to_value(&value, &at)
                    .map_err(|problem| errors::not_data(py, problem))?;
                map.insert(key, value);
            }
        }
        Ok(Value::Object(map))
    }
}

/// Why a row of `render_many` did not render.
enum Failed {
    /// A value that is not data.
    NotData(convert::NotData),
    /// A row that is not a dict, or a malformed record.
    Input(String),
    /// The render's own error, or a record field that cannot be used.
    Request(teleprompt::RequestError),
    /// The tokens could not be counted (no tokenizer, or one that cannot
    /// be read).
    Tokens(teleprompt::Error),
}

/// One row of `render_many` done.
enum Row {
    Rendered(teleprompt::Rendered),
    /// Its tokens, with `tokenize=True`.
    Tokens(serde_json::Value),
}

impl Failed {
    fn exception(self, py: Python<'_>, index: usize) -> PyErr {
        match self {
            Failed::NotData(problem) => errors::not_data(py, problem),
            Failed::Input(message) => errors::input(py, message),
            Failed::Request(teleprompt::RequestError::Malformed(message)) => {
                errors::input(py, format!("rows[{index}]: {message}"))
            }
            Failed::Request(teleprompt::RequestError::Render(error)) | Failed::Tokens(error) => {
                errors::raise(py, &error)
            }
        }
    }
}

impl PyPrompt {
    /// One row of `render_many` as a render request, converted while the
    /// GIL is held.
    fn prepare(
        &self,
        row: &Bound<'_, PyAny>,
        index: usize,
        records: bool,
        now: &str,
        time_zone: Option<&str>,
    ) -> Result<teleprompt::RenderRequest, Failed> {
        let at = format!("rows[{index}]");
        let reads = |name: &str| self.inner.reads(name);
        // Data: only what the prompt may read; a record's keys are its fields.
        let keep: convert::Keep<'_> = if records { None } else { Some(&reads) };
        let value = convert::to_value_keeping(row, &at, keep).map_err(Failed::NotData)?;
        if !value.is_object() {
            return Err(Failed::Input(format!(
                "{at} must be a dict{}, not {}",
                if records {
                    " (a render record)"
                } else {
                    " of names to values"
                },
                teleprompt::data::describe(&value)
            )));
        }
        let mut request = if records {
            serde_json::from_value::<teleprompt::RenderRequest>(value)
                .map_err(|error| Failed::Input(format!("{at}: bad record: {error}")))?
        } else {
            teleprompt::RenderRequest::with_data(value)
        };
        if request.now.is_none() {
            request.now = Some(now.to_string());
        }
        if request.time_zone.is_none() {
            request.time_zone = time_zone.map(str::to_string);
        }
        Ok(request)
    }
}

/// A `timeout=` in seconds: positive and finite, else an `InputError`.
fn seconds(py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<std::time::Duration>> {
    match timeout {
        None => Ok(None),
        Some(seconds) => std::time::Duration::try_from_secs_f64(seconds)
            .ok()
            .filter(|duration| !duration.is_zero())
            .map(Some)
            .ok_or_else(|| {
                errors::input(
                    py,
                    format!("timeout must be a positive number of seconds, not {seconds}"),
                )
            }),
    }
}

/// The value of a keyword argument that takes one of two words.
fn choose<T: Copy>(
    py: Python<'_>,
    option: &str,
    given: &str,
    words: [(&str, T); 2],
) -> PyResult<T> {
    match words.iter().find(|(word, _)| *word == given) {
        Some((_, value)) => Ok(*value),
        None => Err(errors::input(
            py,
            format!(
                "{option} must be {:?} or {:?}, not {given:?}",
                words[0].0, words[1].0
            ),
        )),
    }
}

/// Whether the file at `path` still holds `text`.
fn same_text(path: &Path, text: &str) -> bool {
    std::fs::read(path).is_ok_and(|bytes| bytes == text.as_bytes())
}

#[pymethods]
impl PyPrompt {
    #[new]
    #[pyo3(signature = (source, name = "prompt", *, syntax = None, strict = None, functions = None, include_root = None, tokenizer = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        source: String,
        name: &str,
        syntax: Option<String>,
        strict: Option<String>,
        functions: Option<&Bound<'_, PyDict>>,
        include_root: Option<PathBuf>,
        tokenizer: Option<String>,
    ) -> PyResult<PyPrompt> {
        let options =
            Options::read(syntax, strict, functions, include_root).with_tokenizer(tokenizer);
        PyPrompt::load(
            py,
            Recipe {
                origin: name.to_string(),
                text: Some(source),
                from_file: false,
                options,
            },
        )
    }

    /// Loads a prompt file; files it includes are read from its folder (or
    /// `include_root`).
    #[staticmethod]
    #[pyo3(signature = (path, *, syntax = None, strict = None, functions = None, include_root = None, tokenizer = None))]
    fn from_file(
        py: Python<'_>,
        path: PathBuf,
        syntax: Option<String>,
        strict: Option<String>,
        functions: Option<&Bound<'_, PyDict>>,
        include_root: Option<PathBuf>,
        tokenizer: Option<String>,
    ) -> PyResult<PyPrompt> {
        let options =
            Options::read(syntax, strict, functions, include_root).with_tokenizer(tokenizer);
        let load_options = options.load_options(py)?;
        let loaded = py.detach(|| {
            let prompt = teleprompt::Prompt::from_file_with(&path, &load_options)?;
            // The text as loaded, for pickling (read once more: a prompt file is small).
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            Ok::<_, teleprompt::Error>((prompt, text))
        });
        let (prompt, text) = loaded.map_err(|error| errors::raise(py, &error))?;
        Ok(PyPrompt {
            inner: Arc::new(prompt),
            recipe: Recipe {
                origin: path.display().to_string(),
                text: Some(text),
                from_file: true,
                options,
            },
        })
    }

    /// Renders with `data` (a dict) and keyword arguments over it.
    #[pyo3(signature = (data = None, **kwargs))]
    pub(crate) fn render(
        &self,
        py: Python<'_>,
        data: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Rendered> {
        let data = self.data(py, data, kwargs)?;
        let prompt = &self.inner;
        errors::forget_host_exception();
        let result = py.detach(|| prompt.render(data));
        result
            .map(|inner| Rendered { inner })
            .map_err(|error| errors::raise(py, &error))
    }

    /// Renders one turn of a conversation: the context's data, namespaces,
    /// history, clock, turn and attempt.
    /// `timeout` (seconds) stops a render that runs longer: a
    /// `RenderError` of rule `render/timeout`.
    /// `source_map=True` records where each byte came from
    /// (`Rendered.source_map()`).
    #[pyo3(signature = (context, *, validate_history = true, timeout = None, source_map = false))]
    fn render_turn(
        &self,
        py: Python<'_>,
        context: &PromptContext,
        validate_history: bool,
        timeout: Option<f64>,
        source_map: bool,
    ) -> PyResult<Rendered> {
        let prompt = &self.inner;
        let context = &context.snapshot();
        let mut options = RenderOptions::new()
            .with_validate_history(validate_history)
            .with_source_map(source_map);
        if let Some(timeout) = seconds(py, timeout)? {
            options = options.with_deadline(std::time::Instant::now() + timeout);
        }
        errors::forget_host_exception();
        let result = py.detach(|| prompt.render_turn_with(context, &options));
        result
            .map(|inner| Rendered { inner })
            .map_err(|error| errors::raise(py, &error))
    }

    /// Renders every row in parallel, on `jobs` threads (default: one
    /// per core), without the GIL, as `teleprompt batch` renders a row
    /// (with `tokenize=True`, each row's tokens, a dict as
    /// `Rendered.tokens()` gives, counted on those threads too):
    /// each row is the data of one turn (`rows_are="data"`), or a render
    /// record (`rows_are="records"`: `{"data", "history", "turn",
    /// "max_turns", "attempt", "now", "time_zone", "labels",
    /// "validate_history"}`); rows without their own `now` share one clock,
    /// `now` or the time of the call. Returns a `Rendered` per row, in
    /// order. `errors="raise"` raises the first failing row's error (by
    /// position); `errors="return"` puts each failing row's exception in
    /// its place (rows that are not data too). `timeout` (seconds) stops
    /// a row's render that runs longer, from when the row starts: that
    /// row's `RenderError` (rule `render/timeout`).
    #[pyo3(signature = (rows, *, jobs = None, errors = "raise", rows_are = "data", now = None, time_zone = None, timeout = None, tokenize = false))]
    #[allow(clippy::too_many_arguments)]
    fn render_many(
        &self,
        py: Python<'_>,
        rows: &Bound<'_, PyAny>,
        jobs: Option<usize>,
        errors: &str,
        rows_are: &str,
        now: Option<&Bound<'_, PyAny>>,
        time_zone: Option<String>,
        timeout: Option<f64>,
        tokenize: bool,
    ) -> PyResult<Py<PyList>> {
        let timeout = seconds(py, timeout)?;
        let keep_errors = choose(py, "errors", errors, [("raise", false), ("return", true)])?;
        let records = choose(
            py,
            "rows_are",
            rows_are,
            [("data", false), ("records", true)],
        )?;
        let threads = match jobs {
            Some(0) => return Err(errors::input(py, "jobs must be at least 1")),
            Some(jobs) => jobs,
            None => std::thread::available_parallelism().map_or(1, usize::from),
        };
        let now = match now.filter(|now| !now.is_none()) {
            Some(now) => crate::context::now_text(py, now)?,
            None => teleprompt::context::Clock::System.now().to_string(),
        };
        let mut prepared = Vec::new();
        for (index, row) in rows.try_iter()?.enumerate() {
            prepared.push(self.prepare(&row?, index, records, &now, time_zone.as_deref()));
        }
        let prompt = &self.inner;
        errors::forget_host_exception();
        let results = py.detach(|| {
            let render = || {
                prepared
                    .into_par_iter()
                    .map(|row| match row {
                        Ok(mut request) => {
                            request.deadline =
                                timeout.map(|timeout| std::time::Instant::now() + timeout);
                            let rendered = request.render(prompt).map_err(Failed::Request)?;
                            match tokenize {
                                true => rendered
                                    .to_format(OutputFormat::Tokens)
                                    .map(Row::Tokens)
                                    .map_err(Failed::Tokens),
                                false => Ok(Row::Rendered(rendered)),
                            }
                        }
                        Err(failed) => Err(failed),
                    })
                    .collect::<Vec<_>>()
            };
            match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                Ok(pool) => pool.install(render),
                Err(_) => render(),
            }
        });
        let list = PyList::empty(py);
        for (index, result) in results.into_iter().enumerate() {
            let error = match result {
                Ok(Row::Rendered(inner)) => {
                    list.append(Rendered { inner })?;
                    continue;
                }
                Ok(Row::Tokens(tokens)) => {
                    list.append(convert::to_python(py, &tokens)?)?;
                    continue;
                }
                Err(failed) => failed.exception(py, index),
            };
            if !keep_errors {
                return Err(error);
            }
            list.append(error.into_value(py))?;
        }
        Ok(list.unbind())
    }

    /// The prompt's name (front matter `name`, else the file name).
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// The front matter's `description`.
    #[getter]
    fn description(&self) -> Option<&str> {
        self.inner.description()
    }

    /// `jinja`, `django`, `chat-template`, `go` or `handlebars`.
    #[getter]
    fn syntax(&self) -> &'static str {
        self.inner.syntax().as_str()
    }

    /// `strict`, `semi` or `lenient`.
    #[getter]
    fn strict(&self) -> &'static str {
        self.inner.strictness().as_str()
    }

    /// The file the prompt came from (or the name given).
    #[getter]
    fn origin(&self) -> &str {
        self.inner.origin()
    }

    /// The template body, without front matter.
    #[getter]
    fn body(&self) -> &str {
        self.inner.body()
    }

    /// A hash of the prompt's text and of every file it includes.
    #[getter]
    fn version(&self) -> String {
        self.inner.version()
    }

    /// The front matter as a dict.
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_python(py, &Value::Object(self.inner.metadata().clone()))
    }

    /// The files the prompt includes.
    #[getter]
    fn included_files(&self) -> Vec<PathBuf> {
        self.inner.included_files().map(Path::to_path_buf).collect()
    }

    /// What `teleprompt check` would warn about, one line each.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner
            .warnings()
            .iter()
            .map(|warning| warning.to_string())
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "Prompt(name={:?}, syntax={:?}, origin={:?})",
            self.inner.name(),
            self.inner.syntax().as_str(),
            self.inner.origin()
        )
    }

    /// Pickles by text and options: the copy compiles again where it lands
    /// (a `multiprocessing`, Ray or Spark worker). Host functions are
    /// pickled by Python (module-level functions pickle by name).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut recipe = self.recipe.clone();
        if recipe.text.is_none() {
            let text = std::fs::read_to_string(&recipe.origin).map_err(|error| {
                errors::input(
                    py,
                    format!(
                        "cannot pickle prompt {:?}: its file {} cannot be read: {error}",
                        self.inner.name(),
                        recipe.origin
                    ),
                )
            })?;
            recipe.text = Some(text);
        }
        let restore = py
            .import("teleprompt._teleprompt")?
            .getattr("_restore_prompt")?;
        let state = (
            recipe.origin,
            recipe.text,
            recipe.from_file,
            recipe.options.to_dict(py)?,
        );
        PyTuple::new(py, [restore, state.into_pyobject(py)?.into_any()])
    }
}

/// Makes a pickled prompt again.
#[pyfunction]
pub(crate) fn _restore_prompt(
    py: Python<'_>,
    origin: String,
    text: String,
    from_file: bool,
    options: &Bound<'_, PyDict>,
) -> PyResult<PyPrompt> {
    let options = Options::from_dict(options)?;
    PyPrompt::load(
        py,
        Recipe {
            origin,
            text: Some(text),
            from_file,
            options,
        },
    )
}

/// Makes a pickled `Rendered` again; state that is not one (corrupted,
/// cut short, forged) is an `InputError`.
#[pyfunction]
pub(crate) fn _restore_rendered(py: Python<'_>, state: &str) -> PyResult<Rendered> {
    crate::convert::from_record(state)
        .map(|inner| Rendered { inner })
        .map_err(|error| errors::input(py, format!("cannot unpickle a Rendered: {error}")))
}

/// The previous turn's tokens, for `Rendered.tokens(cache=…)`: one per
/// conversation, so each turn encodes only what it changed.
#[pyclass(frozen, module = "teleprompt._teleprompt", name = "TokenCache")]
pub(crate) struct TokenCache {
    inner: std::sync::Mutex<teleprompt::tokens::TokenCache>,
}

#[pymethods]
impl TokenCache {
    #[new]
    fn new() -> TokenCache {
        TokenCache {
            inner: Default::default(),
        }
    }
}

/// The result of a render: the text, and the messages the template wrote.
#[pyclass(frozen, module = "teleprompt._teleprompt")]
pub(crate) struct Rendered {
    pub inner: teleprompt::Rendered,
}

impl Rendered {
    fn shape<'py>(&self, py: Python<'py>, format: OutputFormat) -> PyResult<Bound<'py, PyAny>> {
        let value = self
            .inner
            .to_format(format)
            .map_err(|error| errors::raise(py, &error))?;
        convert::to_python(py, &value)
    }
}

#[pymethods]
impl Rendered {
    /// The rendered text.
    #[getter]
    fn text(&self) -> &str {
        self.inner.text()
    }

    /// The messages: history messages as they came, the rendered ones as
    /// `{"role": …, "content": [{"type": "text", "text": …}, …]}`.
    #[getter]
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.shape(py, OutputFormat::Messages)?.get_item("messages")
    }

    /// An OpenAI chat completions body, `{"messages": [...]}`: pass it as
    /// `client.chat.completions.create(model=…, **rendered.to_openai())`.
    fn to_openai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.shape(py, OutputFormat::OpenAi)
    }

    /// An Anthropic Messages body, `{"system": …, "messages": [...]}`:
    /// pass it as `client.messages.create(model=…, max_tokens=…, **rendered.to_anthropic())`.
    fn to_anthropic<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.shape(py, OutputFormat::Anthropic)
    }

    /// An Amazon Bedrock Converse body, `{"system": [...], "messages":
    /// [...]}` (content blocks; a cache breakpoint is a `cachePoint`):
    /// pass it as `client.converse(modelId=…, **rendered.to_bedrock())`.
    /// Media are base64 strings in `source.bytes`, as the API's JSON takes
    /// them; boto3 wants them decoded (`base64.b64decode`).
    fn to_bedrock<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.shape(py, OutputFormat::Bedrock)
    }

    /// Where each byte of the conversation came from, for a turn rendered
    /// with `source_map=True` (else `None`): `{"messages": [{"role",
    /// "parts": [{"text", "segments": [{"start", "end", "kind", "span",
    /// "path"}]}]}], "spans": [{"file", "line", "column", "len",
    /// "source"}], "paths": [...]}` — a segment's `span` and `path` index
    /// `spans` and `paths`.
    fn source_map<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(map) = py.detach(|| self.inner.source_map().cloned()) else {
            return Ok(None);
        };
        let value = serde_json::to_value(&map).unwrap_or(serde_json::Value::Null);
        convert::to_python(py, &value).map(Some)
    }

    /// How much of `previous` (the turn before) this turn keeps at its
    /// start: `{"bytes", "messages", "through_history", "change": {"message",
    /// "part", "offset", "line", "span", "path"} or None}` (the change's
    /// span and path when this turn has a source map).
    fn stable_prefix<'py>(
        &self,
        py: Python<'py>,
        previous: &Rendered,
    ) -> PyResult<Bound<'py, PyAny>> {
        let prefix = py.detach(|| self.inner.stable_prefix(&previous.inner));
        let value = serde_json::to_value(&prefix).unwrap_or(serde_json::Value::Null);
        convert::to_python(py, &value)
    }

    /// The tokens of each message, by the prompt's tokenizer (front matter
    /// `tokenizer:`): `{"tokenizer", "total", "messages": [{"role",
    /// "count", "ids"}]}`; a chat template's: `{"tokenizer", "total",
    /// "ids", "assistant_masks"}`. An `InputError` when the prompt names
    /// none. With `cache` (a `TokenCache` kept for the conversation), only
    /// what changed since the previous turn is encoded, and `"kept"` says
    /// how many tokens at the start are that turn's.
    #[pyo3(signature = (cache = None))]
    fn tokens<'py>(
        &self,
        py: Python<'py>,
        cache: Option<&TokenCache>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(cache) = cache else {
            return self.shape(py, OutputFormat::Tokens);
        };
        let counted = py.detach(|| {
            let mut kept = cache
                .inner
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            self.inner.tokens_with(&mut kept)
        });
        let tokens = counted.map_err(|error| errors::raise(py, &error))?;
        convert::to_python(py, &serde_json::to_value(tokens).unwrap_or(Value::Null))
    }

    /// With front matter `budget:`, what it did to this turn: `{"total",
    /// "tokens", "cuts": [{"part", "messages", "items", "truncated",
    /// "tokens", "reason"}], "sections": [{"name", "priority", "items",
    /// "printed", "tokens"}]}`; `None` for a prompt without one.
    #[getter]
    fn budget<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .budget()
            .map(|budget| {
                let value = serde_json::to_value(budget).unwrap_or(Value::Null);
                convert::to_python(py, &value)
            })
            .transpose()
    }

    /// What the host should know (args hidden by a namespace, dropped keys).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings().to_vec()
    }

    fn __str__(&self) -> &str {
        self.inner.text()
    }

    /// Two results are equal when everything they hold is: text,
    /// messages, history, warnings, tokenizer, budget, source map.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> bool {
        let Ok(other) = other.cast::<Rendered>() else {
            return false;
        };
        let other = other.get();
        py.detach(|| {
            let record = |rendered: &teleprompt::Rendered| serde_json::to_value(rendered).ok();
            let mine = record(&self.inner);
            mine.is_some() && mine == record(&other.inner)
        })
    }

    /// Pickles by what it holds (the library's serialized result): the
    /// copy gives the same text, messages, shapes, tokens, budget, source
    /// map and stable prefixes in another process.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let state = py
            .detach(|| serde_json::to_string(&self.inner))
            .map_err(|error| errors::input(py, format!("cannot pickle this Rendered: {error}")))?;
        let restore = py
            .import("teleprompt._teleprompt")?
            .getattr("_restore_rendered")?;
        PyTuple::new(py, [restore, PyTuple::new(py, [state])?.into_any()])
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let text = self.inner.text();
        let shown: String = text.chars().take(60).collect();
        let more = if shown.len() < text.len() { "…" } else { "" };
        let shown = pyo3::types::PyString::new(py, &shown).repr()?;
        Ok(format!("Rendered(text={shown}{more})"))
    }
}

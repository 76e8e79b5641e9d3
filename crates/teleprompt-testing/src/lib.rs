//! Prompt tests: cases that pin what a prompt renders. This crate is the
//! runner behind `teleprompt test`, on top of the `teleprompt` library.
//!
//! A case gives the data (and the turn, the clock, the history) and says
//! what must come out: the text, the messages, or an error. Cases live in
//! the prompt's front matter under `tests:`, or in a sibling file
//! `NAME.tests.yaml` (or `.tests.yml`) holding a list of them, where NAME
//! is the prompt's file name without its extension (`triage.md` →
//! `triage.tests.yaml`) or, when two prompts share a stem, the whole file
//! name (`assistant.django.tests.yaml`). Chat templates
//! (`tokenizer_config.json`, `*.chat_template.jinja`) and Semantic Kernel
//! prompt YAML take their cases from a sibling file only.
//!
//! ```yaml
//! tests:
//!   - name: first run
//!     data: {issue: {title: Fix login}}
//!     now: 2026-01-05T09:00:00Z
//!     expect: |
//!       Triage Fix login
//!   - name: continuation
//!     turn: 3
//!     history: [{role: user, content: hi}]
//!     expect_messages: [{role: system, content: "…"}, {role: user, content: hi}]
//!   - name: missing title
//!     data: {}
//!     expect_error: {class: render, message_contains: issue.title}
//! ```
//!
//! A host runs them with this crate and the library:
//!
//! ```
//! use teleprompt::{LoadOptions, Prompt};
//! use teleprompt_testing::{Outcome, PromptTests};
//!
//! let source = "---\nsyntax: jinja\ntests:\n  - data: {who: Ada}\n    expect: \"Hi Ada\"\n---\nHi {{ who }}";
//! let tests = PromptTests::from_source("hi.md", source, &LoadOptions::default())?;
//! let prompt = Prompt::from_source("hi.md", source, &LoadOptions::default());
//! let results = tests.run(prompt.as_ref());
//! assert!(matches!(results[0].outcome, Outcome::Pass));
//! # Ok::<(), teleprompt::Error>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod run;
mod update;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use teleprompt::context::Clock;
use teleprompt::data::{self, describe};
use teleprompt::diagnostics::closest;
use teleprompt::document::{self, Document};
use teleprompt::messages::{history_from_value, HistoryMessage};
use teleprompt::unstable;
use teleprompt::{limits, Error, ErrorClass, LoadOptions, Location, Prompt, Syntax};

pub use self::run::{run_case, Actual, CaseResult, Mismatch, Outcome};
pub use self::update::{update, write_atomically, Updated};

/// The guide's Rust examples (`docs/check-and-tests.md`), compiled and run as
/// doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/check-and-tests.md")]
struct CheckAndTestsGuideDoctests;

/// The keys a test case takes.
pub const CASE_KEYS: &[&str] = &[
    "name",
    "data",
    "turn",
    "max_turns",
    "attempt",
    "now",
    "time_zone",
    "history",
    "context",
    "expect",
    "expect_messages",
    "expect_error",
    "prefix_stable",
];

/// The keys of `expect_error`.
const ERROR_KEYS: &[&str] = &["class", "message_contains"];

/// The test cases of one prompt file, from its front matter and its sibling
/// tests file, in that order.
#[derive(Clone, Debug)]
pub struct PromptTests {
    /// The prompt file.
    pub prompt: PathBuf,
    /// The cases.
    pub cases: Vec<TestCase>,
}

/// One test case: what goes in, and what must come out.
#[derive(Clone, Debug)]
pub struct TestCase {
    /// `name`, else `case N` (1-based, in its file).
    pub name: String,
    /// Where the case is written (for reports and `--update`).
    pub origin: CaseOrigin,
    /// `data`: the data of the render (a mapping, or the path of a JSON or
    /// YAML file relative to the file that holds the case).
    pub data: Value,
    /// `turn`: the turn number (`run.turn_number`).
    pub turn: Option<u32>,
    /// `max_turns`: `run.max_turns`.
    pub max_turns: Option<u32>,
    /// `attempt`: the retry number (`attempt`).
    pub attempt: Option<u32>,
    /// `now`: the instant the render takes as the current time (RFC 3339);
    /// the system clock when absent.
    pub now: Option<Clock>,
    /// `time_zone`: the IANA zone of `system.local_datetime`.
    pub time_zone: Option<String>,
    /// `history`: the conversation so far (a list of chat messages, or
    /// the path of a file holding one); a chat template's `messages`.
    pub history: Option<Vec<HistoryMessage>>,
    /// `history` as written, for a chat template (its `messages`).
    history_value: Option<Value>,
    /// `context`: a Dotprompt template's render context (`@auth`, `@state`):
    /// a mapping, or the path of a file holding one.
    pub context: Option<Value>,
    /// What must come out.
    pub expect: Expectation,
    /// `prefix_stable: true`: the next turn (the turn after, a day and an
    /// hour later, the history an exchange longer) must keep this turn's
    /// conversation unchanged up to the end of its history — what a
    /// provider's prompt cache keeps ([`teleprompt::Rendered::stable_prefix`]).
    pub prefix_stable: bool,
}

/// Where a case is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseOrigin {
    /// The file that holds the case: the prompt file (front matter) or
    /// its sibling tests file.
    pub file: PathBuf,
    /// Whether the case is in the prompt's front matter.
    pub front_matter: bool,
    /// Its index in its list (0-based).
    pub index: usize,
}

/// What a case expects.
#[derive(Clone, Debug, PartialEq)]
pub enum Expectation {
    /// `expect`: the rendered text, exactly; `None` when written empty
    /// (`expect:`), to be recorded by an update.
    Text(Option<String>),
    /// `expect_messages`: the conversation as roles and contents; `None`
    /// when written empty.
    Messages(Option<Vec<ExpectedMessage>>),
    /// `expect_error`: the render (or the load) fails.
    Error(ExpectedError),
}

/// A message of `expect_messages`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedMessage {
    /// `role`.
    pub role: String,
    /// `content`: the text of the message (the text parts, joined).
    pub content: String,
}

/// `expect_error`: an error of this class whose words hold this text.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ExpectedError {
    /// `class`: document, parse, render, input (any when absent).
    pub class: Option<ErrorClass>,
    /// `message_contains`: text found in the error's message, the template
    /// text it points at or its help.
    pub message_contains: Option<String>,
}

impl PromptTests {
    /// Reads the cases of the prompt file at `path`: its front matter's
    /// `tests`, then its sibling tests file's. A prompt without cases has
    /// an empty list. A case that cannot be read is a `document` error
    /// naming the case and the key.
    pub fn read(path: impl AsRef<Path>, options: &LoadOptions) -> Result<PromptTests, Error> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let max = options.limits.max_template_bytes;
        let mut cases = Vec::new();
        if has_front_matter(path) {
            let bytes = limits::read_file(path, max, limits::Input::Template)?;
            let source = String::from_utf8_lossy(&bytes);
            cases = match front_matter_cases(path, &origin, &source, options) {
                Ok(cases) => cases,
                // Front matter that cannot be read is `check`'s to report,
                // unless it holds cases that would not run.
                Err(error)
                    if error.message().starts_with("test case")
                        || source.lines().any(|line| line.starts_with("tests:")) =>
                {
                    return Err(error)
                }
                Err(_) => Vec::new(),
            };
        }
        if let Some(file) = tests_file(path) {
            cases.extend(file_cases(&file, options)?);
        }
        Ok(PromptTests {
            prompt: path.to_path_buf(),
            cases,
        })
    }

    /// The cases in the front matter of a prompt given as text (no
    /// sibling file is read; data paths are relative to `origin`'s folder).
    pub fn from_source(
        origin: &str,
        source: &str,
        options: &LoadOptions,
    ) -> Result<PromptTests, Error> {
        let path = Path::new(origin);
        let cases = match has_front_matter(path) {
            true => front_matter_cases(path, origin, source, options)?,
            false => Vec::new(),
        };
        Ok(PromptTests {
            prompt: path.to_path_buf(),
            cases,
        })
    }

    /// Runs every case against `prompt` (or against the error that kept
    /// it from loading: a case that expects that error passes).
    pub fn run(&self, prompt: Result<&Prompt, &Error>) -> Vec<CaseResult<'_>> {
        self.cases
            .iter()
            .map(|case| run_case(prompt, case))
            .collect()
    }
}

/// Whether the prompt file at `path` may hold front matter (not a
/// tokenizer config, not a Semantic Kernel prompt YAML).
fn has_front_matter(path: &Path) -> bool {
    unstable::has_front_matter(path)
}

/// The sibling tests file of the prompt at `path`, if there is one:
/// `NAME.tests.yaml` / `.tests.yml` by the whole file name first, then by
/// its stem.
pub fn tests_file(path: &Path) -> Option<PathBuf> {
    let dir = path.parent()?;
    let name = path.file_name()?.to_string_lossy().into_owned();
    let stem = document::file_stem(path);
    [name, stem]
        .iter()
        .flat_map(|base| ["yaml", "yml"].map(|ext| dir.join(format!("{base}.tests.{ext}"))))
        .find(|candidate| candidate.is_file())
}

/// The prompts that `paths` name, and the tests files among them that no
/// prompt reads.
#[derive(Debug, Default)]
pub struct ToTest {
    /// The prompt files, in order and without repeats.
    pub prompts: Vec<PathBuf>,
    /// A `document` error for each tests file found in a folder that no
    /// prompt reads (no prompt of its name, or another tests file of the
    /// same prompt is read instead): its cases would never run.
    pub unread: Vec<Error>,
}

/// The prompt files that `paths` name: a folder gives its prompt files
/// ([`teleprompt::prompt_files`]) and the prompts of the tests files in it, a
/// tests file gives the prompt it tests, any other file is taken as a
/// prompt. A path that does not exist is an `io` error.
pub fn prompts_to_test(paths: &[PathBuf]) -> Result<ToTest, Error> {
    let mut found = ToTest::default();
    let add = |file: PathBuf, found: &mut ToTest| {
        if !found.prompts.contains(&file) {
            found.prompts.push(file);
        }
    };
    for path in paths {
        if path.is_dir() {
            for file in teleprompt::prompt_files(path)? {
                add(file, &mut found);
            }
            for tests in tests_files(path)? {
                match prompt_of_tests_file(&tests) {
                    Ok(prompt) if tests_file(&prompt).as_ref() == Some(&tests) => {
                        add(prompt, &mut found)
                    }
                    Ok(prompt) => found.unread.push(
                        Error::new(
                            ErrorClass::Document,
                            format!(
                                "this tests file is not read: {} reads {}",
                                prompt.display(),
                                tests_file(&prompt)
                                    .map(|other| other.display().to_string())
                                    .unwrap_or_default()
                            ),
                        )
                        .with_file(tests.display().to_string()),
                    ),
                    Err(error) => found.unread.push(error),
                }
            }
        } else if is_tests_file(path) {
            add(prompt_of_tests_file(path)?, &mut found);
        } else if path.exists() {
            add(path.clone(), &mut found);
        } else {
            return Err(Error::new(ErrorClass::Io, "no such file or directory")
                .with_file(path.display().to_string()));
        }
    }
    Ok(found)
}

/// The folder a file is in (`.` for a bare name) and its file name.
fn folder_and_name(path: &Path) -> (&Path, String) {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    (dir, name)
}

/// The tests files under `dir`, sorted, honouring `.gitignore`.
fn tests_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    unstable::files_under(dir, is_tests_file)
}

/// The prompt a tests file belongs to: `NAME.tests.yaml` beside the file
/// `NAME`, else beside the one prompt whose stem is NAME (data files and
/// prompts with a tests file of their whole name left out). No such
/// prompt, or several, is a `document` error.
pub fn prompt_of_tests_file(path: &Path) -> Result<PathBuf, Error> {
    let origin = path.display().to_string();
    let (dir, name) = folder_and_name(path);
    let base = name
        .rsplit_once(".tests.")
        .map_or(name.as_str(), |(base, _)| base);
    let whole = dir.join(base);
    if whole.is_file() {
        return Ok(whole);
    }
    let entries = std::fs::read_dir(dir).map_err(|error| {
        Error::new(
            ErrorClass::Io,
            format!("cannot read the directory: {error}"),
        )
        .with_file(dir.display().to_string())
    })?;
    let mut candidates: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|file| file.is_file() && !is_tests_file(file))
        .filter(|file| document::file_stem(file) == base)
        .filter(|file| unstable::could_be_prompt(file))
        .filter(|file| {
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            ["yaml", "yml"]
                .iter()
                .all(|ext| !dir.join(format!("{name}.tests.{ext}")).is_file())
        })
        .collect();
    candidates.sort();
    match candidates.len() {
        1 => Ok(candidates.remove(0)),
        0 => Err(Error::new(
            ErrorClass::Document,
            format!("this tests file belongs to no prompt: no prompt file named \"{base}\" or \"{base}.*\" is beside it"),
        )
        .with_file(origin)),
        _ => Err(Error::new(
            ErrorClass::Document,
            format!(
                "several prompts are named \"{base}.*\" ({}): name the tests file after the whole file name, as {}",
                candidates
                    .iter()
                    .filter_map(|file| file.file_name())
                    .map(|name| name.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join(", "),
                candidates
                    .first()
                    .and_then(|file| file.file_name())
                    .map(|name| format!("{}.tests.yaml", name.to_string_lossy()))
                    .unwrap_or_default()
            ),
        )
        .with_file(origin)),
    }
}

/// Whether `path` names a tests file (`*.tests.yaml`, `*.tests.yml`).
pub fn is_tests_file(path: &Path) -> bool {
    unstable::is_tests_file(path)
}

fn front_matter_cases(
    path: &Path,
    origin: &str,
    source: &str,
    options: &LoadOptions,
) -> Result<Vec<TestCase>, Error> {
    let document = Document::parse(origin, source)?;
    let Some(tests) = document.front_matter.get(document::key::TESTS) else {
        return Ok(Vec::new());
    };
    let fail = |case: Option<usize>, message: String, suggestion: Option<String>| {
        let error = unstable::with_suggestion(
            document.key_error(document::key::TESTS, message),
            suggestion,
        );
        // On the case's line that sets the key the message names, as in a
        // tests file; else on `tests:`.
        let Some(at) = error.location() else {
            return error;
        };
        let block: Vec<&str> = source
            .lines()
            .skip(at.line)
            .take_while(|line| {
                *line != "---" && (line.trim().is_empty() || line.starts_with([' ', '-', '#']))
            })
            .collect();
        match key_line(&block.join("\n"), case, &message_key(error.message())) {
            Some((line, column, source)) => at_key(error, at.line + line, column, source),
            None => error,
        }
    };
    let origin = CaseOrigin {
        file: path.to_path_buf(),
        front_matter: true,
        index: 0,
    };
    read_cases(tests, &origin, options, &fail)
}

fn file_cases(file: &Path, options: &LoadOptions) -> Result<Vec<TestCase>, Error> {
    let origin = file.display().to_string();
    let bytes = limits::read_file(file, options.limits.max_data_bytes, limits::Input::Data)?;
    let text = String::from_utf8_lossy(&bytes);
    let value = match data::parse_yaml(&text) {
        Ok(value) => value,
        Err((line, column, message)) => {
            return Err(unstable::error_in_text(
                ErrorClass::Document,
                &origin,
                &text,
                Location { line, column },
                message,
            ))
        }
    };
    let fail = |case: Option<usize>, message: String, suggestion: Option<String>| {
        let error = unstable::with_suggestion(
            Error::new(ErrorClass::Document, message).with_file(&origin),
            suggestion,
        );
        // Values carry no positions: place the error on the line of the
        // case that sets the key it names, when it names one.
        match key_line(&text, case, &message_key(error.message())) {
            Some((line, column, source)) => at_key(error, line, column, source),
            None => error,
        }
    };
    let origin = CaseOrigin {
        file: file.to_path_buf(),
        front_matter: false,
        index: 0,
    };
    read_cases(&value, &origin, options, &fail)
}

/// The key an error message names in backquotes (`unknown key \`expct\``).
fn message_key(message: &str) -> String {
    message
        .split('`')
        .nth(1)
        .and_then(|quoted| quoted.split([':', ' ']).next())
        .and_then(|key| key.split('.').next_back())
        .unwrap_or_default()
        .to_string()
}

/// `error` placed at the key at `line:column` (1-based) whose line is
/// `source`, the key underlined.
fn at_key(error: Error, line: usize, column: usize, source: String) -> Error {
    let width = source
        .chars()
        .skip(column - 1)
        .take_while(|&c| c != ':')
        .count()
        .max(1);
    unstable::with_location(error, Location { line, column }, Some((source, width)))
}

/// The first line (1-based) of `text` that sets `key` in the case at
/// `case` of a block list (in the whole text when the case is not found),
/// the key's column (1-based, in characters) and the line's text.
fn key_line(text: &str, case: Option<usize>, key: &str) -> Option<(usize, usize, String)> {
    if key.is_empty() {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let indent = |line: &str| line.len() - line.trim_start_matches(' ').len();
    let first = lines.iter().find(|line| {
        let trimmed = line.trim();
        !trimmed.is_empty() && !trimmed.starts_with('#')
    });
    let (start, end) = match (case, first) {
        (Some(case), Some(first)) => {
            let level = indent(first);
            let items: Vec<usize> = (0..lines.len())
                .filter(|&i| indent(lines[i]) == level && lines[i].trim_start().starts_with('-'))
                .collect();
            match items.get(case) {
                Some(&start) => (start, items.get(case + 1).copied().unwrap_or(lines.len())),
                None => (0, lines.len()),
            }
        }
        _ => (0, lines.len()),
    };
    let prefix = format!("{key}:");
    (start..end).find_map(|index| {
        let line = lines[index];
        let trimmed = line.trim_start().trim_start_matches("- ").trim_start();
        let column = line[..line.len() - trimmed.len()].chars().count() + 1;
        trimmed
            .starts_with(&prefix)
            .then(|| (index + 1, column, line.to_string()))
    })
}

type Fail<'a> = dyn Fn(String, Option<String>) -> Error + 'a;

/// Makes the error of a case (by its index) or of the whole list.
type Place<'a> = dyn Fn(Option<usize>, String, Option<String>) -> Error + 'a;

fn read_cases(
    value: &Value,
    origin: &CaseOrigin,
    options: &LoadOptions,
    fail: &Place<'_>,
) -> Result<Vec<TestCase>, Error> {
    let list = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(list) => list,
        other => {
            return Err(fail(
                None,
                format!(
                    "`tests` must be a list of test cases, found {}",
                    describe(other)
                ),
                None,
            ))
        }
    };
    list.iter()
        .enumerate()
        .map(|(index, case)| {
            let origin = CaseOrigin {
                index,
                ..origin.clone()
            };
            read_case(case, origin, options, fail)
        })
        .collect()
}

fn read_case(
    value: &Value,
    origin: CaseOrigin,
    options: &LoadOptions,
    place: &Place<'_>,
) -> Result<TestCase, Error> {
    let index = origin.index;
    let number = index + 1;
    let Value::Object(case) = value else {
        return Err(place(
            Some(origin.index),
            format!(
                "test case {number} must be a mapping of keys (name, data, expect, …), found {}",
                describe(value)
            ),
            None,
        ));
    };
    let name = match case.get("name") {
        None | Some(Value::Null) => format!("case {number}"),
        Some(Value::String(name)) => name.clone(),
        Some(other) => other.to_string(),
    };
    let label = format!("test case {number} (\"{name}\")");
    let fail = |message: String, suggestion: Option<String>| {
        place(Some(index), format!("{label}: {message}"), suggestion)
    };
    if let Some(unknown) = case.keys().find(|key| !CASE_KEYS.contains(&key.as_str())) {
        let suggestion = closest(unknown, CASE_KEYS.iter().copied())
            .map(|key| format!("did you mean \"{key}\"?"));
        return Err(fail(
            format!(
                "unknown key `{unknown}` (a case takes {})",
                CASE_KEYS.join(", ")
            ),
            suggestion,
        ));
    }
    let base = origin
        .file
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let read_path = |key: &str, relative: &str| {
        let (root, name) = confined(base, options.include_root.as_deref(), relative);
        data::read_file_inside(root, &name, options.limits.max_data_bytes).map_err(|error| {
            fail(
                format!("`{key}: {relative}` cannot be read: {}", error.message()),
                None,
            )
        })
    };
    let data = match case.get("data") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::String(path)) => read_path("data", path)?,
        Some(other) => other.clone(),
    };
    if !data.is_object() {
        return Err(fail(
            format!(
                "`data` must be a mapping of names to values (or the path of a data file), found {}",
                describe(&data)
            ),
            None,
        ));
    }
    let number_of = |key: &str| -> Result<Option<u32>, Error> {
        match case.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n <= u64::from(u32::MAX)) => {
                Ok(n.as_u64().and_then(|n| u32::try_from(n).ok()))
            }
            Some(other) => Err(fail(
                format!("`{key}` must be a whole number, found {}", describe(other)),
                None,
            )),
        }
    };
    let text_of = |key: &str| -> Result<Option<&str>, Error> {
        match case.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(fail(
                format!("`{key}` must be text, found {}", describe(other)),
                None,
            )),
        }
    };
    let now = text_of("now")?
        .map(|text| {
            Clock::parse(text).map_err(|error| fail(format!("`now`: {}", error.message()), None))
        })
        .transpose()?;
    let time_zone = text_of("time_zone")?.map(str::to_string);
    if let Some(zone) = &time_zone {
        teleprompt::PromptContext::new()
            .time_zone_named(zone)
            .map_err(|error| fail(format!("`time_zone`: {}", error.message()), None))?;
    }
    let history_value = match case.get("history") {
        None | Some(Value::Null) => None,
        Some(Value::String(path)) => Some(read_path("history", path)?),
        Some(other) => Some(other.clone()),
    };
    let history = history_value
        .clone()
        .map(|value| {
            history_from_value(value).map_err(|error| fail(format!("`history`: {error}"), None))
        })
        .transpose()?;
    let context = match case.get("context") {
        None | Some(Value::Null) => None,
        Some(Value::String(path)) => Some(read_path("context", path)?),
        Some(other) => Some(other.clone()),
    };
    let context = match context {
        None => None,
        Some(Value::Object(map)) => Some(Value::Object(map)),
        Some(other) => {
            return Err(fail(
                format!(
                    "`context` must be a mapping (auth, state, …) or the path of a file holding one, found {}",
                    describe(&other)
                ),
                None,
            ))
        }
    };
    let expect = read_expectation(case, &fail)?;
    let prefix_stable = match case.get("prefix_stable") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(stable)) => *stable,
        Some(other) => {
            return Err(fail(
                format!(
                    "`prefix_stable` must be true or false, found {}",
                    describe(other)
                ),
                None,
            ))
        }
    };
    Ok(TestCase {
        name,
        origin,
        data,
        turn: number_of("turn")?,
        max_turns: number_of("max_turns")?,
        attempt: number_of("attempt")?,
        now,
        time_zone,
        history,
        history_value,
        context,
        expect,
        prefix_stable,
    })
}

fn read_expectation(case: &Map<String, Value>, fail: &Fail<'_>) -> Result<Expectation, Error> {
    let given: Vec<&str> = ["expect", "expect_messages", "expect_error"]
        .into_iter()
        .filter(|key| case.contains_key(*key))
        .collect();
    let key = match given.as_slice() {
        [key] => *key,
        [] => {
            return Err(fail(
                "no expectation: add `expect` (the text), `expect_messages` or `expect_error` \
                 (an empty `expect:` is filled in by `teleprompt test --update`)"
                    .to_string(),
                None,
            ))
        }
        _ => {
            return Err(fail(
                format!("give one expectation, not {}", given.join(" and ")),
                None,
            ))
        }
    };
    let value = case.get(key).unwrap_or(&Value::Null);
    match (key, value) {
        ("expect", Value::Null) => Ok(Expectation::Text(None)),
        ("expect", Value::String(text)) => Ok(Expectation::Text(Some(text.clone()))),
        ("expect", other) => Err(fail(
            format!(
                "`expect` must be text (the rendered text), found {}",
                describe(other)
            ),
            None,
        )),
        ("expect_messages", Value::Null) => Ok(Expectation::Messages(None)),
        ("expect_messages", Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(index, message)| read_message(index, message, fail))
            .collect::<Result<Vec<_>, Error>>()
            .map(|messages| Expectation::Messages(Some(messages))),
        ("expect_messages", other) => Err(fail(
            format!(
                "`expect_messages` must be a list of {{role, content}}, found {}",
                describe(other)
            ),
            None,
        )),
        (_, Value::Object(error)) => {
            if let Some(unknown) = error.keys().find(|key| !ERROR_KEYS.contains(&key.as_str())) {
                let suggestion = closest(unknown, ERROR_KEYS.iter().copied())
                    .map(|key| format!("did you mean \"expect_error.{key}\"?"));
                return Err(fail(
                    format!(
                        "unknown key `expect_error.{unknown}` (it takes {})",
                        ERROR_KEYS.join(", ")
                    ),
                    suggestion,
                ));
            }
            let class = match error.get("class") {
                None | Some(Value::Null) => None,
                Some(Value::String(name)) => Some(parse_class(name).ok_or_else(|| {
                    fail(
                        format!(
                            "`expect_error.class: {name}` is not one of document, parse, render, input, io"
                        ),
                        None,
                    )
                })?),
                Some(other) => {
                    return Err(fail(
                        format!("`expect_error.class` must be text, found {}", describe(other)),
                        None,
                    ))
                }
            };
            let message_contains = match error.get("message_contains") {
                None | Some(Value::Null) => None,
                Some(Value::String(text)) => Some(text.clone()),
                Some(other) => {
                    return Err(fail(
                        format!(
                            "`expect_error.message_contains` must be text, found {}",
                            describe(other)
                        ),
                        None,
                    ))
                }
            };
            Ok(Expectation::Error(ExpectedError {
                class,
                message_contains,
            }))
        }
        (_, Value::Null) => Ok(Expectation::Error(ExpectedError::default())),
        (_, other) => Err(fail(
            format!(
                "`expect_error` must be a mapping (class, message_contains), found {}",
                describe(other)
            ),
            None,
        )),
    }
}

fn read_message(index: usize, value: &Value, fail: &Fail<'_>) -> Result<ExpectedMessage, Error> {
    let number = index + 1;
    let Value::Object(message) = value else {
        return Err(fail(
            format!(
                "`expect_messages` item {number} must be a mapping {{role, content}}, found {}",
                describe(value)
            ),
            None,
        ));
    };
    if let Some(unknown) = message
        .keys()
        .find(|key| !["role", "content"].contains(&key.as_str()))
    {
        let suggestion =
            closest(unknown, ["role", "content"]).map(|key| format!("did you mean \"{key}\"?"));
        return Err(fail(
            format!("`expect_messages` item {number} has an unknown key `{unknown}` (it takes role, content)"),
            suggestion,
        ));
    }
    let text = |key: &str| match message.get(key) {
        Some(Value::String(text)) => Ok(text.clone()),
        None | Some(Value::Null) if key == "content" => Ok(String::new()),
        other => Err(fail(
            format!(
                "`expect_messages` item {number} needs `{key}` as text, found {}",
                other.map_or("nothing", describe)
            ),
            None,
        )),
    };
    Ok(ExpectedMessage {
        role: text("role")?,
        content: text("content")?,
    })
}

fn parse_class(name: &str) -> Option<ErrorClass> {
    [
        ErrorClass::Document,
        ErrorClass::Parse,
        ErrorClass::Render,
        ErrorClass::Input,
        ErrorClass::Io,
    ]
    .into_iter()
    .find(|class| class.as_str() == name)
}

impl TestCase {
    /// The data of a chat template's render: the case's data, with the
    /// history as its `messages`.
    fn chat_data(&self) -> Value {
        let mut data = self.data.clone();
        if let (Some(history), Value::Object(map)) = (&self.history_value, &mut data) {
            let messages = match history {
                Value::Object(object) => object.get("messages").cloned().unwrap_or(Value::Null),
                other => other.clone(),
            };
            map.insert("messages".to_string(), messages);
        }
        data
    }

    fn is_chat_template(prompt: &Prompt) -> bool {
        prompt.syntax() == Syntax::ChatTemplate
    }
}

/// Where a test's `data:`/`history:`/`context:` path `relative` (written
/// relative to the test's folder `base`) is read from, under the one
/// confinement rule (`teleprompt::limits::read_inside`): inside the include
/// root when `base` is in it (`../shared.json` may reach a file elsewhere
/// in the root, never out of it), else inside `base`. The name is resolved
/// against the root lexically; `read_inside` then refuses `..` that leaves
/// the root, absolute paths and symbolic links out.
fn confined<'a>(base: &'a Path, root: Option<&'a Path>, relative: &str) -> (&'a Path, String) {
    let Some(root) = root else {
        return (base, relative.to_string());
    };
    let (Ok(canonical_root), Ok(canonical_base)) = (root.canonicalize(), base.canonicalize())
    else {
        return (base, relative.to_string());
    };
    let Ok(inside) = canonical_base.strip_prefix(&canonical_root) else {
        return (base, relative.to_string());
    };
    let mut parts: Vec<std::ffi::OsString> = inside
        .components()
        .map(|part| part.as_os_str().to_owned())
        .collect();
    for component in Path::new(relative).components() {
        match component {
            std::path::Component::Normal(part) => parts.push(part.to_owned()),
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir if !parts.is_empty() => {
                parts.pop();
            }
            // Leaves the root, or absolute: read_inside says why.
            _ => return (base, relative.to_string()),
        }
    }
    let name: PathBuf = parts.iter().collect();
    (root, name.display().to_string())
}

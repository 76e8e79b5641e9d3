//! Errors: their class, their place in the real file, and the report text.
//!
//! Template front ends report positions as byte ranges in the template body
//! (`TemplateError`); [`crate::document::Document`] turns those into
//! `file:line:col` in the file on disk, front matter counted.

use std::fmt;
use std::ops::Range;

pub mod codes;
mod render;

/// What kind of mistake an [`Error`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorClass {
    /// The prompt file cannot be read as a prompt: unreadable front matter,
    /// unknown syntax, a bad value for a known key.
    Document,
    /// The template cannot be compiled; found when the prompt is loaded.
    Parse,
    /// The data does not fit the template; found when it renders.
    Render,
    /// The data given to the prompt is malformed (not JSON/YAML, bad `--set`).
    Input,
    /// A file or directory could not be read.
    Io,
    /// Not an error: a likely mistake that loads and may render, such as
    /// `.issue` inside a Go `range` (`teleprompt check` prints these).
    Warning,
}

impl ErrorClass {
    /// The lower-case word used in reports: `document`, `parse`, …
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Document => "document",
            ErrorClass::Parse => "parse",
            ErrorClass::Render => "render",
            ErrorClass::Input => "input",
            ErrorClass::Io => "io",
            ErrorClass::Warning => "warning",
        }
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A position in a file: 1-based line, 1-based column counted in characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// Line in the file, starting at 1.
    pub line: usize,
    /// Column in characters, starting at 1.
    pub column: usize,
}

/// An error from loading or rendering a prompt.
///
/// `Display` gives one line (`file:line:col: class error: message`);
/// [`Error::report`] gives the full report with the source line and a caret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Error(Box<Details>);

/// The contents of an [`Error`], boxed to keep `Result`s small.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Details {
    class: ErrorClass,
    file: Option<String>,
    location: Option<Location>,
    /// The source line at `location` as the report shows it (at most
    /// [`SHOWN_LINE`] characters around the column).
    source_line: Option<ShownLine>,
    /// What the report says under the carets at `location`, if anything
    /// (`this for is never closed`).
    label: Option<String>,
    /// Other places in the same file the report points at, each with its
    /// label (the end of the file an unclosed block runs into).
    secondary: Vec<Secondary>,
    action: Option<String>,
    message: String,
    suggestion: Option<String>,
    /// For an error about missing data: the path that was missing.
    path: Option<String>,
    labels: Vec<(String, String)>,
    /// The kind of problem within the class, such as `unknown-filter`.
    kind: Option<&'static str>,
    /// Further errors found in the same file with this one (at most
    /// [`MAX_ERRORS_PER_FILE`] in all).
    others: Vec<Error>,
    /// How many more errors the file has beyond those kept.
    omitted: usize,
    /// The file's warnings, where they could be computed despite the errors.
    warnings: Vec<Error>,
}

/// The most characters of a source line an error keeps and shows: a long
/// line (a minified file, a hostile one) is cut to a window around the
/// column, so that each of a file's errors does not hold a copy of it.
const SHOWN_LINE: usize = 160;

/// A source line as an error shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ShownLine {
    /// The line, or the window of it around the column (`…` where cut).
    text: String,
    /// Characters before the first underlined one, in `text`.
    pad: usize,
    /// Characters underlined, in `text`.
    width: usize,
    /// Characters underlined in the whole line (for the end column).
    underlined: usize,
}

impl ShownLine {
    /// `line` with `width` characters underlined from `column` (1-based).
    fn new(line: &str, column: usize, width: usize) -> ShownLine {
        let start = column.saturating_sub(1);
        let count = line.chars().count();
        if count <= SHOWN_LINE {
            return ShownLine {
                text: line.to_string(),
                pad: start,
                width,
                underlined: width,
            };
        }
        // A column past the end of the line (an error at its end) shows
        // the line's last characters.
        let from = start.min(count).saturating_sub(SHOWN_LINE / 2);
        let to = (from + SHOWN_LINE).min(count);
        let mut text = String::new();
        if from > 0 {
            text.push('…');
        }
        text.extend(line.chars().skip(from).take(to - from));
        if to < count {
            text.push('…');
        }
        let pad = start - from + usize::from(from > 0);
        ShownLine {
            text,
            pad,
            width: width.min(to.saturating_sub(start)).max(1),
            underlined: width,
        }
    }
}

impl ShownLine {
    /// The underlined part of [`ShownLine::text`] as a byte range (empty
    /// at the end of the text for a column past it).
    fn underlined_bytes(&self) -> Range<usize> {
        let byte_at = |chars: usize| {
            self.text
                .char_indices()
                .nth(chars)
                .map_or(self.text.len(), |(at, _)| at)
        };
        let start = byte_at(self.pad);
        let end = byte_at(self.pad.saturating_add(self.width)).max(start);
        start..end
    }
}

/// Another place in the error's file that its report points at, with a
/// label of its own; like the error's own line, only a window of its line
/// is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Secondary {
    location: Location,
    line: ShownLine,
    label: String,
}

/// The most errors kept for one file: a file with more reports these and
/// says how many more there were ([`Error::omitted`]).
pub const MAX_ERRORS_PER_FILE: usize = 100;

impl Error {
    /// A new error with a class and message and no location.
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Error {
        Error(Box::new(Details {
            class,
            file: None,
            location: None,
            source_line: None,
            label: None,
            secondary: Vec::new(),
            action: None,
            message: message.into(),
            suggestion: None,
            path: None,
            labels: Vec::new(),
            kind: None,
            others: Vec::new(),
            omitted: 0,
            warnings: Vec::new(),
        }))
    }

    /// Further errors found in the same file with this one, in the order of
    /// the file (loading stops at the first error, but the front ends go on
    /// past unknown names, wrong argument counts and unresolvable
    /// templates to find the rest). Empty for most errors.
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt};
    ///
    /// let error = Prompt::from_source("two.j2", "{{ x | uper }}\n{{ y | lowr }}", &LoadOptions::default())
    ///     .unwrap_err();
    /// assert_eq!(error.rule(), "parse/unknown-filter");
    /// assert_eq!(error.others().len(), 1);
    /// assert_eq!(error.others()[0].location().map(|at| at.line), Some(2));
    /// ```
    pub fn others(&self) -> &[Error] {
        &self.0.others
    }

    /// How many errors of the file were found beyond this one and
    /// [`Error::others`], which hold at most [`MAX_ERRORS_PER_FILE`].
    pub fn omitted(&self) -> usize {
        self.0.omitted
    }

    /// The warnings of the file this error stopped, where they could still
    /// be computed (its template compiled, but for unknown names and the
    /// like); empty otherwise.
    pub fn warnings(&self) -> &[Error] {
        &self.0.warnings
    }

    /// This error and every other one found with it, each alone (without
    /// others or warnings), in order; when errors were omitted, a last
    /// one of kind `too-many-errors` says how many.
    pub fn all(&self) -> Vec<Error> {
        let mut first = self.clone();
        let others = std::mem::take(&mut first.0.others);
        first.0.omitted = 0;
        first.0.warnings = Vec::new();
        let mut all = Vec::with_capacity(others.len() + 2);
        all.push(first);
        all.extend(others);
        if self.0.omitted > 0 {
            let mut note = Error::new(
                self.0.class,
                format!(
                    "{} more error{} in this file not shown (at most {MAX_ERRORS_PER_FILE} are reported per file)",
                    self.0.omitted,
                    if self.0.omitted == 1 { "" } else { "s" }
                ),
            )
            .with_kind("too-many-errors");
            note.0.file = self.0.file.clone();
            all.push(note);
        }
        all
    }

    /// Attaches further errors of the same file (see [`Error::others`]),
    /// keeping at most [`MAX_ERRORS_PER_FILE`] in all and counting the rest.
    pub fn with_others(mut self, others: impl IntoIterator<Item = Error>) -> Error {
        for other in others {
            let mut other = other;
            let nested = std::mem::take(&mut other.0.others);
            let more = std::mem::take(&mut other.0.omitted);
            for error in std::iter::once(other).chain(nested) {
                if self.0.others.len() + 1 < MAX_ERRORS_PER_FILE {
                    self.0.others.push(error);
                } else {
                    self.0.omitted += 1;
                }
            }
            self.0.omitted += more;
        }
        self
    }

    /// Counts `count` more errors of the file that were not kept.
    pub(crate) fn with_omitted(mut self, count: usize) -> Error {
        self.0.omitted += count;
        self
    }

    /// Attaches the warnings of the file (see [`Error::warnings`]).
    pub(crate) fn with_warnings(mut self, warnings: Vec<Error>) -> Error {
        self.0.warnings = warnings;
        self
    }

    /// Names the file the error is about.
    pub fn with_file(mut self, file: impl Into<String>) -> Error {
        self.0.file = Some(file.into());
        self
    }

    /// Places the error at `location`, keeping a window of its line
    /// (`source_line`: the line and how many characters to underline).
    pub(crate) fn with_location(
        mut self,
        location: Location,
        source_line: Option<(&str, usize)>,
    ) -> Error {
        self.0.location = Some(location);
        self.0.source_line =
            source_line.map(|(line, width)| ShownLine::new(line, location.column, width));
        self
    }

    /// The label the report prints under the carets at the error's place.
    pub(crate) fn with_primary_label(mut self, label: Option<String>) -> Error {
        self.0.label = label;
        self
    }

    /// Points the report at another place of the same file too: `line`
    /// is the text of that place's line (only a window around `location`
    /// is kept), `width` the characters to underline.
    pub(crate) fn with_secondary(
        mut self,
        location: Location,
        line: &str,
        width: usize,
        label: impl Into<String>,
    ) -> Error {
        self.0.secondary.push(Secondary {
            location,
            line: ShownLine::new(line, location.column, width),
            label: label.into(),
        });
        self
    }

    /// An error at `line:column` of `text` (the whole file, named
    /// `origin`), underlining from the column to the end of that line.
    pub(crate) fn in_text(
        class: ErrorClass,
        origin: &str,
        text: &str,
        location: Location,
        message: impl Into<String>,
    ) -> Error {
        let line = text
            .lines()
            .nth(location.line.saturating_sub(1))
            .unwrap_or("");
        let width = (line.chars().count() + 1)
            .saturating_sub(location.column)
            .max(1);
        Error::new(class, message)
            .with_file(origin)
            .with_location(location, Some((line, width)))
    }

    pub(crate) fn with_action(mut self, action: Option<String>) -> Error {
        self.0.action = action;
        self
    }

    pub(crate) fn with_suggestion(mut self, suggestion: Option<String>) -> Error {
        self.0.suggestion = suggestion;
        self
    }

    /// Names the path into the data that was missing (see [`Error::path`]).
    pub(crate) fn with_path(mut self, path: Option<String>) -> Error {
        self.0.path = path;
        self
    }

    /// Attaches `key=value` labels (an issue id, a turn number) that every
    /// report of this error shows.
    pub fn with_labels(mut self, labels: &[(String, String)]) -> Error {
        self.0.labels.extend(labels.iter().cloned());
        self
    }

    /// The error with another class (a warning that `check` reports as
    /// an error).
    pub(crate) fn with_class(mut self, class: ErrorClass) -> Error {
        self.0.class = class;
        self
    }

    /// Names the kind of problem within the class (`unknown-filter`,
    /// `front-matter`): a stable word that [`Error::rule`] joins to the class.
    pub fn with_kind(mut self, kind: &'static str) -> Error {
        self.0.kind = Some(kind);
        self
    }

    /// The kind of problem within the class, where the library names one.
    pub fn kind(&self) -> Option<&'static str> {
        self.0.kind
    }

    /// A stable rule id for reports (SARIF, JSON, CI annotations): the class,
    /// then the kind where there is one.
    ///
    /// ```
    /// use teleprompt::{Error, ErrorClass};
    ///
    /// let error = Error::new(ErrorClass::Parse, "unknown filter \"uper\"").with_kind("unknown-filter");
    /// assert_eq!(error.rule(), "parse/unknown-filter");
    /// assert_eq!(Error::new(ErrorClass::Io, "gone").rule(), "io");
    /// ```
    pub fn rule(&self) -> String {
        match self.0.kind {
            Some(kind) => format!("{}/{kind}", self.0.class),
            None => self.0.class.to_string(),
        }
    }

    /// The stable code of the rule (`TP0101` for `parse/unknown-filter`),
    /// which `teleprompt explain` documents ([`codes::CODES`]); a kind
    /// without a code of its own has its class's (`TP0100`).
    ///
    /// ```
    /// use teleprompt::{Error, ErrorClass};
    ///
    /// let error = Error::new(ErrorClass::Parse, "unknown filter \"uper\"").with_kind("unknown-filter");
    /// assert_eq!(error.code(), "TP0101");
    /// assert_eq!(Error::new(ErrorClass::Io, "gone").code(), "TP0500");
    /// ```
    pub fn code(&self) -> &'static str {
        codes::code_of(&self.rule())
    }

    /// Where the underlined text ends: the line of [`Error::location`] and
    /// the column just after the last underlined character (exclusive, as
    /// SARIF counts it). `None` without a location.
    pub fn end(&self) -> Option<Location> {
        let location = self.0.location?;
        let width = self
            .0
            .source_line
            .as_ref()
            .map_or(1, |shown| shown.underlined.max(1));
        Some(Location {
            line: location.line,
            column: location.column + width,
        })
    }

    /// The class: document, parse, render, input or io.
    pub fn class(&self) -> ErrorClass {
        self.0.class
    }

    /// The file the error is in, as it was named when loaded.
    pub fn file(&self) -> Option<&str> {
        self.0.file.as_deref()
    }

    /// Line and column in the file (front matter counted).
    pub fn location(&self) -> Option<Location> {
        self.0.location
    }

    /// The template text of the action that failed, e.g. `{{ issue.titl }}`.
    pub fn action(&self) -> Option<&str> {
        self.0.action.as_deref()
    }

    /// What is wrong, in plain words.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// A fix to try, such as `did you mean "issue.title"?`.
    pub fn suggestion(&self) -> Option<&str> {
        self.0.suggestion.as_deref()
    }

    /// The path into the data that was missing, as the template wrote it
    /// (dots and `[index]`), for errors about a missing key or variable:
    /// `issue.tittle` for `{{ issue.tittle }}` when `issue` has no key
    /// `tittle`, `nme` for a variable `nme` the data does not have.
    /// `None` for every other error.
    ///
    /// Jinja names the path from the root of the data, as its messages
    /// do (`issue.blocked_by[0].identifer` for `b.identifer` in a loop
    /// over `issue.blocked_by`); Go and Handlebars name it as the action
    /// wrote it, from the value it reads (Go's leading `.` or `$.`, and
    /// Handlebars' `this.` or `@root.`, left out; a variable kept:
    /// `$x.name`).
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt};
    ///
    /// let prompt = Prompt::from_source("task.j2", "Fix {{ issue.tittle }}.", &LoadOptions::default())?;
    /// let error = prompt.render(serde_json::json!({"issue": {"title": "x"}})).unwrap_err();
    /// assert_eq!(error.message(), "issue has no key \"tittle\"");
    /// assert_eq!(error.path(), Some("issue.tittle"));
    /// # Ok::<(), teleprompt::Error>(())
    /// ```
    pub fn path(&self) -> Option<&str> {
        self.0.path.as_deref()
    }

    /// Labels attached by the host.
    pub fn labels(&self) -> &[(String, String)] {
        &self.0.labels
    }

    /// The file an error is in, and the template inside it when the
    /// template is one value of a JSON or YAML file (a
    /// `tokenizer_config.json`'s `chat_template`, a Semantic Kernel
    /// prompt's `template`), whose lines and columns count from the start
    /// of that string: `("hf/tokenizer_config.json", Some("chat_template"))`.
    pub fn file_and_template(&self) -> Option<(&str, Option<&str>)> {
        let file = self.file()?;
        let embedded = file
            .strip_suffix(')')
            .and_then(|rest| rest.rsplit_once(" ("));
        match embedded {
            Some((path, template))
                if [".json", ".yaml", ".yml"]
                    .iter()
                    .any(|extension| path.ends_with(extension)) =>
            {
                Some((path, Some(template)))
            }
            _ => Some((file, None)),
        }
    }

    /// The error as a JSON object, as `teleprompt check --format json`
    /// and `teleprompt serve` give it: `rule`, `class`, `message`, `file`
    /// (and `template`, see [`Error::file_and_template`]), `line`,
    /// `column`, `end`, `path` (see [`Error::path`]; `null` for an error
    /// not about missing data), `action` and `help` when there are some,
    /// and `labels`.
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt};
    /// let prompt = Prompt::from_source("task.j2", "Fix {{ issue.titel }}", &LoadOptions::default())?;
    /// let error = prompt.render(serde_json::json!({"issue": {"title": "x"}})).unwrap_err();
    /// let json = error.to_json();
    /// assert_eq!(json["class"], "render");
    /// assert_eq!((json["line"].as_u64(), json["column"].as_u64()), (Some(1), Some(8)));
    /// assert_eq!(json["help"], "did you mean \"issue.title\"?");
    /// assert_eq!(json["path"], "issue.titel");
    /// # Ok::<(), teleprompt::Error>(())
    /// ```
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::{json, Map, Value};
        let mut object = Map::new();
        object.insert("rule".into(), json!(self.rule()));
        object.insert("code".into(), json!(self.code()));
        object.insert("class".into(), json!(self.class().as_str()));
        object.insert("message".into(), json!(self.message()));
        let (file, template) = self.file_and_template().unzip();
        object.insert("file".into(), json!(file));
        if let Some(Some(template)) = template {
            object.insert("template".into(), json!(template));
        }
        let location = self.location();
        object.insert("line".into(), json!(location.map(|at| at.line)));
        object.insert("column".into(), json!(location.map(|at| at.column)));
        object.insert(
            "end".into(),
            json!(self
                .end()
                .map(|end| json!({"line": end.line, "column": end.column}))),
        );
        object.insert("path".into(), json!(self.path()));
        if let Some(action) = self.action() {
            object.insert("action".into(), json!(action));
        }
        if let Some(help) = self.suggestion() {
            object.insert("help".into(), json!(help));
        }
        let labels = self
            .labels()
            .iter()
            .map(|(key, value)| (key.clone(), json!(value)))
            .collect();
        object.insert("labels".into(), Value::Object(labels));
        Value::Object(object)
    }

    /// The multi-line report, as rustc prints its errors: the headline
    /// with the error's code (`error[TP0101]: unknown filter "uper"`),
    /// `--> file:line:col`, the source line with carets under the problem
    /// (a long line cut to a window around it), the other places the error
    /// points at, the action, the suggestion and the labels.
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt};
    ///
    /// let error = Prompt::from_source("p.j2", "Hi {{ name | uper }}", &LoadOptions::default())
    ///     .unwrap_err();
    /// assert_eq!(
    ///     error.report(),
    ///     "error[TP0101]: unknown filter \"uper\"\n \
    ///      --> p.j2:1:14\n  |\n\
    ///      1 | Hi {{ name | uper }}\n  |              ^^^^\n  |\n  \
    ///      = at <uper>\n  = help: did you mean \"upper\"?\n"
    /// );
    /// ```
    pub fn report(&self) -> String {
        render::report(self, false)
    }

    /// [`Error::report`] in colour (ANSI escape codes, as rustc colours
    /// its errors), for a terminal; the text is the same.
    pub fn report_styled(&self) -> String {
        render::report(self, true)
    }

    /// The label under the carets at [`Error::location`], where the report
    /// has one (`this for is never closed`).
    pub fn primary_label(&self) -> Option<&str> {
        self.0.label.as_deref()
    }

    /// The other places of the same file the report points at, each with
    /// its label: an unclosed block's error is at its opening tag, and
    /// points at the end of the file too (`the template ends here`).
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt};
    ///
    /// let error = Prompt::from_source("p.j2", "{% for a in b %}\n{{ a }}\n", &LoadOptions::default())
    ///     .unwrap_err();
    /// assert_eq!(error.primary_label(), Some("this for is never closed"));
    /// // The end of the file: just after `{{ a }}` on line 2.
    /// let (at, label) = error.secondary_labels().next().unwrap();
    /// assert_eq!((at.line, at.column, label), (2, 8, "the template ends here"));
    /// ```
    pub fn secondary_labels(&self) -> impl Iterator<Item = (Location, &str)> + '_ {
        self.0
            .secondary
            .iter()
            .map(|secondary| (secondary.location, secondary.label.as_str()))
    }

    fn place(&self) -> String {
        match (&self.0.file, self.0.location) {
            (Some(file), Some(at)) => format!("{file}:{}:{}", at.line, at.column),
            (Some(file), None) => file.clone(),
            (None, Some(at)) => format!("{}:{}", at.line, at.column),
            (None, None) => String::new(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = self.place();
        if !place.is_empty() {
            write!(f, "{place}: ")?;
        }
        match self.0.class {
            ErrorClass::Warning => write!(f, "warning: {}", self.0.message)?,
            class => write!(f, "{class} error: {}", self.0.message)?,
        }
        if let Some(action) = &self.0.action {
            write!(f, " at <{}>", one_line(action))?;
        }
        if let Some(suggestion) = &self.0.suggestion {
            write!(f, " ({suggestion})")?;
        }
        for (key, value) in &self.0.labels {
            write!(f, " [{key}={value}]")?;
        }
        Ok(())
    }
}

/// Several errors at once, such as every broken file of a directory.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Errors(pub Vec<Error>);

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

/// An error reported by a template front end, positioned in the template body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TemplateError {
    /// Parse (found at load) or render (found at render).
    pub class: ErrorClass,
    /// Byte range in the body; `None` when the engine could not tell.
    pub span: Option<Range<usize>>,
    /// What is wrong.
    pub message: String,
    /// A fix to try.
    pub suggestion: Option<String>,
    /// The kind of problem within the class (see [`Error::kind`]).
    pub(crate) kind: Option<&'static str>,
    /// The error placed in another file the template includes (a partial
    /// file), reported as it is: `span` does not apply.
    pub(crate) elsewhere: Option<Box<Elsewhere>>,
    /// Further errors found with this one (see [`Error::others`]), boxed
    /// to keep `Result`s small.
    pub(crate) related: Option<Box<Findings>>,
    /// What a render error knows beyond its message: the path of the
    /// data it found missing, the calls it happened in. One box for both
    /// keeps `TemplateError`, which every `Result` of the front ends
    /// holds, under 128 bytes (clippy's `result_large_err`): a larger one
    /// also grew each level of the recursive parsers' frames, past a
    /// 2 MiB stack at `max_nesting` in a debug build.
    pub(crate) details: Option<Box<RenderDetails>>,
}

/// What an error knows beyond its message (see [`TemplateError`]'s
/// `details`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RenderDetails {
    /// What the report says under the carets at `span` (see
    /// [`Error::primary_label`]).
    pub label: Option<String>,
    /// Other places the report points at, as byte ranges of the same
    /// text as `span`, each with its label (see
    /// [`Error::secondary_labels`]).
    pub secondary: Vec<(Range<usize>, String)>,
    /// For an error about missing data: the path that was missing (see
    /// [`Error::path`]).
    pub path: Option<String>,
    /// For a render error inside a called template: the calls it happened
    /// in, innermost first, as byte ranges of the program's source (so a
    /// front end can name where another file was included).
    pub calls: Option<Calls>,
}

/// The calls a render error happened in, innermost first (see
/// [`RenderDetails`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Calls {
    /// Each call's span.
    pub sites: Vec<Range<usize>>,
    /// While set, the calls the error leaves are noted only from the one
    /// at this depth of calls on: those deeper were made between the
    /// partial called as a partial block (at this depth) and the
    /// `{{> @partial-block}}` that ran the block's content, where the
    /// error is, and the content was not included through them.
    pub from_depth: Option<usize>,
}

/// An error inside a file a template includes, already placed in that file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Elsewhere {
    pub error: Error,
    /// Where the body includes the file (when the body itself does), as
    /// a byte range of the body.
    pub site: Option<Range<usize>>,
}

impl TemplateError {
    /// A parse error at `span`.
    pub fn parse(span: Option<Range<usize>>, message: impl Into<String>) -> TemplateError {
        TemplateError {
            class: ErrorClass::Parse,
            span,
            message: message.into(),
            suggestion: None,
            kind: None,
            elsewhere: None,
            related: None,
            details: None,
        }
    }

    /// A render error at `span`.
    pub fn render(span: Option<Range<usize>>, message: impl Into<String>) -> TemplateError {
        TemplateError {
            class: ErrorClass::Render,
            span,
            message: message.into(),
            suggestion: None,
            kind: None,
            elsewhere: None,
            related: None,
            details: None,
        }
    }

    /// An error already placed in an included file; `site` is where the
    /// body includes it (if the body does).
    pub(crate) fn elsewhere(error: Error, site: Option<Range<usize>>) -> TemplateError {
        TemplateError {
            class: error.class(),
            span: None,
            message: error.message().to_string(),
            suggestion: None,
            kind: error.kind(),
            elsewhere: Some(Box::new(Elsewhere { error, site })),
            related: None,
            details: None,
        }
    }

    /// Names the kind of problem (see [`Error::with_kind`]).
    pub fn with_kind(mut self, kind: &'static str) -> TemplateError {
        self.kind = Some(kind);
        self
    }

    /// Adds a suggestion.
    pub fn suggest(mut self, suggestion: Option<String>) -> TemplateError {
        self.suggestion = suggestion;
        self
    }

    /// Names the path into the data that was missing (see [`Error::path`]).
    pub(crate) fn with_path(mut self, path: Option<String>) -> TemplateError {
        if path.is_some() || self.details.is_some() {
            self.details.get_or_insert_with(Box::default).path = path;
        }
        self
    }

    /// Labels the error's place in the report (see
    /// [`Error::primary_label`]).
    pub(crate) fn with_label(mut self, label: impl Into<String>) -> TemplateError {
        self.details.get_or_insert_with(Box::default).label = Some(label.into());
        self
    }

    /// Points the report at `span` too (of the same text as the error's
    /// own span), with `label` (see [`Error::secondary_labels`]).
    pub(crate) fn with_secondary(
        mut self,
        span: Range<usize>,
        label: impl Into<String>,
    ) -> TemplateError {
        self.details
            .get_or_insert_with(Box::default)
            .secondary
            .push((span, label.into()));
        self
    }

    /// Each span of the error's other places passed through `f` (placing
    /// them in another text); a place `f` cannot place is dropped.
    pub(crate) fn map_secondary(&mut self, f: impl Fn(Range<usize>) -> Option<Range<usize>>) {
        if let Some(details) = &mut self.details {
            let secondary = std::mem::take(&mut details.secondary);
            details.secondary = secondary
                .into_iter()
                .filter_map(|(span, label)| Some((f(span)?, label)))
                .collect();
        }
    }

    /// The label of the error's place and its other places (see
    /// [`TemplateError::with_label`]).
    pub(crate) fn labels(&self) -> (Option<&str>, &[(Range<usize>, String)]) {
        match &self.details {
            Some(details) => (details.label.as_deref(), &details.secondary),
            None => (None, &[]),
        }
    }

    /// The path into the data that was missing, for an error about
    /// missing data (see [`Error::path`]).
    pub(crate) fn path(&self) -> Option<&str> {
        self.details.as_ref()?.path.as_deref()
    }

    /// The calls the render error happened in, to note one more.
    pub(crate) fn calls_mut(&mut self) -> &mut Calls {
        self.details
            .get_or_insert_with(Box::default)
            .calls
            .get_or_insert_with(Calls::default)
    }

    /// Takes the calls the render error happened in, if it has some.
    pub(crate) fn take_calls(&mut self) -> Option<Calls> {
        self.details.as_mut()?.calls.take()
    }
}

/// Errors a front end found that do not stop it (unknown names, wrong
/// argument counts, unresolvable templates): it goes on past each one, so
/// that a file reports all of them, up to [`MAX_ERRORS_PER_FILE`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Findings {
    /// The errors kept.
    pub(crate) errors: Vec<TemplateError>,
    /// How many more were found beyond those kept.
    pub(crate) more: usize,
}

impl Findings {
    /// Notes an error.
    pub(crate) fn push(&mut self, error: TemplateError) {
        if self.errors.len() < MAX_ERRORS_PER_FILE {
            self.errors.push(error);
        } else {
            self.more += 1;
        }
    }

    /// Whether no more errors are kept (those noted from now on are only
    /// counted): a front end need not look for suggestions for them.
    pub(crate) fn is_full(&self) -> bool {
        self.errors.len() >= MAX_ERRORS_PER_FILE
    }

    /// Each error passed through `f` (placing it in another text).
    pub(crate) fn map(mut self, f: impl Fn(TemplateError) -> TemplateError) -> Findings {
        self.errors = self.errors.into_iter().map(f).collect();
        self
    }

    /// The first error in the text, carrying the others in the order of
    /// the text; `None` when there are none.
    pub(crate) fn into_error(self) -> Option<TemplateError> {
        let mut errors = self.errors;
        errors.sort_by_key(|error| error.span.as_ref().map_or(usize::MAX, |span| span.start));
        let mut errors = errors.into_iter();
        let mut first = errors.next()?;
        let errors: Vec<TemplateError> = errors.collect();
        if !errors.is_empty() || self.more > 0 {
            first.related = Some(Box::new(Findings {
                errors,
                more: self.more,
            }));
        }
        Some(first)
    }
}

/// The longest name, in characters, that [`closest`] looks for typos of:
/// the edit distance takes time in the product of the two lengths, and
/// names come from data (a key of a megabyte took seconds).
pub const MAX_TYPO_NAME: usize = 256;

/// The candidate closest to `name`, if one is close enough to be a likely
/// typo (same letters in another case, or a small edit distance). Names
/// longer than [`MAX_TYPO_NAME`] characters have none.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let length = name.chars().count();
    if length > MAX_TYPO_NAME {
        return None;
    }
    let lower = name.to_lowercase();
    let limit = (length / 3).clamp(1, 3);
    candidates
        .into_iter()
        .filter(|candidate| *candidate != name)
        // A length further off than the limit is further off in edits too.
        .filter(|candidate| candidate.len().abs_diff(name.len()) <= 4 * limit)
        .filter(|candidate| candidate.chars().count().abs_diff(length) <= limit)
        .map(|candidate| {
            let distance = if candidate.to_lowercase() == lower {
                0
            } else {
                strsim::damerau_levenshtein(&lower, &candidate.to_lowercase())
            };
            (distance, candidate)
        })
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' { ' ' } else { c })
        .collect();
    if flat.chars().count() > 80 {
        let cut: String = flat.chars().take(77).collect();
        format!("{cut}...")
    } else {
        flat
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carets_stand_under_wide_and_combining_characters() {
        // `名前` takes four columns; `é` written as `e` and a combining
        // accent takes one.
        let line = "{{ 名前 | uper }} {{ e\u{301} | uper }}";
        let report = |column| {
            Error::new(ErrorClass::Parse, "unknown filter \"uper\"")
                .with_location(Location { line: 1, column }, Some((line, 4)))
                .report()
        };
        let carets = |report: String| {
            report
                .lines()
                .find(|l| l.contains("^"))
                .unwrap_or("")
                .to_string()
        };
        assert_eq!(carets(report(9)), format!("  | {}^^^^", " ".repeat(10)));
        assert_eq!(carets(report(25)), format!("  | {}^^^^", " ".repeat(25)));
    }

    #[test]
    fn closest_finds_typos_only() {
        let names = ["title", "labels", "identifier"];
        assert_eq!(closest("titl", names), Some("title"));
        assert_eq!(closest("Labels", names), Some("labels"));
        assert_eq!(closest("zzz", names), None);
    }

    /// Findings by the `render_data` fuzz target: a data key of a megabyte
    /// made one suggestion take seconds.
    #[test]
    fn a_column_past_the_end_of_a_long_line_shows_its_end() {
        let line = "x".repeat(SHOWN_LINE * 2);
        for column in [SHOWN_LINE * 2 + 1, SHOWN_LINE * 3, usize::MAX] {
            let shown = ShownLine::new(&line, column, 1);
            assert!(shown.text.starts_with('…'), "{column}");
            assert_eq!(shown.text.chars().count(), SHOWN_LINE / 2 + 1, "{column}");
        }
    }

    #[test]
    fn closest_is_quick_on_long_names() {
        let long = "ab".repeat(500_000);
        let near = format!("{long}c");
        let started = std::time::Instant::now();
        assert_eq!(closest(&near, [long.as_str(), "title"]), None);
        assert_eq!(closest("title", [long.as_str(), "titl"]), Some("titl"));
        assert!(started.elapsed() < std::time::Duration::from_millis(100));
        let edge = "x".repeat(MAX_TYPO_NAME);
        let typo = format!("{}y", &edge[1..]);
        assert_eq!(closest(&typo, [edge.as_str()]), Some(edge.as_str()));
    }

    /// The path of the data a render error found missing, in each syntax:
    /// a key, a top-level variable, an element past the end of a list.
    #[test]
    fn missing_data_errors_carry_their_path() {
        use crate::{options::LoadOptions, prompt::Prompt};
        use serde_json::json;
        let issue = json!({"issue": {"title": "x", "blocked_by": [{"id": "P-1"}]}});
        let cases = [
            ("t.j2", "Fix {{ issue.tittle }}.", "issue.tittle"),
            ("t.j2", "Hi {{ nme }}", "nme"),
            (
                "t.j2",
                "{{ issue.blocked_by[3].id }}",
                "issue.blocked_by[3]",
            ),
            (
                "t.j2",
                "{% for b in issue.blocked_by %}{{ b.idd }}{% endfor %}",
                "issue.blocked_by[0].idd",
            ),
            ("t.hbs", "Fix {{issue.tittle}}.", "issue.tittle"),
            ("t.hbs", "Hi {{nme}}", "nme"),
            ("t.hbs", "{{issue.blocked_by.[3]}}", "issue.blocked_by[3]"),
            ("t.hbs", "{{@root.issue.tittle}}", "issue.tittle"),
            (
                "t.hbs",
                "{{#each issue.blocked_by as |b|}}{{b.idd}}{{/each}}",
                "b.idd",
            ),
            (
                "t.hbs",
                "{{#with issue}}{{../issue.tittle}}{{/with}}",
                "../issue.tittle",
            ),
            ("t.gotmpl", "Fix {{ .issue.tittle }}.", "issue.tittle"),
            ("t.gotmpl", "Hi {{ .nme }}", "nme"),
            ("t.gotmpl", "{{ $.issue.tittle }}", "issue.tittle"),
            ("t.gotmpl", "{{ $x := .issue }}{{ $x.tittle }}", "$x.tittle"),
            ("t.gotmpl", "{{ .issue.title.first }}", "issue.title.first"),
            ("t.gotmpl", "{{ index .issue \"tittle\" }}", "issue.tittle"),
            (
                "t.gotmpl",
                "{{ index .issue.blocked_by 3 }}",
                "issue.blocked_by[3]",
            ),
        ];
        for (file, template, path) in cases {
            let prompt = Prompt::from_source(file, template, &LoadOptions::default())
                .unwrap_or_else(|error| panic!("{template}: {error}"));
            let error = prompt.render(issue.clone()).unwrap_err();
            assert_eq!(error.path(), Some(path), "{template}: {error}");
            assert_eq!(error.to_json()["path"], path, "{template}");
        }
        // Not about missing data: no path.
        let parse =
            Prompt::from_source("t.j2", "{{ x | uper }}", &LoadOptions::default()).unwrap_err();
        assert_eq!(parse.path(), None);
        assert_eq!(parse.to_json()["path"], serde_json::Value::Null);
        let prompt = Prompt::from_source("t.gotmpl", "{{ slice .s 1 9 }}", &LoadOptions::default())
            .unwrap_or_else(|error| panic!("{error}"));
        let error = prompt.render(json!({"s": "abc"})).unwrap_err();
        assert_eq!(error.path(), None, "{error}");
    }

    #[test]
    fn to_json_has_the_path_after_the_place() {
        let error = Error::new(ErrorClass::Render, "issue has no key \"titl\"")
            .with_path(Some("issue.titl".into()));
        let json = error.to_json();
        assert_eq!(json["path"], "issue.titl");
        let keys: Vec<&str> = json
            .as_object()
            .map(|object| object.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let at = |key: &str| keys.iter().position(|k| *k == key);
        assert!(
            at("end") < at("path") && at("path") < at("labels"),
            "{keys:?}"
        );
        assert_eq!(
            Error::new(ErrorClass::Io, "gone").to_json()["path"],
            serde_json::Value::Null
        );
    }

    #[test]
    fn report_shows_line_and_caret() {
        let error = Error::new(ErrorClass::Render, "issue has no key \"titl\"")
            .with_file("p.md")
            .with_location(
                Location { line: 3, column: 4 },
                Some(("A: {{ issue.titl }}", 16)),
            )
            .with_suggestion(Some("did you mean \"issue.title\"?".into()));
        let report = error.report();
        assert!(report.contains("--> p.md:3:4"), "{report}");
        assert!(report.contains("3 | A: {{ issue.titl }}"), "{report}");
        assert!(report.contains("  |    ^^^^^^^^^^^^^^^^"), "{report}");
        assert_eq!(
            error.to_string(),
            "p.md:3:4: render error: issue has no key \"titl\" (did you mean \"issue.title\"?)"
        );
    }

    #[test]
    fn a_long_line_is_shown_as_a_window_around_the_column() {
        let line = format!("{}BAD{}", "a".repeat(100_000), "b".repeat(100_000));
        let error = Error::new(ErrorClass::Parse, "bad").with_location(
            Location {
                line: 1,
                column: 100_001,
            },
            Some((line.as_str(), 3)),
        );
        let report = error.report();
        let shown: Vec<&str> = report.lines().collect();
        assert!(report.len() < 1_000, "{report}");
        let at_line = shown
            .iter()
            .position(|line| line.starts_with("1 | "))
            .expect("the line");
        let text = shown[at_line].trim_start_matches("1 | ");
        let carets = shown[at_line + 1].trim_start_matches("  | ");
        assert!(text.starts_with('…') && text.ends_with('…'), "{text}");
        let at = carets.find('^').expect("carets");
        assert_eq!(carets.trim_start(), "^^^");
        assert_eq!(text.chars().skip(at).take(3).collect::<String>(), "BAD");
        assert_eq!(error.end().map(|end| end.column), Some(100_004));
        // A short line is shown whole.
        let error = Error::new(ErrorClass::Parse, "bad")
            .with_location(Location { line: 1, column: 3 }, Some(("abBAD", 3)));
        assert!(
            error.report().contains("1 | abBAD\n  |   ^^^\n"),
            "{}",
            error.report()
        );
    }
}

//! The reports of `teleprompt check`: every problem found, as text for a
//! person (in colour on a terminal), JSON, SARIF 2.1.0 for code scanning,
//! or GitHub Actions workflow annotations — each written as the files are
//! checked ([`Stream`]), never held whole.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};
use teleprompt::diagnostics::codes;
use teleprompt::{Error, ErrorClass};

/// How `check` prints what it found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Reports with the source line and a caret, on stderr; a summary on stdout.
    Text,
    /// One JSON object on stdout: `{"errors", "warnings", "prompts", "valid"}`.
    Json,
    /// SARIF 2.1.0 on stdout, for code-scanning upload.
    Sarif,
    /// GitHub Actions workflow commands (`::error file=…::…`) on stdout.
    Github,
}

/// When the text report is in colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// When stderr is a terminal and `NO_COLOR` is not set.
    Auto,
    /// Always, `NO_COLOR` notwithstanding.
    Always,
    /// Never.
    Never,
}

impl Color {
    /// Whether to colour text written to stderr.
    pub fn on_stderr(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            // anstream reads NO_COLOR, CLICOLOR(_FORCE), TERM and whether
            // stderr is a terminal.
            Color::Auto => {
                anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never
            }
        }
    }
}

/// A `check` report written as it goes: [`Stream::head`] first, then
/// [`Stream::file`] for each file's findings as they are found, then
/// [`Stream::tail`]. Each returns what to write now, so nothing but
/// counts and the SARIF rule list is held: memory stays flat however many
/// files and findings there are (a file's findings are capped, see
/// [`MAX_WARNINGS_PER_FILE`] and [`teleprompt::diagnostics::MAX_ERRORS_PER_FILE`]).
///
/// JSON and SARIF stay one valid document: their head is written first,
/// each finding as it comes, and what is known only at the end (JSON's
/// `prompts` and `valid`, SARIF's `tool` with its rules) after the
/// findings. JSON's warnings wait in a spool file (in memory if none can
/// be made) until the errors' list is closed.
pub struct Stream {
    format: Format,
    color: bool,
    deny_warnings: bool,
    /// Errors found, those past a file's cap included.
    errors: usize,
    warnings: usize,
    /// The files with errors, each once.
    files_with_errors: std::collections::HashSet<String>,
    prompts: usize,
    /// Whether a path could not be read (a usage error).
    io: bool,
    /// SARIF's rules, in the order they first occur.
    rules: Vec<(
        String,
        Option<&'static teleprompt::diagnostics::codes::Code>,
    )>,
    /// Items written to the list being streamed (SARIF's results, JSON's
    /// errors).
    written: usize,
    /// JSON's warnings, until the errors are written.
    spool: Spool,
    spooled: usize,
    /// The code of the first error (the text summary names it for
    /// `teleprompt explain`).
    first_code: Option<&'static str>,
}

/// What to write now: to stdout, and to stderr.
#[derive(Debug, Default)]
pub struct Out {
    pub stdout: String,
    pub stderr: String,
}

/// The most warnings reported of one file; a note counts the rest.
pub const MAX_WARNINGS_PER_FILE: usize = teleprompt::diagnostics::MAX_ERRORS_PER_FILE;

/// Where JSON's warnings wait: a temporary file (its name removed at
/// once on Unix, else when read back), or memory.
enum Spool {
    File(std::io::BufWriter<std::fs::File>, std::path::PathBuf),
    Memory(Vec<u8>),
}

impl Spool {
    fn new() -> Spool {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "teleprompt-check-{}-{nanos}.json",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .read(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => {
                // Unix keeps an open file whose name is gone: nothing is
                // left behind, however the command ends.
                #[cfg(unix)]
                let _ = std::fs::remove_file(&path);
                Spool::File(std::io::BufWriter::new(file), path)
            }
            Err(_) => Spool::Memory(Vec::new()),
        }
    }

    fn write(&mut self, text: &str) {
        use std::io::Write as _;
        let failed = match self {
            Spool::File(file, _) => file.write_all(text.as_bytes()).is_err(),
            Spool::Memory(bytes) => {
                bytes.extend_from_slice(text.as_bytes());
                false
            }
        };
        if failed {
            // A full disk: what was written, then memory.
            let mut kept = self.take();
            kept.push_str(text);
            *self = Spool::Memory(kept.into_bytes());
        }
    }

    /// Everything spooled (and the file removed).
    fn take(&mut self) -> String {
        use std::io::{Read as _, Seek as _};
        let taken = std::mem::replace(self, Spool::Memory(Vec::new()));
        match taken {
            Spool::File(file, path) => {
                let mut text = String::new();
                if let Ok(mut file) = file.into_inner() {
                    let _ = file.rewind();
                    let _ = file.read_to_string(&mut text);
                }
                let _ = std::fs::remove_file(path);
                text
            }
            Spool::Memory(bytes) => String::from_utf8(bytes).unwrap_or_default(),
        }
    }
}

/// `value` pretty-printed as an item of a list at `indent` spaces.
fn item(value: &Value, indent: &str) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    // JSON strings hold no raw line breaks: each is the printer's.
    format!("{indent}{}", text.replace('\n', &format!("\n{indent}")))
}

impl Stream {
    /// A report in `format` (text in colour with `color`); warnings fail
    /// the check with `deny_warnings`.
    pub fn new(format: Format, color: bool, deny_warnings: bool) -> Stream {
        Stream {
            format,
            color,
            deny_warnings,
            errors: 0,
            warnings: 0,
            files_with_errors: Default::default(),
            prompts: 0,
            io: false,
            rules: Vec::new(),
            written: 0,
            spool: match format {
                Format::Json => Spool::new(),
                _ => Spool::Memory(Vec::new()),
            },
            spooled: 0,
            first_code: None,
        }
    }

    /// The start of the report.
    pub fn head(&mut self) -> Out {
        let stdout = match self.format {
            Format::Json => "{\n  \"errors\": [".to_string(),
            Format::Sarif => {
                "{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n  \
                 \"version\": \"2.1.0\",\n  \"runs\": [\n    {\n      \
                 \"columnKind\": \"unicodeCodePoints\",\n      \"results\": ["
                    .to_string()
            }
            Format::Text | Format::Github => String::new(),
        };
        Out {
            stdout,
            stderr: String::new(),
        }
    }

    /// Prompts that loaded, counted.
    pub fn loaded(&mut self, prompts: usize) {
        self.prompts += prompts;
    }

    /// One file's findings (or any batch of them): its `errors` (a note of
    /// kind `too-many-errors` counting `omitted` more among them, as
    /// [`Error::all`] gives them) and `warnings`, each given `labels`.
    pub fn file(
        &mut self,
        errors: Vec<Error>,
        warnings: Vec<Error>,
        omitted: usize,
        labels: &[(String, String)],
    ) -> Out {
        // A likely mistake the library classes as more than a warning (a
        // closed-out input printed at strict or semi) fails the check.
        let (warnings, promoted): (Vec<Error>, Vec<Error>) = warnings
            .into_iter()
            .partition(|warning| warning.class() == ErrorClass::Warning);
        let mut warnings = warnings;
        let errors = match promoted.is_empty() {
            true => errors,
            false => promoted.into_iter().chain(errors).collect(),
        };
        if warnings.len() > MAX_WARNINGS_PER_FILE {
            let more = warnings.len() - MAX_WARNINGS_PER_FILE;
            let file = warnings.first().and_then(Error::file).map(str::to_string);
            warnings.truncate(MAX_WARNINGS_PER_FILE);
            let mut note = Error::new(
                ErrorClass::Warning,
                format!("{more} more warning(s) in this file, not shown"),
            )
            .with_kind("too-many-warnings");
            if let Some(file) = file {
                note = note.with_file(file);
            }
            warnings.push(note);
        }
        let notes = errors
            .iter()
            .filter(|error| error.kind() == Some("too-many-errors"))
            .count();
        self.errors += errors.len() - notes + omitted;
        self.warnings += warnings
            .iter()
            .filter(|warning| warning.kind() != Some("too-many-warnings"))
            .count();
        for error in &errors {
            self.io |= error.class() == ErrorClass::Io;
            if let Some(file) = error.file() {
                if !self.files_with_errors.contains(file) {
                    self.files_with_errors.insert(file.to_string());
                }
            }
        }
        let mut out = Out::default();
        let all = warnings
            .into_iter()
            .map(|warning| ("warning", warning))
            .chain(errors.into_iter().map(|error| ("error", error)));
        for (severity, problem) in all {
            let problem = labelled(problem, labels);
            self.one(severity, &problem, &mut out);
        }
        out
    }

    fn one(&mut self, severity: &'static str, problem: &Error, out: &mut Out) {
        let separator = |count: usize| if count == 0 { "\n" } else { ",\n" };
        match self.format {
            Format::Text => {
                if severity == "error" && problem.kind() != Some("too-many-errors") {
                    self.first_code.get_or_insert(problem.code());
                }
                let report = painted(problem, self.color);
                out.stderr.push_str(&report);
                out.stderr.push('\n');
            }
            Format::Github => out.stdout.push_str(&github_line(severity, problem)),
            Format::Sarif => {
                let result = self.sarif_result(severity, problem);
                out.stdout.push_str(separator(self.written));
                out.stdout.push_str(&item(&result, "        "));
                self.written += 1;
            }
            Format::Json if severity == "warning" => {
                let text = item(&problem_json(severity, problem), "    ");
                self.spool.write(separator(self.spooled));
                self.spool.write(&text);
                self.spooled += 1;
            }
            Format::Json => {
                out.stdout.push_str(separator(self.written));
                out.stdout
                    .push_str(&item(&problem_json(severity, problem), "    "));
                self.written += 1;
            }
        }
    }

    /// True when the check passes.
    pub fn valid(&self) -> bool {
        self.errors == 0 && (self.warnings == 0 || !self.deny_warnings)
    }

    /// Whether a path could not be read.
    pub fn io(&self) -> bool {
        self.io
    }

    /// The end of the report: the summary, the lists closed.
    pub fn tail(&mut self) -> Out {
        let close = |written: usize, indent: &str| match written {
            0 => "]".to_string(),
            _ => format!("\n{indent}]"),
        };
        let prompts = self.prompts;
        let mut out = Out::default();
        match self.format {
            Format::Text => {
                if self.errors > 0 {
                    out.stderr = format!(
                        "{} error(s) in {} file(s); {prompts} prompt(s) loaded cleanly\n",
                        self.errors,
                        self.files_with_errors.len()
                    );
                    if let Some(code) = self.first_code {
                        out.stderr.push_str(&explain_hint("an error", code));
                    }
                } else if !self.valid() {
                    out.stderr = format!(
                        "{} warning(s), denied by --deny-warnings; {prompts} prompt(s) checked\n",
                        self.warnings
                    );
                } else {
                    out.stdout = match self.warnings {
                        0 => format!("ok: {prompts} prompt(s) checked, no errors\n"),
                        n => {
                            format!("ok: {prompts} prompt(s) checked, no errors, {n} warning(s)\n")
                        }
                    };
                }
            }
            Format::Github => {}
            Format::Json => {
                out.stdout = close(self.written, "  ");
                out.stdout.push_str(",\n  \"warnings\": [");
                out.stdout.push_str(&self.spool.take());
                out.stdout.push_str(&close(self.spooled, "  "));
                let _ = write!(
                    out.stdout,
                    ",\n  \"prompts\": {prompts},\n  \"valid\": {}\n}}\n",
                    self.valid()
                );
            }
            Format::Sarif => {
                let rules: Vec<Value> = self
                    .rules
                    .iter()
                    .map(|(id, code)| match code {
                        Some(code) => json!({
                            "id": id,
                            "shortDescription": { "text": code.title },
                            "fullDescription": { "text": code.explanation },
                            "properties": { "code": code.code },
                        }),
                        None => json!({ "id": id, "shortDescription": { "text": id } }),
                    })
                    .collect();
                let tool = json!({
                    "driver": {
                        "name": "teleprompt",
                        "version": env!("CARGO_PKG_VERSION"),
                        "informationUri": env!("CARGO_PKG_REPOSITORY"),
                        "rules": rules,
                    }
                });
                out.stdout = close(self.written, "      ");
                out.stdout.push_str(",\n      \"tool\": ");
                out.stdout.push_str(item(&tool, "      ").trim_start());
                out.stdout.push_str("\n    }\n  ]\n}\n");
            }
        }
        out
    }

    /// One SARIF result, its rule noted in the rule list.
    fn sarif_result(&mut self, severity: &str, problem: &Error) -> Value {
        let rule = problem.rule();
        let index = match self.rules.iter().position(|(id, _)| *id == rule) {
            Some(index) => index,
            None => {
                self.rules
                    .push((rule.clone(), codes::explain(problem.code())));
                self.rules.len() - 1
            }
        };
        let mut result = Map::new();
        result.insert("ruleId".into(), json!(rule));
        result.insert("ruleIndex".into(), json!(index));
        result.insert("level".into(), json!(severity));
        result.insert("message".into(), json!({ "text": full_message(problem) }));
        if let Some((file, template)) = artifact(problem) {
            let mut physical = Map::new();
            physical.insert("artifactLocation".into(), json!({ "uri": file_uri(file) }));
            let region = match template {
                // Lines of a template string are not lines of the file.
                Some(_) => None,
                None => problem.location().zip(problem.end()),
            };
            if let Some((start, end)) = region {
                let mut region = json!({
                    "startLine": start.line,
                    "startColumn": start.column,
                    "endLine": end.line,
                    "endColumn": end.column,
                });
                if let Some(action) = problem.action() {
                    region["snippet"] = json!({ "text": action });
                }
                physical.insert("region".into(), region);
            }
            result.insert(
                "locations".into(),
                json!([{ "physicalLocation": Value::Object(physical) }]),
            );
        }
        if !problem.labels().is_empty() {
            result.insert(
                "properties".into(),
                json!({ "labels": Value::Object(labels(problem)) }),
            );
        }
        Value::Object(result)
    }
}

/// `error` with the labels it does not carry yet.
pub fn labelled(error: Error, labels: &[(String, String)]) -> Error {
    let missing: Vec<(String, String)> = labels
        .iter()
        .filter(|label| !error.labels().contains(label))
        .cloned()
        .collect();
    if missing.is_empty() {
        return error;
    }
    error.with_labels(&missing)
}

/// `error`'s text report, in colour (rustc's) with `color`.
pub fn painted(error: &Error, color: bool) -> String {
    match color {
        true => error.report_styled(),
        false => error.report(),
    }
}

/// The line after a text report that says where its code is explained
/// (`what`: "this error", "an error").
pub fn explain_hint(what: &str, code: &str) -> String {
    format!("For more information about {what}, try `teleprompt explain {code}`.\n")
}

/// Where a problem is: the file on disk, and the template string inside
/// it (see [`Error::file_and_template`]).
fn artifact(problem: &Error) -> Option<(&str, Option<&str>)> {
    problem.file_and_template()
}

/// One problem as a JSON object: its severity, then [`Error::to_json`].
fn problem_json(severity: &str, problem: &Error) -> Value {
    let mut object = Map::new();
    object.insert("severity".into(), json!(severity));
    if let Value::Object(fields) = problem.to_json() {
        object.extend(fields);
    }
    Value::Object(object)
}

fn labels(problem: &Error) -> Map<String, Value> {
    problem
        .labels()
        .iter()
        .map(|(key, value)| (key.clone(), json!(value)))
        .collect()
}

/// The message of a problem with its help and the template text it is
/// about, on one or more lines.
fn full_message(problem: &Error) -> String {
    let mut message = problem.message().to_string();
    if let Some((_, Some(template))) = artifact(problem) {
        match problem.location() {
            Some(at) => {
                let _ = write!(message, " (in `{template}`, at {}:{})", at.line, at.column);
            }
            None => {
                let _ = write!(message, " (in `{template}`)");
            }
        }
    }
    if let Some(help) = problem.suggestion() {
        let _ = write!(message, "\nhelp: {help}");
    }
    for (key, value) in problem.labels() {
        let _ = write!(message, "\n{key}: {value}");
    }
    message
}

/// A file path as a URI reference: relative paths stay relative (code
/// scanning resolves them against the repository), absolute ones become
/// `file://` URIs.
fn file_uri(path: &str) -> String {
    let path = path.replace('\\', "/");
    let mut uri = String::new();
    if path.starts_with('/') {
        uri.push_str("file://");
    }
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&byte) {
            uri.push(char::from(byte));
        } else if byte == b':' && uri.contains('/') {
            // A colon in the first segment would read as a scheme.
            uri.push(':');
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
}

/// A GitHub Actions workflow command: one `::error` or `::warning` line,
/// which the runner shows as an annotation on the file.
fn github_line(severity: &str, problem: &Error) -> String {
    let mut properties = Vec::new();
    let mut region = problem.location().zip(problem.end());
    if let Some((file, template)) = artifact(problem) {
        properties.push(format!("file={}", escape_property(file)));
        if template.is_some() {
            region = None;
        }
    }
    if let Some((start, end)) = region {
        properties.push(format!("line={}", start.line));
        properties.push(format!("col={}", start.column));
        properties.push(format!("endLine={}", end.line));
        // GitHub's end column is the last character's.
        properties.push(format!(
            "endColumn={}",
            end.column.saturating_sub(1).max(start.column)
        ));
    }
    properties.push(format!("title={}", escape_property(&problem.rule())));
    format!(
        "::{severity} {}::{}\n",
        properties.join(","),
        escape_data(&full_message(problem))
    )
}

/// Escapes a workflow command's message.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_keep_relative_paths() {
        assert_eq!(file_uri("examples/a b.j2"), "examples/a%20b.j2");
        assert_eq!(file_uri("/tmp/x.j2"), "file:///tmp/x.j2");
        assert_eq!(file_uri("c:x"), "c%3Ax");
        assert_eq!(file_uri("dir\\é.j2"), "dir/%C3%A9.j2");
    }

    #[test]
    fn templates_inside_json_or_yaml_name_their_file() {
        let error = |file: &str| Error::new(ErrorClass::Parse, "x").with_file(file);
        let inside = error("hf/tokenizer_config.json (chat_template)");
        assert_eq!(
            artifact(&inside),
            Some(("hf/tokenizer_config.json", Some("chat_template")))
        );
        let plain = error("notes (draft).j2");
        assert_eq!(artifact(&plain), Some(("notes (draft).j2", None)));
        assert_eq!(artifact(&Error::new(ErrorClass::Io, "x")), None);
    }

    #[test]
    fn github_escapes() {
        assert_eq!(escape_data("50%\r\nnext"), "50%25%0D%0Anext");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}

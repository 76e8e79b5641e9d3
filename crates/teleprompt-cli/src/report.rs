//! The reports of `teleprompt check`: every problem found, as text for a
//! person (in colour on a terminal), JSON, SARIF 2.1.0 for code scanning,
//! or GitHub Actions workflow annotations.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use serde_json::{json, Map, Value};
use teleprompt::diagnostics::ReportPart;
use teleprompt::{Error, ErrorClass};

/// How `check` prints what it found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Reports with the source line and a caret, on stderr; a summary on stdout.
    Text,
    /// One JSON object on stdout: `{"valid", "errors", "warnings"}`.
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

/// Everything one `check` found.
#[derive(Debug, Default)]
pub struct Problems {
    /// Problems that fail the check.
    pub errors: Vec<Error>,
    /// Likely mistakes; they fail the check only with `--deny-warnings`.
    pub warnings: Vec<Error>,
    /// Errors found beyond the cap of a file ([`teleprompt::diagnostics::MAX_ERRORS_PER_FILE`]),
    /// not in `errors` (a note there says how many).
    pub omitted: usize,
    /// Prompts that loaded.
    pub prompts: usize,
    /// Whether warnings fail the check.
    pub deny_warnings: bool,
}

impl Problems {
    /// True when the check passes.
    pub fn valid(&self) -> bool {
        self.errors.is_empty() && (self.warnings.is_empty() || !self.deny_warnings)
    }

    /// Every problem, warnings first, each with its severity.
    fn all(&self) -> impl Iterator<Item = (&'static str, &Error)> {
        let warnings = self.warnings.iter().map(|warning| ("warning", warning));
        warnings.chain(self.errors.iter().map(|error| ("error", error)))
    }

    /// How many errors were found, those past a file's cap included (the
    /// notes that count them are not errors of their own).
    fn error_count(&self) -> usize {
        let notes = self
            .errors
            .iter()
            .filter(|error| error.kind() == Some("too-many-errors"))
            .count();
        self.errors.len() - notes + self.omitted
    }

    /// The files with errors, each counted once.
    fn files_with_errors(&self) -> usize {
        let mut files: Vec<&str> = self.errors.iter().filter_map(Error::file).collect();
        files.sort_unstable();
        files.dedup();
        files.len()
    }
}

/// The text report: what goes to stderr (each problem's report) and to
/// stdout (the summary when the check passes).
pub fn text(problems: &Problems, color: bool) -> (String, String) {
    let mut stderr = String::new();
    for (_, problem) in problems.all() {
        let report = if color {
            problem.report_painted(&paint)
        } else {
            problem.report()
        };
        stderr.push_str(&report);
        stderr.push('\n');
    }
    let prompts = problems.prompts;
    let mut stdout = String::new();
    if !problems.errors.is_empty() {
        let _ = writeln!(
            stderr,
            "{} error(s) in {} file(s); {prompts} prompt(s) loaded cleanly",
            problems.error_count(),
            problems.files_with_errors()
        );
    } else if !problems.valid() {
        let _ = writeln!(
            stderr,
            "{} warning(s), denied by --deny-warnings; {prompts} prompt(s) checked",
            problems.warnings.len()
        );
    } else {
        stdout = match problems.warnings.len() {
            0 => format!("ok: {prompts} prompt(s) checked, no errors\n"),
            n => format!("ok: {prompts} prompt(s) checked, no errors, {n} warning(s)\n"),
        };
    }
    (stderr, stdout)
}

/// Colours of the text report, as rustc and cargo use them.
fn paint(part: ReportPart, text: &str) -> String {
    let style = match part {
        ReportPart::Error => AnsiColor::Red.on_default().bold(),
        ReportPart::Warning => AnsiColor::Yellow.on_default().bold(),
        ReportPart::Headline => Style::new().bold(),
        ReportPart::Gutter => AnsiColor::Blue.on_default().bold(),
        ReportPart::Help => AnsiColor::Cyan.on_default().bold(),
        ReportPart::Label => AnsiColor::Magenta.on_default(),
        _ => Style::new(),
    };
    format!("{style}{text}{style:#}")
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

/// The JSON report: `{"valid", "prompts", "errors", "warnings"}`.
pub fn json(problems: &Problems) -> Value {
    json!({
        "valid": problems.valid(),
        "prompts": problems.prompts,
        "errors": problems.errors.iter().map(|e| problem_json("error", e)).collect::<Vec<_>>(),
        "warnings": problems.warnings.iter().map(|w| problem_json("warning", w)).collect::<Vec<_>>(),
    })
}

/// A short description of a rule, for SARIF's rule list.
pub fn rule_description(problem: &Error) -> &'static str {
    match (problem.class(), problem.kind()) {
        (ErrorClass::Document, Some("front-matter")) => {
            "The front matter cannot be read: a YAML error, not a mapping, or not closed"
        }
        (ErrorClass::Document, Some("front-matter-key")) => {
            "A front matter key is misspelled or has a value teleprompt cannot use"
        }
        (ErrorClass::Document, Some("duplicate-name")) => {
            "Two prompts of one directory have the same name"
        }
        (ErrorClass::Parse, Some("unknown-filter")) => "A Jinja filter that does not exist",
        (ErrorClass::Parse, Some("unknown-test")) => "A Jinja test that does not exist",
        (ErrorClass::Parse, Some("unknown-function")) => "A function that does not exist",
        (ErrorClass::Parse, Some("unknown-helper")) => "A Handlebars helper that does not exist",
        (ErrorClass::Parse, Some("unresolved-include")) => {
            "A Jinja include, import or extends, a Go template or a Handlebars partial that does not resolve"
        }
        (ErrorClass::Parse, Some("duplicate-template")) => {
            "A Go template name defined twice in one file, or in two files the prompt uses"
        }
        (ErrorClass::Parse, Some("constant-too-large")) => {
            "A constant expression larger than the limit max_value_bytes or max_items"
        }
        (ErrorClass::Warning, Some("range-scope")) => {
            "A root name read inside a Go range or with, where dot is the element"
        }
        (ErrorClass::Warning, Some("empty-message")) => {
            "A role marker with nothing after it but another marker: its message is dropped"
        }
        (ErrorClass::Warning, Some("text-after-history")) => {
            "Text right after history() with no role of its own"
        }
        (ErrorClass::Warning, Some("no-message")) => {
            "An empty template: the prompt renders nothing"
        }
        (ErrorClass::Warning, Some("undeclared-input")) => {
            "The template reads a name that input.schema does not declare"
        }
        (ErrorClass::Warning, Some("unused-input")) => {
            "input.schema declares an input the template never reads"
        }
        (ErrorClass::Warning, Some("printed-structure")) => {
            "A mapping or list printed as it is where its keys are read too"
        }
        (ErrorClass::Document, _) => "The prompt file cannot be read as a prompt",
        (ErrorClass::Parse, _) => "The template cannot be compiled",
        (ErrorClass::Render, _) => "The data does not fit the template",
        (ErrorClass::Input, _) => "The data does not fit the prompt's inputs",
        (ErrorClass::Io, _) => "A file or directory cannot be read",
        (ErrorClass::Warning, _) => "A likely mistake",
        // A class added to the library after this command.
        (_, _) => "A problem with the prompt",
    }
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

/// The SARIF 2.1.0 log of one check: one run, rules as they occur.
pub fn sarif(problems: &Problems) -> Value {
    let mut rules: Vec<(String, &'static str)> = Vec::new();
    let mut results = Vec::new();
    for (severity, problem) in problems.all() {
        let rule = problem.rule();
        let index = match rules.iter().position(|(id, _)| *id == rule) {
            Some(index) => index,
            None => {
                rules.push((rule.clone(), rule_description(problem)));
                rules.len() - 1
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
        results.push(Value::Object(result));
    }
    let rules: Vec<Value> = rules
        .into_iter()
        .map(|(id, description)| json!({ "id": id, "shortDescription": { "text": description } }))
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "teleprompt",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": env!("CARGO_PKG_REPOSITORY"),
                    "rules": rules,
                }
            },
            // Columns count characters, as teleprompt's reports do.
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
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

/// GitHub Actions workflow commands: one `::error` or `::warning` line per
/// problem, which the runner shows as annotations on the files.
pub fn github(problems: &Problems) -> String {
    let mut out = String::new();
    for (severity, problem) in problems.all() {
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
        let _ = writeln!(
            out,
            "::{severity} {}::{}",
            properties.join(","),
            escape_data(&full_message(problem))
        );
    }
    out
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

//! Library internals for teleprompt's own crates: the prompt-test runner
//! (`teleprompt-testing`) asks here what a file is by its name, walks a
//! folder the way a library does, and places its errors in a file.
//!
//! Behind the `unstable` cargo feature and hidden from the docs: this is
//! not part of the public API and carries no stability promise. Any
//! release may change or remove what is here; hosts should not use it.

use std::path::{Path, PathBuf};

use crate::diagnostics::{Error, ErrorClass, Location};
use crate::document::kind::FileKind;

/// Whether `path` names a prompt-tests file (`NAME.tests.yaml`,
/// `NAME.tests.yml`).
pub fn is_tests_file(path: &Path) -> bool {
    FileKind::of(path) == FileKind::Tests
}

/// Whether the prompt file at `path` may open with front matter: not a
/// tokenizer config, not Semantic Kernel's prompt YAML (the whole file is
/// its configuration), not JSON or YAML data, not a tests file.
pub fn has_front_matter(path: &Path) -> bool {
    FileKind::of(path).has_front_matter()
}

/// Whether the file at `path` may be a prompt rather than data beside it:
/// any file but JSON and YAML data and tests files.
pub fn could_be_prompt(path: &Path) -> bool {
    FileKind::could_be_prompt(path)
}

/// The regular files under `dir` that `keep` accepts, sorted by name,
/// honouring `.gitignore` as [`crate::prompt_files`] does.
pub fn files_under(dir: &Path, keep: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>, Error> {
    crate::library::files_under(dir, keep)
}

/// An error at `location` of `text` (the whole file, named `origin`),
/// underlining from the column to the end of that line.
pub fn error_in_text(
    class: ErrorClass,
    origin: &str,
    text: &str,
    location: Location,
    message: impl Into<String>,
) -> Error {
    Error::in_text(class, origin, text, location, message)
}

/// `error`, placed at `location`, with the text of that line and the width
/// to underline.
pub fn with_location(
    error: Error,
    location: Location,
    source_line: Option<(String, usize)>,
) -> Error {
    error.with_location(
        location,
        source_line
            .as_ref()
            .map(|(line, width)| (line.as_str(), *width)),
    )
}

/// `error` with a suggestion (`did you mean "expect"?`), or none.
pub fn with_suggestion(error: Error, suggestion: Option<String>) -> Error {
    error.with_suggestion(suggestion)
}

/// A Jinja prompt's direct path (its template lowered onto teleprompt's
/// own evaluator, tried first on every render): how many renders it gave
/// and how many it gave up (minijinja rendered those), or why the template
/// is not lowered (the first construct it refused). `None` for Go and
/// Handlebars prompts, which always render on the evaluator. For the
/// benchmarks that say which chat templates render directly.
pub fn direct_path(prompt: &crate::Prompt) -> Option<Result<(u32, u32), String>> {
    prompt
        .compiled_template()
        .direct_path()
        .map(|found| found.map_err(str::to_string))
}

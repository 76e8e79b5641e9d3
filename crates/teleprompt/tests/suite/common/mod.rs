//! What the suite's modules share: folders of files beside a prompt, where
//! an error was placed, and the lock of the tests that must run alone.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use teleprompt::Prompt;

/// Held by the tests that must not run beside one another (the suite's
/// tests share one process and run on several threads): the ones that
/// take a core and much memory for seconds (the hostile runs), and the
/// ones that assert a wall-clock time. A test that panics while holding it
/// does not poison it for the others.
pub fn exclusive() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether the run was asked to rewrite expected outputs with what
/// teleprompt produces (`TELEPROMPT_BLESS` set, other than to `0`): the
/// fixtures (see `fixtures`) and the examples' expected outputs.
pub fn blessing() -> bool {
    std::env::var_os("TELEPROMPT_BLESS").is_some_and(|value| !value.is_empty() && value != "0")
}

/// `path` (relative to the repository's root: `examples/…`), when it is
/// there. A published `teleprompt` crate holds only its own folder, so a
/// test of it that reads the repository's files says it is skipped and
/// passes (`cargo test` of the package builds and runs the rest).
pub fn repository_file(path: &str) -> Option<PathBuf> {
    let found = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    if found.exists() {
        return Some(found);
    }
    println!(
        "skipped: {path} is not in this checkout (a packaged crate holds only crates/teleprompt)"
    );
    None
}

/// A fresh folder `name` under the test's temporary folder, holding
/// `files` (path relative to it, text).
pub fn dir(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("writable");
    for (path, text) in files {
        write(&dir, path, text);
    }
    dir
}

/// Writes `text` to `path` under `dir`, making its folders.
pub fn write(dir: &Path, path: &str, text: &str) {
    let path = dir.join(path);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("writable");
    std::fs::write(path, text).expect("writable");
}

/// The prompt file at `path`, rendered with `data`.
pub fn render(path: &Path, data: serde_json::Value) -> Result<String, teleprompt::Error> {
    Prompt::from_file(path)?
        .render(data)
        .map(|rendered| rendered.into_text())
}

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Where an error is: its file's name, line and column (0, 0 without a
/// location).
pub fn at(error: &teleprompt::Error) -> (String, usize, usize) {
    let location = error.location().map_or((0, 0), |at| (at.line, at.column));
    (
        file_name(error.file().unwrap_or_default()),
        location.0,
        location.1,
    )
}

/// The `included by` labels, each as `FILE:LINE:COL` with the folder left
/// out.
pub fn included_by(error: &teleprompt::Error) -> Vec<String> {
    error
        .labels()
        .iter()
        .filter(|(key, _)| key == "included by")
        .map(|(_, value)| file_name(value))
        .collect()
}

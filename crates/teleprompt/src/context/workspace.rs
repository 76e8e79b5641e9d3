//! The workspace provider (Forge): `env`, `files` and `readme`, read from a
//! directory on disk only when a prompt reads them.
//!
//! A workspace is often a repository someone else wrote, so what it holds
//! is input, not configuration. Its files are read only when they are
//! regular files whose real path stays inside the root: a symbolic link
//! to a file elsewhere in the workspace is followed, one that leads out
//! (`README.md -> /proc/self/environ`) is not; named pipes, sockets and
//! devices are never opened for reading, so none can block a render; and
//! every read is bounded.

use std::fs::{File, FileType};
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde_json::{Map, Value};

use crate::diagnostics::{Error, ErrorClass};

/// How deep [`Workspace`] lists files by default: the root's own entries
/// (Forge's `max_walker_depth` default).
pub const DEFAULT_MAX_DEPTH: usize = 1;
/// How many paths [`Workspace`] lists by default before it stops.
pub const DEFAULT_MAX_ENTRIES: usize = 1000;
/// How many bytes of the README [`Workspace`] keeps by default.
pub const DEFAULT_README_MAX_BYTES: usize = 16 * 1024;
/// The largest ignore file (`.gitignore`, `.ignore`, `.git/info/exclude`)
/// the file list reads; a larger one is skipped, as if absent.
pub const IGNORE_FILE_MAX_BYTES: usize = 1024 * 1024;

/// A directory whose environment, file list and README a prompt can read as
/// `env`, `files` and `readme`.
///
/// Nothing is read when the workspace is created: the file list and the
/// README are read at each build whose prompt uses them.
///
/// ```
/// use teleprompt::context::Workspace;
/// let workspace = Workspace::new(".").max_depth(2).max_entries(200).readme_max_bytes(8192);
/// assert_eq!(workspace.root(), std::path::Path::new("."));
/// ```
///
/// It serializes as `{"root", "max_depth", "max_entries", "readme_file",
/// "readme_max_bytes", "environment"}` (part of a serialized
/// [`super::PromptContext`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workspace {
    root: PathBuf,
    max_depth: usize,
    max_entries: usize,
    readme_file: String,
    readme_max_bytes: usize,
    environment: Environment,
}

impl Workspace {
    /// A workspace rooted at `root`, with the environment of this process
    /// ([`Environment::detect`]) and the default limits.
    pub fn new(root: impl Into<PathBuf>) -> Workspace {
        let root = root.into();
        let environment = Environment::detect(&root);
        Workspace {
            root,
            max_depth: DEFAULT_MAX_DEPTH,
            max_entries: DEFAULT_MAX_ENTRIES,
            readme_file: "README.md".to_string(),
            readme_max_bytes: DEFAULT_README_MAX_BYTES,
            environment,
        }
    }

    /// Lists files down to `depth` levels below the root (1: the root's own
    /// entries; 0: none).
    pub fn max_depth(mut self, depth: usize) -> Workspace {
        self.max_depth = depth;
        self
    }

    /// Stops the file list after `entries` paths and adds a marker line.
    pub fn max_entries(mut self, entries: usize) -> Workspace {
        self.max_entries = entries;
        self
    }

    /// The README's file name in the root (default `README.md`).
    pub fn readme_file(mut self, name: impl Into<String>) -> Workspace {
        self.readme_file = name.into();
        self
    }

    /// Keeps at most `bytes` bytes of the README (cut on a character
    /// boundary, then a marker line).
    pub fn readme_max_bytes(mut self, bytes: usize) -> Workspace {
        self.readme_max_bytes = bytes;
        self
    }

    /// Replaces the detected environment (tests; a host running an agent in
    /// a container).
    pub fn environment(mut self, environment: Environment) -> Workspace {
        self.environment = environment;
        self
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The `env` namespace: `os`, `cwd`, `shell`, `home`.
    pub fn env_value(&self) -> Value {
        let env = &self.environment;
        let mut map = Map::new();
        map.insert("os".into(), Value::from(env.os.clone()));
        map.insert("cwd".into(), Value::from(env.cwd.clone()));
        map.insert("shell".into(), Value::from(env.shell.clone()));
        map.insert("home".into(), Value::from(env.home.clone()));
        Value::Object(map)
    }

    /// The `files` list: paths relative to the root with `/` separators,
    /// directories ending in `/`, sorted. Files that `.gitignore`, `.ignore`
    /// or `.git/info/exclude` files inside the workspace hide (`.ignore`
    /// first, deeper files first, as ripgrep ranks them), or that git's
    /// global excludes hide, are left out, and so are hidden files. Ignore
    /// files are read as the README is (regular files inside the
    /// workspace, at most `IGNORE_FILE_MAX_BYTES`; others are skipped),
    /// and those of directories above the root are not read at all.
    /// Symbolic links are listed, never followed; entries that cannot be
    /// read are skipped. When the list reaches the entry limit, the last
    /// item is a marker line saying so.
    pub fn files(&self) -> Result<Vec<String>, Error> {
        self.check_root()?;
        let Ok(real_root) = self.root.canonicalize() else {
            return Err(self.root_error());
        };
        let mut walk = Walk {
            root: &self.root,
            real_root: &real_root,
            max_entries: self.max_entries,
            global: Gitignore::global().0,
            levels: Vec::new(),
            files: Vec::new(),
            truncated: false,
        };
        walk.directory(&self.root, self.max_depth);
        let mut files = walk.files;
        files.sort();
        if walk.truncated {
            files.push(format!(
                "... (file list cut at {} entries)",
                self.max_entries
            ));
        }
        Ok(files)
    }

    /// The README's text, or `""` when there is none. Longer than the limit,
    /// it is cut on a character boundary and ends with a marker line.
    /// Invalid UTF-8 is replaced with U+FFFD.
    ///
    /// Errors (class `io`): the README is a link that leads out of the
    /// workspace, or not a regular file (a named pipe, a device), or cannot
    /// be read. A link to a file inside the workspace is followed.
    pub fn readme(&self) -> Result<String, Error> {
        let path = self.root.join(&self.readme_file);
        let name = &self.readme_file;
        let error = |message: String| {
            Error::new(ErrorClass::Io, message).with_file(path.display().to_string())
        };
        let real_root = match self.root.canonicalize() {
            Ok(real_root) => real_root,
            // No workspace, no README (listing the files says why).
            Err(_) => return Ok(String::new()),
        };
        let file = match open_inside(&real_root, &path) {
            Ok(file) => file,
            Err(Refusal::Missing) => return Ok(String::new()),
            Err(Refusal::Outside(real)) => {
                return Err(error(format!(
                "the workspace README {name} leads outside the workspace (to {}): it is not read",
                real.display()
            ))
                .with_suggestion(Some(
                    "copy the file into the workspace instead of linking to it".to_string(),
                )))
            }
            Err(Refusal::Special(kind)) => {
                return Err(error(format!(
                    "the workspace README {name} is {kind}, not a regular file: it is not read"
                )))
            }
            Err(Refusal::Unreadable(cause)) => {
                return Err(error(format!("cannot read the workspace README: {cause}")))
            }
        };
        let limit = u64::try_from(self.readme_max_bytes)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        let mut bytes = Vec::new();
        file.take(limit)
            .read_to_end(&mut bytes)
            .map_err(|cause| error(format!("cannot read the workspace README: {cause}")))?;
        Ok(cap_text(bytes, self.readme_max_bytes, name))
    }

    fn check_root(&self) -> Result<(), Error> {
        if self.root.is_dir() {
            return Ok(());
        }
        Err(self.root_error())
    }

    fn root_error(&self) -> Error {
        Error::new(
            ErrorClass::Io,
            format!(
                "the workspace root {} is not a directory that can be read",
                self.root.display()
            ),
        )
    }
}

/// Why a file of the workspace is not read.
#[derive(Debug)]
enum Refusal {
    /// There is no such file (or a link to nothing).
    Missing,
    /// Its real path, outside the workspace.
    Outside(PathBuf),
    /// What it is instead of a regular file: "a named pipe", ….
    Special(&'static str),
    /// It cannot be resolved, examined or opened.
    Unreadable(std::io::Error),
}

/// Opens `path` for reading when it is a regular file whose real path (all
/// links resolved) is inside `real_root` (itself a real path). The file
/// type is checked before the file is opened, so a named pipe or a device
/// is never opened; on Unix the open itself never blocks and follows no
/// link, and the type is checked again on what was opened, in case the
/// file was replaced in between.
fn open_inside(real_root: &Path, path: &Path) -> Result<File, Refusal> {
    let real = match path.canonicalize() {
        Ok(real) => real,
        Err(error) if error.kind() == ErrorKind::NotFound => return Err(Refusal::Missing),
        Err(error) => return Err(Refusal::Unreadable(error)),
    };
    if !real.starts_with(real_root) {
        return Err(Refusal::Outside(real));
    }
    let metadata = std::fs::metadata(&real).map_err(Refusal::Unreadable)?;
    if !metadata.is_file() {
        return Err(Refusal::Special(describe_type(metadata.file_type())));
    }
    let file = open_without_blocking(&real).map_err(Refusal::Unreadable)?;
    let opened = file.metadata().map_err(Refusal::Unreadable)?;
    if !opened.is_file() {
        return Err(Refusal::Special(describe_type(opened.file_type())));
    }
    Ok(file)
}

#[cfg(unix)]
fn open_without_blocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
}

#[cfg(not(unix))]
fn open_without_blocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// What a file that is not a regular file is, for messages.
fn describe_type(kind: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a named pipe";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Reads a file of the workspace as an ignore file builds it, if it is
/// one [`open_inside`] opens and is at most [`IGNORE_FILE_MAX_BYTES`].
fn read_ignore_file(real_root: &Path, dir: &Path, name: &str) -> Option<Gitignore> {
    let path = dir.join(name);
    let file = open_inside(real_root, &path).ok()?;
    let limit = u64::try_from(IGNORE_FILE_MAX_BYTES).unwrap_or(u64::MAX);
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() > IGNORE_FILE_MAX_BYTES {
        return None;
    }
    let mut builder = GitignoreBuilder::new(dir);
    for line in String::from_utf8_lossy(&bytes).lines() {
        // A line that is not a valid glob is skipped, as git skips it.
        let _ = builder.add_line(Some(path.clone()), line);
    }
    builder.build().ok()
}

/// The ignore files of one directory of the walk.
struct Level {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

/// One listing of the workspace: depth first, entries by name.
struct Walk<'a> {
    root: &'a Path,
    real_root: &'a Path,
    max_entries: usize,
    global: Gitignore,
    /// The ignore files of the directories from the root to the current one.
    levels: Vec<Level>,
    files: Vec<String>,
    truncated: bool,
}

impl Walk<'_> {
    /// Lists `dir` and, `depth` levels down, what it holds.
    fn directory(&mut self, dir: &Path, depth: usize) {
        if depth == 0 || self.truncated {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<(std::ffi::OsString, FileType)> = entries
            .flatten()
            .filter_map(|entry| Some((entry.file_name(), entry.file_type().ok()?)))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        self.levels.push(Level {
            ignore: read_ignore_file(self.real_root, dir, ".ignore"),
            gitignore: read_ignore_file(self.real_root, dir, ".gitignore"),
            exclude: read_ignore_file(self.real_root, dir, ".git/info/exclude"),
        });
        for (name, kind) in entries {
            if name.as_encoded_bytes().starts_with(b".") {
                continue;
            }
            let path = dir.join(&name);
            // A link is listed as what it is, a link: never followed.
            let is_dir = kind.is_dir();
            if self.ignored(&path, is_dir) {
                continue;
            }
            if self.files.len() >= self.max_entries {
                self.truncated = true;
                break;
            }
            self.files.push(relative_path(self.root, &path, is_dir));
            if is_dir {
                self.directory(&path, depth - 1);
            }
        }
        self.levels.pop();
    }

    /// True when an ignore file hides `path`: `.ignore` files rank above
    /// `.gitignore` files, which rank above `.git/info/exclude`; within a
    /// kind the deepest directory's file decides; git's global excludes
    /// come last.
    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        let kinds: [fn(&Level) -> Option<&Gitignore>; 3] = [
            |level| level.ignore.as_ref(),
            |level| level.gitignore.as_ref(),
            |level| level.exclude.as_ref(),
        ];
        for kind in kinds {
            for level in self.levels.iter().rev() {
                let Some(rules) = kind(level) else {
                    continue;
                };
                let found = rules.matched(path, is_dir);
                if found.is_ignore() {
                    return true;
                }
                if found.is_whitelist() {
                    return false;
                }
            }
        }
        self.global.matched(path, is_dir).is_ignore()
    }
}

/// `path` relative to `root`, `/`-separated, with a trailing `/` for a
/// directory.
fn relative_path(root: &Path, path: &Path, is_dir: bool) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let mut text = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    if is_dir {
        text.push('/');
    }
    text
}

/// The text of `bytes`, cut to at most `max` bytes on a character boundary
/// with a marker line when it is longer.
fn cap_text(mut bytes: Vec<u8>, max: usize, name: &str) -> String {
    if bytes.len() <= max {
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    let mut cut = max;
    // Step back over UTF-8 continuation bytes so no character is split.
    while cut > 0 && bytes.get(cut).is_some_and(|byte| byte & 0xC0 == 0x80) {
        cut -= 1;
    }
    bytes.truncate(cut);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("[{name} truncated after {cut} bytes]"));
    text
}

/// The `env` values of a [`Workspace`].
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// The operating system: `linux`, `macos`, `windows`, … (Rust's `std::env::consts::OS`).
    pub os: String,
    /// The working directory the agent runs in: the workspace root.
    pub cwd: String,
    /// The user's shell: `$SHELL`, else `%COMSPEC%` on Windows, else `""`.
    pub shell: String,
    /// The home directory: `$HOME`, else `%USERPROFILE%`, else `""`.
    pub home: String,
}

impl Environment {
    /// The environment of this process, with `cwd` set to `root` (made
    /// absolute against the current directory when it can be).
    pub fn detect(root: &Path) -> Environment {
        let cwd = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        Environment {
            os: std::env::consts::OS.to_string(),
            cwd: cwd.display().to_string(),
            shell: first_variable(&["SHELL", "COMSPEC"]),
            home: first_variable(&["HOME", "USERPROFILE"]),
        }
    }
}

fn first_variable(names: &[&str]) -> String {
    names
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|value| !value.is_empty()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_on_a_character_boundary() {
        let text = "héllo".as_bytes().to_vec(); // h, é (2 bytes), l, l, o
        assert_eq!(cap_text(text.clone(), 10, "R"), "héllo");
        assert_eq!(
            cap_text(text.clone(), 2, "R"),
            "h\n[R truncated after 1 bytes]"
        );
        assert_eq!(
            cap_text(text.clone(), 3, "R"),
            "hé\n[R truncated after 3 bytes]"
        );
        assert_eq!(cap_text(text, 0, "R"), "[R truncated after 0 bytes]");
    }

    #[test]
    fn relative_paths_use_slashes_and_mark_directories() {
        let root = Path::new("/w");
        assert_eq!(
            relative_path(root, Path::new("/w/src/lib.rs"), false),
            "src/lib.rs"
        );
        assert_eq!(relative_path(root, Path::new("/w/src"), true), "src/");
    }

    #[test]
    fn a_missing_root_is_an_io_error() {
        let workspace = Workspace::new("/definitely/not/here/teleprompt");
        let error = workspace.files().unwrap_err();
        assert_eq!(error.class(), ErrorClass::Io);
        assert_eq!(workspace.readme().unwrap(), "");
    }
}

//! The workspace provider (Forge): `env`, `files` and `readme`, read from a
//! directory on disk only when a prompt reads them.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::diagnostics::{Error, ErrorClass};

/// How deep [`Workspace`] lists files by default: the root's own entries
/// (Forge's `max_walker_depth` default).
pub const DEFAULT_MAX_DEPTH: usize = 1;
/// How many paths [`Workspace`] lists by default before it stops.
pub const DEFAULT_MAX_ENTRIES: usize = 1000;
/// How many bytes of the README [`Workspace`] keeps by default.
pub const DEFAULT_README_MAX_BYTES: usize = 16 * 1024;

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
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// or git's global excludes hide are left out, and so are hidden files
    /// (the `ignore` crate's defaults; `.gitignore` applies even outside a
    /// git repository). Symbolic links are listed, not followed; entries
    /// that cannot be read are skipped. When the list reaches the entry
    /// limit, the last item is a marker line saying so.
    pub fn files(&self) -> Result<Vec<String>, Error> {
        self.check_root()?;
        let mut walker = ignore::WalkBuilder::new(&self.root);
        walker
            .max_depth(Some(self.max_depth))
            .require_git(false)
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b));
        let mut files = Vec::new();
        let mut truncated = false;
        for entry in walker.build().flatten() {
            if entry.depth() == 0 {
                continue;
            }
            if files.len() >= self.max_entries {
                truncated = true;
                break;
            }
            let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
            files.push(relative_path(&self.root, entry.path(), is_dir));
        }
        files.sort();
        if truncated {
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
    pub fn readme(&self) -> Result<String, Error> {
        let path = self.root.join(&self.readme_file);
        let io_error = |error: std::io::Error| {
            Error::new(
                ErrorClass::Io,
                format!("cannot read the workspace README: {error}"),
            )
            .with_file(path.display().to_string())
        };
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(String::new()),
            Err(error) => return Err(io_error(error)),
        };
        let limit = u64::try_from(self.readme_max_bytes)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        let mut bytes = Vec::new();
        file.take(limit).read_to_end(&mut bytes).map_err(io_error)?;
        Ok(cap_text(bytes, self.readme_max_bytes, &self.readme_file))
    }

    fn check_root(&self) -> Result<(), Error> {
        if self.root.is_dir() {
            return Ok(());
        }
        Err(Error::new(
            ErrorClass::Io,
            format!(
                "the workspace root {} is not a directory that can be read",
                self.root.display()
            ),
        ))
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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

//! Files a template pulls in from other files (Handlebars partials, Go
//! templates, Jinja includes, imports and `extends`): where a name is
//! looked for, and reading it without leaving the folder the host allowed.
//!
//! A prompt loaded from a file may use other files of its *include root*:
//! [`LoadOptions::include_root`](crate::LoadOptions::include_root) when the
//! host sets it, else the library's directory ([`crate::Library`]) or the
//! prompt file's own folder. Names are relative paths inside that root:
//! an absolute name, `..`, or a symbolic link whose target lies outside
//! the root is an error, and only regular files are read (a FIFO or a
//! device named like a partial is an error, never a read that blocks),
//! and a file holds at most [`crate::limits::Limits::max_template_bytes`].

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::limits::{self, Input};

/// The most files one prompt may include, all levels counted.
pub(crate) const MAX_FILES: usize = 1000;

/// The error of files that name one another more than `max_depth` deep
/// (`max_call_depth`): no render could get to the last, and the load stops
/// there, before a chain of files costs a library time and memory
/// quadratic in its length (every file of the chain loading the rest).
pub(crate) fn too_deep(max_depth: usize) -> String {
    format!(
        "files include one another more than {max_depth} deep (the limit max_call_depth): no render could reach the last"
    )
}

/// Where the files a prompt includes are looked for.
#[derive(Clone, Debug)]
pub(crate) struct Includes {
    /// The root, canonical: nothing outside it is read.
    root: PathBuf,
    /// The root as the host named it, for reports.
    shown_root: PathBuf,
    /// The including file's folder, relative to the root (empty: the root).
    dir: PathBuf,
    /// The including file, relative to the root (`None`: not a file of
    /// the root).
    file: Option<PathBuf>,
    /// The including file's extension (`hbs`, `prompt`, `md`), lower case.
    extension: Option<String>,
    /// The most bytes an included file may hold (the template limit).
    max_bytes: usize,
    /// Every file looked for, shared by the copies made for one prompt.
    looked_at: Arc<Mutex<LookedAt>>,
}

/// The files a prompt's load looked for, in order, each once.
#[derive(Debug, Default)]
struct LookedAt {
    list: Vec<Dependency>,
    seen: std::collections::HashSet<PathBuf>,
}

/// A file a prompt's load looked for: one it read, or a name it tried
/// that did not exist. A library rebuilds the prompt when either changes
/// (a file edited, a file appearing where one was looked for).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dependency {
    /// The file, under the canonical include root.
    pub(crate) path: PathBuf,
    /// Its path relative to the root: what a prompt's version hashes, so
    /// that a folder checked out in two places gives one version.
    pub(crate) name: PathBuf,
    /// A hash of the bytes read ([`content_hash`]); `None`: not there.
    pub(crate) hash: Option<u64>,
}

/// The hash of a file's bytes that prompt versions are made of: 64-bit
/// FNV-1a, the same in every process and build (a library served by
/// several instances gives one prompt one version everywhere).
pub(crate) fn content_hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A file found for a name.
#[derive(Clone, Debug)]
pub(crate) struct IncludedFile {
    /// The path as reports show it (the root as the host gave it, joined
    /// with the file's relative path).
    pub origin: String,
    /// The text (UTF-8, checked).
    pub text: String,
}

impl Includes {
    /// Includes for the prompt file `file`, inside `root` (the file's
    /// folder when `None`). `None` when the root cannot be resolved (it
    /// does not exist): nothing can be included then.
    pub(crate) fn for_file(file: &Path, root: Option<&Path>, max_bytes: usize) -> Option<Includes> {
        let named = file.parent().unwrap_or(Path::new(""));
        let folder = if named.as_os_str().is_empty() {
            Path::new(".")
        } else {
            named
        };
        let (root, shown_root) = match root {
            Some(root) => (root, root),
            None => (folder, named),
        };
        let canonical_root = root.canonicalize().ok()?;
        let inside = folder
            .canonicalize()
            .ok()
            .and_then(|f| f.strip_prefix(&canonical_root).ok().map(Path::to_path_buf));
        let file_in_root = inside
            .as_ref()
            .and_then(|dir| Some(dir.join(file.file_name()?)));
        Some(Includes {
            root: canonical_root,
            shown_root: shown_root.to_path_buf(),
            dir: inside.unwrap_or_default(),
            file: file_in_root,
            extension: file
                .extension()
                .map(|ext| ext.to_string_lossy().to_ascii_lowercase()),
            max_bytes,
            looked_at: Arc::default(),
        })
    }

    /// Includes for a template that is not a file: names resolve in `root`.
    pub(crate) fn in_root(root: &Path, max_bytes: usize) -> Option<Includes> {
        Some(Includes {
            root: root.canonicalize().ok()?,
            shown_root: root.to_path_buf(),
            dir: PathBuf::new(),
            file: None,
            extension: None,
            max_bytes,
            looked_at: Arc::default(),
        })
    }

    /// Includes for a file found through these (its own includes resolve
    /// beside it first).
    pub(crate) fn beside(&self, relative: &Path) -> Includes {
        Includes {
            root: self.root.clone(),
            shown_root: self.shown_root.clone(),
            dir: relative.parent().map(Path::to_path_buf).unwrap_or_default(),
            file: Some(relative.to_path_buf()),
            extension: self.extension.clone(),
            max_bytes: self.max_bytes,
            looked_at: Arc::clone(&self.looked_at),
        }
    }

    /// The files looked for so far, through these includes and every copy
    /// of them, each once, in the order first looked for.
    pub(crate) fn looked_at(&self) -> Vec<Dependency> {
        self.looked_at
            .lock()
            .map(|looked| looked.list.clone())
            .unwrap_or_default()
    }

    fn note(&self, relative: &Path, hash: Option<u64>) {
        let path = self.root.join(relative);
        if let Ok(mut looked) = self.looked_at.lock() {
            if looked.seen.insert(path.clone()) {
                looked.list.push(Dependency {
                    path,
                    name: relative.to_path_buf(),
                    hash,
                });
            }
        }
    }

    /// The relative paths tried for a Handlebars partial `name`, in order:
    /// in the including file's folder, then in the root, the name as
    /// written, with the including file's extension, with `.hbs` and
    /// `.handlebars`, and as a Dotprompt partial (`_name.prompt`; first
    /// after the name as written when the including file is a `.prompt`).
    pub(crate) fn partial_candidates(&self, name: &str) -> Result<Vec<PathBuf>, String> {
        let name_path = relative_name(name)?;
        let file_name = name_path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut names = vec![name_path.clone()];
        let mut add = |path: PathBuf| {
            if !names.contains(&path) {
                names.push(path);
            }
        };
        let dotprompt = name_path.with_file_name(format!("_{file_name}.prompt"));
        if let Some(extension) = &self.extension {
            // In a `.prompt` file, `persona.prompt` is another prompt and
            // `_persona.prompt` the partial.
            if extension == "prompt" {
                add(dotprompt.clone());
            }
            add(name_path.with_file_name(format!("{file_name}.{extension}")));
        }
        add(name_path.with_file_name(format!("{file_name}.hbs")));
        add(name_path.with_file_name(format!("{file_name}.handlebars")));
        add(dotprompt);
        let mut dirs = vec![self.dir.clone()];
        if !self.dir.as_os_str().is_empty() {
            dirs.push(PathBuf::new());
        }
        Ok(dirs
            .iter()
            .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
            .collect())
    }

    /// The relative paths tried for a Go `{{template "name"}}` that no
    /// `define` of the set names: the file `name` exactly as written (Go
    /// names a file's template by its file name, extension included), in
    /// the including file's folder, then in the root.
    pub(crate) fn template_candidates(&self, name: &str) -> Result<Vec<PathBuf>, String> {
        let name_path = relative_name(name)?;
        let mut found = vec![self.dir.join(&name_path)];
        if !self.dir.as_os_str().is_empty() {
            found.push(name_path);
        }
        Ok(found)
    }

    /// The relative path of `name` beside the including file (a Prompty
    /// `${file:…}` reference): only there, no other folder.
    pub(crate) fn beside_candidates(&self, name: &str) -> Result<Vec<PathBuf>, String> {
        Ok(vec![self.dir.join(relative_name(name)?)])
    }

    /// The including file, relative to the root, when it is a file of
    /// the root.
    pub(crate) fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The relative paths tried for a Jinja template `name` (`include`,
    /// `import`, `extends`), in order: the name as written from the root
    /// (as Jinja2's `FileSystemLoader` reads every name from its search
    /// path), then from the including file's folder. No extension is
    /// added: Jinja names its templates by their file names.
    pub(crate) fn jinja_candidates(&self, name: &str) -> Result<Vec<PathBuf>, String> {
        let name_path = relative_name(name)?;
        let beside = self.dir.join(&name_path);
        let mut found = vec![name_path];
        if !self.dir.as_os_str().is_empty() {
            found.push(beside);
        }
        Ok(found)
    }

    /// The include root, canonical: the folder the Go front end lists to
    /// find `define`s in other files (it reads them with
    /// [`Includes::read_first`]).
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The most bytes a file read through these may hold.
    pub(crate) fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The including file's folder, relative to the root.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Reads the first of `candidates` (relative paths) that exists:
    /// `Ok(None)` when none does; an error when one exists but may not or
    /// cannot be read.
    pub(crate) fn read_first(
        &self,
        candidates: &[PathBuf],
    ) -> Result<Option<(PathBuf, IncludedFile)>, String> {
        for relative in candidates {
            let path = self.root.join(relative);
            // Not there (or a dangling link): try the next name.
            if std::fs::symlink_metadata(&path).is_err() {
                self.note(relative, None);
                continue;
            }
            let shown = relative.display();
            let canonical = path
                .canonicalize()
                .map_err(|error| format!("cannot read {shown}: {error}"))?;
            if !canonical.starts_with(&self.root) {
                return Err(format!(
                    "{shown} leads outside the include root {} (a symbolic link to {}): included files must stay inside it",
                    self.root.display(),
                    canonical.display()
                ));
            }
            if canonical.is_dir() {
                continue;
            }
            // The one rule for a file a file names (limits::read_inside):
            // opened without blocking, checked regular on the open file.
            let file = limits::open_regular(&canonical).map_err(|error| {
                if error.starts_with("it is not a regular file") {
                    format!("{shown} is not a regular file (a pipe or a device), so it is not read")
                } else {
                    format!("{shown}: {error}")
                }
            })?;
            let origin = self.shown_root.join(relative).display().to_string();
            let bytes = limits::read_opened(file, &origin, self.max_bytes, Input::Template)
                .map_err(|error| format!("{shown}: {}", error.message()))?;
            self.note(relative, Some(content_hash(&bytes)));
            let text = String::from_utf8(bytes).map_err(|error| {
                format!(
                    "{shown} is not UTF-8 text (invalid byte at offset {})",
                    error.utf8_error().valid_up_to()
                )
            })?;
            return Ok(Some((relative.clone(), IncludedFile { origin, text })));
        }
        Ok(None)
    }
}

/// `name` as a relative path that stays inside the root.
fn relative_name(name: &str) -> Result<PathBuf, String> {
    let path = Path::new(name);
    if name.is_empty() || name.contains('\0') {
        return Err(format!("{name:?} is not a file name"));
    }
    let mut clean = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "{name:?} leaves the include root: names of included files are relative paths inside it, without `..`"
                ))
            }
        }
    }
    if clean.as_os_str().is_empty() {
        return Err(format!("{name:?} is not a file name"));
    }
    Ok(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_inside_the_root() {
        assert!(relative_name("../secret").is_err());
        assert!(relative_name("/etc/passwd").is_err());
        assert!(relative_name("a/../../b").is_err());
        assert!(relative_name("").is_err());
        assert_eq!(relative_name("./a/b.md").unwrap(), PathBuf::from("a/b.md"));
    }

    #[test]
    fn jinja_names_from_the_root_then_beside_the_includer() {
        let includes = Includes {
            root: PathBuf::from("/r"),
            shown_root: PathBuf::from("r"),
            dir: PathBuf::from("sub"),
            file: Some(PathBuf::from("sub/main.j2")),
            extension: Some("j2".to_string()),
            max_bytes: 1024,
            looked_at: Arc::default(),
        };
        assert_eq!(
            includes.jinja_candidates("./parts/a.j2").unwrap(),
            [PathBuf::from("parts/a.j2"), PathBuf::from("sub/parts/a.j2")]
        );
        assert!(includes.jinja_candidates("../a.j2").is_err());
        let at_root = includes.beside(Path::new("b.j2"));
        assert_eq!(at_root.file(), Some(Path::new("b.j2")));
        assert_eq!(
            at_root.jinja_candidates("a.j2").unwrap(),
            [PathBuf::from("a.j2")]
        );
    }

    #[test]
    fn candidates_in_order() {
        let includes = Includes {
            root: PathBuf::from("/r"),
            shown_root: PathBuf::from("r"),
            dir: PathBuf::from("sub"),
            file: None,
            extension: Some("md".to_string()),
            max_bytes: 1024,
            looked_at: Arc::default(),
        };
        let found: Vec<String> = includes
            .partial_candidates("common/persona")
            .unwrap()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            found,
            [
                "sub/common/persona",
                "sub/common/persona.md",
                "sub/common/persona.hbs",
                "sub/common/persona.handlebars",
                "sub/common/_persona.prompt",
                "common/persona",
                "common/persona.md",
                "common/persona.hbs",
                "common/persona.handlebars",
                "common/_persona.prompt",
            ]
        );
        let includes = Includes {
            extension: Some("prompt".to_string()),
            dir: PathBuf::new(),
            ..includes
        };
        let found = includes.partial_candidates("persona").unwrap();
        assert_eq!(
            found,
            [
                "persona",
                "_persona.prompt",
                "persona.prompt",
                "persona.hbs",
                "persona.handlebars"
            ]
            .map(PathBuf::from)
        );
    }
}

//! Which files of a directory are prompts.

use std::path::{Path, PathBuf};

use crate::diagnostics::{Error, ErrorClass};
use crate::Syntax;

/// Extensions of files that hold a prompt when they open with front matter.
const TEXT_EXTENSIONS: &[&str] = &["md", "prompt", "txt"];

/// The prompt files under `dir`, sorted, honouring `.gitignore`: files whose
/// name or extension names a syntax (`.j2`, `.gotmpl`, `.hbs`, `.prompty`,
/// `tokenizer_config.json`, …), `.md`, `.prompt` and `.txt` files that open
/// with front matter, and Semantic Kernel prompt YAML (`.yaml`/`.yml` with a
/// top-level `template_format`). Dotprompt partials (`_name.prompt`) are
/// not prompts: the prompts that use them read them.
pub fn prompt_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    files_under(dir, |path| {
        !is_dotprompt_partial(path)
            && (Syntax::from_path(path).is_some()
                || (has_text_extension(path) && opens_with_front_matter(path))
                || (crate::load::formats::semantic_kernel::is_sk_prompt(&path.to_string_lossy())
                    && is_sk_prompt_yaml(path)))
    })
}

/// The regular files under `dir` that `keep` accepts, sorted by name.
/// `.gitignore` counts even outside a git repository, as it does for the
/// workspace file list.
pub(crate) fn files_under(dir: &Path, keep: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    let walker = ignore::WalkBuilder::new(dir)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    for entry in walker {
        let entry = entry.map_err(|error| {
            Error::new(
                ErrorClass::Io,
                format!("cannot read the directory: {error}"),
            )
            .with_file(dir.display().to_string())
        })?;
        if entry.file_type().is_some_and(|kind| kind.is_file()) && keep(entry.path()) {
            files.push(entry.into_path());
        }
    }
    Ok(files)
}

fn is_dotprompt_partial(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "prompt")
        && path
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('_'))
}

fn has_text_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| TEXT_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// A YAML file with a top-level `template_format:` key: a Semantic
/// Kernel prompt, not data. Read whole only up to 64 KiB.
pub(crate) fn is_sk_prompt_yaml(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    if file.take(64 * 1024).read_to_end(&mut head).is_err() {
        return false;
    }
    String::from_utf8_lossy(&head)
        .lines()
        .any(|line| line.starts_with("template_format:"))
}

fn opens_with_front_matter(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    let Ok(mut file) = std::fs::File::open(path) else {
        // Unreadable: include it so loading reports why.
        return true;
    };
    let read = file.read(&mut head).unwrap_or(0);
    let head = head.get(..read).unwrap_or_default();
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    head.starts_with(b"---\n") || head.starts_with(b"---\r\n") || head.starts_with(b"--- ")
}

//! Walking a folder for its files: the prompts of a library (which
//! files are prompts is [`FileKind`]'s answer), the tests files of
//! `teleprompt test`.

use std::path::{Path, PathBuf};

use crate::diagnostics::{Error, ErrorClass};
use crate::document::kind::FileKind;

/// The prompt files under `dir`, sorted, honouring `.gitignore`: files whose
/// name or extension names a syntax (`.j2`, `.gotmpl`, `.hbs`, `.prompty`,
/// `tokenizer_config.json`, …), `.md`, `.prompt` and `.txt` files that open
/// with front matter, and Semantic Kernel prompt YAML (`.yaml`/`.yml` with a
/// top-level `template_format`). Dotprompt partials (`_name.prompt`) are
/// not prompts: the prompts that use them read them.
pub fn prompt_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    files_under(dir, FileKind::is_prompt_in_folder)
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

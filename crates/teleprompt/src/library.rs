//! A library of prompts: every prompt file of a directory, by name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diagnostics::{Error, ErrorClass, Errors};
use crate::{LoadOptions, Prompt, Syntax};

/// Extensions of files that hold a prompt when they open with front matter.
const TEXT_EXTENSIONS: &[&str] = &["md", "prompt", "txt"];

/// Prompts loaded once and looked up by name.
///
/// ```no_run
/// use teleprompt::{Library, LoadOptions};
/// let library = Library::load_dir("prompts", &LoadOptions::default())?;
/// let prompt = library.get("task").expect("prompts/task.j2 exists");
/// let text = prompt.render(serde_json::json!({"issue": {"title": "Fix it"}}))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Library {
    prompts: BTreeMap<String, Prompt>,
}

impl Library {
    /// Loads every prompt file under `dir` (see [`prompt_files`]). Fails
    /// with every broken file, not only the first, and every error of each
    /// (see [`Error::all`]).
    pub fn load_dir(dir: impl AsRef<Path>, options: &LoadOptions) -> Result<Library, Errors> {
        let files = prompt_files(dir.as_ref()).map_err(|error| Errors(vec![error]))?;
        // Partials resolve in the library's directory (beside each file
        // first), unless the host chose a root.
        let mut options = options.clone();
        options
            .include_root
            .get_or_insert_with(|| dir.as_ref().to_path_buf());
        let mut errors = Vec::new();
        let mut prompts = Vec::new();
        for file in files {
            match Prompt::from_file_with(&file, &options) {
                Ok(prompt) => prompts.push(prompt),
                // Every error of the file, not only the first.
                Err(error) => errors.extend(error.all()),
            }
        }
        match Library::from_prompts(prompts) {
            Ok(library) if errors.is_empty() => Ok(library),
            Ok(_) => Err(Errors(errors)),
            Err(Errors(more)) => {
                errors.extend(more);
                Err(Errors(errors))
            }
        }
    }

    /// A library of the given prompts; two prompts with one name are an error.
    pub fn from_prompts(prompts: impl IntoIterator<Item = Prompt>) -> Result<Library, Errors> {
        let mut library = Library::default();
        let mut errors = Vec::new();
        for prompt in prompts {
            if let Some(existing) = library.prompts.get(prompt.name()) {
                errors.push(
                    Error::new(
                        ErrorClass::Document,
                        format!(
                            "two prompts are named \"{}\": this file and {}; set `name:` in the front matter of one",
                            prompt.name(),
                            existing.origin()
                        ),
                    )
                    .with_file(prompt.origin())
                    .with_kind("duplicate-name"),
                );
                continue;
            }
            library.prompts.insert(prompt.name().to_string(), prompt);
        }
        if errors.is_empty() {
            Ok(library)
        } else {
            Err(Errors(errors))
        }
    }

    /// The prompt named `name`.
    pub fn get(&self, name: &str) -> Option<&Prompt> {
        self.prompts.get(name)
    }

    /// All prompts, by name.
    pub fn prompts(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.values()
    }

    /// Number of prompts.
    pub fn len(&self) -> usize {
        self.prompts.len()
    }

    /// True when the library holds no prompt.
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }
}

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
                || (crate::syntax::handlebars::sk::is_sk_prompt(&path.to_string_lossy())
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

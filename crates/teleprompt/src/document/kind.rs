//! The one answer to "what kind of file is this?": every part of the
//! library that meets a file name (a load, a library's folder walk, the
//! prompt tests' search for a prompt, a Go include search) asks here.
//!
//! A kind is told by the file's name; only two questions look inside the
//! file, and only at its head: whether a `.md`/`.prompt`/`.txt` file in a
//! folder opens with front matter, and whether a `.yaml` file is Semantic
//! Kernel's prompt YAML (a top-level `template_format:`) rather than data.

use std::io::Read;
use std::path::Path;

use crate::options::Syntax;

impl Syntax {
    /// The syntax named by a file's name or extension, if any. Some files
    /// are known by name: Hugging Face's `tokenizer_config.json` and
    /// `chat_template.jinja` (or `….chat_template.jinja`), Sortie's
    /// `WORKFLOW.md` (Go).
    pub fn from_path(path: &Path) -> Option<Syntax> {
        crate::document::kind::FileKind::syntax(path)
    }
}

/// Extensions of files that hold a prompt when they open with front matter.
pub(crate) const TEXT_EXTENSIONS: &[&str] = &["md", "prompt", "txt"];

/// How much of a `.yaml` file is read to tell Semantic Kernel's prompt
/// YAML from data.
const SNIFF_BYTES: u64 = 64 * 1024;

/// What a file is, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// A prompt-tests file (`NAME.tests.yaml`, `.tests.yml`).
    Tests,
    /// A Hugging Face `tokenizer_config.json`: JSON whose `chat_template`
    /// is the body and whose special tokens are defaults.
    TokenizerConfig,
    /// A `chat_template.jinja` (or `NAME.chat_template.jinja`): a chat
    /// template, with its `tokenizer_config.json` beside it.
    ChatTemplate,
    /// Sortie's (and Symphony's) `WORKFLOW.md`: front matter and a Go
    /// template body.
    SortieWorkflow,
    /// A Microsoft Prompty file (`.prompty`).
    Prompty,
    /// A Google Dotprompt file (`.prompt`).
    Dotprompt,
    /// A Dotprompt partial (`_NAME.prompt`): read by the prompts that use
    /// it, not a prompt of its own.
    DotpromptPartial,
    /// A `.yaml`/`.yml` file: Semantic Kernel's prompt YAML when loaded as
    /// a prompt, data otherwise (see [`FileKind::is_prompt_in_folder`]).
    Yaml,
    /// Any other `.json` file: data, or a tokenizer config when the host
    /// says the syntax is `chat-template`.
    Json,
    /// A prompt file of teleprompt's own: optional front matter, then a
    /// body whose syntax the extension may name (`.j2`, `.gotmpl`, …).
    Prompt,
}

impl FileKind {
    /// The kind of the file at `path`, by its name.
    pub(crate) fn of(path: &Path) -> FileKind {
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.ends_with(".tests.yaml") || name.ends_with(".tests.yml") {
            return FileKind::Tests;
        }
        if name == "tokenizer_config.json" {
            return FileKind::TokenizerConfig;
        }
        if name.ends_with("chat_template.jinja") {
            return FileKind::ChatTemplate;
        }
        if name == "workflow.md" {
            return FileKind::SortieWorkflow;
        }
        match extension(path).as_deref() {
            Some("prompty") => FileKind::Prompty,
            Some("prompt") if name.starts_with('_') => FileKind::DotpromptPartial,
            Some("prompt") => FileKind::Dotprompt,
            Some("yaml" | "yml") => FileKind::Yaml,
            Some("json") => FileKind::Json,
            _ => FileKind::Prompt,
        }
    }

    /// The syntax the file's name gives, if any: a chat template's, Go for
    /// Sortie's workflow, Jinja for Prompty (its default `template`), and
    /// the syntax an extension names (`.j2`/`.jinja`, `.django`/`.pongo2`,
    /// `.gotmpl`/`.tmpl`, `.hbs`/`.handlebars`).
    pub(crate) fn syntax(path: &Path) -> Option<Syntax> {
        match FileKind::of(path) {
            FileKind::TokenizerConfig | FileKind::ChatTemplate => Some(Syntax::ChatTemplate),
            FileKind::SortieWorkflow => Some(Syntax::Go),
            FileKind::Prompty => Some(Syntax::Jinja),
            _ => match extension(path)?.as_str() {
                "j2" | "jinja" | "jinja2" => Some(Syntax::Jinja),
                "django" | "pongo2" => Some(Syntax::Django),
                "gotmpl" | "tmpl" => Some(Syntax::Go),
                "hbs" | "handlebars" => Some(Syntax::Handlebars),
                _ => None,
            },
        }
    }

    /// Whether a file of this kind opens with front matter when it is a
    /// prompt: not a tokenizer config (JSON), not Semantic Kernel's YAML
    /// (the whole file is the configuration). The prompt-test runner's
    /// question, asked through `crate::unstable`.
    #[cfg_attr(not(feature = "unstable"), allow(dead_code))]
    pub(crate) fn has_front_matter(self) -> bool {
        !matches!(
            self,
            FileKind::TokenizerConfig | FileKind::Json | FileKind::Yaml | FileKind::Tests
        )
    }

    /// Whether the file at `path`, met in a folder, is a prompt: a file
    /// whose name names a syntax, a `.md`, `.prompt` or `.txt` file that
    /// opens with front matter, or Semantic Kernel's prompt YAML. Not a
    /// Dotprompt partial (the prompts that use it read it) nor a tests file.
    pub(crate) fn is_prompt_in_folder(path: &Path) -> bool {
        match FileKind::of(path) {
            FileKind::Tests | FileKind::DotpromptPartial | FileKind::Json => false,
            FileKind::Yaml => is_semantic_kernel_yaml(path),
            _ => {
                FileKind::syntax(path).is_some()
                    || (has_text_extension(path) && opens_with_front_matter(path))
            }
        }
    }

    /// Whether the file at `path` may be a prompt rather than data beside
    /// it: any file but JSON and YAML data and tests files. The
    /// prompt-test runner's question, asked through `crate::unstable`.
    #[cfg_attr(not(feature = "unstable"), allow(dead_code))]
    pub(crate) fn could_be_prompt(path: &Path) -> bool {
        match FileKind::of(path) {
            FileKind::Tests | FileKind::Json => false,
            FileKind::Yaml => is_semantic_kernel_yaml(path),
            _ => true,
        }
    }
}

/// The extension of `path`, lower-cased.
fn extension(path: &Path) -> Option<String> {
    Some(path.extension()?.to_str()?.to_ascii_lowercase())
}

/// Whether `path` has one of [`TEXT_EXTENSIONS`].
pub(crate) fn has_text_extension(path: &Path) -> bool {
    extension(path).is_some_and(|ext| TEXT_EXTENSIONS.contains(&ext.as_str()))
}

/// A YAML file with a top-level `template_format:` key: a Semantic
/// Kernel prompt, not data. Read only up to 64 KiB.
fn is_semantic_kernel_yaml(path: &Path) -> bool {
    let mut head = Vec::new();
    // Never blocks: a pipe or a device named like a prompt is not sniffed.
    let Ok(file) = crate::limits::open_regular(path) else {
        return false;
    };
    if file.take(SNIFF_BYTES).read_to_end(&mut head).is_err() {
        return false;
    }
    String::from_utf8_lossy(&head)
        .lines()
        .any(|line| line.starts_with("template_format:"))
}

/// Whether the file opens with a front-matter fence (after a BOM). An
/// unreadable file counts as one, so that loading it reports why.
fn opens_with_front_matter(path: &Path) -> bool {
    let mut head = [0u8; 8];
    // Never blocks: a pipe or a device counts as unreadable, and loading
    // it says why.
    let Ok(mut file) = crate::limits::open_regular(path) else {
        return true;
    };
    let read = file.read(&mut head).unwrap_or(0);
    let head = head.get(..read).unwrap_or_default();
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    head.starts_with(b"---\n") || head.starts_with(b"---\r\n") || head.starts_with(b"--- ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name() {
        for (name, kind, syntax) in [
            (
                "a/tokenizer_config.json",
                FileKind::TokenizerConfig,
                Some(Syntax::ChatTemplate),
            ),
            (
                "Tokenizer_Config.JSON",
                FileKind::TokenizerConfig,
                Some(Syntax::ChatTemplate),
            ),
            (
                "chat_template.jinja",
                FileKind::ChatTemplate,
                Some(Syntax::ChatTemplate),
            ),
            (
                "x.chat_template.jinja",
                FileKind::ChatTemplate,
                Some(Syntax::ChatTemplate),
            ),
            ("WORKFLOW.md", FileKind::SortieWorkflow, Some(Syntax::Go)),
            ("chat.prompty", FileKind::Prompty, Some(Syntax::Jinja)),
            ("support.prompt", FileKind::Dotprompt, None),
            ("_style.prompt", FileKind::DotpromptPartial, None),
            ("task.tests.yaml", FileKind::Tests, None),
            ("task.tests.yml", FileKind::Tests, None),
            ("skill.yaml", FileKind::Yaml, None),
            ("data.json", FileKind::Json, None),
            ("task.j2", FileKind::Prompt, Some(Syntax::Jinja)),
            ("task.jinja2", FileKind::Prompt, Some(Syntax::Jinja)),
            ("task.pongo2", FileKind::Prompt, Some(Syntax::Django)),
            ("task.tmpl", FileKind::Prompt, Some(Syntax::Go)),
            ("task.HBS", FileKind::Prompt, Some(Syntax::Handlebars)),
            ("task.md", FileKind::Prompt, None),
            ("README", FileKind::Prompt, None),
        ] {
            let path = Path::new(name);
            assert_eq!(FileKind::of(path), kind, "{name}");
            assert_eq!(FileKind::syntax(path), syntax, "{name}");
        }
    }

    #[test]
    fn front_matter_by_kind() {
        assert!(FileKind::Prompt.has_front_matter());
        assert!(FileKind::Dotprompt.has_front_matter());
        assert!(!FileKind::TokenizerConfig.has_front_matter());
        assert!(!FileKind::Yaml.has_front_matter());
    }
}

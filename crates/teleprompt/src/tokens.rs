//! Tokens: what a model sees of a render, counted by the model's own
//! tokenizer rather than guessed from characters.
//!
//! A prompt names its tokenizer in front matter (`tokenizer: o200k_base`,
//! or a `tokenizer.json` beside it; a chat template uses the one beside
//! it); [`crate::Rendered::tokens`] then counts every message of the
//! conversation and gives the ids. With the `tokens` feature: the OpenAI
//! encodings (`o200k_base`: GPT-4o, GPT-4.1, o-series; `cl100k_base`:
//! GPT-4, GPT-3.5) from the `bpe-openai` crate (vocabularies in the binary,
//! a worst case linear in the text), and Hugging Face `tokenizer.json`
//! files from the `tokenizers` crate (pure Rust); without it, naming one is
//! an error that says so.
//!
//! Text is encoded as ordinary text, with no special tokens added (as
//! `transformers` encodes a chat template's output): with an OpenAI
//! encoding a special token's spelling in the data (`<|endoftext|>`) is
//! the characters it is; a Hugging Face tokenizer matches the special
//! tokens it declares. A message's count is its content's: the few tokens
//! each chat format adds around a message are not included.

use std::fmt;

use serde::Serialize;

use crate::messages::{ContentPart, Entry, Role};

/// A tokenizer teleprompt can count with: an OpenAI encoding by name, or
/// a Hugging Face `tokenizer.json` (read and parsed when first used, then
/// kept).
#[derive(Clone)]
pub struct Tokenizer {
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    #[cfg(feature = "tokens")]
    O200k,
    #[cfg(feature = "tokens")]
    Cl100k,
    #[cfg(feature = "tokens")]
    HuggingFace(std::sync::Arc<HuggingFace>),
    /// Nothing can be made without the feature.
    #[cfg(not(feature = "tokens"))]
    #[allow(dead_code)]
    Unavailable(std::convert::Infallible),
}

/// A `tokenizer.json` file and, once read, its tokenizer.
#[cfg(feature = "tokens")]
struct HuggingFace {
    /// The file as named, relative to `root`.
    name: String,
    root: std::path::PathBuf,
    loaded: std::sync::OnceLock<Result<tokenizers::Tokenizer, String>>,
}

/// The most bytes a `tokenizer.json` may hold (the largest public ones,
/// Gemma's, are ~33 MB).
pub const MAX_TOKENIZER_BYTES: usize = 64 << 20;

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tokenizer({})", self.name())
    }
}

impl PartialEq for Tokenizer {
    fn eq(&self, other: &Tokenizer) -> bool {
        self.name() == other.name()
    }
}

impl Tokenizer {
    /// The names [`Tokenizer::named`] knows.
    pub const NAMES: &'static [&'static str] = &["o200k_base", "cl100k_base"];

    /// The tokenizer of that name: `o200k_base` or `cl100k_base`. An
    /// unknown name is an error listing the known ones (with the closest);
    /// so is any name in a build without the `tokens` feature.
    pub fn named(name: &str) -> Result<Tokenizer, String> {
        let known = Tokenizer::NAMES.join(", ");
        #[cfg(feature = "tokens")]
        match name {
            "o200k_base" => return Ok(Tokenizer { kind: Kind::O200k }),
            "cl100k_base" => return Ok(Tokenizer { kind: Kind::Cl100k }),
            _ => {}
        }
        #[cfg(not(feature = "tokens"))]
        if Tokenizer::NAMES.contains(&name) {
            return Err(without_feature(name));
        }
        let closest = crate::diagnostics::closest(name, Tokenizer::NAMES.iter().copied())
            .map(|close| format!(" (did you mean `{close}`?)"))
            .unwrap_or_default();
        Err(format!(
            "unknown tokenizer `{name}`{closest}: the tokenizers are {known}, or a Hugging Face tokenizer.json file"
        ))
    }

    /// A Hugging Face `tokenizer.json` at `name`, a path inside `root`
    /// (the include rules: no `..`, no absolute path, no link out of it).
    /// The file is read, within [`MAX_TOKENIZER_BYTES`], when the
    /// tokenizer is first used; a file that cannot be read or parsed is
    /// that use's error.
    pub fn from_file(root: &std::path::Path, name: &str) -> Result<Tokenizer, String> {
        #[cfg(feature = "tokens")]
        {
            crate::limits::inside_name(name)?;
            Ok(Tokenizer {
                kind: Kind::HuggingFace(std::sync::Arc::new(HuggingFace {
                    name: name.to_string(),
                    root: root.to_path_buf(),
                    loaded: std::sync::OnceLock::new(),
                })),
            })
        }
        #[cfg(not(feature = "tokens"))]
        {
            let _ = root;
            Err(without_feature(name))
        }
    }

    /// A name, or the path of a `tokenizer.json` (a value that ends in
    /// `.json`) anywhere the host chooses: what `--tokenizer` and Python's
    /// `tokenizer=` take.
    pub fn named_or_file(value: &str) -> Result<Tokenizer, String> {
        if !value.ends_with(".json") {
            return Tokenizer::named(value);
        }
        let path = std::path::Path::new(value);
        let folder = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => std::path::Path::new("."),
        };
        let file = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        Tokenizer::from_file(folder, &file)
    }

    /// A name or a `tokenizer.json` path as front matter writes it: a
    /// value that ends in `.json` is a file beside the prompt (`dir`,
    /// relative to the include root `root`).
    pub(crate) fn resolve(
        value: &str,
        root: Option<(&std::path::Path, &std::path::Path)>,
    ) -> Result<Tokenizer, String> {
        if !value.ends_with(".json") {
            return Tokenizer::named(value);
        }
        let Some((root, dir)) = root else {
            return Err(format!(
                "tokenizer `{value}` is a file, and this prompt has no folder to read it from"
            ));
        };
        let name = dir.join(value);
        Tokenizer::from_file(root, &name.to_string_lossy().replace('\\', "/"))
    }

    /// Its name: `o200k_base`, `cl100k_base`, or the `tokenizer.json` path.
    pub fn name(&self) -> &str {
        match &self.kind {
            #[cfg(feature = "tokens")]
            Kind::O200k => "o200k_base",
            #[cfg(feature = "tokens")]
            Kind::Cl100k => "cl100k_base",
            #[cfg(feature = "tokens")]
            Kind::HuggingFace(file) => &file.name,
            #[cfg(not(feature = "tokens"))]
            Kind::Unavailable(never) => match *never {},
        }
    }

    /// The token ids of `text`, as ordinary text (no special tokens
    /// added; a special token's spelling is matched only by a Hugging Face
    /// tokenizer that declares it, as `transformers` encodes a chat
    /// template's output). An error only for a `tokenizer.json` that
    /// cannot be read or parsed.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, String> {
        #[cfg(not(feature = "tokens"))]
        let _ = text;
        match &self.kind {
            #[cfg(feature = "tokens")]
            Kind::O200k => Ok(bpe_openai::o200k_base().encode(text)),
            #[cfg(feature = "tokens")]
            Kind::Cl100k => Ok(bpe_openai::cl100k_base().encode(text)),
            #[cfg(feature = "tokens")]
            Kind::HuggingFace(file) => {
                let tokenizer = file.tokenizer()?;
                tokenizer
                    .encode_fast(text, false)
                    .map(|encoding| encoding.get_ids().to_vec())
                    .map_err(|error| format!("{}: {error}", file.name))
            }
            #[cfg(not(feature = "tokens"))]
            Kind::Unavailable(never) => match *never {},
        }
    }

    /// How many tokens `text` is (what [`Tokenizer::encode`] gives).
    pub fn count(&self, text: &str) -> Result<usize, String> {
        match &self.kind {
            #[cfg(feature = "tokens")]
            Kind::O200k => Ok(bpe_openai::o200k_base().count(text)),
            #[cfg(feature = "tokens")]
            Kind::Cl100k => Ok(bpe_openai::cl100k_base().count(text)),
            #[allow(unreachable_patterns)]
            _ => self.encode(text).map(|ids| ids.len()),
        }
    }
}

#[cfg(feature = "tokens")]
impl HuggingFace {
    /// The tokenizer, read and parsed on first use.
    fn tokenizer(&self) -> Result<&tokenizers::Tokenizer, String> {
        self.loaded
            .get_or_init(|| {
                let (_, bytes) = crate::limits::read_inside(
                    &self.root,
                    &self.name,
                    MAX_TOKENIZER_BYTES,
                    crate::limits::Input::Data,
                )
                .map_err(|error| error.message().to_string())?;
                tokenizers::Tokenizer::from_bytes(&bytes).map_err(|error| {
                    format!(
                        "{} is not a Hugging Face tokenizer.json: {error}",
                        self.name
                    )
                })
            })
            .as_ref()
            .map_err(|message| format!("tokenizer {}: {message}", self.name))
    }
}

#[cfg(not(feature = "tokens"))]
fn without_feature(name: &str) -> String {
    format!("tokenizer `{name}` needs teleprompt built with its `tokens` feature")
}

/// The tokens of a render: each message of the conversation (the history
/// where it was placed), and the total.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Tokens {
    /// The tokenizer's name (or its `tokenizer.json` path).
    pub tokenizer: String,
    /// The tokens of every message, summed.
    pub total: usize,
    /// Each message, in order.
    pub messages: Vec<MessageTokens>,
}

/// The tokens of one message's content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MessageTokens {
    /// Who speaks.
    pub role: Role,
    /// Whether it is a message of the history (not one the template wrote).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub history: bool,
    /// How many tokens its text is.
    pub count: usize,
    /// The ids, in order: its text parts, one after another. Media parts
    /// and Dotprompt sections have none (a model counts an image its own
    /// way); a history message's non-text parts neither.
    pub ids: Vec<u32>,
}

impl Tokens {
    /// Counts `conversation` with `tokenizer`.
    pub(crate) fn of(tokenizer: &Tokenizer, conversation: &[Entry<'_>]) -> Result<Tokens, String> {
        let mut messages = Vec::with_capacity(conversation.len());
        for entry in conversation {
            let (role, history, texts) = match entry {
                Entry::Rendered(message) => (
                    message.role,
                    false,
                    message
                        .content
                        .iter()
                        .filter_map(|part| match part {
                            ContentPart::Text { text } => Some(text.as_str()),
                            _ => None,
                        })
                        .collect(),
                ),
                Entry::History(message) => {
                    (message.role, true, history_texts(message.content.as_ref()))
                }
            };
            let mut ids = Vec::new();
            for text in texts {
                ids.extend(tokenizer.encode(text)?);
            }
            messages.push(MessageTokens {
                role,
                history,
                count: ids.len(),
                ids,
            });
        }
        Ok(Tokens {
            tokenizer: tokenizer.name().to_string(),
            total: messages.iter().map(|message| message.count).sum(),
            messages,
        })
    }
}

/// The texts of a history message's content: the string, or the `text`
/// of each `{"type": "text"}` part.
fn history_texts(content: Option<&serde_json::Value>) -> Vec<&str> {
    use serde_json::Value;
    match content {
        Some(Value::String(text)) => vec![text.as_str()],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    }
}

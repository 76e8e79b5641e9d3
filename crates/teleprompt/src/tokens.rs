//! Tokens: what a model sees of a render, counted by the model's own
//! tokenizer rather than guessed from characters.
//!
//! A prompt names its tokenizer in front matter (`tokenizer: o200k_base`);
//! [`crate::Rendered::tokens`] then counts every message of the
//! conversation and gives the ids. The OpenAI encodings (`o200k_base`:
//! GPT-4o, GPT-4.1, o-series; `cl100k_base`: GPT-4, GPT-3.5) come with the
//! `tokens` feature (the `bpe-openai` crate: its vocabularies ship in the
//! binary, and its worst case is linear in the text); without it, naming
//! one is an error that says so.
//!
//! Text is encoded as ordinary text: a special token's spelling in the
//! data (`<|endoftext|>`) is counted as the characters it is, never as the
//! special token, as OpenAI's API counts a message's content. A message's
//! count is its content's: the few tokens each chat format adds around a
//! message are not included.

use std::fmt;

use serde::Serialize;

use crate::messages::{ContentPart, Entry, Role};

/// A tokenizer teleprompt can count with.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Tokenizer {
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    #[cfg(feature = "tokens")]
    O200k,
    #[cfg(feature = "tokens")]
    Cl100k,
}

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tokenizer({})", self.name())
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
            return Err(format!(
                "tokenizer `{name}` needs teleprompt built with its `tokens` feature"
            ));
        }
        let closest = crate::diagnostics::closest(name, Tokenizer::NAMES.iter().copied())
            .map(|close| format!(" (did you mean `{close}`?)"))
            .unwrap_or_default();
        Err(format!(
            "unknown tokenizer `{name}`{closest}: the tokenizers are {known}"
        ))
    }

    /// Its name, as [`Tokenizer::named`] takes it.
    pub fn name(&self) -> &'static str {
        match self.kind {
            #[cfg(feature = "tokens")]
            Kind::O200k => "o200k_base",
            #[cfg(feature = "tokens")]
            Kind::Cl100k => "cl100k_base",
        }
    }

    /// The token ids of `text`, as ordinary text.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        #[cfg(not(feature = "tokens"))]
        let _ = text;
        match self.kind {
            #[cfg(feature = "tokens")]
            Kind::O200k => bpe_openai::o200k_base().encode(text),
            #[cfg(feature = "tokens")]
            Kind::Cl100k => bpe_openai::cl100k_base().encode(text),
        }
    }

    /// How many tokens `text` is (what [`Tokenizer::encode`] gives,
    /// counted without keeping the ids).
    pub fn count(&self, text: &str) -> usize {
        #[cfg(not(feature = "tokens"))]
        let _ = text;
        match self.kind {
            #[cfg(feature = "tokens")]
            Kind::O200k => bpe_openai::o200k_base().count(text),
            #[cfg(feature = "tokens")]
            Kind::Cl100k => bpe_openai::cl100k_base().count(text),
        }
    }
}

/// The tokens of a render: each message of the conversation (the history
/// where it was placed), and the total.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Tokens {
    /// The tokenizer's name.
    pub tokenizer: &'static str,
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
    pub(crate) fn of(tokenizer: Tokenizer, conversation: &[Entry<'_>]) -> Tokens {
        let messages: Vec<MessageTokens> = conversation
            .iter()
            .map(|entry| {
                let (role, history, ids) = match entry {
                    Entry::Rendered(message) => {
                        let mut ids = Vec::new();
                        for part in &message.content {
                            if let ContentPart::Text { text } = part {
                                ids.extend(tokenizer.encode(text));
                            }
                        }
                        (message.role, false, ids)
                    }
                    Entry::History(message) => {
                        let mut ids = Vec::new();
                        for text in history_texts(message.content.as_ref()) {
                            ids.extend(tokenizer.encode(text));
                        }
                        (message.role, true, ids)
                    }
                };
                MessageTokens {
                    role,
                    history,
                    count: ids.len(),
                    ids,
                }
            })
            .collect();
        Tokens {
            tokenizer: tokenizer.name(),
            total: messages.iter().map(|message| message.count).sum(),
            messages,
        }
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

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
use std::ops::Range;

use serde::Serialize;

use crate::messages::{ContentPart, Entry, Role};

/// A tokenizer teleprompt can count with: an OpenAI encoding by name, or
/// a Hugging Face `tokenizer.json` (read and parsed when first used, then
/// kept).
#[derive(Clone)]
pub struct Tokenizer {
    kind: Kind,
    /// A stand-in for a model whose tokenizer is not public
    /// (`estimate:o200k_base`): its counts are flagged as estimates and
    /// it gives no ids.
    estimate: bool,
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
    loaded: std::sync::OnceLock<Result<std::sync::Arc<tokenizers::Tokenizer>, String>>,
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
    /// The names [`Tokenizer::named`] knows (and each as an estimate,
    /// `estimate:NAME`).
    pub const NAMES: &'static [&'static str] = &["o200k_base", "cl100k_base"];

    /// The tokenizer of that name: `o200k_base` or `cl100k_base`; or
    /// `estimate:o200k_base` (`estimate:cl100k_base`), that encoding
    /// standing in for a model whose tokenizer is not public (Claude's,
    /// Gemini's): counts flagged as estimates ([`Tokens::estimate`]), no
    /// ids. An unknown name is an error listing the known ones (with the
    /// closest; a model whose tokenizer is not public is told to name an
    /// estimate); so is any name in a build without the `tokens` feature.
    pub fn named(name: &str) -> Result<Tokenizer, String> {
        let known = Tokenizer::NAMES.join(", ");
        let (estimate, encoding) = match name.strip_prefix("estimate:") {
            Some(encoding) => (true, encoding),
            None => (false, name),
        };
        #[cfg(feature = "tokens")]
        match encoding {
            "o200k_base" => {
                return Ok(Tokenizer {
                    kind: Kind::O200k,
                    estimate,
                })
            }
            "cl100k_base" => {
                return Ok(Tokenizer {
                    kind: Kind::Cl100k,
                    estimate,
                })
            }
            _ => {}
        }
        #[cfg(not(feature = "tokens"))]
        if Tokenizer::NAMES.contains(&encoding) {
            let _ = estimate;
            return Err(without_feature(name));
        }
        let private = ["claude", "anthropic", "gemini", "google"]
            .iter()
            .any(|family| encoding.to_ascii_lowercase().contains(family));
        if private {
            return Err(format!(
                "tokenizer `{name}` is not public: count with a named estimate, such as `estimate:o200k_base` (flagged as an estimate in every count), or the provider's token-counting API"
            ));
        }
        let closest = crate::diagnostics::closest(encoding, Tokenizer::NAMES.iter().copied())
            .map(|close| format!(" (did you mean `{close}`?)"))
            .unwrap_or_default();
        Err(format!(
            "unknown tokenizer `{name}`{closest}: the tokenizers are {known}, each also as an estimate (`estimate:o200k_base`), or a Hugging Face tokenizer.json file"
        ))
    }

    /// Whether it stands in for another model's tokenizer
    /// (`estimate:NAME`): its counts are estimates, and it gives no ids.
    pub fn is_estimate(&self) -> bool {
        self.estimate
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
                estimate: false,
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

    /// Its name: `o200k_base`, `cl100k_base` (`estimate:…`), or the
    /// `tokenizer.json` path.
    pub fn name(&self) -> &str {
        match (&self.kind, self.estimate) {
            #[cfg(feature = "tokens")]
            (Kind::O200k, false) => "o200k_base",
            #[cfg(feature = "tokens")]
            (Kind::O200k, true) => "estimate:o200k_base",
            #[cfg(feature = "tokens")]
            (Kind::Cl100k, false) => "cl100k_base",
            #[cfg(feature = "tokens")]
            (Kind::Cl100k, true) => "estimate:cl100k_base",
            #[cfg(feature = "tokens")]
            (Kind::HuggingFace(file), _) => &file.name,
            #[cfg(not(feature = "tokens"))]
            (Kind::Unavailable(never), _) => match *never {},
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

    /// The length in bytes of the longest start of `text` that is at most
    /// `most` of its tokens: cut where a token starts (and on a character
    /// boundary).
    pub(crate) fn cut_at(&self, text: &str, most: usize) -> Result<usize, String> {
        let (ids, offsets) = self.encode_with_char_offsets(text)?;
        if ids.len() <= most {
            return Ok(text.len());
        }
        let first_left_out = offsets.get(most).map_or(0, |(start, _)| *start);
        Ok(text
            .char_indices()
            .nth(first_left_out)
            .map_or(text.len(), |(at, _)| at))
    }

    /// [`Tokenizer::encode`], with each token's place in `text` as
    /// character offsets (`start..end`, Python's string indexes, which
    /// `transformers`' `char_to_token` takes). An OpenAI encoding's token
    /// that ends inside a character holds that character.
    pub(crate) fn encode_with_char_offsets(&self, text: &str) -> Result<Placed, String> {
        #[cfg(not(feature = "tokens"))]
        let _ = text;
        match &self.kind {
            #[cfg(feature = "tokens")]
            Kind::HuggingFace(file) => {
                let tokenizer = file.tokenizer()?;
                let encoding = tokenizer
                    .encode_char_offsets(text, false)
                    .map_err(|error| format!("{}: {error}", file.name))?;
                Ok((encoding.get_ids().to_vec(), encoding.get_offsets().to_vec()))
            }
            #[cfg(feature = "tokens")]
            Kind::O200k | Kind::Cl100k => {
                let bpe = match &self.kind {
                    Kind::O200k => bpe_openai::o200k_base(),
                    _ => bpe_openai::cl100k_base(),
                };
                let ids = bpe.encode(text);
                let chars = CharIndex::new(text);
                let mut offsets = Vec::with_capacity(ids.len());
                let mut byte = 0;
                for &id in &ids {
                    let end = byte + bpe.bpe.token_len(id);
                    // Up to the character boundary at or after `end`.
                    let mut boundary = end.min(text.len());
                    while !text.is_char_boundary(boundary) {
                        boundary += 1;
                    }
                    offsets.push((chars.at(byte_floor(text, byte)), chars.at(boundary)));
                    byte = end;
                }
                Ok((ids, offsets))
            }
            #[cfg(not(feature = "tokens"))]
            Kind::Unavailable(never) => match *never {},
        }
    }

    /// The tokens a Hugging Face tokenizer puts before a text when asked
    /// to add its special tokens (a BOS, say), as they are spelled; none
    /// for an OpenAI encoding.
    pub(crate) fn added_at_start(&self) -> Result<Vec<String>, String> {
        match &self.kind {
            #[cfg(feature = "tokens")]
            Kind::HuggingFace(file) => {
                let tokenizer = file.tokenizer()?;
                let encode = |add| {
                    tokenizer
                        .encode_fast("x", add)
                        .map_err(|error| format!("{}: {error}", file.name))
                };
                let (with, without) = (encode(true)?, encode(false)?);
                let added = with.get_ids().len().saturating_sub(without.get_ids().len());
                let starts_alike = with.get_ids().get(added..) == Some(without.get_ids());
                Ok(match starts_alike {
                    true => with.get_tokens().get(..added).unwrap_or_default().to_vec(),
                    false => Vec::new(),
                })
            }
            #[allow(unreachable_patterns)]
            _ => Ok(Vec::new()),
        }
    }
}

/// Token ids, and where each is in the text (character offsets).
type Placed = (Vec<u32>, Vec<(usize, usize)>);

/// The character boundary at or before byte `at` of `text`.
#[cfg(feature = "tokens")]
fn byte_floor(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
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
                parsed(&bytes).map_err(|error| {
                    format!(
                        "{} is not a Hugging Face tokenizer.json: {error}",
                        self.name
                    )
                })
            })
            .as_deref()
            .map_err(|message| format!("tokenizer {}: {message}", self.name))
    }
}

/// A `tokenizer.json` parsed, shared by every prompt that reads the same
/// bytes while one of them holds it: a library of chat templates in model
/// folders, or of prompts that name one file, parses it once (a large one
/// is 30 MB and a few hundred milliseconds). Files are told apart by their
/// length and a keyed hash of their bytes (the process's random key: a
/// file cannot be made to pass for another).
#[cfg(feature = "tokens")]
fn parsed(bytes: &[u8]) -> Result<std::sync::Arc<tokenizers::Tokenizer>, String> {
    use std::hash::BuildHasher;
    use std::sync::{Arc, Mutex, OnceLock, Weak};
    type Shared = Mutex<std::collections::HashMap<(usize, u64), Weak<tokenizers::Tokenizer>>>;
    static SHARED: OnceLock<(std::collections::hash_map::RandomState, Shared)> = OnceLock::new();
    let (state, shared) = SHARED.get_or_init(Default::default);
    let key = (bytes.len(), state.hash_one(bytes));
    let kept = |shared: &Shared| {
        shared
            .lock()
            .ok()
            .and_then(|map| map.get(&key).and_then(Weak::upgrade))
    };
    if let Some(tokenizer) = kept(shared) {
        return Ok(tokenizer);
    }
    // Parsed outside the lock: two threads may parse the same file once
    // each; the second keeps the first's.
    let tokenizer = Arc::new(tokenizers::Tokenizer::from_bytes(bytes).map_err(|e| e.to_string())?);
    let Ok(mut map) = shared.lock() else {
        return Ok(tokenizer);
    };
    map.retain(|_, kept| kept.strong_count() > 0);
    match map.get(&key).and_then(Weak::upgrade) {
        Some(first) => Ok(first),
        None => {
            map.insert(key, Arc::downgrade(&tokenizer));
            Ok(tokenizer)
        }
    }
}

#[cfg(not(feature = "tokens"))]
fn without_feature(name: &str) -> String {
    format!("tokenizer `{name}` needs teleprompt built with its `tokens` feature")
}

/// The tokens of a render. A prompt's are per message of the
/// conversation (the history where it was placed); a chat template's
/// output is one sequence, as the model reads it: [`Tokens::ids`], and
/// [`Tokens::assistant_masks`] when the template has `{% generation %}`
/// blocks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Tokens {
    /// The tokenizer's name (or its `tokenizer.json` path).
    pub tokenizer: String,
    /// How many tokens the whole render is: its messages', summed.
    pub total: usize,
    /// Each message, in order (none for a chat template).
    pub messages: Vec<MessageTokens>,
    /// A chat template's output, encoded whole with no special tokens
    /// added: what `transformers`' `apply_chat_template(tokenize=True)`
    /// gives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<u32>>,
    /// For a chat template with `{% generation %}` blocks, one value per
    /// id: 1 where the token is the assistant's own words, else 0 —
    /// `transformers`' `assistant_masks`
    /// (`return_assistant_tokens_mask=True`), token for token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assistant_masks: Option<Vec<u8>>,
    /// Counted by a stand-in (`estimate:o200k_base`) for a model whose
    /// tokenizer is not public: the counts are estimates, and there are
    /// no ids (the stand-in's would mean nothing to the model).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub estimate: bool,
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
    /// The ids, in order: its text parts, one after another, then (a
    /// history message's) each tool call's name and arguments. Media parts
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
                    let mut texts = history_texts(message.content.as_ref());
                    for call in &message.tool_calls {
                        texts.push(call.function.name.as_str());
                        texts.push(call.function.arguments.as_str());
                    }
                    (message.role, true, texts)
                }
            };
            let (mut ids, mut count) = (Vec::new(), 0);
            for text in texts {
                match tokenizer.estimate {
                    true => count += tokenizer.count(text)?,
                    false => ids.extend(tokenizer.encode(text)?),
                }
            }
            messages.push(MessageTokens {
                role,
                history,
                count: count + ids.len(),
                ids,
            });
        }
        Ok(Tokens {
            tokenizer: tokenizer.name().to_string(),
            total: messages.iter().map(|message| message.count).sum(),
            messages,
            ids: None,
            assistant_masks: None,
            estimate: tokenizer.estimate,
        })
    }

    /// A chat template's output `text`, whole; with `generations` (the
    /// byte ranges its `{% generation %}` blocks printed), its assistant
    /// masks too.
    pub(crate) fn of_chat(
        tokenizer: &Tokenizer,
        text: &str,
        generations: Option<&[Range<usize>]>,
    ) -> Result<Tokens, String> {
        if tokenizer.estimate {
            return Ok(Tokens {
                tokenizer: tokenizer.name().to_string(),
                total: tokenizer.count(text)?,
                messages: Vec::new(),
                ids: None,
                assistant_masks: None,
                estimate: true,
            });
        }
        let (ids, masks) = match generations {
            None => (tokenizer.encode(text)?, None),
            Some(spans) => {
                let (ids, offsets) = tokenizer.encode_with_char_offsets(text)?;
                let masks = assistant_masks(text, spans, &offsets);
                (ids, Some(masks))
            }
        };
        Ok(Tokens {
            tokenizer: tokenizer.name().to_string(),
            total: ids.len(),
            messages: Vec::new(),
            ids: Some(ids),
            assistant_masks: masks,
            estimate: false,
        })
    }
}

/// A prompt's front matter `budget:`: the most tokens a turn may be, and
/// how its history may be cut (the sections say their own in the
/// template).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct BudgetSettings {
    /// `budget.total` (or `budget: N`): the most tokens a turn may be.
    pub total: u64,
    /// `budget.history.priority`: where the history comes in the order of
    /// cuts (parts of lower priority are cut first; 0 when not given, as
    /// for a section).
    pub history_priority: i64,
    /// `budget.history.max_tokens`: the most tokens the history may be,
    /// whatever the total.
    pub history_max_tokens: Option<u64>,
}

impl BudgetSettings {
    /// A budget of `total` tokens, the history at priority 0 with no
    /// limit of its own.
    pub fn new(total: u64) -> BudgetSettings {
        BudgetSettings {
            total,
            history_priority: 0,
            history_max_tokens: None,
        }
    }
}

/// What a prompt's `budget:` did to a turn: its limit, the tokens the
/// turn came to, each section's tokens, and what was cut to fit
/// ([`crate::Rendered::budget`]; `render --explain` prints it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Budget {
    /// The most tokens the turn may be (`budget.total`).
    pub total: usize,
    /// The tokens of the turn as rendered, after the cuts.
    pub tokens: usize,
    /// What was cut, in order (none when the turn fit as it was).
    pub cuts: Vec<Cut>,
    /// The template's budget sections, in the order they first appear,
    /// as rendered after the cuts.
    pub sections: Vec<SectionTokens>,
}

/// One budget section of a render, after the cuts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SectionTokens {
    /// Its name (every block with that name is one section).
    pub name: String,
    /// Its priority: lower is cut first.
    pub priority: i64,
    /// Its blocks (items) left, and how many it had.
    pub items: usize,
    /// How many blocks the template printed.
    pub printed: usize,
    /// Its tokens left (each block's own count, summed).
    pub tokens: usize,
}

/// One cut a budget made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Cut {
    /// What was cut: `history`, or a section's name.
    pub part: String,
    /// How many messages (of the history).
    pub messages: usize,
    /// How many of a section's blocks were dropped whole.
    pub items: usize,
    /// Whether a section's last block left was cut short (at a token
    /// boundary).
    pub truncated: bool,
    /// How many tokens were cut.
    pub tokens: usize,
    /// Why, and by which rule.
    pub reason: String,
}

/// Which tokens of a text the byte ranges `spans` cover, as `transformers`
/// tells it: for each span, the tokens from the one holding its first
/// character to the one holding its last (`char_to_token` on character
/// offsets: the first token whose offsets hold the character). Its edges
/// are kept too: a span whose first character no token holds ends the
/// marking (`break`), and one whose last character no token holds — or
/// the first token holds — marks to the end of the text.
fn assistant_masks(text: &str, spans: &[Range<usize>], offsets: &[(usize, usize)]) -> Vec<u8> {
    let mut masks = vec![0u8; offsets.len()];
    // Each span's first and last character, as character offsets.
    let mut wanted: Vec<usize> = Vec::with_capacity(spans.len() * 2);
    let chars = CharIndex::new(text);
    let queries: Vec<(usize, Option<usize>)> = spans
        .iter()
        .map(|span| {
            let start = chars.at(span.start);
            let last = chars.at(span.end).checked_sub(1);
            wanted.push(start);
            wanted.extend(last);
            (start, last)
        })
        .collect();
    let first_token = first_tokens_holding(wanted, offsets);
    for (start, last) in queries {
        let Some(&from) = first_token.get(&start) else {
            break;
        };
        let to = match last.and_then(|last| first_token.get(&last).copied()) {
            Some(last) if last != 0 => last + 1,
            _ => offsets.len(),
        };
        for mask in masks.get_mut(from..to).into_iter().flatten() {
            *mask = 1;
        }
    }
    masks
}

/// For each character offset of `wanted`, the first token whose offsets
/// hold it (`start <= at < end`), in one pass over the tokens.
fn first_tokens_holding(
    mut wanted: Vec<usize>,
    offsets: &[(usize, usize)],
) -> std::collections::HashMap<usize, usize> {
    wanted.sort_unstable();
    wanted.dedup();
    let mut found = std::collections::HashMap::with_capacity(wanted.len());
    for (token, &(start, end)) in offsets.iter().enumerate() {
        if found.len() == wanted.len() {
            break;
        }
        let from = wanted.partition_point(|&at| at < start);
        for &at in wanted.get(from..).unwrap_or_default() {
            if at >= end {
                break;
            }
            found.entry(at).or_insert(token);
        }
    }
    found
}

/// Byte offsets of a text to character offsets (Python's string indexes,
/// which `transformers` counts in).
struct CharIndex<'t> {
    text: &'t str,
    ascii: bool,
}

impl<'t> CharIndex<'t> {
    fn new(text: &'t str) -> CharIndex<'t> {
        CharIndex {
            text,
            ascii: text.is_ascii(),
        }
    }

    /// The character offset of byte `at` (a character boundary).
    fn at(&self, at: usize) -> usize {
        match self.ascii {
            true => at.min(self.text.len()),
            false => self
                .text
                .get(..at.min(self.text.len()))
                .map_or(0, |before| before.chars().count()),
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

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)] // one span is a list of spans
mod tests {
    use super::assistant_masks;

    /// Tokens as character offsets, for text "ab cd ef" (three words, the
    /// spaces in the following word's token).
    const WORDS: [(usize, usize); 3] = [(0, 2), (2, 5), (5, 8)];

    #[test]
    fn a_span_marks_the_tokens_of_its_first_to_its_last_character() {
        let text = "ab cd ef";
        assert_eq!(assistant_masks(text, &[3..5], &WORDS), [0, 1, 0]);
        // From inside a token to inside another: both whole.
        assert_eq!(assistant_masks(text, &[1..4], &WORDS), [1, 1, 0]);
        assert_eq!(assistant_masks(text, &[2..3, 6..8], &WORDS), [0, 1, 1]);
    }

    /// `transformers`' edges, kept: an end in the first token marks to the
    /// end of the text (it tests the token index for truth); a start that
    /// no token holds stops the marking, spans after it included.
    #[test]
    fn the_edges_are_transformers_own() {
        let text = "ab cd ef";
        assert_eq!(assistant_masks(text, &[0..2], &WORDS), [1, 1, 1]);
        // An empty span: its "last character" is the one before it.
        assert_eq!(assistant_masks(text, &[5..5], &WORDS), [0, 0, 0]);
        assert_eq!(assistant_masks(text, &[2..2], &WORDS), [0, 1, 1]);
        // A gap no token holds (text a normalizer dropped).
        let gapped = [(0, 2), (3, 5), (6, 8)];
        assert_eq!(assistant_masks(text, &[2..3, 6..8], &gapped), [0, 0, 0]);
        assert_eq!(assistant_masks(text, &[6..8, 2..3], &gapped), [0, 0, 1]);
        // A last character no token holds: to the end.
        assert_eq!(assistant_masks(text, &[3..6], &gapped), [0, 1, 1]);
    }

    /// One parse per file while any prompt holds it; another file (one
    /// byte differs) is its own.
    #[cfg(feature = "tokens")]
    #[test]
    fn a_tokenizer_json_is_parsed_once_while_it_is_held() {
        let words = r#"{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
          "normalizer": null, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null, "decoder": null,
          "model": {"type": "WordLevel", "vocab": {"<unk>": 0, "a": 1}, "unk_token": "<unk>"}}"#;
        let first = super::parsed(words.as_bytes()).unwrap();
        let again = super::parsed(words.as_bytes()).unwrap();
        assert!(std::sync::Arc::ptr_eq(&first, &again));
        let other = super::parsed(words.replace("\"a\"", "\"b\"").as_bytes()).unwrap();
        assert!(!std::sync::Arc::ptr_eq(&first, &other));
        assert!(super::parsed(b"{}").is_err());
    }

    /// Spans are byte ranges, offsets count characters (as Python does).
    #[test]
    fn spans_in_bytes_meet_offsets_in_characters() {
        let text = "é ü x"; // bytes: é 0..2, ' ' 2, ü 3..5, ' ' 5, x 6
        let tokens = [(0, 1), (1, 3), (3, 5)];
        assert_eq!(assistant_masks(text, &[3..5], &tokens), [0, 1, 0]);
        assert_eq!(assistant_masks(text, &[6..7], &tokens), [0, 0, 1]);
    }
}

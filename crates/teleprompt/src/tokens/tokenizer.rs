//! The tokenizers: OpenAI encodings by name, Hugging Face `tokenizer.json`
//! files, and the named estimates.

use std::fmt;

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
    /// Its added tokens a text can be encoded again from, found on first
    /// use ([`Tokenizer::restart_points`]).
    restarts: std::sync::Mutex<std::collections::HashMap<u32, bool>>,
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
    /// Gemini's): counts flagged as estimates ([`super::Tokens::estimate`]), no
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
                    restarts: Default::default(),
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

    /// For a `tokenizer.json`, the folder its name is relative to.
    pub(crate) fn file_root(&self) -> Option<&std::path::Path> {
        match &self.kind {
            #[cfg(feature = "tokens")]
            Kind::HuggingFace(file) => Some(&file.root),
            #[allow(unreachable_patterns)]
            _ => None,
        }
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

    /// Which of `ids` (a text's tokens) the text may be encoded again
    /// from, by index: the tokens before such a token and those from it on
    /// are encoded apart, so the tokens of the text from where it starts
    /// are the last ones of the whole text's. A
    /// Hugging Face tokenizer cuts a text at its added tokens before
    /// anything else (normalizer, pre-tokenizer and model work on each
    /// piece alone); such a token is one matched in the text as written
    /// (not normalized), whatever stands beside it (not `single_word`),
    /// and not inside another added token's spelling (a longer match could
    /// start before it). Never for an OpenAI encoding (its pieces are cut
    /// by a pattern that looks at the text around them), nor with a
    /// tokenizer that truncates. Each id is judged once.
    pub(crate) fn restart_points(&self, ids: &[u32]) -> Vec<usize> {
        match &self.kind {
            #[cfg(feature = "tokens")]
            Kind::HuggingFace(file) if !self.estimate => {
                let (Ok(tokenizer), Ok(mut known)) = (file.tokenizer(), file.restarts.lock())
                else {
                    return Vec::new();
                };
                let added = tokenizer.get_added_vocabulary().get_added_tokens_decoder();
                ids.iter()
                    .enumerate()
                    .filter(|(_, id)| added.contains_key(id))
                    .filter(|(_, &id)| {
                        *known
                            .entry(id)
                            .or_insert_with(|| restarts_at(tokenizer, id))
                    })
                    .map(|(index, _)| index)
                    .collect()
            }
            _ => {
                let _ = ids;
                Vec::new()
            }
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

/// Whether a text may be encoded again from added token `id` of
/// `tokenizer` ([`Tokenizer::restart_points`]).
#[cfg(feature = "tokens")]
fn restarts_at(tokenizer: &tokenizers::Tokenizer, id: u32) -> bool {
    if tokenizer.get_truncation().is_some() {
        return false;
    }
    let vocabulary = tokenizer.get_added_vocabulary();
    let Some(token) = vocabulary.get_added_tokens_decoder().get(&id) else {
        return false;
    };
    let matched = !token.normalized
        && !token.single_word
        && !token.content.trim().is_empty()
        && (!token.special || !tokenizer.get_encode_special_tokens());
    matched
        && !vocabulary
            .get_added_tokens_decoder()
            .iter()
            .any(|(&other, longer)| other != id && longer.content.contains(token.content.as_str()))
}

#[cfg(not(feature = "tokens"))]
fn without_feature(name: &str) -> String {
    format!("tokenizer `{name}` needs teleprompt built with its `tokens` feature")
}

/// Byte offsets of a text to character offsets (Python's string indexes,
/// which `transformers` counts in).
pub(super) struct CharIndex<'t> {
    text: &'t str,
    ascii: bool,
}

impl<'t> CharIndex<'t> {
    pub(super) fn new(text: &'t str) -> CharIndex<'t> {
        CharIndex {
            text,
            ascii: text.is_ascii(),
        }
    }

    /// The character offset of byte `at` (a character boundary).
    pub(super) fn at(&self, at: usize) -> usize {
        match self.ascii {
            true => at.min(self.text.len()),
            false => self
                .text
                .get(..at.min(self.text.len()))
                .map_or(0, |before| before.chars().count()),
        }
    }
}

#[cfg(test)]
mod tests {
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
}

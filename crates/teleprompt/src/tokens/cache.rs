//! Tokens turn after turn: the previous turn's are kept, so the next is
//! encoded only from where it parts from it.
//!
//! A chat template's output is one sequence. Where a turn's output starts
//! as the previous one's did (always, for an append-only template; up to
//! the rewritten turn for one that is not), its tokens are the previous
//! ones up to the last *restart point* (an added token such as
//! `<|im_start|>`, which a Hugging Face tokenizer cuts the text at before
//! anything else) inside the common start, then the text from there
//! encoded alone. Where there is no such point (an OpenAI encoding, a
//! template that rewrites its first bytes), the turn is encoded whole. A
//! prompt's messages are encoded one by one: a text the previous turn
//! encoded is not encoded again.

use std::collections::HashMap;
use std::ops::Range;

use super::counts::{assistant_masks, Encoded};
use super::{MessageTokens, Tokenizer, Tokens};
use crate::messages::Entry;

/// The previous turn's tokens, kept so the next turn's are encoded only
/// where it differs: a host that renders a conversation turn by turn
/// keeps one per conversation and counts each turn with
/// [`crate::Rendered::tokens_with`]. The result is always what
/// [`crate::Rendered::tokens`] gives; [`Tokens::kept`] says how many
/// tokens at the start are the previous turn's.
///
/// ```
/// use teleprompt::{tokens::TokenCache, LoadOptions, Prompt};
/// use serde_json::json;
///
/// # #[cfg(feature = "tokens")]
/// # {
/// let template = "---\ntokenizer: o200k_base\n---\n{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}";
/// let prompt = Prompt::from_source("chat_template.jinja", template, &LoadOptions::default())?;
/// let mut cache = TokenCache::new();
/// let mut messages = vec![json!({"role": "user", "content": "Hi"})];
/// let first = prompt.render(json!({"messages": messages}))?.tokens_with(&mut cache)?;
/// messages.push(json!({"role": "assistant", "content": "Hello!"}));
/// let second = prompt.render(json!({"messages": messages}))?.tokens_with(&mut cache)?;
/// assert_eq!(second.kept, first.total); // the first turn's tokens, all kept
/// # }
/// # Ok::<(), teleprompt::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct TokenCache {
    /// The tokenizer the kept tokens are of: another starts over.
    tokenizer: Option<String>,
    /// A chat template's previous output.
    chat: Option<Sequence>,
    /// A prompt's previous texts, each with its tokens.
    texts: HashMap<Box<str>, Kept>,
    /// A prompt's previous messages.
    messages: Vec<MessageTokens>,
}

impl std::fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCache")
            .field("tokenizer", &self.tokenizer)
            .field(
                "chat_tokens",
                &self.chat.as_ref().map(|chat| chat.ids.len()),
            )
            .field("texts", &self.texts.len())
            .finish()
    }
}

/// One chat-template output and its tokens.
#[derive(Clone, Debug)]
struct Sequence {
    text: String,
    ids: Vec<u32>,
    /// Each token's place in `text`, as character offsets.
    offsets: Vec<(usize, usize)>,
    /// The tokens the text may be encoded again from, in order.
    restarts: Vec<Restart>,
}

/// A token the text may be encoded again from: its index, and the byte
/// range of the text it stands for.
#[derive(Clone, Copy, Debug)]
struct Restart {
    token: usize,
    start: usize,
    end: usize,
}

/// A text's tokens, as the previous turn encoded them.
#[derive(Clone, Debug)]
enum Kept {
    Ids(Vec<u32>),
    Count(usize),
}

impl TokenCache {
    /// An empty cache: its first turn is encoded whole.
    pub fn new() -> TokenCache {
        TokenCache::default()
    }

    /// Forgets the kept tokens when they are another tokenizer's.
    fn use_tokenizer(&mut self, tokenizer: &Tokenizer) {
        if self.tokenizer.as_deref() != Some(tokenizer.name()) {
            *self = TokenCache {
                tokenizer: Some(tokenizer.name().to_string()),
                ..TokenCache::default()
            };
        }
    }

    /// A chat template's output `text` ([`Tokens::of_chat`]), from the
    /// previous output's tokens where it can.
    pub(crate) fn chat(
        &mut self,
        tokenizer: &Tokenizer,
        text: &str,
        generations: Option<&[Range<usize>]>,
    ) -> Result<Tokens, String> {
        if tokenizer.is_estimate() {
            return Tokens::of_chat(tokenizer, text, generations);
        }
        self.use_tokenizer(tokenizer);
        let previous = self.chat.take();
        let sequence = match previous
            .as_ref()
            .map(|previous| resume(tokenizer, previous, text))
            .transpose()?
            .flatten()
        {
            Some(sequence) => sequence,
            None => whole(tokenizer, text)?,
        };
        let kept = previous.map_or(0, |previous| common_start(&previous.ids, &sequence.ids));
        let masks = generations.map(|spans| assistant_masks(text, spans, &sequence.offsets));
        let tokens = Tokens {
            tokenizer: tokenizer.name().to_string(),
            total: sequence.ids.len(),
            messages: Vec::new(),
            ids: Some(sequence.ids.clone()),
            assistant_masks: masks,
            estimate: false,
            kept,
        };
        self.chat = Some(sequence);
        Ok(tokens)
    }

    /// A prompt's `conversation` ([`Tokens::of`]), each text the previous
    /// turn encoded taken from it.
    pub(crate) fn messages(
        &mut self,
        tokenizer: &Tokenizer,
        conversation: &[Entry<'_>],
    ) -> Result<Tokens, String> {
        self.use_tokenizer(tokenizer);
        let mut previous = std::mem::take(&mut self.texts);
        let texts = &mut self.texts;
        let mut tokens = Tokens::of_texts(tokenizer, conversation, &mut |text| {
            // This turn's texts, then the previous turn's (moved over, not
            // copied), then the tokenizer.
            let kept = match texts.get(text) {
                Some(kept) => kept.clone(),
                None => {
                    let (key, kept) = match previous.remove_entry(text) {
                        Some(entry) => entry,
                        None => (
                            Box::from(text),
                            match tokenizer.is_estimate() {
                                true => Kept::Count(tokenizer.count(text)?),
                                false => Kept::Ids(tokenizer.encode(text)?),
                            },
                        ),
                    };
                    texts.insert(key, kept.clone());
                    kept
                }
            };
            Ok(match kept {
                Kept::Ids(ids) => Encoded::Ids(ids),
                Kept::Count(count) => Encoded::Count(count),
            })
        })?;
        tokens.kept = kept_messages(&self.messages, &tokens.messages);
        self.messages = tokens.messages.clone();
        Ok(tokens)
    }
}

/// The tokens `now` starts with as `before` did: the leading messages
/// that did not change, then the ids the first that did starts with (of
/// the same role) — what a provider's prefix cache keeps.
pub(crate) fn kept_messages(before: &[MessageTokens], now: &[MessageTokens]) -> usize {
    let mut kept = 0;
    for (was, is) in before.iter().zip(now) {
        if was == is {
            kept += is.count;
            continue;
        }
        if was.role == is.role && was.history == is.history {
            kept += common_start(&was.ids, &is.ids);
        }
        break;
    }
    kept
}

/// `text` encoded whole.
fn whole(tokenizer: &Tokenizer, text: &str) -> Result<Sequence, String> {
    let (ids, offsets) = tokenizer.encode_with_char_offsets(text)?;
    let restarts = restarts(tokenizer, text, &ids, &offsets, 0);
    Ok(Sequence {
        text: text.to_string(),
        ids,
        offsets,
        restarts,
    })
}

/// `text` encoded from the last restart point of `previous` inside the
/// start the two share; `None` when there is none, or when the text from
/// there does not begin with that token again (then it is encoded whole).
fn resume(
    tokenizer: &Tokenizer,
    previous: &Sequence,
    text: &str,
) -> Result<Option<Sequence>, String> {
    let shared = common_start(previous.text.as_bytes(), text.as_bytes());
    let Some(restart) = previous
        .restarts
        .iter()
        .rev()
        .find(|restart| restart.end <= shared)
        .copied()
    else {
        return Ok(None);
    };
    let (Some(tail), Some(&first), Some(&(chars_before, _))) = (
        text.get(restart.start..),
        previous.ids.get(restart.token),
        previous.offsets.get(restart.token),
    ) else {
        return Ok(None);
    };
    let (tail_ids, tail_offsets) = tokenizer.encode_with_char_offsets(tail)?;
    if tail_ids.first() != Some(&first) {
        return Ok(None);
    }
    let tail_restarts = restarts(tokenizer, tail, &tail_ids, &tail_offsets, restart.start);
    let mut ids = previous
        .ids
        .get(..restart.token)
        .unwrap_or_default()
        .to_vec();
    let mut offsets = previous
        .offsets
        .get(..restart.token)
        .unwrap_or_default()
        .to_vec();
    let mut restarts: Vec<Restart> = previous
        .restarts
        .iter()
        .take_while(|kept| kept.token < restart.token)
        .copied()
        .collect();
    restarts.extend(tail_restarts.into_iter().map(|tail| Restart {
        token: tail.token + restart.token,
        ..tail
    }));
    ids.extend_from_slice(&tail_ids);
    offsets.extend(
        tail_offsets
            .iter()
            .map(|&(start, end)| (start + chars_before, end + chars_before)),
    );
    Ok(Some(Sequence {
        text: text.to_string(),
        ids,
        offsets,
        restarts,
    }))
}

/// The restart points of `text`'s tokens, with their byte ranges (plus
/// `shift`, where `text` starts in the whole output).
fn restarts(
    tokenizer: &Tokenizer,
    text: &str,
    ids: &[u32],
    offsets: &[(usize, usize)],
    shift: usize,
) -> Vec<Restart> {
    let points = tokenizer.restart_points(ids);
    if points.is_empty() {
        return Vec::new();
    }
    let bytes = ByteIndex::new(text);
    points
        .into_iter()
        .filter_map(|token| {
            let &(start, end) = offsets.get(token)?;
            Some(Restart {
                token,
                start: bytes.at(start)? + shift,
                end: bytes.at(end)? + shift,
            })
        })
        .collect()
}

/// Character offsets of a text to byte offsets.
struct ByteIndex {
    /// The byte offset of each character, then the text's length; empty
    /// for ASCII text (where the two are one).
    bytes: Vec<usize>,
    len: usize,
}

impl ByteIndex {
    fn new(text: &str) -> ByteIndex {
        let bytes = match text.is_ascii() {
            true => Vec::new(),
            false => text
                .char_indices()
                .map(|(at, _)| at)
                .chain([text.len()])
                .collect(),
        };
        ByteIndex {
            bytes,
            len: text.len(),
        }
    }

    fn at(&self, chars: usize) -> Option<usize> {
        match self.bytes.is_empty() {
            true => (chars <= self.len).then_some(chars),
            false => self.bytes.get(chars).copied(),
        }
    }
}

/// How many items at the start of `a` and `b` are equal.
fn common_start<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    // Compared in blocks first: equal slices compare as memory.
    const BLOCK: usize = 256;
    let mut at = 0;
    while let (Some(x), Some(y)) = (a.get(at..at + BLOCK), b.get(at..at + BLOCK)) {
        if x != y {
            break;
        }
        at += BLOCK;
    }
    at + a
        .get(at..)
        .unwrap_or_default()
        .iter()
        .zip(b.get(at..).unwrap_or_default())
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::{common_start, ByteIndex};

    #[test]
    fn the_common_start_is_found_across_blocks() {
        let a: Vec<u32> = (0..1000).collect();
        let mut b = a.clone();
        assert_eq!(common_start(&a, &b), 1000);
        b[700] = 0;
        assert_eq!(common_start(&a, &b), 700);
        assert_eq!(common_start(&a[..10], &b), 10);
        assert_eq!(common_start::<u32>(&[], &b), 0);
    }

    #[test]
    fn characters_become_bytes() {
        let ascii = ByteIndex::new("abc");
        assert_eq!(
            (ascii.at(0), ascii.at(3), ascii.at(4)),
            (Some(0), Some(3), None)
        );
        let text = ByteIndex::new("é<x>ü");
        assert_eq!(
            (text.at(1), text.at(4), text.at(5)),
            (Some(2), Some(5), Some(7))
        );
        assert_eq!(text.at(6), None);
    }
}

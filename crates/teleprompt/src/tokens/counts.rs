//! A render's tokens: per message of a prompt's conversation, or one
//! sequence for a chat template, with its assistant masks.

use std::ops::Range;

use serde::Serialize;

use super::tokenizer::CharIndex;
use super::Tokenizer;
use crate::messages::{ContentPart, Entry, Role};

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
    /// With a [`super::TokenCache`], how many tokens at the start are the
    /// previous turn's as they were — what a provider's or server's prefix
    /// cache keeps: a chat template's first `kept` ids (a server that holds
    /// them is sent `ids[kept..]`); a prompt's leading messages that did
    /// not change (their counts, summed), then the ids the first one that
    /// did starts with. 0 without one.
    #[serde(skip_serializing_if = "is_zero")]
    pub kept: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
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

/// One text's tokens: its ids, or (an estimate's) its count alone.
pub(super) enum Encoded {
    Ids(Vec<u32>),
    Count(usize),
}

impl Tokens {
    /// Counts `conversation` with `tokenizer`.
    pub(crate) fn of(tokenizer: &Tokenizer, conversation: &[Entry<'_>]) -> Result<Tokens, String> {
        Tokens::of_texts(
            tokenizer,
            conversation,
            &mut |text| match tokenizer.is_estimate() {
                true => Ok(Encoded::Count(tokenizer.count(text)?)),
                false => Ok(Encoded::Ids(tokenizer.encode(text)?)),
            },
        )
    }

    /// Counts `conversation` with `tokenizer`, each text by `encode`.
    pub(super) fn of_texts(
        tokenizer: &Tokenizer,
        conversation: &[Entry<'_>],
        encode: &mut dyn FnMut(&str) -> Result<Encoded, String>,
    ) -> Result<Tokens, String> {
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
                match encode(text)? {
                    Encoded::Count(more) => count += more,
                    Encoded::Ids(more) => ids.extend(more),
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
            estimate: tokenizer.is_estimate(),
            kept: 0,
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
        if tokenizer.is_estimate() {
            return Ok(Tokens {
                tokenizer: tokenizer.name().to_string(),
                total: tokenizer.count(text)?,
                messages: Vec::new(),
                ids: None,
                assistant_masks: None,
                estimate: true,
                kept: 0,
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
            kept: 0,
        })
    }
}

/// Which tokens of a text the byte ranges `spans` cover, as `transformers`
/// tells it: for each span, the tokens from the one holding its first
/// character to the one holding its last (`char_to_token` on character
/// offsets: the first token whose offsets hold the character). Its edges
/// are kept too: a span whose first character no token holds ends the
/// marking (`break`), and one whose last character no token holds — or
/// the first token holds — marks to the end of the text.
pub(super) fn assistant_masks(
    text: &str,
    spans: &[Range<usize>],
    offsets: &[(usize, usize)],
) -> Vec<u8> {
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

    /// Spans are byte ranges, offsets count characters (as Python does).
    #[test]
    fn spans_in_bytes_meet_offsets_in_characters() {
        let text = "é ü x"; // bytes: é 0..2, ' ' 2, ü 3..5, ' ' 5, x 6
        let tokens = [(0, 1), (1, 3), (3, 5)];
        assert_eq!(assistant_masks(text, &[3..5], &tokens), [0, 1, 0]);
        assert_eq!(assistant_masks(text, &[6..7], &tokens), [0, 0, 1]);
    }
}

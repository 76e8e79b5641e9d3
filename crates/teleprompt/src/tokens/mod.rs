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

mod budget;
mod cache;
mod counts;
mod tokenizer;

pub use budget::{Budget, BudgetSettings, Cut, SectionTokens};
pub use cache::TokenCache;
pub use counts::{MessageTokens, Tokens};
pub use tokenizer::{Tokenizer, MAX_TOKENIZER_BYTES};

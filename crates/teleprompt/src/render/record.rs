//! A [`Rendered`] as data, and back: what its `Serialize` writes and its
//! `Deserialize` reads, so that a render's result can travel to another
//! process (Python's `pickle`, a job queue) and answer there as it does
//! here.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::rendered::Rendered;
use super::source_map::Lazy;
use crate::messages::{History, HistoryMessage, Item, Role, SourceMap};
use crate::tokens::{Budget, Tokenizer};

/// The tokenizer by name; a `tokenizer.json` also by the folder its name
/// is relative to.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenizerRecord {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    root: Option<PathBuf>,
}

#[derive(Serialize)]
struct RecordOut<'a> {
    text: &'a str,
    items: &'a [Item],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    generations: &'a [Range<usize>],
    history: &'a History,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    warnings: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    tokenizer: Option<TokenizerRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    chat_template: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    budget: Option<&'a Budget>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_map: Option<&'a SourceMap>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_key: Option<&'a str>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    text: String,
    items: Vec<Item>,
    #[serde(default)]
    generations: Vec<Range<usize>>,
    #[serde(default)]
    history: Vec<HistoryMessage>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    tokenizer: Option<TokenizerRecord>,
    #[serde(default)]
    chat_template: Option<bool>,
    #[serde(default)]
    budget: Option<Budget>,
    #[serde(default)]
    source_map: Option<SourceMap>,
    #[serde(default)]
    cache_key: Option<String>,
}

/// Serialized as a JSON object: the `text`, the `items` (the messages the
/// template wrote, and where the history and a cache breakpoint after it
/// went), the `generations` spans, the `history`, the `warnings`, the
/// `tokenizer` (by name, a `tokenizer.json` also by its folder), whether
/// it was a `chat_template` render, the `budget`, the `source_map` (built
/// now, when the render recorded one) and the `cache_key`. Deserializing
/// it gives a result with the same text, messages, output shapes, tokens,
/// budget, source map and stable prefixes. Not kept: the error of a
/// render that recovered ([`Rendered::recovered_error`]), which a host
/// logs where the render ran. This is a record for rebuilding the result,
/// not a request body: for one, use [`Rendered::to_format`].
///
/// ```
/// use teleprompt::{LoadOptions, OutputFormat, Prompt, Rendered};
/// use serde_json::json;
///
/// let prompt = Prompt::from_source(
///     "greet.j2",
///     "{{ role('system') }}Be brief.{{ role('user') }}Hi, {{ name }}!",
///     &LoadOptions::default(),
/// )?;
/// let rendered = prompt.render(json!({"name": "Ada"}))?;
/// let record = serde_json::to_string(&rendered).unwrap();
/// let again: Rendered = serde_json::from_str(&record).unwrap();
/// assert_eq!(again.text(), rendered.text());
/// assert_eq!(again.to_format(OutputFormat::OpenAi)?, rendered.to_format(OutputFormat::OpenAi)?);
/// # Ok::<(), teleprompt::Error>(())
/// ```
impl Serialize for Rendered {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let source_map = self.source_map();
        let tokenizer = self.tokenizer.as_ref().map(|tokenizer| TokenizerRecord {
            name: tokenizer.name().to_string(),
            root: tokenizer.file_root().map(PathBuf::from),
        });
        RecordOut {
            text: &self.text,
            items: self.items(),
            generations: &self.generations,
            history: &self.history,
            warnings: &self.warnings,
            tokenizer,
            chat_template: self.chat_template,
            budget: self.budget.as_ref(),
            source_map,
            cache_key: self.cache_key.as_deref(),
        }
        .serialize(serializer)
    }
}

/// Reads what [`Rendered`]'s `Serialize` writes. A generation span that is
/// not a range of the text, a tokenizer that is unknown or whose name is
/// not a file inside its folder, a malformed message or an unknown field
/// are errors.
impl<'de> Deserialize<'de> for Rendered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Rendered, D::Error> {
        let record = Record::deserialize(deserializer)?;
        record.rebuild().map_err(serde::de::Error::custom)
    }
}

impl Record {
    fn rebuild(self) -> Result<Rendered, String> {
        let text = self.text;
        for span in &self.generations {
            let inside = span.start <= span.end
                && text.is_char_boundary(span.start)
                && text.is_char_boundary(span.end);
            if !inside {
                return Err(format!(
                    "generation span {}..{} is not a range of the text ({} bytes)",
                    span.start,
                    span.end,
                    text.len()
                ));
            }
        }
        let tokenizer = self
            .tokenizer
            .map(|record| match record.root {
                Some(root) => Tokenizer::from_file(&root, &record.name),
                None => Tokenizer::named(&record.name),
            })
            .transpose()
            .map_err(|message| format!("tokenizer: {message}"))?;
        Ok(Rendered {
            text,
            items: OnceLock::from(self.items),
            // Only read to make the items, which are given.
            default_role: Role::User,
            generations: self.generations,
            history: History::from(self.history),
            warnings: self.warnings,
            recovered: None,
            tokenizer,
            chat_template: self.chat_template,
            budget: self.budget,
            printed: None,
            source_map: self.source_map.map(|map| Arc::new(Lazy::ready(map))),
            cache_key: self.cache_key.map(Arc::from),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::messages::OutputFormat;
    use crate::{LoadOptions, Prompt, PromptContext, RenderOptions};

    use super::*;

    #[test]
    fn a_deserialized_result_answers_as_the_original() {
        // With the `tokens` feature, the tokens are compared too.
        let tokens = cfg!(feature = "tokens");
        let front = if tokens {
            "---\ntokenizer: o200k_base\n---\n"
        } else {
            ""
        };
        let body = "{{ role('system') }}Turn {{ run.turn_number }}.\
             {{ cache_breakpoint() }}{{ history() }}{{ role('user') }}{{ question }}";
        let prompt =
            Prompt::from_source("t.j2", &format!("{front}{body}"), &LoadOptions::default())
                .unwrap();
        let history: Vec<HistoryMessage> =
            serde_json::from_value(json!([{"role": "user", "content": "Hi"}])).unwrap();
        let context = PromptContext::new()
            .data(json!({"question": "Why?"}))
            .unwrap()
            .with_history(history);
        let options = RenderOptions::new().with_source_map(true);
        let first = prompt
            .render_turn_with(&context.clone().turn(1), &options)
            .unwrap();
        let second = prompt.render_turn_with(&context.turn(2), &options).unwrap();
        let copy: Rendered = serde_json::from_str(&serde_json::to_string(&first).unwrap()).unwrap();
        assert_eq!(copy.text(), first.text());
        let formats = [
            OutputFormat::Messages,
            OutputFormat::OpenAi,
            OutputFormat::Anthropic,
            OutputFormat::Bedrock,
            OutputFormat::Tokens,
        ];
        for format in formats
            .into_iter()
            .filter(|format| tokens || *format != OutputFormat::Tokens)
        {
            assert_eq!(
                copy.to_format(format).unwrap(),
                first.to_format(format).unwrap()
            );
        }
        assert_eq!(copy.source_map(), first.source_map());
        assert!(copy.source_map().is_some());
        assert_eq!(second.stable_prefix(&copy), second.stable_prefix(&first));
        assert_eq!(copy.stable_prefix(&second), first.stable_prefix(&second));
    }

    #[test]
    fn spans_outside_the_text_and_unknown_tokenizers_are_errors() {
        let base = json!({"text": "é", "items": []});
        let with = |key: &str, value: serde_json::Value| {
            let mut record = base.clone();
            record[key] = value;
            serde_json::from_value::<Rendered>(record)
                .err()
                .map(|error| error.to_string())
                .unwrap_or_default()
        };
        assert!(with("generations", json!([{"start": 0, "end": 1}]))
            .contains("generation span 0..1 is not a range of the text (2 bytes)"));
        assert!(with("generations", json!([{"start": 2, "end": 9}]))
            .contains("generation span 2..9 is not a range of the text"));
        assert!(with("tokenizer", json!({"name": "o300k_base"})).contains("unknown tokenizer"));
        assert!(
            with("tokenizer", json!({"name": "../up.json", "root": "/tmp"}))
                .starts_with("tokenizer:")
        );
        let fine: Rendered = serde_json::from_value(base).unwrap();
        assert_eq!(fine.text(), "é");
        assert_eq!(fine.messages().count(), 0);
    }
}

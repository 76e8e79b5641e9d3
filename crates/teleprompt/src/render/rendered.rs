//! The result of a render: its text, and the messages the template
//! wrote, made on first use when the render wrote no role marker.

use std::sync::{Arc, OnceLock};

use crate::diagnostics::{Error, ErrorClass};
use crate::messages::{
    assemble, assemble_marked, shape_marked, ContentPart, Entry, History, Item, Message,
    OutputFormat, Role, Split,
};

/// The result of a render: the text, and the messages the template wrote.
///
/// It serializes (serde) as a record of what it holds, which deserializes
/// to a result that answers the same (see its `Serialize` impl).
#[derive(Clone, Debug)]
pub struct Rendered {
    pub(super) text: String,
    /// The messages, in order; made from `text` on first use when the
    /// render wrote no marker (see [`RenderOutput`]).
    pub(super) items: OnceLock<Vec<Item>>,
    /// The role of text outside any message marker.
    pub(super) default_role: Role,
    pub(super) generations: Vec<std::ops::Range<usize>>,
    pub(super) history: History,
    pub(super) warnings: Vec<String>,
    pub(super) recovered: Option<Error>,
    /// The prompt's tokenizer, for [`Rendered::tokens`].
    pub(super) tokenizer: Option<crate::tokens::Tokenizer>,
    /// A chat template's render: its text is one token sequence. With
    /// `Some(true)`, the template has `{% generation %}` blocks, so its
    /// tokens carry assistant masks.
    pub(super) chat_template: Option<bool>,
    /// What the prompt's `budget:` did to this turn.
    pub(super) budget: Option<crate::tokens::Budget>,
    /// The output as printed, while a budget may still cut its sections.
    pub(super) printed: Option<Arc<super::Printed>>,
    /// Where each byte came from, when the render was asked for it.
    pub(super) source_map: Option<Arc<super::source_map::Lazy>>,
    /// Front matter `cache.key`: the OpenAI shape's `prompt_cache_key`.
    pub(super) cache_key: Option<Arc<str>>,
}

impl Rendered {
    /// The messages and the history placeholder, in order.
    pub(super) fn items(&self) -> &[Item] {
        self.items
            .get_or_init(|| plain_items(&self.text, self.default_role))
    }

    /// The rendered text, without role markers.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes the rendered text.
    pub fn into_text(self) -> String {
        self.text
    }

    /// Byte ranges of [`Rendered::text`] printed inside a chat template's
    /// `{% generation %}` blocks: the assistant's own words, which
    /// `transformers` marks with `return_assistant_tokens_mask`.
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt};
    /// use serde_json::json;
    ///
    /// let template = "{% for m in messages %}{{ m.role }}: \
    ///     {% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}\
    ///     {% else %}{{ m.content }}{% endif %}{{ '\\n' }}{% endfor %}";
    /// let prompt = Prompt::from_source("chat_template.jinja", template, &LoadOptions::default())?;
    /// let rendered = prompt.render(json!({"messages": [
    ///     {"role": "user", "content": "Hi"},
    ///     {"role": "assistant", "content": "Hello!"},
    /// ]}))?;
    /// assert_eq!(rendered.text(), "user: Hi\nassistant: Hello!\n");
    /// let span = rendered.generation_spans()[0].clone();
    /// assert_eq!(&rendered.text()[span], "Hello!");
    /// # Ok::<(), teleprompt::Error>(())
    /// ```
    pub fn generation_spans(&self) -> &[std::ops::Range<usize>] {
        &self.generations
    }

    /// The messages the template wrote, in order (without the history).
    /// Text before the first `role` call belongs to the prompt's
    /// `default_role`; whitespace-only messages are dropped.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.items().iter().filter_map(|item| match item {
            Item::Message(message) => Some(message),
            Item::History | Item::CacheBreakpoint => None,
        })
    }

    /// The whole conversation to send: the rendered messages, with the
    /// history where the template placed it, or after them.
    pub fn conversation(&self) -> Vec<Entry<'_>> {
        assemble(self.items(), &self.history)
    }

    /// The result in an output shape: `text`, teleprompt's `messages`,
    /// OpenAI chat (with `prompt_cache_key` when the front matter sets
    /// `cache.key`), Anthropic (system lifted to the top), Bedrock, tokens.
    pub fn to_format(&self, format: OutputFormat) -> Result<serde_json::Value, Error> {
        if format == OutputFormat::Tokens {
            return self
                .tokens()
                .map(|tokens| serde_json::to_value(tokens).unwrap_or(serde_json::Value::Null));
        }
        let (entries, marks) = assemble_marked(self.items(), &self.history);
        let mut shaped = shape_marked(format, &self.text, &entries, &marks)
            .map_err(|error| Error::new(ErrorClass::Render, error.to_string()))?;
        if let (OutputFormat::OpenAi, Some(key), serde_json::Value::Object(body)) =
            (format, &self.cache_key, &mut shaped)
        {
            body.insert("prompt_cache_key".into(), serde_json::Value::from(&**key));
        }
        Ok(shaped)
    }

    /// The tokens of each message of the conversation (the history where
    /// it was placed) and their total, by the prompt's tokenizer (front
    /// matter `tokenizer:`, or [`crate::LoadOptions::with_tokenizer`]).
    /// An `input` error when the prompt has none.
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt};
    /// use serde_json::json;
    ///
    /// # #[cfg(feature = "tokens")]
    /// # {
    /// let prompt = Prompt::from_source(
    ///     "greet.j2",
    ///     "---\ntokenizer: o200k_base\n---\n{{ role(\"system\") }}Be brief.{{ role(\"user\") }}Hello, {{ name }}!",
    ///     &LoadOptions::default(),
    /// )?;
    /// let tokens = prompt.render(json!({"name": "world"}))?.tokens()?;
    /// assert_eq!(tokens.tokenizer, "o200k_base");
    /// assert_eq!(tokens.messages[1].ids, [13225, 11, 2375, 0]);
    /// assert_eq!(tokens.total, tokens.messages[0].count + 4);
    /// # }
    /// # Ok::<(), teleprompt::Error>(())
    /// ```
    pub fn tokens(&self) -> Result<crate::tokens::Tokens, Error> {
        self.count_tokens(None)
    }

    /// [`Rendered::tokens`], turn after turn: `cache` holds the previous
    /// turn's tokens, and only what this turn changed is encoded — for an
    /// append-only chat template, the new turn's text alone (see
    /// [`crate::tokens::TokenCache`]). The tokens are the same as
    /// [`Rendered::tokens`] gives; [`crate::tokens::Tokens::kept`] says
    /// how many at the start are the previous turn's.
    pub fn tokens_with(
        &self,
        cache: &mut crate::tokens::TokenCache,
    ) -> Result<crate::tokens::Tokens, Error> {
        self.count_tokens(Some(cache))
    }

    fn count_tokens(
        &self,
        cache: Option<&mut crate::tokens::TokenCache>,
    ) -> Result<crate::tokens::Tokens, Error> {
        let Some(tokenizer) = &self.tokenizer else {
            return Err(Error::new(
                ErrorClass::Input,
                "the prompt names no tokenizer to count its tokens with",
            )
            .with_suggestion(Some(format!(
                "add `tokenizer: o200k_base` to its front matter (the tokenizers are {}), or pass --tokenizer",
                crate::tokens::Tokenizer::NAMES.join(", ")
            ))));
        };
        let generations = |blocks: bool| blocks.then_some(self.generations.as_slice());
        match (self.chat_template, cache) {
            (Some(blocks), None) => {
                crate::tokens::Tokens::of_chat(tokenizer, &self.text, generations(blocks))
            }
            (Some(blocks), Some(cache)) => cache.chat(tokenizer, &self.text, generations(blocks)),
            (None, None) => crate::tokens::Tokens::of(tokenizer, &self.conversation()),
            (None, Some(cache)) => cache.messages(tokenizer, &self.conversation()),
        }
        .map_err(|message| Error::new(ErrorClass::Io, message))
    }

    /// With front matter `budget:`, what the budget did to this turn: its
    /// limit, the tokens the turn came to, and what was cut to fit (the
    /// oldest turns of the history). `None` for a prompt without one.
    pub fn budget(&self) -> Option<&crate::tokens::Budget> {
        self.budget.as_ref()
    }

    /// Things the host should know that did not stop the render, such as
    /// an arg hidden by a namespace.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Where each byte of the conversation came from — the template span
    /// and, for a printed value of the data, its data path — when the
    /// render was asked for it ([`crate::RenderOptions::with_source_map`]);
    /// `None` otherwise (a render records nothing unless asked), and for
    /// a turn whose budget cut its sections (the cut text has no map yet).
    ///
    /// The render records what wrote each stretch of its output; the map
    /// is built from that on the first call (and kept).
    pub fn source_map(&self) -> Option<&crate::messages::SourceMap> {
        let lazy = self.source_map.as_deref()?;
        Some(lazy.get(&self.text, &self.conversation()))
    }

    /// How much of `previous` (the turn before, of the same prompt) this
    /// turn keeps at its start — what a provider's prompt cache can reuse
    /// — and where it first changes. With a source map
    /// ([`crate::RenderOptions::with_source_map`]), the change names the
    /// template span and the data path that wrote it.
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt, PromptContext, RenderOptions};
    ///
    /// let prompt = Prompt::from_source(
    ///     "agent.md",
    ///     "---\nsyntax: go\n---\n{{ role \"system\" }}Turn {{ .run.turn_number }}. Be brief.{{ history }}",
    ///     &LoadOptions::default(),
    /// )?;
    /// let options = RenderOptions::new().with_source_map(true);
    /// let first = prompt.render_turn_with(&PromptContext::new().turn(1), &options)?;
    /// let second = prompt.render_turn_with(&PromptContext::new().turn(2), &options)?;
    /// let prefix = second.stable_prefix(&first);
    /// assert_eq!(prefix.bytes, 5); // "Turn "
    /// assert!(!prefix.through_history);
    /// let change = prefix.change.unwrap();
    /// assert_eq!((change.message, change.offset), (0, 5));
    /// assert_eq!(change.path.as_deref(), Some("run.turn_number"));
    /// assert_eq!(change.span.unwrap().line, 4);
    /// # Ok::<(), teleprompt::Error>(())
    /// ```
    pub fn stable_prefix(&self, previous: &Rendered) -> crate::messages::StablePrefix {
        let (old, new) = (previous.conversation(), self.conversation());
        let text = match (previous.chat_template, self.chat_template) {
            (Some(_), Some(_)) => Some((previous.text.as_str(), self.text.as_str())),
            _ => None,
        };
        let (mut prefix, change) =
            super::prefix::stable_prefix(&old, &new, previous.history_end(), text);
        prefix.change = change.map(|(message, part, offset)| {
            let texts = new
                .get(message)
                .map(|entry| super::prefix::compared(entry).1)
                .unwrap_or_default();
            let line = texts
                .get(part)
                .and_then(|text| text.get(..offset))
                .map_or(1, |head| head.matches('\n').count() + 1);
            let (span, path) = self.origin_at(message, part, offset, text.is_some());
            crate::messages::PrefixChange {
                message,
                part,
                offset,
                line,
                span,
                path,
            }
        });
        prefix
    }

    /// Where the history ends in the conversation (where it goes, when
    /// it is empty).
    fn history_end(&self) -> usize {
        let mut at = 0;
        let mut placed = false;
        for item in self.items() {
            match item {
                Item::Message(_) => at += 1,
                Item::History => {
                    placed = true;
                    at += self.history.len();
                    break;
                }
                Item::CacheBreakpoint => {}
            }
        }
        match placed {
            true => at,
            false => at + self.history.len(),
        }
    }

    /// The template span and data path that wrote byte `offset` of text
    /// part `part` of message `message`, from the source map (`whole`: a
    /// chat template, whose one message is its text trimmed).
    fn origin_at(
        &self,
        message: usize,
        part: usize,
        offset: usize,
        whole: bool,
    ) -> (Option<crate::messages::SourceSpan>, Option<String>) {
        let Some(map) = self.source_map() else {
            return (None, None);
        };
        let offset = match whole {
            true => offset.saturating_sub(self.text.len() - self.text.trim_start().len()),
            false => offset,
        };
        let segment = map
            .messages
            .get(message)
            .and_then(|mapped| mapped.parts.get(part))
            .and_then(|text| {
                text.segments
                    .iter()
                    .find(|segment| segment.end > offset)
                    .or(text.segments.last())
            });
        match segment {
            Some(segment) => (
                map.span_of(segment).cloned(),
                map.path_of(segment).map(str::to_string),
            ),
            None => (None, None),
        }
    }

    /// With `on_error: original`, the error that made the render fall back
    /// to the unrendered text. A host should log it.
    pub fn recovered_error(&self) -> Option<&Error> {
        self.recovered.as_ref()
    }
}

/// A render's text and its messages.
pub(crate) struct RenderOutput {
    pub text: String,
    /// The messages; `None` when the whole text is one message of the
    /// default role (made from the text when first asked for: a host that
    /// reads only the text never pays for a copy of it).
    pub items: Option<Vec<Item>>,
    pub generations: Vec<std::ops::Range<usize>>,
    /// The budget sections, in the output as printed.
    pub sections: Vec<crate::messages::SectionSpan>,
}

impl RenderOutput {
    /// `text` as one message of the default role.
    pub(crate) fn plain(text: String) -> RenderOutput {
        RenderOutput {
            text,
            items: None,
            generations: Vec::new(),
            sections: Vec::new(),
        }
    }
}

impl From<Split> for RenderOutput {
    fn from(split: Split) -> RenderOutput {
        RenderOutput {
            text: split.text,
            items: Some(split.items),
            generations: split.generations,
            sections: split.sections,
        }
    }
}

/// `text` as one message of `role` (none if it is only whitespace).
pub(super) fn plain_items(text: &str, role: Role) -> Vec<Item> {
    let content = text.trim();
    if content.is_empty() {
        return Vec::new();
    }
    vec![Item::Message(Message {
        role,
        content: vec![ContentPart::Text {
            text: content.to_string(),
        }],
        extra: Default::default(),
    })]
}

//! What a render says about where its messages came from: source maps
//! (which template span and which data path wrote each byte,
//! [`crate::Rendered::source_map`]) and stable prefixes (what a turn keeps
//! of the one before, [`crate::Rendered::stable_prefix`]). Plain data: the
//! render builds them.

use serde::{Deserialize, Serialize};

use super::Role;

/// Where every byte of a render came from, message by message: the
/// conversation as [`crate::Rendered::conversation`] gives it.
///
/// ```
/// use teleprompt::{LoadOptions, Prompt, RenderOptions};
/// use teleprompt::messages::SegmentKind;
/// use serde_json::json;
///
/// let prompt = Prompt::from_source(
///     "greet.hbs",
///     "{{role \"system\"}}Be brief.\n{{role \"user\"}}Hi, {{user.name}}!",
///     &LoadOptions::default(),
/// )?;
/// let options = RenderOptions::new().with_source_map(true);
/// let rendered = prompt.render_with(json!({"user": {"name": "Ada"}}), &options)?;
/// let map = rendered.source_map().expect("asked for");
/// let user = &map.messages[1].parts[0];
/// assert_eq!(user.text, "Hi, Ada!");
/// let name = &user.segments[1];
/// assert_eq!((name.start, name.end, name.kind), (4, 7, SegmentKind::Value));
/// assert_eq!(map.path_of(name), Some("user.name"));
/// let span = map.span_of(name).unwrap();
/// assert_eq!((span.file.as_str(), span.line, span.column), ("greet.hbs", 2, 20));
/// assert_eq!(span.source.as_deref(), Some("{{user.name}}"));
/// # Ok::<(), teleprompt::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceMap {
    /// The messages of the conversation, in order.
    pub messages: Vec<MappedMessage>,
    /// The template spans the segments name ([`Segment::span`]), each once.
    pub spans: Vec<SourceSpan>,
    /// The data paths the segments name ([`Segment::path`]), each once.
    pub paths: Vec<String>,
}

/// One message of a [`SourceMap`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MappedMessage {
    /// Who speaks.
    pub role: Role,
    /// For a message of the history, its index there (the template did
    /// not write it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<usize>,
    /// Its text parts, in order (media and other parts hold no text).
    pub parts: Vec<MappedText>,
}

/// A text part of a message and where each of its bytes came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MappedText {
    /// The text, as the message has it.
    pub text: String,
    /// Stretches of `text`, in order, covering it whole without overlap.
    pub segments: Vec<Segment>,
}

/// A stretch of a message's text and what wrote it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Its first byte in the text.
    pub start: usize,
    /// The byte after its last.
    pub end: usize,
    /// What kind of source wrote it.
    pub kind: SegmentKind,
    /// The template span that wrote it, by its index in
    /// [`SourceMap::spans`] ([`SourceMap::span_of`]): literal text, or
    /// the tag that printed a value. `None` for a message of the history
    /// and for text the prompt's rules wrote (a continuation's fallback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<usize>,
    /// For a printed value of the data, its path there (`issue.labels[1]`,
    /// `history[3].content`), by its index in [`SourceMap::paths`]
    /// ([`SourceMap::path_of`]); `None` for values the template made, and
    /// on Jinja's minijinja path, which does not say where a value came
    /// from (the span's `source` shows the expression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<usize>,
}

/// What kind of source wrote a [`Segment`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentKind {
    /// Literal text of the template.
    Text,
    /// A printed value (a `{{ … }}` tag, a helper's or a filter's result).
    Value,
    /// A message of the history, placed by `history()` or after the
    /// rendered messages.
    History,
    /// Text the prompt's rules wrote, not its template: the fallback
    /// prompt of a continuation with nothing rendered.
    Fixed,
}

/// A span of a template file as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceSpan {
    /// The file (the prompt, or a file it includes), as the prompt names it.
    pub file: String,
    /// Its first line in the file, from 1 (the front matter counted).
    pub line: usize,
    /// Its first column, in characters, from 1.
    pub column: usize,
    /// Its length in bytes.
    pub len: usize,
    /// The template's text there, for a printed value (`{{ issue.title }}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl SourceMap {
    /// The template span that wrote `segment`.
    pub fn span_of(&self, segment: &Segment) -> Option<&SourceSpan> {
        self.spans.get(segment.span?)
    }

    /// The data path of the value `segment` printed.
    pub fn path_of(&self, segment: &Segment) -> Option<&str> {
        self.paths.get(segment.path?).map(String::as_str)
    }

    /// The segments of every message's text, with the message's index, the
    /// part's and the part's text (for reports that walk them all).
    pub fn segments(&self) -> impl Iterator<Item = (usize, &MappedText, &Segment)> {
        self.messages
            .iter()
            .enumerate()
            .flat_map(|(index, message)| {
                message.parts.iter().flat_map(move |part| {
                    part.segments
                        .iter()
                        .map(move |segment| (index, part, segment))
                })
            })
    }
}

/// How much of a previous turn's conversation a turn keeps at its start
/// ([`crate::Rendered::stable_prefix`]): what a provider's prompt cache
/// (or an open-model server's KV cache) can reuse.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StablePrefix {
    /// Bytes of text kept: every text part of the messages kept whole,
    /// then the same start of the first changed one.
    pub bytes: usize,
    /// Messages kept whole (a chat template's output is one).
    pub messages: usize,
    /// Whether the prefix kept reaches the end of the previous turn's
    /// history (or, without one, where its history goes): all a cache
    /// can keep from one turn to the next, when the turn appends to the
    /// history. A prompt that prints what changes every turn before its
    /// history is not.
    pub through_history: bool,
    /// The first change, if the turns differ.
    pub change: Option<PrefixChange>,
}

/// Where a turn first differs from the previous one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PrefixChange {
    /// The message, from 0, in the conversation.
    pub message: usize,
    /// Its text part, from 0 (text parts only; a chat template's one).
    pub part: usize,
    /// The first changed byte of that part.
    pub offset: usize,
    /// Its line in the part, from 1.
    pub line: usize,
    /// The template span that wrote it, when the turn recorded a source
    /// map ([`crate::RenderOptions::with_source_map`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<SourceSpan>,
    /// The data path of the value printed there, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl PrefixChange {
    /// Where the change is written, for people: `FILE:LINE:COL`, then the
    /// data path of the value printed there or the tag that printed it
    /// (`` (`system.current_date`) ``); `None` without a source map.
    pub fn written_at(&self) -> Option<String> {
        let span = self.span.as_ref()?;
        let mut place = format!("{}:{}:{}", span.file, span.line, span.column);
        if let Some(what) = self.path.as_ref().or(span.source.as_ref()) {
            place.push_str(&format!(" (`{what}`)"));
        }
        Some(place)
    }
}

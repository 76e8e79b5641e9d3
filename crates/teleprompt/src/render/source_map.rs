//! Source maps: which template span — and, for a printed value of the
//! data, which data path — wrote each byte of a render, message by
//! message ([`crate::Rendered::source_map`]).
//!
//! The evaluator notes what wrote each stretch of its output while it
//! renders ([`crate::scope::Trace`], only when asked); here the stretches
//! are carried through the split: the role markers are removed, each
//! message's text parts are found in what is left, and the history's
//! messages are their own. Spans are placed in the files as written
//! (the front matter and includes counted), and a printed value's place
//! in the data is found by where it is in memory.

use std::collections::HashMap;
use std::ops::Range;

use serde::Serialize;
use serde_json::Value;

use crate::data::Data;
use crate::messages::{ContentPart, Entry, Role};
use crate::scope::{Chunk, Trace, Wrote};
use crate::syntax::Place;

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
/// assert_eq!(name.path.as_deref(), Some("user.name"));
/// let span = name.span.as_ref().unwrap();
/// assert_eq!((span.file.as_str(), span.line, span.column), ("greet.hbs", 2, 20));
/// assert_eq!(span.source.as_deref(), Some("{{user.name}}"));
/// # Ok::<(), teleprompt::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SourceMap {
    /// The messages of the conversation, in order.
    pub messages: Vec<MappedMessage>,
}

/// One message of a [`SourceMap`].
#[derive(Clone, Debug, PartialEq, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MappedText {
    /// The text, as the message has it.
    pub text: String,
    /// Stretches of `text`, in order, covering it whole without overlap.
    pub segments: Vec<Segment>,
}

/// A stretch of a message's text and what wrote it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Segment {
    /// Its first byte in the text.
    pub start: usize,
    /// The byte after its last.
    pub end: usize,
    /// What kind of source wrote it.
    pub kind: SegmentKind,
    /// The template span that wrote it: literal text, or the tag that
    /// printed a value. `None` for a message of the history and for text
    /// the prompt's rules wrote (a continuation's fallback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<SourceSpan>,
    /// For a printed value of the data, its path there
    /// (`issue.labels[1]`, `history[3].content`); `None` for values the
    /// template made, and on Jinja's minijinja path, which does not say
    /// where a value came from (the span's `source` shows the expression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// What kind of source wrote a [`Segment`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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

/// What a map is built from: the render's trace, where its markers were
/// in the output, the text they left, the template that wrote it (to
/// place spans) and the data it read (for paths).
pub(crate) struct Printed<'a> {
    pub trace: Trace,
    pub markers: Vec<Range<usize>>,
    /// The output with the markers removed ([`crate::messages::Split::text`]).
    pub text: &'a str,
    pub template: &'a crate::syntax::Template,
    pub document: &'a crate::document::Document,
    pub data: &'a Data,
}

/// One stretch of the text left after the markers, and its chunk.
struct Piece {
    text: Range<usize>,
    chunk: usize,
    /// Where it starts in the output.
    out: usize,
}

/// The map of `conversation`, whose rendered messages' texts were cut
/// from `printed.text`.
pub(crate) fn build(printed: Printed<'_>, conversation: &[Entry<'_>]) -> SourceMap {
    let pieces = pieces(&printed);
    let mut spans = Spans::new(&printed);
    let mut cursor = 0;
    let messages = conversation
        .iter()
        .map(|entry| match entry {
            Entry::Rendered(message) => MappedMessage {
                role: message.role,
                history: None,
                parts: texts(&message.content)
                    .map(|text| {
                        let segments = match find(printed.text, text, cursor) {
                            Some(at) => {
                                cursor = at + text.len();
                                spans.segments(&pieces, at..cursor)
                            }
                            None => vec![whole(text, SegmentKind::Fixed, None)],
                        };
                        MappedText {
                            text: text.to_string(),
                            segments,
                        }
                    })
                    .collect(),
            },
            Entry::History(message) => {
                let index = spans.history_index();
                MappedMessage {
                    role: message.role,
                    history: Some(index),
                    parts: history_texts(message)
                        .map(|(text, path)| MappedText {
                            segments: vec![whole(
                                &text,
                                SegmentKind::History,
                                Some(format!("history[{index}].{path}")),
                            )],
                            text,
                        })
                        .collect(),
                }
            }
        })
        .collect();
    SourceMap { messages }
}

/// A map of a text the template did not write (a continuation's
/// fallback): one segment of `kind` per message.
pub(crate) fn fixed(conversation: &[Entry<'_>]) -> SourceMap {
    let mut history = 0;
    let messages = conversation
        .iter()
        .map(|entry| match entry {
            Entry::Rendered(message) => MappedMessage {
                role: message.role,
                history: None,
                parts: texts(&message.content)
                    .map(|text| MappedText {
                        segments: vec![whole(text, SegmentKind::Fixed, None)],
                        text: text.to_string(),
                    })
                    .collect(),
            },
            Entry::History(message) => {
                let index = history;
                history += 1;
                MappedMessage {
                    role: message.role,
                    history: Some(index),
                    parts: history_texts(message)
                        .map(|(text, path)| MappedText {
                            segments: vec![whole(
                                &text,
                                SegmentKind::History,
                                Some(format!("history[{index}].{path}")),
                            )],
                            text,
                        })
                        .collect(),
                }
            }
        })
        .collect();
    SourceMap { messages }
}

fn texts(content: &[ContentPart]) -> impl Iterator<Item = &str> {
    content.iter().filter_map(|part| match part {
        ContentPart::Text { text } => Some(text.as_str()),
        _ => None,
    })
}

/// A history message's texts, with each one's path in the message.
fn history_texts(
    message: &crate::messages::HistoryMessage,
) -> impl Iterator<Item = (String, String)> + '_ {
    let parts: Vec<(String, String)> = match message.content.as_ref().unwrap_or(&Value::Null) {
        Value::String(text) => vec![(text.clone(), "content".to_string())],
        Value::Array(parts) => parts
            .iter()
            .enumerate()
            .filter_map(|(i, part)| {
                let text = part.get("text")?.as_str()?;
                Some((text.to_string(), format!("content[{i}].text")))
            })
            .collect(),
        _ => Vec::new(),
    };
    parts.into_iter()
}

fn whole(text: &str, kind: SegmentKind, path: Option<String>) -> Segment {
    Segment {
        start: 0,
        end: text.len(),
        kind,
        span: None,
        path,
    }
}

/// Where `part` is in `text`, at or after `from`. A part is its stretch
/// of the text trimmed, so the first match is it: what lies between
/// `from` and it is whitespace, which a trimmed part does not start with.
fn find(text: &str, part: &str, from: usize) -> Option<usize> {
    if part.is_empty() {
        return Some(from.min(text.len()));
    }
    text.get(from..)?.find(part).map(|at| from + at)
}

/// The trace's chunks on the text the markers left: each chunk's bytes
/// outside every marker, moved back by the markers before them.
fn pieces(printed: &Printed<'_>) -> Vec<Piece> {
    let mut pieces = Vec::with_capacity(printed.trace.chunks.len());
    let markers = &printed.markers;
    let mut marker = 0;
    // Bytes of markers before the position reached.
    let mut removed = 0;
    for (index, chunk) in printed.trace.chunks.iter().enumerate() {
        let mut from = chunk.out.start;
        while from < chunk.out.end {
            // Skip the markers that end before `from`.
            while let Some(m) = markers.get(marker) {
                if m.end > from {
                    break;
                }
                removed += m.len();
                marker += 1;
            }
            match markers.get(marker) {
                Some(m) if m.start <= from => from = m.end.min(chunk.out.end).max(from + 1),
                Some(m) => {
                    let end = chunk.out.end.min(m.start);
                    pieces.push(Piece {
                        text: from - removed..end - removed,
                        chunk: index,
                        out: from,
                    });
                    from = end;
                }
                None => {
                    pieces.push(Piece {
                        text: from - removed..chunk.out.end - removed,
                        chunk: index,
                        out: from,
                    });
                    from = chunk.out.end;
                }
            }
        }
    }
    pieces
}

/// A chunk's span as placed once: its template, its range, and whether
/// it printed a value (a value's span carries its source).
type SpanKey = (Option<std::sync::Arc<str>>, Range<usize>, bool);

/// Turns chunks into segments: places their spans (once each) and finds
/// their data paths (one walk of the data, when a value asks).
struct Spans<'p, 'a> {
    printed: &'p Printed<'a>,
    placed: HashMap<SpanKey, Option<SourceSpan>>,
    paths: Option<HashMap<usize, String>>,
    /// The history messages seen so far (the next one's index).
    history_seen: usize,
}

impl<'p, 'a> Spans<'p, 'a> {
    fn new(printed: &'p Printed<'a>) -> Self {
        Spans {
            printed,
            placed: HashMap::new(),
            paths: None,
            history_seen: 0,
        }
    }

    fn history_index(&mut self) -> usize {
        let index = self.history_seen;
        self.history_seen += 1;
        index
    }

    /// The segments of `range` of the text (offsets from its start).
    fn segments(&mut self, pieces: &[Piece], range: Range<usize>) -> Vec<Segment> {
        let first = pieces.partition_point(|piece| piece.text.end <= range.start);
        let mut segments = Vec::new();
        let mut at = range.start;
        for piece in pieces.get(first..).unwrap_or_default() {
            if piece.text.start >= range.end {
                break;
            }
            let start = piece.text.start.max(range.start);
            let end = piece.text.end.min(range.end);
            if start > at {
                // Nothing noted wrote these bytes (it cannot happen: the
                // evaluators note all they print); said, not hidden.
                segments.push(Segment {
                    start: at - range.start,
                    end: start - range.start,
                    kind: SegmentKind::Fixed,
                    span: None,
                    path: None,
                });
            }
            if end > start {
                let out = piece.out + (start - piece.text.start);
                segments.push(self.segment(
                    piece.chunk,
                    start - range.start..end - range.start,
                    out,
                ));
            }
            at = end.max(at);
        }
        if at < range.end {
            segments.push(Segment {
                start: at - range.start,
                end: range.end - range.start,
                kind: SegmentKind::Fixed,
                span: None,
                path: None,
            });
        }
        segments
    }

    /// The segment of `range` of a part, `out` its start in the output.
    /// Literal text written as it stands in the source gets the span of
    /// its own bytes; anything else, its chunk's.
    fn segment(&mut self, chunk: usize, range: Range<usize>, out: usize) -> Segment {
        let Some(chunk) = self.printed.trace.chunks.get(chunk) else {
            return Segment {
                start: range.start,
                end: range.end,
                kind: SegmentKind::Fixed,
                span: None,
                path: None,
            };
        };
        let (kind, of_data) = match chunk.wrote {
            Wrote::Text => (SegmentKind::Text, None),
            Wrote::Value(of_data) => (SegmentKind::Value, of_data),
        };
        let span = match chunk.wrote {
            Wrote::Text if chunk.span.len() == chunk.out.len() => {
                let from = chunk.span.start + (out - chunk.out.start);
                let exact = Chunk {
                    span: from..from + range.len(),
                    ..chunk.clone()
                };
                self.place(&exact)
            }
            _ => self.place(chunk),
        };
        let path = of_data.and_then(|at| self.path_of(at));
        Segment {
            start: range.start,
            end: range.end,
            kind,
            span,
            path,
        }
    }

    fn place(&mut self, chunk: &Chunk) -> Option<SourceSpan> {
        let value = matches!(chunk.wrote, Wrote::Value(_));
        let key = (chunk.file.clone(), chunk.span.clone(), value);
        if let Some(placed) = self.placed.get(&key) {
            return placed.clone();
        }
        let printed = self.printed;
        let placed = printed
            .template
            .place_span(chunk.file.as_deref(), chunk.span.clone())
            .map(|place| {
                let (document, range) = match place {
                    Place::Body(range) => (printed.document, range),
                    Place::File(document, range) => (document, range),
                };
                let at = document.location_of(range.start);
                SourceSpan {
                    file: document.origin.clone(),
                    line: at.line,
                    column: at.column,
                    len: range.len(),
                    source: value
                        .then(|| document.body.get(range).map(str::to_string))
                        .flatten(),
                }
            });
        self.placed.insert(key, placed.clone());
        placed
    }

    /// The data path of the value at address `at` (a JSON value of the
    /// data, or a byte inside one of its strings).
    fn path_of(&mut self, at: usize) -> Option<String> {
        if self.paths.is_none() {
            let mut wanted: Vec<usize> = self
                .printed
                .trace
                .chunks
                .iter()
                .filter_map(|chunk| match chunk.wrote {
                    Wrote::Value(of_data) => of_data,
                    Wrote::Text => None,
                })
                .collect();
            wanted.sort_unstable();
            wanted.dedup();
            let mut paths = HashMap::new();
            for layer in self.printed.data.layers() {
                walk(&layer.value, &mut String::new(), &wanted, &mut paths, 0);
            }
            self.paths = Some(paths);
        }
        self.paths.as_ref()?.get(&at).cloned()
    }
}

/// How deep [`walk`] goes (data nests less deep than this: the parsers
/// bound it).
const MAX_WALK_DEPTH: usize = 512;

/// Notes the path of every value under `value` (at `path`) whose address,
/// or an address inside whose text, is `wanted`.
fn walk(
    value: &Value,
    path: &mut String,
    wanted: &[usize],
    paths: &mut HashMap<usize, String>,
    depth: usize,
) {
    if depth > MAX_WALK_DEPTH || wanted.is_empty() {
        return;
    }
    let address = std::ptr::from_ref(value) as usize;
    if wanted.binary_search(&address).is_ok() {
        paths.entry(address).or_insert_with(|| path.clone());
    }
    match value {
        Value::String(text) => {
            let start = text.as_ptr() as usize;
            let from = wanted.partition_point(|&at| at < start);
            for &at in wanted.get(from..).unwrap_or_default() {
                if at >= start + text.len().max(1) {
                    break;
                }
                paths.entry(at).or_insert_with(|| path.clone());
            }
        }
        Value::Array(items) => {
            let len = path.len();
            for (i, item) in items.iter().enumerate() {
                path.push('[');
                path.push_str(&i.to_string());
                path.push(']');
                walk(item, path, wanted, paths, depth + 1);
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            let len = path.len();
            for (key, item) in map {
                push_key(path, key);
                walk(item, path, wanted, paths, depth + 1);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// `key` after `path` as a template writes it: `.name`, or `["a key"]`.
fn push_key(path: &mut String, key: &str) {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_alphanumeric() || c == '_');
    if plain {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&serde_json::to_string(key).unwrap_or_default());
        path.push(']');
    }
}

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

use serde_json::Value;

use crate::data::Data;
use crate::messages::{
    ContentPart, Entry, MappedMessage, MappedText, Segment, SegmentKind, SourceMap, SourceSpan,
};
use crate::scope::{Chunk, DataAt, Trace, Wrote};
use crate::syntax::Place;

/// What a render recorded for its map, built on first use.
pub(crate) struct Recorded {
    pub trace: Trace,
    /// Where the markers were in the output.
    pub markers: Vec<Range<usize>>,
    /// The text is a continuation's fallback, not the template's.
    pub fixed: bool,
    pub compiled: std::sync::Arc<crate::load::Compiled>,
    /// Whether the render ran the prompt's `tool_use` template.
    pub tool_use: bool,
    pub data: Data,
}

/// A render's source map, built from what it recorded when first asked for.
pub(crate) struct Lazy {
    recorded: std::sync::Mutex<Option<Recorded>>,
    map: std::sync::OnceLock<SourceMap>,
}

impl std::fmt::Debug for Lazy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lazy")
            .field("built", &self.map.get().is_some())
            .finish()
    }
}

impl Lazy {
    pub(crate) fn new(recorded: Recorded) -> Lazy {
        Lazy {
            recorded: std::sync::Mutex::new(Some(recorded)),
            map: std::sync::OnceLock::new(),
        }
    }

    /// A map built already (a result deserialized).
    pub(crate) fn ready(map: SourceMap) -> Lazy {
        Lazy {
            recorded: std::sync::Mutex::new(None),
            map: std::sync::OnceLock::from(map),
        }
    }

    /// The map of the render whose text (markers removed) is `text` and
    /// whose conversation is `conversation`.
    pub(crate) fn get(&self, text: &str, conversation: &[Entry<'_>]) -> &SourceMap {
        self.map.get_or_init(|| {
            let recorded = match self.recorded.lock() {
                Ok(mut recorded) => recorded.take(),
                Err(poisoned) => poisoned.into_inner().take(),
            };
            let Some(recorded) = recorded else {
                return build(None, conversation);
            };
            let (document, template) = recorded.compiled.template_for(recorded.tool_use);
            let printed = (!recorded.fixed).then_some(Printed {
                trace: recorded.trace,
                markers: recorded.markers,
                text,
                template,
                document,
                data: &recorded.data,
            });
            build(printed, conversation)
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
/// from `printed.text`; without `printed` (a continuation's fallback,
/// which the template did not write), each text is one `fixed` segment.
pub(crate) fn build(printed: Option<Printed<'_>>, conversation: &[Entry<'_>]) -> SourceMap {
    let pieces = printed.as_ref().map(pieces).unwrap_or_default();
    let mut tables = Tables::new(printed.as_ref());
    let mut cursor = 0;
    let mut history = 0;
    let mut messages = Vec::with_capacity(conversation.len());
    for entry in conversation {
        let message = match entry {
            Entry::Rendered(message) => MappedMessage {
                role: message.role,
                history: None,
                parts: texts(&message.content)
                    .map(|text| {
                        let found = printed
                            .as_ref()
                            .and_then(|printed| find(printed.text, text, cursor));
                        let segments = match found {
                            Some(at) => {
                                cursor = at + text.len();
                                tables.segments(&pieces, at..cursor)
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
                let index = history;
                history += 1;
                MappedMessage {
                    role: message.role,
                    history: Some(index),
                    parts: history_texts(message)
                        .map(|(text, path)| {
                            let path = tables.add_path(format!("history[{index}].{path}"));
                            MappedText {
                                segments: vec![whole(&text, SegmentKind::History, Some(path))],
                                text,
                            }
                        })
                        .collect(),
                }
            }
        };
        messages.push(message);
    }
    SourceMap {
        messages,
        spans: tables.spans,
        paths: tables.paths,
    }
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

fn whole(text: &str, kind: SegmentKind, path: Option<usize>) -> Segment {
    Segment {
        start: 0,
        end: text.len(),
        kind,
        span: None,
        path,
    }
}

/// Where `part` is in `text`, at or after `from`: a part is its stretch
/// of the text as printed or trimmed, so it starts in the whitespace at
/// `from` or right after it (the text between two parts is whitespace
/// and markers, and the markers are gone): it is looked for there only,
/// so finding every part costs the text's length once. `None` for a part
/// the split rewrote (Prompty's lines joined by `\n`): it is not in the
/// text.
fn find(text: &str, part: &str, from: usize) -> Option<usize> {
    let rest = text.get(from..)?;
    let skipped = rest.len() - rest.trim_start().len();
    let mut end = (skipped + part.len()).min(rest.len());
    while !rest.is_char_boundary(end) {
        end += 1;
    }
    rest.get(..end)?.find(part).map(|at| from + at)
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
        let out = chunk.out();
        let mut from = out.start;
        while from < out.end {
            // Skip the markers that end before `from`.
            while let Some(m) = markers.get(marker) {
                if m.end > from {
                    break;
                }
                removed += m.len();
                marker += 1;
            }
            let end = match markers.get(marker) {
                // Inside a marker: skip to its end.
                Some(m) if m.start <= from => {
                    from = m.end.min(out.end).max(from + 1);
                    continue;
                }
                Some(m) => out.end.min(m.start),
                None => out.end,
            };
            pieces.push(Piece {
                text: from - removed..end - removed,
                chunk: index,
                out: from,
            });
            from = end;
        }
    }
    pieces
}

/// A multiplicative hasher for the maps below, whose keys are integers
/// the render made (spans, addresses): no attacker picks them, and
/// SipHash cost a fifth of building a map.
#[derive(Default)]
struct IntHasher(u64);

impl std::hash::Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }

    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }

    fn write_u8(&mut self, value: u8) {
        self.write_u64(u64::from(value));
    }
}

type IntMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<IntHasher>>;

/// A chunk's span as placed once: its template (`Chunk::file`), its
/// range, and whether it printed a value (a value's span carries its
/// source).
type SpanKey = (usize, usize, usize, bool);

/// Turns chunks into segments and fills the map's tables: each span
/// placed once, data paths found by one walk of the data when a value
/// asks for one.
struct Tables<'p, 'a> {
    printed: Option<&'p Printed<'a>>,
    spans: Vec<SourceSpan>,
    placed: IntMap<SpanKey, Option<usize>>,
    paths: Vec<String>,
    /// Each printed value's address → its path's index (`usize::MAX`:
    /// none), once walked: JSON values, and text inside strings.
    found: Option<(IntMap<usize, usize>, IntMap<usize, usize>)>,
}

impl<'p, 'a> Tables<'p, 'a> {
    fn new(printed: Option<&'p Printed<'a>>) -> Self {
        Tables {
            printed,
            spans: Vec::new(),
            placed: IntMap::default(),
            paths: Vec::new(),
            found: None,
        }
    }

    fn add_path(&mut self, path: String) -> usize {
        self.paths.push(path);
        self.paths.len() - 1
    }

    /// The segments of `range` of the text (offsets from its start).
    fn segments(&mut self, pieces: &[Piece], range: Range<usize>) -> Vec<Segment> {
        let first = pieces.partition_point(|piece| piece.text.end <= range.start);
        let mut segments = Vec::new();
        let mut at = range.start;
        let unknown = |from: usize, to: usize| Segment {
            start: from - range.start,
            end: to - range.start,
            kind: SegmentKind::Fixed,
            span: None,
            path: None,
        };
        for piece in pieces.get(first..).unwrap_or_default() {
            if piece.text.start >= range.end {
                break;
            }
            let start = piece.text.start.max(range.start);
            let end = piece.text.end.min(range.end);
            if start > at {
                // Nothing noted wrote these bytes (it cannot happen: the
                // evaluators note all they print); said, not hidden.
                segments.push(unknown(at, start));
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
            segments.push(unknown(at, range.end));
        }
        segments
    }

    /// The segment of `range` of a part, `out` its start in the output.
    /// Literal text written as it stands in the source gets the span of
    /// its own bytes; anything else, its chunk's.
    fn segment(&mut self, chunk: usize, range: Range<usize>, out: usize) -> Segment {
        let Some(chunk) = self
            .printed
            .and_then(|printed| printed.trace.chunks.get(chunk))
        else {
            return whole("", SegmentKind::Fixed, None);
        };
        let (kind, of_data) = match chunk.wrote {
            Wrote::Text => (SegmentKind::Text, None),
            Wrote::Value(of_data) => (SegmentKind::Value, of_data),
        };
        let span = match chunk.wrote {
            Wrote::Text if chunk.span().len() == chunk.out().len() => {
                let from = chunk.span().start + (out - chunk.out().start);
                self.place(chunk, from..from + range.len())
            }
            _ => self.place(chunk, chunk.span()),
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

    /// The index of `span` of `chunk`'s template in the span table.
    fn place(&mut self, chunk: &Chunk, span: Range<usize>) -> Option<usize> {
        let value = matches!(chunk.wrote, Wrote::Value(_));
        let key = (chunk.file as usize, span.start, span.end, value);
        if let Some(&placed) = self.placed.get(&key) {
            return placed;
        }
        let printed = self.printed?;
        let placed = printed
            .template
            .place_span(printed.trace.file_of(chunk).map(|name| &**name), span)
            .map(|place| {
                let (document, range) = match place {
                    Place::Body(range) => (printed.document, range),
                    Place::File(document, range) => (document, range),
                };
                let at = document.location_of(range.start);
                self.spans.push(SourceSpan {
                    file: document.origin.clone(),
                    line: at.line,
                    column: at.column,
                    len: range.len(),
                    source: value
                        .then(|| document.body.get(range).map(str::to_string))
                        .flatten(),
                });
                self.spans.len() - 1
            });
        self.placed.insert(key, placed);
        placed
    }

    /// The index of the data path of the value printed from `at`.
    fn path_of(&mut self, at: DataAt) -> Option<usize> {
        if self.found.is_none() {
            let printed = self.printed?;
            let mut nodes = IntMap::default();
            let mut texts = Vec::new();
            for chunk in &printed.trace.chunks {
                match chunk.wrote {
                    Wrote::Value(Some(DataAt::Node(at))) => {
                        nodes.insert(at, usize::MAX);
                    }
                    Wrote::Value(Some(DataAt::Text(at))) => texts.push(at),
                    _ => {}
                }
            }
            texts.sort_unstable();
            texts.dedup();
            let mut walk = Walk {
                nodes,
                texts: &texts,
                found_texts: IntMap::default(),
                steps: Vec::new(),
                paths: &mut self.paths,
            };
            for layer in printed.data.layers() {
                walk.value(&layer.value, 0);
            }
            let Walk {
                nodes, found_texts, ..
            } = walk;
            self.found = Some((nodes, found_texts));
        }
        let (nodes, texts) = self.found.as_ref()?;
        let index = match at {
            DataAt::Node(at) => nodes.get(&at)?,
            DataAt::Text(at) => texts.get(&at)?,
        };
        (*index != usize::MAX).then_some(*index)
    }
}

/// How deep [`Walk`] goes (data nests less deep than this: the parsers
/// bound it).
const MAX_WALK_DEPTH: usize = 512;

/// One walk of the data for the paths of the values printed: a value
/// whose address is wanted (`nodes`), or a string with a wanted address
/// inside its text (`texts`), gets its path (written only then).
struct Walk<'w, 'v> {
    /// The JSON values printed, by address → their path's index.
    nodes: IntMap<usize, usize>,
    /// Addresses inside the data's strings that were printed, sorted.
    texts: &'w [usize],
    found_texts: IntMap<usize, usize>,
    steps: Vec<Step<'v>>,
    paths: &'w mut Vec<String>,
}

/// A step of a path: a key, or an index.
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

impl<'v> Walk<'_, 'v> {
    fn value(&mut self, value: &'v Value, depth: usize) {
        if depth > MAX_WALK_DEPTH {
            return;
        }
        let address = std::ptr::from_ref(value) as usize;
        if self.nodes.get(&address) == Some(&usize::MAX) {
            let path = self.path();
            self.nodes.insert(address, path);
        }
        match value {
            Value::String(text) if !self.texts.is_empty() => {
                let start = text.as_ptr() as usize;
                let end = start + text.len().max(1);
                let from = self.texts.partition_point(|&at| at < start);
                let mut path = None;
                for &at in self.texts.get(from..).unwrap_or_default() {
                    if at >= end {
                        break;
                    }
                    if self.found_texts.contains_key(&at) {
                        continue;
                    }
                    let index = match path {
                        Some(index) => index,
                        None => *path.insert(self.path()),
                    };
                    self.found_texts.insert(at, index);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.steps.push(Step::Index(i));
                    self.value(item, depth + 1);
                    self.steps.pop();
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    self.steps.push(Step::Key(key));
                    self.value(item, depth + 1);
                    self.steps.pop();
                }
            }
            _ => {}
        }
    }

    /// The path walked so far, written into the table: its index.
    fn path(&mut self) -> usize {
        let mut path = String::new();
        for step in &self.steps {
            match step {
                Step::Key(key) => push_key(&mut path, key),
                Step::Index(i) => {
                    use std::fmt::Write;
                    let _ = write!(path, "[{i}]");
                }
            }
        }
        self.paths.push(path);
        self.paths.len() - 1
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

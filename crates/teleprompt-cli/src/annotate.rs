//! `render --annotate`: the conversation as the model sees it, each line
//! with where it came from in the margin — the template line and column
//! of its first stretch, and the data path of each value printed on it —
//! for people reading a prompt they did not write.

use teleprompt::messages::{MappedText, Segment, SegmentKind, SourceMap, SourceSpan};

/// The widest the margin grows; longer origins are cut with `…`.
const MARGIN: usize = 48;

/// `map` annotated: a heading per message, then each line of its text
/// after its origins. `file` is the prompt, named once in the heading
/// (other files are named where their lines are).
pub(crate) fn annotate(map: &SourceMap, file: &str) -> String {
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut out = String::new();
    for (index, message) in map.messages.iter().enumerate() {
        let mut heading = format!("── message {} ({})", index + 1, message.role.as_str());
        if let Some(history) = message.history {
            heading.push_str(&format!(", history[{history}]"));
        }
        rows.push((String::new(), heading));
        for part in &message.parts {
            let mut start = 0;
            for line in part.text.split_inclusive('\n') {
                let end = start + line.len();
                let origins = origins(map, part, start..end, file);
                rows.push((origins, line.trim_end_matches('\n').to_string()));
                start = end;
            }
        }
    }
    let width = rows
        .iter()
        .map(|(margin, _)| margin.chars().count())
        .max()
        .unwrap_or(0)
        .min(MARGIN);
    for (margin, text) in rows {
        if margin.is_empty() && text.starts_with("── ") {
            out.push_str(&text);
            out.push('\n');
            continue;
        }
        let margin = cut(&margin, width);
        let pad = width - margin.chars().count();
        out.push_str(&margin);
        out.push_str(&" ".repeat(pad));
        out.push_str(" │ ");
        out.push_str(&text);
        out.push('\n');
    }
    out
}

/// The origins of the bytes `range` of a part's text: where its first
/// stretch was written (`LINE:COL`; `NAME:LINE:COL` in another file, by
/// its file name),
/// then each value's data path (or its tag, without one).
fn origins(
    map: &SourceMap,
    part: &MappedText,
    range: std::ops::Range<usize>,
    file: &str,
) -> String {
    let mut words: Vec<String> = Vec::new();
    let touching = part
        .segments
        .iter()
        .filter(|segment| segment.end > range.start && segment.start < range.end);
    for (i, segment) in touching.enumerate() {
        if i == 0 {
            words.push(match (map.span_of(segment), segment.kind) {
                (Some(span), kind) => {
                    let (line, column) = line_start(part, segment, span, kind, range.start);
                    match span.file == file {
                        true => format!("{line}:{column}"),
                        false => {
                            let name = std::path::Path::new(&span.file)
                                .file_name()
                                .map_or(span.file.clone(), |name| {
                                    name.to_string_lossy().into_owned()
                                });
                            format!("{name}:{line}:{column}")
                        }
                    }
                }
                (None, SegmentKind::History) => String::new(),
                (None, _) => "(fixed)".to_string(),
            });
        }
        match (map.path_of(segment), segment.kind, map.span_of(segment)) {
            (Some(path), _, _) => words.push(path.to_string()),
            (None, SegmentKind::Value, Some(span)) => {
                if let Some(source) = &span.source {
                    words.push(source.split_whitespace().collect::<Vec<_>>().join(" "));
                }
            }
            _ => {}
        }
    }
    words.retain(|word| !word.is_empty());
    words.dedup();
    words.join(" ")
}

/// Where the line that starts at byte `at` of the part is in the
/// template: inside literal text written as it stands (its span as long
/// as it), the place of that byte; else where the segment starts.
fn line_start(
    part: &MappedText,
    segment: &Segment,
    span: &SourceSpan,
    kind: SegmentKind,
    at: usize,
) -> (usize, usize) {
    let exact = kind == SegmentKind::Text && span.len == segment.end - segment.start;
    let before = part
        .text
        .get(segment.start..at)
        .filter(|_| exact && at > segment.start);
    let Some(before) = before else {
        return (span.line, span.column);
    };
    match before.rfind('\n') {
        Some(last) => (
            span.line + before.matches('\n').count(),
            before[last + 1..].chars().count() + 1,
        ),
        None => (span.line, span.column + before.chars().count()),
    }
}

/// `text` in at most `width` characters, cut with `…`.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(width.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

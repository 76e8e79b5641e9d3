//! `render --annotate`: the conversation as the model sees it, each line
//! with where it came from in the margin — the template line and column
//! of its first stretch, and the data path of each value printed on it —
//! for people reading a prompt they did not write. One pass over each
//! part's lines and segments together: a long text of many lines costs
//! its length, not its lines times its segments.

use teleprompt::messages::{MappedText, Segment, SegmentKind, SourceMap};

/// The widest the margin grows; longer origins are cut with `…`.
const MARGIN: usize = 48;

/// A line of the annotation.
enum Row {
    /// A message's heading.
    Heading(String),
    /// A line of text and its origins.
    Line { origins: String, text: String },
}

/// `map` annotated: a heading per message, then each line of its text
/// after its origins. `file` is the prompt: its own places are `LINE:COL`,
/// another file's `NAME:LINE:COL`.
pub(crate) fn annotate(map: &SourceMap, file: &str) -> String {
    let mut rows = Vec::new();
    for (index, message) in map.messages.iter().enumerate() {
        let mut heading = format!("── message {} ({})", index + 1, message.role.as_str());
        if let Some(history) = message.history {
            heading.push_str(&format!(", history[{history}]"));
        }
        rows.push(Row::Heading(heading));
        for part in &message.parts {
            part_rows(map, part, file, &mut rows);
        }
    }
    let width = rows
        .iter()
        .filter_map(|row| match row {
            Row::Line { origins, .. } => Some(origins.chars().count()),
            Row::Heading(_) => None,
        })
        .max()
        .unwrap_or(0)
        .min(MARGIN);
    let mut out = String::new();
    for row in rows {
        match row {
            Row::Heading(heading) => out.push_str(&heading),
            Row::Line { origins, text } => {
                let margin = cut(&origins, width);
                let pad = width - margin.chars().count();
                out.push_str(&margin);
                out.push_str(&" ".repeat(pad));
                out.push_str(" │ ");
                out.push_str(&text);
            }
        }
        out.push('\n');
    }
    out
}

/// The rows of one text part: each line with the origins of the
/// segments it touches (the first one's place, then each value's path or
/// tag), the segments walked once beside the lines.
fn part_rows(map: &SourceMap, part: &MappedText, file: &str, rows: &mut Vec<Row>) {
    let segments = &part.segments;
    // The first segment that does not end before the line; and, for the
    // segment a line starts inside, the line breaks counted so far in it.
    let mut first = 0;
    let mut counted: Option<(usize, usize, usize)> = None;
    let mut start = 0;
    for line in part.text.split_inclusive('\n') {
        let end = start + line.len();
        while segments
            .get(first)
            .is_some_and(|segment| segment.end <= start)
        {
            first += 1;
        }
        let mut words: Vec<String> = Vec::new();
        let touching = segments
            .get(first..)
            .unwrap_or_default()
            .iter()
            .take_while(|segment| segment.start < end);
        for (i, segment) in touching.enumerate() {
            if i == 0 {
                words.push(place(
                    map,
                    part,
                    (first, segment),
                    start,
                    file,
                    &mut counted,
                ));
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
        rows.push(Row::Line {
            origins: words.join(" "),
            text: line.trim_end_matches('\n').to_string(),
        });
        start = end;
    }
}

/// Where the line that starts at byte `at` of the part is written: inside
/// literal text written as it stands (its span as long as it), the place
/// of that byte; else where the segment starts. `counted` keeps the line
/// breaks of the segment (by index) up to where they were last counted.
fn place(
    map: &SourceMap,
    part: &MappedText,
    (index, segment): (usize, &Segment),
    at: usize,
    file: &str,
    counted: &mut Option<(usize, usize, usize)>,
) -> String {
    let Some(span) = map.span_of(segment) else {
        return match segment.kind {
            SegmentKind::History => String::new(),
            _ => "(fixed)".to_string(),
        };
    };
    let exact = segment.kind == SegmentKind::Text && span.len == segment.end - segment.start;
    let (line, column) = match exact && at > segment.start {
        // `at` starts a line inside the segment: a line break is just
        // before it, so the column is 1.
        true => {
            let (from, breaks) = match *counted {
                Some((counted_index, to, breaks)) if counted_index == index && to <= at => {
                    (to, breaks)
                }
                _ => (segment.start, 0),
            };
            let more = part
                .text
                .get(from..at)
                .map_or(0, |text| text.matches('\n').count());
            *counted = Some((index, at, breaks + more));
            (span.line + breaks + more, 1)
        }
        false => (span.line, span.column),
    };
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

/// `text` in at most `width` characters, cut with `…`.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(width.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

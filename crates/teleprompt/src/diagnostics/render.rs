//! An [`Error`]'s text report, laid out by annotate-snippets (the
//! renderer rustc's own diagnostics use): the headline with the error's
//! code, `--> file:line:col`, the source line with carets under the
//! columns a terminal gives its characters, the other places the error
//! points at, then the action, the suggestion and the labels. One layout,
//! plain or in colour.
//!
//! An error keeps only a window of each line it shows (`ShownLine`), so
//! the places are written here, not counted by the renderer from that
//! window: `--> file:line:col` as the error's own place, and each other
//! place's `::: file:line:col` put where the renderer leaves its mark for
//! a snippet without a path.

use std::ops::Range;

use annotate_snippets::{
    normalize_untrusted_str, AnnotationKind, Group, Level, Origin, Renderer, Snippet,
};

use super::{one_line, Error, ErrorClass};

/// Wider than any window a report shows (`SHOWN_LINE` characters, each at
/// most four columns as a tab), so the renderer never cuts a line again.
const TERM_WIDTH: usize = 4096;

/// One snippet of the report: a line (its window), its number, and what
/// is underlined in it.
struct Shown<'e> {
    line: usize,
    text: &'e str,
    /// Byte ranges in `text`, each with its label; the first of the
    /// primary snippet is the error's own.
    marks: Vec<(Range<usize>, Option<String>)>,
    /// `file:line:col` of the first mark (for a secondary snippet).
    place: String,
}

/// The report of `error`, in colour with `styled`.
pub(super) fn report(error: &Error, styled: bool) -> String {
    let details = &error.0;
    let message = normalize_untrusted_str(&details.message);
    let level = match details.class {
        ErrorClass::Warning => Level::WARNING,
        _ => Level::ERROR,
    };
    let mut group = Group::with_title(level.primary_title(message).id(error.code()));

    let place = error.place();
    let snippets = snippets(error);
    if !place.is_empty() {
        group = group.element(Origin::path(flat(&place)));
    }
    for (index, shown) in snippets.iter().enumerate() {
        let mut snippet = Snippet::source(shown.text).line_start(shown.line.max(1));
        for (mark, (span, label)) in shown.marks.iter().enumerate() {
            let kind = match index == 0 && mark == 0 {
                true => AnnotationKind::Primary,
                false => AnnotationKind::Context,
            };
            let annotation = kind.span(span.clone());
            snippet = snippet.annotation(match label {
                Some(label) => annotation.label(label.as_str()),
                None => annotation,
            });
        }
        group = group.element(snippet);
    }
    let mut notes = Vec::new();
    if let Some(action) = &details.action {
        notes.push((None, format!("at <{}>", one_line(action))));
    }
    if let Some(suggestion) = &details.suggestion {
        notes.push((Some("help".to_string()), suggestion.clone()));
    }
    for (key, value) in &details.labels {
        notes.push((Some(key.clone()), value.clone()));
    }
    for (name, text) in &notes {
        let text = flat(text);
        let message = match name.as_deref() {
            None => Level::NOTE.no_name().message(text),
            Some("help") => Level::HELP.message(text),
            Some(key) => Level::NOTE.with_name(flat(key)).message(text),
        };
        group = group.element(message);
    }

    let renderer = match styled {
        true => Renderer::styled(),
        false => Renderer::plain(),
    }
    .term_width(TERM_WIDTH);
    let rendered = renderer.render(&[group]);
    let title_lines = details.message.split('\n').count();
    let mut out = place_snippets(&rendered, title_lines, &snippets, !place.is_empty());
    out.push('\n');
    out
}

/// The snippets of `error`: its own line first (with the other places
/// on the same window of the same line), then one for each other place.
fn snippets(error: &Error) -> Vec<Shown<'_>> {
    let details = &error.0;
    let (Some(location), Some(shown)) = (details.location, &details.source_line) else {
        return Vec::new();
    };
    let file = details.file.as_deref();
    let mut first = Shown {
        line: location.line,
        text: &shown.text,
        marks: vec![(shown.underlined_bytes(), details.label.as_deref().map(flat))],
        place: String::new(),
    };
    let mut others: Vec<Shown<'_>> = Vec::new();
    for secondary in &details.secondary {
        let mark = (
            secondary.line.underlined_bytes(),
            Some(flat(&secondary.label)),
        );
        if secondary.location.line == location.line && secondary.line.text == shown.text {
            first.marks.push(mark);
            continue;
        }
        let at = secondary.location;
        others.push(Shown {
            line: at.line,
            text: &secondary.line.text,
            marks: vec![mark],
            place: match file {
                Some(file) => format!("{}:{}:{}", flat(file), at.line, at.column),
                None => format!("{}:{}", at.line, at.column),
            },
        });
    }
    std::iter::once(first).chain(others).collect()
}

/// `text` on one line, its control characters shown as symbols: a
/// label, a note or a help never adds lines of its own to the report.
fn flat(text: &str) -> String {
    normalize_untrusted_str(&text.replace(['\n', '\r'], " "))
}

/// The rendered report with the snippets' places written in: after the
/// headline (`title_lines` lines) and a `-->` line of its own, the
/// renderer marks each snippet without a path with a line `:::` alone;
/// the first snippet's (the error's own, whose place the `-->` line
/// gives) is dropped, the others' get their place.
fn place_snippets(
    rendered: &str,
    title_lines: usize,
    snippets: &[Shown<'_>],
    has_origin: bool,
) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut marker = 0;
    for (index, line) in rendered.split('\n').enumerate() {
        if has_origin && index >= title_lines && without_escapes(line).trim() == ":::" {
            marker += 1;
            match snippets.get(marker - 1) {
                Some(_) if marker == 1 => continue,
                Some(shown) => {
                    lines.push(format!("{line}{}", shown.place));
                    continue;
                }
                None => {}
            }
        }
        lines.push(line.to_string());
    }
    lines.join("\n")
}

/// `line` without its ANSI escape sequences (`ESC [ … letter`).
fn without_escapes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::{Error, ErrorClass, Location};
    use crate::{options::LoadOptions, prompt::Prompt};

    fn load_error(file: &str, source: &str) -> Error {
        match Prompt::from_source(file, source, &LoadOptions::default()) {
            Ok(_) => panic!("{file}: loaded"),
            Err(error) => error,
        }
    }

    #[test]
    fn the_headline_has_the_code() {
        let error = load_error("p.j2", "Hi {{ name | uper }}");
        let report = error.report();
        assert!(
            report.starts_with("error[TP0101]: unknown filter \"uper\"\n --> p.j2:1:14\n"),
            "{report}"
        );
        let warning = Error::new(ErrorClass::Warning, "likely wrong").with_kind("range-scope");
        assert!(
            warning
                .report()
                .starts_with(&format!("warning[{}]: likely wrong", warning.code())),
            "{}",
            warning.report()
        );
    }

    /// An unclosed block: the error at its opening tag, the end of the
    /// file pointed at too, in each syntax.
    #[test]
    fn an_unclosed_block_points_at_its_opener_and_the_end() {
        let cases = [
            (
                "p.j2",
                "{% for a in b %}\n{{ a }}\n",
                "this for is never closed",
            ),
            (
                "p.gotmpl",
                "{{ range .b }}\n{{ . }}\n",
                "this range is never closed",
            ),
            (
                "p.hbs",
                "{{#each b}}\n{{this}}\n",
                "this {{#each}} is never closed",
            ),
            (
                "p.django",
                "{% for a in b %}\n{{ a }}\n",
                "this for is never closed",
            ),
            (
                "p.django",
                "{% comment %}\nnot done\n",
                "this comment is never closed",
            ),
        ];
        for (file, source, label) in cases {
            let error = load_error(file, source);
            assert_eq!(error.primary_label(), Some(label), "{file}");
            let at = error.location().map(|at| (at.line, at.column));
            assert_eq!(at, Some((1, 1)), "{file}");
            let others: Vec<(usize, usize, &str)> = error
                .secondary_labels()
                .map(|(at, label)| (at.line, at.column, label))
                .collect();
            // The end of the last line (the file ends with a line break).
            let end = source
                .trim_end()
                .lines()
                .last()
                .unwrap_or("")
                .chars()
                .count()
                + 1;
            assert_eq!(others, [(2, end, "the template ends here")], "{file}");
            let report = error.report();
            let opener = source.lines().next().unwrap_or("");
            let expected = format!(
                "1 | {opener}\n  | {} {label}\n  |\n ::: {file}:2:{end}\n2 | {}\n  | {}- the template ends here\n",
                "^".repeat(opener.len()),
                source.lines().nth(1).unwrap_or(""),
                " ".repeat(end - 1),
            );
            assert!(report.contains(&expected), "{report}\nwanted:\n{expected}");
        }
    }

    #[test]
    fn a_block_left_open_on_one_line_is_one_snippet() {
        let error = load_error("p.j2", "{% if a %}x");
        let report = error.report();
        assert!(
            report.contains("1 | {% if a %}x\n  | ^^^^^^^^^^ - the template ends here\n  | |\n  | this if is never closed\n"),
            "{report}"
        );
        assert!(!report.contains(":::"), "{report}");
    }

    #[test]
    fn a_mismatched_closer_points_at_the_opener() {
        let error = load_error("p.j2", "{% for a in b %}\n{{ a }}\n{% endif %}\n");
        assert_eq!(
            error.message(),
            "{% endif %} does not close the for open here"
        );
        assert_eq!(error.location().map(|at| at.line), Some(3));
        assert_eq!(error.primary_label(), Some("this does not close the for"));
        let others: Vec<_> = error.secondary_labels().collect();
        assert_eq!(
            others,
            [(Location { line: 1, column: 1 }, "the for opened here")]
        );
        assert!(
            error.report().contains(
                " ::: p.j2:1:1\n1 | {% for a in b %}\n  | ---------------- the for opened here\n"
            ),
            "{}",
            error.report()
        );
        let error = load_error("p.j2", "x\n{% endif %}");
        assert_eq!(error.message(), "{% endif %} closes no open block");
        assert_eq!(error.secondary_labels().count(), 0);

        let error = load_error("p.django", "{% for a in b %}\n{{ a }}\n{% endif %}\n");
        assert_eq!(error.location().map(|at| at.line), Some(3));
        assert_eq!(error.primary_label(), Some("this does not close the for"));
        let others: Vec<_> = error.secondary_labels().collect();
        assert_eq!(
            others,
            [(Location { line: 1, column: 1 }, "the for opened here")]
        );

        let error = load_error("p.hbs", "{{#each b}}\n{{this}}\n{{/if}}\n");
        assert_eq!(error.location().map(|at| at.line), Some(3));
        assert_eq!(
            error.primary_label(),
            Some("this does not close the {{#each}}")
        );
        let others: Vec<_> = error.secondary_labels().collect();
        assert_eq!(
            others,
            [(Location { line: 1, column: 1 }, "the {{#each}} opened here")]
        );
    }

    /// `名前` takes four columns, `é` written as `e` and a combining
    /// accent one: the carets stand under what a terminal shows.
    #[test]
    fn carets_stand_under_wide_and_combining_characters() {
        let error = load_error("p.j2", "Hi {{ \"名前\" | uper }} {{ \"e\u{301}\" | uper }}");
        let all = error.all();
        let carets: Vec<String> = all
            .iter()
            .map(|error| {
                let report = error.report();
                let line = report
                    .lines()
                    .find(|line| line.contains('^'))
                    .unwrap_or("")
                    .to_string();
                line
            })
            .collect();
        // `Hi {{ "` 7 columns, `名前` 4, `" | ` 4: `uper` from column 16.
        assert_eq!(carets[0], format!("  | {}^^^^", " ".repeat(15)));
        // `Hi {{ "名前" | uper }} {{ "` 27 columns, `é` 1, `" | ` 4.
        assert_eq!(carets[1], format!("  | {}^^^^", " ".repeat(32)));
        // A tab shows as four columns, the carets after it too.
        let error = load_error("p.j2", "\t{{ x | uper }}");
        let report = error.report();
        assert!(
            report.contains("1 |     {{ x | uper }}\n  |            ^^^^\n"),
            "{report}"
        );
    }

    /// A 16 MB line: the error keeps a window of it, and the report shows
    /// that window.
    #[test]
    fn a_huge_line_is_never_kept_or_shown_whole() {
        let half = "a".repeat(8_000_000);
        let source = format!("{half}{{{{ x | uper }}}}{half}");
        let error = load_error("p.j2", &source);
        assert!(
            format!("{error:?}").len() < 4_000,
            "the error holds the line"
        );
        let report = error.report();
        assert!(report.len() < 2_000, "{}", report.len());
        assert!(report.contains("…aaaa"), "{report}");
        let line = report
            .lines()
            .find(|line| line.starts_with("1 | "))
            .unwrap_or("");
        let carets = report.lines().find(|line| line.contains('^')).unwrap_or("");
        // The window starts with `…`: columns, not bytes.
        let at = carets.find('^').unwrap_or(0);
        let under: String = line.chars().skip(at).take(4).collect();
        assert_eq!(under, "uper", "{report}");
        // An unclosed block on a huge line: both places are windows.
        let source = format!("{{% for a in b %}}{half}");
        let error = load_error("p.j2", &source);
        assert!(
            format!("{error:?}").len() < 4_000,
            "the error holds the line"
        );
        let report = error.report();
        assert!(report.len() < 2_000, "{}", report.len());
        assert!(
            report.contains(&format!(" ::: p.j2:1:{}\n", source.len() + 1)),
            "{report}"
        );
    }

    /// What a hostile template or host can put in a report: control
    /// characters, escapes, line breaks in labels, places past the end of
    /// a line, huge numbers. The report shows them as symbols, and never
    /// panics.
    #[test]
    fn hostile_text_is_shown_harmless() {
        let line = "a\u{1b}[31mred\u{7}\r\u{202e}b\tc\u{0}";
        let error = Error::new(ErrorClass::Render, "bad\u{1b}[2J message\nsecond line")
            .with_file("p\u{1b}]8;;x\n.j2")
            .with_location(Location { line: 2, column: 3 }, Some((line, 5)))
            .with_suggestion(Some("did you mean \u{1b}[31m\"x\"\n:::?".into()))
            .with_labels(&[("key\u{1b}".into(), "value\nnext".into())])
            .with_primary_label(Some("label\u{1b}\nnext".into()))
            .with_secondary(
                Location {
                    line: 9,
                    column: 99,
                },
                line,
                3,
                "end\u{1b}",
            );
        for report in [error.report(), error.report_styled()] {
            let plain = super::without_escapes(&report);
            assert!(
                !plain.contains('\u{7}') && !plain.contains('\u{0}'),
                "{report:?}"
            );
            assert!(!plain.contains("\u{1b}"), "{report:?}");
        }
        let report = error.report();
        assert!(!report.contains('\u{1b}'), "{report:?}");
        assert!(
            report.contains("= help: did you mean ␛[31m\"x\" :::?"),
            "{report}"
        );
        assert!(report.contains("= key␛: value next"), "{report}");
        assert!(report.contains(" ::: p␛]8;;x .j2:9:99\n"), "{report}");
        for (location, width) in [
            (
                Location {
                    line: usize::MAX,
                    column: usize::MAX,
                },
                usize::MAX,
            ),
            (Location { line: 0, column: 0 }, 0),
            (
                Location {
                    line: 1,
                    column: 40,
                },
                3,
            ),
        ] {
            let error = Error::new(ErrorClass::Parse, "x")
                .with_location(location, Some(("é\t名", width)))
                .with_secondary(location, "", width, "y")
                .with_secondary(location, "é\t名", usize::MAX, "z");
            let _ = (error.report(), error.report_styled());
        }
    }

    /// Lines of assorted characters (wide, combining, joined emoji,
    /// controls, tabs, right-to-left, carriage returns) with places and
    /// widths anywhere on them, past their end too: every report renders.
    #[test]
    fn any_line_and_place_renders() {
        let palette = [
            "a",
            "名",
            "e\u{301}",
            "\u{301}",
            "\t",
            "\r",
            "\u{0}",
            "\u{1b}",
            "\u{7f}",
            "\u{202e}",
            "👩\u{200d}💻",
            "\u{fe0f}",
            "\u{ad}",
            " ",
            "{{",
            "…",
            "\u{85}",
        ];
        let mut seed: u64 = 0x5eed;
        let mut next = |below: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % below.max(1)
        };
        for _ in 0..2_000 {
            let length = next(400);
            let line: String = (0..length).map(|_| palette[next(palette.len())]).collect();
            let chars = line.chars().count();
            let column = next(chars + 3) + 1;
            let width = next(chars + 3);
            let other = Location {
                line: next(5) + 1,
                column: next(chars + 3) + 1,
            };
            let error = Error::new(ErrorClass::Parse, line.clone())
                .with_file(line.clone())
                .with_location(Location { line: 1, column }, Some((line.as_str(), width)))
                .with_primary_label(Some(line.clone()))
                .with_secondary(other, &line, next(chars + 3), line.clone())
                .with_suggestion(Some(line.clone()));
            let report = error.report();
            assert!(report.starts_with("error[TP0100]: "), "{report}");
            assert!(!report.contains('\u{1b}'), "{report:?}");
            let _ = error.report_styled();
        }
    }

    #[test]
    fn thousands_of_errors_each_report() {
        let source = "{{ x | uper }}\n".repeat(5_000);
        let error = load_error("p.j2", &source);
        let all = error.all();
        assert_eq!(all.len(), crate::diagnostics::MAX_ERRORS_PER_FILE + 1);
        let started = std::time::Instant::now();
        let total: usize = all.iter().map(|error| error.report().len()).sum();
        assert!(total > 0);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn colour_only_when_asked() {
        let error = load_error("p.j2", "{% for a in b %}\n");
        let plain = error.report();
        let styled = error.report_styled();
        assert!(!plain.contains('\u{1b}'), "{plain}");
        assert!(styled.contains("\u{1b}["), "{styled}");
        assert_eq!(super::without_escapes(&styled), plain);
    }

    #[test]
    fn without_a_place_or_a_line() {
        let error = Error::new(ErrorClass::Io, "gone");
        assert_eq!(error.report(), "error[TP0500]: gone\n");
        let error = Error::new(ErrorClass::Io, "gone").with_file("p.j2");
        assert_eq!(error.report(), "error[TP0500]: gone\n--> p.j2\n");
        let error = Error::new(ErrorClass::Input, "bad")
            .with_location(Location { line: 2, column: 5 }, None)
            .with_suggestion(Some("fix".into()));
        assert_eq!(
            error.report(),
            "error[TP0400]: bad\n--> 2:5\n = help: fix\n"
        );
    }
}

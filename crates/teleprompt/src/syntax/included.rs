//! Where the text of included files sits in a template's combined source.
//!
//! The engine keeps one source text per program, so a front end that
//! includes other files (Go templates of other files) appends each file's
//! body to the template's body and moves the spans of the file's tree
//! there. An error whose span falls in a file's part is then placed in
//! that file — line and column in the file — and labelled with the places
//! that included it: `included by FILE:LINE:COL` for each file on the way
//! (innermost first), the prompt's own line last. Used by Go templates of
//! other files and Handlebars partial files.
//!
//! A render error names the calls the render took into the file (the
//! engine notes them as the error leaves each call); any other error, the
//! places that first included each file.

use std::collections::HashMap;
use std::ops::Range;

use crate::diagnostics::TemplateError;
use crate::document::Document;

/// An included file's place in the combined source.
#[derive(Debug)]
struct Placed {
    range: Range<usize>,
    document: Document,
    /// Where it was first included (a span of the combined source).
    site: Option<Range<usize>>,
}

/// The included files' places in the combined source.
#[derive(Debug, Default)]
pub(crate) struct Placements {
    files: Vec<Placed>,
    /// Where a label names a call, by the start of the call's span, when
    /// not at that start (Handlebars names a partial call by the
    /// partial's name, as it names the place a file was first included).
    call_sites: HashMap<usize, Range<usize>>,
}

impl Placements {
    /// Notes that `document`'s body sits at `range` of the combined
    /// source, first included at `site`.
    pub(crate) fn push(
        &mut self,
        range: Range<usize>,
        document: Document,
        site: Option<Range<usize>>,
    ) {
        self.files.push(Placed {
            range,
            document,
            site,
        });
    }

    /// Notes that a render error labels the call whose span starts at
    /// `call` with `site` (spans of the combined source).
    pub(crate) fn name_call(&mut self, call: usize, site: Range<usize>) {
        if call != site.start {
            self.call_sites.insert(call, site);
        }
    }

    /// The file holding byte `at` of the combined source (`None`: the
    /// template's own body).
    fn file_at(&self, at: usize) -> Option<usize> {
        self.files
            .iter()
            .position(|placed| placed.range.contains(&at))
    }

    /// The file that holds `span` of the combined source, and the span
    /// in it; `None`: the template's own body.
    pub(crate) fn file_of(&self, span: &Range<usize>) -> Option<(&Document, Range<usize>)> {
        let placed = self.files.get(self.file_at(span.start)?)?;
        let base = placed.range.start;
        let end = span.end.min(placed.range.end);
        Some((
            &placed.document,
            span.start - base..end.saturating_sub(base),
        ))
    }

    /// `FILE:LINE:COL` of byte `at` of the combined source, in a file.
    fn label(&self, file: usize, at: usize) -> String {
        let Some(placed) = self.files.get(file) else {
            return String::new();
        };
        let here = placed
            .document
            .location_of(at.saturating_sub(placed.range.start));
        format!("{}:{}:{}", placed.document.origin, here.line, here.column)
    }

    /// `error` (spans in the combined source), placed: an error in the
    /// body is returned as it is (its related errors placed), one in a
    /// file is placed there. A render error names the calls that led into
    /// the file (`calls`); any other, the places that first included it.
    pub(crate) fn place(&self, mut error: TemplateError) -> TemplateError {
        if let Some(related) = error.related.take() {
            error.related = Some(Box::new(related.map(|other| self.place(other))));
        }
        let Some(span) = error.span.clone() else {
            return error;
        };
        let Some(file) = self.file_at(span.start) else {
            // The body's other places are in the body (its end is where
            // the files start).
            let files_start = self.files.iter().map(|placed| placed.range.start).min();
            error.map_secondary(|other| match files_start {
                Some(start) if other.start > start => None,
                _ => Some(other),
            });
            return error;
        };
        let Some(placed) = self.files.get(file) else {
            return error;
        };
        let base = placed.range.start;
        // The file's other places, in the file (its end included).
        let range = placed.range.clone();
        error.map_secondary(|other| {
            (range.start <= other.start && other.end <= range.end)
                .then(|| other.start - base..other.end - base)
        });
        let calls = error.take_calls();
        // Errors found with this one stay with it, each placed on its own:
        // the prompt's document locates them.
        let related = error.related.take();
        let local = TemplateError {
            span: Some(span.start - base..span.end.saturating_sub(base)),
            ..error
        };
        let located = placed.document.locate(local);
        let calls: Option<Vec<Range<usize>>> = calls.map(|calls| {
            calls
                .sites
                .into_iter()
                .map(|call| self.call_sites.get(&call.start).cloned().unwrap_or(call))
                .collect()
        });
        let (labels, site) = self.sites(file, calls.as_deref());
        let mut placed = TemplateError::elsewhere(located.with_labels(&included_by(labels)), site);
        placed.related = related;
        placed
    }

    /// `error`, already placed in a file that the call at `site` (a span
    /// of the combined source) read: labelled with the places that led
    /// there.
    pub(crate) fn included_at(
        &self,
        error: crate::diagnostics::Error,
        site: Range<usize>,
    ) -> TemplateError {
        let (labels, site) = self.chain(Vec::new(), site);
        TemplateError::elsewhere(error.with_labels(&included_by(labels)), site)
    }

    /// The places that led into `file`, innermost first, as labels, and
    /// the place in the body where the chain starts. From the calls of a
    /// render when it has them, else from where each file was first
    /// included.
    fn sites(
        &self,
        file: usize,
        calls: Option<&[Range<usize>]>,
    ) -> (Vec<String>, Option<Range<usize>>) {
        let mut labels = Vec::new();
        let mut current = file;
        for call in calls.unwrap_or_default() {
            match self.file_at(call.start) {
                Some(holder) if holder == current => {}
                Some(holder) => {
                    labels.push(self.label(holder, call.start));
                    current = holder;
                }
                None => return (labels, Some(call.clone())),
            }
        }
        match self
            .files
            .get(current)
            .and_then(|placed| placed.site.clone())
        {
            Some(site) => self.chain(labels, site),
            None => (labels, None),
        }
    }

    /// Labels for `site` and the places that first included the file
    /// holding it, up to the body.
    fn chain(
        &self,
        mut labels: Vec<String>,
        mut site: Range<usize>,
    ) -> (Vec<String>, Option<Range<usize>>) {
        // Each file's first site lies in a file placed before it (or in
        // the body), so this ends; the bound is for safety only.
        for _ in 0..=self.files.len() {
            let Some(holder) = self.file_at(site.start) else {
                return (labels, Some(site));
            };
            labels.push(self.label(holder, site.start));
            match self
                .files
                .get(holder)
                .and_then(|placed| placed.site.clone())
            {
                Some(next) if self.file_at(next.start) != Some(holder) => site = next,
                _ => break,
            }
        }
        (labels, None)
    }
}

fn included_by(labels: Vec<String>) -> Vec<(String, String)> {
    labels
        .into_iter()
        .map(|label| ("included by".to_string(), label))
        .collect()
}

//! Rewrites of a template body before compilation, and the way back: errors
//! from the rewritten text are placed on the body as written.

use std::ops::Range;

use crate::diagnostics::TemplateError;

/// One replacement of a byte range of the original text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Edit {
    pub original: Range<usize>,
    pub replacement: String,
}

/// A rewritten text and the edits that made it, sorted and disjoint.
#[derive(Clone, Debug, Default)]
pub(crate) struct Edited {
    pub text: String,
    edits: Vec<Edit>,
}

impl Edited {
    /// Applies `edits` (sorted by position, not overlapping) to `original`.
    pub fn new(original: &str, mut edits: Vec<Edit>) -> Edited {
        edits.sort_by_key(|edit| edit.original.start);
        let mut text = String::with_capacity(original.len());
        let mut at = 0;
        edits.retain(|edit| {
            // Overlapping or out-of-range edits are dropped, not applied twice.
            let fits = edit.original.start >= at
                && original.get(edit.original.clone()).is_some()
                && original.get(at..edit.original.start).is_some();
            if fits {
                text.push_str(&original[at..edit.original.start]);
                text.push_str(&edit.replacement);
                at = edit.original.end;
            }
            fits
        });
        text.push_str(original.get(at..).unwrap_or(""));
        Edited { text, edits }
    }

    /// True when nothing was rewritten.
    pub fn is_unchanged(&self) -> bool {
        self.edits.is_empty()
    }

    /// The offset in the original text of `offset` in the rewritten text; a
    /// position inside a replacement maps to the start of what it replaced.
    pub fn to_original(&self, offset: usize) -> usize {
        let mut shift: isize = 0;
        for edit in &self.edits {
            let start = (edit.original.start as isize + shift).max(0) as usize;
            if offset < start {
                break;
            }
            if offset < start + edit.replacement.len() {
                return edit.original.start;
            }
            shift += edit.replacement.len() as isize - edit.original.len() as isize;
        }
        (offset as isize - shift).max(0) as usize
    }

    /// Moves an error's span from the rewritten text to the original.
    pub fn place(&self, mut error: TemplateError) -> TemplateError {
        if !self.is_unchanged() {
            let place = |span: std::ops::Range<usize>| {
                self.to_original(span.start)..self.to_original(span.end)
            };
            error.span = error.span.map(place);
            if let Some(elsewhere) = &mut error.elsewhere {
                elsewhere.site = elsewhere.site.take().map(place);
            }
        }
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_back_through_longer_and_shorter_edits() {
        let original = "ab OFF cd on ef";
        let edited = Edited::new(
            original,
            vec![
                Edit {
                    original: 3..6,
                    replacement: "false".into(),
                },
                Edit {
                    original: 10..12,
                    replacement: "t".into(),
                },
            ],
        );
        assert_eq!(edited.text, "ab false cd t ef");
        assert_eq!(edited.to_original(0), 0);
        assert_eq!(edited.to_original(4), 3, "inside a replacement");
        assert_eq!(edited.to_original(9), 7, "after the first edit");
        assert_eq!(edited.to_original(14), 13, "after both edits");
    }
}

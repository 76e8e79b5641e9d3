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
    /// The rewrite the edits were made on, when they were made on a
    /// rewritten text: positions map back through it too.
    under: Option<Box<Edited>>,
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
        Edited {
            text,
            edits,
            under: None,
        }
    }

    /// `edits` made on this rewrite's text (on the original text when
    /// nothing was rewritten): one rewrite whose positions map back to the
    /// original through both.
    pub fn then(self, edits: Vec<Edit>, original: &str) -> Edited {
        if edits.is_empty() {
            return self;
        }
        if self.is_unchanged() {
            return Edited::new(original, edits);
        }
        let mut outer = Edited::new(&self.text, edits);
        outer.under = Some(Box::new(self));
        outer
    }

    /// Each edit with where its replacement stands in the rewritten text
    /// (this rewrite's own edits, not those it was made on).
    pub fn replacements(&self) -> impl Iterator<Item = (&Edit, Range<usize>)> {
        let mut shift: isize = 0;
        self.edits.iter().map(move |edit| {
            let start = (edit.original.start as isize + shift).max(0) as usize;
            shift += edit.replacement.len() as isize - edit.original.len() as isize;
            (edit, start..start + edit.replacement.len())
        })
    }

    /// True when nothing was rewritten.
    pub fn is_unchanged(&self) -> bool {
        self.edits.is_empty() && self.under.as_ref().is_none_or(|under| under.is_unchanged())
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
                return match &self.under {
                    Some(under) => under.to_original(edit.original.start),
                    None => edit.original.start,
                };
            }
            shift += edit.replacement.len() as isize - edit.original.len() as isize;
        }
        let offset = (offset as isize - shift).max(0) as usize;
        match &self.under {
            Some(under) => under.to_original(offset),
            None => offset,
        }
    }

    /// Moves an error's span from the rewritten text to the original.
    pub fn place(&self, mut error: TemplateError) -> TemplateError {
        if !self.is_unchanged() {
            let place = |span: std::ops::Range<usize>| {
                self.to_original(span.start)..self.to_original(span.end)
            };
            error.span = error.span.map(place);
            error.map_secondary(|span| Some(place(span)));
            if let Some(elsewhere) = &mut error.elsewhere {
                elsewhere.site = elsewhere.site.take().map(place);
            }
            if let Some(related) = error.related.take() {
                error.related = Some(Box::new(related.map(|other| self.place(other))));
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

    #[test]
    fn edits_on_a_rewrite_map_back_through_both() {
        let original = "ab OFF cd";
        let first = Edited::new(
            original,
            vec![Edit {
                original: 3..6,
                replacement: "false".into(),
            }],
        );
        assert_eq!(first.text, "ab false cd");
        let both = first.then(
            vec![
                Edit {
                    original: 9..9,
                    replacement: "(".into(),
                },
                Edit {
                    original: 11..11,
                    replacement: ")".into(),
                },
            ],
            original,
        );
        assert_eq!(both.text, "ab false (cd)");
        assert!(!both.is_unchanged());
        assert_eq!(both.to_original(10), 7, "c, after both rewrites");
        assert_eq!(
            both.to_original(4),
            3,
            "inside the first rewrite's replacement"
        );
        assert_eq!(
            both.to_original(9),
            7,
            "an insertion maps to where it stands"
        );
        let plain = Edited::default().then(
            vec![Edit {
                original: 0..0,
                replacement: "(".into(),
            }],
            "x",
        );
        assert_eq!(plain.text, "(x");
        assert_eq!(plain.to_original(1), 0);
    }
}

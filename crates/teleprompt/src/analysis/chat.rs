//! Chat prompts that cannot say what their author meant, found on the
//! parse tree: a role marker with nothing after it but another marker (its
//! message can only be empty, and is dropped), text right after
//! `history()` before any role (it continues the role in force before the
//! history, after the whole conversation), and a body with nothing in it
//! (no message at all).
//!
//! Each syntax reads its tree into lists of [`Item`]s, one per block body,
//! and this module applies the rules. A list is read as far as it is
//! certain: a block (`if`, `for`) may print anything, so it ends what can
//! be said.

use std::ops::Range;

use crate::diagnostics::TemplateError;

/// One piece of a block body, as far as messages go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    /// `role(…)`.
    Role(Range<usize>),
    /// `history()`.
    History(Range<usize>),
    /// Whitespace, a comment, an assignment: prints nothing that stays.
    Blank,
    /// Text, or a value printed.
    Print(Range<usize>),
    /// A block or anything else whose output cannot be told.
    Other,
}

/// The warnings for one block body; `top` says it is the template's own
/// (its end is the end of the output).
pub(crate) fn warnings(items: &[Item], top: bool) -> Vec<TemplateError> {
    let mut found = Vec::new();
    let next = |from: usize| items.iter().skip(from).find(|item| **item != Item::Blank);
    for (index, item) in items.iter().enumerate() {
        match item {
            Item::Role(span) => {
                let empty = match next(index + 1) {
                    Some(Item::Role(_) | Item::History(_)) => true,
                    None => top,
                    _ => false,
                };
                if empty {
                    found.push(
                        TemplateError::parse(
                            Some(span.clone()),
                            "this role marker starts a message with nothing in it: the message is dropped",
                        )
                        .suggest(Some(
                            "put the message's text after it, or remove it".to_string(),
                        ))
                        .with_kind("empty-message"),
                    );
                }
            }
            Item::History(_) => {
                if let Some(Item::Print(span)) = next(index + 1) {
                    found.push(
                        TemplateError::parse(
                            Some(span.clone()),
                            "text right after history() has no role of its own: it continues the role before the history, after the whole conversation",
                        )
                        .suggest(Some(
                            "start it with a role: {{ role(\"user\") }}".to_string(),
                        ))
                        .with_kind("text-after-history"),
                    );
                }
            }
            Item::Blank | Item::Print(_) | Item::Other => {}
        }
    }
    if top && items.iter().all(|item| *item == Item::Blank) {
        found.push(
            // Placed where the body starts, so that reports (a GitHub
            // annotation, SARIF) can point at a line.
            TemplateError::parse(
                Some(0..0),
                "the template is empty: the prompt renders no message",
            )
            .with_kind("no-message"),
        );
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_with_nothing_between_them_and_text_after_history() {
        use Item::*;
        let kinds = |items: &[Item], top| {
            warnings(items, top)
                .iter()
                .map(|w| w.kind.unwrap_or_default())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            kinds(&[Role(0..1), Blank, Role(2..3), Print(4..5)], true),
            ["empty-message"]
        );
        assert_eq!(
            kinds(&[Role(0..1), Print(1..2), History(2..3), Blank], true),
            Vec::<&str>::new()
        );
        assert_eq!(
            kinds(&[Role(0..1)], true),
            ["empty-message"],
            "at the end of the template"
        );
        assert_eq!(
            kinds(&[Role(0..1)], false),
            Vec::<&str>::new(),
            "at the end of a block"
        );
        assert_eq!(
            kinds(&[Role(0..1), Other], true),
            Vec::<&str>::new(),
            "a block may print"
        );
        assert_eq!(
            kinds(&[History(0..1), Blank, Print(2..3)], true),
            ["text-after-history"]
        );
        assert_eq!(
            kinds(&[History(0..1), Role(1..2), Print(2..3)], true),
            Vec::<&str>::new()
        );
        assert_eq!(kinds(&[Blank, Blank], true), ["no-message"]);
        assert_eq!(kinds(&[], false), Vec::<&str>::new());
    }
}

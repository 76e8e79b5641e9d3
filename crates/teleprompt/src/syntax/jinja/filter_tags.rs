//! Block tags that minijinja does not have (`{% generation %}`, `{%
//! section "docs" %}`), rewritten before compiling into filter blocks
//! whose filter does the tag's work: only the tag names are rewritten (and
//! the tag's arguments closed), so whitespace control and every other
//! position stay as written.

use minijinja::machinery::{self, Token};

use crate::syntax::edits::{Edit, Edited};

/// `{% TAG ARGS %}…{% END_TAG %}` as `{% filter FILTER(ARGS) %}…{%
/// endfilter %}` (`FILTER` alone when the tag takes no arguments).
pub(super) fn as_filter_blocks(
    body: &str,
    syntax: minijinja::syntax::SyntaxConfig,
    (tag, end_tag): (&str, &str),
    filter: &str,
    arguments: bool,
) -> Edited {
    let mut edits = Vec::new();
    let mut previous_was_block_start = false;
    let mut open_arguments = false;
    for (token, span) in machinery::tokenize(body, false, syntax).map_while(Result::ok) {
        let range = span.start_offset as usize..span.end_offset as usize;
        if previous_was_block_start {
            match token {
                Token::Ident(name) if name == tag => {
                    let open = if arguments { "(" } else { "" };
                    edits.push(Edit {
                        original: range,
                        replacement: format!("filter {filter}{open}"),
                    });
                    open_arguments = arguments;
                }
                Token::Ident(name) if name == end_tag => edits.push(Edit {
                    original: range,
                    replacement: "endfilter".to_string(),
                }),
                _ => {}
            }
        } else if open_arguments && matches!(token, Token::BlockEnd) {
            edits.push(Edit {
                original: range.start..range.start,
                replacement: ")".to_string(),
            });
            open_arguments = false;
        }
        previous_was_block_start = matches!(token, Token::BlockStart);
    }
    Edited::new(body, edits)
}

//! `{% generation %}`, the tag `transformers` adds to Jinja to mark what
//! the assistant generates: rewritten before compiling into a filter
//! block whose filter prints its content between generation markers.

use minijinja::machinery;

use crate::syntax::edits::{Edit, Edited};

/// The filter a `{% generation %}` block becomes.
pub(super) const GENERATION_FILTER: &str = "teleprompt_generation";

/// `{% generation %}…{% endgeneration %}` (the tag `transformers` adds to
/// mark what the assistant generates) as a filter block that prints its
/// content unchanged between generation markers: `{%- generation %}` keeps
/// its whitespace control, only the tag name is rewritten.
pub(super) fn generation_blocks(body: &str, syntax: minijinja::syntax::SyntaxConfig) -> Edited {
    use minijinja::machinery::Token;
    let mut edits = Vec::new();
    let mut previous_was_block_start = false;
    for (token, span) in machinery::tokenize(body, false, syntax).map_while(Result::ok) {
        if previous_was_block_start {
            let replacement = match token {
                Token::Ident("generation") => Some(format!("filter {GENERATION_FILTER}")),
                Token::Ident("endgeneration") => Some("endfilter".to_string()),
                _ => None,
            };
            if let Some(replacement) = replacement {
                edits.push(Edit {
                    original: span.start_offset as usize..span.end_offset as usize,
                    replacement,
                });
            }
        }
        previous_was_block_start = matches!(token, Token::BlockStart);
    }
    Edited::new(body, edits)
}

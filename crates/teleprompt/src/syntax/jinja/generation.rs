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

/// Whether a chat template has a `{% generation %}` block (what
/// `transformers` looks for before it makes assistant masks).
pub(crate) fn has_generation_blocks(body: &str) -> bool {
    memchr::memmem::find(body.as_bytes(), b"generation").is_some()
        && !generation_blocks(body, minijinja::syntax::SyntaxConfig::default()).is_unchanged()
}

/// Where a chat template first names `name` in an expression (`{{
/// bos_token }}`, `{{ bos_token + … }}`): the identifier's span.
pub(crate) fn first_name(body: &str, name: &str) -> Option<std::ops::Range<usize>> {
    use minijinja::machinery::Token;
    memchr::memmem::find(body.as_bytes(), name.as_bytes())?;
    machinery::tokenize(body, false, minijinja::syntax::SyntaxConfig::default())
        .map_while(Result::ok)
        .find(|(token, _)| matches!(token, Token::Ident(ident) if *ident == name))
        .map(|(_, span)| span.start_offset as usize..span.end_offset as usize)
}

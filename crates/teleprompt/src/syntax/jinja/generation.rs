//! `{% generation %}`, the tag `transformers` adds to Jinja to mark what
//! the assistant generates: rewritten before compiling into a filter
//! block whose filter prints its content between generation markers.

use minijinja::machinery;

use crate::syntax::edits::Edited;

/// The filter a `{% generation %}` block becomes.
pub(super) const GENERATION_FILTER: &str = "teleprompt_generation";

/// `{% generation %}…{% endgeneration %}` (the tag `transformers` adds to
/// mark what the assistant generates) as a filter block that prints its
/// content unchanged between generation markers: `{%- generation %}` keeps
/// its whitespace control, only the tag name is rewritten.
pub(super) fn generation_blocks(body: &str, syntax: minijinja::syntax::SyntaxConfig) -> Edited {
    super::filter_tags::as_filter_blocks(
        body,
        syntax,
        ("generation", "endgeneration"),
        GENERATION_FILTER,
        false,
    )
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

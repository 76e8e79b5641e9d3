//! Hooks for the fuzz targets (the `fuzzing` feature): not a public API.

use serde_json::Value;

use crate::options::Strictness;

/// A plain Jinja template rendered with the direct path and on minijinja
/// alone: the text, or the error's message, of each.
#[derive(Debug)]
pub struct Both {
    pub direct: Result<String, String>,
    pub minijinja: Result<String, String>,
    /// Whether the direct path rendered (did not give up).
    pub rendered_directly: bool,
    /// Why the template is not lowered, if it is not.
    pub not_lowered: Option<String>,
    /// Why the direct path gave the render up, if it did.
    pub declined: Option<String>,
}

/// Renders `body` as a plain Jinja template (a chat template with `chat`)
/// over `data`, with the direct path (`syntax/jinja/lower/`) and on
/// minijinja alone: `None` when it does not compile.
pub fn jinja_both(
    body: &str,
    data: Value,
    (strictness, chat): (Strictness, bool),
    jinja: crate::options::JinjaOptions,
    limits: crate::limits::Limits,
) -> Option<Both> {
    let data = crate::data::Data::new(data);
    let both = crate::syntax::jinja_both(body, &data, (strictness, chat), jinja, limits)?;
    Some(Both {
        direct: both.direct,
        minijinja: both.minijinja,
        rendered_directly: both.rendered_directly,
        not_lowered: both.not_lowered,
        declined: both.declined,
    })
}

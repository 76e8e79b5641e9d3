//! The Django/pongo2 dialect (`syntax: django`), as Rapida's prompts are
//! written for pongo2: translated into Jinja that minijinja runs, with
//! pongo2's filters and tags added to the environment.
//!
//! The translation is a list of [`Edit`]s on the body as written, so every
//! error minijinja reports on the translated text is placed back on the
//! line and column the author wrote.

use minijinja::Environment;

use crate::diagnostics::TemplateError;
use crate::syntax::edits::Edited;

/// Filters this dialect adds (for the load-time check of filter names).
pub(crate) const FILTERS: &[&str] = &[];

/// Adds the dialect's filters and helper functions to `env`.
pub(crate) fn register(_env: &mut Environment<'static>) {}

/// Rewrites a Django/pongo2 body into Jinja. A body that needs no change
/// gives an unchanged [`Edited`].
pub(crate) fn translate(body: &str) -> Result<Edited, TemplateError> {
    Ok(Edited::new(body, Vec::new()))
}

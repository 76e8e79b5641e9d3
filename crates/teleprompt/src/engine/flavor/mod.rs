//! What each flavor of program has of its own at render time.
//!
//! - [`go`]: Go's `fmt` printing rules, used by `print`, `printf` and by
//!   actions.
//! - [`handlebars`]: the Handlebars-only helpers of Semantic Kernel, Forge
//!   and Dotprompt, with their table, and JavaScript's printing of values.
//! - [`jinja`]: Jinja's particulars: what a lowered program leaves to
//!   minijinja, a chat template's messages.

pub(crate) mod go;
pub(crate) mod handlebars;
pub(crate) mod jinja;

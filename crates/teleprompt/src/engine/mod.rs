//! teleprompt's own template evaluator, shared by the Go and Handlebars
//! front ends.
//!
//! - [`program`]: the compiled representation both front ends produce —
//!   instructions over expressions, contexts that blocks push (`with`,
//!   `range`), paths from the current context or a variable (`$` is the
//!   root), functions resolved at compile time, variable slots, named
//!   sub-templates.
//! - [`value`]: a borrowed view of the data plus the values functions make.
//! - [`render`]: the evaluator, with strictness and bounds.
//! - [`gofmt`]: Go's `fmt` printing rules, used by `print`, `printf` and
//!   by actions.

pub(crate) mod gofmt;
pub(crate) mod program;
pub(crate) mod render;
pub(crate) mod value;

pub(crate) use render::render;

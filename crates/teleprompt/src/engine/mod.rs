//! teleprompt's own template evaluator, shared by the Go and Handlebars
//! front ends and by Jinja's direct path. A render takes its scope
//! ([`crate::scope::RenderScope`]: budget, role markers) as an argument;
//! the engine knows nothing else of the render around it.
//!
//! - [`program`]: the compiled representation both front ends produce —
//!   instructions over expressions, contexts that blocks push (`with`,
//!   `range`), paths from the current context or a variable (`$` is the
//!   root), functions resolved at compile time, variable slots, named
//!   sub-templates.
//! - [`value`]: a borrowed view of the data plus the values functions make.
//! - [`render`]: the evaluator's instruction loop: blocks, loops,
//!   sections, template calls and partial blocks, printing, expressions.
//! - [`lookup`]: field lookup (paths read key by key), with the error text
//!   each flavor gives for a missing key.
//! - [`builtins`]: the built-in functions (`call` and its family:
//!   `index`, `slice`, `len`, printing, escaping, host functions, role
//!   markers) and the entry to the Handlebars helpers.
//! - [`ops`]: operators: Go's comparisons and Jinja's operators.
//! - [`lists`]: Jinja's filters that order a list or drop its repeated
//!   items (`min`, `max`, `sort`, `unique`).
//! - [`budget`]: the bounds bookkeeping (output, text built, steps).
//! - [`fail`]: how the evaluator builds its errors.
//! - [`escape`]: Go's `html`, `js` and `urlquery` escaping.
//! - [`flavor`]: each flavor's particulars: Go's printing rules
//!   ([`flavor::go`]), the Handlebars helper table
//!   ([`flavor::handlebars`]), Jinja's ([`flavor::jinja`]).

mod budget;
mod builtins;
pub(crate) mod escape;
mod fail;
pub(crate) mod flavor;
mod lists;
mod lookup;
mod ops;
pub(crate) mod program;
pub(crate) mod render;
mod texts;
pub(crate) mod value;

pub(crate) use render::render;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::data::Data;
use crate::diagnostics::TemplateError;
use crate::scope::RenderScope;

/// What the Go and Handlebars front ends hand to the library: a compiled
/// program and the root names its template may read.
#[derive(Debug)]
pub(crate) struct EngineTemplate {
    program: program::Program,
    /// Names the template may read from the root; `None`: it reads the
    /// root as a whole (`{{ toJSON . }}`, `{{this}}`), so any name.
    reads: Option<BTreeSet<String>>,
    /// The length of the last render's output: the next render reserves
    /// about that much up front instead of growing (and copying) its
    /// output as it goes. A hint only: renders on other threads may race
    /// to set it, and any value is correct.
    last_len: AtomicUsize,
}

impl EngineTemplate {
    pub(crate) fn new(program: program::Program, reads: Option<BTreeSet<String>>) -> Self {
        EngineTemplate {
            program,
            reads,
            last_len: AtomicUsize::new(0),
        }
    }

    /// Whether the template may read `name` from the root of the data.
    pub(crate) fn reads(&self, name: &str) -> bool {
        self.reads.as_ref().is_none_or(|names| names.contains(name))
    }

    /// The bounds a render of the template is held to.
    pub(crate) fn limits(&self) -> crate::limits::Limits {
        self.program.limits
    }

    /// Renders against `data` in `scope`.
    pub(crate) fn render(
        &self,
        data: &Data,
        scope: &mut RenderScope,
    ) -> Result<String, TemplateError> {
        let last = self.last_len.load(Ordering::Relaxed);
        let expect = last + last / 8;
        let mut out = render(&self.program, data, expect, scope).map_err(|error| *error)?;
        if out.len() != last {
            self.last_len.store(out.len(), Ordering::Relaxed);
            if out.capacity() > 2 * out.len() + 4096 {
                // Much shorter than the last render: do not hand the host
                // the room reserved for the long one.
                out.shrink_to_fit();
            }
        }
        Ok(out)
    }
}

/// Spans are 32-bit: a body over 4 GiB is refused before it is parsed.
pub(crate) fn check_size(body: &str) -> Result<(), TemplateError> {
    match u32::try_from(body.len()) {
        Ok(_) => Ok(()),
        Err(_) => Err(TemplateError::parse(
            None,
            "the template is larger than 4 GiB",
        )),
    }
}

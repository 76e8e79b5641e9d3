//! The compile pipeline of the front ends on teleprompt's own engine (Go
//! and Handlebars), written once, and the template they compile to.
//!
//! A front end ([`Front`]) says how to parse a body, load the files it
//! includes, lower the tree onto the engine's program and find the root
//! names it reads; [`compile_all`] runs those steps in one order for both:
//! the body's size, the parse, the included files, the size of the
//! combined source, the lowering (its errors placed in the file they are
//! in), the root reads. [`PlacedTemplate`] is the result: the engine's
//! template and where the included files sit in its source, so that a
//! render error in one of them is placed there.

use std::ops::Range;

use std::collections::BTreeSet;

use crate::data::Data;
use crate::diagnostics::{Findings, TemplateError};
use crate::engine;
use crate::scope::RenderScope;
use crate::syntax::included::Placements;
use crate::syntax::CompileOptions;

/// What a front end on the engine does at each step of [`compile_all`].
pub(crate) trait Front {
    /// The parsed body.
    type Tree;
    /// The files the body includes, and the body followed by theirs.
    type Loaded: LoadedFiles;
    /// What the template keeps of the loaded files beside its
    /// [`PlacedTemplate`], for the front end's own analyses.
    type Kept;

    /// Parses `body`, nested no deeper than `max_nesting`.
    fn parse(&self, body: &str, max_nesting: usize) -> Result<Self::Tree, TemplateError>;

    /// Reads the files `tree` (parsed from `body`) includes.
    fn load(
        &self,
        tree: &mut Self::Tree,
        body: &str,
        options: &CompileOptions,
    ) -> Result<Self::Loaded, TemplateError>;

    /// Lowers `tree` onto the engine's program: the program, and the
    /// errors that do not stop it (spans in the combined source).
    fn lower(
        &self,
        tree: &Self::Tree,
        loaded: &Self::Loaded,
        options: &CompileOptions,
    ) -> Result<(engine::program::Program, Findings), TemplateError>;

    /// The root names the template may read, included files' too (`None`:
    /// it may read the root whole).
    fn root_reads(tree: &Self::Tree, loaded: &Self::Loaded) -> Option<BTreeSet<String>>;

    /// Where the files sit in the combined source, and what else the
    /// template keeps of them.
    fn keep(loaded: Self::Loaded) -> (Placements, Self::Kept);
}

/// The files a body includes, as [`compile_all`] reads them.
pub(crate) trait LoadedFiles {
    /// The body followed by each file's body: the text of every span.
    fn source(&self) -> &str;
    /// Where each file sits in [`LoadedFiles::source`].
    fn placed(&self) -> &Placements;
}

/// A template compiled onto the engine, with where its included files sit
/// in its source.
#[derive(Debug)]
pub(crate) struct PlacedTemplate {
    engine: engine::EngineTemplate,
    placed: Placements,
}

impl PlacedTemplate {
    /// Whether the template may read `name` from the root of the data.
    pub(crate) fn reads(&self, name: &str) -> bool {
        self.engine.reads(name)
    }

    /// The bounds a render of the template is held to.
    pub(crate) fn limits(&self) -> crate::limits::Limits {
        self.engine.limits()
    }

    /// Renders against `data` in `scope`; errors in an included file are
    /// placed there.
    pub(crate) fn render(
        &self,
        data: &Data,
        scope: &mut RenderScope,
    ) -> Result<String, TemplateError> {
        self.engine
            .render(data, scope)
            .map_err(|error| self.place(error))
    }

    /// Where `span` of the source is: in the body, or in an included file.
    pub(crate) fn place_span(&self, span: Range<usize>) -> super::Place<'_> {
        match self.placed.file_of(&span) {
            Some((document, span)) => super::Place::File(document, span),
            None => super::Place::Body(span),
        }
    }

    /// `error` (spans in the body, or in an included file's text after
    /// it) placed in the file it is in.
    pub(crate) fn place(&self, error: TemplateError) -> TemplateError {
        self.placed.place(error)
    }
}

/// Compiles `body` with `front`, going on past the errors that do not stop
/// it: the template, what the front end keeps of the included files, and
/// the first of those errors carrying the others (a template with errors
/// is only for warnings: it must not render).
pub(crate) fn compile_all<F: Front>(
    front: &F,
    body: &str,
    options: &CompileOptions,
) -> Result<(PlacedTemplate, F::Kept, Option<TemplateError>), TemplateError> {
    engine::check_size(body)?;
    let mut tree = front.parse(body, options.limits.nesting())?;
    let loaded = front.load(&mut tree, body, options)?;
    engine::check_size(loaded.source())?;
    let (program, found) = front
        .lower(&tree, &loaded, options)
        .map_err(|error| loaded.placed().place(error))?;
    let found = found.map(|error| loaded.placed().place(error));
    let reads = F::root_reads(&tree, &loaded);
    let (placed, kept) = F::keep(loaded);
    let template = PlacedTemplate {
        engine: engine::EngineTemplate::new(program, reads),
        placed,
    };
    Ok((template, kept, found.into_error()))
}

//! Template front ends, one per syntax. Each compiles a body and renders it
//! against [`Data`], reporting errors as byte ranges in the body.

pub(crate) mod builtin_types;
pub(crate) mod edits;
pub(crate) mod engine_front;
pub(crate) mod go;
pub(crate) mod handlebars;
pub(crate) mod host_calls;
pub(crate) mod included;
pub(crate) mod jinja;
#[cfg(feature = "fuzzing")]
pub(crate) use jinja::both as jinja_both;
pub(crate) mod role_tags;
pub(crate) use jinja::{first_name as first_jinja_name, has_generation_blocks};

use crate::diagnostics::TemplateError;
use crate::functions::Functions;
use crate::messages::Role;
use crate::scope::RenderScope;
use crate::{data::Data, options::MessageReader, options::Strictness, options::Syntax};

/// What a front end needs to compile a body.
#[derive(Clone, Debug)]
pub(crate) struct CompileOptions {
    /// What missing values do.
    pub strictness: Strictness,
    /// Host functions callable by name.
    pub functions: Functions,
    /// Jinja whitespace options (front matter over host), unresolved.
    pub jinja: crate::options::JinjaOptions,
    /// Bounds on a render (the host's, lowered by the front matter).
    pub limits: crate::limits::Limits,
    /// Where included files are found; `None`: nothing is read from files.
    pub includes: Option<crate::document::include_root::Includes>,
    /// The system the prompt was written for: which Handlebars helpers
    /// its names call, and where that system's meaning differs from the
    /// others' (Semantic Kernel's `json` of a string, its booleans).
    pub origin: Origin,
    /// The roles data may choose where the origin takes roles from data
    /// ([`crate::LoadOptions::data_roles`]), as `DataRole` wants them:
    /// names separated by commas.
    pub data_roles: String,
}

/// The system a prompt was written for, told by its kind of file and
/// front matter: each sees its own system's Handlebars helpers, and no
/// other's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Origin {
    /// teleprompt's own prompt files (and plain Handlebars, such as
    /// Forge's templates): every helper teleprompt has.
    #[default]
    Teleprompt,
    /// Semantic Kernel: SK prompt YAML, `messages: sk-tags`, or front
    /// matter `template_format: handlebars`.
    SemanticKernel,
    /// A Google Dotprompt `.prompt` file.
    Dotprompt,
}

impl CompileOptions {
    /// At `strictness`, with nothing else: no host functions, files or
    /// whitespace options, the default limits (for the tests).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn plain(strictness: Strictness) -> CompileOptions {
        CompileOptions {
            strictness,
            functions: Functions::default(),
            jinja: crate::options::JinjaOptions::default(),
            limits: crate::limits::Limits::DEFAULT,
            includes: None,
            origin: Origin::Teleprompt,
            data_roles: "user,assistant".into(),
        }
    }
}

/// A compiled template body, in any syntax.
#[derive(Debug)]
pub(crate) struct Template {
    compiled: Compiled,
    /// The body after the role readers rewrote it, to place errors on the
    /// body as written.
    source: edits::Edited,
    /// Where closing tags (`</message>`) became role markers, in the
    /// rewritten text.
    closing: Vec<std::ops::Range<usize>>,
}

/// Where a stretch of a template's source is, in the files as written.
pub(crate) enum Place<'t> {
    /// In the prompt's body (a byte range of it).
    Body(std::ops::Range<usize>),
    /// In a file the body includes.
    File(&'t crate::document::Document, std::ops::Range<usize>),
}

#[derive(Debug)]
enum Compiled {
    Jinja(Box<jinja::JinjaTemplate>),
    Go(go::GoTemplate),
    Handlebars(handlebars::HandlebarsTemplate),
}

impl Template {
    /// Compiles a body. A front end goes on past the errors that do not
    /// stop it (unknown names, wrong argument counts, unresolvable
    /// templates): then the template comes with the first of them, which
    /// carries the others, and is only good for warnings, not to render.
    pub(crate) fn compile(
        syntax: Syntax,
        body: &str,
        reader: MessageReader,
        default_role: Role,
        thread: Option<&str>,
        options: &CompileOptions,
    ) -> Result<(Template, Option<TemplateError>), TemplateError> {
        let source = role_tags::rewrite(body, reader, syntax, default_role, thread);
        let text = source.text.as_str();
        let compiled = match syntax {
            Syntax::Jinja | Syntax::Django | Syntax::ChatTemplate => {
                jinja::JinjaTemplate::compile_all(text, syntax, options)
                    .map(|(template, found)| (Compiled::Jinja(Box::new(template)), found))
            }
            Syntax::Go => go::compile_all(text, options)
                .map(|(template, found)| (Compiled::Go(template), found)),
            Syntax::Handlebars => {
                handlebars::compile_all(text, options, reader == MessageReader::Dotprompt)
                    .map(|(template, found)| (Compiled::Handlebars(template), found))
            }
        };
        // Where `</message>` became a role marker: it ends a message, so
        // nothing need follow it.
        let closing = source
            .replacements()
            .filter(|(edit, _)| {
                body.get(edit.original.clone())
                    .is_some_and(|text| text.starts_with("</"))
            })
            .map(|(_, span)| span)
            .collect();
        match compiled {
            Ok((compiled, found)) => {
                let found = found.map(|error| source.place(error));
                let template = Template {
                    compiled,
                    source,
                    closing,
                };
                Ok((template, found))
            }
            Err(error) => Err(source.place(error)),
        }
    }

    /// Whether the template may read `name` from the root of the data
    /// (true when the front end cannot tell).
    pub(crate) fn reads(&self, name: &str) -> bool {
        match &self.compiled {
            Compiled::Jinja(template) => template.reads().contains(name),
            Compiled::Go(template) => template.reads(name),
            Compiled::Handlebars(template) => template.reads(name),
        }
    }

    /// What the template reads of its data: paths, each with where it is
    /// first read in the template's text (`source.text`).
    pub(crate) fn inputs(&self) -> Option<crate::analysis::Inputs> {
        match &self.compiled {
            Compiled::Go(template) => template.inputs(&self.source.text),
            Compiled::Jinja(template) => Some(template.inputs()),
            Compiled::Handlebars(_) => handlebars::read_inputs(&self.source.text),
        }
    }

    /// Likely mistakes that do not stop the template, placed on the body as
    /// written (class `Warning`). `root` says which names are the data's
    /// top level whether or not the template reads them there;
    /// `structured`, which paths are mappings or lists (declared so).
    pub(crate) fn warnings(
        &self,
        root: &dyn Fn(&str) -> bool,
        structured: &dyn Fn(&[crate::analysis::Step]) -> bool,
    ) -> Vec<TemplateError> {
        let found = match &self.compiled {
            Compiled::Go(template) => {
                let mut found = template.scope_warnings(&self.source.text, root);
                found.extend(go::chat_warnings(&self.source.text));
                found.extend(self.printed_structure_warnings("{{ toJSON $.", " }}", structured));
                found
            }
            Compiled::Jinja(template) => {
                let mut found = template.warnings();
                found.extend(self.printed_structure_warnings("{{ ", "|tojson }}", structured));
                found
            }
            Compiled::Handlebars(_) => {
                let mut found = handlebars::chat_warnings(&self.source.text);
                found.extend(self.printed_structure_warnings("{{json @root.", "}}", structured));
                found
            }
        };
        found
            .into_iter()
            .filter(|warning| {
                // A closing tag's marker ends a message; it starts none.
                let at = warning.span.as_ref().map(|span| span.start);
                warning.kind != Some("empty-message")
                    || !at.is_some_and(|at| self.closing.iter().any(|span| span.contains(&at)))
            })
            .map(|warning| self.place_warning(warning))
            .collect()
    }

    /// Places a warning found on the template's text (a span of what
    /// [`Template::inputs`] reports) on the body as written.
    pub(crate) fn place_warning(&self, mut warning: TemplateError) -> TemplateError {
        // The class first: a warning in another file is placed there as one.
        warning.class = crate::diagnostics::ErrorClass::Warning;
        let warning = match &self.compiled {
            Compiled::Go(template) => template.place(warning),
            _ => warning,
        };
        self.source.place(warning)
    }

    /// A mapping or list printed as it is where the template also reads
    /// its keys, or where `structured` says it is one: Go prints `map[…]`,
    /// Handlebars `[object Object]`, Jinja a Python dict. The suggestion
    /// prints it as JSON (`open` + path + `close`).
    fn printed_structure_warnings(
        &self,
        open: &str,
        close: &str,
        structured: &dyn Fn(&[crate::analysis::Step]) -> bool,
    ) -> Vec<TemplateError> {
        let Some(inputs) = self.inputs() else {
            return Vec::new();
        };
        inputs
            .printed_structures(structured)
            .into_iter()
            // A list's element read both whole and by its keys is most
            // often `.issue.…` inside a `range` (warned on its own).
            .filter(|(path, _, _)| !path.contains("[]"))
            .map(|(path, span, inside)| {
                let why = if inside {
                    "the template also reads its keys or items"
                } else {
                    "input.schema declares it a mapping or list"
                };
                TemplateError::parse(
                    Some(span),
                    format!(
                        "`{path}` is printed as it is, but {why}: a mapping or list prints as the engine's raw form, not as text"
                    ),
                )
                .suggest(Some(format!(
                    "print it as JSON: {open}{path}{close}, or print its fields"
                )))
                .with_kind("printed-structure")
            })
            .collect()
    }

    /// A Jinja template's direct path (`jinja::lower`): the renders it
    /// gave and gave up, or why the template is not lowered; `None` for
    /// the other syntaxes (always on the engine).
    #[cfg(feature = "unstable")]
    pub(crate) fn direct_path(&self) -> Option<Result<(u32, u32), &str>> {
        match &self.compiled {
            Compiled::Jinja(template) => Some(template.direct_path()),
            _ => None,
        }
    }

    /// The bounds a render of the template is held to (the host's, as
    /// the front matter lowered them): a render's scope is made with them.
    pub(crate) fn limits(&self) -> crate::limits::Limits {
        match &self.compiled {
            Compiled::Jinja(template) => template.limits(),
            Compiled::Go(template) => template.limits(),
            Compiled::Handlebars(template) => template.limits(),
        }
    }

    /// Where `span` of the source a render ran is (of the template
    /// `file` names, for a render on minijinja: an included one).
    pub(crate) fn place_span(
        &self,
        file: Option<&str>,
        span: std::ops::Range<usize>,
    ) -> Option<Place<'_>> {
        let place = match &self.compiled {
            Compiled::Jinja(template) => template.place_span(file, span)?,
            Compiled::Go(template) => template.place_span(span),
            Compiled::Handlebars(template) => template.place_span(span),
        };
        Some(match place {
            Place::Body(span) => {
                Place::Body(self.source.to_original(span.start)..self.source.to_original(span.end))
            }
            other => other,
        })
    }

    /// Renders against `data` in `scope` (made with [`Template::limits`]).
    pub(crate) fn render(
        &self,
        data: &Data,
        scope: &mut RenderScope,
    ) -> Result<String, TemplateError> {
        let rendered = match &self.compiled {
            Compiled::Jinja(template) => template.render(data, scope),
            Compiled::Go(template) => template.render(data, scope),
            Compiled::Handlebars(template) => template.render(data, scope),
        };
        rendered.map_err(|error| self.source.place(error))
    }
}

//! Template front ends, one per syntax. Each compiles a body and renders it
//! against [`Data`], reporting errors as byte ranges in the body.

pub(crate) mod go;
pub(crate) mod jinja;

use crate::diagnostics::TemplateError;
use crate::{Data, Strictness, Syntax};

/// What a front end needs to compile a body.
#[derive(Clone, Debug)]
pub(crate) struct CompileOptions {
    /// What missing values do.
    pub strictness: Strictness,
}

/// A compiled template body in one of the syntaxes.
#[derive(Debug)]
pub(crate) enum Compiled {
    Jinja(Box<jinja::JinjaTemplate>),
    Go(go::GoTemplate),
}

impl Compiled {
    pub(crate) fn compile(
        syntax: Syntax,
        body: &str,
        options: &CompileOptions,
    ) -> Result<Compiled, TemplateError> {
        match syntax {
            Syntax::Jinja => jinja::JinjaTemplate::compile(body, options)
                .map(|template| Compiled::Jinja(Box::new(template))),
            Syntax::Go => go::GoTemplate::compile(body, options).map(Compiled::Go),
            Syntax::Handlebars => Err(TemplateError::parse(
                None,
                "the handlebars syntax is not available yet in this version of teleprompt",
            )),
        }
    }

    pub(crate) fn render(&self, data: &Data) -> Result<String, TemplateError> {
        match self {
            Compiled::Jinja(template) => template.render(data),
            Compiled::Go(template) => template.render(data),
        }
    }
}

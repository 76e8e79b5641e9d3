//! Go text/template syntax (not yet implemented).

use crate::diagnostics::TemplateError;
use crate::syntax::CompileOptions;
use crate::Data;

/// A compiled Go template.
#[derive(Debug)]
pub(crate) struct GoTemplate;

impl GoTemplate {
    pub(crate) fn compile(_body: &str, _options: &CompileOptions) -> Result<Self, TemplateError> {
        Err(TemplateError::parse(
            None,
            "the go syntax is not available yet in this version of teleprompt",
        ))
    }

    pub(crate) fn render(&self, _data: &Data) -> Result<String, TemplateError> {
        Err(TemplateError::render(None, "the go syntax is not available yet"))
    }
}

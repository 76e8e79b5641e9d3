//! Jinja syntax on minijinja.
//!
//! minijinja renders; this module fills its gaps for prompts:
//! - unknown filters, tests and functions are found at load time, in every
//!   branch (minijinja only notices them when that code runs): `check`;
//! - Django/pongo2 spellings `{% autoescape off %}` / `on` are accepted;
//! - the data is handed over as lazy objects over [`Data`], never converted
//!   up front (`value`), and a missing key is reported with its full path
//!   and the closest key that exists (`errors`).

mod check;
mod errors;
mod filters;
mod names;
mod value;

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::sync::Arc;

use minijinja::machinery;
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior, Value as JValue};

use crate::data::Data;
use crate::diagnostics::TemplateError;
use crate::messages;
use crate::syntax::edits::Edited;
use crate::syntax::CompileOptions;
use crate::Strictness;

use check::Checker;
use errors::{convert_error, unclosed_block_error, MissLog};
use filters::{guard_collection_filters, register_host_functions, template_call, tojson_filter};
use names::{FILTERS, FUEL, IMPLICIT_CALLABLES};
use value::Node;

const TEMPLATE_NAME: &str = "prompt";

/// A compiled Jinja body.
pub(crate) struct JinjaTemplate {
    env: Environment<'static>,
    /// The pongo2 spellings rewritten for minijinja, to place errors on
    /// the body as written.
    source: Edited,
    /// The body as written, for placing render errors.
    body: String,
    /// Names the template reads at any level (an over-approximation of the
    /// root names it uses).
    reads: BTreeSet<String>,
}

impl fmt::Debug for JinjaTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JinjaTemplate").finish_non_exhaustive()
    }
}

impl JinjaTemplate {
    pub(crate) fn compile(
        body: &str,
        options: &CompileOptions,
    ) -> Result<JinjaTemplate, TemplateError> {
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
            .map_err(|error| TemplateError::parse(None, error.to_string()))?;
        let mut env = Environment::new();
        env.set_syntax(syntax.clone());
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_undefined_behavior(match options.strictness {
            Strictness::Strict => UndefinedBehavior::Strict,
            Strictness::Semi => UndefinedBehavior::SemiStrict,
            Strictness::Lenient => UndefinedBehavior::Chainable,
        });
        env.set_fuel(Some(FUEL));
        // Python's methods on values, as Jinja2 has them: `.items()`,
        // `.get()`, `.strip()`, `.startswith()`… (Hugging Face chat templates).
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        guard_collection_filters(&mut env);
        env.add_filter("tojson", tojson_filter);
        env.add_filter("toJSON", tojson_filter);
        env.add_function("role", |name: &str| {
            template_call(messages::emit_role(name))
        });
        env.add_function("history", || template_call(messages::emit_history()));
        // Hugging Face chat templates stop a render with this global.
        env.add_function(
            "raise_exception",
            |message: &str| -> Result<String, minijinja::Error> {
                Err(minijinja::Error::new(
                    ErrorKind::InvalidOperation,
                    message.to_string(),
                ))
            },
        );
        env.add_function("media", |url: &str, content_type: &str| {
            template_call(messages::emit_media(url, content_type))
        });
        register_host_functions(&mut env, &options.functions)?;
        let filters: Vec<&str> = FILTERS
            .iter()
            .copied()
            .chain(options.functions.names())
            .collect();

        let (edits, reads) = {
            let ast = machinery::parse(body, TEMPLATE_NAME, syntax.clone()).map_err(|error| {
                unclosed_block_error(&error, body, syntax.clone())
                    .unwrap_or_else(|| convert_error(&error, body, &Edited::default(), None))
            })?;
            let functions: HashSet<String> = env
                .globals()
                .map(|(name, _)| name.to_string())
                .chain(IMPLICIT_CALLABLES.iter().map(|name| name.to_string()))
                .collect();
            let mut checker = Checker::default();
            checker.stmt(&ast);
            checker.verdict(body, &functions, &filters)?;
            (checker.edits, checker.reads)
        };
        let source = Edited::new(body, edits);
        env.add_template_owned(TEMPLATE_NAME, source.text.clone())
            .map_err(|error| convert_error(&error, body, &source, None))?;
        Ok(JinjaTemplate {
            env,
            source,
            body: body.to_string(),
            reads,
        })
    }

    /// Names the template may read from the root of the data.
    pub(crate) fn reads(&self) -> &BTreeSet<String> {
        &self.reads
    }

    pub(crate) fn render(&self, data: &Data) -> Result<String, TemplateError> {
        let misses = Arc::new(MissLog::default());
        let root = JValue::from_object(Node::root(data.clone(), misses.clone()));
        let template = self
            .env
            .get_template(TEMPLATE_NAME)
            .map_err(|error| TemplateError::render(None, error.to_string()))?;
        template
            .render(root)
            .map_err(|error| convert_error(&error, &self.body, &self.source, Some((&misses, data))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::Functions;
    use serde_json::{json, Value};

    fn compile_with(body: &str, functions: Functions) -> Result<JinjaTemplate, TemplateError> {
        JinjaTemplate::compile(
            body,
            &CompileOptions {
                strictness: Strictness::Semi,
                functions,
            },
        )
    }

    fn host() -> Functions {
        Functions::new()
            .with("shout", |args: &[Value]| {
                let text = args
                    .first()
                    .and_then(Value::as_str)
                    .ok_or("takes a string")?;
                Ok(json!(format!("{}!", text.to_uppercase())))
            })
            .with("ticket", |args: &[Value]| {
                Ok(json!({"id": args.first().cloned(), "tags": ["a", "b"]}))
            })
    }

    #[test]
    fn host_functions_are_functions_and_filters() {
        let template = compile_with(
            "{{ shout(name) }} {{ name | shout }} {{ ticket(7).id }} {{ ticket(1).tags | join('+') }}",
            host(),
        )
        .unwrap();
        let out = template.render(&Data::new(json!({"name": "ada"}))).unwrap();
        assert_eq!(out, "ADA! ADA! 7 a+b");
    }

    #[test]
    fn host_function_errors_and_names() {
        let template = compile_with("{{ shout(3) }}", host()).unwrap();
        let error = template.render(&Data::new(json!({}))).unwrap_err();
        assert!(
            error
                .message
                .contains("error calling shout: takes a string"),
            "{error:?}"
        );

        let error = compile_with("{{ shuot(x) }}", host()).err().unwrap();
        assert_eq!(error.suggestion.as_deref(), Some("did you mean \"shout\"?"));

        let clash = Functions::new().with("upper", |_: &[Value]| Ok(Value::Null));
        let error = compile_with("x", clash).err().unwrap();
        assert!(
            error
                .message
                .contains("\"upper\" has the name of a built-in"),
            "{error:?}"
        );
    }
}

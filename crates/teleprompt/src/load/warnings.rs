//! A loaded prompt's warnings: likely mistakes that neither stop loading
//! nor rendering, each placed in the file (class [`ErrorClass::Warning`]).

use super::formats::sortie;
use super::Compiled;
use crate::analysis::Step;
use crate::diagnostics::{Error, ErrorClass, TemplateError};
use crate::document::key;
use crate::document::kind::FileKind;
use crate::options::{Strictness, Syntax};

/// The prompt context's namespaces that no data element is likely to
/// have as a field: a root name read where dot is an element is taken
/// for one of them.
const CONTEXT_NAMESPACES: &[&str] = &["system", "run", "attempt", "readme", "custom_rules"];

/// In Go syntax, a root name such as `.issue` read inside `range` or
/// `with`, where dot is the element (`did you mean "$.issue.title"?`); a
/// mapping printed as it is; with `input.schema`, a path read that it
/// does not declare and a declared input never read. In the order of the
/// file.
pub(crate) fn warnings(compiled: &Compiled) -> Vec<Error> {
    // Names that are the top level of what a render sees, whatever the
    // template reads: the prompt context's own namespaces, the prompt's
    // defaults, the names its origin hands every render, and its
    // declared inputs.
    let root = |name: &str| {
        CONTEXT_NAMESPACES.contains(&name)
            || (compiled.kind == FileKind::SortieWorkflow && sortie::ROOT_NAMES.contains(&name))
            || compiled
                .defaults
                .as_deref()
                .is_some_and(|defaults| defaults.get(name).is_some())
            || compiled
                .schema
                .as_ref()
                .is_some_and(|schema| schema.declares(name))
    };
    let structured = |path: &[Step]| {
        compiled
            .schema
            .as_ref()
            .is_some_and(|schema| schema.declares_structure(path))
    };
    let mut warnings: Vec<Error> = compiled
        .template
        .warnings(&root, &structured)
        .into_iter()
        .map(|warning| compiled.document.locate(warning))
        .collect();
    warnings.extend(declared_input_warnings(compiled));
    warnings.extend(double_bos_warning(compiled));
    // In the order of the file, as a reader meets them; warnings with
    // no place come last.
    warnings.sort_by_key(|warning| {
        warning
            .location()
            .map_or((usize::MAX, usize::MAX), |at| (at.line, at.column))
    });
    warnings
}

/// With `input.schema`: a path the template reads that the schema does
/// not declare (a top-level name, or a key of an object the schema
/// closes: see [`crate::schema`]), with the declared path it likely
/// meant, placed where the template first reads it; and a declared input
/// it never reads, placed on its key under `input.schema`.
fn declared_input_warnings(compiled: &Compiled) -> Vec<Error> {
    let (Some(schema), Some(inputs)) = (&compiled.schema, compiled.inputs()) else {
        return Vec::new();
    };
    let document = &compiled.document;
    let defaulted = |name: &str| {
        compiled
            .defaults
            .as_deref()
            .is_some_and(|defaults| defaults.get(name).is_some())
    };
    let mut found = Vec::new();
    // A path the schema closes out, printed or walked: at strict or semi
    // the render can only fail there (or, behind an `if`, never print it).
    // Go at strict fails on any read of a missing key, a test too.
    let strict = matches!(compiled.strictness, Strictness::Strict | Strictness::Semi);
    let any_read_fails = compiled.strictness == Strictness::Strict && compiled.syntax == Syntax::Go;
    for read in schema.undeclared_reads(&inputs, &defaulted) {
        let misread = read.closed && (any_read_fails || (strict && read.used));
        let message = match (misread, read.used) {
            (true, true) => format!(
                "the template prints or walks `{}`, which input.schema does not declare and \
                 closes out: the data can never hold it",
                read.path
            ),
            (true, false) => format!(
                "the template reads `{}`, which input.schema does not declare and closes out: \
                 at the strict level every render fails there",
                read.path
            ),
            (false, _) => format!(
                "the template reads `{}`, which input.schema does not declare",
                read.path
            ),
        };
        let suggestion = read.meant.map(|meant| format!("did you mean `{meant}`?"));
        let mut problem = match read.span {
            Some(span) => {
                let warning = TemplateError::parse(Some(span), message)
                    .suggest(suggestion)
                    .with_kind("undeclared-input");
                document.locate(compiled.template.place_warning(warning))
            }
            None => document.place_on_key(
                Error::new(ErrorClass::Warning, message)
                    .with_kind("undeclared-input")
                    .with_suggestion(suggestion),
                key::INPUT,
            ),
        };
        if misread {
            problem = problem.with_class(ErrorClass::Input);
        }
        found.push(problem);
    }
    if !inputs.reads_whole() {
        for name in schema.names() {
            if inputs.names().all(|read| read != name) {
                found.push(
                    document.place_on_paths(
                        Error::new(
                            ErrorClass::Warning,
                            format!("input `{name}` is declared but the template never reads it"),
                        )
                        .with_kind("unused-input"),
                        &[
                            &["input", "schema", name],
                            &["input", "schema", "properties", name],
                        ],
                    ),
                );
            }
        }
    }
    found
}

/// A chat template that prints `bos_token` while its tokenizer adds that
/// same token at the start whenever a text is encoded with special tokens
/// (`tokenizer(text)`, `encode(text)` in most libraries): encoded so, its
/// output starts with two. `transformers`' `apply_chat_template` and
/// teleprompt's tokens add none; the warning is for hosts that encode the
/// text themselves. Reading the tokenizer is the price of asking (only
/// the warnings read it); one that cannot be read warns of nothing here:
/// its error comes with the tokens.
fn double_bos_warning(compiled: &Compiled) -> Option<Error> {
    if compiled.syntax != Syntax::ChatTemplate {
        return None;
    }
    let tokenizer = compiled.tokenizer.as_ref()?;
    let span = crate::syntax::first_jinja_name(&compiled.document.body, "bos_token")?;
    let added = tokenizer.added_at_start().ok()?;
    let first = added.first()?;
    let bos = compiled
        .defaults
        .as_deref()
        .and_then(|defaults| defaults.get("bos_token"))
        .and_then(|bos| bos.as_str());
    if bos.is_some_and(|bos| bos != first) {
        return None;
    }
    let warning = TemplateError::parse(
        Some(span),
        format!(
            "this template prints bos_token, and {} adds `{first}` at the start again when a text is encoded with its special tokens: encoded so, the output starts with it twice",
            tokenizer.name()
        ),
    )
    .suggest(Some(
        "encode the output without special tokens (add_special_tokens=False, as apply_chat_template(tokenize=True) does), or take the ids from teleprompt (render --format tokens)"
            .to_string(),
    ))
    .with_kind("double-bos");
    Some(
        compiled
            .document
            .locate(compiled.template.place_warning(warning)),
    )
}

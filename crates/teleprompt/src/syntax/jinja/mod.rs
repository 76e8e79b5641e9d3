//! Jinja syntax on minijinja, in three dialects: Jinja as Jinja2 has it,
//! Django/pongo2 (`django/`, translated to Jinja) and Hugging Face chat
//! templates (`hf`, the environment `transformers` sets up; also the
//! tokenizer-config loader); Prompty files (`prompty`) are Jinja too.
//!
//! minijinja renders; this module fills its gaps for prompts:
//! - unknown filters, tests and functions are found at load time, in every
//!   branch (minijinja only notices them when that code runs): `check`;
//! - values print, and `tojson`/`indent`/… behave, as in Python's Jinja2
//!   (`python/`);
//! - the data is handed over as lazy objects over [`Data`], never converted
//!   up front (`value`), and a missing key is reported with its full path
//!   and the closest key that exists (`errors`);
//! - a render is bounded: fuel for its steps, a budget for its output
//!   (`scope`), the work of its filters and reads on the fuel-free path
//!   (`work`); the host's deadline or cancel token stops it (`current`);
//! - `include`, `import` and `extends` of other files are read, checked
//!   and registered when the prompt loads, where it has an include root
//!   (`files`); errors in those files are placed in them;
//! - pongo2's spellings `{% autoescape off %}` / `on` are accepted.

mod arg_types;
mod arity;
mod check;
mod django;
mod errors;
use errors::MissLog;
mod current;
mod filter_tags;
mod filters;
mod fuel;
mod generation;
mod section;
pub(crate) use generation::{first_name, has_generation_blocks};
mod growth;
mod includes;
mod inputs;
mod lower;
mod macros;
mod names;
mod nesting;
mod python;
mod raw;
mod value;
mod work;

use std::collections::{BTreeSet, HashSet};
use std::error::Error as _;
use std::fmt;
use std::sync::Arc;

use minijinja::machinery;
use minijinja::value::ValueKind;
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior, Value as JValue};

use crate::data::Data;
use crate::diagnostics::TemplateError;
use crate::engine::program::Flavor;
use crate::functions::Naming;
use crate::scope::RenderScope;
use crate::syntax::edits::{Edit, Edited};
use crate::syntax::CompileOptions;
use crate::{options::Strictness, options::Syntax};

use check::Checker;
use errors::{convert_error, unclosed_block_error, Raised};
use filters::{
    guard_collection_filters, register_host_functions, register_jinja2_extras, template_call,
    to_json_filter,
};
use names::{FILTERS, IMPLICIT_CALLABLES};

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
    /// What it reads from the data (not its own variables or functions),
    /// placed in the body it was given.
    inputs: crate::analysis::Inputs,
    /// Bounds on a render.
    limits: crate::limits::Limits,
    /// The delimiters and whitespace rules, to parse the body again.
    syntax: minijinja::syntax::SyntaxConfig,
    /// Which Jinja it is (a chat template reads its messages as
    /// `transformers` hands them over).
    dialect: Syntax,
    /// The files it includes, imports or extends (none without an include
    /// root), to place render errors in them.
    files: Option<includes::Files>,
    /// The length of the last output, to size the next one's buffer.
    last_len: std::sync::atomic::AtomicUsize,
    /// The template on teleprompt's own evaluator, where it lowers
    /// (`lower`): tried first, minijinja renders when it declines. Else
    /// why it does not lower.
    direct: Result<lower::Direct, String>,
    /// A chat template's unknown filters, tests and functions, placed on
    /// the body: warnings, and render errors only where the code runs.
    deferred: Vec<TemplateError>,
}

impl fmt::Debug for JinjaTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JinjaTemplate").finish_non_exhaustive()
    }
}

/// Whitespace options with every choice made.
#[derive(Clone, Copy, Debug)]
struct Whitespace {
    trim_blocks: bool,
    lstrip_blocks: bool,
    keep_trailing_newline: bool,
}

impl Whitespace {
    /// The options set, else the defaults of the Jinja-family `syntax`
    /// (a chat template's are `transformers`').
    fn of(syntax: Syntax, options: crate::options::JinjaOptions) -> Whitespace {
        let chat = syntax == Syntax::ChatTemplate;
        Whitespace {
            trim_blocks: options.trim_blocks.unwrap_or(chat),
            lstrip_blocks: options.lstrip_blocks.unwrap_or(chat),
            keep_trailing_newline: options.keep_trailing_newline.unwrap_or(!chat),
        }
    }
}

impl JinjaTemplate {
    /// Compiles a body; its first error stops it.
    #[cfg(test)]
    pub(crate) fn compile(
        body: &str,
        dialect: Syntax,
        options: &CompileOptions,
    ) -> Result<JinjaTemplate, TemplateError> {
        match JinjaTemplate::compile_all(body, dialect, options)? {
            (template, None) => Ok(template),
            (_, Some(error)) => Err(error),
        }
    }

    /// [`JinjaTemplate::compile`], going on past the errors that do not
    /// stop it (unknown filters, tests and functions, includes that cannot
    /// resolve, host function calls that do not fit): the template, and the
    /// first of those errors carrying the others. A template with errors
    /// is only for warnings: it must not render.
    pub(crate) fn compile_all(
        body: &str,
        dialect: Syntax,
        options: &CompileOptions,
    ) -> Result<(JinjaTemplate, Option<TemplateError>), TemplateError> {
        let whitespace = Whitespace::of(dialect, options.jinja);
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(whitespace.trim_blocks)
            .lstrip_blocks(whitespace.lstrip_blocks)
            .keep_trailing_newline(whitespace.keep_trailing_newline)
            .build()
            .map_err(|error| TemplateError::parse(None, error.to_string()))?;
        // Everything a dialect registers is shared (minijinja keeps its
        // filters, tests and globals copy-on-write): a prompt's own
        // environment costs its settings and templates only.
        let mut env = base_environment(dialect).clone();
        env.set_syntax(syntax.clone());
        env.set_undefined_behavior(match (options.strictness, dialect) {
            (Strictness::Strict, _) => UndefinedBehavior::Strict,
            (Strictness::Semi, _) => UndefinedBehavior::SemiStrict,
            // Jinja2's own default: printing a missing value is empty, a
            // key of one is an error (as `transformers` renders).
            (Strictness::Lenient, Syntax::ChatTemplate) => UndefinedBehavior::Lenient,
            (Strictness::Lenient, _) => UndefinedBehavior::Chainable,
        });
        let limits = options.limits;
        env.set_fuel(Some(limits.max_steps));
        // minijinja counts a macro call as 4 levels and a block as one.
        env.set_recursion_limit(limits.max_call_depth.saturating_mul(5));
        let mut filters: Vec<&str> = FILTERS.to_vec();
        // The dialect's own spellings, rewritten into Jinja that minijinja
        // parses; errors are placed back on the body as written.
        let mut only = Vec::new();
        let translated = match dialect {
            Syntax::Django => {
                filters.extend_from_slice(django::FILTERS);
                let translation = django::translate(body, options.includes.as_ref())?;
                only = translation.only;
                translation.edited
            }
            Syntax::ChatTemplate => {
                filters.push(generation::GENERATION_FILTER);
                generation::generation_blocks(body, syntax.clone())
            }
            // Jinja (Go and Handlebars never reach here): its budget
            // sections.
            _ => {
                filters.push(section::SECTION_FILTER);
                section::section_blocks(body, syntax.clone())
            }
        };
        let translated = match whitespace.trim_blocks {
            true => {
                let text = match translated.is_unchanged() {
                    true => body,
                    false => translated.text.as_str(),
                };
                let edits = raw::keep_newline_after_raw(text, syntax.clone());
                translated.then(edits, body)
            }
            false => translated,
        };
        let hosts = options
            .functions
            .resolve(Naming::Identifier)
            .map_err(|message| TemplateError::parse(None, message))?;
        if !hosts.is_empty() {
            register_host_functions(&mut env, &hosts, &filters)?;
            python::name_functions(&mut env);
        }
        filters.extend(hosts.iter().map(|(name, _)| name.as_str()));
        let untranslated = translated.is_unchanged();
        let text = if untranslated {
            body
        } else {
            translated.text.as_str()
        };

        let functions: HashSet<String> = env
            .globals()
            .map(|(name, _)| name.to_string())
            .chain(IMPLICIT_CALLABLES.iter().map(|name| name.to_string()))
            .collect();
        let includes = options
            .includes
            .as_ref()
            .filter(|_| matches!(dialect, Syntax::Jinja | Syntax::Django));
        let checks = Checks {
            syntax: syntax.clone(),
            limits,
            functions: &functions,
            filters: &filters,
            hosts: &hosts,
            dialect,
            files: includes.is_some(),
        };
        let (mut scanned, found) = scan(text, &checks).map_err(|error| translated.place(error))?;
        let mut found = found.map(|error| translated.place(error));
        // A chat template is what `transformers` renders: Jinja2 looks a
        // filter, test or function up when the code runs, so one it does
        // not know in a branch that never runs is no error (DeepSeek-V3.2's
        // `from_json`). Here it is a warning, and an error when reached.
        let deferred = match dialect {
            Syntax::ChatTemplate => defer_unknown_names(&mut found),
            _ => Vec::new(),
        };
        let mut inputs = scanned.inputs.clone();
        if !translated.is_unchanged() {
            inputs.map_spans(&|offset| translated.to_original(offset));
        }
        let mut reads = scanned.reads.clone();
        let mut edits = std::mem::take(&mut scanned.edits);
        // The text of each template by its name in the environment, for
        // minijinja's loader.
        let mut sources = std::collections::HashMap::new();
        let files = match includes {
            Some(includes) if !scanned.refs.is_empty() => {
                // The body's edits go with it (pongo2's `include … only`
                // adds to them), and come back before its files register.
                scanned.edits = std::mem::take(&mut edits);
                let prepare = |file: &str, includes: &crate::document::include_root::Includes| {
                    prepare(file, includes, &checks)
                };
                let body = includes::Body {
                    translation: translated.clone(),
                    only: std::mem::take(&mut only),
                    pongo2: dialect == Syntax::Django,
                };
                let mut loaded = includes::load(
                    text,
                    scanned,
                    includes,
                    &prepare,
                    &mut found,
                    body,
                    limits.max_call_depth,
                )?;
                for unit in &loaded.units {
                    if let Some(scanned) = &unit.scanned {
                        reads.extend(scanned.reads.iter().cloned());
                    }
                }
                inputs = linked_inputs(text, &syntax, &loaded);
                if let Some(scanned) = loaded
                    .units
                    .first_mut()
                    .and_then(|unit| unit.scanned.as_mut())
                {
                    edits = std::mem::take(&mut scanned.edits);
                }
                register_files(&mut env, &mut loaded, &syntax, &mut sources)?;
                Some(loaded)
            }
            _ => None,
        };
        // The bound checks (and autoescape spellings), made on the text
        // minijinja parsed: after the dialect's translation.
        let source = translated.then(edits, body);
        let compiled = if source.is_unchanged() {
            body.to_string()
        } else {
            source.text.clone()
        };
        // Fuel only where `max_steps` is needed to stop the render: where
        // it can walk longer than the data, or (on minijinja, which
        // charges what `in` searches to its fuel alone) search a list from
        // outside a loop on every pass.
        // minijinja compiles a template only when a render first needs it
        // (a template it compiles holds some 8 KB, however short, and the
        // direct path needs none): here the text is only parsed, which
        // finds every error the compile would.
        let parsed = machinery::parse(&compiled, TEMPLATE_NAME, syntax.clone())
            .map_err(|error| convert_error(&error, body, &source, None))?;
        let walks = files.is_some() || fuel::needed(&parsed, false);
        let needs_fuel = walks || fuel::needed(&parsed, true);
        if !needs_fuel {
            env.set_fuel(None);
        }
        // The direct path only for templates whose loops walk the data
        // (no fuel, or fuel only for a search from outside a loop, which
        // the engine counts itself): the engine counts steps in its own
        // way, and a render it declines for them runs on minijinja,
        // uncounted there too. It is lowered from
        // the body as written: a plain Jinja body's only rewriting is the
        // bound checks (the engine checks what its filters build itself)
        // and pongo2's autoescape spellings (not lowered).
        // A chat template only without `{% generation %}` blocks
        // (rewritten for minijinja).
        let direct = match Flavor::of(dialect) {
            None => Err("a Django template".into()),
            Some(_) if !untranslated => Err(
                "a body rewritten for minijinja (`{% generation %}` or budget `section` blocks, a newline after `{% raw %}`)"
                    .into(),
            ),
            Some(_) if files.is_some() => Err("other files (include, import, extends)".into()),
            Some(_) if !found.errors.is_empty() => Err("errors found at load".into()),
            Some(flavor) => match source.is_unchanged() {
                true => {
                    let how = (flavor, options.strictness);
                    lower::lower(&parsed, (body, &compiled), limits, (&functions, &filters), how)
                }
                false => machinery::parse(body, TEMPLATE_NAME, syntax.clone())
                    .map_err(|error| error.to_string())
                    .and_then(|ast| {
                        let how = (flavor, options.strictness);
                        lower::lower(&ast, (body, body), limits, (&functions, &filters), how)
                    }),
            },
        }
        .map(|program| lower::Direct::new(program, walks));
        drop(parsed);
        sources.insert(TEMPLATE_NAME.to_string(), compiled);
        let sources = Arc::new(sources);
        env.set_loader(move |name| Ok(sources.get(name).cloned()));
        let template = JinjaTemplate {
            env,
            source,
            body: body.to_string(),
            reads,
            inputs,
            limits,
            syntax,
            dialect,
            files,
            last_len: Default::default(),
            direct,
            deferred,
        };
        Ok((template, found.into_error()))
    }

    /// Names the template may read from the root of the data.
    /// Likely mistakes of a chat prompt (see [`crate::analysis::chat`]),
    /// placed on the body as written.
    pub(crate) fn warnings(&self) -> Vec<TemplateError> {
        let text = if self.source.is_unchanged() {
            self.body.as_str()
        } else {
            self.source.text.as_str()
        };
        let Ok(ast) = machinery::parse(text, TEMPLATE_NAME, self.syntax.clone()) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        if let machinery::ast::Stmt::Template(template) = &ast {
            check::chat_warnings(&template.children, true, &mut found);
        }
        found
            .into_iter()
            .map(|warning| self.source.place(warning))
            .chain(self.deferred.iter().cloned())
            .collect()
    }

    /// What the template reads of its data: paths with their nesting and
    /// the lists `for` walks (see `inputs`).
    pub(crate) fn inputs(&self) -> crate::analysis::Inputs {
        self.inputs.clone()
    }

    pub(crate) fn reads(&self) -> &BTreeSet<String> {
        &self.reads
    }

    /// The bounds a render of the template is held to.
    /// The renders the direct path gave and gave up, or why the template
    /// is not lowered.
    #[cfg(feature = "unstable")]
    pub(crate) fn direct_path(&self) -> Result<(u32, u32), &str> {
        match &self.direct {
            Ok(direct) => Ok(direct.counts()),
            Err(why) => Err(why),
        }
    }

    pub(crate) fn limits(&self) -> crate::limits::Limits {
        self.limits
    }

    pub(crate) fn render(
        &self,
        data: &Data,
        scope: &mut RenderScope,
    ) -> Result<String, TemplateError> {
        let last_len = self.last_len.load(std::sync::atomic::Ordering::Relaxed);
        let expect = last_len.min(self.limits.max_output);
        if let Some(out) = self
            .direct
            .as_ref()
            .ok()
            .and_then(|direct| direct.render(data, expect, scope))
        {
            self.last_len
                .store(out.len(), std::sync::atomic::Ordering::Relaxed);
            return Ok(out);
        }
        // What the direct path noted before it gave up is not this output.
        if let Some(trace) = scope.trace.as_deref_mut() {
            trace.chunks.clear();
        }
        // The direct path gave up because the host stopped the render:
        // no second try.
        if scope.stop.is_armed() {
            if let Err(over) = scope.stop.check() {
                return Err(TemplateError::render(None, over.to_string()));
            }
        }
        self.render_on_minijinja(data, scope, last_len)
    }

    /// The length of the text minijinja runs (the body, rewritten).
    fn ran_len(&self) -> usize {
        match self.source.is_unchanged() {
            true => self.body.len(),
            false => self.source.text.len(),
        }
    }

    /// Where `span` of the text minijinja ran is: of the body (`file`
    /// `None`, or the body's own name), or of a file it includes.
    pub(crate) fn place_span(
        &self,
        file: Option<&str>,
        span: std::ops::Range<usize>,
    ) -> Option<crate::syntax::Place<'_>> {
        let back = |source: &Edited| source.to_original(span.start)..source.to_original(span.end);
        let unit = file.filter(|name| *name != TEMPLATE_NAME).map(|name| {
            let files = self.files.as_ref()?;
            files.units.get(files.by_key(name)?)
        });
        match unit {
            None => Some(crate::syntax::Place::Body(back(&self.source))),
            Some(unit) => {
                let unit = unit?;
                match &unit.document {
                    Some(document) => {
                        Some(crate::syntax::Place::File(document, back(&unit.source)))
                    }
                    None => Some(crate::syntax::Place::Body(back(&self.source))),
                }
            }
        }
    }

    /// [`JinjaTemplate::render`] on minijinja, the direct path aside.
    fn render_on_minijinja(
        &self,
        data: &Data,
        scope: &mut RenderScope,
        last_len: usize,
    ) -> Result<String, TemplateError> {
        let root = value::root(data, self.dialect == Syntax::ChatTemplate);
        let template = self
            .env
            .get_template(TEMPLATE_NAME)
            .map_err(|error| TemplateError::render(None, error.to_string()))?;
        let mut out = CappedWriter {
            bytes: Vec::with_capacity(last_len.min(self.limits.max_output)),
            limit: self.limits.max_output,
            over: false,
            stop: scope.stop.is_armed().then(|| scope.stop.clone()),
            writes: 0,
        };
        let traced = scope.trace.is_some().then(|| (root.clone(), scope.budget));
        let (result, misses, halted) = current::with_scope(scope, || {
            template.render_captured_to(root, &mut out).map(drop)
        });
        if out.over {
            return Err(output_limit_error(self.limits.max_output));
        }
        // Stopped at a read of the data (which can only give nothing):
        // the reason, not what minijinja made of the missing value.
        if let (Err(_), Some(over)) = (&result, halted) {
            return Err(TemplateError::render(None, over.to_string()));
        }
        result.map_err(|error| self.render_error(&error, &misses, data))?;
        self.last_len
            .store(out.bytes.len(), std::sync::atomic::Ordering::Relaxed);
        // Filters only ever write whole UTF-8 strings. Checked with SIMD and
        // copied once: std's check costs more than the copy (3% of a chat
        // template's render).
        let out = simdutf8::basic::from_utf8(&out.bytes)
            .map(str::to_owned)
            .map_err(|_| TemplateError::render(None, "the output is not UTF-8 text"))?;
        if let Some((root, budget)) = traced {
            self.trace_on_minijinja(&template, root, (scope, budget), &out);
        }
        Ok(out)
    }

    /// Notes what wrote each stretch of `out` for a source map: the
    /// template is rendered again with minijinja's output spans (the
    /// first render was held to the bounds, so this one, the same, is
    /// too), its filters spending from `budget` again and its markers
    /// counted once. Output that came out different (a host function
    /// that answers differently), or longer than the trace's bound in
    /// bytes, is noted as the whole template's.
    #[cold]
    #[inline(never)]
    fn trace_on_minijinja(
        &self,
        template: &minijinja::Template<'_, '_>,
        root: minijinja::Value,
        (scope, budget): (&mut RenderScope, crate::scope::Budget),
        out: &str,
    ) {
        // minijinja notes a span per stretch it writes, unbounded: past
        // the trace's bound in bytes, the output is the whole template's.
        if out.len() > crate::scope::Trace::MAX_CHUNKS {
            if let Some(trace) = scope.trace.as_deref_mut() {
                trace.chunks.clear();
                trace.push(0..out.len(), 0..self.ran_len(), crate::scope::Wrote::Text);
            }
            return;
        }
        let spent = scope.budget;
        let made = scope.markers().made();
        scope.budget = budget;
        let (again, _, _) = current::with_scope(scope, || template.render_with_spans(root));
        scope.budget = spent;
        scope.markers().rewind(made);
        let Some(trace) = scope.trace.as_deref_mut() else {
            return;
        };
        trace.chunks.clear();
        match again {
            Ok((text, spans)) if text == out => {
                for span in spans {
                    let file = (span.name() != TEMPLATE_NAME).then(|| Arc::from(span.name()));
                    let wrote = match span.kind() {
                        minijinja::OutputSpanKind::Raw => crate::scope::Wrote::Text,
                        _ => crate::scope::Wrote::Value(None),
                    };
                    trace.push_in(file, span.output_range(), span.source_range(), wrote);
                }
            }
            _ => trace.push(0..out.len(), 0..self.ran_len(), crate::scope::Wrote::Text),
        }
    }
}

impl JinjaTemplate {
    /// A render error placed where it happened: in the body, or in a file
    /// it uses (with the place that included it, when an include did).
    fn render_error(
        &self,
        error: &minijinja::Error,
        misses: &MissLog,
        data: &Data,
    ) -> TemplateError {
        let render = Some((misses, data, &self.limits));
        let Some(files) = &self.files else {
            return convert_error(error, &self.body, &self.source, render);
        };
        // minijinja wraps an error inside an include or a `super()` in one
        // at the tag: the innermost says where it happened; the includes
        // on the way, which tags led to that file.
        let mut inner = error;
        let mut sites = Vec::new();
        loop {
            let wrapped = matches!(inner.kind(), ErrorKind::BadInclude | ErrorKind::EvalBlock);
            let Some(next) = inner
                .source()
                .and_then(|source| source.downcast_ref::<minijinja::Error>())
                .filter(|_| wrapped)
            else {
                break;
            };
            if inner.kind() == ErrorKind::BadInclude {
                if let Some(site) = inner.name().zip(inner.range()) {
                    sites.push(site);
                }
            }
            inner = next;
        }
        let index = inner.name().and_then(|name| files.by_key(name));
        let unit = index.and_then(|index| Some((index, files.units.get(index)?)));
        let Some((index, unit, document)) =
            unit.and_then(|(index, unit)| Some((index, unit, unit.document.as_ref()?)))
        else {
            return convert_error(inner, &self.body, &self.source, render);
        };
        let located = document.locate(convert_error(inner, &document.body, &unit.source, render));
        let sites: Vec<(usize, std::ops::Range<usize>)> = sites
            .into_iter()
            .filter_map(|(name, range)| {
                let includer = files.by_key(name)?;
                let source = match files.units.get(includer)?.document {
                    Some(_) => &files.units.get(includer)?.source,
                    None => &self.source,
                };
                let tag = source.to_original(range.start)..source.to_original(range.end);
                // The tag's name, as load errors point at it.
                let name = files.units.get(includer)?.links.iter().find_map(|link| {
                    let name = files.as_written(includer, link.tag.span.clone());
                    (name.start >= tag.start && name.end <= tag.end).then_some(name)
                });
                Some((includer, name.unwrap_or(tag)))
            })
            .collect();
        match sites.is_empty() {
            true => files.with_site(index, located),
            false => files.included_through(located, &sites),
        }
    }
}

/// A template rendered with the direct path and on minijinja alone: the
/// text, or the error's message, of each.
#[cfg(any(test, feature = "fuzzing"))]
#[derive(Debug)]
pub(crate) struct Both {
    pub(crate) direct: Result<String, String>,
    pub(crate) minijinja: Result<String, String>,
    /// Whether the direct path rendered (did not give up).
    pub(crate) rendered_directly: bool,
    /// Why the template is not lowered, if it is not.
    pub(crate) not_lowered: Option<String>,
    /// Why the direct path gave the render up, if it did.
    pub(crate) declined: Option<String>,
}

/// Renders `body` (plain Jinja, or a chat template with `chat`) over
/// `data` with the direct path and on minijinja alone, for the tests that
/// compare them; `None` when it does not compile.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn both(
    body: &str,
    data: &Data,
    (strictness, chat): (Strictness, bool),
    jinja: crate::options::JinjaOptions,
    limits: crate::limits::Limits,
) -> Option<Both> {
    let dialect = match chat {
        true => Syntax::ChatTemplate,
        false => Syntax::Jinja,
    };
    let options = CompileOptions {
        jinja,
        limits,
        ..CompileOptions::plain(strictness)
    };
    // One template for both: minijinja compiles a macro's closure in an
    // order of its own (a hash set's), and an error inside a macro may name
    // whichever missing name it looked up last.
    let template = match JinjaTemplate::compile_all(body, dialect, &options) {
        Ok((template, None)) => template,
        _ => return None,
    };
    let outcome = |result: Result<String, TemplateError>| result.map_err(|error| error.message);
    let mut scope = RenderScope::at_epoch(template.limits);
    let with_direct = outcome(template.render(data, &mut scope));
    // The same marker secret for both, so that their texts compare.
    let mut again = scope.again_at_epoch(template.limits);
    let on_minijinja = outcome(template.render_on_minijinja(data, &mut again, 0));
    let rendered = template
        .direct
        .as_ref()
        .is_ok_and(lower::Direct::has_rendered);
    let declined = match &template.direct {
        Ok(direct) if !rendered => {
            direct.why_declined(data, &mut RenderScope::at_epoch(template.limits))
        }
        _ => None,
    };
    Some(Both {
        direct: with_direct,
        minijinja: on_minijinja,
        rendered_directly: rendered,
        declined,
        not_lowered: template.direct.as_ref().err().cloned(),
    })
}

/// Takes the unknown filters, tests and functions out of `found` (the
/// errors of a chat template's load), each with a note that it fails only
/// where it runs.
fn defer_unknown_names(found: &mut crate::diagnostics::Findings) -> Vec<TemplateError> {
    const UNKNOWN: [&str; 3] = ["unknown-filter", "unknown-test", "unknown-function"];
    let (deferred, kept): (Vec<TemplateError>, Vec<TemplateError>) =
        std::mem::take(&mut found.errors)
            .into_iter()
            .partition(|error| error.kind.is_some_and(|kind| UNKNOWN.contains(&kind)));
    found.errors = kept;
    deferred
        .into_iter()
        .map(|mut warning| {
            warning.message.push_str(": a render that reaches it fails");
            warning
        })
        .collect()
}

/// The load-time checks of one template's text, and what they need.
struct Checks<'c> {
    syntax: minijinja::syntax::SyntaxConfig,
    limits: crate::limits::Limits,
    /// The globals and Jinja's own callables.
    functions: &'c HashSet<String>,
    filters: &'c [&'c str],
    hosts: &'c [(String, crate::functions::Function)],
    dialect: Syntax,
    /// Whether other templates can be read (else naming one is an error).
    files: bool,
}

/// Checks one template's text (the body, or a file it uses): what the
/// walk found, with the errors that do not stop it; spans in `text`.
fn scan(
    text: &str,
    checks: &Checks<'_>,
) -> Result<(includes::Scanned, crate::diagnostics::Findings), TemplateError> {
    nesting::check(text, checks.syntax.clone(), checks.limits.nesting())?;
    let ast = machinery::parse(text, TEMPLATE_NAME, checks.syntax.clone()).map_err(|error| {
        unclosed_block_error(&error, text, checks.syntax.clone())
            .unwrap_or_else(|| convert_error(&error, text, &Edited::default(), None))
    })?;
    if let Some(span) = check::unassignable_import(&ast) {
        // minijinja would panic compiling it (the name after `as` is read
        // as any expression, and assigned as a name).
        return Err(TemplateError::parse(
            Some(span),
            "`{% import … as NAME %}` needs a name after `as`",
        ));
    }
    let mut found = crate::diagnostics::Findings::default();
    let mut checker = Checker::new(checks.limits);
    checker.files = checks.files;
    if checks.dialect == Syntax::ChatTemplate {
        checker.markup = Some(text);
    }
    checker.stmt(&ast);
    checker.verdict(text, checks.functions, checks.filters, &mut found)?;
    checker.host_calls(text, checks.hosts, &mut found);
    checker.arity_errors(text, checks.dialect, &mut found);
    if checks.dialect != Syntax::Django {
        checker.type_errors(text, &mut found);
        checker.block_scope_errors(text, &mut found);
    }
    {
        // Across files, `Files` checks the blocks of all templates again.
        let calls: Vec<(usize, &str, &str, std::ops::Range<usize>)> = checker
            .block_calls
            .iter()
            .map(|(from, to, at)| (0, from.as_str(), to.as_str(), at.clone()))
            .collect();
        for (call, chain) in includes::block_cycles(&calls) {
            if let Some((_, _, _, span)) = calls.get(call) {
                found.push(includes::block_cycle_error(span.clone(), &chain));
            }
        }
    }
    let free = checker.inputs(checks.functions);
    let inputs = inputs::inputs(&ast, &free);
    let locals = checker.locals();
    let refs = std::mem::take(&mut checker.refs);
    let mut edits = std::mem::take(&mut checker.bounds);
    for (span, name, varargs, kwargs) in std::mem::take(&mut checker.catching_macros) {
        edits.extend(macros::catching_edits(text, span, name, varargs, kwargs));
    }
    for (after, bindings) in std::mem::take(&mut checker.with_tails) {
        // Before the `%}` (or `-%}`, `+%}`) that ends the `with` tag.
        let Some(close) = text.get(after..).and_then(|rest| rest.find("%}")) else {
            continue;
        };
        let mut at = after + close;
        if text
            .get(..at)
            .is_some_and(|before| before.ends_with(['-', '+']))
        {
            at -= 1;
        }
        edits.push(Edit {
            original: at..at,
            replacement: bindings,
        });
    }
    if checks.files {
        edits.extend(includes::scope_includes(text, &checker.includes));
    }
    // Only plain Jinja bodies take pongo2's autoescape spellings: a
    // dialect's translation has made its own.
    if checks.dialect == Syntax::Jinja {
        edits.append(&mut checker.edits);
    }
    let scanned = includes::Scanned {
        edits,
        reads: std::mem::take(&mut checker.reads),
        free,
        locals,
        exports: includes::exports(&ast),
        refs,
        inputs,
        block_calls: std::mem::take(&mut checker.block_calls),
        loose_loop: checker.loose_loop.take(),
    };
    Ok((scanned, found))
}

/// A file a template uses, as the load reads it: a pongo2 file translated
/// into Jinja (its `{% ssi %}` read through `includes`), then checked.
fn prepare(
    file: &str,
    includes: &crate::document::include_root::Includes,
    checks: &Checks<'_>,
) -> Result<includes::Prepared, TemplateError> {
    let (translation, exports, only) = match checks.dialect {
        Syntax::Django => {
            let translation = django::translate(file, Some(includes))?;
            (
                translation.edited,
                Some(translation.exports),
                translation.only,
            )
        }
        _ => (Edited::default(), None, Vec::new()),
    };
    let text = match translation.is_unchanged() {
        true => file,
        false => translation.text.as_str(),
    };
    let (mut scanned, found) = scan(text, checks).map_err(|error| translation.place(error))?;
    if let Some(exports) = exports {
        // pongo2 imports the macros marked `export`, and nothing else; it
        // passes the caller's `forloop` to what it includes.
        scanned.exports = exports;
        scanned.loose_loop = None;
    }
    Ok(includes::Prepared {
        translation,
        only,
        scanned,
        found,
    })
}

/// The environment every prompt of `dialect` starts from: its filters,
/// tests, functions, formatter and method callback, registered once per
/// process. A prompt clones it (sharing those maps) and sets its own
/// syntax, strictness, bounds, host functions and templates.
fn base_environment(dialect: Syntax) -> &'static Environment<'static> {
    static BASES: [std::sync::OnceLock<Environment<'static>>; 3] =
        [const { std::sync::OnceLock::new() }; 3];
    let slot = match dialect {
        Syntax::ChatTemplate => 0,
        Syntax::Django => 1,
        _ => 2,
    };
    BASES[slot].get_or_init(|| build_base_environment(dialect))
}

fn build_base_environment(dialect: Syntax) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_formatter(format_value);
    // `transformers` formats a naive `datetime.now()`: no time zone.
    let naive = dialect == Syntax::ChatTemplate;
    env.add_function("strftime_now", move |format: &str| {
        python::strftime(&current::now(), format, (naive, None))
    });
    // Python's methods on values, as Jinja2 has them: `.items()`,
    // `.get()`, `.strip()`, `.startswith()`… (Hugging Face chat templates).
    // The ones that grow text are checked against the output budget.
    let sandboxed = dialect == Syntax::ChatTemplate;
    env.set_unknown_method_callback(move |state, value, method, args| {
        growth::method(sandboxed, state, value, method, args)
    });
    guard_collection_filters(&mut env, dialect == Syntax::ChatTemplate);
    growth::guard_filters(&mut env);
    growth::guard_listing_filters(&mut env);
    growth::register(&mut env);
    register_jinja2_extras(&mut env);
    macros::register(&mut env);
    work::register(&mut env);
    // `string`, `tojson`, `indent`, `pprint` as Jinja2 (and
    // `transformers`) have them.
    python::register(&mut env, dialect);
    env.add_filter("toJSON", to_json_filter);
    env.add_function("role", |name: &str, attributes: Option<&str>| {
        template_call(current::marker("role", |scope| match attributes {
            Some(attributes) => scope.role_with(name, attributes),
            None => scope.role(name),
        }))
    });
    env.add_function("history", || {
        template_call(current::marker("history", |scope| Ok(scope.history())))
    });
    // Hugging Face chat templates stop a render with this global.
    env.add_function(
        "raise_exception",
        |message: &str| -> Result<String, minijinja::Error> {
            Err(
                minijinja::Error::new(ErrorKind::InvalidOperation, message.to_string())
                    .with_source(Raised(message.to_string())),
            )
        },
    );
    env.add_function("media", |url: &str, content_type: &str| {
        template_call(current::marker("media", |scope| {
            scope.media(url, content_type)
        }))
    });
    match dialect {
        Syntax::Django => django::register(&mut env),
        Syntax::ChatTemplate => {
            env.add_filter(generation::GENERATION_FILTER, |text: &str| {
                template_call(current::marker("generation", |scope| {
                    Ok(scope.generation(text))
                }))
            });
        }
        _ => {
            section::register(&mut env);
            env.add_function("cache_breakpoint", || {
                template_call(current::marker("cache_breakpoint", |scope| {
                    scope.cache_breakpoint()
                }))
            });
        }
    }
    python::name_functions(&mut env);
    env
}

/// What the body (`text`) reads of its data, following its includes,
/// imports with context and `extends` into the files they name.
fn linked_inputs(
    text: &str,
    syntax: &minijinja::syntax::SyntaxConfig,
    files: &includes::Files,
) -> crate::analysis::Inputs {
    let mut data = BTreeSet::new();
    let mut texts: Vec<Option<&str>> = Vec::with_capacity(files.units.len());
    let mut links = std::collections::HashMap::new();
    for (index, unit) in files.units.iter().enumerate() {
        let Some(scanned) = &unit.scanned else {
            texts.push(None);
            continue;
        };
        data.extend(scanned.free.iter().cloned());
        texts.push(Some(match &unit.document {
            Some(_) if !unit.translation.is_unchanged() => unit.translation.text.as_str(),
            Some(document) => document.body.as_str(),
            None => text,
        }));
        for link in &unit.links {
            links.insert(
                (index, link.tag.span.start),
                (
                    link.targets.clone(),
                    link.with_context,
                    link.tag.tag == includes::Tag::Extends,
                ),
            );
        }
    }
    let trees: Vec<Option<machinery::ast::Stmt<'_>>> = texts
        .iter()
        .map(|text| {
            text.and_then(|text| machinery::parse(text, TEMPLATE_NAME, syntax.clone()).ok())
        })
        .collect();
    let linked = inputs::Linked {
        trees: trees.iter().map(Option::as_ref).collect(),
        texts,
        links,
    };
    match trees.first().and_then(Option::as_ref) {
        Some(body) => inputs::linked(body, &data, &linked),
        None => crate::analysis::Inputs::default(),
    }
}

/// Puts the text of every file read (its bound checks made, parsed) in
/// `sources` for minijinja's loader, and joins each name a template writes
/// in `env` to the file it resolved to at load.
fn register_files(
    env: &mut Environment<'static>,
    files: &mut includes::Files,
    syntax: &minijinja::syntax::SyntaxConfig,
    sources: &mut std::collections::HashMap<String, String>,
) -> Result<(), TemplateError> {
    for index in 0..files.units.len() {
        let Some(unit) = files.units.get_mut(index) else {
            continue;
        };
        // What the walk found served the load: only the texts remain.
        let scanned = unit.scanned.take();
        let (Some(document), Some(mut scanned)) = (&unit.document, scanned) else {
            continue;
        };
        unit.source = unit
            .translation
            .clone()
            .then(std::mem::take(&mut scanned.edits), &document.body);
        let compiled = if unit.source.is_unchanged() {
            document.body.clone()
        } else {
            unit.source.text.clone()
        };
        if let Err(error) = machinery::parse(&compiled, &unit.key, syntax.clone()) {
            let error = convert_error(&error, &document.body, &unit.source, None);
            return Err(files.place(index, error));
        }
        sources.insert(unit.key.clone(), compiled);
    }
    let joins = Arc::new(std::mem::take(&mut files.joins));
    env.set_path_join_callback(move |name, parent| {
        match joins.get(&(parent.to_string(), name.to_string())) {
            Some(key) => key.clone().into(),
            // Read at load or nothing: a name that did not resolve then
            // (an `ignore missing` one) is no template.
            None => format!("\0missing:{name}").into(),
        }
    });
    Ok(())
}

/// The error of a render that printed more than its budget.
fn output_limit_error(limit: usize) -> TemplateError {
    TemplateError::render(None, crate::limits::Exceeded::Output(limit).to_string())
}

/// The render's output, refusing to grow past the limit.
struct CappedWriter {
    bytes: Vec<u8>,
    limit: usize,
    over: bool,
    /// When the host wants the render stopped (where it may), looked at
    /// every [`crate::scope::Stop::EVERY`] writes.
    stop: Option<crate::scope::Stop>,
    writes: u64,
}

impl std::io::Write for CappedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    /// minijinja writes each piece of output with `write_all`: written
    /// whole here, or refused whole (as `write` does), without the default's
    /// loop over partial writes.
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        if self.bytes.len().saturating_add(buf.len()) > self.limit {
            self.over = true;
            return Err(std::io::Error::other("output limit"));
        }
        if let Some(stop) = &self.stop {
            self.writes = self.writes.wrapping_add(1);
            if self.writes.is_multiple_of(crate::scope::Stop::EVERY) {
                stop.check().map_err(std::io::Error::other)?;
            }
        }
        self.bytes.extend_from_slice(buf);
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Prints a value as `{{ … }}` does, counting it against the render's
/// output budget (captured output too, which never reaches the writer).
pub(super) fn format_value(
    out: &mut minijinja::Output,
    state: &mut minijinja::State,
    value: &JValue,
) -> Result<(), minijinja::Error> {
    if !matches!(state.auto_escape(), AutoEscape::None) {
        // `{% autoescape on %}`: HTML escaping as minijinja does it (the
        // escaped text is at most six times as long).
        let len = value.as_str().map_or(0, str::len).saturating_mul(6);
        current::spend(len).map_err(current::exceeded)?;
        return minijinja::escape_formatter(out, state, value);
    }
    // (`as_i64` of a string builds an error message: ask only numbers.)
    let integer = value.kind() == ValueKind::Number && value.is_integer();
    if let Some(number) = integer.then(|| value.as_i64()).flatten() {
        // An integer (a count, a year, `loop.index`): Python's digits.
        let mut digits = itoa::Buffer::new();
        let text = digits.format(number);
        current::spend(text.len()).map_err(current::exceeded)?;
        return out.write_str(text).map_err(|_| write_error());
    }
    // Python's `str(value)`, as Jinja2 prints it.
    let text = python::display(value)?;
    current::spend(text.len()).map_err(current::exceeded)?;
    out.write_str(&text).map_err(|_| write_error())
}

fn write_error() -> minijinja::Error {
    minijinja::Error::new(ErrorKind::WriteFailure, "cannot write the output")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::Functions;
    use serde_json::{json, Value};

    fn compile_with(body: &str, functions: Functions) -> Result<JinjaTemplate, TemplateError> {
        JinjaTemplate::compile(
            body,
            Syntax::Jinja,
            &CompileOptions {
                strictness: Strictness::Semi,
                functions,
                jinja: Default::default(),
                limits: crate::limits::Limits::DEFAULT,
                includes: None,
                origin: crate::syntax::Origin::Teleprompt,
                data_roles: "user,assistant".into(),
            },
        )
    }

    fn scope() -> RenderScope {
        RenderScope::at_epoch(crate::limits::Limits::DEFAULT)
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
        let out = template
            .render(&Data::new(json!({"name": "ada"})), &mut scope())
            .unwrap();
        assert_eq!(out, "ADA! ADA! 7 a+b");
    }

    #[test]
    fn host_functions_take_keyword_arguments_as_a_trailing_object() {
        let echo = Functions::new().with("fetch", |args: &[Value]| Ok(Value::Array(args.to_vec())));
        let template = compile_with(
            "{{ fetch(7, depth=2, deep=true) | toJSON }} {{ 7 | fetch(depth=1) | toJSON }} {{ fetch() | toJSON }}",
            echo,
        )
        .unwrap();
        let out = template
            .render(&Data::new(json!({})), &mut scope())
            .unwrap();
        assert_eq!(out, r#"[7,{"depth":2,"deep":true}] [7,{"depth":1}] []"#);
    }

    #[test]
    fn host_function_errors_and_names() {
        let template = compile_with("{{ shout(3) }}", host()).unwrap();
        let error = template
            .render(&Data::new(json!({})), &mut scope())
            .unwrap_err();
        assert!(
            error
                .message
                .contains("error calling shout: takes a string"),
            "{error:?}"
        );

        let error = compile_with("{{ shuot(x) }}", host()).err().unwrap();
        assert_eq!(error.suggestion.as_deref(), Some("did you mean \"shout\"?"));

        // A dialect's own filters count as built-ins too.
        let clash = Functions::new().with("capfirst", |_: &[Value]| Ok(Value::Null));
        let options = CompileOptions {
            strictness: Strictness::Semi,
            functions: clash,
            jinja: Default::default(),
            limits: crate::limits::Limits::DEFAULT,
            includes: None,
            origin: crate::syntax::Origin::Teleprompt,
            data_roles: "user,assistant".into(),
        };
        let error = JinjaTemplate::compile("x", Syntax::Django, &options)
            .err()
            .unwrap();
        assert!(error
            .message
            .contains("\"capfirst\" has the name of a built-in"));

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

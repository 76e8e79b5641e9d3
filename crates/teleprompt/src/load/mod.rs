//! A document → a compiled prompt ([`Compiled`]): the file's kind and
//! front matter ([`crate::document`]) and the formats of other tools
//! ([`formats`]), each mapped onto a document and the prompt's own
//! metadata before the body is compiled by its syntax.

pub(crate) mod formats;
pub(crate) mod warnings;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::analysis::Inputs;
use crate::data::{self, Data};
use crate::diagnostics::{Error, ErrorClass};
use crate::document::include_root::{self, Dependency, Includes};
use crate::document::kind::FileKind;
use crate::document::{self, Document, Metadata};
use crate::limits::{self, Input};
use crate::messages::Role;
use crate::options::{LoadOptions, MessageReader, OnError, Strictness, Syntax};
use crate::schema::InputSchema;
use crate::syntax::{CompileOptions, Origin, Template};

/// A loaded prompt: a plain value that the render pipeline
/// ([`crate::render`]) and the analyses ([`crate::analysis`]) read.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub name: String,
    pub description: Option<String>,
    /// What kind of file the prompt came from (its origin).
    pub kind: FileKind,
    pub syntax: Syntax,
    pub strictness: Strictness,
    pub on_error: OnError,
    pub default_role: Role,
    pub continuation_prompt: Option<String>,
    pub defaults: Option<Arc<Value>>,
    /// `defaults` as a data layer, made at the first render and kept, so
    /// that what a syntax derives from it is kept too.
    pub defaults_layer: OnceLock<Data>,
    pub document: Document,
    pub template: Template,
    /// A tokenizer config's `tool_use` template, rendered instead when the
    /// data has `tools` and no template was named (as `transformers`
    /// chooses).
    pub tool_use: Option<Box<(Document, Template)>>,
    /// Inputs the data must hold (a Semantic Kernel prompt's required
    /// `input_variables` without a default).
    pub required: Vec<String>,
    /// The declared inputs (`input.schema`) the data is checked against
    /// before each render.
    pub schema: Option<InputSchema>,
    /// Messages by Dotprompt's rules (`messages: dotprompt`, `.prompt`
    /// files): text kept as rendered.
    pub dotprompt: bool,
    /// Messages by Prompty's rules (`messages: role-lines`, `.prompty`
    /// files): line breaks trimmed, empty messages kept.
    pub role_lines: bool,
    /// The input whose value is the history (a Prompty `kind: thread`
    /// input).
    pub thread: Option<String>,
    /// The hash of the prompt's own text.
    pub source_hash: u64,
    /// The files its load read or looked for (partials, includes, a
    /// sibling tokenizer config), for a library to tell when to rebuild it.
    pub dependencies: Vec<Dependency>,
    /// What counts its render's tokens: the host's, else the front
    /// matter's.
    pub tokenizer: Option<crate::tokens::Tokenizer>,
    /// A chat template with `{% generation %}` blocks (its own or its
    /// `tool_use` template): its tokens carry assistant masks.
    pub generation_blocks: bool,
    /// Front matter `budget`: the most tokens a turn may be, and the
    /// history's part in it.
    pub budget: Option<crate::tokens::BudgetSettings>,
    /// Front matter `cache.key`, made: the OpenAI shape's
    /// `prompt_cache_key`.
    pub cache_key: Option<Arc<str>>,
    /// Front matter `cache.breakpoints: auto`: the least tokens (about
    /// four bytes each) before an automatic breakpoint.
    pub auto_breakpoints: Option<u64>,
}

impl Compiled {
    /// The document and template a render runs: the `tool_use` template
    /// when `tool_use` and the prompt has one, else its own.
    pub(crate) fn template_for(&self, tool_use: bool) -> (&Document, &Template) {
        match &self.tool_use {
            Some(pair) if tool_use => (&pair.0, &pair.1),
            _ => (&self.document, &self.template),
        }
    }
}

/// A compiled prompt, and the errors its front end went on past (unknown
/// names, wrong argument counts: the first carries the others). With
/// those, the template compiled for its warnings only: the prompt does
/// not load.
pub(crate) type Loaded = (Compiled, Option<Error>);

/// Loads the prompt file at `path`; its includes resolve in
/// [`LoadOptions::include_root`], else in its own folder.
pub(crate) fn from_file(path: &Path, options: &LoadOptions) -> Result<Loaded, Error> {
    let origin = path.display().to_string();
    let bytes = limits::read_file(path, options.limits.max_template_bytes, Input::Template)?;
    let source = utf8(&origin, &bytes)?;
    let includes = Includes::for_file(
        path,
        options.include_root.as_deref(),
        options.limits.max_template_bytes,
    );
    let (mut compiled, found) = load(&origin, source, options, includes)?;
    // A `.jinja` chat template (by name, or as the host says).
    let jinja_file = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("jinja"));
    if found.is_none() && compiled.syntax == Syntax::ChatTemplate && jinja_file {
        add_sibling_tokens(&mut compiled, path, options.limits.max_template_bytes);
    }
    Ok((compiled, found))
}

/// Loads a prompt from text; `origin` names it as a file would.
pub(crate) fn from_source(
    origin: &str,
    source: &str,
    options: &LoadOptions,
) -> Result<Loaded, Error> {
    let includes = options
        .include_root
        .as_deref()
        .and_then(|root| Includes::in_root(root, options.limits.max_template_bytes));
    load(origin, source, options, includes)
}

/// `bytes` as UTF-8 text, else a `document` error naming `origin`.
pub(crate) fn utf8<'b>(origin: &str, bytes: &'b [u8]) -> Result<&'b str, Error> {
    std::str::from_utf8(bytes).map_err(|error| {
        Error::new(
            ErrorClass::Document,
            format!(
                "the file is not UTF-8 text (invalid byte at offset {})",
                error.valid_up_to()
            ),
        )
        .with_file(origin)
    })
}

/// A `chat_template.jinja` ships beside its `tokenizer_config.json`,
/// which holds the special tokens the template prints: they become
/// defaults too (the host's data still wins).
fn add_sibling_tokens(compiled: &mut Compiled, path: &Path, max_bytes: usize) {
    let (tokens, dependency) = formats::hf_tokenizer::sibling_tokens(path, max_bytes);
    compiled.dependencies.extend(dependency);
    let Some(tokens) = tokens else {
        return;
    };
    compiled.defaults = Some(Arc::new(match compiled.defaults.take() {
        Some(own) => data::merge_under(Arc::unwrap_or_clone(own), &tokens),
        None => tokens,
    }));
    compiled.defaults_layer = OnceLock::new();
}

/// The document and metadata of `source` by its kind of file: another
/// tool's format mapped onto the prompt's own keys, or front matter. Also
/// a tokenizer config's `tool_use` template and a Semantic Kernel
/// prompt's required inputs.
fn read_document(
    kind: FileKind,
    origin: &str,
    source: &str,
    options: &LoadOptions,
    includes: Option<&Includes>,
) -> Result<(Document, Metadata, Option<Document>, Vec<String>), Error> {
    match kind {
        FileKind::TokenizerConfig => {
            let (document, metadata, tool_use) =
                formats::hf_tokenizer::read(origin, source, options.template_name.as_deref())?;
            Ok((document, metadata, tool_use, Vec::new()))
        }
        // Any JSON file is a tokenizer config when the host says so.
        FileKind::Json if options.syntax == Some(Syntax::ChatTemplate) => {
            let (document, metadata, tool_use) =
                formats::hf_tokenizer::read(origin, source, options.template_name.as_deref())?;
            Ok((document, metadata, tool_use, Vec::new()))
        }
        FileKind::Yaml | FileKind::Tests => {
            let prompt = formats::semantic_kernel::read(origin, source)?;
            Ok((prompt.document, prompt.metadata, None, prompt.required))
        }
        _ => {
            let mut document = Document::parse(origin, source)?;
            let mut metadata = document.metadata()?;
            match kind {
                FileKind::Prompty => {
                    let references = formats::prompty::References {
                        env: options.env_references,
                        files: options.file_references,
                        includes,
                    };
                    formats::prompty::apply(&document, &mut metadata, &references)?
                }
                FileKind::Dotprompt | FileKind::DotpromptPartial => {
                    formats::dotprompt::apply(&mut document, &mut metadata)?
                }
                _ => {}
            }
            Ok((document, metadata, None, Vec::new()))
        }
    }
}

fn load(
    origin: &str,
    source: &str,
    options: &LoadOptions,
    includes: Option<Includes>,
) -> Result<Loaded, Error> {
    let path = Path::new(origin);
    let kind = FileKind::of(path);
    let by_name = FileKind::syntax(path);
    let (document, mut metadata, tool_use, required) =
        read_document(kind, origin, source, options, includes.as_ref())?;
    // `.jinja` says "a Jinja-family syntax"; a host that names one of
    // them (chat-template, django) says which.
    let from_file = match (by_name, options.syntax) {
        (Some(Syntax::Jinja), Some(host)) if host.is_jinja_family() => Some(host),
        (named, host) => named.or(host),
    };
    let syntax = metadata.syntax.or(from_file).ok_or_else(|| {
        Error::new(
            ErrorClass::Document,
            format!(
                "cannot tell the template syntax of this file: add `syntax: NAME` \
                     ({}) to its front matter, give it an extension \
                     ({}), or pass --syntax",
                Syntax::NAMES,
                Syntax::EXTENSIONS
            ),
        )
        .with_file(origin)
    })?;
    if syntax == Syntax::ChatTemplate {
        formats::hf_tokenizer::complete(&mut metadata, path, kind);
    }
    let strictness = options
        .strictness
        .or(metadata.strict)
        .unwrap_or_else(|| syntax.default_strictness());
    let default_role = metadata.default_role.unwrap_or(Role::User);
    let dotprompt = metadata.messages == Some(MessageReader::Dotprompt);
    let role_lines = metadata.messages == Some(MessageReader::RoleLines);
    let limits = options
        .limits
        .lowered_by(&metadata.limits)
        .map_err(|message| document.key_error(document::key::LIMITS, message))?;
    let tokenizer = match (&options.tokenizer, &metadata.tokenizer) {
        (Some(host), _) => Some(host.clone()),
        (None, Some(value)) => Some(
            crate::tokens::Tokenizer::resolve(
                value,
                includes
                    .as_ref()
                    .map(|includes| (includes.root(), includes.dir())),
            )
            .map_err(|message| document.key_error(document::key::TOKENIZER, message))?,
        ),
        // A Hugging Face model folder's own tokenizer, beside its chat
        // template (a regular file: a link is not followed), read when
        // first used.
        (None, None) if syntax == Syntax::ChatTemplate && includes.is_some() => path
            .parent()
            .map(|dir| match dir.as_os_str().is_empty() {
                true => Path::new("."),
                false => dir,
            })
            .filter(|dir| {
                std::fs::symlink_metadata(dir.join("tokenizer.json"))
                    .is_ok_and(|meta| meta.file_type().is_file())
            })
            .and_then(|dir| crate::tokens::Tokenizer::from_file(dir, "tokenizer.json").ok()),
        (None, None) => None,
    };
    let looked_at = includes.clone();
    let compile = CompileOptions {
        strictness,
        functions: options.functions.clone(),
        jinja: metadata.jinja.or(options.jinja),
        limits,
        includes,
        origin: prompt_origin(kind, &document),
        data_roles: options
            .data_roles_or_default()
            .iter()
            .map(|role| role.as_str())
            .collect::<Vec<_>>()
            .join(","),
    };
    let compile_body = |document: &Document| {
        Template::compile(
            syntax,
            &document.body,
            metadata.messages.unwrap_or_default(),
            default_role,
            metadata.thread.as_deref(),
            &compile,
        )
        .map_err(|error| document.locate(error))
        .map(|(template, found)| (template, found.map(|error| document.locate(error))))
    };
    let (template, mut found) = compile_body(&document)?;
    let tool_use = match tool_use {
        Some(tool_document) => {
            let (template, more) = compile_body(&tool_document)?;
            found = match (found, more) {
                (Some(first), Some(more)) => Some(first.with_others([more])),
                (first, more) => first.or(more),
            };
            Some(Box::new((tool_document, template)))
        }
        None => None,
    };
    if metadata.budget.is_some() && tokenizer.is_none() {
        return Err(document.key_error(
            document::key::BUDGET,
            "a budget counts tokens: name the tokenizer too (`tokenizer: o200k_base`, or a tokenizer.json beside the prompt)".to_string(),
        ));
    }
    let generation_blocks = syntax == Syntax::ChatTemplate
        && std::iter::once(&document)
            .chain(tool_use.as_deref().map(|(document, _)| document))
            .any(|document| crate::syntax::has_generation_blocks(&document.body));
    let name = metadata.name.unwrap_or_else(|| document::file_stem(path));
    let source_hash = include_root::content_hash(source.as_bytes());
    let cache_key = metadata.cache.key.map(|key| match key {
        document::CacheKey::Named(key) => Arc::from(key),
        document::CacheKey::Derived => Arc::from(format!("{name}@{:08x}", source_hash as u32)),
    });
    let compiled = Compiled {
        name,
        description: metadata.description,
        kind,
        syntax,
        strictness,
        on_error: metadata.on_error.unwrap_or_default(),
        default_role,
        continuation_prompt: metadata.continuation_prompt,
        defaults: metadata.defaults.map(Arc::new),
        defaults_layer: OnceLock::new(),
        document,
        template,
        tool_use,
        required,
        schema: metadata.schema,
        dotprompt,
        role_lines,
        thread: metadata.thread.clone(),
        source_hash,
        dependencies: looked_at.map(|i| i.looked_at()).unwrap_or_default(),
        tokenizer,
        generation_blocks,
        budget: metadata.budget,
        cache_key,
        auto_breakpoints: metadata.cache.auto.then_some(metadata.cache.min_tokens),
    };
    Ok((compiled, found))
}

/// The system a prompt was written for: Semantic Kernel for its prompt
/// YAML and for a file whose front matter says `template_format:
/// handlebars` (SK's key), Dotprompt for a `.prompt` file, else
/// teleprompt (a teleprompt prompt that reads SK's `<message>` tags with
/// `messages: sk-tags` keeps teleprompt's helpers).
fn prompt_origin(kind: FileKind, document: &Document) -> Origin {
    let sk_key = document.front_matter.get("template_format")
        == Some(&Value::String("handlebars".to_string()));
    match kind {
        FileKind::Yaml | FileKind::Tests => Origin::SemanticKernel,
        _ if sk_key => Origin::SemanticKernel,
        FileKind::Dotprompt | FileKind::DotpromptPartial => Origin::Dotprompt,
        _ => Origin::Teleprompt,
    }
}

impl Compiled {
    /// What the template reads of the data the host passes (the prompt
    /// context's namespaces left out, but for a chat template): `None` only
    /// if the template no longer parses.
    pub(crate) fn inputs(&self) -> Option<Inputs> {
        let mut inputs = self.template.inputs()?;
        if let Some(thread) = &self.thread {
            // The thread input is read as the conversation, a list of
            // messages, wherever the template prints it.
            use crate::analysis::Step;
            inputs.add(&[Step::Key(thread.clone()), Step::Each]);
        }
        if self.syntax == Syntax::ChatTemplate {
            return Some(inputs);
        }
        Some(inputs.without(|name| crate::context::RESERVED.contains(&name)))
    }

    /// The file name the prompt was loaded from.
    pub(crate) fn origin(&self) -> &str {
        &self.document.origin
    }

    /// Whether a render may read `name` from the top level of the data
    /// (see [`crate::Prompt::reads`]).
    pub(crate) fn reads(&self, name: &str) -> bool {
        self.template.reads(name)
            || self.schema.as_ref().is_some_and(|s| s.declares(name))
            || self.thread.as_deref() == Some(name)
    }
}

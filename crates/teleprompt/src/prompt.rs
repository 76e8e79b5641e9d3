//! A prompt: a file loaded once (front matter, template body, the formats
//! of other tools), compiled, then rendered many times into text and
//! messages.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::limits::{self, Input};
use crate::messages;
use crate::scope::RenderScope;
use crate::{
    context, data, document, syntax, ChatMessage, ContentPart, Data, Document, Entry, Error,
    ErrorClass, LoadOptions, Message, OnError, OutputFormat, PromptContext, Role, Strictness,
    Syntax,
};

/// A compiled prompt: load it once, render it many times.
///
/// A `Prompt` is immutable and `Send + Sync`; renders borrow their data.
#[derive(Debug)]
pub struct Prompt {
    name: String,
    description: Option<String>,
    syntax: Syntax,
    strictness: Strictness,
    on_error: OnError,
    default_role: Role,
    continuation_prompt: Option<String>,
    defaults: Option<Arc<Value>>,
    /// `defaults` as a data layer, made at the first render and kept, so
    /// that what a syntax derives from it is kept too.
    defaults_layer: std::sync::OnceLock<Data>,
    document: Document,
    template: syntax::Template,
    /// A tokenizer config's `tool_use` template, rendered instead when the
    /// data has `tools` and no template was named (as `transformers`
    /// chooses).
    tool_use: Option<Box<(Document, syntax::Template)>>,
    /// Inputs the data must hold (a Semantic Kernel prompt's required
    /// `input_variables` without a default).
    required: Vec<String>,
    /// The declared inputs (`input.schema`) the data is checked against
    /// before each render.
    schema: Option<crate::schema::InputSchema>,
    /// Messages by Dotprompt's rules (`messages: dotprompt`, `.prompt`
    /// files): text kept as rendered.
    dotprompt: bool,
    /// The hash of the prompt's own text.
    source_hash: u64,
    /// The files its load read or looked for (partials, includes, a
    /// sibling tokenizer config), for a library to tell when to rebuild it.
    dependencies: Vec<crate::include::Dependency>,
}

impl Prompt {
    /// Loads a prompt file with default options.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Prompt, Error> {
        Prompt::from_file_with(path, &LoadOptions::default())
    }

    /// Loads a prompt file.
    pub fn from_file_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Prompt, Error> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let bytes = limits::read_file(path, options.limits.max_template_bytes, Input::Template)?;
        let source = Prompt::utf8(&origin, &bytes)?;
        let includes = crate::include::Includes::for_file(
            path,
            options.include_root.as_deref(),
            options.limits.max_template_bytes,
        );
        let mut prompt = Prompt::load(&origin, source, options, includes)?;
        prompt.add_sibling_tokens(path, options.limits.max_template_bytes);
        Ok(prompt)
    }

    /// Loads a prompt from the bytes of a file (a `tokenizer_config.json`
    /// fetched from a model hub, a prompt kept in a database): `origin` is
    /// its file name, which selects the format as for a file. Bytes that are
    /// not UTF-8 are a `document` error.
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt};
    /// use serde_json::json;
    ///
    /// let config = br#"{"chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}", "bos_token": "<s>"}"#;
    /// let prompt = Prompt::from_bytes("tokenizer_config.json", config, &LoadOptions::default())?;
    /// let rendered = prompt.render(json!({"messages": [{"role": "user", "content": "Hi"}]}))?;
    /// assert_eq!(rendered.text(), "<s>Hi");
    /// # Ok::<(), teleprompt::Error>(())
    /// ```
    pub fn from_bytes(origin: &str, bytes: &[u8], options: &LoadOptions) -> Result<Prompt, Error> {
        Prompt::from_source(origin, Prompt::utf8(origin, bytes)?, options)
    }

    fn utf8<'b>(origin: &str, bytes: &'b [u8]) -> Result<&'b str, Error> {
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
    /// defaults too (the host's data still wins). A missing or unreadable
    /// config adds nothing.
    fn add_sibling_tokens(&mut self, path: &Path, max_bytes: usize) {
        let is_template_file = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("jinja"));
        if self.syntax != Syntax::ChatTemplate || !is_template_file {
            return;
        }
        let Some(config_path) = path.parent().map(|dir| dir.join("tokenizer_config.json")) else {
            return;
        };
        let bytes = limits::read_file(&config_path, max_bytes, Input::Template).ok();
        self.dependencies.push(crate::include::Dependency {
            path: config_path.canonicalize().unwrap_or(config_path),
            name: "tokenizer_config.json".into(),
            hash: bytes.as_deref().map(crate::include::content_hash),
        });
        let Some(config) = bytes.and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        else {
            return;
        };
        let Value::Object(config) = config else {
            return;
        };
        let tokens = Value::Object(syntax::jinja::hf::special_tokens(&config));
        self.defaults = Some(Arc::new(match self.defaults.take() {
            Some(own) => data::merge_under(Arc::unwrap_or_clone(own), &tokens),
            None => tokens,
        }));
        self.defaults_layer = std::sync::OnceLock::new();
    }

    /// Loads a prompt from text. `origin` is the file name used for the
    /// default name, the syntax by extension, and in error reports. Files
    /// it includes (Handlebars partials, Go templates) are read only from
    /// [`LoadOptions::include_root`], when set.
    pub fn from_source(origin: &str, source: &str, options: &LoadOptions) -> Result<Prompt, Error> {
        let includes = options.include_root.as_deref().and_then(|root| {
            crate::include::Includes::in_root(root, options.limits.max_template_bytes)
        });
        Prompt::load(origin, source, options, includes)
    }

    fn load(
        origin: &str,
        source: &str,
        options: &LoadOptions,
        includes: Option<crate::include::Includes>,
    ) -> Result<Prompt, Error> {
        let path = Path::new(origin);
        let by_name = Syntax::from_path(path);
        let is_json = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
        let mut required = Vec::new();
        let (document, mut metadata, tool_use) =
            if is_json && by_name.or(options.syntax) == Some(Syntax::ChatTemplate) {
                Prompt::read_tokenizer_config(origin, source, options)?
            } else if syntax::handlebars::sk::is_sk_prompt(origin) {
                let prompt = syntax::handlebars::sk::read(origin, source)?;
                required = prompt.required;
                (prompt.document, prompt.metadata, None)
            } else {
                let mut document = Document::parse(origin, source)?;
                let mut metadata = document.metadata()?;
                if syntax::jinja::prompty::is_prompty(origin) {
                    syntax::jinja::prompty::apply(&document, &mut metadata)?;
                } else if syntax::handlebars::dotprompt::is_dotprompt(origin) {
                    syntax::handlebars::dotprompt::apply(&mut document, &mut metadata)?;
                }
                (document, metadata, None)
            };
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
            // What `transformers` passes to every chat template.
            let base = syntax::jinja::hf::base_arguments();
            metadata.defaults = Some(match metadata.defaults.take() {
                Some(own) => data::merge_under(own, &base),
                None => base,
            });
            if metadata.name.is_none() && by_name == Some(Syntax::ChatTemplate) {
                // `…/Llama-3.1-8B-Instruct/tokenizer_config.json` is that model's.
                metadata.name = path
                    .parent()
                    .and_then(Path::file_name)
                    .map(|dir| dir.to_string_lossy().into_owned());
            }
        }
        let strictness = options
            .strict
            .or(metadata.strict)
            .unwrap_or_else(|| syntax.default_strictness());
        let default_role = metadata.default_role.unwrap_or(Role::User);
        let dotprompt = metadata.messages == Some(crate::MessageReader::Dotprompt);
        let limits = options
            .limits
            .lowered_by(&metadata.limits)
            .map_err(|message| document.key_error(crate::document::key::LIMITS, message))?;
        let looked_at = includes.clone();
        let compile = syntax::CompileOptions {
            strictness,
            functions: options.functions.clone(),
            jinja: metadata.jinja.or(options.jinja),
            limits,
            includes,
            // Semantic Kernel's prompt YAML implies SK's messages; a
            // Handlebars file may say `template_format: handlebars`, SK's key.
            sk_helpers: metadata.messages == Some(crate::MessageReader::SkTags)
                || document.front_matter.get("template_format")
                    == Some(&Value::String("handlebars".to_string())),
        };
        let compile_body = |document: &Document| {
            syntax::Template::compile(
                syntax,
                &document.body,
                metadata.messages.unwrap_or_default(),
                default_role,
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
        let prompt = Prompt {
            name: metadata.name.unwrap_or_else(|| document::file_stem(path)),
            description: metadata.description,
            syntax,
            strictness,
            on_error: metadata.on_error.unwrap_or_default(),
            default_role,
            continuation_prompt: metadata.continuation_prompt,
            defaults: metadata.defaults.map(Arc::new),
            defaults_layer: std::sync::OnceLock::new(),
            document,
            template,
            tool_use,
            required,
            schema: metadata.schema,
            dotprompt,
            source_hash: crate::include::content_hash(source.as_bytes()),
            dependencies: looked_at.map(|i| i.looked_at()).unwrap_or_default(),
        };
        match found {
            // Errors the front end went on past: the template compiled
            // (for its warnings), but the prompt does not load.
            Some(error) => Err(error.with_warnings(prompt.warnings())),
            None => Ok(prompt),
        }
    }

    /// A Hugging Face `tokenizer_config.json`: its chat template (the one
    /// named `options.template_name` from a list) is the body, its special
    /// tokens are defaults under the data. Lines in errors count in the
    /// template text. With a list of named templates and no name asked
    /// for, also the `tool_use` template, for renders with `tools`.
    fn read_tokenizer_config(
        origin: &str,
        source: &str,
        options: &LoadOptions,
    ) -> Result<(Document, document::Metadata, Option<Document>), Error> {
        let config =
            syntax::jinja::hf::read_config(origin, source, options.template_name.as_deref())?;
        let label = |name: Option<&str>| match name {
            Some(name) => format!("{origin} (chat_template \"{name}\")"),
            None => format!("{origin} (chat_template)"),
        };
        let document = Document::plain(&label(config.name.as_deref()), config.template);
        let tool_use = config
            .tool_use
            .map(|template| Document::plain(&label(Some(syntax::jinja::hf::TOOL_USE)), template));
        let metadata = document::Metadata {
            syntax: Some(Syntax::ChatTemplate),
            defaults: Some(Value::Object(config.tokens)),
            ..document::Metadata::default()
        };
        Ok((document, metadata, tool_use))
    }

    /// Renders the prompt against plain data.
    ///
    /// `data` is anything that converts into [`Data`]: a `serde_json::Value`
    /// (moved, not copied), an `Arc<Value>`, or a `&Data` kept by the host.
    /// The prompt's `input.default` values sit underneath it.
    ///
    /// With `on_error: original` a failed render returns the unrendered body
    /// and the error in [`Rendered::recovered_error`].
    pub fn render(&self, data: impl Into<Data>) -> Result<Rendered, Error> {
        self.render_with(data, &RenderOptions::default())
    }

    /// [`Prompt::render`] with options: the clock behind Jinja's
    /// `strftime_now` (a chat template's date line), for instance.
    pub fn render_with(
        &self,
        data: impl Into<Data>,
        options: &RenderOptions,
    ) -> Result<Rendered, Error> {
        let data = data.into();
        let data = match &self.defaults {
            Some(defaults) => data.over_data(
                self.defaults_layer
                    .get_or_init(|| Data::new(defaults.clone())),
            ),
            None => data,
        };
        let data = self.with_context(data, options)?;
        let turn = Turn {
            now: Some(options.clock.now().to_zoned(jiff::tz::TimeZone::UTC)),
            ..Turn::default()
        };
        self.render_data(&data, turn)
    }

    /// Renders one turn of a conversation: the data comes from `context`
    /// (clock, namespaces, args, turn, workspace), the history is placed
    /// where the template calls `history()` (or after the rendered
    /// messages), and every error carries the context's labels.
    pub fn render_turn(&self, context: &PromptContext) -> Result<Rendered, Error> {
        self.render_turn_with(context, &RenderOptions::default())
    }

    /// [`Prompt::render_turn`] with options.
    pub fn render_turn_with(
        &self,
        context: &PromptContext,
        options: &RenderOptions,
    ) -> Result<Rendered, Error> {
        let labels = context.labels();
        let label = |error: Error| error.with_labels(labels);
        if options.validate_history {
            context.validate_history().map_err(|error| {
                let rule = format!("rule {}: {}", error.rule.name(), error.rule.description());
                label(Error::new(ErrorClass::Input, error.to_string()).with_suggestion(Some(rule)))
            })?;
        }
        let reads = |name: &str| self.reads(name);
        let built = context
            .build_with_defaults(&reads, self.defaults.clone())
            .map_err(label)?;
        let turn = Turn {
            now: Some(context.now()),
            history: context.shared_history(),
            continuation: context.is_continuation(),
            warnings: built.warnings,
        };
        let data = self.with_context(built.data, options).map_err(label)?;
        let mut rendered = self.render_data(&data, turn).map_err(label)?;
        rendered.recovered = rendered.recovered.map(label);
        Ok(rendered)
    }

    fn render_data(&self, data: &Data, mut turn: Turn) -> Result<Rendered, Error> {
        self.check_required(data)?;
        self.check_schema(data)?;
        if let Some(schema) = &self.schema {
            turn.warnings.extend(schema.near_misses(data.root()));
        }
        let now = turn
            .now
            .unwrap_or_else(|| jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC));
        let (document, template) = match &self.tool_use {
            Some(tool_use)
                if data
                    .root()
                    .get("tools")
                    .is_some_and(|t| !t.value().is_null()) =>
            {
                (&tool_use.0, &tool_use.1)
            }
            _ => (&self.document, &self.template),
        };
        let mut scope = RenderScope::new(now, template.limits());
        let output = template.render(data, &mut scope);
        let markers = scope.markers();
        let split = output
            .map_err(|error| document.locate(error))
            .and_then(|output| {
                if self.dotprompt {
                    return markers
                        .split_dotprompt(&output, self.default_role)
                        .map(Cut::from)
                        .map_err(|error| {
                            Error::new(ErrorClass::Render, error.to_string())
                                .with_file(self.origin())
                        });
                }
                if !markers.made_any() {
                    // No marker was made, so none (nor a piece of one) is
                    // in the output: one message, without a scan.
                    return Ok(Cut::plain(output));
                }
                markers
                    .split(&output, self.default_role)
                    .map(Cut::from)
                    .map_err(|error| {
                        Error::new(ErrorClass::Render, error.to_string()).with_file(self.origin())
                    })
            });
        let (split, recovered) = match split {
            Ok(split) => (split, None),
            Err(error) if self.on_error == OnError::Original => {
                (Cut::plain(document.body.clone()), Some(error))
            }
            Err(error) => return Err(error),
        };
        let split = match turn.continuation && split.text.trim().is_empty() {
            true => {
                let fallback =
                    context::continuation_fallback("", true, self.continuation_prompt.as_deref());
                Cut::plain(fallback.to_string())
            }
            false => split,
        };
        Ok(Rendered {
            text: split.text,
            items: split.items.map_or_else(OnceLock::new, OnceLock::from),
            default_role: self.default_role,
            generations: split.generations,
            history: turn.history,
            warnings: turn.warnings,
            recovered,
        })
    }

    /// `data` with the host's render context on top, where a Dotprompt
    /// template's `@state`, `@auth`, … read it. Data that holds the
    /// context's reserved key itself is an `input` error: it could
    /// otherwise pose as the host's context (layers merge deeply).
    fn with_context(&self, data: Data, options: &RenderOptions) -> Result<Data, Error> {
        let key = syntax::handlebars::dotprompt::CONTEXT_KEY;
        if !self.dotprompt {
            return Ok(data);
        }
        if data.root().get(key).is_some() {
            return Err(Error::new(
                ErrorClass::Input,
                "the data holds the key reserved for the host's render context: \
                 pass the context in RenderOptions::context",
            )
            .with_file(self.origin()));
        }
        // Without a context, an empty one: `@auth` is then missing as
        // `auth`, not as the reserved key.
        let context = options
            .context
            .as_deref()
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        let mut layer = Map::new();
        layer.insert(key.to_string(), context);
        Ok(data.under(Value::Object(layer)))
    }

    /// Every required input the data lacks, in one `input` error.
    fn check_required(&self, data: &Data) -> Result<(), Error> {
        let root = data.root();
        let missing: Vec<&str> = self
            .required
            .iter()
            .map(String::as_str)
            .filter(|name| root.get(name).is_none())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let names = missing
            .iter()
            .map(|name| format!("\"{name}\""))
            .collect::<Vec<_>>()
            .join(", ");
        Err(Error::new(
            ErrorClass::Input,
            match missing.len() {
                1 => format!("the prompt requires the input {names}, which the data does not have"),
                _ => {
                    format!("the prompt requires the inputs {names}, which the data does not have")
                }
            },
        )
        .with_file(self.origin())
        .with_suggestion(Some(
            "pass it, give it a `default`, or set `is_required: false` in `input_variables`"
                .to_string(),
        )))
    }

    /// The data against the declared inputs (`input.schema`): every
    /// violation, one per line, in one `input` error placed on the front
    /// matter's `input` key.
    fn check_schema(&self, data: &Data) -> Result<(), Error> {
        let Some(schema) = &self.schema else {
            return Ok(());
        };
        let violations = schema.check(data.root());
        if violations.is_empty() {
            return Ok(());
        }
        let mut message =
            String::from("the data does not fit the prompt's declared inputs (`input.schema`):");
        for violation in violations.iter().take(crate::schema::MAX_VIOLATIONS) {
            message.push_str("\n  ");
            message.push_str(&violation.to_string());
        }
        if violations.len() > crate::schema::MAX_VIOLATIONS {
            message.push_str(&format!(
                "\n  … and more (the first {} are shown)",
                crate::schema::MAX_VIOLATIONS
            ));
        }
        Err(self.document.place_on_key(
            Error::new(ErrorClass::Input, message),
            crate::document::key::INPUT,
        ))
    }

    /// Likely mistakes that neither stop loading nor rendering, each placed
    /// in the file (class [`ErrorClass::Warning`]): in Go syntax, a root
    /// name such as `.issue` read inside `range` or `with`, where dot is
    /// the element (`did you mean "$.issue.title"?`); a mapping printed as
    /// it is; with `input.schema`, a path read that it does not declare
    /// and a declared input never read.
    pub fn warnings(&self) -> Vec<Error> {
        // Names that are the top level of what a render sees, whatever the
        // template reads: the prompt context's own namespaces (those no
        // data element is likely to have as a field), the prompt's
        // defaults, and for Sortie's workflow file the issue it is given.
        let sortie = Path::new(&self.document.origin)
            .file_name()
            .is_some_and(|name| name.eq_ignore_ascii_case("WORKFLOW.md"));
        let root = |name: &str| {
            matches!(
                name,
                "system" | "run" | "attempt" | "readme" | "custom_rules"
            ) || (sortie && name == "issue")
                || self
                    .defaults
                    .as_deref()
                    .is_some_and(|defaults| defaults.get(name).is_some())
                || self
                    .schema
                    .as_ref()
                    .is_some_and(|schema| schema.declares(name))
        };
        let structured = |path: &[crate::check::Step]| {
            self.schema
                .as_ref()
                .is_some_and(|schema| schema.declares_structure(path))
        };
        let mut warnings: Vec<Error> = self
            .template
            .warnings(&root, &structured)
            .into_iter()
            .map(|warning| self.document.locate(warning))
            .collect();
        warnings.extend(self.declared_input_warnings());
        // In the order of the file, as a reader meets them; warnings with
        // no place come last.
        warnings.sort_by_key(|warning| {
            warning
                .location()
                .map_or((usize::MAX, usize::MAX), |at| (at.line, at.column))
        });
        warnings
    }

    /// With `input.schema`: a path the template reads that the schema
    /// does not declare (a top-level name, or a key of an object the schema
    /// closes: see [`crate::schema`]), with the declared path it likely
    /// meant, placed where the template first reads it; and a declared
    /// input it never reads, placed on its key under `input.schema`.
    fn declared_input_warnings(&self) -> Vec<Error> {
        let (Some(schema), Some(inputs)) = (&self.schema, self.inputs()) else {
            return Vec::new();
        };
        let on_input_line = |error: Error| {
            self.document
                .place_on_key(error, crate::document::key::INPUT)
        };
        let defaulted = |name: &str| {
            self.defaults
                .as_deref()
                .is_some_and(|defaults| defaults.get(name).is_some())
        };
        let mut found = Vec::new();
        for read in schema.undeclared_reads(&inputs, &defaulted) {
            let message = format!(
                "the template reads `{}`, which input.schema does not declare",
                read.path
            );
            let suggestion = read.meant.map(|meant| format!("did you mean `{meant}`?"));
            found.push(match read.span {
                Some(span) => {
                    let warning = crate::diagnostics::TemplateError::parse(Some(span), message)
                        .suggest(suggestion)
                        .with_kind("undeclared-input");
                    self.document.locate(self.template.place_warning(warning))
                }
                None => on_input_line(
                    Error::new(ErrorClass::Warning, message)
                        .with_kind("undeclared-input")
                        .with_suggestion(suggestion),
                ),
            });
        }
        if !inputs.reads_whole() {
            for name in schema.names() {
                if inputs.names().all(|read| read != name) {
                    let on_its_key = |error: Error| {
                        self.document.place_on_paths(
                            error,
                            &[
                                &["input", "schema", name],
                                &["input", "schema", "properties", name],
                            ],
                        )
                    };
                    found.push(on_its_key(
                        Error::new(
                            ErrorClass::Warning,
                            format!("input `{name}` is declared but the template never reads it"),
                        )
                        .with_kind("unused-input"),
                    ));
                }
            }
        }
        found
    }

    /// What the template reads of the data the host passes (the prompt
    /// context's namespaces, `system`, `run`, …, left out): paths with
    /// their nesting and the lists walked, in every syntax (`None` only if
    /// the template no longer parses).
    /// `teleprompt inspect` prints it as Picoschema and JSON Schema for
    /// front matter `input.schema`.
    pub fn inputs(&self) -> Option<crate::check::Inputs> {
        let inputs = self.template.inputs()?;
        if self.syntax == Syntax::ChatTemplate {
            return Some(inputs);
        }
        Some(inputs.without(|name| crate::context::RESERVED.contains(&name)))
    }

    /// Whether a render may read `name` from the top level of the data:
    /// false only when the template certainly never does (true whenever it
    /// cannot tell, e.g. when it walks the whole data), and true for a
    /// declared input, which is checked before rendering. Reading a data file
    /// with it ([`crate::data::read_file_keeping`]) builds only what the
    /// prompt may read.
    pub fn reads(&self, name: &str) -> bool {
        self.template.reads(name) || self.schema.as_ref().is_some_and(|s| s.declares(name))
    }

    /// The declared inputs (front matter `input.schema`), if any.
    pub fn input_schema(&self) -> Option<&crate::schema::InputSchema> {
        self.schema.as_ref()
    }

    /// The prompt's version: a hash of its text and of every file it
    /// included, by its path relative to the include root (16 hex
    /// digits): the same in every process, and for a folder checked out in
    /// two places. It changes when any of them does.
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt};
    /// let a = Prompt::from_source("a.j2", "Hi {{ name }}", &LoadOptions::default())?;
    /// let b = Prompt::from_source("b.j2", "Hi {{ name }}!", &LoadOptions::default())?;
    /// assert_eq!(a.version().len(), 16);
    /// assert_ne!(a.version(), b.version());
    /// # Ok::<(), teleprompt::Error>(())
    /// ```
    pub fn version(&self) -> String {
        let mut bytes = self.source_hash.to_le_bytes().to_vec();
        for dependency in &self.dependencies {
            bytes.extend_from_slice(dependency.name.as_os_str().as_encoded_bytes());
            bytes.push(0);
            if let Some(hash) = dependency.hash {
                bytes.extend_from_slice(&hash.to_le_bytes());
            }
        }
        format!("{:016x}", crate::include::content_hash(&bytes))
    }

    /// The files the prompt's load read besides its own (partials,
    /// included templates, a chat template's `tokenizer_config.json`), in
    /// the order first read.
    pub fn included_files(&self) -> impl Iterator<Item = &Path> {
        self.dependencies
            .iter()
            .filter(|dependency| dependency.hash.is_some())
            .map(|dependency| dependency.path.as_path())
    }

    /// What the prompt's load looked at, for a library's reload.
    pub(crate) fn dependencies(&self) -> &[crate::include::Dependency] {
        &self.dependencies
    }

    /// The prompt's name: front matter `name`, else the file stem.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Front matter `description`.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The template syntax.
    pub fn syntax(&self) -> Syntax {
        self.syntax
    }

    /// The strictness the prompt renders with.
    pub fn strictness(&self) -> Strictness {
        self.strictness
    }

    /// What a failed render returns.
    pub fn on_error(&self) -> OnError {
        self.on_error
    }

    /// The role of text before the first role marker (front matter
    /// `default_role`, else `user`).
    pub fn default_role(&self) -> Role {
        self.default_role
    }

    /// Front matter `continuation_prompt`.
    pub fn continuation_prompt(&self) -> Option<&str> {
        self.continuation_prompt.as_deref()
    }

    /// The whole front matter, known keys and the host's own (`tracker`,
    /// `agent`, …) alike.
    pub fn metadata(&self) -> &Map<String, Value> {
        &self.document.front_matter
    }

    /// The file name the prompt was loaded from.
    pub fn origin(&self) -> &str {
        &self.document.origin
    }

    /// The template body as written (CRLF turned into LF).
    pub fn body(&self) -> &str {
        &self.document.body
    }
}

/// A render's text and its messages.
struct Cut {
    text: String,
    /// The messages; `None` when the whole text is one message of the
    /// default role (made from the text when first asked for: a host that
    /// reads only the text never pays for a copy of it).
    items: Option<Vec<messages::Item>>,
    generations: Vec<std::ops::Range<usize>>,
}

impl Cut {
    /// `text` as one message of the default role.
    fn plain(text: String) -> Cut {
        Cut {
            text,
            items: None,
            generations: Vec::new(),
        }
    }
}

impl From<messages::Split> for Cut {
    fn from(split: messages::Split) -> Cut {
        Cut {
            text: split.text,
            items: Some(split.items),
            generations: split.generations,
        }
    }
}

/// `text` as one message of `role` (none if it is only whitespace).
fn plain_items(text: &str, role: Role) -> Vec<messages::Item> {
    let content = text.trim();
    if content.is_empty() {
        return Vec::new();
    }
    vec![messages::Item::Message(Message {
        role,
        content: vec![ContentPart::Text {
            text: content.to_string(),
        }],
    })]
}

/// What a render adds to the data: the conversation around it.
#[derive(Default)]
struct Turn {
    /// The current time of the render.
    now: Option<jiff::Zoned>,
    history: Arc<Vec<ChatMessage>>,
    continuation: bool,
    warnings: Vec<String>,
}

/// Options of one render.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// Check the history against the tool-call rules before rendering
    /// (default `true`; [`Prompt::render_turn_with`]).
    pub validate_history: bool,
    /// The clock of [`Prompt::render_with`] (default: the system clock);
    /// a turn takes its [`PromptContext`]'s clock instead.
    pub clock: context::Clock,
    /// The host's render context (Dotprompt's `context`): a Dotprompt
    /// template reads its keys as data variables, `{{@state.step}}`,
    /// `{{@auth.uid}}`. The data cannot shadow them.
    pub context: Option<Arc<Value>>,
}

impl Default for RenderOptions {
    fn default() -> RenderOptions {
        RenderOptions {
            validate_history: true,
            clock: context::Clock::System,
            context: None,
        }
    }
}

/// The result of a render: the text, and the messages the template wrote.
#[derive(Clone, Debug)]
pub struct Rendered {
    text: String,
    /// The messages, in order; made from `text` on first use when the
    /// render wrote no marker (see [`Cut`]).
    items: OnceLock<Vec<messages::Item>>,
    /// The role of text outside any message marker.
    default_role: Role,
    generations: Vec<std::ops::Range<usize>>,
    history: Arc<Vec<ChatMessage>>,
    warnings: Vec<String>,
    recovered: Option<Error>,
}

impl Rendered {
    /// The messages and the history placeholder, in order.
    fn items(&self) -> &[messages::Item] {
        self.items
            .get_or_init(|| plain_items(&self.text, self.default_role))
    }

    /// The rendered text, without role markers.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes the rendered text.
    pub fn into_text(self) -> String {
        self.text
    }

    /// Byte ranges of [`Rendered::text`] printed inside a chat template's
    /// `{% generation %}` blocks: the assistant's own words, which
    /// `transformers` marks with `return_assistant_tokens_mask`.
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt};
    /// use serde_json::json;
    ///
    /// let template = "{% for m in messages %}{{ m.role }}: \
    ///     {% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}\
    ///     {% else %}{{ m.content }}{% endif %}{{ '\\n' }}{% endfor %}";
    /// let prompt = Prompt::from_source("chat_template.jinja", template, &LoadOptions::default())?;
    /// let rendered = prompt.render(json!({"messages": [
    ///     {"role": "user", "content": "Hi"},
    ///     {"role": "assistant", "content": "Hello!"},
    /// ]}))?;
    /// assert_eq!(rendered.text(), "user: Hi\nassistant: Hello!\n");
    /// let span = rendered.generation_spans()[0].clone();
    /// assert_eq!(&rendered.text()[span], "Hello!");
    /// # Ok::<(), teleprompt::Error>(())
    /// ```
    pub fn generation_spans(&self) -> &[std::ops::Range<usize>] {
        &self.generations
    }

    /// The messages the template wrote, in order (without the history).
    /// Text before the first `role` call belongs to the prompt's
    /// `default_role`; whitespace-only messages are dropped.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.items().iter().filter_map(|item| match item {
            messages::Item::Message(message) => Some(message),
            messages::Item::History => None,
        })
    }

    /// The whole conversation to send: the rendered messages, with the
    /// history where the template placed it, or after them.
    pub fn conversation(&self) -> Vec<Entry<'_>> {
        messages::assemble(self.items(), &self.history)
    }

    /// The result in an output shape: `text`, teleprompt's `messages`,
    /// OpenAI chat, or Anthropic (system lifted to the top).
    pub fn to_format(&self, format: OutputFormat) -> Result<serde_json::Value, Error> {
        messages::shape(format, &self.text, &self.conversation())
            .map_err(|error| Error::new(ErrorClass::Render, error.to_string()))
    }

    /// Things the host should know that did not stop the render, such as
    /// an arg hidden by a namespace.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// With `on_error: original`, the error that made the render fall back
    /// to the unrendered text. A host should log it.
    pub fn recovered_error(&self) -> Option<&Error> {
        self.recovered.as_ref()
    }
}

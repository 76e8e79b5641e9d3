//! A prompt: a file loaded once ([`crate::load`]: its kind, front matter,
//! other tools' formats, the compiled template), then rendered many times
//! ([`crate::render`]) into text and messages. This type is the face of
//! both; the work is theirs.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::analysis::Inputs;
use crate::context::PromptContext;
use crate::data::Data;
use crate::diagnostics::Error;
use crate::load::{self, Compiled};
use crate::messages::Role;
use crate::options::{LoadOptions, OnError, RenderOptions, Strictness, Syntax};
use crate::render::{self, rendered::Rendered};
use crate::schema::InputSchema;

/// A compiled prompt: load it once, render it many times.
///
/// A `Prompt` is immutable and `Send + Sync`; renders borrow their data.
#[derive(Debug)]
pub struct Prompt {
    /// Shared with the renders that keep a source map to build.
    compiled: Arc<Compiled>,
}

impl Prompt {
    /// Loads a prompt file with default options.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Prompt, Error> {
        Prompt::from_file_with(path, &LoadOptions::default())
    }

    /// Loads a prompt file.
    pub fn from_file_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Prompt, Error> {
        Prompt::loaded(load::from_file(path.as_ref(), options)?)
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
        Prompt::from_source(origin, load::utf8(origin, bytes)?, options)
    }

    /// Loads a prompt from text. `origin` is the file name used for the
    /// default name, the syntax by extension, and in error reports. Files
    /// it includes (Handlebars partials, Go templates) are read only from
    /// [`LoadOptions::include_root`], when set.
    pub fn from_source(origin: &str, source: &str, options: &LoadOptions) -> Result<Prompt, Error> {
        Prompt::loaded(load::from_source(origin, source, options)?)
    }

    /// The compiled template (for `unstable`'s hooks).
    #[cfg(feature = "unstable")]
    pub(crate) fn compiled_template(&self) -> &crate::syntax::Template {
        &self.compiled.template
    }

    /// The prompt a load compiled, unless its front end found errors: then
    /// the first of them, carrying the others and the template's warnings.
    fn loaded((compiled, found): load::Loaded) -> Result<Prompt, Error> {
        match found {
            Some(error) => Err(error.with_warnings(load::warnings::warnings(&compiled))),
            None => Ok(Prompt {
                compiled: Arc::new(compiled),
            }),
        }
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
        render::render(&self.compiled, data.into(), options)
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
        render::render_turn(&self.compiled, context, options)
    }

    /// Likely mistakes that neither stop loading nor rendering, each placed
    /// in the file (class
    /// [`ErrorClass::Warning`](crate::ErrorClass::Warning)): in Go syntax, a root
    /// name such as `.issue` read inside `range` or `with`, where dot is
    /// the element (`did you mean "$.issue.title"?`); a mapping printed as
    /// it is; with `input.schema`, a path read that it does not declare
    /// and a declared input never read. One is of class
    /// [`ErrorClass::Input`](crate::ErrorClass::Input), which `teleprompt
    /// check` reports as an error: at `strict` or `semi`, a path that a
    /// closed schema (`additionalProperties: false`, Picoschema) leaves out,
    /// printed or walked by the template (only tested, `if x`, it stays a
    /// warning). For a chat template: one that prints `bos_token` while
    /// its tokenizer adds it again (`double-bos`), and one whose output
    /// for a conversation one turn longer does not start with the shorter
    /// one's (`not-append-only`, with where the two part; it renders a few
    /// probe conversations to find out).
    pub fn warnings(&self) -> Vec<Error> {
        let mut warnings = load::warnings::warnings(&self.compiled);
        warnings.extend(crate::render::growth::rewrite_warning(&self.compiled));
        warnings
    }

    /// A `per-turn-prefix` warning where the first message prints what
    /// changes every turn — the clock, the turn number — before text that
    /// stays the same: a provider's prompt cache keeps a prompt only up to
    /// its first changed byte, so every turn pays for the rest again. Found
    /// by rendering the prompt (with its defaults alone) at two clocks and
    /// two turns: load it lenient (`Strictness::Lenient`), as `teleprompt
    /// check` does, so that inputs the probe lacks print empty instead of
    /// failing the render. `None` for a chat template (see its
    /// `not-append-only` warning) and where a render fails.
    ///
    /// ```
    /// use teleprompt::{LoadOptions, Prompt, Strictness};
    ///
    /// let lenient = LoadOptions::default().with_strictness(Strictness::Lenient);
    /// let dated = "Today is {{ system.current_date }}.\nYou are the support agent of {{ company }}; answer in three sentences.";
    /// let prompt = Prompt::from_source("system.j2", dated, &lenient)?;
    /// let warning = prompt.per_turn_warning().expect("the date comes first");
    /// assert_eq!(warning.kind(), Some("per-turn-prefix"));
    /// let fixed = "You are the support agent of {{ company }}; answer in three sentences.\nToday is {{ system.current_date }}.";
    /// assert!(Prompt::from_source("system.j2", fixed, &lenient)?.per_turn_warning().is_none());
    /// # Ok::<(), teleprompt::Error>(())
    /// ```
    pub fn per_turn_warning(&self) -> Option<Error> {
        crate::render::prefix::per_turn_warning(&self.compiled)
    }

    /// What the template reads of the data the host passes (the prompt
    /// context's namespaces, `system`, `run`, …, left out): paths with
    /// their nesting and the lists walked, in every syntax (`None` only if
    /// the template no longer parses).
    /// `teleprompt inspect` prints it as Picoschema and JSON Schema for
    /// front matter `input.schema`.
    pub fn inputs(&self) -> Option<Inputs> {
        self.compiled.inputs()
    }

    /// Whether a render may read `name` from the top level of the data:
    /// false only when the template certainly never does (true whenever it
    /// cannot tell, e.g. when it walks the whole data), and true for a
    /// declared input, which is checked before rendering. Reading a data file
    /// with it ([`crate::data::read_file_keeping`]) builds only what the
    /// prompt may read.
    pub fn reads(&self, name: &str) -> bool {
        self.compiled.reads(name)
    }

    /// The declared inputs (front matter `input.schema`), if any.
    pub fn input_schema(&self) -> Option<&InputSchema> {
        self.compiled.schema.as_ref()
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
        let mut bytes = self.compiled.source_hash.to_le_bytes().to_vec();
        for dependency in &self.compiled.dependencies {
            bytes.extend_from_slice(dependency.name.as_os_str().as_encoded_bytes());
            bytes.push(0);
            if let Some(hash) = dependency.hash {
                bytes.extend_from_slice(&hash.to_le_bytes());
            }
        }
        format!(
            "{:016x}",
            crate::document::include_root::content_hash(&bytes)
        )
    }

    /// The files the prompt's load read besides its own (partials,
    /// included templates, a chat template's `tokenizer_config.json`), in
    /// the order first read.
    pub fn included_files(&self) -> impl Iterator<Item = &Path> {
        self.compiled
            .dependencies
            .iter()
            .filter(|dependency| dependency.hash.is_some())
            .map(|dependency| dependency.path.as_path())
    }

    /// What the prompt's load looked at, for a library's reload.
    pub(crate) fn dependencies(&self) -> &[crate::document::include_root::Dependency] {
        &self.compiled.dependencies
    }

    /// The prompt's name: front matter `name`, else the file stem.
    pub fn name(&self) -> &str {
        &self.compiled.name
    }

    /// Front matter `description`.
    pub fn description(&self) -> Option<&str> {
        self.compiled.description.as_deref()
    }

    /// The template syntax.
    pub fn syntax(&self) -> Syntax {
        self.compiled.syntax
    }

    /// The tokenizer that counts its renders' tokens
    /// ([`crate::Rendered::tokens`]), if it has one.
    pub fn tokenizer(&self) -> Option<&crate::tokens::Tokenizer> {
        self.compiled.tokenizer.as_ref()
    }

    /// The strictness the prompt renders with.
    pub fn strictness(&self) -> Strictness {
        self.compiled.strictness
    }

    /// What a failed render returns.
    pub fn on_error(&self) -> OnError {
        self.compiled.on_error
    }

    /// The role of text before the first role marker (front matter
    /// `default_role`, else `user`).
    pub fn default_role(&self) -> Role {
        self.compiled.default_role
    }

    /// Front matter `continuation_prompt`.
    pub fn continuation_prompt(&self) -> Option<&str> {
        self.compiled.continuation_prompt.as_deref()
    }

    /// The whole front matter, known keys and the host's own (`tracker`,
    /// `agent`, …) alike.
    pub fn metadata(&self) -> &Map<String, Value> {
        &self.compiled.document.front_matter
    }

    /// The file name the prompt was loaded from.
    pub fn origin(&self) -> &str {
        &self.compiled.document.origin
    }

    /// The template body as written (CRLF turned into LF).
    pub fn body(&self) -> &str {
        &self.compiled.document.body
    }
}

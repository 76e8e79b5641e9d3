//! The choices a prompt or its host makes: syntax, strictness, error
//! policy, and the options of a load ([`LoadOptions`]) and of a render
//! ([`RenderOptions`], with its deadline and [`CancelToken`]).

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::context::Clock;

/// A template syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Syntax {
    /// Jinja (minijinja), with Jinja2's behaviour.
    Jinja,
    /// The Django/pongo2 dialect (Rapida's prompts): colon filter
    /// arguments, `forloop`, `{% empty %}`, pongo2's tags and filters; run on
    /// the Jinja engine.
    Django,
    /// A Hugging Face chat template: Jinja as `transformers` runs it
    /// (`trim_blocks`, `lstrip_blocks`, no kept final newline, Jinja2's
    /// lenient undefined, `raise_exception`, `strftime_now`, `{% generation %}`).
    ChatTemplate,
    /// Go text/template.
    Go,
    /// Handlebars.
    Handlebars,
}

impl Syntax {
    /// The accepted names, for messages.
    pub const NAMES: &'static str = "jinja, django, chat-template, go, handlebars";
    /// The extensions that name a syntax, for messages.
    pub const EXTENSIONS: &'static str =
        ".j2/.jinja, .django/.pongo2, .gotmpl/.tmpl, .hbs/.handlebars";

    /// The strictness a prompt gets when neither it nor the host sets one:
    /// `strict` for Go (its `missingkey=error`), `lenient` for chat
    /// templates (as `transformers` renders them), `semi` for the others.
    pub fn default_strictness(self) -> Strictness {
        match self {
            Syntax::Go => Strictness::Strict,
            Syntax::ChatTemplate => Strictness::Lenient,
            Syntax::Jinja | Syntax::Django | Syntax::Handlebars => Strictness::Semi,
        }
    }

    /// True for the syntaxes that run on the Jinja engine.
    pub fn is_jinja_family(self) -> bool {
        matches!(self, Syntax::Jinja | Syntax::Django | Syntax::ChatTemplate)
    }

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Syntax::Jinja => "jinja",
            Syntax::Django => "django",
            Syntax::ChatTemplate => "chat-template",
            Syntax::Go => "go",
            Syntax::Handlebars => "handlebars",
        }
    }
}

impl FromStr for Syntax {
    type Err = String;

    fn from_str(s: &str) -> Result<Syntax, String> {
        match s.to_ascii_lowercase().as_str() {
            "jinja" | "jinja2" => Ok(Syntax::Jinja),
            "django" | "pongo2" => Ok(Syntax::Django),
            "chat-template" | "hf" | "hf-chat" | "transformers" => Ok(Syntax::ChatTemplate),
            "go" | "gotmpl" | "go-template" => Ok(Syntax::Go),
            "handlebars" | "hbs" => Ok(Syntax::Handlebars),
            _ => Err(format!(
                "unknown syntax {s:?}: use one of {}",
                Syntax::NAMES
            )),
        }
    }
}

impl fmt::Display for Syntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a missing value does (a key absent from the data, not one set to null).
///
/// | level | printing / iterating | testing (`if`) |
/// |---|---|---|
/// | `strict` | error | error |
/// | `semi` | error | false |
/// | `lenient` | empty | false |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Strictness {
    /// Every use of a missing value is an error.
    Strict,
    /// Testing a missing value is false; any other use is an error.
    Semi,
    /// Missing values print as nothing and test false.
    Lenient,
}

impl Strictness {
    /// The accepted names, for messages.
    pub const NAMES: &'static str = "strict, semi, lenient";

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Strictness::Strict => "strict",
            Strictness::Semi => "semi",
            Strictness::Lenient => "lenient",
        }
    }
}

impl FromStr for Strictness {
    type Err = String;

    fn from_str(s: &str) -> Result<Strictness, String> {
        match s {
            "strict" => Ok(Strictness::Strict),
            "semi" => Ok(Strictness::Semi),
            "lenient" => Ok(Strictness::Lenient),
            _ => Err(format!(
                "unknown strictness {s:?}: use one of {}",
                Strictness::NAMES
            )),
        }
    }
}

impl fmt::Display for Strictness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a render that fails returns (front matter `on_error`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OnError {
    /// Return the error (the default).
    #[default]
    Fail,
    /// Return the unrendered template text, and the error beside it.
    Original,
}

impl OnError {
    /// The accepted names, for messages.
    pub const NAMES: &'static str = "fail, original";
}

impl FromStr for OnError {
    type Err = String;

    fn from_str(s: &str) -> Result<OnError, String> {
        match s {
            "fail" => Ok(OnError::Fail),
            "original" => Ok(OnError::Original),
            _ => Err(format!(
                "unknown on_error {s:?}: use one of {}",
                OnError::NAMES
            )),
        }
    }
}

/// How prompts are loaded.
///
/// Built with [`LoadOptions::new`] and the `with_*` methods (the struct is
/// `#[non_exhaustive]`: new options may come); the fields stay public to
/// read and to set.
///
/// ```
/// use serde_json::json;
/// use teleprompt::{JinjaOptions, LoadOptions, Prompt, Strictness, Syntax};
///
/// let options = LoadOptions::new()
///     .with_syntax(Syntax::Jinja)
///     .with_strictness(Strictness::Lenient)
///     .with_jinja(JinjaOptions::new().with_trim_blocks(true));
/// let prompt = Prompt::from_source("p", "{% if x %}\nyes {% endif %}{{ name }}.", &options)?;
/// assert_eq!(prompt.render(json!({"x": true}))?.text(), "yes .");
/// # Ok::<(), teleprompt::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct LoadOptions {
    /// The syntax of prompts whose front matter and extension do not say;
    /// for a Jinja file (`.j2`, `.jinja`), one of the Jinja-family
    /// syntaxes also refines the extension (`chat-template`, `django`).
    pub syntax: Option<Syntax>,
    /// Strictness for every prompt, over what the front matter says.
    pub strictness: Option<Strictness>,
    /// Host functions the templates may call by name.
    pub functions: crate::functions::Functions,
    /// Whitespace options of Jinja-family prompts whose front matter does
    /// not set them (front matter `jinja:` wins: it is how the template was
    /// written).
    pub jinja: JinjaOptions,
    /// Bounds on every render of the prompts loaded.
    pub limits: crate::limits::Limits,
    /// Which template of a Hugging Face `tokenizer_config.json` whose
    /// `chat_template` is a list of named templates (default `"default"`).
    pub template_name: Option<String>,
    /// The folder whose files a prompt may include (Handlebars partials:
    /// `{{> persona}}` reads `persona.hbs`, Dotprompt's `_persona.prompt`,
    /// Forge's `persona.md`, …; Go templates: `{{template "header.gotmpl"
    /// .}}` reads `header.gotmpl`, and a name no file has is looked for
    /// among the `define`s of the root's Go files). Unset: [`Prompt::from_file`] uses the
    /// prompt file's folder and [`Library::load_dir`] its directory;
    /// [`Prompt::from_source`] then reads no file. Nothing outside the
    /// root is read (no `..`, no symbolic link leading out).
    ///
    /// [`Prompt::from_file`]: crate::Prompt::from_file
    /// [`Library::load_dir`]: crate::Library::load_dir
    /// [`Prompt::from_source`]: crate::Prompt::from_source
    pub include_root: Option<std::path::PathBuf>,
    /// Resolve a Prompty file's `${env:NAME}` (and `${env:NAME:default}`)
    /// references in the front matter keys teleprompt reads (`inputs`,
    /// `inputSchema`, `sample`, `template`) from the environment. Off by
    /// default: a prompt file must not read the host's environment unless
    /// the host says so; such a reference is then a `document` error.
    pub env_references: bool,
    /// Resolve a Prompty file's `${file:path}` references in those keys:
    /// the file beside the prompt, inside the include root and by the
    /// include rules (no `..`, no link leading out), read as JSON (`.json`),
    /// YAML (`.yaml`, `.yml`) or text. Off by default (then a `document`
    /// error).
    pub file_references: bool,
    /// The roles data may choose, where another system's own pattern
    /// takes a message's role from data (Semantic Kernel's
    /// `{{#each messages}}{{#message role=role}}…` over a chat history);
    /// everywhere else a role is a literal of the template. `None`: `user`
    /// and `assistant` — never `system` or `developer` unless the host
    /// allows them here.
    pub data_roles: Option<Vec<crate::messages::Role>>,
    /// The tokenizer of every prompt loaded, over its front matter's
    /// `tokenizer` ([`crate::Rendered::tokens`]).
    pub tokenizer: Option<crate::tokens::Tokenizer>,
}

impl LoadOptions {
    /// Sets [`LoadOptions::tokenizer`].
    pub fn with_tokenizer(mut self, tokenizer: crate::tokens::Tokenizer) -> LoadOptions {
        self.tokenizer = Some(tokenizer);
        self
    }

    /// Sets [`LoadOptions::data_roles`].
    pub fn with_data_roles(
        mut self,
        roles: impl IntoIterator<Item = crate::messages::Role>,
    ) -> LoadOptions {
        self.data_roles = Some(roles.into_iter().collect());
        self
    }

    /// The roles data may choose: [`LoadOptions::data_roles`], or `user`
    /// and `assistant`.
    pub(crate) fn data_roles_or_default(&self) -> Vec<crate::messages::Role> {
        self.data_roles.clone().unwrap_or_else(|| {
            vec![
                crate::messages::Role::User,
                crate::messages::Role::Assistant,
            ]
        })
    }

    /// The default options: every prompt decides for itself.
    pub fn new() -> LoadOptions {
        LoadOptions::default()
    }

    /// Sets [`LoadOptions::env_references`].
    pub fn with_env_references(mut self, allow: bool) -> LoadOptions {
        self.env_references = allow;
        self
    }

    /// Sets [`LoadOptions::file_references`].
    pub fn with_file_references(mut self, allow: bool) -> LoadOptions {
        self.file_references = allow;
        self
    }

    /// Sets [`LoadOptions::syntax`].
    pub fn with_syntax(mut self, syntax: Syntax) -> LoadOptions {
        self.syntax = Some(syntax);
        self
    }

    /// Sets [`LoadOptions::strictness`].
    pub fn with_strictness(mut self, strictness: Strictness) -> LoadOptions {
        self.strictness = Some(strictness);
        self
    }

    /// Sets [`LoadOptions::functions`].
    pub fn with_functions(mut self, functions: crate::functions::Functions) -> LoadOptions {
        self.functions = functions;
        self
    }

    /// Sets [`LoadOptions::jinja`].
    pub fn with_jinja(mut self, jinja: JinjaOptions) -> LoadOptions {
        self.jinja = jinja;
        self
    }

    /// Sets [`LoadOptions::limits`].
    pub fn with_limits(mut self, limits: crate::limits::Limits) -> LoadOptions {
        self.limits = limits;
        self
    }

    /// Sets [`LoadOptions::template_name`].
    pub fn with_template_name(mut self, name: impl Into<String>) -> LoadOptions {
        self.template_name = Some(name.into());
        self
    }

    /// Sets [`LoadOptions::include_root`].
    pub fn with_include_root(mut self, root: impl Into<std::path::PathBuf>) -> LoadOptions {
        self.include_root = Some(root.into());
        self
    }
}

/// Jinja2's whitespace options, with Jinja2's names and meaning; `None`
/// leaves the syntax's default.
///
/// | option | `jinja`, `django` | `chat-template` |
/// |---|---|---|
/// | `trim_blocks`: drop the first newline after a block tag | false | true |
/// | `lstrip_blocks`: strip spaces before a block tag on its line | false | true |
/// | `keep_trailing_newline`: keep the body's final newline | true | false |
///
/// Set in front matter as a `jinja:` section:
///
/// ```yaml
/// jinja:
///   trim_blocks: true
///   lstrip_blocks: true
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct JinjaOptions {
    /// Remove the first newline after a block tag (`{% … %}`).
    pub trim_blocks: Option<bool>,
    /// Strip spaces and tabs from the start of a line up to a block tag.
    pub lstrip_blocks: Option<bool>,
    /// Keep the final newline of the body.
    pub keep_trailing_newline: Option<bool>,
}

impl JinjaOptions {
    /// The keys of a front matter `jinja:` section.
    pub const KEYS: &'static [&'static str] =
        &["trim_blocks", "lstrip_blocks", "keep_trailing_newline"];

    /// Every option unset: the syntax's defaults.
    pub fn new() -> JinjaOptions {
        JinjaOptions::default()
    }

    /// Sets [`JinjaOptions::trim_blocks`].
    pub fn with_trim_blocks(mut self, on: bool) -> JinjaOptions {
        self.trim_blocks = Some(on);
        self
    }

    /// Sets [`JinjaOptions::lstrip_blocks`].
    pub fn with_lstrip_blocks(mut self, on: bool) -> JinjaOptions {
        self.lstrip_blocks = Some(on);
        self
    }

    /// Sets [`JinjaOptions::keep_trailing_newline`].
    pub fn with_keep_trailing_newline(mut self, on: bool) -> JinjaOptions {
        self.keep_trailing_newline = Some(on);
        self
    }

    /// `self`, with what it leaves unset taken from `fallback`.
    pub fn or(self, fallback: JinjaOptions) -> JinjaOptions {
        JinjaOptions {
            trim_blocks: self.trim_blocks.or(fallback.trim_blocks),
            lstrip_blocks: self.lstrip_blocks.or(fallback.lstrip_blocks),
            keep_trailing_newline: self
                .keep_trailing_newline
                .or(fallback.keep_trailing_newline),
        }
    }
}

/// How a prompt's template text marks message roles, besides `role` calls
/// (front matter `messages`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MessageReader {
    /// Only `role` calls start messages (the default).
    #[default]
    None,
    /// Semantic Kernel's `<message role="system">…</message>` blocks.
    SkTags,
    /// Prompty's lines `system:`, `user:`, `assistant:`.
    RoleLines,
    /// Google Dotprompt's rules (`.prompt` files): only `role` calls start
    /// messages; each message's text keeps its whitespace (only
    /// whitespace-only pieces are dropped); text after `history` is the
    /// assistant's; without `history`, the history goes before the last
    /// message if it is the user's. In Handlebars, also Dotprompt's
    /// helpers (`{{role "model"}}`, `{{media url=… contentType=…}}`,
    /// `@state` and other context variables).
    Dotprompt,
}

impl MessageReader {
    /// The accepted names, for messages.
    pub const NAMES: &'static str = "none, sk-tags, role-lines, dotprompt";
}

impl FromStr for MessageReader {
    type Err = String;

    fn from_str(s: &str) -> Result<MessageReader, String> {
        match s {
            "none" => Ok(MessageReader::None),
            "sk-tags" => Ok(MessageReader::SkTags),
            "role-lines" => Ok(MessageReader::RoleLines),
            "dotprompt" => Ok(MessageReader::Dotprompt),
            _ => Err(format!(
                "unknown message reader {s:?}: use one of {}",
                MessageReader::NAMES
            )),
        }
    }
}

/// Options of one render: [`RenderOptions::new`] and the `with_*` methods
/// (the struct is `#[non_exhaustive]`).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RenderOptions {
    /// Check the history against the tool-call rules before rendering
    /// (default `true`; [`Prompt::render_turn_with`](crate::Prompt::render_turn_with)).
    pub validate_history: bool,
    /// The clock of [`Prompt::render_with`](crate::Prompt::render_with) (default: the system clock);
    /// a turn takes its [`PromptContext`](crate::PromptContext)'s clock instead.
    pub clock: Clock,
    /// The host's render context (Dotprompt's `context`): a Dotprompt
    /// template reads its keys as data variables, `{{@state.step}}`,
    /// `{{@auth.uid}}`. The data cannot shadow them.
    pub context: Option<Arc<Value>>,
    /// When the render must stop: past it, a render in flight ends with
    /// a `render` error of kind `timeout` within a few milliseconds
    /// (default: none).
    pub deadline: Option<Instant>,
    /// A token another thread may cancel: the render in flight then ends
    /// with a `render` error of kind `cancelled` (default: none).
    pub cancel: Option<CancelToken>,
    /// What counts this render's tokens ([`crate::Rendered::tokens`]),
    /// over the prompt's own (default: the prompt's).
    pub tokenizer: Option<crate::tokens::Tokenizer>,
    /// Record where each byte of the output came from
    /// ([`crate::Rendered::source_map`]; default `false`: a render
    /// records nothing and costs nothing more).
    pub source_map: bool,
}

impl Default for RenderOptions {
    fn default() -> RenderOptions {
        RenderOptions {
            validate_history: true,
            clock: Clock::System,
            context: None,
            deadline: None,
            cancel: None,
            tokenizer: None,
            source_map: false,
        }
    }
}

impl RenderOptions {
    /// The default options: history checked, the system clock, no
    /// context, no deadline, no cancel token.
    pub fn new() -> RenderOptions {
        RenderOptions::default()
    }

    /// Sets [`RenderOptions::validate_history`].
    pub fn with_validate_history(mut self, validate: bool) -> RenderOptions {
        self.validate_history = validate;
        self
    }

    /// Sets [`RenderOptions::clock`].
    pub fn with_clock(mut self, clock: Clock) -> RenderOptions {
        self.clock = clock;
        self
    }

    /// Sets [`RenderOptions::context`].
    pub fn with_context(mut self, context: impl Into<Arc<Value>>) -> RenderOptions {
        self.context = Some(context.into());
        self
    }

    /// Sets [`RenderOptions::deadline`].
    pub fn with_deadline(mut self, deadline: Instant) -> RenderOptions {
        self.deadline = Some(deadline);
        self
    }

    /// Sets [`RenderOptions::tokenizer`].
    pub fn with_tokenizer(mut self, tokenizer: crate::tokens::Tokenizer) -> RenderOptions {
        self.tokenizer = Some(tokenizer);
        self
    }

    /// Sets [`RenderOptions::source_map`].
    pub fn with_source_map(mut self, source_map: bool) -> RenderOptions {
        self.source_map = source_map;
        self
    }

    /// Sets [`RenderOptions::cancel`].
    pub fn with_cancel(mut self, cancel: CancelToken) -> RenderOptions {
        self.cancel = Some(cancel);
        self
    }
}

/// Cancels renders in flight from another thread: give a clone to
/// [`RenderOptions::with_cancel`], call [`CancelToken::cancel`], and the
/// renders holding it end with a `render` error of kind `cancelled`
/// within a few milliseconds.
///
/// ```
/// use teleprompt::{CancelToken, LoadOptions, Prompt, RenderOptions};
/// let prompt = Prompt::from_source("p.j2", "{% for i in range(10) %}{{ i }}{% endfor %}", &LoadOptions::default())?;
/// let token = CancelToken::new();
/// token.cancel();
/// let error = prompt.render_with(serde_json::json!({}), &RenderOptions::new().with_cancel(token)).unwrap_err();
/// assert_eq!(error.kind(), Some("cancelled"));
/// # Ok::<(), teleprompt::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token not cancelled.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Cancels every render holding this token (or a clone of it).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

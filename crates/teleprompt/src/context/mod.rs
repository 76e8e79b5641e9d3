//! The prompt context: what a host knows about a conversation and a turn,
//! turned into the [`Data`] a prompt renders against.
//!
//! A host fills a [`PromptContext`] once per conversation (args, namespaces,
//! history, workspace), appends each turn's messages to it
//! ([`PromptContext::push_message`]), clones it each turn (a few reference
//! counts) to set the turn, and calls [`PromptContext::build`] before each
//! render. A build computes the clock values and the turn values, reads the
//! workspace only for the names the prompt uses, and stacks everything as
//! layers of a [`Data`]: nothing the host gave is copied, so a build costs
//! the same whether the args or the history are small or huge. An append
//! checks the new message alone against the tool-call rules and updates the
//! latest user language, so a turn does not read the history either.
//!
//! ```
//! use teleprompt::context::{Clock, PromptContext};
//! use serde_json::json;
//!
//! let context = PromptContext::new()
//!     .clock(Clock::Fixed("2026-11-21T09:05:03Z".parse().unwrap()))
//!     .args(json!({"name": "Ada", "message.language": "English"}))?
//!     .message(json!({"text": "Hello"}))?
//!     .turn(2)
//!     .max_turns(10);
//! let built = context.build(&|_| true)?;
//! let root = built.data.root();
//! let read = |path: &[&str]| {
//!     path.iter()
//!         .try_fold(root.clone(), |view, key| view.get(key))
//!         .map(|view| view.to_json())
//! };
//! assert_eq!(read(&["name"]), Some(json!("Ada")));
//! assert_eq!(read(&["args", "name"]), Some(json!("Ada")));
//! assert_eq!(read(&["system", "current_date"]), Some(json!("2026-11-21")));
//! assert_eq!(read(&["run", "is_continuation"]), Some(json!(true)));
//! assert_eq!(read(&["attempt"]), Some(json!(null)));
//! // The dotted arg nests under args.message, and the root copy of an arg
//! // never replaces a namespace: the build says so.
//! assert_eq!(read(&["args", "message", "language"]), Some(json!("English")));
//! assert_eq!(read(&["message", "text"]), Some(json!("Hello")));
//! assert_eq!(
//!     built.warnings,
//!     vec![r#"arg "message" is hidden by the namespace "message"; read it as args.message"#]
//! );
//! # Ok::<(), teleprompt::Error>(())
//! ```
//!
//! # What a prompt can read
//!
//! | name | what | from |
//! |---|---|---|
//! | `system.*` | `current_date`, `current_time`, `current_datetime`, `day_of_week`, `date_rfc1123`, `date_unix`, `date_unix_ms` (all UTC), `local_datetime` (in [`PromptContext::time_zone`]) | the [`Clock`], each build |
//! | `run.*` | `turn_number`, `max_turns` (null unless set), `is_continuation` (turn > 1); only once the host set a turn, max or attempt | [`PromptContext::turn`], [`PromptContext::max_turns`] |
//! | `attempt` | null on the first run, the retry number (≥ 1) on a retry; only once the host set a turn, max or attempt | [`PromptContext::attempt`] |
//! | `assistant.*`, `conversation.*`, `session.*`, `message.*` | whatever the host puts there (absent when not set) | [`PromptContext::namespace`] |
//! | `message.language` | the host's value if it gives one; else the latest user message in the history with a `language`; else [`PromptContext::client_language`]; else `""` | each build that reads `message` |
//! | `args.*`, and each arg at the root | the conversation args | [`PromptContext::args`] |
//! | `custom_rules` | a host string (absent when not set) | [`PromptContext::custom_rules`] |
//! | `env.*`, `files`, `readme` | the [`Workspace`] (absent without one) | each build that reads them |
//! | anything else | the host's own data | [`PromptContext::data`] |
//!
//! # Precedence
//!
//! The data is a stack of layers; the first layer that has a name wins, and
//! objects merge key by key with the layers under them.
//!
//! | rank | layer | names |
//! |---|---|---|
//! | 1 | values of the turn, computed each build | `system`, `run`, `attempt`, `env`, `files`, `readme` |
//! | 2 | host namespaces, ready-made when set, then the host's data | `assistant`, `conversation`, `session`, `message`, `args`, `custom_rules`; any |
//! | 3 | the resolved `message.language` | `message.language` |
//! | 4 | root copies of the args | every arg except the [reserved names](RESERVED) |
//! | 5 | the prompt's `input.default` (added by the caller, see below) | any |
//! | 6 | fallbacks | `message.language = ""` when nothing gave a language |
//!
//! Ranks 1 and 2 own different names, so neither hides the other. The
//! context's own names ([`RESERVED`]) are taken out of the root copy of the
//! args when the args are set, so an arg never replaces nor merges into a
//! namespace, even one the host left empty: it stays readable as
//! `args.<name>` and every build returns a warning about it. Defaults sit
//! under every runtime value: they fill names the runtime leaves out, and
//! merge into namespaces key by key (a default `message.language: English`
//! shows when no language was found). They fill the root only: `args.*`
//! holds exactly the runtime args. Pass them to
//! [`PromptContext::build_with_defaults`] so that they land above the
//! fallbacks; a caller that puts them under a built [`Data`] itself
//! (`data.over(defaults)`) gets them below the fallbacks, where a default
//! `message.language` never shows.
//!
//! Dotted keys at the top of the args and of each namespace
//! (`"message.language": "English"`) expand into nested maps when the host
//! sets them; a dotted key never overwrites a value that is already set
//! (plain keys first, then dotted keys in order), and each one dropped that
//! way gives a warning.

mod clock;
mod fields;
mod history;
mod record;
mod workspace;

use std::sync::Arc;

use jiff::tz::TimeZone;
use serde_json::{Map, Value};

use crate::data::Data;
use crate::diagnostics::{Error, ErrorClass};
use crate::messages::{History, HistoryError, HistoryMessage};

use self::history::Tracked;

pub use self::clock::{system_values, Clock};
pub use self::fields::RESERVED;
pub use self::workspace::{
    Environment, Workspace, DEFAULT_MAX_DEPTH, DEFAULT_MAX_ENTRIES, DEFAULT_README_MAX_BYTES,
};

/// The text a continuation turn sends when its prompt renders to whitespace
/// and the prompt has no `continuation_prompt`.
pub const BUILTIN_CONTINUATION_PROMPT: &str =
    "Continue working on the task. Review what you have done so far and take the next step.";

/// A namespace the host fills: `assistant`, `conversation`, `session` or
/// `message`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Namespace {
    /// `assistant.*`: name, id, language, description, …
    Assistant,
    /// `conversation.*`: id, identifier, source, direction, dates, …
    Conversation,
    /// `session.*`: mode, …
    Session,
    /// `message.*`: the current user message's text, language, …
    Message,
}

impl Namespace {
    /// All namespaces.
    pub const ALL: [Namespace; 4] = [
        Namespace::Assistant,
        Namespace::Conversation,
        Namespace::Session,
        Namespace::Message,
    ];

    /// The root name: `assistant`, `conversation`, `session`, `message`.
    pub fn as_str(self) -> &'static str {
        match self {
            Namespace::Assistant => "assistant",
            Namespace::Conversation => "conversation",
            Namespace::Session => "session",
            Namespace::Message => "message",
        }
    }

    fn slot(self) -> usize {
        match self {
            Namespace::Assistant => 0,
            Namespace::Conversation => 1,
            Namespace::Session => 2,
            Namespace::Message => 3,
        }
    }
}

/// What a host knows about a conversation and its current turn; builds the
/// [`Data`] for each render.
///
/// Cheap to clone (reference counts and a few numbers), `Send` and `Sync`.
/// Builder methods take and return the context; the ones that check their
/// input return a `Result`. See the [module docs](self) for the names and
/// their precedence.
///
/// It serializes (serde) as a record of all it holds, which deserializes
/// to a context that renders the same: to rebuild it in another process
/// (see its `Serialize` impl for the fields).
#[derive(Clone, Debug, Default)]
pub struct PromptContext {
    clock: Clock,
    time_zone: Option<TimeZone>,
    turn: Turn,
    namespaces: [Option<HostLayer>; 4],
    args: Option<ArgsLayers>,
    custom_rules: Option<Data>,
    data: Option<Data>,
    client_language: Option<Arc<str>>,
    history: Tracked,
    workspace: Option<Arc<Workspace>>,
    labels: Arc<Vec<(String, String)>>,
}

/// Turn numbers: `run.*` and `attempt`.
#[derive(Clone, Copy, Debug)]
struct Turn {
    number: u32,
    max: Option<u32>,
    attempt: Option<u32>,
    /// Whether the host set any of them: only then are `run` and
    /// `attempt` computed (else data the host gives may hold them).
    set: bool,
}

impl Default for Turn {
    fn default() -> Turn {
        Turn {
            number: 1,
            max: None,
            attempt: None,
            set: false,
        }
    }
}

/// A host namespace wrapped once as a layer: `{"message": {…}}`.
#[derive(Clone, Debug)]
struct HostLayer {
    layer: Data,
    warnings: Arc<[String]>,
}

/// The args as two layers: `{"args": {…}}` and the root copy.
#[derive(Clone, Debug)]
struct ArgsLayers {
    namespaced: Data,
    root: Data,
    warnings: Arc<[String]>,
}

/// The result of [`PromptContext::build`].
#[derive(Clone, Debug)]
pub struct ContextData {
    /// The data to render against.
    pub data: Data,
    /// What the host should know: args hidden by a namespace, dotted keys
    /// dropped. The same every build until the host changes its input.
    pub warnings: Vec<String>,
}

impl PromptContext {
    /// An empty context: the system clock, UTC, turn 1, first attempt, no
    /// namespaces, args, history or workspace.
    pub fn new() -> PromptContext {
        PromptContext::default()
    }

    /// The current instant by the context's clock, in its time zone (UTC
    /// unless set): what Jinja's `strftime_now` formats.
    pub fn now(&self) -> jiff::Zoned {
        let zone = self.time_zone.clone().unwrap_or(TimeZone::UTC);
        self.clock.now().to_zoned(zone)
    }

    /// Sets the clock behind `system.*`.
    pub fn clock(mut self, clock: Clock) -> PromptContext {
        self.clock = clock;
        self
    }

    /// Sets the time zone of `system.local_datetime` (default UTC; pass
    /// `jiff::tz::TimeZone::system()` for the machine's own zone, as Forge
    /// does).
    pub fn time_zone(mut self, time_zone: TimeZone) -> PromptContext {
        self.time_zone = Some(time_zone);
        self
    }

    /// Sets the time zone of `system.local_datetime` by IANA name
    /// (`Europe/Paris`); an unknown name is an `input` error.
    pub fn time_zone_named(self, name: &str) -> Result<PromptContext, Error> {
        let time_zone = TimeZone::get(name).map_err(|error| {
            Error::new(
                ErrorClass::Input,
                format!("unknown time zone \"{name}\": {error}"),
            )
        })?;
        Ok(self.time_zone(time_zone))
    }

    /// Sets `run.turn_number`. Turns count from 1; a turn above 1 is a
    /// continuation.
    pub fn turn(mut self, number: u32) -> PromptContext {
        self.turn.number = number;
        self.turn.set = true;
        self
    }

    /// Sets `run.max_turns` (null until set).
    pub fn max_turns(mut self, max: u32) -> PromptContext {
        self.turn.max = Some(max);
        self.turn.set = true;
        self
    }

    /// Sets `attempt`: 0 for the first run (rendered as null), n ≥ 1 for the
    /// n-th retry.
    pub fn attempt(mut self, attempt: u32) -> PromptContext {
        self.turn.attempt = (attempt > 0).then_some(attempt);
        self.turn.set = true;
        self
    }

    /// Fills a namespace with a JSON object (moved, not copied). Dotted keys
    /// at its top expand into nested maps. Anything but an object is an
    /// `input` error.
    ///
    /// ```
    /// use teleprompt::context::{Namespace, PromptContext};
    /// let context = PromptContext::new()
    ///     .namespace(Namespace::Assistant, serde_json::json!({"name": "Ava"}))?;
    /// # Ok::<(), teleprompt::Error>(())
    /// ```
    pub fn namespace(
        mut self,
        namespace: Namespace,
        fields: Value,
    ) -> Result<PromptContext, Error> {
        let name = namespace.as_str();
        let what = format!("the {name} namespace");
        let map = fields::expect_object(fields, &what)?;
        let (map, warnings) = fields::expand_dotted(map, &what);
        let layer = single_key(name, Value::Object(map));
        if let Some(slot) = self.namespaces.get_mut(namespace.slot()) {
            *slot = Some(HostLayer {
                layer: Data::new(layer),
                warnings: warnings.into(),
            });
        }
        Ok(self)
    }

    /// Fills `assistant.*` (see [`PromptContext::namespace`]).
    pub fn assistant(self, fields: Value) -> Result<PromptContext, Error> {
        self.namespace(Namespace::Assistant, fields)
    }

    /// Fills `conversation.*` (see [`PromptContext::namespace`]).
    pub fn conversation(self, fields: Value) -> Result<PromptContext, Error> {
        self.namespace(Namespace::Conversation, fields)
    }

    /// Fills `session.*` (see [`PromptContext::namespace`]).
    pub fn session(self, fields: Value) -> Result<PromptContext, Error> {
        self.namespace(Namespace::Session, fields)
    }

    /// Fills `message.*` (see [`PromptContext::namespace`]). A `language`
    /// given here wins over the one found in the history.
    pub fn message(self, fields: Value) -> Result<PromptContext, Error> {
        self.namespace(Namespace::Message, fields)
    }

    /// Sets the conversation args, readable as `args.x` and as `x`. Dotted
    /// keys at the top expand into nested maps. The args are copied once,
    /// here, for the root copy (without the [`RESERVED`] names); builds copy
    /// nothing. Anything but an object is an `input` error.
    pub fn args(mut self, args: Value) -> Result<PromptContext, Error> {
        let map = fields::expect_object(args, "the args")?;
        let (map, mut warnings) = fields::expand_dotted(map, "args");
        let (root, hidden) = fields::root_args(&map);
        warnings.extend(hidden);
        self.args = Some(ArgsLayers {
            namespaced: Data::new(single_key("args", Value::Object(map))),
            root: Data::new(Value::Object(root)),
            warnings: warnings.into(),
        });
        Ok(self)
    }

    /// Sets `custom_rules`, the host's extra instructions (Forge).
    pub fn custom_rules(mut self, rules: impl Into<String>) -> PromptContext {
        self.custom_rules = Some(Data::new(single_key(
            "custom_rules",
            Value::String(rules.into()),
        )));
        self
    }

    /// Adds the host's own data at the root (Sortie's `issue`, say): any
    /// keys, read as they are, under the values of the turn and the
    /// namespaces (rank 2, after them). Anything but an object is an
    /// `input` error. Moved, not copied.
    pub fn data(mut self, data: Value) -> Result<PromptContext, Error> {
        if !data.is_object() {
            return Err(Error::new(
                ErrorClass::Input,
                format!(
                    "the data must be a mapping of names to values, found {}",
                    crate::data::describe(&data)
                ),
            ));
        }
        self.data = Some(Data::new(data));
        Ok(self)
    }

    /// Sets the client's language (Rapida's `client.language` metadata), used
    /// for `message.language` when no user message in the history has one.
    /// An empty string means none.
    pub fn client_language(mut self, language: impl Into<String>) -> PromptContext {
        let language: String = language.into();
        self.client_language = (!language.is_empty()).then(|| Arc::from(language));
        self
    }

    /// Sets the conversation history, whole: a [`History`], or the
    /// messages as a `Vec` or an `Arc<Vec<_>>`. It is shared, never copied:
    /// keep a clone (of the `History`, or of the `Arc`) to keep a handle on
    /// it.
    ///
    /// A history set whole is checked against the tool-call rules, and
    /// searched for the latest user language, once (when first needed),
    /// and then shared by every clone of the context. Setting a new one
    /// forgets that: a host that sets a longer history every turn pays for
    /// the whole history every turn. To add the turn's messages, append
    /// them instead ([`PromptContext::push_message`],
    /// [`PromptContext::extend_history`]). Setting the very history the
    /// context holds (a clone of [`PromptContext::history`], or the same
    /// `Arc` again: [`History::ptr_eq`]) keeps what is known about it.
    pub fn with_history(mut self, history: impl Into<History>) -> PromptContext {
        let history = history.into();
        if !History::ptr_eq(self.history.messages(), &history) {
            self.history = Tracked::new(history);
        }
        self
    }

    /// Appends one message to the history, as a host does each turn. What
    /// a turn needs from the history (the tool-call rules' verdict, the
    /// latest user language) follows the new message alone, so the next
    /// turn costs the same with 10 or 10,000 messages.
    ///
    /// No message is copied, also while the clones of the context made for
    /// earlier turns, or their [`crate::Rendered`] results, still share the
    /// history: they keep the history they had (see [`History::push`]).
    ///
    /// ```
    /// use teleprompt::context::PromptContext;
    /// use teleprompt::messages::HistoryMessage;
    ///
    /// let user: HistoryMessage = serde_json::from_value(
    ///     serde_json::json!({"role": "user", "content": "Hi", "language": "fr"}),
    /// ).unwrap();
    /// let mut conversation = PromptContext::new();
    /// for turn in 1..=3 {
    ///     conversation = conversation.push_message(user.clone());
    ///     let context = conversation.clone().turn(turn);
    ///     assert!(context.validate_history().is_ok());
    ///     assert_eq!(context.history().len(), turn as usize);
    /// }
    /// ```
    pub fn push_message(mut self, message: HistoryMessage) -> PromptContext {
        self.history.push(message);
        self
    }

    /// Appends messages to the history, in order (see
    /// [`PromptContext::push_message`]).
    pub fn extend_history(
        mut self,
        messages: impl IntoIterator<Item = HistoryMessage>,
    ) -> PromptContext {
        for message in messages {
            self.history.push(message);
        }
        self
    }

    /// Checks the history against the tool-call rules
    /// ([`crate::messages::validate_history`]: the same verdict, the same
    /// first error). The verdict is kept with the history and follows each
    /// append, so turns check only the messages they add.
    pub fn validate_history(&self) -> Result<(), HistoryError> {
        self.history.verdict()
    }

    /// Opts in to the workspace provider: `env`, `files`, `readme`.
    pub fn workspace(mut self, workspace: Workspace) -> PromptContext {
        self.workspace = Some(Arc::new(workspace));
        self
    }

    /// Adds a label (`issue=PROJ-42`, `turn=3`) for the caller to attach to
    /// every error of the render ([`Error::with_labels`]).
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> PromptContext {
        Arc::make_mut(&mut self.labels).push((key.into(), value.into()));
        self
    }

    /// The labels, in the order they were added.
    pub fn labels(&self) -> &[(String, String)] {
        &self.labels
    }

    /// The conversation history (empty until set). Clone it to keep it:
    /// a clone shares the messages.
    pub fn history(&self) -> &History {
        self.history.messages()
    }

    /// `run.turn_number`.
    pub fn turn_number(&self) -> u32 {
        self.turn.number
    }

    /// `run.is_continuation`: true after the first turn.
    pub fn is_continuation(&self) -> bool {
        self.turn.number > 1
    }

    /// The text to send for this turn: `rendered`, or on a continuation
    /// whose render is whitespace only, the fallback (see
    /// [`continuation_fallback`]).
    pub fn continuation_text<'a>(
        &self,
        rendered: &'a str,
        continuation_prompt: Option<&'a str>,
    ) -> &'a str {
        continuation_fallback(rendered, self.is_continuation(), continuation_prompt)
    }

    /// Builds the data for one render. `reads` says which root names the
    /// template uses (`|name| template_reads.contains(name)`; `&|_| true`
    /// when it cannot be known): the workspace is read, and
    /// `message.language` resolved, only for names it accepts.
    ///
    /// Errors: the workspace root cannot be listed, or its README cannot be
    /// read (class `io`).
    pub fn build(&self, reads: &dyn Fn(&str) -> bool) -> Result<ContextData, Error> {
        self.build_with_defaults(reads, None)
    }

    /// [`PromptContext::build`] with the prompt's `input.default` placed
    /// under every runtime value and above the fallbacks (rank 5 of the
    /// [precedence](self#precedence)).
    pub fn build_with_defaults(
        &self,
        reads: &dyn Fn(&str) -> bool,
        defaults: Option<Arc<Value>>,
    ) -> Result<ContextData, Error> {
        // The context's own names are read by name only: printed or
        // iterated, the root shows the host's data, the args and the
        // defaults (`Data::root`).
        let mut data = Data::new_hidden(self.turn_values(reads)?);
        for (layer, own) in self.host_layers() {
            data = match own {
                true => data.over_data_hidden(layer),
                false => data.over_data(layer),
            };
        }
        // The host's own `message.language` hides the resolved one: then
        // the history is not searched.
        let language = if reads("message") && !self.host_sets_language() {
            Some(self.resolved_language())
        } else {
            None
        };
        if let Some(Some(language)) = &language {
            data = data.over_hidden(message_language(language));
        }
        if let Some(args) = &self.args {
            data = data.over_data(&args.root);
        }
        if let Some(defaults) = defaults {
            data = data.over(defaults);
        }
        if let Some(None) = language {
            data = data.over_hidden(message_language(""));
        }
        Ok(ContextData {
            data,
            warnings: self.warnings(),
        })
    }

    /// Rank 1: `system`, `run`, `attempt`, and the workspace names read.
    fn turn_values(&self, reads: &dyn Fn(&str) -> bool) -> Result<Value, Error> {
        let utc = TimeZone::UTC;
        let time_zone = self.time_zone.as_ref().unwrap_or(&utc);
        let mut map = Map::new();
        map.insert("system".into(), system_values(self.clock.now(), time_zone));
        if self.turn.set {
            map.insert("run".into(), self.run_value());
            map.insert("attempt".into(), Value::from(self.turn.attempt));
        }
        if let Some(workspace) = &self.workspace {
            if reads("env") {
                map.insert("env".into(), workspace.env_value());
            }
            if reads("files") {
                map.insert("files".into(), Value::from(workspace.files()?));
            }
            if reads("readme") {
                map.insert("readme".into(), Value::from(workspace.readme()?));
            }
        }
        Ok(Value::Object(map))
    }

    fn run_value(&self) -> Value {
        let mut run = Map::new();
        run.insert("turn_number".into(), Value::from(self.turn.number));
        run.insert("max_turns".into(), Value::from(self.turn.max));
        run.insert(
            "is_continuation".into(),
            Value::from(self.is_continuation()),
        );
        Value::Object(run)
    }

    /// Rank 2, in a fixed order (their names never overlap), each with
    /// whether it is the context's own (a namespace, `args`,
    /// `custom_rules`) rather than the host's data.
    fn host_layers(&self) -> impl Iterator<Item = (&Data, bool)> + '_ {
        let namespaces = self
            .namespaces
            .iter()
            .flatten()
            .map(|namespace| &namespace.layer);
        let args = self.args.iter().map(|args| &args.namespaced);
        namespaces
            .chain(args)
            .chain(self.custom_rules.iter())
            .map(|layer| (layer, true))
            .chain(self.data.iter().map(|layer| (layer, false)))
    }

    /// The latest user language in the history, else the client's language.
    fn resolved_language(&self) -> Option<&str> {
        self.history
            .latest_language()
            .or(self.client_language.as_ref())
            .map(|language| &**language)
    }

    /// Whether a layer of the host (the `message` namespace, or the host's
    /// data) sets `message.language`, even to null or "": that value is
    /// the one a template reads.
    fn host_sets_language(&self) -> bool {
        let sets = |layer: &Value| {
            layer
                .get("message")
                .and_then(Value::as_object)
                .is_some_and(|message| message.contains_key("language"))
        };
        let namespace = self
            .namespaces
            .get(Namespace::Message.slot())
            .and_then(Option::as_ref)
            .is_some_and(|namespace| sets(namespace.layer.root().value()));
        namespace
            || self
                .data
                .as_ref()
                .is_some_and(|data| sets(data.root().value()))
    }

    fn warnings(&self) -> Vec<String> {
        let namespaces = self
            .namespaces
            .iter()
            .flatten()
            .flat_map(|namespace| namespace.warnings.iter());
        let args = self.args.iter().flat_map(|args| args.warnings.iter());
        args.chain(namespaces).cloned().collect()
    }
}

/// The text to send for a turn: `rendered`, unless the turn is a
/// continuation and `rendered` is whitespace only; then the prompt's
/// `continuation_prompt` (when it has text), else
/// [`BUILTIN_CONTINUATION_PROMPT`].
///
/// ```
/// use teleprompt::context::{continuation_fallback, BUILTIN_CONTINUATION_PROMPT};
/// assert_eq!(continuation_fallback("  \n", true, Some("Go on.")), "Go on.");
/// assert_eq!(continuation_fallback("\n", true, None), BUILTIN_CONTINUATION_PROMPT);
/// assert_eq!(continuation_fallback("\n", false, Some("Go on.")), "\n");
/// assert_eq!(continuation_fallback("Fix it.", true, Some("Go on.")), "Fix it.");
/// ```
pub fn continuation_fallback<'a>(
    rendered: &'a str,
    is_continuation: bool,
    continuation_prompt: Option<&'a str>,
) -> &'a str {
    if !is_continuation || !rendered.trim().is_empty() {
        return rendered;
    }
    continuation_prompt
        .filter(|prompt| !prompt.trim().is_empty())
        .unwrap_or(BUILTIN_CONTINUATION_PROMPT)
}

/// `{"<name>": value}` as a layer (the value is moved in, not copied).
fn single_key(name: &str, value: Value) -> Arc<Value> {
    let mut map = Map::new();
    map.insert(name.to_string(), value);
    Arc::new(Value::Object(map))
}

/// `{"message": {"language": language}}`.
fn message_language(language: &str) -> Arc<Value> {
    single_key("message", single_key_value("language", language))
}

fn single_key_value(name: &str, value: &str) -> Value {
    let mut map = Map::new();
    map.insert(name.to_string(), Value::from(value));
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_is_send_sync_and_cheap_to_clone() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<PromptContext>();
        assert_send_sync::<ContextData>();
    }

    #[test]
    fn attempt_zero_is_the_first_run() {
        let context = PromptContext::new().attempt(0);
        let built = context.build(&|_| false).unwrap();
        let attempt = built.data.root().get("attempt").map(|view| view.to_json());
        assert_eq!(attempt, Some(Value::Null));
    }
}

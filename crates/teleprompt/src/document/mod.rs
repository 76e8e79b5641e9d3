//! A prompt file: optional YAML front matter between `---` fences, then the
//! template body. Keeps where the body starts so every error can name the
//! line in the real file.
//!
//! This is the first stage of a load (file → document): what kind of file
//! it is (`kind`), its front matter and body ([`Document`]), and the
//! folder its includes may come from (`include_root`). The syntaxes read
//! documents; `load` turns a document into a compiled prompt.

pub(crate) mod include_root;
pub(crate) mod kind;

use std::ops::Range;
use std::path::Path;

use serde_json::{Map, Value};

use crate::data::describe;
pub use crate::data::parse_yaml;
use crate::diagnostics::{closest, Error, ErrorClass, Location, TemplateError};
use crate::messages::Role;
use crate::{
    options::JinjaOptions, options::MessageReader, options::OnError, options::Strictness,
    options::Syntax,
};

/// A prompt file split into its front matter and body.
#[derive(Clone, Debug)]
pub struct Document {
    /// The file name used in error reports.
    pub origin: String,
    /// The front matter mapping (empty when the file has none).
    pub front_matter: Map<String, Value>,
    /// The template body, with CRLF line endings turned into LF.
    pub body: String,
    /// The line of the file on which the body starts (1-based).
    pub body_line: usize,
    /// The front matter text between the fences, for placing key errors.
    front_matter_source: Option<String>,
    /// Byte offsets in `body` where each line starts.
    line_starts: Vec<usize>,
}

/// The keys of the front matter that teleprompt understands.
#[derive(Clone, Debug, Default)]
pub struct Metadata {
    /// `name`; the caller falls back to the file stem.
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `syntax`.
    pub syntax: Option<Syntax>,
    /// `strict`.
    pub strict: Option<Strictness>,
    /// `on_error`.
    pub on_error: Option<OnError>,
    /// `input.default`: values merged under the runtime data (with the
    /// `default`s of `input.schema` under them).
    pub defaults: Option<Value>,
    /// `input.schema`: the declared inputs the data is checked against.
    pub schema: Option<crate::schema::InputSchema>,
    /// `messages`: how the template text marks roles besides `role` calls.
    pub messages: Option<MessageReader>,
    /// `default_role`: the role of text before the first role marker.
    pub default_role: Option<Role>,
    /// `continuation_prompt`: what a continuation turn sends when the
    /// prompt renders to nothing.
    pub continuation_prompt: Option<String>,
    /// `jinja`: whitespace options of Jinja-family prompts.
    pub jinja: JinjaOptions,
    /// `tokenizer`: what counts the render's tokens
    /// ([`crate::Rendered::tokens`]): a tokenizer's name, or a
    /// `tokenizer.json` path beside the prompt.
    pub tokenizer: Option<String>,
    /// `budget`: the most tokens a turn's conversation may be
    /// (`budget.total`, or `budget: N`), and the history's priority and
    /// limit; the template's sections and the history's oldest exchanges
    /// are cut to fit (see [`crate::tokens::Budget`]).
    pub budget: Option<crate::tokens::BudgetSettings>,
    /// `cache`: what the output shapes say to a provider's prompt cache.
    pub cache: CacheSettings,
    /// `limits`: render bounds this prompt lowers for itself, by their
    /// names in [`crate::limits::Limits`], in the order written.
    pub limits: Vec<(String, u64)>,
    /// The input that holds the conversation (a Prompty input of `kind:
    /// thread`): its value is the history, placed where the template
    /// prints it.
    pub thread: Option<String>,
}

/// Front matter `cache`: what the output shapes tell a provider's prompt
/// cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheSettings {
    /// `key`: the OpenAI shape's `prompt_cache_key` (`true`: the prompt's
    /// name and a hash of its source, so a changed prompt gets a new key).
    pub key: Option<CacheKey>,
    /// `breakpoints: auto`: cache breakpoints placed where the template
    /// placed none — after the messages before the history, and after the
    /// history.
    pub auto: bool,
    /// `min_tokens`: an automatic breakpoint is placed only after at least
    /// this many tokens (about four bytes each); default 1024, the least
    /// Anthropic caches for most models.
    pub min_tokens: u64,
}

impl Default for CacheSettings {
    fn default() -> Self {
        CacheSettings {
            key: None,
            auto: false,
            min_tokens: 1024,
        }
    }
}

/// Where a prompt's `prompt_cache_key` comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheKey {
    /// `key: true`: the prompt's name and a hash of its source.
    Derived,
    /// `key: TEXT`: that text.
    Named(String),
}

impl Document {
    /// Splits `source` into front matter and body. `origin` names the file
    /// in errors.
    pub fn parse(origin: &str, source: &str) -> Result<Document, Error> {
        let source = source.strip_prefix('\u{feff}').unwrap_or(source);
        let text = source.replace("\r\n", "\n");
        let document_error = |line: usize, column: usize, message: String| {
            Error::in_text(
                ErrorClass::Document,
                origin,
                &text,
                Location { line, column },
                message,
            )
            .with_kind("front-matter")
        };

        let mut lines = text.split_inclusive('\n');
        let opens = lines.next().is_some_and(is_fence);
        if !opens {
            return Ok(Document::new(origin, Map::new(), None, text.clone(), 1));
        }
        // Line 1 is the opening fence; find the closing one.
        let mut offset = text.find('\n').map_or(text.len(), |i| i + 1);
        let yaml_start = offset;
        let mut closing = None;
        for (index, line) in lines.enumerate() {
            if is_fence(line) {
                closing = Some((index + 2, offset, offset + line.len()));
                break;
            }
            offset += line.len();
        }
        let Some((fence_line, yaml_end, body_start)) = closing else {
            return Err(document_error(
                1,
                1,
                "the front matter opened on this line is never closed: add a line `---` after it"
                    .to_string(),
            ));
        };
        let yaml = &text[yaml_start..yaml_end];
        let front_matter = match parse_yaml(yaml) {
            Ok(Value::Object(map)) => map,
            Ok(Value::Null) => Map::new(),
            Ok(other) => {
                return Err(document_error(
                    2,
                    1,
                    format!(
                        "front matter must be a mapping of keys to values, found {}",
                        describe(&other)
                    ),
                ))
            }
            Err((line, column, message)) => {
                return Err(document_error(line + 1, column, message));
            }
        };
        let body = text[body_start..].to_string();
        Ok(Document::new(
            origin,
            front_matter,
            Some(yaml.to_string()),
            body,
            fence_line + 1,
        ))
    }

    /// A body that another file format holds (Semantic Kernel's prompt
    /// YAML): `metadata` stands for its front matter, and lines count in
    /// the body.
    pub fn embedded(
        origin: &str,
        metadata: Map<String, Value>,
        body: impl Into<String>,
    ) -> Document {
        Document::new(origin, metadata, None, body.into().replace("\r\n", "\n"), 1)
    }

    /// A body with no front matter at all (a chat template read from a
    /// tokenizer config): nothing in it is read as front matter.
    pub fn plain(origin: &str, body: impl Into<String>) -> Document {
        Document::new(
            origin,
            Map::new(),
            None,
            body.into().replace("\r\n", "\n"),
            1,
        )
    }

    fn new(
        origin: &str,
        front_matter: Map<String, Value>,
        front_matter_source: Option<String>,
        body: String,
        body_line: usize,
    ) -> Self {
        let line_starts = std::iter::once(0)
            .chain(body.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Document {
            origin: origin.to_string(),
            front_matter,
            front_matter_source,
            body,
            body_line,
            line_starts,
        }
    }

    /// Trims the body of whitespace at both ends, as Dotprompt reads its
    /// template. Whole blank lines at the start are dropped and counted,
    /// so lines in errors still count in the file; spaces before the first
    /// text on its line stay, so columns stay right too.
    pub(crate) fn trim_body(&mut self) {
        let end = self.body.trim_end().len();
        let start = self
            .body
            .find(|c: char| !c.is_whitespace())
            .and_then(|first| self.body.get(..first))
            .and_then(|blank| blank.rfind('\n'))
            .map_or(0, |newline| newline + 1);
        let Some(body) = self.body.get(start..end.max(start)) else {
            return;
        };
        let dropped_lines = self
            .body
            .get(..start)
            .map_or(0, |blank| blank.matches('\n').count());
        *self = Document::new(
            &self.origin,
            std::mem::take(&mut self.front_matter),
            self.front_matter_source.take(),
            body.to_string(),
            self.body_line + dropped_lines,
        );
    }

    /// Reads the known front matter keys; a bad value is a document error
    /// pointing at its key.
    pub fn metadata(&self) -> Result<Metadata, Error> {
        self.read_metadata().map_err(|first| {
            // Every misspelled key, not only the first found.
            let mut all: Vec<Error> = self
                .spelling_errors()
                .into_iter()
                .filter(|error| error.message() != first.message())
                .collect();
            all.push(first);
            // In the order of the file (a place-less error last).
            all.sort_by_key(|error| {
                error
                    .location()
                    .map_or((usize::MAX, usize::MAX), |at| (at.line, at.column))
            });
            let mut all = all.into_iter();
            match all.next() {
                Some(first) => first.with_others(all),
                None => Error::new(ErrorClass::Document, "front matter"),
            }
        })
    }

    fn read_metadata(&self) -> Result<Metadata, Error> {
        let fm = &self.front_matter;
        let text = |key: &str| -> Result<Option<String>, Error> {
            match fm.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(self.key_error(
                    key,
                    format!("`{key}` must be a string, found {}", describe(other)),
                )),
            }
        };
        let choice = |key: &str, parse: &dyn Fn(&str) -> Option<()>, allowed: &str| {
            let value = text(key)?;
            if let Some(value) = &value {
                if parse(value).is_none() {
                    return Err(
                        self.key_error(key, format!("`{key}: {value}` is not one of {allowed}"))
                    );
                }
            }
            Ok(value)
        };
        let syntax = choice(
            key::SYNTAX,
            &|s| s.parse::<Syntax>().ok().map(drop),
            Syntax::NAMES,
        )?
        .and_then(|s| s.parse().ok());
        let strict = choice(
            key::STRICT,
            &|s| s.parse::<Strictness>().ok().map(drop),
            Strictness::NAMES,
        )?
        .and_then(|s| s.parse().ok());
        let on_error = choice(
            key::ON_ERROR,
            &|s| s.parse::<OnError>().ok().map(drop),
            OnError::NAMES,
        )?
        .and_then(|s| s.parse().ok());
        let messages = choice(
            key::MESSAGES,
            &|s| s.parse::<MessageReader>().ok().map(drop),
            MessageReader::NAMES,
        )?
        .and_then(|s| s.parse().ok());
        let default_role = choice(
            key::DEFAULT_ROLE,
            &|s| Role::parse(s).map(drop),
            "system, developer, user, assistant, tool",
        )?
        .and_then(|s| Role::parse(&s));
        let input = self.section(key::INPUT, INPUT_KEYS)?;
        let defaults = match input.and_then(|input| input.get("default")) {
            None | Some(Value::Null) => None,
            Some(Value::Object(defaults)) => Some(Value::Object(expand_dotted(defaults))),
            Some(other) => {
                return Err(self.key_error(
                    key::INPUT,
                    format!(
                        "`input.default` must be a mapping of names to values, found {}",
                        describe(other)
                    ),
                ))
            }
        };
        let schema = match input.and_then(|input| input.get("schema")) {
            None | Some(Value::Null) => None,
            Some(schema) => Some(
                crate::schema::InputSchema::new(schema)
                    .map_err(|message| self.key_error(key::INPUT, message))?,
            ),
        };
        // The schema's own defaults sit under `input.default`.
        let defaults = match (defaults, schema.as_ref().and_then(|s| s.defaults())) {
            (Some(own), Some(declared)) => Some(crate::data::merge_under(own, declared)),
            (own, declared) => own.or_else(|| declared.cloned()),
        };
        let jinja = match self.section(key::JINJA, JinjaOptions::KEYS)? {
            None => JinjaOptions::default(),
            Some(section) => {
                let flag = |name: &str| -> Result<Option<bool>, Error> {
                    match section.get(name) {
                        None | Some(Value::Null) => Ok(None),
                        Some(Value::Bool(value)) => Ok(Some(*value)),
                        Some(other) => Err(self.key_error(
                            key::JINJA,
                            format!(
                                "`jinja.{name}` must be true or false, found {}",
                                describe(other)
                            ),
                        )),
                    }
                };
                JinjaOptions {
                    trim_blocks: flag("trim_blocks")?,
                    lstrip_blocks: flag("lstrip_blocks")?,
                    keep_trailing_newline: flag("keep_trailing_newline")?,
                }
            }
        };
        self.check_key_spelling()?;
        let mut limits = Vec::new();
        if let Some(section) = self.section(key::LIMITS, crate::limits::RENDER_LIMITS)? {
            for (name, value) in section {
                let bytes = name.ends_with("_bytes") || name == "max_output";
                let amount = match value {
                    Value::Number(number) => number
                        .as_u64()
                        .ok_or_else(|| format!("{number} is not a whole number")),
                    Value::String(text) => crate::limits::parse_amount(text, bytes),
                    other => Err(format!("a number is needed, found {}", describe(other))),
                };
                let amount = amount.map_err(|message| {
                    self.key_error(key::LIMITS, format!("`limits.{name}`: {message}"))
                })?;
                limits.push((name.clone(), amount));
            }
        }
        // Checked where the prompt loads, which resolves a file beside it.
        let tokenizer = text(key::TOKENIZER)?;
        let budget = self.budget()?;
        let cache = self.cache()?;
        Ok(Metadata {
            name: text(key::NAME)?,
            description: text(key::DESCRIPTION)?,
            syntax,
            strict,
            on_error,
            defaults,
            schema,
            messages,
            default_role,
            continuation_prompt: text(key::CONTINUATION_PROMPT)?,
            jinja,
            limits,
            thread: None,
            tokenizer,
            budget,
            cache,
        })
    }

    /// `cache: {key: true | NAME, breakpoints: auto, min_tokens: N}`.
    fn cache(&self) -> Result<CacheSettings, Error> {
        let mut settings = CacheSettings::default();
        let section = match self.front_matter.get(key::CACHE) {
            None | Some(Value::Null) => return Ok(settings),
            Some(Value::Object(section)) => section,
            Some(other) => {
                return Err(self.key_error(
                    key::CACHE,
                    format!(
                    "`cache` must be a mapping of `key`, `breakpoints` and `min_tokens`, found {}",
                    describe(other)
                ),
                ))
            }
        };
        for (name, value) in section {
            match (name.as_str(), value) {
                (_, Value::Null) => {}
                ("key", Value::Bool(on)) => settings.key = on.then_some(CacheKey::Derived),
                ("key", Value::String(text)) if !text.trim().is_empty() => {
                    settings.key = Some(CacheKey::Named(text.clone()));
                }
                ("breakpoints", Value::String(text)) if text == "auto" => settings.auto = true,
                ("breakpoints", Value::String(text)) if text == "manual" => settings.auto = false,
                ("min_tokens", Value::Number(number)) if number.as_u64().is_some() => {
                    settings.min_tokens = number.as_u64().unwrap_or(0);
                }
                ("key" | "breakpoints" | "min_tokens", other) => {
                    let want = match name.as_str() {
                        "key" => "true, false or a key of text",
                        "breakpoints" => "`auto` or `manual`",
                        _ => "a whole number of tokens",
                    };
                    return Err(self.key_error(
                        key::CACHE,
                        format!("`cache.{name}` must be {want}, found {}", describe(other)),
                    ));
                }
                (other, _) => {
                    return Err(self.key_error(
                        key::CACHE,
                        format!("`cache.{other}` is not a cache key: the keys are `key`, `breakpoints` and `min_tokens`"),
                    ))
                }
            }
        }
        Ok(settings)
    }

    /// `budget: N`, or `budget: {total: N, history: {priority: P,
    /// max_tokens: M}}`.
    fn budget(&self) -> Result<Option<crate::tokens::BudgetSettings>, Error> {
        let tokens = |key: &str, value: Option<&Value>| match value {
            Some(Value::Number(number)) if number.as_u64().is_some_and(|n| n > 0) => {
                Ok(number.as_u64().unwrap_or(1))
            }
            other => Err(self.key_error(
                key::BUDGET,
                format!(
                    "`{key}` must be a whole number of tokens above 0, found {}",
                    other.map_or("nothing", describe)
                ),
            )),
        };
        let section = match self.front_matter.get(key::BUDGET) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(section)) => section,
            total => {
                return tokens("budget.total", total)
                    .map(|total| Some(crate::tokens::BudgetSettings::new(total)))
            }
        };
        if let Some(other) = section
            .keys()
            .find(|name| !matches!(name.as_str(), "total" | "history"))
        {
            return Err(self.key_error(
                key::BUDGET,
                format!("`budget.{other}` is not a budget key: the keys are `total` and `history`"),
            ));
        }
        let mut settings =
            crate::tokens::BudgetSettings::new(tokens("budget.total", section.get("total"))?);
        match section.get("history") {
            None | Some(Value::Null) => {}
            Some(Value::Object(history)) => {
                if let Some(other) = history
                    .keys()
                    .find(|name| !matches!(name.as_str(), "priority" | "max_tokens"))
                {
                    return Err(self.key_error(
                        key::BUDGET,
                        format!("`budget.history.{other}` is not a key of the history's budget: the keys are `priority` and `max_tokens`"),
                    ));
                }
                match history.get("priority") {
                    None | Some(Value::Null) => {}
                    Some(Value::Number(number)) if number.as_i64().is_some() => {
                        settings.history_priority = number.as_i64().unwrap_or(0);
                    }
                    Some(other) => {
                        return Err(self.key_error(
                            key::BUDGET,
                            format!(
                                "`budget.history.priority` must be a whole number, found {}",
                                describe(other)
                            ),
                        ))
                    }
                }
                if let Some(most) = history.get("max_tokens").filter(|value| !value.is_null()) {
                    settings.history_max_tokens =
                        Some(tokens("budget.history.max_tokens", Some(most))?);
                }
            }
            Some(other) => {
                return Err(self.key_error(
                    key::BUDGET,
                    format!(
                    "`budget.history` must be a mapping of `priority` and `max_tokens`, found {}",
                    describe(other)
                ),
                ))
            }
        }
        Ok(Some(settings))
    }

    /// A front matter key that is none of teleprompt's but one letter or
    /// two from one of them (`stict`, `synatx`) is a typo, not metadata:
    /// an error with the key it likely meant. Keys other tools put in
    /// front matter (Prompty's `inputs`, Dotprompt's `output`, …) are
    /// metadata whatever they look like.
    fn check_key_spelling(&self) -> Result<(), Error> {
        match self.misspelled_keys().next() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    fn misspelled_keys(&self) -> impl Iterator<Item = Error> + '_ {
        self.front_matter.keys().filter_map(|name| {
            if key::ALL.contains(&name.as_str()) || key::OTHER_TOOLS.contains(&name.as_str()) {
                return None;
            }
            let meant = closest(name, key::ALL.iter().copied())?;
            Some(
                self.key_error(name, format!("unknown front matter key `{name}`"))
                    .with_suggestion(Some(format!("did you mean `{meant}`?"))),
            )
        })
    }

    /// Every misspelled key: of the front matter, and of each of
    /// teleprompt's own sections (`input`, `jinja`, `limits`), in the
    /// order of the file.
    fn spelling_errors(&self) -> Vec<Error> {
        let mut errors: Vec<Error> = self.misspelled_keys().collect();
        for (name, known) in [
            (key::INPUT, INPUT_KEYS),
            (key::JINJA, JinjaOptions::KEYS),
            (key::LIMITS, crate::limits::RENDER_LIMITS),
        ] {
            if let Some(Value::Object(section)) = self.front_matter.get(name) {
                for unknown in section.keys().filter(|key| !known.contains(&key.as_str())) {
                    errors.push(self.unknown_option(name, unknown, known));
                }
            }
        }
        errors.sort_by_key(|error| error.location());
        errors
    }

    /// The error for `unknown`, a key of the section `name` that takes
    /// only `known`.
    fn unknown_option(&self, name: &str, unknown: &str, known: &[&str]) -> Error {
        let suggestion = closest(unknown, known.iter().copied())
            .map(|key| format!("did you mean \"{name}.{key}\"?"));
        let error = Error::new(
            ErrorClass::Document,
            format!(
                "`{name}` has no option \"{unknown}\" (it takes {})",
                known.join(", ")
            ),
        )
        .with_kind("front-matter-key");
        self.place_on_path(error, &[name, unknown])
            .with_suggestion(suggestion)
    }

    /// One of teleprompt's own front matter sections (`input`, `jinja`): a
    /// mapping whose keys must be among `known` (a misspelling is an error
    /// with the closest known key, not silent metadata).
    fn section(&self, name: &str, known: &[&str]) -> Result<Option<&Map<String, Value>>, Error> {
        match self.front_matter.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(section)) => {
                if let Some(unknown) = section.keys().find(|key| !known.contains(&key.as_str())) {
                    return Err(self.unknown_option(name, unknown, known));
                }
                Ok(Some(section))
            }
            Some(other) => Err(self.key_error(
                name,
                format!("`{name}` must be a mapping, found {}", describe(other)),
            )),
        }
    }

    /// A document error placed on the front matter line that sets `key`.
    pub fn key_error(&self, key: &str, message: String) -> Error {
        self.place_on_key(
            Error::new(ErrorClass::Document, message).with_kind("front-matter-key"),
            key,
        )
    }

    /// `error` placed on the front matter line that sets `key` (in this
    /// file, without a place when the file has no such line).
    pub fn place_on_key(&self, error: Error, key: &str) -> Error {
        self.place_on_path(error, &[key])
    }

    /// `error` placed on the front matter line of the nested key `path`
    /// (`["input", "schema", "extra"]`), or of the deepest part of it that
    /// is written as a block mapping (a flow mapping, `{a: 1}`, holds its
    /// keys on its parent's line); without a place when not even the
    /// first key has a line. A key matches with its Picoschema suffixes
    /// (`extra?:`, `tags(array):`) and quotes.
    pub fn place_on_path(&self, error: Error, path: &[&str]) -> Error {
        self.place_on_paths(error, &[path])
    }

    /// `error` placed on the line of the first of `paths` written in full
    /// in the front matter, else as [`Document::place_on_path`] places it
    /// on the first (`input.schema.NAME` in Picoschema, else
    /// `input.schema.properties.NAME` in JSON Schema).
    pub(crate) fn place_on_paths(&self, error: Error, paths: &[&[&str]]) -> Error {
        let error = error.with_file(&self.origin);
        let Some(source) = self.front_matter_source.as_deref() else {
            return error;
        };
        let found = paths
            .iter()
            .filter_map(|path| key_line(source, path).filter(|found| found.3 == path.len()))
            .next()
            .or_else(|| paths.first().and_then(|path| key_line(source, path)));
        match found {
            // The front matter starts on line 2, after the opening fence.
            Some((index, indent, line, _)) => {
                let column = indent + 1;
                let width = (line.chars().count() + 1).saturating_sub(column).max(1);
                error.with_location(
                    Location {
                        line: index + 2,
                        column,
                    },
                    Some((line, width)),
                )
            }
            None => error,
        }
    }

    /// The file location of a byte offset in the body.
    pub fn location_of(&self, offset: usize) -> Location {
        let offset = offset.min(self.body.len());
        let line_index = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts.get(line_index).copied().unwrap_or(0);
        let column = self
            .body
            .get(start..offset)
            .map_or(offset - start, |prefix| prefix.chars().count())
            + 1;
        Location {
            line: self.body_line + line_index,
            column,
        }
    }

    /// The text of the body line holding `offset`.
    fn line_text(&self, offset: usize) -> &str {
        let offset = offset.min(self.body.len());
        let start = self.body[..offset].rfind('\n').map_or(0, |i| i + 1);
        let end = self.body[offset..]
            .find('\n')
            .map_or(self.body.len(), |i| offset + i);
        &self.body[start..end]
    }

    /// The body text in `span` (empty if out of range).
    pub fn snippet(&self, span: &Range<usize>) -> &str {
        self.body.get(span.clone()).unwrap_or("")
    }

    /// Turns a front end's error into a file-positioned [`Error`].
    pub(crate) fn locate(&self, mut error: TemplateError) -> Error {
        let Some(related) = error.related.take() else {
            return self.locate_one(error);
        };
        let first = self.locate_one(error);
        let (others, omitted) = (related.errors, related.more);
        let others: Vec<Error> = others.into_iter().map(|other| self.locate(other)).collect();
        first.with_others(others).with_omitted(omitted)
    }

    fn locate_one(&self, error: TemplateError) -> Error {
        if let Some(elsewhere) = error.elsewhere {
            let site = match elsewhere.site {
                Some(site) if site.start <= self.body.len() => {
                    let at = self.location_of(site.start);
                    format!("{}:{}:{}", self.origin, at.line, at.column)
                }
                _ => self.origin.clone(),
            };
            return elsewhere
                .error
                .with_labels(&[("included by".to_string(), site)]);
        }
        let path = error.path().map(str::to_string);
        let (label, secondary) = error.labels();
        let label = label.map(str::to_string);
        let secondary = secondary.to_vec();
        let mut base = Error::new(error.class, error.message)
            .with_file(&self.origin)
            .with_suggestion(error.suggestion)
            .with_path(path);
        if let Some(kind) = error.kind {
            base = base.with_kind(kind);
        }
        let Some(span) = error.span.filter(|span| span.start <= self.body.len()) else {
            return base;
        };
        let location = self.location_of(span.start);
        let line = self.line_text(span.start);
        let action = self.snippet(&span);
        let width = action.lines().next().unwrap_or("").chars().count();
        let mut located = base
            .with_location(location, Some((line, width)))
            .with_primary_label(label);
        // The end of a body that ends its last line is shown at the end
        // of that line, not on an empty line after it.
        let last_line_end = self
            .body
            .strip_suffix('\n')
            .map(|body| body.strip_suffix('\r').unwrap_or(body).len());
        for (span, label) in &secondary {
            if span.start > self.body.len() {
                continue;
            }
            let span = match last_line_end {
                Some(end) if span.start == self.body.len() => end..end,
                _ => span.clone(),
            };
            let span = &span;
            let width = self
                .snippet(span)
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .count();
            located = located.with_secondary(
                self.location_of(span.start),
                self.line_text(span.start),
                width,
                label.as_str(),
            );
        }
        let action = (!action.trim().is_empty()).then(|| action.to_string());
        located.with_action(action)
    }
}

/// Names of the front matter keys teleprompt reads.
pub mod key {
    /// `name`
    pub const NAME: &str = "name";
    /// `description`
    pub const DESCRIPTION: &str = "description";
    /// `syntax`
    pub const SYNTAX: &str = "syntax";
    /// `strict`
    pub const STRICT: &str = "strict";
    /// `on_error`
    pub const ON_ERROR: &str = "on_error";
    /// `input` (with `input.default` and `input.schema`)
    pub const INPUT: &str = "input";
    /// `messages`
    pub const MESSAGES: &str = "messages";
    /// `default_role`
    pub const DEFAULT_ROLE: &str = "default_role";
    /// `continuation_prompt`
    pub const CONTINUATION_PROMPT: &str = "continuation_prompt";
    /// `jinja` (whitespace options)
    pub const JINJA: &str = "jinja";
    /// `limits` (render bounds the prompt lowers for itself)
    pub const LIMITS: &str = "limits";
    /// `tests` (prompt tests: see the `teleprompt-testing` crate)
    pub const TESTS: &str = "tests";
    /// `tokenizer` (`o200k_base`, `cl100k_base`, or a `tokenizer.json`
    /// path: what counts tokens)
    pub const TOKENIZER: &str = "tokenizer";
    /// `budget` (`total`: the most tokens a turn may be)
    pub const BUDGET: &str = "budget";
    /// `cache` (`key`: the OpenAI shape's `prompt_cache_key`;
    /// `breakpoints: auto`; `min_tokens`)
    pub const CACHE: &str = "cache";

    /// Every key teleprompt reads.
    pub const ALL: &[&str] = &[
        NAME,
        DESCRIPTION,
        SYNTAX,
        STRICT,
        ON_ERROR,
        INPUT,
        MESSAGES,
        DEFAULT_ROLE,
        CONTINUATION_PROMPT,
        JINJA,
        LIMITS,
        TESTS,
        TOKENIZER,
        BUDGET,
        CACHE,
    ];

    /// Keys other prompt formats put in front matter, kept as metadata
    /// even where they look like a misspelling of one of teleprompt's
    /// (Prompty's `inputs` beside `input`): Dotprompt, Prompty, Semantic
    /// Kernel, LangChain, Sortie and common metadata.
    pub const OTHER_TOOLS: &[&str] = &[
        // Dotprompt
        "model",
        "config",
        "output",
        "tools",
        "metadata",
        "variant",
        "ext",
        "raw",
        // Prompty
        "authors",
        "version",
        "tags",
        "sample",
        "inputs",
        "outputs",
        "template",
        "base",
        // Semantic Kernel, LangChain
        "template_format",
        "input_variables",
        "output_variable",
        "execution_settings",
        "allow_dangerously_set_content",
        "partial_variables",
        // Sortie
        "tracker",
        "polling",
        "agent",
        "workspace",
        "hooks",
        "server",
        // common metadata
        "author",
        "license",
        "title",
        "type",
        "kind",
        "labels",
        "date",
        "id",
        "notes",
        "status",
    ];
}

/// The keys of the `input` section: `default` values, and `schema` (the
/// declared inputs, see [`crate::schema`]).
const INPUT_KEYS: &[&str] = &["default", "schema"];

fn is_fence(line: &str) -> bool {
    line.trim_end_matches(['\n', '\r', ' ', '\t']) == "---"
}

/// Expands dotted keys (`message.language: English`) into nested maps,
/// never overwriting a value that is already set.
pub fn expand_dotted(map: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    // Plain keys first, so a dotted key never replaces an explicit value.
    let (dotted, plain): (Vec<_>, Vec<_>) = map.iter().partition(|(k, _)| k.contains('.'));
    for (key, value) in plain {
        let value = match value {
            Value::Object(inner) => Value::Object(expand_dotted(inner)),
            other => other.clone(),
        };
        out.insert(key.clone(), value);
    }
    for (key, value) in dotted {
        crate::data::insert_dotted(&mut out, key, value.clone(), false);
    }
    out
}

/// The file stem of `path`, used as the prompt name when front matter has none.
pub fn file_stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // "task.prompt.j2" → "task.prompt"; "WORKFLOW.md" → "WORKFLOW".
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_string(),
        _ => name,
    }
}

/// The line (index in `source`, indent, text) of the block-mapping key
/// `path`, or of its deepest part found, with how many parts were found. Values carry no YAML positions,
/// so keys are found by their text: each part among the lines indented
/// under the one before, at the shallowest indent there.
fn key_line<'s>(source: &'s str, path: &[&str]) -> Option<(usize, usize, &'s str, usize)> {
    let lines: Vec<&str> = source.lines().collect();
    let (mut from, mut to) = (0, lines.len());
    let mut parent_indent: Option<usize> = None;
    let mut found = None;
    for (depth, part) in path.iter().enumerate() {
        let children = (from..to).filter_map(|index| {
            let line = lines.get(index)?;
            let trimmed = line.trim_start_matches(' ');
            if trimmed.is_empty() || trimmed.starts_with('#') {
                return None;
            }
            let indent = line.len() - trimmed.len();
            parent_indent
                .is_none_or(|parent| indent > parent)
                .then_some((index, indent, trimmed))
        });
        let children: Vec<(usize, usize, &str)> = children.collect();
        let Some(shallowest) = children.iter().map(|(_, indent, _)| *indent).min() else {
            break;
        };
        let Some(&(index, indent, _)) = children
            .iter()
            .find(|(_, indent, text)| *indent == shallowest && key_of(text) == Some(*part))
        else {
            break;
        };
        found = Some((
            index,
            indent,
            lines.get(index).copied().unwrap_or_default(),
            depth + 1,
        ));
        // The block under it: the lines after it indented deeper.
        from = index + 1;
        to = (from..to)
            .find(|&next| {
                lines.get(next).is_some_and(|line| {
                    let trimmed = line.trim_start_matches(' ');
                    !trimmed.is_empty()
                        && !trimmed.starts_with('#')
                        && line.len() - trimmed.len() <= indent
                })
            })
            .unwrap_or(to);
        parent_indent = Some(indent);
    }
    found
}

/// The key a `key: value` line sets, without quotes and Picoschema's
/// `?` and `(type, description)` suffixes.
fn key_of(text: &str) -> Option<&str> {
    let (key, _) = text.split_once(':')?;
    let key = key.trim();
    let key = key
        .strip_prefix('"')
        .and_then(|key| key.strip_suffix('"'))
        .or_else(|| {
            key.strip_prefix('\'')
                .and_then(|key| key.strip_suffix('\''))
        })
        .unwrap_or(key);
    let key = key.split_once('(').map_or(key, |(name, _)| name.trim_end());
    Some(key.strip_suffix('?').unwrap_or(key))
}

#[cfg(test)]
mod tests {
    use super::key_line;

    #[test]
    fn nested_keys_are_found_by_their_text() {
        let source = "name: x\n# input: {}\ninput:\n  default: {a: 1}\n  schema:\n    issue(object, the issue):\n      title: string\n    \"extra?\": string\n    tags(array): string\nother:\n  schema:\n    title: x\n";
        let line =
            |path: &[&str]| key_line(source, path).map(|(i, indent, _, depth)| (i, indent, depth));
        assert_eq!(line(&["input"]), Some((2, 0, 1)), "a comment is not a key");
        assert_eq!(line(&["input", "schema", "issue"]), Some((5, 4, 3)));
        assert_eq!(line(&["input", "schema", "tags"]), Some((8, 4, 3)));
        assert_eq!(
            line(&["input", "schema", "extra"]),
            Some((7, 4, 3)),
            "quoted, with ?"
        );
        // A nested key of another input is not a top-level one.
        assert_eq!(line(&["input", "schema", "title"]), Some((4, 2, 2)));
        // A flow mapping holds its keys on its parent's line.
        assert_eq!(line(&["input", "default", "a"]), Some((3, 2, 2)));
        assert_eq!(line(&["missing"]), None);
        assert_eq!(key_line("", &["input"]), None);
    }
}

//! The data a prompt renders against: JSON-shaped, shared and never copied.
//!
//! [`Data`] is a stack of JSON layers, highest priority first (runtime values
//! above a prompt's `input.default`). Nothing is merged up front: a [`View`]
//! resolves a path through the layers when the template reads it, so the cost
//! of a render depends on what the template reads, not on the size of the data.
//!
//! Each layer keeps, beside its JSON, what a syntax made of it on first use
//! (`Derived`): Jinja's objects over the parts of the layer a template
//! read, so that the next render of the same data reads them without
//! looking anything up again. A layer carries them while it lives: in
//! [`Data`] clones, and under [`Data::over_data`].

use std::any::Any;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::diagnostics::{Error, ErrorClass, Location};
use crate::limits::{self, Input};

mod parse;
mod toml;

/// Data to render a prompt against.
///
/// Cloning is cheap (a reference count), so a host can keep one `Data` and
/// render many prompts, or the same prompt every turn, without copying it.
///
/// ```
/// use teleprompt::Data;
/// let data = Data::new(serde_json::json!({"issue": {"title": "Fix login"}}));
/// assert_eq!(data.root().get("issue").and_then(|v| v.get("title")).map(|v| v.value().clone()),
///            Some(serde_json::json!("Fix login")));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Data {
    layers: Arc<[Layer]>,
}

/// One JSON layer of [`Data`], with what syntaxes derived from it.
#[derive(Clone, Debug)]
pub(crate) struct Layer {
    pub(crate) value: Arc<Value>,
    pub(crate) derived: Arc<Derived>,
    /// A layer the library added beside the host's data (the prompt
    /// context's namespaces, Dotprompt's render context): its root keys
    /// are read by name, but the root, printed or iterated, does not show
    /// them (see [`View::keys`]).
    pub(crate) hidden: bool,
}

impl Layer {
    fn new(value: Arc<Value>) -> Layer {
        Layer {
            value,
            derived: Arc::default(),
            hidden: false,
        }
    }

    fn hidden(value: Arc<Value>) -> Layer {
        Layer {
            hidden: true,
            ..Layer::new(value)
        }
    }
}

/// What a syntax made of a layer on first use, kept with the layer: one
/// slot per use, numbered by the syntax that uses it (the data layer
/// knows none of them).
#[derive(Default)]
pub(crate) struct Derived {
    slots: [OnceLock<Box<dyn Any + Send + Sync>>; Derived::SLOTS],
}

impl Derived {
    /// How many slots a layer has.
    pub(crate) const SLOTS: usize = 2;

    /// The value in `slot`, made by `make` the first time. `None` if the
    /// slot holds a value of another type.
    pub(crate) fn get_or_init<T: Any + Send + Sync>(
        &self,
        slot: usize,
        make: impl FnOnce() -> T,
    ) -> Option<&T> {
        self.slots
            .get(slot)?
            .get_or_init(|| Box::new(make()))
            .downcast_ref()
    }
}

impl std::fmt::Debug for Derived {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let made = self
            .slots
            .iter()
            .filter(|slot| slot.get().is_some())
            .count();
        write!(f, "Derived({made} made)")
    }
}

impl Data {
    /// Data made of one JSON value (normally an object).
    pub fn new(value: impl Into<Arc<Value>>) -> Data {
        Data {
            layers: Arc::from(vec![Layer::new(value.into())]),
        }
    }

    /// Serializes any `Serialize` value into data (this copies it once).
    pub fn from_serialize<T: serde::Serialize + ?Sized>(
        value: &T,
    ) -> Result<Data, serde_json::Error> {
        Ok(Data::new(serde_json::to_value(value)?))
    }

    /// Data with `lower` underneath: keys of `self` win, objects merge deeply.
    pub fn over(&self, lower: impl Into<Arc<Value>>) -> Data {
        let mut layers: Vec<Layer> = self.layers.to_vec();
        layers.push(Layer::new(lower.into()));
        Data {
            layers: Arc::from(layers),
        }
    }

    /// [`Data::over`] with all of `lower`'s layers underneath, keeping what
    /// was derived from them (a prompt's defaults, read every render).
    pub fn over_data(&self, lower: &Data) -> Data {
        let layers: Vec<Layer> = self
            .layers
            .iter()
            .chain(lower.layers.iter())
            .cloned()
            .collect();
        Data {
            layers: Arc::from(layers),
        }
    }

    /// The layers, highest priority first.
    pub(crate) fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Data made of one hidden layer (see [`Layer::hidden`]): the names
    /// the library adds, read by name only.
    pub(crate) fn new_hidden(value: impl Into<Arc<Value>>) -> Data {
        Data {
            layers: Arc::from(vec![Layer::hidden(value.into())]),
        }
    }

    /// [`Data::over`], the layer underneath hidden.
    pub(crate) fn over_hidden(&self, lower: impl Into<Arc<Value>>) -> Data {
        let mut layers: Vec<Layer> = self.layers.to_vec();
        layers.push(Layer::hidden(lower.into()));
        Data {
            layers: Arc::from(layers),
        }
    }

    /// [`Data::over_data`], every layer underneath hidden.
    pub(crate) fn over_data_hidden(&self, lower: &Data) -> Data {
        let layers: Vec<Layer> = self
            .layers
            .iter()
            .cloned()
            .chain(lower.layers.iter().map(|layer| Layer {
                hidden: true,
                ..layer.clone()
            }))
            .collect();
        Data {
            layers: Arc::from(layers),
        }
    }

    /// Data with `upper` on top, hidden: keys of `upper` win (the host's
    /// render context of a Dotprompt file, which the data must not shadow
    /// and which the root never shows).
    pub(crate) fn under(&self, upper: impl Into<Arc<Value>>) -> Data {
        let mut layers: Vec<Layer> = Vec::with_capacity(self.layers.len() + 1);
        layers.push(Layer::hidden(upper.into()));
        layers.extend(self.layers.iter().cloned());
        Data {
            layers: Arc::from(layers),
        }
    }

    /// A view of the merged root. Keys of hidden layers are read by name
    /// but not listed (see [`View::keys`]).
    pub fn root(&self) -> View<'_> {
        let mut layers = self.layers.iter();
        match layers.next() {
            None => View::single(&Value::Null),
            Some(first) if !first.value.is_object() => View::single(&first.value),
            Some(first) => {
                let mut hidden = u64::from(first.hidden);
                let mut at = 0u32;
                let rest =
                    Below::collect(layers.filter(|layer| layer.value.is_object()).map(|layer| {
                        at += 1;
                        if layer.hidden && at < u64::BITS {
                            hidden |= 1 << at;
                        }
                        &*layer.value
                    }));
                View {
                    first: &first.value,
                    rest,
                    hidden,
                }
            }
        }
    }

    /// Resolves a path of keys and indexes from the root.
    pub fn lookup<'a>(&'a self, path: &[Segment]) -> Option<View<'a>> {
        path.iter()
            .try_fold(self.root(), |view, segment| match segment {
                Segment::Key(key) => view.get(key),
                Segment::Index(index) => view.index(*index),
            })
    }
}

impl From<Value> for Data {
    fn from(value: Value) -> Data {
        Data::new(value)
    }
}

impl From<Arc<Value>> for Data {
    fn from(value: Arc<Value>) -> Data {
        Data::new(value)
    }
}

impl From<&Data> for Data {
    fn from(data: &Data) -> Data {
        data.clone()
    }
}

/// One step of a path into the data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// An object key.
    Key(Arc<str>),
    /// An array index.
    Index(usize),
}

/// Formats a path the way a template author writes it: `issue.labels[0]`.
pub fn path_to_string(path: &[Segment]) -> String {
    let mut text = String::new();
    for segment in path {
        match segment {
            Segment::Key(key) => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(key);
            }
            Segment::Index(index) => {
                text.push('[');
                text.push_str(&index.to_string());
                text.push(']');
            }
        }
    }
    text
}

/// A borrowed view of one place in [`Data`]: the winning value, plus the
/// objects of lower layers at the same path that merge under it.
#[derive(Clone, Debug)]
pub struct View<'a> {
    first: &'a Value,
    rest: Below<'a>,
    /// At the root only: which of its objects (bit 0 `first`, bit i the
    /// i-th of `rest`) are hidden layers, whose keys are read by name but
    /// not listed.
    hidden: u64,
}

/// The lower layers' objects under a view: mostly none or one, kept
/// without an allocation (a view is made on every lookup); more are shared,
/// so that copying a view (the root's, passed to every template call) does
/// not allocate.
#[derive(Clone, Debug, Default)]
enum Below<'a> {
    #[default]
    None,
    One(&'a Value),
    Many(Arc<[&'a Value]>),
}

impl<'a> Below<'a> {
    fn collect(mut values: impl Iterator<Item = &'a Value>) -> Below<'a> {
        let Some(first) = values.next() else {
            return Below::None;
        };
        let Some(second) = values.next() else {
            return Below::One(first);
        };
        let many: Arc<[&'a Value]> = [first, second].into_iter().chain(values).collect();
        Below::Many(many)
    }

    fn as_slice(&self) -> &[&'a Value] {
        match self {
            Below::None => &[],
            Below::One(value) => std::slice::from_ref(value),
            Below::Many(values) => values,
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Below::None)
    }
}

impl<'a> View<'a> {
    /// A view of a single value.
    pub fn single(value: &'a Value) -> View<'a> {
        View {
            first: value,
            rest: Below::None,
            hidden: 0,
        }
    }

    /// The value that wins at this place. For a merged object this is the
    /// highest layer's object only; use [`View::get`] and [`View::keys`] to
    /// see the merge.
    pub fn value(&self) -> &'a Value {
        self.first
    }

    /// True when lower layers contribute keys to this object (or, at the
    /// root, when layers the library added are left out of its keys): then
    /// [`View::value`] alone is not the object.
    pub fn is_merged(&self) -> bool {
        !self.rest.is_empty() || self.hidden != 0
    }

    /// The value under `key`, if this is an object that has it in any layer.
    #[inline]
    pub fn get(&self, key: &str) -> Option<View<'a>> {
        self.get_entry(key).map(|(_, view)| view)
    }

    /// [`View::get`], with the key as the data holds it (borrowed from the
    /// data, not from `key`).
    #[inline]
    pub fn get_entry(&self, key: &str) -> Option<(&'a str, View<'a>)> {
        if self.rest.is_empty() {
            // One layer (most reads): the object's own entry, nothing to merge.
            let (held, value) = find_key(self.first.as_object()?, key)?;
            return Some((held.as_str(), View::single(value)));
        }
        self.get_entry_merged(key)
    }

    /// [`View::get_entry`] through the lower layers' objects.
    fn get_entry_merged(&self, key: &str) -> Option<(&'a str, View<'a>)> {
        let mut found = std::iter::once(self.first)
            .chain(self.rest.as_slice().iter().copied())
            .filter_map(|node| find_key(node.as_object()?, key));
        let (held, first) = found.next()?;
        let rest = if first.is_object() && !self.rest.is_empty() {
            Below::collect(found.map(|(_, node)| node).filter(|node| node.is_object()))
        } else {
            Below::None
        };
        Some((
            held.as_str(),
            View {
                first,
                rest,
                hidden: 0,
            },
        ))
    }

    /// The element at `index`, if this is an array (arrays never merge).
    pub fn index(&self, index: usize) -> Option<View<'a>> {
        self.first.as_array()?.get(index).map(View::single)
    }

    /// Keys of the merged object in order: the highest layer's keys first,
    /// then keys only lower layers have. Empty for non-objects. At the
    /// root, not the keys only the library's own layers have (the prompt
    /// context's `system`, `message`, …): those are read by name only.
    pub fn keys(&self) -> Vec<&'a str> {
        self.keys_of(false)
    }

    /// [`View::keys`], with the keys of the library's own layers too (for
    /// did-you-mean suggestions).
    pub(crate) fn names(&self) -> Vec<&'a str> {
        self.keys_of(true)
    }

    fn keys_of(&self, all: bool) -> Vec<&'a str> {
        let mut keys: Vec<&'a str> = Vec::new();
        // Keys already taken from an upper layer (only where layers merge):
        // a set, so that 100,000 keys cost 100,000 lookups, not 10^10.
        let mut seen: std::collections::HashSet<&'a str> = std::collections::HashSet::new();
        let nodes = std::iter::once(self.first).chain(self.rest.as_slice().iter().copied());
        for (at, node) in nodes.enumerate() {
            if !all && at < 64 && self.hidden & (1 << at) != 0 {
                continue;
            }
            if let Some(object) = node.as_object() {
                for key in object.keys() {
                    if self.rest.is_empty() || seen.insert(key.as_str()) {
                        keys.push(key);
                    }
                }
            }
        }
        keys
    }

    /// Number of keys (objects), elements (arrays) or characters (strings).
    pub fn len(&self) -> Option<usize> {
        match self.first {
            Value::Object(_) if self.is_merged() => Some(self.keys().len()),
            Value::Object(object) => Some(object.len()),
            Value::Array(items) => Some(items.len()),
            Value::String(text) => Some(text.chars().count()),
            _ => None,
        }
    }

    /// True for an empty object, array or string (see [`View::len`]).
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// The merged value as one owned JSON value (copies; for output only).
    pub fn to_json(&self) -> Value {
        if !self.is_merged() {
            return self.first.clone();
        }
        let map = self
            .keys()
            .into_iter()
            .filter_map(|key| Some((key.to_string(), self.get(key)?.to_json())))
            .collect();
        Value::Object(map)
    }
}

/// "an array", "a string", … for messages about data of the wrong shape.
pub fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The most parts a dotted path of [`insert_dotted`] is split into: data
/// is read at most 128 deep, as JSON is, since copying, printing and
/// dropping a value recurse.
pub const MAX_DOTTED_PARTS: usize = 128;

/// Sets `value` at a dotted path (`issue.title`) in `map`, creating maps
/// on the way. With `overwrite` the value replaces whatever is there (a
/// leaf in the way included); without, an existing value is kept. A path of
/// more than [`MAX_DOTTED_PARTS`] parts is not split: it is one key.
pub fn insert_dotted(map: &mut Map<String, Value>, dotted: &str, value: Value, overwrite: bool) {
    let too_deep = dotted.split('.').nth(MAX_DOTTED_PARTS).is_some();
    let mut parts = dotted
        .splitn(if too_deep { 1 } else { MAX_DOTTED_PARTS }, '.')
        .peekable();
    let mut current = map;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            if overwrite {
                current.insert(part.to_string(), value);
            } else {
                current.entry(part.to_string()).or_insert(value);
            }
            return;
        }
        let slot = current
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            if !overwrite {
                // A leaf is already set where a map would go: keep the leaf.
                return;
            }
            *slot = Value::Object(Map::new());
        }
        match slot {
            Value::Object(inner) => current = inner,
            _ => return,
        }
    }
}

/// Parses YAML into JSON-shaped data; on failure returns (line, column,
/// message) relative to the YAML text.
pub fn parse_yaml(yaml: &str) -> Result<Value, (usize, usize, String)> {
    parse_yaml_keeping(yaml, None)
}

fn parse_yaml_keeping(
    yaml: &str,
    keep: Option<&dyn Fn(&str) -> bool>,
) -> Result<Value, (usize, usize, String)> {
    if yaml.trim().is_empty() {
        return Ok(Value::Null);
    }
    parse::yaml(yaml, yaml_options(yaml), keep)
}

/// How many values YAML aliases may add to those a file holds: an alias
/// copies its anchor's values, and an anchor of aliases of anchors grows
/// exponentially (a "billion laughs"). The budget is on what the aliases
/// produce, not on how many there are: any number of aliases of a small
/// anchor is fine.
pub const YAML_ALIAS_VALUES: usize = 250_000;
/// How many values parsed data may hold, all levels counted (every list,
/// map, string, number, boolean and null; the values of top-level keys a
/// prompt does not read are checked, not built, and not counted). Each
/// value takes at least 32 bytes in memory, so a text of tiny values
/// (`[0,0,0,…]`: 2 bytes a value) would take some 16–40 times its size;
/// past this bound the reading stops with an error naming it, after at
/// most a few hundred MB.
pub const MAX_DATA_VALUES: usize = 4_000_000;
/// How deep JSON data may nest (lists and objects in one another): the
/// JSON reader's bound.
pub(crate) const MAX_JSON_DEPTH: usize = 127;

/// How deep YAML data may nest: the YAML reader recurses deeper per level,
/// and stops at this depth to stay within a small thread's stack.
pub(crate) const MAX_YAML_DEPTH: usize = 64;

/// How many bytes of text YAML aliases may add to the file's own.
pub const YAML_ALIAS_BYTES: usize = 64 * 1024 * 1024;

/// How YAML `text` is read: plain scalars resolve by the YAML 1.2 core
/// schema (spec 1.2.2, section 10.3.2): its booleans (`true`, `True`,
/// `TRUE`, `false`, …: `yes`, `no`, `on`, `y` stay strings), nulls (`~`,
/// `null`, empty), integers (`0123` is 123, `0o17` is 15, `0x1F` is 31)
/// and floats; what the core schema does not make a number (`0b101`,
/// `1_000`, `0X1F`) is a string. `.inf` and `.nan` become the strings Go
/// prints for them (`+Inf`, `NaN`: JSON data has no such numbers). The
/// table the tests hold to is `tests/data/yaml_scalars.txt` (the core
/// reading is checked in `data/parse.rs`). A duplicate key is an error
/// (merge keys, `<<`, still give way to the mapping's own keys, as YAML
/// says), reported as a duplicate key in JSON is. What aliases add is
/// bounded by [`YAML_ALIAS_VALUES`] and [`YAML_ALIAS_BYTES`]; what the text
/// holds itself is bounded by its size (see [`crate::limits::Limits`]), so
/// the reader's own counts of nodes, aliases and anchors are lifted.
#[cfg(test)]
pub(crate) fn tests_yaml_options(text: &str) -> serde_saphyr::Options {
    yaml_options(text)
}

fn yaml_options(text: &str) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = usize::MAX;
    budget.max_nodes = usize::MAX;
    budget.max_aliases = usize::MAX;
    budget.max_anchors = usize::MAX;
    budget.enforce_alias_anchor_ratio = false;
    budget.max_depth = MAX_YAML_DEPTH;
    budget.max_total_scalar_bytes = text.len().saturating_add(YAML_ALIAS_BYTES);
    budget.max_recorded_anchor_bytes = text.len().saturating_add(YAML_ALIAS_BYTES);
    budget.max_recorded_anchor_events = text.len().saturating_add(YAML_ALIAS_VALUES);
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = YAML_ALIAS_VALUES;
    options.duplicate_keys = serde_saphyr::options::DuplicateKeyPolicy::Error;
    options.with_snippet = false;
    // YAML 1.2 booleans only: `NO`, `y`, `on` are strings (the "Norway
    // problem" of YAML 1.1), as in yaml.v3.
    options.strict_booleans = true;
    // `012` is not octal (YAML 1.1's reading): the reader makes it the
    // float 12.0, which `data::parse::yaml` corrects to the core schema's
    // integer 12. `1_000` is a string, as the core schema says.
    options.legacy_octal_numbers = false;
    options.underscored_numbers_as_strings = true;
    options.non_finite_float_policy = serde_saphyr::options::NonFiniteFloatPolicy::PassThrough;
    options
}

/// A text format for data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// JSON.
    Json,
    /// YAML (1.2; JSON is also accepted).
    Yaml,
    /// TOML (1.0): a table, so the data is a map; dates and times are
    /// their RFC 3339 text.
    Toml,
}

impl Format {
    /// The format named by a file extension (`.json`, `.yaml`, `.yml`,
    /// `.toml`).
    pub fn from_path(path: &std::path::Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "json" => Some(Format::Json),
            "yaml" | "yml" => Some(Format::Yaml),
            "toml" => Some(Format::Toml),
            _ => None,
        }
    }
}

/// Parses data text. Without a format, text that starts like JSON (`{`,
/// `[`) is read as JSON and anything else as YAML. `origin` names the
/// source in errors, which are of class `input`.
pub fn parse_text(text: &str, format: Option<Format>, origin: &str) -> Result<Value, Error> {
    parse_text_keeping(text, format, origin, None)
}

/// [`parse_text`], building only the values of the top-level keys `keep`
/// accepts: the others are read (a syntax error or a duplicate key in them
/// is still an error) but never built, and left null, so data a template
/// cannot read costs no memory while a misspelled name still finds its
/// did-you-mean. Pass [`Prompt::reads`](crate::Prompt::reads) to keep what
/// a prompt may read.
pub fn parse_text_keeping(
    text: &str,
    format: Option<Format>,
    origin: &str,
    keep: Option<&dyn Fn(&str) -> bool>,
) -> Result<Value, Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let format = format.unwrap_or_else(|| {
        if text.trim_start().starts_with(['{', '[']) {
            Format::Json
        } else {
            Format::Yaml
        }
    });
    // Data is not a prompt: an error names the file, the line, the column
    // and what was expected, never the text there (the file may be one
    // the user did not mean to show, `/proc/self/environ`).
    let input_error = |line: usize, column: usize, message: String| {
        Error::new(ErrorClass::Input, message)
            .with_file(origin)
            .with_location(Location { line, column }, None)
    };
    match format {
        Format::Json => parse::json_keeping(text, keep).map_err(|error| {
            let message = format!("invalid JSON: {error}");
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.clone(), |(head, _)| head.to_string());
            let message = match message.as_str() {
                "invalid JSON: recursion limit exceeded" => {
                    format!("invalid JSON: it nests deeper than {MAX_JSON_DEPTH} levels")
                }
                _ => message,
            };
            input_error(error.line().max(1), error.column().max(1), message)
        }),
        Format::Yaml => match parse_yaml_keeping(text, keep) {
            Ok(Value::Null) => Ok(Value::Object(Map::new())),
            Ok(value) => Ok(value),
            Err((line, column, message)) => Err(input_error(line, column, message)),
        },
        Format::Toml => toml::parse(text, keep).map_err(|error| {
            let message = format!("invalid TOML: {}", error.message);
            match error.at {
                Some(at) => {
                    let (line, column) = line_and_column(text, at);
                    input_error(line, column, message)
                }
                None => Error::new(ErrorClass::Input, message).with_file(origin),
            }
        }),
    }
}

/// The line and column (1-based, in characters) of byte `at` of `text`.
fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let line = before.matches('\n').count() + 1;
    (line, before[line_start..].chars().count() + 1)
}

/// Parses JSON text as data is parsed: like `serde_json::from_str`, but a
/// key twice in one object is an error naming the object's path.
pub(crate) fn parse_json(text: &str) -> Result<Value, serde_json::Error> {
    parse::json(text)
}

/// Reads a data file — JSON or YAML by its extension, else by its content
/// (see [`parse_text`]) — of at most `max_bytes` bytes
/// ([`Limits::max_data_bytes`](crate::limits::Limits::max_data_bytes)).
/// A file that cannot be read or is too large is an `io` error; text that
/// is not UTF-8 or does not parse is an `input` error at its line.
pub fn read_file(path: &Path, max_bytes: usize) -> Result<Value, Error> {
    read_file_keeping(path, max_bytes, None)
}

/// [`read_file`], building only the top-level keys `keep` accepts (see
/// [`parse_text_keeping`]): with [`Prompt::reads`](crate::Prompt::reads),
/// a large file costs memory only for what the prompt may read.
pub fn read_file_keeping(
    path: &Path,
    max_bytes: usize,
    keep: Option<&dyn Fn(&str) -> bool>,
) -> Result<Value, Error> {
    let origin = path.display().to_string();
    let bytes = limits::read_file(path, max_bytes, Input::Data)?;
    parse_text_keeping(
        &utf8_text(bytes, &origin)?,
        Format::from_path(path),
        &origin,
        keep,
    )
}

/// [`read_file`] for a data file that another file names (a prompt
/// test's `data:` or `history:`): `name` is read under the one confinement
/// rule, [`limits::read_inside`] — a relative path without `..` that stays
/// inside `root` (symbolic links followed), a regular file (never a pipe
/// or a device, opened without blocking), at most `max_bytes` bytes.
pub fn read_file_inside(root: &Path, name: &str, max_bytes: usize) -> Result<Value, Error> {
    let (relative, bytes) = limits::read_inside(root, name, max_bytes, Input::Data)?;
    let origin = root.join(&relative).display().to_string();
    parse_text(
        &utf8_text(bytes, &origin)?,
        Format::from_path(&relative),
        &origin,
    )
}

/// [`read_file`] from a reader (stdin); `origin` names it in errors, and
/// without a `format` the content decides.
pub fn read_from(
    reader: impl Read,
    origin: &str,
    format: Option<Format>,
    max_bytes: usize,
) -> Result<Value, Error> {
    read_from_keeping(reader, origin, format, max_bytes, None)
}

/// [`read_from`], building only the top-level keys `keep` accepts.
pub fn read_from_keeping(
    reader: impl Read,
    origin: &str,
    format: Option<Format>,
    max_bytes: usize,
    keep: Option<&dyn Fn(&str) -> bool>,
) -> Result<Value, Error> {
    let bytes = limits::read_from(reader, origin, max_bytes, Input::Data)?;
    parse_text_keeping(&utf8_text(bytes, origin)?, format, origin, keep)
}

/// `bytes` as text; bytes that are not UTF-8 (a binary file) are an
/// `input` error at the line and column of the first bad byte.
fn utf8_text(bytes: Vec<u8>, origin: &str) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|error| {
        let bytes = error.as_bytes();
        let valid = error.utf8_error().valid_up_to();
        // The valid prefix is UTF-8.
        let before = std::str::from_utf8(bytes.get(..valid).unwrap_or_default()).unwrap_or("");
        let (line, column) = line_and_column(before, before.len());
        let byte = bytes.get(valid).copied().unwrap_or_default();
        Error::new(
            ErrorClass::Input,
            format!("the data is not UTF-8 text (byte 0x{byte:02X} at offset {valid}): is it a binary file?"),
        )
        .with_file(origin)
        .with_location(Location { line, column }, None)
    })
}

/// The value under `key` in `json`, if it is an object that has it (one
/// layer: nothing merged).
#[inline]
pub(crate) fn child<'a>(json: &'a Value, key: &str) -> Option<&'a Value> {
    find_key(json.as_object()?, key).map(|(_, value)| value)
}

/// `map`'s entry for `key`. Small maps (most objects a template reads) are
/// scanned: comparing a few short keys costs less than hashing one.
#[inline]
pub(crate) fn find_key<'a>(
    map: &'a Map<String, Value>,
    key: &str,
) -> Option<(&'a String, &'a Value)> {
    const SCAN: usize = 8;
    if map.len() <= SCAN {
        let key = key.as_bytes();
        map.iter().find(|(held, _)| same_key(held.as_bytes(), key))
    } else {
        map.get_key_value(key)
    }
}

/// Whether two keys are equal. Keys are mostly short: up to 16 bytes they
/// are compared as two machine words (overlapping when shorter than two
/// words), in line, instead of calling a function to compare the bytes.
#[inline]
pub(crate) fn same_key(held: &[u8], key: &[u8]) -> bool {
    let n = key.len();
    if held.len() != n {
        return false;
    }
    match n {
        0 => true,
        1..=3 => held.iter().zip(key).all(|(a, b)| a == b),
        4..=7 => {
            word::<4>(held, 0) == word::<4>(key, 0)
                && word::<4>(held, n - 4) == word::<4>(key, n - 4)
        }
        8..=16 => {
            word::<8>(held, 0) == word::<8>(key, 0)
                && word::<8>(held, n - 8) == word::<8>(key, n - 8)
        }
        _ => held == key,
    }
}

/// The `N` bytes of `bytes` at `at` (zeros past its end, never read here).
#[inline]
fn word<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes
        .get(at..at + N)
        .and_then(|part| part.try_into().ok())
        .unwrap_or([0; N])
}

/// `upper` with what it lacks taken from `lower`: maps are merged key by
/// key at every depth, and anything else in `upper` wins.
pub fn merge_under(upper: Value, lower: &Value) -> Value {
    match (upper, lower) {
        (Value::Object(mut upper), Value::Object(lower)) => {
            for (key, below) in lower {
                let merged = match upper.remove(key) {
                    Some(above) => merge_under(above, below),
                    None => below.clone(),
                };
                upper.insert(key.clone(), merged);
            }
            Value::Object(upper)
        }
        (upper, _) => upper,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn toml_files_are_data_and_their_errors_have_a_place() {
        let path = Path::new("issue.TOML");
        assert_eq!(Format::from_path(path), Some(Format::Toml));
        let value = parse_text(
            "[issue]\ntitle = \"Fix\"\n",
            Format::from_path(path),
            "d.toml",
        );
        assert_eq!(value.ok(), Some(json!({"issue": {"title": "Fix"}})));
        let error = parse_text("a = 1\nb = \"é\" c\n", Some(Format::Toml), "d.toml")
            .err()
            .unwrap();
        assert_eq!(error.class(), ErrorClass::Input);
        assert!(error.message().starts_with("invalid TOML: "), "{error}");
        let location = error.location().unwrap();
        assert_eq!((location.line, location.column), (2, 9));
        // Without a format, text is still JSON or YAML: TOML is chosen by
        // its extension only.
        assert!(parse_text("a = 1", None, "stdin").unwrap().is_string());
    }

    #[test]
    fn upper_layer_wins_and_objects_merge_deeply() {
        let data = Data::new(json!({"a": {"x": 1}, "b": 2})).over(json!({
            "a": {"x": 0, "y": 3},
            "b": {"nested": true},
            "c": "default"
        }));
        let root = data.root();
        assert_eq!(root.keys(), vec!["a", "b", "c"]);
        let a = root.get("a").unwrap();
        assert_eq!(a.get("x").unwrap().value(), &json!(1));
        assert_eq!(a.get("y").unwrap().value(), &json!(3));
        assert_eq!(root.get("b").unwrap().value(), &json!(2));
        assert_eq!(root.get("c").unwrap().value(), &json!("default"));
        assert_eq!(
            root.to_json(),
            json!({"a": {"x": 1, "y": 3}, "b": 2, "c": "default"})
        );
    }

    #[test]
    fn lookup_follows_keys_and_indexes() {
        let data = Data::new(json!({"items": [{"name": "one"}]}));
        let path = [
            Segment::Key("items".into()),
            Segment::Index(0),
            Segment::Key("name".into()),
        ];
        assert_eq!(data.lookup(&path).unwrap().value(), &json!("one"));
        assert_eq!(path_to_string(&path), "items[0].name");
        assert!(data.lookup(&[Segment::Key("nope".into())]).is_none());
    }

    #[test]
    fn dotted_keys_nest() {
        let mut map = Map::new();
        insert_dotted(&mut map, "a.b", json!(1), false);
        insert_dotted(&mut map, "a.b", json!(2), false);
        insert_dotted(&mut map, "a.b.c", json!(3), false);
        assert_eq!(Value::Object(map.clone()), json!({"a": {"b": 1}}));
        insert_dotted(&mut map, "a.b.c", json!(3), true);
        assert_eq!(Value::Object(map), json!({"a": {"b": {"c": 3}}}));
    }

    #[test]
    fn data_text_formats() {
        assert_eq!(parse_text("a: 1\n", None, "-").unwrap(), json!({"a": 1}));
        assert_eq!(
            parse_text("{\"a\": 1.0}", None, "-").unwrap(),
            json!({"a": 1.0})
        );
        let error = parse_text("{\n  \"a\": }", None, "d.json").unwrap_err();
        assert_eq!(error.class(), ErrorClass::Input);
        assert_eq!(error.location().map(|at| at.line), Some(2));
    }

    #[test]
    fn duplicate_keys_are_errors_in_json_and_yaml_alike() {
        let json = parse_text("{\"a\": {\"b\": 1,\n  \"b\": 2}}", None, "d.json").unwrap_err();
        let yaml = parse_text("a:\n  b: 1\n  b: 2\n", None, "d.yaml").unwrap_err();
        for (error, format, line) in [(json, "JSON", 2), (yaml, "YAML", 3)] {
            assert_eq!(error.class(), ErrorClass::Input);
            assert_eq!(
                error.message(),
                format!("invalid {format}: duplicate key \"b\" in a (a key may appear once in a mapping)")
            );
            assert_eq!(error.location().map(|at| at.line), Some(line), "{format}");
        }
        // A YAML merge key gives way to the mapping's own keys: not a duplicate.
        let merged =
            parse_text("base: &b {x: 1, y: 1}\nm:\n  <<: *b\n  x: 2\n", None, "-").unwrap();
        assert_eq!(merged["m"], serde_json::json!({"x": 2, "y": 1}));
    }
}

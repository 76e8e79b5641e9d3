//! JSON and YAML text into a [`Value`], with two rules serde_json's own
//! `Value` lacks:
//!
//! - a key may appear once in a mapping. serde_json keeps the last of two
//!   equal keys without a word; YAML forbids them. Both formats go through
//!   the same visitor here, so both refuse a duplicate key with the same
//!   message, naming the mapping's path in the data;
//! - an integer literal too large for 64 bits keeps its digits, as a
//!   string (a `Value` number is a 64-bit integer or a double). Both
//!   readers hand such a literal over as a double; when one is seen, its
//!   text is found again: for JSON, as the n-th number literal of the text
//!   (numbers reach the value in text order); for YAML, by a second reading
//!   that keeps each value's place in the text (aliases and merge keys
//!   reorder values). Texts without one pay nothing;
//! - YAML numbers are the YAML 1.2 core schema's: the YAML reader makes
//!   `0123` the float 123.0 and `0b101`, `0X1F` integers; a text with an
//!   integral float or such a prefix is read again with each value's place,
//!   and each number is held to its literal ([`core_number`]).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use serde_saphyr::budget::BudgetBreach;

/// Parses JSON text (a single value, whitespace around it).
pub(crate) fn json(text: &str) -> Result<Value, serde_json::Error> {
    json_keeping(text, None)
}

/// [`json`], building only the top-level keys `keep` accepts (when given):
/// the others are read, never built, and left null.
pub(crate) fn json_keeping(text: &str, keep: Option<Keep<'_>>) -> Result<Value, serde_json::Error> {
    let failed = Failed::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let mut value = Node::root(&failed, keep).deserialize(&mut deserializer)?;
    deserializer.end()?;
    if failed.wide.get() && keep.is_some() {
        // The fix-up below pairs numbers with the text's literals in order:
        // it needs every value. A rare case: read it all, then drop.
        let mut value = json_keeping(text, None)?;
        retain_root(&mut value, keep);
        return Ok(value);
    }
    if failed.wide.get() {
        // Numbers reach the value in the order the text holds them (keys
        // keep their order, and a key twice is an error): the n-th number
        // of the value is the n-th number of the text.
        let literals = json_numbers(text);
        let mut literals = literals.iter().copied();
        keep_wide_integers(&mut value, &mut literals);
    }
    Ok(value)
}

/// A double as data. JSON has no NaN or infinity (YAML's `.nan`, `.inf`;
/// JSON text cannot hold them): those are the text Go prints for the
/// float yaml.v3 reads, as a string.
fn float_value(value: f64) -> Value {
    match Number::from_f64(value) {
        Some(number) => Value::Number(number),
        None if value.is_nan() => Value::String("NaN".into()),
        None if value > 0.0 => Value::String("+Inf".into()),
        None => Value::String("-Inf".into()),
    }
}

/// Whether `value`, read as a double, may be an integer literal too large
/// for 64 bits (serde_json and serde-saphyr read those as doubles).
fn maybe_wide_integer(value: f64) -> bool {
    value.fract() == 0.0 && value.abs() >= 9_223_372_036_854_775_808.0
}

/// Whether `text` is an integer literal: a sign, then digits (YAML also
/// allows `_` between them).
fn integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
}

/// The number literals of JSON `text` (which parsed), in order.
fn json_numbers(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut numbers = Vec::new();
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'"' => {
                at += 1;
                while let Some(&byte) = bytes.get(at) {
                    at += match byte {
                        b'\\' => 2,
                        b'"' => break,
                        _ => 1,
                    };
                }
                at += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = at;
                while bytes
                    .get(at)
                    .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                {
                    at += 1;
                }
                numbers.push(text.get(start..at).unwrap_or_default());
            }
            _ => at += 1,
        }
    }
    numbers
}

/// Walks `value` in document order and gives each number whose literal is
/// an integer too large for 64 bits that literal, as a string.
fn keep_wide_integers<'t>(value: &mut Value, literals: &mut impl Iterator<Item = &'t str>) {
    match value {
        Value::Number(number) => {
            let literal = literals.next().unwrap_or_default();
            if number.is_f64()
                && number.as_f64().is_some_and(maybe_wide_integer)
                && integer_literal(literal)
            {
                *value = Value::String(literal.to_string());
            }
        }
        Value::Array(items) => {
            for item in items {
                keep_wide_integers(item, literals);
            }
        }
        Value::Object(map) => {
            for item in map.values_mut() {
                keep_wide_integers(item, literals);
            }
        }
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// Parses one YAML document with `options` (whose duplicate-key policy
/// should be `Error`: the YAML reader knows merge keys, and where the
/// duplicate key is). On failure: the line, the column and the message
/// (a duplicate key's names its mapping, as a JSON duplicate's does).
pub(crate) fn yaml(
    text: &str,
    options: serde_saphyr::Options,
    keep: Option<Keep<'_>>,
) -> Result<Value, (usize, usize, String)> {
    let failed = Failed::default();
    let first = serde_saphyr::with_deserializer_from_str_with_options(
        text,
        options.clone(),
        |deserializer| Node::root(&failed, keep).deserialize(deserializer),
    );
    let read = match first {
        // An integer too large for 64 bits, or a float that may be a core
        // integer (`0123`), or a number the core schema reads as text
        // (`0b101`): read the text again with each value's place in it, to
        // hold each number to its literal.
        Ok(_) if failed.wide.get() || failed.integral.get() || non_core_prefix(text) => {
            serde_saphyr::with_deserializer_from_str_with_options(text, options, |deserializer| {
                serde_saphyr::Spanned::<Exact>::deserialize(deserializer)
            })
            .map(|spanned| {
                let mut value = exact_value(spanned, text);
                retain_root(&mut value, keep);
                value
            })
        }
        other => other,
    };
    read.map_err(|error| {
        let (line, column) = error
            .location()
            .map_or((1, 1), |at| (at.line() as usize, at.column() as usize));
        let message = match innermost(&error) {
            serde_saphyr::Error::DuplicateMappingKey { key: Some(key), .. } => {
                let place = failed.place.borrow_mut().take().unwrap_or_default();
                duplicate_key(&place, key)
            }
            serde_saphyr::Error::AliasReplayLimitExceeded { .. }
            | serde_saphyr::Error::Budget {
                breach: BudgetBreach::RecordedAnchorEvents { .. },
                ..
            } => format!(
                "its aliases expand to more than {} values beyond the file's own (an alias bomb?)",
                super::YAML_ALIAS_VALUES
            ),
            serde_saphyr::Error::Budget {
                breach: BudgetBreach::ScalarBytes { .. } | BudgetBreach::RecordedAnchorBytes { .. },
                ..
            } => format!(
                "its aliases expand to more than {} of text beyond the file's own (an alias bomb?)",
                crate::limits::describe_bytes(super::YAML_ALIAS_BYTES)
            ),
            serde_saphyr::Error::Budget {
                breach: BudgetBreach::Depth { .. },
                ..
            } => format!("it nests deeper than {} levels", super::MAX_YAML_DEPTH),
            serde_saphyr::Error::Budget { .. } => {
                "it is too large or too complex to read (the YAML reader's own bound)".to_string()
            }
            _ => {
                let message = error.without_snippet().to_string();
                let message = message.lines().next().unwrap_or("invalid YAML");
                // The position is reported separately, counted in the real file.
                let message = match message.rfind(" at line ") {
                    Some(cut) => &message[..cut],
                    None => message,
                };
                plain_words(message)
            }
        };
        (
            line.max(1),
            column.max(1),
            format!("invalid YAML: {message}"),
        )
    })
}

/// The YAML reader's `message`, in words for whoever wrote the file: the
/// few that speak of the reader's own API or Rust types are put another
/// way.
fn plain_words(message: &str) -> String {
    if message.starts_with("multiple YAML documents") {
        "the text holds more than one YAML document (a `---` line after the first value): data is one document".into()
    } else if let Some(ty) = message.strip_prefix("invalid ") {
        match ty {
            "u64" | "i64" | "u128" | "i128" | "f64" => {
                "a scalar tagged as a number (`!!int`, `!!float`) is not one".into()
            }
            _ => message.to_string(),
        }
    } else if message == "expected string scalar" {
        "a mapping key must be text, not a list or a mapping".into()
    } else {
        message.to_string()
    }
}

/// Whether `text` may hold a plain number the YAML reader accepts and the
/// core schema does not (`0b101`, `0X1F`, `0O17`, a signed `-0x1F`).
fn non_core_prefix(text: &str) -> bool {
    ["0b", "0B", "0X", "0O", "-0x", "+0x", "-0o", "+0o"]
        .iter()
        .any(|prefix| text.contains(prefix))
}

/// A YAML number as the core schema reads its plain `literal`: a decimal
/// integer (`0123` is 123, leading zeros and all; one too large for 64 bits
/// keeps its digits, as a string), `0o17` and `0x1F` as read, a float as
/// read, and anything else the reader made a number (`0b101`, `0X1F`,
/// `-0x1F`) the text it is.
fn core_number(number: Number, literal: Option<&str>) -> Value {
    let Some(literal) = literal else {
        return Value::Number(number);
    };
    let (sign, digits) = match literal.strip_prefix(['-', '+']) {
        Some(rest) => (&literal[..1], rest),
        None => ("", literal),
    };
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let trimmed = digits.trim_start_matches('0');
        let trimmed = if trimmed.is_empty() { "0" } else { trimmed };
        let negative = sign == "-";
        let parsed = if negative {
            format!("-{trimmed}").parse::<i64>().ok().map(Number::from)
        } else {
            trimmed.parse::<u64>().ok().map(Number::from)
        };
        return match parsed {
            Some(number) => Value::Number(number),
            None => Value::String(literal.to_string()),
        };
    }
    let radix = |prefix: &str, valid: fn(u8) -> bool| {
        literal
            .strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(valid))
    };
    if radix("0o", |b| matches!(b, b'0'..=b'7')) || radix("0x", |b| b.is_ascii_hexdigit()) {
        return Value::Number(number);
    }
    if core_float(literal) {
        return Value::Number(number);
    }
    Value::String(literal.to_string())
}

/// Whether the scalar at byte `at` of `text` has a tag (`!!float 1`,
/// `!!int &a 012`): the last word before it, past an anchor, starts with `!`.
fn tagged(text: &str, at: usize) -> bool {
    let before = text.get(..at).unwrap_or_default();
    let mut words = before
        .rsplit([' ', '\t', '\n', '\r'])
        .filter(|word| !word.is_empty());
    let mut word = words.next();
    if word.is_some_and(|word| word.starts_with('&')) {
        word = words.next();
    }
    word.is_some_and(|word| word.starts_with('!'))
}

/// Whether `literal` is a float of the core schema:
/// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`.
fn core_float(literal: &str) -> bool {
    let digits = |text: &str| text.bytes().take_while(u8::is_ascii_digit).count();
    let rest = literal.strip_prefix(['-', '+']).unwrap_or(literal);
    let whole = digits(rest);
    let mut rest = &rest[whole..];
    if let Some(after) = rest.strip_prefix('.') {
        let fraction = digits(after);
        if whole == 0 && fraction == 0 {
            return false;
        }
        rest = &after[fraction..];
    } else if whole == 0 {
        return false;
    }
    match rest.strip_prefix(['e', 'E']) {
        None => rest.is_empty(),
        Some(exponent) => {
            let exponent = exponent.strip_prefix(['-', '+']).unwrap_or(exponent);
            !exponent.is_empty() && digits(exponent) == exponent.len()
        }
    }
}

/// The error a YAML error wraps (in an alias, with a snippet), if any.
fn innermost(mut error: &serde_saphyr::Error) -> &serde_saphyr::Error {
    while let serde_saphyr::Error::AliasError { error: inner, .. }
    | serde_saphyr::Error::WithSnippet { error: inner, .. } = error
    {
        error = inner;
    }
    error
}

/// A YAML value read with its place in the text (the second reading of a
/// text with an integer too large for 64 bits). Its children are
/// [`serde_saphyr::Spanned`]; [`exact_value`] makes the value.
struct Exact(ExactNode);

enum ExactNode {
    Scalar(Value),
    Seq(Vec<serde_saphyr::Spanned<Exact>>),
    Map(Vec<(String, serde_saphyr::Spanned<Exact>)>),
}

impl<'de> Deserialize<'de> for Exact {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Exact, D::Error> {
        deserializer.deserialize_any(ExactVisitor)
    }
}

struct ExactVisitor;

impl<'de> Visitor<'de> for ExactVisitor {
    type Value = Exact;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-shaped value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Exact, E> {
        Ok(Exact(ExactNode::Scalar(Value::Bool(value))))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Exact, E> {
        Ok(Exact(ExactNode::Scalar(Value::Number(value.into()))))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Exact, E> {
        Ok(Exact(ExactNode::Scalar(Value::Number(value.into()))))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Exact, E> {
        Ok(Exact(ExactNode::Scalar(float_value(value))))
    }

    fn visit_str<E>(self, value: &str) -> Result<Exact, E> {
        Ok(Exact(ExactNode::Scalar(Value::String(value.to_string()))))
    }

    fn visit_string<E>(self, value: String) -> Result<Exact, E> {
        Ok(Exact(ExactNode::Scalar(Value::String(value))))
    }

    fn visit_none<E>(self) -> Result<Exact, E> {
        Ok(Exact(ExactNode::Scalar(Value::Null)))
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Exact, D::Error> {
        Exact::deserialize(deserializer)
    }

    fn visit_unit<E>(self) -> Result<Exact, E> {
        Ok(Exact(ExactNode::Scalar(Value::Null)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Exact, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Exact(ExactNode::Seq(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Exact, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = access.next_key_seed(Key)? {
            entries.push((key, access.next_value()?));
        }
        Ok(Exact(ExactNode::Map(entries)))
    }
}

/// The value of `spanned`, each integer literal too large for 64 bits kept
/// as its text (read from `text` where the YAML reader found it), each
/// number held to the core schema ([`core_number`]).
fn exact_value(spanned: serde_saphyr::Spanned<Exact>, text: &str) -> Value {
    match spanned.value.0 {
        ExactNode::Scalar(Value::Number(number)) => {
            let span = spanned.defined.span();
            let place = span
                .byte_offset()
                .zip(span.byte_len())
                .and_then(|(at, len)| {
                    let at = usize::try_from(at).ok()?;
                    Some((
                        at,
                        text.get(at..at.checked_add(usize::try_from(len).ok()?)?)?,
                    ))
                });
            match place {
                // `!!float 1`: the tag, not the literal, says what it is.
                Some((at, _)) if tagged(text, at) => Value::Number(number),
                place => core_number(number, place.map(|(_, literal)| literal.trim())),
            }
        }
        ExactNode::Scalar(value) => value,
        ExactNode::Seq(items) => Value::Array(
            items
                .into_iter()
                .map(|item| exact_value(item, text))
                .collect(),
        ),
        ExactNode::Map(entries) => Value::Object(
            entries
                .into_iter()
                .map(|(key, item)| (key, exact_value(item, text)))
                .collect(),
        ),
    }
}

/// What one reading of a text notes on the way: the path of the innermost
/// mapping whose next key failed to read (the YAML reader's duplicate key),
/// kept for the message, and whether a number may be an integer too large
/// for 64 bits (read as a double, its digits lost).
#[derive(Default)]
struct Failed {
    place: RefCell<Option<String>>,
    wide: std::cell::Cell<bool>,
    /// A YAML number read as a float with no fraction: the core schema may
    /// say it is an integer (`0123`).
    integral: std::cell::Cell<bool>,
    /// How many values were built so far (bounded by
    /// [`super::MAX_DATA_VALUES`]).
    values: std::cell::Cell<usize>,
}

impl Failed {
    /// Counts one more value built: past [`super::MAX_DATA_VALUES`], the
    /// error that stops the reading (a text of many tiny values would
    /// otherwise take some 16 times its size in memory, or more).
    fn count<E: de::Error>(&self) -> Result<(), E> {
        let values = self.values.get() + 1;
        self.values.set(values);
        if values > super::MAX_DATA_VALUES {
            return Err(E::custom(too_many_values()));
        }
        Ok(())
    }

    fn mark(&self, place: &Place<'_>) {
        let mut failed = self.place.borrow_mut();
        if failed.is_none() {
            *failed = Some(place.to_string());
        }
    }
}

/// Where a value sits in the document, for messages: a chain of keys and
/// indexes kept on the stack, so parsing allocates nothing for it.
#[derive(Clone, Copy)]
enum Place<'a> {
    Root,
    Key(&'a Place<'a>, &'a str),
    Index(&'a Place<'a>, usize),
}

impl fmt::Display for Place<'_> {
    /// `issue.labels[0]`, as a template author writes the path.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Root => Ok(()),
            Place::Key(Place::Root, key) => f.write_str(key),
            Place::Key(parent, key) => write!(f, "{parent}.{key}"),
            Place::Index(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

/// The message for a key seen twice in the mapping at `place` (the path
/// text, empty at the top).
fn duplicate_key(place: &str, key: &str) -> String {
    if place.is_empty() {
        format!("duplicate key \"{key}\" (a key may appear once in a mapping)")
    } else {
        format!("duplicate key \"{key}\" in {place} (a key may appear once in a mapping)")
    }
}

/// Which top-level keys of a document to build (the others are read but
/// left null): those a template may read.
pub(crate) type Keep<'a> = &'a dyn Fn(&str) -> bool;

/// Empties the values of the top-level keys `keep` refuses, as a reading
/// with `keep` leaves them.
fn retain_root(value: &mut Value, keep: Option<Keep<'_>>) {
    if let (Value::Object(map), Some(keep)) = (value, keep) {
        for (key, value) in map.iter_mut() {
            if !keep(key) {
                *value = Value::Null;
            }
        }
    }
}

/// Builds the value at one place of the document.
struct Node<'a> {
    place: Place<'a>,
    failed: &'a Failed,
    /// At the top: which keys to build.
    keep: Option<Keep<'a>>,
}

impl<'a> Node<'a> {
    fn root(failed: &'a Failed, keep: Option<Keep<'a>>) -> Node<'a> {
        Node {
            place: Place::Root,
            failed,
            keep,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.failed.count::<D::Error>()?;
        deserializer.deserialize_any(self)
    }
}

/// The message for data of more than [`super::MAX_DATA_VALUES`] values.
fn too_many_values() -> String {
    format!(
        "it holds more than {} values (lists, maps, and the strings, numbers and nulls in them), the most data may hold (MAX_DATA_VALUES)",
        super::MAX_DATA_VALUES
    )
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-shaped value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_i128<E: de::Error>(self, value: i128) -> Result<Value, E> {
        Number::deserialize(de::value::I128Deserializer::new(value)).map(Value::Number)
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<Value, E> {
        Number::deserialize(de::value::U128Deserializer::new(value)).map(Value::Number)
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        if maybe_wide_integer(value) {
            self.failed.wide.set(true);
        }
        if value.fract() == 0.0 {
            self.failed.integral.set(true);
        }
        Ok(float_value(value))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Node {
            place: Place::Index(&self.place, items.len()),
            failed: self.failed,
            keep: None,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        loop {
            let key = match access.next_key_seed(Key) {
                Ok(Some(key)) => key,
                Ok(None) => break,
                Err(error) => {
                    self.failed.mark(&self.place);
                    return Err(error);
                }
            };
            let skip = self.keep.is_some_and(|keep| !keep(&key));
            match map.entry(key) {
                Entry::Occupied(entry) => {
                    let place = self.place.to_string();
                    return Err(de::Error::custom(duplicate_key(&place, entry.key())));
                }
                Entry::Vacant(entry) if skip => {
                    // Read (valid text, a key once) but not built; the key
                    // stays, null, for the did-you-mean of a misspelled name.
                    access.next_value_seed(Skip {
                        place: Place::Key(&self.place, entry.key()),
                    })?;
                    entry.insert(Value::Null);
                }
                Entry::Vacant(entry) => {
                    let value = access.next_value_seed(Node {
                        place: Place::Key(&self.place, entry.key()),
                        failed: self.failed,
                        keep: None,
                    })?;
                    entry.insert(value);
                }
            }
        }
        Ok(Value::Object(map))
    }
}

/// Reads a value without building it, checking what building would: a key
/// once per mapping (only the keys of the mapping being read are kept).
struct Skip<'a> {
    place: Place<'a>,
}

impl<'de> DeserializeSeed<'de> for Skip<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-shaped value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }

    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while seq
            .next_element_seed(Skip {
                place: Place::Index(&self.place, index),
            })?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        // Keys borrowed from the text where they can be; most mappings are
        // small, so a list is searched until it grows long.
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        let mut many: std::collections::HashSet<Cow<'de, str>> = Default::default();
        while let Some(key) = access.next_key_seed(BorrowedKey)? {
            let seen = if many.is_empty() {
                keys.contains(&key)
            } else {
                many.contains(&key)
            };
            if seen {
                let place = self.place.to_string();
                return Err(de::Error::custom(duplicate_key(&place, &key)));
            }
            access.next_value_seed(Skip {
                place: Place::Key(&self.place, &key),
            })?;
            if many.is_empty() && keys.len() < 32 {
                keys.push(key);
            } else {
                many.extend(keys.drain(..));
                many.insert(key);
            }
        }
        Ok(())
    }
}

/// A mapping key, borrowed from the text when it has no escapes.
struct BorrowedKey;

impl<'de> DeserializeSeed<'de> for BorrowedKey {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for BorrowedKey {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(key))
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key.to_string()))
    }

    fn visit_string<E>(self, key: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key))
    }
}

/// A mapping key, as text.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for Key {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E>(self, key: &str) -> Result<String, E> {
        Ok(key.to_string())
    }

    fn visit_string<E>(self, key: String) -> Result<String, E> {
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_builds_what_serde_json_builds() {
        let text =
            r#"{"a": [1, -2, 3.5, 18446744073709551615, "x", null, true, {}], "b": {"c": []}}"#;
        assert_eq!(
            json(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert!(json("{} {}").is_err(), "one value only");
    }

    #[test]
    fn duplicate_keys_name_their_mapping() {
        let error = json("{\"a\": 1,\n \"a\": 2}").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("duplicate key \"a\" (a key may"),
            "{error}"
        );
        assert_eq!(error.line(), 2);
        let error = json(r#"{"issue": {"labels": [{"name": 1, "name": 2}]}}"#).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("duplicate key \"name\" in issue.labels[0] (a key"),
            "{error}"
        );
        // Equal keys in different mappings are not duplicates.
        assert_eq!(
            json(r#"{"a": {"x": 1}, "b": {"x": 2}}"#).unwrap(),
            json!({"a": {"x": 1}, "b": {"x": 2}})
        );
    }

    #[test]
    fn keys_a_template_cannot_read_are_read_but_not_built() {
        let keep = |key: &str| key == "title";
        let text = r#"{"title": "t", "items": [{"id": 1}, {"id": 2}], "n": 18446744073709551616}"#;
        assert_eq!(
            json_keeping(text, Some(&keep)).unwrap(),
            json!({"title": "t", "items": null, "n": null})
        );
        // What is skipped is still checked.
        let error = json_keeping(
            r#"{"title": 1, "items": [1, {"a": 1, "a": 2}]}"#,
            Some(&keep),
        )
        .unwrap_err();
        assert!(error.to_string().contains("duplicate key"), "{error}");
        assert!(json_keeping(r#"{"title": 1, "items": [1,, 2]}"#, Some(&keep)).is_err());
        assert!(json_keeping(r#"{"title": 1, "items": 1, "items": 2}"#, Some(&keep)).is_err());
        // A wide integer in a kept value keeps its digits though others
        // were skipped.
        let wide = r#"{"skip": [1, 2, 3], "title": 12345678901234567890123}"#;
        assert_eq!(
            json_keeping(wide, Some(&keep)).unwrap(),
            json!({"skip": null, "title": "12345678901234567890123"})
        );
        let yaml_text = "title: t\nitems:\n  - id: 1\n";
        assert_eq!(
            yaml(
                yaml_text,
                crate::data::tests_yaml_options(yaml_text),
                Some(&keep)
            )
            .unwrap(),
            json!({"title": "t", "items": null})
        );
    }

    fn read_yaml(text: &str) -> Value {
        yaml(text, crate::data::tests_yaml_options(text), None).unwrap()
    }

    /// The YAML 1.2 core schema's table (YAML 1.2.2, 10.3.2); ruamel.yaml
    /// 0.19.1 reads each the same but `0b101` and `1_000` (numbers there).
    #[test]
    fn numbers_are_the_core_schema_s() {
        let text = "a: 0123\nb: 0o17\nc: 0x1F\nd: -0123\ne: 0b101\nf: 1_000\ng: 0X1F\n\
                    h: 08\ni: 1.0\nj: !!float 1\nk: !!float &x 2\nl: [007, 1e3, +0x1F]\n\
                    m: 00\nn: '0123'\no: 000012345678901234567890123\n";
        assert_eq!(
            read_yaml(text),
            json!({
                "a": 123, "b": 15, "c": 31, "d": -123, "e": "0b101", "f": "1_000",
                "g": "0X1F", "h": 8, "i": 1.0, "j": 1.0, "k": 2.0,
                "l": [7, 1000.0, "+0x1F"], "m": 0, "n": "0123",
                "o": "000012345678901234567890123",
            })
        );
        // Kept keys only: the same reading.
        let keep = |key: &str| key == "a";
        assert_eq!(
            yaml(
                "a: 0123\nb: [1]\n",
                crate::data::tests_yaml_options(""),
                Some(&keep)
            )
            .unwrap(),
            json!({"a": 123, "b": null})
        );
    }

    fn yaml_error(text: &str) -> String {
        yaml(text, crate::data::tests_yaml_options(text), None)
            .unwrap_err()
            .2
    }

    /// Errors say what is wrong with the file, never the reader's Rust
    /// types or API (`Depth { depth: 65 }`, `from_str_multiple`).
    #[test]
    fn errors_are_plain_words() {
        let deep = "a: ".to_string() + &"[".repeat(70) + &"]".repeat(70);
        assert_eq!(
            yaml_error(&deep),
            "invalid YAML: it nests deeper than 64 levels"
        );
        let merges: String = (0..10_001)
            .map(|i| format!("- &a{i} {{x: 1}}\n- {{<<: *a{i}}}\n"))
            .collect();
        assert_eq!(
            yaml_error(&merges),
            "invalid YAML: it is too large or too complex to read (the YAML reader's own bound)"
        );
        assert!(yaml_error("a: 1\n---\nb: 2\n").contains("more than one YAML document"));
        assert!(yaml_error("a: !!int x").contains("is not one"));
        assert!(yaml_error("? [a]\n: 1").contains("must be text"));
        for text in [
            deep.as_str(),
            merges.as_str(),
            "a: 1\n---\nb: 2\n",
            "a: !!int x",
            "? [a]\n: 1",
            "a: [1",
            "a: *x",
            "a: !!binary 1",
        ] {
            let message = yaml_error(text);
            assert!(
                !message.contains(['{', '}']) && !message.contains("from_str"),
                "{message}"
            );
        }
    }

    #[test]
    fn core_floats() {
        for yes in ["1.5", ".5", "1.", "-1e3", "+1.5E-3", "0.0"] {
            assert!(core_float(yes), "{yes}");
        }
        for no in [".", "e3", "1e", "1.5.5", "0x1F", "1_0.0", "+", ""] {
            assert!(!core_float(no), "{no}");
        }
    }
}

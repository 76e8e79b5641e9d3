//! The `tojson` filter as `transformers` defines it for chat templates:
//! Python's `json.dumps(value, ensure_ascii=False, indent=None,
//! separators=None, sort_keys=False)`, without Jinja2's HTML escaping.
//!
//! It writes minijinja values directly (teleprompt's data objects are
//! walked like any list or map), so floats stay floats (`1.0`), integers of
//! any size stay exact, and `NaN`/`Infinity` print as Python prints them,
//! none of which a `serde_json::Value` could carry.

use std::cmp::Ordering;

use minijinja::value::{Kwargs, Rest, ValueKind};
use minijinja::{ErrorKind, Value as JValue};

use super::{float_repr, nesting_error, Out, MAX_NESTING};
use crate::engine::flavor::jinja::{Indent, JsonOptions, JsonRef};

/// What `json.dumps` was asked for.
#[derive(Debug)]
struct Dumps {
    ensure_ascii: bool,
    /// `None` writes everything on one line.
    indent: Option<Indention>,
    item_separator: String,
    key_separator: String,
    sort_keys: bool,
}

/// One level of indentation: a number of spaces or a string, as Python's
/// `indent` and Jinja2's `indent(width)` take it.
#[derive(Debug, Clone)]
pub(super) enum Indention {
    Spaces(usize),
    Text(String),
}

impl Indention {
    /// Reads an `indent` argument: an integer (spaces; none below 1), a
    /// boolean (0 or 1 space, as Python multiplies it) or a string.
    pub(super) fn from_value(value: &JValue, what: &str) -> Result<Indention, minijinja::Error> {
        if let Some(text) = value.as_str() {
            return Ok(Indention::Text(text.to_string()));
        }
        if value.kind() == ValueKind::Bool {
            return Ok(Indention::Spaces(usize::from(value.is_true())));
        }
        if value.is_integer() {
            let count = i128::try_from(value.clone()).unwrap_or(0);
            return Ok(Indention::Spaces(
                usize::try_from(count.max(0)).unwrap_or(usize::MAX),
            ));
        }
        Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "{what} must be an integer or a string, not {}",
                value.kind()
            ),
        ))
    }

    /// Writes the indentation `levels` times.
    pub(super) fn write(&self, out: &mut Out, levels: usize) -> Result<(), minijinja::Error> {
        match self {
            Indention::Spaces(count) => out.push_repeated(" ", count.saturating_mul(levels)),
            Indention::Text(text) => out.push_repeated(text, levels),
        }
    }
}

/// `tojson` in a Hugging Face chat template: `transformers`' signature,
/// `tojson(ensure_ascii=False, indent=None, separators=None,
/// sort_keys=False)`, positionally or by name (so `tojson(4)` asks for
/// ASCII output, not an indent, as in `transformers`).
pub(super) fn tojson_transformers(
    value: &JValue,
    args: Rest<JValue>,
    kwargs: Kwargs,
) -> Result<String, minijinja::Error> {
    let [ensure_ascii, indent, separators, sort_keys] = super::positional::<4>(&args, "tojson")?;
    let ensure_ascii = argument(ensure_ascii, &kwargs, "ensure_ascii")?;
    let indent = argument(indent, &kwargs, "indent")?;
    let separators = argument(separators, &kwargs, "separators")?;
    let sort_keys = argument(sort_keys, &kwargs, "sort_keys")?;
    kwargs.assert_all_used()?;
    charged(
        value,
        dumps(
            value,
            &options(ensure_ascii, indent, separators, sort_keys)?,
        ),
    )
}

/// `tojson` in Jinja and Django syntax: the same `json.dumps` as in chat
/// templates, with Jinja2's own positional argument, `tojson(indent)`, and
/// the other options by name.
pub(super) fn tojson_jinja(
    value: &JValue,
    indent: Option<JValue>,
    kwargs: Kwargs,
) -> Result<String, minijinja::Error> {
    let indent = argument(indent, &kwargs, "indent")?;
    let ensure_ascii = kwargs.get::<Option<JValue>>("ensure_ascii")?;
    let separators = kwargs.get::<Option<JValue>>("separators")?;
    let sort_keys = kwargs.get::<Option<JValue>>("sort_keys")?;
    kwargs.assert_all_used()?;
    charged(
        value,
        dumps(
            value,
            &options(ensure_ascii, indent, separators, sort_keys)?,
        ),
    )
}

/// `tojson` of a value of the data, for the engine (the direct path):
/// the same text as the filter, from the options the template gave.
pub(in crate::syntax::jinja) fn tojson_data(
    value: JsonRef<'_>,
    given: &JsonOptions<'_>,
) -> std::result::Result<String, String> {
    let indent = given.indent.as_ref().map(|indent| match indent {
        Indent::Spaces(count) => JValue::from(*count),
        Indent::Text(text) => JValue::from(*text),
    });
    let options = options(
        Some(JValue::from(given.ensure_ascii)),
        indent,
        None,
        Some(JValue::from(given.sort_keys)),
    )
    .map_err(|error| error.to_string())?;
    // The data as it is, written as `write_value` writes minijinja's.
    let mut out = String::new();
    match value {
        JsonRef::Value(json) => write_json(&mut out, json, &options, 0)?,
        JsonRef::Items(items) => write_items(&mut out, items, &options, 0)?,
    }
    Ok(out)
}

/// [`write_value`] of a value of the data.
fn write_json(
    out: &mut String,
    value: &serde_json::Value,
    options: &Dumps,
    depth: usize,
) -> std::result::Result<(), String> {
    use serde_json::Value as Json;
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Json::Number(number) => match (number.as_i64(), number.as_u64(), number.as_f64()) {
            (Some(int), _, _) => out.push_str(&int.to_string()),
            (None, Some(int), _) => out.push_str(&int.to_string()),
            (None, None, Some(float)) if float.is_finite() => out.push_str(&float_repr(float)),
            _ => return Err("a number Python's json cannot write".into()),
        },
        Json::String(text) => escape_json(out, text, options.ensure_ascii),
        Json::Array(items) => write_items(out, items, options, depth)?,
        Json::Object(map) => {
            if depth >= MAX_NESTING {
                return Err(nesting_error("tojson").to_string());
            }
            let mut keys: Vec<&String> = map.keys().collect();
            if options.sort_keys {
                keys.sort();
            }
            out.push('{');
            for (index, key) in keys.iter().enumerate() {
                if index > 0 {
                    out.push_str(&options.item_separator);
                }
                json_line(out, options, depth + 1);
                escape_json(out, key, options.ensure_ascii);
                out.push_str(&options.key_separator);
                write_json(out, &map[key.as_str()], options, depth + 1)?;
            }
            if !keys.is_empty() {
                json_line(out, options, depth);
            }
            out.push('}');
        }
    }
    Ok(())
}

/// A list of the data, as [`write_json`] writes one.
fn write_items(
    out: &mut String,
    items: &[serde_json::Value],
    options: &Dumps,
    depth: usize,
) -> std::result::Result<(), String> {
    if depth >= MAX_NESTING {
        return Err(nesting_error("tojson").to_string());
    }
    out.push('[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push_str(&options.item_separator);
        }
        json_line(out, options, depth + 1);
        write_json(out, item, options, depth + 1)?;
    }
    if !items.is_empty() {
        json_line(out, options, depth);
    }
    out.push(']');
    Ok(())
}

/// [`new_line`] for [`write_json`].
fn json_line(out: &mut String, options: &Dumps, depth: usize) {
    match &options.indent {
        Some(Indention::Spaces(count)) => {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', count.saturating_mul(depth)));
        }
        Some(Indention::Text(text)) => {
            out.push('\n');
            for _ in 0..depth {
                out.push_str(text);
            }
        }
        None => {}
    }
}

/// The JSON text made, its items and bytes counted as the work of
/// walking the value (`tojson` of the whole data on every pass of a loop
/// over it).
fn charged(
    value: &JValue,
    json: Result<String, minijinja::Error>,
) -> Result<String, minijinja::Error> {
    let json = json?;
    let items = if value.as_str().is_some() {
        0
    } else {
        value.len().unwrap_or(0)
    };
    crate::syntax::jinja::work::charge(items, json.len())?;
    Ok(json)
}

/// An argument given by position or by name (not both, as in Python).
fn argument(
    positional: Option<JValue>,
    kwargs: &Kwargs,
    name: &str,
) -> Result<Option<JValue>, minijinja::Error> {
    // Without keyword arguments (most calls) nothing is named: no lookup,
    // and no copy of the name into the set of those used.
    let named = match kwargs.args().next() {
        None => None,
        Some(_) => kwargs.get::<Option<JValue>>(name)?,
    };
    match (positional, named) {
        (Some(_), Some(_)) => Err(minijinja::Error::new(
            ErrorKind::TooManyArguments,
            format!("tojson got multiple values for argument '{name}'"),
        )),
        (positional, named) => Ok(positional.or(named)),
    }
}

/// The options from the filter's arguments (`none` is the default).
fn options(
    ensure_ascii: Option<JValue>,
    indent: Option<JValue>,
    separators: Option<JValue>,
    sort_keys: Option<JValue>,
) -> Result<Dumps, minijinja::Error> {
    let indent = match indent.filter(|value| !value.is_none() && !value.is_undefined()) {
        Some(indent) => Some(Indention::from_value(&indent, "tojson's indent")?),
        None => None,
    };
    let (item_separator, key_separator) =
        match separators.filter(|value| !value.is_none() && !value.is_undefined()) {
            Some(separators) => separator_pair(&separators)?,
            // Python's defaults: no space at the end of a line.
            None if indent.is_some() => (",".to_string(), ": ".to_string()),
            None => (", ".to_string(), ": ".to_string()),
        };
    Ok(Dumps {
        ensure_ascii: ensure_ascii.is_some_and(|value| value.is_true()),
        indent,
        item_separator,
        key_separator,
        sort_keys: sort_keys.is_some_and(|value| value.is_true()),
    })
}

/// `separators=(ITEM, KEY)`: two strings.
fn separator_pair(value: &JValue) -> Result<(String, String), minijinja::Error> {
    let error = || {
        minijinja::Error::new(
            ErrorKind::InvalidOperation,
            "tojson's separators must be two strings, as (', ', ': ')",
        )
    };
    if !matches!(value.kind(), ValueKind::Seq) {
        return Err(error());
    }
    let mut items = value.try_iter()?;
    let (Some(item), Some(key), None) = (items.next(), items.next(), items.next()) else {
        return Err(error());
    };
    match (item.as_str(), key.as_str()) {
        (Some(item), Some(key)) => Ok((item.to_string(), key.to_string())),
        _ => Err(error()),
    }
}

/// `json.dumps(value, …)` with the options given.
fn dumps(value: &JValue, options: &Dumps) -> Result<String, minijinja::Error> {
    let mut out = Out::new();
    write_value(&mut out, value, options, 0)?;
    out.finish()
}

/// The error for a value JSON has no form for.
fn not_serializable(value: &JValue) -> minijinja::Error {
    minijinja::Error::new(
        ErrorKind::InvalidOperation,
        format!(
            "tojson: a value of type {} is not JSON serializable",
            value.kind()
        ),
    )
}

fn write_value(
    out: &mut Out,
    value: &JValue,
    options: &Dumps,
    depth: usize,
) -> Result<(), minijinja::Error> {
    if super::generator::is_generator(value) {
        // Python's own words (`json.dumps` of a generator).
        return Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            "Object of type generator is not JSON serializable",
        ));
    }
    match value.kind() {
        ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => match value.is_integer().then(|| value.as_i64()).flatten() {
            // An integer's digits, without a `String` of its own.
            Some(int) => out.push_str(itoa::Buffer::new().format(int)),
            None => out.push_str(&number(value)),
        },
        ValueKind::String => write_string(out, value.as_str().unwrap_or_default(), options),
        ValueKind::Seq | ValueKind::Iterable => {
            if depth >= MAX_NESTING {
                return Err(nesting_error("tojson"));
            }
            let mut empty = true;
            out.push('[')?;
            for item in value.try_iter()? {
                if !empty {
                    out.push_str(&options.item_separator)?;
                }
                empty = false;
                new_line(out, options, depth + 1)?;
                write_value(out, &item, options, depth + 1)?;
            }
            if !empty {
                new_line(out, options, depth)?;
            }
            out.push(']')
        }
        ValueKind::Map => {
            if depth >= MAX_NESTING {
                return Err(nesting_error("tojson"));
            }
            let mut keys: Vec<JValue> = value.try_iter()?.collect();
            if options.sort_keys {
                sort_keys(&mut keys)?;
            }
            out.push('{')?;
            for (index, key) in keys.iter().enumerate() {
                if index > 0 {
                    out.push_str(&options.item_separator)?;
                }
                new_line(out, options, depth + 1)?;
                match key.kind() {
                    ValueKind::String => {
                        write_string(out, key.as_str().unwrap_or_default(), options)?
                    }
                    _ => write_string(out, &key_text(key)?, options)?,
                }
                out.push_str(&options.key_separator)?;
                write_value(out, &value.get_item(key)?, options, depth + 1)?;
            }
            if !keys.is_empty() {
                new_line(out, options, depth)?;
            }
            out.push('}')
        }
        _ => Err(not_serializable(value)),
    }
}

/// With an indent, a line break and `depth` indentations.
fn new_line(out: &mut Out, options: &Dumps, depth: usize) -> Result<(), minijinja::Error> {
    match &options.indent {
        Some(indent) => {
            out.push('\n')?;
            indent.write(out, depth)
        }
        None => Ok(()),
    }
}

/// A number as Python's `json` writes it: integers exact, floats as
/// `repr(float)`, and `NaN`, `Infinity`, `-Infinity`.
fn number(value: &JValue) -> String {
    if value.is_integer() {
        return value.to_string();
    }
    let float = f64::try_from(value.clone()).unwrap_or(f64::NAN);
    if float.is_nan() {
        "NaN".to_string()
    } else if float.is_infinite() {
        if float < 0.0 { "-Infinity" } else { "Infinity" }.to_string()
    } else {
        float_repr(float)
    }
}

/// A map key as Python's `json` turns it into a string: strings as they
/// are, numbers as above, `true`, `false`, `null`; other keys are errors.
fn key_text(key: &JValue) -> Result<String, minijinja::Error> {
    match key.kind() {
        ValueKind::String => Ok(key.as_str().unwrap_or_default().to_string()),
        ValueKind::Number => Ok(number(key)),
        ValueKind::Bool => Ok(if key.is_true() { "true" } else { "false" }.to_string()),
        ValueKind::None => Ok("null".to_string()),
        kind => Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            format!("tojson: keys must be str, int, float, bool or None, not {kind}"),
        )),
    }
}

/// Sorts keys as Python's `sorted` does: strings by code point, numbers
/// (and booleans) by value; keys of both kinds cannot be sorted.
fn sort_keys(keys: &mut [JValue]) -> Result<(), minijinja::Error> {
    let mut mixed = false;
    keys.sort_by(|a, b| {
        let numeric = |value: &JValue| matches!(value.kind(), ValueKind::Number | ValueKind::Bool);
        match (a.as_str(), b.as_str()) {
            (Some(a), Some(b)) => a.cmp(b),
            (None, None) if numeric(a) && numeric(b) => a.cmp(b),
            _ => {
                mixed = true;
                Ordering::Equal
            }
        }
    });
    if mixed {
        return Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            "tojson(sort_keys=true) cannot order keys of different types",
        ));
    }
    Ok(())
}

/// A JSON string as Python's `json` writes it: `\"`, `\\`, `\n`, `\r`,
/// `\t`, `\b`, `\f`, other control characters as `\u00XX`, `/` as it is;
/// with `ensure_ascii` everything outside printable ASCII as `\uXXXX`
/// (two, a surrogate pair, above U+FFFF).
fn write_string(out: &mut Out, text: &str, options: &Dumps) -> Result<(), minijinja::Error> {
    out.push_with(|out| escape_json(out, text, options.ensure_ascii))
}

/// [`write_string`]'s text, into a `String`. Scans bytes: the characters
/// escaped are ASCII but for those `ensure_ascii` escapes, which start at
/// a byte above `0x7F` (the bytes after it, inside the character, are
/// skipped).
fn escape_json(out: &mut String, text: &str, ensure_ascii: bool) {
    out.reserve(text.len() + 2);
    out.push('"');
    let mut plain = 0;
    let stops = match ensure_ascii {
        true => &STOPS_ASCII,
        false => &STOPS,
    };
    for (at, byte) in text.bytes().enumerate() {
        if !stops.get(usize::from(byte)).copied().unwrap_or(true) {
            continue;
        }
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            // Other control characters, and with `ensure_ascii` DEL and
            // every character outside ASCII: `\uXXXX`, below.
            0x00..=0x1f => "",
            0x7f..=0xff if ensure_ascii => "",
            _ => continue,
        };
        // Inside a character already escaped.
        if at < plain {
            continue;
        }
        out.push_str(text.get(plain..at).unwrap_or_default());
        plain = at + 1;
        if !escape.is_empty() {
            out.push_str(escape);
            continue;
        }
        let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) else {
            continue;
        };
        plain = at + c.len_utf8();
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            push_unit(out, *unit);
        }
    }
    out.push_str(text.get(plain..).unwrap_or_default());
    out.push('"');
}

/// The bytes [`escape_json`] stops at: control characters, `"` and `\`;
/// with `ensure_ascii` also DEL and every byte above it.
static STOPS: [bool; 256] = stops(false);
static STOPS_ASCII: [bool; 256] = stops(true);

const fn stops(ensure_ascii: bool) -> [bool; 256] {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = byte < 0x20
            || byte == b'"' as usize
            || byte == b'\\' as usize
            || (ensure_ascii && byte >= 0x7f);
        byte += 1;
    }
    table
}

/// `\uXXXX`: one UTF-16 unit in four lowercase hexadecimal digits.
fn push_unit(out: &mut String, unit: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        let digit = HEX.get(usize::from((unit >> shift) & 0xf)).copied();
        out.push(char::from(digit.unwrap_or(b'0')));
    }
}

#[cfg(test)]
mod tests {
    use super::escape_json;

    /// Python's `json.dumps` of a string, one character at a time (the
    /// byte scan of `escape_json` must write the same).
    fn reference(text: &str, ensure_ascii: bool) -> String {
        let mut out = String::from('"');
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if c < ' ' => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                c if ensure_ascii && !(' '..='~').contains(&c) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    #[test]
    fn escapes_as_python_json() {
        let texts = [
            "",
            "plain",
            "\"q\" \\ /",
            "\u{0}\u{1}\u{8}\u{c}\r\n\t\u{1f} \u{7f}~",
            "é\u{200b}😀 ÿ\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}",
            "a😀\"b\u{7f}é\n",
        ];
        for text in texts {
            for ensure_ascii in [false, true] {
                let mut out = String::new();
                escape_json(&mut out, text, ensure_ascii);
                assert_eq!(
                    out,
                    reference(text, ensure_ascii),
                    "{text:?} {ensure_ascii}"
                );
            }
        }
    }
}

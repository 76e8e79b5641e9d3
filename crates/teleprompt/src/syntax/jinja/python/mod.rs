//! Values printed as Python's Jinja2 prints them.
//!
//! Hugging Face chat templates are rendered by `transformers` with Jinja2,
//! where `{{ value }}` is Python's `str(value)`, and prompts written for
//! Jinja2 expect its filters. minijinja prints most values alike, but not
//! all: a float is `1e+16` in Python and `10000000000000000.0` in
//! minijinja, `tojson` is `transformers`' `json.dumps` with its spacing,
//! `indent` keeps a trailing newline… This module is teleprompt's own
//! implementation of Python's rules (behaviour checked against CPython 3.11
//! and Jinja2 3.1.6):
//!
//! - [`display`]: `str(value)` for `{{ … }}`, the `string` filter and
//!   `join` (`repr` for the items of lists and maps);
//! - `json`: the `tojson` filter as `transformers` defines it;
//! - `indent`: Jinja2's `indent` filter;
//! - `textwrap`: Jinja2's `wordwrap` filter (Python's `textwrap.wrap`);
//! - `urlize`: Jinja2's `urlize` filter;
//! - `strftime`: `strftime_now`, as `datetime.strftime` on Linux (glibc).
//!
//! What cannot be hooked stays minijinja's: `~` concatenation and the `in`
//! test on strings print their operands with minijinja's `Display`, which
//! is Python's for strings, integers, booleans and `None` and for teleprompt's
//! data (whose objects print themselves with [`repr_lossy`]), but not for
//! floats in exponent form (`'x' ~ 1e16` is `x10000000000000000.0`, Jinja2
//! prints `x1e+16`) nor `nan`/`inf` (`NaN`), nor for lists built by the
//! template that hold such floats or strings with unusual characters.

pub(super) mod generator;
mod indent;
pub(super) mod json;
pub(super) mod markup;
pub(super) mod methods;
mod strftime;
mod textwrap;
mod urlize;

use std::borrow::Cow;

use minijinja::value::{Kwargs, Rest, ValueKind};
use minijinja::{AutoEscape, Environment, ErrorKind, State, UndefinedBehavior, Value as JValue};

use super::current;
use crate::limits::Exceeded;
use crate::options::Syntax;

pub(super) use strftime::strftime;

/// A global function under its name. minijinja prints a function as the
/// Rust path of its code (`teleprompt::syntax::jinja::…::{{closure}}`).
/// Jinja2 prints its classes (`range`, `dict`, `namespace`, `cycler`,
/// `joiner`) as `<class 'range'>`, and so does teleprompt; a function it
/// prints as `<function history at 0x7f…>`, an address no prompt can mean:
/// printed (`{{ history }}`), such a function is a render error, and made
/// a string otherwise (`~`, `upper`, `replace`) it is `<function
/// history>`, Jinja2's text without the address.
#[derive(Debug)]
pub(super) struct NamedFunction {
    name: String,
    function: JValue,
    /// Jinja2's text for a class it has under this name.
    class: Option<&'static str>,
}

/// Python's `callable(value)`: a global function or class (a
/// [`NamedFunction`]), a macro (or `caller`), a joiner. minijinja says
/// no more of an object than its kind: a macro is a map of three keys
/// (`name`, `arguments`, `caller`) that prints as `<macro NAME>`, a joiner
/// is known by its type's name. A missing value is callable too, as
/// Jinja2's `Undefined` is (calling it is the error).
pub(super) fn is_callable(value: &JValue) -> bool {
    if value.is_undefined() {
        return true;
    }
    if value.as_object().is_none() {
        return false;
    }
    match value.kind() {
        ValueKind::Plain => {
            value.downcast_object_ref::<NamedFunction>().is_some()
                || value
                    .downcast_object_ref::<super::macros::CatchingMacro>()
                    .is_some()
                || format!("{value:?}").starts_with("Joiner ")
        }
        ValueKind::Map => value.len() == Some(3) && value.to_string().starts_with("<macro "),
        _ => false,
    }
}

/// Jinja2's text of the classes among its globals.
fn jinja2_class(name: &str) -> Option<&'static str> {
    Some(match name {
        "range" => "<class 'range'>",
        "dict" => "<class 'dict'>",
        "namespace" => "<class 'jinja2.utils.Namespace'>",
        "cycler" => "<class 'jinja2.utils.Cycler'>",
        "joiner" => "<class 'jinja2.utils.Joiner'>",
        _ => return None,
    })
}

impl minijinja::value::Object for NamedFunction {
    fn repr(self: &std::sync::Arc<Self>) -> minijinja::value::ObjectRepr {
        minijinja::value::ObjectRepr::Plain
    }

    fn call(
        self: &std::sync::Arc<Self>,
        state: &mut State<'_, '_>,
        args: &[JValue],
    ) -> Result<JValue, minijinja::Error> {
        self.function.call(state, args)
    }

    fn render(self: &std::sync::Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.class {
            Some(class) => f.write_str(class),
            None => write!(f, "<function {}>", self.name),
        }
    }
}

/// Every global function of `env` as a [`NamedFunction`] (the builtins
/// `range`, `dict`, `namespace` too).
pub(super) fn name_functions(env: &mut Environment<'_>) {
    let functions: Vec<(String, JValue)> = env
        .globals()
        .filter(|(_, value)| {
            value.kind() == ValueKind::Plain
                && value.as_object().is_some()
                && value.downcast_object_ref::<NamedFunction>().is_none()
                && value.to_string().contains("::")
        })
        .map(|(name, value)| (name.to_string(), value))
        .collect();
    for (name, function) in functions {
        let named = NamedFunction {
            class: jinja2_class(&name),
            name: name.clone(),
            function,
        };
        env.add_global(name, JValue::from_object(named));
    }
}

/// The deepest nesting of lists and maps printed or serialized. Python
/// stops near 1000 levels (`RecursionError`); a namespace that holds
/// itself, the one cyclic value a template can build, ends here too.
pub(super) const MAX_NESTING: usize = 500;

/// Registers the filters whose output follows Python's: `string`, `tojson`
/// (as `transformers` defines it), `indent`, `pprint`, `wordwrap` and `urlize`. `join` is
/// registered with the collection filters (it also guards a missing value).
pub(super) fn register(env: &mut Environment<'static>, dialect: Syntax) {
    env.add_filter("string", string_filter);
    env.add_filter("pprint", pprint_filter);
    env.add_filter("indent", indent::indent_filter);
    env.add_filter("wordwrap", textwrap::wordwrap_filter);
    env.add_filter("urlize", urlize::urlize_filter);
    env.add_filter(
        "int",
        |state: &mut State, value: &JValue, args: Rest<JValue>, kwargs: Kwargs| {
            number_filter(state, value, args, kwargs, NumberFilter::Int)
        },
    );
    env.add_filter(
        "float",
        |state: &mut State, value: &JValue, args: Rest<JValue>, kwargs: Kwargs| {
            number_filter(state, value, args, kwargs, NumberFilter::Float)
        },
    );
    // Jinja2's `iterable` test is `iter(value)`: `None` is not iterable
    // (minijinja iterates it as empty), so `tools is iterable and tools |
    // length > 0` is false for `tools=None`, as `transformers` renders it.
    env.add_test("iterable", |value: &JValue| {
        !value.is_none() && value.try_iter().is_ok()
    });
    if dialect != Syntax::Django {
        markup::register(env);
    }
    match dialect {
        Syntax::ChatTemplate => env.add_filter("tojson", json::tojson_transformers),
        // Jinja, Django (Go and Handlebars never reach here).
        _ => env.add_filter("tojson", json::tojson_jinja),
    }
}

/// Text built for one value, refusing to grow past what the render may
/// still print (the whole output budget outside a render).
pub(super) struct Out {
    text: String,
    /// The most bytes `text` may hold.
    room: usize,
    /// The bound that sets the room, for the message.
    over: Exceeded,
}

impl Out {
    /// An empty text with the current render's remaining budget as room.
    pub(super) fn new() -> Out {
        let (room, over) = current::budget();
        Out {
            text: String::new(),
            room,
            over,
        }
    }

    /// Fails with the output-limit error unless `bytes` more fit.
    pub(super) fn reserve(&self, bytes: usize) -> Result<(), minijinja::Error> {
        if bytes > self.room.saturating_sub(self.text.len()) {
            return Err(current::exceeded(self.over));
        }
        Ok(())
    }

    /// Appends `text`.
    pub(super) fn push_str(&mut self, text: &str) -> Result<(), minijinja::Error> {
        self.reserve(text.len())?;
        self.text.push_str(text);
        Ok(())
    }

    /// Appends what `write` writes, then checks it fitted (as
    /// [`Out::push_str`] of the same text would: an error if not).
    pub(super) fn push_with(
        &mut self,
        write: impl FnOnce(&mut String),
    ) -> Result<(), minijinja::Error> {
        let before = self.text.len();
        write(&mut self.text);
        let added = self.text.len().saturating_sub(before);
        if added > self.room.saturating_sub(before) {
            self.text.truncate(before);
            return Err(current::exceeded(self.over));
        }
        Ok(())
    }

    /// Appends one character.
    pub(super) fn push(&mut self, c: char) -> Result<(), minijinja::Error> {
        self.reserve(c.len_utf8())?;
        self.text.push(c);
        Ok(())
    }

    /// Appends `text` `count` times (checked before anything is allocated).
    pub(super) fn push_repeated(
        &mut self,
        text: &str,
        count: usize,
    ) -> Result<(), minijinja::Error> {
        self.reserve(text.len().saturating_mul(count))?;
        for _ in 0..count {
            self.text.push_str(text);
        }
        Ok(())
    }

    /// The text built, counted against the render's budget for built
    /// text.
    pub(super) fn finish(self) -> Result<String, minijinja::Error> {
        current::build(self.text.len()).map_err(current::exceeded)?;
        Ok(self.text)
    }
}

/// The error of a value nested deeper than [`MAX_NESTING`].
pub(super) fn nesting_error(what: &str) -> minijinja::Error {
    minijinja::Error::new(
        ErrorKind::InvalidOperation,
        format!(
            "{what}: the value is nested more than {MAX_NESTING} levels deep (or holds itself)"
        ),
    )
}

/// `str(value)` as Jinja2 prints `{{ value }}`: strings as they are,
/// `None`, `True`/`False`, integers, floats as Python's `repr(float)`
/// (`1.0`, `1e+16`, `nan`), lists and maps as Python's `repr`
/// (`[1, 'a', None]`, `{'a': 1}`), tuples as `(1, 2)`; undefined is empty.
pub(super) fn display(value: &JValue) -> Result<Cow<'_, str>, minijinja::Error> {
    if let Some(text) = value.as_str() {
        return Ok(Cow::Borrowed(text));
    }
    if value.is_undefined() {
        return Ok(Cow::Borrowed(""));
    }
    let mut out = Out::new();
    write_repr(&mut out, value, 0)?;
    out.finish().map(Cow::Owned)
}

/// Python's `str()` of a list or a map of the data, written from its
/// JSON as [`display`] writes the data's value on minijinja (the direct
/// path's `|string`, without building minijinja's value first).
pub(crate) fn display_json(value: &serde_json::Value) -> Result<String, minijinja::Error> {
    let mut out = Out::new();
    match value {
        serde_json::Value::String(text) => out.push_str(text)?,
        other => write_json_repr(&mut out, other, 0)?,
    }
    out.finish()
}

/// [`display_json`] of a list of the data's values (a slice of one).
pub(crate) fn display_json_list(items: &[serde_json::Value]) -> Result<String, minijinja::Error> {
    let mut out = Out::new();
    write_json_list(&mut out, items, 0)?;
    out.finish()
}

/// `[a, b, …]`, each item's [`write_json_repr`].
fn write_json_list(
    out: &mut Out,
    items: &[serde_json::Value],
    depth: usize,
) -> Result<(), minijinja::Error> {
    if depth >= MAX_NESTING {
        return Err(nesting_error("printing a list"));
    }
    out.push('[')?;
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push_str(", ")?;
        }
        write_json_repr(out, item, depth + 1)?;
    }
    out.push(']')
}

/// [`write_repr`] of a JSON value.
fn write_json_repr(
    out: &mut Out,
    value: &serde_json::Value,
    depth: usize,
) -> Result<(), minijinja::Error> {
    use serde_json::Value as Json;
    match value {
        Json::Null => out.push_str("None"),
        Json::Bool(true) => out.push_str("True"),
        Json::Bool(false) => out.push_str("False"),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => out.push_str(itoa::Buffer::new().format(i)),
            (None, Some(u)) => out.push_str(itoa::Buffer::new().format(u)),
            _ => out.push_str(&float_repr(n.as_f64().unwrap_or(f64::NAN))),
        },
        Json::String(text) => write_string_repr(out, text),
        Json::Array(items) => write_json_list(out, items, depth),
        Json::Object(entries) => {
            if depth >= MAX_NESTING {
                return Err(nesting_error("printing a map"));
            }
            out.push('{')?;
            for (index, (key, item)) in entries.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ")?;
                }
                write_string_repr(out, key)?;
                out.push_str(": ")?;
                write_json_repr(out, item, depth + 1)?;
            }
            out.push('}')
        }
    }
}

/// Python's `repr(value)` for an object's `Display` (which cannot fail):
/// `[...]` where the value is too deep or too large to print.
pub(super) fn repr_lossy(value: &JValue) -> String {
    let mut out = Out::new();
    match write_repr(&mut out, value, 0) {
        Ok(()) => out.finish().unwrap_or_else(|_| "[...]".to_string()),
        Err(_) => "[...]".to_string(),
    }
}

/// Writes Python's `repr(value)` (for a string, with quotes).
fn write_repr(out: &mut Out, value: &JValue, depth: usize) -> Result<(), minijinja::Error> {
    if generator::is_generator(value) {
        // Python prints its address too (`<generator object … at 0x…>`).
        return out.push_str("<generator object>");
    }
    match value.kind() {
        ValueKind::Undefined => out.push_str("Undefined"),
        ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number => write_number(out, value),
        ValueKind::String => write_string_repr(out, value.as_str().unwrap_or_default()),
        ValueKind::Bytes => write_bytes_repr(out, value.as_bytes().unwrap_or_default()),
        ValueKind::Seq | ValueKind::Iterable => {
            if depth >= MAX_NESTING {
                return Err(nesting_error("printing a list"));
            }
            let tuple = value.is_tuple();
            out.push(if tuple { '(' } else { '[' })?;
            let mut count = 0usize;
            for item in value.try_iter()? {
                if count > 0 {
                    out.push_str(", ")?;
                }
                write_repr(out, &item, depth + 1)?;
                count += 1;
            }
            if tuple && count == 1 {
                out.push(',')?;
            }
            out.push(if tuple { ')' } else { ']' })
        }
        ValueKind::Map => {
            if depth >= MAX_NESTING {
                return Err(nesting_error("printing a map"));
            }
            out.push('{')?;
            for (index, key) in value.try_iter()?.enumerate() {
                if index > 0 {
                    out.push_str(", ")?;
                }
                write_repr(out, &key, depth + 1)?;
                out.push_str(": ")?;
                write_repr(out, &value.get_item(&key)?, depth + 1)?;
            }
            out.push('}')
        }
        // Loop state, macros, invalid values: minijinja's own text; but a
        // function's is the Rust path of its code, and Jinja2's its
        // address: neither is anything a prompt means.
        _ => {
            if let Some(function) = value.downcast_object_ref::<NamedFunction>() {
                if let Some(class) = function.class {
                    return out.push_str(class);
                }
                return Err(minijinja::Error::new(
                    minijinja::ErrorKind::InvalidOperation,
                    format!(
                        "the function `{0}` cannot be printed: call it, `{0}(…)`",
                        function.name
                    ),
                ));
            }
            let text = value.to_string();
            if value.kind() == ValueKind::Plain && (text == "function" || text.contains("::")) {
                return Err(minijinja::Error::new(
                    minijinja::ErrorKind::InvalidOperation,
                    "a function cannot be printed: call it, with ( )",
                ));
            }
            out.push_str(&text)
        }
    }
}

/// Writes a number as Python prints it: integers of any size as they are,
/// floats as `repr(float)`.
fn write_number(out: &mut Out, value: &JValue) -> Result<(), minijinja::Error> {
    if let Some(i) = value.as_i64().filter(|_| value.is_integer()) {
        // The common case without an allocation: a big structure printed
        // whole is mostly small integers.
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut rest = i.unsigned_abs();
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        if i < 0 {
            out.push('-')?;
        }
        return out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
    }
    if value.is_integer() {
        return out.push_str(&value.to_string());
    }
    let float = f64::try_from(value.clone()).unwrap_or(f64::NAN);
    out.push_str(&float_repr(float))
}

/// Python's `repr(float)`: the shortest digits that read back as the same
/// float (Rust finds the same digits), in positional notation when the
/// decimal exponent is from -4 to 15 (`0.0001`, `1e+16`), always with a
/// fraction or an exponent (`1.0`); `nan`, `inf`, `-inf`.
pub(super) fn float_repr(float: f64) -> String {
    if float.is_nan() {
        return "nan".to_string();
    }
    if float.is_infinite() {
        return if float < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    // `{:e}` is `-1.2345e-5`: the shortest round-trip digits, one before
    // the point.
    let scientific = format!("{float:e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .unwrap_or((scientific.as_str(), "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    // The value is 0.DIGITS × 10^point.
    let point = exponent + 1;
    let mut text = String::from(sign);
    if -4 < point && point <= 16 {
        let count = digits.len() as i64;
        if point <= 0 {
            text.push_str("0.");
            text.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
            text.push_str(&digits);
        } else if point >= count {
            text.push_str(&digits);
            text.extend(std::iter::repeat_n('0', (point - count) as usize));
            text.push_str(".0");
        } else {
            let (whole, fraction) = digits.split_at(point as usize);
            text.push_str(whole);
            text.push('.');
            text.push_str(fraction);
        }
    } else {
        let mut chars = digits.chars();
        text.extend(chars.next());
        let rest = chars.as_str();
        if !rest.is_empty() {
            text.push('.');
            text.push_str(rest);
        }
        let sign = if exponent < 0 { '-' } else { '+' };
        text.push_str(&format!("e{sign}{:02}", exponent.unsigned_abs()));
    }
    text
}

/// Writes Python's `repr(str)`: single quotes unless the text has `'` and
/// no `"`; backslash, the quote, `\t`, `\n`, `\r` escaped; characters
/// Python does not print as they are as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
fn write_string_repr(out: &mut Out, text: &str) -> Result<(), minijinja::Error> {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote)?;
    let mut plain = 0;
    for (at, c) in text.char_indices() {
        let escape: Cow<'static, str> = match c {
            '\\' => "\\\\".into(),
            '\t' => "\\t".into(),
            '\n' => "\\n".into(),
            '\r' => "\\r".into(),
            c if c == quote => if quote == '\'' { "\\'" } else { "\\\"" }.into(),
            c if !is_printable(c) => match u32::from(c) {
                code @ 0..=0xff => format!("\\x{code:02x}").into(),
                code @ 0x100..=0xffff => format!("\\u{code:04x}").into(),
                code => format!("\\U{code:08x}").into(),
            },
            _ => continue,
        };
        out.push_str(text.get(plain..at).unwrap_or_default())?;
        out.push_str(&escape)?;
        plain = at + c.len_utf8();
    }
    out.push_str(text.get(plain..).unwrap_or_default())?;
    out.push(quote)
}

/// Writes Python's `repr(bytes)` (`b'…'`), for completeness: templates
/// over JSON data never hold bytes.
fn write_bytes_repr(out: &mut Out, bytes: &[u8]) -> Result<(), minijinja::Error> {
    out.push_str("b'")?;
    for byte in bytes {
        match byte {
            b'\'' => out.push_str("\\'")?,
            b'\\' => out.push_str("\\\\")?,
            b'\t' => out.push_str("\\t")?,
            b'\n' => out.push_str("\\n")?,
            b'\r' => out.push_str("\\r")?,
            0x20..=0x7e => out.push(char::from(*byte))?,
            _ => out.push_str(&format!("\\x{byte:02x}"))?,
        }
    }
    out.push('\'')
}

/// Python's `str.isprintable` for one character, closely approximated:
/// not printable are the Unicode categories Cc (controls), Cf (format
/// characters), Zs other than the space, Zl, Zp and Co (private use), as
/// Unicode 14 (CPython 3.11) assigns them, and of Cn (unassigned) only the
/// noncharacters and the unassigned planes 4 to 13. Other unassigned code
/// points are taken as printable (Python escapes them).
fn is_printable(c: char) -> bool {
    let code = u32::from(c);
    if (0x20..0x7f).contains(&code) {
        return true;
    }
    !matches!(code,
        // Cc
        0x00..=0x1f | 0x7f..=0x9f
        // Zs (but the space), Zl, Zp
        | 0xa0 | 0x1680 | 0x2000..=0x200a | 0x202f | 0x205f | 0x3000 | 0x2028 | 0x2029
        // Cf
        | 0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x890..=0x891 | 0x8e2 | 0x180e
        | 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x2064 | 0x2066..=0x206f | 0xfeff
        | 0xfff9..=0xfffb | 0x110bd | 0x110cd | 0x13430..=0x13438 | 0x1bca0..=0x1bca3
        | 0x1d173..=0x1d17a | 0xe0001 | 0xe0020..=0xe007f
        // Co
        | 0xe000..=0xf8ff | 0xf0000..=0xffffd | 0x100000..=0x10fffd
        // Cn: noncharacters, unassigned planes
        | 0xfdd0..=0xfdef | 0x40000..=0xdffff
    ) && (code & 0xfffe) != 0xfffe
}

/// A filter's positional arguments after the value, each `None` when not
/// given; more than `N` is an error.
fn positional<const N: usize>(
    args: &[JValue],
    filter: &str,
) -> Result<[Option<JValue>; N], minijinja::Error> {
    if args.len() > N {
        return Err(minijinja::Error::new(
            ErrorKind::TooManyArguments,
            format!("{filter} takes at most {N} arguments"),
        ));
    }
    Ok(std::array::from_fn(|index| args.get(index).cloned()))
}

/// The error of a missing value given to a filter that needs one, in
/// `strict` and `semi` (teleprompt's errors name the path).
fn undefined_error() -> minijinja::Error {
    minijinja::Error::new(ErrorKind::UndefinedError, "undefined value")
}

/// True when a missing value is an error rather than empty.
fn missing_is_error(state: &State) -> bool {
    matches!(
        state.undefined_behavior(),
        UndefinedBehavior::Strict | UndefinedBehavior::SemiStrict
    )
}

/// `string`: Python's `str(value)` (`None`, `True`, `[1, 'a']`); a string
/// stays itself, marked safe or not.
fn string_filter(state: &State, value: &JValue) -> Result<JValue, minijinja::Error> {
    if value.is_undefined() && missing_is_error(state) {
        return Err(undefined_error());
    }
    if value.kind() == ValueKind::String {
        return Ok(value.clone());
    }
    Ok(JValue::from(display(value)?.into_owned()))
}

/// `pprint`: Python's `repr(value)` on one line, as `pprint.pformat`
/// prints values that fit in 80 columns (longer ones it breaks into lines,
/// and it sorts the keys of maps; neither is done here).
fn pprint_filter(value: &JValue) -> Result<String, minijinja::Error> {
    let mut out = Out::new();
    write_repr(&mut out, value, 0)?;
    out.finish()
}

/// The two number conversions.
#[derive(Clone, Copy)]
enum NumberFilter {
    Int,
    Float,
}

/// `int` and `float` as Jinja2 has them: a value that does not convert
/// (`'x'|int`, `[1]|float`) gives the default, `0` or `0.0` unless one is
/// given, where minijinja's filters are errors without one. A missing
/// value stays an error in `strict` and `semi`.
fn number_filter(
    state: &mut State,
    value: &JValue,
    args: Rest<JValue>,
    kwargs: Kwargs,
    filter: NumberFilter,
) -> Result<JValue, minijinja::Error> {
    let builtin = match filter {
        NumberFilter::Int => JValue::from_function(minijinja::filters::int),
        NumberFilter::Float => JValue::from_function(minijinja::filters::float),
    };
    let has_default = !args.is_empty() || kwargs.has("default");
    // Python's `int(' 42 ')` and `int('1_000')` read the number.
    let value = match value.as_str() {
        Some(text) => match python_number_text(text) {
            number if number.len() != text.len() => JValue::from(number.into_owned()),
            _ => value.clone(),
        },
        None => value.clone(),
    };
    let mut call = vec![value.clone()];
    call.extend(args.0);
    if kwargs.args().next().is_some() {
        call.push(JValue::from(kwargs));
    }
    match builtin.call(state, &call) {
        Err(error)
            if error.kind() == ErrorKind::InvalidOperation
                && !has_default
                && !value.is_undefined() =>
        {
            Ok(match filter {
                NumberFilter::Int => JValue::from(0),
                NumberFilter::Float => JValue::from(0.0),
            })
        }
        result => result,
    }
}

/// A number's text as Python's `int()` and `float()` read it: without
/// surrounding whitespace, and without the underscores that group digits
/// (one at a time, between two digits or letters).
fn python_number_text(text: &str) -> Cow<'_, str> {
    let trimmed = text.trim();
    if !trimmed.contains('_') {
        return Cow::Borrowed(trimmed);
    }
    let chars: Vec<char> = trimmed.chars().collect();
    let grouping = chars.iter().enumerate().all(|(index, c)| {
        *c != '_'
            || (index > 0
                && chars
                    .get(index - 1)
                    .is_some_and(char::is_ascii_alphanumeric)
                && chars
                    .get(index + 1)
                    .is_some_and(char::is_ascii_alphanumeric))
    });
    if grouping {
        Cow::Owned(chars.into_iter().filter(|c| *c != '_').collect())
    } else {
        Cow::Borrowed(trimmed)
    }
}

/// `join` as Jinja2's: items that are not strings are printed with
/// Python's `str()` (`1.0`, `None`, `['a']`), where minijinja would print
/// its own way. Inside `{% autoescape on %}` minijinja's `join` runs as it
/// is (it escapes the items).
pub(super) fn join_filter(
    state: &mut State,
    args: Rest<JValue>,
    kwargs: Kwargs,
) -> Result<JValue, minijinja::Error> {
    let builtin = || JValue::from_function(minijinja::filters::join);
    let mut args = args.0;
    // The input, `d` and `attribute`: past them, a later argument would
    // be read as the attribute and fail as an undefined value.
    if args.len() > 3 {
        return Err(minijinja::Error::new(
            ErrorKind::TooManyArguments,
            format!(
                "join takes at most 2 arguments, got {}",
                args.len().saturating_sub(1)
            ),
        ));
    }
    let plain = matches!(state.auto_escape(), AutoEscape::None);
    let Some(items) = args.first().filter(|_| plain).cloned() else {
        if kwargs.args().next().is_some() {
            args.push(JValue::from(kwargs));
        }
        return builtin().call(state, &args);
    };
    // `attribute=`: the items' attribute (a dotted path), as minijinja's
    // `map` finds it.
    let mut attribute = args.get(2).cloned();
    let mut joiner = args.get(1).cloned();
    if kwargs.args().next().is_some() {
        if attribute.is_none() {
            attribute = kwargs.get::<Option<JValue>>("attribute")?;
        }
        if joiner.is_none() {
            joiner = kwargs.get::<Option<JValue>>("d")?;
        }
        kwargs.assert_all_used()?;
    }
    let items = match attribute {
        Some(attribute) => JValue::from_function(minijinja::filters::map).call(
            state,
            &[
                items,
                JValue::from(Kwargs::from_iter([("attribute", attribute)])),
            ],
        )?,
        None => items,
    };
    if items.try_iter().is_err() {
        // minijinja's message for a value that cannot be joined.
        return builtin().call(state, &[items]);
    }
    let joiner = match &joiner {
        Some(joiner) => display(joiner)?,
        None => Cow::Borrowed(""),
    };
    let mut out = Out::new();
    for (index, item) in items.try_iter()?.enumerate() {
        if index > 0 {
            out.push_str(&joiner)?;
        }
        if item.is_undefined() && missing_is_error(state) {
            return Err(undefined_error());
        }
        out.push_str(&display(&item)?)?;
    }
    out.finish().map(JValue::from)
}

#[cfg(test)]
mod tests;

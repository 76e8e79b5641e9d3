//! Handlebars helpers from the systems whose prompts teleprompt renders:
//! Semantic Kernel's system helpers, the handlebars-rust built-ins Forge
//! relies on (and Forge's own `inc` and `contains`), Dotprompt's `json`.
//! Handlebars-only: Go templates never see these names. `set`, `get`,
//! `#ifEquals` and `#unlessEquals` are lowered by the Handlebars front end
//! (to variable slots and `if`), not here.
//!
//! | helper | arguments | result | source |
//! |---|---|---|---|
//! | `set` | `name="x" value=v` or `"x" v` | prints nothing; later `{{x}}` and `{{get "x"}}` read `v` | SK |
//! | `get` | `"x"`, `name="x"` or `"x" "prop"` | the variable `set` gave, else the root's key | SK |
//! | `json` | value, optional `indent=N` | compact JSON (`indent`: N spaces, at most 10), a string quoted (Forge, Dotprompt, Python SK); in a prompt from Semantic Kernel a string prints as it is (SK .NET) — see below | SK, Forge, Dotprompt |
//! | `concat` | any values | their printed text, joined | SK |
//! | `array` | any values | a list of them (at most 100 000 values in all, nested at most 64 deep) | SK |
//! | `range` | start, end (integers) | the integers from start to end, both included (empty when end < start) | SK (.NET) |
//! | `{{{{raw}}}}…{{{{/raw}}}}` | — | the content as written (a raw block; lexed, not a helper call) | SK |
//! | `or`, `and` | one or more values | `true`/`false`: any / all are true (Handlebars truth) | SK, handlebars-rust |
//! | `not` | value | `true` when the value is false | handlebars-rust |
//! | `equals`, `eq` | two values | `true` when equal (numbers by value: `1` equals `1.0`; strings exact; lists and maps by content) | SK, handlebars-rust |
//! | `ne` | two values | not `eq` | handlebars-rust |
//! | `lt`, `lte`, `gt`, `gte` | two numbers, or two strings, or two booleans | the comparison; `false` for other kinds | handlebars-rust |
//! | `lessThan`, `greaterThan`, `lessThanOrEqual`, `greaterThanOrEqual` (and `less_than`, …) | two numbers (or numeric strings) | the comparison | SK |
//! | `add`, `subtract`, `multiply` | two or more numbers (or numeric strings) | the sum / difference / product; integers stay integers | SK |
//! | `divide` | two or more numbers | the quotient; dividing by zero is an error | SK |
//! | `len` | list, map or string | its length (bytes for a string); 0 for anything else | handlebars-rust |
//! | `contains` | list, value | `true` when the list holds the value, else an empty string (also for a string or a map: Forge tests that `contains "test-value" "test"` is false) | Forge |
//! | `inc` | integer | the integer plus one (Forge takes only non-negative ones) | Forge |
//! | `doubleOpen`, `doubleClose` | — | `{{` / `}}` | SK |
//! | `#ifEquals a b`, `#unlessEquals a b` | two values | runs the block when equal (unless: when not), else `{{else}}` | Dotprompt |
//!
//! Where the systems give one name different meanings, the prompt's origin
//! decides (`crate::syntax::Origin`, which also decides which of these
//! helpers a prompt has). `json` of a string: Semantic Kernel (.NET) prints
//! the string as it is, the others print it as a JSON string; SK's
//! `equals` with fewer than two arguments is false, and SK prints booleans
//! `True`/`False` (`Flavor::HandlebarsSk`). A prompt is from SK when it is
//! SK prompt YAML or its front matter says `template_format: handlebars`
//! (SK's key); every other Handlebars prompt (`.hbs`, Dotprompt's
//! `.prompt`, Forge's files) quotes.

use std::rc::Rc;

use serde_json::Value as Json;

use super::super::program::Span;
use super::super::value::Value;
use super::go as gofmt;
use crate::functions;
use crate::limits::Exceeded;
use crate::options::Strictness;

/// A Handlebars helper evaluated by the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Helper {
    /// `json`: a string is quoted, as JSON (Dotprompt, Forge, Python SK).
    Json,
    /// Semantic Kernel .NET's `json`: a string prints as it is.
    SkJson,
    /// `json value indent=N` (the indent is the second argument).
    JsonIndent,
    Concat,
    /// Semantic Kernel's `concat`: booleans join as `True`/`False`
    /// (.NET's `string.Concat`, Python's `str`).
    SkConcat,
    Array,
    Range,
    Or,
    And,
    Not,
    Equals,
    Ne,
    /// handlebars-rust's `lt`/`lte`/`gt`/`gte` (numbers, strings, booleans).
    Lt,
    Le,
    Gt,
    Ge,
    /// Semantic Kernel's numeric comparisons.
    NumLt,
    NumLe,
    NumGt,
    NumGe,
    Add,
    Subtract,
    Multiply,
    Divide,
    Len,
    Contains,
    Inc,
    DoubleOpen,
    DoubleClose,
    /// `{{#if value includeZero=flag}}`: the value, or `true` when it is the
    /// number 0 and the flag is true (never named in a template: the
    /// front end lowers the hash argument to it; the renderer evaluates it
    /// so that the value is tested, not printed).
    IncludeZero,
    /// `{{> partial context key=value…}}`: the context (an object, else
    /// nothing) with the keys set, as handlebars.js extends it (arguments:
    /// the context, then keys and values in turn). It copies the context.
    PartialContext,
    /// The content type of a Dotprompt `{{media url=…}}` without
    /// `contentType` ([`MEDIA_TYPE`], never written in a template: the
    /// Dotprompt front end adds it): see [`media_type`].
    MediaType,
}

/// The name of [`Helper::MediaType`]: a private-use character first, so
/// no template names it by accident.
pub(crate) const MEDIA_TYPE: &str = "\u{E000}media-type";

/// The name Dotprompt's `{{section "name"}}` is lowered under
/// ([`crate::engine::program::Func::Section`]): a private-use character
/// first, so only a Dotprompt file (whose front end renames `section`)
/// reaches it.
pub(crate) const SECTION: &str = "\u{E000}section";

/// The helpers by name (aliases included: the first name of a helper is
/// the one messages use).
pub(crate) const HELPERS: &[(&str, Helper)] = &[
    ("json", Helper::Json),
    ("concat", Helper::Concat),
    ("array", Helper::Array),
    ("range", Helper::Range),
    ("or", Helper::Or),
    ("and", Helper::And),
    ("not", Helper::Not),
    ("equals", Helper::Equals),
    ("eq", Helper::Equals),
    ("ne", Helper::Ne),
    ("lt", Helper::Lt),
    ("lte", Helper::Le),
    ("gt", Helper::Gt),
    ("gte", Helper::Ge),
    ("lessThan", Helper::NumLt),
    ("less_than", Helper::NumLt),
    ("lessThanOrEqual", Helper::NumLe),
    ("less_than_or_equal", Helper::NumLe),
    ("greaterThan", Helper::NumGt),
    ("greater_than", Helper::NumGt),
    ("greaterThanOrEqual", Helper::NumGe),
    ("greater_than_or_equal", Helper::NumGe),
    ("add", Helper::Add),
    ("subtract", Helper::Subtract),
    ("multiply", Helper::Multiply),
    ("divide", Helper::Divide),
    ("len", Helper::Len),
    ("contains", Helper::Contains),
    ("inc", Helper::Inc),
    ("doubleOpen", Helper::DoubleOpen),
    ("double_open", Helper::DoubleOpen),
    ("doubleClose", Helper::DoubleClose),
    ("double_close", Helper::DoubleClose),
];

/// What a helper may use of the render's bounds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    /// Elements of a list a helper builds (`range`).
    pub list: usize,
    /// Bytes of text a helper builds (`concat`, `json`).
    pub text: usize,
}

impl Helper {
    /// The helper's name in messages.
    pub(crate) fn name(self) -> &'static str {
        if matches!(self, Helper::JsonIndent | Helper::SkJson) {
            return "json";
        }
        if self == Helper::SkConcat {
            return "concat";
        }
        if self == Helper::IncludeZero {
            return "if";
        }
        if self == Helper::PartialContext {
            return "partial";
        }
        if self == Helper::MediaType {
            return "media";
        }
        HELPERS
            .iter()
            .find(|(_, h)| *h == self)
            .map_or("?", |(name, _)| name)
    }

    /// How many arguments it takes: (minimum, maximum).
    pub(crate) fn arity(self) -> (usize, Option<usize>) {
        match self {
            Helper::Json
            | Helper::SkJson
            | Helper::Not
            | Helper::Len
            | Helper::Inc
            | Helper::MediaType => (1, Some(1)),
            Helper::JsonIndent
            | Helper::Range
            | Helper::Equals
            | Helper::Ne
            | Helper::Lt
            | Helper::Le
            | Helper::Gt
            | Helper::Ge
            | Helper::NumLt
            | Helper::NumLe
            | Helper::NumGt
            | Helper::NumGe
            | Helper::Contains
            | Helper::IncludeZero => (2, Some(2)),
            Helper::Or | Helper::And => (1, None),
            Helper::Add | Helper::Subtract | Helper::Multiply | Helper::Divide => (2, None),
            Helper::Concat | Helper::SkConcat | Helper::Array => (0, None),
            Helper::PartialContext => (1, None),
            Helper::DoubleOpen | Helper::DoubleClose => (0, Some(0)),
        }
    }
}

/// Evaluates `helper` on its evaluated arguments. `truthy` is the
/// template's truth (Handlebars: an empty map is true). The error is the
/// message after the helper's name.
pub(crate) fn call<'a>(
    helper: Helper,
    args: &[Value<'a>],
    bounds: Bounds,
    truthy: impl Fn(&Value<'a>) -> bool,
) -> Result<Value<'a>, String> {
    let arg = |i: usize| args.get(i).ok_or_else(|| "missing argument".to_string());
    match helper {
        Helper::Json => json(arg(0)?, 0, bounds),
        Helper::SkJson => {
            let value = arg(0)?;
            match value.as_str() {
                Some(_) => Ok(value.clone()),
                None => json(value, 0, bounds),
            }
        }
        Helper::JsonIndent => {
            let indent = match arg(1)? {
                Value::Int(n) => (*n).clamp(0, 10) as usize,
                other => {
                    return Err(format!(
                        "indent must be an integer, not {}",
                        other.kind_name()
                    ))
                }
            };
            json(arg(0)?, indent, bounds)
        }
        Helper::Concat | Helper::SkConcat => {
            let mut out = String::new();
            for value in args {
                match value {
                    Value::Bool(flag) if helper == Helper::SkConcat => {
                        out.push_str(if *flag { "True" } else { "False" })
                    }
                    other => display(&mut out, other),
                }
                if out.len() > bounds.text {
                    return Err(too_long(bounds));
                }
            }
            Ok(Value::string(out))
        }
        Helper::Array => {
            let mut nodes = 0;
            let mut items = Vec::with_capacity(args.len());
            for value in args {
                let item = value.to_json();
                measure(&item, 1, &mut nodes, bounds)?;
                items.push(item);
            }
            Ok(Value::owned(Json::Array(items)))
        }
        Helper::Range => {
            let start = integer(arg(0)?, 1)?;
            let end = integer(arg(1)?, 2)?;
            let count = i128::from(end) - i128::from(start) + 1;
            if count > bounds.list as i128 {
                let over = Exceeded::Items(bounds.list);
                return Err(format!("{start} to {end} is {count} numbers: {over}"));
            }
            let items: Vec<Json> = if count <= 0 {
                Vec::new()
            } else {
                (start..=end).map(Json::from).collect()
            };
            Ok(Value::owned(Json::Array(items)))
        }
        Helper::Or => Ok(Value::Bool(args.iter().any(&truthy))),
        Helper::And => Ok(Value::Bool(args.iter().all(&truthy))),
        Helper::Not => Ok(Value::Bool(!truthy(arg(0)?))),
        Helper::Equals => Ok(Value::Bool(equal(arg(0)?, arg(1)?))),
        Helper::Ne => Ok(Value::Bool(!equal(arg(0)?, arg(1)?))),
        Helper::Lt | Helper::Le | Helper::Gt | Helper::Ge => {
            let order = compare(arg(0)?, arg(1)?);
            Ok(Value::Bool(order.is_some_and(|o| match helper {
                Helper::Lt => o.is_lt(),
                Helper::Le => o.is_le(),
                Helper::Gt => o.is_gt(),
                _ => o.is_ge(),
            })))
        }
        Helper::NumLt | Helper::NumLe | Helper::NumGt | Helper::NumGe => {
            let a = number(arg(0)?, 1)?.as_f64();
            let b = number(arg(1)?, 2)?.as_f64();
            Ok(Value::Bool(match helper {
                Helper::NumLt => a < b,
                Helper::NumLe => a <= b,
                Helper::NumGt => a > b,
                _ => a >= b,
            }))
        }
        Helper::Add | Helper::Subtract | Helper::Multiply | Helper::Divide => {
            arithmetic(helper, args)
        }
        Helper::Len => Ok(Value::Int(match arg(0)? {
            Value::Str(s) => s.len(),
            Value::String(s) => s.len(),
            Value::Array(items) => items.len(),
            Value::Object(view) => view.len().unwrap_or(0),
            Value::Json(json) => match &**json {
                Json::Array(items) => items.len(),
                Json::Object(map) => map.len(),
                _ => 0,
            },
            _ => 0,
        } as i64)),
        Helper::Contains => {
            // Forge: `true` when a list holds the value, else an empty
            // string; anything that is not a list holds nothing.
            let needle = arg(1)?.to_json();
            let found = match arg(0)? {
                Value::Array(items) => items.iter().any(|item| equal_json(item, &needle)),
                Value::Json(json) => json
                    .as_array()
                    .is_some_and(|items| items.iter().any(|item| equal_json(item, &needle))),
                _ => false,
            };
            Ok(if found {
                Value::Bool(true)
            } else {
                Value::Str("")
            })
        }
        Helper::Inc => match arg(0)? {
            Value::Int(n) => n
                .checked_add(1)
                .map(Value::Int)
                .ok_or_else(|| format!("{n} + 1 overflows")),
            other => Err(format!(
                "argument 1 must be an integer, not {}",
                other.kind_name()
            )),
        },
        Helper::DoubleOpen => Ok(Value::Str("{{")),
        Helper::DoubleClose => Ok(Value::Str("}}")),
        Helper::PartialContext => {
            let mut map = match arg(0)?.to_json() {
                Json::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            for pair in args.get(1..).unwrap_or(&[]).chunks(2) {
                if let [key, value] = pair {
                    let mut name = String::new();
                    gofmt::write_value(&mut name, key);
                    map.insert(name, value.to_json());
                }
            }
            Ok(Value::owned(Json::Object(map)))
        }
        Helper::MediaType => Ok(match arg(0)?.as_str() {
            Some(url) => match media_type(url) {
                std::borrow::Cow::Borrowed(known) => Value::Str(known),
                std::borrow::Cow::Owned(own) => Value::string(own),
            },
            // Not a string: `media` says so about its url.
            None => Value::Str(OCTET_STREAM),
        }),
        // Evaluated by the renderer (it tests its value); here for completeness.
        Helper::IncludeZero => {
            let value = arg(0)?;
            let zero =
                matches!(value, Value::Int(0)) || matches!(value, Value::Float(f) if *f == 0.0);
            Ok(if zero && truthy(arg(1)?) {
                Value::Bool(true)
            } else {
                value.clone()
            })
        }
    }
}

/// The type of a media part whose type was not given.
const OCTET_STREAM: &str = "application/octet-stream";

/// The content type of the media at `url`, for a Dotprompt `{{media url=…}}`
/// without `contentType` (Dotprompt leaves the part's type out; teleprompt's
/// media parts carry one): a `data:` URL's own type, else the type the
/// path's extension names (`.png`, `.jpg`, `.pdf`, `.mp3`, …), else
/// `application/octet-stream`.
pub(crate) fn media_type(url: &str) -> std::borrow::Cow<'static, str> {
    if let Some(rest) = url.strip_prefix("data:") {
        let declared = rest.split([',', ';']).next().unwrap_or("").trim();
        let valid = declared.contains('/')
            && declared.len() <= 255
            && declared
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/.+-_".contains(&b));
        return match valid {
            true => std::borrow::Cow::Owned(declared.to_ascii_lowercase()),
            false => std::borrow::Cow::Borrowed("text/plain"),
        };
    }
    let path = url.split(['?', '#']).next().unwrap_or("");
    let file = path.rsplit('/').next().unwrap_or("");
    let extension = file
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default();
    std::borrow::Cow::Borrowed(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "bmp" => "image/bmp",
        "tif" | "tiff" => "image/tiff",
        "heic" => "image/heic",
        "heif" => "image/heif",
        "pdf" => "application/pdf",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "flac" => "audio/flac",
        "m4a" => "audio/mp4",
        "aac" => "audio/aac",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "mov" => "video/quicktime",
        "mpeg" | "mpg" => "video/mpeg",
        "txt" => "text/plain",
        "md" => "text/markdown",
        "html" | "htm" => "text/html",
        "csv" => "text/csv",
        "json" => "application/json",
        _ => OCTET_STREAM,
    })
}

/// How deeply lists that `array` builds may nest (serde_json reads data at
/// most 128 deep; printing and dropping a value recurse).
const MAX_NESTING: usize = 64;

/// Counts the values in `value` against the list bound and checks its
/// nesting, so that `{{set "l" (array l l)}}` in a loop stops with an error
/// instead of doubling without end.
fn measure(value: &Json, depth: usize, nodes: &mut usize, bounds: Bounds) -> Result<(), String> {
    *nodes += 1;
    if *nodes > bounds.list {
        return Err(Exceeded::Items(bounds.list).to_string());
    }
    if depth > MAX_NESTING {
        return Err(format!("the list would nest more than {MAX_NESTING} deep"));
    }
    match value {
        Json::Array(items) => {
            for item in items {
                measure(item, depth + 1, nodes, bounds)?;
            }
        }
        Json::Object(map) => {
            for item in map.values() {
                measure(item, depth + 1, nodes, bounds)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn too_long(bounds: Bounds) -> String {
    Exceeded::Value(bounds.text).to_string()
}

/// `json`: a string as it is (Semantic Kernel), anything else as JSON.
fn json<'a>(value: &Value<'a>, indent: usize, bounds: Bounds) -> Result<Value<'a>, String> {
    if matches!(value, Value::Missing) {
        return Err("argument 1 is missing: json needs a value".to_string());
    }
    let json = value.to_json();
    let text = if indent == 0 {
        functions::to_json(&json)
    } else {
        functions::to_json_pretty(&json, indent)
    };
    if text.len() > bounds.text {
        return Err(too_long(bounds));
    }
    Ok(Value::String(Rc::from(text)))
}

/// Appends a value as Handlebars prints it.
fn display(out: &mut String, value: &Value<'_>) {
    match value {
        Value::Missing | Value::Null => {}
        Value::Array(_) | Value::Object(_) | Value::Json(_) => {
            write_js(out, &value.to_json());
        }
        other => gofmt::write_value(out, other),
    }
}

/// A number argument.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// Argument `position` (from 1) as a number; a string that reads as one
/// counts (Semantic Kernel converts its arguments).
fn number(value: &Value<'_>, position: usize) -> Result<Num, String> {
    match value {
        Value::Int(i) => Ok(Num::Int(*i)),
        // Arithmetic on a number above i64::MAX (an id) is a float's.
        Value::UInt(u) => Ok(Num::Float(*u as f64)),
        Value::Float(f) => Ok(Num::Float(*f)),
        other => {
            let parsed = other.as_str().map(str::trim).and_then(|s| {
                s.parse::<i64>().map(Num::Int).ok().or_else(|| {
                    s.parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite())
                        .map(Num::Float)
                })
            });
            parsed.ok_or_else(|| match other.as_str() {
                Some(s) => format!("argument {position} is the string {s:?}, not a number"),
                None => format!(
                    "argument {position} must be a number, not {}",
                    other.kind_name()
                ),
            })
        }
    }
}

/// Argument `position` as an integer.
fn integer(value: &Value<'_>, position: usize) -> Result<i64, String> {
    match number(value, position)? {
        Num::Int(i) => Ok(i),
        Num::Float(f) => Err(format!("argument {position} must be an integer, not {f}")),
    }
}

fn arithmetic<'a>(helper: Helper, args: &[Value<'a>]) -> Result<Value<'a>, String> {
    let mut acc: Option<Num> = None;
    for (i, value) in args.iter().enumerate() {
        let n = number(value, i + 1)?;
        let Some(left) = acc else {
            acc = Some(n);
            continue;
        };
        if helper == Helper::Divide && n.as_f64() == 0.0 {
            return Err(format!("argument {} is zero: cannot divide by zero", i + 1));
        }
        acc = Some(match (helper, left, n) {
            (Helper::Divide, l, r) => Num::Float(l.as_f64() / r.as_f64()),
            (_, Num::Int(l), Num::Int(r)) => {
                let exact = match helper {
                    Helper::Add => l.checked_add(r),
                    Helper::Subtract => l.checked_sub(r),
                    _ => l.checked_mul(r),
                };
                match exact {
                    Some(v) => Num::Int(v),
                    None => Num::Float(float_op(helper, l as f64, r as f64)),
                }
            }
            (_, l, r) => Num::Float(float_op(helper, l.as_f64(), r.as_f64())),
        });
    }
    Ok(match acc {
        Some(Num::Int(i)) => Value::Int(i),
        Some(Num::Float(f)) => Value::Float(f),
        None => Value::Int(0),
    })
}

fn float_op(helper: Helper, l: f64, r: f64) -> f64 {
    match helper {
        Helper::Add => l + r,
        Helper::Subtract => l - r,
        _ => l * r,
    }
}

/// Equality: numbers by value (`1` equals `1.0`), a missing value equals
/// null, lists and maps by content.
pub(crate) fn equal(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::Missing | Value::Null, Value::Missing | Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(_) | Value::UInt(_), Value::Int(_) | Value::UInt(_)) => {
            wide_int(a) == wide_int(b)
        }
        (
            Value::Int(_) | Value::UInt(_) | Value::Float(_),
            Value::Int(_) | Value::UInt(_) | Value::Float(_),
        ) => to_f64(a) == to_f64(b),
        _ => match (a.as_str(), b.as_str()) {
            (Some(x), Some(y)) => x == y,
            (None, None) if is_collection(a) && is_collection(b) => {
                equal_json(&a.to_json(), &b.to_json())
            }
            _ => false,
        },
    }
}

fn is_collection(value: &Value<'_>) -> bool {
    matches!(value, Value::Array(_) | Value::Object(_) | Value::Json(_))
}

/// An integer of either kind, widened so that both compare exactly.
fn wide_int(value: &Value<'_>) -> i128 {
    match value {
        Value::Int(i) => i128::from(*i),
        Value::UInt(u) => i128::from(*u),
        _ => 0,
    }
}

fn to_f64(value: &Value<'_>) -> f64 {
    match value {
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

fn equal_json(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| equal_json(x, y))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| equal_json(v, w)))
        }
        _ => a == b,
    }
}

/// handlebars-rust's order: numbers by value, strings and booleans as
/// Rust orders them; no order between other kinds.
fn compare(a: &Value<'_>, b: &Value<'_>) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Int(_) | Value::UInt(_), Value::Int(_) | Value::UInt(_)) => {
            Some(wide_int(a).cmp(&wide_int(b)))
        }
        (
            Value::Int(_) | Value::UInt(_) | Value::Float(_),
            Value::Int(_) | Value::UInt(_) | Value::Float(_),
        ) => to_f64(a).partial_cmp(&to_f64(b)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => match (a.as_str(), b.as_str()) {
            (Some(x), Some(y)) => Some(x.cmp(y)),
            _ => None,
        },
    }
}

/// Prints a value of a mustache as handlebars.js does (see
/// [`super::print`]): a missing one is an error unless lenient, null is
/// nothing, lists and maps as JavaScript's `String(value)`, anything else
/// as Go's `%v` (numbers and booleans print alike).
pub(in crate::engine) fn print(
    out: &mut String,
    value: &Value<'_>,
    strictness: Strictness,
    span: Span,
) -> super::super::render::Result<()> {
    match value {
        Value::Missing => return super::print_missing(strictness, span),
        Value::Null => {}
        Value::Array(_) | Value::Object(_) | Value::Json(_) => write_js(out, &value.to_json()),
        other => gofmt::write_value(out, other),
    }
    Ok(())
}

/// Prints a value as JavaScript's `String(value)` does (Handlebars): lists
/// join their elements with commas, maps print `[object Object]`.
pub(crate) fn write_js(out: &mut String, value: &serde_json::Value) {
    match value {
        serde_json::Value::Null => {}
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_js(out, item);
            }
        }
        serde_json::Value::Object(_) => out.push_str("[object Object]"),
        serde_json::Value::String(s) => out.push_str(s),
        other => gofmt::write_value(out, &Value::from_json(other)),
    }
}

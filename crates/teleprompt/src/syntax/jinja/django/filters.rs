//! pongo2's filters (its `filters_builtin.go`), on minijinja's values, with
//! pongo2's meaning: `default` on any false value, `add` on numbers or
//! strings, `floatformat`'s rounding, `truncatechars` counting the `...`,
//! Go layouts for `date`, Go verbs for `stringformat`. Plus the helpers the
//! translated tags call (`__django_for`, `__django_firstof`, …).

use std::cmp::Ordering;

use minijinja::value::Rest;
use minijinja::{Environment, Error, ErrorKind, State, UndefinedBehavior, Value};

use super::golayout;
use crate::engine::flavor::go as gofmt;
use crate::engine::value::Value as GoValue;
use crate::syntax::jinja::current;

/// The widest `center`, `ljust` and `rjust` may pad (characters).
const MAX_WIDTH: i64 = 100_000;

/// The most decimals `floatformat` prints.
const MAX_DECIMALS: i64 = 1_000;

/// A pongo2 filter: the value, and the argument after `:` (if any).
type Filter = fn(&Value, &Value) -> Result<Value, Error>;

/// The filters, each with whether it takes a missing value quietly.
const FILTERS: &[(&str, Filter, bool)] = &[
    ("add", add, false),
    ("addslashes", addslashes, false),
    ("capfirst", capfirst, false),
    ("center", center, false),
    ("cut", cut, false),
    ("date", date, false),
    ("time", date, false),
    ("default", default, true),
    ("default_if_none", default_if_none, true),
    ("divisibleby", divisibleby, false),
    ("escape", escape, false),
    ("e", escape, false),
    ("escapejs", escapejs, false),
    ("first", first, false),
    ("last", last, false),
    ("floatformat", floatformat, false),
    ("get_digit", get_digit, false),
    ("iriencode", iriencode, false),
    ("join", join, false),
    ("length", length, false),
    ("length_is", length_is, false),
    ("linebreaks", linebreaks, false),
    ("linebreaksbr", linebreaksbr, false),
    ("linenumbers", linenumbers, false),
    ("ljust", ljust, false),
    ("rjust", rjust, false),
    ("lower", lower, false),
    ("upper", upper, false),
    ("make_list", make_list, false),
    ("phone2numeric", phone2numeric, false),
    ("pluralize", pluralize, false),
    ("removetags", removetags, false),
    ("safe", safe, false),
    ("slice", slice, false),
    ("split", split, false),
    ("stringformat", stringformat, false),
    ("striptags", striptags, false),
    ("title", title, false),
    ("truncatechars", truncatechars, false),
    ("truncatechars_html", truncatechars, false),
    ("truncatewords", truncatewords, false),
    ("truncatewords_html", truncatewords, false),
    ("urlencode", urlencode, false),
    ("urlize", safe, false),
    ("urlizetrunc", safe, false),
    ("wordcount", wordcount, false),
    ("wordwrap", wordwrap, false),
    ("yesno", yesno, false),
    ("float", float, false),
    ("integer", integer, false),
    ("__django_spaceless", spaceless, false),
];

/// The names of the filters this dialect registers (for the load-time
/// check), the internal ones included.
#[cfg(test)]
pub(super) fn names() -> impl Iterator<Item = &'static str> {
    FILTERS
        .iter()
        .map(|(name, _, _)| *name)
        .chain(["__django_for", "__django_text"])
}

fn error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

/// A missing value where one is needed: an error naming it in `strict`
/// and `semi`, nothing (pongo2's nil) in `lenient`.
fn check_missing(state: &State, value: &Value) -> Result<Value, Error> {
    if value.is_undefined() {
        if state.undefined_behavior() == UndefinedBehavior::Chainable
            || state.undefined_behavior() == UndefinedBehavior::Lenient
        {
            return Ok(Value::from(()));
        }
        return Err(Error::new(ErrorKind::UndefinedError, "undefined value"));
    }
    Ok(value.clone())
}

pub(super) fn register(env: &mut Environment<'static>) {
    for (name, filter, takes_missing) in FILTERS {
        let (filter, takes_missing) = (*filter, *takes_missing);
        env.add_filter(
            *name,
            move |state: &State, value: &Value, argument: Option<Value>| -> Result<Value, Error> {
                let argument = match argument {
                    Some(argument) => check_missing(state, &argument)?,
                    None => Value::from(()),
                };
                let value = if takes_missing {
                    value.clone()
                } else {
                    check_missing(state, value)?
                };
                filter(&value, &argument)
            },
        );
    }
    env.add_filter("__django_for", for_items);
    env.add_function("__django_firstof", |args: Rest<Value>| {
        args.iter()
            .find(|value| is_true(value))
            .map_or_else(String::new, to_string)
    });
    env.add_function("__django_cycle", cycle);
    env.add_function("__django_forloop", |loop_: Value| {
        Value::from_object(ForLoop(loop_))
    });
    // What a template included with `only` sees of a name the tag does
    // not give: pongo2's nil (nothing, where the prompt is lenient).
    env.add_function("__django_nil", || Value::UNDEFINED);
    // The copy of an included file a render is in: the include tags on
    // the way to it.
    env.add_function("__django_site", |state: &State, id: u64| {
        let outer = state.lookup("__django_site_path");
        format!(
            "{}/{id}",
            outer.as_ref().and_then(Value::as_str).unwrap_or("")
        )
    });
    env.add_function(
        "__django_cycle_as",
        |state: &mut State,
         id: u64,
         silent: bool,
         values: Value,
         count: u64|
         -> Result<Value, Error> {
            let id = cycle_key(state, id);
            let used = current::next_cycle(id);
            let current = cycle_value(state, &values, used, count)?;
            Ok(Value::from_object(Cycle {
                id,
                silent,
                values,
                count,
                current: std::sync::Mutex::new(current),
            }))
        },
    );
    // `{% ssi "file" %}`: the file's text, as it is.
    env.add_filter(
        "__django_text",
        |_: &Value, text: &str| -> Result<String, Error> {
            current::spend(text.len()).map_err(current::exceeded)?;
            Ok(text.to_string())
        },
    );
    env.add_function("__django_now", |layout: &str, fake: Option<bool>| {
        let now = if fake == Some(true) {
            // pongo2's fixed time for `{% now "…" fake %}`.
            jiff::civil::datetime(2014, 2, 5, 18, 31, 45, 0)
                .to_zoned(jiff::tz::TimeZone::UTC)
                .unwrap_or_else(|_| current::now())
        } else {
            current::now()
        };
        golayout::format(&now, layout)
    });
    env.add_function(
        "__django_widthratio",
        |value: Value, max: Value, width: Value| -> Result<i64, Error> {
            let ratio = to_float(&value) / to_float(&max) * to_float(&width) + 0.5;
            if !ratio.is_finite() {
                return Err(error("widthratio: the max is 0, so there is no ratio"));
            }
            Ok(ratio.ceil() as i64)
        },
    );
}

/// `forloop` as a value (passed to a macro, set to a name): pongo2's
/// loop information, its fields read by their pongo2 (and Django) names.
#[derive(Debug)]
struct ForLoop(Value);

impl minijinja::value::Object for ForLoop {
    fn get_value(self: &std::sync::Arc<Self>, key: &Value) -> Option<Value> {
        let field = match key.as_str()? {
            "Counter" | "counter" => "index",
            "Counter0" | "counter0" => "index0",
            "Revcounter" | "revcounter" => "revindex",
            "Revcounter0" | "revcounter0" => "revindex0",
            "First" | "first" => "first",
            "Last" | "last" => "last",
            _ => return None,
        };
        self.0
            .get_attr(field)
            .ok()
            .filter(|value| !value.is_undefined())
    }

    fn render(self: &std::sync::Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result
    where
        Self: Sized + 'static,
    {
        // What pongo2 prints for its loop information.
        f.write_str("<pongo2.tagForLoopInformation Value>")
    }
}

/// `{% cycle a b %}` (tag `id`): the value for this use of the tag; a value
/// that is a named cycle (`{% cycle row %}`) moves that cycle on and prints
/// its new value, unless it is silent.
fn cycle(state: &mut State, id: u64, args: Rest<Value>) -> Result<String, Error> {
    let used = current::next_cycle(cycle_key(state, id));
    let value = pick(&args, used);
    let Some(named) = value.downcast_object_ref::<Cycle>() else {
        return Ok(to_string(&value));
    };
    let next = cycle_value(
        state,
        &named.values,
        current::next_cycle(named.id),
        named.count,
    )?;
    let text = to_string(&next);
    if let Ok(mut current) = named.current.lock() {
        *current = next;
    }
    Ok(if named.silent { String::new() } else { text })
}

/// The count of cycle tag `id` in the copy of its file the render is in
/// (pongo2 parses an included file once per include tag).
fn cycle_key(state: &State, id: u64) -> u64 {
    use std::hash::{Hash, Hasher};
    let site = state.lookup("__django_site_path");
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    site.as_ref()
        .and_then(Value::as_str)
        .unwrap_or("")
        .hash(&mut hasher);
    id.hash(&mut hasher);
    hasher.finish()
}

/// `values[used % len]`; nothing for no values.
fn pick(values: &[Value], used: u64) -> Value {
    let len = values.len() as u64;
    match len {
        0 => Value::from(()),
        _ => values
            .get(usize::try_from(used % len).unwrap_or(0))
            .cloned()
            .unwrap_or_default(),
    }
}

/// Value `used % count` of a named cycle: `values` is the macro that
/// prints the one asked for, evaluated now (pongo2 evaluates a named
/// cycle's values when `{% cycle name %}` runs).
fn cycle_value(state: &mut State, values: &Value, used: u64, count: u64) -> Result<Value, Error> {
    let index = used.checked_rem(count).unwrap_or(0);
    values.call(state, &[Value::from(index)])
}

/// A cycle named by `{% cycle … as name %}`: prints its current value.
#[derive(Debug)]
struct Cycle {
    /// The number of the tag that named it (its count moves it on).
    id: u64,
    silent: bool,
    /// The macro that prints value `i` of the tag (see [`cycle_value`]).
    values: Value,
    /// How many values the tag has.
    count: u64,
    current: std::sync::Mutex<Value>,
}

impl minijinja::value::Object for Cycle {
    fn repr(self: &std::sync::Arc<Self>) -> minijinja::value::ObjectRepr {
        minijinja::value::ObjectRepr::Plain
    }

    fn render(self: &std::sync::Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result
    where
        Self: Sized + 'static,
    {
        let current = self
            .current
            .lock()
            .map(|value| value.clone())
            .unwrap_or_default();
        f.write_str(&to_string(&current))
    }
}

// pongo2's conversions (its `Value.String`, `Integer`, `Float`, `IsTrue`,
// `Len`) on minijinja's values.

/// pongo2's text of a value: floats with six decimals (Go's `%f`), `True`
/// and `False`, nothing for nil.
pub(super) fn to_string(value: &Value) -> String {
    if value.is_undefined() || value.is_none() {
        return String::new();
    }
    if let Some(text) = value.as_str() {
        return text.to_string();
    }
    if let Some(flag) = as_bool(value) {
        return if flag { "True" } else { "False" }.to_string();
    }
    if is_float(value) {
        return go_float(to_float(value));
    }
    value.to_string()
}

/// Go's `%f`.
fn go_float(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else {
        format!("{value:.6}")
    }
}

fn as_bool(value: &Value) -> Option<bool> {
    (value.kind() == minijinja::value::ValueKind::Bool).then(|| value.is_true())
}

fn is_number(value: &Value) -> bool {
    value.is_number()
}

fn is_float(value: &Value) -> bool {
    value.is_number() && !value.is_integer()
}

fn to_integer(value: &Value) -> i64 {
    if value.is_integer() {
        return value.as_i64().unwrap_or_else(|| {
            // A u64 beyond i64: Go's int() wraps it.
            u64::try_from(value.clone()).map_or(0, |n| n as i64)
        });
    }
    if value.is_number() || value.as_str().is_some() {
        let float = to_float(value);
        return if float.is_nan() { 0 } else { float as i64 };
    }
    0
}

fn to_float(value: &Value) -> f64 {
    if value.is_number() {
        return f64::try_from(value.clone()).unwrap_or(0.0);
    }
    value
        .as_str()
        .and_then(|text| text.parse::<f64>().ok())
        .unwrap_or(0.0)
}

fn is_true(value: &Value) -> bool {
    if value.is_undefined() {
        return false;
    }
    value.is_true()
}

fn length_of(value: &Value) -> i64 {
    if let Some(text) = value.as_str() {
        return text.chars().count() as i64;
    }
    match value.kind() {
        minijinja::value::ValueKind::Seq
        | minijinja::value::ValueKind::Map
        | minijinja::value::ValueKind::Iterable => value.len().map_or(0, |n| n as i64),
        _ => 0,
    }
}

fn items(value: &Value) -> Vec<Value> {
    if let Some(text) = value.as_str() {
        return text.chars().map(|c| Value::from(c.to_string())).collect();
    }
    match value.kind() {
        minijinja::value::ValueKind::Seq | minijinja::value::ValueKind::Iterable => value
            .try_iter()
            .map(|iter| iter.collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn can_slice(value: &Value) -> bool {
    value.as_str().is_some() || value.kind() == minijinja::value::ValueKind::Seq
}

fn text(value: String) -> Result<Value, Error> {
    Ok(Value::from(value))
}

// The filters, in pongo2's order of `filters_builtin.go`.

fn add(value: &Value, argument: &Value) -> Result<Value, Error> {
    if is_number(value) && is_number(argument) {
        if is_float(value) || is_float(argument) {
            return Ok(Value::from(to_float(value) + to_float(argument)));
        }
        return Ok(Value::from(
            to_integer(value).wrapping_add(to_integer(argument)),
        ));
    }
    text(to_string(value) + &to_string(argument))
}

fn addslashes(value: &Value, _: &Value) -> Result<Value, Error> {
    text(
        to_string(value)
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\'', "\\'"),
    )
}

fn capfirst(value: &Value, _: &Value) -> Result<Value, Error> {
    if length_of(value) <= 0 {
        return text(String::new());
    }
    let string = to_string(value);
    let mut chars = string.chars();
    let first: String = chars
        .next()
        .map(|c| c.to_uppercase().collect())
        .unwrap_or_default();
    text(first + chars.as_str())
}

/// The padding to add, once the width asked for is known to be sane.
fn checked_width(width: i64, padding: i64) -> Result<usize, Error> {
    if width.saturating_abs() > MAX_WIDTH {
        return Err(error(format!(
            "a width of {width} is more than {MAX_WIDTH} characters"
        )));
    }
    Ok(usize::try_from(padding).unwrap_or(0))
}

fn center(value: &Value, argument: &Value) -> Result<Value, Error> {
    let width = to_integer(argument);
    let len = length_of(value);
    if width <= len {
        return Ok(value.clone());
    }
    let spaces = checked_width(width, width - len)?;
    let left = spaces / 2 + spaces % 2;
    let right = spaces / 2;
    text(format!(
        "{}{}{}",
        " ".repeat(left),
        to_string(value),
        " ".repeat(right)
    ))
}

fn cut(value: &Value, argument: &Value) -> Result<Value, Error> {
    let cut = to_string(argument);
    let string = to_string(value);
    if cut.is_empty() {
        // Go's Replace with an empty old string inserts between runes;
        // replacing with "" leaves the text as it was.
        return text(string);
    }
    text(string.replace(&cut, ""))
}

/// A time from the data: an RFC 3339 string (its offset kept) or a Unix
/// timestamp in seconds.
fn to_time(value: &Value) -> Option<jiff::Zoned> {
    if value.is_number() {
        let seconds = to_integer(value);
        return jiff::Timestamp::from_second(seconds)
            .ok()
            .map(|ts| ts.to_zoned(jiff::tz::TimeZone::UTC));
    }
    let text = value.as_str()?.trim();
    let timestamp: jiff::Timestamp = text.parse().ok()?;
    let offset = if text.ends_with('Z') || text.ends_with('z') {
        jiff::tz::Offset::UTC
    } else {
        let tail = text.get(text.len().checked_sub(6)?..)?;
        let sign = match tail.as_bytes().first() {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => return None,
        };
        let hours: i32 = tail.get(1..3)?.parse().ok()?;
        let minutes: i32 = tail.get(4..6)?.parse().ok()?;
        jiff::tz::Offset::from_seconds(sign * (hours * 3600 + minutes * 60)).ok()?
    };
    let zone = if offset == jiff::tz::Offset::UTC {
        jiff::tz::TimeZone::UTC
    } else {
        jiff::tz::TimeZone::fixed(offset)
    };
    Some(timestamp.to_zoned(zone))
}

fn date(value: &Value, argument: &Value) -> Result<Value, Error> {
    let Some(time) = to_time(value) else {
        return Err(error(format!(
            "date needs a time: an RFC 3339 string such as \"2026-11-21T09:05:03Z\" or Unix seconds, not {}",
            describe(value)
        )));
    };
    text(golayout::format(&time, &to_string(argument)))
}

fn describe(value: &Value) -> String {
    match value.as_str() {
        Some(text) => format!("{text:?}"),
        None => value.kind().to_string(),
    }
}

fn default(value: &Value, argument: &Value) -> Result<Value, Error> {
    Ok(if is_true(value) {
        value.clone()
    } else {
        argument.clone()
    })
}

fn default_if_none(value: &Value, argument: &Value) -> Result<Value, Error> {
    Ok(if value.is_undefined() || value.is_none() {
        argument.clone()
    } else {
        value.clone()
    })
}

fn divisibleby(value: &Value, argument: &Value) -> Result<Value, Error> {
    let divisor = to_integer(argument);
    if divisor == 0 {
        return Ok(Value::from(false));
    }
    Ok(Value::from(
        to_integer(value).checked_rem(divisor).unwrap_or(0) == 0,
    ))
}

fn escape(value: &Value, _: &Value) -> Result<Value, Error> {
    text(
        to_string(value)
            .replace('&', "&amp;")
            .replace('>', "&gt;")
            .replace('<', "&lt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;"),
    )
}

fn safe(value: &Value, _: &Value) -> Result<Value, Error> {
    Ok(value.clone())
}

fn escapejs(value: &Value, _: &Value) -> Result<Value, Error> {
    let input = to_string(value);
    let mut out = String::with_capacity(input.len());
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('r') => {
                    chars.next();
                    out.push_str("\\u000D");
                    continue;
                }
                Some('n') => {
                    chars.next();
                    out.push_str("\\u000A");
                    continue;
                }
                _ => {}
            }
        }
        if c.is_ascii_alphabetic() || c == ' ' || c == '/' {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{:04X}", u32::from(c)));
        }
    }
    text(out)
}

fn first(value: &Value, _: &Value) -> Result<Value, Error> {
    if can_slice(value) && length_of(value) > 0 {
        return Ok(items(value).into_iter().next().unwrap_or_default());
    }
    text(String::new())
}

fn last(value: &Value, _: &Value) -> Result<Value, Error> {
    if can_slice(value) && length_of(value) > 0 {
        return Ok(items(value).pop().unwrap_or_default());
    }
    text(String::new())
}

fn floatformat(value: &Value, argument: &Value) -> Result<Value, Error> {
    let float = to_float(value);
    let mut decimals = if argument.is_none() || argument.is_undefined() {
        -1
    } else {
        to_integer(argument)
    };
    let mut trim = !is_number(argument);
    if decimals <= 0 {
        decimals = decimals.saturating_neg();
        trim = true;
    }
    if trim && float.trunc() == float && float.is_finite() {
        return Ok(Value::from(to_integer(value)));
    }
    if decimals > MAX_DECIMALS {
        return Err(error(format!(
            "floatformat: {decimals} decimals is more than {MAX_DECIMALS}"
        )));
    }
    let decimals = usize::try_from(decimals).unwrap_or(0);
    if !float.is_finite() {
        return text(go_float(float));
    }
    text(format!("{float:.decimals$}"))
}

fn get_digit(value: &Value, argument: &Value) -> Result<Value, Error> {
    let position = to_integer(argument);
    let string = to_string(value);
    let len = string.len() as i64;
    if position <= 0 || position > len {
        return Ok(value.clone());
    }
    let byte = string
        .as_bytes()
        .get(usize::try_from(len - position).unwrap_or(0))
        .copied()
        .unwrap_or(b'0');
    Ok(Value::from(i64::from(byte.wrapping_sub(b'0'))))
}

/// Go's `url.QueryEscape`.
fn query_escape(input: &str, out: &mut String) {
    for byte in input.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(byte))
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
}

fn iriencode(value: &Value, _: &Value) -> Result<Value, Error> {
    const IRI: &str = "/#%[]=:;$&()+,!?*@'~";
    let mut out = String::new();
    let mut buffer = [0u8; 4];
    for c in to_string(value).chars() {
        if IRI.contains(c) {
            out.push(c);
        } else {
            query_escape(c.encode_utf8(&mut buffer), &mut out);
        }
    }
    text(out)
}

fn join(value: &Value, argument: &Value) -> Result<Value, Error> {
    if !can_slice(value) {
        return Ok(value.clone());
    }
    let separator = to_string(argument);
    let parts: Vec<String> = items(value).iter().map(to_string).collect();
    text(parts.join(&separator))
}

fn length(value: &Value, _: &Value) -> Result<Value, Error> {
    Ok(Value::from(length_of(value)))
}

fn length_is(value: &Value, argument: &Value) -> Result<Value, Error> {
    Ok(Value::from(length_of(value) == to_integer(argument)))
}

fn linebreaks(value: &Value, _: &Value) -> Result<Value, Error> {
    if length_of(value) == 0 {
        return Ok(value.clone());
    }
    let string = to_string(value);
    let lines: Vec<&str> = string.split('\n').collect();
    let mut out = String::new();
    let mut opened = false;
    for (index, line) in lines.iter().enumerate() {
        if !opened {
            out.push_str("<p>");
            opened = true;
        }
        out.push_str(line);
        if index + 1 < lines.len() && !line.trim().is_empty() {
            if lines
                .get(index + 1)
                .is_some_and(|next| next.trim().is_empty())
            {
                out.push_str("</p>");
                opened = false;
            } else {
                out.push_str("<br />");
            }
        }
    }
    if opened {
        out.push_str("</p>");
    }
    text(out)
}

fn linebreaksbr(value: &Value, _: &Value) -> Result<Value, Error> {
    text(to_string(value).replace('\n', "<br />"))
}

fn linenumbers(value: &Value, _: &Value) -> Result<Value, Error> {
    let numbered: Vec<String> = to_string(value)
        .split('\n')
        .enumerate()
        .map(|(index, line)| format!("{}. {line}", index + 1))
        .collect();
    text(numbered.join("\n"))
}

fn ljust(value: &Value, argument: &Value) -> Result<Value, Error> {
    let width = to_integer(argument);
    let times = checked_width(width, width.saturating_sub(length_of(value)).max(0))?;
    text(format!("{}{}", to_string(value), " ".repeat(times)))
}

/// Go's `%Ns` (right-aligned; a negative N aligns left).
fn rjust(value: &Value, argument: &Value) -> Result<Value, Error> {
    let width = to_integer(argument);
    let string = to_string(value);
    let len = string.chars().count() as i64;
    let pad = checked_width(width, (width.saturating_abs() - len).max(0))?;
    text(if width < 0 {
        format!("{string}{}", " ".repeat(pad))
    } else {
        format!("{}{string}", " ".repeat(pad))
    })
}

fn lower(value: &Value, _: &Value) -> Result<Value, Error> {
    text(to_string(value).to_lowercase())
}

fn upper(value: &Value, _: &Value) -> Result<Value, Error> {
    text(to_string(value).to_uppercase())
}

fn make_list(value: &Value, _: &Value) -> Result<Value, Error> {
    Ok(Value::from(
        to_string(value)
            .chars()
            .map(|c| c.to_string())
            .collect::<Vec<_>>(),
    ))
}

fn phone2numeric(value: &Value, _: &Value) -> Result<Value, Error> {
    text(
        to_string(value)
            .chars()
            .map(|c| match c.to_ascii_lowercase() {
                'a' | 'b' | 'c' => '2',
                'd' | 'e' | 'f' => '3',
                'g' | 'h' | 'i' => '4',
                'j' | 'k' | 'l' => '5',
                'm' | 'n' | 'o' => '6',
                'p' | 'q' | 'r' | 's' => '7',
                't' | 'u' | 'v' => '8',
                'w' | 'x' | 'y' | 'z' => '9',
                _ => c,
            })
            .collect(),
    )
}

fn pluralize(value: &Value, argument: &Value) -> Result<Value, Error> {
    if !is_number(value) {
        return Err(error("pluralize works only on numbers"));
    }
    let one = to_integer(value) == 1;
    if length_of(argument) > 0 {
        let endings = to_string(argument);
        let endings: Vec<&str> = endings.split(',').collect();
        return match endings.as_slice() {
            [plural] => text(if one { "" } else { plural }.to_string()),
            [singular, plural] => text(if one { singular } else { plural }.to_string()),
            _ => Err(error(
                "pluralize takes at most two endings: pluralize:\"y,ies\"",
            )),
        };
    }
    text(if one { "" } else { "s" }.to_string())
}

/// Removes `<tag>`, `</tag>`, `<tag/>` and `</tag/>` for each tag named.
fn removetags(value: &Value, argument: &Value) -> Result<Value, Error> {
    let mut string = to_string(value);
    for tag in to_string(argument).split(',') {
        let mut out = String::with_capacity(string.len());
        let mut rest = string.as_str();
        while let Some(at) = rest.find('<') {
            let (before, from) = rest.split_at(at);
            out.push_str(before);
            let after = from.get(1..).unwrap_or("");
            let after = after.strip_prefix('/').unwrap_or(after);
            let matched = after
                .strip_prefix(tag)
                .map(|tail| tail.strip_prefix('/').unwrap_or(tail))
                .and_then(|tail| tail.strip_prefix('>'));
            match matched {
                Some(tail) => rest = tail,
                None => {
                    out.push('<');
                    rest = from.get(1..).unwrap_or("");
                }
            }
        }
        out.push_str(rest);
        string = out;
    }
    text(string.trim().to_string())
}

fn slice(value: &Value, argument: &Value) -> Result<Value, Error> {
    let spec = to_string(argument);
    let Some((from, to)) = spec.split_once(':').filter(|(_, to)| !to.contains(':')) else {
        return Err(error(
            "slice takes \"from:to\" (either may be left out, the ':' may not)",
        ));
    };
    if !can_slice(value) {
        return Ok(value.clone());
    }
    let len = length_of(value);
    let from = to_integer(&Value::from(from)).clamp(0, len);
    let wanted = to_integer(&Value::from(to));
    let to = if wanted >= from && wanted <= len {
        wanted
    } else {
        len
    };
    let (from, to) = (
        usize::try_from(from).unwrap_or(0),
        usize::try_from(to).unwrap_or(0),
    );
    if let Some(string) = value.as_str() {
        return text(string.chars().skip(from).take(to - from).collect());
    }
    Ok(Value::from(
        items(value)
            .into_iter()
            .skip(from)
            .take(to - from)
            .collect::<Vec<_>>(),
    ))
}

fn split(value: &Value, argument: &Value) -> Result<Value, Error> {
    let string = to_string(value);
    let separator = to_string(argument);
    let parts: Vec<String> = if separator.is_empty() {
        string.chars().map(|c| c.to_string()).collect()
    } else {
        string.split(&separator).map(str::to_string).collect()
    };
    Ok(Value::from(parts))
}

/// Go's `fmt.Sprintf(format, value)`, with teleprompt's Go `printf`.
fn stringformat(value: &Value, argument: &Value) -> Result<Value, Error> {
    let format = to_string(argument);
    let string;
    let go = if value.is_undefined() || value.is_none() {
        GoValue::Null
    } else if let Some(flag) = as_bool(value) {
        GoValue::Bool(flag)
    } else if is_float(value) {
        GoValue::Float(to_float(value))
    } else if value.is_integer() {
        GoValue::Int(to_integer(value))
    } else if let Some(text) = value.as_str() {
        GoValue::Str(text)
    } else {
        string = value.to_string();
        GoValue::Str(&string)
    };
    let mut out = String::new();
    gofmt::sprintf(&mut out, &format, &[go]);
    text(out)
}

fn striptags(value: &Value, _: &Value) -> Result<Value, Error> {
    let string = to_string(value);
    let mut out = String::with_capacity(string.len());
    let mut rest = string.as_str();
    while let Some(at) = rest.find('<') {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        match from.find('>') {
            Some(end) => rest = from.get(end + 1..).unwrap_or(""),
            None => {
                out.push_str(from);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    text(out.trim().to_string())
}

/// Go's `strings.Title(strings.ToLower(s))`.
fn title(value: &Value, _: &Value) -> Result<Value, Error> {
    let Some(string) = value.as_str() else {
        return text(String::new());
    };
    let mut out = String::with_capacity(string.len());
    let mut after_separator = true;
    for c in string.to_lowercase().chars() {
        if after_separator {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        after_separator = if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else if c.is_alphanumeric() {
            false
        } else {
            c.is_whitespace()
        };
    }
    text(out)
}

fn truncatechars(value: &Value, argument: &Value) -> Result<Value, Error> {
    let string = to_string(value);
    let len = string.chars().count() as i64;
    let wanted = to_integer(argument).max(0);
    if wanted < len {
        let wanted = usize::try_from(wanted).unwrap_or(0);
        if wanted >= 3 {
            return text(string.chars().take(wanted - 3).collect::<String>() + "...");
        }
        return text(string.chars().take(wanted).collect());
    }
    text(string)
}

fn truncatewords(value: &Value, argument: &Value) -> Result<Value, Error> {
    let string = to_string(value);
    let words: Vec<&str> = string.split_whitespace().collect();
    let wanted = to_integer(argument);
    if wanted <= 0 {
        return text(String::new());
    }
    let wanted = usize::try_from(wanted).unwrap_or(usize::MAX);
    let mut out: Vec<&str> = words.iter().take(wanted).copied().collect();
    if wanted < words.len() {
        out.push("...");
    }
    text(out.join(" "))
}

fn urlencode(value: &Value, _: &Value) -> Result<Value, Error> {
    let mut out = String::new();
    query_escape(&to_string(value), &mut out);
    text(out)
}

fn wordcount(value: &Value, _: &Value) -> Result<Value, Error> {
    Ok(Value::from(
        to_string(value).split_whitespace().count() as i64
    ))
}

/// pongo2's `wordwrap:N` puts N words on each line (not Django's N
/// characters).
fn wordwrap(value: &Value, argument: &Value) -> Result<Value, Error> {
    let per_line = to_integer(argument);
    if per_line <= 0 {
        return Ok(value.clone());
    }
    let string = to_string(value);
    let words: Vec<&str> = string.split_whitespace().collect();
    let per_line = usize::try_from(per_line).unwrap_or(usize::MAX);
    let lines: Vec<String> = words.chunks(per_line).map(|line| line.join(" ")).collect();
    text(lines.join("\n"))
}

fn yesno(value: &Value, argument: &Value) -> Result<Value, Error> {
    let choices = to_string(argument);
    let mut words = ["yes", "no", "maybe"];
    if !choices.is_empty() {
        let custom: Vec<&str> = choices.split(',').collect();
        match custom.as_slice() {
            [yes, no] => words = [yes, no, "maybe"],
            [yes, no, maybe] => words = [yes, no, maybe],
            _ => {
                return Err(error(format!(
                    "yesno takes two or three choices, as \"yes,no,maybe\" (got {choices:?})"
                )))
            }
        }
    }
    let [yes, no, maybe] = words;
    text(
        if value.is_undefined() || value.is_none() {
            maybe
        } else if is_true(value) {
            yes
        } else {
            no
        }
        .to_string(),
    )
}

fn float(value: &Value, _: &Value) -> Result<Value, Error> {
    Ok(Value::from(to_float(value)))
}

fn integer(value: &Value, _: &Value) -> Result<Value, Error> {
    Ok(Value::from(to_integer(value)))
}

/// `{% spaceless %}`: removes whitespace between a tag's `>` and the next
/// `<`, as pongo2's pattern `(<.*>)\s+(<.*>)` does (each tag on its line).
fn spaceless(value: &Value, _: &Value) -> Result<Value, Error> {
    let mut string = to_string(value);
    loop {
        let changed = spaceless_pass(&string);
        match changed {
            Some(next) => string = next,
            None => return text(string),
        }
    }
}

fn spaceless_pass(input: &str) -> Option<String> {
    let is_space = |c: char| matches!(c, '\t' | '\n' | '\x0b' | '\x0c' | '\r' | ' ');
    let bytes = input.as_bytes();
    let mut out = String::with_capacity(input.len());
    let mut changed = false;
    let mut at = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes.get(i) == Some(&b'>') {
            let start = i + 1;
            let end = input
                .get(start..)
                .and_then(|rest| rest.find(|c: char| !is_space(c)))
                .map_or(input.len(), |n| start + n);
            let line_start = input
                .get(..i)
                .and_then(|t| t.rfind('\n'))
                .map_or(0, |n| n + 1);
            let left = input.get(line_start..i).is_some_and(|t| t.contains('<'));
            let right_line = input
                .get(end..)
                .map(|t| t.split('\n').next().unwrap_or(""))
                .unwrap_or("");
            let right =
                right_line.starts_with('<') && right_line.get(1..).is_some_and(|t| t.contains('>'));
            if end > start && left && right {
                out.push_str(input.get(at..start).unwrap_or(""));
                at = end;
                changed = true;
                i = end;
                continue;
            }
        }
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(input.get(at..).unwrap_or(""));
    Some(out)
}

/// pongo2's order for `sorted`: numbers by value when both are integers
/// or both floats, else by their text.
fn pongo2_order(a: &Value, b: &Value) -> Ordering {
    if a.is_integer() && b.is_integer() {
        return to_integer(a).cmp(&to_integer(b));
    }
    if is_float(a) && is_float(b) {
        return to_float(a)
            .partial_cmp(&to_float(b))
            .unwrap_or(Ordering::Equal);
    }
    to_string(a).cmp(&to_string(b))
}

/// What `{% for %}` iterates, as pongo2 does: a list's items, a string's
/// characters, a map's keys (or `[key, value]` pairs for `for k, v`), in
/// the order asked for; nothing for other values.
fn for_items(
    state: &State,
    value: &Value,
    reversed: bool,
    sorted: bool,
    pairs: bool,
) -> Result<Value, Error> {
    let value = check_missing(state, value)?;
    let mut list: Vec<Value> = match value.kind() {
        minijinja::value::ValueKind::Map => {
            value.try_iter().map(|i| i.collect()).unwrap_or_default()
        }
        _ => items(&value),
    };
    if sorted {
        list.sort_by(pongo2_order);
    }
    if reversed {
        list.reverse();
    }
    if pairs {
        let is_map = value.kind() == minijinja::value::ValueKind::Map;
        list = list
            .into_iter()
            .map(|key| {
                let item = if is_map {
                    value.get_item(&key).unwrap_or_default()
                } else {
                    Value::from(())
                };
                Value::from(vec![key, item])
            })
            .collect();
    }
    Ok(Value::from(list))
}

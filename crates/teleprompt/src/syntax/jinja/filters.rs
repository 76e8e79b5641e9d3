//! Filters and functions teleprompt adds to minijinja: collection filters
//! that do not swallow a missing value, `toJSON`, host functions.

use minijinja::value::{Kwargs, Rest};
use minijinja::{Environment, ErrorKind, UndefinedBehavior, Value as JValue};

use super::errors::HostFailure;
use super::value::{json_value, to_json_value};
use crate::diagnostics::TemplateError;
use crate::functions::{self, Function};

/// minijinja's filters that take a collection, each with whether it takes
/// a map (rather than a list).
fn collection_filters() -> Vec<(&'static str, JValue, bool)> {
    use minijinja::filters as f;
    vec![
        // Jinja2's `join`, which prints items with Python's `str()`.
        (
            "join",
            JValue::from_function(super::python::join_filter),
            false,
        ),
        ("length", JValue::from_function(f::length), false),
        ("count", JValue::from_function(f::length), false),
        ("first", JValue::from_function(f::first), false),
        ("last", JValue::from_function(f::last), false),
        ("list", JValue::from_function(f::list), false),
        ("sort", JValue::from_function(f::sort), false),
        ("reverse", JValue::from_function(f::reverse), false),
        ("unique", JValue::from_function(f::unique), false),
        ("sum", JValue::from_function(f::sum), false),
        ("min", JValue::from_function(f::min), false),
        ("max", JValue::from_function(f::max), false),
        ("batch", JValue::from_function(f::batch), false),
        ("slice", JValue::from_function(f::slice), false),
        ("map", JValue::from_function(f::map), false),
        ("select", JValue::from_function(f::select), false),
        ("reject", JValue::from_function(f::reject), false),
        ("selectattr", JValue::from_function(f::selectattr), false),
        ("rejectattr", JValue::from_function(f::rejectattr), false),
        ("groupby", JValue::from_function(f::groupby), false),
        ("chain", JValue::from_function(f::chain), false),
        ("zip", JValue::from_function(f::zip), false),
        ("items", JValue::from_function(f::items), true),
        ("dictsort", JValue::from_function(f::dictsort), true),
    ]
}

/// minijinja lets some collection filters take a missing value quietly
/// (`{{ issue.lables | join(", ") }}` prints nothing), which would hide a
/// misspelled key. Each one here treats a missing input alike: an error
/// naming the path in `strict` and `semi`, an empty collection in
/// `lenient` (so `length` is 0, as in Jinja2), in a chat template too.
///
/// With `generators` (a chat template), `map`, `select`, `reject`,
/// `selectattr` and `rejectattr` return Jinja2's generators
/// (`python::generator`).
pub(super) fn guard_collection_filters(env: &mut Environment<'static>, generators: bool) {
    use super::python::generator::{Generator, GENERATOR_FILTERS};
    for (name, builtin, takes_map) in collection_filters() {
        let generator = generators && GENERATOR_FILTERS.contains(&name);
        env.add_filter(
            name,
            move |state: &mut minijinja::State,
                  args: Rest<JValue>,
                  kwargs: Kwargs|
                  -> Result<JValue, minijinja::Error> {
                let mut args = args.0;
                if let Some(first) = args.first_mut().filter(|value| value.is_undefined()) {
                    // Lenient (Jinja2's own `Undefined`, a chat template's
                    // default) and chainable take it as empty:
                    // `message['content']|length` is 0, as in Jinja2.
                    if matches!(
                        state.undefined_behavior(),
                        UndefinedBehavior::Strict | UndefinedBehavior::SemiStrict
                    ) {
                        return Err(minijinja::Error::new(
                            ErrorKind::UndefinedError,
                            "undefined value",
                        ));
                    }
                    *first = if takes_map {
                        JValue::from(std::collections::BTreeMap::<String, JValue>::new())
                    } else {
                        JValue::from(Vec::<JValue>::new())
                    };
                }
                // `"text"|list` is a list of characters: counted first.
                if name == "list" {
                    if let Some(text) = args.first().and_then(JValue::as_str) {
                        super::growth::check_items(text.chars().count())?;
                    }
                }
                super::work::charge_filter(name, args.first())?;
                if name == "join" {
                    // Called directly: no second round of argument parsing.
                    return super::python::join_filter(state, Rest(args), kwargs);
                }
                let kwargs = positional_as_keywords(name, &mut args, kwargs)?;
                // Keyword arguments go on to the builtin, which checks them.
                if kwargs.args().next().is_some() {
                    args.push(JValue::from(kwargs));
                }
                let result = builtin.call(state, &args)?;
                match generator {
                    true => Generator::wrap(result),
                    false => Ok(result),
                }
            },
        );
    }
}

/// The positional arguments Jinja2 takes where minijinja takes keywords
/// only, in Jinja2's order: `sort(true)` is `sort(reverse=true)`.
fn positional_names(filter: &str) -> &'static [&'static str] {
    match filter {
        "sort" => &["reverse", "case_sensitive", "attribute"],
        "dictsort" => &["case_sensitive", "by", "reverse"],
        "unique" => &["case_sensitive", "attribute"],
        "groupby" => &["attribute", "default", "case_sensitive"],
        _ => &[],
    }
}

/// Moves the positional arguments after a filter's input into its
/// keywords, by Jinja2's names (`positional_names`): an argument given
/// both ways, or one past the names, is an error. An integer `attribute`
/// (`groupby(0)`) is an index, as in Jinja2.
fn positional_as_keywords(
    filter: &str,
    args: &mut Vec<JValue>,
    kwargs: Kwargs,
) -> Result<Kwargs, minijinja::Error> {
    let names = positional_names(filter);
    if names.is_empty() || args.len() < 2 {
        return Ok(kwargs);
    }
    let positional = args.split_off(1);
    if positional.len() > names.len() {
        return Err(minijinja::Error::new(
            ErrorKind::TooManyArguments,
            format!("{filter} takes at most {} arguments", names.len()),
        ));
    }
    let mut all: Vec<(String, JValue)> = Vec::new();
    for (name, value) in names.iter().zip(positional) {
        let value = match (*name, value.as_i64()) {
            ("attribute", Some(index)) => JValue::from(index.to_string()),
            _ => value,
        };
        all.push((name.to_string(), value));
    }
    for name in kwargs.args() {
        if all.iter().any(|(given, _)| given == name) {
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!("{filter} got {name} twice"),
            ));
        }
        all.push((name.to_string(), kwargs.get::<JValue>(name)?));
    }
    Ok(all.into_iter().collect())
}

/// Makes each host function both a function (`fetch(id)`) and a filter
/// (`id | fetch`), under its name in Jinja (`Plugin_Function` for a
/// plugin's). A name the dialect already uses for a built-in filter
/// (`builtin_filters`) or function is an error.
pub(super) fn register_host_functions(
    env: &mut Environment<'static>,
    hosts: &[(String, Function)],
    builtin_filters: &[&str],
) -> Result<(), TemplateError> {
    for (name, function) in hosts {
        if builtin_filters.contains(&name.as_str())
            || env.globals().any(|(global, _)| global == name)
        {
            return Err(TemplateError::parse(
                None,
                format!(
                    "host function \"{name}\" has the name of a built-in Jinja filter or function"
                ),
            ));
        }
        let call = {
            let function = function.clone();
            let name = name.clone();
            move |args: Rest<JValue>, kwargs: Kwargs| -> Result<JValue, minijinja::Error> {
                let args = args
                    .iter()
                    .map(to_json_value)
                    .collect::<Result<Vec<_>, _>>()?;
                // Keyword arguments (`fetch(id, depth=2)`) go by name, as
                // Handlebars hash arguments do.
                let mut named = Vec::new();
                for key in kwargs.args() {
                    let value: JValue = kwargs.get(key)?;
                    named.push((key.to_string(), to_json_value(&value)?));
                }
                let result = function.call(&name, args, named).map_err(|failure| {
                    minijinja::Error::new(ErrorKind::InvalidOperation, failure.message.clone())
                        .with_source(HostFailure(failure))
                })?;
                Ok(json_value(result))
            }
        };
        env.add_function(name.clone(), call.clone());
        env.add_filter(name.clone(), call);
    }
    Ok(())
}

/// The result of a message function as minijinja wants it.
pub(super) fn template_call(result: Result<String, String>) -> Result<String, minijinja::Error> {
    result.map_err(|message| minijinja::Error::new(ErrorKind::InvalidOperation, message))
}

/// `toJSON`, teleprompt's shared function (as in Go and Handlebars
/// syntax): compact JSON without spaces (or indented with `indent`).
/// Jinja's `tojson` is Python's (`python::json`).
pub(super) fn to_json_filter(
    value: &JValue,
    indent: Option<usize>,
    kwargs: Kwargs,
) -> Result<String, minijinja::Error> {
    let indent = match kwargs.get::<Option<usize>>("indent")? {
        Some(indent) => Some(indent),
        None => indent,
    };
    kwargs.assert_all_used()?;
    let json = to_json_value(value)?;
    Ok(match indent {
        Some(indent) => {
            // Checked before it is built: `toJSON(10**13)` is the output-limit
            // error, not an indent string of 10 TB.
            let compact = functions::to_json(&json);
            match indented_extra(&json, 0, indent) {
                // A value with no item on a line of its own is its compact text.
                0 => compact,
                extra => {
                    super::python::Out::new().reserve(compact.len().saturating_add(extra))?;
                    functions::to_json_pretty(&json, indent)
                }
            }
        }
        None => functions::to_json(&json),
    })
}

/// The bytes indenting adds to `value`'s compact JSON at `level`: each item
/// of a non-empty list or map on a line of its own, one indent deeper, its
/// closing bracket on its own line (and `": "` for `":"`).
fn indented_extra(value: &serde_json::Value, level: usize, indent: usize) -> usize {
    let line = |level: usize| indent.saturating_mul(level).saturating_add(2);
    let items: Box<dyn Iterator<Item = &serde_json::Value>> = match value {
        serde_json::Value::Array(items) if !items.is_empty() => Box::new(items.iter()),
        serde_json::Value::Object(map) if !map.is_empty() => Box::new(map.values()),
        _ => return 0,
    };
    items
        .map(|item| line(level + 1).saturating_add(indented_extra(item, level + 1, indent)))
        .fold(line(level), usize::saturating_add)
}

/// Jinja2 filters minijinja keeps in minijinja-contrib: `truncate`,
/// `striptags`; Jinja2's `filesizeformat`, `center`, `wordcount` and
/// `xmlattr` (teleprompt's own); the `callable` test; and Jinja2's global
/// `cycler` and `joiner` (minijinja-contrib's).
pub(super) fn register_jinja2_extras(env: &mut Environment<'static>) {
    use minijinja_contrib::filters;
    env.add_filter("truncate", truncate);
    env.add_filter("filesizeformat", filesizeformat);
    env.add_filter("striptags", filters::striptags);
    env.add_filter("center", center);
    env.add_filter("wordcount", wordcount);
    env.add_filter("xmlattr", xmlattr);
    env.add_test("callable", is_callable);
    env.add_function("namespace", namespace);
    // Jinja2's `cycler(*items)`: each argument is one item.
    env.add_function("cycler", |items: Rest<JValue>| {
        minijinja_contrib::globals::cycler(items.0)
    });
    env.add_function("joiner", |sep: Option<JValue>| {
        // Jinja2's `joiner(sep=", ")`.
        minijinja_contrib::globals::joiner(Some(sep.unwrap_or_else(|| JValue::from(", "))))
    });
}

/// Jinja2's `namespace(dict, k=v)`: the dict's keys, then the keywords
/// (minijinja's takes one or the other).
fn namespace(
    state: &mut minijinja::State,
    positional: Rest<JValue>,
    kwargs: Kwargs,
) -> Result<JValue, minijinja::Error> {
    let builtin = JValue::from_function(minijinja::functions::namespace);
    let Some(first) = positional.first() else {
        if kwargs.args().next().is_none() {
            return builtin.call(state, &[]);
        }
        return builtin.call(state, &[JValue::from(kwargs)]);
    };
    if positional.len() > 1 {
        return Err(minijinja::Error::new(
            ErrorKind::TooManyArguments,
            "namespace takes at most one positional argument (a dict)",
        ));
    }
    if kwargs.args().next().is_none() {
        return builtin.call(state, std::slice::from_ref(first));
    }
    if first.kind() != minijinja::value::ValueKind::Map {
        return Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            format!("namespace takes a dict, not {}", first.kind()),
        ));
    }
    super::growth::check_items(first.len().unwrap_or(0))?;
    // Keys that are not text are left out, as minijinja's `namespace` does.
    let mut pairs: Vec<(String, JValue)> = Vec::new();
    for key in first.try_iter()? {
        let value = first.get_item(&key)?;
        if let Some(key) = key.as_str() {
            pairs.push((key.to_string(), value));
        }
    }
    for name in kwargs.args() {
        let value = kwargs.get::<JValue>(name)?;
        match pairs.iter_mut().find(|(key, _)| key == name) {
            Some(pair) => pair.1 = value,
            None => pairs.push((name.to_string(), value)),
        }
    }
    let all: Kwargs = pairs.into_iter().collect();
    builtin.call(state, &[JValue::from(all)])
}

/// Jinja2's `center(width=80)`: Python's `str(value).center(width)`, the
/// text padded with spaces to `width` characters, the odd space on the
/// left when `width` is odd and on the right when it is even (as CPython
/// places it). The padded size is checked against the render's bounds
/// before anything is built: `center(10**9)` is an error at once.
fn center(
    value: &JValue,
    width: Option<JValue>,
    kwargs: Kwargs,
) -> Result<JValue, minijinja::Error> {
    let width = match (width, kwargs.get::<Option<JValue>>("width")?) {
        (Some(_), Some(_)) => {
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                "center got width twice",
            ))
        }
        (Some(width), None) | (None, Some(width)) => width,
        (None, None) => JValue::from(80),
    };
    kwargs.assert_all_used()?;
    let width = i128::try_from(width.clone()).map_err(|_| {
        minijinja::Error::new(
            ErrorKind::InvalidOperation,
            format!("center takes an integer width, not {width}"),
        )
    })?;
    let text = super::python::display(value)?;
    let length = text.chars().count();
    let width = usize::try_from(width.max(0)).unwrap_or(usize::MAX);
    if width <= length {
        return Ok(JValue::from(text.into_owned()));
    }
    let pad = width - length;
    let left = pad / 2 + (pad & width & 1);
    let mut out = super::python::Out::new();
    out.reserve(text.len().saturating_add(pad))?;
    out.push_repeated(" ", left)?;
    out.push_str(&text)?;
    out.push_repeated(" ", pad - left)?;
    Ok(JValue::from(out.finish()?))
}

/// Jinja2's `wordcount`: how many runs of word characters (Python's `\w`:
/// letters, digits, `_`) `str(value)` holds.
fn wordcount(value: &JValue) -> Result<JValue, minijinja::Error> {
    let text = super::python::display(value)?;
    let mut count = 0usize;
    let mut in_word = false;
    for c in text.chars() {
        let word = c.is_alphanumeric() || c == '_';
        if word && !in_word {
            count += 1;
        }
        in_word = word;
    }
    Ok(JValue::from(count))
}

/// Jinja2's `truncate(length=255, killwords=False, end='...', leeway=None)`:
/// minijinja-contrib's, which takes keyword arguments only, with the
/// positional forms Jinja2 also accepts.
fn truncate(
    state: &mut minijinja::State,
    value: &JValue,
    positional: Rest<JValue>,
    kwargs: Kwargs,
) -> Result<JValue, minijinja::Error> {
    const NAMES: [&str; 4] = ["length", "killwords", "end", "leeway"];
    if positional.len() > NAMES.len() {
        return Err(minijinja::Error::new(
            ErrorKind::TooManyArguments,
            "truncate takes at most 4 arguments",
        ));
    }
    let mut all: Vec<(&str, JValue)> = NAMES
        .iter()
        .copied()
        .zip(positional.iter().cloned())
        .collect();
    for name in kwargs.args() {
        if all.iter().any(|(given, _)| *given == name) {
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!("truncate got {name} twice"),
            ));
        }
        all.push((name, kwargs.get::<JValue>(name)?));
    }
    // Jinja2 asserts both; minijinja-contrib's message would be about a
    // number that does not convert.
    for (name, given) in &all {
        if matches!(*name, "length" | "leeway") && given.as_i64().is_some_and(|n| n < 0) {
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!("truncate takes a {name} of at least 0, not {given}"),
            ));
        }
    }
    minijinja_contrib::filters::truncate(state, value, all.into_iter().collect())
}

/// Jinja2's `filesizeformat(binary=False)`: `1 Byte`, a whole number of
/// `Bytes` below 1 kB (or 1 KiB: `int(bytes)`, so `1.5` is `1 Bytes` and
/// any negative size is in bytes), else one decimal and the unit, the
/// largest (`YB`, `YiB`) for anything larger.
fn filesizeformat(
    value: &JValue,
    binary: Option<JValue>,
    kwargs: Kwargs,
) -> Result<String, minijinja::Error> {
    let binary = match (binary, kwargs.get::<Option<JValue>>("binary")?) {
        (Some(_), Some(_)) => {
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                "filesizeformat got binary twice",
            ))
        }
        (Some(binary), None) | (None, Some(binary)) => binary.is_true(),
        (None, None) => false,
    };
    kwargs.assert_all_used()?;
    let bytes = match value.kind() {
        minijinja::value::ValueKind::Bool => f64::from(u8::from(value.is_true())),
        _ => f64::try_from(value.clone()).map_err(|_| {
            minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!("filesizeformat takes a number, not {}", value.kind()),
            )
        })?,
    };
    let (base, prefixes) = if binary {
        (
            1024.0,
            ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"],
        )
    } else {
        (1000.0, ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"])
    };
    if bytes == 1.0 {
        return Ok("1 Byte".to_string());
    }
    if bytes < base {
        // Python's `int(bytes)`: toward zero.
        return Ok(format!("{} Bytes", bytes.trunc() as i128));
    }
    let mut unit = base;
    for (i, prefix) in prefixes.iter().enumerate() {
        unit *= base;
        if bytes < unit || i + 1 == prefixes.len() {
            return Ok(format!("{:.1} {prefix}", base * bytes / unit));
        }
    }
    Ok(String::new())
}

/// Jinja2's `xmlattr(autospace=True)`: ` key="value"` for each item of a
/// dict whose value is not `none` (nor missing), key and value escaped as
/// markupsafe escapes; a key holding whitespace, `/`, `>` or `=` is an
/// error, as in Jinja2 3.1.4 and later.
fn xmlattr(value: &JValue, autospace: Option<JValue>) -> Result<JValue, minijinja::Error> {
    use super::python::markup::escape_text;
    if value.kind() != minijinja::value::ValueKind::Map {
        return Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            format!("xmlattr takes a dict, not {}", value.kind()),
        ));
    }
    let mut out = super::python::Out::new();
    let mut first = true;
    for key in value.try_iter()? {
        let item = value.get_item(&key)?;
        if item.is_none() || item.is_undefined() {
            continue;
        }
        let Some(name) = key.as_str() else {
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!("xmlattr takes text keys, not {}", key.kind()),
            ));
        };
        if name.chars().any(|c| {
            matches!(
                c,
                ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c' | '/' | '>' | '='
            )
        }) {
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "invalid character in attribute name: {}",
                    super::python::repr_lossy(&key)
                ),
            ));
        }
        let text = super::python::display(&item)?;
        let text = match item.is_safe() {
            true => text.into_owned(),
            false => escape_text(&text)?,
        };
        if !first || autospace.as_ref().is_none_or(JValue::is_true) {
            out.push(' ')?;
        }
        first = false;
        out.push_str(&escape_text(name)?)?;
        out.push_str("=\"")?;
        out.push_str(&text)?;
        out.push('"')?;
    }
    Ok(JValue::from(out.finish()?))
}

/// Jinja2's `callable` test: functions, macros and the classes Jinja2
/// has as globals (`range`, `dict`, `namespace`, `cycler`, `joiner`), and
/// a joiner; not data, not a cycler or a namespace.
fn is_callable(value: &JValue) -> bool {
    super::python::is_callable(value)
}

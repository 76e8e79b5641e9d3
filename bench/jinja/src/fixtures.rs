//! `--fixtures DIR`: every chat-template fixture
//! (`crates/teleprompt/tests/fixtures/chat-template/*.txt`), one scenario
//! each, in teleprompt and in raw minijinja set up as `transformers` sets
//! up Jinja2. `bench/jinja/fixtures.py` runs this and Python's Jinja2 side
//! by side.
//!
//! A fixture is sections introduced by `=== MARKER` lines (the format of
//! `crates/teleprompt/tests/suite/fixtures/mod.rs`): `=== prompt FILE` (a
//! `chat_template.jinja` body or a `tokenizer_config.json`), `=== options`
//! (`now: RFC3339`, the clock of `strftime_now`; `template_name: NAME`, one
//! of a config's list of templates), and per scenario `=== data NAME` (the
//! keyword arguments of the render, without the defaults `transformers`
//! adds) followed by `=== output NAME` or `=== error NAME`; ` -chomp` drops
//! a section's final newline.
//!
//! Per fixture: skipped if its template has `{% generation %}` blocks (they
//! print markers of their own on every render); otherwise the scenario
//! with the longest expected output (the first of equals), its data with
//! `tools` and `documents` None and `add_generation_prompt` false where
//! absent, as `transformers` passes them.
//!
//! - teleprompt: `Prompt::from_source(FILE, prompt, options)` with the
//!   fixture's `template_name`, `Data::new(data)` once, then
//!   `prompt.render_with(&data, &options)` with a fixed clock for `now`.
//!   A config's special tokens are the prompt's own defaults.
//! - minijinja: the environment of `chat_template::minijinja_env` plus
//!   what these templates call: a `tojson` filter printing as
//!   `transformers`' (`json.dumps(x, ensure_ascii=False, indent=None,
//!   separators=None, sort_keys=False)`, arguments by position or name) and
//!   `strftime_now` at the fixture's `now`. For a `tokenizer_config.json`
//!   the template is the config's (by `template_name`, else `tool_use` for
//!   a render with tools, else `default`, as `transformers`' chooses) and
//!   its special tokens (`bos_token`, `eos_token`, `unk_token`, `sep_token`,
//!   `pad_token`, `cls_token`, `mask_token`; an added-token object's
//!   `content`) go under the data, as the fixtures' `generate.py` passes
//!   them.
//!
//! minijinja and Jinja2 get the messages as `transformers`'
//! `apply_chat_template` hands them over (`as_transformers_hands_over`);
//! teleprompt gets them as the fixture gives them.
//!
//! Each engine renders once (teleprompt three times, as the fixture suite
//! does: a layer's first render, the one that makes what it keeps, one that
//! reuses it) and its text is compared with the fixture's expected output.
//! One JSON line per fixture says what came of it (`fixture_line`); then,
//! unless `--check`, the engines that printed the expected text are raced
//! (`race.rs`: a JSON line per engine) and a last line gives the direct
//! path's counts after the race. With `--out DIR`, each fixture's texts
//! (`NAME.teleprompt.txt`, `NAME.minijinja.txt`, `NAME.expected.txt`) and
//! what Jinja2 needs to render it as minijinja does (`NAME.template.jinja`,
//! `NAME.kwargs.json`; `NAME.given.json`, the keyword arguments before
//! `as_transformers_hands_over`) are written there.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use minijinja::value::{Kwargs, Rest, Serde, ValueKind};
use minijinja::{Environment, Error, ErrorKind, Value};
use serde_json::{json, Map};
use teleprompt::context::Clock;
use teleprompt::{Data, LoadOptions, Prompt, RenderOptions};

use crate::chat_template::minijinja_env;
use crate::race::{race, Engine};

/// What the fixtures mode reads from the command line.
pub struct Options<'a> {
    pub runs: usize,
    pub run_time: Duration,
    pub out: Option<&'a Path>,
    pub only: Option<&'a str>,
    /// Render and compare only: no race.
    pub check: bool,
}

/// The fixture files of `dir` (`*.txt`), sorted, or those named
/// (`NAME` or `NAME.txt`).
pub fn files(dir: &Path, names: &[String]) -> Result<Vec<PathBuf>, String> {
    if !names.is_empty() {
        return Ok(names
            .iter()
            .map(|name| dir.join(format!("{}.txt", name.trim_end_matches(".txt"))))
            .collect());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    files.retain(|path| path.extension().is_some_and(|ext| ext == "txt"));
    files.sort();
    Ok(files)
}

/// One fixture file as its sections.
struct Fixture {
    name: String,
    /// The prompt's file name: `chat_template.jinja` or
    /// `tokenizer_config.json`.
    prompt_file: String,
    prompt: String,
    now: Option<String>,
    template_name: Option<String>,
    /// Each scenario's name, data text and expected output (`None`: an
    /// expected error), in file order.
    scenarios: Vec<(String, String, Option<String>)>,
}

fn parse(path: &Path) -> Result<Fixture, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut sections: Vec<(String, String, bool, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(marker) = line.strip_prefix("=== ") {
            let mut words = marker.split_whitespace();
            let kind = words.next().unwrap_or_default().to_string();
            let (mut arg, mut chomp) = (String::new(), false);
            for word in words {
                match word {
                    "-chomp" => chomp = true,
                    _ => arg = word.to_string(),
                }
            }
            sections.push((kind, arg, chomp, String::new()));
        } else if let Some((_, _, _, body)) = sections.last_mut() {
            body.push_str(line);
        }
    }
    let mut fixture = Fixture {
        name: path
            .file_stem()
            .map(|stem| stem.to_string_lossy().to_string())
            .unwrap_or_default(),
        prompt_file: String::new(),
        prompt: String::new(),
        now: None,
        template_name: None,
        scenarios: Vec::new(),
    };
    for (kind, arg, chomp, mut body) in sections {
        if chomp && body.ends_with('\n') {
            body.pop();
        }
        match kind.as_str() {
            "prompt" => (fixture.prompt_file, fixture.prompt) = (arg, body),
            "options" => {
                for line in body.lines() {
                    match line.split_once(':').map(|(k, v)| (k.trim(), v.trim())) {
                        Some(("now", now)) => fixture.now = Some(now.to_string()),
                        Some(("template_name", name)) => {
                            fixture.template_name = Some(name.to_string())
                        }
                        None if line.trim().is_empty() => {}
                        _ => return Err(format!("unknown option line `{line}`")),
                    }
                }
            }
            "data" => fixture.scenarios.push((arg, body, None)),
            "output" => match fixture.scenarios.iter_mut().find(|(name, ..)| *name == arg) {
                Some(scenario) => scenario.2 = Some(body),
                None => return Err(format!("`=== output {arg}` without its data")),
            },
            "error" | "warnings" => {}
            other => return Err(format!("unknown section `{other}`")),
        }
    }
    if fixture.prompt_file.is_empty() {
        return Err("no `=== prompt` section".into());
    }
    Ok(fixture)
}

/// The special tokens `transformers` hands a chat template from a
/// tokenizer config (as the fixtures' `generate.py` takes them).
const SPECIAL_TOKENS: [&str; 7] = [
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
];

/// The template minijinja and Jinja2 render, and the special tokens that go
/// under the data: the prompt itself, or a tokenizer config's template
/// (chosen as `transformers` chooses) and tokens.
fn template_and_tokens(
    fixture: &Fixture,
    data: &Map<String, serde_json::Value>,
) -> Result<(String, Map<String, serde_json::Value>), String> {
    if fixture.prompt_file != "tokenizer_config.json" {
        return Ok((fixture.prompt.clone(), Map::new()));
    }
    let config: Map<String, serde_json::Value> =
        serde_json::from_str(&fixture.prompt).map_err(|e| format!("tokenizer_config.json: {e}"))?;
    let template = match &config["chat_template"] {
        serde_json::Value::String(template) => template.clone(),
        serde_json::Value::Array(list) => {
            let by_name = |wanted: &str| {
                list.iter()
                    .find(|entry| entry["name"] == wanted)
                    .and_then(|entry| entry["template"].as_str())
                    .map(str::to_string)
            };
            let has_tools = !data.get("tools").is_none_or(serde_json::Value::is_null);
            match &fixture.template_name {
                Some(name) => by_name(name),
                None if has_tools => by_name("tool_use").or_else(|| by_name("default")),
                None => by_name("default"),
            }
            .ok_or("tokenizer_config.json: no such chat template")?
        }
        _ => return Err("tokenizer_config.json: no chat_template".into()),
    };
    let mut tokens = Map::new();
    for key in SPECIAL_TOKENS {
        let token = match config.get(key) {
            Some(serde_json::Value::Object(added)) => added.get("content").cloned(),
            other => other.cloned(),
        };
        match token {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::String(text)) => {
                tokens.insert(key.to_string(), text.into());
            }
            Some(other) => return Err(format!("tokenizer_config.json: {key} is {other}")),
        }
    }
    Ok((template, tokens))
}

/// The messages as `transformers`' `apply_chat_template` hands them to
/// the template (`_normalize_chat_messages`, then
/// `_alias_reasoning_fields`): a key whose value is null dropped, and a
/// reasoning given as `reasoning_content`, `thinking` or `reasoning` (the
/// first not null) also `thinking` (first) and `reasoning_content` (last).
/// The fixtures' data is that already, but for the fixtures that test
/// teleprompt's own normalization (`messages_normalized*`). teleprompt
/// gets the data as given and does this itself, in its render.
fn as_transformers_hands_over(kwargs: &mut Map<String, serde_json::Value>) {
    let Some(serde_json::Value::Array(messages)) = kwargs.get_mut("messages") else {
        return;
    };
    for message in messages {
        let serde_json::Value::Object(fields) = message else {
            continue;
        };
        fields.retain(|_, value| !value.is_null());
        let reasoning = ["reasoning_content", "thinking", "reasoning"]
            .iter()
            .find_map(|key| fields.get(*key).cloned());
        if let Some(reasoning) = reasoning {
            // `{"thinking": r, **message, "reasoning_content": r}`: a key
            // inserted again keeps its place, as in a Python dict.
            let mut aliased = Map::new();
            aliased.insert("thinking".into(), reasoning.clone());
            aliased.extend(std::mem::take(fields));
            aliased.insert("reasoning_content".into(), reasoning);
            *fields = aliased;
        }
    }
}

/// A fixed instant's fields, for `strftime_now`: year, month, day, hour,
/// minute, second.
type Instant = [i64; 6];

/// `2026-11-23T10:00:00Z` as its fields (UTC only: the fixtures' `now`).
fn parse_now(now: &str) -> Result<Instant, String> {
    let bad = || format!("now: {now}: expected YYYY-MM-DDTHH:MM:SSZ");
    let digits = now
        .strip_suffix('Z')
        .ok_or_else(bad)?
        .split(['-', 'T', ':'])
        .map(|part| part.parse::<i64>().map_err(|_| bad()))
        .collect::<Result<Vec<_>, _>>()?;
    digits.try_into().map_err(|_| bad())
}

/// Python's `datetime.strftime(format)` (C locale) at `at`, for the
/// directives chat templates use; any other is an error, not a guess.
fn strftime(at: Instant, format: &str) -> Result<String, Error> {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    const DAYS: [&str; 7] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    let [year, month, day, hour, minute, second] = at;
    // Days since 1970-01-01 (a Thursday), from the civil date.
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * m + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    let weekday = (days + 3).rem_euclid(7) as usize;
    let month_name = MONTHS[(month - 1) as usize];
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut directive = chars.next();
        // glibc's `%-d`: no padding.
        let pad = directive != Some('-');
        if !pad {
            directive = chars.next();
        }
        let number = |n: i64, width: usize| match pad {
            true => format!("{n:0width$}"),
            false => n.to_string(),
        };
        match directive {
            Some('Y') => out.push_str(&year.to_string()),
            Some('y') => out.push_str(&number(year % 100, 2)),
            Some('m') => out.push_str(&number(month, 2)),
            Some('d') => out.push_str(&number(day, 2)),
            Some('H') => out.push_str(&number(hour, 2)),
            Some('I') => out.push_str(&number((hour + 11) % 12 + 1, 2)),
            Some('M') => out.push_str(&number(minute, 2)),
            Some('S') => out.push_str(&number(second, 2)),
            Some('p') => out.push_str(if hour < 12 { "AM" } else { "PM" }),
            Some('B') => out.push_str(month_name),
            Some('b') => out.push_str(&month_name[..3]),
            Some('A') => out.push_str(DAYS[weekday]),
            Some('a') => out.push_str(&DAYS[weekday][..3]),
            Some('%') => out.push('%'),
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "strftime_now: %{} not supported by the bench",
                        other.unwrap_or(' ')
                    ),
                ))
            }
        }
    }
    Ok(out)
}

/// `transformers`' `tojson` filter: `json.dumps(x, ensure_ascii=False,
/// indent=None, separators=None, sort_keys=False)`, each argument by
/// position or by name.
fn tojson(value: &Value, positional: Rest<Value>, kwargs: Kwargs) -> Result<String, Error> {
    const NAMES: [&str; 4] = ["ensure_ascii", "indent", "separators", "sort_keys"];
    if positional.len() > NAMES.len() {
        return Err(Error::from(ErrorKind::TooManyArguments));
    }
    let arg = |name: &str| -> Result<Value, Error> {
        let at = NAMES.iter().position(|known| *known == name).unwrap_or(0);
        match positional.get(at) {
            Some(_) if kwargs.has(name) => Err(Error::new(
                ErrorKind::TooManyArguments,
                format!("tojson: {name} given twice"),
            )),
            Some(value) => Ok(value.clone()),
            None => Ok(kwargs
                .get::<Option<Value>>(name)?
                .unwrap_or(Value::UNDEFINED)),
        }
    };
    let ensure_ascii = arg("ensure_ascii")?.is_true();
    let indent = arg("indent")?;
    let separators = arg("separators")?;
    let sort_keys = arg("sort_keys")?.is_true();
    kwargs.assert_all_used()?;
    // `indent`: None (one line), a number of spaces (at most 0 when
    // negative, as `' ' * n`) or a string.
    let indent = match indent.kind() {
        ValueKind::Undefined | ValueKind::None => None,
        ValueKind::String => Some(indent.as_str().unwrap_or_default().to_string()),
        ValueKind::Number if indent.is_integer() => {
            Some(" ".repeat(indent.as_i64().unwrap_or(0).max(0) as usize))
        }
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("tojson: indent {indent}"),
            ))
        }
    };
    let (item, key) = match separators.kind() {
        ValueKind::Undefined | ValueKind::None => match indent {
            None => (", ".to_string(), ": ".to_string()),
            Some(_) => (",".to_string(), ": ".to_string()),
        },
        _ => {
            let pair: Vec<Value> = separators.try_iter()?.collect();
            match &pair[..] {
                [item, key] => (item.to_string(), key.to_string()),
                _ => {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "tojson: separators is not a pair",
                    ))
                }
            }
        }
    };
    let style = JsonStyle {
        ensure_ascii,
        indent,
        item,
        key,
        sort_keys,
    };
    let mut out = String::new();
    style.write(&mut out, value, 0)?;
    Ok(out)
}

/// The options of Python's `json.dumps` that `tojson` passes on.
struct JsonStyle {
    ensure_ascii: bool,
    indent: Option<String>,
    item: String,
    key: String,
    sort_keys: bool,
}

impl JsonStyle {
    fn write(&self, out: &mut String, value: &Value, depth: usize) -> Result<(), Error> {
        let not_serializable = || {
            Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "tojson: Object of type {} is not JSON serializable",
                    value.kind()
                ),
            )
        };
        match value.kind() {
            ValueKind::None => out.push_str("null"),
            ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
            ValueKind::Number if value.is_integer() => out.push_str(&value.to_string()),
            ValueKind::Number => out.push_str(&python_float(
                f64::try_from(value.clone()).map_err(|_| not_serializable())?,
            )),
            ValueKind::String => self.string(out, value.as_str().unwrap_or_default()),
            ValueKind::Seq => {
                let items: Vec<Value> = value.try_iter()?.collect();
                self.container(out, '[', ']', depth, &items, |out, item, depth| {
                    self.write(out, item, depth)
                })?;
            }
            ValueKind::Map => {
                let mut entries: Vec<(String, Value)> = Vec::new();
                for key in value.try_iter()? {
                    let item = value.get_item(&key)?;
                    let key = match key.kind() {
                        ValueKind::String => key.as_str().unwrap_or_default().to_string(),
                        ValueKind::None => "null".into(),
                        ValueKind::Bool if key.is_true() => "true".into(),
                        ValueKind::Bool => "false".into(),
                        ValueKind::Number if key.is_integer() => key.to_string(),
                        ValueKind::Number => python_float(
                            f64::try_from(key.clone()).map_err(|_| not_serializable())?,
                        ),
                        _ => return Err(not_serializable()),
                    };
                    entries.push((key, item));
                }
                if self.sort_keys {
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                }
                self.container(out, '{', '}', depth, &entries, |out, (key, item), depth| {
                    self.string(out, key);
                    out.push_str(&self.key);
                    self.write(out, item, depth)
                })?;
            }
            _ => return Err(not_serializable()),
        }
        Ok(())
    }

    /// `[…]` or `{…}` around `items`, each written by `write` at the next
    /// depth; an empty one prints as `[]` or `{}` whatever the indent.
    fn container<T>(
        &self,
        out: &mut String,
        open: char,
        close: char,
        depth: usize,
        items: &[T],
        write: impl Fn(&mut String, &T, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        out.push(open);
        if items.is_empty() {
            out.push(close);
            return Ok(());
        }
        let newline = |out: &mut String, depth: usize| {
            if let Some(indent) = &self.indent {
                out.push('\n');
                for _ in 0..depth {
                    out.push_str(indent);
                }
            }
        };
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(&self.item);
            }
            newline(out, depth + 1);
            write(out, item, depth + 1)?;
        }
        newline(out, depth);
        out.push(close);
        Ok(())
    }

    /// A JSON string as Python's `json` writes it: `\"`, `\\`, `\n`, `\r`,
    /// `\t`, `\b`, `\f`, other control characters as `\u00XX`; with
    /// `ensure_ascii`, everything past `~` as `\uXXXX` (UTF-16, lowercase).
    fn string(&self, out: &mut String, text: &str) {
        out.push('"');
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if c < ' ' || (self.ensure_ascii && c > '~') => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

/// Python's `repr` of a float, as `json.dumps` prints it: the shortest
/// digits that read back, positional from 1e-4 up to 1e16 (`18.0`,
/// `0.0001`), else with an exponent (`1e+16`, `1.5e-05`); `NaN`,
/// `Infinity`.
fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // Rust's `{:e}` gives the same shortest digits: `-1.85e1`.
    let scientific = format!("{x:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if !(-4..16).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}{rest}e{exp_sign}{:02}", exponent.abs());
    }
    if exponent < 0 {
        let zeros = "0".repeat((-exponent - 1) as usize);
        return format!("{sign}0.{zeros}{digits}");
    }
    let whole = exponent as usize + 1;
    if digits.len() <= whole {
        let zeros = "0".repeat(whole - digits.len());
        format!("{sign}{digits}{zeros}.0")
    } else {
        format!("{sign}{}.{}", &digits[..whole], &digits[whole..])
    }
}

/// What one engine did with the scenario: `"same"` (the expected text),
/// `"differs"`, or the error.
fn outcome(result: &Result<String, String>, expected: &str) -> String {
    match result {
        Ok(text) if text == expected => "same".into(),
        Ok(_) => "differs".into(),
        Err(message) => format!("error: {message}"),
    }
}

/// The direct path's counts (`{"rendered", "declined"}`) or why the
/// template is not lowered (`{"not_lowered"}`).
fn direct_path(prompt: &Prompt) -> serde_json::Value {
    match teleprompt::unstable::direct_path(prompt) {
        Some(Ok((rendered, declined))) => json!({"rendered": rendered, "declined": declined}),
        Some(Err(why)) => json!({ "not_lowered": why }),
        None => json!(null),
    }
}

/// Benchmarks one fixture file (see the module's doc).
pub fn bench(path: &Path, options: &Options) -> Result<(), String> {
    let fixture = parse(path)?;
    let name = fixture.name.as_str();
    // The scenario with the longest expected output, the first of equals.
    let mut chosen: Option<(&str, &str, &str)> = None;
    for (scenario, data, expected) in &fixture.scenarios {
        if let Some(expected) = expected {
            if chosen.is_none_or(|(_, _, best)| expected.len() > best.len()) {
                chosen = Some((scenario, data, expected));
            }
        }
    }
    let Some((scenario, data_text, expected)) = chosen else {
        println!(
            "{}",
            json!({"fixture": name, "skipped": "every scenario expects an error"})
        );
        return Ok(());
    };
    let mut data: Map<String, serde_json::Value> =
        serde_json::from_str(data_text).map_err(|e| format!("data {scenario}: {e}"))?;
    for (key, value) in [
        ("tools", json!(null)),
        ("documents", json!(null)),
        ("add_generation_prompt", json!(false)),
    ] {
        data.entry(key).or_insert(value);
    }
    let (template, tokens) = template_and_tokens(&fixture, &data)?;
    if template.contains("endgeneration") {
        println!(
            "{}",
            json!({"fixture": name, "skipped": "{% generation %} blocks"})
        );
        return Ok(());
    }
    let mut kwargs = tokens;
    kwargs.extend(data.clone());
    let given = serde_json::Value::Object(kwargs.clone());
    as_transformers_hands_over(&mut kwargs);
    let kwargs = serde_json::Value::Object(kwargs);

    // teleprompt, as the fixture suite loads it.
    let mut load = LoadOptions::default();
    load.template_name = fixture.template_name.clone();
    let prompt = Prompt::from_source(&fixture.prompt_file, &fixture.prompt, &load)
        .map_err(|e| format!("teleprompt: {e}"))?;
    let mut render_options = RenderOptions::default();
    if let Some(now) = &fixture.now {
        render_options.clock = Clock::parse(now).map_err(|e| format!("now: {e}"))?;
    }
    let data = Data::new(serde_json::Value::Object(data));
    let render_teleprompt = || {
        prompt
            .render_with(&data, &render_options)
            .map(|rendered| rendered.text().to_string())
            .map_err(|e| e.to_string())
    };
    let ours = render_teleprompt();
    let mut teleprompt = outcome(&ours, expected);
    for round in 2..=3 {
        let again = outcome(&render_teleprompt(), expected);
        if again != teleprompt {
            teleprompt = format!("render {round}: {again}");
        }
    }

    // Raw minijinja, as transformers sets up Jinja2.
    let mut env: Environment<'static> =
        minijinja_env(&template).map_err(|e| format!("minijinja: {e}"))?;
    env.add_filter("tojson", tojson);
    let now = fixture.now.as_deref().map(parse_now).transpose()?;
    env.add_function("strftime_now", move |format: &str| match now {
        Some(now) => strftime(now, format),
        None => Err(Error::new(
            ErrorKind::InvalidOperation,
            "strftime_now: the fixture has no `now`",
        )),
    });
    let context = Value::from(Serde(&kwargs));
    let minijinja_template = env
        .get_template("chat_template")
        .map_err(|e| format!("minijinja: {e}"))?;
    let theirs = minijinja_template
        .render(&context)
        .map_err(|e| format!("{e:#}"));
    let minijinja = outcome(&theirs, expected);

    // The prompt a render with tools ran is a list config's `tool_use`
    // template, whose direct path `direct_path` does not see: a prompt
    // loaded with that one named reports it.
    let chosen_by_tools = fixture.prompt_file == "tokenizer_config.json"
        && fixture.template_name.is_none()
        && !kwargs["tools"].is_null()
        && fixture.prompt.contains("\"tool_use\"");
    let probe = match chosen_by_tools {
        true => {
            let mut load = LoadOptions::default();
            load.template_name = Some("tool_use".into());
            let probe = Prompt::from_source(&fixture.prompt_file, &fixture.prompt, &load)
                .map_err(|e| format!("teleprompt: {e}"))?;
            for _ in 0..3 {
                probe
                    .render_with(&data, &render_options)
                    .map_err(|e| format!("teleprompt: {e}"))?;
            }
            Some(probe)
        }
        false => None,
    };
    let direct_prompt = probe.as_ref().unwrap_or(&prompt);

    if let Some(out) = options.out {
        let write = |file: String, text: &str| {
            let path = out.join(file);
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
        };
        write(format!("{name}.expected.txt"), expected)?;
        write(format!("{name}.template.jinja"), &template)?;
        write(format!("{name}.kwargs.json"), &kwargs.to_string())?;
        write(format!("{name}.given.json"), &given.to_string())?;
        if let Ok(text) = &ours {
            write(format!("{name}.teleprompt.txt"), text)?;
        }
        if let Ok(text) = &theirs {
            write(format!("{name}.minijinja.txt"), text)?;
        }
    }
    println!(
        "{}",
        json!({
            "fixture": name,
            "scenario": scenario,
            "prompt_file": fixture.prompt_file,
            "template_name": fixture.template_name,
            "now": fixture.now,
            "bytes": expected.len(),
            "normalized": given != kwargs,
            "teleprompt": teleprompt,
            "minijinja": minijinja,
            "direct_path": direct_path(direct_prompt),
            "direct_path_of": if chosen_by_tools { "tool_use" } else { "" },
        })
    );
    if options.check {
        return Ok(());
    }

    // The race, of the engines that printed the expected text.
    let timed = |engine: &str| options.only.is_none_or(|only| only == engine);
    let only = match (teleprompt == "same", minijinja == "same") {
        (true, true) => options.only,
        (true, false) if timed("teleprompt") => Some("teleprompt"),
        (false, true) if timed("minijinja") => Some("minijinja"),
        _ => return Ok(()),
    };
    let mut render_teleprompt = || {
        black_box(
            prompt
                .render_with(black_box(&data), &render_options)
                .expect("renders"),
        );
    };
    let mut render_minijinja = || {
        black_box(
            minijinja_template
                .render(black_box(&context))
                .expect("renders"),
        );
    };
    race(
        name,
        options.runs,
        options.run_time,
        only,
        &mut [
            Engine {
                name: "teleprompt",
                bytes: expected.len(),
                render: &mut render_teleprompt,
            },
            Engine {
                name: "minijinja",
                bytes: expected.len(),
                render: &mut render_minijinja,
            },
        ],
    );
    println!(
        "{}",
        json!({"fixture": name, "direct_path_after_race": direct_path(direct_prompt)})
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python_repr() {
        for (x, repr) in [
            (18.5, "18.5"),
            (18.0, "18.0"),
            (-0.0, "-0.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.6, "123456789012345.6"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (1e100, "1e+100"),
        ] {
            assert_eq!(python_float(x), repr, "{x}");
        }
    }

    /// The expected texts are Python's `json.dumps` of the same value.
    #[test]
    fn tojson_prints_as_transformers_json_dumps() {
        let mut env = Environment::new();
        env.add_filter("tojson", tojson);
        let x = Value::from(Serde(json!({
            "a": [1, 2.5, null, true, "\u{e9}\n\"\u{1}\u{7f}\u{1f642}"],
            "b": {}, "c": [], "z": 1e16, "m": {"y": 1, "x": -0.0}
        })));
        let render = |expression: &str| {
            let template = format!("{{{{ {expression} }}}}");
            env.render_str(&template, minijinja::context! { x => x.clone() })
                .unwrap()
        };
        assert_eq!(
            render("x | tojson"),
            "{\"a\": [1, 2.5, null, true, \"\u{e9}\\n\\\"\\u0001\u{7f}\u{1f642}\"], \"b\": {}, \"c\": [], \"z\": 1e+16, \"m\": {\"y\": 1, \"x\": -0.0}}"
        );
        assert_eq!(
            render("x | tojson(ensure_ascii=True)"),
            r#"{"a": [1, 2.5, null, true, "\u00e9\n\"\u0001\u007f\ud83d\ude42"], "b": {}, "c": [], "z": 1e+16, "m": {"y": 1, "x": -0.0}}"#
        );
        assert_eq!(
            render("x | tojson(false, none, [',', ':'], true)"),
            "{\"a\":[1,2.5,null,true,\"\u{e9}\\n\\\"\\u0001\u{7f}\u{1f642}\"],\"b\":{},\"c\":[],\"m\":{\"x\":-0.0,\"y\":1},\"z\":1e+16}"
        );
        assert_eq!(
            render("x | tojson(indent=2)"),
            "{\n  \"a\": [\n    1,\n    2.5,\n    null,\n    true,\n    \"\u{e9}\\n\\\"\\u0001\u{7f}\u{1f642}\"\n  ],\n  \"b\": {},\n  \"c\": [],\n  \"z\": 1e+16,\n  \"m\": {\n    \"y\": 1,\n    \"x\": -0.0\n  }\n}"
        );
        assert_eq!(
            render("x.m | tojson(indent=0)"),
            "{\n\"y\": 1,\n\"x\": -0.0\n}"
        );
        let twice = "{{ x | tojson(true, ensure_ascii=true) }}";
        assert!(env
            .render_str(twice, minijinja::context! { x => x.clone() })
            .is_err());
    }

    #[test]
    fn strftime_at_the_fixtures_now() {
        let now = parse_now("2026-11-23T10:00:00Z").unwrap();
        assert_eq!(strftime(now, "%Y-%m-%d").unwrap(), "2026-11-23");
        assert_eq!(strftime(now, "%d %b %Y").unwrap(), "23 Nov 2026");
        assert_eq!(strftime(now, "%B %d, %Y").unwrap(), "November 23, 2026");
        assert_eq!(
            strftime(now, "%a %A %H:%M:%S %p").unwrap(),
            "Mon Monday 10:00:00 AM"
        );
        assert!(strftime(now, "%Q").is_err());
    }
}

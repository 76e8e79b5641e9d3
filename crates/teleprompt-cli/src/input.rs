//! Reading the data a render uses: `--data` files or stdin, and `--set`.

use std::path::Path;

use serde_json::{Map, Value};
use teleprompt::context::{Clock, Workspace};
use teleprompt::data::{self, insert_dotted};
use teleprompt::messages::history_from_value;
use teleprompt::{Error, ErrorClass, PromptContext};

use crate::TurnArgs;

/// One `--set KEY=VALUE`.
#[derive(Clone, Debug)]
pub struct Assignment {
    key: String,
    value: Value,
}

/// Parses `KEY=VALUE`: VALUE as JSON when it parses (read as data files
/// are read), else as a string. A number that would not print back as
/// written (`1.10`, `1e3`, an integer too large for 64 bits) is its text,
/// as a string: the command line gave text, and a double would change it.
pub fn parse_assignment(text: &str) -> Result<Assignment, String> {
    let (key, raw) = text
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {text:?}"))?;
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(format!("the key in {text:?} is empty or has an empty part"));
    }
    let value = match data::parse_text(raw, Some(data::Format::Json), "--set") {
        Ok(Value::Number(number)) if number.to_string() != raw.trim() => {
            Value::String(raw.to_string())
        }
        Ok(value) => value,
        Err(_) => Value::String(raw.to_string()),
    };
    Ok(Assignment {
        key: key.to_string(),
        value,
    })
}

/// Parses a size: bytes, or a number with a binary suffix: `K`/`KiB`,
/// `M`/`MiB`, `G`/`GiB` (any case; `512K` is 524,288 bytes).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let bytes = teleprompt::limits::parse_amount(text, true)?;
    usize::try_from(bytes).map_err(|_| format!("{text} is too large"))
}

/// Parses `NAME=VALUE` for `--limit`: a bound of
/// `teleprompt::limits::Limits` by its name, and its value (sizes in bytes
/// may have a unit: `max_output=1M`).
pub fn parse_limit(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=VALUE, got {text:?}"))?;
    let (name, value) = (name.trim(), value.trim());
    // Checked here, so that a typo is a usage error naming the limits.
    teleprompt::limits::Limits::default().set_text(name, value)?;
    Ok((name.to_string(), value.to_string()))
}

/// Parses `KEY=VALUE` for `--label`.
pub fn parse_label(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!("expected KEY=VALUE, got {text:?}")),
    }
}

/// The prompt context of one `render`: the data, the turn, the clock,
/// the history and the labels.
pub fn build_context(args: &TurnArgs, keep: Keep<'_>) -> Result<PromptContext, Error> {
    let data = build_data(&args.data, &args.sets, args.max_data_bytes, keep)?;
    let mut context = PromptContext::new().data(data)?;
    if let Some(clock) = args.now {
        context = context.clock(clock);
    }
    if let Some(zone) = &args.time_zone {
        context = context.time_zone_named(zone)?;
    }
    if let Some(turn) = args.turn {
        context = context.turn(turn);
    }
    if let Some(max) = args.max_turns {
        context = context.max_turns(max);
    }
    if let Some(attempt) = args.attempt {
        context = context.attempt(attempt);
    }
    if let Some(path) = &args.history {
        let origin = path.display().to_string();
        // Read as data (JSON, or YAML by extension): a duplicate key is an
        // error here too.
        let history = data::read_file(path, args.max_data_bytes)?;
        let history = history_from_value(history).map_err(|error| {
            Error::new(ErrorClass::Input, format!("bad history: {error}")).with_file(&origin)
        })?;
        context = context.with_history(history);
    }
    if let Some(root) = &args.workspace {
        context = context.workspace(Workspace::new(root).max_depth(args.workspace_depth));
    }
    for (key, value) in &args.labels {
        context = context.label(key, value);
    }
    Ok(context)
}

/// The data of a chat template: `--data` and `--set`, with `--history`
/// (a JSON list of messages, or an object with `messages`) as `messages`;
/// and the clock of `strftime_now` (`--now`).
pub fn build_chat_data(args: &TurnArgs, keep: Keep<'_>) -> Result<(Value, Clock), Error> {
    let mut data = build_data(&args.data, &args.sets, args.max_data_bytes, keep)?;
    if let Some(path) = &args.history {
        let origin = path.display().to_string();
        let history = data::read_file(path, args.max_data_bytes)?;
        let messages = match history {
            Value::Object(mut object) if object.get("messages").is_some_and(Value::is_array) => {
                object.remove("messages").unwrap_or_default()
            }
            Value::Array(messages) => Value::Array(messages),
            other => {
                return Err(Error::new(
                    ErrorClass::Input,
                    format!(
                        "the history must be a list of messages (or an object with `messages`), found {}",
                        teleprompt::data::describe(&other)
                    ),
                )
                .with_file(&origin))
            }
        };
        if let Value::Object(map) = &mut data {
            map.insert("messages".to_string(), messages);
        }
    }
    Ok((data, args.now.unwrap_or_default()))
}

/// `--context FILE`: a Dotprompt render context, JSON or YAML.
pub fn read_render_context(
    path: Option<&Path>,
    max_bytes: usize,
) -> Result<Option<std::sync::Arc<Value>>, Error> {
    let Some(path) = path else {
        return Ok(None);
    };
    let origin = path.display().to_string();
    let context = data::read_file(path, max_bytes)?;
    if !context.is_object() {
        return Err(Error::new(
            ErrorClass::Input,
            "the context must be a mapping of names (auth, state, …) to values",
        )
        .with_file(&origin));
    }
    Ok(Some(std::sync::Arc::new(context)))
}

/// Which top-level keys of the data to build: those the prompt may read
/// (`Prompt::reads`).
pub type Keep<'a> = Option<&'a dyn Fn(&str) -> bool>;

/// The data document: the `--data` files (`-` for stdin, each of at most
/// `max_bytes`, built only where `keep` says) merged in order, a later
/// file's values over an earlier one's (maps merge key by key, at every
/// depth), and the `--set` values over them all.
pub fn build_data(
    sources: &[String],
    sets: &[Assignment],
    max_bytes: usize,
    keep: Keep<'_>,
) -> Result<Value, Error> {
    if sources.iter().filter(|source| *source == "-").count() > 1 {
        return Err(Error::new(
            ErrorClass::Io,
            "stdin can be read once: give `--data -` once",
        ));
    }
    let mut document = Value::Object(Map::new());
    for source in sources {
        let read = match source.as_str() {
            "-" => {
                data::read_from_keeping(std::io::stdin().lock(), "<stdin>", None, max_bytes, keep)?
            }
            path => data::read_file_keeping(Path::new(path), max_bytes, keep)?,
        };
        if !read.is_object() {
            let origin = match source.as_str() {
                "-" => "<stdin>",
                path => path,
            };
            return Err(Error::new(
                ErrorClass::Input,
                format!(
                    "the data must be a mapping of names to values, found {}",
                    teleprompt::data::describe(&read)
                ),
            )
            .with_file(origin));
        }
        document = data::merge_under(read, &document);
    }
    let Value::Object(map) = &mut document else {
        return Err(Error::new(ErrorClass::Input, "the data must be a mapping"));
    };
    for set in sets {
        insert_dotted(map, &set.key, set.value.clone(), true);
    }
    Ok(document)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn assignments_parse_json_or_take_text() {
        let set = parse_assignment("a.b=3").unwrap();
        assert_eq!((set.key.as_str(), set.value), ("a.b", json!(3)));
        assert_eq!(parse_assignment("t=Fix it").unwrap().value, json!("Fix it"));
        assert_eq!(
            parse_assignment("l=[1,\"x\"]").unwrap().value,
            json!([1, "x"])
        );
        assert_eq!(parse_assignment("e=").unwrap().value, json!(""));
        assert!(parse_assignment("novalue").is_err());
        assert!(parse_assignment("a..b=1").is_err());
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("100"), Ok(100));
        assert_eq!(parse_size("512K"), Ok(512 * 1024));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("2 M"), Ok(2 << 20));
        assert!(parse_size("").is_err());
        assert!(parse_size("12MB").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }

    #[test]
    fn sets_win_over_data_and_merge_into_it() {
        let sets = [
            parse_assignment("issue.title=New").unwrap(),
            parse_assignment("attempt=2").unwrap(),
        ];
        let data = build_data(&[], &sets, 0, None).unwrap();
        assert_eq!(data, json!({"issue": {"title": "New"}, "attempt": 2}));
    }
}

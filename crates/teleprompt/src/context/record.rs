//! A [`PromptContext`] as data, and back: what its `Serialize` writes and
//! its `Deserialize` reads, so that a context can be rebuilt in another
//! process (Python's `pickle`, a job queue).
//!
//! The record holds everything a context holds: the clock (a fixed
//! instant, or none for the system clock), the time zone, the turn
//! numbers, the namespaces and args as they were set (dotted keys
//! expanded) with the warnings setting them gave, `custom_rules`, the
//! host's data, the client's language, the history, the workspace and
//! the labels. What it does not hold is worked out again: the tool-call
//! verdict and the latest user language of the history, the root copy of
//! the args.

use std::sync::Arc;

use jiff::fmt::temporal::{DateTimeParser, DateTimePrinter};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{
    fields, single_key, ArgsLayers, Clock, HostLayer, Namespace, PromptContext, Tracked, Turn,
    Workspace,
};
use crate::data::Data;
use crate::messages::{History, HistoryMessage};

/// A namespace or the args as set, with the warnings setting them gave.
#[derive(Serialize)]
struct FieldsOut<'a> {
    fields: &'a Value,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
}

/// What [`PromptContext`] serializes as (see [`Record`]).
#[derive(Serialize)]
struct RecordOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    now: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time_zone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    turn: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_turns: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempt: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    assistant: Option<FieldsOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    conversation: Option<FieldsOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<FieldsOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<FieldsOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<FieldsOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    custom_rules: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_language: Option<&'a str>,
    history: &'a History,
    #[serde(skip_serializing_if = "Option::is_none")]
    workspace: Option<&'a Workspace>,
    #[serde(skip_serializing_if = "<[(String, String)]>::is_empty")]
    labels: &'a [(String, String)],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    fields: Value,
    #[serde(default)]
    warnings: Vec<String>,
}

/// What [`PromptContext`] deserializes from: every field may be left out
/// (an empty context), and an unknown one is an error.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    #[serde(default)]
    now: Option<String>,
    #[serde(default)]
    time_zone: Option<String>,
    #[serde(default)]
    turn: Option<u32>,
    #[serde(default)]
    max_turns: Option<u32>,
    #[serde(default)]
    attempt: Option<u32>,
    #[serde(default)]
    assistant: Option<Fields>,
    #[serde(default)]
    conversation: Option<Fields>,
    #[serde(default)]
    session: Option<Fields>,
    #[serde(default)]
    message: Option<Fields>,
    #[serde(default)]
    args: Option<Fields>,
    #[serde(default)]
    custom_rules: Option<String>,
    #[serde(default)]
    data: Option<Value>,
    #[serde(default)]
    client_language: Option<String>,
    #[serde(default)]
    history: Vec<HistoryMessage>,
    #[serde(default)]
    workspace: Option<Workspace>,
    #[serde(default)]
    labels: Vec<(String, String)>,
}

/// The value under `name` in a layer `{"<name>": value}`.
fn inner<'a>(layer: &'a Data, name: &str) -> &'a Value {
    layer.root().value().get(name).unwrap_or(&Value::Null)
}

/// Serialized as a JSON object, one field for each thing the context
/// holds that was set: `now` (the fixed clock, RFC 3339; absent for the
/// system clock), `time_zone` (an IANA name, an offset or a POSIX TZ
/// string), `turn`, `max_turns`, `attempt` (once set), `assistant`,
/// `conversation`, `session`, `message` and `args` (each `{"fields",
/// "warnings"}`), `custom_rules`, `data`, `client_language`, `history`
/// (the messages), `workspace` and `labels` (`[key, value]` pairs).
/// Deserializing it gives the same context: it renders the same. A time
/// zone that has no name (a system zone read from a file not in the time
/// zone database) cannot be serialized.
///
/// ```
/// use teleprompt::context::{Clock, PromptContext};
/// use serde_json::json;
///
/// let context = PromptContext::new()
///     .clock(Clock::parse("2026-11-21T09:05:03Z")?)
///     .time_zone_named("Europe/Paris")?
///     .args(json!({"name": "Ada"}))?
///     .turn(3);
/// let record = serde_json::to_value(&context).unwrap();
/// assert_eq!(record["now"], "2026-11-21T09:05:03Z");
/// assert_eq!(record["args"]["fields"], json!({"name": "Ada"}));
/// let again: PromptContext = serde_json::from_value(record).unwrap();
/// assert_eq!(again.turn_number(), 3);
/// assert_eq!(again.now(), context.now());
/// # Ok::<(), teleprompt::Error>(())
/// ```
impl Serialize for PromptContext {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let now = match self.clock {
            Clock::System => None,
            Clock::Fixed(instant) => Some(instant.to_string()),
        };
        let time_zone = self
            .time_zone
            .as_ref()
            .map(|zone| DateTimePrinter::new().time_zone_to_string(zone))
            .transpose()
            .map_err(|error| {
                serde::ser::Error::custom(format!("the time zone has no name to record: {error}"))
            })?;
        let namespace = |namespace: Namespace| {
            self.namespaces
                .get(namespace.slot())
                .and_then(Option::as_ref)
                .map(|host| FieldsOut {
                    fields: inner(&host.layer, namespace.as_str()),
                    warnings: &host.warnings,
                })
        };
        let turn = self.turn.set;
        RecordOut {
            now,
            time_zone,
            turn: turn.then_some(self.turn.number),
            max_turns: self.turn.max,
            attempt: self.turn.attempt,
            assistant: namespace(Namespace::Assistant),
            conversation: namespace(Namespace::Conversation),
            session: namespace(Namespace::Session),
            message: namespace(Namespace::Message),
            args: self.args.as_ref().map(|args| FieldsOut {
                fields: inner(&args.namespaced, "args"),
                warnings: &args.warnings,
            }),
            custom_rules: self
                .custom_rules
                .as_ref()
                .map(|rules| inner(rules, "custom_rules")),
            data: self.data.as_ref().map(|data| data.root().value()),
            client_language: self.client_language.as_deref(),
            history: self.history.messages(),
            workspace: self.workspace.as_deref(),
            labels: &self.labels,
        }
        .serialize(serializer)
    }
}

/// Reads what [`PromptContext`]'s `Serialize` writes, with the checks the
/// builder methods make: a clock that is not RFC 3339, an unknown time
/// zone, namespaces, args or data that are not objects, a malformed
/// history message or an unknown field are errors.
impl<'de> Deserialize<'de> for PromptContext {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PromptContext, D::Error> {
        let record = Record::deserialize(deserializer)?;
        record.rebuild().map_err(serde::de::Error::custom)
    }
}

impl Record {
    fn rebuild(self) -> Result<PromptContext, String> {
        let mut context = PromptContext::new();
        if let Some(now) = &self.now {
            context.clock =
                Clock::parse(now).map_err(|error| format!("now: {}", error.message()))?;
        }
        if let Some(zone) = &self.time_zone {
            let zone = DateTimeParser::new()
                .parse_time_zone(zone)
                .map_err(|error| format!("time_zone: unknown time zone \"{zone}\": {error}"))?;
            context.time_zone = Some(zone);
        }
        if self.turn.is_some() || self.max_turns.is_some() || self.attempt.is_some() {
            context.turn = Turn {
                number: self.turn.unwrap_or(1),
                max: self.max_turns,
                attempt: self.attempt.filter(|attempt| *attempt > 0),
                set: true,
            };
        }
        for (namespace, fields) in [
            (Namespace::Assistant, self.assistant),
            (Namespace::Conversation, self.conversation),
            (Namespace::Session, self.session),
            (Namespace::Message, self.message),
        ] {
            let Some(Fields { fields, warnings }) = fields else {
                continue;
            };
            let name = namespace.as_str();
            let what = format!("the {name} namespace");
            let map = fields::expect_object(fields, &what)
                .map_err(|error| error.message().to_string())?;
            // A recorded namespace has its dotted keys expanded already.
            let (map, more) = fields::expand_dotted(map, &what);
            if let Some(slot) = context.namespaces.get_mut(namespace.slot()) {
                *slot = Some(HostLayer {
                    layer: Data::new(single_key(name, Value::Object(map))),
                    warnings: warnings.into_iter().chain(more).collect(),
                });
            }
        }
        if let Some(Fields { fields, warnings }) = self.args {
            let map = fields::expect_object(fields, "the args")
                .map_err(|error| error.message().to_string())?;
            let (map, more) = fields::expand_dotted(map, "args");
            // The warnings of the root copy are among those recorded.
            let (root, _) = fields::root_args(&map);
            context.args = Some(ArgsLayers {
                namespaced: Data::new(single_key("args", Value::Object(map))),
                root: Data::new(Value::Object(root)),
                warnings: warnings.into_iter().chain(more).collect(),
            });
        }
        if let Some(rules) = self.custom_rules {
            context = context.custom_rules(rules);
        }
        if let Some(data) = self.data {
            context = context
                .data(data)
                .map_err(|error| error.message().to_string())?;
        }
        if let Some(language) = self.client_language {
            context = context.client_language(language);
        }
        if !self.history.is_empty() {
            context.history = Tracked::new(History::from(self.history));
        }
        context.workspace = self.workspace.map(Arc::new);
        context.labels = Arc::new(self.labels);
        Ok(context)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{LoadOptions, Prompt};

    fn round_trip(context: &PromptContext) -> PromptContext {
        let text = serde_json::to_string(context).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn a_deserialized_context_renders_the_same() {
        let prompt = Prompt::from_source(
            "t.j2",
            "{{ role('system') }}{{ assistant.name }} {{ system.local_datetime }} \
             {{ run.turn_number }}/{{ run.max_turns }} {{ attempt }} {{ mode }} \
             {{ args.deep.key }} {{ custom_rules }} {{ issue }} {{ message.language }}\
             {{ history() }}",
            &LoadOptions::default(),
        )
        .unwrap();
        let history: Vec<HistoryMessage> = serde_json::from_value(json!([
            {"role": "user", "content": "Hola", "language": "es"},
            {"role": "assistant", "content": "¡Hola!"},
        ]))
        .unwrap();
        let context = PromptContext::new()
            .clock(Clock::parse("2026-11-21T09:05:03Z").unwrap())
            .time_zone_named("Asia/Tokyo")
            .unwrap()
            .turn(3)
            .max_turns(9)
            .attempt(2)
            .assistant(json!({"name": "Ava"}))
            .unwrap()
            .args(json!({"mode": "fast", "deep.key": "v", "mode.x": 1, "session": "s"}))
            .unwrap()
            .custom_rules("Be brief.")
            .data(json!({"issue": "A-1"}))
            .unwrap()
            .client_language("en")
            .with_history(history)
            .label("issue", "A-1");
        let copy = round_trip(&context);
        let (before, after) = (
            prompt.render_turn(&context).unwrap(),
            prompt.render_turn(&copy).unwrap(),
        );
        assert_eq!(
            after.text(),
            "Ava 2026-11-21 18:05:03 +09:00 3/9 2 fast v Be brief. A-1 es"
        );
        assert_eq!(after.text(), before.text());
        assert_eq!(after.warnings(), before.warnings());
        assert_eq!(after.warnings().len(), 2, "{:?}", after.warnings());
        assert_eq!(copy.history(), context.history());
        assert_eq!(copy.labels(), context.labels());
        // Written again, the copy is the same record.
        assert_eq!(
            serde_json::to_value(&copy).unwrap(),
            serde_json::to_value(&context).unwrap()
        );
    }

    #[test]
    fn the_system_clock_and_unset_turns_stay_so() {
        let record = serde_json::to_value(PromptContext::new()).unwrap();
        assert_eq!(record, json!({"history": []}));
        let copy: PromptContext = serde_json::from_value(json!({})).unwrap();
        let built = copy.build(&|_| true).unwrap();
        assert!(built.data.root().get("run").is_none());
        let turn_one = round_trip(&PromptContext::new().turn(1));
        let built = turn_one.build(&|_| true).unwrap();
        assert!(built.data.root().get("run").is_some());
    }

    #[test]
    fn a_workspace_travels_with_its_settings() {
        let workspace = Workspace::new("/tmp/project")
            .max_depth(3)
            .readme_file("GUIDE.md");
        let copy = round_trip(&PromptContext::new().workspace(workspace.clone()));
        assert_eq!(copy.workspace.as_deref(), Some(&workspace));
    }

    #[test]
    fn bad_records_are_errors_that_say_what_is_wrong() {
        for (record, expected) in [
            (
                json!({"now": "soon"}),
                "now: \"soon\" is not an RFC 3339 timestamp",
            ),
            (
                json!({"time_zone": "Nowhere/Land"}),
                "time_zone: unknown time zone",
            ),
            (
                json!({"args": {"fields": 1}}),
                "the args must be a JSON object",
            ),
            (
                json!({"session": {"fields": []}}),
                "the session namespace must be a JSON object",
            ),
            (json!({"data": "x"}), "the data must be a mapping"),
            (json!({"turn": -1}), "invalid value"),
            (
                json!({"history": [{"content": "no role"}]}),
                "missing field `role`",
            ),
            (json!({"colour": 1}), "unknown field `colour`"),
        ] {
            let error = serde_json::from_value::<PromptContext>(record.clone())
                .err()
                .unwrap_or_else(|| panic!("{record} was read"));
            assert!(error.to_string().contains(expected), "{record}: {error}");
        }
    }
}

//! The data as minijinja sees it: lazy objects over [`Data`], never
//! converted up front, and the way back to JSON.

use std::sync::{Arc, Weak};

use minijinja::value::{Enumerator, Object, ObjectRepr};
use minijinja::{ErrorKind, Value as JValue};
use serde_json::Value;

use super::errors::{MissLog, MissPlace};
use crate::data::{Data, Segment, View};

/// A lazy minijinja object over one object or array of the data.
///
/// A node is its parent plus one step (a key or an index), so reaching a
/// child costs one allocation (the node itself); its place in the data is
/// found again from the root when it is read.
#[derive(Debug)]
pub(super) struct Node {
    place: Place,
    /// A message of a chat template's `messages`, read as `transformers`
    /// hands it over (see [`message_field`]).
    message: bool,
    /// The value is an array (else an object): known when the node is
    /// made, so minijinja's frequent `repr` calls need no lookup.
    seq: bool,
}

#[derive(Debug)]
enum Place {
    /// The root of the render's data.
    Root {
        data: Data,
        /// Weak: the log keeps the nodes it names alive, and they their
        /// root; the render owns the log.
        misses: Weak<MissLog>,
        /// A chat template's data: its `messages` read as `transformers`
        /// normalizes them.
        chat: bool,
    },
    /// A step below another node. A key is kept as minijinja's value (a
    /// shared string: no copy).
    Key(Arc<Node>, JValue),
    Index(Arc<Node>, usize),
}

impl Node {
    pub(super) fn root(data: Data, misses: &Arc<MissLog>) -> Node {
        Node {
            place: Place::Root {
                data,
                misses: Arc::downgrade(misses),
                chat: false,
            },
            message: false,
            seq: false,
        }
        .with_kind()
    }

    /// The root of a chat template's data.
    pub(super) fn chat_root(data: Data, misses: &Arc<MissLog>) -> Node {
        Node {
            place: Place::Root {
                data,
                misses: Arc::downgrade(misses),
                chat: true,
            },
            message: false,
            seq: false,
        }
        .with_kind()
    }

    /// `self` with `seq` set from the data.
    fn with_kind(mut self) -> Node {
        self.seq = self.view().is_some_and(|view| view.value().is_array());
        self
    }

    /// True for a chat template's root `messages` list.
    fn is_chat_messages(&self) -> bool {
        match &self.place {
            Place::Key(parent, key) => {
                key.as_str() == Some("messages")
                    && matches!(parent.place, Place::Root { chat: true, .. })
            }
            _ => false,
        }
    }

    /// The keys of this node's object, as the template sees them.
    fn keys<'a>(&self, view: &View<'a>) -> Vec<&'a str> {
        if self.message {
            message_keys(view)
        } else {
            view.keys()
        }
    }

    fn view(&self) -> Option<View<'_>> {
        match &self.place {
            Place::Root { data, .. } => Some(data.root()),
            Place::Key(parent, key) => parent.view()?.get(key.as_str()?),
            Place::Index(parent, index) => parent.view()?.index(*index),
        }
    }

    /// The render's miss log, kept at the root.
    fn misses(&self) -> &Weak<MissLog> {
        match &self.place {
            Place::Root { misses, .. } => misses,
            Place::Key(parent, _) | Place::Index(parent, _) => parent.misses(),
        }
    }

    /// Notes that `key` is not in this node, for the error that may follow.
    fn record_miss(self: &Arc<Self>, key: &JValue) {
        if let Some(misses) = self.misses().upgrade() {
            misses.record(self.clone(), key);
        }
    }

    /// The path from the root, for messages.
    fn path_from_root(&self) -> Vec<Segment> {
        let mut path = match &self.place {
            Place::Root { .. } => return Vec::new(),
            Place::Key(parent, _) | Place::Index(parent, _) => parent.path_from_root(),
        };
        match &self.place {
            Place::Key(_, key) => path.push(Segment::Key(key.as_str().unwrap_or_default().into())),
            Place::Index(_, index) => path.push(Segment::Index(*index)),
            Place::Root { .. } => {}
        }
        path
    }
}

impl MissPlace for Node {
    fn path(&self) -> Vec<Segment> {
        self.path_from_root()
    }
}

/// The minijinja value of a child of `parent`: scalars as values, objects
/// and arrays as nodes.
fn child(parent: &Arc<Node>, place: impl FnOnce(Arc<Node>) -> Place, view: &View<'_>) -> JValue {
    match view.value() {
        value @ (Value::Object(_) | Value::Array(_)) => JValue::from_object(Node {
            place: place(parent.clone()),
            message: parent.is_chat_messages(),
            seq: value.is_array(),
        }),
        scalar => scalar_value(scalar),
    }
}

/// The names a message's reasoning comes under, the standard one first.
const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

/// A field of a chat message as `transformers` (5.x) hands it to a chat
/// template: a key whose value is null is absent (OpenAI's
/// `"content": null` beside `tool_calls`), and the reasoning, under
/// whichever of its names it came, is also `reasoning_content` and
/// `thinking`. The key that holds the value, and the value.
fn message_field<'a>(view: &View<'a>, name: &str) -> Option<(&'a str, View<'a>)> {
    let present = |key: &str| -> Option<(&'a str, View<'a>)> {
        let (key, found) = view.get_entry(key)?;
        (!found.value().is_null()).then_some((key, found))
    };
    let reasoning = || REASONING_FIELDS.iter().find_map(|key| present(key));
    match name {
        "reasoning_content" => reasoning(),
        "thinking" => present("thinking").or_else(reasoning),
        _ => present(name),
    }
}

/// The keys of a chat message in the order `transformers` builds them: with
/// a reasoning, `thinking` first; then the message's own keys that are not
/// null; then `reasoning_content` when it is only an alias.
fn message_keys<'a>(view: &View<'a>) -> Vec<&'a str> {
    let own: Vec<&'a str> = view
        .keys()
        .into_iter()
        .filter(|key| view.get(key).is_some_and(|found| !found.value().is_null()))
        .collect();
    if message_field(view, "reasoning_content").is_none() {
        return own;
    }
    // `{"thinking": reasoning, **message, "reasoning_content": reasoning}`:
    // `thinking` stays first even when the message has its own.
    let mut keys = Vec::with_capacity(own.len() + 2);
    keys.push("thinking");
    keys.extend(own.iter().copied().filter(|key| *key != "thinking"));
    if !own.contains(&"reasoning_content") {
        keys.push("reasoning_content");
    }
    keys
}

fn scalar_value(value: &Value) -> JValue {
    match value {
        Value::Null => JValue::from(()),
        Value::Bool(b) => JValue::from(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                JValue::from(i)
            } else if let Some(u) = n.as_u64() {
                JValue::from(u)
            } else {
                JValue::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => JValue::from(s.as_str()),
        // Objects and arrays become `Node`s; this arm is not reached.
        Value::Array(_) | Value::Object(_) => JValue::from(()),
    }
}

impl Object for Node {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        match self.seq {
            true => ObjectRepr::Seq,
            false => ObjectRepr::Map,
        }
    }

    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        let view = self.view()?;
        if let Value::Array(items) = view.value() {
            let index = key.as_i64()?;
            let index = if index < 0 {
                items.len().checked_sub(index.unsigned_abs() as usize)?
            } else {
                usize::try_from(index).ok()?
            };
            let found = view.index(index)?;
            return Some(child(self, |parent| Place::Index(parent, index), &found));
        }
        let name = key.as_str()?;
        if self.message {
            if let Some((held, found)) = message_field(&view, name) {
                let held = match held == name {
                    true => key.clone(),
                    false => JValue::from(held),
                };
                return Some(child(self, |parent| Place::Key(parent, held), &found));
            }
            self.record_miss(key);
            return None;
        }
        match view.get(name) {
            Some(found) => Some(child(
                self,
                |parent| Place::Key(parent, key.clone()),
                &found,
            )),
            None => {
                self.record_miss(key);
                None
            }
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let Some(view) = self.view() else {
            return Enumerator::Empty;
        };
        match view.value() {
            Value::Array(items) => Enumerator::Seq(items.len()),
            _ => Enumerator::Values(self.keys(&view).into_iter().map(JValue::from).collect()),
        }
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        let view = self.view()?;
        match self.message {
            true => Some(message_keys(&view).len()),
            false => view.len(),
        }
    }

    fn is_true(self: &Arc<Self>) -> bool {
        match self.message {
            true => self
                .view()
                .is_some_and(|view| !message_keys(&view).is_empty()),
            false => self.view().is_some_and(|view| !view.is_empty()),
        }
    }

    /// Python's `repr` of the list or map, as Jinja2 prints data (this is
    /// what `~` and minijinja's own filters print).
    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result
    where
        Self: Sized + 'static,
    {
        f.write_str(&super::python::repr_lossy(&JValue::from_dyn_object(
            self.clone(),
        )))
    }
}

/// A value a host function returned, as minijinja sees it: objects and
/// arrays stay JSON, read lazily like the data.
pub(super) fn json_value(value: Value) -> JValue {
    match value {
        Value::Object(_) | Value::Array(_) => {
            // No miss log: a render's errors name paths in its own data.
            JValue::from_object(Node::root(Data::new(value), &Arc::default()))
        }
        scalar => scalar_value(&scalar),
    }
}

/// The JSON form of a minijinja value: the data itself for our nodes,
/// a conversion for values computed by the template.
pub(super) fn to_json_value(value: &JValue) -> Result<Value, minijinja::Error> {
    if let Some(node) = value.downcast_object_ref::<Node>() {
        let Some(view) = node.view() else {
            return Ok(Value::Null);
        };
        if !node.message {
            return Ok(view.to_json());
        }
        let mut map = serde_json::Map::new();
        for key in message_keys(&view) {
            if let Some((_, found)) = message_field(&view, key) {
                map.insert(key.to_string(), found.to_json());
            }
        }
        return Ok(Value::Object(map));
    }
    use minijinja::value::ValueKind;
    Ok(match value.kind() {
        ValueKind::Undefined => {
            return Err(minijinja::Error::new(
                ErrorKind::UndefinedError,
                "tojson of an undefined value",
            ))
        }
        ValueKind::None => Value::Null,
        ValueKind::Bool => Value::Bool(value.is_true()),
        ValueKind::Number => {
            // A float stays a float (`1.0`, not `1`), even when integral.
            if let (true, Some(i)) = (value.is_integer(), value.as_i64()) {
                Value::from(i)
            } else if let (true, Ok(u)) = (value.is_integer(), u64::try_from(value.clone())) {
                Value::from(u)
            } else {
                let float: f64 = f64::try_from(value.clone()).unwrap_or(f64::NAN);
                serde_json::Number::from_f64(float).map_or(Value::Null, Value::Number)
            }
        }
        ValueKind::String => Value::String(value.as_str().unwrap_or_default().to_string()),
        ValueKind::Bytes => Value::String(
            String::from_utf8_lossy(value.as_bytes().unwrap_or_default()).into_owned(),
        ),
        ValueKind::Seq | ValueKind::Iterable => Value::Array(
            value
                .try_iter()?
                .map(|item| to_json_value(&item))
                .collect::<Result<_, _>>()?,
        ),
        ValueKind::Map => {
            let mut map = serde_json::Map::new();
            for key in value.try_iter()? {
                let item = value.get_item(&key)?;
                map.insert(key.to_string(), to_json_value(&item)?);
            }
            Value::Object(map)
        }
        _ => Value::String(value.to_string()),
    })
}

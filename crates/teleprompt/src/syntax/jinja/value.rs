//! The data as minijinja sees it: lazy objects over [`Data`], never
//! converted up front, and the way back to JSON.

use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr};
use minijinja::{ErrorKind, Value as JValue};
use serde_json::Value;

use super::errors::MissLog;
use crate::data::{Data, Segment, View};

/// A lazy minijinja object over one object or array of the data.
///
/// A node is its parent plus one step (a key or an index), so reaching a
/// child costs one allocation (the node itself); its place in the data is
/// found again from the root when it is read.
#[derive(Debug)]
pub(super) struct Node {
    place: Place,
}

#[derive(Debug)]
enum Place {
    /// The root of the render's data.
    Root {
        data: Data,
        misses: Arc<MissLog>,
    },
    /// A step below another node. A key is kept as minijinja's value (a
    /// shared string: no copy).
    Key(Arc<Node>, JValue),
    Index(Arc<Node>, usize),
}

impl Node {
    pub(super) fn root(data: Data, misses: Arc<MissLog>) -> Node {
        Node {
            place: Place::Root { data, misses },
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
    fn misses(&self) -> &MissLog {
        match &self.place {
            Place::Root { misses, .. } => misses,
            Place::Key(parent, _) | Place::Index(parent, _) => parent.misses(),
        }
    }

    /// The path from the root, for messages.
    fn path(&self) -> Vec<Segment> {
        let mut path = match &self.place {
            Place::Root { .. } => return Vec::new(),
            Place::Key(parent, _) | Place::Index(parent, _) => parent.path(),
        };
        match &self.place {
            Place::Key(_, key) => path.push(Segment::Key(key.as_str().unwrap_or_default().into())),
            Place::Index(_, index) => path.push(Segment::Index(*index)),
            Place::Root { .. } => {}
        }
        path
    }
}

/// The minijinja value of a child of `parent`: scalars as values, objects
/// and arrays as nodes.
fn child(parent: &Arc<Node>, place: impl FnOnce(Arc<Node>) -> Place, view: &View<'_>) -> JValue {
    match view.value() {
        Value::Object(_) | Value::Array(_) => JValue::from_object(Node {
            place: place(parent.clone()),
        }),
        scalar => scalar_value(scalar),
    }
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
        match self.view().map(|view| view.value().is_array()) {
            Some(true) => ObjectRepr::Seq,
            _ => ObjectRepr::Map,
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
        match view.get(name) {
            Some(found) => Some(child(
                self,
                |parent| Place::Key(parent, key.clone()),
                &found,
            )),
            None => {
                self.misses().record(&self.path(), name);
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
            _ => Enumerator::Values(view.keys().into_iter().map(JValue::from).collect()),
        }
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        self.view()?.len()
    }

    fn is_true(self: &Arc<Self>) -> bool {
        self.view().is_some_and(|view| !view.is_empty())
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
            JValue::from_object(Node::root(Data::new(value), Arc::default()))
        }
        scalar => scalar_value(&scalar),
    }
}

/// The JSON form of a minijinja value: the data itself for our nodes,
/// a conversion for values computed by the template.
pub(super) fn to_json_value(value: &JValue) -> Result<Value, minijinja::Error> {
    if let Some(node) = value.downcast_object_ref::<Node>() {
        return Ok(node.view().map_or(Value::Null, |view| view.to_json()));
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

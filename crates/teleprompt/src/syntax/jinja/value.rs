//! The data as minijinja sees it, and the way back to JSON.
//!
//! Each object and array of the data a template reaches is a [`Tree`]: an
//! object over its place in one layer of [`Data`], made when the template
//! reads it. What the template never reads is never converted.
//!
//! The first render of a layer makes its trees for that render only: a
//! tree is its parent plus one step, and finds its value from the layer's
//! root when read (data made for one render, as from Python, pays for
//! nothing else). From the second render of the same layer on, the layer
//! keeps its trees (see [`crate::data::Derived`]): a kept tree fills in its
//! keys and each child when first read and holds them, so later renders
//! read what they read before as minijinja reads its own values.
//!
//! Where lower layers' objects merge under an object, a [`Merged`] view
//! over the trees of each layer is made for the render.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use minijinja::value::{Enumerator, Object, ObjectRepr};
use minijinja::{ErrorKind, Value as JValue};
use serde_json::Value;

use super::current;
use super::errors::MissPlace;
use crate::data::{find_key, same_key, Data, Derived, Layer, Segment, View};

/// The root value a template renders against: the data's trees, merged
/// when several layers hold objects. `chat` reads the data as a chat
/// template's (its `messages` as `transformers` hands them over).
pub(super) fn root(data: &Data, chat: bool) -> JValue {
    if let Some(root) = kept_root(data, chat) {
        return root;
    }
    let Some((first, rest)) = data.layers().split_first() else {
        return JValue::from_object(Tree::root(Arc::new(Value::Null), chat, Mode::Once));
    };
    let top = layer_root(first, chat);
    if !first.value.is_object() {
        return top;
    }
    let lower: Vec<&Layer> = rest
        .iter()
        .filter(|layer| layer.value.is_object())
        .collect();
    if lower.is_empty() {
        return top;
    }
    let parts: Vec<Arc<Tree>> = std::iter::once(top)
        .chain(lower.iter().map(|layer| layer_root(layer, chat)))
        .filter_map(|root| root.downcast_object::<Tree>())
        .collect();
    let kept = parts.iter().all(|part| part.mode == Mode::Kept);
    let cache = first.derived.get_or_init(slot(chat), LayerMemo::default);
    let Some(cache) = cache.filter(|_| kept) else {
        return JValue::from_object(Merged::new(parts));
    };
    // Kept layers: the merged root is kept too, with the top layer, for
    // the layers under it last time.
    let under: Vec<Weak<Derived>> = lower
        .iter()
        .map(|layer| Arc::downgrade(&layer.derived))
        .collect();
    let Ok(mut merged) = cache.merged.lock() else {
        return JValue::from_object(Merged::new(parts));
    };
    if let Some((held, root)) = merged.as_ref() {
        let same =
            held.len() == under.len() && held.iter().zip(&under).all(|(a, b)| Weak::ptr_eq(a, b));
        if same {
            return root.clone();
        }
    }
    let root = JValue::from_object(Merged::new(parts));
    *merged = Some((under, root.clone()));
    root
}

/// The merged root the top layer of `data` keeps, when the object layers
/// under it are those it was kept over: what [`root`] returns then,
/// without making each layer's root and the lists of them again. (Those
/// layers were all rendered before, so [`layer_root`] would change
/// nothing of theirs.)
fn kept_root(data: &Data, chat: bool) -> Option<JValue> {
    let (first, rest) = data.layers().split_first()?;
    if !first.value.is_object() {
        return None;
    }
    let memo = first.derived.get_or_init(slot(chat), LayerMemo::default)?;
    let merged = memo.merged.lock().ok()?;
    let (held, root) = merged.as_ref()?;
    let mut lower = rest.iter().filter(|layer| layer.value.is_object());
    let same = held.iter().all(|held| {
        lower
            .next()
            .is_some_and(|layer| std::ptr::eq(held.as_ptr(), Arc::as_ptr(&layer.derived)))
    });
    (same && lower.next().is_none()).then(|| root.clone())
}

/// The slot of [`Derived`] that Jinja's objects take: one for Jinja, one
/// for a chat template's reading of the same data.
fn slot(chat: bool) -> usize {
    const JINJA: usize = 0;
    const CHAT_TEMPLATE: usize = 1;
    const _: () = assert!(CHAT_TEMPLATE < Derived::SLOTS);
    match chat {
        true => CHAT_TEMPLATE,
        false => JINJA,
    }
}

/// The tree over a layer's root: for this render on the layer's first,
/// then the one the layer keeps.
fn layer_root(layer: &Layer, chat: bool) -> JValue {
    let once = || JValue::from_object(Tree::root(layer.value.clone(), chat, Mode::Once));
    let Some(kept) = layer.derived.get_or_init(slot(chat), LayerMemo::default) else {
        return once();
    };
    if !kept.rendered.swap(true, Ordering::Relaxed) {
        return once();
    }
    kept.root
        .get_or_init(|| JValue::from_object(Tree::root(layer.value.clone(), chat, Mode::Kept)))
        .clone()
}

/// What a layer keeps for Jinja: whether it was rendered, and from its
/// second render, its root tree, and its merged root over the kept layers
/// under it last time (a prompt's defaults). The merged root holds those
/// layers' trees, so it keeps their values while this layer lives (one
/// set of layers at a time).
#[derive(Default)]
struct LayerMemo {
    rendered: AtomicBool,
    root: OnceLock<JValue>,
    merged: Mutex<Option<(Vec<Weak<Derived>>, JValue)>>,
}

/// A value a host function returned, as minijinja sees it: objects and
/// arrays stay JSON, read as the data is.
pub(super) fn json_value(value: Value) -> JValue {
    match value {
        // Quiet: a render's errors name paths in its own data.
        Value::Object(_) | Value::Array(_) => {
            JValue::from_object(Tree::root(Arc::new(value), false, Mode::Quiet))
        }
        scalar => scalar_value(&scalar),
    }
}

/// One object or array of a layer, as minijinja sees it.
#[derive(Debug)]
pub(super) struct Tree {
    /// The layer's root value: the tree finds its own value from there.
    layer: Arc<Value>,
    place: Place,
    mode: Mode,
    role: Role,
    /// The value is an array (else an object).
    seq: bool,
    /// Keys of an object (as the template sees them), elements of an array.
    len: usize,
    /// A kept tree's children (unused by the others).
    filled: OnceLock<Filled>,
}

/// Where a tree is in its layer.
#[derive(Debug)]
enum Place {
    Root,
    /// A tree made for one render: its parent (which does not hold it)
    /// and one step.
    Below(Arc<Tree>, Step),
    /// A kept tree: the steps from the root. Not a link to its parent,
    /// which holds it.
    Path(Box<[Step]>),
}

/// How a tree is made and kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// For one render: children are made when read, and not kept.
    Once,
    /// Kept with its layer: children are made when first read, and kept.
    Kept,
    /// A host function's result, for one render: misses in it are not
    /// the render's data.
    Quiet,
}

/// One step from a tree to its child.
#[derive(Clone, Debug)]
enum Step {
    /// The key as the data holds it (a shared string).
    Key(JValue),
    Index(usize),
}

/// What a tree is in a chat template's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Plain,
    /// The root of a chat template's data.
    ChatRoot,
    /// Its `messages`.
    Messages,
    /// One of them, read as `transformers` hands it over (see
    /// [`message_field`]).
    Message,
}

/// A tree's children, made as they are first read.
#[derive(Debug)]
enum Filled {
    Map {
        keys: Box<[JValue]>,
        values: Box<[OnceLock<Held>]>,
        /// Each key's [`key_tag`], scanned before any key is compared.
        tags: Box<[u64]>,
        /// Positions of the keys of a larger object (a few are scanned).
        index: Option<HashMap<Box<str>, usize>>,
    },
    /// Elements in chunks, each made when one of its elements is first
    /// read: a long array (a history) costs little when one element is.
    Seq(Box<[OnceLock<Chunk>]>),
}

impl Filled {
    /// A map's slots over `keys`.
    fn map(keys: Box<[JValue]>) -> Filled {
        let index = (keys.len() > SCAN_KEYS).then(|| {
            keys.iter()
                .enumerate()
                .map(|(at, key)| (Box::from(key.as_str().unwrap_or_default()), at))
                .collect()
        });
        Filled::Map {
            values: keys.iter().map(|_| OnceLock::new()).collect(),
            tags: keys
                .iter()
                .map(|key| key_tag(key.as_str().unwrap_or_default()))
                .collect(),
            keys,
            index,
        }
    }

    /// A map's key `name` as a value, and its slot.
    fn entry(&self, name: &str) -> Option<(&JValue, &OnceLock<Held>)> {
        let Filled::Map {
            keys,
            values,
            tags,
            index,
        } = self
        else {
            return None;
        };
        if let Some(index) = index {
            let at = *index.get(name)?;
            return Some((keys.get(at)?, values.get(at)?));
        }
        let tag = key_tag(name);
        for ((held, key), value) in tags.iter().zip(keys.iter()).zip(values.iter()) {
            if *held == tag
                && key
                    .as_str()
                    .is_some_and(|key| same_key(key.as_bytes(), name.as_bytes()))
            {
                return Some((key, value));
            }
        }
        None
    }
}

/// Python's `repr` of one of our objects, as Jinja2 prints data.
fn write_repr(
    object: Arc<impl Object + 'static>,
    f: &mut std::fmt::Formatter<'_>,
) -> std::fmt::Result {
    f.write_str(&super::python::repr_lossy(&JValue::from_dyn_object(object)))
}

/// A value a kept tree holds, with the bytes of its text (what a read of
/// it counts: see [`charged`]), found once.
#[derive(Debug)]
struct Held {
    value: JValue,
    text: usize,
}

impl Held {
    fn new(value: JValue) -> Held {
        let text = value.as_str().map_or(0, str::len);
        Held { value, text }
    }

    /// The value, its text counted as [`charged`] counts it.
    #[inline]
    fn read(&self) -> Option<JValue> {
        current::read(self.text).then(|| self.value.clone())
    }
}

/// The value `slot` holds, made by `make` and kept there the first time.
/// (`make` runs outside the slot's lock: it may read other slots.)
fn kept_in(slot: &OnceLock<Held>, make: impl FnOnce() -> Option<JValue>) -> Option<&Held> {
    if let Some(made) = slot.get() {
        return Some(made);
    }
    let made = make()?;
    Some(slot.get_or_init(|| Held::new(made)))
}

/// Up to [`CHUNK`] elements of an array, each made when first read.
type Chunk = Box<[OnceLock<Held>]>;

/// Keys scanned (by their tags) before a map of positions pays off.
const SCAN_KEYS: usize = 32;

/// A key's length, first two bytes and last byte in one word: keys with
/// different tags differ, so a lookup compares one word per key and the
/// text of a key only when the tags match.
fn key_tag(key: &str) -> u64 {
    let bytes = key.as_bytes();
    let byte = |at: usize| bytes.get(at).copied().map_or(0, u64::from);
    let last = bytes.last().copied().map_or(0, u64::from);
    (bytes.len() as u64) << 32 | byte(0) << 16 | byte(1) << 8 | last
}
/// Elements per chunk of an array.
const CHUNK: usize = 32;

impl Tree {
    fn root(layer: Arc<Value>, chat: bool, mode: Mode) -> Tree {
        let role = match chat {
            true => Role::ChatRoot,
            false => Role::Plain,
        };
        let (seq, len) = shape(&layer, role);
        Tree {
            layer,
            place: Place::Root,
            mode,
            role,
            seq,
            len,
            filled: OnceLock::new(),
        }
    }

    /// This tree's value, found from the layer's root.
    fn value(&self) -> Option<&Value> {
        self.resolve(&self.layer)
    }

    fn resolve<'v>(&self, layer: &'v Value) -> Option<&'v Value> {
        match &self.place {
            Place::Root => Some(layer),
            Place::Below(parent, step) => step.take(parent.resolve(layer)?),
            Place::Path(path) => path.iter().try_fold(layer, |value, step| step.take(value)),
        }
    }

    /// The keys of a map as the template sees them.
    fn keys(&self) -> Vec<JValue> {
        if self.seq {
            return Vec::new();
        }
        if self.mode == Mode::Kept {
            if let Filled::Map { keys, .. } = self.filled() {
                return keys.to_vec();
            }
        }
        self.value()
            .map(|value| self.keys_of(value))
            .unwrap_or_default()
    }

    fn keys_of(&self, value: &Value) -> Vec<JValue> {
        let view = View::single(value);
        match self.role {
            Role::Message => message_keys(&view),
            _ => view.keys(),
        }
        .into_iter()
        .map(JValue::from)
        .collect()
    }

    fn filled(&self) -> &Filled {
        self.filled.get_or_init(|| {
            if self.seq {
                let chunks = self.len.div_ceil(CHUNK);
                return Filled::Seq((0..chunks).map(|_| OnceLock::new()).collect());
            }
            match self.value() {
                Some(value) => Filled::map(self.keys_of(value).into()),
                None => Filled::map(Box::default()),
            }
        })
    }

    /// The child under `name`, without noting a miss.
    fn lookup(self: &Arc<Self>, name: &str) -> Option<JValue> {
        if self.mode != Mode::Kept {
            return charged(self.make_by_key(name, None));
        }
        let Some((key, slot)) = self.filled().entry(name) else {
            return charged(None);
        };
        match kept_in(slot, || self.make_by_key(name, Some(key))) {
            Some(held) => held.read(),
            None => charged(None),
        }
    }

    /// Makes the child under `name` (`key`: the key as a value, when the
    /// caller has it).
    fn make_by_key(self: &Arc<Self>, name: &str, key: Option<&JValue>) -> Option<JValue> {
        let value = self.value()?;
        let (held, found) = match self.role {
            Role::Message => {
                let (held, found) = message_field(&View::single(value), name)?;
                (held, found.value())
            }
            _ => {
                let (held, found) = find_key(value.as_object()?, name)?;
                (held.as_str(), found)
            }
        };
        let held = match key {
            Some(key) if held == name => key.clone(),
            _ => JValue::from(held),
        };
        Some(self.child(Step::Key(held), found))
    }

    /// The element at `index`.
    fn item(self: &Arc<Self>, index: usize) -> Option<JValue> {
        if index >= self.len {
            return None;
        }
        if self.mode != Mode::Kept {
            return charged(self.make_item(index));
        }
        match self.kept_item(index) {
            Some(held) => held.read(),
            None => charged(None),
        }
    }

    fn make_item(self: &Arc<Self>, index: usize) -> Option<JValue> {
        let found = self.value()?.as_array()?.get(index)?;
        Some(self.child(Step::Index(index), found))
    }

    fn kept_item(self: &Arc<Self>, index: usize) -> Option<&Held> {
        let Filled::Seq(chunks) = self.filled() else {
            return None;
        };
        let chunk = chunks.get(index / CHUNK)?.get_or_init(|| {
            let size = CHUNK.min(self.len - index / CHUNK * CHUNK);
            (0..size).map(|_| OnceLock::new()).collect()
        });
        kept_in(chunk.get(index % CHUNK)?, || self.make_item(index))
    }

    /// A child of this tree: scalars as values, objects and arrays as trees.
    fn child(self: &Arc<Self>, step: Step, value: &Value) -> JValue {
        if !matches!(value, Value::Object(_) | Value::Array(_)) {
            return scalar_value(value);
        }
        let role = match (self.role, &step) {
            (Role::ChatRoot, Step::Key(key)) if key.as_str() == Some("messages") => Role::Messages,
            (Role::Messages, _) => Role::Message,
            _ => Role::Plain,
        };
        let (seq, len) = shape(value, role);
        let place = match (&self.place, self.mode) {
            (Place::Path(path), Mode::Kept) => {
                Place::Path(path.iter().cloned().chain([step]).collect())
            }
            (Place::Root, Mode::Kept) => Place::Path(Box::new([step])),
            _ => Place::Below(self.clone(), step),
        };
        JValue::from_object(Tree {
            layer: self.layer.clone(),
            place,
            mode: self.mode,
            role,
            seq,
            len,
            filled: OnceLock::new(),
        })
    }

    /// Notes that `key` is not in this tree, for the error that may follow.
    fn record_miss(self: &Arc<Self>, key: &str) {
        if self.mode != Mode::Quiet {
            current::record_miss(self.clone(), key);
        }
    }
}

impl Step {
    /// The value one step below `value`.
    fn take<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        match self {
            Step::Key(key) => find_key(value.as_object()?, key.as_str()?).map(|(_, found)| found),
            Step::Index(index) => value.as_array()?.get(*index),
        }
    }

    fn segment(&self) -> Segment {
        match self {
            Step::Key(key) => Segment::Key(key.as_str().unwrap_or_default().into()),
            Step::Index(index) => Segment::Index(*index),
        }
    }
}

/// Whether a value is read as an array, and its length as the template
/// sees it (a message's keys as `transformers` builds them).
fn shape(value: &Value, role: Role) -> (bool, usize) {
    match value {
        Value::Array(items) => (true, items.len()),
        Value::Object(_) if role == Role::Message => {
            (false, message_keys(&View::single(value)).len())
        }
        Value::Object(map) => (false, map.len()),
        _ => (false, 0),
    }
}

impl MissPlace for Tree {
    fn path(&self) -> Vec<Segment> {
        match &self.place {
            Place::Root => Vec::new(),
            Place::Below(parent, step) => {
                let mut path = parent.path();
                path.push(step.segment());
                path
            }
            Place::Path(path) => path.iter().map(Step::segment).collect(),
        }
    }
}

impl Object for Tree {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        match self.seq {
            true => ObjectRepr::Seq,
            false => ObjectRepr::Map,
        }
    }

    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        if self.seq {
            let index = key.as_i64()?;
            let index = if index < 0 {
                self.len.checked_sub(index.unsigned_abs() as usize)?
            } else {
                usize::try_from(index).ok()?
            };
            return self.item(index);
        }
        self.get_value_by_str(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, name: &str) -> Option<JValue> {
        if self.seq {
            return None;
        }
        let found = self.lookup(name);
        if found.is_none() {
            self.record_miss(name);
        }
        found
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        match self.seq {
            true => Enumerator::Seq(self.len),
            false => Enumerator::Values(self.keys()),
        }
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.len)
    }

    fn is_true(self: &Arc<Self>) -> bool {
        self.len > 0
    }

    /// Python's `repr` of the list or map, as Jinja2 prints data (this is
    /// what `~` and minijinja's own filters print).
    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result
    where
        Self: Sized + 'static,
    {
        write_repr(self.clone(), f)
    }
}

/// An object of the data where lower layers' objects merge under the
/// highest one's: its keys are theirs, the highest layer's first, and a
/// key's value is the highest layer's that has it. Made for one render.
#[derive(Debug)]
pub(super) struct Merged {
    /// The trees of the layers that hold an object here, highest first.
    parts: Vec<Arc<Tree>>,
    keys: OnceLock<Vec<JValue>>,
    /// Over kept trees only: each key's value, made when first read and
    /// kept (the merged object is kept with its layer).
    kept: Option<OnceLock<Filled>>,
}

impl Merged {
    fn new(parts: Vec<Arc<Tree>>) -> Merged {
        let kept = parts.iter().all(|part| part.mode == Mode::Kept);
        Merged {
            parts,
            keys: OnceLock::new(),
            kept: kept.then(OnceLock::new),
        }
    }

    /// The value under `name`: the highest layer's that has it, merged
    /// with the objects under it when it is an object.
    fn find(&self, name: &str) -> Option<JValue> {
        for (at, part) in self.parts.iter().enumerate() {
            let Some(found) = part.lookup(name) else {
                continue;
            };
            if found
                .downcast_object_ref::<Tree>()
                .is_none_or(|tree| tree.seq)
            {
                return Some(found);
            }
            let lower = self.parts.get(at + 1..).unwrap_or_default();
            let mut parts: Vec<Arc<Tree>> = lower
                .iter()
                .filter_map(|part| object_tree(&part.lookup(name)?))
                .collect();
            if parts.is_empty() {
                return Some(found);
            }
            parts.insert(0, object_tree(&found)?);
            return Some(JValue::from_object(Merged::new(parts)));
        }
        None
    }

    fn keys(&self) -> &[JValue] {
        self.keys.get_or_init(|| {
            let mut keys: Vec<JValue> = Vec::new();
            for part in &self.parts {
                for key in part.keys() {
                    if !keys.contains(&key) {
                        keys.push(key);
                    }
                }
            }
            keys
        })
    }
}

/// The tree of an object (not an array) in `value`.
fn object_tree(value: &JValue) -> Option<Arc<Tree>> {
    value.downcast_object::<Tree>().filter(|tree| !tree.seq)
}

impl MissPlace for Merged {
    fn path(&self) -> Vec<Segment> {
        self.parts
            .first()
            .map(|part| part.path())
            .unwrap_or_default()
    }
}

impl Object for Merged {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        self.get_value_by_str(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, name: &str) -> Option<JValue> {
        let found = match &self.kept {
            Some(kept) => {
                let filled = kept.get_or_init(|| Filled::map(self.keys().into()));
                // An absent key is a miss, noted below.
                filled
                    .entry(name)
                    .and_then(|(_, slot)| kept_in(slot, || self.find(name)))
                    .map(|held| held.value.clone())
            }
            None => self.find(name),
        };
        if found.is_some() {
            return found;
        }
        if !self.parts.iter().all(|part| part.mode == Mode::Quiet) {
            current::record_miss(self.clone(), name);
        }
        None
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.keys().to_vec())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.keys().len())
    }

    fn is_true(self: &Arc<Self>) -> bool {
        !self.keys().is_empty()
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result
    where
        Self: Sized + 'static,
    {
        write_repr(self.clone(), f)
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

/// A value read from the data, its text counted ([`current::read`]):
/// nothing once the render must end (the host stopped it, or it read
/// past `max_steps`; the render reports why), so its loops over the data
/// run out.
#[inline]
fn charged(found: Option<JValue>) -> Option<JValue> {
    let bytes = found.as_ref().and_then(JValue::as_str).map_or(0, str::len);
    current::read(bytes).then_some(found).flatten()
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
        // Objects and arrays become trees; this arm is not reached.
        Value::Array(_) | Value::Object(_) => JValue::from(()),
    }
}

/// The JSON form of a minijinja value: the data itself for our trees,
/// a conversion for merged objects and values computed by the template.
pub(super) fn to_json_value(value: &JValue) -> Result<Value, minijinja::Error> {
    if let Some(tree) = value.downcast_object_ref::<Tree>() {
        let Some(value) = tree.value() else {
            return Ok(Value::Null);
        };
        if tree.role != Role::Message {
            return Ok(value.clone());
        }
        let view = View::single(value);
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

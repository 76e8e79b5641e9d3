//! Jinja's filters that order a list (`min`, `max`, `sort`) or drop its
//! repeated items (`unique`), on the direct path. The items (or the key
//! of maps `sort` orders by) are all integers or all strings, compared as
//! minijinja compares them: integers by value, strings by their bytes, or
//! ignoring ASCII case (minijinja without its `unicode` feature) unless
//! `case_sensitive`. Anything else (floats, booleans, `none`, a missing
//! key, an empty list's `min`) is minijinja's.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashSet;

use serde_json::Value as Json;

use super::fail::internal;
use super::flavor::jinja::not_jinja;
use super::ops::{list_items, made_list, weigh};
use super::program::{Expr, Func, JinjaOp, Order, Span};
use super::render::{Renderer, Result};
use super::value::Value;

/// What an item is compared by.
#[derive(Clone, Copy)]
enum Key<'j> {
    Int(i64),
    Text(&'j str),
}

impl<'j> Key<'j> {
    /// An integer of 64 bits or a string; anything else compares as
    /// minijinja alone says.
    fn of(json: &'j Json) -> Option<Key<'j>> {
        match json {
            Json::Number(n) => n.as_i64().map(Key::Int),
            Json::String(text) => Some(Key::Text(text)),
            _ => None,
        }
    }

    fn bytes(self) -> usize {
        match self {
            Key::Int(_) => 0,
            Key::Text(text) => text.len(),
        }
    }
}

/// The keys of `values`, if each is one and they are all integers or all
/// strings (minijinja orders an integer and a string by their kinds).
fn keys<'j>(values: impl Iterator<Item = Option<&'j Json>>) -> Option<Vec<Key<'j>>> {
    let keys = values
        .map(|value| value.and_then(Key::of))
        .collect::<Option<Vec<Key<'j>>>>()?;
    let ints = keys.iter().filter(|key| matches!(key, Key::Int(_))).count();
    (ints == 0 || ints == keys.len()).then_some(keys)
}

/// minijinja's `cmp_helper` of two keys of one kind (not reversed).
fn compare(a: Key<'_>, b: Key<'_>, case_sensitive: bool) -> Ordering {
    match (a, b) {
        (Key::Int(a), Key::Int(b)) => a.cmp(&b),
        (Key::Text(a), Key::Text(b)) if case_sensitive => a.cmp(b),
        (Key::Text(a), Key::Text(b)) => a
            .bytes()
            .map(|byte| byte.to_ascii_lowercase())
            .cmp(b.bytes().map(|byte| byte.to_ascii_lowercase())),
        // Not met: the keys are of one kind (numbers before strings).
        (Key::Int(_), Key::Text(_)) => Ordering::Less,
        (Key::Text(_), Key::Int(_)) => Ordering::Greater,
    }
}

/// How many times a sort of `len` items may compare each: its depth.
fn depth(len: usize) -> usize {
    (usize::BITS - len.leading_zeros()) as usize + 1
}

impl<'a> Renderer<'a> {
    /// The items of a list of the data (not a chat template's messages)
    /// or of one the template made.
    fn ordered_items<'v>(&self, list: &'v Value<'a>, span: Span) -> Result<&'v [Json]> {
        match list {
            Value::Array(items) if self.holds_messages(items) => {
                Err(not_jinja(span, "order", list))
            }
            other => list_items(other).ok_or_else(|| not_jinja(span, "order", other)),
        }
    }

    /// `items`, copied into a new list: the copy counted first.
    fn copied_list<'j>(
        &mut self,
        op: JinjaOp,
        items: impl Iterator<Item = &'j Json> + Clone,
        span: Span,
    ) -> Result<Value<'a>> {
        let (mut nodes, mut bytes) = (0, 0);
        items
            .clone()
            .for_each(|item| weigh(item, &mut nodes, &mut bytes));
        self.charge_copy(Func::Jinja(op), (nodes, bytes), span)?;
        Ok(made_list(items.cloned().collect()))
    }

    /// `list | min`, `list | max` ([`JinjaOp::Extreme`]): the first of the
    /// least (greatest) items.
    #[inline(never)]
    pub(super) fn extreme(
        &mut self,
        order: Order,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let list = self.arg(args, 0, span, dot)?;
        let items = self.ordered_items(&list, span)?;
        // An empty list's is undefined: minijinja's.
        let Some(keys) = keys(items.iter().map(Some)).filter(|keys| !keys.is_empty()) else {
            return Err(not_jinja(span, "compare the items of", &list));
        };
        let bytes = keys.iter().map(|key| key.bytes()).sum();
        self.tick_work(keys.len(), bytes, span)?;
        let wanted = match order.reverse {
            true => Ordering::Greater,
            false => Ordering::Less,
        };
        let mut best: Option<(usize, Key<'_>)> = None;
        for (at, key) in keys.into_iter().enumerate() {
            match best {
                Some((_, found)) if compare(key, found, order.case_sensitive) != wanted => {}
                _ => best = Some((at, key)),
            }
        }
        let at = best.map(|(at, _)| at).ok_or_else(|| internal(span))?;
        match &list {
            Value::Array(items) => items.get(at).map(Value::from_json),
            _ => items.get(at).map(|item| Value::owned(item.clone())),
        }
        .ok_or_else(|| internal(span))
    }

    /// `list | sort(…)` ([`JinjaOp::Sort`]): a stable sort, by the items
    /// or by a key of each (a map's), the second argument.
    #[inline(never)]
    pub(super) fn sort_list(
        &mut self,
        order: Order,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let list = self.arg(args, 0, span, dot)?;
        let attribute = self.arg(args, 1, span, dot)?;
        let items = self.ordered_items(&list, span)?;
        let keys = match (&attribute, attribute.as_str()) {
            (Value::Null, _) => keys(items.iter().map(Some)),
            (_, Some(name)) => keys(
                items
                    .iter()
                    .map(|item| item.as_object().and_then(|map| map.get(name))),
            ),
            _ => return Err(internal(span)),
        };
        let Some(keys) = keys else {
            return Err(not_jinja(span, "sort", &list));
        };
        let bytes: usize = keys.iter().map(|key| key.bytes()).sum();
        let depth = depth(keys.len());
        self.tick_work(
            keys.len().saturating_mul(depth),
            bytes.saturating_mul(depth),
            span,
        )?;
        let mut keyed: Vec<(Key<'_>, &Json)> = keys.into_iter().zip(items).collect();
        keyed.sort_by(|(a, _), (b, _)| {
            let ordering = compare(*a, *b, order.case_sensitive);
            match order.reverse {
                true => ordering.reverse(),
                false => ordering,
            }
        });
        self.copied_list(
            JinjaOp::Sort(order),
            keyed.iter().map(|(_, item)| *item),
            span,
        )
    }

    /// `list | unique` ([`JinjaOp::Unique`]): the items, strings and
    /// integers, but those equal to one before (strings in Unicode
    /// lowercase, as minijinja's `unique` folds them, unless
    /// `case_sensitive`).
    #[inline(never)]
    pub(super) fn unique(
        &mut self,
        order: Order,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let list = self.arg(args, 0, span, dot)?;
        let items = self.ordered_items(&list, span)?;
        let mut bytes = 0usize;
        for item in items {
            match Key::of(item) {
                Some(key) => bytes = bytes.saturating_add(key.bytes()),
                None => return Err(not_jinja(span, "compare the items of", &list)),
            }
        }
        self.tick_work(items.len(), bytes, span)?;
        // The lowercase copies are counted as built text.
        if !order.case_sensitive {
            self.count_built(Func::Jinja(JinjaOp::Unique(order)), bytes, span)?;
        }
        let (mut ints, mut texts) = (HashSet::new(), HashSet::new());
        let mut kept = Vec::new();
        for item in items {
            let new = match Key::of(item) {
                Some(Key::Int(int)) => ints.insert(int),
                Some(Key::Text(text)) if order.case_sensitive => texts.insert(Cow::Borrowed(text)),
                Some(Key::Text(text)) => texts.insert(Cow::Owned(text.to_lowercase())),
                None => return Err(internal(span)),
            };
            if new {
                kept.push(item);
            }
        }
        self.copied_list(JinjaOp::Unique(order), kept.into_iter(), span)
    }
}

//! Operators: Jinja's ([`JinjaOp`]) and the comparisons Go's `eq`, `lt`, …
//! make.

use super::budget::text_bytes;
use super::fail::{func_error, internal};
use super::flavor::go as gofmt;
use super::flavor::jinja::not_jinja;
use super::program::{Arith, Const, Expr, Func, IsKind, JinjaOp, LoopField, Span};
use super::render::{Renderer, Result};
use super::texts::character;
use super::value::Value;

impl<'a> Renderer<'a> {
    /// `and`, `or` (the first true value, or the last) and `not`, with the
    /// flavor's truth.
    #[inline]
    pub(super) fn logic(
        &mut self,
        func: Func,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
        test: bool,
    ) -> Result<Value<'a>> {
        if matches!(func, Func::Not) {
            let expr = args.first().ok_or_else(|| internal(span))?;
            let value = self.eval(expr, dot, test)?;
            return Ok(Value::Bool(!self.truth(&value)));
        }
        let mut last = Value::Missing;
        for expr in args {
            let value = self.eval(expr, dot, test)?;
            if self.truth(&value) == matches!(func, Func::Or) {
                return Ok(value);
            }
            last = value;
        }
        Ok(last)
    }

    /// Go's comparisons: `eq` (true when the first argument equals any
    /// other), `ne`, `lt`, `le`, `gt`, `ge`. `loose`: Jinja's `==`/`!=` of
    /// a lenient render ([`JinjaOp::Loose`]), where a missing operand
    /// equals only another missing one (minijinja's undefined).
    #[inline]
    pub(super) fn compare(
        &mut self,
        func: Func,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
        loose: bool,
    ) -> Result<Value<'a>> {
        if matches!(func, Func::Eq) {
            let first = self.arg_tested(args, 0, span, dot, loose)?;
            for expr in args.get(1..).unwrap_or(&[]) {
                let other = self.eval(expr, dot, loose)?;
                if let Some(equal) = missing_equal(&first, &other) {
                    if equal {
                        return Ok(Value::Bool(true));
                    }
                    continue;
                }
                if self.program.flavor.is_jinja() && kind(&first) != kind(&other) {
                    if !jinja_unequal(&first, &other, span)? {
                        return Ok(Value::Bool(true));
                    }
                    continue;
                }
                if self.program.flavor.is_jinja() && kind(&first) == Kind::Other {
                    if self.maps_equal(&first, &other, span)? {
                        return Ok(Value::Bool(true));
                    }
                    continue;
                }
                // Two strings are compared up to the shorter one's end.
                let read = text_bytes(std::slice::from_ref(&first))
                    .min(text_bytes(std::slice::from_ref(&other)));
                self.tick_work(0, read, span)?;
                if equal(&first, &other).map_err(|m| func_error(func, span, m))? {
                    return Ok(Value::Bool(true));
                }
            }
            return Ok(Value::Bool(false));
        }
        let a = self.arg_tested(args, 0, span, dot, loose)?;
        let b = self.arg_tested(args, 1, span, dot, loose)?;
        if let Some(equal) = missing_equal(&a, &b).filter(|_| matches!(func, Func::Ne)) {
            return Ok(Value::Bool(!equal));
        }
        if matches!(func, Func::Ne) && self.program.flavor.is_jinja() && kind(&a) != kind(&b) {
            return jinja_unequal(&a, &b, span).map(Value::Bool);
        }
        if matches!(func, Func::Ne) && self.program.flavor.is_jinja() && kind(&a) == Kind::Other {
            return self
                .maps_equal(&a, &b, span)
                .map(|equal| Value::Bool(!equal));
        }
        let read = text_bytes(std::slice::from_ref(&a)).min(text_bytes(std::slice::from_ref(&b)));
        self.tick_work(0, read, span)?;
        let result = match func {
            Func::Ne => equal(&a, &b).map(|e| !e),
            Func::Lt => less(&a, &b),
            Func::Le => less(&a, &b).and_then(|lt| Ok(lt || equal(&a, &b)?)),
            Func::Gt => less(&a, &b).and_then(|lt| Ok(!(lt || equal(&a, &b)?))),
            _ => less(&a, &b).map(|lt| !lt),
        };
        result
            .map(Value::Bool)
            .map_err(|m| func_error(func, span, m))
    }

    /// Jinja's operators ([`JinjaOp`]).
    #[inline(never)]
    pub(super) fn jinja_op(
        &mut self,
        op: JinjaOp,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
        test: bool,
    ) -> Result<Value<'a>> {
        match op {
            JinjaOp::Defined => {
                let expr = args.first().ok_or_else(|| internal(span))?;
                Ok(Value::Bool(self.defined(expr, span, dot)?.is_some()))
            }
            JinjaOp::Default => {
                let expr = args.first().ok_or_else(|| internal(span))?;
                let found = self.defined(expr, span, dot)?;
                // Jinja evaluates a filter's arguments before the filter:
                // a fallback that fails fails the render, defined value
                // or not.
                let fallback = self.arg(args, 1, span, dot)?;
                // `default(fallback, true)`: a false value too.
                let boolean = args.len() > 2;
                Ok(match found {
                    Some(found) if !boolean || self.truth(&found) => found,
                    _ => fallback,
                })
            }
            JinjaOp::Cond => {
                // The condition is a test (a missing value may be false);
                // the branch is read as the whole is.
                let tested = self.arg_tested(args, 0, span, dot, true)?;
                let branch = if self.truth(&tested) { 1 } else { 2 };
                self.arg_tested(args, branch, span, dot, test)
            }
            JinjaOp::Concat | JinjaOp::Add => self.concat(op, args, span, dot),
            JinjaOp::Raise => Err(not_jinja(span, "raise", &Value::Null)),
            JinjaOp::Arith(arith) => self.arith(arith, args, span, dot),
            JinjaOp::ToJson => self.python_tojson(args, span, dot),
            JinjaOp::Item => self.item(args, span, dot),
            JinjaOp::Macro(template) => self.call_macro(template, args, span, dot),
            JinjaOp::Strftime => self.strftime(op, args, span, dot),
            JinjaOp::Select(select) => self.select(select, args, span, dot),
            JinjaOp::MapAttr => self.map_attr(args, span, dot),
            JinjaOp::MapFilter => self.map_filter(args, span, dot),
            JinjaOp::Unset => Ok(Value::Missing),
            JinjaOp::OrEmpty => match self.arg_tested(args, 0, span, dot, true)? {
                Value::Missing => Ok(Value::Str("")),
                value => Ok(value),
            },
            JinjaOp::Loose(ne) => {
                let func = if ne { Func::Ne } else { Func::Eq };
                self.compare(func, args, span, dot, true)
            }
            JinjaOp::Top => match args.first() {
                Some(Expr::Const(Const::Int(slot))) => Ok(usize::try_from(*slot)
                    .ok()
                    .and_then(|slot| self.vars.get(slot))
                    .cloned()
                    .unwrap_or(Value::Missing)),
                _ => Err(internal(span)),
            },
            JinjaOp::Range => self.range(args, span, dot),
            JinjaOp::List => match self.arg(args, 0, span, dot)? {
                list @ Value::Array(_) => Ok(list),
                Value::Json(json) if json.is_array() => Ok(Value::Json(json)),
                other => Err(not_jinja(span, "list", &other)),
            },
            JinjaOp::Dict | JinjaOp::ListOf => self.literal(op, args, span, dot),
            JinjaOp::Unpack => self.unpack(args, span, dot),
            JinjaOp::Extreme(order) => self.extreme(order, args, span, dot),
            JinjaOp::Sort(order) => self.sort_list(order, args, span, dot),
            JinjaOp::Unique(order) => self.unique(order, args, span, dot),
            JinjaOp::String => match self.arg(args, 0, span, dot)? {
                text @ (Value::Str(_) | Value::String(_)) => Ok(text),
                Value::Int(i) => self.built(Func::Jinja(op), i.to_string(), span),
                Value::Bool(b) => Ok(Value::Str(if b { "True" } else { "False" })),
                Value::Null => Ok(Value::Str("None")),
                other => self.python_repr(&other, span),
            },
            JinjaOp::Method(method) => self.method(method, args, span, dot),
            JinjaOp::Is(test) => {
                // A test of a missing value (in a render that is not strict).
                let expr = args.first().ok_or_else(|| internal(span))?;
                let value = self.eval(expr, dot, true)?;
                is_kind(test, &value, span).map(Value::Bool)
            }
            // Read where a test reads it (`if x`), the data's value may
            // be missing as a test's may.
            JinjaOp::SetOr => match self.arg(args, 0, span, dot)? {
                Value::Missing => self.arg_tested(args, 1, span, dot, test),
                value => Ok(value),
            },
            JinjaOp::Held => match self.arg_tested(args, 0, span, dot, test)? {
                Value::Missing if !test => Err(not_jinja(span, "read", &Value::Missing)),
                value => Ok(value),
            },
            JinjaOp::Tested => self.arg_tested(args, 0, span, dot, true),
            JinjaOp::Slice => self.jinja_slice(args, span, dot),
            JinjaOp::In => self.contains(args, span, dot),
        }
    }
    /// `a ~ b ~ …` and `a + b + …` (a chain of one operator the lowering
    /// made one call): texts joined (`~` prints integers and booleans),
    /// integers added, lists joined.
    #[inline(never)]
    fn concat(
        &mut self,
        op: JinjaOp,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        self.with_args(args, dot, |this, pieces| {
            this.join_values(op, pieces, span, false)
        })
    }

    /// [`JinjaOp::Concat`] or [`JinjaOp::Add`] printed whole: texts are
    /// written where they print, not joined first.
    #[inline(never)]
    pub(super) fn print_concat(
        &mut self,
        op: JinjaOp,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<()> {
        self.tick(span)?;
        let joined = self.with_args(args, dot, |this, pieces| {
            this.join_values(op, pieces, span, true)
        })?;
        match joined {
            Value::Null => Ok(()),
            value => self.print(&value, span),
        }
    }

    /// The join of `pieces` by `op`; with `print`, texts are written to
    /// the output instead (and `Value::Null` returned). Counted as the
    /// operator applied pair by pair would count it: each partial text
    /// must fit a value and is built.
    #[inline(never)]
    fn join_values(
        &mut self,
        op: JinjaOp,
        pieces: &[Value<'a>],
        span: Span,
        print: bool,
    ) -> Result<Value<'a>> {
        let func = Func::Jinja(op);
        let textual = |value: &Value<'_>| match value {
            Value::Str(_) | Value::String(_) => true,
            Value::Int(_) | Value::Bool(_) => op == JinjaOp::Concat,
            _ => false,
        };
        if op == JinjaOp::Add && !pieces.iter().all(textual) {
            return self.add_values(pieces, span);
        }
        let mut digits = itoa::Buffer::new();
        let mut total = 0usize;
        let mut partials = 0usize;
        for (i, piece) in pieces.iter().enumerate() {
            total = total.saturating_add(match piece {
                Value::Str(_) | Value::String(_) => piece.as_str().map_or(0, str::len),
                Value::Int(n) => digits.format(*n).len(),
                Value::Bool(b) => {
                    if *b {
                        4
                    } else {
                        5
                    }
                }
                other => return Err(not_jinja(span, "join", other)),
            });
            if i > 0 {
                partials = partials.saturating_add(total);
            }
        }
        self.fits(func, total, span)?;
        self.count_built(func, partials, span)?;
        let mut text = String::new();
        let out = match print {
            true => &mut self.out,
            false => {
                text.reserve_exact(total);
                &mut text
            }
        };
        for piece in pieces {
            match piece {
                Value::Int(n) => gofmt::write_int(out, *n),
                Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
                other => out.push_str(other.as_str().unwrap_or("")),
            }
        }
        if print {
            self.check_output(Some(span))?;
            return Ok(Value::Null);
        }
        Ok(Value::string(text))
    }

    /// `a + b + …` of integers (Python's, within 64 bits) or of lists;
    /// others are minijinja's.
    #[inline(never)]
    fn add_values(&mut self, pieces: &[Value<'a>], span: Span) -> Result<Value<'a>> {
        if pieces.iter().all(|piece| matches!(piece, Value::Int(_))) {
            let mut sum = 0i64;
            for piece in pieces {
                let Value::Int(n) = piece else {
                    return Err(internal(span));
                };
                sum = sum
                    .checked_add(*n)
                    .ok_or_else(|| not_jinja(span, "add", piece))?;
            }
            return Ok(Value::Int(sum));
        }
        let list = |piece: &Value<'_>| match piece {
            Value::Array(_) => true,
            Value::Json(json) => json.is_array(),
            _ => false,
        };
        match pieces.iter().find(|piece| !list(piece)) {
            Some(other) => Err(not_jinja(span, "add", other)),
            None => self.add_lists(pieces, span),
        }
    }

    /// A copy of `nodes` values holding `bytes` of text (see [`weigh`]):
    /// counted as work, and as built bytes.
    pub(super) fn charge_copy(
        &mut self,
        func: Func,
        (nodes, bytes): (usize, usize),
        span: Span,
    ) -> Result<()> {
        self.tick_work(nodes, bytes, span)?;
        let size = nodes.saturating_mul(std::mem::size_of::<serde_json::Value>());
        self.count_built(func, size.saturating_add(bytes), span)
    }

    /// `a + b + …` of lists: a new list of their items (copied; lists of
    /// a chat template's messages are minijinja's).
    #[inline(never)]
    fn add_lists(&mut self, lists: &[Value<'a>], span: Span) -> Result<Value<'a>> {
        let mut joined = Vec::new();
        let (mut nodes, mut bytes) = (0, 0);
        for list in lists {
            let items = match list {
                Value::Array(items) if self.holds_messages(items) => None,
                other => list_items(other),
            };
            let Some(items) = items else {
                return Err(not_jinja(span, "add", list));
            };
            for item in items {
                weigh(item, &mut nodes, &mut bytes);
                joined.push(item.clone());
            }
        }
        self.charge_copy(Func::Jinja(JinjaOp::Add), (nodes, bytes), span)?;
        Ok(made_list(joined))
    }

    /// `list[a:b]`.
    #[inline(never)]
    fn jinja_slice(&mut self, args: &'a [Expr], span: Span, dot: &Value<'a>) -> Result<Value<'a>> {
        let list = self.arg(args, 0, span, dot)?;
        let text = list.as_str();
        // A list the template built: the slice copied.
        let items = match (list_items(&list), text) {
            (Some(items), _) => items,
            (None, Some(_)) => &[],
            (None, None) => return Err(not_jinja(span, "slice", &list)),
        };
        // A text is sliced by its characters.
        let count = match text {
            Some(text) => {
                self.tick_work(0, text.len(), span)?;
                match text.is_ascii() {
                    true => text.len(),
                    false => text.chars().count(),
                }
            }
            None => items.len(),
        };
        let len = i64::try_from(count).unwrap_or(i64::MAX);
        let mut bound = |n: usize, default: i64| -> Result<usize> {
            let at = match self.arg(args, n, span, dot)? {
                Value::Null => default,
                Value::Int(i) if i < 0 => (i.saturating_add(len)).max(0),
                Value::Int(i) => i.min(len),
                other => return Err(not_jinja(span, "slice by", &other)),
            };
            Ok(usize::try_from(at).unwrap_or(0))
        };
        let (start, stop) = (bound(1, 0)?, bound(2, len)?);
        if let Some(text) = text {
            let at = |n: usize| match text.is_ascii() {
                true => n,
                false => text.char_indices().nth(n).map_or(text.len(), |(at, _)| at),
            };
            let (from, to) = (at(start), at(stop.max(start)));
            return Ok(match list {
                Value::Str(whole) => Value::Str(&whole[from..to]),
                _ => Value::string(text[from..to].to_string()),
            });
        }
        let slice = items.get(start..stop.max(start)).unwrap_or(&[]);
        if let Value::Array(whole) = list {
            return Ok(Value::Array(
                whole.get(start..stop.max(start)).unwrap_or(&[]),
            ));
        }
        let copied = slice.to_vec();
        self.tick_work(copied.len(), 0, span)?;
        Ok(made_list(copied))
    }

    /// `a in b`.
    #[inline(never)]
    fn contains(&mut self, args: &'a [Expr], span: Span, dot: &Value<'a>) -> Result<Value<'a>> {
        let needle = self.arg(args, 0, span, dot)?;
        let haystack = self.arg(args, 1, span, dot)?;
        // A haystack a lenient render reads as a test does (the lowering
        // wraps it in `Tested`), missing, holds nothing: minijinja's
        // lenient undefined (`'citations' in controls`).
        if let (Value::Missing, Some(Expr::Call { func, .. })) = (&haystack, args.get(1)) {
            if *func == Func::Jinja(JinjaOp::Tested) {
                return Ok(Value::Bool(false));
            }
        }
        // What a search may walk: the text, or the list's items.
        let walked = match &haystack {
            Value::Array(items) => items.len(),
            Value::Json(json) => json.as_array().map_or(0, Vec::len),
            _ => 0,
        };
        self.tick_work(walked, haystack.as_str().map_or(0, str::len), span)?;
        let found = match (&haystack, needle.as_str()) {
            (Value::Str(_) | Value::String(_), Some(needle)) => {
                haystack.as_str().unwrap_or("").contains(needle)
            }
            (Value::Object(view), Some(key)) if self.is_message(view) => {
                self.message_field(view, key, span)?.is_some()
            }
            (Value::Object(view), Some(key)) => view.get(key).is_some(),
            (Value::Array(_) | Value::Json(_), _) => {
                let Some(items) = list_items(&haystack) else {
                    return Err(not_jinja(span, "search", &haystack));
                };
                let mut found = false;
                for item in items {
                    let item = Value::from_json(item);
                    // Python's `==` across kinds: false, but between
                    // numbers (1 == 1.0, True == 1: minijinja's).
                    let same = if kind(&item) != kind(&needle) {
                        !jinja_unequal(&item, &needle, span)?
                    } else {
                        equal(&item, &needle).map_err(|_| not_jinja(span, "compare", &item))?
                    };
                    if same {
                        found = true;
                        break;
                    }
                }
                found
            }
            (other, _) => return Err(not_jinja(span, "search", other)),
        };
        Ok(Value::Bool(found))
    }

    /// `tojson` ([`JinjaOp::ToJson`]), written by the Jinja front end's
    /// Python ([`super::program::Program::python`]). A chat template's
    /// messages are minijinja's to write (their null keys are absent).
    #[inline(never)]
    fn python_tojson(
        &mut self,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        use super::flavor::jinja::{Indent, JsonOptions, JsonRef};
        let value = self.arg(args, 0, span, dot)?;
        let constant = |n: usize| match args.get(n) {
            Some(Expr::Const(constant)) => Some(constant),
            _ => None,
        };
        let flag = |n: usize| matches!(constant(n), Some(Const::Bool(true)));
        let options = JsonOptions {
            ensure_ascii: flag(1),
            indent: match constant(2) {
                Some(Const::Int(count)) => Some(Indent::Spaces(*count)),
                Some(Const::Str(text)) => Some(Indent::Text(text)),
                _ => None,
            },
            sort_keys: flag(3),
        };
        let owned;
        let (json, items) = match &value {
            Value::Array(items) if self.holds_messages(items) => {
                return Err(not_jinja(span, "write", &value))
            }
            Value::Array(items) => (JsonRef::Items(items), items.len()),
            Value::Object(view) if self.is_message(view) => {
                return Err(not_jinja(span, "write", &value))
            }
            Value::Object(view) if !view.is_merged() => {
                (JsonRef::Value(view.value()), view.len().unwrap_or(0))
            }
            Value::Json(json) => (JsonRef::Value(json), 0),
            Value::Missing => return Err(not_jinja(span, "write", &value)),
            other => {
                owned = other.to_json();
                (JsonRef::Value(&owned), 0)
            }
        };
        let python = self.program.python.as_ref().ok_or_else(|| internal(span))?;
        let text = (python.tojson)(json, &options).map_err(|_| not_jinja(span, "write", &value))?;
        self.tick_work(items, text.len(), span)?;
        self.built_value(Func::Jinja(JinjaOp::ToJson), text, span)
    }

    /// The items of a list for `selectattr` and `map`: maps of the data
    /// (a chat template's messages, whose null keys are absent, and lists
    /// a filter made are minijinja's).
    fn map_items(&self, list: &Value<'a>, span: Span) -> Result<Vec<&'a serde_json::Value>> {
        let Value::Array(items) = list else {
            return Err(not_jinja(span, "filter", list));
        };
        if self.holds_messages(items) {
            return Err(not_jinja(span, "filter", list));
        }
        if !items.iter().all(serde_json::Value::is_object) {
            return Err(not_jinja(span, "filter", list));
        }
        Ok(items.iter().collect())
    }

    /// Python's `==` of two maps (of the data, a template's own, a chat
    /// template's messages as `transformers` hands them over: without
    /// their null keys): their keys and values alike. Lists, messages with
    /// a reasoning (read under several names) and floats (`1 == 1.0`) are
    /// minijinja's to compare.
    #[inline(never)]
    fn maps_equal(&mut self, a: &Value<'a>, b: &Value<'a>, span: Span) -> Result<bool> {
        let mut sides = Vec::with_capacity(2);
        for value in [a, b] {
            let (json, message) = match value {
                Value::Object(view) if !view.is_merged() => (view.value(), self.is_message(view)),
                Value::Json(json) => (&**json, false),
                other => return Err(not_jinja(span, "compare", other)),
            };
            let Some(map) = json.as_object() else {
                return Err(not_jinja(span, "compare", value));
            };
            if message && has_reasoning(map) {
                return Err(not_jinja(span, "compare", value));
            }
            sides.push((map, message));
        }
        let [(a, a_message), (b, b_message)] = [sides[0], sides[1]];
        let (mut nodes, mut bytes) = (0, 0);
        for map in [a, b] {
            for (key, value) in map {
                bytes += key.len();
                weigh(value, &mut nodes, &mut bytes);
            }
        }
        self.tick_work(nodes, bytes, span)?;
        let kept = |map: &serde_json::Map<String, serde_json::Value>, message: bool| {
            map.values()
                .filter(|value| !(message && value.is_null()))
                .count()
        };
        if kept(a, a_message) != kept(b, b_message) {
            return Ok(false);
        }
        for (key, value) in a {
            if a_message && value.is_null() {
                continue;
            }
            let other = match b.get(key) {
                Some(other) if !(b_message && other.is_null()) => other,
                _ => return Ok(false),
            };
            match json_equal(value, other) {
                Some(true) => {}
                Some(false) => return Ok(false),
                None => return Err(not_jinja(span, "compare", &Value::Float(0.0))),
            }
        }
        Ok(true)
    }

    /// A message as `transformers` hands it to the template (its null keys
    /// absent), copied; one with a reasoning is minijinja's.
    fn message_copy(&self, item: &serde_json::Value, span: Span) -> Result<serde_json::Value> {
        let Some(map) = item.as_object().filter(|map| !has_reasoning(map)) else {
            return Err(not_jinja(span, "filter", &Value::Str("a message")));
        };
        Ok(serde_json::Value::Object(
            map.iter()
                .filter(|(_, value)| !value.is_null())
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        ))
    }

    /// `list | selectattr(key, test, value)` ([`JinjaOp::Select`]).
    #[inline(never)]
    fn select(
        &mut self,
        select: super::program::Select,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        use super::program::SelectTest;
        let list = self.arg(args, 0, span, dot)?;
        let key = self.arg(args, 1, span, dot)?;
        let compared = match args.get(2) {
            Some(_) => Some(self.arg(args, 2, span, dot)?),
            None => None,
        };
        // A key of each item (`selectattr`), or the item (`select`).
        let key = match &key {
            Value::Null => None,
            other => match other.as_str() {
                Some(key) => Some(key),
                None => return Err(not_jinja(span, "filter by", other)),
            },
        };
        // A chat template's messages: each key read as the template reads
        // it, the kept ones copied as it sees them.
        let messages =
            matches!(&list, Value::Array(items) if key.is_some() && self.holds_messages(items));
        let items = match (key, &list) {
            (Some(_), Value::Array(items)) if messages => items.iter().collect(),
            (Some(_), _) => self.map_items(&list, span)?,
            (None, Value::Array(items)) => items.iter().collect(),
            (None, other) => return Err(not_jinja(span, "filter", other)),
        };
        self.tick_work(items.len(), 0, span)?;
        let mut kept = Vec::new();
        for item in items {
            let found = match key {
                Some(key) if messages => self
                    .message_field(&crate::data::View::single(item), key, span)?
                    .map(Value::from_view),
                Some(key) => item.get(key).map(Value::from_json),
                None => Some(Value::from_json(item)),
            };
            let passes = match (select.test, &found) {
                (SelectTest::Defined, found) => found.is_some(),
                (SelectTest::Undefined, found) => found.is_none(),
                (SelectTest::None, found) => matches!(found, Some(Value::Null)),
                (SelectTest::Truth, found) => found.as_ref().is_some_and(|found| self.truth(found)),
                (SelectTest::Equal, None) => false,
                (SelectTest::Equal, Some(found)) => {
                    let compared = compared.as_ref().ok_or_else(|| internal(span))?;
                    if kind(found) != kind(compared) {
                        !jinja_unequal(found, compared, span)?
                    } else {
                        equal(found, compared).map_err(|_| not_jinja(span, "compare", found))?
                    }
                }
            };
            if passes != select.reject {
                kept.push(match messages {
                    true => self.message_copy(item, span)?,
                    false => item.clone(),
                });
            }
        }
        let bytes = kept
            .len()
            .saturating_mul(std::mem::size_of::<serde_json::Value>());
        self.count_built(Func::Jinja(JinjaOp::Select(select)), bytes, span)?;
        Ok(made_list(kept))
    }

    /// A map literal ([`JinjaOp::Dict`], arguments in pairs of a key and
    /// its value) or a list literal ([`JinjaOp::ListOf`]): each value
    /// copied into JSON, the copy counted as work and as built bytes.
    #[inline(never)]
    fn literal(
        &mut self,
        op: JinjaOp,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let pairs = op == JinjaOp::Dict;
        let mut map = serde_json::Map::new();
        let mut items = Vec::new();
        let (mut nodes, mut bytes) = (0, 0);
        for entry in args.chunks(if pairs { 2 } else { 1 }) {
            let (key, value) = match entry {
                [Expr::Const(Const::Str(key)), value] if pairs => (Some(key), value),
                [value] if !pairs => (None, value),
                _ => return Err(internal(span)),
            };
            let value = self.eval(value, dot, false)?;
            let json = match &value {
                Value::Missing => return Err(not_jinja(span, "collect", &value)),
                Value::Object(view) if self.is_message(view) => self
                    .message_json(view)
                    .ok_or_else(|| not_jinja(span, "collect", &value))?,
                _ => value.to_json(),
            };
            weigh(&json, &mut nodes, &mut bytes);
            match key {
                Some(key) => {
                    bytes = bytes.saturating_add(key.len());
                    map.insert(key.to_string(), json);
                }
                None => items.push(json),
            }
        }
        self.charge_copy(Func::Jinja(op), (nodes, bytes), span)?;
        Ok(Value::Json(std::rc::Rc::new(match pairs {
            true => serde_json::Value::Object(map),
            false => serde_json::Value::Array(items),
        })))
    }

    /// `list | map(attribute=key)` ([`JinjaOp::MapAttr`]).
    #[inline(never)]
    fn map_attr(&mut self, args: &'a [Expr], span: Span, dot: &Value<'a>) -> Result<Value<'a>> {
        let list = self.arg(args, 0, span, dot)?;
        let key = self.arg(args, 1, span, dot)?;
        let Some(key) = key.as_str() else {
            return Err(not_jinja(span, "map by", &key));
        };
        let mut values = Vec::new();
        {
            let made;
            let items: Vec<&serde_json::Value> = match &list {
                // A list `selectattr` made: its items are maps.
                Value::Json(json) => {
                    made = json.clone();
                    match made.as_array() {
                        Some(items) if items.iter().all(serde_json::Value::is_object) => {
                            items.iter().collect()
                        }
                        _ => return Err(not_jinja(span, "map", &list)),
                    }
                }
                other => self.map_items(other, span)?,
            };
            self.tick_work(items.len(), 0, span)?;
            for item in items {
                match item.get(key) {
                    Some(found) => values.push(found.clone()),
                    None => return Err(not_jinja(span, "map", &list)),
                }
            }
        }
        Ok(made_list(values))
    }

    /// `list | map('upper')` ([`JinjaOp::MapFilter`]): strings only.
    #[inline(never)]
    fn map_filter(&mut self, args: &'a [Expr], span: Span, dot: &Value<'a>) -> Result<Value<'a>> {
        let list = self.arg(args, 0, span, dot)?;
        let name = self.arg(args, 1, span, dot)?;
        let Some(items) = list_items(&list) else {
            return Err(not_jinja(span, "map", &list));
        };
        self.tick_work(items.len(), 0, span)?;
        let mut values = Vec::with_capacity(items.len());
        for item in items {
            let Some(text) = item.as_str() else {
                return Err(not_jinja(span, "map", &list));
            };
            values.push(serde_json::Value::String(match name.as_str() {
                Some("upper") => crate::functions::upper(text),
                Some("lower") => crate::functions::lower(text),
                _ => crate::functions::trim(text),
            }));
        }
        Ok(made_list(values))
    }

    /// The item of `for a, b in list` a name takes ([`JinjaOp::Unpack`]):
    /// the loop's item must be a list of as many items as the names (a
    /// string's characters, a map's keys and a wrong count are
    /// minijinja's).
    #[inline(never)]
    fn unpack(&mut self, args: &'a [Expr], span: Span, dot: &Value<'a>) -> Result<Value<'a>> {
        let item = self.arg(args, 0, span, dot)?;
        let (Some(Expr::Const(Const::Int(index))), Some(Expr::Const(Const::Int(count)))) =
            (args.get(1), args.get(2))
        else {
            return Err(internal(span));
        };
        let (index, count) = (usize::try_from(*index), usize::try_from(*count));
        let (Ok(index), Ok(count)) = (index, count) else {
            return Err(internal(span));
        };
        let found = match &item {
            Value::Array(items) if items.len() == count && !self.holds_messages(items) => {
                items.get(index).map(Value::from_json)
            }
            Value::Json(json) => match json.as_array() {
                Some(items) if items.len() == count => {
                    items.get(index).map(|found| Value::owned(found.clone()))
                }
                _ => None,
            },
            _ => None,
        };
        found.ok_or_else(|| not_jinja(span, "unpack", &item))
    }

    /// `range(…)` ([`JinjaOp::Range`]) of integers.
    #[inline(never)]
    fn range(&mut self, args: &'a [Expr], span: Span, dot: &Value<'a>) -> Result<Value<'a>> {
        let mut bounds = [0i64, 0, 1];
        for n in 0..args.len() {
            match self.arg(args, n, span, dot)? {
                Value::Int(i) => bounds[if args.len() == 1 { 1 } else { n }] = i,
                other => return Err(not_jinja(span, "count with", &other)),
            }
        }
        let [start, stop, step] = bounds;
        if step == 0 {
            return Err(not_jinja(span, "count with", &Value::Int(0)));
        }
        let len = match step > 0 {
            true => {
                (i128::from(stop) - i128::from(start) + i128::from(step) - 1) / i128::from(step)
            }
            false => {
                (i128::from(start) - i128::from(stop) - i128::from(step) - 1) / -i128::from(step)
            }
        }
        .max(0);
        if len > 10_000 {
            return Err(not_jinja(span, "count to", &Value::Int(stop)));
        }
        self.tick_work(usize::try_from(len).unwrap_or(0), 0, span)?;
        let mut items = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        for i in 0..len {
            let item = i64::try_from(i128::from(start) + i * i128::from(step))
                .map_err(|_| not_jinja(span, "count to", &Value::Int(stop)))?;
            items.push(serde_json::Value::from(item));
        }
        Ok(made_list(items))
    }

    /// `base[key] is defined` (and `default`): the item, or `None` where a
    /// map of the data lacks the key or a list is shorter; anything else
    /// is minijinja's.
    #[inline(never)]
    fn item_defined(
        &mut self,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Option<Value<'a>>> {
        let base = self.arg(args, 0, span, dot)?;
        let key = self.arg(args, 1, span, dot)?;
        match (&base, &key) {
            (Value::Object(view), Value::Str(_) | Value::String(_)) => {
                let name = key.as_str().unwrap_or_default();
                let found = match self.is_message(view) {
                    true => self.message_field(view, name, span)?,
                    false => view.get(name),
                };
                Ok(found.map(Value::from_view))
            }
            (Value::Array(items), Value::Int(index)) => {
                let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
                let at = if *index < 0 { index + len } else { *index };
                Ok(usize::try_from(at)
                    .ok()
                    .and_then(|at| items.get(at))
                    .map(Value::from_json))
            }
            _ => Err(not_jinja(span, "test", &base)),
        }
    }

    /// `base[key]` ([`JinjaOp::Item`]).
    #[inline(never)]
    fn item(&mut self, args: &'a [Expr], span: Span, dot: &Value<'a>) -> Result<Value<'a>> {
        let base = self.arg(args, 0, span, dot)?;
        let key = self.arg(args, 1, span, dot)?;
        let at = |len: usize, index: i64| {
            let len = i64::try_from(len).ok()?;
            let index = if index < 0 { index + len } else { index };
            usize::try_from(index).ok()
        };
        let found = match (&base, &key) {
            (Value::Array(items), Value::Int(index)) => at(items.len(), *index)
                .and_then(|index| items.get(index))
                .map(Value::from_json),
            (Value::Str(_) | Value::String(_), Value::Int(index)) => {
                self.tick_work(0, base.as_str().map_or(0, str::len), span)?;
                character(&base, *index)
            }
            (Value::Object(view), Value::Str(_) | Value::String(_)) => {
                let name = key.as_str().unwrap_or_default();
                match self.is_message(view) {
                    true => self.message_field(view, name, span)?,
                    false => view.get(name),
                }
                .map(Value::from_view)
            }
            (Value::Json(json), _) => match (&**json, &key) {
                (serde_json::Value::Array(items), Value::Int(index)) => at(items.len(), *index)
                    .and_then(|index| items.get(index))
                    .map(|item| Value::owned(item.clone())),
                (serde_json::Value::Object(map), _) => key
                    .as_str()
                    .and_then(|name| map.get(name))
                    .map(|item| Value::owned(item.clone())),
                _ => None,
            },
            _ => None,
        };
        found.ok_or_else(|| not_jinja(span, "read an item of", &base))
    }

    /// Integer arithmetic ([`JinjaOp::Arith`]): Python's, on integers
    /// that are not booleans; anything else (a float, a string repeated,
    /// a result past 64 bits, a division by zero) is minijinja's.
    #[inline(never)]
    fn arith(
        &mut self,
        op: Arith,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let a = match self.arg(args, 0, span, dot)? {
            Value::Int(a) => a,
            other => return Err(not_jinja(span, "compute with", &other)),
        };
        if op == Arith::Neg {
            return a
                .checked_neg()
                .map(Value::Int)
                .ok_or_else(|| not_jinja(span, "negate", &Value::Int(a)));
        }
        let b = match self.arg(args, 1, span, dot)? {
            Value::Int(b) => b,
            other => return Err(not_jinja(span, "compute with", &other)),
        };
        // Floor division and its remainder: the remainder has the sign of
        // the divisor.
        let floored = || {
            let (q, r) = (a.checked_div(b)?, a.checked_rem(b)?);
            match r != 0 && (r < 0) != (b < 0) {
                true => Some((q - 1, r + b)),
                false => Some((q, r)),
            }
        };
        let result = match op {
            Arith::Sub => a.checked_sub(b),
            Arith::Mul => a.checked_mul(b),
            Arith::FloorDiv => floored().map(|(q, _)| q),
            Arith::Rem => floored().map(|(_, r)| r),
            Arith::Pow => u32::try_from(b).ok().and_then(|b| a.checked_pow(b)),
            Arith::Neg => None,
        };
        result
            .map(Value::Int)
            .ok_or_else(|| not_jinja(span, "compute with", &Value::Int(b)))
    }

    /// The value of a path whose last key may be missing (`None`), for
    /// Jinja's `is defined` and `default`: any other step missing, or a
    /// last step into something other than a map of the data, fails.
    pub(super) fn defined(
        &mut self,
        expr: &'a Expr,
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Option<Value<'a>>> {
        if let Expr::Call {
            func: Func::Jinja(JinjaOp::SetOr),
            args,
            ..
        } = expr
        {
            let [set, data] = &**args else {
                return Err(internal(span));
            };
            return match self.eval(set, dot, false)? {
                Value::Missing => self.defined(data, span, dot),
                value => Ok(Some(value)),
            };
        }
        if let Expr::Call {
            func: Func::Jinja(JinjaOp::Item),
            args,
            ..
        } = expr
        {
            return self.item_defined(args, span, dot);
        }
        // A name that may hold minijinja's undefined: defined unless it does.
        if let Expr::Call {
            func: Func::Jinja(JinjaOp::Held),
            args,
            ..
        } = expr
        {
            let held = args.first().ok_or_else(|| internal(span))?;
            return match self.eval(held, dot, true)? {
                Value::Missing => Ok(None),
                value => Ok(Some(value)),
            };
        }
        // `loop.previtem` / `loop.nextitem`: missing at the ends.
        if let Expr::Loop { pass, field } = expr {
            if let Some(n) = match field {
                LoopField::PrevItem => Some(2),
                LoopField::NextItem => Some(3),
                _ => None,
            } {
                return Ok(match self.vars.get(self.frame + (pass + n) as usize) {
                    Some(Value::Missing) | None => None,
                    Some(item) => Some(item.clone()),
                });
            }
        }
        let Expr::Path { base, keys, .. } = expr else {
            return match self.eval(expr, dot, false)? {
                Value::Missing => Err(not_jinja(span, "test", &Value::Missing)),
                value => Ok(Some(value)),
            };
        };
        let Some((last, init)) = keys.split_last() else {
            return Err(internal(span));
        };
        let mut value = self.eval(base, dot, false)?;
        for (i, key) in init.iter().enumerate() {
            value = self.field(&value, key, i, expr, span, false)?;
        }
        match &value {
            Value::Object(view) if self.is_message(view) => Ok(self
                .message_field(view, &last.name, span)?
                .map(Value::from_view)),
            Value::Object(view) => Ok(view.get(&last.name).map(Value::from_view)),
            // A map the template built.
            Value::Json(json) if json.is_object() => Ok(json
                .get(&*last.name)
                .map(|found| Value::owned(found.clone()))),
            // A key of a string, a number or a boolean: none.
            Value::Str(_) | Value::String(_) | Value::Int(_) | Value::Bool(_) => Ok(None),
            other => Err(not_jinja(span, "test", other)),
        }
    }
}

/// `value is KIND` ([`JinjaOp::Is`]); a float's integer test is
/// minijinja's.
fn is_kind(test: IsKind, value: &Value<'_>, span: Span) -> Result<bool> {
    let json = match value {
        Value::Json(json) => Some(&**json),
        _ => None,
    };
    let (map, list) = (
        matches!(value, Value::Object(_)) || json.is_some_and(|j| j.is_object()),
        matches!(value, Value::Array(_)) || json.is_some_and(|j| j.is_array()),
    );
    let string = matches!(value, Value::Str(_) | Value::String(_));
    if matches!(value, Value::Missing) {
        // Jinja2's `Undefined` has a length and items, minijinja's
        // iterates: those two tests are minijinja's to answer.
        return match test {
            IsKind::Sequence | IsKind::Iterable => Err(not_jinja(span, "test", value)),
            _ => Ok(false),
        };
    }
    Ok(match test {
        IsKind::String => string,
        IsKind::Mapping => map,
        IsKind::Sequence => list,
        IsKind::Iterable => map || list || string,
        IsKind::Number => matches!(
            value,
            Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::Bool(_)
        ),
        IsKind::Integer => match value {
            Value::Float(_) | Value::Missing => return Err(not_jinja(span, "test", value)),
            other => matches!(other, Value::Int(_) | Value::UInt(_)),
        },
        IsKind::Boolean => matches!(value, Value::Bool(_)),
        IsKind::True => matches!(value, Value::Bool(true)),
        IsKind::False => matches!(value, Value::Bool(false)),
    })
}

/// Whether a message has a reasoning (which the template reads under
/// several names).
fn has_reasoning(map: &serde_json::Map<String, serde_json::Value>) -> bool {
    ["reasoning_content", "thinking", "reasoning"]
        .iter()
        .any(|key| map.get(*key).is_some_and(|value| !value.is_null()))
}

/// Python's `==` of two JSON values; `None` where a float takes part.
fn json_equal(a: &serde_json::Value, b: &serde_json::Value) -> Option<bool> {
    use serde_json::Value as Json;
    Some(match (a, b) {
        (Json::Number(x), _) | (_, Json::Number(x)) if x.is_f64() => return None,
        (Json::Array(x), Json::Array(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            for (x, y) in x.iter().zip(y) {
                if !json_equal(x, y)? {
                    return Some(false);
                }
            }
            true
        }
        (Json::Object(x), Json::Object(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            for (key, x) in x {
                match y.get(key) {
                    Some(y) if json_equal(x, y)? => {}
                    _ => return Some(false),
                }
            }
            true
        }
        // `True == 1` in Python.
        (Json::Bool(_), Json::Number(_)) | (Json::Number(_), Json::Bool(_)) => return None,
        (x, y) => x == y,
    })
}

/// The items of a list of the data or of one the template built.
pub(super) fn list_items<'v>(value: &'v Value<'_>) -> Option<&'v [serde_json::Value]> {
    match value {
        Value::Array(items) => Some(items),
        Value::Json(json) => json.as_array().map(Vec::as_slice),
        _ => None,
    }
}

/// Adds the values (`nodes`) and the bytes of strings and keys of `json`
/// to the counts.
pub(super) fn weigh(json: &serde_json::Value, nodes: &mut usize, bytes: &mut usize) {
    *nodes = nodes.saturating_add(1);
    match json {
        serde_json::Value::String(text) => *bytes = bytes.saturating_add(text.len()),
        serde_json::Value::Array(items) => items.iter().for_each(|item| weigh(item, nodes, bytes)),
        serde_json::Value::Object(map) => map.iter().for_each(|(key, item)| {
            *bytes = bytes.saturating_add(key.len());
            weigh(item, nodes, bytes);
        }),
        _ => {}
    }
}

/// A list an operation made.
pub(super) fn made_list<'a>(items: Vec<serde_json::Value>) -> Value<'a> {
    Value::Json(std::rc::Rc::new(serde_json::Value::Array(items)))
}

/// Whether two values compared by `==`/`!=` are equal where one is
/// missing (read as a test reads it, [`JinjaOp::Loose`]): only to another
/// missing value, as minijinja's undefined. `None` where neither is.
fn missing_equal(a: &Value<'_>, b: &Value<'_>) -> Option<bool> {
    let missing = |value: &Value<'_>| matches!(value, Value::Missing);
    (missing(a) || missing(b)).then(|| missing(a) && missing(b))
}

/// Python's `!=` of values of two kinds: true, but between numbers
/// (`1 == True`, `1 == 1.0`: minijinja's to compare) and for a missing
/// value (minijinja's).
fn jinja_unequal(a: &Value<'_>, b: &Value<'_>, span: Span) -> Result<bool> {
    let numeric = |value: &Value<'_>| matches!(kind(value), Kind::Int | Kind::Float | Kind::Bool);
    for value in [a, b] {
        if matches!(value, Value::Missing) {
            return Err(not_jinja(span, "compare", value));
        }
    }
    if numeric(a) && numeric(b) {
        return Err(not_jinja(span, "compare", b));
    }
    Ok(true)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Nil,
    Bool,
    Int,
    Float,
    String,
    Other,
}

pub(super) fn kind(value: &Value<'_>) -> Kind {
    match value {
        Value::Missing | Value::Null => Kind::Nil,
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) | Value::UInt(_) => Kind::Int,
        Value::Float(_) => Kind::Float,
        Value::Str(_) | Value::String(_) => Kind::String,
        Value::Array(_) | Value::Object(_) | Value::Json(_) => Kind::Other,
    }
}

/// An integer (`int` or `uint64`) widened so that both compare, as Go's
/// `eq` and `lt` compare an int with a uint.
fn wide_int(value: &Value<'_>) -> i128 {
    match value {
        Value::Int(i) => i128::from(*i),
        Value::UInt(u) => i128::from(*u),
        _ => 0,
    }
}

/// Go's `eq` for two values.
pub(super) fn equal(a: &Value<'_>, b: &Value<'_>) -> std::result::Result<bool, String> {
    let (ka, kb) = (kind(a), kind(b));
    if ka != kb {
        if ka == Kind::Nil || kb == Kind::Nil {
            return Ok(false);
        }
        return Err(format!(
            "incompatible types for comparison: {} and {}",
            a.go_type(),
            b.go_type()
        ));
    }
    Ok(match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x == y,
        _ if ka == Kind::Int => wide_int(a) == wide_int(b),
        (Value::Float(x), Value::Float(y)) => x == y,
        _ if ka == Kind::String => a.as_str() == b.as_str(),
        _ if ka == Kind::Nil => true,
        _ => return Err(format!("non-comparable type {}", a.go_type())),
    })
}

/// Go's `lt` for two values.
pub(super) fn less(a: &Value<'_>, b: &Value<'_>) -> std::result::Result<bool, String> {
    let (ka, kb) = (kind(a), kind(b));
    for (k, v) in [(ka, a), (kb, b)] {
        if matches!(k, Kind::Nil | Kind::Other | Kind::Bool) {
            return Err(format!("invalid type for comparison: {}", v.go_type()));
        }
    }
    if ka != kb {
        return Err(format!(
            "incompatible types for comparison: {} and {}",
            a.go_type(),
            b.go_type()
        ));
    }
    Ok(match (a, b) {
        _ if ka == Kind::Int => wide_int(a) < wide_int(b),
        (Value::Float(x), Value::Float(y)) => x < y,
        _ => a.as_str() < b.as_str(),
    })
}

//! The evaluator's instruction loop: runs a [`Program`] against [`Data`]
//! in the render's [`RenderScope`] (its budget, its markers), writing into
//! one `String`: blocks, loops and sections, template calls and partial
//! blocks, printing, expressions. Values borrow the data and the program;
//! variables live in one stack of frame slots; a render allocates only for
//! what functions make. Field lookup, built-ins, operators, bounds and
//! each flavor's particulars are in the rooms beside it (see `engine`).

use super::fail::{error, fail, fail_unplaced, internal};
use super::flavor;
use super::flavor::go as gofmt;
use super::flavor::jinja::not_jinja;
use super::lookup::is_object;
use super::program::{
    Block, Const, Expr, Func, Instr, JinjaOp, LoopField, PartialContent, Program, Span,
};
use super::value::{sorted_keys, Value};
use crate::diagnostics::{closest, TemplateError};
use crate::limits::Exceeded;
use crate::scope::{DataAt, RenderScope, Wrote};
use crate::{data::Data, options::Strictness};
use std::rc::Rc;

/// Errors are boxed while rendering: a result stays small (a value, or a
/// pointer) on the hot paths, where no error happens.
pub(super) type Result<T> = std::result::Result<T, Box<TemplateError>>;

/// How deeply blocks and template calls may nest while rendering (keeps the
/// evaluator's recursion well inside a thread's stack).
const MAX_DEPTH: usize = 256;

/// How a block ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Normal,
    Break,
    Continue,
}

/// Renders `program` against `data` in `scope`, into an output that starts
/// with room for `expect` bytes (or for about the template's size, if that
/// is more).
pub(crate) fn render(
    program: &Program,
    data: &Data,
    expect: usize,
    scope: &mut RenderScope,
) -> Result<String> {
    // A render the host stopped before it began (a cancelled token, a
    // deadline passed) ends there, however short it would be.
    if scope.stop.is_armed() {
        if let Err(over) = scope.stop.check() {
            return fail_unplaced(over.to_string());
        }
    }
    let root = Value::from_view(data.root());
    let capacity = expect
        .max(program.source.len() + program.source.len() / 2 + 64)
        .min(program.limits.max_output);
    let mut renderer = Renderer {
        program,
        root: root.clone(),
        vars: Vec::with_capacity(16),
        frame: 0,
        out: String::with_capacity(capacity),
        iterations: 0,
        calls: 0,
        depth: 0,
        args: Vec::with_capacity(8),
        partial_blocks: Vec::new(),
        partial_level: 0,
        messages: None,
        tracing: scope.trace.is_some(),
        scope,
    };
    if program.flavor.reads_messages() {
        renderer.messages = flavor::jinja::messages(data);
    }
    renderer
        .vars
        .resize(program.main.slots.max(1) as usize, Value::Missing);
    if let Some(slot) = renderer.vars.first_mut() {
        *slot = root.clone();
    }
    renderer.exec_block(&program.main.body, &root)?;
    Ok(renderer.out)
}

/// How deep Jinja macros call one another on the engine.
const MACRO_DEPTH: usize = 16;

pub(super) struct Renderer<'a> {
    pub(super) program: &'a Program,
    pub(super) root: Value<'a>,
    pub(super) vars: Vec<Value<'a>>,
    pub(super) frame: usize,
    pub(super) out: String,
    pub(super) iterations: u64,
    calls: usize,
    depth: usize,
    /// Reused argument buffer for variadic functions.
    pub(super) args: Vec<Value<'a>>,
    /// Handlebars partial blocks being called, innermost last.
    partial_blocks: Vec<PartialBlock<'a>>,
    /// How many of `partial_blocks` the running code sees: all of them in a
    /// partial called as a partial block; in a partial block's content, those
    /// seen where it was written.
    partial_level: usize,
    /// A chat template's messages (the data's `messages` list), by where
    /// they are: an object in this range is a message.
    pub(super) messages: Option<std::ops::Range<*const serde_json::Value>>,
    /// The render's scope: its budget and its markers.
    pub(super) scope: &'a mut RenderScope,
    /// Whether the render records a source map (`scope.trace`), read
    /// where every text and value is printed.
    tracing: bool,
}

/// A Handlebars partial block being called.
#[derive(Clone)]
struct PartialBlock<'a> {
    content: &'a PartialContent,
    /// The frame of the template that wrote it.
    frame: usize,
    /// Its dot there.
    dot: Value<'a>,
    /// The `partial_level` where it was written.
    level: usize,
    /// How many template calls were running when it was called.
    calls: usize,
}

/// Whether two contexts are the same one, as handlebars.js compares them
/// when it stacks a context (`!=`): the same object or array of the data,
/// equal scalars, or both null or missing.
fn same_context(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::Missing | Value::Null, Value::Missing | Value::Null) => true,
        (Value::Object(a), Value::Object(b)) => std::ptr::eq(a.value(), b.value()),
        (Value::Array(a), Value::Array(b)) => std::ptr::eq(*a, *b),
        (Value::Json(a), Value::Json(b)) => std::rc::Rc::ptr_eq(a, b),
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Int(a), Value::Int(b)) => a == b,
        (Value::UInt(a), Value::UInt(b)) => a == b,
        (Value::Float(a), Value::Float(b)) => a == b,
        (Value::Int(i), Value::Float(f)) | (Value::Float(f), Value::Int(i)) => *i as f64 == *f,
        (Value::Str(_) | Value::String(_), Value::Str(_) | Value::String(_)) => {
            a.as_str() == b.as_str()
        }
        _ => false,
    }
}

impl<'a> Renderer<'a> {
    pub(super) fn text(&self, range: std::ops::Range<usize>) -> &'a str {
        self.program.source.get(range).unwrap_or("")
    }

    pub(super) fn missing_ok(&self, test: bool) -> bool {
        match self.program.strictness {
            Strictness::Lenient => true,
            Strictness::Semi => test,
            Strictness::Strict => false,
        }
    }

    fn set(&mut self, slot: u32, value: Value<'a>) {
        if let Some(place) = self.vars.get_mut(self.frame + slot as usize) {
            *place = value;
        }
    }

    fn exec_block(&mut self, block: &'a Block, dot: &Value<'a>) -> Result<Flow> {
        if self.depth >= MAX_DEPTH {
            return fail_unplaced(format!(
                "blocks and template calls nest more than {MAX_DEPTH} deep"
            ));
        }
        self.depth += 1;
        let mut result = Ok(Flow::Normal);
        for instr in block.iter() {
            match self.exec(instr, dot) {
                Ok(Flow::Normal) => {}
                other => {
                    result = other;
                    break;
                }
            }
        }
        self.depth -= 1;
        result
    }

    fn exec(&mut self, instr: &'a Instr, dot: &Value<'a>) -> Result<Flow> {
        match instr {
            Instr::Text(text, from) => {
                if self.tracing {
                    self.trace_text(self.out.len(), from);
                }
                self.out.push_str(text);
                self.check_output(None)?;
            }
            Instr::Print { expr, span } if self.tracing => self.print_traced(expr, *span, dot)?,
            Instr::Print { expr, span } => {
                // A lenient render's key: printed from where it is, when
                // it is there.
                let read = match expr {
                    Expr::Call {
                        func: Func::Jinja(JinjaOp::OrEmpty),
                        args,
                        ..
                    } => args.first().unwrap_or(expr),
                    _ => expr,
                };
                if let Some(json) = self.json_of(read, dot) {
                    // A value of the data: printed from where it is.
                    self.print_json(json, *span)?;
                } else if let Some(&Value::Int(i)) = self.var_of(expr) {
                    // A loop's @index, mostly: no copy of the variable.
                    gofmt::write_int(&mut self.out, i);
                } else if let Expr::Call {
                    func: func @ (Func::Printf | Func::Print | Func::Println),
                    args,
                    span: call_span,
                } = expr
                {
                    self.print_call(*func, args, *call_span, dot)?;
                } else if let Expr::Call {
                    func: Func::Jinja(op @ (JinjaOp::Concat | JinjaOp::Add)),
                    args,
                    span: call_span,
                } = expr
                {
                    self.print_concat(*op, args, *call_span, dot)?;
                } else {
                    let value = self.eval(expr, dot, false)?;
                    self.print(&value, *span)?;
                }
                self.check_output(Some(*span))?;
            }
            Instr::Set { slot, expr } => {
                let value = self.eval(expr, dot, false)?;
                self.set(*slot, value);
            }
            Instr::If {
                cond,
                bind,
                then,
                otherwise,
            } => {
                if let (Some(json), None) = (self.json_of(cond, dot), bind) {
                    let truth = self.truthy(&Value::from_json(json));
                    return self.exec_block(if truth { then } else { otherwise }, dot);
                }
                let value = self.eval(cond, dot, true)?;
                let truth = self.truthy(&value);
                if let Some(slot) = bind {
                    self.set(*slot, value);
                }
                return self.exec_block(if truth { then } else { otherwise }, dot);
            }
            Instr::With {
                value,
                bind,
                then,
                otherwise,
            } => {
                let value = self.eval(value, dot, true)?;
                if let Some(slot) = bind {
                    self.set(*slot, value.clone());
                }
                return if self.truthy(&value) {
                    self.exec_block(then, &value)
                } else {
                    self.exec_block(otherwise, dot)
                };
            }
            Instr::Range {
                value,
                key,
                elem,
                body,
                otherwise,
                span,
                each,
            } => return self.exec_range(value, (*key, *elem, *each), body, otherwise, *span, dot),
            Instr::Section {
                value,
                body,
                otherwise,
                span,
                each,
            } => return self.exec_section(value, body, otherwise, *span, *each, dot),
            Instr::Call {
                template,
                arg,
                span,
                block,
            } => {
                let value = match arg {
                    Some(expr) => self.eval(expr, dot, false)?,
                    None => Value::Null,
                };
                match block {
                    None => self.call_template(*template, value, *span)?,
                    Some(block) => self.call_with_content(*template, value, *span, block, dot)?,
                }
            }
            Instr::PartialBlock { span } => self.partial_block(*span, dot)?,
            Instr::Indent { indent, body, span } => {
                let start = self.out.len();
                let traced = self
                    .scope
                    .trace
                    .as_ref()
                    .map_or(0, |trace| trace.chunks.len());
                let flow = self.exec_block(body, dot)?;
                self.indent_since(start, indent, (traced, *span));
                self.check_output(None)?;
                if flow != Flow::Normal {
                    return Ok(flow);
                }
            }
            Instr::CallNamed {
                name,
                arg,
                span,
                block,
            } => {
                let template = self.named_template(name, *span, dot, block.is_some())?;
                let value = self.eval(arg, dot, false)?;
                match (template, block) {
                    (Some(template), None) => self.call_template(template, value, *span)?,
                    (Some(template), Some(block)) => {
                        self.call_with_content(template, value, *span, block, dot)?
                    }
                    // handlebars.js's failover: the content, with the
                    // partial's context.
                    (None, Some(block)) => self.run_content(block, dot, &value)?,
                    (None, None) => return Err(internal(*span)),
                }
            }
            Instr::BareHelper { name, span, misuse } => {
                let data_has = match dot {
                    Value::Object(view) => view.get(name).is_some(),
                    Value::Json(json) => json.get(&**name).is_some(),
                    _ => false,
                };
                if let (Some(misuse), false) = (misuse, data_has) {
                    let (message, help) = &**misuse;
                    return Err(error(*span, message.to_string())
                        .suggest(Some(help.to_string()))
                        .into());
                }
                if data_has && misuse.is_none() {
                    return Err(error(*span, format!(
                            "{{{{{name}}}}} is ambiguous: {name:?} is a helper and a key of the data"
                        ),
                    )
                    .suggest(Some(format!(
                        "write {{{{this.{name}}}}} (or {{{{./{name}}}}}) for the data's value; the helper runs when the data has no key {name:?}"
                    ))).into());
                }
            }
            Instr::ForList {
                value,
                elem,
                pass,
                body,
                otherwise,
                span,
                reverse,
                key,
                filter,
                neighbours,
            } => {
                let blocks = (body, otherwise);
                if let Some((key, sorted)) = key {
                    let slots = (*key, *elem, *pass);
                    let how = (*span, *sorted, filter.as_ref());
                    return self.exec_for_items(value, slots, blocks, how, dot);
                }
                let slots = (*elem, *pass, *neighbours);
                let how = (*span, *reverse, filter.as_ref());
                return self.exec_for_list(value, slots, blocks, how, dot);
            }
            Instr::SetTop { slot, expr } => {
                let value = self.eval(expr, dot, false)?;
                if let Some(place) = self.vars.get_mut(*slot as usize) {
                    *place = value;
                }
            }
            Instr::Capture { slot, body, span } => self.capture(*slot, body, *span, dot)?,
            Instr::Break => return Ok(Flow::Break),
            Instr::Continue => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }

    /// Truth for `if`, `with` and sections. Go: false, 0, "", nil and empty
    /// collections are false. Handlebars (handlebars.js): the same, except
    /// that an object is true even when empty.
    #[inline]
    pub(super) fn truthy(&self, value: &Value<'a>) -> bool {
        if self.messages.is_some() {
            return self.message_truth(value);
        }
        value.is_true() || (self.program.flavor.is_handlebars() && is_object(value))
    }

    /// Truth for `and`, `or` and `not`: Go's and Handlebars' `is_true`, a
    /// chat template's message as [`Renderer::truthy`] has it.
    #[inline]
    pub(super) fn truth(&self, value: &Value<'a>) -> bool {
        match self.messages {
            Some(_) => self.message_truth(value),
            None => value.is_true(),
        }
    }

    /// One pass of a `range` body: counts it against the loop bound, sets
    /// the key and element variables, runs the body with `item` as dot.
    /// Returns true when the body broke out of the loop.
    fn iterate(
        &mut self,
        span: Span,
        (key_slot, key): (Option<u32>, Value<'a>),
        elem_slot: Option<u32>,
        item: Value<'a>,
        body: &'a Block,
    ) -> Result<bool> {
        self.tick(span)?;
        if let Some(slot) = key_slot {
            self.set(slot, key);
        }
        if let Some(slot) = elem_slot {
            self.set(slot, item.clone());
        }
        Ok(self.exec_block(body, &item)? == Flow::Break)
    }

    /// Sets the four slots of a Handlebars loop pass (`@key`, `@index`,
    /// `@first`, `@last`).
    fn set_each(&mut self, base: u32, key: Value<'a>, index: usize, len: usize) {
        let at = self.frame + base as usize;
        let slots = self.vars.get_mut(at..at + 4);
        if let Some([key_slot, index_slot, first, last]) = slots {
            *key_slot = key;
            *index_slot = Value::Int(index as i64);
            *first = Value::Bool(index == 0);
            *last = Value::Bool(index + 1 == len);
        }
    }

    fn exec_range(
        &mut self,
        value: &'a Expr,
        (key, elem, each): (Option<u32>, Option<u32>, Option<u32>),
        body: &'a Block,
        otherwise: &'a Block,
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Flow> {
        // Iterating a missing value is an error at semi (printing and
        // iterating are alike in the strictness table); lenient iterates
        // nothing.
        let value = self.eval(value, dot, false)?;
        let mut ran = false;
        match &value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    ran = true;
                    let item = Value::from_json(item);
                    if let Some(base) = each {
                        self.set_each(base, Value::Int(i as i64), i, items.len());
                    }
                    if self.iterate(span, (key, Value::Int(i as i64)), elem, item, body)? {
                        break;
                    }
                }
            }
            Value::Object(view) => {
                let names = if each.is_some() {
                    view.keys()
                } else {
                    sorted_keys(view)
                };
                // Listing (and sorting) the keys is work of its own, done
                // each time the loop is entered.
                self.tick_work(names.len(), 0, span)?;
                for (i, name) in names.iter().enumerate() {
                    ran = true;
                    let item = view.get(name).map_or(Value::Null, Value::from_view);
                    if let Some(base) = each {
                        self.set_each(base, Value::Str(name), i, names.len());
                    }
                    if self.iterate(span, (key, Value::Str(name)), elem, item, body)? {
                        break;
                    }
                }
            }
            _ if each.is_some() => {
                if let Value::Json(json) = &value {
                    ran = self.each_json(json.clone(), (key, elem, each), body, span)?;
                }
            }
            Value::Int(n) => {
                if key.is_some() {
                    return fail(
                        span,
                        format!("can't use {n} to iterate over more than one variable"),
                    );
                }
                for i in 0..(*n).max(0) {
                    ran = true;
                    if self.iterate(span, (None, Value::Null), elem, Value::Int(i), body)? {
                        break;
                    }
                }
            }
            Value::Json(json) => {
                ran = self.range_json(json.clone(), key, elem, body, span)?;
            }
            Value::Null | Value::Missing => {}
            other => {
                let mut shown = String::new();
                gofmt::write_value(&mut shown, other);
                return Err(error(span, format!("range can't iterate over {shown}"))
                    .suggest(Some(format!(
                        "range needs a list, a map or an integer; this is {}",
                        other.kind_name()
                    )))
                    .into());
            }
        }
        if !ran {
            return self.exec_block(otherwise, dot);
        }
        Ok(Flow::Normal)
    }

    /// A Jinja `for` over a list ([`Instr::ForList`]): of the data, or
    /// one a method made (its items copied out one by one).
    fn exec_for_list(
        &mut self,
        value: &'a Expr,
        (elem, pass, neighbours): (u32, u32, bool),
        (body, otherwise): (&'a Block, &'a Block),
        (span, reverse, filter): (Span, bool, Option<&'a Expr>),
        dot: &Value<'a>,
    ) -> Result<Flow> {
        let list = self.eval(value, dot, false)?;
        if matches!(list, Value::Str(_) | Value::String(_)) && filter.is_none() {
            let slots = (elem, pass, neighbours);
            return self.exec_for_chars(list, slots, (body, otherwise), (span, reverse), dot);
        }
        // A map of the data (one layer, not a message): its keys, in order.
        let mut keys: Option<Vec<&'a str>> = None;
        let (borrowed, made) = match &list {
            Value::Array(items) => (*items, None),
            Value::Json(json) if json.is_array() => (&[][..], json.as_array()),
            Value::Object(view) if !view.is_merged() && !self.is_message(view) => {
                let names = view.keys();
                self.tick_work(names.len(), 0, span)?;
                keys = Some(names);
                (&[][..], None)
            }
            other => return Err(not_jinja(span, "iterate", other)),
        };
        let all = match (&keys, made) {
            (Some(keys), _) => keys.len(),
            (None, Some(items)) => items.len(),
            (None, None) => borrowed.len(),
        };
        let item = |at: usize| match (&keys, made) {
            (Some(keys), _) => Value::Str(keys[at]),
            (None, Some(items)) => Value::owned(items[at].clone()),
            (None, None) => Value::from_json(&borrowed[at]),
        };
        let nth = |i: usize| if reverse { all - 1 - i } else { i };
        // With a filter, the items it keeps, in the loop's order.
        let kept = match filter {
            Some(test) => Some(self.kept_items(test, (elem, all), (&item, &nth), span, dot)?),
            None => None,
        };
        let len = kept.as_ref().map_or(all, Vec::len);
        if len == 0 {
            return self.exec_block(otherwise, dot);
        }
        self.set(pass + 1, Value::Int(i64::try_from(len).unwrap_or(i64::MAX)));
        let at = |i: usize| kept.as_ref().map_or_else(|| nth(i), |kept| kept[i]);
        for i in 0..len {
            self.set(pass, Value::Int(i as i64));
            if neighbours {
                let before = i.checked_sub(1).map_or(Value::Missing, |i| item(at(i)));
                let after = (i + 1 < len).then(|| item(at(i + 1)));
                self.set(pass + 2, before);
                self.set(pass + 3, after.unwrap_or(Value::Missing));
            }
            if self.iterate(span, (None, Value::Null), Some(elem), item(at(i)), body)? {
                break;
            }
        }
        Ok(Flow::Normal)
    }

    /// A Jinja `for` over a text: its characters, as minijinja iterates
    /// one, which does not tell the loop its length: `loop.last` is false
    /// on every pass, `loop.length` and `loop.revindex` are undefined
    /// ([`Renderer::loop_field`]). The characters are found as the loop
    /// goes (a long text costs no table of them); those of a text of the
    /// data are borrowed from it.
    #[inline(never)]
    fn exec_for_chars(
        &mut self,
        text: Value<'a>,
        (elem, pass, neighbours): (u32, u32, bool),
        (body, otherwise): (&'a Block, &'a Block),
        (span, reverse): (Span, bool),
        dot: &Value<'a>,
    ) -> Result<Flow> {
        let (borrowed, made): (&'a str, Option<Rc<str>>) = match text {
            Value::Str(text) => (text, None),
            Value::String(text) => ("", Some(text)),
            _ => return Err(internal(span)),
        };
        let whole: &str = made.as_deref().unwrap_or(borrowed);
        if whole.is_empty() {
            return self.exec_block(otherwise, dot);
        }
        let item = |(at, c): (usize, char)| match &made {
            None => Value::Str(&borrowed[at..at + c.len_utf8()]),
            Some(made) => Value::String(Rc::from(&made[at..at + c.len_utf8()])),
        };
        let chars: Box<dyn Iterator<Item = (usize, char)> + '_> = if reverse {
            Box::new(whole.char_indices().rev())
        } else {
            Box::new(whole.char_indices())
        };
        let mut chars = chars.peekable();
        self.set(pass + 1, Value::Missing);
        let mut before = Value::Missing;
        let mut i: i64 = 0;
        while let Some(this) = chars.next() {
            let this = item(this);
            self.set(pass, Value::Int(i));
            if neighbours {
                let after = chars.peek().map_or(Value::Missing, |&next| item(next));
                self.set(pass + 2, std::mem::replace(&mut before, this.clone()));
                self.set(pass + 3, after);
            }
            if self.iterate(span, (None, Value::Null), Some(elem), this, body)? {
                break;
            }
            i += 1;
        }
        Ok(Flow::Normal)
    }

    /// The items of a loop (by place) that its filter keeps, each tested
    /// in the loop variable's slot.
    #[inline(never)]
    fn kept_items(
        &mut self,
        test: &'a Expr,
        (elem, all): (u32, usize),
        (item, nth): (&dyn Fn(usize) -> Value<'a>, &dyn Fn(usize) -> usize),
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Vec<usize>> {
        self.tick_work(all, 0, span)?;
        let mut kept = Vec::with_capacity(all);
        for i in 0..all {
            let at = nth(i);
            self.set(elem, item(at));
            let found = self.eval(test, dot, true)?;
            if self.truthy(&found) {
                kept.push(at);
            }
        }
        Ok(kept)
    }

    /// A Jinja `for key, value in map.items()` ([`Instr::ForList`] with a
    /// key slot): over a map of the data, in its order.
    #[inline(never)]
    fn exec_for_items(
        &mut self,
        value: &'a Expr,
        (key, elem, pass): (u32, u32, u32),
        (body, otherwise): (&'a Block, &'a Block),
        (span, sorted, filter): (Span, bool, Option<&'a Expr>),
        dot: &Value<'a>,
    ) -> Result<Flow> {
        let map = match self.eval(value, dot, false)? {
            Value::Object(view) if !view.is_merged() && !self.is_message(&view) => view.value(),
            other => return Err(not_jinja(span, "iterate the items of", &other)),
        };
        let Some(entries) = map.as_object().filter(|entries| !entries.is_empty()) else {
            return self.exec_block(otherwise, dot);
        };
        let len = entries.len();
        self.tick_work(len, 0, span)?;
        let mut entries: Vec<(&'a String, &'a serde_json::Value)> = entries.iter().collect();
        if sorted {
            // By key, ignoring case: keys that differ in case alone, or
            // that are not ASCII, sort as minijinja says.
            let folded = |key: &str| key.to_ascii_lowercase();
            if entries.iter().any(|(key, _)| !key.is_ascii()) {
                return Err(not_jinja(span, "sort", &Value::Str("keys")));
            }
            entries.sort_by_cached_key(|(key, _)| folded(key));
            if entries
                .windows(2)
                .any(|pair| folded(pair[0].0) == folded(pair[1].0))
            {
                return Err(not_jinja(span, "sort", &Value::Str("keys")));
            }
        }
        if let Some(test) = filter {
            let mut kept = Vec::with_capacity(entries.len());
            for (name, item) in entries {
                self.set(key, Value::Str(name));
                self.set(elem, Value::from_json(item));
                let found = self.eval(test, dot, true)?;
                if self.truthy(&found) {
                    kept.push((name, item));
                }
            }
            entries = kept;
            if entries.is_empty() {
                return self.exec_block(otherwise, dot);
            }
        }
        let len = entries.len();
        self.set(pass + 1, Value::Int(i64::try_from(len).unwrap_or(i64::MAX)));
        for (i, (name, item)) in entries.into_iter().enumerate() {
            self.set(pass, Value::Int(i as i64));
            self.set(key, Value::Str(name));
            if self.iterate(
                span,
                (None, Value::Null),
                Some(elem),
                Value::from_json(item),
                body,
            )? {
                break;
            }
        }
        Ok(Flow::Normal)
    }

    /// Handlebars `#each` over a host result: elements copied out one by
    /// one, objects in their order. Returns whether the body ran.
    #[inline(never)]
    fn each_json(
        &mut self,
        json: std::rc::Rc<serde_json::Value>,
        (key, elem, each): (Option<u32>, Option<u32>, Option<u32>),
        body: &'a Block,
        span: Span,
    ) -> Result<bool> {
        let entries: Vec<(Value<'a>, serde_json::Value)> = match &*json {
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| (Value::Int(i as i64), item.clone()))
                .collect(),
            serde_json::Value::Object(map) => map
                .iter()
                .map(|(name, item)| (Value::string(name.clone()), item.clone()))
                .collect(),
            _ => Vec::new(),
        };
        let len = entries.len();
        for (i, (name, item)) in entries.into_iter().enumerate() {
            if let Some(base) = each {
                self.set_each(base, name.clone(), i, len);
            }
            if self.iterate(span, (key, name), elem, Value::owned(item), body)? {
                break;
            }
        }
        Ok(len > 0)
    }

    /// A Handlebars section (`{{#name}}` where name is not a helper).
    #[inline(never)]
    fn exec_section(
        &mut self,
        value: &'a Expr,
        body: &'a Block,
        otherwise: &'a Block,
        span: Span,
        each: u32,
        dot: &Value<'a>,
    ) -> Result<Flow> {
        let value = self.eval(value, dot, true)?;
        match &value {
            Value::Array(items) if !items.is_empty() => {
                for (i, item) in items.iter().enumerate() {
                    self.set_each(each, Value::Int(i as i64), i, items.len());
                    let item = Value::from_json(item);
                    if self.iterate(span, (None, Value::Null), None, item, body)? {
                        break;
                    }
                }
                Ok(Flow::Normal)
            }
            Value::Json(json) if json.is_array() => {
                if self.each_json(json.clone(), (None, None, Some(each)), body, span)? {
                    Ok(Flow::Normal)
                } else {
                    self.exec_block(otherwise, dot)
                }
            }
            // handlebars.js's blockHelperMissing: false, null, a missing
            // value and an empty list run `otherwise`; `true` runs the body
            // with dot unchanged; any other value (0, "", {} included) runs
            // it once with the value as dot.
            Value::Bool(false) | Value::Null | Value::Missing | Value::Array(_) => {
                self.exec_block(otherwise, dot)
            }
            Value::Bool(true) => self.exec_block(body, dot),
            other => self.exec_block(body, other),
        }
    }

    /// `range` over a host result: its elements are copied out one by one
    /// (host results are small). Kept out of `exec_range`, the data's path.
    /// Returns whether the body ran.
    #[inline(never)]
    fn range_json(
        &mut self,
        json: std::rc::Rc<serde_json::Value>,
        key: Option<u32>,
        elem: Option<u32>,
        body: &'a Block,
        span: Span,
    ) -> Result<bool> {
        let mut ran = false;
        match &*json {
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    ran = true;
                    let item = Value::owned(item.clone());
                    if self.iterate(span, (key, Value::Int(i as i64)), elem, item, body)? {
                        break;
                    }
                }
            }
            serde_json::Value::Object(map) => {
                let mut names: Vec<&String> = map.keys().collect();
                names.sort_unstable();
                for name in names {
                    ran = true;
                    let item = map.get(name).cloned().map_or(Value::Null, Value::owned);
                    if self.iterate(span, (key, Value::string(name.clone())), elem, item, body)? {
                        break;
                    }
                }
            }
            _ => {}
        }
        Ok(ran)
    }

    /// Indents every line printed since `start` by `indent`, as
    /// handlebars.js indents a standalone partial's output: each line,
    /// empty ones included, but not an empty last one.
    /// `traced`: how many chunks a source map had before the body ran
    /// (theirs are moved by the indentation, which becomes chunks of
    /// `span`).
    #[inline(never)]
    fn indent_since(&mut self, start: usize, indent: &str, traced: (usize, Span)) {
        if start > self.out.len() || !self.out.is_char_boundary(start) {
            return;
        }
        let printed = self.out.split_off(start);
        // Where each indentation went, as (offset in `printed`, offset in
        // the output).
        let mut inserted = Vec::new();
        let mut lines = printed.split('\n').peekable();
        let mut first = true;
        let mut read = 0;
        while let Some(line) = lines.next() {
            if !first {
                self.out.push('\n');
                read += 1;
            }
            first = false;
            if line.is_empty() && lines.peek().is_none() {
                break;
            }
            if self.tracing {
                inserted.push((start + read, self.out.len()));
            }
            self.out.push_str(indent);
            self.out.push_str(line);
            read += line.len();
        }
        if let Some(trace) = self.scope.trace.as_deref_mut() {
            trace.indent(traced.0, &inserted, indent.len(), traced.1.range());
        }
    }

    /// Notes the pieces of a text printed at `start` of the output.
    #[cold]
    #[inline(never)]
    fn trace_text(&mut self, start: usize, from: &[(u32, Span)]) {
        let Some(trace) = self.scope.trace.as_deref_mut() else {
            return;
        };
        let mut at = start;
        for &(len, span) in from {
            let end = at + len as usize;
            trace.push(at..end, span.range(), Wrote::Text);
            at = end;
        }
    }

    /// [`Instr::Print`] in a render that records a source map: the same
    /// printing, with what it printed noted (and, when the value is the
    /// data's own, where it is). It mirrors the plain arm in `exec` (kept
    /// apart so a render without a map does no bookkeeping): a change to
    /// one is a change to both, and `tests/suite/source_maps.rs` compares
    /// their texts.
    #[cold]
    #[inline(never)]
    fn print_traced(&mut self, expr: &'a Expr, span: Span, dot: &Value<'a>) -> Result<()> {
        let start = self.out.len();
        let of_data = if let Some(json) = self.json_of(expr, dot) {
            self.print_json(json, span)?;
            Some(DataAt::Node(std::ptr::from_ref(json) as usize))
        } else if let Expr::Call {
            func: func @ (Func::Printf | Func::Print | Func::Println),
            args,
            span: call_span,
        } = expr
        {
            self.print_call(*func, args, *call_span, dot)?;
            None
        } else {
            let value = self.eval(expr, dot, false)?;
            self.print(&value, span)?;
            match value {
                Value::Str(text) => Some(DataAt::Text(text.as_ptr() as usize)),
                _ => None,
            }
        };
        self.trace_value(start, span, of_data, (expr, dot));
        self.check_output(Some(span))
    }

    /// Notes a value printed at `start` of the output by the tag at `span`.
    fn trace_value(
        &mut self,
        start: usize,
        span: Span,
        of_data: Option<DataAt>,
        (expr, dot): (&'a Expr, &Value<'a>),
    ) {
        let end = self.out.len();
        // A path through merged layers (a namespace of the prompt
        // context) read its value key by key: where it is, found again.
        let of_data = of_data.or_else(|| {
            let Expr::Path { base, keys, .. } = expr else {
                return None;
            };
            let leaf = super::lookup::data_leaf(self.path_base(base, dot)?, keys)?;
            Some(DataAt::Node(std::ptr::from_ref(leaf) as usize))
        });
        if let Some(trace) = self.scope.trace.as_deref_mut() {
            trace.push(start..end, span.range(), Wrote::Value(of_data));
        }
    }

    /// The template a dynamic partial (`{{> (expr)}}`) names; `None` when
    /// there is none and `failover` (a partial block runs its content then).
    #[inline(never)]
    fn named_template(
        &mut self,
        name: &'a Expr,
        span: Span,
        dot: &Value<'a>,
        failover: bool,
    ) -> Result<Option<u32>> {
        let value = self.eval(name, dot, false)?;
        let name: &str = match &value {
            Value::Str(text) => text,
            Value::String(text) => text,
            other => {
                return fail(
                    span,
                    format!(
                        "the name of a dynamic partial must be a string, not {}",
                        other.kind_name()
                    ),
                )
            }
        };
        let templates = &self.program.templates;
        // The last definition of a name wins (Handlebars inline partials).
        match templates.iter().rposition(|t| &*t.name == name) {
            Some(index) => Ok(Some(u32::try_from(index).unwrap_or(u32::MAX))),
            None if failover => Ok(None),
            None => Err(error(span, format!("there is no partial named {name:?}"))
                .suggest(
                    closest(name, templates.iter().map(|t| &*t.name))
                        .map(|c| format!("did you mean \"{c}\"?")),
                )
                .into()),
        }
    }

    /// Calls a template as a partial block: inside it, `{{> @partial-block}}`
    /// runs `content` in this frame.
    fn call_with_content(
        &mut self,
        template: u32,
        value: Value<'a>,
        span: Span,
        content: &'a PartialContent,
        dot: &Value<'a>,
    ) -> Result<()> {
        self.partial_blocks.push(PartialBlock {
            content,
            frame: self.frame,
            dot: dot.clone(),
            level: self.partial_level,
            calls: self.calls,
        });
        let level = std::mem::replace(&mut self.partial_level, self.partial_blocks.len());
        let result = self.call_template(template, value, span);
        self.partial_level = level;
        self.partial_blocks.pop();
        result
    }

    /// `{{> @partial-block}}`: runs the content of the partial block that
    /// called the running partial, in its caller's frame, with the current
    /// dot; inside it, `@partial-block` is the one seen where it is written.
    #[inline(never)]
    fn partial_block(&mut self, span: Span, dot: &Value<'a>) -> Result<()> {
        let entry = self
            .partial_level
            .checked_sub(1)
            .and_then(|level| self.partial_blocks.get(level).cloned());
        let Some(PartialBlock {
            content,
            frame,
            dot: caller_dot,
            level: written_level,
            calls: calls_then,
        }) = entry
        else {
            return Err(error(span, "there is no @partial-block here: this partial was not called as a partial block",
            )
            .suggest(Some(
                "call the partial as {{#> name}}…{{/name}}, whose content {{> @partial-block}} renders".to_string(),
            )).into());
        };
        if self.calls >= self.program.limits.max_call_depth {
            return fail(
                span,
                Exceeded::CallDepth(self.program.limits.max_call_depth).to_string(),
            );
        }
        // The calls between the partial called as the block (at depth
        // `calls_then + 1`) and this one did not lead to the content: an
        // error in it does not name them.
        let owner = calls_then.saturating_add(1);
        self.calls += 1;
        let saved_frame = std::mem::replace(&mut self.frame, frame);
        let level = std::mem::replace(&mut self.partial_level, written_level);
        let result = self.run_content(content, &caller_dot, dot);
        self.partial_level = level;
        self.frame = saved_frame;
        self.calls -= 1;
        result.map_err(|mut error| {
            let calls = error.calls_mut();
            // The shallowest owner wins: a content run inside another
            // content skips down to the outer one's partial.
            calls.from_depth = Some(calls.from_depth.map_or(owner, |depth| depth.min(owner)));
            error
        })
    }

    /// Runs a partial block's content in the current frame (its writer's)
    /// with `dot`, its `../` levels filled first: the writer's dot one level
    /// up when `dot` is another context, as handlebars.js stacks contexts.
    fn run_content(
        &mut self,
        content: &'a PartialContent,
        caller_dot: &Value<'a>,
        dot: &Value<'a>,
    ) -> Result<()> {
        let Some((first, outer)) = &content.levels else {
            return self.exec_block(&content.body, dot).map(|_| ());
        };
        let base = self.frame + *first as usize;
        let mut levels = Vec::with_capacity(outer.len() + 1);
        if !same_context(dot, caller_dot) {
            levels.push(caller_dot.clone());
        }
        for slot in outer.iter() {
            let value = self.vars.get(self.frame + *slot as usize).cloned();
            levels.push(value.unwrap_or(Value::Missing));
        }
        levels.resize(outer.len() + 1, Value::Missing);
        // The content may run again inside itself: its levels come back after.
        for (i, value) in levels.iter_mut().enumerate() {
            if let Some(place) = self.vars.get_mut(base + i) {
                std::mem::swap(place, value);
            }
        }
        let result = self.exec_block(&content.body, dot);
        for (i, value) in levels.into_iter().enumerate() {
            if let Some(place) = self.vars.get_mut(base + i) {
                *place = value;
            }
        }
        result.map(|_| ())
    }

    fn call_template(&mut self, id: u32, value: Value<'a>, span: Span) -> Result<()> {
        let program = self.program;
        let Some(template) = program.templates.get(id as usize) else {
            return Err(internal(span));
        };
        self.check_call_depth(template, span)?;
        // A call is a step: templates that each call the next several
        // times make work that grows exponentially without any loop.
        self.tick(span)?;
        self.calls += 1;
        let base = self.vars.len();
        self.vars
            .resize(base + template.slots.max(1) as usize, Value::Missing);
        if let Some(slot) = self.vars.get_mut(base) {
            *slot = value.clone();
        }
        let saved = std::mem::replace(&mut self.frame, base);
        let result = self.exec_block(&template.body, &value);
        self.frame = saved;
        self.vars.truncate(base);
        let depth = self.calls;
        self.calls -= 1;
        result.map(|_| ()).map_err(|mut error| {
            // Where the failing template was called from, innermost first:
            // a front end names the place that included another file.
            let calls = error.calls_mut();
            match calls.from_depth {
                Some(from) if depth > from => {}
                _ => {
                    calls.from_depth = None;
                    calls.sites.push(span.range());
                }
            }
            error
        })
    }

    /// Fails a call of `template` past `max_call_depth`.
    fn check_call_depth(&self, template: &super::program::Template, span: Span) -> Result<()> {
        let max = self.program.limits.max_call_depth;
        if self.calls < max {
            return Ok(());
        }
        let (over, name) = (Exceeded::CallDepth(max), &*template.name);
        fail(
            span,
            format!("{over}: does {name:?} call itself without end?"),
        )
    }

    /// A Jinja macro's call ([`super::program::JinjaOp::Macro`]): its
    /// body run in a frame of its own, its parameters in slots 1…, what it
    /// prints made the call's value. A call counts as a step, and against
    /// the depth of calls, as a template's does. A render that records a
    /// source map leaves macros to minijinja (a macro's text is printed
    /// later, elsewhere).
    #[inline(never)]
    pub(super) fn call_macro(
        &mut self,
        id: u32,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let program = self.program;
        let Some(template) = program.templates.get(id as usize) else {
            return Err(internal(span));
        };
        // Deeper calls are minijinja's (real templates nest a few: a
        // schema's levels), which bounds its own recursion: each call here
        // takes more of the stack than a template's.
        if self.tracing || self.calls >= MACRO_DEPTH {
            return Err(not_jinja(span, "call", &Value::Str("a macro")));
        }
        self.check_call_depth(template, span)?;
        self.tick(span)?;
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            values.push(self.eval(arg, dot, false)?);
        }
        self.calls += 1;
        let base = self.vars.len();
        self.vars
            .resize(base + template.slots.max(1) as usize, Value::Missing);
        if let Some(slots) = self.vars.get_mut(base + 1..base + 1 + values.len()) {
            for (slot, value) in slots.iter_mut().zip(values) {
                *slot = value;
            }
        }
        let saved = std::mem::replace(&mut self.frame, base);
        let outer = std::mem::take(&mut self.out);
        let result = self.exec_block(&template.body, &Value::Null);
        let text = std::mem::replace(&mut self.out, outer);
        self.frame = saved;
        self.vars.truncate(base);
        self.calls -= 1;
        result?;
        let func = Func::Jinja(super::program::JinjaOp::Macro(id));
        self.fits(func, text.len(), span)?;
        self.count_built(func, text.len(), span)?;
        Ok(Value::string(text))
    }

    /// [`Instr::Capture`]: the body's text into `slot` (a render that
    /// records a source map leaves it to minijinja, as a macro's call).
    #[inline(never)]
    fn capture(&mut self, slot: u32, body: &'a Block, span: Span, dot: &Value<'a>) -> Result<()> {
        if self.tracing {
            return Err(not_jinja(span, "capture", &Value::Str("a block")));
        }
        let outer = std::mem::take(&mut self.out);
        let flow = self.exec_block(body, dot);
        let text = std::mem::replace(&mut self.out, outer);
        if flow? != Flow::Normal {
            return Err(internal(span));
        }
        let func = Func::Jinja(super::program::JinjaOp::SetOr);
        self.fits(func, text.len(), span)?;
        self.count_built(func, text.len(), span)?;
        self.set(slot, Value::string(text));
        Ok(())
    }

    /// Prints a value: strings and integers here, the rest in
    /// [`Renderer::print_other`].
    #[inline]
    pub(super) fn print(&mut self, value: &Value<'a>, span: Span) -> Result<()> {
        match value {
            Value::Str(text) => self.out.push_str(text),
            Value::String(text) => self.out.push_str(text),
            Value::Int(i) => gofmt::write_int(&mut self.out, *i),
            _ => return self.print_other(value, span),
        }
        Ok(())
    }

    /// [`Renderer::print`] of a value of the data.
    #[inline]
    fn print_json(&mut self, json: &'a serde_json::Value, span: Span) -> Result<()> {
        match json {
            serde_json::Value::String(text) => self.out.push_str(text),
            serde_json::Value::Number(n) if n.is_i64() => {
                gofmt::write_int(&mut self.out, n.as_i64().unwrap_or(0))
            }
            other => return self.print_other(&Value::from_json(other), span),
        }
        Ok(())
    }

    /// Prints any other value, as the program's flavor prints it
    /// ([`flavor::print`]).
    #[inline(never)]
    fn print_other(&mut self, value: &Value<'a>, span: Span) -> Result<()> {
        let program = self.program;
        flavor::print(
            program.flavor,
            program.strictness,
            &mut self.out,
            value,
            span,
        )
    }

    pub(super) fn eval(
        &mut self,
        expr: &'a Expr,
        dot: &Value<'a>,
        test: bool,
    ) -> Result<Value<'a>> {
        match expr {
            Expr::Dot => Ok(dot.clone()),
            Expr::Root => Ok(self.root.clone()),
            Expr::Var(slot) => Ok(self
                .vars
                .get(self.frame + *slot as usize)
                .cloned()
                .unwrap_or(Value::Missing)),
            Expr::Const(c) => Ok(match c {
                Const::Null => Value::Null,
                Const::Bool(b) => Value::Bool(*b),
                Const::Int(i) => Value::Int(*i),
                Const::Float(f) => Value::Float(*f),
                Const::Str(s) => Value::Str(s),
                Const::List(items) => Value::Array(items),
                Const::Map(map) => Value::from_json(map),
            }),
            Expr::Path { .. } => match self.json_of(expr, dot) {
                Some(json) => Ok(Value::from_json(json)),
                None => self.eval_path(expr, dot, test),
            },
            Expr::Loop { pass, field } => self.loop_field(*pass, *field, test),
            Expr::Call { func, args, span } => self.call(*func, args, *span, dot, test),
        }
    }

    /// `loop.NAME` of the Jinja loop whose slots start at `pass`; a
    /// missing `previtem` or `nextitem` where a missing value is an error
    /// is minijinja's.
    fn loop_field(&self, pass: u32, field: LoopField, test: bool) -> Result<Value<'a>> {
        let held = |n: u32| self.vars.get(self.frame + (pass + n) as usize);
        let item = match field {
            LoopField::PrevItem => held(2),
            LoopField::NextItem => held(3),
            _ => {
                let slot = |n: u32| match held(n) {
                    Some(Value::Int(i)) => *i,
                    _ => 0,
                };
                // A loop over a text's characters does not know its
                // length ([`Renderer::exec_for_chars`]).
                if let Some(Value::Missing) = held(1) {
                    match field {
                        LoopField::Last => return Ok(Value::Bool(false)),
                        LoopField::Length | LoopField::Revindex | LoopField::Revindex0 => {
                            Some(&Value::Missing)
                        }
                        _ => return Ok(field.of(slot(0), 0)),
                    }
                } else {
                    return Ok(field.of(slot(0), slot(1)));
                }
            }
        };
        match item {
            Some(Value::Missing) | None if !self.missing_ok(test) => {
                Err(not_jinja(Span::default(), "read", &Value::Missing))
            }
            Some(item) => Ok(item.clone()),
            None => Ok(Value::Missing),
        }
    }
}

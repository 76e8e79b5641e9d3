//! The evaluator: runs a [`Program`] against [`Data`], writing into one
//! `String`. Values borrow the data and the program; variables live in one
//! stack of frame slots; a render allocates only for what functions make.

use std::fmt::Write as _;

use super::gofmt;
use super::helpers;
use super::program::{
    Block, Const, Expr, Flavor, Func, Instr, JinjaOp, Key, LoopField, PartialContent, Program, Span,
};
use super::value::{sorted_keys, Value};
use crate::diagnostics::{closest, TemplateError};
use crate::{data, functions, messages, Data, Strictness};

/// Errors are boxed while rendering: a result stays small (a value, or a
/// pointer) on the hot paths, where no error happens.
type Result<T> = std::result::Result<T, Box<TemplateError>>;

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

/// Renders `program` against `data`, into an output that starts with room
/// for `expect` bytes (or for about the template's size, if that is more).
pub(crate) fn render(program: &Program, data: &Data, expect: usize) -> Result<String> {
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
        built: 0,
        calls: 0,
        depth: 0,
        args: Vec::with_capacity(8),
        partial_blocks: Vec::new(),
        partial_level: 0,
        messages: None,
    };
    if program.flavor == Flavor::ChatTemplate {
        if let Some(serde_json::Value::Array(items)) =
            data.root().get("messages").map(|v| v.value())
        {
            renderer.messages = Some(items.as_ptr_range());
        }
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

struct Renderer<'a> {
    program: &'a Program,
    root: Value<'a>,
    vars: Vec<Value<'a>>,
    frame: usize,
    out: String,
    iterations: u64,
    /// Bytes of text functions and helpers have built so far.
    built: usize,
    calls: usize,
    depth: usize,
    /// Reused argument buffer for variadic functions.
    args: Vec<Value<'a>>,
    /// Handlebars partial blocks being called, innermost last.
    partial_blocks: Vec<PartialBlock<'a>>,
    /// How many of `partial_blocks` the running code sees: all of them in a
    /// partial called as a partial block; in a partial block's content, those
    /// seen where it was written.
    partial_level: usize,
    /// A chat template's messages (the data's `messages` list), by where
    /// they are: an object in this range is a message.
    messages: Option<std::ops::Range<*const serde_json::Value>>,
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

fn internal(span: Span) -> Box<TemplateError> {
    Box::new(TemplateError::render(
        Some(span.range()),
        "internal error: malformed program",
    ))
}

/// A value a program lowered from Jinja does not handle the way Jinja
/// does (`what`: what it was to do with it): the template renders on
/// minijinja instead, which gives the result, or the error, Jinja gives.
#[cold]
fn not_jinja(span: Span, what: &str, value: &Value<'_>) -> Box<TemplateError> {
    Box::new(TemplateError::render(
        Some(span.range()),
        format!("cannot {what} {} here", value.kind_name()),
    ))
}

impl<'a> Renderer<'a> {
    fn text(&self, range: std::ops::Range<usize>) -> &'a str {
        self.program.source.get(range).unwrap_or("")
    }

    fn missing_ok(&self, test: bool) -> bool {
        match self.program.strictness {
            Strictness::Lenient => true,
            Strictness::Semi => test,
            Strictness::Strict => false,
        }
    }

    #[inline]
    fn check_output(&self, span: Option<Span>) -> Result<()> {
        if self.out.len() > self.program.limits.max_output {
            return Err(self.output_error(span).into());
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn output_error(&self, span: Option<Span>) -> TemplateError {
        TemplateError::render(
            span.map(Span::range),
            format!(
                "the output is larger than {} (the limit max_output)",
                crate::limits::describe_bytes(self.program.limits.max_output)
            ),
        )
    }

    fn set(&mut self, slot: u32, value: Value<'a>) {
        if let Some(place) = self.vars.get_mut(self.frame + slot as usize) {
            *place = value;
        }
    }

    fn exec_block(&mut self, block: &'a Block, dot: &Value<'a>) -> Result<Flow> {
        if self.depth >= MAX_DEPTH {
            return Err(TemplateError::render(
                None,
                format!("blocks and template calls nest more than {MAX_DEPTH} deep"),
            )
            .into());
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
            Instr::Text(text) => {
                self.out.push_str(text);
                self.check_output(None)?;
            }
            Instr::Print { expr, span } => {
                if let Some(json) = self.json_of(expr, dot) {
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
            Instr::Indent { indent, body } => {
                let start = self.out.len();
                let flow = self.exec_block(body, dot)?;
                self.indent_since(start, indent);
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
            Instr::BareHelper { name, span } => {
                let data_has = match dot {
                    Value::Object(view) => view.get(name).is_some(),
                    Value::Json(json) => json.get(&**name).is_some(),
                    _ => false,
                };
                if data_has {
                    return Err(TemplateError::render(
                        Some(span.range()),
                        format!(
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
            } => return self.exec_for_list(value, (*elem, *pass), body, otherwise, *span, dot),
            Instr::Break => return Ok(Flow::Break),
            Instr::Continue => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }

    /// Truth for `if`, `with` and sections. Go: false, 0, "", nil and empty
    /// collections are false. Handlebars (handlebars.js): the same, except
    /// that an object is true even when empty.
    #[inline]
    fn truthy(&self, value: &Value<'a>) -> bool {
        if self.messages.is_some() {
            return self.message_truth(value);
        }
        value.is_true() || (self.program.flavor == Flavor::Handlebars && is_object(value))
    }

    /// Truth for `and`, `or` and `not`: Go's and Handlebars' `is_true`, a
    /// chat template's message as [`Renderer::truthy`] has it.
    #[inline]
    fn truth(&self, value: &Value<'a>) -> bool {
        match self.messages {
            Some(_) => self.message_truth(value),
            None => value.is_true(),
        }
    }

    /// Truth in a chat template: a message is empty when every key is
    /// null, as `transformers` drops them.
    #[inline(never)]
    fn message_truth(&self, value: &Value<'a>) -> bool {
        match value {
            Value::Object(view) if self.is_message(view) => view
                .keys()
                .iter()
                .any(|key| view.get(key).is_some_and(|found| !found.value().is_null())),
            other => other.is_true(),
        }
    }

    /// Fails when a function's text of `bytes` would be larger than one
    /// value may be.
    #[inline(never)]
    fn fits(&self, func: Func, bytes: usize, span: Span) -> Result<()> {
        if bytes > self.program.limits.max_value_bytes {
            return Err(Self::func_error(
                func,
                span,
                format!(
                    "the text is larger than {} (the limit max_value_bytes)",
                    crate::limits::describe_bytes(self.program.limits.max_value_bytes)
                ),
            ));
        }
        Ok(())
    }

    /// A text `func` built, counted against the render's bounds: one text
    /// at most `max_value_bytes`, all of them together 16 × `max_output`
    /// (a value grown a little on every pass of a long loop is copied
    /// each time: the total stops it before the copying takes minutes).
    fn built(&mut self, func: Func, text: String, span: Span) -> Result<Value<'a>> {
        self.count_built(func, text.len(), span)?;
        Ok(Value::string(text))
    }

    fn count_built(&mut self, func: Func, bytes: usize, span: Span) -> Result<()> {
        self.fits(func, bytes, span)?;
        self.built = self.built.saturating_add(bytes);
        let most = self.program.limits.max_built_bytes();
        if self.built > most {
            return Err(Self::func_error(
                func,
                span,
                format!(
                    "the render has built more than {} of text (16 × the limit max_output): does a loop grow a value on every pass?",
                    crate::limits::describe_bytes(most)
                ),
            ));
        }
        Ok(())
    }

    fn tick(&mut self, span: Span) -> Result<()> {
        self.iterations += 1;
        if self.iterations > self.program.limits.max_steps {
            return Err(TemplateError::render(
                Some(span.range()),
                format!(
                    "the render took more than {} steps (loop passes, template calls and function calls; the limit max_steps): is a loop unbounded, or do templates call each other too many times?",
                    self.program.limits.max_steps
                ),
            )
            .into());
        }
        Ok(())
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
                    return Err(TemplateError::render(
                        Some(span.range()),
                        format!("can't use {n} to iterate over more than one variable"),
                    )
                    .into());
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
                return Err(TemplateError::render(
                    Some(span.range()),
                    format!("range can't iterate over {shown}"),
                )
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

    /// A Jinja `for` over a list of the data ([`Instr::ForList`]).
    fn exec_for_list(
        &mut self,
        value: &'a Expr,
        (elem, pass): (u32, u32),
        body: &'a Block,
        otherwise: &'a Block,
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Flow> {
        let items = match self.eval(value, dot, false)? {
            Value::Array(items) => items,
            other => return Err(not_jinja(span, "iterate", &other)),
        };
        if items.is_empty() {
            return self.exec_block(otherwise, dot);
        }
        let length = Value::Int(i64::try_from(items.len()).unwrap_or(i64::MAX));
        self.set(pass + 1, length);
        for (i, item) in items.iter().enumerate() {
            self.set(pass, Value::Int(i as i64));
            let item = Value::from_json(item);
            if self.iterate(span, (None, Value::Null), Some(elem), item, body)? {
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
    #[inline(never)]
    fn indent_since(&mut self, start: usize, indent: &str) {
        if start > self.out.len() || !self.out.is_char_boundary(start) {
            return;
        }
        let printed = self.out.split_off(start);
        let mut lines = printed.split('\n').peekable();
        let mut first = true;
        while let Some(line) = lines.next() {
            if !first {
                self.out.push('\n');
            }
            first = false;
            if line.is_empty() && lines.peek().is_none() {
                break;
            }
            self.out.push_str(indent);
            self.out.push_str(line);
        }
    }

    /// The template a dynamic partial (`{{> (expr)}}`) names.
    #[inline(never)]
    /// The template a dynamic partial names; `None` when there is none and
    /// `failover` (a partial block runs its content then).
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
                return Err(TemplateError::render(
                    Some(span.range()),
                    format!(
                        "the name of a dynamic partial must be a string, not {}",
                        other.kind_name()
                    ),
                )
                .into())
            }
        };
        let templates = &self.program.templates;
        // The last definition of a name wins (Handlebars inline partials).
        match templates.iter().rposition(|t| &*t.name == name) {
            Some(index) => Ok(Some(u32::try_from(index).unwrap_or(u32::MAX))),
            None if failover => Ok(None),
            None => Err(TemplateError::render(
                Some(span.range()),
                format!("there is no partial named {name:?}"),
            )
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
            return Err(TemplateError::render(
                Some(span.range()),
                "there is no @partial-block here: this partial was not called as a partial block",
            )
            .suggest(Some(
                "call the partial as {{#> name}}…{{/name}}, whose content {{> @partial-block}} renders".to_string(),
            )).into());
        };
        if self.calls >= self.program.limits.max_call_depth {
            return Err(TemplateError::render(
                Some(span.range()),
                format!(
                    "template calls nest more than {} deep (the limit max_call_depth)",
                    self.program.limits.max_call_depth
                ),
            )
            .into());
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
        if self.calls >= program.limits.max_call_depth {
            return Err(TemplateError::render(
                Some(span.range()),
                format!(
                    "template calls nest more than {} deep (the limit max_call_depth): does {:?} call itself without end?",
                    program.limits.max_call_depth, &*template.name
                ),
            )
            .into());
        }
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

    /// Prints a value: strings and integers here, the rest in
    /// [`Renderer::print_other`].
    #[inline]
    fn print(&mut self, value: &Value<'a>, span: Span) -> Result<()> {
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

    #[inline(never)]
    fn print_other(&mut self, value: &Value<'a>, span: Span) -> Result<()> {
        if self.program.flavor.is_jinja() {
            // Python's `str()` of a bool; other values print on minijinja.
            return match value {
                Value::Bool(b) => {
                    self.out.push_str(if *b { "True" } else { "False" });
                    Ok(())
                }
                other => Err(not_jinja(span, "print", other)),
            };
        }
        match value {
            Value::Missing => {
                if self.program.strictness != Strictness::Lenient {
                    return Err(TemplateError::render(
                        Some(span.range()),
                        "the value is missing: there is nothing to print",
                    )
                    .into());
                }
            }
            Value::Null => {
                if self.program.flavor == Flavor::Go {
                    self.out.push_str("<no value>");
                }
            }
            Value::Array(_) | Value::Object(_) | Value::Json(_)
                if self.program.flavor == Flavor::Handlebars =>
            {
                write_js(&mut self.out, &value.to_json());
            }
            other => gofmt::write_value(&mut self.out, other),
        }
        Ok(())
    }

    fn eval(&mut self, expr: &'a Expr, dot: &Value<'a>, test: bool) -> Result<Value<'a>> {
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
            }),
            Expr::Path { .. } => match self.json_of(expr, dot) {
                Some(json) => Ok(Value::from_json(json)),
                None => self.eval_path(expr, dot, test),
            },
            Expr::Loop { pass, field } => Ok(self.loop_field(*pass, *field)),
            Expr::Call { func, args, span } => self.call(*func, args, *span, dot, test),
        }
    }

    /// Jinja's operators ([`JinjaOp`]).
    #[inline(never)]
    fn jinja_op(
        &mut self,
        op: JinjaOp,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        match op {
            JinjaOp::Defined => {
                let expr = args.first().ok_or_else(|| internal(span))?;
                Ok(Value::Bool(self.defined(expr, span, dot)?.is_some()))
            }
            JinjaOp::Default => {
                let expr = args.first().ok_or_else(|| internal(span))?;
                match self.defined(expr, span, dot)? {
                    Some(value) => Ok(value),
                    None => self.arg(args, 1, span, dot),
                }
            }
            JinjaOp::Cond => {
                let test = self.arg(args, 0, span, dot)?;
                let branch = if self.truth(&test) { 1 } else { 2 };
                self.arg(args, branch, span, dot)
            }
            JinjaOp::Concat | JinjaOp::Add => {
                let a = self.arg(args, 0, span, dot)?;
                let b = self.arg(args, 1, span, dot)?;
                if op == JinjaOp::Add {
                    match (&a, &b) {
                        (Value::Int(x), Value::Int(y)) => {
                            return x
                                .checked_add(*y)
                                .map(Value::Int)
                                .ok_or_else(|| not_jinja(span, "add", &b));
                        }
                        (Value::Str(_) | Value::String(_), Value::Str(_) | Value::String(_)) => {}
                        (other, _) => return Err(not_jinja(span, "add", other)),
                    }
                }
                let mut text = String::new();
                for value in [&a, &b] {
                    match value {
                        Value::Str(_) | Value::String(_) => {
                            self.fits(
                                Func::Jinja(op),
                                text.len() + value.as_str().map_or(0, str::len),
                                span,
                            )?;
                            text.push_str(value.as_str().unwrap_or(""));
                        }
                        Value::Int(i) => gofmt::write_int(&mut text, *i),
                        Value::Bool(b) => text.push_str(if *b { "True" } else { "False" }),
                        other => return Err(not_jinja(span, "join", other)),
                    }
                }
                self.built(Func::Jinja(op), text, span)
            }
            JinjaOp::Raise => Err(not_jinja(span, "raise", &Value::Null)),
            JinjaOp::Slice => {
                let list = self.arg(args, 0, span, dot)?;
                let Value::Array(items) = list else {
                    return Err(not_jinja(span, "slice", &list));
                };
                let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
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
                Ok(Value::Array(
                    items.get(start..stop.max(start)).unwrap_or(&[]),
                ))
            }
            JinjaOp::In => {
                let needle = self.arg(args, 0, span, dot)?;
                let haystack = self.arg(args, 1, span, dot)?;
                let found = match (&haystack, needle.as_str()) {
                    (Value::Str(_) | Value::String(_), Some(needle)) => {
                        haystack.as_str().unwrap_or("").contains(needle)
                    }
                    (Value::Object(view), Some(key)) if self.is_message(view) => {
                        self.message_field(view, key, span)?.is_some()
                    }
                    (Value::Object(view), Some(key)) => view.get(key).is_some(),
                    (Value::Array(items), _) => {
                        let mut found = false;
                        for item in items.iter() {
                            let item = Value::from_json(item);
                            // Python's `==` across kinds (1 == 1.0, True == 1)
                            // is not Go's: those are minijinja's to compare.
                            if kind(&item) != kind(&needle) {
                                return Err(not_jinja(span, "compare", &item));
                            }
                            if equal(&item, &needle)
                                .map_err(|_| not_jinja(span, "compare", &item))?
                            {
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
        }
    }

    /// The value of a path whose last key may be missing (`None`), for
    /// Jinja's `is defined` and `default`: any other step missing, or a
    /// last step into something other than a map of the data, fails.
    fn defined(
        &mut self,
        expr: &'a Expr,
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Option<Value<'a>>> {
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
            other => Err(not_jinja(span, "test", other)),
        }
    }

    /// `loop.NAME` of the Jinja loop whose slots start at `pass`.
    fn loop_field(&self, pass: u32, field: LoopField) -> Value<'a> {
        let slot = |n: u32| match self.vars.get(self.frame + (pass + n) as usize) {
            Some(Value::Int(i)) => *i,
            _ => 0,
        };
        field.of(slot(0), slot(1))
    }

    /// The JSON a path reaches, when it reads keys that objects of the
    /// data have from dot, a variable or the root (most paths): followed in
    /// place, without making a value at each step. `None` for any other
    /// expression or path, which [`Renderer::eval`] reads in full.
    #[inline]
    fn json_of(&self, expr: &Expr, dot: &Value<'a>) -> Option<&'a serde_json::Value> {
        let Expr::Path { base, keys, .. } = expr else {
            return None;
        };
        if self.messages.is_some() {
            // A message's keys read as a chat template reads them.
            return None;
        }
        let from = match &**base {
            Expr::Dot => dot,
            Expr::Var(slot) => self.vars.get(self.frame + *slot as usize)?,
            Expr::Root => &self.root,
            _ => return None,
        };
        json_path(from, keys)
    }

    /// The variable `expr` reads, if it is one.
    #[inline]
    fn var_of(&self, expr: &Expr) -> Option<&Value<'a>> {
        match expr {
            Expr::Var(slot) => self.vars.get(self.frame + *slot as usize),
            _ => None,
        }
    }

    /// A path ([`Expr::Path`]) read key by key, with what each step finds
    /// checked: missing keys, nulls, lists, host results, merged layers.
    #[inline(never)]
    fn eval_path(&mut self, expr: &'a Expr, dot: &Value<'a>, test: bool) -> Result<Value<'a>> {
        let Expr::Path { base, keys, span } = expr else {
            return self.eval(expr, dot, test);
        };
        let Some((first, rest)) = keys.split_first() else {
            return self.eval(base, dot, test);
        };
        // The first key is read from dot or a variable in place,
        // without a copy of the value it is read from.
        let mut value = match &**base {
            Expr::Dot => self.field(dot, first, 0, expr, *span, test)?,
            Expr::Var(slot) => match self.vars.get(self.frame + *slot as usize) {
                Some(base) => self.field(base, first, 0, expr, *span, test)?,
                None => self.field(&Value::Missing, first, 0, expr, *span, test)?,
            },
            base => {
                let base = self.eval(base, dot, test)?;
                self.field(&base, first, 0, expr, *span, test)?
            }
        };
        for (i, key) in rest.iter().enumerate() {
            value = self.field(&value, key, i + 1, expr, *span, test)?;
        }
        Ok(value)
    }

    /// The text of a path up to (not including) key `i`.
    fn prefix(&self, span: Span, keys: &[Key], i: usize) -> &'a str {
        let end = match i.checked_sub(1).and_then(|p| keys.get(p)) {
            Some(previous) => previous.end as usize,
            None => {
                let key = keys.get(i);
                key.map_or(span.start as usize, |k| {
                    (k.end as usize).saturating_sub(k.name.len() + 1)
                })
            }
        };
        self.text(span.start as usize..end.max(span.start as usize))
    }

    /// The path of key `i` of a path (see [`crate::Error::path`]): the
    /// keys up to and including it, from the value the path reads, as
    /// written (dots, and a Handlebars index as `[0]`). Dot, the root and
    /// Go's `$` start it bare (`.issue.title` gives `issue.title`); any
    /// other variable starts it as written (`$x.title`, `../title`).
    /// `None` for a path read from another value (Go's `(pipe).key`).
    #[cold]
    fn key_path(&self, base: &Expr, keys: &[Key], span: Span, i: usize) -> Option<String> {
        let mut path = match base {
            Expr::Dot | Expr::Root | Expr::Var(_) => {
                let written = self.prefix(span, keys, 0);
                let written = written.strip_suffix('[').unwrap_or(written);
                let written = match written.strip_suffix(['.', '/']) {
                    Some(bare) if !written.ends_with("..") => bare,
                    _ => written,
                };
                match written {
                    "" | "." | "$" | "this" | "@root" => String::new(),
                    // The value of an outer context: `../name`.
                    parents if parents.ends_with("..") => format!("{parents}/"),
                    variable => format!("{variable}."),
                }
            }
            _ => return None,
        };
        for key in keys.get(..=i)? {
            let name: &str = &key.name;
            match array_index(name) {
                Some(index) if self.program.flavor == Flavor::Handlebars => {
                    if path.ends_with(['.', '/']) {
                        path.pop();
                    }
                    path.push_str(&format!("[{index}]"));
                }
                _ => {
                    if !path.is_empty() && !path.ends_with(['.', '/']) {
                        path.push('.');
                    }
                    path.push_str(name);
                }
            }
        }
        Some(path)
    }

    /// Reads `key` from `value`. Generic over the value's borrow so that a
    /// host result ([`Value::Json`]) can be read through a borrowed view
    /// ([`Renderer::field_json`]), and by reference so that reading from
    /// dot or a variable copies nothing. The common case, a key an object
    /// of the data has, is inlined; everything else is
    /// [`Renderer::field_other`].
    #[inline]
    fn field<'v>(
        &self,
        value: &Value<'v>,
        key: &Key,
        i: usize,
        path: &Expr,
        span: Span,
        test: bool,
    ) -> Result<Value<'v>> {
        if let (Value::Object(view), None) = (value, &self.messages) {
            if let Some(found) = view.get(&key.name) {
                return Ok(Value::from_view(found));
            }
        }
        self.field_other(value, key, i, path, span, test)
    }

    /// Whether `view` is one of a chat template's messages.
    fn is_message(&self, view: &data::View<'_>) -> bool {
        self.messages.as_ref().is_some_and(|messages| {
            !view.is_merged() && messages.contains(&std::ptr::from_ref(view.value()))
        })
    }

    /// A field of a chat template's message as `transformers` hands it
    /// over: `None` where the key is absent or its value null; the
    /// reasoning's aliases are minijinja's to read.
    fn message_field<'v>(
        &self,
        view: &data::View<'v>,
        name: &str,
        span: Span,
    ) -> Result<Option<data::View<'v>>> {
        if name == "reasoning_content" || name == "thinking" {
            return Err(not_jinja(span, "read", &Value::Str("the reasoning")));
        }
        Ok(view.get(name).filter(|found| !found.value().is_null()))
    }

    /// [`Renderer::field`] of a key an object lacks, or of a value that is
    /// not an object of the data.
    #[inline(never)]
    fn field_other<'v>(
        &self,
        value: &Value<'v>,
        key: &Key,
        i: usize,
        path: &Expr,
        span: Span,
        test: bool,
    ) -> Result<Value<'v>> {
        if let (Value::Object(view), Some(_)) = (value, &self.messages) {
            // A chat template: a message's keys read as `transformers`
            // hands them over; other maps as they are.
            let found = match self.is_message(view) {
                true => self.message_field(view, &key.name, span)?,
                false => view.get(&key.name),
            };
            if let Some(found) = found {
                return Ok(Value::from_view(found));
            }
            if self.is_message(view) {
                return Err(not_jinja(span, "read", value));
            }
        }
        let Expr::Path { base, keys, .. } = path else {
            return Err(internal(span));
        };
        let name: &str = &key.name;
        let from_dot = matches!(**base, Expr::Dot) && i == 0;
        let root_suggestion = || -> Option<String> {
            if !from_dot {
                return None;
            }
            match &self.root {
                Value::Object(root) if root.get(name).is_some() => {
                    Some(format!("did you mean \"${}\"?", self.text(span.range())))
                }
                _ => None,
            }
        };
        let describe = |prefix: &str| -> String {
            if prefix.is_empty() || prefix == "." {
                "dot (.)".to_string()
            } else {
                prefix.to_string()
            }
        };
        match value {
            Value::Object(view) => match view.get(name) {
                Some(found) => Ok(Value::from_view(found)),
                None => {
                    if self.missing_ok(test) {
                        return Ok(Value::Missing);
                    }
                    if self.program.flavor == Flavor::Handlebars {
                        return Err(self.hbs_field_error(value, key, i, path, span).into());
                    }
                    let suggestion = root_suggestion().or_else(|| {
                        closest(name, view.keys()).map(|c| format!("did you mean \"{c}\"?"))
                    });
                    Err(TemplateError::render(
                        Some(span.range()),
                        format!("map has no entry for key {name:?}"),
                    )
                    .suggest(suggestion)
                    .with_path(self.key_path(base, keys, span, i))
                    .into())
                }
            },
            Value::Missing => Ok(Value::Missing),
            Value::Json(json) => self.field_json(json, key, i, path, span, test),
            Value::Null => {
                if self.program.strictness == Strictness::Lenient {
                    return Ok(Value::Missing);
                }
                if self.program.flavor == Flavor::Handlebars {
                    if self.missing_ok(test) {
                        return Ok(Value::Missing);
                    }
                    return Err(self.hbs_field_error(value, key, i, path, span).into());
                }
                let prefix = describe(self.prefix(span, keys, i));
                Err(TemplateError::render(
                    Some(span.range()),
                    format!("{prefix} is null, so it has no key {name:?}"),
                )
                .suggest(root_suggestion().or_else(|| {
                    Some(format!(
                        "test it first: {{{{ if {prefix} }}}}…{{{{ end }}}}"
                    ))
                }))
                .with_path(self.key_path(base, keys, span, i))
                .into())
            }
            // Handlebars reads an array's elements by index (`list.[0]`) and
            // its `length`, as handlebars.js does.
            Value::Array(items) if self.program.flavor == Flavor::Handlebars => {
                if let Some(found) = array_index(name).and_then(|index| items.get(index)) {
                    return Ok(Value::from_json(found));
                }
                if name == "length" {
                    return Ok(Value::Int(i64::try_from(items.len()).unwrap_or(i64::MAX)));
                }
                if self.missing_ok(test) {
                    return Ok(Value::Missing);
                }
                Err(self.hbs_field_error(value, key, i, path, span).into())
            }
            other if self.program.flavor == Flavor::Handlebars => {
                if self.missing_ok(test) {
                    return Ok(Value::Missing);
                }
                Err(self.hbs_field_error(other, key, i, path, span).into())
            }
            other => {
                let prefix = describe(self.prefix(span, keys, i));
                Err(TemplateError::render(
                    Some(span.range()),
                    format!(
                        "can't evaluate field {name} in type {}: {prefix} is {}, not a map",
                        other.go_type(),
                        other.kind_name()
                    ),
                )
                .suggest(root_suggestion())
                .with_path(self.key_path(base, keys, span, i))
                .into())
            }
        }
    }

    /// A missing key in Handlebars words: `issue has no key "titl"`, with
    /// the whole path suggested (`did you mean "issue.title"?`).
    #[cold]
    #[inline(never)]
    fn hbs_field_error(
        &self,
        value: &Value<'_>,
        key: &Key,
        i: usize,
        path: &Expr,
        span: Span,
    ) -> TemplateError {
        let Expr::Path { base, keys, .. } = path else {
            return *internal(span);
        };
        let name: &str = &key.name;
        let prefix = self
            .prefix(span, keys, i)
            .trim_end_matches(['.', '/', '['])
            .to_string();
        let (subject, joined) = if prefix.is_empty() || prefix == "this" {
            ("the current context".to_string(), String::new())
        } else {
            (prefix.clone(), format!("{prefix}."))
        };
        let at_root = || -> Option<String> {
            let from_dot = matches!(**base, Expr::Dot) && i == 0;
            match &self.root {
                Value::Object(root) if from_dot && root.get(name).is_some() => {
                    Some(format!("did you mean \"@root.{name}\"?"))
                }
                _ => None,
            }
        };
        let error = match value {
            Value::Object(view) => {
                TemplateError::render(Some(span.range()), format!("{subject} has no key {name:?}"))
                    .suggest(
                        closest(name, view.keys())
                            .map(|c| format!("did you mean \"{joined}{c}\"?"))
                            .or_else(at_root),
                    )
            }
            Value::Null => TemplateError::render(
                Some(span.range()),
                format!("{subject} is null, so it has no key {name:?}"),
            )
            .suggest(Some(format!(
                "test it first: {{{{#if {prefix}}}}}…{{{{/if}}}}"
            ))),
            Value::Array(items) if array_index(name).is_some() => TemplateError::render(
                Some(span.range()),
                format!(
                    "{subject} has {} element{}, so it has no index {name}",
                    items.len(),
                    if items.len() == 1 { "" } else { "s" }
                ),
            ),
            Value::Array(_) => TemplateError::render(
                Some(span.range()),
                format!("{subject} is a list, so it has no key {name:?}"),
            )
            .suggest(at_root().or_else(|| Some(format!("read an element by index: {joined}[0]")))),
            other => TemplateError::render(
                Some(span.range()),
                format!(
                    "{subject} is {}, not a map, so it has no key {name:?}",
                    other.kind_name()
                ),
            )
            .suggest(at_root()),
        };
        error.with_path(self.key_path(base, keys, span, i))
    }

    /// [`Renderer::field`] of a host result: read through a borrowed view,
    /// and the child found copied out (host results are small).
    #[inline(never)]
    fn field_json<'v>(
        &self,
        json: &serde_json::Value,
        key: &Key,
        i: usize,
        path: &Expr,
        span: Span,
        test: bool,
    ) -> Result<Value<'v>> {
        self.field(&Value::from_json(json), key, i, path, span, test)
            .map(Value::detach)
    }

    fn arg(
        &mut self,
        args: &'a [Expr],
        i: usize,
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let expr = args.get(i).ok_or_else(|| internal(span))?;
        self.eval(expr, dot, false)
    }

    /// Argument `i`, evaluated as a tested value when `test` is set.
    fn arg_tested(
        &mut self,
        args: &'a [Expr],
        i: usize,
        span: Span,
        dot: &Value<'a>,
        test: bool,
    ) -> Result<Value<'a>> {
        let expr = args.get(i).ok_or_else(|| internal(span))?;
        self.eval(expr, dot, test)
    }

    fn func_error(func: Func, span: Span, message: impl std::fmt::Display) -> Box<TemplateError> {
        Box::new(TemplateError::render(
            Some(span.range()),
            format!("{}: {message}", func.name()),
        ))
    }

    /// Evaluates all arguments onto the shared buffer; returns where they start.
    fn push_args(&mut self, args: &'a [Expr], dot: &Value<'a>) -> Result<usize> {
        let base = self.args.len();
        for expr in args {
            match self.eval(expr, dot, false) {
                Ok(value) => self.args.push(value),
                Err(error) => {
                    self.args.truncate(base);
                    return Err(error);
                }
            }
        }
        Ok(base)
    }

    fn print_call(
        &mut self,
        func: Func,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<()> {
        self.tick(span)?;
        let base = self.push_args(args, dot)?;
        let values = std::mem::take(&mut self.args);
        let slice = values.get(base..).unwrap_or(&[]);
        let result = write_print(func, &mut self.out, slice, span);
        self.args = values;
        self.args.truncate(base);
        result
    }

    fn call(
        &mut self,
        func: Func,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
        test: bool,
    ) -> Result<Value<'a>> {
        // A function call is a step, as a loop pass and a template call
        // are: recursion that calls functions on the way costs its share.
        self.tick(span)?;
        match func {
            Func::Jinja(op) => self.jinja_op(op, args, span, dot),
            Func::And | Func::Or => {
                let mut last = Value::Missing;
                for expr in args {
                    let value = self.eval(expr, dot, test)?;
                    if self.truth(&value) == (func == Func::Or) {
                        return Ok(value);
                    }
                    last = value;
                }
                Ok(last)
            }
            Func::Not => {
                let expr = args.first().ok_or_else(|| internal(span))?;
                let value = self.eval(expr, dot, test)?;
                Ok(Value::Bool(!self.truth(&value)))
            }
            Func::Eq => {
                let first = self.arg(args, 0, span, dot)?;
                for expr in args.get(1..).unwrap_or(&[]) {
                    let other = self.eval(expr, dot, false)?;
                    if equal(&first, &other).map_err(|m| Self::func_error(func, span, m))? {
                        return Ok(Value::Bool(true));
                    }
                }
                Ok(Value::Bool(false))
            }
            Func::Ne | Func::Lt | Func::Le | Func::Gt | Func::Ge => {
                let a = self.arg(args, 0, span, dot)?;
                let b = self.arg(args, 1, span, dot)?;
                let result = match func {
                    Func::Ne => equal(&a, &b).map(|e| !e),
                    Func::Lt => less(&a, &b),
                    Func::Le => less(&a, &b).and_then(|lt| Ok(lt || equal(&a, &b)?)),
                    Func::Gt => less(&a, &b).and_then(|lt| Ok(!(lt || equal(&a, &b)?))),
                    _ => less(&a, &b).map(|lt| !lt),
                };
                result
                    .map(Value::Bool)
                    .map_err(|m| Self::func_error(func, span, m))
            }
            Func::Len => {
                let value = self.arg(args, 0, span, dot)?;
                if self.program.flavor.is_jinja() {
                    // Jinja's `length`: characters of a string, items of a list.
                    let len = match &value {
                        Value::Array(items) => items.len(),
                        Value::Str(_) | Value::String(_) => {
                            value.as_str().unwrap_or("").chars().count()
                        }
                        other => return Err(not_jinja(span, "count", other)),
                    };
                    return Ok(Value::Int(len as i64));
                }
                let len = match &value {
                    Value::Str(s) => s.len(),
                    Value::String(s) => s.len(),
                    Value::Array(items) => items.len(),
                    Value::Object(view) => view.len().unwrap_or(0),
                    Value::Json(json) => match &**json {
                        serde_json::Value::Array(items) => items.len(),
                        serde_json::Value::Object(map) => map.len(),
                        _ => 0,
                    },
                    Value::Missing => 0,
                    Value::Null => return Err(Self::func_error(func, span, "len of nil pointer")),
                    other => {
                        return Err(Self::func_error(
                            func,
                            span,
                            format!("len of type {}", other.go_type()),
                        ))
                    }
                };
                Ok(Value::Int(len as i64))
            }
            Func::Index => self.index(args, span, dot),
            Func::Slice => self.slice(args, span, dot),
            Func::Print | Func::Printf | Func::Println => {
                let base = self.push_args(args, dot)?;
                let values = self.args.get(base..).unwrap_or(&[]);
                // The text it builds is at least its string arguments: a
                // value that doubles in a loop stops here, before it is built.
                let at_least = values
                    .iter()
                    .map(|value| value.as_str().map_or(0, str::len))
                    .fold(0usize, usize::saturating_add);
                let mut text = String::new();
                let result = self
                    .fits(func, at_least, span)
                    .and_then(|()| write_print(func, &mut text, values, span))
                    .and_then(|()| self.fits(func, text.len(), span));
                self.args.truncate(base);
                result.and_then(|()| self.built(func, text, span))
            }
            Func::Html | Func::Js | Func::Urlquery => {
                let base = self.push_args(args, dot)?;
                // Go's evalArgs shows a nil argument as "<no value>".
                for value in self.args.get_mut(base..).unwrap_or(&mut []) {
                    if matches!(value, Value::Null | Value::Missing) {
                        *value = Value::Str("<no value>");
                    }
                }
                let values = self.args.get(base..).unwrap_or(&[]);
                let mut joined = String::new();
                let text = match values {
                    [single] if single.as_str().is_some() => single.as_str().unwrap_or(""),
                    _ => {
                        gofmt::sprint(&mut joined, values);
                        &joined
                    }
                };
                let escaped = match func {
                    Func::Html => html_escape(text),
                    Func::Js => js_escape(text),
                    _ => query_escape(text),
                };
                self.args.truncate(base);
                self.built(func, escaped, span)
            }
            Func::Call => self.call_value(args, span, dot),
            Func::Lookup => self.lookup(args, span, dot),
            Func::Dict => {
                let mut map = serde_json::Map::new();
                for pair in args.chunks(2) {
                    let [name, value] = pair else {
                        return Err(internal(span));
                    };
                    let name = self.eval(name, dot, false)?;
                    let value = self.eval(value, dot, false)?;
                    map.insert(name.as_str().unwrap_or("").to_string(), value.to_json());
                }
                Ok(Value::owned(serde_json::Value::Object(map)))
            }
            Func::Host(index) => self.call_host(index, args, span, dot),
            Func::Hbs(helpers::Helper::IncludeZero) => {
                let value = self.arg_tested(args, 0, span, dot, test)?;
                let zero =
                    matches!(value, Value::Int(0)) || matches!(value, Value::Float(f) if f == 0.0);
                if zero && self.arg(args, 1, span, dot)?.is_true() {
                    return Ok(Value::Bool(true));
                }
                Ok(value)
            }
            Func::Hbs(helper) => self.call_helper(helper, args, span, dot),
            Func::ToJson => {
                let value = self.arg(args, 0, span, dot)?;
                let text = match &value {
                    Value::Object(view) if !view.is_merged() => functions::to_json(view.value()),
                    Value::Json(json) => functions::to_json(json),
                    other => functions::to_json(&other.to_json()),
                };
                self.built(func, text, span)
            }
            Func::Join => {
                let separator = self.arg(args, 0, span, dot)?;
                let list = self.arg(args, 1, span, dot)?;
                let Some(separator) = separator.as_str() else {
                    return Err(Self::func_error(
                        func,
                        span,
                        format!(
                            "the separator must be a string, not {}",
                            separator.kind_name()
                        ),
                    )
                    .suggest(Some(
                        "write the separator first: join \", \" .list".to_string(),
                    ))
                    .into());
                };
                if self.program.flavor.is_jinja() {
                    // Jinja's `join` prints items with Python's `str()`:
                    // the same text for strings and integers only.
                    let plain = |item: &serde_json::Value| item.is_string() || item.is_i64();
                    match &list {
                        Value::Array(items) if items.iter().all(plain) => {}
                        other => return Err(not_jinja(span, "join", other)),
                    }
                }
                let items: &[serde_json::Value] = match &list {
                    Value::Array(items) => items,
                    Value::Json(json) if json.is_array() => {
                        json.as_array().map_or(&[], Vec::as_slice)
                    }
                    Value::Missing => &[],
                    other => {
                        return Err(Self::func_error(
                            func,
                            span,
                            format!("unsupported type {}", other.go_type()),
                        ))
                    }
                };
                let at_least = separator
                    .len()
                    .saturating_mul(items.len().saturating_sub(1))
                    .saturating_add(
                        items
                            .iter()
                            .map(|item| item.as_str().map_or(0, str::len))
                            .fold(0usize, usize::saturating_add),
                    );
                self.fits(func, at_least, span)?;
                let text = functions::join(
                    separator,
                    items.iter().map(|item| match item {
                        serde_json::Value::String(s) => std::borrow::Cow::Borrowed(s.as_str()),
                        other => {
                            let mut text = String::new();
                            gofmt::write_value(&mut text, &Value::from_json(other));
                            if other.is_null() {
                                text = "<nil>".to_string();
                            }
                            std::borrow::Cow::Owned(text)
                        }
                    }),
                );
                self.built(func, text, span)
            }
            Func::Lower | Func::Upper | Func::Trim => {
                let value = self.arg(args, 0, span, dot)?;
                let Some(text) = value.as_str() else {
                    if matches!(value, Value::Missing) {
                        return Ok(Value::Str(""));
                    }
                    return Err(Self::func_error(
                        func,
                        span,
                        format!("expected a string, got {}", value.go_type()),
                    ));
                };
                let text = match func {
                    Func::Lower => functions::lower(text),
                    Func::Upper => functions::upper(text),
                    _ => functions::trim(text),
                };
                self.built(func, text, span)
            }
            Func::Role | Func::History | Func::Media => {
                let mut text = Vec::with_capacity(2);
                for index in 0..args.len() {
                    let value = self.arg(args, index, span, dot)?;
                    let Some(arg) = value.as_str() else {
                        return Err(Self::func_error(
                            func,
                            span,
                            format!("expected a string, got {}", value.go_type()),
                        ));
                    };
                    text.push(arg.to_string());
                }
                let marker = match (func, text.as_slice()) {
                    (Func::Role, [name]) => messages::emit_role(name),
                    (Func::Media, [url, content_type]) => messages::emit_media(url, content_type),
                    _ => messages::emit_history(),
                };
                marker
                    .map(Value::string)
                    .map_err(|message| Self::func_error(func, span, message))
            }
        }
    }

    /// A Handlebars-only helper: its arguments evaluated, then
    /// [`helpers::call`]; its error is a render error naming it.
    #[inline(never)]
    fn call_helper(
        &mut self,
        helper: helpers::Helper,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let base = self.push_args(args, dot)?;
        let bounds = helpers::Bounds {
            list: self.program.limits.max_items,
            text: self.program.limits.max_value_bytes,
        };
        let values = self.args.get(base..).unwrap_or(&[]);
        let result = helpers::call(helper, values, bounds, |value| self.truthy(value));
        // A text the helper made (not one of its arguments handed back)
        // counts as built.
        let made = match &result {
            Ok(Value::String(text)) => (!values
                .iter()
                .any(|arg| matches!(arg, Value::String(a) if std::rc::Rc::ptr_eq(a, text))))
            .then_some(text.len()),
            _ => None,
        };
        self.args.truncate(base);
        let result =
            result.map_err(|message| Self::func_error(Func::Hbs(helper), span, message))?;
        if let Some(bytes) = made {
            self.count_built(Func::Hbs(helper), bytes, span)?;
        }
        Ok(result)
    }

    /// `call`: Go calls a function value; JSON data never holds one, and
    /// host functions are called by their names, so this always fails.
    #[cold]
    #[inline(never)]
    fn call_value(&mut self, args: &'a [Expr], span: Span, dot: &Value<'a>) -> Result<Value<'a>> {
        let value = self.arg(args, 0, span, dot)?;
        let named = value
            .as_str()
            .filter(|name| self.program.hosts.iter().any(|h| &*h.name == *name));
        Err(Self::func_error(
            Func::Call,
            span,
            format!(
                "the first argument is {}, not a function; host functions are called by name: {{{{ fetch .id }}}}",
                value.kind_name()
            ),
        )
        .suggest(named.map(|name| format!("write {{{{ {name} … }}}} instead of {{{{ call \"{name}\" … }}}}"))).into())
    }

    /// Calls host function `index` with the arguments as JSON; its result
    /// is an owned value, its error a render error at the call. Not inlined:
    /// `call` stays small for the built-ins.
    #[inline(never)]
    fn call_host(
        &mut self,
        index: u16,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let program = self.program;
        let host = program
            .hosts
            .get(usize::from(index))
            .ok_or_else(|| internal(span))?;
        // Handlebars hash arguments are a last `Dict`: passed by name.
        let (args, hash) = match args.split_last() {
            Some((
                Expr::Call {
                    func: Func::Dict,
                    args: hash,
                    ..
                },
                rest,
            )) => (rest, &**hash),
            _ => (args, &[][..]),
        };
        let mut json = Vec::with_capacity(args.len());
        for expr in args {
            json.push(self.eval(expr, dot, false)?.to_json());
        }
        let mut named = Vec::with_capacity(hash.len() / 2);
        for pair in hash.chunks(2) {
            let [Expr::Const(Const::Str(key)), value] = pair else {
                return Err(internal(span));
            };
            named.push((key.to_string(), self.eval(value, dot, false)?.to_json()));
        }
        match host.function.call(&host.name, json, named) {
            Ok(result) => {
                if let serde_json::Value::String(text) = &result {
                    self.count_built(Func::Host(index), text.len(), span)?;
                }
                Ok(Value::owned(result))
            }
            Err(failure) => Err(TemplateError::render(Some(span.range()), failure.message)
                .suggest(failure.suggestion)
                .into()),
        }
    }

    /// Handlebars `lookup`: a key of a map (or an element of a list);
    /// missing when there is none, never an error.
    #[inline(never)]
    fn lookup(&mut self, args: &'a [Expr], span: Span, dot: &Value<'a>) -> Result<Value<'a>> {
        let value = self.arg(args, 0, span, dot)?;
        let key = self.arg(args, 1, span, dot)?;
        let name = match &key {
            Value::Int(n) => n.to_string(),
            Value::UInt(n) => n.to_string(),
            other => other.as_str().unwrap_or("").to_string(),
        };
        Ok(match &value {
            Value::Object(view) => view.get(&name).map_or(Value::Missing, Value::from_view),
            Value::Array(items) => name
                .parse::<usize>()
                .ok()
                .and_then(|n| items.get(n))
                .map_or(Value::Missing, Value::from_json),
            Value::Json(json) => {
                let found = match &**json {
                    serde_json::Value::Object(map) => map.get(&name),
                    serde_json::Value::Array(items) => {
                        name.parse::<usize>().ok().and_then(|n| items.get(n))
                    }
                    _ => None,
                };
                found.cloned().map_or(Value::Missing, Value::owned)
            }
            _ => Value::Missing,
        })
    }

    fn index(&mut self, args: &'a [Expr], span: Span, dot: &Value<'a>) -> Result<Value<'a>> {
        let mut value = self.arg(args, 0, span, dot)?;
        for (n, expr) in args.iter().enumerate().skip(1) {
            let index = self.eval(expr, dot, false)?;
            let read = (args, n);
            value = match &value {
                Value::Json(json) => self
                    .index_step(&Value::from_json(json), &index, span, read)?
                    .detach(),
                other => self.index_step(other, &index, span, read)?,
            };
        }
        Ok(value)
    }

    /// The path `index` reads up to its argument `n` (see
    /// [`crate::Error::path`]): `MSI.XXX` for `index .MSI "XXX"`. `None`
    /// unless it reads from dot, `$` or a path, with constant keys and
    /// indexes.
    #[cold]
    fn index_path(&self, args: &[Expr], n: usize) -> Option<String> {
        let mut path = match args.first()? {
            // Go's `$` is the frame's first slot.
            Expr::Dot => String::new(),
            Expr::Var(0) if self.program.flavor == Flavor::Go => String::new(),
            Expr::Path { base, keys, span } => {
                self.key_path(base, keys, *span, keys.len().checked_sub(1)?)?
            }
            _ => return None,
        };
        for arg in args.get(1..=n)? {
            match arg {
                Expr::Const(Const::Str(key)) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                }
                Expr::Const(Const::Int(index)) => path.push_str(&format!("[{index}]")),
                _ => return None,
            }
        }
        Some(path)
    }

    /// One index of `index`: an element of a list, a byte of a string, a
    /// key of a map. Generic over the borrow, like [`Renderer::field`].
    /// `read` is `index`'s arguments and which one this is, for the path
    /// of a missing element or key.
    fn index_step<'v>(
        &self,
        value: &Value<'v>,
        index: &Value<'_>,
        span: Span,
        read: (&[Expr], usize),
    ) -> Result<Value<'v>> {
        if self.program.flavor.is_jinja() && !matches!(value, Value::Array(_)) {
            return Err(not_jinja(span, "index", value));
        }
        Ok(match (value, index) {
            (Value::Array(items), Value::Int(n)) => {
                match usize::try_from(*n).ok().and_then(|n| items.get(n)) {
                    Some(item) => Value::from_json(item),
                    None => {
                        let error =
                            Self::func_error(Func::Index, span, format!("index out of range: {n}"));
                        return Err(error.with_path(self.index_path(read.0, read.1)).into());
                    }
                }
            }
            (Value::Str(_) | Value::String(_), Value::Int(n)) => {
                let bytes = value.as_str().unwrap_or("").as_bytes();
                match usize::try_from(*n).ok().and_then(|n| bytes.get(n)) {
                    Some(b) => Value::Int(i64::from(*b)),
                    None => {
                        return Err(Self::func_error(
                            Func::Index,
                            span,
                            format!("index out of range: {n}"),
                        ))
                    }
                }
            }
            (Value::Array(_) | Value::Str(_) | Value::String(_), other) => {
                return Err(Self::func_error(
                    Func::Index,
                    span,
                    format!("cannot index slice/array with type {}", other.go_type()),
                ))
            }
            (Value::Object(view), key) if key.as_str().is_some() => {
                let key = key.as_str().unwrap_or("");
                match view.get(key) {
                    Some(found) => Value::from_view(found),
                    None if self.missing_ok(false) => Value::Missing,
                    None => {
                        return Err(TemplateError::render(
                            Some(span.range()),
                            format!("map has no entry for key {key:?}"),
                        )
                        .suggest(
                            closest(key, view.keys()).map(|c| format!("did you mean \"{c}\"?")),
                        )
                        .with_path(self.index_path(read.0, read.1))
                        .into())
                    }
                }
            }
            (Value::Object(_), other) => {
                return Err(Self::func_error(
                    Func::Index,
                    span,
                    format!("value has type {}; should be string", other.go_type()),
                ))
            }
            (Value::Missing, _) => Value::Missing,
            (Value::Null, _) => {
                return Err(Self::func_error(Func::Index, span, "index of untyped nil"))
            }
            (other, _) => {
                return Err(Self::func_error(
                    Func::Index,
                    span,
                    format!("can't index item of type {}", other.go_type()),
                ))
            }
        })
    }

    fn slice(&mut self, args: &'a [Expr], span: Span, dot: &Value<'a>) -> Result<Value<'a>> {
        let value = self.arg(args, 0, span, dot)?;
        let rest = args.get(1..).unwrap_or(&[]);
        if rest.len() > 3 {
            return Err(Self::func_error(
                Func::Slice,
                span,
                format!("too many slice indexes: {}", rest.len()),
            ));
        }
        let mut indexes = [0usize; 3];
        for (n, expr) in rest.iter().enumerate() {
            let index = self.eval(expr, dot, false)?;
            let Value::Int(i) = index else {
                return Err(Self::func_error(
                    Func::Slice,
                    span,
                    format!("cannot index slice/array with type {}", index.go_type()),
                ));
            };
            let Ok(i) = usize::try_from(i) else {
                return Err(Self::func_error(
                    Func::Slice,
                    span,
                    format!("index out of range: {i}"),
                ));
            };
            if let Some(place) = indexes.get_mut(n) {
                *place = i;
            }
        }
        let len = match &value {
            Value::Str(s) => s.len(),
            Value::String(s) => s.len(),
            Value::Array(items) => items.len(),
            Value::Json(json) if json.is_array() => json.as_array().map_or(0, Vec::len),
            other => {
                return Err(Self::func_error(
                    Func::Slice,
                    span,
                    format!("can't slice item of type {}", other.go_type()),
                ))
            }
        };
        if rest.len() == 3 && value.as_str().is_some() {
            return Err(Self::func_error(
                Func::Slice,
                span,
                "cannot 3-index slice a string",
            ));
        }
        let start = if rest.is_empty() { 0 } else { indexes[0] };
        let end = if rest.len() >= 2 { indexes[1] } else { len };
        let cap = if rest.len() == 3 { indexes[2] } else { len };
        for bound in [start, end, cap] {
            if bound > len {
                return Err(Self::func_error(
                    Func::Slice,
                    span,
                    format!("index out of range: {bound}"),
                ));
            }
        }
        if start > end {
            return Err(Self::func_error(
                Func::Slice,
                span,
                format!("invalid slice index: {start} > {end}"),
            ));
        }
        if end > cap {
            return Err(Self::func_error(
                Func::Slice,
                span,
                format!("invalid slice index: {end} > {cap}"),
            ));
        }
        match value {
            Value::Array(items) => Ok(Value::Array(items.get(start..end).unwrap_or(&[]))),
            Value::Json(json) => {
                let items = json.as_array().and_then(|items| items.get(start..end));
                Ok(Value::owned(serde_json::Value::Array(
                    items.unwrap_or(&[]).to_vec(),
                )))
            }
            Value::Str(s) => match s.get(start..end) {
                Some(part) => Ok(Value::Str(part)),
                None => Err(Self::func_error(
                    Func::Slice,
                    span,
                    "the indexes cut a UTF-8 character in two",
                )),
            },
            Value::String(s) => match s.get(start..end) {
                Some(part) => self.built(Func::Slice, part.to_string(), span),
                None => Err(Self::func_error(
                    Func::Slice,
                    span,
                    "the indexes cut a UTF-8 character in two",
                )),
            },
            _ => Err(internal(span)),
        }
    }
}

fn write_print(func: Func, out: &mut String, args: &[Value<'_>], span: Span) -> Result<()> {
    match func {
        Func::Printf => match args.first() {
            Some(first) => match first.as_str() {
                Some(format) => gofmt::sprintf(out, format, args.get(1..).unwrap_or(&[])),
                None => {
                    return Err(TemplateError::render(
                        Some(span.range()),
                        format!(
                            "printf: the format must be a string, not {}",
                            first.kind_name()
                        ),
                    )
                    .into())
                }
            },
            None => return Err(internal(span)),
        },
        Func::Println => gofmt::sprintln(out, args),
        _ => gofmt::sprint(out, args),
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Nil,
    Bool,
    Int,
    Float,
    String,
    Other,
}

fn kind(value: &Value<'_>) -> Kind {
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
fn equal(a: &Value<'_>, b: &Value<'_>) -> std::result::Result<bool, String> {
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
fn less(a: &Value<'_>, b: &Value<'_>) -> std::result::Result<bool, String> {
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

/// The JSON that `keys` reach from `from` when every step is a key that an
/// object of one layer has (most reads); `None` otherwise, and for no keys,
/// and the path is then read step by step ([`Renderer::eval_path`]).
#[inline]
fn json_path<'a>(from: &Value<'a>, keys: &[Key]) -> Option<&'a serde_json::Value> {
    let Value::Object(view) = from else {
        return None;
    };
    if view.is_merged() || keys.is_empty() {
        return None;
    }
    let mut json = view.value();
    for key in keys {
        json = data::child(json, &key.name)?;
    }
    Some(json)
}

/// An object of the data or of a host result.
/// The array index a Handlebars key names: digits in JavaScript's canonical
/// form (`0`, `12`; not `01` or `-1`), as handlebars.js reads `list.[1]`.
fn array_index(name: &str) -> Option<usize> {
    let canonical = !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_digit())
        && (name == "0" || !name.starts_with('0'));
    if canonical {
        name.parse().ok()
    } else {
        None
    }
}

fn is_object(value: &Value<'_>) -> bool {
    match value {
        Value::Object(_) => true,
        Value::Json(json) => json.is_object(),
        _ => false,
    }
}

/// Go's `template.HTMLEscapeString`.
pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Go's `template.JSEscapeString`.
pub(crate) fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u00{:02X}", c as u32);
            }
            c if c.is_ascii() || gofmt::is_print(c) => out.push(c),
            c => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04X}");
                }
            }
        }
    }
    out
}

/// Go's `url.QueryEscape`.
pub(crate) fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            b => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// Prints a value as JavaScript's `String(value)` does (Handlebars): lists
/// join their elements with commas, maps print `[object Object]`.
pub(crate) fn write_js(out: &mut String, value: &serde_json::Value) {
    match value {
        serde_json::Value::Null => {}
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_js(out, item);
            }
        }
        serde_json::Value::Object(_) => out.push_str("[object Object]"),
        serde_json::Value::String(s) => out.push_str(s),
        other => gofmt::write_value(out, &Value::from_json(other)),
    }
}

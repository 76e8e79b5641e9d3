//! The built-in functions (`call` and what it dispatches to): Go's
//! `index`, `slice`, `len`, printing, escaping, host functions, the
//! Handlebars helpers' entry, role markers.

use super::budget::text_bytes;
use super::escape::{html_escape, js_escape, query_escape};
use super::fail::{error, fail, func_error, internal, no_entry};
use super::flavor;
use super::flavor::go as gofmt;
use super::flavor::handlebars as helpers;
use super::flavor::jinja::not_jinja;
use super::program::{Const, Expr, Func, Span};
use super::render::{Renderer, Result};
use super::value::Value;
use crate::diagnostics::closest;
use crate::functions;

impl<'a> Renderer<'a> {
    /// Argument `i`, evaluated.
    #[inline]
    pub(super) fn arg(
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
    pub(super) fn arg_tested(
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

    /// Evaluates all arguments onto the shared buffer; returns where they start.
    pub(super) fn push_args(&mut self, args: &'a [Expr], dot: &Value<'a>) -> Result<usize> {
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

    /// Runs `then` over the values of `args`, evaluated onto the shared
    /// buffer (no list allocated per call).
    pub(super) fn with_args<T>(
        &mut self,
        args: &'a [Expr],
        dot: &Value<'a>,
        then: impl FnOnce(&mut Self, &[Value<'a>]) -> Result<T>,
    ) -> Result<T> {
        let base = self.push_args(args, dot)?;
        let values = std::mem::take(&mut self.args);
        let result = then(self, values.get(base..).unwrap_or(&[]));
        self.args = values;
        self.args.truncate(base);
        result
    }

    pub(super) fn print_call(
        &mut self,
        func: Func,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<()> {
        self.tick(span)?;
        self.with_args(args, dot, |this, values| {
            write_print(func, &mut this.out, values, span)
        })
    }

    pub(super) fn call(
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
            Func::Jinja(op) => self.jinja_op(op, args, span, dot, test),
            Func::And | Func::Or | Func::Not => self.logic(func, args, span, dot, test),
            Func::Eq | Func::Ne | Func::Lt | Func::Le | Func::Gt | Func::Ge => {
                self.compare(func, args, span, dot, false)
            }
            Func::Len => {
                let value = self.arg(args, 0, span, dot)?;
                if self.program.flavor.is_jinja() {
                    // Jinja counts a text's characters: its bytes are read.
                    self.tick_work(0, value.as_str().map_or(0, str::len), span)?;
                    // A map's keys (a message's are minijinja's to count).
                    match &value {
                        Value::Object(view) if !view.is_merged() && !self.is_message(view) => {
                            let len = view.len().unwrap_or(0);
                            return Ok(Value::Int(i64::try_from(len).unwrap_or(i64::MAX)));
                        }
                        Value::Json(json) if json.is_object() => {
                            let len = json.as_object().map_or(0, serde_json::Map::len);
                            return Ok(Value::Int(i64::try_from(len).unwrap_or(i64::MAX)));
                        }
                        _ => return flavor::jinja::length(&value, span),
                    }
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
                    Value::Null => return Err(func_error(func, span, "len of nil pointer")),
                    other => {
                        return Err(func_error(
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
                // Made by walking the value: its items and its size are
                // the work.
                let items = match &value {
                    Value::Array(items) => items.len(),
                    Value::Object(view) => view.len().unwrap_or(0),
                    Value::Json(json) => json
                        .as_array()
                        .map(Vec::len)
                        .or(json.as_object().map(serde_json::Map::len))
                        .unwrap_or(0),
                    _ => 0,
                };
                self.tick_work(items, text.len(), span)?;
                self.built(func, text, span)
            }
            Func::Join => {
                let separator = self.arg(args, 0, span, dot)?;
                let list = self.arg(args, 1, span, dot)?;
                let Some(separator) = separator.as_str() else {
                    return Err(func_error(
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
                    flavor::jinja::check_join(&list, span)?;
                }
                let items: &[serde_json::Value] = match &list {
                    Value::Array(items) => items,
                    Value::Json(json) if json.is_array() => {
                        json.as_array().map_or(&[], Vec::as_slice)
                    }
                    Value::Missing => &[],
                    other => {
                        return Err(func_error(
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
                self.tick_work(items.len(), at_least, span)?;
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
                    return Err(func_error(
                        func,
                        span,
                        format!("expected a string, got {}", value.go_type()),
                    ));
                };
                // A text the case change leaves as it is is not built again.
                if !matches!(func, Func::Trim)
                    && functions::case_unchanged(text, matches!(func, Func::Upper))
                {
                    return Ok(value);
                }
                let text = match func {
                    Func::Lower => functions::lower(text),
                    Func::Upper => functions::upper(text),
                    _ => functions::trim(text),
                };
                self.built(func, text, span)
            }
            Func::BudgetSection => self.budget_section(args, span, dot),
            Func::EndSection => Ok(Value::string(self.scope.section_end())),
            Func::CacheBreakpoint => self.cache_breakpoint(span),
            Func::Role | Func::DataRole | Func::History | Func::Media | Func::Section => {
                let mut text = Vec::with_capacity(2);
                for index in 0..args.len() {
                    let value = self.arg(args, index, span, dot)?;
                    let Some(arg) = value.as_str() else {
                        return Err(func_error(
                            func,
                            span,
                            format!("expected a string, got {}", value.go_type()),
                        ));
                    };
                    text.push(arg.to_string());
                }
                let marker = match (func, text.as_slice()) {
                    (Func::Role, [name]) => self.scope.role(name),
                    (Func::Role, [name, attributes]) => self.scope.role_with(name, attributes),
                    (Func::DataRole, [name, allowed]) => {
                        if allowed.split(',').any(|role| role == name) {
                            self.scope.role(name)
                        } else {
                            Err(format!(
                                "the data chose the role \"{name}\", and roles from data are limited to {}: \
                                 the host allows more with LoadOptions::with_data_roles",
                                allowed.split(',').map(|role| format!("\"{role}\"")).collect::<Vec<_>>().join(", ")
                            ))
                        }
                    }
                    (Func::Media, [url, content_type]) => self.scope.media(url, content_type),
                    (Func::Section, [name]) => self.scope.section(name),
                    _ => Ok(self.scope.history()),
                };
                marker
                    .map(Value::string)
                    .map_err(|message| func_error(func, span, message))
            }
        }
    }

    /// `cache_breakpoint`: the marker of a provider's cache breakpoint
    /// (out of [`Self::call`]'s frame).
    #[inline(never)]
    fn cache_breakpoint(&mut self, span: Span) -> Result<Value<'a>> {
        self.scope
            .cache_breakpoint()
            .map(Value::string)
            .map_err(|message| func_error(Func::CacheBreakpoint, span, message))
    }

    /// `section NAME KEY VALUE …`: the marker that starts a budget section
    /// (kept out of [`Self::call`]'s frame, which deep templates recurse
    /// through).
    #[inline(never)]
    fn budget_section(
        &mut self,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let name = self.arg(args, 0, span, dot)?;
        let Some(name) = name.as_str().map(str::to_string) else {
            return Err(func_error(
                Func::BudgetSection,
                span,
                format!(
                    "the section's name must be a string, got {}",
                    name.go_type()
                ),
            ));
        };
        use crate::messages::Setting;
        let mut settings = Vec::new();
        let mut index = 1;
        while index < args.len() {
            let key = self.arg(args, index, span, dot)?;
            let Some(key) = key.as_str().map(str::to_string) else {
                return Err(func_error(
                    Func::BudgetSection,
                    span,
                    format!(
                        "after the section's name come settings, each a name and its value (\"priority\" 2): found {} for a name",
                        key.go_type()
                    ),
                ));
            };
            let value = match index + 1 < args.len() {
                false => None,
                true => Some(match self.arg(args, index + 1, span, dot)? {
                    Value::Int(n) => Setting::Integer(n),
                    Value::UInt(n) => i64::try_from(n)
                        .map_or(Setting::Other("an integer too large"), Setting::Integer),
                    Value::Bool(b) => Setting::Bool(b),
                    other => Setting::Other(other.kind_name()),
                }),
            };
            settings.push((key, value));
            index += 2;
        }
        crate::messages::SectionSpec::from_settings(&name, settings)
            .and_then(|spec| self.scope.section_start(&spec))
            .map(Value::string)
            .map_err(|message| func_error(Func::BudgetSection, span, message))
    }

    /// A Handlebars-only helper: its arguments evaluated, then
    /// [`helpers::call`]; its error is a render error naming it.
    #[inline(never)]
    pub(super) fn call_helper(
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
        // A helper reads its arguments (`equals` compares two long
        // strings): their text counts as work.
        let read = text_bytes(self.args.get(base..).unwrap_or(&[]));
        self.tick_work(0, read, span)?;
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
        let result = result.map_err(|message| func_error(Func::Hbs(helper), span, message))?;
        if let Some(bytes) = made {
            self.count_built(Func::Hbs(helper), bytes, span)?;
        }
        Ok(result)
    }

    /// `call`: Go calls a function value; JSON data never holds one, and
    /// host functions are called by their names, so this always fails.
    #[cold]
    #[inline(never)]
    pub(super) fn call_value(
        &mut self,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let value = self.arg(args, 0, span, dot)?;
        let named = value
            .as_str()
            .filter(|name| self.program.hosts.iter().any(|h| &*h.name == *name));
        Err(func_error(
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
    pub(super) fn call_host(
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
            Err(failure) => Err(error(span, failure.message)
                .suggest(failure.suggestion)
                .into()),
        }
    }

    /// Handlebars `lookup`: a key of a map (or an element of a list);
    /// missing when there is none, never an error.
    #[inline(never)]
    pub(super) fn lookup(
        &mut self,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
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

    pub(super) fn index(
        &mut self,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
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
    pub(super) fn index_path(&self, args: &[Expr], n: usize) -> Option<String> {
        let mut path = match args.first()? {
            // Go's `$` is the frame's first slot.
            Expr::Dot => String::new(),
            Expr::Var(0) if self.program.flavor.is_go() => String::new(),
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
    pub(super) fn index_step<'v>(
        &self,
        value: &Value<'v>,
        index: &Value<'_>,
        span: Span,
        read: (&[Expr], usize),
    ) -> Result<Value<'v>> {
        if self.program.flavor.is_jinja() && !matches!(value, Value::Array(_)) {
            // A character of a text, as Python indexes it.
            return match (value, index) {
                (Value::Str(_) | Value::String(_), Value::Int(n)) => {
                    super::texts::character(value, *n)
                        .ok_or_else(|| not_jinja(span, "index", value))
                }
                _ => Err(not_jinja(span, "index", value)),
            };
        }
        Ok(match (value, index) {
            (Value::Array(items), Value::Int(n)) => {
                match usize::try_from(*n).ok().and_then(|n| items.get(n)) {
                    Some(item) => Value::from_json(item),
                    None => {
                        let error =
                            func_error(Func::Index, span, format!("index out of range: {n}"));
                        return Err(error.with_path(self.index_path(read.0, read.1)).into());
                    }
                }
            }
            (Value::Str(_) | Value::String(_), Value::Int(n)) => {
                let bytes = value.as_str().unwrap_or("").as_bytes();
                match usize::try_from(*n).ok().and_then(|n| bytes.get(n)) {
                    Some(b) => Value::Int(i64::from(*b)),
                    None => {
                        return Err(func_error(
                            Func::Index,
                            span,
                            format!("index out of range: {n}"),
                        ))
                    }
                }
            }
            (Value::Array(_) | Value::Str(_) | Value::String(_), other) => {
                return Err(func_error(
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
                        let suggestion =
                            closest(key, view.names()).map(|c| format!("did you mean \"{c}\"?"));
                        let path = self.index_path(read.0, read.1);
                        return Err(no_entry(span, key, suggestion, path));
                    }
                }
            }
            (Value::Object(_), other) => {
                return Err(func_error(
                    Func::Index,
                    span,
                    format!("value has type {}; should be string", other.go_type()),
                ))
            }
            (Value::Missing, _) => Value::Missing,
            (Value::Null, _) => return Err(func_error(Func::Index, span, "index of untyped nil")),
            (other, _) => {
                return Err(func_error(
                    Func::Index,
                    span,
                    format!("can't index item of type {}", other.go_type()),
                ))
            }
        })
    }

    pub(super) fn slice(
        &mut self,
        args: &'a [Expr],
        span: Span,
        dot: &Value<'a>,
    ) -> Result<Value<'a>> {
        let value = self.arg(args, 0, span, dot)?;
        let rest = args.get(1..).unwrap_or(&[]);
        if rest.len() > 3 {
            return Err(func_error(
                Func::Slice,
                span,
                format!("too many slice indexes: {}", rest.len()),
            ));
        }
        let mut indexes = [0usize; 3];
        for (n, expr) in rest.iter().enumerate() {
            let index = self.eval(expr, dot, false)?;
            let Value::Int(i) = index else {
                return Err(func_error(
                    Func::Slice,
                    span,
                    format!("cannot index slice/array with type {}", index.go_type()),
                ));
            };
            let Ok(i) = usize::try_from(i) else {
                return Err(func_error(
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
                return Err(func_error(
                    Func::Slice,
                    span,
                    format!("can't slice item of type {}", other.go_type()),
                ))
            }
        };
        if rest.len() == 3 && value.as_str().is_some() {
            return Err(func_error(
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
                return Err(func_error(
                    Func::Slice,
                    span,
                    format!("index out of range: {bound}"),
                ));
            }
        }
        if start > end {
            return Err(func_error(
                Func::Slice,
                span,
                format!("invalid slice index: {start} > {end}"),
            ));
        }
        if end > cap {
            return Err(func_error(
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
                None => Err(func_error(
                    Func::Slice,
                    span,
                    "the indexes cut a UTF-8 character in two",
                )),
            },
            Value::String(s) => match s.get(start..end) {
                Some(part) => self.built(Func::Slice, part.to_string(), span),
                None => Err(func_error(
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
                    return fail(
                        span,
                        format!(
                            "printf: the format must be a string, not {}",
                            first.kind_name()
                        ),
                    )
                }
            },
            None => return Err(internal(span)),
        },
        Func::Println => gofmt::sprintln(out, args),
        _ => gofmt::sprint(out, args),
    }
    Ok(())
}

//! Field lookup: paths read key by key from dot, a variable or the root,
//! with the error each flavor gives for a missing key, a null or a value
//! that is not a map.

use super::fail::{error, internal, no_entry};
use super::flavor::jinja::not_jinja;
use super::program::{Expr, Key, Span};
use super::render::{Renderer, Result};
use super::value::Value;
use crate::data;
use crate::diagnostics::{closest, TemplateError};
use crate::options::Strictness;

impl<'a> Renderer<'a> {
    /// The JSON a path reaches, when it reads keys that objects of the
    /// data have from dot, a variable or the root (most paths): followed in
    /// place, without making a value at each step. `None` for any other
    /// expression or path, which [`Renderer::eval`] reads in full.
    #[inline]
    pub(super) fn json_of(&self, expr: &Expr, dot: &Value<'a>) -> Option<&'a serde_json::Value> {
        let Expr::Path { base, keys, .. } = expr else {
            return None;
        };
        if self.messages.is_some() {
            // A message's keys read as a chat template reads them.
            return None;
        }
        json_path(self.path_base(base, dot)?, keys)
    }

    /// The value a path starts from when it starts from dot, a variable
    /// or the root (not from another expression's value).
    #[inline]
    pub(super) fn path_base<'s>(
        &'s self,
        base: &Expr,
        dot: &'s Value<'a>,
    ) -> Option<&'s Value<'a>> {
        match base {
            Expr::Dot => Some(dot),
            Expr::Var(slot) => self.vars.get(self.frame + *slot as usize),
            Expr::Root => Some(&self.root),
            _ => None,
        }
    }

    /// The variable `expr` reads, if it is one.
    #[inline]
    pub(super) fn var_of(&self, expr: &Expr) -> Option<&Value<'a>> {
        match expr {
            Expr::Var(slot) => self.vars.get(self.frame + *slot as usize),
            _ => None,
        }
    }

    /// A path ([`Expr::Path`]) read key by key, with what each step finds
    /// checked: missing keys, nulls, lists, host results, merged layers.
    #[inline(never)]
    pub(super) fn eval_path(
        &mut self,
        expr: &'a Expr,
        dot: &Value<'a>,
        test: bool,
    ) -> Result<Value<'a>> {
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
    pub(super) fn prefix(&self, span: Span, keys: &[Key], i: usize) -> &'a str {
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
    pub(super) fn key_path(
        &self,
        base: &Expr,
        keys: &[Key],
        span: Span,
        i: usize,
    ) -> Option<String> {
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
                Some(index) if self.program.flavor.is_handlebars() => {
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
    pub(super) fn field<'v>(
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

    /// [`Renderer::field`] of a key an object lacks, or of a value that is
    /// not an object of the data.
    #[inline(never)]
    pub(super) fn field_other<'v>(
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
            if self.missing_ok(test) {
                return Ok(Value::Missing);
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
                    if self.program.flavor.is_handlebars() {
                        return Err(self.hbs_field_error(value, key, i, path, span).into());
                    }
                    let suggestion = root_suggestion().or_else(|| {
                        closest(name, view.names()).map(|c| format!("did you mean \"{c}\"?"))
                    });
                    let path = self.key_path(base, keys, span, i);
                    Err(no_entry(span, name, suggestion, path))
                }
            },
            // Jinja2 fails on a key of a missing value: minijinja's to say.
            Value::Missing if self.program.flavor.is_jinja() => Err(not_jinja(span, "read", value)),
            Value::Missing => Ok(Value::Missing),
            Value::Json(json) => self.field_json(json, key, i, path, span, test),
            Value::Null => {
                if self.program.strictness == Strictness::Lenient {
                    return Ok(Value::Missing);
                }
                if self.program.flavor.is_handlebars() {
                    if self.missing_ok(test) {
                        return Ok(Value::Missing);
                    }
                    return Err(self.hbs_field_error(value, key, i, path, span).into());
                }
                let prefix = describe(self.prefix(span, keys, i));
                Err(
                    error(span, format!("{prefix} is null, so it has no key {name:?}"))
                        .suggest(root_suggestion().or_else(|| {
                            Some(format!(
                                "test it first: {{{{ if {prefix} }}}}…{{{{ end }}}}"
                            ))
                        }))
                        .with_path(self.key_path(base, keys, span, i))
                        .into(),
                )
            }
            // Handlebars reads an array's elements by index (`list.[0]`) and
            // its `length`, as handlebars.js does.
            Value::Array(items) if self.program.flavor.is_handlebars() => {
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
            other if self.program.flavor.is_handlebars() => {
                if self.missing_ok(test) {
                    return Ok(Value::Missing);
                }
                Err(self.hbs_field_error(other, key, i, path, span).into())
            }
            // Jinja: a string has no attributes (minijinja's undefined),
            // missing where a test reads it (`s[0].type == 'x'`).
            Value::Str(_) | Value::String(_)
                if self.program.flavor.is_jinja()
                    && self.missing_ok(test)
                    && !name.bytes().all(|b| b.is_ascii_digit()) =>
            {
                Ok(Value::Missing)
            }
            other => {
                let prefix = describe(self.prefix(span, keys, i));
                Err(error(
                    span,
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
    pub(super) fn hbs_field_error(
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
            Value::Object(view) => error(span, format!("{subject} has no key {name:?}")).suggest(
                closest(name, view.names())
                    .map(|c| format!("did you mean \"{joined}{c}\"?"))
                    .or_else(at_root),
            ),
            Value::Null => error(
                span,
                format!("{subject} is null, so it has no key {name:?}"),
            )
            .suggest(Some(format!(
                "test it first: {{{{#if {prefix}}}}}…{{{{/if}}}}"
            ))),
            Value::Array(items) if array_index(name).is_some() => error(
                span,
                format!(
                    "{subject} has {} element{}, so it has no index {name}",
                    items.len(),
                    if items.len() == 1 { "" } else { "s" }
                ),
            ),
            Value::Array(_) => error(
                span,
                format!("{subject} is a list, so it has no key {name:?}"),
            )
            .suggest(at_root().or_else(|| Some(format!("read an element by index: {joined}[0]")))),
            other => error(
                span,
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
    pub(super) fn field_json<'v>(
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
}

/// The JSON that `keys` reach from `from` when every step is a key that an
/// object of one layer has (most reads); `None` otherwise, and for no keys,
/// and the path is then read step by step ([`Renderer::eval_path`]).
#[inline]
pub(super) fn json_path<'a>(from: &Value<'a>, keys: &[Key]) -> Option<&'a serde_json::Value> {
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

/// The value of the data a path reads, through merged layers too (the
/// winning value of each key): for a source map, which needs where a
/// printed value is, not its value. `None` where the path leaves the data.
pub(super) fn data_leaf<'a>(from: &Value<'a>, keys: &[Key]) -> Option<&'a serde_json::Value> {
    let Value::Object(view) = from else {
        return None;
    };
    let (last, keys) = keys.split_last()?;
    let mut view = view.clone();
    for key in keys {
        match view.get(&key.name) {
            Some(next) => view = next,
            None => {
                let json = data::child(view.value(), &key.name)?;
                return data::child(json, &last.name);
            }
        }
    }
    match view.get(&last.name) {
        Some(leaf) => Some(leaf.value()),
        None => data::child(view.value(), &last.name),
    }
}

/// The array index a Handlebars key names: digits in JavaScript's canonical
/// form (`0`, `12`; not `01` or `-1`), as handlebars.js reads `list.[1]`.
pub(super) fn array_index(name: &str) -> Option<usize> {
    let canonical = !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_digit())
        && (name == "0" || !name.starts_with('0'));
    if canonical {
        name.parse().ok()
    } else {
        None
    }
}

/// An object of the data or of a host result.
pub(super) fn is_object(value: &Value<'_>) -> bool {
    match value {
        Value::Object(_) => true,
        Value::Json(json) => json.is_object(),
        _ => false,
    }
}

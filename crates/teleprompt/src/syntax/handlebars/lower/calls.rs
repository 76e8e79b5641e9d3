//! Calls and values: helpers (resolved at compile time, or a load error
//! naming the closest one), host functions checked against their
//! signatures, a helper's name used without its arguments, and the
//! expressions and paths that are their arguments.

use super::{helpers, pspan, simple_name, Lowerer, Result, Scope, BLOCK_HELPERS, VARIABLE_HELPERS};
use crate::diagnostics::{closest, TemplateError};
use crate::engine::flavor::handlebars::{Helper, MEDIA_TYPE};
use crate::engine::program::{Const, Expr as PExpr, Func, Key};
use crate::functions::ArgAt;
use crate::syntax::handlebars::ast::*;
use crate::syntax::{builtin_types, host_calls, Origin};

impl<'t> Lowerer<'t> {
    /// For `{{name}}` (no arguments) where `name` is a helper of the
    /// prompt's system that cannot run without arguments (a block helper,
    /// `get`, `role`, `json`, …): the error and help to give when the data
    /// has no key `name` (when it has one, the mustache prints it, as
    /// handlebars.js does for a name that is no helper). `None` when the
    /// name is read as usual: a block parameter or variable, not a helper
    /// of the origin (then it is the data's), a helper that runs without
    /// arguments (`history`, `doubleOpen`) or a host function.
    pub(super) fn bare_misuse(&self, name: &str, scope: &Scope) -> Option<(String, String)> {
        let in_scope = scope
            .params
            .iter()
            .chain(scope.variables.iter())
            .any(|(n, _)| n == name);
        if in_scope || !self.origin.has_helper(name) {
            return None;
        }
        let data = format!("the data has no key {name:?}");
        if BLOCK_HELPERS.contains(&name) {
            return Some((
                format!("{name} is a block helper, and {data}"),
                format!("write {{{{#{name} …}}}}…{{{{/{name}}}}}"),
            ));
        }
        if name == "get" {
            return Some((
                format!("get takes a variable's name, and {data}"),
                "write {{get \"x\"}}".to_string(),
            ));
        }
        let func = helpers().find(|(n, _)| *n == name).map(|(_, f)| f)?;
        let (min, _) = func.arity();
        let sk_equals = self.origin == Origin::SemanticKernel && func == Func::Hbs(Helper::Equals);
        if min == 0 || sk_equals || self.host_index(name).is_some() {
            return None;
        }
        Some((
            format!(
                "{name} takes {min} argument{}, got 0, and {data}",
                if min == 1 { "" } else { "s" }
            ),
            format!("give the data a key {name:?}, or call the helper: {{{{{name} …}}}}"),
        ))
    }

    pub(super) fn helper(&self, name: &str) -> Option<Func> {
        if let Some((_, func)) = helpers().find(|(n, _)| *n == name) {
            if self.origin.has_helper(name) {
                return Some(func);
            }
        }
        self.host_index(name)
            .map(|index| Func::Host(u16::try_from(index).unwrap_or(u16::MAX)))
    }

    pub(super) fn unknown_helper(&self, name: &str, span: &Span) -> TemplateError {
        let error = TemplateError::parse(
            Some(span.clone()),
            format!("there is no helper named {name:?}"),
        )
        .with_kind("unknown-helper");
        if self.found.borrow().is_full() {
            // Only counted: no suggestion to look for.
            return error;
        }
        let origin = self.origin;
        let known = helpers()
            .map(|(n, _)| n)
            .chain(BLOCK_HELPERS.iter().copied())
            .chain(VARIABLE_HELPERS.iter().copied())
            .chain(["log"])
            .filter(|n| origin.has_helper(n) && *n != MEDIA_TYPE)
            .chain(self.hosts.iter().map(|host| &*host.name));
        let suggestion = closest(name, known)
            .map(|c| format!("did you mean \"{c}\"?"))
            .or_else(|| {
                let teleprompt = helpers().any(|(n, _)| n == name)
                    || BLOCK_HELPERS.contains(&name)
                    || VARIABLE_HELPERS.contains(&name);
                teleprompt.then(|| {
                    format!(
                        "{name:?} is a helper of teleprompt's own prompts; this prompt is {}'s, \
                         whose Handlebars has no such helper",
                        origin.system()
                    )
                })
            });
        error.suggest(suggestion)
    }

    /// A call or a value. `top`: in a mustache, where a lone name that is
    /// not a helper is a path.
    pub(super) fn call(&self, call: &Call, scope: &Scope, top: bool) -> Result<PExpr> {
        let name = simple_name(&call.head).or_else(|| self.dotted_host(&call.head));
        if let Some(block) = name.filter(|n| BLOCK_HELPERS.contains(n) && self.origin.has_helper(n))
        {
            return Err(TemplateError::parse(
                Some(call.head.span()),
                format!("{block} is a block helper"),
            )
            .suggest(Some(format!("write {{{{#{block} …}}}}…{{{{/{block}}}}}"))));
        }
        if name == Some("get") && self.origin.has_helper("get") {
            return self.get(call, scope);
        }
        if name == Some("set") && self.origin.has_helper("set") {
            return Err(TemplateError::parse(
                Some(call.head.span()),
                "set prints nothing: it cannot be an argument",
            )
            .suggest(Some(
                "write it as a tag of its own: {{set name=\"x\" value=…}}".to_string(),
            )));
        }
        let func = name.and_then(|n| self.helper(n));
        let Some(func) = func else {
            if call.params.is_empty() && call.hash.is_empty() && top {
                return self.expr(&call.head, scope);
            }
            if let Some(name) = name {
                // Go on into its arguments for more errors.
                self.note(self.unknown_helper(name, &call.head.span()));
                for param in &call.params {
                    self.expr(param, scope)?;
                }
                for pair in &call.hash {
                    self.expr(&pair.value, scope)?;
                }
                return Ok(PExpr::Const(Const::Null));
            }
            return Err(match name {
                Some(name) => self.unknown_helper(name, &call.head.span()),
                None => TemplateError::parse(
                    Some(call.head.span()),
                    format!(
                        "{} is not a helper, so it takes no arguments",
                        self.text(&call.head.span())
                    ),
                ),
            });
        };
        let mut args = Vec::with_capacity(call.params.len() + 1);
        for param in &call.params {
            args.push(self.expr(param, scope)?);
        }
        if func == Func::Join {
            // Handlebars order `join list ", "`; the engine's is separator first.
            args.reverse();
        }
        let mut func = func;
        if func == Func::Hbs(Helper::Json) && self.origin == Origin::SemanticKernel {
            func = Func::Hbs(Helper::SkJson);
        }
        if func == Func::Hbs(Helper::Concat) && self.origin == Origin::SemanticKernel {
            func = Func::Hbs(Helper::SkConcat);
        }
        if func == Func::Hbs(Helper::Equals)
            && self.origin == Origin::SemanticKernel
            && args.len() < 2
            && call.hash.is_empty()
        {
            // Semantic Kernel .NET's `equals` is false with fewer than two
            // arguments (`KernelSystemHelpers`).
            return Ok(PExpr::Const(Const::Bool(false)));
        }
        if let (Func::Hbs(Helper::Json), [pair]) = (func, call.hash.as_slice()) {
            if pair.key == "indent" {
                // Dotprompt's `{{json value indent=2}}`.
                func = Func::Hbs(Helper::JsonIndent);
                args.push(self.expr(&pair.value, scope)?);
            }
        }
        if let Func::Host(index) = func {
            return self.host_call(index, call, args, scope);
        }
        if !call.hash.is_empty() && func != Func::Hbs(Helper::JsonIndent) {
            return Err(TemplateError::parse(
                call.hash.first().map(|pair| pair.span.clone()),
                format!("{} takes no key=value arguments", name.unwrap_or("?")),
            ));
        }
        let (min, max) = func.arity();
        if args.len() < min || max.is_some_and(|max| args.len() > max) {
            let want = match max {
                Some(max) if max == min => format!("{min}"),
                Some(max) => format!("{min} to {max}"),
                None => format!("at least {min}"),
            };
            self.note(
                TemplateError::parse(
                    Some(call.span.clone()),
                    format!(
                        "{} takes {want} argument{}, got {}",
                        name.unwrap_or("?"),
                        if want == "1" { "" } else { "s" },
                        args.len()
                    ),
                )
                .with_kind("wrong-arity"),
            );
            return Ok(PExpr::Const(Const::Null));
        }
        let wrong = builtin_types::check(
            func,
            name.unwrap_or(func.name()),
            &args,
            self.src,
            &call.span,
            |index| {
                // The engine's order: `join`'s separator first, `json`'s
                // indent after the value.
                let source = match (func, index) {
                    (Func::Join, 0) => 1,
                    (Func::Join, 1) => 0,
                    _ => index,
                };
                match call.params.get(source) {
                    Some(param) => builtin_types::Place {
                        span: Some(param.span()),
                        label: format!("argument {}", source + 1),
                    },
                    None => builtin_types::Place {
                        span: call.hash.first().map(|pair| pair.value.span()),
                        label: call.hash.first().map_or_else(
                            || format!("argument {}", index + 1),
                            |pair| pair.key.clone(),
                        ),
                    },
                }
            },
        );
        if !wrong.is_empty() {
            for error in wrong {
                self.note(error);
            }
            return Ok(PExpr::Const(Const::Null));
        }
        Ok(PExpr::Call {
            func,
            args: args.into_boxed_slice(),
            span: pspan(&call.span),
        })
    }

    /// A host function call: positional arguments, then the hash ones as
    /// a last `Dict` (the function takes them by name), checked against the
    /// function's signature.
    pub(super) fn host_call(
        &self,
        index: u16,
        call: &Call,
        mut args: Vec<PExpr>,
        scope: &Scope,
    ) -> Result<PExpr> {
        let mut hash = Vec::with_capacity(call.hash.len());
        for pair in &call.hash {
            hash.push(self.expr(&pair.value, scope)?);
        }
        if let Some(host) = self.hosts.get(usize::from(index)) {
            let named: Vec<(&str, &PExpr)> = call
                .hash
                .iter()
                .zip(&hash)
                .map(|(pair, value)| (pair.key.as_str(), value))
                .collect();
            let checked = host_calls::check(host, &args, &named, |at| {
                match at {
                    ArgAt::Positional(index) => call.params.get(index).map(Expr::span),
                    ArgAt::Named(index) => call.hash.get(index).map(|pair| pair.span.clone()),
                    ArgAt::Call => None,
                }
                .unwrap_or_else(|| call.span.clone())
            });
            if let Err(error) = checked {
                self.note(error);
                return Ok(PExpr::Const(Const::Null));
            }
        }
        if !hash.is_empty() {
            let mut pairs = Vec::with_capacity(hash.len() * 2);
            for (pair, value) in call.hash.iter().zip(hash) {
                pairs.push(PExpr::Const(Const::Str(pair.key.clone().into_boxed_str())));
                pairs.push(value);
            }
            args.push(PExpr::Call {
                func: Func::Dict,
                args: pairs.into_boxed_slice(),
                span: pspan(&call.span),
            });
        }
        Ok(PExpr::Call {
            func: Func::Host(index),
            args: args.into_boxed_slice(),
            span: pspan(&call.span),
        })
    }

    pub(super) fn expr(&self, expr: &Expr, scope: &Scope) -> Result<PExpr> {
        Ok(match expr {
            Expr::String(s, _) => PExpr::Const(Const::Str(s.clone().into_boxed_str())),
            Expr::Number(Number::Int(i), _) => PExpr::Const(Const::Int(*i)),
            Expr::Number(Number::Float(f), _) => PExpr::Const(Const::Float(*f)),
            Expr::Bool(b, _) => PExpr::Const(Const::Bool(*b)),
            Expr::Null(_) => PExpr::Const(Const::Null),
            Expr::Sub(call) => self.call(call, scope, false)?,
            Expr::Path(path) => self.path(path, scope)?,
        })
    }

    pub(super) fn path(&self, path: &Path, scope: &Scope) -> Result<PExpr> {
        let keys = |parts: &[Ident]| -> Box<[Key]> {
            parts
                .iter()
                .map(|ident| Key {
                    name: ident.name.clone().into_boxed_str(),
                    end: u32::try_from(ident.span.end).unwrap_or(u32::MAX),
                })
                .collect()
        };
        let (base, rest): (PExpr, &[Ident]) = if path.data {
            let Some((first, rest)) = path.parts.split_first() else {
                return Err(TemplateError::parse(
                    Some(path.span.clone()),
                    "@ needs a name: @index, @key, @first, @last or @root",
                ));
            };
            if path.parents > 0 {
                return Err(TemplateError::parse(
                    Some(path.span.clone()),
                    "@../ (data of an outer loop) is not supported",
                )
                .suggest(Some(
                    "name the outer loop's index: {{#each list as |item i|}}".to_string(),
                )));
            }
            let loop_slot = |offset: u32| -> Result<PExpr> {
                match scope.loops.last() {
                    Some(base) => Ok(PExpr::Var(base + offset)),
                    None => Err(TemplateError::parse(
                        Some(path.span.clone()),
                        format!("@{} is only defined inside {{{{#each}}}}", first.name),
                    )),
                }
            };
            let base = match first.name.as_str() {
                "root" => PExpr::Root,
                "key" => loop_slot(0)?,
                "index" => loop_slot(1)?,
                "first" => loop_slot(2)?,
                "last" => loop_slot(3)?,
                other => {
                    return Err(TemplateError::parse(
                        Some(path.span.clone()),
                        format!("there is no data variable @{other}"),
                    )
                    .suggest(
                        closest(other, ["root", "key", "index", "first", "last"])
                            .map(|c| format!("did you mean \"@{c}\"?")),
                    ))
                }
            };
            (base, rest)
        } else if path.parents > 0 {
            let depth = scope.contexts.len();
            let Some(slot) = depth
                .checked_sub(path.parents)
                .and_then(|i| scope.contexts.get(i))
            else {
                self.note(
                    TemplateError::parse(
                        Some(path.span.clone()),
                        format!(
                            "{} goes above the outermost context ({} level{} up, {depth} available)",
                            self.text(&path.span),
                            path.parents,
                            if path.parents == 1 { "" } else { "s" }
                        ),
                    )
                    .with_kind("above-root")
                    .suggest(Some("read from the root with @root.name".to_string())),
                );
                return Ok(PExpr::Const(Const::Null));
            };
            (PExpr::Var(*slot), &path.parts)
        } else if let Some((slot, rest)) = path.parts.split_first().and_then(|(first, rest)| {
            if path.explicit {
                return None;
            }
            scope
                .params
                .iter()
                .rev()
                .chain(scope.variables.iter())
                .find(|(name, _)| *name == first.name)
                .map(|(_, slot)| (*slot, rest))
        }) {
            (PExpr::Var(slot), rest)
        } else {
            (PExpr::Dot, &path.parts)
        };
        if rest.is_empty() {
            return Ok(base);
        }
        Ok(PExpr::Path {
            base: Box::new(base),
            keys: keys(rest),
            span: pspan(&path.span),
        })
    }
}

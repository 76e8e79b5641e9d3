//! Block helpers: `{{#if}}`, `{{#unless}}`, `{{#each}}`, `{{#with}}` and
//! the block helpers of the other systems (Semantic Kernel's, Forge's,
//! Dotprompt's), each lowered onto the engine's branches and loops.

use super::{pspan, simple_name, Lowerer, Result, Scope};
use crate::diagnostics::TemplateError;
use crate::engine::flavor::handlebars::Helper;
use crate::engine::program::{Const, Expr as PExpr, Func, Instr};
use crate::syntax::handlebars::ast::*;
use crate::syntax::{builtin_types, Origin};

impl<'t> Lowerer<'t> {
    pub(super) fn one_param<'b>(&self, block: &'b Block, name: &str) -> Result<&'b Expr> {
        if let Some(pair) = block.call.hash.first() {
            return Err(TemplateError::parse(
                Some(pair.span.clone()),
                format!("{{{{#{name}}}}} takes no key=value arguments"),
            ));
        }
        match block.call.params.as_slice() {
            [one] => Ok(one),
            _ => Err(TemplateError::parse(
                Some(block.open.clone()),
                format!(
                    "{{{{#{name}}}}} takes one argument, got {}",
                    block.call.params.len()
                ),
            )),
        }
    }

    /// The tested value of `{{#if value}}` / `{{#unless value}}`; with
    /// handlebars.js's `includeZero=flag`, the number 0 is true when the
    /// flag is.
    pub(super) fn condition(&self, block: &Block, helper: &str, scope: &Scope) -> Result<PExpr> {
        let mut include_zero = None;
        for pair in &block.call.hash {
            if pair.key == "includeZero" && include_zero.is_some() {
                return Err(TemplateError::parse(
                    Some(pair.span.clone()),
                    "includeZero= is given twice",
                ));
            }
            if pair.key != "includeZero" {
                return Err(TemplateError::parse(
                    Some(pair.span.clone()),
                    format!("{{{{#{helper}}}}} takes no {}= argument", pair.key),
                )
                .suggest(Some(
                    "its only key=value argument is includeZero=true".to_string(),
                )));
            }
            include_zero = Some(&pair.value);
        }
        let value = match block.call.params.as_slice() {
            [one] => self.expr(one, scope)?,
            _ => {
                return Err(TemplateError::parse(
                    Some(block.open.clone()),
                    format!(
                        "{{{{#{helper}}}}} takes one argument, got {}",
                        block.call.params.len()
                    ),
                ))
            }
        };
        let Some(flag) = include_zero else {
            return Ok(value);
        };
        Ok(PExpr::Call {
            func: Func::Hbs(Helper::IncludeZero),
            args: Box::new([value, self.expr(flag, scope)?]),
            span: pspan(&block.call.span),
        })
    }

    pub(super) fn block(
        &self,
        block: &Block,
        scope: &mut Scope,
        out: &mut Vec<Instr>,
    ) -> Result<()> {
        let name = simple_name(&block.call.head);
        let (body, inverse): (&[Node], &[Node]) = {
            let inverse = block.inverse.as_deref().unwrap_or(&[]);
            if block.inverted {
                (inverse, &block.body)
            } else {
                (&block.body, inverse)
            }
        };
        let allow_params = |max: usize| -> Result<()> {
            match block.params.get(max) {
                Some(extra) => Err(TemplateError::parse(
                    Some(extra.span.clone()),
                    format!("this block takes at most {max} block parameters"),
                )),
                None => Ok(()),
            }
        };
        match name {
            Some(helper @ ("if" | "unless")) => {
                allow_params(0)?;
                let cond = self.condition(block, helper, scope)?;
                out.push(self.branch(cond, helper == "if", body, inverse, scope)?);
            }
            Some("with") => {
                allow_params(1)?;
                let value = self.expr(self.one_param(block, "with")?, scope)?;
                let mark = scope.next;
                let parent = scope.alloc(1);
                out.push(Instr::Set {
                    slot: parent,
                    expr: PExpr::Dot,
                });
                let otherwise = self.scoped(inverse, scope)?;
                let bind = block.params.first().map(|param| {
                    let slot = scope.alloc(1);
                    (param.name.clone(), slot)
                });
                let saved = scope.params.len();
                scope.params.extend(bind.clone());
                scope.contexts.push(parent);
                let then = self.scoped(body, scope);
                scope.contexts.pop();
                scope.params.truncate(saved);
                scope.next = mark;
                out.push(Instr::With {
                    value,
                    bind: bind.map(|(_, slot)| slot),
                    then: then?,
                    otherwise,
                });
            }
            Some("each") => {
                allow_params(2)?;
                let value = self.expr(self.one_param(block, "each")?, scope)?;
                let mark = scope.next;
                let parent = scope.alloc(1);
                out.push(Instr::Set {
                    slot: parent,
                    expr: PExpr::Dot,
                });
                let otherwise = self.scoped(inverse, scope)?;
                let meta = scope.alloc(4);
                let saved = scope.params.len();
                let mut slots = [None, None];
                for (i, param) in block.params.iter().enumerate() {
                    let slot = scope.alloc(1);
                    if let Some(place) = slots.get_mut(i) {
                        *place = Some(slot);
                    }
                    scope.params.push((param.name.clone(), slot));
                }
                scope.contexts.push(parent);
                scope.loops.push(meta);
                let body = self.scoped(body, scope);
                scope.loops.pop();
                scope.contexts.pop();
                scope.params.truncate(saved);
                scope.next = mark;
                out.push(Instr::Range {
                    value,
                    key: slots[1],
                    elem: slots[0],
                    body: body?,
                    otherwise,
                    span: pspan(&block.open),
                    each: Some(meta),
                });
            }
            Some(helper @ ("ifEquals" | "unlessEquals")) if self.origin.has_helper(helper) => {
                allow_params(0)?;
                if let Some(pair) = block.call.hash.first() {
                    return Err(TemplateError::parse(
                        Some(pair.span.clone()),
                        format!("{{{{#{helper}}}}} takes no key=value arguments"),
                    ));
                }
                let [a, b] = block.call.params.as_slice() else {
                    return Err(TemplateError::parse(
                        Some(block.open.clone()),
                        format!(
                            "{{{{#{helper}}}}} takes 2 arguments, got {}",
                            block.call.params.len()
                        ),
                    ));
                };
                let cond = PExpr::Call {
                    func: Func::Hbs(Helper::Equals),
                    args: Box::new([self.expr(a, scope)?, self.expr(b, scope)?]),
                    span: pspan(&block.call.span),
                };
                out.push(self.branch(cond, helper == "ifEquals", body, inverse, scope)?);
            }
            // A budget section: `{{#section "docs" priority=2}}…{{/section}}`.
            Some("section")
                if self.origin == Origin::Teleprompt && !block.call.params.is_empty() =>
            {
                allow_params(0)?;
                if block.inverse.is_some() || block.inverted {
                    return Err(TemplateError::parse(
                        Some(block.open.clone()),
                        "{{#section}} has no {{else}}",
                    ));
                }
                let [name] = block.call.params.as_slice() else {
                    return Err(TemplateError::parse(
                        Some(block.open.clone()),
                        "{{#section}} takes one argument, the name, and settings as key=value: {{#section \"docs\" priority=2 max_tokens=1500 truncate=true}}",
                    ));
                };
                let mut args = vec![self.expr(name, scope)?];
                for pair in &block.call.hash {
                    args.push(PExpr::Const(Const::Str(pair.key.as_str().into())));
                    args.push(self.expr(&pair.value, scope)?);
                }
                let call = |func, args: Vec<PExpr>| Instr::Print {
                    expr: PExpr::Call {
                        func,
                        args: args.into_boxed_slice(),
                        span: pspan(&block.call.span),
                    },
                    span: pspan(&block.open),
                };
                out.push(call(Func::BudgetSection, args));
                let body = self.scoped(body, scope)?;
                out.extend(body.into_vec());
                out.push(call(Func::EndSection, Vec::new()));
            }
            Some("message") if self.origin.has_helper("message") => {
                allow_params(0)?;
                if block.inverse.is_some() || block.inverted {
                    return Err(TemplateError::parse(
                        Some(block.open.clone()),
                        "{{#message}} has no {{else}}",
                    ));
                }
                let role = match (block.call.params.as_slice(), block.call.hash.as_slice()) {
                    ([role], []) => role,
                    ([], [pair]) if pair.key == "role" => &pair.value,
                    _ => {
                        return Err(TemplateError::parse(
                            Some(block.open.clone()),
                            "{{#message}} takes one argument: role=\"system\"",
                        ))
                    }
                };
                let role_span = role.span();
                let role = self.expr(role, scope)?;
                let (func, args): (Func, Box<[PExpr]>) = match role {
                    role @ PExpr::Const(_) => (Func::Role, Box::new([role])),
                    // Semantic Kernel's own history loop, `{{#each
                    // messages}}{{#message role=role}}`: the data's role, one
                    // of those the host allows data to choose.
                    role if self.origin == Origin::SemanticKernel => (
                        Func::DataRole,
                        Box::new([role, PExpr::Const(Const::Str(self.data_roles.into()))]),
                    ),
                    _ => {
                        self.note(builtin_types::role_not_literal(role_span));
                        (Func::Role, Box::new([PExpr::Const(Const::Null)]))
                    }
                };
                out.push(Instr::Print {
                    expr: PExpr::Call {
                        func,
                        args,
                        span: pspan(&block.call.span),
                    },
                    span: pspan(&block.open),
                });
                let body = self.scoped(body, scope)?;
                out.extend(body.into_vec());
            }
            Some(helper) if self.helper(helper).is_some() || !block.call.params.is_empty() => {
                let known = self.helper(helper).is_some();
                if known {
                    return Err(TemplateError::parse(
                        Some(block.call.head.span()),
                        format!("{helper} is not a block helper"),
                    )
                    .suggest(Some(format!("write {{{{{helper} …}}}} without #"))));
                }
                // Go on into its arguments and blocks for more errors.
                self.note(self.unknown_helper(helper, &block.call.head.span()));
                for param in &block.call.params {
                    self.expr(param, scope)?;
                }
                self.scoped(body, scope)?;
                self.scoped(inverse, scope)?;
            }
            _ => {
                allow_params(0)?;
                if !block.call.params.is_empty() || !block.call.hash.is_empty() {
                    return Err(TemplateError::parse(
                        Some(block.call.span.clone()),
                        format!(
                            "{} is not a helper: it takes no arguments",
                            self.text(&block.call.head.span())
                        ),
                    ));
                }
                // An inverse section `{{^name}}…{{else}}…{{/name}}` is a
                // section with its parts swapped (as handlebars.js runs it).
                let value = match self.literal_key(&block.call.head) {
                    Some(key) => key,
                    None => self.expr(&block.call.head, scope)?,
                };
                let mark = scope.next;
                let parent = scope.alloc(1);
                out.push(Instr::Set {
                    slot: parent,
                    expr: PExpr::Dot,
                });
                let otherwise = self.scoped(inverse, scope)?;
                let meta = scope.alloc(4);
                scope.contexts.push(parent);
                scope.loops.push(meta);
                let body = self.scoped(body, scope);
                scope.loops.pop();
                scope.contexts.pop();
                scope.next = mark;
                out.push(Instr::Section {
                    value,
                    body: body?,
                    otherwise,
                    span: pspan(&block.open),
                    each: meta,
                });
            }
        }
        Ok(())
    }
}

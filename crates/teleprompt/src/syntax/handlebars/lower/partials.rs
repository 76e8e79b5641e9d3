//! Partials: the inline definition a name finds (`find_partial`),
//! `{{> name context key=value}}`, `{{#> name}}…{{/name}}`,
//! `{{> @partial-block}}`, and a partial block's content lowered in the
//! caller's scope.

use super::{pspan, Lowerer, Result, Scope};
use crate::diagnostics::{closest, TemplateError};
use crate::engine::flavor::handlebars::Helper;
use crate::engine::program::{Const, Expr as PExpr, Func, Instr, PartialContent};
use crate::syntax::handlebars::ast::*;

impl<'t> Lowerer<'t> {
    /// The template of the partial `name` as seen here: the nearest
    /// enclosing body's inline definition (its last one), else, inside a
    /// partial, the template's only inline definition of that name, else
    /// the partial file of that name.
    pub(super) fn find_partial(&self, partial: &Partial, scope: &Scope) -> Result<Option<usize>> {
        let name = partial.name.as_str();
        for defined in scope.partial_scopes.iter().rev() {
            if let Some((_, index)) = defined.iter().rev().find(|(n, _)| n == name) {
                return Ok(Some(*index));
            }
        }
        let file = || {
            self.files
                .partials
                .iter()
                .position(|file| file.name == name)
                .map(|index| self.inlines.len() + index)
        };
        if !scope.in_partial {
            return Ok(file());
        }
        match self.partials.get(name).map(Vec::as_slice) {
            Some([index]) => Ok(Some(*index)),
            Some([_, _, ..]) => Err(TemplateError::parse(
                Some(partial.name_span.clone()),
                format!(
                    "the inline partial {name:?} is defined more than once, and this partial does not define it: which one is meant depends on the caller"
                ),
            )
            .suggest(Some(format!(
                "give the definitions of {name:?} different names"
            )))),
            _ => Ok(file()),
        }
    }

    /// `{{> name context key=value}}`, `{{#> name}}…{{/name}}` and
    /// `{{> @partial-block}}`.
    pub(super) fn partial(
        &self,
        partial: &Partial,
        scope: &mut Scope,
        out: &mut Vec<Instr>,
    ) -> Result<()> {
        if partial.name == "@partial-block" {
            if partial.block.is_some() {
                return Err(TemplateError::parse(
                    Some(partial.name_span.clone()),
                    "@partial-block cannot open a partial block",
                )
                .suggest(Some("write {{> @partial-block}}".to_string())));
            }
            if let Some(extra) = partial
                .context
                .as_ref()
                .map(Expr::span)
                .or_else(|| partial.hash.first().map(|p| p.span.clone()))
            {
                return Err(TemplateError::parse(
                    Some(extra),
                    "{{> @partial-block}} takes no arguments: the block runs with the current context",
                ));
            }
            out.push(Instr::PartialBlock {
                span: pspan(&partial.span),
            });
            return Ok(());
        }
        let mut arg = match &partial.context {
            Some(context) => self.expr(context, scope)?,
            None => PExpr::Dot,
        };
        if !partial.hash.is_empty() {
            // `{{> card name="x"}}`: the partial runs with its
            // context extended by the keys (handlebars.js).
            let mut args = Vec::with_capacity(1 + 2 * partial.hash.len());
            args.push(arg);
            for pair in &partial.hash {
                args.push(PExpr::Const(Const::Str(pair.key.clone().into_boxed_str())));
                args.push(self.expr(&pair.value, scope)?);
            }
            arg = PExpr::Call {
                func: Func::Hbs(Helper::PartialContext),
                args: args.into_boxed_slice(),
                span: pspan(&partial.span),
            };
        }
        if let Some(dynamic) = &partial.dynamic {
            let block = match &partial.block {
                Some(block) => Some(Box::new(self.content(block, scope)?)),
                None => None,
            };
            out.push(Instr::CallNamed {
                name: self.expr(dynamic, scope)?,
                arg,
                span: pspan(&partial.span),
                block,
            });
            return Ok(());
        }
        let index = self.find_partial(partial, scope)?;
        match (index, &partial.block) {
            (Some(index), block) => {
                let block = match block {
                    Some(block) => Some(Box::new(self.content(block, scope)?)),
                    None => None,
                };
                out.push(Instr::Call {
                    template: u32::try_from(index).unwrap_or(u32::MAX),
                    arg: Some(arg),
                    span: pspan(&partial.span),
                    block,
                });
            }
            // A partial block whose partial does not exist renders its
            // content (handlebars.js's failover), with the context given.
            (None, Some(block)) if partial.context.is_none() && partial.hash.is_empty() => {
                let body = self.scoped(block, scope)?;
                out.extend(body.into_vec());
            }
            (None, Some(block)) => {
                let mark = scope.next;
                let parent = scope.alloc(1);
                out.push(Instr::Set {
                    slot: parent,
                    expr: PExpr::Dot,
                });
                scope.contexts.push(parent);
                let then = self.scoped(block, scope);
                scope.contexts.pop();
                scope.next = mark;
                out.push(Instr::With {
                    value: arg,
                    bind: None,
                    then: then?,
                    otherwise: Box::new([]),
                });
            }
            (None, None) if self.partials.contains_key(partial.name.as_str()) => {
                return Err(TemplateError::parse(
                    Some(partial.name_span.clone()),
                    format!(
                        "the inline partial {:?} is defined inside a block that does not hold this call",
                        partial.name
                    ),
                )
                .suggest(Some(
                    "an inline partial is seen only in the body that defines it: move the definition out of its block".to_string(),
                )));
            }
            (None, None) => {
                self.note(TemplateError::parse(
                    Some(partial.name_span.clone()),
                    format!("there is no partial named {:?}", partial.name),
                )
                .with_kind("unresolved-include")
                .suggest(
                    closest(
                        &partial.name,
                        self.partials
                            .keys()
                            .copied()
                            .chain(self.files.partials.iter().map(|file| file.name.as_str())),
                    )
                    .map(|c| format!("did you mean \"{c}\"?"))
                    .or_else(|| {
                        let name = &partial.name;
                        let file = match self.files.misses.get(name) {
                            Some(misses) => format!(
                                "put it in a file beside the prompt ({misses} in the include root)"
                            ),
                            None => format!(
                                "load the prompt from a file with {name}.hbs or _{name}.prompt beside it"
                            ),
                        };
                        Some(format!(
                            "define it in this template with {{{{#*inline \"{name}\"}}}}…{{{{/inline}}}}, or {file}"
                        ))
                    }),
                ));
            }
        }
        Ok(())
    }

    /// A partial block's content, lowered in the caller's scope. Its `../`
    /// reads levels of its own (handlebars.js's context stack when the
    /// content runs): the caller's contexts, and one more, the caller's dot,
    /// which the render fills when the content runs with another dot.
    pub(super) fn content(&self, block: &[Node], scope: &mut Scope) -> Result<PartialContent> {
        let mut reads_parent = false;
        super::super::walk(block, &mut |expr| {
            reads_parent |= matches!(expr, Expr::Path(path) if path.parents > 0);
        });
        if !reads_parent {
            return Ok(PartialContent {
                body: self.scoped(block, scope)?,
                levels: None,
            });
        }
        let outer: Box<[u32]> = scope.contexts.iter().rev().copied().collect();
        let count = u32::try_from(outer.len()).unwrap_or(u32::MAX - 1);
        let mark = scope.next;
        let first = scope.alloc(count + 1);
        let levels = (0..=count).rev().map(|i| first + i).collect();
        let callers = std::mem::replace(&mut scope.contexts, levels);
        let body = self.scoped(block, scope);
        scope.contexts = callers;
        scope.next = mark;
        Ok(PartialContent {
            body: body?,
            levels: Some((first, outer)),
        })
    }
}

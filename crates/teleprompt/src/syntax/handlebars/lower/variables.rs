//! Semantic Kernel's variables: `{{set}}` writes the slot reserved for a
//! name, `{{get}}` reads it (or else the root data's key).

use super::{pspan, Lowerer, Result, Scope};
use crate::diagnostics::TemplateError;
use crate::engine::program::{Expr as PExpr, Instr, Key};
use crate::syntax::handlebars::ast::*;

impl<'t> Lowerer<'t> {
    /// Semantic Kernel's `{{set name="x" value=v}}` / `{{set "x" v}}`: the
    /// value goes into the slot reserved for `x`; from here on `{{x}}`
    /// and `{{get "x"}}` read it.
    pub(super) fn set(&self, call: &Call, scope: &mut Scope, out: &mut Vec<Instr>) -> Result<()> {
        let usage = || {
            TemplateError::parse(
                Some(call.span.clone()),
                format!(
                    "set takes a name and a value, got {} argument{}",
                    call.params.len() + call.hash.len(),
                    if call.params.len() + call.hash.len() == 1 {
                        ""
                    } else {
                        "s"
                    }
                ),
            )
            .suggest(Some(
                "write {{set name=\"x\" value=…}} or {{set \"x\" …}}".to_string(),
            ))
        };
        if let Some(pair) = call
            .hash
            .iter()
            .find(|pair| pair.key != "name" && pair.key != "value")
        {
            return Err(TemplateError::parse(
                Some(pair.span.clone()),
                format!("set takes name= and value=, not {}=", pair.key),
            ));
        }
        let (name, value) = match (call.params.as_slice(), call.hash.as_slice()) {
            ([name, value], []) => (name, value),
            ([], [_, _]) => {
                let find = |key: &str| call.hash.iter().find(|p| p.key == key);
                match (find("name"), find("value")) {
                    (Some(name), Some(value)) => (&name.value, &value.value),
                    _ => return Err(usage()),
                }
            }
            _ => return Err(usage()),
        };
        let Expr::String(name, _) = name else {
            return Err(TemplateError::parse(
                Some(name.span()),
                "set needs the variable's name as a string literal",
            )
            .suggest(Some("write {{set name=\"x\" value=…}}".to_string())));
        };
        let value = self.expr(value, scope)?;
        let Some(&(_, slot)) = scope.reserved.iter().find(|(n, _)| n == name) else {
            return Err(TemplateError::parse(
                Some(call.span.clone()),
                "internal error: set outside its template",
            ));
        };
        if !scope.variables.iter().any(|(n, _)| n == name) {
            scope.variables.push((name.clone(), slot));
        }
        out.push(Instr::Set { slot, expr: value });
        Ok(())
    }

    /// Semantic Kernel's `{{get "x"}}`, `{{get name="x"}}`, `{{get "x"
    /// "prop"}}` and `{{get "x.prop"}}`: the variable `set` gave, or else
    /// the key of the root data.
    pub(super) fn get(&self, call: &Call, scope: &Scope) -> Result<PExpr> {
        let (name, prop) = match (call.params.as_slice(), call.hash.as_slice()) {
            ([name], []) => (name, None),
            ([name, prop], []) => (name, Some(prop)),
            ([], [pair]) if pair.key == "name" => (&pair.value, None),
            _ => {
                return Err(TemplateError::parse(
                    Some(call.span.clone()),
                    "get takes a variable's name: {{get \"x\"}}, {{get name=\"x\"}} or {{get \"x\" \"property\"}}",
                ))
            }
        };
        fn literal(expr: &Expr) -> Result<(&str, usize)> {
            match expr {
                Expr::String(text, span) => Ok((text.as_str(), span.end)),
                other => Err(TemplateError::parse(
                    Some(other.span()),
                    "get needs the variable's name as a string literal",
                )),
            }
        }
        let (name, end) = literal(name)?;
        let mut parts: Vec<(&str, usize)> = name.split('.').map(|part| (part, end)).collect();
        if let Some(prop) = prop {
            parts.push(literal(prop)?);
        }
        let (first, rest) = match parts.split_first() {
            Some((first, rest)) => (first.0, rest),
            None => (name, &[][..]),
        };
        let (base, keys) = match scope.variables.iter().find(|(n, _)| n == first) {
            Some(&(_, slot)) => (PExpr::Var(slot), rest),
            None => (PExpr::Root, &parts[..]),
        };
        if keys.is_empty() {
            return Ok(base);
        }
        Ok(PExpr::Path {
            base: Box::new(base),
            keys: keys
                .iter()
                .map(|(part, end)| Key {
                    name: (*part).into(),
                    end: u32::try_from(*end).unwrap_or(u32::MAX),
                })
                .collect(),
            span: pspan(&call.span),
        })
    }
}

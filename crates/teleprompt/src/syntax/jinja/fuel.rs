//! Whether a template needs fuel (`max_steps`) to be bounded.
//!
//! minijinja counts every instruction against its fuel, which costs a few
//! percent of every render. A template needs it only where it can run
//! longer than its text and its data: loops over `range`, over lists it
//! built, nested loops over the same list, macros, recursion, other files.
//! A template whose loops each walk a part of the data once runs each of
//! its instructions at most once per item of the data it walks, as the
//! data is a tree: no count is needed to stop it.
//!
//! The rule, checked on the program minijinja runs (after the dialect's
//! rewriting and the bound checks):
//!
//! - no macro, call block, block, include, import or extends;
//! - every `for` walks a path of the data (`a.b[0].c`, optionally through
//!   `|items`, `|dictsort`, `|reverse`, `|sort`, `|list`, `|unique`,
//!   `.items()`, `.keys()` or `.values()`) that starts at a name the
//!   template never assigns (`set`, `with`), and for a loop inside another
//!   loop, at the innermost enclosing loop's own variable (`for t in d.tags`
//!   inside `for d in documents`);
//! - no `recursive` loop.
//!
//! Anything else keeps the fuel.

use std::collections::HashSet;

use minijinja::machinery::ast;

/// True unless the template is bounded by its text and data alone.
pub(super) fn needed(template: &ast::Stmt<'_>) -> bool {
    let mut assigned = HashSet::new();
    if !collect_assigned(std::slice::from_ref(template), &mut assigned) {
        return true;
    }
    !bounded(std::slice::from_ref(template), &assigned, None)
}

/// Collects the names `set` and `with` assign; false where a statement
/// needs fuel whatever else holds (macros, other files, blocks).
fn collect_assigned<'a>(stmts: &[ast::Stmt<'a>], assigned: &mut HashSet<&'a str>) -> bool {
    stmts.iter().all(|stmt| match stmt {
        ast::Stmt::Template(template) => collect_assigned(&template.children, assigned),
        ast::Stmt::EmitExpr(_)
        | ast::Stmt::EmitRaw(_)
        | ast::Stmt::Continue(_)
        | ast::Stmt::Break(_)
        | ast::Stmt::Do(_) => true,
        ast::Stmt::ForLoop(for_loop) => {
            !for_loop.recursive
                && collect_assigned(&for_loop.body, assigned)
                && collect_assigned(&for_loop.else_body, assigned)
        }
        ast::Stmt::IfCond(cond) => {
            collect_assigned(&cond.true_body, assigned)
                && collect_assigned(&cond.false_body, assigned)
        }
        ast::Stmt::WithBlock(with) => {
            for (target, _) in &with.assignments {
                names(target, assigned);
            }
            collect_assigned(&with.body, assigned)
        }
        ast::Stmt::Set(set) => {
            names(&set.target, assigned);
            true
        }
        ast::Stmt::SetBlock(set) => {
            names(&set.target, assigned);
            collect_assigned(&set.body, assigned)
        }
        ast::Stmt::AutoEscape(block) => collect_assigned(&block.body, assigned),
        ast::Stmt::FilterBlock(block) => collect_assigned(&block.body, assigned),
        ast::Stmt::Block(_)
        | ast::Stmt::Import(_)
        | ast::Stmt::FromImport(_)
        | ast::Stmt::Extends(_)
        | ast::Stmt::Include(_)
        | ast::Stmt::Macro(_)
        | ast::Stmt::CallBlock(_) => false,
    })
}

/// The names an assignment target binds (`x`, `a, b`; not `ns.x`).
fn names<'a>(target: &ast::Expr<'a>, into: &mut HashSet<&'a str>) {
    match target {
        ast::Expr::Var(var) => {
            into.insert(var.id);
        }
        ast::Expr::Tuple(tuple) => tuple.items.iter().for_each(|item| names(item, into)),
        ast::Expr::List(list) => list.items.iter().for_each(|item| names(item, into)),
        _ => {}
    }
}

/// Whether every loop in `stmts` walks the data as the rule says.
/// `inner`: the variables of the innermost enclosing loop, if any.
fn bounded(
    stmts: &[ast::Stmt<'_>],
    assigned: &HashSet<&str>,
    inner: Option<&HashSet<&str>>,
) -> bool {
    stmts.iter().all(|stmt| match stmt {
        ast::Stmt::Template(template) => bounded(&template.children, assigned, inner),
        ast::Stmt::ForLoop(for_loop) => {
            let Some(root) = data_path_root(&for_loop.iter) else {
                return false;
            };
            let allowed = match inner {
                Some(variables) => variables.contains(root),
                None => true,
            };
            if !allowed || assigned.contains(root) || root == "loop" {
                return false;
            }
            let mut variables = HashSet::new();
            names(&for_loop.target, &mut variables);
            bounded(&for_loop.body, assigned, Some(&variables))
                && bounded(&for_loop.else_body, assigned, inner)
        }
        ast::Stmt::IfCond(cond) => {
            bounded(&cond.true_body, assigned, inner) && bounded(&cond.false_body, assigned, inner)
        }
        ast::Stmt::WithBlock(with) => bounded(&with.body, assigned, inner),
        ast::Stmt::SetBlock(set) => bounded(&set.body, assigned, inner),
        ast::Stmt::AutoEscape(block) => bounded(&block.body, assigned, inner),
        ast::Stmt::FilterBlock(block) => bounded(&block.body, assigned, inner),
        _ => true,
    })
}

/// Filters that give at most as many items as they are given.
const WALKING_FILTERS: [&str; 6] = ["items", "dictsort", "reverse", "sort", "list", "unique"];
/// Methods that list a mapping's items.
const WALKING_METHODS: [&str; 3] = ["items", "keys", "values"];

/// The name a path of the data starts at (`documents` of
/// `documents[0].tags|reverse`), or `None` for any other expression.
fn data_path_root<'a>(expr: &ast::Expr<'a>) -> Option<&'a str> {
    match expr {
        ast::Expr::Var(var) => Some(var.id),
        ast::Expr::GetAttr(attr) => data_path_root(&attr.expr),
        ast::Expr::GetItem(item) => match &item.subscript_expr {
            ast::Expr::Const(_) => data_path_root(&item.expr),
            _ => None,
        },
        ast::Expr::Filter(filter) if WALKING_FILTERS.contains(&filter.name) => {
            let constant_args = filter.args.iter().all(|arg| {
                matches!(
                    arg,
                    ast::CallArg::Pos(ast::Expr::Const(_))
                        | ast::CallArg::Kwarg(_, ast::Expr::Const(_))
                )
            });
            constant_args.then_some(())?;
            data_path_root(filter.expr.as_ref()?)
        }
        ast::Expr::Call(call) if call.args.is_empty() => match &call.expr {
            ast::Expr::GetAttr(method) if WALKING_METHODS.contains(&method.name) => {
                data_path_root(&method.expr)
            }
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(source: &str) -> bool {
        let syntax = minijinja::syntax::SyntaxConfig::default();
        let ast = minijinja::machinery::parse(source, "t", syntax).expect("parses");
        needed(&ast)
    }

    #[test]
    fn loops_that_walk_the_data_need_no_fuel() {
        for source in [
            "Hello {{ name }}",
            "{% for d in documents %}{{ d.title }}{% for t in d.tags %}{{ t }}{% endfor %}{% endfor %}",
            "{% for m in messages %}{% if m.role == 'user' %}{{ m.content }}{% endif %}{% endfor %}",
            "{% for k, v in user.prefs.items() %}{{ k }}{% for x in v %}{{ x }}{% endfor %}{% endfor %}",
            "{% for k, v in data|dictsort %}{{ k }}{% endfor %}{% for d in docs|reverse %}{% endfor %}",
            "{% for c in issue['title'] %}{{ c }}{% endfor %}",
            "{% set ns = namespace(n=0) %}{% for x in xs %}{% set ns.n = ns.n + 1 %}{% endfor %}",
        ] {
            assert!(!needs(source), "{source}");
        }
    }

    #[test]
    fn anything_that_can_run_longer_keeps_fuel() {
        for source in [
            "{% for i in range(10) %}{% endfor %}",
            "{% for a in xs %}{% for b in xs %}{% endfor %}{% endfor %}",
            "{% for a in xs %}{% for b in a.ys %}{% for c in a.zs %}{% endfor %}{% endfor %}{% endfor %}",
            "{% set xs = ys + ys %}{% for x in xs %}{% endfor %}",
            "{% for a in xs %}{% set a = xs %}{% for b in a %}{% endfor %}{% endfor %}",
            "{% for x in xs recursive %}{{ loop(x.children) }}{% endfor %}",
            "{% macro f() %}{% endmacro %}{{ f() }}",
            "{% for x in xs + xs %}{% endfor %}",
            "{% for x in f() %}{% endfor %}",
            "{% for x in xs|batch(2) %}{% endfor %}",
            "{% for x in xs[i] %}{% endfor %}",
            "{% include 'other' %}",
            "{% for x in loop %}{% endfor %}",
            "{% with ys = xs %}{% for y in ys %}{% endfor %}{% endwith %}",
        ] {
            assert!(needs(source), "{source}");
        }
    }
}

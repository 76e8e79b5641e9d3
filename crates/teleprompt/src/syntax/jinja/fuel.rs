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
//! - every `for` walks a path of the data (`a.b[0].c`, `a[1:]`, optionally
//!   through `|items`, `|dictsort`, `|reverse`, `|sort`, `|list`,
//!   `|unique`, `.items()`, `.keys()` or `.values()`) that starts at a name
//!   the template assigns (`set`, `with`) nothing but such paths or
//!   constants (`set messages = messages[1:]`, `set tools = none`, as chat
//!   templates do); for a loop inside another loop, the path starts at the
//!   innermost enclosing loop's own variable (`for t in d.tags` inside
//!   `for d in documents`), or at a name that loop's body alone assigns
//!   paths from it (`set call = message.tool_calls[0].function`);
//! - no `recursive` loop;
//! - inside a loop, `in` searches a constant or a part of the loop's own
//!   element (`'tool_calls' in message`), not a list from outside it
//!   (`x in xs` inside `for x in xs` is quadratic: minijinja charges the
//!   items it visits to the fuel, and only there).
//!
//! Anything else keeps the fuel. (The other work an instruction may do —
//! a filter walking a list, a method or a comparison reading a long text —
//! is counted by teleprompt's filters and the data's trees: `work`.)

use std::collections::{HashMap, HashSet};

use minijinja::machinery::ast;

/// True unless the template is bounded by its text and data alone.
/// `searches`: whether `in` inside a loop counts (minijinja charges what
/// it searches only with fuel; the engine, on the direct path, counts it
/// itself, so the direct path asks without it).
pub(super) fn needed(template: &ast::Stmt<'_>, searches: bool) -> bool {
    let template = std::slice::from_ref(template);
    let mut assignments = Assignments::new();
    if !collect_assigned(template, &mut assignments, true) {
        return true;
    }
    let names = Names {
        not_data: not_data(&assignments),
        assignments,
        searches,
    };
    !bounded(template, &names, None)
}

/// What an assignment puts in a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held<'a> {
    /// A path of the data from this name.
    Path(&'a str),
    /// A constant of the template's text.
    Constant,
    /// Anything else.
    Other,
}

/// The names `set` and `with` assign, with what each assignment holds.
type Assignments<'a> = HashMap<&'a str, Vec<Held<'a>>>;

/// What the loops' rule needs to know of the assigned names.
struct Names<'a> {
    assignments: Assignments<'a>,
    /// The assigned names that may hold something other than the data.
    not_data: HashSet<&'a str>,
    /// Whether `in` on a list from outside a loop needs fuel.
    searches: bool,
}

/// The assigned names that may hold something other than the data or a
/// constant: one of their values is something else, or a path from such
/// a name.
fn not_data<'a>(assignments: &Assignments<'a>) -> HashSet<&'a str> {
    // The names assigned paths from each name, and the names that hold
    // something else outright; then what the latter reach through the
    // former. Linear in the assignments: a chain of 20,000 `set` names,
    // each a path from the one before, took a pass per link.
    let mut from: HashMap<&'a str, Vec<&'a str>> = HashMap::new();
    let mut pending: Vec<&'a str> = Vec::new();
    for (name, held) in assignments {
        for held in held {
            match held {
                Held::Path(root) => from.entry(root).or_default().push(name),
                Held::Constant => {}
                Held::Other => pending.push(name),
            }
        }
    }
    let mut not_data: HashSet<&str> = HashSet::new();
    while let Some(name) = pending.pop() {
        if not_data.insert(name) {
            pending.extend(from.get(name).into_iter().flatten().copied());
        }
    }
    not_data
}

/// Notes what `target` is assigned (`value`: `None` for a block's text).
fn assign<'a>(target: &ast::Expr<'a>, value: Option<&ast::Expr<'a>>, into: &mut Assignments<'a>) {
    let mut bound = HashSet::new();
    bound_names(target, &mut bound);
    // A single name may hold a path of the data or a constant; names
    // unpacked from a value, or a block's text, hold something else.
    let held = match (target, value) {
        (ast::Expr::Var(_), Some(value)) => match data_path_root(value) {
            Some(root) => Held::Path(root),
            None if is_constant(value) => Held::Constant,
            None => Held::Other,
        },
        _ => Held::Other,
    };
    for name in bound {
        into.entry(name).or_default().push(held);
    }
}

/// Collects what `set` and `with` assign in `stmts` (and in nested loops
/// when `nested`); false where a statement needs fuel whatever else holds
/// (macros, other files, blocks, recursive loops).
fn collect_assigned<'a>(
    stmts: &[ast::Stmt<'a>],
    assigned: &mut Assignments<'a>,
    nested: bool,
) -> bool {
    stmts.iter().all(|stmt| match stmt {
        ast::Stmt::Template(template) => collect_assigned(&template.children, assigned, nested),
        ast::Stmt::EmitExpr(_)
        | ast::Stmt::EmitRaw(_)
        | ast::Stmt::Continue(_)
        | ast::Stmt::Break(_)
        | ast::Stmt::Do(_) => true,
        ast::Stmt::ForLoop(for_loop) if nested => {
            !for_loop.recursive
                && collect_assigned(&for_loop.body, assigned, nested)
                && collect_assigned(&for_loop.else_body, assigned, nested)
        }
        ast::Stmt::ForLoop(for_loop) => !for_loop.recursive,
        ast::Stmt::IfCond(cond) => {
            collect_assigned(&cond.true_body, assigned, nested)
                && collect_assigned(&cond.false_body, assigned, nested)
        }
        ast::Stmt::WithBlock(with) => {
            for (target, value) in &with.assignments {
                assign(target, Some(value), assigned);
            }
            collect_assigned(&with.body, assigned, nested)
        }
        ast::Stmt::Set(set) => {
            assign(&set.target, Some(&set.expr), assigned);
            true
        }
        ast::Stmt::SetBlock(set) => {
            assign(&set.target, None, assigned);
            collect_assigned(&set.body, assigned, nested)
        }
        ast::Stmt::AutoEscape(block) => collect_assigned(&block.body, assigned, nested),
        ast::Stmt::FilterBlock(block) => collect_assigned(&block.body, assigned, nested),
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
fn bound_names<'a>(target: &ast::Expr<'a>, into: &mut HashSet<&'a str>) {
    match target {
        ast::Expr::Var(var) => {
            into.insert(var.id);
        }
        ast::Expr::Tuple(tuple) => tuple.items.iter().for_each(|item| bound_names(item, into)),
        ast::Expr::List(list) => list.items.iter().for_each(|item| bound_names(item, into)),
        _ => {}
    }
}

/// The names that hold a part of one loop pass's element: the loop's
/// variables (when nothing assigns them), and names assigned only in the
/// loop's own body (not in a nested loop, nowhere else) and only paths
/// from those (`set call = message.tool_calls[0].function`).
fn element_names<'a>(for_loop: &ast::ForLoop<'a>, names: &Names<'a>) -> HashSet<&'a str> {
    let mut element = HashSet::new();
    bound_names(&for_loop.target, &mut element);
    element.retain(|name| !names.assignments.contains_key(name));
    let mut local = Assignments::new();
    collect_assigned(&for_loop.body, &mut local, false);
    loop {
        let before = element.len();
        for (name, held) in &local {
            let only_here = names.assignments.get(name).map(Vec::len) == Some(held.len());
            let from_element = held.iter().all(|held| match held {
                Held::Path(root) => element.contains(root),
                Held::Constant | Held::Other => false,
            });
            if only_here && from_element {
                element.insert(name);
            }
        }
        if element.len() == before {
            return element;
        }
    }
}

/// Whether every loop in `stmts` walks the data as the rule says.
/// `element`: the names holding a part of the innermost enclosing loop's
/// element, inside a loop.
fn bounded(stmts: &[ast::Stmt<'_>], names: &Names<'_>, element: Option<&HashSet<&str>>) -> bool {
    stmts.iter().all(|stmt| match stmt {
        ast::Stmt::Template(template) => bounded(&template.children, names, element),
        ast::Stmt::ForLoop(for_loop) => {
            let Some(root) = data_path_root(&for_loop.iter) else {
                return false;
            };
            // Inside a loop: a part of the innermost loop's element.
            // Outside: the data, or a name holding a path of it.
            let allowed = match element {
                Some(element) => element.contains(root),
                None => !names.not_data.contains(root),
            };
            if !allowed || root == "loop" {
                return false;
            }
            let inner = element_names(for_loop, names);
            !(names.searches && searches_outside(&for_loop.body, &inner))
                && bounded(&for_loop.body, names, Some(&inner))
                && bounded(&for_loop.else_body, names, element)
        }
        ast::Stmt::IfCond(cond) => {
            bounded(&cond.true_body, names, element) && bounded(&cond.false_body, names, element)
        }
        ast::Stmt::WithBlock(with) => bounded(&with.body, names, element),
        ast::Stmt::SetBlock(set) => bounded(&set.body, names, element),
        ast::Stmt::AutoEscape(block) => bounded(&block.body, names, element),
        ast::Stmt::FilterBlock(block) => bounded(&block.body, names, element),
        _ => true,
    })
}

/// Whether a statement of a loop's body (not of a loop nested in it,
/// which is checked with its own element) uses `in` on anything but a
/// constant or a part of the loop's `element`.
fn searches_outside(stmts: &[ast::Stmt<'_>], element: &HashSet<&str>) -> bool {
    let expr = |expr: &ast::Expr<'_>| expr_searches_outside(expr, element);
    stmts.iter().any(|stmt| match stmt {
        ast::Stmt::Template(template) => searches_outside(&template.children, element),
        ast::Stmt::EmitExpr(emit) => expr(&emit.expr),
        ast::Stmt::ForLoop(for_loop) => {
            expr(&for_loop.iter) || for_loop.filter_expr.as_ref().is_some_and(expr)
        }
        ast::Stmt::IfCond(cond) => {
            expr(&cond.expr)
                || searches_outside(&cond.true_body, element)
                || searches_outside(&cond.false_body, element)
        }
        ast::Stmt::WithBlock(with) => {
            with.assignments.iter().any(|(_, value)| expr(value))
                || searches_outside(&with.body, element)
        }
        ast::Stmt::Set(set) => expr(&set.expr),
        ast::Stmt::SetBlock(set) => {
            set.filter.as_ref().is_some_and(expr) || searches_outside(&set.body, element)
        }
        ast::Stmt::AutoEscape(block) => searches_outside(&block.body, element),
        ast::Stmt::FilterBlock(block) => {
            expr(&block.filter) || searches_outside(&block.body, element)
        }
        ast::Stmt::Do(call) => {
            expr(&call.call.expr) || call.call.args.iter().any(|arg| arg_searches(arg, element))
        }
        _ => false,
    })
}

fn arg_searches(arg: &ast::CallArg<'_>, element: &HashSet<&str>) -> bool {
    match arg {
        ast::CallArg::Pos(value)
        | ast::CallArg::Kwarg(_, value)
        | ast::CallArg::PosSplat(value)
        | ast::CallArg::KwargSplat(value) => expr_searches_outside(value, element),
    }
}

/// Whether `in` may search something outside the loop's element:
/// anything but a constant (or a list of them) or a path from the element.
fn searched_outside(container: &ast::Expr<'_>, element: &HashSet<&str>) -> bool {
    let constant = match container {
        ast::Expr::List(list) => list.items.iter().all(is_constant),
        ast::Expr::Tuple(tuple) => tuple.items.iter().all(is_constant),
        other => is_constant(other),
    };
    !constant && !data_path_root(container).is_some_and(|root| element.contains(root))
}

fn expr_searches_outside(expr: &ast::Expr<'_>, element: &HashSet<&str>) -> bool {
    let walk = |expr: &ast::Expr<'_>| expr_searches_outside(expr, element);
    let args = |args: &[ast::CallArg<'_>]| args.iter().any(|arg| arg_searches(arg, element));
    match expr {
        ast::Expr::Var(_) | ast::Expr::Const(_) => false,
        ast::Expr::Slice(slice) => {
            walk(&slice.expr)
                || [&slice.start, &slice.stop, &slice.step]
                    .iter()
                    .any(|bound| bound.as_ref().is_some_and(walk))
        }
        ast::Expr::UnaryOp(op) => walk(&op.expr),
        ast::Expr::BinOp(op) => {
            (matches!(op.op, ast::BinOpKind::In) && searched_outside(&op.right, element))
                || walk(&op.left)
                || walk(&op.right)
        }
        ast::Expr::Compare(compare) => {
            walk(&compare.expr)
                || compare.ops.iter().any(|op| {
                    let search =
                        matches!(op.op, ast::CompareOpKind::In | ast::CompareOpKind::NotIn);
                    (search && searched_outside(&op.expr, element)) || walk(&op.expr)
                })
        }
        ast::Expr::IfExpr(cond) => {
            walk(&cond.test_expr)
                || walk(&cond.true_expr)
                || cond.false_expr.as_ref().is_some_and(walk)
        }
        ast::Expr::Filter(filter) => filter.expr.as_ref().is_some_and(walk) || args(&filter.args),
        ast::Expr::Test(test) => walk(&test.expr) || args(&test.args),
        ast::Expr::GetAttr(attr) => walk(&attr.expr),
        ast::Expr::GetItem(item) => walk(&item.expr) || walk(&item.subscript_expr),
        ast::Expr::Call(call) => walk(&call.expr) || args(&call.args),
        ast::Expr::List(list) => list.items.iter().any(walk),
        ast::Expr::Tuple(tuple) => tuple.items.iter().any(walk),
        ast::Expr::Map(map) => map.keys.iter().chain(&map.values).any(walk),
    }
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
        ast::Expr::GetItem(item) if is_constant(&item.subscript_expr) => data_path_root(&item.expr),
        ast::Expr::Slice(slice) => {
            let bounds = [&slice.start, &slice.stop, &slice.step];
            let constant = bounds
                .iter()
                .all(|bound| bound.as_ref().is_none_or(is_constant));
            constant.then_some(())?;
            data_path_root(&slice.expr)
        }
        ast::Expr::Filter(filter) if WALKING_FILTERS.contains(&filter.name) => {
            let constant_args = filter.args.iter().all(|arg| match arg {
                ast::CallArg::Pos(value) | ast::CallArg::Kwarg(_, value) => is_constant(value),
                _ => false,
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

/// A constant, or a negated one (`-1`).
fn is_constant(expr: &ast::Expr<'_>) -> bool {
    match expr {
        ast::Expr::Const(_) => true,
        ast::Expr::UnaryOp(op) => matches!(op.expr, ast::Expr::Const(_)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(source: &str) -> bool {
        let syntax = minijinja::syntax::SyntaxConfig::default();
        let ast = minijinja::machinery::parse(source, "t", syntax).expect("parses");
        needed(&ast, true)
    }

    #[test]
    fn a_search_outside_the_loop_needs_fuel_on_minijinja_only() {
        let syntax = minijinja::syntax::SyntaxConfig::default();
        let source = "{% for x in xs %}{% if x in ys %}{% endif %}{% endfor %}";
        let ast = minijinja::machinery::parse(source, "t", syntax).expect("parses");
        assert!(needed(&ast, true));
        assert!(!needed(&ast, false), "the engine counts it itself");
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
            "{% set system = messages[0] %}{% set messages = messages[1:] %}{% for m in messages %}{% endfor %}",
            "{% set rest = messages[1:] %}{% set last = rest[-1:] %}{% for m in last %}{% endfor %}",
            "{% set tools = custom_tools %}{% if not tools %}{% set tools = none %}{% endif %}{% for t in tools %}{% endfor %}",
            "{% for m in messages %}{% set call = m.tool_calls[0].function %}{% for k, v in call.arguments|items %}{{ k }}{% endfor %}{% endfor %}",
            "{% for m in messages %}{% if 'tool_calls' in m and m.role in ['user', 'system'] %}{% endif %}{% endfor %}",
            "{% for m in messages %}{{ 'x' in m.content }}{% endfor %}{{ 'a' in xs }}",
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
            "{% with ys = xs + xs %}{% for y in ys %}{% endfor %}{% endwith %}",
            "{% set messages = messages + messages %}{% for m in messages %}{% endfor %}",
            "{% set a = b + b %}{% set c = a[1:] %}{% for x in c %}{% endfor %}",
            "{% set a, b = xs, xs %}{% for x in a %}{% endfor %}",
            "{% set a %}text{% endset %}{% for x in a %}{% endfor %}",
            "{% for x in xs[i:] %}{% endfor %}",
            "{% for m in xs %}{% set t = xs %}{% for z in t %}{% endfor %}{% endfor %}",
            "{% set t = xs %}{% for m in xs %}{% set t = m %}{% for z in t %}{% endfor %}{% endfor %}",
            "{% for m in xs %}{% for n in m.ys %}{% set t = m %}{% for z in t %}{% endfor %}{% endfor %}{% endfor %}",
            "{% for m in xs %}{% set t = m %}{% for n in m.ys %}{% for z in t %}{% endfor %}{% endfor %}{% endfor %}",
            "{% for x in xs %}{% if x in xs %}{% endif %}{% endfor %}",
            "{% for x in xs %}{{ x not in ys }}{% endfor %}",
            "{% for x in xs %}{% set found = x in ys.zs %}{% endfor %}",
            "{% for x in xs %}{% for y in x.ys %}{{ y in x.zs }}{{ y in xs }}{% endfor %}{% endfor %}",
        ] {
            assert!(needs(source), "{source}");
        }
    }
}

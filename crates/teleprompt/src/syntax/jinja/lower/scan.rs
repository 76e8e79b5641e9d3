//! Walks of a template's statements made before (or beside) lowering
//! them: the macros at the top and their definitions, the keys each
//! namespace is given, the names `set` assigns (anywhere, on every path,
//! in a scope), and the captures the lowering refuses.

use super::*;

/// The macros at the top of `template`, in order: each with its body's
/// template index, parameters (those named as one of `namespaces` marked)
/// and constant defaults, or why it is not lowered (a name defined twice,
/// unpacked parameters, a default that is not a constant).
pub(super) fn macro_defs<'a>(
    template: &ast::Stmt<'a>,
    namespaces: &HashSet<&'a str>,
) -> Vec<Result<MacroDef<'a>, String>> {
    let defs = top_macros(template);
    let read = |(index, def): (usize, &&ast::Macro<'a>)| -> Result<MacroDef<'a>, String> {
        let name = def.name;
        if defs.iter().filter(|other| other.name == name).count() > 1 {
            return Err(format!("macro `{name}` defined twice"));
        }
        let mut params = Vec::with_capacity(def.args.len());
        for arg in &def.args {
            match arg {
                ast::Expr::Var(param) => params.push(param.id),
                _ => return Err(format!("macro `{name}` with unpacked parameters")),
            }
        }
        let not_constant = || format!("macro `{name}` with a default that is not a constant");
        let skipped = params
            .len()
            .checked_sub(def.defaults.len())
            .ok_or_else(not_constant)?;
        let mut defaults = vec![None; skipped];
        for default in &def.defaults {
            let constant = match default {
                ast::Expr::Const(constant) => constant_of(&constant.value),
                // A list, tuple or map literal of constants (`attrs=[]`).
                ast::Expr::List(_) | ast::Expr::Tuple(_) | ast::Expr::Map(_) => {
                    match constant_json(default) {
                        Some(serde_json::Value::Array(items)) => {
                            Some(Const::List(items.into_boxed_slice()))
                        }
                        Some(map @ serde_json::Value::Object(_)) => Some(Const::Map(Box::new(map))),
                        _ => None,
                    }
                }
                _ => None,
            };
            defaults.push(Some(constant.ok_or_else(not_constant)?));
        }
        Ok(MacroDef {
            name,
            template: u32::try_from(index).map_err(|_| not_constant())?,
            aliases: params
                .iter()
                .map(|param| namespaces.contains(param))
                .collect(),
            params,
            defaults,
            flag: None,
        })
    };
    defs.iter().enumerate().map(read).collect()
}

/// The macros defined at the template's top, in its `if`s too (not in a
/// loop, a macro or another block), in the order the lowering meets them.
pub(super) fn top_macros<'b, 'a>(template: &'b ast::Stmt<'a>) -> Vec<&'b ast::Macro<'a>> {
    fn walk<'b, 'a>(stmts: &'b [ast::Stmt<'a>], into: &mut Vec<&'b ast::Macro<'a>>) {
        for stmt in stmts {
            match stmt {
                ast::Stmt::Macro(def) => into.push(def),
                ast::Stmt::IfCond(cond) => {
                    walk(&cond.true_body, into);
                    walk(&cond.false_body, into);
                }
                _ => {}
            }
        }
    }
    let mut defs = Vec::new();
    if let ast::Stmt::Template(template) = template {
        walk(&template.children, &mut defs);
    }
    defs
}

/// The keys `set NAME.key` gives in `stmts`, at any depth, by `NAME`.
pub(super) fn namespace_keys<'a>(stmts: &[ast::Stmt<'a>]) -> HashMap<&'a str, Vec<&'a str>> {
    fn walk<'a>(stmts: &[ast::Stmt<'a>], into: &mut HashMap<&'a str, Vec<&'a str>>) {
        for stmt in stmts {
            match stmt {
                ast::Stmt::Template(template) => walk(&template.children, into),
                ast::Stmt::Set(set) => {
                    if let ast::Expr::GetAttr(attr) = &set.target {
                        if let ast::Expr::Var(name) = &attr.expr {
                            let keys = into.entry(name.id).or_default();
                            if !keys.contains(&attr.name) {
                                keys.push(attr.name);
                            }
                        }
                    }
                }
                ast::Stmt::IfCond(cond) => {
                    walk(&cond.true_body, into);
                    walk(&cond.false_body, into);
                }
                ast::Stmt::ForLoop(for_loop) => {
                    walk(&for_loop.body, into);
                    walk(&for_loop.else_body, into);
                }
                ast::Stmt::Macro(def) => walk(&def.body, into),
                ast::Stmt::SetBlock(set) => walk(&set.body, into),
                ast::Stmt::FilterBlock(block) => walk(&block.body, into),
                _ => {}
            }
        }
    }
    let mut keys = HashMap::new();
    walk(stmts, &mut keys);
    keys
}

/// The names `set NAME = namespace(…)` makes in `stmts`, at any depth.
pub(super) fn namespaces_made<'a>(stmts: &[ast::Stmt<'a>]) -> HashSet<&'a str> {
    fn walk<'a>(stmts: &[ast::Stmt<'a>], into: &mut HashSet<&'a str>) {
        for stmt in stmts {
            match stmt {
                ast::Stmt::Set(set) => {
                    if let (ast::Expr::Var(target), ast::Expr::Call(called)) =
                        (&set.target, &set.expr)
                    {
                        if matches!(&called.expr, ast::Expr::Var(var) if var.id == "namespace") {
                            into.insert(target.id);
                        }
                    }
                }
                ast::Stmt::Template(template) => walk(&template.children, into),
                ast::Stmt::IfCond(cond) => {
                    walk(&cond.true_body, into);
                    walk(&cond.false_body, into);
                }
                ast::Stmt::ForLoop(for_loop) => {
                    walk(&for_loop.body, into);
                    walk(&for_loop.else_body, into);
                }
                _ => {}
            }
        }
    }
    let mut names = HashSet::new();
    walk(stmts, &mut names);
    names
}

/// What a `set` or a `set` block assigns.
pub(super) fn set_target<'s, 'a>(stmt: &'s ast::Stmt<'a>) -> Option<&'s ast::Expr<'a>> {
    match stmt {
        ast::Stmt::Set(set) => Some(&set.target),
        ast::Stmt::SetBlock(set) => Some(&set.target),
        _ => None,
    }
}

/// What a `set` (or `filter`) block's body may not hold on the direct
/// path: a namespace made or a macro at any depth, a `break` or
/// `continue` of a loop around the block. Its other `set`s assign the
/// names around the block, as minijinja runs a captured body in the
/// scope around it (Jinja2 gives it a scope of its own: minijinja is the
/// baseline here); a `set` block inside is checked where it is lowered.
pub(super) fn capture_refusal(stmts: &[ast::Stmt<'_>]) -> Option<&'static str> {
    fn walk(stmts: &[ast::Stmt<'_>], in_loop: bool) -> Option<&'static str> {
        stmts.iter().find_map(|stmt| match stmt {
            ast::Stmt::Set(set) => match &set.expr {
                ast::Expr::Call(called)
                    if matches!(&called.expr, ast::Expr::Var(name) if name.id == "namespace") =>
                {
                    Some("a namespace made")
                }
                _ => None,
            },
            ast::Stmt::Macro(_) => Some("a macro"),
            ast::Stmt::Break(_) | ast::Stmt::Continue(_) if !in_loop => Some("a `break`"),
            ast::Stmt::IfCond(cond) => {
                walk(&cond.true_body, in_loop).or_else(|| walk(&cond.false_body, in_loop))
            }
            ast::Stmt::ForLoop(for_loop) => {
                walk(&for_loop.body, true).or_else(|| walk(&for_loop.else_body, in_loop))
            }
            _ => None,
        })
    }
    walk(stmts, false)
}

/// Every name `stmts` assign, at any depth outside macros (a macro's
/// own names are its locals): `set` targets and loop variables.
pub(super) fn assigned_anywhere<'a>(stmts: &[ast::Stmt<'a>]) -> HashSet<&'a str> {
    fn walk<'a>(stmts: &[ast::Stmt<'a>], names: &mut HashSet<&'a str>) {
        for stmt in stmts {
            let mut count = |target: &ast::Expr<'a>| {
                if let ast::Expr::Var(target) = target {
                    names.insert(target.id);
                }
            };
            match stmt {
                ast::Stmt::Template(template) => walk(&template.children, names),
                ast::Stmt::Set(_) | ast::Stmt::SetBlock(_) => {
                    set_target(stmt).map(&mut count);
                    if let ast::Stmt::SetBlock(set) = stmt {
                        walk(&set.body, names);
                    }
                }
                ast::Stmt::IfCond(cond) => {
                    walk(&cond.true_body, names);
                    walk(&cond.false_body, names);
                }
                ast::Stmt::ForLoop(for_loop) => {
                    count(&for_loop.target);
                    if let ast::Expr::List(names) = &for_loop.target {
                        names.items.iter().for_each(&mut count);
                    }
                    walk(&for_loop.body, names);
                    walk(&for_loop.else_body, names);
                }
                ast::Stmt::WithBlock(with) => walk(&with.body, names),
                ast::Stmt::FilterBlock(block) => walk(&block.body, names),
                _ => {}
            }
        }
    }
    let mut names = HashSet::new();
    walk(stmts, &mut names);
    names
}

/// The names `stmts` assign whichever way they run: a `set`, or an `if`
/// whose every branch assigns the name (not loops, which may not run).
pub(super) fn always_assigned<'a>(stmts: &[ast::Stmt<'a>]) -> HashSet<&'a str> {
    let mut names = HashSet::new();
    for stmt in stmts {
        match stmt {
            ast::Stmt::Set(_) | ast::Stmt::SetBlock(_) => {
                if let Some(ast::Expr::Var(target)) = set_target(stmt) {
                    names.insert(target.id);
                }
            }
            ast::Stmt::IfCond(cond) => {
                let then = always_assigned(&cond.true_body);
                let otherwise = always_assigned(&cond.false_body);
                names.extend(then.intersection(&otherwise));
            }
            _ => {}
        }
        // A captured body always runs, in this scope (minijinja).
        match stmt {
            ast::Stmt::SetBlock(set) => names.extend(always_assigned(&set.body)),
            ast::Stmt::FilterBlock(block) => names.extend(always_assigned(&block.body)),
            _ => {}
        }
    }
    names
}

/// The names `set` assigns in `stmts`, not inside loops.
pub(super) fn collect_assigned<'a>(stmts: &[ast::Stmt<'a>], into: &mut HashSet<&'a str>) {
    for stmt in stmts {
        match stmt {
            ast::Stmt::Template(template) => collect_assigned(&template.children, into),
            ast::Stmt::Set(_) | ast::Stmt::SetBlock(_) => {
                if let Some(ast::Expr::Var(target)) = set_target(stmt) {
                    into.insert(target.id);
                }
            }
            ast::Stmt::IfCond(cond) => {
                collect_assigned(&cond.true_body, into);
                collect_assigned(&cond.false_body, into);
            }
            ast::Stmt::ForLoop(for_loop) => collect_assigned(&for_loop.else_body, into),
            _ => {}
        }
        // A captured body's `set`s assign this scope's names (minijinja).
        match stmt {
            ast::Stmt::SetBlock(set) => collect_assigned(&set.body, into),
            ast::Stmt::FilterBlock(block) => collect_assigned(&block.body, into),
            _ => {}
        }
    }
}

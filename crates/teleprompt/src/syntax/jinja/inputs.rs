//! What a Jinja template reads of its data, found on minijinja's AST:
//! attribute and string-subscript chains (`issue.title`,
//! `issue['title']`) from the data's names, with `for x in PATH` binding
//! `x` to PATH's elements, and `set x = PATH` / `with x = PATH` making `x`
//! another name for PATH.
//!
//! Conservative where it cannot tell: a method call (`issue.items()`,
//! `title.upper()`), a filter, an index that is not a string literal
//! (`labels[0]`, `row[key]`) or a slice reads the path before it whole and
//! nothing further; the template's own names (macros, their arguments,
//! `loop`, `caller`, imports, anything `set` to a computed value) are not
//! data. The walk follows the tree as the load-time check does, whose
//! depth [`super::nesting`] bounds before it is parsed.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;

use minijinja::machinery::ast;

use super::check::full_start;
use crate::analysis::{Inputs, Step, MAX_PATH};

/// Where a name points: a path from the root, or somewhere the walk cannot
/// follow (a computed value, a macro).
type Place = Option<Vec<Step>>;

/// The paths `template` reads; `data` names the top-level names that may
/// be data (read, and never the template's own variable or a function).
pub(super) fn inputs(template: &ast::Stmt<'_>, data: &BTreeSet<String>) -> Inputs {
    let mut walk = Walk::new(data, None);
    walk.stmt(template);
    let mut inputs = walk.inputs;
    // A data name the walk did not meet on a path is still read.
    for name in data {
        if !inputs.names().any(|read| read == name) {
            inputs.add(&[Step::Key(name.clone())]);
        }
    }
    inputs
}

/// The templates a prompt's body uses, for a walk that follows it into
/// them.
pub(super) struct Linked<'t, 'a> {
    /// Each template's tree (the body first); `None` where it did not
    /// compile.
    pub trees: Vec<Option<&'t ast::Stmt<'a>>>,
    /// Each template's text.
    pub texts: Vec<Option<&'a str>>,
    /// For a tag (its template, where its name starts): the templates it
    /// may use, whether it passes them its context, and whether it is an
    /// `extends`.
    pub links: HashMap<(usize, usize), (Vec<usize>, bool, bool)>,
}

/// The blocks `stmts` (of `text`) define, each with whether it may render
/// the block it overrides (its text calls `super()`; a mention in a
/// comment counts too, which only reads more).
fn blocks_in<'a>(stmts: &[ast::Stmt<'a>], text: &str, out: &mut Vec<(&'a str, bool)>) {
    use ast::Stmt;
    for stmt in stmts {
        match stmt {
            Stmt::Template(t) => blocks_in(&t.children, text, out),
            Stmt::Block(b) => {
                let span = b.span();
                let calls_super = text
                    .get(span.start_offset as usize..span.end_offset as usize)
                    .is_some_and(|body| body.contains("super("));
                out.push((b.name, calls_super));
                blocks_in(&b.body, text, out);
            }
            Stmt::IfCond(i) => {
                blocks_in(&i.true_body, text, out);
                blocks_in(&i.false_body, text, out);
            }
            Stmt::ForLoop(f) => {
                blocks_in(&f.body, text, out);
                blocks_in(&f.else_body, text, out);
            }
            Stmt::WithBlock(w) => blocks_in(&w.body, text, out),
            Stmt::AutoEscape(a) => blocks_in(&a.body, text, out),
            Stmt::FilterBlock(f) => blocks_in(&f.body, text, out),
            Stmt::SetBlock(s) => blocks_in(&s.body, text, out),
            _ => {}
        }
    }
}

/// How many times the walk goes into one file (once per tag using it, up
/// to this): the work stays a small multiple of the files' size however
/// often they are included.
const WALKS_PER_FILE: usize = 4;

/// How deep the walk follows templates into templates (a render nests
/// far fewer includes: see `limits.max_call_depth`); past it, what a
/// template reads is still counted, by name.
const MAX_WALK_DEPTH: usize = 64;

/// The paths `body` reads, going into the templates it includes, imports
/// with context or extends as they render: in the caller's scope (a
/// `for` around an include binds its variable there too). Only reads in
/// the body carry a place; `data` holds the names that may be data in any
/// of the templates.
pub(super) fn linked(
    body: &ast::Stmt<'_>,
    data: &BTreeSet<String>,
    linked: &Linked<'_, '_>,
) -> Inputs {
    let mut walk = Walk::new(data, Some(linked));
    walk.stmt(body);
    let mut inputs = walk.inputs;
    // A data name the walk never looked up is still read.
    for name in data {
        if !walk.met.contains(name.as_str()) && !inputs.names().any(|read| read == name) {
            inputs.add(&[Step::Key(name.clone())]);
        }
    }
    inputs
}

struct Walk<'d, 'a> {
    data: &'d BTreeSet<String>,
    inputs: Inputs,
    /// The template's own names in scope, innermost last.
    scopes: Vec<HashMap<&'a str, Place>>,
    /// The other templates, when the walk follows the tags naming them.
    linked: Option<&'d Linked<'d, 'a>>,
    /// The template walked (an index of `linked.trees`).
    current: usize,
    /// Whether reads are noted with their place (in the body only).
    placed: bool,
    /// How many times the walk went into each template.
    walks: Vec<usize>,
    /// The templates being walked, outermost first.
    stack: Vec<usize>,
    /// Every name looked up.
    met: HashSet<&'a str>,
    /// In a template extended by the ones walked before it: each block
    /// they define, and whether this template's version may still render
    /// (a `super()` all the way down).
    overridden: HashMap<&'a str, bool>,
    /// Walking a block that never renders: names are met, nothing is read.
    silent: bool,
}

fn span(expr: &ast::Expr<'_>) -> Range<usize> {
    full_start(expr)..expr.span().end_offset as usize
}

impl<'d, 'a> Walk<'d, 'a> {
    fn new(data: &'d BTreeSet<String>, linked: Option<&'d Linked<'d, 'a>>) -> Walk<'d, 'a> {
        Walk {
            data,
            inputs: Inputs::default(),
            scopes: vec![HashMap::new()],
            linked,
            current: 0,
            placed: true,
            walks: vec![0; linked.map_or(0, |linked| linked.trees.len())],
            stack: vec![0],
            met: HashSet::new(),
            overridden: HashMap::new(),
            silent: false,
        }
    }

    /// Notes that `path` is read at `span` (of the template walked).
    fn note(&mut self, path: &[Step], span: Range<usize>, whole: bool) {
        if self.silent {
            return;
        }
        if self.placed {
            self.inputs.add_at(path, span, whole);
        } else if whole {
            self.inputs.add_whole(path);
        } else {
            self.inputs.add(path);
        }
    }

    /// Goes into the templates the tag whose name is `name` uses, when it
    /// passes them its context.
    fn follow(&mut self, name: &ast::Expr<'a>) {
        let Some(linked) = self.linked else {
            return;
        };
        let Some((targets, true, extends)) = linked.links.get(&(self.current, full_start(name)))
        else {
            return;
        };
        // The blocks a parent template renders are those its children do
        // not replace; an included or imported template's are its own.
        let overridden = match extends {
            true => {
                let mut overridden = self.overridden.clone();
                let mut own = Vec::new();
                if let (Some(Some(tree)), Some(Some(text))) = (
                    linked.trees.get(self.current),
                    linked.texts.get(self.current),
                ) {
                    blocks_in(std::slice::from_ref(*tree), text, &mut own);
                }
                for (block, calls_super) in own {
                    let renders = overridden.entry(block).or_insert(true);
                    *renders = *renders && calls_super;
                }
                overridden
            }
            false => HashMap::new(),
        };
        for &target in targets {
            if self.stack.contains(&target) || self.stack.len() > MAX_WALK_DEPTH {
                continue;
            }
            let Some(count) = self.walks.get_mut(target) else {
                continue;
            };
            if *count >= WALKS_PER_FILE {
                continue;
            }
            *count += 1;
            let Some(tree) = linked.trees.get(target).copied().flatten() else {
                continue;
            };
            let (placed, current) = (self.placed, self.current);
            let outer = std::mem::replace(&mut self.overridden, overridden.clone());
            self.placed = false;
            self.current = target;
            self.stack.push(target);
            self.scoped(HashMap::new(), |walk| walk.stmt(tree));
            self.stack.pop();
            self.placed = placed;
            self.current = current;
            self.overridden = outer;
        }
    }

    fn body(&mut self, stmts: &[ast::Stmt<'a>]) {
        for stmt in stmts {
            self.stmt(stmt);
        }
    }

    /// Walks `body` in a scope of its own, with `names` bound.
    fn scoped(&mut self, names: HashMap<&'a str, Place>, walk: impl FnOnce(&mut Self)) {
        self.scopes.push(names);
        walk(self);
        self.scopes.pop();
    }

    fn bind(&mut self, name: &'a str, place: Place) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, place);
        }
    }

    /// Binds an assignment target: a name to `place`, the names of a
    /// tuple to nothing the walk follows.
    fn bind_target(&mut self, target: &ast::Expr<'a>, place: Place) {
        match target {
            ast::Expr::Var(var) => self.bind(var.id, place),
            ast::Expr::List(list) => {
                for item in &list.items {
                    self.bind_target(item, None);
                }
            }
            ast::Expr::Tuple(tuple) => {
                for item in &tuple.items {
                    self.bind_target(item, None);
                }
            }
            // `set ns.count = …`: an attribute of the template's own
            // namespace.
            _ => {}
        }
    }

    fn stmt(&mut self, stmt: &ast::Stmt<'a>) {
        use ast::Stmt;
        match stmt {
            Stmt::Template(t) => self.body(&t.children),
            Stmt::EmitExpr(e) => {
                if let Some(path) = self.value(&e.expr) {
                    let at = span(&e.expr);
                    self.note(&path, at.clone(), true);
                    if self.placed && !self.silent {
                        self.inputs.add_printed(&path, at);
                    }
                }
            }
            Stmt::EmitRaw(_) | Stmt::Continue(_) | Stmt::Break(_) => {}
            Stmt::ForLoop(f) => {
                let each = self.walked(&f.iter).map(|mut path| {
                    path.push(Step::Each);
                    path
                });
                let mut names = HashMap::new();
                names.insert("loop", None);
                self.scoped(names, |walk| {
                    walk.bind_target(&f.target, each);
                    walk.opt(&f.filter_expr);
                    walk.body(&f.body);
                });
                self.body(&f.else_body);
            }
            Stmt::IfCond(i) => {
                self.read(&i.expr, true);
                self.body(&i.true_body);
                self.body(&i.false_body);
            }
            Stmt::WithBlock(w) => {
                self.scoped(HashMap::new(), |walk| {
                    for (target, value) in &w.assignments {
                        let place = walk.walked(value);
                        walk.bind_target(target, place);
                    }
                    walk.body(&w.body);
                });
            }
            Stmt::Set(s) => {
                let place = self.walked(&s.expr);
                self.bind_target(&s.target, place);
            }
            Stmt::SetBlock(s) => {
                self.bind_target(&s.target, None);
                self.opt(&s.filter);
                self.body(&s.body);
            }
            Stmt::AutoEscape(a) => {
                self.read(&a.enabled, true);
                self.body(&a.body);
            }
            Stmt::FilterBlock(f) => {
                self.read(&f.filter, true);
                self.body(&f.body);
            }
            // A block its children replace (without `super()`) never
            // renders here.
            Stmt::Block(b) if self.overridden.get(b.name) == Some(&false) => {
                let silent = std::mem::replace(&mut self.silent, true);
                self.body(&b.body);
                self.silent = silent;
            }
            Stmt::Block(b) => self.body(&b.body),
            Stmt::Import(i) => {
                self.read(&i.expr, true);
                self.follow(&i.expr);
                self.bind_target(&i.name, None);
            }
            Stmt::FromImport(i) => {
                self.read(&i.expr, true);
                self.follow(&i.expr);
                for (name, alias) in &i.names {
                    self.bind_target(alias.as_ref().unwrap_or(name), None);
                }
            }
            Stmt::Extends(e) => {
                self.read(&e.name, true);
                self.follow(&e.name);
            }
            Stmt::Include(i) => {
                self.read(&i.name, true);
                self.follow(&i.name);
            }
            Stmt::Macro(m) => {
                self.bind(m.name, None);
                self.macro_decl(m);
            }
            Stmt::CallBlock(c) => {
                self.call(&c.call);
                self.macro_decl(&c.macro_decl);
            }
            Stmt::Do(d) => self.call(&d.call),
        }
    }

    fn macro_decl(&mut self, m: &ast::Macro<'a>) {
        for default in &m.defaults {
            self.read(default, true);
        }
        let mut names: HashMap<&'a str, Place> = ["caller", "varargs", "kwargs"]
            .into_iter()
            .map(|name| (name, None))
            .collect();
        for arg in &m.args {
            if let ast::Expr::Var(var) = arg {
                names.insert(var.id, None);
            }
        }
        self.scoped(names, |walk| walk.body(&m.body));
    }

    fn opt(&mut self, expr: &Option<ast::Expr<'a>>) {
        if let Some(expr) = expr {
            self.read(expr, true);
        }
    }

    /// Notes what `expr` reads (`whole`: its value is used as it is).
    fn read(&mut self, expr: &ast::Expr<'a>, whole: bool) {
        if let Some(path) = self.value(expr) {
            self.note(&path, span(expr), whole);
        }
    }

    /// Notes what `expr` reads when its value is walked further (a `for`
    /// over it, a name bound to it); returns its path.
    fn walked(&mut self, expr: &ast::Expr<'a>) -> Place {
        let place = self.value(expr);
        if let Some(path) = &place {
            self.note(path, span(expr), false);
        }
        place
    }

    /// `path.key`, unless `path` is already [`MAX_PATH`] keys long: then
    /// `path` is read whole (at `span`) and the walk follows no further
    /// (a chain of `set` names, each a key further, would otherwise hold
    /// paths of every length: quadratic memory, and a tree too deep to
    /// drop).
    fn extend(&mut self, mut path: Vec<Step>, key: String, span: Range<usize>) -> Place {
        if path.len() >= MAX_PATH {
            self.note(&path, span, true);
            return None;
        }
        path.push(Step::Key(key));
        Some(path)
    }

    /// Where a name points: the innermost binding, else the data's name.
    fn lookup(&mut self, name: &'a str) -> Place {
        self.met.insert(name);
        for scope in self.scopes.iter().rev() {
            if let Some(place) = scope.get(name) {
                return place.clone();
            }
        }
        self.data
            .contains(name)
            .then(|| vec![Step::Key(name.to_string())])
    }

    fn call(&mut self, call: &ast::Call<'a>) {
        match &call.expr {
            // A macro's or function's name is not data.
            ast::Expr::Var(_) => {}
            // A method: what it is called on is used whole.
            ast::Expr::GetAttr(method) => self.read(&method.expr, true),
            other => self.read(other, true),
        }
        self.args(&call.args);
    }

    /// The arguments of a call, filter or test: each used whole.
    fn args(&mut self, args: &[ast::CallArg<'a>]) {
        for arg in args {
            self.read(super::check::arg_expr(arg), true);
        }
    }

    /// The path `expr` is, if it is one (not itself noted), noting what
    /// its parts read.
    fn value(&mut self, expr: &ast::Expr<'a>) -> Place {
        use ast::Expr;
        match expr {
            Expr::Var(var) => self.lookup(var.id),
            Expr::GetAttr(g) => {
                let path = self.value(&g.expr)?;
                self.extend(path, g.name.to_string(), span(&g.expr))
            }
            Expr::GetItem(g) => match &g.subscript_expr {
                Expr::Const(c) if c.value.as_str().is_some() => {
                    let key = c.value.as_str().unwrap_or_default().to_string();
                    let path = self.value(&g.expr)?;
                    self.extend(path, key, span(&g.expr))
                }
                subscript => {
                    self.read(&g.expr, true);
                    self.read(subscript, true);
                    None
                }
            },
            Expr::Const(_) => None,
            Expr::Slice(s) => {
                self.read(&s.expr, true);
                self.opt(&s.start);
                self.opt(&s.stop);
                self.opt(&s.step);
                None
            }
            Expr::UnaryOp(u) => {
                self.read(&u.expr, true);
                None
            }
            Expr::BinOp(b) => {
                self.read(&b.left, true);
                self.read(&b.right, true);
                None
            }
            Expr::Compare(c) => {
                self.read(&c.expr, true);
                for op in &c.ops {
                    self.read(&op.expr, true);
                }
                None
            }
            Expr::IfExpr(i) => {
                self.read(&i.test_expr, true);
                self.read(&i.true_expr, true);
                self.opt(&i.false_expr);
                None
            }
            Expr::Filter(f) => {
                self.opt(&f.expr);
                self.args(&f.args);
                None
            }
            Expr::Test(t) => {
                // `x is defined` asks only whether it is there.
                let whole = !matches!(t.name, "defined" | "undefined" | "none");
                self.read(&t.expr, whole);
                self.args(&t.args);
                None
            }
            Expr::Call(c) => {
                self.call(c);
                None
            }
            Expr::List(l) => {
                l.items.iter().for_each(|item| self.read(item, true));
                None
            }
            Expr::Tuple(t) => {
                t.items.iter().for_each(|item| self.read(item, true));
                None
            }
            Expr::Map(m) => {
                m.keys.iter().for_each(|key| self.read(key, true));
                m.values.iter().for_each(|value| self.read(value, true));
                None
            }
        }
    }
}

//! The load-time walk over minijinja's AST: unknown filters, tests and
//! functions are found in every branch, the names the template reads are
//! collected, and the pongo2 autoescape spellings are rewritten.

use std::collections::{BTreeSet, HashSet};
use std::ops::Range;

use minijinja::machinery::{ast, Span};

use super::arg_types::{self, Lit, Slot};
use super::arity::{arity, mismatch, Callable};
use super::includes::{Ref, Tag};
use super::names::TESTS;
use crate::diagnostics::{closest, TemplateError};
use crate::functions::{ArgAt, Function};
use crate::options::Syntax;
use crate::syntax::edits::Edit;

/// Walks the AST at load time: finds unknown filters, tests and functions,
/// and the pongo2 autoescape spellings to rewrite.
#[derive(Default)]
pub(super) struct Checker<'a> {
    filters: Vec<(&'a str, usize)>,
    tests: Vec<(&'a str, usize)>,
    calls: Vec<(&'a str, Span)>,
    locals: HashSet<&'a str>,
    /// Names known to exist where the walk is: inside `{% if x is defined %}`
    /// (or the `else` of `is not defined`), a call of an unknown `x` never
    /// runs, so it is no load error.
    guarded: Vec<String>,
    /// Calls of names that may be host functions, with what the template
    /// shows of their arguments.
    host_calls: Vec<HostCall<'a>>,
    /// Every variable name read anywhere (local or not).
    pub(super) reads: BTreeSet<String>,
    /// pongo2's autoescape spellings, rewritten.
    pub(super) edits: Vec<Edit>,
    /// The expressions that build values (`~`, `+`, `*`; filters and
    /// calls assigned by `set`) wrapped in the bound check:
    /// `(a ~ b)|__bounded` (see `growth`).
    pub(super) bounds: Vec<Edit>,
    /// The render bounds, for the constants minijinja folds at load.
    pub(super) limits: crate::limits::Limits,
    /// Problems found on the way, each with its place and message:
    /// constant expressions too large to fold (`"x" * 100000000`),
    /// includes that cannot resolve.
    problems: Vec<(Range<usize>, String, &'static str)>,
    /// Bytes and items of all the constants folded so far.
    folded_total: u128,
    /// How many operators above the one being walked continue its chain
    /// (`a ~ b ~ c` is `(a ~ b) ~ c`: the inner `~` is one down).
    chain: usize,
    /// Every call of a filter, test or function by name, for its
    /// argument count.
    counted: Vec<Counted<'a>>,
    /// Every literal argument (or filter input) of a call by name, for
    /// the types of the built-ins' arguments (`arg_types`).
    literals: Vec<Literal<'a>>,
    /// The `role(…)` calls whose role is not a literal string, at the
    /// argument, and `role` read as a value (not called), at the name.
    computed_roles: Vec<Range<usize>>,
    /// Whether the template may name other templates (it has an include
    /// root): each `include`, `import` and `extends` is then noted in
    /// `refs`, else it is a load error.
    pub(super) files: bool,
    /// The tags that name other templates (with `files`).
    pub(super) refs: Vec<Ref>,
    /// The names bound by each `for` loop and `with` block the walk is in,
    /// innermost last: a block does not see them unless it is `scoped`.
    binds: Vec<Vec<&'a str>>,
    /// Inside a `for` or `with`: the names read, in order, with where.
    var_log: Vec<(&'a str, Span)>,
    /// Inside a `for` or `with`: the names bound, in order.
    bound_log: Vec<&'a str>,
    /// Names a block reads that the loop or `with` around it binds: the
    /// block's start, the name, where it is read.
    unscoped: Vec<(usize, &'a str, Range<usize>)>,
    /// The blocks the walk is in, innermost last.
    blocks: Vec<&'a str>,
    /// `self.name()` calls: the block rendering it (each around it), the
    /// block called, where.
    pub(super) block_calls: Vec<(String, String, Range<usize>)>,
    /// Every `include` statement (from its keyword to before `%}`).
    pub(super) includes: Vec<Range<usize>>,
    /// How many `for` loops the walk is in.
    loops: usize,
    /// The first read of `loop` outside any `for` loop of the template.
    pub(super) loose_loop: Option<Range<usize>>,
    /// Whether the macro just walked reads `varargs` and `kwargs`.
    macro_catches: Option<(bool, bool)>,
    /// The macros that read `varargs` or `kwargs` (`macros`): where, the
    /// name, whether each is read.
    pub(super) catching_macros: Vec<(Range<usize>, &'a str, bool, bool)>,
    /// How many `with` blocks were rewritten (`with_values_first`).
    with_rewrites: usize,
    /// For each rewritten `with`: where its last value ends, and the
    /// bindings to add before the tag's `%}`.
    pub(super) with_tails: Vec<(usize, String)>,
    /// A chat template's text: each `+` with a safe string operand is
    /// rewritten into Python's `Markup` addition (`python::markup`).
    pub(super) markup: Option<&'a str>,
}

/// A literal argument of a call by name.
struct Literal<'a> {
    kind: Callable,
    name: &'a str,
    slot: Slot<'a>,
    lit: Lit,
    span: Range<usize>,
}

/// A call by name as the template writes it, for the argument counts of
/// the built-ins (`arity`).
struct Counted<'a> {
    kind: Callable,
    name: &'a str,
    /// Where to look for the name from, and where the call ends.
    span: Range<usize>,
    /// Positional arguments, without a filter's or test's input.
    positional: usize,
    keywords: Vec<&'a str>,
    /// `*args` or `**kwargs`: the count is not known until rendering.
    splat: bool,
}

/// A call (`f(a, k=b)`) or filter (`a | f(b)`) as the template writes it:
/// each argument's literal value, if it is a literal, and where it is.
struct HostCall<'a> {
    name: &'a str,
    span: Range<usize>,
    positional: Vec<(Option<serde_json::Value>, Range<usize>)>,
    named: Vec<(&'a str, Option<serde_json::Value>, Range<usize>)>,
    /// `*args` or `**kwargs`: the arguments are not known until rendering.
    splat: bool,
}

fn range(span: Span) -> Range<usize> {
    span.start_offset as usize..span.end_offset as usize
}

/// `key=value` in the body, from the value's span (`key = value` too);
/// the value's span when the key is not right before it.
fn keyword_span(body: &str, key: &str, value: &Range<usize>) -> Range<usize> {
    let start = body
        .get(..value.start)
        .and_then(|before| before.trim_end().strip_suffix('='))
        .and_then(|before| before.trim_end().strip_suffix(key))
        .map_or(value.start, str::len);
    start..value.end
}

/// A literal argument's value (`None` for anything computed).
fn literal(expr: &ast::Expr<'_>) -> Option<serde_json::Value> {
    match expr {
        ast::Expr::Const(c) => super::value::to_json_value(&c.value).ok(),
        _ => None,
    }
}

impl<'a> Checker<'a> {
    /// Checks the calls of host functions against their signatures: the
    /// argument count and names, and the types of literal arguments.
    /// The names the template reads from its data: those read that it
    /// neither defines itself nor finds among `functions` (the globals and
    /// Jinja's own names, `loop`, `caller`, …).
    pub(super) fn inputs(&self, functions: &HashSet<String>) -> BTreeSet<String> {
        self.reads
            .iter()
            .filter(|name| !self.locals.contains(name.as_str()) && !functions.contains(*name))
            .cloned()
            .collect()
    }

    /// The names the template binds anywhere (variables, macros, loop
    /// variables, arguments, imports).
    pub(super) fn locals(&self) -> BTreeSet<String> {
        self.locals.iter().map(|name| name.to_string()).collect()
    }

    /// A walk for a template rendered within `limits`.
    pub(super) fn new(limits: crate::limits::Limits) -> Checker<'a> {
        Checker {
            limits,
            ..Checker::default()
        }
    }

    /// Notes in `found` every call of a host function whose literal
    /// arguments do not fit its signature.
    pub(super) fn host_calls(
        &self,
        body: &str,
        hosts: &[(String, Function)],
        found: &mut crate::diagnostics::Findings,
    ) {
        for call in &self.host_calls {
            if call.splat || self.locals.contains(call.name) {
                continue;
            }
            let Ok(index) = hosts.binary_search_by(|(name, _)| name.as_str().cmp(call.name)) else {
                continue;
            };
            let Some((name, function)) = hosts.get(index) else {
                continue;
            };
            let positional: Vec<Option<&serde_json::Value>> = call
                .positional
                .iter()
                .map(|(value, _)| value.as_ref())
                .collect();
            let named: Vec<(&str, Option<&serde_json::Value>)> = call
                .named
                .iter()
                .map(|(key, value, _)| (*key, value.as_ref()))
                .collect();
            if let Err(error) = function.check(name, &positional, &named) {
                let span = match error.at {
                    ArgAt::Positional(index) => {
                        call.positional.get(index).map(|(_, at)| at.clone())
                    }
                    ArgAt::Named(index) => call
                        .named
                        .get(index)
                        .map(|(key, _, at)| keyword_span(body, key, at)),
                    ArgAt::Call => None,
                }
                .unwrap_or_else(|| call.span.clone());
                found.push(
                    TemplateError::parse(Some(span), error.message).suggest(error.suggestion),
                );
            }
        }
    }

    /// Notes in `found` every call of a built-in filter, test or function
    /// whose arguments cannot fit what it takes (`wrong-arity`).
    pub(super) fn arity_errors(
        &self,
        body: &str,
        dialect: Syntax,
        found: &mut crate::diagnostics::Findings,
    ) {
        for call in &self.counted {
            if call.splat || (call.kind == Callable::Function && self.locals.contains(call.name)) {
                continue;
            }
            let Some(takes) = arity(call.kind, call.name, dialect) else {
                continue;
            };
            if let Some((message, suggestion)) =
                mismatch(call.name, takes, call.positional, &call.keywords)
            {
                let suggestion = suggestion.or_else(|| match call.kind {
                    Callable::Filter if call.positional > 0 => Some(format!(
                        "the value before `|` is `{}`'s input, not one of its arguments",
                        call.name
                    )),
                    Callable::Test if call.positional > 0 => Some(format!(
                        "the value before `is` is what `{}` tests, not one of its arguments",
                        call.name
                    )),
                    _ => None,
                });
                let start = name_span(body, call.name, call.span.start)
                    .map_or(call.span.start, |name| name.start);
                found.push(
                    TemplateError::parse(Some(start..call.span.end.max(start)), message)
                        .with_kind("wrong-arity")
                        .suggest(suggestion),
                );
            }
        }
    }

    /// Notes in `found` every literal argument of a built-in filter or
    /// function that the render would refuse (`wrong-type`).
    pub(super) fn type_errors(&self, body: &str, found: &mut crate::diagnostics::Findings) {
        if !self.locals.contains("role") {
            for span in &self.computed_roles {
                found.push(crate::syntax::builtin_types::role_not_literal(span.clone()));
            }
        }
        for literal in &self.literals {
            if literal.kind == Callable::Function && self.locals.contains(literal.name) {
                continue;
            }
            if let Some(message) = arg_types::mismatch(
                literal.kind,
                literal.name,
                literal.slot,
                literal.lit,
                body,
                &literal.span,
            ) {
                found.push(
                    TemplateError::parse(Some(literal.span.clone()), message)
                        .with_kind("wrong-type"),
                );
            }
        }
    }

    /// Notes the literal input and arguments of a call by name, for their
    /// types.
    fn note_literals(
        &mut self,
        kind: Callable,
        name: &'a str,
        input: Option<&ast::Expr<'a>>,
        args: &[ast::CallArg<'a>],
    ) {
        let mut push = |slot: Slot<'a>, expr: &ast::Expr<'a>| {
            if let Some(lit) = arg_types::literal(expr) {
                self.literals.push(Literal {
                    kind,
                    name,
                    slot,
                    lit,
                    span: range(expr.span()),
                });
            }
        };
        if kind == Callable::Function && name == "role" {
            let first = args.first().map(|arg| match arg {
                ast::CallArg::Pos(expr) => (arg_types::literal(expr), expr.span()),
                ast::CallArg::Kwarg(_, expr)
                | ast::CallArg::PosSplat(expr)
                | ast::CallArg::KwargSplat(expr) => (None, expr.span()),
            });
            if let Some((lit, span)) = first {
                if lit.is_none() {
                    self.computed_roles.push(range(span));
                }
            }
        }
        if let Some(input) = input {
            push(Slot::Input, input);
        }
        let mut position = 0;
        for arg in args {
            match arg {
                ast::CallArg::Pos(e) => {
                    push(Slot::Pos(position), e);
                    position += 1;
                }
                ast::CallArg::Kwarg(key, e) => push(Slot::Key(key), e),
                // Past a splat, positions are not known until rendering.
                ast::CallArg::PosSplat(_) | ast::CallArg::KwargSplat(_) => return,
            }
        }
    }

    /// Notes a call by name, for its argument count.
    fn count(
        &mut self,
        kind: Callable,
        name: &'a str,
        span: Range<usize>,
        args: &[ast::CallArg<'a>],
    ) {
        let mut counted = Counted {
            kind,
            name,
            span,
            positional: 0,
            keywords: Vec::new(),
            splat: false,
        };
        for arg in args {
            match arg {
                ast::CallArg::Pos(_) => counted.positional += 1,
                ast::CallArg::Kwarg(key, _) => counted.keywords.push(key),
                ast::CallArg::PosSplat(_) | ast::CallArg::KwargSplat(_) => counted.splat = true,
            }
        }
        self.counted.push(counted);
    }

    /// Notes a call of `name` that may be a host function's; `piped` is a
    /// filter's input (its first argument).
    fn note_host_call(
        &mut self,
        name: &'a str,
        span: Span,
        piped: Option<&ast::Expr<'a>>,
        args: &[ast::CallArg<'a>],
    ) {
        let mut call = HostCall {
            name,
            span: range(span),
            positional: Vec::new(),
            named: Vec::new(),
            splat: false,
        };
        if let Some(piped) = piped {
            call.positional.push((literal(piped), range(piped.span())));
        }
        for arg in args {
            match arg {
                ast::CallArg::Pos(e) => call.positional.push((literal(e), range(e.span()))),
                ast::CallArg::Kwarg(key, e) => {
                    call.named.push((key, literal(e), range(e.span())));
                }
                ast::CallArg::PosSplat(_) | ast::CallArg::KwargSplat(_) => call.splat = true,
            }
        }
        self.host_calls.push(call);
    }

    /// Notes in `found` the names that resolve to nothing and the includes
    /// that cannot resolve; fails with the first problem that stops the
    /// compile (a constant too large to fold).
    pub(super) fn verdict(
        &self,
        body: &str,
        functions: &HashSet<String>,
        filters: &[&str],
        found: &mut crate::diagnostics::Findings,
    ) -> Result<(), TemplateError> {
        let mut problems: Vec<TemplateError> = Vec::new();
        for (name, from) in &self.filters {
            if !filters.contains(name) {
                problems.push(unknown(
                    "filter",
                    name,
                    name_span(body, name, *from),
                    filters,
                ));
            }
        }
        for (name, from) in &self.tests {
            if !TESTS.contains(name) {
                problems.push(unknown("test", name, name_span(body, name, *from), TESTS));
            }
        }
        for (name, span) in &self.calls {
            if !functions.contains(*name) && !self.locals.contains(name) {
                let known: Vec<&str> = functions
                    .iter()
                    .map(String::as_str)
                    .chain(self.locals.iter().copied())
                    .collect();
                let range = span.start_offset as usize..span.end_offset as usize;
                problems.push(unknown("function", name, Some(range), &known));
            }
        }
        let mut stopping: Vec<TemplateError> = Vec::new();
        for (span, message, kind) in &self.problems {
            let problem = TemplateError::parse(Some(span.clone()), message.clone()).with_kind(kind);
            match *kind {
                "unresolved-include" => problems.push(problem),
                _ => stopping.push(problem),
            }
        }
        // A problem that stops the compile: the first in the text.
        if let Some(problem) = stopping
            .into_iter()
            .min_by_key(|problem| problem.span.as_ref().map_or(usize::MAX, |s| s.start))
        {
            return Err(problem);
        }
        for problem in problems {
            found.push(problem);
        }
        Ok(())
    }

    fn body(&mut self, stmts: &[ast::Stmt<'a>]) {
        for stmt in stmts {
            self.stmt(stmt);
        }
    }

    /// Rewrites `{% with a=1, b=a %}` so that every value is computed
    /// before a name is bound, as Jinja2 does: `{% with __with0_0=1,
    /// __with0_1=a, a=__with0_0, b=__with0_1 %}` (the values stay where
    /// they are written, so errors in them keep their place).
    fn with_values_first(&mut self, with: &ast::WithBlock<'a>) {
        let Some((_, last)) = with.assignments.last() else {
            return;
        };
        if !with
            .assignments
            .iter()
            .all(|(target, _)| matches!(target, ast::Expr::Var(_)))
        {
            return;
        }
        let block = self.with_rewrites;
        self.with_rewrites += 1;
        let mut tail = String::new();
        for (i, (target, _)) in with.assignments.iter().enumerate() {
            let ast::Expr::Var(var) = target else {
                continue;
            };
            let hidden = format!("__with{block}_{i}");
            tail.push_str(&format!(", {}={hidden}", var.id));
            self.bounds.push(Edit {
                original: range(var.span()),
                replacement: hidden,
            });
        }
        self.with_tails.push((range(last.span()).end, tail));
    }

    pub(super) fn stmt(&mut self, stmt: &ast::Stmt<'a>) {
        use ast::Stmt;
        match stmt {
            Stmt::Template(t) => self.body(&t.children),
            Stmt::EmitExpr(e) => self.expr(&e.expr),
            Stmt::EmitRaw(_) | Stmt::Continue(_) | Stmt::Break(_) => {}
            Stmt::ForLoop(f) => {
                self.target(&f.target);
                self.expr(&f.iter);
                self.opt(&f.filter_expr);
                let mut names = vec!["loop"];
                target_names(&f.target, &mut names);
                if !self.binds.is_empty() {
                    // Inside a block, its own loop's `loop` is its own.
                    self.bound_log.push("loop");
                }
                self.binds.push(names);
                self.loops += 1;
                self.body(&f.body);
                self.loops -= 1;
                self.binds.pop();
                self.body(&f.else_body);
            }
            Stmt::IfCond(i) => {
                self.expr(&i.expr);
                let (when_true, when_false) = defined_names(&i.expr);
                self.guarded_walk(when_true, |checker| checker.body(&i.true_body));
                self.guarded_walk(when_false, |checker| checker.body(&i.false_body));
            }
            Stmt::WithBlock(w) => {
                let mut names = Vec::new();
                // Jinja2 evaluates every value of `{% with a=1, b=a %}`
                // before it binds any name (`b` is the outer `a`);
                // minijinja binds each in turn.
                let mut reads_earlier = false;
                for (target, value) in &w.assignments {
                    self.target(target);
                    let outer = std::mem::take(&mut self.reads);
                    self.expr(value);
                    let read = std::mem::replace(&mut self.reads, outer);
                    reads_earlier |= read.iter().any(|name| names.contains(&name.as_str()));
                    self.reads.extend(read);
                    target_names(target, &mut names);
                }
                if reads_earlier {
                    self.with_values_first(w);
                }
                self.binds.push(names);
                self.body(&w.body);
                self.binds.pop();
            }
            Stmt::Set(s) => {
                self.bind_here(&s.target);
                self.target(&s.target);
                // A value kept across loop passes can grow on each: what a
                // filter or call makes is counted when it is kept.
                if matches!(s.expr, ast::Expr::Filter(_) | ast::Expr::Call(_)) {
                    self.bound(&s.expr);
                }
                self.expr(&s.expr);
            }
            Stmt::SetBlock(s) => {
                self.bind_here(&s.target);
                self.target(&s.target);
                self.opt(&s.filter);
                self.body(&s.body);
            }
            Stmt::AutoEscape(a) => {
                if let ast::Expr::Var(var) = &a.enabled {
                    let replacement = match var.id {
                        "off" => Some("false"),
                        "on" => Some("true"),
                        _ => None,
                    };
                    if let Some(replacement) = replacement {
                        let span = var.span();
                        self.edits.push(Edit {
                            original: span.start_offset as usize..span.end_offset as usize,
                            replacement: replacement.to_string(),
                        });
                    } else {
                        self.expr(&a.enabled);
                    }
                } else {
                    self.expr(&a.enabled);
                }
                self.body(&a.body);
            }
            Stmt::FilterBlock(f) => {
                self.expr(&f.filter);
                self.body(&f.body);
            }
            Stmt::Block(b) => self.block(b, b.span().start_offset as usize),
            Stmt::Import(i) => {
                self.other_file(Tag::Import, &i.expr, i.span(), false, Vec::new());
                self.expr(&i.expr);
                self.target(&i.name);
            }
            Stmt::FromImport(i) => {
                let imported = i
                    .names
                    .iter()
                    .filter_map(|(name, _)| match name {
                        ast::Expr::Var(var) => Some((var.id.to_string(), range(var.span()))),
                        _ => None,
                    })
                    .collect();
                self.other_file(Tag::FromImport, &i.expr, i.span(), false, imported);
                self.expr(&i.expr);
                for (name, alias) in &i.names {
                    self.target(alias.as_ref().unwrap_or(name));
                }
            }
            Stmt::Extends(e) => {
                self.other_file(Tag::Extends, &e.name, e.span(), false, Vec::new());
                self.expr(&e.name);
            }
            Stmt::Include(i) => {
                self.includes.push(range(i.span()));
                self.other_file(
                    Tag::Include,
                    &i.name,
                    i.span(),
                    i.ignore_missing,
                    Vec::new(),
                );
                self.expr(&i.name);
            }
            Stmt::Macro(m) => {
                self.macro_decl(m);
                let (varargs, kwargs) = self.macro_catches.take().unwrap_or_default();
                if varargs || kwargs {
                    self.catching_macros
                        .push((range(m.span()), m.name, varargs, kwargs));
                }
            }
            Stmt::CallBlock(c) => {
                self.call(&c.call, c.call.span(), false);
                self.macro_decl(&c.macro_decl);
            }
            Stmt::Do(d) => self.call(&d.call, d.call.span(), true),
        }
    }

    /// A tag naming another template: noted when the template has other
    /// files to read (`files`). Without them (no include root) an
    /// `include`, `import` or `extends` can never resolve, and is a load
    /// error rather than a render that fails later. (`include … ignore
    /// missing` renders nothing then, as Jinja says.)
    fn other_file(
        &mut self,
        tag: Tag,
        name: &ast::Expr<'_>,
        statement: Span,
        ignore_missing: bool,
        imported: Vec<(String, Range<usize>)>,
    ) {
        let span = full_start(name)..name.span().end_offset as usize;
        if self.files {
            self.refs.push(Ref {
                tag,
                ignore_missing,
                choices: super::includes::choices(name),
                span,
                end: statement.end_offset as usize,
                imported,
            });
            return;
        }
        if ignore_missing {
            return;
        }
        let tag = tag.word();
        let what = match name {
            ast::Expr::Const(c) => match c.value.as_str() {
                Some(file) => format!("\"{file}\""),
                None => c.value.to_string(),
            },
            _ => "a computed name".to_string(),
        };
        self.problems.push((
            span,
            format!(
                "{{% {tag} %}} of {what} cannot be resolved: a Jinja prompt cannot read other template files"
            ),
            "unresolved-include",
        ));
    }

    /// minijinja folds an operator on constants into a constant while it
    /// compiles (`"x" * 100000000` is 100 MB at load): one too large is a
    /// `parse` error here, before it is built.
    fn check_folded(&mut self, expr: &ast::Expr<'_>) {
        let max_bytes = self.limits.max_value_bytes;
        let message = match folded(expr) {
            Some(Folded::Text(bytes)) if bytes > max_bytes as u128 => format!(
                "this constant expression builds a text of {bytes} bytes, more than {} (the limit max_value_bytes)",
                crate::limits::describe_bytes(max_bytes)
            ),
            Some(Folded::Items(items)) if items > self.limits.max_items as u128 => format!(
                "this constant expression builds a list of {items} items, more than {} (the limit max_items)",
                self.limits.max_items
            ),
            Some(Folded::Text(size) | Folded::Items(size)) => {
                // Many constants, each within the bound, may not add up
                // to gigabytes either.
                self.folded_total = self.folded_total.saturating_add(size);
                if self.folded_total <= max_bytes as u128 {
                    return;
                }
                format!(
                    "the constant expressions up to here build more than {} in all (the limit max_value_bytes)",
                    crate::limits::describe_bytes(max_bytes)
                )
            }
            _ => return,
        };
        self.problems.push((
            full_start(expr)..expr.span().end_offset as usize,
            message,
            "constant-too-large",
        ));
    }

    /// `a + b` where `a` or `b` is a safe string, in a chat template:
    /// `(a)|__markup_add(b)`, Python's `+` on a `Markup`.
    fn markup_add(&mut self, b: &ast::BinOp<'_>) {
        let Some(text) = self.markup else {
            return;
        };
        if !matches!(b.op, ast::BinOpKind::Add) || !(is_markup(&b.left) || is_markup(&b.right)) {
            return;
        }
        let start = full_start(&b.left);
        let (left_end, right_start) = (b.left.span().end_offset as usize, full_start(&b.right));
        let end = b.right.span().end_offset as usize;
        // The `+` itself, between the operands (which may close or open
        // parentheses of their own around it).
        let Some(plus) = text
            .get(left_end..right_start)
            .and_then(|gap| gap.find('+'))
            .map(|at| left_end + at)
        else {
            return;
        };
        // Along a chain (`a|safe + b + c`, nested to the left) the left
        // operand is already a filter call: the calls chain flat,
        // `(a|safe)|__markup_add(b)|__markup_add(c)`, adding no nesting.
        let chained = matches!(&b.left, ast::Expr::BinOp(_)) && is_markup(&b.left);
        let call = format!("|{}(", super::python::markup::MARKUP_ADD);
        let mut edits = Vec::with_capacity(3);
        if !chained {
            edits.push((start..start, "(".to_string()));
        }
        let close = if chained { "" } else { ")" };
        edits.push((plus..plus + 1, format!("{close}{call}")));
        edits.push((end..end, ")".to_string()));
        for (original, replacement) in edits {
            self.bounds.push(Edit {
                original,
                replacement,
            });
        }
    }

    /// Wraps `expr` in the bound check.
    fn bound(&mut self, expr: &ast::Expr<'_>) {
        let (start, end) = (full_start(expr), expr.span().end_offset as usize);
        for (at, text) in [(start, "("), (end, super::growth::BOUND_CLOSE)] {
            self.bounds.push(Edit {
                original: at..at,
                replacement: text.to_string(),
            });
        }
    }

    /// A `{% block %}` starting at `start`: inside a `for` or `with`, the
    /// names it reads that those bind are noted (a block does not see
    /// them unless it is `scoped`).
    fn block(&mut self, b: &ast::Block<'a>, start: usize) {
        self.blocks.push(b.name);
        self.block_body(b, start);
        self.blocks.pop();
    }

    fn block_body(&mut self, b: &ast::Block<'a>, start: usize) {
        if self.binds.is_empty() {
            self.body(&b.body);
            return;
        }
        let around: Vec<&'a str> = self.binds.iter().flatten().copied().collect();
        let (reads, bound) = (self.var_log.len(), self.bound_log.len());
        self.body(&b.body);
        let inside = self.bound_log.get(bound..).unwrap_or_default();
        let read = self.var_log.get(reads..).unwrap_or_default();
        if let Some((name, at)) = read
            .iter()
            .find(|(name, _)| around.contains(name) && !inside.contains(name))
        {
            self.unscoped.push((start, name, range(*at)));
        }
    }

    /// A `set` inside a `for` or `with` binds its names there.
    fn bind_here(&mut self, target: &ast::Expr<'a>) {
        if let Some(names) = self.binds.last_mut() {
            target_names(target, names);
        }
    }

    /// Notes in `found` every block that reads a name of the `for` loop or
    /// `with` block around it without being declared `scoped`: Jinja2
    /// renders the name undefined there (minijinja would see it).
    pub(super) fn block_scope_errors(&self, body: &str, found: &mut crate::diagnostics::Findings) {
        for (start, name, at) in &self.unscoped {
            // `block NAME [scoped] [required] %}`
            let head = body
                .get(*start..)
                .and_then(|rest| rest.split("%}").next())
                .unwrap_or_default();
            let mut words = head
                .split_whitespace()
                .map(|word| word.trim_matches(|c| c == '-' || c == '+'));
            let block = words.nth(1).unwrap_or("name");
            if words.any(|word| word == "scoped") {
                continue;
            }
            found.push(
                TemplateError::parse(
                    Some(at.clone()),
                    format!(
                        "block \"{block}\" reads \"{name}\", which the loop or `with` around it sets, but a Jinja block does not see those: Jinja2 renders \"{name}\" undefined here"
                    ),
                )
                .with_kind("unscoped-block")
                .suggest(Some(format!(
                    "declare the block scoped: {{% block {block} scoped %}}"
                ))),
            );
        }
    }

    fn macro_decl(&mut self, m: &ast::Macro<'a>) {
        if !self.binds.is_empty() {
            self.bound_log.push(m.name);
        }
        self.locals.insert(m.name);
        for arg in &m.args {
            self.target(arg);
        }
        for default in &m.defaults {
            self.expr(default);
        }
        let outer = std::mem::take(&mut self.reads);
        self.body(&m.body);
        let read = std::mem::replace(&mut self.reads, outer);
        // Jinja2's `varargs` and `kwargs` (see `macros`), unless the
        // macro names a parameter so.
        let declares = |name: &str| {
            m.args
                .iter()
                .any(|arg| matches!(arg, ast::Expr::Var(var) if var.id == name))
        };
        let catches = |name: &str| read.contains(name) && !declares(name);
        self.macro_catches = Some((catches("varargs"), catches("kwargs")));
        self.reads.extend(read);
    }

    /// Names bound by an assignment target.
    fn target(&mut self, target: &ast::Expr<'a>) {
        match target {
            ast::Expr::Var(var) => {
                if !self.binds.is_empty() {
                    self.bound_log.push(var.id);
                }
                self.locals.insert(var.id);
            }
            ast::Expr::List(list) => list.items.iter().for_each(|item| self.target(item)),
            ast::Expr::Tuple(tuple) => tuple.items.iter().for_each(|item| self.target(item)),
            other => self.expr(other),
        }
    }

    fn opt(&mut self, expr: &Option<ast::Expr<'a>>) {
        if let Some(expr) = expr {
            self.expr(expr);
        }
    }

    fn args(&mut self, args: &[ast::CallArg<'a>]) {
        for arg in args {
            self.expr(arg_expr(arg));
        }
    }

    /// Walks with `names` known to be defined.
    fn guarded_walk(&mut self, names: Vec<String>, walk: impl FnOnce(&mut Self)) {
        let depth = self.guarded.len();
        self.guarded.extend(names);
        walk(self);
        self.guarded.truncate(depth);
    }

    fn is_guarded(&self, name: &str) -> bool {
        self.guarded.iter().any(|guarded| guarded == name)
    }

    /// A call; `counted` unless it is a `{% call %}` block's (which passes
    /// `caller` on top of the arguments written).
    fn call(&mut self, call: &ast::Call<'a>, span: Span, counted: bool) {
        match &call.expr {
            ast::Expr::Var(var) => {
                if !self.binds.is_empty() {
                    self.var_log.push((var.id, var.span()));
                }
                self.reads.insert(var.id.to_string());
                if !self.is_guarded(var.id) {
                    if counted {
                        let from = var.span().start_offset as usize;
                        let end = (span.end_offset as usize).max(from);
                        self.count(Callable::Function, var.id, from..end, &call.args);
                        self.note_literals(Callable::Function, var.id, None, &call.args);
                    }
                    self.calls.push((var.id, var.span()));
                    self.note_host_call(var.id, span, None, &call.args);
                }
            }
            other => {
                if let ast::Expr::GetAttr(attr) = other {
                    if matches!(&attr.expr, ast::Expr::Var(var) if var.id == "self") {
                        let at = full_start(other)..span.end_offset as usize;
                        for block in &self.blocks {
                            self.block_calls.push((
                                block.to_string(),
                                attr.name.to_string(),
                                at.clone(),
                            ));
                        }
                    }
                }
                self.expr(other)
            }
        }
        self.args(&call.args);
    }

    fn expr(&mut self, expr: &ast::Expr<'a>) {
        use ast::Expr;
        match expr {
            Expr::Var(var) => {
                if !self.binds.is_empty() {
                    self.var_log.push((var.id, var.span()));
                }
                if var.id == "loop" && self.loops == 0 && self.loose_loop.is_none() {
                    self.loose_loop = Some(range(var.span()));
                }
                if var.id == "role" {
                    // `role` passed on as a value (`{% set f = role %}`)
                    // could be called with anything: the same refusal as
                    // a call with a computed role.
                    self.computed_roles.push(range(var.span()));
                }
                self.reads.insert(var.id.to_string());
            }
            Expr::Const(_) => {}
            Expr::Slice(s) => {
                self.expr(&s.expr);
                self.opt(&s.start);
                self.opt(&s.stop);
                self.opt(&s.step);
            }
            Expr::UnaryOp(u) => self.expr(&u.expr),
            Expr::BinOp(b) => {
                // Each wrap is a pair of parentheses, and minijinja's parser
                // takes about 70 nested: along a chain (`a ~ b ~ c ~ …`,
                // nested to the left) every fourth operator is checked, and
                // the last, so a value grows at most four operators
                // unchecked.
                let chain = std::mem::take(&mut self.chain);
                // Before the bound check: its closing parenthesis goes
                // after the rewrite's.
                self.markup_add(b);
                if builds_value(b) && chain.is_multiple_of(CHAIN_STRIDE) {
                    self.bound(expr);
                }
                self.check_folded(expr);
                if matches!(&b.left, Expr::BinOp(left) if builds_value(left)) {
                    self.chain = chain + 1;
                }
                self.expr(&b.left);
                self.chain = 0;
                self.expr(&b.right);
            }
            Expr::Compare(c) => {
                self.expr(&c.expr);
                for op in &c.ops {
                    self.expr(&op.expr);
                }
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr);
                let (when_true, when_false) = defined_names(&i.test_expr);
                self.guarded_walk(when_true, |checker| checker.expr(&i.true_expr));
                self.guarded_walk(when_false, |checker| checker.opt(&i.false_expr));
            }
            Expr::Filter(f) => {
                let from = match &f.expr {
                    Some(inner) => inner.span().end_offset as usize,
                    None => f.span().start_offset as usize,
                };
                if !self.is_guarded(f.name) {
                    self.count(
                        Callable::Filter,
                        f.name,
                        from..f.span().end_offset as usize,
                        &f.args,
                    );
                    self.note_literals(Callable::Filter, f.name, f.expr.as_ref(), &f.args);
                    self.filters.push((f.name, from));
                    self.note_host_call(f.name, f.span(), f.expr.as_ref(), &f.args);
                }
                self.opt(&f.expr);
                self.args(&f.args);
            }
            Expr::Test(t) => {
                if !self.is_guarded(t.name) {
                    let from = t.expr.span().end_offset as usize;
                    self.count(
                        Callable::Test,
                        t.name,
                        from..t.span().end_offset as usize,
                        &t.args,
                    );
                    self.tests.push((t.name, t.expr.span().end_offset as usize));
                }
                self.expr(&t.expr);
                self.args(&t.args);
            }
            Expr::GetAttr(g) => self.expr(&g.expr),
            Expr::GetItem(g) => {
                self.expr(&g.expr);
                self.expr(&g.subscript_expr);
            }
            Expr::Call(c) => self.call(c, c.span(), true),
            Expr::List(l) => l.items.iter().for_each(|item| self.expr(item)),
            Expr::Tuple(t) => t.items.iter().for_each(|item| self.expr(item)),
            Expr::Map(m) => {
                m.keys.iter().for_each(|key| self.expr(key));
                m.values.iter().for_each(|value| self.expr(value));
            }
        }
    }
}

/// The names an assignment target binds.
fn target_names<'a>(target: &ast::Expr<'a>, names: &mut Vec<&'a str>) {
    match target {
        ast::Expr::Var(var) => names.push(var.id),
        ast::Expr::List(list) => list.items.iter().for_each(|item| target_names(item, names)),
        ast::Expr::Tuple(tuple) => tuple
            .items
            .iter()
            .for_each(|item| target_names(item, names)),
        _ => {}
    }
}

/// The chat-prompt warnings of a Jinja body (see [`crate::analysis::chat`]).
pub(super) fn chat_warnings(stmts: &[ast::Stmt<'_>], top: bool, out: &mut Vec<TemplateError>) {
    use crate::analysis::chat::Item;
    use ast::Stmt;
    let marker = |expr: &ast::Expr<'_>| match expr {
        ast::Expr::Call(call) => match &call.expr {
            ast::Expr::Var(var) if matches!(var.id, "role" | "history") => {
                let span = full_start(expr)..expr.span().end_offset as usize;
                Some(if var.id == "role" {
                    Item::Role(span)
                } else {
                    Item::History(span)
                })
            }
            _ => None,
        },
        _ => None,
    };
    let mut items = Vec::new();
    for stmt in stmts {
        let item = match stmt {
            Stmt::EmitRaw(raw) if raw.raw.trim().is_empty() => Item::Blank,
            Stmt::EmitRaw(raw) => {
                // The text itself, without the whitespace around it.
                let start =
                    raw.span().start_offset as usize + raw.raw.len() - raw.raw.trim_start().len();
                Item::Print(start..start + raw.raw.trim().len())
            }
            Stmt::EmitExpr(emit) => marker(&emit.expr).unwrap_or_else(|| {
                Item::Print(full_start(&emit.expr)..emit.expr.span().end_offset as usize)
            }),
            Stmt::Set(_) | Stmt::Macro(_) | Stmt::Import(_) | Stmt::FromImport(_) => Item::Blank,
            Stmt::IfCond(i) => {
                chat_warnings(&i.true_body, false, out);
                chat_warnings(&i.false_body, false, out);
                Item::Other
            }
            Stmt::ForLoop(f) => {
                chat_warnings(&f.body, false, out);
                chat_warnings(&f.else_body, false, out);
                Item::Other
            }
            Stmt::WithBlock(w) => {
                chat_warnings(&w.body, false, out);
                Item::Other
            }
            _ => Item::Other,
        };
        items.push(item);
    }
    out.extend(crate::analysis::chat::warnings(&items, top));
}

/// Where `expr` starts in the text: minijinja's span of a postfix
/// expression (a filter, test, attribute, item, slice or call) starts at
/// the postfix, after the expression it applies to.
pub(super) fn full_start(expr: &ast::Expr<'_>) -> usize {
    use ast::Expr;
    let own = expr.span().start_offset as usize;
    let base = match expr {
        Expr::Filter(f) => f.expr.as_ref(),
        Expr::Test(t) => Some(&t.expr),
        Expr::GetAttr(g) => Some(&g.expr),
        Expr::GetItem(g) => Some(&g.expr),
        Expr::Slice(s) => Some(&s.expr),
        Expr::Call(c) => Some(&c.expr),
        _ => None,
    };
    base.map_or(own, |base| own.min(full_start(base)))
}

/// Along a chain of operators, every this many is checked.
const CHAIN_STRIDE: usize = 4;

/// What minijinja folds a constant expression into, as far as its size
/// goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Folded {
    /// A string of this many bytes.
    Text(u128),
    /// A list of this many items.
    Items(u128),
    /// An integer (a repetition count).
    Int(i128),
    /// Any other constant.
    Other,
}

/// The constant `expr` folds into, if it is one: literals, and `*`, `~`
/// and `+` of constants.
fn folded(expr: &ast::Expr<'_>) -> Option<Folded> {
    use ast::{BinOpKind, Expr};
    match expr {
        Expr::Const(c) => Some(if let Some(text) = c.value.as_str() {
            Folded::Text(text.len() as u128)
        } else if let Ok(int) = i128::try_from(c.value.clone()) {
            Folded::Int(int)
        } else if let Some(len) = c.value.len() {
            Folded::Items(len as u128)
        } else {
            Folded::Other
        }),
        Expr::List(list) => list
            .items
            .iter()
            .all(|item| folded(item).is_some())
            .then_some(Folded::Items(list.items.len() as u128)),
        Expr::BinOp(b) => {
            let (left, right) = (folded(&b.left)?, folded(&b.right)?);
            let times = |n: u128, k: i128| n.saturating_mul(u128::try_from(k).unwrap_or(0));
            // An integer prints as at most 40 characters.
            let text = |value: Folded| match value {
                Folded::Text(n) => n,
                _ => 40,
            };
            Some(match (b.op, left, right) {
                (BinOpKind::Mul, Folded::Text(n), Folded::Int(k))
                | (BinOpKind::Mul, Folded::Int(k), Folded::Text(n)) => Folded::Text(times(n, k)),
                (BinOpKind::Mul, Folded::Items(n), Folded::Int(k))
                | (BinOpKind::Mul, Folded::Int(k), Folded::Items(n)) => Folded::Items(times(n, k)),
                (BinOpKind::Mul, Folded::Int(x), Folded::Int(y)) => {
                    Folded::Int(x.saturating_mul(y))
                }
                (BinOpKind::Add, Folded::Int(x), Folded::Int(y)) => {
                    Folded::Int(x.saturating_add(y))
                }
                (BinOpKind::Add, Folded::Text(a), Folded::Text(b)) => Folded::Text(a + b),
                (BinOpKind::Add, Folded::Items(a), Folded::Items(b)) => Folded::Items(a + b),
                (BinOpKind::Concat, left, right) => Folded::Text(text(left) + text(right)),
                _ => Folded::Other,
            })
        }
        _ => None,
    }
}

/// True for an operator that can build a value larger than its operands
/// (`~`, `+` and `*` on strings and lists), unless minijinja folds it into
/// a constant or a number is added (the sum is a number, or an error).
/// Whether `expr` is a safe string in Jinja2 (a `Markup`): a `safe` or
/// `escape` filter, or a `+` with one as an operand.
fn is_markup(expr: &ast::Expr<'_>) -> bool {
    match expr {
        ast::Expr::Filter(f) => super::python::markup::MARKUP_FILTERS.contains(&f.name),
        ast::Expr::BinOp(b) => {
            matches!(b.op, ast::BinOpKind::Add) && (is_markup(&b.left) || is_markup(&b.right))
        }
        _ => false,
    }
}

fn builds_value(op: &ast::BinOp<'_>) -> bool {
    use ast::BinOpKind;
    let constant = |expr: &ast::Expr<'_>| matches!(expr, ast::Expr::Const(_));
    let number = |expr: &ast::Expr<'_>| matches!(expr, ast::Expr::Const(c) if c.value.is_number());
    let folded = constant(&op.left) && constant(&op.right);
    match op.op {
        BinOpKind::Concat | BinOpKind::Mul => !folded,
        BinOpKind::Add => !(folded || number(&op.left) || number(&op.right)),
        _ => false,
    }
}

/// The names a test proves defined when it is true, and when it is false:
/// `x is defined` (also under `and`), `x is not defined` / `not x is
/// defined` (also under `or`, for the false side), and `"f" is filter` /
/// `"f" is test` for filters and tests.
fn defined_names(test: &ast::Expr<'_>) -> (Vec<String>, Vec<String>) {
    use ast::{BinOpKind, Expr, UnaryOpKind};
    let none = || (Vec::new(), Vec::new());
    match test {
        Expr::Test(t) => {
            let name = match (&t.expr, t.name) {
                (Expr::Var(var), "defined" | "undefined") => var.id.to_string(),
                (Expr::Const(c), "filter" | "test") => match c.value.as_str() {
                    Some(name) => name.to_string(),
                    None => return none(),
                },
                _ => return none(),
            };
            match t.name {
                "undefined" => (Vec::new(), vec![name]),
                _ => (vec![name], Vec::new()),
            }
        }
        Expr::UnaryOp(u) if matches!(u.op, UnaryOpKind::Not) => {
            let (when_true, when_false) = defined_names(&u.expr);
            (when_false, when_true)
        }
        Expr::BinOp(b) if matches!(b.op, BinOpKind::ScAnd) => {
            let (mut left, _) = defined_names(&b.left);
            let (right, _) = defined_names(&b.right);
            left.extend(right);
            (left, Vec::new())
        }
        Expr::BinOp(b) if matches!(b.op, BinOpKind::ScOr) => {
            let (_, mut left) = defined_names(&b.left);
            let (_, right) = defined_names(&b.right);
            left.extend(right);
            (Vec::new(), left)
        }
        _ => none(),
    }
}

/// The span of `name` in the body, searching from `from` (the end of the
/// filtered or tested expression).
fn name_span(body: &str, name: &str, from: usize) -> Option<Range<usize>> {
    let start = from + body.get(from..)?.find(name)?;
    Some(start..start + name.len())
}

fn unknown(what: &str, name: &str, span: Option<Range<usize>>, known: &[&str]) -> TemplateError {
    let kind = match what {
        "filter" => "unknown-filter",
        "test" => "unknown-test",
        _ => "unknown-function",
    };
    TemplateError::parse(span, format!("unknown {what} \"{name}\""))
        .with_kind(kind)
        .suggest(closest(name, known.iter().copied()).map(|c| format!("did you mean \"{c}\"?")))
}

/// The expression a call argument passes, whatever its kind (positional,
/// keyword, `*args`, `**kwargs`).
pub(super) fn arg_expr<'e, 'a>(arg: &'e ast::CallArg<'a>) -> &'e ast::Expr<'a> {
    match arg {
        ast::CallArg::Pos(e)
        | ast::CallArg::Kwarg(_, e)
        | ast::CallArg::PosSplat(e)
        | ast::CallArg::KwargSplat(e) => e,
    }
}

/// The span of the first `{% import … as NAME %}` whose `NAME` cannot be
/// assigned to (minijinja parses it as any expression: `as f.keys()`).
pub(super) fn unassignable_import(stmt: &ast::Stmt<'_>) -> Option<std::ops::Range<usize>> {
    fn assignable(expr: &ast::Expr<'_>) -> bool {
        match expr {
            ast::Expr::Var(_) | ast::Expr::GetAttr(_) => true,
            ast::Expr::List(list) => list.items.iter().all(assignable),
            _ => false,
        }
    }
    fn first(stmts: &[ast::Stmt<'_>]) -> Option<std::ops::Range<usize>> {
        stmts.iter().find_map(unassignable_import)
    }
    match stmt {
        ast::Stmt::Import(import) if !assignable(&import.name) => {
            Some(full_start(&import.name)..import.name.span().end_offset as usize)
        }
        ast::Stmt::Template(template) => first(&template.children),
        ast::Stmt::ForLoop(for_loop) => {
            first(&for_loop.body).or_else(|| first(&for_loop.else_body))
        }
        ast::Stmt::IfCond(cond) => first(&cond.true_body).or_else(|| first(&cond.false_body)),
        ast::Stmt::WithBlock(with) => first(&with.body),
        ast::Stmt::SetBlock(set) => first(&set.body),
        ast::Stmt::AutoEscape(block) => first(&block.body),
        ast::Stmt::FilterBlock(block) => first(&block.body),
        ast::Stmt::Block(block) => first(&block.body),
        ast::Stmt::Macro(m) => first(&m.body),
        ast::Stmt::CallBlock(call) => first(&call.macro_decl.body),
        _ => None,
    }
}

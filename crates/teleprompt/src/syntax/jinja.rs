//! Jinja syntax on minijinja.
//!
//! minijinja renders; this module fills its gaps for prompts:
//! - unknown filters, tests and functions are found at load time, in every
//!   branch (minijinja only notices them when that code runs);
//! - Django/pongo2 spellings `{% autoescape off %}` / `on` are accepted;
//! - the data is handed over as lazy objects over [`Data`], never converted
//!   up front, and a missing key is reported with its full path and the
//!   closest key that exists.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use minijinja::machinery::{self, ast, Span};
use minijinja::value::{Enumerator, Kwargs, Object, ObjectRepr, Rest};
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior, Value as JValue};
use serde_json::Value;

use crate::data::{path_to_string, Data, Segment, View};
use crate::diagnostics::{closest, TemplateError};
use crate::functions::Functions;
use crate::syntax::edits::{Edit, Edited};
use crate::syntax::CompileOptions;
use crate::Strictness;
use crate::{functions, messages};

const TEMPLATE_NAME: &str = "prompt";

/// Upper bound on the VM instructions of one render: stops runaway loops.
const FUEL: u64 = 50_000_000;

/// minijinja 3.0.5's built-in filters (with the features we enable), plus ours.
const FILTERS: &[&str] = &[
    "safe",
    "escape",
    "e",
    "lower",
    "upper",
    "title",
    "capitalize",
    "replace",
    "length",
    "count",
    "dictsort",
    "items",
    "reverse",
    "trim",
    "join",
    "split",
    "lines",
    "default",
    "d",
    "round",
    "abs",
    "int",
    "float",
    "attr",
    "first",
    "last",
    "min",
    "max",
    "sort",
    "list",
    "string",
    "bool",
    "batch",
    "slice",
    "sum",
    "indent",
    "select",
    "reject",
    "selectattr",
    "rejectattr",
    "map",
    "groupby",
    "unique",
    "chain",
    "zip",
    "pprint",
    "format",
    "tojson",
    "toJSON",
];

/// minijinja 3.0.5's built-in tests.
const TESTS: &[&str] = &[
    "undefined",
    "defined",
    "none",
    "safe",
    "escaped",
    "boolean",
    "odd",
    "even",
    "divisibleby",
    "number",
    "integer",
    "int",
    "float",
    "string",
    "sequence",
    "iterable",
    "mapping",
    "startingwith",
    "endingwith",
    "lower",
    "upper",
    "sameas",
    "eq",
    "equalto",
    "==",
    "ne",
    "!=",
    "lt",
    "lessthan",
    "<",
    "le",
    "<=",
    "gt",
    "greaterthan",
    ">",
    "ge",
    ">=",
    "in",
    "true",
    "false",
    "filter",
    "test",
];

/// Names a template may call without defining them.
const IMPLICIT_CALLABLES: &[&str] = &["loop", "caller", "super", "self", "varargs", "kwargs"];

/// A compiled Jinja body.
pub(crate) struct JinjaTemplate {
    env: Environment<'static>,
    /// The pongo2 spellings rewritten for minijinja, to place errors on
    /// the body as written.
    source: Edited,
    /// The body as written, for placing render errors.
    body: String,
    /// Names the template reads at any level (an over-approximation of the
    /// root names it uses).
    reads: BTreeSet<String>,
}

impl fmt::Debug for JinjaTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JinjaTemplate").finish_non_exhaustive()
    }
}

impl JinjaTemplate {
    pub(crate) fn compile(
        body: &str,
        options: &CompileOptions,
    ) -> Result<JinjaTemplate, TemplateError> {
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
            .map_err(|error| TemplateError::parse(None, error.to_string()))?;
        let mut env = Environment::new();
        env.set_syntax(syntax.clone());
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_undefined_behavior(match options.strictness {
            Strictness::Strict => UndefinedBehavior::Strict,
            Strictness::Semi => UndefinedBehavior::SemiStrict,
            Strictness::Lenient => UndefinedBehavior::Chainable,
        });
        env.set_fuel(Some(FUEL));
        // Python's methods on values, as Jinja2 has them: `.items()`,
        // `.get()`, `.strip()`, `.startswith()`… (Hugging Face chat templates).
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        guard_collection_filters(&mut env);
        env.add_filter("tojson", tojson_filter);
        env.add_filter("toJSON", tojson_filter);
        env.add_function("role", |name: &str| {
            template_call(messages::emit_role(name))
        });
        env.add_function("history", || template_call(messages::emit_history()));
        // Hugging Face chat templates stop a render with this global.
        env.add_function(
            "raise_exception",
            |message: &str| -> Result<String, minijinja::Error> {
                Err(minijinja::Error::new(
                    ErrorKind::InvalidOperation,
                    message.to_string(),
                ))
            },
        );
        env.add_function("media", |url: &str, content_type: &str| {
            template_call(messages::emit_media(url, content_type))
        });
        register_host_functions(&mut env, &options.functions)?;
        let filters: Vec<&str> = FILTERS
            .iter()
            .copied()
            .chain(options.functions.names())
            .collect();

        let (edits, reads) = {
            let ast = machinery::parse(body, TEMPLATE_NAME, syntax.clone()).map_err(|error| {
                unclosed_block_error(&error, body, syntax.clone())
                    .unwrap_or_else(|| convert_error(&error, body, &Edited::default(), None))
            })?;
            let functions: HashSet<String> = env
                .globals()
                .map(|(name, _)| name.to_string())
                .chain(IMPLICIT_CALLABLES.iter().map(|name| name.to_string()))
                .collect();
            let mut checker = Checker::default();
            checker.stmt(&ast);
            checker.verdict(body, &functions, &filters)?;
            (checker.edits, checker.reads)
        };
        let source = Edited::new(body, edits);
        env.add_template_owned(TEMPLATE_NAME, source.text.clone())
            .map_err(|error| convert_error(&error, body, &source, None))?;
        Ok(JinjaTemplate {
            env,
            source,
            body: body.to_string(),
            reads,
        })
    }

    /// Names the template may read from the root of the data.
    pub(crate) fn reads(&self) -> &BTreeSet<String> {
        &self.reads
    }

    pub(crate) fn render(&self, data: &Data) -> Result<String, TemplateError> {
        let misses = Arc::new(MissLog::default());
        let root = JValue::from_object(Node::root(data.clone(), misses.clone()));
        let template = self
            .env
            .get_template(TEMPLATE_NAME)
            .map_err(|error| TemplateError::render(None, error.to_string()))?;
        template
            .render(root)
            .map_err(|error| convert_error(&error, &self.body, &self.source, Some((&misses, data))))
    }
}

/// An undefined value that no missing key explains: a key read on a
/// string or number, or an index past the end of a list. Says which, when
/// the expression is a path into the data.
fn undefined_error(body: &str, span: Option<Range<usize>>, data: &Data) -> TemplateError {
    let Some(span) = span else {
        return TemplateError::render(None, "this value is undefined");
    };
    let range = expression_around(body, span.start);
    let text = body
        .get(range.clone())
        .unwrap_or_default()
        .trim_matches('.');
    let message = broken_step(text, data).unwrap_or_else(|| format!("`{text}` is undefined"));
    TemplateError::render(Some(range), message)
}

/// Walks `a.b[2].c` through the data and describes the first step that
/// does not exist; `None` when the path does not start in the data.
fn broken_step(path: &str, data: &Data) -> Option<String> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (name, indexes) = part
            .split_once('[')
            .map_or((part, ""), |(n, rest)| (n, rest));
        if !name.is_empty() {
            steps.push(Segment::Key(name.into()));
        }
        for index in indexes.split('[') {
            let index = index.trim_end_matches(']');
            if !index.is_empty() {
                steps.push(Segment::Index(index.parse().ok()?));
            }
        }
    }
    let mut view = data.root();
    let mut walked: Vec<Segment> = Vec::new();
    for step in steps {
        let next = match &step {
            Segment::Key(key) => view.get(key),
            Segment::Index(index) => view.index(*index),
        };
        let Some(next) = next else {
            if walked.is_empty() {
                return None;
            }
            let at = path_to_string(&walked);
            return Some(match (&step, view.value()) {
                (Segment::Index(index), Value::Array(items)) => format!(
                    "{at} has {} element(s): there is no {at}[{index}]",
                    items.len()
                ),
                (Segment::Key(key), Value::Object(_)) => format!("{at} has no key \"{key}\""),
                (Segment::Key(key), other) => format!(
                    "{at} is {}, so it has no key \"{key}\"",
                    crate::data::describe(other)
                ),
                (Segment::Index(index), other) => format!(
                    "{at} is {}, so it has no element {index}",
                    crate::data::describe(other)
                ),
            });
        };
        walked.push(step);
        view = next;
    }
    None
}

/// Block tags that need an `end…` tag (`set` only in its block form).
const BLOCK_TAGS: &[&str] = &[
    "for",
    "if",
    "macro",
    "call",
    "filter",
    "with",
    "autoescape",
    "block",
    "set",
];

/// For "unexpected end of input": names the innermost block left open and
/// points at its opening tag, as the Go syntax does (`this if has no
/// {{end}}`), instead of at the end of the file.
fn unclosed_block_error(
    error: &minijinja::Error,
    body: &str,
    syntax: minijinja::syntax::SyntaxConfig,
) -> Option<TemplateError> {
    if !error.detail()?.starts_with("unexpected end of input") {
        return None;
    }
    use minijinja::machinery::Token;
    let mut open: Vec<(&str, usize)> = Vec::new();
    let mut tokens = machinery::tokenize(body, false, syntax).map_while(Result::ok);
    while let Some((token, span)) = tokens.next() {
        if !matches!(token, Token::BlockStart) {
            continue;
        }
        let Some((Token::Ident(word), _)) = tokens.next() else {
            continue;
        };
        let mut assigns = false;
        for (token, _) in tokens.by_ref() {
            match token {
                Token::Assign => assigns = true,
                Token::BlockEnd => break,
                _ => {}
            }
        }
        let start = span.start_offset as usize;
        if let Some(closed) = word.strip_prefix("end") {
            if open.last().is_some_and(|(name, _)| *name == closed) {
                open.pop();
            }
        } else if BLOCK_TAGS.contains(&word) && !(word == "set" && assigns) {
            open.push((word, start));
        }
    }
    let (word, start) = open.pop()?;
    let tag_end = body
        .get(start..)
        .and_then(|rest| rest.find("%}"))
        .map_or(body.len(), |i| start + i + 2);
    Some(
        TemplateError::parse(
            Some(start..tag_end),
            format!("unexpected end of template: this {word} has no {{% end{word} %}}"),
        )
        .suggest(Some(format!("add {{% end{word} %}} where it should end"))),
    )
}

/// Turns a minijinja error into a [`TemplateError`] on the body as written.
fn convert_error(
    error: &minijinja::Error,
    body: &str,
    source: &Edited,
    render: Option<(&MissLog, &Data)>,
) -> TemplateError {
    let span = error
        .range()
        .map(|range| source.to_original(range.start)..source.to_original(range.end))
        .or_else(|| {
            let line = error.line()?;
            let start = body
                .split_inclusive('\n')
                .take(line.saturating_sub(1))
                .map(str::len)
                .sum::<usize>();
            let end = body[start.min(body.len())..]
                .find('\n')
                .map_or(body.len(), |i| start + i);
            Some(start..end)
        });
    let detail = error.detail().map(str::to_string);
    let kind = error.kind();
    let generic = || match &detail {
        Some(detail) => format!("{kind}: {detail}"),
        None => kind.to_string(),
    };
    let Some((misses, data)) = render else {
        // Syntax errors point at a place, not at an action to quote.
        let span = span.map(|span| span.start..span.start);
        return TemplateError::parse(span, generic());
    };
    if kind == ErrorKind::OutOfFuel {
        return TemplateError::render(
            span,
            format!("the template ran too long (more than {FUEL} steps); is a loop unbounded?"),
        );
    }
    if kind == ErrorKind::UndefinedError {
        if let Some((miss, span)) = misses.explain(body, span.clone()) {
            return miss.to_error(Some(span), data);
        }
        return undefined_error(body, span, data);
    }
    TemplateError::render(span, generic())
}

/// Walks the AST at load time: finds unknown filters, tests and functions,
/// and the pongo2 autoescape spellings to rewrite.
#[derive(Default)]
struct Checker<'a> {
    filters: Vec<(&'a str, usize)>,
    tests: Vec<(&'a str, usize)>,
    calls: Vec<(&'a str, Span)>,
    locals: HashSet<&'a str>,
    /// Every variable name read anywhere (local or not).
    reads: BTreeSet<String>,
    edits: Vec<Edit>,
}

impl<'a> Checker<'a> {
    fn verdict(
        &self,
        body: &str,
        functions: &HashSet<String>,
        filters: &[&str],
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
        // Report the first problem in the text.
        match problems
            .into_iter()
            .min_by_key(|problem| problem.span.as_ref().map_or(usize::MAX, |s| s.start))
        {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }

    fn body(&mut self, stmts: &[ast::Stmt<'a>]) {
        for stmt in stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &ast::Stmt<'a>) {
        use ast::Stmt;
        match stmt {
            Stmt::Template(t) => self.body(&t.children),
            Stmt::EmitExpr(e) => self.expr(&e.expr),
            Stmt::EmitRaw(_) | Stmt::Continue(_) | Stmt::Break(_) => {}
            Stmt::ForLoop(f) => {
                self.target(&f.target);
                self.expr(&f.iter);
                self.opt(&f.filter_expr);
                self.body(&f.body);
                self.body(&f.else_body);
            }
            Stmt::IfCond(i) => {
                self.expr(&i.expr);
                self.body(&i.true_body);
                self.body(&i.false_body);
            }
            Stmt::WithBlock(w) => {
                for (target, value) in &w.assignments {
                    self.target(target);
                    self.expr(value);
                }
                self.body(&w.body);
            }
            Stmt::Set(s) => {
                self.target(&s.target);
                self.expr(&s.expr);
            }
            Stmt::SetBlock(s) => {
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
            Stmt::Block(b) => self.body(&b.body),
            Stmt::Import(i) => {
                self.expr(&i.expr);
                self.target(&i.name);
            }
            Stmt::FromImport(i) => {
                self.expr(&i.expr);
                for (name, alias) in &i.names {
                    self.target(alias.as_ref().unwrap_or(name));
                }
            }
            Stmt::Extends(e) => self.expr(&e.name),
            Stmt::Include(i) => self.expr(&i.name),
            Stmt::Macro(m) => self.macro_decl(m),
            Stmt::CallBlock(c) => {
                self.call(&c.call);
                self.macro_decl(&c.macro_decl);
            }
            Stmt::Do(d) => self.call(&d.call),
        }
    }

    fn macro_decl(&mut self, m: &ast::Macro<'a>) {
        self.locals.insert(m.name);
        for arg in &m.args {
            self.target(arg);
        }
        for default in &m.defaults {
            self.expr(default);
        }
        self.body(&m.body);
    }

    /// Names bound by an assignment target.
    fn target(&mut self, target: &ast::Expr<'a>) {
        match target {
            ast::Expr::Var(var) => {
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
            match arg {
                ast::CallArg::Pos(e)
                | ast::CallArg::Kwarg(_, e)
                | ast::CallArg::PosSplat(e)
                | ast::CallArg::KwargSplat(e) => self.expr(e),
            }
        }
    }

    fn call(&mut self, call: &ast::Call<'a>) {
        match &call.expr {
            ast::Expr::Var(var) => {
                self.reads.insert(var.id.to_string());
                self.calls.push((var.id, var.span()));
            }
            other => self.expr(other),
        }
        self.args(&call.args);
    }

    fn expr(&mut self, expr: &ast::Expr<'a>) {
        use ast::Expr;
        match expr {
            Expr::Var(var) => {
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
                self.expr(&b.left);
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
                self.expr(&i.true_expr);
                self.opt(&i.false_expr);
            }
            Expr::Filter(f) => {
                let from = match &f.expr {
                    Some(inner) => inner.span().end_offset as usize,
                    None => f.span().start_offset as usize,
                };
                self.filters.push((f.name, from));
                self.opt(&f.expr);
                self.args(&f.args);
            }
            Expr::Test(t) => {
                self.tests.push((t.name, t.expr.span().end_offset as usize));
                self.expr(&t.expr);
                self.args(&t.args);
            }
            Expr::GetAttr(g) => self.expr(&g.expr),
            Expr::GetItem(g) => {
                self.expr(&g.expr);
                self.expr(&g.subscript_expr);
            }
            Expr::Call(c) => self.call(c),
            Expr::List(l) => l.items.iter().for_each(|item| self.expr(item)),
            Expr::Tuple(t) => t.items.iter().for_each(|item| self.expr(item)),
            Expr::Map(m) => {
                m.keys.iter().for_each(|key| self.expr(key));
                m.values.iter().for_each(|value| self.expr(value));
            }
        }
    }
}

/// The span of `name` in the body, searching from `from` (the end of the
/// filtered or tested expression).
fn name_span(body: &str, name: &str, from: usize) -> Option<Range<usize>> {
    let start = from + body.get(from..)?.find(name)?;
    Some(start..start + name.len())
}

fn unknown(what: &str, name: &str, span: Option<Range<usize>>, known: &[&str]) -> TemplateError {
    TemplateError::parse(span, format!("unknown {what} \"{name}\""))
        .suggest(closest(name, known.iter().copied()).map(|c| format!("did you mean \"{c}\"?")))
}

/// The last keys a render looked up and did not find. minijinja's errors
/// say only "undefined value"; these name the path that was missing.
#[derive(Debug, Default)]
struct MissLog {
    recent: Mutex<Vec<Miss>>,
}

/// How many recent misses to keep: a failing expression is explained by one
/// of the last few lookups (later probes, such as globals, come after it).
const RECENT_MISSES: usize = 8;

#[derive(Debug)]
struct Miss {
    parent: Vec<Segment>,
    key: String,
}

impl MissLog {
    fn record(&self, parent: &[Segment], key: &str) {
        if let Ok(mut recent) = self.recent.lock() {
            if recent.len() == RECENT_MISSES {
                recent.remove(0);
            }
            recent.push(Miss {
                parent: parent.to_vec(),
                key: key.to_string(),
            });
        }
    }

    /// The most recent miss whose key the failing source names, and the span
    /// of the expression naming it: inside the error's span if it is there,
    /// else on the same line (minijinja may point at a filter instead).
    fn explain(&self, body: &str, span: Option<Range<usize>>) -> Option<(Miss, Range<usize>)> {
        let span = span?;
        let line_start = body.get(..span.start)?.rfind('\n').map_or(0, |i| i + 1);
        let line_end = body
            .get(span.start..)?
            .find('\n')
            .map_or(body.len(), |i| span.start + i)
            .max(span.end);
        let mut recent = self.recent.lock().ok()?;
        let found = recent.iter().rposition(|miss| {
            body.get(span.clone())
                .is_some_and(|text| contains_word(text, &miss.key))
        });
        if let Some(index) = found {
            return Some((recent.remove(index), span));
        }
        let line = body.get(line_start..line_end)?;
        let (index, at) =
            recent.iter().enumerate().rev().find_map(|(index, miss)| {
                Some((index, line_start + find_word(line, &miss.key)?))
            })?;
        Some((recent.remove(index), expression_around(body, at)))
    }
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where `word` occurs in `text` as a whole name.
fn find_word(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = text.get(..i).and_then(|t| t.chars().next_back());
        let after = text.get(i + word.len()..).and_then(|t| t.chars().next());
        !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char)
    })
}

fn contains_word(text: &str, word: &str) -> bool {
    find_word(text, word).is_some()
}

/// The dotted expression (`issue.labels[0].name`) around byte `at`.
fn expression_around(body: &str, at: usize) -> Range<usize> {
    let part = |c: char| is_name_char(c) || matches!(c, '.' | '[' | ']');
    let start = body
        .get(..at)
        .and_then(|t| t.char_indices().rev().find(|(_, c)| !part(*c)))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = body
        .get(at..)
        .and_then(|t| t.char_indices().find(|(_, c)| !part(*c)))
        .map_or(body.len(), |(i, _)| at + i);
    start..end
}

impl Miss {
    fn to_error(&self, span: Option<Range<usize>>, data: &Data) -> TemplateError {
        let parent = path_to_string(&self.parent);
        let message = if parent.is_empty() {
            format!("there is no variable \"{}\"", self.key)
        } else {
            format!("{parent} has no key \"{}\"", self.key)
        };
        let keys = data
            .lookup(&self.parent)
            .map(|view| view.keys())
            .unwrap_or_default();
        let suggestion = closest(&self.key, keys).map(|key| {
            let full = if parent.is_empty() {
                key.to_string()
            } else {
                format!("{parent}.{key}")
            };
            format!("did you mean \"{full}\"?")
        });
        TemplateError::render(span, message).suggest(suggestion)
    }
}

/// A lazy minijinja object over one object or array of the data.
///
/// A node is its parent plus one step (a key or an index), so reaching a
/// child costs one allocation (the node itself); its place in the data is
/// found again from the root when it is read.
#[derive(Debug)]
struct Node {
    place: Place,
}

#[derive(Debug)]
enum Place {
    /// The root of the render's data.
    Root {
        data: Data,
        misses: Arc<MissLog>,
    },
    /// A step below another node. A key is kept as minijinja's value (a
    /// shared string: no copy).
    Key(Arc<Node>, JValue),
    Index(Arc<Node>, usize),
}

impl Node {
    fn root(data: Data, misses: Arc<MissLog>) -> Node {
        Node {
            place: Place::Root { data, misses },
        }
    }

    fn view(&self) -> Option<View<'_>> {
        match &self.place {
            Place::Root { data, .. } => Some(data.root()),
            Place::Key(parent, key) => parent.view()?.get(key.as_str()?),
            Place::Index(parent, index) => parent.view()?.index(*index),
        }
    }

    /// The render's miss log, kept at the root.
    fn misses(&self) -> &MissLog {
        match &self.place {
            Place::Root { misses, .. } => misses,
            Place::Key(parent, _) | Place::Index(parent, _) => parent.misses(),
        }
    }

    /// The path from the root, for messages.
    fn path(&self) -> Vec<Segment> {
        let mut path = match &self.place {
            Place::Root { .. } => return Vec::new(),
            Place::Key(parent, _) | Place::Index(parent, _) => parent.path(),
        };
        match &self.place {
            Place::Key(_, key) => path.push(Segment::Key(key.as_str().unwrap_or_default().into())),
            Place::Index(_, index) => path.push(Segment::Index(*index)),
            Place::Root { .. } => {}
        }
        path
    }
}

/// The minijinja value of a child of `parent`: scalars as values, objects
/// and arrays as nodes.
fn child(parent: &Arc<Node>, place: impl FnOnce(Arc<Node>) -> Place, view: &View<'_>) -> JValue {
    match view.value() {
        Value::Object(_) | Value::Array(_) => JValue::from_object(Node {
            place: place(parent.clone()),
        }),
        scalar => scalar_value(scalar),
    }
}

fn scalar_value(value: &Value) -> JValue {
    match value {
        Value::Null => JValue::from(()),
        Value::Bool(b) => JValue::from(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                JValue::from(i)
            } else if let Some(u) = n.as_u64() {
                JValue::from(u)
            } else {
                JValue::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => JValue::from(s.as_str()),
        // Objects and arrays become `Node`s; this arm is not reached.
        Value::Array(_) | Value::Object(_) => JValue::from(()),
    }
}

impl Object for Node {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        match self.view().map(|view| view.value().is_array()) {
            Some(true) => ObjectRepr::Seq,
            _ => ObjectRepr::Map,
        }
    }

    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        let view = self.view()?;
        if let Value::Array(items) = view.value() {
            let index = key.as_i64()?;
            let index = if index < 0 {
                items.len().checked_sub(index.unsigned_abs() as usize)?
            } else {
                usize::try_from(index).ok()?
            };
            let found = view.index(index)?;
            return Some(child(self, |parent| Place::Index(parent, index), &found));
        }
        let name = key.as_str()?;
        match view.get(name) {
            Some(found) => Some(child(
                self,
                |parent| Place::Key(parent, key.clone()),
                &found,
            )),
            None => {
                self.misses().record(&self.path(), name);
                None
            }
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let Some(view) = self.view() else {
            return Enumerator::Empty;
        };
        match view.value() {
            Value::Array(items) => Enumerator::Seq(items.len()),
            _ => Enumerator::Values(view.keys().into_iter().map(JValue::from).collect()),
        }
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        self.view()?.len()
    }

    fn is_true(self: &Arc<Self>) -> bool {
        self.view().is_some_and(|view| !view.is_empty())
    }
}

/// minijinja's filters that take a collection, each with whether it takes
/// a map (rather than a list).
fn collection_filters() -> Vec<(&'static str, JValue, bool)> {
    use minijinja::filters as f;
    vec![
        ("join", JValue::from_function(f::join), false),
        ("length", JValue::from_function(f::length), false),
        ("count", JValue::from_function(f::length), false),
        ("first", JValue::from_function(f::first), false),
        ("last", JValue::from_function(f::last), false),
        ("list", JValue::from_function(f::list), false),
        ("sort", JValue::from_function(f::sort), false),
        ("reverse", JValue::from_function(f::reverse), false),
        ("unique", JValue::from_function(f::unique), false),
        ("sum", JValue::from_function(f::sum), false),
        ("min", JValue::from_function(f::min), false),
        ("max", JValue::from_function(f::max), false),
        ("batch", JValue::from_function(f::batch), false),
        ("slice", JValue::from_function(f::slice), false),
        ("map", JValue::from_function(f::map), false),
        ("select", JValue::from_function(f::select), false),
        ("reject", JValue::from_function(f::reject), false),
        ("selectattr", JValue::from_function(f::selectattr), false),
        ("rejectattr", JValue::from_function(f::rejectattr), false),
        ("groupby", JValue::from_function(f::groupby), false),
        ("chain", JValue::from_function(f::chain), false),
        ("zip", JValue::from_function(f::zip), false),
        ("items", JValue::from_function(f::items), true),
        ("dictsort", JValue::from_function(f::dictsort), true),
    ]
}

/// minijinja lets some collection filters take a missing value quietly
/// (`{{ issue.lables | join(", ") }}` prints nothing), which would hide a
/// misspelled key. Each one here treats a missing input alike: an error
/// naming the path in `strict` and `semi`, an empty collection in
/// `lenient` (so `length` is 0, as in Jinja2).
fn guard_collection_filters(env: &mut Environment<'static>) {
    for (name, builtin, takes_map) in collection_filters() {
        env.add_filter(
            name,
            move |state: &mut minijinja::State,
                  args: Rest<JValue>,
                  kwargs: Kwargs|
                  -> Result<JValue, minijinja::Error> {
                let mut args = args.0;
                if let Some(first) = args.first_mut().filter(|value| value.is_undefined()) {
                    if state.undefined_behavior() != UndefinedBehavior::Chainable {
                        return Err(minijinja::Error::new(
                            ErrorKind::UndefinedError,
                            "undefined value",
                        ));
                    }
                    *first = if takes_map {
                        JValue::from(std::collections::BTreeMap::<String, JValue>::new())
                    } else {
                        JValue::from(Vec::<JValue>::new())
                    };
                }
                // Keyword arguments go on to the builtin, which checks them.
                if kwargs.args().next().is_some() {
                    args.push(JValue::from(kwargs));
                }
                builtin.call(state, &args)
            },
        );
    }
}

/// Makes each host function both a function (`fetch(id)`) and a filter
/// (`id | fetch`). A name Jinja already uses for a built-in is an error.
fn register_host_functions(
    env: &mut Environment<'static>,
    functions: &Functions,
) -> Result<(), TemplateError> {
    for (name, function) in functions.iter() {
        if FILTERS.contains(&name) || env.globals().any(|(global, _)| global == name) {
            return Err(TemplateError::parse(
                None,
                format!(
                    "host function \"{name}\" has the name of a built-in Jinja filter or function"
                ),
            ));
        }
        let call = {
            let function = function.clone();
            let name = name.to_string();
            move |args: Rest<JValue>| -> Result<JValue, minijinja::Error> {
                let args = args
                    .iter()
                    .map(to_json_value)
                    .collect::<Result<Vec<_>, _>>()?;
                let result = functions::call_host(&name, &*function, &args).map_err(|message| {
                    minijinja::Error::new(ErrorKind::InvalidOperation, message)
                })?;
                Ok(json_value(result))
            }
        };
        env.add_function(name.to_string(), call.clone());
        env.add_filter(name.to_string(), call);
    }
    Ok(())
}

/// A value a host function returned, as minijinja sees it: objects and
/// arrays stay JSON, read lazily like the data.
fn json_value(value: Value) -> JValue {
    match value {
        Value::Object(_) | Value::Array(_) => {
            JValue::from_object(Node::root(Data::new(value), Arc::default()))
        }
        scalar => scalar_value(&scalar),
    }
}

/// The result of a message function as minijinja wants it.
fn template_call(result: Result<String, String>) -> Result<String, minijinja::Error> {
    result.map_err(|message| minijinja::Error::new(ErrorKind::InvalidOperation, message))
}

/// `tojson` / `toJSON`: compact JSON (or indented with `indent`).
fn tojson_filter(
    value: &JValue,
    indent: Option<usize>,
    kwargs: Kwargs,
) -> Result<String, minijinja::Error> {
    let indent = match kwargs.get::<Option<usize>>("indent")? {
        Some(indent) => Some(indent),
        None => indent,
    };
    kwargs.assert_all_used()?;
    let json = to_json_value(value)?;
    Ok(match indent {
        Some(indent) => functions::to_json_pretty(&json, indent),
        None => functions::to_json(&json),
    })
}

/// The JSON form of a minijinja value: the data itself for our nodes,
/// a conversion for values computed by the template.
fn to_json_value(value: &JValue) -> Result<Value, minijinja::Error> {
    if let Some(node) = value.downcast_object_ref::<Node>() {
        return Ok(node.view().map_or(Value::Null, |view| view.to_json()));
    }
    use minijinja::value::ValueKind;
    Ok(match value.kind() {
        ValueKind::Undefined => {
            return Err(minijinja::Error::new(
                ErrorKind::UndefinedError,
                "tojson of an undefined value",
            ))
        }
        ValueKind::None => Value::Null,
        ValueKind::Bool => Value::Bool(value.is_true()),
        ValueKind::Number => {
            if let Some(i) = value.as_i64() {
                Value::from(i)
            } else {
                let float: f64 = f64::try_from(value.clone()).unwrap_or(f64::NAN);
                serde_json::Number::from_f64(float).map_or(Value::Null, Value::Number)
            }
        }
        ValueKind::String => Value::String(value.as_str().unwrap_or_default().to_string()),
        ValueKind::Bytes => Value::String(
            String::from_utf8_lossy(value.as_bytes().unwrap_or_default()).into_owned(),
        ),
        ValueKind::Seq | ValueKind::Iterable => Value::Array(
            value
                .try_iter()?
                .map(|item| to_json_value(&item))
                .collect::<Result<_, _>>()?,
        ),
        ValueKind::Map => {
            let mut map = serde_json::Map::new();
            for key in value.try_iter()? {
                let item = value.get_item(&key)?;
                map.insert(key.to_string(), to_json_value(&item)?);
            }
            Value::Object(map)
        }
        _ => Value::String(value.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compile_with(body: &str, functions: Functions) -> Result<JinjaTemplate, TemplateError> {
        JinjaTemplate::compile(
            body,
            &CompileOptions {
                strictness: Strictness::Semi,
                functions,
            },
        )
    }

    fn host() -> Functions {
        Functions::new()
            .with("shout", |args: &[Value]| {
                let text = args
                    .first()
                    .and_then(Value::as_str)
                    .ok_or("takes a string")?;
                Ok(json!(format!("{}!", text.to_uppercase())))
            })
            .with("ticket", |args: &[Value]| {
                Ok(json!({"id": args.first().cloned(), "tags": ["a", "b"]}))
            })
    }

    #[test]
    fn host_functions_are_functions_and_filters() {
        let template = compile_with(
            "{{ shout(name) }} {{ name | shout }} {{ ticket(7).id }} {{ ticket(1).tags | join('+') }}",
            host(),
        )
        .unwrap();
        let out = template.render(&Data::new(json!({"name": "ada"}))).unwrap();
        assert_eq!(out, "ADA! ADA! 7 a+b");
    }

    #[test]
    fn host_function_errors_and_names() {
        let template = compile_with("{{ shout(3) }}", host()).unwrap();
        let error = template.render(&Data::new(json!({}))).unwrap_err();
        assert!(
            error
                .message
                .contains("error calling shout: takes a string"),
            "{error:?}"
        );

        let error = compile_with("{{ shuot(x) }}", host()).err().unwrap();
        assert_eq!(error.suggestion.as_deref(), Some("did you mean \"shout\"?"));

        let clash = Functions::new().with("upper", |_: &[Value]| Ok(Value::Null));
        let error = compile_with("x", clash).err().unwrap();
        assert!(
            error
                .message
                .contains("\"upper\" has the name of a built-in"),
            "{error:?}"
        );
    }
}

//! Lowers a Jinja template onto teleprompt's own evaluator (`engine`),
//! where every construct it uses means there exactly what it means in
//! Jinja: the direct path.
//!
//! Prompts and chat templates are text, values of the data, `if`s, `for`s
//! over lists, a few names set, macros and Python's string methods: the
//! engine renders those several times faster than minijinja (it reads the
//! data in place, with names resolved to slots when the prompt loads). A
//! template made of nothing else is lowered here, as well as minijinja's;
//! each render tries the engine first. Why a template is not lowered (the
//! first construct refused) is kept: `unstable::direct_path`, and the
//! fixture census in its tests (`tests.rs`).
//!
//! The engine's program only ever succeeds with the text Jinja prints. It
//! refuses, with an error, whatever it would not print or compute as
//! Jinja does, and the render then runs on minijinja, which gives Jinja's
//! text or Jinja's error (with teleprompt's path, suggestion and place):
//! - a missing value (misspelt, absent, read through `none`) is
//!   minijinja's to report or to print; only an `if` of a render that is
//!   not strict (a chat template's lenient `Undefined`) reads it as false,
//!   `==`/`!=`/`is none` of a lenient render as equal only to another
//!   missing value, and `in` of a lenient render as holding nothing;
//! - it prints strings, integers and booleans (`True`) only: floats,
//!   `none`, lists and maps print as Python's `str()` does, on minijinja;
//! - `for` walks lists, a map's keys and a string's characters (as
//!   minijinja does: `loop.last` false on every pass, `loop.length` and
//!   `loop.revindex` undefined — printing those stays minijinja's), not a
//!   filtered loop over a string;
//! - `length`/`count` of lists and strings, `join` of strings and
//!   integers, `lower`/`upper`/`trim` of strings; comparisons (and `in` a
//!   list) of values of one kind (Go's and Python's rules agree there),
//!   and `==`/`!=` of two kinds that are not both numbers (false, true);
//!   `~` of strings, integers and booleans; arithmetic of integers (not
//!   booleans) within 64 bits;
//! - `is defined` and `default` read a path whose last key alone may be
//!   missing, from a map of the data;
//! - a chat template's messages written whole by `tojson` or walked by
//!   `items()`, and macros past 16 calls deep.
//!
//! What it lowers (anything else keeps the template on minijinja alone):
//! - text; `{{ expr }}`; `if`/`elif`/`else`; `for NAME in expr` with
//!   `else`, `break` and `continue` (no filter, not recursive), `for NAME
//!   in list[::-1]`;
//! - `set NAME = expr`: a name assigned in the template's own `if`s reads
//!   the data's value where the `set` did not run; in a loop's body (where
//!   Jinja's `set` assigns a name of that pass) a name is read only after
//!   its `set` in that pass — in the same block, or after an `if` whose
//!   every branch assigns it — and the loop's own variable can be set;
//! - `set ns = namespace(key=value, …)` and `set ns.key = value` (a slot
//!   per attribute the constructor names);
//! - `{% set x %}…{% endset %}` and `{% filter %}` blocks, whose `set`s
//!   assign the names around the block (minijinja's scoping, not
//!   Jinja2's);
//! - in a lenient render, `set x = a if b` without `else` (`x` then
//!   holds minijinja's undefined where `b` is false: read as a missing
//!   key is, in tests and prints; elsewhere it is minijinja's), and
//!   `set x = a or b` (`and`) reading the data's missing values as false;
//! - `set m = {512: 128, …}` (a map of constants with integer keys) at
//!   the template's top, set once: read by `m | dictsort` and `m[512]`
//!   only, folded to constants;
//! - `{% macro name(params, key=constant) %}` (the constant a literal
//!   list, tuple or map of constants too) at the template's top, called
//!   with positional or named arguments, reading its parameters, its own
//!   names, the names of the template's top (minijinja's closure: the
//!   top's latest value at the call, the data's before the top's first
//!   `set`; a namespace made once) and the data (not `caller`,
//!   `varargs`); its body is lowered after the template's top; a
//!   parameter named as a namespace of the top, made once there, is that
//!   namespace when every call passes it by that name (minijinja shares a
//!   namespace by reference: Kimi K3's `state`);
//! - expressions of names, `.attr`, `["key"]`, `[expr]` (an item of a
//!   list, from the end when negative, or a key of a map), constants and
//!   lists of constants, `not`, `and`, `or`, one comparison (`==`, `!=`,
//!   `<`, `<=`, `>`, `>=`, `in`, `not in`), `a if c else b`, `~`, `+`,
//!   `-`, `*`, `//`, `%`, `**`, `is defined`, `is undefined`, `is none`,
//!   the kind tests (`string`, `mapping`, `sequence`, `iterable`,
//!   `number`, `integer`, `boolean`, `true`, `false`), `default(x)` (of a
//!   path or a variable, not of a name the environment defines, which `is
//!   defined` always is), `list[a:b]`, the filters above, `tojson` with
//!   constant options (`transformers`' `json.dumps`), the methods `strip`,
//!   `lstrip`, `rstrip`, `startswith`, `endswith`, `replace`, `split`,
//!   `lower`, `upper` and a map's `get`, `'…{}…'.format(args)` of a
//!   constant text with `{}` or `{N}` fields alone, `min`, `max`, `sort`
//!   and `unique` with constant options (of integers or of strings, at
//!   render), `strftime_now(format)`,
//!   `loop.index`, `index0`, `revindex`, `revindex0`, `first`, `last`,
//!   `length`, and `raise_exception(…)` (the render goes to minijinja,
//!   which raises it).
//!
//! Chat templates (in `transformers`' environment, without `{% generation
//! %}` blocks) are lowered too: a message of `messages` reads as
//! `transformers` hands it over (a key whose value is null is absent).
//!
//! Django bodies (translated from pongo2's spellings) are not lowered, nor
//! templates that use other files. The engine counts `max_steps` in its
//! own units (loop passes, macro calls, the items and bytes an operation
//! walks), minijinja in instructions: for a template minijinja runs with
//! fuel (see `fuel`), every render tries the engine first, so which of
//! them renders depends on the data alone, and a render the engine stops
//! goes to minijinja, under its own bounds. The engine checks what its
//! filters build against `max_value_bytes` itself, in place of the bound
//! checks minijinja's text gets.
//!
//! This file holds the entry ([`lower`]), the rendering side ([`Direct`])
//! and the lowering's state ([`Lowerer`], its frames and macros); the rest
//! is in rooms: `scan` (walks of the AST before lowering), `names` (slots,
//! names, `set`'s targets, namespaces), `macros`, `stmts` (statements and
//! blocks), `exprs` (expressions), `filters` (filters, `is defined`,
//! paths), `constants` (constants read from the AST) and `tests`.

use minijinja::machinery::{self, ast};
use minijinja::value::ValueKind;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use crate::data::Data;
use crate::engine::program::{
    push_text, Arith, Block, Const, Expr, Flavor, Func, Instr, IsKind, JinjaOp, Key, LoopField,
    Method, Order, Program, Select, SelectTest, Span, Template,
};
use crate::limits::Limits;
use crate::options::Strictness;
use crate::scope::RenderScope;

mod constants;
mod exprs;
mod filters;
mod macros;
mod names;
mod scan;
mod stmts;
#[cfg(test)]
mod tests;

use constants::*;
use macros::top_slot;
use scan::*;

/// The program of `template`, if every construct it uses is lowered (else
/// the first construct it refused):
/// `source` is the body and the text the template was parsed from (the
/// same text, maybe another copy of it). `globals`: the names of the environment's functions
/// (`range`, `namespace`, host functions…), which are defined where the
/// data has no such key.
pub(super) fn lower(
    template: &ast::Stmt<'_>,
    (source, parsed_from): (&str, &str),
    limits: Limits,
    (globals, filters): (&HashSet<String>, &[&str]),
    (flavor, strictness): (Flavor, Strictness),
) -> Result<Program, String> {
    let mut lowerer = Lowerer {
        globals,
        filters,
        lenient: strictness == Strictness::Lenient,
        flavor,
        source_at: parsed_from.as_ptr() as usize,
        names: Vec::new(),
        loops: Vec::new(),
        // Slot 0 is the engine's `$`.
        next_slot: 1,
        max_slots: 1,
        frames: vec![Frame::new(std::slice::from_ref(template), 0, false)],
        maybe_unset: HashSet::new(),
        held: HashSet::new(),
        top_held: HashSet::new(),
        markup: HashSet::new(),
        printing: Default::default(),
        outer_namespaces: HashMap::new(),
        outer_names: HashMap::new(),
        outer_gone: HashSet::new(),
        deferred: Vec::new(),
        top_calls: Default::default(),
        neighbours: Default::default(),
        namespaces: HashMap::new(),
        namespace_keys: namespace_keys(std::slice::from_ref(template)),
        pending: HashMap::new(),
        macros: macro_defs(template, &namespaces_made(std::slice::from_ref(template))),
        defined: 0,
        current_macro: None,
        calls: Default::default(),
        templates: Vec::new(),
        assigned_anywhere: assigned_anywhere(std::slice::from_ref(template)),
        in_macro: false,
        in_loop_filter: false,
        gone: HashSet::new(),
        int_maps: HashMap::new(),
        refused: Default::default(),
    };
    lowerer.templates = lowerer
        .macros
        .iter()
        .map(|def| Template {
            name: def.as_ref().map_or("", |def| def.name).into(),
            body: Box::new([]),
            slots: 1,
        })
        .collect();
    let body = lowerer.stmts(std::slice::from_ref(template));
    let Some(body) = body.filter(|_| lowerer.macro_bodies(template).is_some()) else {
        let why = lowerer.refused.take();
        return Err(why.unwrap_or_else(|| "a construct it does not lower".into()));
    };
    let python = crate::engine::flavor::jinja::Python {
        tojson: super::python::json::tojson_data,
        // `transformers` formats a naive `datetime.now()`: no time zone.
        // The value as the data's tree reads it on minijinja (copied).
        // Written from the data's JSON, as minijinja writes its value.
        repr: |value| {
            let written = match value {
                crate::engine::flavor::jinja::JsonRef::Value(json) => {
                    super::python::display_json(json)
                }
                crate::engine::flavor::jinja::JsonRef::Items(items) => {
                    super::python::display_json_list(items)
                }
            };
            written.map_err(|error| error.to_string())
        },
        strftime: match flavor {
            Flavor::ChatTemplate => |now, format, room| {
                super::python::strftime(now, format, (true, Some(room)))
                    .map_err(|error| error.to_string())
            },
            _ => |now, format, room| {
                super::python::strftime(now, format, (false, Some(room)))
                    .map_err(|error| error.to_string())
            },
        },
    };
    Ok(Program {
        source: source.into(),
        main: Template {
            name: "".into(),
            body,
            slots: lowerer.max_slots,
        },
        templates: lowerer.templates,
        strictness: Strictness::Strict,
        limits,
        hosts: Box::new([]),
        flavor,
        python: Some(python),
    }
    .missing_in_tests(strictness))
}

/// A template lowered onto the engine, tried first on every render.
pub(super) struct Direct {
    program: Program,
    /// Renders it gave, and renders it gave up (minijinja rendered them).
    rendered: AtomicU32,
    declined: AtomicU32,
    /// Renders not tried since it last gave up.
    skipped: AtomicU32,
    /// Whether minijinja runs the template with fuel (`max_steps`), which
    /// counts its steps otherwise: then every render tries the direct
    /// path first, so that which one renders depends on the data alone.
    fueled: bool,
}

impl Direct {
    pub(super) fn new(program: Program, fueled: bool) -> Direct {
        Direct {
            program,
            rendered: AtomicU32::new(0),
            declined: AtomicU32::new(0),
            skipped: AtomicU32::new(0),
            fueled,
        }
    }

    /// The text, or `None` where minijinja is to render. A template whose
    /// data keeps it giving up (a value it does not print, a missing one
    /// that a lenient render prints empty) is tried only once in 64
    /// renders, so that giving up costs little.
    pub(super) fn render(
        &self,
        data: &Data,
        expect: usize,
        scope: &mut RenderScope,
    ) -> Option<String> {
        let (rendered, declined) = (self.rendered.load(Relaxed), self.declined.load(Relaxed));
        if !self.fueled && declined > 16 && declined / 4 > rendered {
            let skipped = self.skipped.fetch_add(1, Relaxed);
            if skipped % 64 != 63 {
                return None;
            }
        }
        // Given up, the render goes to minijinja with the budget as it was.
        let budget = scope.budget;
        match crate::engine::render(&self.program, data, expect, scope) {
            Ok(out) => {
                self.rendered.store(rendered.saturating_add(1), Relaxed);
                Some(out)
            }
            Err(_) => {
                self.declined.store(declined.saturating_add(1), Relaxed);
                scope.budget = budget;
                None
            }
        }
    }

    /// The renders it gave, and those it gave up.
    #[cfg(feature = "unstable")]
    pub(super) fn counts(&self) -> (u32, u32) {
        (self.rendered.load(Relaxed), self.declined.load(Relaxed))
    }

    /// Why the engine gives up rendering `data` (its error's message),
    /// if it does: for the tests that list what the direct path declines.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(super) fn why_declined(&self, data: &Data, scope: &mut RenderScope) -> Option<String> {
        crate::engine::render(&self.program, data, 0, scope)
            .err()
            .map(|error| error.message)
    }

    /// Whether it has rendered (for the tests that compare it).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(super) fn has_rendered(&self) -> bool {
        self.rendered.load(Relaxed) > 0
    }
}

struct Lowerer<'a, 'g> {
    globals: &'g HashSet<String>,
    /// The filters the environment defines (a chat template may name
    /// others where its code does not run).
    filters: &'g [&'g str],
    /// Whether the render is lenient: a missing value prints empty.
    lenient: bool,
    /// Plain Jinja or a chat template (their `tojson` arguments differ).
    flavor: Flavor,
    /// Where the source starts in memory: a raw text's span is where its
    /// slice of the source is.
    source_at: usize,
    /// Names bound to slots where the lowering is, innermost last: loop
    /// variables, and names `set` assigns.
    names: Vec<(&'a str, u32)>,
    /// The first slot of each enclosing loop, innermost last.
    loops: Vec<u32>,
    next_slot: u32,
    max_slots: u32,
    /// The template's scope, then each enclosing loop body's, innermost last.
    frames: Vec<Frame<'a>>,
    /// Names every branch of the `if` being lowered assigns (in a loop's
    /// body), with the slot they share.
    pending: HashMap<&'a str, u32>,
    /// The namespaces bound where the lowering is, by the slot of their
    /// name (which holds nothing): each attribute's slot.
    namespaces: HashMap<u32, Attributes<'a>>,
    /// The keys `set NAME.key` gives, anywhere, by `NAME`.
    namespace_keys: HashMap<&'a str, Vec<&'a str>>,
    /// The template's slots a `set` inside an `if` assigns: they may hold
    /// no value (see [`JinjaOp::SetOr`]).
    maybe_unset: HashSet<u32>,
    /// Slots that may hold minijinja's undefined (a lenient render's `set
    /// x = a if b`, see [`JinjaOp::Held`]): read through `Held`. Never
    /// one of [`Lowerer::maybe_unset`] (where a missing value reads the
    /// data's).
    held: HashSet<u32>,
    /// The top's [`Lowerer::held`] slots, while a macro's body is lowered.
    top_held: HashSet<u32>,
    /// Slots a `set` gave a value marked `| safe` (Jinja2's `Markup`, which
    /// a `+` escapes the other operand of): read only where printed whole.
    markup: HashSet<u32>,
    /// The namespaces of the template's top a macro's body may read and
    /// set (while one is lowered): made once, outside any block. Whether
    /// made before the macro (else each attribute may hold nothing yet
    /// when it is called, and the body does not set them), and each
    /// attribute's slot in the top frame.
    outer_namespaces: HashMap<&'a str, (bool, Attributes<'a>)>,
    /// The names of the template's top a macro's body reads where it has
    /// not bound them (while one is lowered): minijinja reads the top's
    /// value at the call (the latest `set` of the template's top, not of
    /// a loop's body), or the data's where the top has set none yet. Their
    /// slots in the top frame, and whether a `set` before the macro, in no
    /// block, gave it (else the slot may hold nothing yet: it is one no
    /// loop used, see [`Lowerer::top_slots`]).
    outer_names: HashMap<&'a str, (u32, bool)>,
    /// Names of the template's top a macro's body may not read (while one
    /// is lowered): a namespace made in a block (gone after it) or made
    /// again, a value marked `| safe`.
    outer_gone: HashSet<&'a str>,
    /// The macros defined so far, lowered after the template's top (their
    /// bodies read the top's names the `set`s after them give): each
    /// one's index, definition, and the slots of the top bound before it
    /// (outside any block).
    deferred: Vec<(usize, HashSet<u32>)>,
    /// Calls of macros from the template's top, with how many macros were
    /// defined there: checked once every body is lowered (every macro a
    /// call may reach, at any depth, must be defined already).
    top_calls: std::cell::RefCell<Vec<(usize, usize)>>,
    /// Whether a name is being read where it is printed whole.
    printing: std::cell::Cell<bool>,
    /// The loops (by their `pass` slot) whose body reads `loop.previtem`
    /// or `loop.nextitem`.
    neighbours: std::cell::RefCell<HashSet<u32>>,
    /// The template's macros (those at its top), in order, read before
    /// the lowering (or why one cannot be): a macro's body may call one
    /// defined after it.
    macros: Vec<Result<MacroDef<'a>, String>>,
    /// How many of them the lowering has passed (defined, for a call from
    /// the template's top).
    defined: usize,
    /// The macro whose body is being lowered.
    current_macro: Option<usize>,
    /// The macros each macro's body calls.
    calls: std::cell::RefCell<HashMap<usize, HashSet<usize>>>,
    /// Their bodies, by [`MacroDef::template`].
    templates: Vec<Template>,
    /// Every name the template assigns outside its macros (`set`, `for`):
    /// a macro's name among them is not lowered.
    assigned_anywhere: HashSet<&'a str>,
    /// Namespaces made in a block that may not have run, read nowhere
    /// after it.
    gone: HashSet<&'a str>,
    /// Maps of constants with integer keys (`{512: 128, …}`) the
    /// template's top sets once, outside any block: the engine's maps have
    /// text keys, so such a name holds no slot; it is read only by
    /// `dictsort` (constant pairs) and constant keys (`m[512]`), refused
    /// anywhere else (a macro's body too).
    int_maps: HashMap<&'a str, Vec<(i64, serde_json::Value)>>,
    /// Whether a loop's filter (`for x in list if test`) is being lowered.
    in_loop_filter: bool,
    /// Whether a macro's body is being lowered.
    in_macro: bool,
    /// Why the template is not lowered: the first construct refused.
    refused: std::cell::RefCell<Option<String>>,
}

/// A namespace's attributes: each one's name, slot, and whether a `set`
/// after the namespace was made gives it (it holds nothing until then).
type Attributes<'a> = Vec<(&'a str, u32, bool)>;

/// A macro of the template: its body's index in the program's templates,
/// its parameters and their defaults (constants).
struct MacroDef<'a> {
    name: &'a str,
    template: u32,
    params: Vec<&'a str>,
    defaults: Vec<Option<Const>>,
    /// Defined in an `if`: the slot of the template's top that holds true
    /// where it was (a call where it was not is minijinja's).
    flag: Option<u32>,
    /// Per parameter: whether it is named as a namespace of the template
    /// is (`macro render(text, state)` beside `set state = namespace(…)`).
    /// Such a parameter is that namespace: every call must pass it by
    /// that name ([`Lowerer::call_macro`]), and the body reads and sets
    /// its attributes in the top's slots ([`Lowerer::macro_bodies`]), as
    /// minijinja's namespace, an object shared by reference, behaves.
    aliases: Vec<bool>,
}

/// A scope of `set`: the template, or a loop's body (Jinja's `set` inside
/// a loop assigns a name of that pass, gone after the loop).
struct Frame<'a> {
    /// The names `set` assigns in this scope (in `if`s too, not in the
    /// loops inside it). In a loop's body, reading one before the `set`
    /// that first assigns it is not lowered: it would read the name from
    /// outside, or the last pass's value, as engines differ.
    assigned: HashSet<&'a str>,
    /// Where this scope's names start in [`Lowerer::names`].
    names_from: usize,
    /// How many `if`s (and `for … else`) enclose the statement in this
    /// scope: a name is first assigned outside any (a `set` inside one
    /// would leave the name assigned or not, by the data).
    conditional: usize,
    is_loop: bool,
    /// A loop's variables (its key's too) and their slots: a `set` of
    /// such a name in the body writes the slot (Jinja's loop variables and
    /// the body's names share one scope), and reads before the `set` read
    /// the item.
    targets: Vec<(&'a str, u32)>,
}

impl<'a> Frame<'a> {
    fn new(body: &[ast::Stmt<'a>], names_from: usize, is_loop: bool) -> Frame<'a> {
        let mut assigned = HashSet::new();
        collect_assigned(body, &mut assigned);
        Frame {
            assigned,
            names_from,
            conditional: 0,
            is_loop,
            targets: Vec::new(),
        }
    }
}

/// The hidden name of the item `for a, b in list` unpacks (not a name a
/// template can write).
const UNPACKED: &str = " unpacked";

impl<'a> Lowerer<'a, '_> {
    /// Refuses to lower the template, for the reason `why` (the first
    /// refusal is the one kept).
    fn no<T>(&self, why: impl FnOnce() -> String) -> Option<T> {
        let mut refused = self.refused.borrow_mut();
        if refused.is_none() {
            *refused = Some(why());
        }
        None
    }
}

fn span(span: machinery::Span) -> Span {
    Span {
        start: span.start_offset,
        end: span.end_offset,
    }
}

fn key(name: &str, at: machinery::Span) -> Key {
    Key {
        name: name.into(),
        end: at.end_offset,
    }
}

fn path(base: Expr, name: &str, at: machinery::Span) -> Expr {
    Expr::Path {
        base: Box::new(base),
        keys: Box::new([key(name, at)]),
        span: span(at),
    }
}

fn call<const N: usize>(func: Func, args: [Expr; N], at: machinery::Span) -> Expr {
    Expr::Call {
        func,
        args: Box::new(args),
        span: span(at),
    }
}

/// A statement's name, for a refusal.
fn statement_name(stmt: &ast::Stmt<'_>) -> &'static str {
    match stmt {
        ast::Stmt::Template(_) => "template",
        ast::Stmt::EmitExpr(_) | ast::Stmt::EmitRaw(_) => "print",
        ast::Stmt::ForLoop(_) => "for",
        ast::Stmt::IfCond(_) => "if",
        ast::Stmt::WithBlock(_) => "with",
        ast::Stmt::Set(_) => "set",
        ast::Stmt::SetBlock(_) => "set block",
        ast::Stmt::AutoEscape(_) => "autoescape",
        ast::Stmt::FilterBlock(_) => "filter block",
        ast::Stmt::Block(_) => "block",
        ast::Stmt::Import(_) | ast::Stmt::FromImport(_) => "import",
        ast::Stmt::Extends(_) => "extends",
        ast::Stmt::Include(_) => "include",
        ast::Stmt::Macro(_) => "macro",
        ast::Stmt::CallBlock(_) => "call block",
        ast::Stmt::Do(_) => "do",
        ast::Stmt::Continue(_) => "continue",
        ast::Stmt::Break(_) => "break",
    }
}

/// An expression's kind, for a refusal.
fn expression_name(expr: &ast::Expr<'_>) -> String {
    match expr {
        ast::Expr::Call(call) => match &call.expr {
            ast::Expr::Var(name) => format!("a call of `{}`", name.id),
            ast::Expr::GetAttr(attr) => format!("method `.{}()`", attr.name),
            _ => "a call".into(),
        },
        ast::Expr::Slice(_) => "a slice with a step".into(),
        ast::Expr::List(_) => "a list literal".into(),
        ast::Expr::Map(_) => "a map literal".into(),
        ast::Expr::Tuple(_) => "a tuple".into(),
        _ => "an expression".into(),
    }
}

//! The compiled form of a template, shared by the Go and Handlebars front
//! ends: a tree of instructions over expressions, with names resolved at
//! compile time (functions to [`Func`], variables to frame slots, templates
//! to indexes) so rendering never looks a name up.

use std::ops::Range;

use super::flavor::handlebars::Helper;
pub(crate) use super::flavor::Flavor;
use crate::diagnostics::TemplateError;
use crate::functions::{Function, Functions, Naming};
use crate::options::Strictness;

/// A compact byte range in the template body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub(crate) fn new(range: &Range<usize>) -> Span {
        Span {
            start: u32::try_from(range.start).unwrap_or(u32::MAX),
            end: u32::try_from(range.end).unwrap_or(u32::MAX),
        }
    }

    pub(crate) fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A compiled template body with its named sub-templates.
#[derive(Debug)]
pub(crate) struct Program {
    /// The body as written, for quoting names in messages.
    pub source: Box<str>,
    /// The main template.
    pub main: Template,
    /// Named templates (`define`/`block`; Handlebars partials), by index.
    pub templates: Vec<Template>,
    /// What missing values do.
    pub strictness: Strictness,
    /// Bounds on a render, given by the front end that builds the program.
    pub limits: crate::limits::Limits,
    /// Host functions, by the index in [`Func::Host`].
    pub hosts: Box<[Host]>,
    /// Which front end compiled it: printing and a few data rules differ.
    pub flavor: Flavor,
    /// Python's printing, for a program lowered from Jinja.
    pub python: Option<super::flavor::jinja::Python>,
}

impl Program {
    /// A program lowered from Jinja for a render that is not strict:
    /// there a missing value an `if` tests is false, as on minijinja
    /// (semi-strict, lenient; a chat template's lenient `Undefined`). Any
    /// other missing value it leaves to minijinja still, as in a strict
    /// render.
    pub(crate) fn missing_in_tests(mut self, strictness: Strictness) -> Program {
        if strictness != Strictness::Strict {
            self.strictness = Strictness::Semi;
        }
        self
    }
}

/// A host function the program calls, with its name as templates write it.
pub(crate) struct Host {
    pub name: Box<str>,
    pub function: Function,
}

impl Host {
    /// The host functions as a table sorted by name (as [`Functions`] keeps
    /// them), so a name's position is its [`Func::Host`] index. A name
    /// that `is_builtin` says the syntax already uses is an error: the
    /// built-in would hide it. `what` names the syntax and its kind of
    /// built-in, for the message (`Go templates`, `function`).
    pub(crate) fn table(
        functions: &Functions,
        naming: Naming,
        is_builtin: impl Fn(&str) -> bool,
        (syntax, kind): (&str, &str),
    ) -> Result<Vec<Host>, TemplateError> {
        let mut hosts = Vec::new();
        let resolved = functions
            .resolve(naming)
            .map_err(|message| TemplateError::parse(None, message))?;
        for (name, function) in resolved {
            if is_builtin(&name) {
                return Err(TemplateError::parse(
                    None,
                    format!("host function {name:?} has the name of a built-in {kind}"),
                )
                .suggest(Some(format!(
                    "register it under another name: {syntax} cannot replace {name:?}"
                ))));
            }
            if hosts.len() > usize::from(u16::MAX) {
                return Err(TemplateError::parse(
                    None,
                    format!("more than {} host functions are registered", u16::MAX),
                ));
            }
            hosts.push(Host {
                name: name.into(),
                function,
            });
        }
        Ok(hosts)
    }
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Host").field(&self.name).finish()
    }
}

/// One template: its body and how many variable slots its frame needs.
#[derive(Debug)]
pub(crate) struct Template {
    /// The name (empty for the main template).
    pub name: Box<str>,
    /// The instructions.
    pub body: Block,
    /// Variable slots; slot 0 is `$` (the value the template was called with).
    pub slots: u32,
}

/// Where a literal text's pieces were written, in order: each piece's
/// length in the text and its span in the source (texts a comment or a
/// trimmed tag separated are joined into one instruction). Read only by
/// a render that records a source map.
pub(crate) type TextFrom = Box<[(u32, Span)]>;

/// Appends literal `text`, written at `span`, to `out`: joined to the
/// text instruction before it, if any.
pub(crate) fn push_text(out: &mut Vec<Instr>, text: &str, span: Span) {
    if text.is_empty() {
        return;
    }
    let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
    if let Some(Instr::Text(previous, from)) = out.last_mut() {
        let mut joined = String::with_capacity(previous.len() + text.len());
        joined.push_str(previous);
        joined.push_str(text);
        *previous = joined.into_boxed_str();
        let mut pieces = std::mem::take(from).into_vec();
        pieces.push((len, span));
        *from = pieces.into_boxed_slice();
    } else {
        out.push(Instr::Text(text.into(), Box::new([(len, span)])));
    }
}

/// A sequence of instructions.
pub(crate) type Block = Box<[Instr]>;

/// One instruction.
#[derive(Debug)]
pub(crate) enum Instr {
    /// Literal text, and where its pieces were written (see [`TextFrom`]).
    Text(Box<str>, TextFrom),
    /// Evaluates and prints a value.
    Print { expr: Expr, span: Span },
    /// Evaluates a value into a variable slot (declaration or assignment).
    Set { slot: u32, expr: Expr },
    /// `if`: runs `then` when the value is true, else `otherwise`. The value
    /// goes into `bind` first when the condition declares a variable.
    If {
        cond: Expr,
        bind: Option<u32>,
        then: Block,
        otherwise: Block,
    },
    /// `with` (`#with`): like `if`, and `then` runs with the value as dot.
    With {
        value: Expr,
        bind: Option<u32>,
        then: Block,
        otherwise: Block,
    },
    /// `range` (`#each`): runs `body` for each element with it as dot;
    /// `otherwise` when there are none.
    Range {
        value: Expr,
        key: Option<u32>,
        elem: Option<u32>,
        body: Block,
        otherwise: Block,
        span: Span,
        /// Handlebars `#each`: the first of four slots set on every pass
        /// (`@key`, `@index`, `@first`, `@last`). It also makes the loop
        /// Handlebars-shaped: objects in input order, and a value that is not a collection runs
        /// `otherwise` instead of failing.
        each: Option<u32>,
    },
    /// A Handlebars section whose name is not a helper (`{{#items}}…{{/items}}`):
    /// a list runs `body` per element (as `#each`, with the four slots at
    /// `each`), `true` runs it with dot unchanged, `false`, null, a missing
    /// value and an empty list run `otherwise`, any other value (0, "" and
    /// `{}` included, as in handlebars.js) runs `body` once with it as dot.
    Section {
        value: Expr,
        body: Block,
        otherwise: Block,
        span: Span,
        each: u32,
    },
    /// Calls a named template with a value as its dot and `$`.
    Call {
        template: u32,
        arg: Option<Expr>,
        span: Span,
        /// A Handlebars partial block's content (`{{#> layout}}…{{/layout}}`):
        /// what `{{> @partial-block}}` renders inside the call, in the
        /// caller's frame.
        block: Option<Box<PartialContent>>,
    },
    /// Handlebars `{{> (expr) context}}`: calls the named template whose
    /// name `name` evaluates to. With a partial block's content
    /// (`{{#> (expr)}}…{{/undefined}}`), a name no template has runs the
    /// content instead.
    CallNamed {
        name: Expr,
        arg: Expr,
        span: Span,
        block: Option<Box<PartialContent>>,
    },
    /// Runs `body` (a Handlebars standalone partial call), then indents
    /// every line it printed by `indent` (not a last, empty one).
    Indent {
        indent: Box<str>,
        body: Block,
        /// Where the indentation is written (before the partial's tag).
        span: Span,
    },
    /// Handlebars `{{> @partial-block}}`: the content of the partial block
    /// that called the running partial.
    PartialBlock { span: Span },
    /// Handlebars `{{name}}` where `name` is a helper of the prompt's
    /// system. Without `misuse`, the helper runs without arguments: an
    /// error when the current context also has a key `name` (handlebars.js
    /// would call the helper and hide the data's value). With `misuse`
    /// (the helper cannot run without arguments), the data's `name` is
    /// printed next: the error and help given when the context has no key
    /// `name`.
    BareHelper {
        name: Box<str>,
        span: Span,
        misuse: Option<Box<(Box<str>, Box<str>)>>,
    },
    /// A Jinja `for` over a list: `elem` holds each item; slot `pass`
    /// the pass's index (from 0) and `pass + 1` the list's length (and
    /// `pass + 2`, `pass + 3` the items around it, see `neighbours`), which
    /// `loop.*` ([`Expr::Loop`]) reads. Anything but a list is an error.
    ForList {
        value: Expr,
        elem: u32,
        pass: u32,
        body: Block,
        otherwise: Block,
        span: Span,
        /// `for x in list[::-1]`: the items from the last.
        reverse: bool,
        /// `for key, value in map.items()`: the value is a map of the
        /// data (not merged, not a chat template's message), walked in its
        /// order (true: `| dictsort`, by key whatever its case), each key
        /// in this slot and its value in `elem`.
        key: Option<(u32, bool)>,
        /// `for x in list if test`: the items the test (of `elem`) keeps,
        /// counted by `loop.*` as the whole list.
        filter: Option<Expr>,
        /// The body reads `loop.previtem` or `loop.nextitem`: slots
        /// `pass + 2` and `pass + 3` hold them on every pass.
        neighbours: bool,
    },
    /// Evaluates a value into slot `slot` of the template's top frame
    /// (not this one's): a namespace's attribute a macro's body sets.
    SetTop { slot: u32, expr: Expr },
    /// Jinja's `{% set x %}…{% endset %}`: runs `body` in this frame with
    /// its output captured, the text into `slot`.
    Capture { slot: u32, body: Block, span: Span },
    /// Leaves the innermost loop.
    Break,
    /// Goes on with the next iteration of the innermost loop.
    Continue,
}

/// A Handlebars partial block's content: it runs in the frame of the
/// template that wrote it, with the dot `{{> @partial-block}}` has.
#[derive(Debug)]
pub(crate) struct PartialContent {
    pub body: Block,
    /// When the content reads `../`: the first of the slots holding its
    /// outer contexts (one level up first), and the caller's context slots
    /// they are filled from (innermost first). As in handlebars.js, the
    /// caller's dot is one more level up when the content runs with another
    /// dot, and is not when it runs with the same one; a last level nothing
    /// fills is missing.
    pub levels: Option<(u32, Box<[u32]>)>,
}

/// An expression.
#[derive(Debug)]
pub(crate) enum Expr {
    /// The current context (`.`, `this`).
    Dot,
    /// A variable slot of the current frame (`$` is slot 0).
    Var(u32),
    /// The data's root, wherever it is read (Handlebars `@root`).
    Root,
    /// A literal.
    Const(Const),
    /// Keys read from a base value: `.a.b`, `$x.a`, `(pipe).a`.
    Path {
        base: Box<Expr>,
        keys: Box<[Key]>,
        span: Span,
    },
    /// A field of a Jinja loop ([`Instr::ForList`]) whose slots start
    /// at `pass`.
    Loop { pass: u32, field: LoopField },
    /// A function call; a pipeline's previous value is the last argument.
    Call {
        func: Func,
        args: Box<[Expr]>,
        span: Span,
    },
}

/// What Jinja's `loop.NAME` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LoopField {
    /// `loop.index`: the pass, from 1.
    Index,
    /// `loop.index0`: the pass, from 0.
    Index0,
    /// `loop.revindex`: passes left, this one included.
    Revindex,
    /// `loop.revindex0`: passes left after this one.
    Revindex0,
    /// `loop.first`.
    First,
    /// `loop.last`.
    Last,
    /// `loop.length`.
    Length,
    /// `loop.previtem`: the item before (missing on the first pass), in
    /// slot `pass + 2` of a loop whose `neighbours` are set.
    PrevItem,
    /// `loop.nextitem`: the item after (missing on the last pass), in
    /// slot `pass + 3`.
    NextItem,
}

impl LoopField {
    /// The field `loop.NAME` names, if it is one of these.
    pub(crate) fn named(name: &str) -> Option<LoopField> {
        Some(match name {
            "index" => LoopField::Index,
            "index0" => LoopField::Index0,
            "revindex" => LoopField::Revindex,
            "revindex0" => LoopField::Revindex0,
            "first" => LoopField::First,
            "last" => LoopField::Last,
            "length" => LoopField::Length,
            "previtem" => LoopField::PrevItem,
            "nextitem" => LoopField::NextItem,
            _ => return None,
        })
    }

    /// Its value on pass `index` (from 0) of `length`.
    pub(crate) fn of(self, index: i64, length: i64) -> super::value::Value<'static> {
        use super::value::Value;
        match self {
            LoopField::Index => Value::Int(index + 1),
            LoopField::Index0 => Value::Int(index),
            LoopField::Revindex => Value::Int(length - index),
            LoopField::Revindex0 => Value::Int(length - index - 1),
            LoopField::First => Value::Bool(index == 0),
            LoopField::Last => Value::Bool(index + 1 == length),
            LoopField::Length => Value::Int(length),
            // Held in slots of their own.
            LoopField::PrevItem | LoopField::NextItem => Value::Missing,
        }
    }
}

/// One key of a path.
#[derive(Debug)]
pub(crate) struct Key {
    /// The key.
    pub name: Box<str>,
    /// Where the path ends with this key (for messages).
    pub end: u32,
}

/// A literal value.
#[derive(Clone, Debug)]
pub(crate) enum Const {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Box<str>),
    /// A list of constants (Jinja's `['a', 1]`), read in place.
    List(Box<[serde_json::Value]>),
    /// A map of constants (Jinja's `{'a': 1}`, a JSON object), read in
    /// place.
    Map(Box<serde_json::Value>),
}

/// A function, resolved at compile time: a built-in, or a host function
/// ([`Func::Host`], an index into [`Program::hosts`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Func {
    And,
    Or,
    Not,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Len,
    Index,
    Slice,
    Print,
    Printf,
    Println,
    Html,
    Js,
    Urlquery,
    Call,
    ToJson,
    Join,
    Lower,
    Upper,
    Trim,
    /// `role "system"`: starts a message.
    Role,
    /// A role the data chose (Semantic Kernel's `{{#message role=role}}`
    /// over a chat history): `name` and the roles the load allows data to
    /// choose (a constant, names separated by commas). Templates cannot
    /// name it: front ends lower a non-literal role to it only where the
    /// origin's own pattern takes roles from data.
    DataRole,
    /// `history`: places the conversation history.
    History,
    /// `media url content_type`: adds a media part to the message.
    Media,
    /// Dotprompt's `section "name"`: a named part for the host to fill
    /// (never a shared function: the Dotprompt front end names it
    /// [`crate::engine::flavor::handlebars::SECTION`]).
    Section,
    /// `section "docs" "priority" 2 "max_tokens" 1500 "truncate" true`: the
    /// start of a budget section, its settings as key and value pairs
    /// (Handlebars' `{{#section "docs" priority=2}}` lowers to it).
    BudgetSection,
    /// `cache_breakpoint`: the marker of a provider's cache breakpoint.
    CacheBreakpoint,
    /// `endsection`: the end of a budget section.
    EndSection,
    /// Handlebars `lookup obj key`: a key of a map or an element of a list,
    /// missing (not an error) when absent.
    Lookup,
    /// Builds a map from alternating key and value arguments: Handlebars
    /// hash arguments, only ever the last argument of a host call (which
    /// passes them to the function by name).
    Dict,
    /// A Handlebars-only helper (Semantic Kernel, Forge, Dotprompt).
    Hbs(Helper),
    /// A host function: its index in [`Program::hosts`]. It takes any
    /// number of arguments, as JSON.
    Host(u16),
    /// Jinja's own operators and tests, in programs lowered from Jinja.
    Jinja(JinjaOp),
}

/// Jinja's operators, tests and filters that Go and Handlebars do not
/// have, as the direct path lowers them (`syntax/jinja/lower/`); each
/// fails where Jinja's result would differ from what it computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JinjaOp {
    /// `x is defined`: the argument is a path or a variable; only its last
    /// key may be missing (from an object).
    Defined,
    /// `x | default(y)`: `x`, or `y` where `x` is not defined (as
    /// [`JinjaOp::Defined`] tells); with a third argument (`default(y,
    /// true)`), `y` where `x` is false too.
    Default,
    /// `a ~ b`: both printed (strings, integers, booleans) and joined.
    Concat,
    /// `a + b` of two strings or two integers.
    Add,
    /// `a in b`: a substring, an element of a list, a key of a map.
    In,
    /// `a if c else b`, arguments in that order, the unused one not
    /// evaluated.
    Cond,
    /// `list[a:b]` of a list (either bound may be null): Python's bounds,
    /// clamped, from the end where negative.
    Slice,
    /// `raise_exception(…)`: a render that reaches it fails, on minijinja,
    /// with the template's message.
    Raise,
    /// Integer arithmetic as Python does it (`-`, `*`, `//`, `%` rounding
    /// toward negative infinity, `**` with an exponent of at least 0, and
    /// `-x`): integers only (not booleans), within 64 bits.
    Arith(Arith),
    /// `x is KIND`: a test of the value's kind, as minijinja's built-in
    /// tests (and teleprompt's `iterable`) answer it.
    Is(IsKind),
    /// `value | tojson(ensure_ascii, indent, sort_keys)` (constants, the
    /// indent `none`, an integer or a string) as `transformers` prints it
    /// ([`Program::python`]).
    ToJson,
    /// A call of the template's macro whose body is template `N` of the
    /// program: its text (the arguments are its parameters' values).
    Macro(u32),
    /// `strftime_now(format)` ([`Program::python`]).
    Strftime,
    /// `value | string`: Python's `str()` of a string, an integer, a
    /// boolean or `none`.
    String,
    /// `list | selectattr(attr, …)` (`rejectattr` with `Select::reject`):
    /// the items (maps of the data, not a chat template's messages) whose
    /// key passes the test. Arguments: the list, the key, the compared
    /// value for `equalto`.
    Select(Select),
    /// `list | map(attribute=key)`: each item's key (present in every item).
    MapAttr,
    /// `list | map('upper')` (`lower`, `trim`): the filter of each item (a
    /// string).
    MapFilter,
    /// `list | list`: the list itself.
    List,
    /// The item a name of `for a, b in list` takes: arguments the loop's
    /// item (a list of exactly as many items as names), the name's index,
    /// the number of names (constants).
    Unpack,
    /// `list | min` (`max` with [`Order::reverse`]): the least (greatest)
    /// item of a list of integers or of strings, the first of equal ones.
    Extreme(Order),
    /// `list | sort(reverse, case_sensitive, attribute)`: the items (or
    /// the maps, by the key the second argument names, a constant or
    /// `none`) ordered by integers or by strings, equal ones kept in
    /// their order.
    Sort(Order),
    /// `list | unique(case_sensitive)`: the items (strings and integers)
    /// without those equal to one before them.
    Unique(Order),
    /// A map literal with values computed at render (`{'role': r}`):
    /// arguments are pairs of a constant key and its value; a missing
    /// value or a chat template's message is minijinja's.
    Dict,
    /// A list literal with items computed at render (`[a, b]`): a
    /// missing item or a chat template's message is minijinja's.
    ListOf,
    /// Nothing yet: a namespace's key a later `set` gives.
    Unset,
    /// The value in a slot of the template's top frame (the argument, a
    /// constant): a namespace's attribute a macro's body reads.
    Top,
    /// A key read to be printed in a lenient render: the value, or an
    /// empty text where the key is missing (Jinja's undefined prints as
    /// nothing there).
    OrEmpty,
    /// `range(stop)`, `range(start, stop)`, `range(start, stop, step)` of
    /// integers: the list (at most 10,000 items; more are minijinja's).
    Range,
    /// `base[key]` with a computed key: an item of a list (from the end
    /// where negative) or a key of a map; anything missing is minijinja's.
    Item,
    /// `value.method(args…)`: Python's methods as minijinja's Python
    /// compatibility has them (the first argument is the value).
    Method(Method),
    /// `a == b` (`a != b` where true) in a lenient render: the operands
    /// read as a test reads them, a missing one equal only to another
    /// missing one (minijinja's undefined); `is none` too.
    Loose(bool),
    /// A name a template's `set` assigns inside an `if`: the variable
    /// (first argument) where that `set` ran, else the data's value of the
    /// name (second).
    SetOr,
    /// A variable that may hold minijinja's undefined (a missing value:
    /// `set x = a if b` where `b` is false): the value where a test reads
    /// it (`if x`, `x is defined`, a lenient print), as a missing key of
    /// the data is read there; anywhere else a missing one is minijinja's.
    Held,
    /// A `set`'s value that may be minijinja's undefined (`a if b`, or
    /// `or`/`and` of a [`JinjaOp::Held`] name): the argument read as a
    /// test reads it, so a missing value is kept (the name is then
    /// [`JinjaOp::Held`] where read).
    Tested,
}

/// The test of [`JinjaOp::Select`], and whether it rejects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Select {
    pub test: SelectTest,
    pub reject: bool,
}

/// How [`JinjaOp::Extreme`], [`JinjaOp::Sort`] and [`JinjaOp::Unique`]
/// compare items (constants of the template).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Order {
    /// `max`, `sort(reverse=true)`.
    pub reverse: bool,
    /// Strings compared as they are: else ignoring ASCII case (`min`,
    /// `max`, `sort`) or in Unicode lowercase (`unique`), as minijinja
    /// compares them.
    pub case_sensitive: bool,
}

/// What `selectattr` tests of an item's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SelectTest {
    /// No test: the key's truth.
    Truth,
    Defined,
    Undefined,
    None,
    /// `equalto` (`eq`, `==`), with the third argument.
    Equal,
}

/// A method of [`JinjaOp::Method`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Strip,
    Lstrip,
    Rstrip,
    StartsWith,
    EndsWith,
    Replace,
    Split,
    Lower,
    Upper,
    /// A map's `get(key, default=none)`.
    Get,
    /// `.capitalize()` and the `capitalize` filter (ASCII text).
    Capitalize,
    /// The `title` filter (ASCII text), as Jinja2 splits words.
    Title,
    /// The `int` filter of an integer or of digits.
    Int,
    /// The `indent(width, first, blank)` filter (constants; text whose
    /// lines end in `\n` only).
    Indent,
    /// `'…{}…'.format(args…)` of a constant text whose fields are `{}` or
    /// `{N}` alone (the lowering checks it), of strings, integers and
    /// booleans.
    Format,
}

impl Method {
    /// The most arguments [`Method::Format`] takes.
    pub(crate) const MOST_FORMATTED: usize = 64;

    /// The method `.NAME(…)`, if it is one of these.
    pub(crate) fn named(name: &str) -> Option<Method> {
        Some(match name {
            "strip" => Method::Strip,
            "lstrip" => Method::Lstrip,
            "rstrip" => Method::Rstrip,
            "startswith" => Method::StartsWith,
            "endswith" => Method::EndsWith,
            "replace" => Method::Replace,
            "split" => Method::Split,
            "lower" => Method::Lower,
            "upper" => Method::Upper,
            "get" => Method::Get,
            "capitalize" => Method::Capitalize,
            _ => return None,
        })
    }

    /// How many arguments it takes besides the value: (minimum, maximum).
    pub(crate) fn arity(self) -> (usize, usize) {
        match self {
            Method::Strip | Method::Lstrip | Method::Rstrip => (0, 1),
            Method::Split => (0, 2),
            Method::Lower | Method::Upper | Method::Capitalize | Method::Title | Method::Int => {
                (0, 0)
            }
            Method::Indent => (3, 3),
            Method::Format => (0, Method::MOST_FORMATTED),
            Method::StartsWith | Method::EndsWith => (1, 1),
            Method::Replace => (2, 3),
            Method::Get => (1, 2),
        }
    }
}

/// The kind [`JinjaOp::Is`] tests for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IsKind {
    String,
    Mapping,
    Sequence,
    Iterable,
    Number,
    Integer,
    Boolean,
    True,
    False,
}

impl IsKind {
    /// The test `is NAME`, if it is one of these.
    pub(crate) fn named(name: &str) -> Option<IsKind> {
        Some(match name {
            "string" => IsKind::String,
            "mapping" => IsKind::Mapping,
            "sequence" => IsKind::Sequence,
            "iterable" => IsKind::Iterable,
            "number" => IsKind::Number,
            "integer" => IsKind::Integer,
            "boolean" => IsKind::Boolean,
            "true" => IsKind::True,
            "false" => IsKind::False,
            _ => return None,
        })
    }
}

/// An integer operator of [`JinjaOp::Arith`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arith {
    Sub,
    Mul,
    FloorDiv,
    Rem,
    Pow,
    /// `-x` (one argument).
    Neg,
}

impl Arith {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Arith::Sub | Arith::Neg => "-",
            Arith::Mul => "*",
            Arith::FloorDiv => "//",
            Arith::Rem => "%",
            Arith::Pow => "**",
        }
    }
}

impl Func {
    /// Go's own built-in functions.
    const GO_BUILTINS: &'static [(&'static str, Func)] = &[
        ("and", Func::And),
        ("or", Func::Or),
        ("not", Func::Not),
        ("eq", Func::Eq),
        ("ne", Func::Ne),
        ("lt", Func::Lt),
        ("le", Func::Le),
        ("gt", Func::Gt),
        ("ge", Func::Ge),
        ("len", Func::Len),
        ("index", Func::Index),
        ("slice", Func::Slice),
        ("print", Func::Print),
        ("printf", Func::Printf),
        ("println", Func::Println),
        ("html", Func::Html),
        ("js", Func::Js),
        ("urlquery", Func::Urlquery),
        ("call", Func::Call),
    ];

    /// The library's shared functions, the same in every syntax: printing
    /// helpers and the message markers.
    pub(crate) const SHARED: &'static [(&'static str, Func)] = &[
        ("toJSON", Func::ToJson),
        ("tojson", Func::ToJson),
        ("join", Func::Join),
        ("lower", Func::Lower),
        ("upper", Func::Upper),
        ("trim", Func::Trim),
        ("role", Func::Role),
        ("history", Func::History),
        ("media", Func::Media),
        ("section", Func::BudgetSection),
        ("endsection", Func::EndSection),
        ("cache_breakpoint", Func::CacheBreakpoint),
    ];

    /// Every function a Go template names: Go's built-ins, then the shared
    /// set (for lookup and did-you-mean).
    pub(crate) fn go_names() -> impl Iterator<Item = (&'static str, Func)> {
        Func::GO_BUILTINS.iter().chain(Func::SHARED).copied()
    }

    /// The function's name in messages (`?` for a host function: its name
    /// is in [`Program::hosts`]).
    pub(crate) fn name(self) -> &'static str {
        Func::go_names().find(|(_, f)| *f == self).map_or(
            match self {
                Func::Lookup => "lookup",
                Func::DataRole => "message",
                Func::Dict => "hash",
                Func::Section => "section",
                Func::Hbs(helper) => helper.name(),
                Func::Jinja(op) => match op {
                    JinjaOp::Defined => "defined",
                    JinjaOp::Default => "default",
                    JinjaOp::Concat => "~",
                    JinjaOp::Add => "+",
                    JinjaOp::In => "in",
                    JinjaOp::Cond => "if",
                    JinjaOp::Slice => "[:]",
                    JinjaOp::Raise => "raise_exception",
                    JinjaOp::SetOr | JinjaOp::Held | JinjaOp::Tested => "set",
                    JinjaOp::Arith(op) => op.name(),
                    JinjaOp::Is(_) => "is",
                    JinjaOp::ToJson => "tojson",
                    JinjaOp::Item => "[]",
                    JinjaOp::Strftime => "strftime_now",
                    JinjaOp::String => "string",
                    JinjaOp::Select(select) if select.reject => "rejectattr",
                    JinjaOp::Select(_) => "selectattr",
                    JinjaOp::MapAttr | JinjaOp::MapFilter => "map",
                    JinjaOp::List => "list",
                    JinjaOp::Unpack => "for",
                    JinjaOp::Extreme(order) if order.reverse => "max",
                    JinjaOp::Extreme(_) => "min",
                    JinjaOp::Sort(_) => "sort",
                    JinjaOp::Unique(_) => "unique",
                    JinjaOp::Dict => "{}",
                    JinjaOp::ListOf => "[]",
                    JinjaOp::Unset | JinjaOp::Top => "namespace",
                    JinjaOp::OrEmpty => "print",
                    JinjaOp::Loose(false) => "==",
                    JinjaOp::Loose(true) => "!=",
                    JinjaOp::Range => "range",
                    JinjaOp::Macro(_) => "macro",
                    JinjaOp::Method(_) => "method",
                },
                _ => "?",
            },
            |(name, _)| name,
        )
    }

    /// How many arguments it takes: (minimum, maximum).
    pub(crate) fn arity(self) -> (usize, Option<usize>) {
        match self {
            Func::And | Func::Or => (1, None),
            Func::Not | Func::Len | Func::ToJson | Func::Lower | Func::Upper | Func::Trim => {
                (1, Some(1))
            }
            // `role(name, attributes)`: a Prompty role line's attributes.
            Func::Role => (1, Some(2)),
            Func::DataRole => (2, Some(2)),
            Func::History => (0, Some(0)),
            Func::Media => (2, Some(2)),
            Func::Section => (1, Some(1)),
            Func::BudgetSection => (1, Some(7)),
            Func::EndSection | Func::CacheBreakpoint => (0, Some(0)),
            Func::Hbs(helper) => helper.arity(),
            Func::Jinja(JinjaOp::Defined) => (1, Some(1)),
            Func::Jinja(JinjaOp::Raise | JinjaOp::Unset) => (0, Some(0)),
            Func::Jinja(
                JinjaOp::Arith(Arith::Neg)
                | JinjaOp::Is(_)
                | JinjaOp::Strftime
                | JinjaOp::String
                | JinjaOp::List
                | JinjaOp::Extreme(_)
                | JinjaOp::Unique(_)
                | JinjaOp::Held
                | JinjaOp::Tested,
            ) => (1, Some(1)),
            Func::Jinja(JinjaOp::Cond | JinjaOp::Slice | JinjaOp::Unpack) => (3, Some(3)),
            Func::Jinja(JinjaOp::ToJson) => (4, Some(4)),
            Func::Jinja(JinjaOp::Select(_)) => (2, Some(3)),
            Func::Jinja(JinjaOp::Range) => (1, Some(3)),
            Func::Jinja(JinjaOp::Macro(_)) => (0, None),
            Func::Jinja(JinjaOp::Method(method)) => {
                let (min, max) = method.arity();
                (min + 1, Some(max + 1))
            }
            Func::Jinja(_) => (2, Some(2)),
            Func::Eq => (2, None),
            Func::Ne | Func::Lt | Func::Le | Func::Gt | Func::Ge | Func::Join | Func::Lookup => {
                (2, Some(2))
            }
            Func::Index | Func::Slice | Func::Call => (1, None),
            Func::Printf => (1, None),
            Func::Print
            | Func::Println
            | Func::Html
            | Func::Js
            | Func::Urlquery
            | Func::Dict
            | Func::Host(_) => (0, None),
        }
    }
}

//! The Handlebars parse tree. Every node keeps its byte range in the body,
//! so tools (`teleprompt check`) can walk it and point at what they find.

use std::ops::Range;

/// A byte range in the template body.
pub type Span = Range<usize>;

/// A parsed template: its top-level nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    /// The nodes, in order.
    pub nodes: Vec<Node>,
}

/// One node of the tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// Literal text, after whitespace control and standalone-line removal.
    Text(Text),
    /// `{{! … }}` or `{{!-- … --}}`.
    Comment(Span),
    /// `{{expr}}`, `{{{expr}}}` or `{{&expr}}` (all print raw: no escaping).
    Mustache(Mustache),
    /// `{{#name …}}…{{else}}…{{/name}}` or an inverse section `{{^name}}…{{/name}}`.
    Block(Box<Block>),
    /// `{{> name context}}`.
    Partial(Partial),
    /// `{{#*inline "name"}}…{{/inline}}`.
    Inline(Box<Inline>),
}

/// Literal text.
#[derive(Clone, Debug, PartialEq)]
pub struct Text {
    /// What it prints (the source may have lost whitespace or an escape).
    pub text: String,
    /// Where it was in the body.
    pub span: Span,
}

/// A printing tag.
#[derive(Clone, Debug, PartialEq)]
pub struct Mustache {
    /// The helper call or value.
    pub call: Call,
    /// Written with triple braces or `&`.
    pub raw: bool,
    /// The whole tag.
    pub span: Span,
}

/// A helper call, or a lone value: `name params… key=value…`.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The helper name or the value.
    pub head: Expr,
    /// Positional arguments.
    pub params: Vec<Expr>,
    /// Hash arguments, in order.
    pub hash: Vec<HashPair>,
    /// From the head to the last argument.
    pub span: Span,
}

/// `key=value`.
#[derive(Clone, Debug, PartialEq)]
pub struct HashPair {
    /// The key.
    pub key: String,
    /// The value.
    pub value: Expr,
    /// `key=value` as written.
    pub span: Span,
}

/// A block.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// `#` or `^` (inverse section).
    pub inverted: bool,
    /// The helper and its arguments.
    pub call: Call,
    /// `as |a b|` names.
    pub params: Vec<Ident>,
    /// The main body.
    pub body: Vec<Node>,
    /// The body after `{{else}}` (an `{{else if …}}` chain is one nested block).
    pub inverse: Option<Vec<Node>>,
    /// The opening tag.
    pub open: Span,
    /// The closing tag (for a chained `{{else if}}`, the chain's closing tag).
    pub close: Span,
}

/// A partial call.
#[derive(Clone, Debug, PartialEq)]
pub struct Partial {
    /// The partial's name.
    pub name: String,
    /// Where the name is.
    pub name_span: Span,
    /// The context it runs with (the current context when absent).
    pub context: Option<Expr>,
    /// Hash arguments: keys set on the context.
    pub hash: Vec<HashPair>,
    /// The whole tag (the opening tag of a partial block).
    pub span: Span,
    /// A partial block's content (`{{#> name}}…{{/name}}`): what
    /// `{{> @partial-block}}` renders, and what renders when there is no
    /// partial `name`.
    pub block: Option<Vec<Node>>,
    /// A dynamic partial's name (`{{> (whichPartial)}}`); `name` is then
    /// its text.
    pub dynamic: Option<Expr>,
    /// The whitespace before a standalone `{{> name}}`: every line the
    /// partial prints is indented by it (as handlebars.js does).
    pub indent: String,
}

/// An inline partial definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Inline {
    /// The name.
    pub name: String,
    /// Where the name is.
    pub name_span: Span,
    /// The body.
    pub body: Vec<Node>,
    /// The opening tag.
    pub open: Span,
}

/// A name with its place.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it is.
    pub span: Span,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A path.
    Path(Path),
    /// A string literal.
    String(String, Span),
    /// A number literal.
    Number(Number, Span),
    /// `true` or `false`.
    Bool(bool, Span),
    /// `null` or `undefined`.
    Null(Span),
    /// `(helper args…)`.
    Sub(Box<Call>),
}

impl Expr {
    /// Where the expression is.
    pub fn span(&self) -> Span {
        match self {
            Expr::Path(path) => path.span.clone(),
            Expr::String(_, span)
            | Expr::Number(_, span)
            | Expr::Bool(_, span)
            | Expr::Null(span) => span.clone(),
            Expr::Sub(call) => call.span.clone(),
        }
    }
}

/// A number literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// Without fraction.
    Int(i64),
    /// With a fraction (or too large for an integer).
    Float(f64),
}

/// A path: `a.b`, `a/b`, `this`, `.`, `../a`, `@root.a`, `@index`, `[odd key]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    /// Starts with `@` (a data variable: `@index`, `@root`, …).
    pub data: bool,
    /// How many `../` it starts with.
    pub parents: usize,
    /// Starts with `this` or `.` (so it never names a helper or block param).
    pub explicit: bool,
    /// The keys after any `this`, `..` and `@`.
    pub parts: Vec<Ident>,
    /// The whole path.
    pub span: Span,
}

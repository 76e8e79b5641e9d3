//! The parse tree of a Go template. Public to the library so tools such as
//! `teleprompt check` can walk it; every node keeps its byte range in the body.

use std::ops::Range;

/// A byte range in the template body.
pub type Span = Range<usize>;

/// A parsed template body: the main list and the `{{define}}`d templates.
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    /// The main template.
    pub root: ListNode,
    /// Templates made by `{{define}}` and `{{block}}`, in source order.
    pub defines: Vec<DefineNode>,
}

/// A named template from `{{define "name"}}…{{end}}` or `{{block}}`.
#[derive(Clone, Debug, PartialEq)]
pub struct DefineNode {
    /// The whole definition, `{{define` to `{{end}}`.
    pub span: Span,
    /// The template's name, unquoted.
    pub name: String,
    /// The quoted name in the source.
    pub name_span: Span,
    /// The body.
    pub list: ListNode,
}

/// A sequence of nodes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListNode {
    /// Where the list is (empty range at its start when it is empty).
    pub span: Span,
    /// The nodes in order.
    pub nodes: Vec<Node>,
}

/// One element of a list.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// Text, already trimmed by `{{-`/`-}}` markers.
    Text(TextNode),
    /// `{{/* … */}}`.
    Comment(Span),
    /// `{{pipeline}}`: prints the value unless it declares variables.
    Action(ActionNode),
    /// `{{if}}`.
    If(BranchNode),
    /// `{{range}}`.
    Range(BranchNode),
    /// `{{with}}`.
    With(BranchNode),
    /// `{{template "name" pipeline}}`.
    Template(TemplateNode),
    /// `{{block "name" pipeline}}…{{end}}`: a definition and a call in place.
    Block(TemplateNode),
    /// `{{break}}`.
    Break(Span),
    /// `{{continue}}`.
    Continue(Span),
}

/// Literal text.
#[derive(Clone, Debug, PartialEq)]
pub struct TextNode {
    /// The text's place in the body.
    pub span: Span,
}

/// An action that evaluates a pipeline.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionNode {
    /// From `{{` to `}}`.
    pub span: Span,
    /// The pipeline.
    pub pipe: PipeNode,
}

/// `if`, `range` and `with`: a pipeline, a body and an optional else.
#[derive(Clone, Debug, PartialEq)]
pub struct BranchNode {
    /// The opening action, `{{if …}}`.
    pub span: Span,
    /// The tested (or iterated) pipeline.
    pub pipe: PipeNode,
    /// The body.
    pub list: ListNode,
    /// The `{{else}}` part; `{{else if}}` / `{{else with}}` nest a node here.
    pub else_list: Option<ListNode>,
}

/// `{{template}}` or `{{block}}`.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateNode {
    /// The action.
    pub span: Span,
    /// The name, unquoted.
    pub name: String,
    /// The quoted name.
    pub name_span: Span,
    /// The value passed as dot.
    pub pipe: Option<PipeNode>,
}

/// A pipeline: optional variable declarations, then commands joined by `|`.
#[derive(Clone, Debug, PartialEq)]
pub struct PipeNode {
    /// From the first declaration or command to the last command.
    pub span: Span,
    /// True for `$x = …`, false for `$x := …`.
    pub is_assign: bool,
    /// Declared or assigned variables (two for `range $i, $v :=`).
    pub decl: Vec<VariableNode>,
    /// The commands.
    pub cmds: Vec<CommandNode>,
}

/// One command: a function and its arguments, or a single operand.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandNode {
    /// The command's text.
    pub span: Span,
    /// The words.
    pub args: Vec<Arg>,
}

/// A word of a command.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// `.`
    Dot(Span),
    /// `nil`
    Nil(Span),
    /// `true` / `false`
    Bool(bool, Span),
    /// A number or character constant.
    Number(NumberNode),
    /// A string literal, unquoted.
    String(StringNode),
    /// `.a.b`: a field chain from dot.
    Field(FieldNode),
    /// `$x.a.b`: a variable and optional fields.
    Variable(VariableNode),
    /// A function name.
    Identifier(IdentNode),
    /// `(pipeline).a.b`
    Chain(ChainNode),
    /// `(pipeline)`
    Pipe(Box<PipeNode>),
}

impl Arg {
    /// Where the word is.
    pub fn span(&self) -> Span {
        match self {
            Arg::Dot(span) | Arg::Nil(span) | Arg::Bool(_, span) => span.clone(),
            Arg::Number(node) => node.span.clone(),
            Arg::String(node) => node.span.clone(),
            Arg::Field(node) => node.span.clone(),
            Arg::Variable(node) => node.span.clone(),
            Arg::Identifier(node) => node.span.clone(),
            Arg::Chain(node) => node.span.clone(),
            Arg::Pipe(node) => node.span.clone(),
        }
    }
}

/// A number literal.
#[derive(Clone, Debug, PartialEq)]
pub struct NumberNode {
    /// The literal.
    pub span: Span,
    /// Its value.
    pub value: Number,
}

/// The value of a number literal: Go's ideal constants become `int` or
/// `float64` the way `text/template` turns them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// An integer (also character constants).
    Int(i64),
    /// A float (a literal with `.`, an exponent, or too large for int).
    Float(f64),
}

/// A string literal.
#[derive(Clone, Debug, PartialEq)]
pub struct StringNode {
    /// The quoted literal.
    pub span: Span,
    /// The value.
    pub text: String,
}

/// One `.name` of a chain.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name without the dot.
    pub name: String,
    /// `.name` in the source.
    pub span: Span,
}

/// `.a.b.c`
#[derive(Clone, Debug, PartialEq)]
pub struct FieldNode {
    /// The whole chain.
    pub span: Span,
    /// The names.
    pub idents: Vec<Ident>,
}

/// `$` or `$x`, with optional fields.
#[derive(Clone, Debug, PartialEq)]
pub struct VariableNode {
    /// The whole chain.
    pub span: Span,
    /// The variable's name with its `$`.
    pub name: String,
    /// Fields after it.
    pub fields: Vec<Ident>,
}

/// A function name.
#[derive(Clone, Debug, PartialEq)]
pub struct IdentNode {
    /// The name.
    pub span: Span,
    /// Its text.
    pub name: String,
}

/// `(pipeline).a.b`
#[derive(Clone, Debug, PartialEq)]
pub struct ChainNode {
    /// The whole chain.
    pub span: Span,
    /// The parenthesised pipeline.
    pub node: Box<Arg>,
    /// The fields.
    pub fields: Vec<Ident>,
}

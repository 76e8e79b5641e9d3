//! What a Go template reads of its data, found on its parse tree: field
//! chains from dot, `$` and variables, with dot followed into `range` (each
//! element) and `with` (the value), and into `define`s called with a path.

use std::collections::HashMap;

use super::ast::{self, Arg, ListNode, Node, PipeNode};
use crate::analysis::{Inputs, Step, MAX_PATH};

/// Where dot or a variable points: a path from the root, or somewhere the
/// walk cannot follow (a function's result, a `define` called with one).
type Place = Option<Vec<Step>>;

/// The paths `tree` reads.
pub(crate) fn inputs(tree: &ast::Tree) -> Inputs {
    let mut walk = Walk {
        tree,
        inputs: Inputs::default(),
        vars: HashMap::new(),
        calls: Vec::new(),
    };
    walk.vars.insert("$".to_string(), Some(Vec::new()));
    walk.list(&tree.root, &Some(Vec::new()));
    walk.inputs
}

struct Walk<'t> {
    tree: &'t ast::Tree,
    inputs: Inputs,
    vars: HashMap<String, Place>,
    /// The `define`s being walked, to stop at recursion.
    calls: Vec<&'t str>,
}

impl<'t> Walk<'t> {
    fn list(&mut self, list: &'t ListNode, dot: &Place) {
        for node in &list.nodes {
            match node {
                Node::Action(action) => {
                    let place = self.pipe(&action.pipe, dot, false);
                    if action.pipe.decl.is_empty() {
                        // A path printed as it is.
                        if let Some(path) = &place {
                            self.inputs.add_printed(path, action.span.clone());
                        }
                    }
                    self.declare(&action.pipe, place);
                }
                Node::If(branch) => {
                    self.pipe(&branch.pipe, dot, false);
                    self.list(&branch.list, dot);
                    if let Some(other) = &branch.else_list {
                        self.list(other, dot);
                    }
                }
                Node::Range(branch) => {
                    let over = self.pipe(&branch.pipe, dot, true);
                    let each = over.map(|mut path| {
                        path.push(Step::Each);
                        path
                    });
                    // `range $i, $e := …`: the last variable is the element.
                    let decl = &branch.pipe.decl;
                    for (index, variable) in decl.iter().enumerate() {
                        let place = if index + 1 == decl.len() {
                            each.clone()
                        } else {
                            None
                        };
                        self.vars.insert(variable.name.clone(), place);
                    }
                    self.list(&branch.list, &each);
                    if let Some(other) = &branch.else_list {
                        self.list(other, dot);
                    }
                }
                Node::With(branch) => {
                    let value = self.pipe(&branch.pipe, dot, true);
                    self.declare(&branch.pipe, value.clone());
                    self.list(&branch.list, &value);
                    if let Some(other) = &branch.else_list {
                        self.list(other, dot);
                    }
                }
                Node::Template(call) | Node::Block(call) => {
                    let passed = match &call.pipe {
                        Some(pipe) => self.pipe(pipe, dot, true),
                        None => None,
                    };
                    self.call(&call.name, &passed);
                }
                Node::Text(_) | Node::Comment(_) | Node::Break(_) | Node::Continue(_) => {}
            }
        }
    }

    /// Walks a `define` with dot at `dot` (once per call chain).
    fn call(&mut self, name: &'t str, dot: &Place) {
        if dot.is_none() || self.calls.contains(&name) || self.calls.len() > 16 {
            return;
        }
        let Some(define) = self.tree.defines.iter().find(|define| define.name == name) else {
            return;
        };
        // Variables do not cross into a define; `$` there is its dot.
        let saved = std::mem::take(&mut self.vars);
        self.vars.insert("$".to_string(), dot.clone());
        self.calls.push(name);
        self.list(&define.list, dot);
        self.calls.pop();
        self.vars = saved;
    }

    /// `$x := …` / `$x = …`: the variables now point where the pipeline's
    /// value does.
    fn declare(&mut self, pipe: &PipeNode, place: Place) {
        for variable in &pipe.decl {
            self.vars.insert(variable.name.clone(), place.clone());
        }
    }

    /// `base` followed by `idents`, unless that is more than [`MAX_PATH`]
    /// keys: then its first [`MAX_PATH`] keys are read whole (at `arg`)
    /// and the walk follows no further (a chain of variables, each a key
    /// further, would otherwise hold paths of every length).
    fn extend(&mut self, base: Place, idents: &[ast::Ident], arg: &Arg) -> Place {
        let mut path = base?;
        path.extend(idents.iter().map(|ident| Step::Key(ident.name.clone())));
        if path.len() > MAX_PATH {
            path.truncate(MAX_PATH);
            self.inputs.add_at(&path, arg.span(), true);
            return None;
        }
        Some(path)
    }

    /// Walks a pipeline; returns where its value points when it is a single
    /// path (`.issue.labels`), for `range`, `with` and variables. `walked`
    /// says the value is walked further, so the path is not read whole.
    fn pipe(&mut self, pipe: &PipeNode, dot: &Place, walked: bool) -> Place {
        let single = pipe.cmds.len() == 1 && pipe.cmds.first().is_some_and(|c| c.args.len() == 1);
        let mut place = None;
        for command in &pipe.cmds {
            for arg in &command.args {
                let path = self.arg(arg, dot);
                if single {
                    place = path.clone();
                }
                if let Some(path) = path {
                    self.inputs.add_at(&path, arg.span(), !(single && walked));
                }
            }
        }
        place
    }

    /// The path an argument reads, walking what it holds.
    fn arg(&mut self, arg: &Arg, dot: &Place) -> Place {
        match arg {
            Arg::Dot(_) => dot.clone(),
            Arg::Field(field) => self.extend(dot.clone(), &field.idents, arg),
            Arg::Variable(variable) => {
                let base = self.vars.get(&variable.name).cloned().flatten();
                self.extend(base, &variable.fields, arg)
            }
            Arg::Chain(chain) => {
                self.arg(&chain.node, dot);
                None
            }
            Arg::Pipe(inner) => {
                self.pipe(inner, dot, false);
                None
            }
            Arg::Nil(_) | Arg::Bool(..) | Arg::Number(_) | Arg::String(_) | Arg::Identifier(_) => {
                None
            }
        }
    }
}

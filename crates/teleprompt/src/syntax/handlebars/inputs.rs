//! What a Handlebars template reads of its data, found on its parse tree:
//! paths from the current context, `../` parents, `@root` and block
//! parameters, with the context followed into `#each` (each element) and
//! `#with` (the value). Helpers' names are not data; their arguments are.

use std::collections::{HashMap, HashSet};

use super::ast::{Call, Expr, Node, Path};
use super::lower::helpers;
use crate::analysis::{Inputs, Step};

/// Where a context or block parameter points: a path from the root, or
/// somewhere the walk cannot follow (a helper's result).
type Place = Option<Vec<Step>>;

/// The paths `nodes` read.
pub(crate) fn inputs(nodes: &[Node]) -> Inputs {
    let mut walk = Walk {
        inputs: Inputs::default(),
        // The names `{{name}}` calls rather than reads: helpers that run
        // without arguments (`{{role}}`, `{{each}}` read the data).
        helpers: helpers()
            .filter(|(_, func)| func.arity().0 == 0)
            .map(|(name, _)| name)
            .chain(["set", "log"])
            .collect(),
        params: Vec::new(),
    };
    walk.nodes(nodes, &mut vec![Some(Vec::new())]);
    walk.inputs
}

struct Walk {
    inputs: Inputs,
    helpers: HashSet<&'static str>,
    /// Block parameters in scope (`as |item index|`), innermost last.
    params: Vec<HashMap<String, Place>>,
}

impl Walk {
    /// `stack`: the contexts, the current one last (`../` goes down it).
    fn nodes(&mut self, nodes: &[Node], stack: &mut Vec<Place>) {
        for node in nodes {
            match node {
                Node::Mustache(mustache) => {
                    self.call(&mustache.call, stack, false);
                    // A bare path printed as it is.
                    let call = &mustache.call;
                    if call.params.is_empty() && call.hash.is_empty() {
                        if let Expr::Path(path) = &call.head {
                            let helper = !path.explicit
                                && !path.data
                                && path.parents == 0
                                && path.parts.len() == 1
                                && path
                                    .parts
                                    .first()
                                    .is_some_and(|part| self.helpers.contains(part.name.as_str()));
                            if let (false, Some(place)) = (helper, self.path(path, stack)) {
                                self.inputs.add_printed(&place, mustache.span.clone());
                            }
                        }
                    }
                }
                Node::Block(block) => {
                    let name = match &block.call.head {
                        Expr::Path(path)
                            if !path.data && path.parents == 0 && path.parts.len() == 1 =>
                        {
                            path.parts.first().map(|part| part.name.as_str())
                        }
                        _ => None,
                    };
                    let first = block.call.params.first();
                    let inner = match (name, first) {
                        (Some("each"), Some(list)) => {
                            self.expr(list, stack, true).map(|mut path| {
                                path.push(Step::Each);
                                path
                            })
                        }
                        (Some("with"), Some(value)) => self.expr(value, stack, true),
                        _ => {
                            self.call(&block.call, stack, true);
                            stack.last().cloned().flatten()
                        }
                    };
                    let changes = matches!(name, Some("each" | "with"));
                    if changes {
                        for param in block.call.params.iter().skip(1) {
                            self.expr(param, stack, false);
                        }
                    }
                    // `as |item index|`: the first names the element (or
                    // the value); the others are not data.
                    let mut scope = HashMap::new();
                    for (index, param) in block.params.iter().enumerate() {
                        let place = if index == 0 && changes {
                            inner.clone()
                        } else {
                            None
                        };
                        scope.insert(param.name.clone(), place);
                    }
                    self.params.push(scope);
                    if changes {
                        stack.push(inner);
                        self.nodes(&block.body, stack);
                        stack.pop();
                    } else {
                        self.nodes(&block.body, stack);
                    }
                    self.params.pop();
                    if let Some(inverse) = &block.inverse {
                        self.nodes(inverse, stack);
                    }
                }
                Node::Partial(partial) => {
                    if let Some(context) = &partial.context {
                        self.expr(context, stack, false);
                    }
                    for pair in &partial.hash {
                        self.expr(&pair.value, stack, false);
                    }
                    if let Some(block) = &partial.block {
                        self.nodes(block, stack);
                    }
                }
                Node::Inline(inline) => self.nodes(&inline.body, stack),
                Node::Text(_) | Node::Comment(_) => {}
            }
        }
    }

    /// A call: a helper with its arguments, or (a bare path) a value read.
    fn call(&mut self, call: &Call, stack: &mut [Place], block: bool) {
        let helper = call.params.is_empty() && call.hash.is_empty() && !block;
        let named = matches!(&call.head, Expr::Path(path)
            if !path.explicit && !path.data && path.parents == 0 && path.parts.len() == 1
                && path.parts.first().is_some_and(|part| self.helpers.contains(part.name.as_str())));
        // The head is data when it is a bare path no helper has, or a
        // subexpression.
        if (helper && !named) || !matches!(call.head, Expr::Path(_)) {
            self.expr(&call.head, stack, false);
        }
        for param in &call.params {
            self.expr(param, stack, false);
        }
        for pair in &call.hash {
            self.expr(&pair.value, stack, false);
        }
    }

    /// The path an expression reads (noted), walking what it holds.
    fn expr(&mut self, expr: &Expr, stack: &mut [Place], walked: bool) -> Place {
        match expr {
            Expr::Path(path) => {
                let place = self.path(path, stack)?;
                self.inputs.add_at(&place, path.span.clone(), !walked);
                Some(place)
            }
            Expr::Sub(call) => {
                self.call(call, stack, true);
                None
            }
            Expr::String(..) | Expr::Number(..) | Expr::Bool(..) | Expr::Null(_) => None,
        }
    }

    fn path(&self, path: &Path, stack: &[Place]) -> Place {
        let keys = |base: Vec<Step>, parts: &[super::ast::Ident]| {
            let mut base = base;
            base.extend(parts.iter().map(|part| Step::Key(part.name.clone())));
            base
        };
        if path.data {
            // `@root.x`; other data variables (`@index`, `@key`) are not data.
            let (first, rest) = path.parts.split_first()?;
            return (first.name == "root").then(|| keys(Vec::new(), rest));
        }
        if !path.explicit && path.parents == 0 {
            if let Some(first) = path.parts.first() {
                let param = self
                    .params
                    .iter()
                    .rev()
                    .find_map(|scope| scope.get(&first.name));
                if let Some(place) = param {
                    return place.clone().map(|base| keys(base, &path.parts[1..]));
                }
            }
        }
        let depth = stack.len().checked_sub(1 + path.parents)?;
        let base = stack.get(depth)?.clone()?;
        Some(keys(base, &path.parts))
    }
}

//! Filters (`default`, `indent`, `tojson`, the ordering filters, `select`
//! and its kin over a generator's input), `is defined` and its operands,
//! and `.key` reads of paths.

use super::*;

impl<'a> Lowerer<'a, '_> {
    /// `value | filter(…)`.
    #[inline(never)]
    pub(super) fn filter_expr(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        Some(match expr {
            // A map with integer keys, sorted: its pairs (constants).
            ast::Expr::Filter(filter)
                if filter.name == "dictsort"
                    && filter.args.is_empty()
                    && filter
                        .expr
                        .as_ref()
                        .is_some_and(|map| self.int_map(map).is_some()) =>
            {
                let mut pairs = self.int_map(filter.expr.as_ref()?)?.to_vec();
                pairs.sort_by_key(|(key, _)| *key);
                let pairs = pairs
                    .into_iter()
                    .map(|(key, value)| serde_json::Value::Array(vec![key.into(), value]));
                Expr::Const(Const::List(pairs.collect()))
            }
            ast::Expr::Filter(filter) => {
                let input = match filter.name {
                    "list" | "join" | "min" | "max" | "sort" | "unique" => {
                        self.generator_input(filter.expr.as_ref()?)?
                    }
                    _ => self.expr(filter.expr.as_ref()?)?,
                };
                // A missing key is Jinja's empty text to these filters
                // in a lenient render.
                let input = match filter.name {
                    "lower" | "upper" | "trim" | "length" | "count" | "capitalize" | "title"
                    | "replace" | "string" => self.or_empty(input, expr.span()),
                    _ => input,
                };
                let func = match filter.name {
                    "lower" => Func::Lower,
                    "upper" => Func::Upper,
                    "trim" => Func::Trim,
                    "length" | "count" => Func::Len,
                    "default" | "d" => return self.default(filter, expr.span()),
                    "tojson" => return self.tojson(input, &filter.args, expr.span()),
                    // Python's `str.replace` of a string, as the method.
                    "replace" => {
                        let mut args = vec![input];
                        for arg in &filter.args {
                            let ast::CallArg::Pos(value) = arg else {
                                return self.no(|| "`replace` with named arguments".into());
                            };
                            args.push(self.expr(value)?);
                        }
                        // A `count` too in Jinja2, not in minijinja (its error).
                        if args.len() != 3 {
                            return self.no(|| "`replace` with other arguments".into());
                        }
                        return Some(Expr::Call {
                            func: Func::Jinja(JinjaOp::Method(Method::Replace)),
                            args: args.into_boxed_slice(),
                            span: span(expr.span()),
                        });
                    }
                    "string" => Func::Jinja(JinjaOp::String),
                    "capitalize" => Func::Jinja(JinjaOp::Method(Method::Capitalize)),
                    "title" => Func::Jinja(JinjaOp::Method(Method::Title)),
                    "int" => Func::Jinja(JinjaOp::Method(Method::Int)),
                    "indent" => return self.indent(input, &filter.args, expr.span()),
                    "list" => Func::Jinja(JinjaOp::List),
                    "min" | "max" | "sort" | "unique" => {
                        return self.ordering(filter, input, expr.span())
                    }
                    // A map's pairs other than a loop's (`for k, v in x |
                    // items`): an iterator on minijinja, minijinja's where
                    // it runs (Hermes 2 Pro passes one to a macro where a
                    // tool's parameter is an array).
                    "items" => return Some(call(Func::Jinja(JinjaOp::Raise), [], expr.span())),
                    // A generator in Jinja2: only `list`, `join`, `map`
                    // and a loop take one (`generator_input`); anything
                    // else (`tojson` of one fails in Jinja2) is minijinja's
                    // where it runs.
                    "selectattr" | "rejectattr" | "map" | "select" | "reject" => {
                        return Some(call(Func::Jinja(JinjaOp::Raise), [], expr.span()))
                    }
                    "join" => {
                        let separator = match filter.args.as_slice() {
                            [] => Expr::Const(Const::Str("".into())),
                            [ast::CallArg::Pos(separator)] => self.expr(separator)?,
                            _ => return self.no(|| "`join` with an attribute".into()),
                        };
                        return Some(call(Func::Join, [separator, input], expr.span()));
                    }
                    // Unknown to the environment (a chat template's, failing
                    // only where it runs): minijinja's error, where reached.
                    other if !self.filters.contains(&other) => {
                        return Some(call(Func::Jinja(JinjaOp::Raise), [], expr.span()))
                    }
                    other => return self.no(|| format!("filter `{other}`")),
                };
                if !filter.args.is_empty() {
                    return self.no(|| format!("filter `{}` with arguments", filter.name));
                }
                call(func, [input], expr.span())
            }
            other => return self.no(|| expression_name(other)),
        })
    }

    /// A key read in a lenient render where Jinja's undefined is an empty
    /// text (printed, or given to a text's filter): the value, or "" where
    /// it is missing ([`JinjaOp::OrEmpty`]). Not a name the environment
    /// defines (a function printed is an error).
    pub(super) fn or_empty(&self, expr: Expr, at: machinery::Span) -> Expr {
        let read = match &expr {
            Expr::Path { base, keys, .. } => !matches!(
                (&**base, &**keys),
                (Expr::Root, [name]) if self.globals.contains(&*name.name)
            ),
            Expr::Call {
                func: Func::Jinja(JinjaOp::Item | JinjaOp::Held),
                ..
            } => true,
            _ => false,
        };
        match self.lenient && read {
            true => call(Func::Jinja(JinjaOp::OrEmpty), [expr], at),
            false => expr,
        }
    }

    /// `list | sort(reverse, case_sensitive, attribute)` (by position in
    /// Jinja2's order, or by name), `unique(case_sensitive)`, `min` and
    /// `max` (`case_sensitive` by name: minijinja takes no other): the
    /// options constants, the attribute a plain key (not a dotted path,
    /// an index or a list of keys).
    #[inline(never)]
    pub(super) fn ordering(
        &self,
        filter: &ast::Filter<'a>,
        input: Expr,
        at: machinery::Span,
    ) -> Option<Expr> {
        let (positions, names): (&[&str], &[&str]) = match filter.name {
            "sort" => (
                &["reverse", "case_sensitive", "attribute"],
                &["reverse", "case_sensitive", "attribute"],
            ),
            "unique" => (&["case_sensitive"], &["case_sensitive"]),
            _ => (&[], &["case_sensitive"]),
        };
        let mut order = Order {
            reverse: filter.name == "max",
            case_sensitive: false,
        };
        let mut attribute = Const::Null;
        let mut seen = HashSet::new();
        for (position, arg) in filter.args.iter().enumerate() {
            let (name, value) = match arg {
                ast::CallArg::Pos(value) => (positions.get(position).copied(), value),
                ast::CallArg::Kwarg(name, value) => {
                    (names.iter().copied().find(|n| n == name), value)
                }
                _ => (None, value_of_splat(arg)),
            };
            let constant = match value {
                ast::Expr::Const(constant) => constant_of(&constant.value),
                _ => None,
            };
            match (name.filter(|name| seen.insert(*name)), constant) {
                (Some("reverse"), Some(Const::Bool(reverse))) => order.reverse = reverse,
                (Some("case_sensitive"), Some(Const::Bool(exact))) => order.case_sensitive = exact,
                (Some("attribute"), Some(Const::Str(key))) if plain_key(&key) => {
                    attribute = Const::Str(key)
                }
                _ => return self.no(|| format!("filter `{}` with other arguments", filter.name)),
            }
        }
        let op = match filter.name {
            "sort" => JinjaOp::Sort(order),
            "unique" => JinjaOp::Unique(order),
            _ => JinjaOp::Extreme(order),
        };
        Some(match op {
            JinjaOp::Sort(_) => call(Func::Jinja(op), [input, Expr::Const(attribute)], at),
            _ => call(Func::Jinja(op), [input], at),
        })
    }

    /// `value | default(fallback)`, `default(fallback, boolean)` (a
    /// constant): the fallback where the value is
    /// not defined, or with `boolean` true where it is false.
    pub(super) fn default(&self, filter: &ast::Filter<'a>, at: machinery::Span) -> Option<Expr> {
        let (fallback, boolean) = match filter.args.as_slice() {
            [ast::CallArg::Pos(fallback)] => (fallback, None),
            // By name too in Jinja2, not in minijinja (its error).
            [ast::CallArg::Pos(fallback), ast::CallArg::Pos(boolean)] => (fallback, Some(boolean)),
            _ => return self.no(|| "`default` with other arguments".into()),
        };
        let boolean = match boolean {
            None => false,
            Some(ast::Expr::Const(constant)) => match constant_of(&constant.value) {
                Some(Const::Bool(boolean)) => boolean,
                _ => return self.no(|| "`default` with a `boolean` not true or false".into()),
            },
            Some(_) => return self.no(|| "`default` with a computed `boolean`".into()),
        };
        let input = self.defined_operand(filter.expr.as_ref()?)?;
        let fallback = self.expr(fallback)?;
        Some(match boolean {
            false => call(Func::Jinja(JinjaOp::Default), [input, fallback], at),
            true => call(
                Func::Jinja(JinjaOp::Default),
                [input, fallback, Expr::Const(Const::Bool(true))],
                at,
            ),
        })
    }

    /// `text | indent(width, first, blank)`, the options constants (by
    /// position or name).
    pub(super) fn indent(
        &self,
        input: Expr,
        args: &[ast::CallArg<'a>],
        at: machinery::Span,
    ) -> Option<Expr> {
        let mut given = [Const::Int(4), Const::Bool(false), Const::Bool(false)];
        let mut seen = HashSet::new();
        for (position, arg) in args.iter().enumerate() {
            let (slot, value) = match arg {
                ast::CallArg::Pos(value) => (Some(position), value),
                ast::CallArg::Kwarg("width", value) => (Some(0), value),
                ast::CallArg::Kwarg("first", value) => (Some(1), value),
                ast::CallArg::Kwarg("blank", value) => (Some(2), value),
                _ => (None, value_of_splat(arg)),
            };
            let constant = match value {
                ast::Expr::Const(constant) => constant_of(&constant.value),
                _ => None,
            };
            let fits = matches!(
                (slot, &constant),
                (Some(0), Some(Const::Int(_) | Const::Str(_)))
                    | (Some(1 | 2), Some(Const::Bool(_)))
            );
            let (Some(slot), Some(constant), true) = (slot, constant, fits) else {
                return self.no(|| "`indent` with other arguments".into());
            };
            if !seen.insert(slot) {
                return self.no(|| "`indent` with other arguments".into());
            }
            given[slot] = constant;
        }
        let [width, first, blank] = given.map(Expr::Const);
        Some(call(
            Func::Jinja(JinjaOp::Method(Method::Indent)),
            [input, width, first, blank],
            at,
        ))
    }

    /// `value | tojson(…)` with constant options: `transformers`'
    /// `(ensure_ascii, indent, separators, sort_keys)` in a chat template,
    /// Jinja2's `(indent)` elsewhere, any of them by name (not
    /// `separators`).
    pub(super) fn tojson(
        &self,
        input: Expr,
        args: &[ast::CallArg<'a>],
        at: machinery::Span,
    ) -> Option<Expr> {
        let positions: &[&str] = match self.flavor {
            Flavor::ChatTemplate => &["ensure_ascii", "indent", "separators", "sort_keys"],
            _ => &["indent"],
        };
        // ensure_ascii, indent, sort_keys.
        let mut given = [Const::Bool(false), Const::Null, Const::Bool(false)];
        let mut seen = HashSet::new();
        for (position, arg) in args.iter().enumerate() {
            let (name, value) = match arg {
                ast::CallArg::Pos(value) => (positions.get(position).copied(), value),
                ast::CallArg::Kwarg(name, value) => (Some(*name), value),
                _ => (None, value_of_splat(arg)),
            };
            let constant = match value {
                ast::Expr::Const(constant) => constant_of(&constant.value),
                _ => None,
            };
            let slot = match name {
                // The default.
                Some("separators") if matches!(constant, Some(Const::Null)) => continue,
                Some("ensure_ascii") => 0,
                Some("indent") => 1,
                Some("sort_keys") => 2,
                _ => return self.no(|| "`tojson` with `separators` or other arguments".into()),
            };
            let Some(constant) = constant.filter(|_| seen.insert(slot)) else {
                return self.no(|| "`tojson` with arguments that are not constants".into());
            };
            let fits = match (slot, &constant) {
                (1, Const::Null | Const::Int(_) | Const::Str(_)) => true,
                (_, Const::Bool(_)) => slot != 1,
                _ => false,
            };
            if !fits {
                return self.no(|| "`tojson` with an argument of another type".into());
            }
            given[slot] = constant;
        }
        let [ensure_ascii, indent, sort_keys] = given.map(Expr::Const);
        Some(call(
            Func::Jinja(JinjaOp::ToJson),
            [input, ensure_ascii, indent, sort_keys],
            at,
        ))
    }

    /// What `list`, `join`, `map` and a loop take: an expression, or a
    /// generator of Jinja2's (`selectattr`, `rejectattr`, `map`), which
    /// anything else refuses (`tojson` of one fails in Jinja2).
    pub(super) fn generator_input(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        let ast::Expr::Filter(filter) = expr else {
            return self.expr(expr);
        };
        match filter.name {
            "selectattr" | "rejectattr" => {
                let input = self.generator_input(filter.expr.as_ref()?)?;
                let reject = filter.name == "rejectattr";
                let Some((key, test)) = filter.args.split_first() else {
                    return self.no(|| "`selectattr` without a key".into());
                };
                self.select(input, reject, (Some(key), test), expr.span())
            }
            // `select(test, value)`: the items themselves tested.
            "select" | "reject" => {
                let input = self.generator_input(filter.expr.as_ref()?)?;
                let reject = filter.name == "reject";
                self.select(input, reject, (None, &filter.args), expr.span())
            }
            "map" => {
                let input = self.generator_input(filter.expr.as_ref()?)?;
                let (op, name) = match filter.args.as_slice() {
                    [ast::CallArg::Kwarg("attribute", ast::Expr::Const(key))] => {
                        (JinjaOp::MapAttr, constant_of(&key.value))
                    }
                    // `map('upper')`: a filter of strings.
                    [ast::CallArg::Pos(ast::Expr::Const(name))] => {
                        (JinjaOp::MapFilter, constant_of(&name.value))
                    }
                    _ => (JinjaOp::MapAttr, None),
                };
                match name {
                    Some(Const::Str(name))
                        if op == JinjaOp::MapAttr
                            || ["upper", "lower", "trim"].contains(&&*name) =>
                    {
                        Some(call(
                            Func::Jinja(op),
                            [input, Expr::Const(Const::Str(name))],
                            expr.span(),
                        ))
                    }
                    _ => self.no(|| {
                        "`map` other than of an attribute or `upper`, `lower`, `trim`".into()
                    }),
                }
            }
            _ => self.expr(expr),
        }
    }

    /// `list | selectattr("key")`, `selectattr("key", "defined")` (or
    /// `undefined`, `none`), `selectattr("key", "equalto", value)`
    /// (`eq`, `==`), and `rejectattr` alike: the key and test constants.
    pub(super) fn select(
        &self,
        input: Expr,
        reject: bool,
        (key, args): (Option<&ast::CallArg<'a>>, &[ast::CallArg<'a>]),
        at: machinery::Span,
    ) -> Option<Expr> {
        let constant = |arg: &ast::CallArg<'a>| match arg {
            ast::CallArg::Pos(ast::Expr::Const(constant)) => constant_of(&constant.value),
            _ => None,
        };
        let name = |arg: &ast::CallArg<'a>| match constant(arg) {
            Some(Const::Str(name)) => Some(name),
            _ => None,
        };
        // A key, or none: `select` tests the items themselves.
        let key = match key {
            Some(key) => name(key).map(Const::Str),
            None => Some(Const::Null),
        };
        let (key, test, compared) = match args {
            [] => (key, Some(SelectTest::Truth), None),
            [test] => {
                let test = match name(test).as_deref() {
                    Some("defined") => Some(SelectTest::Defined),
                    Some("undefined") => Some(SelectTest::Undefined),
                    Some("none") => Some(SelectTest::None),
                    _ => None,
                };
                (key, test, None)
            }
            [test, value] => match name(test).as_deref() {
                Some("equalto" | "eq" | "==") => (key, Some(SelectTest::Equal), constant(value)),
                _ => (None, None, None),
            },
            _ => (None, None, None),
        };
        let (Some(key), Some(test)) = (key, test) else {
            return self.no(|| "`selectattr` or `rejectattr` with other arguments".into());
        };
        if test == SelectTest::Equal && compared.is_none() {
            return self.no(|| "`selectattr` comparing with a value that is not a constant".into());
        }
        let mut lowered = vec![input, Expr::Const(key)];
        lowered.extend(compared.map(Expr::Const));
        Some(Expr::Call {
            func: Func::Jinja(JinjaOp::Select(Select { test, reject })),
            args: lowered.into_boxed_slice(),
            span: span(at),
        })
    }

    /// `expr is defined`.
    pub(super) fn defined(&self, expr: &ast::Expr<'a>, at: machinery::Span) -> Option<Expr> {
        // A name the environment defines (`strftime_now`, `range`) is
        // defined, in the data or not.
        if let ast::Expr::Var(var) = expr {
            if self.globals.contains(var.id) && self.read(var.id)?.is_none() {
                return Some(Expr::Const(Const::Bool(true)));
            }
        }
        Some(call(
            Func::Jinja(JinjaOp::Defined),
            [self.defined_operand(expr)?],
            at,
        ))
    }

    /// What `is defined` and `default` test: a path, a variable, or a
    /// computed value (defined unless it comes out missing, which the
    /// engine leaves to minijinja); not a name the environment defines (a
    /// function is defined where the data lacks the name).
    pub(super) fn defined_operand(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        let lowered = self.expr(expr)?;
        match &lowered {
            Expr::Path { base, keys, .. } => match (&**base, &**keys) {
                (Expr::Root, [name]) if self.globals.contains(&*name.name) => {
                    self.no(|| format!("`default` or `is defined` of the function `{}`", name.name))
                }
                _ => Some(lowered),
            },
            _ => Some(lowered),
        }
    }

    /// `base.name` / `base["name"]`: `loop.index` and the like, or a key.
    pub(super) fn key(
        &self,
        base: &ast::Expr<'a>,
        name: &str,
        at: machinery::Span,
    ) -> Option<Expr> {
        if let ast::Expr::Var(var) = base {
            if let Some((slot, late, _)) = self.outer_attribute(var.id, name)? {
                let top = top_slot(slot, at);
                return Some(match late {
                    false => top,
                    // Read before it is given (or the namespace
                    // made), the key is minijinja's.
                    true => call(
                        Func::Jinja(JinjaOp::SetOr),
                        [top, call(Func::Jinja(JinjaOp::Raise), [], at)],
                        at,
                    ),
                });
            }
            let bound = self.read(var.id).flatten();
            if bound.is_some_and(|handle| self.namespaces.contains_key(&handle)) {
                return Some(match self.attribute(var.id, name)? {
                    (slot, false) => Expr::Var(slot),
                    // Read before its `set`, the key is minijinja's.
                    (slot, true) => call(
                        Func::Jinja(JinjaOp::SetOr),
                        [Expr::Var(slot), call(Func::Jinja(JinjaOp::Raise), [], at)],
                        at,
                    ),
                });
            }
            if var.id == "loop" && self.read("loop")?.is_none() {
                if let Some(&pass) = self.loops.last() {
                    let Some(field) = LoopField::named(name) else {
                        return self.no(|| format!("`loop.{name}`"));
                    };
                    if matches!(field, LoopField::PrevItem | LoopField::NextItem) {
                        self.neighbours.borrow_mut().insert(pass);
                    }
                    return Some(Expr::Loop { pass, field });
                }
            }
        }
        Some(match self.expr(base)? {
            Expr::Path {
                base,
                keys,
                span: _,
            } => {
                let mut keys = keys.into_vec();
                keys.push(key(name, at));
                Expr::Path {
                    base,
                    keys: keys.into_boxed_slice(),
                    span: span(at),
                }
            }
            other => path(other, name, at),
        })
    }
}

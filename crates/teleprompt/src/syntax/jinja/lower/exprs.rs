//! Expressions: constants, names, lists and maps, `[…]` items, tests
//! (`is …`), operators (comparisons, `and`/`or`, arithmetic, `~`, `if
//! else`, slices), and calls (functions, methods, `format`).

use super::*;

impl<'a> Lowerer<'a, '_> {
    pub(super) fn expr(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        // Each kind in a function of its own: the lowering recurses
        // through here as deep as the template nests.
        Some(match expr {
            ast::Expr::Const(constant) => Expr::Const(constant_of(&constant.value)?),
            ast::Expr::GetAttr(attr) => self.key(&attr.expr, attr.name, expr.span())?,
            ast::Expr::Var(_) => self.var_expr(expr)?,
            ast::Expr::List(_) | ast::Expr::Tuple(_) => self.list_expr(expr)?,
            ast::Expr::Map(_) => self.map_expr(expr)?,
            ast::Expr::GetItem(_) => self.item_expr(expr)?,
            ast::Expr::Test(_) => self.test_expr(expr)?,
            ast::Expr::BinOp(_)
            | ast::Expr::Compare(_)
            | ast::Expr::IfExpr(_)
            | ast::Expr::Slice(_)
            | ast::Expr::UnaryOp(_) => self.operator(expr)?,
            ast::Expr::Call(_) => self.call_expr(expr)?,
            ast::Expr::Filter(_) => self.filter_expr(expr)?,
        })
    }

    /// A name: a binding of the lowering, a macro, or the data's.
    #[inline(never)]
    pub(super) fn var_expr(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        Some(match expr {
            // In a macro's body, a name it has not bound: the top's.
            ast::Expr::Var(var) if self.in_macro && self.read(var.id) == Some(None) => {
                match self.unbound_in_macro(var.id, expr.span())? {
                    Some(read) => read,
                    None => path(Expr::Root, var.id, expr.span()),
                }
            }
            ast::Expr::Var(var) if self.in_loop_filter && var.id == "loop" => {
                return self.no(|| "`loop` in a loop's `if`".into())
            }
            ast::Expr::Var(var) if self.macro_named(var.id).is_some() => {
                return self.no(|| format!("macro `{}` used as a value", var.id))
            }
            ast::Expr::Var(var) => match self.read_or_refuse(var.id)? {
                Some(slot) if self.markup.contains(&slot) && !self.printing.get() => {
                    return self
                        .no(|| format!("`{}` (marked `| safe`) used other than printed", var.id))
                }
                // Where its `set` did not run: what the name is outside.
                Some(slot) if self.maybe_unset.contains(&slot) => {
                    let outside = match self.in_macro {
                        true => self.unbound_in_macro(var.id, expr.span())?,
                        false => None,
                    };
                    let outside = outside.unwrap_or_else(|| path(Expr::Root, var.id, expr.span()));
                    call(
                        Func::Jinja(JinjaOp::SetOr),
                        [Expr::Var(slot), outside],
                        expr.span(),
                    )
                }
                Some(slot) if self.namespaces.contains_key(&slot) => {
                    return self.no(|| format!("namespace `{}` used whole", var.id))
                }
                Some(slot) if self.held.contains(&slot) => {
                    call(Func::Jinja(JinjaOp::Held), [Expr::Var(slot)], expr.span())
                }
                Some(slot) => Expr::Var(slot),
                // `loop` alone (passed on, printed) is minijinja's object.
                None if var.id == "loop" && !self.loops.is_empty() => {
                    return self.no(|| "`loop` as a value".into())
                }
                None => path(Expr::Root, var.id, expr.span()),
            },
            other => return self.no(|| expression_name(other)),
        })
    }

    /// `==` and `!=` of a lenient render: missing operands compare as
    /// minijinja's undefined ([`JinjaOp::Loose`]); other functions as
    /// they are.
    pub(super) fn equality(&self, func: Func) -> Func {
        match func {
            Func::Eq if self.lenient => Func::Jinja(JinjaOp::Loose(false)),
            Func::Ne if self.lenient => Func::Jinja(JinjaOp::Loose(true)),
            other => other,
        }
    }

    /// A list literal: of constants, read in place; else built at render
    /// ([`JinjaOp::ListOf`]).
    #[inline(never)]
    pub(super) fn list_expr(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        if let Some(serde_json::Value::Array(items)) = constant_json(expr) {
            return Some(Expr::Const(Const::List(items.into_boxed_slice())));
        }
        // A tuple is a list in minijinja (Jinja2 prints it otherwise;
        // the engine prints neither).
        let items = match expr {
            ast::Expr::List(list) => &list.items,
            ast::Expr::Tuple(tuple) => &tuple.items,
            _ => return self.no(|| expression_name(expr)),
        };
        let items = items.iter().map(|item| self.expr(item));
        Some(Expr::Call {
            func: Func::Jinja(JinjaOp::ListOf),
            args: items.collect::<Option<Box<[Expr]>>>()?,
            span: span(expr.span()),
        })
    }

    /// A map literal with string keys: of constants, read in place; else
    /// built at render ([`JinjaOp::Dict`]).
    #[inline(never)]
    pub(super) fn map_expr(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        if let Some(map) = constant_json(expr) {
            return Some(Expr::Const(Const::Map(Box::new(map))));
        }
        let ast::Expr::Map(map) = expr else {
            return self.no(|| expression_name(expr));
        };
        let mut args = Vec::with_capacity(2 * map.keys.len());
        for (key, value) in map.keys.iter().zip(&map.values) {
            let Some(key @ Const::Str(_)) = constant_key(key) else {
                return self.no(|| "a map literal with keys other than strings".into());
            };
            args.push(Expr::Const(key));
            args.push(self.expr(value)?);
        }
        Some(Expr::Call {
            func: Func::Jinja(JinjaOp::Dict),
            args: args.into_boxed_slice(),
            span: span(expr.span()),
        })
    }

    /// `base[key]`.
    #[inline(never)]
    pub(super) fn item_expr(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        Some(match expr {
            ast::Expr::GetItem(item) => {
                let computed = || {
                    Some(call(
                        Func::Jinja(JinjaOp::Item),
                        [self.expr(&item.expr)?, self.expr(&item.subscript_expr)?],
                        expr.span(),
                    ))
                };
                // A constant key of a map with integer keys: its value.
                if let Some(pairs) = self.int_map(&item.expr) {
                    let found = match int_constant(&item.subscript_expr) {
                        Some(key) => pairs.iter().find(|(k, _)| *k == key),
                        None => None,
                    };
                    return match found.and_then(|(_, value)| json_constant(value)) {
                        Some(value) => Some(Expr::Const(value)),
                        None => self.no(|| "a key a map with integer keys lacks".into()),
                    };
                }
                let ast::Expr::Const(subscript) = &item.subscript_expr else {
                    return computed();
                };
                match constant_of(&subscript.value)? {
                    Const::Str(key) => self.key(&item.expr, &key, expr.span())?,
                    Const::Int(index) if index >= 0 => Expr::Call {
                        func: Func::Index,
                        args: Box::new([self.expr(&item.expr)?, Expr::Const(Const::Int(index))]),
                        span: span(expr.span()),
                    },
                    Const::Int(_) => return computed(),
                    _ => return self.no(|| "an index that is not an integer".into()),
                }
            }
            other => return self.no(|| expression_name(other)),
        })
    }

    /// `value is TEST`.
    #[inline(never)]
    pub(super) fn test_expr(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        Some(match expr {
            ast::Expr::Test(test) => {
                if !test.args.is_empty() {
                    return self.no(|| format!("test `{}` with arguments", test.name));
                }
                match test.name {
                    "defined" => self.defined(&test.expr, expr.span())?,
                    "undefined" => call(
                        Func::Not,
                        [self.defined(&test.expr, expr.span())?],
                        expr.span(),
                    ),
                    "none" => call(
                        self.equality(Func::Eq),
                        [self.expr(&test.expr)?, Expr::Const(Const::Null)],
                        expr.span(),
                    ),
                    other => match IsKind::named(other) {
                        Some(kind) => call(
                            Func::Jinja(JinjaOp::Is(kind)),
                            [self.expr(&test.expr)?],
                            expr.span(),
                        ),
                        None => return self.no(|| format!("test `{other}`")),
                    },
                }
            }
            other => return self.no(|| expression_name(other)),
        })
    }

    /// Operators: `a if c else b`, slices, unary and binary operators, comparisons.
    #[inline(never)]
    pub(super) fn operator(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        Some(match expr {
            ast::Expr::IfExpr(cond) => call(
                Func::Jinja(JinjaOp::Cond),
                [
                    self.expr(&cond.test_expr)?,
                    self.expr(&cond.true_expr)?,
                    match &cond.false_expr {
                        Some(otherwise) => self.expr(otherwise)?,
                        None => return self.no(|| "`a if b` without `else`".into()),
                    },
                ],
                expr.span(),
            ),
            ast::Expr::Slice(slice) if slice.step.is_none() => {
                let bound = |bound: &Option<ast::Expr<'a>>| match bound {
                    Some(bound) => self.expr(bound),
                    None => Some(Expr::Const(Const::Null)),
                };
                call(
                    Func::Jinja(JinjaOp::Slice),
                    [
                        self.expr(&slice.expr)?,
                        bound(&slice.start)?,
                        bound(&slice.stop)?,
                    ],
                    expr.span(),
                )
            }
            ast::Expr::UnaryOp(op) => match op.op {
                ast::UnaryOpKind::Not => call(Func::Not, [self.expr(&op.expr)?], expr.span()),
                // A negative integer (`items[-2:]`).
                ast::UnaryOpKind::Neg => match &op.expr {
                    ast::Expr::Const(constant) => match constant_of(&constant.value)? {
                        Const::Int(i) => Expr::Const(Const::Int(i.checked_neg()?)),
                        _ => return self.no(|| "`-` of a constant other than an integer".into()),
                    },
                    operand => call(
                        Func::Jinja(JinjaOp::Arith(Arith::Neg)),
                        [self.expr(operand)?],
                        expr.span(),
                    ),
                },
            },
            ast::Expr::BinOp(op) => {
                let func = match op.op {
                    ast::BinOpKind::ScAnd => Func::And,
                    ast::BinOpKind::ScOr => Func::Or,
                    ast::BinOpKind::Eq => Func::Eq,
                    ast::BinOpKind::Ne => Func::Ne,
                    ast::BinOpKind::Lt => Func::Lt,
                    ast::BinOpKind::Lte => Func::Le,
                    ast::BinOpKind::Gt => Func::Gt,
                    ast::BinOpKind::Gte => Func::Ge,
                    ast::BinOpKind::Concat => Func::Jinja(JinjaOp::Concat),
                    ast::BinOpKind::Add => Func::Jinja(JinjaOp::Add),
                    ast::BinOpKind::In => {
                        let sides = [self.expr(&op.left)?, self.haystack(&op.right)?];
                        return Some(call(Func::Jinja(JinjaOp::In), sides, expr.span()));
                    }
                    ast::BinOpKind::Sub => Func::Jinja(JinjaOp::Arith(Arith::Sub)),
                    ast::BinOpKind::Mul => Func::Jinja(JinjaOp::Arith(Arith::Mul)),
                    ast::BinOpKind::FloorDiv => Func::Jinja(JinjaOp::Arith(Arith::FloorDiv)),
                    ast::BinOpKind::Rem => Func::Jinja(JinjaOp::Arith(Arith::Rem)),
                    ast::BinOpKind::Pow => Func::Jinja(JinjaOp::Arith(Arith::Pow)),
                    // Always a float.
                    ast::BinOpKind::Div => return self.no(|| "operator `/`".into()),
                };
                // `~` prints its operands: one marked `| safe` prints alike.
                let operand = |side| match func {
                    Func::Jinja(JinjaOp::Concat) => self.printed(side),
                    _ => self.expr(side),
                };
                // `a + b + c` (the parser's `(a + b) + c`): one call.
                if let Func::Jinja(JinjaOp::Concat | JinjaOp::Add) = func {
                    let mut sides = vec![&op.right];
                    let mut left = &op.left;
                    while let ast::Expr::BinOp(inner) = left {
                        let same = matches!(
                            (&inner.op, &op.op),
                            (ast::BinOpKind::Concat, ast::BinOpKind::Concat)
                                | (ast::BinOpKind::Add, ast::BinOpKind::Add)
                        );
                        if !same {
                            break;
                        }
                        sides.push(&inner.right);
                        left = &inner.left;
                    }
                    sides.push(left);
                    let args = sides.into_iter().rev().map(operand);
                    return Some(Expr::Call {
                        func,
                        args: args.collect::<Option<Box<[Expr]>>>()?,
                        span: span(expr.span()),
                    });
                }
                let func = self.equality(func);
                call(func, [operand(&op.left)?, operand(&op.right)?], expr.span())
            }
            ast::Expr::Compare(compare) => {
                let [op] = compare.ops.as_slice() else {
                    return self.no(|| "chained comparisons".into());
                };
                let func = match op.op {
                    ast::CompareOpKind::Eq => Func::Eq,
                    ast::CompareOpKind::Ne => Func::Ne,
                    ast::CompareOpKind::Lt => Func::Lt,
                    ast::CompareOpKind::Lte => Func::Le,
                    ast::CompareOpKind::Gt => Func::Gt,
                    ast::CompareOpKind::Gte => Func::Ge,
                    ast::CompareOpKind::In | ast::CompareOpKind::NotIn => {
                        let sides = [self.expr(&compare.expr)?, self.haystack(&op.expr)?];
                        let found = call(Func::Jinja(JinjaOp::In), sides, expr.span());
                        return Some(match op.op {
                            ast::CompareOpKind::NotIn => call(Func::Not, [found], expr.span()),
                            _ => found,
                        });
                    }
                };
                call(
                    self.equality(func),
                    [self.expr(&compare.expr)?, self.expr(&op.expr)?],
                    expr.span(),
                )
            }
            other => return self.no(|| expression_name(other)),
        })
    }

    /// The right side of `in`: in a lenient render, read as a test reads
    /// it ([`JinjaOp::Tested`]): a missing one holds nothing, as
    /// minijinja's lenient undefined (`'citations' in controls`).
    fn haystack(&self, side: &ast::Expr<'a>) -> Option<Expr> {
        let lowered = self.expr(side)?;
        Some(match self.lenient {
            true => call(Func::Jinja(JinjaOp::Tested), [lowered], side.span()),
            false => lowered,
        })
    }

    /// Calls: `raise_exception`, macros, `strftime_now`, methods.
    #[inline(never)]
    pub(super) fn call_expr(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        Some(match expr {
            // A chat template's error branch: minijinja raises it.
            ast::Expr::Call(called)
                if matches!(&called.expr, ast::Expr::Var(name) if name.id == "raise_exception"
                    && self.read(name.id) == Some(None)) =>
            {
                call(Func::Jinja(JinjaOp::Raise), [], expr.span())
            }
            ast::Expr::Call(called)
                if matches!(&called.expr, ast::Expr::Var(name)
                    if self.macro_named(name.id).is_some()) =>
            {
                let ast::Expr::Var(name) = &called.expr else {
                    return None;
                };
                let def = self.reach_macro(self.macro_named(name.id)?)?;
                self.call_macro(def, &called.args, expr.span())?
            }
            ast::Expr::Call(called) if self.is_global(&called.expr, "range") => {
                let mut args = Vec::with_capacity(called.args.len());
                for arg in &called.args {
                    match arg {
                        ast::CallArg::Pos(value) => args.push(self.expr(value)?),
                        _ => return self.no(|| "`range` with named arguments".into()),
                    }
                }
                if !(1..=3).contains(&args.len()) {
                    return self.no(|| "`range` with other arguments".into());
                }
                Expr::Call {
                    func: Func::Jinja(JinjaOp::Range),
                    args: args.into_boxed_slice(),
                    span: span(expr.span()),
                }
            }
            ast::Expr::Call(called) if self.is_global(&called.expr, "strftime_now") => {
                let [ast::CallArg::Pos(format)] = called.args.as_slice() else {
                    return self.no(|| "`strftime_now` with other arguments".into());
                };
                call(
                    Func::Jinja(JinjaOp::Strftime),
                    [self.expr(format)?],
                    expr.span(),
                )
            }
            ast::Expr::Call(called) if matches!(&called.expr, ast::Expr::GetAttr(attr) if attr.name == "format") =>
            {
                let ast::Expr::GetAttr(attr) = &called.expr else {
                    return None;
                };
                self.format_call(&attr.expr, &called.args, expr.span())?
            }
            // `value.method(…)`: Python's methods.
            ast::Expr::Call(called) if matches!(&called.expr, ast::Expr::GetAttr(_)) => {
                let ast::Expr::GetAttr(attr) = &called.expr else {
                    return None;
                };
                // A method that changes a value: an error where it runs
                // (minijinja's, naming the Jinja to write instead).
                const CHANGING: [&str; 11] = [
                    "append",
                    "pop",
                    "extend",
                    "insert",
                    "remove",
                    "clear",
                    "sort",
                    "reverse",
                    "update",
                    "setdefault",
                    "popitem",
                ];
                if CHANGING.contains(&attr.name) {
                    return Some(call(Func::Jinja(JinjaOp::Raise), [], expr.span()));
                }
                let Some(method) = Method::named(attr.name) else {
                    return self.no(|| format!("method `.{}()`", attr.name));
                };
                let (min, max) = method.arity();
                let mut args = vec![self.expr(&attr.expr)?];
                for arg in &called.args {
                    match arg {
                        ast::CallArg::Pos(value) => args.push(self.expr(value)?),
                        _ => {
                            return self
                                .no(|| format!("method `.{}()` with named arguments", attr.name))
                        }
                    }
                }
                if !(min..=max).contains(&(args.len() - 1)) {
                    return self.no(|| format!("method `.{}()` with other arguments", attr.name));
                }
                Expr::Call {
                    func: Func::Jinja(JinjaOp::Method(method)),
                    args: args.into_boxed_slice(),
                    span: span(expr.span()),
                }
            }
            other => return self.no(|| expression_name(other)),
        })
    }

    /// `'…{}…'.format(args…)`: a constant text whose fields are all `{}`
    /// or all `{N}` (no format spec, name, attribute or index, no `{{` or
    /// `}}`), with positional arguments enough for them.
    #[inline(never)]
    pub(super) fn format_call(
        &self,
        text: &ast::Expr<'a>,
        args: &[ast::CallArg<'a>],
        at: machinery::Span,
    ) -> Option<Expr> {
        let refused = || "method `.format()` other than of a text with `{}` or `{0}` fields".into();
        let format = match text {
            ast::Expr::Const(constant) => match constant_of(&constant.value) {
                Some(Const::Str(format)) => format,
                _ => return self.no(refused),
            },
            _ => return self.no(refused),
        };
        let Some(needed) = format_fields(&format) else {
            return self.no(refused);
        };
        let mut lowered = Vec::with_capacity(args.len() + 1);
        lowered.push(Expr::Const(Const::Str(format)));
        for arg in args {
            match arg {
                ast::CallArg::Pos(value) => lowered.push(self.expr(value)?),
                _ => return self.no(|| "method `.format()` with named arguments".into()),
            }
        }
        let given = lowered.len() - 1;
        if given < needed || given > Method::MOST_FORMATTED {
            return self.no(|| "method `.format()` with other arguments".into());
        }
        Some(Expr::Call {
            func: Func::Jinja(JinjaOp::Method(Method::Format)),
            args: lowered.into_boxed_slice(),
            span: span(at),
        })
    }
}

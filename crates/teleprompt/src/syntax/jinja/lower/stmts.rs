//! Statements and blocks: text, `{{ … }}`, `if`, `for` (its loop
//! variables, unpacking, `else`, `break`/`continue`), `set` of a name or
//! a namespace's key, `{% set %}…{% endset %}` and `{% filter %}` blocks.

use super::*;

impl<'a> Lowerer<'a, '_> {
    pub(super) fn stmts(&mut self, stmts: &[ast::Stmt<'a>]) -> Option<Block> {
        let mut block = Vec::with_capacity(stmts.len());
        for stmt in stmts {
            self.stmt(stmt, &mut block)?;
        }
        Some(block.into_boxed_slice())
    }

    /// A block that may or may not run: an `if`'s, a `for`'s `else`.
    /// In a loop's body, the names it first assigns are unbound after it;
    /// elsewhere the namespaces it makes are (read after it, they are
    /// refused: the block may not have run).
    pub(super) fn conditional(&mut self, stmts: &[ast::Stmt<'a>]) -> Option<Block> {
        let (in_loop, names) = (self.frames.last()?.is_loop, self.names.len());
        self.frames.last_mut()?.conditional += 1;
        let block = self.stmts(stmts);
        self.frames.last_mut()?.conditional -= 1;
        if in_loop {
            self.names.truncate(names);
        } else {
            let made = self.names.split_off(names);
            for (name, slot) in made {
                match self.namespaces.contains_key(&slot) {
                    true => {
                        self.gone.insert(name);
                    }
                    false => self.names.push((name, slot)),
                }
            }
        }
        block
    }

    /// `if`/`elif`/`else`.
    #[inline(never)]
    pub(super) fn if_stmt(
        &mut self,
        stmt: &ast::Stmt<'a>,
        cond: &ast::IfCond<'a>,
        into: &mut Vec<Instr>,
    ) -> Option<()> {
        // In a loop's body, a name that every branch assigns is
        // bound after the `if`: one slot for all its `set`s.
        let mut every = HashSet::new();
        let frame = self.frames.last()?;
        if frame.is_loop {
            every = always_assigned(std::slice::from_ref(stmt));
            let bound = &self.names[frame.names_from..];
            let pending = &self.pending;
            every.retain(|name| {
                !bound.iter().any(|(b, _)| b == name)
                    && !pending.contains_key(name)
                    && !frame.targets.iter().any(|(target, _)| target == name)
            });
        }
        let mut slots = Vec::with_capacity(every.len());
        for name in every {
            let slot = self.slots(1);
            self.pending.insert(name, slot);
            slots.push((name, slot));
        }
        let instr = Instr::If {
            cond: self.expr(&cond.expr)?,
            bind: None,
            then: self.conditional(&cond.true_body)?,
            otherwise: self.conditional(&cond.false_body)?,
        };
        for (name, slot) in slots {
            self.pending.remove(name);
            self.names.push((name, slot));
        }
        into.push(instr);
        Some(())
    }

    /// `for NAME in list` (with `else`).
    #[inline(never)]
    pub(super) fn for_stmt(
        &mut self,
        for_loop: &ast::ForLoop<'a>,
        into: &mut Vec<Instr>,
    ) -> Option<()> {
        // `for key, value in map.items()` (or `map | items`).
        let (mut sorted, mut entries) = (false, entries_of(&for_loop.iter));
        // `for k, v in m | dictsort` of a map with integer keys: its
        // pairs, constants ([`Lowerer::int_maps`]), unpacked.
        if let Some((map, true)) = entries {
            if self.int_map(map).is_some() {
                entries = None;
            }
        }
        let (target, key_name, iter) = match (&for_loop.target, entries) {
            (ast::Expr::Var(target), _) => (target.id, None, &for_loop.iter),
            (ast::Expr::List(names), Some((map, by_key))) => match names.items.as_slice() {
                [ast::Expr::Var(key), ast::Expr::Var(value)] => {
                    sorted = by_key;
                    (value.id, Some(key.id), map)
                }
                _ => return self.no(|| "a `for` that unpacks".into()),
            },
            // `for a, b in pairs`: each item a list of as many.
            (ast::Expr::List(_), None) => (UNPACKED, None, &for_loop.iter),
            _ => return self.no(|| "a `for` that unpacks".into()),
        };
        let unpacked = match (&for_loop.target, target) {
            (ast::Expr::List(names), UNPACKED) => self.unpacked_names(names, for_loop)?,
            _ => Vec::new(),
        };
        if for_loop.recursive {
            return self.no(|| "a recursive `for`".into());
        }
        // `for x in list[::-1]`: the list, walked from its end.
        let reversed = match iter {
            ast::Expr::Slice(slice)
                if slice.start.is_none()
                    && slice.stop.is_none()
                    && slice.step.as_ref().is_some_and(is_minus_one) =>
            {
                Some(&slice.expr)
            }
            _ => None,
        };
        let value = self.generator_input(reversed.unwrap_or(iter))?;
        // The else body runs outside the loop: no `loop`, no target.
        let otherwise = self.conditional(&for_loop.else_body)?;
        let (saved_slot, saved_names) = (self.next_slot, self.names.len());
        let elem = self.slots(1);
        // The index, the length, the items before and after.
        let pass = self.slots(4);
        let key = key_name.map(|_| self.slots(1));
        if let (Some(name), Some(slot)) = (key_name, key) {
            self.names.push((name, slot));
        }
        self.names.push((target, elem));
        // Each unpacked name in a slot of its own, set from the item.
        let unpacked: Vec<(&'a str, u32)> = unpacked
            .into_iter()
            .map(|name| (name, self.slots(1)))
            .collect();
        self.names.extend(unpacked.iter().copied());
        // `for x in list if test`: the test sees the item, not `loop`.
        let filter = match &for_loop.filter_expr {
            Some(test) => {
                self.in_loop_filter = true;
                let lowered = self.expr(test);
                self.in_loop_filter = false;
                match lowered {
                    Some(lowered) => Some(lowered),
                    None => {
                        self.names.truncate(saved_names);
                        return None;
                    }
                }
            }
            None => None,
        };
        // The names the body assigns that it may read first (before the
        // `set`, or where an `if` skipped it): what they were outside the
        // loop on every pass (Jinja2 and minijinja alike).
        let mut outer = Vec::new();
        let mut assigned = HashSet::new();
        collect_assigned(&for_loop.body, &mut assigned);
        let namespaces = namespaces_made(&for_loop.body);
        for name in assigned {
            if name == target
                || Some(name) == key_name
                || namespaces.contains(name)
                || unpacked.iter().any(|(unpacked, _)| *unpacked == name)
            {
                continue;
            }
            match self.read(name) {
                Some(Some(slot)) if !self.namespaces.contains_key(&slot) => {
                    outer.push((name, Some(slot)));
                }
                Some(None) if !self.globals.contains(name) => outer.push((name, None)),
                _ => {}
            }
        }
        self.loops.push(pass);
        self.frames
            .push(Frame::new(&for_loop.body, self.names.len(), true));
        if let Some(frame) = self.frames.last_mut() {
            frame.targets = key_name.zip(key).into_iter().collect();
            frame.targets.push((target, elem));
            frame.targets.extend(unpacked.iter().copied());
        }
        let mut prelude = Vec::with_capacity(outer.len() + unpacked.len());
        let count = i64::try_from(unpacked.len()).ok()?;
        for (index, &(_, slot)) in unpacked.iter().enumerate() {
            let index = Expr::Const(Const::Int(i64::try_from(index).ok()?));
            let item = [Expr::Var(elem), index, Expr::Const(Const::Int(count))];
            let expr = call(Func::Jinja(JinjaOp::Unpack), item, for_loop.target.span());
            prelude.push(Instr::Set { slot, expr });
        }
        for (name, from) in outer {
            let slot = self.slots(1);
            self.names.push((name, slot));
            let expr = match from {
                Some(from) => {
                    if self.markup.contains(&from) {
                        self.markup.insert(slot);
                    }
                    if self.held.contains(&from) {
                        self.held.insert(slot);
                    }
                    match self.maybe_unset.contains(&from) {
                        true => {
                            self.maybe_unset.insert(slot);
                            Expr::Var(from)
                        }
                        false => Expr::Var(from),
                    }
                }
                // The data's (or nothing): read through the slot, as a
                // template's name set in an `if` is.
                None => {
                    self.maybe_unset.insert(slot);
                    call(Func::Jinja(JinjaOp::Unset), [], for_loop.iter.span())
                }
            };
            prelude.push(Instr::Set { slot, expr });
        }
        let body = self.stmts(&for_loop.body).map(|body| {
            let mut all = prelude;
            all.extend(body.into_vec());
            all.into_boxed_slice()
        });
        let neighbours = self.neighbours.borrow_mut().remove(&pass);
        if neighbours && key.is_some() {
            return self.no(|| "`loop.previtem` or `loop.nextitem` of a map's items".into());
        }
        self.frames.pop();
        self.loops.pop();
        self.names.truncate(saved_names);
        self.next_slot = saved_slot;
        into.push(Instr::ForList {
            value,
            elem,
            pass,
            body: body?,
            otherwise,
            span: span(for_loop.iter.span()),
            reverse: reversed.is_some(),
            key: key.map(|key| (key, sorted)),
            filter,
            neighbours,
        });
        Some(())
    }

    /// The names `for a, b in list` unpacks each item into: two to eight
    /// distinct names, in a loop without a test (which would read them
    /// before they are set).
    #[inline(never)]
    pub(super) fn unpacked_names(
        &self,
        names: &ast::List<'a>,
        for_loop: &ast::ForLoop<'a>,
    ) -> Option<Vec<&'a str>> {
        let mut unpacked = Vec::with_capacity(names.items.len());
        for name in &names.items {
            match name {
                ast::Expr::Var(var) if !unpacked.contains(&var.id) && var.id != "loop" => {
                    unpacked.push(var.id)
                }
                _ => return self.no(|| "a `for` that unpacks".into()),
            }
        }
        if !(2..=8).contains(&unpacked.len()) || for_loop.filter_expr.is_some() {
            return self.no(|| "a `for` that unpacks".into());
        }
        Some(unpacked)
    }

    /// A `set`'s value, and whether it may be marked `| safe` (last, or
    /// last in a branch of `a if c else b`).
    pub(super) fn set_value(&self, expr: &ast::Expr<'a>) -> Option<(Expr, bool)> {
        let safe = |side: &ast::Expr<'a>| !std::ptr::eq(without_safe(side), side);
        match expr {
            ast::Expr::IfExpr(cond) => {
                let Some(otherwise) = &cond.false_expr else {
                    if !self.lenient {
                        return Some((self.expr(expr)?, false));
                    }
                    // `a if b` alone: minijinja's undefined where `b` is
                    // false (a lenient render's missing value).
                    let lowered = call(
                        Func::Jinja(JinjaOp::Cond),
                        [
                            self.expr(&cond.test_expr)?,
                            self.expr(&cond.true_expr)?,
                            call(Func::Jinja(JinjaOp::Unset), [], expr.span()),
                        ],
                        expr.span(),
                    );
                    return Some((lowered, false));
                };
                let marked = safe(&cond.true_expr) || safe(otherwise);
                let lowered = call(
                    Func::Jinja(JinjaOp::Cond),
                    [
                        self.expr(&cond.test_expr)?,
                        self.expr(without_safe(&cond.true_expr))?,
                        self.expr(without_safe(otherwise))?,
                    ],
                    expr.span(),
                );
                Some((lowered, marked))
            }
            _ => Some((self.expr(without_safe(expr))?, safe(expr))),
        }
    }

    /// A value printed whole (`{{ x }}`, an operand of `~`): a last
    /// `| safe` prints alike, and a name holding a safe value may be read.
    pub(super) fn printed(&self, expr: &ast::Expr<'a>) -> Option<Expr> {
        let expr = without_safe(expr);
        if !matches!(expr, ast::Expr::Var(_)) {
            return self.expr(expr);
        }
        self.printing.set(true);
        let lowered = self.expr(expr);
        self.printing.set(false);
        lowered
    }

    /// `set NAME = value`, `set ns.attr = value`.
    #[inline(never)]
    pub(super) fn set_stmt(&mut self, set: &ast::Set<'a>, into: &mut Vec<Instr>) -> Option<()> {
        match &set.target {
            ast::Expr::Var(target) => {
                if let ast::Expr::Call(called) = &set.expr {
                    if self.is_global(&called.expr, "namespace") {
                        return self.namespace(target.id, &called.args, into);
                    }
                }
                if let Some(pairs) = int_keyed(&set.expr) {
                    return self.int_map_set(target.id, pairs);
                }
                // The value first: `set x = x | lower` reads the data's `x`.
                let (expr, safe) = self.set_value(&set.expr)?;
                let slot = self.assign(target.id)?;
                if self.namespaces.contains_key(&slot) {
                    return self.no(|| format!("namespace `{}` assigned again", target.id));
                }
                if safe {
                    self.markup.insert(slot);
                }
                // A value that may read a missing value (an operand of
                // `or`, `a if b`): read as a test reads it; where it may
                // be minijinja's undefined, the name is read through
                // `Held` after.
                // Not where a missing value reads the data's: there a
                // read of the data is as before (a missing one is
                // minijinja's), and `a if b` is refused.
                let unset = self.maybe_unset.contains(&slot);
                let expr = match self.lenient && reads_missing(&expr) {
                    true if unset && may_be_undefined(&expr, false) => {
                        return self.no(|| {
                            format!(
                                "`{}` set maybe undefined where unset reads the data's",
                                target.id
                            )
                        })
                    }
                    true if unset && may_be_undefined(&expr, true) => expr,
                    true => {
                        if may_be_undefined(&expr, true) {
                            self.held.insert(slot);
                        }
                        call(Func::Jinja(JinjaOp::Tested), [expr], set.expr.span())
                    }
                    false => expr,
                };
                into.push(Instr::Set { slot, expr });
            }
            // `set ns.attr = value`: the attribute's own slot.
            ast::Expr::GetAttr(attr) => {
                let ast::Expr::Var(name) = &attr.expr else {
                    return self.no(|| "`set` of an attribute of a value".into());
                };
                if let Some((slot, _, made_before)) = self.outer_attribute(name.id, attr.name)? {
                    if !made_before {
                        return self.no(|| {
                            format!(
                                "a macro that sets `{}.{}`, made after it",
                                name.id, attr.name
                            )
                        });
                    }
                    let expr = self.expr(&set.expr)?;
                    into.push(Instr::SetTop { slot, expr });
                    return Some(());
                }
                let slot = self.attribute(name.id, attr.name)?.0;
                let expr = self.expr(&set.expr)?;
                into.push(Instr::Set { slot, expr });
            }
            _ => return self.no(|| "`set` of several names".into()),
        }
        Some(())
    }

    /// `{% set x %}…{% endset %}`: the body's text, captured. The body's
    /// `set`s assign the names around it, as in minijinja (Jinja2 gives
    /// the body a scope of its own); a body that makes a namespace or a
    /// macro, breaks out of a loop, or a block that filters its text is
    /// minijinja's.
    #[inline(never)]
    pub(super) fn set_block(
        &mut self,
        set: &ast::SetBlock<'a>,
        into: &mut Vec<Instr>,
    ) -> Option<()> {
        let ast::Expr::Var(target) = &set.target else {
            return self.no(|| "`set` block of several names".into());
        };
        if set.filter.is_some() {
            return self.no(|| "`set` block with a filter".into());
        }
        if let Some(why) = capture_refusal(&set.body) {
            return self.no(|| format!("`set` block with {why} in it"));
        }
        // The body first: it reads the name's value before the `set`.
        let body = self.stmts(&set.body)?;
        let slot = self.assign(target.id)?;
        if self.namespaces.contains_key(&slot) {
            return self.no(|| format!("namespace `{}` assigned again", target.id));
        }
        into.push(Instr::Capture {
            slot,
            body,
            span: span(set.target.span()),
        });
        Some(())
    }

    /// `{% filter trim %}…{% endfilter %}` (`trim`, `upper`, `lower`):
    /// the body's text captured in a slot of its own, then printed
    /// filtered. A body `set` blocks refuse is refused here too.
    #[inline(never)]
    pub(super) fn filter_block(
        &mut self,
        block: &ast::FilterBlock<'a>,
        into: &mut Vec<Instr>,
    ) -> Option<()> {
        let func = match &block.filter {
            ast::Expr::Filter(filter) if filter.expr.is_none() && filter.args.is_empty() => {
                match filter.name {
                    "trim" => Func::Trim,
                    "upper" => Func::Upper,
                    "lower" => Func::Lower,
                    other => return self.no(|| format!("`filter {other}` block")),
                }
            }
            _ => return self.no(|| "a `filter` block of other filters".into()),
        };
        if let Some(why) = capture_refusal(&block.body) {
            return self.no(|| format!("`filter` block with {why} in it"));
        }
        let body = self.stmts(&block.body)?;
        let slot = self.slots(1);
        let at = span(block.filter_span);
        into.push(Instr::Capture {
            slot,
            body,
            span: at,
        });
        into.push(Instr::Print {
            expr: call(func, [Expr::Var(slot)], block.filter_span),
            span: at,
        });
        Some(())
    }

    /// `{{ expr }}`: printed whole, a value marked `| safe` prints alike
    /// (no autoescape here); elsewhere `| safe` is minijinja's (a `+`
    /// escapes the other operand of a safe string).
    #[inline(never)]
    pub(super) fn print_stmt(&self, printed: &ast::Expr<'a>) -> Option<Instr> {
        let expr = self.or_empty(self.printed(printed)?, printed.span());
        Some(Instr::Print {
            expr,
            span: span(printed.span()),
        })
    }

    pub(super) fn stmt(&mut self, stmt: &ast::Stmt<'a>, into: &mut Vec<Instr>) -> Option<()> {
        match stmt {
            ast::Stmt::Template(template) => {
                for child in &template.children {
                    self.stmt(child, into)?;
                }
            }
            ast::Stmt::EmitRaw(raw) => {
                let at = (raw.raw.as_ptr() as usize).wrapping_sub(self.source_at);
                push_text(into, raw.raw, Span::new(&(at..at + raw.raw.len())));
            }
            // `{{ x if test }}` in a lenient render: nothing where the
            // test fails (Jinja's undefined value prints empty).
            ast::Stmt::EmitExpr(emit)
                if self.lenient
                    && matches!(&emit.expr, ast::Expr::IfExpr(cond) if cond.false_expr.is_none()) =>
            {
                let ast::Expr::IfExpr(cond) = &emit.expr else {
                    return None;
                };
                into.push(Instr::If {
                    cond: self.expr(&cond.test_expr)?,
                    bind: None,
                    then: Box::new([Instr::Print {
                        expr: self.printed(&cond.true_expr)?,
                        span: span(cond.true_expr.span()),
                    }]),
                    otherwise: Box::new([]),
                });
            }
            ast::Stmt::EmitExpr(emit) => into.push(self.print_stmt(&emit.expr)?),
            ast::Stmt::IfCond(cond) => self.if_stmt(stmt, cond, into)?,
            ast::Stmt::ForLoop(for_loop) => self.for_stmt(for_loop, into)?,
            ast::Stmt::Set(set) => self.set_stmt(set, into)?,
            ast::Stmt::SetBlock(set) => self.set_block(set, into)?,
            ast::Stmt::FilterBlock(block) => self.filter_block(block, into)?,
            ast::Stmt::Macro(def) => self.define_macro(def, into)?,
            ast::Stmt::Continue(_) if !self.loops.is_empty() => into.push(Instr::Continue),
            ast::Stmt::Break(_) if !self.loops.is_empty() => into.push(Instr::Break),
            other => return self.no(|| format!("`{}`", statement_name(other))),
        }
        Some(())
    }
}

//! Macros: their definitions at the template's top, their bodies (lowered
//! as templates of the program after the top), their calls, and what a
//! macro's body reads of the top's names (minijinja's closure) through
//! [`top_slot`].

use super::*;

/// The value in a slot of the template's top frame, read from anywhere
/// (a macro's body too): [`JinjaOp::Top`].
pub(super) fn top_slot(slot: u32, at: machinery::Span) -> Expr {
    call(
        Func::Jinja(JinjaOp::Top),
        [Expr::Const(Const::Int(i64::from(slot)))],
        at,
    )
}

impl<'a> Lowerer<'a, '_> {
    /// `{% macro name(params) %}…{% endmacro %}` at the template's top
    /// (in its `if`s too, not in another block): its body becomes a
    /// template of the program, lowered after the template's top
    /// ([`Lowerer::macro_bodies`]). Defaults must be constants.
    pub(super) fn define_macro(
        &mut self,
        def: &ast::Macro<'a>,
        into: &mut Vec<Instr>,
    ) -> Option<()> {
        if self.frames.len() != 1 || self.in_macro {
            return self.no(|| format!("macro `{}` inside a block or a macro", def.name));
        }
        if self.assigned_anywhere.contains(def.name) {
            return self.no(|| format!("macro `{}` whose name is also assigned", def.name));
        }
        // The macros were read before (`macro_defs`), in this order.
        let index = self.defined;
        let Some(Ok(found)) = self.macros.get(index) else {
            let why = match self.macros.get(index) {
                Some(Err(why)) => why.clone(),
                _ => format!("macro `{}`", def.name),
            };
            return self.no(|| why);
        };
        if found.name != def.name {
            return None;
        }
        // In an `if`: a flag where the macro was defined.
        if self.frames.first()?.conditional > 0 {
            let flag = self.top_slots(1);
            into.push(Instr::Set {
                slot: flag,
                expr: Expr::Const(Const::Bool(true)),
            });
            if let Some(Ok(found)) = self.macros.get_mut(index) {
                found.flag = Some(flag);
            }
        }
        // The top's names bound here hold their value at every call.
        let before = self
            .names
            .iter()
            .map(|(_, slot)| *slot)
            .filter(|slot| !self.maybe_unset.contains(slot))
            .collect();
        self.deferred.push((index, before));
        self.defined += 1;
        Some(())
    }

    /// The bodies of the macros, once the template's top is lowered (it
    /// knows the slots of every name of the top a body may read), then
    /// the calls from the top checked against what the bodies call.
    pub(super) fn macro_bodies(&mut self, template: &ast::Stmt<'a>) -> Option<()> {
        let defs = top_macros(template);
        // The top's names a body may read: bound once (a namespace made
        // again is another binding), not marked `| safe`.
        let mut top: HashMap<&'a str, (u32, usize)> = HashMap::new();
        for (name, slot) in &self.names {
            top.entry(name).or_insert((*slot, 0)).1 += 1;
        }
        // The others (and the namespaces made in a block) a body may not
        // read: not the data's either.
        let mut gone = std::mem::take(&mut self.gone);
        let top: Vec<(&'a str, u32)> = top
            .into_iter()
            .filter(|(name, (slot, count))| {
                let readable = *count == 1 && !self.markup.contains(slot);
                if !readable {
                    gone.insert(name);
                }
                readable
            })
            .map(|(name, (slot, _))| (name, slot))
            .collect();
        self.top_held = self.held.clone();
        for (index, before) in std::mem::take(&mut self.deferred) {
            self.outer_namespaces = top
                .iter()
                .filter_map(|(name, handle)| {
                    let attributes = self.namespaces.get(handle)?.clone();
                    let made_before = before.contains(handle);
                    let attributes = match made_before {
                        true => attributes,
                        // Read at a call before it is made, it is
                        // minijinja's.
                        false => attributes
                            .into_iter()
                            .map(|(key, slot, _)| (key, slot, true))
                            .collect(),
                    };
                    Some((*name, (made_before, attributes)))
                })
                .collect();
            self.outer_names = top
                .iter()
                .filter(|(_, slot)| !self.namespaces.contains_key(slot))
                .map(|(name, slot)| (*name, (*slot, before.contains(slot))))
                .collect();
            // A parameter that is a namespace of the top: made before
            // any call (a call passes it), read and set in the top's slots.
            let found = self.macros.get(index)?.as_ref().ok()?;
            for (param, _) in found
                .params
                .iter()
                .zip(&found.aliases)
                .filter(|(_, alias)| **alias)
            {
                let handle = top.iter().find(|(name, handle)| {
                    name == param
                        && self.namespaces.contains_key(handle)
                        && !self.maybe_unset.contains(handle)
                });
                let Some((_, handle)) = handle else {
                    return self.no(|| {
                        format!("namespace `{param}`, made other than once at the top, passed to a macro")
                    });
                };
                let attributes = self.namespaces.get(handle)?.clone();
                self.outer_namespaces.insert(param, (true, attributes));
            }
            self.outer_gone = gone.clone();
            self.lower_macro(index, defs.get(index)?)?;
        }
        self.outer_namespaces.clear();
        self.outer_names.clear();
        self.outer_gone.clear();
        // Every macro a call from the top may reach, at any depth, is
        // defined where it is called (else Jinja fails where the engine
        // would not).
        let calls = self.calls.borrow();
        for &(index, defined) in self.top_calls.borrow().iter() {
            let mut seen = HashSet::from([index]);
            let mut next = vec![index];
            while let Some(at) = next.pop() {
                if at >= defined {
                    let name = self.macros.get(at)?.as_ref().ok()?.name;
                    return self.no(|| {
                        format!("a call of a macro that calls `{name}` before it is defined")
                    });
                }
                for &callee in calls.get(&at).into_iter().flatten() {
                    if seen.insert(callee) {
                        next.push(callee);
                    }
                }
            }
        }
        Some(())
    }

    /// A macro's body on its own: the template's names, loops and slots
    /// put aside, the parameters in slots 1… (0 is the engine's `$`). It
    /// reads its own names, the top's ([`Lowerer::outer_names`]), the
    /// data, and any macro of the template.
    pub(super) fn lower_macro(&mut self, index: usize, def: &ast::Macro<'a>) -> Option<()> {
        let found = self.macros.get(index)?.as_ref().ok()?;
        let (template, params) = (found.template, found.params.clone());
        let count = u32::try_from(params.len()).ok()?;
        // A namespace parameter keeps its slot (a call passes nothing in
        // it) but binds no name: the body reads the top's namespace.
        let names = params
            .iter()
            .copied()
            .zip(1..)
            .zip(&found.aliases)
            .filter(|(_, alias)| !**alias)
            .map(|(bound, _)| bound)
            .collect();
        let saved = (
            std::mem::replace(&mut self.names, names),
            std::mem::take(&mut self.loops),
            std::mem::replace(&mut self.next_slot, 1 + count),
            std::mem::replace(&mut self.max_slots, 1 + count),
            std::mem::replace(&mut self.frames, vec![Frame::new(&def.body, 0, false)]),
            std::mem::take(&mut self.pending),
            std::mem::take(&mut self.namespaces),
            std::mem::take(&mut self.maybe_unset),
            std::mem::take(&mut self.held),
            std::mem::take(&mut self.gone),
            std::mem::take(&mut self.markup),
        );
        self.in_macro = true;
        self.current_macro = Some(index);
        let body = self.stmts(&def.body);
        let slots = self.max_slots;
        self.in_macro = false;
        self.current_macro = None;
        (
            self.names,
            self.loops,
            self.next_slot,
            self.max_slots,
            self.frames,
            self.pending,
            self.namespaces,
            self.maybe_unset,
            self.held,
            self.gone,
            self.markup,
        ) = saved;
        let lowered = self.templates.get_mut(template as usize)?;
        lowered.body = body?;
        lowered.slots = slots;
        Some(())
    }

    /// A call of a macro defined before: each parameter's value, in order
    /// (given by position or by name, else its default).
    pub(super) fn call_macro(
        &self,
        def: &MacroDef<'a>,
        args: &[ast::CallArg<'a>],
        at: machinery::Span,
    ) -> Option<Expr> {
        let mut values: Vec<Option<Expr>> = def.params.iter().map(|_| None).collect();
        for (position, arg) in args.iter().enumerate() {
            let (slot, value) = match arg {
                ast::CallArg::Pos(value) => (Some(position), value),
                ast::CallArg::Kwarg(name, value) => {
                    (def.params.iter().position(|param| param == name), value)
                }
                _ => (None, value_of_splat(arg)),
            };
            let alias = slot.and_then(|slot| def.aliases.get(slot)).copied();
            match slot.and_then(|slot| values.get_mut(slot)) {
                Some(place @ None) if alias == Some(true) => {
                    *place = Some(self.namespace_argument(def, slot?, value)?)
                }
                Some(place @ None) => *place = Some(self.expr(value)?),
                _ => {
                    return self
                        .no(|| format!("a call of macro `{}` with other arguments", def.name))
                }
            }
        }
        let mut lowered = Vec::with_capacity(values.len());
        for (value, default) in values.into_iter().zip(&def.defaults) {
            match (value, default) {
                (Some(value), _) => lowered.push(value),
                (None, Some(default)) => lowered.push(Expr::Const(default.clone())),
                (None, None) => {
                    return self
                        .no(|| format!("a call of macro `{}` without all its arguments", def.name))
                }
            }
        }
        let called = Expr::Call {
            func: Func::Jinja(JinjaOp::Macro(def.template)),
            args: lowered.into_boxed_slice(),
            span: span(at),
        };
        Some(match def.flag {
            None => called,
            // Defined in an `if`: called where it was, else minijinja's.
            Some(flag) => call(
                Func::Jinja(JinjaOp::Cond),
                [
                    top_slot(flag, at),
                    called,
                    call(Func::Jinja(JinjaOp::Raise), [], at),
                ],
                at,
            ),
        })
    }

    /// What a call passes for a namespace parameter
    /// ([`MacroDef::aliases`]): nothing, where it passes that namespace by
    /// its name (the body reads the top's); anything else is not lowered.
    fn namespace_argument(
        &self,
        def: &MacroDef<'a>,
        slot: usize,
        value: &ast::Expr<'a>,
    ) -> Option<Expr> {
        let param = *def.params.get(slot)?;
        let passed = match value {
            ast::Expr::Var(var) if var.id == param => match self.read(param) {
                // The top's own binding, made where no `if` decides
                // (not one a loop's body makes under the same name).
                Some(Some(handle)) => {
                    let top_end = self
                        .frames
                        .get(1)
                        .map_or(self.names.len(), |frame| frame.names_from);
                    let top = self.names.get(..top_end).unwrap_or_default();
                    !self.in_macro
                        && self.namespaces.contains_key(&handle)
                        && !self.maybe_unset.contains(&handle)
                        && top
                            .iter()
                            .rev()
                            .find(|(name, _)| *name == param)
                            .map(|(_, slot)| *slot)
                            == Some(handle)
                }
                Some(None) => self.in_macro && self.outer_namespaces.contains_key(param),
                None => false,
            },
            _ => false,
        };
        match passed {
            true => Some(Expr::Const(Const::Null)),
            false => self.no(|| {
                format!(
                    "a call of macro `{}` that passes other than namespace `{param}`",
                    def.name
                )
            }),
        }
    }

    /// The macro a call of `name` reaches, if `name` is one (not a name
    /// the lowering has bound): in a macro's body any of the template's
    /// (they are all defined before the template calls a macro, or the
    /// call is refused), elsewhere one defined before.
    pub(super) fn macro_named(&self, name: &str) -> Option<usize> {
        if self.read(name) != Some(None) {
            return None;
        }
        let reach = if self.in_macro {
            self.macros.len()
        } else {
            self.defined
        };
        self.macros[..reach]
            .iter()
            .rposition(|def| def.as_ref().is_ok_and(|def| def.name == name))
    }

    /// A call of macro `index` from here: in a macro's body, noted among
    /// its calls; elsewhere noted to check once the bodies are lowered
    /// ([`Lowerer::macro_bodies`]).
    pub(super) fn reach_macro(&self, index: usize) -> Option<&MacroDef<'a>> {
        match self.current_macro {
            Some(current) => {
                self.calls
                    .borrow_mut()
                    .entry(current)
                    .or_default()
                    .insert(index);
            }
            None => self.top_calls.borrow_mut().push((index, self.defined)),
        }
        self.macros.get(index)?.as_ref().ok()
    }

    /// In a macro's body, a name the body has not bound (or not where it
    /// is read): the top's value at the call, where the template's top
    /// sets it (`Some`), else the data's (`None`).
    pub(super) fn unbound_in_macro(&self, name: &str, at: machinery::Span) -> Option<Option<Expr>> {
        if ["varargs", "kwargs", "caller"].contains(&name) || self.outer_gone.contains(name) {
            return self.no(|| format!("a macro that reads `{name}` from outside"));
        }
        if self.outer_namespaces.contains_key(name) {
            return self.no(|| format!("namespace `{name}` used whole"));
        }
        let Some(&(slot, set_before)) = self.outer_names.get(name) else {
            return Some(None);
        };
        let top = top_slot(slot, at);
        if self.top_held.contains(&slot) {
            // It may hold minijinja's undefined, which a call before the
            // top's `set` would read as the data's.
            if !set_before {
                return self
                    .no(|| format!("a macro that reads `{name}`, maybe undefined, set after it"));
            }
            return Some(Some(call(Func::Jinja(JinjaOp::Held), [top], at)));
        }
        Some(Some(match set_before {
            true => top,
            // Called before the top's `set`: the data's.
            false => call(
                Func::Jinja(JinjaOp::SetOr),
                [top, path(Expr::Root, name, at)],
                at,
            ),
        }))
    }
}

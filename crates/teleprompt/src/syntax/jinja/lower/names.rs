//! Names and slots: the slots the lowering hands out (the top's for a
//! template with macros), what reading a name reads (a slot of a frame or
//! the data), `set`'s assignments, and namespaces with their attribute
//! slots.

use super::*;

impl<'a> Lowerer<'a, '_> {
    pub(super) fn slots(&mut self, count: u32) -> u32 {
        let first = self.next_slot;
        // A slot a namespace held before (in a loop that ended) is free.
        for slot in first..first + count {
            self.namespaces.remove(&slot);
        }
        self.next_slot += count;
        self.max_slots = self.max_slots.max(self.next_slot);
        first
    }

    /// Slots for names of the template's top: where the template has
    /// macros, ones no loop used before (a macro called before the
    /// `set` finds nothing there, and reads the data's), else
    /// [`Lowerer::slots`].
    pub(super) fn top_slots(&mut self, count: u32) -> u32 {
        if self.frames.len() > 1 || self.in_macro || self.macros.is_empty() {
            return self.slots(count);
        }
        let first = self.next_slot.max(self.max_slots);
        for slot in first..first + count {
            self.namespaces.remove(&slot);
        }
        self.next_slot = first + count;
        self.max_slots = self.next_slot;
        first
    }

    /// What reading `name` reads: `Some(Some(slot))` a name bound here,
    /// `Some(None)` the data's (or the environment's), `None` not lowered:
    /// a name a loop's body assigns, read before it does.
    pub(super) fn read(&self, name: &str) -> Option<Option<u32>> {
        let found = self.binding(name);
        if found == Some(None) && self.int_maps.contains_key(name) {
            return self.no(|| {
                format!("`{name}` (a map with integer keys) read other than by `dictsort` or a constant key")
            });
        }
        found
    }

    /// [`Lowerer::read`] but for the maps with integer keys
    /// ([`Lowerer::int_maps`]): those read as the data's (`Some(None)`).
    pub(super) fn binding(&self, name: &str) -> Option<Option<u32>> {
        let mut end = self.names.len();
        for frame in self.frames.iter().rev() {
            let bound = self.names.get(frame.names_from..end).unwrap_or_default();
            if let Some((_, slot)) = bound.iter().rev().find(|(bound, _)| *bound == name) {
                return Some(Some(*slot));
            }
            if let Some((_, slot)) = frame.targets.iter().find(|(target, _)| *target == name) {
                return Some(Some(*slot));
            }
            if frame.is_loop && frame.assigned.contains(name) {
                return None;
            }
            end = frame.names_from;
        }
        if self.gone.contains(name) {
            return None;
        }
        Some(None)
    }

    /// Whether `expr` names the environment's function `name` (not
    /// hidden by a name of the template).
    pub(super) fn is_global(&self, expr: &ast::Expr<'a>, name: &str) -> bool {
        matches!(expr, ast::Expr::Var(var) if var.id == name
            && self.globals.contains(name) && self.read(name) == Some(None))
    }

    /// `set name = namespace(key=value, …)`: each attribute is a slot of
    /// the scope that assigns `name`, which `set name.key = …` writes
    /// wherever it is (a namespace is the one value a loop's body can
    /// change for the passes after it and after the loop).
    pub(super) fn namespace(
        &mut self,
        name: &'a str,
        args: &[ast::CallArg<'a>],
        into: &mut Vec<Instr>,
    ) -> Option<()> {
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            match arg {
                ast::CallArg::Kwarg(key, value) => values.push((*key, self.expr(value)?)),
                _ => return self.no(|| "`namespace` with other than named arguments".into()),
            }
        }
        let bound_here = self.frames.last().map_or(0, |frame| frame.names_from);
        let fresh = !self.names[bound_here..]
            .iter()
            .any(|(bound, _)| *bound == name);
        let unconditional = self
            .frames
            .last()
            .is_some_and(|frame| frame.conditional == 0);
        let handle = match (fresh, unconditional) {
            (true, _) => self.assign(name)?,
            // A new namespace under a name of this scope: a binding of its
            // own, which the reads after it find.
            (false, true) => {
                let slot = self.top_slots(1);
                self.names.push((name, slot));
                slot
            }
            (false, false) => return self.no(|| format!("namespace `{name}` assigned again")),
        };
        // The attributes a `set name.key` gives later hold nothing until
        // then (read before, they are minijinja's).
        let mut later: Vec<&'a str> = self.namespace_keys.get(name).cloned().unwrap_or_default();
        later.retain(|key| !values.iter().any(|(given, _)| given == key));
        let count = u32::try_from(values.len() + later.len()).ok()?;
        let first = self.top_slots(count);
        let mut attributes = Vec::with_capacity(values.len());
        let unset = || call(Func::Jinja(JinjaOp::Unset), [], machinery::Span::default());
        let values = values.into_iter().map(|(key, expr)| (key, expr, false));
        let later = later.into_iter().map(|key| (key, unset(), true));
        for (slot, (key, expr, late)) in (first..).zip(values.chain(later)) {
            attributes.push((key, slot, late));
            into.push(Instr::Set { slot, expr });
        }
        self.namespaces.insert(handle, attributes);
        Some(())
    }

    /// The slot of `name.key`, where `name` is a namespace that has `key`,
    /// and whether the key came after the namespace was made.
    pub(super) fn attribute(&self, name: &str, key: &str) -> Option<(u32, bool)> {
        let attributes = match self.read_or_refuse(name)? {
            Some(handle) => self.namespaces.get(&handle),
            None => None,
        };
        let Some(attributes) = attributes else {
            return self.no(|| format!("`set {name}.{key}` where `{name}` is not a namespace"));
        };
        match attributes.iter().find(|(attribute, ..)| *attribute == key) {
            Some((_, slot, late)) => Some((*slot, *late)),
            None => self.no(|| format!("namespace attribute `{name}.{key}` never given")),
        }
    }

    /// In a macro's body, the top frame's slot of `name.key` where `name`
    /// is a namespace of the template's top ([`Lowerer::outer_namespaces`])
    /// the body does not bind, and whether the key came later.
    pub(super) fn outer_attribute(
        &self,
        name: &str,
        key: &str,
    ) -> Option<Option<(u32, bool, bool)>> {
        if !self.in_macro || self.read(name) != Some(None) {
            return Some(None);
        }
        let Some((made_before, attributes)) = self.outer_namespaces.get(name) else {
            return Some(None);
        };
        match attributes.iter().find(|(attribute, ..)| *attribute == key) {
            Some((_, slot, late)) => Some(Some((*slot, *late, *made_before))),
            None => self.no(|| format!("namespace attribute `{name}.{key}` never given")),
        }
    }

    /// [`Lowerer::read`], refusing a name read before its loop's `set`.
    pub(super) fn read_or_refuse(&self, name: &str) -> Option<Option<u32>> {
        match self.read(name) {
            Some(found) => Some(found),
            None => self.no(|| format!("`{name}` read where it may not be assigned")),
        }
    }

    /// The slot `set NAME` writes: the name's in this scope, or a new one
    /// where the scope assigns it first outside any `if`.
    pub(super) fn assign(&mut self, name: &'a str) -> Option<u32> {
        if self.frames.len() == 1 && !self.in_macro && self.int_maps.contains_key(name) {
            return self.no(|| format!("`{name}` (a map with integer keys) assigned again"));
        }
        let frame = self.frames.last()?;
        if let Some((_, slot)) = frame.targets.iter().find(|(target, _)| *target == name) {
            return Some(*slot);
        }
        let bound = self.names.get(frame.names_from..).unwrap_or_default();
        if let Some((_, slot)) = bound.iter().rev().find(|(bound, _)| *bound == name) {
            return Some(*slot);
        }
        if frame.conditional == 0 {
            let slot = self.top_slots(1);
            self.names.push((name, slot));
            return Some(slot);
        }
        if frame.is_loop {
            // A loop's name first assigned in an `if`: bound for the rest
            // of that block only (read after it, it is refused), unless
            // every branch assigns it (then the slot is the `if`'s).
            let slot = match self.pending.get(name) {
                Some(slot) => *slot,
                None => self.slots(1),
            };
            self.names.push((name, slot));
            return Some(slot);
        }
        // The template's name, first assigned in an `if`: reads take the
        // data's value where the `set` did not run, which a slot no loop
        // has used yet tells (it holds no value until the `set`).
        let slot = self.next_slot.max(self.max_slots);
        self.next_slot = slot + 1;
        self.max_slots = self.next_slot;
        self.names.push((name, slot));
        self.maybe_unset.insert(slot);
        Some(slot)
    }

    /// `set NAME = {512: 128, …}`, a map literal of constants with
    /// integer keys (each once), at the template's top outside any block,
    /// of a name not bound yet: kept as a constant ([`Lowerer::int_maps`]).
    pub(super) fn int_map_set(
        &mut self,
        name: &'a str,
        pairs: Vec<(i64, serde_json::Value)>,
    ) -> Option<()> {
        let top = self.frames.len() == 1
            && !self.in_macro
            && self
                .frames
                .first()
                .is_some_and(|frame| frame.conditional == 0);
        if !top || self.binding(name) != Some(None) || self.macro_named(name).is_some() {
            return self.no(|| "a map literal with keys other than strings".into());
        }
        if self.int_maps.insert(name, pairs).is_some() {
            return self.no(|| format!("`{name}` (a map with integer keys) assigned again"));
        }
        Some(())
    }

    /// The constant pairs `expr` names, where it is a name
    /// [`Lowerer::int_maps`] holds and nothing binds here.
    pub(super) fn int_map(&self, expr: &ast::Expr<'a>) -> Option<&[(i64, serde_json::Value)]> {
        let ast::Expr::Var(var) = expr else {
            return None;
        };
        if self.binding(var.id) != Some(None) {
            return None;
        }
        self.int_maps.get(var.id).map(Vec::as_slice)
    }
}

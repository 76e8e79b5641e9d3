//! pongo2's scopes in Jinja's: `forloop.Parentloop` kept by a `{% set %}`
//! after its `for` tag, and a `{% set %}` kept in a namespace — a loop's
//! for its next pass, a block's for the text after it, and the names the
//! blocks of an extended template set, restored after them.

use std::collections::BTreeSet;
use std::ops::Range;

use super::{
    dashes, parse_error, Kind, Open, Tag, Token, Translator, MAX_RESTORED_BYTES, NOT_NAMES,
};
use crate::diagnostics::TemplateError;
use crate::syntax::edits::Edit;

impl Translator<'_> {
    /// The name of the loop `up` levels out from the innermost one
    /// (`forloop.Parentloop` is one), kept by a `{% set %}` right after
    /// its `for` tag.
    pub(super) fn keep_loop(
        &mut self,
        up: usize,
        at: Range<usize>,
    ) -> Result<String, TemplateError> {
        let loops: Vec<usize> = (0..self.open.len())
            .filter(|&index| self.open.get(index).is_some_and(|open| open.name == "for"))
            .collect();
        let Some(&index) = loops.len().checked_sub(1 + up).and_then(|k| loops.get(k)) else {
            return Err(parse_error(
                at,
                "forloop.Parentloop here has no outer loop in this template",
            )
            .suggest(Some(
                "read forloop.Parentloop inside a loop that is itself inside a loop".into(),
            )));
        };
        let Some(open) = self.open.get_mut(index) else {
            return Ok("loop".into());
        };
        if let Some((name, _)) = &open.kept_as {
            return Ok(name.clone());
        }
        let name = format!("__django_loop_{}", open.span.start);
        let dash = self
            .body
            .get(open.span.clone())
            .is_some_and(|tag| tag.ends_with("-%}"));
        open.kept_as = Some((name.clone(), dash));
        let end = open.span.end;
        let close = if dash { "-" } else { "" };
        self.kept_loops.push(Edit {
            original: end..end,
            replacement: format!("{{% set {name} = loop {close}%}}"),
        });
        Ok(name)
    }

    /// `{% set name = … %}` in the scope of a loop or a block (not inside
    /// a `with` or macro there): pongo2 gives a loop one scope for all its
    /// passes, and a block none of its own, so the value is kept in a
    /// namespace for the loop's next pass, or for the text after the block
    /// (`keep_between_passes`, `keep_after_block`); minijinja starts each
    /// pass afresh and keeps a block's names to itself.
    pub(super) fn keep_set(&mut self, tag: &Tag, args: &[Token]) {
        let (Some(name), true) = (
            args.first().filter(|t| t.kind == Kind::Ident),
            self.is_sym(args.get(1), "="),
        ) else {
            return;
        };
        let name = self.text(name).to_string();
        if let Some(keep) = self.keep_name(&name, self.open.len()) {
            let (_, close) = dashes(tag);
            self.insert(tag.span.end, format!("{keep} {close}%}}"));
        }
    }

    /// `name`, set in the scope of the open blocks `..depth`: the start of
    /// a `{% set %}` tag (its end left to the caller) that keeps it where
    /// pongo2 would see it again, if that is a loop's or a block's scope.
    pub(super) fn keep_name(&mut self, name: &str, depth: usize) -> Option<String> {
        let extends = self.extends;
        let open = self
            .open
            .get_mut(..depth)?
            .iter_mut()
            .rev()
            .find(|open| matches!(open.name, "for" | "with" | "macro" | "block"))?;
        // A block of a template that extends another renders in that one:
        // its names go to the namespace the root template made for the
        // block (`open_block`), for the text after it there.
        if open.name == "block" && extends {
            let block = open.targets.first()?;
            let namespace = format!("__django_block_{block}");
            return Some(format!(
                "{{% if {namespace} is defined %}}{{% set {namespace}.{name} = {name} %}}{{% endif"
            ));
        }
        let kept = match open.name {
            "for" => !open.targets.iter().any(|target| target == name),
            "block" => !extends,
            _ => false,
        };
        if !kept {
            return None;
        }
        if !open.kept_names.iter().any(|kept| kept == name) {
            open.kept_names.push(name.to_string());
        }
        Some(format!(
            "{{% set __django_scope_{}.{name} = {name}",
            open.span.start
        ))
    }

    /// The names a tag reads: identifiers not after a `.`, not Jinja's
    /// words, not the translation's own.
    pub(super) fn note_names(&mut self, tokens: &[Token]) {
        let mut after_dot = false;
        for token in tokens {
            let text = self.text(token);
            if token.kind == Kind::Ident
                && !after_dot
                && !NOT_NAMES.contains(&text)
                && !text.starts_with("__")
                && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && text.bytes().next().is_some_and(|b| !b.is_ascii_digit())
            {
                self.names_read.push((token.start, text));
            }
            after_dot = token.kind == Kind::Sym && text == ".";
        }
    }

    /// `{% block name %}` in a template that extends none: a namespace
    /// for the block made before it, where the block of a template that
    /// extends this one leaves the names it sets (`keep_name`).
    pub(super) fn open_block(&mut self, tag: &Tag, args: &[Token]) {
        let Some(name) = args
            .first()
            .filter(|t| t.kind == Kind::Ident)
            .map(|t| self.text(t).to_string())
        else {
            return;
        };
        if !self.extends && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            let body = self.body;
            let text = body.get(tag.span.clone()).unwrap_or_default();
            let left = if text.starts_with("{%-") { "-" } else { "" };
            self.insert(
                tag.span.start,
                format!("{{%{left} set __django_block_{name} = namespace() %}}"),
            );
        }
        if let Some(open) = self.open.last_mut() {
            open.targets = vec![name];
        }
    }

    /// After each block of a template that extends none: the names read
    /// after it take the values the block of an extending template set
    /// (pongo2 gives a block no scope of its own, so what a child's block
    /// sets is seen after it in the parent). At most
    /// [`MAX_RESTORED_BYTES`] of such text; past it, names are not
    /// restored.
    pub(super) fn restore_after_blocks(&mut self) {
        let mut block_ends = std::mem::take(&mut self.block_ends);
        // From the last block back, with the names read after each.
        block_ends.sort_by_key(|(_, end)| std::cmp::Reverse(*end));
        let mut names_read = std::mem::take(&mut self.names_read);
        names_read.sort_by_key(|(at, _)| *at);
        let mut names: BTreeSet<&str> = BTreeSet::new();
        let mut spent = 0usize;
        for (block, end) in block_ends {
            while names_read.last().is_some_and(|(at, _)| *at >= end) {
                if let Some((_, name)) = names_read.pop() {
                    names.insert(name);
                }
            }
            let namespace = format!("__django_block_{block}");
            let mut restore = String::new();
            for name in &names {
                restore.push_str(&format!(
                    "{{% if {namespace}.{name} is defined %}}{{% set {name} = {namespace}.{name} %}}{{% endif %}}"
                ));
                if spent.saturating_add(restore.len()) > MAX_RESTORED_BYTES {
                    return;
                }
            }
            spent = spent.saturating_add(restore.len());
            if !restore.is_empty() {
                self.insert(end, restore);
            }
        }
    }

    /// At `{% endblock %}`: a block that sets names gets a namespace made
    /// before it, and after it the names take the values the block left
    /// there (kept in turn for the scope around).
    pub(super) fn keep_after_block(&mut self, open: &Open, end: &Tag) {
        if open.kept_names.is_empty() {
            return;
        }
        let namespace = format!("__django_scope_{}", open.span.start);
        let tag = self.body.get(open.span.clone()).unwrap_or_default();
        let left = if tag.starts_with("{%-") { "-" } else { "" };
        self.insert(
            open.span.start,
            format!("{{%{left} set {namespace} = namespace() %}}"),
        );
        let (_, right) = dashes(end);
        let mut restore = String::new();
        for (i, name) in open.kept_names.iter().enumerate() {
            let close = if i + 1 == open.kept_names.len() {
                right
            } else {
                ""
            };
            let outer = self
                .keep_name(name, self.open.len())
                .map(|keep| format!("{keep} %}}"))
                .unwrap_or_default();
            restore.push_str(&format!(
                "{{% if {namespace}.{name} is defined %}}{{% set {name} = {namespace}.{name} %}}{outer}{{% endif {close}%}}"
            ));
        }
        self.insert(end.span.end, restore);
    }

    /// At `{% endfor %}`: a loop whose body sets names in its own scope
    /// gets a namespace made before the loop, and each pass starts with
    /// the values the last pass left there.
    pub(super) fn keep_between_passes(&mut self, open: &Open) {
        if open.kept_names.is_empty() {
            return;
        }
        let namespace = format!("__django_scope_{}", open.span.start);
        let tag = self.body.get(open.span.clone()).unwrap_or_default();
        let left = if tag.starts_with("{%-") { "-" } else { "" };
        let right = if tag.ends_with("-%}") { "-" } else { "" };
        self.insert(
            open.span.start,
            format!("{{%{left} set {namespace} = namespace() %}}"),
        );
        let mut restore = String::new();
        for (i, name) in open.kept_names.iter().enumerate() {
            let close = if i + 1 == open.kept_names.len() {
                right
            } else {
                ""
            };
            restore.push_str(&format!(
                "{{% if {namespace}.{name} is defined %}}{{% set {name} = {namespace}.{name} %}}{{% endif {close}%}}"
            ));
        }
        self.kept_loops.push(Edit {
            original: open.span.end..open.span.end,
            replacement: restore,
        });
    }
}

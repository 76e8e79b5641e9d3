//! Tags that name other files: `include` (with `with … only`), `import`
//! (the named macros copied from the file), `ssi` and `extends`.

use std::ops::Range;
use std::sync::atomic::Ordering;

use super::{
    dashes, parse_error, string_literal, translate_at, Kind, Tag, Token, Translator,
    MAX_IMPORT_DEPTH, NEXT_CYCLE,
};
use crate::diagnostics::TemplateError;
use crate::syntax::edits::{Edit, Edited};

impl Translator<'_> {
    /// `{% include "name" [if_exists] [with a=b c=d [only]] %}`: Jinja's
    /// include (`ignore missing`), inside `{% with a=b, c=d %}` for the
    /// values given; with `only`, the template sees those values alone
    /// (checked when the files are read: see [`Translation::only`](super::Translation::only)).
    pub(super) fn include(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        args: &[Token],
    ) -> Result<(), TemplateError> {
        let malformed = |at: Range<usize>| {
            parse_error(at, "malformed {% include %}: expected {% include \"name\" [if_exists] [with key=value … [only]] %}")
        };
        let Some(first) = args.first() else {
            return Err(malformed(tag.span.clone()));
        };
        // The name: a string, or an expression up to `if_exists` / `with`.
        let name_end = if first.kind == Kind::Str {
            1
        } else {
            args.iter()
                .position(|t| self.is_ident(Some(t), "if_exists") || self.is_ident(Some(t), "with"))
                .unwrap_or(args.len())
        };
        self.expression(args.get(..name_end).unwrap_or_default(), false)?;
        let mut i = name_end;
        let if_exists = self.is_ident(args.get(i), "if_exists");
        if if_exists {
            i += 1;
        }
        let name_last = args
            .get(name_end.saturating_sub(1))
            .copied()
            .unwrap_or(*first);
        // Each tag includes a copy of its own (pongo2 parses the file once
        // per tag): its cycles count apart from another tag's.
        let site = format!(
            "__django_site_path=__django_site({})",
            NEXT_CYCLE.fetch_add(1, Ordering::Relaxed)
        );
        if i == args.len() {
            self.edit(
                name_token.start..name_token.end,
                format!("with {site} %}}{{% include"),
            );
            let last = args.last().map_or(name_last.end, |t| t.end);
            let ignore = if if_exists { " ignore missing" } else { "" };
            self.edit(name_last.end..last, format!("{ignore} %}}{{% endwith"));
            return Ok(());
        }
        if !self.is_ident(args.get(i), "with") {
            let at = args.get(i).map_or(tag.span.clone(), |t| t.start..t.end);
            return Err(malformed(at));
        }
        i += 1;
        // `key=value` pairs, each value up to the next `key=` or `only`.
        let mut pairs: Vec<(String, Range<usize>)> = Vec::new();
        let mut only = false;
        while i < args.len() {
            let (Some(key), true) = (
                args.get(i).filter(|t| t.kind == Kind::Ident),
                self.is_sym(args.get(i + 1), "="),
            ) else {
                let at = args.get(i).map_or(tag.span.clone(), |t| t.start..t.end);
                return Err(parse_error(
                    at,
                    "expected key=value after `with` in {% include %}",
                ));
            };
            let start = i + 2;
            let mut end = start;
            let mut depth = 0usize;
            while let Some(token) = args.get(end) {
                if token.kind == Kind::Sym {
                    match self.text(token) {
                        "(" | "[" | "{" => depth += 1,
                        ")" | "]" | "}" => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
                let next_pair = depth == 0
                    && end > start
                    && token.kind == Kind::Ident
                    && self.is_sym(args.get(end + 1), "=")
                    && !self.is_sym(args.get(end - 1), ".");
                let is_only = depth == 0
                    && end > start
                    && end + 1 == args.len()
                    && self.is_ident(Some(token), "only");
                if next_pair || is_only {
                    break;
                }
                end += 1;
            }
            if end == start {
                return Err(parse_error(
                    key.start..key.end,
                    format!("`{}=` needs a value in {{% include %}}", self.text(key)),
                ));
            }
            pairs.push((self.text(key).to_string(), start..end));
            i = end;
            if self.is_ident(args.get(i), "only") {
                only = true;
                i += 1;
            }
        }
        // The values, translated, in a `{% with %}` around the include.
        let mut given = Vec::new();
        for (key, range) in &pairs {
            let tokens = args.get(range.clone()).unwrap_or_default();
            let (Some(first), Some(last)) = (tokens.first(), tokens.last()) else {
                continue;
            };
            let mark = self.edits.len();
            self.expression(tokens, false)?;
            let edits: Vec<Edit> = self
                .edits
                .drain(mark..)
                .map(|edit| Edit {
                    original: edit.original.start - first.start..edit.original.end - first.start,
                    replacement: edit.replacement,
                })
                .collect();
            let text = self.body.get(first.start..last.end).unwrap_or_default();
            given.push(format!("{key}={}", Edited::new(text, edits).text));
        }
        self.edit(
            name_token.start..name_token.end,
            format!("with {site}, {} %}}{{% include", given.join(", ")),
        );
        let last = args.last().map_or(name_last.end, |t| t.end);
        let mut tail = String::new();
        if if_exists {
            tail.push_str(" ignore missing");
        }
        if only {
            tail.push_str(" without context");
            self.only.push((
                first.start,
                pairs.iter().map(|(key, _)| key.clone()).collect(),
            ));
        }
        tail.push_str(" %}{% endwith");
        self.edit(name_last.end..last, tail);
        Ok(())
    }

    /// `{% import "file" a, b as c %}` → `{% from "file" import a, b as c
    /// with context %}`: pongo2 runs an imported macro in the context of
    /// the template that imports it.
    pub(super) fn import(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        args: &[Token],
    ) -> Result<(), TemplateError> {
        let Some(file) = args.first().filter(|t| t.kind == Kind::Str) else {
            return Err(parse_error(
                tag.span.clone(),
                "{% import %} needs a file name in quotes: {% import \"macros.html\" greet %}",
            ));
        };
        let names = args.get(1..).unwrap_or_default();
        // name [as alias] (, name [as alias])*
        let mut expect_name = true;
        let mut k = 0;
        while let Some(token) = names.get(k) {
            let ok = if expect_name {
                let ok = token.kind == Kind::Ident;
                if ok && self.is_ident(names.get(k + 1), "as") {
                    k += 2;
                    names.get(k).is_some_and(|t| t.kind == Kind::Ident)
                } else {
                    ok
                }
            } else {
                self.is_sym(Some(token), ",")
            };
            if !ok {
                let at = names.get(k).map_or(tag.span.clone(), |t| t.start..t.end);
                return Err(parse_error(at, "{% import %} takes macro names, each optionally `as alias`, separated by commas"));
            }
            expect_name = !expect_name;
            k += 1;
        }
        if names.is_empty() || expect_name {
            return Err(parse_error(tag.span.clone(), "{% import %} needs at least one macro to import: {% import \"macros.html\" greet %}"));
        }
        self.edit(name_token.start..name_token.end, "from");
        self.insert(file.end, " import");
        let last = names.last().map_or(file.end, |t| t.end);
        self.insert(last, " with context");
        // pongo2 runs an imported macro in the importer's context as it is
        // at the call, and none of the imported file's top level: the
        // macros are copied here, and Jinja's import (kept for the checks
        // of the file, and its errors) never runs.
        let mut pairs = Vec::new();
        let mut k = 0;
        while let Some(token) = names.get(k) {
            let alias = if self.is_ident(names.get(k + 1), "as") {
                k += 2;
                names.get(k)
            } else {
                Some(token)
            };
            if let Some(alias) = alias {
                pairs.push((self.text(token), self.text(alias)));
            }
            k += 2;
        }
        let quoted = self.text(file);
        let name = quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default();
        if let Some(copies) = self.copy_macros(name, &pairs, file.start..file.end)? {
            let (open, close) = dashes(tag);
            self.insert(
                tag.span.start,
                format!("{{%{open} if true %}}{copies}{{% endif %}}{{% if false %}}"),
            );
            self.insert(tag.span.end, format!("{{% endif {close}%}}"));
        }
        Ok(())
    }

    /// The macros `pairs` (name, alias) of the file `name`, translated, to
    /// be defined where it is imported; `None` to leave the import to
    /// Jinja's (no include root, a file that does not read or translate,
    /// a name it does not export, too deep: Jinja's import reports it).
    pub(super) fn copy_macros(
        &mut self,
        name: &str,
        pairs: &[(&str, &str)],
        at: Range<usize>,
    ) -> Result<Option<String>, TemplateError> {
        let Some(includes) = self.includes else {
            return Ok(None);
        };
        if self.depth >= MAX_IMPORT_DEPTH {
            return Ok(None);
        }
        let Ok(candidates) = includes.jinja_candidates(name) else {
            return Ok(None);
        };
        let Ok(Some((_, file))) = includes.read_first(&candidates) else {
            return Ok(None);
        };
        let text = file.text;
        let Ok(translation) = translate_at(&text, None, self.depth + 1, self.copied) else {
            return Ok(None);
        };
        let mut copies = String::new();
        for (macro_name, alias) in pairs {
            if !translation.exports.contains(*macro_name) {
                return Ok(None);
            }
            let Some(source) = translation.macros.iter().find(|m| m.name == *macro_name) else {
                return Ok(None);
            };
            let (Some(before), Some(after)) = (
                text.get(source.span.start..source.name_at.start),
                text.get(source.name_at.end..source.span.end),
            ) else {
                return Ok(None);
            };
            let renamed = format!("{before}{alias}{after}");
            let Ok(copy) = translate_at(&renamed, Some(includes), self.depth + 1, self.copied)
            else {
                return Ok(None);
            };
            copies.push_str(&copy.edited.text);
        }
        let copied = self.copied.get().saturating_add(copies.len());
        self.copied.set(copied);
        if copied > includes.max_bytes() {
            return Err(parse_error(
                at,
                format!(
                    "the macros {{% import %}} copies add up to more than {}: the most one template may import",
                    crate::limits::describe_bytes(includes.max_bytes())
                ),
            ));
        }
        Ok(Some(copies))
    }

    /// `{% ssi "file" %}` prints the file as it is; `{% ssi "file" parsed
    /// %}` renders it as a template here (an include).
    pub(super) fn ssi(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        args: &[Token],
    ) -> Result<(), TemplateError> {
        let file = args.first().filter(|t| t.kind == Kind::Str);
        let parsed = args.get(1).filter(|t| self.is_ident(Some(t), "parsed"));
        let (Some(file), true) = (file, args.len() == 1 + usize::from(parsed.is_some())) else {
            return Err(parse_error(tag.span.clone(), "{% ssi %} takes a file name in quotes and optionally `parsed`: {% ssi \"notes.txt\" %}"));
        };
        if let Some(parsed) = parsed {
            let site = NEXT_CYCLE.fetch_add(1, Ordering::Relaxed);
            self.edit(
                name_token.start..name_token.end,
                format!("with __django_site_path=__django_site({site}) %}}{{% include"),
            );
            self.edit(file.end..parsed.end, " %}{% endwith");
            return Ok(());
        }
        let quoted = self.text(file);
        let name = quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default();
        let at = file.start..file.end;
        let Some(includes) = self.includes else {
            return Err(parse_error(at, format!("{{% ssi %}} of \"{name}\" cannot be read: this prompt has no include root (it is not a file)"))
                .with_kind("unresolved-include")
                .suggest(Some("load the prompt from a file, or set an include root".into())));
        };
        let read = match self.ssi_read.get(name) {
            Some(text) => Ok((Some(text.clone()), Vec::new())),
            None => includes.jinja_candidates(name).and_then(|candidates| {
                let read = includes.read_first(&candidates)?;
                Ok((read.map(|(_, file)| file.text), candidates))
            }),
        };
        let text = match read {
            Ok((Some(text), _)) => text,
            Ok((None, tried)) => {
                let tried: Vec<String> = tried
                    .iter()
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .collect();
                return Err(parse_error(
                    at,
                    format!(
                        "cannot find \"{name}\" for {{% ssi %}}: no file {} in the include root",
                        tried.join(", ")
                    ),
                )
                .with_kind("unresolved-include"));
            }
            Err(message) => {
                return Err(parse_error(
                    at,
                    format!("cannot read \"{name}\" for {{% ssi %}}: {message}"),
                )
                .with_kind("unresolved-include"));
            }
        };
        self.ssi_bytes = self.ssi_bytes.saturating_add(text.len());
        if self.ssi_bytes > includes.max_bytes() {
            return Err(parse_error(
                at,
                format!(
                    "the files {{% ssi %}} prints add up to more than {}: the most one template may print this way",
                    crate::limits::describe_bytes(includes.max_bytes())
                ),
            ));
        }
        self.ssi_read.insert(name.to_string(), text.clone());
        // A block tag still (trim_blocks applies to it as to `ssi`), that
        // prints the text: an empty filter block whose filter gives it.
        let (open, close) = dashes(tag);
        self.edit(
            tag.span.clone(),
            format!(
                "{{%{open} filter __django_text({}) %}}{{% endfilter {close}%}}",
                string_literal(&text)
            ),
        );
        Ok(())
    }

    /// `{% extends "file" %}`: as Jinja's, but only at the top level (as
    /// pongo2 wants it), and what comes before it is never printed (pongo2
    /// renders only the blocks of a template that extends another).
    pub(super) fn extends(&mut self, tag: &Tag, args: &[Token]) -> Result<(), TemplateError> {
        if !self.open.is_empty() {
            return Err(parse_error(
                tag.span.clone(),
                "{% extends %} must stand at the top level of the template, outside any block",
            ));
        }
        if args.len() != 1 || args.first().is_none_or(|t| t.kind != Kind::Str) {
            return Err(parse_error(
                tag.span.clone(),
                "{% extends %} takes one file name in quotes: {% extends \"base.html\" %}",
            ));
        }
        self.extends = true;
        if self
            .body
            .get(..tag.span.start)
            .is_some_and(|before| !before.is_empty())
        {
            self.insert(0, "{% if false %}");
            self.insert(tag.span.start, "{% endif %}");
        }
        // What follows, blocks aside, never runs in pongo2 (its `set`s
        // and imports neither): in Jinja it would. minijinja registers the
        // blocks inside the `if` all the same.
        self.insert(tag.span.end, "{% if false %}");
        let end = self.body.len();
        self.insert(end, "{% endif %}");
        Ok(())
    }
}

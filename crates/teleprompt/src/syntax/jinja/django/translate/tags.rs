//! The tags pongo2 has and Jinja spells otherwise, one translation each:
//! `for`, `with`, the `as name` of a tag's output, juxtaposed arguments,
//! `cycle`, `now`, `widthratio`, `ifchanged`.

use std::ops::Range;
use std::sync::atomic::Ordering;

use super::scan::split_expressions;
use super::{dashes, parse_error, Kind, Tag, Token, Translator, MAX_NAMED_CYCLE, NEXT_CYCLE};
use crate::diagnostics::TemplateError;

impl Translator<'_> {
    /// `for x in xs [reversed] [sorted]`, `for k, v in map`.
    pub(super) fn for_tag(&mut self, tag: &Tag, args: &[Token]) -> Result<(), TemplateError> {
        let Some(in_at) = args.iter().position(|t| self.is_ident(Some(t), "in")) else {
            return Err(parse_error(
                tag.span.clone(),
                "{% for %} needs `in`: {% for item in items %}",
            ));
        };
        let pairs = args
            .get(..in_at)
            .is_some_and(|targets| targets.iter().any(|t| self.is_sym(Some(t), ",")));
        let mut expr_end = args.len();
        let mut sorted = false;
        let mut reversed = false;
        if expr_end > in_at + 2 && self.is_ident(args.get(expr_end - 1), "sorted") {
            sorted = true;
            expr_end -= 1;
        }
        if expr_end > in_at + 2 && self.is_ident(args.get(expr_end - 1), "reversed") {
            reversed = true;
            expr_end -= 1;
        }
        let expr = args.get(in_at + 1..expr_end).unwrap_or_default();
        let (Some(first), Some(last)) = (expr.first(), expr.last()) else {
            return Err(parse_error(
                tag.span.clone(),
                "{% for %} needs something to loop over after `in`",
            ));
        };
        let (start, end) = (first.start, last.end);
        let modifiers_end = args.last().map_or(end, |t| t.end);
        self.insert(start, "(");
        self.expression(expr, false)?;
        self.edit(
            end..modifiers_end,
            format!(")|__django_for({reversed}, {sorted}, {pairs})"),
        );
        Ok(())
    }

    /// `with a=b c=d` → `with a=b, c=d`; `with b as a` → `with a=b`.
    pub(super) fn with_tag(&mut self, tag: &Tag, args: &[Token]) -> Result<(), TemplateError> {
        if args.is_empty() {
            return Err(parse_error(
                tag.span.clone(),
                "{% with %} needs a value to name: {% with name=value %}",
            ));
        }
        if args.iter().any(|t| self.is_ident(Some(t), "as")) {
            // Old style: `value as name [value as name]…`.
            let mut i = 0;
            while i < args.len() {
                let Some(as_at) = args
                    .get(i..)
                    .and_then(|rest| rest.iter().position(|t| self.is_ident(Some(t), "as")))
                    .map(|p| p + i)
                else {
                    let at = args.get(i).map_or(tag.span.clone(), |t| t.start..t.end);
                    return Err(parse_error(
                        at,
                        "expected `as name` after this value in {% with %}",
                    ));
                };
                let name = args.get(as_at + 1).filter(|t| t.kind == Kind::Ident);
                let (Some(value_start), Some(value_end), Some(name)) = (
                    args.get(i),
                    as_at.checked_sub(1).and_then(|p| args.get(p)),
                    name,
                ) else {
                    let at = args.get(as_at).map_or(tag.span.clone(), |t| t.start..t.end);
                    return Err(parse_error(
                        at,
                        "{% with value as name %} needs a value and a name",
                    ));
                };
                if as_at == i {
                    return Err(parse_error(
                        value_start.start..value_start.end,
                        "{% with value as name %} needs a value before `as`",
                    ));
                }
                let name_text = self.text(name).to_string();
                let (value_start, value_end, name) = (*value_start, *value_end, *name);
                self.insert(value_start.start, format!("{name_text}="));
                self.expression(args.get(i..as_at).unwrap_or_default(), false)?;
                let more = as_at + 2 < args.len();
                self.edit(value_end.end..name.end, if more { "," } else { "" });
                i = as_at + 2;
            }
            return Ok(());
        }
        // New style: `a=b c=d`; a pair starts at `name =`.
        let mut first = true;
        let mut depth = 0usize;
        for (i, token) in args.iter().enumerate() {
            if token.kind == Kind::Sym {
                match self.text(token) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            let starts_pair = depth == 0
                && token.kind == Kind::Ident
                && self.is_sym(args.get(i + 1), "=")
                && !self.is_sym(i.checked_sub(1).and_then(|p| args.get(p)), ".");
            if starts_pair {
                let previous = i.checked_sub(1).and_then(|p| args.get(p)).copied();
                if let Some(previous) = previous.filter(|p| !first && !self.is_sym(Some(p), ",")) {
                    self.edit(previous.end..token.start, ", ");
                }
                first = false;
            }
        }
        self.expression(args, false)
    }

    /// Turns a tag that prints into `{{ function(args…) }}`, keeping the
    /// author's dashes.
    pub(super) fn as_output(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        function: &str,
        leading: &str,
        args: &[Token],
        parts: &[Range<usize>],
    ) -> Result<(), TemplateError> {
        self.edit(tag.span.start..tag.span.start + 2, "{{");
        let first_start = args.first().map_or(name_token.end, |t| t.start);
        self.edit(
            name_token.start..first_start,
            format!("{function}({leading}"),
        );
        self.arguments(args, parts)?;
        let end = args.last().map_or(name_token.end, |t| t.end);
        self.insert(end, ")");
        let close = tag.span.end - 2;
        self.edit(close..tag.span.end, "}}");
        Ok(())
    }

    /// Joins juxtaposed expressions with commas (the space between them
    /// becomes `, `), translating each.
    pub(super) fn arguments(
        &mut self,
        args: &[Token],
        parts: &[Range<usize>],
    ) -> Result<(), TemplateError> {
        let mut previous_end = None;
        for part in parts {
            let tokens = args.get(part.clone()).unwrap_or_default();
            if let (Some(end), Some(first)) = (previous_end, tokens.first()) {
                self.edit(end..first.start, ", ");
            }
            self.expression(tokens, false)?;
            previous_end = tokens.last().map(|t| t.end);
        }
        Ok(())
    }

    /// `{% cycle a b %}` → `{{ __django_cycle(N, a, b) }}`: pongo2 counts
    /// each tag's uses in a render (its own counter, across loops and
    /// macro calls); `{% cycle a b as name [silent] %}` also names the
    /// cycle (`{{ name }}` prints its value, `{% cycle name %}` moves it
    /// on, evaluating the next of `a b` then, as pongo2 does).
    pub(super) fn cycle(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        args: &[Token],
    ) -> Result<(), TemplateError> {
        let id = NEXT_CYCLE.fetch_add(1, Ordering::Relaxed);
        let as_at = args.iter().position(|t| self.is_ident(Some(t), "as"));
        let values = args.get(..as_at.unwrap_or(args.len())).unwrap_or_default();
        let parts = split_expressions(self, values);
        if parts.is_empty() {
            return Err(parse_error(
                tag.span.clone(),
                "{% cycle %} needs values to cycle through",
            ));
        }
        let Some(as_at) = as_at else {
            return self.as_output(
                tag,
                name_token,
                "__django_cycle",
                &format!("{id}, "),
                args,
                &parts,
            );
        };
        let name = args.get(as_at + 1).filter(|t| t.kind == Kind::Ident);
        let silent = args
            .get(as_at + 2)
            .filter(|t| self.is_ident(Some(t), "silent"));
        let expected = as_at + 2 + usize::from(silent.is_some());
        let (Some(as_token), Some(name)) =
            (args.get(as_at), name.filter(|_| args.len() == expected))
        else {
            return Err(parse_error(
                tag.span.clone(),
                "{% cycle … as name %} takes one name after `as`, and then only `silent`",
            )
            .suggest(Some("write {% cycle \"odd\" \"even\" as row %}".into())));
        };
        if parts.len() > MAX_NAMED_CYCLE {
            return Err(parse_error(
                tag.span.clone(),
                format!("{{% cycle … as name %}} takes at most {MAX_NAMED_CYCLE} values"),
            ));
        }
        let name_text = self.text(name).to_string();
        // The values stay where they are written, each in a branch of a
        // macro that prints the one asked for: `{% cycle name %}`
        // evaluates the next value when it runs, as pongo2 does (a macro
        // reads the names around it as they are at the call).
        let values_macro = format!("__django_cycle_values_{id}");
        let first_start = values.first().map_or(name_token.end, |t| t.start);
        self.edit(
            name_token.start..first_start,
            format!("macro {values_macro}(__django_i) %}}{{% if __django_i == 0 %}}{{{{ "),
        );
        let mut previous_end = None;
        for (index, part) in parts.iter().enumerate() {
            let tokens = values.get(part.clone()).unwrap_or_default();
            if let (Some(end), Some(first)) = (previous_end, tokens.first()) {
                self.edit(
                    end..first.start,
                    format!(" }}}}{{% elif __django_i == {index} %}}{{{{ "),
                );
            }
            self.expression(tokens, false)?;
            previous_end = tokens.last().map(|t| t.end);
        }
        let end = values.last().map_or(name_token.end, |t| t.end);
        let last = args.last().map_or(end, |t| t.end);
        self.edit(
            end..as_token.start,
            format!(
                " }}}}{{% endif %}}{{% endmacro %}}{{% set {name_text} = __django_cycle_as({id}, {}, {values_macro}, {})",
                silent.is_some(),
                parts.len()
            ),
        );
        self.edit(as_token.start..last, "");
        if silent.is_none() {
            // Printed right after, by the name.
            let (_, close) = dashes(tag);
            let close_at = tag.span.end - 2 - close.len();
            self.edit(
                close_at..tag.span.end,
                format!("%}}{{{{ {name_text} {close}}}}}"),
            );
        }
        Ok(())
    }

    /// `{% now "layout" [fake] %}`.
    pub(super) fn now(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        args: &[Token],
    ) -> Result<(), TemplateError> {
        let format = args.first().filter(|t| t.kind == Kind::Str);
        let fake = args.get(1).filter(|t| self.is_ident(Some(t), "fake"));
        let valid = format.is_some() && args.len() == 1 + usize::from(fake.is_some());
        if !valid {
            return Err(parse_error(
                tag.span.clone(),
                "{% now %} takes a layout string: {% now \"2006-01-02\" %}",
            ));
        }
        if let Some(fake) = fake.copied() {
            self.edit(fake.start..fake.end, "true");
            if let Some(format) = format {
                self.insert(format.end, ",");
            }
        }
        self.edit(tag.span.start..tag.span.start + 2, "{{");
        let first_start = args.first().map_or(name_token.end, |t| t.start);
        self.edit(name_token.start..first_start, "__django_now(");
        let end = args.last().map_or(name_token.end, |t| t.end);
        self.insert(end, ")");
        self.edit(tag.span.end - 2..tag.span.end, "}}");
        Ok(())
    }

    /// `{% widthratio value max width [as name] %}`.
    pub(super) fn widthratio(
        &mut self,
        tag: &Tag,
        name_token: &Token,
        args: &[Token],
    ) -> Result<(), TemplateError> {
        let as_at = args.iter().position(|t| self.is_ident(Some(t), "as"));
        let values = args.get(..as_at.unwrap_or(args.len())).unwrap_or_default();
        let parts = split_expressions(self, values);
        if parts.len() != 3 {
            return Err(parse_error(
                tag.span.clone(),
                "{% widthratio %} takes three values: {% widthratio value max width %}",
            ));
        }
        let Some(as_at) = as_at else {
            return self.as_output(tag, name_token, "__django_widthratio", "", values, &parts);
        };
        let (Some(as_token), Some(name)) = (
            args.get(as_at),
            args.get(as_at + 1)
                .filter(|t| t.kind == Kind::Ident && as_at + 2 == args.len()),
        ) else {
            return Err(parse_error(
                tag.span.clone(),
                "{% widthratio … as name %} needs one name after `as`",
            ));
        };
        let name_text = self.text(name).to_string();
        let first_start = values.first().map_or(name_token.end, |t| t.start);
        self.edit(
            name_token.start..first_start,
            format!("set {name_text} = __django_widthratio("),
        );
        self.arguments(values, &parts)?;
        let end = values.last().map_or(name_token.end, |t| t.end);
        self.edit(end..end, ")");
        self.edit(as_token.start..name.end, "");
        Ok(())
    }

    /// `{% ifchanged a b %}` → `{% if loop.changed(a, b) %}`; without
    /// values, the body is captured and compared.
    pub(super) fn ifchanged(&mut self, tag: &Tag, args: &[Token]) -> Result<(), TemplateError> {
        if !self.open.iter().any(|o| o.name == "for") {
            return Err(parse_error(
                tag.span.clone(),
                "{% ifchanged %} belongs inside a {% for %}",
            ));
        }
        self.push("ifchanged", tag)?;
        let Some(name_token) = tag.tokens.first().copied() else {
            return Ok(());
        };
        if args.is_empty() {
            if let Some(open) = self.open.last_mut() {
                open.captures = true;
            }
            let n = self.captures;
            self.edit(
                name_token.start..name_token.end,
                format!("set __django_changed_{n}"),
            );
            return Ok(());
        }
        let parts = split_expressions(self, args);
        let first_start = args.first().map_or(name_token.end, |t| t.start);
        self.edit(name_token.start..first_start, "if loop.changed(");
        self.arguments(args, &parts)?;
        let end = args.last().map_or(name_token.end, |t| t.end);
        self.insert(end, ")");
        Ok(())
    }
}

//! Block tags: `block` dispatches one `{% … %}` by its name, `push` and
//! `end_tag` match a block with its end, and the blocks whose inside is
//! not translated (`{% verbatim %}`, `{% comment %}`) find their end tag.

use std::ops::Range;

use super::scan::split_expressions;
use super::{
    dashes, end_name, parse_error, template_tag, Kind, MacroSource, Open, Tag, Token, Translator,
    BLOCKS, MAX_DEPTH,
};
use crate::diagnostics::TemplateError;

impl Translator<'_> {
    /// Translates one `{% … %}`; returns where scanning goes on.
    pub(super) fn block(&mut self, tag: Tag) -> Result<usize, TemplateError> {
        let Some(name_token) = tag.tokens.first().copied() else {
            return Err(parse_error(tag.span.clone(), "this tag has no name")
                .suggest(Some("write a tag such as {% if … %} or {% for … %}".into())));
        };
        let name = self.text(&name_token);
        let args = tag.tokens.get(1..).unwrap_or_default();
        let name_span = name_token.start..name_token.end;
        let after = tag.span.end;
        match name {
            "for" => {
                self.push("for", &tag)?;
                let targets: Vec<String> = args
                    .iter()
                    .take_while(|t| !self.is_ident(Some(t), "in"))
                    .filter(|t| t.kind == Kind::Ident)
                    .map(|t| self.text(t).to_string())
                    .collect();
                if let Some(open) = self.open.last_mut() {
                    open.targets = targets;
                }
                self.for_tag(&tag, args)?;
            }
            "empty" => {
                if self.open.last().map(|o| o.name) != Some("for") {
                    return Err(parse_error(
                        tag.span.clone(),
                        "{% empty %} belongs inside a {% for %}",
                    ));
                }
                self.edit(name_span, "else");
            }
            "if" => {
                self.push("if", &tag)?;
                self.expression(args, false)?;
            }
            "elif" => self.expression(args, false)?,
            "else" => {
                if self.open.last().is_some_and(|o| o.captures) {
                    return Err(parse_error(
                        tag.span.clone(),
                        "{% ifchanged %} without values has no {% else %} here",
                    )
                    .suggest(Some(
                        "name the values it compares: {% ifchanged item.day %}".into(),
                    )));
                }
            }
            "ifequal" | "ifnotequal" => {
                let block = if name == "ifequal" {
                    "ifequal"
                } else {
                    "ifnotequal"
                };
                self.push(block, &tag)?;
                let parts = split_expressions(self, args);
                let [first, second] = parts.as_slice() else {
                    return Err(parse_error(
                        tag.span.clone(),
                        format!(
                            "{{% {name} %}} takes two values to compare, found {}",
                            parts.len()
                        ),
                    )
                    .suggest(Some(format!("write {{% {name} a b %}}"))));
                };
                self.edit(name_span, "if");
                let op = if name == "ifequal" { " ==" } else { " !=" };
                let first_end = args.get(first.end - 1).map_or(name_token.end, |t| t.end);
                self.insert(first_end, op);
                self.expression(args.get(first.clone()).unwrap_or_default(), false)?;
                self.expression(args.get(second.clone()).unwrap_or_default(), false)?;
            }
            "ifchanged" => self.ifchanged(&tag, args)?,
            "with" => {
                self.push("with", &tag)?;
                self.with_tag(&tag, args)?;
            }
            "firstof" => {
                let parts = split_expressions(self, args);
                if parts.is_empty() {
                    return Err(parse_error(
                        tag.span.clone(),
                        "{% firstof %} needs values to choose from",
                    ));
                }
                self.as_output(&tag, &name_token, "__django_firstof", "", args, &parts)?;
            }
            "cycle" => self.cycle(&tag, &name_token, args)?,
            "now" => self.now(&tag, &name_token, args)?,
            "widthratio" => self.widthratio(&tag, &name_token, args)?,
            "spaceless" => {
                self.push("spaceless", &tag)?;
                if let Some(extra) = args.first() {
                    return Err(parse_error(
                        extra.start..extra.end,
                        "{% spaceless %} takes no arguments",
                    ));
                }
                self.edit(name_span, "filter __django_spaceless");
            }
            "filter" => {
                self.push("filter", &tag)?;
                self.expression(args, true)?;
            }
            "autoescape" => {
                self.push("autoescape", &tag)?;
                match args.first().map(|t| self.text(t)) {
                    Some("on") | Some("off") if args.len() == 1 => {
                        let token = args.first().copied().unwrap_or(name_token);
                        let mode = if self.text(&token) == "on" {
                            "true"
                        } else {
                            "false"
                        };
                        self.edit(token.start..token.end, mode);
                    }
                    _ => {
                        return Err(parse_error(
                            tag.span.clone(),
                            "{% autoescape %} takes on or off",
                        )
                        .suggest(Some("write {% autoescape off %}".into())))
                    }
                }
            }
            "block" | "macro" => {
                self.push(if name == "block" { "block" } else { "macro" }, &tag)?;
                if name == "block" {
                    self.open_block(&tag, args);
                } else if let (Some(first), Some(open)) = (args.first(), self.open.last_mut()) {
                    open.name_at = Some(first.start..first.end);
                }
                // pongo2's `{% macro name(…) export %}`: exporting means
                // nothing within one file.
                if let Some(last) = args.last().filter(|t| self.is_ident(Some(t), "export")) {
                    if args.len() > 1 {
                        self.edit(last.start..last.end, "");
                        if let Some(macro_name) = args.first().filter(|_| name == "macro") {
                            self.exports.insert(self.text(macro_name).to_string());
                        }
                    }
                }
                self.expression(args, false)?;
            }
            "verbatim" => return self.verbatim(&tag, &name_token),
            // Jinja's own raw block: its text is left alone.
            "raw" => {
                return Ok(self
                    .find_end_tag(tag.span.end, "endraw")
                    .map_or(after, |(end_tag, _)| end_tag.end))
            }
            "comment" => return self.comment(&tag),
            "templatetag" => {
                let text = args
                    .first()
                    .filter(|_| args.len() == 1)
                    .and_then(|t| template_tag(self.text(t)));
                let Some(text) = text else {
                    return Err(parse_error(
                        tag.span.clone(),
                        "{% templatetag %} takes one of openblock, closeblock, openvariable, closevariable, openbrace, closebrace, opencomment, closecomment",
                    ));
                };
                let (open, close) = dashes(&tag);
                self.edit(tag.span.clone(), format!("{{{{{open} {text:?} {close}}}}}"));
            }
            "lorem" => {
                return Err(parse_error(
                    name_span,
                    "{% lorem %} is not supported: a prompt should hold real text",
                ))
            }
            "include" => self.include(&tag, &name_token, args)?,
            "import" => self.import(&tag, &name_token, args)?,
            "ssi" => self.ssi(&tag, &name_token, args)?,
            "extends" => self.extends(&tag, args)?,
            "set" => {
                self.expression(args, false)?;
                self.keep_set(&tag, args);
            }
            end if end.starts_with("end") => self.end_tag(&tag, &name_token)?,
            _ => self.expression(args, false)?,
        }
        Ok(after)
    }

    pub(super) fn push(&mut self, name: &'static str, tag: &Tag) -> Result<(), TemplateError> {
        if self.open.len() >= MAX_DEPTH {
            return Err(parse_error(
                tag.span.clone(),
                format!("blocks are nested more than {MAX_DEPTH} deep"),
            ));
        }
        self.open.push(Open {
            name,
            span: tag.span.clone(),
            captures: false,
            kept_as: None,
            targets: Vec::new(),
            kept_names: Vec::new(),
            name_at: None,
        });
        Ok(())
    }

    pub(super) fn end_tag(&mut self, tag: &Tag, name_token: &Token) -> Result<(), TemplateError> {
        let name = self.text(name_token);
        let Some(block) = name.strip_prefix("end") else {
            return Ok(());
        };
        if !BLOCKS.contains(&block) {
            // Not a block this dialect has: minijinja reports it.
            return Ok(());
        }
        let Some(open) = self.open.pop() else {
            return Err(parse_error(
                tag.span.clone(),
                format!("{{% {name} %}} closes no {{% {block} %}}"),
            )
            .suggest(Some("remove it, or open the block before it".into())));
        };
        if open.name != block {
            let expected = end_name(open.name);
            return Err(parse_error(
                tag.span.clone(),
                format!("{{% {name} %}} found where {{% {expected} %}} was expected"),
            )
            .suggest(Some(format!(
                "close the {} first with {{% {expected} %}}",
                open.name
            )))
            .with_label(format!("this does not close the {}", open.name))
            .with_secondary(open.span, format!("the {} opened here", open.name)));
        }
        let span = name_token.start..name_token.end;
        match block {
            "ifequal" | "ifnotequal" => self.edit(span, "endif"),
            "spaceless" => self.edit(span, "endfilter"),
            "ifchanged" if open.captures => {
                let n = self.captures;
                self.captures += 1;
                let (_, close) = dashes(tag);
                // `{% endset %}{% if loop.changed(x) %}{{ x }}{% endif %}`,
                // the last tag keeping the author's closing dash.
                self.edit(
                    span.start..tag.span.end,
                    format!(
                        "endset %}}{{% if loop.changed(__django_changed_{n}) %}}{{{{ __django_changed_{n} }}}}{{% endif {close}%}}"
                    ),
                );
            }
            "ifchanged" => self.edit(span, "endif"),
            "for" => self.keep_between_passes(&open),
            "macro" if self.open.is_empty() => {
                if let Some(name_at) = open.name_at.clone() {
                    self.macros.push(MacroSource {
                        name: self
                            .body
                            .get(name_at.clone())
                            .unwrap_or_default()
                            .to_string(),
                        name_at,
                        span: open.span.start..tag.span.end,
                    });
                }
            }
            "block" => {
                self.keep_after_block(&open, tag);
                if let (false, Some(name)) = (self.extends, open.targets.first()) {
                    self.block_ends.push((name.clone(), tag.span.end));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `{% verbatim %}…{% endverbatim %}` → `{% raw %}…{% endraw %}`.
    pub(super) fn verbatim(
        &mut self,
        tag: &Tag,
        name_token: &Token,
    ) -> Result<usize, TemplateError> {
        let Some((end_tag, end_name)) = self.find_end_tag(tag.span.end, "endverbatim") else {
            return Err(parse_error(
                tag.span.clone(),
                "unexpected end of template: this verbatim has no {% endverbatim %}",
            )
            .suggest(Some("add {% endverbatim %} where it should end".into()))
            .with_label("this verbatim is never closed")
            .with_secondary(self.body.len()..self.body.len(), "the template ends here"));
        };
        self.edit(name_token.start..name_token.end, "raw");
        self.edit(end_name, "endraw");
        Ok(end_tag.end)
    }

    /// `{% comment %}…{% endcomment %}` → one `{# #}` with the same dashes.
    pub(super) fn comment(&mut self, tag: &Tag) -> Result<usize, TemplateError> {
        let Some((end_tag, _)) = self.find_end_tag(tag.span.end, "endcomment") else {
            return Err(parse_error(
                tag.span.clone(),
                "unexpected end of template: this comment has no {% endcomment %}",
            )
            .suggest(Some("add {% endcomment %} where it should end".into()))
            .with_label("this comment is never closed")
            .with_secondary(self.body.len()..self.body.len(), "the template ends here"));
        };
        let open = if tag.open_dash { "-" } else { "" };
        let close = if self
            .body
            .get(end_tag.clone())
            .is_some_and(|t| t.ends_with("-%}"))
        {
            "-"
        } else {
            ""
        };
        self.edit(tag.span.start..end_tag.end, format!("{{#{open} {close}#}}"));
        Ok(end_tag.end)
    }

    /// The first `{% NAME %}` (dashes allowed) from `from`: the tag's span
    /// and the name's span.
    pub(super) fn find_end_tag(
        &self,
        from: usize,
        name: &str,
    ) -> Option<(Range<usize>, Range<usize>)> {
        let body = self.body;
        let mut at = from;
        while let Some(found) = body.get(at..)?.find("{%") {
            let start = at + found;
            let mut i = start + 2;
            let rest = body.get(i..)?;
            let trimmed = rest.trim_start_matches('-').trim_start();
            i += rest.len() - trimmed.len();
            if let Some(after) = trimmed.strip_prefix(name) {
                let name_span = i..i + name.len();
                let tail = after.trim_start();
                let tail = tail.strip_prefix('-').unwrap_or(tail);
                if tail.starts_with("%}") {
                    let end = body.len() - tail.len() + 2;
                    return Some((start..end, name_span));
                }
            }
            at = start + 2;
        }
        None
    }
}

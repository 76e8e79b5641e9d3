//! Dotprompt's helpers in a `.prompt` file's Handlebars body, rewritten
//! into teleprompt's before lowering: `{{role "system"}}`, `"user"`,
//! `"model"` (teleprompt's `assistant`); `{{history}}`; `{{media url=…
//! contentType=…}}` (or positional); data variables other than
//! Handlebars' own (`@state`, `@auth`, …) read the host's render context
//! ([`crate::RenderOptions::context`]); `{{section "name"}}`, a part
//! Genkit fills (output instructions, context documents), becomes
//! teleprompt's hidden section helper, which leaves a
//! [`crate::messages::ContentPart::Section`] in the message. The file
//! format itself is read in `load/formats/dotprompt.rs`.

use super::ast::{Call, Expr, HashPair, Ident, Node, Path, Tree};
use crate::diagnostics::{closest, TemplateError};
use crate::engine::flavor::handlebars::{MEDIA_TYPE, SECTION};

/// The key of the data layer that holds the host's render context: a
/// private-use character, so no ordinary data key collides with it.
pub(crate) const CONTEXT_KEY: &str = "\u{E000}dotprompt-context";

/// Handlebars' own data variables, which keep their meaning.
const HANDLEBARS_DATA: [&str; 5] = ["root", "key", "index", "first", "last"];

/// The role names a Dotprompt template may write.
const ROLES: [&str; 3] = ["system", "user", "model"];

/// Rewrites Dotprompt's helpers into teleprompt's: role names, the hash
/// form of `media`, `section`, context data variables.
pub(crate) fn rewrite(tree: &mut Tree) -> Result<(), TemplateError> {
    nodes(&mut tree.nodes)
}

fn nodes(list: &mut [Node]) -> Result<(), TemplateError> {
    for node in list {
        match node {
            Node::Mustache(mustache) => {
                helper(&mut mustache.call)?;
                call(&mut mustache.call)?;
            }
            Node::Block(block) => {
                if let Some(name) = helper_name(&block.call) {
                    if matches!(name, "role" | "history" | "media" | "section") {
                        return Err(TemplateError::parse(
                            Some(block.open.clone()),
                            format!("{name} is not a block helper: write {{{{{name} …}}}}"),
                        ));
                    }
                }
                call(&mut block.call)?;
                nodes(&mut block.body)?;
                if let Some(inverse) = &mut block.inverse {
                    nodes(inverse)?;
                }
            }
            Node::Partial(partial) => {
                if let Some(context) = &mut partial.context {
                    expr(context)?;
                }
                for pair in &mut partial.hash {
                    expr(&mut pair.value)?;
                }
                if let Some(block) = &mut partial.block {
                    nodes(block)?;
                }
                if let Some(dynamic) = &mut partial.dynamic {
                    expr(dynamic)?;
                }
            }
            Node::Inline(inline) => nodes(&mut inline.body)?,
            Node::Text(_) | Node::Comment(_) => {}
        }
    }
    Ok(())
}

/// The helper a call names (`{{role …}}`), if its head is a plain name.
fn helper_name(call: &Call) -> Option<&str> {
    match &call.head {
        Expr::Path(path) if !path.data && path.parents == 0 && !path.explicit => {
            match path.parts.as_slice() {
                [name] => Some(name.name.as_str()),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Dotprompt's message helpers, rewritten into teleprompt's.
fn helper(call: &mut Call) -> Result<(), TemplateError> {
    match helper_name(call) {
        Some("role") => role(call),
        Some("media") => media(call),
        Some("section") => {
            if call.params.len() != 1 || !call.hash.is_empty() {
                return Err(TemplateError::parse(
                    Some(call.span.clone()),
                    "{{section}} takes one name: write {{section \"output\"}}",
                ));
            }
            if let Expr::Path(path) = &mut call.head {
                if let [name] = path.parts.as_mut_slice() {
                    name.name = SECTION.to_string();
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `{{role "model"}}` is teleprompt's `assistant`; a quoted name that is
/// not a Dotprompt role is a parse error.
fn role(call: &mut Call) -> Result<(), TemplateError> {
    let [Expr::String(name, span)] = call.params.as_mut_slice() else {
        // A role that is not a literal is refused by the general check
        // (`builtin_types::role_not_literal`).
        return Ok(());
    };
    match name.as_str() {
        "model" => *name = "assistant".to_string(),
        "system" | "user" | "assistant" => {}
        other => {
            return Err(TemplateError::parse(
                Some(span.clone()),
                format!("unknown role \"{other}\": Dotprompt's roles are \"system\", \"user\" and \"model\""),
            )
            .suggest(closest(other, ROLES).map(|near| format!("did you mean \"{near}\"?"))))
        }
    }
    Ok(())
}

/// `{{media url=… contentType=…}}` becomes `{{media url contentType}}`.
fn media(call: &mut Call) -> Result<(), TemplateError> {
    if call.hash.is_empty() {
        // Positional: teleprompt's own form, checked as usual.
        return Ok(());
    }
    if !call.params.is_empty() {
        return Err(TemplateError::parse(
            Some(call.span.clone()),
            "{{media}} takes url=… contentType=…, or two positional arguments, not both",
        ));
    }
    let mut url = None;
    let mut content_type = None;
    for HashPair { key, value, span } in std::mem::take(&mut call.hash) {
        match key.as_str() {
            "url" => url = Some(value),
            "contentType" => content_type = Some(value),
            other => {
                return Err(TemplateError::parse(
                    Some(span),
                    format!("{{{{media}}}} takes url= and contentType=, not {other}="),
                )
                .suggest(
                    closest(other, ["url", "contentType"])
                        .map(|near| format!("did you mean \"{near}\"?")),
                ))
            }
        }
    }
    let Some(url) = url else {
        return Err(TemplateError::parse(
            Some(call.span.clone()),
            "{{media}} needs a url=…",
        ));
    };
    // Without a contentType, the type the URL names (a `data:` URL's, or
    // its extension's; else application/octet-stream).
    let content_type = content_type.unwrap_or_else(|| {
        let span = url.span();
        Expr::Sub(Box::new(Call {
            head: Expr::Path(Path {
                data: false,
                parents: 0,
                explicit: false,
                parts: vec![Ident {
                    name: MEDIA_TYPE.to_string(),
                    span: span.clone(),
                }],
                span: span.clone(),
            }),
            params: vec![url.clone()],
            hash: Vec::new(),
            span,
        }))
    });
    call.params = vec![url, content_type];
    Ok(())
}

fn call(call: &mut Call) -> Result<(), TemplateError> {
    expr(&mut call.head)?;
    for param in &mut call.params {
        expr(param)?;
    }
    for pair in &mut call.hash {
        expr(&mut pair.value)?;
    }
    Ok(())
}

fn expr(expr: &mut Expr) -> Result<(), TemplateError> {
    match expr {
        Expr::Path(path) => {
            context_variable(path);
            Ok(())
        }
        Expr::Sub(sub) => {
            helper(sub)?;
            call(sub)
        }
        Expr::String(..) | Expr::Number(..) | Expr::Bool(..) | Expr::Null(_) => Ok(()),
    }
}

/// `@state.x` reads `x` of the host's context `state`: the path becomes
/// `@root.<context>.state.x`.
fn context_variable(path: &mut Path) {
    let is_context = path.data
        && path.parents == 0
        && path
            .parts
            .first()
            .is_some_and(|first| !HANDLEBARS_DATA.contains(&first.name.as_str()));
    if !is_context {
        return;
    }
    let at = path.span.start..path.span.start;
    let mut parts = Vec::with_capacity(path.parts.len() + 2);
    parts.push(Ident {
        name: "root".to_string(),
        span: at.clone(),
    });
    parts.push(Ident {
        name: CONTEXT_KEY.to_string(),
        span: at,
    });
    parts.append(&mut path.parts);
    path.parts = parts;
}

#[cfg(test)]
mod tests {
    use crate::{options::LoadOptions, prompt::Prompt};

    #[test]
    fn broken_templates_are_errors_never_panics() {
        for body in [
            "{{role}}",
            "{{role \"model\" \"user\"}}",
            "{{role \"\"}}",
            "{{role 7}}",
            "{{#role \"user\"}}x{{/role}}",
            "{{media}}",
            "{{media url=}}",
            "{{media url=\"u\"}}",
            "{{media \"u\" contentType=\"t\"}}",
            "{{media url=\"u\" contentType=\"t\" alt=\"a\"}}",
            "{{media url=\"\" contentType=\"image/png\"}}",
            "{{section}}",
            "{{section \"x\"}}",
            "{{@}}",
            "{{@state}}",
            "{{@../state}}",
            "{{@state.a.b.c}}",
            "{{> }}",
            "{{> x}}",
            "{{#*inline \"x\"}}{{@auth}}{{/inline}}{{> x}}",
            "{{#each @state.list}}{{@index}}{{@state.a}}{{/each}}",
            "{{history}}{{history}}",
            "{{{{raw}}}}{{role \"x\"}}{{{{/raw}}}}",
            "\u{E000}\u{E001}{{role \"user\"}}",
        ] {
            let source = format!("---\nmodel: m\n---\n{body}");
            if let Ok(prompt) = Prompt::from_source("t.prompt", &source, &LoadOptions::default()) {
                let _ = prompt.render(serde_json::json!({"state": {"list": [1]}}));
            }
        }
    }

    #[test]
    fn role_names_are_dotprompt_s() {
        let load = |body: &str| {
            let source = format!("---\nmodel: m\n---\n{body}");
            Prompt::from_source("t.prompt", &source, &LoadOptions::default())
        };
        assert!(load("{{role \"model\"}}hi").is_ok());
        let error = load("{{role \"tool\"}}hi").map(drop).expect_err("tool");
        assert!(
            error.to_string().contains("unknown role \"tool\""),
            "{error}"
        );
    }
}

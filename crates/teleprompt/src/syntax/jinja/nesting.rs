//! A bound on how deep a Jinja template's expressions and `elif` chains
//! nest, checked on the tokens before minijinja parses them.
//!
//! minijinja's parser bounds nested brackets and blocks, but a chain of
//! filters (`x|abs|abs…`), attributes (`a.b.b…`), operators (`1+1+…`,
//! `not not …`) or `elif` branches becomes an equally deep tree, which its
//! code generator (and teleprompt's own checks) then walk recursively: tens
//! of thousands of links overflow the stack and abort the process. Real
//! templates stay far below the bounds here; a template beyond them is a
//! `parse` error at the tag, not a crash.

use minijinja::machinery::{tokenize, Token};
use minijinja::syntax::SyntaxConfig;

use crate::diagnostics::TemplateError;

/// Checks `text` against the nesting bound `max_nesting`
/// ([`crate::limits::Limits::max_nesting`]): an expression may nest twice
/// that deep (filters, attributes, operators and brackets along one path
/// of it: a chain counts each link), an `if` may have five times that many
/// `elif` branches. Lexer errors are left for the parser to report.
pub(crate) fn check(
    text: &str,
    syntax: SyntaxConfig,
    max_nesting: usize,
) -> Result<(), TemplateError> {
    let max_depth = max_nesting.saturating_mul(2);
    let max_elif = max_nesting.saturating_mul(5);
    // Depth at the cursor inside the current tag, and the depth at each
    // open bracket.
    let mut depth = 0usize;
    let mut brackets: Vec<usize> = Vec::new();
    let mut tag_start = None;
    // The first word of a block tag comes right after its start.
    let mut first_word = false;
    // `elif` branches of each open `if`.
    let mut ifs: Vec<usize> = Vec::new();
    for item in tokenize(text, false, syntax) {
        let Ok((token, span)) = item else {
            return Ok(());
        };
        let range = span.start_offset as usize..span.end_offset as usize;
        match token {
            Token::VariableStart | Token::BlockStart => {
                depth = 0;
                brackets.clear();
                tag_start = Some(range.start);
                first_word = matches!(token, Token::BlockStart);
                continue;
            }
            Token::VariableEnd | Token::BlockEnd => {
                tag_start = None;
            }
            Token::Ident(word) if first_word => match word {
                "if" => ifs.push(0),
                "endif" => {
                    ifs.pop();
                }
                "elif" => {
                    if let Some(count) = ifs.last_mut() {
                        *count += 1;
                        if *count > max_elif {
                            return Err(TemplateError::parse(
                                Some(range),
                                format!(
                                    "an if has more than {max_elif} elif branches (5 × the limit max_nesting)"
                                ),
                            )
                            .suggest(Some(
                                "look the value up in a mapping instead of testing it branch by branch"
                                    .to_string(),
                            )));
                        }
                    }
                }
                _ => {}
            },
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => {
                brackets.push(depth);
                depth += 1;
            }
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                depth = brackets.pop().map_or(0, |outer| outer + 1);
            }
            Token::Comma | Token::Colon => {
                depth = brackets.last().map_or(0, |outer| outer + 1);
            }
            Token::Pipe
            | Token::Dot
            | Token::Plus
            | Token::Minus
            | Token::Mul
            | Token::Div
            | Token::FloorDiv
            | Token::Pow
            | Token::Mod
            | Token::Tilde
            | Token::Eq
            | Token::Ne
            | Token::Gt
            | Token::Gte
            | Token::Lt
            | Token::Lte => depth += 1,
            Token::Ident("not" | "and" | "or" | "is" | "in" | "if" | "else") => depth += 1,
            _ => {}
        }
        first_word = false;
        if depth > max_depth {
            return Err(TemplateError::parse(
                Some(tag_start.unwrap_or(range.start)..range.end),
                format!(
                    "this expression nests more than {max_depth} deep (filters, attributes, operators and brackets; 2 × the limit max_nesting)"
                ),
            )
            .suggest(Some(
                "split it: keep a part in a variable with {% set %}".to_string(),
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NESTING: usize = crate::limits::Limits::DEFAULT.max_nesting;

    fn checked(text: &str) -> Result<(), String> {
        check(text, SyntaxConfig::default(), NESTING).map_err(|error| error.message)
    }

    #[test]
    fn ordinary_templates_pass() {
        let many_items: String = (0..2000)
            .map(|i| format!("{{\"k{i}\": x.y | default(1) + 2}}, "))
            .collect();
        assert_eq!(checked(&format!("{{% set l = [{many_items}] %}}")), Ok(()));
        let elifs = "{% elif x %}b".repeat(NESTING * 5);
        assert_eq!(
            checked(&format!("{{% if x %}}a{elifs}{{% endif %}}")),
            Ok(())
        );
        // Each if counts its own branches.
        let block = format!("{{% if x %}}a{elifs}{{% endif %}}");
        assert_eq!(checked(&block.repeat(3)), Ok(()));
        assert_eq!(
            checked("{{ messages[0]['content'] | trim | replace('a', 'b') ~ x.y }}"),
            Ok(())
        );
    }

    #[test]
    fn long_chains_are_refused() {
        for text in [
            format!("{{{{ 1{} }}}}", "|abs".repeat(NESTING * 2 + 1)),
            format!("{{{{ a{} }}}}", ".b".repeat(NESTING * 2 + 1)),
            format!("{{{{ {} 1 }}}}", "not ".repeat(NESTING * 2 + 1)),
            format!("{{{{ 1{} }}}}", "+1".repeat(NESTING * 2 + 1)),
            format!("{{% set x = 1{} %}}", "~1".repeat(NESTING * 2 + 1)),
        ] {
            let error = checked(&text).expect_err("too deep");
            assert!(error.contains("nests more than"), "{error}");
        }
        let elifs = "{% elif x %}b".repeat(NESTING * 5 + 1);
        let error = checked(&format!("{{% if x %}}a{elifs}{{% endif %}}")).expect_err("too many");
        assert!(error.contains("elif branches"), "{error}");
    }
}

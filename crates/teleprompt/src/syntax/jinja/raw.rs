//! `{% raw %}` under `trim_blocks`, as Jinja2 has it: Jinja2 removes the
//! newline after a block tag, but not after `{% raw %}` (its lexer reads
//! the raw block's text whole, from the tag's end); minijinja removes it
//! there too. Before compiling, each `{% raw %}` whose newline minijinja
//! would remove gets one more, which it removes instead.

use minijinja::machinery::{self, Token};

use crate::syntax::edits::Edit;

/// The edits that keep the newline after each `{% raw %}` of `body` (with
/// `syntax`, which has `trim_blocks`): a copy of the newline, after the tag.
pub(super) fn keep_newline_after_raw(
    body: &str,
    syntax: minijinja::syntax::SyntaxConfig,
) -> Vec<Edit> {
    let mut edits = Vec::new();
    if !body.contains("raw") {
        return edits;
    }
    let mut after_block_end = false;
    for (token, span) in machinery::tokenize(body, false, syntax).map_while(Result::ok) {
        let start = span.start_offset as usize;
        // A raw block is template data that does not follow a tag's end
        // (minijinja gives the tag itself no token).
        if let (Token::TemplateData(_), false) = (&token, after_block_end) {
            if let Some((tag_end, newline)) = trimmed_raw_newline(body, start) {
                edits.push(Edit {
                    original: tag_end..tag_end,
                    replacement: newline.to_string(),
                });
            }
        }
        after_block_end = matches!(token, Token::BlockEnd | Token::VariableEnd);
    }
    edits
}

/// Where the `{% raw %}` tag ends and the newline after it that was
/// removed, when the text at `start` follows one that way.
fn trimmed_raw_newline(body: &str, start: usize) -> Option<(usize, &'static str)> {
    let before = body.get(..start)?;
    let (rest, newline) = if let Some(rest) = before.strip_suffix("\r\n") {
        (rest, "\r\n")
    } else {
        (before.strip_suffix('\n')?, "\n")
    };
    let tag = rest.strip_suffix("%}")?;
    // Default whitespace on the right (`-%}` and `+%}` keep their rules).
    if tag.ends_with(['-', '+']) {
        return None;
    }
    let open = tag.rfind("{%")?;
    let inside = tag.get(open + 2..)?;
    let inside = inside.strip_prefix(['-', '+']).unwrap_or(inside);
    (inside.trim() == "raw").then_some((rest.len(), newline))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edits(body: &str) -> Vec<(usize, String)> {
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .unwrap_or_default();
        keep_newline_after_raw(body, syntax)
            .into_iter()
            .map(|edit| (edit.original.start, edit.replacement))
            .collect()
    }

    #[test]
    fn only_after_a_raw_tag_with_default_whitespace() {
        assert_eq!(edits("{% raw %}\nx{% endraw %}"), [(9, "\n".to_string())]);
        assert_eq!(
            edits("{%- raw %}\r\nx{% endraw %}"),
            [(10, "\r\n".to_string())]
        );
        assert!(edits("{% raw -%}\nx{% endraw %}").is_empty());
        assert!(edits("{% if x %}\nraw{% endif %}").is_empty());
        assert!(edits("{% raw %}x\n{% endraw %}\ny").is_empty());
        // A raw tag inside a raw block is text.
        assert!(edits("{% raw %}{% raw %}{% endraw %}\n").is_empty());
    }
}

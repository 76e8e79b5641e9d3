//! `{% section "docs", priority=2, max_tokens=2000 %}…{% endsection %}`,
//! a budget section (the prompt's `budget:` cuts it): rewritten before
//! compiling into a filter block whose filter prints its content between
//! section markers.

use minijinja::machinery;
use minijinja::value::Kwargs;

use super::current;
use super::filters::template_call;
use crate::messages::{SectionSpec, Setting};
use crate::syntax::edits::{Edit, Edited};

/// The filter a `{% section %}` block becomes.
pub(super) const SECTION_FILTER: &str = "teleprompt_section";

/// `{% section ARGS %}…{% endsection %}` as `{% filter
/// teleprompt_section(ARGS) %}…{% endfilter %}`: only the tag names are
/// rewritten (and the arguments closed), so whitespace control and every
/// other position stay as written.
pub(super) fn section_blocks(body: &str, syntax: minijinja::syntax::SyntaxConfig) -> Edited {
    use minijinja::machinery::Token;
    if memchr::memmem::find(body.as_bytes(), b"section").is_none() {
        return Edited::default();
    }
    let mut edits = Vec::new();
    let mut previous_was_block_start = false;
    let mut open_arguments = false;
    for (token, span) in machinery::tokenize(body, false, syntax).map_while(Result::ok) {
        let range = span.start_offset as usize..span.end_offset as usize;
        if previous_was_block_start {
            match token {
                Token::Ident("section") => {
                    edits.push(Edit {
                        original: range.clone(),
                        replacement: format!("filter {SECTION_FILTER}("),
                    });
                    open_arguments = true;
                }
                Token::Ident("endsection") => edits.push(Edit {
                    original: range.clone(),
                    replacement: "endfilter".to_string(),
                }),
                _ => {}
            }
        } else if open_arguments && matches!(token, Token::BlockEnd) {
            edits.push(Edit {
                original: range.start..range.start,
                replacement: ")".to_string(),
            });
            open_arguments = false;
        }
        previous_was_block_start = matches!(token, Token::BlockStart);
    }
    Edited::new(body, edits)
}

/// The filter: `text` between the markers of a section named `name`.
pub(super) fn register(env: &mut minijinja::Environment<'_>) {
    env.add_filter(
        SECTION_FILTER,
        |text: &str, name: &str, kwargs: Kwargs| -> Result<String, minijinja::Error> {
            let mut settings = Vec::new();
            for key in kwargs.args() {
                let value: minijinja::Value = kwargs.get(key)?;
                let setting = match value.kind() {
                    minijinja::value::ValueKind::Bool => Setting::Bool(value.is_true()),
                    minijinja::value::ValueKind::Number => i64::try_from(value.clone()).map_or(
                        Setting::Other("a number that is not whole"),
                        Setting::Integer,
                    ),
                    minijinja::value::ValueKind::Undefined => Setting::Other("an undefined value"),
                    minijinja::value::ValueKind::None => Setting::Other("none"),
                    minijinja::value::ValueKind::String => Setting::Other("a string"),
                    _ => Setting::Other("a list or a map"),
                };
                settings.push((key.to_string(), Some(setting)));
            }
            let spec = SectionSpec::from_settings(name, settings);
            template_call(current::marker("section", |scope| {
                let mut out = scope.section_start(&spec?)?;
                out.push_str(text);
                out.push_str(&scope.section_end());
                Ok(out)
            }))
        },
    );
}

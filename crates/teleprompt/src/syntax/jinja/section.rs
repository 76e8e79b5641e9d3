//! `{% section "docs", priority=2, max_tokens=2000 %}…{% endsection %}`,
//! a budget section (the prompt's `budget:` cuts it): rewritten before
//! compiling into a filter block whose filter prints its content between
//! section markers.

use minijinja::value::Kwargs;

use super::current;
use super::filters::template_call;
use crate::messages::{SectionSpec, Setting};
use crate::syntax::edits::Edited;

/// The filter a `{% section %}` block becomes.
pub(super) const SECTION_FILTER: &str = "teleprompt_section";

/// `{% section ARGS %}…{% endsection %}` as `{% filter
/// teleprompt_section(ARGS) %}…{% endfilter %}`: only the tag names are
/// rewritten (and the arguments closed), so whitespace control and every
/// other position stay as written.
pub(super) fn section_blocks(body: &str, syntax: minijinja::syntax::SyntaxConfig) -> Edited {
    if memchr::memmem::find(body.as_bytes(), b"section").is_none() {
        return Edited::default();
    }
    super::filter_tags::as_filter_blocks(
        body,
        syntax,
        ("section", "endsection"),
        SECTION_FILTER,
        true,
    )
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

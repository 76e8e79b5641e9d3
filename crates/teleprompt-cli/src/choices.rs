//! The value parsers of flags that take one of a set of names: each lists
//! its names (and their aliases), so that `--help`, a usage error and the
//! shell completions show them, and maps the name onto the library's type.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use teleprompt::{OutputFormat, Strictness, Syntax};

/// `--syntax`: jinja, django, chat-template, go, handlebars (and the
/// library's other names for them).
pub fn syntax() -> impl TypedValueParser<Value = Syntax> {
    PossibleValuesParser::new([
        PossibleValue::new("jinja")
            .alias("jinja2")
            .help("Jinja (minijinja, Python's jinja2)"),
        PossibleValue::new("django")
            .alias("pongo2")
            .help("Django templates as pongo2 reads them"),
        PossibleValue::new("chat-template")
            .aliases(["hf", "hf-chat", "transformers"])
            .help("A Hugging Face chat template, as transformers renders it"),
        PossibleValue::new("go")
            .aliases(["gotmpl", "go-template"])
            .help("Go's text/template"),
        PossibleValue::new("handlebars")
            .alias("hbs")
            .help("Handlebars (handlebars.js)"),
    ])
    .try_map(|name| name.parse::<Syntax>())
}

/// `--strict`: strict, semi, lenient.
pub fn strictness() -> impl TypedValueParser<Value = Strictness> {
    PossibleValuesParser::new([
        PossibleValue::new("strict").help("A missing value is an error"),
        PossibleValue::new("semi").help("A missing value tested is false, printed an error"),
        PossibleValue::new("lenient").help("A missing value prints empty"),
    ])
    .try_map(|name| name.parse::<Strictness>())
}

/// The names of the output formats, with `extra` after them.
fn formats(extra: &[&'static str]) -> Vec<PossibleValue> {
    OutputFormat::ALL
        .into_iter()
        .map(|format| PossibleValue::new(format.as_str()))
        .chain(extra.iter().map(|name| PossibleValue::new(*name)))
        .collect()
}

/// `batch --format`: the output formats.
pub fn output_format() -> impl TypedValueParser<Value = OutputFormat> {
    PossibleValuesParser::new(formats(&[])).try_map(|name| {
        name.parse::<OutputFormat>()
            .map_err(|error| error.to_string())
    })
}

/// `render --format`: the output formats and `sourcemap`.
pub fn render_format() -> impl TypedValueParser<Value = crate::RenderFormat> {
    PossibleValuesParser::new(formats(&["sourcemap"])).try_map(|name| match name.as_str() {
        "sourcemap" => Ok(crate::RenderFormat::SourceMap),
        name => name
            .parse::<OutputFormat>()
            .map(crate::RenderFormat::Shape)
            .map_err(|error| error.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name a parser lists is one the library reads.
    #[test]
    fn every_listed_name_parses() {
        let command = clap::Command::new("t");
        let arg = clap::Arg::new("a");
        for value in syntax().possible_values().unwrap() {
            for name in value.get_name_and_aliases() {
                assert!(syntax()
                    .parse_ref(&command, Some(&arg), name.as_ref())
                    .is_ok());
            }
        }
        for value in strictness().possible_values().unwrap() {
            assert!(strictness()
                .parse_ref(&command, Some(&arg), value.get_name().as_ref())
                .is_ok());
        }
        for value in render_format().possible_values().unwrap() {
            assert!(render_format()
                .parse_ref(&command, Some(&arg), value.get_name().as_ref())
                .is_ok());
        }
        assert!(syntax()
            .parse_ref(&command, Some(&arg), "mustache".as_ref())
            .is_err());
    }
}

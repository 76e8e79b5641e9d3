//! Functions templates call: the set every syntax shares (one
//! implementation each, bound to Jinja filters, Go functions and Handlebars
//! helpers by the front ends), and the host's own functions.
//!
//! # Host functions
//!
//! A host passes [`Functions`] in [`LoadOptions::functions`](crate::LoadOptions).
//! Each is registered one of two ways:
//!
//! - **untyped** ([`Functions::with`]): the function takes the arguments as
//!   written, as JSON; named arguments (Jinja's `f(x, depth=2)`,
//!   Handlebars' `{{f x depth=2}}`) arrive as one trailing object.
//! - **with a [`Signature`]** ([`Functions::with_signature`]): parameter
//!   names, [types](ParamType), required or optional with a default, and
//!   descriptions — Semantic Kernel's function metadata. The function takes
//!   [`Args`]: the arguments bound to the parameters and converted.
//!
//! Functions can be grouped in a [`Plugin`] (SK's plugins). Handlebars
//! templates call a plugin's function `{{Plugin-Function …}}`, as SK's
//! Handlebars templates do; the separator is `-` unless the host sets
//! another with [`Functions::with_separator`] (SK's `PrefixSeparator`):
//! any characters a Handlebars name may hold (`_`, `:`, …) or `.`. Go and
//! Jinja names cannot hold `-`, so there the name is always
//! `Plugin_Function` (`{{ Weather_GetForecast "Paris" }}`,
//! `{{ Weather_GetForecast(city="Paris") }}`), the spelling SK's Python
//! Jinja2 templates use.
//!
//! ```
//! use serde_json::json;
//! use teleprompt::functions::{Args, Functions, ParamType, Plugin, Signature};
//! use teleprompt::{LoadOptions, Prompt};
//!
//! let weather = Plugin::new("Weather").with_signature(
//!     "GetForecast",
//!     Signature::new()
//!         .describe("The forecast for a city")
//!         .param("city", ParamType::String)
//!         .optional("days", ParamType::Integer, 1),
//!     |args: &Args| {
//!         let (city, days) = (args.string("city")?, args.integer("days")?);
//!         Ok(json!(format!("{days} sunny day(s) in {city}")))
//!     },
//! );
//! let options = LoadOptions::new().with_functions(Functions::new().with_plugin(weather));
//! let render = |file: &str, source: &str| {
//!     let prompt = Prompt::from_source(file, source, &options)?;
//!     Ok::<_, teleprompt::Error>(prompt.render(json!({}))?.text().to_string())
//! };
//! // Positional, by name, a string converted to the integer parameter:
//! assert_eq!(render("p.hbs", r#"{{Weather-GetForecast "Paris" days="2"}}"#)?, "2 sunny day(s) in Paris");
//! assert_eq!(render("p.j2", r#"{{ Weather_GetForecast(city="Oslo") }}"#)?, "1 sunny day(s) in Oslo");
//! assert_eq!(render("p.gotmpl", r#"{{ Weather_GetForecast "Rome" 3 }}"#)?, "3 sunny day(s) in Rome");
//! // What does not fit the signature is an error naming the parameter,
//! // found when the prompt loads if the template shows it:
//! let error = render("p.hbs", r#"{{Weather-GetForecast days=2}}"#).unwrap_err();
//! assert_eq!(error.message(), "parameter `city` of `Weather-GetForecast` is required");
//! # Ok::<(), teleprompt::Error>(())
//! ```
//!
//! ## Binding (SK's `KernelFunctionHelpers`)
//!
//! - Positional arguments fill the parameters in order; named ones go by
//!   name. Both may be mixed (positional first); a parameter given both
//!   ways is an error, and so is a name the signature does not declare
//!   (with a did-you-mean) and more positional arguments than parameters.
//! - A required parameter no argument gives is an error: "parameter `city`
//!   of `Weather-GetForecast` is required". An optional one not given takes
//!   its default, or has no value ([`Args::get`] is `None`); null given to
//!   an optional parameter counts as not given (SK drops null arguments).
//! - Each value is converted to its parameter's type as SK converts it: a
//!   string `"42"` to an integer, `"4.5"` to a number, `"true"` to a
//!   boolean (the table is on [`ParamType`]). A value that does not convert
//!   is an error naming the parameter, the type and the value:
//!   ``parameter `days` of `Weather-GetForecast` must be an integer, found
//!   the string "two"``.
//! - The same binding applies in every syntax: Go passes positional
//!   arguments only (a pipeline's value is the last), Jinja positional and
//!   keyword arguments (as a filter, the filtered value is the first),
//!   Handlebars positional and hash arguments.
//! - What the template shows is checked when the prompt loads — argument
//!   count, names, and the types of literal arguments (`{{Weather-GetForecast
//!   "Paris" days="two"}}`) — and is a `parse` error at the argument; a value
//!   from the data is checked when rendering, a `render` error at the call.
//! - The function's own error (its `Err`, or a panic) is a render error
//!   "error calling Weather-GetForecast: …".

mod host;
mod signature;

pub(crate) use host::{Failure, Naming};
pub use host::{Function, Functions, HostFunction, Plugin, TypedFunction, DEFAULT_SEPARATOR};
pub(crate) use signature::{ArgAt, BindError};
pub use signature::{Args, Param, ParamType, Signature};

use serde_json::Value;

/// `tojson` / `toJSON`: compact JSON, keys in input order, no HTML escaping.
pub fn to_json(value: &Value) -> String {
    // Serializing a `Value` cannot fail: its keys are strings.
    serde_json::to_string(value).unwrap_or_default()
}

/// `tojson` with an indent (Jinja's `tojson(indent=2)`).
pub fn to_json_pretty(value: &Value, indent: usize) -> String {
    let indent = " ".repeat(indent);
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    match serde::Serialize::serialize(value, &mut serializer) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => to_json(value),
    }
}

/// `join`: the items' text with `separator` between them.
pub fn join<I, S>(separator: &str, items: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        out.push_str(item.as_ref());
    }
    out
}

/// `lower`: Unicode lower case.
pub fn lower(text: &str) -> String {
    text.to_lowercase()
}

/// `upper`: Unicode upper case.
pub fn upper(text: &str) -> String {
    text.to_uppercase()
}

/// Whether [`lower`] (or, with `upper`, [`upper`]) gives `text` back as it
/// is: ASCII text already in that case (a message's role, mostly), which
/// an evaluator need not build again.
pub(crate) fn case_unchanged(text: &str, upper: bool) -> bool {
    text.bytes().all(|b| {
        b.is_ascii()
            && match upper {
                true => !b.is_ascii_lowercase(),
                false => !b.is_ascii_uppercase(),
            }
    })
}

/// `trim`: without leading and trailing whitespace.
pub fn trim(text: &str) -> String {
    text.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shared_functions() {
        assert_eq!(
            to_json(&json!({"b": 1, "a": "<x>"})),
            r#"{"b":1,"a":"<x>"}"#
        );
        assert_eq!(to_json_pretty(&json!([1]), 2), "[\n  1\n]");
        assert_eq!(join(", ", ["a", "b"]), "a, b");
        assert_eq!(lower("ÀB"), "àb");
        assert_eq!(upper("àb"), "ÀB");
        assert_eq!(trim("  x \n"), "x");
    }

    #[test]
    fn a_text_is_unchanged_only_where_the_case_change_gives_it_back() {
        // Kelvin sign and dotted capital I lower to ASCII; ß upper-cases
        // to two letters: none of them is left as it is.
        let texts = [
            "", "user", "User", "USER", "a-b_1 ", "\u{212a}", "\u{130}", "ß", "é", "tool\n",
        ];
        for text in texts {
            if case_unchanged(text, false) {
                assert_eq!(lower(text), text, "{text:?}");
            }
            if case_unchanged(text, true) {
                assert_eq!(upper(text), text, "{text:?}");
            }
        }
        assert!(case_unchanged("user", false) && case_unchanged("USER", true));
        assert!(!case_unchanged("User", false) && !case_unchanged("User", true));
        assert!(!case_unchanged("\u{212a}", false) && !case_unchanged("é", false));
    }
}

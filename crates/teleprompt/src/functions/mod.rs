//! The function set every syntax shares: one implementation each, bound to
//! Jinja filters, Go functions and Handlebars helpers by the front ends.

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
}

/// A function the host registers: it takes the template's arguments as
/// JSON values and returns a JSON value, or an error message.
pub type HostFunction = dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync;

/// Functions a host makes callable from templates by name (Semantic
/// Kernel's plugin functions, Sortie's FuncMap additions).
///
/// In Go syntax a host function is called like a built-in (`{{ fetch .id }}`,
/// also in pipelines); in Jinja it is both a function (`fetch(id)`) and a
/// filter (`id | fetch`). A name that a syntax already uses for a built-in
/// is an error when a prompt of that syntax loads.
///
/// ```
/// use teleprompt::functions::Functions;
/// use serde_json::{json, Value};
///
/// let functions = Functions::new().with("shout", |args: &[Value]| {
///     let text = args.first().and_then(Value::as_str).ok_or("shout takes a string")?;
///     Ok(json!(format!("{}!", text.to_uppercase())))
/// });
/// assert!(functions.get("shout").is_some());
/// ```
#[derive(Clone, Default)]
pub struct Functions {
    entries: std::collections::BTreeMap<String, std::sync::Arc<HostFunction>>,
}

impl Functions {
    /// No host functions.
    pub fn new() -> Functions {
        Functions::default()
    }

    /// Registers `function` as `name`, replacing an earlier one of that name.
    pub fn register<F>(&mut self, name: impl Into<String>, function: F) -> &mut Functions
    where
        F: Fn(&[Value]) -> Result<Value, String> + Send + Sync + 'static,
    {
        self.entries
            .insert(name.into(), std::sync::Arc::new(function));
        self
    }

    /// [`Functions::register`] in builder style.
    pub fn with<F>(mut self, name: impl Into<String>, function: F) -> Functions
    where
        F: Fn(&[Value]) -> Result<Value, String> + Send + Sync + 'static,
    {
        self.register(name, function);
        self
    }

    /// The function registered as `name`.
    pub fn get(&self, name: &str) -> Option<&std::sync::Arc<HostFunction>> {
        self.entries.get(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// The registered functions, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &std::sync::Arc<HostFunction>)> {
        self.entries
            .iter()
            .map(|(name, function)| (name.as_str(), function))
    }

    /// True when no function is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Calls a host function as every syntax does: its error, or a panic
/// inside it, becomes `error calling NAME: …` (as Go's text/template turns
/// a FuncMap panic into an error), so a broken plugin fails one render
/// instead of the host.
pub(crate) fn call_host(
    name: &str,
    function: &HostFunction,
    args: &[Value],
) -> Result<Value, String> {
    let call = std::panic::AssertUnwindSafe(|| function(args));
    match std::panic::catch_unwind(call) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(message)) => Err(format!("error calling {name}: {message}")),
        Err(_) => Err(format!("error calling {name}: the function panicked")),
    }
}

impl std::fmt::Debug for Functions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

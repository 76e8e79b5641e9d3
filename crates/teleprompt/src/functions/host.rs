//! Host functions: what a host registers (untyped functions, functions with
//! a [`Signature`], plugins of them), the names each syntax calls them by,
//! and the call itself.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::signature::{self, is_identifier, Args, BindError, Signature};

/// A function the host registers: it takes the template's arguments as
/// JSON values and returns a JSON value, or an error message.
pub type HostFunction = dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync;

/// A function registered with a [`Signature`]: it takes its arguments bound
/// by name and converted to the declared types.
pub type TypedFunction = dyn Fn(&Args) -> Result<Value, String> + Send + Sync;

/// The separator between a plugin's name and its function's name in
/// Handlebars when the host sets none: Semantic Kernel's (`{{Weather-GetForecast}}`).
pub const DEFAULT_SEPARATOR: &str = "-";

/// One registered function: its name, its plugin, and its signature when
/// it declares one.
#[derive(Clone)]
pub struct Function {
    plugin: Option<Arc<str>>,
    name: Arc<str>,
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    Untyped(Arc<HostFunction>),
    Typed(Arc<Signature>, Arc<TypedFunction>),
}

/// Why a call failed, in words for the template's author.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Failure {
    pub message: String,
    pub suggestion: Option<String>,
}

impl From<BindError> for Failure {
    fn from(error: BindError) -> Failure {
        Failure {
            message: error.message,
            suggestion: error.suggestion,
        }
    }
}

impl Function {
    fn untyped<F>(name: String, function: F) -> Function
    where
        F: Fn(&[Value]) -> Result<Value, String> + Send + Sync + 'static,
    {
        Function {
            plugin: None,
            name: name.into(),
            kind: Kind::Untyped(Arc::new(function)),
        }
    }

    fn typed<F>(name: String, signature: Signature, function: F) -> Function
    where
        F: Fn(&Args) -> Result<Value, String> + Send + Sync + 'static,
    {
        Function {
            plugin: None,
            name: name.into(),
            kind: Kind::Typed(Arc::new(signature), Arc::new(function)),
        }
    }

    /// Its name (within its plugin, for a plugin's function).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The plugin it belongs to.
    pub fn plugin(&self) -> Option<&str> {
        self.plugin.as_deref()
    }

    /// Its declared parameters, when it was registered with them.
    pub fn signature(&self) -> Option<&Signature> {
        match &self.kind {
            Kind::Typed(signature, _) => Some(signature),
            Kind::Untyped(_) => None,
        }
    }

    /// Calls it as the template named it (`display`, for messages), with
    /// the positional arguments and the named ones in the order written.
    /// An untyped function gets the named ones as one trailing object.
    pub(crate) fn call(
        &self,
        display: &str,
        positional: Vec<Value>,
        named: Vec<(String, Value)>,
    ) -> Result<Value, Failure> {
        match &self.kind {
            Kind::Untyped(function) => {
                let mut args = positional;
                if !named.is_empty() {
                    args.push(Value::Object(named.into_iter().collect()));
                }
                guarded(display, || function(&args))
            }
            Kind::Typed(signature, function) => {
                let args = signature::bind(signature, display, positional, named)?;
                guarded(display, || function(&args))
            }
        }
    }

    /// Checks a call at load time: argument count and names, and the types
    /// of literal arguments (`Some`; `None` is known only when rendering).
    /// An untyped function takes anything.
    pub(crate) fn check(
        &self,
        display: &str,
        positional: &[Option<&Value>],
        named: &[(&str, Option<&Value>)],
    ) -> Result<(), BindError> {
        match &self.kind {
            Kind::Untyped(_) => Ok(()),
            Kind::Typed(signature, _) => signature::check(signature, display, positional, named),
        }
    }
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function")
            .field("plugin", &self.plugin)
            .field("name", &self.name)
            .field("signature", &self.signature())
            .finish()
    }
}

/// Runs a host function so that its error, or a panic inside it, becomes
/// `error calling NAME: …` (as Go's text/template turns a FuncMap panic
/// into an error): a broken plugin fails one render instead of the host.
fn guarded(display: &str, call: impl FnOnce() -> Result<Value, String>) -> Result<Value, Failure> {
    let failure = |message: String| Failure {
        message: format!("error calling {display}: {message}"),
        suggestion: None,
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(message)) => Err(failure(message)),
        Err(_) => Err(failure("the function panicked".to_string())),
    }
}

/// A named group of functions (Semantic Kernel's plugins). Handlebars
/// templates call its functions `Plugin-Function` (the separator is
/// [`Functions::with_separator`]'s), Go and Jinja templates
/// `Plugin_Function`.
///
/// ```
/// use teleprompt::functions::{Args, Functions, ParamType, Plugin, Signature};
/// use serde_json::{json, Value};
///
/// let weather = Plugin::new("Weather")
///     .with_signature(
///         "GetForecast",
///         Signature::new().param("city", ParamType::String),
///         |args: &Args| Ok(json!(format!("Sunny in {}", args.string("city")?))),
///     )
///     .with("Now", |_: &[Value]| Ok(json!("12:00")));
/// let functions = Functions::new().with_plugin(weather);
/// assert!(functions.get("Weather-GetForecast").is_some());
/// ```
#[derive(Clone, Debug)]
pub struct Plugin {
    name: String,
    functions: Vec<Function>,
}

impl Plugin {
    /// A plugin with no functions. Its name, like its functions' names, is
    /// made of ASCII letters, digits and `_` (as SK requires); another name
    /// is an error when a prompt loads.
    pub fn new(name: impl Into<String>) -> Plugin {
        Plugin {
            name: name.into(),
            functions: Vec::new(),
        }
    }

    /// Adds an untyped function (it replaces one of the same name).
    pub fn with<F>(mut self, name: impl Into<String>, function: F) -> Plugin
    where
        F: Fn(&[Value]) -> Result<Value, String> + Send + Sync + 'static,
    {
        self.add(Function::untyped(name.into(), function));
        self
    }

    /// Adds a function with declared parameters (it replaces one of the
    /// same name).
    pub fn with_signature<F>(
        mut self,
        name: impl Into<String>,
        signature: Signature,
        function: F,
    ) -> Plugin
    where
        F: Fn(&Args) -> Result<Value, String> + Send + Sync + 'static,
    {
        self.add(Function::typed(name.into(), signature, function));
        self
    }

    fn add(&mut self, mut function: Function) {
        function.plugin = Some(self.name.as_str().into());
        self.functions.retain(|known| known.name != function.name);
        self.functions.push(function);
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The spelling of plugin functions a syntax calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Naming {
    /// `Plugin{separator}Function`, the separator checked against what a
    /// Handlebars helper name may hold.
    Handlebars,
    /// `Plugin_Function`: Go and Jinja names cannot hold `-` (SK's Python
    /// Jinja2 templates spell `plugin-function` this way too).
    Identifier,
}

/// Functions a host makes callable from templates by name (Semantic
/// Kernel's plugin functions, Sortie's FuncMap additions).
///
/// In Go syntax a host function is called like a built-in (`{{ fetch .id }}`,
/// also in pipelines); in Jinja it is both a function (`fetch(id)`) and a
/// filter (`id | fetch`); in Handlebars it is a helper (`{{fetch id}}`). A
/// name that a syntax already uses for a built-in is an error when a prompt
/// of that syntax loads.
///
/// An untyped function ([`Functions::with`]) takes the arguments as written,
/// named ones as one trailing object. A function with a [`Signature`]
/// ([`Functions::with_signature`]) takes them bound to its parameters; see
/// the [module docs](crate::functions).
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
    /// By (plugin, name); the plugin is "" for a function of no plugin.
    entries: BTreeMap<(String, String), Function>,
    separator: Option<String>,
}

impl Functions {
    /// No host functions.
    pub fn new() -> Functions {
        Functions::default()
    }

    /// Adds an untyped function as `name` (it replaces one of the same
    /// name).
    pub fn with<F>(mut self, name: impl Into<String>, function: F) -> Functions
    where
        F: Fn(&[Value]) -> Result<Value, String> + Send + Sync + 'static,
    {
        self.add(Function::untyped(name.into(), function));
        self
    }

    /// Adds a function as `name` with declared parameters (it replaces one
    /// of the same name): template arguments are bound to them (by
    /// position, or by name from Jinja keyword and Handlebars hash
    /// arguments) and converted to their types before `function` runs.
    pub fn with_signature<F>(
        mut self,
        name: impl Into<String>,
        signature: Signature,
        function: F,
    ) -> Functions
    where
        F: Fn(&Args) -> Result<Value, String> + Send + Sync + 'static,
    {
        self.add(Function::typed(name.into(), signature, function));
        self
    }

    /// Adds a plugin's functions (they replace earlier ones of the same
    /// plugin and name).
    pub fn with_plugin(mut self, plugin: Plugin) -> Functions {
        for function in plugin.functions {
            self.add(function);
        }
        self
    }

    /// Sets what joins a plugin's name and its function's name in
    /// Handlebars (`-` by default, as in Semantic Kernel, which lets hosts
    /// change it). It may be any run of characters a Handlebars name may
    /// hold (`_`, `:`, `$`, …; not whitespace, nor ``!"#%&'()*+,/;<=>@[\]^`{|}~``),
    /// or `.` (`{{Weather.GetForecast city="Paris"}}`: such a path is the
    /// function even where the data has it; `{{this.Weather.GetForecast}}`
    /// reads the data); another one is an error when a Handlebars prompt
    /// loads. Go and Jinja always spell plugin functions `Plugin_Function`.
    pub fn with_separator(mut self, separator: impl Into<String>) -> Functions {
        self.separator = Some(separator.into());
        self
    }

    /// The plugin separator for Handlebars.
    pub fn separator(&self) -> &str {
        self.separator.as_deref().unwrap_or(DEFAULT_SEPARATOR)
    }

    fn add(&mut self, function: Function) {
        let key = (
            function.plugin.as_deref().unwrap_or("").to_string(),
            function.name.to_string(),
        );
        self.entries.insert(key, function);
    }

    /// The function called `name`: a function of no plugin by its name, a
    /// plugin's function by `Plugin{separator}Function`.
    pub fn get(&self, name: &str) -> Option<&Function> {
        if let Some(function) = self.entries.get(&(String::new(), name.to_string())) {
            return Some(function);
        }
        let separator = self.separator();
        self.entries
            .iter()
            .find_map(|((plugin, function_name), function)| {
                let rest = name
                    .strip_prefix(plugin.as_str())?
                    .strip_prefix(separator)?;
                (!plugin.is_empty() && rest == function_name).then_some(function)
            })
    }

    /// The functions' names as [`Functions::get`] takes them, sorted by
    /// plugin, then name.
    pub fn names(&self) -> impl Iterator<Item = String> + '_ {
        self.iter().map(|(name, _)| name)
    }

    /// The functions with their names as [`Functions::get`] takes them,
    /// sorted by plugin, then name.
    pub fn iter(&self) -> impl Iterator<Item = (String, &Function)> {
        let separator = self.separator();
        self.entries.values().map(move |function| {
            let name = match &function.plugin {
                Some(plugin) => format!("{plugin}{separator}{}", function.name),
                None => function.name.to_string(),
            };
            (name, function)
        })
    }

    /// True when no function is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The functions under the names a syntax calls them, sorted by name.
    /// The host's own mistakes are errors here, when a prompt loads: a
    /// plugin or function name that is not a name, a signature that does
    /// not hold together, a separator Handlebars cannot read, two functions
    /// with one name.
    pub(crate) fn resolve(&self, naming: Naming) -> Result<Vec<(String, Function)>, String> {
        let separator = match naming {
            Naming::Handlebars => self.separator(),
            Naming::Identifier => "_",
        };
        let mut resolved: Vec<(String, Function)> = Vec::with_capacity(self.entries.len());
        for function in self.entries.values() {
            let name = match &function.plugin {
                Some(plugin) => {
                    if !is_identifier(plugin) {
                        return Err(format!(
                            "plugin name {plugin:?} is not a name: use ASCII letters, digits and _, not starting with a digit (as Semantic Kernel does)"
                        ));
                    }
                    if function.name.is_empty()
                        || !function
                            .name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    {
                        return Err(format!(
                            "function name {:?} of plugin {plugin} is not a name: use ASCII letters, digits and _ (as Semantic Kernel does)",
                            &*function.name
                        ));
                    }
                    if naming == Naming::Handlebars {
                        check_separator(separator)?;
                    }
                    format!("{plugin}{separator}{}", function.name)
                }
                None => function.name.to_string(),
            };
            if let Some(signature) = function.signature() {
                signature.validate(&name)?;
            }
            resolved.push((name, function.clone()));
        }
        resolved.sort_by(|(a, _), (b, _)| a.cmp(b));
        if let Some(pair) = resolved.windows(2).find(|pair| match pair {
            [(a, _), (b, _)] => a == b,
            _ => false,
        }) {
            let [(name, first), (_, second)] = pair else {
                return Err("two host functions have one name".to_string());
            };
            let origin = |function: &Function| match &function.plugin {
                Some(plugin) => format!("plugin {plugin}'s function {}", &*function.name),
                None => format!("the function registered as {:?}", &*function.name),
            };
            return Err(format!(
                "two host functions are called {name:?} in this syntax: {} and {}",
                origin(first),
                origin(second)
            ));
        }
        Ok(resolved)
    }
}

/// The characters a Handlebars helper name may not hold (its lexer's
/// list), besides whitespace; `.` and `/` separate a path's keys.
const NOT_IN_HANDLEBARS_NAMES: &[u8] = b"!\"#%&'()*+,./;<=>@[\\]^`{|}~";

/// A separator Handlebars reads inside one helper name, or `.` (the
/// helper name is then a dotted path, matched as a whole).
fn check_separator(separator: &str) -> Result<(), String> {
    let fits = separator == "."
        || (!separator.is_empty()
            && separator
                .bytes()
                .all(|b| !b.is_ascii_whitespace() && !NOT_IN_HANDLEBARS_NAMES.contains(&b)));
    if fits {
        Ok(())
    } else {
        Err(format!(
            "the plugin separator {separator:?} cannot be part of a Handlebars helper name: use `-` (Semantic Kernel's), `_`, `.` or another character a name may hold"
        ))
    }
}

impl std::fmt::Debug for Functions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::ParamType;
    use serde_json::json;

    fn weather() -> Plugin {
        Plugin::new("Weather")
            .with_signature(
                "GetForecast",
                Signature::new().param("city", ParamType::String),
                |args: &Args| Ok(json!(args.string("city")?)),
            )
            .with("Now", |_: &[Value]| Ok(json!("noon")))
    }

    #[test]
    fn names_per_syntax() {
        let functions = Functions::new()
            .with("shout", |_: &[Value]| Ok(Value::Null))
            .with_plugin(weather());
        let names = |naming| -> Vec<String> {
            functions
                .resolve(naming)
                .unwrap()
                .into_iter()
                .map(|(name, _)| name)
                .collect()
        };
        assert_eq!(
            names(Naming::Handlebars),
            ["Weather-GetForecast", "Weather-Now", "shout"]
        );
        assert_eq!(
            names(Naming::Identifier),
            ["Weather_GetForecast", "Weather_Now", "shout"]
        );
        assert_eq!(
            functions.names().collect::<Vec<_>>(),
            ["shout", "Weather-GetForecast", "Weather-Now"]
        );
        let function = functions.get("Weather-GetForecast").unwrap();
        assert_eq!(function.plugin(), Some("Weather"));
        assert_eq!(function.name(), "GetForecast");
        assert!(function.signature().is_some());
        assert!(functions.get("Weather_GetForecast").is_none());
        let dotted = functions.clone().with_separator(".");
        assert!(dotted.get("Weather.Now").is_some());
        assert_eq!(
            dotted.resolve(Naming::Handlebars).unwrap()[0].0,
            "Weather.GetForecast"
        );
    }

    #[test]
    fn host_mistakes_fail_when_a_prompt_loads() {
        let bad_plugin = Functions::new()
            .with_plugin(Plugin::new("My Plugin").with("f", |_: &[Value]| Ok(Value::Null)));
        assert!(bad_plugin
            .resolve(Naming::Identifier)
            .unwrap_err()
            .starts_with("plugin name \"My Plugin\" is not a name"));
        let clash = Functions::new()
            .with("Weather_Now", |_: &[Value]| Ok(Value::Null))
            .with_plugin(weather());
        assert!(clash.resolve(Naming::Handlebars).is_ok());
        assert_eq!(
            clash.resolve(Naming::Identifier).unwrap_err(),
            "two host functions are called \"Weather_Now\" in this syntax: the function registered as \"Weather_Now\" and plugin Weather's function Now"
        );
        for separator in ["/", " ", "", "{", ".."] {
            let functions = Functions::new()
                .with_plugin(weather())
                .with_separator(separator);
            assert!(
                functions.resolve(Naming::Handlebars).is_err(),
                "{separator:?}"
            );
            assert!(
                functions.resolve(Naming::Identifier).is_ok(),
                "{separator:?}"
            );
        }
        for separator in ["-", "_", ".", ":", "::", "$", "__"] {
            let functions = Functions::new()
                .with_plugin(weather())
                .with_separator(separator);
            assert!(
                functions.resolve(Naming::Handlebars).is_ok(),
                "{separator:?}"
            );
        }
    }

    #[test]
    fn calls_bind_typed_functions() {
        let functions = Functions::new().with_plugin(weather());
        let function = functions.get("Weather-GetForecast").unwrap();
        assert_eq!(
            function.call("W", vec![], vec![("city".into(), json!("Paris"))]),
            Ok(json!("Paris"))
        );
        assert_eq!(
            function
                .call("W", vec![json!(1)], vec![])
                .unwrap_err()
                .message,
            "parameter `city` of `W` must be a string, found the integer 1"
        );
        let now = functions.get("Weather-Now").unwrap();
        assert_eq!(
            now.call("W", vec![], vec![("x".into(), json!(1))]),
            Ok(json!("noon"))
        );
    }
}

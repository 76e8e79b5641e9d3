//! Declared parameters of a host function, and how a template's arguments
//! bind to them: positional arguments fill the parameters in order, named
//! ones (Handlebars hash arguments, Jinja keyword arguments) go by name,
//! and each value is converted to its parameter's type — the rules of
//! Semantic Kernel's Handlebars function helpers.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{Map, Number, Value};

/// The type a parameter declares: JSON Schema's names, as Semantic
/// Kernel's function metadata describes parameters.
///
/// A value that is not of the type is converted when SK converts it, and is
/// an error otherwise:
///
/// | type | accepts | converts |
/// |---|---|---|
/// | `String` | a string | — |
/// | `Integer` | an integer; a number with no fraction (`2.0`) | a string that is one (`"42"`, `" -7 "`) |
/// | `Number` | any number | a string that is one (`"4.5"`, `"1e3"`; not `"NaN"`) |
/// | `Boolean` | `true`, `false` | `"true"`, `"false"`, in any case |
/// | `Array` | an array | — |
/// | `Object` | an object | — |
/// | `Any` | anything | — |
///
/// A number is not converted to a string, nor a string to an array or an
/// object: SK's helpers refuse those (`KernelFunctionHelpers`' type check
/// lets through a value of the parameter's own type or, for a numeric
/// parameter, any value that parses as a number), and so does Go's
/// `text/template` for a function taking a `string`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParamType {
    /// Text.
    String,
    /// A whole number (`i64`, or `u64` above `i64::MAX`).
    Integer,
    /// Any number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A JSON array.
    Array,
    /// A JSON object.
    Object,
    /// Any value, as given.
    Any,
}

impl ParamType {
    /// The JSON Schema name: `string`, `integer`, `number`, `boolean`,
    /// `array`, `object`; `any` for [`ParamType::Any`].
    pub fn name(self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Integer => "integer",
            ParamType::Number => "number",
            ParamType::Boolean => "boolean",
            ParamType::Array => "array",
            ParamType::Object => "object",
            ParamType::Any => "any",
        }
    }

    /// The type in a sentence: `a string`, `an integer`, …
    fn phrase(self) -> &'static str {
        match self {
            ParamType::String => "a string",
            ParamType::Integer => "an integer",
            ParamType::Number => "a number",
            ParamType::Boolean => "a boolean",
            ParamType::Array => "an array",
            ParamType::Object => "an object",
            ParamType::Any => "any value",
        }
    }

    /// `value` as this type, or the value back when it does not convert.
    pub fn convert(self, value: Value) -> Result<Value, Value> {
        match (self, value) {
            (ParamType::Any, value)
            | (ParamType::String, value @ Value::String(_))
            | (ParamType::Number, value @ Value::Number(_))
            | (ParamType::Boolean, value @ Value::Bool(_))
            | (ParamType::Array, value @ Value::Array(_))
            | (ParamType::Object, value @ Value::Object(_)) => Ok(value),
            (ParamType::Integer, Value::Number(number)) => whole(&number)
                .map(Value::Number)
                .ok_or(Value::Number(number)),
            (ParamType::Integer, Value::String(text)) => match parse_integer(&text) {
                Some(number) => Ok(Value::Number(number)),
                None => Err(Value::String(text)),
            },
            (ParamType::Number, Value::String(text)) => match parse_number(&text) {
                Some(number) => Ok(Value::Number(number)),
                None => Err(Value::String(text)),
            },
            (ParamType::Boolean, Value::String(text)) => {
                let word = text.trim();
                if word.eq_ignore_ascii_case("true") {
                    Ok(Value::Bool(true))
                } else if word.eq_ignore_ascii_case("false") {
                    Ok(Value::Bool(false))
                } else {
                    Err(Value::String(text))
                }
            }
            (_, value) => Err(value),
        }
    }
}

impl std::fmt::Display for ParamType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `number` as an integer: itself when it is one, a float with no fraction
/// that fits in an `i64` as that integer (JSON Schema counts `2.0` as an
/// integer).
fn whole(number: &Number) -> Option<Number> {
    if number.is_i64() || number.is_u64() {
        return Some(number.clone());
    }
    let float = number.as_f64()?;
    // 2^63: every float in [-2^63, 2^63) with no fraction is an i64.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if float.is_finite() && float.fract() == 0.0 && (-LIMIT..LIMIT).contains(&float) {
        // In range and whole, so the cast is exact.
        #[allow(clippy::cast_possible_truncation)]
        return Some(Number::from(float as i64));
    }
    None
}

/// A string holding an integer (surrounding whitespace allowed, as .NET's
/// `long.Parse` allows it).
fn parse_integer(text: &str) -> Option<Number> {
    let text = text.trim();
    if let Ok(int) = text.parse::<i64>() {
        return Some(Number::from(int));
    }
    text.parse::<u64>().ok().map(Number::from)
}

/// A string holding a number: an integer stays one; a float must be
/// finite (JSON has no NaN or infinity).
fn parse_number(text: &str) -> Option<Number> {
    if let Some(int) = parse_integer(text) {
        return Some(int);
    }
    let text = text.trim();
    // Rust reads "inf" and "NaN"; SK's invariant-culture parse does not.
    if !text
        .bytes()
        .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
    {
        return None;
    }
    text.parse::<f64>().ok().and_then(Number::from_f64)
}

/// One declared parameter: a name, a type, whether it is required, a
/// default, and a description (SK's `KernelParameterMetadata`).
///
/// ```
/// use teleprompt::functions::{Param, ParamType};
/// use serde_json::json;
///
/// let days = Param::new("days", ParamType::Integer)
///     .default(json!(1))
///     .describe("How many days to forecast");
/// assert!(!days.is_required());
/// assert_eq!(days.default_value(), Some(&json!(1)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    name: String,
    ty: ParamType,
    required: bool,
    default: Option<Value>,
    description: Option<String>,
}

impl Param {
    /// A required parameter.
    pub fn new(name: impl Into<String>, ty: ParamType) -> Param {
        Param {
            name: name.into(),
            ty,
            required: true,
            default: None,
            description: None,
        }
    }

    /// Makes it optional, with no default: the function sees no value for
    /// it when the template gives none ([`Args::get`] is `None`).
    pub fn optional(mut self) -> Param {
        self.required = false;
        self
    }

    /// Makes it optional, with `value` when the template gives none. A
    /// null default is no default.
    pub fn default(mut self, value: impl Into<Value>) -> Param {
        self.required = false;
        // Converted now (`"3"` for an integer is 3); a default that does
        // not convert is an error when a prompt loads.
        let value = self.ty.convert(value.into()).unwrap_or_else(|value| value);
        self.default = (!value.is_null()).then_some(value);
        self
    }

    /// Sets its description.
    pub fn describe(mut self, description: impl Into<String>) -> Param {
        self.description = Some(description.into());
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its type.
    pub fn ty(&self) -> ParamType {
        self.ty
    }

    /// True when a call must give it.
    pub fn is_required(&self) -> bool {
        self.required
    }

    /// The value it takes when a call does not give it.
    pub fn default_value(&self) -> Option<&Value> {
        self.default.as_ref()
    }

    /// Its description.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
}

/// What a host function declares about itself: its parameters, in order,
/// and a description (SK's `KernelFunctionMetadata`).
///
/// ```
/// use teleprompt::functions::{ParamType, Signature};
///
/// let signature = Signature::new()
///     .describe("The weather in a city")
///     .param("city", ParamType::String)
///     .optional("days", ParamType::Integer, 1);
/// assert_eq!(signature.to_string(), "(city: string, days: integer = 1)");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Signature {
    params: Vec<Param>,
    description: Option<String>,
}

impl Signature {
    /// No parameters.
    pub fn new() -> Signature {
        Signature::default()
    }

    /// Adds a required parameter.
    pub fn param(self, name: impl Into<String>, ty: ParamType) -> Signature {
        self.with_param(Param::new(name, ty))
    }

    /// Adds an optional parameter that is `default` when not given (a null
    /// default: no value).
    pub fn optional(
        self,
        name: impl Into<String>,
        ty: ParamType,
        default: impl Into<Value>,
    ) -> Signature {
        self.with_param(Param::new(name, ty).default(default))
    }

    /// Adds a parameter built with [`Param`] (to describe it).
    pub fn with_param(mut self, param: Param) -> Signature {
        self.params.push(param);
        self
    }

    /// Sets the function's description.
    pub fn describe(mut self, description: impl Into<String>) -> Signature {
        self.description = Some(description.into());
        self
    }

    /// The parameters, in order.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// The function's description.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The position of the parameter called `name`.
    fn position(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|param| param.name == name)
    }

    /// The declaration's own mistakes, found when a prompt loads: a
    /// parameter name that is not a name or is declared twice, a default
    /// of the wrong type.
    pub(crate) fn validate(&self, function: &str) -> Result<(), String> {
        for (index, param) in self.params.iter().enumerate() {
            if !is_identifier(&param.name) {
                return Err(format!(
                    "parameter {:?} of host function `{function}` is not a name: use ASCII letters, digits and _, not starting with a digit",
                    param.name
                ));
            }
            if self
                .params
                .get(..index)
                .is_some_and(|before| before.iter().any(|other| other.name == param.name))
            {
                return Err(format!(
                    "host function `{function}` declares parameter `{}` twice",
                    param.name
                ));
            }
            if let Some(default) = &param.default {
                if let Err(value) = param.ty.convert(default.clone()) {
                    return Err(format!(
                        "the default of parameter `{}` of host function `{function}` must be {}, found {}",
                        param.name,
                        param.ty.phrase(),
                        describe(&value)
                    ));
                }
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for Signature {
    /// `(city: string, days: integer = 1, unit?: string)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_char('(')?;
        for (index, param) in self.params.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            let mark = if param.required || param.default.is_some() {
                ""
            } else {
                "?"
            };
            write!(f, "{}{mark}: {}", param.name, param.ty)?;
            if let Some(default) = &param.default {
                write!(f, " = {}", preview(default))?;
            }
        }
        f.write_char(')')
    }
}

/// True for `[A-Za-z_][A-Za-z0-9_]*`: a name in Go templates, Jinja and
/// Handlebars alike.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The arguments a typed host function receives: bound to its parameters
/// by name and converted to their types. An optional parameter the template
/// did not give has its default, or no value.
///
/// ```
/// use teleprompt::functions::{Args, Functions, ParamType, Signature};
/// use serde_json::json;
///
/// let functions = Functions::new().with_signature(
///     "repeat",
///     Signature::new()
///         .param("text", ParamType::String)
///         .optional("times", ParamType::Integer, 2),
///     |args: &Args| {
///         let times = usize::try_from(args.integer("times")?).map_err(|e| e.to_string())?;
///         Ok(json!(args.string("text")?.repeat(times.min(100))))
///     },
/// );
/// # assert!(functions.get("repeat").is_some());
/// ```
#[derive(Clone, Debug)]
pub struct Args {
    signature: Arc<Signature>,
    values: Vec<Option<Value>>,
}

impl Args {
    /// The value of parameter `name`: `None` when it is optional, not
    /// given and has no default (or is not declared).
    pub fn get(&self, name: &str) -> Option<&Value> {
        let index = self.signature.position(name)?;
        self.values.get(index)?.as_ref()
    }

    /// The value of parameter `name`, or an error saying why there is none.
    fn value(&self, name: &str) -> Result<&Value, String> {
        let Some(index) = self.signature.position(name) else {
            return Err(format!("no parameter `{name}` is declared"));
        };
        self.values
            .get(index)
            .and_then(Option::as_ref)
            .ok_or_else(|| format!("parameter `{name}` was not given"))
    }

    fn wrong(name: &str, want: &str, value: &Value) -> String {
        format!("parameter `{name}` is {}, not {want}", describe(value))
    }

    /// A string parameter's text.
    pub fn string(&self, name: &str) -> Result<&str, String> {
        let value = self.value(name)?;
        value
            .as_str()
            .ok_or_else(|| Args::wrong(name, "a string", value))
    }

    /// An integer parameter's value (an error above `i64::MAX`).
    pub fn integer(&self, name: &str) -> Result<i64, String> {
        let value = self.value(name)?;
        match value {
            Value::Number(number) if number.is_u64() && !number.is_i64() => Err(format!(
                "parameter `{name}` is {number}, above {}",
                i64::MAX
            )),
            _ => value
                .as_i64()
                .ok_or_else(|| Args::wrong(name, "an integer", value)),
        }
    }

    /// A number parameter's value.
    pub fn number(&self, name: &str) -> Result<f64, String> {
        let value = self.value(name)?;
        value
            .as_f64()
            .ok_or_else(|| Args::wrong(name, "a number", value))
    }

    /// A boolean parameter's value.
    pub fn boolean(&self, name: &str) -> Result<bool, String> {
        let value = self.value(name)?;
        value
            .as_bool()
            .ok_or_else(|| Args::wrong(name, "a boolean", value))
    }

    /// An array parameter's items.
    pub fn array(&self, name: &str) -> Result<&[Value], String> {
        let value = self.value(name)?;
        value
            .as_array()
            .map(Vec::as_slice)
            .ok_or_else(|| Args::wrong(name, "an array", value))
    }

    /// An object parameter's map.
    pub fn object(&self, name: &str) -> Result<&Map<String, Value>, String> {
        let value = self.value(name)?;
        value
            .as_object()
            .ok_or_else(|| Args::wrong(name, "an object", value))
    }

    /// The parameters that have a value, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.signature
            .params
            .iter()
            .zip(&self.values)
            .filter_map(|(param, value)| Some((param.name.as_str(), value.as_ref()?)))
    }

    /// The parameters that have a value, as a JSON object.
    pub fn to_object(&self) -> Map<String, Value> {
        self.iter()
            .map(|(name, value)| (name.to_string(), value.clone()))
            .collect()
    }
}

/// Which argument a binding error is about, so a front end can point at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArgAt {
    /// The call as a whole (a missing parameter).
    Call,
    /// The positional argument at this index.
    Positional(usize),
    /// The named argument at this index.
    Named(usize),
}

/// A call whose arguments do not fit the signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BindError {
    pub message: String,
    pub suggestion: Option<String>,
    pub at: ArgAt,
}

/// Where a parameter's value comes from.
#[derive(Clone, Copy)]
enum Source {
    Positional(usize),
    Named(usize),
}

/// Matches arguments to parameters: positional ones in order, named ones by
/// name. Too many positional arguments, an unknown name, a parameter given
/// twice and a required parameter not given are errors, in that order.
fn plan(
    signature: &Signature,
    function: &str,
    positional: usize,
    named: &[&str],
) -> Result<Vec<Option<Source>>, BindError> {
    let params = &signature.params;
    let listing = || Some(format!("`{function}` takes {signature}"));
    if positional > params.len() {
        let required = params.iter().filter(|param| param.required).count();
        let message = match params.len() {
            0 => format!("`{function}` takes no arguments, found {positional}"),
            n => format!(
                "`{function}` takes {}{n} argument{}, found {positional}",
                if required == n { "" } else { "at most " },
                if n == 1 { "" } else { "s" },
            ),
        };
        return Err(BindError {
            message,
            suggestion: listing(),
            at: ArgAt::Positional(params.len()),
        });
    }
    let mut sources: Vec<Option<Source>> = (0..params.len())
        .map(|index| (index < positional).then_some(Source::Positional(index)))
        .collect();
    for (at, key) in named.iter().enumerate() {
        let Some(index) = signature.position(key) else {
            let names = params.iter().map(|param| param.name.as_str());
            let suggestion = crate::diagnostics::closest(key, names)
                .map(|close| format!("did you mean `{close}`?"))
                .or_else(listing);
            return Err(BindError {
                message: format!("`{function}` has no parameter `{key}`"),
                suggestion,
                at: ArgAt::Named(at),
            });
        };
        match sources.get_mut(index) {
            Some(slot @ None) => *slot = Some(Source::Named(at)),
            Some(Some(earlier)) => {
                let how = match earlier {
                    Source::Positional(_) => " (by position and by name)",
                    Source::Named(_) => "",
                };
                return Err(BindError {
                    message: format!("parameter `{key}` of `{function}` is given twice{how}"),
                    suggestion: None,
                    at: ArgAt::Named(at),
                });
            }
            None => {}
        }
    }
    if let Some(param) = params
        .iter()
        .zip(&sources)
        .find_map(|(param, source)| (param.required && source.is_none()).then_some(param))
    {
        return Err(BindError {
            message: format!("parameter `{}` of `{function}` is required", param.name),
            suggestion: listing(),
            at: ArgAt::Call,
        });
    }
    Ok(sources)
}

/// `value` converted for `param`: null for an optional parameter means its
/// default (SK drops null arguments), for a required one it is a type
/// error (unless the type is `Any`).
fn convert_for(
    param: &Param,
    function: &str,
    value: Value,
    at: ArgAt,
) -> Result<Option<Value>, BindError> {
    if value.is_null() && param.ty != ParamType::Any && !param.required {
        return Ok(param.default.clone());
    }
    param
        .ty
        .convert(value)
        .map(Some)
        .map_err(|value| BindError {
            message: format!(
                "parameter `{}` of `{function}` must be {}, found {}",
                param.name,
                param.ty.phrase(),
                describe(&value)
            ),
            suggestion: None,
            at,
        })
}

/// Binds a call's arguments (`named` in the order written) to `signature`.
pub(crate) fn bind(
    signature: &Arc<Signature>,
    function: &str,
    positional: Vec<Value>,
    named: Vec<(String, Value)>,
) -> Result<Args, BindError> {
    let keys: Vec<&str> = named.iter().map(|(key, _)| key.as_str()).collect();
    let sources = plan(signature, function, positional.len(), &keys)?;
    let mut positional: Vec<Option<Value>> = positional.into_iter().map(Some).collect();
    let mut named: Vec<Option<Value>> = named.into_iter().map(|(_, value)| Some(value)).collect();
    let mut values = Vec::with_capacity(signature.params.len());
    for (param, source) in signature.params.iter().zip(sources) {
        let given = match source {
            Some(Source::Positional(index)) => positional
                .get_mut(index)
                .and_then(Option::take)
                .map(|value| (value, ArgAt::Positional(index))),
            Some(Source::Named(index)) => named
                .get_mut(index)
                .and_then(Option::take)
                .map(|value| (value, ArgAt::Named(index))),
            None => None,
        };
        values.push(match given {
            Some((value, at)) => convert_for(param, function, value, at)?,
            None => param.default.clone(),
        });
    }
    Ok(Args {
        signature: Arc::clone(signature),
        values,
    })
}

/// Checks a call before it runs: the arguments' count and names, and the
/// types of those known now (`Some`: a literal in the template; `None`:
/// known only when rendering).
pub(crate) fn check(
    signature: &Signature,
    function: &str,
    positional: &[Option<&Value>],
    named: &[(&str, Option<&Value>)],
) -> Result<(), BindError> {
    let keys: Vec<&str> = named.iter().map(|(key, _)| *key).collect();
    let sources = plan(signature, function, positional.len(), &keys)?;
    for (param, source) in signature.params.iter().zip(sources) {
        let known = match source {
            Some(Source::Positional(index)) => positional
                .get(index)
                .copied()
                .flatten()
                .map(|value| (value, ArgAt::Positional(index))),
            Some(Source::Named(index)) => named
                .get(index)
                .and_then(|(_, value)| *value)
                .map(|value| (value, ArgAt::Named(index))),
            None => None,
        };
        if let Some((value, at)) = known {
            convert_for(param, function, value.clone(), at)?;
        }
    }
    Ok(())
}

/// A value in a message: its kind and, for a scalar, the value (a long
/// string cut short).
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) if n.is_f64() => format!("the number {n}"),
        Value::Number(n) => format!("the integer {n}"),
        Value::String(_) => format!("the string {}", preview(value)),
        Value::Array(items) if items.is_empty() => "an empty array".to_string(),
        Value::Array(items) => format!(
            "an array of {} item{}",
            items.len(),
            if items.len() == 1 { "" } else { "s" }
        ),
        Value::Object(map) if map.is_empty() => "an empty object".to_string(),
        Value::Object(map) => format!(
            "an object with {} key{}",
            map.len(),
            if map.len() == 1 { "" } else { "s" }
        ),
    }
}

/// A short rendering of a value: JSON for scalars (a string past 40
/// characters cut with `…`), `[…]` and `{…}` for collections.
fn preview(value: &Value) -> String {
    const LIMIT: usize = 40;
    match value {
        Value::String(text) if text.chars().count() > LIMIT => {
            let cut: String = text.chars().take(LIMIT).collect();
            let quoted = serde_json::to_string(&cut).unwrap_or_default();
            format!("{}…\"", quoted.strip_suffix('"').unwrap_or(&quoted))
        }
        Value::Array(items) if !items.is_empty() => "[…]".to_string(),
        Value::Object(map) if !map.is_empty() => "{…}".to_string(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conversions_follow_sk() {
        let int = ParamType::Integer;
        assert_eq!(int.convert(json!(42)), Ok(json!(42)));
        assert_eq!(int.convert(json!("42")), Ok(json!(42)));
        assert_eq!(int.convert(json!(" -7 ")), Ok(json!(-7)));
        assert_eq!(int.convert(json!(2.0)), Ok(json!(2)));
        assert_eq!(
            int.convert(json!("18446744073709551615")),
            Ok(json!(u64::MAX))
        );
        assert_eq!(int.convert(json!(2.5)), Err(json!(2.5)));
        assert_eq!(int.convert(json!("4.5")), Err(json!("4.5")));
        assert_eq!(int.convert(json!(1e300)), Err(json!(1e300)));
        assert_eq!(int.convert(json!("twelve")), Err(json!("twelve")));
        assert_eq!(int.convert(json!(true)), Err(json!(true)));
        let num = ParamType::Number;
        assert_eq!(num.convert(json!("4.5")), Ok(json!(4.5)));
        assert_eq!(num.convert(json!("1e3")), Ok(json!(1000.0)));
        assert_eq!(num.convert(json!("12")), Ok(json!(12)));
        for bad in ["NaN", "inf", "-infinity", "1e400", "", "0x10", "1_0"] {
            assert_eq!(num.convert(json!(bad)), Err(json!(bad)), "{bad}");
        }
        let boolean = ParamType::Boolean;
        assert_eq!(boolean.convert(json!("True")), Ok(json!(true)));
        assert_eq!(boolean.convert(json!(" false")), Ok(json!(false)));
        assert_eq!(boolean.convert(json!("yes")), Err(json!("yes")));
        assert_eq!(boolean.convert(json!(1)), Err(json!(1)));
        assert_eq!(ParamType::String.convert(json!(42)), Err(json!(42)));
        assert_eq!(ParamType::Array.convert(json!("[1]")), Err(json!("[1]")));
        assert_eq!(ParamType::Object.convert(json!({})), Ok(json!({})));
        assert_eq!(ParamType::Any.convert(json!(null)), Ok(json!(null)));
    }

    fn forecast() -> Arc<Signature> {
        Arc::new(
            Signature::new()
                .param("city", ParamType::String)
                .optional("days", ParamType::Integer, 1)
                .with_param(Param::new("unit", ParamType::String).optional()),
        )
    }

    #[test]
    fn binding_by_position_and_name() {
        let sig = forecast();
        let args = bind(&sig, "f", vec![json!("Paris"), json!("3")], vec![]).unwrap();
        assert_eq!(args.string("city"), Ok("Paris"));
        assert_eq!(args.integer("days"), Ok(3));
        assert_eq!(args.get("unit"), None);
        let args = bind(
            &sig,
            "f",
            vec![json!("Oslo")],
            vec![("unit".into(), json!("C"))],
        )
        .unwrap();
        assert_eq!(
            args.to_object(),
            *json!({"city": "Oslo", "days": 1, "unit": "C"})
                .as_object()
                .unwrap()
        );
        assert_eq!(
            args.string("days"),
            Err("parameter `days` is the integer 1, not a string".to_string())
        );
        assert_eq!(
            args.string("nope"),
            Err("no parameter `nope` is declared".to_string())
        );
        assert_eq!(args.string("unit").map(str::len), Ok(1));
        // null for an optional parameter is its default
        let args = bind(&sig, "f", vec![json!("Oslo"), json!(null)], vec![]).unwrap();
        assert_eq!(args.integer("days"), Ok(1));
    }

    #[test]
    fn binding_errors() {
        let sig = forecast();
        let error = |positional: Vec<Value>, named: Vec<(&str, Value)>| {
            let named = named.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            bind(&sig, "Weather-GetForecast", positional, named).unwrap_err()
        };
        let e = error(vec![], vec![]);
        assert_eq!(
            e.message,
            "parameter `city` of `Weather-GetForecast` is required"
        );
        assert_eq!(
            e.suggestion.as_deref(),
            Some("`Weather-GetForecast` takes (city: string, days: integer = 1, unit?: string)")
        );
        assert_eq!(e.at, ArgAt::Call);
        let e = error(vec![json!("a"), json!(1), json!("C"), json!(0)], vec![]);
        assert_eq!(
            e.message,
            "`Weather-GetForecast` takes at most 3 arguments, found 4"
        );
        assert_eq!(e.at, ArgAt::Positional(3));
        let e = error(vec![], vec![("citi", json!("x"))]);
        assert_eq!(e.message, "`Weather-GetForecast` has no parameter `citi`");
        assert_eq!(e.suggestion.as_deref(), Some("did you mean `city`?"));
        let e = error(vec![json!("a")], vec![("city", json!("b"))]);
        assert_eq!(
            e.message,
            "parameter `city` of `Weather-GetForecast` is given twice (by position and by name)"
        );
        let e = error(vec![json!("a"), json!("two")], vec![]);
        assert_eq!(
            e.message,
            "parameter `days` of `Weather-GetForecast` must be an integer, found the string \"two\""
        );
        assert_eq!(e.at, ArgAt::Positional(1));
        let e = error(vec![json!(null)], vec![]);
        assert_eq!(
            e.message,
            "parameter `city` of `Weather-GetForecast` must be a string, found null"
        );
        let long = "x".repeat(10_000);
        let e = error(vec![json!("a"), json!(long)], vec![]);
        assert!(e.message.len() < 150, "{}", e.message);
        let none = Arc::new(Signature::new());
        let e = bind(&none, "now", vec![json!(1)], vec![]).unwrap_err();
        assert_eq!(e.message, "`now` takes no arguments, found 1");
    }

    #[test]
    fn static_checks_see_literals_only() {
        let sig = forecast();
        assert!(check(&sig, "f", &[None, None], &[]).is_ok());
        let two = json!("two");
        let e = check(&sig, "f", &[None], &[("days", Some(&two))]).unwrap_err();
        assert_eq!(e.at, ArgAt::Named(0));
        assert!(check(&sig, "f", &[], &[("days", None)]).is_err());
    }

    #[test]
    fn declarations_are_validated() {
        let bad = Signature::new().optional("days", ParamType::Integer, "x");
        assert_eq!(
            bad.validate("f"),
            Err("the default of parameter `days` of host function `f` must be an integer, found the string \"x\"".to_string())
        );
        let twice = Signature::new()
            .param("a", ParamType::Any)
            .param("a", ParamType::Any);
        assert!(twice.validate("f").unwrap_err().contains("twice"));
        let dash = Signature::new().param("a-b", ParamType::Any);
        assert!(dash.validate("f").unwrap_err().contains("is not a name"));
    }
}

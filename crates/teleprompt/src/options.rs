//! The choices a prompt or its host makes: syntax, strictness, error policy.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// A template syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Syntax {
    /// Jinja (minijinja), also for Django/pongo2-style prompts.
    Jinja,
    /// Go text/template.
    Go,
    /// Handlebars.
    Handlebars,
}

impl Syntax {
    /// The accepted names, for messages.
    pub const NAMES: &'static str = "jinja, go, handlebars";
    /// The extensions that name a syntax, for messages.
    pub const EXTENSIONS: &'static str = ".j2/.jinja, .gotmpl/.tmpl, .hbs/.handlebars";

    /// The syntax named by a file's extension, if any.
    pub fn from_path(path: &Path) -> Option<Syntax> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "j2" | "jinja" | "jinja2" => Some(Syntax::Jinja),
            "gotmpl" | "tmpl" => Some(Syntax::Go),
            "hbs" | "handlebars" => Some(Syntax::Handlebars),
            _ => None,
        }
    }

    /// The strictness a prompt gets when neither it nor the host sets one:
    /// `strict` for Go (its `missingkey=error`), `semi` for the others.
    pub fn default_strictness(self) -> Strictness {
        match self {
            Syntax::Go => Strictness::Strict,
            Syntax::Jinja | Syntax::Handlebars => Strictness::Semi,
        }
    }

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Syntax::Jinja => "jinja",
            Syntax::Go => "go",
            Syntax::Handlebars => "handlebars",
        }
    }
}

impl FromStr for Syntax {
    type Err = String;

    fn from_str(s: &str) -> Result<Syntax, String> {
        match s.to_ascii_lowercase().as_str() {
            "jinja" | "jinja2" => Ok(Syntax::Jinja),
            "go" | "gotmpl" | "go-template" => Ok(Syntax::Go),
            "handlebars" | "hbs" => Ok(Syntax::Handlebars),
            _ => Err(format!(
                "unknown syntax {s:?}: use one of {}",
                Syntax::NAMES
            )),
        }
    }
}

impl fmt::Display for Syntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a missing value does (a key absent from the data, not one set to null).
///
/// | level | printing / iterating | testing (`if`) |
/// |---|---|---|
/// | `strict` | error | error |
/// | `semi` | error | false |
/// | `lenient` | empty | false |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strictness {
    /// Every use of a missing value is an error.
    Strict,
    /// Testing a missing value is false; any other use is an error.
    Semi,
    /// Missing values print as nothing and test false.
    Lenient,
}

impl Strictness {
    /// The accepted names, for messages.
    pub const NAMES: &'static str = "strict, semi, lenient";

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Strictness::Strict => "strict",
            Strictness::Semi => "semi",
            Strictness::Lenient => "lenient",
        }
    }
}

impl FromStr for Strictness {
    type Err = String;

    fn from_str(s: &str) -> Result<Strictness, String> {
        match s {
            "strict" => Ok(Strictness::Strict),
            "semi" => Ok(Strictness::Semi),
            "lenient" => Ok(Strictness::Lenient),
            _ => Err(format!(
                "unknown strictness {s:?}: use one of {}",
                Strictness::NAMES
            )),
        }
    }
}

impl fmt::Display for Strictness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a render that fails returns (front matter `on_error`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OnError {
    /// Return the error (the default).
    #[default]
    Fail,
    /// Return the unrendered template text, and the error beside it.
    Original,
}

impl OnError {
    /// The accepted names, for messages.
    pub const NAMES: &'static str = "fail, original";
}

impl FromStr for OnError {
    type Err = String;

    fn from_str(s: &str) -> Result<OnError, String> {
        match s {
            "fail" => Ok(OnError::Fail),
            "original" => Ok(OnError::Original),
            _ => Err(format!(
                "unknown on_error {s:?}: use one of {}",
                OnError::NAMES
            )),
        }
    }
}

/// How prompts are loaded.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The syntax of prompts whose front matter and extension do not say.
    pub syntax: Option<Syntax>,
    /// Strictness for every prompt, over what the front matter says.
    pub strict: Option<Strictness>,
    /// Host functions the templates may call by name.
    pub functions: crate::functions::Functions,
}

/// How a prompt's template text marks message roles, besides `role` calls
/// (front matter `messages`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MessageReader {
    /// Only `role` calls start messages (the default).
    #[default]
    None,
    /// Semantic Kernel's `<message role="system">…</message>` blocks.
    SkTags,
    /// Prompty's lines `system:`, `user:`, `assistant:`.
    RoleLines,
}

impl MessageReader {
    /// The accepted names, for messages.
    pub const NAMES: &'static str = "none, sk-tags, role-lines";
}

impl FromStr for MessageReader {
    type Err = String;

    fn from_str(s: &str) -> Result<MessageReader, String> {
        match s {
            "none" => Ok(MessageReader::None),
            "sk-tags" => Ok(MessageReader::SkTags),
            "role-lines" => Ok(MessageReader::RoleLines),
            _ => Err(format!(
                "unknown message reader {s:?}: use one of {}",
                MessageReader::NAMES
            )),
        }
    }
}

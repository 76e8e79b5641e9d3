//! Chat messages: the typed result of a render, and conversation history.
//!
//! The flow of a chat render:
//!
//! 1. The render pipeline creates the role markers for the render (in its
//!    scope); template functions (`role`, `history`, `media`, Dotprompt's
//!    `section`) print their
//!    marker text.
//! 2. The output is cut at the markers into messages and the place of the
//!    history. Only markers with this render's secret count, so data can
//!    never create, close or change a message (`markers.rs` says how).
//! 3. [`parse_history`] reads the history, [`validate_history`] checks its
//!    tool calls, and the history (a [`History`], shared and grown by
//!    appending) is spliced among the rendered messages
//!    ([`crate::Rendered::conversation`]).
//! 4. [`shape`] writes the conversation as text, messages, an OpenAI or an
//!    Anthropic request body.

mod bedrock;
mod history;
mod markers;
mod provenance;
mod shapes;
mod shared_history;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub(crate) use self::history::{assemble, assemble_marked};
pub use self::history::{
    history_from_value, parse_history, validate_history, Entry, HistoryError, HistoryParseError,
    HistoryRule,
};
pub(crate) use self::markers::{Item, Markers, SectionSpan, SectionSpec, Setting, Split};
#[cfg(test)]
pub(crate) use self::markers::{SplitError, CLOSE, OPEN};
pub use self::provenance::{
    MappedMessage, MappedText, PrefixChange, Segment, SegmentKind, SourceMap, SourceSpan,
    StablePrefix,
};
pub(crate) use self::shapes::shape_marked;
pub use self::shapes::{shape, OutputFormat, ShapeError, UnknownFormat};
pub use self::shared_history::{History, HistoryIter};

/// Who speaks a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// Instructions from the application.
    System,
    /// Instructions from the application (OpenAI's newer name for system).
    Developer,
    /// The person (or program) talking to the model.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

impl Role {
    /// All roles, in the order messages usually use them.
    pub const ALL: [Role; 5] = [
        Role::System,
        Role::Developer,
        Role::User,
        Role::Assistant,
        Role::Tool,
    ];

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// The role named `name`, if any.
    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.as_str() == name)
    }
}

/// One part of a rendered message's content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image or other media, by URL or data URI.
    Media {
        /// `https://…` or `data:…`.
        url: String,
        /// The media type, e.g. `image/png`.
        content_type: String,
    },
    /// A named place the host fills before sending the message: a
    /// Dotprompt `{{section "output"}}` (Genkit puts its output
    /// instructions or context documents there). It holds nothing: the
    /// text output prints nothing for it, and the OpenAI and Anthropic
    /// shapes leave it out.
    Section {
        /// The section's name, as the template wrote it (`output`).
        name: String,
    },
    /// A cache breakpoint (`cache_breakpoint()`): the conversation up to
    /// here is a prefix the provider should cache. The Anthropic shape
    /// marks the block before it `cache_control`; the text output and the
    /// OpenAI shape print nothing for it (the texts on either side join as
    /// rendered).
    #[serde(rename = "cache_breakpoint")]
    CacheBreakpoint,
}

/// A message rendered from a prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// The content, in order.
    pub content: Vec<ContentPart>,
    /// Fields the template gave the message besides its role: the
    /// attributes of a Prompty role line (`user[name="Alice"]:` gives
    /// `name`). Empty for most messages.
    #[serde(default, flatten, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

/// A message of conversation history, in the OpenAI chat shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryMessage {
    /// Who spoke.
    pub role: Role,
    /// A string, an array of content parts, or absent (assistant tool calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
    /// Tool calls made by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Any other fields (`name`, `language`, …), kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool call in an assistant message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id that the tool result names.
    pub id: String,
    /// `function` in the OpenAI shape.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function called.
    #[serde(default)]
    pub function: ToolFunction,
}

/// The function of a [`ToolCall`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolFunction {
    /// The tool's name.
    #[serde(default)]
    pub name: String,
    /// The arguments as a JSON string (OpenAI's shape).
    #[serde(default)]
    pub arguments: String,
}

fn function_type() -> String {
    "function".to_string()
}

#[cfg(test)]
mod tests;

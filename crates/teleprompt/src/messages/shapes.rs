//! Output shapes: the conversation as plain text, as teleprompt's messages,
//! as an OpenAI chat request body, or as an Anthropic Messages request body
//! (the Bedrock Converse body is `bedrock.rs`'s).

use std::fmt;
use std::str::FromStr;

use serde_json::{json, Map, Value};

use super::history::Entry;
use super::{ContentPart, HistoryMessage, Message, Role, ToolCall};

/// The shapes a render's result can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum OutputFormat {
    /// The rendered text as a JSON string.
    #[default]
    Text,
    /// `{"messages": [...]}`: rendered messages as role + content parts,
    /// history messages as they came.
    Messages,
    /// `{"messages": [...]}` in the OpenAI chat completions shape.
    OpenAi,
    /// `{"system": "...", "messages": [...]}` in the Anthropic Messages shape.
    Anthropic,
    /// `{"system": [...], "messages": [...]}` in the Amazon Bedrock
    /// Converse shape (content blocks; a cache breakpoint is a
    /// `cachePoint`).
    Bedrock,
    /// `{"tokenizer", "total", "messages": [{"role", "count", "ids"}]}`:
    /// the tokens of each message, by the prompt's tokenizer
    /// ([`crate::Rendered::tokens`]).
    Tokens,
}

impl OutputFormat {
    /// All formats, in the order the CLI lists them.
    pub const ALL: [OutputFormat; 6] = [
        OutputFormat::Text,
        OutputFormat::Messages,
        OutputFormat::OpenAi,
        OutputFormat::Anthropic,
        OutputFormat::Bedrock,
        OutputFormat::Tokens,
    ];

    /// The name `FromStr` reads: `text`, `messages`, `openai`, `anthropic`,
    /// `bedrock`, `tokens`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputFormat::Text => "text",
            OutputFormat::Messages => "messages",
            OutputFormat::OpenAi => "openai",
            OutputFormat::Anthropic => "anthropic",
            OutputFormat::Bedrock => "bedrock",
            OutputFormat::Tokens => "tokens",
        }
    }
}

impl fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A format name that is not one of `text`, `messages`, `openai`,
/// `anthropic`, `bedrock`, `tokens`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown format \"{0}\": use one of \"text\", \"messages\", \"openai\", \"anthropic\", \"bedrock\", \"tokens\"")]
pub struct UnknownFormat(pub String);

impl FromStr for OutputFormat {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<OutputFormat, UnknownFormat> {
        OutputFormat::ALL
            .into_iter()
            .find(|format| format.as_str() == name)
            .ok_or_else(|| UnknownFormat(name.to_string()))
    }
}

/// A conversation that cannot be written in the requested shape.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("conversation[{index}]: {message}")]
pub struct ShapeError {
    /// The 0-based position of the message in the conversation (rendered
    /// messages and history together).
    pub index: usize,
    /// What cannot be written.
    pub message: String,
}

/// The conversation in `format`, as JSON.
///
/// `text` is the rendered text (used by [`OutputFormat::Text`] only);
/// `entries` is the conversation ([`crate::Rendered::conversation`]).
///
/// ```
/// use teleprompt::messages::{shape, Entry, Message, ContentPart, OutputFormat, Role};
/// use serde_json::json;
///
/// let system = Message { role: Role::System, content: vec![ContentPart::Text { text: "Be brief.".into() }], extra: Default::default() };
/// let user = Message { role: Role::User, content: vec![ContentPart::Text { text: "Hi".into() }], extra: Default::default() };
/// let entries = [Entry::Rendered(&system), Entry::Rendered(&user)];
/// assert_eq!(
///     shape(OutputFormat::Anthropic, "", &entries)?,
///     json!({"system": "Be brief.", "messages": [{"role": "user", "content": "Hi"}]}),
/// );
/// # Ok::<(), teleprompt::messages::ShapeError>(())
/// ```
pub fn shape(format: OutputFormat, text: &str, entries: &[Entry<'_>]) -> Result<Value, ShapeError> {
    shape_marked(format, text, entries, &[])
}

/// [`shape`], with the cache breakpoints that stand between entries: one
/// after the first `n` entries for each `n` of `marks` (a breakpoint right
/// after the history ends its last message).
pub(crate) fn shape_marked(
    format: OutputFormat,
    text: &str,
    entries: &[Entry<'_>],
    marks: &[usize],
) -> Result<Value, ShapeError> {
    match format {
        OutputFormat::Text => Ok(Value::String(text.to_string())),
        OutputFormat::Messages => Ok(json!({ "messages": entries })),
        OutputFormat::OpenAi => openai(entries),
        OutputFormat::Anthropic => anthropic(entries, marks),
        OutputFormat::Bedrock => super::bedrock::bedrock(entries, marks),
        OutputFormat::Tokens => Err(error(
            0,
            "tokens need the prompt's tokenizer: use Rendered::to_format or Rendered::tokens"
                .to_string(),
        )),
    }
}

pub(super) fn error(index: usize, message: String) -> ShapeError {
    ShapeError { index, message }
}

/// A `data:` URI, cut into its parts.
pub(super) struct DataUri<'a> {
    pub media_type: &'a str,
    pub base64: bool,
    pub data: &'a str,
}

pub(super) fn data_uri(url: &str) -> Option<DataUri<'_>> {
    let rest = url.strip_prefix("data:")?;
    let (header, data) = rest.split_once(',')?;
    let (media_type, base64) = match header.strip_suffix(";base64") {
        Some(media_type) => (media_type, true),
        None => (header, false),
    };
    let media_type = media_type.split(';').next().unwrap_or_default();
    Some(DataUri {
        media_type,
        base64,
        data,
    })
}

fn is_image(content_type: &str) -> bool {
    content_type.starts_with("image/")
}

/// The text of a message whose content is text only, if it is: its text
/// parts joined by a blank line. A section the host left unfilled holds
/// nothing: the texts on either side of it join as in the rendered text.
fn plain_text(content: &[ContentPart]) -> Option<String> {
    let mut texts: Vec<String> = Vec::new();
    let mut joins = false;
    for part in content {
        match part {
            ContentPart::Text { text } => match texts.last_mut() {
                Some(last) if joins => last.push_str(text),
                _ => texts.push(text.clone()),
            },
            ContentPart::Media { .. } => return None,
            ContentPart::Section { .. } | ContentPart::CacheBreakpoint => {}
        }
        joins = holds_nothing(part);
    }
    Some(texts.join("\n\n"))
}

/// A part that prints nothing: the texts on either side of it join.
fn holds_nothing(part: &ContentPart) -> bool {
    matches!(
        part,
        ContentPart::Section { .. } | ContentPart::CacheBreakpoint
    )
}

/// The parts a provider is sent: all but the sections the host left
/// unfilled and the cache breakpoints (a shape that has them marks the
/// part before).
fn sent_parts(content: &[ContentPart]) -> impl Iterator<Item = &ContentPart> {
    content.iter().filter(|part| !holds_nothing(part))
}

// ---------------------------------------------------------------- OpenAI

fn openai(entries: &[Entry<'_>]) -> Result<Value, ShapeError> {
    let mut messages = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        messages.push(match entry {
            Entry::Rendered(message) => openai_rendered(index, message)?,
            Entry::History(message) => openai_history(index, message)?,
        });
    }
    Ok(json!({ "messages": messages }))
}

fn history_json(index: usize, message: &HistoryMessage) -> Result<Value, ShapeError> {
    serde_json::to_value(message)
        .map_err(|e| error(index, format!("cannot write the history message: {e}")))
}

/// Fields of a chat message the OpenAI API accepts; others a host keeps in
/// its history (Rapida's `language`) are left out, as the API rejects them.
const OPENAI_MESSAGE_FIELDS: &[&str] = &[
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "name",
    "refusal",
    "audio",
];

fn openai_history(index: usize, message: &HistoryMessage) -> Result<Value, ShapeError> {
    let mut value = history_json(index, message)?;
    if let Value::Object(fields) = &mut value {
        fields.retain(|key, _| OPENAI_MESSAGE_FIELDS.contains(&key.as_str()));
    }
    Ok(value)
}

fn openai_rendered(index: usize, message: &Message) -> Result<Value, ShapeError> {
    let content = match plain_text(&message.content) {
        Some(text) => Value::String(text),
        None => Value::Array(
            sent_parts(&message.content)
                .map(|part| openai_part(index, part))
                .collect::<Result<_, _>>()?,
        ),
    };
    let mut value = json!({ "role": message.role.as_str(), "content": content });
    if let Value::Object(fields) = &mut value {
        // A role line's attributes the API accepts (`name`), as Prompty
        // sends them; others stay in the `messages` shape only.
        for (key, field) in &message.extra {
            if OPENAI_MESSAGE_FIELDS.contains(&key.as_str()) && !fields.contains_key(key) {
                fields.insert(key.clone(), field.clone());
            }
        }
    }
    Ok(value)
}

fn openai_part(index: usize, part: &ContentPart) -> Result<Value, ShapeError> {
    let (url, content_type) = match part {
        ContentPart::Text { text } => return Ok(json!({ "type": "text", "text": text })),
        ContentPart::Media { url, content_type } => (url.as_str(), content_type.as_str()),
        // Left out by `sent_parts`.
        ContentPart::Section { .. } | ContentPart::CacheBreakpoint => {
            return Ok(json!({ "type": "text", "text": "" }))
        }
    };
    if is_image(content_type) {
        return Ok(json!({ "type": "image_url", "image_url": { "url": url } }));
    }
    let audio_format = match content_type {
        "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
        "audio/mpeg" | "audio/mp3" => Some("mp3"),
        _ => None,
    };
    match (data_uri(url), audio_format) {
        (
            Some(DataUri {
                base64: true, data, ..
            }),
            Some(format),
        ) => Ok(json!({
            "type": "input_audio",
            "input_audio": { "data": data, "format": format },
        })),
        (Some(_), None) => Ok(json!({ "type": "file", "file": { "file_data": url } })),
        _ => Err(error(
            index,
            format!(
                "OpenAI chat takes {content_type} media only as a base64 data: URI, not {}",
                short(url)
            ),
        )),
    }
}

// ------------------------------------------------------------- Anthropic

/// Builds the Anthropic body: system text lifted out, tool results merged.
#[derive(Default)]
struct AnthropicBody {
    /// The system prompt's pieces: each text, whether a cache breakpoint
    /// ends it, and whether it goes on the text before it (a breakpoint
    /// stood between them) rather than after a blank line.
    system: Vec<SystemPiece>,
    messages: Vec<Value>,
    /// Whether the last message is a user message of tool results only, so
    /// that the next tool result joins it.
    open_tool_results: bool,
    /// The cache breakpoints placed.
    breakpoints: usize,
}

struct SystemPiece {
    text: String,
    cached: bool,
    joins: bool,
}

/// The most cache breakpoints a request may have (Anthropic's limit, and
/// Bedrock's cache points).
const MOST_BREAKPOINTS: usize = 4;

/// An error of the shape when a request would hold more cache breakpoints
/// than the provider takes (`count` of them, `what` in its words).
pub(super) fn within_breakpoints(
    provider: &str,
    what: &str,
    count: usize,
) -> Result<(), ShapeError> {
    if count <= MOST_BREAKPOINTS {
        return Ok(());
    }
    Err(error(
        0,
        format!("{provider} takes at most {MOST_BREAKPOINTS} {what} in a request; this conversation has {count}"),
    ))
}

impl AnthropicBody {
    fn push(&mut self, role: &str, content: Value) {
        self.messages
            .push(json!({ "role": role, "content": content }));
        self.open_tool_results = false;
    }

    fn push_tool_result(&mut self, block: Value) {
        if self.open_tool_results {
            if let Some(Value::Array(blocks)) = self
                .messages
                .last_mut()
                .and_then(|message| message.get_mut("content"))
            {
                blocks.push(block);
                return;
            }
        }
        self.push("user", Value::Array(vec![block]));
        self.open_tool_results = true;
    }

    /// Marks the last block so far `cache_control` (a message's string
    /// content becomes one text block).
    fn cache_last(&mut self) {
        let marked = match self
            .messages
            .last_mut()
            .and_then(|message| message.get_mut("content"))
        {
            Some(content) => {
                if let Value::String(text) = content {
                    *content = Value::Array(vec![text_block(text)]);
                }
                match content.as_array_mut().and_then(|blocks| blocks.last_mut()) {
                    Some(Value::Object(block)) => {
                        block.insert("cache_control".into(), json!({ "type": "ephemeral" }));
                        true
                    }
                    _ => false,
                }
            }
            None => match self.system.last_mut() {
                Some(piece) => {
                    piece.cached = true;
                    true
                }
                None => false,
            },
        };
        self.breakpoints += usize::from(marked);
    }

    fn finish(self) -> Result<Value, ShapeError> {
        within_breakpoints("Anthropic", "cache breakpoints", self.breakpoints)?;
        let mut body = Map::new();
        if !self.system.is_empty() {
            let system = match self.system.iter().any(|piece| piece.cached) {
                // Blocks, so that one can carry `cache_control`.
                true => Value::Array(
                    self.system
                        .iter()
                        .filter(|piece| !piece.text.trim().is_empty())
                        .map(|piece| {
                            let mut block = text_block(&piece.text);
                            if piece.cached {
                                block["cache_control"] = json!({ "type": "ephemeral" });
                            }
                            block
                        })
                        .collect(),
                ),
                false => {
                    let mut text = String::new();
                    for (at, piece) in self.system.iter().enumerate() {
                        if at > 0 && !piece.joins {
                            text.push_str("\n\n");
                        }
                        text.push_str(&piece.text);
                    }
                    Value::String(text)
                }
            };
            body.insert("system".into(), system);
        }
        body.insert("messages".into(), Value::Array(self.messages));
        Ok(Value::Object(body))
    }
}

fn anthropic(entries: &[Entry<'_>], marks: &[usize]) -> Result<Value, ShapeError> {
    let mut body = AnthropicBody::default();
    for (index, entry) in entries.iter().enumerate() {
        match entry {
            Entry::Rendered(message) => anthropic_rendered(&mut body, index, message)?,
            Entry::History(message) => anthropic_history(&mut body, index, message)?,
        }
        if marks.contains(&(index + 1)) {
            body.cache_last();
        }
    }
    body.finish()
}

pub(super) fn is_system(role: Role) -> bool {
    matches!(role, Role::System | Role::Developer)
}

/// Anthropic and Bedrock have two speakers: a rendered `tool` message
/// (which has no call id to answer) is sent as the user's.
pub(super) fn two_speakers(role: Role) -> &'static str {
    match role {
        Role::Assistant => "assistant",
        _ => "user",
    }
}

fn anthropic_rendered(
    body: &mut AnthropicBody,
    index: usize,
    message: &Message,
) -> Result<(), ShapeError> {
    let breakpoints = message.content.contains(&ContentPart::CacheBreakpoint);
    if is_system(message.role) {
        if plain_text(&message.content).is_none() {
            return Err(error(
                index,
                "Anthropic's system prompt is text only; move media out of the system message"
                    .into(),
            ));
        }
        // Each run of text up to a breakpoint is a piece; a Dotprompt
        // section left unfilled joins the texts on either side.
        let mut before: Option<&ContentPart> = None;
        for part in &message.content {
            match (part, before) {
                (ContentPart::Text { text }, Some(ContentPart::Section { .. })) => {
                    match body.system.last_mut() {
                        Some(piece) => piece.text.push_str(text),
                        None => body.system.push(SystemPiece {
                            text: text.clone(),
                            cached: false,
                            joins: false,
                        }),
                    }
                }
                (ContentPart::Text { text }, before) => body.system.push(SystemPiece {
                    text: text.clone(),
                    cached: false,
                    joins: before == Some(&ContentPart::CacheBreakpoint),
                }),
                (ContentPart::CacheBreakpoint, _) => body.cache_last(),
                _ => {}
            }
            before = Some(part);
        }
        return Ok(());
    }
    let content = match (plain_text(&message.content), breakpoints) {
        (Some(text), false) => Value::String(text),
        _ => {
            let (blocks, marked) = anthropic_blocks(index, &message.content)?;
            body.breakpoints += marked;
            Value::Array(blocks)
        }
    };
    body.push(two_speakers(message.role), content);
    Ok(())
}

/// A message's parts as Anthropic blocks: texts that an unfilled section
/// stood between join, and the block a breakpoint ends carries
/// `cache_control`; with how many it marked.
fn anthropic_blocks(
    index: usize,
    content: &[ContentPart],
) -> Result<(Vec<Value>, usize), ShapeError> {
    let mut blocks: Vec<Value> = Vec::new();
    let mut marked = 0;
    let mut before: Option<&ContentPart> = None;
    for part in content {
        match (part, before) {
            (ContentPart::Text { text }, Some(ContentPart::Section { .. })) => {
                match blocks.last_mut().and_then(|block| block.get_mut("text")) {
                    Some(Value::String(last)) => last.push_str(text),
                    _ => blocks.push(text_block(text)),
                }
            }
            (ContentPart::CacheBreakpoint, _) => {
                if let Some(Value::Object(block)) = blocks.last_mut() {
                    if !block.contains_key("cache_control") {
                        block.insert("cache_control".into(), json!({ "type": "ephemeral" }));
                        marked += 1;
                    }
                }
            }
            (ContentPart::Section { .. }, _) => {}
            (part, _) => blocks.push(anthropic_part(index, part)?),
        }
        before = Some(part);
    }
    Ok((blocks, marked))
}

fn anthropic_part(index: usize, part: &ContentPart) -> Result<Value, ShapeError> {
    match part {
        ContentPart::Text { text } => Ok(text_block(text)),
        ContentPart::Media { url, content_type } => media_block(index, url, content_type),
        // Left out by `sent_parts`.
        ContentPart::Section { .. } | ContentPart::CacheBreakpoint => Ok(text_block("")),
    }
}

fn text_block(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

/// An `image` (or, for PDF, `document`) block with a base64 or URL source.
fn media_block(index: usize, url: &str, content_type: &str) -> Result<Value, ShapeError> {
    let kind = if is_image(content_type) {
        "image"
    } else if content_type == "application/pdf" {
        "document"
    } else {
        return Err(error(
            index,
            format!("Anthropic messages take images and PDFs, not {content_type}"),
        ));
    };
    let source = match data_uri(url) {
        Some(DataUri {
            base64: true, data, ..
        }) => json!({ "type": "base64", "media_type": content_type, "data": data }),
        Some(_) => {
            return Err(error(
                index,
                format!(
                    "Anthropic messages need base64 data: URIs; {} is not base64",
                    short(url)
                ),
            ))
        }
        None => json!({ "type": "url", "url": url }),
    };
    Ok(json!({ "type": kind, "source": source }))
}

fn anthropic_history(
    body: &mut AnthropicBody,
    index: usize,
    message: &HistoryMessage,
) -> Result<(), ShapeError> {
    if is_system(message.role) {
        body.system.push(SystemPiece {
            text: content_text(message.content.as_ref()),
            cached: false,
            joins: false,
        });
        return Ok(());
    }
    if message.role == Role::Tool {
        let id = message.tool_call_id.as_deref().ok_or_else(|| {
            error(
                index,
                "a tool result without \"tool_call_id\" cannot be sent to Anthropic".into(),
            )
        })?;
        let mut block = Map::new();
        block.insert("type".into(), "tool_result".into());
        block.insert("tool_use_id".into(), id.into());
        if let Some(content) = history_content(index, message.content.as_ref())? {
            block.insert("content".into(), content);
        }
        body.push_tool_result(Value::Object(block));
        return Ok(());
    }
    let content = history_content(index, message.content.as_ref())?;
    if message.tool_calls.is_empty() {
        body.push(
            two_speakers(message.role),
            content.unwrap_or_else(|| Value::String(String::new())),
        );
        return Ok(());
    }
    let mut blocks = match content {
        Some(Value::String(text)) if text.trim().is_empty() => Vec::new(),
        Some(Value::String(text)) => vec![text_block(&text)],
        Some(Value::Array(blocks)) => blocks,
        Some(other) => vec![other],
        None => Vec::new(),
    };
    for call in &message.tool_calls {
        blocks.push(tool_use(index, call)?);
    }
    body.push(two_speakers(message.role), Value::Array(blocks));
    Ok(())
}

fn tool_use(index: usize, call: &ToolCall) -> Result<Value, ShapeError> {
    let input = tool_input(index, call)?;
    Ok(json!({ "type": "tool_use", "id": call.id, "name": call.function.name, "input": input }))
}

/// A tool call's arguments as the JSON value they spell (`{}` for none).
pub(super) fn tool_input(index: usize, call: &ToolCall) -> Result<Value, ShapeError> {
    let arguments = call.function.arguments.trim();
    if arguments.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(arguments).map_err(|e| {
        error(
            index,
            format!(
                "the arguments of tool call \"{}\" are not JSON: {e}",
                call.id
            ),
        )
    })
}

/// History content in Anthropic's shape: a string stays a string; OpenAI
/// parts become blocks (`image_url` → `image`); other parts pass through.
fn history_content(index: usize, content: Option<&Value>) -> Result<Option<Value>, ShapeError> {
    match content {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(parts)) => Ok(Some(Value::Array(
            parts
                .iter()
                .map(|part| history_part(index, part))
                .collect::<Result<_, _>>()?,
        ))),
        Some(other) => Ok(Some(other.clone())),
    }
}

fn history_part(index: usize, part: &Value) -> Result<Value, ShapeError> {
    if part.get("type").and_then(Value::as_str) != Some("image_url") {
        return Ok(part.clone());
    }
    let url = part
        .get("image_url")
        .and_then(|image| image.get("url").or(Some(image)))
        .and_then(Value::as_str)
        .ok_or_else(|| error(index, "an image_url part has no URL".into()))?;
    let media_type = data_uri(url)
        .map(|uri| uri.media_type)
        .filter(|media_type| !media_type.is_empty())
        .unwrap_or("image/*");
    media_block(index, url, media_type)
}

/// The text of history content: a string, or its text parts joined by a
/// blank line.
pub(super) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

/// A URL cut to a length that fits in an error message.
pub(super) fn short(url: &str) -> String {
    match url.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", url.get(..cut).unwrap_or(url)),
        None => url.to_string(),
    }
}

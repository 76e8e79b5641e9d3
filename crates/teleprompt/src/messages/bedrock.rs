//! The Amazon Bedrock Converse shape: `{"system": [...], "messages":
//! [...]}` as the Converse API's JSON takes it — system text blocks, user
//! and assistant messages of content blocks (`text`, `image`, `document`,
//! `toolUse`, `toolResult`), and a `cachePoint` block where the template
//! put a cache breakpoint. Media travel as base64 in `source.bytes` (the
//! API's JSON; an SDK that takes raw bytes wants them decoded).

use serde_json::{json, Map, Value};

use super::history::Entry;
use super::shapes::{
    content_text, data_uri, error, is_system, short, tool_input, two_speakers, within_breakpoints,
    ShapeError,
};
use super::{ContentPart, HistoryMessage, Message, Role};

/// The body being built.
#[derive(Default)]
struct Body {
    system: Vec<Value>,
    messages: Vec<Value>,
    /// Whether the last message holds tool results only, so that the next
    /// result joins it.
    open_tool_results: bool,
    breakpoints: usize,
}

impl Body {
    fn push(&mut self, role: &str, content: Vec<Value>) {
        self.messages
            .push(json!({ "role": role, "content": content }));
        self.open_tool_results = false;
    }

    /// A `cachePoint` block after the last block so far: in the message
    /// being written, else the last message, else the system prompt.
    fn cache_point(&mut self, blocks: Option<&mut Vec<Value>>) {
        let point = json!({ "cachePoint": { "type": "default" } });
        let placed = match blocks {
            Some(blocks) if !blocks.is_empty() => {
                push_point(blocks, point);
                true
            }
            _ => match self
                .messages
                .last_mut()
                .and_then(|message| message.get_mut("content"))
                .and_then(Value::as_array_mut)
            {
                Some(blocks) => {
                    push_point(blocks, point);
                    true
                }
                None if !self.system.is_empty() => {
                    push_point(&mut self.system, point);
                    true
                }
                None => false,
            },
        };
        self.breakpoints += usize::from(placed);
    }
}

/// A cache point after the blocks, unless one ends them already.
fn push_point(blocks: &mut Vec<Value>, point: Value) {
    if blocks
        .last()
        .and_then(|block| block.get("cachePoint"))
        .is_none()
    {
        blocks.push(point);
    }
}

pub(super) fn bedrock(entries: &[Entry<'_>], marks: &[usize]) -> Result<Value, ShapeError> {
    let mut body = Body::default();
    for (index, entry) in entries.iter().enumerate() {
        match entry {
            Entry::Rendered(message) => rendered(&mut body, index, message)?,
            Entry::History(message) => history(&mut body, index, message)?,
        }
        if marks.contains(&(index + 1)) {
            body.cache_point(None);
        }
    }
    within_breakpoints("Bedrock", "cache points", body.breakpoints)?;
    let mut out = Map::new();
    if !body.system.is_empty() {
        out.insert("system".into(), Value::Array(body.system));
    }
    out.insert("messages".into(), Value::Array(body.messages));
    Ok(Value::Object(out))
}

fn text_block(text: &str) -> Value {
    json!({ "text": text })
}

fn rendered(body: &mut Body, index: usize, message: &Message) -> Result<(), ShapeError> {
    let system = is_system(message.role);
    let mut blocks: Vec<Value> = Vec::new();
    let mut joins = false;
    for part in &message.content {
        match part {
            ContentPart::Text { text } => {
                let last = blocks.last_mut().and_then(|block| block.get_mut("text"));
                match (joins, last) {
                    (true, Some(Value::String(before))) => before.push_str(text),
                    _ if text.trim().is_empty() => {}
                    _ => blocks.push(text_block(text)),
                }
            }
            ContentPart::Media { .. } if system => {
                return Err(error(
                    index,
                    "Bedrock's system prompt is text only; move media out of the system message"
                        .into(),
                ))
            }
            ContentPart::Media { url, content_type } => {
                blocks.push(media_block(index, url, content_type)?)
            }
            ContentPart::Section { .. } => {}
            ContentPart::CacheBreakpoint => match system {
                true => {
                    body.system.append(&mut blocks);
                    body.cache_point(None);
                }
                false => body.cache_point(Some(&mut blocks)),
            },
        }
        joins = matches!(part, ContentPart::Section { .. });
    }
    match system {
        true => body.system.append(&mut blocks),
        false if !blocks.is_empty() => body.push(two_speakers(message.role), blocks),
        false => {}
    }
    Ok(())
}

/// An `image` (PNG, JPEG, GIF, WebP) or PDF `document` block, from a
/// base64 `data:` URI: the Converse API takes bytes (or S3), not URLs.
fn media_block(index: usize, url: &str, content_type: &str) -> Result<Value, ShapeError> {
    let data = match data_uri(url) {
        Some(uri) if uri.base64 => uri.data,
        _ => {
            return Err(error(
                index,
                format!(
                    "Bedrock takes media as bytes: pass a base64 data: URI, not {}",
                    short(url)
                ),
            ))
        }
    };
    let image = match content_type {
        "image/png" => Some("png"),
        "image/jpeg" | "image/jpg" => Some("jpeg"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        _ => None,
    };
    match (image, content_type) {
        (Some(format), _) => {
            Ok(json!({ "image": { "format": format, "source": { "bytes": data } } }))
        }
        (None, "application/pdf") => Ok(json!({
            "document": { "format": "pdf", "name": format!("document-{index}"), "source": { "bytes": data } }
        })),
        _ => Err(error(
            index,
            format!(
                "Bedrock messages take PNG, JPEG, GIF and WebP images and PDFs, not {content_type}"
            ),
        )),
    }
}

fn history(body: &mut Body, index: usize, message: &HistoryMessage) -> Result<(), ShapeError> {
    if is_system(message.role) {
        let text = content_text(message.content.as_ref());
        if !text.trim().is_empty() {
            body.system.push(text_block(&text));
        }
        return Ok(());
    }
    if message.role == Role::Tool {
        let id = message.tool_call_id.as_deref().ok_or_else(|| {
            error(
                index,
                "a tool result without \"tool_call_id\" cannot be sent to Bedrock".into(),
            )
        })?;
        let text = content_text(message.content.as_ref());
        let result = json!({ "toolResult": { "toolUseId": id, "content": [text_block(&text)] } });
        if body.open_tool_results {
            if let Some(blocks) = body
                .messages
                .last_mut()
                .and_then(|last| last.get_mut("content"))
                .and_then(Value::as_array_mut)
            {
                blocks.push(result);
                return Ok(());
            }
        }
        body.push("user", vec![result]);
        body.open_tool_results = true;
        return Ok(());
    }
    let mut blocks = history_blocks(index, message.content.as_ref())?;
    for call in &message.tool_calls {
        let input = tool_input(index, call)?;
        blocks.push(json!({ "toolUse": { "toolUseId": call.id, "name": call.function.name, "input": input } }));
    }
    if !blocks.is_empty() {
        body.push(two_speakers(message.role), blocks);
    }
    Ok(())
}

/// A history message's content as blocks: a string is one text block;
/// OpenAI parts are text blocks and images (from base64 data URIs).
fn history_blocks(index: usize, content: Option<&Value>) -> Result<Vec<Value>, ShapeError> {
    match content {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(Vec::new()),
        Some(Value::String(text)) => Ok(vec![text_block(text)]),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part.get("type").and_then(Value::as_str) {
                Some("text") => part
                    .get("text")
                    .and_then(Value::as_str)
                    .filter(|text| !text.trim().is_empty())
                    .map(|text| Ok(text_block(text))),
                Some("image_url") => {
                    let url = part
                        .get("image_url")
                        .and_then(|image| image.get("url").or(Some(image)))
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let media_type = data_uri(url).map_or("", |uri| uri.media_type);
                    Some(media_block(index, url, media_type))
                }
                _ => Some(Err(error(
                    index,
                    format!(
                        "Bedrock takes text and image parts, not {}",
                        short(&part.to_string())
                    ),
                ))),
            })
            .collect(),
        Some(other) => Ok(vec![text_block(&other.to_string())]),
    }
}

//! A compiled prompt + data → text and messages: the prompt's defaults
//! under the data, the declared inputs checked, the template rendered,
//! its output cut into messages at the role markers, and the turn's
//! history placed.

mod budget;
pub(crate) mod growth;
pub(crate) mod prefix;
mod record;
pub(crate) mod rendered;
pub(crate) mod source_map;

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::context::{self, PromptContext};
use crate::data::Data;
use crate::diagnostics::{Error, ErrorClass};
use crate::document;
use crate::load::formats::dotprompt;
use crate::load::Compiled;
use crate::messages::{History, HistoryMessage};
use crate::options::RenderOptions;
use crate::options::{OnError, Syntax};
use crate::schema::MAX_VIOLATIONS;
use crate::scope::{RenderScope, Stop};
use rendered::{RenderOutput, Rendered};

/// What a render adds to the data: the conversation around it.
#[derive(Default)]
struct Turn {
    /// The current time of the render.
    now: Option<jiff::Zoned>,
    history: History,
    continuation: bool,
    warnings: Vec<String>,
    /// When the host wants the render stopped.
    stop: Stop,
    /// Whether to record a source map.
    source_map: bool,
}

/// Renders `compiled` against plain data, the prompt's defaults under it.
pub(crate) fn render(
    compiled: &Arc<Compiled>,
    data: Data,
    options: &RenderOptions,
) -> Result<Rendered, Error> {
    let data = match &compiled.defaults {
        Some(defaults) => data.over_data(
            compiled
                .defaults_layer
                .get_or_init(|| Data::new(defaults.clone())),
        ),
        None => data,
    };
    let data = with_context(compiled, data, options)?;
    let turn = Turn {
        now: Some(options.clock.now().to_zoned(jiff::tz::TimeZone::UTC)),
        stop: Stop::new(options.deadline, options.cancel.clone()),
        source_map: options.source_map,
        ..Turn::default()
    };
    let rendered =
        render_data(compiled, &data, turn).map(|rendered| with_tokenizer(rendered, options))?;
    match &compiled.budget {
        // No history here: a budget cuts the sections alone.
        Some(settings) => budget::fit(
            rendered,
            settings,
            compiled,
            &PromptContext::new(),
            |_: &PromptContext| Err(Error::new(ErrorClass::Render, "nothing to cut")),
        ),
        None => Ok(rendered),
    }
}

/// The host's tokenizer for this render, over the prompt's.
fn with_tokenizer(mut rendered: Rendered, options: &RenderOptions) -> Rendered {
    if let Some(tokenizer) = &options.tokenizer {
        rendered.tokenizer = Some(tokenizer.clone());
    }
    rendered
}

/// Renders one turn of a conversation from `context`; every error
/// carries the context's labels.
pub(crate) fn render_turn(
    compiled: &Arc<Compiled>,
    context: &PromptContext,
    options: &RenderOptions,
) -> Result<Rendered, Error> {
    let labels = context.labels();
    let label = |error: Error| error.with_labels(labels);
    if options.validate_history {
        context.validate_history().map_err(|error| {
            let rule = format!("rule {}: {}", error.rule.name(), error.rule.description());
            label(Error::new(ErrorClass::Input, error.to_string()).with_suggestion(Some(rule)))
        })?;
    }
    let rendered = render_context(compiled, context, options);
    let rendered = match (rendered, &compiled.budget) {
        (Ok(rendered), Some(settings)) => budget::fit(
            rendered,
            settings,
            compiled,
            context,
            |context: &PromptContext| render_context(compiled, context, options),
        ),
        (rendered, _) => rendered,
    };
    let mut rendered = rendered.map_err(label)?;
    rendered.recovered = rendered.recovered.map(label);
    Ok(rendered)
}

/// One turn's render, the context checked already.
fn render_context(
    compiled: &Arc<Compiled>,
    context: &PromptContext,
    options: &RenderOptions,
) -> Result<Rendered, Error> {
    let reads = |name: &str| compiled.reads(name);
    let built = context.build_with_defaults(&reads, compiled.defaults.clone())?;
    let turn = Turn {
        now: Some(context.now()),
        history: context.history().clone(),
        continuation: context.is_continuation(),
        warnings: built.warnings,
        stop: Stop::new(options.deadline, options.cancel.clone()),
        source_map: options.source_map,
    };
    let data = with_context(compiled, built.data, options)?;
    render_data(compiled, &data, turn).map(|rendered| with_tokenizer(rendered, options))
}

fn render_data(compiled: &Arc<Compiled>, data: &Data, mut turn: Turn) -> Result<Rendered, Error> {
    check_required(compiled, data)?;
    check_schema(compiled, data)?;
    if let Some(thread) = thread_history(compiled, data)? {
        if !turn.history.is_empty() {
            return Err(Error::new(
                ErrorClass::Input,
                format!(
                    "the turn has a history and the data the thread input `{}`: pass the conversation once",
                    compiled.thread.as_deref().unwrap_or_default()
                ),
            )
            .with_file(compiled.origin()));
        }
        turn.history = History::from(thread);
    }
    if let Some(schema) = &compiled.schema {
        turn.warnings.extend(schema.near_misses(data.root()));
    }
    let now = turn
        .now
        .unwrap_or_else(|| jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC));
    let tool_use = compiled.tool_use.is_some()
        && data
            .root()
            .get("tools")
            .is_some_and(|t| !t.value().is_null());
    let (document, template) = compiled.template_for(tool_use);
    // The thread input is the conversation, not the template's data (in
    // Prompty the template sees a placeholder in its place): without it,
    // its name cannot hide the `history` call its print became.
    let without_thread = compiled
        .thread
        .as_deref()
        .filter(|name| data.root().get(name).is_some())
        .map(|name| {
            let mut value = data.root().to_json();
            if let Value::Object(map) = &mut value {
                map.shift_remove(name);
            }
            Data::new(value)
        });
    let data = without_thread.as_ref().unwrap_or(data);
    let mut scope = RenderScope::new(now, template.limits())
        .with_stop(turn.stop)
        .with_trace(turn.source_map);
    let output = template.render(data, &mut scope);
    let trace = scope.trace.take();
    // A render the host stopped ends with that, whatever error the
    // stopped evaluator gave (and `on_error: original` does not hide it).
    if let (Err(_), Err(over)) = (&output, scope.stop.check()) {
        let error = Error::new(ErrorClass::Render, over.to_string()).with_file(compiled.origin());
        return Err(match over.stop_kind() {
            Some(kind) => error.with_kind(kind),
            None => error,
        });
    }
    let markers = scope.markers();
    let split = output
        .map_err(|error| document.locate(error))
        .and_then(|output| split_output(compiled, markers, output));
    let ((split, output), recovered) = match split {
        Ok(split) => (split, None),
        Err(error) if compiled.on_error == OnError::Original => (
            (RenderOutput::plain(document.body.clone()), None),
            Some(error),
        ),
        Err(error) => return Err(error),
    };
    // What wrote the output: the template's body itself when the render
    // fell back to it.
    let trace = trace.map(|mut trace| {
        if recovered.is_some() {
            trace.chunks.clear();
            let len = split.text.len();
            trace.push(0..len, 0..len, crate::scope::Wrote::Text);
        }
        trace
    });
    let (split, fixed) = match turn.continuation && split.text.trim().is_empty() {
        true => {
            let fallback =
                context::continuation_fallback("", true, compiled.continuation_prompt.as_deref());
            (RenderOutput::plain(fallback.to_string()), true)
        }
        false => (split, false),
    };
    let split = match fixed {
        false => with_auto_breakpoints(compiled, split, &turn.history),
        true => split,
    };
    let mapped = trace.map(|trace| {
        let printed = output.as_deref().unwrap_or(&split.text);
        (trace, markers.ranges_in(printed))
    });
    // A budget cuts the sections in the output as printed.
    let budgeted = compiled.budget.is_some() && !split.sections.is_empty();
    let printed = output.filter(|_| budgeted && !fixed).map(|output| {
        Arc::new(Printed {
            sections: split.sections.clone(),
            output,
            markers: markers.clone(),
        })
    });
    let mut rendered = Rendered {
        text: split.text,
        items: split.items.map_or_else(OnceLock::new, OnceLock::from),
        default_role: compiled.default_role,
        generations: split.generations,
        history: turn.history,
        warnings: turn.warnings,
        recovered,
        tokenizer: compiled.tokenizer.clone(),
        chat_template: (compiled.syntax == Syntax::ChatTemplate)
            .then_some(compiled.generation_blocks),
        budget: None,
        printed,
        source_map: None,
        cache_key: compiled.cache_key.clone(),
    };
    // The map is built when the host first asks for it.
    rendered.source_map = mapped.map(|(trace, markers)| {
        Arc::new(source_map::Lazy::new(source_map::Recorded {
            trace: *trace,
            markers,
            fixed,
            compiled: Arc::clone(compiled),
            tool_use,
            data: data.clone(),
        }))
    });
    Ok(rendered)
}

/// `output` cut at `markers` into messages, by the prompt's rules, and
/// `output` given back when the split only read it (not when it became
/// the text of the one message).
pub(super) fn split_output(
    compiled: &Compiled,
    markers: &crate::messages::Markers,
    output: String,
) -> Result<(RenderOutput, Option<String>), Error> {
    if !compiled.role_lines && !compiled.dotprompt && !markers.made_any() {
        // No marker: the whole text is one message of the default role,
        // made when first asked for.
        return Ok((RenderOutput::plain(output), None));
    }
    let split = match (compiled.role_lines, compiled.dotprompt) {
        (true, _) => markers.split_prompty(&output, compiled.default_role),
        (_, true) => markers.split_dotprompt(&output, compiled.default_role),
        _ => markers.split(&output, compiled.default_role),
    };
    match split {
        Ok(split) => Ok((RenderOutput::from(split), Some(output))),
        Err(error) => {
            Err(Error::new(ErrorClass::Render, error.to_string()).with_file(compiled.origin()))
        }
    }
}

/// A render's output as the template printed it (markers and all), kept
/// for a budget that cuts its sections.
#[derive(Debug)]
pub(crate) struct Printed {
    output: String,
    markers: crate::messages::Markers,
    sections: Vec<crate::messages::SectionSpan>,
}

/// `data` with the host's render context on top, where a Dotprompt
/// template's `@state`, `@auth`, … read it. Data that holds the
/// context's reserved key itself is an `input` error: it could
/// otherwise pose as the host's context (layers merge deeply).
fn with_context(compiled: &Compiled, data: Data, options: &RenderOptions) -> Result<Data, Error> {
    let key = dotprompt::CONTEXT_KEY;
    if !compiled.dotprompt {
        return Ok(data);
    }
    if data.root().get(key).is_some() {
        return Err(Error::new(
            ErrorClass::Input,
            "the data holds the key reserved for the host's render context: \
             pass the context in RenderOptions::context",
        )
        .with_file(compiled.origin()));
    }
    // Without a context, an empty one: `@auth` is then missing as
    // `auth`, not as the reserved key.
    let context = options
        .context
        .as_deref()
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let mut layer = Map::new();
    layer.insert(key.to_string(), context);
    Ok(data.under(Value::Object(layer)))
}

/// The value of the prompt's thread input (Prompty's `kind: thread`) as
/// history messages, checked as a turn's history is: `None` when the
/// prompt has none or the data leaves it out (or null). Prompty's own
/// message shape (content parts `{kind: text, value}`) is read too, and
/// a content of text parts only is their text, joined, as Prompty sends
/// it.
fn thread_history(compiled: &Compiled, data: &Data) -> Result<Option<Vec<HistoryMessage>>, Error> {
    let Some(name) = compiled.thread.as_deref() else {
        return Ok(None);
    };
    let value = match data.root().get(name) {
        None => return Ok(None),
        Some(view) if view.value().is_null() => return Ok(None),
        Some(view) => view.value().clone(),
    };
    let bad = |why: String| {
        Error::new(
            ErrorClass::Input,
            format!("the thread input `{name}` must be a list of messages: {why}"),
        )
        .with_file(compiled.origin())
        .with_path(Some(name.to_string()))
    };
    let Value::Array(messages) = value else {
        return Err(bad(format!("found {}", crate::data::describe(&value))));
    };
    let messages = messages.into_iter().map(prompty_message).collect();
    let history = crate::messages::history_from_value(Value::Array(messages))
        .map_err(|error| bad(error.to_string()))?;
    crate::messages::validate_history(&history).map_err(|error| {
        let rule = format!("rule {}: {}", error.rule.name(), error.rule.description());
        bad(error.to_string()).with_suggestion(Some(rule))
    })?;
    Ok(Some(history))
}

/// A thread message in Prompty's shape as an OpenAI one: text parts
/// (`{kind: text, value}` or `{type: text, text}`) only become their text
/// joined; other `kind` parts take OpenAI's names.
fn prompty_message(mut message: Value) -> Value {
    let Some(Value::Array(parts)) = message.get("content") else {
        return message;
    };
    let kind = |part: &Value| {
        part.get("kind")
            .or_else(|| part.get("type"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let text = |part: &Value| {
        part.get("value")
            .or_else(|| part.get("text"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let content = if parts
        .iter()
        .all(|part| kind(part).as_deref() == Some("text"))
    {
        Value::String(parts.iter().map(text).collect())
    } else {
        Value::Array(
            parts
                .iter()
                .map(|part| match (part.get("kind"), kind(part).as_deref()) {
                    (Some(_), Some("text")) => {
                        serde_json::json!({"type": "text", "text": text(part)})
                    }
                    (Some(_), Some("image")) => serde_json::json!({
                        "type": "image_url",
                        "image_url": {"url": part.get("source").cloned().unwrap_or_default()},
                    }),
                    _ => part.clone(),
                })
                .collect(),
        )
    };
    if let Some(slot) = message.get_mut("content") {
        *slot = content;
    }
    message
}

/// Every required input the data lacks, in one `input` error.
fn check_required(compiled: &Compiled, data: &Data) -> Result<(), Error> {
    let root = data.root();
    let missing: Vec<&str> = compiled
        .required
        .iter()
        .map(String::as_str)
        .filter(|name| root.get(name).is_none())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let names = missing
        .iter()
        .map(|name| format!("\"{name}\""))
        .collect::<Vec<_>>()
        .join(", ");
    Err(Error::new(
        ErrorClass::Input,
        match missing.len() {
            1 => format!("the prompt requires the input {names}, which the data does not have"),
            _ => {
                format!("the prompt requires the inputs {names}, which the data does not have")
            }
        },
    )
    .with_file(compiled.origin())
    .with_suggestion(Some(
        "pass it, give it a `default`, or set `is_required: false` in `input_variables`"
            .to_string(),
    )))
}

/// The data against the declared inputs (`input.schema`): every
/// violation, one per line, in one `input` error placed on the front
/// matter's `input` key.
fn check_schema(compiled: &Compiled, data: &Data) -> Result<(), Error> {
    let Some(schema) = &compiled.schema else {
        return Ok(());
    };
    let violations = schema.check(data.root());
    if violations.is_empty() {
        return Ok(());
    }
    let mut message =
        String::from("the data does not fit the prompt's declared inputs (`input.schema`):");
    for violation in violations.iter().take(MAX_VIOLATIONS) {
        message.push_str("\n  ");
        message.push_str(&violation.to_string());
    }
    if violations.len() > MAX_VIOLATIONS {
        message.push_str(&format!(
            "\n  … and more (the first {} are shown)",
            MAX_VIOLATIONS
        ));
    }
    Err(compiled
        .document
        .place_on_key(Error::new(ErrorClass::Input, message), document::key::INPUT))
}

/// `split` with the automatic breakpoints of front matter
/// `cache.breakpoints: auto`, if the prompt asks for them.
pub(super) fn with_auto_breakpoints(
    compiled: &Compiled,
    split: RenderOutput,
    history: &History,
) -> RenderOutput {
    match compiled.auto_breakpoints {
        Some(min_tokens) => auto_breakpoints(split, compiled.default_role, history, min_tokens),
        None => split,
    }
}

/// Front matter `cache.breakpoints: auto`: where the template placed no
/// cache breakpoint, one at the end of the last message before the
/// history (the prompt's fixed start) and one after the history (the
/// conversation so far), each only past `min_tokens` of text (about four
/// bytes a token).
fn auto_breakpoints(
    mut split: RenderOutput,
    default_role: crate::messages::Role,
    history: &History,
    min_tokens: u64,
) -> RenderOutput {
    use crate::messages::{ContentPart, Item};
    let mut items = split
        .items
        .take()
        .unwrap_or_else(|| rendered::plain_items(&split.text, default_role));
    let placed = items.iter().any(|item| match item {
        Item::Message(message) => message.content.contains(&ContentPart::CacheBreakpoint),
        Item::CacheBreakpoint => true,
        Item::History => false,
    });
    if placed {
        split.items = Some(items);
        return split;
    }
    let tokens = |bytes: usize| (bytes / 4) as u64;
    let text_of = |item: &Item| match item {
        Item::Message(message) => message
            .content
            .iter()
            .map(|part| match part {
                ContentPart::Text { text } => text.len(),
                _ => 0,
            })
            .sum(),
        _ => 0,
    };
    let at = items
        .iter()
        .position(|item| matches!(item, Item::History))
        .unwrap_or(items.len());
    let before: usize = items[..at].iter().map(text_of).sum();
    let history_bytes: usize = history
        .iter()
        .map(|message| match &message.content {
            Some(Value::String(text)) => text.len(),
            Some(other) => other.to_string().len(),
            None => 0,
        })
        .sum();
    if !history.is_empty() && tokens(before + history_bytes) >= min_tokens {
        if at == items.len() {
            items.push(Item::History);
        }
        items.insert(at + 1, Item::CacheBreakpoint);
    }
    if tokens(before) >= min_tokens {
        if let Some(Item::Message(message)) = items[..at]
            .iter_mut()
            .rev()
            .find(|item| matches!(item, Item::Message(_)))
        {
            message.content.push(ContentPart::CacheBreakpoint);
        }
    }
    split.items = Some(items);
    split
}

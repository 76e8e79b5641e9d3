//! A Hugging Face chat template with a 20-message conversation: teleprompt's
//! chat-template syntax beside raw minijinja set up as `transformers` sets
//! up Jinja2, as bench/jinja/src/main.rs times them (both include
//! bench/chat_template.rs, the setup, first render and race).

use crate::chat_template::Chat;
use crate::{cli, Args};

/// The engines of a chat-template race, as `--only` and the JSON lines
/// name them.
pub const ENGINES: [&str; 2] = ["teleprompt-chat-template", "minijinja"];

/// Renders `NAME_chat_template.jinja` (from `--data`) with the conversation
/// `json` (the keyword arguments of the render) in both engines, writes the
/// texts to `--out` as `NAME_chat_template.ENGINE.txt`, then, unless
/// `--render-only`, races them under the template name
/// `NAME_chat_template`.
pub fn bench(name: &str, json: &serde_json::Value, args: &Args) -> Result<(), String> {
    let stem = format!("{name}_chat_template");
    let chat = Chat::load(&args.data.join(format!("{stem}.jinja")), json)?;
    let (ours, theirs) = chat.render()?;
    if let Some(out) = &args.out {
        cli::write_texts(out, &stem, ENGINES.into_iter().zip([&*ours, &*theirs]))?;
    }
    if ours != theirs {
        eprintln!("warning: {stem}: teleprompt and minijinja render different text");
    }
    if args.render_only {
        return Ok(());
    }
    chat.race(
        &stem,
        [(ENGINES[0], ours.len()), (ENGINES[1], theirs.len())],
        args.runs,
        args.run_time,
        args.only.as_deref(),
    )
}

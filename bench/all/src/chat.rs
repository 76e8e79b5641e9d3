//! A Hugging Face chat template with a 20-message conversation: teleprompt's
//! chat-template syntax beside raw minijinja set up as `transformers` sets
//! up Jinja2, as bench/jinja/src/main.rs times them (the same setup, copied:
//! this crate does not depend on that one).

use std::hint::black_box;

use minijinja::{AutoEscape, Environment, Error, ErrorKind, UndefinedBehavior};
use teleprompt::{Data, LoadOptions, Prompt};

use crate::race::{race, Engine};
use crate::Args;

/// The engines of a chat-template race, as `--only` and the JSON lines
/// name them.
pub const ENGINES: [&str; 2] = ["teleprompt-chat-template", "minijinja"];

/// A minijinja environment as `transformers` builds its Jinja2 one
/// (`ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`
/// with `raise_exception` among the globals), holding `source` as
/// `chat_template`.
///
/// Not registered: `tojson` (transformers' `json.dumps` override) and
/// `strftime_now`. minijinja looks filters and functions up when they run,
/// and the Llama templates call neither for a conversation without tools
/// and with a `date_string`, so leaving them out changes no timed work.
fn minijinja_env(source: &str) -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    let syntax = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(false)
        .build()?;
    env.set_syntax(syntax);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    // Jinja2's default `Undefined`: printing a missing value prints nothing.
    env.set_undefined_behavior(UndefinedBehavior::Lenient);
    // `.strip()`, `.items()`, `.startswith()`… on values, as in Python.
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function(
        "raise_exception",
        |message: String| -> Result<String, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, message))
        },
    );
    env.add_template_owned("chat_template", source.to_string())?;
    Ok(env)
}

/// Renders `NAME_chat_template.jinja` (from `--data`) with the conversation
/// `json` (the keyword arguments of the render) in both engines, writes the
/// texts to `--out` as `NAME_chat_template.ENGINE.txt`, then, unless
/// `--render-only`, races them under the template name
/// `NAME_chat_template`.
pub fn bench(name: &str, json: &serde_json::Value, args: &Args) -> Result<(), String> {
    let stem = format!("{name}_chat_template");
    let path = args.data.join(format!("{stem}.jinja"));
    let source = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;

    // teleprompt: the file name selects the chat-template syntax.
    let prompt = Prompt::from_source("chat_template.jinja", &source, &LoadOptions::default())
        .map_err(|e| format!("teleprompt: {e}"))?;
    let data = Data::new(json.clone());
    let env = minijinja_env(&source).map_err(|e| format!("minijinja: {e}"))?;
    let template = env
        .get_template("chat_template")
        .map_err(|e| format!("minijinja: {e}"))?;
    let context = minijinja::Value::from(minijinja::value::Serde(json));

    let ours = prompt
        .render(&data)
        .map_err(|e| format!("teleprompt: {e}"))?
        .text()
        .to_string();
    let theirs = template
        .render(&context)
        .map_err(|e| format!("minijinja: {e}"))?;
    if let Some(out) = &args.out {
        for (engine, text) in ENGINES.iter().zip([&ours, &theirs]) {
            let path = out.join(format!("{stem}.{engine}.txt"));
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    if ours != theirs {
        eprintln!("warning: {stem}: teleprompt and minijinja render different text");
    }
    if args.render_only {
        return Ok(());
    }

    let mut render_teleprompt = || {
        black_box(prompt.render(black_box(&data)).expect("renders"));
    };
    let mut render_minijinja = || {
        black_box(template.render(black_box(&context)).expect("renders"));
    };
    race(
        &stem,
        args.runs,
        args.run_time,
        args.only.as_deref(),
        &mut [
            Engine {
                name: ENGINES[0],
                bytes: ours.len(),
                render: &mut render_teleprompt,
            },
            Engine {
                name: ENGINES[1],
                bytes: theirs.len(),
                render: &mut render_minijinja,
            },
        ],
    );
    Ok(())
}

//! A Hugging Face chat template with one conversation: teleprompt's
//! chat-template syntax beside raw minijinja set up as `transformers` sets
//! up Jinja2, as `jinja/` and `all/` (its `--chat` rows) time them (included
//! by path from both). Each program names the engines, writes the texts and
//! reads its own flags.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use minijinja::{AutoEscape, Environment, Error, ErrorKind, Template, UndefinedBehavior};
use teleprompt::{Data, LoadOptions, Prompt};

use crate::race::{race, Engine};

/// Reads a JSON file: the conversation, the keyword arguments of
/// `template.render(...)`.
pub fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
        .map_err(|message| format!("{}: {message}", path.display()))
}

/// A minijinja environment as `transformers` builds its Jinja2 one
/// (`ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`
/// with `raise_exception` among the globals), holding `source` as
/// `chat_template`.
///
/// Not registered: `tojson` (transformers' `json.dumps` override) and
/// `strftime_now`. minijinja looks filters and functions up when they run,
/// and the Llama templates call neither for a conversation without tools
/// and with a `date_string`, so leaving them out changes no timed work
/// (`jinja/`'s fixtures mode adds both, in `jinja/src/fixtures.rs`).
pub fn minijinja_env(source: &str) -> Result<Environment<'static>, Error> {
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

/// One chat template in both engines, each with its form of the
/// conversation made once, outside the timed loop, as a host would keep it.
pub struct Chat {
    prompt: Prompt,
    data: Data,
    env: Environment<'static>,
    context: minijinja::Value,
}

impl Chat {
    /// Loads the template at `path` into teleprompt (as
    /// `chat_template.jinja`: the file name selects the chat-template
    /// syntax) and into raw minijinja, with the conversation `json`.
    pub fn load(path: &Path, json: &serde_json::Value) -> Result<Chat, String> {
        let source =
            std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let prompt = Prompt::from_source("chat_template.jinja", &source, &LoadOptions::default())
            .map_err(|e| format!("teleprompt: {e}"))?;
        let data = Data::new(json.clone());
        let env = minijinja_env(&source).map_err(|e| format!("minijinja: {e}"))?;
        let chat = Chat {
            prompt,
            data,
            env,
            context: minijinja::Value::from(minijinja::value::Serde(json)),
        };
        chat.template()?;
        Ok(chat)
    }

    fn template(&self) -> Result<Template<'_, '_>, String> {
        self.env
            .get_template("chat_template")
            .map_err(|e| format!("minijinja: {e}"))
    }

    /// One render with each engine: teleprompt's text and minijinja's.
    pub fn render(&self) -> Result<(String, String), String> {
        let ours = self
            .prompt
            .render(&self.data)
            .map_err(|e| format!("teleprompt: {e}"))?
            .text()
            .to_string();
        let theirs = self
            .template()?
            .render(&self.context)
            .map_err(|e| format!("minijinja: {e}"))?;
        Ok((ours, theirs))
    }

    /// Races the two engines on `template` (see `race`): teleprompt named
    /// `engines[0]`, minijinja `engines[1]`, each with the bytes of its text.
    pub fn race(
        &self,
        template: &str,
        engines: [(&'static str, usize); 2],
        runs: usize,
        run_time: Duration,
        only: Option<&str>,
    ) -> Result<(), String> {
        let (prompt, data, context) = (&self.prompt, &self.data, &self.context);
        let minijinja_template = self.template()?;
        let mut render_teleprompt = || {
            black_box(prompt.render(black_box(data)).expect("renders"));
        };
        let mut render_minijinja = || {
            black_box(
                minijinja_template
                    .render(black_box(context))
                    .expect("renders"),
            );
        };
        let [(teleprompt, teleprompt_bytes), (minijinja, minijinja_bytes)] = engines;
        race(
            template,
            runs,
            run_time,
            only,
            &mut [
                Engine {
                    name: teleprompt,
                    bytes: teleprompt_bytes,
                    render: &mut render_teleprompt,
                },
                Engine {
                    name: minijinja,
                    bytes: minijinja_bytes,
                    render: &mut render_minijinja,
                },
            ],
        );
        Ok(())
    }
}

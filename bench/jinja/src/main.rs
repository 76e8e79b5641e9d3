//! teleprompt's `chat-template` syntax beside raw minijinja 3.0.5, on Hugging
//! Face chat templates and one conversation (bench/data/), in one process.
//! `bench/jinja/compare.py` runs this and Python's Jinja2 side by side.
//!
//! Usage: `cargo run --release -- [--data DIR] [--conversation FILE]
//! [--runs N] [--time-ms MS] [--out DIR] [--only ENGINE] NAME...`
//!
//! For each NAME: load `NAME_chat_template.jinja` into teleprompt (as
//! `chat_template.jinja`, which selects the chat-template syntax) and into a
//! raw minijinja environment set up as `transformers` sets up Jinja2
//! (`trim_blocks`, `lstrip_blocks`, no kept trailing newline, lenient
//! undefined values, Python's methods, `raise_exception`); read the
//! conversation (default `chat_20.json`: the keyword arguments of
//! `template.render(...)`) once for each engine, outside the timed loop, as a
//! host would keep it; render once with each (and write the texts to `--out`
//! as `NAME.teleprompt.txt`, `NAME.minijinja.txt`); then time renders and
//! print one JSON line per engine and template:
//! `{"engine", "template", "median_ns", "runs", "iters", "bytes"}`, the
//! median of `--runs` runs of about `--time-ms` each, the two engines' runs
//! interleaved so that machine noise hits both alike. `--only teleprompt`
//! (or `minijinja`) times one engine, for profiling it under callgrind.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use minijinja::{AutoEscape, Environment, Error, ErrorKind, UndefinedBehavior};
use teleprompt::{Data, LoadOptions, Prompt};

#[path = "../../race.rs"]
mod race;
#[path = "../../timing.rs"]
mod timing;
use race::{race, Engine};

struct Args {
    data: PathBuf,
    conversation: String,
    runs: usize,
    run_time: Duration,
    out: Option<PathBuf>,
    /// Time only this engine (for profiling one of them).
    only: Option<String>,
    names: Vec<String>,
}

const USAGE: &str = "usage: teleprompt-bench-jinja [--data DIR] [--conversation FILE] [--runs N] [--time-ms MS] [--out DIR] [--only ENGINE] NAME...";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        data: Path::new(env!("CARGO_MANIFEST_DIR")).join("../data"),
        conversation: "chat_20.json".to_string(),
        runs: 11,
        run_time: Duration::from_millis(200),
        out: None,
        only: None,
        names: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--data" => args.data = value("--data")?.into(),
            "--conversation" => args.conversation = value("--conversation")?,
            "--out" => args.out = Some(value("--out")?.into()),
            "--only" => match value("--only")?.as_str() {
                engine @ ("teleprompt" | "minijinja") => args.only = Some(engine.to_string()),
                other => return Err(format!("--only: unknown engine {other}")),
            },
            "--runs" => {
                args.runs = value("--runs")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?
            }
            "--time-ms" => {
                let ms: u64 = value("--time-ms")?
                    .parse()
                    .map_err(|e| format!("--time-ms: {e}"))?;
                args.run_time = Duration::from_millis(ms);
            }
            "-h" | "--help" => return Err(USAGE.into()),
            _ if arg.starts_with("--") => return Err(format!("unknown flag {arg}")),
            _ => args.names.push(arg),
        }
    }
    if args.names.is_empty() || args.runs == 0 {
        return Err(USAGE.into());
    }
    Ok(args)
}

/// A minijinja environment as `transformers` builds its Jinja2 one
/// (`ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`
/// with `raise_exception` among the globals), holding `source` as
/// `chat_template`.
///
/// Not registered: `tojson` (transformers' `json.dumps` override) and
/// `strftime_now`. minijinja looks filters and functions up when they run,
/// and these templates call neither for a conversation without tools and
/// with a `date_string`, so leaving them out changes no timed work.
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

fn bench(name: &str, json: &serde_json::Value, args: &Args) -> Result<(), String> {
    let path = args.data.join(format!("{name}_chat_template.jinja"));
    let source = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;

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
        let write = |engine: &str, text: &str| {
            let path = out.join(format!("{name}.{engine}.txt"));
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
        };
        write("teleprompt", &ours)?;
        write("minijinja", &theirs)?;
    }
    if ours != theirs {
        eprintln!("warning: {name}: teleprompt and minijinja render different text");
    }

    let mut render_teleprompt = || {
        black_box(prompt.render(black_box(&data)).expect("renders"));
    };
    let mut render_minijinja = || {
        black_box(template.render(black_box(&context)).expect("renders"));
    };
    race(
        name,
        args.runs,
        args.run_time,
        args.only.as_deref(),
        &mut [
            Engine {
                name: "teleprompt",
                bytes: ours.len(),
                render: &mut render_teleprompt,
            },
            Engine {
                name: "minijinja",
                bytes: theirs.len(),
                render: &mut render_minijinja,
            },
        ],
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let path = args.data.join(&args.conversation);
    let json: serde_json::Value = match std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(json) => json,
        Err(message) => {
            eprintln!("{}: {message}", path.display());
            return ExitCode::FAILURE;
        }
    };
    for name in &args.names {
        if let Err(message) = bench(name, &json, &args) {
            eprintln!("{name}: {message}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

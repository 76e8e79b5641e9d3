//! teleprompt's `chat-template` syntax beside raw minijinja 3.1, on Hugging
//! Face chat templates, in one process: the Llama templates of bench/data/
//! with one conversation, or (`--fixtures DIR`) every chat-template fixture.
//! `bench/jinja/compare.py` and `bench/jinja/fixtures.py` run this and
//! Python's Jinja2 side by side.
//!
//! Usage: `cargo run --release -- [--data DIR] [--conversation FILE]
//! [--runs N] [--time-ms MS] [--out DIR] [--only ENGINE] NAME...`, or
//! `cargo run --release -- --fixtures DIR [--check] [--runs N] [--time-ms MS]
//! [--out DIR] [--only ENGINE] [NAME...]`.
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
//!
//! With `--fixtures DIR` (`crates/teleprompt/tests/fixtures/chat-template`),
//! each fixture file there (or each NAME: `DIR/NAME.txt`) is one scenario
//! of one template, checked against the fixture's expected output before it
//! is timed, with a JSON line per fixture on what came of it and the direct
//! path's counts; `--check` stops after the check. See `src/fixtures.rs`.
//!
//! The two engines' setup, first render and race are in
//! `bench/chat_template.rs`, which `bench/all` includes too.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[path = "../../chat_template.rs"]
mod chat_template;
#[path = "../../cli.rs"]
mod cli;
mod fixtures;
#[path = "../../race.rs"]
mod race;
#[path = "../../timing.rs"]
mod timing;
use chat_template::Chat;

struct Args {
    data: PathBuf,
    conversation: String,
    runs: usize,
    run_time: Duration,
    out: Option<PathBuf>,
    /// Time only this engine (for profiling one of them).
    only: Option<String>,
    /// The chat-template fixtures' folder: the fixtures mode.
    fixtures: Option<PathBuf>,
    /// Fixtures mode: render and compare, no timing.
    check: bool,
    names: Vec<String>,
}

const USAGE: &str = "usage: teleprompt-bench-jinja [--data DIR] [--conversation FILE] [--runs N] [--time-ms MS] [--out DIR] [--only ENGINE] NAME...
       teleprompt-bench-jinja --fixtures DIR [--check] [--runs N] [--time-ms MS] [--out DIR] [--only ENGINE] [NAME...]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        data: Path::new(env!("CARGO_MANIFEST_DIR")).join("../data"),
        conversation: "chat_20.json".to_string(),
        runs: 11,
        run_time: Duration::from_millis(200),
        out: None,
        only: None,
        fixtures: None,
        check: false,
        names: Vec::new(),
    };
    let mut flags = cli::Flags::from_env();
    while let Some(arg) = flags.next() {
        match arg.as_str() {
            "--data" => args.data = flags.value()?.into(),
            "--conversation" => args.conversation = flags.value()?,
            "--out" => args.out = Some(flags.value()?.into()),
            "--only" => match flags.value()?.as_str() {
                engine @ ("teleprompt" | "minijinja") => args.only = Some(engine.to_string()),
                other => return Err(format!("--only: unknown engine {other}")),
            },
            "--fixtures" => args.fixtures = Some(flags.value()?.into()),
            "--check" => args.check = true,
            "--runs" => args.runs = flags.parse()?,
            "--time-ms" => args.run_time = flags.millis()?,
            "-h" | "--help" => return Err(USAGE.into()),
            _ if arg.starts_with("--") => return Err(format!("unknown flag {arg}")),
            _ => args.names.push(arg),
        }
    }
    if args.check && args.fixtures.is_none() {
        return Err("--check goes with --fixtures".into());
    }
    if (args.names.is_empty() && args.fixtures.is_none()) || args.runs == 0 {
        return Err(USAGE.into());
    }
    Ok(args)
}

fn bench(name: &str, json: &serde_json::Value, args: &Args) -> Result<(), String> {
    let chat = Chat::load(&args.data.join(format!("{name}_chat_template.jinja")), json)?;
    let (ours, theirs) = chat.render()?;
    if let Some(out) = &args.out {
        cli::write_texts(out, name, [("teleprompt", &*ours), ("minijinja", &*theirs)])?;
    }
    if ours != theirs {
        eprintln!("warning: {name}: teleprompt and minijinja render different text");
    }
    chat.race(
        name,
        [("teleprompt", ours.len()), ("minijinja", theirs.len())],
        args.runs,
        args.run_time,
        args.only.as_deref(),
    )
}

fn main() -> ExitCode {
    cli::main(parse_args, |args| {
        if let Some(dir) = &args.fixtures {
            let options = fixtures::Options {
                runs: args.runs,
                run_time: args.run_time,
                out: args.out.as_deref(),
                only: args.only.as_deref(),
                check: args.check,
            };
            for path in fixtures::files(dir, &args.names)? {
                fixtures::bench(&path, &options)
                    .map_err(|message| format!("{}: {message}", path.display()))?;
            }
            return Ok(());
        }
        let json = chat_template::read_json(&args.data.join(&args.conversation))?;
        for name in &args.names {
            bench(name, &json, &args).map_err(|message| format!("{name}: {message}"))?;
        }
        Ok(())
    })
}

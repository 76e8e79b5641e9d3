//! teleprompt's Handlebars syntax beside handlebars-rust 6, on the same
//! template files and JSON data (bench/data/), in one process.
//! `bench/handlebars/compare.sh` runs this and handlebars.js side by side.
//!
//! Usage: `cargo run --release -- [--data DIR] [--runs N] [--time-ms MS]
//! [--out DIR] [--only ENGINE] NAME...`
//!
//! For each NAME: load `NAME.hbs` into teleprompt (as `bench.hbs`, which
//! selects the Handlebars syntax) and register it once in a handlebars-rust
//! registry with no escaping (`no_escape`: teleprompt never HTML-escapes);
//! read `NAME.json` once for each engine, outside the timed loop, as a host
//! would keep it (teleprompt: `Data::new`; handlebars-rust: a `Context` made
//! once from the `serde_json::Value`, so that its `render` does not
//! serialize the data again on every call); render once with each (and
//! write the texts to `--out` as `NAME.teleprompt.txt`,
//! `NAME.handlebars-rust.txt`); then time renders and print one JSON line
//! per engine and template: `{"engine", "template", "median_ns", "runs",
//! "iters", "bytes"}`, the median of `--runs` runs of about `--time-ms`
//! each, the two engines' runs interleaved so that machine noise hits both
//! alike. `--only teleprompt` (or `handlebars-rust`) times one engine, for
//! profiling it under callgrind.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use handlebars::{Context, Handlebars};
use teleprompt::{Data, LoadOptions, Prompt};

#[path = "../../cli.rs"]
mod cli;
#[path = "../../race.rs"]
mod race;
#[path = "../../timing.rs"]
mod timing;
use race::{race, Engine};

struct Args {
    data: PathBuf,
    runs: usize,
    run_time: Duration,
    out: Option<PathBuf>,
    /// Time only this engine (for profiling one of them).
    only: Option<String>,
    names: Vec<String>,
}

const USAGE: &str = "usage: teleprompt-bench-handlebars [--data DIR] [--runs N] [--time-ms MS] [--out DIR] [--only ENGINE] NAME...";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        data: Path::new(env!("CARGO_MANIFEST_DIR")).join("../data"),
        runs: 11,
        run_time: Duration::from_millis(200),
        out: None,
        only: None,
        names: Vec::new(),
    };
    let mut flags = cli::Flags::from_env();
    while let Some(arg) = flags.next() {
        match arg.as_str() {
            "--data" => args.data = flags.value()?.into(),
            "--out" => args.out = Some(flags.value()?.into()),
            "--only" => match flags.value()?.as_str() {
                engine @ ("teleprompt" | "handlebars-rust") => args.only = Some(engine.to_string()),
                other => return Err(format!("--only: unknown engine {other}")),
            },
            "--runs" => args.runs = flags.parse()?,
            "--time-ms" => args.run_time = flags.millis()?,
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

fn bench(name: &str, args: &Args) -> Result<(), String> {
    let read = |ext: &str| {
        let path = args.data.join(format!("{name}.{ext}"));
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    let source = read("hbs")?;
    let json: serde_json::Value =
        serde_json::from_str(&read("json")?).map_err(|e| format!("{name}.json: {e}"))?;

    let prompt = Prompt::from_source("bench.hbs", &source, &LoadOptions::default())
        .map_err(|e| format!("teleprompt: {e}"))?;
    let data = Data::new(json.clone());
    let mut registry = Handlebars::new();
    registry.register_escape_fn(handlebars::no_escape);
    registry
        .register_template_string(name, &source)
        .map_err(|e| format!("handlebars-rust: {e}"))?;
    let context = Context::from(json);

    let ours = prompt
        .render(&data)
        .map_err(|e| format!("teleprompt: {e}"))?
        .text()
        .to_string();
    let theirs = registry
        .render_with_context(name, &context)
        .map_err(|e| format!("handlebars-rust: {e}"))?;
    if let Some(out) = &args.out {
        cli::write_texts(
            out,
            name,
            [("teleprompt", &*ours), ("handlebars-rust", &*theirs)],
        )?;
    }
    if ours != theirs {
        eprintln!("warning: {name}: teleprompt and handlebars-rust render different text");
    }

    let mut render_teleprompt = || {
        black_box(prompt.render(black_box(&data)).expect("renders"));
    };
    let mut render_handlebars = || {
        black_box(
            registry
                .render_with_context(name, black_box(&context))
                .expect("renders"),
        );
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
                name: "handlebars-rust",
                bytes: theirs.len(),
                render: &mut render_handlebars,
            },
        ],
    );
    Ok(())
}

fn main() -> ExitCode {
    cli::main(parse_args, |args| {
        for name in &args.names {
            bench(name, &args).map_err(|message| format!("{name}: {message}"))?;
        }
        Ok(())
    })
}

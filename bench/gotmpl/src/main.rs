//! teleprompt's Go syntax beside gotmpl 0.6, on the same template files and
//! JSON data (bench/data/), in one process.
//!
//! Usage: `cargo run --release -- [--data DIR] [--runs N] [--time-ms MS]
//! [--out DIR] [--only ENGINE] NAME...`
//!
//! For each NAME: load NAME.gotmpl into both engines (gotmpl with
//! `missingkey=error` and Sortie's `toJSON`, `join`, `lower`), convert
//! NAME.json once for each (outside the timed loop, as a host would), check
//! that both render the same text, then time renders and print
//! `ENGINE NAME MEDIAN_NS_PER_OP` per engine: the median of `--runs` runs of
//! about `--time-ms` each, the two engines' runs interleaved so that machine
//! noise hits both alike. `--only teleprompt` (or `gotmpl`) times one
//! engine, for profiling it under callgrind.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use gotmpl::{MissingKey, Template, TemplateError, Value};
use teleprompt::{Data, LoadOptions, Prompt, Syntax};

#[path = "../../cli.rs"]
mod cli;
#[path = "../../gotmpl_value.rs"]
mod gotmpl_value;
#[path = "../../timing.rs"]
mod timing;
use gotmpl_value::to_gotmpl;
use timing::{calibrate, median, time_run};

struct Args {
    data: PathBuf,
    runs: usize,
    run_time: Duration,
    out: Option<PathBuf>,
    /// Time only this engine (for profiling one of them).
    only: Option<String>,
    names: Vec<String>,
}

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
                engine @ ("teleprompt" | "gotmpl") => args.only = Some(engine.to_string()),
                other => return Err(format!("--only: unknown engine {other}")),
            },
            "--runs" => args.runs = flags.parse()?,
            "--time-ms" => args.run_time = flags.millis()?,
            _ if arg.starts_with("--") => return Err(format!("unknown flag {arg}")),
            _ => args.names.push(arg),
        }
    }
    if args.names.is_empty() || args.runs == 0 {
        return Err("usage: teleprompt-bench-gotmpl [--data DIR] [--runs N] [--time-ms MS] [--out DIR] [--only ENGINE] NAME...".into());
    }
    Ok(args)
}

/// gotmpl's value back to JSON, for `toJSON` (maps come out with sorted
/// keys, as Go's `json.Marshal` writes a `map[string]any`).
fn to_json(value: &Value) -> Result<serde_json::Value, TemplateError> {
    Ok(match value {
        Value::Nil => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Int(i) => (*i).into(),
        Value::Uint(u) => (*u).into(),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(serde_json::Value::Number)
            .ok_or_else(|| TemplateError::Exec(format!("toJSON: unsupported value: {f}")))?,
        Value::String(s) => serde_json::Value::String(s.to_string()),
        Value::List(items) => {
            serde_json::Value::Array(items.iter().map(to_json).collect::<Result<_, _>>()?)
        }
        Value::Map(map) => serde_json::Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.to_string(), to_json(v)?)))
                .collect::<Result<_, TemplateError>>()?,
        ),
        Value::Function(_) => {
            return Err(TemplateError::Exec("toJSON: unsupported type: func".into()))
        }
    })
}

/// A gotmpl template with Sortie's options and functions.
fn gotmpl_template(name: &str, source: &str) -> Result<Template, TemplateError> {
    Template::new(name)
        .missing_key(MissingKey::Error)
        .func("toJSON", |args| match args {
            [value] => Ok(Value::String(
                serde_json::to_string(&to_json(value)?)
                    .map_err(|e| TemplateError::Exec(format!("toJSON: {e}")))?
                    .into(),
            )),
            _ => Err(TemplateError::Exec("toJSON: wants one argument".into())),
        })
        .func("join", |args| match args {
            [Value::String(sep), Value::List(items)] => {
                let parts: Vec<String> = items.iter().map(ToString::to_string).collect();
                Ok(Value::String(parts.join(sep).into()))
            }
            [_, other] => Err(TemplateError::Exec(format!(
                "join: unsupported type {}",
                other.type_name()
            ))),
            _ => Err(TemplateError::Exec(
                "join: wants a separator and a list".into(),
            )),
        })
        .func("lower", |args| match args {
            [Value::String(s)] => Ok(Value::String(s.to_lowercase().into())),
            _ => Err(TemplateError::Exec("lower: wants one string".into())),
        })
        .parse(source)
}

fn bench(name: &str, args: &Args) -> Result<(), String> {
    let read = |ext: &str| {
        let path = args.data.join(format!("{name}.{ext}"));
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    let source = read("gotmpl")?;
    let json: serde_json::Value =
        serde_json::from_str(&read("json")?).map_err(|e| format!("{name}.json: {e}"))?;

    let options = LoadOptions::new().with_syntax(Syntax::Go);
    let prompt = Prompt::from_source("bench.gotmpl", &source, &options)
        .map_err(|e| format!("teleprompt: {e}"))?;
    let data = Data::new(json.clone());
    let template = gotmpl_template(name, &source).map_err(|e| format!("gotmpl: {e}"))?;
    let value = to_gotmpl(&json);

    let ours = prompt
        .render(&data)
        .map_err(|e| format!("teleprompt: {e}"))?
        .text()
        .to_string();
    let theirs = template
        .execute_to_string(&value)
        .map_err(|e| format!("gotmpl: {e}"))?;
    if let Some(out) = &args.out {
        cli::write_texts(out, name, [("teleprompt", &*ours), ("gotmpl", &*theirs)])?;
    }
    if ours != theirs {
        eprintln!("warning: {name}: teleprompt and gotmpl render different text");
    }

    let mut render_teleprompt = || {
        black_box(prompt.render(black_box(&data)).expect("renders"));
    };
    let mut render_gotmpl = || {
        black_box(
            template
                .execute_to_string(black_box(&value))
                .expect("renders"),
        );
    };
    let only = args.only.as_deref();
    let time_teleprompt = only.is_none_or(|engine| engine == "teleprompt");
    let time_gotmpl = only.is_none_or(|engine| engine == "gotmpl");
    let iters_teleprompt = calibrate(args.run_time, &mut render_teleprompt);
    let iters_gotmpl = calibrate(args.run_time, &mut render_gotmpl);
    let mut teleprompt_ns = Vec::with_capacity(args.runs);
    let mut gotmpl_ns = Vec::with_capacity(args.runs);
    for _ in 0..args.runs {
        if time_teleprompt {
            teleprompt_ns.push(time_run(iters_teleprompt, &mut render_teleprompt));
        }
        if time_gotmpl {
            gotmpl_ns.push(time_run(iters_gotmpl, &mut render_gotmpl));
        }
    }
    if time_teleprompt {
        println!("teleprompt {name} {:.0}", median(teleprompt_ns));
    }
    if time_gotmpl {
        println!("gotmpl {name} {:.0}", median(gotmpl_ns));
    }
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

//! teleprompt's three syntaxes (Jinja, Go, Handlebars) beside every Rust
//! peer engine on one workload, in one process: raw minijinja 3.0.5 (the
//! engine under teleprompt's Jinja), tera 1, handlebars-rust 6, gotmpl 0.6
//! and a hand-written Rust function (the floor: what producing the text
//! straight from the JSON costs). Then teleprompt's chat-template syntax
//! beside raw minijinja on Hugging Face chat templates (`--chat`, see
//! `chat.rs`), and a turn of a conversation at several history lengths
//! (`--turn`, see `turn.rs`). `bench/all/run.sh` runs this, then Go's
//! text/template, handlebars.js and Python's Jinja2 on the same files, and
//! prints the ratio table.
//!
//! Usage: `cargo run --release -- [--data DIR] [--templates DIR] [--runs N]
//! [--time-ms MS] [--out DIR] [--render-only] [--only ENGINE]
//! [--chat NAME,...] [--conversation FILE] [--turn LEN,...] N...`
//!
//! For each N: read `py_prompt_N.json` (from `--data`, default bench/data)
//! once, and load each engine's template from `--templates` (default
//! bench/all/templates: `py_prompt.j2`, `.tera`, `.gotmpl`, `.hbs`); make
//! each engine's form of the data once, outside the timed loop, as a host
//! would keep it; render once with each (and write the texts to `--out` as
//! `py_prompt_N.ENGINE.txt`, for run.sh to compare byte for byte); then,
//! unless `--render-only`, time renders and print one JSON line per engine:
//! `{"engine", "template", "median_ns", "runs", "iters", "bytes"}`, the
//! median of `--runs` runs of about `--time-ms` each, all engines' runs
//! interleaved so that machine noise hits all alike. `--only ENGINE` times
//! one engine, for profiling it.
//!
//! For each `--chat` NAME: the same with `NAME_chat_template.jinja` (from
//! `--data`) and the conversation `--conversation` (default
//! `chat_20.json`, the keyword arguments of the render), the texts written
//! as `NAME_chat_template.ENGINE.txt`. With `--turn`: one race of the turn
//! engines at all the lengths given (template `turn`), plus one line per
//! append engine with its reset's share (`mean_ns`).
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use teleprompt::{Data, LoadOptions, Prompt, Syntax};

mod chat;
#[path = "../../chat_template.rs"]
mod chat_template;
#[path = "../../cli.rs"]
mod cli;
#[path = "../../gotmpl_value.rs"]
mod gotmpl_value;
#[path = "../../race.rs"]
mod race;
#[path = "../../timing.rs"]
mod timing;
mod turn;
#[path = "../../turn_workload.rs"]
mod turn_workload;
use gotmpl_value::to_gotmpl;
use race::{race, Engine};

/// The py_prompt engines, as `--only` and the JSON lines name them.
const ENGINES: [&str; 8] = [
    "teleprompt-jinja",
    "teleprompt-go",
    "teleprompt-handlebars",
    "minijinja",
    "tera",
    "handlebars-rust",
    "gotmpl",
    "hand-written",
];

struct Args {
    data: PathBuf,
    templates: PathBuf,
    runs: usize,
    run_time: Duration,
    out: Option<PathBuf>,
    render_only: bool,
    /// Time only this engine (for profiling one of them).
    only: Option<String>,
    sizes: Vec<String>,
    /// Chat templates: `NAME_chat_template.jinja` in `data`.
    chats: Vec<String>,
    /// The chat templates' render arguments, in `data`.
    conversation: String,
    /// History lengths of the turn engines.
    turns: Vec<usize>,
}

const USAGE: &str = "usage: teleprompt-bench-all [--data DIR] [--templates DIR] [--runs N] [--time-ms MS] [--out DIR] [--render-only] [--only ENGINE] [--chat NAME,...] [--conversation FILE] [--turn LEN,...] N...";

fn parse_args() -> Result<Args, String> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut args = Args {
        data: here.join("../data"),
        templates: here.join("templates"),
        runs: 7,
        run_time: Duration::from_millis(200),
        out: None,
        render_only: false,
        only: None,
        sizes: Vec::new(),
        chats: Vec::new(),
        conversation: "chat_20.json".to_string(),
        turns: Vec::new(),
    };
    let mut flags = cli::Flags::from_env();
    while let Some(arg) = flags.next() {
        match arg.as_str() {
            "--data" => args.data = flags.value()?.into(),
            "--templates" => args.templates = flags.value()?.into(),
            "--out" => args.out = Some(flags.value()?.into()),
            "--render-only" => args.render_only = true,
            "--only" => args.only = Some(flags.value()?),
            "--chat" => args
                .chats
                .extend(flags.value()?.split(',').map(str::to_string)),
            "--conversation" => args.conversation = flags.value()?,
            "--turn" => {
                for len in flags.value()?.split(',') {
                    args.turns
                        .push(len.parse().map_err(|e| format!("--turn {len}: {e}"))?);
                }
            }
            "--runs" => args.runs = flags.parse()?,
            "--time-ms" => args.run_time = flags.millis()?,
            "-h" | "--help" => return Err(USAGE.into()),
            _ if arg.starts_with("--") => return Err(format!("unknown flag {arg}")),
            _ => args.sizes.push(arg),
        }
    }
    if (args.sizes.is_empty() && args.chats.is_empty() && args.turns.is_empty()) || args.runs == 0 {
        return Err(USAGE.into());
    }
    if let Some(only) = &args.only {
        let mut engines: Vec<String> = ENGINES
            .iter()
            .chain(chat::ENGINES.iter().filter(|e| !ENGINES.contains(e)))
            .map(|engine| engine.to_string())
            .collect();
        engines.extend(args.turns.iter().flat_map(|&len| turn::engine_names(len)));
        if !engines.contains(only) {
            return Err(format!(
                "--only: unknown engine {only} (one of {})",
                engines.join(", ")
            ));
        }
    }
    Ok(args)
}

/// The floor: the workload's text written straight from the JSON with
/// `push_str` and `write!`, every key looked up as a template would (a
/// missing key is an error, not a panic), into a string of `capacity` bytes.
fn hand_written(json: &serde_json::Value, capacity: usize) -> Result<String, String> {
    fn get<'a>(value: &'a serde_json::Value, key: &str) -> Result<&'a serde_json::Value, String> {
        value.get(key).ok_or_else(|| format!("no key {key}"))
    }
    fn text<'a>(value: &'a serde_json::Value, key: &str) -> Result<&'a str, String> {
        get(value, key)?
            .as_str()
            .ok_or_else(|| format!("{key} is not a string"))
    }
    fn flag(value: &serde_json::Value, key: &str) -> Result<bool, String> {
        get(value, key)?
            .as_bool()
            .ok_or_else(|| format!("{key} is not a boolean"))
    }

    let mut out = String::with_capacity(capacity);
    out.push_str("You are ");
    out.push_str(text(get(json, "assistant")?, "name")?);
    out.push_str(", a research assistant for ");
    let user = get(json, "user")?;
    out.push_str(text(user, "name")?);
    out.push_str(".\n");
    out.push_str(match flag(user, "premium")? {
        true => "Answer in depth, with citations.",
        false => "Answer briefly.",
    });
    out.push_str("\n\nQuestion: ");
    out.push_str(text(json, "question")?);
    out.push_str("\n\nUse these documents:\n");
    let documents = get(json, "documents")?
        .as_array()
        .ok_or("documents is not a list")?;
    for (i, d) in documents.iter().enumerate() {
        let year = get(d, "year")?.as_i64().ok_or("year is not an integer")?;
        write!(
            out,
            "\n[{i}] {} ({}, {year})",
            text(d, "title")?,
            text(d, "source")?
        )
        .expect("writing to a String");
        if flag(d, "pinned")? {
            out.push_str(" — pinned");
        }
        out.push_str("\nTags: ");
        let tags = get(d, "tags")?.as_array().ok_or("tags is not a list")?;
        for (j, tag) in tags.iter().enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            out.push_str(tag.as_str().ok_or("a tag is not a string")?);
        }
        out.push('\n');
        out.push_str(text(d, "summary")?);
        out.push('\n');
    }
    out.push_str("\nCite documents by their number. If none of them answers, say so.\n");
    Ok(out)
}

fn bench(size: &str, args: &Args) -> Result<(), String> {
    let name = format!("py_prompt_{size}");
    let read = |path: PathBuf| {
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    let json: serde_json::Value =
        serde_json::from_str(&read(args.data.join(format!("{name}.json")))?)
            .map_err(|e| format!("{name}.json: {e}"))?;
    let source = |ext: &str| read(args.templates.join(format!("py_prompt.{ext}")));
    let (jinja, tera_source, go, hbs) = (
        source("j2")?,
        source("tera")?,
        source("gotmpl")?,
        source("hbs")?,
    );

    // teleprompt, through its public API; one `Data` per prompt, as three
    // hosts would each keep theirs.
    let load = |file: &str, source: &str, syntax: Syntax| {
        let options = LoadOptions::new().with_syntax(syntax);
        Prompt::from_source(file, source, &options).map_err(|e| format!("teleprompt {file}: {e}"))
    };
    let tp_jinja = load("py_prompt.j2", &jinja, Syntax::Jinja)?;
    let tp_go = load("py_prompt.gotmpl", &go, Syntax::Go)?;
    let tp_hbs = load("py_prompt.hbs", &hbs, Syntax::Handlebars)?;
    let (data_jinja, data_go, data_hbs) = (
        Data::new(json.clone()),
        Data::new(json.clone()),
        Data::new(json.clone()),
    );

    // Raw minijinja, set up as teleprompt sets up its Jinja syntax: no
    // auto-escape, the template's final newline kept.
    let mut env = minijinja::Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
            .map_err(|e| format!("minijinja: {e}"))?,
    );
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.add_template_owned("py_prompt", jinja.clone())
        .map_err(|e| format!("minijinja: {e}"))?;
    let mj_template = env
        .get_template("py_prompt")
        .map_err(|e| format!("minijinja: {e}"))?;
    let mj_context = minijinja::Value::from(minijinja::value::Serde(&json));

    // tera, auto-escape off.
    let mut tera = tera::Tera::default();
    tera.autoescape_on(Vec::new());
    tera.add_raw_template("py_prompt", &tera_source)
        .map_err(|e| format!("tera: {e}"))?;
    let tera_context = tera::Context::from_value(json.clone()).map_err(|e| format!("tera: {e}"))?;

    // handlebars-rust, no HTML escaping; the context made once (its
    // `render(name, &data)` would serialize the data again on every call).
    let mut registry = handlebars::Handlebars::new();
    registry.register_escape_fn(handlebars::no_escape);
    registry
        .register_template_string("py_prompt", &hbs)
        .map_err(|e| format!("handlebars-rust: {e}"))?;
    let hbs_context = handlebars::Context::from(json.clone());

    // gotmpl, with Go's `missingkey=error`.
    let go_template = gotmpl::Template::new("py_prompt")
        .missing_key(gotmpl::MissingKey::Error)
        .parse(&go)
        .map_err(|e| format!("gotmpl: {e}"))?;
    let go_value = to_gotmpl(&json);

    let render_tp_jinja = || tp_jinja.render(&data_jinja).map(|r| r.text().to_string());
    let render_tp_go = || tp_go.render(&data_go).map(|r| r.text().to_string());
    let render_tp_hbs = || tp_hbs.render(&data_hbs).map(|r| r.text().to_string());
    let texts = [
        render_tp_jinja().map_err(|e| e.to_string()),
        render_tp_go().map_err(|e| e.to_string()),
        render_tp_hbs().map_err(|e| e.to_string()),
        mj_template.render(&mj_context).map_err(|e| e.to_string()),
        tera.render("py_prompt", &tera_context)
            .map_err(|e| format!("{e:?}")),
        registry
            .render_with_context("py_prompt", &hbs_context)
            .map_err(|e| e.to_string()),
        go_template
            .execute_to_string(&go_value)
            .map_err(|e| e.to_string()),
        hand_written(&json, 0),
    ];
    let mut texts: Vec<String> = ENGINES
        .iter()
        .zip(texts)
        .map(|(engine, text)| text.map_err(|e| format!("{engine}: {e}")))
        .collect::<Result<_, _>>()?;
    if let Some(out) = &args.out {
        cli::write_texts(
            out,
            &name,
            ENGINES.into_iter().zip(texts.iter().map(String::as_str)),
        )?;
    }
    let differ: Vec<&str> = ENGINES
        .iter()
        .zip(&texts)
        .filter(|(_, text)| **text != texts[0])
        .map(|(engine, _)| *engine)
        .collect();
    if !differ.is_empty() {
        eprintln!(
            "warning: {name}: {} render text different from teleprompt-jinja's",
            differ.join(", ")
        );
    }
    if args.render_only {
        return Ok(());
    }
    // The hand-written floor reserves what teleprompt reserves: the last
    // output's size.
    let capacity = texts[0].len();
    let bytes: Vec<usize> = texts.iter().map(String::len).collect();
    texts.clear();

    let mut r_tp_jinja = || {
        black_box(tp_jinja.render(black_box(&data_jinja)).expect("renders"));
    };
    let mut r_tp_go = || {
        black_box(tp_go.render(black_box(&data_go)).expect("renders"));
    };
    let mut r_tp_hbs = || {
        black_box(tp_hbs.render(black_box(&data_hbs)).expect("renders"));
    };
    let mut r_minijinja = || {
        black_box(mj_template.render(black_box(&mj_context)).expect("renders"));
    };
    let mut r_tera = || {
        black_box(
            tera.render("py_prompt", black_box(&tera_context))
                .expect("renders"),
        );
    };
    let mut r_hbs_rust = || {
        black_box(
            registry
                .render_with_context("py_prompt", black_box(&hbs_context))
                .expect("renders"),
        );
    };
    let mut r_gotmpl = || {
        black_box(
            go_template
                .execute_to_string(black_box(&go_value))
                .expect("renders"),
        );
    };
    let mut r_hand = || {
        black_box(hand_written(black_box(&json), capacity).expect("renders"));
    };
    let renders: [&mut dyn FnMut(); 8] = [
        &mut r_tp_jinja,
        &mut r_tp_go,
        &mut r_tp_hbs,
        &mut r_minijinja,
        &mut r_tera,
        &mut r_hbs_rust,
        &mut r_gotmpl,
        &mut r_hand,
    ];
    let mut engines: Vec<Engine<'_>> = ENGINES
        .iter()
        .zip(bytes)
        .zip(renders)
        .map(|((name, bytes), render)| Engine {
            name,
            bytes,
            render,
        })
        .collect();
    race(
        &name,
        args.runs,
        args.run_time,
        args.only.as_deref(),
        &mut engines,
    );
    Ok(())
}

fn main() -> ExitCode {
    cli::main(parse_args, |args| {
        for size in &args.sizes {
            bench(size, &args).map_err(|message| format!("py_prompt_{size}: {message}"))?;
        }
        if !args.chats.is_empty() {
            let json = chat_template::read_json(&args.data.join(&args.conversation))?;
            for name in &args.chats {
                chat::bench(name, &json, &args)
                    .map_err(|message| format!("{name}_chat_template: {message}"))?;
            }
        }
        if !args.turns.is_empty() {
            turn::bench(&args.turns, &args).map_err(|message| format!("turn: {message}"))?;
        }
        Ok(())
    })
}

//! The runner of the hostile-input tests (one module per syntax: [`go`],
//! [`jinja`], [`handlebars`]): each case is a template, and data, that tries to crash, hang
//! or exhaust the host. Each must end in an error of the expected class,
//! whose message names the bound it hit, within the time budget; the
//! slowest case of each file is printed (on stderr, past the test
//! harness's capture) with its time.
//!
//! Cases run on a thread with a 2 MiB stack (a spawned thread's default,
//! as in a tokio worker) under the default limits. The budget is 1 s for
//! an optimized build (`cargo test --release`), the bound; an
//! unoptimized build is given 30 s, enough to catch a case that has no
//! bound at all without failing on the debug build's slowness.
//!
//! A run holds [`crate::common::exclusive`]: the hostile runs take a core
//! and up to the limits' worth of memory each, and are timed, so they run
//! one at a time (as when each syntax was a test binary of its own), and
//! never beside another timed test.

mod chains;
mod confine;
mod data;
mod go;
mod handlebars;
mod jinja;
mod stop;

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::Value;
use teleprompt::{ErrorClass, LoadOptions, Prompt, Syntax};

/// One hostile case.
pub struct Case {
    pub name: &'static str,
    pub template: String,
    pub data: Value,
    pub class: ErrorClass,
    /// Words the error message must contain (the bound's name).
    pub words: &'static str,
}

/// A case.
pub fn case(
    name: &'static str,
    template: impl Into<String>,
    data: Value,
    class: ErrorClass,
    words: &'static str,
) -> Case {
    Case {
        name,
        template: template.into(),
        data,
        class,
        words,
    }
}

/// An object of `n` top-level keys (`key_0` …): the candidates a
/// did-you-mean of a missing name looks through.
pub fn many_keys(n: usize) -> Value {
    Value::Object(
        (0..n)
            .map(|i| (format!("key_{i}"), Value::from(i)))
            .collect(),
    )
}

/// The most a case may take.
pub fn budget() -> Duration {
    if cfg!(debug_assertions) {
        Duration::from_secs(30)
    } else {
        Duration::from_secs(1)
    }
}

/// Runs every case in `syntax`, checks each, and prints the slowest.
pub fn run(syntax: Syntax, cases: Vec<Case>) {
    let _alone = crate::common::exclusive();
    let mut failures = Vec::new();
    let mut slowest: Option<(Duration, &'static str)> = None;
    for case in cases {
        let name = case.name;
        let (elapsed, result) = run_one(syntax, case.template, case.data);
        if slowest.is_none_or(|(time, _)| elapsed > time) {
            slowest = Some((elapsed, name));
        }
        match result {
            Err((class, message)) if class == case.class && message.contains(case.words) => {}
            other => failures.push(format!(
                "{name}: expected a {:?} error with {:?}, got {other:?}",
                case.class, case.words
            )),
        }
        if elapsed > budget() {
            failures.push(format!(
                "{name}: took {elapsed:.2?}, more than the budget of {:?}",
                budget()
            ));
        }
    }
    if let Some((time, name)) = slowest {
        let build = if cfg!(debug_assertions) {
            "unoptimized build"
        } else {
            "optimized build"
        };
        // Written to the process's stderr, not through `eprintln!`, which
        // the test harness captures.
        let _ = writeln!(
            std::io::stderr(),
            "hostile {syntax}: slowest case {name}: {time:.3?} ({build}, budget {:?})",
            budget()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

type Outcome = Result<String, (ErrorClass, String)>;

fn run_one(syntax: Syntax, template: String, data: Value) -> (Duration, Outcome) {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            let start = Instant::now();
            let options = LoadOptions::new().with_syntax(syntax);
            let result = Prompt::from_source("hostile", &template, &options)
                .and_then(|prompt| prompt.render(data))
                .map(|rendered| rendered.into_text())
                .map_err(|error| (error.class(), error.message().to_string()));
            (start.elapsed(), result)
        })
        .expect("a thread")
        .join()
        .expect("no panic and no stack overflow")
}

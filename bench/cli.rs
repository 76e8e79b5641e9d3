//! The command line every side-by-side bench program shares (included by
//! path from `all/`, `gotmpl/`, `handlebars/` and `jinja/`): its flags read
//! in order, the texts it writes to `--out`, and its exit status (2 for a
//! usage error, 1 for a failure). Each program keeps its own flags, defaults
//! and usage.

use std::fmt::Display;
use std::path::Path;
use std::process::ExitCode;
use std::str::FromStr;
use std::time::Duration;

/// The program's arguments after its name, read in order; a flag's value is
/// the argument after it.
pub struct Flags {
    args: std::iter::Skip<std::env::Args>,
    /// The last argument read: the flag a value belongs to.
    flag: String,
}

impl Flags {
    pub fn from_env() -> Flags {
        Flags {
            args: std::env::args().skip(1),
            flag: String::new(),
        }
    }

    /// The value of the flag just read.
    pub fn value(&mut self) -> Result<String, String> {
        self.args
            .next()
            .ok_or(format!("{} needs a value", self.flag))
    }

    /// The value of the flag just read, parsed (`--runs N`).
    pub fn parse<T>(&mut self) -> Result<T, String>
    where
        T: FromStr,
        T::Err: Display,
    {
        self.value()?
            .parse()
            .map_err(|e| format!("{}: {e}", self.flag))
    }

    /// The value of the flag just read, in milliseconds (`--time-ms MS`).
    pub fn millis(&mut self) -> Result<Duration, String> {
        self.parse().map(Duration::from_millis)
    }
}

impl Iterator for Flags {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        let arg = self.args.next()?;
        self.flag.clone_from(&arg);
        Some(arg)
    }
}

/// Writes each engine's text to `out` as `NAME.ENGINE.txt`.
pub fn write_texts<'a>(
    out: &Path,
    name: &str,
    texts: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<(), String> {
    for (engine, text) in texts {
        let path = out.join(format!("{name}.{engine}.txt"));
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// A program's `main`: `parse` reads the flags (its error, the usage or
/// what is wrong with them, is printed and the exit status is 2), then
/// `run` does the work (its error is printed and the exit status is 1).
pub fn main<A>(
    parse: impl FnOnce() -> Result<A, String>,
    run: impl FnOnce(A) -> Result<(), String>,
) -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

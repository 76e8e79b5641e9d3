//! `teleprompt batch`: a dataset of JSON Lines rendered through one prompt,
//! streaming in bounded chunks, each chunk rendered on every core and
//! written in input order; an interrupted run resumes after the whole
//! lines it left.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, ErrorKind, IsTerminal, Seek, SeekFrom, Write};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};
use teleprompt::context::Clock;
use teleprompt::data::{self, Format};
use teleprompt::{Error, ErrorClass, OutputFormat, Prompt, RenderRequest, RequestError};

use crate::{input, LoadArgs, WriteFailed, EXIT_FAILURE, EXIT_USAGE};

/// The most rows read, rendered and written as one chunk.
const CHUNK_ROWS: usize = 4096;
/// A chunk ends once its lines hold this many bytes (a single line may
/// still be as long as `--max-data-bytes`).
const CHUNK_BYTES: usize = 8 << 20;

/// What one input line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RowsAre {
    /// The data of one render: an object.
    Data,
    /// A render request: `{data, history, turn, max_turns, attempt, now,
    /// time_zone, labels, validate_history}`.
    Records,
}

#[derive(Args)]
pub struct BatchArgs {
    /// The prompt file.
    file: PathBuf,
    /// The rows, JSON Lines: one render a line; `-` reads stdin.
    #[arg(long, value_name = "PATH|-")]
    input: String,
    /// The output file, one JSON line a row (default: stdout).
    #[arg(long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// What a line is.
    #[arg(long, value_name = "KIND", value_enum, default_value_t = RowsAre::Data)]
    rows_are: RowsAre,
    /// Output: text (a string), or JSON for messages, openai or anthropic.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = crate::parse_format)]
    format: OutputFormat,
    /// Rows rendered at once (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    jobs: Option<u16>,
    /// Continue an interrupted run: keep the output's whole lines (their
    /// indexes must be 0, 1, 2, …), drop a partial last line, and render
    /// from the first row they lack, appending.
    #[arg(long, requires = "output")]
    resume: bool,
    /// Exit 0 even when some rows failed (their error lines are in the output).
    #[arg(long)]
    allow_errors: bool,
    /// The longest input line, in bytes or with a K, M or G suffix: a
    /// longer line is an error line, and the run goes on.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = input::parse_size)]
    max_data_bytes: usize,
    /// The time of the rows that give no `now`, RFC 3339 (default: the
    /// time the run starts).
    #[arg(long, value_name = "RFC3339", value_parser = parse_now)]
    now: Option<String>,
    /// The time zone of the rows that give no `time_zone`, an IANA name
    /// (default: UTC).
    #[arg(long, value_name = "ZONE", value_parser = crate::parse_time_zone)]
    time_zone: Option<String>,
    #[command(flatten)]
    load: LoadArgs,
}

fn parse_now(text: &str) -> Result<String, String> {
    Clock::parse(text)
        .map(|_| text.trim().to_string())
        .map_err(|error| error.message().to_string())
}

/// A usage problem (an unreadable path, an output that cannot be resumed):
/// reported on stderr, status 2.
fn usage(message: String) -> Result<ExitCode, WriteFailed> {
    let _ = crate::print_err(&format!("error: {message}\n"));
    Ok(ExitCode::from(EXIT_USAGE))
}

pub fn batch(args: &BatchArgs) -> Result<ExitCode, WriteFailed> {
    let started = Instant::now();
    let prompt = match Prompt::from_file_with(&args.file, &args.load.options()) {
        Ok(prompt) => prompt,
        Err(error) => return Ok(crate::fail(&error)),
    };
    let input = match Input::open(&args.input) {
        Ok(input) => input,
        Err(message) => return usage(message),
    };
    if let Some(output) = &args.output {
        if input.is_file(output) {
            return usage(format!(
                "the output {} is the input file: write the output elsewhere",
                output.display()
            ));
        }
    }
    let mut lines = Lines::new(input.reader, args.max_data_bytes);
    // Where the lines go, and how many rows an earlier run already wrote.
    let (sink, sink_name, done) = match &args.output {
        None => (
            Box::new(io::stdout()) as Box<dyn Write + Send>,
            "the output".to_string(),
            0,
        ),
        Some(path) => match open_output(path, args.resume, &mut lines, longest_output(args)) {
            Ok((file, done)) => (
                Box::new(file) as Box<dyn Write + Send>,
                path.display().to_string(),
                done,
            ),
            Err(message) => return usage(message),
        },
    };
    let mut out = Output {
        writer: BufWriter::with_capacity(1 << 20, sink),
        name: sink_name,
    };
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        usize::from,
    );
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(jobs).build() {
        Ok(pool) => pool,
        Err(error) => {
            let _ = crate::print_err(&format!("error: cannot start {jobs} threads: {error}\n"));
            return Ok(ExitCode::from(EXIT_FAILURE));
        }
    };
    let now = args
        .now
        .clone()
        .unwrap_or_else(|| Clock::System.now().to_string());
    let rows = Rows {
        prompt: &prompt,
        rows_are: args.rows_are,
        format: args.format,
        origin: &input.name,
        max_bytes: args.max_data_bytes,
        now,
        time_zone: args.time_zone.clone(),
    };
    let progress = Progress::start(input.size, lines.consumed);
    let ran = run(lines, &rows, &pool, &mut out, &progress, done, started);
    let (rendered, failed) = (ran.rendered, ran.failed);
    if let Err(error) = ran.written {
        progress.clear();
        return Err(out.failed(error));
    }
    let read_error = ran.read.err();
    let index = done + rendered + failed;
    progress.clear();
    let elapsed = started.elapsed();
    let total = rendered + failed;
    let rate = total as f64 / elapsed.as_secs_f64().max(1e-9);
    let mut summary = format!(
        "batch: {total} rows, {rendered} rendered, {failed} failed, {:.2} s, {rate:.0} rows/s",
        elapsed.as_secs_f64()
    );
    if args.resume {
        summary.push_str(&format!(" (resumed after {done} rows already written)"));
    }
    summary.push('\n');
    if let Some(error) = &read_error {
        summary.push_str(&format!(
            "error: cannot read {} after {} rows: {error}\n",
            input.name, index
        ));
    }
    // The rows are written: a stderr that fails does not change the status.
    let _ = crate::print_err(&summary);
    Ok(
        if read_error.is_some() || (failed > 0 && !args.allow_errors) {
            ExitCode::from(EXIT_FAILURE)
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// What a run did: rows rendered and failed, and whether the input could
/// be read and the output written to the end.
struct Ran {
    rendered: u64,
    failed: u64,
    read: io::Result<()>,
    written: io::Result<()>,
}

/// Renders every line of `lines` (row `first` onwards) on `pool`, written
/// to `out` in order. Three stages overlap: a thread reads the next chunk
/// and another writes the last one while the pool renders this one; each
/// hands on one chunk at a time, so memory holds a few chunks at most.
fn run<R: BufRead + Send + 'static>(
    mut lines: Lines<R>,
    rows: &Rows<'_>,
    pool: &rayon::ThreadPool,
    out: &mut Output,
    progress: &Progress,
    first: u64,
    started: Instant,
) -> Ran {
    let (chunks, to_render) = mpsc::sync_channel::<(Vec<Line>, u64)>(1);
    let (rendered_chunks, to_write) = mpsc::sync_channel::<(Vec<(Vec<u8>, bool)>, u64)>(1);
    // Not joined when the output fails: it may be waiting for a line of
    // a stdin that never comes, and ends with the process.
    let reader = std::thread::spawn(move || -> io::Result<()> {
        loop {
            let chunk = lines.chunk()?;
            // An empty chunk is the end; a closed channel, a run that stopped.
            if chunk.is_empty() || chunks.send((chunk, lines.consumed)).is_err() {
                return Ok(());
            }
        }
    });
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || -> (u64, u64, io::Result<()>) {
            let (mut rendered, mut failed) = (0u64, 0u64);
            for (results, position) in to_write {
                for (line, ok) in &results {
                    match ok {
                        true => rendered += 1,
                        false => failed += 1,
                    }
                    if let Err(error) = out.writer.write_all(line) {
                        return (rendered, failed, Err(error));
                    }
                }
                // Whole chunks reach the file: a killed run leaves whole lines.
                if let Err(error) = out.writer.flush() {
                    return (rendered, failed, Err(error));
                }
                progress.update(position, rendered, failed, started);
            }
            (rendered, failed, Ok(()))
        });
        let mut index = first;
        for (chunk, position) in to_render {
            let results: Vec<(Vec<u8>, bool)> = pool.install(|| {
                chunk
                    .par_iter()
                    .enumerate()
                    .map(|(at, line)| rows.render(index + at as u64, line))
                    .collect()
            });
            index += results.len() as u64;
            drop(chunk);
            if rendered_chunks.send((results, position)).is_err() {
                // The writer stopped: it says why.
                break;
            }
        }
        drop(rendered_chunks);
        let stopped = || io::Error::other("the thread stopped unexpectedly");
        let (rendered, failed, written) = writer.join().unwrap_or_else(|_| (0, 0, Err(stopped())));
        let read = match written {
            Ok(()) => reader.join().unwrap_or_else(|_| Err(stopped())),
            Err(_) => Ok(()),
        };
        Ran {
            rendered,
            failed,
            read,
            written,
        }
    })
}

/// The input: a file or stdin.
struct Input {
    reader: Box<dyn BufRead + Send>,
    /// How errors name it: the path as given, or `<stdin>`.
    name: String,
    /// Its size, when it is a regular file (for the progress bar).
    size: Option<u64>,
    /// The file's metadata, to refuse writing the output over it.
    metadata: Option<std::fs::Metadata>,
}

impl Input {
    fn open(path: &str) -> Result<Input, String> {
        if path == "-" {
            return Ok(Input {
                reader: Box::new(BufReader::with_capacity(1 << 20, io::stdin())),
                name: "<stdin>".to_string(),
                size: None,
                metadata: None,
            });
        }
        let file = File::open(path).map_err(|error| format!("cannot read {path}: {error}"))?;
        let metadata = file
            .metadata()
            .map_err(|error| format!("cannot read {path}: {error}"))?;
        if metadata.is_dir() {
            return Err(format!("cannot read {path}: it is a directory"));
        }
        Ok(Input {
            reader: Box::new(BufReader::with_capacity(1 << 20, file)),
            name: path.to_string(),
            size: metadata.is_file().then_some(metadata.len()),
            metadata: Some(metadata),
        })
    }

    /// Whether `path` names the input file itself.
    fn is_file(&self, path: &Path) -> bool {
        let (Some(input), Ok(output)) = (&self.metadata, std::fs::metadata(path)) else {
            return false;
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            input.dev() == output.dev() && input.ino() == output.ino()
        }
        #[cfg(not(unix))]
        {
            let _ = (input, output);
            false
        }
    }
}

/// Opens the output file: truncated, or with `resume` kept up to its last
/// whole line, after checking that its lines are rows 0, 1, 2, … of this
/// input, which `lines` skips. Returns the file, positioned at its end, and
/// how many rows it holds.
fn open_output<R: BufRead>(
    path: &Path,
    resume: bool,
    lines: &mut Lines<R>,
    longest: usize,
) -> Result<(File, u64), String> {
    let shown = path.display();
    if !resume {
        let file = File::create(path).map_err(|error| format!("cannot write {shown}: {error}"))?;
        return Ok((file, 0));
    }
    // Reading a pipe or a device back would block or never end.
    if std::fs::metadata(path).is_ok_and(|metadata| !metadata.is_file()) {
        return Err(format!("cannot resume {shown}: it is not a regular file"));
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|error| format!("cannot open {shown} to resume: {error}"))?;
    let (done, keep) = written_rows(&file, &shown.to_string(), longest)?;
    for skipped in 0..done {
        match lines.next() {
            Ok(Some(_)) => {}
            Ok(None) => {
                return Err(format!(
                    "cannot resume: {shown} holds {done} rows but the input has only {skipped}: \
                     is it the output of this input?"
                ))
            }
            Err(error) => return Err(format!("cannot read the input: {error}")),
        }
    }
    file.set_len(keep)
        .and_then(|()| file.seek(SeekFrom::Start(keep)))
        .map_err(|error| format!("cannot resume {shown}: {error}"))?;
    Ok((file, done))
}

/// The longest line a run with these flags writes: a row's output is
/// bounded by `max_output`, and its messages by the history it read,
/// JSON-escaped (at most 6 bytes a byte); with room for the rest.
fn longest_output(args: &BatchArgs) -> usize {
    let max_output = args.load.options().limits.max_output;
    max_output
        .saturating_add(args.max_data_bytes)
        .saturating_mul(6)
        .saturating_add(1 << 20)
}

/// The start of a line `teleprompt batch` writes.
#[derive(Deserialize)]
struct WrittenLine {
    index: u64,
    output: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

/// How many whole lines of rows 0, 1, 2, … the output holds, and the bytes
/// they take; a last line without its newline (a run killed while writing
/// it) is not counted. Any other line is an error.
fn written_rows(file: &File, shown: &str, longest: usize) -> Result<(u64, u64), String> {
    let mut lines = Lines::new(BufReader::with_capacity(1 << 20, file), longest);
    let (mut rows, mut keep) = (0u64, 0u64);
    loop {
        let line = match lines.next() {
            Ok(Some(line)) => line,
            Ok(None) => return Ok((rows, keep)),
            Err(error) => return Err(format!("cannot read {shown} to resume: {error}")),
        };
        if !line.terminated {
            // Cut mid-line: dropped, and rendered again.
            return Ok((rows, keep));
        }
        let number = rows + 1;
        let not_ours = |why: String| {
            format!(
                "cannot resume: line {number} of {shown} is not a line of teleprompt batch ({why})"
            )
        };
        let Some(text) = line.text else {
            return Err(not_ours("it is too long".into()));
        };
        let written: WrittenLine =
            serde_json::from_slice(&text).map_err(|error| not_ours(error.to_string()))?;
        if written.output.is_some() == written.error.is_some() {
            return Err(not_ours("it has neither `output` nor `error`".into()));
        }
        if written.index != rows {
            return Err(format!(
                "cannot resume: line {number} of {shown} is row {}, not row {rows}: \
                 the output's rows must be 0, 1, 2, … in order",
                written.index
            ));
        }
        rows += 1;
        keep = lines.consumed;
    }
}

/// Where the output lines go.
struct Output {
    writer: BufWriter<Box<dyn Write + Send>>,
    /// `the output` (stdout) or the file's path.
    name: String,
}

impl Output {
    /// A write that failed: said on stderr, except a closed pipe (`| head`),
    /// which ends the command quietly.
    fn failed(&self, error: io::Error) -> WriteFailed {
        if error.kind() != ErrorKind::BrokenPipe {
            let _ = crate::print_err(&format!("error: cannot write {}: {error}\n", self.name));
        }
        WriteFailed
    }
}

/// One input line.
struct Line {
    /// Its bytes without the newline; `None` when it is longer than the
    /// bound (its bytes were skipped, not kept).
    text: Option<Vec<u8>>,
    /// Whether it ended with a newline (the last line of a file may not).
    terminated: bool,
}

/// The lines of a reader, each at most `max` bytes kept in memory.
struct Lines<R> {
    reader: R,
    max: usize,
    /// Bytes read so far.
    consumed: u64,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R, max: usize) -> Lines<R> {
        Lines {
            reader,
            max,
            consumed: 0,
        }
    }

    /// The next line; `None` at the end of the input. A line longer than
    /// the bound is read to its end but not kept.
    fn next(&mut self) -> io::Result<Option<Line>> {
        let mut text = Some(Vec::new());
        let mut started = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            if available.is_empty() {
                return Ok(started.then_some(Line {
                    text,
                    terminated: false,
                }));
            }
            started = true;
            let newline = memchr::memchr(b'\n', available);
            let (part, used) = match newline {
                Some(at) => (available.get(..at).unwrap_or_default(), at + 1),
                None => (available, available.len()),
            };
            if let Some(kept) = &mut text {
                if kept.len().saturating_add(part.len()) > self.max {
                    text = None;
                } else {
                    kept.extend_from_slice(part);
                }
            }
            self.reader.consume(used);
            self.consumed += used as u64;
            if newline.is_some() {
                return Ok(Some(Line {
                    text,
                    terminated: true,
                }));
            }
        }
    }

    /// The next lines: up to [`CHUNK_ROWS`] of them, or fewer once they
    /// hold [`CHUNK_BYTES`]; empty at the end of the input.
    fn chunk(&mut self) -> io::Result<Vec<Line>> {
        let mut chunk = Vec::new();
        let mut bytes = 0usize;
        while chunk.len() < CHUNK_ROWS && bytes < CHUNK_BYTES {
            let Some(line) = self.next()? else {
                break;
            };
            bytes = bytes.saturating_add(line.text.as_ref().map_or(0, Vec::len));
            chunk.push(line);
        }
        Ok(chunk)
    }
}

/// How every row is rendered: the prompt, what a line is, the output
/// format, and the defaults of a row's request.
struct Rows<'a> {
    prompt: &'a Prompt,
    rows_are: RowsAre,
    format: OutputFormat,
    /// The input's name, for errors.
    origin: &'a str,
    max_bytes: usize,
    now: String,
    time_zone: Option<String>,
}

impl Rows<'_> {
    /// The output line of row `index` (its line, with a newline), and
    /// whether it rendered.
    fn render(&self, index: u64, line: &Line) -> (Vec<u8>, bool) {
        let request = match self.request(index + 1, line) {
            Ok(request) => request,
            Err(error) => return (error_line(index, &error), false),
        };
        let rendered = match request.render(self.prompt) {
            Ok(rendered) => rendered,
            Err(RequestError::Malformed(message)) => {
                let error = self.input_error(index + 1, None, "record", message);
                return (error_line(index, &error), false);
            }
            Err(RequestError::Render(error)) => {
                return (error_line(index, &error.to_json()), false)
            }
        };
        let mut out = Vec::with_capacity(rendered.text().len() + 64);
        out.extend_from_slice(format!("{{\"index\":{index},\"output\":").as_bytes());
        let written = match self.format {
            OutputFormat::Text => serde_json::to_writer(&mut out, rendered.text()),
            format => match rendered.to_format(format) {
                Ok(value) => serde_json::to_writer(&mut out, &value),
                Err(error) => return (error_line(index, &error.to_json()), false),
            },
        };
        if let Err(error) = written {
            // Serializing text and JSON values into memory does not fail.
            let error = Error::new(
                ErrorClass::Render,
                format!("cannot write the output: {error}"),
            );
            return (error_line(index, &error.to_json()), false);
        }
        if !rendered.warnings().is_empty() {
            out.extend_from_slice(b",\"warnings\":");
            let _ = serde_json::to_writer(&mut out, rendered.warnings());
        }
        if let Some(error) = rendered.recovered_error() {
            // `on_error: original`: the unrendered template, and why.
            out.extend_from_slice(b",\"recovered_error\":");
            let _ = serde_json::to_writer(&mut out, &error.to_json());
        }
        out.extend_from_slice(b"}\n");
        (out, true)
    }

    /// The request of line `number` (1-based), or the error that line is.
    fn request(&self, number: u64, line: &Line) -> Result<RenderRequest, Value> {
        let Some(bytes) = &line.text else {
            return Err(self.input_error(
                number,
                None,
                "too-long",
                format!(
                    "the line is longer than {} bytes (--max-data-bytes)",
                    self.max_bytes
                ),
            ));
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(self.input_error(
                number,
                None,
                "blank-line",
                format!("the line is blank: every line must be {}", self.expected()),
            ));
        }
        let text = std::str::from_utf8(bytes).map_err(|error| {
            let valid = error.valid_up_to();
            let column = std::str::from_utf8(bytes.get(..valid).unwrap_or_default())
                .map_or(1, |text| text.chars().count() + 1);
            let byte = bytes.get(valid).copied().unwrap_or_default();
            self.input_error(
                number,
                Some(column),
                "not-utf8",
                format!("the line is not UTF-8 text (byte 0x{byte:02X})"),
            )
        })?;
        let reads = |name: &str| self.prompt.reads(name);
        // Data: only what the prompt may read is built, as `render --data`
        // builds it; a record's top-level keys are its fields.
        let keep: input::Keep<'_> = match self.rows_are {
            RowsAre::Data => Some(&reads),
            RowsAre::Records => None,
        };
        let value = data::parse_text_keeping(text, Some(Format::Json), self.origin, keep).map_err(
            |error| {
                self.input_error(
                    number,
                    error.location().map(|at| at.column),
                    "json",
                    error.message().to_string(),
                )
            },
        )?;
        if !value.is_object() {
            return Err(self.input_error(
                number,
                None,
                "not-object",
                format!(
                    "the line is {}: every line must be {}",
                    data::describe(&value),
                    self.expected()
                ),
            ));
        }
        let mut request = match self.rows_are {
            RowsAre::Data => RenderRequest::with_data(value),
            RowsAre::Records => serde_json::from_value(value).map_err(|error| {
                self.input_error(number, None, "record", format!("bad record: {error}"))
            })?,
        };
        if request.now.is_none() {
            request.now = Some(self.now.clone());
        }
        if request.time_zone.is_none() {
            request.time_zone.clone_from(&self.time_zone);
        }
        Ok(request)
    }

    /// What a line must be, for messages.
    fn expected(&self) -> &'static str {
        match self.rows_are {
            RowsAre::Data => "a JSON object, the data of one render",
            RowsAre::Records => {
                "a JSON object, a render record {data, history, turn, attempt, now, …}"
            }
        }
    }

    /// An `input` error about line `number` of the input, as JSON.
    fn input_error(
        &self,
        number: u64,
        column: Option<usize>,
        kind: &'static str,
        message: String,
    ) -> Value {
        let mut error = Error::new(ErrorClass::Input, message)
            .with_kind(kind)
            .with_file(self.origin)
            .to_json();
        if let Value::Object(fields) = &mut error {
            fields.insert("line".into(), json!(number));
            fields.insert("column".into(), json!(column));
        }
        error
    }
}

/// The output line of a row that failed.
fn error_line(index: u64, error: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({"index": index, "error": error})).unwrap_or_default();
    line.push(b'\n');
    line
}

/// The progress bar: on a terminal only, on stderr.
struct Progress(Option<ProgressBar>);

impl Progress {
    /// A bar over the input's bytes when its size is known, else a
    /// spinner; nothing when stderr is not a terminal.
    fn start(size: Option<u64>, position: u64) -> Progress {
        if !io::stderr().is_terminal() {
            return Progress(None);
        }
        let (bar, template) = match size {
            Some(size) => (
                ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr()),
                "{bar:30} {percent:>3}% {msg}, ETA {eta}",
            ),
            None => (
                ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
                "{spinner} {msg}",
            ),
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.set_position(position);
        bar.reset_eta();
        bar.set_message("starting");
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress(Some(bar))
    }

    fn update(&self, position: u64, rendered: u64, failed: u64, started: Instant) {
        let Some(bar) = &self.0 else {
            return;
        };
        let rows = rendered + failed;
        let rate = rows as f64 / started.elapsed().as_secs_f64().max(1e-9);
        bar.set_position(position);
        bar.set_message(format!("{rows} rows ({failed} failed), {rate:.0} rows/s"));
    }

    fn clear(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

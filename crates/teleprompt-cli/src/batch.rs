//! `teleprompt batch`: a dataset of JSON Lines rendered through one prompt,
//! streaming: a reader thread reads rows while the bytes in flight fit a
//! budget, `--jobs` workers render them one row at a time, and the main
//! thread writes each line as soon as the rows before it are written,
//! stopping a row's render at `--row-timeout` (giving up on it, a little
//! later, if it missed that deadline). A state file beside
//! the output says which prompt version and input rows it came from, so
//! `--resume` continues exactly or refuses.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, ErrorKind, IsTerminal, Seek, SeekFrom, Write};
use std::num::NonZeroUsize;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use teleprompt::context::Clock;
use teleprompt::data::{self, Format};
use teleprompt::{Error, ErrorClass, OutputFormat, Prompt, RenderRequest, RequestError};

use crate::{input, LoadArgs, WriteFailed, EXIT_FAILURE, EXIT_USAGE};

/// The bytes of rows in flight at once (read and not yet written: input
/// lines, and output lines once rendered), whatever `--jobs`: the reader
/// waits for room before it reads on. A row longer than this is read
/// only once nothing else is in flight, and is alone.
const IN_FLIGHT_BYTES: usize = 32 << 20;
/// What a row costs the budget besides its bytes (so that many tiny rows
/// are bounded too: at most 32 MiB / 512 = 65,536 rows in flight).
const ROW_OVERHEAD: usize = 512;
/// The bytes of input lines rendering at once, whatever `--jobs`: a row's
/// data takes many times its JSON size once parsed, so the workers wait
/// for room before they parse (a longer row renders alone).
const RENDERING_BYTES: usize = 8 << 20;
/// Rows read ahead for the workers (within the budget).
const JOB_QUEUE: usize = 4096;

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
    /// Output: text (a string), or JSON for messages, openai, anthropic or bedrock.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = crate::choices::output_format())]
    format: OutputFormat,
    /// Rows rendered at once (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    jobs: Option<u16>,
    /// Continue an interrupted run: keep the output's whole lines (their
    /// indexes must be 0, 1, 2, …), drop a partial last line, and render
    /// from the first row they lack, appending.
    #[arg(long, requires = "output")]
    resume: bool,
    /// With `--resume`: when the output came from another prompt version,
    /// format or input, start over (truncating it) instead of refusing.
    #[arg(long, requires = "resume")]
    restart_on_mismatch: bool,
    /// The longest a row may render, in seconds (`0.5`) or with `ms`/`s`/`m`
    /// (`500ms`, `2m`): a row that runs longer becomes its error line
    /// (`render/timeout`) and the run goes on; `0` waits for ever.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    row_timeout: Duration,
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

fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = if let Some(number) = text.strip_suffix("ms") {
        (number, 0.001)
    } else if let Some(number) = text.strip_suffix('s') {
        (number, 1.0)
    } else if let Some(number) = text.strip_suffix('m') {
        (number, 60.0)
    } else {
        (text, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (500ms, 2s, 1.5, 2m)"))?;
    if !value.is_finite() || value < 0.0 || value * unit > 1e9 {
        return Err(format!("`{text}` is not a duration (500ms, 2s, 1.5, 2m)"));
    }
    Ok(Duration::from_secs_f64(value * unit))
}

/// A duration as `--row-timeout` shows it.
fn show_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        format!("{millis} ms")
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
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
    let (size, name) = (input.size, input.name.clone());
    let mut lines = Lines::new(input.reader, args.max_data_bytes);
    // Where the lines go, how many rows an earlier run already wrote, and
    // the state file that says which prompt and input they came from.
    let (sink, sink_name, done, state) = match &args.output {
        None => (
            Box::new(io::stdout()) as Box<dyn Write + Send>,
            "the output".to_string(),
            0,
            None,
        ),
        Some(path) => {
            let mut fresh = State::new(path, &prompt, args);
            let opened = match args.resume {
                false => create_output(path, &mut fresh).map_err(Refused::Usage),
                true => resume_output(path, &mut lines, longest_output(args), fresh.clone()),
            };
            let opened = match opened {
                Err(Refused::Mismatch(message)) if args.restart_on_mismatch => {
                    // Start over: from the input's first line.
                    if args.input == "-" && lines.consumed > 0 {
                        return usage(format!(
                            "{message}; cannot start over: the input is stdin, and part of it was read"
                        ));
                    }
                    let _ = crate::print_err(&format!("note: {message}; starting over\n"));
                    match Input::open(&args.input) {
                        Ok(input) => lines = Lines::new(input.reader, args.max_data_bytes),
                        Err(message) => return usage(message),
                    }
                    create_output(path, &mut fresh).map_err(Refused::Usage)
                }
                opened => opened,
            };
            match opened {
                Ok((file, done, state)) => (
                    Box::new(file) as Box<dyn Write + Send>,
                    path.display().to_string(),
                    done,
                    state,
                ),
                Err(Refused::Usage(message)) => return usage(message),
                Err(Refused::Mismatch(message)) => {
                    return usage(format!(
                    "{message}; run without --resume, or add --restart-on-mismatch, to start over"
                ))
                }
            }
        }
    };
    let written_bytes = state.as_ref().map_or(0, |state| state.output_bytes);
    let mut out = Output {
        writer: BufWriter::with_capacity(1 << 20, sink),
        name: sink_name,
        written: written_bytes,
    };
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        usize::from,
    );
    let now = args
        .now
        .clone()
        .unwrap_or_else(|| Clock::System.now().to_string());
    let rows = Rows {
        prompt,
        rows_are: args.rows_are,
        format: args.format,
        origin: name.clone(),
        max_bytes: args.max_data_bytes,
        now,
        time_zone: args.time_zone.clone(),
        timeout: (!args.row_timeout.is_zero()).then_some(args.row_timeout),
    };
    let timeout = rows.timeout;
    let progress = Progress::start(size, lines.consumed);
    let ran = run(
        lines, rows, jobs, timeout, &mut out, state, &progress, done, started,
    );
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
            "error: cannot read {name} after {index} rows: {error}\n"
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

/// One row handed to a worker: its index, its line, the bytes of the
/// budget it holds, and the input's hash and position after it.
struct Job {
    index: u64,
    line: Line,
    cost: usize,
    hash: u64,
    position: u64,
}

/// What the writer hears: a row rendered (its output line), or the end of
/// the input (how many rows it held, and whether it could be read).
enum Event {
    Row {
        index: u64,
        out: Vec<u8>,
        ok: bool,
        cost: usize,
        hash: u64,
        position: u64,
    },
    End {
        rows: u64,
        read: io::Result<()>,
    },
}

/// The bytes of rows in flight (read and not yet written: their input
/// lines, and their output lines once rendered), shared by the reader,
/// which waits for room before it reads on, and the writer, which frees
/// a row's bytes once its line is written.
struct Budget {
    /// The bytes held, and how many threads wait for room.
    held: Mutex<(usize, usize)>,
    freed: Condvar,
    cap: usize,
}

impl Budget {
    /// Waits until `bytes` fit (a row larger than the whole budget waits
    /// until nothing else is in flight, then goes alone); returns what it
    /// holds.
    fn acquire(&self, bytes: usize) -> usize {
        let bytes = bytes.min(self.cap);
        let mut held = lock(&self.held);
        while held.0 > 0 && held.0.saturating_add(bytes) > self.cap {
            held.1 += 1;
            held = self
                .freed
                .wait(held)
                .unwrap_or_else(PoisonError::into_inner);
            held.1 -= 1;
        }
        held.0 += bytes;
        bytes
    }

    /// Adds `bytes` without waiting (a row's output line, built already).
    fn charge(&self, bytes: usize) {
        let mut held = lock(&self.held);
        held.0 = held.0.saturating_add(bytes);
    }

    fn release(&self, bytes: usize) {
        let mut held = lock(&self.held);
        held.0 = held.0.saturating_sub(bytes);
        if held.1 > 0 {
            self.freed.notify_all();
        }
    }
}

/// What the workers share: the rows' recipe, the queue of jobs, the
/// writer's channel, the budget, when each row in progress started, and
/// how many workers should retire (one for each row given up on, whose
/// worker still runs and is replaced).
struct Shared {
    rows: Rows,
    jobs: Queue,
    events: Mutex<mpsc::Sender<Event>>,
    budget: Budget,
    /// The bytes of the rows rendering now.
    rendering: Budget,
    /// When each row in progress started, and the input's hash and
    /// position after it.
    started: Mutex<HashMap<u64, (Instant, u64, u64)>>,
    retire: AtomicUsize,
}

/// A worker: renders jobs until the queue ends, or until it is asked to
/// retire (after a row it was given up on).
fn worker(shared: Arc<Shared>) {
    let events = shared
        .events
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    loop {
        let Some(job) = shared.jobs.pop() else {
            return;
        };
        let size = job.line.text.as_ref().map_or(0, Vec::len);
        let rendering = shared.rendering.acquire(size);
        lock(&shared.started).insert(job.index, (Instant::now(), job.hash, job.position));
        let rendered = panic::catch_unwind(AssertUnwindSafe(|| {
            shared.rows.render(job.index, &job.line)
        }));
        lock(&shared.started).remove(&job.index);
        drop(job.line);
        shared.rendering.release(rendering);
        let (out, ok) = rendered.unwrap_or_else(|_| {
            let error = Error::new(
                ErrorClass::Render,
                "the render of this row stopped on an internal error (a bug: please report it)",
            )
            .with_kind("internal");
            (error_line(job.index, &error.to_json()), false)
        });
        shared.budget.charge(out.len());
        let cost = job.cost + out.len();
        let event = Event::Row {
            index: job.index,
            out,
            ok,
            cost,
            hash: job.hash,
            position: job.position,
        };
        if events.send(event).is_err() {
            return;
        }
        let retired = shared
            .retire
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if retired.is_ok() {
            return;
        }
    }
}

/// The rows read and not yet taken by a worker. The reader waits while
/// it holds [`JOB_QUEUE`] rows and is woken once half are taken, so that
/// neither side wakes the other for every row.
#[derive(Default)]
struct Queue {
    state: Mutex<QueueState>,
    /// Rows to take, or the end.
    filled: Condvar,
    /// Room to read on.
    drained: Condvar,
}

#[derive(Default)]
struct QueueState {
    rows: VecDeque<Job>,
    closed: bool,
    /// Workers waiting for a row.
    idle: usize,
}

impl Queue {
    fn push(&self, job: Job) {
        let mut state = lock(&self.state);
        while state.rows.len() >= JOB_QUEUE {
            state = self
                .drained
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.rows.push_back(job);
        if state.idle > 0 {
            self.filled.notify_one();
        }
    }

    fn close(&self) {
        lock(&self.state).closed = true;
        self.filled.notify_all();
    }

    /// The next row; `None` once the queue is closed and empty.
    fn pop(&self) -> Option<Job> {
        let mut state = lock(&self.state);
        loop {
            if let Some(job) = state.rows.pop_front() {
                if state.rows.len() == JOB_QUEUE / 2 {
                    self.drained.notify_one();
                }
                return Some(job);
            }
            if state.closed {
                return None;
            }
            state.idle += 1;
            state = self
                .filled
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.idle -= 1;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How often the output is flushed and its state file rewritten.
const SYNC_EVERY: Duration = Duration::from_millis(100);

/// How much longer than `--row-timeout` a row whose render was told to
/// stop is waited for, before it is given up on.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// Renders every line of `lines` (row `first` onwards) on `jobs` worker
/// threads, written to `out` in order as rows finish. A reader thread
/// reads rows while the budget has room; a row's render stops itself at
/// `timeout` (its error line); one that misses it by `STOP_GRACE`
/// becomes its error line, its worker is replaced, and the run goes on
/// (the budget still counts its bytes until it ends).
#[allow(clippy::too_many_arguments)]
fn run<R: BufRead + Send + 'static>(
    mut lines: Lines<R>,
    rows: Rows,
    jobs: usize,
    timeout: Option<Duration>,
    out: &mut Output,
    mut state: Option<State>,
    progress: &Progress,
    first: u64,
    started: Instant,
) -> Ran {
    let (event_sender, events) = mpsc::channel::<Event>();
    let shared = Arc::new(Shared {
        rows,
        jobs: Queue::default(),
        events: Mutex::new(event_sender.clone()),
        budget: Budget {
            held: Mutex::new((0, 0)),
            freed: Condvar::new(),
            cap: IN_FLIGHT_BYTES,
        },
        rendering: Budget {
            held: Mutex::new((0, 0)),
            freed: Condvar::new(),
            cap: RENDERING_BYTES,
        },
        started: Mutex::new(HashMap::new()),
        retire: AtomicUsize::new(0),
    });
    for _ in 0..jobs {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || worker(shared));
    }
    // Not joined: it may be waiting for a line of a stdin that never
    // comes, and ends with the process.
    let reader_shared = Arc::clone(&shared);
    std::thread::spawn(move || {
        let mut index = first;
        let read = loop {
            let line = match lines.next() {
                Ok(Some(line)) => line,
                Ok(None) => break Ok(()),
                Err(error) => break Err(error),
            };
            let bytes = line.text.as_ref().map_or(0, Vec::len);
            let cost = reader_shared.budget.acquire(bytes + ROW_OVERHEAD);
            let job = Job {
                index,
                line,
                cost,
                hash: lines.hash,
                position: lines.consumed,
            };
            reader_shared.jobs.push(job);
            index += 1;
        };
        reader_shared.jobs.close();
        let _ = event_sender.send(Event::End { rows: index, read });
    });

    let (mut rendered, mut failed) = (0u64, 0u64);
    let mut next = first;
    let mut total: Option<u64> = None;
    let mut read = Ok(());
    let mut pending: BTreeMap<u64, (Vec<u8>, bool, usize, u64, u64)> = BTreeMap::new();
    let mut given_up: HashSet<u64> = HashSet::new();
    // The hash and position of the input after the last row written.
    let (mut hash, mut position) = state
        .as_ref()
        .map_or((FNV_START, 0), |s| (s.input_hash, s.input_bytes));
    let mut dirty = false;
    let mut last_sync = Instant::now();
    let sync = |out: &mut Output,
                state: &mut Option<State>,
                next: u64,
                hash: u64,
                position: u64|
     -> io::Result<()> {
        out.writer.flush()?;
        if let Some(state) = state {
            state.rows = next;
            state.input_hash = hash;
            state.input_bytes = position;
            state.output_bytes = out.written;
            state.save()?;
        }
        Ok(())
    };
    let written = loop {
        // Every row ready in order is written.
        let mut failure = None;
        while let Some((line, ok, cost, row_hash, row_position)) = pending.remove(&next) {
            match ok {
                true => rendered += 1,
                false => failed += 1,
            }
            if let Err(error) = out.write(&line) {
                failure = Some(error);
                break;
            }
            shared.budget.release(cost);
            (hash, position) = (row_hash, row_position);
            next += 1;
            dirty = true;
        }
        if let Some(error) = failure {
            break Err(error);
        }
        if total == Some(next) {
            break Ok(());
        }
        // The next row, given up on once it has run too long.
        let mut wait = SYNC_EVERY;
        if let Some(timeout) = timeout {
            let since = lock(&shared.started).get(&next).copied();
            if let Some((since, row_hash, row_position)) = since {
                // The render stops itself at the timeout; a render that
                // misses it is given up on a little later.
                let spent = since.elapsed();
                let give_up = timeout.saturating_add(STOP_GRACE);
                if spent >= give_up {
                    let error = timed_out(timeout, "given up on");
                    given_up.insert(next);
                    let line = error_line(next, &error.to_json());
                    pending.insert(next, (line, false, 0, row_hash, row_position));
                    shared.retire.fetch_add(1, Ordering::SeqCst);
                    let replacement = Arc::clone(&shared);
                    std::thread::spawn(move || worker(replacement));
                    continue;
                }
                wait = wait.min(give_up - spent);
            }
        }
        if dirty && last_sync.elapsed() >= SYNC_EVERY {
            if let Err(error) = sync(out, &mut state, next, hash, position) {
                break Err(error);
            }
            dirty = false;
            last_sync = Instant::now();
            progress.update(position, rendered, failed, started);
        }
        // Rows are taken as they come, a few at a time: the writer sleeps
        // a millisecond rather than wake for every row.
        let event = match events.try_recv() {
            Err(mpsc::TryRecvError::Empty) => {
                std::thread::sleep(wait.min(Duration::from_millis(1)));
                events.try_recv().map_err(|error| match error {
                    mpsc::TryRecvError::Empty => mpsc::RecvTimeoutError::Timeout,
                    mpsc::TryRecvError::Disconnected => mpsc::RecvTimeoutError::Disconnected,
                })
            }
            event => event.map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match event {
            Ok(Event::Row {
                index,
                out: line,
                ok,
                cost,
                hash: row_hash,
                position: row_position,
            }) => {
                if given_up.remove(&index) {
                    // Its error line is written already.
                    shared.budget.release(cost);
                } else {
                    pending.insert(index, (line, ok, cost, row_hash, row_position));
                }
            }
            Ok(Event::End { rows, read: result }) => {
                total = Some(rows);
                read = result;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break Ok(()),
        }
    };
    let written = written.and_then(|()| sync(out, &mut state, next, hash, position));
    Ran {
        rendered,
        failed,
        read,
        written,
    }
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

/// Why an output cannot be resumed: a usage problem, or an output that
/// came from another prompt, format or input (`--restart-on-mismatch`
/// starts over on those).
enum Refused {
    Usage(String),
    Mismatch(String),
}

/// The output file, truncated, with its state file at row 0; no state
/// file beside an output that is not a regular file (`/dev/null`, a
/// pipe), which cannot be resumed.
fn create_output(path: &Path, state: &mut State) -> Result<(File, u64, Option<State>), String> {
    let shown = path.display();
    let file = File::create(path).map_err(|error| format!("cannot write {shown}: {error}"))?;
    if !file.metadata().is_ok_and(|metadata| metadata.is_file()) {
        return Ok((file, 0, None));
    }
    state
        .save()
        .map_err(|error| format!("cannot write {}: {error}", state.path.display()))?;
    Ok((file, 0, Some(state.clone())))
}

/// Opens the output to resume it: checks its state file against this run
/// (the prompt's version, the format, what a row is) and against the input
/// (the hash of the rows it says were written, which `lines` skips), checks
/// that its lines up to there are rows 0, 1, 2, …, and cuts it there.
/// Returns the file, positioned at its end, how many rows it holds, and
/// the state to go on with.
fn resume_output<R: BufRead>(
    path: &Path,
    lines: &mut Lines<R>,
    longest: usize,
    fresh: State,
) -> Result<(File, u64, Option<State>), Refused> {
    let shown = path.display();
    let metadata = std::fs::metadata(path);
    // Reading a pipe or a device back would block or never end.
    if metadata.as_ref().is_ok_and(|metadata| !metadata.is_file()) {
        return Err(Refused::Usage(format!(
            "cannot resume {shown}: it is not a regular file"
        )));
    }
    let empty = metadata
        .as_ref()
        .map_or(true, |metadata| metadata.len() == 0);
    let saved = match State::load(&fresh.path) {
        Ok(saved) => saved,
        Err(error) if error.kind() == ErrorKind::NotFound && empty => {
            // Nothing written yet: a fresh run.
            let mut fresh = fresh;
            return create_output(path, &mut fresh).map_err(Refused::Usage);
        }
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return Err(Refused::Mismatch(format!(
                "cannot resume {shown}: its state file {} is missing (the output was not \
                 written by this version of teleprompt batch, or the file was removed), so \
                 nothing says which prompt and input it came from",
                fresh.path.display()
            )))
        }
        Err(error) => {
            return Err(Refused::Mismatch(format!(
                "cannot resume {shown}: its state file {} cannot be read: {error}",
                fresh.path.display()
            )))
        }
    };
    let changed = |what: &str, was: &str, is: &str| {
        Refused::Mismatch(format!(
            "cannot resume {shown}: it was written with {what} {was}, and this run has {is}"
        ))
    };
    if saved.prompt_version != fresh.prompt_version {
        return Err(changed(
            "prompt version",
            &saved.prompt_version,
            &format!(
                "{} (the prompt or a file it includes changed)",
                fresh.prompt_version
            ),
        ));
    }
    if saved.format != fresh.format {
        return Err(changed("--format", &saved.format, &fresh.format));
    }
    if saved.rows_are != fresh.rows_are {
        return Err(changed("--rows-are", &saved.rows_are, &fresh.rows_are));
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|error| Refused::Usage(format!("cannot open {shown} to resume: {error}")))?;
    let length = file
        .metadata()
        .map_err(|error| Refused::Usage(format!("cannot read {shown}: {error}")))?
        .len();
    if length < saved.output_bytes {
        return Err(Refused::Mismatch(format!(
            "cannot resume {shown}: it holds {length} bytes, fewer than the {} its state file \
             says were written: was it cut or replaced?",
            saved.output_bytes
        )));
    }
    let (written, bytes) = written_rows(
        io::Read::take(io::Read::by_ref(&mut file), saved.output_bytes),
        &shown.to_string(),
        longest,
    )
    .map_err(Refused::Mismatch)?;
    if written != saved.rows || bytes != saved.output_bytes {
        return Err(Refused::Mismatch(format!(
            "cannot resume {shown}: its first {} bytes hold {written} whole rows, not the {} \
             its state file says: was it edited?",
            saved.output_bytes, saved.rows
        )));
    }
    for skipped in 0..saved.rows {
        match lines.next() {
            Ok(Some(_)) => {}
            Ok(None) => {
                return Err(Refused::Mismatch(format!(
                    "cannot resume {shown}: it holds {} rows but the input has only {skipped}: \
                     is it the output of this input?",
                    saved.rows
                )))
            }
            Err(error) => return Err(Refused::Usage(format!("cannot read the input: {error}"))),
        }
    }
    if lines.hash != saved.input_hash || lines.consumed != saved.input_bytes {
        let rows = match saved.rows {
            1 => "the input's first row is not the row".to_string(),
            n => format!("the input's first {n} rows are not the rows"),
        };
        return Err(Refused::Mismatch(format!(
            "cannot resume {shown}: {rows} it was written from: the input changed"
        )));
    }
    // Rows written after the state file was last saved are dropped and
    // rendered again, as is a partial last line.
    file.set_len(saved.output_bytes)
        .and_then(|()| file.seek(SeekFrom::Start(saved.output_bytes)))
        .map_err(|error| Refused::Usage(format!("cannot resume {shown}: {error}")))?;
    let state = State {
        path: fresh.path,
        ..saved
    };
    Ok((file, state.rows, Some(state)))
}

/// The state file beside an output (`OUT.batch.json`): which prompt
/// version, format and kind of row wrote it, and how far: the rows written,
/// the bytes of the output they take, and the hash and bytes of the input
/// lines they came from. Rewritten (atomically) as rows are written.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct State {
    #[serde(skip)]
    path: PathBuf,
    teleprompt_batch: u32,
    prompt: String,
    prompt_version: String,
    format: String,
    rows_are: String,
    rows: u64,
    output_bytes: u64,
    input_bytes: u64,
    #[serde(with = "hex")]
    input_hash: u64,
}

mod hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{value:016x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        let text = String::deserialize(deserializer)?;
        u64::from_str_radix(&text, 16).map_err(serde::de::Error::custom)
    }
}

impl State {
    fn new(output: &Path, prompt: &Prompt, args: &BatchArgs) -> State {
        let mut path = output.as_os_str().to_owned();
        path.push(".batch.json");
        State {
            path: PathBuf::from(path),
            teleprompt_batch: 1,
            prompt: args.file.display().to_string(),
            prompt_version: prompt.version(),
            format: args.format.to_string(),
            rows_are: match args.rows_are {
                RowsAre::Data => "data",
                RowsAre::Records => "records",
            }
            .to_string(),
            rows: 0,
            output_bytes: 0,
            input_bytes: 0,
            input_hash: FNV_START,
        }
    }

    fn load(path: &Path) -> io::Result<State> {
        let metadata = std::fs::metadata(path)?;
        if !metadata.is_file() || metadata.len() > 64 << 10 {
            return Err(io::Error::other(
                "it is not a state file of teleprompt batch",
            ));
        }
        let text = std::fs::read(path)?;
        let mut state: State = serde_json::from_slice(&text).map_err(|error| {
            io::Error::other(format!(
                "it is not a state file of teleprompt batch ({error})"
            ))
        })?;
        state.path = path.to_path_buf();
        Ok(state)
    }

    /// Writes the state beside the output: to a temporary file, renamed
    /// over the last one.
    fn save(&self) -> io::Result<()> {
        let mut temporary = self.path.as_os_str().to_owned();
        temporary.push(".tmp");
        let mut text = serde_json::to_vec(self).map_err(io::Error::other)?;
        text.push(b'\n');
        std::fs::write(&temporary, text)?;
        std::fs::rename(&temporary, &self.path)
    }
}

/// FNV-1a over the input's bytes: the same in every process and build.
const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv(mut hash: u64, bytes: &[u8]) -> u64 {
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
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
fn written_rows(file: impl io::Read, shown: &str, longest: usize) -> Result<(u64, u64), String> {
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
    /// The bytes of the output so far (with those of an earlier run).
    written: u64,
}

impl Output {
    fn write(&mut self, line: &[u8]) -> io::Result<()> {
        self.writer.write_all(line)?;
        self.written += line.len() as u64;
        Ok(())
    }

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
    /// Their FNV-1a hash.
    hash: u64,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R, max: usize) -> Lines<R> {
        Lines {
            reader,
            max,
            consumed: 0,
            hash: FNV_START,
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
            self.hash = fnv(self.hash, available.get(..used).unwrap_or_default());
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
}

/// How every row is rendered: the prompt, what a line is, the output
/// format, and the defaults of a row's request.
struct Rows {
    prompt: Prompt,
    rows_are: RowsAre,
    format: OutputFormat,
    /// The input's name, for errors.
    origin: String,
    max_bytes: usize,
    now: String,
    time_zone: Option<String>,
    /// `--row-timeout`: a row's render is stopped past it.
    timeout: Option<Duration>,
}

/// The error line of a row past `--row-timeout`: its render `stopped` at
/// its deadline, or, where it missed it, `given up on`.
fn timed_out(timeout: Duration, what: &str) -> Error {
    Error::new(
        ErrorClass::Render,
        format!(
            "the row took longer than {} (--row-timeout): {what}",
            show_duration(timeout)
        ),
    )
    .with_kind("timeout")
}

impl Rows {
    /// The output line of row `index` (its line, with a newline), and
    /// whether it rendered.
    fn render(&self, index: u64, line: &Line) -> (Vec<u8>, bool) {
        let mut request = match self.request(index + 1, line) {
            Ok(request) => request,
            Err(error) => return (error_line(index, &error), false),
        };
        // The render stops itself at the row's deadline.
        request.deadline = self.timeout.map(|timeout| Instant::now() + timeout);
        let rendered = match request.render(&self.prompt) {
            Ok(rendered) => rendered,
            Err(RequestError::Malformed(message)) => {
                let error = self.input_error(index + 1, None, "record", message);
                return (error_line(index, &error), false);
            }
            Err(RequestError::Render(error)) if error.kind() == Some("timeout") => {
                let timeout = self.timeout.unwrap_or_default();
                return (
                    error_line(index, &timed_out(timeout, "stopped").to_json()),
                    false,
                );
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
        let value = data::parse_text_keeping(text, Some(Format::Json), &self.origin, keep)
            .map_err(|error| {
                self.input_error(
                    number,
                    error.location().map(|at| at.column),
                    "json",
                    error.message().to_string(),
                )
            })?;
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
            .with_file(&self.origin)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(cap: usize) -> Arc<Budget> {
        Arc::new(Budget {
            held: Mutex::new((0, 0)),
            freed: Condvar::new(),
            cap,
        })
    }

    /// Whether `acquire(bytes)` on another thread gets through within
    /// 200 ms; the thread is left waiting otherwise (and `release` lets it
    /// through later).
    fn gets_through(budget: &Arc<Budget>, bytes: usize) -> (bool, mpsc::Receiver<usize>) {
        let (sent, got) = mpsc::channel();
        let shared = Arc::clone(budget);
        std::thread::spawn(move || {
            let _ = sent.send(shared.acquire(bytes));
        });
        let through = got.recv_timeout(Duration::from_millis(200)).is_ok();
        (through, got)
    }

    #[test]
    fn the_budget_holds_rows_back_and_lets_a_huge_one_go_alone() {
        let budget = budget(100);
        assert_eq!(budget.acquire(60), 60);
        // 60 + 50 > 100: waits until the first is released.
        let (through, got) = gets_through(&budget, 50);
        assert!(!through);
        budget.release(60);
        assert_eq!(got.recv_timeout(Duration::from_secs(10)), Ok(50));
        // A row larger than the whole budget waits for the others, then
        // goes alone, holding the whole budget.
        let (through, got) = gets_through(&budget, 1000);
        assert!(!through);
        budget.release(50);
        assert_eq!(got.recv_timeout(Duration::from_secs(10)), Ok(100));
        // An output line charged past the cap holds the next row back.
        budget.release(100);
        budget.charge(150);
        let (through, got) = gets_through(&budget, 1);
        assert!(!through);
        budget.release(150);
        assert_eq!(got.recv_timeout(Duration::from_secs(10)), Ok(1));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in ["soon", "-1s", "NaN", "inf", "1e300", ""] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(show_duration(Duration::from_millis(300)), "300 ms");
        assert_eq!(show_duration(Duration::from_secs(60)), "60.0 s");
    }

    #[test]
    fn fnv_is_fnv_1a_64() {
        // The published test vectors of FNV-1a 64.
        assert_eq!(fnv(FNV_START, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv(FNV_START, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv(FNV_START, b"foobar"), 0x8594_4171_f739_67e8);
        // Hashing in parts is hashing the whole.
        assert_eq!(
            fnv(fnv(FNV_START, b"foo"), b"bar"),
            fnv(FNV_START, b"foobar")
        );
    }
}

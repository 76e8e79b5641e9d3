//! The bounds every syntax honours on one render, so that no template or
//! data can make the host allocate without bound, and the bounds on the
//! files teleprompt reads, so that no input file (an endless device, a
//! file that grows while it is read) can either.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::diagnostics::{Error, ErrorClass};

/// The default of [`Limits::max_template_bytes`]: 16 MiB.
pub const DEFAULT_MAX_TEMPLATE_BYTES: usize = 16 * 1024 * 1024;
/// The default of [`Limits::max_data_bytes`]: 64 MiB.
pub const DEFAULT_MAX_DATA_BYTES: usize = 64 * 1024 * 1024;

/// The deepest [`Limits::max_nesting`] takes effect: a larger value acts as
/// this one, since deeper trees would not fit on a thread's stack.
pub const NESTING_CEILING: usize = 200;

/// Bounds on one render, the same for every syntax, and on the files read
/// to load and render a prompt.
///
/// A host sets them in [`LoadOptions::limits`](crate::LoadOptions::limits)
/// (the CLI: `--limit NAME=VALUE`); a prompt's front matter may lower the
/// render bounds for itself, never raise them:
///
/// ```yaml
/// limits:
///   max_output: 1 MiB
///   max_steps: 100000
/// ```
///
/// Every bound is checked as the work happens, so a render past one stops
/// at once with an error that names the bound and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes one render may print (default 64 MiB). A render that
    /// prints more stops with a `render` error naming the limit.
    pub max_output: usize,
    /// The most bytes of one text a render builds: by a function, filter or
    /// helper (`printf`, `join`, `replace`, `format`, `tojson`, `concat`, …)
    /// or by Jinja's `~`, `+` and `*` (default 16 MiB). The check comes
    /// before the text is built wherever its size can be told in advance.
    /// Data is not bounded by it (see `max_data_bytes`). Besides, all the
    /// text one render builds this way may add up to 16 times
    /// `max_output` (1 GiB by default), so that a value growing a little
    /// on each of many loop passes cannot take quadratic time.
    pub max_value_bytes: usize,
    /// The most items of one list or mapping a render builds (Handlebars
    /// `range` and `array`, Jinja's list `+`; default 100,000).
    pub max_items: usize,
    /// The most steps of one render (default 5,000,000): loop passes,
    /// template calls (partials) and function calls (helpers) in Go and
    /// Handlebars; minijinja's fuel in Jinja (an instruction, or 64 bytes
    /// of text an operator or filter builds or the render prints), counted only
    /// in a template that can run longer than its text and data (a loop
    /// over `range` or over a list it built, nested loops over the same
    /// list, macros, recursion, other files): one whose loops each walk a
    /// part of the data is bounded by the data, and runs uncounted. 5 million
    /// steps take 0.1–0.4 s on one core (Jinja macro calls and template
    /// calls are the dearest); a chat template spends about 50 on each
    /// message of the conversation.
    pub max_steps: u64,
    /// How deep template calls may nest (default 100): Go `template`,
    /// Handlebars partials, Jinja macros and includes. Jinja counts the way
    /// minijinja does: a macro call costs 4 levels and each block inside it
    /// one; its limit is 5 × this, at most 500 (minijinja's ceiling).
    pub max_call_depth: usize,
    /// How deep a template's blocks, parentheses and expressions may nest
    /// (default 100): Go and Handlebars blocks and parentheses, the
    /// commands of a Go pipeline, a Jinja expression's filter, attribute
    /// and operator chains; a Jinja `if` may have 5 × this `elif`
    /// branches. Past it, loading fails with a `parse` error. Values above
    /// [`NESTING_CEILING`] act as it.
    pub max_nesting: usize,
    /// The most bytes of a prompt file [`Prompt::from_file`] reads, and of
    /// the `tokenizer_config.json` beside a `chat_template.jinja` (default
    /// 16 MiB, [`DEFAULT_MAX_TEMPLATE_BYTES`]: prompts are written by hand;
    /// the largest tokenizer configs are a few MiB). A larger file is an
    /// `io` error naming the file and the limit; so is a device or pipe
    /// that never ends, which stops at the limit.
    ///
    /// [`Prompt::from_file`]: crate::Prompt::from_file
    pub max_template_bytes: usize,
    /// The most bytes of a data file (JSON or YAML) read by
    /// [`crate::data::read_file`] and [`crate::data::read_from`], which the
    /// CLI uses for `--data`, `--history` and `--context` (default 64 MiB,
    /// [`DEFAULT_MAX_DATA_BYTES`]). Parsed, JSON made of many small objects
    /// takes about 12 times its size in memory, text-heavy data about its
    /// size; read with [`crate::data::read_file_keeping`] and
    /// [`crate::Prompt::reads`] (as the CLI reads `--data`), the values a
    /// prompt cannot read are checked but not built (a 200 MB file whose
    /// template reads one small key: 1.0× its size, 0.5 s).
    pub max_data_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

impl Limits {
    /// The defaults, as a constant.
    pub const DEFAULT: Limits = Limits {
        max_output: 64 * 1024 * 1024,
        max_value_bytes: 16 * 1024 * 1024,
        max_items: 100_000,
        max_steps: 5_000_000,
        max_call_depth: 100,
        max_nesting: 100,
        max_template_bytes: DEFAULT_MAX_TEMPLATE_BYTES,
        max_data_bytes: DEFAULT_MAX_DATA_BYTES,
    };
}

/// Every bound by its name in [`Limits`] (the CLI's `--limit NAME=VALUE`):
/// the render bounds first, then the input files'.
pub const ALL_LIMITS: &[&str] = &[
    "max_output",
    "max_value_bytes",
    "max_items",
    "max_steps",
    "max_call_depth",
    "max_nesting",
    "max_template_bytes",
    "max_data_bytes",
];

/// The bounds a prompt's front matter may lower for its own renders, by
/// their names in [`Limits`].
pub const RENDER_LIMITS: &[&str] = ALL_LIMITS.split_at(6).0;

impl Limits {
    /// The value of the bound called `name` (a name of [`ALL_LIMITS`]).
    pub fn get(&self, name: &str) -> Option<u64> {
        let size = |value: usize| Some(u64::try_from(value).unwrap_or(u64::MAX));
        match name {
            "max_output" => size(self.max_output),
            "max_value_bytes" => size(self.max_value_bytes),
            "max_items" => size(self.max_items),
            "max_steps" => Some(self.max_steps),
            "max_call_depth" => size(self.max_call_depth),
            "max_nesting" => size(self.max_nesting),
            "max_template_bytes" => size(self.max_template_bytes),
            "max_data_bytes" => size(self.max_data_bytes),
            _ => None,
        }
    }

    /// Sets the bound called `name` to `value`; an unknown name is an error
    /// that suggests the closest one.
    pub fn set(&mut self, name: &str, value: u64) -> Result<(), String> {
        let size = usize::try_from(value).unwrap_or(usize::MAX);
        let field = match name {
            "max_output" => &mut self.max_output,
            "max_value_bytes" => &mut self.max_value_bytes,
            "max_items" => &mut self.max_items,
            "max_steps" => {
                self.max_steps = value;
                return Ok(());
            }
            "max_call_depth" => &mut self.max_call_depth,
            "max_nesting" => &mut self.max_nesting,
            "max_template_bytes" => &mut self.max_template_bytes,
            "max_data_bytes" => &mut self.max_data_bytes,
            _ => return Err(unknown_limit(name, ALL_LIMITS)),
        };
        *field = size;
        Ok(())
    }

    /// Sets the bound `name` from text: a whole number, for byte sizes
    /// also with a unit (`64 MiB`, `512KiB`, `2 MB`, `100 bytes`).
    pub fn set_text(&mut self, name: &str, text: &str) -> Result<(), String> {
        if self.get(name).is_none() {
            return Err(unknown_limit(name, ALL_LIMITS));
        }
        let value = parse_amount(text, name.ends_with("_bytes") || name == "max_output")?;
        self.set(name, value)
    }

    /// These limits with `lowered` (a front matter's `limits:`) applied:
    /// a value may only lower a bound; one above the host's is an error
    /// that names both.
    pub fn lowered_by(&self, lowered: &[(String, u64)]) -> Result<Limits, String> {
        let mut limits = *self;
        for (name, value) in lowered {
            let Some(host) = self
                .get(name)
                .filter(|_| RENDER_LIMITS.contains(&name.as_str()))
            else {
                return Err(unknown_limit(name, RENDER_LIMITS));
            };
            if *value > host {
                return Err(format!(
                    "`limits.{name}: {value}` is above the limit the host set ({host}); \
                     a prompt may lower its limits, not raise them"
                ));
            }
            limits.set(name, *value)?;
        }
        Ok(limits)
    }

    /// All the bytes that functions, filters and operators may build over
    /// one render: 16 × [`Limits::max_output`].
    pub(crate) fn max_built_bytes(&self) -> usize {
        self.max_output.saturating_mul(16)
    }

    /// [`Limits::max_nesting`] as it takes effect.
    pub(crate) fn nesting(&self) -> usize {
        self.max_nesting.min(NESTING_CEILING)
    }
}

fn unknown_limit(name: &str, known: &[&str]) -> String {
    let mut message = format!(
        "unknown limit \"{name}\" (the limits are {})",
        known.join(", ")
    );
    if let Some(close) = crate::diagnostics::closest(name, known.iter().copied()) {
        message.push_str(&format!("; did you mean \"{close}\"?"));
    }
    message
}

/// A count, or with `bytes` a size in bytes with an optional binary unit:
/// `1000`, `64M`, `64 MiB`, `512K`, `1 GiB`, `10 bytes` (`K`, `M`, `G`
/// are KiB, MiB, GiB).
pub fn parse_amount(text: &str, bytes: bool) -> Result<u64, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit() && c != '_')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let what = if bytes {
        "a number of bytes, optionally with K, M or G (KiB, MiB, GiB)"
    } else {
        "a whole number"
    };
    let number: u64 = number
        .replace('_', "")
        .parse()
        .map_err(|_| format!("expected {what}, got {text:?}"))?;
    let shift = match (bytes, unit.trim().to_ascii_lowercase().as_str()) {
        (_, "") => 0,
        (true, "b" | "byte" | "bytes") => 0,
        (true, "k" | "kib") => 10,
        (true, "m" | "mib") => 20,
        (true, "g" | "gib") => 30,
        _ => return Err(format!("expected {what}, got {text:?}")),
    };
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text} is too large"))
}

/// Which kind of input file a read is for: it picks the limit that bounds
/// the read and names it in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// A prompt file: [`Limits::max_template_bytes`].
    Template,
    /// A data file: [`Limits::max_data_bytes`].
    Data,
}

impl Input {
    /// The limit on this kind of input in `limits`.
    pub fn limit(self, limits: &Limits) -> usize {
        match self {
            Input::Template => limits.max_template_bytes,
            Input::Data => limits.max_data_bytes,
        }
    }

    /// The name of the field of [`Limits`] that bounds this input; the
    /// CLI's flag has the same name (`--max-template-bytes`).
    pub fn field(self) -> &'static str {
        match self {
            Input::Template => "max_template_bytes",
            Input::Data => "max_data_bytes",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Input::Template => "prompt files",
            Input::Data => "data files",
        }
    }
}

/// Reads the file at `path` whole, refusing one longer than `max_bytes`
/// (the limit on `input` files) with an `io` error that names the file,
/// the limit and how to raise it. At most `max_bytes + 1` bytes are ever
/// read, so a device (`/dev/zero`) or a pipe that never ends stops there.
///
/// ```
/// use teleprompt::limits::{read_file, Input};
/// let error = read_file(std::path::Path::new("Cargo.toml"), 10, Input::Data).unwrap_err();
/// assert_eq!(error.class(), teleprompt::ErrorClass::Io);
/// assert!(error.message().contains("larger than 10 bytes"));
/// ```
pub fn read_file(path: &Path, max_bytes: usize, input: Input) -> Result<Vec<u8>, Error> {
    let origin = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|error| {
        let failed =
            Error::new(ErrorClass::Io, format!("cannot read the file: {error}")).with_file(&origin);
        match error.kind() {
            std::io::ErrorKind::NotFound => failed.with_kind("not-found"),
            std::io::ErrorKind::PermissionDenied => failed.with_kind("permission-denied"),
            _ => failed,
        }
    })?;
    // The size a regular file says it has (0 for devices and pipes): over
    // the limit, it is refused unread; under, it sizes the buffer, which
    // growing by doubling could make twice the file. The read still stops
    // at the limit, should the file grow meanwhile.
    let expected = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map_or(0, |metadata| {
            usize::try_from(metadata.len()).unwrap_or(usize::MAX)
        });
    if expected > max_bytes {
        return Err(too_large(&origin, max_bytes, input));
    }
    read_to_limit(file, &origin, expected, max_bytes, input)
}

/// The one confinement rule for a file that another file names (an
/// include, the `tokenizer_config.json` beside a chat template, a prompt
/// test's `data:` or `history:` file): `name` is a relative path without
/// `..` (not absolute, not empty), it resolves — symbolic links followed —
/// to a file inside `root`, that file is a regular file (never a pipe, a
/// socket or a device: it is opened without blocking and checked before a
/// byte is read), and it holds at most `max_bytes` bytes. Returns the
/// cleaned relative name and the bytes. Errors name the file, never its
/// content.
pub fn read_inside(
    root: &Path,
    name: &str,
    max_bytes: usize,
    input: Input,
) -> Result<(PathBuf, Vec<u8>), Error> {
    let refuse = |message: String| Error::new(ErrorClass::Io, message).with_file(name);
    let relative = inside_name(name).map_err(refuse)?;
    let canonical_root = root.canonicalize().map_err(|error| {
        refuse(format!(
            "cannot read the folder {}: {error}",
            root.display()
        ))
    })?;
    let canonical = canonical_root
        .join(&relative)
        .canonicalize()
        .map_err(|error| refuse(format!("cannot read the file: {error}")))?;
    if !canonical.starts_with(&canonical_root) {
        return Err(refuse(format!(
            "it leads outside its folder {} (a symbolic link to {}): files a file names must stay inside it",
            canonical_root.display(),
            canonical.display()
        )));
    }
    let file = open_regular(&canonical).map_err(refuse)?;
    let origin = root.join(&relative).display().to_string();
    let bytes = read_opened(file, &origin, max_bytes, input)?;
    Ok((relative, bytes))
}

/// `name` as a relative path that stays inside a root: no `..`, no root
/// or drive prefix, not empty, no NUL.
pub(crate) fn inside_name(name: &str) -> Result<PathBuf, String> {
    if name.is_empty() || name.contains('\0') {
        return Err(format!("{name:?} is not a file name"));
    }
    let mut clean = PathBuf::new();
    for component in Path::new(name).components() {
        match component {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "{name:?} leaves its folder: a file named by another file is a relative path inside that folder, without `..`"
                ))
            }
        }
    }
    if clean.as_os_str().is_empty() {
        return Err(format!("{name:?} is not a file name"));
    }
    Ok(clean)
}

/// Opens `path` for reading without ever blocking (on Unix, with
/// `O_NONBLOCK`: opening a FIFO no one writes to returns at once) and
/// refuses what the open file is if it is not a regular file — checked on
/// the opened file, so a file swapped for a pipe after a check is still
/// refused.
pub(crate) fn open_regular(path: &Path) -> Result<std::fs::File, String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|error| format!("cannot read the file: {error}"))?;
    let metadata = file
        .metadata()
        .map_err(|error| format!("cannot read the file: {error}"))?;
    if metadata.is_dir() {
        return Err("it is a folder, not a file".to_string());
    }
    if !metadata.is_file() {
        return Err(
            "it is not a regular file (a pipe, a socket or a device), so it is not read"
                .to_string(),
        );
    }
    Ok(file)
}

/// Reads an opened regular file up to `max_bytes`, refusing a larger one
/// unread.
pub(crate) fn read_opened(
    file: std::fs::File,
    origin: &str,
    max_bytes: usize,
    input: Input,
) -> Result<Vec<u8>, Error> {
    let expected = file.metadata().map_or(0, |metadata| {
        usize::try_from(metadata.len()).unwrap_or(usize::MAX)
    });
    if expected > max_bytes {
        return Err(too_large(origin, max_bytes, input));
    }
    read_to_limit(file, origin, expected, max_bytes, input)
}

/// [`read_file`] for any reader (stdin): `origin` names it in errors.
pub fn read_from(
    reader: impl Read,
    origin: &str,
    max_bytes: usize,
    input: Input,
) -> Result<Vec<u8>, Error> {
    read_to_limit(reader, origin, 0, max_bytes, input)
}

fn read_to_limit(
    reader: impl Read,
    origin: &str,
    expected: usize,
    max_bytes: usize,
    input: Input,
) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::with_capacity(expected.min(max_bytes).saturating_add(1));
    let cap = u64::try_from(max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    reader.take(cap).read_to_end(&mut bytes).map_err(|error| {
        Error::new(ErrorClass::Io, format!("cannot read the file: {error}")).with_file(origin)
    })?;
    if bytes.len() > max_bytes {
        return Err(too_large(origin, max_bytes, input));
    }
    Ok(bytes)
}

/// A bound that a render, or a file read, went past: the one error every
/// syntax gives for it, in one wording that names the bound and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exceeded {
    /// [`Limits::max_output`].
    Output(usize),
    /// [`Limits::max_value_bytes`].
    Value(usize),
    /// [`Limits::max_items`].
    Items(usize),
    /// 16 × [`Limits::max_output`]: the text built over the whole render.
    Built(usize),
    /// [`Limits::max_items`], of the messages and media parts a render
    /// makes.
    Messages(usize),
    /// [`Limits::max_steps`].
    Steps(u64),
    /// [`Limits::max_call_depth`].
    CallDepth(usize),
    /// [`Limits::max_template_bytes`] or [`Limits::max_data_bytes`]: a
    /// file read.
    File(Input, usize),
    /// The host's deadline ([`crate::RenderOptions::deadline`]), in
    /// milliseconds from the render's start.
    Deadline(u64),
    /// The host's [`crate::CancelToken`] was cancelled.
    Cancelled,
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Exceeded::Output(limit) => write!(
                f,
                "the output is larger than {} (the limit max_output); is a loop or a repeated string unbounded?",
                describe_bytes(limit)
            ),
            Exceeded::Value(limit) => write!(
                f,
                "the text is larger than {} (the limit max_value_bytes)",
                describe_bytes(limit)
            ),
            Exceeded::Items(limit) => write!(
                f,
                "the list would hold more than {limit} values in all (the limit max_items)"
            ),
            Exceeded::Built(limit) => write!(
                f,
                "the render has built more than {} of text (16 × the limit max_output): does a loop grow a value on every pass?",
                describe_bytes(limit)
            ),
            Exceeded::Messages(limit) => write!(
                f,
                "the render made more than {limit} messages and media parts (the limit max_items)"
            ),
            Exceeded::Steps(limit) => write!(
                f,
                "the template ran more than {limit} steps (the limit max_steps); is a loop unbounded?"
            ),
            Exceeded::CallDepth(limit) => write!(
                f,
                "template calls nest more than {limit} deep (the limit max_call_depth)"
            ),
            Exceeded::File(input, limit) => write!(
                f,
                "the file is larger than {}, the limit for {}",
                describe_bytes(limit),
                input.noun()
            ),
            Exceeded::Deadline(0) => f.write_str(
                "the render ran past its deadline, under 1 ms away when it started, and was stopped (the host's timeout)",
            ),
            Exceeded::Deadline(millis) => write!(
                f,
                "the render ran past its deadline of {millis} ms and was stopped (the host's timeout)"
            ),
            Exceeded::Cancelled => f.write_str("the render was cancelled by the host"),
        }
    }
}

impl std::error::Error for Exceeded {}

impl Exceeded {
    /// The error kind of a render the host stopped (`timeout`,
    /// `cancelled`); `None` for the bounds.
    pub(crate) fn stop_kind(&self) -> Option<&'static str> {
        match self {
            Exceeded::Deadline(_) => Some("timeout"),
            Exceeded::Cancelled => Some("cancelled"),
            _ => None,
        }
    }
}

/// The error for an input over its limit.
fn too_large(origin: &str, max_bytes: usize, input: Input) -> Error {
    let field = input.field();
    Error::new(ErrorClass::Io, Exceeded::File(input, max_bytes).to_string())
        .with_file(origin)
        .with_suggestion(Some(format!(
            "raise the limit: --{} on the command line, `Limits::{field}` in a program",
            field.replace('_', "-")
        )))
}

/// `bytes` in words: `1 GiB`, `64 MiB`, `16 KiB`, `1500 bytes`.
pub(crate) fn describe_bytes(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    const GIB: usize = 1024 * 1024 * 1024;
    if bytes >= GIB && bytes.is_multiple_of(GIB) {
        format!("{} GiB", bytes / GIB)
    } else if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_take_binary_units_for_sizes_only() {
        assert_eq!(parse_amount("1000", false), Ok(1000));
        assert_eq!(parse_amount("1_000_000", false), Ok(1_000_000));
        assert_eq!(parse_amount("64M", true), Ok(64 << 20));
        assert_eq!(parse_amount("64 MiB", true), Ok(64 << 20));
        assert_eq!(parse_amount("1g", true), Ok(1 << 30));
        assert_eq!(parse_amount("10 bytes", true), Ok(10));
        assert!(parse_amount("64M", false).is_err(), "a count takes no unit");
        assert!(parse_amount("12MB", true).is_err(), "MB is ambiguous");
        assert!(parse_amount("-1", true).is_err());
        assert!(parse_amount("99999999999999999999G", true).is_err());
    }

    #[test]
    fn limits_are_set_by_name_and_only_lowered_by_a_prompt() {
        let mut limits = Limits::default();
        limits.set_text("max_output", "1M").unwrap();
        limits.set_text("max_steps", "500").unwrap();
        assert_eq!((limits.max_output, limits.max_steps), (1 << 20, 500));
        let error = limits.set_text("max_stpes", "5").unwrap_err();
        assert!(error.contains("did you mean \"max_steps\"?"), "{error}");
        for name in ALL_LIMITS {
            assert!(limits.get(name).is_some(), "{name}");
        }

        let lowered = limits
            .lowered_by(&[("max_output".to_string(), 100)])
            .unwrap();
        assert_eq!(lowered.max_output, 100);
        assert_eq!(lowered.max_steps, 500, "the others stay");
        let error = limits
            .lowered_by(&[("max_steps".to_string(), 501)])
            .unwrap_err();
        assert!(
            error.contains("above the limit the host set (500)"),
            "{error}"
        );
        assert!(
            limits
                .lowered_by(&[("max_data_bytes".to_string(), 1)])
                .is_err(),
            "a prompt lowers render limits only"
        );
        assert_eq!(describe_bytes(1 << 30), "1 GiB");
    }

    #[test]
    fn reads_stop_one_byte_past_the_limit() {
        let endless = std::io::repeat(b'x');
        let error = read_from(endless, "<endless>", 1024, Input::Data).unwrap_err();
        assert_eq!(error.class(), ErrorClass::Io);
        assert_eq!(
            error.message(),
            "the file is larger than 1 KiB, the limit for data files"
        );
        assert_eq!(error.file(), Some("<endless>"));
        assert_eq!(
            error.suggestion(),
            Some("raise the limit: --max-data-bytes on the command line, `Limits::max_data_bytes` in a program")
        );
        let exact = read_from(&b"12345"[..], "-", 5, Input::Template).unwrap();
        assert_eq!(exact, b"12345");
        assert!(read_from(&b"123456"[..], "-", 5, Input::Template).is_err());
        assert_eq!(read_from(&b""[..], "-", 0, Input::Template).unwrap(), b"");
    }
}

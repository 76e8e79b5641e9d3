//! The bounds every syntax honours on one render, so that no template or
//! data can make the host allocate without bound, and the bounds on the
//! files teleprompt reads, so that no input file (an endless device, a
//! file that grows while it is read) can either.

use std::io::Read;
use std::path::Path;

use crate::diagnostics::{Error, ErrorClass};

/// The default of [`Limits::max_template_bytes`]: 16 MiB.
pub const DEFAULT_MAX_TEMPLATE_BYTES: usize = 16 * 1024 * 1024;
/// The default of [`Limits::max_data_bytes`]: 64 MiB.
pub const DEFAULT_MAX_DATA_BYTES: usize = 64 * 1024 * 1024;

/// Bounds on one render, the same for every syntax, and on the files read
/// to load and render a prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes one render may print (default 64 MiB). A render that
    /// prints more stops with a `render` error naming the limit.
    pub max_output: usize,
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
    /// size.
    pub max_data_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_output: 64 * 1024 * 1024,
            max_template_bytes: DEFAULT_MAX_TEMPLATE_BYTES,
            max_data_bytes: DEFAULT_MAX_DATA_BYTES,
        }
    }
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
        Error::new(ErrorClass::Io, format!("cannot read the file: {error}")).with_file(&origin)
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

/// The error for an input over its limit.
fn too_large(origin: &str, max_bytes: usize, input: Input) -> Error {
    let field = input.field();
    Error::new(
        ErrorClass::Io,
        format!(
            "the file is larger than {}, the limit for {}",
            describe_bytes(max_bytes),
            input.noun()
        ),
    )
    .with_file(origin)
    .with_suggestion(Some(format!(
        "raise the limit: --{} on the command line, `Limits::{field}` in a program",
        field.replace('_', "-")
    )))
}

/// `bytes` in words: `64 MiB`, `16 KiB`, `1500 bytes`.
pub(crate) fn describe_bytes(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
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

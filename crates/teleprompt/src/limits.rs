//! The bounds every syntax honours on one render, so that no template or
//! data can make the host allocate without bound.

/// Bounds on one render, the same for every syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes one render may print (default 64 MiB). A render that
    /// prints more stops with a `render` error naming the limit.
    pub max_output: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_output: 64 * 1024 * 1024,
        }
    }
}

/// `bytes` in words: `64 MiB`, `1.5 KiB`, `12 bytes`.
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

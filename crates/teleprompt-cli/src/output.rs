//! `render --output FILE`: the output written whole or not at all.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` through a temporary file in the same folder
/// (synced, then renamed over `path`), so that a reader never sees half
/// an output and a failed write (a full disk, a folder that cannot be
/// written) leaves what was there before. A new file gets the usual
/// permissions (0666 less the umask), an existing one keeps its own.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let existing = std::fs::metadata(path)
        .ok()
        .map(|found| found.permissions());
    let mut builder = tempfile::Builder::new();
    builder.prefix(".teleprompt-").suffix(".tmp");
    // Made as `File::create` makes a file (0666 less the umask), not 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut file = builder.tempfile_in(folder)?;
    file.write_all(bytes)?;
    if let Some(permissions) = existing {
        file.as_file().set_permissions(permissions)?;
    }
    file.as_file().sync_all()?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_replaces_the_file_whole() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("out.txt");
        write_atomically(&path, b"first").unwrap();
        write_atomically(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        // Nothing is left beside it.
        let names: Vec<_> = std::fs::read_dir(folder.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        // A folder that does not exist: an error, nothing written.
        let missing = folder.path().join("no/such/out.txt");
        assert!(write_atomically(&missing, b"x").is_err());
    }
}

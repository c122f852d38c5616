//! Atomic file writes: a temporary file in the same directory, synced, then renamed over
//! the destination, so a reader (or a crash) sees the old file or the new one, never half
//! of one. Every document and report iomark writes goes through here.

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically; `what` names the file in an error ("results").
pub fn atomic_write(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or("iomark".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io(format!("cannot write {what} to {}", path.display()), &e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        atomic_write(&p, b"one", "results").unwrap();
        atomic_write(&p, b"two", "results").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let err = atomic_write(&dir.path().join("no/such/dir"), b"x", "results").unwrap_err();
        assert!(
            err.to_string().starts_with("cannot write results to"),
            "{err}"
        );
        assert!(
            matches!(&err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound),
            "{err:?}"
        );
    }
}

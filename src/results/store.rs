//! Atomic file writes: a temporary file in the same directory, synced, then renamed over
//! the destination, so a reader (or a crash) sees the old file or the new one, never half
//! of one. Every document and report iomark writes goes through here, after
//! [`check_output`] has said, before anything ran, that the path may receive it.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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

/// Whether the first bytes of a file are an iomark results document.
pub fn is_results_document(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(256)]);
    text.trim_start().starts_with('{') && text.contains("\"schema\": \"iomark/")
}

/// Checks that `path` may receive an output (`what`: "the results document", "the
/// report"), before anything runs: a new file in a writable directory, or an existing
/// regular file that `ours` recognises (from its first 4 KiB) as an earlier iomark output
/// of the same kind, or any regular file with `force`. Never a directory, a device, FIFO,
/// socket or symbolic link (renaming over it would replace the node), nor the `target`.
pub fn check_output(
    path: &Path,
    what: &str,
    ours: &dyn Fn(&[u8]) -> bool,
    force: bool,
    target: Option<&Path>,
) -> Result<()> {
    let shown = path.display();
    if let Some(t) = target
        && same_file(path, t)
    {
        return Err(Error::guard(format!(
            "{shown} is the target itself; choose another name for {what}"
        )));
    }
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(format!("cannot look at {shown}"), &e)),
        Ok(md) if md.is_dir() => {
            return Err(Error::usage(format!(
                "{shown} is a directory; give a file name for {what} (e.g. {}/results.json)",
                shown.to_string().trim_end_matches('/')
            )));
        }
        Ok(md) if md.file_type().is_symlink() => {
            return Err(Error::guard(format!(
                "{shown} is a symbolic link, which writing {what} would replace; give the path of the file itself"
            )));
        }
        Ok(md) if !md.is_file() => {
            return Err(Error::guard(format!(
                "{shown} is not a regular file (a device, FIFO or socket); iomark writes {what} only to regular files"
            )));
        }
        Ok(_) if force => {}
        Ok(_) => {
            let mut head = Vec::with_capacity(4096);
            fs::File::open(path)
                .and_then(|f| f.take(4096).read_to_end(&mut head))
                .map_err(|e| Error::io(format!("cannot read {shown}"), &e))?;
            if !ours(&head) {
                return Err(Error::guard(format!(
                    "{shown} exists and is not an earlier iomark output of this kind; choose a new name, or add --force to replace it with {what}"
                )));
            }
        }
    }
    let dir = directory_of(path);
    if !dir.is_dir() {
        return Err(Error::target(format!(
            "directory {} does not exist; create it first, or write {what} elsewhere",
            dir.display()
        )));
    }
    // Writable: the temporary file of the atomic write must be creatable next to it.
    let probe = dir.join(format!(".iomark-probe.{}", std::process::id()));
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(Error::target(format!(
            "cannot write {what} in {}: {}; choose a writable directory",
            dir.display(),
            crate::error::describe_io(&e)
        ))),
    }
}

fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether two paths name the same file: the same device and inode when both exist,
/// else the same absolute path (a target not yet created).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        (Err(_), Err(_)) => match (std::path::absolute(a), std::path::absolute(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_go_only_where_they_may() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let ours = |h: &[u8]| is_results_document(h);
        let check = |p: &Path, force: bool, target: Option<&Path>| {
            check_output(p, "the results document", &ours, force, target)
        };
        // A new file, or an earlier document: yes.
        assert!(check(&d.join("new.json"), false, None).is_ok());
        let doc = d.join("old.json");
        fs::write(&doc, "{\n  \"schema\": \"iomark/1\",\n  \"runs\": []}").unwrap();
        assert!(check(&doc, false, None).is_ok());
        // Someone else's file: only with --force.
        let foreign = d.join("data.bin");
        fs::write(&foreign, b"precious").unwrap();
        assert!(matches!(check(&foreign, false, None), Err(Error::Guard(_))));
        assert!(check(&foreign, true, None).is_ok());
        // Never the target, a directory, a device or a link.
        assert!(matches!(
            check(&doc, true, Some(&doc)),
            Err(Error::Guard(_))
        ));
        let later = d.join("later.dat");
        assert!(matches!(
            check(&later, false, Some(&later)),
            Err(Error::Guard(_))
        ));
        assert!(matches!(check(d, true, None), Err(Error::Usage(_))));
        assert!(matches!(
            check(Path::new("/dev/null"), true, None),
            Err(Error::Guard(_))
        ));
        let link = d.join("link.json");
        std::os::unix::fs::symlink(&doc, &link).unwrap();
        assert!(matches!(check(&link, true, None), Err(Error::Guard(_))));
        assert!(matches!(
            check(&d.join("no/such/r.json"), false, None),
            Err(Error::Target(_))
        ));
        assert_eq!(fs::read(&foreign).unwrap(), b"precious");
    }

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

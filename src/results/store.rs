//! Files in and out. Atomic writes: a temporary file in the same directory, synced, then
//! renamed over the destination, so a reader (or a crash) sees the old file or the new
//! one, never half of one; every document and report iomark writes goes through here,
//! after [`check_output`] has said, before anything ran, that the path may receive it.
//! Bounded reads: every file a user names (documents, matrix files, verify states, a
//! corpus) is read only if it is a regular file, checked before it is opened (opening a
//! FIFO blocks until a writer comes), and never past a limit, so `/dev/zero` or a huge
//! file cannot make iomark grow without bound.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::error::{Error, Result, describe_io};

/// Writes `bytes` to `path` atomically; `what` names the file in an error ("results").
pub fn atomic_write(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    let dir = directory_of(path);
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

/// Whether `path` is a regular file holding an iomark results document (from its first
/// 4 KiB).
pub fn holds_results(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|md| md.is_file())
        && head_of(path).is_ok_and(|h| is_results_document(&h))
}

/// The first 4 KiB of a file: enough to tell an iomark output by its start.
fn head_of(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(4096);
    fs::File::open(path)?.take(4096).read_to_end(&mut head)?;
    Ok(head)
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
            // (-o /dev/null to keep nothing: leaving -o out does that.)
            let none = match path == Path::new("/dev/null") {
                true => "; to keep none, leave out -o",
                false => "",
            };
            return Err(Error::guard(format!(
                "{shown} is not a regular file (a device, FIFO or socket); iomark writes {what} only to regular files{none}"
            )));
        }
        Ok(_) if force => {}
        Ok(_) => {
            let head = head_of(path).map_err(|e| Error::io(format!("cannot read {shown}"), &e))?;
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

/// The directory a file at `path` lives (or would live) in: its parent, `.` for a bare
/// name.
pub fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
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

/// Why a file was not read.
#[derive(Debug)]
pub(crate) enum Unreadable {
    /// Opening, inspecting or reading it failed.
    Io(std::io::Error),
    /// Not a regular file; what it is ("a character device").
    NotRegular(&'static str),
    /// Larger than the limit; its size.
    TooLarge(u64),
}

/// What a file type is, for messages: "a directory", "a FIFO", "a character device".
pub(crate) fn kind_of(ft: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_file() {
        "a regular file"
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading if it is a regular file (symbolic links followed), with its
/// size. The type is checked before opening, so a FIFO never blocks `open`, and again on
/// the open file.
pub(crate) fn open_regular(path: &Path) -> std::result::Result<(fs::File, u64), Unreadable> {
    let md = fs::metadata(path).map_err(Unreadable::Io)?;
    if !md.is_file() {
        return Err(Unreadable::NotRegular(kind_of(md.file_type())));
    }
    let f = fs::File::open(path).map_err(Unreadable::Io)?;
    let md = f.metadata().map_err(Unreadable::Io)?;
    if !md.is_file() {
        return Err(Unreadable::NotRegular(kind_of(md.file_type())));
    }
    Ok((f, md.len()))
}

/// Reads the regular file `path` whole if it holds at most `limit` bytes. Reads at most
/// `limit + 1` bytes whatever its size says (a file that grows, or a /proc file that
/// claims 0), so memory stays bounded.
pub(crate) fn read_capped(path: &Path, limit: u64) -> std::result::Result<Vec<u8>, Unreadable> {
    let (f, len) = open_regular(path)?;
    if len > limit {
        return Err(Unreadable::TooLarge(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(Unreadable::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Unreadable::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Reads an input document as text: a regular file of at most `limit` bytes. `what` names
/// the kind of document ("a results document") and `fix` says what to give instead; each
/// refusal is one line naming the file, and for a large one the limit.
pub(crate) fn read_document(path: &Path, limit: u64, what: &str, fix: &str) -> Result<String> {
    let p = path.display();
    let bytes = read_capped(path, limit).map_err(|e| {
        Error::document(match e {
            Unreadable::Io(e) => format!("cannot read {p}: {}; {fix}", describe_io(&e)),
            Unreadable::NotRegular(kind) => format!("{p} is {kind}, not {what}; {fix}"),
            Unreadable::TooLarge(n) => format!(
                "{p} is {}, more than the {} {what} may be; {fix}",
                crate::units::fmt_size(n),
                crate::units::fmt_size(limit)
            ),
        })
    })?;
    String::from_utf8(bytes).map_err(|_| Error::document(format!("{p} is not text; {fix}")))
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
    fn bounded_reads_refuse_devices_fifos_and_large_files() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        fs::write(&small, b"12345").unwrap();
        assert_eq!(read_capped(&small, 5).unwrap(), b"12345");
        assert!(matches!(
            read_capped(&small, 4),
            Err(Unreadable::TooLarge(5))
        ));
        assert!(matches!(
            read_capped(Path::new("/dev/zero"), 1 << 20),
            Err(Unreadable::NotRegular("a character device"))
        ));
        assert!(matches!(
            read_capped(dir.path(), 1 << 20),
            Err(Unreadable::NotRegular("a directory"))
        ));
        let err =
            read_document(Path::new("/dev/zero"), 1 << 20, "a matrix file", "give X").unwrap_err();
        assert!(matches!(err, Error::Document(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "/dev/zero is a character device, not a matrix file; give X"
        );
        let err = read_document(&small, 4, "a matrix file", "give X").unwrap_err();
        assert!(
            err.to_string()
                .contains("is 5 B, more than the 4 B a matrix file may be; give X"),
            "{err}"
        );
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

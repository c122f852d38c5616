//! The `files:` corpus: real files read once (bounded) and cycled as write content.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::results::store::{Unreadable, kind_of, open_regular};

/// The `files:` corpus: up to `max` bytes of the regular files under `path` (in name
/// order), read once, each file only as far as the corpus still needs (so a huge file
/// costs `max` bytes of memory, not its size). Anything but regular files is refused (a
/// character device such as /dev/zero, a FIFO or a socket never ends, and a FIFO would
/// block in `open`), checked before opening; in a directory such entries are skipped.
/// Errors are bad input: the user named the path.
pub(crate) fn load_corpus(path: &str, max: usize) -> Result<Arc<Vec<u8>>> {
    let root = PathBuf::from(path);
    let mut files = Vec::new();
    let mut skipped = 0;
    let md = std::fs::metadata(&root).map_err(|e| {
        Error::usage(format!(
            "--data files:{path}: {}; name a readable file or directory",
            crate::error::describe_io(&e)
        ))
    })?;
    if md.is_dir() {
        collect_files(&root, &mut files, &mut skipped, 0);
        files.sort();
    } else if md.is_file() {
        files.push(root.clone());
    } else {
        return Err(Error::usage(format!(
            "--data files:{path} is {}, not a regular file or directory; name files with content (copy a device's data into a file first)",
            kind_of(md.file_type())
        )));
    }
    let claimed: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let mut corpus = Vec::with_capacity(claimed.min(max as u64) as usize);
    let mut unreadable = 0;
    for f in &files {
        if corpus.len() >= max {
            break;
        }
        match open_regular(f) {
            Ok((file, _)) => {
                let had = corpus.len();
                let remaining = (max - had) as u64;
                if file.take(remaining).read_to_end(&mut corpus).is_err() {
                    corpus.truncate(had);
                    unreadable += 1;
                }
            }
            Err(Unreadable::NotRegular(_)) => skipped += 1,
            Err(_) => unreadable += 1,
        }
    }
    if corpus.is_empty() {
        let skipped = if skipped > 0 {
            format!(", {skipped} skipped as not regular files")
        } else {
            String::new()
        };
        return Err(Error::usage(format!(
            "--data files:{path} holds no readable data ({} files, {unreadable} unreadable{skipped}); name regular files with content",
            files.len()
        )));
    }
    Ok(Arc::new(corpus))
}

/// The regular files under `dir` (to depth 32); other entries that are not directories
/// (devices, FIFOs, sockets, symbolic links) are counted in `skipped`.
fn collect_files(dir: &Path, out: &mut Vec<PathBuf>, skipped: &mut usize, depth: usize) {
    if depth > 32 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        // Symbolic links inside the directory are not followed (a link to a parent
        // would loop); they count as skipped.
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            collect_files(&e.path(), out, skipped, depth + 1);
        } else if ft.is_file() {
            out.push(e.path());
        } else {
            *skipped += 1;
        }
    }
}

/// At most this much of a `files:` corpus is read into memory and cycled.
pub(crate) const CORPUS_MAX: usize = 256 << 20;

/// The corpus a data spec needs: loaded for `--data files:PATH`, none otherwise. The one
/// place that decides when a corpus is read.
pub(crate) fn load_for(data: &crate::plan::data::DataSpec) -> Result<Option<Arc<Vec<u8>>>> {
    use crate::plan::data::DataKind;
    match (&data.kind, &data.files) {
        (DataKind::Files, Some(path)) => Ok(Some(load_corpus(path, CORPUS_MAX)?)),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(p: &Path) {
        let ok = std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mkfifo {}", p.display());
    }

    #[test]
    fn reads_only_what_the_corpus_needs_from_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a"), vec![1u8; 3000]).unwrap();
        std::fs::write(d.join("b"), vec![2u8; 3000]).unwrap();
        mkfifo(&d.join("fifo"));
        // The cap falls inside the second file: it is read only that far.
        let c = load_corpus(d.to_str().unwrap(), 4000).unwrap();
        assert_eq!(c.len(), 4000);
        assert_eq!((c[2999], c[3000]), (1, 2));
        // A FIFO or a device named directly is refused without blocking or reading.
        for p in [d.join("fifo"), PathBuf::from("/dev/zero")] {
            let err = load_corpus(p.to_str().unwrap(), 1 << 20).unwrap_err();
            assert!(matches!(err, Error::Usage(_)), "{err:?}");
            assert!(err.to_string().contains("not a regular file"), "{err}");
        }
        // A directory holding nothing but a FIFO says it skipped it.
        let only = d.join("only");
        std::fs::create_dir(&only).unwrap();
        mkfifo(&only.join("f"));
        let err = load_corpus(only.to_str().unwrap(), 1 << 20).unwrap_err();
        assert!(
            err.to_string().contains("1 skipped as not regular files"),
            "{err}"
        );
    }
}

//! The `files:` corpus: real files read once (bounded) and cycled as write content.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};

/// The `files:` corpus: up to `max` bytes of the regular files under `path` (in name
/// order), read once. Errors are bad input: the user named the path.
pub(crate) fn load_corpus(path: &str, max: usize) -> Result<Arc<Vec<u8>>> {
    let root = PathBuf::from(path);
    let mut files = Vec::new();
    let md = std::fs::metadata(&root).map_err(|e| {
        Error::usage(format!(
            "--data files:{path}: {}; name a readable file or directory",
            crate::error::describe_io(&e)
        ))
    })?;
    if md.is_dir() {
        collect_files(&root, &mut files, 0);
        files.sort();
    } else {
        files.push(root.clone());
    }
    let mut corpus = Vec::new();
    let mut unreadable = 0;
    for f in &files {
        if corpus.len() >= max {
            break;
        }
        match std::fs::read(f) {
            Ok(mut bytes) => {
                bytes.truncate(max - corpus.len());
                corpus.extend_from_slice(&bytes);
            }
            Err(_) => unreadable += 1,
        }
    }
    if corpus.is_empty() {
        return Err(Error::usage(format!(
            "--data files:{path} holds no readable data ({} files, {unreadable} unreadable); name files with content",
            files.len()
        )));
    }
    Ok(Arc::new(corpus))
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if depth > 32 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            collect_files(&e.path(), out, depth + 1);
        } else if ft.is_file() {
            out.push(e.path());
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

//! The mark iomark leaves on a file it creates (the extended attribute `user.iomark`,
//! naming the creating process: `pid=N start=T boot=B`, or `kept`), and the registry of
//! files this process created and still owns, removed when a second signal ends it.

use std::fs::{self, File};
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::io::sys;

/// The extended attribute that marks a file as iomark's.
pub(crate) const MARK_XATTR: &str = "user.iomark";

pub(crate) fn is_marked(file: &File) -> bool {
    sys::has_xattr(file.as_fd(), MARK_XATTR)
}

/// Who made a file iomark marked: the mark names the creating process while that run
/// owns the file (`pid=N start=T boot=B`), and says `kept` once a run kept it with
/// `--keep` (older iomark wrote `created`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mark {
    /// Made by a run that is still going (perhaps this one).
    Live(u32),
    /// Left by a run that ended without removing it (killed): iomark's to remove.
    Leftover(u32),
    /// Kept on purpose, or of unknown origin: used, never removed.
    Kept,
}

fn mark_value(pid: u32) -> Vec<u8> {
    match sys::process_identity(pid) {
        Some((start, boot)) => format!("pid={pid} start={start} boot={boot}").into_bytes(),
        None => b"kept".to_vec(),
    }
}

fn parse_mark(value: &[u8]) -> Mark {
    let text = String::from_utf8_lossy(value);
    let field = |k: &str| {
        text.split_whitespace()
            .find_map(|f| f.strip_prefix(k)?.strip_prefix('='))
            .map(str::to_string)
    };
    let (Some(pid), Some(start), Some(boot)) = (
        field("pid").and_then(|p| p.parse::<u32>().ok()),
        field("start").and_then(|s| s.parse::<u64>().ok()),
        field("boot"),
    ) else {
        return Mark::Kept;
    };
    match sys::process_identity(pid) {
        Some((s, b)) if s == start && b == boot => Mark::Live(pid),
        _ => Mark::Leftover(pid),
    }
}

pub(crate) fn read_mark(file: &File) -> Option<Mark> {
    sys::get_xattr(file.as_fd(), MARK_XATTR).map(|v| parse_mark(&v))
}

pub(crate) fn mark(file: &File) {
    sys::set_xattr(file.as_fd(), MARK_XATTR, &mark_value(std::process::id()));
}

/// Files this process created and has not yet removed or handed over (kept): removed by
/// [`remove_unfinished`] when a second signal ends the process at once.
static UNFINISHED: std::sync::Mutex<Vec<(PathBuf, (u64, u64))>> = std::sync::Mutex::new(Vec::new());

pub(crate) fn unfinished(path: &Path, identity: Option<(u64, u64)>, add: bool) {
    let Some(id) = identity else { return };
    let mut list = UNFINISHED.lock().unwrap_or_else(|p| p.into_inner());
    list.retain(|(p, i)| !(p == path && *i == id));
    if add {
        list.push((path.to_path_buf(), id));
    }
}

/// Removes every file this process created and still owns (each only if the path still
/// names the same file). For the moment a second Ctrl-C ends the process without
/// unwinding: a file being laid out must not stay behind.
pub fn remove_unfinished() {
    let list = UNFINISHED.lock().unwrap_or_else(|p| p.into_inner());
    for (path, id) in list.iter() {
        let now = fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()));
        if now == Some(*id) {
            let _ = fs::remove_file(path);
        }
    }
}

/// Ends a study's hold on a file it created (`TargetPolicy::hold`): keeps it, marked
/// `kept`, or removes it. Only a file that still bears this process's mark is touched:
/// whatever else the path names now (a file put there meanwhile) is left alone.
pub fn release_held(path: &Path, keep: bool) {
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(file) = fs::OpenOptions::new()
        .read(true)
        .custom_flags(sys::O_NOFOLLOW | sys::O_NONBLOCK | sys::O_NOCTTY)
        .open(path)
    else {
        return;
    };
    if read_mark(&file) != Some(Mark::Live(std::process::id())) {
        return;
    }
    let Ok(md) = file.metadata() else { return };
    let id = (md.dev(), md.ino());
    unfinished(path, Some(id), false);
    if keep {
        sys::set_xattr(file.as_fd(), MARK_XATTR, b"kept");
    } else if fs::symlink_metadata(path).is_ok_and(|m| (m.dev(), m.ino()) == id) {
        let _ = fs::remove_file(path);
    }
}

//! The mark iomark leaves on a file it creates (the extended attribute `user.iomark`,
//! naming the creating process: `pid=N start=T boot=B`, or `kept mtime=S.N size=Z` with
//! the file's state when iomark last wrote it), and the registry of files this process
//! created and still owns, removed when a second signal ends it.

use std::fs::{self, File};
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::io::sys;
use crate::plan::spec::Spec;

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
    /// Left by a run that ended without removing it (killed). Whatever was put in it
    /// since cannot be told from iomark's data: used as it is, never removed, written
    /// only with `--overwrite`.
    Leftover(u32),
    /// Kept on purpose, with the file's modification time (seconds, nanoseconds) and
    /// size when iomark last wrote it (`None` from older iomark, or of unknown origin):
    /// used, never removed, written without `--overwrite` only while unchanged.
    Kept(Option<(i64, i64, u64)>),
}

/// A file's modification time and size, as a kept mark records them.
fn state(file: &File) -> Option<(i64, i64, u64)> {
    let md = file.metadata().ok()?;
    Some((md.mtime(), md.mtime_nsec(), md.size()))
}

/// Marks `file` kept, with its state now: a later change by anyone but iomark shows.
pub(crate) fn keep_mark(file: &File) {
    let value = match state(file) {
        Some((s, n, z)) => format!("kept mtime={s}.{n:09} size={z}"),
        None => "kept".into(),
    };
    sys::set_xattr(file.as_fd(), MARK_XATTR, value.as_bytes());
}

/// Whether a file whose mark is `found` was kept and changed since iomark last wrote it
/// (someone else wrote it, or copied other data over it): then it is no longer iomark's
/// to overwrite.
pub(crate) fn changed_since_kept(file: &File, found: &Option<Mark>) -> bool {
    matches!(found, Some(Mark::Kept(Some(was))) if state(file) != Some(*was))
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
    if text.starts_with("kept") {
        let mtime = field("mtime").and_then(|m| {
            let (s, n) = m.split_once('.')?;
            Some((s.parse::<i64>().ok()?, n.parse::<i64>().ok()?))
        });
        let size = field("size").and_then(|z| z.parse::<u64>().ok());
        return Mark::Kept(mtime.zip(size).map(|((s, n), z)| (s, n, z)));
    }
    let (Some(pid), Some(start), Some(boot)) = (
        field("pid").and_then(|p| p.parse::<u32>().ok()),
        field("start").and_then(|s| s.parse::<u64>().ok()),
        field("boot"),
    ) else {
        return Mark::Kept(None);
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

/// The refusal to write, without `--overwrite`, a file iomark kept that changed since,
/// or one a killed run left (whatever was put in it since cannot be told).
pub(crate) fn changed_refusal(path: &Path, spec: &Spec, left_by: Option<u32>) -> Error {
    let why = match left_by {
        Some(pid) => format!("was left by an iomark run that was killed (process {pid})"),
        None => "was kept by iomark and has changed since (its size or modification time)".into(),
    };
    Error::guard(format!(
        "{} {why}; --rw {} would overwrite it: add --overwrite, or remove it, or choose a new file name",
        named(path),
        spec.rw.name()
    ))
}

/// The refusal to write a file iomark did not make, without `--overwrite`.
pub(crate) fn foreign_refusal(path: &Path, spec: &Spec) -> Error {
    Error::guard(format!(
        "{} exists and was not created by iomark; --rw {} would overwrite it: add --overwrite, or choose a new file name",
        named(path),
        spec.rw.name()
    ))
}

/// A path as a refusal names it: a symbolic link with the file it leads to, which is
/// what a write would change.
pub(crate) fn named(path: &Path) -> String {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    match std::fs::canonicalize(path) {
        Ok(to) if is_link => format!("{} (a symbolic link to {})", path.display(), to.display()),
        _ => path.display().to_string(),
    }
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

/// Whether `path` is on the list [`remove_unfinished`] removes.
#[cfg(test)]
pub(crate) fn is_unfinished(path: &Path) -> bool {
    let list = UNFINISHED.lock().unwrap_or_else(|p| p.into_inner());
    list.iter().any(|(p, _)| p == path)
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
        keep_mark(&file);
    } else if fs::symlink_metadata(path).is_ok_and(|m| (m.dev(), m.ino()) == id) {
        let _ = fs::remove_file(path);
    }
}

//! Opening what a workload runs against: a file (created, laid out and later removed when
//! iomark made it), a block device, or nothing at all for the null engine.
//!
//! This is where the safety rules live: an existing file is written only with
//! `--overwrite` (unless iomark created it, marked by an extended attribute), a block
//! device only with `--allow-write-device`, and iomark removes only files it created in
//! this run. It also finds the alignment direct I/O needs (asked of the kernel, not
//! assumed) and checks the workload against it. It does not time or count anything.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result, describe_io};
use crate::io::env::BlockDev;
use crate::io::sys;
use crate::plan::engine::SyncMode;
use crate::plan::spec::{Spec, TargetPolicy};
use crate::results::env::FsInfo;
use crate::results::schema::{Purge, TargetKind};
use crate::units::fmt_size;
use crate::workload::data::DataGen;

pub use crate::io::mark::remove_unfinished;
use crate::io::mark::{
    Mark, changed_refusal, changed_since_kept, foreign_refusal, is_marked, keep_mark, mark,
    read_mark, unfinished,
};
use crate::plan::DEFAULT_NEW_FILE_SIZE;

// Linux block ioctls (include/uapi/linux/fs.h).

/// An opened target, ready for I/O.
#[derive(Debug)]
pub(crate) struct Target {
    pub kind: TargetKind,
    pub path: PathBuf,
    file: Option<File>,
    /// First byte of the span.
    pub base: u64,
    /// Bytes of the target the workload addresses.
    pub span: u64,
    /// Alignment direct I/O needs for offsets, lengths and buffers (1 when buffered).
    pub align: u64,
    /// Whether iomark created the file in this run (and so may remove it).
    pub created: bool,
    /// Device and inode of the file iomark created, checked again before removing it.
    identity: Option<(u64, u64)>,
    keep: bool,
    /// A study holds the file after this run (see `TargetPolicy::hold`).
    hold: bool,
    /// The block device whose counters show what reached the hardware.
    pub device: Option<BlockDev>,
    /// The filesystem a file target lives on.
    pub fs: Option<FsInfo>,
    /// The process of a killed run that left this file (used as it is, never removed).
    pub left_by: Option<u32>,
    /// A file iomark kept (or one a killed run left) that this run writes: marked kept
    /// again at the end, with its new state.
    remark: bool,
}

fn in_use_refusal(path: &Path, use_: &crate::io::guard::InUse) -> Error {
    Error::guard(format!(
        "refusing to write {}: {use_}; iomark never writes a device in use, whatever the flags",
        path.display()
    ))
}

/// The open flag of `--sync-mode` (none: 0). O_SYNC cannot be set on an open descriptor
/// (F_SETFL ignores it), so it is given at open.
fn sync_flags(spec: &Spec) -> i32 {
    match spec.engine_opts.sync_mode {
        SyncMode::None => 0,
        SyncMode::Sync => sys::O_SYNC,
        SyncMode::Dsync => sys::O_DSYNC,
    }
}

fn block_device_size(file: &File) -> io::Result<u64> {
    sys::block_device_size(file.as_fd())
}

/// Turns an open() failure into a message that says what to do.
fn open_error(path: &Path, e: &io::Error, direct: bool, write: bool) -> Error {
    let p = path.display();
    match e.raw_os_error() {
        Some(sys::EINVAL) if direct => Error::target(format!(
            "the filesystem under {p} refuses O_DIRECT; use --buffered"
        )),
        Some(sys::EACCES) | Some(sys::EPERM) => Error::target(format!(
            "permission denied opening {p} for {}; run as a user who may, or choose another target",
            if write { "writing" } else { "reading" }
        )),
        Some(sys::EROFS) => Error::target(format!(
            "{p} is on a read-only filesystem; {}",
            match write {
                true =>
                    "read it (--rw read or randread) or choose a target on a writable filesystem",
                false => "choose a target on a writable filesystem",
            }
        )),
        Some(sys::ENOENT) => Error::target(format!("{p} does not exist; check the path")),
        Some(sys::EBUSY) => Error::target(format!(
            "{p} is busy: something holds it exclusively (mounted, part of a RAID/LVM, or opened exclusively by another program, such as another iomark run); wait for it to let go or choose another target"
        )),
        Some(sys::ENAMETOOLONG) => Error::target(format!(
            "the name {p} is longer than the filesystem allows (usually 255 bytes per name); choose a shorter name"
        )),
        _ => Error::io(format!("cannot open {p}"), e),
    }
}

impl Target {
    /// Opens the target of `spec`, creating and laying out a new file when needed.
    /// `go_on(done, total)` is asked after every MiB while a new file is laid out (bytes
    /// written so far and in all), so that progress shows and Ctrl-C is not ignored there;
    /// `layout` makes the bytes a new file is filled with (the workload's data profile).
    pub(crate) fn open(
        spec: &Spec,
        policy: &TargetPolicy,
        go_on: &mut dyn FnMut(u64, u64) -> bool,
        layout: &mut DataGen,
    ) -> Result<Target> {
        if !spec.engine.caps().needs_fd {
            let span = spec.size.ok_or_else(|| {
                Error::usage(match spec.target.as_str() {
                    "null" => "--engine null does no I/O and needs --size to know the span (e.g. --size 1g)".to_string(),
                    t => format!("--engine null does no I/O and does not open {t}, so its size is not the span: give --size (e.g. --size 1g)"),
                })
            })?;
            return Ok(Target {
                kind: TargetKind::None,
                path: PathBuf::from(&spec.target),
                file: None,
                base: spec.offset,
                span,
                align: 1,
                created: false,
                identity: None,
                keep: true,
                hold: false,
                device: None,
                fs: None,
                left_by: None,
                remark: false,
            });
        }
        let path = PathBuf::from(&spec.target);
        let writes = spec.writes();
        // The path is looked at once. A symbolic link the user named is resolved here, and
        // what it resolved to is opened without following links (O_NOFOLLOW), so what is
        // checked is what is written: every decision after the open is taken on the
        // descriptor (fstat, the device number's sysfs entry, libblkid through the
        // descriptor, the mark through fgetxattr), none on the path.
        let named = match fs::symlink_metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Self::create(spec, policy, path, go_on, layout);
            }
            Err(e) => return Err(open_error(&path, &e, false, false)),
            Ok(md) => md,
        };
        let resolved = if named.file_type().is_symlink() {
            fs::canonicalize(&path).map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => Error::target(format!(
                    "{} is a symbolic link to nothing; point it at a file or a block device, or give a new file name",
                    path.display()
                )),
                _ => open_error(&path, &e, false, false),
            })?
        } else {
            path.clone()
        };
        // A first look by path, only so that a directory, a character device or a device
        // the user did not allow writing is refused without being opened at all; the same
        // rules are applied again to what was opened.
        let md =
            fs::symlink_metadata(&resolved).map_err(|e| open_error(&path, &e, false, false))?;
        Self::kind_allowed(&md, &path, spec, policy)?;
        if writes {
            // Before the open too: the kernel refuses to open an active swap file for
            // writing (ETXTBSY), which would say less.
            Self::file_in_use(&md, &path)?;
        }
        let file = Self::open_nofollow(&path, &resolved, writes, sync_flags(spec))?;
        let md = file
            .metadata()
            .map_err(|e| Error::io(format!("cannot stat {}", path.display()), &e))?;
        let kind = Self::kind_allowed(&md, &path, spec, policy)?;
        sys::set_status_flags(file.as_fd(), 0, sys::O_NONBLOCK)
            .map_err(|e| Error::io(format!("cannot set up {}", path.display()), &e))?;
        // No access time written by the reads (fio opens with O_NOATIME too): the kernel
        // allows it to the file's owner or a privileged user only; others read with it.
        let _ = sys::set_status_flags(file.as_fd(), sys::O_NOATIME, 0);
        let found = (kind == TargetKind::File)
            .then(|| read_mark(&file))
            .flatten();
        if let Some(Mark::Live(pid)) = found
            && pid != std::process::id()
        {
            return Err(Error::guard(format!(
                "{} is being used by another iomark run (process {pid}); wait for it to end or choose another file",
                path.display()
            )));
        }
        let left_by = match found {
            Some(Mark::Leftover(pid)) => Some(pid),
            _ => None,
        };
        if writes {
            Self::file_in_use(&md, &path)?;
            match kind {
                TargetKind::BlockDevice => Self::guard_device(&file, &md, &path, policy)?,
                _ if policy.overwrite => {}
                _ if !is_marked(&file) => return Err(foreign_refusal(&path, spec)),
                _ if left_by.is_some() || changed_since_kept(&file, &found) => {
                    return Err(changed_refusal(&path, spec, left_by));
                }
                _ => {}
            }
        }
        if spec.direct {
            sys::set_direct(file.as_fd()).map_err(|e| open_error(&path, &e, true, writes))?;
        }
        let mut t = Self::from_open(spec, policy, path, &resolved, file, &md, kind, writes)?;
        t.left_by = left_by;
        t.remark = writes && matches!(found, Some(Mark::Kept(_) | Mark::Leftover(_)));
        Ok(t)
    }

    /// Refuses to write a regular file that backs a loop device or is active swap,
    /// whatever the flags (`guard::file_in_use`).
    pub(super) fn file_in_use(md: &fs::Metadata, path: &Path) -> Result<()> {
        match md
            .is_file()
            .then(|| crate::io::guard::file_in_use(md))
            .flatten()
        {
            Some(why) => Err(Error::guard(format!(
                "{} {why}",
                crate::io::mark::named(path)
            ))),
            None => Ok(()),
        }
    }

    /// The kind of target `md` describes, if iomark may use it as asked: a directory, a
    /// file that is neither regular nor a block device, and a device written without
    /// `--allow-write-device` are refused.
    fn kind_allowed(
        md: &fs::Metadata,
        path: &Path,
        spec: &Spec,
        policy: &TargetPolicy,
    ) -> Result<TargetKind> {
        let p = path.display();
        if md.is_dir() {
            return Err(Error::target(format!(
                "{p} is a directory; give a file path inside it (e.g. {}/iomark.dat) or a block device",
                p.to_string().trim_end_matches('/')
            )));
        }
        if md.file_type().is_block_device() {
            if spec.writes() && !policy.allow_write_device {
                return Err(Error::guard(format!(
                    "{p} is a block device and --rw {} writes to it, destroying its contents; add --allow-write-device if that is what you want",
                    spec.rw.name()
                )));
            }
            return Ok(TargetKind::BlockDevice);
        }
        if md.is_file() {
            return Ok(TargetKind::File);
        }
        Err(Error::target(format!(
            "{p} is neither a regular file nor a block device; choose a file or a block device"
        )))
    }

    /// Opens `resolved` (what `path`, as the user gave it, names) without following a
    /// link, non-blocking until its type is known (a FIFO swapped in would hang a plain
    /// open), and for writing with O_EXCL: the kernel then refuses (EBUSY) a block device
    /// that is mounted or claimed by RAID, LVM, device-mapper or swap, and no one can
    /// mount or claim it while iomark holds it. (Linux ignores O_EXCL without O_CREAT for
    /// anything but a block device.)
    fn open_nofollow(path: &Path, resolved: &Path, writes: bool, sync: i32) -> Result<File> {
        let mut flags = sys::O_NOFOLLOW | sys::O_NONBLOCK | sys::O_NOCTTY | sync;
        if writes {
            flags |= sys::O_EXCL;
        }
        OpenOptions::new()
            .read(true)
            .write(writes)
            .custom_flags(flags)
            .open(resolved)
            .map_err(|e| match e.raw_os_error() {
                Some(sys::ELOOP) => Error::target(format!(
                    "{} changed into a symbolic link while iomark opened it; run again, or give the path it points to",
                    path.display()
                )),
                Some(sys::EBUSY) => {
                    // Something holds the device; say what, when the guard can tell. (This
                    // look by path only explains a refusal that stands either way.)
                    fs::metadata(resolved)
                        .ok()
                        .and_then(|md| BlockDev::of_metadata(&md))
                        .and_then(|dev| crate::io::guard::in_use(&dev))
                        .map_or_else(
                            || open_error(path, &e, false, writes),
                            |u| in_use_refusal(path, &u),
                        )
                }
                _ => open_error(path, &e, false, writes),
            })
    }

    /// Refuses a device in use (always) or one that holds data (without --destroy-data).
    /// `file` is the device as opened for writing, `md` its fstat: nothing here looks at
    /// a path.
    pub(super) fn guard_device(
        file: &File,
        md: &fs::Metadata,
        path: &Path,
        policy: &TargetPolicy,
    ) -> Result<()> {
        let p = path.display();
        let Some(dev) = BlockDev::of_metadata(md) else {
            let (major, minor) = sys::major_minor(md.rdev());
            return Err(Error::guard(format!(
                "iomark cannot tell whether {p} is in use: /sys/dev/block/{major}:{minor} is missing (is sysfs mounted on /sys?); writing refused"
            )));
        };
        if let Some(use_) = crate::io::guard::in_use(&dev) {
            return Err(in_use_refusal(path, &use_));
        }
        if sys::block_device_read_only(file.as_fd()).unwrap_or(false) {
            // A loop device attached read-only (losetup -r, or over a read-only file)
            // stays so after BLKROSET: only attaching it again changes that.
            let fix = match dev.sysfs.join("loop").exists() {
                true => format!(
                    "detach it (losetup -d {p}) and attach it again without -r, over a file this user may write"
                ),
                false => format!("make it writable (blockdev --setrw {p})"),
            };
            return Err(Error::target(format!(
                "{p} is read-only, so a writing workload would fail at its first write; use --rw read or randread, or {fix}"
            )));
        }
        if policy.destroy_data {
            return Ok(());
        }
        let size = block_device_size(file)
            .map_err(|e| Error::io(format!("cannot read the size of {p}"), &e))?;
        if let Some(found) = crate::io::guard::holds(file, Some(&dev), size) {
            return Err(Error::guard(format!(
                "{p} holds {found}; writing would destroy it: add --destroy-data as well if that is what you want"
            )));
        }
        Ok(())
    }

    /// A target from the file `open` opened and checked.
    #[allow(clippy::too_many_arguments)]
    fn from_open(
        spec: &Spec,
        policy: &TargetPolicy,
        path: PathBuf,
        resolved: &Path,
        file: File,
        md: &fs::Metadata,
        kind: TargetKind,
        writes: bool,
    ) -> Result<Target> {
        let len = match kind {
            TargetKind::BlockDevice => block_device_size(&file).map_err(|e| {
                Error::io(format!("cannot read the size of {}", path.display()), &e)
            })?,
            _ => md.len(),
        };
        let spec = &spec.with_shares_of(len);
        let span = spec.size.unwrap_or(len.saturating_sub(spec.offset));
        if kind == TargetKind::File && writes {
            if spec.offset + span > len {
                // The user allowed writing this file; grow it to hold the span.
                file.set_len(spec.offset + span)
                    .map_err(|e| Error::io(format!("cannot extend {}", path.display()), &e))?;
            }
        } else if let Some(e) = past_the_end(spec, len, kind, &path) {
            return Err(e);
        }
        let device = BlockDev::of_file(file.as_fd(), md);
        let fs = if kind == TargetKind::File {
            FsInfo::of_path(resolved)
        } else {
            None
        };
        let mut t = Target {
            kind,
            path,
            file: Some(file),
            base: spec.offset,
            span,
            align: 1,
            created: false,
            identity: None,
            keep: policy.keep,
            hold: false,
            device,
            fs,
            left_by: None,
            remark: false,
        };
        t.check_geometry(spec)?;
        Ok(t)
    }

    /// Discards the span (BLKDISCARD on a device, FALLOC_FL_PUNCH_HOLE on a file), the
    /// "purge" of the SNIA tests: what was done, and whether the target took it.
    pub(crate) fn purge(&self) -> Purge {
        let purge = |method: &str, result: Option<io::Result<()>>, what: &str, refused: &str| {
            let (supported, note) = match result {
                None => (false, "nothing to purge: no target".to_string()),
                Some(Ok(())) => (true, format!("{what} over the span")),
                Some(Err(e)) => (
                    false,
                    format!("{refused} ({}); not purged", describe_io(&e)),
                ),
            };
            Purge {
                method: method.into(),
                supported,
                bytes: if supported { self.span } else { 0 },
                note,
            }
        };
        let Some(f) = &self.file else {
            return purge("none", None, "", "");
        };
        match self.kind {
            TargetKind::BlockDevice => purge(
                "discard",
                Some(crate::io::space::discard(f.as_fd(), self.base, self.span)),
                "BLKDISCARD",
                "the device refused BLKDISCARD",
            ),
            _ => purge(
                "punch_hole",
                Some(crate::io::space::punch_hole(
                    f.as_fd(),
                    self.base,
                    self.span,
                )),
                "FALLOC_FL_PUNCH_HOLE",
                "the filesystem refused to punch holes",
            ),
        }
    }

    /// The open file or device; `None` for the null engine.
    /// The compression the first of `targets` on a compressing btrfs applies
    /// (`compress-force=zstd:3`): its device then moves fewer bytes than iomark does.
    pub(crate) fn compression(targets: &[Target]) -> Option<&str> {
        targets
            .iter()
            .find_map(|t| t.fs.as_ref().and_then(FsInfo::compression))
    }

    pub(crate) fn file(&self) -> Option<&File> {
        self.file.as_ref()
    }

    /// The descriptor engines use; `None` for the null engine.
    pub(crate) fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.file.as_ref().map(|f| f.as_fd())
    }

    /// Drops the target's pages from the page cache, so a run starts cold (as fio's
    /// default `invalidate=1` does). Failures are ignored: this is best effort.
    pub(crate) fn drop_cache(&self) {
        let Some(f) = &self.file else { return };
        match self.kind {
            TargetKind::BlockDevice => sys::flush_device_cache(f.as_fd()),
            _ => sys::drop_file_cache(f.as_fd(), self.base, self.span, true),
        }
    }

    /// Gets the target ready for a repetition of `spec`: drops its cached pages (unless
    /// `--invalidate off`) and gives the kernel the run's `--fadvise` advice over the
    /// span (best effort, as fio: a refusal changes nothing but readahead).
    pub(crate) fn prepare_cache(&self, spec: &crate::plan::spec::Spec) {
        if spec.cache.invalidate != crate::plan::cache::Invalidate::Off {
            self.drop_cache();
        }
        if let (Some(f), Some(random)) = (&self.file, spec.cache.advice(spec.rw.is_random())) {
            let _ = sys::fadvise(f.as_fd(), self.base, self.span, random);
        }
    }

    /// Closes the target and removes the file if iomark created it and `--keep` is off.
    pub(crate) fn finish(mut self) -> Result<()> {
        let done = self.remove_created();
        self.file = None;
        done
    }

    fn remove_created(&mut self) -> Result<()> {
        if self.created && self.hold {
            // The study keeps it for its next runs, still marked as this process's and
            // registered as unfinished, until it releases it at its end.
            self.created = false;
            return Ok(());
        }
        if self.created {
            // Handed over (kept) or removed below. Not a file this target did not make:
            // a study's held file stays on the list until the study releases it (every
            // run's target, the first one's too once finished, took it off when dropped,
            // and a second Ctrl-C then left the file behind).
            unfinished(&self.path, self.identity, false);
        }
        if ((self.created && self.keep) || std::mem::take(&mut self.remark))
            && let Some(f) = &self.file
        {
            // Kept on purpose (no longer tied to this process), with its state now.
            keep_mark(f);
        }
        if self.created && !self.keep {
            self.created = false;
            // Remove only the very file we created: if the path now names another file
            // (renamed or replaced meanwhile), leave it alone.
            let now = fs::symlink_metadata(&self.path)
                .ok()
                .map(|m| (m.dev(), m.ino()));
            if now.is_none() || now != self.identity {
                return Err(Error::runtime(format!(
                    "{} is no longer the file iomark created; not removing it",
                    self.path.display()
                )));
            }
            fs::remove_file(&self.path).map_err(|e| {
                Error::runtime(format!(
                    "cannot remove {} that iomark created: {}",
                    self.path.display(),
                    describe_io(&e)
                ))
            })?;
        }
        Ok(())
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.remove_created();
        self.file = None;
    }
}

mod create;
pub(crate) use create::device_len;
pub use create::preflight;
mod fit;
pub(crate) use fit::{direct_alignment, direct_alignment_at, past_the_end};
mod trim;

#[cfg(test)]
#[path = "target_tests.rs"]
mod tests;

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
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result, describe_io};
use crate::io::env::BlockDev;
use crate::plan::spec::{EngineKind, Spec, TargetPolicy};
use crate::results::env::FsInfo;
use crate::results::schema::TargetKind;
use crate::units::fmt_size;
use crate::workload::data::DataGen;

/// Size of a file iomark creates when `--size` is not given.
pub const DEFAULT_NEW_FILE_SIZE: u64 = 1 << 30;

/// The extended attribute that marks a file as iomark's own.
const MARK_XATTR: &str = "user.iomark";

// Linux block ioctls (include/uapi/linux/fs.h).
const BLKSSZGET: libc::c_ulong = 0x1268;
const BLKFLSBUF: libc::c_ulong = 0x1261;
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

/// An opened target, ready for I/O.
#[derive(Debug)]
pub struct Target {
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
    /// The block device whose counters show what reached the hardware.
    pub device: Option<BlockDev>,
    /// The filesystem a file target lives on.
    pub fs: Option<FsInfo>,
}

fn is_marked(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    let name = std::ffi::CString::new(MARK_XATTR).expect("no NUL in constant");
    // Safety: both strings are NUL-terminated; a null buffer with size 0 asks only for the
    // attribute's length.
    let r = unsafe { libc::getxattr(c.as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) };
    r >= 0
}

fn mark(path: &Path) {
    let (Ok(c), Ok(name)) = (
        std::ffi::CString::new(path.as_os_str().as_encoded_bytes()),
        std::ffi::CString::new(MARK_XATTR),
    ) else {
        return;
    };
    let value = b"created";
    // Safety: NUL-terminated strings and a valid value buffer of the given length. A
    // filesystem without user xattrs refuses; the file is then simply not marked.
    unsafe {
        libc::setxattr(
            c.as_ptr(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        );
    }
}

/// The alignment O_DIRECT needs on `file`: statx's DIO alignment where the kernel reports
/// it (Linux 6.1+), else the logical block size of the device underneath, else 512.
fn direct_alignment(file: &File, kind: TargetKind, device: Option<&BlockDev>) -> u64 {
    if kind == TargetKind::BlockDevice {
        let mut lbs: libc::c_int = 0;
        // Safety: BLKSSZGET writes one int into `lbs`.
        if unsafe { libc::ioctl(file.as_raw_fd(), BLKSSZGET as _, &mut lbs) } == 0 && lbs > 0 {
            return lbs as u64;
        }
    }
    // Safety: statx writes into the zeroed struct we own; the path is an empty C string
    // with AT_EMPTY_PATH, so the call describes the open descriptor.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if rc == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0 && stx.stx_dio_offset_align > 0 {
        return (stx.stx_dio_offset_align as u64).max(stx.stx_dio_mem_align as u64);
    }
    device
        .and_then(|d| d.info().logical_block_size)
        .unwrap_or(512)
}

fn file_identity(f: &File) -> Option<(u64, u64)> {
    f.metadata().ok().map(|m| (m.dev(), m.ino()))
}

fn block_device_size(file: &File) -> io::Result<u64> {
    let mut size: u64 = 0;
    // Safety: BLKGETSIZE64 writes one u64 into `size`.
    if unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &mut size) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Turns an open() failure into a message that says what to do.
fn open_error(path: &Path, e: &io::Error, direct: bool, write: bool) -> Error {
    let p = path.display();
    match e.raw_os_error() {
        Some(libc::EINVAL) if direct => Error::input(format!(
            "the filesystem under {p} refuses O_DIRECT; use --buffered"
        )),
        Some(libc::EACCES) | Some(libc::EPERM) => Error::input(format!(
            "permission denied opening {p} for {}; run as a user who may, or choose another target",
            if write { "writing" } else { "reading" }
        )),
        Some(libc::EROFS) => Error::input(format!(
            "{p} is on a read-only filesystem; use a read workload or another target"
        )),
        Some(libc::ENOENT) => Error::input(format!("{p} does not exist; check the path")),
        Some(libc::EBUSY) => Error::input(format!(
            "{p} is busy (in use by the kernel, e.g. mounted or part of a RAID/LVM); choose another target"
        )),
        _ => Error::io(format!("cannot open {p}"), e),
    }
}

impl Target {
    /// Opens the target of `spec`, creating and laying out a new file when needed.
    /// `stop` is polled while a new file is laid out, so Ctrl-C is not ignored there;
    /// `layout` makes the bytes a new file is filled with (the workload's data profile).
    pub fn open(
        spec: &Spec,
        policy: &TargetPolicy,
        stop: &dyn Fn() -> bool,
        layout: &mut DataGen,
    ) -> Result<Target> {
        if spec.engine == EngineKind::Null {
            let span = spec.size.ok_or_else(|| {
                Error::input(
                    "--engine null does no I/O and needs --size to know the span (e.g. --size 1g)",
                )
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
                device: None,
                fs: None,
            });
        }
        let path = PathBuf::from(&spec.target);
        let writes = spec.writes();
        match fs::metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Self::create(spec, policy, path, stop, layout)
            }
            Err(e) => Err(open_error(&path, &e, false, false)),
            Ok(md) if md.is_dir() => Err(Error::input(format!(
                "{} is a directory; give a file path inside it (e.g. {}/iomark.dat) or a block device",
                path.display(),
                path.display().to_string().trim_end_matches('/')
            ))),
            Ok(md) if md.file_type().is_block_device() => {
                if writes && !policy.allow_write_device {
                    return Err(Error::input(format!(
                        "{} is a block device and --rw {} writes to it, destroying its contents; add --allow-write-device if that is what you want",
                        path.display(),
                        spec.rw.name()
                    )));
                }
                if writes {
                    Self::guard_device(&path, policy)?;
                }
                Self::open_existing(spec, policy, path, TargetKind::BlockDevice, writes)
            }
            Ok(md) if md.is_file() => {
                if writes && !policy.overwrite && !is_marked(&path) {
                    return Err(Error::input(format!(
                        "{} exists and was not created by iomark; --rw {} would overwrite it: add --overwrite, or choose a new file name",
                        path.display(),
                        spec.rw.name()
                    )));
                }
                Self::open_existing(spec, policy, path, TargetKind::File, writes)
            }
            Ok(_) => Err(Error::input(format!(
                "{} is neither a regular file nor a block device; choose a file or a block device",
                path.display()
            ))),
        }
    }

    /// Refuses a device in use (always) or one that holds data (without --destroy-data),
    /// before it is opened for writing.
    fn guard_device(path: &Path, policy: &TargetPolicy) -> Result<()> {
        let p = path.display();
        if let Some(dev) = BlockDev::of_path(path)
            && let Some(use_) = crate::io::guard::in_use(&dev)
        {
            return Err(Error::input(format!(
                "refusing to write {p}: {use_}; iomark never writes a device in use, whatever the flags"
            )));
        }
        if policy.destroy_data {
            return Ok(());
        }
        let f = File::open(path).map_err(|e| open_error(path, &e, false, false))?;
        let size = block_device_size(&f)
            .map_err(|e| Error::io(format!("cannot read the size of {p}"), &e))?;
        if let Some(sig) = crate::io::guard::signature(&f, size) {
            return Err(Error::input(format!(
                "{p} holds a {sig}; writing would destroy it: add --destroy-data as well if that is what you want"
            )));
        }
        Ok(())
    }

    fn flags(direct: bool) -> i32 {
        if direct { libc::O_DIRECT } else { 0 }
    }

    fn open_existing(
        spec: &Spec,
        policy: &TargetPolicy,
        path: PathBuf,
        kind: TargetKind,
        writes: bool,
    ) -> Result<Target> {
        // O_EXCL on a block device opened for writing makes the kernel refuse (EBUSY) a
        // device that is mounted or held by RAID, LVM or device-mapper.
        let excl = if kind == TargetKind::BlockDevice && writes {
            libc::O_EXCL
        } else {
            0
        };
        let file = OpenOptions::new()
            .read(true)
            .write(writes)
            .custom_flags(Self::flags(spec.direct) | excl)
            .open(&path)
            .map_err(|e| open_error(&path, &e, spec.direct, writes))?;
        let len = match kind {
            TargetKind::BlockDevice => block_device_size(&file).map_err(|e| {
                Error::io(format!("cannot read the size of {}", path.display()), &e)
            })?,
            _ => file
                .metadata()
                .map_err(|e| Error::io(format!("cannot stat {}", path.display()), &e))?
                .len(),
        };
        let what = if kind == TargetKind::BlockDevice {
            "device"
        } else {
            "file"
        };
        if spec.offset >= len && !(kind == TargetKind::File && writes) {
            return Err(Error::input(format!(
                "--offset {} is at or past the end of {} ({}); use a smaller --offset",
                fmt_size(spec.offset),
                path.display(),
                fmt_size(len)
            )));
        }
        let span = match spec.size {
            Some(s) => s,
            None => len.saturating_sub(spec.offset),
        };
        if spec.offset + span > len {
            if kind == TargetKind::File && writes {
                // The user allowed writing this file; grow it to hold the span.
                file.set_len(spec.offset + span)
                    .map_err(|e| Error::io(format!("cannot extend {}", path.display()), &e))?;
            } else {
                return Err(Error::input(format!(
                    "--offset {} plus --size {} runs past the end of the {what} {} ({}); use a smaller --size or --offset",
                    fmt_size(spec.offset),
                    fmt_size(span),
                    path.display(),
                    fmt_size(len)
                )));
            }
        }
        let device = BlockDev::of_path(&path);
        let fs = if kind == TargetKind::File {
            FsInfo::of_path(&path)
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
            device,
            fs,
        };
        t.check_geometry(spec)?;
        Ok(t)
    }

    fn create(
        spec: &Spec,
        policy: &TargetPolicy,
        path: PathBuf,
        stop: &dyn Fn() -> bool,
        layout: &mut DataGen,
    ) -> Result<Target> {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !parent.is_dir() {
            return Err(Error::input(format!(
                "directory {} does not exist; create it first or choose another target",
                parent.display()
            )));
        }
        let span = spec.size.unwrap_or(DEFAULT_NEW_FILE_SIZE);
        let len = spec.offset + span;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| open_error(&path, &e, false, true))?;
        let identity = file_identity(&file);
        let mut t = Target {
            kind: TargetKind::File,
            path: path.clone(),
            file: Some(file),
            base: spec.offset,
            span,
            align: 1,
            // From here on the file is ours: Drop removes it if anything below fails, and
            // `keep` applies only once the file is complete.
            created: true,
            identity,
            keep: false,
            device: BlockDev::of_path(&path),
            fs: FsInfo::of_path(&path),
        };
        mark(&path);
        // Check what can fail cheaply before writing a whole file.
        t.check_geometry(spec)?;
        if spec.direct {
            // Probe O_DIRECT on a second descriptor: some filesystems refuse it.
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECT)
                .open(&path)
                .map_err(|e| open_error(&path, &e, true, true))?;
        }
        let f = t.file.as_ref().expect("just opened");
        Self::lay_out(f, len, layout, stop).map_err(|e| match e.raw_os_error() {
            Some(libc::ENOSPC) => Error::Runtime(format!(
                "no space left on the filesystem of {} for a {} file; free space or use a smaller --size",
                path.display(),
                fmt_size(len)
            )),
            Some(libc::EINTR) => Error::Runtime(format!(
                "interrupted while laying out {}; nothing was measured",
                path.display()
            )),
            _ => Error::io(format!("cannot write {}", path.display()), &e),
        })?;
        if spec.direct {
            // Switch the same descriptor to O_DIRECT, rather than reopening by path.
            // Safety: fcntl on a descriptor we own.
            let fd = f.as_raw_fd();
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_DIRECT) } < 0 {
                let e = io::Error::last_os_error();
                return Err(open_error(&path, &e, true, true));
            }
        }
        t.keep = policy.keep;
        Ok(t)
    }

    /// Writes `len` bytes of random data, so that reads hit real blocks and not holes
    /// (which a filesystem answers without touching the device).
    fn lay_out(
        f: &File,
        len: u64,
        datagen: &mut DataGen,
        stop: &dyn Fn() -> bool,
    ) -> io::Result<()> {
        // Reserve the space first, so a full filesystem fails now and not halfway.
        // Safety: plain syscall on an open descriptor.
        let rc = unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, len as libc::off_t) };
        if rc != 0 && rc != libc::EOPNOTSUPP {
            return Err(io::Error::from_raw_os_error(rc));
        }
        let mut buf = vec![0u8; 1 << 20];
        let mut w = f;
        let mut left = len;
        while left > 0 {
            if stop() {
                return Err(io::Error::from_raw_os_error(libc::EINTR));
            }
            let n = left.min(buf.len() as u64) as usize;
            datagen.fill(&mut buf[..n]);
            w.write_all(&buf[..n])?;
            left -= n as u64;
        }
        f.sync_all()
    }

    /// Checks block size, offset and span against the target's direct-I/O alignment.
    fn check_geometry(&mut self, spec: &Spec) -> Result<()> {
        if spec.bs > self.span {
            return Err(Error::input(format!(
                "--bs {} is larger than the span of {} ({}); use a smaller --bs or a larger --size",
                fmt_size(spec.bs),
                self.path.display(),
                fmt_size(self.span)
            )));
        }
        if !spec.direct {
            return Ok(());
        }
        let file = self.file.as_ref().expect("opened above");
        self.align = direct_alignment(file, self.kind, self.device.as_ref());
        let a = self.align;
        if !spec.bs.is_multiple_of(a) {
            return Err(Error::input(format!(
                "--bs {} is not a multiple of {a} bytes, the alignment direct I/O needs on {}; use a multiple of {a} or --buffered",
                spec.bs,
                self.path.display()
            )));
        }
        if !spec.offset.is_multiple_of(a) {
            return Err(Error::input(format!(
                "--offset {} is not a multiple of {a} bytes, the alignment direct I/O needs on {}; use a multiple of {a} or --buffered",
                spec.offset,
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Discards the span (BLKDISCARD on a device, FALLOC_FL_PUNCH_HOLE on a file), the
    /// "purge" of the SNIA tests. Returns the method and whether the target took it.
    pub fn purge(&self) -> (String, bool, String) {
        const BLKDISCARD: libc::c_ulong = 0x1277;
        let Some(f) = &self.file else {
            return ("none".into(), false, "nothing to purge: no target".into());
        };
        match self.kind {
            TargetKind::BlockDevice => {
                let range: [u64; 2] = [self.base, self.span];
                // Safety: BLKDISCARD reads a [start, length] pair of u64 from the pointer.
                let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKDISCARD as _, range.as_ptr()) };
                if rc == 0 {
                    ("discard".into(), true, "BLKDISCARD over the span".into())
                } else {
                    let e = io::Error::last_os_error();
                    (
                        "discard".into(),
                        false,
                        format!(
                            "the device refused BLKDISCARD ({}); not purged",
                            describe_io(&e)
                        ),
                    )
                }
            }
            _ => {
                // Safety: fallocate on an open descriptor with a byte range.
                let rc = unsafe {
                    libc::fallocate(
                        f.as_raw_fd(),
                        libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                        self.base as libc::off_t,
                        self.span as libc::off_t,
                    )
                };
                if rc == 0 {
                    (
                        "punch_hole".into(),
                        true,
                        "FALLOC_FL_PUNCH_HOLE over the span".into(),
                    )
                } else {
                    let e = io::Error::last_os_error();
                    (
                        "punch_hole".into(),
                        false,
                        format!(
                            "the filesystem refused to punch holes ({}); not purged",
                            describe_io(&e)
                        ),
                    )
                }
            }
        }
    }

    /// The open file or device; `None` for the null engine.
    pub fn file(&self) -> Option<&File> {
        self.file.as_ref()
    }

    /// The descriptor engines use; `None` for the null engine.
    pub fn fd(&self) -> Option<RawFd> {
        self.file.as_ref().map(|f| f.as_raw_fd())
    }

    /// Drops the target's pages from the page cache, so a run starts cold (as fio's
    /// default `invalidate=1` does). Failures are ignored: this is best effort.
    pub fn drop_cache(&self) {
        let Some(f) = &self.file else { return };
        // Safety: plain syscalls on an open descriptor.
        unsafe {
            match self.kind {
                TargetKind::BlockDevice => {
                    libc::ioctl(f.as_raw_fd(), BLKFLSBUF as _, 0);
                }
                _ => {
                    libc::fdatasync(f.as_raw_fd());
                    libc::posix_fadvise(
                        f.as_raw_fd(),
                        self.base as libc::off_t,
                        self.span as libc::off_t,
                        libc::POSIX_FADV_DONTNEED,
                    );
                }
            }
        }
    }

    /// Closes the target and removes the file if iomark created it and `--keep` is off.
    pub fn finish(mut self) -> Result<()> {
        self.file = None;
        self.remove_created()
    }

    fn remove_created(&mut self) -> Result<()> {
        if self.created && !self.keep {
            self.created = false;
            // Remove only the very file we created: if the path now names another file
            // (renamed or replaced meanwhile), leave it alone.
            let now = fs::symlink_metadata(&self.path)
                .ok()
                .map(|m| (m.dev(), m.ino()));
            if now.is_none() || now != self.identity {
                return Err(Error::Runtime(format!(
                    "{} is no longer the file iomark created; not removing it",
                    self.path.display()
                )));
            }
            fs::remove_file(&self.path).map_err(|e| {
                Error::Runtime(format!(
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
        self.file = None;
        let _ = self.remove_created();
    }
}

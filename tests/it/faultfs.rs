//! A fault-injecting FUSE file system for the tests: one regular file, `disk`, backed by
//! a file in /dev/shm, served by a `fuser` session thread inside the test process. While
//! it is mounted a test can make it
//!
//! - fail reads and/or writes with EIO, from the Nth data request on (so a run gets
//!   going first), optionally only inside a byte range;
//! - fail fsync with EIO;
//! - stall data requests for a while (the reply is sent late from a helper thread, so
//!   the session keeps serving other requests meanwhile);
//! - answer reads and writes short (at most N bytes);
//! - hold lookups of new names until released (a `stat` that does not return);
//! - vanish: lazy unmount and abort the connection (through the FUSE control file
//!   system), as when a FUSE daemon dies; every later request on a file still open fails
//!   with ENOTCONN (answered by this file system itself where fusectl is missing).
//!
//! The controls are atomics in an `Arc<Controls>` shared by the test and the session
//! thread, so they can be changed while iomark runs. `FaultFs` unmounts and removes its
//! backing file on drop, also when the test panics.

use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use fuser::{
    BackgroundSession, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags,
    INodeNo, LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyData, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyWrite, ReplyXattr, Request, TimeOrNow, WriteFlags,
};

use crate::common::{is_root, require, require_tool};

/// The one file's inode and name.
const FILE_INO: u64 = 2;
pub const FILE_NAME: &str = "disk";
/// Attributes may be cached this long; nothing but the file's contents changes.
const TTL: Duration = Duration::from_secs(60);
/// "Never": the request count from which a fault is armed when it is off.
const OFF: u64 = u64::MAX;

/// Which kind of data request a fault applies to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dir {
    Read,
    Write,
}

/// The fault controls, shared with the session thread. Request numbers count the data
/// requests (reads and writes) the file system has been asked since it was mounted.
#[derive(Debug)]
struct Controls {
    /// Data requests seen so far.
    requests: AtomicU64,
    /// EIO for reads / writes numbered at least this (`OFF`: never)...
    eio_read_from: AtomicU64,
    eio_write_from: AtomicU64,
    /// ... that overlap `[eio_lo, eio_hi)`.
    eio_lo: AtomicU64,
    eio_hi: AtomicU64,
    /// Requests numbered from `stall_from` up to (not including) `stall_until` wait
    /// `stall_ms` before being served.
    stall_from: AtomicU64,
    stall_until: AtomicU64,
    stall_ms: AtomicU64,
    /// Reads and writes move at most this many bytes (0: all they were asked).
    short_max: AtomicU32,
    /// fsync fails with EIO.
    eio_fsync: AtomicBool,
    /// Set by `vanish`: every later request fails with ENOTCONN.
    gone: AtomicBool,
    /// Lookups of names other than the file are held (answered, from a helper thread,
    /// once this is cleared): a `stat` in the mount does not return meanwhile.
    hold_lookups: AtomicBool,
    /// The offset of the first request that was failed with EIO (`OFF`: none yet), and
    /// the first that was stalled.
    failed_at: AtomicU64,
    stalled_at: AtomicU64,
}

impl Default for Controls {
    fn default() -> Controls {
        Controls {
            requests: AtomicU64::new(0),
            eio_read_from: AtomicU64::new(OFF),
            eio_write_from: AtomicU64::new(OFF),
            eio_lo: AtomicU64::new(0),
            eio_hi: AtomicU64::new(OFF),
            stall_from: AtomicU64::new(OFF),
            stall_until: AtomicU64::new(OFF),
            stall_ms: AtomicU64::new(0),
            short_max: AtomicU32::new(0),
            eio_fsync: AtomicBool::new(false),
            gone: AtomicBool::new(false),
            hold_lookups: AtomicBool::new(false),
            failed_at: AtomicU64::new(OFF),
            stalled_at: AtomicU64::new(OFF),
        }
    }
}

impl Controls {
    /// How many of `len` bytes a read or write moves.
    fn short(&self, len: u32) -> u32 {
        match self.short_max.load(Ordering::SeqCst) {
            0 => len,
            max => len.min(max),
        }
    }

    /// Whether request `n`, a `dir` of `len` bytes at `offset`, is to fail with EIO.
    fn eio(&self, dir: Dir, n: u64, offset: u64, len: u64) -> bool {
        let from = match dir {
            Dir::Read => &self.eio_read_from,
            Dir::Write => &self.eio_write_from,
        };
        n >= from.load(Ordering::SeqCst)
            && offset < self.eio_hi.load(Ordering::SeqCst)
            && offset + len > self.eio_lo.load(Ordering::SeqCst)
    }
}

/// The file system the session thread serves.
struct Fs {
    backing: File,
    size: u64,
    /// Open the file with FOPEN_DIRECT_IO (no page cache; every read and write reaches
    /// this code exactly as the application issued it).
    direct_io: bool,
    ctl: Arc<Controls>,
}

impl Fs {
    fn attr(&self, ino: u64) -> FileAttr {
        let file = ino == FILE_INO;
        FileAttr {
            ino: INodeNo(ino),
            size: if file { self.size } else { 0 },
            blocks: if file { self.size / 512 } else { 0 },
            atime: SystemTime::UNIX_EPOCH,
            mtime: SystemTime::UNIX_EPOCH,
            ctime: SystemTime::UNIX_EPOCH,
            crtime: SystemTime::UNIX_EPOCH,
            kind: if file {
                FileType::RegularFile
            } else {
                FileType::Directory
            },
            perm: if file { 0o644 } else { 0o755 },
            nlink: if file { 1 } else { 2 },
            uid: 0,
            gid: 0,
            rdev: 0,
            flags: 0,
            blksize: 4096,
        }
    }

    /// Counts a data request and decides its fate: `Err` to fail it now, else how long
    /// to stall it first.
    fn admit(&self, dir: Dir, offset: u64, len: u64) -> Result<Duration, Errno> {
        let ctl = &self.ctl;
        if ctl.gone.load(Ordering::SeqCst) {
            return Err(Errno::ENOTCONN);
        }
        let n = ctl.requests.fetch_add(1, Ordering::SeqCst);
        if ctl.eio(dir, n, offset, len) {
            let _ = ctl
                .failed_at
                .compare_exchange(OFF, offset, Ordering::SeqCst, Ordering::SeqCst);
            return Err(Errno::EIO);
        }
        if n >= ctl.stall_from.load(Ordering::SeqCst) && n < ctl.stall_until.load(Ordering::SeqCst)
        {
            let _ =
                ctl.stalled_at
                    .compare_exchange(OFF, offset, Ordering::SeqCst, Ordering::SeqCst);
            return Ok(Duration::from_millis(ctl.stall_ms.load(Ordering::SeqCst)));
        }
        Ok(Duration::ZERO)
    }
}

/// Runs `serve` now, or after `stall` on a helper thread so that the session thread goes
/// on serving other requests (and the test can unmount) while this one waits.
fn later(stall: Duration, serve: impl FnOnce() + Send + 'static) {
    if stall.is_zero() {
        serve();
    } else {
        std::thread::spawn(move || {
            std::thread::sleep(stall);
            serve();
        });
    }
}

impl Filesystem for Fs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if parent == INodeNo::ROOT && name == FILE_NAME {
            reply.entry(&TTL, &self.attr(FILE_INO), fuser::Generation(0));
        } else if self.ctl.hold_lookups.load(Ordering::SeqCst) {
            let ctl = Arc::clone(&self.ctl);
            std::thread::spawn(move || {
                while ctl.hold_lookups.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                reply.error(Errno::ENOENT);
            });
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match u64::from(ino) {
            1 | FILE_INO => reply.attr(&TTL, &self.attr(u64::from(ino))),
            _ => reply.error(Errno::ENOENT),
        }
    }

    /// The size is fixed: truncation to another size is refused, everything else (times,
    /// modes) is accepted and ignored.
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        if size.is_some_and(|s| s != self.size) {
            reply.error(Errno::EPERM);
        } else {
            reply.attr(&TTL, &self.attr(u64::from(ino)));
        }
    }

    fn open(&self, _req: &Request, _ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let flags = if self.direct_io {
            FopenFlags::FOPEN_DIRECT_IO
        } else {
            FopenFlags::empty()
        };
        reply.opened(FileHandle(0), flags);
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let stall = match self.admit(Dir::Read, offset, size as u64) {
            Ok(s) => s,
            Err(e) => return reply.error(e),
        };
        let len = (self.ctl.short(size) as u64).min(self.size.saturating_sub(offset)) as usize;
        let backing = self.backing.try_clone().expect("dup the backing file");
        later(stall, move || {
            let mut buf = vec![0u8; len];
            match backing.read_exact_at(&mut buf, offset) {
                Ok(()) => reply.data(&buf),
                Err(e) => reply.error(e.into()),
            }
        });
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let stall = match self.admit(Dir::Write, offset, data.len() as u64) {
            Ok(s) => s,
            Err(e) => return reply.error(e),
        };
        if offset + data.len() as u64 > self.size {
            return reply.error(Errno::ENOSPC);
        }
        let backing = self.backing.try_clone().expect("dup the backing file");
        let data = data[..self.ctl.short(data.len() as u32) as usize].to_vec();
        later(stall, move || match backing.write_all_at(&data, offset) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e.into()),
        });
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        if self.ctl.gone.load(Ordering::SeqCst) {
            reply.error(Errno::ENOTCONN);
        } else if self.ctl.eio_fsync.load(Ordering::SeqCst) {
            reply.error(Errno::EIO);
        } else {
            reply.ok();
        }
    }

    /// No extended attributes (iomark looks for its mark).
    fn getxattr(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _name: &OsStr,
        _size: u32,
        reply: ReplyXattr,
    ) {
        reply.error(Errno::ENODATA);
    }
}

/// A mounted fault file system; unmounted (lazily if busy) and its backing file removed
/// on drop.
pub struct FaultFs {
    ctl: Arc<Controls>,
    dir: tempfile::TempDir,
    backing: PathBuf,
    session: Option<BackgroundSession>,
}

impl FaultFs {
    /// Mounts a file system serving one file of `size` bytes of a repeating pattern;
    /// `direct_io` opens it with FOPEN_DIRECT_IO. `None` (after `require`) without
    /// root, /dev/fuse or fusermount3.
    pub fn mount(size: u64, direct_io: bool) -> Option<FaultFs> {
        if !require("root (to mount FUSE)", is_root())
            || !require("/dev/fuse", Path::new("/dev/fuse").exists())
            || !require_tool("fusermount3", "fusermount3 (the fuse3 package)")
        {
            return None;
        }
        let backing = PathBuf::from(format!(
            "/dev/shm/iomark-faultfs-{}-{:x}.img",
            std::process::id(),
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&backing)
            .expect("create the backing file in /dev/shm");
        // Not zeros: a read that returned nothing would look like one that worked.
        let chunk: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 + 13) as u8).collect();
        let mut at = 0;
        while at < size {
            let n = chunk.len().min((size - at) as usize);
            file.write_all_at(&chunk[..n], at).unwrap();
            at += n as u64;
        }
        let ctl = Arc::new(Controls::default());
        let fs = Fs {
            backing: file,
            size,
            direct_io,
            ctl: Arc::clone(&ctl),
        };
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.mount_options = vec![
            MountOption::FSName("iomark-faultfs".into()),
            MountOption::RW,
        ];
        let session = match fuser::spawn_mount(fs, dir.path(), &config) {
            Ok(s) => s,
            Err(e) => {
                let _ = std::fs::remove_file(&backing);
                require(&format!("a FUSE mount (failed: {e})"), false);
                return None;
            }
        };
        Some(FaultFs {
            ctl,
            dir,
            backing,
            session: Some(session),
        })
    }

    /// The served file.
    pub fn file(&self) -> PathBuf {
        self.dir.path().join(FILE_NAME)
    }

    /// Data requests served or refused so far.
    pub fn requests(&self) -> u64 {
        self.ctl.requests.load(Ordering::SeqCst)
    }

    /// Fails `dir` requests with EIO from the `after`th data request on (counted from
    /// the mount), where they overlap `range`.
    pub fn fail(&self, dir: Dir, after: u64, range: std::ops::Range<u64>) {
        self.ctl.eio_lo.store(range.start, Ordering::SeqCst);
        self.ctl.eio_hi.store(range.end, Ordering::SeqCst);
        let from = match dir {
            Dir::Read => &self.ctl.eio_read_from,
            Dir::Write => &self.ctl.eio_write_from,
        };
        from.store(after, Ordering::SeqCst);
    }

    /// Holds the data requests numbered `requests` (counted from the mount) for `stall`
    /// each before serving them.
    pub fn stall(&self, requests: std::ops::Range<u64>, stall: Duration) {
        self.ctl
            .stall_ms
            .store(stall.as_millis() as u64, Ordering::SeqCst);
        self.ctl.stall_until.store(requests.end, Ordering::SeqCst);
        self.ctl.stall_from.store(requests.start, Ordering::SeqCst);
    }

    /// fsync fails with EIO (or works again).
    pub fn fail_fsync(&self, fail: bool) {
        self.ctl.eio_fsync.store(fail, Ordering::SeqCst);
    }

    /// Reads and writes move at most `max` bytes (0: all they are asked again).
    pub fn short_transfers(&self, max: u32) {
        self.ctl.short_max.store(max, Ordering::SeqCst);
    }

    /// The offset of the first request failed with EIO, if one was.
    pub fn failed_at(&self) -> Option<u64> {
        Some(self.ctl.failed_at.load(Ordering::SeqCst)).filter(|&o| o != OFF)
    }

    /// Holds (or lets go) every lookup of a name other than the file's.
    pub fn hold_lookups(&self, hold: bool) {
        self.ctl.hold_lookups.store(hold, Ordering::SeqCst);
    }

    /// The offset of the first stalled request, if one was.
    pub fn stalled_at(&self) -> Option<u64> {
        Some(self.ctl.stalled_at.load(Ordering::SeqCst)).filter(|&o| o != OFF)
    }

    /// The file system goes away under its users, as when its daemon dies: detached
    /// from the tree (lazy unmount) and its connection aborted through the FUSE control
    /// file system (mounted on /sys/fs/fuse/connections if it is not), after which the
    /// kernel itself fails every request with ENOTCONN. Where the control file system is
    /// missing, this file system gives the same answer itself. Returns whether the kernel
    /// aborted the connection.
    pub fn vanish(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        let dev = std::fs::metadata(self.dir.path()).unwrap().dev();
        // The kernel's own encoding of the device number names the connection.
        let conn = (libc::major(dev) << 20) | libc::minor(dev);
        self.ctl.gone.store(true, Ordering::SeqCst);
        let ok = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "lazy unmount of {} failed", self.dir.path().display());
        let ctl_dir = Path::new("/sys/fs/fuse/connections");
        if std::fs::read_dir(ctl_dir).is_ok_and(|mut d| d.next().is_none()) {
            let _ = Command::new("mount")
                .args(["-t", "fusectl", "fusectl"])
                .arg(ctl_dir)
                .status();
        }
        std::fs::write(ctl_dir.join(conn.to_string()).join("abort"), "1").is_ok()
    }

    fn mounted(&self) -> bool {
        let me = self.dir.path().to_string_lossy().into_owned();
        std::fs::read_to_string("/proc/self/mountinfo")
            .map(|m| m.lines().any(|l| l.split(' ').nth(4) == Some(me.as_str())))
            .unwrap_or(false)
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        // Let anything stalled through, then unmount: normally, else lazily.
        self.ctl.stall_from.store(OFF, Ordering::SeqCst);
        self.ctl.hold_lookups.store(false, Ordering::SeqCst);
        self.ctl.gone.store(true, Ordering::SeqCst);
        if self.mounted() {
            let ok = Command::new("umount")
                .arg(self.dir.path())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                let _ = Command::new("umount")
                    .arg("-l")
                    .arg(self.dir.path())
                    .status();
            }
        }
        // The session thread ends when the kernel tears the connection down; do not
        // wait for it (a file still open elsewhere keeps a lazily detached mount alive).
        drop(self.session.take());
        let _ = std::fs::remove_file(&self.backing);
    }
}

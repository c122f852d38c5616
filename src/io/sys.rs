//! The raw system interface: every `libc` call iomark makes that needs `unsafe` (system
//! calls, ioctls, extended attributes) lives here behind a small function that states its
//! contract. Callers get `io::Result`s and plain values; nothing here decides policy.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::Path;

pub(crate) use libc::{
    EACCES, EBUSY, EFBIG, EINTR, EINVAL, EIO, ELOOP, ENAMETOOLONG, ENOENT, ENOSPC, EOPNOTSUPP,
    EPERM, EROFS, O_DIRECT, O_EXCL, O_NOCTTY, O_NOFOLLOW, O_NONBLOCK,
};

const BLKSSZGET: libc::c_ulong = 0x1268;
const BLKROGET: libc::c_ulong = 0x125e;
const BLKFLSBUF: libc::c_ulong = 0x1261;
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
const BLKDISCARD: libc::c_ulong = 0x1277;

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Reads `len` bytes at `offset` into `buf`; returns the bytes read or a negative errno
/// (`EINTR` is retried).
///
/// # Safety
///
/// `buf..buf+len` must be valid for writes and not be read or written by anyone else
/// until the call returns.
pub(crate) unsafe fn pread(fd: BorrowedFd, buf: *mut u8, len: usize, offset: u64) -> i64 {
    retry(|| {
        // Safety: the caller guarantees that the buffer is valid for `len` bytes.
        unsafe { libc::pread(fd.as_raw_fd(), buf.cast(), len, offset as libc::off_t) }
    })
}

/// Writes `len` bytes from `buf` at `offset`; returns the bytes written or a negative
/// errno (`EINTR` is retried).
///
/// # Safety
///
/// `buf..buf+len` must be valid for reads and not be written by anyone else until the
/// call returns.
pub(crate) unsafe fn pwrite(fd: BorrowedFd, buf: *const u8, len: usize, offset: u64) -> i64 {
    retry(|| {
        // Safety: the caller guarantees that the buffer is valid for `len` bytes.
        unsafe { libc::pwrite(fd.as_raw_fd(), buf.cast(), len, offset as libc::off_t) }
    })
}

/// Reads into `buf` from `offset` until it is full, the file ends or a read fails
/// (`EINTR` is retried): the bytes read, and the error that stopped the reading, if one
/// did.
pub(crate) fn read_full_at(
    file: &std::fs::File,
    buf: &mut [u8],
    offset: u64,
) -> (usize, io::Result<()>) {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (done, Err(e)),
        }
    }
    (done, Ok(()))
}

/// Flushes the file's data and metadata; 0 or a negative errno.
pub(crate) fn fsync(fd: BorrowedFd) -> i64 {
    // Safety: fsync on a descriptor the borrow keeps open.
    retry(|| unsafe { libc::fsync(fd.as_raw_fd()) } as isize)
}

fn retry(mut f: impl FnMut() -> isize) -> i64 {
    loop {
        let r = f();
        if r >= 0 {
            return r as i64;
        }
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(EIO);
        if errno != EINTR {
            return -(errno as i64);
        }
    }
}

/// The logical block size of a block device (`BLKSSZGET`).
pub(crate) fn logical_block_size(fd: BorrowedFd) -> Option<u64> {
    let mut lbs: libc::c_int = 0;
    // Safety: BLKSSZGET writes one int into `lbs`, which we own.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), BLKSSZGET as _, &mut lbs) };
    (rc == 0 && lbs > 0).then_some(lbs as u64)
}

/// Bytes an unprivileged user may still write on the filesystem holding `path`
/// (`statvfs`: available blocks times the fragment size).
pub(crate) fn free_bytes(path: &Path) -> io::Result<u64> {
    let p = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: statvfs only writes the struct we own; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `st` outlives the call.
    check(unsafe { libc::statvfs(p.as_ptr(), &mut st) })?;
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Whether a block device is read-only (`BLKROGET`).
pub(crate) fn block_device_read_only(fd: BorrowedFd) -> io::Result<bool> {
    let mut ro: libc::c_int = 0;
    // SAFETY: BLKROGET writes one int into `ro`, which we own; the borrow keeps fd open.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), BLKROGET as _, &mut ro) })?;
    Ok(ro != 0)
}

/// The size of a block device in bytes (`BLKGETSIZE64`).
pub(crate) fn block_device_size(fd: BorrowedFd) -> io::Result<u64> {
    let mut size: u64 = 0;
    // Safety: BLKGETSIZE64 writes one u64 into `size`, which we own.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), BLKGETSIZE64 as _, &mut size) })?;
    Ok(size)
}

/// The direct-I/O alignment the kernel reports for an open file (statx `STATX_DIOALIGN`,
/// Linux 6.1+): the larger of the offset and memory alignments.
pub(crate) fn dio_alignment(fd: BorrowedFd) -> Option<u64> {
    // Safety: an all-zero statx is a valid value of this plain C struct.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // Safety: statx writes into the struct we own; the empty path with AT_EMPTY_PATH makes
    // the call describe the open descriptor.
    let rc = unsafe {
        libc::statx(
            fd.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    (rc == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0 && stx.stx_dio_offset_align > 0)
        .then(|| (stx.stx_dio_offset_align as u64).max(stx.stx_dio_mem_align as u64))
}

/// Switches an open descriptor to O_DIRECT.
pub(crate) fn set_direct(fd: BorrowedFd) -> io::Result<()> {
    set_status_flags(fd, libc::O_DIRECT, 0)
}

/// Sets the file status flags `set` and clears `clear` on an open descriptor (`F_SETFL`:
/// O_DIRECT, O_NONBLOCK, O_APPEND, O_NOATIME, O_ASYNC).
pub(crate) fn set_status_flags(fd: BorrowedFd, set: i32, clear: i32) -> io::Result<()> {
    // SAFETY: fcntl F_GETFL on a descriptor the borrow keeps open.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    check(flags)?;
    // SAFETY: fcntl F_SETFL with flags read just above.
    check(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, (flags | set) & !clear) })
}

/// Reserves `len` bytes for a file (`posix_fallocate`); a filesystem that cannot is not
/// an error.
pub(crate) fn reserve(fd: BorrowedFd, len: u64) -> io::Result<()> {
    // Safety: plain system call on a descriptor the borrow keeps open.
    let rc = unsafe { libc::posix_fallocate(fd.as_raw_fd(), 0, len as libc::off_t) };
    if rc != 0 && rc != EOPNOTSUPP {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Discards `len` bytes at `start` of a block device (`BLKDISCARD`).
pub(crate) fn discard(fd: BorrowedFd, start: u64, len: u64) -> io::Result<()> {
    let range: [u64; 2] = [start, len];
    // Safety: BLKDISCARD reads a [start, length] pair of u64 from the pointer.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), BLKDISCARD as _, range.as_ptr()) })
}

/// Punches a hole of `len` bytes at `start` in a file, keeping its size.
pub(crate) fn punch_hole(fd: BorrowedFd, start: u64, len: u64) -> io::Result<()> {
    // Safety: fallocate on a descriptor the borrow keeps open, with a byte range.
    check(unsafe {
        libc::fallocate(
            fd.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            start as libc::off_t,
            len as libc::off_t,
        )
    })
}

/// Drops a block device's buffer cache (`BLKFLSBUF`); best effort.
pub(crate) fn flush_device_cache(fd: BorrowedFd) {
    // Safety: BLKFLSBUF takes no argument memory.
    unsafe { libc::ioctl(fd.as_raw_fd(), BLKFLSBUF as _, 0) };
}

/// Writes a file's dirty pages and drops its cached pages in `start..start+len`; best
/// effort.
pub(crate) fn drop_file_cache(fd: BorrowedFd, start: u64, len: u64) {
    // Safety: plain system calls on a descriptor the borrow keeps open.
    unsafe {
        libc::fdatasync(fd.as_raw_fd());
        libc::posix_fadvise(
            fd.as_raw_fd(),
            start as libc::off_t,
            len as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        );
    }
}

/// Writes every dirty page of the system out (`sync`).
pub(crate) fn sync_all() {
    // Safety: sync has no preconditions.
    unsafe { libc::sync() };
}

/// Whether the process runs as root.
pub fn is_root() -> bool {
    // Safety: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The process's user and system CPU time so far, in seconds.
pub(crate) fn process_cpu() -> Option<(f64, f64)> {
    rusage(libc::RUSAGE_SELF)
}

/// The calling thread's user and system CPU time so far, in seconds
/// (`getrusage(RUSAGE_THREAD)`).
pub(crate) fn thread_cpu() -> Option<(f64, f64)> {
    rusage(libc::RUSAGE_THREAD)
}

fn rusage(who: libc::c_int) -> Option<(f64, f64)> {
    // Safety: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // Safety: getrusage only writes into the struct we hand it.
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return None;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some((tv(ru.ru_utime), tv(ru.ru_stime)))
}

/// Clock ticks per second of `/proc`'s CPU times (`sysconf(_SC_CLK_TCK)`, 100 on Linux).
pub(crate) fn clock_ticks() -> f64 {
    // Safety: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// The major and minor numbers of a device number.
pub(crate) fn major_minor(dev: u64) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

/// Whether the open file has the extended attribute `name` (`fgetxattr`).
pub(crate) fn has_xattr(fd: BorrowedFd, name: &str) -> bool {
    let Ok(n) = CString::new(name) else {
        return false;
    };
    // SAFETY: a NUL-terminated name; a null buffer with size 0 asks only for the
    // attribute's length; the borrow keeps the descriptor open.
    unsafe { libc::fgetxattr(fd.as_raw_fd(), n.as_ptr(), std::ptr::null_mut(), 0) >= 0 }
}

/// The value of the extended attribute `name` of the open file (at most 256 bytes).
pub(crate) fn get_xattr(fd: BorrowedFd, name: &str) -> Option<Vec<u8>> {
    let n = CString::new(name).ok()?;
    let mut buf = [0u8; 256];
    // SAFETY: a NUL-terminated name and a buffer of the given length that we own; the
    // borrow keeps the descriptor open.
    let got = unsafe {
        libc::fgetxattr(
            fd.as_raw_fd(),
            n.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    (got >= 0).then(|| buf[..got as usize].to_vec())
}

/// The start time of process `pid` (clock ticks since boot, `/proc/PID/stat` field 22)
/// and this boot's id: together they name one process, even if its pid is reused later.
pub(crate) fn process_identity(pid: u32) -> Option<(u64, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: count fields after its closing paren.
    let rest = &stat[stat.rfind(')')? + 1..];
    let start = rest.split_whitespace().nth(19)?.parse().ok()?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some((start, boot.trim().to_string()))
}

/// Sets the extended attribute `name` of the open file to `value` (`fsetxattr`); best
/// effort (a filesystem without user xattrs refuses).
pub(crate) fn set_xattr(fd: BorrowedFd, name: &str, value: &[u8]) {
    let Ok(n) = CString::new(name) else {
        return;
    };
    // SAFETY: a NUL-terminated name and a valid value buffer of the given length; the
    // borrow keeps the descriptor open.
    unsafe {
        libc::fsetxattr(
            fd.as_raw_fd(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        );
    }
}

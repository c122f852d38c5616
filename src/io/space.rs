//! A file's space: reserving it, punching holes in it, discarding a device's ranges, and
//! finding which bytes of a span hold data (holes and unwritten extents read as zeros
//! without the device). Raw calls like those of `sys.rs`, each behind a small function.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

use crate::io::sys::{EOPNOTSUPP, check};

const BLKDISCARD: libc::c_ulong = 0x1277;

/// `f_type` of a btrfs file system (`statfs`).
const BTRFS_SUPER_MAGIC: i64 = 0x9123_683E;

/// Whether the open file lives on btrfs.
pub(crate) fn on_btrfs(fd: BorrowedFd) -> bool {
    // SAFETY: fstatfs only writes the struct we own; the borrow keeps the descriptor open.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) };
    rc == 0 && st.f_type as i64 == BTRFS_SUPER_MAGIC
}

/// Reserves `len` bytes for a file (`posix_fallocate`); a filesystem that cannot is not
/// an error. Nothing is reserved on btrfs: it writes a preallocated extent in place, once,
/// without compression and without copy-on-write, so a file laid out or allocated there
/// would be stored as no later write of the same file is (a `compress-force=zstd` mount
/// kept `--compress 50` data at its full size). The file stays sparse until written.
pub(crate) fn reserve(fd: BorrowedFd, len: u64) -> io::Result<()> {
    if on_btrfs(fd) {
        return Ok(());
    }
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

/// Trims `len` bytes at `start`: BLKDISCARD on a block device, a punched hole (the size
/// kept) in a file. The errno on failure.
pub(crate) fn trim(fd: BorrowedFd, device: bool, start: u64, len: u64) -> io::Result<()> {
    if device {
        discard(fd, start, len)
    } else {
        punch_hole(fd, start, len)
    }
}

/// Bytes of `start..start+len` the filesystem says hold no data: holes, and (ext4, XFS,
/// btrfs) unwritten extents, which `SEEK_DATA` skips as holes too. Reads there are
/// answered with zeros without the device. At most `max_steps` data extents are walked:
/// the second value is false when the walk stopped early (the count is then a lower
/// bound). `None` when the filesystem cannot say (`SEEK_DATA` unsupported).
pub(crate) fn holes(fd: BorrowedFd, start: u64, len: u64, max_steps: u32) -> Option<(u64, bool)> {
    let seek = |at: u64, whence: libc::c_int| -> io::Result<u64> {
        // Safety: lseek on a descriptor the borrow keeps open; it moves only the file
        // offset, which iomark's I/O never uses (every transfer is positional).
        let r = unsafe { libc::lseek(fd.as_raw_fd(), at as libc::off_t, whence) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as u64)
        }
    };
    let end = start.saturating_add(len);
    let (mut at, mut hole) = (start, 0u64);
    for _ in 0..max_steps {
        if at >= end {
            return Some((hole, true));
        }
        let data = match seek(at, libc::SEEK_DATA) {
            Ok(d) => d,
            // No data from `at` to the end of the file.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => end,
            Err(_) => return None,
        };
        hole += data.min(end) - at;
        if data >= end {
            return Some((hole, true));
        }
        at = seek(data, libc::SEEK_HOLE).ok()?;
    }
    Some((hole, at >= end))
}

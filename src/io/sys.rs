//! The raw system interface: every `libc` call iomark makes that needs `unsafe` (system
//! calls, ioctls, extended attributes) lives here (native AIO's in `sys_aio`) behind a small function that states its
//! contract. Callers get `io::Result`s and plain values; nothing here decides policy.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::Path;

pub(crate) use libc::{
    EACCES, EAGAIN, EBUSY, EFBIG, EINTR, EINVAL, EIO, ELOOP, ENAMETOOLONG, ENOENT, ENOSPC,
    EOPNOTSUPP, EPERM, EROFS, O_DIRECT, O_DSYNC, O_EXCL, O_NOATIME, O_NOCTTY, O_NOFOLLOW,
    O_NONBLOCK, O_SYNC,
};

pub(crate) use crate::io::sys_aio::*;

const BLKSSZGET: libc::c_ulong = 0x1268;
const BLKROGET: libc::c_ulong = 0x125e;
const BLKFLSBUF: libc::c_ulong = 0x1261;
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

pub(crate) fn check(rc: libc::c_int) -> io::Result<()> {
    (rc >= 0).then_some(()).ok_or_else(io::Error::last_os_error)
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

/// Whether this process may make a file in `dir` (`access(W_OK | X_OK)`): `EROFS` on a
/// read-only filesystem, `EACCES` without permission (root is refused only the former).
pub(crate) fn may_create_in(dir: &Path) -> io::Result<()> {
    let p = CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: access reads the NUL-terminated path only.
    check(unsafe { libc::access(p.as_ptr(), libc::W_OK | libc::X_OK) }).map(|_| ())
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

/// Whether the descriptor is a block device (`fstat`).
pub(crate) fn is_block_device(fd: BorrowedFd) -> bool {
    let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
    // Safety: fstat writes one `struct stat` to the pointer, on a descriptor the borrow
    // keeps open.
    let rc = unsafe { libc::fstat(fd.as_raw_fd(), st.as_mut_ptr()) };
    // Safety: zero-initialised, and filled in by fstat when it succeeded.
    let st = unsafe { st.assume_init() };
    rc == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFBLK
}

/// Drops a block device's buffer cache (`BLKFLSBUF`); best effort.
pub(crate) fn flush_device_cache(fd: BorrowedFd) {
    // Safety: BLKFLSBUF takes no argument memory.
    unsafe { libc::ioctl(fd.as_raw_fd(), BLKFLSBUF as _, 0) };
}

/// Drops a file's cached pages in `start..start+len`, after writing its dirty pages out
/// when `sync` (without, dirty pages are only queued for writeback and stay, as with
/// fio's invalidation); best effort.
pub(crate) fn drop_file_cache(fd: BorrowedFd, start: u64, len: u64, sync: bool) {
    // Safety: plain system calls on a descriptor the borrow keeps open.
    unsafe {
        if sync {
            libc::fdatasync(fd.as_raw_fd());
        }
        libc::posix_fadvise(
            fd.as_raw_fd(),
            start as libc::off_t,
            len as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        );
    }
}

/// Advises the kernel that `start..start+len` of the file is read at random
/// (`POSIX_FADV_RANDOM`: no readahead) or sequentially (`POSIX_FADV_SEQUENTIAL`: a
/// larger readahead window). The advice holds for the open file description, so every
/// worker using this descriptor gets it.
pub(crate) fn fadvise(fd: BorrowedFd, start: u64, len: u64, random: bool) -> io::Result<()> {
    let advice = match random {
        true => libc::POSIX_FADV_RANDOM,
        false => libc::POSIX_FADV_SEQUENTIAL,
    };
    // SAFETY: posix_fadvise takes no memory; the borrow keeps the descriptor open.
    let rc = unsafe {
        libc::posix_fadvise(
            fd.as_raw_fd(),
            start as libc::off_t,
            len as libc::off_t,
            advice,
        )
    };
    match rc {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// Writes every dirty page of the system out (`sync`).
pub(crate) fn sync_all() {
    // Safety: sync has no preconditions.
    unsafe { libc::sync() };
}

/// Lets this thread's sleeps end when asked (timer slack 1 ns instead of 50 µs).
pub(crate) fn precise_sleeps() {
    // Safety: PR_SET_TIMERSLACK takes a number and touches no memory of ours.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
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

/// The calling thread's id (`gettid`): the number the names of its io_uring kernel
/// threads end in.
pub(crate) fn thread_id() -> u32 {
    // Safety: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() as u32 }
}

/// Clock ticks per second of `/proc`'s CPU times (`sysconf(_SC_CLK_TCK)`, 100 on Linux).
pub(crate) fn clock_ticks() -> f64 {
    // Safety: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// `BTRFS_IOC_FS_INFO`: `_IOR(0x94, 31, struct btrfs_ioctl_fs_info_args)`, 1 KiB.
const BTRFS_IOC_FS_INFO: libc::c_ulong = 0x8400_941F;

/// The btrfs holding an open file: its fsid (the name of its `/sys/fs/btrfs` directory)
/// and its count of devices; `None` on any other file system.
pub(crate) fn btrfs_fs_info(fd: BorrowedFd) -> Option<(String, u64)> {
    // The kernel's struct: max_id u64, num_devices u64, fsid [u8; 16], then fields this
    // does not read, 1024 bytes in all.
    let mut args = [0u64; 128];
    // SAFETY: the ioctl writes at most its 1024-byte struct into the buffer we own (128
    // u64s, 8-byte aligned as the struct's u64 fields need); the borrow keeps the
    // descriptor open. Other file systems answer ENOTTY without writing.
    if unsafe { libc::ioctl(fd.as_raw_fd(), BTRFS_IOC_FS_INFO as _, args.as_mut_ptr()) } != 0 {
        return None;
    }
    let mut fsid = [0u8; 16];
    fsid[..8].copy_from_slice(&args[2].to_ne_bytes());
    fsid[8..].copy_from_slice(&args[3].to_ne_bytes());
    let hex: String = fsid.iter().map(|b| format!("{b:02x}")).collect();
    let uuid = format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    );
    Some((uuid, args[1]))
}

/// The soft `RLIMIT_AS` (bytes of address space), `None` when unlimited.
pub(crate) fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    Some(r.rlim_cur)
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

/// A shared mapping of `len` bytes of the file at `offset` (page-aligned), readable and,
/// when `write`, writable; `random` says how the kernel should read ahead (`madvise`:
/// `Some(true)` random, `Some(false)` sequential, `None` no advice).
pub(crate) fn map_shared(
    fd: BorrowedFd,
    offset: u64,
    len: usize,
    write: bool,
    random: Option<bool>,
) -> io::Result<*mut u8> {
    let prot = libc::PROT_READ | if write { libc::PROT_WRITE } else { 0 };
    // SAFETY: a new mapping chosen by the kernel (no address given), of a descriptor the
    // borrow keeps open; nothing is dereferenced here.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            prot,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            offset as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    if let Some(random) = random {
        let advice = match random {
            true => libc::MADV_RANDOM,
            false => libc::MADV_SEQUENTIAL,
        };
        // SAFETY: advice on the mapping just made; it changes no memory.
        unsafe { libc::madvise(p, len, advice) };
    }
    Ok(p.cast())
}

/// Writes a mapping's dirty pages to the file and waits (`msync(MS_SYNC)`); 0 or a
/// negative errno.
///
/// # Safety
///
/// `addr..addr+len` must be a mapping made by [`map_shared`] and not yet unmapped.
pub(crate) unsafe fn msync(addr: *mut u8, len: usize) -> i64 {
    // SAFETY: the caller guarantees the mapping.
    retry(|| unsafe { libc::msync(addr.cast(), len, libc::MS_SYNC) } as isize)
}

/// Removes a mapping made by [`map_shared`].
///
/// # Safety
///
/// Nothing may use `addr..addr+len` afterwards.
pub(crate) unsafe fn unmap(addr: *mut u8, len: usize) {
    // SAFETY: the caller guarantees that the mapping is no longer used.
    unsafe { libc::munmap(addr.cast(), len) };
}

/// Asks for `addr..addr+len` (memory this process owns, filled and not yet in use by
/// the kernel) to be backed by 2 MiB pages: `MADV_HUGEPAGE`, then `MADV_COLLAPSE` to
/// merge the pages already there. Advice only: a kernel without transparent huge pages,
/// or short of them, leaves the memory as it is. Only the whole 2 MiB pages inside the
/// range are advised.
pub(crate) fn back_with_huge_pages(addr: *const u8, len: usize) {
    const HUGE: usize = 2 << 20;
    let start = (addr as usize).next_multiple_of(HUGE);
    let end = (addr as usize + len) / HUGE * HUGE;
    if end <= start {
        return;
    }
    let p = start as *mut libc::c_void;
    // SAFETY: the range lies inside memory the caller owns; both advices keep its
    // contents (a collapse copies the small pages into a huge one), and the caller has
    // no I/O in flight on it.
    unsafe {
        libc::madvise(p, end - start, libc::MADV_HUGEPAGE);
        libc::madvise(p, end - start, libc::MADV_COLLAPSE);
    }
}

/// The size of a memory page.
pub(crate) fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as u64 } else { 4096 }
}

/// The calling thread's scheduling policy when it is neither `SCHED_OTHER` nor
/// `SCHED_BATCH` (a process started with `chrt`): its name, for a note that the job
/// threads keep it. `None` for those two.
pub(crate) fn other_policy() -> Option<&'static str> {
    // SAFETY: no pointers; pid 0 is the calling thread.
    let p = unsafe { libc::sched_getscheduler(0) };
    match p {
        libc::SCHED_OTHER | libc::SCHED_BATCH => None,
        libc::SCHED_IDLE => Some("SCHED_IDLE"),
        libc::SCHED_FIFO => Some("SCHED_FIFO"),
        libc::SCHED_RR => Some("SCHED_RR"),
        _ => Some("a policy other than SCHED_OTHER"),
    }
}

/// Makes the calling thread `SCHED_BATCH` (`--sched-policy batch`) when it runs
/// `SCHED_OTHER` (any thread may; its nice value stays); a thread under another policy
/// keeps it. The kernel threads it makes afterwards (io_uring's io-wq workers) inherit
/// the policy.
pub(crate) fn batch_thread() -> io::Result<()> {
    // SAFETY: no pointers; pid 0 is the calling thread.
    if unsafe { libc::sched_getscheduler(0) } != libc::SCHED_OTHER {
        return Ok(());
    }
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` lives across the call; pid 0 is the calling thread.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) })
}

/// Pins the calling thread to a set of CPUs (`sched_setaffinity`).
pub(crate) fn pin_thread(cpus: &[u32]) -> io::Result<()> {
    if cpus.is_empty()
        || cpus
            .iter()
            .any(|&c| c as usize >= libc::CPU_SETSIZE as usize)
    {
        return Err(io::Error::from_raw_os_error(EINVAL));
    }
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: `cpu` is below CPU_SETSIZE (checked above), so the bit lies in `set`.
        unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    }
    // SAFETY: the set we own, its true size; pid 0 is the calling thread.
    check(unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) })
}

/// The CPUs a thread of this process may be pinned to, in order: the online CPUs its
/// cpuset allows (cgroup v2's `cpuset.cpus.effective`, v1's `cpuset.effective_cpus`),
/// else the online CPUs, else the process's affinity. Not the affinity alone: a process
/// started under `taskset -c 0` may still pin a thread to CPU 1, as fio does (iomark
/// refused `--cpus 1` there).
pub(crate) fn allowed_cpus() -> Option<Vec<u32>> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let parse = |t: String| crate::plan::engine::parse_cpus(t.trim()).ok();
    let online = read("/sys/devices/system/cpu/online").and_then(parse);
    let cgroups = read("/proc/self/cgroup").unwrap_or_default();
    let cpuset = cgroups.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        let file = match ctrl {
            "" => format!("/sys/fs/cgroup{path}/cpuset.cpus.effective"),
            c if c.split(',').any(|c| c == "cpuset") => {
                format!("/sys/fs/cgroup/cpuset{path}/cpuset.effective_cpus")
            }
            _ => return None,
        };
        read(&file).filter(|t| !t.trim().is_empty()).and_then(parse)
    });
    match (online, cpuset) {
        (Some(on), Some(set)) => Some(on.into_iter().filter(|c| set.contains(c)).collect()),
        (Some(on), None) => Some(on),
        _ => affinity_cpus(),
    }
}

/// The CPUs the calling thread may run on now (`sched_getaffinity`), in order.
fn affinity_cpus() -> Option<Vec<u32>> {
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the kernel writes the set we own, of its true size; pid 0 is this thread.
    check(unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) })
        .ok()?;
    let all = 0..libc::CPU_SETSIZE as usize;
    // SAFETY: every index is below CPU_SETSIZE, so each bit lies in `set`.
    Some(
        all.filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .map(|c| c as u32)
            .collect(),
    )
}

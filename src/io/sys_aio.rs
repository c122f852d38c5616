//! Linux native AIO (`io_setup`, `io_submit`, `io_getevents`, `io_destroy`): the
//! system calls and their structures, as `<linux/aio_abi.h>` has them, for the libaio
//! engine. Part of the raw system interface (`sys`, which re-exports it).

use std::io;

use crate::io::sys::check;

/// A Linux native AIO context (`aio_context_t`), as `io_setup` returns it.
pub(crate) type AioContext = libc::c_ulong;

/// `struct iocb` of `<linux/aio_abi.h>`: one request for `io_submit`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Iocb {
    pub data: u64,
    #[cfg(target_endian = "little")]
    pub key: u32,
    pub rw_flags: i32,
    #[cfg(target_endian = "big")]
    pub key: u32,
    pub opcode: u16,
    pub reqprio: i16,
    pub fildes: u32,
    pub buf: u64,
    pub nbytes: u64,
    pub offset: i64,
    pub reserved2: u64,
    pub flags: u32,
    pub resfd: u32,
}

/// `struct io_event`: one completion from `io_getevents`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct IoEvent {
    pub data: u64,
    pub obj: u64,
    pub res: i64,
    pub res2: i64,
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64 && std::mem::size_of::<IoEvent>() == 32);

pub(crate) const IOCB_CMD_PREAD: u16 = 0;
pub(crate) const IOCB_CMD_PWRITE: u16 = 1;

/// Creates an AIO context for `nr` requests in flight (`io_setup`).
pub(crate) fn io_setup(nr: u32) -> io::Result<AioContext> {
    let mut ctx: AioContext = 0;
    // SAFETY: io_setup writes the new context into `ctx`, which we own and which must be
    // zero on entry.
    let rc = unsafe { libc::syscall(libc::SYS_io_setup, nr as libc::c_long, &mut ctx) };
    check(rc as libc::c_int).map(|()| ctx)
}

/// Destroys an AIO context (`io_destroy`); the kernel waits for what is in flight.
pub(crate) fn io_destroy(ctx: AioContext) {
    // SAFETY: a context from io_setup, destroyed once by its owner.
    unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
}

/// Submits the requests `iocbs` points at (`io_submit`): how many the kernel took, which
/// may be fewer than given.
///
/// # Safety
///
/// Every pointer must point at a valid `Iocb` whose buffer stays valid, and is not used
/// by anyone else, until its completion has been read with [`io_getevents`]; the file
/// descriptor must stay open as long.
pub(crate) unsafe fn io_submit(ctx: AioContext, iocbs: &mut [*mut Iocb]) -> io::Result<usize> {
    // SAFETY: the caller guarantees the requests; the pointer array is ours for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_io_submit,
            ctx,
            iocbs.len() as libc::c_long,
            iocbs.as_mut_ptr(),
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}

/// Waits until at least `min` completions are available and reads up to `events.len()`
/// of them (`io_getevents`, no timeout): how many were read. A signal gives
/// `ErrorKind::Interrupted`.
pub(crate) fn io_getevents(
    ctx: AioContext,
    min: usize,
    events: &mut [IoEvent],
) -> io::Result<usize> {
    // SAFETY: the kernel writes at most `events.len()` events into the slice we own; a
    // null timeout means wait.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_io_getevents,
            ctx,
            min as libc::c_long,
            events.len() as libc::c_long,
            events.as_mut_ptr(),
            std::ptr::null_mut::<libc::timespec>(),
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}

/// `struct aio_ring`'s header, as `fs/aio.c` lays it out at the start of a context's
/// completion ring (the context's number is the ring's address in this process).
const AIO_RING_MAGIC: u32 = 0xa10a10a1;
/// The header's length, in 32-bit words: the events follow it.
const AIO_RING_HEADER_WORDS: usize = 8;

/// A context's completion ring, read in this process's own memory: the kernel writes
/// each completion there and moves the tail; whoever reads events moves the head, the
/// kernel itself (under its lock) in `io_getevents`, or we here (libaio's
/// `user_space_io_getevents`, fio's `userspace_reap`). Reading it takes no system call.
pub(crate) struct AioRing {
    base: *mut u32,
    nr: u32,
}

impl AioRing {
    /// The ring of `ctx`, if it has the layout this code reads (the magic number, no
    /// incompatible feature, the header's length): else `None`, and the events are read
    /// with `io_getevents` alone.
    ///
    /// # Safety
    ///
    /// `ctx` must be a live context from [`io_setup`], and the ring used only while it
    /// lives (before `io_destroy`), from one thread, never while that thread is in
    /// `io_getevents` on the same context.
    pub(crate) unsafe fn of(ctx: AioContext) -> Option<AioRing> {
        let base = ctx as *mut u32;
        if base.is_null() || !(base as usize).is_multiple_of(4096) {
            return None;
        }
        // SAFETY: the kernel maps the ring at the context's address, readable and
        // writable, at least a page long: the 8 header words lie in it.
        let word = |i: usize| unsafe { std::ptr::read_volatile(base.add(i)) };
        let (nr, magic, incompat, header) = (word(1), word(4), word(6), word(7));
        let ok = magic == AIO_RING_MAGIC
            && incompat == 0
            && header as usize == AIO_RING_HEADER_WORDS * 4
            && nr > 0;
        ok.then_some(AioRing { base, nr })
    }

    fn word(&self, i: usize) -> &std::sync::atomic::AtomicU32 {
        // SAFETY: `i` is a header word (2: head, 3: tail) of the live mapping (see `of`),
        // 4-byte aligned; the kernel updates it concurrently, so only atomically.
        unsafe { std::sync::atomic::AtomicU32::from_ptr(self.base.add(i)) }
    }

    /// Whether a completion waits in the ring.
    #[inline]
    pub(crate) fn ready(&self) -> bool {
        use std::sync::atomic::Ordering;
        self.word(2).load(Ordering::Relaxed) != self.word(3).load(Ordering::Acquire)
    }

    /// Hands every completion in the ring to `f`, oldest first, and frees their places:
    /// how many.
    pub(crate) fn take(&self, mut f: impl FnMut(&IoEvent)) -> usize {
        use std::sync::atomic::Ordering;
        let head = self.word(2).load(Ordering::Relaxed);
        // Acquire: the events up to the tail were written before the kernel moved it.
        let tail = self.word(3).load(Ordering::Acquire);
        if head >= self.nr || tail >= self.nr {
            return 0; // not a ring as we know it: io_getevents reads it
        }
        let events = self
            .base
            .wrapping_add(AIO_RING_HEADER_WORDS)
            .cast::<IoEvent>();
        let mut h = head;
        while h != tail {
            // SAFETY: `h` < `nr`: an event of the ring, which the kernel wrote before
            // moving the tail past it and does not overwrite before the head moves on.
            f(&unsafe { std::ptr::read_volatile(events.add(h as usize)) });
            h = if h + 1 == self.nr { 0 } else { h + 1 };
        }
        // Release: the events were read before their places are given back.
        self.word(2).store(tail, Ordering::Release);
        ((tail + self.nr - head) % self.nr) as usize
    }
}

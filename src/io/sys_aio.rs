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

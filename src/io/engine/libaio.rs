//! The libaio engine: Linux native AIO through the `io_submit`/`io_getevents` system
//! calls themselves (no libaio library). Requests are queued as `iocb`s, one per slot,
//! handed to the kernel `batch_submit` at a time, and `submit` waits in `io_getevents`
//! for at least `batch_complete` completions (never more than are in flight).
//!
//! An fsync is done synchronously with `fsync(2)` (as fio's libaio does).
//!
//! Native AIO is asynchronous only with O_DIRECT: on a buffered descriptor `io_submit`
//! does the I/O before it returns, exactly as fio's libaio does then.

use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, BorrowedFd};

use super::{BufferPool, Completion, Engine, Op, Queued, Request};
use crate::io::sys::{self, AioContext, IoEvent, Iocb};

pub(crate) struct LibaioEngine<'fd> {
    ctx: AioContext,
    /// The files a request may name (`Request::file`); one unless the worker serves
    /// several.
    fds: Vec<BorrowedFd<'fd>>,
    // Dropped by hand in `Drop`, after every request in flight has completed.
    pool: ManuallyDrop<BufferPool>,
    /// One request block per slot: the kernel reads it during `io_submit`.
    iocbs: Box<[Iocb]>,
    /// Requests queued and not yet handed to the kernel (pointers into `iocbs`).
    queued: Vec<*mut Iocb>,
    events: Box<[IoEvent]>,
    done: Vec<Completion>,
    /// Requests the kernel holds (submitted, completion not yet read).
    in_kernel: usize,
    batch_submit: usize,
    batch_complete: usize,
}

impl<'fd> LibaioEngine<'fd> {
    /// An AIO context for `qd` requests on `fd`, submitting `batch_submit` at a time and
    /// waiting for `batch_complete` completions at a time.
    pub(crate) fn new(
        fd: BorrowedFd<'fd>,
        pool: BufferPool,
        qd: usize,
        batch_submit: usize,
        batch_complete: usize,
    ) -> io::Result<LibaioEngine<'fd>> {
        let slots = pool.slots().max(qd.max(1));
        let ctx = sys::io_setup(slots as u32)?;
        Ok(LibaioEngine {
            ctx,
            fds: vec![fd],
            pool: ManuallyDrop::new(pool),
            iocbs: vec![Iocb::default(); slots].into_boxed_slice(),
            queued: Vec::with_capacity(slots),
            events: vec![IoEvent::default(); slots].into_boxed_slice(),
            done: Vec::with_capacity(slots),
            in_kernel: 0,
            batch_submit: batch_submit.max(1),
            batch_complete: batch_complete.max(1),
        })
    }

    /// The engine serving every file of `fds` (`Request::file` indexes them); none
    /// keeps the one given to `new`.
    pub(crate) fn with_files(mut self, fds: &[BorrowedFd<'fd>]) -> Self {
        if !fds.is_empty() {
            self.fds = fds.to_vec();
        }
        self
    }

    /// Hands every queued request to the kernel. A request the kernel refuses outright
    /// (the first of the rest, when `io_submit` fails) completes with that error.
    fn flush(&mut self) -> io::Result<()> {
        let mut taken = 0;
        while taken < self.queued.len() {
            // SAFETY: each pointer points into `self.iocbs`, which is never reallocated;
            // its buffer lies in the pool, which outlives every request (see `Drop`), or in
            // the units lent for a write (`Request::ext`, kept unchanged until the
            // completion is reaped); the worker leaves a slot alone until its completion
            // is reaped; every fd is borrowed
            // for the engine's life.
            match unsafe { sys::io_submit(self.ctx, &mut self.queued[taken..]) } {
                Ok(n) => {
                    taken += n;
                    self.in_kernel += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Out of request resources with some in flight: wait for completions.
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) && self.in_kernel > 0 => {
                    self.queued.drain(..taken);
                    return self.wait(1);
                }
                Err(e) => {
                    // SAFETY: the pointer points into `self.iocbs` (see above); the kernel
                    // refused it, so no one else uses it.
                    let slot = unsafe { (*self.queued[taken]).data } as u32;
                    self.done.push(Completion {
                        slot,
                        result: -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                    });
                    taken += 1;
                }
            }
        }
        self.queued.clear();
        Ok(())
    }

    /// Waits for at least `min` completions (at most those in flight) and keeps them.
    fn wait(&mut self, min: usize) -> io::Result<()> {
        let min = min.min(self.in_kernel);
        if self.in_kernel == 0 {
            return Ok(());
        }
        let n = sys::io_getevents(self.ctx, min, &mut self.events)?;
        self.in_kernel -= n;
        for ev in &self.events[..n] {
            self.done.push(Completion {
                slot: ev.data as u32,
                result: ev.res,
            });
        }
        Ok(())
    }
}

impl Engine for LibaioEngine<'_> {
    #[inline]
    fn queue(&mut self, req: Request) -> io::Result<Queued> {
        if req.op == Op::Fsync {
            // Done synchronously, as fio's libaio does: not every filesystem takes
            // IOCB_CMD_FSYNC (tmpfs refuses it with EINVAL), and the worker issues a
            // flush only when nothing else is in flight.
            self.done.push(Completion {
                slot: req.slot,
                result: sys::fsync(self.fds[req.file as usize]),
            });
            return Ok(Queued::Queued);
        }
        let ptr = req.addr(&self.pool);
        let opcode = match req.op {
            Op::Read => sys::IOCB_CMD_PREAD,
            _ => sys::IOCB_CMD_PWRITE,
        };
        let iocb = &mut self.iocbs[req.slot as usize];
        *iocb = Iocb {
            data: req.slot as u64,
            opcode,
            fildes: self.fds[req.file as usize].as_raw_fd() as u32,
            buf: ptr as u64,
            nbytes: req.len as u64,
            offset: req.offset as i64,
            ..Iocb::default()
        };
        self.queued.push(iocb);
        Ok(Queued::Queued)
    }

    fn submit(&mut self, wait_for: usize) -> io::Result<()> {
        if !self.queued.is_empty() && (wait_for > 0 || self.queued.len() >= self.batch_submit) {
            self.flush()?;
        }
        let want = wait_for.saturating_sub(self.done.len());
        if want > 0 {
            self.wait(want.max(self.batch_complete))?;
        }
        Ok(())
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.done);
    }

    unsafe fn buffer(&mut self, slot: u32) -> &mut [u8] {
        // SAFETY: the caller guarantees that no request on `slot` is in flight.
        unsafe { self.pool.slot_mut(slot) }
    }
}

impl Drop for LibaioEngine<'_> {
    fn drop(&mut self) {
        // Requests queued but never submitted are simply dropped; wait for every request
        // the kernel holds, since it may write into the buffers until it completes.
        self.queued.clear();
        let mut failures = 0;
        while self.in_kernel > 0 && failures < 1000 {
            match self.wait(1) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => failures += 1,
            }
        }
        // io_destroy itself waits for (or cancels) whatever is still in flight.
        sys::io_destroy(self.ctx);
        if self.in_kernel == 0 {
            // SAFETY: dropped once, here; nothing is in flight any more.
            unsafe { ManuallyDrop::drop(&mut self.pool) };
        }
        // Otherwise the buffers are leaked on purpose, as in the io_uring engine.
    }
}

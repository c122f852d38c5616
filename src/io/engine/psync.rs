//! The psync engine: `pread`/`pwrite`, one I/O at a time. Each request is carried out
//! synchronously in `submit`; the reference engine, and the one that works everywhere.

use std::os::fd::BorrowedFd;

use super::{BufferPool, Completion, Op, Request, Synchronous};
use crate::io::sys;

pub(crate) struct PsyncEngine<'fd> {
    fd: BorrowedFd<'fd>,
    pool: BufferPool,
    queued: Vec<Request>,
    done: Vec<Completion>,
}

impl<'fd> PsyncEngine<'fd> {
    /// An engine on `fd`; the borrow keeps the file open for the engine's life.
    pub(crate) fn new(fd: BorrowedFd<'fd>, pool: BufferPool, qd: usize) -> PsyncEngine<'fd> {
        PsyncEngine {
            fd,
            pool,
            queued: Vec::with_capacity(qd.max(1)),
            done: Vec::with_capacity(qd.max(1)),
        }
    }
}

impl Synchronous for PsyncEngine<'_> {
    fn execute(&mut self, req: Request) -> i64 {
        let ptr = req.addr(&self.pool);
        // Safety: `ptr..ptr+len` lies inside the slot's buffer (the worker never asks for
        // more than the slot holds, `buf_off + len <= slot_len`) or inside the units the
        // worker lent for this write (`Request::ext`, kept alive until the completion), the
        // pool outlives this call, and the request is synchronous: nothing else touches
        // the memory meanwhile.
        unsafe {
            match req.op {
                Op::Read => sys::pread(self.fd, ptr, req.len as usize, req.offset),
                Op::Write => sys::pwrite(self.fd, ptr, req.len as usize, req.offset),
                Op::Fsync => sys::fsync(self.fd),
            }
        }
    }

    #[inline]
    fn batch(&mut self) -> (&mut Vec<Request>, &mut Vec<Completion>) {
        (&mut self.queued, &mut self.done)
    }

    #[inline]
    fn pool(&mut self) -> &mut BufferPool {
        &mut self.pool
    }
}

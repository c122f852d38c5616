//! The psync engine: `pread`/`pwrite`, one I/O at a time. Each request is carried out
//! synchronously in `submit`; the reference engine, and the one that works everywhere.

use std::os::fd::BorrowedFd;

use super::{BufferPool, Completion, Op, Request, Synchronous};
use crate::io::sys;

pub(crate) struct PsyncEngine<'fd> {
    /// The files a request may name (`Request::file`); one unless the worker serves
    /// several.
    fds: Vec<BorrowedFd<'fd>>,
    pool: BufferPool,
    queued: Vec<Request>,
    done: Vec<Completion>,
}

impl<'fd> PsyncEngine<'fd> {
    /// An engine on `fd`; the borrow keeps the file open for the engine's life.
    pub(crate) fn new(fd: BorrowedFd<'fd>, pool: BufferPool, qd: usize) -> PsyncEngine<'fd> {
        PsyncEngine {
            fds: vec![fd],
            pool,
            queued: Vec::with_capacity(qd.max(1)),
            done: Vec::with_capacity(qd.max(1)),
        }
    }

    /// The engine serving every file of `fds` (`Request::file` indexes them); none
    /// keeps the one given to `new`.
    pub(crate) fn with_files(mut self, fds: &[BorrowedFd<'fd>]) -> Self {
        if !fds.is_empty() {
            self.fds = fds.to_vec();
        }
        self
    }
}

impl Synchronous for PsyncEngine<'_> {
    fn execute(&mut self, req: Request) -> i64 {
        let ptr = req.addr(&self.pool);
        let fd = self.fds[req.file as usize];
        // Safety: `ptr..ptr+len` lies inside the slot's buffer (the worker never asks for
        // more than the slot holds, `buf_off + len <= slot_len`) or inside the units the
        // worker lent for this write (`Request::ext`, kept alive until the completion), the
        // pool outlives this call, and the request is synchronous: nothing else touches
        // the memory meanwhile.
        unsafe {
            match req.op {
                Op::Read => sys::pread(fd, ptr, req.len as usize, req.offset),
                Op::Write => sys::pwrite(fd, ptr, req.len as usize, req.offset),
                Op::Fsync => sys::fsync(fd),
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

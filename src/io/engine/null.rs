//! The null engine: every request completes at once with its full length, and nothing
//! reaches the kernel. Running a workload on it measures iomark's own cost per I/O.

use std::io;

use super::{BufferPool, Completion, Engine, Op, Queued, Request};

pub(crate) struct NullEngine {
    pool: BufferPool,
    done: Vec<Completion>,
}

impl NullEngine {
    pub(crate) fn new(pool: BufferPool, qd: usize) -> NullEngine {
        NullEngine {
            pool,
            done: Vec::with_capacity(qd.max(1)),
        }
    }
}

impl Engine for NullEngine {
    #[inline]
    fn queue(&mut self, req: Request) -> io::Result<Queued> {
        let result = match req.op {
            Op::Fsync => 0,
            Op::Read | Op::Write => req.len as i64,
        };
        self.done.push(Completion {
            slot: req.slot,
            result,
        });
        Ok(Queued::Queued)
    }

    #[inline]
    fn submit(&mut self, _wait_for: usize) -> io::Result<()> {
        Ok(())
    }

    fn flushes(&self) -> bool {
        false
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<Completion>) {
        // One by one: at the usual depths a call to `memcpy` costs more than the copies.
        for c in self.done.drain(..) {
            out.push(c);
        }
    }

    unsafe fn buffer(&mut self, slot: u32) -> &mut [u8] {
        // Safety: the caller guarantees that no request on `slot` is in flight (and the
        // null engine never hands a slot to the kernel anyway).
        unsafe { self.pool.slot_mut(slot) }
    }
}

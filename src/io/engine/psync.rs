//! The psync engine: `pread`/`pwrite`, one I/O at a time. Each request is carried out
//! synchronously in `submit`; the reference engine, and the one that works everywhere.

use std::io;
use std::os::fd::RawFd;

use super::{BufferPool, Completion, Engine, Op, Request};

pub struct PsyncEngine {
    fd: RawFd,
    pool: BufferPool,
    queued: Vec<Request>,
    done: Vec<Completion>,
}

impl PsyncEngine {
    /// `fd` must stay open for the engine's life.
    pub fn new(fd: RawFd, pool: BufferPool, qd: usize) -> PsyncEngine {
        PsyncEngine {
            fd,
            pool,
            queued: Vec::with_capacity(qd.max(1)),
            done: Vec::with_capacity(qd.max(1)),
        }
    }

    fn execute(&mut self, req: Request) -> i64 {
        loop {
            let ptr = self
                .pool
                .slot_ptr(req.slot)
                .wrapping_add(req.buf_off as usize);
            let off = req.offset as libc::off_t;
            // Safety: `ptr..ptr+len` lies inside the slot's buffer (the runner never asks
            // for more than the slot holds) and nothing else touches the slot meanwhile.
            let r = unsafe {
                match req.op {
                    Op::Read => libc::pread(self.fd, ptr.cast(), req.len as usize, off),
                    Op::Write => libc::pwrite(self.fd, ptr.cast(), req.len as usize, off),
                    Op::Fsync => libc::fsync(self.fd) as isize,
                }
            };
            if r >= 0 {
                return r as i64;
            }
            let errno = io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            if errno != libc::EINTR {
                return -(errno as i64);
            }
        }
    }
}

impl Engine for PsyncEngine {
    #[inline]
    fn queue(&mut self, req: Request) -> io::Result<()> {
        self.queued.push(req);
        Ok(())
    }

    fn submit(&mut self, _wait_for: usize) -> io::Result<()> {
        for i in 0..self.queued.len() {
            let req = self.queued[i];
            let result = self.execute(req);
            self.done.push(Completion {
                slot: req.slot,
                result,
            });
        }
        self.queued.clear();
        Ok(())
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.done);
    }

    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.pool.slot_mut(slot)
    }
}

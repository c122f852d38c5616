//! The io_uring engine: requests go into the submission ring, one `io_uring_enter` issues
//! the batch and waits, completions are read from the completion ring without a system
//! call. The file and the buffers are registered with the kernel once, so each I/O skips
//! the file lookup and the page pinning. Ring setup retries without the newer flags when
//! the kernel refuses them, and buffer registration falls back to plain reads and writes.

use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::RawFd;

use io_uring::{IoUring, opcode, squeue, types};

use super::{BufferPool, Completion, Engine, Op, Request};

pub struct UringEngine {
    // Both dropped by hand in `Drop`: first every in-flight request is waited for, then
    // the ring goes, and only then the buffers the kernel may have been writing into.
    ring: ManuallyDrop<IoUring>,
    pool: ManuallyDrop<BufferPool>,
    /// Requests queued and not yet reaped.
    pending: usize,
    fixed_buffers: bool,
    /// Entries built but not yet pushed because the submission ring was full.
    backlog: Vec<squeue::Entry>,
}

impl UringEngine {
    /// Sets up a ring deep enough for `qd` requests on `fd` (which must outlive the engine).
    pub fn new(fd: RawFd, pool: BufferPool, qd: usize) -> io::Result<UringEngine> {
        let entries = (qd.max(1) as u32).next_power_of_two();
        // Single issuer + deferred task work: completions are posted only when this thread
        // asks for them (in `submit`), so it is not interrupted while it prepares the next
        // batch. Older kernels refuse the flags; fall back step by step.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
            .or_else(|_| IoUring::new(entries))?;
        ring.submitter().register_files(&[fd])?;
        let iovecs: Vec<libc::iovec> = (0..pool.slots() as u32)
            .map(|s| libc::iovec {
                iov_base: pool.slot_ptr(s).cast(),
                iov_len: pool.slot_len(),
            })
            .collect();
        // Safety: every iovec points into `pool`, which lives as long as the ring (the
        // ring is dropped first, see the field order) and is never reallocated.
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        Ok(UringEngine {
            ring: ManuallyDrop::new(ring),
            pool: ManuallyDrop::new(pool),
            pending: 0,
            fixed_buffers,
            backlog: Vec::with_capacity(qd.max(1)),
        })
    }

    /// Whether registered (fixed) buffers are in use.
    pub fn fixed_buffers(&self) -> bool {
        self.fixed_buffers
    }

    fn entry(&self, req: &Request) -> squeue::Entry {
        let file = types::Fixed(0);
        let ptr = self
            .pool
            .slot_ptr(req.slot)
            .wrapping_add(req.buf_off as usize);
        let e = match (req.op, self.fixed_buffers) {
            (Op::Read, true) => opcode::ReadFixed::new(file, ptr, req.len, req.slot as u16)
                .offset(req.offset)
                .build(),
            (Op::Write, true) => opcode::WriteFixed::new(file, ptr, req.len, req.slot as u16)
                .offset(req.offset)
                .build(),
            (Op::Read, false) => opcode::Read::new(file, ptr, req.len)
                .offset(req.offset)
                .build(),
            (Op::Write, false) => opcode::Write::new(file, ptr, req.len)
                .offset(req.offset)
                .build(),
            (Op::Fsync, _) => opcode::Fsync::new(file).build(),
        };
        e.user_data(req.slot as u64)
    }
}

impl Engine for UringEngine {
    #[inline]
    fn queue(&mut self, req: Request) -> io::Result<()> {
        let e = self.entry(&req);
        // Safety: the entry's buffer lies in the pool, which outlives the ring, and the
        // runner leaves the slot alone until its completion is reaped.
        self.pending += 1;
        let pushed = unsafe { self.ring.submission().push(&e) };
        if pushed.is_err() {
            self.backlog.push(e);
        }
        Ok(())
    }

    fn submit(&mut self, wait_for: usize) -> io::Result<()> {
        loop {
            while let Some(e) = self.backlog.last() {
                // Safety: as in `queue`.
                if unsafe { self.ring.submission().push(e) }.is_err() {
                    break;
                }
                self.backlog.pop();
            }
            let want = if self.backlog.is_empty() { wait_for } else { 0 };
            match self.ring.submit_and_wait(want) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    // The completion ring is full: the caller must reap first.
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
            if self.backlog.is_empty() {
                return Ok(());
            }
        }
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<Completion>) {
        for cqe in self.ring.completion() {
            self.pending -= 1;
            out.push(Completion {
                slot: cqe.user_data() as u32,
                result: cqe.result() as i64,
            });
        }
    }

    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.pool.slot_mut(slot)
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // Wait for every request still in flight: the kernel may write into the buffers
        // until its completion is posted.
        let mut out = Vec::with_capacity(self.pending);
        let mut failures = 0;
        while self.pending > 0 && failures < 1000 {
            match self.submit(1) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => failures += 1,
            }
            self.reap(&mut out);
            out.clear();
        }
        // Let go of the file now: the kernel tears a ring down asynchronously, and a
        // registered file would keep the filesystem busy (umount: "target is busy") for
        // a moment after iomark exits.
        let _ = self.ring.submitter().unregister_files();
        let _ = self.ring.submitter().unregister_buffers();
        // Safety: each field is dropped exactly once, here, and never used again; the ring
        // (and with it the registration of the buffers) goes first.
        unsafe { ManuallyDrop::drop(&mut self.ring) };
        if self.pending == 0 {
            // Safety: nothing is in flight any more, so no one else uses the buffers.
            unsafe { ManuallyDrop::drop(&mut self.pool) };
        }
        // Otherwise the buffers are leaked on purpose: better a leak than the kernel
        // writing into freed memory.
    }
}

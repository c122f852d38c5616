//! The libaio engine: Linux native AIO through the `io_submit`/`io_getevents` system
//! calls themselves (no libaio library). Requests are queued as `iocb`s, one per slot,
//! handed to the kernel `batch_submit` at a time, and `submit` waits for at least
//! `batch_complete` completions (never more than are in flight). Completions are read
//! from the context's ring in this process's memory, without a system call, whenever
//! they are there; a wait for the next one watches the ring for a moment, while recent
//! waits ended that soon (`engine::spin`), and sleeps in `io_getevents` only then.
//!
//! An fsync is done synchronously with `fsync(2)` (as fio's libaio does).
//!
//! Native AIO is asynchronous only with O_DIRECT: on a buffered descriptor `io_submit`
//! does the I/O before it returns, exactly as fio's libaio does then.

use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, BorrowedFd};

use super::spin::Spin;
use super::{BufferPool, Completion, Engine, Op, Queued, Request};
use crate::io::sys::{self, AioContext, AioRing, IoEvent, Iocb};
use crate::plan::spec::EngineOpts;

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
    /// The context's completion ring, read without a system call; `None` where it has
    /// a layout this code does not know (then `io_getevents` reads every event).
    ring: Option<AioRing>,
    /// A wait for one completion watches the ring for a moment before it sleeps, while
    /// that pays (`spin`); `None` when the ring is not read or the spin is off.
    spin: Option<Spin>,
    /// Waits that entered `io_getevents` (for the tests).
    #[cfg(test)]
    getevents_calls: usize,
}

impl<'fd> LibaioEngine<'fd> {
    /// An AIO context for `qd` requests on `fd`, submitting `opts.batch_submit` at a time
    /// and waiting for `opts.batch_complete` completions at a time.
    pub(crate) fn new(
        fd: BorrowedFd<'fd>,
        pool: BufferPool,
        qd: usize,
        opts: &EngineOpts,
    ) -> io::Result<LibaioEngine<'fd>> {
        let slots = pool.slots().max(qd.max(1));
        let ctx = sys::io_setup(slots as u32)?;
        // SAFETY: a live context, read only by this engine's thread (the engine is used
        // from one worker thread), never while it waits in io_getevents (`wait`), and
        // dropped with the engine, before `io_destroy` (see `Drop`).
        let ring = unsafe { AioRing::of(ctx) };
        // (The caller resolves the default: `EngineOpts::spin_ns`.)
        let spin_ns = opts
            .spin_wait_ns
            .unwrap_or(crate::plan::engine::SPIN_WAIT_NS);
        Ok(LibaioEngine {
            ctx,
            fds: vec![fd],
            pool: ManuallyDrop::new(pool),
            iocbs: vec![Iocb::default(); slots].into_boxed_slice(),
            queued: Vec::with_capacity(slots),
            events: vec![IoEvent::default(); slots].into_boxed_slice(),
            done: Vec::with_capacity(slots),
            in_kernel: 0,
            batch_submit: (opts.batch_submit as usize).max(1),
            batch_complete: (opts.batch_complete as usize).max(1),
            spin: Spin::new(spin_ns).filter(|_| ring.is_some()),
            ring,
            #[cfg(test)]
            getevents_calls: 0,
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

    /// Moves every completion in the ring into `done`, without a system call: how many.
    fn take_ring(&mut self) -> usize {
        let Some(ring) = &self.ring else { return 0 };
        let done = &mut self.done;
        let n = ring.take(|ev| {
            done.push(Completion {
                slot: ev.data as u32,
                result: ev.res,
            })
        });
        self.in_kernel -= n;
        n
    }

    /// Watches the ring for up to `ns` nanoseconds: true as soon as a completion is
    /// there, false if none came. Shared memory only, no system call (see `spin`).
    #[cfg(test)]
    fn poll_ring(&self, ns: u64) -> bool {
        let Some(ring) = &self.ring else { return false };
        super::spin::watch(ns, || ring.ready())
    }

    /// Waits for at least `min` completions (at most those in flight) and keeps them:
    /// those in the ring first, then (for a wait for one, while that pays) those that
    /// come within a spin, and only for the rest a sleep in `io_getevents`.
    fn wait(&mut self, min: usize) -> io::Result<()> {
        let min = min.min(self.in_kernel);
        if self.in_kernel == 0 {
            return Ok(());
        }
        let mut got = self.take_ring();
        if got == 0
            && min == 1
            && let (Some(spin), Some(ring)) = (self.spin.as_mut(), &self.ring)
            && spin.wanted()
        {
            spin.spin(|| ring.ready());
            got = self.take_ring();
        }
        if got >= min {
            return Ok(());
        }
        #[cfg(test)]
        {
            self.getevents_calls += 1;
        }
        let n = sys::io_getevents(self.ctx, min - got, &mut self.events)?;
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
        // What the kernel has put into the ring since is available now too (two loads
        // of shared memory), as io_uring's completion ring is.
        self.take_ring();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn engine(fd: BorrowedFd<'_>, spin_wait_ns: u32) -> LibaioEngine<'_> {
        let pool = BufferPool::new(4, 4096, 4096).unwrap();
        let opts = EngineOpts {
            spin_wait_ns: Some(spin_wait_ns),
            ..Default::default()
        };
        LibaioEngine::new(fd, pool, 4, &opts).unwrap()
    }

    /// Queues `n` writes of 4 KiB, one per slot from 0.
    fn queue_writes(e: &mut LibaioEngine<'_>, n: u32) {
        for slot in 0..n {
            let req = Request {
                slot,
                op: Op::Write,
                offset: slot as u64 * 4096,
                len: 4096,
                buf_off: 0,
                ext: None,
                file: 0,
            };
            e.queue(req).unwrap();
        }
    }

    /// Completions are read from the ring in this process's memory: buffered writes
    /// complete inside `io_submit`, and a wait for them then takes no `io_getevents`.
    #[test]
    fn completions_in_the_ring_are_read_without_a_system_call() {
        let f = tempfile::tempfile().unwrap();
        let mut e = engine(f.as_fd(), crate::plan::engine::SPIN_WAIT_NS);
        assert!(e.ring.is_some(), "the ring's layout was not recognised");
        queue_writes(&mut e, 4);
        e.submit(4).unwrap();
        let mut out = Vec::new();
        e.reap(&mut out);
        out.sort_by_key(|c| c.slot);
        let want: Vec<Completion> = (0..4)
            .map(|slot| Completion { slot, result: 4096 })
            .collect();
        assert_eq!(out, want);
        assert_eq!(e.getevents_calls, 0, "a wait entered io_getevents");
        assert_eq!(e.in_kernel, 0);
    }

    /// A reap takes what the ring holds without a wait: buffered writes complete inside
    /// `io_submit`, and a submit that waits for nothing leaves them there (until
    /// 2026-11-30 a reap returned only what a wait had read).
    #[test]
    fn a_reap_takes_what_the_ring_holds() {
        let f = tempfile::tempfile().unwrap();
        let mut e = engine(f.as_fd(), crate::plan::engine::SPIN_WAIT_NS);
        queue_writes(&mut e, 2);
        e.submit(0).unwrap();
        assert_eq!(e.in_kernel, 2, "the writes were not handed to the kernel");
        let mut out = Vec::new();
        e.reap(&mut out);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(e.getevents_calls, 0);
    }

    /// A poll request on a pipe, completed by a write from another thread `after`.
    fn poll_a_pipe<'a>(e: &mut LibaioEngine<'a>, rd: BorrowedFd<'a>) {
        e.iocbs[0] = Iocb {
            data: 0,
            opcode: 5, // IOCB_CMD_POLL
            fildes: rd.as_raw_fd() as u32,
            buf: libc::POLLIN as u64,
            ..Iocb::default()
        };
        let mut p = [&mut e.iocbs[0] as *mut Iocb];
        // SAFETY: the request names no buffer; the pipe stays open for the test, and the
        // engine's drop waits for the request otherwise.
        assert_eq!(unsafe { sys::io_submit(e.ctx, &mut p) }.unwrap(), 1);
        e.in_kernel += 1;
    }

    /// The spin sees a completion the kernel puts into the ring while the thread
    /// watches (a poll on a pipe, written 2 ms later from another thread); `--spin-wait
    /// 0` never spins, and a spin that finds nothing ends in `io_getevents`.
    #[test]
    fn a_spin_sees_a_completion_that_comes_while_it_watches() {
        let (rd, wr) = std::io::pipe().unwrap();
        let mut e = engine(rd.as_fd(), 1500);
        poll_a_pipe(&mut e, rd.as_fd());
        assert!(
            !e.poll_ring(50_000),
            "a completion before the pipe was written"
        );
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(2));
            std::io::Write::write_all(&mut &wr, b"x").unwrap();
            wr
        });
        assert!(e.poll_ring(5_000_000_000), "no completion seen in 5 s");
        e.submit(1).unwrap();
        assert_eq!(e.getevents_calls, 0);
        assert_eq!(e.done.len(), 1);
        assert_eq!(e.done[0].result & libc::POLLIN as i64, libc::POLLIN as i64);
        let wr = writer.join().unwrap();
        drop(wr);

        // A wait for a completion 2 ms away: a spin of 1.5 µs finds nothing and the
        // wait sleeps in io_getevents; with --spin-wait 0 it sleeps at once.
        for spin_wait_ns in [0, 1500] {
            let (rd, wr) = std::io::pipe().unwrap();
            let mut e = engine(rd.as_fd(), spin_wait_ns);
            poll_a_pipe(&mut e, rd.as_fd());
            let writer = std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(2));
                std::io::Write::write_all(&mut &wr, b"x").unwrap();
                wr
            });
            e.submit(1).unwrap();
            assert_eq!(e.done.len(), 1);
            assert_eq!(
                e.spin.map_or(0, |s| s.made),
                (spin_wait_ns > 0) as usize,
                "--spin-wait {spin_wait_ns}ns"
            );
            assert_eq!(e.getevents_calls, 1);
            drop(writer.join().unwrap());
        }
    }
}

//! The io_uring engine: requests go into the submission ring, one `io_uring_enter` issues
//! the batch and waits, completions are read from the completion ring without a system
//! call. The file and the buffers are registered with the kernel once, so each I/O skips
//! the file lookup and the page pinning. Ring setup retries without the newer flags when
//! the kernel refuses them, and buffer registration falls back to plain reads and writes.
//! A wait for the next completion watches the rings for a moment before it sleeps, while
//! recent waits ended that soon (`engine::spin`).

use std::io;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, BorrowedFd};

use io_uring::{IoUring, opcode, squeue, types};

use super::spin::Spin;
use super::{BufferPool, Completion, Engine, Op, Queued, Request};
use crate::plan::engine::SPIN_WAIT_NS;
use crate::plan::spec::EngineOpts;

/// How long an idle SQPOLL thread keeps polling before it sleeps (the worker wakes it).
const SQPOLL_IDLE_MS: u32 = 1000;

pub(crate) struct UringEngine<'fd> {
    // Both dropped by hand in `Drop`: first every in-flight request is waited for, then
    // the ring goes, and only then the buffers the kernel may have been writing into.
    ring: ManuallyDrop<IoUring>,
    pool: ManuallyDrop<BufferPool>,
    /// Requests queued and not yet reaped.
    pending: usize,
    /// Requests queued and not yet handed to the kernel.
    unsubmitted: usize,
    batch_submit: usize,
    batch_complete: usize,
    fixed_buffers: bool,
    /// A kernel thread polls the submission ring (`--sqpoll`).
    sqpoll: bool,
    /// A wait watches the rings for a moment before it sleeps, while that pays (`spin`);
    /// `None` with a polling thread or polled completions, whose waits are the kernel's.
    spin: Option<Spin>,
    /// The data generator's unit pool, registered after the slots (buffer index
    /// `pool.slots()`) when given: writes sent from it skip the page pinning too.
    extra: Option<(usize, usize)>,
    /// The file is registered with the ring by number: the borrow keeps it open for as
    /// long as the ring may use it.
    _fd: PhantomData<BorrowedFd<'fd>>,
}

impl<'fd> UringEngine<'fd> {
    /// Sets up a ring deep enough for `qd` requests on `fd`, with the options of `opts`
    /// (SQPOLL, IOPOLL, batching). `extra` is memory writes may be sent from besides the
    /// slots (`Request::ext`: the data generator's unit pool, start and length); it must
    /// stay allocated until the engine is dropped.
    pub(crate) fn new(
        fd: BorrowedFd<'fd>,
        pool: BufferPool,
        qd: usize,
        opts: &EngineOpts,
        extra: Option<(*const u8, usize)>,
    ) -> io::Result<UringEngine<'fd>> {
        let entries = (qd.max(1) as u32).next_power_of_two();
        // (The caller resolves the default: `EngineOpts::spin_ns`.)
        let spin_ns = opts.spin_wait_ns.unwrap_or(SPIN_WAIT_NS);
        let ring = if opts.sqpoll || opts.hipri {
            // A polling thread or polled completions: the caller asked for these flags,
            // so a kernel that refuses them is an error, not a reason to fall back.
            let mut b = IoUring::builder();
            if opts.sqpoll {
                b.setup_sqpoll(SQPOLL_IDLE_MS);
                if let Some(cpu) = opts.sqpoll_cpu {
                    b.setup_sqpoll_cpu(cpu);
                }
            }
            if opts.hipri {
                b.setup_iopoll();
            }
            b.build(entries)?
        } else {
            // Single issuer + deferred task work: completions are posted only when this
            // thread asks for them (in `submit`), so it is not interrupted while it
            // prepares the next batch. Older kernels refuse the flags; fall back step by
            // step.
            // The task-run flag tells the job thread, in shared memory, that completions
            // wait for it (`pending`).
            IoUring::builder()
                .setup_single_issuer()
                .setup_defer_taskrun()
                .setup_taskrun_flag()
                .build(entries)
                .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
                .or_else(|_| IoUring::new(entries))?
        };
        ring.submitter().register_files(&[fd.as_raw_fd()])?;
        let mut iovecs: Vec<libc::iovec> = (0..pool.slots() as u32)
            .map(|s| libc::iovec {
                iov_base: pool.slot_ptr(s).cast(),
                iov_len: pool.slot_len(),
            })
            .collect();
        let slots_only = iovecs.len();
        if let Some((ptr, len)) = extra {
            iovecs.push(libc::iovec {
                iov_base: ptr.cast_mut().cast(),
                iov_len: len,
            });
        }
        // Safety: every iovec points into `pool`, which lives as long as the ring (the
        // ring is dropped first, see `Drop`) and is never reallocated, or into `extra`,
        // which the caller keeps allocated until the engine is dropped. The kernel only
        // reads `extra` (writes are sent from it, never reads).
        let registered = |v: &[libc::iovec]| unsafe { ring.submitter().register_buffers(v) };
        // The unit pool may exceed what this process may lock: then the slots alone.
        let (fixed_buffers, extra) = if registered(&iovecs).is_ok() {
            (true, extra.map(|(p, l)| (p as usize, p as usize + l)))
        } else {
            (registered(&iovecs[..slots_only]).is_ok(), None)
        };
        Ok(UringEngine {
            ring: ManuallyDrop::new(ring),
            pool: ManuallyDrop::new(pool),
            pending: 0,
            unsubmitted: 0,
            batch_submit: opts.batch_submit.max(1) as usize,
            batch_complete: opts.batch_complete.max(1) as usize,
            fixed_buffers,
            sqpoll: opts.sqpoll,
            spin: Spin::new(spin_ns).filter(|_| !opts.sqpoll && !opts.hipri),
            extra,
            _fd: PhantomData,
        })
    }

    /// Registers every file of `fds` in place of the one given to `new`, so that
    /// `Request::file` numbers them (a worker serving several files, `--file-service`).
    pub(crate) fn with_files(self, fds: &[BorrowedFd<'fd>]) -> io::Result<Self> {
        let raw: Vec<i32> = fds.iter().map(|f| f.as_raw_fd()).collect();
        let sub = self.ring.submitter();
        sub.unregister_files()?;
        sub.register_files(&raw)?;
        Ok(self)
    }

    /// Watches the rings for up to `ns` nanoseconds: true as soon as a completion is
    /// there or waits for this thread (deferred task work, which the task-run flag says),
    /// false if none came. Shared memory only, no system call (see `spin`).
    #[cfg(test)]
    fn poll_completions(&mut self, ns: u64) -> bool {
        let (_, sq, mut cq) = self.ring.split();
        super::spin::watch(ns, || pending(&sq, &mut cq))
    }

    fn entry(&self, req: &Request) -> squeue::Entry {
        let file = types::Fixed(req.file as u32);
        let ptr = req.addr(&self.pool);
        // The registered buffer the transfer lies in: its slot's, or the unit pool's.
        let index = match (req.ext, self.extra) {
            (None, _) => self.fixed_buffers.then_some(req.slot as u16),
            (Some(_), Some((a, b)))
                if ptr as usize >= a && ptr as usize + req.len as usize <= b =>
            {
                Some(self.pool.slots() as u16)
            }
            (Some(_), _) => None,
        };
        let e = match (req.op, index) {
            (Op::Read, Some(i)) => opcode::ReadFixed::new(file, ptr, req.len, i)
                .offset(req.offset)
                .build(),
            (Op::Write, Some(i)) => opcode::WriteFixed::new(file, ptr, req.len, i)
                .offset(req.offset)
                .build(),
            (Op::Read, None) => opcode::Read::new(file, ptr, req.len)
                .offset(req.offset)
                .build(),
            (Op::Write, None) => opcode::Write::new(file, ptr, req.len)
                .offset(req.offset)
                .build(),
            (Op::Fsync, _) => opcode::Fsync::new(file).build(),
        };
        e.user_data(req.slot as u64)
    }
}

/// Whether a completion is in the ring or waits for this thread (deferred task work,
/// which the task-run flag says): shared memory only, no system call.
fn pending(sq: &io_uring::SubmissionQueue<'_>, cq: &mut io_uring::CompletionQueue<'_>) -> bool {
    cq.sync();
    sq.taskrun() || !(*cq).is_empty()
}

impl Engine for UringEngine<'_> {
    #[inline]
    fn queue(&mut self, req: Request) -> io::Result<Queued> {
        let e = self.entry(&req);
        // Safety: the entry's buffer lies in the pool, which outlives the ring (see
        // `Drop`), or in the worker's lent units (`Request::ext`), which the worker keeps
        // alive and unchanged until the completion is reaped; the registered file stays
        // open for the borrow `'fd`, and the worker leaves the slot alone until its
        // completion is reaped (`Engine::buffer`).
        let mut pushed = unsafe { self.ring.submission().push(&e) };
        if pushed.is_err() && self.sqpoll {
            // The polling thread moves the ring's head only after a whole batch, and
            // requests of the batch may complete before that (a page-cache read): the ring
            // can be full of entries the thread has taken while their completions are
            // reaped. Wait for it to make room (a thread kept off its CPU made every such
            // run fail with "the engine stayed busy").
            self.ring.submitter().squeue_wait()?;
            // Safety: as above.
            pushed = unsafe { self.ring.submission().push(&e) };
        }
        match pushed {
            Ok(()) => {
                self.pending += 1;
                self.unsubmitted += 1;
                Ok(Queued::Queued)
            }
            Err(_) => Ok(Queued::Busy),
        }
    }

    fn submit(&mut self, wait_for: usize) -> io::Result<()> {
        if wait_for == 0 && self.unsubmitted < self.batch_submit {
            return Ok(());
        }
        // Never wait for more than is in flight: that would wait forever.
        let want = match wait_for {
            0 => 0,
            w => w.max(self.batch_complete).min(self.pending),
        };
        // (A wait for several, `--batch-complete`, sleeps as asked.)
        if want == 1
            && self.ring.completion().is_empty()
            && self.spin.as_mut().is_some_and(Spin::wanted)
        {
            // Hand over what is queued, so the device has it while the thread watches.
            if self.unsubmitted > 0 {
                match self.ring.submit() {
                    Ok(_) => self.unsubmitted = 0,
                    Err(e) if e.raw_os_error() == Some(crate::io::sys::EBUSY) => {}
                    Err(e) => return Err(e),
                }
            }
            if let Some(spin) = self.spin.as_mut() {
                let (_, sq, mut cq) = self.ring.split();
                spin.spin(|| pending(&sq, &mut cq));
            }
        }
        match self.ring.submit_and_wait(want) {
            Ok(_) => {
                self.unsubmitted = 0;
                Ok(())
            }
            // The completion ring is full: the caller must reap first.
            Err(e) if e.raw_os_error() == Some(crate::io::sys::EBUSY) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn settle(&mut self) {
        // With the task-run flag raised the enter carries GETEVENTS, which runs the
        // deferred task work, a few dozen completions a call: again while the flag says
        // more wait (an error shows again at the next submit). The ring has room for
        // every I/O in flight.
        for _ in 0..=self.pending / 8 {
            if self.ring.submit().is_err() {
                return;
            }
            self.unsubmitted = 0;
            if !self.ring.submission().taskrun() {
                return;
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

    unsafe fn buffer(&mut self, slot: u32) -> &mut [u8] {
        // Safety: the caller guarantees that no request on `slot` is in flight.
        unsafe { self.pool.slot_mut(slot) }
    }
}

impl Drop for UringEngine<'_> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// A wait's spin finds a completion in shared memory. With deferred task work a
    /// completion (here a 1 ms timeout's, posted from a timer) reaches the ring only when
    /// the thread enters the kernel: the task-run flag is what says one waits, and
    /// without it (until 2026-11-29 the ring did not ask for it) no spin could see one.
    /// With nothing in flight the spin gives up after its time.
    #[test]
    fn a_spin_sees_a_completion_that_waits_for_the_thread() {
        if let Err(why) = crate::io::engine::probe_io_uring() {
            assert!(
                std::env::var("IOMARK_REQUIRE_ALL").as_deref() != Ok("1"),
                "io_uring unavailable and IOMARK_REQUIRE_ALL=1: {why}"
            );
            eprintln!("skipped: {why}");
            return;
        }
        let f = tempfile::tempfile().unwrap();
        let pool = BufferPool::new(2, 4096, 4096).unwrap();
        let mut e = UringEngine::new(f.as_fd(), pool, 2, &Default::default(), None).unwrap();
        let t0 = std::time::Instant::now();
        assert!(
            !e.poll_completions(50_000),
            "a completion with nothing in flight"
        );
        assert!(t0.elapsed() >= std::time::Duration::from_micros(50));
        let ts = types::Timespec::new().nsec(1_000_000);
        let timeout = opcode::Timeout::new(&ts).build().user_data(0);
        // Safety: `ts` outlives the request, which completes within this test (the
        // engine's drop waits for it otherwise).
        unsafe { e.ring.submission().push(&timeout) }.unwrap();
        e.pending += 1;
        e.ring.submit().unwrap();
        assert!(
            e.poll_completions(5_000_000_000),
            "no completion seen in 5 s"
        );
        assert!(
            e.ring.completion().is_empty(),
            "the completion was posted before the thread asked"
        );
        let mut out = Vec::new();
        e.submit(1).unwrap();
        e.reap(&mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].result, -libc::ETIME as i64);
    }

    /// `--spin-wait 0` sleeps at once: a wait for a 1 ms timeout spins first by
    /// default, and not at all with 0 (the option reaches the engine).
    #[test]
    fn spin_wait_0_sleeps_at_once() {
        if crate::io::engine::probe_io_uring().is_err() {
            return; // a_spin_sees_a_completion_that_waits_for_the_thread says why
        }
        for spin_wait_ns in [0, crate::plan::engine::SPIN_WAIT_NS, 20_000] {
            let f = tempfile::tempfile().unwrap();
            let pool = BufferPool::new(2, 4096, 4096).unwrap();
            let opts = EngineOpts {
                spin_wait_ns: Some(spin_wait_ns),
                ..Default::default()
            };
            let mut e = UringEngine::new(f.as_fd(), pool, 2, &opts, None).unwrap();
            let ts = types::Timespec::new().nsec(1_000_000);
            let timeout = opcode::Timeout::new(&ts).build().user_data(0);
            // Safety: `ts` outlives the request, which completes within this test.
            unsafe { e.ring.submission().push(&timeout) }.unwrap();
            e.pending += 1;
            e.unsubmitted += 1;
            let t0 = std::time::Instant::now();
            e.submit(1).unwrap();
            let mut out = Vec::new();
            e.reap(&mut out);
            assert_eq!(out.len(), 1);
            assert_eq!(
                e.spin.map_or(0, |s| s.made),
                (spin_wait_ns > 0) as usize,
                "--spin-wait {spin_wait_ns}ns"
            );
            assert!(t0.elapsed() >= std::time::Duration::from_millis(1));
        }
    }
}

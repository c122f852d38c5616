//! Sending I/O: a prepared request timed and handed to the kernel, and the I/O prepared
//! ahead: while the queue is full, a worker picks its next I/O and prepares its data in
//! a spare slot, and sends it as soon as a completion is reaped, timed from the same
//! clock reading as that completion (see `Spec::prepares_ahead`); the size budget
//! each I/O issued counts against; and what a worker does as it crosses the ramp's end
//! (the lane's device counters read, the thread's CPU time).

use super::Worker;
use crate::io::engine::{Completion, Engine, Op, Queued, Request};
use crate::measure::worker_out::CpuStart;
use crate::plan::spec::EngineKind;

/// The request slots (and buffers) of a worker of `spec`: `--qd`, and one to prepare
/// ahead in.
pub(crate) fn slots(spec: &crate::plan::spec::Spec) -> usize {
    spec.qd as usize + usize::from(spec.prepares_ahead())
}

impl<E: Engine> Worker<'_, '_, E> {
    /// At the ramp's end: the lane's first job reads the device counters, after taking
    /// every completion the kernel has made (io_uring defers posting them until the thread
    /// enters the kernel: the device had counted them, and taken after the reading they
    /// were taken off as the device's), then the thread's CPU time is read.
    pub(super) fn cross_ramp(&mut self) {
        if self.ctx.job == 0 && !self.ctx.counters.is_open() {
            self.eng.settle();
            self.reap();
            self.ctx.counters.read();
        }
        let uring = self.ctx.spec.engine == EngineKind::IoUring;
        self.cpu_start = Some(CpuStart::now(uring));
    }

    /// Whether an I/O issued now counts against the size budget (`ios_per_job`): once
    /// measuring, or also in the ramp when the ramp is part of the size (fio's way).
    pub(super) fn budgeted(&self, measuring: bool) -> bool {
        measuring || self.ctx.spec.ramp_in_size
    }

    /// Whether the size budget is spent: the bytes of a block-size mix, else the I/Os.
    #[inline(always)]
    pub(super) fn size_done(&self) -> bool {
        self.work >= self.budget
    }

    /// A mix's next size: a sequential job's last I/Os of a pass fit before the span's
    /// end, and in what is left of the size budget (a second job's pass ends where it
    /// began). Out of line: a job of one size never calls it (inlined, the room's
    /// arithmetic cost null 4 KiB writes about 1.2x the CPU, `bench/ab.sh`).
    #[inline(never)]
    pub(super) fn mixed_len(&mut self, read: bool, measuring: bool) -> u32 {
        let room = self.mix_room(measuring);
        self.sizes.next_len_within(read, room)
    }

    /// The bytes a mix's next I/O may take: to the span's end, and within the budget.
    fn mix_room(&self, measuring: bool) -> u64 {
        self.offsets.room().min(self.bytes_left(measuring))
    }

    /// `len` drawn again when it does not fit the room of the file just switched to.
    #[inline(never)]
    pub(super) fn refit_len(&mut self, read: bool, len: u32, measuring: bool) -> u32 {
        let room = self.mix_room(measuring);
        match len as u64 > room {
            true => self.sizes.next_len_within(read, room),
            false => len,
        }
    }

    /// The bytes left of a mix's size budget (`u64::MAX` without one, or while the I/Os
    /// issued do not count against it).
    #[inline(always)]
    pub(super) fn bytes_left(&self, measuring: bool) -> u64 {
        match self.by_bytes && self.budgeted(measuring) {
            true => self.budget.saturating_sub(self.work),
            false => u64::MAX,
        }
    }

    /// One more I/O of `len` bytes issued against the size budget.
    #[inline(always)]
    pub(super) fn count_issued(&mut self, len: u32) {
        self.work += match self.by_bytes {
            true => len as u64,
            false => 1,
        };
    }

    /// Takes back an I/O prepared ahead that will not be sent (the worker stops): its
    /// slot and its pool units. (A write's data was shown to the sampler as it was
    /// prepared: the measured stream has one write of this job more than was written,
    /// of the same profile.)
    pub(super) fn discard_ready(&mut self) {
        if let Some(slot) = self.ready.take() {
            self.free.push(slot);
            if let Some(l) = self.slots[slot as usize].lent.take() {
                self.data.give_back(l);
            }
        }
    }

    /// The queue is full: prepares the next I/O (see `ready`), unless the work is done.
    pub(super) fn prepare_ahead(&mut self) {
        let measuring = self.now >= self.ctx.ramp_ns;
        let done = self.size_done();
        if self.stopping || self.submit_err.is_some() || (self.budgeted(measuring) && done) {
            return;
        }
        // A pool no larger than the writes in flight: a write prepared now would find its
        // units lent and be copied; after the next completion it is lent.
        if self.verify.is_none() && self.data.next_unit_lent() {
            return;
        }
        self.ready = match self.prepare_io(measuring) {
            super::Prepared::Io(slot) => Some(slot),
            super::Prepared::Done(_) => None,
        };
    }

    /// Whether the completions of `comps` end one I/O at least, all of them without an
    /// error (an error stops the worker; a short transfer goes on in its slot).
    #[inline(always)]
    pub(super) fn frees_a_slot(&self, comps: &[Completion]) -> bool {
        let ends = |c: &Completion| {
            let sl = &self.slots[c.slot as usize];
            sl.op == Op::Fsync || sl.done as u64 + c.result as u64 >= sl.len as u64
        };
        comps
            .iter()
            .all(|c| c.result > 0 || self.slots[c.slot as usize].op == Op::Fsync)
            && comps.iter().any(ends)
    }

    /// Issues the I/O prepared in `slot`, timed from `now`.
    #[inline(always)]
    pub(super) fn send(&mut self, slot: u32, now: u64) {
        let sl = &mut self.slots[slot as usize];
        sl.start_ns = now;
        let sl = *sl;
        // Each request goes to the kernel as soon as it is ready (as fio does by default):
        // the device gets work a batch-preparation earlier, and measured on a loop device
        // this gave more IOPS for the same CPU per I/O.
        self.issue(Request {
            slot,
            op: sl.op,
            offset: sl.offset,
            len: sl.len,
            buf_off: 0,
            ext: self.ext_of(sl.lent),
            file: sl.file,
        });
    }

    /// Queues one request and hands it to the kernel at once; keeps the first submission
    /// failure (other than a signal's interruption).
    #[inline(always)]
    pub(super) fn issue(&mut self, req: Request) {
        self.inflight += 1;
        let mut queued = self.eng.queue(req);
        if let Ok(Queued::Busy) = queued {
            // No room: hand what is queued to the kernel, take what completed, retry.
            let _ = self.eng.submit(0);
            queued = self.eng.queue(req);
        }
        let err = match queued {
            Err(e) => Some(e),
            Ok(Queued::Busy) => Some(std::io::Error::other("the engine stayed busy")),
            Ok(Queued::Queued) => match self.eng.submit(0) {
                Err(e) if e.kind() != std::io::ErrorKind::Interrupted => Some(e),
                _ => None,
            },
        };
        self.submit_err = self.submit_err.take().or(err);
    }
}

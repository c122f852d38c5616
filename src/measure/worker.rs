//! One worker: a thread with its own engine, buffers, offset generator, data generator,
//! histograms and interval counters. It keeps up to `--qd` requests in flight, times each
//! from submission to completion, and counts only what was issued after the ramp and
//! completed inside the measured window. Nothing is shared on the hot path but two stop
//! flags that are only read there and the worker's own live counters.
//!
//! The worker never prints and never decides what a figure means; it returns raw counts,
//! histograms and what it saw of the data ([`WorkerOut`]).

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::error::Error;
use crate::io::clock::Clock;
use crate::io::engine::{Completion, Engine, Op, Request};
use crate::measure::interval::{Interval, LiveTotals};
use crate::measure::launch::{WorkerCtx, io_error};
use crate::measure::pace::Pace;
use crate::measure::worker_out::CpuStart;
use crate::workload::data::{DataGen, Lent};
use crate::workload::rng::{Mix, Offsets, Rng};
use crate::workload::sampler::Sampler;
use crate::workload::seed::job_stream;
use crate::workload::sizes::Sizes;

pub(crate) use crate::measure::worker_out::WorkerOut;

/// A request slot: what is in flight on it.
#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    /// The worker's file it goes to (`Request::file`).
    file: u16,
    offset: u64,
    len: u32,
    /// Bytes already transferred (a short transfer is resumed on the same slot).
    done: u32,
    /// Submission time, ns since t0.
    start_ns: u64,
    /// Whether the I/O counts: it was issued after the ramp.
    counts: bool,
    /// The pool units a write sends (given back when it completes).
    lent: Option<Lent>,
}

impl Slot {
    const IDLE: Slot = Slot {
        op: Op::Read,
        file: 0,
        offset: 0,
        len: 0,
        done: 0,
        start_ns: 0,
        counts: false,
        lent: None,
    };
}

/// What `prepare_io` made of the next I/O.
enum Prepared {
    /// An I/O prepared in this slot, to send.
    Io(u32),
    /// Nothing to send; whether to go on issuing: a trim was done at once (its result),
    /// or no block may be written now (with --verify, every candidate is being written)
    /// or the span ended (false).
    Done(bool),
}

/// Where the final flush (`--end-fsync`) stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum EndSync {
    NotYet,
    InFlight,
    Done,
}

/// The state of one worker's loop; see the module documentation.
pub(crate) struct Worker<'c, 'a, E: Engine> {
    eng: E,
    ctx: &'c WorkerCtx<'a>,
    t0: Instant,
    /// Nanoseconds since `t0`, read twice per I/O.
    clock: Clock,
    /// The current file's offsets (the others wait in `files`).
    offsets: Offsets,
    /// `--file-service`: the files it serves, when several.
    files: Option<files::Files>,
    sizes: Sizes,
    /// `--rate`, `--rate-iops`.
    pace: Option<Pace>,
    /// The pace held back the last `fill_queue`.
    pace_held: bool,
    mix: Mix,
    data: DataGen,
    sampler: Option<Sampler>,
    verify: Option<VerifyTrack>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// The slot of an I/O prepared ahead (picked, its data stamped) and not yet sent:
    /// sent as soon as a completion is reaped, timed from the clock reading that timed
    /// that completion (see `Spec::prepares_ahead`).
    ready: Option<u32>,
    /// Whether this worker prepares an I/O ahead (`Spec::prepares_ahead`).
    ahead: bool,
    comps: Vec<Completion>,
    inflight: usize,
    /// The size budget's count (see [`Worker::budgeted`]): the I/Os issued against it, or with a block-size mix
    /// their bytes (`bytes_per_job`); `budget` what ends it (`u64::MAX`: none), and
    /// `by_bytes` which it counts. One counter and one compare per I/O, whichever.
    work: u64,
    budget: u64,
    by_bytes: bool,
    writes_since_sync: u32,
    sync_inflight: bool,
    end_sync: EndSync,
    stopping: bool,
    interrupted: bool,
    submit_err: Option<std::io::Error>,
    iv: Interval,
    /// Totals published to `ctx.live`.
    live: LiveTotals,
    last_counted_ns: u64,
    now: u64,
    /// This thread's CPU time (and its io_uring kernel threads') when its measured
    /// window began (after the ramp).
    cpu_start: Option<CpuStart>,
    /// A trimming pattern's state (`worker_trim.rs`).
    trims: Option<trim::Trims>,
    out: WorkerOut,
}

/// Whether a worker of `spec` measures the data it writes (has a `Sampler`).
pub(crate) fn measures_data(spec: &crate::plan::spec::Spec) -> bool {
    spec.writes() && spec.rw.writes_data()
}

impl<'c, 'a, E: Engine> Worker<'c, 'a, E> {
    pub(crate) fn new(eng: E, ctx: &'c WorkerCtx<'a>, mut data: DataGen, t0: Instant) -> Self {
        let spec = ctx.spec;
        let qd = spec.qd as usize;
        let stream = job_stream(ctx.stream, ctx.job);
        let (offsets, region_base, region_blocks) =
            files::offsets_of(ctx, ctx.base, ctx.span, stream);
        let region = (region_base, region_blocks);
        let (files, offsets) = match files::Files::of(ctx, stream) {
            Some((f, first)) => (Some(f), first),
            None => (None, offsets),
        };
        let clock = Clock::new(t0);
        let verify = (spec.verify).then(|| VerifyTrack::new(files.as_ref(), region, qd));
        Worker {
            offsets,
            files,
            sizes: crate::workload::seed::job_sizes(spec, stream),
            pace: Pace::of(spec),
            pace_held: false,
            mix: Mix::new(
                spec.rw.read_pct(spec.rwmixread),
                Rng::new(spec.seed, stream | 2),
            ),
            sampler: measures_data(spec).then(|| write::job_sampler(spec, &mut data)),
            data,
            verify,
            slots: vec![Slot::IDLE; slots(spec)],
            free: (0..slots(spec) as u32).rev().collect(),
            ready: None,
            ahead: spec.prepares_ahead(),
            comps: Vec::with_capacity(qd * 2),
            inflight: 0,
            work: 0,
            budget: ctx.bytes_per_job.or(ctx.ios_per_job).unwrap_or(u64::MAX),
            by_bytes: ctx.bytes_per_job.is_some(),
            writes_since_sync: 0,
            sync_inflight: false,
            // The null engine opens nothing to flush: its syncs, accepted with a note
            // (`plan::cache::idle_syncs`), are not made (a run counted 1.5 million).
            end_sync: match eng.flushes() {
                true => EndSync::NotYet,
                false => EndSync::Done,
            },
            stopping: false,
            interrupted: false,
            submit_err: None,
            iv: Interval::new(),
            live: LiveTotals::default(),
            last_counted_ns: 0,
            now: clock.now_ns(),
            clock,
            cpu_start: None,
            trims: trim::Trims::of(ctx),
            out: WorkerOut::empty(None),
            eng,
            ctx,
            t0,
        }
    }

    /// The loop: fill the queue, wait for a completion, account for what completed;
    /// until the work is done or the run is stopped.
    pub(crate) fn run(mut self) -> WorkerOut {
        let ctx = self.ctx;
        crate::measure::pace::start_delay(ctx, self.t0, || {
            ctx.stop.is_set() || ctx.halt.load(Ordering::Relaxed)
        });
        loop {
            if self.cpu_start.is_none() && self.now >= self.ctx.ramp_ns {
                self.cross_ramp();
            }
            self.check_stop();
            self.fill_queue();
            let (t0, end) = (self.t0, self.ctx.end_ns);
            let idle = self.inflight == 0 && !self.stopping;
            // Held by the pace a moment ago: look again even if the I/O fell due since
            // (otherwise an idle worker would take "nothing holds it" for "done").
            let held = self.pace_held;
            if idle && self.pace.as_mut().is_some_and(|p| p.wait(t0, end) || held) {
                self.now = self.clock.now_ns();
                continue;
            }
            if self.inflight == 0 && !self.start_end_sync() {
                break;
            }
            if !self.wait_for_completions() {
                break;
            }
            self.reap();
        }
        self.finish()
    }

    /// Decides whether to keep issuing (inlined always: see `UnitPool::lent_bytes`).
    #[inline(always)]
    fn check_stop(&mut self) {
        if self.stopping {
            return;
        }
        if self.ctx.stop.is_set() || self.ctx.halt.load(Ordering::Relaxed) {
            self.stopping = true;
            self.interrupted = true;
        } else if self.ctx.end_ns.is_some_and(|end| self.now >= end) {
            self.stopping = true;
        }
        if self.stopping {
            self.discard_ready();
        }
    }

    /// Issues requests until the queue is full, the work is done or an fsync is due.
    fn fill_queue(&mut self) {
        let spec = self.ctx.spec;
        self.pace_held = false;
        while !self.stopping && self.inflight < spec.qd as usize && !self.sync_inflight {
            let measuring = self.now >= self.ctx.ramp_ns;
            if self.budgeted(measuring) && self.size_done() {
                break;
            }
            if spec.fsync > 0 && self.writes_since_sync >= spec.fsync && self.eng.flushes() {
                // Every N writes, before the next I/O (none after the last, as in fio):
                // let them complete, then fsync alone; with several files, the one the
                // service gives next (fio's sync takes its turn).
                if self.inflight == 0 {
                    let file = self.pick_file(0);
                    self.issue_fsync(file);
                    self.sync_inflight = true;
                    self.writes_since_sync = 0;
                }
                break;
            }
            if self
                .pace
                .as_ref()
                .is_some_and(|p| p.holds(self.clock.now_ns()))
            {
                self.pace_held = true;
                break; // not yet: see `run`
            }
            if let Some(slot) = self.ready.take() {
                self.send(slot, self.clock.now_ns());
            } else if !self.issue_io(measuring) {
                break;
            }
            if self.submit_err.is_some() {
                break;
            }
        }
        if self.ahead
            && self.ready.is_none()
            && self.inflight >= spec.qd as usize
            && !self.free.is_empty()
        {
            self.prepare_ahead();
        }
    }

    /// Picks the next I/O, prepares its buffer and issues it; false when no block may be
    /// written now (with --verify, every candidate is being written).
    fn issue_io(&mut self, measuring: bool) -> bool {
        match self.prepare_io(measuring) {
            Prepared::Io(slot) => {
                self.send(slot, self.clock.now_ns());
                true
            }
            Prepared::Done(go_on) => go_on,
        }
    }

    /// Picks the next I/O and prepares its buffer in a free slot; see [`Prepared`].
    fn prepare_io(&mut self, measuring: bool) -> Prepared {
        let slot = self.free.pop().expect("inflight < qd leaves a free slot");
        // A trimwrite's write goes to the file just trimmed.
        let mut file = self.current_file();
        let (len, mut offset, op) = match self.trimmed_block() {
            Some((offset, len)) => (len, offset, Op::Write),
            None => {
                // The direction first: a mix's reads and writes may differ in size.
                let read = self.mix.is_read();
                // One size, or a mix's draw (`mixed_len`).
                let mut len = match self.sizes.fixed() {
                    Some(bs) => bs,
                    None => self.mixed_len(read, measuring),
                };
                file = self.pick_file(len as u64);
                if self.files.is_some() && self.sizes.fixed().is_none() {
                    // Another file's offsets (nrfiles): fit in its room.
                    len = self.refit_len(read, len, measuring);
                }
                let offset = self.offsets.next_offset_len(len as u64);
                if self.offsets.ended() {
                    // A one-pass job with holes or runs reached the span's end (fio's
                    // end): the job is done.
                    self.free.push(slot);
                    self.stopping = true;
                    return Prepared::Done(false);
                }
                self.on_pass_end(file);
                if self.trims.is_some() {
                    return Prepared::Done(self.trim_now(slot, offset, len, measuring));
                }
                (len, offset, if read { Op::Read } else { Op::Write })
            }
        };
        if op == Op::Write
            && let Some(v) = self.verify.as_mut()
        {
            let mut tries = 0;
            while v.writing.contains(&(file, offset)) && tries < 16 {
                offset = self.offsets.next_offset();
                tries += 1;
            }
            if v.writing.contains(&(file, offset)) {
                // Every candidate is being written: wait for a completion.
                self.free.push(slot);
                return Prepared::Done(false);
            }
            v.writing[slot as usize] = (file, offset);
        }
        if let Some(p) = self.pace.as_mut() {
            p.charge(self.clock.now_ns(), len as u64);
        }
        let lent = if op == Op::Write {
            self.prepare_write(slot, offset, len, measuring)
        } else {
            None
        };
        if self.budgeted(measuring) {
            self.count_issued(len);
        }
        self.slots[slot as usize] = Slot {
            op,
            file,
            offset,
            len,
            done: 0,
            start_ns: 0,
            counts: measuring,
            lent,
        };
        Prepared::Io(slot)
    }

    /// Waits for at least one completion; false (with the error kept) when submission
    /// failed and the worker must stop.
    fn wait_for_completions(&mut self) -> bool {
        if self.submit_err.is_none() {
            self.submit_err = match self.eng.submit(1) {
                Err(e) if e.kind() != std::io::ErrorKind::Interrupted => Some(e),
                _ => None,
            };
        }
        match self.submit_err.take() {
            None => true,
            Some(e) => {
                // The engine drains what is in flight when it is dropped.
                self.fail(Error::io(
                    format!("submitting I/O to {}", self.ctx.path),
                    &e,
                ));
                false
            }
        }
    }

    /// Records a failure (the first one is kept) and stops this worker and the others.
    fn fail(&mut self, err: Error) {
        if self.out.error.is_none() {
            self.out.error = Some(err);
        }
        self.ctx.halt.store(true, Ordering::Relaxed);
        self.stopping = true;
        self.interrupted = true;
        self.discard_ready();
    }

    /// Takes every completion available and accounts for it.
    fn reap(&mut self) {
        let mut comps = std::mem::take(&mut self.comps);
        self.eng.reap(&mut comps);
        self.now = self.clock.now_ns();
        let (ramp, now) = (self.ctx.ramp_ns, self.now);
        // A completion frees a place in the queue: the I/O prepared ahead goes at once,
        // timed from the reading that timed the completion (nothing else happens in
        // between), and the completions are counted while it is in flight.
        // (Not past the runtime's end: the worker stops at its next turn.)
        let before_end = self.ctx.end_ns.is_none_or(|end| now < end);
        if self.ready.is_some() && !self.stopping && before_end && self.frees_a_slot(&comps) {
            let slot = self.ready.take().expect("checked");
            self.send(slot, now);
        }
        // A batch belongs to the interval in which it was reaped: close the previous one.
        if now >= ramp {
            self.iv.roll(
                &self.ctx.tx,
                now - ramp,
                self.ctx.interval_ns,
                &mut self.out.tally,
            );
        }
        let in_window = now >= ramp && self.ctx.end_ns.is_none_or(|end| now <= end);
        let refill = (self.pace.as_ref()).is_some_and(|p| p.counts_each_completion());
        for &c in comps.iter() {
            self.complete(c, in_window);
            if refill {
                self.fill_queue();
            }
        }
        comps.clear();
        self.comps = comps;
        if now >= ramp {
            self.ctx.live.publish(self.live);
        }
    }

    /// Accounts for one completion.
    fn complete(&mut self, c: Completion, in_window: bool) {
        let sl = self.slots[c.slot as usize];
        if c.result < 0 {
            self.fail(io_error(
                self.path_of(sl.file),
                sl.op,
                sl.offset,
                (-c.result) as i32,
            ));
            self.release(c.slot);
            return;
        }
        if sl.op == Op::Fsync {
            self.release(c.slot);
            // The final flush counts after a time-based window's end too: the run made it
            // and its time is in the run's (a time-based `--end-fsync` said 0 fsyncs).
            if in_window || self.end_sync == EndSync::InFlight {
                self.out.tally.fsyncs += 1;
                if let Some(f) = self.files.as_mut() {
                    f.tally(&sl, 0);
                }
            }
            if self.end_sync == EndSync::InFlight {
                // With several files, each is flushed in turn.
                self.end_sync = match self.flushed_one() {
                    true => EndSync::NotYet,
                    false => EndSync::Done,
                };
                self.last_counted_ns = self.now.saturating_sub(self.ctx.ramp_ns);
            }
            self.sync_inflight = false;
            return;
        }
        let got = c.result as u32;
        let done = sl.done + got;
        if got == 0 {
            // End of file or device: the span is larger than the target.
            self.fail(Error::runtime(format!(
                "{} ended at offset {} before the span did; use a smaller --size",
                self.path_of(sl.file),
                sl.offset + sl.done as u64
            )));
            self.release(c.slot);
            return;
        }
        if done < sl.len {
            // A short transfer: issue the rest, keeping the original start time.
            self.slots[c.slot as usize].done = done;
            self.inflight -= 1;
            self.issue(Request {
                slot: c.slot,
                op: sl.op,
                offset: sl.offset + done as u64,
                len: sl.len - done,
                buf_off: done,
                ext: self.ext_of(sl.lent),
                file: sl.file,
            });
            return;
        }
        self.release(c.slot);
        if let Some(v) = self.verify.as_mut() {
            v.writing[c.slot as usize] = write::NOT_WRITING;
        }
        if let Some(p) = self.pace.as_mut() {
            p.completed();
        }
        if sl.counts && in_window {
            self.record(sl);
        } else if self.ctx.end_ns.is_some_and(|end| self.now > end) || self.ctx.counters.is_open() {
            self.out.tally.unmeasured(sl.op != Op::Read, sl.len);
        }
    }

    /// Frees a slot whose request completed, and the pool units its write sent.
    #[inline(always)]
    fn release(&mut self, slot: u32) {
        self.inflight -= 1;
        self.free.push(slot);
        if let Some(l) = self.slots[slot as usize].lent.take() {
            self.data.give_back(l);
        }
    }

    /// Counts a completed, measured I/O.
    #[inline(always)]
    fn record(&mut self, sl: Slot) {
        let lat = self.now.saturating_sub(sl.start_ns);
        let bytes = sl.len as u64;
        let write = sl.op != Op::Read;
        let (total, iv) = match write {
            false => (&mut self.out.tally.read, &mut self.iv.sum.read),
            true => (&mut self.out.tally.write, &mut self.iv.sum.write),
        };
        total.ios += 1;
        total.bytes += bytes;
        iv.ios += 1;
        iv.bytes += bytes;
        self.iv.sum.lat_sum_ns += lat as u128;
        self.iv.record(write, lat);
        self.live.add(bytes, lat);
        self.last_counted_ns = self.now - self.ctx.ramp_ns;
        if let Some(f) = self.files.as_mut() {
            f.tally(&sl, lat);
        }
    }

    /// Closes the last interval and says where the worker's measured window ended.
    fn finish(mut self) -> WorkerOut {
        self.iv.flush(&self.ctx.tx, 0, &mut self.out.tally);
        let ctx = self.ctx;
        let measured_now = self.now.saturating_sub(ctx.ramp_ns);
        let size_done = self.size_done();
        self.out.tally.end_ns = match (ctx.end_ns, self.interrupted) {
            // Moved all it had to before the runtime ran out.
            (Some(_), false) if size_done => self.last_counted_ns,
            // Time-based and complete: the window is the runtime, plus the final flush.
            (Some(end), false) => (end - ctx.ramp_ns).max(self.last_counted_ns),
            // Time-based and stopped early: up to the stop, never past the planned end.
            (Some(end), true) => measured_now.min(end - ctx.ramp_ns),
            // Size-based: up to the last counted completion (or the stop).
            (None, false) => self.last_counted_ns,
            (None, true) => measured_now,
        };
        self.out.interrupted = self.interrupted;
        if let Some(start) = &self.cpu_start {
            start.end(&mut self.out);
        }
        self.out.sampler = self.sampler.take();
        self.out.gens = self.verify.take().map(|v| v.regions).unwrap_or_default();
        self.out.files = self
            .files
            .as_mut()
            .map(files::Files::take_tally)
            .unwrap_or_default();
        self.out
    }
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;

#[path = "worker_trim.rs"]
mod trim;

#[path = "worker_write.rs"]
mod write;

#[path = "worker_files.rs"]
mod files;
use write::VerifyTrack;

#[path = "worker_send.rs"]
mod send;
pub(crate) use send::slots;

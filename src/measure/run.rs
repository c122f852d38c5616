//! The runner owns the threads: one worker per job, each with its own engine, buffers,
//! offset generator, data generator, histograms and interval counters. Nothing is shared
//! on the hot path but two stop flags that are only ever read there, and a per-worker
//! progress counter that only its worker writes. The main thread handles the ramp, the
//! before/after snapshots (kernel block counters, CPU time), gathers the per-interval
//! figures the workers send once an interval, and reports progress to an [`Observer`].
//! The runner never prints.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, Result, describe_io};
use crate::io::engine::{
    BufferPool, Completion, Engine, NullEngine, Op, PsyncEngine, Request, UringEngine,
};
use crate::io::env::CpuTimes;
use crate::io::target::Target;
use crate::measure::verify::GenMap;
use crate::plan::data::DataKind;
use crate::plan::spec::{EngineKind, Spec, TargetPolicy};
use crate::results::env::DeviceDelta;
use crate::results::schema::{Cpu, DirStats, Point, Repetition, Run, Status, Summary, TargetDesc};
use crate::results::stats::{Counter, LatHist};
use crate::workload::data::DataGen;
use crate::workload::rng::{Mix, Offsets, Rng};
use crate::workload::sampler::Sampler;

/// Receives what happens during a run; the terminal progress display is one.
pub trait Observer {
    /// A repetition is about to start.
    fn rep_started(&mut self, _spec: &Spec, _rep: u32, _of: u32) {}
    /// A few times a second while a repetition runs.
    fn progress(&mut self, _p: &Progress) {}
    /// A repetition finished (or was interrupted).
    fn rep_finished(&mut self, _spec: &Spec, _rep: &Repetition) {}
}

/// An observer that ignores everything.
pub struct Silent;
impl Observer for Silent {}

/// A live view of the repetition in progress.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Seconds since the repetition started, ramp included.
    pub elapsed_s: f64,
    /// Planned length in seconds (ramp + runtime), when time-based.
    pub planned_s: Option<f64>,
    /// Fraction of the planned I/O done, when size-based.
    pub fraction: Option<f64>,
    /// I/Os per second over the last update period.
    pub iops: f64,
    /// Bytes per second over the last update period.
    pub bw_bytes: f64,
    /// Mean latency of the I/Os completed over the last update period, nanoseconds.
    pub lat_mean_ns: f64,
    /// Whether the ramp is still going.
    pub ramping: bool,
}

/// Why a run stops early: set from a signal handler (the signal number) or by the caller.
/// Clones share the same flag.
#[derive(Debug, Default, Clone)]
pub struct StopFlag(Arc<AtomicUsize>);

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag::default()
    }
    /// The shared cell a signal handler stores the signal number into.
    pub fn cell(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.0)
    }
    /// The signal that asked us to stop, 0 if none.
    pub fn signal(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
    pub fn is_set(&self) -> bool {
        self.signal() != 0
    }
    /// Asks the run to stop as if `sig` had arrived.
    pub fn raise(&self, sig: usize) {
        self.0.store(sig, Ordering::Relaxed);
    }
}

/// Per-worker progress counters, padded so two workers never share a cache line.
#[repr(align(128))]
#[derive(Default)]
struct Live {
    ios: AtomicU64,
    bytes: AtomicU64,
    lat_ns: AtomicU64,
}

/// What a worker sends at the end of each interval.
struct IntervalMsg {
    idx: u64,
    read: Counter,
    write: Counter,
    lat_sum_ns: u128,
    hist: LatHist,
}

/// What a worker returns.
struct WorkerOut {
    read: Counter,
    write: Counter,
    hist_read: LatHist,
    hist_write: LatHist,
    fsyncs: u64,
    /// Nanoseconds from measurement start to the end of the worker's measured window.
    end_ns: u64,
    /// Whether the worker stopped before its planned end (signal, halt, error).
    interrupted: bool,
    error: Option<Error>,
    /// What the worker saw of the data it wrote.
    sampler: Option<Sampler>,
    /// With --verify: the generation last written to each block of the worker's region.
    gens: Option<(u64, Vec<u64>)>,
}

impl WorkerOut {
    fn empty(error: Option<Error>) -> WorkerOut {
        WorkerOut {
            read: Counter::default(),
            write: Counter::default(),
            hist_read: LatHist::precise(),
            hist_write: LatHist::precise(),
            fsyncs: 0,
            end_ns: 0,
            interrupted: error.is_some(),
            error,
            sampler: None,
            gens: None,
        }
    }
}

/// The starting gate: workers set up their engines (ring setup and buffer registration
/// can take a while), report ready, and wait; the main thread takes its "before"
/// snapshots, fixes time zero and opens the gate. Setup is thus never inside the
/// measured window.
#[derive(Default)]
struct Gate {
    state: Mutex<(usize, Option<Instant>, bool)>,
    cv: Condvar,
}

impl Gate {
    /// Reports ready and waits; `None` when the run was called off.
    fn arrive_and_wait(&self) -> Option<Instant> {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        self.cv.notify_all();
        while g.1.is_none() && !g.2 {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.1
    }

    fn wait_ready(&self, n: usize) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while g.0 < n {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn open(&self, t0: Instant) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        g.1 = Some(t0);
        self.cv.notify_all();
    }

    fn call_off(&self) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        g.2 = true;
        self.cv.notify_all();
    }
}

/// Everything a worker needs, borrowed from the runner.
struct WorkerCtx<'a> {
    spec: &'a Spec,
    job: u32,
    rep: u32,
    /// Distinguishes the data and offset streams of this run and repetition.
    stream: u64,
    base: u64,
    span: u64,
    fd: Option<i32>,
    align: u64,
    ramp_ns: u64,
    end_ns: Option<u64>,
    ios_per_job: Option<u64>,
    interval_ns: u64,
    stop: &'a StopFlag,
    halt: &'a AtomicBool,
    live: &'a Live,
    gate: &'a Gate,
    tx: mpsc::Sender<IntervalMsg>,
    path: &'a str,
    corpus: Option<&'a Arc<Vec<u8>>>,
}

#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    offset: u64,
    len: u32,
    done: u32,
    /// Submission time in ns since t0; the low bit says whether the I/O counts (it was
    /// issued after the ramp).
    start_ns: u64,
}

#[inline(always)]
fn now_ns(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

fn io_error(ctx: &WorkerCtx, op: Op, offset: u64, errno: i32) -> Error {
    let what = match op {
        Op::Read => "reading",
        Op::Write => "writing",
        Op::Fsync => "syncing",
    };
    let e = std::io::Error::from_raw_os_error(errno);
    let hint = match errno {
        libc::ENOSPC => "; free space or use a smaller --size",
        libc::EINVAL => {
            "; the target may not accept this block size or alignment (try --buffered or another --bs)"
        }
        libc::EIO => "; the device reported a hardware or media error",
        _ => "",
    };
    let at = if op == Op::Fsync {
        String::new()
    } else {
        format!(" at offset {offset}")
    };
    Error::Runtime(format!(
        "{what} {}{at} failed: {}{hint}",
        ctx.path,
        describe_io(&e)
    ))
}

/// The per-interval accumulator of one worker.
struct Interval {
    idx: u64,
    read: Counter,
    write: Counter,
    lat_sum: u128,
    hist: LatHist,
}

impl Interval {
    fn flush(&mut self, tx: &mpsc::Sender<IntervalMsg>, next_idx: u64) {
        if self.read.ios + self.write.ios > 0 {
            let _ = tx.send(IntervalMsg {
                idx: self.idx,
                read: self.read,
                write: self.write,
                lat_sum_ns: self.lat_sum,
                hist: std::mem::replace(&mut self.hist, LatHist::coarse()),
            });
        }
        self.idx = next_idx;
        self.read = Counter::default();
        self.write = Counter::default();
        self.lat_sum = 0;
    }
}

/// Queues one request and hands it to the kernel at once; returns a submission failure
/// (other than a signal's interruption).
#[inline(always)]
fn issue<E: Engine>(eng: &mut E, req: Request) -> Option<std::io::Error> {
    if let Err(e) = eng.queue(req) {
        return Some(e);
    }
    match eng.submit(0) {
        Err(e) if e.kind() != std::io::ErrorKind::Interrupted => Some(e),
        _ => None,
    }
}

/// Issues an fsync on `slot` (which must be free).
fn issue_fsync<E: Engine>(eng: &mut E, slots: &mut [Slot], slot: u32) -> Option<std::io::Error> {
    slots[slot as usize] = Slot {
        op: Op::Fsync,
        offset: 0,
        len: 0,
        done: 0,
        start_ns: 0,
    };
    issue(
        eng,
        Request {
            slot,
            op: Op::Fsync,
            offset: 0,
            len: 0,
            buf_off: 0,
        },
    )
}

fn worker<E: Engine>(mut eng: E, ctx: &WorkerCtx, t0: Instant) -> WorkerOut {
    let spec = ctx.spec;
    let qd = spec.qd as usize;
    let bs = spec.bs as u32;
    let stream = job_stream(ctx.stream, ctx.job);
    let blocks = (ctx.span / spec.bs).max(1);
    let share = |j: u32| (blocks as u128 * j as u128 / spec.jobs as u128) as u64;
    // Jobs share the span (each starting at its own offset), except with --verify, where
    // each job owns a region so that no two writes to one block can race.
    let (region_base, region_blocks, start_block) = if spec.verify && spec.jobs > 1 {
        let (a, b) = (share(ctx.job), share(ctx.job + 1));
        (ctx.base + a * spec.bs, (b - a).max(1), 0)
    } else {
        (ctx.base, blocks, share(ctx.job))
    };
    let mut offsets = Offsets::new(
        region_base,
        region_blocks * spec.bs,
        spec.bs,
        spec.rw.is_random(),
        start_block,
        Rng::new(spec.seed, stream | 1),
    );
    let mut gens: Vec<u64> = if spec.verify {
        vec![0; region_blocks as usize]
    } else {
        Vec::new()
    };
    let mut writes_issued = 0u64;
    // With --verify: the block each slot is writing (u64::MAX: none), so that a block is
    // never written twice at once (the newer write must be the one that lands).
    let mut writing: Vec<u64> = if spec.verify {
        vec![u64::MAX; qd]
    } else {
        Vec::new()
    };
    let mut mix = Mix::new(
        spec.rw.read_pct(spec.rwmixread),
        Rng::new(spec.seed, stream | 2),
    );
    let mut data = DataGen::new(
        &spec.data,
        spec.seed,
        data_stream(stream),
        ctx.corpus.cloned(),
    );
    let mut sampler = spec.writes().then(|| Sampler::new(&spec.data));

    let mut out = WorkerOut::empty(None);
    let mut slots = vec![
        Slot {
            op: Op::Read,
            offset: 0,
            len: 0,
            done: 0,
            start_ns: 0,
        };
        qd
    ];
    let mut free: Vec<u32> = (0..qd as u32).rev().collect();
    let mut submit_err: Option<std::io::Error> = None;
    let mut comps: Vec<Completion> = Vec::with_capacity(qd * 2);
    let mut inflight = 0usize;
    let mut issued_measured = 0u64;
    let mut writes_since_sync = 0u32;
    let mut sync_inflight = false;
    let mut end_sync_state = 0u8; // 0 not yet, 1 in flight, 2 done
    let mut stopping = false;
    let mut interrupted = false;
    let mut iv = Interval {
        idx: 0,
        read: Counter::default(),
        write: Counter::default(),
        lat_sum: 0,
        hist: LatHist::coarse(),
    };
    let mut live_ios = 0u64;
    let mut live_bytes = 0u64;
    let mut live_lat = 0u64;
    let mut last_counted_ns = 0u64;

    let mut now = now_ns(t0);
    loop {
        // Decide whether to keep issuing.
        if !stopping {
            if ctx.stop.is_set() || ctx.halt.load(Ordering::Relaxed) {
                stopping = true;
                interrupted = true;
            } else if let Some(end) = ctx.end_ns
                && now >= end
            {
                stopping = true;
            }
        }
        // Fill the queue.
        while !stopping && inflight < qd && !sync_inflight {
            let measuring = now >= ctx.ramp_ns;
            if spec.fsync > 0 && writes_since_sync >= spec.fsync {
                // Every N writes: let them complete, then fsync alone.
                if inflight == 0 {
                    let slot = free.pop().expect("a free slot when nothing is in flight");
                    submit_err = submit_err.or(issue_fsync(&mut eng, &mut slots, slot));
                    inflight += 1;
                    sync_inflight = true;
                    writes_since_sync = 0;
                }
                break;
            }
            if let Some(n) = ctx.ios_per_job
                && measuring
                && issued_measured >= n
            {
                break;
            }
            let slot = free.pop().expect("inflight < qd leaves a free slot");
            let mut offset = offsets.next_offset();
            let op = if mix.is_read() { Op::Read } else { Op::Write };
            if spec.verify && op == Op::Write {
                let mut tries = 0;
                while writing.contains(&offset) && tries < 16 {
                    offset = offsets.next_offset();
                    tries += 1;
                }
                if writing.contains(&offset) {
                    // Every candidate is being written: wait for a completion.
                    free.push(slot);
                    break;
                }
                writing[slot as usize] = offset;
            }
            if op == Op::Write {
                let buf = &mut eng.buffer(slot)[..bs as usize];
                data.fill(buf);
                if spec.verify {
                    writes_issued += 1;
                    let generation = ((ctx.rep as u64 + 1) << 40)
                        | (writes_issued * spec.jobs as u64 + ctx.job as u64);
                    crate::measure::verify::stamp(buf, offset, spec.seed, generation);
                    gens[((offset - region_base) / spec.bs) as usize] = generation;
                }
                if let Some(s) = sampler.as_mut()
                    && measuring
                {
                    s.observe(buf);
                }
                writes_since_sync += 1;
            }
            if measuring {
                issued_measured += 1;
            }
            // Each request goes to the kernel as soon as it is ready (as fio does by
            // default): the device gets work a batch-preparation earlier, and measured on
            // a loop device this gave more IOPS for the same CPU per I/O.
            slots[slot as usize] = Slot {
                op,
                offset,
                len: bs,
                done: 0,
                start_ns: (now_ns(t0) & !1) | u64::from(measuring),
            };
            submit_err = submit_err.or(issue(
                &mut eng,
                Request {
                    slot,
                    op,
                    offset,
                    len: bs,
                    buf_off: 0,
                },
            ));
            inflight += 1;
            if submit_err.is_some() {
                break;
            }
        }
        // Nothing left in flight: the final flush, then leave.
        if inflight == 0 {
            if spec.end_fsync && end_sync_state == 0 && !interrupted && ctx.fd.is_some() {
                let slot = free.pop().expect("all slots free");
                submit_err = submit_err.or(issue_fsync(&mut eng, &mut slots, slot));
                inflight += 1;
                end_sync_state = 1;
            } else {
                break;
            }
        }
        // Wait for at least one completion.
        if submit_err.is_none() {
            submit_err = match eng.submit(1) {
                Err(e) if e.kind() != std::io::ErrorKind::Interrupted => Some(e),
                _ => None,
            };
        }
        match submit_err.take() {
            None => {}
            Some(e) => {
                // The engine drains what is in flight when it is dropped.
                out.error = Some(Error::io(format!("submitting I/O to {}", ctx.path), &e));
                ctx.halt.store(true, Ordering::Relaxed);
                interrupted = true;
                break;
            }
        }
        eng.reap(&mut comps);
        now = now_ns(t0);
        // A batch belongs to the interval in which it was reaped: close the previous one.
        if now >= ctx.ramp_ns {
            let idx = (now - ctx.ramp_ns) / ctx.interval_ns;
            if idx != iv.idx {
                iv.flush(&ctx.tx, idx);
            }
        }
        let in_window = now >= ctx.ramp_ns && ctx.end_ns.is_none_or(|end| now <= end);
        for &c in comps.iter() {
            let sl = slots[c.slot as usize];
            if c.result < 0 {
                if out.error.is_none() {
                    out.error = Some(io_error(ctx, sl.op, sl.offset, (-c.result) as i32));
                }
                ctx.halt.store(true, Ordering::Relaxed);
                stopping = true;
                interrupted = true;
                inflight -= 1;
                free.push(c.slot);
                continue;
            }
            if sl.op == Op::Fsync {
                inflight -= 1;
                free.push(c.slot);
                if in_window {
                    out.fsyncs += 1;
                }
                if end_sync_state == 1 {
                    end_sync_state = 2;
                    last_counted_ns = now.saturating_sub(ctx.ramp_ns);
                }
                sync_inflight = false;
                continue;
            }
            let got = c.result as u32;
            let done = sl.done + got;
            if got == 0 {
                // End of file or device: the span is larger than the target.
                if out.error.is_none() {
                    out.error = Some(Error::Runtime(format!(
                        "{} ended at offset {} before the span did; use a smaller --size",
                        ctx.path,
                        sl.offset + sl.done as u64
                    )));
                }
                ctx.halt.store(true, Ordering::Relaxed);
                stopping = true;
                interrupted = true;
                inflight -= 1;
                free.push(c.slot);
                continue;
            }
            if done < sl.len {
                // A short transfer: issue the rest, keeping the original start time.
                slots[c.slot as usize].done = done;
                submit_err = submit_err.or(issue(
                    &mut eng,
                    Request {
                        slot: c.slot,
                        op: sl.op,
                        offset: sl.offset + done as u64,
                        len: sl.len - done,
                        buf_off: done,
                    },
                ));
                continue;
            }
            inflight -= 1;
            free.push(c.slot);
            if spec.verify {
                writing[c.slot as usize] = u64::MAX;
            }
            if sl.start_ns & 1 == 0 || !in_window {
                continue;
            }
            let lat = now.saturating_sub(sl.start_ns & !1);
            let bytes = sl.len as u64;
            if sl.op == Op::Read {
                out.read.ios += 1;
                out.read.bytes += bytes;
                out.hist_read.record(lat);
                iv.read.ios += 1;
                iv.read.bytes += bytes;
            } else {
                out.write.ios += 1;
                out.write.bytes += bytes;
                out.hist_write.record(lat);
                iv.write.ios += 1;
                iv.write.bytes += bytes;
            }
            iv.lat_sum += lat as u128;
            iv.hist.record(lat);
            live_ios += 1;
            live_bytes += bytes;
            live_lat = live_lat.wrapping_add(lat);
            last_counted_ns = now - ctx.ramp_ns;
        }
        comps.clear();
        if now >= ctx.ramp_ns {
            ctx.live.ios.store(live_ios, Ordering::Relaxed);
            ctx.live.bytes.store(live_bytes, Ordering::Relaxed);
            ctx.live.lat_ns.store(live_lat, Ordering::Relaxed);
        }
    }
    iv.flush(&ctx.tx, 0);
    let measured_now = now.saturating_sub(ctx.ramp_ns);
    let size_done = ctx.ios_per_job.is_some_and(|n| issued_measured >= n);
    out.end_ns = match (ctx.end_ns, interrupted) {
        // Moved all it had to before the runtime ran out.
        (Some(_), false) if size_done => last_counted_ns,
        // Time-based and complete: the window is the runtime, plus the final flush.
        (Some(end), false) => (end - ctx.ramp_ns).max(last_counted_ns),
        // Time-based and stopped early: up to the stop, never past the planned end.
        (Some(end), true) => measured_now.min(end - ctx.ramp_ns),
        // Size-based: up to the last counted completion (or the stop).
        (None, false) => last_counted_ns,
        (None, true) => measured_now,
    };
    out.interrupted = interrupted;
    out.sampler = sampler;
    if spec.verify {
        out.gens = Some((region_base, gens));
    }
    out
}

fn run_worker(ctx: &WorkerCtx) -> WorkerOut {
    let spec = ctx.spec;
    let qd = spec.qd as usize;
    // Set up, then wait at the gate whatever happened, so the main thread never waits
    // for a worker that gave up.
    let engine = BufferPool::new(qd, spec.bs as usize, ctx.align as usize)
        .map_err(|e| Error::io("allocating I/O buffers", &e))
        .and_then(|pool| match (spec.engine, ctx.fd) {
            (EngineKind::Null, _) => Ok(AnyEngine::Null(NullEngine::new(pool, qd))),
            (EngineKind::Psync, Some(fd)) => Ok(AnyEngine::Psync(PsyncEngine::new(fd, pool, qd))),
            (EngineKind::IoUring, Some(fd)) => UringEngine::new(fd, pool, qd)
                .map(AnyEngine::Uring)
                .map_err(|e| {
                    Error::Runtime(format!(
                        "io_uring setup failed: {}; try --engine psync",
                        describe_io(&e)
                    ))
                }),
            (_, None) => Err(Error::Runtime(
                "no file descriptor for a real engine".into(),
            )),
        });
    if engine.is_err() {
        ctx.halt.store(true, Ordering::Relaxed);
    }
    let Some(t0) = ctx.gate.arrive_and_wait() else {
        return WorkerOut::empty(engine.err());
    };
    match engine {
        Ok(AnyEngine::Null(e)) => worker(e, ctx, t0),
        Ok(AnyEngine::Psync(e)) => worker(e, ctx, t0),
        Ok(AnyEngine::Uring(e)) => worker(e, ctx, t0),
        Err(e) => WorkerOut::empty(Some(e)),
    }
}

/// The engines, closed: one factory (`run_worker`), one monomorphised loop per engine.
#[allow(clippy::large_enum_variant)] // one per worker, built once
enum AnyEngine {
    Null(NullEngine),
    Psync(PsyncEngine),
    Uring(UringEngine),
}

/// A hash of the workload's shape (pattern, block size, mix), mixed into the data and
/// offset streams so that different workloads of one seed do not write the same bytes (a
/// deduplicating device must not see the 1 MiB test's data again in the 4 KiB test),
/// while the same workload stays reproducible. The engine, queue depth, sizes and target
/// are left out: the same workload on another engine or file issues the same offsets and
/// data, and `iomark data --bs B` reproduces what `run --rw write --bs B` writes.
fn spec_stream(spec: &Spec, rep: u32) -> u64 {
    let text = format!("{}/{}/{}", spec.rw.name(), spec.bs, spec.rwmixread);
    // FNV-1a 64 (Fowler, Noll, Vo).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h & !0xFFFF_FFFF_u64) ^ ((rep as u64) << 16)
}

fn job_stream(run_stream: u64, job: u32) -> u64 {
    run_stream ^ ((job as u64) << 2)
}

fn data_stream(job_stream: u64) -> u64 {
    job_stream | 3
}

/// The data generator of job `job` (0-based) in repetition `rep` (0-based) of `spec`:
/// `iomark data` uses it to produce exactly the bytes that job writes.
pub fn job_data(spec: &Spec, rep: u32, job: u32, corpus: Option<Arc<Vec<u8>>>) -> DataGen {
    let stream = data_stream(job_stream(spec_stream(spec, rep), job));
    DataGen::new(&spec.data, spec.seed, stream, corpus)
}

/// Writes `size` bytes of the stream job 1 of the first repetition of `spec` writes, in
/// `spec.bs` pieces, to `out`, and measures all of it (`iomark data`).
pub fn produce_stream(
    spec: &Spec,
    size: u64,
    out: &mut dyn std::io::Write,
    stop: &StopFlag,
) -> Result<crate::results::schema::DataMeasure> {
    let corpus = match (&spec.data.kind, &spec.data.files) {
        (DataKind::Files, Some(path)) => {
            Some(crate::workload::corpus::load_corpus(path, CORPUS_MAX)?)
        }
        _ => None,
    };
    let mut data = job_data(spec, 0, 0, corpus);
    let mut sampler = Sampler::exhaustive(&spec.data);
    let mut buf = vec![0u8; spec.bs as usize];
    let mut left = size;
    while left > 0 {
        if stop.is_set() {
            break;
        }
        data.fill(&mut buf);
        let n = left.min(buf.len() as u64) as usize;
        sampler.observe(&buf[..n]);
        if let Err(e) = out.write_all(&buf[..n]) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                break;
            }
            return Err(Error::io("writing the data stream", &e));
        }
        left -= n as u64;
    }
    out.flush()
        .map_err(|e| Error::io("writing the data stream", &e))?;
    sampler
        .measure()
        .ok_or_else(|| Error::Runtime("no data was produced".into()))
}

/// Runs one repetition on an opened target.
fn run_rep(
    spec: &Spec,
    target: &Target,
    corpus: Option<&Arc<Vec<u8>>>,
    rep: u32,
    stop: &StopFlag,
    obs: &mut dyn Observer,
) -> (Repetition, Option<Error>, Option<GenMap>) {
    target.drop_cache();
    let ramp_ns = (spec.ramp_s * 1e9) as u64;
    let end_ns = spec.runtime_s.map(|r| ramp_ns + (r * 1e9) as u64);
    // Time-based unless only a size was given; with both, whichever comes first ends it.
    let ios_per_job = if end_ns.is_some() && spec.io_size.is_none() {
        None
    } else {
        let io = spec
            .io_size
            .unwrap_or_else(|| (target.span as f64 * spec.io_spans.unwrap_or(1.0)) as u64);
        Some((io / spec.bs / spec.io_share.max(1) as u64).max(1))
    };
    let interval_ns = (spec.interval_s * 1e9) as u64;
    let halt = AtomicBool::new(false);
    let gate = Gate::default();
    let live: Vec<Live> = (0..spec.jobs).map(|_| Live::default()).collect();
    let (tx, rx) = mpsc::channel::<IntervalMsg>();
    let path = target.path.display().to_string();
    let stream = spec_stream(spec, rep);
    let total_ios = ios_per_job.map(|n| n.saturating_mul(spec.jobs as u64));

    let mut dev_before = None;
    let mut cpu_before = CpuTimes::now();
    let mut intervals: Vec<(Counter, Counter, u128, LatHist)> = Vec::new();
    let mut spawn_error = None;
    let outs: Vec<WorkerOut> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for job in 0..spec.jobs {
            let ctx = WorkerCtx {
                spec,
                job,
                rep,
                stream,
                base: target.base,
                span: target.span,
                fd: target.fd(),
                align: target.align,
                ramp_ns,
                end_ns,
                ios_per_job,
                interval_ns,
                stop,
                halt: &halt,
                live: &live[job as usize],
                gate: &gate,
                tx: tx.clone(),
                path: &path,
                corpus,
            };
            let h = std::thread::Builder::new()
                .name(format!("iomark-job{job}"))
                .spawn_scoped(scope, move || run_worker(&ctx));
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    halt.store(true, Ordering::Relaxed);
                    spawn_error = Some(Error::io("cannot start a worker thread", &e));
                    break;
                }
            }
        }
        drop(tx);
        gate.wait_ready(handles.len());
        let snapshot = || target.device.as_ref().and_then(|d| d.stat());
        if ramp_ns == 0 {
            dev_before = snapshot();
            cpu_before = CpuTimes::now();
        }
        let t0 = Instant::now();
        if spawn_error.is_some() {
            gate.call_off();
        } else {
            gate.open(t0);
        }
        let mut ramp_snapped = ramp_ns == 0;
        let mut last = (Instant::now(), 0u64, 0u64, 0u64);
        let tick = Duration::from_millis(250);
        loop {
            let elapsed = t0.elapsed();
            let wait = if !ramp_snapped {
                Duration::from_nanos(ramp_ns.saturating_sub(elapsed.as_nanos() as u64)).min(tick)
            } else {
                tick
            };
            match rx.recv_timeout(wait) {
                Ok(m) => {
                    let i = m.idx as usize;
                    if intervals.len() <= i {
                        intervals.resize_with(i + 1, || {
                            (Counter::default(), Counter::default(), 0, LatHist::coarse())
                        });
                    }
                    let slot = &mut intervals[i];
                    slot.0 += m.read;
                    slot.1 += m.write;
                    slot.2 += m.lat_sum_ns;
                    slot.3 += &m.hist;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            let now = t0.elapsed();
            if !ramp_snapped && now.as_nanos() as u64 >= ramp_ns {
                dev_before = snapshot();
                cpu_before = CpuTimes::now();
                ramp_snapped = true;
            }
            if last.0.elapsed() >= tick {
                let ios: u64 = live.iter().map(|l| l.ios.load(Ordering::Relaxed)).sum();
                let bytes: u64 = live.iter().map(|l| l.bytes.load(Ordering::Relaxed)).sum();
                let lat: u64 = live
                    .iter()
                    .map(|l| l.lat_ns.load(Ordering::Relaxed))
                    .fold(0u64, u64::wrapping_add);
                let dt = last.0.elapsed().as_secs_f64().max(1e-9);
                let dios = ios.saturating_sub(last.1);
                obs.progress(&Progress {
                    elapsed_s: now.as_secs_f64(),
                    planned_s: end_ns.map(|e| e as f64 / 1e9),
                    fraction: total_ios.map(|t| ios as f64 / t as f64),
                    iops: ios.saturating_sub(last.1) as f64 / dt,
                    bw_bytes: bytes.saturating_sub(last.2) as f64 / dt,
                    lat_mean_ns: if dios > 0 {
                        lat.wrapping_sub(last.3) as f64 / dios as f64
                    } else {
                        0.0
                    },
                    ramping: !ramp_snapped,
                });
                last = (Instant::now(), ios, bytes, lat);
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    WorkerOut::empty(Some(Error::Runtime("a worker thread panicked".into())))
                })
            })
            .collect()
    });
    let cpu = CpuTimes::now().since(cpu_before);
    let dev_after = target.device.as_ref().and_then(|d| d.stat());

    let mut read = Counter::default();
    let mut write = Counter::default();
    let mut hist_read = LatHist::precise();
    let mut hist_write = LatHist::precise();
    let mut fsyncs = 0;
    let mut end_ns = 0;
    let mut interrupted = spawn_error.is_some();
    let mut sampler: Option<Sampler> = None;
    for o in &outs {
        if let Some(s) = &o.sampler {
            match sampler.as_mut() {
                Some(m) => m.merge(s),
                None => sampler = Some(s.clone()),
            }
        }
    }
    let mut error = spawn_error;
    for o in &outs {
        read += o.read;
        write += o.write;
        hist_read += &o.hist_read;
        hist_write += &o.hist_write;
        fsyncs += o.fsyncs;
        end_ns = end_ns.max(o.end_ns);
        interrupted |= o.interrupted;
    }
    let mut job_gens = Vec::new();
    for o in outs {
        if error.is_none() {
            error = o.error;
        }
        if let Some(g) = o.gens {
            job_gens.push(g);
        }
    }
    // --verify: read every block written in this repetition back and check it. Not timed.
    let mut gen_map = None;
    let mut verify_report = None;
    if spec.verify
        && let Some(file) = target.file()
    {
        let mut map = GenMap::new(target.base, target.span, spec.bs, spec.seed);
        for (base, gens) in job_gens {
            let first = ((base - target.base) / spec.bs) as usize;
            for (i, g) in gens.into_iter().enumerate() {
                if g != 0 {
                    map.gens[first + i] = g;
                }
            }
        }
        // Read from the device, not from the page cache.
        target.drop_cache();
        match crate::measure::verify::verify(file, &map) {
            Ok(r) => {
                if r.bad() > 0 && error.is_none() {
                    error = Some(Error::Runtime(format!(
                        "{} on {}; the data read back is not what was written",
                        r.describe(),
                        path
                    )));
                }
                verify_report = Some(r);
            }
            Err(e) => {
                if error.is_none() {
                    error = Some(e);
                }
            }
        }
        gen_map = Some(map);
    }
    let elapsed_s = (end_ns as f64 / 1e9).max(1e-9);
    let dir = |c: Counter, h: &LatHist| DirStats {
        ios: c.ios,
        bytes: c.bytes,
        iops: c.ios as f64 / elapsed_s,
        bw_bytes: c.bytes as f64 / elapsed_s,
        lat_ns: h.summary(),
    };
    let total = read.ios + write.ios;
    let series = intervals
        .iter()
        .enumerate()
        .map(|(i, (r, w, lat_sum, h))| {
            let start = i as f64 * spec.interval_s;
            let end = ((i + 1) as f64 * spec.interval_s).min(elapsed_s);
            let dt = (end - start).max(1e-9);
            let n = r.ios + w.ios;
            Point {
                t_s: end,
                read_iops: r.ios as f64 / dt,
                write_iops: w.ios as f64 / dt,
                read_bw_bytes: r.bytes as f64 / dt,
                write_bw_bytes: w.bytes as f64 / dt,
                lat_mean_ns: if n > 0 {
                    *lat_sum as f64 / n as f64
                } else {
                    0.0
                },
                lat_p99_ns: h.quantile(0.99),
            }
        })
        .collect();
    let device = match (&target.device, dev_before, dev_after) {
        (Some(d), Some(b), Some(a)) => Some(DeviceDelta::between(&d.name, b, a)),
        _ => None,
    };
    let rep = Repetition {
        index: rep + 1,
        status: if interrupted {
            Status::Interrupted
        } else {
            Status::Complete
        },
        elapsed_s,
        read: dir(read, &hist_read),
        write: dir(write, &hist_write),
        fsyncs,
        cpu: Cpu {
            user_s: cpu.user_s,
            sys_s: cpu.sys_s,
            per_io_ns: if total > 0 {
                (cpu.user_s + cpu.sys_s) * 1e9 / total as f64
            } else {
                0.0
            },
        },
        device,
        series,
        data: sampler.and_then(|s| s.measure()),
        verify: verify_report,
    };
    (rep, error, gen_map)
}

/// At most this much of a `files:` corpus is read into memory and cycled.
pub const CORPUS_MAX: usize = 256 << 20;

/// Opens the target of `spec` (which must be a write workload, so the safety rules for
/// writing apply) and purges its span.
pub fn purge(
    spec: &Spec,
    policy: &TargetPolicy,
    stop: &StopFlag,
) -> Result<crate::results::schema::Purge> {
    let corpus = match (&spec.data.kind, &spec.data.files) {
        (DataKind::Files, Some(path)) => {
            Some(crate::workload::corpus::load_corpus(path, CORPUS_MAX)?)
        }
        _ => None,
    };
    let mut layout = DataGen::new(&spec.data, spec.seed, u64::MAX, corpus);
    let target = Target::open(spec, policy, &|| stop.is_set(), &mut layout)?;
    let (method, supported, note) = target.purge();
    let bytes = if supported { target.span } else { 0 };
    target.finish()?;
    Ok(crate::results::schema::Purge {
        method,
        supported,
        bytes,
        note,
    })
}

/// Fills in the run's write amplification from every source there is.
fn write_amplification(
    run: &mut Run,
    target: &Target,
    smart_before: Option<std::result::Result<crate::io::env::SmartWrites, String>>,
    smart_after: Option<std::result::Result<crate::io::env::SmartWrites, String>>,
) {
    use crate::results::schema::WriteAmplification as Wa;
    let host: u64 = run.repetitions.iter().map(|r| r.write.bytes).sum();
    let ratio = |h: Option<u64>, d: Option<u64>| match (h, d) {
        (Some(h), Some(d)) if h > 0 => Some(d as f64 / h as f64),
        _ => None,
    };
    let mut all = Vec::new();
    // The kernel's block counters of the device under the target.
    let dev: Option<u64> = run
        .repetitions
        .iter()
        .map(|r| r.device.as_ref().map(|d| d.write_bytes))
        .sum();
    all.push(Wa {
        source: "block_layer".into(),
        host_bytes: Some(host),
        device_bytes: dev,
        ratio: ratio(Some(host), dev),
        note: match &target.device {
            Some(d) => format!(
                "bytes iomark wrote against bytes the kernel sent to {} (filesystem metadata, journal and other writers included)",
                d.name
            ),
            None => "not reported: no block device visible under the target".into(),
        },
    });
    // zram: what it stores compressed against what it was given.
    if let Some((orig, compr)) = target
        .device
        .as_ref()
        .and_then(crate::io::env::zram_mm_stat)
    {
        all.push(Wa {
            source: "zram".into(),
            host_bytes: Some(orig),
            device_bytes: Some(compr),
            ratio: ratio(Some(orig), Some(compr)),
            note:
                "zram mm_stat after the run: compressed bytes stored against original bytes stored"
                    .into(),
        });
    }
    // SMART: the drive's own host and media write counters, before and after.
    let smart = match (smart_before, smart_after) {
        (Some(Ok(b)), Some(Ok(a))) => {
            let d = |x: Option<u64>, y: Option<u64>| Some(y?.saturating_sub(x?));
            let (h, m) = (
                d(b.host_bytes, a.host_bytes),
                d(b.media_bytes, a.media_bytes),
            );
            // A coarse media counter (often 1 GiB) says nothing about a short run.
            let coarse = a.media_unit.is_some_and(|u| h.is_none_or(|h| h < 16 * u));
            Wa {
                source: "smart".into(),
                host_bytes: h,
                device_bytes: if coarse { None } else { m },
                ratio: if coarse { None } else { ratio(h, m) },
                note: if coarse {
                    "the drive's media-write counter is too coarse for a run this short; not reported".into()
                } else if m.is_some() {
                    "the drive's media writes against its host writes (SMART)".into()
                } else {
                    "the drive reports host writes only; media writes not reported by this device"
                        .into()
                },
            }
        }
        (_, Some(Err(why))) | (Some(Err(why)), _) => Wa {
            source: "smart".into(),
            host_bytes: None,
            device_bytes: None,
            ratio: None,
            note: why,
        },
        _ => Wa {
            source: "smart".into(),
            host_bytes: None,
            device_bytes: None,
            ratio: None,
            note: "not reported: no block device visible under the target".into(),
        },
    };
    all.push(smart);
    let best = ["smart", "zram", "block_layer"]
        .iter()
        .find_map(|s| all.iter().find(|w| w.source == *s && w.ratio.is_some()))
        .cloned();
    run.write_amplification = best;
    run.write_amplification_sources = all;
}

/// Sleeps `secs`, waking early when asked to stop.
pub fn pause(secs: f64, stop: &StopFlag) {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < end && !stop.is_set() {
        std::thread::sleep(Duration::from_millis(50).min(end - Instant::now()));
    }
}

/// A warning when IOPS of the last third of a repetition's series differ from the first
/// third's by more than 10% (a cache filling, a device getting dirty, throttling).
fn drift_warning(rep: &Repetition) -> Option<String> {
    let iops: Vec<f64> = rep
        .series
        .iter()
        .map(|p| p.read_iops + p.write_iops)
        .collect();
    if iops.len() < 6 {
        return None;
    }
    let third = iops.len() / 3;
    let first: f64 = iops[..third].iter().sum::<f64>() / third as f64;
    let last: f64 = iops[iops.len() - third..].iter().sum::<f64>() / third as f64;
    if first <= 0.0 {
        return None;
    }
    let change = 100.0 * (last - first) / first;
    (change.abs() > 10.0).then(|| {
        format!(
            "IOPS drifted by {change:+.0}% from the first to the last third of repetition {} (a cache filling, a device getting dirty, throttling?); consider a longer --ramp",
            rep.index
        )
    })
}

fn signal_name(sig: usize) -> &'static str {
    match sig as i32 {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// Runs `spec` `repeat` times on its target and returns the run with every repetition.
/// `on_rep` is called after each repetition with the run so far (to save it).
/// Returns the run, and the error that stopped it if one did (the run then holds what was
/// measured before, marked interrupted).
pub fn run(
    spec: &Spec,
    policy: &TargetPolicy,
    repeat: u32,
    stop: &StopFlag,
    obs: &mut dyn Observer,
    on_rep: &mut dyn FnMut(&Run) -> Result<()>,
) -> Result<(Run, Option<Error>)> {
    spec.validate()?;
    let corpus = match (&spec.data.kind, &spec.data.files) {
        (DataKind::Files, Some(path)) => {
            Some(crate::workload::corpus::load_corpus(path, CORPUS_MAX)?)
        }
        _ => None,
    };
    // A new file is laid out with the workload's own data profile (a compressing device
    // then stores, and a read test reads, data of the kind asked for).
    let mut layout = DataGen::new(&spec.data, spec.seed, u64::MAX, corpus.clone());
    let target = Target::open(spec, policy, &|| stop.is_set(), &mut layout)?;
    if !spec.writes() && !target.created && spec.data != crate::plan::data::DataSpec::default() {
        return Err(Error::input(format!(
            "--rw {} on the existing {} writes nothing, so the data options would change nothing; drop them, or name a new file (it is laid out with them)",
            spec.rw.name(),
            spec.target
        )));
    }
    let mut run = Run {
        name: spec.name(),
        spec: spec.clone(),
        status: Status::Complete,
        target: TargetDesc {
            kind: target.kind,
            path: spec.target.clone(),
            offset: target.base,
            span_bytes: target.span,
            align: target.align,
            created: target.created,
            device: target.device.as_ref().map(|d| d.info()),
            filesystem: target.fs.clone(),
        },
        repetitions: Vec::new(),
        summary: Summary::default(),
        warnings: Vec::new(),
        error: None,
        repetitions_planned: repeat.max(1),
        cache_bound: false,
        study: None,
        write_amplification: None,
        write_amplification_sources: Vec::new(),
    };
    // Write amplification: the drive's counters before the first repetition.
    let smart_before = spec
        .writes()
        .then(|| target.device.as_ref().map(crate::io::env::smart_writes))
        .flatten();
    // Cache honesty: a buffered run over a span that fits in memory measures the page
    // cache. Twice the machine's memory is what it takes to defeat it.
    if !spec.direct
        && target.kind != crate::results::schema::TargetKind::None
        && let Some(avail) = crate::io::env::mem_available()
        && target.span <= avail
    {
        run.cache_bound = true;
        let total = crate::results::env::Host::capture().memory_bytes;
        run.warnings.push(format!(
            "buffered over a {} span that fits in the {} of available memory: this measured the page cache, not the device; use --size {} (2x memory) or more, or --direct",
            crate::units::fmt_size(target.span),
            crate::units::fmt_size(avail),
            crate::units::fmt_size_short((2 * total).div_ceil(1 << 30) << 30)
        ));
    }
    if let Some(note) = &spec.engine_note {
        run.warnings.push(note.clone());
    }
    let planned = repeat.max(1);
    run.repetitions_planned = planned;
    if spec.verify && target.span / spec.bs > crate::measure::verify::MAX_BLOCKS {
        return Err(Error::input(format!(
            "--verify tracks every block, and {} blocks of {} are too many; use a larger --bs or a smaller --size",
            target.span / spec.bs,
            crate::units::fmt_size(spec.bs)
        )));
    }
    let mut cumulative: Option<GenMap> = None;
    let mut failure = None;
    for rep in 0..planned {
        if stop.is_set() {
            break;
        }
        if rep > 0 && spec.pause_s > 0.0 {
            pause(spec.pause_s, stop);
            if stop.is_set() {
                break;
            }
        }
        if spec.drop_caches
            && !spec.direct
            && let Err(e) = crate::io::env::drop_page_cache()
        {
            return Err(Error::io(
                "cannot drop the page cache (--drop-caches needs root)",
                &e,
            ));
        }
        obs.rep_started(spec, rep + 1, planned);
        let (r, err, map) = run_rep(spec, &target, corpus.as_ref(), rep, stop, obs);
        if let Some(w) = drift_warning(&r) {
            run.warnings.push(w);
        }
        obs.rep_finished(spec, &r);
        // The blocks' expected state after all repetitions so far (later writes win: their
        // generations are higher).
        if let Some(m) = map {
            match cumulative.as_mut() {
                None => cumulative = Some(m),
                Some(c) => {
                    for (a, b) in c.gens.iter_mut().zip(m.gens) {
                        *a = (*a).max(b);
                    }
                }
            }
        }
        let bad_verify = r.verify.as_ref().is_some_and(|v| v.bad() > 0);
        let stopped = r.status == Status::Interrupted;
        run.repetitions.push(r);
        run.summary = Summary::of(&run.repetitions);
        // Until the last repetition is done, a saved document says the run is not
        // complete: if iomark dies now, that is the truth.
        run.status = if !stopped && rep + 1 == planned {
            Status::Complete
        } else {
            Status::Interrupted
        };
        if stopped {
            run.error = Some(match (&err, stop.signal()) {
                (Some(e), _) => e.to_string(),
                (None, 0) => "stopped early".to_string(),
                (None, sig) => format!("stopped by signal {sig} ({})", signal_name(sig)),
            });
        }
        on_rep(&run)?;
        if stopped {
            failure = err;
            break;
        }
        if bad_verify {
            // The run completed, but what it wrote did not come back: exit 1.
            failure = err;
        }
    }
    if run.repetitions.len() < planned as usize {
        run.status = Status::Interrupted;
        if run.error.is_none() && stop.is_set() {
            run.error = Some(format!(
                "stopped by signal {} ({})",
                stop.signal(),
                signal_name(stop.signal())
            ));
        }
    }
    if spec.writes() && !run.repetitions.is_empty() {
        let smart_after = target.device.as_ref().map(crate::io::env::smart_writes);
        write_amplification(&mut run, &target, smart_before, smart_after);
    }
    for (dir, d, used) in [
        ("read", &run.summary.read, spec.reads()),
        ("write", &run.summary.write, spec.writes()),
    ] {
        if used && let Some(cv) = d.iops.cv_pct.filter(|&cv| cv > 10.0) {
            run.warnings.push(format!(
                "{dir} IOPS varied by {cv:.1}% (coefficient of variation) across {} repetitions; run more repetitions or a longer --runtime before comparing",
                d.iops.n
            ));
        }
    }
    if let (Some(path), Some(map)) = (&policy.verify_state, &cumulative)
        && let Err(e) = map.save(path)
    {
        failure = failure.or(Some(e));
    }
    if let Err(e) = target.finish() {
        failure = failure.or(Some(e));
    }
    Ok((run, failure))
}

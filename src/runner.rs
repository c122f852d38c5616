//! The runner owns the threads: one worker per job, each with its own engine, buffers,
//! offset generator, data generator, histograms and interval counters. Nothing is shared
//! on the hot path but two stop flags that are only ever read there, and a per-worker
//! progress counter that only its worker writes. The main thread handles the ramp, the
//! before/after snapshots (kernel block counters, CPU time), gathers the per-interval
//! figures the workers send once an interval, and reports progress to an [`Observer`].
//! The runner never prints.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::data::DataGen;
use crate::engine::{
    BufferPool, Completion, Engine, NullEngine, Op, PsyncEngine, Request, UringEngine,
};
use crate::env::{CpuTimes, DeviceDelta};
use crate::error::{Error, Result, describe_io};
use crate::pattern::{Mix, Offsets, Rng};
use crate::results::{Cpu, DirStats, Point, Repetition, Run, Status, Summary, TargetDesc};
use crate::spec::{EngineKind, Spec, TargetPolicy};
use crate::stats::{Counter, LatHist};
use crate::target::Target;

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
    /// Nanoseconds from measurement start to the worker's last counted completion.
    end_ns: u64,
    error: Option<Error>,
}

/// Everything a worker needs, borrowed from the runner.
struct WorkerCtx<'a> {
    spec: &'a Spec,
    job: u32,
    rep: u32,
    base: u64,
    span: u64,
    fd: Option<i32>,
    align: u64,
    t0: Instant,
    ramp_ns: u64,
    end_ns: Option<u64>,
    ios_per_job: Option<u64>,
    interval_ns: u64,
    stop: &'a StopFlag,
    halt: &'a AtomicBool,
    live: &'a Live,
    tx: mpsc::Sender<IntervalMsg>,
    path: &'a str,
}

#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    offset: u64,
    len: u32,
    done: u32,
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
    Error::Runtime(format!(
        "{what} {} at offset {offset} failed: {}{hint}",
        ctx.path,
        describe_io(&e)
    ))
}

fn worker<E: Engine>(mut eng: E, ctx: &WorkerCtx) -> WorkerOut {
    let spec = ctx.spec;
    let qd = spec.qd as usize;
    let bs = spec.bs as u32;
    let stream = ((ctx.rep as u64) << 32) | ((ctx.job as u64) << 2);
    let blocks = (ctx.span / spec.bs).max(1);
    let start_block = blocks * ctx.job as u64 / spec.jobs as u64;
    let mut offsets = Offsets::new(
        ctx.base,
        ctx.span,
        spec.bs,
        spec.rw.is_random(),
        start_block,
        Rng::new(spec.seed, stream | 1),
    );
    let mut mix = Mix::new(
        spec.rw.read_pct(spec.rwmixread),
        Rng::new(spec.seed, stream | 2),
    );
    let mut data = DataGen::new(spec.seed, stream | 3);

    let mut out = WorkerOut {
        read: Counter::default(),
        write: Counter::default(),
        hist_read: LatHist::precise(),
        hist_write: LatHist::precise(),
        fsyncs: 0,
        end_ns: 0,
        error: None,
    };
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
    let mut fresh: Vec<u32> = Vec::with_capacity(qd);
    let mut comps: Vec<Completion> = Vec::with_capacity(qd * 2);
    let mut inflight = 0usize;
    let mut issued_measured = 0u64;
    let mut writes_since_sync = 0u32;
    let mut sync_inflight = false;
    let mut end_sync_state = 0u8; // 0 not yet, 1 in flight, 2 done
    let mut stopping = false;
    let mut interrupted = false;

    // Interval state.
    let mut iv_idx = 0u64;
    let mut iv_read = Counter::default();
    let mut iv_write = Counter::default();
    let mut iv_lat_sum: u128 = 0;
    let mut iv_hist = LatHist::coarse();
    let mut live_ios = 0u64;
    let mut live_bytes = 0u64;

    let mut now = now_ns(ctx.t0);
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
            if let Some(n) = ctx.ios_per_job
                && measuring
                && issued_measured >= n
            {
                break;
            }
            if spec.fsync > 0 && writes_since_sync >= spec.fsync {
                if inflight == 0 {
                    let slot = free.pop().expect("a free slot when nothing is in flight");
                    slots[slot as usize] = Slot {
                        op: Op::Fsync,
                        offset: 0,
                        len: 0,
                        done: 0,
                        start_ns: 0,
                    };
                    let _ = eng.queue(Request {
                        slot,
                        op: Op::Fsync,
                        offset: 0,
                        len: 0,
                        buf_off: 0,
                    });
                    fresh.push(slot);
                    inflight += 1;
                    sync_inflight = true;
                    writes_since_sync = 0;
                }
                break;
            }
            let slot = free.pop().expect("inflight < qd leaves a free slot");
            let offset = offsets.next_offset();
            let op = if mix.is_read() { Op::Read } else { Op::Write };
            if op == Op::Write {
                data.fill(&mut eng.buffer(slot)[..bs as usize]);
                writes_since_sync += 1;
            }
            slots[slot as usize] = Slot {
                op,
                offset,
                len: bs,
                done: 0,
                // Marks whether this I/O counts: issued after the ramp. Overwritten with the
                // submission time below.
                start_ns: u64::from(measuring),
            };
            if measuring {
                issued_measured += 1;
            }
            let _ = eng.queue(Request {
                slot,
                op,
                offset,
                len: bs,
                buf_off: 0,
            });
            fresh.push(slot);
            inflight += 1;
        }
        // Nothing left to do: the final flush, then leave.
        if inflight == 0 {
            if spec.end_fsync && end_sync_state == 0 && !interrupted && ctx.fd.is_some() {
                let slot = free.pop().expect("all slots free");
                slots[slot as usize] = Slot {
                    op: Op::Fsync,
                    offset: 0,
                    len: 0,
                    done: 0,
                    start_ns: 0,
                };
                let _ = eng.queue(Request {
                    slot,
                    op: Op::Fsync,
                    offset: 0,
                    len: 0,
                    buf_off: 0,
                });
                fresh.push(slot);
                inflight += 1;
                end_sync_state = 1;
            } else {
                break;
            }
        }
        // Submit and wait for at least one completion.
        let t_submit = now_ns(ctx.t0);
        for &s in &fresh {
            let sl = &mut slots[s as usize];
            // start_ns == 1 marked a measured I/O; keep that bit in the low bit of the time.
            let counted = sl.start_ns & 1;
            sl.start_ns = (t_submit & !1) | counted;
        }
        fresh.clear();
        match eng.submit(1) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                out.error = Some(Error::io(format!("submitting I/O to {}", ctx.path), &e));
                ctx.halt.store(true, Ordering::Relaxed);
                break;
            }
        }
        eng.reap(&mut comps);
        now = now_ns(ctx.t0);
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
            match sl.op {
                Op::Fsync => {
                    inflight -= 1;
                    free.push(c.slot);
                    if now >= ctx.ramp_ns {
                        out.fsyncs += 1;
                    }
                    if end_sync_state == 1 {
                        end_sync_state = 2;
                        out.end_ns = now.saturating_sub(ctx.ramp_ns);
                    }
                    sync_inflight = false;
                    continue;
                }
                Op::Read | Op::Write => {}
            }
            let got = c.result as u32;
            let done = sl.done + got;
            if got == 0 && sl.len > sl.done {
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
                let s = &mut slots[c.slot as usize];
                s.done = done;
                let _ = eng.queue(Request {
                    slot: c.slot,
                    op: sl.op,
                    offset: sl.offset + done as u64,
                    len: sl.len - done,
                    buf_off: done,
                });
                continue;
            }
            inflight -= 1;
            free.push(c.slot);
            let counted = sl.start_ns & 1 == 1
                && now >= ctx.ramp_ns
                && ctx.end_ns.is_none_or(|end| now <= end);
            if !counted {
                continue;
            }
            let lat = now.saturating_sub(sl.start_ns & !1);
            let bytes = sl.len as u64;
            match sl.op {
                Op::Read => {
                    out.read.ios += 1;
                    out.read.bytes += bytes;
                    out.hist_read.record(lat);
                    iv_read.ios += 1;
                    iv_read.bytes += bytes;
                }
                _ => {
                    out.write.ios += 1;
                    out.write.bytes += bytes;
                    out.hist_write.record(lat);
                    iv_write.ios += 1;
                    iv_write.bytes += bytes;
                }
            }
            iv_lat_sum += lat as u128;
            iv_hist.record(lat);
            live_ios += 1;
            live_bytes += bytes;
            out.end_ns = now - ctx.ramp_ns;
        }
        comps.clear();
        // Publish progress and close the interval when it has ended.
        if now >= ctx.ramp_ns {
            ctx.live.ios.store(live_ios, Ordering::Relaxed);
            ctx.live.bytes.store(live_bytes, Ordering::Relaxed);
            let idx = (now - ctx.ramp_ns) / ctx.interval_ns;
            if idx != iv_idx {
                let msg = IntervalMsg {
                    idx: iv_idx,
                    read: iv_read,
                    write: iv_write,
                    lat_sum_ns: iv_lat_sum,
                    hist: std::mem::replace(&mut iv_hist, LatHist::coarse()),
                };
                let _ = ctx.tx.send(msg);
                iv_idx = idx;
                iv_read = Counter::default();
                iv_write = Counter::default();
                iv_lat_sum = 0;
            }
        }
    }
    if iv_read.ios + iv_write.ios > 0 {
        let _ = ctx.tx.send(IntervalMsg {
            idx: iv_idx,
            read: iv_read,
            write: iv_write,
            lat_sum_ns: iv_lat_sum,
            hist: iv_hist,
        });
    }
    if interrupted && out.end_ns == 0 {
        out.end_ns = now.saturating_sub(ctx.ramp_ns);
    }
    if interrupted && out.error.is_none() {
        // Stopped by a signal or by another worker's error: record how far we got.
        out.end_ns = out.end_ns.max(now.saturating_sub(ctx.ramp_ns));
    }
    if let Some(end) = ctx.end_ns
        && !interrupted
        && end_sync_state != 2
    {
        out.end_ns = end - ctx.ramp_ns;
    }
    out
}

fn run_worker(ctx: &WorkerCtx) -> WorkerOut {
    let spec = ctx.spec;
    let fail = |e: Error| WorkerOut {
        read: Counter::default(),
        write: Counter::default(),
        hist_read: LatHist::precise(),
        hist_write: LatHist::precise(),
        fsyncs: 0,
        end_ns: 0,
        error: Some(e),
    };
    let pool = match BufferPool::new(spec.qd as usize, spec.bs as usize, ctx.align as usize) {
        Ok(p) => p,
        Err(e) => {
            ctx.halt.store(true, Ordering::Relaxed);
            return fail(Error::io("allocating I/O buffers", &e));
        }
    };
    let qd = spec.qd as usize;
    match (spec.engine, ctx.fd) {
        (EngineKind::Null, _) => worker(NullEngine::new(pool, qd), ctx),
        (EngineKind::Psync, Some(fd)) => worker(PsyncEngine::new(fd, pool, qd), ctx),
        (EngineKind::IoUring, Some(fd)) => match UringEngine::new(fd, pool, qd) {
            Ok(e) => worker(e, ctx),
            Err(e) => {
                ctx.halt.store(true, Ordering::Relaxed);
                fail(Error::Runtime(format!(
                    "io_uring setup failed: {}; try --engine psync",
                    describe_io(&e)
                )))
            }
        },
        (_, None) => fail(Error::Runtime(
            "no file descriptor for a real engine".into(),
        )),
    }
}

/// Runs one repetition on an opened target.
fn run_rep(
    spec: &Spec,
    target: &Target,
    rep: u32,
    stop: &StopFlag,
    obs: &mut dyn Observer,
) -> (Repetition, Option<Error>) {
    target.drop_cache();
    let ramp_ns = (spec.ramp_s * 1e9) as u64;
    let end_ns = spec.runtime_s.map(|r| ramp_ns + (r * 1e9) as u64);
    let ios_per_job = if end_ns.is_some() {
        None
    } else {
        let io = spec.io_size.unwrap_or(target.span);
        Some((io / spec.bs).max(1))
    };
    let interval_ns = (spec.interval_s * 1e9) as u64;
    let halt = AtomicBool::new(false);
    let live: Vec<Live> = (0..spec.jobs).map(|_| Live::default()).collect();
    let (tx, rx) = mpsc::channel::<IntervalMsg>();
    let path = target.path.display().to_string();

    let mut dev_before = None;
    let mut cpu_before = CpuTimes::now();
    let snapshot = |dev_before: &mut Option<_>| {
        *dev_before = target.device.as_ref().and_then(|d| d.stat());
    };
    if ramp_ns == 0 {
        snapshot(&mut dev_before);
        cpu_before = CpuTimes::now();
    }
    let t0 = Instant::now();
    let total_ios = ios_per_job.map(|n| n * spec.jobs as u64);

    let mut intervals: Vec<(Counter, Counter, u128, LatHist)> = Vec::new();
    let mut spawn_error = None;
    let outs: Vec<WorkerOut> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for job in 0..spec.jobs {
            let ctx = WorkerCtx {
                spec,
                job,
                rep,
                base: target.base,
                span: target.span,
                fd: target.fd(),
                align: target.align,
                t0,
                ramp_ns,
                end_ns,
                ios_per_job,
                interval_ns,
                stop,
                halt: &halt,
                live: &live[job as usize],
                tx: tx.clone(),
                path: &path,
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
        let mut ramp_snapped = ramp_ns == 0;
        let mut last = (Instant::now(), 0u64, 0u64);
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
                snapshot(&mut dev_before);
                cpu_before = CpuTimes::now();
                ramp_snapped = true;
            }
            if last.0.elapsed() >= tick {
                let ios: u64 = live.iter().map(|l| l.ios.load(Ordering::Relaxed)).sum();
                let bytes: u64 = live.iter().map(|l| l.bytes.load(Ordering::Relaxed)).sum();
                let dt = last.0.elapsed().as_secs_f64().max(1e-9);
                obs.progress(&Progress {
                    elapsed_s: now.as_secs_f64(),
                    planned_s: end_ns.map(|e| e as f64 / 1e9),
                    fraction: total_ios.map(|t| ios as f64 / t as f64),
                    iops: (ios - last.1) as f64 / dt,
                    bw_bytes: (bytes - last.2) as f64 / dt,
                    ramping: !ramp_snapped,
                });
                last = (Instant::now(), ios, bytes);
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| WorkerOut {
                    read: Counter::default(),
                    write: Counter::default(),
                    hist_read: LatHist::precise(),
                    hist_write: LatHist::precise(),
                    fsyncs: 0,
                    end_ns: 0,
                    error: Some(Error::Runtime("a worker thread panicked".into())),
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
    let mut error = spawn_error;
    for o in &outs {
        read += o.read;
        write += o.write;
        hist_read += &o.hist_read;
        hist_write += &o.hist_write;
        fsyncs += o.fsyncs;
        end_ns = end_ns.max(o.end_ns);
    }
    for o in outs {
        if error.is_none() {
            error = o.error;
        }
    }
    let interrupted = stop.is_set() || error.is_some() || halt.load(Ordering::Relaxed);
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
    };
    (rep, error)
}

/// A short name for a run: `randread 4k qd32`, with jobs and mix when they matter.
pub fn run_name(spec: &Spec) -> String {
    let mut s = format!(
        "{} {} qd{}",
        spec.rw.name(),
        crate::units::fmt_size_short(spec.bs),
        spec.qd
    );
    if spec.rw.is_mixed() {
        s = format!(
            "{} {}/{} {} qd{}",
            spec.rw.name(),
            spec.rwmixread,
            100 - spec.rwmixread,
            crate::units::fmt_size_short(spec.bs),
            spec.qd
        );
    }
    if spec.jobs > 1 {
        s.push_str(&format!(" x{}", spec.jobs));
    }
    if !spec.direct {
        s.push_str(" buffered");
    }
    s
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
    let target = Target::open(spec, policy)?;
    let mut run = Run {
        name: run_name(spec),
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
    };
    if let Some(note) = &spec.engine_note {
        run.warnings.push(note.clone());
    }
    let mut failure = None;
    for rep in 0..repeat.max(1) {
        if stop.is_set() {
            break;
        }
        obs.rep_started(spec, rep + 1, repeat.max(1));
        let (r, err) = run_rep(spec, &target, rep, stop, obs);
        obs.rep_finished(spec, &r);
        let stopped = r.status == Status::Interrupted;
        run.repetitions.push(r);
        run.summary = Summary::of(&run.repetitions);
        if stopped {
            run.status = Status::Interrupted;
            run.error = err.as_ref().map(|e| e.to_string());
        }
        on_rep(&run)?;
        if stopped {
            failure = err;
            break;
        }
    }
    if run.repetitions.len() < repeat.max(1) as usize {
        run.status = Status::Interrupted;
    }
    target.finish()?;
    Ok((run, failure))
}

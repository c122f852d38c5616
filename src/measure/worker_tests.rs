//! The worker's state machine on a fake engine whose completions the test decides: short
//! transfers, errors at an offset, a full queue, fsyncs.

use super::*;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

use crate::io::engine::{BufferPool, Completion, Engine, Op, Queued, Request};
use crate::measure::gate::Gate;
use crate::measure::interval::IntervalMsg;
use crate::measure::interval::Live;
use crate::plan::spec::Rw;
use crate::plan::spec::{EngineKind, Spec};
use crate::stop::StopFlag;

/// Completes requests at `submit`, as its options say.
struct Fake {
    pool: BufferPool,
    queued: Vec<Request>,
    done: Vec<Completion>,
    /// First transfers of a full block move only half of it.
    short: bool,
    /// Requests at this offset fail with EIO.
    fail_at: Option<u64>,
    /// Every other `queue` says Busy.
    busy: bool,
    flip: bool,
    /// Every request seen, in order, and when.
    log: Vec<Request>,
    at: Vec<Instant>,
}

impl Fake {
    fn new(qd: usize) -> Fake {
        Fake {
            // A slot more than the queue's depth: the worker prepares one I/O ahead.
            pool: BufferPool::new(qd + 1, 4096, 4096).unwrap(),
            queued: Vec::new(),
            done: Vec::new(),
            short: false,
            fail_at: None,
            busy: false,
            flip: false,
            log: Vec::new(),
            at: Vec::new(),
        }
    }
}

impl Engine for &mut Fake {
    fn queue(&mut self, req: Request) -> std::io::Result<Queued> {
        if self.busy {
            self.flip = !self.flip;
            if self.flip {
                return Ok(Queued::Busy);
            }
        }
        self.queued.push(req);
        Ok(Queued::Queued)
    }
    fn submit(&mut self, _wait_for: usize) -> std::io::Result<()> {
        for req in std::mem::take(&mut self.queued) {
            self.log.push(req);
            self.at.push(Instant::now());
            let result = if Some(req.offset) == self.fail_at {
                -(crate::io::sys::EIO as i64)
            } else if req.op == Op::Fsync {
                0
            } else if self.short && req.buf_off == 0 {
                (req.len / 2) as i64
            } else {
                req.len as i64
            };
            self.done.push(Completion {
                slot: req.slot,
                result,
            });
        }
        Ok(())
    }
    fn reap(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.done);
    }
    unsafe fn buffer(&mut self, slot: u32) -> &mut [u8] {
        // Safety: forwarded; the caller guarantees that the slot is not in flight.
        unsafe { self.pool.slot_mut(slot) }
    }
}

fn spec(rw: Rw, qd: u32) -> Spec {
    let mut s = Spec::new("fake");
    s.rw = rw;
    s.rwmixread = rw.read_pct(50);
    s.qd = qd;
    s.engine = EngineKind::Null;
    s
}

/// Runs one worker over a 64-block span, size-based (`ios` I/Os), on `eng`.
fn run(spec: &Spec, eng: &mut Fake, ios: u64) -> (WorkerOut, Vec<IntervalMsg>) {
    run_stopped(spec, eng, ios, &StopFlag::new())
}

/// As [`run`], with the run's stop flag.
fn run_stopped(
    spec: &Spec,
    eng: &mut Fake,
    ios: u64,
    stop: &StopFlag,
) -> (WorkerOut, Vec<IntervalMsg>) {
    let (halt, live, gate) = (AtomicBool::new(false), Live::default(), Gate::default());
    let (tx, rx) = mpsc::channel();
    let ctx = WorkerCtx {
        spec,
        job: 0,
        slot: 0,
        workers: 1,
        rep: 0,
        stream: 0,
        base: 0,
        span: 64 * spec.bs,
        fd: None,
        align: 4096,
        ramp_ns: 0,
        end_ns: None,
        ios_per_job: Some(ios),
        bytes_per_job: None,
        interval_ns: 1_000_000_000,
        stop,
        halt: &halt,
        counters: &crate::measure::launch::RampCounters::new(None, 0),
        live: &live,
        gate: &gate,
        tx: crate::measure::interval::LaneTx::one(tx),
        path: "fake",
        corpus: None,
        files: &[],
    };
    let data = crate::measure::launch::worker_data(&ctx);
    let out = Worker::new(eng, &ctx, data, Instant::now()).run();
    drop(ctx);
    (out, rx.try_iter().collect())
}

#[test]
fn a_size_based_run_counts_exactly_its_ios() {
    let s = spec(Rw::RandRw, 4);
    let mut eng = Fake::new(4);
    let (out, intervals) = run(&s, &mut eng, 100);
    assert!(out.error.is_none() && !out.interrupted);
    assert_eq!(out.tally.read.ios + out.tally.write.ios, 100);
    assert_eq!(out.tally.read.bytes + out.tally.write.bytes, 100 * 4096);
    assert!(
        out.tally.read.ios > 20 && out.tally.write.ios > 20,
        "a 50/50 mix"
    );
    assert_eq!(
        out.tally.hist_read.count() + out.tally.hist_write.count(),
        100
    );
    let in_series: u64 = intervals
        .iter()
        .map(|m| m.sum.read.ios + m.sum.write.ios)
        .sum();
    assert_eq!(in_series, 100, "every counted I/O is in the series too");
    let sampler = out.sampler.expect("writes are sampled");
    assert!(
        sampler.tables_advised(),
        "the sampler's tables in huge pages"
    );
}

#[test]
fn a_short_transfer_is_resumed_and_counted_once() {
    let s = spec(Rw::Read, 2);
    let mut eng = Fake::new(2);
    eng.short = true;
    let (out, _) = run(&s, &mut eng, 10);
    assert_eq!(out.tally.read.ios, 10);
    assert_eq!(out.tally.read.bytes, 10 * 4096);
    // Every I/O went out twice: the first half, then the rest from the buffer's middle.
    assert_eq!(eng.log.len(), 20);
    assert!(eng.log.iter().any(|r| r.buf_off == 2048 && r.len == 2048));
}

#[test]
fn an_error_stops_the_worker_and_names_the_offset() {
    let s = spec(Rw::Read, 1);
    let mut eng = Fake::new(1);
    eng.fail_at = Some(3 * 4096);
    let (out, _) = run(&s, &mut eng, 10);
    let msg = out.error.expect("an error").to_string();
    assert!(msg.contains("offset 12288"), "{msg}");
    assert!(out.interrupted);
    assert_eq!(out.tally.read.ios, 3, "the blocks before the failing one");
}

#[test]
fn a_busy_engine_still_gets_every_request() {
    let s = spec(Rw::Write, 4);
    let mut eng = Fake::new(4);
    eng.busy = true;
    let (out, _) = run(&s, &mut eng, 50);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(out.tally.write.ios, 50);
}

#[test]
fn fsync_every_n_writes_but_not_after_the_last() {
    let mut s = spec(Rw::Write, 4);
    s.fsync = 8;
    let mut eng = Fake::new(4);
    let (out, _) = run(&s, &mut eng, 32);
    let syncs = eng.log.iter().filter(|r| r.op == Op::Fsync).count();
    // After writes 8, 16 and 24, each once the writes before it have completed; none
    // after the last write (fio's sync comes before the next I/O: there is none).
    assert_eq!(syncs, 3);
    assert_eq!(out.tally.fsyncs, 3);
    // No I/O is in flight while an fsync is: the one before every sync is a write.
    for w in eng.log.windows(2) {
        if w[1].op == Op::Fsync {
            assert_eq!(w[0].op, Op::Write);
        }
    }
}

/// Think time on an asynchronous engine, counted in completions: as in fio, which
/// reaps one completion at a time, the worker issues again after each completion until
/// the batch is over, so the first batch at QD 8 with `--thinktime-blocks 4` is the 8
/// issued and 3 more (one after each of the first three completions); the 4 completed
/// after the batch ended and the 3 drained count towards the next, which ends after one
/// issue; that one, drained, counts towards the third, so it needs 3 completions: 8 and
/// 2 more. The same 10 and 1 as fio 3.33's `io_submit` calls between its pauses.
#[test]
fn think_time_refills_between_completions_as_fio() {
    let mut s = spec(Rw::RandRead, 8);
    s.engine = EngineKind::Libaio;
    s.thinktime_us = Some(3000);
    s.thinktime_blocks = Some(4);
    let mut eng = Fake::new(8);
    let (out, _) = run(&s, &mut eng, 34);
    assert_eq!(out.tally.read.ios, 34);
    // Requests separated by a pause (3 ms; I/Os between pauses follow each other at once).
    let mut batches = vec![1];
    for w in eng.at.windows(2) {
        match w[1] - w[0] >= Duration::from_micros(2500) {
            true => batches.push(1),
            false => *batches.last_mut().unwrap() += 1,
        }
    }
    assert_eq!(batches, [11, 1, 10, 1, 10, 1], "I/Os between pauses");
}

#[test]
fn a_stop_before_the_start_counts_nothing() {
    let s = spec(Rw::Read, 4);
    let mut eng = Fake::new(4);
    let stop = StopFlag::new();
    stop.raise(2);
    let (out, _) = run_stopped(&s, &mut eng, 10, &stop);
    assert!(out.interrupted);
    assert_eq!(out.tally.read.ios, 0);
    assert!(eng.log.is_empty());
}

/// The same worker on every real engine over a scratch file: a size-based mix with an
/// fsync every 8 writes and a final one counts exactly its I/Os and flushes, whatever the
/// engine, its depth or its batching.
#[test]
fn every_real_engine_runs_the_worker_to_the_same_counts() {
    use crate::io::engine::{LibaioEngine, MmapEngine, PsyncEngine, UringEngine};
    use crate::plan::spec::EngineOpts;
    use std::os::fd::AsFd;

    fn go<E: Engine>(s: &Spec, file: &std::fs::File, eng: E) -> WorkerOut {
        let (halt, live, gate, stop) = (
            AtomicBool::new(false),
            Live::default(),
            Gate::default(),
            StopFlag::new(),
        );
        let (tx, _rx) = mpsc::channel();
        let ctx = WorkerCtx {
            spec: s,
            job: 0,
            slot: 0,
            workers: 1,
            rep: 0,
            stream: 0,
            base: 0,
            span: 64 * s.bs,
            fd: Some(file.as_fd()),
            align: 4096,
            ramp_ns: 0,
            end_ns: None,
            ios_per_job: Some(200),
            bytes_per_job: None,
            interval_ns: 1_000_000_000,
            stop: &stop,
            halt: &halt,
            counters: &crate::measure::launch::RampCounters::new(None, 0),
            live: &live,
            gate: &gate,
            tx: crate::measure::interval::LaneTx::one(tx),
            path: "scratch",
            corpus: None,
            files: &[],
        };
        let data = crate::measure::launch::worker_data(&ctx);
        Worker::new(eng, &ctx, data, Instant::now()).run()
    }
    let f = tempfile::NamedTempFile::new().unwrap();
    f.as_file().set_len(64 * 4096).unwrap();
    let file = f.as_file();
    let pool = |qd: usize| BufferPool::new(qd + 1, 4096, 4096).unwrap();
    let batched = EngineOpts {
        batch_submit: 4,
        batch_complete: 3,
        ..EngineOpts::default()
    };
    let mut s = spec(Rw::RandRw, 8);
    s.fsync = 8;
    s.end_fsync = true;
    let mut outs = vec![
        (
            "libaio",
            go(
                &s,
                file,
                LibaioEngine::new(file.as_fd(), pool(8), 8, &EngineOpts::default()).unwrap(),
            ),
        ),
        (
            "libaio batched",
            go(
                &s,
                file,
                LibaioEngine::new(file.as_fd(), pool(8), 8, &batched).unwrap(),
            ),
        ),
    ];
    if crate::io::engine::probe_io_uring().is_ok() {
        let u = UringEngine::new(file.as_fd(), pool(8), 8, &batched, None).unwrap();
        outs.push(("io_uring batched", go(&s, file, u)));
    }
    s.qd = 1;
    outs.push((
        "psync",
        go(&s, file, PsyncEngine::new(file.as_fd(), pool(1), 1)),
    ));
    let m = MmapEngine::new(file.as_fd(), pool(1), 0, 64 * 4096, true, Some(true)).unwrap();
    outs.push(("mmap", go(&s, file, m)));
    for (name, out) in outs {
        assert!(out.error.is_none(), "{name}: {:?}", out.error);
        assert_eq!(out.tally.read.ios + out.tally.write.ios, 200, "{name}");
        // One fsync after every 8 writes, and the final one.
        let w = out.tally.write.ios;
        assert_eq!(out.tally.fsyncs, w / 8 + 1, "{name}: fsyncs for {w} writes");
        assert!(w > 50 && out.tally.read.ios > 50, "{name}: a mix");
    }
}

/// With a data pool no larger than the writes in flight (`--data-pool` at fio's distance,
/// qd × bs), the write prepared ahead found its units still lent and was copied out of
/// the pool, every time (zram: 1.2x the CPU per write of the same job with the default
/// pool). It is not prepared ahead then: each write is lent, none copied.
#[test]
fn a_pool_as_small_as_the_queue_still_lends_every_write() {
    let mut s = spec(Rw::Write, 8);
    s.data.pool = 8 * 4096;
    assert!(s.prepares_ahead());
    let mut eng = Fake::new(8);
    let (out, _) = run(&s, &mut eng, 200);
    assert_eq!(out.tally.write.ios, 200);
    let writes = eng.log.iter().filter(|r| r.op == Op::Write);
    let copied = writes.clone().filter(|r| r.ext.is_none()).count();
    assert_eq!(writes.count(), 200);
    assert_eq!(copied, 0, "writes copied out of the pool");
}

/// A pool smaller than the writes in flight (4 units for 8 writes of one): a write whose
/// units are still lent is copied out of the pool, as `warnings::small_pool` says; the
/// warning is given for that spec and not for a pool of qd x bs.
#[test]
fn a_pool_smaller_than_the_queue_copies_writes_and_says_so() {
    let mut s = spec(Rw::Write, 8);
    s.data.pool = 4 * 4096;
    let mut eng = Fake::new(8);
    let (out, _) = run(&s, &mut eng, 200);
    assert_eq!(out.tally.write.ios, 200);
    let copied = (eng.log.iter())
        .filter(|r| r.op == Op::Write && r.ext.is_none())
        .count();
    assert!(copied > 50, "{copied} of 200 writes copied out of the pool");
    let said = crate::measure::warnings::small_pool(&s).expect("a warning");
    assert!(said.contains("--data-pool 16 KiB is smaller"), "{said}");
    s.data.pool = 8 * 4096;
    assert_eq!(crate::measure::warnings::small_pool(&s), None);
}

/// Zeros and a pattern: every write's bytes depend on its length alone, and each write
/// filled its buffer afresh (a 128 KiB write of zeros: 2.5 µs of CPU on the null engine,
/// 5.5x fio's, which fills its buffers once). They are sent from one region filled once:
/// none copied, each write's bytes what `DataGen::fill` writes for its length.
#[test]
fn constant_profiles_are_sent_from_one_region() {
    use crate::plan::data::{DataKind, DataSpec};
    for (data, kind, pattern) in [
        ("zeros", DataKind::Zeros, None),
        ("a pattern", DataKind::Pattern, Some("a1b2c3".to_string())),
    ] {
        let mut s = spec(Rw::Write, 4);
        s.data = DataSpec {
            kind,
            pattern,
            ..DataSpec::default()
        };
        let mut eng = Fake::new(4);
        let (out, _) = run(&s, &mut eng, 3000);
        assert_eq!(out.tally.write.ios, 3000, "{data}");
        let writes = eng.log.iter().filter(|r| r.op == Op::Write);
        assert_eq!(writes.clone().count(), 3000, "{data}");
        let copied = writes.filter(|r| r.ext.is_none()).count();
        assert_eq!(copied, 0, "{data}: writes filled into their buffers");
        assert!(
            out.sampler
                .as_ref()
                .and_then(|m| m.measure())
                .is_some_and(|m| m.dedup_pct.is_some_and(|p| p >= 99.0)),
            "{data}: measured as written (one content: every unit but the first a copy)"
        );
    }
}

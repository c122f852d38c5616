//! One repetition: start a worker per job behind the gate, take the "before" snapshots
//! (kernel block counters, CPU time) when the ramp ends, gather the workers' intervals
//! and report progress to the sink while they run, then merge what they return into a
//! [`Repetition`] and, with `--verify`, read back what they wrote (`verify::verify_back`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use crate::error::Error;
use crate::io::env::BlockStat;
use crate::io::target::Target;
use crate::measure::gate::Gate;
use crate::measure::interval::{IntervalMsg, IntervalSum, LaneTx, Live, all_lanes, gather};
use crate::measure::launch::run_worker;
use crate::measure::launch::{RampCounters, WorkFile, WorkerCtx};
use crate::measure::merge::{CpuMark, Merged, WindowCpu};
use crate::measure::monitor::Monitor;
use crate::measure::targets::target_reps;
use crate::measure::verify::{GenMap, verify_back};
use crate::measure::worker::WorkerOut;
use crate::plan::spec::Spec;
use crate::results::env::DeviceDelta;
use crate::results::schema::{Repetition, VerifyReport};
use crate::results::sink::Sink;
use crate::results::stats::LatHist;
use crate::stop::StopFlag;
use crate::workload::seed::{spec_stream, target_stream};

pub(crate) use crate::measure::window::{Window, files_window};

/// What one repetition produced.
pub(crate) struct RepOutcome {
    pub(crate) rep: Repetition,
    /// The error that stopped it, if one did.
    pub(crate) error: Option<Error>,
    /// With --verify: what every block must hold now.
    pub(crate) gens: Option<GenMap>,
    /// How long the workers took to return once the run was asked to stop, if it was.
    pub(crate) stop_wait_s: Option<f64>,
    /// The merged latency histograms (reads, writes).
    pub(crate) hists: (LatHist, LatHist),
    /// `--stonewall` in one process: the target whose jobs finished first, and when.
    pub(crate) wall: Option<(String, f64)>,
}

/// What the main thread collects while the workers run.
pub(crate) struct Watch {
    /// Each lane's intervals.
    pub(crate) intervals: Vec<Vec<IntervalSum>>,
    /// Each lane's device counters when the window began.
    dev_before: Vec<Option<BlockStat>>,
    pub(crate) cpu_before: CpuMark,
    pub(crate) spawn_error: Option<Error>,
    pub(crate) sink_error: Option<Error>,
    /// A job below its minimum rate (`measure::min_rate`): its lane, and the error.
    pub(crate) rate_min: Option<(usize, Error)>,
    /// Seconds from the stop (signal, halt, the window's end) to the last worker's return.
    pub(crate) stop_wait_s: Option<f64>,
    /// `--stonewall`: who finished first (a target here, or another rank), when, and
    /// whether it was a target of this process.
    walled: Option<(String, f64, bool)>,
}

/// One set of workers behind the gate: `spec.jobs` workers of one workload on one opened
/// target. A run on several targets has a lane per target; runs measured together (the
/// jobs of a fio group, `measure::group`) a lane per run.
pub(crate) struct Lane<'a> {
    pub(crate) spec: &'a Spec,
    pub(crate) target: &'a Target,
    pub(crate) win: Window,
    /// The lane's offset and data streams.
    pub(crate) stream: u64,
    pub(crate) corpus: Option<&'a Arc<Vec<u8>>>,
    /// Its workers: `spec.jobs`, or none for a target served by the first lane's
    /// workers (`--file-service`).
    pub(crate) jobs: u32,
    /// `--file-service`: every target, served by this lane's workers (each its
    /// `Spec::files_of_job`); empty otherwise.
    pub(crate) files: &'a [WorkFile<'a>],
}

impl<'a> Lane<'a> {
    /// The files job `job` of this lane serves (none: the lane's target alone) and its
    /// window: with several files, its I/O count covers all of them.
    fn job_files(&self, job: u32) -> (&'a [WorkFile<'a>], Window) {
        if self.files.is_empty() {
            return (self.files, self.win);
        }
        let files = &self.files[self.spec.files_of_job(job)];
        (files, files_window(self.spec, files, self.win))
    }
}

/// Runs repetition `rep` (0-based) of `spec` on its opened targets (one, or several
/// whose jobs all start behind one gate).
pub(crate) fn run_rep(
    spec: &Spec,
    targets: &[Target],
    corpus: Option<&Arc<Vec<u8>>>,
    rep: u32,
    stop: &StopFlag,
    sink: &mut dyn Sink,
) -> RepOutcome {
    targets.iter().for_each(|t| t.prepare_cache(spec));
    let files = work_files(spec, targets);
    let lanes: Vec<Lane> = (targets.iter().enumerate())
        .map(|(t, target)| Lane {
            spec,
            target,
            win: Window::of(spec, target.span),
            stream: target_stream(spec_stream(spec, rep), t as u32),
            corpus,
            // With --file-service the first lane's workers serve every target.
            jobs: if files.is_empty() || t == 0 {
                spec.jobs
            } else {
                0
            },
            files: if t == 0 { &files } else { &[] },
        })
        .collect();
    let (outs, mut watch) = drive(&lanes, rep, stop, sink);
    let cpu = WindowCpu::since(watch.cpu_before);
    let devices = watch.device_deltas(&lanes, &outs);
    // Several targets on one device (files in one filesystem: fio's nrfiles) count
    // its counters once.
    let mut seen: Vec<&str> = Vec::new();
    let distinct = devices.iter().map(Option::as_ref).filter(|d| {
        let Some(d) = d else { return true };
        let new = !seen.contains(&d.name.as_str());
        seen.push(&d.name);
        new
    });
    let device = crate::results::targets::device_sum(distinct);
    let mut merged = Merged::of(outs, targets.len());
    let rate_min = watch.rate_min.take().map(|(_, e)| e);
    merged.interrupted |= watch.spawn_error.is_some() || watch.sink_error.is_some();
    merged.interrupted |= rate_min.is_some();
    let mut error = watch
        .spawn_error
        .take()
        .or(watch.sink_error.take())
        .or(rate_min);
    error = error.or(merged.error.take());
    // Ended by the stonewall, and by nothing else: the repetition ended as planned.
    if watch.walled.is_some() && error.is_none() && !stop.is_set() {
        merged.interrupted = false;
    }
    let (gens, verify, each) = match spec.verify {
        true => verify_all(spec, targets, &mut merged, &mut error, (stop, sink)),
        false => (None, None, Vec::new()),
    };
    // Stopped while writing or reading back: the repetition did not end as planned.
    merged.interrupted |= stop.is_set();
    let parts = std::mem::take(&mut merged.parts);
    let intervals = all_lanes(&watch.intervals);
    let mut rep = merged.repetition(spec, rep, cpu, device, &intervals, stop);
    rep.verify = verify;
    rep.targets = target_reps(targets, &parts, devices);
    for (t, v) in rep.targets.iter_mut().zip(each) {
        t.verify = v;
    }
    RepOutcome {
        rep,
        error,
        gens,
        stop_wait_s: watch.stop_wait_s,
        hists: (merged.all.hist_read, merged.all.hist_write),
        wall: (watch.walled).filter(|w| w.2).map(|(by, at, _)| (by, at)),
    }
}

/// `--verify`: reads back what the workers wrote, target by target (several with
/// `--file-service`). Returns the blocks' map (one target only: it is what
/// `--verify-state` saves), the repetition's report (the targets' added up) and each
/// target's own when there are several.
fn verify_all(
    spec: &Spec,
    targets: &[Target],
    merged: &mut Merged,
    error: &mut Option<Error>,
    (stop, sink): (&StopFlag, &mut dyn Sink),
) -> (
    Option<GenMap>,
    Option<VerifyReport>,
    Vec<Option<VerifyReport>>,
) {
    let mut all = std::mem::take(&mut merged.gens);
    let mut each = Vec::new();
    let mut maps = Vec::new();
    for (t, target) in targets.iter().enumerate() {
        let (mine, rest) = all.into_iter().partition(|g| g.0 == t);
        all = rest;
        let gens = mine.into_iter().map(|(_, base, g)| (base, g)).collect();
        let (map, report) = verify_back(spec, target, gens, error, (stop, &mut *sink));
        maps.push(map);
        each.push(report);
    }
    let total = (each.iter().flatten()).fold(None, |sum: Option<VerifyReport>, r| {
        Some(sum.map_or_else(|| r.clone(), |s| s.plus(r)))
    });
    let map = if targets.len() == 1 {
        maps.pop().flatten()
    } else {
        None
    };
    if targets.len() == 1 {
        each.clear();
    }
    (map, total, each)
}

/// `--file-service`: every target as a file the workers serve (none otherwise).
pub(crate) fn work_files<'a>(spec: &Spec, targets: &'a [Target]) -> Vec<WorkFile<'a>> {
    if !spec.serves_files() || targets.len() < 2 {
        return Vec::new();
    }
    (targets.iter().enumerate())
        .map(|(t, target)| WorkFile {
            fd: target.fd(),
            base: target.base,
            span: target.span,
            path: target.path.to_str().unwrap_or("the target"),
            target: t,
        })
        .collect()
}

/// The I/Os every job of every lane issues, when all are size-based.
fn total_ios(lanes: &[Lane]) -> Option<u64> {
    let per_job = |l: &Lane, j: u32| match l.files.is_empty() {
        true => l.win.ios_per_job,
        false => files_window(l.spec, &l.files[l.spec.files_of_job(j)], l.win).ios_per_job,
    };
    (lanes.iter())
        .flat_map(|l| (0..l.jobs).map(move |j| per_job(l, j)))
        .sum()
}

impl Watch {
    fn new(lanes: usize) -> Watch {
        Watch {
            intervals: (0..lanes).map(|_| Vec::new()).collect(),
            dev_before: vec![None; lanes],
            cpu_before: CpuMark::now(),
            spawn_error: None,
            sink_error: None,
            rate_min: None,
            stop_wait_s: None,
            walled: None,
        }
    }

    /// Each lane's device counters, after minus before. "Before" is read when the ramp
    /// ends and "after" once the workers have drained their queues: with direct I/O (each
    /// I/O one the device does) the lane's own I/Os the device did in between that iomark
    /// does not count are taken off: the ramp's still in flight at the first reading, and
    /// those that completed after the window's end (a QD 4096 run's 16 MiB were "more
    /// than iomark's", blamed on other processes, and raised the write amplification).
    /// With `--file-service` the lane's workers serve targets on other devices too: left
    /// as read.
    pub(crate) fn device_deltas(
        &self,
        lanes: &[Lane],
        outs: &[(usize, WorkerOut)],
    ) -> Vec<Option<DeviceDelta>> {
        (lanes.iter().enumerate().zip(&self.dev_before))
            .map(|((i, l), before)| {
                let d = l.target.device.as_ref()?;
                let mut delta = DeviceDelta::between(&d.name, (*before)?, d.stat()?);
                if l.spec.direct && l.files.is_empty() {
                    for (_, o) in outs.iter().filter(|(lane, _)| *lane == i) {
                        delta.less_own(o.tally.unmeasured_read, o.tally.unmeasured_write);
                    }
                }
                Some(delta)
            })
            .collect()
    }
}

/// The main thread's view of the lanes' windows: the ramp of the first lane (when the
/// device counters are read), the latest end when every lane is time-based.
fn watched_window(lanes: &[Lane]) -> Window {
    let mut win = lanes[0].win;
    if lanes.len() > 1 {
        let ends: Option<Vec<u64>> = lanes.iter().map(|l| l.win.end_ns).collect();
        win.end_ns = ends.and_then(|e| e.into_iter().max());
    }
    win
}

/// Starts the workers (`spec.jobs` per lane), opens the one gate and watches them until
/// every one has finished. Returns each worker's output with the index of its lane.
pub(crate) fn drive(
    lanes: &[Lane],
    rep: u32,
    stop: &StopFlag,
    sink: &mut dyn Sink,
) -> (Vec<(usize, WorkerOut)>, Watch) {
    let halt = AtomicBool::new(false);
    let gate = Gate::default();
    let win = watched_window(lanes);
    let counters: Vec<RampCounters> = (lanes.iter())
        .map(|l| RampCounters::new(l.target.device.as_ref(), win.ramp_ns))
        .collect();
    let lane_jobs: Vec<usize> = lanes.iter().map(|l| l.jobs as usize).collect();
    let live: Vec<Live> = (0..lane_jobs.iter().sum::<usize>())
        .map(|_| Live::default())
        .collect();
    let (tx, rx) = mpsc::channel::<IntervalMsg>();
    let paths: Vec<String> = (lanes.iter())
        .map(|l| l.target.path.display().to_string())
        .collect();
    let mut watch = Watch::new(lanes.len());
    let outs = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let every_job =
            (lanes.iter().enumerate()).flat_map(|(t, l)| (0..l.jobs).map(move |j| (t, j)));
        // Slots count on from the jobs of a fio file before these (its split counts them).
        let first = lanes.first().map_or(0, |l| l.spec.engine_opts.cpus_after);
        for (n, (t, job)) in every_job.enumerate() {
            let Lane {
                spec,
                target,
                stream,
                corpus,
                ..
            } = lanes[t];
            let (files, win) = lanes[t].job_files(job);
            let (base, span, fd, path) = match files.first() {
                Some(f) => (f.base, f.span, f.fd, f.path),
                None => (target.base, target.span, target.fd(), paths[t].as_str()),
            };
            let ctx = WorkerCtx {
                spec,
                job,
                slot: first + n as u32,
                workers: live.len() as u32,
                rep,
                stream,
                base,
                span,
                fd,
                align: target.align,
                ramp_ns: win.ramp_ns,
                end_ns: win.end_ns,
                ios_per_job: win.ios_per_job,
                bytes_per_job: win.bytes_per_job,
                interval_ns: (spec.interval_s * 1e9) as u64,
                stop,
                halt: &halt,
                counters: &counters[t],
                live: &live[n],
                gate: &gate,
                tx: LaneTx {
                    lane: t,
                    tx: tx.clone(),
                },
                path,
                corpus,
                files,
            };
            let name = match lanes.len() {
                1 => format!("iomark-job{job}"),
                _ => format!("iomark-t{t}job{job}"),
            };
            let h = std::thread::Builder::new()
                .name(name)
                .spawn_scoped(scope, move || run_worker(&ctx));
            match h {
                Ok(h) => handles.push((t, h)),
                Err(e) => {
                    halt.store(true, Ordering::Relaxed);
                    watch.spawn_error = Some(Error::io("cannot start a worker thread", &e));
                    break;
                }
            }
        }
        drop(tx);
        gate.wait_ready(handles.len());
        let snapshot = || -> Vec<Option<BlockStat>> {
            (lanes.iter())
                .map(|l| l.target.device.as_ref().and_then(|d| d.stat()))
                .collect()
        };
        if win.ramp_ns == 0 {
            watch.dev_before = snapshot();
            watch.cpu_before = CpuMark::now();
        }
        meet_at_gate(sink, &halt, &mut watch);
        let t0 = Instant::now();
        if watch.spawn_error.is_some() {
            gate.call_off();
        } else {
            gate.open(t0);
        }
        let mins = lanes
            .iter()
            .map(|l| (l.spec, l.target.path.display().to_string()));
        let mut monitor = Monitor::new(t0, win, total_ios(lanes))
            .with_min_rates(crate::measure::min_rate::MinRates::of(mins));
        let ctl = Controls {
            stop,
            halt: &halt,
            live: &live,
            lane_jobs: &lane_jobs,
            snapshot: &snapshot,
            stonewall: lanes[0].spec.stonewall,
            paths: &paths,
        };
        watch_workers(&rx, &mut watch, &mut monitor, &ctl, sink);
        // Every worker has dropped its sender: they have all returned.
        watch.stop_wait_s = monitor.stop_wait_s();
        join_workers(handles)
    });
    // A lane's first job read its counters as it crossed the ramp's end: closer to the
    // workers' own start than the main thread's reading above.
    for (before, c) in watch.dev_before.iter_mut().zip(&counters) {
        if let Some(stat) = c.before() {
            *before = Some(stat);
        }
    }
    (outs, watch)
}

/// Each worker's output with its lane; a worker that panicked gives an empty output
/// carrying the error.
fn join_workers(
    handles: Vec<(usize, std::thread::ScopedJoinHandle<'_, WorkerOut>)>,
) -> Vec<(usize, WorkerOut)> {
    (handles.into_iter())
        .map(|(t, h)| {
            let out = h.join().unwrap_or_else(|_| {
                WorkerOut::empty(Some(Error::runtime("a worker thread panicked")))
            });
            (t, out)
        })
        .collect()
}

/// Tells the sink every job waits at the gate (a scaled-out run meets the other ranks
/// here); a sink that fails or says stop calls the repetition off.
fn meet_at_gate(sink: &mut dyn Sink, halt: &AtomicBool, watch: &mut Watch) {
    let stop = match sink.gate_ready() {
        Ok(true) => return,
        Ok(false) => Error::runtime("stopped before the start"),
        Err(e) => e,
    };
    halt.store(true, Ordering::Relaxed);
    watch.spawn_error.get_or_insert(stop);
}

/// What the main thread watches and controls while the workers run.
struct Controls<'a> {
    stop: &'a StopFlag,
    halt: &'a AtomicBool,
    live: &'a [Live],
    /// How many of `live` each lane has, in order.
    lane_jobs: &'a [usize],
    /// Every lane's device counters now.
    snapshot: &'a dyn Fn() -> Vec<Option<BlockStat>>,
    /// `--stonewall`, and the targets' paths (to name the first one done).
    stonewall: bool,
    paths: &'a [String],
}

impl Controls<'_> {
    /// `--stonewall`: whether this repetition may still be ended by the first to finish
    /// (nothing else has ended it: a stop, a failed job, the time-based window).
    fn wall_open(&self, watch: &Watch, monitor: &Monitor) -> bool {
        self.stonewall
            && watch.walled.is_none()
            && !self.stop.is_set()
            && !self.halt.load(Ordering::Relaxed)
            && !monitor.window_over()
    }

    /// The first of several targets whose jobs have all returned, if one has.
    fn target_done(&self) -> Option<&String> {
        if self.paths.len() < 2 {
            return None;
        }
        let mut from = 0;
        for (&n, p) in self.lane_jobs.iter().zip(self.paths) {
            let lane = &self.live[from..from + n];
            from += n;
            // A lane without workers (its target served by another's) never finishes.
            if n > 0 && lane.iter().all(|w| w.done.load(Ordering::Relaxed)) {
                return Some(p);
            }
        }
        None
    }

    /// Checks for the first to finish (a target here, or another rank through the
    /// sink) and stops every job if one has.
    fn check_wall(&self, watch: &mut Watch, monitor: &Monitor, sink: &mut dyn Sink) {
        if !self.wall_open(watch, monitor) {
            return;
        }
        let now = monitor.t0.elapsed().as_secs_f64();
        let wall = match self.target_done() {
            Some(p) => Some((format!("target {p}"), now, true)),
            None => sink.stonewall(None).map(|(by, at)| (by, at, false)),
        };
        if wall.is_some() {
            self.halt.store(true, Ordering::Relaxed);
            watch.walled = wall;
        }
    }
}

/// Gathers the workers' intervals, takes the "before" snapshots when the ramp ends and
/// reports progress, until every worker has dropped its sender (returned).
fn watch_workers(
    rx: &mpsc::Receiver<IntervalMsg>,
    watch: &mut Watch,
    monitor: &mut Monitor,
    ctl: &Controls,
    sink: &mut dyn Sink,
) {
    // With a stonewall over several targets, the first to finish is looked for often:
    // every job stops within milliseconds of it, and the one named is the first.
    let quick = ctl.stonewall && ctl.paths.len() > 1;
    loop {
        let wait = match quick {
            true => monitor.wait().min(std::time::Duration::from_millis(2)),
            false => monitor.wait(),
        };
        match rx.recv_timeout(wait) {
            Ok(m) => gather(&mut watch.intervals, m),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // Every job here did its work before anything ended it: the first to
                // finish tells the others (other ranks) to stop.
                if ctl.wall_open(watch, monitor) {
                    sink.stonewall(Some(monitor.t0.elapsed().as_secs_f64()));
                }
                break;
            }
        }
        ctl.check_wall(watch, monitor, sink);
        if ctl.stop.is_set() || ctl.halt.load(Ordering::Relaxed) || monitor.window_over() {
            monitor.stopping();
        }
        if monitor.ramp_ended() {
            watch.dev_before = (ctl.snapshot)();
            watch.cpu_before = CpuMark::now();
        }
        if let Some(p) = monitor.tick(ctl.live) {
            match sink.progress(&p) {
                Ok(true) => {}
                Ok(false) => ctl.halt.store(true, Ordering::Relaxed),
                Err(e) => {
                    ctl.halt.store(true, Ordering::Relaxed);
                    watch.sink_error.get_or_insert(e);
                }
            }
        }
        if let Some(failed) = monitor.rate_failure(ctl.live) {
            ctl.halt.store(true, Ordering::Relaxed);
            watch.rate_min.get_or_insert(failed);
        }
    }
}

//! The repetition loop of one run: open the target (creating and laying out a new file),
//! run the repetitions, summarise them after each and hand the run so far to the sink
//! (which saves it), then add write amplification and warnings, and close the target.
//! Never prints.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::target::Target;
use crate::measure::amplification::{Before, write_amplification};
use crate::measure::rep::{RepOutcome, run_rep};
use crate::measure::verify::GenMap;
use crate::measure::warnings;
use crate::plan::data::DataSpec;
use crate::plan::spec::{Spec, TargetPolicy};
use crate::results::schema::{Run, Status, Summary, TargetDesc, TargetKind, TargetPart};
use crate::results::sink::Sink;
use crate::stop::StopFlag;
use crate::workload::corpus::load_for;
use crate::workload::data::DataGen;

/// What a run produced: every repetition measured, and the error that stopped it, if one
/// did (the run then holds what was measured before, marked interrupted).
#[derive(Debug)]
pub struct RunOutcome {
    pub run: Run,
    pub failure: Option<Error>,
}

pub(crate) use crate::measure::earlier::Earlier;

/// Runs `spec` `repeat` times on its target (after the repetitions `earlier` carries).
/// The sink hears of every repetition (with the run so far, to save it) and may stop the
/// run. An `Err` means nothing was measured (the target could not be opened, the plan
/// does not fit it).
pub(crate) fn run(
    spec: &Spec,
    policy: &TargetPolicy,
    repeat: u32,
    earlier: Earlier,
    stop: &StopFlag,
    sink: &mut dyn Sink,
) -> Result<RunOutcome> {
    spec.validate()?;
    check_memory(
        spec,
        crate::io::env::mem_available(),
        crate::io::env::address_space_room(),
    )?;
    crate::measure::launch::check_cpus(spec)?;
    crate::measure::launch::check_aio(&[spec])?;
    let corpus = load_for(&spec.data)?;
    // A new file is laid out with the workload's own data profile (a compressing device
    // then stores, and a read test reads, data of the kind asked for).
    let mut layout = DataGen::new(&spec.data, spec.seed, u64::MAX, corpus.clone());
    let mut go_on = |done, total| {
        sink.layout(done, total);
        !stop.is_set()
    };
    // Every target is opened and checked before any is measured (a target refused
    // closes, and a file created for it is removed, with the ones opened before it).
    let mut targets = Vec::new();
    for one in spec.per_target() {
        let target = Target::open(&one, policy, &mut go_on, &mut layout)?;
        check_target(&one, &target)?;
        if let Some(same) = targets.iter().find(|t| same_file(t, &target)) {
            return Err(Error::usage(format!(
                "{} and {} are the same file or device; give each target once (--jobs sets the jobs per target)",
                same.path.display(),
                target.path.display()
            )));
        }
        targets.push(target);
    }
    let mut run = new_run(spec, &targets, repeat);
    // (A study keeps and holds its file itself: `policy.hold`.)
    if policy.keep && !policy.hold {
        let made_before = (targets.iter()).filter(|t| !t.created && t.kind != TargetKind::None);
        (run.warnings).extend(made_before.map(|t| warnings::keep_changes_nothing(&t.path)));
    }
    earlier.carry_into(&mut run);
    // Write amplification: the device's counters before the first repetition (SMART and
    // zram speak for one device: a run on one target).
    let before = Before::take(spec, &targets);
    let mut reps = Repetitions {
        spec,
        targets: &targets,
        corpus: corpus.as_ref(),
        stop,
        cumulative: None,
        failure: None,
    };
    reps.all(&mut run, sink)?;
    let (cumulative, mut failure) = (reps.cumulative, reps.failure);
    conclude(spec, &mut run, &targets, before, stop);
    if let (Some(path), Some(map)) = (&policy.verify_state, &cumulative)
        && let Err(e) = map.save(path)
    {
        failure = failure.or(Some(e));
    }
    for target in targets {
        if let Err(e) = target.finish() {
            failure = failure.or(Some(e));
        }
    }
    Ok(RunOutcome { run, failure })
}

/// After the last repetition: the status of a run cut short, write amplification
/// (`before`: the device's counters before the first repetition), whether the page
/// cache served it, and the warnings its figures call for.
pub(crate) fn conclude(
    spec: &Spec,
    run: &mut Run,
    targets: &[Target],
    before: Before,
    stop: &StopFlag,
) {
    if run.repetitions.len() < run.repetitions_planned as usize && run.status != Status::Failed {
        run.status = Status::Interrupted;
        if run.error.is_none() && stop.is_set() {
            run.error = Some(stopped_by(stop));
        }
    }
    // Trims write no data: no write amplification to speak of.
    if spec.writes() && spec.rw.writes_data() && !run.repetitions.is_empty() {
        let smart_after = (before.smart.is_some() && targets.len() == 1)
            .then(|| targets[0].device.as_ref().map(crate::io::env::smart_writes))
            .flatten();
        write_amplification(run, targets, before, smart_after);
    }
    // A compressing btrfs moves fewer bytes at its device than it serves: the page
    // cache's share cannot be told from the counters there.
    let compressing = Target::compression(targets);
    if let Some(c) = compressing.filter(|_| !spec.direct) {
        for r in &mut run.repetitions {
            r.page_cache_hit_pct = None;
        }
        run.warnings.push(warnings::compressed_cache(c));
    }
    // Whether the page cache served the reads is measured, not guessed.
    run.cache_bound = run
        .page_cache_hit_pct()
        .is_some_and(|h| h >= crate::results::schema::CACHE_BOUND_PCT);
    run.warnings.extend(warnings::page_cache(run));
    if compressing.is_none() || spec.direct {
        run.warnings.extend(warnings::write_cache(run));
    }
    run.warnings.extend(warnings::direct_reads_elsewhere(run));
    run.warnings.extend(warnings::trims_elsewhere(run));
    run.warnings.extend(warnings::variation(run));
    run.warnings.extend(warnings::busy_machine(run));
    run.warnings.extend(warnings::rate_unreached(run));
    run.warnings.extend(warnings::small_pool(&run.spec));
    run.warnings.extend(warnings::pool_window(&run.spec));
    run.warnings.extend(warnings::verify_dedup(&run.spec));
    let workers = spec.jobs * targets.len() as u32;
    run.warnings
        .extend(warnings::sqpoll_beside_a_job(&run.spec, workers));
    run.warnings.extend(warnings::io_wq_bound(run));
}

/// Refuses, before anything is opened or read, a run whose buffers and bookkeeping
/// ([`Spec::memory`]) would take more than half of the memory the kernel says is
/// available (`MemAvailable`): the page cache, io_uring's rings and the rest of the
/// system need the other half, and a run at the edge of memory measures reclaim, or is
/// killed. Unknown available memory is not checked.
/// `room`: the address space the process may still map (`RLIMIT_AS`, `ulimit -v`), when
/// limited: the run's memory and 512 MiB for the rest (threads' stacks, the libraries)
/// must fit, or the first allocation past it fails.
pub(crate) fn check_memory(spec: &Spec, available: Option<u64>, room: Option<u64>) -> Result<()> {
    use crate::units::fmt_size;
    let m = spec.memory();
    let over_room = room.filter(|&r| m.total() + (512 << 20) > r);
    let avail = match available {
        Some(a) if m.total() > a / 2 => a,
        _ if over_room.is_none() => return Ok(()),
        _ => 0,
    };
    let mut parts = vec![format!("{} of I/O buffers", fmt_size(m.buffers))];
    if m.pools > 0 {
        parts.push(format!("{} of data pools", fmt_size(m.pools)));
    }
    if m.sampling > 0 {
        parts.push(format!("{} of data samples", fmt_size(m.sampling)));
    }
    if m.verify > 0 {
        parts.push(format!("{} of verify maps", fmt_size(m.verify)));
    }
    if m.per_file > 0 {
        parts.push(format!("{} of per-file histograms", fmt_size(m.per_file)));
    }
    // The fix and the headline name what is large.
    let (what, fix) = if m.verify > m.buffers.max(m.pools) {
        (
            format!(
                "--size {} in blocks of --bs {}",
                size_of(spec),
                fmt_size(spec.bs)
            ),
            "use a larger --bs or a smaller --size",
        )
    } else {
        let per_job = format!("--qd {} x --bs {}", spec.qd, fmt_size(spec.bs));
        // The pools named when they are a fair share next to the buffers.
        let per_job = match m.pools < m.buffers / 4 {
            true => per_job,
            false => format!(
                "({per_job} + --data-pool {})",
                fmt_size(spec.data.pool_bytes() as u64)
            ),
        };
        let fix = match m.pools > m.buffers {
            true => "lower --jobs or --data-pool (16m by default)",
            false => "lower --jobs, --qd or --bs",
        };
        (format!("--jobs {} x {per_job}", spec.jobs), fix)
    };
    // The memory the machine has first; the process's limit when only that is short.
    let limit = match over_room.filter(|_| avail == 0) {
        Some(r) => format!(
            "more than the {} of address space this process may still map (ulimit -v); raise the limit or {fix}",
            fmt_size(r)
        ),
        None => format!("more than half of the {} available; {fix}", fmt_size(avail)),
    };
    Err(Error::usage(format!(
        "{what} needs about {} of memory ({}), {limit}",
        fmt_size(m.total()),
        parts.join(", "),
    )))
}

fn size_of(spec: &Spec) -> String {
    spec.size.map_or("?".into(), crate::units::fmt_size)
}

/// Checks what can only be checked once the target is open.
pub(crate) fn check_target(spec: &Spec, target: &Target) -> Result<()> {
    if !spec.writes() && target.kind == TargetKind::None && spec.data != DataSpec::default() {
        return Err(Error::usage(format!(
            "--rw {} writes nothing (and --engine null does no I/O), so the data options would change nothing; drop them, or see the data they make with iomark data",
            spec.rw.name()
        )));
    }
    if !spec.writes() && !target.created && spec.data != DataSpec::default() {
        return Err(Error::usage(format!(
            "--rw {} on the existing {} writes nothing, so the data options would change nothing; drop them, or name a new file (it is laid out with them)",
            spec.rw.name(),
            spec.target
        )));
    }
    if spec.rw.trims() {
        target.check_trim()?;
    }
    spec.random_distribution.check_span(target.span)?;
    if spec.verify && target.span / spec.bs > crate::measure::verify::MAX_BLOCKS {
        return Err(Error::usage(format!(
            "--verify tracks every block, and {} blocks of {} are too many; use a larger --bs or a smaller --size",
            target.span / spec.bs,
            crate::units::fmt_size(spec.bs)
        )));
    }
    Ok(())
}

/// How the results describe an opened target named `path`.
fn describe(path: &str, target: &Target) -> TargetDesc {
    TargetDesc {
        kind: target.kind,
        path: path.to_string(),
        offset: target.base,
        span_bytes: target.span,
        align: target.align,
        created: target.created,
        device: target.device.as_ref().map(|d| d.info()),
        filesystem: target.fs.clone(),
    }
}

/// The run before its first repetition: what it is, where, and the advice known up front.
pub(crate) fn new_run(spec: &Spec, targets: &[Target], repeat: u32) -> Run {
    let target = &targets[0];
    let mut run = Run {
        name: spec.name(),
        spec: spec.clone(),
        status: Status::Complete,
        target: describe(&spec.target, target),
        targets: match targets.len() {
            1 => Vec::new(),
            _ => (spec.target_paths().into_iter().zip(targets))
                .map(|(p, t)| TargetPart {
                    target: describe(p, t),
                    summary: Summary::default(),
                })
                .collect(),
        },
        mpi: None,
        group: None,
        repetitions: Vec::new(),
        summary: Summary::default(),
        warnings: Vec::new(),
        error: None,
        repetitions_planned: repeat.max(1),
        cache_bound: false,
        study: None,
        write_amplification: None,
        write_amplification_sources: Vec::new(),
        latency_kind: crate::results::schema::LatencyKind::Lat,
        fio: None,
    };
    // `--io-size Nx`: the bytes it came to on this span, recorded beside `io_spans` (not
    // when several targets' spans differ: then each moved N times its own).
    if let Some(n) = spec.io_spans.filter(|_| spec.io_size.is_none())
        && targets.iter().all(|t| t.span == target.span)
    {
        run.spec.io_size = Some((target.span as f64 * n) as u64);
    }
    let span: u64 = targets.iter().map(|t| t.span).sum();
    let avail = crate::io::env::mem_available();
    if !spec.direct
        && spec.reads()
        && target.kind != TargetKind::None
        && let Some(avail) = avail
        && span <= avail
    {
        let total = crate::results::env::Host::capture().memory_bytes;
        let grows = targets.iter().all(|t| t.created);
        let measured = Target::compression(targets).is_none();
        let direct = spec.engine.caps().direct;
        run.warnings.push(warnings::cache_may_serve(
            span, avail, total, grows, measured, direct,
        ));
    }
    for t in targets {
        let fs = t.fs.as_ref().map(|f| f.fstype.as_str());
        run.warnings
            .extend(fs.and_then(|fs| warnings::memory_fs(&t.path, fs)));
        run.warnings
            .extend(t.left_by.map(|pid| warnings::left_by_killed(&t.path, pid)));
        if !spec.reads() {
            continue;
        }
        if t.device.as_ref().is_some_and(crate::io::env::zram_is_empty) {
            run.warnings.push(warnings::zram_empty(&t.path));
        }
        // A file's holes and unwritten extents are read as zeros without the device.
        let holes = (t.fd().filter(|_| t.kind == TargetKind::File))
            .and_then(|fd| crate::io::space::holes(fd, t.base, t.span, 1 << 16));
        if let Some((hole, complete)) = holes.filter(|h| h.0 > 0) {
            run.warnings
                .push(warnings::holes_read(&t.path, t.span, hole, complete));
        }
    }
    if crate::plan::cache::holds_writes(spec) && target.kind != TargetKind::None {
        let limit = avail.and_then(crate::io::env::dirty_limit);
        run.warnings.push(warnings::cache_takes_writes(limit));
    }
    if let Some(note) = &spec.engine_note {
        run.warnings.push(note.clone());
    }
    if spec.engine_opts.sched_policy == crate::plan::engine::SchedPolicy::Batch
        && let Some(p) = crate::io::sys::other_policy()
    {
        run.warnings.push(warnings::kept_policy(p));
    }
    run
}

/// Whether two opened targets are the very same file or device (two names, a link).
fn same_file(a: &Target, b: &Target) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let id = |t: &Target| {
        let md = t.file()?.metadata().ok()?;
        Some(match md.file_type().is_block_device() {
            true => (0, md.rdev()),
            false => (md.dev(), md.ino()),
        })
    };
    id(a).is_some() && id(a) == id(b)
}

/// "stopped by signal 2 (SIGINT)".
fn stopped_by(stop: &StopFlag) -> String {
    format!(
        "stopped by signal {} ({})",
        stop.signal(),
        stop.signal_name()
    )
}

/// A stop (or a time-based repetition's end) slower than this waited on I/O in flight (a
/// normal one takes well under 0.1 s;
/// see docs/ARCHITECTURE.md, "Stopping"); the run's warnings say so.
const SLOW_STOP_S: f64 = 1.0;

/// The loop over repetitions and what it carries from one to the next.
struct Repetitions<'a> {
    spec: &'a Spec,
    targets: &'a [Target],
    corpus: Option<&'a Arc<Vec<u8>>>,
    stop: &'a StopFlag,
    /// With --verify: what every block must hold after the repetitions so far.
    cumulative: Option<GenMap>,
    /// The error that ends the run (or a bad verify, which does not stop it).
    failure: Option<Error>,
}

impl Repetitions<'_> {
    fn all(&mut self, run: &mut Run, sink: &mut dyn Sink) -> Result<()> {
        let (spec, stop) = (self.spec, self.stop);
        let planned = run.repetitions_planned;
        // After the repetitions carried from before a `--resume`.
        let first = run.repetitions.len() as u32;
        for rep in first..planned {
            if stop.is_set() {
                break;
            }
            if rep > 0 && spec.pause_s > 0.0 {
                stop.pause(spec.pause_s);
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
            if !sink.rep_started(spec, rep + 1, planned)? {
                stop.raise(crate::stop::STOP_REQUESTED);
                break;
            }
            let out = run_rep(spec, self.targets, self.corpus, rep, stop, sink);
            if !self.record(run, out, rep + 1 == planned, sink)? {
                break;
            }
        }
        Ok(())
    }

    /// Adds a finished repetition to the run and hands the run to the sink; false when
    /// the run must stop.
    fn record(
        &mut self,
        run: &mut Run,
        out: RepOutcome,
        last: bool,
        sink: &mut dyn Sink,
    ) -> Result<bool> {
        let RepOutcome {
            rep,
            error,
            gens,
            stop_wait_s,
            hists,
            wall,
        } = out;
        sink.rep_latencies(&hists.0, &hists.1);
        // The blocks' expected state after all repetitions so far (later writes win:
        // their generations are higher).
        if let Some(m) = gens {
            match self.cumulative.as_mut() {
                None => self.cumulative = Some(m),
                Some(c) => {
                    for (a, b) in c.gens.iter_mut().zip(m.gens) {
                        *a = (*a).max(b);
                    }
                }
            }
        }
        let ended = absorb(
            run,
            rep,
            error.as_ref(),
            (stop_wait_s, wall),
            last,
            self.stop,
        );
        let go_on = sink.rep_finished(run)?;
        Ok(settle(ended, error, go_on, &mut self.failure, self.stop))
    }
}

/// How a repetition added to its run ended.
pub(crate) struct Ended {
    /// It was interrupted (a signal, a failed job, a sink's stop).
    stopped: bool,
    /// Its `--verify` found bad blocks.
    bad_verify: bool,
}

/// Adds a finished repetition (and the `error` that stopped it) to the run: its warnings (`stop_wait_s`, how long the stop
/// waited; `wall`, who stonewalled it), the summary, the run's status and error.
pub(crate) fn absorb(
    run: &mut Run,
    mut rep: crate::results::schema::Repetition,
    error: Option<&Error>,
    (stop_wait_s, wall): (Option<f64>, Option<(String, f64)>),
    last: bool,
    stop: &StopFlag,
) -> Ended {
    if let Some((by, at)) = wall {
        run.warnings.push(format!(
            "repetition {}: stonewalled at {at:.2} s by {by} (the first to finish its work); every job stopped then",
            rep.index
        ));
    }
    if let Some(s) = stop_wait_s.filter(|&s| s >= SLOW_STOP_S) {
        run.warnings.push(warnings::slow_stop(rep.index, s));
    }
    if let Some(w) = warnings::drift(&rep) {
        run.warnings.push(w);
    }
    let bad_verify = rep.verify.as_ref().is_some_and(|v| v.bad() > 0);
    // A job below its minimum rate (--rate-min): the repetition and the run failed.
    let failed = error.is_some_and(Error::is_rate_min);
    if failed {
        rep.status = Status::Failed;
    }
    let stopped = rep.status != Status::Complete;
    // Stopped before its measured window opened (during --ramp): nothing was measured,
    // and a repetition of 0 IOPS would pull every figure across repetitions down.
    // Stopped by an error (a job's setup, its first I/O) before any I/O completed: a
    // repetition of zeros would read as a measurement too.
    let none = rep.read.ios + rep.write.ios + rep.trim.ios + rep.fsyncs == 0;
    let unmeasured = stopped && none && rep.elapsed_s < 1e-6;
    let failed_early = stopped && none && error.is_some_and(|e| !e.is_rate_min());
    if unmeasured || failed_early {
        run.warnings.push(format!(
            "repetition {}: {}; nothing of it was measured, and it is not kept",
            rep.index,
            match failed_early {
                true => "stopped by an error before any I/O completed",
                false => "stopped before its measured window opened (during the ramp)",
            }
        ));
    } else {
        if none {
            run.warnings.push(warnings::empty_window(&rep));
        }
        run.repetitions.push(rep);
    }
    summarize(run);
    // Until the last repetition is done, a saved document says the run is not
    // complete: if iomark dies now, that is the truth.
    run.status = if failed {
        Status::Failed
    } else if !stopped && last {
        Status::Complete
    } else {
        Status::Interrupted
    };
    if stopped {
        run.error = Some(match (error, stop.signal()) {
            (Some(e), _) => e.to_string(),
            (None, 0) => "stopped early".to_string(),
            (None, _) => stopped_by(stop),
        });
    }
    Ended {
        stopped,
        bad_verify,
    }
}

/// The run's summary and each target's, over its repetitions.
pub(crate) fn summarize(run: &mut Run) {
    run.summary = Summary::of(&run.repetitions);
    for (i, part) in run.targets.iter_mut().enumerate() {
        part.summary = crate::results::targets::target_summary(&run.repetitions, i);
    }
}

/// After the sink heard of the repetition (`go_on`): the run's failure (the repetition's
/// `error`) when it stopped or verified bad, and whether the run goes on.
pub(crate) fn settle(
    ended: Ended,
    error: Option<Error>,
    go_on: bool,
    failure: &mut Option<Error>,
    stop: &StopFlag,
) -> bool {
    if ended.stopped || ended.bad_verify {
        // A bad verify does not stop the run, but what it wrote did not come back:
        // the exit status says so.
        *failure = error;
    }
    if !go_on && !ended.stopped {
        stop.raise(crate::stop::STOP_REQUESTED);
    }
    go_on && !ended.stopped
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;

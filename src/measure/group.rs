//! Runs measured together: the jobs of one fio group, each its own workload on its own
//! target, all started behind one gate in every repetition (a lane per run, as a run on
//! several targets has a lane per target). Each run keeps its own figures, from its own
//! workers' counters and histograms over its own window (the common start to its last
//! completion, or its runtime), as fio reports each job; the group's figures are their
//! exact sum (`results::targets::RunGroup`). Never prints.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::env::CpuTimes;
use crate::io::target::Target;
use crate::measure::merge::{Merged, WindowCpu};
use crate::measure::rep::{Lane, Window, drive};
use crate::measure::run::{
    RunOutcome, absorb, check_memory, check_target, conclude, new_run, settle,
};
use crate::measure::tally::Tally;
use crate::measure::targets::dir_stats;
use crate::measure::worker::WorkerOut;
use crate::plan::spec::{Spec, TargetPolicy};
use crate::results::env::DeviceDelta;
use crate::results::schema::{Cpu, CpuPart, GroupRep, Repetition, Run, RunGroup, Status};
use crate::results::sink::Sink;
use crate::stop::StopFlag;
use crate::workload::corpus::load_for;
use crate::workload::data::DataGen;
use crate::workload::seed::{spec_stream, target_stream};

/// The checks of runs measured together, before any target is touched: each alone, and
/// the AIO events of all of them. A refusal names the run it is about (`NAME: …`), so a
/// job file's refusal names that job's lines (`fio_job::in_job_terms`).
fn check_members(members: &[(&Spec, &TargetPolicy)]) -> Result<()> {
    for (spec, _) in members {
        let named = |e: Error| match e {
            Error::Usage(m) => Error::Usage(format!("{}: {m}", spec.name())),
            Error::Target(m) => Error::Target(format!("{}: {m}", spec.name())),
            e => e,
        };
        spec.validate().map_err(named)?;
        if !spec.targets.is_empty() || spec.verify {
            return Err(named(Error::usage(
                "a run measured with others has one target and no --verify; run it alone",
            )));
        }
        check_memory(
            spec,
            crate::io::env::mem_available(),
            crate::io::env::address_space_room(),
        )
        .map_err(named)?;
        crate::measure::launch::check_cpus(spec).map_err(named)?;
    }
    crate::measure::launch::check_aio(&members.iter().map(|(s, _)| *s).collect::<Vec<_>>())
}

/// Runs `members` (each a run's workload and its target policy) together, `repeat` times:
/// every target is opened and checked before any is measured; in each repetition every
/// member's jobs start behind one gate. The sink hears of each repetition through
/// `group_finished`, with every run so far. An `Err` means nothing was measured.
pub(crate) fn run_group(
    members: &[(&Spec, &TargetPolicy)],
    repeat: u32,
    stop: &StopFlag,
    sink: &mut dyn Sink,
) -> Result<Vec<RunOutcome>> {
    check_members(members)?;
    let corpora = (members.iter())
        .map(|(s, _)| load_for(&s.data))
        .collect::<Result<Vec<_>>>()?;
    let mut targets: Vec<Target> = Vec::new();
    for ((spec, policy), corpus) in members.iter().zip(&corpora) {
        let mut layout = DataGen::new(&spec.data, spec.seed, u64::MAX, corpus.clone());
        let mut go_on = |done, total| {
            sink.layout(done, total);
            !stop.is_set()
        };
        let target = Target::open(spec, policy, &mut go_on, &mut layout)?;
        check_target(spec, &target)?;
        targets.push(target);
    }
    let names: Vec<String> = members.iter().map(|(s, _)| s.name()).collect();
    let shared = shared_devices(&targets);
    let mut runs: Vec<Run> = (members.iter().zip(&targets).enumerate())
        .map(|(i, ((spec, _), t))| {
            let mut run = new_run(spec, std::slice::from_ref(t), repeat);
            run.group = Some(RunGroup {
                runs: names.clone(),
                repetitions: Vec::new(),
                summary: Default::default(),
            });
            if shared[i] && let Some(d) = &t.device {
                run.warnings.push(format!(
                    "{} is under other runs of this group too: its block counters are the group's (group.repetitions[].device), not this run's",
                    d.name
                ));
            }
            run
        })
        .collect();
    let mut failures: Vec<Option<Error>> = (0..members.len()).map(|_| None).collect();
    let lead = members[0].0;
    let planned = runs[0].repetitions_planned;
    for rep in 0..planned {
        if stop.is_set() {
            break;
        }
        if rep > 0 && lead.pause_s > 0.0 {
            stop.pause(lead.pause_s);
            if stop.is_set() {
                break;
            }
        }
        if members.iter().any(|(s, _)| s.drop_caches && !s.direct)
            && let Err(e) = crate::io::env::drop_page_cache()
        {
            return Err(Error::io(
                "cannot drop the page cache (--drop-caches needs root)",
                &e,
            ));
        }
        if !sink.rep_started(lead, rep + 1, planned)? {
            stop.raise(crate::stop::STOP_REQUESTED);
            break;
        }
        let out = group_rep(members, &targets, &corpora, &shared, rep, stop, sink);
        let last = rep + 1 == planned;
        let mut ended = Vec::new();
        for (run, (r, e)) in runs.iter_mut().zip(out.reps) {
            ended.push((
                absorb(run, r, e.as_ref(), (out.stop_wait_s, None), last, stop),
                e,
            ));
            if let Some(g) = run.group.as_mut() {
                g.repetitions.push(out.group.clone());
                g.summary = crate::results::targets::group_summary(&g.repetitions);
            }
        }
        let go_on = sink.group_finished(&runs)?;
        let mut all_on = true;
        for ((ended, e), failure) in ended.into_iter().zip(failures.iter_mut()) {
            all_on &= settle(ended, e, go_on, failure, stop);
        }
        if !all_on {
            break;
        }
    }
    let mut outcomes = Vec::new();
    for (((spec, _), mut run), (target, failure)) in members
        .iter()
        .zip(runs)
        .zip(targets.into_iter().zip(failures))
    {
        conclude(
            spec,
            &mut run,
            std::slice::from_ref(&target),
            Default::default(),
            stop,
        );
        let failure = match target.finish() {
            Err(e) => failure.or(Some(e)),
            Ok(()) => failure,
        };
        outcomes.push(RunOutcome { run, failure });
    }
    Ok(outcomes)
}

/// For each target, whether another target of the group is on the same block device.
fn shared_devices(targets: &[Target]) -> Vec<bool> {
    let name = |t: &Target| t.device.as_ref().map(|d| d.name.clone());
    (targets.iter().enumerate())
        .map(|(i, t)| {
            let me = name(t);
            me.is_some() && (targets.iter().enumerate()).any(|(j, o)| j != i && name(o) == me)
        })
        .collect()
}

/// What one repetition of a group produced.
struct GroupOutcome {
    /// Each run's repetition, and the error that stopped it, if one did.
    reps: Vec<(Repetition, Option<Error>)>,
    /// The group's figures.
    group: GroupRep,
    stop_wait_s: Option<f64>,
}

/// Repetition `rep` (0-based) of every member together, behind one gate.
fn group_rep(
    members: &[(&Spec, &TargetPolicy)],
    targets: &[Target],
    corpora: &[Option<Arc<Vec<u8>>>],
    shared: &[bool],
    rep: u32,
    stop: &StopFlag,
    sink: &mut dyn Sink,
) -> GroupOutcome {
    (targets.iter().zip(members)).for_each(|(t, (spec, _))| t.prepare_cache(spec));
    let lanes: Vec<Lane> = (members.iter().zip(targets).zip(corpora).enumerate())
        .map(|(i, (((spec, _), target), corpus))| Lane {
            spec,
            target,
            win: Window::of(spec, target.span),
            // Two jobs of the same shape must not issue the same offsets and data.
            stream: target_stream(spec_stream(spec, rep), i as u32),
            corpus: corpus.as_ref(),
            jobs: spec.jobs,
            files: &[],
        })
        .collect();
    let (outs, mut watch) = drive(&lanes, rep, stop, sink);
    let cpu = WindowCpu::since(watch.cpu_before, &watch.kworkers_before);
    let devices = watch.device_deltas(&lanes);
    // The counters are read when the first lane's ramp ends: they match the runs'
    // figures only when every lane's ramp (and start delay) is the same.
    let same_ramp = lanes.iter().all(|l| l.win.ramp_ns == lanes[0].win.ramp_ns);
    let mut seen: Vec<&str> = Vec::new();
    let distinct = devices.iter().map(|d| {
        let d = d.as_ref()?;
        (!seen.contains(&d.name.as_str())).then(|| {
            seen.push(&d.name);
            d
        })
    });
    let distinct: Vec<Option<&DeviceDelta>> = distinct.filter(|d| d.is_some()).collect();
    let group_device = (same_ramp && devices.iter().all(Option::is_some))
        .then(|| crate::results::targets::device_sum(distinct))
        .flatten();
    let mut by_lane: Vec<Vec<(usize, WorkerOut)>> = lanes.iter().map(|_| Vec::new()).collect();
    for (t, o) in outs {
        by_lane[t].push((0, o));
    }
    // An error of the repetition itself (a thread not started, the sink) stops every
    // run; the first run carries it.
    let mut shared_error = watch.spawn_error.take().or(watch.sink_error.take());
    let mut merged: Vec<Merged> = by_lane.into_iter().map(|o| Merged::of(o, 1)).collect();
    let mut sum = Sum::default();
    for m in &mut merged {
        m.interrupted |= shared_error.is_some() || watch.rate_min.is_some() || stop.is_set();
        sum.add(m);
    }
    let total = sum.all.ios();
    let mut reps = Vec::new();
    for (i, m) in merged.iter_mut().enumerate() {
        let device = (same_ramp && !shared[i])
            .then(|| devices[i].clone())
            .flatten();
        let mut r = m.repetition(lanes[i].spec, rep, cpu, device, &watch.intervals[i], stop);
        // The process's CPU time is the group's: each run's own is its workers'.
        r.cpu = Cpu {
            workers: CpuPart::new(m.cpu.user_s, m.cpu.sys_s, m.all.ios()),
            ..cpu.divided(sum.workers, total)
        };
        let rate_min = watch
            .rate_min
            .take_if(|(lane, _)| *lane == i)
            .map(|(_, e)| e);
        let error = rate_min.or(shared_error.take()).or(m.error.take());
        reps.push((r, error));
    }
    let elapsed_s = (sum.all.end_ns as f64 / 1e9).max(1e-9);
    let group = GroupRep {
        index: rep + 1,
        status: if merged.iter().any(|m| m.interrupted) {
            Status::Interrupted
        } else {
            Status::Complete
        },
        elapsed_s,
        read: dir_stats(sum.all.read, &sum.all.hist_read, elapsed_s),
        write: dir_stats(sum.all.write, &sum.all.hist_write, elapsed_s),
        trim: dir_stats(sum.all.trim, &sum.all.hist_trim, elapsed_s),
        device: group_device,
    };
    GroupOutcome {
        reps,
        group,
        stop_wait_s: watch.stop_wait_s,
    }
}

/// The lanes' figures added up.
struct Sum {
    /// Every lane's counts (`end_ns`: the last lane's end).
    all: Tally,
    workers: CpuTimes,
}

impl Default for Sum {
    fn default() -> Self {
        Sum {
            all: Tally::new(),
            workers: CpuTimes::default(),
        }
    }
}

impl Sum {
    fn add(&mut self, m: &Merged) {
        self.all.add(&m.all);
        self.workers = self.workers.plus(m.cpu);
    }
}

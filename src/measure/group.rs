//! Runs measured together: the jobs of one fio group, each its own workload on its own
//! target (or the files its jobs serve, `--file-service`: a lane per file, its workers on
//! the first, as `rep::run_rep` does), all started behind one gate in every repetition
//! (a lane per target of every run). Each run keeps its own figures, from its own
//! workers' counters and histograms over its own window (the common start to its last
//! completion, or its runtime), as fio reports each job; the group's figures are their
//! exact sum (`results::targets::RunGroup`). Never prints.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::io::env::{CpuTimes, KernelCpu};
use crate::io::target::Target;
use crate::measure::interval::all_lanes;
use crate::measure::launch::WorkFile;
use crate::measure::merge::{Merged, WindowCpu};
use crate::measure::rep::{Lane, Window, drive, work_files};
use crate::measure::run::{
    RunOutcome, absorb, check_memory, check_target, conclude, new_run, settle,
};
use crate::measure::tally::Tally;
use crate::measure::targets::{dir_stats, target_reps};
use crate::measure::worker::WorkerOut;
use crate::plan::spec::{Spec, TargetPolicy};
use crate::results::env::DeviceDelta;
use crate::results::schema::{Cpu, GroupRep, Repetition, Run, RunGroup, Status};
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
        if (!spec.targets.is_empty() && !spec.serves_files()) || spec.verify {
            return Err(named(Error::usage(
                "a run measured with others has one target (or several its jobs serve, --file-service) and no --verify; run it alone",
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
    // Each member's targets: one, or the files its jobs serve (`--file-service`).
    let mut targets: Vec<Vec<Target>> = Vec::new();
    for ((spec, policy), corpus) in members.iter().zip(&corpora) {
        let mut layout = DataGen::new(&spec.data, spec.seed, u64::MAX, corpus.clone());
        let mut go_on = |done, total| {
            sink.layout(done, total);
            !stop.is_set()
        };
        let mut own = Vec::new();
        for one in spec.per_target() {
            let target = Target::open(&one, policy, &mut go_on, &mut layout)?;
            check_target(&one, &target)?;
            own.push(target);
        }
        targets.push(own);
    }
    let names: Vec<String> = members.iter().map(|(s, _)| s.name()).collect();
    let shared = shared_devices(&targets);
    let mut runs: Vec<Run> = (members.iter().zip(&targets).enumerate())
        .map(|(i, ((spec, _), ts))| {
            let mut run = new_run(spec, ts, repeat);
            run.group = Some(RunGroup {
                runs: names.clone(),
                repetitions: Vec::new(),
                summary: Default::default(),
            });
            if shared[i] && let Some(d) = ts.iter().find_map(|t| t.device.as_ref()) {
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
    for (((spec, _), mut run), (own, mut failure)) in members
        .iter()
        .zip(runs)
        .zip(targets.into_iter().zip(failures))
    {
        conclude(spec, &mut run, &own, Default::default(), stop);
        for target in own {
            if let Err(e) = target.finish() {
                failure = failure.or(Some(e));
            }
        }
        outcomes.push(RunOutcome { run, failure });
    }
    Ok(outcomes)
}

/// For each member, whether a target of another member is on a block device of its own.
fn shared_devices(targets: &[Vec<Target>]) -> Vec<bool> {
    let names = |ts: &[Target]| -> Vec<String> {
        (ts.iter())
            .filter_map(|t| Some(t.device.as_ref()?.name.clone()))
            .collect()
    };
    (targets.iter().enumerate())
        .map(|(i, ts)| {
            let mine = names(ts);
            (targets.iter().enumerate())
                .any(|(j, o)| j != i && names(o).iter().any(|n| mine.contains(n)))
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

/// A lane per target of every member: a member serving several files has its workers
/// on its first lane (as `run_rep`); with each lane, (its member, its target there).
fn lanes_of<'a>(
    members: &[(&'a Spec, &TargetPolicy)],
    targets: &'a [Vec<Target>],
    corpora: &'a [Option<Arc<Vec<u8>>>],
    files: &'a [Vec<WorkFile<'a>>],
    rep: u32,
) -> (Vec<Lane<'a>>, Vec<(usize, usize)>) {
    let mut lanes: Vec<Lane> = Vec::new();
    let mut of: Vec<(usize, usize)> = Vec::new();
    for (i, (((spec, _), ts), corpus)) in members.iter().zip(targets).zip(corpora).enumerate() {
        for (t, target) in ts.iter().enumerate() {
            of.push((i, t));
            lanes.push(Lane {
                spec,
                target,
                win: Window::of(spec, target.span),
                // Two jobs of the same shape must not issue the same offsets and data.
                stream: target_stream(spec_stream(spec, rep), (i + (t << 16)) as u32),
                corpus: corpus.as_ref(),
                jobs: if t == 0 || files[i].is_empty() {
                    spec.jobs
                } else {
                    0
                },
                files: if t == 0 { &files[i] } else { &[] },
            });
        }
    }
    (lanes, of)
}

/// Repetition `rep` (0-based) of every member together, behind one gate.
fn group_rep(
    members: &[(&Spec, &TargetPolicy)],
    targets: &[Vec<Target>],
    corpora: &[Option<Arc<Vec<u8>>>],
    shared: &[bool],
    rep: u32,
    stop: &StopFlag,
    sink: &mut dyn Sink,
) -> GroupOutcome {
    for (ts, (spec, _)) in targets.iter().zip(members) {
        ts.iter().for_each(|t| t.prepare_cache(spec));
    }
    let files: Vec<Vec<WorkFile>> = (members.iter().zip(targets))
        .map(|((spec, _), ts)| work_files(spec, ts))
        .collect();
    let (lanes, of) = lanes_of(members, targets, corpora, &files, rep);
    let (outs, mut watch) = drive(&lanes, rep, stop, sink);
    let cpu = WindowCpu::since(watch.cpu_before);
    let devices = watch.device_deltas(&lanes, &outs);
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
    let mut by_member: Vec<Vec<(usize, WorkerOut)>> = members.iter().map(|_| Vec::new()).collect();
    for (lane, o) in outs {
        let (i, t) = of[lane];
        by_member[i].push((t, o));
    }
    // An error of the repetition itself (a thread not started, the sink) stops every
    // run; the first run carries it.
    let mut shared_error = watch.spawn_error.take().or(watch.sink_error.take());
    let mut merged: Vec<Merged> = (by_member.into_iter().zip(targets))
        .map(|(o, ts)| Merged::of(o, ts.len()))
        .collect();
    let mut sum = Sum::default();
    for m in &mut merged {
        m.interrupted |= shared_error.is_some() || watch.rate_min.is_some() || stop.is_set();
        sum.add(m);
    }
    let total = sum.all.ios();
    let runs = merged.len();
    let mut reps = Vec::new();
    for (i, m) in merged.iter_mut().enumerate() {
        // The member's lanes: its devices (each once) and its intervals.
        let mine: Vec<usize> = (0..lanes.len()).filter(|l| of[*l].0 == i).collect();
        let own: Vec<Option<DeviceDelta>> = mine.iter().map(|l| devices[*l].clone()).collect();
        let mut seen: Vec<&str> = Vec::new();
        let distinct = own.iter().map(Option::as_ref).filter(|d| {
            let Some(d) = d else { return true };
            let new = !seen.contains(&d.name.as_str());
            seen.push(&d.name);
            new
        });
        let device = (same_ramp && !shared[i])
            .then(|| crate::results::targets::device_sum(distinct))
            .flatten();
        let intervals = all_lanes(mine.iter().map(|l| &watch.intervals[*l]));
        let parts = std::mem::take(&mut m.parts);
        let mut r = m.repetition(members[i].0, rep, cpu, device, &intervals, stop);
        if targets[i].len() > 1 {
            r.targets = target_reps(&targets[i], &parts, own);
        }
        r.cpu = run_cpu(&cpu.divided(sum.workers, sum.kernel, total), m, total, runs);
        let rate_min = watch
            .rate_min
            .take_if(|(lane, _)| of[*lane].0 == i)
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
    kernel: KernelCpu,
}

/// One run's CPU time in a group whose process time is `group`'s: its own job threads'
/// and their io_uring kernel threads', and a share of the rest of the process (the main
/// thread's, exited kernel workers') in proportion to its I/Os (equal shares when none
/// completed), so that each run's parts add up to its whole and the runs' wholes to the
/// process's. (Until 2026-11-29 every run carried the whole group's time beside its own
/// `workers`: two runs each said 1.94 s of CPU, parts of 1.17 and 0.77 s.)
fn run_cpu(group: &Cpu, m: &Merged, total: u64, runs: usize) -> Cpu {
    let share = match total {
        0 => 1.0 / runs.max(1) as f64,
        _ => m.all.ios() as f64 / total as f64,
    };
    let t = |c: crate::io::env::CpuTimes| (c.user_s, c.sys_s);
    let own = [t(m.cpu), t(m.kernel.io_wq), t(m.kernel.sqpoll)];
    let (user, sys) = own.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
    let process = (
        user + group.other.user_s * share,
        sys + group.other.sys_s * share,
    );
    let mut cpu = Cpu::divided(process, own[0], own[1], own[2], m.all.ios());
    // The runs of a group share the window, and the machine.
    cpu.machine = group.machine;
    cpu
}

impl Default for Sum {
    fn default() -> Self {
        Sum {
            all: Tally::new(),
            workers: CpuTimes::default(),
            kernel: KernelCpu::default(),
        }
    }
}

impl Sum {
    fn add(&mut self, m: &Merged) {
        self.all.add(&m.all);
        self.workers = self.workers.plus(m.cpu);
        self.kernel = self.kernel.plus(m.kernel);
    }
}

//! Scale-out over MPI (cargo feature `mpi`): `mpirun -np N iomark run|suite|fio|quick …`.
//! Rank 0's resolved plan is broadcast (the other ranks' own parsing is not used): one
//! run, or every run of a study. Every rank lays out each run's target
//! (`Spec::for_rank`: a `{rank}` template, a file per process in a directory, or a
//! segment of one shared target), checks them all (validation and preflight, within
//! [`CHECK_BOUND`]), and all agree before any I/O, or all stop naming the rank, its host
//! and the reason. The study then runs on every rank as it runs alone (`StudyRunner`:
//! the runs in order, the pauses, the targets' lifetimes), with [`Gather`] as its sink:
//! each repetition starts behind two barriers (before it, and when every job of every
//! rank waits at its gate, so all open together); after it every rank sends its
//! repetition and latency histograms to rank 0, which files the exact aggregate
//! (`results::ranks`) at the run's place in the one results document, and all go on only
//! if none stopped. A rank whose run fails outright (a target it cannot open, say) names
//! itself and aborts the job (`MPI_Abort`), which ends every rank within seconds. Every
//! wait, from the first exchange on, is watched by heartbeats (`pulse`). Only this module
//! talks to MPI; a single-host run never touches it.

use std::time::{Duration, Instant};

use mpi::Threading;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::spec::{Spec, TargetPolicy};
use crate::plan::targets::{Layout, RankPlace};
use crate::plan::{Output, QuickPlan, RunPlan, StudyKind, StudyPoint, StudyRun, SuitePlan};
use crate::results::schema::{MpiInfo, Run};
use crate::stop::StopFlag;
use crate::study::runner::{StudyRunner, TargetLife};
use crate::study::store::Store;

mod gather;
mod pulse;
use gather::Gather;
use pulse::Pulse;

/// How long a rank may take to check its targets before the ranks agree (a `stat` of a
/// file system that does not answer would otherwise hold every rank): the rank then
/// refuses, naming itself and the targets.
pub const CHECK_BOUND: Duration = Duration::from_secs(20);

/// What a scaled-out command runs.
pub enum Job<'a> {
    /// `iomark run`.
    Run(&'a RunPlan),
    /// `iomark suite` (not `steady` or `wsat`) and `iomark fio`.
    Study(&'a SuitePlan),
    /// `iomark quick`.
    Quick(&'a QuickPlan),
}

/// What a scaled-out command produced, on this rank.
pub struct MpiOutcome {
    /// The last run filed (rank 0 only).
    pub run: Option<Run>,
    /// Rank 0's document, saved to `-o` after every repetition (rank 0 only).
    pub store: Option<Store>,
    /// The error that stopped the command, if one did.
    pub failure: Option<Error>,
}

/// One run of rank 0's plan as every rank receives it.
#[derive(Clone, Serialize, Deserialize)]
struct WireRun {
    spec: Spec,
    repeat: u32,
    point: Option<StudyPoint>,
    layout: String,
    keep: bool,
    overwrite: bool,
    allow_write_device: bool,
    destroy_data: bool,
}

/// Rank 0's plan: its runs, and what runs them (`None`: `iomark run`; else the study's
/// kind) on which target, kept or not.
#[derive(Serialize, Deserialize)]
struct Wire {
    kind: Option<String>,
    target: String,
    keep: bool,
    /// `suite steady`: the round limit.
    max_rounds: u32,
    runs: Vec<WireRun>,
}

/// The communicator and where this rank stands.
pub(crate) struct Comm {
    world: SimpleCommunicator,
    rank: u32,
    size: u32,
    host: String,
}

impl Comm {
    /// "rank 2 on node7".
    fn name(rank: u32, host: &str) -> String {
        format!("rank {rank} on {host}")
    }
}

/// Refuses, on every rank alike before MPI starts (each parsed the same command line),
/// what does not scale out: `--resume`.
fn scalable(job: &Job) -> Result<()> {
    match job {
        Job::Study(p) if p.resume.is_some() => Err(Error::usage(
            "--resume does not run under mpirun; run the study again (the document keeps every finished run until then)",
        )),
        _ => Ok(()),
    }
}

/// Runs `job` as one rank of a job an MPI launcher started; `None` when no launcher
/// started this process (the caller runs it alone).
pub fn run_if_launched(job: Job, stop: &StopFlag) -> Result<Option<MpiOutcome>> {
    if !crate::study::mpi_launched() {
        return Ok(None);
    }
    scalable(&job)?;
    let (universe, _) = mpi::initialize_with_threading(Threading::Funneled)
        .ok_or_else(|| Error::runtime("MPI could not be initialised (already initialised?)"))?;
    let world = universe.world();
    let comm = Comm {
        rank: world.rank() as u32,
        size: world.size() as u32,
        host: mpi::environment::processor_name().unwrap_or_else(|_| "?".into()),
        world,
    };
    let out = joined(&comm).and_then(|()| run_rank(&comm, &job, stop));
    // Finalised when `universe` drops, after every rank has returned its result.
    drop(universe);
    out.map(Some)
}

/// Refuses a job whose MPI library did not join the launcher's tasks: the launcher says
/// how many it started (`OMPI_COMM_WORLD_SIZE`, `PMI_SIZE`) and MPI counts fewer, as when
/// an MPI without PMI-2 is started by `srun --mpi=pmi2` (each task then runs alone, all
/// on the same targets and `-o`).
fn joined(comm: &Comm) -> Result<()> {
    let said = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse::<u32>().ok());
    match said {
        Some(n) if n != comm.size => Err(Error::runtime(format!(
            "the launcher started {n} tasks but MPI joined this one to {} (its MPI library cannot talk to this launcher: with Slurm use srun --mpi=pmix, or mpirun); nothing was run",
            comm.size
        ))),
        _ => Ok(()),
    }
}

/// One run as it goes on the wire, with the layout its target asks for.
fn wire_run(plan: &RunPlan, point: Option<StudyPoint>) -> WireRun {
    let is_dir = std::path::Path::new(&plan.spec.target).is_dir();
    WireRun {
        spec: plan.spec.clone(),
        repeat: plan.repeat,
        point,
        layout: Layout::of(&plan.spec.target, is_dir).name().into(),
        keep: plan.policy.keep,
        overwrite: plan.policy.overwrite,
        allow_write_device: plan.policy.allow_write_device,
        destroy_data: plan.policy.destroy_data,
    }
}

/// Rank 0's plan.
fn wire_of(job: &Job) -> Wire {
    let runs = |rs: &[StudyRun], labelled: bool| -> Vec<WireRun> {
        let point = |r: &StudyRun| labelled.then(|| r.point.clone());
        rs.iter().map(|r| wire_run(&r.plan, point(r))).collect()
    };
    match job {
        Job::Run(p) => Wire {
            kind: None,
            target: p.spec.target.clone(),
            keep: p.policy.keep,
            max_rounds: 0,
            runs: vec![wire_run(p, None)],
        },
        Job::Study(p) => Wire {
            kind: Some(p.kind.name().into()),
            target: p.target.clone(),
            keep: p.keep,
            max_rounds: p.max_rounds,
            runs: runs(&p.runs, true),
        },
        // The quick benchmark's file is named after rank 0's process: each rank gets a
        // file of its own in the directory instead (file per process).
        Job::Quick(p) => {
            let dir = crate::results::store::directory_of(&p.file)
                .display()
                .to_string();
            let mut runs = runs(&p.runs, false);
            for w in &mut runs {
                w.spec.target = dir.clone();
                w.layout = Layout::FilePerProcess.name().into();
            }
            Wire {
                kind: Some(StudyKind::Quick.name().into()),
                target: dir,
                keep: false,
                max_rounds: 0,
                runs,
            }
        }
    }
}

fn layout_named(name: &str) -> Layout {
    [Layout::Template, Layout::FilePerProcess, Layout::Segmented]
        .into_iter()
        .find(|l| l.name() == name)
        .unwrap_or(Layout::Segmented)
}

/// Every rank's host, by rank, on every rank.
fn hosts(comm: &Comm, pulse: &mut Pulse) -> Result<Vec<String>> {
    let what = "waiting for every rank's host name";
    let all = pulse.gather(comm, what, comm.host.clone().into_bytes());
    let text = all.map_or(Vec::new(), |a| {
        let names: Vec<String> = a
            .into_iter()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .collect();
        serde_json::to_vec(&names).unwrap_or_default()
    });
    serde_json::from_slice(&pulse.broadcast(comm, what, text))
        .map_err(|e| Error::runtime(format!("the ranks' host names did not arrive: {e}")))
}

/// The checks of one run on one rank that a run alone makes only when it opens its
/// target, after the other ranks have started: a new file whose directory is missing,
/// and a shared target split into segments that does not exist (every rank would make
/// it at once).
fn rank_checks(spec: &Spec, layout: Layout, ranks: u32) -> Result<()> {
    for t in spec.target_paths().into_iter().map(std::path::Path::new) {
        if !spec.engine.caps().needs_fd || t.exists() {
            continue;
        }
        let dir = crate::results::store::directory_of(t);
        if !dir.is_dir() {
            return Err(Error::target(format!(
                "directory {} does not exist; create it first or choose another target",
                dir.display()
            )));
        }
        if layout == Layout::Segmented && ranks > 1 {
            return Err(Error::usage(format!(
                "{} does not exist, and the ranks share it in segments: make it first (iomark run --rw write --size S --keep {}), or name a file per rank with {{rank}} or a directory",
                t.display(),
                t.display()
            )));
        }
    }
    Ok(())
}

/// This rank's runs: each laid out for `place` and checked as a run alone checks it.
fn local_runs(runs: &[WireRun], place: &RankPlace) -> Result<Vec<StudyRun>> {
    runs.iter()
        .map(|w| {
            let layout = layout_named(&w.layout);
            let spec = w.spec.for_rank(layout, place)?;
            let policy = TargetPolicy {
                keep: w.keep,
                overwrite: w.overwrite,
                allow_write_device: w.allow_write_device,
                destroy_data: w.destroy_data,
                verify_state: None,
                hold: false,
            };
            spec.validate()?;
            crate::study::runner::preflight_spec(&spec, &policy)?;
            rank_checks(&spec, layout, place.size)?;
            let point = w.point.clone().unwrap_or_else(|| StudyPoint {
                suite: String::new(),
                test: String::new(),
                param: String::new(),
                value: String::new(),
            });
            Ok(StudyRun {
                plan: RunPlan {
                    spec,
                    policy,
                    repeat: w.repeat,
                    out: Output::default(),
                },
                point,
            })
        })
        .collect()
}

/// [`local_runs`] on a thread of its own, so that this rank goes on beating while it
/// checks, and refuses when the checks take longer than [`CHECK_BOUND`] (a file system
/// that does not answer: the thread is left behind).
fn checked(
    comm: &Comm,
    pulse: &mut Pulse,
    runs: &[WireRun],
    place: &RankPlace,
) -> Result<Vec<StudyRun>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (todo, at) = (runs.to_vec(), place.clone());
    std::thread::spawn(move || {
        let _ = tx.send(local_runs(&todo, &at));
    });
    let began = Instant::now();
    loop {
        if let Ok(r) = rx.try_recv() {
            return r;
        }
        if began.elapsed() > CHECK_BOUND {
            let mut paths: Vec<String> = Vec::new();
            for w in runs {
                let s = w.spec.for_rank(layout_named(&w.layout), place)?;
                for t in s.target_paths() {
                    if !paths.iter().any(|p| p == t) {
                        paths.push(t.to_string());
                    }
                }
            }
            return Err(Error::runtime(format!(
                "checking its target {} did not finish within {} s; is its file system answering?",
                paths.join(", "),
                CHECK_BOUND.as_secs()
            )));
        }
        pulse.beat(comm);
        pulse.hear(comm);
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Each rank has checked its own targets; rank 0 collects the verdicts and every rank
/// learns the first refusal (rank, host, reason, and whether it was bad input).
fn agree(comm: &Comm, pulse: &mut Pulse, mine: &Result<Vec<StudyRun>>) -> Result<()> {
    let verdict = match mine {
        Ok(_) => String::new(),
        Err(e) => format!("{}\t{e}", e.exit_code()),
    };
    let what = "waiting for every rank's verdict on its targets";
    let all = pulse.gather(comm, what, verdict.into_bytes());
    let first = all.map_or(Vec::new(), |all| {
        all.iter()
            .enumerate()
            .find(|(_, v)| !v.is_empty())
            .map_or(Vec::new(), |(r, v)| {
                format!("{r}\t{}", String::from_utf8_lossy(v)).into_bytes()
            })
    });
    let first = String::from_utf8_lossy(&pulse.broadcast(comm, what, first)).into_owned();
    if first.is_empty() {
        return Ok(());
    }
    let mut f = first.splitn(3, '\t');
    let (rank, code, why) = (f.next(), f.next(), f.next().unwrap_or(""));
    let rank: u32 = rank.and_then(|r| r.parse().ok()).unwrap_or(0);
    let host = pulse.hosts.get(rank as usize).map_or("?", String::as_str);
    let msg = format!("{}: {why}", Comm::name(rank, host));
    Err(match code {
        Some("2") => Error::usage(msg),
        _ => Error::runtime(msg),
    })
}

fn run_rank(comm: &Comm, job: &Job, stop: &StopFlag) -> Result<MpiOutcome> {
    let mut pulse = Pulse::new(comm, Vec::new(), stop);
    pulse.hosts = hosts(comm, &mut pulse)?;
    let hosts = pulse.hosts.clone();
    let wire = match comm.rank {
        0 => serde_json::to_vec(&wire_of(job)).unwrap_or_default(),
        _ => Vec::new(),
    };
    let wire = pulse.broadcast(comm, "waiting for rank 0's plan", wire);
    let wire: Wire = serde_json::from_slice(&wire)
        .map_err(|e| Error::runtime(format!("rank 0's plan did not arrive: {e}")))?;
    let local_rank = (hosts[..comm.rank as usize].iter())
        .filter(|h| **h == comm.host)
        .count() as u32;
    let place = RankPlace {
        rank: comm.rank,
        size: comm.size,
        host: comm.host.clone(),
        local_rank,
    };
    let mine = checked(comm, &mut pulse, &wire.runs, &place);
    agree(comm, &mut pulse, &mine)?;
    let runs = mine?;
    let mut gather = Gather {
        comm,
        store: Store::new(job_out(job).output.clone().filter(|_| comm.rank == 0)),
        templates: (wire.runs.iter())
            .map(|w| (w.spec.clone(), w.point.clone()))
            .collect(),
        info: MpiInfo {
            ranks: comm.size,
            hosts,
            layout: wire
                .runs
                .first()
                .map_or(String::new(), |w| w.layout.clone()),
        },
        hists: (Vec::new(), Vec::new()),
        walls: (false, 0),
        idx: 0,
        notes: Vec::new(),
        reps: Vec::new(),
        run: None,
        summary: None,
        pulse,
    };
    let mut runner = StudyRunner::new(Store::new(None), &mut gather, stop);
    let failure = match run_local(&mut runner, &wire, runs) {
        Ok(f) => f,
        Err(e) => {
            // The others wait at the next barrier: end the whole job, naming this rank.
            eprintln!("iomark: {}: {e}", Comm::name(comm.rank, &comm.host));
            comm.world.abort(e.exit_code());
        }
    };
    // A dirty-drive study's purge and verdict are the study's own (the verdict decided on
    // the aggregate): rank 0's document gets them.
    let (purge, steady) = (
        runner.store.doc.purge.take(),
        runner.store.doc.steady_state.take(),
    );
    drop(runner);
    if comm.rank == 0 && (purge.is_some() || steady.is_some()) {
        (gather.store.doc.purge, gather.store.doc.steady_state) = (purge, steady);
        gather.store.save()?;
    }
    let failure =
        failure.map(|e| Error::runtime(format!("{}: {e}", Comm::name(comm.rank, &comm.host))));
    Ok(MpiOutcome {
        store: (comm.rank == 0).then_some(gather.store),
        run: gather.run,
        failure,
    })
}

/// Where the job's results go (rank 0's).
fn job_out<'a>(job: &'a Job) -> &'a Output {
    match job {
        Job::Run(p) => &p.out,
        Job::Study(p) => &p.out,
        Job::Quick(p) => &p.out,
    }
}

/// Runs this rank's part of the plan as a run alone runs it; the error that stopped it,
/// if one did.
fn run_local(runner: &mut StudyRunner, wire: &Wire, runs: Vec<StudyRun>) -> Result<Option<Error>> {
    let kind = wire.kind.as_deref().and_then(StudyKind::parse);
    let Some(kind) = kind else {
        let plan = runs.into_iter().next().map(|r| r.plan);
        let plan = plan.ok_or_else(|| Error::runtime("rank 0's plan holds no run"))?;
        return runner.single(&plan).map(|o| o.failure);
    };
    // The study's own target, laid out for this rank as its first run's.
    let target = runs
        .first()
        .map_or(wire.target.clone(), |r| r.plan.spec.target.clone());
    if kind == StudyKind::Quick {
        let life = TargetLife::new(&target, wire.keep);
        return runner.run_plan(&runs, &[], &life, false);
    }
    let plan = SuitePlan {
        name: kind.name().into(),
        kind,
        target,
        runs,
        out: Output::default(),
        dry_run: false,
        resume: None,
        keep: wire.keep,
        overwrite: false,
        max_rounds: wire.max_rounds,
        // Under mpirun the jobs of a fio group still run one after another (each run
        // gathered from the ranks on its own); see docs/scale-out.md.
        together: Vec::new(),
        fio_jobs: Vec::new(),
        preset_bs: false,
    };
    if kind.is_dirty() {
        return runner.dirty(&plan);
    }
    let done = vec![false; plan.runs.len()];
    runner.run_suite(&plan, &done)
}

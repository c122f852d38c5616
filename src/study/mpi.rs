//! Scale-out over MPI (cargo feature `mpi`): `mpirun -np N iomark run …`. Rank 0's
//! resolved plan is broadcast (the other ranks' own parsing is not used); every rank
//! lays out its target (`Spec::for_rank`: a `{rank}` template, a file per process in a
//! directory, or a segment of one shared target), checks it (validation and preflight),
//! and all agree before any I/O, or all stop naming the rank, its host and the reason.
//! Each repetition starts behind two barriers (before it, and when every job of every
//! rank waits at its gate, so all open together); after it every rank sends its
//! repetition and latency histograms to rank 0, which files the exact aggregate
//! (`results::ranks`) into the one results document, and all go on only if none stopped.
//! A rank whose run fails outright (a target it cannot open, say) names itself and
//! aborts the job (`MPI_Abort`), which ends every rank within seconds. Only this module
//! talks to MPI; a single-host run never touches it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpi::Threading;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::spec::{Spec, TargetPolicy};
use crate::plan::targets::{Layout, RankPlace};
use crate::plan::{Output, RunPlan};
use crate::results::ranks::{RankPart, aggregate, unevenness};
use crate::results::schema::{MpiInfo, Repetition, Run, Status, Summary};
use crate::results::sink::Sink;
use crate::results::stats::LatHist;
use crate::stop::StopFlag;
use crate::study::runner::StudyRunner;
use crate::study::store::Store;

/// What a scaled-out run produced, on this rank.
pub struct MpiOutcome {
    /// The aggregated run (rank 0 only).
    pub run: Option<Run>,
    /// Rank 0's document, saved to `-o` after every repetition (rank 0 only).
    pub store: Option<Store>,
    /// The error that stopped the run, if one did.
    pub failure: Option<Error>,
}

/// Whether an MPI launcher (OpenMPI's mpirun, MPICH's hydra, Slurm's srun with PMI or
/// PMIx) started this process.
fn launched() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// Rank 0's plan as every rank receives it.
#[derive(Serialize, Deserialize)]
struct Wire {
    spec: Spec,
    repeat: u32,
    keep: bool,
    overwrite: bool,
    allow_write_device: bool,
    destroy_data: bool,
    layout: String,
}

/// The communicator and where this rank stands.
struct Comm {
    world: SimpleCommunicator,
    rank: u32,
    size: u32,
    host: String,
}

impl Comm {
    /// Rank 0's bytes on every rank.
    fn broadcast(&self, data: Vec<u8>) -> Vec<u8> {
        let root = self.world.process_at_rank(0);
        let mut len = data.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.rank == 0 {
            data
        } else {
            vec![0u8; len as usize]
        };
        // OpenMPI refuses the dangling pointer of an empty buffer: nothing to send then.
        if len > 0 {
            root.broadcast_into(&mut buf[..]);
        }
        buf
    }

    /// Every rank's bytes at rank 0, in rank order (`None` on the other ranks); rank 0's
    /// watchdog, if armed, names the rank it is waiting for.
    fn gather_watched(&self, data: Vec<u8>, dog: Option<&Watchdog>) -> Option<Vec<Vec<u8>>> {
        if self.rank != 0 {
            // One leading byte, so that no message is empty (see `broadcast`).
            let framed: Vec<u8> = std::iter::once(1).chain(data).collect();
            self.world.process_at_rank(0).send(&framed[..]);
            return None;
        }
        let mut all = vec![data];
        for r in 1..self.size {
            if let Some(d) = dog {
                d.rename(format!("waiting for the figures of rank {r}"));
            }
            let (mut v, _) = self.world.process_at_rank(r as i32).receive_vec::<u8>();
            v.remove(0);
            all.push(v);
        }
        Some(all)
    }

    /// [`Comm::gather_watched`] without a watchdog.
    fn gather(&self, data: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        self.gather_watched(data, None)
    }

    /// "rank 2 on node7".
    fn name(rank: u32, host: &str) -> String {
        format!("rank {rank} on {host}")
    }
}

/// Runs `plan` as one rank of a job an MPI launcher started; `None` when no launcher
/// started this process (the caller runs it alone).
pub fn run_if_launched(plan: &RunPlan, stop: &StopFlag) -> Result<Option<MpiOutcome>> {
    if !launched() {
        return Ok(None);
    }
    let (universe, _) = mpi::initialize_with_threading(Threading::Funneled)
        .ok_or_else(|| Error::runtime("MPI could not be initialised (already initialised?)"))?;
    let world = universe.world();
    let comm = Comm {
        rank: world.rank() as u32,
        size: world.size() as u32,
        host: mpi::environment::processor_name().unwrap_or_else(|_| "?".into()),
        world,
    };
    let out = run_rank(&comm, plan, stop);
    // Finalised when `universe` drops, after every rank has returned its result.
    drop(universe);
    out.map(Some)
}

/// Rank 0's plan, with the layout its target asks for.
fn wire_of(plan: &RunPlan) -> Wire {
    let is_dir = std::path::Path::new(&plan.spec.target).is_dir();
    Wire {
        spec: plan.spec.clone(),
        repeat: plan.repeat,
        keep: plan.policy.keep,
        overwrite: plan.policy.overwrite,
        allow_write_device: plan.policy.allow_write_device,
        destroy_data: plan.policy.destroy_data,
        layout: Layout::of(&plan.spec.target, is_dir).name().into(),
    }
}

fn layout_named(name: &str) -> Layout {
    [Layout::Template, Layout::FilePerProcess, Layout::Segmented]
        .into_iter()
        .find(|l| l.name() == name)
        .unwrap_or(Layout::Segmented)
}

/// Every rank's host, by rank.
fn hosts(comm: &Comm) -> Result<Vec<String>> {
    let all = comm.gather(comm.host.clone().into_bytes());
    let text = all.map_or(Vec::new(), |a| {
        let names: Vec<String> = a
            .into_iter()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .collect();
        serde_json::to_vec(&names).unwrap_or_default()
    });
    serde_json::from_slice(&comm.broadcast(text))
        .map_err(|e| Error::runtime(format!("the ranks' host names did not arrive: {e}")))
}

/// A new file whose directory is missing, refused before the ranks agree (alone, a run
/// finds it when it opens the target, after the other ranks have started).
fn missing_directory(spec: &Spec) -> Result<()> {
    for t in spec.target_paths().into_iter().map(std::path::Path::new) {
        let dir = crate::results::store::directory_of(t);
        if spec.engine.caps().needs_fd && !t.exists() && !dir.is_dir() {
            return Err(Error::target(format!(
                "directory {} does not exist; create it first or choose another target",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Each rank checks its own targets; rank 0 collects the verdicts and every rank learns
/// the first refusal (rank, host, reason, and whether it was bad input).
fn agree(comm: &Comm, mine: &Result<Spec>, hosts: &[String]) -> Result<()> {
    let verdict = match mine {
        Ok(_) => String::new(),
        Err(e) => format!("{}\t{e}", e.exit_code()),
    };
    let first = comm.gather(verdict.into_bytes()).map_or(Vec::new(), |all| {
        all.iter()
            .enumerate()
            .find(|(_, v)| !v.is_empty())
            .map_or(Vec::new(), |(r, v)| {
                format!("{r}\t{}", String::from_utf8_lossy(v)).into_bytes()
            })
    });
    let first = String::from_utf8_lossy(&comm.broadcast(first)).into_owned();
    if first.is_empty() {
        return Ok(());
    }
    let mut f = first.splitn(3, '\t');
    let (rank, code, why) = (f.next(), f.next(), f.next().unwrap_or(""));
    let rank: u32 = rank.and_then(|r| r.parse().ok()).unwrap_or(0);
    let host = hosts.get(rank as usize).map_or("?", String::as_str);
    let msg = format!("{}: {why}", Comm::name(rank, host));
    Err(match code {
        Some("2") => Error::usage(msg),
        _ => Error::runtime(msg),
    })
}

fn run_rank(comm: &Comm, plan: &RunPlan, stop: &StopFlag) -> Result<MpiOutcome> {
    let wire = match comm.rank {
        0 => serde_json::to_vec(&wire_of(plan)).unwrap_or_default(),
        _ => Vec::new(),
    };
    let wire: Wire = serde_json::from_slice(&comm.broadcast(wire))
        .map_err(|e| Error::runtime(format!("rank 0's plan did not arrive: {e}")))?;
    let hosts = hosts(comm)?;
    let local_rank = (hosts[..comm.rank as usize].iter())
        .filter(|h| **h == comm.host)
        .count() as u32;
    let place = RankPlace {
        rank: comm.rank,
        size: comm.size,
        host: comm.host.clone(),
        local_rank,
    };
    let layout = layout_named(&wire.layout);
    let policy = TargetPolicy {
        keep: wire.keep,
        overwrite: wire.overwrite,
        allow_write_device: wire.allow_write_device,
        destroy_data: wire.destroy_data,
        verify_state: None,
        hold: false,
    };
    let mine = wire.spec.for_rank(layout, &place).and_then(|s| {
        s.validate()?;
        crate::study::runner::preflight_spec(&s, &policy)?;
        missing_directory(&s)?;
        Ok(s)
    });
    agree(comm, &mine, &hosts)?;
    let spec = mine?;
    let local = RunPlan {
        spec,
        policy,
        repeat: wire.repeat,
        out: Output::default(),
    };
    let mut gather = Gather {
        comm,
        store: Store::new(plan.out.output.clone().filter(|_| comm.rank == 0)),
        template: wire.spec,
        info: MpiInfo {
            ranks: comm.size,
            hosts,
            layout: wire.layout,
        },
        hists: (Vec::new(), Vec::new()),
        reps: Vec::new(),
        run: None,
        dog: Watchdog::start(Comm::name(comm.rank, &comm.host)),
    };
    let mut runner = StudyRunner::new(Store::new(None), &mut gather, stop);
    let out = match runner.single(&local) {
        Ok(o) => o,
        Err(e) => {
            // The others wait at the next barrier: end the whole job, naming this rank.
            eprintln!("iomark: {}: {e}", Comm::name(comm.rank, &comm.host));
            comm.world.abort(e.exit_code());
        }
    };
    let failure = out
        .failure
        .map(|e| Error::runtime(format!("{}: {e}", Comm::name(comm.rank, &comm.host))));
    Ok(MpiOutcome {
        store: (comm.rank == 0).then_some(gather.store),
        run: gather.run,
        failure,
    })
}

/// The slack of the watchdog: how much longer than expected a rank waits for the others
/// at a barrier or for a repetition's figures before it ends the job.
const SLACK: Duration = Duration::from_secs(30);

/// Ends this rank, and so the job, when it has waited for the other ranks longer than
/// the bound armed (a rank that hangs or stopped): it names what it waited for, removes
/// the files this process made, and exits 1; the launcher then ends the other ranks.
struct Watchdog {
    armed: Arc<Mutex<Option<(Instant, String)>>>,
}

impl Watchdog {
    fn start(me: String) -> Watchdog {
        let armed: Arc<Mutex<Option<(Instant, String)>>> = Arc::new(Mutex::new(None));
        let seen = Arc::clone(&armed);
        let name = me.clone();
        let started = std::thread::Builder::new()
            .name("iomark-watchdog".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(Duration::from_millis(200));
                    let due = seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    if let Some((at, what)) = due.filter(|(at, _)| Instant::now() >= *at) {
                        let waited = at.elapsed().as_secs_f64();
                        eprintln!(
                            "iomark: {name}: no word from the other ranks, {what} (bound exceeded by {waited:.1} s); ending the job"
                        );
                        crate::io::target::remove_unfinished();
                        std::process::exit(1);
                    }
                }
            });
        if started.is_err() {
            eprintln!(
                "iomark: {}: no watchdog thread; a hung rank will not be detected",
                me
            );
        }
        Watchdog { armed }
    }

    fn set(&self, v: Option<(Instant, String)>) {
        *self.armed.lock().unwrap_or_else(|e| e.into_inner()) = v;
    }

    /// Ends the job if not disarmed within `bound`.
    fn arm(&self, bound: Duration, what: String) {
        self.set(Some((Instant::now() + bound, what)));
    }

    /// Keeps the deadline, changes what is waited for.
    fn rename(&self, what: String) {
        let mut g = self.armed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, w)) = g.as_mut() {
            *w = what;
        }
    }

    fn disarm(&self) {
        self.set(None);
    }
}

/// A histogram as buckets ([`LatHist::buckets`]).
type Buckets = Vec<(u64, u64)>;

/// The sink of a rank: barriers at the starts, and the gathering of every repetition
/// into rank 0's document.
struct Gather<'c> {
    comm: &'c Comm,
    /// Rank 0's document (and its `-o` file).
    store: Store,
    /// The plan as rank 0 resolved it, before each rank's layout.
    template: Spec,
    info: MpiInfo,
    /// This rank's latest histograms, as buckets.
    hists: (Buckets, Buckets),
    /// Rank 0: the aggregated repetitions so far, and the run they make.
    reps: Vec<Repetition>,
    run: Option<Run>,
    dog: Watchdog,
}

impl Gather<'_> {
    /// The ranks other than 0 wait a little longer, so that rank 0, which knows which
    /// rank it waits for, is the one that names it.
    fn slack(&self) -> Duration {
        SLACK + Duration::from_secs(5 * u64::from(self.comm.rank != 0))
    }

    /// Rank 0: the run so far, with the aggregate of the ranks' latest repetitions.
    fn file(&mut self, local: &Run, parts: Vec<RankPart>) -> Result<()> {
        let agg = aggregate(&parts, self.template.direct);
        let mut run = local.clone();
        run.warnings.extend(unevenness(&agg));
        self.reps.push(agg);
        run.repetitions = self.reps.clone();
        run.summary = Summary::of(&run.repetitions);
        run.name = format!("{} on {} ranks", self.template.name(), self.comm.size);
        run.spec = self.template.clone();
        run.mpi = Some(self.info.clone());
        if run
            .repetitions
            .iter()
            .any(|r| r.status == Status::Interrupted)
        {
            run.status = Status::Interrupted;
        }
        self.store.update(0, &run)?;
        self.run = Some(run);
        Ok(())
    }
}

impl Sink for Gather<'_> {
    fn rep_started(&mut self, _spec: &Spec, rep: u32, _of: u32) -> Result<bool> {
        // Before the first, ranks lay out new files of any size: no bound there.
        if rep > 1 {
            let bound = Duration::from_secs_f64(self.template.pause_s) + self.slack();
            self.dog
                .arm(bound, format!("waiting at the start of repetition {rep}"));
        }
        self.comm.world.barrier();
        self.dog.disarm();
        Ok(true)
    }

    fn gate_ready(&mut self) -> Result<bool> {
        self.dog.arm(
            self.slack(),
            "waiting for every rank's jobs to set up".into(),
        );
        self.comm.world.barrier();
        self.dog.disarm();
        // A time-based repetition without --verify ends within ramp + runtime on every
        // rank; a size-based one takes what the slowest rank takes: no bound.
        let t = &self.template;
        if let (Some(rt), false, None) = (t.runtime_s, t.verify, t.io_size) {
            let bound = Duration::from_secs_f64(t.ramp_s + rt) + self.slack();
            self.dog
                .arm(bound, "waiting for the repetition's figures".into());
        }
        Ok(true)
    }

    fn rep_latencies(&mut self, read: &LatHist, write: &LatHist) {
        self.hists = (read.buckets(), write.buckets());
    }

    fn rep_finished(&mut self, run: &Run) -> Result<bool> {
        let Some(rep) = run.repetitions.last() else {
            return Ok(true);
        };
        let part = RankPart {
            rank: self.comm.rank,
            host: self.comm.host.clone(),
            path: run.target.path.clone(),
            rep: rep.clone(),
            read_hist: std::mem::take(&mut self.hists.0),
            write_hist: std::mem::take(&mut self.hists.1),
        };
        let bytes = serde_json::to_vec(&part).unwrap_or_default();
        let mut go_on = Vec::new();
        if let Some(all) = self.comm.gather_watched(bytes, Some(&self.dog)) {
            let parts: Vec<RankPart> = all
                .iter()
                .map(|b| serde_json::from_slice(b))
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| Error::runtime(format!("a rank's figures did not arrive: {e}")))?;
            let stopped = parts.iter().any(|p| p.rep.status != Status::Complete);
            self.file(run, parts)?;
            go_on = vec![u8::from(!stopped)];
        }
        // Every rank goes on only if none stopped (a stop on one stops all).
        let go_on = self.comm.broadcast(go_on).first() == Some(&1);
        self.dog.disarm();
        Ok(go_on)
    }
}

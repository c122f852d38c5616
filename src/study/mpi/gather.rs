//! The sink of a scaled-out rank: barriers at each repetition's start and at the common
//! gate, heartbeats while it works, the cross-rank stonewall, and after every repetition
//! the exchange of figures: each rank sends rank 0 its repetition and latency histograms,
//! rank 0 files the exact aggregate (`results::ranks`) into the one results document at
//! the place of the study's run in progress, and tells every rank whether to go on.

use mpi::point_to_point::MatchedReceiveVec;
use mpi::traits::*;

use super::Comm;
use super::pulse::{Pulse, tested};
use crate::error::{Error, Result};
use crate::plan::StudyPoint;
use crate::plan::spec::Spec;
use crate::results::ranks::{RankPart, aggregate, stonewall_note, unevenness};
use crate::results::schema::{MpiInfo, Repetition, Run, Status, Summary};
use crate::results::sink::Sink;
use crate::results::stats::LatHist;
use crate::study::store::Store;

/// The tag of rank 0's word after each repetition (go on; how many ranks finished first).
const GO: i32 = 4;
/// The tag of the figures a rank sends rank 0.
pub(super) const FIGURES: i32 = 1;
/// The tag of a `--stonewall` message: the sender did its work first (its seconds since
/// the start, and its rank, as two `f64`).
const WALL: i32 = 2;

/// A histogram as buckets ([`LatHist::buckets`]).
type Buckets = Vec<(u64, u64)>;

/// The sink of a rank; see the module documentation.
pub(super) struct Gather<'c> {
    pub(super) comm: &'c Comm,
    /// Rank 0's document (and its `-o` file).
    pub(super) store: Store,
    /// Each run of the plan as rank 0 resolved it (before each rank's layout), and its
    /// place in the study (`None` for `iomark run` and the quick benchmark).
    pub(super) templates: Vec<(Spec, Option<StudyPoint>)>,
    pub(super) info: MpiInfo,
    /// This rank's latest histograms, as buckets.
    pub(super) hists: (Buckets, Buckets),
    /// `--stonewall` in this repetition: whether this rank told the others it finished
    /// first, and how many such messages it has received.
    pub(super) walls: (bool, u32),
    /// The run of the plan in progress.
    pub(super) idx: usize,
    /// Rank 0: the notes on the run's aggregated repetitions so far.
    pub(super) notes: Vec<String>,
    /// Rank 0: the run's aggregated repetitions so far, and the run they make.
    pub(super) reps: Vec<Repetition>,
    pub(super) run: Option<Run>,
    /// The aggregate's summary after the latest repetition, on every rank (rank 0's
    /// word carries it).
    pub(super) summary: Option<Summary>,
    pub(super) pulse: Pulse,
}

impl Gather<'_> {
    /// This rank's figures to rank 0, and rank 0's word back (go on, and how many ranks
    /// finished first under `--stonewall`), watched; rank 0 files the aggregate.
    fn exchange(&mut self, run: &Run, bytes: Vec<u8>) -> Result<Vec<u8>> {
        let comm = self.comm;
        if comm.rank != 0 {
            // One leading byte, so that no message is empty (see `Comm::broadcast`).
            let framed: Vec<u8> = std::iter::once(1).chain(bytes).collect();
            let pulse = &mut self.pulse;
            mpi::request::scope(|sc| {
                let to0 = comm.world.process_at_rank(0);
                let mut req = Some(to0.immediate_send_with_tag(sc, &framed[..], FIGURES));
                let only0 = Pulse::only(comm, 0);
                pulse.wait(comm, "sending rank 0 this rank's figures", only0, |_| {
                    tested(&mut req)
                });
            });
            let mut word = Vec::new();
            let only0 = Pulse::only(comm, 0);
            self.pulse
                .wait(comm, "waiting for rank 0's word", only0, |_| {
                    let from0 = comm.world.process_at_rank(0);
                    let Some(probed) = from0.immediate_matched_probe_with_tag(GO) else {
                        return false;
                    };
                    word = probed.matched_receive_vec::<u8>().0;
                    true
                });
            return Ok(word);
        }
        let mut got: Vec<Option<Vec<u8>>> = vec![None; comm.size as usize];
        got[0] = Some(bytes);
        let others = Pulse::others(comm);
        self.pulse
            .wait(comm, "waiting for the ranks' figures", others, |pending| {
                while let Some(probed) =
                    (comm.world.any_process()).immediate_matched_probe_with_tag(FIGURES)
                {
                    let (mut v, status) = probed.matched_receive_vec::<u8>();
                    let r = status.source_rank() as usize;
                    v.remove(0);
                    got[r] = Some(v);
                    pending[r] = false;
                }
                !pending.contains(&true)
            });
        let parts: Vec<RankPart> = got
            .iter()
            .map(|b| serde_json::from_slice(b.as_deref().unwrap_or_default()))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::runtime(format!("a rank's figures did not arrive: {e}")))?;
        let stopped = parts.iter().any(|p| p.rep.status != Status::Complete);
        let first = parts.iter().filter(|p| p.first_done).count() as u8;
        self.file(run, parts)?;
        // The word: go on, how many finished first, and the aggregate's summary.
        let mut word = vec![u8::from(!stopped), first];
        let summary = self.run.as_ref().map(|r| &r.summary);
        word.extend(serde_json::to_vec(&summary).unwrap_or_default());
        for r in 1..comm.size {
            (comm.world.process_at_rank(r as i32)).send_with_tag(&word[..], GO);
        }
        Ok(word)
    }

    /// Rank 0: the run so far, with the aggregate of the ranks' latest repetitions, filed
    /// at its place in the plan (labelled as the study labelled this rank's run; the
    /// rounds of `suite steady` repeat its last planned run).
    fn file(&mut self, local: &Run, parts: Vec<RankPart>) -> Result<()> {
        let (template, point) = (self.templates.get(self.idx))
            .or(self.templates.last())
            .cloned()
            .ok_or_else(|| Error::runtime("rank 0's plan holds no run"))?;
        let point = local.study.clone().or(point);
        let agg = aggregate(&parts, template.direct);
        let mut run = local.clone();
        // The notes of every repetition so far (the local run holds this rank's only).
        self.notes.extend(stonewall_note(&parts, &agg));
        self.notes.extend(unevenness(&agg));
        run.warnings.extend(self.notes.iter().cloned());
        self.reps.push(agg);
        run.repetitions = self.reps.clone();
        run.summary = Summary::of(&run.repetitions);
        run.name = format!("{} on {} ranks", template.name(), self.comm.size);
        run.spec = template;
        run.study = point;
        run.mpi = Some(self.info.clone());
        if run
            .repetitions
            .iter()
            .any(|r| r.status == Status::Interrupted)
        {
            run.status = Status::Interrupted;
        }
        self.store.update(self.idx, &run)?;
        self.run = Some(run);
        Ok(())
    }
}

impl Sink for Gather<'_> {
    fn run_started(&mut self, index: usize, _of: usize, _spec: &Spec) -> Result<bool> {
        // A study's next run: its own repetitions and notes, filed at its own place.
        self.idx = index;
        self.notes.clear();
        self.reps.clear();
        Ok(true)
    }

    fn rep_started(&mut self, _spec: &Spec, rep: u32, _of: u32) -> Result<bool> {
        self.walls = (false, 0);
        let what = format!(
            "waiting at the start of repetition {rep} of run {}",
            self.idx + 1
        );
        self.pulse.barrier(self.comm, &what);
        Ok(true)
    }

    fn gate_ready(&mut self) -> Result<bool> {
        (self.pulse).barrier(self.comm, "waiting for every rank's jobs to set up");
        Ok(true)
    }

    fn layout(&mut self, _done: u64, _total: u64) {
        self.pulse.beat(self.comm);
    }

    fn progress(&mut self, _p: &crate::results::sink::Progress) -> Result<bool> {
        self.pulse.beat(self.comm);
        Ok(true)
    }

    fn alive(&mut self) {
        self.pulse.beat(self.comm);
    }

    fn stonewall(&mut self, done: Option<f64>) -> Option<(String, f64)> {
        let me = self.comm.rank;
        if let Some(at) = done {
            // Small messages: sent eagerly, nobody waits for them to be received.
            for r in (0..self.comm.size).filter(|&r| r != me) {
                (self.comm.world.process_at_rank(r as i32))
                    .send_with_tag(&[at, f64::from(me)][..], WALL);
            }
            self.walls.0 = true;
            return None;
        }
        let probed = (self.comm.world.any_process()).immediate_matched_probe_with_tag(WALL)?;
        let (v, _) = probed.matched_receive_vec::<f64>();
        self.walls.1 += 1;
        let (at, by) = (v.first().copied()?, v.get(1).copied()? as u32);
        let host = self.info.hosts.get(by as usize).map_or("?", String::as_str);
        Some((Comm::name(by, host), at))
    }

    fn gathered(&mut self) -> Option<Summary> {
        self.summary
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
            first_done: self.walls.0,
        };
        let bytes = serde_json::to_vec(&part).unwrap_or_default();
        // Every rank goes on only if none stopped (a stop on one stops all).
        let word = self.exchange(run, bytes)?;
        self.summary = word.get(2..).and_then(|s| serde_json::from_slice(s).ok());
        // Receive the stonewall messages not yet read (from every rank that finished
        // first but this one), so none is left over for the next repetition.
        let sent = u32::from(word.get(1).copied().unwrap_or(0)) - u32::from(self.walls.0);
        while self.walls.1 < sent {
            (self.comm.world.any_process()).receive_vec_with_tag::<f64>(WALL);
            self.walls.1 += 1;
        }
        Ok(word.first() == Some(&1))
    }
}

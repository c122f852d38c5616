//! Plans: what will run, fully resolved and validated, before anything runs. Nothing here
//! does I/O or knows the command line; `cli` builds these, `study` runs them.

use std::path::PathBuf;

use crate::plan::spec::{Spec, TargetPolicy};
use serde::{Deserialize, Serialize};

mod bounds;
pub mod bsmix;
pub mod cache;
pub mod data;
pub mod distribution;
pub mod engine;
pub mod files;
pub mod fio_job;
pub mod matrix;
pub mod new_file;
mod option_def;
pub mod options;
mod options_data;
pub mod resolve;
mod resolve_bs;
mod resolve_pace;
pub mod run_options;
mod rw;
pub mod spec;
mod spec_checks;
mod spec_name;
mod spin;
pub mod suite;
pub mod targets;

/// What resolving a plan needs to know about the system, gathered once by the caller
/// (the binary asks `io`), so that resolution itself does no I/O.
#[derive(Debug, Clone)]
pub struct System {
    /// Whether io_uring can be set up here, or why not.
    pub io_uring: std::result::Result<(), String>,
    /// Whether the process runs as root.
    pub root: bool,
    /// The machine's memory in bytes (0 when unknown), for `--size 2xmem`.
    pub memory_bytes: u64,
}

/// Where results go and how much is printed.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// Write the results document (JSON) here, updated after every repetition.
    pub output: Option<PathBuf>,
    /// Print the results document on stdout (the summary goes to stderr).
    pub json: bool,
    /// No progress display.
    pub quiet: bool,
    /// Replace an existing output file: a results document holding measurements, or a
    /// file that is not an earlier iomark document.
    pub force: bool,
}

/// One resolved run of a study.
#[derive(Debug, Clone)]
pub struct StudyRun {
    pub plan: RunPlan,
    pub point: StudyPoint,
}

/// The resolved `suite` command.
#[derive(Debug, Clone)]
pub struct SuitePlan {
    pub name: String,
    pub kind: StudyKind,
    pub target: String,
    pub runs: Vec<StudyRun>,
    pub out: Output,
    pub dry_run: bool,
    pub resume: Option<PathBuf>,
    /// The user asked to keep the target.
    pub keep: bool,
    /// The user allowed overwriting an existing target.
    pub overwrite: bool,
    /// steady: the round limit.
    pub max_rounds: u32,
    /// The runs measured together, as ranges of `runs` (`iomark fio`: the jobs of a fio
    /// group); every other run is measured alone.
    pub together: Vec<std::ops::Range<usize>>,
    /// `iomark fio`: each run's job, to name a refusal by the job file's line
    /// (`fio_job::in_job_terms`); empty for any other study.
    pub fio_jobs: Vec<fio_job::map::MappedJob>,
    /// `suite bs` with the preset's sizes (no `--bs`): those below the targets'
    /// direct-I/O alignment are left out before it runs (`study::fit`).
    pub preset_bs: bool,
}

/// Size of a file iomark creates when `--size` is not given.
pub const DEFAULT_NEW_FILE_SIZE: u64 = 1 << 30;

/// The rate a size-based run (a precondition, a wsat volume) is estimated at in a plan:
/// stated next to every such estimate, since the device decides.
pub const ASSUMED_BYTES_PER_S: f64 = 500e6;

/// Seconds a size-based run would take at [`ASSUMED_BYTES_PER_S`], when its span is known.
pub(crate) fn size_based_estimate_s(plan: &RunPlan) -> Option<f64> {
    let s = &plan.spec;
    let span = s.size? as f64;
    let per_job = match (s.io_size, s.io_spans) {
        (Some(b), _) => b as f64,
        (None, Some(n)) => n * span,
        (None, None) => span,
    };
    Some(
        plan.repeat as f64 * per_job * s.jobs as f64
            / s.io_share.max(1) as f64
            / ASSUMED_BYTES_PER_S,
    )
}

/// Seconds a run is expected to take (`None` for a size-based run, which depends on the
/// device): repetitions × (ramp + runtime), plus the pauses.
pub(crate) fn estimate_s(plan: &RunPlan) -> Option<f64> {
    let s = &plan.spec;
    s.runtime_s.map(|rt| {
        let reps = plan.repeat as f64;
        reps * (s.startdelay_end_s() + s.ramp_s + rt) + reps * s.pause_s
    })
}

/// How a run's expected time was reckoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EstimateBasis {
    /// From its runtime, ramp, repetitions and pauses.
    Runtime,
    /// A size-based run at [`ASSUMED_BYTES_PER_S`] (the device may be far faster or slower).
    AssumedRate,
}

/// The expected time of a study: one reckoning for the `--dry-run` listing, its JSON and
/// the line that opens a study, so that they cannot disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanEstimate {
    /// Each run's seconds and how they were reckoned; `None` for a size-based run whose
    /// span is not known before the target is opened.
    pub runs: Vec<Option<(f64, EstimateBasis)>>,
    /// The whole plan at the least (a steady study's fewest rounds) and at the most (all
    /// its rounds); equal for other studies.
    pub low_s: f64,
    pub high_s: f64,
    /// Some run's time is an assumed rate's.
    pub assumed: bool,
    /// Runs with no estimate at all.
    pub unknown: usize,
    /// A steady study's fewest and most rounds.
    pub rounds: Option<(u32, u32)>,
}

/// The fewest rounds a steady study runs (its window of 5 must fill).
pub const STEADY_MIN_ROUNDS: u32 = 5;

impl PlanEstimate {
    /// Reckons `plan`.
    pub fn of(plan: &SuitePlan) -> PlanEstimate {
        let runs: Vec<Option<(f64, EstimateBasis)>> = (plan.runs.iter())
            .map(
                |r| match (estimate_s(&r.plan), size_based_estimate_s(&r.plan)) {
                    (Some(e), _) => Some((e, EstimateBasis::Runtime)),
                    (None, Some(e)) => Some((e, EstimateBasis::AssumedRate)),
                    (None, None) => None,
                },
            )
            .collect();
        let mut total: f64 = runs.iter().flatten().map(|(e, _)| e).sum();
        // Runs measured together take as long as the longest of them.
        for g in plan.together.iter().filter(|g| g.end <= runs.len()) {
            let each: Vec<f64> = runs[g.clone()].iter().flatten().map(|(e, _)| *e).collect();
            total -= each.iter().sum::<f64>() - each.iter().copied().fold(0.0, f64::max);
        }
        let round_s = (plan.runs.iter().zip(&runs))
            .filter(|(r, _)| r.point.role() == Role::Round)
            .find_map(|(_, e)| e.map(|(e, _)| e));
        let rounds = (plan.kind == StudyKind::Steady && round_s.is_some())
            .then_some((STEADY_MIN_ROUNDS.min(plan.max_rounds), plan.max_rounds));
        let (low_s, high_s) = match (rounds, round_s) {
            // The plan holds one round; the study repeats it.
            (Some((lo, hi)), Some(r)) => (
                total + r * lo.saturating_sub(1) as f64,
                total + r * hi.saturating_sub(1) as f64,
            ),
            _ => (total, total),
        };
        PlanEstimate {
            assumed: runs
                .iter()
                .flatten()
                .any(|(_, b)| *b == EstimateBasis::AssumedRate),
            unknown: runs.iter().filter(|e| e.is_none()).count(),
            runs,
            low_s,
            high_s,
            rounds,
        }
    }
}

/// The resolved `run` command.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub spec: Spec,
    pub policy: TargetPolicy,
    pub repeat: u32,
    pub out: Output,
}

/// The resolved `quick` command: the `quick` preset on a new file.
#[derive(Debug, Clone)]
pub struct QuickPlan {
    pub file: PathBuf,
    pub runs: Vec<StudyRun>,
    pub out: Output,
}

/// The resolved `data` command.
#[derive(Debug, Clone)]
pub struct DataPlan {
    /// A write workload with the data options, whose job 1 writes the stream.
    pub spec: Spec,
    /// `--size`: the stream is the whole writes that fit in it, what a write run's first
    /// pass over a span of this size writes (no partial block).
    pub size: u64,
    pub output: String,
    pub quiet: bool,
}

/// Where the stream `iomark data` made ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamEnd {
    /// Bytes and writes of the stream.
    pub bytes: u64,
    pub writes: u64,
    /// The size of the write that did not fit in what was left of `--size` (a run's next
    /// pass begins with it), 0 when the stream filled it or was stopped.
    pub next: u64,
}

/// A run's place in a study: which test, and the value of the swept parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyPoint {
    /// The preset (`corners`, `qd`, …) or `matrix`.
    pub suite: String,
    /// The test the run belongs to, e.g. `randread` or `randread bs=8k`.
    pub test: String,
    /// The swept parameter, e.g. `qd`, `bs`, `compress`, `cache`.
    pub param: String,
    /// Its value in this run, e.g. `32`.
    pub value: String,
}

/// The studies `iomark suite` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StudyKind {
    Quick,
    Corners,
    Compress,
    Qd,
    Bs,
    Cache,
    Steady,
    Wsat,
    Matrix,
    /// fio job files (`iomark fio`).
    Fio,
}

impl StudyKind {
    pub(crate) const ALL: [StudyKind; 10] = [
        StudyKind::Quick,
        StudyKind::Corners,
        StudyKind::Compress,
        StudyKind::Qd,
        StudyKind::Bs,
        StudyKind::Cache,
        StudyKind::Steady,
        StudyKind::Wsat,
        StudyKind::Matrix,
        StudyKind::Fio,
    ];

    /// The name on the command line and in results (`suite`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            StudyKind::Quick => "quick",
            StudyKind::Corners => "corners",
            StudyKind::Compress => "compress",
            StudyKind::Qd => "qd",
            StudyKind::Bs => "bs",
            StudyKind::Cache => "cache",
            StudyKind::Steady => "steady",
            StudyKind::Wsat => "wsat",
            StudyKind::Matrix => "matrix",
            StudyKind::Fio => "fio",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<StudyKind> {
        StudyKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Dirty-drive studies: purge first, then rounds that depend on the drive's state.
    pub fn is_dirty(self) -> bool {
        matches!(self, StudyKind::Steady | StudyKind::Wsat)
    }
}

/// What a run is for within a study.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A measurement the study reports.
    Measure,
    /// Fills the target with the data the next runs read (compress study).
    Fill,
    /// Writes the span so the drive reaches its working state (steady study).
    Precondition,
    /// One round of the steady-state test.
    Round,
}

impl StudyPoint {
    /// What the run is for, from its test name (the results keep the name).
    pub(crate) fn role(&self) -> Role {
        match self.test.as_str() {
            "fill" => Role::Fill,
            "precondition" => Role::Precondition,
            "round" => Role::Round,
            _ => Role::Measure,
        }
    }

    /// Whether the run only prepares the target for the runs after it.
    pub(crate) fn is_preparation(&self) -> bool {
        matches!(self.role(), Role::Fill | Role::Precondition)
    }
}

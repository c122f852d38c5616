//! Plans: what will run, fully resolved and validated, before anything runs. Nothing here
//! does I/O or knows the command line; `cli` builds these, `study` runs them.

use std::path::PathBuf;

use crate::plan::spec::{Spec, TargetPolicy};
use serde::{Deserialize, Serialize};

pub mod data;
pub mod quick;
pub mod spec;
pub mod suite;

/// Where results go and how much is printed.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// Write the results document (JSON) here, updated after every repetition.
    pub output: Option<PathBuf>,
    /// Print the results document on stdout (the summary goes to stderr).
    pub json: bool,
    /// No progress display.
    pub quiet: bool,
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
}

/// Seconds a run is expected to take (`None` for a size-based run, which depends on the
/// device): repetitions × (ramp + runtime), plus the pauses.
pub fn estimate_s(plan: &RunPlan) -> Option<f64> {
    let s = &plan.spec;
    s.runtime_s.map(|rt| {
        let reps = plan.repeat as f64;
        reps * (s.ramp_s + rt) + reps * s.pause_s
    })
}

/// The resolved `run` command.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub spec: Spec,
    pub policy: TargetPolicy,
    pub repeat: u32,
    pub out: Output,
}

/// The resolved `quick` command: a list of specs on one file.
#[derive(Debug, Clone)]
pub struct QuickPlan {
    pub file: PathBuf,
    pub specs: Vec<Spec>,
    pub out: Output,
}

/// The resolved `data` command.
#[derive(Debug, Clone)]
pub struct DataPlan {
    /// A write workload with the data options, whose job 1 writes the stream.
    pub spec: Spec,
    pub size: u64,
    pub output: String,
    pub quiet: bool,
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

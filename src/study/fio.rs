//! fio job files as a study: the runs in order, as [`StudyRunner::run_plan`] runs a
//! suite, but each job may name its own file, so every file the study makes has its own
//! lifetime (held across the runs that use it, removed at the end unless `--keep`).
//! Prints nothing.

use std::time::Instant;

use crate::error::{Error, Result};
use crate::plan::{SuitePlan, estimate_s};
use crate::study::runner::{StudyRunner, TargetLife, preflight};

impl StudyRunner<'_> {
    /// Runs the runs of `plan` not marked `done`; see the module documentation.
    pub(crate) fn run_fio(&mut self, plan: &SuitePlan, done: &[bool]) -> Result<Option<Error>> {
        let runs = &plan.runs;
        let todo = |i: usize| !done.get(i).copied().unwrap_or(false);
        let left: Vec<_> = (0..runs.len())
            .filter(|i| todo(*i))
            .map(|i| runs[i].clone())
            .collect();
        preflight(&left)?;
        // One lifetime per file.
        let mut lives: Vec<(String, TargetLife)> = Vec::new();
        for r in runs.iter().filter(|r| r.plan.spec.engine.caps().needs_fd) {
            let t = &r.plan.spec.target;
            if !lives.iter().any(|(p, _)| p == t) {
                lives.push((t.clone(), TargetLife::new(t, plan.keep)));
            }
        }
        let started = Instant::now();
        let mut outcome: Result<Option<Error>> = Ok(None);
        for (i, r) in runs.iter().enumerate() {
            if !todo(i) {
                continue;
            }
            if self.stop.is_set() {
                break;
            }
            if i > 0 && r.plan.spec.pause_s > 0.0 {
                self.stop.pause(r.plan.spec.pause_s);
            }
            let rest: f64 = (i..runs.len())
                .filter(|j| todo(*j))
                .filter_map(|j| estimate_s(&runs[j].plan))
                .sum();
            self.progress.plan_position(started, rest);
            match self.run_one(i, runs.len(), r, Some(r.point.clone())) {
                Ok(out) if out.failure.is_some() => {
                    outcome = Ok(out.failure);
                    break;
                }
                Ok(_) => {}
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        for (_, life) in &lives {
            life.end();
        }
        outcome
    }
}

//! fio job files as a study: the runs in order, as [`StudyRunner::run_plan`] runs a
//! suite, but each job may name its own file, so every file the study makes has its own
//! lifetime (held across the runs that use it, removed at the end unless `--keep`), and
//! the jobs of a fio group are measured together (`measure::group`). Prints nothing.

use std::time::Instant;

use crate::error::{Error, Result};
use crate::measure::group::run_group;
use crate::plan::fio_job::in_job_terms;
use crate::plan::spec::{Spec, TargetPolicy};
use crate::plan::{StudyRun, SuitePlan, estimate_s};
use crate::study::runner::{StudyRunner, TargetLife, preflight_plan};
use crate::study::store::Filing;
use crate::units::fmt_size;

/// A job whose `offset` plus `size` runs past the end of a block device runs over what
/// there is, as fio runs it (fio takes `size` down to the device's length less the
/// offset, and says nothing): its span is taken down so, and the run says so. An offset
/// at or past the end is left to the preflight's refusal (fio would do no I/O).
pub fn fit_to_devices(plan: &mut SuitePlan) {
    for (run, job) in plan.runs.iter_mut().zip(&plan.fio_jobs) {
        let spec = &mut run.plan.spec;
        let Some(size) = spec.size.filter(|_| spec.targets.len() <= 1) else {
            continue;
        };
        let Some(len) = crate::io::target::device_len(&spec.target) else {
            continue;
        };
        if spec.offset >= len || spec.offset + size <= len {
            continue;
        }
        let line = |ours: &str| {
            let (_, kv, at) = job.sources.iter().find(|(o, _, _)| o == ours)?;
            Some(format!("{kv} ({at})"))
        };
        let asked = match (line("size"), line("offset")) {
            (Some(s), Some(o)) => format!("{s} from {o}"),
            (Some(s), None) => s,
            _ => format!("size {}", fmt_size(size)),
        };
        let fits = len - spec.offset;
        let note = format!(
            "{asked} runs past the end of the device {} ({}): as fio does, the job runs over the {} there are",
            spec.target,
            fmt_size(len),
            fmt_size(fits)
        );
        spec.size = Some(fits);
        spec.engine_note = Some(match spec.engine_note.take() {
            Some(n) => format!("{n}; {note}"),
            None => note,
        });
    }
}

impl StudyRunner<'_> {
    /// Runs the runs of `plan` not marked `done`; see the module documentation.
    pub(crate) fn run_fio(&mut self, plan: &SuitePlan, done: &[bool]) -> Result<Option<Error>> {
        let runs = &plan.runs;
        let todo = |i: usize| !done.get(i).copied().unwrap_or(false);
        preflight_plan(plan, done)?;
        // One lifetime per file.
        let mut lives: Vec<(String, TargetLife)> = Vec::new();
        for r in runs.iter().filter(|r| r.plan.spec.engine.caps().needs_fd) {
            for t in r.plan.spec.target_paths() {
                if !lives.iter().any(|(p, _)| p == t) {
                    lives.push((t.to_string(), TargetLife::new(t, plan.keep)));
                }
            }
        }
        let started = Instant::now();
        let mut outcome: Result<Option<Error>> = Ok(None);
        let mut i = 0;
        while i < runs.len() {
            let r = &runs[i];
            let group = (plan.together.iter()).find(|g| g.start == i).cloned();
            let range = group.clone().unwrap_or(i..i + 1);
            i = range.end;
            // A group is measured again whole unless every one of its runs is done.
            if range.clone().all(|j| !todo(j)) {
                continue;
            }
            if self.stop.is_set() {
                break;
            }
            if range.start > 0 && r.plan.spec.pause_s > 0.0 {
                self.stop.pause(r.plan.spec.pause_s);
            }
            let rest: f64 = (range.start..runs.len())
                .filter(|j| todo(*j))
                .filter_map(|j| estimate_s(&runs[j].plan))
                .sum();
            self.progress.plan_position(started, rest);
            let result = match group {
                Some(g) => self.run_together(g, runs.len(), &runs[range.clone()]),
                None => (self.run_one(range.start, runs.len(), r, Some(r.point.clone())))
                    .map(|out| out.failure),
            };
            if result.is_ok() {
                self.in_job_words(range.clone())?;
            }
            match result {
                Ok(Some(failure)) => {
                    outcome = Ok(Some(in_job_terms(&plan.fio_jobs, range, failure)));
                    break;
                }
                Ok(None) => {}
                Err(e) => {
                    outcome = Err(in_job_terms(&plan.fio_jobs, range, e));
                    break;
                }
            }
        }
        for (_, life) in &lives {
            life.end();
        }
        outcome
    }

    /// The advice of the runs `at` (their warnings and errors, filed already) in the job
    /// file's words: the user wrote no iomark flags (`--size 48g` reads `size=48g`).
    fn in_job_words(&mut self, at: std::ops::Range<usize>) -> Result<()> {
        let mut changed = false;
        let runs = self.store.doc.runs.iter_mut();
        for w in runs
            .skip(at.start)
            .take(at.len())
            .flat_map(|r| r.warnings.iter_mut().chain(r.error.as_mut()))
        {
            let words = crate::plan::fio_job::in_job_words(w);
            changed |= words != *w;
            *w = words;
        }
        // Saved again only when the words changed (the run was saved as it was filed).
        if changed { self.store.save() } else { Ok(()) }
    }

    /// Measures `runs` (the plan's runs `at`, of `of`) together, each filed at its place
    /// in the document; returns the first run's failure, if one failed.
    fn run_together(
        &mut self,
        at: std::ops::Range<usize>,
        of: usize,
        runs: &[StudyRun],
    ) -> Result<Option<Error>> {
        // Held for the study's next runs, as `run_one` holds a run's file.
        let policies: Vec<TargetPolicy> = (runs.iter())
            .map(|r| TargetPolicy {
                keep: true,
                hold: true,
                ..r.plan.policy.clone()
            })
            .collect();
        let members: Vec<(&Spec, &TargetPolicy)> =
            runs.iter().map(|r| &r.plan.spec).zip(&policies).collect();
        self.progress.run_started(at.start, of, members[0].0)?;
        let names: Vec<&str> = runs.iter().map(|r| r.point.test.as_str()).collect();
        let label = format!("group {}: {}", runs[0].point.value, names.join(", "));
        self.progress.group_started(&label);
        let mut filing = Filing {
            store: &mut self.store,
            idx: at.start,
            points: runs.iter().map(|r| r.point.clone()).collect(),
            next: &mut *self.progress,
        };
        let repeat = runs.iter().map(|r| r.plan.repeat).max().unwrap_or(1);
        let outs = run_group(&members, repeat, self.stop, &mut filing)?;
        let mut failure = None;
        for (i, (mut out, r)) in outs.into_iter().zip(runs).enumerate() {
            out.run.study = Some(r.point.clone());
            self.store.update(at.start + i, &out.run)?;
            failure = failure.or(out.failure);
        }
        Ok(failure)
    }
}

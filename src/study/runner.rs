//! The study runner: every loop over several runs (a suite, the quick benchmark, a single
//! run with its repetitions) goes through [`StudyRunner::run_plan`]: the runs in order,
//! the pause between them, resume, saving after every repetition (the [`Store`]), and
//! the lifetime of a target the study creates (kept across its runs, removed at the end
//! unless `--keep`). It prints nothing: events go to the sink, the document stays in the
//! store for the caller to report.

use std::path::PathBuf;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::measure::run::{Earlier, RunOutcome, run};
use crate::plan::spec::TargetPolicy;
use crate::plan::{RunPlan, StudyRun, SuitePlan, estimate_s};
use crate::results::schema::{Document, Status};
use crate::results::sink::Sink;
use crate::stop::StopFlag;
use crate::study::store::{Filing, Store};

/// A target file a study may create: removed at the end if it was not there before, unless
/// the user asked to keep it.
pub struct TargetLife {
    /// Every target of the study, each once.
    paths: Vec<PathBuf>,
    keep: bool,
}

impl TargetLife {
    /// The target `path` of a study; `keep` keeps a file the study creates.
    pub fn new(path: &str, keep: bool) -> TargetLife {
        TargetLife::of_all([path], keep)
    }

    /// [`TargetLife::new`] for every target of a study on several.
    pub fn of_all<'a>(paths: impl IntoIterator<Item = &'a str>, keep: bool) -> TargetLife {
        let mut all: Vec<PathBuf> = Vec::new();
        for p in paths.into_iter().map(PathBuf::from) {
            if !all.contains(&p) {
                all.push(p);
            }
        }
        TargetLife { paths: all, keep }
    }

    /// Removes each target the study created (even if the run that made it failed
    /// afterwards), or marks it kept with `--keep`: only while the path still names the
    /// file this process made and marked (`io::mark::release_held`).
    pub(crate) fn end(&self) {
        for path in &self.paths {
            crate::io::mark::release_held(path, self.keep);
        }
    }
}

/// Runs plans into a store; see the module documentation.
pub struct StudyRunner<'a> {
    pub store: Store,
    pub progress: &'a mut dyn Sink,
    pub stop: &'a StopFlag,
    /// `--resume` of a study cut in a run: that run's index and its finished repetitions.
    carried: Option<(usize, Earlier)>,
}

impl<'a> StudyRunner<'a> {
    pub fn new(store: Store, progress: &'a mut dyn Sink, stop: &'a StopFlag) -> Self {
        StudyRunner {
            store,
            progress,
            stop,
            carried: None,
        }
    }

    /// Runs one run of a plan into the document at `idx`. A file the run creates is held
    /// for the study's next runs (they may write it because it bears this process's
    /// mark, not because overwriting is allowed: a file put in its place meanwhile is
    /// refused) and released by [`TargetLife::end`].
    pub(crate) fn run_one(
        &mut self,
        idx: usize,
        of: usize,
        r: &StudyRun,
        point: Option<crate::plan::StudyPoint>,
    ) -> Result<RunOutcome> {
        let policy = TargetPolicy {
            keep: true,
            hold: true,
            ..r.plan.policy.clone()
        };
        self.progress.run_started(idx, of, &r.plan.spec)?;
        self.filed(idx, point, &r.plan, &policy)
    }

    /// Runs one run as the user gave it (`iomark run`): the target policy is the user's, so
    /// a file the run creates is removed at its end unless `--keep`.
    pub fn single(&mut self, plan: &RunPlan) -> Result<RunOutcome> {
        preflight_spec(&plan.spec, &plan.policy)?;
        self.filed(0, None, plan, &plan.policy)
    }

    /// Runs `plan` under `policy`, filing every repetition into the document at `idx`
    /// labelled with `point`, and the finished run once more at the end.
    fn filed(
        &mut self,
        idx: usize,
        point: Option<crate::plan::StudyPoint>,
        plan: &RunPlan,
        policy: &TargetPolicy,
    ) -> Result<RunOutcome> {
        let mut filing = Filing {
            store: &mut self.store,
            idx,
            points: point.iter().cloned().collect(),
            next: &mut *self.progress,
        };
        let earlier = match self.carried.take() {
            Some((i, e)) if i == idx => e,
            other => {
                self.carried = other;
                Earlier::default()
            }
        };
        let mut out = run(
            &plan.spec,
            policy,
            plan.repeat,
            earlier,
            self.stop,
            &mut filing,
        )?;
        out.run.study = point;
        self.store.update(idx, &out.run)?;
        Ok(out)
    }

    /// Runs every run of `runs` not marked done, in order, with the pauses between them;
    /// the target is removed at the end if the study created it (`life`). Returns the
    /// error that stopped the plan, if one did.
    pub fn run_plan(
        &mut self,
        runs: &[StudyRun],
        done: &[bool],
        life: &TargetLife,
        labelled: bool,
    ) -> Result<Option<Error>> {
        let left: Vec<StudyRun> = (runs.iter().enumerate())
            .filter(|(i, _)| !done.get(*i).copied().unwrap_or(false))
            .map(|(_, r)| r.clone())
            .collect();
        preflight(&left)?;
        let started = Instant::now();
        let mut outcome: Result<Option<Error>> = Ok(None);
        for (i, r) in runs.iter().enumerate() {
            if done.get(i).copied().unwrap_or(false) {
                continue;
            }
            if self.stop.is_set() {
                break;
            }
            if i > 0 && r.plan.spec.pause_s > 0.0 {
                self.stop.pause(r.plan.spec.pause_s);
            }
            let left: f64 = runs[i..]
                .iter()
                .enumerate()
                .filter(|(j, _)| !done.get(i + j).copied().unwrap_or(false))
                .filter_map(|(_, r)| estimate_s(&r.plan))
                .sum();
            self.progress.plan_position(started, left);
            let point = labelled.then(|| r.point.clone());
            // The study's target is created by its first run and held until the end.
            match self.run_one(i, runs.len(), r, point) {
                Ok(out) => {
                    if out.failure.is_some() {
                        outcome = Ok(out.failure);
                        break;
                    }
                }
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        life.end();
        outcome
    }

    /// Runs a suite (not a dirty-drive study), continuing `plan.resume` if given.
    #[cfg(test)]
    pub(crate) fn suite(&mut self, plan: &SuitePlan) -> Result<Option<Error>> {
        let done = self.prepare(plan)?;
        self.run_suite(plan, &done)
    }

    /// Before a suite runs: with `--resume`, loads the document and checks it against the
    /// plan. Returns which runs are done already.
    pub fn prepare(&mut self, plan: &SuitePlan) -> Result<Vec<bool>> {
        match &plan.resume {
            Some(path) => self.resume(plan, path),
            None => Ok(vec![false; plan.runs.len()]),
        }
    }

    /// Runs the runs of a suite not marked `done`.
    pub fn run_suite(&mut self, plan: &SuitePlan, done: &[bool]) -> Result<Option<Error>> {
        if plan.kind == crate::plan::StudyKind::Fio {
            return self.run_fio(plan, done); // a file per job (`study::fio`)
        }
        let mut paths = crate::plan::targets::plan_targets(&plan.runs);
        paths.insert(0, &plan.target);
        let life = TargetLife::of_all(paths, plan.keep);
        self.run_plan(&plan.runs, done, &life, true)
    }

    /// Loads the document to resume and checks that it came from this plan; returns which
    /// runs are done. Interrupted runs are dropped so the document stays in plan order; the
    /// one the study was cut in is measured again after the repetitions it finished.
    fn resume(&mut self, plan: &SuitePlan, path: &std::path::Path) -> Result<Vec<bool>> {
        let doc = Document::load(path)?;
        check_resume(plan, path, &doc)?;
        let mut done: Vec<bool> = vec![false; plan.runs.len()];
        for (i, r) in doc.runs.iter().enumerate() {
            done[i] = r.status == Status::Complete;
        }
        let mut keep_n = done.iter().take_while(|&&d| d).count();
        // A study's own target is gone after the interruption: runs that read what a
        // preparation run (a fill) wrote must start again from that preparation.
        if !std::path::Path::new(&plan.target).exists()
            && keep_n < plan.runs.len()
            && !plan.runs[keep_n].point.is_preparation()
            && let Some(fill) = plan.runs[..keep_n]
                .iter()
                .rposition(|r| r.point.is_preparation())
        {
            keep_n = fill;
        }
        // The run the study was cut in keeps the repetitions it finished (not a fio
        // file's, whose groups run together, nor --verify's, whose state builds up).
        let cut = doc.runs.get(keep_n).filter(|r| {
            r.status == Status::Interrupted
                && plan.kind != crate::plan::StudyKind::Fio
                && !r.spec.verify
        });
        if let Some(r) = cut {
            let reps: Vec<_> = (r.repetitions.iter().enumerate())
                .take_while(|(i, x)| x.status == Status::Complete && x.index == *i as u32 + 1)
                .map(|(_, x)| x.clone())
                .collect();
            let warnings = (r.warnings.iter())
                .filter(|w| {
                    (w.strip_prefix("repetition "))
                        .and_then(|w| w.split(':').next()?.parse::<usize>().ok())
                        .is_some_and(|i| i <= reps.len())
                })
                .cloned()
                .collect();
            self.carried = Some((keep_n, Earlier { reps, warnings }));
        }
        self.store.doc = doc;
        self.store.doc.runs.truncate(keep_n);
        for d in done.iter_mut().skip(keep_n) {
            *d = false;
        }
        Ok(done)
    }
}

/// A document can be resumed by the plan that made it: same runs, same specs, in order.
/// Every run's permissions and room, before the first I/O (and for `--dry-run`): the
/// refusals `Target::open` would make later, made now (`io::target::preflight`).
pub fn preflight(runs: &[StudyRun]) -> Result<()> {
    runs.iter()
        .try_for_each(|r| preflight_spec(&r.plan.spec, &r.plan.policy))
}

/// [`preflight`] of a study's runs not `done`, each refusal of an `iomark fio` run named
/// by its job file's line.
pub fn preflight_plan(plan: &crate::plan::SuitePlan, done: &[bool]) -> Result<()> {
    (plan.runs.iter().enumerate())
        .filter(|(i, _)| !done.get(*i).copied().unwrap_or(false))
        .try_for_each(|(i, r)| {
            preflight_spec(&r.plan.spec, &r.plan.policy)
                .map_err(|e| crate::plan::fio_job::in_job_terms(&plan.fio_jobs, i..i + 1, e))
        })
}

/// The preflight of every target of one run, before any of them is touched.
pub(crate) fn preflight_spec(spec: &crate::plan::spec::Spec, policy: &TargetPolicy) -> Result<()> {
    if spec.stonewall && spec.targets.len() < 2 && !crate::study::mpi_launched() {
        return Err(Error::usage(
            "--stonewall ends every target's jobs when the first target finishes, and this run has one target: give several targets, or run it as the ranks of an MPI job (mpirun, a build with --features mpi)",
        ));
    }
    if spec.stonewall && spec.serves_files() && !crate::study::mpi_launched() {
        return Err(Error::usage(
            "--stonewall ends every target's jobs when the first target finishes, and with --file-service every job serves every target: drop one of them, or run it as the ranks of an MPI job",
        ));
    }
    crate::measure::check_aio(&[spec])?;
    // (A dry run passed a CPU the run refused.)
    crate::measure::check_cpus(spec)?;
    spec.per_target()
        .iter()
        .try_for_each(|s| crate::io::target::preflight(s, policy))
}

/// The first field in which two specs differ, as "size 8388608 there, 16777216 here".
fn differing(there: &crate::plan::spec::Spec, here: &crate::plan::spec::Spec) -> Option<String> {
    let (a, b) = (
        serde_json::to_value(there).ok()?,
        serde_json::to_value(here).ok()?,
    );
    let (a, b) = (a.as_object()?, b.as_object()?);
    let key = b.keys().find(|k| a.get(*k) != b.get(*k))?;
    let show = |v: Option<&serde_json::Value>| v.map_or("none".into(), |v| v.to_string());
    Some(format!(
        "{key} {} there, {} here",
        show(a.get(key)),
        show(b.get(key))
    ))
}

fn check_resume(plan: &SuitePlan, path: &std::path::Path, doc: &Document) -> Result<()> {
    if doc.runs.len() > plan.runs.len() {
        return Err(Error::document(format!(
            "{} holds {} runs but this study plans {}; resume with the same suite and options",
            path.display(),
            doc.runs.len(),
            plan.runs.len()
        )));
    }
    for (i, r) in doc.runs.iter().enumerate() {
        let want = &plan.runs[i];
        // A run of `--io-size Nx` records the bytes that came to (`Run::spec.io_size`).
        let mut spec = r.spec.clone();
        if want.plan.spec.io_spans.is_some() && want.plan.spec.io_size.is_none() {
            spec.io_size = None;
        }
        if spec != want.plan.spec || r.study.as_ref() != Some(&want.point) {
            return Err(Error::document(format!(
                "{} was made by another plan: run {} there is '{}', here '{}'{}; resume with the same suite and options",
                path.display(),
                i + 1,
                r.name,
                want.plan.spec.name(),
                differing(&spec, &want.plan.spec).map_or(String::new(), |d| format!(" ({d})"))
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;

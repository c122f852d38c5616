//! The results document of a command, kept in memory and saved (atomically, by
//! `Document::save`) after every repetition, so a later failure or a signal loses
//! nothing that was measured. The sink that files each repetition's run into the
//! document at its place in the plan lives here too.

use std::path::PathBuf;

use crate::error::Result;
use crate::plan::StudyPoint;
use crate::plan::spec::Spec;
use crate::results::env::Host;
use crate::results::schema::{Document, Run};
use crate::results::sink::{Progress, Sink};

/// [`check_outputs`] for `iomark run`: against every target it names.
pub fn check_run_outputs(plan: &crate::plan::RunPlan) -> Result<()> {
    keeps_measurements(&plan.out, None, false)?;
    if !plan.spec.engine.caps().needs_fd {
        return check_outputs(&plan.out, None, None, plan.policy.keep);
    }
    let state = plan.policy.verify_state.as_deref();
    plan.spec.target_paths().into_iter().try_for_each(|t| {
        check_outputs(
            &plan.out,
            Some(std::path::Path::new(t)),
            state,
            plan.policy.keep,
        )
    })
}

/// [`check_outputs`] for `iomark suite`: against every target its runs name.
pub fn check_suite_outputs(out: &crate::plan::Output, plan: &crate::plan::SuitePlan) -> Result<()> {
    keeps_measurements(out, plan.resume.as_deref(), true)?;
    let targets = crate::plan::targets::plan_targets(&plan.runs);
    (targets.iter().filter(|t| **t != "null"))
        .try_for_each(|t| check_outputs(out, Some(std::path::Path::new(t)), None, plan.keep))
}

/// [`check_outputs`] for `iomark quick`: against its file.
pub fn check_quick_outputs(out: &crate::plan::Output, file: &std::path::Path) -> Result<()> {
    keeps_measurements(out, None, false)?;
    check_outputs(out, Some(file), None, false)
}

/// Refuses to replace a results document that holds measurements (`-o` naming an earlier
/// run's or study's document: its first save would drop them) without `--force`; a study
/// continuing it (`--resume` of the same file) is what keeps them. An earlier document
/// without runs, or a file of another kind (which [`check_outputs`] judges), passes.
/// `study`: a suite's (whose refusal offers `--resume`).
pub fn keeps_measurements(
    out: &crate::plan::Output,
    resume: Option<&std::path::Path>,
    study: bool,
) -> Result<()> {
    use crate::results::store::{holds_results, same_file};
    let Some(p) = out.output.as_deref().filter(|p| holds_results(p)) else {
        return Ok(());
    };
    if out.force || resume.is_some_and(|r| same_file(r, p)) {
        return Ok(());
    }
    let Ok(doc) = crate::results::schema::Document::load(p) else {
        // Unreadable as a whole: check_outputs and the save say what is wrong with it.
        return Ok(());
    };
    let runs = doc.runs.len();
    if runs == 0 {
        return Ok(());
    }
    let reps: usize = doc.runs.iter().map(|r| r.repetitions.len()).sum();
    Err(crate::error::Error::usage(format!(
        "{} already holds measurements ({runs} run{}, {reps} repetition{}, started {}); choose a new -o{}, or add --force to replace them",
        p.display(),
        if runs == 1 { "" } else { "s" },
        if reps == 1 { "" } else { "s" },
        doc.started,
        if study {
            format!(
                ", --resume {} to continue the same study in it",
                p.display()
            )
        } else {
            String::new()
        }
    )))
}

/// Checks, before anything runs, where a command's files will go: the results document
/// (`out.output`) and the verify state may each be a new file or an earlier one of
/// their kind (or anything regular with `--force`), never the target, nor each other.
pub fn check_outputs(
    out: &crate::plan::Output,
    target: Option<&std::path::Path>,
    verify_state: Option<&std::path::Path>,
    keep: bool,
) -> Result<()> {
    if verify_state.is_some() && !keep && target.is_some_and(|t| !t.exists()) {
        return Err(crate::error::Error::usage(
            "--verify-state saves what every block must hold for a later `iomark verify`, but the file iomark creates is removed at the end: add --keep",
        ));
    }
    use crate::results::store::{check_output, is_results_document, same_file};
    if let Some(p) = &out.output {
        check_output(
            p,
            "the results document",
            &is_results_document,
            out.force,
            target,
        )?;
    }
    if let Some(v) = verify_state {
        check_output(
            v,
            "the verify state",
            &crate::measure::verify::is_state,
            out.force,
            target,
        )?;
        if out.output.as_deref().is_some_and(|p| same_file(p, v)) {
            return Err(crate::error::Error::usage(format!(
                "-o and --verify-state both name {}; give them different files",
                v.display()
            )));
        }
    }
    Ok(())
}

/// The document and where it is saved.
pub struct Store {
    pub doc: Document,
    path: Option<PathBuf>,
    /// Where the document went instead, and why, when its own path failed mid-run.
    pub moved: Option<String>,
}

impl Store {
    /// A new document for this host, saved to `path` when there is one.
    pub fn new(path: Option<PathBuf>) -> Store {
        Store {
            doc: Document::new(Host::capture()),
            path,
            moved: None,
        }
    }

    /// Replaces (or appends) run `idx` and saves.
    pub(crate) fn update(&mut self, idx: usize, run: &Run) -> Result<()> {
        self.update_all(idx, std::slice::from_ref(run))
    }

    /// Files `runs` at `first` onwards (runs measured together), then saves once.
    pub(crate) fn update_all(&mut self, first: usize, runs: &[Run]) -> Result<()> {
        for (i, run) in runs.iter().enumerate() {
            match self.doc.runs.get_mut(first + i) {
                Some(slot) => *slot = run.clone(),
                None => self.doc.runs.push(run.clone()),
            }
        }
        self.save()
    }

    /// Saves the document as it is, if it has a path. When the path fails (its directory
    /// removed, the disk full) the measurements are not given up: the document goes to
    /// the temporary directory from then on, and `moved` says where and why.
    pub(crate) fn save(&mut self) -> Result<()> {
        let Some(p) = &self.path else {
            return Ok(());
        };
        let Err(e) = self.doc.save(p) else {
            return Ok(());
        };
        if self.moved.is_some() {
            return Err(e);
        }
        let name = p
            .file_name()
            .map_or("results.json".into(), |n| n.to_string_lossy());
        let instead = std::env::temp_dir().join(format!("iomark-{}-{name}", std::process::id()));
        if self.doc.save(&instead).is_err() {
            return Err(e);
        }
        self.moved = Some(format!(
            "{e}; the results are saved to {} instead",
            instead.display()
        ));
        self.path = Some(instead);
        Ok(())
    }
}

/// The sink of one run of a plan, or of runs measured together (a fio group): files each
/// repetition's runs into the store at `idx` onwards, each labelled with its study point
/// (`points[i]`, none past its end), and passes every event on to `next` (the progress
/// display).
pub(crate) struct Filing<'a> {
    pub(crate) store: &'a mut Store,
    pub(crate) idx: usize,
    pub(crate) points: Vec<StudyPoint>,
    pub(crate) next: &'a mut dyn Sink,
}

impl Sink for Filing<'_> {
    fn run_started(&mut self, index: usize, of: usize, spec: &Spec) -> Result<bool> {
        self.next.run_started(index, of, spec)
    }
    fn plan_position(&mut self, started: std::time::Instant, left_s: f64) {
        self.next.plan_position(started, left_s)
    }
    fn layout(&mut self, done: u64, total: u64) {
        self.next.layout(done, total)
    }
    fn group_started(&mut self, label: &str) {
        self.next.group_started(label)
    }
    fn rep_started(&mut self, spec: &Spec, rep: u32, of: u32) -> Result<bool> {
        self.next.rep_started(spec, rep, of)
    }
    fn progress(&mut self, p: &Progress) -> Result<bool> {
        self.next.progress(p)
    }
    fn gate_ready(&mut self) -> Result<bool> {
        self.next.gate_ready()
    }
    fn alive(&mut self) {
        self.next.alive()
    }
    fn stonewall(&mut self, done: Option<f64>) -> Option<(String, f64)> {
        self.next.stonewall(done)
    }
    fn gathered(&mut self) -> Option<crate::results::schema::Summary> {
        self.next.gathered()
    }
    fn rep_latencies(
        &mut self,
        read: &crate::results::stats::LatHist,
        write: &crate::results::stats::LatHist,
    ) {
        self.next.rep_latencies(read, write)
    }
    fn rep_finished(&mut self, run: &Run) -> Result<bool> {
        self.group_finished(std::slice::from_ref(run))
    }
    fn group_finished(&mut self, runs: &[Run]) -> Result<bool> {
        let labelled: Vec<Run> = (runs.iter().enumerate())
            .map(|(i, run)| Run {
                study: self.points.get(i).cloned(),
                ..run.clone()
            })
            .collect();
        let go_on = self.next.group_finished(&labelled)?;
        self.store.update_all(self.idx, &labelled)?;
        Ok(go_on)
    }
}

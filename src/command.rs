//! The commands as the binary calls them (above every other module: they resolve with
//! `cli`, run with `study`, print with `report`): each takes its resolved plan and the stop flag,
//! runs (printing headers, progress and results to the terminal) and returns the exit
//! status. The binary parses, dispatches to one of these and exits; errors come back to
//! it as `Err`, to be said once as one line.

use std::io::Write;
use std::path::PathBuf;

use crate::error::{Error, ExitCode, Result};
use crate::plan::{Output, QuickPlan, RunPlan, SuitePlan};
use crate::report::{self, Command as Job, notes, progress::TermProgress, text};
use crate::stop::{STOP_REQUESTED, StopFlag};
use crate::study::runner::{StudyRunner, TargetLife};
use crate::study::store::{Store, check_quick_outputs};

/// Arms the stop flag: signals stop the command (`StopFlag::arm`); a second one removes
/// a file still being made and ends the process.
fn arm(stop: &StopFlag) -> Result<()> {
    stop.arm(crate::io::target::remove_unfinished)
        .map_err(|e| Error::io("cannot install signal handlers", &e))
}

/// Writes to stdout and flushes. A full disk is an error (exit 1); a reader that has gone
/// (`iomark … | head`) ends the process quietly once the caller has cleaned up.
pub fn put(text: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())
        .and_then(|()| o.flush())
        .map_err(Error::Stdout)
}

/// A line on stderr. Never panics: when stderr itself cannot be written there is nobody
/// left to tell, and the exit status still says what happened.
pub fn complain_plain(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// An error or warning line on stderr, prefixed with the program's name.
pub fn complain(line: &str) {
    complain_plain(&format!("iomark: {line}"));
}

/// Prints human text: on stdout, or stderr when stdout carries the JSON. `--quiet` drops
/// the progress and the headers (`results` false), never the results unless in the JSON.
#[allow(clippy::unit_arg)] // stderr that cannot be written has nobody left to tell
fn say(out: &Output, text: &str, results: bool) -> Result<()> {
    match (out.quiet && (!results || out.json), out.json) {
        (true, _) => Ok(()),
        (false, true) => Ok(complain_plain(text.trim_end())),
        (false, false) => put(text),
    }
}

/// The results: `text` for people (see `say`), the JSON document on stdout when asked
/// for; a failure (exit 1) naming where the results went when `-o` could not take them.
fn finish(out: &Output, text: &str, store: &Store) -> Result<()> {
    say(out, text, true)?;
    if out.json {
        put(&(store.doc.to_json() + "\n"))?;
    }
    let moved = store.moved.clone();
    moved.map_or(Ok(()), |m| Err(Error::runtime(m)))
}

/// The exit status of a command that ran: its failure's, else 128 + the signal that cut
/// it, 1 when a sink asked to stop, else 0. `kept`: the runs its document holds (`None`
/// for a command that keeps no measurements), for the words said on a signal.
pub fn exit_for(stop: &StopFlag, failure: Option<Error>, kept: Option<usize>) -> i32 {
    if let Some(e) = failure {
        complain(&e.to_string());
        return e.exit_code();
    }
    match stop.signal() {
        0 => 0,
        STOP_REQUESTED => ExitCode::Failure as i32,
        sig => {
            complain(match kept {
                None => "interrupted",
                Some(0) => "interrupted before any run was measured; nothing was kept",
                Some(_) => "interrupted; the measurements so far are kept",
            });
            128 + sig as i32
        }
    }
}

/// The runs of `doc` with at least one repetition measured.
fn measured(doc: &crate::results::schema::Document) -> usize {
    doc.runs
        .iter()
        .filter(|r| !r.repetitions.is_empty())
        .count()
}

/// Under an MPI launcher every rank runs the job and the command ends here: rank 0
/// prints `show` of the one document and writes it. `None` when not launched.
#[cfg(feature = "mpi")]
fn scaled(
    job: crate::study::mpi::Job,
    out: &Output,
    stop: &StopFlag,
    show: &dyn Fn(&crate::results::schema::Document) -> String,
) -> Result<Option<i32>> {
    let Some(o) = crate::study::mpi::run_if_launched(job, stop)? else {
        return Ok(None);
    };
    if let Some(store) = o.store.as_ref().filter(|s| !s.doc.runs.is_empty()) {
        finish(out, &show(&store.doc), store)?;
    }
    let kept = o.store.as_ref().map_or(0, |s| measured(&s.doc));
    Ok(Some(exit_for(stop, o.failure, Some(kept))))
}

/// `iomark run`: one workload, its repetitions.
pub fn run(plan: RunPlan, stop: &StopFlag) -> Result<i32> {
    crate::study::store::check_run_outputs(&plan)?;
    arm(stop)?;
    #[cfg(feature = "mpi")]
    if let Some(code) = scaled(crate::study::mpi::Job::Run(&plan), &plan.out, stop, &|d| {
        text::run_summary(&d.runs[0])
    })? {
        return Ok(code);
    }
    let mut progress = TermProgress::new(plan.out.quiet);
    let mut runner = StudyRunner::new(Store::new(plan.out.output.clone()), &mut progress, stop);
    let out = runner.single(&plan)?;
    finish(&plan.out, &text::run_summary(&out.run), &runner.store)?;
    Ok(exit_for(
        stop,
        out.failure,
        Some(measured(&runner.store.doc)),
    ))
}

/// `iomark quick` (and `iomark` alone): the four corners on a file, with a header naming
/// where and an ending saying what was left behind.
pub fn quick(plan: QuickPlan, stop: &StopFlag) -> Result<i32> {
    check_quick_outputs(&plan.out, &plan.file)?;
    // Before the header: a directory that cannot take the file is said at once.
    let dir = crate::results::store::directory_of(&plan.file);
    // The null engine makes no file: a directory it could not write is no matter.
    let makes_file = plan.runs[0].plan.spec.engine.caps().needs_fd;
    if makes_file && let Err(e) = crate::io::sys::may_create_in(dir) {
        let shown = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let why = match e.kind() {
            std::io::ErrorKind::ReadOnlyFilesystem => "is on a read-only filesystem",
            std::io::ErrorKind::PermissionDenied => "is not writable by this user",
            _ => "cannot take it",
        };
        return Err(Error::target(format!(
            "iomark quick makes its test file in {}, which {why}; give a directory it may write: iomark quick DIR",
            shown.display()
        )));
    }
    crate::study::runner::preflight(&plan.runs)?;
    arm(stop)?;
    #[cfg(feature = "mpi")]
    if let Some(code) = scaled(
        crate::study::mpi::Job::Quick(&plan),
        &plan.out,
        stop,
        &text::plan_table,
    )? {
        return Ok(code);
    }
    let head = notes::quick_header(&plan, crate::io::env::place_of(&plan.file).as_deref());
    say(&plan.out, &head, false)?;
    let started = std::time::Instant::now();
    let mut progress = TermProgress::new(plan.out.quiet);
    let mut runner = StudyRunner::new(Store::new(plan.out.output.clone()), &mut progress, stop);
    let life = TargetLife::new(&plan.file.display().to_string(), false);
    let failure = runner.run_plan(&plan.runs, &[], &life, false)?;
    let doc = &runner.store.doc;
    let end = notes::quick_ending(doc, started.elapsed().as_secs_f64(), plan.file.exists());
    let all = format!("\n{}{end}", text::plan_table(doc));
    finish(&plan.out, &all, &runner.store)?;
    Ok(exit_for(stop, failure, Some(measured(&runner.store.doc))))
}

/// A study (a suite or fio job files): its plan with `--dry-run`, else the study.
pub fn suite(mut plan: SuitePlan, stop: &StopFlag) -> Result<i32> {
    if plan.preset_bs {
        let runs = std::mem::take(&mut plan.runs);
        let targets: Vec<String> = (crate::plan::targets::plan_targets(&runs).iter())
            .map(|t| t.to_string())
            .collect();
        let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
        plan.runs = crate::study::fit::bs_sweep_fit(runs, &targets);
    }
    if plan.kind == crate::plan::StudyKind::Fio {
        crate::study::fio::fit_to_devices(&mut plan);
    }
    if plan.dry_run {
        // A plan its targets refuse is refused, not listed first as if it could run.
        crate::study::runner::preflight_plan(&plan, &[])?;
        return put(&text::dry_run(&plan)).map(|()| 0);
    }
    arm(stop)?;
    let out = Output {
        output: plan.out.output.clone().or_else(|| plan.resume.clone()),
        ..plan.out.clone()
    };
    crate::study::store::check_suite_outputs(&out, &plan)?;
    #[cfg(feature = "mpi")]
    if let Some(code) = scaled(crate::study::mpi::Job::Study(&plan), &out, stop, &|d| {
        notes::study_ending(d, plan.kind)
    })? {
        return Ok(code);
    }
    let mut progress = TermProgress::new(out.quiet);
    let mut runner = StudyRunner::new(Store::new(out.output.clone()), &mut progress, stop);
    let failure = if plan.kind.is_dirty() {
        runner.dirty(&plan)?
    } else {
        let done = runner.prepare(&plan)?;
        let head = notes::suite_header(&plan, done.iter().filter(|d| !**d).count());
        say(&out, &head, false)?;
        runner.run_suite(&plan, &done)?
    };
    let end = notes::study_ending(&runner.store.doc, plan.kind);
    finish(&out, &end, &runner.store)?;
    Ok(exit_for(stop, failure, Some(measured(&runner.store.doc))))
}

/// `iomark data`: the stream a run would write, and (unless `--quiet`) its measured
/// compressibility on stderr.
pub fn data(plan: crate::plan::DataPlan, stop: &StopFlag) -> Result<i32> {
    arm(stop)?;
    let p = crate::measure::stream::write_stream(&plan.spec, plan.size, &plan.output, stop)?;
    (!plan.quiet).then(|| complain_plain(&notes::data_figures(&plan, &p.measure, &p.end)));
    Ok(exit_for(stop, None, None))
}

/// `iomark verify`: reads back what a run wrote; 1 when a block differs or none was
/// recorded.
pub fn verify(args: &crate::cli::VerifyArgs, stop: &StopFlag) -> Result<i32> {
    arm(stop)?;
    let report =
        crate::measure::verify::load_and_verify(&args.target, &args.state, args.buffered, stop)?;
    put(&match args.json {
        true => serde_json::to_string_pretty(&report).expect("report serializes") + "\n",
        false => format!("{}: {}\n", args.target.display(), report.describe()),
    })?;
    match (stop.signal(), report.blocks) {
        (0, 0) => {
            complain("the state file records no written blocks; nothing was checked");
            Ok(ExitCode::Failure as i32)
        }
        (0, _) => Ok(i32::from(report.bad() > 0) * ExitCode::Failure as i32),
        _ => Ok(exit_for(stop, None, None)),
    }
}

/// `iomark report` and `iomark compare`: the text on stdout unless written to -o.
pub fn report(job: Job, files: &[PathBuf], to: &crate::cli::ReportOutput) -> Result<i32> {
    let format = crate::cli::output_format(to.format.as_deref(), to.file())?;
    let text = report::run_command(job, files, format, to.file(), to.force)?;
    text.map_or(Ok(()), |t| put(&t))?;
    if job == Job::Compare
        && let Some(note) = report::same_files(files)
    {
        complain(&note);
    }
    Ok(0)
}

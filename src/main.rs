//! The `iomark` binary: parse, dispatch, print, exit. The work is the library's (`cli`
//! resolves, `study` runs, `report` writes); errors are printed here, once, as one line,
//! and mapped to exit codes (2 bad input, 1 runtime failure, 128 + signal).

use std::io::Write;
use std::path::PathBuf;

use clap::error::ErrorKind;

use iomark::cli::{Cli, Command, one_line_clap_error};
use iomark::error::{Error, ExitCode, Result};
use iomark::plan::{Output, QuickPlan, RunPlan, SuitePlan};
use iomark::report::{self, Command as Job, notes, progress::TermProgress, text};
use iomark::stop::{STOP_REQUESTED, StopFlag};
use iomark::study::runner::{StudyRunner, TargetLife};
use iomark::study::store::{Store, check_quick_outputs};

/// Under an MPI launcher (the `mpi` feature) every rank runs the job and the command ends
/// here: rank 0 prints `$show` of the one document and writes it (a `return`, as `?` is).
macro_rules! scaled {
    ($job:ident($plan:expr), $out:expr, $stop:expr, $show:expr) => {
        #[cfg(feature = "mpi")]
        if let Some(o) =
            iomark::study::mpi::run_if_launched(iomark::study::mpi::Job::$job($plan), $stop)?
        {
            let show: &dyn Fn(&iomark::results::schema::Document) -> String = &$show;
            if let Some(store) = o.store.as_ref().filter(|s| !s.doc.runs.is_empty()) {
                finish($out, &show(&store.doc), store)?;
            }
            return Ok(exit_for($stop, o.failure));
        }
    };
}

fn main() {
    let stop = StopFlag::new();
    let code = match real_main(&stop) {
        Ok(code) => code,
        Err(e) if e.is_closed_pipe() => e.exit_code(),
        Err(e) => {
            complain(&e.to_string());
            match stop.signal() {
                // Stopped by a signal before anything was measured (e.g. during layout).
                0 | STOP_REQUESTED => e.exit_code(),
                sig => 128 + sig as i32,
            }
        }
    };
    std::process::exit(code);
}

/// Ctrl-C, SIGTERM and SIGHUP set the stop flag; a second one ends the process at once,
/// after removing a file iomark is still making. Installed when a command starts I/O.
fn install_signals(stop: &StopFlag) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .map_err(|e| Error::io("cannot install signal handlers", &e))?;
    let cell = stop.cell(); // the first signal asks every loop to stop
    std::thread::spawn(move || {
        for (n, sig) in signals.forever().enumerate() {
            if n > 0 {
                iomark::io::target::remove_unfinished();
                std::process::exit(128 + sig);
            }
            cell.store(sig as usize, std::sync::atomic::Ordering::Relaxed);
        }
    });
    Ok(())
}

fn real_main(stop: &StopFlag) -> Result<i32> {
    use clap::{CommandFactory, FromArgMatches};
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|c| (c, m)));
    let (cli, matches) = match parsed {
        Ok(c) => c,
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                put(&e.render().to_string())?;
                return Ok(0);
            }
            _ => {
                complain(&one_line_clap_error(&e));
                return Ok(ExitCode::BadInput as i32);
            }
        },
    };
    let sys = iomark::io::env::system();
    let io = |stop| install_signals(stop).map(|()| stop);
    let user = iomark::cli::suite_options(&matches);
    if let Some(job) = iomark::cli::as_fio(&cli, &user, &sys)? {
        return put(&job).map(|()| 0);
    }
    Command::check_launcher(cli.command.as_ref())?;
    match cli.command {
        Some(Command::Run(args)) => cmd_run(args.resolve(&sys)?, io(stop)?),
        Some(Command::Quick(args)) => cmd_quick(args.resolve(&sys)?, io(stop)?),
        Some(Command::Data(args)) => {
            let (plan, stop) = (args.resolve()?, io(stop)?);
            let m =
                iomark::measure::stream::write_stream(&plan.spec, plan.size, &plan.output, stop)?;
            (!plan.quiet).then(|| complain_plain(&notes::data_figures(&plan, &m)));
            Ok(exit_for(stop, None))
        }
        Some(Command::Verify(args)) => cmd_verify(&args, io(stop)?),
        Some(Command::Report(args)) => cmd_report(Job::Report, &args.files, &args.to),
        Some(Command::Compare(args)) => cmd_report(Job::Compare, &args.files, &args.to),
        Some(Command::Suite(args)) => cmd_suite(args.resolve(&user, &sys)?, stop),
        Some(Command::Fio(args)) => cmd_suite(args.resolve(&sys)?, stop),
        // The embedded default: `iomark quick` with its defaults.
        None => cmd_quick(iomark::cli::quick_defaults().resolve(&sys)?, io(stop)?),
    }
}

/// Writes to stdout and flushes. A full disk is an error (exit 1); a reader that has gone
/// (`iomark … | head`) ends the process quietly once the caller has cleaned up.
fn put(text: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())
        .and_then(|()| o.flush())
        .map_err(Error::Stdout)
}

/// A line on stderr. Never panics: when stderr itself cannot be written there is nobody
/// left to tell, and the exit status still says what happened.
fn complain_plain(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// An error or warning line on stderr, prefixed with the program's name.
fn complain(line: &str) {
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

fn exit_for(stop: &StopFlag, failure: Option<Error>) -> i32 {
    if let Some(e) = failure {
        complain(&e.to_string());
        return e.exit_code();
    }
    match stop.signal() {
        0 => 0,
        STOP_REQUESTED => ExitCode::Failure as i32,
        sig => {
            complain("interrupted; the measurements so far are kept");
            128 + sig as i32
        }
    }
}

fn cmd_run(plan: RunPlan, stop: &StopFlag) -> Result<i32> {
    iomark::study::store::check_run_outputs(&plan)?;
    scaled! { Run(&plan), &plan.out, stop, |d| text::run_summary(&d.runs[0]) }
    let mut progress = TermProgress::new(plan.out.quiet);
    let mut runner = StudyRunner::new(Store::new(plan.out.output.clone()), &mut progress, stop);
    let out = runner.single(&plan)?;
    finish(&plan.out, &text::run_summary(&out.run), &runner.store)?;
    Ok(exit_for(stop, out.failure))
}

fn cmd_quick(plan: QuickPlan, stop: &StopFlag) -> Result<i32> {
    check_quick_outputs(&plan.out, &plan.file)?;
    scaled! { Quick(&plan), &plan.out, stop, text::plan_table }
    let head = notes::quick_header(&plan, iomark::io::env::place_of(&plan.file).as_deref());
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
    Ok(exit_for(stop, failure))
}

/// A study (a suite or fio job files): its plan with `--dry-run`, else the study.
fn cmd_suite(plan: SuitePlan, stop: &StopFlag) -> Result<i32> {
    if plan.dry_run {
        put(&text::dry_run(&plan))?;
        return iomark::study::runner::preflight_plan(&plan, &[]).map(|()| 0);
    }
    install_signals(stop)?;
    let out = Output {
        output: plan.out.output.clone().or_else(|| plan.resume.clone()),
        ..plan.out.clone()
    };
    iomark::study::store::check_suite_outputs(&out, &plan)?;
    scaled! { Study(&plan), &out, stop, |d| notes::study_ending(d, plan.kind) }
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
    Ok(exit_for(stop, failure))
}

fn cmd_verify(args: &iomark::cli::VerifyArgs, stop: &StopFlag) -> Result<i32> {
    let report =
        iomark::measure::verify::load_and_verify(&args.target, &args.state, args.buffered, stop)?;
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
        _ => Ok(exit_for(stop, None)),
    }
}

/// `iomark report` and `iomark compare`: the text on stdout unless written to -o.
fn cmd_report(job: Job, files: &[PathBuf], to: &iomark::cli::ReportOutput) -> Result<i32> {
    let format = iomark::cli::output_format(to.format.as_deref(), to.file())?;
    let text = report::run_command(job, files, format, to.file(), to.force)?;
    text.map_or(Ok(()), |t| put(&t)).map(|()| 0)
}

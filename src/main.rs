//! The `iomark` binary: parse, dispatch, print, exit. The work is the library's
//! (`cli` resolves, `study` runs, `report` writes); errors are printed here, once, as one
//! line, and mapped to exit codes (2 bad input, 1 runtime failure, 128 + signal when
//! interrupted).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use clap::error::ErrorKind;

use iomark::cli::{Cli, Command, one_line_clap_error};
use iomark::error::{Error, ExitCode, Result};
use iomark::plan::{Output, QuickPlan, RunPlan, SuitePlan};
use iomark::report::{notes, progress::TermProgress, text};
use iomark::results::schema::Document;
use iomark::stop::{STOP_REQUESTED, StopFlag};
use iomark::study::runner::{StudyRunner, TargetLife};
use iomark::study::store::Store;

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

/// Ctrl-C and SIGTERM set the stop flag; a second one ends the process at once.
fn install_signals(stop: &StopFlag) -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let hard = Arc::new(AtomicBool::new(false));
    for (sig, code) in [(SIGINT, 130), (SIGTERM, 143)] {
        let r = signal_hook::flag::register_conditional_shutdown(sig, code, Arc::clone(&hard))
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&hard)))
            .and_then(|_| signal_hook::flag::register_usize(sig, stop.cell(), sig as usize));
        r.map_err(|e| Error::io("cannot install signal handlers", &e))?;
    }
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
    install_signals(stop)?;
    let sys = iomark::plan::System {
        io_uring: iomark::io::engine::probe_io_uring(),
        root: iomark::io::sys::is_root(),
    };
    match cli.command {
        Some(Command::Run(args)) => cmd_run(args.resolve(&sys)?, stop),
        Some(Command::Quick(args)) => cmd_quick(args.resolve(&sys)?, stop),
        Some(Command::Data(args)) => {
            let plan = args.resolve()?;
            let m =
                iomark::measure::stream::write_stream(&plan.spec, plan.size, &plan.output, stop)?;
            if !plan.quiet {
                complain_plain(&notes::data_figures(&plan, &m));
            }
            Ok(exit_for(stop, None))
        }
        Some(Command::Verify(args)) => cmd_verify(&args),
        Some(Command::Report(args)) => {
            let format =
                iomark::cli::output_format(args.format.as_deref(), args.output.as_deref())?;
            let docs = iomark::results::fio::load_all(&args.files)?;
            emit(
                &iomark::report::report(&docs, format),
                args.output.as_deref(),
            )
        }
        Some(Command::Compare(args)) => {
            let format =
                iomark::cli::output_format(args.format.as_deref(), args.output.as_deref())?;
            let docs = iomark::results::fio::load_all(&args.files)?;
            let c = iomark::report::compare::compare(&docs);
            emit(
                &iomark::report::comparison(&c, format),
                args.output.as_deref(),
            )
        }
        Some(Command::Suite(args)) => {
            let sub = matches
                .subcommand_matches("suite")
                .expect("the suite subcommand was parsed");
            cmd_suite(
                args.resolve(&iomark::cli::explicit_options(sub), &sys)?,
                stop,
            )
        }
        // The embedded default: `iomark quick` with its defaults.
        None => match Cli::parse_from(["iomark", "quick"]).command {
            Some(Command::Quick(args)) => cmd_quick(args.resolve(&sys)?, stop),
            _ => unreachable!("`iomark quick` parses as the quick command"),
        },
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

/// Prints human text: on stdout, or stderr when stdout carries the JSON.
fn say(out: &Output, text: &str) -> Result<()> {
    if out.quiet {
        return Ok(());
    }
    if out.json {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
        Ok(())
    } else {
        put(text)
    }
}

/// The JSON document on stdout, when asked for.
fn finish(out: &Output, doc: &Document) -> Result<()> {
    match out.json {
        true => put(&format!("{}\n", doc.to_json())),
        false => Ok(()),
    }
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
    let mut progress = TermProgress::new(plan.out.quiet);
    let mut runner = StudyRunner::new(Store::new(plan.out.output.clone()), &mut progress, stop);
    let out = runner.single(&plan)?;
    say(&plan.out, &text::run_summary(&out.run))?;
    finish(&plan.out, &runner.store.doc)?;
    Ok(exit_for(stop, out.failure))
}

fn cmd_quick(plan: QuickPlan, stop: &StopFlag) -> Result<i32> {
    if plan.file.exists() {
        return Err(Error::guard(format!(
            "{} already exists; remove it or run in another directory",
            plan.file.display()
        )));
    }
    say(&plan.out, &notes::quick_header(&plan))?;
    let mut progress = TermProgress::new(plan.out.quiet);
    let mut runner = StudyRunner::new(Store::new(plan.out.output.clone()), &mut progress, stop);
    let life = TargetLife::new(&plan.file.display().to_string(), false);
    let failure = runner.run_plan(&plan.runs, &[], &life, false)?;
    let doc = &runner.store.doc;
    say(&plan.out, &format!("\n{}", text::plan_table(doc)))?;
    if let Some(note) = doc.runs.first().and_then(|r| r.warnings.first()) {
        say(&plan.out, &format!("note: {note}\n"))?;
    }
    finish(&plan.out, doc)?;
    Ok(exit_for(stop, failure))
}

fn cmd_suite(plan: SuitePlan, stop: &StopFlag) -> Result<i32> {
    if plan.dry_run {
        put(&match plan.out.json {
            true => format!("{}\n", notes::dry_run_json(&plan)),
            false => text::plan_listing(&plan),
        })?;
        return Ok(0);
    }
    let out = Output {
        output: plan.out.output.clone().or_else(|| plan.resume.clone()),
        ..plan.out.clone()
    };
    let mut progress = TermProgress::new(out.quiet);
    let mut runner = StudyRunner::new(Store::new(out.output.clone()), &mut progress, stop);
    let failure = if plan.kind.is_dirty() {
        runner.dirty(&plan)?
    } else {
        let done = runner.prepare(&plan)?;
        say(
            &out,
            &notes::suite_header(&plan, done.iter().filter(|d| !**d).count()),
        )?;
        runner.run_suite(&plan, &done)?
    };
    let doc = &runner.store.doc;
    say(&out, &notes::study_ending(doc, plan.kind))?;
    finish(&out, doc)?;
    Ok(exit_for(stop, failure))
}

fn cmd_verify(args: &iomark::cli::VerifyArgs) -> Result<i32> {
    let map = iomark::measure::verify::GenMap::load(&args.state)?;
    let report = iomark::measure::verify::verify_target(&args.target, &map, args.buffered)?;
    if args.json {
        put(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report).expect("report serializes")
        ))?;
    } else {
        put(&format!(
            "{}: {}\n",
            args.target.display(),
            report.describe()
        ))?;
    }
    if report.blocks == 0 {
        complain("the state file records no written blocks; nothing was checked");
        return Ok(ExitCode::Failure as i32);
    }
    Ok(if report.bad() > 0 {
        ExitCode::Failure as i32
    } else {
        0
    })
}

/// Writes `text` to `output` (atomically) or stdout.
fn emit(text: &str, output: Option<&std::path::Path>) -> Result<i32> {
    match output {
        None => put(text)?,
        Some(p) => iomark::results::store::atomic_write(p, text.as_bytes(), "the report")?,
    }
    Ok(0)
}

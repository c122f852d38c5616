//! The `iomark` binary: parse, dispatch, exit. The work is the library's (`cli` resolves,
//! `command` runs and prints, `report` writes); errors are printed here, once, as one
//! line, and mapped to exit codes (2 bad input, 1 runtime failure, 128 + signal).

use clap::error::ErrorKind;

use iomark::cli::{Cli, Command, one_line_clap_error};
use iomark::command::{self as cmd, complain, put};
use iomark::error::{ExitCode, Result};
use iomark::report::Command as Job;
use iomark::stop::{STOP_REQUESTED, StopFlag};

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
    let user = iomark::cli::suite_options(&matches);
    if let Some(job) = iomark::cli::as_fio(&cli, &user, &sys)? {
        return put(&job).map(|()| 0);
    }
    Command::check_launcher(cli.command.as_ref())?;
    match cli.command {
        Some(Command::Run(args)) => cmd::run(args.resolve(&sys)?, stop),
        Some(Command::Quick(args)) => cmd::quick(args.resolve(&sys)?, stop),
        Some(Command::Data(args)) => cmd::data(args.resolve()?, stop),
        Some(Command::Verify(args)) => cmd::verify(&args, stop),
        Some(Command::Report(args)) => cmd::report(Job::Report, &args.files, &args.to),
        Some(Command::Compare(args)) => cmd::report(Job::Compare, &args.files, &args.to),
        Some(Command::Suite(args)) => cmd::suite(args.resolve(&user, &sys)?, stop),
        Some(Command::Fio(args)) => cmd::suite(args.resolve(&sys)?, stop),
        // The embedded default: `iomark quick` with its defaults.
        None => cmd::quick(iomark::cli::quick_defaults().resolve(&sys)?, stop),
    }
}

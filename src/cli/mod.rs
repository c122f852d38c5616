//! The command line: clap's raw arguments, turned into a validated [`Spec`] and the
//! output choices. This is the only module that knows about clap. It does no I/O on
//! targets; the only thing it asks the system is whether io_uring is available, to pick the
//! default engine.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::error::{Error, Result};
use crate::plan::spec::{Rw, Spec};
use crate::plan::{DataPlan, QuickPlan, RunPlan, StudyKind, SuitePlan, System};

/// A storage I/O benchmark: IOPS, MB/s and latency percentiles of files and block devices.
///
/// With no command, runs the quick benchmark in the current directory (a 1 GiB
/// temporary file, removed at the end).
#[derive(Debug, Parser)]
#[command(name = "iomark", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once; boxing buys nothing
pub enum Command {
    /// Run one workload against a file or a block device.
    Run(RunArgs),
    /// The quick benchmark: sequential 1 MiB at QD 8, random 4 KiB at QD 32 and QD 1,
    /// reads and writes, a few seconds each, on a temporary file in DIR.
    Quick(QuickArgs),
    /// Write the data stream a run would write (to a file or stdout) and print how
    /// compressible and dedupable it measured, so it can be checked with other tools.
    Data(DataCmdArgs),
    /// Read back a target written by `run --verify --verify-state FILE` (and kept) and
    /// check every block: good, corrupt, misplaced, stale. Exit status 1 if any is bad.
    Verify(VerifyArgs),
    /// Turn results (iomark's, or fio's JSON output) into tables and an HTML report.
    Report(ReportArgs),
    /// Compare results side by side: ratios to the first, and whether each difference is
    /// significant (Welch's t-test on the logs of the repetitions; latencies direction by
    /// direction).
    Compare(CompareArgs),
    /// Run a whole study: quick, corners, compress, qd, bs, cache, steady, wsat, or matrix
    /// FILE.toml.
    /// Every run option overrides the preset's defaults; a comma list (--qd 1,4,16)
    /// replaces the swept values or adds a dimension.
    Suite(SuiteArgs),
    /// Run fio job files: every job a run of one results document (its group and name
    /// kept), the jobs of a group together, as in fio. Options iomark does not support
    /// are refused with their lines (see docs/fio.md).
    Fio(FioArgs),
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results documents (iomark JSON, or fio --output-format=json output).
    #[arg(value_name = "RESULTS", required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub to: ReportOutput,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more results documents; the first is the baseline.
    #[arg(value_name = "RESULTS", num_args = 2.., required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub to: ReportOutput,
}

/// Where `report` and `compare` write, and in which format.
#[derive(Debug, Args)]
pub struct ReportOutput {
    /// Write to FILE (the format follows its extension) instead of stdout (- is stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// html, md, csv or json [default: from the output's extension, else md].
    #[arg(long, value_name = "FORMAT", value_parser = ["html", "md", "csv", "json"])]
    pub format: Option<String>,
    /// Replace an existing output file even when it is not an earlier iomark output.
    #[arg(long)]
    pub force: bool,
}

impl ReportOutput {
    /// The file to write (`None`: stdout, also for `-o -`).
    pub fn file(&self) -> Option<&std::path::Path> {
        (self.output.as_deref()).filter(|p| *p != std::path::Path::new("-"))
    }
}

/// The format asked for, or the output file's extension, or Markdown.
impl Command {
    /// Refuses (bad input) a command that measures, started by an MPI launcher of several
    /// tasks in a build without MPI (`plan::targets::launched_without_mpi`); `None` (the
    /// quick benchmark) measures.
    pub fn check_launcher(command: Option<&Command>) -> crate::error::Result<()> {
        let measures = !matches!(
            command,
            Some(Command::Data(_) | Command::Verify(_) | Command::Report(_) | Command::Compare(_))
        );
        match crate::plan::targets::launched_without_mpi().filter(|_| measures) {
            Some(why) => Err(crate::error::Error::usage(why)),
            None => Ok(()),
        }
    }
}

pub fn output_format(
    format: Option<&str>,
    output: Option<&std::path::Path>,
) -> Result<crate::report::Format> {
    use crate::report::Format;
    if let Some(f) = format {
        return Ok(Format::parse(f).expect("clap checked the value"));
    }
    match output {
        None => Ok(Format::Md),
        Some(p) => {
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            Format::parse(&ext.to_lowercase()).ok_or_else(|| {
                Error::usage(format!(
                    "cannot tell the format of {} from its extension; use .html, .md, .csv or .json, or --format",
                    p.display()
                ))
            })
        }
    }
}

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// The study: quick, corners, compress, qd, bs, cache, steady, wsat, or matrix.
    #[arg(id = "study", value_name = "NAME")]
    pub name: String,
    /// The target (for matrix: FILE.toml, then the target unless the file names it).
    /// Several TARGETs run together in every run (each with its own --jobs jobs).
    #[arg(value_name = "TARGET", num_args = 0..)]
    pub args: Vec<String>,
    /// Repeat the study on the first N of the TARGETs for each N listed (e.g. 1,2,4:
    /// one disk, two disks, four disks); the number of targets becomes the swept value.
    #[arg(long, value_name = "LIST")]
    pub targets_sweep: Option<String>,
    /// Print the plan (each run, its parameters, the estimated time) and do no I/O.
    #[arg(long)]
    pub dry_run: bool,
    /// Continue the study whose results are in FILE: finished runs are kept, the rest
    /// run (the plan must be the same).
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// Write the study as a fio job file on stdout (one job per run) and run nothing.
    #[arg(long)]
    pub as_fio: bool,
    /// steady: the length of one round [default: 1m].
    #[arg(long, value_name = "DURATION")]
    pub round_time: Option<String>,
    /// steady: stop after this many rounds if steady state is not reached [default: 25].
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<String>,
    #[command(flatten)]
    pub opts: RunOptionArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// The run options typed for `suite` (none for another command).
pub fn suite_options(m: &clap::ArgMatches) -> Vec<crate::plan::suite::Opt> {
    m.subcommand_matches("suite")
        .map_or(Vec::new(), explicit_options)
}

/// The run options the user typed for a subcommand (not defaults), as (long name, value).
pub fn explicit_options(m: &clap::ArgMatches) -> Vec<crate::plan::suite::Opt> {
    options::typed(m, |_| true)
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The file or block device that was written.
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,
    /// The state file the run saved with --verify-state.
    #[arg(long, value_name = "FILE")]
    pub state: PathBuf,
    /// Read through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DataCmdArgs {
    /// Bytes of data to produce: the whole writes in it, as a write run's first pass over
    /// --size writes them (no partial block).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: String,
    /// Where to write: a file, or - for stdout.
    #[arg(long, short = 'o', default_value = "-", value_name = "FILE")]
    pub output: String,
    /// Block size of the writes whose stream this is (as in `run --rw write --bs`;
    /// default 4k).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub bs: Option<String>,
    /// Block sizes mixed by share, as in `run --bssplit` (e.g. 4k/50:64k/50): the writes
    /// of such a run, drawn as its first job draws them.
    #[arg(long, value_name = "SPLIT", allow_hyphen_values = true)]
    pub bssplit: Option<String>,
    /// Block sizes from a range, as in `run --bsrange` (e.g. 4k-64k).
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub bsrange: Option<String>,
    /// Seed (as in `run --seed`).
    #[arg(
        long,
        default_value = "1063500",
        value_name = "N",
        allow_hyphen_values = true
    )]
    pub seed: String,
    /// Print no figures.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub data: DataOptionArgs,
}

/// Options shared by every command that writes results.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// Write the results document (JSON) to FILE, updated after every repetition (- for
    /// stdout, as --json). A new file, or an earlier document that holds no measurements
    /// (else --force).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the results document (JSON) on stdout; the summary goes to stderr.
    #[arg(long)]
    pub json: bool,
    /// No progress display and no headers; the results, errors and warnings still print.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Replace an existing -o (or --verify-state) file: a results document that holds
    /// measurements, or a file that is not an earlier iomark document.
    #[arg(long)]
    pub force: bool,
}

impl OutputArgs {
    /// The clap-free output choices.
    pub(crate) fn to_output(&self) -> crate::plan::Output {
        // `-o -` is stdout, as `--json` (and `data -o -`) are.
        let stdout = self.output.as_deref() == Some(std::path::Path::new("-"));
        crate::plan::Output {
            output: self.output.clone().filter(|_| !stdout),
            json: self.json || stdout,
            quiet: self.quiet,
            force: self.force,
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// File or block device. A missing file is created, laid out with data (or only
    /// allocated: --new-file allocate) and removed at the end (unless --keep). Not needed with --engine null. Several TARGETs run
    /// together: each gets its own --jobs jobs, all start at once, and the results hold
    /// each target's figures and their aggregate.
    #[arg(value_name = "TARGET", num_args = 0..)]
    pub target: Vec<String>,
    /// fio's name for TARGET (several separated by ':', as in fio).
    #[arg(long, value_name = "TARGET", conflicts_with = "target")]
    pub filename: Option<String>,
    /// Write the run as a fio job file on stdout and run nothing.
    #[arg(long)]
    pub as_fio: bool,
    #[command(flatten)]
    pub opts: RunOptionArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct QuickArgs {
    /// Directory for the temporary test file [default: the current directory].
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Size of the test file.
    #[arg(
        long,
        default_value = "1g",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub size: String,
    /// Measured time of each test.
    #[arg(
        long,
        default_value = "3s",
        value_name = "DURATION",
        allow_hyphen_values = true
    )]
    pub runtime: String,
    /// Unmeasured warm-up before each test.
    #[arg(
        long,
        default_value = "1s",
        value_name = "DURATION",
        allow_hyphen_values = true
    )]
    pub ramp: String,
    /// I/O engine [default: io_uring where the kernel allows it, else psync].
    #[arg(long, value_name = "ENGINE", value_parser = ["psync", "io_uring", "null"])]
    pub engine: Option<String>,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// The switches that let iomark write what it would otherwise refuse.
const SAFETY_SWITCHES: [&str; 4] = [
    "--overwrite",
    "--allow-write-device",
    "--destroy-data",
    "--force",
];

/// Turns clap's multi-line error into one line: the problem, then the allowed values.
pub fn one_line_clap_error(err: &clap::Error) -> String {
    let text = err.to_string();
    // "Usage: iomark data --size <SIZE>": the subcommand whose help to point at.
    let sub = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Usage: iomark "))
        .and_then(|rest| rest.split_whitespace().next())
        .filter(|w| !w.starts_with(['[', '<', '-']))
        .map(str::to_string)
        .or_else(|| {
            // Not every message carries the usage line: the command line says it.
            use clap::CommandFactory;
            let first = std::env::args().nth(1)?;
            Cli::command().find_subcommand(&first).map(|_| first)
        })
        .map_or(String::new(), |w| format!("{w} "));
    // fio's switch for what iomark does by default: clap's "similar" one is its opposite.
    if text.contains("'--norandommap'") {
        return format!(
            "--norandommap is iomark's default (each random offset drawn on its own, as fio's norandommap): drop it; --random-map asks for fio's random map (see iomark {sub}--help)"
        );
    }
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        // Never point at a switch that lets iomark destroy data as the "similar" option.
        .filter(|l| !(l.starts_with("tip:") && SAFETY_SWITCHES.iter().any(|s| l.contains(s))))
        .collect();
    // A list introduced by a colon continues the sentence: "…not provided: --size <SIZE>".
    let mut line = String::new();
    for p in parts {
        if !line.is_empty() {
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(p);
    }
    if let Some(rest) = line.strip_prefix("error: ") {
        line = rest.to_string();
    }
    if !line.contains("--help") {
        line.push_str(&format!(" (see iomark {sub}--help)"));
    }
    line
}

mod fio;
mod options;
mod resolve;
pub use fio::{FioArgs, as_fio, quick_defaults};
pub(crate) use options::{DataOptionArgs, RunOptionArgs};

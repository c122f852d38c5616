//! The command line: clap's raw arguments, turned into a validated [`Spec`] and the
//! output choices. This is the only module that knows about clap. It does no I/O on
//! targets; the only thing it asks the system is whether io_uring is available, to pick the
//! default engine.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::error::{Error, Result};
use crate::plan::data::{CompressMethod, DataKind, DataSpec};
use crate::plan::spec::{EngineKind, Rw, Spec, TargetPolicy};
use crate::plan::{DataPlan, QuickPlan, RunPlan, StudyKind, StudyRun, SuitePlan, System};
use crate::units::{parse_duration, parse_size};

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
    /// significant (Welch's t-test over the repetitions).
    Compare(CompareArgs),
    /// Run a whole study: quick, corners, compress, qd, bs, cache, steady, wsat, or matrix
    /// FILE.toml.
    /// Every run option overrides the preset's defaults; a comma list (--qd 1,4,16)
    /// replaces the swept values or adds a dimension.
    Suite(SuiteArgs),
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results documents (iomark JSON, or fio --output-format=json output).
    #[arg(value_name = "RESULTS", required = true)]
    pub files: Vec<PathBuf>,
    /// Write to FILE (the format follows its extension) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// html, md, csv or json [default: from the output's extension, else md].
    #[arg(long, value_name = "FORMAT", value_parser = ["html", "md", "csv", "json"])]
    pub format: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more results documents; the first is the baseline.
    #[arg(value_name = "RESULTS", num_args = 2.., required = true)]
    pub files: Vec<PathBuf>,
    /// Write to FILE (the format follows its extension) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// html, md, csv or json [default: from the output's extension, else md].
    #[arg(long, value_name = "FORMAT", value_parser = ["html", "md", "csv", "json"])]
    pub format: Option<String>,
}

/// The format asked for, or the output file's extension, or Markdown.
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
                Error::input(format!(
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
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The target (for matrix: FILE.toml, then the target unless the file names it).
    #[arg(value_name = "TARGET", num_args = 0..=2)]
    pub args: Vec<String>,
    /// Print the plan (each run, its parameters, the estimated time) and do no I/O.
    #[arg(long)]
    pub dry_run: bool,
    /// Continue the study whose results are in FILE: finished runs are kept, the rest
    /// run (the plan must be the same).
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// steady: the length of one round [default: 1m].
    #[arg(long, value_name = "DURATION")]
    pub round_time: Option<String>,
    /// steady: stop after this many rounds if steady state is not reached [default: 25].
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<String>,
    #[command(flatten)]
    pub opts: RunOptions,
}

/// The options the user typed for a subcommand (not defaults), as (long name, value).
pub fn explicit_options(m: &clap::ArgMatches) -> Vec<crate::plan::suite::Opt> {
    use clap::parser::ValueSource;
    let cmd = Cli::command_for_suite();
    let mut out = Vec::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        let Some(long) = arg.get_long() else { continue };
        if m.value_source(id) != Some(ValueSource::CommandLine)
            || Cli::run_option_kind(long).is_none()
        {
            continue;
        }
        if arg.get_action().takes_values() {
            if let Some(vals) = m.get_raw(id) {
                for v in vals {
                    out.push((long.to_string(), Some(v.to_string_lossy().into_owned())));
                }
            }
        } else if m.get_flag(id) {
            out.push((long.to_string(), None));
        }
    }
    out
}

impl Cli {
    fn command_for_suite() -> clap::Command {
        use clap::CommandFactory;
        Cli::command()
            .find_subcommand("suite")
            .expect("the suite subcommand exists")
            .clone()
    }

    /// Whether `name` is a run option: `Some(true)` takes a value, `Some(false)` a switch.
    pub fn run_option_kind(name: &str) -> Option<bool> {
        use clap::CommandFactory;
        let cmd = Cli::command();
        let run = cmd
            .find_subcommand("run")
            .expect("the run subcommand exists");
        run.get_arguments()
            .find(|a| a.get_long() == Some(name))
            .map(|a| a.get_action().takes_values())
    }
}

/// Options that make no sense inside a study's runs (they belong to the study).
const STUDY_ONLY: [&str; 5] = ["output", "json", "quiet", "keep", "verify-state"];

impl SuiteArgs {
    /// Expands the study and resolves every run; `user` are the options typed.
    pub fn resolve(&self, user: &[crate::plan::suite::Opt], sys: &System) -> Result<SuitePlan> {
        let (matrix, target) = if self.name == "matrix" {
            let file = self.args.first().ok_or_else(|| {
                Error::input("suite matrix needs a file: iomark suite matrix FILE.toml [TARGET]")
            })?;
            let text = std::fs::read_to_string(file).map_err(|e| {
                Error::input(format!(
                    "cannot read {file}: {}",
                    crate::error::describe_io(&e)
                ))
            })?;
            let m = crate::plan::suite::Matrix::parse(file, &text, &Cli::run_option_kind)?;
            let target = self.args.get(1).cloned().or_else(|| m.target.clone());
            (Some((m, file.clone(), text)), target)
        } else {
            if self.args.len() > 1 {
                return Err(Error::input(format!(
                    "suite {} takes one TARGET, got {}",
                    self.name,
                    self.args.join(" ")
                )));
            }
            (None, self.args.first().cloned())
        };
        let target = match target {
            Some(t) => t,
            None if user
                .iter()
                .any(|(k, v)| k == "engine" && v.as_deref() == Some("null")) =>
            {
                "null".to_string()
            }
            None => {
                return Err(Error::input(format!(
                    "suite {} needs a TARGET (a file, created and removed, or a block device)",
                    self.name
                )));
            }
        };
        let study_user: Vec<crate::plan::suite::Opt> = user
            .iter()
            .filter(|(k, _)| !STUDY_ONLY.contains(&k.as_str()))
            .cloned()
            .collect();
        if self.name != "steady" && (self.round_time.is_some() || self.max_rounds.is_some()) {
            return Err(Error::input(format!(
                "--round-time and --max-rounds belong to suite steady, not suite {}",
                self.name
            )));
        }
        let max_rounds: u32 = match &self.max_rounds {
            Some(n) => count_opt("--max-rounds", n, "a whole number")?,
            None => 25,
        };
        if !(5..=10_000).contains(&max_rounds) {
            return Err(Error::input(format!(
                "--max-rounds {max_rounds} is out of range; use 5 (the steady-state window) to 10000"
            )));
        }
        if user.iter().any(|(k, _)| k == "verify-state") {
            return Err(Error::input(
                "--verify-state saves one run's blocks; use it with iomark run, not in a study",
            ));
        }
        if matches!(self.name.as_str(), "steady" | "wsat") && self.resume.is_some() {
            return Err(Error::input(format!(
                "--resume is not available for suite {}: its rounds depend on the drive's state, so start it again",
                self.name
            )));
        }
        // The presets size new files (1 GiB); an existing file or device is used whole
        // unless --size says otherwise.
        let existing = std::path::Path::new(&target).exists();
        let mut planned = crate::plan::suite::expand(
            &self.name,
            &study_user,
            matrix.as_ref().map(|m| &m.0),
            existing,
        )?;
        if let Some(rt) = &self.round_time {
            duration_opt("--round-time", rt)?;
            for p in planned.iter_mut().filter(|p| p.test == "round") {
                p.opts.push(("runtime".into(), Some(rt.clone())));
            }
        }
        let matrix_src = matrix
            .as_ref()
            .map(|(_, file, text)| (file.as_str(), text.as_str()));
        let runs = study_runs(&self.name, &planned, &study_user, &target, matrix_src, sys)?;
        Ok(SuitePlan {
            name: self.name.clone(),
            kind: StudyKind::parse(&self.name).expect("expand accepts only known studies"),
            target,
            runs,
            out: self.opts.out.to_output(),
            dry_run: self.dry_run,
            resume: self.resume.clone(),
            keep: self.opts.keep,
            overwrite: self.opts.overwrite,
            max_rounds,
        })
    }
}

/// Resolves every planned run of a study into a run plan, labelled with its study point.
/// `matrix` (file name, text) lets a message name the line of the option it is about.
fn study_runs(
    name: &str,
    planned: &[crate::plan::suite::PlannedRun],
    study_user: &[crate::plan::suite::Opt],
    target: &str,
    matrix: Option<(&str, &str)>,
    sys: &System,
) -> Result<Vec<StudyRun>> {
    use clap::Parser as _;
    let mut runs = Vec::new();
    for p in planned {
        let opts = crate::plan::suite::dedup(crate::plan::suite::merge(p, study_user));
        let mut argv = vec!["iomark".to_string(), "run".to_string()];
        for (k, v) in &opts {
            argv.push(format!("--{k}"));
            if let Some(v) = v {
                argv.push(v.clone());
            }
        }
        argv.push(target.to_string());
        let at_line = |e: String| match &matrix {
            Some((file, text)) => {
                // Name the matrix line of the first option the message mentions.
                let line = opts
                    .iter()
                    .find(|(k, _)| e.contains(&format!("--{k}")))
                    .and_then(|(k, _)| {
                        let key_u = k.replace('-', "_");
                        text.lines().position(|l| {
                            let t = l.trim_start();
                            [k.as_str(), key_u.as_str()].iter().any(|key| {
                                t.strip_prefix(key)
                                    .is_some_and(|r| r.trim_start().starts_with('='))
                            })
                        })
                    })
                    .map_or(String::new(), |i| format!(" line {}", i + 1));
                format!("{file}{line}: {e}")
            }
            None => e,
        };
        let cli = Cli::try_parse_from(&argv)
            .map_err(|e| Error::input(at_line(one_line_clap_error(&e))))?;
        let Some(Command::Run(args)) = cli.command else {
            unreachable!("argv starts with `run`")
        };
        let plan = args.resolve(sys).map_err(|e| match e {
            Error::Input(m) => Error::input(at_line(m)),
            other => other,
        })?;
        runs.push(StudyRun {
            plan,
            point: crate::plan::StudyPoint {
                suite: name.to_string(),
                test: p.test.clone(),
                param: p.param.clone(),
                value: p.value.clone(),
            },
        });
    }
    Ok(runs)
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

/// What is written: shared by `run` and `data`.
#[derive(Debug, Args, Clone, Default)]
pub struct DataArgs {
    /// Content of writes: random, zeros, pattern:HEX, compressible (implied by
    /// --compress), or files:PATH (the contents of a file or of the files under a
    /// directory, up to 256 MiB, cycled).
    #[arg(long, value_name = "KIND")]
    pub data: Option<String>,
    /// Target compressibility in percent: each --compress-chunk shrinks to about
    /// (100 − PCT)% under a fast LZ compressor.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub compress: Option<String>,
    /// The unit a compressibility target applies to (a device's compression unit).
    #[arg(
        long,
        default_value = "4k",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub compress_chunk: String,
    /// How compressible data is built: zerofill (random bytes then zeros, as fio) or
    /// repeat (random literals and copies of earlier substrings; lz4, zstd and gzip agree).
    #[arg(long, default_value = "zerofill", value_name = "METHOD",
          value_parser = ["zerofill", "repeat"])]
    pub compress_method: String,
    /// Percentage of dedup units that repeat a unit already written.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub dedup: Option<String>,
    /// Size of one dedup unit.
    #[arg(
        long,
        default_value = "4k",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub dedup_unit: String,
    /// Repeats come from at most N distinct units [default: any unit written before].
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub dedup_set: Option<String>,
}

#[derive(Debug, Args)]
pub struct DataCmdArgs {
    /// Bytes of data to produce.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: String,
    /// Where to write: a file, or - for stdout.
    #[arg(long, short = 'o', default_value = "-", value_name = "FILE")]
    pub output: String,
    /// Block size of the writes whose stream this is (as in `run --rw write --bs`).
    #[arg(
        long,
        default_value = "4k",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub bs: String,
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
    pub data: DataArgs,
}

impl DataArgs {
    /// Resolves the data options; they are checked against the block size later.
    pub fn resolve(&self) -> Result<DataSpec> {
        let pct = |opt: &str, v: &Option<String>| -> Result<Option<f64>> {
            v.as_deref()
                .map(|t| {
                    let x: f64 = t.trim().trim_end_matches('%').parse().map_err(|_| {
                        Error::input(format!("{opt}: '{t}' is not a percentage (0 to 100)"))
                    })?;
                    if !(0.0..=100.0).contains(&x) {
                        return Err(Error::input(format!(
                            "{opt} {t} is out of range; use a percentage from 0 to 100"
                        )));
                    }
                    Ok(x)
                })
                .transpose()
        };
        let compress = pct("--compress", &self.compress)?;
        let dedup = pct("--dedup", &self.dedup)?;
        let mut d = DataSpec {
            compress_chunk: size_opt("--compress-chunk", &self.compress_chunk)?,
            dedup_unit: size_opt("--dedup-unit", &self.dedup_unit)?,
            compress_method: if self.compress_method == "repeat" {
                CompressMethod::Repeat
            } else {
                CompressMethod::Zerofill
            },
            dedup: dedup.unwrap_or(0.0),
            ..DataSpec::default()
        };
        if let Some(n) = &self.dedup_set {
            let v: u64 = count_opt("--dedup-set", n, "a whole number")?;
            d.dedup_set = Some(v);
        }
        let kind = self.data.as_deref().unwrap_or(if compress.is_some() {
            "compressible"
        } else {
            "random"
        });
        let (name, arg) = match kind.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (kind, None),
        };
        d.kind = match (name, arg) {
            ("random", None) => DataKind::Random,
            ("zeros", None) => DataKind::Zeros,
            ("compressible", None) => DataKind::Compressible,
            ("pattern", Some(hex)) => {
                if crate::plan::data::parse_hex(hex).is_none() {
                    return Err(Error::input(format!(
                        "--data pattern:{hex}: not an even number of hex digits (e.g. pattern:deadbeef)"
                    )));
                }
                d.pattern = Some(hex.trim_start_matches("0x").to_lowercase());
                DataKind::Pattern
            }
            ("files", Some(path)) if !path.is_empty() => {
                d.files = Some(path.to_string());
                DataKind::Files
            }
            _ => {
                return Err(Error::input(format!(
                    "--data {kind} is unknown; use random, zeros, pattern:HEX, compressible or files:PATH"
                )));
            }
        };
        match (d.kind, compress) {
            (DataKind::Compressible, Some(c)) => d.compress = c,
            (DataKind::Compressible, None) => {
                return Err(Error::input(
                    "--data compressible needs --compress PCT (e.g. --compress 50)",
                ));
            }
            (_, Some(_)) => {
                return Err(Error::input(format!(
                    "--compress applies to compressible data, not to --data {kind}; drop one of them"
                )));
            }
            _ => {}
        }
        Ok(d)
    }
}

impl DataCmdArgs {
    pub fn resolve(&self) -> Result<DataPlan> {
        let size = size_opt("--size", &self.size)?;
        if size == 0 {
            return Err(Error::input("--size must be greater than zero (e.g. 64m)"));
        }
        let mut spec = Spec::new(self.output.clone());
        spec.rw = Rw::Write;
        spec.rwmixread = 0;
        spec.bs = size_opt("--bs", &self.bs)?;
        if spec.bs == 0 {
            return Err(Error::input("--bs must be greater than zero (e.g. 4k)"));
        }
        spec.seed = count_opt("--seed", &self.seed, "a non-negative whole number")?;
        spec.data = self.data.resolve()?;
        spec.data.validate(spec.bs)?;
        Ok(DataPlan {
            spec,
            size,
            output: self.output.clone(),
            quiet: self.quiet,
        })
    }
}

/// Options shared by every command that writes results.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// Write the results document (JSON) to FILE, updated after every repetition.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the results document (JSON) on stdout; the summary goes to stderr.
    #[arg(long)]
    pub json: bool,
    /// No progress display and no summary (errors and warnings still print).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl OutputArgs {
    /// The clap-free output choices.
    pub fn to_output(&self) -> crate::plan::Output {
        crate::plan::Output {
            output: self.output.clone(),
            json: self.json,
            quiet: self.quiet,
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// File or block device. A missing file is created, laid out with data and removed at
    /// the end (unless --keep). Not needed with --engine null.
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,
    #[command(flatten)]
    pub opts: RunOptions,
}

impl RunArgs {
    pub fn resolve(&self, sys: &System) -> Result<RunPlan> {
        self.opts.resolve(self.target.as_deref(), sys)
    }
}

/// Every option of a workload (shared by `run` and `suite`).
#[derive(Debug, Args, Clone)]
pub struct RunOptions {
    /// Access pattern.
    #[arg(long, default_value = "read", value_name = "RW",
          value_parser = ["read", "write", "randread", "randwrite", "rw", "randrw"])]
    pub rw: String,
    /// Percentage of reads in a mix (--rw rw or randrw).
    #[arg(
        long,
        default_value = "50",
        value_name = "PCT",
        allow_hyphen_values = true
    )]
    pub rwmixread: String,
    /// Block size: the size of every I/O (e.g. 512, 4k, 128KiB, 1m).
    #[arg(
        long,
        default_value = "4k",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub bs: String,
    /// Span of the target used, from --offset [default: the whole device or existing
    /// file; 1g for a new file].
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: Option<String>,
    /// Where the span starts in the target.
    #[arg(
        long,
        default_value = "0",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub offset: String,
    /// I/Os in flight per job (queue depth).
    #[arg(
        long,
        visible_alias = "iodepth",
        default_value = "1",
        value_name = "N",
        allow_hyphen_values = true
    )]
    pub qd: String,
    /// Worker threads. Each job works over the whole span, as fio's jobs do on one file,
    /// and moves --io-size on its own; sequential jobs start at evenly spaced offsets so
    /// they do not read the same blocks in lockstep.
    #[arg(
        long,
        visible_alias = "numjobs",
        default_value = "1",
        value_name = "N",
        allow_hyphen_values = true
    )]
    pub jobs: String,
    /// Run for this long after the ramp (e.g. 30s, 2m), going over the span as often as
    /// needed; without it the run is size-based. With --io-size too, whichever ends first.
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub runtime: Option<String>,
    /// Bytes each job moves in a size-based run, or a multiple of the span (2x)
    /// [default: the span once].
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub io_size: Option<String>,
    /// Run this long before measuring; the ramp is excluded from every figure.
    #[arg(
        long,
        default_value = "0",
        value_name = "DURATION",
        allow_hyphen_values = true
    )]
    pub ramp: String,
    /// Bypass the page cache with O_DIRECT (the default).
    #[arg(long, overrides_with = "buffered")]
    pub direct: bool,
    /// Go through the page cache instead of O_DIRECT.
    #[arg(long, overrides_with = "direct")]
    pub buffered: bool,
    /// I/O engine [default: io_uring where the kernel allows it, else psync].
    #[arg(long, value_name = "ENGINE", value_parser = ["psync", "io_uring", "null"])]
    pub engine: Option<String>,
    /// fsync after every N writes of each job (0: never).
    #[arg(
        long,
        default_value = "0",
        value_name = "N",
        allow_hyphen_values = true
    )]
    pub fsync: String,
    /// Flush at the end of each job, inside the timed window (as IOzone's -e).
    #[arg(long)]
    pub end_fsync: bool,
    /// Seed of every random choice; the same seed gives the same offsets and data.
    #[arg(
        long,
        default_value = "1063500",
        value_name = "N",
        allow_hyphen_values = true
    )]
    pub seed: String,
    /// Run the workload N times; the summary gives mean, stddev, min and max.
    #[arg(
        long,
        default_value = "1",
        value_name = "N",
        allow_hyphen_values = true
    )]
    pub repeat: String,
    /// Length of one interval of the time series.
    #[arg(
        long,
        default_value = "1s",
        value_name = "DURATION",
        allow_hyphen_values = true
    )]
    pub interval: String,
    /// Keep the file iomark created instead of removing it at the end.
    #[arg(long)]
    pub keep: bool,
    /// Allow writing an existing file that iomark did not create.
    #[arg(long)]
    pub overwrite: bool,
    /// Allow writing a block device (destroys its contents).
    #[arg(long)]
    pub allow_write_device: bool,
    /// Also allow writing a block device that holds a partition table or a filesystem
    /// or volume signature. A device in use (mounted, swap, LVM/RAID) is never written.
    #[arg(long)]
    pub destroy_data: bool,
    /// Stamp every written block with a header (offset, seed, generation, CRC32C) and read
    /// every block back after the writes: good, corrupt, misplaced and stale blocks are
    /// reported, and any bad one makes the exit status 1. Jobs split the span.
    #[arg(long)]
    pub verify: bool,
    /// Rest between repetitions (and between the runs of a study), e.g. 5s.
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub pause: Option<String>,
    /// Drop the kernel's page cache before each buffered repetition (needs root).
    #[arg(long)]
    pub drop_caches: bool,
    /// With --verify: save what every block must hold, for a later `iomark verify`.
    #[arg(long, value_name = "FILE", requires = "verify")]
    pub verify_state: Option<PathBuf>,

    #[command(flatten)]
    pub data: DataArgs,

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

fn size_opt(opt: &str, text: &str) -> Result<u64> {
    parse_size(text).map_err(|e| Error::input(format!("{opt}: {e}")))
}

fn duration_opt(opt: &str, text: &str) -> Result<f64> {
    parse_duration(text)
        .map(|d| d.as_secs_f64())
        .map_err(|e| Error::input(format!("{opt}: {e}")))
}

fn count_opt<T: std::str::FromStr>(opt: &str, text: &str, what: &str) -> Result<T> {
    text.trim()
        .parse()
        .map_err(|_| Error::input(format!("{opt}: '{text}' is not {what}")))
}

/// Picks the engine: the one asked for, or io_uring when the kernel allows it, else psync.
/// Returns the engine and a note when it differs from what a user would expect.
pub fn resolve_engine(asked: Option<&str>, sys: &System) -> Result<(EngineKind, Option<String>)> {
    match asked {
        Some(name) => {
            let kind = EngineKind::parse(name).ok_or_else(|| {
                Error::input(format!(
                    "--engine {name} is unknown; use psync, io_uring or null"
                ))
            })?;
            if kind == EngineKind::IoUring
                && let Err(why) = sys.io_uring.clone()
            {
                return Err(Error::input(format!(
                    "--engine io_uring is not available: {why}; use --engine psync"
                )));
            }
            Ok((kind, None))
        }
        None => match sys.io_uring.clone() {
            Ok(()) => Ok((EngineKind::IoUring, None)),
            Err(why) => Ok((
                EngineKind::Psync,
                Some(format!("io_uring is not available ({why}); using psync")),
            )),
        },
    }
}

impl RunOptions {
    /// Resolves and validates everything, for `target` (none: only with --engine null).
    pub fn resolve(&self, target: Option<&str>, sys: &System) -> Result<RunPlan> {
        let rw = Rw::parse(&self.rw).ok_or_else(|| {
            Error::input(format!(
                "--rw {} is unknown; use read, write, randread, randwrite, rw or randrw",
                self.rw
            ))
        })?;
        let rwmixread: i64 = count_opt("--rwmixread", &self.rwmixread, "a percentage")?;
        if !(0..=100).contains(&rwmixread) {
            return Err(Error::input(format!(
                "--rwmixread {rwmixread} is out of range; use a percentage from 0 to 100"
            )));
        }
        let (engine, engine_note) = resolve_engine(self.engine.as_deref(), sys)?;
        let target = match (target, engine) {
            (Some(t), _) => t.to_string(),
            (None, EngineKind::Null) => "null".to_string(),
            (None, _) => {
                return Err(Error::input(
                    "no TARGET given; name a file (e.g. ./test.dat) or a block device, or use --engine null",
                ));
            }
        };
        let qd: i64 = count_opt("--qd", &self.qd, "a whole number")?;
        let jobs: i64 = count_opt("--jobs", &self.jobs, "a whole number")?;
        let repeat: i64 = count_opt("--repeat", &self.repeat, "a whole number")?;
        let fsync: i64 = count_opt("--fsync", &self.fsync, "a whole number")?;
        if !(1..=4096).contains(&qd) {
            return Err(Error::input(format!(
                "--qd {qd} is out of range; use 1 to 4096"
            )));
        }
        if !(1..=1024).contains(&jobs) {
            return Err(Error::input(format!(
                "--jobs {jobs} is out of range; use 1 to 1024"
            )));
        }
        if !(1..=100_000).contains(&repeat) {
            return Err(Error::input(format!(
                "--repeat {repeat} is out of range; use 1 or more"
            )));
        }
        if fsync < 0 || fsync > u32::MAX as i64 {
            return Err(Error::input(format!(
                "--fsync {fsync} is out of range; use 0 (never) or a positive count of writes"
            )));
        }
        let seed: u64 = count_opt("--seed", &self.seed, "a non-negative whole number")?;
        let mut spec = Spec::new(target);
        spec.rw = rw;
        // Recorded as what ran: 100 for pure reads, 0 for pure writes.
        spec.rwmixread = rw.read_pct(rwmixread as u8);
        spec.bs = size_opt("--bs", &self.bs)?;
        spec.size = self
            .size
            .as_deref()
            .map(|s| size_opt("--size", s))
            .transpose()?;
        spec.offset = size_opt("--offset", &self.offset)?;
        spec.qd = qd as u32;
        spec.jobs = jobs as u32;
        spec.runtime_s = self
            .runtime
            .as_deref()
            .map(|s| duration_opt("--runtime", s))
            .transpose()?;
        match self.io_size.as_deref() {
            Some(t) if t.trim().ends_with(['x', 'X']) => {
                let n: f64 = t.trim()[..t.trim().len() - 1].parse().map_err(|_| {
                    Error::input(format!(
                        "--io-size: '{t}' is not a size or a multiple of the span (e.g. 1g, 2x)"
                    ))
                })?;
                if !(n > 0.0 && n.is_finite()) {
                    return Err(Error::input(format!(
                        "--io-size {t} must be a positive multiple of the span"
                    )));
                }
                spec.io_spans = Some(n);
            }
            other => spec.io_size = other.map(|s| size_opt("--io-size", s)).transpose()?,
        }
        spec.ramp_s = duration_opt("--ramp", &self.ramp)?;
        spec.direct = !self.buffered;
        spec.engine = engine;
        spec.engine_note = engine_note;
        spec.fsync = fsync as u32;
        spec.end_fsync = self.end_fsync;
        spec.seed = seed;
        spec.interval_s = duration_opt("--interval", &self.interval)?;
        spec.data = self.data.resolve()?;
        spec.verify = self.verify;
        spec.pause_s = self
            .pause
            .as_deref()
            .map(|p| duration_opt("--pause", p))
            .transpose()?
            .unwrap_or(0.0);
        spec.drop_caches = self.drop_caches;
        if self.drop_caches && !sys.root {
            return Err(Error::input(
                "--drop-caches writes /proc/sys/vm/drop_caches, which needs root; run as root or drop the option",
            ));
        }
        if spec.engine == EngineKind::Psync && spec.qd > 1 && self.engine.is_none() {
            // The default engine fell back to psync: keep the concurrency asked for.
            spec.engine_note = Some(format!(
                "{}; QD {} emulated by {} jobs",
                spec.engine_note.take().unwrap_or_default(),
                spec.qd,
                spec.qd * spec.jobs
            ));
            spec.io_share = spec.qd;
            spec.jobs *= spec.qd;
            spec.qd = 1;
        }
        spec.validate()?;
        Ok(RunPlan {
            spec,
            policy: TargetPolicy {
                keep: self.keep,
                overwrite: self.overwrite,
                allow_write_device: self.allow_write_device,
                destroy_data: self.destroy_data,
                verify_state: self.verify_state.clone(),
            },
            repeat: repeat as u32,
            out: self.out.to_output(),
        })
    }
}

impl QuickArgs {
    /// The quick benchmark is the `quick` preset on a new file in the directory.
    pub fn resolve(&self, sys: &System) -> Result<QuickPlan> {
        let dir = self.dir.clone().unwrap_or_else(|| PathBuf::from("."));
        if !dir.is_dir() {
            return Err(Error::input(format!(
                "directory {} does not exist; create it or name another",
                dir.display()
            )));
        }
        let file = dir.join(format!(".iomark-quick-{}.dat", std::process::id()));
        let mut user = vec![
            ("size".to_string(), Some(self.size.clone())),
            ("runtime".to_string(), Some(self.runtime.clone())),
            ("ramp".to_string(), Some(self.ramp.clone())),
        ];
        if let Some(e) = &self.engine {
            user.push(("engine".to_string(), Some(e.clone())));
        }
        let planned = crate::plan::suite::expand("quick", &user, None, false)?;
        let target = file.display().to_string();
        let runs = study_runs("quick", &planned, &user, &target, None, sys)?;
        Ok(QuickPlan {
            file,
            runs,
            out: self.out.to_output(),
        })
    }
}

/// Turns clap's multi-line error into one line: the problem, then the allowed values.
pub fn one_line_clap_error(err: &clap::Error) -> String {
    let text = err.to_string();
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .collect();
    let mut line = parts.join("; ");
    if let Some(rest) = line.strip_prefix("error: ") {
        line = rest.to_string();
    }
    if !line.contains("--help") {
        line.push_str(" (see iomark --help)");
    }
    line
}

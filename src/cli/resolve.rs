//! Resolution: the clap arguments turned into validated, clap-free plans (`crate::plan`).
//! Every range check a user can fail is here or in `Spec::validate`, with a message that
//! names the option. No I/O on targets: what the system offers comes in a `System`.

use std::path::PathBuf;

use super::*;
use crate::units::{parse_duration, parse_size};

/// Options that make no sense inside a study's runs (they belong to the study).
const STUDY_ONLY: [&str; 5] = ["output", "json", "quiet", "keep", "verify-state"];

impl SuiteArgs {
    /// Expands the study and resolves every run; `user` are the options typed.
    pub fn resolve(&self, user: &[crate::plan::suite::Opt], sys: &System) -> Result<SuitePlan> {
        let (matrix, target) = if self.name == "matrix" {
            let file = self.args.first().ok_or_else(|| {
                Error::usage("suite matrix needs a file: iomark suite matrix FILE.toml [TARGET]")
            })?;
            let text = std::fs::read_to_string(file).map_err(|e| {
                Error::usage(format!(
                    "cannot read {file}: {}",
                    crate::error::describe_io(&e)
                ))
            })?;
            let m = crate::plan::suite::Matrix::parse(file, &text, &Cli::run_option_kind)?;
            let target = self.args.get(1).cloned().or_else(|| m.target.clone());
            (Some((m, file.clone(), text)), target)
        } else {
            if self.args.len() > 1 {
                return Err(Error::usage(format!(
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
                return Err(Error::usage(format!(
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
            return Err(Error::usage(format!(
                "--round-time and --max-rounds belong to suite steady, not suite {}",
                self.name
            )));
        }
        let max_rounds: u32 = match &self.max_rounds {
            Some(n) => count_opt("--max-rounds", n, "a whole number")?,
            None => 25,
        };
        if !(5..=10_000).contains(&max_rounds) {
            return Err(Error::usage(format!(
                "--max-rounds {max_rounds} is out of range; use 5 (the steady-state window) to 10000"
            )));
        }
        if user.iter().any(|(k, _)| k == "verify-state") {
            return Err(Error::usage(
                "--verify-state saves one run's blocks; use it with iomark run, not in a study",
            ));
        }
        if matches!(self.name.as_str(), "steady" | "wsat") && self.resume.is_some() {
            return Err(Error::usage(format!(
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
            .map_err(|e| Error::usage(at_line(one_line_clap_error(&e))))?;
        let Some(Command::Run(args)) = cli.command else {
            unreachable!("argv starts with `run`")
        };
        let plan = args.resolve(sys).map_err(|e| match e {
            Error::Usage(m) => Error::usage(at_line(m)),
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

impl DataArgs {
    /// Resolves the data options; they are checked against the block size later.
    pub fn resolve(&self) -> Result<DataSpec> {
        let pct = |opt: &str, v: &Option<String>| -> Result<Option<f64>> {
            v.as_deref()
                .map(|t| {
                    let x: f64 = t.trim().trim_end_matches('%').parse().map_err(|_| {
                        Error::usage(format!("{opt}: '{t}' is not a percentage (0 to 100)"))
                    })?;
                    if !(0.0..=100.0).contains(&x) {
                        return Err(Error::usage(format!(
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
                    return Err(Error::usage(format!(
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
                return Err(Error::usage(format!(
                    "--data {kind} is unknown; use random, zeros, pattern:HEX, compressible or files:PATH"
                )));
            }
        };
        match (d.kind, compress) {
            (DataKind::Compressible, Some(c)) => d.compress = c,
            (DataKind::Compressible, None) => {
                return Err(Error::usage(
                    "--data compressible needs --compress PCT (e.g. --compress 50)",
                ));
            }
            (_, Some(_)) => {
                return Err(Error::usage(format!(
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
            return Err(Error::usage("--size must be greater than zero (e.g. 64m)"));
        }
        let mut spec = Spec::new(self.output.clone());
        spec.rw = Rw::Write;
        spec.rwmixread = 0;
        spec.bs = size_opt("--bs", &self.bs)?;
        if spec.bs == 0 {
            return Err(Error::usage("--bs must be greater than zero (e.g. 4k)"));
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

impl RunArgs {
    pub fn resolve(&self, sys: &System) -> Result<RunPlan> {
        self.opts.resolve(self.target.as_deref(), sys)
    }
}

fn size_opt(opt: &str, text: &str) -> Result<u64> {
    parse_size(text).map_err(|e| Error::usage(format!("{opt}: {e}")))
}

fn duration_opt(opt: &str, text: &str) -> Result<f64> {
    parse_duration(text)
        .map(|d| d.as_secs_f64())
        .map_err(|e| Error::usage(format!("{opt}: {e}")))
}

fn count_opt<T: std::str::FromStr>(opt: &str, text: &str, what: &str) -> Result<T> {
    text.trim()
        .parse()
        .map_err(|_| Error::usage(format!("{opt}: '{text}' is not {what}")))
}

/// Picks the engine: the one asked for, or io_uring when the kernel allows it, else psync.
/// Returns the engine and a note when it differs from what a user would expect.
pub fn resolve_engine(asked: Option<&str>, sys: &System) -> Result<(EngineKind, Option<String>)> {
    match asked {
        Some(name) => {
            let kind = EngineKind::parse(name).ok_or_else(|| {
                Error::usage(format!(
                    "--engine {name} is unknown; use psync, io_uring or null"
                ))
            })?;
            if kind == EngineKind::IoUring
                && let Err(why) = sys.io_uring.clone()
            {
                return Err(Error::usage(format!(
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
            Error::usage(format!(
                "--rw {} is unknown; use read, write, randread, randwrite, rw or randrw",
                self.rw
            ))
        })?;
        let rwmixread: i64 = count_opt("--rwmixread", &self.rwmixread, "a percentage")?;
        if !(0..=100).contains(&rwmixread) {
            return Err(Error::usage(format!(
                "--rwmixread {rwmixread} is out of range; use a percentage from 0 to 100"
            )));
        }
        let (engine, engine_note) = resolve_engine(self.engine.as_deref(), sys)?;
        let target = match (target, engine) {
            (Some(t), _) => t.to_string(),
            (None, EngineKind::Null) => "null".to_string(),
            (None, _) => {
                return Err(Error::usage(
                    "no TARGET given; name a file (e.g. ./test.dat) or a block device, or use --engine null",
                ));
            }
        };
        let qd: i64 = count_opt("--qd", &self.qd, "a whole number")?;
        let jobs: i64 = count_opt("--jobs", &self.jobs, "a whole number")?;
        let repeat: i64 = count_opt("--repeat", &self.repeat, "a whole number")?;
        let fsync: i64 = count_opt("--fsync", &self.fsync, "a whole number")?;
        if !(1..=4096).contains(&qd) {
            return Err(Error::usage(format!(
                "--qd {qd} is out of range; use 1 to 4096"
            )));
        }
        if !(1..=1024).contains(&jobs) {
            return Err(Error::usage(format!(
                "--jobs {jobs} is out of range; use 1 to 1024"
            )));
        }
        if !(1..=100_000).contains(&repeat) {
            return Err(Error::usage(format!(
                "--repeat {repeat} is out of range; use 1 or more"
            )));
        }
        if fsync < 0 || fsync > u32::MAX as i64 {
            return Err(Error::usage(format!(
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
                    Error::usage(format!(
                        "--io-size: '{t}' is not a size or a multiple of the span (e.g. 1g, 2x)"
                    ))
                })?;
                if !(n > 0.0 && n.is_finite()) {
                    return Err(Error::usage(format!(
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
            return Err(Error::usage(
                "--drop-caches writes /proc/sys/vm/drop_caches, which needs root; run as root or drop the option",
            ));
        }
        if spec.qd > spec.engine.caps().max_qd && self.engine.is_none() {
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
            return Err(Error::usage(format!(
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

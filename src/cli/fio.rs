//! `iomark fio JOB.fio…` (fio's job files run as an iomark study) and `--as-fio` (any
//! run or study written as a fio job file). The files are read here; what they mean is
//! `plan::fio_job`'s business.

use std::path::PathBuf;

use clap::Args;

use super::OutputArgs;
use crate::error::{Error, Result};
use crate::plan::fio_job;
use crate::plan::suite::Opt;
use crate::plan::{StudyKind, SuitePlan, System};

/// The largest job file read (an include counts on its own).
const JOB_FILE_MAX: u64 = 1 << 20;

#[derive(Debug, Args)]
pub struct FioArgs {
    /// fio job files, run in order (the first job of each later file waits for the jobs
    /// before it, as in fio).
    #[arg(value_name = "JOB.fio", required = true)]
    pub files: Vec<PathBuf>,
    /// Run without the options iomark does not support (each listed as a warning and
    /// recorded with its run) instead of refusing the file.
    #[arg(long)]
    pub ignore_unsupported: bool,
    /// Print the plan (each job as a run, its group and parameters) and do no I/O.
    #[arg(long)]
    pub dry_run: bool,
    /// Continue the results in FILE: finished runs are kept, the rest run.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// Run every job N times, each a repetition of its run (replaces the file's `loops`).
    #[arg(long, value_name = "N")]
    pub repeat: Option<String>,
    /// The spin before a wait for one completion of the jobs whose waits spin (io_uring
    /// and libaio, as `iomark run --spin-wait`; fio has none): `0` sleeps at once, as fio
    /// does. Without it, iomark's default.
    #[arg(long, value_name = "DURATION")]
    pub spin_wait: Option<String>,
    /// The job threads' scheduling policy, as `iomark run --sched-policy`: batch
    /// (`SCHED_BATCH`) or normal (as the process started, as fio's; the default).
    #[arg(long, value_name = "POLICY", value_parser = ["batch", "normal"])]
    pub sched_policy: Option<String>,
    /// Keep the files iomark creates for the jobs (fio keeps its files; iomark removes
    /// the ones it made unless --keep).
    #[arg(long)]
    pub keep: bool,
    /// Allow writing existing files that iomark did not create.
    #[arg(long)]
    pub overwrite: bool,
    /// Allow writing block devices (destroys their contents).
    #[arg(long)]
    pub allow_write_device: bool,
    /// Also allow writing a block device that holds a partition table or a signature.
    #[arg(long)]
    pub destroy_data: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// `iomark fio --spin-wait`: the jobs whose waits spin (io_uring, libaio; not with
/// `sqthread_poll`, `hipri` or `iodepth_batch_complete_min` above 1) take it; the others
/// (psync, mmap) have no wait to spin in and keep theirs. Refused, one line, where no job
/// has one.
fn spin_wait_where_waits_spin(runs: &mut [crate::plan::StudyRun], text: &str) -> Result<()> {
    let ns = crate::plan::engine::parse_spin(text)?;
    let mut took = 0;
    for r in runs.iter_mut() {
        let spec = &mut r.plan.spec;
        if spec.engine_opts.waits_spin(spec.engine) {
            spec.engine_opts.spin_wait_ns = Some(ns);
            took += 1;
        }
    }
    if took == 0 {
        return Err(Error::usage(format!(
            "--spin-wait {text}: no job of the files waits for completions in a way that spins (ioengine=io_uring or libaio, without sqthread_poll, hipri or iodepth_batch_complete_min above 1); drop --spin-wait"
        )));
    }
    Ok(())
}

impl FioArgs {
    /// The job files as a study: every job one run, in file order, with its group.
    pub fn resolve(&self, sys: &System) -> Result<SuitePlan> {
        let mut read = |p: &std::path::Path| {
            crate::results::store::read_document(
                p,
                JOB_FILE_MAX,
                "a fio job file",
                "name a fio job file (INI text)",
            )
            .map_err(|e| Error::usage(e.to_string()))
        };
        let env = |name: &str| std::env::var(name).ok();
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        let keywords = [
            ("mb_memory", (sys.memory_bytes >> 20).to_string()),
            ("ncpus", cpus.to_string()),
        ];
        let mut src = fio_job::ini::Source {
            read: &mut read,
            env: &env,
            keywords: &keywords,
        };
        let defs = fio_job::ini::read_files(&self.files, &mut src)?;
        let clock = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        let fresh_seed = clock.map_or(0, |d| d.as_nanos() as u64);
        let jobs = fio_job::plan_jobs(&defs, self.ignore_unsupported, fresh_seed)?;
        let mut extra: Vec<Opt> = Vec::new();
        if let Some(n) = &self.repeat {
            extra.push(("repeat".into(), Some(n.clone())));
        }
        if let Some(p) = &self.sched_policy {
            extra.push(("sched-policy".into(), Some(p.clone())));
        }
        for (on, name) in [
            (self.keep, "keep"),
            (self.overwrite, "overwrite"),
            (self.allow_write_device, "allow-write-device"),
            (self.destroy_data, "destroy-data"),
        ] {
            if on {
                extra.push((name.into(), None));
            }
        }
        let mut runs = fio_job::study_runs(&jobs, &extra, sys)?;
        if let Some(text) = &self.spin_wait {
            spin_wait_where_waits_spin(&mut runs, text)?;
        }
        let together = fio_job::together(&jobs);
        let out = self.out.to_output();
        let targets = runs
            .iter()
            .map(|r| &r.plan.spec)
            .filter(|s| s.engine.caps().needs_fd);
        for t in targets.flat_map(|s| s.target_paths()) {
            let path = std::path::Path::new(t);
            if let Some(o) = out.output.as_deref().or(self.resume.as_deref())
                && crate::results::store::same_file(o, path)
            {
                return Err(Error::usage(format!(
                    "-o names {}, which a job uses as its file; write the results elsewhere",
                    o.display()
                )));
            }
        }
        let target = runs
            .iter()
            .map(|r| &r.plan.spec)
            .find(|s| s.engine.caps().needs_fd)
            .map_or("null".to_string(), |s| s.target.clone());
        Ok(SuitePlan {
            name: "fio".into(),
            kind: StudyKind::Fio,
            target,
            runs,
            out,
            dry_run: self.dry_run,
            resume: self.resume.clone(),
            keep: self.keep,
            overwrite: self.overwrite,
            max_rounds: 0,
            together,
            fio_jobs: jobs.into_iter().map(|g| g.job).collect(),
            preset_bs: false,
        })
    }
}

/// `run --as-fio` and `suite … --as-fio`: the run or study as a fio job file; `None`
/// for any other command.
pub fn as_fio(cli: &super::Cli, user: &[Opt], sys: &System) -> Result<Option<String>> {
    use super::Command;
    let (out, resume) = match &cli.command {
        Some(Command::Run(a)) if a.as_fio => (&a.out, None),
        Some(Command::Suite(a)) if a.as_fio => (&a.out, a.resume.as_ref()),
        _ => return Ok(None),
    };
    if out.output.is_some() || out.json || resume.is_some() {
        return Err(Error::usage(
            "--as-fio writes a fio job file on stdout and runs nothing: drop -o, --json and --resume, and redirect it (> jobs.fio)",
        ));
    }
    Ok(match &cli.command {
        Some(Command::Run(args)) => Some(run_as_fio(args, sys)?),
        Some(Command::Suite(args)) => {
            let plan = args.resolve(user, sys)?;
            let mut title = format!("iomark suite {}", plan.name);
            if plan.kind.is_dirty() {
                title.push_str(" (iomark purges the span first and repeats the round until steady state; fio runs each job once)");
            }
            Some(fio_job::write::job_file(&title, &plan.runs))
        }
        _ => None,
    })
}

/// The quick command with its defaults (`iomark` alone).
pub fn quick_defaults() -> super::QuickArgs {
    use clap::Parser;
    match super::Cli::parse_from(["iomark", "quick"]).command {
        Some(super::Command::Quick(args)) => args,
        _ => unreachable!("`iomark quick` parses as the quick command"),
    }
}

/// `run --as-fio`: the run as a fio job file.
fn run_as_fio(args: &super::RunArgs, sys: &System) -> Result<String> {
    let plan = args.resolve(sys)?;
    let run = crate::plan::StudyRun {
        plan,
        point: crate::plan::StudyPoint {
            suite: String::new(),
            test: String::new(),
            param: String::new(),
            value: String::new(),
        },
    };
    Ok(fio_job::write::job_file("iomark run", &[run]))
}

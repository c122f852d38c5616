//! Resolution: the clap arguments turned into validated, clap-free plans (`crate::plan`).
//! Every range check a user can fail is here or in `Spec::validate`, with a message that
//! names the option. No I/O on targets: what the system offers comes in a `System`.

use std::path::PathBuf;

use super::*;
use crate::plan::bsmix::BsMix;
use crate::plan::resolve::{count_opt, duration_opt, size_opt};
use crate::units::fmt_size;

/// The note of a run given `--file-service` with one target.
const FILE_SERVICE_ALONE: &str =
    "--file-service does nothing here: it serves several TARGETs, and one was given";

/// Options that make no sense inside a study's runs (they belong to the study).
const STUDY_ONLY: [&str; 5] = ["output", "json", "quiet", "keep", "verify-state"];

impl SuiteArgs {
    /// Expands the study and resolves every run; `user` are the options typed.
    pub fn resolve(&self, user: &[crate::plan::suite::Opt], sys: &System) -> Result<SuitePlan> {
        let (matrix, target) = if self.name == "matrix" {
            let file = self.args.first().ok_or_else(|| {
                Error::usage("suite matrix needs a file: iomark suite matrix FILE.toml [TARGET]")
            })?;
            let text = crate::results::store::read_document(
                std::path::Path::new(file),
                crate::plan::matrix::MATRIX_MAX,
                "a matrix file",
                "give a TOML matrix file (see `iomark suite --help`)",
            )?;
            let m = crate::plan::suite::Matrix::parse(file, &text)?;
            let target = self.args.get(1).cloned().or_else(|| m.target.clone());
            (Some((m, file.clone(), text)), target)
        } else {
            (None, self.args.first().cloned())
        };
        let (targets, sweep) = self.targets(matrix.as_ref().map(|m| &m.0))?;
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
        if user.iter().any(|(k, _)| k == "name") {
            return Err(Error::usage(
                "--name names one run; a study names each of its runs by what it varies",
            ));
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
        self.round_time_to(&mut planned)?;
        let matrix_src = matrix
            .as_ref()
            .map(|(_, file, text)| (file.as_str(), text.as_str()));
        let runs = crate::plan::resolve::study_runs(
            &self.name,
            &planned,
            &study_user,
            &target,
            matrix_src,
            sys,
        )?;
        let runs = if targets.len() > 1 || sweep.is_some() {
            crate::plan::targets::spread(
                runs,
                &targets,
                sweep.as_deref(),
                crate::plan::targets::mpi_launched(),
            )?
        } else {
            runs
        };
        let mut runs = runs;
        (runs.iter_mut())
            .filter(|r| r.plan.spec.file_service.is_some() && r.plan.spec.targets.len() < 2)
            .for_each(|r| r.plan.spec.note(FILE_SERVICE_ALONE));
        Ok(SuitePlan {
            name: self.name.clone(),
            kind: StudyKind::parse(&self.name).expect("expand accepts only known studies"),
            target,
            runs,
            out: self.out.to_output(),
            dry_run: self.dry_run,
            resume: self.resume.clone(),
            keep: self.opts.0.on("keep"),
            overwrite: self.opts.0.on("overwrite"),
            max_rounds,
            together: Vec::new(),
            fio_jobs: Vec::new(),
            preset_bs: self.name == "bs" && !user.iter().any(|(k, _)| k == "bs"),
        })
    }
}

impl SuiteArgs {
    /// `--round-time`: the length of suite steady's rounds (their `--runtime`).
    fn round_time_to(&self, planned: &mut [crate::plan::suite::PlannedRun]) -> Result<()> {
        let Some(rt) = &self.round_time else {
            return Ok(());
        };
        if duration_opt("--round-time", rt)? <= 0.0 {
            return Err(Error::usage(
                "--round-time must be greater than zero (examples: 30s, 1m); leave it out for rounds of 1 minute",
            ));
        }
        for p in planned.iter_mut().filter(|p| p.test == "round") {
            p.opts.push(("runtime".into(), Some(rt.clone())));
        }
        Ok(())
    }

    /// Every target named (on the command line, else in the matrix file) and the
    /// `--targets-sweep` steps.
    #[allow(clippy::type_complexity)]
    fn targets(
        &self,
        matrix: Option<&crate::plan::suite::Matrix>,
    ) -> Result<(Vec<String>, Option<Vec<usize>>)> {
        let targets: Vec<String> = match matrix {
            Some(m) if self.args.len() < 2 => m.targets.clone(),
            Some(_) => self.args.iter().skip(1).cloned().collect(),
            None => self.args.clone(),
        };
        if targets.len() > 1 && matches!(self.name.as_str(), "steady" | "wsat") {
            return Err(Error::usage(format!(
                "suite {} purges and preconditions one target; run it on each target alone",
                self.name
            )));
        }
        let sweep = (self.targets_sweep.as_deref())
            .map(|t| crate::plan::targets::parse_sweep(t, targets.len()))
            .transpose()?;
        Ok((targets, sweep))
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
        spec.bs = size_opt("--bs", self.bs.as_deref().unwrap_or("4k"))?;
        if spec.bs == 0 {
            return Err(Error::usage("--bs must be greater than zero (e.g. 4k)"));
        }
        let mix = BsMix::of_options(self.bssplit.as_deref(), self.bsrange.as_deref(), size_opt)?;
        if mix.is_some() && self.bs.is_some() {
            return Err(Error::usage(
                "--bs and a mix of sizes (--bssplit, --bsrange) both set the block size; give one of them",
            ));
        }
        if let Some(m) = mix {
            m.validate(false)?;
            // As a run keeps it: the largest size, and a mix of one size is that size.
            let one = crate::plan::bsmix::WriteBs::of(m.max(), Some(m));
            (spec.bs, spec.bs_mix) = (one.bs, one.mix);
        }
        spec.seed = count_opt("--seed", &self.seed, "a non-negative whole number")?;
        spec.data = self.data.0.data_spec()?;
        spec.data.validate(spec.bs)?;
        spec.validate_mix_data()?;
        if size < spec.bs {
            let (what, fix) = match &spec.bs_mix {
                Some(m) => (
                    format!("{} has blocks of {}, larger", m.opt(), fmt_size(spec.bs)),
                    "a mix of smaller sizes",
                ),
                None => (
                    format!("--bs {} is larger", fmt_size(spec.bs)),
                    "a smaller --bs",
                ),
            };
            return Err(Error::usage(format!(
                "{what} than --size {}: a write run writes whole blocks and would write none there; use {fix} or a larger --size",
                fmt_size(size)
            )));
        }
        Ok(DataPlan {
            size,
            spec,
            output: self.output.clone(),
            quiet: self.quiet,
        })
    }
}

impl RunArgs {
    pub fn resolve(&self, sys: &System) -> Result<RunPlan> {
        let targets: Vec<String> = match &self.filename {
            Some(f) => f.split(':').map(str::to_string).collect(),
            None => self.target.clone(),
        };
        let mut plan = self.opts.0.resolve(
            targets.first().map(String::as_str),
            self.out.to_output(),
            sys,
        )?;
        if plan.spec.file_service.is_some_and(|f| f.split) && targets.len() < 2 {
            return Err(Error::usage(
                "--split-targets shares several TARGETs out between the jobs; name several, or drop it",
            ));
        }
        if plan.spec.file_service.is_some() && targets.len() < 2 {
            // Accepted (a study's option list may carry it), but said: it changes nothing.
            plan.spec.note(FILE_SERVICE_ALONE);
        }
        if targets.len() > 1 {
            plan.spec.targets = targets;
            plan.spec.validate_targets()?;
            if plan.policy.verify_state.is_some() {
                return Err(Error::usage(
                    "--verify-state saves one target's blocks; run each target alone",
                ));
            }
        }
        Ok(plan)
    }
}

impl QuickArgs {
    /// The quick benchmark is the `quick` preset on a new file in the directory.
    pub fn resolve(&self, sys: &System) -> Result<QuickPlan> {
        let dir = self.dir.clone().unwrap_or_else(|| PathBuf::from("."));
        if dir.exists() && !dir.is_dir() {
            return Err(Error::usage(format!(
                "{} is not a directory; quick makes its temporary file in a directory: name one (e.g. .)",
                dir.display()
            )));
        }
        if !dir.is_dir() {
            return Err(Error::usage(format!(
                "directory {} does not exist; create it or name another",
                dir.display()
            )));
        }
        let file = dir.join(format!(".iomark-quick-{}.dat", std::process::id()));
        if file.exists() {
            return Err(Error::guard(format!(
                "{} already exists; remove it or run in another directory",
                file.display()
            )));
        }
        // quick has no --bs: its sequential tests' 1 MiB blocks set the smallest file.
        let size = size_opt("--size", &self.size)?;
        if size < 1 << 20 {
            return Err(Error::usage(format!(
                "--size {} is smaller than quick's 1 MiB sequential blocks; use --size 1m or more",
                self.size.trim()
            )));
        }
        // Every quick test is time-based (the run's own message offers a size-based run).
        if crate::units::parse_duration(&self.runtime).is_ok_and(|d| d.is_zero()) {
            return Err(Error::usage(format!(
                "--runtime {} is no time: quick runs each test for a time (3s unless given); give one greater than zero, e.g. --runtime 3s",
                self.runtime.trim()
            )));
        }
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
        let runs = crate::plan::resolve::study_runs("quick", &planned, &user, &target, None, sys)?;
        Ok(QuickPlan {
            file,
            runs,
            out: self.out.to_output(),
        })
    }
}

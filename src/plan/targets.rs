//! Several targets in one run: the list on a [`Spec`], the workload on each target alone,
//! and the checks of the list (no I/O; the targets themselves are checked when opened);
//! and a span given as shares of a target's length (`--size 50%`), taken when it is
//! opened.

use crate::error::{Error, Result};
use crate::plan::StudyRun;
use crate::plan::spec::Spec;

/// The most targets one run takes (each has its own jobs and device counters).
pub(crate) const MAX_TARGETS: usize = 256;

impl Spec {
    /// This spec with `--size P%` and `--offset P%` taken as shares of a target of `len`
    /// bytes, as fio takes them: the offset rounded down to a block, the span to the
    /// target's end at most; unchanged without percentages.
    pub(crate) fn with_shares_of(&self, len: u64) -> std::borrow::Cow<'_, Spec> {
        if self.size_pct.is_none() && self.offset_pct.is_none() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut s = self.clone();
        let share = |p: f64| (len as f64 * p / 100.0) as u64;
        if let Some(p) = self.offset_pct {
            s.offset = share(p) / self.buf_bs().max(1) * self.buf_bs().max(1);
        }
        if let Some(p) = self.size_pct {
            s.size = Some(share(p).min(len.saturating_sub(s.offset)));
        }
        std::borrow::Cow::Owned(s)
    }

    /// Every target of the run, in order (one unless `targets` names several).
    pub fn target_paths(&self) -> Vec<&str> {
        if self.targets.is_empty() {
            vec![self.target.as_str()]
        } else {
            self.targets.iter().map(String::as_str).collect()
        }
    }

    /// The workload on each target alone: `target` set to it, `targets` empty. The
    /// opening, the guard and the preflight of a target see only these.
    pub fn per_target(&self) -> Vec<Spec> {
        self.target_paths()
            .into_iter()
            .map(|t| Spec {
                target: t.to_string(),
                targets: Vec::new(),
                ..self.clone()
            })
            .collect()
    }

    /// How many targets the run has.
    pub(crate) fn target_count(&self) -> u32 {
        self.targets.len().max(1) as u32
    }

    /// The checks of a run on several targets.
    pub(crate) fn validate_targets(&self) -> Result<()> {
        self.validate_files()?;
        if self.targets.len() <= 1 {
            return Ok(());
        }
        if self.targets.len() > MAX_TARGETS {
            return Err(Error::usage(format!(
                "{} targets in one run are too many; use at most {MAX_TARGETS}",
                self.targets.len()
            )));
        }
        if self.targets.first() != Some(&self.target) {
            return Err(Error::usage(
                "the first of several targets must be the run's target",
            ));
        }
        for (i, t) in self.targets.iter().enumerate() {
            if t.is_empty() {
                return Err(Error::usage(
                    "a TARGET is empty; name a file (e.g. ./test.dat) or a block device",
                ));
            }
            if self.targets[..i].contains(t) {
                return Err(Error::usage(format!(
                    "{t} is named twice; give each target once (--jobs sets the jobs per target)"
                )));
            }
        }
        if self.verify && !self.serves_files() {
            return Err(Error::usage(
                "--verify reads back what each job wrote, and without --file-service every target has its own jobs; add --file-service, or run each target alone",
            ));
        }
        if !self.engine.caps().needs_fd {
            return Err(Error::usage(
                "--engine null opens no target, so several TARGETs would all be the same nothing; name one or none",
            ));
        }
        Ok(())
    }
}

/// Every target the runs of a plan name, in order, each once.
pub fn plan_targets(runs: &[StudyRun]) -> Vec<&str> {
    let mut all: Vec<&str> = Vec::new();
    for t in runs.iter().flat_map(|r| r.plan.spec.target_paths()) {
        if !all.contains(&t) {
            all.push(t);
        }
    }
    all
}

/// The files `runs` make, in plan order, each with the length it is made: the offset
/// plus the span of the first run on it (the run that makes it; `Target::create`), the
/// default size without `--size`. `exists` says which paths are there already (not made).
pub fn made_files<'a>(runs: &'a [StudyRun], exists: &dyn Fn(&str) -> bool) -> Vec<(&'a str, u64)> {
    let mut all: Vec<(&str, u64)> = Vec::new();
    for s in runs.iter().map(|r| &r.plan.spec) {
        if !s.engine.caps().needs_fd {
            continue;
        }
        let len = s.offset + s.size.unwrap_or(crate::plan::DEFAULT_NEW_FILE_SIZE);
        for t in s.target_paths() {
            if !all.iter().any(|(p, _)| *p == t) && !exists(t) {
                all.push((t, len));
            }
        }
    }
    all
}

/// Whether this process is a rank of an MPI job: built with the feature `mpi`, and
/// started by a launcher (OpenMPI's mpirun, MPICH's hydra, Slurm's srun with PMI or PMIx).
pub fn mpi_launched() -> bool {
    cfg!(feature = "mpi") && launcher().is_some()
}

/// The variable by which a launcher (OpenMPI's mpirun, MPICH's hydra, Slurm's srun with
/// PMI or PMIx) says it started this process, if one did.
fn launcher() -> Option<&'static str> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .into_iter()
        .find(|v| std::env::var_os(v).is_some())
}

/// The refusal for a build without MPI that a launcher started as one of several tasks:
/// each would run alone, all on the same targets and `-o` (and exit 0). A launcher of
/// one task is no concern.
pub fn launched_without_mpi() -> Option<String> {
    if cfg!(feature = "mpi") {
        return None;
    }
    let var = |k: &str| std::env::var(k).ok();
    let by = launcher()?;
    let tasks = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"]
        .into_iter()
        .find_map(|k| Some((k, var(k)?.trim().parse::<u64>().ok()?)));
    let started = match tasks {
        Some((_, 1)) => return None,
        Some((k, n)) => format!("as one of {n} tasks of an MPI launcher ({k}={n})"),
        None => format!("by an MPI launcher ({by} is set)"),
    };
    Some(format!(
        "started {started}, but this build of iomark has no MPI: each task would run alone, all on the same targets and -o; build it with `cargo build --release --features mpi` (needs libopenmpi-dev and libclang-dev), or run iomark without the launcher"
    ))
}

/// `--targets-sweep 1,2,4`: how many of the targets each step of the sweep uses, checked
/// against the `given` targets.
pub(crate) fn parse_sweep(text: &str, given: usize) -> Result<Vec<usize>> {
    let mut steps: Vec<usize> = Vec::new();
    for item in text.split(',').map(str::trim) {
        let n: usize = item.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
            Error::usage(format!(
                "--targets-sweep: '{item}' is not a count of targets (e.g. 1,2,4)"
            ))
        })?;
        if n > given {
            return Err(Error::usage(format!(
                "--targets-sweep {text} asks for {n} targets but {given} {} given; name at least {n} TARGETs",
                if given == 1 { "was" } else { "were" }
            )));
        }
        if steps.contains(&n) {
            return Err(Error::usage(format!(
                "--targets-sweep {text} lists {n} more than once; give each count once"
            )));
        }
        steps.push(n);
    }
    Ok(steps)
}

/// A study's runs on several targets: every run on all of `targets` (no sweep), or
/// repeated for each step of `sweep` on the first n of them. A sweep becomes the swept
/// parameter (`targets`, its value n: "1 disk, 2 disks, 4 disks"), and the study's own
/// parameter and value move into the test's name; preparation runs keep theirs. A
/// step on one target runs without `--stonewall` (one target is always the first done),
/// unless `ranks` (an MPI job: its ranks still race one another).
pub(crate) fn spread(
    runs: Vec<StudyRun>,
    targets: &[String],
    sweep: Option<&[usize]>,
    ranks: bool,
) -> Result<Vec<StudyRun>> {
    let on = |r: &StudyRun, n: usize| -> Result<StudyRun> {
        let mut r = r.clone();
        if n > 1 {
            r.plan.spec.targets = targets[..n].to_vec();
            r.plan.spec.validate_targets()?;
        }
        Ok(r)
    };
    let Some(steps) = sweep else {
        return runs.iter().map(|r| on(r, targets.len())).collect();
    };
    let mut out = Vec::new();
    for &n in steps {
        for r in &runs {
            let mut r = on(r, n)?;
            if n == 1 && !ranks {
                r.plan.spec.stonewall = false;
            }
            if !r.point.is_preparation() {
                let p = &mut r.point;
                p.test = format!("{} {}={}", p.test, p.param, p.value);
                p.param = "targets".into();
                p.value = n.to_string();
            }
            out.push(r);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_is_checked_against_the_targets_given() {
        assert_eq!(parse_sweep("1,2,4", 4).unwrap(), vec![1, 2, 4]);
        for (text, needle) in [
            ("1,8", "asks for 8 targets but 4"),
            ("0", "not a count"),
            ("2,2", "more than once"),
            ("x", "not a count"),
        ] {
            let e = parse_sweep(text, 4).unwrap_err();
            assert!(
                matches!(e, Error::Usage(_)) && e.to_string().contains(needle),
                "{e}"
            );
        }
    }

    #[test]
    fn a_sweep_repeats_each_run_on_the_first_n_targets() {
        let mut spec = Spec::new("a");
        spec.engine = crate::plan::spec::EngineKind::Psync;
        spec.stonewall = true;
        let run = |test: &str| StudyRun {
            plan: crate::plan::RunPlan {
                spec: spec.clone(),
                policy: Default::default(),
                repeat: 1,
                out: Default::default(),
            },
            point: crate::plan::StudyPoint {
                suite: "qd".into(),
                test: test.into(),
                param: "qd".into(),
                value: "1".into(),
            },
        };
        let ts: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let runs = vec![run("fill"), run("randread")];
        let out = spread(runs.clone(), &ts, Some(&[1, 2, 4]), false).unwrap();
        let mpi = spread(runs.clone(), &ts, Some(&[1, 2, 4]), true).unwrap();
        assert!(
            mpi.iter().all(|r| r.plan.spec.stonewall),
            "ranks race on one target too"
        );
        assert_eq!(out.len(), 6);
        assert!(out[0].plan.spec.targets.is_empty() && out[0].point.test == "fill");
        assert_eq!(out[1].point.test, "randread qd=1");
        assert_eq!(
            (out[1].point.param.as_str(), out[1].point.value.as_str()),
            ("targets", "1")
        );
        assert_eq!(out[3].plan.spec.targets, vec!["a", "b"]);
        assert_eq!(out[5].plan.spec.target_paths(), vec!["a", "b", "c", "d"]);
        assert_eq!(out[5].point.value, "4");
        // --stonewall: not on the one-target steps, kept on the others.
        let walls: Vec<bool> = out.iter().map(|r| r.plan.spec.stonewall).collect();
        assert_eq!(walls, [false, false, true, true, true, true]);
        let all = spread(runs, &ts, None, false).unwrap();
        assert!(all.iter().all(|r| r.plan.spec.targets.len() == 4));
    }

    #[test]
    fn each_rank_gets_its_own_target_or_segment() {
        let at = |rank| RankPlace {
            rank,
            size: 3,
            host: "h1".into(),
            local_rank: rank,
        };
        let mut spec = Spec::new("/d/f.{host}.{rank}");
        assert_eq!(Layout::of(&spec.target, false), Layout::Template);
        let s = spec.for_rank(Layout::Template, &at(2)).unwrap();
        assert_eq!(s.target, "/d/f.h1.2");
        assert_ne!(s.seed, spec.seed, "each rank its own streams");
        assert_eq!(
            spec.for_rank(Layout::Template, &at(0)).unwrap().seed,
            spec.seed
        );
        assert_eq!(Layout::of("/d", true), Layout::FilePerProcess);
        let s = spec.for_rank(Layout::FilePerProcess, &at(1)).unwrap();
        assert_eq!(s.target, "/d/f.{host}.{rank}/iomark.1.dat");
        spec.target = "/d/shared".into();
        assert_eq!(Layout::of(&spec.target, false), Layout::Segmented);
        let e = spec.for_rank(Layout::Segmented, &at(0)).unwrap_err();
        assert!(e.to_string().contains("give --size"), "{e}");
        // 3 ranks over 1 MiB + 4 KiB in 64 KiB blocks: 5 blocks each, contiguous, none
        // shared, the last block (and the 4 KiB) left over.
        spec.bs = 64 << 10;
        spec.offset = 4096;
        spec.size = Some((1 << 20) + 4096);
        let segs: Vec<(u64, u64)> = (0..3)
            .map(|r| {
                let s = spec.for_rank(Layout::Segmented, &at(r)).unwrap();
                (s.offset, s.size.unwrap())
            })
            .collect();
        assert_eq!(
            segs,
            vec![
                (4096, 5 << 16),
                (4096 + (5 << 16), 5 << 16),
                (4096 + (10 << 16), 5 << 16)
            ]
        );
    }
}

/// Where one rank of a scaled-out run (MPI) stands: what a target template and the
/// layouts need to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankPlace {
    pub rank: u32,
    /// Ranks in all.
    pub size: u32,
    pub host: String,
    /// The rank's number among the ranks on its host.
    pub local_rank: u32,
}

/// How the ranks of a scaled-out run share their targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The target names `{rank}`, `{host}` or `{local_rank}`: a file or device per rank.
    Template,
    /// The target is a directory: each rank its own file in it (file per process).
    FilePerProcess,
    /// One file or device shared by every rank, its span split into one segment per rank
    /// (IOR's segmented layout).
    Segmented,
}

impl Layout {
    /// The layout's name in the results (`mpi.layout`).
    pub fn name(self) -> &'static str {
        match self {
            Layout::Template => "template",
            Layout::FilePerProcess => "file-per-process",
            Layout::Segmented => "segmented",
        }
    }

    /// The layout a target asks for; `is_dir` says whether it names a directory.
    pub fn of(target: &str, is_dir: bool) -> Layout {
        if ["{rank}", "{host}", "{local_rank}"]
            .iter()
            .any(|k| target.contains(k))
        {
            Layout::Template
        } else if is_dir {
            Layout::FilePerProcess
        } else {
            Layout::Segmented
        }
    }
}

impl Spec {
    /// The workload of one rank: every target laid out for `at` by `layout`.
    pub fn for_rank(&self, layout: Layout, at: &RankPlace) -> Result<Spec> {
        let mut s = self.clone();
        let place = |t: &str| match layout {
            Layout::Template => t
                .replace("{rank}", &at.rank.to_string())
                .replace("{local_rank}", &at.local_rank.to_string())
                .replace("{host}", &at.host),
            Layout::FilePerProcess => format!("{}/iomark.{}.dat", t.trim_end_matches('/'), at.rank),
            Layout::Segmented => t.to_string(),
        };
        // Each rank its own streams (a deduplicating device must not see one rank's data
        // again from another, and a block one rank wrote over another's reads back as
        // stale); rank 0 keeps the run's seed.
        s.seed = self.seed ^ (at.rank as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        s.target = place(&self.target);
        s.targets = self.targets.iter().map(|t| place(t)).collect();
        if layout == Layout::Segmented && at.size > 1 {
            let span = self.size.ok_or_else(|| {
                Error::usage(
                    "the ranks share one target, split into a segment each: give --size (the whole span), or name a file per rank with {rank}",
                )
            })?;
            let seg = span / at.size as u64 / self.buf_bs() * self.buf_bs();
            if seg == 0 {
                return Err(Error::usage(format!(
                    "--size {} split between {} ranks leaves less than one --bs block each; use a larger --size",
                    crate::units::fmt_size(span),
                    at.size
                )));
            }
            s.offset = self.offset + at.rank as u64 * seg;
            s.size = Some(seg);
        }
        Ok(s)
    }
}

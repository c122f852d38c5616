//! Several targets in one run: the list on a [`Spec`], the workload on each target alone,
//! and the checks of the list (no I/O; the targets themselves are checked when opened).

use crate::error::{Error, Result};
use crate::plan::spec::Spec;

/// The most targets one run takes (each has its own jobs and device counters).
pub(crate) const MAX_TARGETS: usize = 256;

impl Spec {
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
        if self.verify {
            return Err(Error::usage(
                "--verify reads back one target; run it on each target alone",
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

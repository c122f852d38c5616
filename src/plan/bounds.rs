//! The allowed ranges of the whole-number run options (`--qd`, `--jobs`, …), written
//! once: resolution checks the typed value with them, `Spec::validate` the spec.

use crate::error::{Error, Result};

/// The allowed range of a whole-number option and what to say outside it: the one place
/// these ranges are written (resolution checks the typed value, `Spec::validate` the spec).
pub(crate) struct Bounds {
    pub opt: &'static str,
    pub lo: i64,
    pub hi: i64,
    pub hint: &'static str,
}

impl Bounds {
    /// Refuses a value outside the range.
    pub(crate) fn check(&self, v: i64) -> Result<()> {
        if (self.lo..=self.hi).contains(&v) {
            Ok(())
        } else {
            Err(Error::usage(format!(
                "{} {v} is out of range; {}",
                self.opt, self.hint
            )))
        }
    }
}

pub(crate) const QD: Bounds = Bounds {
    opt: "--qd",
    lo: 1,
    hi: 4096,
    hint: "use 1 to 4096",
};
pub(crate) const JOBS: Bounds = Bounds {
    opt: "--jobs",
    lo: 1,
    hi: 1024,
    hint: "use 1 to 1024",
};
pub(crate) const RWMIXREAD: Bounds = Bounds {
    opt: "--rwmixread",
    lo: 0,
    hi: 100,
    hint: "use a percentage from 0 to 100",
};
pub(crate) const RWMIXWRITE: Bounds = Bounds {
    opt: "--rwmixwrite",
    lo: 0,
    hi: 100,
    hint: "use a percentage from 0 to 100",
};
pub(crate) const REPEAT: Bounds = Bounds {
    opt: "--repeat",
    lo: 1,
    hi: 100_000,
    hint: "use 1 to 100000",
};
pub(crate) const FSYNC: Bounds = Bounds {
    opt: "--fsync",
    lo: 0,
    hi: u32::MAX as i64,
    hint: "use 0 (never) or a positive count of writes",
};

//! The sampler's hashing budget (`workload::sampler`): the allowance a job may hash
//! before it applies, the plan a job that says how much it writes is given, and the
//! narrowing of the sampled fraction.

use super::{HASH_ALLOWANCE_BYTES, HASH_ALLOWANCE_UNITS, HASH_BUDGET_SHIFT, Plan, Sampler};

impl Sampler {
    /// Bytes of units the job may hash before the budget applies.
    pub(super) fn allowance(&self) -> u64 {
        let (least, most) = HASH_ALLOWANCE_BYTES;
        (HASH_ALLOWANCE_UNITS * self.unit as u64).clamp(least, most)
    }

    /// Bytes seen so far.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Whether the sampler asks how many bytes the job will write in all (`plan`): when
    /// its hashing allowance is spent, and again whenever the budget is.
    #[inline(always)]
    pub(crate) fn wants_plan(&self) -> bool {
        self.plan == Plan::Asked
    }

    /// Told that the job will write about `expected` bytes in all (measured so far and
    /// to come): the sampled fraction narrows at once to the one whose sample at the end
    /// is about `HASH_ALLOWANCE_UNITS` units, rather than halving once per doubling of
    /// the written bytes, each doubling hashing half the allowance again (a 4 s run of
    /// 128 KiB writes on a loop device hashed 600 MiB of its 20 GiB, 6% of its job
    /// thread's time; see `docs/data.md`). The contents kept are those the narrower
    /// fraction selects over the whole stream, as any narrowing keeps.
    pub(crate) fn plan(&mut self, expected: u64) {
        self.plan = Plan::Made;
        let (units, keep) = (
            expected / self.unit as u64,
            self.allowance() / self.unit as u64,
        );
        let mut shift = self.shift;
        while shift < HASH_BUDGET_SHIFT && units >> shift > keep {
            shift += 1;
        }
        while self.shift < shift {
            self.narrow();
        }
    }

    /// Halves the sampled fraction of hash space, dropping what falls out of it.
    pub(super) fn narrow(&mut self) {
        self.shift += 1;
        self.written_at_narrow = self.written;
        let s = self.shift;
        self.seen.retain(|e| e.sel_tz >= s);
    }
}

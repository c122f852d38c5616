//! The checks of a spec that stand apart from `Spec::validate`'s list: a trim pattern's,
//! and `--verify`'s (room for its jobs, also checked against the target's span once it is
//! opened; a `--dedup` its headers leave possible).

use crate::error::{Error, Result};
use crate::plan::spec::Spec;
use crate::units::fmt_size;

impl Spec {
    /// `--verify`'s checks without the target: room for its jobs in `--size`, and a
    /// `--dedup` that some unit without a header can meet.
    pub(super) fn validate_verify(&self) -> Result<()> {
        if let Some(size) = self.size {
            self.verify_room(size)?;
        }
        if self.verify && self.data.dedup > 0.0 && self.buf_bs() <= self.data.dedup_unit {
            return Err(Error::usage(format!(
                "--verify stamps a header into every block, and no block is larger than a --dedup-unit ({}), so no unit can repeat another and --dedup {} cannot be met; drop one of them, or use a --dedup-unit smaller than the block",
                fmt_size(self.data.dedup_unit),
                self.data.dedup
            )));
        }
        Ok(())
    }

    /// With `--verify`, jobs that share a span each own a region of it, so that no two
    /// writes to one block race: refused where the span holds fewer blocks than jobs
    /// (a job with none would share another's block, and its writes would be read back as
    /// corrupt or stale).
    pub(crate) fn verify_room(&self, span: u64) -> Result<()> {
        let own = self.file_service.is_some_and(|f| f.split);
        let blocks = span / self.grain();
        if self.verify && !own && blocks < self.jobs as u64 {
            return Err(Error::usage(format!(
                "--verify gives each of the --jobs {} a block of its own, and the span ({}) holds {blocks} of {}; use --jobs {} or fewer, or a larger --size",
                self.jobs,
                fmt_size(span),
                fmt_size(self.grain()),
                blocks.max(1)
            )));
        }
        Ok(())
    }

    /// The checks of a trim pattern: nothing to verify, and no data to shape unless it
    /// also writes.
    pub(super) fn validate_trim(&self) -> Result<()> {
        if !self.rw.trims() {
            return Ok(());
        }
        if self.verify {
            return Err(Error::usage(format!(
                "--verify reads back what was written, and --rw {} discards blocks; drop --verify",
                self.rw.name()
            )));
        }
        if !self.rw.writes_data() && self.data != crate::plan::data::DataSpec::default() {
            return Err(Error::usage(format!(
                "--rw {} writes no data, so the data options would change nothing; drop them, or use --rw trimwrite",
                self.rw.name()
            )));
        }
        Ok(())
    }
}

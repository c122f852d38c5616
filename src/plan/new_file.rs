//! How a file iomark creates is prepared before the measurement (`--new-file`): written
//! with the workload's data (iomark's default), or only allocated, as fio does for a job
//! that never reads (fio's `fallocate` default, without `overwrite=1`).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::run_options::RunOptions;
use crate::plan::spec::Spec;

/// The preparation of a new file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NewFile {
    /// Laid out with the workload's data, then synced: every block is written once
    /// before the measurement, so reads hit real blocks (iomark's default; fio's
    /// `overwrite=1`, and fio's layout for any job that reads).
    #[default]
    Write,
    /// Space reserved (`posix_fallocate`, unwritten extents) and nothing written: the
    /// measured writes are the first the blocks see (fio's way with a job that only
    /// writes). Refused for a pattern that reads: the filesystem would answer reads of
    /// unwritten blocks with zeros, without the device.
    Allocate,
}

impl NewFile {
    pub fn name(self) -> &'static str {
        match self {
            NewFile::Write => "write",
            NewFile::Allocate => "allocate",
        }
    }

    pub fn is_default(&self) -> bool {
        *self == NewFile::default()
    }
}

/// Reads `--new-file` into `spec`.
pub(crate) fn resolve(o: &RunOptions, spec: &mut Spec) -> Result<()> {
    spec.new_file = match o.text_or_default("new-file") {
        "write" => NewFile::Write,
        "allocate" => NewFile::Allocate,
        other => {
            return Err(Error::usage(format!(
                "--new-file {other} is unknown; use write or allocate"
            )));
        }
    };
    if spec.new_file == NewFile::Allocate && spec.reads() {
        return Err(Error::usage(format!(
            "--new-file allocate writes nothing before the run and --rw {} reads: the filesystem would answer reads of unwritten blocks with zeros, without the device; use --new-file write (the default)",
            spec.rw.name()
        )));
    }
    Ok(())
}

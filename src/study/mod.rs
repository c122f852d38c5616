//! Studies: every loop over several runs lives here, as a library (the binary only
//! dispatches to it): suites and matrix files, the quick benchmark, a single run with
//! its repetitions, and the dirty-drive studies (purge, precondition, rounds). The
//! runner owns the target's lifetime across a plan, resume, and saving after every
//! repetition. It never prints: events go to a sink, the document stays in the store.

pub mod dirty;
pub mod fio;
pub mod fit;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod runner;
pub mod store;

pub use crate::plan::targets::mpi_launched;

//! iomark: a storage I/O benchmark for Linux.
//!
//! The pipeline reads in the tree: [`cli`] (clap arguments) → [`plan`] (validated specs and
//! plans) → [`study`] (every loop of runs) → [`measure`] (repetitions, workers) over
//! [`workload`] (offsets, data) and [`io`] (engines, targets, the system) → [`results`] (the
//! schema) → [`report`] (tables, HTML, comparisons). See `docs/ARCHITECTURE.md`.

#[cfg(test)]
mod architecture;
pub mod cli;
pub mod command;
pub mod error;
pub mod io;
pub mod measure;
pub mod plan;
pub mod report;
pub mod results;
pub mod stop;
pub mod study;
pub mod units;
pub mod workload;

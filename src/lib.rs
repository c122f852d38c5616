//! iomark: a storage I/O benchmark for Linux.
//!
//! The pipeline: command line ([`cli`]) → [`spec::Spec`] → [`plan`] → [`runner`] (threads,
//! [`engine`]s, [`data`]) → [`results::Document`] → [`report`]. See `docs/ARCHITECTURE.md`.

pub mod chart;
pub mod cli;
pub mod compare;
pub mod data;
pub mod engine;
pub mod env;
pub mod error;
pub mod export;
pub mod guard;
pub mod html;
pub mod import;
pub mod pattern;
pub mod plan;
pub mod progress;
pub mod report;
pub mod results;
pub mod runner;
pub mod spec;
pub mod stats;
pub mod steady;
pub mod suite;
pub mod target;
pub mod units;
pub mod verify;

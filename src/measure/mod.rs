//! Measuring: the repetition loop of one run ([`run::run`]), one repetition's threads and
//! snapshots (`rep`), runs measured together (`group`), the worker loop (`worker`), the start gate, the interval series,
//! minimum rates (`min_rate`), repetition merging, verify read-back, write amplification and warnings. Everything
//! measured leaves through the results schema and a [`crate::results::sink::Sink`]; this
//! module never prints and never decides where results are saved.

pub mod amplification;
mod earlier;
mod gate;
pub mod group;
mod interval;
mod launch;
mod merge;
mod min_rate;
mod monitor;
mod pace;
mod rep;
pub mod run;
pub mod stream;
mod tally;
mod targets;
pub mod verify;
pub mod verify_state;
mod warnings;
mod window;
mod worker;
mod worker_out;

pub(crate) use launch::{check_aio, check_cpus};

//! The workload: random numbers, offsets, the read/write mix and the data written.

pub mod data;
pub mod rng;

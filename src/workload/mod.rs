//! The workload: random numbers, offsets, the read/write mix and the data written.

pub mod corpus;
pub mod data;
pub mod dist;
pub(crate) mod hash;
pub(crate) mod huge;
pub(crate) mod keys;
pub mod pool;
pub mod rng;
pub mod sampler;
pub mod seed;
mod seen;
pub mod sizes;
mod tracks;

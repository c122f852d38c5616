//! Results: the schema, statistics, fio import.

pub mod cpu;
pub mod env;
pub mod fio;
pub mod ranks;
pub mod schema;
pub mod sink;
pub mod stats;
pub mod steady;
pub mod store;
pub mod summary;
pub mod targets;
#[cfg(test)]
pub(crate) mod testdoc;
mod unknown;
pub mod verify;
mod version;

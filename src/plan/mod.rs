//! Plans: what will run, fully resolved and validated, before anything runs.

pub mod quick;
pub mod spec;
pub mod suite;

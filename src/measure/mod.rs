//! Measuring: the repetition loop, the workers, merging, verify.

pub mod run;
pub mod verify;

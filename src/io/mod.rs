//! Everything that touches the system: engines, targets, the device guard, the environment.

pub mod blkid;
pub mod buffer;
pub(crate) mod clock;
pub mod engine;
pub mod env;
pub mod guard;
pub(crate) mod kernel_threads;
pub(crate) mod mark;
pub(crate) mod space;
pub mod sys;
mod sys_aio;
pub mod target;

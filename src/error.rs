//! The library's error type and its mapping to exit codes.
//!
//! Two kinds matter to a user: bad input (a mistake they can fix by changing the command
//! line or the target; exit status 2) and runtime failures (the device or the kernel said
//! no while running; exit status 1). Every message is one line that names the problem and,
//! where there is one, the fix. Nothing here prints.

use std::io;

/// Everything that can go wrong in iomark's library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A mistake in the input: an option value, a target that cannot be used as given.
    #[error("{0}")]
    Input(String),
    /// A failure while running: an I/O error, a refused system call.
    #[error("{0}")]
    Runtime(String),
}

impl Error {
    /// Builds an input error.
    pub fn input(msg: impl Into<String>) -> Self {
        Error::Input(msg.into())
    }

    /// Builds a runtime error from an I/O error and what was being done.
    pub fn io(what: impl std::fmt::Display, err: &io::Error) -> Self {
        Error::Runtime(format!("{what}: {}", describe_io(err)))
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) => ExitCode::BadInput as i32,
            Error::Runtime(_) => ExitCode::Failure as i32,
        }
    }
}

/// Exit statuses of the `iomark` binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    Success = 0,
    Failure = 1,
    BadInput = 2,
    Interrupted = 130,
    Terminated = 143,
}

/// The errno's meaning without Rust's "(os error N)" suffix, lower-cased like strerror.
pub fn describe_io(err: &io::Error) -> String {
    let s = err.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

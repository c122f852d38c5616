//! The library's error type and its mapping to exit codes.
//!
//! Each variant is a cause a caller (or a test) can match: a wrong option ([`Error::Usage`]),
//! a target that cannot be used as given ([`Error::Target`]), a refusal to destroy data
//! ([`Error::Guard`]), an input document that is not what was expected
//! ([`Error::Document`]), a failed I/O call ([`Error::Io`], which keeps the
//! [`std::io::Error`] as its source), a job slower than its minimum rate
//! ([`Error::RateMin`]) and any other failure while running ([`Error::Runtime`]). The
//! first four are the user's to fix (exit status 2), the others happened while running
//! (exit status 1); [`Error::exit_code`] is the one mapping.
//! Every message is one line that names the problem and, where there is one, the fix.
//! Nothing here prints.

use std::io;

/// Everything that can go wrong in iomark's library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An option or value that cannot be used: out of range, contradicting another, unknown.
    #[error("{0}")]
    Usage(String),
    /// A target that cannot be used as given: missing, a directory, not permitted,
    /// read-only, misaligned, too small.
    #[error("{0}")]
    Target(String),
    /// The guard refused to write: the target is in use, holds data, or is not iomark's.
    #[error("{0}")]
    Guard(String),
    /// An input document (results, fio output, matrix, verify state, a study to resume)
    /// that cannot be read or is not what was expected.
    #[error("{0}")]
    Document(String),
    /// An I/O call that failed while running, with what was being done.
    #[error("{what}: {}", describe_io(source))]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    /// Any other failure while running: a lost worker thread, data read back wrong, a
    /// device that ended early.
    #[error("{0}")]
    Runtime(String),
    /// A job's rate fell below its minimum (`--rate-min`, `--rate-iops-min`) over a
    /// cycle: the run failed.
    #[error("{0}")]
    RateMin(String),
    /// Standard output could not be written: full, or a pipe whose reader has gone.
    #[error("cannot write to standard output: {}", describe_io(.0))]
    Stdout(#[source] io::Error),
}

impl Error {
    /// A wrong option or value.
    pub(crate) fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    /// A target that cannot be used as given.
    pub(crate) fn target(msg: impl Into<String>) -> Self {
        Error::Target(msg.into())
    }

    /// A refusal by the guard.
    pub fn guard(msg: impl Into<String>) -> Self {
        Error::Guard(msg.into())
    }

    /// An input document that cannot be read or is not what was expected.
    pub(crate) fn document(msg: impl Into<String>) -> Self {
        Error::Document(msg.into())
    }

    /// Any other failure while running.
    pub fn runtime(msg: impl Into<String>) -> Self {
        Error::Runtime(msg.into())
    }

    /// Whether this is a job's rate below its minimum (the run is marked failed).
    pub(crate) fn is_rate_min(&self) -> bool {
        matches!(self, Error::RateMin(_))
    }

    /// A failed I/O call and what was being done. The error is rebuilt from its errno (or
    /// kind and text) so callers can keep theirs.
    pub fn io(what: impl std::fmt::Display, err: &io::Error) -> Self {
        let source = match err.raw_os_error() {
            Some(code) => io::Error::from_raw_os_error(code),
            None => io::Error::new(err.kind(), err.to_string()),
        };
        Error::Io {
            what: what.to_string(),
            source,
        }
    }

    /// The errno of an I/O failure, if this is one.
    pub fn errno(&self) -> Option<i32> {
        match self {
            Error::Io { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// Whether the user can fix this by changing the command line, the target or a file.
    pub(crate) fn is_users(&self) -> bool {
        matches!(
            self,
            Error::Usage(_) | Error::Target(_) | Error::Guard(_) | Error::Document(_)
        )
    }

    /// Whether this is standard output closed by its reader (`iomark … | head`): the
    /// process ends quietly, as a tool killed by SIGPIPE would.
    pub fn is_closed_pipe(&self) -> bool {
        matches!(self, Error::Stdout(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        if self.is_closed_pipe() {
            ExitCode::ClosedPipe as i32
        } else if self.is_users() {
            ExitCode::BadInput as i32
        } else {
            ExitCode::Failure as i32
        }
    }
}

/// Exit statuses of the `iomark` binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    Success = 0,
    Failure = 1,
    BadInput = 2,
    /// 128 + SIGPIPE: standard output's reader went away.
    ClosedPipe = 141,
    Interrupted = 130,
    Terminated = 143,
}

/// The errno's meaning without Rust's "(os error N)" suffix, lower-cased like strerror.
pub(crate) fn describe_io(err: &io::Error) -> String {
    let s = err.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_mistakes_exit_2_and_failures_exit_1() {
        for e in [
            Error::usage("u"),
            Error::target("t"),
            Error::guard("g"),
            Error::document("d"),
        ] {
            assert_eq!(e.exit_code(), 2, "{e:?}");
        }
        let io = Error::io("reading x", &io::Error::from_raw_os_error(5));
        assert_eq!(io.exit_code(), 1);
        assert_eq!(Error::runtime("r").exit_code(), 1);
        assert_eq!(io.errno(), Some(5));
        assert_eq!(io.to_string(), "reading x: Input/output error");
        assert!(std::error::Error::source(&io).is_some());
        let pipe = Error::Stdout(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(pipe.is_closed_pipe());
        assert_eq!(pipe.exit_code(), 141);
        let full = Error::Stdout(io::Error::from_raw_os_error(28));
        assert!(!full.is_closed_pipe());
        assert_eq!(full.exit_code(), 1);
    }
}

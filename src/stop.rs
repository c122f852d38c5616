//! Stopping: the flag a signal handler (or a sink, or a failing worker's caller) raises,
//! read by every loop that may run long. Nothing here installs handlers; the binary does.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Why a run stops early: set from a signal handler (the signal number) or by the caller.
/// Clones share the same flag.
#[derive(Debug, Default, Clone)]
pub struct StopFlag(Arc<AtomicUsize>);

/// The value `raise` stores when no signal is involved (a sink asked to stop).
pub const STOP_REQUESTED: usize = usize::MAX;

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag::default()
    }
    /// The shared cell a signal handler stores the signal number into.
    pub fn cell(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.0)
    }
    /// The signal that asked us to stop, 0 if none ([`STOP_REQUESTED`] if no signal).
    pub fn signal(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
    pub(crate) fn is_set(&self) -> bool {
        self.signal() != 0
    }
    /// Asks the run to stop as if `sig` had arrived.
    pub(crate) fn raise(&self, sig: usize) {
        self.0.store(sig, Ordering::Relaxed);
    }
    /// Sleeps `secs`, waking early when asked to stop.
    pub(crate) fn pause(&self, secs: f64) {
        let end = Instant::now() + Duration::from_secs_f64(secs.max(0.0));
        while Instant::now() < end && !self.is_set() {
            std::thread::sleep(Duration::from_millis(50).min(end - Instant::now()));
        }
    }
    /// The name of the signal that stopped the run, for messages.
    pub(crate) fn signal_name(&self) -> &'static str {
        match self.signal() as i32 {
            2 => "SIGINT",
            15 => "SIGTERM",
            1 => "SIGHUP",
            _ if self.signal() == STOP_REQUESTED => "request",
            _ => "signal",
        }
    }
}

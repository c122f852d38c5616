//! Stopping: the flag a signal handler (or a sink, or a failing worker's caller) raises,
//! read by every loop that may run long. A command that starts I/O arms it
//! ([`StopFlag::arm`]): Ctrl-C, SIGTERM and SIGHUP then raise it.

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
    /// Ctrl-C, SIGTERM and SIGHUP raise this flag; a second one ends the process at once,
    /// after `last_words` (which removes a file iomark is still making). Signals within
    /// [`TOGETHER`] of the first are the same request: `timeout` sends its signal to the
    /// process and again to its process group, and the second ended iomark at once,
    /// without a word, losing the run it was measuring. Installed once per process, by the
    /// command that starts I/O; arming again does nothing.
    pub fn arm(&self, last_words: fn()) -> std::io::Result<()> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        static ARMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if ARMED.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
        let cell = Arc::clone(&self.0); // the first signal asks every loop to stop
        std::thread::spawn(move || {
            let mut first: Option<Instant> = None;
            for sig in signals.forever() {
                match first {
                    None => {
                        first = Some(Instant::now());
                        cell.store(sig as usize, Ordering::Relaxed);
                    }
                    Some(at) if at.elapsed() < TOGETHER => {}
                    Some(_) => {
                        eprintln!(
                            "iomark: stopped at once by a second signal ({}); the run under way is not saved",
                            name_of(sig as usize)
                        );
                        last_words();
                        std::process::exit(128 + sig);
                    }
                }
            }
        });
        Ok(())
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
        name_of(self.signal())
    }
}

/// Signals this close to the first are the same request to stop (a person's second
/// Ctrl-C comes later).
pub const TOGETHER: Duration = Duration::from_millis(100);

fn name_of(sig: usize) -> &'static str {
    match sig {
        2 => "SIGINT",
        15 => "SIGTERM",
        1 => "SIGHUP",
        STOP_REQUESTED => "request",
        _ => "signal",
    }
}

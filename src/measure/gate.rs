//! The starting gate: workers set up their engines (ring setup and buffer registration
//! can take a while), report ready, and wait; the main thread takes its "before"
//! snapshots, fixes time zero and opens the gate. Setup is thus never inside the measured
//! window.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

#[derive(Debug, Default)]
struct State {
    /// Workers that have arrived.
    ready: usize,
    /// Time zero, once the gate is open.
    start: Option<Instant>,
    /// The run was called off before it started.
    called_off: bool,
}

/// See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    state: Mutex<State>,
    cv: Condvar,
}

impl Gate {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked while holding the lock left consistent state behind
        // (every update is one assignment), so poisoning is ignored.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reports ready and waits; `None` when the run was called off.
    pub(crate) fn arrive_and_wait(&self) -> Option<Instant> {
        let mut g = self.lock();
        g.ready += 1;
        self.cv.notify_all();
        while g.start.is_none() && !g.called_off {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.start
    }

    /// Waits until `n` workers have arrived.
    pub(crate) fn wait_ready(&self, n: usize) {
        let mut g = self.lock();
        while g.ready < n {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Lets every worker go, with `t0` as time zero.
    pub(crate) fn open(&self, t0: Instant) {
        self.lock().start = Some(t0);
        self.cv.notify_all();
    }

    /// Sends every worker home without measuring.
    pub(crate) fn call_off(&self) {
        self.lock().called_off = true;
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_wait_for_the_gate_and_get_time_zero() {
        let gate = Gate::default();
        let t0 = Instant::now();
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..3).map(|_| s.spawn(|| gate.arrive_and_wait())).collect();
            gate.wait_ready(3);
            gate.open(t0);
            for h in hs {
                assert_eq!(h.join().unwrap(), Some(t0));
            }
        });
    }

    #[test]
    fn a_called_off_gate_sends_workers_home() {
        let gate = Gate::default();
        std::thread::scope(|s| {
            let h = s.spawn(|| gate.arrive_and_wait());
            gate.wait_ready(1);
            gate.call_off();
            assert_eq!(h.join().unwrap(), None);
        });
    }
}

//! The main thread's clock while a repetition's workers run: when the ramp ends, when
//! the time-based window is over, the progress reported a few times a second, and the
//! jobs' minimum rates (`min_rate`).

use std::time::{Duration, Instant};

use crate::error::Error;
use crate::measure::interval::{Live, LiveTotals};
use crate::measure::min_rate::MinRates;
use crate::measure::rep::Window;
use crate::results::sink::Progress;

/// The main thread's clock while workers run: when the ramp ends, and when to report
/// progress.
pub(crate) struct Monitor {
    pub(crate) t0: Instant,
    win: Window,
    total_ios: Option<u64>,
    ramp_snapped: bool,
    /// When progress was last reported, and the live totals then.
    last_at: Instant,
    last: LiveTotals,
    /// When the main thread first saw the stop (signal, halt or the window's end).
    stop_seen: Option<Instant>,
    /// `--rate-min`, `--rate-iops-min`.
    mins: Option<MinRates>,
}

pub(crate) const TICK: Duration = Duration::from_millis(250);

impl Monitor {
    pub(crate) fn new(t0: Instant, win: Window, total_ios: Option<u64>) -> Monitor {
        Monitor {
            t0,
            win,
            total_ios,
            ramp_snapped: win.ramp_ns == 0,
            last_at: Instant::now(),
            last: LiveTotals::default(),
            stop_seen: None,
            mins: None,
        }
    }

    /// Checks the jobs' minimum rates too.
    pub(crate) fn with_min_rates(mut self, mins: MinRates) -> Monitor {
        self.mins = Some(mins);
        self
    }

    /// A job below its minimum rate over the cycle just ended (its lane, and the error
    /// that fails the run); none once the run is stopping.
    pub(crate) fn rate_failure(&mut self, live: &[Live]) -> Option<(usize, Error)> {
        if self.stop_seen.is_some() {
            return None;
        }
        let now = self.t0.elapsed().as_nanos() as u64;
        let ramped = self.ramp_snapped;
        self.mins.as_mut()?.check(live, now, ramped)
    }

    /// Whether a time-based window has ended (the workers stop issuing then).
    pub(crate) fn window_over(&self) -> bool {
        self.win
            .end_ns
            .is_some_and(|end| self.t0.elapsed().as_nanos() as u64 >= end)
    }

    /// The run has been asked to stop, or its time is up; the workers are on their way
    /// out.
    pub(crate) fn stopping(&mut self) {
        self.stop_seen.get_or_insert_with(Instant::now);
    }

    /// Seconds since the stop was seen, if it was.
    pub(crate) fn stop_wait_s(&self) -> Option<f64> {
        self.stop_seen.map(|t| t.elapsed().as_secs_f64())
    }

    /// How long to wait for the next interval message.
    pub(crate) fn wait(&self) -> Duration {
        if self.ramp_snapped {
            // A minimum rate's cycle shorter than a tick is checked when it ends (a
            // 100 ms --rate-cycle was checked over 0.25 s).
            let due = (self.mins.as_ref())
                .filter(|_| self.stop_seen.is_none())
                .and_then(MinRates::next_due_ns);
            let now = self.t0.elapsed().as_nanos() as u64;
            return due.map_or(TICK, |d| {
                Duration::from_nanos(d.saturating_sub(now)).min(TICK)
            });
        }
        let elapsed = self.t0.elapsed().as_nanos() as u64;
        Duration::from_nanos(self.win.ramp_ns.saturating_sub(elapsed)).min(TICK)
    }

    /// True once, when the ramp has just ended.
    pub(crate) fn ramp_ended(&mut self) -> bool {
        if !self.ramp_snapped && self.t0.elapsed().as_nanos() as u64 >= self.win.ramp_ns {
            self.ramp_snapped = true;
            return true;
        }
        false
    }

    /// The progress to report, when a tick has passed.
    pub(crate) fn tick(&mut self, live: &[Live]) -> Option<Progress> {
        if self.last_at.elapsed() < TICK {
            return None;
        }
        let now = Live::sum(live);
        let dt = self.last_at.elapsed().as_secs_f64().max(1e-9);
        let dios = now.ios.saturating_sub(self.last.ios);
        let p = Progress {
            elapsed_s: self.t0.elapsed().as_secs_f64(),
            planned_s: self.win.end_ns.map(|e| e as f64 / 1e9),
            fraction: self.total_ios.map(|t| now.ios as f64 / t as f64),
            iops: dios as f64 / dt,
            bw_bytes: now.bytes.saturating_sub(self.last.bytes) as f64 / dt,
            lat_mean_ns: if dios > 0 {
                now.lat_ns.wrapping_sub(self.last.lat_ns) as f64 / dios as f64
            } else {
                0.0
            },
            ramping: !self.ramp_snapped,
            stopping_s: self.stop_wait_s(),
        };
        self.last_at = Instant::now();
        self.last = now;
        Some(p)
    }
}

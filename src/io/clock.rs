//! The workers' clock: nanoseconds since a run's time zero, read twice per I/O. Where the
//! kernel itself keeps time with the CPU's time-stamp counter (clocksource `tsc`: the
//! kernel found it invariant and synchronised across CPUs), the counter is read directly
//! (`rdtsc`, about a third of what `clock_gettime` costs through the vDSO on this
//! machine) and scaled by a factor measured once per process against `CLOCK_MONOTONIC`;
//! elsewhere `Instant`. Either way the readings are on the `Instant` time line of `t0`,
//! which the main thread uses for ramps, ends and intervals.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the counter is compared with the monotonic clock to find its rate: the
/// rate's error is about 100 ns / this, a few parts per million (microseconds a minute).
const CALIBRATION: Duration = Duration::from_millis(20);

/// Nanoseconds per counter tick as a 32.32 fixed-point number, measured once; `None`
/// where the counter is not the kernel's clock.
static NS_PER_TICK_Q32: OnceLock<Option<u64>> = OnceLock::new();

/// A clock anchored at `t0`; see the module documentation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    t0: Instant,
    /// With the counter: a reading, the nanoseconds since `t0` it stands for, and the rate.
    tsc: Option<(u64, u64, u64)>,
}

impl Clock {
    /// A clock reading nanoseconds since `t0`.
    pub(crate) fn new(t0: Instant) -> Clock {
        let tsc = ns_per_tick_q32().map(|rate| {
            let (at, ns) = paired(t0);
            (at, ns, rate)
        });
        Clock { t0, tsc }
    }

    /// Measures the counter's rate now, if not yet done (20 ms, once per process): call
    /// before time zero, so that the first `new` costs nothing in the measured window.
    pub(crate) fn prepare() {
        ns_per_tick_q32();
    }

    /// Whether the counter is read directly.
    #[cfg(test)]
    pub(crate) fn uses_tsc(&self) -> bool {
        self.tsc.is_some()
    }

    /// Nanoseconds since `t0`.
    #[inline(always)]
    pub(crate) fn now_ns(&self) -> u64 {
        match self.tsc {
            Some((at, ns, rate)) => {
                // Saturating: on another CPU the counter may read a few ticks behind the
                // anchor (its middle), and a wrapped difference would be centuries ahead.
                let ticks = read_tsc().saturating_sub(at);
                ns + ((ticks as u128 * rate as u128) >> 32) as u64
            }
            None => self.t0.elapsed().as_nanos() as u64,
        }
    }
}

/// The counter's rate, measured on first use (`CALIBRATION` long, once per process).
fn ns_per_tick_q32() -> Option<u64> {
    *NS_PER_TICK_Q32.get_or_init(|| {
        if !cfg!(target_arch = "x86_64") || !kernel_keeps_time_with_tsc() {
            return None;
        }
        let origin = Instant::now();
        let (c0, n0) = paired(origin);
        while origin.elapsed() < CALIBRATION {
            std::hint::spin_loop();
        }
        let (c1, n1) = paired(origin);
        let ticks = c1.checked_sub(c0).filter(|&t| t > 0)?;
        let q32 = ((n1 - n0) as u128 * (1u128 << 32) / ticks as u128) as u64;
        Some(q32).filter(|&r| r > 0)
    })
}

/// A counter reading and the `Instant` nanoseconds since `t0` at the same moment: the
/// counter read on both sides of the clock and the middle taken, from the tightest of 32
/// tries (a thread preempted between the readings would pair them milliseconds apart,
/// and a rate measured from such a pair over 20 ms would be off by as many percent).
fn paired(t0: Instant) -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..32 {
        let a = read_tsc();
        let ns = t0.elapsed().as_nanos() as u64;
        let b = read_tsc();
        let width = b.wrapping_sub(a);
        if width < best.0 {
            best = (width, a + width / 2, ns);
        }
    }
    (best.1, best.2)
}

/// Whether the kernel's clocksource is the time-stamp counter.
fn kernel_keeps_time_with_tsc() -> bool {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .is_ok_and(|s| s.trim() == "tsc")
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn read_tsc() -> u64 {
    // SAFETY: `rdtsc` reads a counter and has no other effect; every x86_64 CPU has it.
    unsafe { std::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn read_tsc() -> u64 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_follows_the_monotonic_clock() {
        // Over 200 ms of sleeping and spinning, the clock and `Instant` agree within
        // 0.1% (a wrong rate or anchor would be off by far more), and it never goes back.
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_millis(5));
        let c = Clock::new(t0);
        let mut last = c.now_ns();
        let mut worst = 0f64;
        for i in 0..40 {
            if i % 2 == 0 {
                std::thread::sleep(Duration::from_millis(5));
            } else {
                let s = Instant::now();
                while s.elapsed() < Duration::from_millis(5) {
                    let n = c.now_ns();
                    assert!(n >= last, "went back: {n} after {last}");
                    last = n;
                }
            }
            // The reading is bracketed by two of `Instant`'s: a thread preempted between
            // two readings (a loaded machine) widens the bracket rather than failing.
            let before = t0.elapsed().as_nanos() as f64;
            let got = c.now_ns() as f64;
            let after = t0.elapsed().as_nanos() as f64;
            let outside = (before - got).max(got - after).max(0.0);
            worst = worst.max(outside / before);
        }
        eprintln!("tsc: {}, worst relative error {worst:.2e}", c.uses_tsc());
        assert!(worst < 1e-3, "off by {worst:.2e}");
        assert_eq!(
            c.uses_tsc(),
            cfg!(target_arch = "x86_64") && kernel_keeps_time_with_tsc()
        );
    }
}

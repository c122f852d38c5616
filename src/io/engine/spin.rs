//! A short spin before a wait for completions, where recent waits ended that soon.
//!
//! A job thread that sleeps until its next completion is woken by whoever completes the
//! request: io_uring's io-wq worker (zram's reads), the loop device's worker. On a machine
//! of few CPUs that worker is what limits the IOPS, and each wakeup costs it a few
//! microseconds (on a guest, an inter-processor interrupt is a VM exit). With deferred task
//! work every completion from io-wq wakes a waiting thread, whatever it waits for, so
//! waiting for more (`--batch-complete`) does not spare those wakeups. A job thread that
//! spends less CPU per I/O than fio's is idle more often and sleeps more (zram, 4 KiB
//! random reads at QD 32: 45-60k sleeps a second against fio's 17-27k, and 0.85-0.93x
//! fio's IOPS with its io-wq worker busy 0.99 of the time in both).
//!
//! So the engine first watches its completion ring for a moment (`--spin-wait`, by default
//! `plan::engine::SPIN_WAIT_NS`, 1.5 µs, where the jobs leave a CPU free; 0 turns it
//! off), reading
//! shared memory only, and sleeps only if nothing came. The spin is CPU time of the job
//! thread and is counted as such. Like an adaptive mutex, it is given up where it does not
//! pay: a spin that ends with nothing costs its whole length (a device whose completions
//! take a hundred microseconds), so after such spins the engine sleeps at once and tries
//! a spin again only now and then ([`Spin`]).

/// Whether to spin before the next wait, from how the recent spins ended, and the spin
/// itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spin {
    /// Recent spins that found a completion, less twice those that did not, at most
    /// [`Spin::TRUST`]; below 0 the engine sleeps at once.
    score: i32,
    /// Waits slept at once since the last spin.
    skipped: u32,
    /// A spin's length, nanoseconds (`--spin-wait`, resolved).
    ns: u64,
    /// Spins made (for the engines' tests).
    #[cfg(test)]
    pub(crate) made: usize,
}

impl Spin {
    /// The most the score counts up to: after a run of spins that paid, this many
    /// failures in a row (halved) give spinning up.
    const TRUST: i32 = 8;
    /// Waits slept at once before a spin is tried again: at most 1 in this many waits
    /// pays for a spin that finds nothing.
    const RETRY: u32 = 64;

    /// The policy for spins of `ns` nanoseconds; `None` for 0 (no spin).
    pub(crate) fn new(ns: u32) -> Option<Spin> {
        (ns > 0).then_some(Spin {
            score: 0,
            skipped: 0,
            ns: ns as u64,
            #[cfg(test)]
            made: 0,
        })
    }

    /// Spins until `ready` says a completion came, for at most the spin's length, and
    /// keeps how it ended: whether one came. Call it when [`Spin::wanted`] said so.
    pub(crate) fn spin(&mut self, ready: impl FnMut() -> bool) -> bool {
        #[cfg(test)]
        {
            self.made += 1;
        }
        let found = watch(self.ns, ready);
        self.ended(found);
        found
    }

    /// Whether the coming wait spins first.
    #[inline]
    pub(crate) fn wanted(&mut self) -> bool {
        if self.score >= 0 {
            return true;
        }
        self.skipped += 1;
        if self.skipped >= Spin::RETRY {
            // Try again: the device may have changed pace.
            self.skipped = 0;
            self.score = 0;
            return true;
        }
        false
    }

    /// How the spin just made ended: a completion came within it, or not.
    #[inline]
    pub(crate) fn ended(&mut self, found: bool) {
        self.score = match found {
            true => (self.score + 1).min(Spin::TRUST),
            false => self.score - 2,
        };
    }
}

/// Watches `ready` for up to `ns` nanoseconds: true as soon as it says so, false if it
/// never did. The engines' `ready` reads shared memory only, no system call.
pub(crate) fn watch(ns: u64, mut ready: impl FnMut() -> bool) -> bool {
    let t0 = std::time::Instant::now();
    loop {
        if ready() {
            return true;
        }
        if t0.elapsed().as_nanos() as u64 >= ns {
            return false;
        }
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One wait: whether it spun, and if so, the spin ending with `found`.
    fn wait(s: &mut Spin, found: bool) -> bool {
        let spun = s.wanted();
        if spun {
            s.ended(found);
        }
        spun
    }

    /// Spins that find nothing are given up, and tried again 1 in `RETRY` waits; spins
    /// that pay go on; a device that slows down is noticed within a few spins.
    #[test]
    fn spins_that_find_nothing_are_given_up_and_retried_now_and_then() {
        // A device whose completions never come within a spin: of 6400 waits, at most
        // 1 in RETRY (and the first) spins.
        let mut s = Spin::new(1500).unwrap();
        let spun = (0..6400).filter(|_| wait(&mut s, false)).count();
        assert!(spun <= 6400 / Spin::RETRY as usize + 1, "{spun} spins");
        assert!(spun >= 6400 / Spin::RETRY as usize - 1, "{spun} spins");
        // One whose completions always come within it: every wait spins.
        let mut s = Spin::new(1500).unwrap();
        assert!((0..1000).all(|_| wait(&mut s, true)));
        // It slows down: after a run of spins that paid, spinning stops within
        // TRUST / 2 + 1 failures.
        let failures = (0..100).take_while(|_| wait(&mut s, false)).count();
        assert_eq!(failures, Spin::TRUST as usize / 2 + 1);
        // Mostly paying spins (3 in 4) keep spinning; mostly failing ones (1 in 4) stop.
        for (pays, keeps) in [(3, true), (1, false)] {
            let mut s = Spin::new(1500).unwrap();
            let spun = (0..4000).filter(|i| wait(&mut s, i % 4 < pays)).count();
            assert_eq!(spun > 3000, keeps, "{pays} in 4 pay: {spun} spins of 4000");
        }
    }
}

//! Pacing (`--rate`, `--rate-iops`, `--thinktime`): a token bucket on the run's clock per
//! job, and think time. An I/O
//! may be issued once the clock has reached the time its predecessors paid for; each
//! issued I/O moves that time on by its share of the cap (`1/iops` seconds, `len/rate`
//! seconds). The bucket holds at most 50 ms of credit (or the queue depth's worth), so a
//! job woken late catches up and one that fell behind a slow device catches up in a short
//! burst, not by flooding. A worker with nothing in
//! flight sleeps until its next I/O is due (at most 10 ms at a time, so it still sees a
//! stop); it never spins.
//!
//! Think time is fio's: the job issues up to its queue depth until `--thinktime-blocks`
//! I/Os (1 by default) have completed since the last pause (fio's default
//! `thinktime_blocks_type=complete`), then nothing more until every I/O in flight has
//! completed and `--thinktime` has passed since. With `--thinktime-blocks-type issue`
//! a batch is `--thinktime-blocks` I/Os issued and the pause starts as its last I/O is
//! issued (they complete during it); with `--thinktime-iotime` a batch also ends once
//! the job has issued I/Os for that long. The first `--thinktime-spin` of a pause is spent
//! spinning on the CPU (the clock read in a loop), the rest asleep but its last 100 µs,
//! which are spun too (as fio's sleeps end in a spin): a sleep overshoots, and a CPU
//! woken late from a long sleep slows the next I/O.

use std::time::{Duration, Instant};

use crate::measure::launch::WorkerCtx;
use crate::plan::spec::Spec;
use crate::workload::rng::Rng;

/// The least credit a bucket keeps (ns): a late wake-up up to this long is caught up.
const BURST_NS: f64 = 50e6;

/// The end of a think-time pause that is spun rather than slept.
const SPIN_TAIL_NS: u64 = 100_000;

/// The longest sleep before the worker looks at its stop flags again.
const MAX_SLEEP_NS: u64 = 10_000_000;

/// One cap: nanoseconds paid per unit (an I/O, or a byte ×2^16 for precision).
#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Clock time (ns since the worker's t0) up to which issued I/Os have paid.
    paid_ns: u64,
    /// ns per I/O, or ns per 2^16 bytes.
    cost: f64,
    per_byte: bool,
    /// Credit kept when idle: the clock may run this far ahead of `paid_ns`.
    burst_ns: u64,
}

impl Bucket {
    fn new(per_second: f64, per_byte: bool, unit: f64, qd: u32) -> Bucket {
        let cost = 1e9 / per_second;
        // Credit: the queue depth's worth, or 50 ms when that is more, so that a worker
        // the scheduler wakes late (a loaded machine: milliseconds) keeps its average
        // (2 ms of credit gave 692 IOPS for a cap of 1500 while the tests ran beside a build).
        let burst = (cost * unit * qd.max(2) as f64).max(BURST_NS) as u64;
        Bucket {
            paid_ns: 0,
            cost,
            per_byte,
            burst_ns: burst,
        }
    }

    fn due(&self) -> u64 {
        self.paid_ns
    }

    fn charge(&mut self, now: u64, len: u64) {
        let units = if self.per_byte { len as f64 } else { 1.0 };
        self.paid_ns = self.paid_ns.max(now.saturating_sub(self.burst_ns));
        self.paid_ns += (self.cost * units) as u64;
    }
}

/// Think time: a pause after every `blocks` I/Os (or `iotime_ns` of issuing), once they
/// have completed (or been issued: `on_issue`).
#[derive(Debug, Clone, Copy)]
struct Think {
    ns: u64,
    /// The first part of the pause, spun.
    spin_ns: u64,
    blocks: u32,
    on_issue: bool,
    /// The engine completes each I/O as it is issued (null, psync, mmap; fio's engines
    /// that return "completed" from their queue): a batch is counted in issues, and
    /// still pauses only once nothing is in flight.
    at_issue: bool,
    iotime_ns: Option<u64>,
    /// I/Os issued and completed since the last pause, and when the first was issued.
    issued: u32,
    completed: u32,
    /// Completion-type batches: `completed` when the batch ended. Those that complete
    /// after it (the ones in flight, while the job drains) count towards the next batch,
    /// as in fio.
    mark: Option<u32>,
    io_from: Option<u64>,
    /// When the current pause ends (set once the batch has completed, or been issued).
    until: Option<u64>,
}

impl Think {
    /// Whether batches are counted in completions (fio's default type, on an engine
    /// whose I/Os complete after they are issued); otherwise in issues.
    fn by_completion(&self) -> bool {
        !self.on_issue && !self.at_issue
    }

    /// Whether the batch is over at `now`: its I/Os completed (issued, for the issue
    /// type), or its time of I/O up.
    fn tripped(&self, now: u64) -> bool {
        let done = match self.by_completion() {
            true => self.mark.is_some(),
            false => self.issued >= self.blocks,
        };
        done || self.issued > 0
            && (self.iotime_ns).is_some_and(|io| now >= self.io_from.unwrap_or(now) + io)
    }

    /// The batch starts again (after a pause).
    fn reset(&mut self) {
        self.completed -= self.mark.unwrap_or(self.completed);
        (self.issued, self.mark, self.io_from, self.until) = (0, None, None, None);
    }

    /// A completion-type batch ends once `--thinktime-blocks` I/Os have completed and
    /// one was issued since the last pause (fio looks after each issue).
    fn note_end(&mut self) {
        if self.by_completion()
            && self.mark.is_none()
            && self.issued > 0
            && self.completed >= self.blocks
        {
            self.mark = Some(self.completed);
        }
    }
}

/// A job's pacing: both caps when both are given, and think time.
#[derive(Debug, Clone)]
pub(crate) struct Pace {
    buckets: Vec<Bucket>,
    think: Option<Think>,
}

impl Pace {
    /// The pacing of one job of `spec`, `None` without a cap. A queue depth emulated with
    /// jobs (`io_share`) shares the cap among them.
    pub(crate) fn of(spec: &Spec) -> Option<Pace> {
        let share = spec.io_share.max(1) as f64;
        let mut buckets = Vec::new();
        if let Some(iops) = spec.rate_iops {
            buckets.push(Bucket::new(iops as f64 / share, false, 1.0, spec.qd));
        }
        if let Some(bps) = spec.rate_bps {
            let mean = spec.mean_bs();
            buckets.push(Bucket::new(bps as f64 / share, true, mean, spec.qd));
        }
        // With --thinktime-iotime alone, the time of I/O ends a batch, not its count.
        let blocks = match (spec.thinktime_blocks, spec.thinktime_iotime_us) {
            (Some(b), _) => b.max(1),
            (None, Some(_)) => u32::MAX,
            (None, None) => 1,
        };
        let think = spec.thinktime_us.map(|us| Think {
            ns: us * 1000,
            spin_ns: spec.thinktime_spin_us.unwrap_or(0).min(us) * 1000,
            blocks,
            on_issue: spec.thinktime_on_issue,
            at_issue: !spec.engine.caps().asynchronous,
            iotime_ns: spec.thinktime_iotime_us.map(|us| us * 1000),
            issued: 0,
            completed: 0,
            mark: None,
            io_from: None,
            until: None,
        });
        (!buckets.is_empty() || think.is_some()).then_some(Pace { buckets, think })
    }

    /// When (ns since t0) the next I/O may be issued; at `now` or before: now.
    #[inline]
    pub(crate) fn due(&self) -> u64 {
        let think = self.think.and_then(|t| t.until).unwrap_or(0);
        self.buckets.iter().map(Bucket::due).fold(think, u64::max)
    }

    /// Whether the next I/O must wait at `now`: a cap is ahead, a pause is running, or a
    /// think-time batch is over (issued) and its pause has not ended.
    #[inline]
    pub(crate) fn holds(&self, now: u64) -> bool {
        self.due() > now || self.think.is_some_and(|t| !t.on_issue && t.tripped(now))
    }

    /// Pays for an I/O of `len` bytes issued at `now`.
    #[inline]
    pub(crate) fn charge(&mut self, now: u64, len: u64) {
        for b in &mut self.buckets {
            b.charge(now, len);
        }
        if let Some(t) = self.think.as_mut() {
            if t.on_issue && t.until.is_some_and(|u| u <= now) {
                t.reset();
            }
            t.issued += 1;
            t.note_end();
            t.io_from.get_or_insert(now);
            if t.on_issue && t.until.is_none() && t.tripped(now) {
                // The batch is issued: the pause runs from now, while it completes.
                t.until = Some(now + t.ns);
            }
        }
    }

    /// Whether think-time batches count completions on an asynchronous engine: the
    /// worker then refills the queue after each completion it takes, as fio does (it
    /// reaps one completion at a time and issues between them until the batch is
    /// over), rather than after all it reaped at once.
    pub(crate) fn counts_each_completion(&self) -> bool {
        self.think.is_some_and(|t| t.by_completion())
    }

    /// Counts an I/O completed (for think time's batches).
    #[inline]
    pub(crate) fn completed(&mut self) {
        if let Some(t) = self.think.as_mut() {
            t.completed += 1;
            t.note_end();
        }
    }

    /// Called with nothing in flight. When the next I/O must wait: sleeps until it is
    /// due, or 10 ms, or `end` (ns since `t0`), whichever is first, and returns true (the
    /// worker looks again); true at once when a think-time pause has just ended; false
    /// when nothing holds the next I/O.
    pub(crate) fn wait(&mut self, t0: Instant, end: Option<u64>) -> bool {
        let now = t0.elapsed().as_nanos() as u64;
        if let Some(t) = self.think.as_mut()
            && !t.on_issue
            && t.tripped(now)
        {
            // The batch has completed: the pause runs from now.
            if now >= *t.until.get_or_insert(now + t.ns) {
                t.reset();
                return true;
            }
        }
        if let Some(t) = self.think
            && let Some(until) = t.until
            && now < until
            && (now < until - t.ns + t.spin_ns || until - now <= SPIN_TAIL_NS)
        {
            // The pause's first part (--thinktime-spin) or its last moments: spin (for at
            // most 10 ms before looking again).
            let spin_end = match now < until - t.ns + t.spin_ns {
                true => (until - t.ns + t.spin_ns).min(now + MAX_SLEEP_NS),
                false => until,
            };
            while (t0.elapsed().as_nanos() as u64) < spin_end {
                std::hint::spin_loop();
            }
            return true;
        }
        if !self.holds(now) {
            return false;
        }
        let until = self.due().min(end.unwrap_or(u64::MAX));
        // A pause sleeps up to its last moments and spins those (as fio's sleeps do): a
        // sleep overshoots by tens of µs, and a CPU woken late from a long sleep slows
        // the next I/O.
        let tail = match self.think.is_some_and(|t| t.until == Some(until)) {
            true => SPIN_TAIL_NS,
            false => 0,
        };
        let ns = until.saturating_sub(now + tail).min(MAX_SLEEP_NS);
        std::thread::sleep(Duration::from_nanos(ns));
        true
    }
}

/// `--startdelay`: waits until that long after `t0` (the start gate) before the job's
/// first I/O, in steps of at most 10 ms so that `stopped` is honoured. With a range, the
/// job's own delay ([`job_delay_s`]).
pub(crate) fn start_delay(ctx: &WorkerCtx, t0: Instant, stopped: impl Fn() -> bool) {
    let until = (job_delay_s(ctx.spec, ctx.job, ctx.rep) * 1e9) as u64;
    loop {
        let now = t0.elapsed().as_nanos() as u64;
        if now >= until || stopped() {
            return;
        }
        std::thread::sleep(Duration::from_nanos((until - now).min(MAX_SLEEP_NS)));
    }
}

/// Job `job`'s delay in repetition `rep` (0-based): `--startdelay`, or with a range a
/// time drawn uniformly in it, from the run's seed (the same run draws the same delays).
pub(crate) fn job_delay_s(spec: &Spec, job: u32, rep: u32) -> f64 {
    let Some(hi) = spec.startdelay_max_s else {
        return spec.startdelay_s;
    };
    let mut rng = Rng::new(
        spec.seed ^ 0x57A2_7DE1,
        (u64::from(rep) << 32) | u64::from(job),
    );
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    spec.startdelay_s + u * (hi - spec.startdelay_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A range's delays: within it, spread over it, each job its own, the same again for
    /// the same seed.
    #[test]
    fn a_startdelay_range_gives_each_job_its_own_delay() {
        let mut spec = Spec::new("null");
        spec.startdelay_s = 1.0;
        spec.startdelay_max_s = Some(3.0);
        let d: Vec<f64> = (0..1000).map(|j| job_delay_s(&spec, j, 0)).collect();
        assert!(d.iter().all(|&x| (1.0..=3.0).contains(&x)));
        let mean = d.iter().sum::<f64>() / 1000.0;
        assert!((mean - 2.0).abs() < 0.1, "mean {mean}");
        let below = d.iter().filter(|&&x| x < 1.5).count();
        assert!(
            (200..300).contains(&below),
            "{below} of 1000 in the first quarter"
        );
        assert_ne!(job_delay_s(&spec, 0, 0), job_delay_s(&spec, 1, 0));
        assert_ne!(job_delay_s(&spec, 0, 0), job_delay_s(&spec, 0, 1));
        assert_eq!(job_delay_s(&spec, 5, 2), job_delay_s(&spec, 5, 2));
        spec.startdelay_max_s = None;
        assert_eq!(job_delay_s(&spec, 7, 0), 1.0);
    }

    /// A simulated clock: issuing whenever allowed, the bucket lets through the cap.
    #[test]
    fn the_bucket_lets_through_the_cap() {
        let mut spec = Spec::new("null");
        spec.rate_iops = Some(1000);
        spec.qd = 4;
        let mut p = Pace::of(&spec).unwrap();
        let (mut now, mut n) = (0u64, 0u64);
        while now < 2_000_000_000 {
            if p.holds(now) {
                now = p.due();
            } else {
                p.charge(now, 4096);
                n += 1;
            }
        }
        assert!((1999..=2001).contains(&n), "{n} I/Os in 2 s at 1000/s");
        // Bytes: 4 MiB/s of 64 KiB I/Os is 64 per second.
        spec.rate_iops = None;
        spec.rate_bps = Some(4 << 20);
        spec.bs = 65536;
        let mut p = Pace::of(&spec).unwrap();
        let (mut now, mut bytes) = (0u64, 0u64);
        while now < 1_000_000_000 {
            if p.holds(now) {
                now = p.due();
            } else {
                p.charge(now, 65536);
                bytes += 65536;
            }
        }
        assert!(bytes.abs_diff(4 << 20) <= 65536, "{bytes} bytes in 1 s");
    }

    /// Think time: a batch of `blocks` I/Os, then nothing until they completed and the
    /// pause passed (a simulated clock: completions at once).
    #[test]
    fn think_time_pauses_after_each_batch() {
        let mut spec = Spec::new("null");
        spec.thinktime_us = Some(100);
        spec.thinktime_blocks = Some(2);
        let mut p = Pace::of(&spec).unwrap();
        let t0 = Instant::now();
        let mut issued = 0;
        while t0.elapsed().as_millis() < 200 {
            while !p.holds(t0.elapsed().as_nanos() as u64) {
                p.charge(t0.elapsed().as_nanos() as u64, 4096);
                p.completed();
                issued += 1;
            }
            while p.wait(t0, None) && p.holds(t0.elapsed().as_nanos() as u64) {}
        }
        // 2 I/Os per 100 µs pause: at most 4000 in 200 ms (a sleep's overshoot, which a
        // loaded machine makes long, only lowers it).
        assert!((2..=4002).contains(&issued), "{issued} I/Os");
        assert_eq!(issued % 2, 0, "whole batches");
    }

    /// After a stall (a slow device) the credit is bounded: a burst of 50 ms worth of
    /// I/Os, not the whole stall's worth.
    #[test]
    fn credit_after_a_stall_is_bounded() {
        let mut spec = Spec::new("null");
        spec.rate_iops = Some(1000);
        let mut p = Pace::of(&spec).unwrap();
        p.charge(0, 4096);
        let now = 1_000_000_000; // a second later
        let mut burst = 0;
        while !p.holds(now) {
            p.charge(now, 4096);
            burst += 1;
        }
        // 50 ms at 1000 IOPS, plus the one the clock has reached.
        assert!((50..=51).contains(&burst), "{burst} I/Os at once");
    }

    /// Issue-type batches start the pause as their last I/O is issued; completion-type
    /// ones are counted in completions, and pause only once nothing is in flight
    /// (`wait`).
    #[test]
    fn issue_type_pauses_start_at_issue() {
        let mut spec = Spec::new("null");
        spec.thinktime_us = Some(1000);
        spec.thinktime_blocks = Some(2);
        // An engine whose I/Os complete as they are issued (psync): counted in issues.
        let mut p = Pace::of(&spec).unwrap();
        p.charge(0, 4096);
        p.charge(10, 4096);
        assert!(
            p.holds(20) && p.due() == 0,
            "psync: held after 2 issued, no pause yet"
        );
        // An asynchronous engine: counted in completions.
        spec.engine = crate::plan::spec::EngineKind::IoUring;
        let mut p = Pace::of(&spec).unwrap();
        p.charge(0, 4096);
        p.charge(10, 4096);
        p.charge(15, 4096);
        assert!(
            !p.holds(20),
            "complete: I/Os issued do not end a batch (fio's default)"
        );
        p.completed();
        assert!(!p.holds(20));
        p.completed();
        assert!(
            p.holds(20),
            "complete: held once the batch's I/Os have completed"
        );
        assert_eq!(
            p.due(),
            0,
            "but no pause yet: it starts when every I/O in flight has completed"
        );
        spec.thinktime_on_issue = true;
        let mut p = Pace::of(&spec).unwrap();
        p.charge(0, 4096);
        assert!(!p.holds(5));
        p.charge(10, 4096);
        assert_eq!(
            p.due(),
            1_000_010,
            "issue: the pause runs from the last issue"
        );
        assert!(p.holds(500_000) && !p.holds(1_000_010));
        p.charge(1_000_020, 4096);
        assert!(!p.holds(1_000_030), "a new batch");
    }

    /// Completion-type batches, as fio counts them: the I/Os that complete while the job
    /// drains after a batch ended count towards the next one, so with more in flight
    /// than the batch the next pause comes after a single issue.
    #[test]
    fn completions_while_draining_count_towards_the_next_batch() {
        let mut spec = Spec::new("null");
        spec.engine = crate::plan::spec::EngineKind::Libaio;
        spec.thinktime_us = Some(1);
        spec.thinktime_blocks = Some(2);
        let mut p = Pace::of(&spec).unwrap();
        let t0 = Instant::now();
        (0..4).for_each(|i| p.charge(i, 4096));
        p.completed();
        assert!(!p.holds(10));
        p.completed();
        assert!(p.holds(10), "2 completed: the batch is over");
        p.completed();
        p.completed();
        // Drained: the pause (1 µs), then the next batch.
        while p.wait(t0, None) && p.holds(t0.elapsed().as_nanos() as u64) {}
        let now = t0.elapsed().as_nanos() as u64;
        assert!(!p.holds(now), "nothing issued yet: not over");
        p.charge(now, 4096);
        assert!(p.holds(now), "the 2 drained count: over after one issue");
    }

    /// `--thinktime-iotime` alone: a batch ends after that much time of issuing, however
    /// many I/Os; with `--thinktime-blocks`, whichever comes first.
    #[test]
    fn iotime_ends_a_batch_by_time() {
        let mut spec = Spec::new("null");
        spec.thinktime_us = Some(100);
        spec.thinktime_iotime_us = Some(1000);
        let mut p = Pace::of(&spec).unwrap();
        for i in 0..100 {
            p.charge(i * 5_000, 4096);
        }
        assert!(!p.holds(499_999), "100 I/Os in 0.5 ms: still the batch");
        assert!(
            p.holds(1_000_000),
            "1 ms after its first I/O the batch is over"
        );
        spec.thinktime_blocks = Some(3);
        let mut p = Pace::of(&spec).unwrap();
        (0..3).for_each(|i| p.charge(i, 4096));
        assert!(p.holds(10), "3 blocks first");
    }

    /// The first `--thinktime-spin` of the pause is spun: the thread's CPU time over the
    /// pause's wall time, against a pause spent asleep (ratios, not times: a loaded
    /// machine takes the CPU away from a spinning thread, never gives it more).
    #[test]
    fn the_spun_part_of_a_pause_uses_the_cpu() {
        let share = |spin_us: Option<u64>| {
            let mut spec = Spec::new("null");
            spec.thinktime_us = Some(100_000);
            spec.thinktime_spin_us = spin_us;
            let mut p = Pace::of(&spec).unwrap();
            let t0 = Instant::now();
            let c0 = crate::io::env::CpuTimes::thread();
            p.charge(0, 4096);
            while p.wait(t0, None) {}
            let c = crate::io::env::CpuTimes::thread().since(c0);
            let wall = t0.elapsed().as_secs_f64();
            assert!(wall >= 0.1, "the whole pause: {wall}");
            (c.user_s + c.sys_s) / wall
        };
        let (spun, slept) = (share(Some(75_000)), share(None));
        // 0.75 on an idle CPU; other tests and processes on a shared machine take their
        // share of it, so the bound is loose and the comparison with sleeping is the test.
        assert!(
            spun > 0.1,
            "75 of 100 ms spun: {spun:.2} of the wall time on the CPU"
        );
        assert!(slept * 5.0 < spun, "asleep {slept:.3}, spinning {spun:.3}");
    }
}

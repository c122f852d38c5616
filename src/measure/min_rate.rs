//! `--rate-min` and `--rate-iops-min` (fio's `rate_min`, `rate_iops_min`): the main
//! thread checks every job's rate over each `--rate-cycle` (1 s by default), from the end
//! of the ramp, on the live counters the workers publish; a job below its minimum fails
//! the run. Each job is checked on its own (as fio checks each of its jobs), its reads and
//! writes together (as iomark's caps count them). A job that has returned (its work done)
//! is not checked, nor the last partial cycle. Nothing here stops a worker: the caller
//! halts the repetition.

use crate::error::Error;
use crate::measure::interval::{Live, LiveTotals};
use crate::plan::spec::Spec;

/// One lane's minimums and where its jobs' live counters are.
struct LaneMin {
    /// The lane's index.
    lane: usize,
    /// The first of the lane's jobs in the live counters, and how many.
    from: usize,
    jobs: usize,
    min_bps: Option<u64>,
    min_iops: Option<u64>,
    cycle_ns: u64,
    /// Where the current cycle began (ns since t0), and each job's totals then.
    at_ns: Option<u64>,
    last: Vec<LiveTotals>,
    path: String,
}

/// Every lane's minimum rates; empty when no lane has one.
pub(crate) struct MinRates {
    lanes: Vec<LaneMin>,
}

impl MinRates {
    /// The minimums of lanes `(spec, target path)`, whose jobs follow one another in the
    /// live counters.
    pub(crate) fn of<'a>(lanes: impl Iterator<Item = (&'a Spec, String)>) -> MinRates {
        let mut from = 0;
        let mut out = Vec::new();
        for (lane, (spec, path)) in lanes.enumerate() {
            let jobs = spec.jobs as usize;
            if spec.rate_min_bps.is_some() || spec.rate_iops_min.is_some() {
                out.push(LaneMin {
                    lane,
                    from,
                    jobs,
                    min_bps: spec.rate_min_bps,
                    min_iops: spec.rate_iops_min,
                    cycle_ns: spec.rate_cycle_ms.unwrap_or(1000) * 1_000_000,
                    at_ns: None,
                    last: vec![LiveTotals::default(); jobs],
                    path,
                });
            }
            from += jobs;
        }
        MinRates { lanes: out }
    }

    /// When the next cycle ends (ns since t0), if one has begun.
    pub(crate) fn next_due_ns(&self) -> Option<u64> {
        (self.lanes.iter())
            .filter_map(|l| l.at_ns.map(|at| at + l.cycle_ns))
            .min()
    }

    /// At `now_ns` (since t0; `ramped`: the ramp is over): the first job found below its
    /// minimum over the cycle just ended: its lane, and the error that fails the run.
    pub(crate) fn check(
        &mut self,
        live: &[Live],
        now_ns: u64,
        ramped: bool,
    ) -> Option<(usize, Error)> {
        if !ramped {
            return None;
        }
        for lane in &mut self.lanes {
            let jobs = &live[lane.from..lane.from + lane.jobs];
            let Some(at) = lane.at_ns else {
                lane.at_ns = Some(now_ns);
                lane.last = jobs.iter().map(Live::totals).collect();
                continue;
            };
            if now_ns < at + lane.cycle_ns {
                continue;
            }
            let secs = (now_ns - at) as f64 / 1e9;
            for (j, w) in jobs.iter().enumerate() {
                let now = w.totals();
                let was = std::mem::replace(&mut lane.last[j], now);
                if w.done.load(std::sync::atomic::Ordering::Relaxed) {
                    continue;
                }
                let iops = now.ios.saturating_sub(was.ios) as f64 / secs;
                let bps = now.bytes.saturating_sub(was.bytes) as f64 / secs;
                if let Some(e) = lane.below(j, iops, bps, secs) {
                    return Some((lane.lane, e));
                }
            }
            lane.at_ns = Some(now_ns);
        }
        None
    }
}

impl LaneMin {
    /// The error for job `j` at `iops` and `bps` over `secs`, if below a minimum.
    fn below(&self, j: usize, iops: f64, bps: f64, secs: f64) -> Option<Error> {
        let what = if let Some(m) = self.min_iops.filter(|m| iops < *m as f64) {
            format!("{iops:.0} IOPS, below --rate-iops-min {m}")
        } else if let Some(m) = self.min_bps.filter(|m| bps < *m as f64) {
            format!(
                "{}/s, below --rate-min {}/s",
                crate::units::fmt_size(bps as u64),
                crate::units::fmt_size(m)
            )
        } else {
            return None;
        };
        Some(Error::RateMin(format!(
            "job {j} on {} ran at {what} over the {secs:.2} s cycle (--rate-cycle); the run failed: lower the minimum, or find what slowed the job",
            self.path
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn publish(l: &Live, ios: u64, bytes: u64) {
        l.publish(LiveTotals {
            ios,
            bytes,
            lat_ns: 0,
        });
    }

    #[test]
    fn a_job_below_its_minimum_over_a_cycle_fails_and_a_finished_one_does_not() {
        let mut spec = Spec::new("t");
        spec.jobs = 2;
        spec.rate_iops_min = Some(100);
        spec.rate_cycle_ms = Some(500);
        let mut m = MinRates::of([(&spec, "dev".to_string())].into_iter());
        let live: Vec<Live> = (0..2).map(|_| Live::default()).collect();
        assert!(m.check(&live, 0, false).is_none(), "not during the ramp");
        assert!(
            m.check(&live, 1_000_000, true).is_none(),
            "the first cycle begins"
        );
        // 60 I/Os in 0.5 s is 120 IOPS for both: fine.
        publish(&live[0], 60, 0);
        publish(&live[1], 60, 0);
        assert!(m.check(&live, 400_000_000, true).is_none(), "mid-cycle");
        assert!(m.check(&live, 501_000_000, true).is_none());
        // Job 1 then does 40 in 0.5 s (80 IOPS): below 100.
        publish(&live[0], 120, 0);
        publish(&live[1], 100, 0);
        let (lane, e) = m.check(&live, 1_001_000_000, true).unwrap();
        assert_eq!(lane, 0);
        assert!(e.is_rate_min());
        let t = e.to_string();
        assert!(
            t.contains("job 1 on dev ran at 80 IOPS, below --rate-iops-min 100"),
            "{t}"
        );
        assert_eq!(e.exit_code(), 1);
        // A job that has returned is not held to the minimum.
        live[1]
            .done
            .store(true, std::sync::atomic::Ordering::Relaxed);
        publish(&live[0], 240, 0);
        assert!(m.check(&live, 1_501_000_000, true).is_none());
    }

    #[test]
    fn bytes_per_second_minimum() {
        let mut spec = Spec::new("t");
        spec.rate_min_bps = Some(1 << 20);
        let mut m = MinRates::of([(&spec, "f".to_string())].into_iter());
        let live = [Live::default()];
        m.check(&live, 0, true);
        publish(&live[0], 100, 512 << 10);
        let e = m.check(&live, 1_000_000_000, true).unwrap().1.to_string();
        assert!(e.contains("512 KiB/s, below --rate-min 1 MiB/s"), "{e}");
        // No minimum: nothing to check.
        let plain = Spec::new("t");
        assert!(
            MinRates::of([(&plain, "f".to_string())].into_iter())
                .lanes
                .is_empty()
        );
    }
}

//! The time series: each worker accumulates one interval at a time and sends it to the
//! main thread when the interval ends; the main thread sums the workers' intervals and,
//! after the repetition, turns them into the series of the results. Also the per-worker
//! live counters the progress display reads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use crate::measure::tally::Tally;
use crate::results::schema::Point;
use crate::results::stats::{Counter, LatHist, LatRecorder};

/// Per-worker progress counters, padded so two workers never share a cache line. Only
/// the worker writes them; the main thread reads them for the progress display.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Live {
    pub(crate) ios: AtomicU64,
    pub(crate) bytes: AtomicU64,
    pub(crate) lat_ns: AtomicU64,
    /// Set when the worker has returned (its work done, or stopped).
    pub(crate) done: std::sync::atomic::AtomicBool,
}

/// Running totals of counted I/Os: what a worker publishes through [`Live`], and what
/// the progress display last saw of them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LiveTotals {
    pub(crate) ios: u64,
    pub(crate) bytes: u64,
    /// Sum of latencies, nanoseconds; wraps (only differences are used).
    pub(crate) lat_ns: u64,
}

impl LiveTotals {
    /// Counts one I/O.
    #[inline(always)]
    pub(crate) fn add(&mut self, bytes: u64, lat_ns: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.lat_ns = self.lat_ns.wrapping_add(lat_ns);
    }
}

impl Live {
    /// Publishes a worker's totals.
    pub(crate) fn publish(&self, t: LiveTotals) {
        self.ios.store(t.ios, Ordering::Relaxed);
        self.bytes.store(t.bytes, Ordering::Relaxed);
        self.lat_ns.store(t.lat_ns, Ordering::Relaxed);
    }

    /// This worker's published totals.
    pub(crate) fn totals(&self) -> LiveTotals {
        LiveTotals {
            ios: self.ios.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            lat_ns: self.lat_ns.load(Ordering::Relaxed),
        }
    }

    /// The sum over every worker's published totals.
    pub(crate) fn sum(live: &[Live]) -> LiveTotals {
        live.iter().fold(LiveTotals::default(), |t, l| LiveTotals {
            ios: t.ios + l.ios.load(Ordering::Relaxed),
            bytes: t.bytes + l.bytes.load(Ordering::Relaxed),
            lat_ns: t.lat_ns.wrapping_add(l.lat_ns.load(Ordering::Relaxed)),
        })
    }
}

/// One interval's figures: what a worker sends, and what the main thread sums.
pub(crate) struct IntervalSum {
    pub(crate) read: Counter,
    pub(crate) write: Counter,
    pub(crate) trim: Counter,
    /// Sum of the latencies of the I/Os counted, nanoseconds.
    pub(crate) lat_sum_ns: u128,
    pub(crate) hist: LatHist,
}

impl Default for IntervalSum {
    fn default() -> Self {
        IntervalSum {
            read: Counter::default(),
            write: Counter::default(),
            trim: Counter::default(),
            lat_sum_ns: 0,
            hist: LatHist::coarse(),
        }
    }
}

impl IntervalSum {
    /// Adds another worker's figures for the same interval.
    pub(crate) fn add(&mut self, o: &IntervalSum) {
        self.read += o.read;
        self.write += o.write;
        self.trim += o.trim;
        self.lat_sum_ns += o.lat_sum_ns;
        self.hist += &o.hist;
    }
}

/// What a worker sends at the end of each interval.
pub(crate) struct IntervalMsg {
    /// The lane (one spec on one target) of the worker that sent it.
    pub(crate) lane: usize,
    /// Which interval (0 = the first after the ramp).
    pub(crate) idx: u64,
    pub(crate) sum: IntervalSum,
}

/// A worker's end of the interval channel, which says which lane it sends for.
pub(crate) struct LaneTx {
    pub(crate) lane: usize,
    pub(crate) tx: mpsc::Sender<IntervalMsg>,
}

impl LaneTx {
    /// The sender of a run with one lane.
    #[cfg(test)]
    pub(crate) fn one(tx: mpsc::Sender<IntervalMsg>) -> LaneTx {
        LaneTx { lane: 0, tx }
    }
}

/// The interval a worker is accumulating.
pub(crate) struct Interval {
    pub(crate) idx: u64,
    pub(crate) sum: IntervalSum,
    /// Where interval `idx` ends, in nanoseconds after the ramp: before then `roll` only
    /// compares (no division per completion).
    ends_ns: u64,
    /// The latencies of this interval's reads and writes, not yet in `sum.hist` and the
    /// worker's histograms (added when the interval is sent).
    pending: [LatRecorder; 2],
}

impl Interval {
    pub(crate) fn new() -> Interval {
        Interval {
            idx: 0,
            sum: IntervalSum::default(),
            ends_ns: 0,
            pending: [LatRecorder::new(), LatRecorder::new()],
        }
    }

    /// Counts the latency of a read or a write (see `pending`).
    #[inline(always)]
    pub(crate) fn record(&mut self, write: bool, ns: u64) {
        self.pending[write as usize].record(ns);
    }

    /// Moves to the interval (of `len_ns`) that `since_ramp_ns` falls in, sending the one
    /// accumulated so far when it is another.
    #[inline(always)]
    pub(crate) fn roll(&mut self, tx: &LaneTx, since_ramp_ns: u64, len_ns: u64, t: &mut Tally) {
        if since_ramp_ns < self.ends_ns {
            return;
        }
        let idx = since_ramp_ns / len_ns;
        self.ends_ns = (idx + 1).saturating_mul(len_ns);
        if idx != self.idx {
            self.flush(tx, idx, t);
        }
    }

    /// Sends the interval (if anything happened in it) and starts interval `next_idx`;
    /// the latencies counted in it go to the worker's histograms `t` too.
    pub(crate) fn flush(&mut self, tx: &LaneTx, next_idx: u64, t: &mut Tally) {
        let [reads, writes] = &mut self.pending;
        reads.drain_into(&mut t.hist_read, &mut self.sum.hist);
        writes.drain_into(&mut t.hist_write, &mut self.sum.hist);
        let sum = std::mem::take(&mut self.sum);
        if sum.read.ios + sum.write.ios + sum.trim.ios > 0 {
            let lane = tx.lane;
            let _ = tx.tx.send(IntervalMsg {
                lane,
                idx: self.idx,
                sum,
            });
        }
        self.idx = next_idx;
    }
}

/// Adds a worker's interval to the main thread's sums of its lane.
pub(crate) fn gather(lanes: &mut [Vec<IntervalSum>], m: IntervalMsg) {
    let Some(intervals) = lanes.get_mut(m.lane) else {
        return;
    };
    let i = m.idx as usize;
    if intervals.len() <= i {
        intervals.resize_with(i + 1, IntervalSum::default);
    }
    intervals[i].add(&m.sum);
}

/// The intervals of several lanes added up.
pub(crate) fn all_lanes<'a>(
    lanes: impl IntoIterator<Item = &'a Vec<IntervalSum>>,
) -> Vec<IntervalSum> {
    let mut all: Vec<IntervalSum> = Vec::new();
    for lane in lanes {
        if all.len() < lane.len() {
            all.resize_with(lane.len(), IntervalSum::default);
        }
        for (a, s) in all.iter_mut().zip(lane) {
            a.add(s);
        }
    }
    all
}

/// The series of a repetition: one point per interval of `interval_s`, the last one cut
/// at `elapsed_s`. Intervals in which nothing completed are points of zero up to the
/// window's end (the last when more than 1% of it lies within): a device that stalled for
/// the last second of a run showed a series that ended a second early.
pub(crate) fn series(intervals: &[IntervalSum], interval_s: f64, elapsed_s: f64) -> Vec<Point> {
    let covered = (elapsed_s / interval_s - 0.01).ceil().max(0.0) as usize;
    let none = IntervalSum::default();
    let n = intervals.len().max(covered);
    (0..n)
        .map(|i| (i, intervals.get(i).unwrap_or(&none)))
        .map(|(i, s)| {
            let start = i as f64 * interval_s;
            let end = ((i + 1) as f64 * interval_s).min(elapsed_s);
            let dt = (end - start).max(1e-9);
            let n = s.read.ios + s.write.ios + s.trim.ios;
            Point {
                t_s: end,
                read_iops: s.read.ios as f64 / dt,
                write_iops: s.write.ios as f64 / dt,
                read_bw_bytes: s.read.bytes as f64 / dt,
                write_bw_bytes: s.write.bytes as f64 / dt,
                trim_iops: s.trim.ios as f64 / dt,
                trim_bw_bytes: s.trim.bytes as f64 / dt,
                lat_mean_ns: if n > 0 {
                    s.lat_sum_ns as f64 / n as f64
                } else {
                    0.0
                },
                lat_p99_ns: s.hist.quantile(0.99),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_divides_by_the_interval_and_cuts_the_last() {
        let mut v = vec![Vec::new()];
        for (idx, ios) in [(0u64, 100u64), (1, 50), (0, 100)] {
            let mut sum = IntervalSum::default();
            sum.read.ios = ios;
            sum.read.bytes = ios * 4096;
            sum.lat_sum_ns = ios as u128 * 1000;
            sum.hist.record(1000);
            gather(&mut v, IntervalMsg { lane: 0, idx, sum });
        }
        let s = series(&all_lanes(&v), 1.0, 1.5);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].read_iops, 200.0);
        assert_eq!(s[1].t_s, 1.5);
        assert_eq!(s[1].read_iops, 100.0); // 50 I/Os in half a second
        assert_eq!(s[0].lat_mean_ns, 1000.0);
        // Nothing completed after the first second of two: points of zero to the end (the
        // series ended after the first), the last when half of it lies in the window.
        let first = &all_lanes(&v)[..1];
        let s = series(first, 0.5, 2.0);
        let iops: Vec<f64> = s.iter().map(|p| p.read_iops).collect();
        assert_eq!(iops, [400.0, 0.0, 0.0, 0.0]);
        assert_eq!(s[3].t_s, 2.0);
        assert_eq!(series(first, 0.5, 1.504).len(), 3);
        assert_eq!(series(first, 0.5, 1.51).len(), 4);
        // A window of 3.5 s in seconds, nothing in its last 1.5 s: its half second too.
        assert_eq!(series(first, 1.0, 3.4999).len(), 4);
        assert_eq!(series(first, 0.5, 2.0001).len(), 4);
    }

    #[test]
    fn roll_sends_each_interval_once_under_its_own_index() {
        // One I/O at each of these times (ns after the ramp, intervals of 1000 ns): two in
        // interval 0, one in 1, none in 2, two in 3 (one on its first nanosecond).
        let (tx, rx) = mpsc::channel();
        let tx = LaneTx::one(tx);
        let mut iv = Interval::new();
        let mut tally = Tally::new();
        for t in [0u64, 999, 1000, 3000, 3999] {
            iv.roll(&tx, t, 1000, &mut tally);
            iv.sum.read.ios += 1;
            iv.record(false, t + 1);
        }
        iv.flush(&tx, 0, &mut tally);
        let got: Vec<(u64, u64, u64)> = (rx.try_iter())
            .map(|m| (m.idx, m.sum.read.ios, m.sum.hist.quantile(1.0)))
            .collect();
        // Each interval's latencies in its own histogram, and all of them in the tally's.
        let top = |vals: &[u64]| {
            let mut h = LatHist::coarse();
            vals.iter().for_each(|&v| h.record(v));
            h.quantile(1.0)
        };
        let want = [
            (0, 2, top(&[1, 1000])),
            (1, 1, top(&[1001])),
            (3, 2, top(&[3001, 4000])),
        ];
        assert_eq!(got, want);
        assert_eq!(tally.hist_read.count(), 5);
        assert_eq!(tally.hist_read.quantile(0.0), 1);
    }
}

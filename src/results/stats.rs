//! Pure math over measurements: latency histograms, I/O counters, and summary statistics
//! across repetitions. Histograms and counters merge with `+=` (worker → run → host).
//! Nothing here does I/O, reads the clock or knows about engines.

use std::ops::AddAssign;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency the histograms track exactly: one hour. Longer values saturate.
const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;

/// A latency histogram in nanoseconds (HDR, `sigfig` significant decimal digits).
#[derive(Debug, Clone)]
pub struct LatHist {
    h: Histogram<u64>,
}

impl LatHist {
    /// Three significant digits: every percentile within 0.1% of the true value.
    pub(crate) fn precise() -> LatHist {
        Self::with_sigfig(3)
    }

    /// Two significant digits, for the per-interval series (1% resolution, 8× smaller).
    pub(crate) fn coarse() -> LatHist {
        Self::with_sigfig(2)
    }

    fn with_sigfig(sigfig: u8) -> LatHist {
        // The bounds are constants that hdrhistogram accepts, so this cannot fail.
        let h = Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, sigfig)
            .expect("constant histogram bounds are valid");
        LatHist { h }
    }

    /// Number of values recorded.
    #[cfg(test)]
    pub(crate) fn count(&self) -> u64 {
        self.h.len()
    }

    /// Records one latency; values beyond an hour are stored as an hour.
    #[inline(always)]
    pub(crate) fn record(&mut self, ns: u64) {
        self.h.saturating_record(ns.max(1));
    }

    /// The recorded buckets as (the bucket's highest value, count): what a histogram
    /// sent to another process carries. [`LatHist::from_buckets`] of them, at the same
    /// precision, holds exactly the same buckets, so merging them is exact.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn buckets(&self) -> Vec<(u64, u64)> {
        (self.h.iter_recorded())
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    /// A precise histogram holding `buckets` (see [`LatHist::buckets`]).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn from_buckets(buckets: &[(u64, u64)]) -> LatHist {
        let mut h = LatHist::precise();
        for &(v, n) in buckets {
            h.h.saturating_record_n(v.max(1), n);
        }
        h
    }

    /// The value at quantile `q` (0..=1); 0 when empty.
    pub(crate) fn quantile(&self, q: f64) -> u64 {
        if self.h.is_empty() {
            0
        } else {
            self.h.value_at_quantile(q)
        }
    }

    /// Summary figures in nanoseconds; all zero when empty.
    pub(crate) fn summary(&self) -> LatSummary {
        if self.h.is_empty() {
            return LatSummary::default();
        }
        LatSummary {
            min: self.h.min(),
            mean: self.h.mean(),
            stddev: self.h.stdev(),
            p50: self.quantile(0.50),
            p90: self.quantile(0.90),
            p99: self.quantile(0.99),
            p999: self.quantile(0.999),
            p9999: self.quantile(0.9999),
            max: self.h.max(),
        }
    }
}

impl AddAssign<&LatHist> for LatHist {
    fn add_assign(&mut self, other: &LatHist) {
        // Both histograms share the same bounds, and auto-resize is off, so adding can only
        // fail if a histogram of a different precision holds values the other cannot
        // represent exactly; the coarse value is then recorded at the nearest bucket.
        if self.h.add(&other.h).is_err() {
            for v in other.h.iter_recorded() {
                self.h
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
    }
}

/// Where a precise histogram (`LatHist::precise`: lowest value 1, three significant
/// digits) counts a value: hdrhistogram's layout of 2048 sub-buckets, the upper 1024 of
/// each power of two after the first.
const SUB_MASK: u64 = 2047;
const HALF_MAG: u32 = 10;

#[inline(always)]
fn precise_index(v: u64) -> usize {
    let bucket = 53 - (v | SUB_MASK).leading_zeros();
    let sub = (v >> bucket) as usize;
    ((bucket as usize + 1) << HALF_MAG) + sub - (1 << HALF_MAG)
}

/// The lowest value of the bucket at `index` (see [`precise_index`]).
fn precise_value(index: usize) -> u64 {
    let half = 1usize << HALF_MAG;
    match (index >> HALF_MAG).checked_sub(1) {
        Some(bucket) => (((index & (half - 1)) + half) as u64) << bucket,
        None => index as u64,
    }
}

/// A worker's latencies not yet added to its histograms: counts in the buckets of a
/// precise histogram, and nothing else, so that counting one I/O is an index and an
/// add (hdrhistogram also keeps the lowest, highest and total on every value, and a
/// worker counts each I/O in two histograms). [`LatRecorder::drain_into`] adds them to
/// both at once, exactly: every bucket here is a bucket of the precise histogram and
/// lies inside one bucket of the coarse one.
#[derive(Debug, Clone)]
pub(crate) struct LatRecorder {
    counts: Vec<u64>,
    /// The bucket of the highest value tracked (where longer latencies are counted).
    top: usize,
    /// Which stretches of 1024 buckets (one power of two each) were counted in since
    /// the last drain: one bit each, 33 of them.
    touched: u64,
}

impl LatRecorder {
    pub(crate) fn new() -> LatRecorder {
        let top = precise_index(MAX_TRACKABLE_NS);
        // hdrhistogram sizes its counts to whole powers of two past the highest value.
        let len = ((top >> HALF_MAG) + 1) << HALF_MAG;
        debug_assert!(len >> HALF_MAG <= 64, "one bit of `touched` per stretch");
        LatRecorder {
            counts: vec![0; len],
            top,
            touched: 0,
        }
    }

    /// Counts one latency as [`LatHist::record`] would.
    #[inline(always)]
    pub(crate) fn record(&mut self, ns: u64) {
        let mut i = precise_index(ns.max(1));
        if i >= self.counts.len() {
            i = self.top;
        }
        self.counts[i] += 1;
        self.touched |= 1 << (i >> HALF_MAG);
    }

    /// Adds what was counted since the last drain to `precise` and `coarse`, and
    /// starts again from nothing.
    pub(crate) fn drain_into(&mut self, precise: &mut LatHist, coarse: &mut LatHist) {
        while self.touched != 0 {
            let stretch = self.touched.trailing_zeros() as usize;
            self.touched &= self.touched - 1;
            let first = stretch << HALF_MAG;
            for (i, c) in self.counts[first..][..1 << HALF_MAG].iter_mut().enumerate() {
                let n = std::mem::take(c);
                if n > 0 {
                    let v = precise_value(first + i);
                    precise.h.saturating_record_n(v, n);
                    coarse.h.saturating_record_n(v, n);
                }
            }
        }
    }
}

/// Latency figures in nanoseconds, as in the results document's `lat_ns`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatSummary {
    pub min: u64,
    pub mean: f64,
    pub stddev: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub p9999: u64,
    pub max: u64,
}

/// Counts of completed I/Os and bytes in one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counter {
    pub ios: u64,
    pub bytes: u64,
}

impl AddAssign for Counter {
    fn add_assign(&mut self, o: Counter) {
        self.ios += o.ios;
        self.bytes += o.bytes;
    }
}

/// Mean, sample standard deviation, confidence interval, min and max of a set of values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (Bessel's n − 1); 0 for a single value.
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
    /// Number of values.
    pub n: usize,
    /// Half-width of the 95% confidence interval of the mean (Student's t): the mean is
    /// `mean ± ci95`. `null` for fewer than two values.
    #[serde(default)]
    pub ci95: Option<f64>,
    /// Coefficient of variation, stddev / mean, in percent; `null` for fewer than two
    /// values or a zero mean.
    #[serde(default)]
    pub cv_pct: Option<f64>,
}

impl Spread {
    /// The spread of the sum of two independent quantities (reads plus writes): means,
    /// minima and maxima add, variances add; no interval or CV is claimed for the sum.
    pub(crate) fn plus(&self, o: &Spread) -> Spread {
        Spread {
            mean: self.mean + o.mean,
            stddev: (self.stddev.powi(2) + o.stddev.powi(2)).sqrt(),
            min: self.min + o.min,
            max: self.max + o.max,
            n: self.n.max(o.n),
            ci95: None,
            cv_pct: None,
        }
    }
}

/// The two-sided 95% quantile of Student's t distribution with `df` degrees of freedom,
/// t(0.975, df) (`statrs`' inverse CDF); infinite for zero degrees of freedom.
pub(crate) fn t975(df: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    match StudentsT::new(0.0, 1.0, df as f64) {
        Ok(t) if df > 0 => t.inverse_cdf(0.975),
        _ => f64::INFINITY,
    }
}

impl Spread {
    /// Summarises `values`. The variance uses Welford's online algorithm (Welford 1962,
    /// "Note on a method for calculating corrected sums of squares and products";
    /// Knuth, TAOCP vol. 2, 4.2.2), which stays accurate when the values are large and
    /// close together, as IOPS figures are.
    pub(crate) fn of(values: &[f64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        let mut mean = 0.0;
        let mut m2 = 0.0;
        let mut min = f64::INFINITY;
        let mut max = f64::NEG_INFINITY;
        for (i, &x) in values.iter().enumerate() {
            let delta = x - mean;
            mean += delta / (i + 1) as f64;
            m2 += delta * (x - mean);
            min = min.min(x);
            max = max.max(x);
        }
        let n = values.len();
        let stddev = if n > 1 {
            (m2 / (n - 1) as f64).max(0.0).sqrt()
        } else {
            0.0
        };
        // The confidence interval of the mean: mean ± t(0.975, n−1) · s / √n (Student
        // 1908, "The probable error of a mean"; NIST/SEMATECH e-Handbook 7.2.2.1).
        let ci95 = (n > 1).then(|| t975(n - 1) * stddev / (n as f64).sqrt());
        let cv_pct = (n > 1 && mean != 0.0).then(|| 100.0 * stddev / mean.abs());
        Spread {
            mean,
            stddev,
            min,
            max,
            n,
            ci95,
            cv_pct,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_drained_gives_the_histograms_of_every_value() {
        // Values over the whole range, with the edges: 0 (counted as 1), each power of
        // two and its neighbours (where buckets change width), the highest trackable
        // value and beyond it (saturated), in two drains.
        let mut vals: Vec<u64> = vec![0, 1, 2047, 2048, 2049, u64::MAX, MAX_TRACKABLE_NS];
        vals.extend((0..64).flat_map(|b| [(1u64 << b) - 1, 1 << b, (1 << b) + 1]));
        vals.extend([MAX_TRACKABLE_NS + 1, MAX_TRACKABLE_NS * 2, 1 << 62]);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.push(x >> (x % 50)); // spread over every magnitude
        }
        let (mut p_direct, mut c_direct) = (LatHist::precise(), LatHist::coarse());
        let (mut p_drained, mut c_drained) = (LatHist::precise(), LatHist::coarse());
        let mut rec = LatRecorder::new();
        for (i, &v) in vals.iter().enumerate() {
            p_direct.record(v);
            c_direct.record(v);
            rec.record(v);
            if i == vals.len() / 2 {
                rec.drain_into(&mut p_drained, &mut c_drained);
            }
        }
        rec.drain_into(&mut p_drained, &mut c_drained);
        assert_eq!(p_drained.buckets(), p_direct.buckets());
        assert_eq!(c_drained.buckets(), c_direct.buckets());
        assert_eq!(p_drained.summary(), p_direct.summary());
        assert_eq!(c_drained.summary(), c_direct.summary());
        // Drained: nothing is added twice.
        rec.drain_into(&mut p_drained, &mut c_drained);
        assert_eq!(p_drained.count(), vals.len() as u64);
    }

    #[test]
    fn histograms_sent_as_buckets_merge_exactly() {
        // Three "ranks" with different latencies; each sends its buckets, the receiver
        // merges them: every figure equals recording all the values in one histogram.
        let mut all = LatHist::precise();
        let mut merged = LatHist::precise();
        for r in 0..3u64 {
            let mut h = LatHist::precise();
            for v in 1..=5_000u64 {
                let ns = (v * 7919 + r * 1_000_003) % 2_000_000 + 500 * (r + 1);
                h.record(ns);
                all.record(ns);
            }
            merged += &LatHist::from_buckets(&h.buckets());
        }
        assert_eq!(merged.summary(), all.summary());
        for q in [0.5, 0.9, 0.99, 0.999] {
            assert_eq!(merged.quantile(q), all.quantile(q));
        }
    }

    #[test]
    fn histogram_merge_equals_recording_everything_in_one() {
        let mut a = LatHist::precise();
        let mut b = LatHist::precise();
        let mut all = LatHist::precise();
        for v in 1..=10_000u64 {
            let ns = v * 37 % 100_003 + 1;
            if v % 3 == 0 { &mut a } else { &mut b }.record(ns);
            all.record(ns);
        }
        let mut merged = LatHist::precise();
        merged += &a;
        merged += &b;
        assert_eq!(merged.count(), 10_000);
        assert_eq!(merged.summary(), all.summary());
    }

    #[test]
    fn histogram_percentiles_within_precision() {
        let mut h = LatHist::precise();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        let s = h.summary();
        let close = |got: u64, want: f64| ((got as f64 - want) / want).abs() < 0.001;
        assert!(close(s.p50, 500_000.0), "{}", s.p50);
        assert!(close(s.p99, 990_000.0), "{}", s.p99);
        assert!(close(s.p999, 999_000.0), "{}", s.p999);
        assert_eq!(s.min, 10);
        assert!(close(s.max, 1_000_000.0));
        assert!((s.mean - 500_005.0).abs() / 500_005.0 < 0.001);
    }

    #[test]
    fn coarse_merges_into_coarse() {
        let mut a = LatHist::coarse();
        a.record(1234);
        let mut b = LatHist::coarse();
        b.record(99_999);
        a += &b;
        assert_eq!(a.count(), 2);
        assert!(a.summary().max >= 99_000);
    }

    #[test]
    fn empty_histogram_is_all_zero() {
        assert_eq!(LatHist::precise().summary(), LatSummary::default());
    }

    #[test]
    fn spread_by_hand() {
        // mean 5, squared deviations 9+1+1+9 = 20, / (n-1 = 3) → 6.667, sqrt → 2.582
        let s = Spread::of(&[2.0, 4.0, 6.0, 8.0]);
        assert_eq!(s.mean, 5.0);
        assert!((s.stddev - (20.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!((s.min, s.max, s.n), (2.0, 8.0, 4));
    }

    #[test]
    fn confidence_interval_and_cv_by_hand() {
        // n = 4, s = 2.582, t(0.975, 3) = 3.182: half-width 3.182 · 2.582 / 2 = 4.108.
        let s = Spread::of(&[2.0, 4.0, 6.0, 8.0]);
        let want = 3.182 * (20.0f64 / 3.0).sqrt() / 2.0;
        assert!((s.ci95.unwrap() - want).abs() < 1e-3, "{:?}", s.ci95);
        assert!((s.cv_pct.unwrap() - 100.0 * (20.0f64 / 3.0).sqrt() / 5.0).abs() < 1e-9);
        // n = 2: t(0.975, 1) = 12.706; values 10 and 12: s = 1.414, half-width 12.706.
        let two = Spread::of(&[10.0, 12.0]);
        assert!((two.ci95.unwrap() - 12.706).abs() < 1e-3);
    }

    #[test]
    fn t975_matches_the_tables() {
        // NIST/SEMATECH e-Handbook 1.3.6.7.2, three decimals; large df tends to 1.960.
        for (df, t) in [
            (1, 12.706),
            (2, 4.303),
            (3, 3.182),
            (5, 2.571),
            (10, 2.228),
            (30, 2.042),
            (100, 1.984),
            (100_000, 1.960),
        ] {
            assert!((t975(df) - t).abs() < 5e-4, "df {df}: {}", t975(df));
        }
        assert_eq!(t975(0), f64::INFINITY);
    }

    #[test]
    fn spread_degenerate_inputs() {
        let one = Spread::of(&[42.0]);
        assert_eq!((one.mean, one.stddev, one.n), (42.0, 0.0, 1));
        assert_eq!((one.ci95, one.cv_pct), (None, None));
        let flat = Spread::of(&[1e9 + 1.0; 5]);
        assert_eq!(flat.stddev, 0.0);
        assert_eq!((flat.ci95, flat.cv_pct), (Some(0.0), Some(0.0)));
        assert_eq!(Spread::of(&[]).n, 0);
        // Large values close together: naive sum-of-squares would lose this variance.
        let s = Spread::of(&[1e9 + 1.0, 1e9 + 2.0, 1e9 + 3.0]);
        assert!((s.stddev - 1.0).abs() < 1e-9, "{}", s.stddev);
    }
}

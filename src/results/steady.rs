//! Steady state, as the SNIA Solid State Storage Performance Test Specification (PTS)
//! defines it for its IOPS test, and the round scheduler built on it. Pure: numbers in,
//! verdicts out; the rounds themselves are run by `main.rs` through the runner.
//!
//! A measurement window of the last `window` rounds (default 5) is steady when
//! - the data excursion, max − min, is at most `max_range_pct` (20%) of the window's mean,
//!   and
//! - the slope excursion of the least-squares line through the window, |slope| × (window −
//!   1) rounds, is at most `max_slope_pct` (10%) of the mean.
//!
//! Steady state is reached at the first round that closes such a window.

use serde::{Deserialize, Serialize};

/// The criteria (SNIA PTS defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Criteria {
    pub window: usize,
    pub max_range_pct: f64,
    pub max_slope_pct: f64,
}

impl Default for Criteria {
    fn default() -> Self {
        Criteria {
            window: 5,
            max_range_pct: 20.0,
            max_slope_pct: 10.0,
        }
    }
}

/// The verdict: the results document's `steady_state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// Whether a window met the criteria.
    pub reached: bool,
    /// The round (1-based) that closed the first steady window.
    pub round: Option<u32>,
    /// First and last round (1-based) of that window, or of the last window examined.
    pub window: Option<[u32; 2]>,
    /// Mean IOPS over the window.
    pub mean: Option<f64>,
    /// max − min over the window, percent of the mean.
    pub range_pct: Option<f64>,
    /// Slope excursion of the least-squares line over the window, percent of the mean.
    pub slope_pct: Option<f64>,
    /// Rounds run.
    pub rounds: u32,
    pub criteria: Criteria,
}

/// (range %, slope excursion %, mean) of a window.
fn window_stats(w: &[f64]) -> (f64, f64, f64) {
    let n = w.len() as f64;
    let mean = w.iter().sum::<f64>() / n;
    let (lo, hi) = w
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    // Least squares over x = 0..n−1: slope = Σ(x − x̄)(y − ȳ) / Σ(x − x̄)².
    let xm = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &y) in w.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let denom = mean.abs().max(f64::MIN_POSITIVE);
    (
        100.0 * (hi - lo) / denom,
        100.0 * (slope * (n - 1.0)).abs() / denom,
        mean,
    )
}

/// Evaluates a series of per-round IOPS.
pub(crate) fn evaluate(iops: &[f64], c: Criteria) -> SteadyState {
    let mut st = SteadyState {
        reached: false,
        round: None,
        window: None,
        mean: None,
        range_pct: None,
        slope_pct: None,
        rounds: iops.len() as u32,
        criteria: c,
    };
    if c.window == 0 || iops.len() < c.window {
        return st;
    }
    for end in c.window..=iops.len() {
        let w = &iops[end - c.window..end];
        let (range, slope, mean) = window_stats(w);
        st.window = Some([(end - c.window + 1) as u32, end as u32]);
        st.mean = Some(mean);
        st.range_pct = Some(range);
        st.slope_pct = Some(slope);
        if range <= c.max_range_pct && slope <= c.max_slope_pct && mean > 0.0 {
            st.reached = true;
            st.round = Some(end as u32);
            return st;
        }
    }
    st
}

/// Whether another round should run: not once steady state is reached, nor past
/// `max_rounds`.
pub(crate) fn another_round(iops: &[f64], max_rounds: u32, c: Criteria) -> bool {
    (iops.len() as u32) < max_rounds && !evaluate(iops, c).reached
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(v: &[f64]) -> SteadyState {
        evaluate(v, Criteria::default())
    }

    #[test]
    fn flat_series_is_steady_at_round_5() {
        let s = ev(&[1000.0; 8]);
        assert!(s.reached);
        assert_eq!((s.round, s.window), (Some(5), Some([1, 5])));
        assert_eq!(s.range_pct, Some(0.0));
        assert!(!ev(&[1000.0; 4]).reached, "fewer rounds than the window");
    }

    #[test]
    fn decaying_series_is_steady_once_it_flattens() {
        // A fresh drive: fast, then settling at about 400 from round 6.
        let v = [
            2000.0, 1500.0, 1000.0, 700.0, 500.0, 420.0, 405.0, 398.0, 402.0, 400.0, 399.0,
        ];
        let s = ev(&v);
        assert!(s.reached);
        // Window 6..10 (420..400): range 5%, slope small; 5..9 includes 500: range 25%.
        assert_eq!(s.round, Some(10));
        assert_eq!(s.window, Some([6, 10]));
        assert!(another_round(&v[..9], 25, Criteria::default()));
        assert!(!another_round(&v[..10], 25, Criteria::default()));
    }

    #[test]
    fn one_large_excursion_is_not_steady() {
        let v = [1000.0, 1000.0, 1300.0, 1000.0, 1000.0];
        let s = ev(&v);
        assert!(!s.reached);
        assert!(s.range_pct.unwrap() > 20.0);
    }

    #[test]
    fn steady_slope_with_small_range_is_not_steady() {
        // +3% a round: range 12% (< 20%) but the fitted line moves 12% (> 10%).
        let v: Vec<f64> = (0..5).map(|i| 1000.0 * (1.0 + 0.03 * i as f64)).collect();
        let s = ev(&v);
        assert!(s.range_pct.unwrap() < 20.0);
        assert!(s.slope_pct.unwrap() > 10.0);
        assert!(!s.reached);
        assert!(
            !another_round(&v, 5, Criteria::default()),
            "max rounds reached"
        );
    }
}

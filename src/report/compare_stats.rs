//! The statistics of a comparison: a figure's ratio to the baseline, its 95% interval and
//! the test of the difference, all on one scale so that they cannot disagree. Pure math.
//!
//! The ratio is that of the geometric means over the repetitions, and the test Welch's t
//! on the logs of the per-repetition values (Welch 1947, "The generalization of
//! 'Student's' problem when several different population variances are involved";
//! degrees of freedom by the Welch–Satterthwaite equation): the interval of the difference
//! of the mean logs, exponentiated, is the ratio's interval, so a difference is
//! significant (p < 0.05) exactly when that interval excludes 1. Throughput and latency are
//! positive and skewed, and a ratio is what the report shows, which is why the log scale.
//! A value of 0 has no log: such a pair falls back to the ratio of the arithmetic means
//! and Welch's test on the values themselves, with no interval.

use crate::results::stats::Spread;

/// A figure of one document against the baseline's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    /// The ratio of the geometric means (the arithmetic means when a value is 0); `None`
    /// when the baseline's is 0.
    pub ratio: Option<f64>,
    /// The ratio's 95% interval; `None` without two repetitions a side or a value of 0.
    pub ci95: Option<[f64; 2]>,
    /// The two-sided p-value of the test; `None` without two repetitions a side.
    pub p: Option<f64>,
}

impl Estimate {
    /// Whether the difference is significant at 5%: the interval excludes 1 (which is
    /// p < 0.05 on the same statistic), or p < 0.05 where there is no interval.
    pub(crate) fn significant(&self) -> Option<bool> {
        match (self.ci95, self.p) {
            (Some([lo, hi]), _) => Some(lo > 1.0 || hi < 1.0),
            (None, Some(p)) => Some(p < 0.05),
            (None, None) => None,
        }
    }
}

/// `b` (this document's values) against `a` (the baseline's).
pub(crate) fn estimate(a: &[f64], b: &[f64]) -> Estimate {
    let positive = |v: &[f64]| !v.is_empty() && v.iter().all(|x| *x > 0.0 && x.is_finite());
    if !(positive(a) && positive(b)) {
        let (ma, mb) = (Spread::of(a).mean, Spread::of(b).mean);
        return Estimate {
            ratio: (ma > 0.0).then(|| mb / ma),
            ci95: None,
            p: welch(a, b).map(|w| w.p),
        };
    }
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let d = Spread::of(&lb).mean - Spread::of(&la).mean;
    let ratio = Some(d.exp());
    match welch(&la, &lb) {
        None => Estimate {
            ratio,
            ci95: None,
            p: None,
        },
        Some(w) => Estimate {
            ratio,
            ci95: Some([(d - w.half95).exp(), (d + w.half95).exp()]),
            p: Some(w.p),
        },
    }
}

/// Welch's test of mean(b) − mean(a): its p-value and the half width of the difference's
/// 95% interval.
struct Welch {
    p: f64,
    half95: f64,
}

/// Welch's unequal-variances t-test; `None` when either side has fewer than two values.
/// Without variance on either side, p is 1 for equal means and 0 otherwise, and the
/// interval has no width.
fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (sa, sb) = (Spread::of(a), Spread::of(b));
    let (va, vb) = (
        sa.stddev.powi(2) / a.len() as f64,
        sb.stddev.powi(2) / b.len() as f64,
    );
    let se2 = va + vb;
    if se2 == 0.0 {
        let p = if sa.mean == sb.mean { 1.0 } else { 0.0 };
        return Some(Welch { p, half95: 0.0 });
    }
    let t = (sb.mean - sa.mean) / se2.sqrt();
    let df = se2.powi(2) / (va.powi(2) / (a.len() - 1) as f64 + vb.powi(2) / (b.len() - 1) as f64);
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let crit = StudentsT::new(0.0, 1.0, df).map_or(f64::INFINITY, |d| d.inverse_cdf(0.975));
    Some(Welch {
        p: student_two_sided_p(t, df),
        half95: crit * se2.sqrt(),
    })
}

/// Two-sided p-value of Welch's t-test on the values themselves (see [`welch`]).
#[cfg(test)]
pub(crate) fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    welch(a, b).map(|w| w.p)
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom (`statrs`' survival
/// function; 1 when `df` is not a valid number of degrees of freedom).
pub(crate) fn student_two_sided_p(t: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => (2.0 * d.sf(t.abs())).clamp(0.0, 1.0),
        Err(_) => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn student_p_values_match_tables() {
        // Two-sided critical values: p = 0.05 at t(0.975, df).
        for (df, t) in [(1.0, 12.706), (5.0, 2.571), (10.0, 2.228), (30.0, 2.042)] {
            let p = student_two_sided_p(t, df);
            assert!((p - 0.05).abs() < 2e-4, "df {df}: p {p}");
        }
        assert!((student_two_sided_p(0.0, 7.0) - 1.0).abs() < 1e-12);
        // p = 0.01 at t = 3.169 with 10 degrees of freedom.
        assert!((student_two_sided_p(3.169, 10.0) - 0.01).abs() < 2e-4);
    }

    #[test]
    fn welch_by_hand() {
        // a: mean 10, variance 1.25; b: mean 12, variance 5 (n = 5 each).
        // se² = 1.25/5 + 5/5 = 1.25, t = −2/√1.25 = −1.789, df = 1.5625 / (0.0625/4 + 1/4)
        // = 5.88; the two-sided p for |t| = 1.789 at 5.88 df is 0.124 (t tables: p = 0.1
        // at 1.943 and p = 0.2 at 1.440 for 6 df).
        let p = welch_p(
            &[8.5, 9.5, 10.0, 10.5, 11.5],
            &[9.0, 11.0, 12.0, 13.0, 15.0],
        )
        .unwrap();
        assert!((p - 0.124).abs() < 0.003, "{p}");
        assert_eq!(welch_p(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(welch_p(&[5.0, 5.0], &[5.0, 5.0]), Some(1.0));
        assert_eq!(welch_p(&[5.0, 5.0], &[6.0, 6.0]), Some(0.0));
    }

    #[test]
    fn the_interval_and_the_test_agree() {
        // Logs 0, 0.5, 1 against 1.2 more: t = 1.2 / √(2 · 0.25/3) = 2.939 at 4 df (equal
        // sizes and variances), critical value 2.776: the interval e^(1.2 ± 1.1335) =
        // 1.069–10.314, p between 0.04 (t = 2.999) and 0.05.
        let a: Vec<f64> = [0.0f64, 0.5, 1.0].iter().map(|l| l.exp()).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.2f64.exp()).collect();
        let e = estimate(&a, &b);
        assert!((e.ratio.unwrap() - 1.2f64.exp()).abs() < 1e-9);
        let [lo, hi] = e.ci95.unwrap();
        assert!(
            (lo - 1.0687).abs() < 5e-4 && (hi - 10.314).abs() < 5e-3,
            "{lo} {hi}"
        );
        let p = e.p.unwrap();
        assert!(0.04 < p && p < 0.05, "{p}");
        assert_eq!(e.significant(), Some(true));
        // Over many shifts, p < 0.05 exactly when the interval excludes 1.
        for k in 0..200 {
            let s = k as f64 * 0.01;
            let b: Vec<f64> = a.iter().map(|x| x * s.exp()).collect();
            let e = estimate(&a, &b);
            let [lo, hi] = e.ci95.unwrap();
            assert_eq!(
                e.p.unwrap() < 0.05,
                lo > 1.0 || hi < 1.0,
                "shift {s}: {e:?}"
            );
        }
        // Degenerate input: one value a side, no variance, a zero.
        let one = estimate(&[2.0], &[3.0]);
        assert!((one.ratio.unwrap() - 1.5).abs() < 1e-12);
        assert_eq!((one.ci95, one.p), (None, None));
        let flat = estimate(&[2.0, 2.0], &[3.0, 3.0]);
        let [lo, hi] = flat.ci95.unwrap();
        assert!((lo - 1.5).abs() < 1e-12 && (hi - 1.5).abs() < 1e-12);
        assert_eq!(flat.significant(), Some(true));
        let same = estimate(&[2.0, 2.0], &[2.0, 2.0]);
        assert_eq!(same.significant(), Some(false));
        let zero = estimate(&[0.0, 0.0], &[3.0, 3.0]);
        assert_eq!((zero.ratio, zero.ci95), (None, None));
        let z = estimate(&[2.0, 4.0], &[0.0, 3.0]);
        assert_eq!((z.ratio, z.ci95), (Some(0.5), None));
    }
}

//! Comparing results: runs of several documents matched by their parameters, side by side,
//! with the ratio to the first document and whether each difference is significant
//! (Welch's t-test over the repetitions' IOPS, p < 0.05). Pure math and matching; the
//! formats live in `export.rs` and `html.rs`.

use serde::Serialize;

use crate::results::schema::{Document, Run};
use crate::results::stats::Spread;

/// The parameters two runs must share to be compared: pattern, mix, block size, queue
/// depth, jobs, direct or buffered, and the data written. Not the target, the engine or
/// the seed: comparing those is the point.
pub fn run_key(run: &Run) -> String {
    let s = &run.spec;
    let mut k = format!(
        "{} bs={} qd={} jobs={} {}",
        s.rw.name(),
        crate::units::fmt_size_short(s.bs),
        s.qd,
        s.jobs,
        if s.direct { "direct" } else { "buffered" }
    );
    if s.rw.is_mixed() {
        k.push_str(&format!(" mix={}", s.rwmixread));
    }
    if s.writes() && s.data != crate::plan::data::DataSpec::default() {
        k.push_str(&format!(" data={}", s.data.describe()));
    }
    k
}

/// How a value compares with the first document's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum Verdict {
    /// This is the first document's value.
    Baseline,
    /// Welch's t-test: p < 0.05.
    Significant {
        p: f64,
    },
    NotSignificant {
        p: f64,
    },
    /// Fewer than two repetitions on one side: no test possible.
    NotEnoughRepetitions,
}

impl Verdict {
    pub fn describe(&self) -> String {
        match self {
            Verdict::Baseline => "baseline".into(),
            Verdict::Significant { p } => format!("significant (p={})", fmt_p(*p)),
            Verdict::NotSignificant { p } => format!("not significant (p={})", fmt_p(*p)),
            Verdict::NotEnoughRepetitions => "not enough repetitions".into(),
        }
    }
}

fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// One document's figures for one matched run.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub run: String,
    pub iops: Spread,
    pub bw_bytes: Spread,
    pub lat_p99_ns: Spread,
    /// Mean IOPS over the baseline's (the first document that has this run); `null` when
    /// the baseline measured no IOPS.
    pub ratio: Option<f64>,
    /// Figures from repetitions that did not complete (no complete one existed).
    pub incomplete: bool,
    pub verdict: Verdict,
}

/// One matched run across documents (`None` where a document has no such run).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub key: String,
    pub cells: Vec<Option<Cell>>,
}

/// The comparison of several documents.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// A label per document (its file name).
    pub labels: Vec<String>,
    pub rows: Vec<Row>,
}

/// Total IOPS of each complete repetition (reads plus writes), or of every repetition
/// when none completed (as the run's summary does); and whether that fallback was used.
fn samples(run: &Run) -> (Vec<f64>, bool) {
    let complete: Vec<f64> = run
        .repetitions
        .iter()
        .filter(|r| r.status == crate::results::schema::Status::Complete)
        .map(|r| r.read.iops + r.write.iops)
        .collect();
    if complete.is_empty() {
        (
            run.repetitions
                .iter()
                .map(|r| r.read.iops + r.write.iops)
                .collect(),
            !run.repetitions.is_empty(),
        )
    } else {
        (complete, false)
    }
}

fn cell(run: &Run, base: Option<&Run>) -> Cell {
    let (x, incomplete) = samples(run);
    let iops = Spread::of(&x);
    let (ratio, verdict) = match base {
        None => (Some(1.0), Verdict::Baseline),
        Some(b) => {
            let (y, _) = samples(b);
            let bm = Spread::of(&y).mean;
            let ratio = (bm > 0.0).then(|| iops.mean / bm);
            let v = match welch_p(&y, &x) {
                None => Verdict::NotEnoughRepetitions,
                Some(p) if p < 0.05 => Verdict::Significant { p },
                Some(p) => Verdict::NotSignificant { p },
            };
            (ratio, v)
        }
    };
    Cell {
        run: run.name.clone(),
        iops,
        bw_bytes: run.summary.total(|d| &d.bw_bytes),
        lat_p99_ns: run.summary.main().lat_p99_ns,
        ratio,
        incomplete,
        verdict,
    }
}

/// Matches the runs of `docs` by [`run_key`], in the first document's order, then the
/// runs only later documents have.
pub fn compare(docs: &[(String, Document)]) -> Comparison {
    let mut used: Vec<Vec<bool>> = docs
        .iter()
        .map(|(_, d)| vec![false; d.runs.len()])
        .collect();
    let mut rows = Vec::new();
    for di in 0..docs.len() {
        for ri in 0..docs[di].1.runs.len() {
            if used[di][ri] {
                continue;
            }
            let key = run_key(&docs[di].1.runs[ri]);
            let mut picks: Vec<Option<usize>> = vec![None; docs.len()];
            for (dj, (_, d)) in docs.iter().enumerate().skip(di) {
                picks[dj] = d
                    .runs
                    .iter()
                    .enumerate()
                    .position(|(k, r)| !used[dj][k] && run_key(r) == key);
            }
            for (dj, p) in picks.iter().enumerate() {
                if let Some(k) = p {
                    used[dj][*k] = true;
                }
            }
            // The baseline is the first document that has this run.
            let base_doc = picks.iter().position(Option::is_some);
            let base = base_doc.and_then(|d| picks[d].map(|k| &docs[d].1.runs[k]));
            let cells = picks
                .iter()
                .enumerate()
                .map(|(dj, p)| {
                    p.map(|k| {
                        let run = &docs[dj].1.runs[k];
                        if Some(dj) == base_doc {
                            cell(run, None)
                        } else {
                            cell(run, base)
                        }
                    })
                })
                .collect();
            rows.push(Row { key, cells });
        }
    }
    Comparison {
        labels: docs.iter().map(|(l, _)| l.clone()).collect(),
        rows,
    }
}

/// Two-sided p-value of Welch's unequal-variances t-test (Welch 1947, "The generalization
/// of 'Student's' problem when several different population variances are involved";
/// degrees of freedom by the Welch–Satterthwaite equation). `None` when either side has
/// fewer than two values.
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
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
        return Some(if sa.mean == sb.mean { 1.0 } else { 0.0 });
    }
    let t = (sa.mean - sb.mean) / se2.sqrt();
    let df = se2.powi(2) / (va.powi(2) / (a.len() - 1) as f64 + vb.powi(2) / (b.len() - 1) as f64);
    Some(student_two_sided_p(t, df))
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2)
/// (Abramowitz & Stegun 26.7.1 with 26.5.27).
pub fn student_two_sided_p(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    reg_inc_beta(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

/// ln Γ(x) for x > 0: Lanczos' approximation (g = 7, nine terms; Lanczos 1964, "A
/// precision approximation of the gamma function"), with the reflection formula below ½.
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularised incomplete beta function I_x(a, b), by its continued fraction
/// (A&S 26.5.8) evaluated with the modified Lentz method (Lentz 1976; Thompson & Barnett
/// 1986), using the symmetry I_x(a,b) = 1 − I_{1−x}(b,a) where that converges faster.
pub fn reg_inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - reg_inc_beta(b, a, 1.0 - x);
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp() / a;
    const TINY: f64 = 1e-300;
    let mut f = 1.0;
    let mut c = 1.0;
    let mut d = 0.0;
    for i in 0..=400 {
        let m = (i / 2) as f64;
        let num = if i == 0 {
            1.0
        } else if i % 2 == 0 {
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
        } else {
            -((a + m) * (a + b + m) * x) / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))
        };
        d = 1.0 + num * d;
        if d.abs() < TINY {
            d = TINY;
        }
        d = 1.0 / d;
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        let cd = c * d;
        f *= cd;
        if (1.0 - cd).abs() < 1e-12 {
            break;
        }
    }
    front * (f - 1.0)
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
    fn incomplete_beta_known_values() {
        // I_x(1, 1) = x; I_x(2, 1) = x²; I_0.5(a, a) = 0.5.
        assert!((reg_inc_beta(1.0, 1.0, 0.3) - 0.3).abs() < 1e-10);
        assert!((reg_inc_beta(2.0, 1.0, 0.3) - 0.09).abs() < 1e-10);
        assert!((reg_inc_beta(3.5, 3.5, 0.5) - 0.5).abs() < 1e-10);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-10);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-10);
    }
}

//! Comparing results: runs of several documents matched by their parameters, side by side,
//! with the ratio to the first document and whether each difference is significant
//! (Welch's t-test over the repetitions' IOPS, p < 0.05). Pure math and matching; the
//! tables and formats live in `tables.rs`, `export.rs` and `html/`; no formatting here.

use serde::Serialize;

use crate::results::schema::{Document, Run};
use crate::results::stats::Spread;

/// The parameters two runs must share to be compared: pattern, mix, block size, queue
/// depth, jobs, direct or buffered, and the data written. Not the target, the engine or
/// the seed: comparing those is the point.
pub(crate) fn run_key(run: &Run) -> String {
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
pub(crate) enum Verdict {
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
    pub(crate) fn describe(&self) -> String {
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
pub(crate) struct Cell {
    pub run: String,
    pub iops: Spread,
    pub bw_bytes: Spread,
    pub lat_p99_ns: Spread,
    /// What `lat_p99_ns` measures: `lat` (submission to completion) or fio's `clat`.
    pub latency_kind: crate::results::schema::LatencyKind,
    /// Mean IOPS over the baseline's (the first document that has this run); `null` when
    /// the baseline measured no IOPS.
    pub ratio: Option<f64>,
    /// Figures from repetitions that did not complete (no complete one existed).
    pub incomplete: bool,
    pub verdict: Verdict,
}

/// One matched run across documents (`None` where a document has no such run).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub key: String,
    pub cells: Vec<Option<Cell>>,
}

/// The `tool` of a comparison document.
pub(crate) const COMPARISON_TOOL: &str = "iomark comparison";

/// The comparison of several documents.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// What this is, so a later run can tell its own output from another file.
    pub(crate) tool: &'static str,
    /// A label per document (its file name).
    pub(crate) labels: Vec<String>,
    pub(crate) rows: Vec<Row>,
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
        latency_kind: run.latency_kind,
        ratio,
        incomplete,
        verdict,
    }
}

/// Matches the runs of `docs` by [`run_key`], in the first document's order, then the
/// runs only later documents have.
pub fn compare(docs: &[(String, Document)]) -> Comparison {
    // A run without figures (a fio job iomark cannot represent) has nothing to compare.
    let mut used: Vec<Vec<bool>> = docs
        .iter()
        .map(|(_, d)| {
            d.runs
                .iter()
                .map(|r| r.status == crate::results::schema::Status::Unsupported)
                .collect()
        })
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
        tool: COMPARISON_TOOL,
        labels: docs.iter().map(|(l, _)| l.clone()).collect(),
        rows,
    }
}

/// Two-sided p-value of Welch's unequal-variances t-test (Welch 1947, "The generalization
/// of 'Student's' problem when several different population variances are involved";
/// degrees of freedom by the Welch–Satterthwaite equation). `None` when either side has
/// fewer than two values.
pub(crate) fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
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
}

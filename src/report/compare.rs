//! Comparing results: runs of several documents matched by their parameters, side by side,
//! with the ratio to the first document (and its 95% interval) and whether each
//! difference is significant (Welch's t-test over the repetitions, p < 0.05), for IOPS,
//! MB/s and p50/p99 latency; and what else differs between paired runs. Pure math and matching; the
//! tables and formats live in `tables.rs`, `export.rs` and `html/`; no formatting here.

use serde::Serialize;

use crate::results::schema::{Document, Repetition, Run};
use crate::results::stats::Spread;

/// The parameters two runs must share to be compared: pattern, mix, block size, queue
/// depth, jobs, direct or buffered, and the data written. Not the target, the engine or
/// the seed: comparing those is the point.
pub(crate) fn run_key(run: &Run) -> String {
    let s = &run.spec;
    let mut k = format!(
        "{} bs={} qd={} jobs={} {}",
        s.rw.name(),
        s.bs_text(),
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
            Verdict::Significant { p } => format!("significant ({})", fmt_p(*p)),
            Verdict::NotSignificant { p } => format!("not significant ({})", fmt_p(*p)),
            Verdict::NotEnoughRepetitions => "not enough repetitions".into(),
        }
    }
}

/// "p=0.012", or "p<0.001" below what three decimals show.
fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".into()
    } else {
        format!("p={p:.3}")
    }
}

/// The figures a comparison tests, each on its own: total IOPS, total MB/s, and the
/// p50 and p99 latency of the direction that did most of the I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Figure {
    Iops,
    BwBytes,
    LatP50Ns,
    LatP99Ns,
}

impl Figure {
    pub(crate) const ALL: [Figure; 4] = [
        Figure::Iops,
        Figure::BwBytes,
        Figure::LatP50Ns,
        Figure::LatP99Ns,
    ];

    /// The figure's name in tables and charts.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Figure::Iops => "IOPS",
            Figure::BwBytes => "MB/s",
            Figure::LatP50Ns => "p50 µs",
            Figure::LatP99Ns => "p99 µs",
        }
    }

    /// The figure as shown: MB/s in 10^6 bytes, latencies in µs.
    pub(crate) fn scale(self) -> f64 {
        match self {
            Figure::Iops => 1.0,
            Figure::BwBytes => 1e-6,
            Figure::LatP50Ns | Figure::LatP99Ns => 1e-3,
        }
    }

    /// Whether a larger value is better (throughput) or worse (latency).
    pub(crate) fn higher_is_better(self) -> bool {
        matches!(self, Figure::Iops | Figure::BwBytes)
    }

    /// This figure of one repetition; latencies of the direction `reads` says.
    fn of(self, r: &Repetition, reads: bool) -> f64 {
        let d = if reads { &r.read } else { &r.write };
        match self {
            Figure::Iops => r.read.iops + r.write.iops,
            Figure::BwBytes => r.read.bw_bytes + r.write.bw_bytes,
            Figure::LatP50Ns => d.lat_ns.p50 as f64,
            Figure::LatP99Ns => d.lat_ns.p99 as f64,
        }
    }
}

/// One figure of one document against the baseline's.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Test {
    pub figure: Figure,
    pub spread: Spread,
    /// Mean over the baseline's mean; `null` when the baseline's mean is 0.
    pub ratio: Option<f64>,
    /// The 95% confidence interval of the ratio (from the log ratio's standard error,
    /// Welch–Satterthwaite degrees of freedom); `null` without two repetitions a side.
    pub ratio_ci95: Option<[f64; 2]>,
    pub verdict: Verdict,
}

/// One document's figures for one matched run.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Cell {
    pub run: String,
    pub iops: Spread,
    pub bw_bytes: Spread,
    pub lat_p50_ns: Spread,
    pub lat_p99_ns: Spread,
    /// What `lat_p99_ns` measures: `lat` (submission to completion) or fio's `clat`.
    pub latency_kind: crate::results::schema::LatencyKind,
    /// Mean IOPS over the baseline's (the first document that has this run); `null` when
    /// the baseline measured no IOPS.
    pub ratio: Option<f64>,
    /// Figures from repetitions that did not complete (no complete one existed).
    pub incomplete: bool,
    /// Welch's test on IOPS (the same as `tests[0].verdict`).
    pub verdict: Verdict,
    /// Every figure against the baseline: IOPS, MB/s, p50, p99.
    pub tests: Vec<Test>,
    /// How this run differs from the baseline's beyond what is compared (span, runtime,
    /// data): the figures may not be comparable.
    pub differs: Vec<String>,
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

/// The repetitions a run's figures come from: the complete ones, or every one when none
/// completed (as the run's summary does); and whether that fallback was used.
fn used_reps(run: &Run) -> (Vec<&Repetition>, bool) {
    let complete: Vec<&Repetition> = run
        .repetitions
        .iter()
        .filter(|r| r.status == crate::results::schema::Status::Complete)
        .collect();
    if complete.is_empty() {
        (
            run.repetitions.iter().collect(),
            !run.repetitions.is_empty(),
        )
    } else {
        (complete, false)
    }
}

/// A figure of each repetition of a run that counts.
fn samples(run: &Run, f: Figure) -> Vec<f64> {
    let reads = std::ptr::eq(run.summary.main(), &run.summary.read);
    used_reps(run).0.iter().map(|r| f.of(r, reads)).collect()
}

/// The 95% interval of mean(b) / mean(a): exp(ln r ± t·se), with se² the sum of the
/// squared relative standard errors (the delta method) and Welch–Satterthwaite degrees of
/// freedom. `None` with fewer than two values a side or a mean of 0.
pub(crate) fn ratio_ci95(a: &[f64], b: &[f64]) -> Option<[f64; 2]> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (sa, sb) = (Spread::of(a), Spread::of(b));
    if sa.mean <= 0.0 || sb.mean <= 0.0 {
        return None;
    }
    let va = (sa.stddev / sa.mean).powi(2) / a.len() as f64;
    let vb = (sb.stddev / sb.mean).powi(2) / b.len() as f64;
    let r = sb.mean / sa.mean;
    let se2 = va + vb;
    if se2 == 0.0 {
        return Some([r, r]);
    }
    let df = se2.powi(2) / (va.powi(2) / (a.len() - 1) as f64 + vb.powi(2) / (b.len() - 1) as f64);
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let t = StudentsT::new(0.0, 1.0, df).map_or(f64::INFINITY, |d| d.inverse_cdf(0.975));
    let h = t * se2.sqrt();
    Some([r * (-h).exp(), r * h.exp()])
}

fn test(run: &Run, base: Option<&Run>, f: Figure) -> Test {
    let x = samples(run, f);
    let spread = Spread::of(&x);
    let Some(b) = base else {
        return Test {
            figure: f,
            spread,
            ratio: Some(1.0),
            ratio_ci95: None,
            verdict: Verdict::Baseline,
        };
    };
    let y = samples(b, f);
    let bm = Spread::of(&y).mean;
    let verdict = match welch_p(&y, &x) {
        None => Verdict::NotEnoughRepetitions,
        Some(p) if p < 0.05 => Verdict::Significant { p },
        Some(p) => Verdict::NotSignificant { p },
    };
    Test {
        figure: f,
        spread,
        ratio: (bm > 0.0).then(|| spread.mean / bm),
        ratio_ci95: ratio_ci95(&y, &x),
        verdict,
    }
}

/// What differs between a run and its baseline beyond the compared parameters: the span,
/// the runtime (or size-based against timed), the data written, the amount moved, and the
/// settings of [`workload`] (a rate cap, think time, the offsets' distribution, syncs, and
/// fio's `clat` against iomark's `lat`).
fn differences(run: &Run, base: &Run) -> Vec<String> {
    let mut out = Vec::new();
    let size = crate::units::fmt_size;
    if run.target.span_bytes != base.target.span_bytes {
        out.push(format!(
            "span {} vs {}",
            size(run.target.span_bytes),
            size(base.target.span_bytes)
        ));
    }
    let rt = |r: &Run| {
        r.spec
            .runtime_s
            .map_or("size-based".to_string(), |s| format!("{s}s"))
    };
    if rt(run) != rt(base) {
        out.push(format!("runtime {} vs {}", rt(run), rt(base)));
    }
    if run.spec.data != base.spec.data {
        out.push(format!(
            "data {} vs {}",
            run.spec.data.describe(),
            base.spec.data.describe()
        ));
    }
    if run.spec.runtime_s.is_none() && run.spec.io_size != base.spec.io_size {
        let io = |r: &Run| r.spec.io_size.map_or("the span".to_string(), size);
        out.push(format!("I/O size {} vs {}", io(run), io(base)));
    }
    for ((what, a), (_, b)) in workload(run).into_iter().zip(workload(base)) {
        if a != b {
            out.push(format!("{what} {a} vs {b}"));
        }
    }
    out
}

/// The settings that shape a run's I/O beyond `run_key` and change its figures when they
/// differ (a rate cap, think time, where random offsets fall, syncs), and what its latency
/// figures measure; as (name, value) in a fixed order, each as a reader would write it.
fn workload(run: &Run) -> [(&'static str, String); 7] {
    let s = &run.spec;
    let none = || "none".to_string();
    let writes = s.writes();
    [
        (
            "rate",
            s.rate_bps
                .map_or_else(none, |b| format!("{}/s", crate::units::fmt_size(b))),
        ),
        ("IOPS cap", s.rate_iops.map_or_else(none, |n| n.to_string())),
        (
            "think time",
            s.thinktime_us.map_or_else(none, |us| {
                format!("{us} µs every {} I/Os", s.thinktime_blocks.unwrap_or(1))
            }),
        ),
        (
            "offsets",
            if s.rw.is_random() {
                s.random_distribution.text()
            } else {
                "sequential".into()
            },
        ),
        (
            "fsync",
            match (writes, s.fsync, s.end_fsync) {
                (false, ..) | (true, 0, false) => none(),
                (true, 0, true) => "at the end".into(),
                (true, n, end) => format!(
                    "every {n} writes{}",
                    if end { " and at the end" } else { "" }
                ),
            },
        ),
        (
            "sync mode",
            match s.engine_opts.sync_mode {
                crate::plan::engine::SyncMode::None => none(),
                crate::plan::engine::SyncMode::Sync => "O_SYNC".into(),
                crate::plan::engine::SyncMode::Dsync => "O_DSYNC".into(),
            },
        ),
        ("latency", run.latency_kind.label().into()),
    ]
}

fn cell(run: &Run, base: Option<&Run>) -> Cell {
    let tests: Vec<Test> = Figure::ALL.iter().map(|&f| test(run, base, f)).collect();
    Cell {
        run: run.name.clone(),
        iops: tests[0].spread,
        bw_bytes: tests[1].spread,
        lat_p50_ns: tests[2].spread,
        lat_p99_ns: tests[3].spread,
        ratio: tests[0].ratio,
        incomplete: used_reps(run).1,
        verdict: tests[0].verdict,
        differs: base.map(|b| differences(run, b)).unwrap_or_default(),
        latency_kind: run.latency_kind,
        tests,
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
    fn runs_paired_despite_a_rate_cap_or_think_time_say_so() {
        use crate::plan::distribution::Distribution;
        use crate::plan::spec::Rw;
        use crate::results::testdoc::run;
        let base = run(Rw::RandRead, 8, &[1000.0, 1010.0], None);
        let same = run(Rw::RandRead, 8, &[500.0, 510.0], None);
        assert_eq!(differences(&same, &base), Vec::<String>::new());
        let mut capped = same.clone();
        capped.spec.rate_iops = Some(5000);
        capped.spec.thinktime_us = Some(100);
        capped.spec.thinktime_blocks = Some(4);
        capped.spec.random_distribution = Distribution::Zipf(1.2, None);
        capped.latency_kind = crate::results::schema::LatencyKind::Clat;
        assert_eq!(run_key(&capped), run_key(&base), "still paired");
        assert_eq!(
            differences(&capped, &base),
            [
                "IOPS cap 5000 vs none",
                "think time 100 µs every 4 I/Os vs none",
                "offsets zipf:1.2 vs random",
                "latency clat vs lat",
            ]
        );
        // Syncs count only for runs that write.
        let mut w = run(Rw::RandWrite, 8, &[1000.0], None);
        let base_w = w.clone();
        w.spec.fsync = 1;
        w.spec.end_fsync = true;
        w.spec.engine_opts.sync_mode = crate::plan::engine::SyncMode::Dsync;
        w.spec.rate_bps = Some(1 << 20);
        assert_eq!(
            differences(&w, &base_w),
            [
                "rate 1 MiB/s vs none",
                "fsync every 1 writes and at the end vs none",
                "sync mode O_DSYNC vs none",
            ]
        );
        let mut r = base.clone();
        r.spec.fsync = 1;
        assert_eq!(differences(&r, &base), Vec::<String>::new());
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

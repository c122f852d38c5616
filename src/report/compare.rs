//! Comparing results: runs of several documents matched by their parameters, side by side,
//! with the ratio to the first document (and its 95% interval) and whether each
//! difference is significant (Welch's t-test on the logs of the repetitions' values, see
//! `compare_stats.rs`), for IOPS, MB/s and p50/p99 latency (each direction of a mix with
//! itself); and what else differs between paired runs. Matching and labels; the
//! statistics live in `compare_stats.rs`, the tables and formats in `tables.rs`,
//! `export.rs` and `html/`; no formatting here.

use serde::Serialize;

use crate::report::compare_stats::estimate;
use crate::results::schema::{DirStats, Document, Repetition, Run};
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
    /// Welch's t-test on the logs: p < 0.05, the ratio's interval excludes 1.
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
/// p50 and p99 latency of each direction the workload has (see [`Direction`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Figure {
    Iops,
    BwBytes,
    LatP50Ns,
    LatP99Ns,
}

impl Figure {
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

    /// This figure of one repetition; latencies of direction `d` (reads when `None`).
    fn of(self, r: &Repetition, d: Option<Direction>) -> f64 {
        let s = d.unwrap_or(Direction::Read).of(r);
        match self {
            Figure::Iops => r.read.iops + r.write.iops + r.trim.iops,
            Figure::BwBytes => r.read.bw_bytes + r.write.bw_bytes,
            Figure::LatP50Ns => s.lat_ns.p50 as f64,
            Figure::LatP99Ns => s.lat_ns.p99 as f64,
        }
    }
}

/// The direction a latency figure is of. A pair is always compared direction by
/// direction: which one did most I/O changes from file to file on a 50/50 mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Direction {
    Read,
    Write,
    Trim,
}

impl Direction {
    /// Its name in tables and charts.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
            Direction::Trim => "trim",
        }
    }

    fn of(self, r: &Repetition) -> &DirStats {
        match self {
            Direction::Read => &r.read,
            Direction::Write => &r.write,
            Direction::Trim => &r.trim,
        }
    }

    /// The directions a run of `spec` has latencies of, by its pattern and mix (not by
    /// what it happened to do most): reads, writes, or both for a mix; trims (and writes
    /// for `trimwrite`).
    pub(crate) fn all_of(spec: &crate::plan::spec::Spec) -> Vec<Direction> {
        let mut out = Vec::new();
        if spec.rw.trims() {
            if spec.rw.writes_data() {
                out.push(Direction::Write);
            }
            out.push(Direction::Trim);
            return out;
        }
        if spec.reads() {
            out.push(Direction::Read);
        }
        if spec.writes() {
            out.push(Direction::Write);
        }
        out
    }

    /// The one direction that stands for a run of `spec` (a cell's `lat_p50_ns` and
    /// `lat_p99_ns`): the larger share of a mix, reads on a 50/50 one; writes for
    /// `trimwrite`.
    pub(crate) fn main_of(spec: &crate::plan::spec::Spec) -> Direction {
        let all = Direction::all_of(spec);
        if spec.rw.is_mixed() && all.len() == 2 && spec.rwmixread < 50 {
            return Direction::Write;
        }
        all.first().copied().unwrap_or(Direction::Read)
    }
}

/// One figure of one document against the baseline's.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Test {
    pub figure: Figure,
    /// The direction of a latency figure (the same on both sides of a pair); absent for
    /// IOPS and MB/s, which are totals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    pub spread: Spread,
    /// The geometric mean over the baseline's (the arithmetic means' ratio when a value is
    /// 0); `null` when the baseline's is 0.
    pub ratio: Option<f64>,
    /// The 95% confidence interval of the ratio: Welch's interval of the difference of
    /// the mean logs, exponentiated; `null` without two repetitions a side or with a
    /// value of 0.
    pub ratio_ci95: Option<[f64; 2]>,
    pub verdict: Verdict,
}

impl Test {
    /// The test's name in tables and charts: "IOPS", "p99 µs read".
    pub(crate) fn label(&self) -> String {
        match self.direction {
            Some(d) => format!("{} {}", self.figure.label(), d.label()),
            None => self.figure.label().into(),
        }
    }
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
    /// The direction of `lat_p50_ns` and `lat_p99_ns`, by the workload (the larger share
    /// of a mix, reads on a 50/50 one), the same on both sides; `tests` has every
    /// direction's.
    pub latency_direction: Direction,
    /// IOPS over the baseline's (the first document that has this run; geometric means,
    /// as `tests[0].ratio`); `null` when the baseline measured no IOPS.
    pub ratio: Option<f64>,
    /// Figures from repetitions that did not complete (no complete one existed).
    pub incomplete: bool,
    /// Welch's test on IOPS (the same as `tests[0].verdict`).
    pub verdict: Verdict,
    /// Every figure against the baseline: IOPS, MB/s, then p50 and p99 of each direction
    /// (reads, writes, trims, those the workload has).
    pub tests: Vec<Test>,
    /// How this run differs from the baseline's beyond what is compared (span, runtime,
    /// data, targets, offset, …): the figures may not be comparable.
    pub differs: Vec<String>,
}

impl Cell {
    /// The test of figure `f` in direction `d`.
    pub(crate) fn test(&self, f: Figure, d: Option<Direction>) -> Option<&Test> {
        self.tests
            .iter()
            .find(|t| t.figure == f && t.direction == d)
    }
}

/// One matched run across documents (`None` where a document has no such run).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    /// The run's parameters ([`run_key`]), and what tells it from other runs of its
    /// document with the same ones (a study's point, the data, …; see [`labels`]).
    pub key: String,
    pub cells: Vec<Option<Cell>>,
}

impl Row {
    /// The figures and directions this row tests, in order (every cell has the same: the
    /// pattern and the mix are part of the key).
    pub(crate) fn tests(&self) -> Vec<(Figure, Option<Direction>)> {
        self.cells
            .iter()
            .flatten()
            .next()
            .map(|c| c.tests.iter().map(|t| (t.figure, t.direction)).collect())
            .unwrap_or_default()
    }
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
fn samples(run: &Run, f: Figure, d: Option<Direction>) -> Vec<f64> {
    used_reps(run).0.iter().map(|r| f.of(r, d)).collect()
}

fn test(run: &Run, base: Option<&Run>, f: Figure, d: Option<Direction>) -> Test {
    let x = samples(run, f, d);
    let spread = Spread::of(&x);
    let Some(b) = base else {
        return Test {
            figure: f,
            direction: d,
            spread,
            ratio: Some(1.0),
            ratio_ci95: None,
            verdict: Verdict::Baseline,
        };
    };
    let e = estimate(&samples(b, f, d), &x);
    let verdict = match (e.significant(), e.p) {
        (Some(true), Some(p)) => Verdict::Significant { p },
        (Some(false), Some(p)) => Verdict::NotSignificant { p },
        _ => Verdict::NotEnoughRepetitions,
    };
    Test {
        figure: f,
        direction: d,
        spread,
        ratio: e.ratio,
        ratio_ci95: e.ci95,
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
        // A study's run against a single run is no difference worth a note.
        let lone = what == "study point" && (a == "none" || b == "none");
        if a != b && !lone {
            out.push(format!("{what} {a} vs {b}"));
        }
    }
    out
}

/// The settings that shape a run's I/O beyond `run_key` and change its figures when they
/// differ (how many targets and jobs in all, where the span starts, a rate cap, think time,
/// where random offsets fall, syncs), what its latency figures measure, and the study's
/// point; as (name, value) in a fixed order, each as a reader would write it.
fn workload(run: &Run) -> [(&'static str, String); 11] {
    let s = &run.spec;
    let none = || "none".to_string();
    let writes = s.writes();
    let targets = s.targets.len().max(1) as u64;
    // Each target has its own jobs, unless the jobs serve the targets; each MPI rank runs
    // the whole job set.
    let per_target = if s.file_service.is_some() { 1 } else { targets };
    let ranks = run.mpi.as_ref().map_or(1, |m| u64::from(m.ranks));
    [
        ("targets", targets.to_string()),
        (
            "jobs in total",
            (u64::from(s.jobs) * per_target * ranks).to_string(),
        ),
        ("offset", crate::units::fmt_size(run.target.offset)),
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
        ("study point", study_point(run).unwrap_or_else(none)),
    ]
}

fn cell(run: &Run, base: Option<&Run>) -> Cell {
    // The directions by the workload: the baseline's pattern and mix are this run's.
    let dirs = Direction::all_of(&run.spec);
    let main = Direction::main_of(&run.spec);
    let mut tests = vec![
        test(run, base, Figure::Iops, None),
        test(run, base, Figure::BwBytes, None),
    ];
    for f in [Figure::LatP50Ns, Figure::LatP99Ns] {
        tests.extend(dirs.iter().map(|&d| test(run, base, f, Some(d))));
    }
    let main_test = |f: Figure| {
        tests
            .iter()
            .find(|t| t.figure == f && t.direction == Some(main))
            .map_or_else(|| Spread::of(&samples(run, f, Some(main))), |t| t.spread)
    };
    Cell {
        run: run.name.clone(),
        iops: tests[0].spread,
        bw_bytes: tests[1].spread,
        lat_p50_ns: main_test(Figure::LatP50Ns),
        lat_p99_ns: main_test(Figure::LatP99Ns),
        ratio: tests[0].ratio,
        incomplete: used_reps(run).1,
        verdict: tests[0].verdict,
        differs: base.map(|b| differences(run, b)).unwrap_or_default(),
        latency_kind: run.latency_kind,
        latency_direction: main,
        tests,
    }
}

/// A study's point as "param=value" (`compress=98`), if the run is part of one.
fn study_point(run: &Run) -> Option<String> {
    run.study
        .as_ref()
        .map(|s| format!("{}={}", s.param, s.value))
}

/// The label of each run of `doc`: its [`run_key`], and where runs of the document share
/// one, what tells them apart, in this order, as far as needed: the study's point (the
/// compress study's reads differ by nothing else), the data, the offset, the span, the
/// number of targets, the run's name, and last its place among them (`#2`).
pub(crate) fn labels(doc: &Document) -> Vec<String> {
    let keys: Vec<String> = doc.runs.iter().map(run_key).collect();
    let size = crate::units::fmt_size;
    let tells: [&dyn Fn(&Run) -> String; 6] = [
        &|r| study_point(r).unwrap_or_default(),
        &|r| format!("data={}", r.spec.data.describe()),
        &|r| format!("offset={}", size(r.target.offset)),
        &|r| format!("span={}", size(r.target.span_bytes)),
        &|r| format!("targets={}", r.spec.targets.len().max(1)),
        &|r| format!("\"{}\"", r.name),
    ];
    let mut out = keys.clone();
    for (i, key) in keys.iter().enumerate() {
        let same: Vec<usize> = (0..keys.len()).filter(|&j| keys[j] == *key).collect();
        if same.len() < 2 {
            continue;
        }
        let mut parts: Vec<Vec<String>> = vec![Vec::new(); same.len()];
        for tell in tells {
            let vals: Vec<String> = same.iter().map(|&j| tell(&doc.runs[j])).collect();
            if vals.iter().any(|v| *v != vals[0]) {
                for (p, v) in parts.iter_mut().zip(vals) {
                    p.push(v);
                }
            }
            let mut u = parts.clone();
            u.sort();
            u.dedup();
            if u.len() == parts.len() {
                break;
            }
        }
        let me = same.iter().position(|&j| j == i).unwrap_or(0);
        let mut l = key.clone();
        for p in parts[me]
            .iter()
            .filter(|p| !p.is_empty() && !key.contains(p.as_str()))
        {
            l.push(' ');
            l.push_str(p);
        }
        let mut u = parts.clone();
        u.sort();
        u.dedup();
        if u.len() < parts.len() {
            l.push_str(&format!(" #{}", me + 1));
        }
        out[i] = l;
    }
    out
}

/// Matches the runs of `docs`, in the first document's order, then the runs only later
/// documents have: a run pairs with the first unused run of another document with the
/// same label ([`labels`]), else with the same [`run_key`].
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
    let labels: Vec<Vec<String>> = docs.iter().map(|(_, d)| labels(d)).collect();
    let mut rows = Vec::new();
    for di in 0..docs.len() {
        for ri in 0..docs[di].1.runs.len() {
            if used[di][ri] {
                continue;
            }
            let key = run_key(&docs[di].1.runs[ri]);
            let label = &labels[di][ri];
            let mut picks: Vec<Option<usize>> = vec![None; docs.len()];
            for (dj, (_, d)) in docs.iter().enumerate().skip(di) {
                let free = |k: &usize| !used[dj][*k];
                picks[dj] = (0..d.runs.len())
                    .filter(free)
                    .find(|&k| labels[dj][k] == *label)
                    .or_else(|| {
                        (0..d.runs.len())
                            .filter(free)
                            .find(|&k| run_key(&d.runs[k]) == key)
                    });
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
            rows.push(Row {
                key: label.clone(),
                cells,
            });
        }
    }
    Comparison {
        tool: COMPARISON_TOOL,
        labels: docs.iter().map(|(l, _)| l.clone()).collect(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

//! Comparing results: runs of several documents matched by their parameters, side by side,
//! with the ratio to the first document (and its 95% interval) and whether each
//! difference is significant (Welch's t-test on the logs of the repetitions' values, see
//! `compare_stats.rs`), for IOPS, MB/s, p50/p99 latency (each direction of a mix with
//! itself) and the job threads' CPU per I/O; and what else differs between paired runs
//! (the engine and its options among them). Matching and labels; the
//! statistics live in `compare_stats.rs`, the tables and formats in `tables.rs`,
//! `export.rs` and `html/`; no formatting here.

use serde::Serialize;

use crate::report::compare_stats::estimate;
use crate::results::schema::{DirStats, Document, Repetition, Run};
use crate::results::stats::Spread;
use differs::differences;
pub(crate) use differs::labels;

/// The parameters two runs must share to be compared: pattern, mix, block size, queue
/// depth, jobs, direct or buffered, and the data written. Not the target, the engine or
/// the seed: comparing those is the point.
pub(crate) fn run_key(run: &Run) -> String {
    let s = &run.spec;
    // A parameter an import does not give pairs with nothing but another unknown.
    let known = |what, shown: String| crate::report::fmt::known_or(run, what, shown);
    let mut k = format!(
        "{} bs={} qd={} jobs={} {}",
        s.rw.name(),
        s.bs_text(),
        known("qd", s.qd.to_string()),
        known("jobs", s.jobs.to_string()),
        known(
            "direct",
            if s.direct { "direct" } else { "buffered" }.into()
        ),
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
    /// CPU time of the job threads per I/O (`cpu.workers.per_io_ns`): what fio's job
    /// figures count, so iomark's and fio's are compared like with like.
    CpuNs,
}

impl Figure {
    /// The figure's name in tables and charts.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Figure::Iops => "IOPS",
            Figure::BwBytes => "MB/s",
            Figure::LatP50Ns => "p50 µs",
            Figure::LatP99Ns => "p99 µs",
            Figure::CpuNs => "CPU ns/IO (job threads)",
        }
    }

    /// The figure as shown: MB/s in 10^6 bytes, latencies in µs.
    pub(crate) fn scale(self) -> f64 {
        match self {
            Figure::Iops | Figure::CpuNs => 1.0,
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
            Figure::CpuNs => r.cpu.workers.per_io_ns,
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

    /// The directions a run has figures of: its pattern's ([`Direction::all_of`]), then
    /// any other it did I/O in (a fio entry where `group_reporting` merged jobs of
    /// different directions: its `spec` is only the last job's).
    pub(crate) fn of_run(run: &Run) -> Vec<Direction> {
        let (all, beyond) = (Direction::all_of(&run.spec), Direction::beyond_spec(run));
        [Direction::Read, Direction::Write, Direction::Trim]
            .into_iter()
            .filter(|d| all.contains(d) || beyond.contains(d))
            .collect()
    }

    /// The directions a run did I/O in that its pattern does not have.
    pub(crate) fn beyond_spec(run: &Run) -> Vec<Direction> {
        let all = Direction::all_of(&run.spec);
        [Direction::Read, Direction::Write, Direction::Trim]
            .into_iter()
            .filter(|d| !all.contains(d))
            .filter(|d| run.repetitions.iter().any(|r| d.of(r).ios > 0))
            .collect()
    }

    /// Its figures across the repetitions.
    pub(crate) fn summary(
        self,
        s: &crate::results::schema::Summary,
    ) -> &crate::results::schema::DirSummary {
        match self {
            Direction::Read => &s.read,
            Direction::Write => &s.write,
            Direction::Trim => &s.trim,
        }
    }

    /// The one direction that stands for a run: [`Direction::main_of`] its pattern, or
    /// the direction that did most I/O when it did I/O beyond its pattern.
    pub(crate) fn main_of_run(run: &Run) -> Direction {
        if Direction::beyond_spec(run).is_empty() {
            return Direction::main_of(&run.spec);
        }
        let ios = |d: Direction| run.repetitions.iter().map(|r| d.of(r).ios).sum::<u64>();
        Direction::of_run(run)
            .into_iter()
            .max_by_key(|&d| ios(d))
            .unwrap_or(Direction::Read)
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
pub(crate) fn used_reps(run: &Run) -> (Vec<&Repetition>, bool) {
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
    let latency = matches!(f, Figure::LatP50Ns | Figure::LatP99Ns);
    (used_reps(run).0.iter())
        // A latency is of the I/Os that completed: a repetition without any has none
        // (its 0 ns is no measurement); nor has one whose CPU was not measured (a
        // document older than the parts, fio's output without its job CPU).
        .filter(|r| !latency || d.unwrap_or(Direction::Read).of(r).ios > 0)
        .filter(|r| f != Figure::CpuNs || r.cpu.workers.per_io_ns > 0.0)
        .map(|r| f.of(r, d))
        .collect()
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

fn cell(run: &Run, base: Option<&Run>) -> Cell {
    // The directions by the workload: the baseline's pattern and mix are this run's
    // (with any direction either did I/O in beyond it: a fio group of different jobs).
    let mut dirs = Direction::of_run(run);
    for d in base.map(Direction::beyond_spec).unwrap_or_default() {
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    dirs.sort_by_key(|&d| d as u8);
    let main = Direction::main_of_run(run);
    let mut tests = vec![
        test(run, base, Figure::Iops, None),
        test(run, base, Figure::BwBytes, None),
    ];
    for f in [Figure::LatP50Ns, Figure::LatP99Ns] {
        tests.extend(dirs.iter().map(|&d| test(run, base, f, Some(d))));
    }
    // Last, so that the figures before keep their places.
    tests.push(test(run, base, Figure::CpuNs, None));
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

/// Matches the runs of `docs`, in the first document's order, then the runs only later
/// documents have: a run pairs with the first unused run of another document with the
/// same label ([`labels`]), else with the same [`run_key`].
pub fn compare(docs: &[(String, Document)]) -> Comparison {
    // A run without figures (a fio job iomark cannot represent, a run stopped before its
    // first repetition was measured) has nothing to compare: it pairs with nothing.
    let mut used: Vec<Vec<bool>> = docs
        .iter()
        .map(|(_, d)| {
            d.runs
                .iter()
                .map(|r| {
                    r.status == crate::results::schema::Status::Unsupported
                        || r.repetitions.is_empty()
                })
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

#[path = "compare_differs.rs"]
mod differs;

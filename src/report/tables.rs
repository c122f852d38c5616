//! What goes into every table of the reports, built once per kind of content: the runs
//! of documents, a comparison, the plan table, a study's dry-run listing, the per-test
//! study tables, write saturation per minute, a run's environment and a host. Each
//! builder returns a [`Table`]; drawing it (terminal, Markdown, CSV, HTML) is `table.rs`'
//! job. Reads the results schema and the plan only; never runs I/O or prints.

use crate::plan::spec::Spec;
use crate::report::compare::Direction;
use crate::report::fmt::{NONE, fmt_count, fmt_duration, fmt_lat, fmt_sd};
use crate::report::table::Table;
use crate::results::schema::{Document, Repetition, Run, Status};
use crate::units::{fmt_ns, fmt_size};

#[path = "tables_cpu.rs"]
mod cpu;
use cpu::{cpu_cells, cpu_mean};

pub(crate) use crate::report::compare_tables::{comparison, comparison_row, doc_tag};
pub(crate) use crate::report::tables_env::{host, provenance, run_amplification, run_environment};

/// The parameter cells of a run as the tables show them: rw, bs, qd, jobs, io, data.
pub(crate) fn spec_cells(s: &Spec) -> [String; 6] {
    [
        s.rw.name().into(),
        s.bs_text(),
        s.qd.to_string(),
        s.jobs.to_string(),
        if s.direct { "direct" } else { "buffered" }.into(),
        // Trims write no data.
        if s.writes() && s.rw.writes_data() {
            s.data.describe()
        } else {
            "-".into()
        },
    ]
}

/// The columns of the per-run table.
pub(crate) const RUN_HEADER: [&str; 24] = [
    "run",
    "dir",
    "test",
    "param",
    "value",
    "rw",
    "bs",
    "qd",
    "jobs",
    "io",
    "data",
    "n",
    "IOPS",
    "IOPS sd",
    "MB/s",
    "MB/s sd",
    "p50 us",
    "p99 us",
    "latency",
    "lz4 %",
    "zstd-1 %",
    "dedup %",
    "CPU ns/IO",
    "job threads ns/IO",
];

/// What the per-run table's columns hold, for the line under it.
pub(crate) const RUN_LEGEND: &str = "IOPS and MB/s (10^6 bytes/s): mean and sample standard deviation over the complete repetitions (n; a run cut before any completed: over the ones it measured, its name marked interrupted). Latencies in µs: the mean over repetitions of each repetition's percentile. lz4 %, zstd-1 %, dedup %: how much smaller the data written measured under lz4 and zstd level 1 (chunk by chunk), and the share of its units that repeated an earlier one (sampled as it was written; mean over the repetitions), on a write row; - where nothing was measured (reads, fio's output). CPU ns/IO: the process's CPU time (user + system) per I/O of the run, every direction's (- for fio's output, which has no such figure), and of it the job threads' (what fio's job figures count; io_uring's kernel workers and the rest are the difference), mean over the repetitions; - where none was measured.";

/// The measured data of a run's write row (see [`RUN_LEGEND`]): lz4, zstd and dedup
/// percentages, the mean over the repetitions that measured any.
fn measured_data(r: &Run) -> [String; 3] {
    let mean = |f| data_mean(r, f).map_or(NONE.to_string(), |v| format!("{v:.1}"));
    [
        mean(|d| Some(d.lz4_pct)),
        mean(|d| Some(d.zstd_pct)),
        mean(|d| d.dedup_pct),
    ]
}

/// A figure of the data measured, the mean over the repetitions that measured it.
fn data_mean(r: &Run, f: fn(&crate::results::schema::DataMeasure) -> Option<f64>) -> Option<f64> {
    let m: Vec<f64> = r
        .repetitions
        .iter()
        .filter_map(|x| x.data.as_ref().and_then(f))
        .collect();
    (!m.is_empty()).then(|| m.iter().sum::<f64>() / m.len() as f64)
}

/// A percentile of the run's summary in µs, or "n/a" when the run has none (an imported
/// fio job that did not report it), [`NONE`] when no repetition completed an I/O.
fn pct_us(r: &Run, name: &str, s: &crate::results::stats::Spread) -> String {
    if !r.has_percentile(name) {
        "n/a".into()
    } else if s.n == 0 {
        NONE.into()
    } else {
        format!("{:.1}", s.mean / 1e3)
    }
}

/// A latency for the plan table, "n/a" when the run lacks that percentile, with the
/// latency kind when it is not iomark's own (submission to completion).
fn lat_cell(r: &Run, name: Option<&str>, ns: f64) -> String {
    let v = match name {
        Some(n) if !r.has_percentile(n) => "n/a".into(),
        _ => fmt_ns(ns),
    };
    match r.latency_kind {
        crate::results::schema::LatencyKind::Lat => v,
        k => format!("{v} ({})", k.label()),
    }
}

/// The parameter cells of a run: [`spec_cells`], with fio's own rw and block sizes for
/// an imported fio job (`bssplit 4k/50:64k/50 (average 18.7k)`, `4k,64k`, `randtrim`),
/// and "?" for its depth, jobs or direct I/O where fio's output does not say them.
pub(crate) fn run_spec_cells(r: &Run) -> [String; 6] {
    let mut c = spec_cells(&r.spec);
    // What the imported output does not say is shown as such, not as iomark's default.
    for (i, what) in [(2, "qd"), (3, "jobs"), (4, "direct"), (5, "data")] {
        if c[i] == "-" {
            continue;
        }
        c[i] = crate::report::fmt::known_or(r, what, std::mem::take(&mut c[i]));
    }
    if let Some(f) = &r.fio {
        c[1] = f.bs.clone();
        if r.status == Status::Unsupported {
            c[0] = f.rw.clone();
        }
    }
    c
}

/// A run's rows: one per direction it did I/O in (a mix gets a read row and a write
/// row, each with its own figures), with the parameters, mean ± stddev of IOPS and MB/s,
/// then that direction's latencies in µs and what they measure (`lat` or fio's `clat`).
pub(crate) fn run_rows(r: &Run) -> Vec<Vec<String>> {
    summary_rows(r, &r.summary, true)
}

/// The rows of a run's target `i` on several targets, as [`run_rows`] (the run's name
/// and parameters) with that target's own figures; no measured data (the run's whole).
pub(crate) fn target_rows(r: &Run, i: usize) -> Vec<Vec<String>> {
    match r.targets.get(i) {
        Some(t) => summary_rows(r, &t.summary, false),
        None => Vec::new(),
    }
}

/// The rows of [`run_rows`] over `summary` (the run's, or one target's), with the
/// measured data on the write row when `data`.
fn summary_rows(
    r: &Run,
    summary: &crate::results::schema::Summary,
    data: bool,
) -> Vec<Vec<String>> {
    let st = r.study.as_ref();
    let mut dirs: Vec<(&str, &crate::results::schema::DirSummary)> =
        match (r.spec.reads(), r.spec.writes()) {
            (true, true) => vec![("read", &summary.read), ("write", &summary.write)],
            (false, true) => vec![("write", &summary.write)],
            _ => vec![("read", &summary.read)],
        };
    // Trims are their own direction (a trim-only pattern writes no data).
    if r.spec.rw.trims() {
        dirs.retain(|(d, _)| r.spec.rw.writes_data() && *d == "write");
        dirs.insert(0, ("trim", &summary.trim));
    }
    // A direction done beyond the pattern (fio's group_reporting over different jobs).
    for d in Direction::beyond_spec(r) {
        let at = if d == Direction::Read { 0 } else { dirs.len() };
        dirs.insert(at, (d.label(), d.summary(summary)));
    }
    dirs.into_iter()
        .map(|(dir, d)| {
            let mut cells = vec![
                format!("{}{}", r.name, r.status.label()),
                dir.to_string(),
                st.map_or(String::new(), |p| p.test.clone()),
                st.map_or(String::new(), |p| p.param.clone()),
                st.map_or(String::new(), |p| p.value.clone()),
            ];
            cells.extend(run_spec_cells(r));
            if r.repetitions.is_empty() {
                cells.extend(["0", "-", "-", "-", "-", "-", "-"].map(String::from));
            } else {
                cells.extend([
                    d.iops.n.to_string(),
                    format!("{:.0}", d.iops.mean),
                    fmt_sd(&d.iops, |v| format!("{v:.0}")),
                    format!("{:.2}", d.bw_bytes.mean / 1e6),
                    fmt_sd(&d.bw_bytes, |v| format!("{:.2}", v / 1e6)),
                    pct_us(r, "p50", &d.lat_p50_ns),
                    pct_us(r, "p99", &d.lat_p99_ns),
                ]);
            }
            cells.push(r.latency_kind.label().into());
            match dir {
                "write" if data => cells.extend(measured_data(r)),
                _ => cells.extend([NONE; 3].map(String::from)),
            }
            // The run's CPU (not a direction's, nor a target's: one process for all).
            cells.extend(match data {
                true => cpu_cells(r),
                false => [NONE; 2].map(String::from),
            });
            cells
        })
        .collect()
}

/// All runs of all documents, a row per run and direction; with several documents a first `file` column
/// says which one a run came from.
pub(crate) fn runs(docs: &[(String, Document)]) -> Table {
    let multi = docs.len() > 1;
    let file = multi.then_some("file");
    let mut t = Table::new(file.into_iter().chain(RUN_HEADER));
    for (label, d) in docs {
        for r in &d.runs {
            for row in run_rows(r) {
                let label = multi.then(|| label.clone());
                t.push(label.into_iter().chain(row));
            }
        }
    }
    t
}

/// The table printed after a plan: a row per run with IOPS, MB/s, mean, p50 and p99
/// latency (both directions summed for mixes; latencies of the dominant direction).
pub(crate) fn plan(doc: &Document) -> Table {
    let mut t = Table::new(["test", "IOPS", "MB/s", "mean lat", "p50 lat", "p99 lat"]);
    for run in &doc.runs {
        let Some(rep) = run.repetitions.last() else {
            continue;
        };
        let sm = &run.summary;
        let iops = sm.read.iops.mean + sm.write.iops.mean;
        let bw = sm.read.bw_bytes.mean + sm.write.bw_bytes.mean;
        // The direction that did the most (reads on a tie, as max_by_key keeps the last).
        let d = [&rep.trim, &rep.write, &rep.read]
            .into_iter()
            .max_by_key(|d| d.ios)
            .expect("three directions");
        let lat = &d.lat_ns;
        let name = format!("{}{}", run.name, run.status.label());
        // No I/O completed: no latency was measured.
        let cell = |name, ns| match d.ios {
            0 => NONE.to_string(),
            _ => lat_cell(run, name, ns),
        };
        t.push([
            name,
            fmt_count(iops),
            format!("{:.1}", bw / 1e6),
            cell(None, lat.mean),
            cell(Some("p50"), lat.p50 as f64),
            cell(Some("p99"), lat.p99 as f64),
        ]);
    }
    t
}

/// The `--dry-run` listing of a study: each run with its parameters and estimated time.
pub(crate) fn plan_listing(
    plan: &crate::plan::SuitePlan,
    est: &crate::plan::PlanEstimate,
) -> Table {
    let mut t = Table::new([
        "#", "test", "param", "rw", "bs", "qd", "jobs", "io", "data", "engine", "time", "est.",
    ]);
    for (i, r) in plan.runs.iter().enumerate() {
        let s = &r.plan.spec;
        let mut row = vec![
            (i + 1).to_string(),
            r.point.test.clone(),
            format!("{}={}", r.point.param, r.point.value),
        ];
        row.extend(spec_cells(s));
        // The engine and what was asked of it beyond the defaults.
        row.push(s.engine_opts.with_name(s.engine.name(), &[]));
        // What ends each repetition: its runtime, its volume, or whichever comes first.
        let volume = match (s.io_size, s.io_spans) {
            (Some(b), _) => Some(fmt_size(b)),
            (None, Some(n)) => Some(format!("{n}x span")),
            (None, None) => None,
        };
        row.extend([
            match (s.runtime_s, volume) {
                (Some(rt), None) => format!("{}x({}s+{}s)", r.plan.repeat, s.ramp_s, rt),
                (Some(rt), Some(v)) => format!("{}x({}s+{}s or {v})", r.plan.repeat, s.ramp_s, rt),
                (None, v) => format!("{}x({})", r.plan.repeat, v.as_deref().unwrap_or("span")),
            },
            match est.runs.get(i) {
                Some(Some((e, crate::plan::EstimateBasis::Runtime))) => fmt_duration(*e),
                Some(Some((e, _))) => format!("~{}", fmt_duration(*e)),
                _ => "?".into(),
            },
        ]);
        t.push(row);
    }
    t
}

/// Write saturation per minute: IOPS, MB/s and the total written by each minute's end.
pub(crate) fn wsat_minutes(rep: &Repetition) -> Table {
    let mut t = Table::new(["minute", "write IOPS", "MB/s", "written (GiB)"]);
    let mut flush = |minute: usize, ios: f64, bytes: f64, dt: f64, written: f64| {
        if dt > 0.0 {
            t.push([
                (minute + 1).to_string(),
                fmt_count(ios / dt),
                format!("{:.1}", bytes / dt / 1e6),
                format!("{:.2}", written / (1u64 << 30) as f64),
            ]);
        }
    };
    let (mut written, mut prev_t) = (0.0, 0.0);
    let mut minute = 0usize;
    let (mut ios, mut bytes, mut dt) = (0.0, 0.0, 0.0);
    for p in &rep.series {
        let m = ((p.t_s - 1e-9) / 60.0).floor().max(0.0) as usize;
        if m != minute {
            flush(minute, ios, bytes, dt, written);
            (ios, bytes, dt) = (0.0, 0.0, 0.0);
            minute = m;
        }
        let d = p.t_s - prev_t;
        prev_t = p.t_s;
        ios += p.write_iops * d;
        bytes += p.write_bw_bytes * d;
        written += p.write_bw_bytes * d;
        dt += d;
    }
    flush(minute, ios, bytes, dt, written);
    t
}

/// One test of a study: its table (the swept values as rows) and the queue-depth points
/// of its complete runs, for the saturation verdict.
pub(crate) struct StudyTable {
    pub test: String,
    pub param: String,
    pub table: Table,
    pub saturation: Vec<QdPoint>,
    /// The swept values of runs left out of `saturation` (cut short, failed).
    pub uncounted: Vec<u64>,
    /// Whether the test's runs are one workload that differs only in the swept value.
    pub one_workload: bool,
    /// Lines to print under the table (what a marked figure means).
    pub notes: Vec<String>,
}

/// Total IOPS at one queue depth: the mean and, with repetitions, the half-width of its
/// 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct QdPoint {
    pub qd: u64,
    pub mean: f64,
    pub ci95: Option<f64>,
}

/// Where IOPS stop growing with the queue depth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Saturation {
    /// `qd` is the smallest depth whose mean reaches 95% of the best mean (`best` at
    /// `best_qd`), and with repetitions its 95% interval overlaps the best's.
    At { qd: u64, best_qd: u64, best: f64 },
    /// Only the deepest queue measured reaches the best.
    Growing,
}

/// The saturation verdict over a queue-depth sweep (at least three depths): the smallest
/// depth reaching 95% of the best mean, and, where both have confidence intervals,
/// whose interval overlaps the best's (a depth significantly below the best has not
/// reached it). One noisy dip on the way does not end the search.
pub(crate) fn saturation(points: &[QdPoint]) -> Option<Saturation> {
    let mut points = points.to_vec();
    points.sort_by_key(|p| p.qd);
    points.dedup_by_key(|p| p.qd);
    if points.len() < 3 {
        return None;
    }
    let best = *points.iter().max_by(|a, b| a.mean.total_cmp(&b.mean))?;
    let reached = |p: &QdPoint| {
        p.mean >= 0.95 * best.mean
            && match (p.ci95, best.ci95) {
                (Some(a), Some(b)) => p.mean + a >= best.mean - b,
                _ => true,
            }
    };
    let first = points.iter().find(|p| reached(p))?;
    let deepest = points.last()?.qd;
    Some(if first.qd == deepest {
        Saturation::Growing
    } else {
        Saturation::At {
            qd: first.qd,
            best_qd: best.qd,
            best: best.mean,
        }
    })
}

/// A table per test of a study, in the order the tests first appear.
pub(crate) fn studies(doc: &Document) -> Vec<StudyTable> {
    let mut tests: Vec<(String, String)> = Vec::new();
    for r in &doc.runs {
        if let Some(p) = &r.study
            && !tests.iter().any(|(t, _)| *t == p.test)
        {
            tests.push((p.test.clone(), p.param.clone()));
        }
    }
    tests
        .into_iter()
        .map(|(test, param)| study(doc, test, param))
        .collect()
}

/// The workload of a run apart from its queue depth (and the name that shows it).
fn workload_but_qd(s: &Spec) -> Spec {
    let mut s = s.clone();
    s.qd = 0;
    s.jobs = 0;
    s.io_share = 0;
    s.engine_note = None;
    s
}

/// "62%" of a figure, or [`NONE`].
fn pct(v: Option<f64>) -> String {
    v.map_or(NONE.into(), |v| format!("{v:.0}%"))
}

/// The compressibility columns of a run: lz4 and zstd as measured (mean over the
/// repetitions that wrote), what the device stored of what it was given (zram), and the
/// write amplification of the best source.
fn data_cells(
    doc: &Document,
    r: &Run,
    blended: &mut Vec<(String, String)>,
    row: &str,
) -> [String; 4] {
    let stored = r
        .write_amplification_sources
        .iter()
        .find(|w| w.source == "zram")
        .and_then(|w| w.ratio)
        .map(|x| 100.0 * x);
    // A figure that blends in data outside the span is marked, and its share said below.
    let mut stored = pct(stored);
    let blend = crate::report::stored::blend(doc, r);
    if let Some(share) = blend.clone() {
        stored.push_str(" *");
        blended.push((row.to_string(), share));
    }
    [
        pct(data_mean(r, |d| Some(d.lz4_pct))),
        pct(data_mean(r, |d| Some(d.zstd_pct))),
        stored,
        r.write_amplification
            .as_ref()
            .and_then(|w| {
                let mark = if w.source == "zram" && blend.is_some() {
                    " *"
                } else {
                    ""
                };
                Some(format!("{:.2} ({}){mark}", w.ratio?, w.source))
            })
            .unwrap_or_else(|| NONE.into()),
    ]
}

fn study(doc: &Document, test: String, param: String) -> StudyTable {
    let compress = param == "compress";
    let mut header = vec![
        if compress {
            "compress (asked)"
        } else {
            param.as_str()
        },
        "IOPS",
        "± stddev",
        "MB/s",
        "± stddev",
        "p50 lat",
        "p99 lat",
        "CPU/IO",
        "CV",
        "n",
    ];
    if compress {
        header.extend(["lz4 saves", "zstd saves", "device stored", "write ampl."]);
    }
    let mut t = Table::new(header);
    let mut saturation = Vec::new();
    let mut uncounted = Vec::new();
    let mut workloads: Vec<Spec> = Vec::new();
    let mut blended = Vec::new();
    for r in &doc.runs {
        let Some(p) = r.study.as_ref().filter(|p| p.test == test) else {
            continue;
        };
        let w = workload_but_qd(&r.spec);
        if !workloads.contains(&w) {
            workloads.push(w);
        }
        let (iops, bw) = (
            r.summary.total(|x| &x.iops),
            r.summary.total(|x| &x.bw_bytes),
        );
        // Latency and variation of the direction that did the work.
        let main = r.summary.main();
        let mut label = p.value.clone();
        if compress {
            label.push('%');
        }
        if r.status == Status::Interrupted {
            label.push_str(" (interrupted)");
        }
        // What the page cache did is measured; old documents without the figure get no
        // label.
        if let Some(hit) = r.page_cache_hit_pct() {
            label.push_str(&format!(" ({hit:.0}% from cache)"));
        }
        // Buffered writes: what reached the device within the window (the flush
        // included when one was in it; the run's note says which).
        if let Some(w) = r.device_wrote_pct() {
            label.push_str(&format!(" (device wrote {})", crate::units::fmt_pct(w)));
        }
        if let Ok(q) = p.value.parse::<u64>()
            && r.status != Status::Complete
        {
            uncounted.push(q);
        }
        if let Ok(q) = p.value.parse::<u64>()
            && r.status == Status::Complete
        {
            let ci95 = (iops.n > 1).then(|| {
                crate::results::stats::t975(iops.n - 1) * iops.stddev / (iops.n as f64).sqrt()
            });
            saturation.push(QdPoint {
                qd: q,
                mean: iops.mean,
                ci95,
            });
        }
        let mut row = if r.repetitions.is_empty() {
            // Nothing measured (cut before its window): no figures, not zeros.
            let mut row = vec![label];
            row.extend([NONE; 8].map(String::from));
            row.push("0".into());
            row
        } else {
            vec![
                label,
                fmt_count(iops.mean),
                fmt_sd(&iops, fmt_count),
                format!("{:.1}", bw.mean / 1e6),
                fmt_sd(&bw, |v| format!("{:.1}", v / 1e6)),
                fmt_lat(&main.lat_p50_ns),
                fmt_lat(&main.lat_p99_ns),
                // The job threads' CPU time per I/O: what fio's figures count, so an
                // imported fio run and iomark's compare like with like (the process's,
                // with io_uring's kernel workers, stood beside fio's job threads').
                cpu_mean(r, |x| x.cpu.workers.per_io_ns).map_or(NONE.into(), crate::units::fmt_ns),
                main.iops.cv_pct.map_or(NONE.into(), |c| format!("{c:.1}%")),
                r.summary
                    .read
                    .iops
                    .n
                    .max(r.summary.write.iops.n)
                    .to_string(),
            ]
        };
        if compress {
            row.extend(data_cells(doc, r, &mut blended, &format!("{}%", p.value)));
        }
        t.push(row);
    }
    StudyTable {
        test,
        param,
        table: t,
        saturation,
        uncounted,
        one_workload: workloads.len() == 1,
        notes: crate::report::stored::footnote(&blended)
            .into_iter()
            .collect(),
    }
}

//! Terminal text made from results: the summary of one run and the table of a plan.
//! Reads only the results structs; never runs I/O. Returns strings; the caller prints.

use std::fmt::Write;

use crate::results::schema::{DirStats, Document, Run, Status};
use crate::results::stats::Spread;
use crate::units::{fmt_ns, fmt_size};

/// 45231.7 → "45.2k", 1234567 → "1.23M", 812.4 → "812".
pub fn fmt_count(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Bytes per second as MB/s (10^6), the unit storage vendors use.
pub fn fmt_mbps(bw_bytes: f64) -> String {
    let mb = bw_bytes / 1e6;
    if mb >= 100.0 {
        format!("{mb:.0} MB/s")
    } else {
        format!("{mb:.1} MB/s")
    }
}

fn dir_lines(out: &mut String, label: &str, d: &DirStats) {
    let _ = writeln!(
        out,
        "  {label}: {} IOPS, {} ({:.1} MiB/s), {} I/Os, {}",
        fmt_count(d.iops),
        fmt_mbps(d.bw_bytes),
        d.bw_bytes / (1u64 << 20) as f64,
        d.ios,
        fmt_size(d.bytes)
    );
    let l = &d.lat_ns;
    let _ = writeln!(
        out,
        "         latency min {}  mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}  max {}",
        fmt_ns(l.min as f64),
        fmt_ns(l.mean),
        fmt_ns(l.p50 as f64),
        fmt_ns(l.p90 as f64),
        fmt_ns(l.p99 as f64),
        fmt_ns(l.p999 as f64),
        fmt_ns(l.p9999 as f64),
        fmt_ns(l.max as f64)
    );
}

fn pm(s: &Spread, f: fn(f64) -> String) -> String {
    if s.n > 1 {
        format!("{} ± {}", f(s.mean), f(s.stddev))
    } else {
        f(s.mean)
    }
}

/// The summary of one run, several lines.
pub fn run_summary(run: &Run) -> String {
    let mut out = String::new();
    let s = &run.spec;
    let _ = writeln!(
        out,
        "{}: {} on {} ({} span, {}, {}{})",
        run.name,
        s.engine.name(),
        run.target.path,
        fmt_size(run.target.span_bytes),
        if s.direct { "direct" } else { "buffered" },
        match s.runtime_s {
            Some(r) => format!("{r}s"),
            None => "size-based".into(),
        },
        if run.status == Status::Interrupted {
            ", INTERRUPTED"
        } else {
            ""
        }
    );
    for w in &run.warnings {
        let _ = writeln!(out, "  note: {w}");
    }
    for rep in &run.repetitions {
        if run.repetitions.len() > 1 {
            let _ = writeln!(
                out,
                " repetition {}{}: {:.2} s",
                rep.index,
                if rep.status == Status::Interrupted {
                    " (interrupted)"
                } else {
                    ""
                },
                rep.elapsed_s
            );
        } else {
            let _ = writeln!(out, "  measured {:.2} s", rep.elapsed_s);
        }
        if rep.read.ios > 0 || s.reads() {
            dir_lines(&mut out, "read ", &rep.read);
        }
        if rep.write.ios > 0 || s.writes() {
            dir_lines(&mut out, "write", &rep.write);
        }
        let _ = writeln!(
            out,
            "  cpu  : user {:.2} s, sys {:.2} s, {} per I/O{}",
            rep.cpu.user_s,
            rep.cpu.sys_s,
            fmt_ns(rep.cpu.per_io_ns),
            if rep.fsyncs > 0 {
                format!("; {} fsyncs", rep.fsyncs)
            } else {
                String::new()
            }
        );
        if let Some(d) = &rep.data {
            let dd = &s.data;
            let mut line = format!(
                "  data : {} → measured lz4 {:.1}%, zstd-1 {:.1}% smaller",
                dd.describe(),
                d.lz4_pct,
                d.zstd_pct
            );
            if dd.dedup > 0.0 || d.dedup_pct >= 0.05 {
                line.push_str(&format!(
                    "; {:.1}% duplicate {} units",
                    d.dedup_pct,
                    crate::units::fmt_size_short(dd.dedup_unit)
                ));
            }
            let _ = writeln!(out, "{line}");
        }
        if let Some(v) = &rep.verify {
            let _ = writeln!(out, "  {}", v.describe());
        }
        match &rep.device {
            Some(d) => {
                let _ = writeln!(
                    out,
                    "  device {}: {} reads ({}), {} writes ({}) reached the block layer",
                    d.name,
                    d.read_ios,
                    fmt_size(d.read_bytes),
                    d.write_ios,
                    fmt_size(d.write_bytes)
                );
            }
            None if s.engine.name() != "null" => {
                let _ = writeln!(out, "  device: no block device visible under the target");
            }
            None => {}
        }
    }
    if run.repetitions.len() > 1 {
        let sm = &run.summary;
        let _ = writeln!(
            out,
            " across {} repetitions (mean ± sample stddev):",
            sm.read.iops.n.max(sm.write.iops.n)
        );
        for (label, d, used) in [
            ("read ", &sm.read, s.reads()),
            ("write", &sm.write, s.writes()),
        ] {
            if !used {
                continue;
            }
            let _ = writeln!(
                out,
                "  {label}: {} IOPS (min {}, max {}), {}, p99 {}",
                pm(&d.iops, fmt_count),
                fmt_count(d.iops.min),
                fmt_count(d.iops.max),
                pm(&d.bw_bytes, fmt_mbps),
                pm(&d.lat_p99_ns, fmt_ns)
            );
        }
    }
    out
}

/// One table row per run: test, IOPS, MB/s, mean, p50 and p99 latency (both directions
/// summed for mixes; latencies of the dominant direction).
pub fn plan_table(doc: &Document) -> String {
    let mut rows: Vec<[String; 6]> = vec![[
        "test".into(),
        "IOPS".into(),
        "MB/s".into(),
        "mean lat".into(),
        "p50 lat".into(),
        "p99 lat".into(),
    ]];
    for run in &doc.runs {
        let Some(rep) = run.repetitions.last() else {
            continue;
        };
        let sm = &run.summary;
        let iops = sm.read.iops.mean + sm.write.iops.mean;
        let bw = sm.read.bw_bytes.mean + sm.write.bw_bytes.mean;
        let lat = if rep.read.ios >= rep.write.ios {
            &rep.read.lat_ns
        } else {
            &rep.write.lat_ns
        };
        let mut name = run.name.clone();
        if run.status == Status::Interrupted {
            name.push_str(" (interrupted)");
        }
        rows.push([
            name,
            fmt_count(iops),
            format!("{:.1}", bw / 1e6),
            fmt_ns(lat.mean),
            fmt_ns(lat.p50 as f64),
            fmt_ns(lat.p99 as f64),
        ]);
    }
    let mut widths = [0usize; 6];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        let mut line = format!("{:<w$}", r[0], w = widths[0]);
        for (c, w) in r.iter().zip(widths).skip(1) {
            let _ = write!(line, "  {:>w$}", c, w = w);
        }
        let _ = writeln!(out, "{}", line.trim_end());
        if i == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
            let _ = writeln!(out, "{}", "-".repeat(total));
        }
    }
    out
}

/// 75 → "1:15", 3725 → "1:02:05".
pub fn fmt_duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Right-aligned columns with a header rule.
fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0usize; cols];
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        let mut line = String::new();
        for (j, c) in r.iter().enumerate() {
            let pad = widths[j] - c.chars().count();
            if j == 0 {
                line.push_str(c);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str("  ");
                line.push_str(&" ".repeat(pad));
                line.push_str(c);
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
        if i == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
            let _ = writeln!(out, "{}", "-".repeat(total));
        }
    }
    out
}

/// The parameter cells of a run as the tables show them: rw, bs, qd, jobs, io, data.
pub fn spec_cells(s: &crate::plan::spec::Spec) -> [String; 6] {
    [
        s.rw.name().into(),
        crate::units::fmt_size_short(s.bs),
        s.qd.to_string(),
        s.jobs.to_string(),
        if s.direct { "direct" } else { "buffered" }.into(),
        if s.writes() {
            s.data.describe()
        } else {
            "-".into()
        },
    ]
}

/// The `--dry-run` listing of a study: each run with its parameters and estimated time.
pub fn plan_listing(plan: &crate::plan::SuitePlan) -> String {
    let mut rows = vec![vec![
        "#".to_string(),
        "test".into(),
        "param".into(),
        "rw".into(),
        "bs".into(),
        "qd".into(),
        "jobs".into(),
        "io".into(),
        "data".into(),
        "time".into(),
        "est.".into(),
    ]];
    let mut total = 0.0;
    let mut size_based = 0;
    for (i, r) in plan.runs.iter().enumerate() {
        let s = &r.plan.spec;
        let est = crate::plan::estimate_s(&r.plan);
        match est {
            Some(e) => total += e,
            None => size_based += 1,
        }
        let mut row = vec![
            (i + 1).to_string(),
            r.point.test.clone(),
            format!("{}={}", r.point.param, r.point.value),
        ];
        row.extend(spec_cells(s));
        row.extend([
            match s.runtime_s {
                Some(rt) => format!("{}x({}s+{}s)", r.plan.repeat, s.ramp_s, rt),
                None => format!("{}x size", r.plan.repeat),
            },
            est.map_or("?".into(), fmt_duration),
        ]);
        rows.push(row);
    }
    let mut out = format!(
        "suite {} on {}: {} runs, engine {}\n",
        plan.name,
        plan.target,
        plan.runs.len(),
        plan.runs.first().map_or("-", |r| r.plan.spec.engine.name())
    );
    out.push_str(&table(&rows));
    let _ = writeln!(
        out,
        "estimated total: {}{}",
        fmt_duration(total),
        if size_based > 0 {
            format!(" plus {size_based} size-based runs (their time depends on the device)")
        } else {
            String::new()
        }
    );
    out
}

/// Write saturation per minute: IOPS and the total written by the end of each minute.
pub fn wsat_minutes(rep: &crate::results::schema::Repetition) -> String {
    let mut rows = vec![vec![
        "minute".to_string(),
        "write IOPS".into(),
        "MB/s".into(),
        "written (GiB)".into(),
    ]];
    let (mut written, mut prev_t) = (0.0, 0.0);
    let mut minute = 0usize;
    let (mut ios, mut bytes, mut dt) = (0.0, 0.0, 0.0);
    let flush = |rows: &mut Vec<Vec<String>>,
                 minute: usize,
                 ios: f64,
                 bytes: f64,
                 dt: f64,
                 written: f64| {
        if dt > 0.0 {
            rows.push(vec![
                (minute + 1).to_string(),
                fmt_count(ios / dt),
                format!("{:.1}", bytes / dt / 1e6),
                format!("{:.2}", written / (1u64 << 30) as f64),
            ]);
        }
    };
    for p in &rep.series {
        let m = ((p.t_s - 1e-9) / 60.0).floor().max(0.0) as usize;
        if m != minute {
            flush(&mut rows, minute, ios, bytes, dt, written);
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
    flush(&mut rows, minute, ios, bytes, dt, written);
    format!("\nwrite saturation per minute\n{}", table(&rows))
}

/// One table per test of a study: the swept parameter as rows, mean ± stddev columns.
pub fn study_tables(doc: &Document) -> String {
    let mut tests: Vec<(String, String)> = Vec::new();
    for r in &doc.runs {
        if let Some(p) = &r.study
            && !tests.iter().any(|(t, _)| *t == p.test)
        {
            tests.push((p.test.clone(), p.param.clone()));
        }
    }
    let mut out = String::new();
    for (test, param) in tests {
        let runs: Vec<&Run> = doc
            .runs
            .iter()
            .filter(|r| r.study.as_ref().is_some_and(|p| p.test == test))
            .collect();
        let mut rows = vec![vec![
            param.clone(),
            "IOPS".into(),
            "± stddev".into(),
            "MB/s".into(),
            "± stddev".into(),
            "p50 lat".into(),
            "p99 lat".into(),
            "CV".into(),
            "n".into(),
        ]];
        let mut sat = Vec::new();
        for r in &runs {
            let p = r.study.as_ref().expect("filtered on study");
            let (d, w) = (&r.summary.read, &r.summary.write);
            let t = r.summary.total(|x| &x.iops);
            let (iops, iops_sd) = (t.mean, t.stddev);
            let t = r.summary.total(|x| &x.bw_bytes);
            let (bw, bw_sd) = (t.mean, t.stddev);
            // Latency and variation of the direction that did the work.
            let lat = r.summary.main();
            let cv = lat.iops.cv_pct;
            let mut label = p.value.clone();
            if r.status == Status::Interrupted {
                label.push_str(" (interrupted)");
            }
            if r.cache_bound {
                label.push_str(" (cache)");
            }
            if let Ok(q) = p.value.parse::<u64>()
                && r.status == Status::Complete
            {
                sat.push((q, iops));
            }
            rows.push(vec![
                label,
                fmt_count(iops),
                fmt_count(iops_sd),
                format!("{:.1}", bw / 1e6),
                format!("{:.1}", bw_sd / 1e6),
                fmt_ns(lat.lat_p50_ns.mean),
                fmt_ns(lat.lat_p99_ns.mean),
                cv.map_or("-".into(), |c| format!("{c:.1}%")),
                d.iops.n.max(w.iops.n).to_string(),
            ]);
        }
        let _ = writeln!(out, "\n{test}");
        out.push_str(&table(&rows));
        if param == "qd" && sat.len() > 1 {
            match crate::plan::suite::saturation(&sat) {
                Some(q) => {
                    let _ = writeln!(
                        out,
                        "IOPS stop growing at QD {q}: doubling it adds less than 5%"
                    );
                }
                None => {
                    let _ = writeln!(out, "IOPS still growing at the deepest queue measured");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(fmt_count(45_231.7), "45.2k");
        assert_eq!(fmt_count(1_234_567.0), "1.23M");
        assert_eq!(fmt_count(812.4), "812");
        assert_eq!(fmt_count(9.25), "9.2");
        assert_eq!(fmt_mbps(185_000_000.0), "185 MB/s");
        assert_eq!(fmt_duration(75.0), "1:15");
        assert_eq!(fmt_duration(3725.0), "1:02:05");
    }
}

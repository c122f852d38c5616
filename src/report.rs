//! Terminal text made from results: the summary of one run and the table of a plan.
//! Reads only the results structs; never runs I/O. Returns strings; the caller prints.

use std::fmt::Write;

use crate::results::{DirStats, Document, Run, Status};
use crate::stats::Spread;
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
    }
}

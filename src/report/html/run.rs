//! A run's article in the HTML report: what was run where, notes, charts of one
//! repetition (throughput and latency over time, write saturation for `wsat`, latency
//! percentiles), the environment table and the full spec. Reads results only.

use std::fmt::Write;

use crate::report::chart::{LineChart, Series, line_chart};
use crate::report::markup::esc;
use crate::results::schema::{Point, Repetition, Run, Status};

/// The fewest intervals a time series needs to be drawn as one.
const MIN_INTERVALS: usize = 3;

/// The article of one run of the document labelled `label`, under `heading` (unique in
/// the page: the run's name with its swept value); `imported` for another tool's output.
pub(super) fn run_article(label: &str, heading: &str, r: &Run, imported: bool) -> String {
    let mut out = format!(
        "<article class=\"run\"><h3>{}{}</h3>",
        esc(heading),
        r.status.label()
    );
    let _ = write!(
        out,
        "<p>{} · {} ({}, span {}) · {} · {} repetition(s)</p>",
        esc(label),
        esc(&crate::report::notes::engine_on_target(r)),
        crate::report::notes::kind_words(r.target.kind),
        crate::report::notes::span_words(r),
        crate::report::fmt::known_or(
            r,
            "direct",
            if r.spec.direct { "direct" } else { "buffered" }.into()
        ),
        r.repetitions.len()
    );
    if let Some(e) = &r.error {
        let _ = write!(out, "<p class=\"warn\">error: {}</p>", esc(e));
    }
    for w in &r.warnings {
        let _ = write!(out, "<p class=\"warn\">note: {}</p>", esc(w));
    }
    out.push_str(&verify_findings(r));
    // The charts show the first complete repetition, else the first.
    if let Some(rep) = r
        .repetitions
        .iter()
        .find(|x| x.status == Status::Complete)
        .or(r.repetitions.first())
    {
        let wsat = r.study.as_ref().is_some_and(|p| p.suite == "wsat");
        out.push_str("<div class=\"charts\">");
        if rep.series.len() >= MIN_INTERVALS {
            out.push_str(&over_time(r, rep));
            if wsat {
                out.push_str(&write_saturation(rep));
            }
        }
        out.push_str(&percentiles(r, rep));
        out.push_str("</div>");
        if rep.series.len() < MIN_INTERVALS {
            let what = if wsat {
                "time series or write saturation"
            } else {
                "time series"
            };
            let why = match interval_s(rep) {
                _ if imported => {
                    "the run was imported from another tool's output, which carries no time series"
                        .to_string()
                }
                Some(x) => format!(
                    "repetition {} has {} interval(s) over {x:.2} s, and a time series needs at least {MIN_INTERVALS}; run longer or give a shorter --interval",
                    rep.index,
                    rep.series.len()
                ),
                None => format!(
                    "repetition {} recorded no intervals (it ended within the first), and a time series needs at least {MIN_INTERVALS}; run longer or give a shorter --interval",
                    rep.index
                ),
            };
            let _ = write!(out, "<p class=\"no-series\">No {what} chart: {why}.</p>");
        }
    }
    if let Some(t) = crate::report::targets::run_targets(r) {
        let _ = write!(
            out,
            "<h4>Per target</h4>{}<p class=\"note\">{}.</p>",
            t.html("targets"),
            esc(crate::report::targets::AGGREGATE_NOTE)
        );
        out.push_str(&crate::report::targets::stacked_chart(r).unwrap_or_default());
    }
    if let Some(t) = crate::report::targets::run_ranks(r) {
        let _ = write!(
            out,
            "<h4>Per rank</h4>{}<p class=\"note\">{}.</p>",
            t.html("ranks"),
            esc(crate::report::targets::RANKS_NOTE)
        );
        out.push_str(&crate::report::targets::rank_chart(r).unwrap_or_default());
    }
    if let Some(t) = crate::report::targets::run_group(r) {
        let _ = write!(
            out,
            "<h4>Measured together</h4>{}<p class=\"note\">{}.</p>",
            t.html("group"),
            esc(crate::report::targets::GROUP_NOTE)
        );
    }
    if let Some(t) = crate::report::targets::run_hosts(r) {
        let _ = write!(
            out,
            "<h4>Per host</h4>{}<p class=\"note\">{}.</p>",
            t.html("hosts"),
            esc(crate::report::targets::HOSTS_NOTE)
        );
    }
    let amp = crate::report::tables::run_amplification(r);
    if !amp.rows.is_empty() {
        out.push_str(&amp.html("env"));
    }
    // The fields an import does not give (named as the spec's) are shown unknown.
    let mut spec = serde_json::to_value(&r.spec).unwrap_or_default();
    for what in r.fio.iter().flat_map(|f| &f.unknown) {
        if let Some(v) = spec.get_mut(what) {
            *v = crate::report::fmt::UNKNOWN.into();
        }
    }
    let _ = write!(
        out,
        "<details><summary>Full spec</summary><pre>{}</pre></details></article>",
        esc(&serde_json::to_string_pretty(&spec).unwrap_or_default())
    );
    out
}

/// What `--verify` found in each repetition, and in each file when several were
/// verified apart; a finding with bad blocks is a warning.
fn verify_findings(r: &Run) -> String {
    let mut out = String::new();
    for rep in &r.repetitions {
        let Some(v) = &rep.verify else { continue };
        let class = match v.corrupt + v.misplaced + v.stale {
            0 => "note",
            _ => "warn",
        };
        let files: String = (rep.targets.iter())
            .filter_map(|t| {
                let tv = t.verify.as_ref()?;
                Some(format!(
                    "<li>{}: {}</li>",
                    esc(&t.path),
                    esc(&tv.describe())
                ))
            })
            .collect();
        let _ = write!(
            out,
            "<p class=\"{class}\">repetition {}: {}</p>",
            rep.index,
            esc(&v.describe())
        );
        if !files.is_empty() {
            let _ = write!(out, "<ul class=\"{class}\">{files}</ul>");
        }
    }
    out
}

/// How long the repetition's time series runs (the last point's end time), if any.
fn interval_s(rep: &Repetition) -> Option<f64> {
    rep.series.last().map(|p| p.t_s)
}

/// Throughput and latency (mean, p99) over the repetition's time series.
fn over_time(r: &Run, rep: &Repetition) -> String {
    let pts = |f: fn(&Point) -> f64| rep.series.iter().map(|p| (p.t_s, f(p))).collect();
    let mut tp = Vec::new();
    if r.spec.reads() {
        tp.push(Series {
            name: "read MB/s".into(),
            points: pts(|p| p.read_bw_bytes / 1e6),
        });
    }
    if r.spec.writes() && r.spec.rw.writes_data() {
        tp.push(Series {
            name: "write MB/s".into(),
            points: pts(|p| p.write_bw_bytes / 1e6),
        });
    }
    if r.spec.rw.trims() {
        tp.push(Series {
            name: "trim MB/s".into(),
            points: pts(|p| p.trim_bw_bytes / 1e6),
        });
    }
    let throughput = line_chart(&LineChart {
        title: format!("Throughput over time (repetition {})", rep.index),
        x_label: "time (s)".into(),
        y_label: "MB/s".into(),
        x_unit: "s".into(),
        y_unit: "MB/s".into(),
        series: tp,
        markers: rep.series.len() <= 60,
        x_zero: true,
        ..LineChart::default()
    });
    let latency = line_chart(&LineChart {
        title: format!("Latency over time (repetition {})", rep.index),
        x_label: "time (s)".into(),
        y_label: "latency (µs)".into(),
        x_unit: "s".into(),
        y_unit: "µs".into(),
        series: vec![
            Series {
                name: "mean".into(),
                points: pts(|p| p.lat_mean_ns / 1e3),
            },
            Series {
                name: "p99".into(),
                points: pts(|p| p.lat_p99_ns as f64 / 1e3),
            },
        ],
        x_zero: true,
        ..LineChart::default()
    });
    throughput + &latency
}

/// Write saturation: IOPS against the total written so far (in GiB, or MiB below one
/// GiB so the axis reads).
fn write_saturation(rep: &Repetition) -> String {
    let mut written = 0.0;
    let mut prev_t = 0.0;
    let mut pts = Vec::new();
    for p in &rep.series {
        written += p.write_bw_bytes * (p.t_s - prev_t);
        prev_t = p.t_s;
        pts.push((written, p.write_iops));
    }
    let (unit, div) = if written >= (1u64 << 30) as f64 {
        ("GiB", (1u64 << 30) as f64)
    } else {
        ("MiB", (1u64 << 20) as f64)
    };
    line_chart(&LineChart {
        title: "Write saturation: IOPS vs data written".into(),
        x_label: format!("total written ({unit})"),
        y_label: "write IOPS".into(),
        x_unit: unit.into(),
        y_unit: "IOPS".into(),
        series: vec![Series {
            name: "write IOPS".into(),
            points: pts.into_iter().map(|(w, i)| (w / div, i)).collect(),
        }],
        markers: rep.series.len() <= 120,
        x_zero: true,
        ..LineChart::default()
    })
}

/// Latency percentiles of each direction that did I/O, on a log scale; empty when none.
fn percentiles(r: &Run, rep: &Repetition) -> String {
    let labels = ["p50", "p90", "p99", "p99.9", "p99.99", "max"];
    let names = ["p50", "p90", "p99", "p999", "p9999", "max"];
    let mut pct = Vec::new();
    for (name, d) in [
        ("read", &rep.read),
        ("write", &rep.write),
        ("trim", &rep.trim),
    ] {
        if d.ios == 0 {
            continue;
        }
        let l = &d.lat_ns;
        let v = [l.p50, l.p90, l.p99, l.p999, l.p9999, l.max];
        pct.push(Series {
            name: name.into(),
            // A percentile fio did not report is left out, not drawn as 0.
            points: v
                .iter()
                .enumerate()
                .filter(|(i, _)| names[*i] == "max" || r.has_percentile(names[*i]))
                .map(|(i, &x)| (i as f64, x as f64 / 1e3))
                .collect(),
        });
    }
    if pct.is_empty() {
        return String::new();
    }
    line_chart(&LineChart {
        // One repetition's, as the charts over time (the tables give the mean over the
        // repetitions): said when there are several.
        title: match r.repetitions.len() {
            1 => format!("Latency percentiles ({})", r.latency_kind.describe()),
            _ => format!(
                "Latency percentiles ({}, repetition {})",
                r.latency_kind.describe(),
                rep.index
            ),
        },
        x_label: "percentile".into(),
        y_label: format!("{} (µs, log)", r.latency_kind.label()),
        y_unit: "µs".into(),
        y_log: true,
        x_ticks: Some(
            labels
                .iter()
                .enumerate()
                .map(|(i, l)| (i as f64, l.to_string()))
                .collect(),
        ),
        series: pct,
        markers: true,
        ..LineChart::default()
    })
}

//! Self-contained HTML pages: the report (summary table, study charts, per-run time series
//! and latency percentiles, environment, full specs) and the comparison. Inline CSS and
//! inline SVG only: no scripts, fonts or references to other files, so a page works from
//! `file://` and can be mailed around. Reads results only.

use std::fmt::Write;

use crate::report::chart::{BarChart, BarGroup, LineChart, Series, bar_chart, line_chart};
use crate::report::compare::Comparison;
use crate::results::schema::{Document, Run, Status};
use crate::units::fmt_size;

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}h2{border-bottom:2px solid #0072B2;padding-bottom:4px}\
.charts{display:flex;flex-wrap:wrap;gap:12px}.warn{color:#a04000}pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px}\
svg.chart{border:1px solid #eee;max-width:100%;height:auto}.sig{color:#006b4f;font-weight:bold}";

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>{body}</body></html>\n",
        t = esc(title)
    )
}

fn table(class: &str, rows: &[Vec<String>]) -> String {
    let mut out = format!("<table class=\"{class}\">");
    for (i, r) in rows.iter().enumerate() {
        out.push_str("<tr>");
        for c in r {
            if i == 0 {
                let _ = write!(out, "<th>{}</th>", esc(c));
            } else {
                let _ = write!(out, "<td>{}</td>", esc(c));
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

/// Total IOPS of a run (reads + writes) with the combined stddev.
fn iops(r: &Run) -> (f64, f64) {
    let t = r.summary.total(|d| &d.iops);
    (t.mean, t.stddev)
}

/// A swept value as a number, when it is one (qd 32, bs 4k → 4096).
fn numeric(param: &str, v: &str) -> Option<f64> {
    if param == "compress" || param == "cache" {
        return None;
    }
    v.parse::<f64>()
        .ok()
        .or_else(|| crate::units::parse_size(v).ok().map(|x| x as f64))
}

/// Sorting in an expression: points of a line in x order, whatever order the runs had.
trait TapSort {
    fn tap_sort(self) -> Self;
}

impl TapSort for Vec<(f64, f64)> {
    fn tap_sort(mut self) -> Self {
        self.sort_by(|a, b| a.0.total_cmp(&b.0));
        self
    }
}

fn study_section(label: &str, doc: &Document) -> String {
    // Group by the swept parameter; within it, one series or bar group per test.
    let mut params: Vec<String> = Vec::new();
    for r in &doc.runs {
        if let Some(p) = &r.study
            && !params.contains(&p.param)
        {
            params.push(p.param.clone());
        }
    }
    let mut out = String::new();
    for param in params {
        let runs: Vec<&Run> = doc
            .runs
            .iter()
            .filter(|r| r.study.as_ref().is_some_and(|p| p.param == param))
            .collect();
        let mut tests: Vec<String> = Vec::new();
        let mut values: Vec<String> = Vec::new();
        for r in &runs {
            let p = r.study.as_ref().expect("filtered");
            if !tests.contains(&p.test) {
                tests.push(p.test.clone());
            }
            if !values.contains(&p.value) {
                values.push(p.value.clone());
            }
        }
        if runs.len() < 2 {
            // A single run (e.g. the precondition pass) has nothing to chart against.
            continue;
        }
        let suite = runs[0].study.as_ref().map_or("", |p| p.suite.as_str());
        let _ = write!(
            out,
            "<section class=\"study\" data-param=\"{}\"><h3>{} — {} ({})</h3><div class=\"charts\">",
            esc(&param),
            esc(suite),
            esc(&param),
            esc(label)
        );
        let all_numeric = values.iter().all(|v| numeric(&param, v).is_some());
        if all_numeric {
            let series_of = |f: &dyn Fn(&Run) -> f64| -> Vec<Series> {
                tests
                    .iter()
                    .map(|t| Series {
                        name: t.clone(),
                        points: runs
                            .iter()
                            .filter(|r| r.study.as_ref().is_some_and(|p| &p.test == t))
                            .filter_map(|r| {
                                let p = r.study.as_ref()?;
                                Some((numeric(&param, &p.value)?, f(r)))
                            })
                            .collect::<Vec<_>>()
                            .tap_sort(),
                    })
                    .collect()
            };
            let mut ticks: Vec<(f64, String)> = values
                .iter()
                .filter_map(|v| numeric(&param, v).map(|x| (x, v.clone())))
                .collect();
            ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
            let log_x = param != "round"
                && ticks.len() > 2
                && ticks.iter().all(|(x, _)| *x > 0.0)
                && ticks.last().map(|t| t.0).unwrap_or(1.0) / ticks[0].0 >= 16.0;
            let mut series = series_of(&|r| iops(r).0);
            let mut bands = Vec::new();
            let mut title = format!("IOPS vs {param}");
            // Steady state: the window, and its bounds (mean ± 10%: a 20% data excursion).
            if param == "round"
                && let Some(s) = &doc.steady_state
                && let (Some([a, b]), Some(m)) = (s.window, s.mean)
            {
                let (a, b) = (a as f64, b as f64);
                let half = s.criteria.max_range_pct / 200.0;
                bands.push((
                    a - 0.3,
                    b + 0.3,
                    if s.reached {
                        "steady window".into()
                    } else {
                        "last window (not steady)".into()
                    },
                ));
                series.push(Series {
                    name: format!("+{:.0}% of mean", half * 100.0),
                    points: vec![(a, m * (1.0 + half)), (b, m * (1.0 + half))],
                });
                series.push(Series {
                    name: format!("−{:.0}% of mean", half * 100.0),
                    points: vec![(a, m * (1.0 - half)), (b, m * (1.0 - half))],
                });
                title = if s.reached {
                    format!("IOPS per round: steady at round {}", s.round.unwrap_or(0))
                } else {
                    format!("IOPS per round: not steady in {} rounds", s.rounds)
                };
            }
            out.push_str(&line_chart(&LineChart {
                title,
                x_label: param.clone(),
                y_label: "IOPS".into(),
                x_log: log_x,
                x_ticks: Some(ticks.clone()),
                series,
                markers: true,
                bands,
                ..LineChart::default()
            }));
            let mut lat = Vec::new();
            for (name, f) in [
                (
                    "p50",
                    (|r: &Run| r.summary.main().lat_p50_ns.mean / 1e3) as fn(&Run) -> f64,
                ),
                ("p99", |r: &Run| r.summary.main().lat_p99_ns.mean / 1e3),
            ] {
                for s in series_of(&f) {
                    lat.push(Series {
                        name: format!("{} {name}", s.name),
                        points: s.points,
                    });
                }
            }
            out.push_str(&line_chart(&LineChart {
                title: format!("Latency vs {param}"),
                x_label: param.clone(),
                y_label: "latency (µs)".into(),
                x_log: log_x,
                y_log: true,
                x_ticks: Some(ticks),
                series: lat,
                markers: true,
                ..LineChart::default()
            }));
        } else {
            let groups = values
                .iter()
                .map(|v| BarGroup {
                    name: format!("{param} {v}"),
                    values: tests
                        .iter()
                        .map(|t| {
                            runs.iter()
                                .find(|r| {
                                    r.study
                                        .as_ref()
                                        .is_some_and(|p| &p.test == t && &p.value == v)
                                })
                                .map_or((f64::NAN, 0.0), |r| iops(r))
                        })
                        .collect(),
                })
                .collect();
            out.push_str(&bar_chart(&BarChart {
                title: format!("IOPS by test and {param} (mean ± stddev)"),
                y_label: "IOPS".into(),
                categories: tests.clone(),
                groups,
            }));
        }
        out.push_str("</div></section>");
    }
    out
}

fn run_article(label: &str, r: &Run) -> String {
    let mut out = format!(
        "<article class=\"run\"><h3>{}{}</h3>",
        esc(&r.name),
        if r.status == Status::Interrupted {
            " (interrupted)"
        } else {
            ""
        }
    );
    let _ = write!(
        out,
        "<p>{} · target {} ({}, span {}) · engine {} · {} · {} repetition(s)</p>",
        esc(label),
        esc(&r.target.path),
        esc(&format!("{:?}", r.target.kind).to_lowercase()),
        fmt_size(r.target.span_bytes),
        r.spec.engine.name(),
        if r.spec.direct { "direct" } else { "buffered" },
        r.repetitions.len()
    );
    for w in &r.warnings {
        let _ = write!(out, "<p class=\"warn\">note: {}</p>", esc(w));
    }
    if let Some(rep) = r
        .repetitions
        .iter()
        .find(|x| x.status == Status::Complete)
        .or(r.repetitions.first())
    {
        out.push_str("<div class=\"charts\">");
        if !rep.series.is_empty() {
            let pts = |f: fn(&crate::results::schema::Point) -> f64| {
                rep.series.iter().map(|p| (p.t_s, f(p))).collect()
            };
            let mut tp = Vec::new();
            if r.spec.reads() {
                tp.push(Series {
                    name: "read MB/s".into(),
                    points: pts(|p| p.read_bw_bytes / 1e6),
                });
            }
            if r.spec.writes() {
                tp.push(Series {
                    name: "write MB/s".into(),
                    points: pts(|p| p.write_bw_bytes / 1e6),
                });
            }
            out.push_str(&line_chart(&LineChart {
                title: format!("Throughput over time (repetition {})", rep.index),
                x_label: "time (s)".into(),
                y_label: "MB/s".into(),
                series: tp,
                markers: rep.series.len() <= 60,
                ..LineChart::default()
            }));
            out.push_str(&line_chart(&LineChart {
                title: format!("Latency over time (repetition {})", rep.index),
                x_label: "time (s)".into(),
                y_label: "latency (µs)".into(),
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
                ..LineChart::default()
            }));
        }
        if r.study.as_ref().is_some_and(|p| p.suite == "wsat") && !rep.series.is_empty() {
            // Write saturation: IOPS against the total written so far.
            let mut written = 0.0;
            let mut prev_t = 0.0;
            let mut pts = Vec::new();
            for p in &rep.series {
                written += p.write_bw_bytes * (p.t_s - prev_t);
                prev_t = p.t_s;
                pts.push((written / (1u64 << 30) as f64, p.write_iops));
            }
            out.push_str(&line_chart(&LineChart {
                title: "Write saturation: IOPS vs data written".into(),
                x_label: "total written (GiB)".into(),
                y_label: "write IOPS".into(),
                series: vec![Series {
                    name: "write IOPS".into(),
                    points: pts,
                }],
                markers: rep.series.len() <= 120,
                ..LineChart::default()
            }));
        }
        let labels = ["p50", "p90", "p99", "p99.9", "p99.99", "max"];
        let mut pct = Vec::new();
        for (name, d, used) in [
            ("read", &rep.read, rep.read.ios > 0),
            ("write", &rep.write, rep.write.ios > 0),
        ] {
            if !used {
                continue;
            }
            let l = &d.lat_ns;
            let v = [l.p50, l.p90, l.p99, l.p999, l.p9999, l.max];
            pct.push(Series {
                name: name.into(),
                points: v
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| (i as f64, x as f64 / 1e3))
                    .collect(),
            });
        }
        if !pct.is_empty() {
            out.push_str(&line_chart(&LineChart {
                title: "Latency percentiles".into(),
                x_label: "percentile".into(),
                y_label: "latency (µs, log)".into(),
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
            }));
        }
        out.push_str("</div>");
    }
    let mut env = vec![vec!["".to_string(), "".to_string()]];
    for w in &r.write_amplification_sources {
        env.push(vec![
            format!("write amplification ({})", w.source),
            match w.ratio {
                Some(x) => format!(
                    "{x:.3} ({} of {} bytes) — {}",
                    w.device_bytes.unwrap_or(0),
                    w.host_bytes.unwrap_or(0),
                    w.note
                ),
                None => w.note.clone(),
            },
        ]);
    }
    if let Some(d) = &r.target.device {
        env.push(vec![
            "device".into(),
            format!("{} (disk {})", d.name, d.disk),
        ]);
        env.push(vec![
            "model".into(),
            d.model.clone().unwrap_or_else(|| "-".into()),
        ]);
        env.push(vec![
            "scheduler".into(),
            d.scheduler.clone().unwrap_or_else(|| "-".into()),
        ]);
        env.push(vec![
            "logical block size".into(),
            d.logical_block_size.map_or("-".into(), |v| v.to_string()),
        ]);
    }
    if let Some(f) = &r.target.filesystem {
        env.push(vec![
            "filesystem".into(),
            format!("{} on {}", f.fstype, f.mount_point),
        ]);
        env.push(vec!["mount options".into(), f.options.clone()]);
    }
    if env.len() > 1 {
        out.push_str(&table("env", &env));
    }
    let _ = write!(
        out,
        "<details><summary>Full spec</summary><pre>{}</pre></details></article>",
        esc(&serde_json::to_string_pretty(&r.spec).unwrap_or_default())
    );
    out
}

/// The report page for one or more documents.
pub fn report(docs: &[(String, Document)]) -> String {
    let mut body = String::new();
    body.push_str("<section id=\"summary\"><h2>Summary</h2>");
    body.push_str(&table("summary", &crate::report::export::run_rows(docs)));
    body.push_str("<p>IOPS and MB/s (10<sup>6</sup> bytes/s): mean and sample standard deviation over the complete repetitions (n). Latencies in µs: the mean over repetitions of each repetition's percentile.</p></section>");
    let studies: String = docs.iter().map(|(l, d)| study_section(l, d)).collect();
    if !studies.is_empty() {
        let _ = write!(
            body,
            "<section id=\"studies\"><h2>Studies</h2>{studies}</section>"
        );
    }
    body.push_str("<section id=\"runs\"><h2>Runs</h2>");
    for (l, d) in docs {
        for r in &d.runs {
            body.push_str(&run_article(l, r));
        }
    }
    body.push_str("</section><section id=\"environment\"><h2>Environment</h2>");
    for (l, d) in docs {
        let h = &d.host;
        body.push_str(&table(
            "host",
            &[
                vec!["".into(), l.clone()],
                vec!["tool".into(), format!("{} {}", d.tool.name, d.tool.version)],
                vec!["started".into(), d.started.clone()],
                vec!["host".into(), h.hostname.clone()],
                vec!["kernel".into(), h.kernel.clone()],
                vec!["CPU".into(), format!("{} ({} cores)", h.cpu, h.cores)],
                vec!["memory".into(), fmt_size(h.memory_bytes)],
            ],
        ));
    }
    body.push_str("</section>");
    page("iomark report", &body)
}

/// The comparison page: a grouped bar chart of IOPS and the table.
pub fn comparison(c: &Comparison) -> String {
    let groups = c
        .labels
        .iter()
        .enumerate()
        .map(|(i, l)| BarGroup {
            name: l.clone(),
            values: c
                .rows
                .iter()
                .map(|r| {
                    r.cells[i]
                        .as_ref()
                        .map_or((f64::NAN, 0.0), |x| (x.iops.mean, x.iops.stddev))
                })
                .collect(),
        })
        .collect();
    let chart = bar_chart(&BarChart {
        title: "IOPS (mean ± stddev)".into(),
        y_label: "IOPS".into(),
        categories: c.rows.iter().map(|r| r.key.clone()).collect(),
        groups,
    });
    let mut body = format!(
        "<section id=\"comparison\"><h2>Comparison</h2><div class=\"charts\">{chart}</div>"
    );
    let rows = crate::report::export::comparison_rows(c);
    let mut t = String::from("<table class=\"comparison\">");
    for (i, r) in rows.iter().enumerate() {
        t.push_str("<tr>");
        for cell in r {
            if i == 0 {
                let _ = write!(t, "<th>{}</th>", esc(cell));
            } else if cell.starts_with("significant") {
                let _ = write!(t, "<td class=\"sig\">{}</td>", esc(cell));
            } else {
                let _ = write!(t, "<td>{}</td>", esc(cell));
            }
        }
        t.push_str("</tr>");
    }
    t.push_str("</table>");
    let _ = write!(
        body,
        "{t}<p>Ratios are to <b>{}</b>. A difference is significant when Welch's t-test over the repetitions' IOPS gives p &lt; 0.05; with fewer than two repetitions on a side there is no test.</p></section>",
        esc(c.labels.first().map_or("", String::as_str))
    );
    page("iomark comparison", &body)
}

//! Self-contained HTML pages: the report (summary table, study charts, per-run time series
//! and latency percentiles, environment, full specs) and the comparison. Inline CSS and
//! inline SVG only: no scripts, fonts or references to other files, so a page works from
//! `file://` and can be mailed around. Tables come from `tables.rs`, charts from
//! `chart.rs`; `study.rs` and `run.rs` lay out their sections. Reads results only; knows
//! nothing of the other formats.

mod run;
mod study;

use std::fmt::Write;

use crate::report::chart::{BarChart, BarGroup, bar_chart};
use crate::report::compare::Comparison;
use crate::report::markup::esc;
use crate::report::tables;
use crate::results::schema::Document;

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}h2{border-bottom:2px solid #0072B2;padding-bottom:4px}\
.charts{display:flex;flex-wrap:wrap;gap:12px}.warn{color:#a04000}pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px}\
svg.chart{border:1px solid #eee;max-width:100%;height:auto}.sig{color:#006b4f;font-weight:bold}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><meta name=\"generator\" content=\"iomark\"><title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>{body}</body></html>\n",
        t = esc(title)
    )
}

/// The report page for one or more documents.
pub(crate) fn report(docs: &[(String, Document)]) -> String {
    let mut body = String::new();
    body.push_str("<section id=\"summary\"><h2>Summary</h2>");
    body.push_str(&tables::runs(docs).html("summary"));
    body.push_str("<p>IOPS and MB/s (10<sup>6</sup> bytes/s): mean and sample standard deviation over the complete repetitions (n). Latencies in µs: the mean over repetitions of each repetition's percentile.</p></section>");
    let studies: String = docs
        .iter()
        .map(|(l, d)| study::study_section(l, d))
        .collect();
    if !studies.is_empty() {
        let _ = write!(
            body,
            "<section id=\"studies\"><h2>Studies</h2>{studies}</section>"
        );
    }
    body.push_str("<section id=\"runs\"><h2>Runs</h2>");
    for (l, d) in docs {
        for r in &d.runs {
            body.push_str(&run::run_article(l, r));
        }
    }
    body.push_str("</section><section id=\"environment\"><h2>Environment</h2>");
    for (l, d) in docs {
        body.push_str(&tables::host(l, d).html("host"));
    }
    body.push_str("</section>");
    page("iomark report", &body)
}

/// The comparison page: a grouped bar chart of IOPS and the table.
pub(crate) fn comparison(c: &Comparison) -> String {
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
                    r.cells[i].as_ref().map_or((f64::NAN, 0.0), |x| {
                        let sd = if x.iops.n > 1 {
                            x.iops.stddev
                        } else {
                            f64::NAN
                        };
                        (x.iops.mean, sd)
                    })
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
    let body = format!(
        "<section id=\"comparison\"><h2>Comparison</h2><div class=\"charts\">{chart}</div>{}<p>Ratios are to <b>{}</b>. A difference is significant when Welch's t-test over the repetitions' IOPS gives p &lt; 0.05; with fewer than two repetitions on a side there is no test.</p></section>",
        tables::comparison(c).html("comparison"),
        esc(c.labels.first().map_or("", String::as_str))
    );
    page("iomark comparison", &body)
}

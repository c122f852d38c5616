//! Self-contained HTML pages: the report (summary table, study charts, per-run time series
//! and latency percentiles, environment, full specs) and the comparison. Inline CSS and
//! inline SVG only: no scripts, fonts or references to other files, so a page works from
//! `file://` and can be mailed around. Tables come from `tables.rs`, charts from
//! `chart.rs`; `study.rs` and `run.rs` lay out their sections. Reads results only; knows
//! nothing of the other formats.

mod run;
mod study;

use std::fmt::Write;

use crate::report::chart::{Estimate, Forest, forest};
use crate::report::compare::{Comparison, Figure};
use crate::report::markup::esc;
use crate::report::tables;
use crate::results::schema::Document;

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1800px;color:#222;padding:0 1em}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}h2{border-bottom:2px solid #0072B2;padding-bottom:4px}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,560px),1fr));gap:12px}.charts svg[data-kind=forest]{grid-column:1/-1;min-width:720px}.charts{overflow-x:auto}.table-wrap{overflow-x:auto}.warn{color:#a04000}pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px}\
svg.chart{border:1px solid #eee;width:100%;min-width:460px;height:auto}.sig{color:#006b4f;font-weight:bold}";

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
    body.push_str(&format!(
        "<p>{}</p></section>",
        crate::report::markup::esc(tables::RUN_LEGEND).replace("10^6", "10<sup>6</sup>")
    ));
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
    let mut headings: Vec<String> = Vec::new();
    for (l, d) in docs {
        for r in &d.runs {
            // Unique headings: the swept value, the document when there are several,
            // and a number for a run that is still the same as an earlier one.
            let mut h = crate::report::notes::run_label(r);
            if r.study.as_ref().is_some_and(|p| p.is_preparation()) {
                h.push_str(" (preparation)");
            }
            if docs.len() > 1 {
                h = format!("{h} — {l}");
            }
            let base = h.clone();
            let mut n = 1;
            while headings.contains(&h) {
                n += 1;
                h = format!("{base} (#{n})");
            }
            body.push_str(&run::run_article(l, &h, r, d.tool.name != "iomark"));
            headings.push(h);
        }
    }
    body.push_str("</section><section id=\"environment\"><h2>Environment</h2>");
    for (l, d) in docs {
        body.push_str(&tables::host(l, d).html("host"));
    }
    // Each distinct target environment once, with the runs it applies to.
    let mut envs: Vec<(String, Vec<String>)> = Vec::new();
    for (l, d) in docs {
        for r in &d.runs {
            let t = tables::run_environment(r);
            if t.rows.is_empty() {
                continue;
            }
            let html = t.html("env");
            let who = if docs.len() > 1 {
                format!("{} ({l})", crate::report::notes::run_label(r))
            } else {
                crate::report::notes::run_label(r)
            };
            match envs.iter_mut().find(|(h, _)| *h == html) {
                Some(e) => e.1.push(who),
                None => envs.push((html, vec![who])),
            }
        }
    }
    let total: usize = docs.iter().map(|(_, d)| d.runs.len()).sum();
    for (html, runs) in envs {
        let _ = write!(
            body,
            "<p class=\"env-runs\">Target of {}:</p>{html}",
            if runs.len() == total && total > 1 {
                "every run".to_string()
            } else {
                esc(&runs.join("; "))
            }
        );
    }
    body.push_str("</section>");
    page("iomark report", &body)
}

/// The comparison page: forest plots of the ratios to the baseline (IOPS, p99 latency),
/// a row per test, then the table.
pub(crate) fn comparison(c: &Comparison) -> String {
    let groups: Vec<String> = c
        .labels
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, l)| format!("{} {l}", tables::doc_tag(i)))
        .collect();
    // A forest row per run, and per direction for a latency (labelled with it).
    let chart = |f: Figure| {
        let mut rows = Vec::new();
        for r in &c.rows {
            let base = r.cells.iter().position(Option::is_some).unwrap_or(0);
            for (_, d) in r.tests().into_iter().filter(|(g, _)| *g == f) {
                let es = r
                    .cells
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != base)
                    .filter_map(|(i, cell)| {
                        let t = cell.as_ref()?.test(f, d)?;
                        let [lo, hi] = t.ratio_ci95.unwrap_or([f64::NAN; 2]);
                        Some(Estimate {
                            group: format!("{} {}", tables::doc_tag(i), c.labels[i]),
                            ratio: t.ratio.unwrap_or(f64::NAN),
                            lo,
                            hi,
                        })
                    })
                    .collect();
                let name = match d {
                    Some(d) => format!("{}, {} latency", r.key, d.label()),
                    None => r.key.clone(),
                };
                rows.push((name, es));
            }
        }
        forest(&Forest {
            title: format!("{} relative to {}", f.label(), c.labels[0]),
            x_label: format!(
                "ratio to the baseline with 95% interval, log scale ({})",
                if f.higher_is_better() {
                    "right is faster"
                } else {
                    "right is slower"
                }
            ),
            groups: groups.clone(),
            rows,
        })
    };
    // A note per file and difference, naming the runs it concerns.
    let mut differs: Vec<(usize, String, Vec<&str>)> = Vec::new();
    for r in &c.rows {
        for (i, cell) in r.cells.iter().enumerate() {
            let Some(cell) = cell.as_ref().filter(|x| !x.differs.is_empty()) else {
                continue;
            };
            let what = cell.differs.join(", ");
            match differs.iter_mut().find(|(j, w, _)| *j == i && *w == what) {
                Some(d) => d.2.push(&r.key),
                None => differs.push((i, what, vec![&r.key])),
            }
        }
    }
    let mut notes = String::new();
    for (i, what, keys) in differs {
        let _ = write!(
            notes,
            "<p class=\"warn differs\">note: {} differs from the baseline in {} ({}) — the figures may not be comparable</p>",
            esc(&c.labels[i]),
            esc(&what),
            if keys.len() == c.rows.len() {
                "every run".to_string()
            } else {
                esc(&keys.join("; "))
            }
        );
    }
    let body = format!(
        "<section id=\"comparison\"><h2>Comparison</h2><div class=\"charts\">{}{}</div>{notes}{}<p>Ratios are to <b>{}</b> (the first file that has the run), with their 95% confidence intervals (ratios of geometric means over the repetitions). A difference is significant when Welch's t-test on the logs of the repetitions' values gives p &lt; 0.05, which is exactly when the interval excludes 1, for IOPS, MB/s and p50/p99 latency each; with fewer than two repetitions on a side there is no test. IOPS and MB/s are totals; a latency is compared direction by direction (read with read, write with write), and a mix has a row per direction.</p></section>",
        chart(Figure::Iops),
        chart(Figure::LatP99Ns),
        tables::comparison(c).html("comparison"),
        esc(c.labels.first().map_or("", String::as_str))
    );
    page("iomark comparison", &body)
}

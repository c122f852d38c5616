//! The studies section of the HTML report: for each swept parameter, IOPS and latency
//! line charts against the swept value when it is a number (with the steady-state window
//! and its bounds on the `round` sweep), or a grouped bar chart of IOPS by test when the
//! values are names. Builds charts from results only; draws no tables.

use std::fmt::Write;

use crate::report::chart::{BarChart, BarGroup, LineChart, Series, bar_chart, line_chart};
use crate::report::markup::esc;
use crate::results::schema::{Document, Run};

/// Total IOPS of a run (reads + writes) with the combined stddev (NaN, no error bar,
/// for a single repetition).
fn iops(r: &Run) -> (f64, f64) {
    let t = r.summary.total(|d| &d.iops);
    (t.mean, if t.n > 1 { t.stddev } else { f64::NAN })
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

/// The runs of a document that sweep one parameter, with their tests and values in the
/// order they first appear.
struct Sweep<'a> {
    param: String,
    runs: Vec<&'a Run>,
    tests: Vec<String>,
    values: Vec<String>,
}

impl<'a> Sweep<'a> {
    fn of(doc: &'a Document, param: &str) -> Sweep<'a> {
        let runs: Vec<&Run> = doc
            .runs
            .iter()
            .filter(|r| {
                r.study
                    .as_ref()
                    .is_some_and(|p| p.param == param && !p.is_preparation())
            })
            .collect();
        let (mut tests, mut values) = (Vec::<String>::new(), Vec::<String>::new());
        for p in runs.iter().filter_map(|r| r.study.as_ref()) {
            if !tests.contains(&p.test) {
                tests.push(p.test.clone());
            }
            if !values.contains(&p.value) {
                values.push(p.value.clone());
            }
        }
        Sweep {
            param: param.to_string(),
            runs,
            tests,
            values,
        }
    }

    fn all_numeric(&self) -> bool {
        self.values
            .iter()
            .all(|v| numeric(&self.param, v).is_some())
    }

    /// A line per test: `f` of each of its runs against the swept value, in x order.
    fn series(&self, f: &dyn Fn(&Run) -> f64) -> Vec<Series> {
        self.tests
            .iter()
            .map(|t| {
                let mut points: Vec<(f64, f64)> = self
                    .runs
                    .iter()
                    .filter_map(|r| {
                        let p = r.study.as_ref().filter(|p| &p.test == t)?;
                        // A run cut before it measured anything has no point (not 0).
                        if r.repetitions.is_empty() {
                            return None;
                        }
                        Some((numeric(&self.param, &p.value)?, f(r)))
                    })
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series {
                    name: t.clone(),
                    points,
                }
            })
            .collect()
    }

    /// The swept values as x ticks, in numeric order.
    fn ticks(&self) -> Vec<(f64, String)> {
        let mut ticks: Vec<(f64, String)> = self
            .values
            .iter()
            .filter_map(|v| numeric(&self.param, v).map(|x| (x, v.clone())))
            .collect();
        ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
        ticks
    }
}

/// The study's name (`suite`) of a document's first study run.
fn suite_of(doc: &Document) -> Option<&str> {
    doc.runs
        .iter()
        .find_map(|r| r.study.as_ref().map(|p| p.suite.as_str()))
}

/// A section per swept parameter of `doc` that has at least two measured runs; for
/// `quick` and `corners` the four corners at a glance instead. Preparation runs (fill,
/// precondition) are listed apart and never charted as a study category.
pub(super) fn study_section(label: &str, doc: &Document) -> String {
    let mut out = String::new();
    if let Some(suite @ ("quick" | "corners")) = suite_of(doc) {
        let _ = write!(
            out,
            "<section class=\"study overview\" data-suite=\"{s}\"><h3>{s} — the four corners ({l})</h3><div class=\"charts\">{c}</div><p>Sequential tests in MB/s and random tests in IOPS, as CrystalDiskMark shows them: mean ± stddev over the repetitions.</p></section>",
            s = esc(suite),
            l = esc(label),
            c = overview(doc)
        );
        return out;
    }
    let mut params: Vec<String> = Vec::new();
    for r in &doc.runs {
        if let Some(p) = &r.study
            && !params.contains(&p.param)
        {
            params.push(p.param.clone());
        }
    }
    let tables = crate::report::tables::studies(doc);
    for param in params {
        let sweep = Sweep::of(doc, &param);
        if sweep.runs.len() < 2 {
            // A single run (e.g. wsat's) has nothing to chart against.
            continue;
        }
        let suite = sweep.runs[0]
            .study
            .as_ref()
            .map_or("", |p| p.suite.as_str());
        let _ = write!(
            out,
            "<section class=\"study\" data-param=\"{}\"><h3>{} — {} ({})</h3><div class=\"charts\">",
            esc(&param),
            esc(suite),
            esc(&param),
            esc(label)
        );
        if sweep.all_numeric() {
            out.push_str(&line_charts(doc, &sweep));
        } else {
            out.push_str(&iops_bars(&sweep));
        }
        out.push_str("</div>");
        // The study's tables, as the text report has them (the measured data columns
        // of a compress study, the saturation verdict of a queue-depth sweep).
        for st in tables.iter().filter(|t| t.param == param) {
            let _ = write!(out, "<h4>{}</h4>{}", esc(&st.test), st.table.html("study"));
            let lines = st
                .notes
                .iter()
                .cloned()
                .chain(crate::report::text::study_verdict(st));
            for n in lines {
                let _ = write!(out, "<p class=\"note\">{}</p>", esc(&n));
            }
        }
        if param == "round"
            && let Some(v) = crate::report::notes::steady_verdict(doc)
        {
            let _ = write!(out, "<p class=\"steady\">{}</p>", esc(v.trim_end()));
        }
        out.push_str(&preparation_note(doc));
        out.push_str("</section>");
    }
    out
}

/// The preparation runs of a study (fill, precondition), named apart from the charts.
fn preparation_note(doc: &Document) -> String {
    let prep: Vec<String> = doc
        .runs
        .iter()
        .filter(|r| r.study.as_ref().is_some_and(|p| p.is_preparation()))
        .map(|r| {
            let p = r.study.as_ref().map_or(String::new(), |p| {
                format!("{} at {} {}", p.test, p.param, p.value)
            });
            let bw = r.summary.total(|d| &d.bw_bytes).mean;
            format!("{p} ({}, {:.1} MB/s)", esc(&r.name), bw / 1e6)
        })
        .collect();
    if prep.is_empty() {
        return String::new();
    }
    format!(
        "<p class=\"preparation\">Preparation runs, not charted (they lay out the data the measured runs read): {}.</p>",
        esc(&prep.join("; "))
    )
}

/// Mean and stddev (NaN for one repetition) of a figure of a run's total.
fn total(
    r: &Run,
    f: fn(&crate::results::schema::DirSummary) -> &crate::results::stats::Spread,
    scale: f64,
) -> (f64, f64) {
    let t = r.summary.total(f);
    (
        t.mean * scale,
        if t.n > 1 { t.stddev * scale } else { f64::NAN },
    )
}

/// The four corners at a glance: sequential runs in MB/s, random runs in IOPS, a bar
/// each with its stddev.
fn overview(doc: &Document) -> String {
    let measured: Vec<&Run> = doc
        .runs
        .iter()
        .filter(|r| r.study.as_ref().is_some_and(|p| !p.is_preparation()))
        .collect();
    let chart = |random: bool| {
        let runs: Vec<&&Run> = measured
            .iter()
            .filter(|r| r.spec.rw.is_random() == random)
            .collect();
        if runs.is_empty() {
            return String::new();
        }
        let (title, unit, values): (String, &str, Vec<(f64, f64)>) = if random {
            (
                "Random I/O: IOPS (mean ± stddev)".into(),
                "IOPS",
                runs.iter().map(|r| total(r, |d| &d.iops, 1.0)).collect(),
            )
        } else {
            (
                "Sequential I/O: MB/s (mean ± stddev)".into(),
                "MB/s",
                runs.iter()
                    .map(|r| total(r, |d| &d.bw_bytes, 1e-6))
                    .collect(),
            )
        };
        bar_chart(&BarChart {
            title,
            y_label: unit.into(),
            categories: runs
                .iter()
                .map(|r| crate::report::notes::run_label(r))
                .collect(),
            groups: vec![BarGroup {
                name: unit.into(),
                values,
            }],
        })
    };
    chart(false) + &chart(true)
}

/// IOPS and latency against a numeric swept value; a log x axis for wide ranges.
fn line_charts(doc: &Document, sweep: &Sweep) -> String {
    let param = &sweep.param;
    let ticks = sweep.ticks();
    let x_log = *param != "round"
        && ticks.len() > 2
        && ticks.iter().all(|(x, _)| *x > 0.0)
        && ticks.last().map(|t| t.0).unwrap_or(1.0) / ticks[0].0 >= 16.0;
    let mut iops_chart = LineChart {
        title: format!("IOPS vs {param}"),
        x_label: param.clone(),
        y_label: "IOPS".into(),
        y_unit: "IOPS".into(),
        x_log,
        x_ticks: Some(ticks.clone()),
        series: sweep.series(&|r| iops(r).0),
        markers: true,
        ..LineChart::default()
    };
    if *param == "round" {
        steady_overlay(doc, &mut iops_chart);
    }
    let mut lat = Vec::new();
    for (name, f) in [
        (
            "p50",
            (|r: &Run| r.summary.main().lat_p50_ns.mean / 1e3) as fn(&Run) -> f64,
        ),
        ("p99", |r: &Run| r.summary.main().lat_p99_ns.mean / 1e3),
    ] {
        for s in sweep.series(&f) {
            lat.push(Series {
                name: format!("{} {name}", s.name),
                points: s.points,
            });
        }
    }
    let lat_chart = LineChart {
        title: format!("Latency vs {param}"),
        x_label: param.clone(),
        y_label: "latency (µs, log)".into(),
        y_unit: "µs".into(),
        x_log,
        y_log: true,
        x_ticks: Some(ticks),
        series: lat,
        markers: true,
        ..LineChart::default()
    };
    line_chart(&iops_chart) + &line_chart(&lat_chart)
}

/// Steady state on the IOPS-per-round chart: the window, and its bounds (mean ± 10%: a
/// 20% data excursion), and a title saying whether it was reached.
fn steady_overlay(doc: &Document, chart: &mut LineChart) {
    let Some(s) = &doc.steady_state else {
        return;
    };
    let (Some([a, b]), Some(m)) = (s.window, s.mean) else {
        return;
    };
    let (a, b) = (a as f64, b as f64);
    let half = s.criteria.max_range_pct / 200.0;
    chart.bands.push((
        a - 0.3,
        b + 0.3,
        if s.reached {
            "steady window".into()
        } else {
            "last window (not steady)".into()
        },
    ));
    chart.series.push(Series {
        name: format!("+{:.0}% of mean", half * 100.0),
        points: vec![(a, m * (1.0 + half)), (b, m * (1.0 + half))],
    });
    chart.series.push(Series {
        name: format!("−{:.0}% of mean", half * 100.0),
        points: vec![(a, m * (1.0 - half)), (b, m * (1.0 - half))],
    });
    chart.title = if s.reached {
        format!("IOPS per round: steady at round {}", s.round.unwrap_or(0))
    } else {
        format!("IOPS per round: not steady in {} rounds", s.rounds)
    };
}

/// Named swept values: a bar group per value, a bar per test (mean ± stddev IOPS).
fn iops_bars(sweep: &Sweep) -> String {
    let param = &sweep.param;
    let groups = sweep
        .values
        .iter()
        .map(|v| BarGroup {
            name: format!("{param} {v}"),
            values: sweep
                .tests
                .iter()
                .map(|t| {
                    sweep
                        .runs
                        .iter()
                        .find(|r| {
                            r.study
                                .as_ref()
                                .is_some_and(|p| &p.test == t && &p.value == v)
                        })
                        // Nothing measured: no bar (not one of 0).
                        .filter(|r| !r.repetitions.is_empty())
                        .map_or((f64::NAN, 0.0), |r| iops(r))
                })
                .collect(),
        })
        .collect();
    bar_chart(&BarChart {
        title: format!("IOPS by test and {param} (mean ± stddev)"),
        y_label: "IOPS".into(),
        categories: sweep.tests.clone(),
        groups,
    })
}

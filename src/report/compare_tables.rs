//! The comparison's tables: one long table of every test and document, and one small
//! table per test for the terminal and Markdown (files named A, B, …), built from
//! `compare::Comparison`. Drawing them is `table.rs`' job.

use crate::report::compare::{Cell as CmpCell, Comparison, Figure, Row, Test, Verdict};
use crate::report::fmt::{NONE, fmt_sd};
use crate::report::table::{Cell, Table};

/// The short name of the `i`th document of a comparison: A, B, … Z, then 27, 28, ….
pub(crate) fn doc_tag(i: usize) -> String {
    match u8::try_from(i) {
        Ok(n) if n < 26 => char::from(b'A' + n).to_string(),
        _ => (i + 1).to_string(),
    }
}

/// A figure's value as the comparison shows it.
fn cmp_value(f: Figure, v: f64) -> String {
    let v = v * f.scale();
    match f {
        Figure::Iops => format!("{v:.0}"),
        _ => format!("{v:.1}"),
    }
}

/// The mean of a figure's spread as shown, [`NONE`] without values (a latency of
/// repetitions in which no I/O completed).
fn cmp_mean(f: Figure, s: &crate::results::stats::Spread) -> String {
    match s.n {
        0 => NONE.into(),
        _ => cmp_value(f, s.mean),
    }
}

/// "1.200 (1.180–1.221)", "baseline", or [`NONE`].
fn ratio_text(t: &Test) -> String {
    if t.verdict == Verdict::Baseline {
        return "baseline".into();
    }
    match (t.ratio, t.ratio_ci95) {
        (Some(r), Some([lo, hi])) => format!("{r:.3} ({lo:.3}–{hi:.3})"),
        (Some(r), None) => format!("{r:.3}"),
        _ => NONE.into(),
    }
}

fn verdict_cell(c: &CmpCell, t: &Test) -> Cell {
    let mut verdict = match t.verdict {
        Verdict::Baseline => String::new(),
        v => v.describe(),
    };
    if c.incomplete {
        verdict.push_str(" (interrupted run)");
    }
    match t.verdict {
        Verdict::Significant { .. } => Cell::with_class(verdict.trim_start(), "sig"),
        _ => Cell::from(verdict.trim_start()),
    }
}

/// One matched run of a comparison: a row per test (figure, and a latency's direction) and
/// document (file tag, test, mean, sd, ratio to the baseline with its 95% interval,
/// Welch's verdict), and a note per document whose run differs from the baseline's in
/// span, runtime, data, …. Narrow enough for a terminal: the files are named by tag (A,
/// B, …), the run by a heading.
pub(crate) fn comparison_row(c: &Comparison, row: &Row) -> (Table, Vec<String>) {
    let mut t = Table::new([
        "file",
        "figure",
        "mean",
        "sd",
        "ratio (95% CI)",
        "difference",
    ]);
    let mut notes = Vec::new();
    let base = row.cells.iter().position(Option::is_some).unwrap_or(0);
    for (fi, (f, d)) in row.tests().into_iter().enumerate() {
        for (di, cell) in row.cells.iter().enumerate() {
            let Some(cell) = cell else {
                if fi == 0 {
                    notes.push(format!(
                        "{} ({}) has no measured run like it",
                        doc_tag(di),
                        c.labels[di]
                    ));
                }
                continue;
            };
            let Some(test) = cell.test(f, d) else {
                continue;
            };
            t.rows.push(vec![
                Cell::from(doc_tag(di)),
                Cell::from(test.label()),
                Cell::from(cmp_mean(f, &test.spread)),
                Cell::from(fmt_sd(&test.spread, |v| cmp_value(f, v))),
                Cell::from(ratio_text(test)),
                verdict_cell(cell, test),
            ]);
            if fi == 0 && !cell.differs.is_empty() {
                notes.push(format!(
                    "{} differs from {}: {} — the figures may not be comparable",
                    doc_tag(di),
                    doc_tag(base),
                    cell.differs.join(", ")
                ));
            }
        }
    }
    (t, notes)
}

/// The comparison as one table (CSV, HTML): a row per matched run, document and
/// test (figure, and a latency's direction), with the ratio's interval in two columns; significant verdicts carry the
/// class `sig`.
pub(crate) fn comparison(c: &Comparison) -> Table {
    let mut t = Table::new([
        "run",
        "file",
        "figure",
        "n",
        "mean",
        "sd",
        "ratio",
        "ratio 95% low",
        "ratio 95% high",
        "difference",
        "differs from baseline",
    ]);
    for r in &c.rows {
        for (f, d) in r.tests() {
            for (di, cell) in r.cells.iter().enumerate() {
                let Some(test) = cell.as_ref().and_then(|x| x.test(f, d)) else {
                    continue;
                };
                let cell = cell.as_ref().expect("has the test");
                let ci = |i: usize| {
                    test.ratio_ci95
                        .map_or(NONE.into(), |c| format!("{:.4}", c[i]))
                };
                t.rows.push(vec![
                    Cell::from(r.key.clone()),
                    Cell::from(c.labels[di].clone()),
                    Cell::from(test.label()),
                    Cell::from(test.spread.n.to_string()),
                    Cell::from(cmp_mean(f, &test.spread)),
                    Cell::from(fmt_sd(&test.spread, |v| cmp_value(f, v))),
                    Cell::from(test.ratio.map_or(NONE.into(), |x| format!("{x:.4}"))),
                    Cell::from(ci(0)),
                    Cell::from(ci(1)),
                    match test.verdict {
                        Verdict::Baseline => Cell::from("baseline"),
                        _ => verdict_cell(cell, test),
                    },
                    Cell::from(cell.differs.join("; ")),
                ]);
            }
        }
    }
    t
}

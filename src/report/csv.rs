//! The CSV report: one table a spreadsheet can take whole. A row per run and direction
//! (the per-run table of `tables.rs`), then, for a run on several targets, a row per
//! target and direction with that target's own figures (`target` names it; empty on the
//! run's aggregate rows). Beside the per-run columns are what the study tables add, as
//! plain numbers: CV, the page cache's share of the reads, what the device wrote of the
//! buffered writes, what zram stored and the write amplification with its source; then
//! the study's verdict and the notes under its table (on every row of that test), and
//! the run's notes. Reads results only; returns text.

use crate::report::fmt::NONE;
use crate::report::table::{Cell, Table};
use crate::report::tables;
use crate::results::schema::{Document, Run};

/// The columns after the per-run table's, before `notes`.
pub(crate) const EXTRA_HEADER: [&str; 8] = [
    "target",
    "CV %",
    "from cache %",
    "device wrote %",
    "device stored %",
    "write ampl.",
    "write ampl. source",
    "verdict",
];

/// A figure with `decimals`, or [`NONE`].
fn num(v: Option<f64>, decimals: usize) -> String {
    v.map_or(NONE.into(), |v| format!("{v:.decimals$}"))
}

/// The study verdicts and table notes of a document by test name, each joined in one
/// cell: the queue-depth verdict, the blended "device stored" footnote, and for a
/// dirty-drive study's rounds its steady-state verdict.
fn verdicts(doc: &Document) -> Vec<(String, String)> {
    let steady = crate::report::notes::steady_verdict(doc).map(|v| v.trim().to_string());
    tables::studies(doc)
        .into_iter()
        .map(|st| {
            let mut said: Vec<String> = crate::report::text::study_verdict(&st)
                .into_iter()
                .chain(st.notes.iter().cloned())
                .collect();
            if st.param == "round" {
                said.extend(steady.clone());
            }
            (st.test.clone(), said.join(" | "))
        })
        .collect()
}

/// The extra cells of one row of `run` in direction `dir` (target `target`, or the
/// run's aggregate when empty), the direction's CV from `cv`.
fn extra_cells(run: &Run, dir: &str, target: &str, cv: Option<f64>, verdict: &str) -> Vec<String> {
    let whole = target.is_empty();
    let write = whole && dir == "write";
    let zram = (run.write_amplification_sources.iter())
        .find(|w| w.source == "zram")
        .and_then(|w| w.ratio);
    let wa = run.write_amplification.as_ref().filter(|_| write);
    vec![
        target.to_string(),
        num(cv, 1),
        num(
            run.page_cache_hit_pct().filter(|_| whole && dir == "read"),
            1,
        ),
        num(run.device_wrote_pct().filter(|_| write), 1),
        num(zram.filter(|_| write).map(|x| 100.0 * x), 1),
        num(wa.and_then(|w| w.ratio), 3),
        wa.map_or(NONE.into(), |w| w.source.clone()),
        verdict.to_string(),
    ]
}

/// The CV (percent) of a direction's IOPS in a summary.
fn cv(s: &crate::results::schema::Summary, dir: &str) -> Option<f64> {
    match dir {
        "read" => s.read.iops.cv_pct,
        "write" => s.write.iops.cv_pct,
        "trim" => s.trim.iops.cv_pct,
        _ => None,
    }
}

/// The report as CSV (see the module's comment).
pub(crate) fn report_csv(docs: &[(String, Document)]) -> String {
    let multi = docs.len() > 1;
    let header = (multi.then_some("file").into_iter())
        .chain(tables::RUN_HEADER)
        .chain(EXTRA_HEADER)
        .chain(["notes"]);
    let mut t = Table::new(header);
    for (label, d) in docs {
        let verdicts = verdicts(d);
        for r in &d.runs {
            let verdict = (r.study.as_ref())
                .and_then(|p| verdicts.iter().find(|(t, _)| *t == p.test))
                .map_or("", |(_, v)| v.as_str());
            let notes = r.warnings.join(" | ");
            let mut push = |row: Vec<String>, target: &str, s| {
                let dir = row[1].clone();
                let mut cells: Vec<Cell> = Vec::new();
                if multi {
                    cells.push(Cell::from(label.clone()));
                }
                cells.extend(row.into_iter().map(Cell::from));
                let extra = extra_cells(r, &dir, target, cv(s, &dir), verdict);
                cells.extend(extra.into_iter().map(Cell::from));
                cells.push(Cell::from(notes.clone()));
                t.rows.push(cells);
            };
            for row in tables::run_rows(r) {
                push(row, "", &r.summary);
            }
            for (i, part) in r.targets.iter().enumerate() {
                for row in tables::target_rows(r, i) {
                    push(row, &part.target.path, &part.summary);
                }
            }
        }
    }
    t.csv()
}

//! The text formats of `report` and `compare` besides HTML: Markdown (a heading, the
//! documents' provenance, the table and its legend, a study's tables and verdicts, the
//! per-target, per-rank and group tables of a run, the runs' notes), CSV (`csv.rs`) and JSON (the merged document
//! or the comparison as data). Tables come from `tables.rs`; every function returns text,
//! the caller decides where it goes. Reads results only; knows nothing of HTML.

use crate::report::compare::Comparison;
use crate::report::tables;
use crate::results::schema::Document;

/// The report as Markdown: a line per document saying where it came from, then the runs.
pub(crate) fn report_markdown(docs: &[(String, Document)]) -> String {
    let mut out = String::from("# iomark report\n\n");
    for (label, d) in docs {
        out.push_str(&format!("- `{label}`: {}\n", tables::provenance(d)));
    }
    out.push('\n');
    out.push_str(&tables::runs(docs).markdown());
    out.push_str(&format!("\n{}\n", tables::RUN_LEGEND));
    // A study's tables (the swept value as rows), as the run printed them.
    for (label, d) in docs {
        for st in tables::studies(d) {
            let who = match docs.len() {
                1 => String::new(),
                _ => format!(" (`{label}`)"),
            };
            out.push_str(&format!("\n## {}{who}\n\n{}", st.test, st.table.markdown()));
            for n in &st.notes {
                out.push_str(&format!("\n{n}\n"));
            }
            if let Some(v) = crate::report::text::study_verdict(&st) {
                out.push_str(&format!("\n{v}\n"));
            }
        }
    }
    out.push_str(&run_parts(docs));
    // A dirty-drive study's verdict, as the run printed it.
    for (label, d) in docs {
        if let Some(v) = crate::report::notes::steady_verdict(d) {
            let who = if docs.len() > 1 {
                format!("`{label}`: ")
            } else {
                String::new()
            };
            out.push_str(&format!("\n{who}{v}"));
        }
    }
    // Every run's notes, as the text and HTML reports give them: figures without them
    // (a page cache that served the reads, a device that wrote nothing) mislead.
    let notes: Vec<String> = (docs.iter())
        .flat_map(|(label, d)| d.runs.iter().map(move |r| (label, r)))
        .flat_map(|(label, r)| {
            let who = match docs.len() {
                1 => r.name.clone(),
                _ => format!("`{label}` {}", r.name),
            };
            r.warnings.iter().map(move |w| format!("- {who}: {w}\n"))
        })
        .collect();
    if !notes.is_empty() {
        out.push_str("\n## Notes\n\n");
        out.extend(notes);
    }
    out
}

/// The report as CSV: one table (`csv.rs`).
pub(crate) fn report_csv(docs: &[(String, Document)]) -> String {
    crate::report::csv::report_csv(docs)
}

/// The tables the text and HTML reports give under a run on several targets, over MPI
/// ranks or hosts, or measured with others (a fio group), each under a heading naming
/// the run and followed by what it means.
fn run_parts(docs: &[(String, Document)]) -> String {
    use crate::report::targets as t;
    let mut out = String::new();
    for (label, d) in docs {
        for r in &d.runs {
            let who = match docs.len() {
                1 => r.name.clone(),
                _ => format!("{} (`{label}`)", r.name),
            };
            let parts = [
                ("Per target", t::run_targets(r), t::AGGREGATE_NOTE),
                ("Per rank", t::run_ranks(r), t::RANKS_NOTE),
                ("Per host", t::run_hosts(r), t::HOSTS_NOTE),
                ("Measured together", t::run_group(r), t::GROUP_NOTE),
            ];
            for (what, table, note) in parts {
                if let Some(table) = table {
                    out.push_str(&format!(
                        "\n## {what}: {who}\n\n{}\n{note}.\n",
                        table.markdown()
                    ));
                }
            }
        }
    }
    out
}

/// The report as one JSON document: the first document with every later one's runs.
pub(crate) fn report_json(docs: &[(String, Document)]) -> String {
    let mut merged = docs
        .first()
        .map(|(_, d)| d.clone())
        .expect("at least one input");
    for (_, d) in &docs[1..] {
        merged.runs.extend(d.runs.iter().cloned());
    }
    merged.to_json() + "\n"
}

/// The comparison as Markdown: which file is which, what the ratios and verdicts mean,
/// then a heading and a table per matched run (every line within 100 columns unless a
/// file name or a run's parameters are longer).
pub(crate) fn comparison_markdown(c: &Comparison) -> String {
    let mut out = String::from("# iomark comparison\n\n");
    for (i, l) in c.labels.iter().enumerate() {
        out.push_str(&format!(
            "- {}: `{l}`{}\n",
            tables::doc_tag(i),
            if i == 0 { " (baseline)" } else { "" }
        ));
    }
    out.push_str(
        "\nRatios are to the first file that has the run (of geometric means over the\n\
         repetitions), with their 95% confidence intervals; a difference is significant\n\
         when Welch's t-test on the logs of the repetitions gives p < 0.05, which is when\n\
         the interval excludes 1. IOPS and MB/s are totals; each latency row names its\n\
         direction, the same on both sides (a mix has a row per direction).\n",
    );
    for row in &c.rows {
        let (t, notes) = tables::comparison_row(c, row);
        out.push_str(&format!("\n## {}\n\n{}", row.key, t.markdown()));
        for n in notes {
            out.push_str(&format!("\nnote: {n}\n"));
        }
    }
    out
}

/// The comparison as CSV.
pub(crate) fn comparison_csv(c: &Comparison) -> String {
    tables::comparison(c).csv()
}

/// The comparison as JSON.
pub(crate) fn comparison_json(c: &Comparison) -> String {
    serde_json::to_string_pretty(c).expect("comparison serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::spec::Rw;
    use crate::results::testdoc::{doc, run};

    #[test]
    fn a_mixed_run_gets_a_read_row_and_a_write_row() {
        let mut r = run(Rw::RandRw, 1, &[1000.0, 1100.0], None);
        // Reads and writes at different rates: the rows must not be one merged figure.
        for rep in &mut r.repetitions {
            rep.write.iops /= 4.0;
            rep.write.bw_bytes /= 4.0;
        }
        r.summary = crate::results::schema::Summary::of(&r.repetitions);
        let docs = vec![("m.json".to_string(), doc(vec![r]))];
        let csv = report_csv(&docs);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3, "{csv}");
        assert!(lines[0].starts_with("run,dir,"), "{csv}");
        assert!(
            lines[1].contains(",read,") && lines[1].contains(",1050,"),
            "{csv}"
        );
        assert!(
            lines[2].contains(",write,") && lines[2].contains(",262,"),
            "{csv}"
        );
        let md = report_markdown(&docs);
        assert_eq!(md.lines().filter(|l| l.starts_with("| randrw")).count(), 2);
    }

    #[test]
    fn provenance_of_fio_output_and_of_a_host() {
        let mut d = doc(Vec::new());
        assert_eq!(
            crate::report::tables::provenance(&d)
                .split(", started")
                .next(),
            Some("iomark 0.1.0 on h (c, kernel k), 0 runs")
        );
        d.tool.name = "fio".into();
        d.tool.version = "fio-3.33".into();
        d.host.hostname = "fio".into();
        d.host.kernel.clear();
        d.host.cpu.clear();
        let md = report_markdown(&[("f.json".into(), d)]);
        let line = md.lines().find(|l| l.starts_with("- `f.json`")).unwrap();
        assert!(
            line.starts_with("- `f.json`: fio-3.33 output (imported; host not recorded), 0 runs"),
            "{line}"
        );
        assert!(!line.contains("()") && !line.contains("(,"), "{line}");
    }

    /// The notes a run earned are in the Markdown and CSV reports too (they were only in
    /// the text and HTML): a section in Markdown, a last column on each of a run's rows.
    #[test]
    fn notes_are_in_markdown_and_csv() {
        let mut mix = run(Rw::RandRw, 1, &[1000.0], None);
        mix.warnings = vec!["the page cache served it".into(), "drift".into()];
        let quiet = run(Rw::RandRead, 1, &[1000.0], None);
        let docs = vec![("m.json".to_string(), doc(vec![mix, quiet]))];
        let md = report_markdown(&docs);
        let notes = md
            .split("\n## Notes\n\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{md}"));
        assert_eq!(
            notes.lines().collect::<Vec<_>>(),
            [
                "- randrw 50/50 4k qd1: the page cache served it",
                "- randrw 50/50 4k qd1: drift"
            ]
        );
        let csv = report_csv(&docs);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].ends_with(",notes"), "{csv}");
        // The mix's read and write rows both carry its notes; the quiet run none.
        assert!(
            lines[1].ends_with(",the page cache served it | drift"),
            "{csv}"
        );
        assert!(
            lines[2].ends_with(",the page cache served it | drift"),
            "{csv}"
        );
        assert!(lines[3].ends_with(','), "{csv}");
        let clean =
            report_markdown(&[("q.json".into(), doc(vec![run(Rw::Read, 1, &[1.0], None)]))]);
        assert!(!clean.contains("## Notes"), "{clean}");
    }
}

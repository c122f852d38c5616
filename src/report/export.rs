//! Report and comparison formats made from results: Markdown and CSV tables (one row per
//! run: parameters, then mean ± stddev figures), JSON, and HTML (in `html.rs`). Every
//! exporter returns text; the caller decides where it goes. Reads results only.

use crate::report::compare::Comparison;
use crate::results::schema::{Document, Run};

/// The output formats of `report` and `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Md,
    Csv,
    Json,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "html" | "htm" => Some(Format::Html),
            "md" | "markdown" => Some(Format::Md),
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            _ => None,
        }
    }
}

/// The columns of the per-run table.
const HEADER: [&str; 17] = [
    "run", "test", "param", "value", "rw", "bs", "qd", "jobs", "io", "data", "n", "IOPS",
    "IOPS sd", "MB/s", "MB/s sd", "p50 us", "p99 us",
];

fn row(r: &Run) -> Vec<String> {
    let s = &r.spec;
    let (iops, bw) = (
        r.summary.total(|d| &d.iops),
        r.summary.total(|d| &d.bw_bytes),
    );
    let (p50, p99) = (
        r.summary.main().lat_p50_ns.mean,
        r.summary.main().lat_p99_ns.mean,
    );
    let st = r.study.as_ref();
    let mut cells = vec![
        r.name.clone(),
        st.map_or(String::new(), |p| p.test.clone()),
        st.map_or(String::new(), |p| p.param.clone()),
        st.map_or(String::new(), |p| p.value.clone()),
    ];
    cells.extend(crate::report::text::spec_cells(s));
    cells.extend([
        iops.n.to_string(),
        format!("{:.0}", iops.mean),
        format!("{:.0}", iops.stddev),
        format!("{:.2}", bw.mean / 1e6),
        format!("{:.2}", bw.stddev / 1e6),
        format!("{:.1}", p50 / 1e3),
        format!("{:.1}", p99 / 1e3),
    ]);
    cells
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn md_field(s: &str) -> String {
    s.replace('|', "\\|")
}

fn csv(rows: &[Vec<String>]) -> String {
    rows.iter()
        .map(|r| r.iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(","))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn md(rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        out.push_str("| ");
        out.push_str(
            &r.iter()
                .map(|f| md_field(f))
                .collect::<Vec<_>>()
                .join(" | "),
        );
        out.push_str(" |\n");
        if i == 0 {
            out.push('|');
            for _ in r {
                out.push_str("---|");
            }
            out.push('\n');
        }
    }
    out
}

/// All runs of all documents, one row each.
pub fn run_rows(docs: &[(String, Document)]) -> Vec<Vec<String>> {
    let multi = docs.len() > 1;
    let mut rows = vec![{
        let mut h: Vec<String> = HEADER.iter().map(|s| s.to_string()).collect();
        if multi {
            h.insert(0, "file".into());
        }
        h
    }];
    for (label, d) in docs {
        for r in &d.runs {
            let mut x = row(r);
            if multi {
                x.insert(0, label.clone());
            }
            rows.push(x);
        }
    }
    rows
}

/// The report as Markdown or CSV tables, or as one merged JSON document.
pub fn report(docs: &[(String, Document)], format: Format) -> String {
    match format {
        Format::Csv => csv(&run_rows(docs)),
        Format::Md => {
            let mut out = String::from("# iomark report\n\n");
            for (label, d) in docs {
                out.push_str(&format!(
                    "- `{label}`: {} {} on {} ({}, kernel {}), {} runs, started {}\n",
                    d.tool.name,
                    d.tool.version,
                    d.host.hostname,
                    d.host.cpu,
                    d.host.kernel,
                    d.runs.len(),
                    d.started
                ));
            }
            out.push('\n');
            out.push_str(&md(&run_rows(docs)));
            out
        }
        Format::Json => {
            let mut merged = docs
                .first()
                .map(|(_, d)| d.clone())
                .expect("at least one input");
            for (_, d) in &docs[1..] {
                merged.runs.extend(d.runs.iter().cloned());
            }
            merged.to_json() + "\n"
        }
        Format::Html => crate::report::html::report(docs),
    }
}

/// The comparison's table: one row per matched run, a column group per document.
pub fn comparison_rows(c: &Comparison) -> Vec<Vec<String>> {
    let mut h = vec!["run".to_string()];
    for l in &c.labels {
        h.push(format!("{l} IOPS"));
        h.push(format!("{l} sd"));
        h.push(format!("{l} ratio"));
        h.push(format!("{l} difference"));
    }
    let mut rows = vec![h];
    for r in &c.rows {
        let mut x = vec![r.key.clone()];
        for cell in &r.cells {
            match cell {
                Some(c) => {
                    x.push(format!("{:.0}", c.iops.mean));
                    x.push(format!("{:.0}", c.iops.stddev));
                    x.push(c.ratio.map_or("-".into(), |r| format!("{r:.3}")));
                    x.push(if c.incomplete {
                        format!("{} (interrupted run)", c.verdict.describe())
                    } else {
                        c.verdict.describe()
                    });
                }
                None => x.extend([
                    "-".to_string(),
                    "-".into(),
                    "-".into(),
                    "no such run".into(),
                ]),
            }
        }
        rows.push(x);
    }
    rows
}

/// The comparison in a format.
pub fn comparison(c: &Comparison, format: Format) -> String {
    match format {
        Format::Csv => csv(&comparison_rows(c)),
        Format::Md => format!(
            "# iomark comparison\n\nRatios are to `{}`; differences by Welch's t-test over the repetitions' IOPS (p < 0.05).\n\n{}",
            c.labels.first().map_or("", String::as_str),
            md(&comparison_rows(c))
        ),
        Format::Json => serde_json::to_string_pretty(c).expect("comparison serializes") + "\n",
        Format::Html => crate::report::html::comparison(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(md_field("a|b"), "a\\|b");
        assert_eq!(Format::parse("htm"), Some(Format::Html));
        assert_eq!(Format::parse("pdf"), None);
    }
}

//! The text formats of `report` and `compare` besides HTML: Markdown (a heading, the
//! documents' provenance, the table), CSV (the table alone) and JSON (the merged document
//! or the comparison as data). Tables come from `tables.rs`; every function returns text,
//! the caller decides where it goes. Reads results only; knows nothing of HTML.

use crate::report::compare::Comparison;
use crate::report::tables;
use crate::results::schema::Document;

/// The report as Markdown: a line per document saying where it came from, then the runs.
pub(crate) fn report_markdown(docs: &[(String, Document)]) -> String {
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
    out.push_str(&tables::runs(docs).markdown());
    out
}

/// The report as CSV: a row per run.
pub(crate) fn report_csv(docs: &[(String, Document)]) -> String {
    tables::runs(docs).csv()
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

/// The comparison as Markdown: what the ratios and verdicts mean, then the table.
pub(crate) fn comparison_markdown(c: &Comparison) -> String {
    format!(
        "# iomark comparison\n\nRatios are to `{}`; differences by Welch's t-test over the repetitions' IOPS (p < 0.05).\n\n{}",
        c.labels.first().map_or("", String::as_str),
        tables::comparison(c).markdown()
    )
}

/// The comparison as CSV.
pub(crate) fn comparison_csv(c: &Comparison) -> String {
    tables::comparison(c).csv()
}

/// The comparison as JSON.
pub(crate) fn comparison_json(c: &Comparison) -> String {
    serde_json::to_string_pretty(c).expect("comparison serializes") + "\n"
}

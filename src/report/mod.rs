//! Reports: everything that turns a results document (or several) into something to
//! read: terminal text, Markdown, CSV, JSON, HTML pages with SVG charts, and comparisons.
//! Reports read only the results schema (`crate::results`), the plan (`crate::plan`) and
//! `crate::units`; they never measure, do I/O or run studies, and never print: each
//! renderer returns a `String` and the caller decides where it goes.
//!
//! Layout: `tables.rs` builds the content of every table once, `table.rs` draws a table
//! as terminal text, Markdown, CSV or HTML; `text.rs` is the terminal output, `export.rs`
//! Markdown/CSV/JSON, `html/` the pages and `chart.rs` their SVG charts; `compare.rs`
//! matches runs across documents and tests the differences. [`report`] and [`comparison`]
//! pick the renderer for a [`Format`]. `progress.rs` draws the live progress line.

pub(crate) mod chart;
pub mod compare;
pub(crate) mod export;
pub mod fmt;
pub(crate) mod html;
pub(crate) mod markup;
pub mod notes;
pub mod progress;
pub(crate) mod table;
pub(crate) mod tables;
pub mod text;

use crate::report::compare::Comparison;
use crate::results::schema::Document;

/// The output formats of `report` and `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Md,
    Csv,
    Json,
}

impl Format {
    pub(crate) fn parse(s: &str) -> Option<Format> {
        match s {
            "html" | "htm" => Some(Format::Html),
            "md" | "markdown" => Some(Format::Md),
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            _ => None,
        }
    }
}

/// The report of one or more documents in a format.
pub fn report(docs: &[(String, Document)], format: Format) -> String {
    match format {
        Format::Html => html::report(docs),
        Format::Md => export::report_markdown(docs),
        Format::Csv => export::report_csv(docs),
        Format::Json => export::report_json(docs),
    }
}

/// The comparison in a format.
pub fn comparison(c: &Comparison, format: Format) -> String {
    match format {
        Format::Html => html::comparison(c),
        Format::Md => export::comparison_markdown(c),
        Format::Csv => export::comparison_csv(c),
        Format::Json => export::comparison_json(c),
    }
}

#[cfg(test)]
mod tests {
    use super::Format;

    #[test]
    fn formats_by_name() {
        assert_eq!(Format::parse("htm"), Some(Format::Html));
        assert_eq!(Format::parse("markdown"), Some(Format::Md));
        assert_eq!(Format::parse("pdf"), None);
    }
}

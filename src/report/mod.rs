//! Reports: everything that turns a results document (or several) into something to
//! read: terminal text, Markdown, CSV, JSON, HTML pages with SVG charts, and comparisons.
//! Reports read only the results schema (`crate::results`), the plan (`crate::plan`) and
//! `crate::units`; they never measure, do I/O or run studies, and never print: each
//! renderer returns a `String` and the caller decides where it goes.
//!
//! Layout: `tables.rs` builds the content of every table once, `table.rs` draws a table
//! as terminal text, Markdown, CSV or HTML; `text.rs` is the terminal output, `export.rs`
//! Markdown/JSON (CSV in `csv.rs`), `html/` the pages and `chart.rs` their SVG charts; `compare.rs`
//! matches runs across documents and tests the differences. [`report`] and [`comparison`]
//! pick the renderer for a [`Format`]. `progress.rs` draws the live progress line.

pub(crate) mod chart;
pub mod compare;
pub(crate) mod compare_stats;
pub(crate) mod compare_tables;
pub(crate) mod csv;
pub(crate) mod export;
#[cfg(test)]
mod figures_tests;
pub mod fmt;
pub(crate) mod html;
pub(crate) mod markup;
pub mod notes;
pub mod progress;
mod stored;
pub(crate) mod table;
pub(crate) mod tables;
pub(crate) mod tables_env;
pub(crate) mod targets;
pub mod text;
#[cfg(test)]
mod verdict_tests;

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
    /// Whether the first bytes of a file are an earlier iomark output in this format (a
    /// report or a comparison), which `-o` may replace without `--force`.
    pub fn is_ours(self, head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        match self {
            Format::Html => {
                text.contains("<meta name=\"generator\" content=\"iomark\">")
                    || text.contains("<title>iomark ")
            }
            Format::Md => text.starts_with("# iomark "),
            Format::Csv => text.starts_with("run,"),
            Format::Json => {
                crate::results::store::is_results_document(head)
                    || (text.trim_start().starts_with('{')
                        && text.contains(&format!("\"tool\": \"{}\"", compare::COMPARISON_TOOL)))
            }
        }
    }

    /// The file name extension of the format.
    pub(crate) fn extension(self) -> &'static str {
        match self {
            Format::Html => "html",
            Format::Md => "md",
            Format::Csv => "csv",
            Format::Json => "json",
        }
    }

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

/// `iomark report` or `iomark compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Report,
    Compare,
}

/// Runs `iomark report` or `compare` over `files`: the output is checked first (a new
/// file, an earlier iomark output in this format, or anything regular with `force`),
/// then the documents are read and the result written there atomically. Returns the
/// text for stdout when there is no `output`.
pub fn run_command(
    cmd: Command,
    files: &[std::path::PathBuf],
    format: Format,
    output: Option<&std::path::Path>,
    force: bool,
) -> crate::error::Result<Option<String>> {
    let what = match cmd {
        Command::Report => "the report",
        Command::Compare => "the comparison",
    };
    if let Some(p) = output.filter(|p| p.is_dir()) {
        // A file name in the directory, in the format asked for.
        let name = match cmd {
            Command::Report => "report",
            Command::Compare => "comparison",
        };
        return Err(crate::error::Error::usage(format!(
            "{} is a directory; give a file name for {what} (e.g. {}/{name}.{})",
            p.display(),
            p.display().to_string().trim_end_matches('/'),
            format.extension()
        )));
    }
    if let Some(p) = output {
        // A results document holds measurements that cannot be made again: a report or a
        // comparison (even one in JSON, itself a results document) replaces it only with
        // --force.
        let ours =
            |h: &[u8]| (cmd == Command::Compare || format != Format::Json) && format.is_ours(h);
        if !force && crate::results::store::holds_results(p) {
            return Err(crate::error::Error::guard(format!(
                "{} is an iomark results document (measurements that cannot be made again); choose a new name for {what}, or add --force to replace it",
                p.display()
            )));
        }
        crate::results::store::check_output(p, what, &ours, force, None)?;
    }
    let docs = crate::results::fio::load_all(files)?;
    let text = match cmd {
        Command::Report => report(&docs, format),
        Command::Compare => comparison(&compare::compare(&docs), format),
    };
    match output {
        Some(p) => crate::results::store::atomic_write(p, text.as_bytes(), what).map(|()| None),
        None => Ok(Some(text)),
    }
}

/// The note for `compare` given one file twice: its runs pair with themselves, every
/// ratio 1 and nothing significant, which reads as a finding. Said once the comparison
/// is out (a refusal or a failure stays the one line said).
pub fn same_files(files: &[std::path::PathBuf]) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let id = |p: &std::path::Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    files.iter().enumerate().find_map(|(i, a)| {
        let b = (files[i + 1..].iter()).find(|b| id(a).is_some() && id(a) == id(b))?;
        Some(format!(
            "note: {} and {} are the same file: its runs are compared with themselves (every ratio 1)",
            a.display(),
            b.display()
        ))
    })
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

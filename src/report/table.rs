//! The one table model of the reports, and its renderers: terminal text (drawn by
//! `comfy-table`, plain ASCII), Markdown, CSV (quoted by the `csv` crate) and HTML. What
//! goes into a table is decided in `tables.rs`; this module only draws, and knows nothing
//! of results documents.

use std::fmt::Write;

use comfy_table::{CellAlignment, LineStyle, presets};

use crate::report::fmt::NONE;
use crate::report::markup::esc;

/// How the terminal aligns a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// One cell: its text and, for HTML only, a class (e.g. `sig` for a significant result).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Cell {
    pub text: String,
    pub class: Option<&'static str>,
}

impl Cell {
    pub(crate) fn with_class(text: impl Into<String>, class: &'static str) -> Cell {
        Cell {
            text: text.into(),
            class: Some(class),
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell { text, class: None }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::from(text.to_string())
    }
}

/// A header row and data rows; the first column is left-aligned, the others right.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    pub align: Vec<Align>,
}

impl Table {
    /// An empty table with these column headers.
    pub(crate) fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        let header: Vec<String> = header.into_iter().map(Into::into).collect();
        let align = (0..header.len())
            .map(|i| if i == 0 { Align::Left } else { Align::Right })
            .collect();
        Table {
            header,
            rows: Vec::new(),
            align,
        }
    }

    /// Appends a row.
    pub(crate) fn push<C: Into<Cell>>(&mut self, row: impl IntoIterator<Item = C>) {
        self.rows.push(row.into_iter().map(Into::into).collect());
    }

    /// Columns separated by two spaces, a rule of dashes under the header, no trailing
    /// blanks and no colour: safe to pipe and to grep.
    pub(crate) fn terminal(&self) -> String {
        let mut t = comfy_table::Table::new();
        t.load_style(presets::NOTHING.header_separator(LineStyle::none().fill('-').junction('-')));
        t.set_header(self.header.iter().map(comfy_table::Cell::new));
        for r in &self.rows {
            t.add_row(r.iter().map(|c| comfy_table::Cell::new(&c.text)));
        }
        for (i, col) in t.column_iter_mut().enumerate() {
            // The blank between columns is drawn as a (missing) vertical line; one more
            // blank of padding makes the two of the plain layout.
            col.set_padding((u16::from(i > 0), 0));
            col.set_cell_alignment(match self.align.get(i) {
                Some(Align::Left) => CellAlignment::Left,
                _ => CellAlignment::Right,
            });
        }
        let mut out = t.trim_fmt();
        out.push('\n');
        out
    }

    /// A GitHub-flavoured Markdown table; `|` in cells is escaped.
    pub(crate) fn markdown(&self) -> String {
        let line = |cells: Vec<&str>| {
            let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = line(self.header.iter().map(String::as_str).collect());
        out.push('|');
        for _ in &self.header {
            out.push_str("---|");
        }
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r.iter().map(|c| c.text.as_str()).collect()));
        }
        out
    }

    /// RFC 4180 CSV: the header, then a line per row; fields quoted where needed. A
    /// missing figure ([`NONE`]) is an empty field, which spreadsheets read as no value.
    pub(crate) fn csv(&self) -> String {
        let mut w = csv::WriterBuilder::new()
            .flexible(true)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        let records = std::iter::once(self.header.clone()).chain(self.rows.iter().map(|r| {
            r.iter()
                .map(|c| {
                    if c.text == NONE {
                        String::new()
                    } else {
                        c.text.clone()
                    }
                })
                .collect()
        }));
        for rec in records {
            w.write_record(&rec).expect("writing CSV to memory");
        }
        let bytes = w.into_inner().expect("flushing CSV to memory");
        String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8")
    }

    /// An HTML `<table class="…">`, the header in `<th>`, every text escaped.
    pub(crate) fn html(&self, class: &str) -> String {
        // Wide tables scroll within the page on a narrow screen.
        let mut out = format!(
            "<div class=\"table-wrap\"><table class=\"{}\"><tr>",
            esc(class)
        );
        for h in &self.header {
            let _ = write!(out, "<th>{}</th>", esc(h));
        }
        out.push_str("</tr>");
        for r in &self.rows {
            out.push_str("<tr>");
            for c in r {
                match c.class {
                    Some(k) => {
                        let _ = write!(out, "<td class=\"{}\">{}</td>", esc(k), esc(&c.text));
                    }
                    None => {
                        let _ = write!(out, "<td>{}</td>", esc(&c.text));
                    }
                }
            }
            out.push_str("</tr>");
        }
        out.push_str("</table></div>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(["test", "IOPS", "MB/s"]);
        t.push(["randread 4k", "45.2k", "185.0"]);
        t.push(["a,\"b\"|c", "9.2", "0.1"]);
        t
    }

    #[test]
    fn csv_writes_a_missing_figure_as_an_empty_field() {
        let mut t = Table::new(["test", "IOPS", "sd"]);
        t.push(["r", "9.2", NONE]);
        assert_eq!(t.csv(), "test,IOPS,sd\nr,9.2,\n");
        assert!(t.markdown().contains("| r | 9.2 | - |"));
    }

    #[test]
    fn terminal_is_plain_columns_under_a_rule() {
        let s = sample().terminal();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "test          IOPS   MB/s");
        assert_eq!(lines[1], "-".repeat(lines[0].len()));
        assert_eq!(lines[2], "randread 4k  45.2k  185.0");
        assert_eq!(lines[3], "a,\"b\"|c        9.2    0.1");
        assert!(s.is_ascii() && s.ends_with('\n'));
    }

    #[test]
    fn markdown_csv_and_html_escape_their_specials() {
        let t = sample();
        assert_eq!(
            t.markdown(),
            "| test | IOPS | MB/s |\n|---|---|---|\n| randread 4k | 45.2k | 185.0 |\n| a,\"b\"\\|c | 9.2 | 0.1 |\n"
        );
        assert_eq!(
            t.csv(),
            "test,IOPS,MB/s\nrandread 4k,45.2k,185.0\n\"a,\"\"b\"\"|c\",9.2,0.1\n"
        );
        let mut h = Table::new(["<x>"]);
        h.push([Cell::with_class("a&b", "sig")]);
        assert_eq!(
            h.html("summary"),
            "<div class=\"table-wrap\"><table class=\"summary\"><tr><th>&lt;x&gt;</th></tr><tr><td class=\"sig\">a&amp;b</td></tr></table></div>"
        );
    }
}

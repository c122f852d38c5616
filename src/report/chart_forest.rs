//! Forest plots: a row per item (a run, or a run's latency in one direction), each with its
//! groups' ratios to a baseline and their 95% intervals on a log axis around 1. The label
//! column is as wide as the longest label, so none is cut off. Knows nothing of results.

use std::fmt::Write;

use super::{Axis, BOTTOM, H, LEGEND_ROW, PALETTE, RIGHT, TOP, legend, legend_places};
use crate::report::markup::esc;

/// One estimate of a forest plot: a group's ratio with its 95% interval (NaN ends when
/// there is none).
#[derive(Debug, Clone, Default)]
pub(crate) struct Estimate {
    pub group: String,
    pub ratio: f64,
    pub lo: f64,
    pub hi: f64,
}

/// A forest plot: a row per item, each with its groups' ratios to a baseline and their
/// intervals, on a log axis with a line at 1, so items of any size read alike.
#[derive(Debug, Clone, Default)]
pub(crate) struct Forest {
    pub title: String,
    pub x_label: String,
    /// The groups (colours) in legend order.
    pub groups: Vec<String>,
    pub rows: Vec<(String, Vec<Estimate>)>,
}

/// The least width of the label column.
const FOREST_LEFT: f64 = 250.0;
/// The widest a label's line may be before it wraps at a space (a wider word widens the
/// column instead).
const LABEL_MAX: f64 = 330.0;
const FOREST_ROW: f64 = 26.0;
/// The height of a label's line.
const LINE: f64 = 13.0;

/// `label` broken at spaces into lines no wider than [`LABEL_MAX`] (a longer word on a
/// line of its own); every line but the last keeps its trailing space, so that the lines
/// joined are the label.
fn wrap(label: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in label.split(' ') {
        let next = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if !cur.is_empty() && text_width(&next, 12.0) > LABEL_MAX {
            lines.push(cur + " ");
            cur = word.to_string();
        } else {
            cur = next;
        }
    }
    lines.push(cur);
    lines
}
/// The plot area's width right of the labels: a forest plot spans the page, wider than the
/// other charts, so its text keeps its size.
const PLOT_W: f64 = 750.0;

/// The width of `s` at `size` px in a sans-serif font, from DejaVu Sans' advance widths
/// (the widest common sans-serif, Debian's default) by class of character, rounded up: an
/// estimate on the large side, so that a label measured this way fits in any browser.
pub(crate) fn text_width(s: &str, size: f64) -> f64 {
    let em: f64 = s
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.28,
            ' ' => 0.32,
            'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '/' | '-' | '"' => 0.42,
            'm' | 'w' | 'M' | 'W' | '%' | '@' => 1.0,
            '=' | '+' | '<' | '>' | '~' | '#' | '&' => 0.84,
            'A'..='Z' => 0.78,
            _ => 0.65,
        })
        .sum();
    (em * size).ceil()
}

/// Renders a forest plot.
pub(crate) fn forest(c: &Forest) -> String {
    // The label column fits the longest line of a label (right-aligned at left − 8, from
    // x = 8); a row is as tall as the label with the most lines.
    let labels: Vec<Vec<String>> = c.rows.iter().map(|(n, _)| wrap(n)).collect();
    let left = labels
        .iter()
        .flatten()
        .map(|l| text_width(l.trim_end(), 12.0) + 16.0)
        .fold(FOREST_LEFT, f64::max)
        .ceil();
    let fw = left + PLOT_W;
    let lines = labels.iter().map(Vec::len).max().unwrap_or(1);
    let row_h = FOREST_ROW.max(LINE * lines as f64 + 8.0);
    let h = TOP + row_h * c.rows.len().max(1) as f64 + BOTTOM - 4.0
        + LEGEND_ROW * legend_places(&c.groups).last().map_or(0, |p| p.1) as f64;
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg class="chart" data-kind="forest" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {fw} {h}" width="{fw}" height="{h}" role="img" aria-label="{t}" font-family="sans-serif" font-size="12"><title>{t}</title><rect x="0" y="0" width="{fw}" height="{h}" fill="white"/><text class="title" x="{cx}" y="20" text-anchor="middle" font-size="14" font-weight="bold">{t}</text><text class="x-label" x="{cx}" y="{xl}" text-anchor="middle">{xlab}</text><text class="y-label" x="8" y="{yl}" font-size="11">test</text>"#,
        t = esc(&c.title),
        cx = left + (fw - left - RIGHT) / 2.0,
        xl = h - 8.0,
        yl = TOP - 4.0,
        xlab = esc(&c.x_label),
    );
    let vals = c
        .rows
        .iter()
        .flat_map(|(_, es)| es.iter().flat_map(|e| [e.ratio, e.lo, e.hi]))
        .chain([0.8, 1.25]);
    let x = Axis::new(vals, true, left, fw - RIGHT, false);
    // Ticks: a decade axis is too coarse for ratios; mark 1/2, 1/1.25, 1, 1.25, 2, ….
    let bottom = TOP + row_h * c.rows.len().max(1) as f64;
    let data_lo = c
        .rows
        .iter()
        .flat_map(|(_, es)| es.iter().flat_map(|e| [e.ratio, e.lo]))
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(0.8f64, f64::min);
    let data_hi = c
        .rows
        .iter()
        .flat_map(|(_, es)| es.iter().flat_map(|e| [e.ratio, e.hi]))
        .filter(|v| v.is_finite())
        .fold(1.25f64, f64::max);
    let x = Axis {
        lo: data_lo / 1.1,
        hi: data_hi * 1.1,
        ..x
    };
    forest_ticks(&mut out, &x, bottom);
    let n_grp = c.groups.len().max(1) as f64;
    for (ri, (name, es)) in c.rows.iter().enumerate() {
        let y0 = TOP + row_h * ri as f64;
        let _ = write!(
            out,
            r#"<g class="forest-row" data-test="{n}">"#,
            n = esc(name)
        );
        row_label(&mut out, &labels[ri], left - 8.0, y0 + row_h / 2.0 + 4.0);
        for e in es {
            let gi = c.groups.iter().position(|g| *g == e.group).unwrap_or(0);
            let col = PALETTE[gi % PALETTE.len()];
            let y = y0 + row_h * (gi as f64 + 1.0) / (n_grp + 1.0);
            if e.lo.is_finite() && e.hi.is_finite() {
                let _ = write!(
                    out,
                    r#"<line class="ci" x1="{a:.1}" y1="{y:.1}" x2="{b:.1}" y2="{y:.1}" stroke="{col}" stroke-width="2"/>"#,
                    a = x.map(e.lo),
                    b = x.map(e.hi)
                );
            }
            if e.ratio.is_finite() {
                let ci = |v: f64| {
                    if v.is_finite() {
                        v.to_string()
                    } else {
                        String::new()
                    }
                };
                let _ = write!(
                    out,
                    r#"<circle class="ratio" data-test="{n}" data-group="{g}" data-ratio="{r}" data-lo="{lo}" data-hi="{hi}" cx="{cx:.1}" cy="{y:.1}" r="4" fill="{col}"><title>{n}, {g}: ×{r:.3}{iv}</title></circle>"#,
                    n = esc(name),
                    g = esc(&e.group),
                    r = e.ratio,
                    lo = ci(e.lo),
                    hi = ci(e.hi),
                    cx = x.map(e.ratio),
                    iv = if e.lo.is_finite() {
                        format!(" (95% CI {:.3}–{:.3})", e.lo, e.hi)
                    } else {
                        " (no interval: fewer than two repetitions)".into()
                    }
                );
            }
        }
        out.push_str("</g>");
    }
    let _ = write!(
        out,
        r##"<line x1="{left}" y1="{bottom}" x2="{r}" y2="{bottom}" stroke="#333"/>"##,
        r = fw - RIGHT
    );
    // The legend sits under the tick labels.
    let shift = bottom - (H - BOTTOM);
    let mut leg = String::new();
    legend(&mut leg, &c.groups, false);
    let _ = write!(
        out,
        r#"<g transform="translate(0 {shift:.1})">{leg}</g></svg>"#
    );
    out
}

/// A row's label, its lines right-aligned at `x` and centred on `y`.
fn row_label(out: &mut String, lines: &[String], x: f64, y: f64) {
    let top = y - LINE * (lines.len() as f64 - 1.0) / 2.0;
    let _ = write!(
        out,
        r#"<text class="row-label" x="{x}" y="{top:.1}" text-anchor="end">"#
    );
    for (i, l) in lines.iter().enumerate() {
        let _ = write!(
            out,
            r#"<tspan x="{x}" y="{y:.1}">{l}</tspan>"#,
            y = top + LINE * i as f64,
            l = esc(l)
        );
    }
    out.push_str("</text>");
}

/// The forest plot's ratio ticks: 1 first, then others only where they leave room for
/// their labels.
fn forest_ticks(out: &mut String, x: &Axis, bottom: f64) {
    let mut placed: Vec<f64> = Vec::new();
    for t in [
        1.0, 2.0, 0.5, 10.0, 0.1, 100.0, 0.01, 1.25, 0.8, 5.0, 0.2, 20.0, 0.05, 50.0, 0.02, 1.5,
        0.67,
    ] {
        let px = x.map(t);
        if t < x.lo || t > x.hi || placed.iter().any(|p| (p - px).abs() < 44.0) {
            continue;
        }
        placed.push(px);
        let _ = write!(
            out,
            r##"<line class="tick" x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{bottom}" stroke="{col}" stroke-width="{sw}"/><text x="{px:.1}" y="{ty}" text-anchor="middle">{t}</text>"##,
            col = if t == 1.0 { "#333" } else { "#ddd" },
            sw = if t == 1.0 { 1.5 } else { 1.0 },
            ty = bottom + 16.0,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_labels_wrap_and_widen_the_column() {
        let long = "randwrite bs=4k qd=32 jobs=1 direct data=compressible 98% (zerofill/4k), \
                    write latency";
        let lines = wrap(long);
        assert!(lines.len() >= 2, "{lines:?}");
        assert_eq!(lines.concat(), long, "the lines joined are the label");
        assert!(
            lines
                .iter()
                .all(|l| text_width(l.trim_end(), 12.0) <= LABEL_MAX)
        );
        assert_eq!(wrap("read bs=4k"), ["read bs=4k"]);
        // A word wider than the limit stays whole and widens the column.
        let word = "x".repeat(80);
        let svg = forest(&Forest {
            title: "t".into(),
            x_label: "x".into(),
            groups: vec!["B".into()],
            rows: vec![(word.clone(), Vec::new()), ("short".into(), Vec::new())],
        });
        let left = text_width(&word, 12.0) + 16.0;
        assert!(left > FOREST_LEFT);
        let lx = format!(r#"<tspan x="{}""#, left.ceil() - 8.0);
        assert!(svg.contains(&lx), "{svg}");
    }
}

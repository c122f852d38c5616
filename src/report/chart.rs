//! Charts as inline SVG: data in, a self-contained `<svg>` string out. Two kinds: line
//! charts (linear or log axes, one line per series, optional points) and grouped bar
//! charts with error bars. Every mark carries its value in a `data-` attribute, so tests
//! and scripts can read a chart back. Colours are the Okabe–Ito palette, which stays
//! distinguishable for the common forms of colour blindness, and lines also differ in
//! dash pattern. No fonts, scripts or external references: the SVG renders anywhere.
//! Written by hand on purpose (the `data-` attributes are what the tests read back). Knows
//! nothing of results documents: callers pass plain numbers and labels.

use std::fmt::Write;

use crate::report::markup::esc;

/// Okabe & Ito (2008), "Color Universal Design": distinguishable with any colour vision.
pub(crate) const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];
const DASHES: [&str; 4] = ["", "6 3", "2 3", "8 3 2 3"];

const W: f64 = 640.0;
const H: f64 = 320.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 64.0;

/// One line of a line chart.
#[derive(Debug, Clone, Default)]
pub(crate) struct Series {
    pub name: String,
    /// (x, y) in data units, in x order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log: bool,
    pub y_log: bool,
    /// Labels for x ticks at given x values (else numbers are chosen).
    pub x_ticks: Option<Vec<(f64, String)>>,
    pub series: Vec<Series>,
    /// Draw a marker at every point.
    pub markers: bool,
    /// Shaded x ranges with a label (e.g. a steady-state window).
    pub bands: Vec<(f64, f64, String)>,
    /// Start the x axis at 0 (time axes).
    pub x_zero: bool,
    /// The units a point's tooltip gives its values in (e.g. "s", "µs"); none if empty.
    pub x_unit: String,
    pub y_unit: String,
}

/// A point's value as its tooltip gives it: the tick's label where one names it (a
/// percentile's "p99", not its position 2), else the number with its unit.
fn point_words(v: f64, ticks: &[(f64, String)], unit: &str) -> String {
    match ticks.iter().find(|(t, _)| *t == v) {
        Some((_, l)) if l.parse::<f64>().is_err() => l.clone(),
        _ if unit.is_empty() => short(v),
        // Latencies as the tables give them (3.00 ms, not 3k µs).
        _ if unit == "µs" => crate::units::fmt_ns(v * 1e3),
        _ => format!("{} {unit}", short(v)),
    }
}

/// One group of bars (one colour), with a value and an error per category.
#[derive(Debug, Clone, Default)]
pub(crate) struct BarGroup {
    pub name: String,
    /// (value, error half-height) per category; a NaN height means no spread is known
    /// (one repetition): no error bar, and the tooltip says so.
    pub values: Vec<(f64, f64)>,
}

/// A grouped bar chart: categories along x, one bar per group in each.
#[derive(Debug, Clone, Default)]
pub(crate) struct BarChart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub groups: Vec<BarGroup>,
}

/// A short number for an axis: 1200 → "1.2k", 0.25 → "0.25".
pub(crate) fn short(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if x.fract() == 0.0 || x.abs() >= 10.0 {
        format!("{x:.0}")
    } else if x.abs() < 1.0 {
        // Two decimals below 1, so that ticks 0.05 apart read apart.
        format!("{x:.2}").trim_end_matches('0').to_string()
    } else {
        format!("{x:.1}")
    };
    format!("{s}{suffix}")
}

/// "Nice" linear ticks covering [lo, hi].
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).floor() * step;
    let mut out = Vec::new();
    while t <= hi + step * 0.001 {
        if t >= lo - step * 0.001 {
            out.push(t);
        }
        t += step;
    }
    out
}

fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    (a..=b).map(|e| 10f64.powi(e)).collect()
}

struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    from: f64,
    to: f64,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>, log: bool, from: f64, to: f64, zero: bool) -> Axis {
        let vals: Vec<f64> = values
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .collect();
        let (mut lo, mut hi) = vals
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        if !lo.is_finite() {
            (lo, hi) = if log { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        if log {
            lo = 10f64.powf(lo.log10().floor());
            hi = 10f64.powf(hi.log10().ceil());
            if hi <= lo {
                hi = lo * 10.0;
            }
        } else {
            if zero {
                lo = lo.min(0.0);
            }
            if hi <= lo {
                hi = lo + 1.0;
            }
            let t = linear_ticks(lo, hi);
            lo = lo.min(*t.first().unwrap_or(&lo));
            hi = hi.max(*t.last().unwrap_or(&hi));
        }
        Axis {
            lo,
            hi,
            log,
            from,
            to,
        }
    }

    fn map(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.from + f * (self.to - self.from)
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            log_ticks(self.lo, self.hi)
        } else {
            linear_ticks(self.lo, self.hi)
        }
    }
}

/// The opening of a chart `h` high (the plot area is always `H - BOTTOM` deep; legend
/// rows beyond the first make a chart taller). Its width follows the page: the viewBox
/// keeps the proportions, CSS sets the width.
fn frame(out: &mut String, kind: &str, title: &str, x_label: &str, y_label: &str, h: f64) {
    let _ = write!(
        out,
        r#"<svg class="chart" data-kind="{kind}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" preserveAspectRatio="xMidYMid meet" role="img" aria-label="{t}" font-family="sans-serif" font-size="12"><title>{t}</title><rect x="0" y="0" width="{W}" height="{h}" fill="white"/><text class="title" x="{cx}" y="20" text-anchor="middle" font-size="14" font-weight="bold">{t}</text><text class="x-label" x="{cx}" y="{xl}" text-anchor="middle">{xlab}</text><text class="y-label" transform="translate(14 {cy}) rotate(-90)" text-anchor="middle">{ylab}</text>"#,
        t = esc(title),
        cx = LEFT + (W - LEFT - RIGHT) / 2.0,
        cy = TOP + (H - TOP - BOTTOM) / 2.0,
        xl = h - 8.0,
        xlab = esc(x_label),
        ylab = esc(y_label),
    );
}

fn y_grid(out: &mut String, y: &Axis) {
    for t in y.ticks() {
        let py = y.map(t);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{py:.1}" x2="{x2}" y2="{py:.1}" stroke="#ddd"/><text x="{tx}" y="{ty:.1}" text-anchor="end">{l}</text>"##,
            x2 = W - RIGHT,
            tx = LEFT - 6.0,
            ty = py + 4.0,
            l = short(t)
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{b}" stroke="#333"/><line x1="{LEFT}" y1="{b}" x2="{r}" y2="{b}" stroke="#333"/>"##,
        b = H - BOTTOM,
        r = W - RIGHT
    );
}

/// Where each legend entry goes: (x, row), wrapping to a new row at the right edge, so
/// that every series is listed.
fn legend_places(names: &[String]) -> Vec<(f64, usize)> {
    let mut x = LEFT;
    let mut row = 0;
    names
        .iter()
        .map(|n| {
            let w = 30.0 + 7.0 * n.chars().count() as f64;
            if x > LEFT && x + w > W - RIGHT {
                x = LEFT;
                row += 1;
            }
            let at = (x, row);
            x += w;
            at
        })
        .collect()
}

/// The chart's height with room for its legend's rows.
fn height_for(names: &[String]) -> f64 {
    let rows = legend_places(names).last().map_or(1, |p| p.1 + 1);
    H + LEGEND_ROW * rows.saturating_sub(1) as f64
}

const LEGEND_ROW: f64 = 18.0;

fn legend(out: &mut String, names: &[String], lines: bool) {
    for (i, (n, (x, row))) in names.iter().zip(legend_places(names)).enumerate() {
        let y = H - 30.0 + LEGEND_ROW * row as f64;
        let c = PALETTE[i % PALETTE.len()];
        if lines {
            let _ = write!(
                out,
                r#"<line class="legend-key" x1="{x}" y1="{y}" x2="{x2}" y2="{y}" stroke="{c}" stroke-width="2.5" stroke-dasharray="{d}"/>"#,
                x2 = x + 18.0,
                d = DASHES[i % DASHES.len()]
            );
        } else {
            let _ = write!(
                out,
                r#"<rect class="legend-key" x="{x}" y="{ry}" width="12" height="12" fill="{c}"/>"#,
                ry = y - 6.0
            );
        }
        let _ = write!(
            out,
            r#"<text class="legend" x="{tx}" y="{ty}">{n}</text>"#,
            tx = x + 22.0,
            ty = y + 4.0,
            n = esc(n)
        );
    }
}

/// Renders a line chart.
pub(crate) fn line_chart(c: &LineChart) -> String {
    let mut out = String::new();
    let names: Vec<String> = c.series.iter().map(|s| s.name.clone()).collect();
    frame(
        &mut out,
        "line",
        &c.title,
        &c.x_label,
        &c.y_label,
        height_for(&names),
    );
    let xs = c.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = c.series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let x = Axis::new(xs, c.x_log, LEFT, W - RIGHT, c.x_zero);
    let y = Axis::new(ys, c.y_log, H - BOTTOM, TOP, true);
    y_grid(&mut out, &y);
    for (x0, x1, label) in &c.bands {
        // Clamp to the plot area.
        let (a, b) = (x.map(*x0).max(LEFT), x.map(*x1).min(W - RIGHT));
        let _ = write!(
            out,
            r##"<rect class="band" x="{a:.1}" y="{TOP}" width="{w:.1}" height="{h}" fill="#009E73" fill-opacity="0.12"/><text x="{a:.1}" y="{ty}" fill="#006b4f">{l}</text>"##,
            w = (b - a).max(1.0),
            h = H - BOTTOM - TOP,
            ty = TOP + 12.0,
            l = esc(label)
        );
    }
    let ticks: Vec<(f64, String)> = match &c.x_ticks {
        Some(t) => t.clone(),
        None => x.ticks().into_iter().map(|t| (t, short(t))).collect(),
    };
    for (t, l) in &ticks {
        let (t, l) = (*t, l.as_str());
        let px = x.map(t);
        let _ = write!(
            out,
            r##"<line x1="{px:.1}" y1="{b}" x2="{px:.1}" y2="{b2}" stroke="#333"/><text class="x-tick" x="{px:.1}" y="{ty}" text-anchor="middle">{l}</text>"##,
            b = H - BOTTOM,
            b2 = H - BOTTOM + 4.0,
            ty = H - BOTTOM + 16.0,
            l = esc(l)
        );
    }
    for (i, s) in c.series.iter().enumerate() {
        let col = PALETTE[i % PALETTE.len()];
        let pts: Vec<String> = s
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .map(|&(a, b)| format!("{:.1},{:.1}", x.map(a), y.map(b)))
            .collect();
        let _ = write!(
            out,
            r#"<polyline class="series" data-name="{n}" fill="none" stroke="{col}" stroke-width="2" stroke-dasharray="{d}" points="{p}"/>"#,
            n = esc(&s.name),
            d = DASHES[i % DASHES.len()],
            p = pts.join(" ")
        );
        if c.markers {
            for &(a, b) in &s.points {
                let _ = write!(
                    out,
                    r#"<circle class="point" data-series="{n}" data-x="{a}" data-y="{b}" cx="{cx:.1}" cy="{cy:.1}" r="3" fill="{col}"><title>{n}: {xs} → {ys}</title></circle>"#,
                    n = esc(&s.name),
                    cx = x.map(a),
                    cy = y.map(b),
                    xs = esc(&point_words(a, &ticks, &c.x_unit)),
                    ys = esc(&point_words(b, &[], &c.y_unit))
                );
            }
        }
    }
    if names.len() > 1 || !names.first().is_none_or(|n| n.is_empty()) {
        legend(&mut out, &names, true);
    }
    out.push_str("</svg>");
    out
}

/// Renders a grouped bar chart with error bars.
pub(crate) fn bar_chart(c: &BarChart) -> String {
    let mut out = String::new();
    let names: Vec<String> = c.groups.iter().map(|g| g.name.clone()).collect();
    frame(
        &mut out,
        "bar",
        &c.title,
        "",
        &c.y_label,
        height_for(&names),
    );
    let tops = c
        .groups
        .iter()
        .flat_map(|g| g.values.iter().map(|(v, e)| v + e.max(0.0)));
    let y = Axis::new(
        tops.chain(std::iter::once(0.0)),
        false,
        H - BOTTOM,
        TOP,
        true,
    );
    y_grid(&mut out, &y);
    let n_cat = c.categories.len().max(1) as f64;
    let n_grp = c.groups.len().max(1) as f64;
    let slot = (W - LEFT - RIGHT) / n_cat;
    let bar_w = (slot * 0.8 / n_grp).min(48.0);
    for (ci, cat) in c.categories.iter().enumerate() {
        let x0 = LEFT + ci as f64 * slot + (slot - bar_w * n_grp) / 2.0;
        for (gi, g) in c.groups.iter().enumerate() {
            let Some(&(v, e)) = g.values.get(ci) else {
                continue;
            };
            if !v.is_finite() {
                continue;
            }
            let bx = x0 + gi as f64 * bar_w;
            let (top, base) = (y.map(v), y.map(0.0));
            let col = PALETTE[gi % PALETTE.len()];
            let _ = write!(
                out,
                r#"<rect class="bar" data-category="{cat}" data-group="{g}" data-value="{v}" data-err="{ea}" x="{bx:.1}" y="{top:.1}" width="{w:.1}" height="{h:.1}" fill="{col}"><title>{cat}, {g}: {vs}{es}</title></rect>"#,
                cat = esc(cat),
                g = esc(&g.name),
                w = bar_w - 2.0,
                h = (base - top).max(0.0),
                vs = short(v),
                // No spread (one repetition): no error bar, an empty data-err, no "± 0".
                ea = if e.is_finite() {
                    e.to_string()
                } else {
                    String::new()
                },
                es = if e.is_finite() {
                    format!(" ± {}", short(e))
                } else {
                    " (one repetition: no spread)".into()
                }
            );
            if e > 0.0 {
                let cx = bx + (bar_w - 2.0) / 2.0;
                let (hi, lo) = (y.map(v + e), y.map((v - e).max(y.lo)));
                let _ = write!(
                    out,
                    r##"<path class="error-bar" d="M{cx:.1} {hi:.1}V{lo:.1}M{a:.1} {hi:.1}H{b:.1}M{a:.1} {lo:.1}H{b:.1}" stroke="#222" stroke-width="1.2"/>"##,
                    a = cx - 4.0,
                    b = cx + 4.0
                );
            }
        }
        let _ = write!(
            out,
            r#"<text class="category" x="{tx:.1}" y="{ty}" text-anchor="middle">{c}</text>"#,
            tx = LEFT + (ci as f64 + 0.5) * slot,
            ty = H - BOTTOM + 16.0,
            c = esc(cat)
        );
    }
    legend(&mut out, &names, false);
    out.push_str("</svg>");
    out
}

#[path = "chart_forest.rs"]
mod forest_plot;
pub(crate) use forest_plot::{Estimate, Forest, forest};
#[path = "chart_stack.rs"]
pub(crate) mod stack;
#[cfg(test)]
#[path = "chart_tests.rs"]
mod tests;

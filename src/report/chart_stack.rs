//! Stacked bars: one bar per category, cut into one segment per layer (a run's targets),
//! so the bar's height is the layers' sum. Every segment carries its layer, category
//! and value in `data-` attributes, and the bar its total, as the other charts do.

use std::fmt::Write;

use super::{Axis, BOTTOM, H, LEFT, PALETTE, RIGHT, W, frame, height_for, legend, short, y_grid};
use crate::report::markup::esc;

/// A stacked bar chart: categories along x; each layer adds one segment to every bar.
#[derive(Debug, Clone, Default)]
pub(crate) struct StackChart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    /// (layer name, value per category).
    pub layers: Vec<(String, Vec<f64>)>,
}

/// Renders a stacked bar chart.
pub(crate) fn stacked_bars(c: &StackChart) -> String {
    let mut out = String::new();
    let names: Vec<String> = c.layers.iter().map(|l| l.0.clone()).collect();
    frame(
        &mut out,
        "stacked",
        &c.title,
        "",
        &c.y_label,
        height_for(&names),
    );
    let value = |l: usize, ci: usize| {
        c.layers[l]
            .1
            .get(ci)
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .unwrap_or(0.0)
    };
    let totals: Vec<f64> = (0..c.categories.len())
        .map(|ci| (0..c.layers.len()).map(|l| value(l, ci)).sum())
        .collect();
    let y = Axis::new(
        totals.iter().copied().chain(std::iter::once(0.0)),
        false,
        H - BOTTOM,
        super::TOP,
        true,
    );
    y_grid(&mut out, &y);
    let slot = (W - LEFT - RIGHT) / c.categories.len().max(1) as f64;
    let bar_w = (slot * 0.6).min(96.0);
    for (ci, cat) in c.categories.iter().enumerate() {
        let bx = LEFT + ci as f64 * slot + (slot - bar_w) / 2.0;
        let _ = write!(
            out,
            r#"<g class="stack" data-category="{cat}" data-total="{t}">"#,
            cat = esc(cat),
            t = totals[ci]
        );
        let mut below = 0.0;
        for (l, (name, _)) in c.layers.iter().enumerate() {
            let v = value(l, ci);
            let (top, base) = (y.map(below + v), y.map(below));
            let _ = write!(
                out,
                r#"<rect class="segment" data-category="{cat}" data-layer="{n}" data-value="{v}" x="{bx:.1}" y="{top:.1}" width="{w:.1}" height="{h:.1}" fill="{col}" stroke="white" stroke-width="0.5"><title>{cat}, {n}: {vs}</title></rect>"#,
                cat = esc(cat),
                n = esc(name),
                w = bar_w,
                h = (base - top).max(0.0),
                col = PALETTE[l % PALETTE.len()],
                vs = short(v),
            );
            below += v;
        }
        let _ = write!(
            out,
            r#"<text class="total" x="{tx:.1}" y="{ty:.1}" text-anchor="middle">{s}</text></g><text class="category" x="{tx:.1}" y="{cy}" text-anchor="middle">{c}</text>"#,
            tx = bx + bar_w / 2.0,
            ty = y.map(totals[ci]) - 4.0,
            s = short(totals[ci]),
            cy = H - BOTTOM + 16.0,
            c = esc(cat)
        );
    }
    legend(&mut out, &names, false);
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_stack_to_the_total() {
        let svg = stacked_bars(&StackChart {
            title: "t".into(),
            y_label: "MB/s".into(),
            categories: vec!["rep 1".into(), "rep 2".into()],
            layers: vec![
                ("a".into(), vec![100.0, 90.0]),
                ("b".into(), vec![50.0, 60.0]),
            ],
        });
        assert_eq!(svg.matches("class=\"segment\"").count(), 4);
        assert!(
            svg.contains(r#"data-category="rep 1" data-total="150""#),
            "{svg}"
        );
        assert!(svg.contains(r#"data-layer="b" data-value="60""#));
        assert!(svg.ends_with("</svg>"));
    }
}

//! The "device stored" figure of a study on zram, and when it is not the study's alone:
//! zram's `mm_stat` is the device's whole content, so when the device holds data outside
//! the runs' span the figure blends the span's data with it. Each run records bounds on
//! those outside bytes (`outside_bytes`, measured when it ran); the runs of one study on
//! one span leave them unchanged, so their bounds are intersected here, and the span's
//! share of what zram stores is said with the figure. Reads results only.

use crate::results::schema::{Document, Run, WriteAmplification};
use crate::units::fmt_pct;

/// A run's zram figure, if it has one.
fn zram(r: &Run) -> Option<&WriteAmplification> {
    (r.write_amplification_sources.iter()).find(|w| w.source == "zram" && w.ratio.is_some())
}

/// The bounds on the bytes outside `r`'s span: its own, narrowed by those of every run
/// of the document on the same span (when they agree).
fn outside(doc: &Document, r: &Run) -> Option<[u64; 2]> {
    let own = zram(r)?.outside_bytes?;
    let same_span = |o: &&Run| {
        o.spec.target == r.spec.target
            && (o.spec.offset, o.spec.size) == (r.spec.offset, r.spec.size)
    };
    let mut b = own;
    for o in doc.runs.iter().filter(same_span) {
        if let Some([lo, hi]) = zram(o).and_then(|w| w.outside_bytes) {
            b = [b[0].max(lo), b[1].min(hi)];
        }
    }
    // Bounds that contradict each other (another writer between the runs): the run's own.
    Some(if b[0] <= b[1] { b } else { own })
}

/// When `r`'s zram figure blends in data outside its span: the span's share of what
/// zram stores after it ("50%", or a range "33%–50%"), or "unknown" for a document
/// that recorded no bounds. `None` when the figure is the span's alone.
pub(crate) fn blend(doc: &Document, r: &Run) -> Option<String> {
    let w = zram(r)?;
    let Some([lo, hi]) = outside(doc, r) else {
        // Documents before the bounds said so in the note only.
        return w
            .note
            .contains("a blend of both")
            .then(|| "unknown".to_string());
    };
    let all = w.host_bytes.filter(|a| *a > 0)?;
    if hi == 0 {
        return None;
    }
    let share = |o: u64| fmt_pct(100.0 * all.saturating_sub(o) as f64 / all as f64);
    Some(match lo == hi {
        true => share(lo),
        false => format!("{}–{}", share(hi), share(lo)),
    })
}

/// The footnote under a study table whose rows (`(label, share)`) have blended figures.
pub(crate) fn footnote(rows: &[(String, String)]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    let shares: Vec<String> = rows.iter().map(|(l, s)| format!("{l}: {s}")).collect();
    Some(format!(
        "* device stored (and a zram write ampl.): zram's whole content after the run (mm_stat), which also holds older data outside the study's span, so the figure is a blend of both; the span's share of what zram stored, by row: {}. On a zram holding nothing else (reset it, or run on the whole device) the figure is the data's own",
        shares.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footnote_lists_each_blended_row() {
        assert_eq!(footnote(&[]), None);
        let f = footnote(&[
            ("98%".into(), "50%".into()),
            ("2%".into(), "33%–50%".into()),
        ]);
        assert!(f.unwrap().contains("by row: 98%: 50%; 2%: 33%–50%."));
    }
}

//! Write amplification: bytes the device stored against bytes iomark wrote, from every
//! source there is (the kernel's block counters, zram's `mm_stat`, SMART), the best one
//! chosen. Reads counters only; never writes.

use crate::io::env::SmartWrites;
use crate::io::target::Target;
use crate::results::schema::{Run, WriteAmplification as Wa};

/// SMART before or after: the drive's counters, or why there are none.
pub(crate) type Smart = Option<Result<SmartWrites, String>>;

/// What the device held before a run's first repetition: SMART's counters, and zram's
/// (original, compressed) bytes stored.
#[derive(Default)]
pub(crate) struct Before {
    pub smart: Smart,
    pub zram: Option<(u64, u64)>,
}

impl Before {
    /// Read for a run that writes to one target (the counters speak for one device).
    pub(crate) fn take(spec: &crate::plan::spec::Spec, targets: &[Target]) -> Before {
        let Some(dev) = (spec.writes() && targets.len() == 1)
            .then(|| targets[0].device.as_ref())
            .flatten()
        else {
            return Before::default();
        };
        Before {
            smart: Some(crate::io::env::smart_writes(dev)),
            zram: crate::io::env::zram_mm_stat(dev),
        }
    }
}

/// Device bytes against host bytes, when both are known and the host wrote something.
fn ratio(h: Option<u64>, d: Option<u64>) -> Option<f64> {
    match (h, d) {
        (Some(h), Some(d)) if h > 0 => Some(d as f64 / h as f64),
        _ => None,
    }
}

/// Fills in the run's write amplification from every source there is.
pub(crate) fn write_amplification(
    run: &mut Run,
    targets: &[Target],
    before: Before,
    smart_after: Smart,
) {
    let smart_before = before.smart;
    let host: u64 = run.repetitions.iter().map(|r| r.write.bytes).sum();
    let mut all = Vec::new();
    // The kernel's block counters of the device under the target.
    let dev: Option<u64> = run
        .repetitions
        .iter()
        .map(|r| r.device.as_ref().map(|d| d.write_bytes))
        .sum();
    // Buffered writes nothing flushed: the counters lag by what the page cache still
    // held, and include writeback of what earlier runs left; no ratio, only why.
    let unflushed = crate::plan::cache::holds_writes(&run.spec);
    let devices = targets.iter().map(|t| t.device.as_ref());
    all.push(Wa {
        source: "block_layer".into(),
        host_bytes: Some(host),
        device_bytes: dev,
        ratio: ratio(Some(host), dev).filter(|_| !unflushed),
        note: match devices.collect::<Option<Vec<_>>>() {
            Some(_) if unflushed => "not measured: buffered writes that nothing flushed (the page cache may hold some when the window closes, and the device may be writing back older ones); use --direct".into(),
            Some(_) if dev.is_none() => "not reported: the device's counters could not be read".into(),
            Some(ds) => {
                // Each device once, however many targets it holds.
                let mut names: Vec<&str> = Vec::new();
                for d in ds {
                    if !names.contains(&d.name.as_str()) {
                        names.push(&d.name);
                    }
                }
                // Buffered: rewrites of a block merge in the page cache, and only the
                // last reaches the device.
                let compression = Target::compression(targets);
                // Under 1 on a compressing btrfs is its compression, merged or not.
                let merged = !run.spec.direct
                    && compression.is_none()
                    && ratio(Some(host), dev).is_some_and(|r| r < 0.9);
                let compressed = compression.map(|c| {
                    format!("; btrfs compresses what it stores here ({c}): under 1 is its compression")
                });
                format!(
                    "bytes the kernel sent to {} (filesystem metadata, journal and other writers included) against bytes iomark wrote{}{}",
                    names.join("+"),
                    if merged {
                        "; buffered, so rewrites of the same blocks merged in the page cache first: under 1 is the cache's doing, not the device's"
                    } else {
                        ""
                    },
                    compressed.unwrap_or_default()
                )
            }
            None => format!("not reported: {}", unseen(targets)),
        },
        outside_bytes: None,
    });
    // zram: what it stores compressed against what it was given (one device's whole
    // accounting, so for a run on one target).
    if let [target] = targets {
        all.extend(zram_source(run, target, before.zram, host));
    }
    all.push(smart_source(smart_before, smart_after, targets));
    let best = ["smart", "zram", "block_layer"]
        .iter()
        .find_map(|s| all.iter().find(|w| w.source == *s && w.ratio.is_some()))
        .cloned();
    run.write_amplification = best;
    run.write_amplification_sources = all;
}

/// zram's figure: what it stores compressed against what it stores (`mm_stat` after the
/// run). It is the device's whole content: when the device held data before the run
/// (`held`: original and compressed bytes), the share outside the run's span is bounded
/// ([`outside_bounds`]) and said.
fn zram_source(run: &Run, target: &Target, held: Option<(u64, u64)>, host: u64) -> Option<Wa> {
    use crate::units::{fmt_pct, fmt_size};
    let dev = target.device.as_ref()?;
    let (orig, compr) = crate::io::env::zram_mm_stat(dev)?;
    if orig == 0 {
        return Some(Wa {
            source: "zram".into(),
            host_bytes: Some(orig),
            device_bytes: Some(compr),
            ratio: None,
            note: "not reported: zram holds no data to compress (pages of one repeated word, zeros among them, are kept as a count: mm_stat same_pages)".into(),
            outside_bytes: None,
        });
    }
    let mut note =
        "zram mm_stat after the run: compressed bytes stored against original bytes stored"
            .to_string();
    let mut outside_bytes = None;
    // mm_stat is the device's whole content, not this run's writes alone.
    if let Some((held, _)) = held.filter(|z| z.0 > 0) {
        let (same, disksize) = crate::io::env::zram_same_and_size(dev).unwrap_or((0, u64::MAX));
        let covered = covers_span(&run.spec, host, target.span);
        let shape = Shape {
            held,
            after: orig,
            span: target.span,
            disksize,
            same: covered.then_some(same),
        };
        outside_bytes = outside_bounds(&shape);
        let share = |o: u64| fmt_pct(100.0 * (orig - o) as f64 / orig as f64);
        note.push_str(&format!(
            ", the device's whole content: it held {} before this run",
            fmt_size(held)
        ));
        note.push_str(&match outside_bytes {
            Some([_, 0]) => ", all of it in this run's span: the figure is the span's".to_string(),
            Some([lo, hi]) if lo == hi => format!(
                ", and {} of what it stores lies outside this run's span (older data): the span is {} of it, so the figure is a blend of both",
                fmt_size(lo),
                share(lo)
            ),
            Some([0, hi]) => format!(
                ", and up to {} of what it stores may lie outside this run's span (older data: a run that rewrites only part of its span cannot tell), so the figure may be a blend of both",
                fmt_size(hi)
            ),
            Some([lo, hi]) => format!(
                ", and {} to {} of what it stores lies outside this run's span (older data): the span is {} to {} of it, so the figure is a blend of both",
                fmt_size(lo),
                fmt_size(hi),
                share(hi),
                share(lo)
            ),
            None => ", so a run that rewrote only part of it gives a blend of both".to_string(),
        });
    }
    Some(Wa {
        source: "zram".into(),
        host_bytes: Some(orig),
        device_bytes: Some(compr),
        ratio: ratio(Some(orig), Some(compr)),
        note,
        outside_bytes,
    })
}

/// Whether a run wrote every block of its span: one job writing sequentially, without
/// holes, at least a span's worth.
fn covers_span(spec: &crate::plan::spec::Spec, written: u64, span: u64) -> bool {
    spec.rw == crate::plan::spec::Rw::Write
        && spec.jobs == 1
        && spec.hole.is_none()
        && span > 0
        && written >= span
}

/// What zram's counters say of a run on it: original bytes held before and after, the
/// run's span, the device's size, and (when the run wrote its whole span) the bytes of
/// same-filled pages after it, which zram keeps as a count, not as original bytes.
struct Shape {
    held: u64,
    after: u64,
    span: u64,
    disksize: u64,
    same: Option<u64>,
}

/// The least and the most original bytes outside the run's span, which the run did not
/// change: at most what was held before, what the rest of the device can hold, and what
/// is held after; at least what the span could not have held before or after. A run that
/// wrote its whole span holds at least the span less its same-filled pages inside it.
/// `None` when the counters contradict each other (another writer).
fn outside_bounds(s: &Shape) -> Option<[u64; 2]> {
    let lo = (s.held.saturating_sub(s.span)).max(s.after.saturating_sub(s.span));
    let mut hi = s.held.min(s.disksize.saturating_sub(s.span)).min(s.after);
    if let Some(same) = s.same {
        let inside = s.span.saturating_sub(same);
        hi = hi.min(s.after.saturating_sub(inside));
    }
    (lo <= hi).then_some([lo, hi])
}

/// SMART: the drive's own host and media write counters, before and after.
fn smart_source(before: Smart, after: Smart, targets: &[Target]) -> Wa {
    match (before, after) {
        (Some(Ok(b)), Some(Ok(a))) => {
            let d = |x: Option<u64>, y: Option<u64>| Some(y?.saturating_sub(x?));
            let (h, m) = (
                d(b.host_bytes, a.host_bytes),
                d(b.media_bytes, a.media_bytes),
            );
            // A coarse media counter (often 1 GiB) says nothing about a short run.
            let coarse = a.media_unit.is_some_and(|u| h.is_none_or(|h| h < 16 * u));
            Wa {
                source: "smart".into(),
                host_bytes: h,
                device_bytes: if coarse { None } else { m },
                ratio: if coarse { None } else { ratio(h, m) },
                note: if coarse {
                    "the drive's media-write counter is too coarse for a run this short; not reported".into()
                } else if m.is_some() {
                    "the drive's media writes against its host writes (SMART)".into()
                } else {
                    "the drive reports host writes only; media writes not reported by this device"
                        .into()
                },
                outside_bytes: None,
            }
        }
        (_, Some(Err(why))) | (Some(Err(why)), _) => Wa {
            source: "smart".into(),
            host_bytes: None,
            device_bytes: None,
            ratio: None,
            note: why,
            outside_bytes: None,
        },
        _ => Wa {
            source: "smart".into(),
            host_bytes: None,
            device_bytes: None,
            ratio: None,
            note: format!("not reported: {}", unseen(targets)),
            outside_bytes: None,
        },
    }
}

/// Why a run's targets have no device: the first one without one says; when each has
/// one, the run had several (a drive's own counters are read for a run on one target).
fn unseen(targets: &[Target]) -> &'static str {
    if targets.len() > 1 && targets.iter().all(|t| t.device.is_some()) {
        return "a drive's own counters are read for a run on one target, and this run wrote to several";
    }
    let fs = targets
        .iter()
        .find(|t| t.device.is_none())
        .and_then(|t| t.fs.as_ref());
    crate::results::env::FsInfo::unseen_device(fs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1 << 20;

    #[test]
    fn outside_bounds_from_zram_counters() {
        let shape = |held, after, same| Shape {
            held,
            after,
            span: 64 * M,
            disksize: 256 * M,
            same,
        };
        // The probe's zram: 128 MiB held, a fill of the first 64 MiB leaves 128 MiB.
        // Rewriting the span whole (no same-filled pages) pins the other 64 MiB.
        assert_eq!(
            outside_bounds(&shape(128 * M, 128 * M, Some(0))),
            Some([64 * M, 64 * M])
        );
        // A random write cannot tell how much of the span it rewrote.
        assert_eq!(
            outside_bounds(&shape(128 * M, 128 * M, None)),
            Some([64 * M, 128 * M])
        );
        // Same-filled pages after a whole rewrite widen the bound by their bytes.
        assert_eq!(
            outside_bounds(&shape(100 * M, 120 * M, Some(8 * M))),
            Some([56 * M, 64 * M])
        );
        // The span is the whole device: nothing can be outside it.
        let whole = Shape {
            disksize: 64 * M,
            ..shape(32 * M, 64 * M, None)
        };
        assert_eq!(outside_bounds(&whole), Some([0, 0]));
        // Counters that contradict the run (another writer): no bounds.
        assert_eq!(outside_bounds(&shape(8 * M, 100 * M, Some(0))), None);
    }
}

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
                let compression =
                    (targets.iter()).find_map(|t| t.fs.as_ref().and_then(|f| f.compression()));
                // Under 1 on a compressing btrfs is its compression, merged or not.
                let merged = !run.spec.direct
                    && compression.is_none()
                    && ratio(Some(host), dev).is_some_and(|r| r < 0.9);
                let compressed = compression.map(|c| {
                    format!("; btrfs compresses what it stores here ({c}): under 1 is its compression")
                });
                format!(
                    "bytes iomark wrote against bytes the kernel sent to {} (filesystem metadata, journal and other writers included){}{}",
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
    });
    // zram: what it stores compressed against what it was given (one device's whole
    // accounting, so for a run on one target).
    if let [target] = targets
        && let Some((orig, compr)) = target
            .device
            .as_ref()
            .and_then(crate::io::env::zram_mm_stat)
    {
        all.push(Wa {
            source: "zram".into(),
            host_bytes: Some(orig),
            device_bytes: Some(compr),
            ratio: ratio(Some(orig), Some(compr)),
            note: if orig > 0 {
                let mut n = "zram mm_stat after the run: compressed bytes stored against original bytes stored".to_string();
                // mm_stat is the device's whole content, not this run's writes alone.
                if let Some((held, _)) = before.zram.filter(|z| z.0 > 0) {
                    n.push_str(&format!(
                        ", the device's whole content: it held {} before this run, so a run that rewrote only part of it gives a blend of both",
                        crate::units::fmt_size(held)
                    ));
                }
                n
            } else {
                "not reported: zram holds no data to compress (pages of one repeated word, zeros among them, are kept as a count: mm_stat same_pages)".into()
            },
        });
    }
    all.push(smart_source(smart_before, smart_after, targets));
    let best = ["smart", "zram", "block_layer"]
        .iter()
        .find_map(|s| all.iter().find(|w| w.source == *s && w.ratio.is_some()))
        .cloned();
    run.write_amplification = best;
    run.write_amplification_sources = all;
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
            }
        }
        (_, Some(Err(why))) | (Some(Err(why)), _) => Wa {
            source: "smart".into(),
            host_bytes: None,
            device_bytes: None,
            ratio: None,
            note: why,
        },
        _ => Wa {
            source: "smart".into(),
            host_bytes: None,
            device_bytes: None,
            ratio: None,
            note: format!("not reported: {}", unseen(targets)),
        },
    }
}

/// Why a run's targets have no device: the first one without one says.
fn unseen(targets: &[Target]) -> &'static str {
    let fs = targets
        .iter()
        .find(|t| t.device.is_none())
        .and_then(|t| t.fs.as_ref());
    crate::results::env::FsInfo::unseen_device(fs)
}

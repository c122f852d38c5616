//! A repetition on several targets: each target's workers' outputs added up apart from
//! the aggregate, and turned into the target's own figures over its own window.

use crate::io::target::Target;
use crate::measure::tally::Tally;
use crate::measure::worker_out::FileOut;
use crate::results::env::DeviceDelta;
use crate::results::schema::{DirStats, TargetRep};
use crate::results::stats::{Counter, LatHist};

/// A target's counts (a run on several targets) are a [`Tally`] of its workers'.
impl Tally {
    /// One file's share of a worker's figures (`--file-service`); `end_ns` is the end of
    /// that worker's window, which is the file's too.
    pub(crate) fn add_file(&mut self, f: &FileOut, end_ns: u64) {
        self.read += f.read;
        self.write += f.write;
        if let Some(h) = &f.hist_read {
            self.hist_read += h;
        }
        if let Some(h) = &f.hist_write {
            self.hist_write += h;
        }
        self.trim += f.trim;
        if let Some(h) = &f.hist_trim {
            self.hist_trim += h;
        }
        self.fsyncs += f.fsyncs;
        self.end_ns = self.end_ns.max(end_ns);
    }
}

/// Each target's figures in a repetition on several (none for one target).
pub(crate) fn target_reps(
    targets: &[Target],
    parts: &[Tally],
    devices: Vec<Option<DeviceDelta>>,
) -> Vec<TargetRep> {
    (targets.iter().zip(parts).zip(devices))
        .map(|((t, p), device)| {
            let elapsed_s = (p.end_ns as f64 / 1e9).max(1e-9);
            TargetRep {
                path: t.path.display().to_string(),
                rank: None,
                host: None,
                elapsed_s,
                read: dir_stats(p.read, &p.hist_read, elapsed_s),
                write: dir_stats(p.write, &p.hist_write, elapsed_s),
                trim: dir_stats(p.trim, &p.hist_trim, elapsed_s),
                fsyncs: p.fsyncs,
                device,
                verify: None,
            }
        })
        .collect()
}

/// One direction's figures over a window of `elapsed_s` seconds.
pub(crate) fn dir_stats(c: Counter, h: &LatHist, elapsed_s: f64) -> DirStats {
    DirStats {
        ios: c.ios,
        bytes: c.bytes,
        iops: c.ios as f64 / elapsed_s,
        bw_bytes: c.bytes as f64 / elapsed_s,
        lat_ns: h.summary(),
    }
}

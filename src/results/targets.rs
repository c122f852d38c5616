//! Several targets in one run: each target's own figures beside the aggregate that the
//! repetition's `read`, `write` and `device` hold. The aggregate is exact: its I/Os and
//! bytes are the targets' sums over the common window (the first start to the last
//! target's end), and its latency percentiles come from the targets' histograms merged,
//! never from averaging their percentiles.

use serde::{Deserialize, Serialize};

use crate::results::env::DeviceDelta;
use crate::results::schema::{DirStats, Repetition, Status, Summary, TargetDesc};

/// One target's figures in one repetition: `repetitions[].targets[]`, in the order of
/// `spec.targets`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetRep {
    /// The target as given (as the rank opened it, in `ranks`).
    pub path: String,
    /// In `ranks` (a scaled-out run): the MPI rank these figures are from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// In `ranks`: the host the rank ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Seconds from the common start (after the ramp) to this target's last counted
    /// completion (or its end for a time-based run): the window of its own IOPS and MB/s.
    pub elapsed_s: f64,
    /// This target's reads: I/Os, bytes, rates over its own window, latency.
    pub read: DirStats,
    /// This target's writes.
    pub write: DirStats,
    /// This target's trims (discards).
    #[serde(default)]
    pub trim: DirStats,
    /// fsync calls issued on this target in the measured window.
    #[serde(default)]
    pub fsyncs: u64,
    /// The kernel's block counters of the device under this target, after minus before;
    /// `null` when it has no block device iomark can see.
    pub device: Option<DeviceDelta>,
    /// With `--verify` on several files (`--file-service`): what reading this target's
    /// written blocks back found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::results::verify::VerifyReport>,
}

/// One target of a run on several: `runs[].targets[]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetPart {
    /// The target as it was opened.
    pub target: TargetDesc,
    /// Statistics across the complete repetitions of this target's own figures.
    pub summary: Summary,
}

/// A run measured at the same time as other runs (the jobs of one fio group, `iomark
/// fio`): `runs[].group`. Every run of the group carries the same copy; its own figures
/// (`repetitions`, `summary`) are its jobs' alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunGroup {
    /// The names of the runs measured together, in order (this run among them): their
    /// repetitions of the same index ran at the same time, behind one start gate.
    pub runs: Vec<String>,
    /// The group's figures in each repetition: every run's I/Os added up.
    pub repetitions: Vec<GroupRep>,
    /// Statistics across the complete repetitions of the group's figures.
    pub summary: Summary,
}

/// The figures of a group of runs in one repetition (`runs[].group.repetitions[]`). Exact:
/// I/Os and bytes are the runs' sums over the common window (the common start, after
/// the ramp, to the last run's end), latency percentiles come from the runs' histograms
/// merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupRep {
    /// 1-based repetition number.
    pub index: u32,
    /// `interrupted` when stopped early.
    pub status: Status,
    /// Seconds from the common start to the last run's end.
    pub elapsed_s: f64,
    pub read: DirStats,
    pub write: DirStats,
    /// Trims (discards).
    #[serde(default)]
    pub trim: DirStats,
    /// The kernel's block counters of the devices under the runs' targets (each device
    /// once), after minus before; `null` unless every target has one.
    pub device: Option<DeviceDelta>,
}

/// A run scaled out over MPI ranks (`mpirun -np N iomark run …`): `runs[].mpi`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpiInfo {
    /// Ranks in the run.
    pub ranks: u32,
    /// Each rank's host, by rank.
    pub hosts: Vec<String>,
    /// How the ranks share the target: `template` (a file or device per rank, named with
    /// `{rank}`, `{host}` or `{local_rank}`), `file-per-process` (a file per rank in a
    /// directory) or `segmented` (one file or device, a segment of its span per rank).
    pub layout: String,
}

/// Statistics of target `i` across `reps` (the complete ones, as [`Summary::of`]).
pub(crate) fn target_summary(reps: &[Repetition], i: usize) -> Summary {
    let items: Vec<(Status, DirStats, DirStats)> = reps
        .iter()
        .filter_map(|r| r.targets.get(i).map(|t| (r.status, t.read, t.write)))
        .collect();
    let mut s = Summary::of_dirs(&items);
    let trims: Vec<_> = (reps.iter())
        .filter_map(|r| r.targets.get(i).map(|t| (r.status, t.trim, t.trim)))
        .collect();
    if trims.iter().any(|(_, t, _)| t.ios > 0) {
        s.trim = Summary::of_dirs(&trims).read;
    }
    s
}

/// Statistics across the complete repetitions of a group's figures.
pub(crate) fn group_summary(reps: &[GroupRep]) -> Summary {
    let items: Vec<(Status, DirStats, DirStats)> =
        reps.iter().map(|r| (r.status, r.read, r.write)).collect();
    let mut s = Summary::of_dirs(&items);
    if reps.iter().any(|r| r.trim.ios > 0) {
        let trims: Vec<_> = reps.iter().map(|r| (r.status, r.trim, r.trim)).collect();
        s.trim = Summary::of_dirs(&trims).read;
    }
    s
}

/// The sum of the targets' device counters, named `a+b+c`; `None` unless every target
/// has one (a sum over some of them would pass for the whole).
pub fn device_sum<'a>(
    devices: impl IntoIterator<Item = Option<&'a DeviceDelta>>,
) -> Option<DeviceDelta> {
    let mut sum: Option<DeviceDelta> = None;
    for d in devices {
        let d = d?;
        match sum.as_mut() {
            None => sum = Some(d.clone()),
            Some(s) => {
                s.name = format!("{}+{}", s.name, d.name);
                s.read_ios += d.read_ios;
                s.read_bytes += d.read_bytes;
                s.write_ios += d.write_ios;
                s.write_bytes += d.write_bytes;
                s.discard_ios += d.discard_ios;
                s.discard_bytes += d.discard_bytes;
                s.flush_ios += d.flush_ios;
            }
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str, r: u64, w: u64) -> DeviceDelta {
        DeviceDelta {
            name: name.into(),
            read_ios: r,
            read_bytes: r * 4096,
            write_ios: w,
            write_bytes: w * 4096,
            ..Default::default()
        }
    }

    #[test]
    fn device_sum_adds_every_counter_and_needs_them_all() {
        let (a, b) = (dev("loop1", 10, 3), dev("zram4", 5, 7));
        let s = device_sum([Some(&a), Some(&b)]).unwrap();
        assert_eq!(s.name, "loop1+zram4");
        assert_eq!((s.read_ios, s.write_ios), (15, 10));
        assert_eq!((s.read_bytes, s.write_bytes), (15 * 4096, 10 * 4096));
        assert_eq!(device_sum([Some(&a), None]), None);
    }
}

//! The exact aggregate of a scaled-out repetition (MPI): what each rank sends to rank 0
//! (its repetition and its latency histograms as buckets), and the one repetition rank 0
//! makes of them. I/Os and bytes are sums; the window runs from the common start (every
//! rank passes a barrier just before its gate opens) to the last rank's end, so IOPS and
//! MB/s are the sums over that window; latency percentiles are read from the ranks'
//! histograms merged, never averaged; the series are summed interval by interval on the
//! common clock. Pure: no MPI here (`study::mpi` carries the bytes), so it is tested in
//! every build.

use serde::{Deserialize, Serialize};

use crate::results::env::DeviceDelta;
use crate::results::schema::{Cpu, CpuPart, DirStats, Point, Repetition, Status, TargetRep};
use crate::results::stats::LatHist;

/// What one rank sends after each repetition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankPart {
    pub rank: u32,
    pub host: String,
    /// The target as the rank opened it.
    pub path: String,
    pub rep: Repetition,
    /// Its merged read and write latency histograms ([`LatHist::buckets`]).
    pub read_hist: Vec<(u64, u64)>,
    pub write_hist: Vec<(u64, u64)>,
    /// `--stonewall`: this rank did its work before any other rank had (and told the
    /// others to stop).
    #[serde(default)]
    pub first_done: bool,
}

/// One host's ranks together (`repetitions[].hosts[]`): their I/Os and bytes, their
/// rates over the common window (the aggregate's), their latency from their merged
/// histograms, and the devices under them (a device several of its ranks share counted
/// once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostRep {
    pub host: String,
    /// The ranks that ran on it.
    pub ranks: Vec<u32>,
    pub read: DirStats,
    pub write: DirStats,
    /// The kernel's block counters of its devices, after minus before (`null` unless
    /// every rank on it saw a device).
    pub device: Option<DeviceDelta>,
}

/// The ranks grouped by host (in the order hosts first appear), over `elapsed_s`.
fn hosts(parts: &[RankPart], elapsed_s: f64) -> Vec<HostRep> {
    let mut names: Vec<&str> = Vec::new();
    for p in parts {
        if !names.contains(&p.host.as_str()) {
            names.push(&p.host);
        }
    }
    names
        .into_iter()
        .map(|h| {
            let on: Vec<RankPart> = parts.iter().filter(|p| p.host == h).cloned().collect();
            HostRep {
                host: h.to_string(),
                ranks: on.iter().map(|p| p.rank).collect(),
                read: dir(&on, |r| &r.read, |p| &p.read_hist, elapsed_s),
                write: dir(&on, |r| &r.write, |p| &p.write_hist, elapsed_s),
                device: devices(&on),
            }
        })
        .collect()
}

/// One direction of the aggregate over `elapsed_s` seconds.
fn dir(
    parts: &[RankPart],
    f: fn(&Repetition) -> &DirStats,
    h: fn(&RankPart) -> &[(u64, u64)],
    elapsed_s: f64,
) -> DirStats {
    let mut hist = LatHist::precise();
    for p in parts {
        hist += &LatHist::from_buckets(h(p));
    }
    let ios: u64 = parts.iter().map(|p| f(&p.rep).ios).sum();
    let bytes: u64 = parts.iter().map(|p| f(&p.rep).bytes).sum();
    DirStats {
        ios,
        bytes,
        iops: ios as f64 / elapsed_s,
        bw_bytes: bytes as f64 / elapsed_s,
        lat_ns: hist.summary(),
    }
}

/// The devices under the ranks' targets: one figure per (host, device), the largest any
/// rank on that host saw (ranks sharing a device each read the whole device's counters
/// over nearly the same window, so summing them would count its I/O once per rank),
/// then summed over the hosts' devices. `None` unless every rank saw a device.
fn devices(parts: &[RankPart]) -> Option<DeviceDelta> {
    let mut seen: Vec<(&str, DeviceDelta)> = Vec::new();
    for p in parts {
        let d = p.rep.device.as_ref()?;
        match seen
            .iter_mut()
            .find(|(h, s)| *h == p.host && s.name == d.name)
        {
            Some((_, s)) if s.read_bytes + s.write_bytes >= d.read_bytes + d.write_bytes => {}
            Some((_, s)) => *s = d.clone(),
            None => seen.push((&p.host, d.clone())),
        }
    }
    crate::results::targets::device_sum(seen.iter().map(|(_, d)| Some(d)))
}

/// The ranks' series summed interval by interval (interval k of every rank covers the
/// same stretch after the common start): rates add up, the mean latency is weighted by
/// each rank's I/Os, and the p99 is the highest rank's (an upper bound: the series keep
/// no histograms).
fn series(parts: &[RankPart]) -> Vec<Point> {
    let n = parts.iter().map(|p| p.rep.series.len()).max().unwrap_or(0);
    (0..n)
        .map(|k| {
            let pts: Vec<&Point> = parts.iter().filter_map(|p| p.rep.series.get(k)).collect();
            let weight = |p: &Point| p.read_iops + p.write_iops + p.trim_iops;
            let w: f64 = pts.iter().map(|p| weight(p)).sum();
            Point {
                t_s: pts.iter().map(|p| p.t_s).fold(0.0, f64::max),
                read_iops: pts.iter().map(|p| p.read_iops).sum(),
                write_iops: pts.iter().map(|p| p.write_iops).sum(),
                read_bw_bytes: pts.iter().map(|p| p.read_bw_bytes).sum(),
                write_bw_bytes: pts.iter().map(|p| p.write_bw_bytes).sum(),
                trim_iops: pts.iter().map(|p| p.trim_iops).sum(),
                trim_bw_bytes: pts.iter().map(|p| p.trim_bw_bytes).sum(),
                lat_mean_ns: if w > 0.0 {
                    pts.iter().map(|p| p.lat_mean_ns * weight(p)).sum::<f64>() / w
                } else {
                    0.0
                },
                lat_p99_ns: pts.iter().map(|p| p.lat_p99_ns).max().unwrap_or(0),
            }
        })
        .collect()
}

/// The CPU time of every rank's process added up.
fn cpu(parts: &[RankPart], ios: u64) -> Cpu {
    let part = |f: fn(&Cpu) -> &CpuPart| {
        let (u, s) = parts.iter().fold((0.0, 0.0), |(u, s), p| {
            (u + f(&p.rep.cpu).user_s, s + f(&p.rep.cpu).sys_s)
        });
        CpuPart::new(u, s, ios)
    };
    let all = CpuPart::new(
        parts.iter().map(|p| p.rep.cpu.user_s).sum(),
        parts.iter().map(|p| p.rep.cpu.sys_s).sum(),
        ios,
    );
    Cpu {
        user_s: all.user_s,
        sys_s: all.sys_s,
        per_io_ns: all.per_io_ns,
        workers: part(|c| &c.workers),
        io_wq: part(|c| &c.io_wq),
        sqpoll: part(|c| &c.sqpoll),
        other: part(|c| &c.other),
        // Each rank's machine is its host's: not added up.
        machine: None,
    }
}

/// The verify reports of every rank added up (each rank read back its own blocks).
fn verify(parts: &[RankPart]) -> Option<crate::results::schema::VerifyReport> {
    let mut all: Option<crate::results::schema::VerifyReport> = None;
    for v in parts.iter().filter_map(|p| p.rep.verify.as_ref()) {
        match all.as_mut() {
            None => all = Some(v.clone()),
            Some(a) => {
                a.add_cut(v);
                a.blocks += v.blocks;
                a.good += v.good;
                a.corrupt += v.corrupt;
                a.misplaced += v.misplaced;
                a.stale += v.stale;
                a.bytes_read += v.bytes_read;
                a.first_bad.extend(v.first_bad.iter().copied().take(8));
            }
        }
    }
    all
}

/// The one repetition of a scaled-out run, from every rank's part (in rank order).
pub fn aggregate(parts: &[RankPart], direct: bool) -> Repetition {
    let elapsed_s = (parts.iter().map(|p| p.rep.elapsed_s))
        .fold(0.0, f64::max)
        .max(1e-9);
    let read = dir(parts, |r| &r.read, |p| &p.read_hist, elapsed_s);
    let write = dir(parts, |r| &r.write, |p| &p.write_hist, elapsed_s);
    let device = devices(parts);
    Repetition {
        index: parts.first().map_or(1, |p| p.rep.index),
        status: if parts.iter().all(|p| p.rep.status == Status::Complete) {
            Status::Complete
        } else {
            Status::Interrupted
        },
        elapsed_s,
        read,
        write,
        trim: Default::default(),
        fsyncs: parts.iter().map(|p| p.rep.fsyncs).sum(),
        cpu: cpu(parts, read.ios + write.ios),
        // Every rank resolves the same options for the same layout: rank 0's stands.
        spin_wait_ns: parts.first().and_then(|p| p.rep.spin_wait_ns),
        page_cache_hit_pct: Repetition::measure_page_cache(direct, read.bytes, device.as_ref()),
        device,
        series: series(parts),
        // The compressibility measured on rank 0's sample stands for the data: every rank
        // generates it the same way.
        data: parts.iter().find_map(|p| p.rep.data),
        verify: verify(parts),
        targets: Vec::new(),
        hosts: hosts(parts, elapsed_s),
        ranks: parts
            .iter()
            .map(|p| TargetRep {
                path: p.path.clone(),
                rank: Some(p.rank),
                host: Some(p.host.clone()),
                elapsed_s: p.rep.elapsed_s,
                read: p.rep.read,
                write: p.rep.write,
                trim: p.rep.trim,
                fsyncs: p.rep.fsyncs,
                device: p.rep.device.clone(),
                verify: None,
            })
            .collect(),
    }
}

/// `--stonewall`: the rank that finished its work first, when, and the window the
/// aggregate then covers (to the last rank's stop).
pub fn stonewall_note(parts: &[RankPart], agg: &Repetition) -> Option<String> {
    let first = (parts.iter().filter(|p| p.first_done))
        .min_by(|a, b| a.rep.elapsed_s.total_cmp(&b.rep.elapsed_s))?;
    Some(format!(
        "repetition {}: stonewalled at {:.2} s by rank {} on {} (the first to finish its work); every rank stopped by {:.2} s, the aggregate's window; what each rank moved is in its row",
        agg.index, first.rep.elapsed_s, first.rank, first.host, agg.elapsed_s
    ))
}

/// How uneven the ranks were: the slowest and the fastest by MB/s, named.
pub fn unevenness(rep: &Repetition) -> Option<String> {
    let rate = |t: &TargetRep| (t.read.bytes + t.write.bytes) as f64 / t.elapsed_s.max(1e-9) / 1e6;
    let by = |a: &&TargetRep, b: &&TargetRep| rate(a).total_cmp(&rate(b));
    let slow = rep.ranks.iter().min_by(by)?;
    let fast = rep.ranks.iter().max_by(by)?;
    let name = |t: &TargetRep| {
        format!(
            "rank {} on {}",
            t.rank.unwrap_or(0),
            t.host.as_deref().unwrap_or("?")
        )
    };
    Some(format!(
        "repetition {}: the slowest rank was {} at {:.1} MB/s ({:.2} s), the fastest {} at {:.1} MB/s ({:.2} s)",
        rep.index,
        name(slow),
        rate(slow),
        slow.elapsed_s,
        name(fast),
        rate(fast),
        fast.elapsed_s
    ))
}

#[cfg(test)]
#[path = "ranks_tests.rs"]
mod tests;

//! A run on several targets in the reports: the per-target table (each target's mean
//! IOPS, MB/s and latency across its repetitions, the I/Os iomark counted and the I/Os
//! its device's kernel counters moved, then the aggregate) and the stacked chart of each
//! target's share of the aggregate throughput. Reads results only.

use crate::report::chart::stack::{StackChart, stacked_bars};
use crate::report::fmt::{NONE, fmt_count, fmt_lat, fmt_mbps};
use crate::report::table::Table;
use crate::results::env::DeviceDelta;
use crate::results::schema::{DirStats, Repetition, Run, Status, Summary};
use crate::results::summary::DirSummary;
use crate::units::fmt_ns;

/// The repetitions the tables summarise: the complete ones, all when none completed.
fn counted(run: &Run) -> Vec<&Repetition> {
    let complete: Vec<&Repetition> = (run.repetitions.iter())
        .filter(|r| r.status == Status::Complete)
        .collect();
    if complete.is_empty() {
        run.repetitions.iter().collect()
    } else {
        complete
    }
}

/// The I/Os a device's kernel counters moved: reads, writes and discards.
fn kernel_ios(d: &DeviceDelta) -> u64 {
    d.read_ios + d.write_ios + d.discard_ios
}

/// One direction's I/Os in a device's kernel counters.
type KernelCount = fn(&DeviceDelta) -> u64;

/// The rows of one name: its device, its summary, and the I/Os of the counted
/// repetitions as iomark and as the kernel counted them. Reads, writes and trims together
/// have no one latency: a summary of more than one direction is a row of their sum
/// without latencies, then a row for each direction with its own figures (said in the tables' notes).
fn rows(
    name: &str,
    device: &str,
    s: &Summary,
    dirs: &[[DirStats; 3]],
    devs: &[Option<&DeviceDelta>],
) -> Vec<Vec<String>> {
    let ios = |i: usize| dirs.iter().map(|d| d[i].ios).sum::<u64>();
    let kernel =
        |f: fn(&DeviceDelta) -> u64| -> Option<u64> { devs.iter().map(|d| d.map(f)).sum() };
    let cells =
        |name: String, iops: f64, bw: f64, lat: Option<&DirSummary>, n: u64, k: Option<u64>| {
            vec![
                name,
                device.to_string(),
                fmt_count(iops),
                fmt_mbps(bw),
                lat.map_or(NONE.into(), |d| fmt_lat(&d.lat_p50_ns)),
                lat.map_or(NONE.into(), |d| fmt_lat(&d.lat_p99_ns)),
                n.to_string(),
                k.map_or(NONE.into(), |k| k.to_string()),
            ]
        };
    let each: [(&str, &DirSummary, KernelCount); 3] = [
        ("read", &s.read, |d| d.read_ios),
        ("write", &s.write, |d| d.write_ios),
        ("trim", &s.trim, |d| d.discard_ios),
    ];
    let did: Vec<usize> = (0..3).filter(|&i| ios(i) > 0).collect();
    let total = (0..3).map(ios).sum();
    let (iops, bw) = (s.total(|d| &d.iops).mean, s.total(|d| &d.bw_bytes).mean);
    if did.len() < 2 {
        return vec![cells(
            name.into(),
            iops,
            bw,
            Some(s.main()),
            total,
            kernel(kernel_ios),
        )];
    }
    let mut out = vec![cells(
        name.into(),
        iops,
        bw,
        None,
        total,
        kernel(kernel_ios),
    )];
    for i in did {
        let (dir, d, k) = each[i];
        let row = cells(
            format!("{name}: {dir}"),
            d.iops.mean,
            d.bw_bytes.mean,
            Some(d),
            ios(i),
            kernel(k),
        );
        out.push(row);
    }
    out
}

/// The per-target table of a run on several targets; `None` for a run on one.
pub(crate) fn run_targets(run: &Run) -> Option<Table> {
    if run.targets.is_empty() {
        return None;
    }
    let mut t = Table::new([
        "target",
        "device",
        "IOPS",
        "MB/s",
        "p50",
        "p99",
        "I/Os",
        "kernel I/Os",
    ]);
    let reps = counted(run);
    let device_of = |i: usize| {
        run.targets[i]
            .target
            .device
            .as_ref()
            .map(|d| d.name.as_str())
    };
    for (i, part) in run.targets.iter().enumerate() {
        let per: Vec<_> = reps.iter().filter_map(|r| r.targets.get(i)).collect();
        let dirs: Vec<_> = per.iter().map(|p| [p.read, p.write, p.trim]).collect();
        let devs: Vec<_> = per.iter().map(|p| p.device.as_ref()).collect();
        let dev = device_of(i).unwrap_or(NONE);
        // A device under several targets: its counters are all of theirs, not this one's.
        let sharing = (0..run.targets.len())
            .filter(|&j| device_of(j).is_some_and(|d| d == dev))
            .count();
        for mut cells in rows(&part.target.path, dev, &part.summary, &dirs, &devs) {
            if sharing > 1 && cells[7] != NONE {
                cells[7] = format!("{} ({dev}, all {sharing} targets)", cells[7]);
            }
            t.push(cells);
        }
    }
    let dirs: Vec<_> = reps.iter().map(|r| [r.read, r.write, r.trim]).collect();
    let devs: Vec<_> = reps.iter().map(|r| r.device.as_ref()).collect();
    let name = format!("all {} (aggregate)", run.targets.len());
    for cells in rows(&name, "", &run.summary, &dirs, &devs) {
        t.push(cells);
    }
    Some(t)
}

/// The table of a run measured together with others (the jobs of a fio group): the run's
/// own figures, then the group's sum; `None` for a run measured alone.
pub(crate) fn run_group(run: &Run) -> Option<Table> {
    let g = run.group.as_ref()?;
    let mut t = Table::new([
        "run",
        "device",
        "IOPS",
        "MB/s",
        "p50",
        "p99",
        "I/Os",
        "kernel I/Os",
    ]);
    let reps = counted(run);
    let dirs: Vec<_> = reps.iter().map(|r| [r.read, r.write, r.trim]).collect();
    let devs: Vec<_> = reps.iter().map(|r| r.device.as_ref()).collect();
    let dev = run.target.device.as_ref().map_or(NONE, |d| d.name.as_str());
    for cells in rows(&run.name, dev, &run.summary, &dirs, &devs) {
        t.push(cells);
    }
    let complete: Vec<_> = (g.repetitions.iter())
        .filter(|r| r.status == Status::Complete)
        .collect();
    let greps = if complete.is_empty() {
        g.repetitions.iter().collect()
    } else {
        complete
    };
    let dirs: Vec<_> = greps.iter().map(|r| [r.read, r.write, r.trim]).collect();
    let devs: Vec<_> = greps.iter().map(|r| r.device.as_ref()).collect();
    let name = format!("group: {} (sum)", g.runs.join(" + "));
    for cells in rows(&name, "", &g.summary, &dirs, &devs) {
        t.push(cells);
    }
    Some(t)
}

/// The note under a group's table.
pub(crate) const GROUP_NOTE: &str = "measured together behind one start gate: each run's IOPS and MB/s are over its own window; the group's are every run's I/Os over the common window (the start to the last run's end), its percentiles from the runs' latency histograms merged; a row of reads and writes together has no one latency (-), the rows under it give each direction's own";

/// The per-rank table of a run scaled out over MPI, from each repetition's `ranks`
/// (means over the counted repetitions): each rank's host, target, IOPS and MB/s over
/// its own window, p99, the share of the aggregate's window it ran, its I/Os and its
/// device's; the slowest and the fastest rank (by MB/s) named in the last column. `None`
/// for a run in one process.
pub(crate) fn run_ranks(run: &Run) -> Option<Table> {
    use crate::results::schema::TargetRep;
    let reps = counted(run);
    let n = reps
        .iter()
        .map(|r| r.ranks.len())
        .max()
        .filter(|n| *n > 0)?;
    let mut t = Table::new([
        "rank",
        "host",
        "target",
        "IOPS",
        "MB/s",
        "p99",
        "window",
        "I/Os",
        "kernel I/Os",
        "",
    ]);
    let per = |i: usize| -> Vec<(&TargetRep, f64)> {
        (reps.iter())
            .filter_map(|r| r.ranks.get(i).map(|t| (t, r.elapsed_s)))
            .collect()
    };
    let mean = |i: usize, f: &dyn Fn(&TargetRep, f64) -> f64| {
        let p = per(i);
        p.iter().map(|(t, w)| f(t, *w)).sum::<f64>() / p.len().max(1) as f64
    };
    let mbps = |i: usize| {
        mean(i, &|p, _| {
            p.read.bw_bytes + p.write.bw_bytes + p.trim.bw_bytes
        })
    };
    let by = |a: &usize, b: &usize| mbps(*a).total_cmp(&mbps(*b));
    let slowest = (0..n).min_by(by);
    let fastest = (0..n).max_by(by);
    for i in 0..n {
        let p = per(i);
        let Some((first, _)) = p.first() else {
            continue;
        };
        let main = |p: &TargetRep| {
            if p.trim.ios > p.read.ios && p.trim.ios > p.write.ios {
                p.trim
            } else if p.read.ios >= p.write.ios {
                p.read
            } else {
                p.write
            }
        };
        let kernel: Option<u64> = (p.iter())
            .map(|(t, _)| t.device.as_ref().map(kernel_ios))
            .sum();
        let mark = match (n > 1, Some(i) == slowest, Some(i) == fastest) {
            (true, true, _) => "slowest",
            (true, _, true) => "fastest",
            _ => "",
        };
        t.push([
            first.rank.map_or(NONE.into(), |r| r.to_string()),
            first.host.clone().unwrap_or_else(|| NONE.into()),
            first.path.clone(),
            fmt_count(mean(i, &|p, _| p.read.iops + p.write.iops + p.trim.iops)),
            fmt_mbps(mbps(i)),
            fmt_ns(mean(i, &|p, _| main(p).lat_ns.p99 as f64)),
            format!("{:.0}%", mean(i, &|p, w| 100.0 * p.elapsed_s / w.max(1e-9))),
            (p.iter().map(|(t, _)| t.read.ios + t.write.ios + t.trim.ios))
                .sum::<u64>()
                .to_string(),
            kernel.map_or(NONE.into(), |k| k.to_string()),
            mark.to_string(),
        ]);
    }
    Some(t)
}

/// The per-host table of a run scaled out over several hosts, from each repetition's
/// `hosts` (means over the counted repetitions): each host's ranks, IOPS and MB/s over
/// the common window, p99 from its ranks' merged histograms, its I/Os and its devices'.
/// `None` for a run on one host (its figures are the aggregate's).
pub(crate) fn run_hosts(run: &Run) -> Option<Table> {
    let reps = counted(run);
    let n = reps
        .iter()
        .map(|r| r.hosts.len())
        .max()
        .filter(|n| *n > 1)?;
    let mut t = Table::new([
        "host",
        "ranks",
        "IOPS",
        "MB/s",
        "p99",
        "I/Os",
        "kernel I/Os",
    ]);
    for i in 0..n {
        let per: Vec<_> = reps.iter().filter_map(|r| r.hosts.get(i)).collect();
        let Some(first) = per.first() else { continue };
        let k = per.len() as f64;
        let mean = |f: &dyn Fn(&crate::results::ranks::HostRep) -> f64| {
            per.iter().map(|h| f(h)).sum::<f64>() / k
        };
        let main = |h: &crate::results::ranks::HostRep| {
            if h.read.ios >= h.write.ios {
                h.read
            } else {
                h.write
            }
        };
        let kernel: Option<u64> = (per.iter())
            .map(|h| h.device.as_ref().map(|d| d.read_ios + d.write_ios))
            .sum();
        let ranks: Vec<String> = first.ranks.iter().map(u32::to_string).collect();
        t.push([
            first.host.clone(),
            ranks.join(","),
            fmt_count(mean(&|h| h.read.iops + h.write.iops)),
            fmt_mbps(mean(&|h| h.read.bw_bytes + h.write.bw_bytes)),
            fmt_ns(mean(&|h| main(h).lat_ns.p99 as f64)),
            (per.iter().map(|h| h.read.ios + h.write.ios))
                .sum::<u64>()
                .to_string(),
            kernel.map_or(NONE.into(), |k| k.to_string()),
        ]);
    }
    Some(t)
}

/// The note under the per-host table.
pub(crate) const HOSTS_NOTE: &str = "each host's IOPS and MB/s are its ranks' I/Os over the common window, so the hosts add up to the aggregate; its p99 comes from its ranks' histograms merged, its kernel I/Os from the devices under them (a device its ranks share counted once)";

/// Each repetition's throughput as a stack of the ranks' shares (each rank's bytes over
/// the common window): the bar is the aggregate.
pub(crate) fn rank_chart(run: &Run) -> Option<String> {
    let n = run
        .repetitions
        .iter()
        .map(|r| r.ranks.len())
        .max()
        .filter(|n| *n > 0)?;
    let share = |r: &Repetition, i: usize| {
        r.ranks.get(i).map_or(0.0, |t| {
            (t.read.bytes + t.write.bytes + t.trim.bytes) as f64 / r.elapsed_s.max(1e-9) / 1e6
        })
    };
    Some(stacked_bars(&StackChart {
        title: "Throughput by rank (stacked: the bar is the aggregate)".into(),
        y_label: "MB/s".into(),
        categories: (run.repetitions.iter())
            .map(|r| format!("repetition {}", r.index))
            .collect(),
        layers: (0..n)
            .map(|i| {
                let v = run.repetitions.iter().map(|r| share(r, i)).collect();
                (format!("rank {i}"), v)
            })
            .collect(),
    }))
}

/// The note under the per-rank table.
pub(crate) const RANKS_NOTE: &str = "each rank's IOPS and MB/s are over its own window, averaged over the repetitions, and its window is that share of the aggregate's; the slowest and the fastest rank are by MB/s; the aggregate (the run's figures) is every rank's I/Os over the common window, its percentiles from the ranks' histograms merged";

/// The note under the per-target table: what the aggregate is.
pub(crate) const AGGREGATE_NOTE: &str = "each target's IOPS and MB/s are over its own window; the aggregate's are all targets' I/Os over the common window (the first start to the last target's end), its percentiles from the targets' latency histograms merged; a row of reads and writes together has no one latency (-), the rows under it give each direction's own";

/// Each repetition's throughput as a stack of the targets' shares: a target's bytes over
/// the repetition's common window, so each bar's height is the aggregate MB/s.
pub(crate) fn stacked_chart(run: &Run) -> Option<String> {
    if run.targets.is_empty() || run.repetitions.is_empty() {
        return None;
    }
    let share = |r: &Repetition, i: usize| {
        r.targets.get(i).map_or(0.0, |t| {
            (t.read.bytes + t.write.bytes + t.trim.bytes) as f64 / r.elapsed_s.max(1e-9) / 1e6
        })
    };
    Some(stacked_bars(&StackChart {
        title: "Throughput by target (stacked: the bar is the aggregate)".into(),
        y_label: "MB/s".into(),
        categories: (run.repetitions.iter())
            .map(|r| format!("repetition {}", r.index))
            .collect(),
        layers: (run.targets.iter().enumerate())
            .map(|(i, p)| {
                let v = run.repetitions.iter().map(|r| share(r, i)).collect();
                (p.target.path.clone(), v)
            })
            .collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::spec::Rw;
    use crate::results::ranks::{RankPart, aggregate};
    use crate::results::schema::DirStats;

    /// Rank `rank` on `host`, having written `ios` 4 KiB blocks in `elapsed_s`.
    fn part(rank: u32, host: &str, ios: u64, elapsed_s: f64) -> RankPart {
        let mut rep =
            crate::results::testdoc::run(Rw::Write, 1, &[1.0], None).repetitions[0].clone();
        rep.elapsed_s = elapsed_s;
        rep.write = DirStats {
            ios,
            bytes: ios * 4096,
            iops: ios as f64 / elapsed_s,
            bw_bytes: (ios * 4096) as f64 / elapsed_s,
            lat_ns: Default::default(),
        };
        RankPart {
            rank,
            host: host.into(),
            path: format!("/d/t{rank}"),
            rep,
            read_hist: Vec::new(),
            write_hist: Vec::new(),
            first_done: false,
        }
    }

    fn texts(t: &Table) -> Vec<Vec<String>> {
        (t.rows.iter())
            .map(|r| r.iter().map(|c| c.text.clone()).collect())
            .collect()
    }

    #[test]
    fn the_rank_table_gives_each_ranks_share_of_the_window_and_names_the_extremes() {
        // Rank 1 did its 1000 I/Os in half the window (the fastest), rank 2 half as many
        // in all of it (the slowest).
        let parts = [
            part(0, "a", 1000, 1.0),
            part(1, "a", 1000, 0.5),
            part(2, "b", 500, 1.0),
        ];
        let mut run = crate::results::testdoc::run(Rw::Write, 1, &[1.0], None);
        run.repetitions = vec![aggregate(&parts, true)];
        let ranks = texts(&run_ranks(&run).unwrap());
        let col = |i: usize| ranks.iter().map(|r| r[i].as_str()).collect::<Vec<_>>();
        assert_eq!(col(0), ["0", "1", "2"]);
        assert_eq!(col(1), ["a", "a", "b"]);
        assert_eq!(col(6), ["100%", "50%", "100%"], "the share of the window");
        assert_eq!(col(7), ["1000", "1000", "500"]);
        assert_eq!(col(9), ["", "fastest", "slowest"]);
        // Per host: the ranks together, over the common window, adding up.
        let hosts = texts(&run_hosts(&run).unwrap());
        assert_eq!(hosts.len(), 2);
        assert_eq!(hosts[0][..2], ["a", "0,1"]);
        assert_eq!(hosts[0][5], "2000");
        assert_eq!(hosts[1][..2], ["b", "2"]);
        assert_eq!(hosts[1][5], "500");
        // On one host the hosts are the aggregate: no table; one rank names no extremes.
        run.repetitions = vec![aggregate(&parts[..1], true)];
        assert!(run_hosts(&run).is_none());
        assert_eq!(texts(&run_ranks(&run).unwrap())[0][9], "");
    }
}

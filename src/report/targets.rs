//! A run on several targets in the reports: the per-target table (each target's mean
//! IOPS, MB/s and latency across its repetitions, the I/Os iomark counted and the I/Os
//! its device's kernel counters moved, then the aggregate) and the stacked chart of each
//! target's share of the aggregate throughput. Reads results only.

use crate::report::chart::stack::{StackChart, stacked_bars};
use crate::report::fmt::{NONE, fmt_count, fmt_mbps};
use crate::report::table::Table;
use crate::results::env::DeviceDelta;
use crate::results::schema::{DirStats, Repetition, Run, Status, Summary};
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

/// One row: a name, its device, its summary, and the I/Os of the counted repetitions as
/// iomark and as the kernel counted them.
fn row(
    name: &str,
    device: &str,
    s: &Summary,
    dirs: &[(DirStats, DirStats)],
    devs: &[Option<&DeviceDelta>],
) -> Vec<String> {
    let main = s.main();
    let ios: u64 = dirs.iter().map(|(r, w)| r.ios + w.ios).sum();
    let kernel: Option<u64> = devs
        .iter()
        .map(|d| d.map(|d| d.read_ios + d.write_ios))
        .sum();
    vec![
        name.to_string(),
        device.to_string(),
        fmt_count(s.total(|d| &d.iops).mean),
        fmt_mbps(s.total(|d| &d.bw_bytes).mean),
        fmt_ns(main.lat_p50_ns.mean),
        fmt_ns(main.lat_p99_ns.mean),
        ios.to_string(),
        kernel.map_or(NONE.into(), |k| k.to_string()),
    ]
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
    for (i, part) in run.targets.iter().enumerate() {
        let per: Vec<_> = reps.iter().filter_map(|r| r.targets.get(i)).collect();
        let dirs: Vec<_> = per.iter().map(|p| (p.read, p.write)).collect();
        let devs: Vec<_> = per.iter().map(|p| p.device.as_ref()).collect();
        let dev = part
            .target
            .device
            .as_ref()
            .map_or(NONE, |d| d.name.as_str());
        t.push(row(&part.target.path, dev, &part.summary, &dirs, &devs));
    }
    let dirs: Vec<_> = reps.iter().map(|r| (r.read, r.write)).collect();
    let devs: Vec<_> = reps.iter().map(|r| r.device.as_ref()).collect();
    let name = format!("all {} (aggregate)", run.targets.len());
    t.push(row(&name, "", &run.summary, &dirs, &devs));
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
    let dirs: Vec<_> = reps.iter().map(|r| (r.read, r.write)).collect();
    let devs: Vec<_> = reps.iter().map(|r| r.device.as_ref()).collect();
    let dev = run.target.device.as_ref().map_or(NONE, |d| d.name.as_str());
    t.push(row(&run.name, dev, &run.summary, &dirs, &devs));
    let complete: Vec<_> = (g.repetitions.iter())
        .filter(|r| r.status == Status::Complete)
        .collect();
    let greps = if complete.is_empty() {
        g.repetitions.iter().collect()
    } else {
        complete
    };
    let dirs: Vec<_> = greps.iter().map(|r| (r.read, r.write)).collect();
    let devs: Vec<_> = greps.iter().map(|r| r.device.as_ref()).collect();
    let name = format!("group: {} (sum)", g.runs.join(" + "));
    t.push(row(&name, "", &g.summary, &dirs, &devs));
    Some(t)
}

/// The note under a group's table.
pub(crate) const GROUP_NOTE: &str = "measured together behind one start gate: each run's IOPS and MB/s are over its own window; the group's are every run's I/Os over the common window (the start to the last run's end), its percentiles from the runs' latency histograms merged";

/// The per-rank table of a run scaled out over MPI, from each repetition's `ranks`
/// (means over the counted repetitions); `None` for a run in one process.
pub(crate) fn run_ranks(run: &Run) -> Option<Table> {
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
        "s",
        "I/Os",
        "kernel I/Os",
    ]);
    for i in 0..n {
        let per: Vec<_> = reps.iter().filter_map(|r| r.ranks.get(i)).collect();
        let Some(first) = per.first() else { continue };
        let k = per.len().max(1) as f64;
        let mean = |f: &dyn Fn(&crate::results::schema::TargetRep) -> f64| {
            per.iter().map(|p| f(p)).sum::<f64>() / k
        };
        let main = |p: &crate::results::schema::TargetRep| {
            if p.read.ios >= p.write.ios {
                p.read
            } else {
                p.write
            }
        };
        let kernel: Option<u64> = per
            .iter()
            .map(|p| p.device.as_ref().map(|d| d.read_ios + d.write_ios))
            .sum();
        t.push([
            first.rank.map_or(NONE.into(), |r| r.to_string()),
            first.host.clone().unwrap_or_else(|| NONE.into()),
            first.path.clone(),
            fmt_count(mean(&|p| p.read.iops + p.write.iops)),
            fmt_mbps(mean(&|p| p.read.bw_bytes + p.write.bw_bytes)),
            fmt_ns(mean(&|p| main(p).lat_ns.p99 as f64)),
            format!("{:.2}", mean(&|p| p.elapsed_s)),
            per.iter()
                .map(|p| p.read.ios + p.write.ios)
                .sum::<u64>()
                .to_string(),
            kernel.map_or(NONE.into(), |k| k.to_string()),
        ]);
    }
    Some(t)
}

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
            (t.read.bytes + t.write.bytes) as f64 / r.elapsed_s.max(1e-9) / 1e6
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
pub(crate) const RANKS_NOTE: &str = "each rank's IOPS and MB/s are over its own window, averaged over the repetitions; the aggregate (the run's figures) is every rank's I/Os over the common window, its percentiles from the ranks' histograms merged";

/// The note under the per-target table: what the aggregate is.
pub(crate) const AGGREGATE_NOTE: &str = "each target's IOPS and MB/s are over its own window; the aggregate's are all targets' I/Os over the common window (the first start to the last target's end), its percentiles from the targets' latency histograms merged";

/// Each repetition's throughput as a stack of the targets' shares: a target's bytes over
/// the repetition's common window, so each bar's height is the aggregate MB/s.
pub(crate) fn stacked_chart(run: &Run) -> Option<String> {
    if run.targets.is_empty() || run.repetitions.is_empty() {
        return None;
    }
    let share = |r: &Repetition, i: usize| {
        r.targets.get(i).map_or(0.0, |t| {
            (t.read.bytes + t.write.bytes) as f64 / r.elapsed_s.max(1e-9) / 1e6
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

//! Warnings a run earns from its own figures: IOPS drifting within a repetition,
//! repetitions that disagree, a buffered run over a span the page cache can hold, buffered
//! writes the page cache took instead of the device, reads of a file's holes, direct
//! reads the device did not serve. Each is one sentence that says what was seen and what
//! to do.

use std::path::Path;

use crate::results::schema::{Moved, Repetition, Run};
use crate::units::{fmt_pct, fmt_size, fmt_size_short};

/// A stop that waited on I/O in flight: iomark cannot end before the kernel returns it.
pub(crate) fn slow_stop(rep: u32, waited_s: f64) -> String {
    format!(
        "stopping repetition {rep} waited {waited_s:.1} s for I/O in flight (a stalled or very slow device or file system; I/O completing after the measured window is not counted); iomark cannot end before the kernel returns it"
    )
}

/// A repetition whose measured window saw no I/O complete (a think time longer than the
/// window, a device that answered nothing in it): its latencies are absent, not 0 ns.
pub(crate) fn empty_window(rep: &Repetition) -> String {
    format!(
        "repetition {}: no I/O completed in its measured window ({:.2} s): it has no latencies (its 0 ns are no measurement), and 0 IOPS",
        rep.index, rep.elapsed_s
    )
}

/// When IOPS of the last third of a repetition's series differ from the first third's by
/// more than 10% (a cache filling, a device getting dirty, throttling).
pub(crate) fn drift(rep: &Repetition) -> Option<String> {
    let iops: Vec<f64> = rep
        .series
        .iter()
        .map(|p| p.read_iops + p.write_iops)
        .collect();
    if iops.len() < 6 {
        return None;
    }
    let third = iops.len() / 3;
    let first: f64 = iops[..third].iter().sum::<f64>() / third as f64;
    let last: f64 = iops[iops.len() - third..].iter().sum::<f64>() / third as f64;
    if first <= 0.0 {
        return None;
    }
    let change = 100.0 * (last - first) / first;
    (change.abs() > 10.0).then(|| {
        format!(
            "IOPS drifted by {change:+.0}% from the first to the last third of repetition {} (a cache filling, a device getting dirty, throttling?); consider a longer --ramp",
            rep.index
        )
    })
}

/// When the repetitions' IOPS vary by more than 10% (coefficient of variation), per
/// direction the workload uses.
pub(crate) fn variation(run: &Run) -> Vec<String> {
    let spec = &run.spec;
    [
        ("read", &run.summary.read, spec.reads()),
        ("write", &run.summary.write, spec.writes()),
    ]
    .into_iter()
    .filter(|(_, _, used)| *used)
    .filter_map(|(dir, d, _)| {
        let cv = d.iops.cv_pct.filter(|&cv| cv > 10.0)?;
        Some(format!(
            "{dir} IOPS varied by {cv:.1}% (coefficient of variation) across {} repetitions; run more repetitions or a longer --runtime before comparing",
            d.iops.n
        ))
    })
    .collect()
}

/// The repetitions during which other processes kept the CPUs busy, or a hypervisor
/// held them back (`cpu.machine`, from `/proc/stat`): their figures include that
/// competition. (`--sched-policy batch` beside two busy loops read 2.3 thousand zram
/// reads a second where the device gave 988 thousand, and said nothing of it.)
pub(crate) fn busy_machine(run: &Run) -> Vec<String> {
    type Machine = crate::results::schema::MachineCpu;
    let which = |f: fn(&Machine) -> f64, named: fn(&Machine) -> bool| {
        let reps = crate::results::cpu::named_reps(&run.repetitions, named, f);
        let most = reps.iter().map(|r| r.1).fold(0.0, f64::max);
        let cpus = reps.first().map_or(0, |r| r.2);
        let list: Vec<String> = reps.iter().map(|r| r.0.to_string()).collect();
        let when = match (list.len(), run.repetitions.len()) {
            (0, _) => return None,
            (1, 1) => "while the run measured".to_string(),
            (1, _) => format!("while repetition {} measured", list[0]),
            (_, n) => format!("while repetitions {} (of {n}) measured", list.join(", ")),
        };
        let up_to = if list.len() > 1 { "up to " } else { "" };
        Some((when, format!("{up_to}{most:.2}"), cpus))
    };
    let mut out = Vec::new();
    if let Some((when, most, cpus)) = which(|m| m.others_cpus(), |m| m.others_busy()) {
        out.push(format!(
            "{when}, other processes kept {most} of the {cpus} CPUs busy on average (their user time, /proc/stat): the job threads competed with them, so the figures may be below what the target gives on an idle machine; stop them, or measure elsewhere"
        ));
    }
    if let Some((when, most, cpus)) = which(|m| m.steal_cpus(), |m| m.steal_high()) {
        out.push(format!(
            "{when}, the hypervisor held back {most} of the {cpus} CPUs on average (steal time, /proc/stat): the virtual machine's CPUs ran something else, and the figures include those waits"
        ));
    }
    out
}

/// A data pool smaller than a job's writes in flight (`--data-pool` below `--qd` ×
/// the largest write): a write whose units are still lent to a write in flight is
/// copied out of the pool into its buffer rather than sent from it, at a cost in CPU
/// per write (a null 128 KiB write at QD 16 with a 1 MiB pool: 3.1 µs, 0.6 µs with the
/// default pool). A pool of exactly qd × bs lends every write (the write is not
/// prepared ahead then).
pub(crate) fn small_pool(spec: &crate::plan::spec::Spec) -> Option<String> {
    let d = &spec.data;
    let pooled = spec.writes() && d.pooled() && !spec.verify;
    let in_flight = u64::from(spec.qd) * spec.buf_bs();
    let pool = d.pool_bytes() as u64;
    (pooled && pool < in_flight).then(|| {
        format!(
            "--data-pool {} is smaller than the writes a job may have in flight (--qd {} x {} = {}): a write whose pool units are still in flight is copied out of the pool instead of sent from it, which costs CPU per write; give --data-pool {} or more, or a lower --qd",
            fmt_size(pool),
            spec.qd,
            fmt_size(spec.buf_bs()),
            fmt_size(in_flight),
            fmt_size_short(in_flight)
        )
    })
}

/// An SQPOLL thread pinned to a CPU a job is pinned to (`--sqpoll-cpu` among the CPUs
/// `--cpus` gives the jobs): the thread polls the ring without sleeping while there is
/// work, and it and the job take turns on one CPU (tmpfs, 4 KiB reads at QD 8, job on
/// CPU 0: 46k IOPS with the thread on CPU 0, 277k on CPU 1). Said, as fio does not.
/// `workers`: the run's jobs, every target's (`--cpus` is split over all of them), counted
/// after a fio file's earlier jobs (`cpus_after`).
///
/// Without `--sqpoll-cpu` the polling thread, made by the job thread after it was pinned,
/// inherits the job's CPUs: the same contention, which was not said (a helper read
/// `Cpus_allowed_list` 1 for both `iomark-job0` and `iou-sqp` with `--cpus 1`).
pub(crate) fn sqpoll_beside_a_job(spec: &crate::plan::spec::Spec, workers: u32) -> Option<String> {
    let o = &spec.engine_opts;
    if o.sqpoll && o.sqpoll_cpu.is_none() && !o.cpus.is_empty() {
        return Some(format!(
            "--sqpoll without --sqpoll-cpu: each job's polling thread inherits the job's CPUs (--cpus {}) and spins there, taking turns with the job, which measures their contention (tmpfs 4 KiB reads at QD 8: 46k IOPS against 277k with the thread on another CPU); give --sqpoll-cpu a CPU outside --cpus",
            crate::plan::engine::fmt_cpus(&o.cpus)
        ));
    }
    let cpu = o.sqpoll_cpu.filter(|_| o.sqpoll)?;
    (o.cpus_after..o.cpus_after + workers)
        .any(|j| o.job_cpus(j).contains(&cpu))
        .then_some(())?;
    Some(format!(
        "--sqpoll-cpu {cpu} is also a CPU the jobs run on (--cpus {}): the polling thread spins there and takes turns with a job, which measures their contention (tmpfs 4 KiB reads at QD 8: 46k IOPS against 277k with the thread on another CPU); give --sqpoll-cpu a CPU outside --cpus",
        crate::plan::engine::fmt_cpus(&o.cpus)
    ))
}

/// A data pool smaller than a compressor's window below 32 MiB (`DataSpec::pool_window_note`:
/// devices', file systems' and the usual levels', not archivers'), for writes of pooled
/// data.
pub(crate) fn pool_window(spec: &crate::plan::spec::Spec) -> Option<String> {
    (spec.writes() && !spec.verify).then_some(())?;
    spec.data.pool_window_note(false)
}

/// `--verify` with `--dedup` where a block holds several dedup units: the verify header
/// makes the block's first unit unique, so fewer units repeat than `--dedup` asks (50%
/// with 1 KiB units in 4 KiB blocks measured 32.2%), which was not said. (Blocks of one
/// unit are refused: `Spec::validate_verify`.)
pub(crate) fn verify_dedup(spec: &crate::plan::spec::Spec) -> Option<String> {
    let d = &spec.data;
    (spec.verify && d.dedup > 0.0 && spec.writes()).then_some(())?;
    let units = spec.buf_bs() / d.dedup_unit.max(1);
    (units > 1).then(|| {
        format!(
            "--verify stamps its header into the first --dedup-unit ({}) of every block, which then repeats nothing: at most {} of a block's {units} units can repeat, so fewer than the --dedup {}% asked do (the measured dedup says how many)",
            fmt_size(d.dedup_unit),
            units - 1,
            d.dedup
        )
    })
}

/// `--keep` on a target iomark did not make (an existing file, a device): it changes
/// nothing, which was not said (a user may read it as "leave my data alone").
pub(crate) fn keep_changes_nothing(path: &Path) -> String {
    format!(
        "--keep changes nothing for {}: it existed before the run, and iomark removes only a file it makes (what the run wrote there stays either way)",
        path.display()
    )
}

/// When a rate cap (`--rate`, `--rate-iops`) was set and the run stayed clearly below
/// it (under 90% of what its jobs together were allowed): the target set the pace, and
/// the run's name ("rate 20g/s") names a cap that was never the limit.
pub(crate) fn rate_unreached(run: &Run) -> Option<String> {
    let s = &run.spec;
    if run.repetitions.is_empty() || s.io_share > 1 || s.rw.trims() {
        return None;
    }
    // Each job is capped: every target's jobs, or the jobs serving all the files.
    let lanes = match s.serves_files() {
        true => 1,
        false => run.targets.len().max(1) as u64,
    };
    let workers = s.jobs as u64 * lanes;
    let sum = &run.summary;
    let (flag, cap, got, unit) = match (s.rate_iops, s.rate_bps) {
        (Some(cap), _) => (
            "--rate-iops",
            cap as f64,
            sum.read.iops.mean + sum.write.iops.mean,
            "IOPS",
        ),
        (None, Some(cap)) => (
            "--rate",
            cap as f64 / 1e6,
            (sum.read.bw_bytes.mean + sum.write.bw_bytes.mean) / 1e6,
            "MB/s",
        ),
        (None, None) => return None,
    };
    let allowed = cap * workers as f64;
    let digits = usize::from(unit == "MB/s");
    let each = match workers {
        1 => String::new(),
        n => format!(" ({n} jobs at {cap:.digits$} {unit} each)"),
    };
    (got < 0.9 * allowed).then(|| {
        format!(
            "the run stayed below its {flag} cap: {got:.digits$} {unit} where {allowed:.digits$} {unit} were allowed{each}; the target set the pace, not the cap"
        )
    })
}

/// Advice before a buffered run over a span that fits in available memory: the page
/// cache may serve its reads. Twice the machine's memory is what it takes to defeat it.
/// (Whether it did is measured: [`page_cache`], unless `measured` is false: a
/// compressing file system, [`compressed_cache`].)
pub(crate) fn cache_may_serve(
    span: u64,
    avail: u64,
    total_memory: u64,
    grows: bool,
    measured: bool,
    engine_direct: bool,
) -> String {
    // Only a file iomark makes can be made larger than memory; mmap cannot bypass the
    // cache, so direct I/O takes another engine.
    let direct = match engine_direct {
        true => "--direct",
        false => "another engine with --direct (e.g. --engine io_uring --direct)",
    };
    let fix = match grows {
        true => format!(
            "--size {} (2x memory) or more, or {direct}",
            fmt_size_short((2 * total_memory).div_ceil(1 << 30) << 30)
        ),
        false => direct.to_string(),
    };
    format!(
        "buffered over a {} span that fits in the {} of available memory: the page cache may serve reads instead of the device{}; to measure the device use {fix}",
        fmt_size(span),
        fmt_size(avail),
        if measured {
            " (the share it served is measured per repetition)"
        } else {
            ""
        },
    )
}

/// Advice before a run whose buffered writes nothing flushes: the page cache takes them at
/// memory speed until `limit` (the kernel's dirty limit, `setting` its words) is dirty.
/// (What the device wrote meanwhile is measured: [`write_cache`].)
pub(crate) fn cache_takes_writes(limit: Option<(u64, String)>) -> String {
    let limit = match limit {
        Some((bytes, setting)) => format!("about {} ({setting})", fmt_size(bytes)),
        None => "the kernel's dirty limit".into(),
    };
    format!(
        "buffered writes go to the page cache at memory speed and reach the device later; writers are held to the device's pace only as dirty pages approach {limit}: the write rate may be the cache's (what the device wrote is measured per repetition); to time the device use --direct (--end-fsync counts the last flush in the window, but rewrites of blocks the cache holds still merge there)"
    )
}

/// Whether the device moved clearly less than iomark: under 90% of its bytes.
fn clearly_less(own: u64, dev: u64) -> bool {
    own > 0 && dev < own / 10 * 9
}

/// Advice before a run on a file in a filesystem kept in memory (tmpfs, ramfs): no
/// storage device is measured. `None` for other filesystems.
pub(crate) fn memory_fs(path: &Path, fstype: &str) -> Option<String> {
    matches!(fstype, "tmpfs" | "ramfs").then(|| {
        format!(
            "{} is on {fstype}, which keeps files in memory: this measures memory and the kernel, not a storage device; to measure a device, name a file on its filesystem or the device itself",
            path.display()
        )
    })
}

/// An io_uring run whose kernel workers (io-wq) spent at least half the CPU time its job
/// threads did: the target could not take the requests without blocking, io_uring handed
/// each to a worker thread, and the figures are those workers' (tmpfs's reads: 12.6k per
/// second at QD 1 in one job, io-wq 0.67 s of CPU to the job thread's 0.77; a loop
/// device's direct reads, taken inline, leave io-wq idle). `None` for other engines and
/// below 10 ms of io-wq time.
pub(crate) fn io_wq_bound(run: &Run) -> Option<String> {
    if run.spec.engine != crate::plan::spec::EngineKind::IoUring {
        return None;
    }
    let (wq, jobs) = run.repetitions.iter().fold((0.0, 0.0), |(w, j), r| {
        let c = &r.cpu;
        (
            w + c.io_wq.user_s + c.io_wq.sys_s,
            j + c.workers.user_s + c.workers.sys_s,
        )
    });
    // Over every repetition, said so: three repetitions of 1 s said "io-wq used 2.75 s"
    // of a "1s" run, as if in one.
    let over = match run.repetitions.len() {
        1 => String::new(),
        n => format!(" over its {n} repetitions"),
    };
    (wq >= 0.01 && wq >= 0.5 * jobs).then(|| {
        format!(
            "io_uring handed its requests to its kernel worker threads (io-wq used {wq:.2} s of CPU, the job threads {jobs:.2} s{over}): the target could not take them without blocking (tmpfs, some file systems' buffered I/O, a device queue that is full), so worker threads did the I/O and the IOPS and latencies are theirs; --engine libaio or psync does it in the job's own thread"
        )
    })
}

/// Before a run on a file a killed iomark run left: it is used as it is and not removed
/// (whatever was put in it since cannot be told from iomark's own data).
pub(crate) fn left_by_killed(path: &Path, pid: u32) -> String {
    format!(
        "{} was left by an iomark run that was killed (process {pid}): used as it is and not removed; remove it yourself when it is no longer needed",
        path.display()
    )
}

/// Before a run that reads a zram device holding nothing: every read is zeros from
/// memory, with nothing to decompress.
pub(crate) fn zram_empty(path: &Path) -> String {
    format!(
        "{p} is a zram device that holds nothing yet: every read returns zeros without decompressing anything, at memory speed; write it first (iomark run --rw write --bs 1m --allow-write-device {p})",
        p = path.display()
    )
}

/// Advice before a run that reads a file with holes or unwritten extents in its span
/// (`hole` bytes of `span`; `complete`: all of the span was looked at).
pub(crate) fn holes_read(path: &Path, span: u64, hole: u64, complete: bool) -> String {
    let share = 100.0 * hole as f64 / span.max(1) as f64;
    format!(
        "{}{share:.0}% of the span of {path} ({} of {}) is holes or unwritten extents: the filesystem answers reads there with zeros, without the device; fill it first (iomark run --rw write --bs 1m --overwrite {path}), or name a new file for iomark to write",
        if complete { "" } else { "at least " },
        fmt_size(hole),
        fmt_size(span),
        path = path.display(),
    )
}

/// What the device measurably read of a direct run's reads: when its read counters moved
/// clearly less than iomark read, the rest came from elsewhere. (Buffered runs have the
/// page cache's share: [`page_cache`].)
pub(crate) fn direct_reads_elsewhere(run: &Run) -> Option<String> {
    if !run.spec.direct || !run.spec.reads() {
        return None;
    }
    let (own, dev) = run.moved_by_device(Moved::Read)?;
    let (read, rest) = match dev {
        0 => ("nothing".to_string(), "all of it"),
        d => (fmt_size(d), "the rest"),
    };
    clearly_less(own, dev).then(|| format!(
        "the device read {read} of the {} iomark read with direct I/O: {rest} came from elsewhere (holes or unwritten extents read as zeros, or data the filesystem keeps cached or compressed), so the read rate is not the device's",
        fmt_size(own)
    ))
}

/// What the device measurably discarded of a run's trims: when its discard counters moved
/// clearly less than iomark trimmed (a span trimmed again, whose holes are already
/// punched or blocks already discarded, or a filesystem that does not pass discards
/// down), the trim rate is not the device's. Over the complete repetitions.
pub(crate) fn trims_elsewhere(run: &Run) -> Option<String> {
    if !run.spec.rw.trims() {
        return None;
    }
    let (own, dev) = run.moved_by_device(Moved::Trim)?;
    clearly_less(own, dev).then(|| format!(
        "the device discarded {} of the {} iomark trimmed: the rest cost it nothing (blocks trimmed again, whose holes were punched or blocks discarded already, or discards the filesystem did not pass down), so the trim rate is not the device's",
        if dev == 0 { "nothing".to_string() } else { fmt_size(dev) },
        fmt_size(own)
    ))
}

/// A buffered run on a btrfs that compresses (`compression`: its mount option): the
/// device moves fewer bytes than the file system serves, so the page cache's share is
/// not measured.
pub(crate) fn compressed_cache(compression: &str) -> String {
    format!(
        "btrfs compresses what it stores here ({compression}): its device reads and writes fewer bytes than iomark moves, so the page cache's share of a buffered run is not measured (the device's counters are still reported)"
    )
}

/// What the page cache measurably held of a buffered run's writes when its windows
/// closed: the device's write counters against the bytes iomark wrote. `None` when the
/// device wrote 90% or more, or nothing was measured.
pub(crate) fn write_cache(run: &Run) -> Option<String> {
    if !crate::plan::cache::holds_writes(&run.spec) {
        return merged_writes(run);
    }
    let (own, dev) = run.moved_by_device(Moved::Write)?;
    if !clearly_less(own, dev) {
        return None;
    }
    let pct = 100.0 * dev as f64 / own as f64;
    // The counters are the whole device's: other writers only make the cache's share
    // look smaller.
    let (wrote, rest) = match dev {
        0 => ("nothing".to_string(), "all of it"),
        d => (format!("{} ({})", fmt_size(d), fmt_pct(pct)), "the rest"),
    };
    Some(format!(
        "the device wrote {wrote} of the {} iomark wrote within the measured window: the page cache took {rest} (kept for later writeback, or overwritten there first), so the write rate is more the cache's than the device's; to time the device use --direct",
        fmt_size(own)
    ))
}

/// Buffered writes that were flushed (`--end-fsync`, `--fsync`, `--sync-mode`) and still
/// reached the device clearly less than iomark wrote them: rewrites of the same blocks
/// merged in the page cache, and only the last of each was written.
fn merged_writes(run: &Run) -> Option<String> {
    let s = &run.spec;
    if s.direct || !s.writes() || !s.rw.writes_data() {
        return None;
    }
    let (own, dev) = run.moved_by_device(Moved::Write)?;
    clearly_less(own, dev).then(|| format!(
        "the device wrote {} of the {} iomark wrote, the flush included: rewrites of the same blocks merged in the page cache before reaching it, so the write rate (and a write amplification under 1) is more the cache's than the device's; to time the device use --direct",
        fmt_size(dev),
        fmt_size(own)
    ))
}

/// What the page cache measurably did for a buffered run's reads: the share of iomark's
/// read bytes the device never read, and whether the device's counters were moved by
/// more than iomark (a lower bound then). `None` when nothing was measured.
pub(crate) fn page_cache(run: &Run) -> Option<String> {
    let hit = run.page_cache_hit_pct()?;
    let others = run.repetitions.iter().any(|r| {
        r.device
            .as_ref()
            .is_some_and(|d| d.beyond(r.read.bytes, r.write.bytes).contains(&"reads"))
    });
    let mut s = match hit {
        100.0 => "all of the bytes read were served from memory (page cache): the device read none"
            .to_string(),
        h => format!(
            "{} of the bytes read were served from memory (page cache): the device read the rest",
            fmt_pct(h)
        ),
    };
    if run.cache_bound {
        s.push_str("; this measured the page cache more than the device");
    }
    if others {
        s.push_str(&format!(
            "; the device read clearly more than iomark did (other processes, readahead), so {hit:.0}% is a lower bound"
        ));
    }
    Some(s)
}

/// `--sched-policy batch` where the process runs under another policy than
/// `SCHED_OTHER` (started with `chrt`): the job threads keep it.
pub(crate) fn kept_policy(policy: &str) -> String {
    format!(
        "the job threads ran {policy}, as the process was started (chrt), not SCHED_BATCH: --sched-policy batch changes only SCHED_OTHER threads"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::schema::Point;

    fn rep_with(iops: &[f64]) -> Repetition {
        let run = crate::results::testdoc::run(crate::plan::spec::Rw::RandRead, 1, &[1.0], None);
        let mut r = run.repetitions[0].clone();
        r.series = iops
            .iter()
            .map(|&v| Point {
                t_s: 0.0,
                read_iops: v,
                write_iops: 0.0,
                read_bw_bytes: 0.0,
                write_bw_bytes: 0.0,
                trim_iops: 0.0,
                trim_bw_bytes: 0.0,
                lat_mean_ns: 0.0,
                lat_p99_ns: 0,
            })
            .collect();
        r
    }

    /// A complete run of `rw` whose repetitions moved `own` bytes each and the device
    /// `dev` bytes each, in both directions.
    fn moved(rw: crate::plan::spec::Rw, direct: bool, own: u64, dev: u64) -> Run {
        let mut run = crate::results::testdoc::run(rw, 1, &[own as f64 / 4096.0; 2], None);
        run.spec.direct = direct;
        for r in run.repetitions.iter_mut() {
            r.device = Some(crate::results::env::DeviceDelta {
                name: "vdx".into(),
                read_bytes: dev,
                write_bytes: dev,
                ..Default::default()
            });
        }
        run
    }

    /// Other processes' CPUs and the hypervisor's steal are named at their bars, with the
    /// repetitions they touched and the most of them; below the bars, or without the
    /// figure (older documents, MPI ranks), nothing.
    #[test]
    fn a_busy_machine_is_said_at_its_bars() {
        let with = |m: &[Option<(f64, f64)>]| {
            let mut run = crate::results::testdoc::run(
                crate::plan::spec::Rw::RandRead,
                1,
                &vec![1.0; m.len()],
                None,
            );
            for (r, m) in run.repetitions.iter_mut().zip(m) {
                r.cpu.machine = m.map(|(others, steal)| crate::results::schema::MachineCpu {
                    cpus: 4,
                    window_s: 2.0,
                    others_user_s: others * 2.0,
                    steal_s: steal * 2.0,
                });
            }
            busy_machine(&run)
        };
        assert!(with(&[None, None]).is_empty());
        assert!(with(&[Some((0.24, 0.04)), Some((0.0, 0.0))]).is_empty());
        let one = with(&[Some((0.1, 0.0)), Some((1.5, 0.0)), None]);
        assert_eq!(one.len(), 1, "{one:?}");
        assert!(
            one[0].starts_with(
                "while repetition 2 measured, other processes kept 1.50 of the 4 CPUs busy"
            ),
            "{one:?}"
        );
        let both = with(&[Some((0.25, 0.05)), Some((1.5, 0.3))]);
        assert_eq!(both.len(), 2, "{both:?}");
        assert!(
            both[0].starts_with(
                "while repetitions 1, 2 (of 2) measured, other processes kept up to 1.50 of the 4"
            ),
            "{both:?}"
        );
        assert!(
            both[1].contains("the hypervisor held back up to 0.30 of the 4 CPUs"),
            "{both:?}"
        );
        // A big machine's quarter CPU is not named, its 5% is; nor a short window's few
        // ticks (0.03 s in 0.1 s on 2 CPUs: under two ticks a CPU).
        let one_rep = |cpus: u32, window_s: f64, others_user_s: f64| {
            let mut run =
                crate::results::testdoc::run(crate::plan::spec::Rw::RandRead, 1, &[1.0], None);
            run.repetitions[0].cpu.machine = Some(crate::results::schema::MachineCpu {
                cpus,
                window_s,
                others_user_s,
                steal_s: 0.0,
            });
            busy_machine(&run)
        };
        assert!(one_rep(64, 1.0, 0.3).is_empty());
        assert_eq!(one_rep(64, 1.0, 3.3).len(), 1);
        assert!(one_rep(2, 0.1, 0.03).is_empty());
        assert_eq!(one_rep(2, 0.1, 0.05).len(), 1);
        let alone = with(&[Some((0.0, 0.5))]);
        assert!(
            alone[0].starts_with("while the run measured, the hypervisor held back 0.50"),
            "{alone:?}"
        );
    }

    #[test]
    fn an_sqpoll_thread_on_a_jobs_cpu_is_said() {
        let with = |cpus: &[u32], sq: Option<u32>, jobs: u32, shared: bool| {
            let mut s = crate::plan::spec::Spec::new("f");
            s.jobs = jobs;
            let o = &mut s.engine_opts;
            (o.sqpoll, o.sqpoll_cpu, o.cpus_shared) = (true, sq, shared);
            o.cpus = cpus.to_vec();
            sqpoll_beside_a_job(&s, jobs)
        };
        let said = with(&[0], Some(0), 1, false).expect("said");
        assert!(
            said.starts_with("--sqpoll-cpu 0 is also a CPU the jobs run on (--cpus 0)"),
            "{said}"
        );
        // Job 1 runs on CPU 1 (each job its CPU of the list, in turn).
        assert!(with(&[0, 1], Some(1), 2, false).is_some());
        // One job on CPU 0; CPU 1 of the list is not used.
        assert_eq!(with(&[0, 1], Some(1), 1, false), None);
        // Shared: every job may run on every CPU of the list.
        assert!(with(&[0, 1], Some(1), 1, true).is_some());
        assert_eq!(with(&[0], Some(1), 4, false), None);
        assert_eq!(with(&[], Some(0), 1, false), None);
        // No --sqpoll-cpu: the thread inherits the job's CPUs (it was not said).
        let said = with(&[0], None, 1, false).expect("said");
        assert!(
            said.starts_with("--sqpoll without --sqpoll-cpu: each job's polling thread inherits the job's CPUs (--cpus 0)"),
            "{said}"
        );
        assert_eq!(with(&[], None, 1, false), None);
        // Two targets of one job each: the second target's job on CPU 1.
        let mut s = crate::plan::spec::Spec::new("f");
        let o = &mut s.engine_opts;
        (o.sqpoll, o.sqpoll_cpu, o.cpus) = (true, Some(1), vec![0, 1]);
        assert!(sqpoll_beside_a_job(&s, 2).is_some());
    }

    #[test]
    fn io_uring_runs_done_by_its_workers_say_so() {
        use crate::plan::spec::{EngineKind, Rw};
        let with = |engine, wq: f64, jobs: f64| {
            let mut run = moved(Rw::RandRead, true, 1 << 20, 1 << 20);
            run.spec.engine = engine;
            for r in run.repetitions.iter_mut() {
                r.cpu.io_wq.sys_s = wq;
                r.cpu.workers.sys_s = jobs;
            }
            io_wq_bound(&run)
        };
        // tmpfs's buffered reads (session 22): io-wq about as busy as the job thread.
        let w = with(EngineKind::IoUring, 0.67, 0.77).expect("said");
        assert!(
            w.contains("io-wq used 1.34 s of CPU, the job threads 1.54 s over its 2 repetitions)"),
            "{w}"
        );
        assert!(w.contains("--engine libaio"), "{w}");
        // Reads taken inline leave io-wq nearly idle; other engines have none.
        assert_eq!(with(EngineKind::IoUring, 0.02, 1.5), None);
        assert_eq!(with(EngineKind::IoUring, 0.001, 0.001), None);
        assert_eq!(with(EngineKind::Libaio, 0.67, 0.77), None);
    }

    #[test]
    fn what_the_device_did_not_move_is_said_in_words_that_fit_the_share() {
        use crate::plan::spec::Rw;
        let mib = 1 << 20;
        // Buffered writes: nothing, a part, nearly all reached the device.
        let w = write_cache(&moved(Rw::RandWrite, false, 8 * mib, 0)).unwrap();
        assert!(
            w.contains("wrote nothing of the 16 MiB") && w.contains("took all of it"),
            "{w}"
        );
        let w = write_cache(&moved(Rw::RandWrite, false, 8 * mib, 2 * mib)).unwrap();
        assert!(
            w.contains("wrote 4 MiB (25%) of the 16 MiB") && w.contains("took the rest"),
            "{w}"
        );
        let w = write_cache(&moved(Rw::RandWrite, false, 1000 * mib, mib)).unwrap();
        assert!(w.contains("wrote 2 MiB (0.1%) of the 2.0 GiB"), "{w}");
        assert!(write_cache(&moved(Rw::RandWrite, false, 8 * mib, 8 * mib)).is_none());
        // Flushed at the end: rewrites merged in the cache when the device wrote clearly
        // less, else nothing; direct: nothing.
        let mut flushed = moved(Rw::RandWrite, false, 8 * mib, 2 * mib);
        flushed.spec.end_fsync = true;
        let w = write_cache(&flushed).unwrap();
        assert!(
            w.contains("wrote 4 MiB of the 16 MiB iomark wrote, the flush included"),
            "{w}"
        );
        let mut all = moved(Rw::RandWrite, false, 8 * mib, 8 * mib);
        all.spec.end_fsync = true;
        assert!(write_cache(&all).is_none());
        assert!(write_cache(&moved(Rw::RandWrite, true, 8 * mib, 0)).is_none());
        // Direct reads the device did not serve; buffered ones have the cache's figure.
        let r = direct_reads_elsewhere(&moved(Rw::RandRead, true, 8 * mib, 0)).unwrap();
        assert!(
            r.contains("read nothing of the 16 MiB") && r.contains("all of it came"),
            "{r}"
        );
        let r = direct_reads_elsewhere(&moved(Rw::RandRead, true, 8 * mib, 4 * mib)).unwrap();
        assert!(
            r.contains("read 8 MiB of the 16 MiB") && r.contains("the rest came"),
            "{r}"
        );
        assert!(direct_reads_elsewhere(&moved(Rw::RandRead, true, 8 * mib, 8 * mib)).is_none());
        assert!(direct_reads_elsewhere(&moved(Rw::RandRead, false, 8 * mib, 0)).is_none());
        // The page cache's share of reads near and at 100%.
        let mut all = moved(Rw::RandRead, false, 8 * mib, 0);
        for r in all.repetitions.iter_mut() {
            r.page_cache_hit_pct = Some(100.0);
        }
        let p = page_cache(&all).unwrap();
        assert!(
            p.starts_with("all of the bytes read") && p.contains("read none"),
            "{p}"
        );
        for r in all.repetitions.iter_mut() {
            r.page_cache_hit_pct = Some(99.7);
        }
        assert!(
            page_cache(&all)
                .unwrap()
                .starts_with("99.7% of the bytes read")
        );
    }

    #[test]
    fn drift_needs_six_points_and_more_than_ten_percent() {
        assert!(drift(&rep_with(&[100.0; 5])).is_none());
        assert!(drift(&rep_with(&[100.0, 100.0, 100.0, 105.0, 108.0, 109.0])).is_none());
        let w = drift(&rep_with(&[100.0, 100.0, 90.0, 80.0, 70.0, 70.0])).unwrap();
        assert!(w.contains("-30%"), "{w}");
    }
}

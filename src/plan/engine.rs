//! Engines as the plan sees them: the closed set of [`EngineKind`]s with what each can do
//! ([`Caps`]), and the engine options of a run ([`EngineOpts`]: O_SYNC/O_DSYNC, submission
//! and completion batching, io_uring's SQPOLL and polled completions, CPU pinning), parsed
//! from the run options and checked against the engine. Nothing here touches the system:
//! whether a device has poll queues or a CPU exists is checked when the run starts.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::options::RunOptions;
use crate::plan::resolve::count_opt;
pub(crate) use crate::plan::spin::{SPIN_WAIT_NS, fmt_spin, local_ranks, parse_spin};

/// What an engine can do, so callers ask instead of comparing engine names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// It needs an open file descriptor (every engine that does real I/O).
    pub needs_fd: bool,
    /// It reaches the kernel at all (`null` does not).
    pub does_io: bool,
    /// The deepest queue one instance keeps in flight (psync: 1).
    pub max_qd: u32,
    /// It can bypass the page cache with O_DIRECT (mmap cannot).
    pub direct: bool,
    /// Requests are in flight while the thread goes on (batching options apply).
    pub asynchronous: bool,
}

/// The I/O engine, modelled on fio's ioengines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// `pread`/`pwrite`, one I/O at a time per job.
    Psync,
    /// Linux io_uring with registered buffers and files.
    IoUring,
    /// Linux native AIO (`io_submit`/`io_getevents`), as fio's libaio engine.
    Libaio,
    /// The span mapped into memory; reads and writes are copies (`msync` to flush).
    Mmap,
    /// No I/O at all: measures iomark's own cost per operation.
    Null,
}

impl EngineKind {
    /// Whether its job threads wait for completions of requests in flight (io_uring,
    /// libaio): the waits `--spin-wait` and the default `--sched-policy` are about.
    pub(crate) fn waits(self) -> bool {
        self.caps().asynchronous && self.caps().does_io
    }

    /// Every engine, in the order the help names them.
    pub const ALL: [EngineKind; 5] = [
        EngineKind::IoUring,
        EngineKind::Libaio,
        EngineKind::Psync,
        EngineKind::Mmap,
        EngineKind::Null,
    ];

    /// What the engine can do.
    pub fn caps(self) -> Caps {
        let (needs_fd, max_qd, direct, asynchronous) = match self {
            EngineKind::Null => (false, 4096, true, false),
            EngineKind::Psync => (true, 1, true, false),
            EngineKind::IoUring | EngineKind::Libaio => (true, 4096, true, true),
            EngineKind::Mmap => (true, 1, false, false),
        };
        Caps {
            needs_fd,
            does_io: needs_fd,
            max_qd,
            direct,
            asynchronous,
        }
    }

    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Psync => "psync",
            EngineKind::IoUring => "io_uring",
            EngineKind::Libaio => "libaio",
            EngineKind::Mmap => "mmap",
            EngineKind::Null => "null",
        }
    }

    /// Parses a command-line name.
    pub(crate) fn parse(s: &str) -> Option<EngineKind> {
        match s {
            "io-uring" | "uring" => Some(EngineKind::IoUring),
            _ => EngineKind::ALL.into_iter().find(|e| e.name() == s),
        }
    }
}

/// How writes reach stable storage: the target is opened with this flag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    /// Neither flag: writes may sit in caches until a flush.
    #[default]
    None,
    /// `O_SYNC`: each write returns once data and metadata are stable (IOzone's `-o`,
    /// fio's `sync=1`).
    Sync,
    /// `O_DSYNC`: each write returns once its data (and the metadata needed to read it)
    /// are stable (fio's `sync=dsync`).
    Dsync,
}

impl SyncMode {
    pub(crate) fn is_none(&self) -> bool {
        *self == SyncMode::None
    }
}

/// The scheduling policy of a run's job threads (`--sched-policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedPolicy {
    /// `SCHED_BATCH` (`--sched-policy batch`; not the default): a job thread woken by its
    /// completion does not preempt the thread running on its CPU, which is most often the
    /// kernel thread completing its other requests (io_uring's io-wq worker, the loop
    /// device's worker), so that thread finishes its batch and the job reaps several at
    /// once, in place of a switch each way per I/O. Scheduled as `SCHED_OTHER` otherwise
    /// (the same share of the CPU, the same nice value). A job thread that starts under
    /// another policy (a process started with `chrt`) keeps it, and the run says so.
    /// Not the default for any engine: on a machine where other threads keep the CPUs
    /// busy, a woken job thread waits for their slice to end on every completion (zram
    /// 4 KiB reads at QD 16 beside two busy loops: 2.3 thousand reads a second against
    /// 390 thousand as started; docs/PERFORMANCE.md, session 34).
    Batch,
    /// The policy the process started with, `SCHED_OTHER` unless `chrt` said otherwise
    /// (fio's: it sets none). The default for every engine.
    #[default]
    Normal,
}

impl SchedPolicy {
    pub(crate) fn is_normal(&self) -> bool {
        *self == SchedPolicy::Normal
    }

    pub fn name(self) -> &'static str {
        match self {
            SchedPolicy::Batch => "batch",
            SchedPolicy::Normal => "normal",
        }
    }
}

/// The engine options of a run. Field names are the results schema's `engine_opts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineOpts {
    /// The target is opened with `O_SYNC` or `O_DSYNC` (`--sync-mode`).
    #[serde(default, skip_serializing_if = "SyncMode::is_none")]
    pub sync_mode: SyncMode,
    /// Requests handed to the kernel in one call (`--batch-submit`; 1: each at once).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub batch_submit: u32,
    /// Completions waited for in one call, when that many are in flight
    /// (`--batch-complete`; 1: return at the first).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub batch_complete: u32,
    /// io_uring: a kernel thread polls the submission ring (`--sqpoll`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub sqpoll: bool,
    /// io_uring: the CPU the SQPOLL thread is pinned to (`--sqpoll-cpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqpoll_cpu: Option<u32>,
    /// io_uring: completions are polled from the device (IOPOLL, `--hipri`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub hipri: bool,
    /// io_uring, libaio: a wait for one completion first watches the ring for up to this
    /// many nanoseconds, while such spins find one (`--spin-wait`; 0: sleep at once, as
    /// fio does). `None`: [`SPIN_WAIT_NS`] where the jobs leave a CPU free, else none
    /// ([`EngineOpts::spin_ns`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin_wait_ns: Option<u32>,
    /// The job threads' scheduling policy (`--sched-policy`). Absent from a document:
    /// `normal` (the policy the process started with; every run before 2026-11-30).
    #[serde(default, skip_serializing_if = "SchedPolicy::is_normal")]
    pub sched_policy: SchedPolicy,
    /// Job `j` runs pinned to CPU `cpus[j % cpus.len()]` (`--cpus`); empty: anywhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<u32>,
    /// Every job may run on any CPU of `cpus` (`--cpus-policy shared`, fio's
    /// `cpus_allowed_policy=shared`) instead of its own one.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cpus_shared: bool,
    /// The jobs of a fio job file before this run's: fio's split counts every job of the
    /// file (`thread_number`), so the run's first job takes the CPU of `cpus` after that
    /// many (a second section's one job runs on CPU 1 of `cpus_allowed=0-1`). 0 outside
    /// fio files: each of iomark's runs starts its jobs at the first CPU.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cpus_after: u32,
}

fn one() -> u32 {
    1
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl EngineOpts {
    /// The CPUs job `job` is pinned to (`--cpus`, `--cpus-policy`): its CPU of the list
    /// in turn, or the whole list when shared; none without `--cpus`. `job` counts from
    /// `cpus_after` (the worker's slot).
    pub(crate) fn job_cpus(&self, job: u32) -> &[u32] {
        let n = self.cpus.len();
        match (n, self.cpus_shared) {
            (0, _) => &[],
            (_, true) => &self.cpus,
            (_, false) => std::slice::from_ref(&self.cpus[job as usize % n]),
        }
    }
}

impl Default for EngineOpts {
    fn default() -> Self {
        EngineOpts {
            sync_mode: SyncMode::None,
            batch_submit: 1,
            batch_complete: 1,
            sqpoll: false,
            sqpoll_cpu: None,
            hipri: false,
            spin_wait_ns: None,
            sched_policy: SchedPolicy::Normal,
            cpus: Vec::new(),
            cpus_shared: false,
            cpus_after: 0,
        }
    }
}

/// The largest CPU number `--cpus` and `--sqpoll-cpu` accept (the kernel's default
/// `CPU_SETSIZE` is 1024).
pub(crate) const MAX_CPU: u32 = 1023;

/// Parses a CPU list: `0,2`, `0-3`, `0-1,6`.
pub(crate) fn parse_cpus(text: &str) -> Result<Vec<u32>> {
    let bad = || {
        Error::usage(format!(
            "--cpus '{text}' is not a CPU list; use numbers and ranges such as 0,1 or 0-3 (at most {MAX_CPU})"
        ))
    };
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let lo: u32 = lo.trim().parse().map_err(|_| bad())?;
        let hi: u32 = hi.trim().parse().map_err(|_| bad())?;
        if lo > hi || hi > MAX_CPU {
            return Err(bad());
        }
        cpus.extend(lo..=hi);
    }
    Ok(cpus)
}

/// A CPU list as `--cpus` takes it: `0-3,6`.
pub(crate) fn fmt_cpus(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(match j > i {
            true => format!("{}-{}", cpus[i], cpus[j]),
            false => cpus[i].to_string(),
        });
        i = j + 1;
    }
    parts.join(",")
}

impl EngineOpts {
    /// Whether nothing was asked beyond the defaults (not written into results then).
    pub fn is_default(&self) -> bool {
        *self == EngineOpts::default()
    }

    /// The options asked beyond the defaults, in the command line's words ("--batch-submit
    /// 4", "--sqpoll", "--cpus 0-1"), `--sqpoll` and its CPU left to `with_sqpoll`: for the
    /// run's header and the plan's listing.
    pub(crate) fn words(&self, with_sqpoll: bool) -> Vec<String> {
        let mut w = Vec::new();
        match self.sync_mode {
            SyncMode::None => {}
            SyncMode::Sync => w.push("--sync-mode sync".to_string()),
            SyncMode::Dsync => w.push("--sync-mode dsync".to_string()),
        }
        if with_sqpoll && self.sqpoll {
            w.push("--sqpoll".into());
            w.extend(self.sqpoll_cpu.map(|c| format!("--sqpoll-cpu {c}")));
        }
        for (v, opt) in [
            (self.batch_submit, "--batch-submit"),
            (self.batch_complete, "--batch-complete"),
        ] {
            if v != 1 {
                w.push(format!("{opt} {v}"));
            }
        }
        if self.hipri {
            w.push("--hipri".into());
        }
        if let Some(ns) = self.spin_wait_ns {
            w.push(format!("--spin-wait {}", fmt_spin(ns)));
        }
        if !self.sched_policy.is_normal() {
            w.push(format!("--sched-policy {}", self.sched_policy.name()));
        }
        if !self.cpus.is_empty() {
            w.push(format!("--cpus {}", fmt_cpus(&self.cpus)));
            if self.cpus_shared {
                w.push("--cpus-policy shared".into());
            } else if self.cpus_after > 0 {
                w.push(format!(
                    "split after the file's {} earlier {}, as fio counts",
                    self.cpus_after,
                    if self.cpus_after == 1 { "job" } else { "jobs" }
                ));
            }
        }
        w
    }

    /// An engine's name and the options asked of it beyond `without` (`words`):
    /// "io_uring --sqpoll --batch-submit 4", for the plan's listing and `compare`.
    pub(crate) fn with_name(&self, name: &str, without: &[&str]) -> String {
        let opts: Vec<String> = (self.words(true).into_iter())
            .filter(|w| !without.iter().any(|x| w.starts_with(x)))
            .collect();
        match opts.is_empty() {
            true => name.to_string(),
            false => format!("{name} {}", opts.join(" ")),
        }
    }

    /// The engine options given in `o`.
    pub(crate) fn from_options(o: &RunOptions) -> Result<EngineOpts> {
        let sync_mode = match o.text("sync-mode") {
            None | Some("none" | "0") => SyncMode::None,
            Some("sync" | "1") => SyncMode::Sync,
            Some("dsync") => SyncMode::Dsync,
            Some(other) => {
                return Err(Error::usage(format!(
                    "--sync-mode {other} is unknown; use none, sync or dsync"
                )));
            }
        };
        let batch = |name: &str| -> Result<u32> {
            let opt = format!("--{name}");
            let v: u32 = count_opt(&opt, o.text_or_default(name), "a whole number")?;
            if v == 0 {
                return Err(Error::usage(format!(
                    "{opt} 0 is out of range; use 1 (one at a time) up to --qd"
                )));
            }
            Ok(v)
        };
        let sqpoll_cpu = match o.text("sqpoll-cpu") {
            Some(t) => Some(count_opt("--sqpoll-cpu", t, "a CPU number")?)
                .filter(|&c| c <= MAX_CPU)
                .ok_or_else(|| {
                    Error::usage(format!(
                        "--sqpoll-cpu {t} is out of range; use 0 to {MAX_CPU}"
                    ))
                })
                .map(Some)?,
            None => None,
        };
        let sched_policy = match o.text("sched-policy") {
            None | Some("normal") => SchedPolicy::Normal,
            Some("batch") => SchedPolicy::Batch,
            Some(other) => {
                return Err(Error::usage(format!(
                    "--sched-policy {other} is unknown; use batch or normal"
                )));
            }
        };
        Ok(EngineOpts {
            spin_wait_ns: o.text("spin-wait").map(parse_spin).transpose()?,
            sched_policy,
            sync_mode,
            batch_submit: batch("batch-submit")?,
            batch_complete: batch("batch-complete")?,
            sqpoll: o.on("sqpoll"),
            sqpoll_cpu,
            hipri: o.on("hipri"),
            cpus: o
                .text("cpus")
                .map(parse_cpus)
                .transpose()?
                .unwrap_or_default(),
            cpus_shared: o.text("cpus-policy") == Some("shared"),
            cpus_after: 0,
        })
    }

    /// A note when `--batch-submit` goes with `--sqpoll`: each request is in the ring as
    /// soon as it is queued, where the polling thread takes it, so nothing waits for a
    /// batch (fio's `iodepth_batch_submit` under `sqthread_poll` alike, whose queueing
    /// moves the ring's tail at once too); only the checks whether the thread needs a
    /// wake-up are spaced. `None` otherwise.
    pub(crate) fn idle_batch_submit(&self) -> Option<String> {
        (self.sqpoll && self.batch_submit > 1).then(|| {
            format!(
                "--batch-submit {} with --sqpoll: the polling thread takes each request from the ring as it is queued, so none waits for a batch (as in fio), and it only spaces the checks whether the thread needs waking",
                self.batch_submit
            )
        })
    }

    /// Refuses an option the engine cannot honour, one line naming both.
    pub(crate) fn check(&self, engine: EngineKind, qd: u32, direct: bool) -> Result<()> {
        let name = engine.name();
        if engine != EngineKind::IoUring {
            for (on, opt) in [(self.sqpoll, "--sqpoll"), (self.hipri, "--hipri")] {
                if on {
                    return Err(Error::usage(format!(
                        "{opt} is an io_uring option and --engine {name} has no ring; use --engine io_uring or drop {opt}"
                    )));
                }
            }
        }
        if let Some(why) = self.idle_spin(engine) {
            return Err(Error::usage(why));
        }
        if self.hipri && !direct {
            return Err(Error::usage(
                "--hipri polls the device for completions of direct I/O; drop --buffered or --hipri",
            ));
        }
        for (v, opt) in [
            (self.batch_submit, "--batch-submit"),
            (self.batch_complete, "--batch-complete"),
        ] {
            if v > 1 && !engine.caps().does_io {
                return Err(Error::usage(format!(
                    "{opt} {v} batches requests to the kernel and --engine null completes each as it is queued, with none to batch; drop {opt}"
                )));
            }
            if v > 1 && !engine.caps().asynchronous {
                return Err(Error::usage(format!(
                    "{opt} {v} batches asynchronous requests and --engine {name} does one at a time; use --engine io_uring or libaio, or drop {opt}"
                )));
            }
            if v > qd {
                return Err(Error::usage(format!(
                    "{opt} {v} is more than --qd {qd} requests in flight; use at most {qd}"
                )));
            }
        }
        if self.sync_mode != SyncMode::None && !engine.caps().direct {
            return Err(Error::usage(format!(
                "--sync-mode applies to write calls and --engine {name} writes by storing into a mapping; use --fsync N (msync) instead"
            )));
        }
        if self.sync_mode != SyncMode::None && !engine.caps().does_io {
            return Err(Error::usage(
                "--sync-mode changes how the target is opened and --engine null opens none; drop it",
            ));
        }
        Ok(())
    }
}

/// How a job's I/O buffers are laid out (`io::buffer::BufferPool`), written once for the
/// pool and for a plan's memory estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BufferShape {
    /// A slot's length, rounded up to the alignment.
    pub(crate) slot: usize,
    /// The allocation's alignment.
    pub(crate) align: usize,
    /// The allocation's size.
    pub(crate) total: usize,
    /// Whether it lies in 2 MiB huge pages (slots of 64 KiB or more, whole pages): a
    /// slot is then physically contiguous, so a large transfer is one request to a
    /// device that limits its segments per request.
    pub(crate) huge: bool,
}

impl crate::plan::spec::Spec {
    /// Whether each job prepares its next I/O while its queue is full (one slot and
    /// buffer more than `--qd`): then a completion and the I/O sent in its place share
    /// one clock reading, taken after the completion was reaped and just before the
    /// submission, and the preparation (a write's stamps, the sampler) and the
    /// completion's accounting are done while I/O is in flight (`measure/worker_send.rs`).
    /// Not with what decides at submission whether, where or when the next I/O may go:
    /// pacing and think time, `--verify` (a block is never written twice at once),
    /// `--fsync` (a flush waits for the queue to drain), trims (done at once).
    pub(crate) fn prepares_ahead(&self) -> bool {
        let paced =
            self.thinktime_us.is_some() || self.rate_bps.is_some() || self.rate_iops.is_some();
        !paced && !self.verify && self.fsync == 0 && !self.rw.trims()
    }
}

/// The buffers of `slots` slots of `slot_len` bytes aligned to `align` (a power of two is
/// used, 4096 at least); `None` when the size overflows.
pub(crate) fn buffer_shape(slots: usize, slot_len: usize, align: usize) -> Option<BufferShape> {
    const HUGE: usize = 2 << 20;
    let align = align.max(4096).next_power_of_two();
    let slot = slot_len.div_ceil(align).checked_mul(align)?;
    let total = slot.checked_mul(slots.max(1))?;
    Some(match slot >= 64 << 10 {
        true => BufferShape {
            slot,
            align: align.max(HUGE),
            total: total.checked_next_multiple_of(HUGE)?,
            huge: true,
        },
        false => BufferShape {
            slot,
            align,
            total,
            huge: false,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--batch-submit` under `--sqpoll` has no batch to wait for: said (it was not; a
    /// helper read that each queued entry is in the ring at once).
    #[test]
    fn batches_under_sqpoll_are_said_to_wait_for_nothing() {
        let mut o = EngineOpts {
            sqpoll: true,
            batch_submit: 4,
            ..EngineOpts::default()
        };
        let said = o.idle_batch_submit().expect("said");
        assert!(
            said.starts_with(
                "--batch-submit 4 with --sqpoll: the polling thread takes each request"
            ) && !said.contains("; "),
            "{said}"
        );
        o.sqpoll = false;
        assert_eq!(o.idle_batch_submit(), None);
        (o.sqpoll, o.batch_submit) = (true, 1);
        assert_eq!(o.idle_batch_submit(), None);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpus("0,2").unwrap(), vec![0, 2]);
        assert_eq!(parse_cpus("0-3").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(parse_cpus(" 1 , 4-5").unwrap(), vec![1, 4, 5]);
        assert_eq!(fmt_cpus(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(parse_cpus(&fmt_cpus(&[1, 3, 4])).unwrap(), vec![1, 3, 4]);
        for bad in ["", "a", "3-1", "0-", "1024", "0,,1"] {
            let e = parse_cpus(bad).unwrap_err().to_string();
            assert!(e.contains("--cpus") && e.contains("0-3"), "{bad}: {e}");
        }
    }

    #[test]
    fn names_round_trip() {
        for e in EngineKind::ALL {
            assert_eq!(EngineKind::parse(e.name()), Some(e));
        }
        assert_eq!(EngineKind::parse("uring"), Some(EngineKind::IoUring));
        assert_eq!(EngineKind::parse("posixaio"), None);
    }

    #[test]
    fn checks_name_the_option_and_the_engine() {
        let o = |f: fn(&mut EngineOpts)| {
            let mut o = EngineOpts::default();
            f(&mut o);
            o
        };
        let cases: [(EngineOpts, EngineKind, u32, bool, &str); 6] = [
            (
                o(|o| o.sqpoll = true),
                EngineKind::Libaio,
                8,
                true,
                "--sqpoll",
            ),
            (
                o(|o| o.hipri = true),
                EngineKind::IoUring,
                8,
                false,
                "--buffered",
            ),
            (
                o(|o| o.batch_submit = 4),
                EngineKind::Psync,
                1,
                true,
                "psync",
            ),
            (
                o(|o| o.batch_complete = 16),
                EngineKind::Libaio,
                8,
                true,
                "--qd 8",
            ),
            (
                o(|o| o.sync_mode = SyncMode::Dsync),
                EngineKind::Mmap,
                1,
                false,
                "msync",
            ),
            (
                o(|o| o.sync_mode = SyncMode::Sync),
                EngineKind::Null,
                1,
                true,
                "null",
            ),
        ];
        for (opts, engine, qd, direct, needle) in cases {
            let e = opts.check(engine, qd, direct).unwrap_err().to_string();
            assert!(e.contains(needle) && !e.contains('\n'), "{e}");
        }
        let fine = o(|o| {
            o.batch_submit = 8;
            o.batch_complete = 4;
            o.sync_mode = SyncMode::Dsync;
        });
        assert!(fine.check(EngineKind::Libaio, 8, true).is_ok());
        assert!(fine.check(EngineKind::IoUring, 8, false).is_ok());
    }
}

//! CPU time in the results: the process's during the measured window, and how it
//! divides between the job threads, io_uring's kernel workers, its SQPOLL thread and the
//! rest, so that no part exceeds the whole.

use serde::{Deserialize, Serialize};

/// CPU time of the iomark process during the measured window, and how it divides
/// between the job threads, io_uring's kernel workers, the SQPOLL thread and the rest.
/// The kernel splits a thread's time and the process's into user and system time each
/// by its own ticks (only their sums are exact), so the whole's split is the parts'
/// splits added ([`Cpu::divided`]): no part's user or system time exceeds the whole's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    /// User-mode seconds, all threads: the parts' added.
    pub user_s: f64,
    /// Kernel-mode seconds, all threads: the parts' added.
    pub sys_s: f64,
    /// (user + sys) per completed I/O, nanoseconds; 0 when no I/O completed.
    pub per_io_ns: f64,
    /// The job threads (`RUSAGE_THREAD` of each): what fio's job figures count.
    #[serde(default)]
    pub workers: CpuPart,
    /// io_uring's kernel workers (io-wq `iou-wrk-*` threads, from `/proc`).
    #[serde(default)]
    pub io_wq: CpuPart,
    /// io_uring's SQPOLL thread (`iou-sqp-*`, from `/proc`; `--sqpoll`).
    #[serde(default)]
    pub sqpoll: CpuPart,
    /// Everything else: the main thread, helper threads, kernel workers that exited.
    #[serde(default)]
    pub other: CpuPart,
    /// The rest of the machine in the same window (`/proc/stat`): other processes' user
    /// time and the hypervisor's steal. Absent where `/proc/stat` could not be read, in a
    /// run of several MPI ranks, and in documents before 2026-11-30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineCpu>,
}

/// What the rest of the machine did while a repetition measured: the competition its job
/// threads met for the CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineCpu {
    /// The CPUs online.
    pub cpus: u32,
    /// Seconds from the first reading to the last.
    pub window_s: f64,
    /// User-mode seconds of every other process, all CPUs added: the machine's user time
    /// less iomark's (kernel threads, such as the loop device's worker, have none).
    pub others_user_s: f64,
    /// Seconds a hypervisor ran something else while the CPUs wanted to run (steal), all
    /// CPUs added.
    pub steal_s: f64,
}

impl MachineCpu {
    /// Other processes' user time as CPUs kept busy on average.
    pub fn others_cpus(&self) -> f64 {
        self.others_user_s / self.window_s.max(1e-9)
    }

    /// Steal as CPUs held back on average.
    pub fn steal_cpus(&self) -> f64 {
        self.steal_s / self.window_s.max(1e-9)
    }

    /// Whether other processes were busy enough to name: [`BUSY_CPUS`] on average or
    /// more, and [`BUSY_SHARE`] of the machine's CPUs or more (a quarter of a CPU is little
    /// beside 64 mostly idle ones), by more than the clock ticks `/proc/stat` counts in
    /// (two a CPU: a short window's few ticks are no measure of a quarter CPU).
    pub fn others_busy(&self) -> bool {
        let cpus = f64::from(self.cpus.max(1));
        self.others_cpus() >= BUSY_CPUS.max(BUSY_SHARE * cpus)
            && self.others_user_s > 2.0 * PROC_STAT_TICK_S * cpus
    }

    /// Whether the hypervisor's steal is worth naming ([`STEAL_CPUS`] or more).
    pub fn steal_high(&self) -> bool {
        self.steal_cpus() >= STEAL_CPUS
    }
}

/// The repetitions of `reps` whose machine (`cpu.machine`) `named` picks out, as
/// (index, `f` of the machine, its CPUs), in order: what the run's note and a
/// comparison say of busy other processes or steal.
pub fn named_reps(
    reps: &[crate::results::schema::Repetition],
    named: fn(&MachineCpu) -> bool,
    f: fn(&MachineCpu) -> f64,
) -> Vec<(u32, f64, u32)> {
    (reps.iter())
        .filter_map(|r| {
            let m = r.cpu.machine?;
            named(&m).then_some((r.index, f(&m), m.cpus))
        })
        .collect()
}

/// Other processes' user time is named at this many CPUs on average in a repetition's
/// window, or more: a quarter of a CPU taken from the job threads and the kernel threads
/// completing their I/O...
pub const BUSY_CPUS: f64 = 0.25;
/// ...and at this share of the machine's CPUs, or more.
pub const BUSY_SHARE: f64 = 0.05;
/// Steal is named at this many CPUs on average, or more.
pub const STEAL_CPUS: f64 = 0.05;
/// `/proc/stat` counts in `USER_HZ` ticks: 100 a second on Linux.
const PROC_STAT_TICK_S: f64 = 0.01;

impl Cpu {
    /// The process's `(user, sys)` seconds divided into the parts measured apart
    /// (`workers`, `io_wq`, `sqpoll`, each `(user, sys)`) and the rest, over `ios`
    /// completed I/Os. The whole's total is the process's (the parts' sum when that is
    /// larger, by the threads' rounding); the rest's total is what the parts leave, split
    /// as the process's user time less the parts' (within the rest's total); the whole's
    /// user and system times are then the parts' added, so no part exceeds them.
    pub fn divided(
        process: (f64, f64),
        workers: (f64, f64),
        io_wq: (f64, f64),
        sqpoll: (f64, f64),
        ios: u64,
    ) -> Cpu {
        let parts = [workers, io_wq, sqpoll];
        let user: f64 = parts.iter().map(|p| p.0).sum();
        let sys: f64 = parts.iter().map(|p| p.1).sum();
        let rest = (process.0 + process.1 - user - sys).max(0.0);
        let rest_user = (process.0 - user).clamp(0.0, rest);
        let other = (rest_user, rest - rest_user);
        let whole = CpuPart::new(user + other.0, sys + other.1, ios);
        Cpu {
            user_s: whole.user_s,
            sys_s: whole.sys_s,
            per_io_ns: whole.per_io_ns,
            workers: CpuPart::new(workers.0, workers.1, ios),
            io_wq: CpuPart::new(io_wq.0, io_wq.1, ios),
            sqpoll: CpuPart::new(sqpoll.0, sqpoll.1, ios),
            other: CpuPart::new(other.0, other.1, ios),
            machine: None,
        }
    }

    /// The parts, named as in the document.
    pub fn parts(&self) -> [(&'static str, &CpuPart); 4] {
        [
            ("workers", &self.workers),
            ("io_wq", &self.io_wq),
            ("sqpoll", &self.sqpoll),
            ("other", &self.other),
        ]
    }
}

/// CPU time of one group of threads in the measured window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuPart {
    pub user_s: f64,
    pub sys_s: f64,
    /// (user + sys) per completed I/O, nanoseconds; 0 when no I/O completed.
    pub per_io_ns: f64,
}

impl CpuPart {
    /// A part of `user_s` and `sys_s` seconds over `ios` completed I/Os.
    pub fn new(user_s: f64, sys_s: f64, ios: u64) -> CpuPart {
        CpuPart {
            user_s,
            sys_s,
            per_io_ns: if ios > 0 {
                (user_s + sys_s) * 1e9 / ios as f64
            } else {
                0.0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cpu;

    /// Probe 14: the workers' user time above the process's (the kernel splits each
    /// thread's time and the process's by their own ticks). No part exceeds the whole,
    /// the parts add up to it, and the total is the process's.
    #[test]
    fn no_part_exceeds_the_whole() {
        let cases = [
            // (process, workers, io_wq, sqpoll)
            ((0.0, 0.02), (0.007, 0.013), (0.0, 0.0), (0.0, 0.0)),
            ((0.016, 0.5), (0.035, 0.0), (0.0, 0.0), (0.0, 0.49)),
            ((0.01, 0.0015), (0.0, 0.019), (0.0, 0.0), (0.0, 0.0)),
            ((0.3, 0.7), (0.2, 0.5), (0.0, 0.1), (0.0, 0.0)),
            // The parts' sum above the process's by rounding: the whole is their sum.
            ((0.1, 0.1), (0.1, 0.11), (0.0, 0.0), (0.0, 0.0)),
        ];
        for (process, w, q, p) in cases {
            let c = Cpu::divided(process, w, q, p, 1000);
            let total = c.user_s + c.sys_s;
            assert!(
                (total - (process.0 + process.1).max(w.0 + w.1 + q.0 + q.1 + p.0 + p.1)).abs()
                    < 1e-12,
                "{c:?}"
            );
            let (mut u, mut s) = (0.0, 0.0);
            for (name, part) in c.parts() {
                assert!(part.user_s >= 0.0 && part.sys_s >= 0.0, "{name}: {c:?}");
                assert!(part.user_s <= c.user_s + 1e-12, "{name}: {c:?}");
                assert!(part.sys_s <= c.sys_s + 1e-12, "{name}: {c:?}");
                (u, s) = (u + part.user_s, s + part.sys_s);
            }
            assert!((u - c.user_s).abs() < 1e-12 && (s - c.sys_s).abs() < 1e-12);
            assert!((c.per_io_ns - total * 1e6).abs() < 1e-3, "{c:?}");
        }
        // Where the parts leave time and user time to the rest, the rest keeps the
        // process's user time less the parts'.
        let c = Cpu::divided((0.3, 0.7), (0.2, 0.5), (0.0, 0.1), (0.0, 0.0), 1);
        assert!((c.other.user_s - 0.1).abs() < 1e-12 && (c.other.sys_s - 0.1).abs() < 1e-12);
    }
}

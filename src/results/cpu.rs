//! CPU time in the results: the process's during the measured window, and how it
//! divides between the job threads, io_uring's kernel workers and the rest.

use serde::{Deserialize, Serialize};

/// CPU time of the iomark process during the measured window, and how it divides
/// between the job threads, io_uring's kernel workers and the rest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    /// User-mode seconds, all threads.
    pub user_s: f64,
    /// Kernel-mode seconds, all threads.
    pub sys_s: f64,
    /// (user + sys) per completed I/O, nanoseconds; 0 when no I/O completed.
    pub per_io_ns: f64,
    /// The job threads (`RUSAGE_THREAD` of each): what fio's job figures count.
    #[serde(default)]
    pub workers: CpuPart,
    /// io_uring's kernel workers (io-wq `iou-wrk-*` threads, from `/proc`).
    #[serde(default)]
    pub io_wq: CpuPart,
    /// Everything else: the main thread, helper threads, kernel workers that exited.
    #[serde(default)]
    pub other: CpuPart,
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

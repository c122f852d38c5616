//! What a worker returns ([`WorkerOut`]): its raw counts, histograms, the data it saw and
//! where its measured window ended. Merging them is `rep`'s.

use crate::error::Error;
use crate::io::env::{CpuTimes, KernelCpu, KernelWorkers};
use crate::measure::tally::Tally;
use crate::results::stats::{Counter, LatHist};
use crate::workload::sampler::Sampler;

/// What a worker returns.
pub(crate) struct WorkerOut {
    /// Its counts, over its measured window (`end_ns`: from measurement start to the end
    /// of that window).
    pub(crate) tally: Tally,
    /// Whether the worker stopped before its planned end (signal, halt, error).
    pub(crate) interrupted: bool,
    pub(crate) error: Option<Error>,
    /// What the worker saw of the data it wrote.
    pub(crate) sampler: Option<Sampler>,
    /// With --verify: for each of its files (one, or those of `files` in that order),
    /// the first byte of the worker's region and the generation last written to each of
    /// its blocks (0: never).
    pub(crate) gens: Vec<(u64, Vec<u64>)>,
    /// This thread's CPU time from the start of its measured window to its end.
    pub(crate) cpu: CpuTimes,
    /// Its io_uring kernel threads' over the same window: io-wq workers and the SQPOLL
    /// thread (read by the job thread itself, before its ring and they are gone).
    pub(crate) kernel: KernelCpu,
    /// `--file-service`: what each file it served took of the figures above, for that
    /// target's own figures (empty for a worker on one file).
    pub(crate) files: Vec<FileOut>,
    /// The spin before each wait for one completion its engine used (`--spin-wait`, or
    /// the default resolved: `EngineOpts::spin_used`); `None` where its waits do not spin.
    pub(crate) spin_ns: Option<u32>,
}

/// One file's share of a worker's figures (`--file-service`).
pub(crate) struct FileOut {
    /// The file's index among the run's targets.
    pub(crate) target: usize,
    pub(crate) read: Counter,
    pub(crate) write: Counter,
    /// Made at the file's first read or write: a worker serving many files keeps only
    /// the histograms it fills.
    pub(crate) hist_read: Option<LatHist>,
    pub(crate) hist_write: Option<LatHist>,
    pub(crate) trim: Counter,
    pub(crate) hist_trim: Option<LatHist>,
    pub(crate) fsyncs: u64,
}

impl FileOut {
    pub(crate) fn new(target: usize) -> FileOut {
        FileOut {
            target,
            read: Counter::default(),
            write: Counter::default(),
            hist_read: None,
            hist_write: None,
            trim: Counter::default(),
            hist_trim: None,
            fsyncs: 0,
        }
    }
}

impl WorkerOut {
    pub(crate) fn empty(error: Option<Error>) -> WorkerOut {
        WorkerOut {
            tally: Tally::new(),
            interrupted: error.is_some(),
            error,
            sampler: None,
            gens: Vec::new(),
            cpu: CpuTimes::default(),
            kernel: KernelCpu::default(),
            files: Vec::new(),
            spin_ns: None,
        }
    }
}

/// A job thread's CPU readings at the start of its measured window: its own time, and
/// with io_uring its kernel threads' (`KernelWorkers`, named after it).
pub(crate) struct CpuStart {
    thread: CpuTimes,
    kernel: Option<KernelWorkers>,
}

impl CpuStart {
    /// Read on the job thread (`io_uring`: whether it has io_uring kernel threads to read).
    pub(crate) fn now(io_uring: bool) -> CpuStart {
        // The kernel threads first, so that reading them is not in the thread's window.
        let kernel = io_uring.then(KernelWorkers::of_this_thread);
        CpuStart {
            thread: CpuTimes::thread(),
            kernel,
        }
    }

    /// What the thread and its kernel threads used since, into `out`; on the job thread,
    /// with its ring still open (the thread's own time first, before the reading).
    pub(crate) fn end(&self, out: &mut WorkerOut) {
        out.cpu = CpuTimes::thread().since(self.thread);
        if let Some(before) = &self.kernel {
            out.kernel = KernelWorkers::of_this_thread().since(before);
        }
    }
}

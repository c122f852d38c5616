//! The workers' outputs of a repetition added up ([`Merged`]) and the repetition they
//! make over their own window; a run on several targets keeps each target's part (a
//! worker serving several files, `--file-service`, gives each file's share to its
//! target).

use std::time::Instant;

use crate::error::Error;
use crate::io::env::{CpuTimes, KernelCpu, MachineTimes};
use crate::measure::interval::{IntervalSum, series};
use crate::measure::tally::Tally;
use crate::measure::targets::dir_stats;
use crate::measure::worker::WorkerOut;
use crate::plan::spec::Spec;
use crate::results::env::DeviceDelta;
use crate::results::schema::{Cpu, MachineCpu, Repetition, Status};
use crate::results::stats::{Counter, LatHist};
use crate::stop::StopFlag;
use crate::workload::sampler::Sampler;

/// The process's CPU time over a repetition's window.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WindowCpu {
    pub(crate) process: CpuTimes,
    /// The rest of the machine (`None` where /proc/stat could not be read, and in a run
    /// of several MPI ranks on the host, whose siblings it would count as others).
    pub(crate) machine: Option<MachineCpu>,
}

/// The CPU times read when the measured window begins.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CpuMark {
    process: CpuTimes,
    machine: Option<MachineTimes>,
    at: Instant,
}

impl CpuMark {
    pub(crate) fn now() -> CpuMark {
        CpuMark {
            process: CpuTimes::now(),
            machine: MachineTimes::now(),
            at: Instant::now(),
        }
    }
}

impl WindowCpu {
    /// What the process, and the rest of the machine, used since `mark`.
    pub(crate) fn since(mark: CpuMark) -> WindowCpu {
        let machine = MachineTimes::now();
        let process = CpuTimes::now().since(mark.process);
        let alone = crate::plan::engine::local_ranks() <= 1;
        let machine = match (mark.machine, machine) {
            (Some(before), Some(now)) if alone => {
                let m = now.since(before);
                Some(MachineCpu {
                    cpus: m.cpus,
                    window_s: mark.at.elapsed().as_secs_f64(),
                    others_user_s: (m.user_s - process.user_s).max(0.0),
                    steal_s: m.steal_s,
                })
            }
            _ => None,
        };
        WindowCpu { process, machine }
    }

    /// The process's time divided into the job threads' (`workers`), their io_uring
    /// kernel threads' (`kernel`, as the job threads read them) and the rest, over `ios`
    /// I/Os ([`Cpu::divided`]).
    pub(crate) fn divided(&self, workers: CpuTimes, kernel: KernelCpu, ios: u64) -> Cpu {
        let t = |c: CpuTimes| (c.user_s, c.sys_s);
        let mut cpu = Cpu::divided(
            t(self.process),
            t(workers),
            t(kernel.io_wq),
            t(kernel.sqpoll),
            ios,
        );
        cpu.machine = self.machine;
        cpu
    }
}

/// The workers' outputs added up.
pub(crate) struct Merged {
    /// Per target, when there are several.
    pub(crate) parts: Vec<Tally>,
    /// Every worker's counts (`end_ns`: the end of the last worker's window).
    pub(crate) all: Tally,
    pub(crate) interrupted: bool,
    /// The first worker error.
    pub(crate) error: Option<Error>,
    pub(crate) sampler: Option<Sampler>,
    /// With --verify: each worker's regions, as (target, first byte, generations).
    pub(crate) gens: Vec<(usize, u64, Vec<u64>)>,
    /// The job threads' CPU time in their measured windows.
    pub(crate) cpu: CpuTimes,
    /// Their io_uring kernel threads' (io-wq workers, SQPOLL threads) in those windows.
    pub(crate) kernel: KernelCpu,
    /// The spin before a wait the workers' engines used (`WorkerOut::spin_ns`).
    pub(crate) spin_ns: Option<u32>,
}

impl Merged {
    pub(crate) fn of(outs: Vec<(usize, WorkerOut)>, targets: usize) -> Merged {
        let mut m = Merged {
            parts: match targets {
                1 => Vec::new(),
                n => (0..n).map(|_| Tally::new()).collect(),
            },
            all: Tally::new(),
            interrupted: false,
            error: None,
            sampler: None,
            gens: Vec::new(),
            cpu: CpuTimes::default(),
            kernel: KernelCpu::default(),
            spin_ns: None,
        };
        for (t, o) in outs {
            if !o.files.is_empty() {
                // Each file's share goes to its own target.
                for f in &o.files {
                    if let Some(p) = m.parts.get_mut(f.target) {
                        p.add_file(f, o.tally.end_ns);
                    }
                }
            } else if let Some(p) = m.parts.get_mut(t) {
                p.add(&o.tally);
            }
            m.cpu = m.cpu.plus(o.cpu);
            m.kernel = m.kernel.plus(o.kernel);
            m.spin_ns = m.spin_ns.or(o.spin_ns);
            m.all.add(&o.tally);
            m.interrupted |= o.interrupted;
            if m.error.is_none() {
                m.error = o.error;
            }
            if let Some(s) = o.sampler {
                match m.sampler.as_mut() {
                    Some(all) => all.merge(&s),
                    None => m.sampler = Some(s),
                }
            }
            // A worker's regions are its files' (in the order of `files`), or its lane's
            // target's.
            let target_of = |i: usize| o.files.get(i).map_or(t, |f| f.target);
            let gens = o.gens.into_iter().enumerate();
            m.gens
                .extend(gens.map(|(i, (base, g))| (target_of(i), base, g)));
        }
        m
    }
}

impl Merged {
    /// The repetition (0-based `rep`) these outputs make, over their own window: the
    /// process's CPU time (`cpu`; the kernel threads' are its workers'), the device counters,
    /// the intervals of the series. `verify` and `targets` are left empty.
    pub(crate) fn repetition(
        &mut self,
        spec: &Spec,
        rep: u32,
        cpu: WindowCpu,
        device: Option<DeviceDelta>,
        intervals: &[IntervalSum],
        stop: &StopFlag,
    ) -> Repetition {
        let elapsed_s = (self.all.end_ns as f64 / 1e9).max(1e-9);
        let dir = |c: Counter, h: &LatHist| dir_stats(c, h, elapsed_s);
        let total = self.all.read.ios + self.all.write.ios + self.all.trim.ios;
        let page_cache_hit_pct =
            Repetition::measure_page_cache(spec.direct, self.all.read.bytes, device.as_ref());
        Repetition {
            index: rep + 1,
            status: if self.interrupted {
                Status::Interrupted
            } else {
                Status::Complete
            },
            elapsed_s,
            read: dir(self.all.read, &self.all.hist_read),
            write: dir(self.all.write, &self.all.hist_write),
            trim: dir(self.all.trim, &self.all.hist_trim),
            fsyncs: self.all.fsyncs,
            cpu: cpu.divided(self.cpu, self.kernel, total),
            spin_wait_ns: self.spin_ns,
            device,
            series: series(intervals, spec.interval_s, elapsed_s),
            // Measuring the samples compresses them (seconds with many jobs): not after a
            // stop.
            data: (self.sampler.take())
                .filter(|_| !stop.is_set())
                .and_then(|s| s.measure()),
            verify: None,
            page_cache_hit_pct,
            targets: Vec::new(),
            ranks: Vec::new(),
            hosts: Vec::new(),
        }
    }
}

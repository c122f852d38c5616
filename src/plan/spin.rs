//! The spin before a wait for completions (`--spin-wait`): its default, its parsing and
//! writing, and which of a run's waits take it. The spin itself is `io::engine::spin`.

use crate::error::{Error, Result};
use crate::plan::engine::{EngineKind, EngineOpts};

/// The spin before a wait by default (`--spin-wait`), where the jobs leave a CPU free:
/// about what a sleep and its wakeup cost the sleeping thread itself, so a spin that finds a completion costs no more CPU
/// than the sleep it spares. Measured on zram, 4 KiB random reads at QD 8-128: 1.5 µs
/// took the IPIs per read from 0.07-0.16 to 0.005-0.03 and the IOPS to 1.2-1.27x fio's,
/// at 1.00-1.04x its CPU per read; 5 µs cost the loop device's 4 KiB reads at QD 8 1.24x
/// fio's CPU (docs/PERFORMANCE.md, session 31).
pub(crate) const SPIN_WAIT_NS: u32 = 1500;

/// The longest `--spin-wait`: a spin that long already costs more than any sleep.
pub(crate) const MAX_SPIN_WAIT_NS: u32 = 1_000_000;

/// The default spin for `workers` job threads in each of `ranks` processes on a host
/// whose processes may use `cpus` CPUs: [`SPIN_WAIT_NS`] while a CPU is left for the
/// threads that complete the requests (io-wq's workers, the loop device's), none where
/// the jobs take every CPU: a spin then takes its CPU time from those threads (4 KiB
/// reads at QD 32, 2 jobs on 2 CPUs, without the spin against with it: the loop device
/// 1.03x the IOPS at 0.96-0.97x the CPU per read in two runs; zram level in two runs of
/// three, 1.17x at 0.74x in the third; docs/PERFORMANCE.md, session 32).
pub(crate) fn auto_spin(workers: usize, ranks: usize, cpus: usize) -> u32 {
    match workers.saturating_mul(ranks.max(1)) < cpus {
        true => SPIN_WAIT_NS,
        false => 0,
    }
}

/// The ranks of an MPI job on this host (Open MPI's `OMPI_COMM_WORLD_LOCAL_SIZE`,
/// MPICH's `MPI_LOCALNRANKS`), 1 outside one.
pub(crate) fn local_ranks() -> usize {
    ["OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
        .unwrap_or(1)
}

/// Parses `--spin-wait`: a duration up to 1 ms (`1.5us`, `800ns`, `0`), in nanoseconds.
pub(crate) fn parse_spin(text: &str) -> Result<u32> {
    let t = text.trim();
    let bad = |why: &str| Error::usage(format!("--spin-wait {t} {why}"));
    // A bare number would be seconds, as everywhere else: only 0 goes without a unit.
    if t.parse::<f64>().is_ok_and(|v| v != 0.0) {
        return Err(bad(
            "has no unit; give one, such as 1.5us or 800ns (0: no spin)",
        ));
    }
    let d = crate::units::parse_duration(t)
        .map_err(|_| bad("is not a duration; use one such as 1.5us or 800ns (0: no spin)"))?;
    let ns = d.as_nanos();
    if ns > MAX_SPIN_WAIT_NS as u128 {
        return Err(bad(&format!(
            "is too long; use at most {} (a spin that long costs more than any sleep)",
            fmt_spin(MAX_SPIN_WAIT_NS)
        )));
    }
    Ok(ns as u32)
}

/// A spin's length as `--spin-wait` takes it: `1.5us`, `800ns`, `1ms`, `0`.
pub(crate) fn fmt_spin(ns: u32) -> String {
    match ns {
        0 => "0".into(),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1000 == 0 => format!("{}us", n / 1000),
        n if n % 100 == 0 && n > 1000 => format!("{}us", n as f64 / 1000.0),
        n => format!("{n}ns"),
    }
}

impl EngineOpts {
    /// Why a `--spin-wait` would change nothing with these options: no wait of the
    /// engine's spins (one line naming both and the way out).
    pub(crate) fn idle_spin(&self, engine: EngineKind) -> Option<String> {
        let ns = self.spin_wait_ns?;
        let opt = format!("--spin-wait {}", fmt_spin(ns));
        let name = engine.name();
        if !engine.waits() {
            return Some(format!(
                "{opt} shortens waits for asynchronous completions and --engine {name} has none to wait for; use --engine io_uring or libaio, or drop --spin-wait"
            ));
        }
        if ns == 0 {
            return None; // no spin asked: nothing to refuse beside the options below
        }
        let (other, why) = match () {
            _ if self.sqpoll => (
                "--sqpoll".to_string(),
                "the kernel's polling thread reaps, and the waits sleep at once",
            ),
            _ if self.hipri => (
                "--hipri".to_string(),
                "the kernel polls the device inside each wait",
            ),
            _ if self.batch_complete > 1 => (
                format!("--batch-complete {}", self.batch_complete),
                "a wait for several sleeps at once; only a wait for one spins",
            ),
            _ => return None,
        };
        Some(format!(
            "{opt} has no wait to spin in with {other} ({why}); drop --spin-wait or {other}"
        ))
    }

    /// The spin an engine's waits use (`spin_ns`), or `None` where they do not spin: an
    /// engine with no wait (psync, mmap, null), `--sqpoll`, `--hipri`, or waits for
    /// several (`--batch-complete`).
    pub(crate) fn spin_used(&self, engine: EngineKind, workers: usize) -> Option<u32> {
        self.waits_spin(engine).then(|| self.spin_ns(workers))
    }

    /// Whether the engine's waits for one completion spin first (given a length): an
    /// engine that waits (io_uring, libaio), not with `--sqpoll`, `--hipri` or
    /// `--batch-complete` above 1.
    pub(crate) fn waits_spin(&self, engine: EngineKind) -> bool {
        engine.waits() && !self.sqpoll && !self.hipri && self.batch_complete <= 1
    }

    /// The spin before a wait of a run whose process runs `workers` job threads at once:
    /// as asked (`--spin-wait`), or by default [`SPIN_WAIT_NS`] where those threads, with
    /// the job threads of the other ranks of an MPI job on this host, leave a CPU of the
    /// process's free, and none where they take every one ([`auto_spin`]).
    pub(crate) fn spin_ns(&self, workers: usize) -> u32 {
        self.spin_wait_ns.unwrap_or_else(|| {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            auto_spin(workers, local_ranks(), cpus)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::engine::SchedPolicy;

    /// `--spin-wait`: a duration with a unit (a bare number other than 0 would be
    /// seconds), at most 1 ms; refused where no wait spins, with the option that stops
    /// it named; the default is never refused (it applies where it can).
    #[test]
    fn spin_wait_is_parsed_and_refused_where_no_wait_spins() {
        assert_eq!(parse_spin("1.5us").unwrap(), 1500);
        assert_eq!(parse_spin("800ns").unwrap(), 800);
        assert_eq!(parse_spin("0").unwrap(), 0);
        assert_eq!(parse_spin("1ms").unwrap(), MAX_SPIN_WAIT_NS);
        for (bad, needle) in [
            ("5", "no unit"),
            ("2ms", "at most 1ms"),
            ("fast", "not a duration"),
        ] {
            let e = parse_spin(bad).unwrap_err().to_string();
            assert!(
                e.contains(needle) && e.contains("--spin-wait"),
                "{bad}: {e}"
            );
        }
        for ns in [0, 1500, 800, 5000, 1_000_000] {
            assert_eq!(parse_spin(&fmt_spin(ns)).unwrap(), ns, "{}", fmt_spin(ns));
        }
        let spin = |ns: Option<u32>, f: fn(&mut EngineOpts)| {
            let mut o = EngineOpts {
                spin_wait_ns: ns,
                ..Default::default()
            };
            f(&mut o);
            o
        };
        let none: fn(&mut EngineOpts) = |_| {};
        for (opts, engine, needle) in [
            (spin(Some(0), none), EngineKind::Psync, "--engine psync"),
            (spin(Some(1500), none), EngineKind::Mmap, "--engine mmap"),
            (spin(Some(5000), none), EngineKind::Null, "--engine null"),
            (
                spin(Some(5000), |o| o.sqpoll = true),
                EngineKind::IoUring,
                "--sqpoll",
            ),
            (
                spin(Some(5000), |o| o.hipri = true),
                EngineKind::IoUring,
                "--hipri",
            ),
            (
                spin(Some(800), |o| o.batch_complete = 4),
                EngineKind::Libaio,
                "--batch-complete 4",
            ),
        ] {
            let e = opts.check(engine, 8, true).unwrap_err().to_string();
            assert!(
                e.contains(needle) && e.contains("--spin-wait") && !e.contains('\n'),
                "{e}"
            );
        }
        for (opts, engine) in [
            (spin(None, none), EngineKind::Psync),
            (spin(None, |o| o.sqpoll = true), EngineKind::IoUring),
            (spin(Some(0), |o| o.batch_complete = 4), EngineKind::IoUring),
            (spin(Some(5000), none), EngineKind::Libaio),
        ] {
            assert!(opts.check(engine, 8, true).is_ok(), "{opts:?} {engine:?}");
        }
        assert_eq!(spin(Some(1500), none).words(true), ["--spin-wait 1.5us"]);
        assert_eq!(spin(Some(0), none).words(true), ["--spin-wait 0"]);
        assert!(spin(None, none).words(true).is_empty());
        // The policy is said where it is not the default (normal, for every engine).
        let batch = EngineOpts {
            sched_policy: SchedPolicy::Batch,
            ..Default::default()
        };
        assert_eq!(batch.words(true), ["--sched-policy batch"]);
        assert_eq!(spin(Some(800), none).spin_ns(64), 800);
    }

    /// The default spin is off where the job threads (of every MPI rank on the host)
    /// take every CPU, on where one is left for the threads that complete the requests.
    #[test]
    fn the_default_spin_leaves_a_cpu_to_the_completions() {
        assert_eq!(auto_spin(1, 1, 2), SPIN_WAIT_NS);
        assert_eq!(auto_spin(2, 1, 2), 0);
        assert_eq!(auto_spin(1, 2, 2), 0);
        assert_eq!(auto_spin(3, 1, 4), SPIN_WAIT_NS);
        assert_eq!(auto_spin(4, 1, 4), 0);
        assert_eq!(auto_spin(1, 1, 1), 0);
        assert_eq!(auto_spin(usize::MAX, 2, 8), 0);
    }
}

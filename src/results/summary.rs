//! Statistics across a run's repetitions: each direction's IOPS, bandwidth and latency
//! as a [`Spread`] over the complete repetitions (part of the results schema).

use serde::{Deserialize, Serialize};

use crate::results::schema::{DirStats, Repetition, Status};
use crate::results::stats::Spread;

/// Statistics of one direction across repetitions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DirSummary {
    pub iops: Spread,
    pub bw_bytes: Spread,
    pub lat_mean_ns: Spread,
    #[serde(default)]
    pub lat_p50_ns: Spread,
    pub lat_p99_ns: Spread,
}

/// Statistics across the complete repetitions of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub read: DirSummary,
    pub write: DirSummary,
    /// Trims (discards); zero for other patterns and in documents from before trims.
    #[serde(default)]
    pub trim: DirSummary,
}

impl Summary {
    /// The direction that did most of the I/O (reads on a tie): its latencies describe
    /// the run.
    pub(crate) fn main(&self) -> &DirSummary {
        let (r, w, t) = (
            self.read.iops.mean,
            self.write.iops.mean,
            self.trim.iops.mean,
        );
        if t > r && t > w {
            &self.trim
        } else if r >= w {
            &self.read
        } else {
            &self.write
        }
    }

    /// One figure of reads, writes and trims together (e.g. total IOPS).
    pub(crate) fn total(&self, f: fn(&DirSummary) -> &Spread) -> Spread {
        let all = f(&self.read).plus(f(&self.write));
        if self.trim.iops.n == 0 {
            return all;
        }
        all.plus(f(&self.trim))
    }

    /// Summarises complete repetitions (all of them when none completed).
    pub(crate) fn of(reps: &[Repetition]) -> Summary {
        let items: Vec<_> = reps.iter().map(|r| (r.status, r.read, r.write)).collect();
        let mut s = Summary::of_dirs(&items);
        if reps.iter().any(|r| r.trim.ios > 0) {
            let trims: Vec<_> = reps.iter().map(|r| (r.status, r.trim, r.trim)).collect();
            s.trim = Summary::of_dirs(&trims).read;
        }
        s
    }

    /// Summarises (status, reads, writes) of repetitions, the complete ones (all of them
    /// when none completed).
    pub(crate) fn of_dirs(reps: &[(Status, DirStats, DirStats)]) -> Summary {
        type Rep = (Status, DirStats, DirStats);
        let complete: Vec<&Rep> = reps.iter().filter(|r| r.0 == Status::Complete).collect();
        let use_reps: Vec<&Rep> = if complete.is_empty() {
            reps.iter().collect()
        } else {
            complete
        };
        let dir = |f: fn(&Rep) -> &DirStats| {
            let vals = |g: fn(&DirStats) -> f64| {
                Spread::of(&use_reps.iter().map(|r| g(f(r))).collect::<Vec<_>>())
            };
            // Latencies only of repetitions in which I/O completed: none, no latency
            // (n 0), where a 0 ns would read as measured.
            let lat = |g: fn(&DirStats) -> f64| {
                let done = use_reps.iter().map(|r| f(r)).filter(|d| d.ios > 0);
                Spread::of(&done.map(g).collect::<Vec<_>>())
            };
            DirSummary {
                iops: vals(|d| d.iops),
                bw_bytes: vals(|d| d.bw_bytes),
                lat_mean_ns: lat(|d| d.lat_ns.mean),
                lat_p50_ns: lat(|d| d.lat_ns.p50 as f64),
                lat_p99_ns: lat(|d| d.lat_ns.p99 as f64),
            }
        };
        Summary {
            read: dir(|r| &r.1),
            write: dir(|r| &r.2),
            trim: DirSummary::default(),
        }
    }
}

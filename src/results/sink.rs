//! The one push interface from the measuring core to whoever consumes what it measures:
//! the progress display, the store that saves the document after every repetition, and
//! (scaled out) the gathering of results. Modelled on ripgrep's `Sink`: the core calls;
//! each callback returns `Ok(true)` to go on, `Ok(false)` to stop the run as if the user
//! had asked (what was measured is kept, marked interrupted), or an error, which stops
//! the run and is reported. Sinks never start or time I/O.

use crate::error::Result;
use crate::plan::spec::Spec;
use crate::results::schema::Run;

/// A live view of the repetition in progress.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    /// Seconds since the repetition started, ramp included.
    pub elapsed_s: f64,
    /// Planned length in seconds (ramp + runtime), when time-based.
    pub planned_s: Option<f64>,
    /// Fraction of the planned I/O done, when size-based.
    pub fraction: Option<f64>,
    /// I/Os per second over the last update period.
    pub iops: f64,
    /// Bytes per second over the last update period.
    pub bw_bytes: f64,
    /// Mean latency of the I/Os completed over the last update period, nanoseconds.
    pub lat_mean_ns: f64,
    /// Whether the ramp is still going.
    pub ramping: bool,
    /// Seconds since the run was asked to stop (a signal, a failed job, a sink) or its
    /// time ran out, while the workers have not all returned: I/O still in flight.
    pub stopping_s: Option<f64>,
}

/// Receives what happens while runs are measured. Every method has a default that does
/// nothing and goes on.
pub trait Sink {
    /// Run `index` (0-based) of `of` in a plan is about to start.
    fn run_started(&mut self, _index: usize, _of: usize, _spec: &Spec) -> Result<bool> {
        Ok(true)
    }
    /// Where a plan of several runs stands: when it started, and about how many seconds
    /// of timed runs remain (from the run about to start on).
    fn plan_position(&mut self, _started: std::time::Instant, _left_s: f64) {}
    /// A new file is being laid out: `done` of `total` bytes written (every MiB).
    fn layout(&mut self, _done: u64, _total: u64) {}
    /// The runs about to be measured together (a fio group), after `run_started`: a
    /// label naming them all (`group 2: a, b, c`), for a display to show in place of the
    /// first run's name.
    fn group_started(&mut self, _label: &str) {}
    /// A repetition (1-based `rep` of `of`) is about to start.
    fn rep_started(&mut self, _spec: &Spec, _rep: u32, _of: u32) -> Result<bool> {
        Ok(true)
    }
    /// Every job of the repetition has set up and waits at the gate; the gate opens (time
    /// zero) when this returns. A scaled-out run meets the other ranks here, so that all
    /// start together.
    fn gate_ready(&mut self) -> Result<bool> {
        Ok(true)
    }
    /// The repetition's merged latency histograms (reads, writes), just before
    /// `rep_finished`: what a gathering sink sends on, so percentiles across processes
    /// come from merged histograms.
    fn rep_latencies(
        &mut self,
        _read: &crate::results::stats::LatHist,
        _write: &crate::results::stats::LatHist,
    ) {
    }
    /// Often (every MiB) while the measuring core works on the caller's thread outside a
    /// repetition's run (a `--verify` read-back): a scaled-out run tells the other ranks
    /// it is alive.
    fn alive(&mut self) {}
    /// A few times a second while a repetition runs.
    fn progress(&mut self, _p: &Progress) -> Result<bool> {
        Ok(true)
    }
    /// With `--stonewall`, a few times a second while a repetition runs (`done` None),
    /// and once when this process's jobs have all done their work before anything ended
    /// them (`done`: the seconds since the start). A scaled-out run tells the other ranks
    /// then; while running it answers whether another rank finished first (its name and
    /// seconds), and this process's jobs then stop.
    fn stonewall(&mut self, _done: Option<f64>) -> Option<(String, f64)> {
        None
    }
    /// A repetition finished (or was interrupted); `run` holds every repetition so far,
    /// so a store can save it.
    fn rep_finished(&mut self, _run: &Run) -> Result<bool> {
        Ok(true)
    }
    /// A repetition of runs measured together (the jobs of a fio group) finished; `runs`
    /// holds each, with every repetition so far. The default hands each to
    /// `rep_finished`, and goes on only if every call said so.
    fn group_finished(&mut self, runs: &[Run]) -> Result<bool> {
        let mut go_on = true;
        for run in runs {
            go_on &= self.rep_finished(run)?;
        }
        Ok(go_on)
    }
    /// The summary of the run that just finished over every process taking part, when
    /// this sink gathered one (a scaled-out run: the ranks' aggregate, the same on every
    /// rank); `None` otherwise. A study whose next step depends on what a run measured
    /// (`suite steady`'s rounds) decides on this, so that every rank decides alike.
    fn gathered(&mut self) -> Option<crate::results::schema::Summary> {
        None
    }
}

/// A sink that ignores everything.
#[cfg(test)]
pub(crate) struct Discard;
#[cfg(test)]
impl Sink for Discard {}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn run_started(&mut self, index: usize, of: usize, spec: &Spec) -> Result<bool> {
        (**self).run_started(index, of, spec)
    }
    fn plan_position(&mut self, started: std::time::Instant, left_s: f64) {
        (**self).plan_position(started, left_s)
    }
    fn layout(&mut self, done: u64, total: u64) {
        (**self).layout(done, total)
    }
    fn group_started(&mut self, label: &str) {
        (**self).group_started(label)
    }
    fn rep_started(&mut self, spec: &Spec, rep: u32, of: u32) -> Result<bool> {
        (**self).rep_started(spec, rep, of)
    }
    fn progress(&mut self, p: &Progress) -> Result<bool> {
        (**self).progress(p)
    }
    fn gate_ready(&mut self) -> Result<bool> {
        (**self).gate_ready()
    }
    fn alive(&mut self) {
        (**self).alive()
    }
    fn stonewall(&mut self, done: Option<f64>) -> Option<(String, f64)> {
        (**self).stonewall(done)
    }
    fn rep_latencies(
        &mut self,
        read: &crate::results::stats::LatHist,
        write: &crate::results::stats::LatHist,
    ) {
        (**self).rep_latencies(read, write)
    }
    fn rep_finished(&mut self, run: &Run) -> Result<bool> {
        (**self).rep_finished(run)
    }
    fn group_finished(&mut self, runs: &[Run]) -> Result<bool> {
        (**self).group_finished(runs)
    }
    fn gathered(&mut self) -> Option<crate::results::schema::Summary> {
        (**self).gathered()
    }
}

//! The CPU per I/O of a run's repetitions, as the report's rows and the study tables
//! show it (`report::tables`).

use crate::report::fmt::NONE;
use crate::results::schema::{Repetition, Run};

/// A run's CPU time per I/O, the whole process's and the job threads', mean over the
/// repetitions its figures come from that measured any (see [`RUN_LEGEND`]). fio's output
/// has its job threads' alone: an imported fio run has no process figure (its job
/// threads' stood there, beside iomark's process with its io-wq workers).
pub(super) fn cpu_cells(r: &Run) -> [String; 2] {
    let cell = |f| cpu_mean(r, f).map_or(NONE.to_string(), |v| format!("{v:.0}"));
    let process = match r.fio.is_some() {
        true => NONE.to_string(),
        false => cell(|x| x.cpu.per_io_ns),
    };
    [process, cell(|x| x.cpu.workers.per_io_ns)]
}

/// A CPU figure of a run's repetitions (nanoseconds per I/O), mean over the ones its
/// figures come from that measured it; `None` where none did.
pub(super) fn cpu_mean(r: &Run, f: fn(&Repetition) -> f64) -> Option<f64> {
    let reps = crate::report::compare::used_reps(r).0;
    let v: Vec<f64> = reps.iter().map(|x| f(x)).filter(|v| *v > 0.0).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

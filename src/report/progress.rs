//! The live progress display on stderr: which run of the plan, how far along, the current
//! IOPS, MB/s and mean latency, and for a study the elapsed time and the ETA. It is a
//! [`Sink`] of the measuring core; `indicatif` draws it (terminal width, redraws,
//! clearing). Shown only when stderr is a terminal and not `--quiet`. Never measures.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::Result;
use crate::plan::spec::Spec;
use crate::report::fmt::{fmt_count, fmt_duration, fmt_mbps};
use crate::results::schema::Run;
use crate::results::sink::{Progress, Sink};

/// Draws progress on stderr.
pub struct TermProgress {
    bar: ProgressBar,
    label: String,
    /// A fio group's label, shown in place of its first run's name.
    group: Option<String>,
    run_index: usize,
    runs: usize,
    rep: u32,
    reps: u32,
    /// For a study: when it started and the estimated seconds left from this run on.
    study: Option<(Instant, f64)>,
}

impl TermProgress {
    /// Enabled when stderr is a terminal and `quiet` is off.
    pub fn new(quiet: bool) -> TermProgress {
        let target = if !quiet && std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr_with_hz(4)
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(1000), target);
        bar.set_style(
            ProgressStyle::with_template("{prefix}{msg} [{bar:12}]")
                .expect("a valid template")
                .progress_chars("#>-"),
        );
        TermProgress {
            bar,
            label: String::new(),
            group: None,
            run_index: 1,
            runs: 1,
            rep: 1,
            reps: 1,
            study: None,
        }
    }

    /// For a study: when it started and the estimated seconds left from this run on.
    pub(crate) fn set_study(&mut self, started: Instant, left_s: f64) {
        self.study = Some((started, left_s));
    }

    /// Sets the position in a plan of several runs.
    pub(crate) fn set_run(&mut self, index: usize, of: usize) {
        self.run_index = index;
        self.runs = of;
    }

    fn line(&self, p: &Progress) -> String {
        let done = match (p.planned_s, p.fraction) {
            (Some(total), _) => format!("{:.1}/{:.1} s", p.elapsed_s.min(total), total),
            (None, Some(f)) => format!("{:.0}% {:.1} s", (f * 100.0).min(100.0), p.elapsed_s),
            _ => format!("{:.1} s", p.elapsed_s),
        };
        let figures = if let Some(s) = p.stopping_s.filter(|&s| s >= 1.0) {
            format!("stopping: waiting {s:.0} s for I/O in flight")
        } else if p.ramping {
            "ramp".to_string()
        } else {
            format!(
                "{} IOPS  {}  {}",
                fmt_count(p.iops),
                fmt_mbps(p.bw_bytes),
                crate::units::fmt_ns(p.lat_mean_ns)
            )
        };
        let study = match self.study {
            Some((t0, left)) => format!(
                "  {} elapsed, ETA {}",
                fmt_duration(t0.elapsed().as_secs_f64()),
                fmt_duration((left - p.elapsed_s).max(0.0))
            ),
            None => String::new(),
        };
        format!("{}  {done}  {figures}{study}", self.label)
    }
}

impl Sink for TermProgress {
    fn plan_position(&mut self, started: Instant, left_s: f64) {
        self.set_study(started, left_s);
    }

    fn run_started(&mut self, index: usize, of: usize, _spec: &Spec) -> Result<bool> {
        self.set_run(index + 1, of);
        self.group = None;
        Ok(true)
    }

    fn group_started(&mut self, label: &str) {
        self.group = Some(label.to_string());
    }

    fn rep_started(&mut self, spec: &Spec, rep: u32, of: u32) -> Result<bool> {
        self.label = self.group.clone().unwrap_or_else(|| spec.name());
        self.rep = rep;
        self.reps = of;
        let mut pos = String::new();
        if self.runs > 1 {
            pos.push_str(&format!("[{}/{}] ", self.run_index, self.runs));
        }
        if self.reps > 1 {
            pos.push_str(&format!("rep {}/{} ", self.rep, self.reps));
        }
        self.bar.set_prefix(pos);
        self.bar.reset();
        Ok(true)
    }

    fn layout(&mut self, done: u64, total: u64) {
        if total > 0 {
            self.bar
                .set_position((done as f64 / total as f64 * 1000.0) as u64);
            self.bar.set_message(format!(
                "laying out {}: {:.0}%",
                crate::units::fmt_size(total),
                done as f64 * 100.0 / total as f64
            ));
        }
    }

    fn progress(&mut self, p: &Progress) -> Result<bool> {
        let fraction = match (p.planned_s, p.fraction) {
            (Some(total), _) if total > 0.0 => p.elapsed_s / total,
            (_, Some(f)) => f,
            _ => 0.0,
        };
        self.bar
            .set_position((fraction.clamp(0.0, 1.0) * 1000.0) as u64);
        self.bar.set_message(self.line(p));
        Ok(true)
    }

    fn rep_finished(&mut self, _run: &Run) -> Result<bool> {
        // Cleared, and reset when the next repetition starts.
        self.bar.finish_and_clear();
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress() -> Progress {
        Progress {
            elapsed_s: 1.0,
            planned_s: Some(2.0),
            fraction: None,
            iops: 1000.0,
            bw_bytes: 4096e3,
            lat_mean_ns: 1000.0,
            ramping: false,
            stopping_s: None,
        }
    }

    /// A fio group's line names the group and all its jobs, not its first job's workload;
    /// the next run on its own has its own name again.
    #[test]
    fn a_group_is_named_with_all_its_jobs() {
        let mut t = TermProgress::new(true);
        let spec = Spec::new("null");
        t.run_started(0, 3, &spec).unwrap();
        t.group_started("group 2: a, b, c");
        t.rep_started(&spec, 1, 1).unwrap();
        assert!(
            t.line(&progress())
                .starts_with("group 2: a, b, c  1.0/2.0 s")
        );
        t.run_started(1, 3, &spec).unwrap();
        t.rep_started(&spec, 1, 1).unwrap();
        assert!(t.line(&progress()).starts_with(&spec.name()));
    }
}

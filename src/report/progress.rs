//! A one-line live progress display on stderr: which run of the plan, how far along, and
//! the current IOPS and MB/s. Shown only when stderr is a terminal and not `--quiet`.

use std::io::Write;

use crate::measure::run::{Observer, Progress};
use crate::plan::spec::Spec;
use crate::report::text::{fmt_count, fmt_mbps};
use crate::results::schema::Repetition;

/// Draws progress on stderr.
pub struct TermProgress {
    enabled: bool,
    label: String,
    run_index: usize,
    runs: usize,
    rep: u32,
    reps: u32,
    study: Option<(std::time::Instant, f64)>,
}

impl TermProgress {
    /// Enabled when stderr is a terminal and `quiet` is off.
    pub fn new(quiet: bool) -> TermProgress {
        // Safety: isatty only inspects the descriptor.
        let tty = unsafe { libc::isatty(2) } == 1;
        TermProgress {
            enabled: tty && !quiet,
            label: String::new(),
            run_index: 1,
            runs: 1,
            rep: 1,
            reps: 1,
            study: None,
        }
    }

    /// For a study: when it started and the estimated seconds left from this run on.
    pub fn set_study(&mut self, started: std::time::Instant, left_s: f64) {
        self.study = Some((started, left_s));
    }

    /// Sets the position in a plan of several runs.
    pub fn set_run(&mut self, index: usize, of: usize) {
        self.run_index = index;
        self.runs = of;
    }

    fn clear(&self) {
        if self.enabled {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        }
    }
}

impl Observer for TermProgress {
    fn rep_started(&mut self, spec: &Spec, rep: u32, of: u32) {
        self.label = spec.name();
        self.rep = rep;
        self.reps = of;
    }

    fn progress(&mut self, p: &Progress) {
        if !self.enabled {
            return;
        }
        let mut pos = String::new();
        if self.runs > 1 {
            pos.push_str(&format!("[{}/{}] ", self.run_index, self.runs));
        }
        if self.reps > 1 {
            pos.push_str(&format!("rep {}/{} ", self.rep, self.reps));
        }
        let done = match (p.planned_s, p.fraction) {
            (Some(total), _) => format!("{:.1}/{:.1} s", p.elapsed_s.min(total), total),
            (None, Some(f)) => format!("{:.0}% {:.1} s", (f * 100.0).min(100.0), p.elapsed_s),
            _ => format!("{:.1} s", p.elapsed_s),
        };
        let study = match self.study {
            Some((t0, left)) => {
                let filled = (self.run_index - 1) * 12 / self.runs.max(1);
                format!(
                    "  [{}{}] {} elapsed, ETA {}",
                    "#".repeat(filled),
                    "-".repeat(12 - filled),
                    crate::report::text::fmt_duration(t0.elapsed().as_secs_f64()),
                    crate::report::text::fmt_duration((left - p.elapsed_s).max(0.0))
                )
            }
            None => String::new(),
        };
        eprint!(
            "\r\x1b[2K{pos}{}  {done}  {}{} IOPS  {}  {}{study}",
            self.label,
            if p.ramping { "ramp " } else { "" },
            fmt_count(p.iops),
            fmt_mbps(p.bw_bytes),
            crate::units::fmt_ns(p.lat_mean_ns)
        );
        let _ = std::io::stderr().flush();
    }

    fn rep_finished(&mut self, _spec: &Spec, _rep: &Repetition) {
        self.clear();
    }
}

//! Resolution of the pacing options: `--rate`, `--rate-iops`, their minimums
//! (`--rate-min`, `--rate-iops-min`, `--rate-cycle`), `--thinktime`, the random
//! distribution, `--random-run`, `--hole`, `--startdelay` (part of `resolve`).

use crate::error::{Error, Result};
use crate::plan::distribution::Distribution;
use crate::plan::options::RunOptions;
use crate::plan::resolve::{count_opt, duration_opt, size_opt};
use crate::plan::spec::Spec;

impl RunOptions {
    /// `--rate-min`, `--rate-iops-min` (greater than zero, and not above a cap of the same
    /// kind) and `--rate-cycle` (with one of them).
    fn min_rates(&self, spec: &mut Spec) -> Result<()> {
        let zero = |opt: &str| {
            Error::usage(format!(
                "--{opt} 0 asks for no minimum; give a rate greater than zero, or leave --{opt} out"
            ))
        };
        if let Some(t) = self.text("rate-min") {
            let b = size_opt("--rate-min", t.trim().trim_end_matches("/s"))?;
            spec.rate_min_bps = Some(Some(b).filter(|b| *b > 0).ok_or_else(|| zero("rate-min"))?);
        }
        if let Some(t) = self.text("rate-iops-min") {
            let n: u64 = count_opt("--rate-iops-min", t, "a whole number of I/Os per second")?;
            spec.rate_iops_min = Some(
                Some(n)
                    .filter(|n| *n > 0)
                    .ok_or_else(|| zero("rate-iops-min"))?,
            );
        }
        for (min, cap, name) in [
            (spec.rate_min_bps, spec.rate_bps, "rate"),
            (spec.rate_iops_min, spec.rate_iops, "rate-iops"),
        ] {
            if let (Some(m), Some(c)) = (min, cap)
                && m > c
            {
                // In the units the options were given in (was "20971520 is above 10485760").
                let (m, c) = match name {
                    "rate" => (
                        format!("{}/s", crate::units::fmt_size(m)),
                        format!("{}/s", crate::units::fmt_size(c)),
                    ),
                    _ => (m.to_string(), c.to_string()),
                };
                return Err(Error::usage(format!(
                    "--{name}-min {m} is above --{name} {c}: the cap would fail every run; lower the minimum or raise the cap"
                )));
            }
        }
        if let Some(t) = self.text("rate-cycle") {
            if spec.rate_min_bps.is_none() && spec.rate_iops_min.is_none() {
                return Err(Error::usage(
                    "--rate-cycle is the cycle of --rate-min and --rate-iops-min; give one of them, or drop it",
                ));
            }
            let ms = (duration_opt("--rate-cycle", t)? * 1e3).round() as u64;
            if ms == 0 {
                return Err(Error::usage(format!(
                    "--rate-cycle {t}: give a cycle of at least 1ms (e.g. 500ms)"
                )));
            }
            spec.rate_cycle_ms = Some(ms);
        }
        Ok(())
    }

    /// `--rate` and `--rate-iops` (greater than zero when given), `--thinktime`.
    pub(super) fn pacing(&self, spec: &mut Spec) -> Result<()> {
        let zero = |opt: &str| {
            Error::usage(format!(
                "--{opt} 0 would never issue an I/O; give a cap greater than zero, or leave --{opt} out for none"
            ))
        };
        if let Some(t) = self.text("rate") {
            let b = size_opt("--rate", t.trim().trim_end_matches("/s"))?;
            spec.rate_bps = Some(b)
                .filter(|b| *b > 0)
                .ok_or_else(|| zero("rate"))
                .map(Some)?;
        }
        if let Some(t) = self.text("rate-iops") {
            let n: u64 = count_opt("--rate-iops", t, "a whole number of I/Os per second")?;
            spec.rate_iops = Some(n)
                .filter(|n| *n > 0)
                .ok_or_else(|| zero("rate-iops"))
                .map(Some)?;
        }
        self.min_rates(spec)?;
        if let Some(t) = self.text("thinktime") {
            // A bare 0 is no time in any unit (0s, --ramp 0 and --spin-wait 0 are taken).
            let zero = t.trim().parse::<f64>().is_ok_and(|v| v == 0.0);
            if !zero && t.trim().chars().all(|c| c.is_ascii_digit() || c == '.') {
                return Err(Error::usage(format!(
                    "--thinktime {t}: give a unit (e.g. 100us, 2ms); fio's bare number is microseconds"
                )));
            }
            let us = (duration_opt("--thinktime", t)? * 1e6).round() as u64;
            spec.thinktime_us = Some(us).filter(|us| *us > 0);
        }
        if let Some(t) = self.text("random-distribution") {
            spec.random_distribution = Distribution::parse(t)?;
            if !spec.random_distribution.is_uniform() && !spec.rw.is_random() {
                return Err(Error::usage(format!(
                    "--random-distribution spreads random offsets; --rw {} is sequential: drop it or use randread, randwrite or randrw",
                    spec.rw.name()
                )));
            }
        }
        if let Some(t) = self.text("random-run") {
            let n: u64 = count_opt("--random-run", t, "a whole number of I/Os")?;
            if n == 0 {
                return Err(Error::usage(format!(
                    "--random-run {t}: give at least 1 I/O per seek"
                )));
            }
            if !spec.rw.is_random() {
                return Err(Error::usage(format!(
                    "--random-run makes runs of I/Os between random seeks; --rw {} is sequential: drop it or use randread, randwrite or randrw",
                    spec.rw.name()
                )));
            }
            spec.random_run = Some(n);
        }
        spec.rw_sequencer_identical = self.text("rw-sequencer") == Some("identical");
        if let Some(t) = self.text("hole") {
            if spec.rw.is_random() {
                return Err(Error::usage(format!(
                    "--hole leaves gaps between sequential I/Os; --rw {} is random: drop it or use read, write or rw",
                    spec.rw.name()
                )));
            }
            spec.hole = Some(size_opt("--hole", t)?).filter(|h| *h > 0);
        }
        if let Some(t) = self.text("startdelay") {
            match t.split_once('-') {
                None => spec.startdelay_s = duration_opt("--startdelay", t)?,
                Some((lo, hi)) => {
                    let (lo, hi) = (
                        duration_opt("--startdelay", lo)?,
                        duration_opt("--startdelay", hi)?,
                    );
                    if lo > hi {
                        return Err(Error::usage(format!(
                            "--startdelay {t}: the range's low end is above its high end; give LOW-HIGH (e.g. 1s-3s)"
                        )));
                    }
                    spec.startdelay_s = lo;
                    spec.startdelay_max_s = Some(hi).filter(|h| *h > lo);
                }
            }
        }
        if let Some(t) = self.text("thinktime-blocks") {
            let n: u32 = count_opt("--thinktime-blocks", t, "a whole number of I/Os")?;
            if n == 0 {
                return Err(Error::usage(
                    "--thinktime-blocks 0: give the I/Os issued between pauses, at least 1",
                ));
            }
            spec.thinktime_blocks = Some(n);
        }
        self.think_more(spec)
    }

    /// fio's `time_based` with a runtime: `--time-based` runs the whole `--runtime`, going
    /// over the span as often as it takes, so an `--io-size` goes (with a note, as fio
    /// ignores its io_size then); `--time-based=0` stops after one pass over the span or
    /// the runtime, whichever comes first (fio's default), unless `--io-size` says how much.
    pub(super) fn time_based(&self, spec: &mut Spec) -> Option<String> {
        spec.runtime_s?;
        match (self.on("time-based"), self.given("time-based")) {
            (true, _) => {
                let io = self
                    .text("io-size")
                    .filter(|_| spec.io_size.is_some() || spec.io_spans.is_some())?;
                spec.io_size = None;
                spec.io_spans = None;
                Some(format!(
                    "--io-size {io} does nothing with --time-based: the run lasts its --runtime, going over the span as often as it takes (as fio's time_based ignores io_size)"
                ))
            }
            (false, true) => {
                if spec.io_size.is_none() && spec.io_spans.is_none() {
                    spec.io_spans = Some(1.0);
                }
                None
            }
            (false, false) => None,
        }
    }

    /// `--thinktime-spin` (at most the pause), `--thinktime-blocks-type`,
    /// `--thinktime-iotime` (greater than zero).
    fn think_more(&self, spec: &mut Spec) -> Result<()> {
        let think = spec.thinktime_us.unwrap_or(0);
        if let Some(t) = self.text("thinktime-spin") {
            let us = (duration_opt("--thinktime-spin", t)? * 1e6).round() as u64;
            if us > think {
                return Err(Error::usage(format!(
                    "--thinktime-spin {t} is longer than the --thinktime pause ({think}us); spin at most the whole pause"
                )));
            }
            spec.thinktime_spin_us = Some(us).filter(|us| *us > 0);
        }
        spec.thinktime_on_issue = self.text("thinktime-blocks-type") == Some("issue");
        if let Some(t) = self.text("thinktime-iotime") {
            let us = (duration_opt("--thinktime-iotime", t)? * 1e6).round() as u64;
            if us == 0 {
                return Err(Error::usage(format!(
                    "--thinktime-iotime {t}: give the time of I/O between pauses (e.g. 9s)"
                )));
            }
            spec.thinktime_iotime_us = Some(us);
        }
        think_allows(spec)
    }
}

/// The I/Os a job issues between think-time pauses, when a count ends its batches (with
/// `--thinktime-iotime` alone the time of I/O does).
fn think_batch(spec: &Spec) -> Option<u32> {
    spec.thinktime_us?;
    match (spec.thinktime_blocks, spec.thinktime_iotime_us) {
        (None, Some(_)) => None,
        (b, _) => Some(b.unwrap_or(1)),
    }
}

/// Refuses a `--rate-iops-min`/`--rate-min` the think time alone makes impossible: a job
/// pauses `--thinktime` after every `--thinktime-blocks` I/Os, so it cannot do more than
/// that many I/Os per pause, however fast the target.
fn think_allows(spec: &Spec) -> Result<()> {
    let (Some(n), Some(us)) = (think_batch(spec), spec.thinktime_us) else {
        return Ok(());
    };
    let iops = n as f64 * 1e6 / us as f64;
    let bytes = iops * spec.buf_bs() as f64;
    let pause = match us % 1000 {
        0 => format!("{}ms", us / 1000),
        _ => format!("{us}us"),
    };
    let think = format!(
        "--thinktime {pause} after every {n} I/O{}",
        if n == 1 { "" } else { "s" }
    );
    let fix = "lower the minimum, shorten --thinktime or raise --thinktime-blocks";
    if let Some(m) = spec.rate_iops_min.filter(|m| *m as f64 > iops) {
        return Err(Error::usage(format!(
            "--rate-iops-min {m} cannot be met: {think} lets a job do at most {iops:.0} IOPS; {fix}"
        )));
    }
    if let Some(m) = spec.rate_min_bps.filter(|m| *m as f64 > bytes) {
        return Err(Error::usage(format!(
            "--rate-min {}/s cannot be met: {think} lets a job move at most {}/s; {fix}",
            crate::units::fmt_size(m),
            crate::units::fmt_size(bytes as u64)
        )));
    }
    Ok(())
}

/// A note when think time keeps the queue below `--qd`: a job stops issuing once a batch
/// of `--thinktime-blocks` I/Os has completed and drains the queue before each pause (as
/// fio's), so the queue seldom holds more than the batch.
pub(crate) fn think_depth(spec: &Spec) -> Option<String> {
    let n = think_batch(spec)?;
    (spec.qd > n).then(|| {
        format!(
            "--qd {q} with --thinktime after every {n} I/O{s}: each job stops issuing once {n} I/O{s} ha{v} completed and drains its queue before the pause (as fio does), so the depth in effect is nearer {n} than {q}; give --thinktime-blocks {q} to keep {q} in flight",
            q = spec.qd,
            s = if n == 1 { "" } else { "s" },
            v = if n == 1 { "s" } else { "ve" },
        )
    })
}

/// A note when a minimum rate can never be checked: the run is shorter than one cycle
/// (`--rate-cycle`, 1 s by default), and a minimum is checked over whole cycles only.
pub(crate) fn unchecked_minimum(spec: &Spec) -> Option<String> {
    let runtime = spec.runtime_s?;
    let flag = match (spec.rate_iops_min, spec.rate_min_bps) {
        (Some(_), Some(_)) => "--rate-iops-min and --rate-min are",
        (Some(_), None) => "--rate-iops-min is",
        (None, Some(_)) => "--rate-min is",
        (None, None) => return None,
    };
    let cycle_ms = spec.rate_cycle_ms.unwrap_or(1000);
    (cycle_ms as f64 / 1e3 > runtime).then(|| {
        format!(
            "{flag} checked over each whole {cycle_ms}ms cycle (--rate-cycle), and the {runtime}s --runtime is shorter than one: never checked; lengthen the run or shorten the cycle"
        )
    })
}

/// A note when `--rate` is so low against the block size and the runtime that the block
/// each job issues at once (a cap paces the I/Os after the first) is more than a tenth of
/// all the cap allows in the window: the figures then exceed the cap by that much.
pub(crate) fn coarse_rate(spec: &Spec) -> Option<String> {
    let (rate, secs) = (spec.rate_bps?, spec.runtime_s?);
    let bs = spec.bs_mix.as_ref().map_or(spec.bs, |m| m.min());
    let allowed = rate as f64 * secs;
    if (bs as f64) * 10.0 <= allowed {
        return None;
    }
    // What one job can move: the first block at once, then one per bs/rate seconds.
    let blocks = (allowed / bs as f64).floor() + 1.0;
    let size = crate::units::fmt_size;
    Some(format!(
        "--rate {}/s lets each job move {} in {secs} s, less than ten {} blocks: its first I/O goes at once and only the ones after it are paced, so the figures can be up to {:.1}x the cap; run longer or raise the cap",
        size(rate),
        size(allowed as u64),
        size(bs),
        blocks * bs as f64 / allowed
    ))
}

//! fio's `rate` and `rate_iops` → iomark's `--rate` and `--rate-iops`, `rate_min` and
//! `rate_iops_min` → `--rate-min` and `--rate-iops-min` (`rate_cycle` → `--rate-cycle`),
//! and `thinktime` (`thinktime_blocks`) → `--thinktime` (`--thinktime-blocks`). The caps
//! and minimums: per job, the side of a `read,write` value that the pattern uses. fio
//! holds each direction on its own and iomark the job's reads and writes together: a
//! mixed job's values are taken as their sum when they are in the proportion of the mix
//! (as `--as-fio` writes them), otherwise unsupported. `0` is none, as in fio. The other
//! think-time options (`thinktime_spin`, `thinktime_blocks_type`, `thinktime_iotime`)
//! map to iomark's of the same name.

use super::map::Ctx;
use super::units::fio_size;
use crate::error::{Error, Result};

/// `rate` and `rate_iops` of a job whose pattern is `pattern`.
pub(super) fn rates(c: &mut Ctx, pattern: &str) -> Result<()> {
    let keys = [
        ("rate", "rate"),
        ("rate_iops", "rate-iops"),
        ("rate_min", "rate-min"),
        ("rate_iops_min", "rate-iops-min"),
    ];
    for (key, ours) in keys {
        let Some(e) = c.get(key).cloned() else {
            continue;
        };
        let text = e.value.clone().unwrap_or_default();
        let sides: Vec<&str> = text.split(',').map(str::trim).collect();
        let read = sides[0];
        let write = sides.get(1).copied().unwrap_or(read);
        let trim = sides.get(2).copied().unwrap_or(write);
        let bytes = key == "rate" || key == "rate_min";
        let num = |side: &str| match bytes {
            true => fio_size(side, c.kb_base),
            _ => side.parse::<u64>().ok(),
        };
        let (side, n) = match pattern {
            "write" | "randwrite" => (write, num(write)),
            "read" | "randread" => (read, num(read)),
            "trim" | "randtrim" => (trim, num(trim)),
            "trimwrite" if trim == write => (write, num(write).map(|w| 2 * w)),
            "trimwrite" => {
                c.refuse(key, "fio caps trims and writes each on its own, iomark a trimwrite job's trims and writes together (equal caps are taken as their sum)");
                continue;
            }
            _ => match (num(read), num(write)) {
                (Some(r), Some(w)) if proportional(c, r, w) => (read, Some(r + w)),
                _ => {
                    c.refuse(key, "fio caps reads and writes each on its own, iomark a mixed job's reads and writes together (caps in the mix's proportion are taken as their sum)");
                    continue;
                }
            },
        };
        // fio's rate_iops with a block-size mix caps bytes: N x the smallest size (its
        // docs); iomark's caps I/Os (1000 IOPS of 4k/64k reads against fio's 123).
        let smallest = (!bytes).then(|| mix_min(c)).flatten();
        match (n, smallest) {
            (Some(0), _) => {}
            (Some(n), Some(min)) => {
                let as_bytes = if key == "rate_iops" {
                    "rate"
                } else {
                    "rate-min"
                };
                c.set(as_bytes, (n * min).to_string());
                c.job.notes.push(format!(
                    "{key}={n} with a block-size mix: fio caps the bytes at {n} x its smallest size ({}), so it runs as --{as_bytes} {}/s",
                    crate::units::fmt_size(min),
                    crate::units::fmt_size(n * min)
                ));
            }
            (Some(n), None) => c.set(ours, n.to_string()),
            (None, _) if side.is_empty() => {}
            (None, _) => {
                return Err(Error::usage(format!(
                    "{}: {key}={text}: '{side}' is not a number (e.g. {key}={})",
                    e.at,
                    if bytes { "10m" } else { "500" }
                )));
            }
        }
    }
    cycle(c)?;
    think(c)
}

/// The smallest block size of the job's mix (`--bssplit`, `--bsrange` as mapped), if it
/// has one.
fn mix_min(c: &Ctx) -> Option<u64> {
    let (split, range) = (c.job.opt("bssplit"), c.job.opt("bsrange"));
    let mix = crate::plan::bsmix::BsMix::of_options(split, range, crate::plan::resolve::size_opt);
    mix.ok().flatten().map(|m| m.min())
}

/// `rate_cycle` (milliseconds) for a job with a minimum rate; without one, fio averages
/// its caps over it, and iomark's caps are a token bucket (said in a note).
fn cycle(c: &mut Ctx) -> Result<()> {
    let Some(e) = c.get("rate_cycle").cloned() else {
        return Ok(());
    };
    let v = e.value.clone().unwrap_or_default();
    let ms: u64 = v.trim().parse().map_err(|_| {
        Error::usage(format!(
            "{}: rate_cycle={v} is not a whole number of milliseconds",
            e.at
        ))
    })?;
    if c.job
        .opts
        .iter()
        .any(|(k, _)| k == "rate-min" || k == "rate-iops-min")
    {
        c.set("rate-cycle", format!("{ms}ms"));
    } else {
        let note = format!(
            "rate_cycle={ms}: fio averages its caps over it; iomark's caps are a token bucket (50 ms of credit), and it has no minimum rate here to check"
        );
        c.job.notes.push(note);
    }
    Ok(())
}

/// `thinktime` (a bare number is microseconds, as in fio; `0` is none) and, with it,
/// `thinktime_blocks`, `thinktime_spin` (microseconds when bare), `thinktime_blocks_type`
/// and `thinktime_iotime` (seconds when bare).
fn think(c: &mut Ctx) -> Result<()> {
    let Some(us) = micros(c, "thinktime", 1e-6)? else {
        return Ok(());
    };
    if us.round() < 1.0 {
        return Ok(());
    }
    c.set("thinktime", format!("{}us", us.round() as u64));
    if let Some(b) = c.value("thinktime_blocks").map(str::to_string) {
        c.set("thinktime-blocks", b);
    }
    if let Some(spin) = micros(c, "thinktime_spin", 1e-6)?.filter(|s| s.round() >= 1.0) {
        c.set("thinktime-spin", format!("{}us", spin.round() as u64));
    }
    if let Some(t) = c.value("thinktime_blocks_type").map(str::to_string) {
        c.set("thinktime-blocks-type", t);
    }
    if let Some(io) = micros(c, "thinktime_iotime", 1.0)?.filter(|s| s.round() >= 1.0) {
        c.set("thinktime-iotime", format!("{}us", io.round() as u64));
    }
    Ok(())
}

/// A time option in microseconds; a bare number is in `bare` seconds (fio's default unit
/// for that option).
fn micros(c: &Ctx, key: &str, bare: f64) -> Result<Option<f64>> {
    let Some(e) = c.get(key).cloned() else {
        return Ok(None);
    };
    let v = e.value.clone().unwrap_or_default();
    let v = v.trim();
    let us = if v.chars().all(|ch| ch.is_ascii_digit()) {
        v.parse::<f64>().ok().map(|n| n * bare * 1e6)
    } else {
        super::units::fio_time(v).map(|s| s * 1e6)
    };
    us.map(Some).ok_or_else(|| {
        Error::usage(format!(
            "{}: {key}={v} is not a time (a number, or e.g. 2ms)",
            e.at
        ))
    })
}

/// `random_distribution`: `random`, `zipf:θ`, `pareto:h`, `normal:σ` (each with an
/// optional center), `zoned:…` and `zoned_abs:…` (sizes in fio's units, written as bytes)
/// for a random pattern (fio ignores it for a sequential one, and so does iomark, with a
/// note). fio's `,`-separated sets for reads, writes and trims are taken when they are
/// equal (iomark has one distribution per job).
pub(super) fn distribution(c: &mut Ctx, pattern: &str) -> Result<()> {
    let Some(d) = c.value("random_distribution").map(str::to_string) else {
        return Ok(());
    };
    let sets: Vec<&str> = d
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if sets.windows(2).any(|w| w[0] != w[1]) {
        let why = "iomark has one distribution for a job's reads and writes";
        c.refuse("random_distribution", why);
        return Ok(());
    }
    let Some(mut d) = sets.first().map(|s| s.to_string()) else {
        return Ok(());
    };
    if d == "random" {
        return Ok(());
    }
    if let Some(zones) = d.strip_prefix("zoned_abs:") {
        let at = c
            .get("random_distribution")
            .map(|e| e.at.clone())
            .unwrap_or_default();
        let mut out = vec![];
        for z in zones.split(':') {
            let (a, size) = z.split_once('/').unwrap_or((z, ""));
            let bytes = match size.trim() {
                "" => String::new(),
                s => fio_size(s, c.kb_base)
                    .ok_or_else(|| {
                        Error::usage(format!(
                            "{at}: random_distribution={d}: '{s}' is not a size (e.g. 10g)"
                        ))
                    })?
                    .to_string(),
            };
            out.push(format!("{a}/{bytes}"));
        }
        d = format!("zoned_abs:{}", out.join(":"));
    }
    if pattern.starts_with("rand") {
        c.set("random-distribution", d);
    } else {
        let note = format!(
            "random_distribution={d} applies to random offsets; fio ignores it for rw={pattern}, and so does iomark"
        );
        c.job.notes.push(note);
    }
    Ok(())
}

/// `rw`'s `:N` suffix: a random pattern seeks every N I/Os (`--random-run`; with fio's
/// default `rw_sequencer=sequential` the others follow on, with `identical` they repeat
/// the offset: `--rw-sequencer identical`), a sequential one leaves N bytes (fio's
/// units) between I/Os (`--hole`).
pub(super) fn rw_suffix(c: &mut Ctx, pattern: &str, n: &str) -> Result<()> {
    let n = n.trim();
    let identical = sequencer(c)?;
    let runs = pattern.starts_with("rand") && n.parse::<u64>().is_ok_and(|r| r > 1);
    if identical && runs {
        c.set("rw-sequencer", "identical");
    } else if identical {
        let note = format!(
            "rw_sequencer=identical repeats the offsets of a random pattern's :N runs; rw={pattern}{} has none, so it changes nothing, as in fio",
            if n.is_empty() {
                String::new()
            } else {
                format!(":{n}")
            }
        );
        c.job.notes.push(note);
    }
    if n.is_empty() {
        return Ok(());
    }
    let at = c.get("rw").map(|e| e.at.clone()).unwrap_or_default();
    let bad = || Error::usage(format!("{at}: rw={pattern}:{n}: '{n}' is not a number"));
    if pattern.starts_with("rand") {
        let runs: u64 = n.parse().map_err(|_| bad())?;
        if runs > 1 {
            c.set("random-run", runs.to_string());
        }
    } else {
        let hole = fio_size(n, c.kb_base).ok_or_else(bad)?;
        if hole > 0 {
            c.set("hole", hole.to_string());
        }
    }
    Ok(())
}

/// `rw_sequencer`: whether it is `identical` (`sequential` is fio's default and
/// iomark's).
fn sequencer(c: &Ctx) -> Result<bool> {
    let Some(e) = c.get("rw_sequencer") else {
        return Ok(false);
    };
    match e.value.as_deref().map(str::trim) {
        Some("identical") => Ok(true),
        Some("sequential") => Ok(false),
        other => Err(Error::usage(format!(
            "{}: rw_sequencer={}: fio's sequencers are sequential and identical",
            e.at,
            other.unwrap_or_default()
        ))),
    }
}

/// Whether caps `r` (reads) and `w` (writes) are in the job's mix proportion (within one
/// unit each, as `--as-fio` rounds them): then fio's two caps bind together, as one cap
/// of `r + w` would. Both zero (no cap) counts too.
fn proportional(c: &Ctx, r: u64, w: u64) -> bool {
    let pct = |k: &str| c.value(k).and_then(|v| v.parse::<u64>().ok());
    let read = pct("rwmixread")
        .or_else(|| pct("rwmixwrite").map(|w| 100 - w.min(100)))
        .unwrap_or(50);
    let total = r + w;
    (r == 0 && w == 0) || (total * read / 100).abs_diff(r) <= 1 && r > 0 && w > 0
}

/// `startdelay=LOW-HIGH` (seconds when bare, as in fio): `--startdelay LOWs-HIGHs`.
pub(super) fn startdelay_range(c: &mut Ctx, v: &str) -> Result<()> {
    let at = c
        .get("startdelay")
        .map(|e| e.at.clone())
        .unwrap_or_default();
    let (lo, hi) = v.split_once('-').unwrap_or((v, v));
    let secs = |s: &str| {
        super::units::fio_time(s).ok_or_else(|| {
            Error::usage(format!(
                "{at}: startdelay={v}: '{s}' is not a time (e.g. startdelay=1-3 or 500ms-2s)"
            ))
        })
    };
    let (lo, hi) = (secs(lo)?, secs(hi)?);
    c.set("startdelay", format!("{lo}s-{hi}s"));
    Ok(())
}

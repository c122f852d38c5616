//! A fio job's options → iomark's workload: the pattern, the block size and the spec.

use super::Opts;
use crate::plan::bsmix::{BsMix, WriteBs};
use crate::plan::data::DataSpec;
use crate::plan::fio_job::units::fio_size;
use crate::plan::spec::{EngineKind, Rw, Spec};
use crate::results::schema::DirStats;

/// fio's `rw` as iomark's pattern; `None` for a pattern iomark does not have.
pub(super) fn job_rw(rw_s: &str) -> Option<Rw> {
    // "randread:8" (fio's sequential-skip suffix) names the same pattern.
    let rw_s = rw_s.split(':').next().unwrap_or(rw_s);
    Some(match rw_s {
        "read" => Rw::Read,
        "write" => Rw::Write,
        "randread" => Rw::RandRead,
        "randwrite" => Rw::RandWrite,
        "rw" | "readwrite" => Rw::Rw,
        "randrw" => Rw::RandRw,
        "trim" => Rw::Trim,
        "randtrim" => Rw::RandTrim,
        "trimwrite" => Rw::TrimWrite,
        _ => return None,
    })
}

/// An average transfer as the labels write sizes: "18.7k", "4k", "1.5m", "900".
fn average_words(a: u64) -> String {
    match [(30, "g"), (20, "m"), (10, "k")]
        .iter()
        .find(|(s, _)| a >= 1 << s)
    {
        Some(&(shift, unit)) if !a.is_multiple_of(1 << shift) => {
            format!("{:.1}{unit}", a as f64 / (1u64 << shift) as f64)
        }
        _ => crate::units::fmt_size_short(a),
    }
}

/// The block sizes as fio was told (label) and the one size `spec.bs` keeps: the
/// average transfer (bytes ÷ I/Os of the direction that did most) when sizes vary
/// (`bssplit`, `bsrange`, read,write pairs), else the size.
pub(super) fn job_bs(opts: &Opts, kb: u64, read: &DirStats, write: &DirStats) -> (String, u64) {
    let main = if read.ios >= write.ios { read } else { write };
    let average = (main.ios > 0).then(|| (main.bytes as f64 / main.ios as f64).round() as u64);
    let avg_label = |a: Option<u64>| {
        a.map_or(String::new(), |a| {
            format!(" (average {})", average_words(a))
        })
    };
    if let Some(split) = opts.get("bssplit") {
        return (
            format!("bssplit {split}{}", avg_label(average)),
            average.unwrap_or(4096),
        );
    }
    if let Some(range) = opts.get("bsrange").or_else(|| opts.get("blocksize_range")) {
        return (
            format!("bsrange {range}{}", avg_label(average)),
            average.unwrap_or(4096),
        );
    }
    let given = opts.get("bs").or_else(|| opts.get("blocksize"));
    let list: Vec<Option<u64>> = given
        .map(|s| s.split(',').map(|x| fio_size(x, kb)).collect())
        .unwrap_or_default();
    let r = list.first().copied().flatten().unwrap_or(4096);
    let w = list.get(1).copied().flatten().unwrap_or(r);
    if r != w {
        let pair = format!(
            "{},{}",
            crate::units::fmt_size_short(r),
            crate::units::fmt_size_short(w)
        );
        let bs = if read.ios >= write.ios && (read.ios > 0 || write.ios == 0) {
            r
        } else {
            w
        };
        return (pair, bs);
    }
    (crate::units::fmt_size_short(r), r)
}

/// fio's `bssplit` or `bsrange` as iomark's block-size mix, so that an imported job pairs
/// in `compare` with an iomark run of the same mix: the side (read, write) of the
/// direction that did most, or a mixed job's reads' side; `None` when the job gives
/// neither or iomark cannot express it.
pub(super) fn job_bs_mix(opts: &Opts, kb: u64, rw: Option<Rw>, reads_most: bool) -> Option<BsMix> {
    let (text, split) = mix_text(opts)?;
    let (read, write) = two_sides(text);
    let side = match rw.is_some_and(Rw::is_mixed) || reads_most {
        true => read,
        false => write,
    };
    mix_side(side, split, kb)
}

/// A mixed job's writes' sizes when they differ from its reads' (fio's `bs=4k,64k`, or
/// the sides of `bssplit`/`bsrange`), as iomark's `--write-bs`; with the reads' size
/// when both sides are one size each.
pub(super) fn job_write_bs(opts: &Opts, kb: u64, rw: Option<Rw>) -> Option<(Option<u64>, WriteBs)> {
    if !rw.is_some_and(Rw::is_mixed) {
        return None;
    }
    if let Some((text, split)) = mix_text(opts) {
        let (read, write) = two_sides(text);
        let (r, w) = (mix_side(read, split, kb)?, mix_side(write, split, kb)?);
        return (r != w).then(|| (None, WriteBs::of(w.max(), Some(w))));
    }
    let text = opts.get("bs").or_else(|| opts.get("blocksize"))?;
    let (read, write) = two_sides(text);
    let (r, w) = (fio_size(read, kb)?, fio_size(write, kb)?);
    (r != w).then_some((Some(r), WriteBs { bs: w, mix: None }))
}

/// The text of `bssplit` (true) or `bsrange` (false).
fn mix_text<'a>(opts: &'a Opts<'a>) -> Option<(&'a str, bool)> {
    match opts.get("bssplit") {
        Some(t) => Some((t, true)),
        None => Some((
            opts.get("bsrange")
                .or_else(|| opts.get("blocksize_range"))?,
            false,
        )),
    }
}

/// The read and write sides of a `read,write` value (a side not given takes the one
/// before it).
fn two_sides(text: &str) -> (&str, &str) {
    let sides: Vec<&str> = text.split(',').map(str::trim).collect();
    (sides[0], sides.get(1).copied().unwrap_or(sides[0]))
}

/// One side of `bssplit` (`split`) or `bsrange` as a mix iomark can run.
fn mix_side(side: &str, split: bool, kb: u64) -> Option<BsMix> {
    let size = |s: &str| fio_size(s, kb).ok_or(crate::error::Error::usage("not a size"));
    let mix = if split {
        BsMix::parse_split(side, size)
    } else {
        BsMix::parse_range(side, size)
    };
    mix.ok().filter(|m| m.validate(false).is_ok())
}

/// The workload of a job, from its options (the job's own, else the global ones).
pub(super) fn job_spec(name: &str, opts: &Opts, rw: Option<Rw>, bs: u64, kb: u64) -> Spec {
    let rw = rw.unwrap_or(Rw::Read);
    let mut spec = match opts.get("filename") {
        Some(f) => Spec::new(named_file(f, opts)),
        None => Spec::new(own_files(name, opts)),
    };
    spec.rw = rw;
    spec.rwmixread = opts
        .get("rwmixread")
        .and_then(|s| s.parse().ok())
        .or_else(|| {
            opts.get("rwmixwrite")
                .and_then(|s| s.parse::<u8>().ok())
                .map(|w| 100u8.saturating_sub(w))
        })
        .unwrap_or(50);
    spec.rwmixread = rw.read_pct(spec.rwmixread);
    spec.bs = bs;
    spec.qd = opts
        .get("iodepth")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    spec.jobs = opts
        .get("numjobs")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    spec.size = opts.get("size").and_then(|s| fio_size(s, kb));
    spec.offset = opts
        .get("offset")
        .and_then(|s| fio_size(s, kb))
        .unwrap_or(0);
    // fio says direct I/O two ways: direct=1, or buffered=0.
    spec.direct = opts.flag("direct") == Some(true) || opts.flag("buffered") == Some(false);
    let engine = opts.get("ioengine").unwrap_or("psync");
    spec.engine = EngineKind::parse(engine).unwrap_or(EngineKind::Psync);
    spec.runtime_s = opts
        .get("runtime")
        .and_then(|s| crate::units::parse_duration(s).ok())
        .map(|d| d.as_secs_f64());
    spec.data = DataSpec::default();
    spec
}

/// `directory`'s folders (fio's `:` list), none when unset.
fn directories<'a>(opts: &Opts<'a>) -> Vec<&'a str> {
    let dirs = opts.get("directory").unwrap_or("").split(':');
    dirs.filter(|d| !d.is_empty()).collect()
}

/// A job's `filename` where fio opens it: in `directory`'s first folder when it has one
/// (fio 3.33 puts even an absolute name there), a list of files (`a:b`) as written.
fn named_file(f: &str, opts: &Opts) -> String {
    match directories(opts).first() {
        Some(d) if !f.contains(':') => {
            format!("{}/{}", d.trim_end_matches('/'), f.trim_start_matches('/'))
        }
        _ => f.to_string(),
    }
}

/// The files fio made for a job without `filename`, named as fio names them:
/// `filename_format` (`$jobname.$jobnum.$filenum` by default) for each copy (`numjobs`)
/// and file (`nrfiles`), in `directory` (several folders: copy j's files in the j-th,
/// cycling, as fio spreads them); up to 4 named, more as the first and last with how
/// many.
fn own_files(name: &str, opts: &Opts) -> String {
    let count = |k: &str| opts.get(k).and_then(|s| s.parse::<u32>().ok()).unwrap_or(1);
    let (jobs, files) = (count("numjobs").max(1), count("nrfiles").max(1));
    let format = opts
        .get("filename_format")
        .unwrap_or("$jobname.$jobnum.$filenum");
    let dirs = directories(opts);
    let path = |j: u32, f: u32| {
        let file = (format.replace("$jobname", name))
            .replace("$jobnum", &j.to_string())
            .replace("$filenum", &f.to_string());
        match dirs.is_empty() {
            true => file,
            false => {
                let d = dirs[j as usize % dirs.len()];
                format!("{}/{file}", d.trim_end_matches('/'))
            }
        }
    };
    let all: Vec<String> = (0..jobs)
        .flat_map(|j| (0..files).map(move |f| (j, f)))
        .map(|(j, f)| path(j, f))
        .collect();
    match all.len() {
        0..=4 => all.join(", "),
        n => format!("{} … {} ({n} files)", all[0], all[n - 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::average_words;

    #[test]
    fn an_average_transfer_reads_as_the_docs_write_it() {
        // bssplit=4k/50:64k/50 imported from fio: "(average 31.2k)", not 31949 bytes.
        assert_eq!(average_words(31949), "31.2k");
        assert_eq!(average_words(19149), "18.7k");
        assert_eq!(average_words(4096), "4k");
        assert_eq!(average_words(3 << 19), "1.5m");
        assert_eq!(average_words(900), "900");
    }
}

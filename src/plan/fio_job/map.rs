//! One fio job's options → iomark's run options (the names of `plan::options::table`),
//! its target, its place in the ordering, and the options iomark cannot honour, each
//! with its line. Sizes are converted here with fio's units and `kb_base` and handed on
//! in bytes, so iomark's own unit rules never see fio's text. `docs/fio.md` lists every
//! option and every difference in meaning.

use std::collections::BTreeMap;

use super::ini::{Entry, JobDef};
use super::units::{fio_size, fio_time};
use crate::error::{Error, Result};
use crate::plan::suite::Opt;

/// A job read from a job file, in iomark's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedJob {
    /// The section's name (fio's `name=` replaces it).
    pub name: String,
    /// Where its section starts (`FILE:LINE`).
    pub at: String,
    /// The file or device (`None`: the null engine without a file); the first of
    /// `targets` when the job has several files.
    pub target: Option<String>,
    /// Every file of a job with several (`filename=a:b`, `nrfiles`; served by its
    /// threads with `--file-service`); empty for a job on one file.
    pub targets: Vec<String>,
    /// iomark's run options, in the order set.
    pub opts: Vec<Opt>,
    /// What the reader should know about how an option was taken (fio's sync engine as
    /// psync, a sync engine's iodepth), recorded with the run.
    pub notes: Vec<String>,
    /// Options iomark does not support: `FILE:LINE key=value (why)`.
    pub unsupported: Vec<String>,
    /// fio's file for each `numjobs` copy of a job without `filename` (`JOB.COPY.0`),
    /// taken by a job alone in its group (`plan_jobs`); else they share `target`.
    pub copy_files: Vec<String>,
    /// fio's `group_reporting`.
    pub group_reporting: bool,
    /// `stonewall` / `wait_for_previous` (or the first job of a later file).
    pub stonewall: bool,
    /// `new_group`.
    pub new_group: bool,
    /// `wait_for=NAME` and where.
    pub wait_for: Option<(String, String)>,
    /// The fio line each of iomark's options came from: iomark's name, then fio's
    /// `key=value` as written and its `FILE:LINE`, for messages about the value.
    pub sources: Vec<(String, String, String)>,
}

impl MappedJob {
    /// The last value set for iomark's option `name` so far (`None`: not set, or a
    /// switch).
    pub(crate) fn opt(&self, name: &str) -> Option<&str> {
        (self.opts.iter().rev())
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.as_deref())
    }
}

/// fio's engine names → iomark's, and the note when they differ: the one place that
/// decides it.
pub(crate) fn engine_for(fio: &str) -> Option<(&'static str, Option<String>)> {
    Some(match fio {
        "psync" => ("psync", None),
        "sync" | "pvsync" => (
            "psync",
            Some(format!(
                "fio's ioengine={fio} runs as psync (pread/pwrite, one request per call)"
            )),
        ),
        "libaio" => ("libaio", None),
        "io_uring" => ("io_uring", None),
        "mmap" => ("mmap", None),
        "null" => ("null", None),
        _ => return None,
    })
}

/// fio's aliases → the name this module matches on.
fn canonical(key: &str) -> &str {
    match key {
        "readwrite" => "rw",
        "blocksize" => "bs",
        "blocksize_range" => "bsrange",
        "io_limit" => "io_size",
        "iodepth_batch" => "iodepth_batch_submit",
        "iodepth_batch_complete" => "iodepth_batch_complete_min",
        "wait_for_previous" => "stonewall",
        "randseed" | "rand_seed" => "randseed",
        "buffer_compress_percentage" | "compress_percentage" => "buffer_compress_percentage",
        "dedupe_percentage" => "dedupe_percentage",
        other => other,
    }
}

/// fio's booleans: a bare key or a number (non-zero is on).
pub(super) fn flag(e: &Entry) -> Result<bool> {
    match e.value.as_deref().map(str::trim) {
        None => Ok(true),
        Some(v) => v
            .parse::<i64>()
            .map(|n| n != 0)
            .map_err(|_| Error::usage(format!("{}: {}={v} is not 0 or 1", e.at, e.key))),
    }
}

pub(super) struct Ctx {
    last: BTreeMap<String, Entry>,
    /// Which of `rwmixread`/`rwmixwrite` was written last (fio lets one set the other).
    mix_last: Option<String>,
    pub(super) kb_base: u64,
    pub(super) job: MappedJob,
}

impl Ctx {
    pub(super) fn get(&self, key: &str) -> Option<&Entry> {
        self.last.get(key)
    }
    pub(super) fn value(&self, key: &str) -> Option<&str> {
        self.get(key)
            .and_then(|e| e.value.as_deref())
            .map(str::trim)
    }
    pub(super) fn set(&mut self, name: &str, value: impl Into<String>) {
        self.job.opts.push((name.to_string(), Some(value.into())));
    }
    pub(super) fn refuse(&mut self, key: &str, why: &str) {
        if let Some(e) = self.last.get(key) {
            let kv = match &e.value {
                Some(v) => format!("{}={v}", e.key),
                None => e.key.clone(),
            };
            self.job.unsupported.push(format!("{} {kv} ({why})", e.at));
        }
    }
    /// A size in bytes, fio's way; a refusal for a percentage or a range.
    pub(super) fn bytes(&mut self, key: &str) -> Result<Option<u64>> {
        let Some(e) = self.get(key).cloned() else {
            return Ok(None);
        };
        let v = e.value.as_deref().unwrap_or("").trim();
        if v.ends_with('%') || v.contains('-') || v.contains(':') {
            self.refuse(key, "percentages, ranges and lists are not supported here");
            return Ok(None);
        }
        fio_size(v, self.kb_base).map(Some).ok_or_else(|| {
            Error::usage(format!(
                "{}: {key}={v} is not a size (e.g. 4k, 1m, 512)",
                e.at
            ))
        })
    }
    fn seconds(&mut self, key: &str) -> Result<Option<f64>> {
        let Some(e) = self.get(key).cloned() else {
            return Ok(None);
        };
        let v = e.value.as_deref().unwrap_or("").trim();
        fio_time(v).map(Some).ok_or_else(|| {
            Error::usage(format!(
                "{}: {key}={v} is not a time (e.g. 30, 500ms, 2m)",
                e.at
            ))
        })
    }
    pub(super) fn on(&self, key: &str) -> Result<Option<bool>> {
        self.get(key).map(flag).transpose()
    }
}

/// Maps one job. Errors are for values that cannot be read at all; options iomark does
/// not support are listed in `unsupported` for the caller to refuse or drop.
/// `fresh_seed` is the seed of a job with `randrepeat=0` and no `randseed` (the caller
/// takes it from the clock, so that two runs differ, as in fio).
pub fn map_job(def: &JobDef, fresh_seed: u64) -> Result<MappedJob> {
    let mut last = BTreeMap::new();
    for e in &def.entries {
        last.insert(canonical(&e.key).to_string(), e.clone());
    }
    let kb_base = match last.get("kb_base").and_then(|e| e.value.as_deref()) {
        None | Some("1024") => 1024,
        Some("1000") => 1000,
        Some(v) => {
            let at = &last["kb_base"].at;
            return Err(Error::usage(format!("{at}: kb_base={v}: use 1024 or 1000")));
        }
    };
    let name = last
        .get("name")
        .and_then(|e| e.value.clone())
        .unwrap_or_else(|| def.name.clone());
    let mix_last = (def.entries.iter().rev())
        .find(|e| e.key == "rwmixread" || e.key == "rwmixwrite")
        .map(|e| e.key.clone());
    let mut c = Ctx {
        last,
        mix_last,
        kb_base,
        job: MappedJob {
            name: name.clone(),
            at: def.at.clone(),
            target: None,
            targets: Vec::new(),
            opts: vec![("name".into(), Some(name))],
            notes: Vec::new(),
            unsupported: Vec::new(),
            copy_files: Vec::new(),
            group_reporting: false,
            stonewall: def.file_stonewall,
            new_group: false,
            wait_for: None,
            sources: Vec::new(),
        },
    };
    let keys: Vec<String> = c.last.keys().cloned().collect();
    let engine = workload(&mut c)?;
    super::engine::engine_opts(&mut c, engine)?;
    super::cache::page_cache(&mut c)?;
    super::buffers::registered(&mut c)?;
    if c.on("randrepeat")? == Some(false) && c.get("randseed").is_none() {
        c.set("seed", fresh_seed.to_string());
        let note = format!("randrepeat=0: seed {fresh_seed}, taken from the clock");
        c.job.notes.push(note);
    }
    data(&mut c)?;
    target(&mut c, engine == "null")?;
    super::files::new_file(&mut c)?;
    c.job.group_reporting = c.on("group_reporting")?.unwrap_or(false);
    c.job.stonewall |= c.on("stonewall")?.unwrap_or(false);
    c.job.new_group = c.on("new_group")?.unwrap_or(false);
    c.job.wait_for = c
        .get("wait_for")
        .map(|e| (e.value.clone().unwrap_or_default(), e.at.clone()));
    for k in keys.iter().filter(|k| !HANDLED.contains(&k.as_str())) {
        c.refuse(k, "not an option iomark knows");
    }
    c.job.sources = sources(&c);
    Ok(c.job)
}

/// iomark's options whose fio option has another name (the rest are fio's with `_` for
/// `-`), each with the fio options that may set it, most specific first.
const FIO_NAMES: &[(&str, &[&str])] = &[
    ("bs", &["bs", "bssplit", "bsrange"]),
    ("write-bs", &["bs", "bssplit", "bsrange"]),
    ("size", &["size", "filesize"]),
    ("qd", &["iodepth"]),
    ("jobs", &["numjobs"]),
    ("engine", &["ioengine"]),
    ("seed", &["randseed"]),
    ("repeat", &["loops"]),
    ("ramp", &["ramp_time"]),
    ("compress", &["buffer_compress_percentage"]),
    ("compress-chunk", &["buffer_compress_chunk"]),
    ("dedup", &["dedupe_percentage", "scramble_buffers"]),
    ("sync-mode", &["sync"]),
    ("batch-submit", &["iodepth_batch_submit"]),
    ("batch-complete", &["iodepth_batch_complete_min"]),
    ("sqpoll-cpu", &["sqthread_poll_cpu"]),
    ("sqpoll", &["sqthread_poll"]),
    ("cpus", &["cpus_allowed"]),
    ("cpus-policy", &["cpus_allowed_policy"]),
    ("file-service", &["file_service_type"]),
    ("fadvise", &["fadvise_hint"]),
    ("rate-cycle", &["rate_cycle"]),
];

/// Where each of the job's iomark options came from (see [`MappedJob::sources`]).
fn sources(c: &Ctx) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    for (ours, _) in &c.job.opts {
        if out.iter().any(|(o, _, _)| o == ours) {
            continue;
        }
        let plain = ours.replace('-', "_");
        let fio = FIO_NAMES.iter().find(|(o, _)| o == ours);
        let keys = fio.map_or(vec![plain.as_str()], |(_, k)| k.to_vec());
        if let Some(e) = keys.iter().find_map(|k| c.get(k)) {
            let kv = match &e.value {
                Some(v) => format!("{}={}", e.key, v.trim()),
                None => e.key.clone(),
            };
            out.push((ours.clone(), kv, e.at.clone()));
        }
    }
    out
}

/// Every key some function here reads or refuses for its value. `thread` and
/// `description` are accepted as they are: iomark's workers are threads, and a
/// description is text.
const HANDLED: &[&str] = &[
    "rw",
    "rw_sequencer",
    "bs",
    "bssplit",
    "bsrange",
    "size",
    "filesize",
    "io_size",
    "offset",
    "iodepth",
    "numjobs",
    "ioengine",
    "direct",
    "buffered",
    "runtime",
    "time_based",
    "ramp_time",
    "randseed",
    "randrepeat",
    "random_distribution",
    "rwmixread",
    "rwmixwrite",
    "fsync",
    "end_fsync",
    "loops",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "dedupe_percentage",
    "refill_buffers",
    "zero_buffers",
    "scramble_buffers",
    "buffer_pattern",
    "verify",
    "filename",
    "directory",
    "nrfiles",
    "file_service_type",
    "openfiles",
    "overwrite",
    "thread",
    "norandommap",
    "fadvise_hint",
    "invalidate",
    "fixedbufs",
    "registerfiles",
    "userspace_reap",
    "description",
    "stonewall",
    "new_group",
    "wait_for",
    "group_reporting",
    "kb_base",
    "name",
    "startdelay",
    "thinktime",
    "thinktime_blocks",
    "thinktime_spin",
    "thinktime_blocks_type",
    "thinktime_iotime",
    "rate",
    "rate_iops",
    "rate_min",
    "rate_iops_min",
    "rate_cycle",
    "lat_percentiles",
    "clat_percentiles",
    "stats",
    "allow_file_create",
    "file_append",
    "fallocate",
    "sync",
    "iodepth_batch_submit",
    "iodepth_batch_complete_min",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "hipri",
    "cpus_allowed",
    "cpus_allowed_policy",
];

/// The workload options; returns iomark's engine name.
fn workload(c: &mut Ctx) -> Result<&'static str> {
    let rw = c.value("rw").unwrap_or("read").to_string();
    let (base, modifier) = rw.split_once(':').unwrap_or((&rw, ""));
    let pattern = match base {
        "read" | "write" | "randread" | "randwrite" | "rw" | "randrw" => Some(base),
        "trim" | "randtrim" | "trimwrite" => Some(base),
        "readwrite" => Some("rw"),
        _ => None,
    };
    match pattern {
        Some(p) => c.set("rw", p),
        None => c.refuse("rw", "not an access pattern iomark knows"),
    }
    super::pace::rw_suffix(c, pattern.unwrap_or("read"), modifier)?;
    super::blocks::block_sizes(c, pattern.unwrap_or("read"))?;
    super::pace::rates(c, pattern.unwrap_or("read"))?;
    // `size` and `filesize` are the files' business: see `target`.
    for (fio, ours) in [("offset", "offset"), ("io_size", "io-size")] {
        // A share of the file or device (fio's offset=25%).
        let pct = c.value(fio).filter(|v| v.ends_with('%') && fio == "offset");
        if let Some(p) = pct.map(str::to_string) {
            c.set(ours, p);
        } else if let Some(b) = c.bytes(fio)? {
            c.set(ours, b.to_string());
        }
    }
    let fio_engine = c.value("ioengine").unwrap_or("psync").to_string();
    let engine = match engine_for(&fio_engine) {
        Some((ours, note)) => {
            c.set("engine", ours);
            c.job.notes.extend(note);
            ours
        }
        None => {
            c.refuse("ioengine", "iomark's engines are io_uring, libaio, psync, mmap and null (sync and pvsync run as psync)");
            "psync"
        }
    };
    if let Some(qd) = c.value("iodepth").map(str::to_string) {
        if matches!(engine, "psync" | "mmap") && qd.parse::<u64>().is_ok_and(|n| n > 1) {
            c.job.notes.push(format!(
                "iodepth={qd} with a synchronous engine is one I/O at a time, in fio as in iomark"
            ));
        } else {
            c.set("qd", qd);
        }
    }
    for (fio, ours) in [
        ("numjobs", "jobs"),
        ("rwmixread", "rwmixread"),
        ("rwmixwrite", "rwmixwrite"),
        ("fsync", "fsync"),
        ("randseed", "seed"),
        ("loops", "repeat"),
    ] {
        let overridden = fio.starts_with("rwmix") && c.mix_last.as_deref() != Some(fio);
        let Some(v) = c.value(fio).map(str::to_string).filter(|_| !overridden) else {
            continue;
        };
        // fio takes a mix's share in a job that does not mix and does nothing with it (a
        // [global] rwmixread under a read job and a mixed one); iomark refuses it there.
        if fio.starts_with("rwmix") && !matches!(pattern, Some("rw" | "randrw")) {
            let rw = pattern.unwrap_or("read");
            (c.job.notes).push(format!(
                "{fio}={v} does nothing in a rw={rw} job, as in fio"
            ));
            continue;
        }
        c.set(ours, v);
    }
    // fio's default is buffered I/O; iomark's is direct.
    match (c.on("direct")?, c.on("buffered")?) {
        (Some(true), _) | (None, Some(false)) => c.set("direct", "1"),
        _ => c.set("buffered", "1"),
    }
    times(c)?;
    if c.on("end_fsync")? == Some(true) {
        c.set("end-fsync", "1");
    }
    reporting(c)?;
    super::pace::distribution(c, pattern.unwrap_or("read"))?;
    match c.value("startdelay").map(str::to_string) {
        Some(v) if v.contains('-') => super::pace::startdelay_range(c, &v)?,
        Some(_) => {
            if let Some(s) = c.seconds("startdelay")?.filter(|s| *s > 0.0) {
                c.set("startdelay", format!("{s}s"));
            }
        }
        None => {}
    }
    Ok(engine)
}

/// What fio reports, where iomark measures and reports the same either way: taken
/// (`stats=1` and clat percentiles with a note: iomark's are of `lat`, which the reports
/// label), or refused where it asks for no figures.
fn reporting(c: &mut Ctx) -> Result<()> {
    let clat = c.on("lat_percentiles")? == Some(false) || c.on("clat_percentiles")? == Some(true);
    if clat {
        (c.job.notes).push("iomark's latency percentiles are of submission to completion (fio's lat, which clat's leave the submission out of); its reports say lat".into());
    }
    if c.on("stats")? == Some(false) {
        c.refuse("stats", "iomark measures every job; drop it");
    }
    Ok(())
}

fn times(c: &mut Ctx) -> Result<()> {
    let runtime = c.seconds("runtime")?;
    let time_based = c.on("time_based")?.unwrap_or(false);
    if let Some(rt) = runtime.filter(|r| *r > 0.0) {
        c.set("runtime", format!("{rt}s"));
        if time_based {
            c.set("time-based", "1");
        } else if c.get("io_size").is_none() {
            // fio without time_based stops after the span (or io_size) or the runtime,
            // whichever comes first: so does iomark with both given.
            c.set("io-size", "1x");
        }
    } else if time_based {
        c.refuse("time_based", "time_based needs a runtime in iomark");
    }
    // Without time_based fio's ramp is part of `size` (`study_runs`: `ramp_in_size`).
    if let Some(r) = c.seconds("ramp_time")? {
        c.set("ramp", format!("{r}s"));
    }
    Ok(())
}

/// What is written.
fn data(c: &mut Ctx) -> Result<()> {
    if let Some(p) = c.value("buffer_compress_percentage").map(str::to_string) {
        c.set("compress", p);
        // fio's chunk is 512 bytes unless given.
        let chunk = c.bytes("buffer_compress_chunk")?.unwrap_or(512);
        c.set("compress-chunk", chunk.to_string());
    }
    if let Some(p) = c.value("dedupe_percentage").map(str::to_string) {
        // fio dedupes whole blocks: the writes' (a mix's own when its writes differ).
        let fixed = |k: &str| {
            (c.job.opt(k))
                .filter(|v| v.bytes().all(|b| b.is_ascii_digit()))
                .map(str::to_string)
        };
        let unit = fixed("write-bs")
            .or_else(|| fixed("bs"))
            .unwrap_or("4096".into());
        c.set("dedup", p);
        c.set("dedup-unit", unit);
    }
    if c.on("refill_buffers")? == Some(true) {
        c.set("refill", "1");
    }
    if c.on("zero_buffers")? == Some(true) {
        c.set("data", "zeros");
    }
    super::buffers::unscrambled(c)?;
    if let Some(p) = c.value("buffer_pattern").map(str::to_string) {
        match pattern_hex(&p) {
            Some(hex) => c.set("data", format!("pattern:{hex}")),
            None => c.refuse(
                "buffer_pattern",
                "iomark takes a 0x… hex pattern or a quoted string",
            ),
        }
    }
    match c.value("verify").map(str::to_string).as_deref() {
        None | Some("0") | Some("none") => {}
        Some(m @ ("crc32c" | "crc32c-intel" | "md5")) => {
            c.set("verify", "1");
            if m == "md5" {
                c.job
                    .notes
                    .push("verify=md5 is checked with iomark's CRC32C block headers".into());
            }
        }
        Some(_) => c.refuse(
            "verify",
            "iomark verifies with CRC32C headers (verify=crc32c or md5)",
        ),
    }
    Ok(())
}

/// fio's `buffer_pattern`: `0xdeadbeef` or a quoted string → hex digits.
fn pattern_hex(p: &str) -> Option<String> {
    if let Some(hex) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
        return (hex.len() % 2 == 0
            && !hex.is_empty()
            && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| hex.to_ascii_lowercase());
    }
    let s = p.strip_prefix(['"', '\''])?.strip_suffix(['"', '\''])?;
    (!s.is_empty()).then(|| s.bytes().map(|b| format!("{b:02x}")).collect())
}

/// The files: `filename` (fio's `:` list, `\:` for a colon in a name), else fio's own
/// names `JOB.COPY.FILE` in `directory` (a `:` list: copy j in the j-th, cycling); and
/// their sizes. See `super::files`.
fn target(c: &mut Ctx, null: bool) -> Result<()> {
    super::files::target(c, null)
}

/// fio's `:`-separated list, where `\:` is a colon inside a name.
pub(super) fn split_colons(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = s.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().expect("never empty").push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("never empty").push(c),
        }
    }
    out
}

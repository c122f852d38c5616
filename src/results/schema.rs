//! The results document: the one interface between measuring and reporting. These structs
//! *are* the schema (`docs/results-schema.md` describes the same fields); every field is
//! documented here. The document is rewritten atomically after every finished repetition,
//! so a killed study keeps everything it finished.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::StudyPoint;
use crate::plan::spec::Spec;
use crate::results::env::{DeviceDelta, DeviceInfo, FsInfo, Host};
use crate::results::stats::LatSummary;

/// The schema version this build writes.
pub(crate) const SCHEMA: &str = "iomark/1";

/// A whole results document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Always `"iomark/1"` for this layout.
    pub schema: String,
    /// The program that wrote the document.
    pub tool: Tool,
    /// When the first run started, UTC, RFC 3339.
    pub started: String,
    /// The machine the runs happened on.
    pub host: Host,
    /// One entry per workload, in the order they ran.
    pub runs: Vec<Run>,
    /// `suite steady`: how the target was purged before preconditioning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purge: Option<Purge>,
    /// `suite steady`: the steady-state verdict over the rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<crate::results::steady::SteadyState>,
}

/// What purging the target did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Purge {
    /// `discard` (BLKDISCARD on a device), `punch_hole` (a file), or `none`.
    pub method: String,
    /// Whether the target accepted it.
    pub supported: bool,
    /// Bytes purged.
    pub bytes: u64,
    /// What happened, in words.
    pub note: String,
}

/// The program that wrote a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// `"iomark"`.
    pub name: String,
    /// The crate version.
    pub version: String,
}

/// Whether a run (or repetition) finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Ran to its planned end.
    Complete,
    /// Stopped early (a signal or an error), or still running when the document was
    /// saved; the figures cover what did run.
    Interrupted,
    /// A job fell below its minimum rate (`--rate-min`, `--rate-iops-min`), or, imported
    /// from fio, the job ended with an error (fio's `error` was not 0); `error` says which,
    /// and the figures cover what ran before it.
    Failed,
    /// Imported from fio: a job iomark cannot represent (a trim workload); no figures,
    /// `error` says what it was.
    Unsupported,
}

impl Status {
    /// What the tables append to a run's name: nothing for a complete run.
    pub fn label(self) -> &'static str {
        match self {
            Status::Complete => "",
            Status::Interrupted => " (interrupted)",
            Status::Failed => " (failed)",
            Status::Unsupported => " (unsupported)",
        }
    }
}

/// What the latency figures of a run measure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LatencyKind {
    /// From submission to completion: what iomark measures, and fio's `lat`.
    #[default]
    Lat,
    /// fio's completion latency: from the moment the I/O was handed to the kernel to its
    /// completion, without the submission time (fio's `clat`, which its percentiles use
    /// unless `lat_percentiles` is set).
    Clat,
}

impl LatencyKind {
    /// The short label shown in tables and charts.
    pub fn label(self) -> &'static str {
        match self {
            LatencyKind::Lat => "lat",
            LatencyKind::Clat => "clat",
        }
    }

    /// The label with its meaning, for notes and chart titles.
    pub fn describe(self) -> &'static str {
        match self {
            LatencyKind::Lat => "lat: submission to completion",
            LatencyKind::Clat => "clat: fio's completion latency, without submission",
        }
    }
}

/// How a run imported from fio was reported by fio, for what the iomark fields cannot
/// say on their own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FioJob {
    /// fio's job name (the first job's for a `group_reporting` entry).
    pub jobname: String,
    /// fio's group (stonewall / new_group): jobs are keyed by group and name.
    pub groupid: u64,
    /// `--client` output: the server the job ran on (`host:port`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// fio's `ioengine` as given (`libaio`, `sync`, `mmap`, …; `psync` when not given).
    pub ioengine: String,
    /// fio's `rw` as given.
    pub rw: String,
    /// The block sizes as fio was told: `4k`, `4k,64k` (read,write), `bssplit 4k/50:64k/50`,
    /// `bsrange 4k-16k`. `spec.bs` holds one size: the average transfer when they vary.
    pub bs: String,
    /// The output format the figures came from: `json`, `json+`, `terse`.
    pub format: String,
    /// `group_reporting` over different jobs: their names, when fio's output lists them
    /// (its normal text does; its JSON does not).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_members: Vec<String>,
    /// Entries fio wrote for this job: its copies (`numjobs` without `group_reporting`).
    pub copies: u32,
    /// Where the percentiles come from: `fio` (fio's own for the job), `merged` (the
    /// copies' json+ histogram bins added, then read the way fio reads its own), or
    /// `one copy` (the first copy's: fio's JSON has no bins to merge).
    pub percentiles: String,
    /// Percentiles fio did not report (`clat_percentiles=0`, a `percentile_list` without
    /// them): `p50`, `p90`, `p99`, `p999`, `p9999`. Their fields hold 0 and read "n/a".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_percentiles: Vec<String>,
    /// fio's error number for the job (0: none).
    #[serde(default)]
    pub error: i64,
    /// What fio's output does not say, shown as "?" (the `spec` field is `null` in the
    /// JSON, iomark's default in memory; an unknown `target` is `?`): `target`, `engine`,
    /// `qd`, `jobs`, `direct` (terse output names no options; a `group_reporting` entry of
    /// different jobs, in JSON alone, not how many).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
}

/// One workload and all its repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Short human name, e.g. `"randread 4k qd32"`.
    pub name: String,
    /// The workload as it ran.
    pub spec: Spec,
    /// `complete` when every repetition finished.
    pub status: Status,
    /// What the workload ran against.
    pub target: TargetDesc,
    /// Repetitions asked for (`--repeat`).
    #[serde(default)]
    pub repetitions_planned: u32,
    /// Each repetition's figures, in order.
    pub repetitions: Vec<Repetition>,
    /// Statistics across the complete repetitions.
    pub summary: Summary,
    /// Things the user should know about this run's figures.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// What stopped the run, when it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A buffered run whose reads the page cache mostly served (a mean
    /// `page_cache_hit_pct` of [`CACHE_BOUND_PCT`] or more over its repetitions): it
    /// measured the page cache more than the device.
    #[serde(default)]
    pub cache_bound: bool,
    /// Where this run sits in a study (`iomark suite`); absent for a single run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<StudyPoint>,
    /// Write amplification of this run (phase), from the best source available: a drive's
    /// media writes, else zram's accounting, else the kernel's block counters. `null` for
    /// runs that write nothing.
    #[serde(default)]
    pub write_amplification: Option<WriteAmplification>,
    /// The figure of every source, including the ones that report nothing (and why).
    #[serde(default)]
    pub write_amplification_sources: Vec<WriteAmplification>,
    /// What the latency figures (`lat_ns` of every repetition and the summary) measure:
    /// `lat` for iomark's runs (and documents from before the field), `clat` for fio's
    /// completion latency.
    #[serde(default)]
    pub latency_kind: LatencyKind,
    /// Runs imported from fio: how fio reported the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio: Option<FioJob>,
    /// A run on several targets: each one as opened, with its own summary (`target`
    /// and `summary` are then the first target's description and the aggregate's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetPart>,
    /// A run scaled out over MPI ranks: how many, on which hosts, in which layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<MpiInfo>,
    /// A run measured at the same time as other runs (the jobs of one fio group): which,
    /// and the group's own figures. Its `repetitions` and `summary` are still its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<RunGroup>,
}

impl Run {
    /// Whether the run has the percentile `name` (`p50`, `p90`, `p99`, `p999`, `p9999`):
    /// always for iomark's runs; an imported fio job may lack some.
    pub fn has_percentile(&self, name: &str) -> bool {
        self.fio
            .as_ref()
            .is_none_or(|f| !f.missing_percentiles.iter().any(|m| m == name))
    }

    /// The I/O engine as the run names it: fio's `ioengine` for an imported job.
    pub fn engine_label(&self) -> &str {
        match &self.fio {
            Some(f) => &f.ioengine,
            None => self.spec.engine.name(),
        }
    }
}

/// The page-cache hit share (of the bytes read) from which a run is `cache_bound`, percent.
pub const CACHE_BOUND_PCT: f64 = 50.0;

impl Run {
    /// The share of the bytes read that the page cache served, over the repetitions that
    /// have one (the complete ones when any complete): each repetition's share weighted
    /// by its bytes read, so that it is a share of all the bytes (a cold repetition at
    /// 38% and a warm one at 100% that read 25 times as much: 96%, not their mean 69%).
    /// `None` when none was measured.
    pub fn page_cache_hit_pct(&self) -> Option<f64> {
        let complete = self
            .repetitions
            .iter()
            .any(|r| r.status == Status::Complete && r.page_cache_hit_pct.is_some());
        let (mut served, mut read, mut any) = (0.0, 0.0, false);
        for r in self.repetitions.iter() {
            if complete && r.status != Status::Complete {
                continue;
            }
            if let Some(h) = r.page_cache_hit_pct {
                served += h * r.read.bytes as f64;
                read += r.read.bytes as f64;
                any = true;
            }
        }
        any.then(|| if read > 0.0 { served / read } else { 0.0 })
    }

    /// Bytes iomark moved and bytes the device's counters moved (whole device, every
    /// process) in one direction, over the complete repetitions (all of them when none is
    /// complete); `None` when a repetition has no device counters.
    pub fn moved_by_device(&self, dir: Moved) -> Option<(u64, u64)> {
        let complete = self
            .repetitions
            .iter()
            .any(|r| r.status == Status::Complete);
        let (mut own, mut dev) = (0u64, 0u64);
        for r in self.repetitions.iter() {
            if complete && r.status != Status::Complete {
                continue;
            }
            let d = r.device.as_ref()?;
            let (o, v) = match dir {
                Moved::Read => (r.read.bytes, d.read_bytes),
                Moved::Write => (r.write.bytes, d.write_bytes),
                Moved::Trim => (r.trim.bytes, d.discard_bytes),
            };
            own += o;
            dev += v;
        }
        Some((own, dev))
    }

    /// For buffered writes: the percent of the bytes iomark wrote that the device wrote
    /// within the measured windows. When nothing flushed them
    /// ([`crate::plan::cache::holds_writes`]) the rest the page cache took (kept for later
    /// writeback, or overwritten there first); when a flush was in the window
    /// (`--end-fsync`, `--fsync`, `--sync-mode`) the rest were rewrites merged in the
    /// cache. `None` for direct I/O or trims, or when nothing was measured.
    pub fn device_wrote_pct(&self) -> Option<f64> {
        let s = &self.spec;
        if s.direct || !s.writes() || !s.rw.writes_data() {
            return None;
        }
        let (own, dev) = self.moved_by_device(Moved::Write)?;
        (own > 0).then(|| 100.0 * dev.min(own) as f64 / own as f64)
    }
}

/// Which of a repetition's byte counts [`Run::moved_by_device`] sets against the
/// device's: reads against reads, writes against writes, trims against discards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    Read,
    Write,
    Trim,
}

/// Bytes asked to be written against bytes the device wrote or stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriteAmplification {
    /// `block_layer` (kernel counters of the device under the target), `zram` (mm_stat:
    /// compressed bytes stored against original bytes stored), or `smart` (the drive's
    /// host and media write counters).
    pub source: String,
    /// Bytes the host side wrote: iomark's writes (block_layer), zram's original data
    /// size, or the drive's host-writes counter.
    pub host_bytes: Option<u64>,
    /// Bytes the device side wrote: what reached the block device, what zram stores
    /// compressed, or the drive's media writes.
    pub device_bytes: Option<u64>,
    /// device_bytes / host_bytes.
    pub ratio: Option<f64>,
    /// What the figures are, or why there are none ("not reported by this device").
    pub note: String,
    /// zram that held data before the run: the least and most of its original bytes
    /// after the run outside the run's span (older data; `host_bytes` less them is the
    /// span's share), from mm_stat before and after, the span and the device's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_bytes: Option<[u64; 2]>,
}

/// The target as it was opened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetDesc {
    /// `file`, `block_device`, `none` (null engine), or `unknown` (imported from fio).
    pub kind: TargetKind,
    /// Path as given.
    pub path: String,
    /// Byte offset of the span.
    pub offset: u64,
    /// Bytes addressed by the workload.
    pub span_bytes: u64,
    /// Alignment in bytes that direct I/O needed (1 for buffered or null).
    pub align: u64,
    /// Whether iomark created (and laid out) the file for this run.
    pub created: bool,
    /// The block device under the target, when there is one.
    pub device: Option<DeviceInfo>,
    /// The filesystem of a file target.
    pub filesystem: Option<FsInfo>,
}

/// Figures for one direction (reads or writes) of one repetition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DirStats {
    /// Completed I/Os in the measured window.
    pub ios: u64,
    /// Bytes they moved.
    pub bytes: u64,
    /// I/Os per second over the measured window.
    pub iops: f64,
    /// Bytes per second over the measured window (divide by 1e6 for MB/s, 2^20 for MiB/s).
    pub bw_bytes: f64,
    /// Latency from submission to completion, nanoseconds.
    pub lat_ns: LatSummary,
}

pub use crate::results::cpu::{Cpu, CpuPart, MachineCpu};

/// One interval of the time series.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// End of the interval, seconds since the measured window began.
    pub t_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bw_bytes: f64,
    pub write_bw_bytes: f64,
    /// Trims (discards) in the interval; 0 for other patterns and in older documents.
    #[serde(default)]
    pub trim_iops: f64,
    #[serde(default)]
    pub trim_bw_bytes: f64,
    /// Mean latency of the I/Os completed in the interval (reads, writes, trims), ns.
    pub lat_mean_ns: f64,
    /// 99th percentile latency in the interval (2 significant digits), ns.
    pub lat_p99_ns: u64,
}

/// One repetition of a workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repetition {
    /// 1-based repetition number.
    pub index: u32,
    /// `interrupted` when stopped early.
    pub status: Status,
    /// Length of the measured window in seconds (after the ramp, including `--end-fsync`).
    pub elapsed_s: f64,
    pub read: DirStats,
    pub write: DirStats,
    /// Trims (discards: `--rw trim`, `randtrim`, `trimwrite`), counted as their own
    /// direction: I/Os, bytes discarded, rates, latency of each discard. Zero for other
    /// patterns and in documents from before trims.
    #[serde(default)]
    pub trim: DirStats,
    /// fsync calls issued in the measured window.
    pub fsyncs: u64,
    pub cpu: Cpu,
    /// The spin before each wait for one completion the job threads used, nanoseconds
    /// (`--spin-wait`, or its default as resolved: 1500 where the run's job threads left
    /// a CPU free, else 0); absent where the waits do not spin (psync, mmap, null;
    /// `--sqpoll`, `--hipri`, `--batch-complete` above 1) and in documents from before
    /// 2026-11-30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin_wait_ns: Option<u32>,
    /// The kernel's block counters of the device under the target, after minus before;
    /// `null` when the target has no block device iomark can see.
    pub device: Option<DeviceDelta>,
    /// Per-interval figures.
    pub series: Vec<Point>,
    /// What the written data measured (compressibility under lz4 and zstd, duplicate
    /// units); `null` when nothing was written.
    #[serde(default)]
    pub data: Option<DataMeasure>,
    /// With `--verify`: what reading every written block back found; `null` otherwise.
    #[serde(default)]
    pub verify: Option<VerifyReport>,
    /// Buffered reads: percent of the bytes iomark read that never reached the device
    /// (served by the page cache), from the device's read counter; `null` for direct
    /// I/O, runs that read nothing, or no device counters.
    #[serde(default)]
    pub page_cache_hit_pct: Option<f64>,
    /// A run on several targets: each target's own figures (the fields above are then
    /// their exact aggregate over the common window, `device` the sum of their
    /// counters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetRep>,
    /// A run scaled out over MPI ranks: each rank's own figures (with `rank` and
    /// `host`); the fields above are then their exact aggregate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<TargetRep>,
    /// A run scaled out over MPI: each host's ranks together, over the common window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<crate::results::ranks::HostRep>,
}

impl Repetition {
    /// The measured page-cache hit share of a buffered repetition that read (see
    /// `page_cache_hit_pct`).
    pub fn measure_page_cache(
        direct: bool,
        read_bytes: u64,
        device: Option<&DeviceDelta>,
    ) -> Option<f64> {
        if direct {
            return None;
        }
        device?.page_cache_hit_pct(read_bytes)
    }
}

/// RFC 3339 UTC timestamp of now (no time-zone database needed).
pub(crate) fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days (http://howardhinnant.github.io/date_algorithms.html).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

impl Document {
    /// An empty document for this host.
    pub fn new(host: Host) -> Document {
        Document {
            schema: SCHEMA.to_string(),
            tool: Tool {
                name: "iomark".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            started: now_rfc3339(),
            host,
            runs: Vec::new(),
            purge: None,
            steady_state: None,
        }
    }

    /// Pretty JSON text; what an imported run does not know is `null` (`unknown.rs`).
    pub fn to_json(&self) -> String {
        crate::results::unknown::pretty(self)
    }

    /// Writes the document to `path` atomically: a temporary file beside it, then rename,
    /// so a reader (or a crash) never sees half a document.
    pub(crate) fn save(&self, path: &Path) -> Result<()> {
        let text = self.to_json() + "\n";
        crate::results::store::atomic_write(path, text.as_bytes(), "results")
    }

    /// Reads a document, checking its schema.
    pub fn load(path: &Path) -> Result<Document> {
        Document::parse(path, &read_document(path)?)
    }

    /// A document from the text of `path`, checking its schema.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<Document> {
        let mut v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| Error::document(format!("{} is not JSON: {e}", path.display())))?;
        match v.get("schema") {
            Some(serde_json::Value::String(s)) if s == SCHEMA => {}
            other => return Err(crate::results::version::other_schema(path, other)),
        }
        crate::results::unknown::from_null(&mut v);
        serde_json::from_value(v).map_err(|e| {
            Error::document(format!(
                "{} is not a valid iomark/1 document: {e}",
                path.display()
            ))
        })
    }
}

/// The largest results document (iomark's or fio's) read: 256 MiB. An interval point of
/// the series takes about 220 bytes of pretty JSON, so a 24-hour run with 1 s intervals
/// writes about 19 MB and one with 100 ms intervals about 190 MB; parsing takes several
/// times the text in memory, so the limit is not much higher than a real document gets.
pub(crate) const DOCUMENT_MAX: u64 = 256 << 20;

/// The text of a results document (iomark's or fio's JSON output): a regular file of at
/// most [`DOCUMENT_MAX`] bytes.
pub(crate) fn read_document(path: &Path) -> Result<String> {
    crate::results::store::read_document(
        path,
        DOCUMENT_MAX,
        "a results document",
        "give an iomark results file or fio --output-format=json output",
    )
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;

/// What was measured of the data written in one repetition: the results' `data` object.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DataMeasure {
    /// Space saved by lz4 (block format, fast mode), chunk by chunk, percent.
    pub lz4_pct: f64,
    /// Space saved by zstd level 1, chunk by chunk, percent.
    pub zstd_pct: f64,
    /// Duplicate dedup units among those measured, percent; `None` (null) when no whole
    /// unit was written (writes smaller than `--dedup-unit`): no figure, rather than 0.
    pub dedup_pct: Option<f64>,
    /// Bytes of written data the compression figures come from.
    pub compress_sampled_bytes: u64,
    /// Units the dedup figure comes from.
    pub dedup_sampled_units: u64,
}

/// What kind of thing the target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// No target: the null engine.
    None,
    File,
    BlockDevice,
    /// Not known: a run imported from fio's output whose `filename` is outside `/dev/`
    /// (fio's output does not say what it is), or terse output, which names no file.
    Unknown,
}

pub use crate::results::summary::{DirSummary, Summary};
pub use crate::results::targets::{GroupRep, MpiInfo, RunGroup, TargetPart, TargetRep};
pub use crate::results::verify::{BadBlock, BlockState, VerifyReport};

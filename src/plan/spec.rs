//! `Spec`: one fully resolved, validated, serializable description of a workload.
//!
//! The command line builds a `Spec` (plain fields, then [`Spec::validate`]); the runner only
//! reads it. Every check that does not need the target opened happens here, naming the
//! option and the allowed values; those that need it (its size, its logical block size)
//! happen when it is opened, in `target.rs`. This module does no I/O.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::bsmix::{BsMix, WriteBs};
use crate::plan::cache::PageCache;
use crate::plan::data::DataSpec;
use crate::plan::distribution::Distribution;
pub use crate::plan::engine::{Caps, EngineKind, EngineOpts};
use crate::plan::new_file::NewFile;
pub use crate::plan::rw::Rw;
use crate::units::{fmt_size, fmt_sizes_apart};

/// What a run allocates, estimated before it starts (see [`Spec::memory`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Memory {
    /// Every job's I/O buffers: jobs × qd × bs.
    pub buffers: u64,
    /// Every writing job's data samples and hashes.
    pub sampling: u64,
    /// Every writing job's data generator's pool of units (`--data-pool`).
    pub pools: u64,
    /// The generation maps of `--verify`.
    pub verify: u64,
    /// `--file-service`: each job's latency histograms per file it serves.
    pub per_file: u64,
}

impl Memory {
    pub(crate) fn total(&self) -> u64 {
        [self.sampling, self.pools, self.verify, self.per_file]
            .iter()
            .fold(self.buffers, |t, b| t.saturating_add(*b))
    }
}

/// A workload, fully resolved. Field names are the results schema's `spec` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// The file or block device, as given (`"null"` for the null engine without a target).
    pub target: String,
    /// The run's name given with `--name` (otherwise it is made from the workload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The access pattern.
    pub rw: Rw,
    /// Percentage of reads in a mix (`rw`, `randrw`); 100 for reads, 0 for writes.
    pub rwmixread: u8,
    /// Block size in bytes: the size of every I/O.
    pub bs: u64,
    /// Sizes that vary from I/O to I/O (`--bssplit`, `--bsrange`); `bs` is then the
    /// largest of them (the size of every buffer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_mix: Option<BsMix>,
    /// The writes' sizes in a mix (`rw`, `randrw`) whose reads and writes differ
    /// (`--write-bs`, fio's `bs=4k,64k`); `bs` and `bs_mix` are then the reads'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bs: Option<WriteBs>,
    /// Span in bytes, as asked (`--size`); `None` means the whole device, the existing
    /// file's length, or 1 GiB for a new file. The span actually used is in the run.
    pub size: Option<u64>,
    /// Where the span starts, in bytes from the start of the target.
    pub offset: u64,
    /// `--size P%` (fio's `size=P%`): the span is that share of the existing file's or
    /// device's length (to its end at most), set when the target is opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_pct: Option<f64>,
    /// `--offset P%`: the span starts at that share of the target's length (rounded
    /// down to a block), set when the target is opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_pct: Option<f64>,
    /// I/Os in flight per job.
    pub qd: u32,
    /// Worker threads; each works over the whole span (see `docs/ARCHITECTURE.md`).
    pub jobs: u32,
    /// Time-based run length in seconds (after the ramp); `None` for a size-based run.
    pub runtime_s: Option<f64>,
    /// Bytes each job moves in a size-based run; `None` means the span once.
    pub io_size: Option<u64>,
    /// Seconds of I/O before measuring starts; excluded from every figure.
    pub ramp_s: f64,
    /// The ramp's I/Os count towards a size-based run's size (fio's `ramp_time` there).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ramp_in_size: bool,
    /// O_DIRECT (true) or through the page cache (false).
    pub direct: bool,
    /// The engine that ran.
    pub engine: EngineKind,
    /// Why the engine differs from the one asked for, if it does (e.g. io_uring refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_note: Option<String>,
    /// The engine's own options (sync mode, batching, SQPOLL, polling, CPU pinning).
    #[serde(default, skip_serializing_if = "EngineOpts::is_default")]
    pub engine_opts: EngineOpts,
    /// fsync after every N writes per job; 0 = never.
    pub fsync: u32,
    /// A final fsync per job, included in the timing (as IOzone's `-e`).
    pub end_fsync: bool,
    /// Seed of every random choice (offsets, mixes, data).
    pub seed: u64,
    /// Length of one time-series interval in seconds.
    pub interval_s: f64,
    /// In a size-based run each job moves `io_size / io_share`. It is 1 unless a queue
    /// depth was emulated with jobs (psync fallback), so the total volume stays as asked.
    #[serde(default = "one")]
    pub io_share: u32,
    /// What is written: content, compressibility, dedupability.
    #[serde(default)]
    pub data: DataSpec,
    /// Every written block carries a header and is read back and checked after the
    /// writes (see `verify.rs`); jobs then split the span instead of sharing it.
    #[serde(default)]
    pub verify: bool,
    /// `--stonewall`: every target's jobs (every rank's) end when the first target's
    /// have done their work.
    #[serde(default)]
    pub stonewall: bool,
    /// Seconds of rest between repetitions (and between the runs of a study).
    #[serde(default)]
    pub pause_s: f64,
    /// Drop the kernel's page cache before each buffered repetition (root).
    #[serde(default)]
    pub drop_caches: bool,
    /// Each job's cap in bytes per second (`--rate`), reads and writes together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bps: Option<u64>,
    /// Each job's cap in I/Os per second (`--rate-iops`), reads and writes together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<u64>,
    /// The least bytes per second each job must move over every `rate_cycle_ms`
    /// (`--rate-min`, fio's `rate_min`), reads and writes together; the run fails below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_min_bps: Option<u64>,
    /// The least I/Os per second each job must do over every `rate_cycle_ms`
    /// (`--rate-iops-min`, fio's `rate_iops_min`); the run fails below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops_min: Option<u64>,
    /// The cycle over which the minimum rates are measured, milliseconds (`--rate-cycle`,
    /// fio's `rate_cycle`; 1000 when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_cycle_ms: Option<u64>,
    /// Random patterns: I/Os per random seek, the others following on (`--random-run`,
    /// fio's `rw=randread:N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_run: Option<u64>,
    /// A run of `random_run` I/Os repeats its first offset instead of following on
    /// (`--rw-sequencer identical`, fio's `rw_sequencer=identical`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rw_sequencer_identical: bool,
    /// Uniform random offsets as fio's random map: every block once per pass, in an
    /// order drawn afresh each pass (`--random-map`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub random_map: bool,
    /// Page-cache advice and invalidation (`--fadvise`, `--invalidate`).
    #[serde(default, skip_serializing_if = "PageCache::is_default")]
    pub cache: PageCache,
    /// How a file iomark creates is prepared (`--new-file`).
    #[serde(default, skip_serializing_if = "NewFile::is_default")]
    pub new_file: NewFile,
    /// Sequential patterns: bytes between one I/O and the next (`--hole`, `rw=read:SIZE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hole: Option<u64>,
    /// How random offsets are spread over the span (`--random-distribution`).
    #[serde(default, skip_serializing_if = "Distribution::is_uniform")]
    pub random_distribution: Distribution,
    /// Seconds every job waits after the start gate before its first I/O (`--startdelay`,
    /// fio's `startdelay`); excluded from every figure, before the ramp.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub startdelay_s: f64,
    /// With a range (`--startdelay 1s-3s`, fio's `startdelay=1-3`): its high end; each job
    /// then waits a time drawn uniformly from `startdelay_s` to this, and the measurement
    /// starts after this (every job has started by then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startdelay_max_s: Option<f64>,
    /// Microseconds each job pauses after `thinktime_blocks` I/Os have completed, before
    /// it issues the next (`--thinktime`, fio's `thinktime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime_us: Option<u64>,
    /// I/Os issued between pauses (`--thinktime-blocks`; 1 when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime_blocks: Option<u32>,
    /// Microseconds of each pause spent spinning on the CPU, the rest asleep
    /// (`--thinktime-spin`, fio's `thinktime_spin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime_spin_us: Option<u64>,
    /// The pause starts once `thinktime_blocks` I/Os have been issued, not completed
    /// (`--thinktime-blocks-type issue`, fio's `thinktime_blocks_type=issue`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub thinktime_on_issue: bool,
    /// Also pause after issuing I/Os for this many microseconds (`--thinktime-iotime`,
    /// fio's `thinktime_iotime`); then `thinktime_blocks` counts only when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime_iotime_us: Option<u64>,
    /// In a size-based run each job moves this many times the span (`--io-size 2x`);
    /// `io_size` takes precedence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_spans: Option<f64>,
    /// Several targets in one run (`iomark run A B C`): every path in order, the first
    /// being `target`. Each target gets its own `jobs` jobs, and all of them start behind
    /// one gate. Empty for a run on one target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// `--file-service`: every job serves all targets (or its share of them, `split`),
    /// each I/O going to the file the service picks, instead of jobs per target (fio's
    /// `file_service_type` over `filename=a:b` or `nrfiles`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_service: Option<crate::plan::files::FileService>,
}

fn one() -> u32 {
    1
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// Safety and housekeeping choices: not part of the workload, so not in the results.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetPolicy {
    /// Keep a file that iomark created instead of removing it at the end.
    pub keep: bool,
    /// Allow writing an existing file that iomark did not create.
    pub overwrite: bool,
    /// Allow writing a block device.
    pub allow_write_device: bool,
    /// Allow writing a block device that carries a partition table or a filesystem or
    /// volume signature (never one in use).
    pub destroy_data: bool,
    /// With `--verify`: save the expected state of every block here, for `iomark verify`.
    pub verify_state: Option<std::path::PathBuf>,
    /// A study holds the file a run creates for its next runs: at the end of the run the
    /// file stays marked as this process's (so only this process may write it without
    /// `--overwrite`, and a killed study leaves a leftover the next run removes) until the
    /// study releases it (`io::mark::release_held`).
    pub hold: bool,
}

pub(crate) use crate::plan::bounds::{FSYNC, JOBS, QD, REPEAT, RWMIXREAD, RWMIXWRITE};

impl Spec {
    /// A spec with iomark's defaults for everything but the target.
    pub(crate) fn new(target: impl Into<String>) -> Spec {
        Spec {
            target: target.into(),
            label: None,
            rw: Rw::RandRead,
            rwmixread: 50,
            bs: 4096,
            bs_mix: None,
            write_bs: None,
            size: None,
            offset: 0,
            qd: 1,
            jobs: 1,
            runtime_s: None,
            io_size: None,
            ramp_s: 0.0,
            ramp_in_size: false,
            direct: true,
            engine: EngineKind::Psync,
            engine_note: None,
            engine_opts: EngineOpts::default(),
            fsync: 0,
            end_fsync: false,
            seed: 0x10_3A_4C,
            interval_s: 1.0,
            io_share: 1,
            data: DataSpec::default(),
            verify: false,
            stonewall: false,
            pause_s: 0.0,
            drop_caches: false,
            io_spans: None,
            rate_bps: None,
            rate_iops: None,
            rate_min_bps: None,
            rate_iops_min: None,
            rate_cycle_ms: None,
            thinktime_us: None,
            thinktime_blocks: None,
            thinktime_spin_us: None,
            thinktime_on_issue: false,
            thinktime_iotime_us: None,
            startdelay_s: 0.0,
            size_pct: None,
            offset_pct: None,
            startdelay_max_s: None,
            random_distribution: Distribution::Uniform,
            random_run: None,
            rw_sequencer_identical: false,
            random_map: false,
            cache: PageCache::default(),
            new_file: NewFile::default(),
            hole: None,
            targets: Vec::new(),
            file_service: None,
        }
    }

    /// Seconds after the start gate by which every job has started (`--startdelay`, the
    /// high end of a range).
    pub(crate) fn startdelay_end_s(&self) -> f64 {
        self.startdelay_max_s.unwrap_or(self.startdelay_s)
    }

    pub(crate) fn writes(&self) -> bool {
        self.rw.read_pct(self.rwmixread) < 100
    }

    /// Whether any operation of this workload reads.
    pub(crate) fn reads(&self) -> bool {
        self.rw.read_pct(self.rwmixread) > 0
    }

    /// What this run allocates in its process, known before the target is opened.
    pub(crate) fn memory(&self) -> Memory {
        use crate::plan::data::{MAX_UNIT_HASHES, SAMPLE_BUDGET, TRACK_SLOTS, table_backing};
        // Every target has its own jobs, unless the jobs serve the targets
        // (--file-service).
        let jobs = match self.serves_files() {
            true => self.jobs as u64,
            false => self.jobs as u64 * self.target_count() as u64,
        };
        // Each job's BufferPool: qd slots (and one to prepare ahead in) of bs rounded up
        // to the alignment (4 KiB at least; a device may ask for more, which only adds).
        let per_job = crate::plan::engine::buffer_shape(
            self.qd as usize + usize::from(self.prepares_ahead()),
            usize::try_from(self.buf_bs()).unwrap_or(usize::MAX),
            4096,
        )
        .map_or(u64::MAX, |b| b.total as u64);
        let buffers = jobs.saturating_mul(per_job);
        // Each writing job's Sampler: its compression samples, its unit hashes (64 bytes
        // each with empty slots) and its table of frequent contents, in whole huge pages
        // (`workload::huge`); and its data
        // generator's pool of units (and the words under their stamps).
        let writers = jobs * u64::from(self.writes());
        let tables = table_backing(MAX_UNIT_HASHES * 64) + table_backing(TRACK_SLOTS * 8);
        let sampling = writers * ((SAMPLE_BUDGET + tables) as u64);
        let pool = crate::plan::data::pool_backing(self.data.pool_bytes());
        let pools = writers.saturating_mul(pool as u64 * 65 / 64);
        // --verify: 8 bytes per block, three times (the jobs' maps, the repetition's
        // map, the run's), for each target (several with --file-service); counted when
        // the span is known up front.
        let verify = match (self.verify, self.size) {
            (true, Some(size)) => (size / self.bs.max(1))
                .saturating_mul(24)
                .saturating_mul(self.target_count() as u64),
            _ => 0,
        };
        // --file-service: a latency histogram per file and direction in every job
        // (3 significant digits up to an hour: about 270 KiB each).
        let per_file = match self.file_service {
            Some(f) if self.targets.len() > 1 => {
                let files = self.targets.len() as u64 / if f.split { jobs } else { 1 };
                let dirs = u64::from(self.reads()) + u64::from(self.writes());
                jobs.saturating_mul(files).saturating_mul(dirs) * (270 << 10)
            }
            _ => 0,
        };
        Memory {
            buffers,
            sampling,
            pools,
            verify,
            per_file,
        }
    }

    /// Checks everything that can be checked without the target.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.bs == 0 {
            return Err(Error::usage(
                "--bs must be greater than zero (examples: 4k, 128k, 1m)",
            ));
        }
        if self.bs > (1 << 30) {
            return Err(Error::usage(format!(
                "--bs {} is larger than the 1 GiB iomark supports; use a smaller block size",
                fmt_size(self.bs)
            )));
        }
        if self.size == Some(0) {
            return Err(Error::usage(
                "--size must be greater than zero (examples: 64m, 1g); leave it out to use the whole target",
            ));
        }
        self.validate_trim()?;
        if let Some(size) = self.size
            && self.buf_bs() > size
        {
            let opt = match self.buf_bs() > self.bs {
                true => "--write-bs",
                false => "--bs",
            };
            let (bs, size) = fmt_sizes_apart(self.buf_bs(), size);
            return Err(Error::usage(format!(
                "{opt} {bs} is larger than the span --size {size}; use a smaller {opt} or a larger --size",
            )));
        }
        self.validate_verify()?;
        let end = self.offset.checked_add(self.size.unwrap_or(0));
        if end.is_none_or(|e| e > i64::MAX as u64) {
            return Err(Error::usage(
                "--offset plus --size is beyond the largest offset Linux accepts (8 EiB); use smaller values",
            ));
        }
        if self.io_size.is_some_and(|v| v > i64::MAX as u64) {
            return Err(Error::usage("--io-size is too large; use at most 8 EiB"));
        }
        if self.io_size == Some(0) {
            return Err(Error::usage(
                "--io-size must be greater than zero; leave it out to move the span once",
            ));
        }
        if let Some(io) = self.io_size
            && io < self.bs
        {
            return Err(Error::usage(format!(
                "--io-size {} is smaller than --bs {}; each job must move at least one block",
                fmt_size(io),
                fmt_size(self.bs)
            )));
        }
        if self.direct && self.engine.caps().does_io {
            for (opt, v) in [("--bs", self.bs), ("--offset", self.offset)] {
                if !v.is_multiple_of(512) {
                    return Err(Error::usage(format!(
                        "{opt} {v} is not a multiple of 512 bytes, the smallest unit direct I/O accepts; use a multiple of 512 (the device may need 4096) or --buffered"
                    )));
                }
            }
        }
        QD.check(self.qd.into())?;
        JOBS.check(self.jobs.into())?;
        RWMIXREAD.check(self.rwmixread.into())?;
        if let Some(rt) = self.runtime_s
            && rt <= 0.0
        {
            return Err(Error::usage(
                "--runtime must be greater than zero (examples: 10s, 1m); leave it out for a size-based run",
            ));
        }
        if self.interval_s < 0.01 {
            return Err(Error::usage(
                "--interval must be at least 10ms (examples: 1s, 500ms)",
            ));
        }
        if self.qd > self.engine.caps().max_qd {
            // fio's name for it, when one was given ("--engine pvsync" was answered
            // "--engine psync does one I/O at a time").
            let typed = (self.engine_note.as_deref())
                .and_then(|n| n.strip_prefix("fio's "))
                .and_then(|n| n.split_whitespace().next())
                .map_or(String::new(), |w| format!("{w}, which runs as "));
            let comma = if typed.is_empty() { "" } else { "," };
            return Err(Error::usage(format!(
                "--engine {typed}{}{comma} does one I/O at a time per job, so --qd {} cannot be honoured; use --engine io_uring or libaio, or --qd 1 with more --jobs",
                self.engine.name(),
                self.qd
            )));
        }
        self.validate_engine_and_verify()?;
        self.validate_targets()?;
        // Checked for reads too: a new file is laid out with the data options.
        self.data.validate(self.bs)?;
        self.validate_mix_data()?;
        if let Some(w) = &self.write_bs {
            self.data.validate(w.bs)?;
        }
        if self.engine == EngineKind::IoUring && self.qd > 32768 {
            return Err(Error::usage(
                "--qd is too deep for io_uring; use at most 4096",
            ));
        }
        Ok(())
    }

    /// Each size of a mix (`--bssplit`, `--bsrange`, `--write-bs`) holds whole chunks and
    /// dedup units, as `--bs` must: a 4 KiB write of a `--bssplit 4k/50:64k/50` cannot
    /// hold an 8 KiB chunk (accepted until 2026-11-29, its figures 2.6 points under the
    /// share asked). `iomark data` checks it too.
    pub(crate) fn validate_mix_data(&self) -> Result<()> {
        let reads = self.bs_mix.as_ref().map(|m| (m.opt(), m));
        let writes = (self.write_bs.as_ref())
            .and_then(|w| w.mix.as_ref())
            .map(|m| (format!("--write-bs {}", m.text()), m));
        for (opt, mix) in reads.into_iter().chain(writes) {
            for size in mix.sizes() {
                let what = format!("the {opt} size {}", crate::units::fmt_size(size));
                self.data.validate_size(size, &what)?;
            }
        }
        Ok(())
    }

    /// The checks of `validate` on the engine's options, `--verify` and a block-size mix.
    fn validate_engine_and_verify(&self) -> Result<()> {
        self.engine_opts.check(self.engine, self.qd, self.direct)?;
        if self.engine_opts.hipri && (self.fsync > 0 || self.end_fsync) {
            return Err(Error::usage(
                "--hipri rings poll reads and writes only and cannot flush; drop --fsync/--end-fsync or --hipri",
            ));
        }
        if self.verify {
            if !self.writes() {
                return Err(Error::usage(format!(
                    "--verify checks what a run writes, and --rw {} writes nothing; use a write or mixed workload, or `iomark verify` on a kept target",
                    self.rw.name()
                )));
            }
            if self.bs < 512 {
                return Err(Error::usage(
                    "--verify needs --bs of at least 512 (each block carries a 40-byte header)",
                ));
            }
            if !self.engine.caps().needs_fd {
                return Err(Error::usage(
                    "--verify reads back what was written; --engine null writes nothing",
                ));
            }
        }
        if let Some(w) = &self.write_bs {
            w.validate(self.direct && self.engine.caps().does_io)?;
            if !self.rw.is_mixed() {
                return Err(Error::usage(format!(
                    "--write-bs sizes the writes of a mix; --rw {} has one direction: give its size with --bs",
                    self.rw.name()
                )));
            }
            if self.verify {
                return Err(Error::usage(
                    "--verify checks fixed-size blocks; drop --write-bs or --verify",
                ));
            }
        }
        if let Some(m) = &self.bs_mix {
            m.validate(self.direct && self.engine.caps().does_io)?;
            if self.verify {
                return Err(Error::usage(format!(
                    "--verify checks fixed-size blocks; drop {} or --verify",
                    m.opt()
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rw_names_round_trip() {
        for rw in Rw::ALL {
            assert_eq!(Rw::parse(rw.name()), Some(rw));
        }
        assert_eq!(Rw::parse("readwrite"), None);
        assert_eq!(Rw::RandRw.read_pct(70), 70);
        assert_eq!(Rw::Read.read_pct(70), 100);
        assert_eq!(Rw::RandWrite.read_pct(70), 0);
    }

    #[test]
    fn validation_rejects_what_it_should() {
        let ok = Spec::new("f");
        assert!(ok.validate().is_ok());
        type Mutation = Box<dyn Fn(&mut Spec)>;
        let cases: Vec<(Mutation, &str)> = vec![
            (Box::new(|s| s.bs = 0), "--bs"),
            (Box::new(|s| s.size = Some(0)), "--size"),
            (
                Box::new(|s| {
                    s.size = Some(4096);
                    s.bs = 8192
                }),
                "larger than the span",
            ),
            (Box::new(|s| s.qd = 0), "--qd"),
            (Box::new(|s| s.jobs = 0), "--jobs"),
            (Box::new(|s| s.rwmixread = 101), "--rwmixread"),
            (Box::new(|s| s.runtime_s = Some(0.0)), "--runtime"),
            (
                Box::new(|s| {
                    s.engine = EngineKind::Psync;
                    s.qd = 8
                }),
                "psync",
            ),
        ];
        for (mutate, needle) in cases {
            let mut s = Spec::new("f");
            mutate(&mut s);
            let err = s.validate().expect_err(needle).to_string();
            assert!(err.contains(needle), "{err:?} should mention {needle}");
            assert!(!err.contains('\n'), "one line: {err:?}");
        }
    }
}

//! Resolution of the run options into validated plans: every option parsed, checked and
//! turned into a [`Spec`] and a [`TargetPolicy`]. The command line and the studies both
//! come here, so each check is written once (the rest are in `Spec::validate` and
//! `DataSpec::validate`). No I/O on targets: what the system offers comes in a [`System`].

use crate::error::{Error, Result};
use crate::plan::bsmix::{BsMix, WriteBs};
use crate::plan::data::{CompressMethod, DataKind, DataSpec};
use crate::plan::options::RunOptions;
use crate::plan::resolve_bs::{decimal_block, memory_multiple};
use crate::plan::spec::{self, EngineKind, EngineOpts, Rw, Spec, TargetPolicy};
use crate::plan::{Output, RunPlan, StudyPoint, StudyRun, System};
use crate::units::{parse_duration, parse_size};

pub(crate) fn size_opt(opt: &str, text: &str) -> Result<u64> {
    parse_size(text).map_err(|e| Error::usage(format!("{opt}: {e}")))
}

pub(crate) fn duration_opt(opt: &str, text: &str) -> Result<f64> {
    parse_duration(text)
        .map(|d| d.as_secs_f64())
        .map_err(|e| Error::usage(format!("{opt}: {e}")))
}

pub(crate) fn count_opt<T: std::str::FromStr>(opt: &str, text: &str, what: &str) -> Result<T> {
    text.trim()
        .parse()
        .map_err(|_| Error::usage(format!("{opt}: '{text}' is not {what}")))
}

/// Picks the engine: the one asked for, or io_uring when the kernel allows it, else psync.
/// Returns the engine and a note when it differs from what a user would expect.
pub(crate) fn resolve_engine(
    asked: Option<&str>,
    sys: &System,
) -> Result<(EngineKind, Option<String>)> {
    match asked {
        Some(fio @ ("sync" | "pvsync")) => Ok((
            EngineKind::Psync,
            Some(format!(
                "fio's {fio} engine runs as psync (pread/pwrite): the same synchronous I/O, one request per call"
            )),
        )),
        Some(name) => {
            let kind = EngineKind::parse(name).ok_or_else(|| {
                Error::usage(format!(
                    "--engine {name} is unknown; use io_uring, libaio, psync, mmap or null"
                ))
            })?;
            if kind == EngineKind::IoUring
                && let Err(why) = sys.io_uring.clone()
            {
                return Err(Error::usage(format!(
                    "--engine io_uring is not available: {why}; use --engine psync"
                )));
            }
            Ok((kind, None))
        }
        None => match sys.io_uring.clone() {
            Ok(()) => Ok((EngineKind::IoUring, None)),
            Err(why) => Ok((
                EngineKind::Psync,
                Some(format!("io_uring is not available ({why}); using psync")),
            )),
        },
    }
}

/// The target as given, "null" for the null engine without one.
fn target_of(target: Option<&str>, engine: EngineKind) -> Result<String> {
    match (target, engine) {
        (Some(""), _) => Err(Error::usage(
            "the TARGET is empty; name a file (e.g. ./test.dat) or a block device",
        )),
        (Some(t), _) => Ok(t.to_string()),
        (None, EngineKind::Null) => Ok("null".to_string()),
        (None, _) => Err(Error::usage(
            "no TARGET given; name a file (e.g. ./test.dat) or a block device, or use --engine null",
        )),
    }
}

impl RunOptions {
    /// Block size, span, offset and I/O size into `spec` (whose engine is set); the notes
    /// saying what a size resolved to (`2xmem`, a decimal block size).
    fn sizes(&self, spec: &mut Spec, sys: &System) -> Result<Vec<String>> {
        if let Some((r, w)) = self.text_or_default("bs").split_once(',') {
            return Err(Error::usage(format!(
                "--bs {r},{w}: one size per run; for writes of another size in a mix give --write-bs (e.g. --bs {r} --write-bs {w}); iomark suite sweeps a list"
            )));
        }
        spec.bs = size_opt("--bs", self.text_or_default("bs"))?;
        let mut notes = Vec::new();
        if let Some(note) = decimal_block(self.text_or_default("bs"), spec.bs) {
            // 4KB is 4000 bytes here and 4096 in fio: say so, and refuse it for direct I/O.
            if !self.on("buffered") && spec.engine.caps().does_io {
                return Err(Error::usage(format!(
                    "{note}; direct I/O needs a multiple of 512"
                )));
            }
            notes.push(note);
        }
        spec.bs_mix = BsMix::of_options(self.text("bssplit"), self.text("bsrange"), size_opt)?;
        if let Some(m) = &spec.bs_mix {
            if self.given("bs") {
                return Err(Error::usage(format!(
                    "--bs and {} both set the block size; give one of them",
                    m.opt()
                )));
            }
            // A split of one size, or a range of one, is that size (as fio's bssplit=4k/100).
            let one = WriteBs::of(m.max(), Some(m.clone()));
            (spec.bs, spec.bs_mix) = (one.bs, one.mix);
        }
        if let Some(note) = self.write_bs(spec)? {
            notes.push(note);
        }
        let pct = |opt: &str, t: &str, zero_ok: bool| -> Result<Option<f64>> {
            let Some(p) = t.trim().strip_suffix('%') else {
                return Ok(None);
            };
            match p.trim().parse::<f64>() {
                Ok(v) if v <= 100.0 && (v > 0.0 || zero_ok && v == 0.0) => Ok(Some(v)),
                _ => Err(Error::usage(format!(
                    "--{opt} {t}: a percentage of the target's length is above 0 and at most 100 (e.g. 50%)"
                ))),
            }
        };
        spec.size_pct = self
            .text("size")
            .map(|t| pct("size", t, false))
            .transpose()?
            .flatten();
        spec.offset_pct = (self.text("offset").map(|t| pct("offset", t, true)))
            .transpose()?
            .flatten();
        if (spec.size_pct.is_some() || spec.offset_pct.is_some()) && !spec.engine.caps().does_io {
            return Err(Error::usage(
                "--size or --offset as a percentage is a share of the target's length; --engine null has no target: give bytes",
            ));
        }
        spec.size = match self.text("size").filter(|_| spec.size_pct.is_none()) {
            Some(t) => Some(match memory_multiple(t, sys)? {
                Some((bytes, note)) => {
                    notes.push(note);
                    bytes
                }
                None => size_opt("--size", t)?,
            }),
            None => None,
        };
        if spec.offset_pct.is_none() {
            spec.offset = size_opt("--offset", self.text_or_default("offset"))?;
        }
        match self.text("io-size") {
            Some(t) if t.trim().ends_with(['x', 'X']) => {
                let n: f64 = t.trim()[..t.trim().len() - 1].parse().map_err(|_| {
                    Error::usage(format!(
                        "--io-size: '{t}' is not a size or a multiple of the span (e.g. 1g, 2x)"
                    ))
                })?;
                if !(n > 0.0 && n.is_finite()) {
                    return Err(Error::usage(format!(
                        "--io-size {t} must be a positive multiple of the span"
                    )));
                }
                spec.io_spans = Some(n);
            }
            other => spec.io_size = other.map(|s| size_opt("--io-size", s)).transpose()?,
        }
        Ok(notes)
    }

    /// Resolves and validates everything, for `target` (none: only with --engine null).
    pub(crate) fn resolve(
        &self,
        target: Option<&str>,
        out: Output,
        sys: &System,
    ) -> Result<RunPlan> {
        self.check_requires()?;
        let rw = Rw::parse(self.text_or_default("rw")).ok_or_else(|| {
            Error::usage(format!(
                "--rw {} is unknown; use read, write, randread, randwrite, rw or randrw",
                self.text_or_default("rw")
            ))
        })?;
        let rwmixread = self.mix()?;
        if (self.given("rwmixread") || self.given("rwmixwrite")) && !rw.is_mixed() {
            let flag = match self.given("rwmixwrite") {
                true => "--rwmixwrite",
                false => "--rwmixread",
            };
            return Err(Error::usage(format!(
                "{flag} applies to mixes (--rw rw or randrw), not to --rw {}; drop it or use a mix",
                rw.name()
            )));
        }
        let (engine, engine_note) = resolve_engine(self.text("engine"), sys)?;
        let unused = crate::plan::resolve_bs::unused_target(target, engine);
        let target = target_of(target, engine)?;
        let qd: i64 = count_opt("--qd", self.text_or_default("qd"), "a whole number")?;
        let jobs: i64 = count_opt("--jobs", self.text_or_default("jobs"), "a whole number")?;
        let repeat: i64 = count_opt("--repeat", self.text_or_default("repeat"), "a whole number")?;
        let fsync: i64 = count_opt("--fsync", self.text_or_default("fsync"), "a whole number")?;
        spec::QD.check(qd)?;
        spec::JOBS.check(jobs)?;
        spec::REPEAT.check(repeat)?;
        spec::FSYNC.check(fsync)?;
        let seed: u64 = count_opt(
            "--seed",
            self.text_or_default("seed"),
            "a non-negative whole number",
        )?;
        let mut spec = Spec::new(target);
        spec.rw = rw;
        // Recorded as what ran: 100 for pure reads, 0 for pure writes.
        spec.rwmixread = rw.read_pct(rwmixread as u8);
        spec.engine = engine;
        let mut notes = self.sizes(&mut spec, sys)?;
        notes.extend(unused);
        spec.qd = qd as u32;
        spec.jobs = jobs as u32;
        spec.runtime_s = self
            .text("runtime")
            .map(|s| duration_opt("--runtime", s))
            .transpose()?;
        if self.on("time-based") && spec.runtime_s.is_none() {
            return Err(Error::usage(
                "--time-based needs --runtime: it runs the whole runtime (e.g. --runtime 30s)",
            ));
        }
        notes.extend(self.time_based(&mut spec));
        spec.label = self.text("name").map(str::to_string);
        if spec.label.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(Error::usage(
                "--name is empty; give the run a name or drop --name",
            ));
        }
        spec.ramp_s = duration_opt("--ramp", self.text_or_default("ramp"))?;
        spec.direct = !self.on("buffered");
        if let Some(note) = self.engine_fit(&mut spec)? {
            notes.push(note);
        }
        notes.extend(spec.engine_opts.idle_batch_submit());
        spec.engine_note = engine_note;
        spec.fsync = fsync as u32;
        self.pacing(&mut spec)?;
        notes.extend(crate::plan::resolve_pace::coarse_rate(&spec));
        notes.extend(crate::plan::resolve_pace::unchecked_minimum(&spec));
        crate::plan::cache::resolve(self, &mut spec)?;
        notes.extend(crate::plan::cache::idle_with_direct(self, &spec));
        crate::plan::new_file::resolve(self, &mut spec)?;
        spec.end_fsync = self.on("end-fsync");
        notes.extend(crate::plan::cache::idle_syncs(&spec));
        spec.seed = seed;
        spec.interval_s = duration_opt("--interval", self.text_or_default("interval"))?;
        spec.data = self.data_spec()?;
        spec.verify = self.on("verify");
        notes.extend(crate::plan::data::zero_units(&spec));
        spec.file_service = crate::plan::files::resolve(self)?;
        spec.stonewall = self.on("stonewall");
        spec.pause_s = duration_opt("--pause", self.text("pause").unwrap_or("0"))?;
        spec.drop_caches = self.on("drop-caches");
        if self.on("drop-caches") && !sys.root {
            return Err(Error::usage(
                "--drop-caches writes /proc/sys/vm/drop_caches, which needs root; run as root or drop the option",
            ));
        }
        if spec.qd > spec.engine.caps().max_qd && self.text("engine").is_none() {
            // The default engine fell back to psync: keep the concurrency asked for.
            spec.engine_note = Some(format!(
                "{}; QD {} emulated by {} jobs",
                spec.engine_note.take().unwrap_or_default(),
                spec.qd,
                spec.qd * spec.jobs
            ));
            spec.io_share = spec.qd;
            spec.jobs *= spec.qd;
            spec.qd = 1;
        }
        notes.extend(crate::plan::resolve_pace::think_depth(&spec));
        if !notes.is_empty() {
            let all = spec.engine_note.take().into_iter().chain(notes);
            spec.engine_note = Some(all.collect::<Vec<_>>().join("; "));
        }
        spec.validate()?;
        Ok(RunPlan {
            spec,
            policy: TargetPolicy {
                keep: self.on("keep"),
                overwrite: self.on("overwrite"),
                allow_write_device: self.on("allow-write-device"),
                destroy_data: self.on("destroy-data"),
                verify_state: self.text("verify-state").map(std::path::PathBuf::from),
                hold: false,
            },
            repeat: repeat as u32,
            out,
        })
    }
}

impl RunOptions {
    /// The engine options into `spec` (whose engine, depth and direct flag are set), and
    /// the note a choice deserves: mmap runs buffered, buffered libaio is synchronous.
    fn engine_fit(&self, spec: &mut Spec) -> Result<Option<String>> {
        spec.engine_opts = EngineOpts::from_options(self)?;
        let mut note = None;
        if spec.direct && !spec.engine.caps().direct {
            if self.given("direct") {
                return Err(Error::usage(format!(
                    "--engine {} copies through the page cache and cannot bypass it; drop --direct (it runs buffered)",
                    spec.engine.name()
                )));
            }
            spec.direct = false;
            note = Some(format!(
                "--engine {} goes through the page cache: running buffered",
                spec.engine.name()
            ));
        }
        if spec.engine == EngineKind::Libaio && !spec.direct {
            note = Some(
                "libaio is asynchronous only with O_DIRECT: buffered, each io_submit does the I/O before it returns"
                    .to_string(),
            );
        }
        Ok(note)
    }

    /// The share of reads in a mix: --rwmixread, or 100 - fio's --rwmixwrite (both, when
    /// they add up to 100).
    fn mix(&self) -> Result<i64> {
        let read = match self.text("rwmixwrite") {
            Some(w) => {
                let w: i64 = count_opt("--rwmixwrite", w, "a percentage")?;
                spec::RWMIXWRITE.check(w)?;
                if let Some(r) = self.text("rwmixread").filter(|_| self.given("rwmixread")) {
                    let r: i64 = count_opt("--rwmixread", r, "a percentage")?;
                    if r + w != 100 {
                        return Err(Error::usage(format!(
                            "--rwmixread {r} and --rwmixwrite {w} both set the mix and do not add up to 100; give one of them"
                        )));
                    }
                }
                100 - w
            }
            None => count_opt(
                "--rwmixread",
                self.text_or_default("rwmixread"),
                "a percentage",
            )?,
        };
        spec::RWMIXREAD.check(read)?;
        Ok(read)
    }

    /// Resolves the data options; they are checked against the block size later.
    pub(crate) fn data_spec(&self) -> Result<DataSpec> {
        let pct = |opt: &str, v: Option<&str>| -> Result<Option<f64>> {
            v.map(|t| {
                let x: f64 = t.trim().trim_end_matches('%').parse().map_err(|_| {
                    Error::usage(format!("{opt}: '{t}' is not a percentage (0 to 100)"))
                })?;
                if !(0.0..=100.0).contains(&x) {
                    return Err(Error::usage(format!(
                        "{opt} {t} is out of range; use a percentage from 0 to 100"
                    )));
                }
                Ok(x)
            })
            .transpose()
        };
        let compress = pct("--compress", self.text("compress"))?;
        let dedup = pct("--dedup", self.text("dedup"))?;
        let mut d = DataSpec {
            compress_chunk: size_opt("--compress-chunk", self.text_or_default("compress-chunk"))?,
            dedup_unit: size_opt("--dedup-unit", self.text_or_default("dedup-unit"))?,
            compress_method: if self.text_or_default("compress-method") == "repeat" {
                CompressMethod::Repeat
            } else {
                CompressMethod::Zerofill
            },
            dedup: dedup.unwrap_or(0.0),
            refill: self.on("refill"),
            pool: size_opt("--data-pool", self.text_or_default("data-pool"))?,
            ..DataSpec::default()
        };
        if let Some(n) = self.text("dedup-set") {
            let v: u64 = count_opt("--dedup-set", n, "a whole number")?;
            d.dedup_set = Some(v);
        }
        let kind = self.text("data").unwrap_or(if compress.is_some() {
            "compressible"
        } else {
            "random"
        });
        let (name, arg) = match kind.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (kind, None),
        };
        d.kind = match (name, arg) {
            ("random", None) => DataKind::Random,
            ("zeros", None) => DataKind::Zeros,
            ("compressible", None) => DataKind::Compressible,
            ("pattern", Some(hex)) => {
                if crate::plan::data::parse_hex(hex).is_none() {
                    let digits = hex.trim().trim_start_matches("0x").trim_start_matches("0X");
                    let why = if digits.is_empty() {
                        "no bytes given: write them in hex after the colon"
                    } else if !digits.chars().all(|c| c.is_ascii_hexdigit()) {
                        "not hex digits (0-9, a-f): write the bytes in hex"
                    } else {
                        "an odd number of hex digits: write two per byte"
                    };
                    return Err(Error::usage(format!(
                        "--data pattern:{hex}: {why} (e.g. pattern:deadbeef)"
                    )));
                }
                d.pattern = Some(hex.trim_start_matches("0x").to_lowercase());
                DataKind::Pattern
            }
            ("files", Some(path)) if !path.is_empty() => {
                d.files = Some(path.to_string());
                DataKind::Files
            }
            _ => {
                return Err(Error::usage(format!(
                    "--data {kind} is unknown; use random, zeros, pattern:HEX, compressible or files:PATH"
                )));
            }
        };
        match (d.kind, compress) {
            (DataKind::Compressible, Some(c)) => d.compress = c,
            (DataKind::Compressible, None) => {
                return Err(Error::usage(
                    "--data compressible needs --compress PCT (e.g. --compress 50)",
                ));
            }
            (_, Some(_)) => {
                return Err(Error::usage(format!(
                    "--compress applies to compressible data, not to --data {kind}; drop one of them"
                )));
            }
            _ => {}
        }
        // Options that shape nothing here would be parsed and ignored.
        if self.given("compress-method") && d.kind != DataKind::Compressible {
            return Err(Error::usage(format!(
                "--compress-method shapes compressible data (--compress PCT), not --data {kind}; give --compress or drop --compress-method"
            )));
        }
        if d.refill && d.kind == DataKind::Files {
            return Err(Error::usage(
                "--refill regenerates generated data, zeros or a pattern for every write; --data files: copies the files' bytes into every write already: drop --refill",
            ));
        }
        if self.given("dedup-set") && dedup.is_none() {
            return Err(Error::usage(
                "--dedup-set bounds the repeats of --dedup PCT, which is not given; give --dedup (e.g. --dedup 50 --dedup-set 100) or drop --dedup-set",
            ));
        }
        if self.given("data-pool") && !d.pooled() {
            return Err(Error::usage(format!(
                "--data-pool applies to pooled random or compressible data, not to {}; drop --data-pool",
                if d.refill {
                    "--refill".to_string()
                } else {
                    format!("--data {kind}")
                }
            )));
        }
        Ok(d)
    }
}

/// Resolves every planned run of a study into a run plan, labelled with its study point.
/// `matrix` (file name, text) lets a message name the line of the option it is about.
pub(crate) fn study_runs(
    name: &str,
    planned: &[crate::plan::suite::PlannedRun],
    study_user: &[crate::plan::suite::Opt],
    target: &str,
    matrix: Option<(&str, &str)>,
    sys: &System,
) -> Result<Vec<StudyRun>> {
    use crate::plan::suite::{Opt, dedup, merge};
    let is_mix = |opts: &[Opt]| {
        let rw = opts.iter().rev().find(|(k, _)| k == "rw");
        rw.and_then(|(_, v)| Rw::parse(v.as_deref()?))
            .is_some_and(Rw::is_mixed)
    };
    let merged: Vec<Vec<Opt>> = planned
        .iter()
        .map(|p| dedup(merge(p, study_user)))
        .collect();
    if study_user.iter().any(|(k, _)| k == "rwmixread") && !merged.iter().any(|o| is_mix(o)) {
        return Err(Error::usage(format!(
            "--rwmixread applies to mixes (--rw rw or randrw), and suite {name} runs none; drop it or add --rw randrw"
        )));
    }
    let mut runs = Vec::new();
    for (p, mut opts) in planned.iter().zip(merged) {
        // The mix share means nothing to a run that only reads or only writes.
        if !is_mix(&opts) {
            opts.retain(|(k, _)| k != "rwmixread");
        }
        let at_line = |e: String| match &matrix {
            Some((file, text)) => {
                // Name the matrix line of the first option the message mentions.
                let line = opts
                    .iter()
                    .find(|(k, _)| e.contains(&format!("--{k}")))
                    .and_then(|(k, _)| {
                        let key_u = k.replace('-', "_");
                        text.lines().position(|l| {
                            let t = l.trim_start();
                            [k.as_str(), key_u.as_str()].iter().any(|key| {
                                t.strip_prefix(key)
                                    .is_some_and(|r| r.trim_start().starts_with('='))
                            })
                        })
                    })
                    .map_or(String::new(), |i| format!(" line {}", i + 1));
                format!("{file}{line}: {e}")
            }
            None => e,
        };
        let plan = RunOptions::from_opts(&opts)
            .and_then(|o| o.resolve(Some(target), Output::default(), sys))
            .map_err(|e| match e {
                Error::Usage(m) => Error::usage(at_line(m)),
                other => other,
            })?;
        runs.push(StudyRun {
            plan,
            point: StudyPoint {
                suite: name.to_string(),
                test: p.test.clone(),
                param: p.param.clone(),
                value: p.value.clone(),
            },
        });
    }
    Ok(runs)
}

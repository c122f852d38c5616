//! What a run tells the kernel's page cache about its files (`--fadvise`, fio's
//! `fadvise_hint`) and when it drops their cached pages (`--invalidate`, fio's
//! `invalidate`), and fio's random map (`--random-map`). Only buffered I/O is affected
//! by the first two; `docs/fio.md` says how each compares with fio. And whether a run's
//! buffered writes may still be in the cache when its window closes, and which of these
//! options (and of the syncs) a run was given that cannot act on it.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::run_options::RunOptions;
use crate::plan::spec::Spec;

/// Whether the page cache may still hold part of what a run wrote when its window closes:
/// buffered writes that nothing flushes (no `--end-fsync`, no `--fsync`, no
/// `--sync-mode`); trims write no data. The device's write counters then lag what
/// iomark wrote.
pub fn holds_writes(spec: &Spec) -> bool {
    spec.writes()
        && spec.rw.writes_data()
        && !spec.direct
        && !spec.end_fsync
        && spec.fsync == 0
        && spec.engine_opts.sync_mode.is_none()
}

/// A note when syncs were given to a job they cannot act on (accepted, as fio accepts
/// them: a job file's `[global]` section sets them for every job): all of them on a job
/// that only reads, and `--fsync N` (which counts writes) on one that only trims; the
/// flushes of the null engine, which opens no target (they are then not made).
pub(crate) fn idle_syncs(spec: &Spec) -> Option<String> {
    let by_rw = idle_syncs_of_rw(spec);
    if spec.engine.caps().does_io {
        return by_rw;
    }
    // The null engine: what the pattern left unsaid.
    let said = |what: &str| by_rw.as_deref().is_some_and(|n| n.contains(what));
    let mut null = Vec::new();
    if spec.fsync > 0 && !said("--fsync") {
        null.push(format!("--fsync {}", spec.fsync));
    }
    if spec.end_fsync && !said("--end-fsync") {
        null.push("--end-fsync".into());
    }
    let null = (!null.is_empty()).then(|| {
        format!(
            "{} {} nothing here: --engine null opens no target to flush",
            null.join(", "),
            if null.len() == 1 { "does" } else { "do" }
        )
    });
    match (by_rw, null) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    }
}

/// `idle_syncs` by the access pattern alone.
fn idle_syncs_of_rw(spec: &Spec) -> Option<String> {
    let mut given = Vec::new();
    if spec.fsync > 0 && !spec.rw.writes_data() {
        given.push(format!("--fsync {}", spec.fsync));
    }
    if !spec.writes() {
        if spec.end_fsync {
            given.push("--end-fsync".into());
        }
        match spec.engine_opts.sync_mode {
            crate::plan::engine::SyncMode::None => {}
            crate::plan::engine::SyncMode::Sync => given.push("--sync-mode sync".into()),
            crate::plan::engine::SyncMode::Dsync => given.push("--sync-mode dsync".into()),
        }
    }
    let why = match spec.writes() {
        true => "writes no data, and --fsync counts writes",
        false => "writes nothing to sync",
    };
    (!given.is_empty()).then(|| {
        format!(
            "{} {} nothing here: --rw {} {why}",
            given.join(", "),
            if given.len() == 1 { "does" } else { "do" },
            spec.rw.name()
        )
    })
}

/// The access pattern advised with `posix_fadvise` on every file a run's workers use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fadvise {
    /// No advice: the kernel's readahead heuristics (iomark's default; fio's
    /// `fadvise_hint=0`).
    #[default]
    None,
    /// `POSIX_FADV_RANDOM` for a random pattern (no readahead), `POSIX_FADV_SEQUENTIAL`
    /// for a sequential one (fio's default, `fadvise_hint=1`).
    Auto,
    /// `POSIX_FADV_RANDOM` whatever the pattern.
    Random,
    /// `POSIX_FADV_SEQUENTIAL` whatever the pattern.
    Sequential,
}

/// When a run drops its files' cached pages (`POSIX_FADV_DONTNEED` over the span; a
/// block device's buffers are flushed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Invalidate {
    /// Before each repetition (iomark's default).
    #[default]
    Rep,
    /// Before each repetition and, in a buffered run, each time a job has issued a
    /// span's worth of I/O (a pass over the file; time-based, or an `--io-size` beyond
    /// the span), as fio's `invalidate=1`.
    Pass,
    /// Never (fio's `invalidate=0`): a repetition starts with what the cache holds.
    Off,
}

/// A run's page-cache choices; the results schema's `cache` (left out when default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PageCache {
    #[serde(default, skip_serializing_if = "is_default")]
    pub fadvise: Fadvise,
    #[serde(default, skip_serializing_if = "is_default")]
    pub invalidate: Invalidate,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl PageCache {
    pub fn is_default(&self) -> bool {
        *self == PageCache::default()
    }

    /// The advice for a run whose pattern is random or not: `Some(true)` random,
    /// `Some(false)` sequential, `None` no advice.
    pub fn advice(&self, random: bool) -> Option<bool> {
        match self.fadvise {
            Fadvise::None => None,
            Fadvise::Auto => Some(random),
            Fadvise::Random => Some(true),
            Fadvise::Sequential => Some(false),
        }
    }
}

impl Fadvise {
    pub fn name(self) -> &'static str {
        match self {
            Fadvise::None => "none",
            Fadvise::Auto => "auto",
            Fadvise::Random => "random",
            Fadvise::Sequential => "sequential",
        }
    }
}

impl Invalidate {
    pub fn name(self) -> &'static str {
        match self {
            Invalidate::Rep => "rep",
            Invalidate::Pass => "pass",
            Invalidate::Off => "off",
        }
    }
}

/// Whether a job's pages are dropped after each pass over its span: `--invalidate pass`
/// and buffered (direct I/O has no pages to drop), as fio's `invalidate=1` does in any
/// job that goes over its file more than once, time-based or with an `io_size` beyond
/// the file (4 KiB random reads of a 1 MiB span on a loop device, `io_size=8m`: 2048
/// device reads, 256 with `invalidate=0`). A job that goes over it once has no pass end.
pub(crate) fn drops_per_pass(spec: &Spec) -> bool {
    spec.cache.invalidate == Invalidate::Pass && !spec.direct
}

/// A note when `--fadvise` (other than `none`) or `--invalidate pass` was given to a
/// direct run, on which neither acts: direct I/O has no readahead to advise and keeps no
/// pages of its own to drop (the pages dropped before each repetition are dropped anyway).
pub(crate) fn idle_with_direct(o: &RunOptions, spec: &Spec) -> Option<String> {
    if !spec.direct {
        return None;
    }
    let mut given = Vec::new();
    if o.given("fadvise") && spec.cache.fadvise != Fadvise::None {
        given.push(format!("--fadvise {}", o.text_or_default("fadvise")));
    }
    if o.given("invalidate") && spec.cache.invalidate == Invalidate::Pass {
        given.push("--invalidate pass".to_string());
    }
    if o.on("drop-caches") {
        given.push("--drop-caches".to_string());
    }
    (!given.is_empty()).then(|| {
        format!(
            "{} {} nothing with direct I/O, which bypasses the page cache; drop {} or use --buffered",
            given.join(", "),
            if given.len() == 1 { "does" } else { "do" },
            if given.len() == 1 { "it" } else { "them" },
        )
    })
}

/// Reads `--fadvise`, `--invalidate` and `--random-map` into `spec`.
pub(crate) fn resolve(o: &RunOptions, spec: &mut Spec) -> Result<()> {
    // The mmap engine advises its mapping (`madvise`) by the pattern unless told
    // otherwise, as fio's with its default `fadvise_hint=1`; other engines none.
    let mmap = spec.engine == crate::plan::engine::EngineKind::Mmap;
    let fadvise = match (o.given("fadvise"), mmap) {
        (false, true) => "auto",
        _ => o.text_or_default("fadvise"),
    };
    spec.cache.fadvise = match fadvise {
        "none" => Fadvise::None,
        "auto" => Fadvise::Auto,
        "random" => Fadvise::Random,
        "sequential" => Fadvise::Sequential,
        other => {
            return Err(Error::usage(format!(
                "--fadvise {other} is unknown; use auto, none, random or sequential"
            )));
        }
    };
    spec.cache.invalidate = match o.text_or_default("invalidate") {
        "rep" => Invalidate::Rep,
        "pass" => Invalidate::Pass,
        "off" => Invalidate::Off,
        other => {
            return Err(Error::usage(format!(
                "--invalidate {other} is unknown; use rep, pass or off"
            )));
        }
    };
    spec.random_map = o.on("random-map");
    if spec.random_map {
        let why = if !spec.rw.is_random() {
            Some(format!("--rw {} is sequential", spec.rw.name()))
        } else if spec.bs_mix.is_some() || spec.write_bs.is_some() {
            Some(
                "a block-size mix (--bssplit, --bsrange, --write-bs) has I/Os of several sizes"
                    .into(),
            )
        } else if !spec.random_distribution.is_uniform() {
            Some("--random-distribution draws blocks unevenly".into())
        } else if spec.random_run.is_some() {
            Some("--random-run follows each random offset with others".into())
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::usage(format!(
                "--random-map draws every block of the span once per pass, one block size at uniformly random places, and {why}; drop --random-map"
            )));
        }
    }
    Ok(())
}

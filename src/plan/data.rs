//! The data options of a workload ([`DataSpec`]): what kind of content is written, how
//! compressible and dedupable it is asked to be. Generation lives in `workload::data`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::units::fmt_size;

/// Bytes of written chunks each writing job keeps to measure compressibility (the
/// `Sampler`'s budget).
pub(crate) const SAMPLE_BUDGET: usize = 4 << 20;
/// Bytes of pre-generated units per writing job by default (`--data-pool`; a pool holds
/// at least two units). Twice the window of zstd at its highest level (8 MiB), far beyond
/// lz4's (64 KiB) and deflate's (32 KiB), so a unit's bytes come back (under other
/// stamps) only after every common compressor has forgotten them; and large enough that
/// the writes in flight (queue depth × block size) rarely need a unit still lent to
/// another write.
pub(crate) const POOL_BYTES: usize = 16 << 20;
/// The smallest and largest `--data-pool`.
pub(crate) const POOL_MIN: u64 = 64 << 10;
pub(crate) const POOL_MAX: u64 = 1 << 30;

fn default_pool() -> u64 {
    POOL_BYTES as u64
}
/// Distinct unit hashes each writing job keeps to measure dedupability before it samples
/// by content.
pub(crate) const MAX_UNIT_HASHES: usize = 1 << 16;
/// Slots of each writing job's sampler's table of frequent contents at most (8 bytes
/// each, 512 KiB in all; `workload::tracks`: it starts at 4096 and grows fourfold whenever
/// one slot in 64 is pinned).
/// 16384 pinned 8350 of the 10000 contents of a `--dedup-set 10000` (a set of four slots
/// whose four are pinned takes no fifth), and 1 s runs measured 47.6–54.2% for 50; 65536
/// pins them all (49.5–50.6).
pub(crate) const TRACK_SLOTS: usize = 65536;

/// A sampler table (`workload::huge`) of this many bytes or more lies in whole 2 MiB
/// huge pages: the tracking table at its largest (512 KiB, in a page of 2 MiB) and the
/// table of hashed contents from 16384 slots on.
pub(crate) const HUGE_TABLE_MIN: usize = 512 << 10;

/// The bytes a sampler table of `bytes` takes: from `HUGE_TABLE_MIN` on, whole huge
/// pages.
pub(crate) fn table_backing(bytes: usize) -> usize {
    whole_huge_pages(bytes, HUGE_TABLE_MIN)
}

/// `len` rounded up to whole 2 MiB huge pages when it is `from` or more, else `len`.
fn whole_huge_pages(len: usize, from: usize) -> usize {
    match len >= from {
        true => len.next_multiple_of(2 << 20),
        false => len,
    }
}

/// The kind of content written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataKind {
    /// Fresh random bytes: incompressible, never repeated.
    Random,
    /// All zero bytes.
    Zeros,
    /// A fixed byte pattern, repeated.
    Pattern,
    /// Random data built to a compressibility target (`--compress`).
    Compressible,
    /// The contents of real files, cycled.
    Files,
}

/// How compressible chunks are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompressMethod {
    /// Random bytes, then a run of zeros (as fio does).
    Zerofill,
    /// Random literals and copies of earlier substrings of the chunk.
    Repeat,
}

impl CompressMethod {
    pub(crate) fn name(self) -> &'static str {
        match self {
            CompressMethod::Zerofill => "zerofill",
            CompressMethod::Repeat => "repeat",
        }
    }
}

/// The data options of a workload: the `spec.data` object of the results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataSpec {
    /// What is written.
    pub kind: DataKind,
    /// Target compressibility in percent (0–100) for `compressible`; 0 otherwise.
    pub compress: f64,
    /// Bytes each compressibility target applies to (a device's compression unit).
    pub compress_chunk: u64,
    /// How compressible chunks are built.
    pub compress_method: CompressMethod,
    /// Percentage (0–100) of dedup units that repeat a unit written earlier.
    pub dedup: f64,
    /// Bytes of one dedup unit.
    pub dedup_unit: u64,
    /// The repeats come from at most this many distinct units (`null`: any earlier one).
    pub dedup_set: Option<u64>,
    /// The pattern, as hex, for `pattern`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The file or directory, for `files`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<String>,
    /// Generate every unit of every write afresh (`--refill`) instead of stamping units
    /// of a pool built before the run (see `docs/data.md`).
    #[serde(default)]
    pub refill: bool,
    /// Bytes of the pool of pre-generated units (`--data-pool`): the distance after which
    /// a unit's bytes other than its stamp come back. Documents from before the option
    /// had 16 MiB.
    #[serde(default = "default_pool")]
    pub pool: u64,
}

impl Default for DataSpec {
    fn default() -> Self {
        DataSpec {
            kind: DataKind::Random,
            compress: 0.0,
            compress_chunk: 4096,
            compress_method: CompressMethod::Zerofill,
            dedup: 0.0,
            dedup_unit: 4096,
            dedup_set: None,
            pattern: None,
            files: None,
            refill: false,
            pool: default_pool(),
        }
    }
}

/// Parses `HEX` of `pattern:HEX` (an optional `0x`, an even number of hex digits).
pub(crate) fn parse_hex(text: &str) -> Option<Vec<u8>> {
    let t = text
        .trim()
        .trim_start_matches("0x")
        .trim_start_matches("0X");
    if t.is_empty() || !t.len().is_multiple_of(2) {
        return None;
    }
    (0..t.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&t[i..i + 2], 16).ok())
        .collect()
}

/// The bytes a pool of `len` bytes is backed by: from 1 MiB on, whole huge pages (the
/// rest of the last one unused), so that every write sent from it lies in physically
/// contiguous memory, one segment per request. (A 1 MiB pool, `--data-pool 1m`, lay in
/// 4 KiB pages: on this guest's virtio disk its 128 KiB writes went at 5.0–6.0k IOPS
/// where the 16 MiB pool's went at 9–16k, and fio's 4 KiB-page buffers at 3.8–7.2k,
/// 12–17k with `--iomem=shmhuge`.) Smaller pools (64 KiB to 1 MiB) keep their size:
/// each writing job would spend up to 2 MiB on a pool of 64 KiB.
pub(crate) fn pool_backing(len: usize) -> usize {
    whole_huge_pages(len, 1 << 20)
}

/// Compressors and the distance back they find a repeat in, smallest first: a pooled
/// unit's bytes other than its stamp come back one pool later, so one whose window is
/// larger than the pool finds every unit again (`DataSpec::pool_window_note`). The
/// windows up to zstd -19's are those of devices, file systems and the usual levels; the
/// rest (`LONG_WINDOW`) belong to archivers run over a whole stream: the default 16 MiB
/// pool's 40 MiB stream, measured 0.0% chunk by chunk, was 66% smaller under `zstd
/// --long` and `zstd --ultra -22`, 60% under `xz -9` (until 2026-11-29 the help and
/// docs/data.md said no compressor saw a repeat).
const REPEAT_WINDOWS: [(&str, u64); 9] = [
    ("gzip (32 KiB)", 32 << 10),
    ("lz4 (64 KiB)", 64 << 10),
    ("btrfs's 128 KiB extents", 128 << 10),
    ("zstd -1 (512 KiB)", 512 << 10),
    ("zstd -3 (2 MiB)", 2 << 20),
    ("zstd -19 (8 MiB)", 8 << 20),
    ("xz -8 and zstd --ultra -20 (32 MiB)", 32 << 20),
    ("xz -9 and zstd --ultra -21 (64 MiB)", 64 << 20),
    ("zstd --long and --ultra -22 (128 MiB)", 128 << 20),
];

/// The windows from this size on are archivers' (`REPEAT_WINDOWS`): a run warns of a
/// pool within the others only.
const LONG_WINDOW: u64 = 32 << 20;

impl DataSpec {
    /// A short description for the terminal, e.g. `compressible 50% (zerofill/4k), dedup 25%`:
    /// every option that shapes the data or its measure and is not the default, so that
    /// two specs a run could have are described alike only when they are equal.
    pub(crate) fn describe(&self) -> String {
        let mut s = match self.kind {
            DataKind::Random => "random".to_string(),
            DataKind::Zeros => "zeros".to_string(),
            DataKind::Pattern => format!("pattern 0x{}", self.pattern.as_deref().unwrap_or("")),
            DataKind::Files => format!("files {}", self.files.as_deref().unwrap_or("")),
            DataKind::Compressible => format!(
                "compressible {}% ({}/{})",
                self.compress,
                self.compress_method.name(),
                crate::units::fmt_size_short(self.compress_chunk)
            ),
        };
        let short = crate::units::fmt_size_short;
        if self.dedup > 0.0 {
            s.push_str(&format!(", dedup {}%", self.dedup));
            if let Some(n) = self.dedup_set {
                s.push_str(&format!(" of a set of {n}"));
            }
        }
        // The units duplicates are counted in, and the chunks compressibility is
        // measured in, when they are not the defaults (two runs that differ only there
        // were described alike, and a comparison said "data random vs random").
        if self.dedup_unit != DataSpec::default().dedup_unit {
            s.push_str(&format!(", {} dedup units", short(self.dedup_unit)));
        }
        if self.kind != DataKind::Compressible
            && self.compress_chunk != DataSpec::default().compress_chunk
        {
            s.push_str(&format!(", {} compress chunks", short(self.compress_chunk)));
        }
        if self.refill && self.kind != DataKind::Files {
            s.push_str(", refilled");
        } else if self.generated() && self.pool != default_pool() {
            s.push_str(&format!(", pool {}", short(self.pool)));
        }
        s
    }

    /// Whether content is generated unit by unit (random or compressible).
    pub(crate) fn generated(&self) -> bool {
        matches!(self.kind, DataKind::Random | DataKind::Compressible)
    }

    /// Whether writes of this data come from a pool of units (`--data-pool`): generated
    /// content without `--refill`.
    pub(crate) fn pooled(&self) -> bool {
        self.generated() && !self.refill
    }

    /// Whether a pool's `repeat` units are whole chunks, stamped at the literals no copy
    /// reads (`repeat_stamp`): always, for checked options (a unit is the chunk, or with
    /// `--dedup` the dedup unit, which the chunk must divide). Otherwise every copy of
    /// the opening literals would be stamped alike.
    pub(crate) fn repeat_chunks_whole(&self) -> bool {
        let (unit, chunk) = (self.unit_len(), self.compress_chunk as usize);
        self.kind == DataKind::Compressible
            && self.compress > 0.0
            && self.compress_method == CompressMethod::Repeat
            && chunk > 0
            && unit.is_multiple_of(chunk)
    }

    /// Checks the options against each other and against the block size.
    pub(crate) fn validate(&self, bs: u64) -> Result<()> {
        self.validate_size(bs, &format!("--bs {}", fmt_size(bs)))
    }

    /// `validate` for an I/O size that `what` names (`--bs 4 KiB`, or a size of a
    /// `--bssplit` or `--bsrange`: each must hold whole chunks and units).
    pub(crate) fn validate_size(&self, bs: u64, what: &str) -> Result<()> {
        for (opt, v) in [("--compress", self.compress), ("--dedup", self.dedup)] {
            if !(0.0..=100.0).contains(&v) || v.is_nan() {
                return Err(Error::usage(format!(
                    "{opt} {v} is out of range; use a percentage from 0 to 100"
                )));
            }
        }
        if self.compress_chunk == 0 || self.dedup_unit == 0 {
            return Err(Error::usage(
                "--compress-chunk and --dedup-unit must be greater than zero (e.g. 4k)",
            ));
        }
        if self.kind == DataKind::Compressible && !bs.is_multiple_of(self.compress_chunk) {
            return Err(Error::usage(format!(
                "--compress-chunk {} does not divide {what}; use a chunk that divides every block size",
                fmt_size(self.compress_chunk),
            )));
        }
        if self.dedup > 0.0 {
            if !self.generated() {
                return Err(Error::usage(
                    "--dedup works with random or compressible data, not with --data zeros, pattern or files",
                ));
            }
            if !bs.is_multiple_of(self.dedup_unit) {
                return Err(Error::usage(format!(
                    "--dedup-unit {} does not divide {what}; use a unit that divides every block size",
                    fmt_size(self.dedup_unit),
                )));
            }
            if self.kind == DataKind::Compressible
                && !self.dedup_unit.is_multiple_of(self.compress_chunk)
            {
                return Err(Error::usage(format!(
                    "--compress-chunk {} does not divide --dedup-unit {}; make the chunk divide the unit",
                    fmt_size(self.compress_chunk),
                    fmt_size(self.dedup_unit)
                )));
            }
            if self.dedup_set == Some(0) {
                return Err(Error::usage(
                    "--dedup-set must be at least 1; leave it out to repeat any earlier unit",
                ));
            }
        }
        if !(POOL_MIN..=POOL_MAX).contains(&self.pool) {
            return Err(Error::usage(format!(
                "--data-pool {} is out of range; use a size from 64k to 1g (16m by default)",
                fmt_size(self.pool)
            )));
        }
        if self.kind == DataKind::Pattern && self.pattern.as_deref().and_then(parse_hex).is_none() {
            return Err(Error::usage(
                "--data pattern:HEX needs an even number of hex digits (e.g. pattern:deadbeef)",
            ));
        }
        Ok(())
    }

    /// A note when the pool is smaller than a compressor's window: the stream's units
    /// come back within it, so that compressor, run over the stream (or over the
    /// device's contents in the order written), finds them again and saves far more than
    /// the figures measured chunk by chunk say (`--data-pool 64k`, 128 KiB writes:
    /// measured 0.0%, `zstd -1` of `iomark data`'s stream 99.3% smaller). The compressors
    /// are named, and the pool that none of them sees the pool's repeats in (a dedup
    /// stream's copies are repeats by design, said so). With `archivers`
    /// (`iomark data`, whose stream is checked with such tools) the long windows too
    /// (the default pool is within them); otherwise only a pool within a window below
    /// `LONG_WINDOW` (below 8 MiB) is said. None for data not from a pool.
    pub(crate) fn pool_window_note(&self, archivers: bool) -> Option<String> {
        self.pooled().then_some(())?;
        let pool = self.pool_bytes() as u64;
        let within: Vec<(&str, u64)> = (REPEAT_WINDOWS.iter().copied())
            .filter(|&(_, w)| pool < w && (archivers || w < LONG_WINDOW))
            .collect();
        let names = match within.split_last()? {
            ((last, _), []) => format!("the window of {last}"),
            ((last, _), rest) => {
                let rest: Vec<&str> = rest.iter().map(|(n, _)| *n).collect();
                format!("the windows of {} and {last}", rest.join(", "))
            }
        };
        let widest = within.last().map_or(0, |&(_, w)| w);
        let fix = match widest < LONG_WINDOW {
            true => format!(
                "leave --data-pool out ({}) for a stream no window up to zstd -19's sees the pool's repeats in{}",
                crate::units::fmt_size(default_pool()),
                if archivers {
                    ", --data-pool 256m for archivers' too, or --refill for none"
                } else {
                    ""
                }
            ),
            false => format!(
                "--data-pool {} for a stream none of them sees the pool's repeats in, or --refill (every write generated afresh)",
                crate::units::fmt_size_short(2 * widest),
            ),
        };
        // (A dedup stream's copies are repeats by design, at any distance back.)
        let copies = match self.dedup > 0.0 {
            true => format!(
                " (the --dedup {}% copies repeat whatever the pool, some within any window)",
                self.dedup
            ),
            false => String::new(),
        };
        // The pool as given, and what it holds when that is more (whole units, two at
        // least: `--data-pool 64k --compress-chunk 128k` was said as "--data-pool 256k").
        let default = match (self.pool == default_pool(), pool != self.pool) {
            (true, _) => " (the default)".to_string(),
            (false, true) => format!(
                " (which holds {}: whole {} units, two at least)",
                crate::units::fmt_size(pool),
                crate::units::fmt_size(self.unit_len() as u64)
            ),
            (false, false) => String::new(),
        };
        Some(format!(
            "--data-pool {}{default}: the units' bytes (all but their stamps) come back every {} written, within {names}: such a compressor run over the stream finds them again and saves more than the figures here, measured chunk by chunk, say; {fix}{copies}",
            crate::units::fmt_size_short(self.pool),
            crate::units::fmt_size(pool),
        ))
    }

    /// Bytes the data generator's pool holds: `pool` rounded up to whole units, two at
    /// least.
    pub(crate) fn pool_bytes(&self) -> usize {
        let unit = self.unit_len();
        (self.pool as usize).div_ceil(unit).max(2) * unit
    }

    /// The generation granularity: a dedup unit when dedup is on, else a chunk (whose
    /// stamps follow its literals), else 4 KiB or the dedup unit when smaller. (Random
    /// data with `--dedup-unit 512` was made of 4 KiB units stamped once each until
    /// 2026-11-28: their other 512-byte parts came back with the pool, and a 64 MiB
    /// stream was 65.6% duplicate 512-byte units.)
    pub(crate) fn unit_len(&self) -> usize {
        if self.dedup > 0.0 {
            self.dedup_unit as usize
        } else if self.kind == DataKind::Compressible {
            self.compress_chunk as usize
        } else {
            (self.dedup_unit as usize).clamp(1, 4096)
        }
    }
}

#[path = "data_notes.rs"]
mod notes;
pub(crate) use notes::zero_units;

#[path = "data_shape.rs"]
mod shape;
pub(crate) use shape::{
    free_run_width, repeat_chunk_literals, repeat_free_runs, repeat_segments, repeat_skip,
    repeat_stamp, zerofill_literals,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A pool smaller than two units holds two: the note named the pool it holds as the
    /// one given (`--data-pool 64k --compress-chunk 128k` said "--data-pool 256k" beside
    /// the run's "pool 64k"); now the one given, and what it holds.
    #[test]
    fn a_pool_rounded_up_is_named_as_given() {
        let s = DataSpec {
            kind: DataKind::Compressible,
            compress: 50.0,
            compress_chunk: 128 << 10,
            pool: 64 << 10,
            ..DataSpec::default()
        };
        let note = s.pool_window_note(false).expect("a note");
        assert!(
            note.starts_with(
                "--data-pool 64k (which holds 256 KiB: whole 128 KiB units, two at least)"
            ),
            "{note}"
        );
        assert!(s.describe().contains("pool 64k"), "{}", s.describe());
    }

    /// Units of few random bytes meet by chance long before their stamps run out: 512-byte
    /// chunks at 98.3% hold 4 (2^32 contents), and 64 MiB of them through a 64 KiB pool
    /// held 4 duplicate 512-byte units (a helper's count, session 30) with no note, the
    /// note being given only when the stamps ran out within a terabyte (2 TiB here). The
    /// note now says when the first two are likely alike: about 2^16 units, 32 MiB.
    #[test]
    fn units_of_few_random_bytes_say_when_they_meet_by_chance() {
        let s = DataSpec {
            kind: DataKind::Compressible,
            compress: 98.3,
            compress_method: CompressMethod::Repeat,
            compress_chunk: 512,
            dedup_unit: 512,
            ..DataSpec::default()
        };
        let note = s.few_literals_repeat().expect("a note");
        assert!(note.contains("leaves 4 random bytes"), "{note}");
        assert!(note.contains("from about 32 MiB written"), "{note}");
        // 4 KiB units of those chunks: 16 bytes, no note.
        let wide = DataSpec {
            dedup_unit: 4096,
            ..s
        };
        assert_eq!(wide.few_literals_repeat(), None);
    }

    /// The zeros note's advice holds, and the few-literals note's: each way out it names
    /// ("use X, or Y") gives compressible chunks (random bytes and not only) with no unit
    /// of zeros and none of so few random bytes that units repeat. For chunks below 512
    /// bytes the zeros note said "--compress-method repeat, or a lower --compress", where
    /// a 1- or 2-byte zerofill chunk keeps no random byte at any share and `repeat` makes
    /// them all random (`--compress 50 --compress-chunk 1`: measured 0.0% smaller); the
    /// few-literals note said "a lower --compress" whatever the chunk (until 2026-11-30).
    #[test]
    fn the_notes_advice_gives_unique_compressible_units() {
        let compressible = |s: &DataSpec| {
            let chunk = s.compress_chunk as usize;
            let lits = match s.compress_method {
                CompressMethod::Zerofill => zerofill_literals(chunk, s.compress),
                CompressMethod::Repeat => repeat_chunk_literals(chunk, s.compress).0,
            };
            s.zero_units_repeat().is_none()
                && s.few_literals_repeat().is_none()
                && lits > 0
                && lits < chunk
        };
        let mut noted = 0;
        for method in [CompressMethod::Zerofill, CompressMethod::Repeat] {
            for chunk in (0..17).map(|b| 1u64 << b) {
                let shares = [
                    10.0, 50.0, 75.0, 90.0, 98.8, 99.0, 99.2, 99.4, 99.5, 99.68, 99.7, 99.9,
                ];
                for (compress, dedup_unit) in shares
                    .iter()
                    .flat_map(|&c| [512, 4096, 65536].map(|u| (c, u)))
                {
                    let s = DataSpec {
                        kind: DataKind::Compressible,
                        compress,
                        compress_method: method,
                        compress_chunk: chunk,
                        dedup_unit,
                        ..DataSpec::default()
                    };
                    // The zeros note's ways out, and the few-literals note's.
                    for note in [s.zero_units_repeat(), s.few_literals_repeat()]
                        .into_iter()
                        .flatten()
                    {
                        noted += 1;
                        let advice = note.split("use ").last().expect("advice");
                        for way in advice.split(", or ") {
                            let mut t = s.clone();
                            let mut lower = None;
                            for part in way.split(" and ") {
                                let share = part
                                    .strip_prefix("a --compress of ")
                                    .and_then(|x| x.strip_suffix(" or lower"));
                                match part {
                                    "--compress-method repeat" => {
                                        t.compress_method = CompressMethod::Repeat
                                    }
                                    _ if share.is_some() => {
                                        lower = share.map(|x| x.parse::<f64>().expect(part))
                                    }
                                    "a --compress-chunk of 512 B or more" => {
                                        t.compress_chunk = t.compress_chunk.max(512)
                                    }
                                    "a --compress-chunk no larger than --dedup-unit" => {
                                        t.compress_chunk = t.compress_chunk.min(t.dedup_unit)
                                    }
                                    other => {
                                        panic!("advice not known to the test: {other:?} in {note}")
                                    }
                                }
                            }
                            // The share named, and lower ones too.
                            let works = match lower {
                                None => compressible(&t),
                                Some(x) => {
                                    assert!(x < compress, "{way:?}: {note}");
                                    [x, x * 0.9, x / 2.0, x / 10.0].iter().all(|&c| {
                                        compressible(&DataSpec {
                                            compress: c,
                                            ..t.clone()
                                        })
                                    })
                                }
                            };
                            assert!(works, "{way:?} does not help: {note}");
                        }
                    }
                }
            }
        }
        assert!(noted > 10, "only {noted} notes");
    }

    /// Each option a run's data can differ by changes the description: `--dedup-set`,
    /// `--dedup-unit` and a measuring `--compress-chunk` were left out, and a comparison
    /// of two runs that differed there said "data random, dedup 50% vs random, dedup 50%".
    #[test]
    fn specs_that_differ_are_described_apart() {
        let base = DataSpec {
            dedup: 50.0,
            ..DataSpec::default()
        };
        let compressible = DataSpec {
            kind: DataKind::Compressible,
            compress: 40.0,
            ..DataSpec::default()
        };
        let variants = [
            DataSpec::default(),
            base.clone(),
            DataSpec {
                dedup_set: Some(100),
                ..base.clone()
            },
            DataSpec {
                dedup_unit: 8192,
                ..base.clone()
            },
            DataSpec {
                dedup_unit: 8192,
                ..DataSpec::default()
            },
            DataSpec {
                compress_chunk: 65536,
                ..DataSpec::default()
            },
            DataSpec {
                kind: DataKind::Zeros,
                compress_chunk: 65536,
                ..DataSpec::default()
            },
            DataSpec {
                kind: DataKind::Zeros,
                ..DataSpec::default()
            },
            compressible.clone(),
            DataSpec {
                compress_chunk: 65536,
                ..compressible.clone()
            },
            DataSpec {
                compress_method: CompressMethod::Repeat,
                ..compressible
            },
            DataSpec {
                refill: true,
                ..DataSpec::default()
            },
            DataSpec {
                kind: DataKind::Zeros,
                refill: true,
                ..DataSpec::default()
            },
            DataSpec {
                pool: 1 << 20,
                ..DataSpec::default()
            },
        ];
        for (i, a) in variants.iter().enumerate() {
            for b in &variants[i + 1..] {
                assert_ne!(a.describe(), b.describe(), "{a:?} and {b:?}");
            }
        }
    }
}

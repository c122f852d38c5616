//! The notes on a data profile's shape (`plan::data`): units of zeros, units of so few
//! random bytes that they repeat, units a chunk larger than them leaves unstamped,
//! chunks too small for the share asked, and random data's units too small to differ;
//! given by a run and by `iomark data` alike.

use super::{
    CompressMethod, DataKind, DataSpec, free_run_width, repeat_chunk_literals, repeat_free_runs,
    repeat_stamp, zerofill_literals,
};
use crate::units::fmt_size;

impl DataSpec {
    /// The notes a run and `iomark data` give on the shape of compressible chunks: units
    /// of zeros (`zero_units_repeat`), units of so few random bytes that they repeat
    /// (`few_literals_repeat`), units a chunk larger than them leaves unstamped
    /// (`unstamped_units`), chunks too small for the share asked (`small_chunk`). Each
    /// that applies (until 2026-11-29 the first alone: the zeros note of 8 KiB chunks at
    /// 99.7% hid that their other units repeat too).
    pub(crate) fn shape_notes(&self) -> Vec<String> {
        let alike = [self.zero_units_repeat(), self.few_literals_repeat()];
        let mut notes: Vec<String> = alike.into_iter().flatten().collect();
        notes.extend(self.unstamped_units());
        notes.extend(self.small_chunk());
        notes.extend(self.tiny_units());
        notes
    }

    /// A note when random data's dedup units are so small that they meet by chance: a
    /// unit of `u` random bytes has 2^(8u) contents, and the first two alike come after
    /// about the square root of them. (`--dedup-unit 1` measured 100% duplicate units,
    /// `--dedup-unit 3 --dedup 10` 11.7% for 10%, and nothing said so until 2026-11-29;
    /// compressible data's units are said by `few_literals_repeat`.)
    fn tiny_units(&self) -> Option<String> {
        let du = self.dedup_unit;
        if self.kind != DataKind::Random || du >= 16 {
            return None;
        }
        let all = 1u128 << (8 * du);
        let chance = ((all as f64).sqrt() as u128).saturating_mul(du as u128);
        (chance < 1 << 40).then(|| {
            format!(
                "--dedup-unit {} holds {du} random {}: {all} contents, so units meet by chance from about {} written, duplicates beside any --dedup asks for (and no deduplicating device works in units that small); use a --dedup-unit of 512 or more",
                fmt_size(du),
                if du == 1 { "byte" } else { "bytes" },
                fmt_size(chance as u64),
            )
        })
    }

    /// A note when a chunk larger than the dedup unit has a unit that holds random bytes
    /// but no stamp, so that it comes back every lap of the pool: a `repeat` chunk's
    /// first unit from about 50% (its literals are what every copy repeats), a zerofill
    /// chunk's unit of fewer than 8 of its literals (where they end). Until 2026-11-29
    /// nothing said so: `--compress 97 --compress-method repeat --compress-chunk 8k
    /// --dedup-unit 512` held 6.2% duplicate units, `--compress 49.81 --compress-chunk
    /// 8k` 49.2% (a helper's probe).
    fn unstamped_units(&self) -> Option<String> {
        let (chunk, du) = (self.compress_chunk as usize, self.dedup_unit as usize);
        if self.kind != DataKind::Compressible
            || self.compress <= 0.0
            || chunk <= du
            || !chunk.is_multiple_of(du)
            || !self.pooled()
        {
            return None;
        }
        let which = match self.compress_method {
            CompressMethod::Repeat => {
                // The free runs a unit's stamp may lie in (`workload::pool`'s layout).
                let runs = repeat_free_runs(chunk, self.compress);
                let width = free_run_width(&runs);
                let stamped = runs.iter().any(|&(at, n)| n >= width && at + width <= du);
                let (total, _) = repeat_chunk_literals(chunk, self.compress);
                match stamped || total == 0 || self.dedup > 0.0 {
                    true => return None,
                    false => "first",
                }
            }
            CompressMethod::Zerofill => {
                let lits = zerofill_literals(chunk, self.compress);
                match (lits > du, lits % du) {
                    (true, 1..=7) if self.dedup <= 0.0 => "last with random bytes",
                    _ => return None,
                }
            }
        };
        let k = chunk / du;
        let unit = fmt_size(du as u64);
        let what = match which {
            "first" => format!(
                "each chunk's first {unit} unit unstamped (its random bytes are the ones every copy in the chunk repeats)"
            ),
            _ => format!(
                "unstamped the {unit} unit where each chunk's random bytes end (fewer than a stamp's 8 of them lie there)"
            ),
        };
        Some(format!(
            "--compress {} by {} in {} chunks leaves {what}: it comes back every {} written, 1 in {k} units ({:.1}%) duplicates after the pool's first lap; for unique units use a --compress-chunk no larger than --dedup-unit",
            self.compress,
            match self.compress_method {
                CompressMethod::Zerofill => "zerofill",
                CompressMethod::Repeat => "repeat",
            },
            fmt_size(chunk as u64),
            crate::units::fmt_size(self.pool_bytes() as u64),
            100.0 / k as f64,
        ))
    }

    /// A note for compressible chunks below 512 bytes: a compressor's framing (its
    /// header, the literals lz4 ends a block with) is a share of so small a chunk, and
    /// the figures measured chunk by chunk fall short of the target (`--compress 50`:
    /// lz4 44.9% of 256-byte chunks, 32.8% of 64, 0.0% of 8 bytes), where nothing said
    /// so until 2026-11-29.
    fn small_chunk(&self) -> Option<String> {
        let small = self.kind == DataKind::Compressible
            && self.compress > 0.0
            && self.compress_chunk < SMALL_CHUNK;
        small.then(|| format!(
            "--compress-chunk {} is below {}: a compressor's own framing is a share of so small a chunk, so the figures measured chunk by chunk fall short of --compress {} (and no device compresses units that small: zram a 4 KiB page, btrfs 128 KiB extents); use a chunk of {} or more",
            fmt_size(self.compress_chunk),
            fmt_size(SMALL_CHUNK),
            self.compress,
            fmt_size(SMALL_CHUNK),
        ))
    }

    /// A note when zerofill's zero run covers whole dedup units (a chunk larger than the
    /// unit, or a chunk of nothing but zeros): those units are all zeros, duplicates of
    /// one another, whatever `--dedup` says. `None` otherwise.
    pub(crate) fn zero_units_repeat(&self) -> Option<String> {
        if self.kind == DataKind::Compressible && self.compress_method == CompressMethod::Repeat {
            // Every segment's literals gone (from about 98.9% in 512-byte segments): the
            // first segment zeros, the others copies of it.
            let chunk = self.compress_chunk;
            let (total, _) = repeat_chunk_literals(chunk as usize, self.compress);
            return (total == 0).then(|| format!(
                "--compress {} by repeat in {} chunks leaves no random byte in a chunk: every {} unit is all zeros, each after the first a duplicate of it (all but one of the units, measured as data.dedup_pct): a deduplicating device, or zram's same-page detection, stores them once; for compressible data without duplicates use a lower --compress",
                self.compress,
                fmt_size(chunk),
                fmt_size(self.dedup_unit),
            ));
        }
        if self.kind != DataKind::Compressible || self.compress_method != CompressMethod::Zerofill {
            return None;
        }
        let (chunk, unit) = (self.compress_chunk, self.dedup_unit);
        // The zero run ends the chunk, whose end is a unit's end. (From the literals the
        // chunk is filled with: from 99.7% it has none, and every unit is zeros, which
        // the compress share alone said of no unit of a 4 KiB chunk.)
        let zeros = chunk - zerofill_literals(chunk as usize, self.compress) as u64;
        // Chunks smaller than the unit: its units are zeros when every chunk is (512-byte
        // chunks from 99.4%: nothing was said until 2026-11-29).
        let per = (chunk / unit).max(1);
        let whole = match chunk.is_multiple_of(unit) {
            true => zeros / unit,
            false if zeros == chunk => per,
            false => 0,
        };
        (whole > 0).then(|| {
            let share = 100.0 * whole as f64 / per as f64;
            let (which, fix) = match whole == per {
                true => (
                    format!(
                        "{} is all zeros, each after the first a duplicate of it (all but one of the units",
                        match chunk >= unit {
                            true => format!("every one of its {} units", fmt_size(unit)),
                            false => format!("every {} unit", fmt_size(unit)),
                        },
                    ),
                    "--compress-method repeat, or a lower --compress",
                ),
                false => (
                    format!(
                        "{whole} of its {per} {} units {} all zeros, duplicates of one another (about {share:.0}% of the units",
                        fmt_size(unit),
                        if whole == 1 { "is" } else { "are" },
                    ),
                    "--compress-method repeat, or a --compress-chunk no larger than --dedup-unit",
                ),
            };
            let run = match zeros == chunk {
                true => "leaves no random byte in a chunk".to_string(),
                false => format!("ends each chunk with about {} of zeros", fmt_size(zeros)),
            };
            format!(
                "--compress {} by zerofill in {} chunks {run}: {which}, measured as data.dedup_pct): a deduplicating device, or zram's same-page detection, stores them once; for compressible data without duplicates use {fix}",
                self.compress,
                fmt_size(chunk),
            )
        })
    }
}

/// Compressible chunks below this are said to fall short of their target
/// (`DataSpec::small_chunk`).
const SMALL_CHUNK: u64 = 512;

/// [`DataSpec::shape_notes`] for a run that
/// writes data (a read run writes none). With `--verify` a note of units alike names the
/// units its headers set apart (the note said every unit was zeros, and each block's
/// first differed).
pub(crate) fn zero_units(spec: &crate::plan::spec::Spec) -> Vec<String> {
    if !(spec.writes() && spec.rw.writes_data()) {
        return Vec::new();
    }
    let alike = [
        spec.data.zero_units_repeat(),
        spec.data.few_literals_repeat(),
    ];
    let mut notes: Vec<String> = (alike.into_iter().flatten())
        .map(|note| match spec.verify {
            true => format!(
                "{note} (with --verify, but for each block's first {} unit, which opens with the block's own header)",
                fmt_size(spec.data.dedup_unit)
            ),
            false => note,
        })
        .collect();
    notes.extend(spec.data.unstamped_units());
    notes.extend(spec.data.small_chunk());
    notes.extend(spec.data.tiny_units());
    notes
}

impl DataSpec {
    /// A note when zerofill leaves a chunk fewer random bytes than a stamp's 8 and so few
    /// that the chunks that can differ are written within a terabyte: a chunk's stamp is
    /// as wide as its literals, and `2^(8 × literals)` chunks later they repeat
    /// (`--compress 99.68` in 4 KiB chunks keeps 1 byte: 1024 units were 253 distinct, 75%
    /// duplicates, and nothing said so). `None` otherwise.
    ///
    /// A `repeat` chunk's stamp is up to 8 of its literals (`repeat_stamp`): a chunk with
    /// fewer stamped bytes has its other literals from the pool unit, so at most
    /// `2^(8 × stamped) × pool units` chunks differ; counted in dedup units, whose
    /// chunks are stamped apart (with `--dedup`, a zerofill unit's first chunk alone).
    /// Said too when units of so few random bytes likely meet by chance within a
    /// terabyte (after about the square root of their contents).
    /// (Until 2026-11-29 only the first
    /// segment's were stamped: `--compress 98.8`, one byte per 512-byte segment, made
    /// 2^20 distinct 4 KiB chunks, 4 GiB.)
    pub(crate) fn few_literals_repeat(&self) -> Option<String> {
        // (A zerofill chunk larger than the unit whose random bytes its first unit holds:
        // that unit is the one that differs, as a chunk's would; the zeros note says the
        // others.)
        let first_holds = self.compress_method == CompressMethod::Zerofill
            && zerofill_literals(self.compress_chunk as usize, self.compress)
                <= self.dedup_unit as usize;
        if self.kind != DataKind::Compressible
            || (self.compress_chunk > self.dedup_unit && !first_holds)
        {
            return None;
        }
        let (chunk, unit) = (self.compress_chunk, self.dedup_unit);
        let (lits, stamped) = match self.compress_method {
            CompressMethod::Zerofill => {
                let n = zerofill_literals(chunk as usize, self.compress);
                (n, n)
            }
            CompressMethod::Repeat => {
                let (total, first) = repeat_chunk_literals(chunk as usize, self.compress);
                match self.repeat_chunks_whole() {
                    true => (total, repeat_stamp(chunk as usize, self.compress).0),
                    false => (total, first.min(8)),
                }
            }
        };
        // A dedup unit of several chunks: each chunk stamped apart (its own pool unit, or
        // a `repeat` unit's places in every chunk), or with `--dedup` a zerofill unit's
        // first chunk alone.
        let k = (unit / chunk.max(1)).max(1) as usize;
        let apart = self.dedup <= 0.0 || self.compress_method == CompressMethod::Repeat;
        let (lits, stamped) = match apart {
            true => (lits * k, (stamped * k).min(8)),
            false => (lits * k, stamped),
        };
        let all = 1u128.checked_shl(8 * lits as u32).unwrap_or(u128::MAX);
        let distinct = match self.pooled() && lits > stamped {
            true => (1u128 << (8 * stamped)).saturating_mul(self.pool_units() as u128),
            false => all,
        }
        .min(all);
        let within = distinct.saturating_mul(unit as u128);
        // Units of so few random bytes meet by chance long before they run out: the
        // first two alike after about the square root of their contents.
        let chance = ((all as f64).sqrt() as u128).saturating_mul(unit as u128);
        let first = within.min(chance);
        (lits > 0 && stamped < 8 && first < 1 << 40).then(|| {
            let method = match self.compress_method {
                CompressMethod::Zerofill => "zerofill",
                CompressMethod::Repeat => "repeat",
            };
            let stamp = match lits > stamped {
                true => format!(" ({stamped} of them stamped, the others the pool unit's)"),
                false => String::new(),
            };
            let whole = match k {
                1 => format!("{} chunk", fmt_size(chunk)),
                _ => format!("{} unit of {k} {} chunks", fmt_size(unit), fmt_size(chunk)),
            };
            format!(
                "--compress {} by {method} leaves {lits} random {} in each {whole}{stamp}: at most {distinct} {} units differ ({}), so duplicates come back before that much is written (by chance, as two units' random bytes meet, from about {} written) and every unit after it is one, duplicates a deduplicating device or zram stores once; for unique data use a lower --compress",
                self.compress,
                if lits == 1 { "byte" } else { "bytes" },
                fmt_size(unit),
                fmt_size(within.min(u64::MAX as u128) as u64),
                fmt_size(first as u64),
            )
        })
    }

    /// Units the generator's pool holds.
    fn pool_units(&self) -> usize {
        self.pool_bytes() / self.unit_len()
    }
}

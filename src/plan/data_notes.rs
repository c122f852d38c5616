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
    /// With `verify` (a run's `--verify`) a note of units alike names the units its
    /// headers set apart (the note said every unit was zeros, and each block's first
    /// differed).
    pub(crate) fn shape_notes(&self, verify: bool) -> Vec<String> {
        let alike = [self.zero_units_repeat(), self.few_literals_repeat()];
        let mut notes: Vec<String> = (alike.into_iter().flatten())
            .map(|note| match verify {
                true => format!(
                    "{note} (with --verify, but for each block's first {} unit, which opens with the block's own header)",
                    fmt_size(self.dedup_unit)
                ),
                false => note,
            })
            .collect();
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
            self.compress_method.name(),
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

    /// A note when a chunk's zeros cover whole dedup units: zerofill's zero run (a chunk
    /// larger than the unit, or a chunk of nothing but zeros), or a `repeat` chunk left no
    /// random byte. Those units are all zeros, duplicates of one another, whatever
    /// `--dedup` says. `None` otherwise. The ways out it names are those that work
    /// (`ways_out`).
    pub(crate) fn zero_units_repeat(&self) -> Option<String> {
        let (whole, per, zeros) = self.zero_units_of()?;
        let (chunk, unit) = (self.compress_chunk, self.dedup_unit);
        let share = 100.0 * whole as f64 / per as f64;
        let which = match whole == per {
            true => format!(
                "{} is all zeros, each after the first a duplicate of it (all but one of the units",
                match chunk > unit {
                    true => format!("every one of its {} units", fmt_size(unit)),
                    false => format!("every {} unit", fmt_size(unit)),
                },
            ),
            false => format!(
                "{whole} of its {per} {} units {} all zeros, duplicates of one another (about {share:.0}% of the units",
                fmt_size(unit),
                if whole == 1 { "is" } else { "are" },
            ),
        };
        let run = match zeros == chunk {
            true => "leaves no random byte in a chunk".to_string(),
            false => format!("ends each chunk with about {} of zeros", fmt_size(zeros)),
        };
        Some(format!(
            "--compress {} by {} in {} chunks {run}: {which}, measured as data.dedup_pct): a deduplicating device, or zram's same-page detection, stores them once; for compressible data without duplicates use {}",
            self.compress,
            self.compress_method.name(),
            fmt_size(chunk),
            self.ways_out(whole < per),
        ))
    }

    /// The dedup units of zeros in each chunk: `(whole, per, zeros)`, `whole` of the
    /// chunk's `per` units all zeros and the zero bytes ending it; `None` when no unit
    /// is. A `repeat` chunk with every segment's literals gone (from about 98.9% in
    /// 512-byte segments) is zeros, its segments copies of the first; zerofill's zero
    /// run ends the chunk, whose end is a unit's end (from the literals the chunk is
    /// filled with: from 99.7% a 4 KiB chunk has none, which the share alone said of no
    /// unit), and a chunk smaller than the unit makes units of zeros when it is all zeros
    /// (512-byte chunks from 99.4%).
    fn zero_units_of(&self) -> Option<(u64, u64, u64)> {
        if self.kind != DataKind::Compressible {
            return None;
        }
        let (chunk, unit) = (self.compress_chunk, self.dedup_unit);
        let per = (chunk / unit).max(1);
        let zeros = chunk - self.chunk_literals() as u64;
        let whole = match self.compress_method {
            CompressMethod::Repeat if zeros == chunk => per,
            CompressMethod::Repeat => 0,
            CompressMethod::Zerofill => match chunk.is_multiple_of(unit) {
                true => zeros / unit,
                false if zeros == chunk => per,
                false => 0,
            },
        };
        (whole > 0).then_some((whole, per, zeros))
    }

    /// The random bytes of a chunk: zerofill's literals, or all of a `repeat` chunk's.
    fn chunk_literals(&self) -> usize {
        let chunk = self.compress_chunk as usize;
        match self.compress_method {
            CompressMethod::Zerofill => zerofill_literals(chunk, self.compress),
            CompressMethod::Repeat => repeat_chunk_literals(chunk, self.compress).0,
        }
    }

    /// Compressible data without duplicates: chunks of random bytes and repeats or zeros,
    /// no unit of zeros, none of so few random bytes that units repeat, none unstamped.
    fn unique_and_compressible(&self) -> bool {
        let lits = self.chunk_literals();
        lits > 0
            && lits < self.compress_chunk as usize
            && self.zero_units_of().is_none()
            && self.few_literals().is_none()
            && self.unstamped_units().is_none()
    }

    /// The ways out of units of zeros that give unique compressible data, each checked:
    /// the other method, a chunk no larger than the unit (when only some units are
    /// zeros), and the highest lower share that works, or for a chunk below 512 bytes a
    /// chunk of 512 (with a lower share if it needs one). Until 2026-11-29 the note said
    /// "--compress-method repeat, or a lower --compress" whatever the chunk, where a 1-
    /// or 2-byte zerofill chunk keeps no random byte at any share and `repeat` makes them
    /// all random (`--compress 50 --compress-chunk 1`: measured 0.0% smaller).
    fn ways_out(&self, partial: bool) -> String {
        let mut others = Vec::new();
        if self.compress_method == CompressMethod::Zerofill {
            let other = DataSpec {
                compress_method: CompressMethod::Repeat,
                ..self.clone()
            };
            others.push(("--compress-method repeat".to_string(), other));
        }
        if partial {
            let smaller = DataSpec {
                compress_chunk: self.compress_chunk.min(self.dedup_unit),
                ..self.clone()
            };
            let way = "a --compress-chunk no larger than --dedup-unit".to_string();
            others.push((way, smaller));
        }
        if self.compress_chunk < SMALL_CHUNK {
            let larger = DataSpec {
                compress_chunk: SMALL_CHUNK,
                ..self.clone()
            };
            let way = format!("a --compress-chunk of {} or more", fmt_size(SMALL_CHUNK));
            others.push((way, larger));
        }
        // Each change as it is, or with the highest lower share it needs when that is
        // above the share that works alone. (A chunk below 512 bytes has shares that
        // work only in a band, 75% in 2-byte `repeat` chunks but not 37.5%: no lower
        // share is offered for one.)
        let lower = |s: &DataSpec| match s.compress_chunk >= SMALL_CHUNK {
            true => s.highest_share_below(s.compress),
            false => None,
        };
        let alone = lower(self);
        let share = |x: f64| format!("a --compress of {x} or lower");
        let mut ways = Vec::new();
        for (way, t) in &others {
            match t.unique_and_compressible() {
                true => ways.push(way.clone()),
                false => ways.extend(
                    lower(t)
                        .filter(|&x| alone.is_none_or(|a| x > a))
                        .map(|x| format!("{way} and {}", share(x))),
                ),
            }
        }
        ways.extend(alone.map(share));
        match ways.is_empty() {
            true => "--data random".to_string(),
            false => ways.join(", or "),
        }
    }

    /// The highest share below `pct`, in steps of 0.1 point, whose chunks are unique and
    /// compressible (`unique_and_compressible`); `None` when none is.
    fn highest_share_below(&self, pct: f64) -> Option<f64> {
        let top = (pct * 10.0).ceil() as i64 - 1;
        (1..=top).rev().map(|t| t as f64 / 10.0).find(|&c| {
            DataSpec {
                compress: c,
                ..self.clone()
            }
            .unique_and_compressible()
        })
    }
}

/// Compressible chunks below this are said to fall short of their target
/// (`DataSpec::small_chunk`).
const SMALL_CHUNK: u64 = 512;

/// [`DataSpec::shape_notes`] for a run that writes data (a read run writes none).
pub(crate) fn zero_units(spec: &crate::plan::spec::Spec) -> Vec<String> {
    match spec.writes() && spec.rw.writes_data() {
        true => spec.data.shape_notes(spec.verify),
        false => Vec::new(),
    }
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
    ///
    /// The advice is each way out checked, as the zeros note's (`ways_out`): until
    /// 2026-11-30 it said "use a lower --compress" whatever the chunk, where 2-byte
    /// `repeat` chunks work at 75% and not at 37.5%.
    pub(crate) fn few_literals_repeat(&self) -> Option<String> {
        self.few_literals()
            .map(|note| format!("{note}; for unique data use {}", self.ways_out(false)))
    }

    /// [`DataSpec::few_literals_repeat`]'s note without its advice.
    fn few_literals(&self) -> Option<String> {
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
            let method = self.compress_method.name();
            let stamp = match lits > stamped {
                true => format!(" ({stamped} of them stamped, the others the pool unit's)"),
                false => String::new(),
            };
            let whole = match k {
                1 => format!("{} chunk", fmt_size(chunk)),
                _ => format!("{} unit of {k} {} chunks", fmt_size(unit), fmt_size(chunk)),
            };
            format!(
                "--compress {} by {method} leaves {lits} random {} in each {whole}{stamp}: at most {distinct} {} units differ ({}), so duplicates come back before that much is written (by chance, as two units' random bytes meet, from about {} written) and every unit after it is one, duplicates a deduplicating device or zram stores once",
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

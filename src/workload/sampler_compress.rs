//! The sampler's compression side and its figures (`workload::sampler`): whole writes
//! kept within a budget and compressed chunk by chunk, `iomark data`'s exhaustive pass,
//! what the samples measure, and the samplers of a run's jobs merged.

use super::Sampler;
use crate::results::schema::DataMeasure;
use crate::workload::hash::content_hash;

impl Sampler {
    /// Compresses the samples chunk by chunk and counts duplicates; `None` when nothing
    /// was written.
    pub(crate) fn measure(&self) -> Option<DataMeasure> {
        // The stream's last, partial chunk (exhaustive mode): compressed as a compressor
        // would see it. Its last partial unit is no unit a deduplicator could match, and
        // is not counted, as a run counts whole units only (counted until 2026-11-28:
        // `iomark data --bs 1k --size 3k` said "duplicate 4k-units 0.0%" of one 3 KiB
        // piece).
        if !self.chunk_carry.is_empty() {
            let mut all = self.clone();
            let chunk = all.chunk_carry.split_off(0);
            all.compress_now(&chunk);
            return all.measure();
        }
        let (mut raw, mut lz4, mut zstd) = (self.raw, self.lz4, self.zstd);
        let mut out = Vec::new();
        for c in self.samples.chunks(self.chunk) {
            let (l, z) = compressed_sizes(c, &mut out);
            raw += c.len() as u64;
            lz4 += l;
            zstd += z;
        }
        // Units of the stream each entry stands for: a rare content's counts are those of
        // one selector in 2^shift.
        // The sampled contents' units before any pin, each content standing for 2^shift;
        // then the units of pinned contents after their pin: duplicates, but for those a
        // hashed copy new to the pinned found distinct.
        let scale = 1u64 << self.shift;
        let (skipped, skipped_dups) = self.skipped_frequent();
        let (pinned, pinned_new) = self.pinned_units;
        let units: u64 =
            self.seen.values().map(|e| e.weight).sum::<u64>() * scale + pinned + skipped;
        let firsts: u64 = self.seen.values().map(|e| e.first).sum::<u64>() * scale
            + pinned_new
            + (skipped - skipped_dups);
        if raw == 0 && units == 0 {
            return None;
        }
        let saved = |c: u64| {
            if raw == 0 {
                0.0
            } else {
                100.0 * (1.0 - c as f64 / raw as f64)
            }
        };
        let dups = units - firsts;
        Some(DataMeasure {
            lz4_pct: saved(lz4),
            zstd_pct: saved(zstd),
            dedup_pct: (units > 0).then(|| 100.0 * dups as f64 / units as f64),
            compress_sampled_bytes: raw,
            dedup_sampled_units: self.hashed_units,
        })
    }

    /// `observe` for `iomark data`: every unit of the stream hashed, every chunk
    /// compressed, across the boundaries of its writes (the tails wait in the carries;
    /// `measure` takes the last, partial ones).
    #[cold]
    pub(super) fn observe_all(&mut self, buf: &[u8]) {
        let mut units = std::mem::take(&mut self.unit_carry);
        units.extend_from_slice(buf);
        let whole = units.len() / self.unit * self.unit;
        for unit in units[..whole].chunks_exact(self.unit) {
            self.record(content_hash(unit), 1, 0);
        }
        units.drain(..whole);
        self.unit_carry = units;
        let mut chunks = std::mem::take(&mut self.chunk_carry);
        chunks.extend_from_slice(buf);
        let whole = chunks.len() / self.chunk * self.chunk;
        self.compress_now(&chunks[..whole]);
        chunks.drain(..whole);
        self.chunk_carry = chunks;
    }

    /// Keeps whole writes for the compression figures: every write at first, then every
    /// 2nd, 4th … once `budget` bytes are held. Called for the `seq`-th write when the
    /// stride picks it.
    #[inline(never)]
    pub(super) fn sample_write(&mut self, buf: &[u8]) {
        if self.samples.len() + buf.len() > self.budget {
            if buf.len() > self.budget {
                return;
            }
            // Full: keep every other sampled write and sample half as often from now on.
            // In place: sampled write 2k moves to slot k.
            let n = buf.len();
            let writes = self.samples.len() / n;
            let mut kept = 0;
            for k in (0..writes).step_by(2) {
                self.samples.copy_within(k * n..(k + 1) * n, kept * n);
                kept += 1;
            }
            self.samples.truncate(kept * n);
            self.stride *= 2;
            if self.seq & (self.stride - 1) != 0 {
                return;
            }
        }
        self.samples.extend_from_slice(buf);
    }

    pub(super) fn compress_now(&mut self, data: &[u8]) {
        let mut out = Vec::new();
        for c in data.chunks(self.chunk) {
            let (l, z) = compressed_sizes(c, &mut out);
            self.raw += c.len() as u64;
            self.lz4 += l;
            self.zstd += z;
        }
    }
}

/// lz4 and zstd-1 sizes of one chunk; a chunk that does not shrink is stored as it is,
/// as a compressing device would.
pub(super) fn compressed_sizes(chunk: &[u8], out: &mut Vec<u8>) -> (u64, u64) {
    let n = chunk.len() as u64;
    out.resize(lz4_flex::block::get_maximum_output_size(chunk.len()), 0);
    let l = lz4_flex::block::compress_into(chunk, out).map_or(n, |v| v as u64);
    let z = zstd::bulk::compress(chunk, 1).map_or(n, |v| v.len() as u64);
    (l.min(n), z.min(n))
}

impl Sampler {
    /// Adds another job's sampler (same options) to this one.
    pub(crate) fn merge(&mut self, other: &Sampler) {
        self.samples.extend_from_slice(&other.samples);
        self.raw += other.raw;
        self.lz4 += other.lz4;
        self.zstd += other.zstd;
        self.hashed_units += other.hashed_units;
        let (units, dups) = other.skipped_frequent();
        self.merged_skipped.0 += units;
        self.merged_skipped.1 += dups;
        // (A content new to the other job's hashed copies and pinned here too counts as
        // new in both: the copies that stand for units of distinct contents are rare.)
        self.pinned_units.0 += other.pinned_units.0;
        self.pinned_units.1 += other.pinned_units.1;
        self.pinned.extend(&other.pinned);
        let shift = self.shift.max(other.shift);
        self.shift = shift;
        self.seen.retain(|e| e.sel_tz >= shift);
        for (k, e) in other.seen.iter() {
            if e.sel_tz >= shift {
                self.seen.add(k, *e);
            }
        }
    }

    /// Units of frequent contents passed over since one was last hashed, here and in the
    /// samplers merged into this one, and
    /// the duplicates among them: as many as among the copies hashed so far (all of them
    /// before any is: a selector comes often when its content does). (Left out, a run of
    /// 1000 writes of zeros measured 87.5% duplicates: the 8 copies before the pin alone.
    /// Counted as duplicates whatever was hashed, 3000 distinct units whose first words
    /// agree measured 31.6%.)
    fn skipped_frequent(&self) -> (u64, u64) {
        let units = self.frequent_skip;
        let (hashed, new) = self.frequent_hashed;
        let dups = match hashed {
            0 => units,
            _ => (units as u128 * (hashed - new) as u128 / hashed as u128) as u64,
        };
        (units + self.merged_skipped.0, dups + self.merged_skipped.1)
    }
}

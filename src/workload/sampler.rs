//! Measuring what was written: a bounded sample of writes compressed with lz4 and zstd
//! chunk by chunk, and duplicate units counted by content hash.

use std::collections::HashMap;

use crate::plan::data::DataSpec;
use crate::results::schema::DataMeasure;
use crate::workload::data::content_hash;

/// Watches the buffers a job writes and keeps enough to measure them: a bounded sample of
/// whole writes for compression, and content hashes of units for dedup. Units are
/// sampled *by content* (hash-based, consistent sampling): a unit is kept when its hash
/// falls in the sampled fraction of hash space, so every copy of a kept unit is kept too,
/// and the duplicate fraction among kept units estimates the whole stream's.
#[derive(Debug, Clone)]
pub struct Sampler {
    chunk: usize,
    unit: usize,
    exhaustive: bool,
    // Compression: whole writes, every `stride`-th, up to `budget` bytes.
    samples: Vec<u8>,
    budget: usize,
    stride: u64,
    seq: u64,
    // Exhaustive mode accumulates compressed sizes as it goes.
    raw: u64,
    lz4: u64,
    zstd: u64,
    // Dedup: full hash → occurrences, for units whose hash has `shift` low zero bits.
    seen: HashMap<u64, u32>,
    pub(crate) shift: u32,
    pub(crate) max_entries: usize,
}

impl Sampler {
    /// A sampler for one job: compression samples up to 4 MiB, dedup hashes of every unit
    /// until 64 Ki distinct ones, then of a shrinking, consistent fraction.
    pub fn new(spec: &DataSpec) -> Sampler {
        Sampler {
            chunk: spec.compress_chunk as usize,
            unit: spec.dedup_unit as usize,
            exhaustive: false,
            samples: Vec::new(),
            budget: crate::plan::data::SAMPLE_BUDGET,
            stride: 1,
            seq: 0,
            raw: 0,
            lz4: 0,
            zstd: 0,
            seen: HashMap::new(),
            shift: 0,
            max_entries: crate::plan::data::MAX_UNIT_HASHES,
        }
    }

    /// A sampler that measures everything it sees (for `iomark data`).
    pub(crate) fn exhaustive(spec: &DataSpec) -> Sampler {
        Sampler {
            exhaustive: true,
            max_entries: usize::MAX,
            ..Sampler::new(spec)
        }
    }

    /// Looks at one written buffer.
    pub fn observe(&mut self, buf: &[u8]) {
        for unit in buf.chunks(self.unit) {
            let h = content_hash(unit);
            if h.trailing_zeros() >= self.shift {
                *self.seen.entry(h).or_insert(0) += 1;
                if self.seen.len() > self.max_entries {
                    self.shift += 1;
                    let s = self.shift;
                    self.seen.retain(|k, _| k.trailing_zeros() >= s);
                }
            }
        }
        if self.exhaustive {
            self.compress_now(buf);
            return;
        }
        self.seq += 1;
        if !self.seq.is_multiple_of(self.stride) {
            return;
        }
        if self.samples.len() + buf.len() > self.budget {
            if buf.len() > self.budget {
                return;
            }
            // Full: keep every other sampled write and sample half as often from now on.
            let n = buf.len();
            let kept: Vec<u8> = self
                .samples
                .chunks(n)
                .step_by(2)
                .flatten()
                .copied()
                .collect();
            self.samples = kept;
            self.stride *= 2;
            if !self.seq.is_multiple_of(self.stride) {
                return;
            }
        }
        self.samples.extend_from_slice(buf);
    }

    fn compress_now(&mut self, data: &[u8]) {
        let mut out = Vec::new();
        for c in data.chunks(self.chunk) {
            let (l, z) = compressed_sizes(c, &mut out);
            self.raw += c.len() as u64;
            self.lz4 += l;
            self.zstd += z;
        }
    }

    /// Adds another job's sampler (same options) to this one.
    pub(crate) fn merge(&mut self, other: &Sampler) {
        self.samples.extend_from_slice(&other.samples);
        self.raw += other.raw;
        self.lz4 += other.lz4;
        self.zstd += other.zstd;
        let shift = self.shift.max(other.shift);
        self.shift = shift;
        self.seen.retain(|k, _| k.trailing_zeros() >= shift);
        for (&k, &v) in &other.seen {
            if k.trailing_zeros() >= shift {
                *self.seen.entry(k).or_insert(0) += v;
            }
        }
    }

    /// Compresses the samples chunk by chunk and counts duplicates; `None` when nothing
    /// was written.
    pub(crate) fn measure(&self) -> Option<DataMeasure> {
        let (mut raw, mut lz4, mut zstd) = (self.raw, self.lz4, self.zstd);
        let mut out = Vec::new();
        for c in self.samples.chunks(self.chunk) {
            let (l, z) = compressed_sizes(c, &mut out);
            raw += c.len() as u64;
            lz4 += l;
            zstd += z;
        }
        let units: u64 = self.seen.values().map(|&v| v as u64).sum();
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
        let dups = units - self.seen.len() as u64;
        Some(DataMeasure {
            lz4_pct: saved(lz4),
            zstd_pct: saved(zstd),
            dedup_pct: if units == 0 {
                0.0
            } else {
                100.0 * dups as f64 / units as f64
            },
            compress_sampled_bytes: raw,
            dedup_sampled_units: units,
        })
    }
}

/// lz4 and zstd-1 sizes of one chunk; a chunk that does not shrink is stored as it is,
/// as a compressing device would.
fn compressed_sizes(chunk: &[u8], out: &mut Vec<u8>) -> (u64, u64) {
    let n = chunk.len() as u64;
    out.resize(lz4_flex::block::get_maximum_output_size(chunk.len()), 0);
    let l = lz4_flex::block::compress_into(chunk, out).map_or(n, |v| v as u64);
    let z = zstd::bulk::compress(chunk, 1).map_or(n, |v| v.len() as u64);
    (l.min(n), z.min(n))
}

//! What iomark writes, and how compressible and dedupable it turned out to be.
//!
//! A write payload is a sequence of *units* (`--dedup-unit`, default 4 KiB). Each unit is
//! either unique — generated from (seed, stream, unique id) — or, with `--dedup PCT`, a
//! repeat of a unit written earlier in the same stream (its content regenerated from that
//! unit's id). Inside a unit, each *chunk* (`--compress-chunk`, default 4 KiB, the unit
//! zram and most SSD controllers compress) is built so that a fast LZ compressor shrinks it
//! to about (100 − PCT)% of its size, by one of two methods (see `docs/data.md`):
//!
//! - `zerofill` (default, as fio's `buffer_compress_percentage`): random bytes, then zeros;
//! - `repeat`: segments of random literals followed by a copy of an earlier substring of
//!   the same chunk, so LZ-only codecs (lz4) and entropy coders (zstd, gzip) agree.
//!
//! Everything derives from the seed, so the same seed writes the same bytes and a verify
//! pass can recompute them. [`Sampler`] measures what was actually written (lz4 and zstd
//! level 1 chunk by chunk, duplicate units by content hash). This module does no I/O
//! except reading the `files:` corpus in [`load_corpus`].

use std::sync::Arc;

use crate::plan::data::{
    CompressMethod, DataKind, DataSpec, parse_hex, repeat_segments, repeat_skip, zerofill_literals,
};
use crate::workload::hash::PoolHashes;
pub use crate::workload::pool::Lent;
use crate::workload::pool::{POOL_ALIGN, UnitPool};
use crate::workload::rng::Rng;

/// Fills one chunk by the `zerofill` method; `literals(dst, at)` fills the random bytes
/// that start at `at` in the chunk.
#[inline(always)]
pub(crate) fn fill_zerofill(
    chunk: &mut [u8],
    pct: f64,
    mut literals: impl FnMut(&mut [u8], usize),
) {
    let lit = zerofill_literals(chunk.len(), pct);
    literals(&mut chunk[..lit], 0);
    chunk[lit..].fill(0);
}

/// Fills one chunk by the `repeat` method: per segment, random literals, then a copy of
/// the chunk's opening substring (in the first segment, its own literals repeated; in a
/// chunk of one segment, from its ninth byte on: `repeat_skip`). The copies all start at
/// the chunk's first bytes because LZ coders index every position at the start of a
/// block, so they find each copy wherever it lies. `literals(dst, at)` fills the random
/// bytes that start at `at` in the chunk.
#[inline(always)]
pub(crate) fn fill_repeat(chunk: &mut [u8], pct: f64, mut literals: impl FnMut(&mut [u8], usize)) {
    let skip = repeat_skip(chunk.len(), pct);
    for (pos, n, lit) in repeat_segments(chunk.len(), pct) {
        literals(&mut chunk[pos..pos + lit], pos);
        let copy = n - lit;
        if copy == 0 {
            continue;
        }
        if pos >= copy {
            // A copy of the chunk's opening substring.
            chunk.copy_within(0..copy, pos + lit);
        } else if lit > 0 {
            // First segment: repeat its own literals (but for the `skip` opening bytes).
            repeat_prefix(&mut chunk[pos + skip..pos + n], lit - skip);
        } else {
            chunk[pos..pos + n].fill(0);
        }
    }
}

/// The copies `fill_repeat` makes in a chunk of `len` bytes for `pct`%, in order, as
/// (from, to, length), but for its zeros (a chunk that opens without literals): made
/// again after a pool unit's literals are stamped, the copies stay copies of them
/// (`UnitPool`).
pub(crate) fn repeat_copies(len: usize, pct: f64) -> Vec<(usize, usize, usize)> {
    let skip = repeat_skip(len, pct);
    let mut copies = Vec::new();
    for (pos, n, lit) in repeat_segments(len, pct) {
        let copy = n - lit;
        if copy == 0 || (pos < copy && lit == 0) {
            continue;
        }
        if pos >= copy {
            copies.push((0, pos + lit, copy));
            continue;
        }
        // (`repeat_prefix`'s doubling copies, from `skip` bytes in.)
        let (from, n) = (pos + skip, n - skip);
        let mut filled = lit - skip;
        while filled < n {
            let m = filled.min(n - filled);
            copies.push((from, from + filled, m));
            filled += m;
        }
    }
    copies
}

/// `buf`'s first `n` bytes repeated to its end, by doubling copies (the prefix is whole
/// repeats, so a copy of it placed right after it keeps the phase).
fn repeat_prefix(buf: &mut [u8], n: usize) {
    let mut filled = n.min(buf.len());
    while filled > 0 && filled < buf.len() {
        let m = filled.min(buf.len() - filled);
        buf.copy_within(..m, filled);
        filled += m;
    }
}

/// Dedup decisions are made in blocks of this many units: exactly the requested share of
/// each block repeats an earlier unit, at seeded positions, so the achieved fraction
/// matches the target within a unit per block instead of drifting binomially.
const DEDUP_BLOCK: u64 = 1000;

/// Generates the write payloads of one job.
#[derive(Debug, Clone)]
pub struct DataGen {
    spec: DataSpec,
    pattern: Vec<u8>,
    corpus: Option<Arc<Vec<u8>>>,
    corpus_pos: usize,
    seed: u64,
    stream: u64,
    unit_len: usize,
    /// Units emitted so far.
    units: u64,
    /// Unique units emitted so far (the next unique id).
    uniques: u64,
    dup_block: u64,
    dup_mask: [u64; 16],
    picks: Rng,
    /// The unit pool; `None` with `--refill` (every unit generated afresh) and for
    /// profiles that are not generated unit by unit.
    pool: Option<UnitPool>,
    /// Whether a write may be lent from the pool: a pool, and no dedup (whose duplicates
    /// are copies of earlier units, written into the buffer).
    lends: bool,
    /// Zeros or a pattern: a write's bytes depend on its length alone, so writes are sent
    /// from this region, filled once before the run (as fio fills its buffers once).
    /// `None` for the other profiles, with `--refill`, and until
    /// [`DataGen::lend_constant`].
    constant: Option<Constant>,
    /// The pool's sums for the hashes of lent units (`prepare_pool_hashes`).
    hashes: Option<PoolHashes>,
    /// A write's unit ids, between their choice and their bytes (`fill_with`; kept so
    /// that a write allocates nothing).
    ids: Vec<u64>,
}

/// The region constant profiles' writes are sent from: `len` bytes at `start` (a
/// `POOL_ALIGN` boundary, for direct I/O) of `bytes`, as [`DataGen::fill`] writes them.
#[derive(Debug, Clone)]
struct Constant {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl DataGen {
    /// A generator for `seed`; `stream` separates jobs, repetitions and workloads.
    /// `corpus` is the loaded `files:` data, when that is the profile.
    pub fn new(spec: &DataSpec, seed: u64, stream: u64, corpus: Option<Arc<Vec<u8>>>) -> DataGen {
        let corpus_pos = corpus.as_ref().map_or(0, |c| {
            (Rng::new(seed, stream).below(c.len() as u64)) as usize
        });
        let pool =
            (spec.pooled()).then(|| UnitPool::new(spec, seed ^ 0xDA7A_DA7A_DA7A_DA7A, stream));
        DataGen {
            pattern: spec
                .pattern
                .as_deref()
                .and_then(parse_hex)
                .unwrap_or_else(|| vec![0]),
            corpus,
            corpus_pos,
            seed: seed ^ 0xDA7A_DA7A_DA7A_DA7A,
            stream,
            unit_len: spec.unit_len(),
            units: 0,
            uniques: 0,
            dup_block: u64::MAX,
            dup_mask: [0; 16],
            picks: Rng::new(seed ^ 0x0D0D_0D0D, stream),
            lends: pool.is_some() && spec.dedup <= 0.0,
            pool,
            spec: spec.clone(),
            constant: None,
            hashes: None,
            ids: Vec::new(),
        }
    }

    /// For zeros and a pattern (without `--refill`): fills a region of `max_len` bytes
    /// (the largest write) once, and sends every write from it from now on. Before, each
    /// write filled its buffer: a 128 KiB write of zeros cost 2.5 µs of CPU on the null
    /// engine, 5.5x fio's (which fills its buffers once).
    pub fn lend_constant(&mut self, max_len: usize) {
        let constant = matches!(self.spec.kind, DataKind::Zeros | DataKind::Pattern);
        if !constant || self.spec.refill || max_len == 0 {
            return;
        }
        let mut bytes = vec![0u8; max_len + POOL_ALIGN];
        let start = bytes.as_ptr().align_offset(POOL_ALIGN);
        self.fill(&mut bytes[start..start + max_len]);
        self.constant = Some(Constant {
            bytes,
            start,
            len: max_len,
        });
    }

    /// The one unit every write lent from the constant region is made of, when the
    /// region's `unit`-byte units are all alike (zeros; a pattern whose length divides
    /// the unit): the job's sampler counts such writes without reading them
    /// (`Sampler::with_uniform_unit`). `None` otherwise, and before `lend_constant`.
    pub(crate) fn uniform_unit(&self, unit: usize) -> Option<&[u8]> {
        let c = self.constant.as_ref()?;
        let region = &c.bytes[c.start..c.start + c.len];
        let first = region.get(..unit).filter(|_| unit > 0)?;
        region
            .chunks_exact(unit)
            .all(|u| u == first)
            .then_some(first)
    }

    /// Fills `buf` with the next payload. `buf.len()` is a multiple of the unit for
    /// generated data (validated with the block size).
    #[inline]
    pub fn fill(&mut self, buf: &mut [u8]) {
        self.fill_with(buf, |_| {});
    }

    /// `fill`, telling `before` the ids of the write's units (in order; unique ones and
    /// the copies of earlier ones) once they are chosen and before their bytes are
    /// written: the sampler asks for the lines it will look at meanwhile
    /// (`Sampler::prefetch_ids`). Not called for profiles not made of units.
    #[inline]
    pub fn fill_with(&mut self, buf: &mut [u8], before: impl FnOnce(&[u64])) {
        match self.spec.kind {
            DataKind::Zeros => buf.fill(0),
            DataKind::Pattern => fill_pattern(buf, &self.pattern),
            DataKind::Files => {
                let c = self.corpus.as_ref().expect("files profile has a corpus");
                let mut done = 0;
                while done < buf.len() {
                    let n = (c.len() - self.corpus_pos).min(buf.len() - done);
                    buf[done..done + n].copy_from_slice(&c[self.corpus_pos..self.corpus_pos + n]);
                    done += n;
                    self.corpus_pos = (self.corpus_pos + n) % c.len();
                }
            }
            DataKind::Random | DataKind::Compressible => {
                // Every unit's id first (the same choices, in the same order, as when each
                // unit's bytes followed its id: the stream is the same), then their bytes.
                let mut ids = std::mem::take(&mut self.ids);
                ids.clear();
                ids.extend((0..buf.len().div_ceil(self.unit_len)).map(|_| self.next_unit_id()));
                before(&ids);
                for (unit, &id) in buf.chunks_mut(self.unit_len).zip(&ids) {
                    self.write_unit(id, unit);
                }
                self.ids = ids;
            }
        }
    }

    /// The next write's payload, `buf.len()` bytes: sent straight from the pool when it
    /// can be (`lend`, no dedup, whole units in one free stretch of the pool), stamped in
    /// place and lent until [`DataGen::give_back`]; otherwise written into `buf`. Either
    /// way the bytes are those [`DataGen::fill`] would have written.
    #[inline(always)]
    pub fn next_write(&mut self, buf: &mut [u8], lend: bool) -> Option<Lent> {
        self.next_write_with(buf, lend, |_| {})
    }

    /// `next_write`, telling `before` the ids of the units of a write written into `buf`
    /// before their bytes are (`fill_with`); not called for a lent write.
    #[inline(always)]
    pub fn next_write_with(
        &mut self,
        buf: &mut [u8],
        lend: bool,
        before: impl FnOnce(&[u64]),
    ) -> Option<Lent> {
        let (ul, len) = (self.unit_len, buf.len());
        if lend
            && let Some(c) = &self.constant
            && len <= c.len
        {
            // (A constant profile: `count` is the write's bytes, see `Lent`.)
            return Some(Lent {
                first: 0,
                count: len,
            });
        }
        if lend
            && self.lends
            && let Some(pool) = self.pool.as_mut()
        {
            // Whole units only; one unit (a 4 KiB write) without a division.
            let n = match len == ul {
                true => 1,
                false if len.is_multiple_of(ul) => len / ul,
                false => 0,
            };
            if n > 0
                && let Some(l) = pool.lend(self.uniques, n)
            {
                self.units += n as u64;
                self.uniques += n as u64;
                return Some(l);
            }
        }
        self.fill_apart(buf, before);
        None
    }

    /// `fill_with` out of line: the lending path of `next_write` stays small where it is
    /// inlined.
    #[inline(never)]
    fn fill_apart(&mut self, buf: &mut [u8], before: impl FnOnce(&[u64])) {
        self.fill_with(buf, before);
    }

    /// Whether the next write's first unit is still lent to a write in flight (a pool no
    /// larger than the writes in flight): written now, it would be copied out of the
    /// pool rather than lent.
    #[inline]
    pub fn next_unit_lent(&self) -> bool {
        self.lends && self.pool.as_ref().is_some_and(|p| p.is_lent(self.uniques))
    }

    /// Where the memory writes are lent from lies (start, length): the unit pool, or the
    /// constant region of zeros or a pattern; for an engine to register. `None` without
    /// either. The memory stays put for the generator's life.
    pub fn pool_region(&self) -> Option<(*const u8, usize)> {
        match &self.constant {
            Some(c) => Some((c.bytes[c.start..].as_ptr(), c.len)),
            None => self.pool.as_ref().map(UnitPool::region),
        }
    }

    /// The memory to back with huge pages: `pool_region`, or for a pool from 1 MiB on its
    /// whole huge pages (`UnitPool::backing`).
    pub fn pool_backing(&self) -> Option<(*const u8, usize)> {
        match &self.pool {
            Some(p) if self.constant.is_none() => Some(p.backing()),
            _ => self.pool_region(),
        }
    }

    /// The unique unit the next write begins with: where its stamps lie when the pool's
    /// stamps turn (`stamp_turns`; every unit of such a stream is unique, so that its
    /// units are `next_id()`, `next_id() + 1`, ...).
    #[inline(always)]
    pub fn next_id(&self) -> u64 {
        self.uniques
    }

    /// Makes the pool's sums for the content hashes of the units this generator lends
    /// (`workload::hash`), for a job whose writes are measured: before the starting
    /// gate, as the pool is built (16 MiB summed, about a millisecond; made after it, in
    /// a debug build, a 50 ms run did no I/O). Nothing when its units have several
    /// stamps, or when it copies units out (a dedup stream) whose stamp is not their
    /// first word: a copy is composed when its stamp is the one its id gives, and a
    /// verify header, which overwrites a block's first bytes, must fail that check.
    pub(crate) fn prepare_pool_hashes(&mut self) {
        let lends = self.lends;
        self.hashes = (self.pool.as_ref())
            .filter(|p| lends || p.stamp_first())
            .and_then(UnitPool::hashes);
    }

    /// The content hashes of the units this generator lends, once prepared
    /// (`prepare_pool_hashes`), handed to the job's sampler (the generator keeps none).
    pub(crate) fn take_pool_hashes(&mut self) -> Option<PoolHashes> {
        self.hashes.take()
    }

    /// The stamps of the units this generator lends, when they are words known from
    /// the unit's id (`UnitPool::lent_stamps`), for the job's sampler; `None` when it
    /// lends none or its units are stamped otherwise.
    pub(crate) fn lent_stamps(&self) -> Option<crate::workload::keys::LentStamps> {
        self.lending_pool().and_then(UnitPool::lent_stamps)
    }

    /// The stamps of the units this generator copies out of its pool (a dedup stream,
    /// which lends none), when they are words known from the unit's id, for the job's
    /// sampler (`Sampler::with_copied_stamps`); `None` otherwise.
    pub(crate) fn copied_stamps(&self) -> Option<crate::workload::keys::LentStamps> {
        self.pool
            .as_ref()
            .filter(|_| !self.lends)
            .and_then(UnitPool::lent_stamps)
    }

    /// The pool, when this generator lends from it.
    fn lending_pool(&self) -> Option<&UnitPool> {
        self.pool.as_ref().filter(|_| self.lends)
    }

    /// The lines the stamps of this generator's units turn through (1: each stamp at
    /// its unit's start, or no stamps): see `UnitPool::stamp_turns`.
    pub fn stamp_turns(&self) -> usize {
        self.pool.as_ref().map_or(1, |p| p.stamp_turns())
    }

    /// The bytes of lent units (what their write sends).
    #[inline]
    pub fn lent_bytes(&self, l: Lent) -> &[u8] {
        match &self.constant {
            Some(c) => &c.bytes[c.start..c.start + l.count],
            None => self.pool.as_ref().expect("only a pool lends").lent_bytes(l),
        }
    }

    /// Takes back the units of a write that completed.
    #[inline]
    pub fn give_back(&mut self, l: Lent) {
        if let Some(p) = self.pool.as_mut() {
            p.give_back(l);
        }
    }

    /// Whether the stream's unit `i` is a copy of an earlier one: `--dedup` percent of
    /// each block of `DEDUP_BLOCK` units, chosen by the block's own random draw.
    #[inline(always)]
    fn is_dup(&mut self, i: u64) -> bool {
        let block = i / DEDUP_BLOCK;
        if block != self.dup_block {
            self.draw_dup_block(block);
        }
        let p = (i % DEDUP_BLOCK) as usize;
        self.dup_mask[p / 64] & (1 << (p % 64)) != 0
    }

    /// The copies among block `block`'s units. Out of line: with its 2 KiB of indices
    /// in the same frame, every unit's call to `is_dup` paid for them (2.6% of a null
    /// 128 KiB `--dedup 50` write's samples, most in its entry and exit).
    #[inline(never)]
    fn draw_dup_block(&mut self, block: u64) {
        self.dup_block = block;
        self.dup_mask = [0; 16];
        let k = (self.spec.dedup / 100.0 * DEDUP_BLOCK as f64).round() as usize;
        let mut idx: [u16; DEDUP_BLOCK as usize] = std::array::from_fn(|j| j as u16);
        let mut r = Rng::new(
            self.seed ^ 0xD0D0,
            self.stream ^ block.wrapping_mul(0x9E37_79B9),
        );
        for j in 0..k.min(DEDUP_BLOCK as usize) {
            let pick = j + r.below((DEDUP_BLOCK as usize - j) as u64) as usize;
            idx.swap(j, pick);
            let p = idx[j] as usize;
            self.dup_mask[p / 64] |= 1 << (p % 64);
        }
    }

    /// The id of the stream's next unit: the next unique one, or (a duplicate) an
    /// earlier one's. In a dedup stream both are worked out and one kept, with no branch
    /// on which (`Rng::below_if`): the choice is the stream's random draw, and its branch
    /// was mispredicted as often as not (2.7-5.5% of a null `--dedup 50` write).
    #[inline]
    fn next_unit_id(&mut self) -> u64 {
        let i = self.units;
        self.units += 1;
        let unique = self.uniques;
        if self.spec.dedup <= 0.0 || unique == 0 {
            self.uniques += 1;
            return unique;
        }
        let dup = self.is_dup(i);
        let n = unique.min(self.spec.dedup_set.unwrap_or(u64::MAX));
        let copy = self.picks.below_if(n, dup);
        self.uniques += u64::from(!dup);
        std::hint::select_unpredictable(dup, copy, unique)
    }

    /// Unit `id`'s bytes (the start of them, when `unit` is shorter).
    #[inline]
    fn write_unit(&self, id: u64, unit: &mut [u8]) {
        match &self.pool {
            Some(pool) => pool.copy_unit(id, unit),
            None => self.unit_content(id, unit),
        }
    }

    /// The content of unique unit `id` of this stream.
    fn unit_content(&self, id: u64, unit: &mut [u8]) {
        let mut rng = Rng::new(
            self.seed,
            self.stream ^ id.wrapping_mul(0xA076_1D64_78BD_642F).rotate_left(17),
        );
        if self.spec.kind == DataKind::Random || self.spec.compress <= 0.0 {
            rng.fill(unit);
            return;
        }
        let pct = self.spec.compress;
        for chunk in unit.chunks_mut(self.spec.compress_chunk as usize) {
            let lits = |dst: &mut [u8], _at: usize| rng.fill(dst);
            match self.spec.compress_method {
                CompressMethod::Zerofill => fill_zerofill(chunk, pct, lits),
                CompressMethod::Repeat => fill_repeat(chunk, pct, lits),
            }
        }
    }
}

/// `buf` filled with `pattern` repeated from its first byte (as fio's `buffer_pattern`
/// fills each buffer): the pattern once, then the filled prefix copied after itself,
/// doubling (a byte at a time cost 2 ns a byte: 125 µs per 64 KiB write).
pub(crate) fn fill_pattern(buf: &mut [u8], pattern: &[u8]) {
    let n = pattern.len().min(buf.len());
    buf[..n].copy_from_slice(&pattern[..n]);
    repeat_prefix(buf, n);
}

#[cfg(test)]
#[path = "data_tests.rs"]
mod tests;

//! Measuring what was written: a bounded sample of writes compressed with lz4 and zstd
//! chunk by chunk, and duplicate units counted by content hash.

use std::hash::BuildHasherDefault;

use crate::plan::data::DataSpec;
use crate::workload::hash::{PoolHashes, content_hash};
use crate::workload::keys::{KeyHasher, LentStamps, selector_at, selector_of_places};
use crate::workload::pool::turn_at;
use crate::workload::seen::{Seen, SeenTable};
use crate::workload::tracks::{
    Counted, TRACK_ALL_UNITS, TRACK_EVERY, Tracks, first_tracked_from, next_tracked_after,
};

/// Fraction of the written bytes the dedup measurement may hash, as a power of two
/// (1/1024 for units whose content is rare, as much again for the copies of frequent
/// contents). A write lent from the data pool costs a few nanoseconds per unit, and
/// hashing a unit (read from the pool, 4 KiB at about 8 GB/s) about 500: hashing 1/256
/// of the bytes took 4% of a null 128 KiB write's CPU (perf), 1/1024 a quarter of that.
const HASH_BUDGET_SHIFT: u32 = 10;
/// Units every job may hash before the budget applies, so that runs are measured from a
/// sample whose spread is within a point: at 50% duplicates each sampled content brings
/// about two units, and the error is the number of contents' (8192 units, the allowance
/// until 2026-11-28, left about 4000 contents in runs of a few GiB, about 0.8 points of
/// standard error: 1 s null runs of `--dedup 50` measured 48.9–51.7 over six seeds;
/// 32768, 49.3–50.5, at 1.01–1.04x the CPU of a null write; 1024 before that gave 1.6,
/// and 256 of 16 KiB units measured 17.7% for 20%) ...
const HASH_ALLOWANCE_UNITS: u64 = 32768;
/// ... and at least 16 MiB of them, at most 1 GiB (8192 units of 128 KiB).
const HASH_ALLOWANCE_BYTES: (u64, u64) = (16 << 20, 1 << 30);
/// A selector counted this many times in its slot of the tracking table is *frequent*:
/// pinned, and from then on one copy in `1 << HASH_BUDGET_SHIFT` is hashed, and counts
/// for that many. (Counted at tracked positions: once one unit in 16 is tracked, 8
/// counts stand for about 128 copies.)
const FREQUENT: u32 = 8;
/// The units of pinned contents between two of their copies that are hashed: one copy
/// in `1 << HASH_BUDGET_SHIFT` (counted in the units the tracked copies stand for).
const FREQUENT_HASH_EVERY: u64 = 1 << HASH_BUDGET_SHIFT;
/// Units a write's first pass over its units takes at once (the bits of a mask).
const GROUP: usize = 64;
/// The seed of the draws that place each kept piece of the compression sample in its
/// stretch and the coins of its halvings (`Sampler::draw`, `Sampler::coin`; any constant).
const PLACE_SEED: u64 = 0x9E37_79B9_7F4A_7C15;
/// Watches the buffers a job writes and keeps enough to measure them, within a fixed
/// budget: a bounded sample of whole writes for compression, and content hashes of a
/// sample of units for dedup.
///
/// Dedup units are sampled *by content*, so that every copy of a sampled unit is sampled
/// too and the duplicate share among sampled units estimates the whole stream's: a cheap
/// *selector* (the unit's first word, or its stamp's: `with_stamp_turns`) decides, and a
/// unit is hashed in full when its selector falls in the sampled fraction of hash space
/// (`shift` low zero bits). The fraction halves whenever the hashed bytes exceed the
/// allowance plus 1/1024 of the written bytes while more than 1/1024 is selected, or the
/// table exceeds its entries.
/// Copies of a *frequent* content (zeros, a pattern, a small `--dedup-set`) would all be
/// hashed whatever the fraction, so the selectors of the units at one position in
/// `TRACK_EVERY` (at every position for a job's first `TRACK_ALL_UNITS`) are counted in a
/// tracking table, and a selector counted `FREQUENT`
/// times there has its content *pinned*: from then on its copies are counted apart, in
/// the units the tracked ones stand for, and only one in 1024 is hashed (to tell a
/// content seen before, all of whose copies are duplicates, from distinct contents that
/// share a selector). The sampled contents (their copies before any pin) stand for
/// 2^shift contents each: the copies after a pin are the same share of every content's,
/// in the sample or not. (Until 2026-11-28 a pinned content stood for itself alone,
/// with the copies counted before its pin taken as 8 × the units a tracked one stands
/// for; in a long run of `--dedup 50`, where contents are pinned on few copies, that
/// doubled their units and measured 0.3–0.4 points more than the sample alone.)
#[derive(Debug, Clone)]
pub struct Sampler {
    chunk: usize,
    unit: usize,
    exhaustive: bool,
    /// Exhaustive mode: the stream's bytes not yet in a whole unit, and in a whole chunk
    /// (`iomark data` measures the stream, whose units span its writes).
    unit_carry: Vec<u8>,
    chunk_carry: Vec<u8>,
    // Compression: pieces of the writes (each whole compression chunk of a write, or a
    // write smaller than a chunk whole), one at a random place in every `stride` of them
    // (a power of two), up to `budget` bytes; `piece_lens` the length of each held.
    samples: Vec<u8>,
    piece_lens: Vec<u32>,
    budget: usize,
    stride: u64,
    /// Pieces seen, the index of the next one to keep, and the draw of its place.
    seq: u64,
    next_piece: u64,
    place: u64,
    /// A write's length and its count of pieces, as last worked out.
    piece_memo: (usize, u64),
    // Exhaustive mode accumulates compressed sizes as it goes.
    raw: u64,
    lz4: u64,
    zstd: u64,
    // Dedup: full hash → what it stands for, for units whose selector has `shift` low
    // zero bits.
    seen: SeenTable,
    pub(crate) shift: u32,
    pub(crate) max_entries: usize,
    /// Bytes observed, and bytes of rare contents hashed (the budget's two sides).
    written: u64,
    hashed_rare: u64,
    /// Units hashed in full: the sample size.
    hashed_units: u64,
    /// `written` when the fraction was last halved: it is halved at most once per
    /// doubling of the written bytes, so that the sample shrinks gradually.
    written_at_narrow: u64,
    /// The selectors of the units at tracked positions counted (`workload::tracks`),
    /// whatever the sampled fraction: a content that comes `FREQUENT` times close
    /// together is pinned there, found whether or not its selector is in the sample.
    tracks: Tracks,
    /// Units of frequent contents passed over since one was last hashed (each tracked
    /// copy stands for `track_every`, as it was when the copy came).
    frequent_skip: u64,
    /// Copies of frequent contents hashed (`observe_frequent`), and how many of them
    /// were a content not seen before (distinct units that share a pinned selector).
    frequent_hashed: (u64, u64),
    /// The content hashes of the pinned contents (the copy that pinned each, and the
    /// copies hashed since that were new).
    pinned: std::collections::HashSet<u64, BuildHasherDefault<KeyHasher>>,
    /// Units of pinned contents after their pin that the hashed copies stood for, and
    /// those of them whose hashed copy was a content not seen before.
    pinned_units: (u64, u64),
    /// Units of frequent contents passed over and not yet counted, and the duplicates
    /// among them, in other jobs' samplers merged into this one.
    merged_skipped: (u64, u64),
    /// Whole units seen, and the index of the next one tracked (unit `i` is tracked
    /// when the Weyl sequence's `i + 1`-th value is below `TRACK_BELOW`; every unit while
    /// `track_every` is 1).
    units_seen: u64,
    next_tracked: u64,
    /// Units a tracked one stands for (1, then `TRACK_EVERY` once `TRACK_ALL_UNITS`
    /// are written).
    track_every: u64,
    /// The selector last found pinned (pinned for good): its units at positions not
    /// tracked are passed over without a look at the table (the copies of zeros or of a
    /// pattern, every unit of such a write, are all in the sampled fraction).
    pinned_sel: u64,
    /// A group's selectors between its two passes (kept here: a fresh array was zeroed
    /// for every write).
    sels: Box<[u64; GROUP]>,
    /// Whether the job was asked, and told, how much it will write (`plan`).
    plan: Plan,
    /// The lines the pool's stamps turn through (`UnitPool::stamp_turns`): unit `id`'s
    /// selector is read at `pool::turn_at(id, turns)`; 1: at every unit's first word.
    turns: usize,
    /// Where a unit's selector is read: at `stamp_at` (and its turn), or when its stamps
    /// are several, at `sel_places` (`pool::selector_reads`; empty: at `stamp_at`).
    stamp_at: usize,
    sel_places: Box<[u32]>,
    /// The first word of a block header the job's writes open with (`with_block_headers`;
    /// 0: none): a unit that opens with it has its selector read from the header.
    header: u64,
    /// The content hashes of units lent from the job's data pool, composed from the
    /// pool's sums and each unit's stamp as written (`workload::hash`); `None`: every
    /// unit hashed in full.
    pool: Option<PoolHashes>,
    /// The stamps of the units lent from the job's data pool, whose selectors are known
    /// from their ids (`observe_lent`); `None`: every unit's selector read.
    lent: Option<LentStamps>,
    /// The stamps of the units copied out of the job's data pool (a dedup stream), whose
    /// selectors are known from their ids: the tracking table's sets they will visit are
    /// asked for before the copies are made (`prefetch_ids`). `None`: no such hint.
    copied: Option<LentStamps>,
    /// The ids of the units of the write being observed, as `prefetch_ids` was told them
    /// (a dedup stream's with the pool's sums), and the address of its first byte
    /// (`observe_from`): a sampled unit whose stamp is its id's is that id's copy, and its
    /// hash is composed (`hash`).
    told: Vec<u64>,
    told_at: usize,
    /// The selector and hash of the one unit a constant profile's lent writes are made
    /// of (`with_uniform_unit`), and the hash while such a write is observed (`hash`).
    uniform: Option<(u64, u64)>,
    uniform_now: Option<u64>,
}

/// Where a sampler is with its plan (`Sampler::plan`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    None,
    Asked,
    Made,
}

impl Sampler {
    /// A sampler for one job: compression samples up to 4 MiB, dedup hashes within the
    /// budget above (at most 64 Ki distinct contents).
    pub fn new(spec: &DataSpec) -> Sampler {
        let (stamp_at, sel_places) = crate::workload::pool::selector_reads(spec);
        Sampler {
            chunk: spec.compress_chunk as usize,
            unit: spec.dedup_unit as usize,
            exhaustive: false,
            unit_carry: Vec::new(),
            chunk_carry: Vec::new(),
            samples: Vec::new(),
            piece_lens: Vec::new(),
            budget: crate::plan::data::SAMPLE_BUDGET,
            stride: 1,
            seq: 0,
            next_piece: 0,
            place: PLACE_SEED,
            piece_memo: (0, 0),
            raw: 0,
            lz4: 0,
            zstd: 0,
            seen: SeenTable::for_contents(crate::plan::data::MAX_UNIT_HASHES),
            shift: 0,
            max_entries: crate::plan::data::MAX_UNIT_HASHES,
            written: 0,
            hashed_rare: 0,
            hashed_units: 0,
            written_at_narrow: 0,
            tracks: Tracks::new(),
            frequent_skip: 0,
            frequent_hashed: (0, 0),
            pinned: Default::default(),
            pinned_units: (0, 0),
            merged_skipped: (0, 0),
            units_seen: 0,
            next_tracked: 0,
            track_every: 1,
            pinned_sel: 0,
            sels: Box::new([0; GROUP]),
            plan: Plan::None,
            turns: 1,
            stamp_at,
            sel_places: sel_places.into(),
            header: 0,
            pool: None,
            lent: None,
            copied: None,
            told: Vec::new(),
            told_at: 0,
            uniform: None,
            uniform_now: None,
        }
    }

    /// The sampler whose larger tables lie in huge pages advised by `advise`
    /// (`workload::huge`; the measuring layer's `io::sys::back_with_huge_pages`).
    pub(crate) fn with_huge_pages(mut self, advise: crate::workload::huge::Advise) -> Sampler {
        self.tracks = self.tracks.with_huge_pages(advise);
        self.seen = self.seen.with_huge_pages(advise);
        self
    }

    /// Whether the sampler's tables were given advice for huge pages.
    #[cfg(test)]
    pub(crate) fn tables_advised(&self) -> bool {
        self.tracks.advised() && self.seen.advised()
    }

    /// The sampler of a job whose writes are lent from a data pool with these hashes
    /// (`DataGen::take_pool_hashes`): a sampled unit lent from it is hashed from the pool's
    /// sum and its stamp, two words read rather than the unit.
    pub(crate) fn with_pool_hashes(mut self, pool: Option<PoolHashes>) -> Sampler {
        self.pool = pool;
        self
    }

    /// The content hash of a unit: known when it is the uniform unit of a constant
    /// profile's lent write (`observe_uniform`); composed when it lies in the job's data pool (lent),
    /// or is the copy of a pool unit that `prefetch_ids` was told (a dedup stream's, its
    /// stamp its id's: a unit whose stamp a verify header overwrote is not), else of its
    /// bytes.
    #[inline]
    fn hash(&mut self, unit: &[u8]) -> u64 {
        if let Some(h) = self.uniform_now {
            return h;
        }
        let Some(p) = self.pool.as_mut() else {
            return content_hash(unit);
        };
        let Some(c) = self.copied else {
            return p.hash_checked(unit);
        };
        let k = (unit.as_ptr() as usize).wrapping_sub(self.told_at) >> self.unit.trailing_zeros();
        match self.told.get(k) {
            Some(&id) => p.copy_hash_checked(unit, (id % p.units() as u64) as usize, c.word(id)),
            None => content_hash(unit),
        }
    }

    /// A sampler that measures everything it sees (for `iomark data`).
    pub(crate) fn exhaustive(spec: &DataSpec) -> Sampler {
        Sampler {
            exhaustive: true,
            max_entries: usize::MAX,
            seen: SeenTable::default(),
            ..Sampler::new(spec)
        }
    }

    /// Looks at one written buffer. Per unit, the hot path is the selector and two
    /// compares; what is rarely taken (hashing a sampled unit, keeping a sampled write)
    /// is out of line, so that the common case saves no registers for it.
    #[inline(always)]
    pub fn observe(&mut self, buf: &[u8]) {
        self.observe_from(buf, 0);
    }

    /// `observe` of a write whose first unit is unique unit `first_id` of the job's
    /// stream (where the units' stamps lie, when they turn: `with_stamp_turns`).
    #[inline(always)]
    pub fn observe_from(&mut self, buf: &[u8], first_id: u64) {
        if self.exhaustive {
            self.observe_all(buf);
            return;
        }
        self.told_at = buf.as_ptr() as usize;
        self.count_bytes(buf.len());
        // Whole units only: a write's tail shorter than a unit (a write smaller than the
        // unit, or a size that is no multiple of it) is no unit a deduplicator could
        // match, and equal short pieces are not duplicate units.
        // One unit (a write of one unit, the common small write) without a division.
        if buf.len() == self.unit {
            let tracked = self.tracked_among(1) == 1;
            self.track(buf, tracked, self.stamp_of(first_id));
        } else {
            for (g, units) in buf.chunks(GROUP * self.unit).enumerate() {
                self.track_group(units, first_id + (g * GROUP) as u64);
            }
        }
        self.count_write(buf);
    }

    /// A write's bytes counted; one unit in `TRACK_EVERY` tracked from
    /// `TRACK_ALL_UNITS` units on (`observe_from`, `observe_uniform`).
    #[inline(always)]
    pub(super) fn count_bytes(&mut self, len: usize) {
        self.written += len as u64;
        if self.track_every == 1 && self.written >= TRACK_ALL_UNITS * self.unit as u64 {
            self.track_every = TRACK_EVERY;
            self.next_tracked = first_tracked_from(self.units_seen);
        }
    }

    /// One more write seen: its pieces counted, and those whose turn comes kept for the
    /// compression sample.
    #[inline(always)]
    fn count_write(&mut self, buf: &[u8]) {
        if buf.len() != self.piece_memo.0 {
            self.piece_memo = (buf.len(), self.pieces_of(buf.len()));
        }
        let end = self.seq + self.piece_memo.1;
        if self.next_piece < end {
            self.sample_pieces(buf);
        }
        self.seq = end;
    }

    /// One unit of a write, as `observe` sees it: its selector, which picks the sampled
    /// units; at a tracked position (one in `TRACK_EVERY`) also counted in the tracking
    /// table. The common case (a unit neither tracked nor sampled) is a selector, a step
    /// of the position and two compares, with no load beyond the word at the unit's stamp.
    #[inline(always)]
    fn track(&mut self, unit: &[u8], tracked: bool, at: usize) {
        let sel = match self.header {
            0 => self.selector(unit, at),
            _ => self.headed_selector(unit, at),
        };
        if tracked {
            self.count(unit, sel);
            return;
        }
        let tz = sel.trailing_zeros();
        if tz >= self.shift && sel != self.pinned_sel {
            self.observe_untracked(unit, sel, tz);
        }
    }

    /// `track` for up to `GROUP` units at once, in two passes: every unit's selector and
    /// whether it is sampled, in a loop with no call and no store but the selectors' (so
    /// that the units' loads and multiplies overlap; the tracked units come from
    /// `tracked_among`, a few jumps per write); then the few units picked.
    #[inline(always)]
    fn track_group(&mut self, units: &[u8], first_id: u64) {
        let n = units.len() / self.unit;
        let tracked = self.tracked_among(n as u64);
        let sels = &mut *self.sels;
        let mut picked = 0u64;
        // (`trailing_zeros() >= shift`, as a mask: one instruction where that was three.)
        let (low, pinned) = ((1u64 << self.shift) - 1, self.pinned_sel);
        let (turns, at) = (self.turns, self.stamp_at);
        if self.header != 0 {
            let (places, header) = (&self.sel_places, self.header);
            for (k, unit) in units.chunks_exact(self.unit).enumerate() {
                let at = at + turn_at(first_id as usize + k, turns);
                let sel = headed_selector(places, header, unit, at);
                sels[k] = sel;
                picked |= u64::from(sel & low == 0 && sel != pinned) << k;
            }
        } else if self.sel_places.is_empty() {
            for (k, unit) in units.chunks_exact(self.unit).enumerate() {
                let sel = selector_at(unit, at + turn_at(first_id as usize + k, turns));
                sels[k] = sel;
                picked |= u64::from(sel & low == 0 && sel != pinned) << k;
            }
        } else {
            for (k, unit) in units.chunks_exact(self.unit).enumerate() {
                let sel = selector_of_places(unit, &self.sel_places);
                sels[k] = sel;
                picked |= u64::from(sel & low == 0 && sel != pinned) << k;
            }
        }
        let mut todo = tracked | picked;
        // (The loop below reads `sels` only where the first pass wrote.)
        while todo != 0 {
            let k = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let unit = &units[k * self.unit..][..self.unit];
            let sel = self.sels[k];
            if tracked >> k & 1 == 1 {
                self.count(unit, sel);
            } else {
                // (The fraction may have narrowed since the first pass.)
                let tz = sel.trailing_zeros();
                if tz >= self.shift {
                    self.observe_untracked(unit, sel, tz);
                }
            }
        }
    }

    /// Which of the next `n` units (at most `GROUP`) are tracked, as bits, and those
    /// units counted as seen.
    #[inline(always)]
    fn tracked_among(&mut self, n: u64) -> u64 {
        let first = self.units_seen;
        self.units_seen += n;
        if self.track_every == 1 {
            return match n {
                0 => 0,
                _ => u64::MAX >> (64 - n),
            };
        }
        self.next_tracked = self.next_tracked_at(first);
        let mut tracked = 0u64;
        while self.next_tracked < self.units_seen {
            tracked |= 1 << (self.next_tracked - first);
            self.next_tracked = next_tracked_after(self.next_tracked);
        }
        tracked
    }

    /// The first tracked position at or after `first` (the next unit seen): the one kept,
    /// or, when lent writes passed by (`observe_lent` tracks none), the next from there.
    #[inline(always)]
    pub(super) fn next_tracked_at(&self, first: u64) -> u64 {
        match self.next_tracked < first {
            true => first_tracked_from(first),
            false => self.next_tracked,
        }
    }

    /// A unit at a tracked position: its selector counted in the tracking table, and the
    /// unit hashed when frequent (one copy in `FREQUENT_HASH_EVERY` here) or in the
    /// sampled fraction.
    #[inline(never)]
    fn count(&mut self, unit: &[u8], sel: u64) {
        match self.tracks.count(sel, FREQUENT) {
            Counted::Pinned => {
                self.pinned_sel = sel;
                self.frequent_skip += self.track_every;
                if self.frequent_skip >= FREQUENT_HASH_EVERY {
                    self.observe_frequent(unit);
                }
                return;
            }
            Counted::NowPinned => {
                self.pin(unit, sel);
                return;
            }
            Counted::Rising => {}
        }
        let tz = sel.trailing_zeros();
        if tz >= self.shift {
            self.observe_selected(unit, tz);
        }
    }

    /// A unit in the sampled fraction at a position that is not tracked: hashed, unless
    /// its content is pinned (then it is counted through the tracked positions).
    #[inline(never)]
    fn observe_untracked(&mut self, unit: &[u8], sel: u64, tz: u32) {
        if self.tracks.is_pinned(sel) {
            self.pinned_sel = sel;
            return;
        }
        self.observe_selected(unit, tz);
    }

    /// The copy of a frequent content that completes `FREQUENT_HASH_EVERY` units of
    /// them since one was hashed: hashed, standing for those units (itself among them).
    /// (Counted in tracked copies, the count went on across the change from every unit
    /// tracked to one in 16: the copies counted before it came to stand for 16 units
    /// each, and a run that ended just after the change measured 51.6% for 50%.)
    #[cold]
    #[inline(never)]
    fn observe_frequent(&mut self, unit: &[u8]) {
        let w = std::mem::take(&mut self.frequent_skip);
        self.hashed_units += 1;
        self.frequent_hashed.0 += 1;
        self.pinned_units.0 += w;
        let h = self.hash(unit);
        if self.pinned.insert(h) {
            self.frequent_hashed.1 += 1;
            self.pinned_units.1 += w;
        }
    }

    /// A selector just found frequent: pinned in its slot, its content's hash kept, and
    /// its copies counted from the next one on through the pinned path. This copy, the
    /// last before the pin, is counted as any other: hashed in the sample when its
    /// selector is in the sampled fraction.
    #[cold]
    #[inline(never)]
    fn pin(&mut self, unit: &[u8], sel: u64) {
        // (Its slot already says pinned.)
        let h = self.hash(unit);
        self.pinned.insert(h);
        let tz = sel.trailing_zeros();
        match tz >= self.shift {
            true => self.record(h, 1, tz),
            false => self.hashed_units += 1,
        }
    }

    /// A unit whose selector is in the sampled fraction.
    #[inline(never)]
    fn observe_selected(&mut self, unit: &[u8], tz: u32) {
        let h = self.hash(unit);
        self.record(h, 1, tz);
        self.hashed_rare += unit.len() as u64;
        // Over the budget while more than 1/1024 of the rare units are selected: halve
        // the fraction. At 1/1024 or less the budget catches up by itself.
        // Once the job said how much it will write, the fraction it narrowed to hashes
        // about the allowance again by the end: twice the allowance is the budget's
        // base then (narrowing on at the base of one, a 1 s null run narrowed to 1/1024
        // and kept ~3000 units: 49.2–51.9% for 50).
        let allowance = self.allowance() * if self.plan == Plan::None { 1 } else { 2 };
        let over_budget = self.hashed_rare > allowance + (self.written >> HASH_BUDGET_SHIFT)
            && self.shift < HASH_BUDGET_SHIFT
            && self.written >= 2 * self.written_at_narrow;
        if over_budget {
            // The allowance (or, once told, twice the allowance) is spent: the job is
            // asked how much it will write, again each time (its first answer comes
            // while the allowance is hashed, which slows a fast job: a debug build's
            // 8 s null run said 1.5 GB at 0.7 s, and wrote 90).
            self.plan = Plan::Asked;
        }
        if over_budget || self.seen.len() > self.max_entries {
            self.narrow();
        }
    }

    /// Counts one hashed unit standing for `weight` units.
    fn record(&mut self, h: u64, weight: u64, sel_tz: u32) {
        self.hashed_units += 1;
        self.seen.add(
            h,
            Seen {
                weight,
                first: weight,
                sel_tz,
            },
        );
    }
}

#[path = "sampler_budget.rs"]
mod budget;
#[path = "sampler_compress.rs"]
mod compress;
#[path = "sampler_select.rs"]
mod select;
use select::headed_selector;
#[path = "sampler_lent.rs"]
mod lent;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::keys::selector;
    use crate::workload::rng::Rng;
    use crate::workload::tracks::is_tracked;

    /// A write's units are tracked as the same units written one by one are: whatever
    /// the writes' sizes, the positions are those of the job's units in order.
    #[test]
    fn writes_of_any_size_track_the_same_units() {
        let spec = crate::plan::data::DataSpec::default();
        let (mut one, mut many) = (Sampler::new(&spec), Sampler::new(&spec));
        for s in [&mut one, &mut many] {
            s.track_every = TRACK_EVERY;
            s.units_seen = 1 << 20;
            s.next_tracked = first_tracked_from(1 << 20);
        }
        for group in 0..10 {
            let first = many.units_seen;
            let expected = (0..64).fold(0u64, |m, k| m | u64::from(is_tracked(first + k)) << k);
            assert!(expected != 0, "64 units hold tracked ones");
            assert_eq!(many.tracked_among(64), expected, "group {group}");
            for k in 0..64 {
                assert_eq!(
                    one.tracked_among(1),
                    expected >> k & 1,
                    "unit {k} of {group}"
                );
            }
        }
        assert_eq!(one.next_tracked, many.next_tracked);
        // Every unit is tracked at first.
        assert_eq!(Sampler::new(&spec).tracked_among(5), 0b11111);
        assert_eq!(Sampler::new(&spec).tracked_among(0), 0);
    }

    /// Units lent from a pool whose stamps turn through their lines (the default random
    /// data) are told apart where their stamps lie: over many laps of a small pool no
    /// selector comes often enough to be pinned, and the duplicates measured are none.
    /// (Read at each unit's first word, which is the pool unit's own whatever the lap,
    /// the 64 pool units' selectors were pinned as frequent contents.)
    #[test]
    fn lent_units_are_told_apart_where_their_stamps_lie() {
        use crate::workload::data::DataGen;
        let spec = DataSpec {
            pool: 256 << 10,
            ..DataSpec::default()
        };
        let mut g = DataGen::new(&spec, 5, 1, None);
        assert_eq!(g.stamp_turns(), 64);
        let mut m = Sampler::new(&spec).with_stamp_turns(g.stamp_turns());
        // The same, its hashes composed from the pool's (`workload::hash`).
        assert!(g.take_pool_hashes().is_none(), "not prepared");
        g.prepare_pool_hashes();
        let mut c = m.clone().with_pool_hashes(g.take_pool_hashes());
        let mut buf = vec![0u8; 128 << 10];
        let mut first_words = std::collections::HashSet::new();
        for _ in 0..2048 {
            let first_id = g.next_id();
            let l = g.next_write(&mut buf, true).expect("lent from the pool");
            c.observe_from(g.lent_bytes(l), first_id);
            let bytes = g.lent_bytes(l).to_vec();
            m.observe_from(&bytes, first_id);
            g.give_back(l);
            first_words.extend(bytes.chunks_exact(4096).map(selector));
        }
        // 64 pool units, 1024 laps: the first words are the pool's 64 (and the stamps in
        // the first line, one unit in 64, are all distinct).
        assert!(first_words.len() < 64 + 2048 * 32 / 64 + 1);
        let pinned = first_words
            .iter()
            .filter(|&&s| m.tracks.is_pinned(s))
            .count();
        assert_eq!(pinned, 0, "selectors pinned");
        assert_eq!(m.tracks.slots(), crate::workload::tracks::FIRST_SLOTS);
        let d = m.measure().expect("measured");
        assert_eq!(d.dedup_pct, Some(0.0));
        assert!(
            d.dedup_sampled_units > 1000,
            "{} hashed",
            d.dedup_sampled_units
        );
        // Composed, the hashes are the same: the same figures, every hashed unit composed
        // and every check passed.
        assert_eq!(c.measure(), Some(d));
        let (composed, broken) = c.pool.as_ref().expect("composed").composed();
        assert_eq!((composed, broken), (d.dedup_sampled_units, false));
    }

    /// `n` distinct 4 KiB units of random bytes, each with a first word of its own.
    fn dedup_set(rng: &mut Rng, n: u64) -> Vec<Vec<u8>> {
        let heads = (0..n).map(|k| k.wrapping_mul(0xA076_1D64_78BD_642F) | 1);
        heads.map(|h| unit_with_head(rng, h)).collect()
    }

    /// A 4 KiB unit of random bytes whose first word is `head`.
    fn unit_with_head(rng: &mut Rng, head: u64) -> Vec<u8> {
        let mut u = vec![0u8; 4096];
        rng.fill(&mut u);
        u[..8].copy_from_slice(&head.to_le_bytes());
        u
    }

    /// Three frequent contents whose selectors share a set of the tracking table, the
    /// last one in the sampled fraction at any shift: with two ways, the first two were
    /// pinned and the third could never be (pinned slots never give way), so each copy
    /// of it counted 2^shift times (a `--dedup-set 1000` run measured 60% for 50%).
    #[test]
    fn a_frequent_content_in_a_crowded_set_is_still_pinned() {
        // (Random data: the default.)
        let spec = DataSpec::default();
        // First words whose selectors land in one set; the last with 12 trailing zeros
        // (the sampled fraction never narrows below 1/1024).
        let mut probe = vec![0xA5u8; 4096];
        let mut sel_of = |head: u64| {
            probe[..8].copy_from_slice(&head.to_le_bytes());
            selector(&probe)
        };
        // Sets of the first table (three pinned contents do not grow it).
        let table = Tracks::new();
        let slot_of = |sel| table.set_of(sel);
        let target_set = slot_of(sel_of(1));
        let mut heads: Vec<u64> = (2u64..)
            .filter(|&h| slot_of(sel_of(h)) == target_set)
            .take(2)
            .collect();
        heads.push(
            (2u64..)
                .find(|&h| {
                    let sel = sel_of(h);
                    slot_of(sel) == target_set && sel.trailing_zeros() >= 12
                })
                .expect("a head"),
        );
        let mut rng = Rng::new(7, 7);
        let frequent: Vec<Vec<u8>> = heads.iter().map(|&h| unit_with_head(&mut rng, h)).collect();
        for f in &frequent {
            assert_eq!(slot_of(selector(f)), target_set);
        }
        // 2 Mi units: one in 16 a copy of one of the three (in turn), the rest unique.
        let mut m = Sampler::new(&spec);
        let units = 1u64 << 21;
        let mut copies = 0u64;
        // Unique units: one random body, each with its own first word.
        let mut unique = unit_with_head(&mut rng, 0);
        for k in 0..units {
            if k % 16 == 5 {
                m.observe(&frequent[(k / 16 % 3) as usize]);
                copies += 1;
            } else {
                let head = (k + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                unique[..8].copy_from_slice(&head.to_le_bytes());
                m.observe(&unique);
            }
        }
        let want = 100.0 * (copies - 3) as f64 / units as f64;
        let got = m.measure().expect("measured").dedup_pct.expect("units");
        assert!(m.shift >= 6, "sampling narrowed: shift {}", m.shift);
        assert!(
            (got - want).abs() < 1.0,
            "measured {got:.2}% duplicates, the stream has {want:.2}%"
        );
    }

    /// A short stream (200 Ki units, a fraction of a second on the null engine, seconds
    /// on a device) whose repeats are copies of 1000 contents: each comes about 100
    /// times, and with one unit in 16 counted in the tracking table few were pinned (a
    /// 1 s run under load measured outside 50 ± 2.5%). Every unit is counted until
    /// `TRACK_ALL_UNITS` are written.
    #[test]
    fn a_short_stream_pins_a_dedup_set_of_a_thousand() {
        // (Random data: the default.)
        let spec = DataSpec::default();
        let mut rng = Rng::new(3, 3);
        let set: Vec<Vec<u8>> = (0..1000u64)
            .map(|k| unit_with_head(&mut rng, k.wrapping_mul(0xA076_1D64_78BD_642F) | 1))
            .collect();
        let mut m = Sampler::new(&spec);
        let units = 200_000u64;
        let mut unique = unit_with_head(&mut rng, 0);
        let mut seen = std::collections::HashSet::new();
        let mut dups = 0u64;
        for k in 0..units {
            let unit = if rng.below(2) == 0 {
                &set[rng.below(1000) as usize]
            } else {
                let head = (k + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 2;
                unique[..8].copy_from_slice(&head.to_le_bytes());
                &unique
            };
            if !seen.insert(content_hash(unit)) {
                dups += 1;
            }
            m.observe(unit);
        }
        let want = 100.0 * dups as f64 / units as f64;
        let got = m.measure().expect("measured").dedup_pct.expect("units");
        assert!(m.shift >= 2, "sampling narrowed: shift {}", m.shift);
        assert!(
            (got - want).abs() < 1.5,
            "measured {got:.2}% duplicates, the stream has {want:.2}%"
        );
    }

    /// Copies of a pinned content between two hashed ones (one in 1024) were counted
    /// only when the next was hashed: a run of 1000 writes of zeros measured 87.5%
    /// duplicates (the 8 copies before the pin, 7 of them duplicates) for 99.9%, and a
    /// stream half zeros half unique units was as far off. The copies still pending at
    /// the end are duplicates, and count.
    #[test]
    fn a_short_run_counts_every_copy_of_a_pinned_content() {
        // (Random data: the default.)
        let spec = DataSpec::default();
        for units in [100u64, 1000, 1500, 3000, 5000] {
            for (every, whole) in [(1u64, 1usize), (2, 1), (1, 32)] {
                // `every` 1: zeros only; 2: zeros and unique units in turn. `whole`
                // units per write.
                let mut m = Sampler::new(&spec);
                let want = zeros_and_uniques(&mut m, units, whole, |k| k % every == 0);
                let got = m.measure().expect("measured").dedup_pct.expect("units");
                assert!(
                    (got - want).abs() < 0.5,
                    "{units} units ({every}, {whole} per write): measured {got:.2}% duplicates, the stream has {want:.2}%"
                );
            }
        }
    }

    /// Feeds `m` `units` units of 4 KiB, `whole` to a write (the last write may be
    /// shorter): unit `k` zeros when `zero(k)`, else a unit of its own. Returns the
    /// stream's share of duplicate units, in percent.
    fn zeros_and_uniques(
        m: &mut Sampler,
        units: u64,
        whole: usize,
        zero: impl Fn(u64) -> bool,
    ) -> f64 {
        let mut rng = Rng::new(9, 9);
        let mut unique = unit_with_head(&mut rng, 0);
        let zeros = vec![0u8; 4096];
        let mut write = Vec::with_capacity(whole * 4096);
        let mut zero_units = 0u64;
        for k in 0..units {
            if zero(k) {
                write.extend_from_slice(&zeros);
                zero_units += 1;
            } else {
                let head = (k + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                unique[..8].copy_from_slice(&head.to_le_bytes());
                write.extend_from_slice(&unique);
            }
            if write.len() == whole * 4096 || k + 1 == units {
                m.observe(&write);
                write.clear();
            }
        }
        100.0 * zero_units.saturating_sub(1) as f64 / units as f64
    }

    /// Distinct units that share their first word (pages of one format whose headers
    /// agree): their selector comes often and is pinned, and the copies passed over
    /// since the last one hashed are not all duplicates. They count as the copies
    /// hashed so far did (here, none a duplicate); counted as duplicates, a stream of
    /// 5000 distinct units measured 18% duplicates.
    #[test]
    fn distinct_units_that_share_a_first_word_are_not_counted_as_copies() {
        // (Random data: the default.)
        let spec = DataSpec::default();
        let mut rng = Rng::new(11, 11);
        for units in [3000u64, 5000, 20000] {
            let mut m = Sampler::new(&spec);
            let mut unit = unit_with_head(&mut rng, 0x5041_4745_4844_5231);
            for _ in 0..units {
                rng.fill(&mut unit[8..]);
                m.observe(&unit);
            }
            let got = m.measure().expect("measured").dedup_pct.expect("units");
            assert!(
                got < 0.5,
                "{units} distinct units: measured {got:.2}% duplicates"
            );
        }
    }

    /// The contents of a `--dedup-set 10000`, each copied about 25 times among as many
    /// unique units, are all pinned by the end of the first phase (every unit counted).
    /// With a table of 16384 slots (4096 sets of 4) a set of four pinned contents never
    /// gives way, and the sets that drew five or more of the 10000 could not pin them
    /// all: 8350 of 10000 were pinned here, the rest left to the sampled fraction, where
    /// each stood for 2^shift contents, and 1 s runs of `--dedup 50 --dedup-set 10000`
    /// measured 47.6–54.2%.
    #[test]
    fn every_content_of_a_dedup_set_of_ten_thousand_is_pinned() {
        let spec = DataSpec::default();
        let mut rng = Rng::new(5, 5);
        let set = dedup_set(&mut rng, 10_000u64);
        let mut m = Sampler::new(&spec);
        let mut unique = unit_with_head(&mut rng, 0);
        for k in 0..500_000u64 {
            if rng.below(2) == 0 {
                m.observe(&set[rng.below(10_000) as usize]);
            } else {
                let head = (k + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 2;
                unique[..8].copy_from_slice(&head.to_le_bytes());
                m.observe(&unique);
            }
        }
        let pinned = set
            .iter()
            .filter(|u| m.tracks.is_pinned(selector(u)))
            .count();
        assert!(pinned >= 9_950, "{pinned} of 10000 set contents pinned");
    }

    /// A stream that ends where every unit stops being counted (2^20 units, half of them
    /// zeros): the copies of zeros passed over were counted in tracked copies,
    /// and those counted before the change came to stand for 16 units each; the pending
    /// ones at the end (up to 1023, taken for 16368 units) made a run of 2^20 units of
    /// `--dedup 50` measure 51.6%. They are counted in units as they come.
    #[test]
    fn copies_passed_over_keep_their_count_across_the_change_of_tracking() {
        let spec = DataSpec::default();
        let mut m = Sampler::new(&spec);
        // The last write (32 units, the one that ends the phase) all unique: no copy
        // of zeros after the change is hashed before the figures are made.
        let units = TRACK_ALL_UNITS;
        let want = zeros_and_uniques(&mut m, units, 32, |k| k % 2 == 0 && k < units - 32);
        let got = m.measure().expect("measured").dedup_pct.expect("units");
        assert!(
            (got - want).abs() < 0.3,
            "measured {got:.2}% duplicates, the stream has {want:.2}%"
        );
    }

    /// Contents pinned once one unit in 16 is tracked, on few copies (6 while every
    /// unit was counted, then one in 32 units): a pinned content stood for itself with
    /// its copies before the pin taken as 8 counts x 16 units, about 128 where it had
    /// about 22, and the surplus counted as duplicates (5.87% measured here for 3.60%;
    /// in long runs of `--dedup 50`, 0.3 to 0.4 points more). Its copies before the pin
    /// are counted in the sample as every content's are.
    #[test]
    fn contents_pinned_late_on_few_copies_are_not_counted_twice() {
        let spec = DataSpec::default();
        let mut rng = Rng::new(17, 17);
        let set = dedup_set(&mut rng, 2000u64);
        let mut unique = unit_with_head(&mut rng, 0);
        let mut m = Sampler::new(&spec);
        // (Every unique unit is distinct, and the set's contents come in turn: the
        // duplicates are the set's units past its first 2000.)
        let (mut set_units, mut next) = (0u64, 0usize);
        let mut write = Vec::with_capacity(32 * 4096);
        let units = 2 * TRACK_ALL_UNITS;
        for k in 0..units {
            // Phase 1: a set unit every 87 units (about 6 copies of each); phase 2:
            // every 16th (about 32).
            let every = if k < TRACK_ALL_UNITS { 87 } else { 16 };
            let unit = if k % every == 5 {
                next = (next + 1) % set.len();
                set_units += 1;
                &set[next]
            } else {
                let head = (k + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 2;
                unique[..8].copy_from_slice(&head.to_le_bytes());
                &unique
            };
            write.extend_from_slice(unit);
            if write.len() == 32 * 4096 {
                m.observe(&write);
                write.clear();
            }
        }
        let want = 100.0 * (set_units - set.len() as u64) as f64 / units as f64;
        let got = m.measure().expect("measured").dedup_pct.expect("units");
        assert!(
            (got - want).abs() < 2.0,
            "measured {got:.2}% duplicates, the stream has {want:.2}%"
        );
    }

    /// A stream of `--dedup 50` keeps the allowance's sample: at least 32768 units
    /// hashed (about 16000 contents, a standard error of 0.4 points). With 8192 a run of
    /// a few GiB kept about 4000 contents and measured 48.9–51.7 over six seeds.
    #[test]
    fn a_dedup_stream_keeps_a_sample_of_the_allowance() {
        let spec = DataSpec {
            dedup: 50.0,
            ..DataSpec::default()
        };
        let mut g = crate::workload::data::DataGen::new(&spec, 3, 7, None);
        let mut m = Sampler::new(&spec);
        let mut buf = vec![0u8; 128 << 10];
        for _ in 0..(1 << 17) / 32 {
            g.fill(&mut buf);
            m.observe(&buf);
        }
        assert!(m.hashed_units >= 32768, "{} units hashed", m.hashed_units);
    }

    /// A job that says how much it will write (`plan`, when the allowance is spent)
    /// hashes about twice the allowance in all, where halving the fraction once per
    /// doubling of the written bytes hashed half the allowance again at every doubling
    /// (2^20 units here: 32768 + 5 x 16384); the figure as close to the asked share.
    #[test]
    fn a_job_that_says_how_much_it_writes_hashes_the_allowance_twice() {
        let spec = DataSpec {
            dedup: 50.0,
            ..DataSpec::default()
        };
        let units = 1u64 << 20;
        let mut g = crate::workload::data::DataGen::new(&spec, 3, 9, None);
        let (mut told, mut untold) = (Sampler::new(&spec), Sampler::new(&spec));
        let mut buf = vec![0u8; 128 << 10];
        let mut asked_at = None;
        for _ in 0..units / 32 {
            g.fill(&mut buf);
            told.observe(&buf);
            untold.observe(&buf);
            if told.wants_plan() {
                asked_at = Some(told.written());
                told.plan(units * 4096);
            }
        }
        let asked_at = asked_at.expect("the sampler asked");
        assert!(
            (asked_at >> 12) <= 2 * 32768,
            "asked after {} units",
            asked_at >> 12
        );
        assert!(
            told.hashed_units <= 2 * 32768 + 32768 / 8,
            "{} units hashed",
            told.hashed_units
        );
        assert!(
            untold.hashed_units >= 32768 + 4 * 16384,
            "{} units hashed without a plan",
            untold.hashed_units
        );
        for m in [&told, &untold] {
            let got = m.measure().unwrap().dedup_pct.unwrap();
            eprintln!("{got:.2}% from {} units", m.hashed_units);
            assert!((got - 50.0).abs() < 1.0, "{got:.2} for 50");
        }
    }

    /// A `repeat` stream with fewer than 8 literals a segment (98.8%: one a 512-byte
    /// segment, the opening one copied on) is sampled at its units' literals: 4096
    /// distinct units have as many selectors, and over 64 laps of a 1 MiB pool, the
    /// fraction narrowed, the duplicates measured are those of the stream (none, or the
    /// 30% asked) within a point or two. (Read at each unit's first word, its opening byte
    /// eight times, 4096 units had 256 selectors: 64 MiB of such a stream, 11% duplicate
    /// units then, measured 0.2%.)
    #[test]
    fn a_repeat_stream_of_few_literals_is_sampled_at_its_literals() {
        use crate::plan::data::{CompressMethod, DataKind};
        use crate::workload::data::DataGen;
        use crate::workload::hash::content_hash;
        // (1 KiB chunks, four to a unit, two one-byte stamps each: read at the first
        // chunk's alone, 2^16 selectors.)
        for (dedup, chunk) in [(0.0, 4096), (30.0, 4096), (0.0, 1024)] {
            let spec = DataSpec {
                kind: DataKind::Compressible,
                compress: 98.8,
                compress_method: CompressMethod::Repeat,
                compress_chunk: chunk,
                dedup,
                pool: 1 << 20,
                ..DataSpec::default()
            };
            let mut g = DataGen::new(&spec, 5, 1, None);
            let mut m = Sampler::new(&spec).with_stamp_turns(g.stamp_turns());
            m.plan(1 << 29);
            let (mut contents, mut units, mut sels) = (
                std::collections::HashSet::new(),
                0u64,
                std::collections::HashSet::new(),
            );
            let mut buf = vec![0u8; 128 << 10];
            for _ in 0..512 {
                let first_id = g.next_id();
                g.fill(&mut buf);
                m.observe_from(&buf, first_id);
                for unit in buf.chunks_exact(4096) {
                    if contents.insert(content_hash(unit)) && contents.len() <= 4096 {
                        sels.insert(m.selector(unit, 0));
                    }
                    units += 1;
                }
            }
            assert!(sels.len() > 4090, "{} selectors of 4096 units", sels.len());
            let truth = 100.0 * (1.0 - contents.len() as f64 / units as f64);
            assert!(
                (truth - dedup).abs() < 0.5,
                "{truth:.2}% duplicates for {dedup}"
            );
            let d = m.measure().expect("measured");
            let got = d.dedup_pct.expect("dedup measured");
            eprintln!(
                "{got:.2}% of {} units hashed, {truth:.2}%",
                d.dedup_sampled_units
            );
            assert!(
                (got - truth).abs() < 2.0 && d.dedup_sampled_units < units / 3,
                "{got:.2}% measured for {truth:.2}% ({} units hashed)",
                d.dedup_sampled_units
            );
        }
    }

    /// Blocks that open with a header whose first word is the same in every block
    /// (`--verify`'s) are sampled by the header's other words (`with_block_headers`):
    /// 256 writes of 16 KiB, each block's first unit headed, measure no duplicates. Read
    /// at their first word the headed units had one selector, were pinned as a frequent
    /// content and counted as its copies (as a run measured 1.4%, and 42.6% for 30% asked).
    #[test]
    fn units_that_open_with_a_block_header_are_sampled_by_it() {
        use crate::workload::data::DataGen;
        let spec = DataSpec::default();
        let magic = u64::from_le_bytes(*b"HEADERv1");
        let mut measured = Vec::new();
        for headers in [None, Some(magic)] {
            let mut g = DataGen::new(&spec, 5, 1, None);
            let mut m = Sampler::new(&spec)
                .with_stamp_turns(g.stamp_turns())
                .with_block_headers(headers);
            let mut buf = vec![0u8; 16 << 10];
            for w in 0..256u64 {
                let first_id = g.next_id();
                g.fill(&mut buf);
                buf[..8].copy_from_slice(&magic.to_le_bytes());
                buf[8..16].copy_from_slice(&(w * 16384).to_le_bytes());
                buf[24..32].copy_from_slice(&(w + 1).to_le_bytes());
                m.observe_from(&buf, first_id);
            }
            measured.push(m.measure().expect("measured").dedup_pct.expect("dedup"));
        }
        assert!(measured[0] > 0.3, "without: {:.2}%", measured[0]);
        assert_eq!(measured[1], 0.0, "with the headers told");
    }
}

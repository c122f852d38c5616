//! The sampler's tracking table: how often each selector came lately, so that a content
//! written over and over (zeros, a pattern, the contents of a `--dedup-set`) is found
//! *frequent* and pinned whether or not its selector is in the sampled fraction
//! (`workload::sampler`).
//!
//! Which units are counted there (*tracked*) is a fixed, content-blind choice of
//! positions in a job's order of units (`TRACK_EVERY`, `next_tracked_after`).
//!
//! The table starts small and grows fourfold (up to `TRACK_SLOTS`), its counts kept,
//! when one slot in `GROW_AT` is pinned. A stream
//! without frequent contents (the default random data, every unit unique) keeps the
//! smallest table, which stays in the core's caches beside the pool's lines; a table of
//! 65536 slots (512 KiB) throughout cost about 1.09x the CPU of a null 128 KiB write.

use crate::plan::data::TRACK_SLOTS;
use crate::workload::huge::{Advise, TableMem, Zeroed};

/// One unit in `TRACK_EVERY` (a fixed, content-blind choice of positions: a Weyl
/// sequence over the units' order) is counted in the tracking table. Counting every unit
/// missed the cache on most of them (the table was 128 KiB then, and the pool's stamps stream
/// through the caches): 12 ns per unit, more than the rest of a pooled write. A content
/// frequent enough to pin is frequent among those positions too: its count there rises
/// as often relative to the others' as it did over every unit. (Every unit is counted
/// until `TRACK_ALL_UNITS` have been written, so that a short run or a slow device pins
/// what comes a few dozen times: counted one in 16, a content of a `--dedup-set 1000`
/// needed about 128 copies.)
pub(super) const TRACK_EVERY: u64 = 16;
/// Units of a job counted every one in the tracking table before one in `TRACK_EVERY`
/// is (4 GiB of 4 KiB units: a fraction of a second on the null engine, tens of
/// seconds on most devices, where a table visit per unit costs little).
pub(super) const TRACK_ALL_UNITS: u64 = 1 << 20;
/// The Weyl step (2^64 / the golden ratio): position `k` is tracked when the fractional
/// part of `k × step / 2^64` is below `1 / TRACK_EVERY`, a choice that spreads evenly
/// over every residue class of the units' order (a periodic pattern of contents is
/// tracked in all its phases).
const WEYL_STEP: u64 = 0x9E37_79B9_7F4A_7C15;
/// The positions below this (of 2^64) are tracked.
const TRACK_BELOW: u64 = u64::MAX / TRACK_EVERY;
/// The distances between one tracked unit and the next: the Weyl sequence comes back
/// below `TRACK_BELOW` after 8, 13 or 21 steps, never after any other number (a rotation
/// returns to an interval after at most three distinct times; a test checks these over
/// millions of steps). The next tracked unit is the first of them that lands there, so
/// that a write's units are not stepped one by one (a step and a compare per unit were
/// a fifth of the sampler's pass over a 128 KiB write).
const TRACK_GAPS: [u64; 3] = [8, 13, 21];

/// Whether unit `i` (counted from a job's first) is at a tracked position.
#[inline(always)]
pub(super) fn is_tracked(i: u64) -> bool {
    (i + 1).wrapping_mul(WEYL_STEP) < TRACK_BELOW
}

/// The first tracked unit at or after unit `i`.
pub(super) fn first_tracked_from(i: u64) -> u64 {
    (i..)
        .find(|&j| is_tracked(j))
        .expect("the sequence comes back")
}

/// The tracked unit after tracked unit `i`: the first of `TRACK_GAPS` that lands.
#[inline(always)]
pub(super) fn next_tracked_after(i: u64) -> u64 {
    match TRACK_GAPS.iter().find(|&&g| is_tracked(i + g)) {
        Some(g) => i + g,
        // (Not reached: the gaps are all the sequence has.)
        None => first_tracked_from(i + 1),
    }
}

/// Slots of the tracking table a selector may take (its *set*: 32 bytes, within one
/// cache line). With two, a frequent content whose pair held two pinned ones (which
/// never give way) could never be pinned: a few of a `--dedup-set 1000` were not, and
/// in the sample each stood for 2^shift contents (one run measured 60% for 50%).
pub(super) const WAYS: usize = 4;

/// Slots of a new table (32 KiB).
pub(super) const FIRST_SLOTS: usize = 4096;

/// The table grows when one slot in `GROW_AT` is pinned: a stream with that many frequent
/// contents likely has more, and they compete for slots (in a set, a content counted
/// once gives way to the next selector). Growing at one in eight, a `--dedup-set 10000`
/// lost so many counts to the competition in the smaller tables that 72 of its contents
/// were not pinned in 2^19 units (each came about 25 times).
const GROW_AT: usize = 64;

/// The count of a pinned selector's slot (never decays, never replaced).
const PINNED: u32 = u32::MAX;

/// What a slot keeps of a selector (see [`Track`]).
#[inline(always)]
fn tag_of(sel: u64) -> u32 {
    (sel >> 32) as u32
}

/// One slot of the tracking table: a selector and how often it came lately. The
/// selector's high 32 bits stand for it, and the top ones of them choose its set, so
/// that a set of four is 32 bytes and a larger table can place every slot anew from its
/// tag. (Two selectors that agree in their high 32 bits are taken for one: about once
/// in 2^18 visits for the 16384 sets of the largest table, a unit of another content
/// counted with a frequent one, a few millionths of the units.)
#[derive(Debug, Clone, Copy, Default)]
struct Track {
    tag: u32,
    count: u32,
}

/// One set of `WAYS` slots, aligned so that it lies in one cache line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
struct Set([Track; WAYS]);

// SAFETY: a set of zero bytes is four empty slots (tag 0, count 0), `Set::default()`.
unsafe impl Zeroed for Set {}

/// The tracking table (a slot's count goes up when its selector comes again; when
/// another one lands in its set, the set's lowest count goes down, and the slot changes
/// hands at zero; a pinned slot never gives way).
#[derive(Debug, Clone)]
pub(super) struct Tracks {
    sets: TableMem<Set>,
    /// 64 − log2(sets): a selector's set is its top bits.
    shift: u32,
    /// Pinned slots.
    pinned: usize,
}

/// What counting a selector found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Counted {
    /// It was pinned already.
    Pinned,
    /// It reached the count that makes it frequent: pinned now.
    NowPinned,
    /// Counted (below the frequent count), or given a slot, or passed over by a set of
    /// pinned slots.
    Rising,
}

impl Tracks {
    /// An empty table of `FIRST_SLOTS` slots.
    pub(super) fn new() -> Tracks {
        Tracks::of(FIRST_SLOTS, None)
    }

    /// The table, its larger sizes in huge pages advised by `advise` (`workload::huge`).
    pub(super) fn with_huge_pages(self, advise: Advise) -> Tracks {
        let mut t = Tracks::of(self.slots(), Some(advise));
        t.sets.copy_from_slice(&self.sets);
        t.pinned = self.pinned;
        t
    }

    fn of(slots: usize, advise: Option<Advise>) -> Tracks {
        let sets = slots / WAYS;
        Tracks {
            sets: TableMem::zeroed(sets, advise),
            shift: 64 - sets.trailing_zeros(),
            pinned: 0,
        }
    }

    /// Whether the table is advised into huge pages once large.
    #[cfg(test)]
    pub(super) fn advised(&self) -> bool {
        self.sets.advise().is_some()
    }

    /// Slots in the table now.
    pub(super) fn slots(&self) -> usize {
        self.sets.len() * WAYS
    }

    /// The set of `sel` in this table.
    #[inline(always)]
    pub(super) fn set_of(&self, sel: u64) -> usize {
        // (`shift` is 54 at most: the first table has 1024 sets.)
        (sel >> self.shift) as usize
    }

    /// Asks the CPU for the line of `sel`'s set, ahead of a visit (`count`,
    /// `is_pinned`): a hint, nothing read or changed.
    #[inline(always)]
    pub(super) fn prefetch(&self, sel: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let set: *const Set = &self.sets[self.set_of(sel)];
            // SAFETY: the address is that of a set of the table (bounds checked above);
            // a prefetch reads nothing the program sees and cannot fault.
            unsafe {
                use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                _mm_prefetch::<_MM_HINT_T0>(set.cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = sel;
    }

    /// The slot of its set that holds `sel`, if one does.
    #[inline(always)]
    fn find(&self, set: usize, sel: u64) -> Option<usize> {
        let tag = tag_of(sel);
        self.sets[set].0.iter().position(|t| t.tag == tag)
    }

    /// Whether `sel` is pinned.
    #[inline(always)]
    pub(super) fn is_pinned(&self, sel: u64) -> bool {
        let set = self.set_of(sel);
        self.find(set, sel)
            .is_some_and(|k| self.sets[set].0[k].count == PINNED)
    }

    /// Counts one coming of `sel`; a selector counted `frequent` times is pinned.
    #[inline(always)]
    pub(super) fn count(&mut self, sel: u64, frequent: u32) -> Counted {
        let set = self.set_of(sel);
        if let Some(k) = self.find(set, sel) {
            let t = &mut self.sets[set].0[k];
            if t.count == PINNED {
                return Counted::Pinned;
            }
            t.count += 1;
            if t.count >= frequent {
                t.count = PINNED;
                self.pinned += 1;
                if self.pinned * GROW_AT >= self.slots() {
                    self.grow();
                }
                return Counted::NowPinned;
            }
            return Counted::Rising;
        }
        // The way with the lowest count gives way (a pinned one never).
        let ways = &mut self.sets[set].0;
        let t = ways.iter_mut().min_by_key(|t| t.count).expect("WAYS slots");
        match t.count {
            PINNED => {}
            0 | 1 => {
                *t = Track {
                    tag: tag_of(sel),
                    count: 1,
                }
            }
            _ => t.count -= 1,
        }
        Counted::Rising
    }

    /// Four times the slots, up to `TRACK_SLOTS`, every slot with a count moved to its
    /// set there (each set of the larger table takes the slots of a quarter of one set
    /// of this one: none is lost), so that contents competing for slots keep their counts.
    #[cold]
    fn grow(&mut self) {
        if self.slots() >= TRACK_SLOTS {
            return;
        }
        let mut grown = Tracks::of((self.slots() * 4).min(TRACK_SLOTS), self.sets.advise());
        for t in self
            .sets
            .iter()
            .flat_map(|set| set.0)
            .filter(|t| t.count > 0)
        {
            let set = grown.set_of(u64::from(t.tag) << 32);
            let free = grown.sets[set].0.iter_mut().find(|s| s.count == 0);
            *free.expect("a set of the larger table takes at most the slots of one set") = t;
        }
        grown.pinned = self.pinned;
        *self = grown;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tracked positions are one in `TRACK_EVERY` in every phase of every short
    /// period, so that a periodic pattern of contents (a corpus repeated, a dedup set
    /// written in turn) is tracked in all its phases: a counter that tracked every 16th
    /// unit would never see 15 of every 16 contents of a period of 16.
    #[test]
    fn tracked_positions_spread_over_every_phase_of_a_period() {
        let n = 1u64 << 20;
        for period in 2..=64u64 {
            let mut tracked = vec![0u64; period as usize];
            let mut k = first_tracked_from(0);
            while k < n {
                tracked[(k % period) as usize] += 1;
                k = next_tracked_after(k);
            }
            let each = n / period / TRACK_EVERY;
            for (phase, &t) in tracked.iter().enumerate() {
                assert!(
                    t.abs_diff(each) * 10 < each,
                    "period {period}, phase {phase}: {t} tracked, {each} expected"
                );
            }
        }
    }

    /// The tracked units found by jumping (`TRACK_GAPS`) are exactly those of the Weyl
    /// sequence stepped unit by unit, from any start (a gap missing from the list would
    /// skip tracked units: contents that come in a period would go uncounted).
    #[test]
    fn jumps_between_tracked_units_are_the_stepped_sequence() {
        for start in [0u64, 1, 7, 1 << 20, (1 << 20) + 3, u64::MAX / 3] {
            let mut k = first_tracked_from(start);
            let mut found = 0;
            for i in start..start + (1 << 22) {
                if is_tracked(i) {
                    assert_eq!(k, i, "from {start}: the jump landed at {k}, not {i}");
                    k = next_tracked_after(k);
                    found += 1;
                }
            }
            assert!(found > (1 << 22) / TRACK_EVERY - 100, "{found} tracked");
        }
    }

    /// Selectors spread over the whole 64-bit space (as the mixed selectors are).
    fn sel(k: u64) -> u64 {
        let m = (k ^ 0x9E37_79B9_7F4A_7C15) as u128 * 0xD6E8_FEB8_6659_FD93u128;
        (m as u64) ^ ((m >> 64) as u64)
    }

    #[test]
    fn unique_selectors_keep_the_first_table() {
        let mut t = Tracks::new();
        for k in 0..1u64 << 20 {
            assert_eq!(t.count(sel(k), 8), Counted::Rising);
        }
        assert_eq!(t.slots(), FIRST_SLOTS);
    }

    #[test]
    fn many_frequent_selectors_grow_the_table_and_stay_pinned() {
        // 10000 selectors that come again and again, among unique ones: the first table
        // (1024 sets) holds about ten of them per set of four.
        let mut t = Tracks::new();
        let mut pinned_early = Vec::new();
        for k in 0..2_000_000u64 {
            let s = match k % 2 {
                0 => sel((1 << 40) | ((k / 2 * 7919) % 10_000)),
                _ => sel(k),
            };
            if t.count(s, 8) == Counted::NowPinned && pinned_early.len() < 100 {
                pinned_early.push(s);
            }
        }
        assert_eq!(t.slots(), TRACK_SLOTS, "grown to the largest table");
        let pinned = (0..10_000)
            .filter(|&c| t.is_pinned(sel((1 << 40) | c)))
            .count();
        assert!(pinned >= 9_950, "{pinned} of 10000 pinned");
        // What was pinned before the table grew is pinned still.
        assert!(pinned_early.iter().all(|&s| t.is_pinned(s)));
    }
}

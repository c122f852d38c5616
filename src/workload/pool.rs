//! The unit pool of one data generator: `--data-pool` bytes (16 MiB by default) of profile-shaped units (random, or
//! zerofill/repeat chunks) built once before the run, and the *stamps* that make every
//! unit written unique.
//!
//! Unique unit `id` is pool unit `id mod N` with a *stamp*: the unit's first eight bytes
//! (literals in every profile; a `repeat` chunk's copies of them are stamped alike) are
//! a 64-bit value that is a bijection of `id`: where a unit has one 8-byte stamp (random
//! data, most zerofill), the word whose sampler's selector is known from `id`
//! (`keys::LentStamps`); elsewhere the pool's original bytes there XORed with one, or,
//! for stamps narrower than 8 bytes, with a bijection of the unit's lap of the pool
//! (`lap_key`: 2^(8 × bytes) laps differ). So no two units are equal, even when they
//! share a pool unit (after the pool's size of writes), and the compressibility of the
//! pool unit is unchanged (random bytes replace random bytes). The unit is the granularity of uniqueness, as `--dedup-unit` declares
//! it: parts of a unit smaller than the unit come back after the pool's size.
//!
//! A write of fresh units can be sent straight from the pool ([`UnitPool::lend`]): the
//! units are stamped in place and stay *lent* (left alone) until the write completes.
//! Otherwise a unit is copied out and stamped in the copy ([`UnitPool::copy_unit`]); both
//! give the same bytes.

use crate::plan::data::{CompressMethod, DataKind, DataSpec, pool_backing};
use crate::workload::data::{fill_repeat, fill_zerofill};
use crate::workload::hash::PoolHashes;
use crate::workload::keys::LentStamps;
use crate::workload::rng::Rng;

/// Alignment of the pool's first byte (and of every lent stretch): what direct I/O needs
/// on any device (a logical block is at most a page here).
pub const POOL_ALIGN: usize = 4096;
/// Where the pool starts: a huge page's boundary.
const HUGE_ALIGN: usize = 2 << 20;

/// The pool; see the module documentation.
#[derive(Debug, Clone)]
pub struct UnitPool {
    /// The allocation; the pool starts `start` bytes in, at a `POOL_ALIGN` boundary.
    bytes: Vec<u8>,
    start: usize,
    unit_len: usize,
    /// Units in the pool.
    units: usize,
    /// Where a unit's stamps lie and how they are made.
    layout: Layout,
    /// Each unit's original word at each stamp place (`units × places.len()`).
    orig: Vec<u64>,
    /// Whether a unit is lent to a write in flight.
    lent: Vec<bool>,
    /// `units - 1` when `units` is a power of two (the default pools), else 0.
    slot_mask: u64,
    /// The one stamp place when a unit has one 8-byte stamp (the default profile).
    one_place: Option<usize>,
    /// What the units are stamped with.
    stamps: Stamps,
    /// The cache lines the one stamp turns through (a power of two; 1: it stays put):
    /// pool unit `slot`'s stamp lies `(slot mod turns) × 64` bytes past `one_place`.
    turns: usize,
}

/// Lines a unit's one stamp may turn through. With every stamp in a unit's first line,
/// the 4096 stamps of a 16 MiB pool lay 4 KiB apart, in one sixty-fourth of the L2's
/// sets, and missed it on every lap of the pool (`docs/PERFORMANCE.md`, session 19).
const STAMP_TURNS: usize = 64;

/// What one write is sent from: pool units `first..first + count`, or, for a constant
/// profile (zeros, a pattern), the first `count` bytes of the generator's constant region
/// (`DataGen::lend_constant`; a generator has one or the other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lent {
    pub first: usize,
    pub count: usize,
}

impl UnitPool {
    /// The pool of the stream `(seed, stream)` for the profile `spec` (random or
    /// compressible data).
    pub fn new(spec: &DataSpec, seed: u64, stream: u64) -> UnitPool {
        let unit_len = spec.unit_len();
        let len = spec.pool_bytes();
        let units = len / unit_len;
        // Aligned to 2 MiB, so that the pool can be backed by whole huge pages.
        let mut bytes = vec![0u8; pool_backing(len) + HUGE_ALIGN];
        let start = bytes.as_ptr().align_offset(HUGE_ALIGN).min(HUGE_ALIGN);
        let mut rng = Rng::new(seed ^ 0x9001_9001_9001_9001, stream);
        let pool = &mut bytes[start..start + len];
        let shaped = spec.kind == DataKind::Compressible && spec.compress > 0.0;
        if shaped {
            let cl = spec.compress_chunk as usize;
            for chunk in pool.chunks_mut(cl) {
                let lits = |dst: &mut [u8], _at: usize| rng.fill(dst);
                match spec.compress_method {
                    CompressMethod::Zerofill => fill_zerofill(chunk, spec.compress, lits),
                    CompressMethod::Repeat => fill_repeat(chunk, spec.compress, lits),
                }
            }
        } else {
            rng.fill(pool);
        }
        let layout = stamp_places(spec, unit_len);
        let (places, width) = (&layout.places, layout.width);
        let turns = turns_of(spec, &layout, unit_len, units);
        let mut orig = Vec::with_capacity(units * places.len());
        for u in 0..units {
            let unit = &pool[u * unit_len..(u + 1) * unit_len];
            let turn = turn_at(u, turns);
            orig.extend(places.iter().map(|&p| word(unit, p as usize + turn, width)));
        }
        let word_stamps = width == 8
            && places.len() == 1
            && (orig.chunks_exact(places.len())).all(|o| o.iter().all(|&w| w == o[0]));
        if word_stamps {
            orig.fill(0);
        }
        let mut sm = seed ^ stream.rotate_left(29) ^ 0x57A3_57A3_57A3_57A3;
        let key = crate::workload::rng::splitmix64(&mut sm);
        UnitPool {
            bytes,
            start,
            unit_len,
            units,
            orig,
            lent: vec![false; units],
            slot_mask: match units.is_power_of_two() {
                true => units as u64 - 1,
                false => 0,
            },
            one_place: match (&places[..], width) {
                ([p], 8) if layout.recopy.is_empty() => Some(*p as usize),
                _ => None,
            },
            stamps: Stamps {
                words: word_stamps,
                ids: LentStamps::new(key, unit_len, turns),
                lap_units: match layout.width < 8 && !word_stamps {
                    true => units as u64,
                    false => 0,
                },
                // A dedup unit of several pool units (chunks): each takes its own bits of
                // the lap's key, after the bits of the pool units before it.
                in_unit: (spec.dedup_unit as usize / unit_len).max(1) as u64,
                unit_bits: 8 * (layout.width * layout.places.len()).min(8) as u32,
            },
            layout,
            turns,
        }
    }

    /// The cache lines the stamp of a unit turns through (1: it stays at its place): the
    /// stamp of unique unit `id` lies `(id mod turns) × 64` bytes past its place.
    pub fn stamp_turns(&self) -> usize {
        self.turns
    }

    /// Where the one stamp of pool unit `slot` lies in it.
    #[inline(always)]
    fn one_place_of(&self, p: usize, slot: usize) -> usize {
        p + turn_at(slot, self.turns)
    }

    /// The stamps of the units this pool lends, when they are words whose selector is
    /// known from the unit's id (one 8-byte stamp at a unit's start, turning through
    /// `stamp_turns` lines; a `repeat` chunk's head and its copies): the sampler knows
    /// the units it picks from their ids (`Sampler::with_lent_stamps`). `None` otherwise.
    pub(crate) fn lent_stamps(&self) -> Option<LentStamps> {
        self.stamps.words.then_some(self.stamps.ids)
    }

    /// The content hashes of the pool's units, composed from their bytes without their
    /// stamp (`workload::hash`); `None` unless each unit has one 8-byte stamp.
    pub(crate) fn hashes(&self) -> Option<PoolHashes> {
        let p = self.one_place?;
        let (start, len) = (self.start, self.units * self.unit_len);
        PoolHashes::of(
            &self.bytes[start..start + len],
            self.unit_len,
            p,
            self.turns,
        )
    }

    /// Whether a unit's one stamp is its first word.
    pub(crate) fn stamp_first(&self) -> bool {
        self.one_place == Some(0) && self.turns == 1
    }

    /// Units in the pool.
    pub fn units(&self) -> usize {
        self.units
    }

    /// Stamp places per unit.
    pub fn places(&self) -> usize {
        self.layout.places.len()
    }

    /// The pool unit unique unit `id` is made from.
    #[inline(always)]
    pub fn slot_of(&self, id: u64) -> usize {
        // A power of two (the default pools) without the division (one unit: 0 either way).
        match self.slot_mask {
            0 => (id % self.units as u64) as usize,
            m => (id & m) as usize,
        }
    }

    /// The value XORed into the original bytes at the stamps of unique unit `id`.
    #[inline(always)]
    fn stamp(&self, id: u64) -> u64 {
        self.stamps.key(id)
    }

    /// The original words at the stamp places of pool unit `slot`.
    #[inline(always)]
    fn orig_of(&self, slot: usize) -> &[u64] {
        let n = self.layout.places.len();
        &self.orig[slot * n..][..n]
    }

    /// Unique unit `id`, copied into `unit` (`unit_len` bytes, or fewer: the start of the
    /// unit, for a write whose size is not a multiple of the unit).
    #[inline]
    pub fn copy_unit(&self, id: u64, unit: &mut [u8]) {
        if unit.len() < self.unit_len {
            let mut whole = vec![0; self.unit_len];
            self.copy_unit(id, &mut whole);
            unit.copy_from_slice(&whole[..unit.len()]);
            return;
        }
        let at = self.start + self.slot_of(id) * self.unit_len;
        unit.copy_from_slice(&self.bytes[at..at + self.unit_len]);
        let slot = self.slot_of(id);
        let orig = self.orig_of(slot);
        match self.one_place {
            Some(p) => {
                let at = self.one_place_of(p, slot);
                unit[at..at + 8].copy_from_slice(&self.stamps.ids.word(id).to_le_bytes());
            }
            None => self.layout.stamp(unit, orig, self.stamp(id)),
        }
    }

    /// Stamps unique units `first_id..first_id + count` in place and lends them, when
    /// they lie in one stretch of the pool, aligned, and none is lent already; `None`
    /// (nothing changed) otherwise.
    #[inline]
    pub fn lend(&mut self, first_id: u64, count: usize) -> Option<Lent> {
        if count == 1 {
            return self.lend_one(first_id);
        }
        self.lend_many(first_id, count)
    }

    /// `lend` of one unit (a write of one unit, the common small write): no loop over
    /// units, and the default profile's one 8-byte stamp as one store.
    #[inline(always)]
    fn lend_one(&mut self, id: u64) -> Option<Lent> {
        let first = self.slot_of(id);
        if self.lent.get(first).is_none_or(|&l| l)
            || !(first * self.unit_len).is_multiple_of(POOL_ALIGN)
        {
            return None;
        }
        let at = self.start + first * self.unit_len;
        let one = self.one_place.map(|p| self.one_place_of(p, first));
        let unit = &mut self.bytes[at..at + self.unit_len];
        if let Some(p) = one {
            unit[p..p + 8].copy_from_slice(&self.stamps.ids.word(id).to_le_bytes());
        } else {
            let n = self.layout.places.len();
            let orig = &self.orig[first * n..][..n];
            self.layout.stamp(unit, orig, self.stamps.key(id));
        }
        self.lent[first] = true;
        Some(Lent { first, count: 1 })
    }

    #[inline(never)]
    fn lend_many(&mut self, first_id: u64, count: usize) -> Option<Lent> {
        let first = self.slot_of(first_id);
        let ul = self.unit_len;
        if count == 0
            || first + count > self.units
            || !(first * ul).is_multiple_of(POOL_ALIGN)
            || self.lent[first..first + count].contains(&true)
        {
            return None;
        }
        let n = self.layout.places.len();
        let at = self.start + first * ul;
        // (`one_place_of`, with `self.bytes` borrowed below.)
        let turns = self.turns;
        let stretch = &mut self.bytes[at..at + count * ul];
        let orig = &self.orig[first * n..(first + count) * n];
        // Read every unit's first stamp place first: independent loads whose cache misses
        // overlap, so that the stores below hit the cache instead of missing one after
        // another (the pool is larger than a core's caches, and each unit's place lies in
        // its own line).
        if let Some(&p) = self.layout.places.first() {
            let (p, width) = (p as usize, self.layout.width);
            let at = |k: usize| k * ul + p + turn_at(first + k, turns);
            let touch = (0..count).fold(0, |t, k| t ^ word(stretch, at(k), width));
            std::hint::black_box(touch);
        }
        if let Some(p) = self.one_place {
            // The default profile: one 8-byte stamp per unit.
            let stamps = self.stamps.ids;
            for k in 0..count {
                let word = stamps.word(first_id + k as u64);
                let at = k * ul + p + turn_at(first + k, turns);
                stretch[at..at + 8].copy_from_slice(&word.to_le_bytes());
            }
        } else {
            let stamps = self.stamps;
            for (k, unit) in stretch.chunks_exact_mut(ul).enumerate() {
                let key = stamps.key(first_id + k as u64);
                let orig = &orig[k * n..][..n];
                self.layout.stamp(unit, orig, key);
            }
        }
        mark(&mut self.lent[first..first + count], true);
        Some(Lent { first, count })
    }

    /// Whether unique unit `id`'s pool unit is lent to a write in flight.
    #[inline]
    pub fn is_lent(&self, id: u64) -> bool {
        self.lent[self.slot_of(id)]
    }

    /// Where the pool's units lie: start and length.
    pub fn region(&self) -> (*const u8, usize) {
        let len = self.units * self.unit_len;
        (self.bytes[self.start..self.start + len].as_ptr(), len)
    }

    /// The memory the pool's units lie in (`region`, and from 1 MiB on the rest of its
    /// last huge page: `pool_backing`), for `sys::back_with_huge_pages`.
    pub fn backing(&self) -> (*const u8, usize) {
        let len = pool_backing(self.units * self.unit_len);
        (self.bytes[self.start..self.start + len].as_ptr(), len)
    }

    /// The bytes of a lent stretch (what the write sends). (Inlined always: left to the
    /// compiler, a change elsewhere in the pool made it a call, and with `check_stop`
    /// it cost null 4 KiB writes 1.07x the CPU, session 29.)
    #[inline(always)]
    pub fn lent_bytes(&self, l: Lent) -> &[u8] {
        let at = self.start + l.first * self.unit_len;
        &self.bytes[at..at + l.count * self.unit_len]
    }

    /// Takes back the units of a write that completed.
    pub fn give_back(&mut self, l: Lent) {
        mark(&mut self.lent[l.first..l.first + l.count], false);
    }
}

/// How far past its place the stamp of unit `index` (a pool slot or a unique unit's id:
/// the same modulo `turns`, which divides the pool's units) lies when stamps turn
/// through `turns` lines (a power of two).
#[inline(always)]
pub(super) fn turn_at(index: usize, turns: usize) -> usize {
    (index & (turns - 1)) * 64
}

/// How a pool's units are stamped: with the words whose selector is known from the
/// unit's id (`LentStamps`, written as they are: the pool's `orig` is zeros then), or
/// with the original bytes XORed with `stamp_of`'s key. Words where each unit's stamps
/// are 8 bytes wide, the first at its start, and all alike (one stamp, or a `repeat`
/// chunk's copies of its head).
#[derive(Debug, Clone, Copy)]
struct Stamps {
    words: bool,
    /// The stream's key (`LentStamps::key`) and the words' layout.
    ids: LentStamps,
    /// The pool's units, where a unit's stamps are narrower than 8 bytes (a `repeat`
    /// chunk of few literals): the key is then the unit's lap of the pool (`lap_key`),
    /// so that no two laps' stamps are alike before 2^(8 × stamped bytes) laps. 0
    /// otherwise.
    lap_units: u64,
    /// Pool units a dedup unit holds (1 when the pool unit is the dedup unit or larger),
    /// and the bits of the key one pool unit's stamps take: the pool units of a dedup
    /// unit take the lap's key turned by `unit_bits` each, so that together they stamp
    /// as many of its bits as they have bytes (`narrow_key`).
    in_unit: u64,
    unit_bits: u32,
}

impl Stamps {
    /// The value XORed into the original bytes at the stamps of unique unit `id`: the
    /// word itself, or `stamp_of`'s key (a bijection of `id` either way), or for narrow
    /// stamps `lap_key`'s (the units of a pool unit are one a lap).
    #[inline(always)]
    fn key(&self, id: u64) -> u64 {
        match (self.words, self.lap_units) {
            (true, _) => self.ids.word(id),
            (false, 0) => stamp_of(self.ids.key(), id),
            (false, n) => self.narrow_key(id, n),
        }
    }

    /// `lap_key` of unique unit `id`'s lap (`n` units a lap), turned by the bits the
    /// pool units before it in its dedup unit take. (Until the same day every chunk of a
    /// dedup unit had the lap's key alike: 4 KiB units of 512-byte chunks with a 1-byte
    /// stamp each came back after 256 laps of the pool, 75% duplicates in 64 MiB of a 64
    /// KiB pool, where random keys per chunk had made none.)
    #[inline(never)]
    fn narrow_key(&self, id: u64, n: u64) -> u64 {
        // (Powers of two, the default pools and units, without a division.)
        let lap = match n.is_power_of_two() {
            true => id >> n.trailing_zeros(),
            false => id / n,
        };
        let k = self.in_unit;
        let at = match k.is_power_of_two() {
            true => id & (k - 1),
            false => id % k,
        };
        let turn = at as u32 * self.unit_bits;
        lap_key(self.ids.key(), lap).rotate_right(turn % 64)
    }
}

/// The key of a pool unit's lap `lap` in the stream whose stamps start at `base`: its low
/// `k` bits a bijection of the lap's low `k` bits, for every `k` (XOR with a constant,
/// multiplying by an odd number and `x ^ (x << s)` each keep that), so that the bytes of
/// a stamp narrower than 8 (its places take the key's low bytes in turn:
/// `Layout::stamp`) differ for every lap until they run out. (Until 2026-11-29 narrow
/// stamps were the low bytes of `stamp_of`'s random value: two laps alike by chance.)
#[inline(always)]
fn lap_key(base: u64, lap: u64) -> u64 {
    let mut z = (lap ^ base).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z ^= z << 29;
    z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^ (z << 17)
}

/// The key of unique unit `id` in the stream whose stamps start at `base`: distinct for
/// distinct ids, because `base + id × odd` is a bijection of `id` and so is the
/// SplitMix64 finaliser.
#[inline(always)]
fn stamp_of(base: u64, id: u64) -> u64 {
    let mut z = base.wrapping_add(id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Sets every flag of `flags` (one, most often: a plain store rather than a call to
/// `memset`).
#[inline(always)]
fn mark(flags: &mut [bool], to: bool) {
    if let [one] = flags {
        *one = to;
    } else {
        flags.fill(to);
    }
}

/// The `width` bytes (at most 8) at `at`, little-endian.
#[inline(always)]
fn word(b: &[u8], at: usize, width: usize) -> u64 {
    if width == 8 {
        return u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    }
    let mut w = [0u8; 8];
    w[..width].copy_from_slice(&b[at..at + width]);
    u64::from_le_bytes(w)
}

#[path = "pool_layout.rs"]
mod layout;
pub(crate) use layout::selector_reads;
use layout::{Layout, stamp_places, turns_of};

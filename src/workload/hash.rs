//! The content hash that tells duplicate units apart (`workload::sampler`), and its
//! composition for units lent from the data pool ([`PoolHashes`]).
//!
//! The hash is a sum, by XOR, of one term per 16-byte pair of words, each term a function
//! of the pair's index and its two words (the words XORed with keys that depend on the
//! index, multiplied 64 × 64 → 128 bits, both halves folded), then a finaliser over the
//! sum and the length. Equal bytes give equal hashes, and a term depends on its place, so
//! that units whose pairs are the same in another order differ.
//!
//! Because it is a sum of terms, the hash of a unit whose bytes differ from known ones in
//! one pair is the known sum with that pair's term taken out and the new one put in. A
//! pool unit's bytes change between writes in one place only, its stamp
//! (`workload::pool`): the pool's sums without the stamp's pair are computed once, before
//! the run, and a lent unit's hash is that sum and the term of the pair its stamp lies in,
//! read from the unit as written: two words in place of a whole unit (a 4 KiB unit read
//! from memory cost about a microsecond per hashed unit of a short run; see
//! `docs/PERFORMANCE.md`, session 21).

use std::sync::Arc;

/// The keys of pair `i`: `A + i × DA` and `B + i × DB`.
const KEY_A: u64 = 0x9E37_79B9_7F4A_7C15;
const KEY_DA: u64 = 0xC2B2_AE3D_27D4_EB4F;
const KEY_B: u64 = 0x1656_67B1_9E37_79F9;
const KEY_DB: u64 = 0x85EB_CA77_C2B2_AE63;

/// The term of pair `i` whose words are `a` and `b`.
#[inline(always)]
fn term(i: u64, a: u64, b: u64) -> u64 {
    let ka = KEY_A.wrapping_add(i.wrapping_mul(KEY_DA));
    let kb = KEY_B.wrapping_add(i.wrapping_mul(KEY_DB));
    fold((a ^ ka) as u128 * (b ^ kb) as u128)
}

/// The two little-endian words of a 16-byte pair.
#[inline(always)]
fn pair(p: &[u8]) -> (u64, u64) {
    (
        u64::from_le_bytes(p[..8].try_into().expect("8 bytes")),
        u64::from_le_bytes(p[8..16].try_into().expect("8 bytes")),
    )
}

/// The sum of the terms of `data`'s pairs (its last, partial pair padded with zeros).
#[inline]
fn sum(data: &[u8]) -> u64 {
    let mut fours = data.chunks_exact(32);
    let (mut ka, mut kb) = (KEY_A, KEY_B);
    // Two sums, so that the multiplies of neighbouring pairs overlap.
    let (mut s0, mut s1) = (0u64, 0u64);
    for f in &mut fours {
        let (a, b) = pair(&f[..16]);
        s0 ^= fold((a ^ ka) as u128 * (b ^ kb) as u128);
        let (c, d) = pair(&f[16..]);
        let (kc, kd) = (ka.wrapping_add(KEY_DA), kb.wrapping_add(KEY_DB));
        s1 ^= fold((c ^ kc) as u128 * (d ^ kd) as u128);
        ka = kc.wrapping_add(KEY_DA);
        kb = kd.wrapping_add(KEY_DB);
    }
    let mut s = s0 ^ s1;
    let done = data.len() / 32 * 2;
    for (i, p) in fours.remainder().chunks(16).enumerate() {
        let mut full = [0u8; 16];
        full[..p.len()].copy_from_slice(p);
        let (a, b) = pair(&full);
        s ^= term((done + i) as u64, a, b);
    }
    s
}

/// A 128-bit product's halves folded.
#[inline(always)]
fn fold(m: u128) -> u64 {
    (m as u64) ^ ((m >> 64) as u64)
}

/// The hash of `len` bytes whose terms sum to `s`.
#[inline(always)]
fn finish(s: u64, len: usize) -> u64 {
    let mut h = s ^ (len as u64).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// A fast 64-bit content hash for duplicate detection (not cryptographic; see the
/// module documentation).
pub(crate) fn content_hash(data: &[u8]) -> u64 {
    finish(sum(data), data.len())
}

/// The content hashes of a data pool's units, composed from what the pool's bytes sum to
/// without their stamps (see the module documentation): for a pool whose units have one
/// 8-byte stamp each (`UnitPool::hashes`). It knows the pool by its address: it is kept
/// by the sampler of the worker that holds the pool, and asked only while the pool lives.
#[derive(Debug, Clone)]
pub(crate) struct PoolHashes {
    /// The address of the pool's first unit, and its length in bytes.
    start: usize,
    len: usize,
    unit_len: usize,
    /// Where a unit's stamp lies: `place + (slot mod turns) × 64` bytes into pool unit
    /// `slot`.
    place: usize,
    turns: usize,
    /// Per pool unit, the sum of the terms of its pairs but the one its stamp lies in.
    rest: Arc<[u64]>,
    /// Hashes composed so far: one in `CHECK_EVERY` is checked against the unit's bytes
    /// hashed in full; `broken` once one was not (every unit is hashed in full then).
    composed: u64,
    broken: bool,
}

/// One composed hash in this many (the first among them) is checked against the hash of
/// the whole unit: a pool whose bytes changed outside the stamps would be caught.
const CHECK_EVERY: u64 = 1024;

impl PoolHashes {
    /// The sums of the pool `units` (`unit_len` bytes each, at `units.as_ptr()`) whose
    /// stamp lies `place + (slot mod turns) × 64` bytes into unit `slot`; `None` where a
    /// stamp could straddle two pairs (a place that is no multiple of 8) or a unit ends
    /// in a partial pair.
    pub(crate) fn of(
        units: &[u8],
        unit_len: usize,
        place: usize,
        turns: usize,
    ) -> Option<PoolHashes> {
        let fits = unit_len.is_multiple_of(16)
            && place.is_multiple_of(8)
            && turns.is_power_of_two()
            && place + (turns - 1) * 64 + 8 <= unit_len;
        if !fits || units.is_empty() || !units.len().is_multiple_of(unit_len) {
            return None;
        }
        let rest = units
            .chunks_exact(unit_len)
            .enumerate()
            .map(|(slot, unit)| {
                let at = stamp_pair(place, turns, slot);
                let (a, b) = pair(&unit[at..at + 16]);
                sum(unit) ^ term((at / 16) as u64, a, b)
            })
            .collect();
        Some(PoolHashes {
            start: units.as_ptr() as usize,
            len: units.len(),
            unit_len,
            place,
            turns,
            rest,
            composed: 0,
            broken: false,
        })
    }

    /// The content hash of `unit` when it is one of the pool's units (its bytes lie
    /// there): the pool's sum for it and the term of its stamp's pair as it is now.
    /// `None` for any other bytes.
    #[inline]
    pub(crate) fn hash(&self, unit: &[u8]) -> Option<u64> {
        let off = (unit.as_ptr() as usize).wrapping_sub(self.start);
        if off >= self.len || unit.len() != self.unit_len || !off.is_multiple_of(self.unit_len) {
            return None;
        }
        let slot = off / self.unit_len;
        let at = stamp_pair(self.place, self.turns, slot);
        let (a, b) = pair(&unit[at..at + 16]);
        Some(finish(
            self.rest[slot] ^ term((at / 16) as u64, a, b),
            self.unit_len,
        ))
    }

    /// The content hash of `unit`, a copy of pool unit `slot` whose stamp is `stamp`
    /// (a dedup stream's unit, copied out of the pool: `UnitPool::copy_unit`): the
    /// pool's sum for the slot and the term of the stamp's pair as the copy has it.
    /// `None` when the copy's word at the slot's stamp place is not `stamp` (not that
    /// copy) or the slot is not the pool's.
    #[inline]
    pub(crate) fn hash_of_copy(&self, unit: &[u8], slot: usize, stamp: u64) -> Option<u64> {
        let at = stamp_pair(self.place, self.turns, slot);
        let word = stamp_word(self.place, self.turns, slot);
        if unit.len() != self.unit_len
            || slot >= self.rest.len()
            || unit[word..word + 8] != stamp.to_le_bytes()
        {
            return None;
        }
        let (a, b) = pair(&unit[at..at + 16]);
        Some(finish(
            self.rest[slot] ^ term((at / 16) as u64, a, b),
            self.unit_len,
        ))
    }

    /// Units in the pool.
    #[inline(always)]
    pub(crate) fn units(&self) -> usize {
        self.rest.len()
    }

    /// The content hash of `unit`: composed when it is one of the pool's units, one in
    /// `CHECK_EVERY` of them checked against its bytes hashed in full (a mismatch, a
    /// pool changed outside its stamps, would be a bug: every unit is hashed in full from
    /// then on); of its bytes otherwise.
    #[inline]
    pub(crate) fn hash_checked(&mut self, unit: &[u8]) -> u64 {
        self.checked(unit, |p| p.hash(unit))
    }

    /// `hash_checked` for a copy of pool unit `slot` stamped `stamp` (`hash_of_copy`).
    #[inline]
    pub(crate) fn copy_hash_checked(&mut self, unit: &[u8], slot: usize, stamp: u64) -> u64 {
        self.checked(unit, |p| p.hash_of_copy(unit, slot, stamp))
    }

    /// The hash `compose` makes (none once a check found the pool changed; one in
    /// `CHECK_EVERY` checked against `unit`'s bytes), or when it makes none the hash of
    /// the bytes.
    #[inline]
    fn checked(&mut self, unit: &[u8], compose: impl FnOnce(&Self) -> Option<u64>) -> u64 {
        let composed = match self.broken {
            false => compose(self),
            true => None,
        };
        let Some(h) = composed else {
            return content_hash(unit);
        };
        self.composed += 1;
        if self.composed % CHECK_EVERY == 1 {
            let whole = content_hash(unit);
            if h != whole {
                self.broken = true;
                return whole;
            }
        }
        h
    }
}

#[cfg(test)]
impl PoolHashes {
    /// Hashes composed so far, and whether a check found the pool changed.
    pub(crate) fn composed(&self) -> (u64, bool) {
        (self.composed, self.broken)
    }
}

/// The first byte of the pair the stamp of pool unit `slot` lies in.
#[inline(always)]
fn stamp_pair(place: usize, turns: usize, slot: usize) -> usize {
    stamp_word(place, turns, slot) & !15
}

/// The first byte of the stamp of pool unit `slot`.
#[inline(always)]
fn stamp_word(place: usize, turns: usize, slot: usize) -> usize {
    place + (slot & (turns - 1)) * 64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rng::Rng;

    fn random(len: usize, seed: u64) -> Vec<u8> {
        let mut v = vec![0u8; len];
        Rng::new(seed, 1).fill(&mut v);
        v
    }

    #[test]
    fn the_sum_is_the_terms_of_every_pair_in_place() {
        // Any length, odd tails too: the two-at-a-time loop and the tail agree with one
        // term per pair at its index.
        for len in [0, 1, 15, 16, 17, 31, 32, 33, 48, 100, 4096, 4100] {
            let d = random(len, len as u64);
            let mut want = 0;
            for (i, p) in d.chunks(16).enumerate() {
                let mut full = [0u8; 16];
                full[..p.len()].copy_from_slice(p);
                let (a, b) = pair(&full);
                want ^= term(i as u64, a, b);
            }
            assert_eq!(sum(&d), want, "length {len}");
        }
    }

    #[test]
    fn units_differ_in_any_byte_in_their_order_and_length() {
        let d = random(4096, 7);
        let h = content_hash(&d);
        let mut seen = std::collections::HashSet::new();
        seen.insert(h);
        for i in (0..4096).step_by(61) {
            for bit in [0, 7] {
                let mut e = d.clone();
                e[i] ^= 1 << bit;
                assert!(seen.insert(content_hash(&e)), "byte {i} bit {bit}");
            }
        }
        // Two pairs swapped, and the top bits of two words flipped (a plain sum of
        // multiplied words would not see that), and a zero byte more.
        let mut swapped = d.clone();
        swapped[..16].copy_from_slice(&d[16..32]);
        swapped[16..32].copy_from_slice(&d[..16]);
        assert!(seen.insert(content_hash(&swapped)));
        let mut tops = d.clone();
        tops[7] ^= 0x80;
        tops[23] ^= 0x80;
        assert!(seen.insert(content_hash(&tops)));
        let zeros = [0u8; 4096];
        assert_ne!(content_hash(&zeros), content_hash(&zeros[..4095]));
        assert_eq!(content_hash(&d), h);
    }

    #[test]
    fn a_pool_units_hash_is_its_bytes_whatever_its_stamp() {
        // Units of 4 KiB whose stamp turns through 64 lines, and of 512 bytes at a place
        // 8 bytes in (the second word of a pair): every stamp written, the composed hash
        // is the hash of the unit's bytes; other bytes are not the pool's.
        for (unit_len, place, turns) in [(4096, 0, 64), (4096, 0, 1), (512, 8, 4), (1024, 56, 8)] {
            let mut pool = random(unit_len * 32, unit_len as u64);
            let hashes = PoolHashes::of(&pool, unit_len, place, turns).expect("fits");
            let mut rng = Rng::new(9, 9);
            for round in 0..4 {
                for slot in 0..32 {
                    let at = slot * unit_len + place + (slot % turns) * 64;
                    let stamp = rng.next_u64();
                    pool[at..at + 8].copy_from_slice(&stamp.to_le_bytes());
                    let unit = &pool[slot * unit_len..][..unit_len];
                    assert_eq!(
                        hashes.hash(unit),
                        Some(content_hash(unit)),
                        "{unit_len} {place} {turns}: slot {slot} round {round}"
                    );
                }
            }
            let copy = pool[..unit_len].to_vec();
            assert_eq!(hashes.hash(&copy), None);
            assert_eq!(hashes.hash(&pool[1..unit_len + 1]), None);
            assert_eq!(hashes.hash(&pool[..unit_len / 2]), None);
        }
    }

    #[test]
    fn a_pool_changed_outside_its_stamps_is_hashed_in_full_from_the_check_on() {
        let mut pool = random(4096 * 4, 3);
        let mut hashes = PoolHashes::of(&pool, 4096, 0, 1).expect("fits");
        // The first composed hash is checked; then one in CHECK_EVERY.
        assert_eq!(
            hashes.hash_checked(&pool[4096..8192]),
            content_hash(&pool[4096..8192])
        );
        assert_eq!(hashes.composed(), (1, false));
        pool[100] ^= 1;
        pool[4096 + 100] ^= 1;
        // Not checked: the pool's sum, which no longer is the unit's.
        assert_ne!(
            hashes.hash_checked(&pool[..4096]),
            content_hash(&pool[..4096])
        );
        for _ in 2..CHECK_EVERY {
            hashes.hash_checked(&pool[8192..12288]);
        }
        // The check: the unit's own hash, and every unit in full from then on.
        let unit = &pool[4096..8192];
        assert_eq!(hashes.hash_checked(unit), content_hash(unit));
        assert_eq!(hashes.composed(), (CHECK_EVERY + 1, true));
        assert_eq!(
            hashes.hash_checked(&pool[..4096]),
            content_hash(&pool[..4096])
        );
    }

    #[test]
    fn pools_whose_stamp_may_straddle_a_pair_are_hashed_in_full() {
        let pool = random(4096 * 4, 1);
        assert!(PoolHashes::of(&pool, 4096, 4, 1).is_none());
        assert!(PoolHashes::of(&pool, 4096, 0, 128).is_none());
        assert!(PoolHashes::of(&pool[..4100], 4100, 0, 1).is_none());
        assert!(PoolHashes::of(&pool, 4096, 0, 64).is_some());
    }
}

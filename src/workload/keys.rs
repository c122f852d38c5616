//! The keys the sampler files units by (`workload::sampler`): a unit's *selector*, which
//! picks the sampled units and indexes the tracking table, and the hasher of the table
//! of content hashes.

use std::hash::Hasher;

/// The hasher of the table of hashed units, whose keys are content hashes already (fully
/// mixed by `content_hash`'s finaliser): the key is its own hash, where the default
/// SipHash over it again cost about as much as the insert.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys are hashed here; any other input is folded in all the same.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// The selector of a unit: its first 8-byte word (where a generated unit's stamp is, so
/// that units differ there; see `selector_at` for stamps that turn) and its length,
/// mixed; when that word is zero (sparse blocks, zeros), its middle and last words
/// instead. Equal units have equal selectors;
/// it reads 8 bytes (24 when sparse) whatever the unit's size.
///
/// (Until 2026-11-28 it read three words of the first 64 bytes: the stamp of a unit
/// lent from the data pool is still in the store buffer when the sampler looks, and the
/// other two words waited for the line to come from memory, 5 to 10 ns per unit, more
/// than the rest of a pooled 128 KiB write. Units that agree in their first word are
/// sampled together: that widens the estimate's spread, it does not bias it.)
#[cfg(test)]
pub(super) fn selector(unit: &[u8]) -> u64 {
    selector_at(unit, 0)
}

/// `selector` with its first word read `at` bytes into the unit (a multiple of 8 below
/// the unit's length less 8) instead of at its start: where a pool lends units whose
/// stamp turns through their lines (`UnitPool::stamp_turns`), the sampler reads each
/// unit's stamp where it lies, so that units differ there.
#[inline(always)]
pub(super) fn selector_at(unit: &[u8], at: usize) -> u64 {
    let n = unit.len();
    let word = |at: usize| {
        let mut w = [0u8; 8];
        let e = (at + 8).min(n);
        w[..e - at].copy_from_slice(&unit[at..e]);
        u64::from_le_bytes(w)
    };
    let (a, b, c) = if n >= 8 {
        match u64::from_le_bytes(unit[at..at + 8].try_into().expect("8 bytes")) {
            0 => (0, word((n / 2) & !7), word(n - 8)),
            head => (head, 0, 0),
        }
    } else {
        (word(0), 0, 0)
    };
    // The words folded with the length, then mixed (a bijection: `LentStamps` writes
    // the word whose selector it wants).
    mix(a ^ b.rotate_left(21) ^ c.rotate_left(42) ^ len_key(n))
}

/// The selector of a unit whose first word tells few contents apart (a `repeat` unit
/// with fewer than 8 literals a segment: its opening literal copied on), from the words
/// at `places` (`pool::selector_places`, each at most the unit's length less 8) and its
/// length. Equal units have equal selectors.
#[inline(always)]
pub(super) fn selector_of_places(unit: &[u8], places: &[u32]) -> u64 {
    let mut a = len_key(unit.len());
    for &p in places {
        let p = p as usize;
        let w = u64::from_le_bytes(unit[p..p + 8].try_into().expect("8 bytes"));
        a = (a ^ w).wrapping_mul(M1).rotate_left(29);
    }
    mix(a)
}

/// The selector of a unit that opens with a block header (`Sampler::with_block_headers`:
/// a `--verify` block's, whose first word is the same in every block), from the header's
/// next three words (the block's offset, the seed and the write's generation: no two
/// blocks' alike) and the unit's length.
#[inline(always)]
pub(super) fn selector_of_header(unit: &[u8]) -> u64 {
    let word = |at: usize| u64::from_le_bytes(unit[at..at + 8].try_into().expect("8 bytes"));
    mix(word(8) ^ word(16).rotate_left(21) ^ word(24).rotate_left(42) ^ len_key(unit.len()))
}

/// What a unit's length adds to its selector's input.
#[inline(always)]
fn len_key(n: usize) -> u64 {
    (n as u64).wrapping_mul(0x9E37_79B9) ^ 0x9E37_79B9_7F4A_7C15
}

/// The two odd multipliers of `mix` (MurmurHash3's 64-bit finaliser), and their inverses
/// modulo 2^64 (for `unmix`).
const M1: u64 = 0xFF51_AFD7_ED55_8CCD;
const M2: u64 = 0xC4CE_B9FE_1A85_EC53;
const M1_INV: u64 = inverse(M1);
const M2_INV: u64 = inverse(M2);

/// The inverse of odd `m` modulo 2^64 (Newton's iteration: each step doubles the bits
/// that are right, from the three of `m` itself).
pub(super) const fn inverse(m: u64) -> u64 {
    let mut x = m;
    let mut i = 0;
    while i < 5 {
        x = x.wrapping_mul(2u64.wrapping_sub(m.wrapping_mul(x)));
        i += 1;
    }
    x
}

/// Every input bit reaches every output bit, the low ones (whose trailing zeros pick
/// the sample) as much as the high ones (which pick a slot of the tracking table); a
/// bijection of 64 bits. (Until 2026-11-29 one 64 x 64 -> 128-bit multiply with both
/// halves folded back: as well mixed, as fast per unit, but not invertible.)
#[inline(always)]
fn mix(x: u64) -> u64 {
    let mut z = x ^ (x >> 33);
    z = z.wrapping_mul(M1);
    z ^= z >> 33;
    z = z.wrapping_mul(M2);
    z ^ (z >> 33)
}

/// The inverse of `mix` (a shift by 33 or more, XORed in, undoes itself).
#[inline(always)]
fn unmix(y: u64) -> u64 {
    let mut z = y ^ (y >> 33);
    z = z.wrapping_mul(M2_INV);
    z ^= z >> 33;
    z = z.wrapping_mul(M1_INV);
    z ^ (z >> 33)
}

/// The stamps of the units a data pool lends (`workload::pool`) when a unit's stamps
/// are 8-byte words alike, the first at its start (one stamp; a `repeat` chunk's head
/// and its copies): the stamp of unique unit `id` is the word whose selector is
/// `id × odd ⊕ key`, so that the sampler knows which lent units its fraction picks from
/// their ids alone, a few a write, without reading the others' stamps
/// (`Sampler::observe_lent`). A bijection of `id`, as any stamp must be: no two units of
/// a stream are equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LentStamps {
    key: u64,
    /// The units' length (part of their selector) and the lines their stamps turn
    /// through (`pool::turn_at`).
    pub(crate) unit_len: usize,
    pub(crate) turns: usize,
}

/// The odd multiplier of a lent unit's id in its selector, and its inverse.
const ID_ODD: u64 = 0x9E37_79B9_7F4A_7C15;
const ID_ODD_INV: u64 = inverse(ID_ODD);

impl LentStamps {
    /// The stamps of the stream whose key is `key`, for units of `unit_len` bytes whose
    /// stamps turn through `turns` lines.
    pub(crate) fn new(key: u64, unit_len: usize, turns: usize) -> LentStamps {
        LentStamps {
            key,
            unit_len,
            turns,
        }
    }

    /// The stream's key.
    #[inline(always)]
    pub(crate) fn key(&self) -> u64 {
        self.key
    }

    /// The selector of unique unit `id`.
    #[inline(always)]
    pub(crate) fn selector(&self, id: u64) -> u64 {
        id.wrapping_mul(ID_ODD) ^ self.key
    }

    /// The stamp of unique unit `id`: the word whose selector (`selector_at` at the
    /// stamp, in a unit of `unit_len` bytes) is `selector(id)`. (A stamp of zero, once
    /// in 2^64 ids, would have the unit's middle and last words read instead: its
    /// selector would not be its id's.)
    #[inline(always)]
    pub(crate) fn word(&self, id: u64) -> u64 {
        unmix(self.selector(id)) ^ len_key(self.unit_len)
    }

    /// The first of the units `first_id, first_id + 1, …` whose selector has `shift` low
    /// zero bits, counted from `first_id`; every `2^shift`-th unit after it has too, and
    /// no other (`id × odd` agrees with the key in its low `shift` bits exactly when
    /// `id` agrees with `key × odd⁻¹` in them).
    #[inline(always)]
    pub(crate) fn first_picked(&self, first_id: u64, shift: u32) -> u64 {
        let low = (1u64 << shift) - 1;
        self.key.wrapping_mul(ID_ODD_INV).wrapping_sub(first_id) & low
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rng::Rng;

    #[test]
    fn the_mix_is_undone_and_the_inverses_are_inverses() {
        for m in [M1, M2, ID_ODD] {
            assert_eq!(m.wrapping_mul(inverse(m)), 1);
        }
        let mut r = Rng::new(7, 7);
        for _ in 0..10_000 {
            let x = r.next_u64();
            assert_eq!(unmix(mix(x)), x);
            assert_eq!(mix(unmix(x)), x);
        }
    }

    #[test]
    fn a_lent_stamp_has_the_selector_of_its_id() {
        // The sampler reads a unit's selector at its stamp: written as `word(id)`, it is
        // `selector(id)`, for every unit length and place of the stamp.
        let mut r = Rng::new(3, 9);
        for (unit_len, turns) in [(4096, 64), (4096, 1), (65536, 64), (512, 8), (16, 1)] {
            let stamps = LentStamps::new(r.next_u64(), unit_len, turns);
            let mut unit = vec![0u8; unit_len];
            r.fill(&mut unit);
            for id in (0..300).chain([u64::MAX - 1, 1 << 40]) {
                let at = crate::workload::pool::turn_at(id as usize, turns);
                unit[at..at + 8].copy_from_slice(&stamps.word(id).to_le_bytes());
                assert_eq!(
                    selector_at(&unit, at),
                    stamps.selector(id),
                    "{unit_len} {id}"
                );
            }
        }
    }

    #[test]
    fn the_units_a_fraction_picks_are_found_from_the_first_id() {
        // Exactly the ids whose selector has `shift` low zero bits, every 2^shift-th.
        let mut r = Rng::new(5, 1);
        for _ in 0..20 {
            let stamps = LentStamps::new(r.next_u64(), 4096, 1);
            let first = r.next_u64() >> 20;
            for shift in 0..=12 {
                let k0 = stamps.first_picked(first, shift);
                assert!(k0 < 1 << shift);
                for k in 0..3000u64 {
                    let picked = stamps.selector(first + k).trailing_zeros() >= shift;
                    let found = k >= k0 && (k - k0).is_multiple_of(1 << shift);
                    assert_eq!(picked, found, "shift {shift} unit {k}");
                }
            }
        }
    }
}

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
    // The words folded, then one 64 x 64 -> 128-bit multiply with both halves folded
    // back: every input bit reaches the low bits, whose trailing zeros pick the sample.
    let x = a ^ b.rotate_left(21) ^ c.rotate_left(42) ^ (n as u64).wrapping_mul(0x9E37_79B9);
    let m = (x ^ 0x9E37_79B9_7F4A_7C15) as u128 * 0xD6E8_FEB8_6659_FD93u128;
    (m as u64) ^ ((m >> 64) as u64)
}

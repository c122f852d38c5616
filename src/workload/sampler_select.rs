//! Where the sampler reads a unit's selector (`workload::sampler`): at the unit's stamp
//! (turned through its lines), at several stamps, or for a unit that opens with a block
//! header, in the header.

use super::Sampler;
use crate::workload::keys::{selector_at, selector_of_header, selector_of_places};
use crate::workload::pool::turn_at;

impl Sampler {
    /// The sampler of a job whose units' stamps turn through `turns` lines (a power of
    /// two; 1: at each unit's start): it reads each unit's selector at its stamp, told
    /// the write's first unit (`observe_from`).
    pub fn with_stamp_turns(mut self, turns: usize) -> Sampler {
        if turns.is_power_of_two() && turns * 64 <= self.unit {
            self.turns = turns;
        }
        self
    }

    /// The sampler of a job whose blocks open with a header whose first word is `magic`
    /// (`--verify`'s): such a unit's selector is read from the header's other words,
    /// which no two blocks share. (Read at its first word, every block's first unit had
    /// one selector, taken for a frequent content and counted as copies: 16 MiB of 16 KiB
    /// `--verify --dedup 30` writes measured 42.6% duplicate units, random data 1.4%.)
    pub(crate) fn with_block_headers(mut self, magic: Option<u64>) -> Sampler {
        self.header = magic.unwrap_or(0);
        self
    }

    /// Where unique unit `id`'s stamp lies in it (`stamp_at`, turned).
    #[inline(always)]
    pub(crate) fn stamp_of(&self, id: u64) -> usize {
        self.stamp_at + turn_at(id as usize, self.turns)
    }

    /// A unit's selector, read at `at` (its stamp, `stamp_of`) or at `sel_places`.
    #[inline(always)]
    pub(crate) fn selector(&self, unit: &[u8], at: usize) -> u64 {
        match self.sel_places.is_empty() {
            true => selector_at(unit, at),
            false => selector_of_places(unit, &self.sel_places),
        }
    }

    /// `selector`, or for a unit that opens with the job's block header, the header's.
    #[inline(always)]
    pub(super) fn headed_selector(&self, unit: &[u8], at: usize) -> u64 {
        headed_selector(&self.sel_places, self.header, unit, at)
    }
}

/// `Sampler::headed_selector` of a sampler reading selectors at `places` (or at `at`)
/// whose blocks open with `header`.
#[inline(always)]
pub(super) fn headed_selector(places: &[u32], header: u64, unit: &[u8], at: usize) -> u64 {
    match unit.get(..8) {
        Some(w) if unit.len() >= 32 && w == header.to_le_bytes() => selector_of_header(unit),
        _ if places.is_empty() => selector_at(unit, at),
        _ => selector_of_places(unit, places),
    }
}

//! The sampler's table of the contents it hashed (`workload::sampler`): content hash →
//! what it stands for. Open addressing with the key and its figures in one 32-byte
//! slot, two to a cache line, so that a lookup is one line where a std `HashMap` was
//! three (its control bytes, the key's bucket, and the store of a new entry: 0.6–0.8% of
//! a null `--dedup 50` write's CPU, each a miss once the table outgrows the core's
//! caches).

use crate::workload::huge::{Advise, TableMem, Zeroed};

/// One distinct content among the units hashed in the sampled fraction (its copies
/// before it was pinned, if it was).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Seen {
    /// Its units hashed.
    pub(super) weight: u64,
    /// The first of them (the one that was not a duplicate): 1.
    pub(super) first: u64,
    /// Trailing zeros of its selector: it stays in the sample while this is ≥ `shift`.
    pub(super) sel_tz: u32,
}

/// A slot: a content hash (0: empty) and its figures.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct Slot {
    key: u64,
    seen: Seen,
}

// SAFETY: a slot of zero bytes is an empty one (key 0, no figures).
unsafe impl Zeroed for Slot {}

/// Slots of a new table.
const FIRST_SLOTS: usize = 1024;

/// The table: slots a power of two, at most half of them taken (linear probing from
/// the hash's top bits). The content whose hash is 0 (once in 2^64) is kept apart.
#[derive(Debug, Clone)]
pub(super) struct SeenTable {
    slots: TableMem<Slot>,
    /// 64 − log2(slots): a hash's first slot is its top bits.
    shift: u32,
    len: usize,
    zero: Option<Seen>,
    /// Slots beyond which the table grows only when three quarters are taken: the
    /// sampler keeps at most half this many contents (it narrows its sample past them),
    /// so that the table stays within the memory counted for it (`Spec::memory`).
    max_slots: usize,
}

impl Default for SeenTable {
    fn default() -> SeenTable {
        SeenTable::with_slots(FIRST_SLOTS, None, usize::MAX)
    }
}

impl SeenTable {
    fn with_slots(n: usize, advise: Option<Advise>, max_slots: usize) -> SeenTable {
        SeenTable {
            slots: TableMem::zeroed(n, advise),
            shift: 64 - n.trailing_zeros(),
            len: 0,
            zero: None,
            max_slots,
        }
    }

    /// An empty table for a sampler that keeps at most `contents` contents.
    pub(super) fn for_contents(contents: usize) -> SeenTable {
        let max = contents.saturating_mul(2).checked_next_power_of_two();
        SeenTable::with_slots(FIRST_SLOTS, None, max.unwrap_or(usize::MAX))
    }

    /// The table, its larger sizes in huge pages advised by `advise` (`workload::huge`).
    pub(super) fn with_huge_pages(self, advise: Advise) -> SeenTable {
        let mut t = SeenTable::with_slots(self.slots.len(), Some(advise), self.max_slots);
        for (k, s) in self.iter() {
            t.add(k, *s);
        }
        t
    }

    /// Whether the table is advised into huge pages once large.
    #[cfg(test)]
    pub(super) fn advised(&self) -> bool {
        self.slots.advise().is_some()
    }

    /// Contents in the table.
    pub(super) fn len(&self) -> usize {
        self.len + usize::from(self.zero.is_some())
    }

    /// Counts `seen` for content `key`: its weight added to the content's when the
    /// table has it, else the content added as `seen` says.
    #[inline]
    pub(super) fn add(&mut self, key: u64, seen: Seen) {
        if key == 0 {
            match self.zero.as_mut() {
                Some(z) => z.weight += seen.weight,
                None => self.zero = Some(seen),
            }
            return;
        }
        let mask = self.slots.len() - 1;
        let mut i = (key >> self.shift) as usize;
        loop {
            let slot = &mut self.slots[i];
            if slot.key == key {
                slot.seen.weight += seen.weight;
                return;
            }
            if slot.key == 0 {
                *slot = Slot { key, seen };
                self.len += 1;
                let n = self.slots.len();
                if self.len * 2 > n && (n < self.max_slots || self.len * 4 > n * 3) {
                    self.grow();
                }
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Twice the slots, every content placed anew.
    #[cold]
    fn grow(&mut self) {
        self.rebuild(self.slots.len() * 2, |_| true);
    }

    /// The table with only the contents `keep` keeps, in `n` slots.
    fn rebuild(&mut self, n: usize, keep: impl Fn(&Seen) -> bool) {
        let fresh = SeenTable::with_slots(n, self.slots.advise(), self.max_slots);
        let old = std::mem::replace(self, fresh);
        self.zero = old.zero.filter(&keep);
        for s in old.slots.iter().filter(|s| s.key != 0 && keep(&s.seen)) {
            self.add(s.key, s.seen);
        }
    }

    /// Keeps only the contents `keep` keeps.
    pub(super) fn retain(&mut self, keep: impl Fn(&Seen) -> bool) {
        self.rebuild(self.slots.len(), keep);
    }

    /// Every content and its figures.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u64, &Seen)> {
        let zero = self.zero.iter().map(|z| (0, z));
        let rest = self.slots.iter().filter(|s| s.key != 0);
        zero.chain(rest.map(|s| (s.key, &s.seen)))
    }

    /// Every content's figures.
    pub(super) fn values(&self) -> impl Iterator<Item = &Seen> {
        self.iter().map(|(_, s)| s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rng::Rng;
    use std::collections::HashMap;

    fn seen(weight: u64, sel_tz: u32) -> Seen {
        Seen {
            weight,
            first: weight,
            sel_tz,
        }
    }

    /// Random keys (some repeated, 0 among them), added, grown past its first slots,
    /// and narrowed: the table holds what a `HashMap` given the same holds.
    #[test]
    fn the_table_holds_what_a_map_holds() {
        let mut rng = Rng::new(3, 0);
        let mut table = SeenTable::default();
        let mut map: HashMap<u64, Seen> = HashMap::new();
        let mut keys = Vec::new();
        for n in 0..20_000u64 {
            let key = match n % 5 {
                0 if !keys.is_empty() => keys[rng.next_u64() as usize % keys.len()],
                1 if n % 1000 == 1 => 0,
                _ => rng.next_u64(),
            };
            keys.push(key);
            let s = seen(1 + n % 3, (rng.next_u64() % 8) as u32);
            table.add(key, s);
            map.entry(key)
                .and_modify(|e| e.weight += s.weight)
                .or_insert(s);
            if n == 15_000 {
                table.retain(|e| e.sel_tz >= 2);
                map.retain(|_, e| e.sel_tz >= 2);
            }
        }
        assert!(table.slots.len() > FIRST_SLOTS);
        assert_eq!(table.len(), map.len());
        let got: HashMap<u64, Seen> = table.iter().map(|(k, s)| (k, *s)).collect();
        assert_eq!(got, map);
        assert!(map.contains_key(&0) && map[&0].weight > 1);
        assert_eq!(
            table.values().map(|s| s.weight).sum::<u64>(),
            map.values().map(|s| s.weight).sum::<u64>()
        );
    }

    /// A table for at most 1000 contents stays within 2048 slots up to three quarters
    /// of them taken (the sampler narrows past 1000, so its table stays the size the
    /// memory check counts), then grows rather than fill up; every content is kept.
    #[test]
    fn a_table_for_some_contents_stays_their_size() {
        let mut rng = Rng::new(4, 0);
        let mut table = SeenTable::for_contents(1000);
        let keys: Vec<u64> = (0..2000).map(|_| rng.next_u64() | 1).collect();
        for (n, &k) in keys.iter().enumerate() {
            table.add(k, seen(1, 0));
            let slots = table.slots.len();
            match n + 1 {
                ..=1024 => assert!(slots <= 2048),
                1025..=1536 => assert_eq!(slots, 2048),
                _ => assert!(slots > 2048 && (n + 1) * 2 <= slots),
            }
        }
        let got: std::collections::HashSet<u64> = table.iter().map(|(k, _)| k).collect();
        assert_eq!(got, keys.iter().copied().collect());
    }
}

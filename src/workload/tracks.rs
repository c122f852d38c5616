//! The sampler's tracking table: how often each selector came lately, so that a content
//! written over and over (zeros, a pattern, the contents of a `--dedup-set`) is found
//! *frequent* and pinned whether or not its selector is in the sampled fraction
//! (`workload::sampler`).

use crate::plan::data::TRACK_SLOTS;

/// Slots of the tracking table a selector may take (its *set*: 32 bytes, within one
/// cache line). With two, a frequent content whose pair held two pinned ones (which
/// never give way) could never be pinned: a few of a `--dedup-set 1000` were not, and
/// in the sample each stood for 2^shift contents (one run measured 60% for 50%).
pub(super) const WAYS: usize = 4;

/// The count of a pinned selector's slot (never decays, never replaced).
const PINNED: u32 = u32::MAX;

/// The first of a selector's slots in the tracking table.
#[inline(always)]
pub(super) fn slot_of(sel: u64) -> usize {
    (sel >> (64 - TRACK_SLOTS.trailing_zeros())) as usize & !(WAYS - 1)
}

/// What a slot keeps of a selector (see [`Track`]).
#[inline(always)]
fn tag_of(sel: u64) -> u32 {
    sel as u32
}

/// One slot of the tracking table: a selector and how often it came lately. The
/// selector's low 32 bits stand for it (its high bits chose the set), so that a set of
/// four is 32 bytes and the table half the size.
#[derive(Debug, Clone, Copy)]
struct Track {
    tag: u32,
    count: u32,
}

/// The tracking table (a slot's count goes up when its selector comes again; when
/// another one lands in its set, the set's lowest count goes down, and the slot changes
/// hands at zero; a pinned slot never gives way), aligned so that every set of `WAYS`
/// slots lies in one cache line. A fixed-size array: its indexes, a selector's top bits,
/// need no bounds check.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub(super) struct Tracks([Track; TRACK_SLOTS]);

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
    /// An empty table.
    pub(super) fn new() -> Box<Tracks> {
        Box::new(Tracks([Track { tag: 0, count: 0 }; TRACK_SLOTS]))
    }

    /// The slot that holds `sel`, if one does.
    #[inline(always)]
    fn find(&self, sel: u64) -> Option<usize> {
        let i = slot_of(sel);
        let tag = tag_of(sel);
        (i..i + WAYS).find(|&k| self.0[k].tag == tag)
    }

    /// Whether `sel` is pinned.
    #[inline(always)]
    pub(super) fn is_pinned(&self, sel: u64) -> bool {
        self.find(sel).is_some_and(|k| self.0[k].count == PINNED)
    }

    /// Counts one coming of `sel`; a selector counted `frequent` times is pinned.
    #[inline(always)]
    pub(super) fn count(&mut self, sel: u64, frequent: u32) -> Counted {
        if let Some(k) = self.find(sel) {
            let t = &mut self.0[k];
            if t.count == PINNED {
                return Counted::Pinned;
            }
            t.count += 1;
            if t.count >= frequent {
                t.count = PINNED;
                return Counted::NowPinned;
            }
            return Counted::Rising;
        }
        // The way with the lowest count gives way (a pinned one never).
        let i = slot_of(sel);
        let j = (i..i + WAYS)
            .min_by_key(|&k| self.0[k].count)
            .expect("WAYS slots");
        let t = &mut self.0[j];
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
}

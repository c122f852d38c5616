//! The size of each I/O: fixed (`--bs`), or drawn from a mix (`--bssplit`, `--bsrange`)
//! with the job's own seeded generator, so the same seed gives the same sizes; the writes'
//! their own when a mix's differ (`--write-bs`).

use crate::plan::bsmix::{BsMix, WriteBs};
use crate::workload::rng::Rng;

/// Draws the size of every I/O of one job.
#[derive(Debug, Clone)]
pub(crate) struct Sizes {
    reads: Kind,
    /// The writes' when they differ (`--write-bs`); otherwise `reads` serves both.
    writes: Option<Kind>,
    rng: Rng,
}

#[derive(Debug, Clone)]
enum Kind {
    Fixed(u32),
    /// Cumulative percentages (the last is 100) and their sizes.
    Split(Vec<(u32, u32)>),
    /// `lo × (1 + below(steps))`.
    Range {
        lo: u32,
        steps: u64,
    },
}

impl Kind {
    fn new(bs: u64, mix: Option<&BsMix>) -> Kind {
        match mix {
            None => Kind::Fixed(bs as u32),
            Some(BsMix::Split(parts)) => {
                let mut acc = 0;
                Kind::Split(
                    (parts.iter())
                        .map(|p| {
                            acc += p.pct;
                            (acc, p.bs as u32)
                        })
                        .collect(),
                )
            }
            Some(BsMix::Range { lo, hi }) => Kind::Range {
                lo: *lo as u32,
                steps: hi / lo,
            },
        }
    }

    #[inline(always)]
    fn draw(&self, rng: &mut Rng) -> u32 {
        match self {
            Kind::Fixed(bs) => *bs,
            Kind::Split(cum) => {
                let r = rng.below(100) as u32;
                cum.iter().find(|(c, _)| r < *c).map_or(cum[0].1, |p| p.1)
            }
            Kind::Range { lo, steps } => lo * (1 + rng.below(*steps) as u32),
        }
    }
}

impl Sizes {
    /// Sizes of `bs` bytes, or drawn from `mix`; the writes' from `writes` when given.
    pub(crate) fn new(bs: u64, mix: Option<&BsMix>, writes: Option<&WriteBs>, rng: Rng) -> Sizes {
        Sizes {
            reads: Kind::new(bs, mix),
            writes: writes.map(|w| Kind::new(w.bs, w.mix.as_ref())),
            rng,
        }
    }

    /// The next I/O's size in bytes, for a read or a write.
    #[inline(always)]
    pub(crate) fn next_len(&mut self, read: bool) -> u32 {
        match (&self.writes, read) {
            (Some(w), false) => w.draw(&mut self.rng),
            _ => self.reads.draw(&mut self.rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_sizes_follow_the_mix() {
        let size = |s: &str| crate::plan::resolve::size_opt("--bssplit", s);
        for mix in [
            BsMix::parse_split("4k/50:64k/30:1m/20", size).unwrap(),
            BsMix::parse_split("512/10:8k/90", size).unwrap(),
            BsMix::parse_range("4k-64k", size).unwrap(),
        ] {
            let mut s = Sizes::new(mix.max(), Some(&mix), None, Rng::new(3, 4));
            let n = 200_000;
            let mut counts = std::collections::BTreeMap::new();
            let mut total = 0u64;
            for _ in 0..n {
                let l = s.next_len(true) as u64;
                assert!(mix.sizes().contains(&l) || matches!(mix, BsMix::Range { .. }));
                assert!(l >= mix.min() && l <= mix.max() && l.is_multiple_of(mix.min()));
                *counts.entry(l).or_insert(0u64) += 1;
                total += l;
            }
            let mean = total as f64 / n as f64;
            assert!(
                (mean / mix.mean() - 1.0).abs() < 0.01,
                "{mix:?}: mean {mean}"
            );
            if let BsMix::Split(parts) = &mix {
                for p in parts {
                    let got = counts[&p.bs] as f64 * 100.0 / n as f64;
                    assert!((got - p.pct as f64).abs() < 0.5, "{p:?}: {got}%");
                }
            } else {
                assert_eq!(counts.len(), 16, "every multiple of 4k up to 64k");
            }
        }
        assert_eq!(
            Sizes::new(8192, None, None, Rng::new(0, 0)).next_len(false),
            8192
        );
    }

    #[test]
    fn writes_take_their_own_sizes_and_reads_theirs() {
        let size = |s: &str| crate::plan::resolve::size_opt("--write-bs", s);
        let w = WriteBs::parse("64k/50:128k/50", size).unwrap();
        let mut s = Sizes::new(4096, None, Some(&w), Rng::new(5, 6));
        let (mut w64, mut w128) = (0, 0);
        for i in 0..20_000 {
            let read = i % 3 == 0;
            match (read, s.next_len(read)) {
                (true, l) => assert_eq!(l, 4096),
                (false, 65536) => w64 += 1,
                (false, 131072) => w128 += 1,
                (false, l) => panic!("a write of {l} bytes"),
            }
        }
        let share = w64 as f64 / (w64 + w128) as f64;
        assert!((share - 0.5).abs() < 0.02, "64k share {share}");
        // Without a write side, writes take the reads' sizes.
        let mut s = Sizes::new(8192, None, None, Rng::new(5, 6));
        assert_eq!((s.next_len(true), s.next_len(false)), (8192, 8192));
    }
}

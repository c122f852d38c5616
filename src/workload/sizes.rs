//! The size of each I/O: fixed (`--bs`), or drawn from a mix (`--bssplit`, `--bsrange`)
//! with the job's own seeded generator, so the same seed gives the same sizes.

use crate::plan::bsmix::BsMix;
use crate::workload::rng::Rng;

/// Draws the size of every I/O of one job.
#[derive(Debug, Clone)]
pub(crate) struct Sizes {
    kind: Kind,
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

impl Sizes {
    /// Sizes of `bs` bytes, or drawn from `mix`.
    pub(crate) fn new(bs: u64, mix: Option<&BsMix>, rng: Rng) -> Sizes {
        let kind = match mix {
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
        };
        Sizes { kind, rng }
    }

    /// The next I/O's size in bytes.
    #[inline(always)]
    pub(crate) fn next_len(&mut self) -> u32 {
        match &self.kind {
            Kind::Fixed(bs) => *bs,
            Kind::Split(cum) => {
                let r = self.rng.below(100) as u32;
                cum.iter().find(|(c, _)| r < *c).map_or(cum[0].1, |p| p.1)
            }
            Kind::Range { lo, steps } => lo * (1 + self.rng.below(*steps) as u32),
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
            let mut s = Sizes::new(mix.max(), Some(&mix), Rng::new(3, 4));
            let n = 200_000;
            let mut counts = std::collections::BTreeMap::new();
            let mut total = 0u64;
            for _ in 0..n {
                let l = s.next_len() as u64;
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
        assert_eq!(Sizes::new(8192, None, Rng::new(0, 0)).next_len(), 8192);
    }
}

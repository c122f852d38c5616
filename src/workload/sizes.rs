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
    /// Cumulative percentages (the last is 100) and their sizes; the largest size.
    Split(Vec<(u32, u32)>, u32),
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
                    parts.iter().map(|p| p.bs as u32).max().unwrap_or(0),
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
            Kind::Split(cum, _) => {
                let r = rng.below(100) as u32;
                cum.iter().find(|(c, _)| r < *c).map_or(cum[0].1, |p| p.1)
            }
            Kind::Range { lo, steps } => lo * (1 + rng.below(*steps) as u32),
        }
    }

    /// A size no larger than `room` (the bytes left before a sequential job's span ends),
    /// chosen as fio chooses it there: a split's draw goes on from its entry to the next
    /// that fits, and draws again when none after it does; a range's is one of the steps
    /// that fit. When none fits (`room` below the smallest), a size as [`Kind::draw`]'s.
    #[inline(always)]
    fn draw_within(&self, rng: &mut Rng, room: u64) -> u32 {
        match self {
            Kind::Fixed(bs) => *bs,
            Kind::Split(cum, max) if *max as u64 > room => {
                let fits = |i: usize| {
                    let pct = cum[i].0 - if i == 0 { 0 } else { cum[i - 1].0 };
                    pct > 0 && cum[i].1 as u64 <= room
                };
                if !(0..cum.len()).any(fits) {
                    return self.draw(rng);
                }
                loop {
                    let r = rng.below(100) as u32;
                    let from = cum.iter().position(|(c, _)| r < *c).unwrap_or(0);
                    if let Some(i) = (from..cum.len()).find(|&i| fits(i)) {
                        return cum[i].1;
                    }
                }
            }
            Kind::Range { lo, steps } if *lo as u64 * steps > room => {
                match (room / *lo as u64).min(*steps) {
                    0 => self.draw(rng),
                    fit => lo * (1 + rng.below(fit) as u32),
                }
            }
            _ => self.draw(rng),
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

    /// The next I/O's size in bytes, for a read or a write, wherever it goes (the tests'
    /// plain draw; a job's draws are [`Sizes::next_len_within`]'s).
    #[cfg(test)]
    pub(crate) fn next_len(&mut self, read: bool) -> u32 {
        match (&self.writes, read) {
            (Some(w), false) => w.draw(&mut self.rng),
            _ => self.reads.draw(&mut self.rng),
        }
    }

    /// The one size of every I/O, when there is no mix (`--bs` alone).
    #[inline(always)]
    pub(crate) fn fixed(&self) -> Option<u32> {
        match (&self.reads, &self.writes) {
            (Kind::Fixed(bs), None) => Some(*bs),
            _ => None,
        }
    }

    /// The next I/O's size, no larger than `room` when a size of the mix fits there (see
    /// [`Kind::draw_within`]): a sequential job's last I/Os before the span's end, which
    /// fio's also fit in it (a one-pass run of `--bssplit 4k/50:64k/50` wrapped a 64 KiB
    /// write to the span's start and left its last 48 KiB unwritten).
    #[inline(always)]
    pub(crate) fn next_len_within(&mut self, read: bool, room: u64) -> u32 {
        match (&self.writes, read) {
            (Some(w), false) => w.draw_within(&mut self.rng, room),
            _ => self.reads.draw_within(&mut self.rng, room),
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
    fn sizes_near_the_spans_end_fit_in_it_as_fios() {
        let size = |s: &str| crate::plan::resolve::size_opt("--bssplit", s);
        let counts = |mix: &str, room: u64| {
            let mix = match mix.contains('-') {
                true => BsMix::parse_range(mix, size).unwrap(),
                false => BsMix::parse_split(mix, size).unwrap(),
            };
            let mut s = Sizes::new(mix.max(), Some(&mix), None, Rng::new(7, 8));
            let mut c = std::collections::BTreeMap::new();
            for _ in 0..20_000 {
                *c.entry(s.next_len_within(false, room) as u64 >> 10)
                    .or_insert(0u32) += 1;
            }
            c.into_iter().collect::<Vec<_>>()
        };
        // 48 KiB left: only 4 KiB fits, whatever was drawn.
        assert_eq!(counts("4k/50:64k/50", 48 << 10), [(4, 20_000)]);
        // A draw of 1 MiB goes on to the next entry that fits (4 KiB): 70/30.
        let c = counts("1m/20:4k/50:64k/30", 100 << 10);
        assert_eq!(c.len(), 2, "{c:?}");
        let share = c[0].1 as f64 / 20_000.0;
        assert!(c[0].0 == 4 && (share - 0.7).abs() < 0.02, "{c:?}");
        // A draw of the last entry that does not fit draws again (4 KiB: 50/50 of 4k and
        // 8k, the 64 KiB draws drawn again).
        let c = counts("4k/25:8k/25:64k/50", 32 << 10);
        assert!(
            c.len() == 2 && (c[0].1 as f64 / 20_000.0 - 0.5).abs() < 0.02,
            "{c:?}"
        );
        // A size of no percentage is never taken, even where it alone would fit.
        assert_eq!(counts("4k/0:64k/100", 48 << 10), [(64, 20_000)]);
        // Room for none: the mix's own draw (the job wraps), as with room for all.
        let c = counts("8k/50:64k/50", 4 << 10);
        assert!(
            c.len() == 2 && (c[0].1 as f64 / 20_000.0 - 0.5).abs() < 0.02,
            "{c:?}"
        );
        // A range: the steps that fit, evenly.
        let c = counts("4k-64k", 12 << 10);
        assert_eq!(c.iter().map(|p| p.0).collect::<Vec<_>>(), [4, 8, 12]);
        assert!(
            c.iter()
                .all(|p| (p.1 as f64 / 20_000.0 - 1.0 / 3.0).abs() < 0.02)
        );
        // Room for all, or a fixed size: as `next_len`.
        let mix = BsMix::parse_split("4k/50:64k/50", size).unwrap();
        let mut a = Sizes::new(mix.max(), Some(&mix), None, Rng::new(1, 2));
        let mut b = a.clone();
        for _ in 0..1000 {
            assert_eq!(a.next_len(false), b.next_len_within(false, 64 << 10));
        }
        let mut f = Sizes::new(8192, None, None, Rng::new(0, 0));
        assert_eq!(f.next_len_within(false, 4096), 8192);
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

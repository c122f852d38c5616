//! Drawing random blocks from a skewed distribution (`--random-distribution`): a rank is
//! drawn (0 the hottest), then scattered over the span by a fixed bijection, so the hot
//! set is spread over the span rather than being its first blocks.
//!
//! Zipf uses rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion to
//! generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996): O(1)
//! per draw for any number of blocks, no table. Pareto inverts the power law
//! F(x) = x^a over the fraction x of blocks by rank, with a = ln h / ln(1 - h), so that
//! F(1 - h) = h. Normal uses the Box–Muller transform. The scattering is a permutation of
//! [0, 2^k) (odd multiplications and xor-shifts, each a bijection) walked until it lands
//! below the number of blocks (cycle walking keeps it a bijection of [0, n)). A center
//! (fio's second parameter) rotates the scattered blocks so that the most likely one
//! sits at that fraction of the span, as fio does. Zones (`zoned`, `zoned_abs`) are not
//! scattered: a zone is drawn by its share of the I/Os, then a block uniformly within it.

use crate::plan::distribution::{Distribution, Zone};
use crate::workload::rng::Rng;

/// Draws blocks in `0..n` for one job; every job of a run scatters the same way (the
/// permutation depends on the seed only), so they share the hot set.
#[derive(Debug, Clone)]
pub(crate) struct Skew {
    kind: Kind,
    n: u64,
    /// Scattering: bits of the power-of-two domain, and a seed-derived key.
    bits: u32,
    key: u64,
    /// Added (mod n) to a scattered block: puts the most likely block at the center.
    shift: u64,
}

#[derive(Debug, Clone)]
enum Kind {
    Zipf(Zipf),
    /// The exponent 1/a of U.
    Pareto(f64),
    /// Standard deviation in blocks.
    Normal(f64),
    Zoned(Zones),
}

/// Zones of the span: the cumulative share of the I/Os (out of 100) up to and including
/// each zone, and each zone's first block and number of blocks.
#[derive(Debug, Clone)]
struct Zones {
    upto: Vec<u64>,
    start: Vec<u64>,
    len: Vec<u64>,
}

impl Zones {
    /// `zones` over `n` blocks of `grain` bytes (`abs`: zone lengths in bytes, otherwise
    /// in % of the span); a length of 0 is the rest of the span. A zone that gets I/Os
    /// has at least one block.
    fn new(zones: &[Zone], abs: bool, n: u64, grain: u64) -> Zones {
        let (mut upto, mut start, mut len) = (vec![], vec![], vec![]);
        // Where the zones so far end: I/O share, block, and (for `zoned`) percent of the
        // span, so that rounding does not add up over the zones.
        let (mut access, mut at, mut pct) = (0u64, 0u64, 0u64);
        for z in zones {
            access += z.access as u64;
            let end = match (z.len, abs) {
                (0, _) => n,
                (b, true) => at + b / grain,
                (p, false) => {
                    pct += p;
                    pct * n / 100
                }
            };
            let first = at.min(n - 1);
            let blocks = end.min(n).saturating_sub(first);
            upto.push(access);
            start.push(first);
            len.push(if z.access > 0 { blocks.max(1) } else { blocks });
            at = end.max(at);
        }
        Zones { upto, start, len }
    }

    fn draw(&self, rng: &mut Rng) -> u64 {
        let r = rng.below(100);
        let i = self.upto.iter().position(|u| r < *u).unwrap_or(0);
        self.start[i] + rng.below(self.len[i].max(1))
    }
}

/// Rejection-inversion constants for exponent `s` over ranks 1..=n.
#[derive(Debug, Clone)]
struct Zipf {
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

/// ln(1 + t) / t, and its limit 1 at t = 0.
fn log1p_over(t: f64) -> f64 {
    if t.abs() > 1e-8 {
        t.ln_1p() / t
    } else {
        1.0 - t / 2.0
    }
}

/// (e^t - 1) / t, and its limit 1 at t = 0.
fn expm1_over(t: f64) -> f64 {
    if t.abs() > 1e-8 {
        t.exp_m1() / t
    } else {
        1.0 + t / 2.0
    }
}

impl Zipf {
    fn new(s: f64, n: u64) -> Zipf {
        let mut z = Zipf {
            s,
            h_x1: 0.0,
            h_n: 0.0,
            cut: 0.0,
        };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(n as f64 + 0.5);
        z.cut = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }
    /// h(x) = x^-s.
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }
    /// H(x) = ∫₁ˣ h: (x^(1-s) - 1) / (1 - s), ln x at s = 1.
    fn big_h(&self, x: f64) -> f64 {
        let l = x.ln();
        expm1_over((1.0 - self.s) * l) * l
    }
    fn big_h_inv(&self, y: f64) -> f64 {
        (log1p_over((1.0 - self.s) * y) * y).exp()
    }
    /// A rank in 1..=n.
    fn draw(&self, rng: &mut Rng, n: u64) -> u64 {
        loop {
            let u = self.h_n + unit(rng) * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = (x.round().max(1.0) as u64).min(n);
            let kf = k as f64;
            if kf - x <= self.cut || u >= self.big_h(kf + 0.5) - self.h(kf) {
                return k;
            }
        }
    }
}

/// A uniform double in [0, 1).
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Skew {
    /// `None` for the uniform distribution (drawn as before, without this).
    /// `None` for the uniform distribution (drawn as before, without this). `n` blocks of
    /// `grain` bytes.
    pub(crate) fn new(d: &Distribution, n: u64, grain: u64, seed: u64) -> Option<Skew> {
        let n = n.max(1);
        let (kind, center) = match d {
            Distribution::Uniform => return None,
            Distribution::Zipf(s, c) => (Kind::Zipf(Zipf::new(*s, n)), *c),
            // 1/a, with a = ln h / ln(1 - h).
            Distribution::Pareto(h, c) => (Kind::Pareto((1.0 - h).ln() / h.ln()), *c),
            Distribution::Normal(pct, c) => (Kind::Normal(pct / 100.0 * n as f64), *c),
            Distribution::Zoned(z) => (Kind::Zoned(Zones::new(z, false, n, grain)), None),
            Distribution::ZonedAbs(z) => (Kind::Zoned(Zones::new(z, true, n, grain)), None),
        };
        let bits = permute_bits(n);
        let key = crate::workload::rng::splitmix64(&mut (seed ^ 0x5CA7_7E42));
        let mut skew = Skew {
            kind,
            n,
            bits,
            key,
            shift: 0,
        };
        if let Some(c) = center {
            // The most likely rank (normal's is the middle; pareto's with h < 0.5 the last,
            // its density growing with the rank), scattered, moved to c × n.
            let peak = match skew.kind {
                Kind::Normal(_) => n / 2,
                Kind::Pareto(inv_a) if inv_a < 1.0 => n - 1,
                _ => 0,
            };
            let want = ((c * n as f64) as u64).min(n - 1);
            skew.shift = (want + n - skew.scatter(peak)) % n;
        }
        Some(skew)
    }

    /// The block's rank (0 the hottest; for normal, 0 the middle of the span before
    /// scattering), unscattered.
    pub(crate) fn rank(&self, rng: &mut Rng) -> u64 {
        let n = self.n;
        match &self.kind {
            Kind::Zipf(z) => z.draw(rng, n) - 1,
            Kind::Pareto(inv_a) => ((unit(rng).powf(*inv_a) * n as f64) as u64).min(n - 1),
            Kind::Normal(sd) => loop {
                let (u1, u2) = (1.0 - unit(rng), unit(rng));
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let b = (n as f64 / 2.0 + z * sd).floor();
                if b >= 0.0 && b < n as f64 {
                    break b as u64;
                }
            },
            Kind::Zoned(z) => z.draw(rng),
        }
    }

    /// A block in `0..n`: a drawn rank, scattered (and moved to the center); a zoned
    /// distribution's block as drawn.
    #[inline]
    pub(crate) fn block(&mut self, rng: &mut Rng) -> u64 {
        match self.kind {
            Kind::Zoned(_) => self.rank(rng),
            _ => self.place(self.rank(rng)),
        }
    }

    /// Where a rank lands: scattered, then moved by the center's shift.
    #[inline]
    fn place(&self, rank: u64) -> u64 {
        let b = self.scatter(rank) + self.shift;
        if b >= self.n { b - self.n } else { b }
    }

    /// The fixed bijection of `0..n` that spreads ranks over the span.
    pub(crate) fn scatter(&self, x: u64) -> u64 {
        permute(x, self.key, self.bits, self.n)
    }
}

/// The bits [`permute`] works in for `n` values.
pub(crate) fn permute_bits(n: u64) -> u32 {
    (64 - (n.max(1) - 1).leading_zeros()).max(2)
}

/// A bijection of `0..n` chosen by `key` (`bits` from [`permute_bits`]): a keyed mix of
/// `0..2^bits`, walked until it lands below `n` (at most a few steps: `2^bits < 2n`).
pub(crate) fn permute(mut x: u64, key: u64, bits: u32, n: u64) -> u64 {
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let half = bits.div_ceil(2);
    loop {
        x = (x ^ (key & mask)).wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask;
        x ^= x >> half;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9) & mask;
        x ^= x >> half;
        if x < n {
            return x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(d: Distribution, n: u64, draws: u64) -> Vec<u64> {
        let mut s = Skew::new(&d, n, 4096, 7).unwrap();
        let mut rng = Rng::new(1, 2);
        let mut c = vec![0u64; n as usize];
        for _ in 0..draws {
            c[s.block(&mut rng) as usize] += 1;
        }
        c
    }

    /// Share of the draws on the hottest `frac` of the blocks.
    fn hot_share(mut c: Vec<u64>, frac: f64) -> f64 {
        let total: u64 = c.iter().sum();
        c.sort_unstable_by(|a, b| b.cmp(a));
        let k = (c.len() as f64 * frac) as usize;
        c[..k].iter().sum::<u64>() as f64 / total as f64
    }

    #[test]
    fn zipf_hot_share_matches_theory() {
        // The hottest 10% of n blocks under Zipf(θ) get H(n/10, θ) / H(n, θ), with H the
        // generalized harmonic number.
        let n = 10_000u64;
        for theta in [0.8, 1.0, 1.2] {
            let h = |m: u64| (1..=m).map(|k| (k as f64).powf(-theta)).sum::<f64>();
            let want = h(n / 10) / h(n);
            let got = hot_share(counts(Distribution::Zipf(theta, None), n, 1_000_000), 0.1);
            assert!(
                (got - want).abs() < 0.02,
                "zipf:{theta}: {got:.3} against {want:.3}"
            );
        }
    }

    #[test]
    fn pareto_and_normal_hot_shares_match_theory() {
        let n = 10_000u64;
        // pareto:h puts a share h on the hottest 1 - h of the blocks.
        let got = hot_share(counts(Distribution::Pareto(0.8, None), n, 1_000_000), 0.2);
        assert!(
            (got - 0.8).abs() < 0.02,
            "pareto:0.8: {got:.3} on the hottest 20%"
        );
        // normal:σ%: ±1σ around the middle (2σ of the span) holds 68.3%.
        let got = hot_share(counts(Distribution::Normal(5.0, None), n, 1_000_000), 0.1);
        assert!(
            (got - 0.683).abs() < 0.02,
            "normal:5: {got:.3} on the hottest 10%"
        );
    }

    #[test]
    fn the_hot_set_is_scattered_and_the_scatter_a_bijection() {
        let n = 1000u64;
        let s = Skew::new(&Distribution::Zipf(1.2, None), n, 4096, 3).unwrap();
        let mut seen = vec![false; n as usize];
        for r in 0..n {
            let b = s.scatter(r) as usize;
            assert!(!seen[b], "{b} twice");
            seen[b] = true;
        }
        // The 10 hottest ranks do not sit in the first 10% of the span.
        let low = (0..10).filter(|&r| s.scatter(r) < n / 10).count();
        assert!(low < 5, "{low} of the 10 hottest blocks in the first tenth");
    }

    #[test]
    fn uniform_stays_uniform() {
        // Uniform draws do not go through Skew: the offsets' own chi-square test covers
        // them; here the hottest 10% of a uniform run hold about 10%.
        assert!(Skew::new(&Distribution::Uniform, 100, 4096, 0).is_none());
        let mut o =
            crate::workload::rng::Offsets::new(0, 10_000 * 512, 512, true, 0, Rng::new(5, 1));
        let mut c = vec![0u64; 10_000];
        for _ in 0..1_000_000 {
            c[(o.next_offset() / 512) as usize] += 1;
        }
        let got = hot_share(c, 0.1);
        assert!(got < 0.13, "uniform: {got:.3} on the hottest 10%");
    }

    /// Pearson's chi-square of `got` against `want` (expected counts).
    fn chi2(got: &[u64], want: &[f64]) -> f64 {
        got.iter()
            .zip(want)
            .map(|(g, w)| (*g as f64 - w).powi(2) / w)
            .sum()
    }

    #[test]
    fn zones_get_their_share_uniformly_in_order() {
        // zoned:60/10:30/20:10/70 over 10,000 blocks: each zone split in halves, six
        // cells, expected counts from the shares; chi-square with 5 degrees of freedom
        // below 20.5 (p = 0.001).
        let (n, draws) = (10_000u64, 600_000u64);
        let d = Distribution::parse("zoned:60/10:30/20:10/70").unwrap();
        let c = counts(d, n, draws);
        let cells = [0, 500, 1000, 2000, 3000, 6500, 10_000];
        let got: Vec<u64> = cells
            .windows(2)
            .map(|w| c[w[0]..w[1]].iter().sum())
            .collect();
        let want: Vec<f64> = [30.0, 30.0, 15.0, 15.0, 5.0, 5.0]
            .iter()
            .map(|p| p / 100.0 * draws as f64)
            .collect();
        let x = chi2(&got, &want);
        assert!(x < 20.5, "chi-square {x:.1}: {got:?} against {want:?}");
        // The first zone's share is 60%, within a point.
        let first = got[0] + got[1];
        assert!((first as f64 / draws as f64 - 0.6).abs() < 0.01, "{got:?}");
    }

    #[test]
    fn zones_short_of_the_span_leave_the_rest_alone_and_absolute_zones_are_bytes() {
        let n = 1000u64;
        let c = counts(
            Distribution::parse("zoned:60/10:40/20").unwrap(),
            n,
            100_000,
        );
        assert_eq!(
            c[300..].iter().sum::<u64>(),
            0,
            "no I/O past 30% of the span"
        );
        assert!(c[..100].iter().sum::<u64>() > 58_000);
        // zoned_abs:75/1m:25/2m over 1000 blocks of 4 KiB: the first 256 blocks get 75%,
        // the next 512 the rest, the last 232 nothing.
        let c = counts(
            Distribution::parse("zoned_abs:75/1m:25/2m").unwrap(),
            n,
            100_000,
        );
        let first: u64 = c[..256].iter().sum();
        assert!((first as f64 / 1e5 - 0.75).abs() < 0.01, "{first}");
        assert!(
            c[256..768].iter().all(|&k| k > 0),
            "the second zone is all used"
        );
        assert_eq!(c[768..].iter().sum::<u64>(), 0);
    }

    #[test]
    fn a_center_puts_the_most_likely_block_there() {
        let n = 10_000u64;
        for (t, at) in [
            ("zipf:1.2:0.3", 3000usize),
            ("pareto:0.9:0.7", 7000),
            ("zipf:1.2:1", 9999),
        ] {
            let c = counts(Distribution::parse(t).unwrap(), n, 200_000);
            let top = (0..c.len()).max_by_key(|&i| c[i]).unwrap();
            assert_eq!(top, at, "{t}: the most drawn block");
            // Still the same skew: a rotation of the scattered blocks.
            let plain = t.rsplit_once(':').unwrap().0;
            let a = hot_share(c, 0.1);
            let b = hot_share(counts(Distribution::parse(plain).unwrap(), n, 200_000), 0.1);
            assert!((a - b).abs() < 0.02, "{t}: {a:.3} against {plain}'s {b:.3}");
        }
        // normal's peak (the middle rank) is too flat to find by counting: where it lands.
        let s = Skew::new(&Distribution::parse("normal:5:0.25").unwrap(), n, 4096, 7).unwrap();
        assert_eq!(s.place(n / 2), 2500);
    }
}

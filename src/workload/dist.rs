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
//! below the number of blocks (cycle walking keeps it a bijection of [0, n)).

use crate::plan::distribution::Distribution;
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
}

#[derive(Debug, Clone)]
enum Kind {
    Zipf(Zipf),
    /// The exponent 1/a of U.
    Pareto(f64),
    /// Standard deviation in blocks.
    Normal(f64),
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
    pub(crate) fn new(d: Distribution, n: u64, seed: u64) -> Option<Skew> {
        let n = n.max(1);
        let kind = match d {
            Distribution::Uniform => return None,
            Distribution::Zipf(s) => Kind::Zipf(Zipf::new(s, n)),
            // 1/a, with a = ln h / ln(1 - h).
            Distribution::Pareto(h) => Kind::Pareto((1.0 - h).ln() / h.ln()),
            Distribution::Normal(pct) => Kind::Normal(pct / 100.0 * n as f64),
        };
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let key = crate::workload::rng::splitmix64(&mut (seed ^ 0x5CA7_7E42));
        Some(Skew { kind, n, bits, key })
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
        }
    }

    /// A block in `0..n`: a drawn rank, scattered.
    #[inline]
    pub(crate) fn block(&mut self, rng: &mut Rng) -> u64 {
        self.scatter(self.rank(rng))
    }

    /// The fixed bijection of `0..n` that spreads ranks over the span.
    pub(crate) fn scatter(&self, mut x: u64) -> u64 {
        let mask = if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        };
        let half = self.bits.div_ceil(2);
        loop {
            x = (x ^ (self.key & mask)).wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask;
            x ^= x >> half;
            x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9) & mask;
            x ^= x >> half;
            if x < self.n {
                return x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(d: Distribution, n: u64, draws: u64) -> Vec<u64> {
        let mut s = Skew::new(d, n, 7).unwrap();
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
            let got = hot_share(counts(Distribution::Zipf(theta), n, 1_000_000), 0.1);
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
        let got = hot_share(counts(Distribution::Pareto(0.8), n, 1_000_000), 0.2);
        assert!(
            (got - 0.8).abs() < 0.02,
            "pareto:0.8: {got:.3} on the hottest 20%"
        );
        // normal:σ%: ±1σ around the middle (2σ of the span) holds 68.3%.
        let got = hot_share(counts(Distribution::Normal(5.0), n, 1_000_000), 0.1);
        assert!(
            (got - 0.683).abs() < 0.02,
            "normal:5: {got:.3} on the hottest 10%"
        );
    }

    #[test]
    fn the_hot_set_is_scattered_and_the_scatter_a_bijection() {
        let n = 1000u64;
        let s = Skew::new(Distribution::Zipf(1.2), n, 3).unwrap();
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
        assert!(Skew::new(Distribution::Uniform, 100, 0).is_none());
        let mut o =
            crate::workload::rng::Offsets::new(0, 10_000 * 512, 512, true, 0, Rng::new(5, 1));
        let mut c = vec![0u64; 10_000];
        for _ in 0..1_000_000 {
            c[(o.next_offset() / 512) as usize] += 1;
        }
        let got = hot_share(c, 0.1);
        assert!(got < 0.13, "uniform: {got:.3} on the hottest 10%");
    }
}

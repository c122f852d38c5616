//! What iomark writes. For now one profile: fresh random bytes for every write
//! (incompressible and never repeated, so a compressing or deduplicating device gets no
//! help), derived from the run's seed so the same seed writes the same bytes. Richer
//! profiles (compressibility, dedupability, patterns, real files) plug in here.

use crate::pattern::Rng;

/// Generates write payloads for one job.
#[derive(Debug, Clone)]
pub struct DataGen {
    rng: Rng,
}

impl DataGen {
    /// A generator for `seed`; `stream` separates jobs (and the file layout pass).
    pub fn new(seed: u64, stream: u64) -> DataGen {
        DataGen {
            rng: Rng::new(seed ^ 0xDA7A_DA7A_DA7A_DA7A, stream),
        }
    }

    /// Fills `buf` with the next payload.
    #[inline]
    pub fn fill(&mut self, buf: &mut [u8]) {
        self.rng.fill(buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_fresh() {
        let mut a = DataGen::new(5, 0);
        let mut b = DataGen::new(5, 0);
        let (mut x, mut y) = (vec![0u8; 4096], vec![0u8; 4096]);
        a.fill(&mut x);
        b.fill(&mut y);
        assert_eq!(x, y, "same seed, same bytes");
        a.fill(&mut y);
        assert_ne!(x, y, "every write gets fresh content");
        let mut c = DataGen::new(6, 0);
        c.fill(&mut y);
        assert_ne!(x, y, "another seed, other bytes");
    }
}

//! Block-size mixes: `--bssplit` (sizes with percentages, fio's `bssplit`) and `--bsrange`
//! (a range, fio's `bsrange`). Parsing, the checks, the figures the rest of iomark needs
//! (smallest, largest, mean) and the text shown in a run's name. Drawing a size for each
//! I/O is `workload::sizes`; nothing here does I/O.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::units::fmt_size_short;

/// One size of a split and its share of the I/Os.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BsPart {
    /// Bytes per I/O.
    pub bs: u64,
    /// Percentage of the I/Os (the parts add up to 100).
    pub pct: u32,
}

/// How each I/O's size is chosen when it varies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BsMix {
    /// Each I/O takes one of these sizes with its percentage as its probability.
    Split(Vec<BsPart>),
    /// Each I/O takes a size drawn uniformly from `lo`, `2·lo`, … up to `hi` (every
    /// multiple of `lo` in the range, so `hi` is a multiple of `lo`).
    Range { lo: u64, hi: u64 },
}

impl BsMix {
    /// The mix of `--bssplit` or `--bsrange` (`None`: neither given; both: refused), as a
    /// spec keeps it with `WriteBs::of`. `size` parses one size for the option it names.
    pub(crate) fn of_options(
        split: Option<&str>,
        range: Option<&str>,
        size: impl Fn(&str, &str) -> Result<u64>,
    ) -> Result<Option<BsMix>> {
        match (split, range) {
            (Some(_), Some(_)) => Err(Error::usage(
                "--bssplit and --bsrange both set the block sizes; give one of them",
            )),
            (Some(t), None) => Self::parse_split(t, |s| size("--bssplit", s)).map(Some),
            (None, Some(t)) => Self::parse_range(t, |s| size("--bsrange", s)).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// `--bssplit SIZE/PCT:SIZE/PCT…`; a size without a percentage shares what the others
    /// leave of 100 equally (as fio). `size` parses one size.
    pub(crate) fn parse_split(text: &str, size: impl Fn(&str) -> Result<u64>) -> Result<BsMix> {
        Self::parse_split_as("--bssplit", text, size)
    }

    /// [`BsMix::parse_split`] for option `opt` (named in the errors).
    fn parse_split_as(opt: &str, text: &str, size: impl Fn(&str) -> Result<u64>) -> Result<BsMix> {
        let bad = |why: &str| {
            Error::usage(format!(
                "{opt} {text}: {why} (e.g. {opt} 4k/50:64k/30:1m/20)"
            ))
        };
        if text.contains(',') {
            return Err(bad(
                "one split for reads and writes alike; iomark has no per-direction splits",
            ));
        }
        let mut parts = Vec::new();
        let mut blank = 0u32;
        for p in text.split(':').map(str::trim).filter(|p| !p.is_empty()) {
            let (s, pct) = match p.split_once('/') {
                Some((s, pct)) => {
                    let pct: u32 = pct
                        .trim()
                        .parse()
                        .map_err(|_| bad(&format!("'{pct}' is not a whole percentage")))?;
                    (s, Some(pct))
                }
                None => (p, None),
            };
            blank += pct.is_none() as u32;
            parts.push((size(s.trim())?, pct));
        }
        if parts.is_empty() {
            return Err(bad("no sizes given"));
        }
        let given: u32 = parts.iter().filter_map(|p| p.1).sum();
        if given > 100 || (blank == 0 && given != 100) {
            return Err(bad(&format!(
                "the percentages add up to {given}; they must add up to 100"
            )));
        }
        let (share, mut rest) = match blank {
            0 => (0, 0),
            n => ((100 - given) / n, (100 - given) % n),
        };
        let mut out: Vec<BsPart> = Vec::new();
        for (bs, pct) in parts {
            let pct = pct.unwrap_or_else(|| {
                let extra = (rest > 0) as u32;
                rest -= extra;
                share + extra
            });
            if pct > 0 {
                out.push(BsPart { bs, pct });
            }
        }
        Ok(BsMix::Split(out))
    }

    /// `--bsrange LO-HI`.
    pub(crate) fn parse_range(text: &str, size: impl Fn(&str) -> Result<u64>) -> Result<BsMix> {
        Self::parse_range_as("--bsrange", text, size)
    }

    /// [`BsMix::parse_range`] for option `opt` (named in the errors).
    fn parse_range_as(opt: &str, text: &str, size: impl Fn(&str) -> Result<u64>) -> Result<BsMix> {
        let Some((lo, hi)) = text.split_once('-') else {
            return Err(Error::usage(format!(
                "{opt} {text}: give LOW-HIGH (e.g. {opt} 4k-64k)"
            )));
        };
        let (lo, hi) = (size(lo.trim())?, size(hi.trim())?);
        if lo == 0 || hi < lo || !hi.is_multiple_of(lo) {
            return Err(Error::usage(format!(
                "{opt} {text}: the high end must be a multiple of the low end, which must be greater than zero (e.g. 4k-64k)"
            )));
        }
        Ok(BsMix::Range { lo, hi })
    }

    /// The smallest size: random offsets are aligned to it.
    pub(crate) fn min(&self) -> u64 {
        match self {
            BsMix::Split(p) => p.iter().map(|p| p.bs).min().unwrap_or(0),
            BsMix::Range { lo, .. } => *lo,
        }
    }

    /// The largest size: the size of every I/O buffer (`spec.bs`).
    pub(crate) fn max(&self) -> u64 {
        match self {
            BsMix::Split(p) => p.iter().map(|p| p.bs).max().unwrap_or(0),
            BsMix::Range { hi, .. } => *hi,
        }
    }

    /// The expected size of one I/O.
    pub(crate) fn mean(&self) -> f64 {
        match self {
            BsMix::Split(p) => p.iter().map(|p| p.bs as f64 * p.pct as f64).sum::<f64>() / 100.0,
            BsMix::Range { lo, hi } => (*lo + *hi) as f64 / 2.0,
        }
    }

    /// Every size the mix can take, for the alignment checks (a range: its ends and its
    /// step, which is the low end).
    pub(crate) fn sizes(&self) -> Vec<u64> {
        match self {
            BsMix::Split(p) => p.iter().map(|p| p.bs).collect(),
            BsMix::Range { lo, hi } => vec![*lo, *hi],
        }
    }

    /// As shown in a run's name: `4k/50:64k/50`, `4k-64k`.
    pub(crate) fn text(&self) -> String {
        match self {
            BsMix::Split(p) => (p.iter())
                .map(|p| format!("{}/{}", fmt_size_short(p.bs), p.pct))
                .collect::<Vec<_>>()
                .join(":"),
            BsMix::Range { lo, hi } => format!("{}-{}", fmt_size_short(*lo), fmt_size_short(*hi)),
        }
    }

    /// The checks that need no target: sizes within 1 byte..1 GiB, and multiples of 512
    /// for direct I/O (the device's own alignment is checked when it is opened).
    pub(crate) fn validate(&self, direct: bool) -> Result<()> {
        self.validate_as(direct, &self.opt())
    }

    /// [`BsMix::validate`], naming the option as `opt` (`--write-bs 4k/50:64k/50`).
    fn validate_as(&self, direct: bool, opt: &str) -> Result<()> {
        for bs in self.sizes() {
            if bs == 0 || bs > 1 << 30 {
                return Err(Error::usage(format!(
                    "{opt}: every size must be between 1 byte and 1 GiB"
                )));
            }
            if direct && !bs.is_multiple_of(512) {
                return Err(Error::usage(format!(
                    "{opt} has {bs} bytes, not a multiple of 512 bytes, the smallest unit direct I/O accepts; use multiples of 512 (the device may need 4096) or --buffered"
                )));
            }
        }
        Ok(())
    }

    /// The option's name and value, for messages.
    pub(crate) fn opt(&self) -> String {
        match self {
            BsMix::Split(_) => format!("--bssplit {}", self.text()),
            BsMix::Range { .. } => format!("--bsrange {}", self.text()),
        }
    }
}

/// The writes' sizes in a mix whose reads and writes differ (`--write-bs`, fio's
/// `bs=4k,64k` and the write side of `bssplit`/`bsrange`): one size, or a mix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteBs {
    /// Bytes per write; the largest when they vary.
    pub bs: u64,
    /// Sizes that vary from write to write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<BsMix>,
}

impl WriteBs {
    /// `--write-bs`: a size (`64k`), a split (`4k/50:64k/50`) or a range (`4k-64k`).
    pub(crate) fn parse(text: &str, size: impl Fn(&str) -> Result<u64>) -> Result<WriteBs> {
        let t = text.trim();
        let mix = if t.contains('/') || t.contains(':') {
            BsMix::parse_split_as("--write-bs", t, size)?
        } else if t.contains('-') {
            BsMix::parse_range_as("--write-bs", t, size)?
        } else {
            let bs = size(t)?;
            if bs == 0 {
                return Err(Error::usage(
                    "--write-bs must be greater than zero (e.g. --write-bs 64k)",
                ));
            }
            return Ok(WriteBs { bs, mix: None });
        };
        Ok(WriteBs::of(mix.max(), Some(mix)))
    }

    /// `bs` and `mix` as a spec keeps them (a split of one size is that size).
    pub(crate) fn of(bs: u64, mix: Option<BsMix>) -> WriteBs {
        match mix {
            Some(BsMix::Split(p)) if p.len() == 1 => WriteBs {
                bs: p[0].bs,
                mix: None,
            },
            Some(BsMix::Range { lo, hi }) if lo == hi => WriteBs { bs: lo, mix: None },
            mix => WriteBs { bs, mix },
        }
    }

    /// The smallest write.
    pub(crate) fn min(&self) -> u64 {
        self.mix.as_ref().map_or(self.bs, BsMix::min)
    }

    /// The expected size of one write.
    pub(crate) fn mean(&self) -> f64 {
        self.mix.as_ref().map_or(self.bs as f64, BsMix::mean)
    }

    /// Every size a write can take, for the alignment checks.
    pub(crate) fn sizes(&self) -> Vec<u64> {
        self.mix.as_ref().map_or(vec![self.bs], BsMix::sizes)
    }

    /// As shown: `64k`, `4k/50:64k/50`, `4k-64k`.
    pub(crate) fn text(&self) -> String {
        self.mix
            .as_ref()
            .map_or_else(|| fmt_size_short(self.bs), BsMix::text)
    }

    /// The checks that need no target, as [`BsMix::validate`].
    pub(crate) fn validate(&self, direct: bool) -> Result<()> {
        let whole = BsMix::Split(vec![BsPart {
            bs: self.bs,
            pct: 100,
        }]);
        let mix = self.mix.as_ref().unwrap_or(&whole);
        mix.validate_as(direct, &format!("--write-bs {}", self.text()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(s: &str) -> Result<u64> {
        crate::plan::resolve::size_opt("--bssplit", s)
    }

    #[test]
    fn split_parses_and_shares_the_rest() {
        let m = BsMix::parse_split("4k/50:64k/30:1m/20", size).unwrap();
        assert_eq!(m.min(), 4096);
        assert_eq!(m.max(), 1 << 20);
        let mean = 4096.0 * 0.5 + 65536.0 * 0.3 + 1048576.0 * 0.2;
        assert!((m.mean() - mean).abs() < 1e-6);
        // fio's rule: sizes without a percentage share the remainder.
        let m = BsMix::parse_split("4k/40:8k:16k", size).unwrap();
        let BsMix::Split(p) = &m else { panic!() };
        assert_eq!(p.iter().map(|p| p.pct).collect::<Vec<_>>(), [40, 30, 30]);
        assert_eq!(m.text(), "4k/40:8k/30:16k/30");
    }

    #[test]
    fn bad_splits_and_ranges_are_refused() {
        for t in ["4k/50:64k/40", "4k/60:64k/60", "", "4k/x", "4k/50,8k/50"] {
            assert!(BsMix::parse_split(t, size).is_err(), "{t}");
        }
        for t in ["4k", "8k-4k", "4k-6k", "0-4k"] {
            assert!(BsMix::parse_range(t, size).is_err(), "{t}");
        }
        let r = BsMix::parse_range("4k-16k", size).unwrap();
        assert_eq!((r.min(), r.max(), r.mean()), (4096, 16384, 10240.0));
        let odd = BsMix::parse_split("4k/50:1000/50", size).unwrap();
        assert!(odd.validate(true).is_err());
        assert!(odd.validate(false).is_ok());
    }
}

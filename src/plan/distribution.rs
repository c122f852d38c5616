//! `--random-distribution`: how random offsets are spread over the span's blocks
//! (fio's `random_distribution`). Parsing and the text shown; drawing is `workload::dist`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The distribution of random offsets. For the skewed ones, block popularity follows the
/// distribution by rank, and the ranks are scattered over the span by a fixed bijection,
/// so the hot blocks are not the first ones.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "kind", content = "param")]
pub enum Distribution {
    /// Every block equally likely.
    #[default]
    Uniform,
    /// The block of rank k (1-based) has probability ∝ k^-θ.
    Zipf(f64),
    /// The hottest fraction `1 - h` of the blocks gets a share `h` of the I/Os (h = 0.8:
    /// the 80/20 rule), following a power law.
    Pareto(f64),
    /// A normal distribution around the middle of the span, its standard deviation this
    /// percentage of the span.
    Normal(f64),
}

impl Distribution {
    /// `random`/`uniform`, `zipf:θ` (θ > 0), `pareto:h` (0 < h < 1), `normal:σ` (a
    /// percentage of the span, 0 < σ ≤ 100).
    pub(crate) fn parse(text: &str) -> Result<Distribution> {
        let t = text.trim();
        let bad = |why: &str| {
            Error::usage(format!(
                "--random-distribution {t}: {why} (use random, zipf:1.2, pareto:0.8 or normal:10)"
            ))
        };
        if t == "random" || t == "uniform" {
            return Ok(Distribution::Uniform);
        }
        let Some((kind, v)) = t.split_once(':') else {
            return Err(bad("a distribution and its parameter, as NAME:VALUE"));
        };
        if !["zipf", "pareto", "normal"].contains(&kind) {
            return Err(bad(&format!("'{kind}' is not a distribution iomark knows")));
        }
        let v: f64 = (v.trim().parse().ok())
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| bad(&format!("'{v}' is not a number")))?;
        match kind {
            "zipf" if v > 0.0 && v <= 100.0 => Ok(Distribution::Zipf(v)),
            "zipf" => Err(bad("θ must be greater than 0")),
            "pareto" if v > 0.0 && v < 1.0 => Ok(Distribution::Pareto(v)),
            "pareto" => Err(bad("h must be between 0 and 1")),
            "normal" if v > 0.0 && v <= 100.0 => Ok(Distribution::Normal(v)),
            "normal" => Err(bad(
                "σ is a percentage of the span, above 0 and at most 100",
            )),
            _ => Err(bad(&format!("'{kind}' is not a distribution iomark knows"))),
        }
    }

    /// As given: `zipf:1.2`; `random` for uniform.
    pub(crate) fn text(&self) -> String {
        match self {
            Distribution::Uniform => "random".into(),
            Distribution::Zipf(v) => format!("zipf:{v}"),
            Distribution::Pareto(v) => format!("pareto:{v}"),
            Distribution::Normal(v) => format!("normal:{v}"),
        }
    }

    pub(crate) fn is_uniform(&self) -> bool {
        *self == Distribution::Uniform
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_fio_writes_and_refuses_the_rest() {
        assert_eq!(
            Distribution::parse("zipf:1.2").unwrap(),
            Distribution::Zipf(1.2)
        );
        assert_eq!(
            Distribution::parse("random").unwrap(),
            Distribution::Uniform
        );
        assert_eq!(Distribution::parse("normal:5").unwrap().text(), "normal:5");
        for bad in [
            "zipf",
            "zipf:0",
            "pareto:1",
            "normal:0",
            "zoned:50/5",
            "zipf:x",
        ] {
            assert!(Distribution::parse(bad).is_err(), "{bad}");
        }
    }
}

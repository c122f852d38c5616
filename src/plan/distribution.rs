//! `--random-distribution`: how random offsets are spread over the span's blocks
//! (fio's `random_distribution`). Parsing, the text shown and the document's form;
//! drawing is `workload::dist`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The distribution of random offsets. For the skewed ones, block popularity follows the
/// distribution by rank, and the ranks are scattered over the span by a fixed bijection,
/// so the hot blocks are not the first ones; a center puts the most likely block at that
/// fraction of the span. Zones are contiguous stretches of the span, in order from its
/// start, each drawn uniformly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(into = "Wire", try_from = "Wire")]
pub enum Distribution {
    /// Every block equally likely.
    #[default]
    Uniform,
    /// The block of rank k (1-based) has probability ∝ k^-θ.
    Zipf(f64, Option<f64>),
    /// The hottest fraction `1 - h` of the blocks gets a share `h` of the I/Os (h = 0.8:
    /// the 80/20 rule), following a power law.
    Pareto(f64, Option<f64>),
    /// A normal distribution, its standard deviation this percentage of the span.
    Normal(f64, Option<f64>),
    /// `zoned:A/S:…`: a share A % of the I/Os on the next S % of the span.
    Zoned(Vec<Zone>),
    /// `zoned_abs:A/SIZE:…`: a share A % of the I/Os on the next SIZE bytes.
    ZonedAbs(Vec<Zone>),
}

/// One zone: its share of the I/Os, and its length (% of the span for `zoned`, bytes
/// for `zoned_abs`); `0` is the rest of the span (the last `zoned` zone only).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    /// Percent of the I/Os.
    pub access: u32,
    /// Percent of the span (`zoned`) or bytes (`zoned_abs`); 0: the rest of the span.
    pub len: u64,
}

/// The document's form: `{"kind": "zipf", "param": 1.2}` (as before zones and centers),
/// with `"center"` when given, and `"zones"` for the zoned kinds.
#[derive(Serialize, Deserialize)]
struct Wire {
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    param: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    center: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    zones: Vec<Zone>,
}

impl From<Distribution> for Wire {
    fn from(d: Distribution) -> Wire {
        let kind = d.kind().to_string();
        let (param, center, zones) = match d {
            Distribution::Uniform => (None, None, vec![]),
            Distribution::Zipf(v, c) | Distribution::Pareto(v, c) | Distribution::Normal(v, c) => {
                (Some(v), c, vec![])
            }
            Distribution::Zoned(z) | Distribution::ZonedAbs(z) => (None, None, z),
        };
        Wire {
            kind,
            param,
            center,
            zones,
        }
    }
}

impl TryFrom<Wire> for Distribution {
    type Error = String;
    fn try_from(w: Wire) -> std::result::Result<Distribution, String> {
        let p = || w.param.ok_or(format!("{}: no param", w.kind));
        Ok(match w.kind.as_str() {
            "uniform" | "random" => Distribution::Uniform,
            "zipf" => Distribution::Zipf(p()?, w.center),
            "pareto" => Distribution::Pareto(p()?, w.center),
            "normal" => Distribution::Normal(p()?, w.center),
            "zoned" => Distribution::Zoned(w.zones),
            "zoned_abs" => Distribution::ZonedAbs(w.zones),
            other => return Err(format!("unknown distribution kind '{other}'")),
        })
    }
}

const USE: &str = "use random, zipf:1.2, pareto:0.8, normal:10 (each with an optional center, zipf:1.2:0.3), zoned:60/10:30/20:10/ or zoned_abs:60/1g:40/4g";

impl Distribution {
    /// fio's syntax: `random`/`uniform`, `zipf:θ` (θ > 0), `pareto:h` (0 < h < 1),
    /// `normal:σ` (a percentage of the span, 0 < σ ≤ 100), each with an optional
    /// `:center` in [0, 1]; `zoned:A/S:…` (whole percentages, the shares adding up to
    /// 100, the spans to at most 100, an empty or 0 last span being the rest) and
    /// `zoned_abs:A/SIZE:…` (sizes with iomark's units, k = 1024, each given).
    pub(crate) fn parse(text: &str) -> Result<Distribution> {
        let t = text.trim();
        let bad = |why: &str| Error::usage(format!("--random-distribution {t}: {why} ({USE})"));
        if t == "random" || t == "uniform" {
            return Ok(Distribution::Uniform);
        }
        let Some((kind, rest)) = t.split_once(':') else {
            return Err(bad("a distribution and its parameter, as NAME:VALUE"));
        };
        if kind == "zoned" || kind == "zoned_abs" {
            return Self::zones(kind == "zoned_abs", rest).map_err(|why| bad(&why));
        }
        if !["zipf", "pareto", "normal"].contains(&kind) {
            return Err(bad(&format!("'{kind}' is not a distribution iomark knows")));
        }
        let (v, center) = match rest.split_once(':') {
            Some((v, c)) => (v, Some(c)),
            None => (rest, None),
        };
        let num = |v: &str| {
            (v.trim().parse().ok())
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| bad(&format!("'{v}' is not a number")))
        };
        let v = num(v)?;
        let center = center.map(num).transpose()?;
        if center.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
            return Err(bad(
                "the center is a fraction of the span, from 0 (its start) to 1 (its end)",
            ));
        }
        match kind {
            "zipf" if v > 0.0 && v <= 100.0 => Ok(Distribution::Zipf(v, center)),
            "zipf" => Err(bad("θ must be greater than 0")),
            "pareto" if v > 0.0 && v < 1.0 => Ok(Distribution::Pareto(v, center)),
            "pareto" => Err(bad("h must be between 0 and 1")),
            "normal" if v > 0.0 && v <= 100.0 => Ok(Distribution::Normal(v, center)),
            "normal" => Err(bad(
                "σ is a percentage of the span, above 0 and at most 100",
            )),
            _ => Err(bad(&format!("'{kind}' is not a distribution iomark knows"))),
        }
    }

    /// The zones of `zoned:` (`abs`: `zoned_abs:`), as `A/S` pairs joined by `:`.
    fn zones(abs: bool, text: &str) -> std::result::Result<Distribution, String> {
        let parts: Vec<&str> = text.split(':').collect();
        if parts.len() > 256 {
            return Err("at most 256 zones".into());
        }
        let mut zones = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            let last = i + 1 == parts.len();
            let Some((a, s)) = part.split_once('/') else {
                return Err(format!("zone '{part}' is not ACCESS/SPAN"));
            };
            let access: u32 = (a.trim().parse().ok())
                .filter(|a| *a <= 100)
                .ok_or(format!(
                    "'{a}' in '{part}' is not a whole percentage of the I/Os"
                ))?;
            let s = s.trim();
            let len = if s.is_empty() {
                0
            } else if abs {
                crate::units::parse_size(s)
                    .map_err(|_| format!("'{s}' in '{part}' is not a size (e.g. 10g)"))?
            } else {
                (s.parse().ok()).filter(|s| *s <= 100).ok_or(format!(
                    "'{s}' in '{part}' is not a whole percentage of the span"
                ))?
            };
            if len == 0 && abs {
                return Err(format!(
                    "zone '{part}' has no size; zoned_abs zones each need one (as in fio), zoned:A/ takes the rest of the span"
                ));
            }
            if len == 0 && !last {
                return Err(format!(
                    "zone '{part}' has no length; only the last zone may take the rest of the span"
                ));
            }
            zones.push(Zone { access, len });
        }
        let access: u32 = zones.iter().map(|z| z.access).sum();
        if access != 100 {
            return Err(format!(
                "the zones' shares of the I/Os add up to {access}%, not 100%"
            ));
        }
        let span: u64 = zones.iter().map(|z| z.len).sum();
        if !abs && span > 100 {
            return Err(format!(
                "the zones add up to {span}% of the span, more than 100%"
            ));
        }
        Ok(if abs {
            Distribution::ZonedAbs(zones)
        } else {
            Distribution::Zoned(zones)
        })
    }

    /// fio's name for the kind.
    fn kind(&self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Zipf(..) => "zipf",
            Distribution::Pareto(..) => "pareto",
            Distribution::Normal(..) => "normal",
            Distribution::Zoned(_) => "zoned",
            Distribution::ZonedAbs(_) => "zoned_abs",
        }
    }

    /// As given, in fio's syntax: `zipf:1.2`, `zipf:1.2:0.3`, `zoned:60/10:40/`,
    /// `zoned_abs:60/1048576:40/` (bytes); `random` for uniform.
    pub(crate) fn text(&self) -> String {
        let zones = |z: &[Zone]| {
            let v: Vec<String> = z
                .iter()
                .map(|z| match z.len {
                    0 => format!("{}/", z.access),
                    n => format!("{}/{n}", z.access),
                })
                .collect();
            v.join(":")
        };
        match self {
            Distribution::Uniform => "random".into(),
            Distribution::Zipf(v, c) | Distribution::Pareto(v, c) | Distribution::Normal(v, c) => {
                match c {
                    Some(c) => format!("{}:{v}:{c}", self.kind()),
                    None => format!("{}:{v}", self.kind()),
                }
            }
            Distribution::Zoned(z) | Distribution::ZonedAbs(z) => {
                format!("{}:{}", self.kind(), zones(z))
            }
        }
    }

    pub(crate) fn is_uniform(&self) -> bool {
        *self == Distribution::Uniform
    }

    /// A `zoned_abs` distribution's zones must fit in the span of `span` bytes (fio
    /// warns and runs on; iomark refuses).
    pub(crate) fn check_span(&self, span: u64) -> Result<()> {
        if let Distribution::ZonedAbs(z) = self {
            let total: u64 = z.iter().map(|z| z.len).sum();
            if total > span {
                return Err(Error::usage(format!(
                    "--random-distribution {}: the zones cover {} and the span is {}; shorten the zones or enlarge the span (--size)",
                    self.text(),
                    crate::units::fmt_size(total),
                    crate::units::fmt_size(span)
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_fio_writes_and_refuses_the_rest() {
        assert_eq!(
            Distribution::parse("zipf:1.2").unwrap(),
            Distribution::Zipf(1.2, None)
        );
        assert_eq!(
            Distribution::parse("zipf:1.2:0.3").unwrap(),
            Distribution::Zipf(1.2, Some(0.3))
        );
        assert_eq!(
            Distribution::parse("random").unwrap(),
            Distribution::Uniform
        );
        assert_eq!(Distribution::parse("normal:5").unwrap().text(), "normal:5");
        assert_eq!(
            Distribution::parse("pareto:0.2:1").unwrap().text(),
            "pareto:0.2:1"
        );
        let z = Distribution::parse("zoned:60/10:30/20:10/").unwrap();
        assert_eq!(z.text(), "zoned:60/10:30/20:10/");
        assert_eq!(
            z,
            Distribution::Zoned(vec![
                Zone {
                    access: 60,
                    len: 10
                },
                Zone {
                    access: 30,
                    len: 20
                },
                Zone { access: 10, len: 0 },
            ])
        );
        assert_eq!(
            Distribution::parse("zoned_abs:60/1m:40/2k").unwrap().text(),
            "zoned_abs:60/1048576:40/2048"
        );
        for bad in [
            "zipf",
            "zipf:0",
            "pareto:1",
            "normal:0",
            "zipf:x",
            "zipf:1.2:1.5",
            "normal:5:x",
            "zoned:50/5",
            "zoned:60/10:30/20",
            "zoned:60/60:40/60",
            "zoned:60/:40/10",
            "zoned:60.5/10:39.5/20",
            "zoned:60-10:40/",
            "zoned_abs:60/1q:40/",
            "zoned_abs:60/1m:40/",
            "zoned_abs:60/1m:40/0",
        ] {
            assert!(Distribution::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_document_form_keeps_the_old_shape_and_round_trips() {
        let old = r#"{"kind":"zipf","param":1.2}"#;
        let d: Distribution = serde_json::from_str(old).unwrap();
        assert_eq!(d, Distribution::Zipf(1.2, None));
        assert_eq!(serde_json::to_string(&d).unwrap(), old);
        for t in [
            "normal:5:0.25",
            "zoned:60/10:30/20:10/70",
            "zoned_abs:50/4096:50/1m",
        ] {
            let d = Distribution::parse(t).unwrap();
            let back: Distribution =
                serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
            assert_eq!(back, d, "{t}");
        }
    }

    #[test]
    fn zoned_abs_must_fit_the_span() {
        let d = Distribution::parse("zoned_abs:60/1m:40/2m").unwrap();
        assert!(d.check_span(3 << 20).is_ok());
        let e = d.check_span(2 << 20).unwrap_err().to_string();
        assert!(e.contains("3 MiB") && e.contains("--size"), "{e}");
        assert!(Distribution::Zipf(1.0, None).check_span(1).is_ok());
    }
}

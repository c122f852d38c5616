//! Latency of a fio job: which kind its figures are (`clat_ns` or `lat_ns`), fio's own
//! percentiles, and the merging of a job's copies (counters added, latency weighted,
//! json+ histograms merged into one).

use std::collections::BTreeMap;

use serde_json::Value;

use super::num;
use crate::results::schema::{DirStats, LatencyKind};
use crate::results::stats::LatSummary;

/// The percentiles iomark keeps, with the fio percentile each one is.
const PERCENTILES: [(&str, f64); 5] = [
    ("p50", 50.0),
    ("p90", 90.0),
    ("p99", 99.0),
    ("p999", 99.9),
    ("p9999", 99.99),
];

/// The section of a direction that the run's latency figures come from: `lat_ns` when
/// fio kept percentiles of the total latency (`lat_percentiles=1`), `clat_ns` when it
/// kept them of the completion latency (its default), `lat_ns` when it kept none.
pub(super) fn latency_kind(d: &Value) -> Option<LatencyKind> {
    if d.get("lat_ns").and_then(|l| l.get("percentile")).is_some() {
        Some(LatencyKind::Lat)
    } else if d.get("clat_ns").and_then(|l| l.get("percentile")).is_some() {
        Some(LatencyKind::Clat)
    } else {
        None
    }
}

fn section(d: &Value, kind: LatencyKind) -> &Value {
    d.get(match kind {
        LatencyKind::Lat => "lat_ns",
        LatencyKind::Clat => "clat_ns",
    })
    .unwrap_or(&Value::Null)
}

/// fio's own reported percentile `p` of a latency section.
fn fio_percentile(sec: &Value, p: f64) -> Option<u64> {
    sec.get("percentile")?
        .as_object()?
        .iter()
        .find(|(k, _)| k.parse::<f64>().is_ok_and(|x| (x - p).abs() < 1e-6))
        .and_then(|(_, v)| v.as_u64())
}

/// A json+ histogram: bin value (ns) → count.
fn bins(sec: &Value) -> Option<BTreeMap<u64, u64>> {
    let b = sec.get("bins")?.as_object()?;
    Some(
        b.iter()
            .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?)))
            .collect(),
    )
}

/// Percentile `p` of a json+ histogram, read the way fio reads its own
/// (`stat.c`, `calc_clat_percentiles`): the first bin at which the running count reaches
/// `p`% of the total. On one copy's bins this gives fio's own figures exactly.
pub(crate) fn bins_percentile(bins: &BTreeMap<u64, u64>, p: f64) -> u64 {
    let total: u64 = bins.values().sum();
    let want = p / 100.0 * total as f64;
    let mut sum = 0u64;
    for (&v, &n) in bins {
        sum += n;
        if sum as f64 >= want {
            return v;
        }
    }
    bins.keys().next_back().copied().unwrap_or(0)
}

/// The figures of one direction over a job's copies: counters added; latency of the
/// given kind merged (min, max, mean and stddev weighted by the copies' counts;
/// percentiles from the merged json+ bins when every copy has them, else the first
/// copy's). Returns the stats, the percentiles fio did not give, and whether the
/// percentiles were merged.
pub(super) fn direction(
    copies: &[&Value],
    dir: &str,
    kind: LatencyKind,
) -> (DirStats, Vec<String>, bool) {
    let ds: Vec<&Value> = copies
        .iter()
        .map(|c| c.get(dir).unwrap_or(&Value::Null))
        .collect();
    let mut out = DirStats::default();
    for d in &ds {
        out.ios += num(d, "total_ios") as u64;
        out.bytes += num(d, "io_bytes") as u64;
        out.iops += num(d, "iops");
        out.bw_bytes += num(d, "bw_bytes");
    }
    let used: Vec<&Value> = ds
        .iter()
        .map(|d| section(d, kind))
        .filter(|s| num(s, "N") > 0.0 || num(s, "max") > 0.0)
        .collect();
    let n_of = |s: &Value| num(s, "N").max(1.0);
    let total_n: f64 = used.iter().map(|s| n_of(s)).sum();
    let mut l = LatSummary::default();
    if !used.is_empty() {
        l.min = used.iter().map(|s| num(s, "min") as u64).min().unwrap_or(0);
        l.max = used.iter().map(|s| num(s, "max") as u64).max().unwrap_or(0);
        l.mean = if used.len() == 1 {
            num(used[0], "mean")
        } else {
            used.iter().map(|s| num(s, "mean") * n_of(s)).sum::<f64>() / total_n
        };
        let second: f64 = used
            .iter()
            .map(|s| (num(s, "stddev").powi(2) + num(s, "mean").powi(2)) * n_of(s))
            .sum::<f64>()
            / total_n;
        l.stddev = if used.len() == 1 {
            num(used[0], "stddev")
        } else {
            (second - l.mean * l.mean).max(0.0).sqrt()
        };
    }
    let all_bins: Option<Vec<BTreeMap<u64, u64>>> = used.iter().map(|s| bins(s)).collect();
    let merged = match all_bins {
        Some(list) if !list.is_empty() && (used.len() > 1 || list.len() == 1) => {
            let mut m = BTreeMap::new();
            for b in list {
                for (k, v) in b {
                    *m.entry(k).or_insert(0) += v;
                }
            }
            Some(m)
        }
        _ => None,
    };
    let mut missing = Vec::new();
    let first = used.first().copied().unwrap_or(&Value::Null);
    let mut merged_used = false;
    for (name, p) in PERCENTILES {
        let v = match (&merged, used.len() > 1) {
            (Some(m), true) => {
                merged_used = true;
                Some(bins_percentile(m, p))
            }
            (m, _) => {
                fio_percentile(first, p).or_else(|| m.as_ref().map(|m| bins_percentile(m, p)))
            }
        };
        let v = v.unwrap_or_else(|| {
            if out.ios > 0 {
                missing.push(name.to_string());
            }
            0
        });
        match name {
            "p50" => l.p50 = v,
            "p90" => l.p90 = v,
            "p99" => l.p99 = v,
            "p999" => l.p999 = v,
            _ => l.p9999 = v,
        }
    }
    out.lat_ns = l;
    (out, missing, merged_used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_from_bins_as_fio() {
        let b: BTreeMap<u64, u64> = [(10, 50), (20, 40), (30, 9), (40, 1)].into();
        assert_eq!(bins_percentile(&b, 50.0), 10);
        assert_eq!(bins_percentile(&b, 90.0), 20);
        assert_eq!(bins_percentile(&b, 99.0), 30);
        assert_eq!(bins_percentile(&b, 99.9), 40);
    }
}

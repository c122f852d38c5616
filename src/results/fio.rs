//! Reading results for reports: iomark's own documents, and fio's output mapped onto the
//! same structures so fio's results sit in the same tables and charts. Reads files only.
//!
//! What fio writes is taken as fio printed it: IOPS, bandwidth, I/O counts and runtime per
//! job. Accepted: `--output-format=json` and `json+`, either mixed with `normal` or `terse`
//! text (`json,normal`: the text is read for what the JSON lacks: how many jobs a
//! `group_reporting` entry covers, and fio's error text), several JSON reports in one file
//! (`--status-interval`: the last one, which covers the whole run), `--client` output
//! (`client_stats`; the "All clients" total is not added again) and terse output alone
//! (`fio_terse.rs`). `docs/fio.md` lists every difference in meaning.
//!
//! Latency: all of a run's latency figures are of one kind, the one fio's percentiles
//! are of: completion latency (`clat_ns`) by default, total latency (`lat_ns`) with
//! `lat_percentiles=1`; `Run::latency_kind` says which. Percentiles fio did not report
//! are listed in `FioJob::missing_percentiles` (shown as "n/a"), not invented.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::plan::data::DataSpec;
use crate::plan::spec::{EngineKind, Rw, Spec};
use crate::results::env::Host;
use crate::results::schema::{
    Cpu, DirStats, Document, FioJob, LatencyKind, Repetition, Run, Status, Summary, TargetDesc,
    TargetKind,
};
use crate::results::stats::LatSummary;

/// Loads an iomark results document or a fio output file (JSON, json+, either with
/// normal or terse text, several status reports, client output, or terse alone).
pub(crate) fn load(path: &Path) -> Result<Document> {
    let name = path.display();
    let text = crate::results::schema::read_document(path)?;
    let (values, rest) = json_values(&text);
    if values.is_empty() {
        if let Some(doc) = crate::results::fio_terse::parse(&text) {
            return doc.map_err(|e| Error::document(format!("{name}: {e}")));
        }
        // Report why the first object did not parse, as before.
        let start = text.find('{').unwrap_or(0);
        let e = serde_json::from_str::<Value>(&text[start..])
            .err()
            .map_or_else(String::new, |e| format!(" ({e})"));
        return Err(Error::document(format!(
            "{name} is not JSON{e}, nor fio terse output; give an iomark results file or fio --output-format=json output"
        )));
    }
    let (start, end, first) = &values[0];
    if first.get("schema").is_some() {
        return Document::parse(path, &text[*start..*end]);
    }
    let reports: Vec<&Value> = values
        .iter()
        .map(|(_, _, v)| v)
        .filter(|v| v.get("fio version").is_some())
        .collect();
    let Some(last) = reports.last() else {
        return Err(Error::document(format!(
            "{name} is JSON but neither an iomark results document (no \"schema\") nor fio output (no \"fio version\")"
        )));
    };
    let info = TextInfo::read(&rest);
    let mut doc =
        from_fio_with(last, &info).map_err(|e| Error::document(format!("{name}: {e}")))?;
    if reports.len() > 1 {
        for r in &mut doc.runs {
            r.warnings.push(format!(
                "the file holds {} fio reports (--status-interval): the last one, which covers the whole run, is imported",
                reports.len()
            ));
        }
    }
    Ok(doc)
}

/// Every JSON object that starts a line of `text` (byte range and value), and the text
/// around them: fio prints warnings, `normal` or `terse` text before or after its JSON,
/// and `--status-interval` prints one JSON report per interval.
fn json_values(text: &str) -> (Vec<(usize, usize, Value)>, String) {
    let mut values = Vec::new();
    let mut rest = String::new();
    let mut pos = 0;
    while pos < text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        if text[pos..].starts_with('{') {
            let mut it = serde_json::Deserializer::from_str(&text[pos..]).into_iter::<Value>();
            match it.next() {
                Some(Ok(v)) => {
                    let end = pos + it.byte_offset();
                    values.push((pos, end, v));
                    pos = end;
                    continue;
                }
                // An object that never closes runs to the end of the text: every later
                // start was read as part of it, and trying each would take time
                // quadratic in the file's size.
                Some(Err(e)) if e.is_eof() => {
                    rest.push_str(&text[pos..]);
                    break;
                }
                // No object starts before the line where this one went wrong (each
                // would be nested in it): go on from that line, so each line is tried
                // about once.
                Some(Err(e)) if e.line() > 1 => {
                    let skip = text[pos..]
                        .match_indices('\n')
                        .nth(e.line() - 2)
                        .map_or(text.len(), |(i, _)| pos + i + 1);
                    rest.push_str(&text[pos..skip]);
                    pos = skip;
                    continue;
                }
                _ => {}
            }
        }
        rest.push_str(&text[pos..line_end]);
        pos = line_end;
    }
    (values, rest)
}

/// What fio's `normal` text beside the JSON says that the JSON does not.
#[derive(Debug, Default)]
pub(crate) struct TextInfo {
    /// Jobs per group entry, from "NAME: (groupid=G, jobs=N): err=…".
    pub jobs: BTreeMap<u64, u32>,
    /// The jobs of each group in order, from the "NAME: (g=G): rw=…" lines.
    pub members: BTreeMap<u64, Vec<String>>,
    /// fio's error text per (group, job name): "err=22 (file:…, error=Invalid argument)".
    pub errors: BTreeMap<(u64, String), String>,
}

impl TextInfo {
    pub(crate) fn read(text: &str) -> TextInfo {
        let mut info = TextInfo::default();
        for line in text.lines() {
            // Client output prefixes lines with "<host> ".
            let line = match line.strip_prefix('<') {
                Some(l) => l.split_once("> ").map_or(l, |(_, r)| r),
                None => line,
            };
            if let Some((name, rest)) = line.split_once(": (g=") {
                let Some(g) = rest.split(')').next().and_then(|g| g.parse().ok()) else {
                    continue;
                };
                let m = info.members.entry(g).or_default();
                if !m.iter().any(|x| x == name) {
                    m.push(name.to_string());
                }
            } else if let Some((name, rest)) = line.split_once(": (groupid=") {
                let mut it = rest.splitn(2, ", jobs=");
                let Some(g) = it.next().and_then(|g| g.parse::<u64>().ok()) else {
                    continue;
                };
                let after = it.next().unwrap_or("");
                if let Some(n) = after.split(')').next().and_then(|n| n.parse().ok()) {
                    info.jobs.insert(g, n);
                }
                if let Some(e) = after.split_once("err=").map(|(_, e)| e.trim_start())
                    && !e.starts_with("0:")
                {
                    let e = e.rsplit_once("): pid=").map_or(e, |(x, _)| &e[..=x.len()]);
                    info.errors.insert(
                        (g, name.to_string()),
                        format!("err={}", e.trim_end_matches(':')),
                    );
                }
            }
        }
        info
    }
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

/// The options of one job: its own, else the global ones.
struct Opts<'a> {
    job: &'a Value,
    global: &'a Value,
}

impl<'a> Opts<'a> {
    fn get(&self, key: &str) -> Option<&'a str> {
        self.job
            .get("job options")
            .and_then(|o| o.get(key))
            .or_else(|| self.global.get(key))
            .and_then(Value::as_str)
    }

    /// A boolean option: set and not "0"/"false".
    fn flag(&self, key: &str) -> Option<bool> {
        self.get(key)
            .map(|v| !matches!(v, "0" | "false" | "no" | "off"))
    }
}

/// fio's size strings → bytes, the way fio reads them (`parse.c`, `get_mult_bytes`):
/// the suffix is case-insensitive; `k`, `kb`, `m`, `mb`, … are powers of `kb_base`
/// (1024 unless the job sets `kb_base=1000`), and `kib`, `mib`, … are powers of the
/// other base: with the default, `4KB` is 4096 and `4KiB` 4000. A bare number is bytes;
/// `b` is bytes. `None` for anything else (a percentage, a range).
pub(crate) fn fio_size(s: &str, kb_base: u64) -> Option<u64> {
    let s = s.trim();
    let digits = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (n, suffix) = s.split_at(digits);
    let n: f64 = n.parse().ok()?;
    let suffix = suffix.trim().to_ascii_lowercase();
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (base, pow) = match suffix.as_str() {
        "" | "b" => (1, 0),
        _ => {
            let pow = match suffix.as_bytes()[0] {
                b'k' => 1,
                b'm' => 2,
                b'g' => 3,
                b't' => 4,
                b'p' => 5,
                _ => return None,
            };
            match &suffix[1..] {
                "" | "b" => (kb_base, pow),
                "ib" => (other, pow),
                _ => return None,
            }
        }
    };
    Some((n * (base as f64).powi(pow)).round() as u64)
}

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
fn latency_kind(d: &Value) -> Option<LatencyKind> {
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
fn direction(copies: &[&Value], dir: &str, kind: LatencyKind) -> (DirStats, Vec<String>, bool) {
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

/// Maps fio's JSON output onto a results document: one run per fio job.
#[cfg(test)]
pub(crate) fn from_fio(v: &Value) -> std::result::Result<Document, String> {
    from_fio_with(v, &TextInfo::default())
}

pub(crate) fn from_fio_with(v: &Value, info: &TextInfo) -> std::result::Result<Document, String> {
    let jobs = v
        .get("jobs")
        .or_else(|| v.get("client_stats"))
        .and_then(Value::as_array)
        .ok_or("fio output without \"jobs\" or \"client_stats\"")?;
    let global = v.get("global options").cloned().unwrap_or(Value::Null);
    let mut doc = fio_document(v);
    let entries = group_copies(jobs);
    let groups: std::collections::BTreeSet<u64> = entries.iter().map(|(k, _)| k.1).collect();
    for (key, copies) in &entries {
        let opts = Opts {
            job: copies[0],
            global: &global,
        };
        doc.runs.push(job_run(
            key,
            copies,
            &opts,
            info,
            groups.len() > 1,
            &doc.tool.version,
        ));
    }
    Ok(doc)
}

/// An empty document for fio's output: the tool, its version and the start time.
pub(crate) fn fio_document(v: &Value) -> Document {
    let mut doc = Document::new(Host {
        hostname: "fio".into(),
        kernel: String::new(),
        cpu: String::new(),
        cores: 0,
        memory_bytes: 0,
    });
    doc.tool.name = "fio".into();
    doc.tool.version = v
        .get("fio version")
        .and_then(Value::as_str)
        .unwrap_or("")
        .into();
    if let Some(t) = v.get("time").and_then(Value::as_str) {
        doc.started = t.to_string();
    }
    doc
}

/// A job's key: the client (`--client` output), its group and its name.
type JobKey = (Option<String>, u64, String);

/// fio's job entries keyed by client, group and name, in order of first appearance.
/// Without group_reporting fio writes one entry per copy of a job (numjobs): they are one
/// workload. Jobs with one name in different groups (stonewall) are different runs. The
/// "All clients" entry of `--client` output is the sum of the others and is left out.
fn group_copies(jobs: &[Value]) -> Vec<(JobKey, Vec<&Value>)> {
    let mut groups: Vec<(JobKey, Vec<&Value>)> = Vec::new();
    for job in jobs {
        let name = job
            .get("jobname")
            .and_then(Value::as_str)
            .unwrap_or("fio job")
            .to_string();
        if name == "All clients" && job.get("hostname").is_some() {
            continue;
        }
        let host = job.get("hostname").and_then(Value::as_str).map(|h| {
            match job.get("port").and_then(Value::as_u64) {
                Some(p) => format!("{h}:{p}"),
                None => h.to_string(),
            }
        });
        let key = (host, num(job, "groupid") as u64, name);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(job),
            None => groups.push((key, vec![job])),
        }
    }
    groups
}

/// fio's `rw` as iomark's pattern; `None` for the trim modes iomark does not have.
fn job_rw(rw_s: &str) -> Option<Rw> {
    // "randread:8" (fio's sequential-skip suffix) names the same pattern.
    let rw_s = rw_s.split(':').next().unwrap_or(rw_s);
    Some(match rw_s {
        "read" => Rw::Read,
        "write" => Rw::Write,
        "randread" => Rw::RandRead,
        "randwrite" => Rw::RandWrite,
        "rw" | "readwrite" => Rw::Rw,
        "randrw" => Rw::RandRw,
        _ => return None,
    })
}

/// The block sizes as fio was told (label) and the one size `spec.bs` keeps: the
/// average transfer (bytes ÷ I/Os of the direction that did most) when sizes vary
/// (`bssplit`, `bsrange`, read,write pairs), else the size.
fn job_bs(opts: &Opts, kb: u64, read: &DirStats, write: &DirStats) -> (String, u64) {
    let main = if read.ios >= write.ios { read } else { write };
    let average = (main.ios > 0).then(|| (main.bytes as f64 / main.ios as f64).round() as u64);
    let avg_label = |a: Option<u64>| {
        a.map_or(String::new(), |a| {
            format!(" (average {})", crate::units::fmt_size_short(a))
        })
    };
    if let Some(split) = opts.get("bssplit") {
        return (
            format!("bssplit {split}{}", avg_label(average)),
            average.unwrap_or(4096),
        );
    }
    if let Some(range) = opts.get("bsrange").or_else(|| opts.get("blocksize_range")) {
        return (
            format!("bsrange {range}{}", avg_label(average)),
            average.unwrap_or(4096),
        );
    }
    let given = opts.get("bs").or_else(|| opts.get("blocksize"));
    let list: Vec<Option<u64>> = given
        .map(|s| s.split(',').map(|x| fio_size(x, kb)).collect())
        .unwrap_or_default();
    let r = list.first().copied().flatten().unwrap_or(4096);
    let w = list.get(1).copied().flatten().unwrap_or(r);
    if r != w {
        let pair = format!(
            "{},{}",
            crate::units::fmt_size_short(r),
            crate::units::fmt_size_short(w)
        );
        let bs = if read.ios >= write.ios && (read.ios > 0 || write.ios == 0) {
            r
        } else {
            w
        };
        return (pair, bs);
    }
    (crate::units::fmt_size_short(r), r)
}

/// The workload of a job, from its options (the job's own, else the global ones).
fn job_spec(name: &str, opts: &Opts, rw: Option<Rw>, bs: u64, kb: u64) -> Spec {
    let rw = rw.unwrap_or(Rw::Read);
    let mut spec = Spec::new(opts.get("filename").unwrap_or(name));
    spec.rw = rw;
    spec.rwmixread = opts
        .get("rwmixread")
        .and_then(|s| s.parse().ok())
        .or_else(|| {
            opts.get("rwmixwrite")
                .and_then(|s| s.parse::<u8>().ok())
                .map(|w| 100u8.saturating_sub(w))
        })
        .unwrap_or(50);
    spec.rwmixread = rw.read_pct(spec.rwmixread);
    spec.bs = bs;
    spec.qd = opts
        .get("iodepth")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    spec.jobs = opts
        .get("numjobs")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    spec.size = opts.get("size").and_then(|s| fio_size(s, kb));
    spec.offset = opts
        .get("offset")
        .and_then(|s| fio_size(s, kb))
        .unwrap_or(0);
    // fio says direct I/O two ways: direct=1, or buffered=0.
    spec.direct = opts.flag("direct") == Some(true) || opts.flag("buffered") == Some(false);
    let engine = opts.get("ioengine").unwrap_or("psync");
    spec.engine = match engine {
        "io_uring" => EngineKind::IoUring,
        "null" => EngineKind::Null,
        _ => EngineKind::Psync,
    };
    spec.runtime_s = opts
        .get("runtime")
        .and_then(|s| crate::units::parse_duration(s).ok())
        .map(|d| d.as_secs_f64());
    spec.data = DataSpec::default();
    spec
}

/// fio's error for a job in words: fio's own text when its normal output is in the
/// file, else the system's name for the error number.
fn error_text(code: i64, key: &JobKey, info: &TextInfo) -> String {
    let text = info.errors.get(&(key.1, key.2.clone())).cloned();
    let desc = i32::try_from(code).map_or(String::new(), |c| {
        let s = std::io::Error::from_raw_os_error(c).to_string();
        s.split(" (os error").next().unwrap_or(&s).to_string()
    });
    match text {
        Some(t) => format!("fio error {code} ({desc}): {t}"),
        None => format!("fio error {code}: {desc}"),
    }
}

/// One run of the document for a fio job (all its copies).
fn job_run(
    key: &JobKey,
    copies: &[&Value],
    opts: &Opts,
    info: &TextInfo,
    several_groups: bool,
    version: &str,
) -> Run {
    let (host, group, jobname) = key;
    let job = copies[0];
    let rw_s = opts
        .get("rw")
        .or_else(|| opts.get("readwrite"))
        .unwrap_or("read");
    let rw = job_rw(rw_s);
    let kb = match opts.get("kb_base") {
        Some("1000") => 1000,
        _ => 1024,
    };
    let kind = ["read", "write"]
        .iter()
        .filter_map(|d| job.get(*d))
        .filter(|d| num(d, "total_ios") > 0.0)
        .find_map(latency_kind)
        .unwrap_or(LatencyKind::Lat);
    let (mut read, mut missing, merged_r) = direction(copies, "read", kind);
    let (write, missing_w, merged_w) = direction(copies, "write", kind);
    for m in missing_w {
        if !missing.contains(&m) {
            missing.push(m);
        }
    }
    let (bs_label, bs) = job_bs(opts, kb, &read, &write);
    let mut spec = job_spec(jobname, opts, rw, bs, kb);
    let mut warnings = vec![format!(
        "imported from fio {version}: every latency figure is {}",
        kind.describe()
    )];
    let mut error = None;

    // A verify job's reads are its verify phase, not part of the workload.
    let verifies = opts
        .get("verify")
        .is_some_and(|v| !matches!(v, "0" | "null" | ""))
        && opts.flag("do_verify") != Some(false)
        && matches!(rw, Some(Rw::Write | Rw::RandWrite));
    let mut runtime_dirs = ["read", "write"];
    if verifies && read.ios > 0 {
        warnings.push(format!(
            "fio verified this job's writes by reading them back: the verify phase ({} reads, {:.0} IOPS, p99 {} ns) is not part of the figures",
            read.ios, read.iops, read.lat_ns.p99
        ));
        read = DirStats::default();
        runtime_dirs = ["write", "write"];
    }

    // group_reporting: one entry stands for every job of the group.
    let group_reporting =
        opts.flag("group_reporting") == Some(true) || info.jobs.contains_key(group);
    let members = info.members.get(group).cloned().unwrap_or_default();
    let n_jobs = info.jobs.get(group).copied();
    let numjobs = spec.jobs;
    let mixed_dirs = match rw {
        Some(r) => {
            (r.read_pct(50) == 0 && read.ios > 0 && !verifies)
                || (r.read_pct(50) == 100 && write.ios > 0)
        }
        None => false,
    };
    // A job whose rw does not do a direction it did I/O in can only be a group: fio's
    // `--group_reporting` on its command line is not in its JSON options.
    let different =
        members.len() > 1 || (group_reporting && n_jobs.is_some_and(|n| n > numjobs)) || mixed_dirs;
    let mut name = jobname.clone();
    let mut group_members = Vec::new();
    if different {
        let count = n_jobs.map_or(String::new(), |n| format!("{n} "));
        let names = if members.is_empty() {
            format!("{jobname}, …")
        } else {
            members.join(", ")
        };
        name = format!("group of {count}jobs: {names}");
        group_members = members.clone();
        warnings.push(format!(
            "fio's group_reporting merged different jobs into this entry ({}): the figures are the group's; rw, bs and the other options shown are only the last job's",
            if members.is_empty() { "fio's JSON does not say which; its normal output does".to_string() } else { members.join(", ") }
        ));
    } else if group_reporting {
        warnings.push("fio's group_reporting: the figures are the whole group's".into());
    }

    let status = if rw.is_none() {
        error = Some(format!(
            "unsupported: rw={rw_s} (iomark has no trim workload); fio measured {} trims, {:.0} IOPS",
            num(job.get("trim").unwrap_or(&Value::Null), "total_ios"),
            num(job.get("trim").unwrap_or(&Value::Null), "iops")
        ));
        Status::Unsupported
    } else if num(job, "error") != 0.0 {
        error = Some(error_text(num(job, "error") as i64, key, info));
        Status::Failed
    } else {
        Status::Complete
    };

    let merged = merged_r || merged_w;
    let percentiles = if copies.len() > 1 {
        if merged {
            "merged".to_string()
        } else {
            warnings.push(format!(
                "fio reported {} copies of this job separately (numjobs without group_reporting): IOPS and bytes are their sum, min/mean/max merged, but the percentiles are one copy's (fio's json+ output has the histograms to merge)",
                copies.len()
            ));
            "one copy".to_string()
        }
    } else {
        "fio".to_string()
    };
    if copies.len() > 1 && merged {
        warnings.push(format!(
            "fio reported {} copies of this job separately: counters added, percentiles from their json+ histograms merged",
            copies.len()
        ));
    }
    if !missing.is_empty() {
        warnings.push(format!(
            "fio did not report {} (clat_percentiles=0 or a percentile_list without them): shown as n/a",
            missing.join(", ")
        ));
    }

    let elapsed_s = copies
        .iter()
        .map(|c| {
            runtime_dirs
                .iter()
                .map(|d| num(c.get(*d).unwrap_or(&Value::Null), "runtime"))
                .fold(0.0, f64::max)
        })
        .fold(0.0, f64::max)
        .max(if verifies {
            0.0
        } else {
            num(job, "job_runtime")
        })
        / 1000.0;
    let cpu_s = |k: &str| {
        copies
            .iter()
            .map(|c| {
                let rt = num(c, "job_runtime") / 1000.0;
                num(c, k) / 100.0 * if rt > 0.0 { rt } else { elapsed_s }
            })
            .sum::<f64>()
    };
    let total = read.ios + write.ios;
    let rep = Repetition {
        index: 1,
        status: if status == Status::Complete {
            Status::Complete
        } else {
            Status::Interrupted
        },
        elapsed_s,
        read,
        write,
        fsyncs: 0,
        cpu: Cpu {
            user_s: cpu_s("usr_cpu"),
            sys_s: cpu_s("sys_cpu"),
            per_io_ns: if total > 0 {
                (cpu_s("usr_cpu") + cpu_s("sys_cpu")) * 1e9 / total as f64
            } else {
                0.0
            },
        },
        device: None,
        series: Vec::new(),
        data: None,
        verify: None,
        page_cache_hit_pct: None,
    };
    let reps = if status == Status::Unsupported {
        Vec::new()
    } else {
        vec![rep]
    };
    let mut where_ = vec!["fio".to_string()];
    if several_groups {
        where_.push(format!("group {group}"));
    }
    if let Some(h) = host {
        where_.push(format!("host {h}"));
    }
    spec.engine_note = Some(format!(
        "imported from fio {version}: ioengine={}",
        opts.get("ioengine").unwrap_or("psync")
    ));
    let format = if job
        .get("read")
        .and_then(|d| d.get("clat_ns").or_else(|| d.get("lat_ns")))
        .and_then(|s| s.get("bins"))
        .is_some()
    {
        "json+"
    } else {
        "json"
    };
    Run {
        name: format!("{name} ({})", where_.join(", ")),
        status,
        target: TargetDesc {
            kind: TargetKind::File,
            path: spec.target.clone(),
            offset: spec.offset,
            span_bytes: spec.size.unwrap_or(0),
            align: 1,
            created: false,
            device: None,
            filesystem: None,
        },
        summary: Summary::of(&reps),
        repetitions: reps,
        warnings,
        error,
        repetitions_planned: 1,
        cache_bound: false,
        study: None,
        write_amplification: None,
        write_amplification_sources: Vec::new(),
        latency_kind: kind,
        fio: Some(FioJob {
            jobname: jobname.clone(),
            groupid: *group,
            host: host.clone(),
            ioengine: opts.get("ioengine").unwrap_or("psync").to_string(),
            rw: rw_s.to_string(),
            bs: bs_label,
            format: format.into(),
            group_members,
            copies: copies.len() as u32,
            percentiles,
            missing_percentiles: missing,
            error: num(job, "error") as i64,
        }),
        spec,
    }
}

/// Loads every input (iomark or fio output), labelled by file name.
pub fn load_all(files: &[std::path::PathBuf]) -> Result<Vec<(String, Document)>> {
    files
        .iter()
        .map(|f| {
            let label = f.file_name().map_or_else(
                || f.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            load(f).map(|d| (label, d))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_a_minimal_fio_job() {
        let v: Value = serde_json::from_str(
            r#"{"fio version": "fio-3.33", "global options": {"bs": "4k"}, "jobs": [{
                "jobname": "rr", "error": 0, "usr_cpu": 10.0, "sys_cpu": 30.0, "job_runtime": 2000,
                "job options": {"rw": "randread", "iodepth": "32", "direct": "1", "ioengine": "io_uring"},
                "read": {"io_bytes": 8192, "bw_bytes": 4096, "iops": 1.0, "runtime": 2000, "total_ios": 2,
                         "lat_ns": {"min": 10, "max": 90, "mean": 50.0, "stddev": 5.0, "N": 2},
                         "clat_ns": {"min": 8, "max": 88, "mean": 45.0, "stddev": 5.0, "N": 2,
                                     "percentile": {"50.000000": 48, "90.000000": 80, "99.000000": 88, "99.900000": 88, "99.990000": 88}}},
                "write": {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}}]}"#,
        )
        .unwrap();
        let d = from_fio(&v).unwrap();
        let r = &d.runs[0];
        assert_eq!(
            (r.spec.rw, r.spec.bs, r.spec.qd, r.spec.direct),
            (Rw::RandRead, 4096, 32, true)
        );
        let rep = &r.repetitions[0];
        // Percentiles are clat, so every latency figure is clat.
        assert_eq!(r.latency_kind, LatencyKind::Clat);
        assert_eq!(
            (
                rep.read.ios,
                rep.read.lat_ns.p50,
                rep.read.lat_ns.p99,
                rep.read.lat_ns.min,
                rep.read.lat_ns.max
            ),
            (2, 48, 88, 8, 88)
        );
        assert_eq!(rep.elapsed_s, 2.0);
        assert!((rep.cpu.user_s - 0.2).abs() < 1e-9);
    }

    #[test]
    fn fio_size_units() {
        // fio's default kb_base=1024: k/KB are 1024, KiB is 1000 (fio's own inversion).
        for (s, want) in [
            ("4k", 4096),
            ("4KB", 4096),
            ("4KiB", 4000),
            ("4kib", 4000),
            ("64kb", 65536),
            ("1m", 1 << 20),
            ("1MiB", 1_000_000),
            ("512", 512),
            ("512b", 512),
            ("2g", 2 << 30),
        ] {
            assert_eq!(fio_size(s, 1024), Some(want), "{s}");
        }
        assert_eq!(fio_size("4k", 1000), Some(4000));
        assert_eq!(fio_size("4KiB", 1000), Some(4096));
        assert_eq!(fio_size("50%", 1024), None);
        assert_eq!(fio_size("4x", 1024), None);
    }

    #[test]
    fn percentiles_from_bins_as_fio() {
        let b: BTreeMap<u64, u64> = [(10, 50), (20, 40), (30, 9), (40, 1)].into();
        assert_eq!(bins_percentile(&b, 50.0), 10);
        assert_eq!(bins_percentile(&b, 90.0), 20);
        assert_eq!(bins_percentile(&b, 99.0), 30);
        assert_eq!(bins_percentile(&b, 99.9), 40);
    }

    #[test]
    fn finds_json_between_text_in_linear_time() {
        let (v, rest) = json_values("warning\n{\"a\": 1}\ntext {\n{\"b\": 2}\n");
        assert_eq!(v.len(), 2);
        assert_eq!(rest, "warning\n\ntext {\n\n");
        // Lines that open objects that never close: one attempt, not one per line.
        let t = "{\"x\": [\n".repeat(100_000);
        let start = std::time::Instant::now();
        assert!(json_values(&t).0.is_empty());
        assert!(start.elapsed().as_secs_f64() < 2.0);
    }

    #[test]
    fn reads_fio_text_beside_the_json() {
        let t = "first: (g=0): rw=randread, bs=(R) 4096B-4096B\nsecond: (g=0): rw=randwrite\n\
                 first: (groupid=0, jobs=2): err= 0: pid=1: Tue\n\
                 e: (groupid=1, jobs=1): err=22 (file:io_u.c:1876, func=io_u error, error=Invalid argument): pid=13213: Tue\n";
        let i = TextInfo::read(t);
        assert_eq!(i.jobs.get(&0), Some(&2));
        assert_eq!(i.members[&0], ["first", "second"]);
        assert_eq!(
            i.errors[&(1, "e".to_string())],
            "err=22 (file:io_u.c:1876, func=io_u error, error=Invalid argument)"
        );
    }
}

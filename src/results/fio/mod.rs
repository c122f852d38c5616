//! Reading results for reports: iomark's own documents, and fio's output mapped onto the
//! same structures so fio's results sit in the same tables and charts. Reads files only.
//!
//! What fio writes is taken as fio printed it: IOPS, bandwidth, I/O counts and runtime per
//! job. Accepted: `--output-format=json` and `json+`, either mixed with `normal` or `terse`
//! text (`json,normal`: the text is read for what the JSON lacks: how many jobs a
//! `group_reporting` entry covers, and fio's error text), several JSON reports in one file
//! (`--status-interval`: the last one, which covers the whole run), `--client` output
//! (`client_stats`; the "All clients" total is not added again) and terse output alone
//! (`terse.rs`). `docs/fio.md` lists every difference in meaning.
//!
//! Latency: all of a run's latency figures are of one kind, the one fio's percentiles
//! are of: completion latency (`clat_ns`) by default, total latency (`lat_ns`) with
//! `lat_percentiles=1`; `Run::latency_kind` says which. Percentiles fio did not report
//! are listed in `FioJob::missing_percentiles` (shown as "n/a"), not invented.

mod latency;
mod options;
mod run;
mod terse;
mod text;

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::results::env::Host;
use crate::results::schema::Document;
use text::TextInfo;

/// Loads an iomark results document or a fio output file (JSON, json+, either with
/// normal or terse text, several status reports, client output, or terse alone).
pub(crate) fn load(path: &Path) -> Result<Document> {
    let name = path.display();
    let text = crate::results::schema::read_document(path)?;
    let (values, rest) = json_values(&text);
    if values.is_empty() {
        if let Some(doc) = terse::parse(&text) {
            return doc.map_err(|e| Error::document(format!("{name}: {e}")));
        }
        if serde_json::from_str::<Value>(&text).is_ok() {
            // Valid JSON, but no object: `[]`, a number, a string.
            return Err(neither(&name));
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
        return Err(neither(&name));
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

/// A JSON file that is neither tool's document.
fn neither(name: &impl std::fmt::Display) -> Error {
    Error::document(format!(
        "{name} is JSON but neither an iomark results document (no \"schema\") nor fio output (no \"fio version\"); give an iomark results file or fio --output-format=json output"
    ))
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
        doc.runs.push(run::job_run(
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
    use crate::plan::spec::Rw;
    use crate::results::schema::LatencyKind;

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
}

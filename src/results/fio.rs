//! Reading results for reports: iomark's own documents, and fio's `--output-format=json`
//! (or `json+`) output, mapped onto the same structures so fio's results sit in the same
//! tables and charts. fio's figures are taken as fio printed them: IOPS, bandwidth, I/O
//! counts and runtime per job; latency min/mean/max from `lat_ns` (submission to
//! completion, as iomark measures) and percentiles from `clat_ns` (fio keeps percentiles
//! only for completion latency). Reads files only.

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::plan::data::DataSpec;
use crate::plan::spec::{EngineKind, Rw, Spec};
use crate::results::env::Host;
use crate::results::schema::TargetKind;
use crate::results::schema::{
    Cpu, DirStats, Document, Repetition, Run, Status, Summary, TargetDesc,
};
use crate::results::stats::LatSummary;

/// Loads an iomark results document or a fio JSON output file.
pub(crate) fn load(path: &Path) -> Result<Document> {
    let name = path.display();
    let text = crate::results::schema::read_document(path)?;
    // fio may print warnings before the JSON; start at the first brace.
    let json_start = text.find('{').unwrap_or(0);
    let v: Value = serde_json::from_str(&text[json_start..])
        .map_err(|e| Error::document(format!("{name} is not JSON ({e}); give an iomark results file or fio --output-format=json output")))?;
    if v.get("schema").is_some() {
        return Document::parse(path, &text[json_start..]);
    }
    if v.get("fio version").is_some() {
        return from_fio(&v).map_err(|e| Error::document(format!("{name}: {e}")));
    }
    Err(Error::document(format!(
        "{name} is JSON but neither an iomark results document (no \"schema\") nor fio output (no \"fio version\")"
    )))
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn opt<'a>(job: &'a Value, global: &'a Value, key: &str) -> Option<&'a str> {
    job.get("job options")
        .and_then(|o| o.get(key))
        .or_else(|| global.get(key))
        .and_then(Value::as_str)
}

fn dir_stats(d: &Value) -> DirStats {
    let lat = d.get("lat_ns").cloned().unwrap_or(Value::Null);
    let clat = d.get("clat_ns").cloned().unwrap_or(Value::Null);
    let pct = |p: &str| -> u64 {
        clat.get("percentile")
            .and_then(|m| m.as_object())
            .and_then(|m| {
                m.iter()
                    .find(|(k, _)| {
                        k.parse::<f64>()
                            .ok()
                            .is_some_and(|x| (x - p.parse::<f64>().unwrap_or(0.0)).abs() < 1e-6)
                    })
                    .and_then(|(_, v)| v.as_u64())
            })
            .unwrap_or(0)
    };
    DirStats {
        ios: num(d, "total_ios") as u64,
        bytes: num(d, "io_bytes") as u64,
        iops: num(d, "iops"),
        bw_bytes: num(d, "bw_bytes"),
        lat_ns: LatSummary {
            min: num(&lat, "min") as u64,
            mean: num(&lat, "mean"),
            stddev: num(&lat, "stddev"),
            p50: pct("50"),
            p90: pct("90"),
            p99: pct("99"),
            p999: pct("99.9"),
            p9999: pct("99.99"),
            max: num(&lat, "max") as u64,
        },
    }
}

/// fio's size strings ("4k", "128KiB", "1m") → bytes.
fn fio_size(s: &str) -> Option<u64> {
    crate::units::parse_size(s).ok()
}

/// Maps fio's JSON output onto a results document: one run per fio job entry.
pub(crate) fn from_fio(v: &Value) -> std::result::Result<Document, String> {
    let jobs = v
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or("fio output without \"jobs\"")?;
    let global = v.get("global options").cloned().unwrap_or(Value::Null);
    let mut doc = fio_document(v);
    for (name, clones) in &group_clones(jobs) {
        let spec = job_spec(name, clones[0], &global, &doc.tool.version)?;
        doc.runs.push(job_run(name, clones, spec));
    }
    Ok(doc)
}

/// An empty document for fio's output: the tool, its version and the start time.
fn fio_document(v: &Value) -> Document {
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

/// fio's job entries grouped by job name, in order of first appearance. Without
/// group_reporting fio writes one entry per clone of a job (numjobs): they are one
/// workload, so their counters are added up (latency figures: the first clone's).
fn group_clones(jobs: &[Value]) -> Vec<(String, Vec<&Value>)> {
    let mut groups: Vec<(String, Vec<&Value>)> = Vec::new();
    for job in jobs {
        let name = job
            .get("jobname")
            .and_then(Value::as_str)
            .unwrap_or("fio job")
            .to_string();
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(job),
            None => groups.push((name, vec![job])),
        }
    }
    groups
}

/// The job's access pattern from `rw` (or `readwrite`).
fn job_rw(name: &str, job: &Value, global: &Value) -> std::result::Result<Rw, String> {
    let rw_s = opt(job, global, "rw")
        .or_else(|| opt(job, global, "readwrite"))
        .unwrap_or("read");
    // "randread:8" (fio's sequential-skip suffix) names the same pattern.
    let rw_s = rw_s.split(':').next().unwrap_or(rw_s);
    Ok(match rw_s {
        "read" => Rw::Read,
        "write" => Rw::Write,
        "randread" => Rw::RandRead,
        "randwrite" => Rw::RandWrite,
        "rw" | "readwrite" => Rw::Rw,
        "randrw" => Rw::RandRw,
        other => return Err(format!("job {name}: rw={other} has no iomark equivalent")),
    })
}

/// The job's block size. "bs=4k,64k" gives reads and writes their own sizes: keep the one
/// that ran.
fn job_bs(job: &Value, global: &Value, rw: Rw) -> u64 {
    let bs_list: Vec<u64> = opt(job, global, "bs")
        .or_else(|| opt(job, global, "blocksize"))
        .map(|s| s.split(',').filter_map(fio_size).collect())
        .unwrap_or_default();
    match (bs_list.as_slice(), rw.read_pct(50)) {
        ([r, w, ..], 0) => {
            let _ = r;
            *w
        }
        ([r, ..], _) => *r,
        _ => 4096,
    }
}

/// The workload of a job, from its options (the job's own, else the global ones).
fn job_spec(
    name: &str,
    job: &Value,
    global: &Value,
    version: &str,
) -> std::result::Result<Spec, String> {
    let rw = job_rw(name, job, global)?;
    let mut spec = Spec::new(opt(job, global, "filename").unwrap_or(name));
    spec.rw = rw;
    spec.rwmixread = opt(job, global, "rwmixread")
        .and_then(|s| s.parse().ok())
        .or_else(|| {
            opt(job, global, "rwmixwrite")
                .and_then(|s| s.parse::<u8>().ok())
                .map(|w| 100u8.saturating_sub(w))
        })
        .unwrap_or(50);
    spec.rwmixread = rw.read_pct(spec.rwmixread);
    spec.bs = job_bs(job, global, rw);
    spec.qd = opt(job, global, "iodepth")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    spec.jobs = opt(job, global, "numjobs")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    spec.size = opt(job, global, "size").and_then(fio_size);
    spec.direct = opt(job, global, "direct").is_some_and(|d| d == "1" || d == "true");
    spec.engine = match opt(job, global, "ioengine") {
        Some("io_uring") => EngineKind::IoUring,
        Some("null") => EngineKind::Null,
        _ => EngineKind::Psync,
    };
    spec.engine_note = Some(format!(
        "imported from fio {version}: ioengine={}",
        opt(job, global, "ioengine").unwrap_or("psync")
    ));
    spec.runtime_s = opt(job, global, "runtime")
        .and_then(|s| crate::units::parse_duration(s).ok())
        .map(|d| d.as_secs_f64());
    spec.data = DataSpec::default();
    Ok(spec)
}

/// Read and write figures of a job: the first clone's, with the other clones' counters
/// (I/Os, bytes, IOPS, bandwidth) added.
fn clone_stats(clones: &[&Value]) -> (DirStats, DirStats) {
    let job = clones[0];
    let mut read = dir_stats(job.get("read").unwrap_or(&Value::Null));
    let mut write = dir_stats(job.get("write").unwrap_or(&Value::Null));
    for c in &clones[1..] {
        for (acc, d) in [(&mut read, "read"), (&mut write, "write")] {
            let x = dir_stats(c.get(d).unwrap_or(&Value::Null));
            acc.ios += x.ios;
            acc.bytes += x.bytes;
            acc.iops += x.iops;
            acc.bw_bytes += x.bw_bytes;
        }
    }
    (read, write)
}

/// The job's one repetition: its figures, runtime, CPU time and status.
fn job_repetition(clones: &[&Value]) -> Repetition {
    let job = clones[0];
    let (read, write) = clone_stats(clones);
    let runtime_ms = num(job.get("read").unwrap_or(&Value::Null), "runtime")
        .max(num(job.get("write").unwrap_or(&Value::Null), "runtime"))
        .max(num(job, "job_runtime"));
    let elapsed_s = runtime_ms / 1000.0;
    let cpu_s = |k: &str| num(job, k) / 100.0 * elapsed_s;
    let total = read.ios + write.ios;
    Repetition {
        index: 1,
        status: if num(job, "error") == 0.0 {
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
            // fio's usr_cpu/sys_cpu are its job threads'.
            workers: crate::results::schema::CpuPart::new(
                cpu_s("usr_cpu"),
                cpu_s("sys_cpu"),
                total,
            ),
            ..Cpu::default()
        },
        device: None,
        series: Vec::new(),
        data: None,
        verify: None,
    }
}

/// The warnings every imported run carries, and one more when clones were summed.
fn import_warnings(clones: usize) -> Vec<String> {
    let mut w = vec!["imported from fio: percentiles are fio's completion latency (clat), min/mean/max its total latency".to_string()];
    if clones > 1 {
        w.push(format!(
            "fio reported {clones} clones of this job separately (no group_reporting): IOPS and bytes are their sum, latency figures the first clone's"
        ));
    }
    w
}

/// One run of the document for a fio job (all its clones).
fn job_run(name: &str, clones: &[&Value], spec: Spec) -> Run {
    let reps = vec![job_repetition(clones)];
    Run {
        name: format!("{name} (fio)"),
        status: reps[0].status,
        target: TargetDesc {
            kind: TargetKind::File,
            path: spec.target.clone(),
            offset: 0,
            span_bytes: spec.size.unwrap_or(0),
            align: 1,
            created: false,
            device: None,
            filesystem: None,
        },
        summary: Summary::of(&reps),
        repetitions: reps,
        warnings: import_warnings(clones.len()),
        error: None,
        repetitions_planned: 1,
        cache_bound: false,
        study: None,
        write_amplification: None,
        write_amplification_sources: Vec::new(),
        spec,
    }
}

/// Loads every input (iomark or fio JSON), labelled by file name.
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
                         "lat_ns": {"min": 10, "max": 90, "mean": 50.0, "stddev": 5.0},
                         "clat_ns": {"percentile": {"50.000000": 48, "90.000000": 80, "99.000000": 88, "99.900000": 89, "99.990000": 90}}},
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
        assert_eq!(
            (
                rep.read.ios,
                rep.read.lat_ns.p50,
                rep.read.lat_ns.p99,
                rep.read.lat_ns.max
            ),
            (2, 48, 88, 90)
        );
        assert_eq!(rep.elapsed_s, 2.0);
        assert!((rep.cpu.user_s - 0.2).abs() < 1e-9);
    }
}

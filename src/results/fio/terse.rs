//! fio's terse output (`--output-format=terse`, `--minimal`), version 3 (fio's default):
//! one semicolon-separated line per job. The fields, as fio's HOWTO lists them: version,
//! fio version, job name, group, error; then for reads and again for writes 41 fields —
//! KiB moved, bandwidth (KiB/s), IOPS, runtime (ms), submission latency min/max/mean/
//! stddev, completion latency min/max/mean/stddev, 20 completion-latency percentiles
//! (`P%=V`), total latency min/max/mean/stddev, bandwidth min/max/aggregate %/mean/
//! stddev; then CPU user %, system %, context switches, major and minor faults, I/O depths
//! and latency buckets. Latencies are in microseconds.
//!
//! Each line becomes a job of fio's JSON shape (ns, bytes) and goes through the JSON
//! importer, so both read the same way. Terse output names no options: the pattern is
//! inferred from the directions that did I/O and the block size is the average transfer.

use serde_json::{Map, Value, json};

use crate::results::schema::Document;

/// Fields per direction in terse version 3.
const DIR_FIELDS: usize = 41;
/// Where the read fields start (0-based): after version, fio version, name, group, error.
const READ_AT: usize = 5;
/// CPU user % (0-based), after the write fields.
const CPU_AT: usize = READ_AT + 2 * DIR_FIELDS;

/// The terse lines of `text`, or `None` when it has none. A version other than 3 is an
/// error naming it.
pub(crate) fn parse(text: &str) -> Option<std::result::Result<Document, String>> {
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.trim().split(';').collect::<Vec<_>>())
        .filter(|f| f.len() > 4 && f[1].starts_with("fio-") && f[0].parse::<u32>().is_ok())
        .collect();
    let first = lines.first()?;
    if first[0] != "3" {
        return Some(Err(format!(
            "fio terse output version {}; iomark reads version 3 (fio's default --terse-version)",
            first[0]
        )));
    }
    let mut jobs = Vec::new();
    for (i, f) in lines.iter().enumerate() {
        if f.len() < CPU_AT + 5 {
            return Some(Err(format!(
                "fio terse line {} has {} fields; version 3 has at least {}",
                i + 1,
                f.len(),
                CPU_AT + 5
            )));
        }
        jobs.push(job(f));
    }
    let v = json!({"fio version": first[1], "jobs": jobs});
    Some(
        super::from_fio_with(&v, &super::TextInfo::default()).map(
            |mut doc| {
                for r in &mut doc.runs {
                    if let Some(f) = &mut r.fio {
                        f.format = "terse".into();
                        // Terse output names no options: these are not known, whatever
                        // iomark's defaults in `spec` say.
                        f.ioengine = "?".into();
                        f.unknown = ["target", "engine", "qd", "jobs", "direct", "data", "seed"]
                            .map(String::from)
                            .into();
                    }
                    // Nor the file: not even whether fio named it after the job.
                    r.spec.target = "?".into();
                    r.target.path = "?".into();
                    r.target.kind = crate::results::schema::TargetKind::Unknown;
                    r.spec.engine_note = Some(format!("imported from fio terse output ({}): it does not name the engine", first[1]));
                    r.warnings.push("fio terse output: it names no options, so rw is inferred from the directions that did I/O (random or sequential is not known), bs is the average transfer, the file, engine, queue depth, jobs and direct or buffered I/O are not known (shown as ?), and latencies are whole microseconds, IOPS whole (fio truncates them); I/O counts are IOPS × runtime".into());
                }
                doc
            },
        ),
    )
}

fn f64_at(f: &[&str], i: usize) -> f64 {
    f.get(i)
        .map(|s| s.trim_end_matches('%'))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0)
}

/// One direction's fields (starting at `at`) in fio's JSON shape.
fn direction(f: &[&str], at: usize) -> Value {
    let kib = f64_at(f, at);
    let iops = f64_at(f, at + 2);
    let runtime = f64_at(f, at + 3);
    let ios = (iops * runtime / 1000.0).round();
    let us = |i: usize| f64_at(f, at + i) * 1000.0;
    let mut pct = Map::new();
    for p in &f[at + 12..at + 32] {
        if let Some((k, v)) = p.split_once("%=")
            && let (Ok(k), Ok(v)) = (k.parse::<f64>(), v.parse::<f64>())
            && k > 0.0
        {
            pct.insert(format!("{k:.6}"), json!((v * 1000.0) as u64));
        }
    }
    let mut clat = json!({"min": us(8), "max": us(9), "mean": us(10), "stddev": us(11), "N": ios});
    if !pct.is_empty() {
        clat["percentile"] = Value::Object(pct);
    }
    json!({
        "io_bytes": kib * 1024.0,
        "bw_bytes": f64_at(f, at + 1) * 1024.0,
        "iops": iops,
        "runtime": runtime,
        "total_ios": ios,
        "clat_ns": clat,
        "lat_ns": {"min": us(32), "max": us(33), "mean": us(34), "stddev": us(35), "N": ios},
    })
}

/// One terse line as a job of fio's JSON output.
fn job(f: &[&str]) -> Value {
    let read = direction(f, READ_AT);
    let write = direction(f, READ_AT + DIR_FIELDS);
    let (r, w) = (
        read["total_ios"].as_f64().unwrap_or(0.0),
        write["total_ios"].as_f64().unwrap_or(0.0),
    );
    let rw = match (r > 0.0, w > 0.0) {
        (true, true) => "rw",
        (false, true) => "write",
        _ => "read",
    };
    let mut opts = json!({"rw": rw});
    if r > 0.0 && w > 0.0 {
        opts["rwmixread"] = json!(format!("{:.0}", 100.0 * r / (r + w)));
    }
    let (bytes, ios) = if r >= w {
        (read["io_bytes"].as_f64().unwrap_or(0.0), r)
    } else {
        (write["io_bytes"].as_f64().unwrap_or(0.0), w)
    };
    if ios > 0.0 {
        opts["bs"] = json!(format!("{}", (bytes / ios).round() as u64));
    }
    json!({
        "jobname": f[2],
        "groupid": f[3].parse::<u64>().unwrap_or(0),
        "error": f[4].parse::<i64>().unwrap_or(0),
        "job options": opts,
        "read": read,
        "write": write,
        "usr_cpu": f64_at(f, CPU_AT),
        "sys_cpu": f64_at(f, CPU_AT + 1),
        "job_runtime": f64_at(f, READ_AT + 3).max(f64_at(f, READ_AT + DIR_FIELDS + 3)),
    })
}

//! What the reports and a run's figures say (probe 14): the `cache` study's "device
//! wrote" label with a flush in the window, against a loop device's kernel counters; the
//! CSV report as one table with what the study tables add (the figures and the verdicts)
//! against the document; a run on several targets with its per-target figures in the
//! Markdown and CSV reports; the CPU parts of a real run never above the whole, and the
//! SQPOLL thread's time under its own name.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::common::{LoopDev, Zram, iomark, read_json, tmp};

/// Runs iomark with `args` and `-o` `out`; returns the document and stdout.
fn run_to(out: &Path, args: &[&str]) -> (Value, String) {
    let o = iomark()
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .expect("iomark runs");
    assert!(
        o.status.success(),
        "iomark {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        read_json(out),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// `iomark report FILE --format FORMAT -o -`.
fn report_of(file: &Path, format: &str) -> String {
    let o = iomark()
        .arg("report")
        .arg(file)
        .args(["--format", format, "-o", "-"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The CSV report's rows, each a map from its header.
fn csv_rows(csv: &str) -> Vec<HashMap<String, String>> {
    let mut r = ::csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(csv.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            assert_eq!(rec.len(), header.len(), "a full row: {rec:?}");
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

/// A cell as a number, `None` when empty.
fn num(row: &HashMap<String, String>, col: &str) -> Option<f64> {
    let v = row
        .get(col)
        .unwrap_or_else(|| panic!("no column {col}: {row:?}"));
    (!v.is_empty()).then(|| v.parse().unwrap_or_else(|_| panic!("{col}={v}")))
}

/// The percent the device wrote of a run's writes, from the document: its complete
/// repetitions' device write bytes over iomark's.
fn device_wrote_pct(run: &Value) -> f64 {
    let (mut own, mut dev) = (0.0, 0.0);
    for rep in run["repetitions"].as_array().unwrap() {
        own += rep["write"]["bytes"].as_f64().unwrap();
        dev += rep["device"]["write_bytes"].as_f64().unwrap();
    }
    100.0 * dev.min(own) / own
}

/// Probe 14, item 5: with --end-fsync the buffered row of `suite cache` lost its
/// "device wrote N%" label though the device wrote 2% of what iomark wrote. The label is
/// on the row with the flush in the window too, its figure the document's (which the
/// kernel's own counter bounds), and the CSV report carries it as a number beside the
/// write amplification.
#[test]
fn cache_study_says_what_the_device_wrote_with_the_flush_too() {
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let dir = tmp();
    let out = dir.path().join("cw.json");
    let path = dev.path().to_str().unwrap().to_string();
    let before = dev.stat();
    let (doc, text) = run_to(
        &out,
        &[
            "suite",
            "cache",
            "--bs",
            "64k",
            "--rw",
            "randwrite",
            "--runtime",
            "1",
            "--ramp",
            "0",
            "--size",
            "32m",
            "--end-fsync",
            "--allow-write-device",
            &path,
        ],
    );
    let after = dev.stat();
    let runs = doc["runs"].as_array().unwrap();
    let buffered = (runs.iter())
        .find(|r| r["study"]["value"] == "buffered")
        .unwrap_or_else(|| panic!("a buffered run: {doc}"));
    let pct = device_wrote_pct(buffered);
    // The document's device bytes are the kernel's: within what its counter moved over
    // the whole command.
    let dev_bytes: u64 = (buffered["repetitions"].as_array().unwrap().iter())
        .map(|r| r["device"]["write_bytes"].as_u64().unwrap())
        .sum();
    let kernel = (after[3] - before[3]) * 512;
    assert!(
        dev_bytes > 0 && dev_bytes <= kernel,
        "{dev_bytes} of {kernel}"
    );
    let row = (text.lines())
        .find(|l| l.starts_with("buffered"))
        .unwrap_or_else(|| panic!("{text}"));
    let said = row
        .split("(device wrote ")
        .nth(1)
        .and_then(|s| s.split('%').next())
        .unwrap_or_else(|| panic!("no device wrote label: {row}"));
    let said: f64 = said.trim_start_matches("under ").parse().unwrap();
    assert!(
        (said - pct).abs() <= 0.6,
        "said {said}%, the document {pct}%"
    );
    let direct = text.lines().find(|l| l.starts_with("direct")).unwrap();
    assert!(!direct.contains("device wrote"), "{direct}");
    // The CSV: one table, the figures as numbers.
    let rows = csv_rows(&report_of(&out, "csv"));
    let row = |v: &str| {
        (rows.iter())
            .find(|r| r["value"] == v && r["dir"] == "write")
            .unwrap_or_else(|| panic!("{v}: {rows:?}"))
    };
    let b = row("buffered");
    let csv_pct = num(b, "device wrote %").unwrap_or_else(|| panic!("{b:?}"));
    assert!((csv_pct - pct).abs() < 0.051, "{csv_pct} against {pct}");
    assert_eq!(num(row("direct"), "device wrote %"), None);
    for r in runs {
        let csv = row(r["study"]["value"].as_str().unwrap());
        let wa = &r["write_amplification"];
        match wa["ratio"].as_f64() {
            Some(x) => {
                let c = num(csv, "write ampl.").unwrap_or_else(|| panic!("{csv:?}"));
                assert!((c - x).abs() < 0.0005, "{c} against {x}");
                assert_eq!(csv["write ampl. source"], wa["source"].as_str().unwrap());
            }
            None => assert_eq!(num(csv, "write ampl."), None),
        }
        let iops = r["summary"]["write"]["iops"]["mean"].as_f64().unwrap();
        assert!((num(csv, "IOPS").unwrap() - iops).abs() <= 0.5, "{csv:?}");
    }
}

/// Probe 14, item 2: the CSV report had no study figures and no verdict. A qd study's
/// verdict is on each of its rows as the Markdown prints it, the CV is the document's,
/// and a compress study on zram gives "device stored" and the write amplification.
#[test]
fn csv_report_has_the_study_figures_and_verdicts() {
    let dir = tmp();
    let out = dir.path().join("qd.json");
    let file = dir.path().join("qd.dat");
    let (doc, _) = run_to(
        &out,
        &[
            "suite",
            "qd",
            "--rw",
            "randread",
            "--qd",
            "1,2,4",
            "--repeat",
            "2",
            "--runtime",
            "0.3",
            "--ramp",
            "0",
            "--size",
            "8m",
            file.to_str().unwrap(),
        ],
    );
    let md = report_of(&out, "md");
    let verdict = (md.lines())
        .find(|l| l.starts_with("IOPS s"))
        .unwrap_or_else(|| panic!("a verdict: {md}"));
    let rows = csv_rows(&report_of(&out, "csv"));
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(rows.len(), runs.len(), "{rows:?}");
    for (row, run) in rows.iter().zip(runs) {
        assert_eq!(row["verdict"], verdict, "{row:?}");
        assert_eq!(row["value"], run["study"]["value"].as_str().unwrap());
        let cv = run["summary"]["read"]["iops"]["cv_pct"].as_f64();
        match (num(row, "CV %"), cv) {
            (Some(c), Some(j)) => assert!((c - j).abs() <= 0.05, "{c} against {j}"),
            (c, j) => assert_eq!(c.is_some(), j.is_some(), "{row:?}"),
        }
        assert_eq!(row["target"], "");
    }
    // The compress study on a private zram: what it stored, as the JSON has it.
    let Some(z) = Zram::new("lz4", "64M") else {
        return;
    };
    let out = dir.path().join("comp.json");
    let (doc, _) = run_to(
        &out,
        &[
            "suite",
            "compress",
            "--compress",
            "50",
            "--size",
            "16m",
            "--runtime",
            "0.5",
            "--ramp",
            "0",
            "--allow-write-device",
            &z.dev(),
        ],
    );
    let rows = csv_rows(&report_of(&out, "csv"));
    let mut stored_rows = 0;
    for run in doc["runs"].as_array().unwrap() {
        let name = run["name"].as_str().unwrap();
        let Some(row) = (rows.iter()).find(|r| r["run"] == name && r["dir"] == "write") else {
            continue;
        };
        let zram = (run["write_amplification_sources"]
            .as_array()
            .unwrap()
            .iter())
        .find(|w| w["source"] == "zram")
        .and_then(|w| w["ratio"].as_f64());
        match (num(row, "device stored %"), zram) {
            (Some(c), Some(j)) => {
                assert!((c - 100.0 * j).abs() <= 0.05, "{c} against {j}");
                stored_rows += 1;
            }
            (c, j) => assert_eq!(c.is_some(), j.is_some(), "{row:?}"),
        }
    }
    assert!(stored_rows > 0, "{rows:?}");
}

/// Probe 14, item 8: a run on several targets had its per-target figures in the
/// terminal and HTML only. The Markdown has the per-target table and the CSV a row per
/// target and direction, with each target's figures from the document.
#[test]
fn per_target_figures_are_in_markdown_and_csv() {
    let dir = tmp();
    let out = dir.path().join("mt.json");
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    let (doc, text) = run_to(
        &out,
        &[
            "run",
            "--rw",
            "randrw",
            "--runtime",
            "0.5",
            "--ramp",
            "0",
            "--size",
            "8m",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
    );
    let run = &doc["runs"][0];
    let name = run["name"].as_str().unwrap();
    let targets = run["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    let md = report_of(&out, "md");
    let section = md
        .split(&format!("## Per target: {name}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("{md}"));
    let rows = csv_rows(&report_of(&out, "csv"));
    for t in targets {
        let path = t["target"]["path"].as_str().unwrap();
        // The Markdown's row is the terminal's, cell for cell.
        let md_row = (section.lines())
            .find(|l| l.starts_with(&format!("| {path} |")))
            .unwrap_or_else(|| panic!("{path}: {section}"));
        let cells: Vec<&str> = md_row
            .trim_matches('|')
            .split(" | ")
            .map(str::trim)
            .collect();
        let term = (text.lines())
            .find(|l| l.trim_start().starts_with(path))
            .unwrap_or_else(|| panic!("{path}: {text}"));
        for c in &cells[..4] {
            assert!(term.contains(c), "{c} of {md_row} not in {term}");
        }
        for dir in ["read", "write"] {
            let s = &t["summary"][dir];
            let row = (rows.iter())
                .find(|r| r["target"] == path && r["dir"] == dir)
                .unwrap_or_else(|| panic!("{path} {dir}: {rows:?}"));
            assert_eq!(row["run"], name);
            let iops = s["iops"]["mean"].as_f64().unwrap();
            assert!((num(row, "IOPS").unwrap() - iops).abs() <= 0.5, "{row:?}");
            let mbs = s["bw_bytes"]["mean"].as_f64().unwrap() / 1e6;
            assert!((num(row, "MB/s").unwrap() - mbs).abs() <= 0.005, "{row:?}");
            let p99 = s["lat_p99_ns"]["mean"].as_f64().unwrap() / 1e3;
            assert!((num(row, "p99 us").unwrap() - p99).abs() <= 0.05, "{row:?}");
        }
    }
    // The aggregate rows are the run's, with no target named.
    let agg: Vec<_> = rows.iter().filter(|r| r["target"].is_empty()).collect();
    assert_eq!(agg.len(), 2, "{rows:?}");
    assert_eq!(rows.len(), 6, "{rows:?}");
}

/// Probe 14, item 9: the job threads' user or system time above the process's in most
/// repetitions (the kernel splits each thread's and the process's time by its own
/// ticks), and the SQPOLL thread's time filed under `io_wq`. On a real io_uring run with
/// --sqpoll: in every repetition no part exceeds the whole, the parts add up to it, the
/// SQPOLL thread has its own part, and the run's header says --sqpoll and its CPU.
#[test]
fn cpu_parts_never_exceed_the_whole_and_sqpoll_is_its_own() {
    if iomark::io::engine::probe_io_uring().is_err() {
        crate::common::require("io_uring", false);
        return;
    }
    let dir = tmp();
    let out = dir.path().join("sqp.json");
    let file = dir.path().join("sqp.dat");
    let (doc, text) = run_to(
        &out,
        &[
            "run",
            "--rw",
            "randread",
            "--engine",
            "io_uring",
            "--qd",
            "8",
            "--sqpoll",
            "--sqpoll-cpu",
            "1",
            "--cpus",
            "0",
            "--repeat",
            "4",
            "--runtime",
            "0.5",
            "--ramp",
            "0",
            "--size",
            "16m",
            file.to_str().unwrap(),
        ],
    );
    assert!(
        text.contains("io_uring with --sqpoll (its thread on CPU 1), --cpus 0 on"),
        "{text}"
    );
    let reps = doc["runs"][0]["repetitions"].as_array().unwrap();
    let mut sqpoll = 0.0;
    for rep in reps {
        let c = &rep["cpu"];
        let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {c}"));
        let (user, sys) = (f(c, "user_s"), f(c, "sys_s"));
        let (mut u, mut s) = (0.0, 0.0);
        for part in ["workers", "io_wq", "sqpoll", "other"] {
            let p = &c[part];
            assert!(f(p, "user_s") <= user + 1e-9, "{part} user: {c}");
            assert!(f(p, "sys_s") <= sys + 1e-9, "{part} sys: {c}");
            u += f(p, "user_s");
            s += f(p, "sys_s");
        }
        assert!((u - user).abs() < 1e-6 && (s - sys).abs() < 1e-6, "{c}");
        sqpoll += f(&c["sqpoll"], "user_s") + f(&c["sqpoll"], "sys_s");
    }
    // The SQPOLL thread polls the whole window: at tick resolution, more than nothing.
    assert!(sqpoll > 0.0, "{doc}");
}

/// io_uring hands zram's reads to io-wq workers (`iou-wrk-<job thread>`), which exit with
/// their job's ring: read after the job threads were joined, their time was filed under
/// `other` and `io_wq` said 0 (a 4 s run at QD 128: 3.93 s of system time "other", io_wq
/// 0.0). Each job thread reads its own workers' time before its ring goes (and its
/// SQPOLL thread's workers'): on zram at QD 16, with and without --sqpoll, most of what
/// is not the job thread's is io_wq's, and little is left as other.
#[test]
fn io_wq_workers_time_is_theirs_not_other() {
    if iomark::io::engine::probe_io_uring().is_err() {
        crate::common::require("io_uring", false);
        return;
    }
    let Some(z) = Zram::new("lz4", "64M") else {
        return;
    };
    let dir = tmp();
    let out = dir.path().join("wq.json");
    let args = "run --rw randread --engine io_uring --qd 16 --direct --runtime 1 --ramp 0";
    let dev = z.dev();
    let t = |p: &Value| p["user_s"].as_f64().unwrap() + p["sys_s"].as_f64().unwrap();
    // With --sqpoll the SQPOLL thread submits and hands zram's reads to io-wq workers of
    // its own (`iou-wrk-<SQPOLL thread>`): theirs too (they were "other").
    let sq = dir.path().join("sq.json");
    let sq_args: Vec<&str> = args.split(' ').chain(["--sqpoll", dev.as_str()]).collect();
    let (sq_doc, _) = run_to(&sq, &sq_args);
    let c = &sq_doc["runs"][0]["repetitions"][0]["cpu"];
    let (wq, other, sqp) = (t(&c["io_wq"]), t(&c["other"]), t(&c["sqpoll"]));
    assert!(wq >= 0.05 && sqp >= 0.05, "--sqpoll: {c}");
    assert!(
        other < wq / 2.0,
        "--sqpoll: io_wq {wq} s, other {other} s: {c}"
    );
    let args: Vec<&str> = args.split(' ').chain([dev.as_str()]).collect();
    let (doc, text) = run_to(&out, &args);
    let c = &doc["runs"][0]["repetitions"][0]["cpu"];
    let (wq, other) = (t(&c["io_wq"]), t(&c["other"]));
    // Some io-wq time (tens of a second at least: the worker reads through the run).
    assert!(wq >= 0.05, "io_wq {wq} s, other {other} s: {c}");
    assert!(other < wq / 2.0, "io_wq {wq} s, other {other} s: {c}");
    // The text says how the CPU per I/O divides, in the document's figures.
    let ns = |p: &Value| p["per_io_ns"].as_f64().unwrap();
    let (jobs, wq) = (ns(&c["workers"]), ns(&c["io_wq"]));
    let line = text
        .lines()
        .find(|l| l.contains("cpu  :"))
        .expect("a cpu line");
    let said = |name: &str| {
        let at = line.find(name).unwrap_or_else(|| panic!("{name}: {line}")) + name.len();
        line[at..]
            .split([',', ')'])
            .next()
            .unwrap()
            .trim()
            .to_string()
    };
    let fmt = |v: f64| match v {
        v if v < 1e3 => format!("{v:.0} ns"),
        v if v < 1e6 => format!("{:.1} µs", v / 1e3),
        v => format!("{:.2} ms", v / 1e6),
    };
    assert_eq!(said("job threads "), fmt(jobs), "{line}");
    assert_eq!(said("io-wq "), fmt(wq), "{line}");
}

/// Busy loops (`sh -c 'while :; do :; done'`), killed and reaped on drop.
struct BusyLoops(Vec<std::process::Child>);

impl BusyLoops {
    fn start(n: usize) -> BusyLoops {
        BusyLoops(
            (0..n)
                .map(|_| {
                    std::process::Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .expect("sh runs")
                })
                .collect(),
        )
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Other processes keeping the CPUs busy while a repetition measures are in its figures
/// (`cpu.machine`, from /proc/stat) and named in the run, with the figure the document
/// holds: two busy loops beside a run said nothing (session 33's `SCHED_BATCH` job
/// threads read 2.3 thousand zram reads a second beside them, where the device gave 988
/// thousand, and the run did not say why).
#[test]
fn other_processes_on_the_cpus_are_measured_and_said() {
    let dir = tmp();
    let out = dir.path().join("busy.json");
    let file = dir.path().join("busy.dat");
    let busy = BusyLoops::start(2);
    let (doc, text) = run_to(
        &out,
        &[
            "run",
            "--engine",
            "null",
            "--rw",
            "write",
            "--runtime",
            "1",
            "--ramp",
            "0",
            "--size",
            "16m",
            file.to_str().unwrap(),
        ],
    );
    drop(busy);
    let run = &doc["runs"][0];
    let rep = &run["repetitions"][0];
    let m = &rep["cpu"]["machine"];
    let f = |k: &str| m[k].as_f64().unwrap_or_else(|| panic!("{k}: {rep}"));
    let (window, others) = (f("window_s"), f("others_user_s"));
    let elapsed = rep["elapsed_s"].as_f64().unwrap();
    assert!(
        (window - elapsed).abs() < 0.5,
        "window {window} s, elapsed {elapsed} s"
    );
    // Two loops, each as busy as the scheduler lets it: at least half a CPU between them
    // (the job thread takes one CPU of two here).
    let cpus = others / window;
    assert!(cpus >= 0.5, "{m}");
    let said = format!(
        "other processes kept {cpus:.2} of the {} CPUs busy",
        m["cpus"]
    );
    assert!(
        run["warnings"].to_string().contains(&said) && text.contains(&said),
        "{said}: {text}"
    );
}

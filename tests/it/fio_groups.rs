//! The jobs of one fio group run together (issue 14): a reader and a writer in one group
//! on one loop device load it at the same time under `iomark fio` as under fio. Checked
//! against the kernel: the device's read and write counters, sampled while each tool
//! runs, grow together in the same sampling intervals (run one after another they would
//! grow in turn); over the group's window they equal the jobs' summed I/O counts; and
//! size-based jobs of one group each move their own size, as in fio.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

/// Runs `cmd` while reading `/sys/class/block/NAME/stat` every 100 ms; returns its
/// output and the (reads, writes) completed at each sample, the first before it starts
/// and the last after it ends.
fn sampled(mut cmd: Command, name: &str) -> (Output, Vec<(u64, u64)>) {
    let at = || {
        let s = block_stat(name);
        (s[0], s[4])
    };
    let mut samples = vec![at()];
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read stdout on a thread, so a full pipe never blocks the child.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).unwrap();
        v
    });
    while child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(100));
        samples.push(at());
    }
    samples.push(at());
    let mut out = child.wait_with_output().unwrap();
    out.stdout = reader.join().unwrap();
    (out, samples)
}

/// How many sampling intervals saw both reads and writes complete, and how many saw
/// either.
fn overlap(samples: &[(u64, u64)]) -> (usize, usize) {
    let steps = samples
        .windows(2)
        .map(|w| (w[1].0 > w[0].0, w[1].1 > w[0].1));
    let steps: Vec<(bool, bool)> = steps.collect();
    let both = steps.iter().filter(|(r, w)| *r && *w).count();
    let any = steps.iter().filter(|(r, w)| *r || *w).count();
    (both, any)
}

/// The summed I/O counts of a run's (or an imported fio job's) repetitions.
fn ios(run: &Value) -> (u64, u64) {
    let reps = run["repetitions"].as_array().unwrap();
    let sum = |d: &str| reps.iter().map(|r| r[d]["ios"].as_u64().unwrap()).sum();
    (sum("read"), sum("write"))
}

/// fio on `job` with `DEV` set, its JSON imported by `iomark report` (and fio's own).
fn fio_on(job: &Path, dev: &LoopDev) -> (Value, Value, Vec<(u64, u64)>) {
    let mut cmd = Command::new("fio");
    cmd.current_dir(job.parent().unwrap())
        .env("DEV", &dev.dev)
        .arg("--output-format=json")
        .arg(job);
    let (out, samples) = sampled(cmd, &dev.name());
    assert_success(&out);
    let raw: Value = serde_json::from_slice(&out.stdout).unwrap();
    let json = job.with_extension("fio.json");
    std::fs::write(&json, &out.stdout).unwrap();
    let report = ["report", json.to_str().unwrap(), "--format", "json"];
    let doc: Value = serde_json::from_slice(&stdout_of(&report)).unwrap();
    (doc, raw, samples)
}

/// `iomark fio` on `job` with `DEV` set; the results document and the samples.
fn iomark_on(job: &Path, dev: &LoopDev) -> (Value, Vec<(u64, u64)>) {
    let res = job.with_extension("json");
    let mut cmd = iomark_process();
    cmd.env("DEV", &dev.dev)
        .arg("fio")
        .arg(job)
        .args(["--allow-write-device", "--quiet", "-o"])
        .arg(&res);
    let (out, samples) = sampled(cmd, &dev.name());
    assert_success(&out);
    (read_json(&res), samples)
}

const TOGETHER: &str = "[global]\nfilename=${DEV}\ndirect=1\nbs=4k\nsize=16m\n\
    ioengine=psync\nruntime=3\ntime_based\n\
    [reader]\nrw=randread\n\
    [writer]\nrw=write\n";

#[test]
fn a_reader_and_a_writer_in_one_group_load_the_device_together() {
    let Some(dev) = LoopDev::new(32 << 20, true) else {
        return;
    };
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let dir = tmp();
    let job = dir.path().join("together.fio");
    std::fs::write(&job, TOGETHER).unwrap();

    let (doc, samples) = iomark_on(&job, &dev);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["study"]["value"], "0", "one group");
        assert_eq!(r["group"]["runs"], serde_json::json!(["reader", "writer"]));
        let w = r["warnings"].to_string();
        assert!(!w.contains("one after another"), "{w}");
        // Time-based: each job runs for the runtime, and so does the group.
        let rep = &r["repetitions"][0];
        assert_eq!(rep["elapsed_s"].as_f64(), Some(3.0));
        assert_eq!(
            r["group"]["repetitions"][0]["elapsed_s"].as_f64(),
            Some(3.0)
        );
    }
    let ((reads, r_w), (w_r, writes)) = (ios(&runs[0]), ios(&runs[1]));
    assert_eq!(
        (r_w, w_r),
        (0, 0),
        "the reader only reads, the writer only writes"
    );
    assert!(reads > 0 && writes > 0);
    // Each job's own figures come from its own I/Os: IOPS over its window.
    let iops = runs[0]["repetitions"][0]["read"]["iops"].as_f64().unwrap();
    assert!(
        (iops - reads as f64 / 3.0).abs() < 1.0,
        "{iops} against {reads} in 3 s"
    );
    // The group's figures are the jobs' sums, and the kernel's counters over the
    // group's window (iomark's own reading of /sys/block/DEV/stat) equal them within 1%
    // (the one request in flight per job at the end of the window is not counted).
    let g = &runs[0]["group"]["repetitions"][0];
    assert_eq!(g["read"]["ios"].as_u64(), Some(reads));
    assert_eq!(g["write"]["ios"].as_u64(), Some(writes));
    let d = &g["device"];
    for (k, want) in [("read_ios", reads), ("write_ios", writes)] {
        let got = d[k].as_f64().unwrap();
        assert!(
            (got - want as f64).abs() <= 0.01 * want as f64 + 2.0,
            "{k}: the kernel counted {got}, the jobs {want}"
        );
    }
    // A device shared by the jobs speaks for the group, not for one job.
    assert!(runs[0]["repetitions"][0]["device"].is_null());
    // The kernel's counters over the whole command: the jobs' I/O plus the device
    // guard's few dozen probing reads (at the preflight and when the run opens it) and
    // the request in flight at the end.
    let (first, last) = (samples[0], samples[samples.len() - 1]);
    let (k_reads, k_writes) = (last.0 - first.0, last.1 - first.1);
    assert!(
        (reads..=reads + 128).contains(&k_reads),
        "kernel reads {k_reads}, jobs {reads}"
    );
    assert!(
        (writes..=writes + 2).contains(&k_writes),
        "kernel writes {k_writes}, jobs {writes}"
    );
    // Together: reads and writes complete in the same 100 ms intervals, through most
    // of the 3 s; one after another, at most one interval would see both.
    let (both, any) = overlap(&samples);
    assert!(
        both >= 10 && both * 2 >= any,
        "iomark: {both} of {any} intervals saw both"
    );

    // fio on the same file: the same two jobs in one group, overlapping the same way,
    // and the kernel's counters equal fio's summed counts.
    let (theirs, raw, samples) = fio_on(&job, &dev);
    let fio_runs = theirs["runs"].as_array().unwrap();
    let names: Vec<&str> = (fio_runs.iter())
        .map(|r| r["study"]["test"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(fio_runs.len(), 2, "{names:?}");
    let (f_reads, f_writes) = (ios(&fio_runs[0]).0, ios(&fio_runs[1]).1);
    let (first, last) = (samples[0], samples[samples.len() - 1]);
    let (k_reads, k_writes) = (last.0 - first.0, last.1 - first.1);
    assert!(
        (f_reads..=f_reads + 64).contains(&k_reads),
        "kernel reads {k_reads}, fio {f_reads}"
    );
    assert!(
        (f_writes..=f_writes + 2).contains(&k_writes),
        "kernel writes {k_writes}, fio {f_writes}"
    );
    let (both, any) = overlap(&samples);
    assert!(
        both >= 10 && both * 2 >= any,
        "fio: {both} of {any} intervals saw both"
    );
    // fio's own word: both jobs in group 0, each running the 3 s runtime.
    for j in raw["jobs"].as_array().unwrap() {
        assert_eq!(j["groupid"], 0);
        let ms = j["job_runtime"].as_u64().unwrap();
        assert!((2900..=3200).contains(&ms), "fio's job ran {ms} ms");
    }
}

#[test]
fn size_based_jobs_of_one_group_each_end_when_done() {
    let Some(dev) = LoopDev::new(32 << 20, true) else {
        return;
    };
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let dir = tmp();
    let job = dir.path().join("sizes.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=${DEV}\ndirect=1\nioengine=psync\n\
         [small]\nrw=randread\nbs=4k\nsize=2m\n\
         [large]\nrw=write\nbs=16k\nsize=16m\nnumjobs=2\n\
         [after]\nstonewall\nrw=read\nbs=64k\nsize=4m\n",
    )
    .unwrap();
    let (doc, _) = iomark_on(&job, &dev);
    let runs = doc["runs"].as_array().unwrap();
    let (theirs, _, _) = fio_on(&job, &dev);
    let fio_runs = theirs["runs"].as_array().unwrap();
    // Each job moves its own size (2 MiB of 4 KiB reads; 16 MiB of 16 KiB writes per
    // copy), exactly as fio does.
    let want = [(512, 0), (0, 2048), (64, 0)];
    for ((ours, theirs), want) in runs.iter().zip(fio_runs).zip(want) {
        assert_eq!(ios(ours), want, "{}", ours["name"]);
        assert_eq!(ios(theirs), want, "fio's {}", theirs["name"]);
    }
    // small and large ran together (each over its own window, the group's the longest);
    // after ran alone.
    let g = &runs[0]["group"];
    assert_eq!(g["runs"], serde_json::json!(["small", "large"]));
    let ends: Vec<f64> = (runs[..2].iter())
        .map(|r| r["repetitions"][0]["elapsed_s"].as_f64().unwrap())
        .collect();
    let group_end = g["repetitions"][0]["elapsed_s"].as_f64().unwrap();
    assert_eq!(group_end, ends[0].max(ends[1]));
    assert_eq!(g["repetitions"][0]["write"]["ios"].as_u64(), Some(2048));
    assert!(runs[2]["group"].is_null());
}

#[test]
fn repetitions_of_a_group_keep_each_jobs_statistics_for_report_and_compare() {
    // The null engine: no device needed. Each repetition runs both jobs together; each
    // job keeps its own run (its repetitions, its statistics), so compare pairs them.
    let dir = tmp();
    let job = dir.path().join("n.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null\nsize=16m\nbs=4k\n[r]\nrw=randread\n[w]\nrw=write\nbs=64k\n",
    )
    .unwrap();
    let docs: Vec<_> = ["a", "b"]
        .iter()
        .map(|n| {
            let res = dir.path().join(format!("{n}.json"));
            let out = iomark_process()
                .arg("fio")
                .arg(&job)
                .args(["--repeat", "3", "--quiet", "-o"])
                .arg(&res)
                .output()
                .unwrap();
            assert_success(&out);
            // The summary ends with the group's sum, as fio's group_reporting entry.
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("r + w measured together: read "), "{text}");
            res
        })
        .collect();
    let doc = read_json(&docs[0]);
    let runs = doc["runs"].as_array().unwrap();
    for (r, (reads, writes)) in runs.iter().zip([(4096, 0), (0, 256)]) {
        let reps = r["repetitions"].as_array().unwrap();
        assert_eq!(reps.len(), 3);
        for p in reps {
            let got = (p["read"]["ios"].as_u64(), p["write"]["ios"].as_u64());
            assert_eq!(got, (Some(reads), Some(writes)), "{}", r["name"]);
        }
        let n = if reads > 0 {
            &r["summary"]["read"]
        } else {
            &r["summary"]["write"]
        };
        assert_eq!(n["iops"]["n"], 3, "{}", r["name"]);
        // The group's figures per repetition: both jobs' I/Os.
        let g = r["group"]["repetitions"].as_array().unwrap();
        assert_eq!(g.len(), 3);
        for p in g {
            assert_eq!(
                (p["read"]["ios"].as_u64(), p["write"]["ios"].as_u64()),
                (Some(4096), Some(256))
            );
        }
        assert_eq!(r["group"]["summary"]["read"]["iops"]["n"], 3);
    }
    // compare pairs each job with itself in the other document (two rows, each with a
    // cell from both files and n = 3 repetitions).
    let cmp = compare_json(&docs);
    let rows = cmp["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{cmp}");
    for (row, name) in rows.iter().zip(["r", "w"]) {
        let cells = row["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 2, "{row}");
        assert!(
            cells
                .iter()
                .all(|c| c["run"] == name && c["iops"]["n"] == 3),
            "{row}"
        );
    }
    // report: a row per job, with its group, n = 3.
    let md = stdout_of(&["report", docs[0].to_str().unwrap(), "--format", "md"]);
    let md = String::from_utf8(md).unwrap();
    for (name, rw) in [("r", "randread"), ("w", "write")] {
        let row = format!("| {name} | ");
        let line = md
            .lines()
            .find(|l| l.starts_with(&row))
            .unwrap_or_else(|| panic!("{md}"));
        assert!(
            line.contains(&format!("| group | 0 | {rw} |")) && line.contains("| 3 |"),
            "{line}"
        );
    }
    // The HTML page shows each job measured together with the group's sum.
    let page = report(&[docs[0].as_path()], &dir.path().join("r.html"));
    assert!(page.contains("Measured together"), "no group section");
    assert_eq!(
        page.matches("group: r + w (sum)<").count(),
        2,
        "a sum row under each job"
    );
}

#[test]
fn each_run_of_a_group_has_its_own_cpu_time() {
    // Two jobs of one group on a file, one with two threads: each run's CPU time is its
    // own threads' and a share of the rest, its parts add up to its whole, and the two
    // wholes differ (every run carried the group's whole beside its own workers').
    let dir = tmp();
    let job = dir.path().join("cpu.fio");
    let file = dir.path().join("f.dat");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=8m\nbs=4k\nioengine=psync\nruntime=1\ntime_based\n\
             [a]\nrw=randread\nnumjobs=2\n[b]\nrw=randread\nrate_iops=2000\n",
            file.display()
        ),
    )
    .unwrap();
    let res = dir.path().join("cpu.json");
    let out = iomark()
        .arg("fio")
        .arg(&job)
        .args(["--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    let doc = read_json(&res);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let mut totals = Vec::new();
    for r in runs {
        let rep = &r["repetitions"][0];
        let c = &rep["cpu"];
        let f = |v: &Value| v.as_f64().unwrap();
        let total = f(&c["user_s"]) + f(&c["sys_s"]);
        let parts: f64 = ["workers", "io_wq", "sqpoll", "other"]
            .iter()
            .map(|p| f(&c[p]["user_s"]) + f(&c[p]["sys_s"]))
            .sum();
        assert!((total - parts).abs() < 1e-6, "{}: {c}", r["name"]);
        let (rd, wr) = ios(r);
        let per_io = total * 1e9 / (rd + wr) as f64;
        assert!((f(&c["per_io_ns"]) - per_io).abs() < 1e-3 * per_io, "{c}");
        assert!(total >= f(&c["workers"]["user_s"]) + f(&c["workers"]["sys_s"]));
        totals.push(total);
    }
    // a's two threads run flat out, b at 2000 I/Os a second.
    assert!(totals[0] > 2.0 * totals[1], "{totals:?}");
}

//! End-to-end tests of the `iomark` binary on small files in temporary directories.

use crate::common::{
    assert_refused, assert_success, dry_run, iomark, read_json, require, run_json, stdout_of, tmp,
};
use serde_json::Value;

fn get<'a>(v: &'a Value, path: &str) -> &'a Value {
    let mut cur = v;
    for key in path.split('.') {
        cur = match key.parse::<usize>() {
            Ok(i) => &cur[i],
            Err(_) => &cur[key],
        };
        assert!(!cur.is_null(), "missing {path} (at {key}) in {v:#}");
    }
    cur
}

#[test]
fn results_document_has_the_required_keys() {
    let dir = tmp();
    let f = dir.path().join("t.dat");
    let doc = run_json(&[
        "run",
        "--rw",
        "randrw",
        "--size",
        "4m",
        "--bs",
        "4k",
        f.to_str().unwrap(),
    ]);
    assert_eq!(doc["schema"], "iomark/1");
    for k in [
        "tool.version",
        "host.hostname",
        "host.kernel",
        "host.cpu",
        "host.cores",
        "host.memory_bytes",
    ] {
        get(&doc, k);
    }
    let run = get(&doc, "runs.0");
    for k in ["target", "rw", "bs", "qd", "jobs", "engine", "direct"] {
        get(run, &format!("spec.{k}"));
    }
    assert_eq!(run["status"], "complete");
    let rep = get(run, "repetitions.0");
    get(rep, "elapsed_s");
    for dir in ["read", "write"] {
        for k in ["ios", "bytes", "iops", "bw_bytes"] {
            get(rep, &format!("{dir}.{k}"));
        }
        for k in ["min", "mean", "p50", "p90", "p99", "p999", "p9999", "max"] {
            get(rep, &format!("{dir}.lat_ns.{k}"));
        }
        for k in ["mean", "stddev", "min", "max", "n"] {
            get(run, &format!("summary.{dir}.iops.{k}"));
            get(run, &format!("summary.{dir}.bw_bytes.{k}"));
        }
    }
    get(rep, "cpu.user_s");
    get(rep, "cpu.sys_s");
    // `device` is an object here (a disk-backed file) with the five keys, or null when
    // the filesystem has no visible block device; the key itself must exist.
    assert!(rep.as_object().unwrap().contains_key("device"));
    if !rep["device"].is_null() {
        for k in ["name", "read_ios", "read_bytes", "write_ios", "write_bytes"] {
            get(rep, &format!("device.{k}"));
        }
    }
    let point = get(rep, "series.0");
    for k in [
        "t_s",
        "read_iops",
        "write_iops",
        "read_bw_bytes",
        "write_bw_bytes",
        "lat_mean_ns",
        "lat_p99_ns",
    ] {
        get(point, k);
    }
    // A size-based run moves the span once: 4 MiB / 4 KiB = 1024 I/Os, split by the mix.
    let ios = rep["read"]["ios"].as_u64().unwrap() + rep["write"]["ios"].as_u64().unwrap();
    assert_eq!(ios, 1024);
    let reads = rep["read"]["ios"].as_u64().unwrap();
    assert!(
        (400..=624).contains(&reads),
        "50% mix gave {reads} reads of 1024"
    );
    assert!(!f.exists(), "the file iomark created is removed");
}

#[test]
fn repeat_gives_each_repetition_and_statistics() {
    let dir = tmp();
    let f = dir.path().join("r.dat");
    let doc = run_json(&[
        "run",
        "--rw",
        "randread",
        "--size",
        "2m",
        "--repeat",
        "3",
        f.to_str().unwrap(),
    ]);
    let run = &doc["runs"][0];
    let reps = run["repetitions"].as_array().unwrap();
    assert_eq!(reps.len(), 3);
    let iops: Vec<f64> = reps
        .iter()
        .map(|r| r["read"]["iops"].as_f64().unwrap())
        .collect();
    let mean = iops.iter().sum::<f64>() / 3.0;
    let s = &run["summary"]["read"]["iops"];
    assert_eq!(s["n"], 3);
    assert!((s["mean"].as_f64().unwrap() - mean).abs() < 1e-6 * mean);
    let min = iops.iter().cloned().fold(f64::INFINITY, f64::min);
    assert_eq!(s["min"].as_f64().unwrap(), min);
    let var = iops.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0;
    assert!((s["stddev"].as_f64().unwrap() - var.sqrt()).abs() <= 1e-6 * mean);
}

#[test]
fn engines_agree_on_what_a_size_based_workload_moves() {
    // Conformance: one workload, every engine, the same I/O counts and bytes, and (same
    // seed) the same read/write split.
    let dir = tmp();
    let mut seen = Vec::new();
    for engine in ["psync", "io_uring", "null"] {
        if engine == "io_uring" && iomark::io::engine::probe_io_uring().is_err() {
            assert!(require("io_uring", false));
            continue;
        }
        let f = dir.path().join(format!("c-{engine}.dat"));
        let qd = if engine == "psync" { "1" } else { "8" };
        let doc = run_json(&[
            "run",
            "--engine",
            engine,
            "--rw",
            "randrw",
            "--rwmixread",
            "70",
            "--size",
            "8m",
            "--bs",
            "16k",
            "--qd",
            qd,
            "--jobs",
            "2",
            "--io-size",
            "4m",
            "--seed",
            "7",
            f.to_str().unwrap(),
        ]);
        let rep = &doc["runs"][0]["repetitions"][0];
        let r = (
            rep["read"]["ios"].as_u64().unwrap(),
            rep["write"]["ios"].as_u64().unwrap(),
        );
        let b = (
            rep["read"]["bytes"].as_u64().unwrap(),
            rep["write"]["bytes"].as_u64().unwrap(),
        );
        assert_eq!(r.0 + r.1, 2 * 256, "{engine}: 2 jobs × 4 MiB / 16 KiB");
        assert_eq!(b.0 + b.1, 2 * (4 << 20), "{engine}");
        seen.push((engine, r));
    }
    for w in seen.windows(2) {
        assert_eq!(
            w[0].1, w[1].1,
            "{} and {} split reads/writes differently",
            w[0].0, w[1].0
        );
    }
}

#[test]
fn time_based_run_lasts_its_runtime_and_fills_the_series() {
    let dir = tmp();
    let f = dir.path().join("tb.dat");
    let doc = run_json(&[
        "run",
        "--rw",
        "randread",
        "--size",
        "8m",
        "--runtime",
        "2s",
        "--ramp",
        "500ms",
        "--interval",
        "500ms",
        "--qd",
        "4",
        f.to_str().unwrap(),
    ]);
    let rep = &doc["runs"][0]["repetitions"][0];
    let el = rep["elapsed_s"].as_f64().unwrap();
    assert!((el - 2.0).abs() < 0.01, "elapsed {el}");
    let series = rep["series"].as_array().unwrap();
    assert!((3..=5).contains(&series.len()), "{} points", series.len());
    let sum: f64 = series
        .iter()
        .map(|p| p["read_iops"].as_f64().unwrap() * 0.5)
        .sum();
    let ios = rep["read"]["ios"].as_f64().unwrap();
    assert!(
        (sum - ios).abs() / ios < 0.02,
        "series sums to {sum}, run counted {ios}"
    );
}

#[test]
fn null_engine_needs_only_a_size_and_creates_nothing() {
    let dir = tmp();
    let out = iomark()
        .current_dir(dir.path())
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "64m",
            "--rw",
            "randwrite",
            "--json",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_success(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["runs"][0]["repetitions"][0]["write"]["ios"], 16384);
    assert!(doc["runs"][0]["repetitions"][0]["device"].is_null());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing created"
    );
    iomark()
        .args(["run", "--engine", "null"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--size"));
}

#[test]
fn existing_foreign_file_is_read_but_written_only_with_overwrite() {
    let dir = tmp();
    let f = dir.path().join("foreign.dat");
    let content: Vec<u8> = (0..(1 << 20)).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&f, &content).unwrap();
    let p = f.to_str().unwrap();
    let doc = run_json(&["run", "--rw", "read", "--bs", "64k", p]);
    assert_eq!(doc["runs"][0]["repetitions"][0]["read"]["ios"], 16);
    assert_eq!(doc["runs"][0]["target"]["created"], false);
    let out = iomark().args(["run", "--rw", "write", p]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--overwrite"), "{err}");
    assert_eq!(
        std::fs::read(&f).unwrap(),
        content,
        "refused write left the file alone"
    );
    run_json(&["run", "--rw", "write", "--bs", "64k", "--overwrite", p]);
    assert!(f.exists(), "a file iomark did not create is never removed");
    assert_ne!(std::fs::read(&f).unwrap(), content, "--overwrite wrote it");
}

#[test]
fn a_refused_symbolic_link_names_the_file_it_points_to() {
    // A link the user may take for a stale file of their own: the refusal says where a
    // write would land, so that --overwrite is not taken blindly.
    let dir = tmp();
    let theirs = dir.path().join("mine.dat");
    std::fs::write(&theirs, vec![7u8; 1 << 20]).unwrap();
    let link = dir.path().join("a.0.0");
    std::os::unix::fs::symlink(&theirs, &link).unwrap();
    let out = (iomark().args(["run", "--rw", "write", "--size", "1m"]))
        .arg(&link)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!("a symbolic link to {}", theirs.display());
    assert!(err.contains(&want), "{err}");
    assert_eq!(std::fs::read(&theirs).unwrap(), vec![7u8; 1 << 20]);
}

#[test]
fn keep_leaves_the_file_and_iomark_may_write_its_own_file_again() {
    let dir = tmp();
    let f = dir.path().join("kept.dat");
    let p = f.to_str().unwrap();
    run_json(&["run", "--rw", "write", "--size", "1m", "--keep", p]);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 1 << 20);
    // Marked as iomark's own (where the filesystem takes user xattrs): no --overwrite needed.
    let marked = xattr_supported(&f);
    let out = iomark()
        .args(["run", "--rw", "write", "--quiet", p])
        .output()
        .unwrap();
    if marked {
        assert_success(&out);
    } else {
        assert_eq!(out.status.code(), Some(2));
    }
    assert!(f.exists(), "not created in this run, so not removed");
    if !marked {
        return;
    }
    // Its own writes keep it iomark's: a third run writes it too.
    let write = |extra: &[&str]| {
        iomark()
            .args(["run", "--rw", "randwrite", "--runtime", "0.2", "--quiet"])
            .args(extra)
            .arg(p)
            .output()
            .unwrap()
    };
    assert_success(&write(&[]));
    // Someone copies other data over it (same inode, same mark): no longer iomark's.
    let theirs: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 253) as u8).collect();
    std::fs::write(&f, &theirs).unwrap();
    let out = write(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("was kept by iomark and has changed since"),
        "{err}"
    );
    assert_eq!(std::fs::read(&f).unwrap(), theirs, "refused: untouched");
    assert_success(&write(&["--overwrite"]));
    assert_ne!(std::fs::read(&f).unwrap(), theirs, "--overwrite wrote it");
}

fn xattr_supported(f: &std::path::Path) -> bool {
    let c = std::ffi::CString::new(f.to_str().unwrap()).unwrap();
    // Safety: NUL-terminated strings; size 0 only asks for the length.
    unsafe { libc::getxattr(c.as_ptr(), c"user.iomark".as_ptr(), std::ptr::null_mut(), 0) >= 0 }
}

#[test]
fn output_file_is_written_and_stdout_has_the_summary() {
    let dir = tmp();
    let f = dir.path().join("o.dat");
    let out_json = dir.path().join("res.json");
    let out = iomark()
        .args(["run", "--rw", "randread", "--size", "2m", "-o"])
        .arg(&out_json)
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("IOPS") && text.contains("p99"), "{text}");
    let doc = read_json(&out_json);
    assert_eq!(doc["runs"][0]["repetitions"][0]["read"]["ios"], 512);
}

#[test]
fn end_fsync_and_fsync_every_n_are_counted() {
    let dir = tmp();
    let f = dir.path().join("s.dat");
    let doc = run_json(&[
        "run",
        "--rw",
        "write",
        "--size",
        "1m",
        "--bs",
        "4k",
        "--buffered",
        "--fsync",
        "64",
        "--end-fsync",
        f.to_str().unwrap(),
    ]);
    // 256 writes: an fsync after each 64 (the last one makes way for the final flush
    // only once all writes are issued), plus the final one.
    let n = doc["runs"][0]["repetitions"][0]["fsyncs"].as_u64().unwrap();
    assert!((4..=5).contains(&n), "{n} fsyncs");
    // Time-based, each job's final flush comes after the window's end: made and timed,
    // and counted (it said 0).
    let doc = run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--size",
        "4m",
        "--jobs",
        "2",
        "--runtime",
        "300ms",
        "--buffered",
        "--end-fsync",
        f.to_str().unwrap(),
    ]);
    let n = doc["runs"][0]["repetitions"][0]["fsyncs"].as_u64();
    assert_eq!(n, Some(2), "one final flush per job");
}

#[test]
fn quick_benchmark_runs_every_test_and_removes_its_file() {
    let dir = tmp();
    let out = iomark()
        .current_dir(dir.path())
        .args([
            "quick",
            "--size",
            "16m",
            "--runtime",
            "1s",
            "--ramp",
            "0",
            "--json",
        ])
        .output()
        .unwrap();
    assert_success(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 6, "{names:?}");
    for r in doc["runs"].as_array().unwrap() {
        let rep = &r["repetitions"][0];
        let ios = rep["read"]["ios"].as_u64().unwrap() + rep["write"]["ios"].as_u64().unwrap();
        assert!(ios > 0, "{} did no I/O", r["name"]);
    }
    let table = String::from_utf8_lossy(&out.stderr);
    assert!(
        table.contains("randwrite 4k qd1") && table.contains("MB/s"),
        "{table}"
    );
    // Says what it measures before, and how long it took and that the file is gone after
    // (issue 12, item 14).
    for needle in [
        "engine ",
        "16 MiB, made now and removed at the end",
        "about 0:0",
        "took 0:",
    ] {
        assert!(table.contains(needle), "{needle:?} not in {table}");
    }
    assert!(table.contains("the test file was removed"), "{table}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "quick file removed"
    );
}

#[test]
fn same_seed_same_offsets() {
    // Determinism end to end: a kept file written twice with the same seed has the same
    // bytes (same offsets, same data); another seed gives other bytes.
    let dir = tmp();
    let write = |name: &str, seed: &str| {
        let f = dir.path().join(name);
        run_json(&[
            "run",
            "--rw",
            "randwrite",
            "--size",
            "1m",
            "--io-size",
            "256k",
            "--seed",
            seed,
            "--keep",
            f.to_str().unwrap(),
        ]);
        std::fs::read(&f).unwrap()
    };
    let a = write("a.dat", "5");
    let b = write("b.dat", "5");
    let c = write("c.dat", "6");
    // The layout pass differs per file only through the seed too, so whole files compare.
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn runtime_and_io_size_together_stop_at_whichever_comes_first() {
    let dir = tmp();
    let f = dir.path().join("both.dat");
    // 256 KiB at 4 KiB is 64 I/Os: done long before 30 s.
    let doc = run_json(&[
        "run",
        "--rw",
        "randread",
        "--size",
        "4m",
        "--io-size",
        "256k",
        "--runtime",
        "30s",
        f.to_str().unwrap(),
    ]);
    let rep = &doc["runs"][0]["repetitions"][0];
    assert_eq!(rep["read"]["ios"], 64);
    let el = rep["elapsed_s"].as_f64().unwrap();
    assert!(el < 5.0, "elapsed {el} s: the size limit ended the run");
    let iops = rep["read"]["iops"].as_f64().unwrap();
    assert!((iops * el - 64.0).abs() < 1e-6);
}

/// probe12 finding 1: `--io-size 2x` with `--runtime` was dropped (the run went on for
/// the whole runtime, many times the span); both hold, whichever ends first, and the
/// document records the bytes the multiple came to.
#[test]
fn io_size_multiple_and_runtime_together_stop_at_whichever_comes_first() {
    let dir = tmp();
    let f = dir.path().join("both.dat");
    // 2x a 1 MiB span at 4 KiB is 512 writes: done long before 30 s.
    let doc = run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--size",
        "1m",
        "--io-size",
        "2x",
        "--runtime",
        "30s",
        f.to_str().unwrap(),
    ]);
    let run = &doc["runs"][0];
    let rep = &run["repetitions"][0];
    assert_eq!(rep["write"]["ios"], 512, "{rep:#}");
    let el = rep["elapsed_s"].as_f64().unwrap();
    assert!(el < 10.0, "elapsed {el} s: the volume ended the run");
    assert_eq!(run["spec"]["io_size"], 2 << 20);
    assert_eq!(run["spec"]["io_spans"], 2.0);
    // What --as-fio writes for it: fio stops at io_size or the runtime too.
    let fio = stdout_of(&[
        "run",
        "--rw",
        "randwrite",
        "--size",
        "1m",
        "--io-size",
        "2x",
        "--runtime",
        "30s",
        "--engine",
        "null",
        "--as-fio",
    ]);
    let fio = String::from_utf8(fio).unwrap();
    assert!(
        fio.contains("io_size=2097152") && !fio.contains("time_based"),
        "{fio}"
    );
    // The write-saturation suite's 4x limit holds with a --runtime (null engine: fast),
    // and its plan says so.
    let plan = stdout_of(&[
        "suite",
        "wsat",
        "--engine",
        "null",
        "--size",
        "1m",
        "--runtime",
        "30s",
        "--dry-run",
    ]);
    let plan = String::from_utf8(plan).unwrap();
    assert!(plan.contains("1x(0s+30s or 4x span)"), "{plan}");
    let doc = run_json(&[
        "suite",
        "wsat",
        "--engine",
        "null",
        "--size",
        "1m",
        "--runtime",
        "30s",
    ]);
    let rep = &doc["runs"][0]["repetitions"][0];
    assert_eq!(rep["write"]["ios"], 1024, "4x 1 MiB at 4 KiB: {rep:#}");
}

#[test]
fn syncs_given_to_jobs_that_only_read_are_said_to_do_nothing() {
    // A study's --fsync reaches its read tests too: those say it does nothing there, the
    // write tests stay quiet.
    let plan = dry_run(&[
        "corners", "--fsync", "4", "--engine", "null", "--size", "16m",
    ]);
    let mut seen = (0, 0);
    for run in plan["runs"].as_array().unwrap() {
        let rw = run["spec"]["rw"].as_str().unwrap();
        let note = run["spec"]["engine_note"].as_str().unwrap_or("");
        if rw.contains("read") {
            let want = format!("--fsync 4 does nothing here: --rw {rw} writes nothing to sync");
            assert_eq!(note, want);
            seen.0 += 1;
        } else {
            // The write tests are quiet about the pattern; the null engine (of this
            // plan) flushes nothing, which is said.
            let null = "--fsync 4 does nothing here: --engine null opens no target to flush";
            assert_eq!(note, null, "{rw}");
            seen.1 += 1;
        }
    }
    assert!(seen.0 > 0 && seen.1 > 0, "{seen:?}");
    // A job that only trims: --fsync counts writes, so it does nothing either; a trim
    // job's --end-fsync still flushes (the holes punched), so it is not mentioned.
    let doc = run_json(&[
        "run",
        "--engine",
        "null",
        "--rw",
        "randtrim",
        "--fsync",
        "1",
        "--end-fsync",
        "--size",
        "16m",
        "--runtime",
        "1s",
    ]);
    let warnings = doc["runs"][0]["warnings"].to_string();
    let want =
        "--fsync 1 does nothing here: --rw randtrim writes no data, and --fsync counts writes";
    assert!(warnings.contains(want), "{warnings}");
    // (With the null engine, the flush at the end does nothing either; a trim job's on a
    // target flushes the holes punched.)
    let want = "--end-fsync does nothing here: --engine null opens no target to flush";
    assert!(warnings.contains(want), "{warnings}");
    // The null engine's writes made no flush and count none: a run said "1527644
    // fsyncs" of a null engine.
    let doc = run_json(&[
        "run",
        "--engine",
        "null",
        "--rw",
        "write",
        "--fsync",
        "4",
        "--size",
        "16m",
        "--runtime",
        "1s",
    ]);
    let run = &doc["runs"][0];
    assert_eq!(run["repetitions"][0]["fsyncs"], 0, "{run}");
    let want = "--fsync 4 does nothing here: --engine null opens no target to flush";
    assert!(
        run["warnings"].to_string().contains(want),
        "{}",
        run["warnings"]
    );
}

#[test]
fn a_rate_cap_below_a_block_in_the_window_is_said_to_be_exceeded() {
    // 1 KiB/s for 1 s with 1 MiB blocks: the first block goes at once, 1024x the cap.
    // The note says so, with a bound the measured rate stays under.
    let capped = |bs: &str, rate: &str| {
        let args = ["--size", "16m", "--rw", "write", "--bs", bs, "--rate", rate];
        run_json(
            &[
                &["run", "--engine", "null", "--runtime", "1s"][..],
                &args[..],
            ]
            .concat(),
        )
    };
    let doc = capped("1m", "1k");
    let run = &doc["runs"][0];
    let warnings = run["warnings"].to_string();
    let at = warnings.find("can be up to ").expect(&warnings) + "can be up to ".len();
    let bound: f64 = warnings[at..].split('x').next().unwrap().parse().unwrap();
    let rep = &run["repetitions"][0];
    let rate = rep["write"]["bytes"].as_f64().unwrap() / rep["elapsed_s"].as_f64().unwrap();
    assert!(rate > 100.0 * 1024.0, "{rate} B/s: the cap was exceeded");
    assert!(
        rate <= bound * 1024.0 * 1.05,
        "{rate} B/s over the bound {bound}x"
    );
    // With 4 KiB blocks the cap holds and nothing is said.
    let warnings = capped("4k", "1m")["runs"][0]["warnings"].to_string();
    assert!(!warnings.contains("--rate"), "{warnings}");
}

/// A cap the run never reached was not said: "rate 20g/s" in the run's name at 291 MB/s
/// (probe 13b). It is, with what the jobs were allowed in all; a cap that held is not.
#[test]
fn a_rate_cap_the_run_stayed_below_is_said_to_be_unreached() {
    let warnings = |args: &[&str]| -> (String, f64) {
        let base = [
            "run",
            "--engine",
            "null",
            "--size",
            "16m",
            "--runtime",
            "500ms",
        ];
        let doc = run_json(&[&base[..], args].concat());
        let run = &doc["runs"][0];
        let got = run["summary"]["read"]["iops"]["mean"].as_f64().unwrap();
        (run["warnings"].to_string(), got)
    };
    // The null engine does tens of millions of reads a second, not 10^12.
    let (w, got) = warnings(&["--rate-iops", "1000000000000", "--jobs", "2"]);
    assert!(got < 0.9 * 2e12, "{got}");
    assert!(
        w.contains("the run stayed below its --rate-iops cap")
            && w.contains(
                "where 2000000000000 IOPS were allowed (2 jobs at 1000000000000 IOPS each)"
            ),
        "{w}"
    );
    let (w, _) = warnings(&["--rate", "100t"]);
    assert!(w.contains("the run stayed below its --rate cap"), "{w}");
    // A cap that held (2 jobs at 2000 IOPS: 4000 in all) says nothing.
    let (w, got) = warnings(&["--rate-iops", "2000", "--jobs", "2"]);
    assert!((got - 4000.0).abs() < 400.0, "{got}");
    assert!(!w.contains("stayed below"), "{w}");
}

#[test]
fn page_cache_options_given_to_a_direct_run_are_said_to_do_nothing() {
    let notes = |extra: &[&str]| {
        let args = [
            &[
                "run",
                "--engine",
                "null",
                "--size",
                "16m",
                "--runtime",
                "1s",
            ][..],
            extra,
        ];
        run_json(&args.concat())["runs"][0]["warnings"].to_string()
    };
    let w = notes(&["--fadvise", "random", "--invalidate", "pass"]);
    let want = "--fadvise random, --invalidate pass do nothing with direct I/O";
    assert!(w.contains(want), "{w}");
    // Buffered, they act: nothing said.
    let w = notes(&["--buffered", "--fadvise", "random"]);
    assert!(!w.contains("--fadvise"), "{w}");
}

/// probe12 finding 5: options accepted and ignored. `--write-bs` on a run that only
/// reads is said to do nothing there (as `--fsync` is); `--rw trimwrite` with `--bs` and
/// `--write-bs` apart is refused (it took one of them silently); a TARGET given to
/// `--engine null` is said not to be opened, and nothing is made there.
#[test]
fn options_a_run_cannot_use_are_named_not_dropped() {
    let note = |args: &[&str]| -> String {
        let doc = run_json(&[&["run", "--engine", "null", "--size", "1m"], args].concat());
        let spec = &doc["runs"][0]["spec"];
        assert_eq!(spec["bs"], 4096, "the reads keep their size");
        spec["engine_note"].as_str().unwrap_or("").to_string()
    };
    let n = note(&["--rw", "randread", "--bs", "4k", "--write-bs", "64k"]);
    assert!(
        n.contains(
            "--write-bs 64k does nothing here: --rw randread writes nothing (its reads use --bs 4k)"
        ),
        "{n}"
    );
    let n = note(&["--rw", "read", "--bsrange", "4k-4k", "--write-bs", "64k"]);
    assert!(n.contains("--write-bs 64k does nothing here"), "{n}");
    // A mix uses it: no note.
    let n = note(&["--rw", "randrw", "--write-bs", "4k"]);
    assert!(!n.contains("--write-bs"), "{n}");
    // --file-service with one target was accepted and did nothing, unsaid (probe 13b).
    let n = note(&["--file-service", "random"]);
    assert!(
        n.contains(
            "--file-service does nothing here: it serves several TARGETs, and one was given"
        ),
        "{n}"
    );

    let out = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "16m",
            "--rw",
            "trimwrite",
        ])
        .args(["--bs", "64k", "--write-bs", "4k"])
        .output()
        .unwrap();
    assert_refused(
        &out,
        "--rw trimwrite trims each block and then writes it, so --bs 64k and --write-bs 4k must be the same",
    );
    // A trim writes nothing: --bs and --write-bs apart are refused, not one of them
    // silently taken (it was --write-bs).
    for rw in ["trim", "randtrim"] {
        let out = iomark()
            .args(["run", "--engine", "null", "--size", "16m", "--rw", rw])
            .args(["--bs", "4k", "--write-bs", "64k"])
            .output()
            .unwrap();
        assert_refused(
            &out,
            &format!(
                "--rw {rw} trims blocks of one size (--write-bs gives it when --bs does not), so --bs 4k and --write-bs 64k must be the same"
            ),
        );
    }
    // One size given either way is both sides.
    let doc = run_json(&[
        "run",
        "--engine",
        "null",
        "--size",
        "16m",
        "--rw",
        "trimwrite",
        "--write-bs",
        "64k",
    ]);
    assert_eq!(doc["runs"][0]["spec"]["bs"], 65536);

    let dir = tmp();
    let f = dir.path().join("never.dat");
    let doc = run_json(&[
        "run",
        "--engine",
        "null",
        "--size",
        "1m",
        "--rw",
        "randread",
        f.to_str().unwrap(),
    ]);
    let n = doc["runs"][0]["spec"]["engine_note"].as_str().unwrap_or("");
    assert!(
        n.contains(&format!(
            "--engine null does no I/O: {} is not opened",
            f.display()
        )),
        "{n}"
    );
    assert!(!f.exists());
    let out = iomark()
        .args(["run", "--engine", "null", "--runtime", "1s"])
        .arg(&f)
        .output()
        .unwrap();
    assert_refused(&out, "does not open");
}

/// probe12 finding 7c: a measured window in which no I/O completed printed and stored
/// 0 ns latencies (and reports and comparisons took them as measured). It says no I/O
/// completed, and its latencies are absent: "-" in reports and comparisons, spreads of
/// no value (`n` 0) in the summary.
#[test]
fn a_window_without_completed_io_has_no_latencies() {
    let dir = tmp();
    let o = dir.path().join("idle.json");
    let out = iomark()
        .args([
            "run",
            "--rw",
            "randread",
            "--thinktime",
            "3s",
            "--runtime",
            "1s",
        ])
        .args(["--ramp", "500ms", "--engine", "null", "--size", "1m", "-o"])
        .arg(&o)
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("no I/O completed in the measured window: no latencies")
            && !text.contains("p99 0 ns")
            && !text.contains("0 ns per I/O"),
        "{text}"
    );
    let run = &read_json(&o)["runs"][0];
    assert_eq!(run["repetitions"][0]["read"]["ios"], 0);
    for f in ["lat_p50_ns", "lat_p99_ns", "lat_mean_ns"] {
        assert_eq!(run["summary"]["read"][f]["n"], 0, "{f}: {run:#}");
    }
    assert!(
        run["warnings"]
            .to_string()
            .contains("no I/O completed in its measured window"),
        "{run:#}"
    );
    let md = stdout_of(&[
        std::ffi::OsStr::new("report"),
        o.as_os_str(),
        "--format".as_ref(),
        "md".as_ref(),
    ]);
    let md = String::from_utf8(md).unwrap();
    let row = md.lines().find(|l| l.starts_with("| randread")).unwrap();
    // p50, p99 and the latency kind (the measured-data columns follow: a read row's "-";
    // then the CPU per I/O, none without an I/O).
    assert!(
        row.ends_with("| - | - | lat | - | - | - | - | - |"),
        "{row}"
    );
    let cmp = stdout_of(&[
        std::ffi::OsStr::new("compare"),
        o.as_os_str(),
        o.as_os_str(),
        "--format".as_ref(),
        "md".as_ref(),
    ]);
    let cmp = String::from_utf8(cmp).unwrap();
    let lat: Vec<&str> = cmp.lines().filter(|l| l.contains(" µs ")).collect();
    assert!(!lat.is_empty(), "{cmp}");
    for l in lat {
        assert!(l.contains("µs read | - | - |"), "{l}");
    }
}

/// Think time that caps the rate below a minimum was found only at run time, with advice
/// to "find what slowed the job" (probe 13b); `--thinktime-blocks` was not in the run's
/// name (975 and 7647 IOPS under one name), and `--qd 8` with a pause after every I/O ran
/// one I/O at a time with no word. Refused before any I/O, named, and said.
#[test]
fn think_time_limits_are_said_before_the_run() {
    let base = [
        "run",
        "--engine",
        "null",
        "--size",
        "16m",
        "--thinktime",
        "2ms",
    ];
    let out = iomark()
        .args(base)
        .args(["--rate-iops-min", "900", "--runtime", "1s"])
        .output()
        .unwrap();
    assert_refused(&out, "--rate-iops-min 900 cannot be met");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("at most 500 IOPS"),
        "{out:?}"
    );
    let out = iomark()
        .args(base)
        .args(["--bs", "4k", "--rate-min", "4m", "--runtime", "1s"])
        .output()
        .unwrap();
    assert_refused(&out, "--rate-min 4 MiB/s cannot be met");
    // Eight per pause allow 4000 IOPS: accepted.
    let doc = run_json(
        &[
            &base[..],
            &["--thinktime-blocks", "8", "--rate-iops-min", "900"],
            &["--qd", "8", "--runtime", "500ms"],
        ]
        .concat(),
    );
    let eight = &doc["runs"][0];
    let doc = run_json(&[&base[..], &["--qd", "8", "--runtime", "500ms"]].concat());
    let one = &doc["runs"][0];
    let iops = |r: &serde_json::Value| r["summary"]["read"]["iops"]["mean"].as_f64().unwrap();
    // What the note says is what the run did: one I/O per 2 ms pause, not eight.
    assert!(
        iops(one) < 600.0 && iops(eight) > 2000.0,
        "{} {}",
        iops(one),
        iops(eight)
    );
    let note = one["spec"]["engine_note"].to_string();
    assert!(
        note.contains("--qd 8 with --thinktime after every 1 I/O: each job stops issuing once 1 I/O has completed")
            && note.contains("the depth in effect is nearer 1 than 8"),
        "{note}"
    );
    assert!(
        !eight["spec"]["engine_note"]
            .to_string()
            .contains("depth in effect")
    );
    assert_ne!(one["name"], eight["name"]);
    assert!(
        eight["name"].to_string().contains("/8 I/Os"),
        "{}",
        eight["name"]
    );
}

/// `--time-based` with `--io-size` stopped after the io_size (16 I/Os of 1 MiB in 5 ms
/// where fio ran the whole second, probe 14b), and `--time-based=0` was taken for on
/// (fio's time_based=0 stops after one pass). fio's null engine on the same job says how
/// many I/Os each way does; iomark's counts are checked against it.
#[test]
fn time_based_is_fios_with_io_size_and_when_off() {
    let ios = |doc: &serde_json::Value| {
        doc["runs"][0]["repetitions"][0]["read"]["ios"]
            .as_u64()
            .unwrap()
    };
    let base = [
        "run", "--engine", "null", "--size", "64m", "--bs", "1m", "--rw", "read",
    ];
    let on = run_json(
        &[
            &base[..],
            &["--io-size", "16m", "--time-based", "--runtime", "300ms"],
        ]
        .concat(),
    );
    assert!(
        ios(&on) > 1000,
        "time based: the whole runtime, not 16 I/Os: {}",
        ios(&on)
    );
    let w = on["runs"][0]["warnings"].to_string();
    assert!(
        w.contains("--io-size 16m does nothing with --time-based"),
        "{w}"
    );
    let off = run_json(&[&base[..], &["--time-based=0", "--runtime", "5s"]].concat());
    assert_eq!(ios(&off), 64, "one pass over the 64 MiB span");
    if !crate::common::require_tool("fio", "fio, to compare") {
        return;
    }
    let fio = |extra: &[&str]| -> u64 {
        let out = std::process::Command::new("fio")
            .args([
                "--name=t",
                "--ioengine=null",
                "--size=64m",
                "--bs=1m",
                "--rw=read",
            ])
            .args(extra)
            .args(["--output-format=json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["jobs"][0]["read"]["total_ios"].as_u64().unwrap()
    };
    assert!(fio(&["--io_size=16m", "--time_based", "--runtime=300ms"]) > 1000);
    assert_eq!(fio(&["--time_based=0", "--runtime=5"]), 64);
}

/// A switch given `=0` is off, as in fio: `--stonewall=0` turned --verify on and was
/// refused, `--direct=1 --buffered=0` was a contradiction (probe 14b); an option without
/// the one it needs got clap's "required arguments were not provided".
#[test]
fn a_switch_given_zero_is_off() {
    let run = |extra: &[&str]| {
        iomark()
            .args([
                "run",
                "--engine",
                "null",
                "--size",
                "1m",
                "--runtime",
                "50ms",
                "--rw",
                "write",
            ])
            .args(["--json", "-q"])
            .args(extra)
            .output()
            .unwrap()
    };
    for ok in [
        &["--direct=1", "--buffered=0"][..],
        &["--stonewall=0", "--verify=0"],
        &["--stonewall=0"],
        // A switch given =0 needs nothing: --split-targets needs --file-service when on.
        &["--split-targets=0"],
    ] {
        let out = run(ok);
        assert_success(&out);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let spec = &doc["runs"][0]["spec"];
        assert_eq!(spec["verify"], false, "{ok:?}");
        assert_eq!(spec["direct"], true, "{ok:?}");
    }
    for (bad, says) in [
        (
            &["--stonewall", "--verify"][..],
            "--stonewall and --verify contradict each other",
        ),
        (
            &["--verify", "--stonewall"],
            "--stonewall and --verify contradict each other",
        ),
        (&["--direct", "--buffered"], "contradict each other"),
        (
            &["--thinktime-blocks", "4"],
            "--thinktime-blocks needs --thinktime; add it or drop --thinktime-blocks",
        ),
        (
            &["--split-targets"],
            "--split-targets needs --file-service; add it or drop --split-targets",
        ),
        // A switch it needs given =0 is off: --sqpoll-cpu ran without a SQPOLL thread,
        // and --as-fio wrote a job file iomark then refused.
        (
            &["--sqpoll=0", "--sqpoll-cpu", "0"],
            "--sqpoll-cpu needs --sqpoll, which is off (--sqpoll=0); turn it on or drop --sqpoll-cpu",
        ),
        // fio's switch for iomark's default: clap suggested its opposite (--random_map).
        (
            &["--norandommap"],
            "--norandommap is iomark's default (each random offset drawn on its own, as fio's norandommap): drop it",
        ),
    ] {
        assert_refused(&run(bad), says);
    }
    // iomark's --runtime was said to be "always time based", which --time-based=0 denies.
    let out = iomark()
        .args(["run", "--engine", "null", "--size", "1m", "--time-based"])
        .output()
        .unwrap();
    assert_refused(
        &out,
        "--time-based needs --runtime: it runs the whole runtime (e.g. --runtime 30s)",
    );
}

/// `quick --engine null` announced a file "made now and removed at the end" and direct
/// I/O, then said the file was not opened, and "the test file was removed" (probe 14b).
/// It says what it does: no file, no I/O; and leaves the directory as it was.
#[test]
fn quick_on_the_null_engine_says_no_file_is_made() {
    let dir = tmp();
    let out = iomark()
        .args([
            "quick",
            "--engine",
            "null",
            "--runtime",
            "100ms",
            "--ramp",
            "0",
            "--size",
            "16m",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("no file: --engine null does no I/O"),
        "{text}"
    );
    assert!(
        text.contains("engine null, no I/O") && text.contains("no test file was made"),
        "{text}"
    );
    assert!(
        !text.contains("made now") && !text.contains("O_DIRECT") && !text.contains("removed"),
        "{text}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Probe 14b: options that did nothing, unsaid, or advice that did not work. `--drop-caches`
/// on a direct run; `--bs` on a write-only run with `--write-bs`; a minimum rate on a run
/// shorter than one cycle; mmap's cache note advised `--direct`, which mmap refuses;
/// `--rwmixwrite` on a pattern that is no mix was refused naming `--rwmixread`.
#[test]
fn options_that_do_nothing_are_said_and_advice_works() {
    let warnings = |extra: &[&str]| {
        let base = [
            "run",
            "--engine",
            "null",
            "--size",
            "16m",
            "--runtime",
            "300ms",
        ];
        run_json(&[&base[..], extra].concat())["runs"][0]["warnings"].to_string()
    };
    if crate::common::is_root() {
        // `--drop-caches --buffered` drops the whole machine's page cache: not while a test
        // that counts a warm span's device reads runs beside this one (fio_cache's warm
        // fio run read 40 of its 256 blocks in a full run).
        let _cache = crate::common::page_cache_lock();
        let w = warnings(&["--drop-caches"]);
        assert!(
            w.contains("--drop-caches does nothing with direct I/O"),
            "{w}"
        );
        assert!(!warnings(&["--drop-caches", "--buffered"]).contains("--drop-caches"));
    }
    let w = warnings(&["--rw", "write", "--bs", "8k", "--write-bs", "64k"]);
    assert!(
        w.contains("--bs 8k does nothing here: --rw write reads nothing"),
        "{w}"
    );
    let doc = run_json(&[
        "run",
        "--engine",
        "null",
        "--size",
        "16m",
        "--runtime",
        "200ms",
        "--rw",
        "write",
        "--bs",
        "8k",
        "--write-bs",
        "64k",
    ]);
    assert_eq!(
        doc["runs"][0]["spec"]["bs"], 65536,
        "the writes' size is what ran"
    );
    let w = warnings(&["--rate-iops-min", "1"]);
    assert!(
        w.contains("--rate-iops-min is checked over each whole 1000ms cycle"),
        "{w}"
    );
    assert!(!warnings(&["--rate-iops-min", "1", "--rate-cycle", "100ms"]).contains("cycle"));
    // mmap cannot bypass the cache: its advice names another engine.
    let dir = tmp();
    let f = dir.path().join("m.dat");
    let doc = run_json(&[
        "run",
        "--engine",
        "mmap",
        "--rw",
        "randread",
        "--size",
        "16m",
        "--runtime",
        "200ms",
        f.to_str().unwrap(),
    ]);
    let w = doc["runs"][0]["warnings"].to_string();
    assert!(
        w.contains("another engine with --direct (e.g. --engine io_uring --direct)"),
        "{w}"
    );
    let out = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "1m",
            "--rw",
            "randread",
            "--rwmixwrite",
            "30",
        ])
        .output()
        .unwrap();
    assert_refused(&out, "--rwmixwrite applies to mixes");
}

/// Wording from probe 14b: data options on the null engine were refused as if it had an
/// existing file ("on the existing null … name a new file"); one target was "1 were
/// given".
#[test]
fn refusals_name_what_was_given() {
    let out = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "1m",
            "--rw",
            "randread",
            "--compress",
            "50",
        ])
        .output()
        .unwrap();
    assert_refused(
        &out,
        "--rw randread writes nothing (and --engine null does no I/O)",
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("existing"),
        "{out:?}"
    );
    let out = iomark()
        .args([
            "suite",
            "corners",
            "--targets-sweep",
            "1,2",
            "--dry-run",
            "/tmp/iomark-x.dat",
        ])
        .output()
        .unwrap();
    assert_refused(&out, "asks for 2 targets but 1 was given");
}

/// `--rwmixread 60 --rwmixwrite 40` say the same mix, and fio takes both: they were
/// refused ("both set the mix"). Now taken when they add up to 100, and refused, naming
/// both figures, when they do not.
#[test]
fn rwmixread_and_rwmixwrite_that_agree_are_taken() {
    let base = ["run", "--engine", "null", "--size", "1m", "--rw", "randrw"];
    let doc = crate::common::run_json(
        &[
            &base[..],
            &[
                "--rwmixread",
                "60",
                "--rwmixwrite",
                "40",
                "--runtime",
                "0.1s",
            ],
        ]
        .concat(),
    );
    assert_eq!(
        doc["runs"][0]["spec"]["rwmixread"], 60,
        "{}",
        doc["runs"][0]["spec"]
    );
    let out = iomark()
        .args(base)
        .args(["--rwmixread", "60", "--rwmixwrite", "30"])
        .output()
        .unwrap();
    assert_refused(
        &out,
        "--rwmixread 60 and --rwmixwrite 30 both set the mix and do not add up to 100",
    );
}

/// A `--rate-cycle` shorter than the main thread's quarter-second tick was checked over a
/// tick: 100 ms said "over the 0.25 s cycle". Now each cycle is checked when it ends.
#[test]
fn a_short_rate_cycle_is_checked_over_its_own_length() {
    let out = iomark()
        .args([
            "run", "--engine", "null", "--size", "1m", "--rw", "randread",
        ])
        .args(["--rate-iops-min", "100000000000", "--rate-cycle", "50ms"])
        .args(["--runtime", "3s", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let secs: f64 = err
        .split(" over the ")
        .nth(1)
        .and_then(|s| s.split(" s cycle").next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no cycle in: {err}"));
    assert!(
        (0.045..0.2).contains(&secs),
        "a 50 ms cycle checked over {secs} s: {err}"
    );
}

/// `quick --runtime 0` was told to "leave it out for a size-based run": quick has no
/// size-based run (without it each test runs 3 s).
#[test]
fn quick_without_time_is_told_its_tests_are_timed() {
    let dir = tmp();
    let out = iomark()
        .args(["quick", "--runtime", "0"])
        .arg(dir.path())
        .output()
        .unwrap();
    crate::common::assert_refused(&out, "quick runs each test for a time");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("size-based"));
}

/// `--thinktime 0` was told to give a unit while `0s` (and `--ramp 0`) were taken; a
/// minimum rate above the cap was named in raw bytes ("20971520 is above 10485760").
#[test]
fn a_bare_zero_think_time_and_rates_in_their_units() {
    let dir = tmp();
    let f = dir.path().join("t.dat");
    let f = f.to_str().unwrap();
    let args = [
        "run",
        "--rw",
        "randread",
        "--size",
        "1m",
        "--io-size",
        "64k",
    ];
    run_json(&[&args[..], &["--thinktime", "0", f]].concat());
    let out = iomark()
        .args(args)
        .args(["--rate", "10m", "--rate-min", "20m", f])
        .output()
        .unwrap();
    assert_refused(&out, "--rate-min 20 MiB/s is above --rate 10 MiB/s");
}

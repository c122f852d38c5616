//! Studies: plans (--dry-run) for every preset and a matrix file, interruption and
//! --resume, cache labelling, and the matrix file's bad input.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{
    Zram, assert_success, dry_run, iomark, iomark_process, read_json, run_json, signal, tmp,
};

/// The runs of a --dry-run plan: (test, param=value, rw, bs, qd, estimate).
fn plan(args: &[&str]) -> Vec<Vec<String>> {
    dry_run(args)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = &r["spec"];
            vec![
                r["index"].to_string(),
                r["study"]["test"].as_str().unwrap().to_string(),
                format!(
                    "{}={}",
                    r["study"]["param"].as_str().unwrap(),
                    r["study"]["value"].as_str().unwrap()
                ),
                s["rw"].as_str().unwrap().to_string(),
                s["bs"].to_string(),
                s["qd"].to_string(),
                r["estimate_s"].to_string(),
            ]
        })
        .collect()
}

#[test]
fn dry_run_plans_every_preset() {
    let dir = tmp();
    let t = dir.path().join("t.dat");
    let t = t.to_str().unwrap();
    for (preset, n) in [
        ("quick", 6),
        ("corners", 6),
        ("compress", 15),
        ("qd", 18),
        ("bs", 64),
        ("cache", 8),
    ] {
        let rows = plan(&[preset, t]);
        assert_eq!(rows.len(), n, "{preset}");
    }
    // Parameters: the qd sweep is 1..256 for randread then randwrite.
    let rows = plan(&["qd", t]);
    let qds: Vec<&str> = rows.iter().take(9).map(|r| r[5].as_str()).collect();
    assert_eq!(qds, ["1", "2", "4", "8", "16", "32", "64", "128", "256"]);
    assert!(
        rows[..9]
            .iter()
            .all(|r| r[1] == "randread" && r[3] == "randread")
    );
    // Overrides: a list replaces the sweep, a scalar overrides the preset's default.
    let rows = plan(&["qd", "--qd", "2,8", "--bs", "8k", t]);
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r[4] == "8192"));
    // The compress study fills each level, then the four corners.
    let rows = plan(&["compress", "--compress", "90,10", t]);
    assert_eq!(rows.len(), 10);
    assert_eq!(
        (rows[0][1].as_str(), rows[0][2].as_str()),
        ("fill", "compress=90")
    );
    // Nothing was created by planning.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// The plan's JSON and its listing reckon the time alike: a steady study's 5 to 25
/// rounds and its size-based precondition at the assumed rate are in both (the JSON used
/// to leave both out, 60 s where the listing said 5:04 to 25:04).
#[test]
fn dry_run_json_and_listing_reckon_the_same_time() {
    let dir = tmp();
    let t = dir.path().join("t.dat");
    let t = t.to_str().unwrap();
    let plan = dry_run(&["steady", "--size", "1g", t]);
    let runs = plan["runs"].as_array().unwrap();
    let pre = &runs[0];
    assert_eq!(pre["estimate_basis"], "assumed_rate");
    let assumed = plan["assumed_bytes_per_s"].as_f64().unwrap();
    // Two passes over 1 GiB at the assumed rate.
    let want = 2.0 * (1u64 << 30) as f64 / assumed;
    assert!(
        (pre["estimate_s"].as_f64().unwrap() - want).abs() < 1e-6,
        "{pre}"
    );
    let round = runs[1]["estimate_s"].as_f64().unwrap();
    assert_eq!(runs[1]["estimate_basis"], "runtime");
    let (lo, hi) = (
        plan["estimate_s"].as_f64().unwrap(),
        plan["estimate_max_s"].as_f64().unwrap(),
    );
    assert_eq!(plan["rounds"]["min"], 5);
    assert_eq!(plan["rounds"]["max"], 25);
    assert!((lo - (want + 5.0 * round)).abs() < 1e-6, "{plan}");
    assert!((hi - (want + 25.0 * round)).abs() < 1e-6, "{plan}");
    let out = iomark()
        .args(["suite", "steady", "--size", "1g", "--dry-run", t])
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let mmss = |s: f64| format!("{}:{:02}", s as u64 / 60, s as u64 % 60);
    let line = format!("estimated total: {} to {}", mmss(lo), mmss(hi));
    assert!(text.contains(&line), "{line:?} not in {text}");
    assert!(text.contains(&format!("~{}", mmss(want))), "{text}");
}

#[test]
fn dry_run_plans_a_matrix_file() {
    let dir = tmp();
    let m = dir.path().join("m.toml");
    std::fs::write(
        &m,
        "# three lists: 2 x 2 x 3 runs\nruntime = \"1s\"\n[vary]\nrw = [\"randread\", \"randwrite\"]\nbs = [\"4k\", \"64k\"]\nqd = [1, 8, 32]\n",
    )
    .unwrap();
    let t = dir.path().join("t.dat");
    let rows = plan(&["matrix", m.to_str().unwrap(), t.to_str().unwrap()]);
    assert_eq!(rows.len(), 12);
    // Order: rw, then bs, then qd (the last list is the rows of each table).
    let first: Vec<(&str, &str, &str)> = rows
        .iter()
        .take(4)
        .map(|r| (r[3].as_str(), r[4].as_str(), r[5].as_str()))
        .collect();
    assert_eq!(
        first,
        [
            ("randread", "4096", "1"),
            ("randread", "4096", "8"),
            ("randread", "4096", "32"),
            ("randread", "65536", "1")
        ]
    );
    assert_eq!(rows[0][1], "rw=randread bs=4k");
    assert!(
        rows.iter().all(|r| r[6] == "1.0"),
        "runtime 1 s, no ramp: {rows:?}"
    );
}

#[test]
fn matrix_bad_input_names_the_line() {
    let dir = tmp();
    let t = dir.path().join("t.dat");
    let cases = [
        ("[vary]\nqd = [1, 2]\nfrobs = [3]\n", "line 3"),
        ("runtime = \"1s\"\n[vary]\nqd = [\"deep\"]\n", "line 3"),
        ("[vary]\nbs = []\n", "line 2"),
        ("[vary]\nqd = [1,\n", "line"),
        ("runtime = 5\n[vary]\nqd = [true]\n", "line 3"),
    ];
    for (text, line) in cases {
        let m = dir.path().join("bad.toml");
        std::fs::write(&m, text).unwrap();
        let out = iomark()
            .args(["suite", "matrix"])
            .arg(&m)
            .arg(&t)
            .arg("--dry-run")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{text:?}: {err}");
        assert!(
            err.contains(line) && err.contains("bad.toml"),
            "{text:?}: {err}"
        );
    }
    let out = iomark()
        .args(["suite", "sideways", "--dry-run"])
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown suite"));
}

#[test]
fn cache_bound_runs_are_labelled() {
    // A buffered run that reads a 4 MiB span over and over for a second: after the first
    // pass the page cache serves everything, and the device's counters say so. On ext4
    // over a private loop device, so that no other process's reads count against it.
    use crate::common::{LoopDev, Mounted, is_root, require};
    if !require("root (a private loop device)", is_root()) {
        return;
    }
    let Some(dev) = LoopDev::new(64 << 20, false) else {
        return;
    };
    let Some(fs) = Mounted::ext4(dev.path()) else {
        return;
    };
    let f = fs.path().join("c.dat");
    let doc = run_json(&[
        "run",
        "--rw",
        "randread",
        "--size",
        "4m",
        "--runtime",
        "1",
        "--buffered",
        f.to_str().unwrap(),
    ]);
    let run = &doc["runs"][0];
    let hit = run["repetitions"][0]["page_cache_hit_pct"]
        .as_f64()
        .unwrap();
    assert!(hit > 50.0, "{hit}% from the page cache");
    assert_eq!(run["cache_bound"], true);
    let warnings = run["warnings"].to_string();
    assert!(
        warnings.contains("served from memory (page cache)"),
        "{warnings}"
    );
    // The advice given before the run is worded as advice.
    assert!(warnings.contains("may serve reads"), "{warnings}");
    // Direct I/O: nothing to measure, never cache-bound.
    let doc = run_json(&[
        "run",
        "--rw",
        "randread",
        "--size",
        "4m",
        f.to_str().unwrap(),
    ]);
    assert_eq!(doc["runs"][0]["cache_bound"], false);
    assert!(doc["runs"][0]["repetitions"][0]["page_cache_hit_pct"].is_null());
}

#[test]
fn interrupted_study_resumes_to_the_planned_document() {
    let dir = tmp();
    let t = dir.path().join("s.dat");
    let r = dir.path().join("r.json");
    let args = [
        "suite",
        "qd",
        "--qd",
        "1,2,4,8",
        "--runtime",
        "700ms",
        "--ramp",
        "0",
        "--size",
        "16m",
    ];
    let mut child = iomark_process()
        .args(args)
        .arg("-q")
        .arg("-o")
        .arg(&r)
        .arg(&t)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until three runs are complete, then interrupt.
    saved_until(&r, |d| {
        (d["runs"].as_array().unwrap().iter())
            .filter(|x| x["status"] == "complete")
            .count()
            >= 3
    });
    std::thread::sleep(Duration::from_millis(250));
    signal(&child, libc::SIGINT);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(!t.exists(), "the study's file is removed");
    let doc = read_json(&r);
    let runs = doc["runs"].as_array().unwrap();
    let complete = runs.iter().filter(|x| x["status"] == "complete").count();
    let interrupted = runs.iter().filter(|x| x["status"] == "interrupted").count();
    assert!(
        complete >= 3 && interrupted == 1,
        "{complete} complete, {interrupted} interrupted"
    );
    for x in runs.iter().filter(|x| x["status"] == "complete") {
        let rep = &x["repetitions"][0];
        let ios = rep["read"]["ios"].as_u64().unwrap() + rep["write"]["ios"].as_u64().unwrap();
        assert!(ios > 0 && (rep["elapsed_s"].as_f64().unwrap() - 0.7).abs() < 0.01);
    }
    // Resume: the rest runs, the finished runs are kept as they were.
    let kept: Vec<serde_json::Value> = runs
        .iter()
        .filter(|x| x["status"] == "complete")
        .cloned()
        .collect();
    let out = iomark()
        .args(args)
        .arg("-q")
        .arg("--resume")
        .arg(&r)
        .arg(&t)
        .output()
        .unwrap();
    assert_success(&out);
    let doc = read_json(&r);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8);
    assert!(runs.iter().all(|x| x["status"] == "complete"));
    for (a, b) in kept.iter().zip(runs) {
        assert_eq!(a, b, "finished runs are kept untouched");
    }
    // The document follows the plan: the same order of tests and values as --dry-run.
    let rows = plan(&[&args[1..], &[t.to_str().unwrap()]].concat());
    for (row, run) in rows.iter().zip(runs) {
        assert_eq!(run["study"]["test"].as_str().unwrap(), row[1]);
        assert_eq!(
            format!("qd={}", run["study"]["value"].as_str().unwrap()),
            row[2]
        );
    }
    assert!(!t.exists());
    // A different plan is refused.
    let out = iomark()
        .args([
            "suite",
            "qd",
            "--qd",
            "1,2",
            "--runtime",
            "700ms",
            "--ramp",
            "0",
            "--size",
            "16m",
            "-q",
            "--resume",
        ])
        .arg(&r)
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A study checks every run's permissions before the first I/O (issue 12, item 7):
/// `suite qd` on a device without --allow-write-device used to run all its read runs
/// and stop at the first write. Now nothing is read, and --dry-run says the same.
#[test]
fn a_study_is_refused_before_its_first_io() {
    use crate::common::{LoopDev, is_root, require};
    if !require("root (loop devices)", is_root()) {
        return;
    }
    let Some(dev) = LoopDev::new(16 << 20, false) else {
        return;
    };
    let before = dev.stat();
    let out = iomark()
        .args(["suite", "qd", "--runtime", "0.2", "--ramp", "0", "-q"])
        .arg(dev.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--allow-write-device"), "{err}");
    assert_eq!(dev.stat()[0], before[0], "no run read the device: {err}");
    let dry = iomark()
        .args(["suite", "qd", "--dry-run"])
        .arg(dev.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&dry.stderr);
    assert_eq!(dry.status.code(), Some(2), "{err}");
    assert!(err.contains("--allow-write-device"), "{err}");
    // No room for the file a study would create: refused up front too.
    let dir = tmp();
    let out = iomark()
        .args(["suite", "qd", "--size", "1000t", "--dry-run"])
        .arg(dir.path().join("t.dat"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("free"), "{err}");
}

/// --dry-run estimates steady up to its round limit and size-based runs at a stated
/// rate, and says what file it will make (issue 12, item 15).
#[test]
fn dry_run_estimates_every_study_and_names_the_file_it_makes() {
    let dir = tmp();
    let t = dir.path().join("t.dat");
    let listing = |args: &[&str]| {
        let out = iomark()
            .args(["suite"])
            .args(args)
            .arg("--dry-run")
            .arg(&t)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let steady = listing(&["steady", "--max-rounds", "7"]);
    assert!(steady.contains("5 to 7 rounds"), "{steady}");
    assert!(steady.contains("assumed 500 MB/s"), "{steady}");
    assert!(
        steady.contains("(1 GiB) is made for the study and removed at the end"),
        "{steady}"
    );
    let wsat = listing(&["wsat", "--size", "64m"]);
    assert!(wsat.contains("assumed 500 MB/s"), "{wsat}");
    assert!(!wsat.contains("depends on the device"), "{wsat}");
    assert!(!t.exists());
}

/// A study that would be refused at one of its runs is refused before the first one
/// and by --dry-run (probe 9): `suite bs --bs 512,4k` asks for 512-byte blocks, which a
/// device of 4 KiB sectors refuses under direct I/O. (The preset's own sweep starts at
/// the device's sector size: `the_bs_sweep_starts_at_the_targets_sector_size`.)
#[test]
fn a_plan_the_device_refuses_is_refused_before_anything_runs() {
    let Some(z) = Zram::new("lz4", "64M") else {
        return;
    };
    let dev = format!("/dev/zram{}", z.id);
    for dry in [true, false] {
        let mut args = vec![
            "suite",
            "bs",
            "--bs",
            "512,4k",
            "--runtime",
            "1s",
            "--allow-write-device",
            &dev,
        ];
        if dry {
            args.push("--dry-run");
        }
        let out = iomark().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "dry-run {dry}: {err}");
        assert!(err.contains("is not a multiple of 4096"), "{err}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("IOPS"), "nothing measured: {stdout}");
        // Nor listed first as if it could run (probe 14b).
        assert!(
            !dry || stdout.is_empty(),
            "a refused plan is not listed: {stdout}"
        );
    }
}

/// `suite bs` on a device with 4096-byte sectors (zram, a 4Kn disk) failed before its
/// first run ("--bs 512 is not a multiple of 4096 bytes": an option the user never gave).
/// The sweep starts at the device's alignment, and says what it left out; sizes the
/// user gives are still refused as before.
#[test]
fn the_bs_sweep_starts_at_the_targets_sector_size() {
    let Some(z) = Zram::new("lz4", "64M") else {
        return;
    };
    let lbs: u64 = std::fs::read_to_string(format!(
        "/sys/block/{}/queue/logical_block_size",
        z.dev().trim_start_matches("/dev/")
    ))
    .unwrap()
    .trim()
    .parse()
    .unwrap();
    assert!(lbs > 512, "zram's sectors are 4 KiB: {lbs}");
    let doc = dry_run(&["bs", "--allow-write-device", &z.dev()]);
    let runs = doc["runs"].as_array().unwrap();
    let sizes: Vec<u64> = runs
        .iter()
        .map(|r| r["spec"]["bs"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes.iter().min(), Some(&lbs), "{sizes:?}");
    assert_eq!(runs.len(), 4 * 13, "4 tests x 4k..16m");
    let note = runs[0]["spec"]["engine_note"].to_string();
    assert!(
        note.contains("512, 1k, 2k left out")
            && note.contains(&format!("multiples of {lbs} bytes")),
        "{note}"
    );
    // Buffered I/O needs no alignment: the whole sweep.
    let doc = dry_run(&["bs", "--buffered", "--allow-write-device", &z.dev()]);
    assert_eq!(doc["runs"].as_array().unwrap().len(), 4 * 16);
    // A size the user asks for is the user's: refused, naming it.
    let out = iomark()
        .args([
            "suite",
            "bs",
            "--bs",
            "512,4k",
            "--dry-run",
            "--allow-write-device",
            &z.dev(),
        ])
        .output()
        .unwrap();
    crate::common::assert_refused(&out, "--bs 512 is not a multiple of 4096");
}

/// `--file-service` with one TARGET was noted for `run` but not in a study (probe 13b):
/// every run of one target says it does nothing; with two targets none does, and with
/// `--targets-sweep 1,2` only the runs on one.
#[test]
fn file_service_on_one_target_is_noted_in_a_study() {
    let dir = tmp();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let noted = |args: &[&str]| -> Vec<(usize, bool)> {
        let doc = dry_run(&[&["corners", "--file-service", "roundrobin"], args].concat());
        (doc["runs"].as_array().unwrap().iter())
            .map(|r| {
                let n = r["spec"]["engine_note"].as_str().unwrap_or("");
                let targets = r["spec"]["targets"]
                    .as_array()
                    .map_or(1, |t| t.len().max(1));
                (targets, n.contains("--file-service does nothing here"))
            })
            .collect()
    };
    assert!(noted(&[a]).iter().all(|(_, n)| *n));
    assert!(noted(&[a, b]).iter().all(|(_, n)| !*n));
    let swept = noted(&["--targets-sweep", "1,2", a, b]);
    assert!(swept.iter().any(|(t, _)| *t == 1) && swept.iter().any(|(t, _)| *t == 2));
    assert!(swept.iter().all(|(t, n)| (*t == 1) == *n), "{swept:?}");
}

/// A run cut after some of its repetitions: `--resume` threw away the finished ones and
/// measured the run again from its first (the README: the document is written "after
/// every repetition, so an interrupted study keeps what finished"). Now it keeps them, as
/// they were, and measures the rest.
#[test]
fn resume_keeps_the_finished_repetitions_of_an_interrupted_run() {
    let dir = tmp();
    let (r, t) = (dir.path().join("r.json"), dir.path().join("t.dat"));
    let args = [
        "suite",
        "qd",
        "--rw",
        "randread",
        "--qd",
        "1,4",
        "--repeat",
        "3",
        "--runtime",
        "0.6",
        "--ramp",
        "0",
        "--size",
        "16m",
        "-q",
    ];
    let mut child = iomark_process()
        .args(args)
        .arg("-o")
        .arg(&r)
        .arg(&t)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The document is saved after every repetition: once the first run has one, its
    // second is under way.
    saved_until(&r, |d| {
        d["runs"][0]["repetitions"]
            .as_array()
            .is_some_and(|x| !x.is_empty())
    });
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, libc::SIGINT);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let doc = read_json(&r);
    let cut = &doc["runs"][0];
    assert_eq!(cut["status"], "interrupted", "{cut:#}");
    let finished: Vec<serde_json::Value> = (cut["repetitions"].as_array().unwrap().iter())
        .filter(|x| x["status"] == "complete")
        .cloned()
        .collect();
    assert!(!finished.is_empty() && finished.len() < 3, "{cut:#}");
    let out = iomark()
        .args(args)
        .arg("--resume")
        .arg(&r)
        .arg(&t)
        .output()
        .unwrap();
    assert_success(&out);
    let doc = read_json(&r);
    let run = &doc["runs"][0];
    assert_eq!(run["status"], "complete");
    let reps = run["repetitions"].as_array().unwrap();
    assert_eq!(reps.len(), 3, "{run:#}");
    for (i, rep) in reps.iter().enumerate() {
        assert_eq!(rep["index"], i + 1);
        assert_eq!(rep["status"], "complete");
    }
    for (kept, had) in reps.iter().zip(&finished) {
        assert_eq!(kept, had, "a finished repetition is kept as it was");
    }
    // The summary is of all three.
    let ios: Vec<f64> = reps
        .iter()
        .map(|x| x["read"]["iops"].as_f64().unwrap())
        .collect();
    let mean = ios.iter().sum::<f64>() / 3.0;
    let said = run["summary"]["read"]["iops"]["mean"].as_f64().unwrap();
    assert!((said - mean).abs() < 1e-6 * mean, "mean {said} of {ios:?}");
    assert!(
        run["warnings"].to_string().contains("resume"),
        "{}",
        run["warnings"]
    );
    assert_eq!(doc["runs"][1]["status"], "complete");
}

/// Waits (60 s at most) until the results document at `path`, saved as a study goes,
/// reads and satisfies `ok`.
fn saved_until(path: &std::path::Path, ok: impl Fn(&serde_json::Value) -> bool) {
    let t0 = Instant::now();
    while !std::fs::read_to_string(path)
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .is_some_and(|d| ok(&d))
    {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the study never got going"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

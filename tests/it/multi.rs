//! Several targets in one run (`iomark run A B C`): each target's figures against its
//! device's own kernel counters (read by the test, before and after), the aggregate
//! against the targets' sums, every target checked before any is written, and the
//! reports' per-target table and stacked chart against the document.

use serde_json::Value;

use crate::common::{
    LoopDev, Zram, assert_refused, assert_success, block_stat, checksum, iomark, mkfs_ext4, report,
    run_json, tmp,
};

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// (read_ios, read_sectors, write_ios, write_sectors) of /sys/class/block/<name>/stat.
fn stat4(name: &str) -> [u64; 4] {
    let f = block_stat(name);
    [f[0], f[2], f[4], f[6]]
}

fn within_1pct(what: &str, iomark: u64, kernel: u64) {
    let diff = (iomark as f64 - kernel as f64).abs();
    assert!(
        diff <= 0.01 * kernel.max(1) as f64,
        "{what}: iomark counted {iomark}, the kernel {kernel}"
    );
}

/// The aggregate of a repetition is the targets' sum: I/Os and bytes exactly, the
/// window the longest target's, the latency extremes the targets' extremes, the p99
/// between the targets' (a merged histogram's percentile lies within its parts').
fn check_aggregate(rep: &Value, dir: &str) {
    let ts = rep["targets"].as_array().expect("per-target figures");
    let sum = |f: &str| ts.iter().map(|t| u(&t[dir][f])).sum::<u64>();
    assert_eq!(u(&rep[dir]["ios"]), sum("ios"), "aggregate {dir} I/Os");
    assert_eq!(u(&rep[dir]["bytes"]), sum("bytes"), "aggregate {dir} bytes");
    let longest = ts
        .iter()
        .map(|t| t["elapsed_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(rep["elapsed_s"].as_f64().unwrap(), longest, "common window");
    let iops = rep[dir]["iops"].as_f64().unwrap();
    let want = u(&rep[dir]["ios"]) as f64 / longest;
    assert!((iops - want).abs() <= 1e-6 * want, "IOPS {iops} != {want}");
    let lat = |t: &Value, f: &str| u(&t[dir]["lat_ns"][f]);
    let max = ts.iter().map(|t| lat(t, "max")).max().unwrap();
    let min = ts.iter().map(|t| lat(t, "min")).min().unwrap();
    assert_eq!(lat(rep, "max"), max, "merged max");
    assert_eq!(lat(rep, "min"), min, "merged min");
    let p99s: Vec<u64> = ts.iter().map(|t| lat(t, "p99")).collect();
    let p99 = lat(rep, "p99");
    assert!(
        p99 >= *p99s.iter().min().unwrap() && p99 <= *p99s.iter().max().unwrap(),
        "merged p99 {p99} outside the targets' {p99s:?}"
    );
}

/// Runs `rw` over the devices, and checks each target's I/Os against its device's
/// counters and the aggregate against their sum.
fn run_on(devs: &[(String, String)], rw: &str, extra: &[&str]) {
    let before: Vec<[u64; 4]> = devs.iter().map(|(_, n)| stat4(n)).collect();
    let mut args = vec![
        "run",
        "--rw",
        rw,
        "--bs",
        "64k",
        "--io-size",
        "8m",
        "--jobs",
        "2",
    ];
    args.extend_from_slice(extra);
    args.extend(devs.iter().map(|(p, _)| p.as_str()));
    let doc = run_json(&args);
    let after: Vec<[u64; 4]> = devs.iter().map(|(_, n)| stat4(n)).collect();
    let run = &doc["runs"][0];
    let rep = &run["repetitions"][0];
    let (dir, ios_i, sec_i) = if rw.contains("write") {
        ("write", 2, 3)
    } else {
        ("read", 0, 1)
    };
    let ts = rep["targets"].as_array().unwrap();
    assert_eq!(ts.len(), devs.len());
    for (i, ((path, name), t)) in devs.iter().zip(ts).enumerate() {
        assert_eq!(t["path"], path.as_str());
        assert_eq!(run["targets"][i]["target"]["path"], path.as_str());
        // 2 jobs x 8 MiB in 64 KiB I/Os.
        assert_eq!(u(&t[dir]["ios"]), 256, "{path}");
        let k_ios = after[i][ios_i] - before[i][ios_i];
        let k_bytes = (after[i][sec_i] - before[i][sec_i]) * 512;
        within_1pct(&format!("{path} {rw} I/Os"), u(&t[dir]["ios"]), k_ios);
        within_1pct(&format!("{path} {rw} bytes"), u(&t[dir]["bytes"]), k_bytes);
        assert_eq!(t["device"]["name"], name.as_str());
        within_1pct(
            &format!("{path}: iomark's device counters"),
            u(&t["device"][format!("{dir}_ios")]),
            k_ios,
        );
    }
    check_aggregate(rep, dir);
    let k_total: u64 = (0..devs.len())
        .map(|i| after[i][ios_i] - before[i][ios_i])
        .sum();
    within_1pct(
        "aggregate device I/Os",
        u(&rep["device"][format!("{dir}_ios")]),
        k_total,
    );
    within_1pct("aggregate I/Os vs kernel", u(&rep[dir]["ios"]), k_total);
}

#[test]
fn two_loop_devices_and_a_zram_device_in_one_run_match_their_kernel_counters() {
    let (Some(a), Some(b)) = (LoopDev::new(64 << 20, true), LoopDev::new(64 << 20, true)) else {
        return;
    };
    let Some(z) = Zram::new("lz4", "64M") else {
        return;
    };
    let zname = format!("zram{}", z.id);
    let devs = vec![
        (a.path().display().to_string(), a.name()),
        (b.path().display().to_string(), b.name()),
        (z.dev(), zname),
    ];
    let w = ["--allow-write-device", "--engine", "psync"];
    run_on(&devs, "randwrite", &w);
    run_on(&devs, "randread", &["--engine", "psync"]);
    if iomark::io::engine::probe_io_uring().is_ok() {
        let q = ["--allow-write-device", "--engine", "io_uring", "--qd", "4"];
        run_on(&devs, "randwrite", &q);
        run_on(&devs, "randread", &["--engine", "io_uring", "--qd", "4"]);
    }
}

#[test]
fn a_refused_target_stops_the_run_before_any_target_is_written() {
    let (Some(blank), Some(fs)) = (LoopDev::new(32 << 20, true), LoopDev::new(32 << 20, true))
    else {
        return;
    };
    if !mkfs_ext4(fs.path()) {
        return;
    }
    let (sum_blank, sum_fs) = (checksum(blank.path()), checksum(fs.path()));
    let before = stat4(&blank.name());
    let out = iomark()
        .args([
            "run",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--allow-write-device",
        ])
        .arg(blank.path())
        .arg(fs.path())
        .output()
        .unwrap();
    assert_refused(&out, "--destroy-data");
    assert_eq!(
        stat4(&blank.name())[2],
        before[2],
        "the blank device was written"
    );
    assert_eq!(checksum(blank.path()), sum_blank);
    assert_eq!(checksum(fs.path()), sum_fs);
}

#[test]
fn files_in_one_run_add_up_and_the_reports_show_each_target() {
    let dir = tmp();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    let doc_path = dir.path().join("r.json");
    let out = iomark()
        .args(["run", "--rw", "randwrite", "--bs", "4k", "--size", "4m"])
        .args(["--engine", "psync", "--buffered", "--repeat", "2", "-o"])
        .arg(&doc_path)
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_success(&out);
    assert!(!a.exists() && !b.exists(), "created files are removed");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("all 2 (aggregate)"), "{text}");
    let doc = crate::common::read_json(&doc_path);
    let run = &doc["runs"][0];
    // Both files are on one device: each row says its kernel count is the device's, for
    // both targets (it showed the whole count as each target's own), and the write
    // amplification names the device once (it said "vda+vda").
    match run["target"]["device"]["name"].as_str() {
        Some(dev) => {
            let rows: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with('/') && l.contains(".dat "))
                .collect();
            assert_eq!(rows.len(), 2, "{text}");
            for r in rows {
                assert!(r.ends_with(&format!("({dev}, all 2 targets)")), "{r}");
            }
            assert!(!text.contains(&format!("{dev}+{dev}")), "{text}");
        }
        None => eprintln!(
            "skipped the device columns: no block device under {}",
            dir.path().display()
        ),
    }
    assert!(run["name"].as_str().unwrap().ends_with("on 2 targets"));
    assert_eq!(run["spec"]["targets"].as_array().unwrap().len(), 2);
    for rep in run["repetitions"].as_array().unwrap() {
        for t in rep["targets"].as_array().unwrap() {
            assert_eq!(u(&t["write"]["ios"]), 1024, "4 MiB in 4 KiB I/Os");
        }
        check_aggregate(rep, "write");
    }
    let page = report(&[&doc_path], &dir.path().join("r.html"));
    let html = scraper::Html::parse_document(&page);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    let stacks: Vec<_> = html
        .select(&sel("svg[data-kind=stacked] g.stack"))
        .collect();
    assert_eq!(stacks.len(), 2, "a stacked bar per repetition");
    for (i, g) in stacks.iter().enumerate() {
        let rep = &run["repetitions"][i];
        let want = u(&rep["write"]["bytes"]) as f64 / rep["elapsed_s"].as_f64().unwrap() / 1e6;
        let total: f64 = g.value().attr("data-total").unwrap().parse().unwrap();
        assert!(
            (total - want).abs() < 1e-6 * want,
            "bar {total}, aggregate {want}"
        );
        let segs: f64 = g
            .select(&sel("rect.segment"))
            .map(|r| {
                r.value()
                    .attr("data-value")
                    .unwrap()
                    .parse::<f64>()
                    .unwrap()
            })
            .sum();
        assert!((segs - total).abs() < 1e-6 * total);
    }
    let rows = html.select(&sel("table.targets tr")).count();
    assert_eq!(rows, 4, "header, two targets, the aggregate");
}

#[test]
fn several_targets_refuse_what_they_cannot_do() {
    let dir = tmp();
    let a = dir.path().join("a.dat").display().to_string();
    let b = dir.path().join("b.dat").display().to_string();
    let run = |extra: &[&str]| {
        iomark()
            .args(["run", "--size", "1m", "--rw", "write"])
            .args(extra)
            .output()
            .unwrap()
    };
    assert_refused(&run(&[&a, &a]), "named twice");
    assert_refused(
        &run(&["--verify", &a, &b]),
        "without --file-service every target has its own jobs",
    );
    assert_refused(&run(&["--engine", "null", &a, &b]), "--engine null");
    // A foreign file as the second target: refused before the first is created.
    std::fs::write(&b, vec![7u8; 1 << 20]).unwrap();
    assert_refused(&run(&[&a, &b]), "--overwrite");
    assert!(!std::path::Path::new(&a).exists(), "nothing created");
}

#[test]
fn a_study_sweeps_the_number_of_targets_and_removes_the_files_it_made() {
    let dir = tmp();
    let files: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|n| dir.path().join(format!("{n}.dat")).display().to_string())
        .collect();
    let doc_path = dir.path().join("s.json");
    let out = iomark()
        .args([
            "suite",
            "qd",
            "--qd",
            "2",
            "--size",
            "4m",
            "--runtime",
            "300ms",
        ])
        .args(["--ramp", "0", "--engine", "io_uring", "--buffered"])
        .args(["--targets-sweep", "1,3", "--stonewall", "-q", "-o"])
        .arg(&doc_path)
        .args(&files)
        .output()
        .unwrap();
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("io_uring") {
        assert!(crate::common::require("io_uring", false));
        return;
    }
    assert_success(&out);
    for f in &files {
        assert!(!std::path::Path::new(f).exists(), "{f} was left behind");
    }
    let doc = crate::common::read_json(&doc_path);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(
        runs.len(),
        4,
        "randread and randwrite at qd 2, on 1 and on 3 targets"
    );
    for r in runs {
        let n: usize = r["study"]["value"].as_str().unwrap().parse().unwrap();
        assert_eq!(r["study"]["param"], "targets");
        assert!(r["study"]["test"].as_str().unwrap().ends_with("qd=2"));
        let rep = &r["repetitions"][0];
        // --stonewall: a step on one target runs without it (it was refused there).
        assert_eq!(r["spec"]["stonewall"], n > 1, "stonewall on {n} targets");
        if n == 1 {
            assert!(rep.get("targets").is_none() && r["spec"].get("targets").is_none());
            continue;
        }
        assert_eq!(r["spec"]["targets"].as_array().unwrap().len(), 3);
        let dir = if r["spec"]["rw"] == "randread" {
            "read"
        } else {
            "write"
        };
        check_aggregate(rep, dir);
        assert!(
            rep["targets"]
                .as_array()
                .unwrap()
                .iter()
                .all(|t| u(&t[dir]["ios"]) > 0)
        );
    }
}

#[test]
fn stonewall_ends_every_targets_jobs_when_the_first_target_is_done() {
    if !crate::common::require("root (loop devices)", crate::common::is_root()) {
        return;
    }
    let devs: Vec<LoopDev> = (0..3)
        .filter_map(|_| LoopDev::new(32 << 20, true))
        .collect();
    if devs.len() < 3 {
        return;
    }
    // Targets 1 and 2 take 1 MiB/s: 8 s for their 8 MiB; target 0 is not held back.
    let Some(slow) = crate::common::Throttle::new(&[&devs[1], &devs[2]], 1 << 20) else {
        return;
    };
    let dir = tmp();
    let doc_path = dir.path().join("r.json");
    let mut cmd = crate::common::iomark_process();
    cmd.args(["run", "--rw", "randwrite", "--bs", "64k", "--io-size", "8m"])
        .args(["--engine", "psync", "--allow-write-device", "--stonewall"])
        .args(["-q", "-o", doc_path.to_str().unwrap()])
        .args(devs.iter().map(LoopDev::path));
    let before: Vec<[u64; 4]> = devs.iter().map(LoopDev::stat).collect();
    let out = slow.wrap(&cmd).output().unwrap();
    assert_success(&out);
    let doc = crate::common::read_json(&doc_path);
    let run = &doc["runs"][0];
    let rep = &run["repetitions"][0];
    crate::mpi::check_stonewalled(rep["targets"].as_array().unwrap(), rep, 8 << 20);
    crate::mpi::check_kernel(std::slice::from_ref(rep), "targets", &devs, &before);
    let notes = run["warnings"].to_string();
    let first = format!("by target {}", devs[0].path().display());
    assert!(
        notes.contains("stonewalled at ") && notes.contains(&first),
        "{notes}"
    );
}

#[test]
fn stonewall_on_one_target_alone_is_refused() {
    let dir = tmp();
    let f = dir.path().join("one.dat");
    let out = iomark()
        .args(["run", "--rw", "write", "--size", "1m", "--stonewall", "-q"])
        .arg(&f)
        .output()
        .unwrap();
    assert_refused(&out, "--stonewall ends every target's jobs");
    assert!(!f.exists(), "nothing was written");
}

/// --stonewall over two targets: every job stops within moments of the first target's
/// end, in either order, and the note names the one that finished (the small one), not
/// the first listed.
#[test]
fn stonewall_stops_the_others_at_once_and_names_the_first_done() {
    let dir = tmp();
    let (small, big) = (dir.path().join("s.dat"), dir.path().join("b.dat"));
    let (s, b) = (small.to_str().unwrap(), big.to_str().unwrap());
    for (f, size) in [(s, "8m"), (b, "512m")] {
        run_json(&[
            "run", "--rw", "write", "--bs", "1m", "--size", size, "--keep", f,
        ]);
    }
    for order in [[s, b], [b, s]] {
        let doc = run_json(
            &[
                &["run", "--rw", "read", "--bs", "1m", "--stonewall"][..],
                &order,
            ]
            .concat(),
        );
        let run = &doc["runs"][0];
        let parts = run["repetitions"][0]["targets"].as_array().unwrap();
        let ios = |name: &str| {
            let i = order.iter().position(|p| *p == name).unwrap();
            parts[i]["read"]["ios"].as_u64().unwrap()
        };
        assert_eq!(ios(s), 8, "the small target did all its work");
        assert!(ios(b) < 64, "the big one was stopped: {} of 512", ios(b));
        let warnings = run["warnings"].to_string();
        assert!(warnings.contains(&format!("by target {s}")), "{warnings}");
    }
}

/// Targets of different sizes: the header gives each one's span, not the first's for
/// all (probe 8).
#[test]
fn targets_of_different_sizes_are_labelled_with_their_own_spans() {
    let (Some(a), Some(b)) = (LoopDev::new(64 << 20, true), LoopDev::new(16 << 20, true)) else {
        return;
    };
    let out = (iomark().args(["run", "--rw", "randread", "--runtime", "300ms"]))
        .arg(a.path())
        .arg(b.path())
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let head = text.lines().next().unwrap_or_default();
    assert!(head.contains("(64 MiB, 16 MiB span"), "{head}");
}

/// A run on two devices said its SMART write amplification was "not reported: no block
/// device visible under the target", of two block devices: it says why it is not read
/// (a drive's counters speak for a run on one target), and the block layer's figure is
/// both devices' writes (the kernel's counters summed).
#[test]
fn a_run_on_two_devices_says_why_no_drive_counter_is_read() {
    let (Some(a), Some(b)) = (LoopDev::new(32 << 20, true), LoopDev::new(32 << 20, true)) else {
        return;
    };
    let doc = run_json(&[
        "run",
        "--rw",
        "write",
        "--size",
        "8m",
        "--allow-write-device",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
    ]);
    let sources = doc["runs"][0]["write_amplification_sources"]
        .as_array()
        .unwrap();
    let note = |s: &str| {
        (sources.iter())
            .find(|w| w["source"] == s)
            .map(|w| w["note"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    let smart = note("smart");
    assert!(
        smart.contains("read for a run on one target") && !smart.contains("no block device"),
        "{smart}"
    );
    let bl = (sources.iter())
        .find(|w| w["source"] == "block_layer")
        .unwrap();
    assert_eq!(bl["device_bytes"].as_u64(), Some(16 << 20), "{bl}");
}

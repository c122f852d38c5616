//! Trims (`--rw trim`, `randtrim`, `trimwrite`, and fio's modes of the same names):
//! iomark's trim counts against the kernel's discard counters of a loop device
//! (/sys/block/DEV/stat fields 11 and 13: discards completed and sectors discarded) and
//! against fio's on the same job file; a file's allocated blocks (st_blocks) shrink by what
//! a trim pass punched; a device that does not discard is refused before anything runs.
//! (Loop devices' discard limits are left alone: a loop minor keeps a limit set through
//! sysfs after it is detached.)

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde_json::Value;

use crate::common::*;

/// (discards completed, bytes discarded, writes completed) of a block device now.
fn discards(name: &str) -> (u64, u64, u64) {
    let s = block_stat(name);
    (s[11], s[13] * 512, s[4])
}

/// Runs `iomark` with `args` and the results in `dir/NAME.json`; the document.
fn run_ok(dir: &Path, name: &str, args: &[&str]) -> Value {
    let res = dir.join(format!("{name}.json"));
    let out = iomark_process()
        .args(args)
        .args(["--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    read_json(&res)
}

#[test]
fn trims_on_a_loop_device_are_what_the_kernel_discards() {
    let Some(dev) = LoopDev::new(32 << 20, true) else {
        return;
    };
    let name = dev.name();
    let path = dev.dev.to_str().unwrap();
    let dir = tmp();
    // 4 MiB of 4 KiB trims (trimwrite: 4 MiB trimmed and 4 MiB written, as fio does).
    for (rw, engine, trims, writes) in [
        ("trim", "psync", 1024, 0),
        ("randtrim", "libaio", 1024, 0),
        ("trimwrite", "psync", 1024, 1024),
    ] {
        let before = discards(&name);
        let doc = run_ok(
            dir.path(),
            rw,
            &[
                "run",
                path,
                "--rw",
                rw,
                "--size",
                "4m",
                "--engine",
                engine,
                "--allow-write-device",
            ],
        );
        let after = discards(&name);
        let rep = &doc["runs"][0]["repetitions"][0];
        let t = &rep["trim"];
        assert_eq!(t["ios"].as_u64(), Some(trims), "{rw}: trims counted");
        assert_eq!(
            t["bytes"].as_u64(),
            Some(trims * 4096),
            "{rw}: bytes trimmed"
        );
        assert!(
            t["lat_ns"]["p50"].as_u64() > Some(0),
            "{rw}: latency of each trim"
        );
        assert_eq!(rep["write"]["ios"].as_u64(), Some(writes), "{rw}: writes");
        assert_eq!(rep["read"]["ios"].as_u64(), Some(0), "{rw}: reads");
        // The kernel's discard counters over the whole command equal iomark's count
        // (psync and libaio trims are one discard each; nothing else discards).
        let (k_ios, k_bytes) = (after.0 - before.0, after.1 - before.1);
        assert_eq!(
            (k_ios, k_bytes),
            (trims, trims * 4096),
            "{rw}: kernel discards"
        );
        let d = &rep["device"];
        assert_eq!(
            d["discard_ios"].as_u64(),
            Some(trims),
            "{rw}: iomark's device figure"
        );
        assert_eq!(d["discard_bytes"].as_u64(), Some(trims * 4096));
        // The series carries the trims: its rates times its intervals add up to them.
        let mut prev = 0.0;
        let mut in_series = 0.0;
        for p in rep["series"].as_array().unwrap() {
            let t = p["t_s"].as_f64().unwrap();
            in_series += p["trim_iops"].as_f64().unwrap() * (t - prev);
            prev = t;
        }
        assert!(
            (in_series - trims as f64).abs() < 1.0,
            "{rw}: {in_series} trims in the series"
        );
        if writes > 0 {
            let k_writes = after.2 - before.2;
            assert!(
                (writes..=writes + 4).contains(&k_writes),
                "{rw}: kernel writes {k_writes}"
            );
        }
        // The text report has a trim row.
        let md = String::from_utf8(stdout_of(&[
            "report",
            dir.path().join(format!("{rw}.json")).to_str().unwrap(),
            "--format",
            "md",
        ]))
        .unwrap();
        assert!(md.lines().any(|l| l.contains("| trim |")), "{md}");
    }
}

#[test]
fn fio_trim_jobs_trim_what_fio_trims() {
    let Some(dev) = LoopDev::new(32 << 20, true) else {
        return;
    };
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let dir = tmp();
    let job = dir.path().join("trim.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=${DEV}\nsize=2m\nbs=4k,4k,8k\nioengine=psync\n\
         [t]\nrw=trim\n[rt]\nstonewall\nrw=randtrim\noffset=8m\nnorandommap\n[tw]\nstonewall\nrw=trimwrite\nbs=16k\n",
    )
    .unwrap();
    let name = dev.name();
    let before = discards(&name);
    let res = dir.path().join("i.json");
    let out = iomark_process()
        .env("DEV", &dev.dev)
        .arg("fio")
        .arg(&job)
        .args(["--allow-write-device", "--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    let ours_k = discards(&name).0 - before.0;
    let doc = read_json(&res);
    let before = discards(&name);
    let fio_out = std::process::Command::new("fio")
        .current_dir(dir.path())
        .env("DEV", &dev.dev)
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .unwrap();
    assert_success(&fio_out);
    let fio_k = discards(&name).0 - before.0;
    let fio: Value = serde_json::from_slice(&fio_out.stdout).unwrap();
    let fio_jobs = fio["jobs"].as_array().unwrap();
    let ours = doc["runs"].as_array().unwrap();
    // 2 MiB of 8 KiB trims (the trim side of bs), twice, then 2 MiB of 16 KiB trims and
    // as many writes: the same under both tools, and what the kernel discarded. (The
    // random job has norandommap: fio's random map, kept in 4 KiB grains here, would
    // shorten trims landing on half-used grains: 183 trims for the 2 MiB, measured.)
    let want = [(256, 0), (256, 0), (128, 128)];
    let mut total = 0;
    for ((r, f), (trims, writes)) in ours.iter().zip(fio_jobs).zip(want) {
        let rep = &r["repetitions"][0];
        assert_eq!(r["spec"]["rw"], f["job options"]["rw"]);
        assert_eq!(rep["trim"]["ios"].as_u64(), Some(trims), "{}", r["name"]);
        assert_eq!(
            f["trim"]["total_ios"].as_u64(),
            Some(trims),
            "fio's {}",
            f["jobname"]
        );
        assert_eq!(rep["write"]["ios"].as_u64(), Some(writes), "{}", r["name"]);
        assert_eq!(
            f["write"]["total_ios"].as_u64(),
            Some(writes),
            "fio's {}",
            f["jobname"]
        );
        total += trims;
    }
    assert_eq!((ours_k, fio_k), (total, total), "the kernel's discards");
}

#[test]
fn a_trim_pass_punches_holes_in_a_file() {
    let dir = tmp();
    let file = dir.path().join("t.dat");
    let f = file.to_str().unwrap();
    // A new 8 MiB file, laid out with data (every block allocated), kept.
    run_ok(
        dir.path(),
        "w",
        &["run", f, "--rw", "write", "--size", "8m", "--keep"],
    );
    let blocks = || std::fs::metadata(&file).unwrap().blocks();
    let full = blocks();
    assert!(full >= 8 << 20 >> 9, "{full} blocks of 512 bytes");
    // Trim the first 4 MiB: the file keeps its size and loses those blocks.
    let doc = run_ok(
        dir.path(),
        "t",
        &[
            "run", f, "--rw", "trim", "--size", "4m", "--bs", "64k", "--engine", "psync", "--keep",
        ],
    );
    assert_eq!(doc["runs"][0]["repetitions"][0]["trim"]["ios"], 64);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 8 << 20);
    let freed = (full - blocks()) * 512;
    assert_eq!(freed, 4 << 20, "st_blocks went from {full} to {}", blocks());
}

#[test]
fn a_device_that_does_not_discard_is_refused() {
    // A private zram device (removed on drop, so the setting dies with it; a loop
    // device's minor would keep it for the next user).
    let Some(z) = Zram::new("lz4", "16M") else {
        return;
    };
    let knob = z.sys("queue/discard_max_bytes");
    // Setting the limit to 0 turns discard off for this device.
    let off = std::fs::write(&knob, "0").is_ok()
        && std::fs::read_to_string(&knob).is_ok_and(|v| v.trim() == "0");
    if !require("a zram device whose discard can be turned off", off) {
        return;
    }
    let name = format!("zram{}", z.id);
    let before = discards(&name);
    let out = iomark_process()
        .args(["run", &z.dev(), "--rw", "randtrim", "--size", "1m"])
        .arg("--allow-write-device")
        .output()
        .unwrap();
    assert_refused(&out, "cannot be trimmed: the device does not discard");
    assert_eq!(discards(&name), before);
}

#[test]
fn a_file_whose_filesystem_cannot_punch_holes_is_refused() {
    if !require("root (to mount ramfs)", is_root()) {
        return;
    }
    // ramfs has no fallocate: no hole punching, so no trims of its files.
    let Some(m) = Mounted::mount(Path::new("none"), &["-t", "ramfs"]) else {
        return;
    };
    // (ramfs says it has no free space, so iomark would not make a file there: the file
    // is the test's.)
    let file = m.path().join("t.dat");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let f = file.to_str().unwrap();
    let out = iomark_process()
        .args(["run", f, "--rw", "trim", "--size", "1m", "--buffered"])
        .args(["--engine", "psync", "--overwrite"])
        .output()
        .unwrap();
    assert_refused(
        &out,
        "cannot be trimmed: its filesystem does not punch holes",
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        vec![7u8; 1 << 20],
        "untouched"
    );
}

/// Trims on several targets: each target's figures have their trims (counted as its
/// device's kernel discards), its summary a trim direction, and the per-target table
/// counts them (iomark's I/Os and the kernel's, discards included).
#[test]
fn each_targets_trims_are_its_own_and_its_kernels() {
    let (Some(a), Some(b)) = (LoopDev::new(16 << 20, true), LoopDev::new(16 << 20, true)) else {
        return;
    };
    let before = [discards(&a.name()), discards(&b.name())];
    let dir = tmp();
    let res = dir.path().join("r.json");
    let out = iomark()
        .args([
            "run", "--rw", "randtrim", "--size", "4m", "--engine", "psync",
        ])
        .args(["--allow-write-device", "-o"])
        .arg(&res)
        .arg(a.path())
        .arg(b.path())
        .output()
        .unwrap();
    assert_success(&out);
    let after = [discards(&a.name()), discards(&b.name())];
    let doc = read_json(&res);
    let run = &doc["runs"][0];
    let rep = &run["repetitions"][0];
    for (i, t) in rep["targets"].as_array().unwrap().iter().enumerate() {
        assert_eq!(t["trim"]["ios"], 1024, "target {i}: 4 MiB of 4 KiB trims");
        assert_eq!(
            t["trim"]["ios"],
            after[i].0 - before[i].0,
            "target {i}: kernel"
        );
        assert!(t["trim"]["lat_ns"]["p50"].as_u64() > Some(0));
        let s = &run["targets"][i]["summary"]["trim"]["iops"];
        assert_eq!(s["n"], 1, "target {i}: its summary has the trims");
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("/dev/loop")).collect();
    assert!(
        rows.iter()
            .filter(|l| l.matches("1024").count() >= 2)
            .count()
            >= 2,
        "each target's row counts 1024 trims, by iomark and by the kernel: {text}"
    );
}

/// Trims write no data: no note about buffered writes and no write amplification line.
/// Trims the device did not get are said to cost it nothing, as its discard counter shows:
/// a file on a private ext4 mounted without `discard` (holes are punched, nothing is
/// passed down); trims of the loop device itself all reach it, and get no such note.
#[test]
fn trims_the_device_did_not_get_are_said_to_cost_it_nothing() {
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let text = |target: &Path, args: &[&str]| {
        let out = iomark_process()
            .args(args)
            .args([
                "--size",
                "8m",
                "--bs",
                "64k",
                "--runtime",
                "1",
                "--buffered",
            ])
            .arg(target)
            .output()
            .unwrap();
        assert_success(&out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let before = discards(&dev.name());
    let t = text(
        dev.path(),
        &["run", "--rw", "randtrim", "--allow-write-device"],
    );
    assert!(discards(&dev.name()).1 - before.1 >= 8 << 20);
    assert!(!t.contains("cost it nothing"), "{t}");
    assert!(!t.contains("buffered writes"), "{t}");
    assert!(!t.contains("write amplification"), "{t}");
    let Some(fs) = Mounted::ext4(dev.path()) else {
        return;
    };
    let file = fs.path().join("t.dat");
    let before = discards(&dev.name());
    let t = text(&file, &["run", "--rw", "randtrim"]);
    assert_eq!(discards(&dev.name()).1, before.1, "ext4 without discard");
    assert!(
        t.contains("the device discarded nothing of the ")
            && t.contains("iomark trimmed: the rest cost it nothing"),
        "{t}"
    );
    assert!(!t.contains("buffered writes"), "{t}");
    assert!(!t.contains("write amplification"), "{t}");
}

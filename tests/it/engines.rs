//! Every engine against something real: `--verify` reads back what each engine wrote,
//! mmap's bytes against the block layer's counters, `--sync-mode` against the device's
//! flush counter, `--cpus` against the kernel's view of the worker threads, and the
//! refusals of options an engine or a device cannot honour. (Each engine's I/O and byte
//! counts against /sys/block are in `ground_truth`; engine conformance in
//! `src/io/engine/mod.rs`.)

use crate::common::{
    LoopDev, Mounted, assert_refused, assert_success, iomark, iomark_process, is_root, require,
    require_tool, run_json, stdout_of, tmp, warnings_where,
};

/// A file of `len` bytes (a hole) named `name` in `dir`.
fn sized_file(dir: &std::path::Path, name: &str, len: u64) -> std::path::PathBuf {
    let f = dir.join(name);
    std::fs::File::create(&f).unwrap().set_len(len).unwrap();
    f
}

/// The engines whose waits spin: libaio,
/// and io_uring where the kernel allows it.
fn waiting_engines() -> Vec<&'static str> {
    let mut engines = vec!["libaio"];
    if require("io_uring", iomark::io::engine::probe_io_uring().is_ok()) {
        engines.push("io_uring");
    }
    engines
}

/// The engines that reach the kernel, with a queue depth each can honour.
fn real_engines() -> Vec<Vec<&'static str>> {
    let mut e = vec![
        vec!["--engine", "psync"],
        vec!["--engine", "libaio", "--qd", "8"],
        vec!["--engine", "libaio", "--qd", "8", "--buffered"],
        vec!["--engine", "mmap"],
    ];
    if require("io_uring", iomark::io::engine::probe_io_uring().is_ok()) {
        e.push(vec![
            "--engine",
            "io_uring",
            "--qd",
            "8",
            "--batch-submit",
            "2",
        ]);
    }
    e
}

#[test]
fn verify_reads_back_clean_with_every_engine() {
    let dir = tmp();
    for engine in real_engines() {
        let f = dir.path().join("v.dat");
        let mut args = vec![
            "run", "--rw", "randrw", "--size", "4m", "--verify", "--json", "-q",
        ];
        args.extend_from_slice(&engine);
        let out = iomark().args(&args).arg(&f).output().unwrap();
        assert_success(&out);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let v = &doc["runs"][0]["repetitions"][0]["verify"];
        assert!(v["blocks"].as_u64().unwrap() > 100, "{engine:?}: {v}");
        assert_eq!(v["good"], v["blocks"], "{engine:?}: {v}");
        assert_eq!(doc["runs"][0]["spec"]["engine"], engine[1]);
    }
}

#[test]
fn mmap_bytes_match_the_block_layer() {
    let Some(dev) = LoopDev::new(32 << 20, true) else {
        return;
    };
    let path = dev.path().to_str().unwrap().to_string();
    // The whole device written once through the mapping, flushed (msync) at the end:
    // every byte reaches the device.
    let before = dev.stat();
    let doc = run_json(&[
        "run",
        "--engine",
        "mmap",
        "--rw",
        "write",
        "--bs",
        "64k",
        "--end-fsync",
        "--allow-write-device",
        &path,
    ]);
    let after = dev.stat();
    let rep = &doc["runs"][0]["repetitions"][0];
    assert_eq!(rep["write"]["bytes"], 32u64 << 20);
    assert_eq!(doc["runs"][0]["spec"]["direct"], false);
    let k_written = (after[3] - before[3]) * 512;
    assert_eq!(k_written, 32 << 20, "the kernel wrote {k_written}");
    // Read back through a fresh mapping (the device's cache is dropped first): the page
    // faults are the reads.
    let before = dev.stat();
    let doc = run_json(&[
        "run", "--engine", "mmap", "--rw", "read", "--bs", "64k", &path,
    ]);
    let after = dev.stat();
    assert_eq!(
        doc["runs"][0]["repetitions"][0]["read"]["bytes"],
        32u64 << 20
    );
    let k_read = (after[1] - before[1]) * 512;
    assert_eq!(k_read, 32 << 20, "the kernel read {k_read}");
}

/// `--fadvise` is the mmap engine's `madvise` (fio's `fadvise_hint`), by the pattern when
/// not given: the mapping was advised by the pattern whatever was asked (`--fadvise
/// none`, fio's `fadvise_hint=0`, read 512 random pages as 512 reads of 4 KiB, where fio
/// reads around each fault).
#[test]
fn mmap_advice_is_the_fadvise_asked() {
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let _cache = crate::common::page_cache_lock();
    let path = dev.path().to_str().unwrap().to_string();
    let read = |extra: &[&str]| {
        let before = dev.stat();
        let args = [
            &[
                "run",
                "--engine",
                "mmap",
                "--rw",
                "randread",
                "--io-size",
                "2m",
            ][..],
            extra,
            &[&path],
        ]
        .concat();
        let doc = run_json(&args);
        let fadvise = doc["runs"][0]["spec"]["cache"]["fadvise"].clone();
        ((dev.stat()[1] - before[1]) * 512, fadvise)
    };
    let (auto, said) = read(&[]);
    assert!(auto <= 3 << 20, "random advice: {auto} B read for 2 MiB");
    assert_eq!(said, "auto", "the advice the run had");
    for advice in ["none", "sequential"] {
        let (bytes, _) = read(&["--fadvise", advice]);
        assert!(
            bytes > 4 * auto,
            "--fadvise {advice}: {bytes} B read, random advice {auto}"
        );
    }
}

/// Flush requests the device completed (field 16 of /sys/block/DEV/stat).
fn flushes(dev: &LoopDev) -> u64 {
    let text = std::fs::read_to_string(format!("/sys/block/{}/stat", dev.name())).unwrap();
    text.split_whitespace()
        .nth(15)
        .map_or(0, |f| f.parse().unwrap())
}

#[test]
fn sync_mode_makes_every_write_stable() {
    // A loop device has a volatile write cache: each O_DSYNC or O_SYNC write is followed
    // by (at least) one flush, and plain writes by none.
    let Some(dev) = LoopDev::new(16 << 20, true) else {
        return;
    };
    let path = dev.path().to_str().unwrap().to_string();
    for engine in real_engines().into_iter().filter(|e| e[1] != "mmap") {
        for (mode, stable) in [("none", false), ("dsync", true), ("sync", true)] {
            let before = flushes(&dev);
            let mut args = vec![
                "run",
                "--rw",
                "randwrite",
                "--bs",
                "4k",
                "--io-size",
                "256k",
                "--allow-write-device",
                "--sync-mode",
                mode,
            ];
            // One write at a time: concurrent flushes may be merged into one.
            let skip = ["--qd", "8", "--batch-submit", "2"];
            args.extend(engine.iter().filter(|a| !skip.contains(a)));
            args.push(&path);
            let doc = run_json(&args);
            let n = flushes(&dev) - before;
            let spec = &doc["runs"][0]["spec"];
            // The run's device counters carry the flushes the kernel counted.
            let device = &doc["runs"][0]["repetitions"][0]["device"];
            assert_eq!(device["flush_ios"], n, "{engine:?} {mode}: {device}");
            if stable {
                assert!(n >= 64, "{engine:?} {mode}: {n} flushes for 64 writes");
                assert_eq!(spec["engine_opts"]["sync_mode"], mode, "recorded");
                let name = doc["runs"][0]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                assert!(
                    name.ends_with(&format!(" O_{}", mode.to_uppercase())),
                    "{name}"
                );
            } else {
                assert_eq!(n, 0, "{engine:?}: plain writes flushed");
            }
        }
    }
}

/// The device line says the flushes, and why the device counted more writes than iomark
/// made: the kernel counts each flush asked on its own (after an `O_DSYNC` write, an
/// fsync's) also as a write of no data. Seen in session 26: psync's 1024 `O_SYNC` writes
/// read "device: 2048 writes" with no word of flushes.
#[test]
fn the_device_line_says_its_flushes_and_the_writes_they_add() {
    let Some(dev) = LoopDev::new(16 << 20, true) else {
        return;
    };
    let path = dev.path().to_str().unwrap().to_string();
    let dir = tmp();
    let results = dir.path().join("r.json");
    // `iomark run ARGS` on the device, its results in one file: its text.
    let run = |args: &[&str]| {
        let out = iomark()
            .arg("run")
            .args(args)
            .args(["--allow-write-device", "--force", "-o"])
            .arg(&results)
            .arg(&path)
            .output()
            .unwrap();
        assert_success(&out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (stat, before) = (dev.stat(), flushes(&dev));
    let text = run(&[
        "--engine",
        "psync",
        "--sync-mode",
        "dsync",
        "--rw",
        "randwrite",
        "--io-size",
        "256k",
    ]);
    let (writes, n) = (dev.stat()[2] - stat[2], flushes(&dev) - before);
    assert!(writes > 64 && n > 0, "{writes} writes, {n} flushes: {text}");
    assert!(
        text.contains(&format!("{writes} writes (256 KiB), {n} flushes")),
        "{text}"
    );
    let extra = writes - 64;
    assert!(
        text.contains(&format!(
            "as a write of no data: up to {} of the {extra} writes beyond iomark's 64 are such flushes",
            extra.min(n)
        )),
        "{text}"
    );
    // Plain writes: no flush, no word of them.
    let text = run(&["--rw", "randwrite", "--io-size", "256k"]);
    assert!(!text.contains("flush"), "{text}");
    // A read run's --end-fsync "does nothing here", as its note says (and as fio): it
    // made one fsync, a write and a flush at the device.
    let before = flushes(&dev);
    let text = run(&["--rw", "read", "--io-size", "256k", "--end-fsync"]);
    assert!(text.contains("--end-fsync does nothing here"), "{text}");
    assert_eq!(flushes(&dev) - before, 0, "{text}");
    assert!(
        !text.contains("fsync;") && !text.contains("1 fsync"),
        "{text}"
    );
}

#[test]
fn a_large_direct_transfer_is_one_request_at_the_device() {
    // A loop device takes at most 128 segments per request: a 1 MiB read into 4 KiB
    // pages (256 segments) would be split in two. iomark's buffers for large blocks lie
    // in huge pages, so each 1 MiB read is one request, with every engine that bypasses
    // the page cache (the kernel's read counter against iomark's I/Os).
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
    if !require(
        "transparent huge pages",
        thp.is_ok_and(|t| !t.contains("[never]")),
    ) {
        return;
    }
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let path = dev.path().to_str().unwrap().to_string();
    let segments: u64 =
        std::fs::read_to_string(format!("/sys/block/{}/queue/max_segments", dev.name()))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
    assert!(
        segments < 256,
        "a loop device that takes {segments} segments proves nothing"
    );
    for engine in real_engines()
        .into_iter()
        .filter(|e| e[1] != "mmap" && !e.contains(&"--buffered"))
    {
        let before = dev.stat()[0];
        let mut args = vec![
            "run",
            "--rw",
            "read",
            "--bs",
            "1m",
            "--io-size",
            "32m",
            "--direct",
        ];
        args.extend(
            engine
                .iter()
                .filter(|a| **a != "--batch-submit" && **a != "2"),
        );
        args.push(&path);
        let doc = run_json(&args);
        let ios = doc["runs"][0]["repetitions"][0]["read"]["ios"]
            .as_u64()
            .unwrap();
        assert_eq!(
            dev.stat()[0] - before,
            ios,
            "{engine:?}: device reads for {ios} 1 MiB reads"
        );
    }
}

#[test]
fn sync_mode_leaves_the_layout_of_a_new_file_alone() {
    // A new file is laid out before the run, outside the measured window: that layout is
    // not synchronous, so a run of four O_DSYNC writes on a new 32 MiB file flushes the
    // device a handful of times (the writes, the layout's one fdatasync, the journal), not
    // once per MiB laid out.
    let Some(dev) = LoopDev::new(128 << 20, false) else {
        return;
    };
    let Some(fs) = Mounted::ext4(dev.path()) else {
        return;
    };
    let file = fs.path().join("new.dat");
    let before = flushes(&dev);
    run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--size",
        "32m",
        "--io-size",
        "16k",
        "--sync-mode",
        "dsync",
        file.to_str().unwrap(),
    ]);
    let n = flushes(&dev) - before;
    assert!(
        (4..20).contains(&n),
        "{n} flushes for 4 O_DSYNC writes on a new 32 MiB file"
    );
}

#[test]
fn cpus_pins_each_job_to_its_cpu() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !require("two CPUs", cpus >= 2) {
        return;
    }
    let mut child = iomark_process()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "1m",
            "--runtime",
            "3s",
            "--jobs",
            "2",
        ])
        .args(["--cpus", "1,0", "-q"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let mut lists = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap() {
        let status =
            std::fs::read_to_string(task.unwrap().path().join("status")).unwrap_or_default();
        if let Some(l) = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")) {
            lists.push(l.split_whitespace().nth(1).unwrap_or("").to_string());
        }
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    lists.sort();
    // Job 0 on CPU 1, job 1 on CPU 0; the main thread and others stay unpinned.
    assert!(
        lists.contains(&"0".to_string()) && lists.contains(&"1".to_string()),
        "{lists:?}"
    );
    assert!(
        lists.iter().filter(|l| l.len() == 1).count() == 2,
        "{lists:?}"
    );
}

/// The scheduling policy of each thread of process `pid` whose name starts with one of
/// `names`: (name, policy) as /proc says (field 41 of `stat`: 0 SCHED_OTHER, 3
/// SCHED_BATCH).
fn policies(pid: u32, names: &[&str]) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let stat = std::fs::read_to_string(task.unwrap().path().join("stat")).unwrap_or_default();
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_string();
        // After the name: field 3 (state) onwards, so field 41 is the 39th.
        let policy = stat[close + 1..].split_whitespace().nth(38);
        if names.iter().any(|n| name.starts_with(n)) {
            out.push((name, policy.and_then(|p| p.parse().ok()).unwrap_or(99)));
        }
    }
    out.sort();
    out
}

/// `--sched-policy`: by default every engine's job threads run as the process started
/// (SCHED_BATCH by default for io_uring and libaio starved them beside a busy loop: 2.3
/// thousand zram reads a second against 390 thousand); `normal` and `batch` as asked, the
/// io-wq workers io_uring makes for a job thread with it, the main thread as started;
/// `--as-fio` says it where fio's would differ; a bad policy is refused.
#[test]
fn sched_policy_is_the_job_threads() {
    let dir = tmp();
    let f = sized_file(dir.path(), "p.dat", 8 << 20);
    // io_uring where the kernel allows it, else libaio.
    let engine = *waiting_engines().last().unwrap();
    // By default normal for every engine.
    for (engine, policy, job) in [
        (engine, None, 0),
        (engine, Some("normal"), 0),
        (engine, Some("batch"), 3),
        ("psync", None, 0),
        ("psync", Some("batch"), 3),
    ] {
        let qd = if engine == "psync" { "1" } else { "4" };
        let mut c = iomark_process();
        c.args(["run", "--engine", engine, "--rw", "randread", "--qd", qd])
            .args(["--jobs", "2", "--runtime", "3s", "--size", "8m", "-q"])
            .arg(&f)
            .stdout(std::process::Stdio::null());
        if let Some(p) = policy {
            c.args(["--sched-policy", p]);
        }
        let mut child = c.spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let seen = policies(child.id(), &["iomark", "iou-wrk"]);
        assert!(child.wait().unwrap().success());
        let jobs: Vec<_> = seen
            .iter()
            .filter(|(n, _)| n.starts_with("iomark-job"))
            .collect();
        assert_eq!(jobs.len(), 2, "{engine} {policy:?}: {seen:?}");
        for (name, p) in &seen {
            let want = match name.as_str() {
                // The main thread and its helpers: as started.
                "iomark" => 0,
                // The job threads and their io-wq workers.
                n if n.starts_with("iomark-job") || n.starts_with("iou-wrk") => job,
                _ => continue,
            };
            assert_eq!(*p, want, "{engine} {policy:?}: {name} in {seen:?}");
        }
    }
    let as_fio = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--engine",
            engine,
            "--size",
            "8m",
            f.to_str().unwrap(),
        ];
        a.extend_from_slice(extra);
        a.push("--as-fio");
        String::from_utf8(stdout_of(&a)).unwrap()
    };
    assert!(
        as_fio(&["--sched-policy", "batch"])
            .contains("# sched-policy: iomark's job threads run SCHED_BATCH")
    );
    assert!(!as_fio(&[]).contains("sched-policy"));
    // A process started under another policy keeps it, and the run says so.
    if require("root (chrt -f)", is_root()) && require_tool("chrt", "chrt (util-linux)") {
        let out = std::process::Command::new("chrt")
            .args(["-f", "1"])
            .arg(env!("CARGO_BIN_EXE_iomark"))
            .args(["run", "--size", "8m", "--runtime", "0.2s"])
            .args(["--sched-policy", "batch"])
            .arg(&f)
            .output()
            .unwrap();
        assert_success(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("the job threads ran SCHED_FIFO, as the process was started (chrt)"),
            "{text}"
        );
    }
    let out = iomark()
        .args(["run", "--sched-policy", "fifo", "--size", "8m"])
        .arg(&f)
        .output()
        .unwrap();
    assert_refused(&out, "--sched-policy");
    // A job file's jobs take it as iomark run's do; a bad one is the command line's.
    let job = dir.path().join("p.fio");
    let text = format!(
        "[a]\nfilename={}\nsize=8m\nioengine=psync\nrw=randread\nruntime=200ms\ntime_based\n",
        f.display()
    );
    std::fs::write(&job, text).unwrap();
    let doc = run_json(&["fio", job.to_str().unwrap(), "--sched-policy", "batch"]);
    let got = &doc["runs"][0]["spec"]["engine_opts"]["sched_policy"];
    assert_eq!(got.as_str(), Some("batch"), "{doc}");
    let out = iomark()
        .args(["fio", job.to_str().unwrap(), "--sched-policy", "fifo"])
        .output()
        .unwrap();
    assert_refused(&out, "'fifo' for '--sched-policy");
}

#[test]
fn cpus_are_split_over_the_jobs_of_every_target() {
    // Two targets, one job each: the second target's job takes the list's second CPU
    // (job j of the run, all targets' jobs counted, as fio's split counts every job).
    // Both were put on the first.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !require("two CPUs", cpus >= 2) {
        return;
    }
    let dir = tmp();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    let mut child = iomark_process()
        .args([
            "run",
            "--engine",
            "psync",
            "--size",
            "1m",
            "--runtime",
            "3s",
        ])
        .args([a.to_str().unwrap(), b.to_str().unwrap()])
        .args(["--cpus", "1,0", "-q", "--rw", "read"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let mut pinned = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap() {
        let task = task.unwrap().path();
        let name = std::fs::read_to_string(task.join("comm")).unwrap_or_default();
        let status = std::fs::read_to_string(task.join("status")).unwrap_or_default();
        if let Some(l) = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")) {
            let list = l.split_whitespace().nth(1).unwrap_or("").to_string();
            pinned.push((name.trim().to_string(), list));
        }
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    pinned.sort();
    let on = |job: &str| {
        pinned
            .iter()
            .find(|(n, _)| n == job)
            .map(|(_, l)| l.clone())
    };
    assert_eq!(on("iomark-t0job0").as_deref(), Some("1"), "{pinned:?}");
    assert_eq!(on("iomark-t1job0").as_deref(), Some("0"), "{pinned:?}");
}

/// The CPU lists the tasks of `child` (and of its child processes, fio's jobs) were
/// pinned to while it ran, sampled every 50 ms: each task's distinct lists in the order
/// they were first seen, those of tasks pinned to one CPU only.
fn pinnings_while_running(mut child: std::process::Child) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut tasks = |pid: u32| {
        let dir = format!("/proc/{pid}/task");
        for task in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
            let list = (status.lines())
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|l| l.trim().to_string());
            if let Some(l) = list.filter(|l| l.parse::<u32>().is_ok())
                && seen.last() != Some(&l)
            {
                seen.push(l);
            }
        }
    };
    while child.try_wait().unwrap().is_none() {
        tasks(child.id());
        let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id()))
            .unwrap_or_default();
        for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
            tasks(c);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(child.wait().unwrap().success());
    seen
}

/// fio's `cpus_allowed_policy=split` counts every job of the file: a second section's
/// one job runs on the list's second CPU (checked against fio itself). iomark counted
/// each run's jobs from 0 and put both on CPU 0.
#[test]
fn a_fio_files_split_counts_the_jobs_of_earlier_sections() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !require("two CPUs", cpus >= 2)
        || !crate::common::require_tool("fio", "fio (apt-get install fio)")
    {
        return;
    }
    let dir = tmp();
    let job = dir.path().join("s.fio");
    let data = dir.path().join("s.dat");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=1m\nrw=read\nioengine=psync\nruntime=1\n\
             time_based\ncpus_allowed=0-1\ncpus_allowed_policy=split\n[a]\n[b]\nstonewall\n",
            data.display()
        ),
    )
    .unwrap();
    let fio = std::process::Command::new("fio")
        .arg(&job)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert_eq!(pinnings_while_running(fio), ["0", "1"], "fio's jobs");
    let out = dir.path().join("s.json");
    let iomark = iomark_process()
        .arg("fio")
        .arg(&job)
        .args(["-q", "-o"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert_eq!(pinnings_while_running(iomark), ["0", "1"], "iomark's jobs");
    // The second run says where its split starts.
    let doc = crate::common::read_json(&out);
    assert_eq!(doc["runs"][1]["spec"]["engine_opts"]["cpus_after"], 1);
    assert!(doc["runs"][0]["spec"]["engine_opts"]["cpus_after"].is_null());
}

#[test]
fn options_an_engine_or_device_cannot_honour_are_refused() {
    let dir = tmp();
    let f = dir.path().join("r.dat");
    let f = f.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--engine", "mmap", "--direct"], "drop --direct"),
        (&["--engine", "mmap", "--qd", "4"], "one I/O at a time"),
        (
            &["--engine", "libaio", "--sqpoll"],
            "--sqpoll is an io_uring option",
        ),
        (
            &["--engine", "psync", "--hipri"],
            "--hipri is an io_uring option",
        ),
        (
            &["--engine", "io_uring", "--hipri", "--buffered"],
            "drop --buffered",
        ),
        (
            &["--engine", "libaio", "--qd", "4", "--batch-submit", "8"],
            "use at most 4",
        ),
        (
            &["--engine", "psync", "--iodepth_batch_complete_min", "2"],
            "--batch-complete 2",
        ),
        (&["--engine", "mmap", "--sync-mode", "dsync"], "msync"),
        // fio's name, as typed: it was answered "--engine psync does one I/O...".
        (
            &["--engine", "pvsync", "--qd", "4"],
            "--engine pvsync, which runs as psync, does one I/O at a time per job",
        ),
        // The null engine keeps a queue: it was said to do "one at a time".
        (
            &["--engine", "null", "--qd", "8", "--batch-submit", "4"],
            "--engine null completes each as it is queued, with none to batch; drop --batch-submit",
        ),
        (&["--sqpoll-cpu", "1"], "--sqpoll"),
        (&["--cpus", "0-"], "is not a CPU list"),
        (&["--cpus", "1000"], "this process may run on"),
        (
            &["--engine", "io_uring", "--sqpoll", "--sqpoll-cpu", "1000"],
            "--sqpoll-cpu names CPU 1000 and this process may run on",
        ),
        (&["--sync-mode", "always"], "none, sync, dsync"),
        (
            &["--engine", "psync", "--spin-wait", "0"],
            "--spin-wait 0 shortens waits for asynchronous completions and --engine psync has none",
        ),
        (
            &[
                "--engine",
                "libaio",
                "--qd",
                "8",
                "--batch-complete",
                "4",
                "--spin-wait",
                "5us",
            ],
            "--spin-wait 5us has no wait to spin in with --batch-complete 4",
        ),
        (&["--spin-wait", "2"], "--spin-wait 2 has no unit"),
        (&["--spin-wait", "1s"], "use at most 1ms"),
    ];
    for (args, needle) in cases {
        let out = iomark()
            .args(["run", "--rw", "randwrite", "--size", "1m"])
            .args(*args)
            .arg(f)
            .output()
            .unwrap();
        assert_refused(&out, needle);
    }
    assert!(!std::path::Path::new(f).exists());
}

/// A process started on one CPU (`taskset -c 0`) may still pin its jobs to another, as
/// fio does: iomark took the process's affinity for the CPUs there are and refused
/// `--cpus 1` (exit 2), where fio ran its job on CPU 1.
#[test]
fn cpus_outside_the_starting_affinity_are_pinned_to() {
    if !crate::common::require_tool("taskset", "taskset (util-linux)") {
        return;
    }
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    if online.trim() == "0" {
        eprintln!("skipped: one CPU, nothing outside it to pin to");
        return;
    }
    let out = std::process::Command::new("taskset")
        .args(["-c", "0"])
        .arg(env!("CARGO_BIN_EXE_iomark"))
        .args([
            "run", "--engine", "null", "--size", "1m", "--cpus", "1", "--json", "--quiet",
        ])
        .output()
        .unwrap();
    assert_success(&out);
}

#[test]
fn hipri_needs_a_device_with_poll_queues() {
    // A loop device has no poll queues (queue/io_poll is 0): refused before any I/O.
    let Some(dev) = LoopDev::new(8 << 20, true) else {
        return;
    };
    if !require("io_uring", iomark::io::engine::probe_io_uring().is_ok()) {
        return;
    }
    let before = dev.stat();
    let out = iomark()
        .args([
            "run",
            "--engine",
            "io_uring",
            "--hipri",
            "--rw",
            "randread",
            "--io-size",
            "1m",
        ])
        .arg(dev.path())
        .output()
        .unwrap();
    assert_refused(&out, "poll queues");
    assert_eq!(dev.stat()[0], before[0], "nothing was read");
    // A file on no block device (tmpfs) says so: it said "(no block device is not 1)".
    let f = tempfile::NamedTempFile::new_in("/dev/shm").unwrap();
    f.as_file().set_len(1 << 20).unwrap();
    let out = iomark()
        .args(["run", "--engine", "io_uring", "--hipri", "--io-size", "64k"])
        .arg(f.path())
        .output()
        .unwrap();
    assert_refused(
        &out,
        "is not on one with poll queues (it lies on no block device); drop --hipri",
    );
    // `iomark fio --dry-run` refuses what the run refuses (it listed the plan, exit 0):
    // the device's poll queues, and a CPU this process may not use.
    let dir = tmp();
    let dry = |text: String| {
        let job = dir.path().join("d.fio");
        std::fs::write(&job, text).unwrap();
        iomark()
            .arg("fio")
            .arg(&job)
            .arg("--dry-run")
            .output()
            .unwrap()
    };
    let out = dry(format!(
        "[h]\nfilename={}\nioengine=io_uring\nhipri=1\ndirect=1\nrw=randread\n",
        dev.path().display()
    ));
    assert_refused(&out, "poll queues");
    let out =
        dry("[c]\nioengine=null\nsize=1m\ncpus_allowed=77\ncpus_allowed_policy=split\n".into());
    assert_refused(&out, "names CPU 77 and this process may run on");
}

#[test]
fn the_plan_names_each_runs_engine_and_its_options() {
    // Two jobs of a file with their own engines: the listing's header said the first's
    // ("2 runs, engine libaio") and no column said any engine option.
    let dir = tmp();
    let job = dir.path().join("e.fio");
    let f = dir.path().join("e.dat");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=1m\n[a]\nioengine=io_uring\niodepth=8\n\
             sqthread_poll=1\niodepth_batch_submit=4\n[b]\nioengine=libaio\ndirect=1\n\
             iodepth=4\ncpus_allowed=0\n",
            f.display()
        ),
    )
    .unwrap();
    let out = iomark()
        .arg("fio")
        .arg(&job)
        .arg("--dry-run")
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(": 2 runs, engines io_uring, libaio"),
        "{text}"
    );
    assert!(
        text.contains("io_uring --sqpoll --batch-submit 4"),
        "{text}"
    );
    assert!(
        text.contains("libaio --cpus 0 --cpus-policy shared"),
        "{text}"
    );
    // One run: "1 run", not "1 runs".
    let one = dir.path().join("one.fio");
    let text = format!("[a]\nfilename={}\nsize=1m\nioengine=psync\n", f.display());
    std::fs::write(&one, text).unwrap();
    let out = iomark()
        .arg("fio")
        .arg(&one)
        .arg("--dry-run")
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(": 1 run, engine psync"), "{text}");
}

#[test]
fn fio_job_options_for_engines_are_understood() {
    // fio's spellings: ioengine=libaio, sync=dsync, iodepth_batch_submit,
    // sqthread_poll: the plan says what ran.
    let dir = tmp();
    let f = dir.path().join("j.dat");
    let doc = crate::common::dry_run(&[
        "qd",
        "--qd",
        "16",
        "--ioengine=libaio",
        "--sync=1",
        "--iodepth_batch_submit=8",
        "--iodepth_batch_complete_min=4",
        "--rw=randwrite",
        "--size=1m",
        f.to_str().unwrap(),
    ]);
    let spec = &doc["runs"][0]["spec"];
    assert_eq!(spec["engine"], "libaio", "{doc}");
    assert_eq!(spec["engine_opts"]["sync_mode"], "sync");
    assert_eq!(spec["engine_opts"]["batch_submit"], 8);
    assert_eq!(spec["engine_opts"]["batch_complete"], 4);
}

/// `iodepth_batch_complete_min=0` (without `iodepth_batch_complete_max`, which iomark
/// does not take): fio waits for a completion after every I/O it queues, so the queue
/// holds one I/O whatever the iodepth (fio's own depth histogram, checked here against
/// fio itself). iomark ran such a job at the iodepth, saying fio polled (session 26);
/// now at iodepth=1, as fio does, with a note.
#[test]
fn a_batch_complete_minimum_of_0_runs_one_io_at_a_time_as_in_fio() {
    if !crate::common::require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let dir = tmp();
    let job = dir.path().join("c.fio");
    for engine in ["libaio", "io_uring"] {
        std::fs::write(
            &job,
            format!(
                "[c]\nfilename=${{DIR}}/c.dat\nsize=8m\nrw=randread\nbs=4k\ndirect=1\n\
                 ioengine={engine}\niodepth=8\niodepth_batch_complete_min=0\n\
                 runtime=1\ntime_based\n"
            ),
        )
        .unwrap();
        let out = std::process::Command::new("fio")
            .args(["--output-format=json"])
            .arg(&job)
            .env("DIR", dir.path())
            .output()
            .unwrap();
        assert_success(&out);
        let fio: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let one = fio["jobs"][0]["iodepth_level"]["1"].as_f64().unwrap();
        assert!(one > 99.0, "{engine}: fio's depth 1 share {one}%");
        let doc = crate::common::iomark_fio_json(&job, dir.path(), &[]);
        let run = &doc["runs"][0];
        assert_eq!(run["spec"]["qd"], 1, "{engine}: {}", run["spec"]);
        let notes = warnings_where(&doc, |w| w.contains("iodepth_batch_complete_min=0"));
        assert!(
            notes.iter().any(|n| n.contains("one I/O at a time")
                && n.contains("iomark runs this job so, at iodepth=1")),
            "{engine}: {notes:?}"
        );
    }
}

/// probe12 finding 2b: libaio jobs whose AIO events pass `fs.aio-max-nr` failed in
/// io_setup, were kept as an interrupted repetition of zeros and advised
/// `--engine psync` (which refuses a queue depth). They are refused before anything
/// runs, naming the sysctl and the fixes.
#[test]
fn libaio_past_the_system_aio_limit_is_refused_before_running() {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/fs/{f}"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    let (Some(max), Some(used)) = (read("aio-max-nr"), read("aio-nr")) else {
        require("/proc/sys/fs/aio-max-nr and aio-nr", false);
        return;
    };
    // 4096 events a job: one job more than the free events hold.
    let jobs = max.saturating_sub(used) / 4096 + 1;
    if !require("at most 64 jobs of QD 4096 pass fs.aio-max-nr", jobs <= 64) {
        return;
    }
    let dir = tmp();
    let (f, o) = (dir.path().join("aio.dat"), dir.path().join("aio.json"));
    let jobs = jobs.to_string();
    let out = iomark()
        .args([
            "run", "--rw", "randread", "--engine", "libaio", "--qd", "4096",
        ])
        .args(["--jobs", &jobs, "--size", "16m", "--runtime", "1s", "-o"])
        .args([&o, &f])
        .output()
        .unwrap();
    assert_refused(&out, "fs.aio-max-nr");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("--jobs {jobs} x --qd 4096"))
            && err.contains("--engine io_uring")
            && !err.contains("psync"),
        "{err}"
    );
    assert!(!f.exists() && !o.exists(), "nothing made, nothing kept");
}

/// `--sqpoll` with its polling thread kept off its CPU: the ring filled with entries the
/// thread had taken but not yet released (it moves the ring's head after a whole batch,
/// and page-cache reads complete before that), and the run failed with "the engine
/// stayed busy" (every run with the other CPUs busy, probe of session 15). Now the
/// worker waits for room in the ring.
#[test]
fn sqpoll_with_its_thread_kept_busy_still_runs() {
    let dir = tmp();
    let f = dir.path().join("sqp.dat");
    std::fs::File::create(&f)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    // Two spinning threads for the run's length: the polling thread shares CPU 1 with
    // one of them.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hogs: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let outs: Vec<_> = (0..3)
        .map(|_| {
            iomark()
                .args([
                    "run", "--rw", "randread", "--engine", "io_uring", "--qd", "8",
                ])
                .args([
                    "--sqpoll",
                    "--sqpoll-cpu",
                    "1",
                    "--cpus",
                    "0",
                    "--repeat",
                    "2",
                ])
                .args(["--runtime", "0.5", "--ramp", "0", "--size", "16m", "-q"])
                .arg(&f)
                .output()
                .unwrap()
        })
        .collect();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for h in hogs {
        h.join().unwrap();
    }
    for out in &outs {
        assert_success(out);
    }
}

/// An SQPOLL thread pinned beside its job (`--cpus 0 --sqpoll-cpu 0`): the two take
/// turns on one CPU (tmpfs 4 KiB reads at QD 8: 46k IOPS against 277k with the thread
/// on CPU 1), and nothing said so. The run's warnings say it; with the thread elsewhere
/// they do not.
#[test]
fn an_sqpoll_thread_pinned_beside_its_job_is_said() {
    if !require("io_uring", iomark::io::engine::probe_io_uring().is_ok()) {
        return;
    }
    let dir = tmp();
    let f = dir.path().join("sq.dat");
    std::fs::File::create(&f).unwrap().set_len(8 << 20).unwrap();
    let said = |sq: &str| -> Vec<String> {
        let job = format!(
            "run --rw randread --engine io_uring --qd 8 --sqpoll --sqpoll-cpu {sq} --cpus 0 --runtime 0.3 --size 8m"
        );
        let mut args: Vec<&str> = job.split_whitespace().collect();
        args.push(f.to_str().unwrap());
        let doc = run_json(&args);
        warnings_where(&doc, |w| w.starts_with("--sqpoll-cpu"))
    };
    let beside = said("0");
    assert!(
        beside.len() == 1 && beside[0].contains("also a CPU the jobs run on (--cpus 0)"),
        "{beside:?}"
    );
    if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
        assert_eq!(said("1"), Vec::<String>::new());
    }
}

/// `--spin-wait` reaches the run: the results record it (`engine_opts.spin_wait_ns`,
/// absent at the default) and the spin each repetition's waits used (the default
/// resolved: off where the jobs take every CPU), the run's header names it, and
/// `--as-fio` says in a comment where iomark's waits spun (fio has no spin), not where
/// they did not. psync records no spin.
#[test]
fn spin_wait_is_recorded_and_said() {
    let dir = tmp();
    let f = sized_file(dir.path(), "s.dat", 4 << 20);
    for engine in waiting_engines() {
        let job = |spin: &str| {
            let mut a: Vec<String> =
                format!("run --rw randread --engine {engine} --qd 4 --runtime 0.2 --size 4m")
                    .split_whitespace()
                    .map(String::from)
                    .collect();
            if !spin.is_empty() {
                a.extend(["--spin-wait".to_string(), spin.to_string()]);
            }
            a.push(f.to_str().unwrap().to_string());
            a
        };
        // The default as resolved: 1.5 µs while one job leaves a CPU free.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let default = if cpus > 1 { 1500 } else { 0 };
        for (spin, recorded, used) in [
            ("0", Some(0), 0),
            ("800ns", Some(800), 800),
            ("", None, default),
        ] {
            let args = job(spin);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let doc = run_json(&args);
            let opts = &doc["runs"][0]["spec"]["engine_opts"];
            assert_eq!(
                opts["spin_wait_ns"].as_u64(),
                recorded,
                "{engine} {spin}: {opts}"
            );
            let rep = &doc["runs"][0]["repetitions"][0];
            assert_eq!(rep["spin_wait_ns"].as_u64(), Some(used), "{engine} {spin}");
            let out = iomark().args(&args).output().unwrap();
            assert_success(&out);
            let text = String::from_utf8_lossy(&out.stdout);
            let named = format!("--spin-wait {spin}");
            assert_eq!(
                text.contains(&named),
                !spin.is_empty(),
                "{engine} {spin}: {text}"
            );
            // The default is said as resolved, in the header.
            let header = text.lines().next().unwrap_or("");
            let said = match default {
                0 => {
                    "with no spin before a wait (the default where the job threads take every CPU)"
                }
                _ => "with a 1.5 µs spin before a wait (the default)",
            };
            assert_eq!(
                header.contains(said),
                spin.is_empty(),
                "{engine} {spin}: {header}"
            );
            let mut fio = args.clone();
            fio.push("--as-fio");
            let out = iomark().args(&fio).output().unwrap();
            assert_success(&out);
            let text = String::from_utf8_lossy(&out.stdout);
            let said = text.lines().any(|l| l.starts_with("# spin-wait"));
            assert_eq!(said, spin != "0", "{engine} {spin}: {text}");
        }
        // As many jobs as CPUs: no spin by default.
        let mut args = job("");
        let path = args.pop().unwrap();
        args.extend(["--jobs".to_string(), cpus.to_string(), path]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let doc = run_json(&args);
        let used = doc["runs"][0]["repetitions"][0]["spin_wait_ns"].as_u64();
        assert_eq!(used, Some(0), "{engine} --jobs {cpus}");
        let out = iomark().args(&args).output().unwrap();
        assert_success(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        let header = text.lines().next().unwrap_or("");
        assert!(
            header.contains(&format!(
                "{engine} with no spin before a wait (the default where"
            )),
            "{engine} --jobs {cpus}: {header}"
        );
    }
    let doc = run_json(&[
        "run",
        "--rw",
        "randread",
        "--engine",
        "psync",
        "--runtime",
        "0.2",
        "--size",
        "4m",
        f.to_str().unwrap(),
    ]);
    assert!(doc["runs"][0]["repetitions"][0]["spin_wait_ns"].is_null());
    let out = iomark()
        .args([
            "run",
            "--rw",
            "randread",
            "--engine",
            "psync",
            "--runtime",
            "0.2",
        ])
        .args(["--size", "4m", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("spin"), "psync: {text}");
}

/// `iomark fio --spin-wait`: the jobs of a file whose waits spin (io_uring, libaio) take
/// it, recorded as given and as used; a psync job of the same file keeps none; a file
/// with no such job is refused, one line, and so is a length without a unit.
#[test]
fn fio_job_files_take_spin_wait() {
    let dir = tmp();
    let data = sized_file(dir.path(), "s.dat", 4 << 20);
    let engines = waiting_engines();
    let head = format!(
        "[global]\nfilename={}\nsize=4m\nruntime=200ms\ntime_based\nrw=randread\niodepth=4\n",
        data.display()
    );
    let mut job = head.clone();
    for e in &engines {
        job.push_str(&format!("[{e}]\nstonewall\nioengine={e}\n"));
    }
    job.push_str("[sync]\nstonewall\nioengine=psync\n");
    let file = dir.path().join("j.fio");
    std::fs::write(&file, &job).unwrap();
    let f = file.to_str().unwrap();
    let doc = run_json(&["fio", f, "--spin-wait", "800ns"]);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), engines.len() + 1);
    for r in runs {
        let name = r["name"].as_str().unwrap();
        let given = r["spec"]["engine_opts"]["spin_wait_ns"].as_u64();
        let used = r["repetitions"][0]["spin_wait_ns"].as_u64();
        let want = (name != "sync").then_some(800);
        assert_eq!((given, used), (want, want), "{name}: {r}");
    }
    // The plan names it for the jobs that take it.
    let plan =
        String::from_utf8(stdout_of(&["fio", f, "--spin-wait", "800ns", "--dry-run"])).unwrap();
    assert!(plan.contains("--spin-wait 800ns"), "{plan}");
    // Without it, the default as resolved (one job: 1.5 µs where a CPU is left free).
    let doc = run_json(&["fio", f]);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let default = if cpus > 1 { 1500 } else { 0 };
    let r = &doc["runs"][0];
    assert!(r["spec"]["engine_opts"]["spin_wait_ns"].is_null(), "{r}");
    assert_eq!(r["repetitions"][0]["spin_wait_ns"].as_u64(), Some(default));
    // No job whose waits spin: refused.
    let only_sync = dir.path().join("sync.fio");
    std::fs::write(&only_sync, format!("{head}[sync]\nioengine=psync\n")).unwrap();
    let out = iomark()
        .args(["fio", only_sync.to_str().unwrap(), "--spin-wait", "1us"])
        .output()
        .unwrap();
    assert_refused(
        &out,
        "--spin-wait 1us: no job of the files waits for completions",
    );
    let out = iomark()
        .args(["fio", f, "--spin-wait", "5"])
        .output()
        .unwrap();
    assert_refused(&out, "--spin-wait 5 has no unit");
}

/// `--spin-wait` sweeps as other options do: a comma list is a dimension of a study, each
/// run's engine named with its spin in the plan.
#[test]
fn spin_wait_sweeps_in_a_study() {
    let dir = tmp();
    let f = dir.path().join("sw.dat");
    let out = iomark()
        .args(["suite", "qd", "--qd", "1", "--spin-wait", "0,1.5us"])
        .args(["--size", "16m", "--dry-run"])
        .arg(&f)
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for spin in ["0", "1.5us"] {
        let runs = text
            .lines()
            .filter(|l| l.contains(&format!("spin-wait={spin} ")))
            .filter(|l| l.contains(&format!("--spin-wait {spin}")))
            .count();
        assert!(runs >= 1, "no run with --spin-wait {spin}: {text}");
    }
    assert!(!f.exists());
}

/// The last access time of a file (`stat`'s atime, seconds).
fn atime(path: &std::path::Path) -> i64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().atime()
}

/// A read run leaves the access time of what it read as it was: its targets are opened
/// with O_NOATIME (as fio's are), so that no read writes the inode's access time (under
/// `relatime`, a file read since its last change has it written; the check alone was
/// 2.5% of a zram read's io-wq time in `perf`). A file whose access time is older than
/// its change is read by every engine; the time is what it was.
#[test]
fn reads_leave_the_access_time_as_it_was() {
    let dir = tmp();
    let file = dir.path().join("atime.dat");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    // The file system must write access times on reads at all for the check to mean
    // anything: a plain read of a file whose access time is older than its change.
    let set_old = || {
        let old = std::process::Command::new("touch")
            .args(["-a", "-d", "2000-01-01"])
            .arg(&file)
            .status()
            .expect("touch runs");
        assert!(old.success());
        atime(&file)
    };
    let before = set_old();
    std::fs::read(&file).unwrap();
    if !require(
        "a file system that updates access times on read (not noatime)",
        atime(&file) != before,
    ) {
        return;
    }
    let mut engines = real_engines();
    engines.push(vec!["--engine", "psync", "--buffered"]);
    for e in engines {
        // An access time of 2000, before the file's change: `relatime` updates it on read.
        let before = set_old();
        let path = file.to_str().unwrap();
        let args = [
            &["run", "--rw", "read", "--size", "1m", "--runtime", "0.2"],
            &e[..],
            &[path],
        ];
        run_json(&args.concat());
        assert_eq!(atime(&file), before, "{e:?} changed the access time");
    }
}

/// io_uring's reads of a file on tmpfs are handed to its kernel workers (io-wq): the
/// run says so, with both CPU figures, where libaio's (done in the job's thread) and
/// io_uring's direct reads of a file on the disk (taken inline) say nothing of it.
#[test]
fn io_uring_reads_done_by_its_kernel_workers_are_said() {
    if !require("io_uring", iomark::io::engine::probe_io_uring().is_ok()) {
        return;
    }
    let shm = std::path::Path::new("/dev/shm");
    let on_tmpfs = std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split(' ').nth(1) == Some("/dev/shm") && l.split(' ').nth(2) == Some("tmpfs"));
    if !require("/dev/shm on tmpfs", on_tmpfs) {
        return;
    }
    let mem = tempfile::tempdir_in(shm).unwrap();
    let disk = tmp();
    let said = |dir: &std::path::Path, args: &[&str]| {
        let f = dir.join("wq.dat");
        std::fs::write(&f, vec![7u8; 8 << 20]).unwrap();
        let f = f.to_str().unwrap().to_string();
        let mut all = vec!["run", f.as_str(), "--rw", "randread", "--bs", "4k"];
        all.extend(["--runtime", "0.5", "--ramp", "0"]);
        all.extend(args);
        let doc = run_json(&all);
        let run = &doc["runs"][0];
        let wq: f64 = (run["repetitions"].as_array().unwrap().iter())
            .map(|r| {
                r["cpu"]["io_wq"]["user_s"].as_f64().unwrap()
                    + r["cpu"]["io_wq"]["sys_s"].as_f64().unwrap()
            })
            .sum();
        let w = (run["warnings"].as_array().unwrap().iter())
            .filter_map(|w| w.as_str())
            .find(|w| w.contains("io_uring handed its requests"))
            .map(str::to_string);
        (w, wq)
    };
    let (w, wq) = said(mem.path(), &["--engine", "io_uring", "--buffered"]);
    let w = w.unwrap_or_else(|| panic!("not said, io-wq {wq} s"));
    assert!(w.contains(&format!("io-wq used {wq:.2} s")), "{w}");
    let (w, _) = said(mem.path(), &["--engine", "libaio", "--buffered"]);
    assert_eq!(w, None);
    let (w, wq) = said(
        disk.path(),
        &["--engine", "io_uring", "--direct", "--qd", "8"],
    );
    assert_eq!(w, None, "io-wq {wq} s");
}

#[test]
fn the_null_engines_header_says_no_io_mode() {
    // It opens nothing: its header said "(1 GiB span, direct, 0.3s)".
    let out = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "1g",
            "--runtime",
            "0.2s",
        ])
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let head = text.lines().next().unwrap_or("");
    assert!(
        head.contains("the null engine (no I/O) (1 GiB span, 0.2s)"),
        "{head}"
    );
}

//! Verdicts measured, not guessed (issue 12): the page cache's share of a buffered run's
//! reads against the kernel's own read counter of a private loop device, cold (after
//! --drop-caches) and warm; the device counters described as the whole device's and
//! flagged when another writer moved them; zram's stored bytes and the measured
//! compressibility in `run`'s text and the compress study's table; buffered writes the
//! page cache took, against the device's write counter in and after the window; reads
//! of a file's holes and unwritten extents, said before the run and seen in the device's
//! read counter after it.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::common::{LoopDev, Mounted, Zram, iomark, read_json, require, tmp, write_at};

/// Runs iomark with `args` and `-o` a results file; returns the document and stdout.
fn run_with_text(dir: &Path, args: &[&str]) -> (Value, String) {
    let out_file = dir.join("r.json");
    let _ = std::fs::remove_file(&out_file);
    let out = iomark()
        .args(args)
        .arg("-o")
        .arg(&out_file)
        .output()
        .expect("iomark runs");
    assert!(
        out.status.success(),
        "iomark {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        read_json(&out_file),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A buffered randread of the loop device with `extra` options: the run, its text,
/// iomark's page-cache figure and the one the kernel's read counter gives (read by this
/// test around the run).
fn buffered_read(dev: &LoopDev, dir: &Path, extra: &[&str]) -> (Value, String, f64, f64) {
    let path = dev.path().to_str().unwrap().to_string();
    let mut args = vec!["run", "--rw", "randread", "--buffered"];
    args.extend_from_slice(extra);
    args.push(&path);
    let before = dev.stat();
    let (doc, text) = run_with_text(dir, &args);
    let after = dev.stat();
    let run = doc["runs"][0].clone();
    let rep = &run["repetitions"][0];
    let read = rep["read"]["bytes"].as_u64().unwrap();
    let kernel = (after[1] - before[1]) * 512;
    let expect = 100.0 * (read - kernel.min(read)) as f64 / read as f64;
    let hit = rep["page_cache_hit_pct"].as_f64().unwrap();
    assert!(
        (hit - expect).abs() <= 2.0,
        "iomark says {hit:.1}% from the page cache, the kernel read {kernel} of {read} bytes ({expect:.1}%)"
    );
    (run, text, hit, expect)
}

#[test]
fn page_cache_hits_match_the_kernels_read_counter_cold_and_warm() {
    let _cache = crate::common::page_cache_lock();
    let Some(dev) = LoopDev::new(64 << 20, false) else {
        return;
    };
    let dir = tmp();
    // Cold: the cache dropped, each 4 KiB block of 32 MiB drawn once on average.
    let (run, text, hit, _) = buffered_read(&dev, dir.path(), &["--drop-caches", "--size", "32m"]);
    assert!(hit < 50.0, "a cold pass is mostly the device's: {hit}");
    assert_eq!(run["cache_bound"], false, "{hit}% hits is not cache-bound");
    assert!(
        text.contains(&format!("cache: {hit:.0}% of reads served from memory")),
        "{text}"
    );
    assert!(
        !text.contains("this measured the page cache"),
        "no guess contradicting the counters: {text}"
    );
    // A device cannot be made larger than memory: the advice is --direct alone.
    assert!(
        text.contains("to measure the device use --direct"),
        "{text}"
    );
    assert!(!text.contains("(2x memory)"), "{text}");
    // Warm: a 4 MiB span read for a second; after the first pass memory serves it all.
    let (run, text, hit, _) = buffered_read(&dev, dir.path(), &["--size", "4m", "--runtime", "1"]);
    assert!(hit > 95.0, "{hit}");
    assert_eq!(run["cache_bound"], true);
    assert!(
        text.contains("this measured the page cache more than the device"),
        "{text}"
    );
}

#[test]
fn device_counters_are_the_whole_devices_and_another_writer_is_flagged() {
    let Some(dev) = LoopDev::new(64 << 20, false) else {
        return;
    };
    let dir = tmp();
    let path = dev.path().to_path_buf();
    // Another process writes the second half of the device while iomark reads the first.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (stop, path) = (stop.clone(), path.clone());
        std::thread::spawn(move || {
            use std::os::unix::fs::{FileExt, OpenOptionsExt};
            let f = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_SYNC)
                .open(&path)
                .unwrap();
            let buf = vec![0x5au8; 1 << 20];
            let mut written = 0u64;
            while !stop.load(Ordering::Relaxed) {
                f.write_all_at(&buf, (32 << 20) + written % (32 << 20))
                    .unwrap();
                written += 1 << 20;
            }
            written
        })
    };
    let result = std::panic::catch_unwind(|| {
        run_with_text(
            dir.path(),
            &[
                "run",
                "--rw",
                "randread",
                "--size",
                "16m",
                "--runtime",
                "1",
                path.to_str().unwrap(),
            ],
        )
    });
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    let (doc, text) = result.unwrap();
    let rep = &doc["runs"][0]["repetitions"][0];
    assert_eq!(rep["write"]["bytes"], 0);
    assert!(written > 2 << 20, "the writer wrote {written} bytes");
    assert!(rep["device"]["write_bytes"].as_u64().unwrap() > 1 << 20);
    assert!(
        text.contains(&format!(
            "device {} (the whole device, all processes)",
            dev.name()
        )),
        "{text}"
    );
    assert!(
        text.contains("the device's writes were clearly more than iomark's"),
        "{text}"
    );
    // Direct I/O: no page-cache figure.
    assert!(rep["page_cache_hit_pct"].is_null());
}

#[test]
fn zram_stored_bytes_and_measured_data_are_in_the_text_and_the_compress_table() {
    let Some(z) = Zram::new("lz4", "64M") else {
        return;
    };
    let dir = tmp();
    // Nothing written yet: reads are zeros from nowhere, and the run says so.
    let (_, text) = run_with_text(
        dir.path(),
        &["run", "--rw", "randread", "--runtime", "0.2", &z.dev()],
    );
    assert!(
        text.contains("is a zram device that holds nothing yet"),
        "{text}"
    );
    let (doc, text) = run_with_text(
        dir.path(),
        &[
            "run",
            "--rw",
            "write",
            "--bs",
            "128k",
            "--size",
            "32m",
            "--compress",
            "50",
            "--allow-write-device",
            &z.dev(),
        ],
    );
    let wa = doc["runs"][0]["write_amplification"]["ratio"]
        .as_f64()
        .unwrap();
    assert!(
        text.contains(&format!("write amplification (zram, best source): {wa:.3}")),
        "{text}"
    );
    assert!(
        text.contains("write amplification (block_layer): "),
        "{text}"
    );
    // A fresh device: its content is this run's. A second run over part of it: the note
    // says mm_stat is the device's whole content, with what it held before.
    assert!(!text.contains("before this run"), "{text}");
    let (_, read) = run_with_text(
        dir.path(),
        &["run", "--rw", "randread", "--runtime", "0.2", &z.dev()],
    );
    assert!(!read.contains("holds nothing yet"), "written now: {read}");
    let dev = z.dev();
    let partial = "run --rw randwrite --bs 4k --size 8m --runtime 0.3 --compress 90";
    let args: Vec<&str> = (partial.split(' '))
        .chain(["--allow-write-device", &dev])
        .collect();
    let (_, text) = run_with_text(dir.path(), &args);
    assert!(z.mm_stat().0 > 0);
    assert!(
        text.contains("the device's whole content: it held ") && text.contains("before this run"),
        "{text}"
    );
    // The compress study: requested, lz4 and zstd as measured, what zram stored.
    let (doc, text) = run_with_text(
        dir.path(),
        &[
            "suite",
            "compress",
            "--compress",
            "50",
            "--size",
            "16m",
            "--runtime",
            "1",
            "--ramp",
            "0",
            "--allow-write-device",
            &z.dev(),
        ],
    );
    for col in ["lz4 saves", "zstd saves", "device stored", "write ampl."] {
        assert!(text.contains(col), "{col}: {text}");
    }
    let run = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["study"]["test"] == "randwrite")
        .unwrap();
    let lz4 = run["repetitions"][0]["data"]["lz4_pct"].as_f64().unwrap();
    let stored = run["write_amplification_sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["source"] == "zram")
        .unwrap()["ratio"]
        .as_f64()
        .unwrap();
    let section = text.split("\nrandwrite\n").nth(1).unwrap();
    let row = section
        .lines()
        .find(|l| l.starts_with("50%"))
        .unwrap_or_else(|| panic!("a 50% row: {section}"));
    assert!(row.contains(&format!("{lz4:.0}%")), "{row}");
    assert!(
        row.contains(&format!("{:.0}%", 100.0 * stored)),
        "zram stored {stored}: {row}"
    );
    assert!(row.contains("(zram)"), "{row}");
}

/// Buffered writes that nothing flushes: a note before the run about writes (none about
/// reads, which the job does not do), what the page cache held when the window closed
/// from the device's write counter, and no write amplification figure; with --end-fsync
/// none of that, and a figure.
#[test]
fn buffered_writes_the_cache_held_are_said_and_not_taken_for_the_devices() {
    let Some(dev) = LoopDev::new(64 << 20, false) else {
        return;
    };
    let dir = tmp();
    let path = dev.path().to_str().unwrap().to_string();
    let args = |extra: &'static [&'static str]| {
        let mut a = vec![
            "run",
            "--rw",
            "randwrite",
            "--bs",
            "16k",
            "--size",
            "32m",
            "--runtime",
            "1",
        ];
        a.extend_from_slice(&["--buffered", "--allow-write-device"]);
        a.extend_from_slice(extra);
        a.push(&path);
        a
    };
    let before = dev.stat();
    let (doc, text) = run_with_text(dir.path(), &args(&[]));
    let after = dev.stat();
    let run = &doc["runs"][0];
    let rep = &run["repetitions"][0];
    let own = rep["write"]["bytes"].as_u64().unwrap();
    let in_window = rep["device"]["write_bytes"].as_u64().unwrap();
    assert!(own > 1 << 20, "iomark wrote {own} bytes");
    assert!(
        text.contains("buffered writes go to the page cache at memory speed"),
        "{text}"
    );
    assert!(
        !text.contains("may serve reads"),
        "a job that only writes: {text}"
    );
    // The kernel's counter over the whole command: every written block reached the
    // device by the end (the device is flushed when the last opener closes it), however
    // little of it did within the window.
    let total = (after[3] - before[3]) * 512;
    assert!(total >= in_window, "{total} < {in_window}");
    assert!(
        total >= (32 << 20).min(own) * 9 / 10,
        "the device wrote {total} of {own}"
    );
    let held = text.contains("the page cache took");
    assert_eq!(
        held,
        in_window < own / 10 * 9,
        "the device wrote {in_window} of {own} in the window: {text}"
    );
    if held {
        // The size the write line gives ("..., 26713 I/Os, 104.3 MiB").
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("write:"))
            .unwrap();
        let size = line.rsplit(", ").next().unwrap();
        assert!(
            text.contains(&format!("of the {size} iomark wrote")),
            "{text}"
        );
    }
    let block = |run: &Value| {
        run["write_amplification_sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["source"] == "block_layer")
            .unwrap()
            .clone()
    };
    let wa = block(run);
    assert!(wa["ratio"].is_null(), "{wa}");
    assert!(
        wa["note"]
            .as_str()
            .unwrap()
            .starts_with("not measured: buffered writes"),
        "{wa}"
    );
    assert!(
        text.contains("write amplification (block_layer): not measured: buffered writes"),
        "{text}"
    );
    // With the flush in the window: no such note, a figure from the counters.
    let (doc, text) = run_with_text(dir.path(), &args(&["--end-fsync"]));
    assert!(
        !text.contains("buffered writes go to the page cache"),
        "{text}"
    );
    assert!(!text.contains("the page cache took"), "{text}");
    let rep = &doc["runs"][0]["repetitions"][0];
    let (own, dev_bytes) = (
        rep["write"]["bytes"].as_f64().unwrap(),
        rep["device"]["write_bytes"].as_f64().unwrap(),
    );
    let wa = block(&doc["runs"][0]);
    let ratio = wa["ratio"].as_f64().unwrap_or_else(|| panic!("{wa}"));
    assert!((ratio - dev_bytes / own).abs() < 1e-9, "{wa}");
    assert!(dev_bytes > 0.0);
    // A second of random writes over 32 MiB rewrites blocks the cache holds: the flush
    // writes each once, and the words say the figure is the cache's.
    let merged = dev_bytes < 0.9 * own;
    assert_eq!(
        text.contains("rewrites of the same blocks merged in the page cache"),
        merged,
        "the device wrote {dev_bytes} of {own}: {text}"
    );
    assert_eq!(
        wa["note"]
            .as_str()
            .unwrap()
            .contains("under 1 is the cache's doing"),
        merged,
        "{wa}"
    );
}

/// Direct reads of an existing file on a private ext4: with its second half a hole, and
/// only fallocated. iomark says before the run how much of the span is holes or unwritten
/// extents (the file's allocated blocks, from its metadata, say the same), and after it
/// what the device's read counter showed: about half of iomark's bytes, then nothing.
#[test]
fn reads_of_holes_and_unwritten_extents_are_said_and_seen_in_the_device_counter() {
    use std::os::unix::fs::MetadataExt;
    let Some(dev) = LoopDev::new(64 << 20, false) else {
        return;
    };
    let Some(fs) = Mounted::ext4(dev.path()) else {
        return;
    };
    let dir = tmp();
    let half = fs.path().join("half.dat");
    std::fs::File::create(&half)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    write_at(&half, 0, &vec![0x5a; 4 << 20]);
    let blocks = std::fs::metadata(&half).unwrap().blocks() * 512;
    assert_eq!(
        blocks,
        4 << 20,
        "the first half is allocated, the rest a hole"
    );
    let read = |file: &Path| {
        let f = file.to_str().unwrap();
        run_with_text(
            dir.path(),
            &["run", "--rw", "randread", "--runtime", "1", f],
        )
    };
    let (doc, text) = read(&half);
    let note = format!(
        "50% of the span of {} (4 MiB of 8 MiB) is holes or unwritten extents",
        half.display()
    );
    assert!(text.contains(&note), "{text}");
    let rep = &doc["runs"][0]["repetitions"][0];
    let (own, dev_read) = (
        rep["read"]["bytes"].as_f64().unwrap(),
        rep["device"]["read_bytes"].as_f64().unwrap(),
    );
    // Random reads: about half land in the written half, and only those reach the device.
    let share = dev_read / own;
    assert!(
        (0.35..0.65).contains(&share),
        "the device read {dev_read} of {own}"
    );
    assert!(
        text.contains("of the ")
            && text.contains("iomark read with direct I/O: the rest came from elsewhere"),
        "{text}"
    );
    // Only fallocated: all unwritten, though every block is allocated.
    let alloc = fs.path().join("alloc.dat");
    let status = std::process::Command::new("fallocate")
        .args(["-l", "8M"])
        .arg(&alloc)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(std::fs::metadata(&alloc).unwrap().blocks() * 512, 8 << 20);
    let (doc, text) = read(&alloc);
    let note = format!(
        "100% of the span of {} (8 MiB of 8 MiB) is holes or unwritten extents",
        alloc.display()
    );
    assert!(text.contains(&note), "{text}");
    let rep = &doc["runs"][0]["repetitions"][0];
    assert_eq!(rep["device"]["read_bytes"], 0, "{rep}");
    assert!(text.contains("the device read nothing of the"), "{text}");
    // A file written whole: neither note.
    write_at(&half, 4 << 20, &vec![0xa5; 4 << 20]);
    let (_, text) = read(&half);
    assert!(!text.contains("holes or unwritten"), "{text}");
    assert!(!text.contains("came from elsewhere"), "{text}");
}

/// A file on tmpfs is memory: the run says no storage device is measured; one on the
/// disk's filesystem does not get that note.
#[test]
fn a_file_on_tmpfs_is_said_to_measure_memory() {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let shm = mounts
        .lines()
        .any(|l| l.split(' ').nth(1) == Some("/dev/shm") && l.split(' ').nth(2) == Some("tmpfs"));
    if !require("a tmpfs mounted at /dev/shm", shm) {
        return;
    }
    let dir = tmp();
    let mem = tempfile::tempdir_in("/dev/shm").unwrap();
    for (place, memory) in [(mem.path(), true), (dir.path(), false)] {
        let file = place.join("f.dat");
        let f = file.to_str().unwrap();
        let args = [
            "run",
            "--rw",
            "randread",
            "--size",
            "1m",
            "--runtime",
            "0.2",
            f,
        ];
        let (_, text) = run_with_text(dir.path(), &args);
        let note = format!("{f} is on tmpfs, which keeps files in memory");
        assert_eq!(text.contains(&note), memory, "{text}");
    }
}

#[test]
fn one_repetition_has_no_stddev_in_reports_and_comparisons() {
    let dir = tmp();
    let a = dir.path().join("a.json");
    let o = iomark()
        .args([
            "run", "--engine", "null", "--rw", "randread", "--size", "4m", "-q", "-o",
        ])
        .arg(&a)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = |args: &[&str]| {
        let o = iomark().args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let a = a.to_str().unwrap();
    // The columns "IOPS sd" and "MB/s sd" of the one run.
    let md = out(&["report", a, "--format", "md"]);
    let header: Vec<&str> = md
        .lines()
        .find(|l| l.starts_with("| run"))
        .unwrap()
        .split(" | ")
        .collect();
    let row: Vec<&str> = md
        .lines()
        .find(|l| l.starts_with("| randread"))
        .unwrap()
        .split(" | ")
        .collect();
    for col in ["IOPS sd", "MB/s sd"] {
        let i = header.iter().position(|h| *h == col).unwrap();
        assert_eq!(row[i], "-", "{col} in {md}");
    }
    let csv = out(&["report", a, "--format", "csv"]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in ["IOPS sd", "MB/s sd"] {
        let i = header.iter().position(|h| *h == col).unwrap();
        assert_eq!(row[i], "", "{col} in {csv}");
    }
    let html = out(&["report", a, "--format", "html"]);
    assert!(!html.contains("<td>0</td><td>"), "no sd 0 in {html}");
    let cmp = out(&["compare", a, a, "--format", "md"]);
    // The sd column of the IOPS rows ("| file | figure | mean | sd | …").
    let row = cmp.lines().find(|l| l.starts_with("| B | IOPS")).unwrap();
    assert_eq!(row.split(" | ").nth(3), Some("-"), "{cmp}");
}

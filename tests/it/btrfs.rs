//! btrfs, a file system that compresses (`compress-force=zstd`): what it stores of a run's
//! writes (`btrfs filesystem df`, its device's counters) against what iomark was asked to
//! write and measured, and the counters iomark reports for a file there.

use crate::common::*;

const MIB: u64 = 1 << 20;

/// One write run of 256 MiB of 128 KiB blocks at `--compress pct` to a new file on `fs`
/// (kept), prepared as `new_file` says; the results document.
fn write_run(fs: &Btrfs, pct: u32, new_file: &str) -> serde_json::Value {
    let file = fs.mnt.path().join(format!("f-{pct}-{new_file}"));
    run_json(&[
        "run",
        "--rw",
        "write",
        "--bs",
        "128k",
        "--qd",
        "4",
        "--size",
        "256m",
        "--compress",
        &pct.to_string(),
        "--new-file",
        new_file,
        "--keep",
        file.to_str().unwrap(),
    ])
}

#[test]
fn btrfs_stores_what_the_compressibility_says() {
    let Some(fs) = Btrfs::new(1, 1536 * MIB, &[], "compress-force=zstd") else {
        return;
    };
    for (pct, new_file) in [(50u32, "allocate"), (50, "write"), (0, "allocate")] {
        let before = fs.data_used();
        let doc = write_run(&fs, pct, new_file);
        let stored = (fs.data_used() - before) as f64 / (256 * MIB) as f64;
        let rep = &doc["runs"][0]["repetitions"][0];
        let zstd = rep["data"]["zstd_pct"].as_f64().unwrap();
        eprintln!(
            "btrfs, --compress {pct}, --new-file {new_file}: stores {:.1}%; iomark measured zstd-1 {zstd:.1}% smaller",
            100.0 * stored
        );
        if pct == 0 {
            assert!(stored > 0.99, "0%: btrfs stores {stored:.3} of the bytes");
            continue;
        }
        // zstd level 3 per 128 KiB extent, each rounded up to a 4 KiB sector: a little
        // more than half. A preallocated extent (written in place, never compressed)
        // would store all of it.
        assert!(
            (0.45..0.60).contains(&stored),
            "50% with --new-file {new_file}: btrfs stores {stored:.3} of the bytes"
        );
        assert!(
            (100.0 * (1.0 - stored) - zstd).abs() < 8.0,
            "btrfs saved {:.1}%, iomark measured {zstd:.1}%",
            100.0 * (1.0 - stored)
        );
    }
}

#[test]
fn btrfs_device_counters_are_its_one_devices() {
    let Some(fs) = Btrfs::new(1, 1536 * MIB, &[], "compress-force=zstd") else {
        return;
    };
    let before = fs.devs[0].stat();
    let doc = write_run(&fs, 50, "allocate");
    let after = fs.devs[0].stat();
    let run = &doc["runs"][0];
    let dev = &run["repetitions"][0]["device"];
    assert_eq!(dev["name"], fs.devs[0].name().as_str(), "{dev}");
    let wrote = dev["write_bytes"].as_u64().unwrap();
    // The kernel's own count over the whole run holds iomark's window and a little more.
    let kernel = (after[3] - before[3]) * 512;
    assert!(
        wrote <= kernel && wrote * 10 >= kernel * 9,
        "iomark says the device wrote {wrote} bytes, the kernel {kernel}"
    );
    let wa = run["write_amplification"]["ratio"].as_f64().unwrap();
    assert!(
        (0.45..0.65).contains(&wa),
        "50% compressible data on compress-force=zstd: write amplification {wa}"
    );
    // Under 1 is said to be the file system's compression.
    let note = run["write_amplification"]["note"].as_str().unwrap();
    assert!(
        note.contains("btrfs compresses") && note.contains("compress-force=zstd"),
        "{note}"
    );
}

#[test]
fn btrfs_over_two_devices_reports_neither_alone() {
    let Some(fs) = Btrfs::new(
        2,
        1024 * MIB,
        &["-d", "raid1", "-m", "raid1"],
        "compress-force=zstd",
    ) else {
        return;
    };
    let doc = write_run(&fs, 50, "allocate");
    let rep = &doc["runs"][0]["repetitions"][0];
    assert!(rep["device"].is_null(), "{}", rep["device"]);
    let block = doc["runs"][0]["write_amplification_sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["source"] == "block_layer")
        .unwrap();
    let note = block["note"].as_str().unwrap();
    assert!(
        note.contains("no one block device holds this btrfs"),
        "{note}"
    );
    // Both members did write: the data was there to count, just not on one device.
    assert!(fs.devs.iter().all(|d| d.stat()[3] > 0));
}

#[test]
fn btrfs_compression_is_not_taken_for_the_page_cache() {
    let _cache = crate::common::page_cache_lock();
    let Some(fs) = Btrfs::new(1, 1536 * MIB, &[], "compress-force=zstd") else {
        return;
    };
    write_run(&fs, 50, "write");
    let file = fs.mnt.path().join("f-50-write");
    // One cold pass: the page cache serves nothing, the device reads about half the bytes
    // (compressed), which its counters alone would make a 47% share of the cache.
    let doc = run_json(&[
        "run",
        "--rw",
        "read",
        "--bs",
        "128k",
        "--io-size",
        "256m",
        "--buffered",
        "--drop-caches",
        file.to_str().unwrap(),
    ]);
    let run = &doc["runs"][0];
    let rep = &run["repetitions"][0];
    let dev_read = rep["device"]["read_bytes"].as_u64().unwrap();
    assert!(dev_read < 200 * MIB, "the device read {dev_read} bytes");
    assert!(
        rep["page_cache_hit_pct"].is_null(),
        "{}",
        rep["page_cache_hit_pct"]
    );
    let warnings = run["warnings"].to_string();
    assert!(
        warnings.contains("btrfs compresses what it stores here"),
        "{warnings}"
    );
    assert!(!warnings.contains("served from memory"), "{warnings}");
    assert!(
        !warnings.contains("is measured per repetition"),
        "{warnings}"
    );
}

//! --verify and `iomark verify`: a clean run reads every block back good; a flipped byte
//! is one corrupt block at the right offset; a block moved elsewhere is misplaced; an
//! older copy of a block (from an earlier run) is stale; anything bad exits 1.

use std::os::unix::fs::FileExt;

use crate::common::{LoopDev, assert_success, iomark, run_json, tmp};

const BS: u64 = 4096;

fn verify(target: &std::path::Path, state: &std::path::Path) -> (i32, serde_json::Value) {
    let out = iomark()
        .args(["verify", "--json", "--state"])
        .arg(state)
        .arg(target)
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap(), doc)
}

fn read_block(f: &std::path::Path, i: u64) -> Vec<u8> {
    let mut b = vec![0u8; BS as usize];
    std::fs::File::open(f)
        .unwrap()
        .read_exact_at(&mut b, i * BS)
        .unwrap();
    b
}

fn write_block(f: &std::path::Path, i: u64, b: &[u8]) {
    let file = std::fs::OpenOptions::new().write(true).open(f).unwrap();
    file.write_all_at(b, i * BS).unwrap();
    file.sync_all().unwrap();
}

#[test]
fn clean_run_then_corrupt_misplaced_and_stale_blocks() {
    let dir = tmp();
    let f = dir.path().join("v.dat");
    let st = dir.path().join("v.state");
    let p = f.to_str().unwrap();
    // Run A (seed 1): every block written once; keep an old copy of block 9.
    let doc = run_json(&[
        "run", "--rw", "write", "--bs", "4k", "--size", "1m", "--verify", "--seed", "1", "--keep",
        p,
    ]);
    let v = &doc["runs"][0]["repetitions"][0]["verify"];
    assert_eq!(
        (v["blocks"].as_u64(), v["good"].as_u64()),
        (Some(256), Some(256))
    );
    let old9 = read_block(&f, 9);
    // Run B (seed 2, random writes of every block several times, two jobs, QD 8).
    let doc = run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--size",
        "1m",
        "--io-size",
        "2m",
        "--qd",
        "8",
        "--jobs",
        "2",
        "--verify",
        "--verify-state",
        st.to_str().unwrap(),
        "--seed",
        "2",
        p,
    ]);
    let v = &doc["runs"][0]["repetitions"][0]["verify"];
    assert_eq!(v["good"], v["blocks"], "{v}");
    assert_eq!(
        v["corrupt"].as_u64().unwrap()
            + v["misplaced"].as_u64().unwrap()
            + v["stale"].as_u64().unwrap(),
        0
    );
    let (code, r) = verify(&f, &st);
    assert_eq!(code, 0, "{r}");
    let written = r["blocks"].as_u64().unwrap();
    assert!(
        written > 200,
        "random writes of 2 MiB over 1 MiB touch most blocks: {written}"
    );

    // Find three blocks run B wrote (their header carries seed 2).
    let b_blocks: Vec<u64> = (0..256)
        .filter(|&i| read_block(&f, i)[16..24] == 2u64.to_le_bytes())
        .take(3)
        .collect();
    let (flip, dst, _) = (b_blocks[0], b_blocks[1], b_blocks[2]);

    // One flipped byte: exactly one corrupt block, at its offset.
    let mut b = read_block(&f, flip);
    b[2000] ^= 0x40;
    write_block(&f, flip, &b);
    let (code, r) = verify(&f, &st);
    assert_eq!(code, 1);
    assert_eq!(
        (
            r["corrupt"].as_u64(),
            r["misplaced"].as_u64(),
            r["stale"].as_u64()
        ),
        (Some(1), Some(0), Some(0)),
        "{r}"
    );
    assert_eq!(r["first_bad"][0]["offset"].as_u64(), Some(flip * BS));
    b[2000] ^= 0x40;
    write_block(&f, flip, &b);

    // Block `flip`'s content written over block `dst`: one misplaced block at dst.
    let saved = read_block(&f, dst);
    write_block(&f, dst, &b);
    let (code, r) = verify(&f, &st);
    assert_eq!(code, 1);
    assert_eq!(
        (
            r["corrupt"].as_u64(),
            r["misplaced"].as_u64(),
            r["stale"].as_u64()
        ),
        (Some(0), Some(1), Some(0)),
        "{r}"
    );
    assert_eq!(r["first_bad"][0]["offset"].as_u64(), Some(dst * BS));
    write_block(&f, dst, &saved);

    // Run A's older copy of block 9 restored (if run B rewrote it): one stale block.
    if read_block(&f, 9)[16..24] == 2u64.to_le_bytes() {
        write_block(&f, 9, &old9);
        let (code, r) = verify(&f, &st);
        assert_eq!(code, 1);
        assert_eq!(
            (
                r["corrupt"].as_u64(),
                r["misplaced"].as_u64(),
                r["stale"].as_u64()
            ),
            (Some(0), Some(0), Some(1)),
            "{r}"
        );
        assert_eq!(r["first_bad"][0]["offset"].as_u64(), Some(9 * BS));
    } else {
        panic!("run B did not rewrite block 9; pick another seed");
    }
}

#[test]
fn mixed_random_run_with_verify_reads_back_clean() {
    // Reads and writes interleaved at QD 16 on two jobs: every written block comes back
    // good, the run exits 0, and the file it created is gone.
    let dir = tmp();
    let f = dir.path().join("w.dat");
    let out = iomark()
        .args([
            "run", "--rw", "randrw", "--size", "2m", "--qd", "16", "--jobs", "2", "--verify",
            "--json", "-q",
        ])
        .arg(&f)
        .output()
        .unwrap();
    assert_success(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &doc["runs"][0]["repetitions"][0]["verify"];
    assert!(v["blocks"].as_u64().unwrap() > 100, "{v}");
    assert_eq!(v["good"], v["blocks"]);
    assert!(!f.exists());
}

#[test]
fn a_flipped_header_bit_is_corrupt() {
    // The CRC covers the header: a flipped bit in a written block's offset, seed or
    // generation is one corrupt block (it used to pass as misplaced or stale).
    let dir = tmp();
    let f = dir.path().join("h.dat");
    let st = dir.path().join("h.state");
    run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--size",
        "1m",
        "--io-size",
        "512k",
        "--verify",
        "--verify-state",
        st.to_str().unwrap(),
        "--seed",
        "2",
        "--keep",
        f.to_str().unwrap(),
    ]);
    let (code, r) = verify(&f, &st);
    assert_eq!(code, 0, "{r}");
    let i = (0..256)
        .find(|&i| {
            let b = read_block(&f, i);
            b.starts_with(b"IOMARK") && b[16..24] == 2u64.to_le_bytes()
        })
        .expect("a block the run wrote");
    let good = read_block(&f, i);
    let generation = u64::from_le_bytes(good[24..32].try_into().unwrap());
    let low = generation.trailing_zeros() as usize;
    // (field, byte, bit): the offset moved by 4 KiB (another block's), the seed changed
    // to 3 (another run's), the generation's lowest set bit cleared (an older write).
    let mut failed = Vec::new();
    for (field, byte, bit) in [
        ("offset", 9, 4),
        ("seed", 16, 0),
        ("generation", 24 + low / 8, low % 8),
    ] {
        let mut b = good.clone();
        b[byte] ^= 1 << bit;
        write_block(&f, i, &b);
        let (code, r) = verify(&f, &st);
        let counts = ["corrupt", "misplaced", "stale"].map(|k| r[k].as_u64());
        if code != 1
            || counts != [Some(1), Some(0), Some(0)]
            || r["first_bad"][0]["offset"].as_u64() != Some(i * BS)
        {
            failed.push(format!("a flipped bit in the {field}: exit {code}, {r}"));
        }
        write_block(&f, i, &good);
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn verify_reads_back_only_the_written_blocks() {
    // 4096 random 4 KiB writes over an 8 GiB loop device (sparse, over /dev/shm): the
    // read-back reads those blocks (adjacent ones coalesced), not 1 MiB around each
    // (which read 256 times as much). iomark's count is checked against the kernel's.
    let Some(dev) = LoopDev::new(8 << 30, true) else {
        return;
    };
    let before = dev.stat();
    let doc = run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--io-size",
        "16m",
        "--verify",
        "--allow-write-device",
        dev.path().to_str().unwrap(),
    ]);
    let after = dev.stat();
    let v = &doc["runs"][0]["repetitions"][0]["verify"];
    let blocks = v["blocks"].as_u64().unwrap();
    assert_eq!(v["good"].as_u64(), Some(blocks), "{v}");
    // Random offsets over 2 Mi blocks: nearly all 4096 writes hit distinct blocks.
    assert!((4000..=4096).contains(&blocks), "{v}");
    // The kernel saw the written blocks, plus the guard's look at the device's ends
    // (776 KiB) and whatever udev probes: a few MiB at most.
    let kernel = (after[1] - before[1]) * 512;
    eprintln!("{blocks} blocks written, the kernel saw {kernel} bytes read");
    assert!(
        kernel <= blocks * BS + (4 << 20),
        "{blocks} blocks written, {kernel} bytes read back"
    );
    // iomark's own count is exactly the written blocks, and the kernel saw all of it.
    let read = v["bytes_read"].as_u64().expect("bytes_read reported");
    assert_eq!(read, blocks * BS, "{v}");
    assert!(
        read <= kernel,
        "iomark read back {read} bytes, the kernel saw {kernel}"
    );
}

/// `iomark verify` on a target shorter than the state covers (cut since, or another file)
/// says so, instead of counting the missing blocks as corrupt.
#[test]
fn a_target_shorter_than_the_state_is_named_not_counted_corrupt() {
    let dir = tmp();
    let f = dir.path().join("v.dat");
    let st = dir.path().join("v.state");
    let p = f.to_str().unwrap();
    run_json(&[
        "run",
        "--rw",
        "write",
        "--bs",
        "4k",
        "--size",
        "1m",
        "--verify",
        "--verify-state",
        st.to_str().unwrap(),
        "--keep",
        p,
    ]);
    assert_eq!(verify(&f, &st).0, 0);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(512 << 10)
        .unwrap();
    let out = iomark()
        .args(["verify", "--state"])
        .arg(&st)
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("is 512 KiB, shorter than the 1 MiB the state file covers"),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("corrupt"));
}

/// A run's state checked against what it wrote, as `iomark verify --state STATE TARGET`.
fn verify_out(state: &std::path::Path, target: &std::path::Path) -> std::process::Output {
    let mut cmd = iomark();
    cmd.args(["verify", "--state"]).arg(state).arg(target);
    cmd.output().unwrap()
}

/// `iomark verify` with the state of another target is refused, naming both (exit 2),
/// instead of counting every block of the other target corrupt; the same target under
/// another path (a symbolic link) is still the target. Found by a probe: "0 good, 3418
/// corrupt", exit 1.
#[test]
fn another_targets_state_is_refused_naming_both() {
    let dir = tmp();
    let (vf, f) = (dir.path().join("vf.dat"), dir.path().join("f.dat"));
    let st = dir.path().join("vs.state");
    for (t, state) in [(&vf, &st), (&f, &dir.path().join("f.state"))] {
        let (t, state) = (t.to_str().unwrap(), state.to_str().unwrap());
        let args = ["run", "--rw", "write", "--size", "1m", "--verify", "--keep"];
        run_json(&[&args[..], &["--verify-state", state, t]].concat());
    }
    assert_eq!(verify(&vf, &st).0, 0);
    let out = verify_out(&st, &f);
    crate::common::assert_refused(&out, "vs.state was saved by a run on ");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(vf.to_str().unwrap()) && err.contains(&format!("not on {}", f.display())),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "no blocks counted");
    // A copy elsewhere is another target too; a link to it is the target.
    std::fs::copy(&vf, dir.path().join("copy.dat")).unwrap();
    let out = verify_out(&st, &dir.path().join("copy.dat"));
    crate::common::assert_refused(&out, "was saved by a run on ");
    std::os::unix::fs::symlink(&vf, dir.path().join("link.dat")).unwrap();
    assert_eq!(verify(&dir.path().join("link.dat"), &st).0, 0);
}

/// The same for block devices: a state saved on one loop device does not verify another.
#[test]
fn another_devices_state_is_refused() {
    let (Some(a), Some(b)) = (LoopDev::new(16 << 20, true), LoopDev::new(16 << 20, true)) else {
        return;
    };
    let dir = tmp();
    let st = dir.path().join("a.state");
    run_json(&[
        "run",
        "--rw",
        "write",
        "--size",
        "4m",
        "--verify",
        "--verify-state",
        st.to_str().unwrap(),
        "--allow-write-device",
        a.path().to_str().unwrap(),
    ]);
    assert_eq!(verify(a.path(), &st).0, 0);
    let out = verify_out(&st, b.path());
    crate::common::assert_refused(&out, "a block device of 16 MiB");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(a.path().to_str().unwrap()), "{err}");
}

/// Jobs that share a span each own a region of it under --verify: where the span holds
/// fewer blocks than jobs, a job with none took another's block and their writes raced
/// (read back "corrupt" or "stale" on healthy storage, exit 1, in a third to half of the
/// runs). Now refused up front, by --size and by an existing file's span alike; a span
/// of a block per job still runs, and reads back clean.
#[test]
fn verify_refuses_more_jobs_than_blocks_and_runs_a_block_each() {
    let dir = tmp();
    let f = dir.path().join("vj.dat");
    for jobs in ["4", "3"] {
        let out = iomark()
            .args(["run", "--rw", "write", "--verify", "--jobs", jobs])
            .args(["--bs", "4k", "--size", "8k", "--runtime", "0.2s"])
            .arg(&f)
            .output()
            .unwrap();
        crate::common::assert_refused(&out, &format!("--jobs {jobs} a block of its own"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("holds 2 of 4 KiB") && err.contains("--jobs 2 or fewer"),
            "{err}"
        );
    }
    std::fs::write(&f, vec![0u8; 3 * BS as usize]).unwrap();
    let out = iomark()
        .args([
            "run", "--rw", "write", "--verify", "--jobs", "4", "--bs", "4k",
        ])
        .args(["--runtime", "0.2s", "--overwrite"])
        .arg(&f)
        .output()
        .unwrap();
    crate::common::assert_refused(&out, "holds 3 of 4 KiB");
    for _ in 0..4 {
        let doc = run_json(&[
            "run",
            "--rw",
            "write",
            "--verify",
            "--jobs",
            "3",
            "--bs",
            "4k",
            "--runtime",
            "0.2s",
            "--overwrite",
            f.to_str().unwrap(),
        ]);
        let v = &doc["runs"][0]["repetitions"][0]["verify"];
        assert_eq!(v["good"], 3, "{v}");
        assert_eq!(
            v["corrupt"].as_u64().unwrap() + v["stale"].as_u64().unwrap(),
            0,
            "{v}"
        );
    }
}

/// --verify's header in every block makes every block unique, so where a block is one
/// dedup unit a --dedup could not be met: it was accepted and measured 0.0% duplicate
/// units for 50% asked, with no note. (Blocks of several units keep it for the units
/// without the header: `data::a_verify_runs_headers_are_not_counted_as_duplicates`.)
#[test]
fn verify_with_dedup_is_refused() {
    let dir = tmp();
    let f = dir.path().join("vd.dat");
    let out = iomark()
        .args(["run", "--rw", "randwrite", "--verify", "--dedup", "50"])
        .args(["--size", "1m", "--runtime", "0.2s"])
        .arg(&f)
        .output()
        .unwrap();
    crate::common::assert_refused(&out, "--dedup 50 cannot be met");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--dedup-unit (4 KiB)"), "{err}");
    assert!(!f.exists(), "nothing created for a refused run");
}

/// `--verify` with blocks of several dedup units keeps the dedup of the units without the
/// header: fewer than asked repeat (50% with 1 KiB units in 4 KiB blocks measured 32.2%),
/// which the run did not say. A note says so, and the measured figure is below the asked
/// one and at most the share the header leaves (3 of 4 units).
#[test]
fn verify_with_multi_unit_blocks_says_its_dedup_falls_short() {
    let dir = tmp();
    let f = dir.path().join("vd.dat");
    let doc = run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--verify",
        "--dedup",
        "50",
        "--dedup-unit",
        "1k",
        "--bs",
        "4k",
        "--size",
        "4m",
        "--io-size",
        "8m",
        f.to_str().unwrap(),
    ]);
    let run = &doc["runs"][0];
    let w = run["warnings"].to_string();
    assert!(
        w.contains("at most 3 of a block's 4 units can repeat"),
        "{w}"
    );
    let measured = run["repetitions"][0]["data"]["dedup_pct"].as_f64().unwrap();
    assert!(measured < 50.0 * 3.0 / 4.0 + 1.0, "{measured}");
}

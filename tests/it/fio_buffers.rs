//! fio's `scramble_buffers=0` (issue 14): fio fills its buffers once and writes them
//! unchanged; `iomark fio` writes one block again and again (`--dedup 100` with the block
//! as the unit). Checked on what both tools wrote: the distinct blocks of the file and
//! what zstd makes of it.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// The distinct `bs`-byte blocks of `file`, and its size under zstd -3 as a share of
/// its own.
fn distinct_and_zstd(file: &Path, bs: usize) -> (usize, f64) {
    let data = std::fs::read(file).unwrap();
    let blocks: HashSet<&[u8]> = data.chunks(bs).collect();
    let z = zstd::bulk::compress(&data, 3).unwrap();
    (blocks.len(), z.len() as f64 / data.len() as f64)
}

/// 8 MiB written in 64 KiB blocks with `scramble_buffers=0`: one distinct block under
/// both tools, and zstd keeps under 2% of the file; without it (fio scrambles every
/// 512-byte sector, iomark stamps every unit) all 128 blocks differ.
#[test]
fn unscrambled_writes_repeat_one_block_under_both_tools() {
    let dir = tmp();
    let job = |scramble: &str| {
        let f = dir.path().join(format!("w{scramble}.fio"));
        std::fs::write(
            &f,
            format!(
                "[w]\nfilename=${{DIR}}/w.dat\nrw=write\nbs=64k\nsize=8m\nscramble_buffers={scramble}\n"
            ),
        )
        .unwrap();
        f
    };
    let file = dir.path().join("w.dat");
    let doc = iomark_fio_json(&job("0"), dir.path(), &["--keep"]);
    let data = &doc["runs"][0]["spec"]["data"];
    assert_eq!(
        (data["dedup"].as_f64(), data["dedup_unit"].as_u64()),
        (Some(100.0), Some(65536))
    );
    let (n, z) = distinct_and_zstd(&file, 65536);
    assert!(
        n == 1 && z < 0.02,
        "iomark scramble_buffers=0: {n} blocks, zstd {z}"
    );
    std::fs::remove_file(&file).unwrap();
    iomark_fio_json(&job("1"), dir.path(), &["--keep"]);
    let (n, z) = distinct_and_zstd(&file, 65536);
    assert!(
        n == 128 && z > 0.99,
        "iomark, scrambled: {n} blocks, zstd {z}"
    );
    std::fs::remove_file(&file).unwrap();
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let fio = |job: &Path| {
        let out = Command::new("fio")
            .arg(job)
            .arg("--output=/dev/null")
            .env("DIR", dir.path())
            .output()
            .unwrap();
        assert_success(&out);
    };
    fio(&job("0"));
    let (n, z) = distinct_and_zstd(&file, 65536);
    assert!(
        n == 1 && z < 0.02,
        "fio scramble_buffers=0: {n} blocks, zstd {z}"
    );
    std::fs::remove_file(&file).unwrap();
    fio(&job("1"));
    let (n, _) = distinct_and_zstd(&file, 65536);
    assert_eq!(n, 128, "fio, scrambled");
}

/// Where fio would not scramble anyway the option changes nothing; a mix and a
/// block-size mix are refused with the reason.
#[test]
fn unscrambled_buffers_map_or_are_refused_with_the_reason() {
    let dir = tmp();
    let job = dir.path().join("u.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=${DIR}/u.dat\nsize=1m\nscramble_buffers=0\n\
         [refill]\nrw=write\nrefill_buffers\n[zeros]\nstonewall\nrw=write\nzero_buffers\n\
         [reads]\nstonewall\nrw=randread\n",
    )
    .unwrap();
    let out = iomark()
        .arg("fio")
        .arg(&job)
        .args(["--dry-run", "--json"])
        .env("DIR", dir.path())
        .output()
        .unwrap();
    assert_success(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for i in 0..3 {
        let d = &doc["runs"][i]["spec"]["data"];
        assert_eq!(d["dedup"].as_f64().unwrap_or(0.0), 0.0, "run {i}: {d}");
    }
    assert_eq!(doc["runs"][0]["spec"]["data"]["refill"], true);
    for (extra, why) in [
        (
            "rw=randrw\n",
            "in a mix fio writes what its buffers last read",
        ),
        (
            "rw=write\nbssplit=4k/50:64k/50\n",
            "with several block sizes",
        ),
    ] {
        std::fs::write(
            &job,
            format!("[x]\nfilename=${{DIR}}/u.dat\nsize=1m\nscramble_buffers=0\n{extra}"),
        )
        .unwrap();
        let out = iomark()
            .arg("fio")
            .arg(&job)
            .arg("--dry-run")
            .env("DIR", dir.path())
            .output()
            .unwrap();
        assert_refused(&out, why);
    }
}

/// fio's io_uring `fixedbufs` and `registerfiles` are what iomark's io_uring engine does
/// anyway, libaio's `userspace_reap` what its libaio does: `=1` runs; `=0`, or any with
/// another engine, is refused with the reason.
#[test]
fn registered_buffers_and_files_are_io_uring_s() {
    let dir = tmp();
    let job = dir.path().join("r.fio");
    let run = |text: &str| {
        std::fs::write(&job, text).unwrap();
        iomark()
            .arg("fio")
            .arg(&job)
            .arg("--dry-run")
            .env("DIR", dir.path())
            .output()
            .unwrap()
    };
    let head = "[a]\nfilename=${DIR}/r.dat\nsize=1m\ndirect=1\n";
    assert_success(&run(&format!(
        "{head}ioengine=io_uring\nfixedbufs\nregisterfiles=1\n"
    )));
    assert_refused(
        &run(&format!("{head}ioengine=io_uring\nregisterfiles=0\n")),
        "registerfiles=0 (iomark's io_uring always registers its file and buffers)",
    );
    assert_refused(
        &run(&format!("{head}ioengine=libaio\nfixedbufs\n")),
        "fixedbufs (an option of fio's io_uring engine only)",
    );
    assert_success(&run(&format!(
        "{head}ioengine=libaio
userspace_reap
"
    )));
    assert_refused(
        &run(&format!(
            "{head}ioengine=libaio
userspace_reap=0
"
        )),
        "userspace_reap=0 (iomark's libaio always reads its completions from the ring in user space)",
    );
    assert_refused(
        &run(&format!(
            "{head}ioengine=io_uring
userspace_reap=1
"
        )),
        "userspace_reap=1 (an option of fio's libaio engine only)",
    );
}

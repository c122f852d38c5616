//! `--new-file` (issue 14): a file iomark creates is written with the workload's data
//! before the measurement (iomark's default), or only allocated, as fio prepares the
//! file of a job that only writes (`iomark fio` follows fio). Checked by the sectors a
//! loop device under ext4 receives, under iomark and under fio on the same job.

use std::path::Path;
use std::process::Command;

use crate::common::*;

/// Sectors written to `dev` while `f` runs, the filesystem's dirty pages flushed on
/// either side.
fn sectors_written(dev: &LoopDev, f: impl FnOnce()) -> u64 {
    let sync = || assert!(Command::new("sync").status().unwrap().success());
    sync();
    let a = dev.stat();
    f();
    sync();
    dev.stat()[3] - a[3]
}

/// The fio job: 1 MiB of direct 4 KiB random writes over a new 16 MiB file.
fn job(extra: &str) -> String {
    format!(
        "[j]\nfilename=${{DIR}}/f\nrw=randwrite\nbs=4k\nsize=16m\nio_size=1m\ndirect=1\n{extra}"
    )
}

/// `iomark fio` (or fio, `tool`) on `job` with `${DIR}` = `dir`; the file removed after.
fn run_job(tool: &str, job: &str, dir: &Path) {
    let scratch = tmp();
    let file = scratch.path().join("j.fio");
    std::fs::write(&file, job).unwrap();
    let mut cmd = match tool {
        "fio" => Command::new("fio"),
        _ => Command::new(iomark_bin()),
    };
    let args = match tool {
        "fio" => ["--output=/dev/null"],
        _ => ["--quiet"],
    };
    if tool != "fio" {
        cmd.arg("fio");
    }
    let out = cmd.arg(&file).args(args).env("DIR", dir).output().unwrap();
    assert_success(&out);
    let _ = std::fs::remove_file(dir.join("f"));
}

/// With `--new-file allocate` the device receives the job's 1 MiB and a little
/// metadata; written first (the default), the 16 MiB file as well. fio does the same:
/// it only allocates a write job's new file, and writes it first with `overwrite=1`;
/// `iomark fio` maps both.
#[test]
fn allocate_writes_nothing_before_the_job() {
    let Some(dev) = LoopDev::new(128 << 20, false) else {
        return;
    };
    let Some(fs) = Mounted::ext4(dev.path()) else {
        return;
    };
    let f = fs.path().join("f");
    let run = |how: &str| {
        sectors_written(&dev, || {
            run_json(&[
                "run",
                f.to_str().unwrap(),
                "--rw",
                "randwrite",
                "--bs",
                "4k",
                "--size",
                "16m",
                "--io-size",
                "1m",
                "--new-file",
                how,
            ]);
        })
    };
    // 1 MiB is 2048 sectors, 16 MiB 32768; metadata and journal added about 50-80 (both
    // tools, measured).
    let (job_only, whole) = (2048..2048 + 256, 2048 + 32768..2048 + 32768 + 256);
    let allocated = run("allocate");
    assert!(
        job_only.contains(&allocated),
        "allocate: {allocated} sectors"
    );
    let written = run("write");
    assert!(whole.contains(&written), "write: {written} sectors");
    assert!(!f.exists(), "iomark removes the file it made");
    // The same job file under iomark fio, then fio: allocated by default, written first
    // with overwrite=1.
    for tool in ["iomark", "fio"] {
        if tool == "fio" && !require_tool("fio", "fio (apt-get install fio)") {
            return;
        }
        for (extra, band) in [("", &job_only), ("overwrite=1\n", &whole)] {
            let n = sectors_written(&dev, || run_job(tool, &job(extra), fs.path()));
            assert!(band.contains(&n), "{tool} {extra:?}: {n} sectors");
        }
    }
}

/// The plan of a job file keeps fio's choice per job (a reading job's file is written
/// first), `--as-fio` writes `overwrite=1` for a writing run whose file iomark writes
/// first and reads back the same, and allocating for a pattern that reads is refused
/// with the fix.
#[test]
fn new_file_maps_round_trips_and_refuses_reads() {
    let dir = tmp();
    let file = dir.path().join("j.fio");
    let text = format!(
        "{}[r]\nstonewall\nrw=randrw\n[t]\nstonewall\nrw=trim\n",
        job("[o]\nstonewall\noverwrite=1\n")
    );
    std::fs::write(&file, text.replace("${DIR}", dir.path().to_str().unwrap())).unwrap();
    let plan = fio_plan(&file);
    let prep = |s: &serde_json::Value| s["new_file"].as_str().unwrap_or("write").to_string();
    let got: Vec<String> = (0..4).map(|i| prep(&plan["runs"][i]["spec"])).collect();
    assert_eq!(got, ["allocate", "write", "write", "allocate"]);
    let t = dir.path().join("t.dat");
    for (how, line) in [("write", true), ("allocate", false)] {
        let text = String::from_utf8(stdout_of(&[
            "run",
            t.to_str().unwrap(),
            "--rw",
            "write",
            "--size",
            "4m",
            "--new-file",
            how,
            "--as-fio",
        ]))
        .unwrap();
        assert_eq!(
            text.lines().any(|l| l == "overwrite=1"),
            line,
            "{how}: {text}"
        );
        let back = dir.path().join("back.fio");
        std::fs::write(&back, &text).unwrap();
        assert_eq!(prep(&fio_plan(&back)["runs"][0]["spec"]), how, "{text}");
        if have("fio") {
            assert_fio_parses(&back);
        }
    }
    let out = iomark()
        .args(["run", t.to_str().unwrap(), "--rw", "randrw", "--new-file"])
        .arg("allocate")
        .output()
        .unwrap();
    assert_refused(
        &out,
        "--new-file allocate writes nothing before the run and --rw randrw reads",
    );
    assert!(!t.exists());
}

/// `--keep` on a file that was there before the run was taken without a word, as if it
/// protected the file: it changes nothing (iomark removes only a file it makes). A note
/// says so; a file the run makes and keeps gets none.
#[test]
fn keep_on_an_existing_file_says_it_changes_nothing() {
    let dir = tmp();
    let old = dir.path().join("old.dat");
    std::fs::write(&old, vec![1u8; 1 << 20]).unwrap();
    let doc = run_json(&[
        "run",
        "--rw",
        "read",
        "--keep",
        "--io-size",
        "256k",
        old.to_str().unwrap(),
    ]);
    let w = doc["runs"][0]["warnings"].to_string();
    assert!(w.contains("--keep changes nothing for"), "{w}");
    let new = dir.path().join("new.dat");
    let doc = run_json(&[
        "run",
        "--rw",
        "read",
        "--keep",
        "--size",
        "1m",
        "--io-size",
        "256k",
        new.to_str().unwrap(),
    ]);
    let w = doc["runs"][0]["warnings"].to_string();
    assert!(!w.contains("--keep changes nothing"), "{w}");
    assert!(new.exists() && old.exists());
}

//! A fio user's habits (issue 12, items 13 and 16): fio's spellings and forms are
//! accepted as aliases, a decimal block size that is not what fio would read is named,
//! no safety switch is suggested as a "similar argument", and `--size 2xmem` resolves
//! against this machine's memory and says so.

use crate::common::*;

fn spec_of(args: &[&str]) -> serde_json::Value {
    let doc = run_json(&[&["run", "--runtime", "0.1", "--size", "1m"], args].concat());
    doc["runs"][0]["spec"].clone()
}

fn refused(args: &[&str]) -> String {
    let out = iomark().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    err
}

#[test]
fn fio_spellings_mean_what_they_mean_in_fio() {
    let fio = spec_of(&[
        "--readwrite=randrw",
        "--rwmixwrite=30",
        "--ioengine=null",
        "--iodepth=8",
        "--numjobs=2",
        "--blocksize=8k",
        "--ramp_time=0",
        "--time_based",
        "--randseed=7",
        "--direct=0",
        "--end_fsync=1",
        "--name=mine",
    ]);
    let ours = spec_of(&[
        "--rw",
        "randrw",
        "--rwmixread",
        "70",
        "--engine",
        "null",
        "--qd",
        "8",
        "--jobs",
        "2",
        "--bs",
        "8k",
        "--ramp",
        "0",
        "--seed",
        "7",
        "--buffered",
        "--end-fsync",
    ]);
    for k in [
        "rw",
        "rwmixread",
        "engine",
        "qd",
        "jobs",
        "bs",
        "ramp_s",
        "seed",
        "direct",
    ] {
        assert_eq!(fio[k], ours[k], "{k}");
    }
    assert_eq!(fio["end_fsync"], true);
    assert_eq!(fio["label"], "mine");
    assert_eq!(fio["direct"], false, "--direct=0 is buffered");
    // --buffered=0 is direct; a switch =0 is off.
    let s = spec_of(&["--engine", "null", "--buffered=0", "--end_fsync=0"]);
    assert_eq!(
        (s["direct"].as_bool(), s["end_fsync"].as_bool()),
        (Some(true), Some(false))
    );
    // fio's sync engine runs as psync, and the run says so.
    let dir = tmp();
    let doc = run_json(&[
        "run",
        "--ioengine=sync",
        "--buffered",
        "--size",
        "1m",
        "--runtime",
        "0.1",
        &format!("--filename={}", dir.path().join("f.dat").display()),
    ]);
    assert_eq!(doc["runs"][0]["spec"]["engine"], "psync");
    assert!(
        doc["runs"][0]["warnings"]
            .to_string()
            .contains("fio's sync engine")
    );
}

#[test]
fn fio_habits_that_would_mislead_are_named() {
    let err = refused(&["run", "--ioengine=posixaio", "x.dat"]);
    assert!(err.contains("posixaio") && err.contains("libaio"), "{err}");
    let err = refused(&["run", "--bs", "4KB", "--size", "1m", "x.dat"]);
    assert!(
        err.contains("4000 bytes") && err.contains("write 4k"),
        "{err}"
    );
    let err = refused(&["run", "--time_based", "--engine", "null", "--size", "1m"]);
    assert!(err.contains("needs --runtime"), "{err}");
    let err = refused(&[
        "run",
        "--rwmixread=60",
        "--rwmixwrite=30",
        "--rw",
        "randrw",
        "x",
    ]);
    assert!(err.contains("give one of them"), "{err}");
    // A typo near a safety switch is not answered with the safety switch.
    for typo in ["--overwrit", "--destroy-dat", "--allow-write-devic"] {
        let err = refused(&["run", typo, "x.dat"]);
        assert!(!err.contains("tip"), "{typo}: {err}");
    }
    // Buffered, 4KB is allowed but said.
    let doc = run_json(&[
        "run",
        "--engine",
        "null",
        "--bs",
        "4KB",
        "--size",
        "1m",
        "--buffered",
    ]);
    assert!(
        doc["runs"][0]["warnings"]
            .to_string()
            .contains("fio reads them as powers of 1024")
    );
}

#[test]
fn size_in_multiples_of_memory() {
    let plan = dry_run(&["qd", "--size", "2xmem", "--engine", "null"]);
    let total = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb: u64 = total
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap();
    let size = plan["runs"][0]["spec"]["size"].as_u64().unwrap();
    let want = (2 * kb * 1024) >> 20 << 20;
    assert_eq!(size, want);
    let note = plan["runs"][0]["spec"]["engine_note"].as_str().unwrap();
    assert!(note.contains("--size 2xmem is"), "{note}");
    let listing = iomark()
        .args([
            "suite",
            "qd",
            "--size",
            "2xmem",
            "--engine",
            "null",
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&listing.stdout).contains("note: --size 2xmem is"));
    let err = refused(&["run", "--size", "-1xmem", "x.dat"]);
    assert!(err.contains("positive factor"), "{err}");
}

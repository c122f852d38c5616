//! Regression tests, named after what a review caught.

use serde_json::Value;

use std::path::Path;

use crate::common::{
    Mounted, assert_success, compare_json, dry_run, iomark, is_root, require, run_json, tmp,
    write_json,
};

#[test]
fn matrix_size_is_kept_on_an_existing_target() {
    let dir = tmp();
    let t = dir.path().join("t.dat");
    std::fs::write(&t, vec![1u8; 32 << 20]).unwrap();
    let m = dir.path().join("m.toml");
    std::fs::write(&m, "size = \"8m\"\n[vary]\nqd = [1, 2]\n").unwrap();
    let plan = dry_run(&["matrix", m.to_str().unwrap(), t.to_str().unwrap()]);
    for r in plan["runs"].as_array().unwrap() {
        assert_eq!(r["spec"]["size"], 8 << 20, "the file's size stands");
    }
    // A preset's default size is dropped for an existing target; the user's is kept.
    let plan = dry_run(&["qd", "--qd", "1", "--overwrite", t.to_str().unwrap()]);
    assert!(plan["runs"][0]["spec"]["size"].is_null());
    let plan = dry_run(&[
        "qd",
        "--qd",
        "1",
        "--size",
        "4m,8m",
        "--overwrite",
        t.to_str().unwrap(),
    ]);
    let sizes: Vec<&Value> = plan["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["spec"]["size"])
        .collect();
    assert!(sizes.contains(&&Value::from(4 << 20)) && sizes.contains(&&Value::from(8 << 20)));
}

#[test]
fn matrix_file_cannot_switch_safety_off() {
    let dir = tmp();
    for key in [
        "overwrite = true",
        "allow_write_device = true",
        "destroy_data = true",
        "keep = true",
    ] {
        let m = dir.path().join("m.toml");
        std::fs::write(&m, format!("rw = \"write\"\n{key}\n[vary]\nqd = [1]\n")).unwrap();
        let out = iomark()
            .args(["suite", "matrix"])
            .arg(&m)
            .arg(dir.path().join("t.dat"))
            .arg("--dry-run")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{key}: {err}");
        assert!(
            err.contains("line 2") && err.contains("command line"),
            "{key}: {err}"
        );
    }
}

/// A study whose file does not fit is refused before it makes the file. (A failing run
/// after the file was made: `study::runner` unit test `a_failed_run_does_not_leave_the_
/// studys_file`.)
#[test]
fn study_that_does_not_fit_leaves_no_file() {
    if !require("root (mount a tmpfs)", is_root()) {
        return;
    }
    let Some(fs) = Mounted::mount(Path::new("tmpfs"), &["-t", "tmpfs", "-o", "size=4m"]) else {
        return;
    };
    let t = fs.path().join("new.dat");
    let out = iomark()
        .args([
            "suite",
            "quick",
            "--size",
            "8m",
            "--runtime",
            "200ms",
            "--ramp",
            "0",
        ])
        .args(["-q", "--buffered"])
        .arg(&t)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("would need 8 MiB"), "{err}");
    assert!(!t.exists(), "no file is made for a study refused up front");
}

#[test]
fn an_unwritable_results_path_is_refused_before_the_target_is_made() {
    let dir = tmp();
    let t = dir.path().join("new.dat");
    let out = iomark()
        .args([
            "suite",
            "quick",
            "--size",
            "8m",
            "--runtime",
            "200ms",
            "-q",
            "-o",
        ])
        .arg(dir.path().join("no-such-dir/r.json"))
        .arg(&t)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(!t.exists());
}

#[test]
fn options_a_study_cannot_use_are_refused() {
    let dir = tmp();
    let t = dir.path().join("t.dat");
    let t = t.to_str().unwrap();
    for args in [
        vec!["steady", "--runtime", "10s", t],
        vec!["steady", "--resume", "r.json", t],
        vec!["qd", "--round-time", "1s", t],
        vec!["qd", "--verify-state", "s", t],
    ] {
        let out = iomark()
            .arg("suite")
            .args(&args)
            .arg("--dry-run")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let m = dir.path().join("m.toml");
    std::fs::write(&m, "[vary]\nqd = [1, 8]\n").unwrap();
    let out = iomark()
        .args(["suite", "matrix"])
        .arg(&m)
        .args(["--qd", "4", t, "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--qd is varied by the file");
}

#[test]
fn data_options_in_a_preset_apply_to_its_writes_only() {
    let dir = tmp();
    let t = dir.path().join("t.dat");
    let plan = dry_run(&["quick", "--compress", "50", t.to_str().unwrap()]);
    for r in plan["runs"].as_array().unwrap() {
        let writes = r["spec"]["rw"].as_str().unwrap().contains("write");
        let kind = r["spec"]["data"]["kind"].as_str().unwrap();
        assert_eq!(kind == "compressible", writes, "{}", r["study"]);
    }
    // And the study runs through (reads of the file the writes shaped).
    let out = iomark()
        .args([
            "suite",
            "quick",
            "--compress",
            "50",
            "--size",
            "8m",
            "--runtime",
            "200ms",
            "--ramp",
            "0",
            "-q",
        ])
        .arg(&t)
        .output()
        .unwrap();
    assert_success(&out);
}

#[test]
fn compare_baseline_is_the_first_document_that_has_the_run() {
    let dir = tmp();
    let f = dir.path().join("c.dat");
    let read = run_json(&[
        "run",
        "--rw",
        "randread",
        "--size",
        "1m",
        "--repeat",
        "2",
        f.to_str().unwrap(),
    ]);
    let write = run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--size",
        "1m",
        "--repeat",
        "2",
        f.to_str().unwrap(),
    ]);
    let paths: Vec<std::path::PathBuf> = [("a", &read), ("b", &write), ("c", &write)]
        .iter()
        .map(|(n, d)| write_json(dir.path(), n, d))
        .collect();
    let cmp = compare_json(&paths);
    let row = cmp["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"].as_str().unwrap().starts_with("randwrite"))
        .unwrap();
    assert!(row["cells"][0].is_null());
    assert_eq!(row["cells"][1]["verdict"]["verdict"], "baseline");
    assert_ne!(row["cells"][2]["verdict"]["verdict"], "baseline");
}

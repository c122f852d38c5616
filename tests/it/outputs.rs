//! Output paths (issue 11, item 5): `-o`, `--verify-state` and `report/compare -o` write
//! only to a new file or an earlier iomark output of the same kind (anything regular with
//! `--force`); never a device node, a directory, a link, the target, or someone's file —
//! and they are checked before any I/O.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use crate::common::*;

fn null_run(out: &Path) -> assert_cmd::assert::Assert {
    iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "16m",
            "--runtime",
            "0.1",
            "-q",
            "-o",
        ])
        .arg(out)
        .assert()
}

fn refused(cmd: &mut assert_cmd::Command, needle: &str) {
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "{needle:?} not in: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn results_go_to_a_new_file_only_unless_forced() {
    let dir = tmp();
    let d = dir.path();
    let doc = d.join("r.json");
    null_run(&doc).success();
    // An earlier document holds measurements: refused before anything runs, and kept
    // whole; --force replaces it.
    let before = std::fs::read(&doc).unwrap();
    let out = iomark()
        .args(["run", "--engine", "null", "--size", "16m", "-q", "-o"])
        .arg(&doc)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("already holds measurements (1 run, 1 repetition") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read(&doc).unwrap(), before);
    iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "16m",
            "--runtime",
            "0.1",
            "-q",
        ])
        .args(["--force", "-o"])
        .arg(&doc)
        .assert()
        .success();
    assert_ne!(std::fs::read(&doc).unwrap(), before);
    let foreign = d.join("notes.json");
    std::fs::write(&foreign, b"{\"mine\": true}").unwrap();
    refused(
        iomark()
            .args(["run", "--engine", "null", "--size", "16m", "-q", "-o"])
            .arg(&foreign),
        "add --force",
    );
    assert_eq!(std::fs::read(&foreign).unwrap(), b"{\"mine\": true}");
    iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "16m",
            "--runtime",
            "0.1",
            "-q",
        ])
        .args(["--force", "-o"])
        .arg(&foreign)
        .assert()
        .success();
    refused(
        iomark()
            .args(["run", "--engine", "null", "--size", "16m", "-q", "-o"])
            .arg(d),
        "is a directory",
    );
}

#[test]
fn the_target_itself_is_never_an_output() {
    let dir = tmp();
    let data = dir.path().join("data.bin");
    std::fs::write(&data, vec![0x5au8; 1 << 20]).unwrap();
    let before = checksum(&data);
    refused(
        iomark()
            .args([
                "run",
                "--rw",
                "read",
                "--buffered",
                "--runtime",
                "0.2",
                "-q",
                "-o",
            ])
            .arg(&data)
            .arg(&data),
        "is the target itself",
    );
    assert_eq!(checksum(&data), before);
    // A target the run would create: refused before it is created.
    let new = dir.path().join("new.dat");
    refused(
        iomark()
            .args(["run", "--rw", "write", "--size", "1m", "-q", "-o"])
            .arg(&new)
            .arg(&new),
        "is the target itself",
    );
    assert!(!new.exists());
}

#[test]
fn a_device_node_stays_a_device_node() {
    if !require("root (mknod)", is_root()) {
        return;
    }
    let dir = tmp();
    let node = dir.path().join("node");
    // A character device like /dev/null (1:3), made here so nothing real is at stake.
    let ok = std::process::Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let target = dir.path().join("t.dat");
    refused(
        iomark()
            .args([
                "run", "--rw", "write", "--size", "1m", "--verify", "--keep", "-q",
            ])
            .arg("--verify-state")
            .arg(&node)
            .arg(&target),
        "not a regular file",
    );
    assert!(
        std::fs::metadata(&node)
            .unwrap()
            .file_type()
            .is_char_device()
    );
    assert!(!target.exists(), "checked before any I/O");
    let doc = dir.path().join("r.json");
    null_run(&doc).success();
    refused(
        iomark()
            .arg("report")
            .arg(&doc)
            .args(["--format", "md", "-o"])
            .arg(&node),
        "not a regular file",
    );
    assert!(
        std::fs::metadata(&node)
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

#[test]
fn reports_replace_only_earlier_reports() {
    let dir = tmp();
    let d = dir.path();
    let doc = d.join("r.json");
    null_run(&doc).success();
    for ext in ["md", "html", "csv", "json"] {
        let out = d.join(format!("report.{ext}"));
        iomark()
            .arg("report")
            .arg(&doc)
            .arg("-o")
            .arg(&out)
            .assert()
            .success();
        let again = || {
            iomark()
                .arg("report")
                .arg(&doc)
                .arg("-o")
                .arg(&out)
                .output()
                .unwrap()
        };
        if ext == "json" {
            // A report in JSON is a results document: replaced only with --force.
            refused(
                iomark().arg("report").arg(&doc).arg("-o").arg(&out),
                "is an iomark results document",
            );
            iomark()
                .args(["report", "--force", "-o"])
                .arg(&out)
                .arg(&doc)
                .assert()
                .success();
        } else {
            assert_success(&again());
        }
        let cmp = d.join(format!("cmp.{ext}"));
        for _ in 0..2 {
            iomark()
                .arg("compare")
                .args([&doc, &doc])
                .arg("-o")
                .arg(&cmp)
                .assert()
                .success();
        }
        let mine = d.join(format!("mine.{ext}"));
        std::fs::write(&mine, b"my own notes\n").unwrap();
        refused(
            iomark().arg("report").arg(&doc).arg("-o").arg(&mine),
            "add --force",
        );
        assert_eq!(std::fs::read(&mine).unwrap(), b"my own notes\n");
    }
    refused(
        iomark()
            .arg("report")
            .arg(&doc)
            .arg("-o")
            .arg(d.join("no/such/dir/r.md")),
        "does not exist",
    );
    // A results document is never replaced by a report or a comparison without --force,
    // not even one of the inputs (a typo away: compare base.json new.json -o new.json).
    let other = d.join("other.json");
    null_run(&other).success();
    let measured = std::fs::read(&other).unwrap();
    for cmd in ["report", "compare"] {
        for format in ["json", "md"] {
            refused(
                iomark()
                    .arg(cmd)
                    .arg(&doc)
                    .arg(&other)
                    .args(["--format", format, "-o"])
                    .arg(&other),
                "is an iomark results document",
            );
        }
    }
    assert_eq!(
        std::fs::read(&other).unwrap(),
        measured,
        "the measurements stay"
    );
}

/// `--quiet` drops the progress and headers, never the results (issue 12, item 9).
#[test]
fn quiet_keeps_the_results() {
    let out = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "16m",
            "--runtime",
            "0.1",
            "-q",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("IOPS") && text.contains("latency"), "{text}");
}

/// A results path that fails mid-run (its directory removed) does not lose the
/// measurements: they go to the temporary directory, and iomark says where (exit 1).
#[test]
fn results_that_cannot_be_saved_where_asked_are_saved_elsewhere() {
    let dir = tmp();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let child = iomark_process()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "16m",
            "--runtime",
            "0.7",
        ])
        .args(["--repeat", "3", "-q", "-o"])
        .arg(sub.join("r.json"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::remove_dir_all(&sub).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let saved = err
        .split("saved to ")
        .nth(1)
        .and_then(|r| r.split(" instead").next())
        .unwrap_or_else(|| panic!("no fallback named: {err}"));
    let saved = std::path::PathBuf::from(saved);
    let doc = read_json(&saved);
    std::fs::remove_file(&saved).unwrap();
    assert_eq!(doc["runs"][0]["repetitions"].as_array().unwrap().len(), 3);
}

/// The probe's case: a finished study, its command run again without --resume (then cut
/// by Ctrl-C) kept one run of six. Refused now, the document (reads and writes at QD 1
/// and 2: 4 runs) untouched; --resume of the
/// same file continues it (nothing left to do).
#[test]
fn a_study_is_not_replaced_by_running_it_again() {
    let dir = tmp();
    let doc = dir.path().join("study.json");
    let study = |extra: &[&str]| {
        iomark()
            .args(["suite", "qd", "--engine", "null", "--size", "16m"])
            .args(["--runtime", "0.1", "--ramp", "0", "--qd", "1,2", "-q"])
            .args(extra)
            .output()
            .unwrap()
    };
    let d = doc.to_str().unwrap();
    assert!(study(&["-o", d]).status.success());
    let before = std::fs::read(&doc).unwrap();
    let out = study(&["-o", d]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("(4 runs, 4 repetitions"), "{err}");
    assert!(err.contains(&format!("--resume {d}")), "{err}");
    assert_eq!(std::fs::read(&doc).unwrap(), before);
    assert!(study(&["--resume", d]).status.success());
    assert_eq!(read_json(&doc)["runs"].as_array().unwrap().len(), 4);
}

/// `-o /dev/null` is refused, as every device is (writing the document goes through a
/// rename that would replace the node), and the refusal says how to keep no document.
#[test]
fn results_to_dev_null_are_refused_saying_how_to_keep_none() {
    use std::os::unix::fs::FileTypeExt;
    let out = iomark()
        .args(["run", "--engine", "null", "--size", "1m", "-o", "/dev/null"])
        .output()
        .unwrap();
    assert_refused(&out, "to keep none, leave out -o");
    let md = std::fs::metadata("/dev/null").unwrap();
    assert!(md.file_type().is_char_device());
}

//! Writing the output never panics (issue 11, item 7): a reader that leaves (`| head`)
//! ends iomark quietly with 141 (128 + SIGPIPE, as a tool killed by SIGPIPE), a full disk
//! is exit 1 with one line, and a stderr that cannot be written does not turn a user's
//! mistake into a panic.

use std::fs::File;
use std::io::Read;
use std::process::Stdio;

use crate::common::*;

fn full() -> Option<File> {
    File::options().write(true).open("/dev/full").ok()
}

/// Runs iomark with stdout (or stderr) on /dev/full; returns (status, stderr).
fn on_full(args: &[&str], stream: &str) -> Option<(i32, String)> {
    let dev = full()?;
    let mut c = iomark_process();
    c.args(args);
    match stream {
        "stdout" => c.stdout(dev).stderr(Stdio::piped()),
        _ => c.stderr(dev).stdout(Stdio::null()),
    };
    let out = c.output().unwrap();
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn a_reader_that_leaves_ends_iomark_quietly() {
    // The JSON comes at the end of the run: the reader has long gone by then.
    let mut child = iomark_process()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "64m",
            "--runtime",
            "0.3",
        ])
        .args(["--json", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(141), "stderr: {err}");
    assert!(
        err.is_empty(),
        "nothing to say when the reader leaves: {err}"
    );
}

#[test]
fn a_full_disk_on_stdout_is_one_line_and_exit_1() {
    if !require("/dev/full", full().is_some()) {
        return;
    }
    let doc = tmp();
    let results = doc.path().join("r.json");
    iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "16m",
            "--runtime",
            "0.2",
            "-q",
        ])
        .arg("-o")
        .arg(&results)
        .assert()
        .success();
    let r = results.to_str().unwrap();
    for args in [
        vec!["report", r],
        vec!["compare", r, r],
        vec![
            "run",
            "--engine",
            "null",
            "--size",
            "16m",
            "--runtime",
            "0.2",
            "--json",
            "-q",
        ],
        vec![
            "suite",
            "qd",
            "--engine",
            "null",
            "--size",
            "16m",
            "--dry-run",
        ],
        vec!["--help"],
    ] {
        let (code, err) = on_full(&args, "stdout").unwrap();
        assert_eq!(code, 1, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("cannot write to standard output: No space left on device"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn an_unwritable_stderr_keeps_the_exit_status() {
    if !require("/dev/full", full().is_some()) {
        return;
    }
    let (code, _) = on_full(&["run", "--qd", "0", "x"], "stderr").unwrap();
    assert_eq!(code, 2, "a user's mistake stays exit 2, not a panic (101)");
    let (code, _) = on_full(&["run", "--bogus"], "stderr").unwrap();
    assert_eq!(code, 2);
}

//! What the reports and a run's figures say (probe 14): the `cache` study's "device
//! wrote" label with a flush in the window, against a loop device's kernel counters; the
//! CSV report as one table with what the study tables add (the figures and the verdicts)
//! against the document; a run on several targets with its per-target figures in the
//! Markdown and CSV reports; the CPU parts of a real run never above the whole, and the
//! SQPOLL thread's time under its own name.

use std::path::Path;

use serde_json::Value;

use crate::common::{iomark, read_json, tmp};

/// Runs iomark with `args` and `-o` `out`; returns the document and stdout.
fn run_to(out: &Path, args: &[&str]) -> (Value, String) {
    let o = iomark()
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .expect("iomark runs");
    assert!(
        o.status.success(),
        "iomark {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        read_json(out),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// Probe 14, item 9: the job threads' user or system time above the process's in most
/// repetitions (the kernel splits each thread's and the process's time by its own
/// ticks), and the SQPOLL thread's time filed under `io_wq`. On a real io_uring run with
/// --sqpoll: in every repetition no part exceeds the whole, the parts add up to it, the
/// SQPOLL thread has its own part, and the run's header says --sqpoll and its CPU.
#[test]
fn cpu_parts_never_exceed_the_whole_and_sqpoll_is_its_own() {
    if iomark::io::engine::probe_io_uring().is_err() {
        crate::common::require("io_uring", false);
        return;
    }
    let dir = tmp();
    let out = dir.path().join("sqp.json");
    let file = dir.path().join("sqp.dat");
    let (doc, text) = run_to(
        &out,
        &[
            "run",
            "--rw",
            "randread",
            "--engine",
            "io_uring",
            "--qd",
            "8",
            "--sqpoll",
            "--sqpoll-cpu",
            "1",
            "--cpus",
            "0",
            "--repeat",
            "4",
            "--runtime",
            "0.5",
            "--ramp",
            "0",
            "--size",
            "16m",
            file.to_str().unwrap(),
        ],
    );
    assert!(
        text.contains("io_uring with --sqpoll (its thread on CPU 1) on"),
        "{text}"
    );
    let reps = doc["runs"][0]["repetitions"].as_array().unwrap();
    let mut sqpoll = 0.0;
    for rep in reps {
        let c = &rep["cpu"];
        let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {c}"));
        let (user, sys) = (f(c, "user_s"), f(c, "sys_s"));
        let (mut u, mut s) = (0.0, 0.0);
        for part in ["workers", "io_wq", "sqpoll", "other"] {
            let p = &c[part];
            assert!(f(p, "user_s") <= user + 1e-9, "{part} user: {c}");
            assert!(f(p, "sys_s") <= sys + 1e-9, "{part} sys: {c}");
            u += f(p, "user_s");
            s += f(p, "sys_s");
        }
        assert!((u - user).abs() < 1e-6 && (s - sys).abs() < 1e-6, "{c}");
        sqpoll += f(&c["sqpoll"], "user_s") + f(&c["sqpoll"], "sys_s");
    }
    // The SQPOLL thread polls the whole window: at tick resolution, more than nothing.
    assert!(sqpoll > 0.0, "{doc}");
}

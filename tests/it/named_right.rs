//! Refusals that name the option the user gave (not one the command has not got, nor
//! iomark's name for a fio option), its line in a job file, and a fix that fits the
//! command: each exit status 2 with one line. And `-o -` is stdout, never a file named
//! `-`. Found by the probe of the eleventh round.

use crate::common::{assert_refused, assert_success, iomark, tmp};

fn refused(args: &[&str], needle: &str, not: &str) -> String {
    let out = iomark().args(args).output().unwrap();
    assert_refused(&out, needle);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !err.contains(not),
        "`iomark {args:?}` must not name {not:?}: {err}"
    );
    err
}

#[test]
fn steady_round_time_zero_names_round_time() {
    let dir = tmp();
    let f = dir.path().join("f.dat");
    let f = f.to_str().unwrap();
    refused(
        &["suite", "steady", "--round-time", "0", f],
        "--round-time must be greater than zero",
        "--runtime",
    );
}

#[test]
fn quick_size_too_small_names_size_not_bs() {
    let dir = tmp();
    let d = dir.path().to_str().unwrap();
    refused(&["quick", "--size", "1k", d], "--size 1k", "--bs");
}

#[test]
fn duration_too_long_says_so_with_the_longest() {
    let err = refused(
        &["run", "--engine", "null", "--runtime", "99999999999999h"],
        "too long a duration",
        "is not a duration",
    );
    assert!(err.contains("the longest is 1000000000s"), "{err}");
}

#[test]
fn fio_refusals_name_the_fio_option_at_its_own_line() {
    let dir = tmp();
    let job = dir.path().join("j.fio");
    let f = dir.path().join("f.dat");
    let text = format!(
        "[global]\nrw=read\nloops=0\n\n[job]\nfilename={}\nsize=1m\nbs=4k\n",
        f.display()
    );
    std::fs::write(&job, text).unwrap();
    let err = refused(
        &["fio", job.to_str().unwrap()],
        "j.fio:3 [job]: loops=0 is out of range",
        "--repeat",
    );
    assert!(
        !err.contains("j.fio:5"),
        "the line of loops=, not of [job]: {err}"
    );
    let text = format!(
        "[job]\nfilename={}\nsize=1m\nrw=randrw\nrwmixread=200\nbs=4k\n",
        f.display()
    );
    std::fs::write(&job, text).unwrap();
    refused(
        &["fio", job.to_str().unwrap()],
        "j.fio:5 [job]: rwmixread=200 is out of range",
        "--rwmixread",
    );
    // A value iomark words otherwise (`1 MiB`) is named as the file writes it.
    let text = format!("[job]\nfilename={}\nsize=4k\nbs=1m\nrw=read\n", f.display());
    std::fs::write(&job, text).unwrap();
    let err = refused(
        &["fio", job.to_str().unwrap()],
        "j.fio:4 [job]: bs=1m is larger than the span size=4k (",
        "--bs",
    );
    assert!(
        err.contains("j.fio:3); use a smaller bs or a larger size"),
        "{err}"
    );
}

fn a_results_document(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    let out = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--rw",
            "randread",
            "--size",
            "1g",
            "--runtime",
            "200ms",
            "-q",
            "-o",
        ])
        .arg(&p)
        .output()
        .unwrap();
    assert_success(&out);
    p
}

#[test]
fn dash_o_dash_is_stdout_for_run_and_compare() {
    let dir = tmp();
    let out = iomark()
        .current_dir(dir.path())
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "1g",
            "--runtime",
            "200ms",
            "-q",
            "-o",
            "-",
        ])
        .output()
        .unwrap();
    assert_success(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(doc["schema"], "iomark/1");
    assert!(!dir.path().join("-").exists(), "no file named -");
    let a = a_results_document(dir.path(), "a.json");
    let b = a_results_document(dir.path(), "b.json");
    let out = iomark()
        .current_dir(dir.path())
        .args(["compare", "a.json", "b.json", "-o", "-"])
        .output()
        .unwrap();
    assert_success(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("# iomark "),
        "Markdown on stdout"
    );
    assert!(!dir.path().join("-").exists(), "no file named -");
    // A directory for -o: the example is a file name in the format asked for.
    let d1 = dir.path().join("d1");
    std::fs::create_dir(&d1).unwrap();
    let (a, b, d) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        d1.to_str().unwrap(),
    );
    refused(
        &["compare", a, b, "-o", d, "--format", "md"],
        &format!("{d}/comparison.md"),
        "results.json",
    );
    refused(
        &["report", a, "-o", d, "--format", "html"],
        &format!("{d}/report.html"),
        "results.json",
    );
}

#[test]
fn a_newer_numeric_schema_is_said_to_be_newer() {
    let dir = tmp();
    let a = a_results_document(dir.path(), "a.json");
    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, r#"{"schema": 999, "runs": []}"#).unwrap();
    let out = iomark()
        .arg("compare")
        .arg(&a)
        .arg(&newer)
        .output()
        .unwrap();
    assert_refused(&out, "has schema version 999, newer than this iomark");
}

#[test]
fn matrix_options_set_twice_or_listed_twice_are_refused() {
    let dir = tmp();
    let f = dir.path().join("f.dat");
    let f = f.to_str().unwrap();
    let m = dir.path().join("m.toml");
    let cases = [
        (
            "qd = 4\n[vary]\nqd = [1, 4]\n",
            "m.toml line 1: 'qd' is set at the top level and under [vary] (line 3)",
        ),
        (
            "runtime = \"1s\"\n[fixed]\nruntime = \"2s\"\n[vary]\nqd = [1, 4]\n",
            "m.toml line 1: 'runtime' is set at the top level and under [fixed] (line 3)",
        ),
        ("[vary]\nqd = [1, 1]\n", "m.toml line 2: 'qd' lists 1 twice"),
    ];
    for (text, needle) in cases {
        std::fs::write(&m, text).unwrap();
        let out = iomark()
            .args(["suite", "matrix", m.to_str().unwrap(), f, "--dry-run"])
            .output()
            .unwrap();
        assert_refused(&out, needle);
    }
}

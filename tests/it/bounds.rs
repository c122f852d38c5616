//! Bounded memory on every input: a `files:` corpus is read only as far as the corpus
//! needs; devices, FIFOs and oversized files given as a corpus, results document or
//! matrix file are refused at once with exit 2; a run whose buffers would not fit in
//! memory is refused before its target is created. Every child runs under an address
//! space limit and a deadline, so a regression fails the test instead of eating the
//! machine.

use std::path::Path;
use std::time::Duration;

use crate::common::{Bounded, iomark_process, mem_available, mkfifo, run_bounded, tmp};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn bounded(args: &[&str], as_limit: u64) -> Bounded {
    let mut c = iomark_process();
    c.args(args);
    run_bounded(c, Duration::from_secs(10), as_limit)
}

/// Exit 2 within a few seconds, with one line on stderr holding every one of `words`;
/// otherwise what went wrong.
fn refusal(b: &Bounded, what: &str, words: &[&str]) -> Result<(), String> {
    let why = if b.timed_out {
        "still running after 10 s (killed)".to_string()
    } else if b.code != Some(2) {
        format!("exit {:?}: {}", b.code, b.stderr.trim())
    } else if b.elapsed > Duration::from_secs(5) {
        format!("took {:?}", b.elapsed)
    } else if b.stderr.trim().lines().count() != 1 {
        format!("not one line: {}", b.stderr)
    } else if let Some(w) = words.iter().find(|w| !b.stderr.contains(*w)) {
        format!("no {w:?} in {}", b.stderr.trim())
    } else {
        return Ok(());
    };
    Err(format!("{what}: {why}"))
}

fn assert_refused(b: &Bounded, what: &str, words: &[&str]) {
    if let Err(e) = refusal(b, what, words) {
        panic!("{e}");
    }
}

fn sparse(path: &Path, len: u64) {
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
}

#[test]
fn a_large_corpus_file_is_read_only_as_far_as_the_corpus_needs() {
    // A 1 GiB (sparse) file as corpus: at most CORPUS_MAX (256 MiB) of it is read. Reading
    // it whole first held 1.25 GiB at the peak.
    let dir = tmp();
    let big = dir.path().join("big.bin");
    sparse(&big, GIB);
    let data = format!("files:{}", big.display());
    let target = dir.path().join("t.dat");
    let b = bounded(
        &[
            "run",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--size",
            "1m",
            "--data",
            &data,
            "--json",
            "-q",
            target.to_str().unwrap(),
        ],
        8 * GIB,
    );
    assert_eq!(b.code, Some(0), "{}", b.stderr);
    let doc: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
    assert_eq!(doc["runs"][0]["spec"]["data"]["kind"], "files", "{doc}");
    eprintln!("peak RSS with a 1 GiB corpus file: {} MiB", b.max_rss / MIB);
    assert!(
        b.max_rss < 400 * MIB,
        "peak RSS {} MiB with a 1 GiB corpus file",
        b.max_rss / MIB
    );
    assert!(!target.exists());
}

#[test]
fn devices_fifos_and_oversized_inputs_are_refused_at_once() {
    let dir = tmp();
    let d = dir.path();
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap();
    let out = d.join("out.html");
    let out = out.to_str().unwrap();
    let t = d.join("t.dat");
    let t = t.to_str().unwrap();
    let files_zero = "files:/dev/zero".to_string();
    let files_fifo = format!("files:{fifo}");
    // Sparse files past the limits: a results document of 300 MiB, a matrix of 2 MiB.
    let doc = d.join("huge.json");
    sparse(&doc, 300 * MIB);
    let doc = doc.to_str().unwrap();
    let matrix = d.join("huge.toml");
    sparse(&matrix, 2 * MIB);
    let matrix = matrix.to_str().unwrap();
    let cases: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
        (
            "/dev/zero as corpus",
            vec![
                "run",
                "--rw",
                "write",
                "--size",
                "1m",
                "--data",
                &files_zero,
                t,
            ],
            vec!["/dev/zero is a character device"],
        ),
        (
            "a FIFO as corpus",
            vec![
                "run",
                "--rw",
                "write",
                "--size",
                "1m",
                "--data",
                &files_fifo,
                t,
            ],
            vec![fifo, "is a FIFO"],
        ),
        (
            "report of /dev/zero",
            vec!["report", "/dev/zero", "-o", out],
            vec!["/dev/zero is a character device, not a results document"],
        ),
        (
            "report of a FIFO",
            vec!["report", fifo, "-o", out],
            vec![fifo, "is a FIFO"],
        ),
        (
            "compare of /dev/zero",
            vec!["compare", "/dev/zero", "/dev/zero"],
            vec!["/dev/zero is a character device"],
        ),
        (
            "report of a 300 MiB document",
            vec!["report", doc, "-o", out],
            vec![doc, "300 MiB", "more than the 256 MiB"],
        ),
        (
            "matrix of /dev/zero",
            vec!["suite", "matrix", "/dev/zero", t],
            vec!["/dev/zero is a character device, not a matrix file"],
        ),
        (
            "matrix of a FIFO",
            vec!["suite", "matrix", fifo, t],
            vec![fifo, "is a FIFO"],
        ),
        (
            "a 2 MiB matrix",
            vec!["suite", "matrix", matrix, t],
            vec![matrix, "more than the 1 MiB"],
        ),
    ];
    // Every case is run, and every failure listed.
    let mut failed = Vec::new();
    for (what, args, words) in cases {
        let b = bounded(&args, 2 * GIB);
        if let Err(e) = refusal(&b, what, &words) {
            failed.push(e);
        } else if b.max_rss > 64 * MIB {
            // Nothing was read into memory.
            failed.push(format!("{what}: peak RSS {} MiB", b.max_rss / MIB));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(!Path::new(t).exists() && !Path::new(out).exists());
}

#[test]
fn runs_whose_buffers_do_not_fit_are_refused_before_the_target_is_made() {
    let dir = tmp();
    let t = dir.path().join("t.dat");
    let ts = t.to_str().unwrap();
    // 64 jobs x 1024 x 64 MiB: 4 TiB of buffers, more than any machine has.
    let b = bounded(
        &[
            "run", "--rw", "write", "--jobs", "64", "--qd", "1024", "--bs", "64m", "--size", "64m",
            ts,
        ],
        4 * GIB,
    );
    assert_refused(
        &b,
        "4 TiB of buffers",
        &[
            "--jobs 64 x --qd 1024 x --bs 64 MiB",
            "4.0 TiB of I/O buffers",
            "available",
        ],
    );
    assert!(!t.exists(), "the target was created before the refusal");
    // 1024 jobs x 4096 x 4 KiB: 16 GiB of buffers, 16 GiB of data pools and 8 GiB of samples.
    let need = 40 * GIB;
    if mem_available() / 2 < need {
        let b = bounded(
            &[
                "run", "--rw", "write", "--jobs", "1024", "--qd", "4096", "--bs", "4k", "--size",
                "1m", ts,
            ],
            4 * GIB,
        );
        assert_refused(
            &b,
            "16 GiB of buffers",
            &["16.0 GiB of I/O buffers", "of data pools", "lower --jobs"],
        );
        assert!(!t.exists(), "the target was created before the refusal");
    } else {
        eprintln!("skipped the 16 GiB case: this machine has more than 80 GiB available");
    }
    // The plan shows the estimate.
    let plan = crate::common::dry_run(&["qd", "--jobs", "4", ts]);
    let m = plan["runs"][0]["memory_bytes"].as_u64().unwrap();
    assert!(m >= 4 * 4096, "{plan}");
}

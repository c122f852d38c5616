//! Faults injected by the FUSE file system in `faultfs`: an I/O error mid-run (reads and
//! writes, O_DIRECT and buffered, on the file and on a loop device over it), a request
//! that stalls while the run is interrupted, and the file system vanishing mid-run.
//! Each must end in exit status 1 (or the signal's) with one clear line, no panic, and
//! every finished repetition kept in the results document.

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{LoopDev, iomark_process, read_json, signal, tmp};
use crate::faultfs::{Dir, FaultFs};

/// "No end" for a range of request numbers.
const OFF: u64 = u64::MAX;

/// The served file's size: 4 MiB, so one repetition of `--io-size 4m --bs 4k` is 1024
/// requests.
const SIZE: u64 = 4 << 20;
const IOS_PER_REP: u64 = 1024;

/// A mounted fault file system serving `SIZE` bytes, and a temporary directory for the
/// results document; dropped in this order.
struct Bench {
    fs: FaultFs,
    results: PathBuf,
    _dir: tempfile::TempDir,
}

impl Bench {
    /// `None` (after `require`) where FUSE cannot be mounted.
    fn new(fs_direct_io: bool) -> Option<Bench> {
        let fs = FaultFs::mount(SIZE, fs_direct_io)?;
        let dir = tmp();
        Some(Bench {
            fs,
            results: dir.path().join("r.json"),
            _dir: dir,
        })
    }

    /// iomark's arguments for `rw` on the served file with `how`, saving the results.
    fn args(&self, rw: &str, engine: &str, direct: bool, how: &[&str]) -> Vec<String> {
        args_with(rw, engine, direct, how, &self.results, &self.fs.file())
    }
}

/// iomark's arguments for three size-based repetitions of `rw` on `target`, saving to
/// `results`.
fn args(rw: &str, engine: &str, direct: bool, results: &Path, target: &Path) -> Vec<String> {
    args_with(
        rw,
        engine,
        direct,
        &["--io-size", "4m", "--repeat", "3"],
        results,
        target,
    )
}

/// iomark's arguments for `rw` on `target` with `how` (how much, how many times).
fn args_with(
    rw: &str,
    engine: &str,
    direct: bool,
    how: &[&str],
    results: &Path,
    target: &Path,
) -> Vec<String> {
    let mut a: Vec<String> = [
        "run",
        "--rw",
        rw,
        "--bs",
        "4k",
        "--size",
        "4m",
        "--engine",
        engine,
        "--overwrite",
        "-q",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(how.iter().map(|s| s.to_string()));
    a.push("-o".into());
    a.push(results.display().to_string());
    if !direct {
        a.push("--buffered".into());
    }
    a.push(target.display().to_string());
    a
}

/// Runs iomark to the end, at most `limit` (killed and failed after that).
fn run_bounded(args: &[String], limit: Duration) -> (Output, Duration) {
    let t = Instant::now();
    let mut child = spawn(args);
    let status = wait_bounded(&mut child, limit);
    let took = t.elapsed();
    (finish(child, status), took)
}

/// Starts iomark with `args`, its stderr piped.
fn spawn(args: &[String]) -> Child {
    iomark_process()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iomark starts")
}

/// Waits for `child`, killing it and failing the test after `limit`.
fn wait_bounded(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("iomark did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The finished child's output (stderr was piped; iomark writes little).
fn finish(mut child: Child, status: std::process::ExitStatus) -> Output {
    let mut stderr = Vec::new();
    std::io::Read::read_to_end(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    Output {
        status,
        stdout: Vec::new(),
        stderr,
    }
}

/// The one line iomark printed on stderr.
fn one_line(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "iomark panicked: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

/// The results document's first run, with `complete` finished repetitions before the one
/// that failed (which must be there, interrupted).
fn check_kept(results: &Path, complete: usize, dir: &str) -> Value {
    let doc = read_json(results);
    let run = doc["runs"][0].clone();
    assert_eq!(run["status"], "interrupted", "{run:#}");
    let reps = run["repetitions"].as_array().expect("repetitions");
    assert_eq!(reps.len(), complete + 1, "{run:#}");
    for r in &reps[..complete] {
        assert_eq!(r["status"], "complete");
        assert_eq!(r[dir]["ios"], IOS_PER_REP, "a finished repetition whole");
    }
    assert_eq!(slow_stop_warning(&run), None, "an error stops at once");
    let last = &reps[complete];
    assert_eq!(last["status"], "interrupted");
    assert!(last[dir]["ios"].as_u64().unwrap() < IOS_PER_REP);
    run
}

/// EIO from the middle of the second repetition on: exit 1, one line naming the offset
/// and the errno, the first repetition kept whole.
fn eio_mid_run(dir: Dir, engine: &str, fs_direct: bool, iomark_direct: bool) {
    let Some(bench) = Bench::new(fs_direct) else {
        return;
    };
    let (fs, results) = (&bench.fs, bench.results.as_path());
    let rw = match dir {
        Dir::Read => "randread",
        Dir::Write => "randwrite",
    };
    // Requests are counted from the mount; iomark's first repetition is 1024 of them
    // when each I/O reaches the file system as itself (O_DIRECT or FOPEN_DIRECT_IO).
    let passthrough = fs_direct || iomark_direct;
    let after = if passthrough { IOS_PER_REP + 300 } else { 0 };
    fs.fail(dir, after, 0..SIZE);
    let (out, took) = run_bounded(
        &args(rw, engine, iomark_direct, results, &fs.file()),
        Duration::from_secs(20),
    );
    let err = one_line(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let at = fs.failed_at().expect("the fault fired");
    assert!(err.contains("Input/output error"), "{err}");
    if passthrough {
        // The request that failed is the I/O iomark issued: the message names it.
        assert!(
            err.contains(&format!("at offset {at} ")),
            "offset {at}: {err}"
        );
        let run = check_kept(results, 1, rw.trim_start_matches("rand"));
        assert!(
            run["error"]
                .as_str()
                .unwrap()
                .contains("Input/output error"),
            "{run:#}"
        );
    } else {
        assert!(err.contains("at offset "), "{err}");
    }
    eprintln!("{rw} {engine} fs_direct={fs_direct} o_direct={iomark_direct}: {took:?}: {err}");
}

#[test]
fn eio_on_read_mid_run_psync() {
    eio_mid_run(Dir::Read, "psync", false, true);
}

#[test]
fn eio_on_write_mid_run_psync() {
    eio_mid_run(Dir::Write, "psync", false, true);
}

#[test]
fn eio_on_read_mid_run_io_uring_direct_io_fs() {
    eio_mid_run(Dir::Read, "io_uring", true, true);
}

#[test]
fn eio_on_write_mid_run_io_uring_buffered_direct_io_fs() {
    eio_mid_run(Dir::Write, "io_uring", true, false);
}

#[test]
fn eio_on_read_through_the_page_cache() {
    // No O_DIRECT anywhere: the kernel's readahead asks the file system for other
    // offsets than iomark's, so the message names iomark's offset, whatever the request.
    eio_mid_run(Dir::Read, "psync", false, false);
}

/// probe12 finding 2b: a run stopped by an error before any I/O completed (a job's
/// setup, here its first read) kept a repetition of zeros that reports and compares read
/// as a measurement. It keeps none and says why.
#[test]
fn an_error_before_any_io_keeps_no_repetition_of_zeros() {
    let Some(bench) = Bench::new(false) else {
        return;
    };
    let (fs, results) = (&bench.fs, bench.results.as_path());
    fs.fail(Dir::Read, fs.requests(), 0..SIZE);
    let how = ["--io-size", "4m", "--repeat", "2"];
    let (out, _) = run_bounded(
        &bench.args("randread", "psync", true, &how),
        Duration::from_secs(20),
    );
    let err = one_line(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let run = &read_json(results)["runs"][0];
    assert_eq!(run["status"], "interrupted", "{run:#}");
    assert_eq!(run["repetitions"].as_array().unwrap().len(), 0, "{run:#}");
    let warnings = run["warnings"].to_string();
    assert!(
        warnings.contains("repetition 1: stopped by an error before any I/O completed"),
        "{warnings}"
    );
    assert!(
        run["error"]
            .as_str()
            .unwrap()
            .contains("Input/output error")
    );
}

/// Reads and writes answered short (2 KiB of each 4 KiB) are resumed for the rest and
/// counted once: the run completes with exactly the planned I/O and byte counts.
#[test]
fn short_transfers_are_resumed() {
    let Some(bench) = Bench::new(true) else {
        return;
    };
    let (fs, results) = (&bench.fs, bench.results.as_path());
    fs.short_transfers(2048);
    let how = ["--io-size", "4m", "--repeat", "1"];
    for (rw, dir) in [("randread", "read"), ("randwrite", "write")] {
        let before = fs.requests();
        // Each run a new document (-o does not replace one that holds measurements).
        let _ = std::fs::remove_file(results);
        let a = bench.args(rw, "psync", false, &how);
        let (out, _) = run_bounded(&a, Duration::from_secs(20));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{rw}: {err}");
        let rep = &read_json(results)["runs"][0]["repetitions"][0];
        assert_eq!(rep[dir]["ios"], IOS_PER_REP, "{rw}");
        assert_eq!(rep[dir]["bytes"], SIZE, "{rw}");
        assert!(
            fs.requests() - before >= 2 * IOS_PER_REP,
            "{rw}: every transfer was answered short"
        );
    }
}

/// A request held for 400 ms in the middle of a run shows in the latency maximum: a
/// stall is measured, not lost.
#[test]
fn a_stall_shows_in_the_latency_maximum() {
    let Some(bench) = Bench::new(true) else {
        return;
    };
    let (fs, results) = (&bench.fs, bench.results.as_path());
    fs.stall(500..501, Duration::from_millis(400));
    let how = ["--io-size", "4m", "--repeat", "1"];
    let a = bench.args("randread", "psync", true, &how);
    let (out, _) = run_bounded(&a, Duration::from_secs(20));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fs.stalled_at().is_some());
    let lat = &read_json(results)["runs"][0]["repetitions"][0]["read"]["lat_ns"];
    let max = lat["max"].as_u64().unwrap();
    assert!(
        (400_000_000..2_000_000_000).contains(&max),
        "max latency {max} ns"
    );
    assert!(lat["p50"].as_u64().unwrap() < 50_000_000, "{lat}");
}

/// fsync failing (`--end-fsync`): exit 1 with one line that says syncing failed and why.
#[test]
fn eio_on_fsync() {
    let Some(bench) = Bench::new(false) else {
        return;
    };
    let (fs, results) = (&bench.fs, bench.results.as_path());
    fs.fail_fsync(true);
    let how = ["--io-size", "1m", "--end-fsync"];
    let a = bench.args("randwrite", "psync", true, &how);
    let (out, _) = run_bounded(&a, Duration::from_secs(20));
    let err = one_line(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("syncing ") && err.contains("Input/output error"),
        "{err}"
    );
    let run = &read_json(results)["runs"][0];
    assert_eq!(run["status"], "interrupted", "{run:#}");
}

/// How long a stalled request is held, and how far into the stall SIGINT comes.
const STALL: Duration = Duration::from_secs(3);
const SIGNAL_INTO_STALL: Duration = Duration::from_millis(200);
/// The bound: iomark exits within this long after the stalled request returns. It cannot
/// exit before (the kernel does not end a process while one of its threads waits for a
/// FUSE request or a device; measured: SIGKILL too waits for the stall's end).
const AFTER_STALL: Duration = Duration::from_secs(1);

/// A request stalls for `STALL`; SIGINT arrives `SIGNAL_INTO_STALL` into it. iomark
/// exits 130 within `AFTER_STALL` of the stall's end, keeps the partial repetition and,
/// having waited over 2 s, has said why it is waiting.
fn stall_then_interrupt(engine: &str) {
    let Some(bench) = Bench::new(true) else {
        return;
    };
    let (fs, results) = (&bench.fs, bench.results.as_path());
    // Time-based, one repetition: it cannot finish on its own within the test.
    let how = ["--runtime", "60s", "--repeat", "1"];
    let a = bench.args("randread", engine, true, &how);
    fs.stall(500..OFF, STALL);
    let mut child = spawn(&a);
    let t = Instant::now();
    while fs.stalled_at().is_none() {
        assert!(t.elapsed() < Duration::from_secs(10), "nothing stalled");
        std::thread::sleep(Duration::from_millis(2));
    }
    let stall_start = Instant::now();
    std::thread::sleep(SIGNAL_INTO_STALL);
    signal(&child, libc::SIGINT);
    let sent = Instant::now();
    let status = wait_bounded(&mut child, STALL + Duration::from_secs(10));
    let took = sent.elapsed();
    let after_stall = stall_start.elapsed().saturating_sub(STALL);
    let out = finish(child, status);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("{engine}: exit {took:?} after SIGINT, {after_stall:?} after the stall ended: {err}");
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        after_stall < AFTER_STALL,
        "{engine}: iomark exited {after_stall:?} after the stalled request returned"
    );
    assert!(
        err.contains("interrupted; the measurements so far are kept"),
        "{err}"
    );
    let doc = read_json(results);
    let run = &doc["runs"][0];
    assert_eq!(run["status"], "interrupted");
    assert_eq!(run["repetitions"][0]["status"], "interrupted");
    assert!(run["repetitions"][0]["read"]["ios"].as_u64().unwrap() >= 400);
    // The wait is said, with its length (seen by the main thread within a 250 ms tick).
    let said = slow_stop_warning(run).expect("a warning about the slow stop");
    let secs: f64 = said
        .split(" waited ")
        .nth(1)
        .and_then(|w| w.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    let want = (STALL - SIGNAL_INTO_STALL).as_secs_f64();
    assert!((want - 0.4..want + 0.3).contains(&secs), "{said}");
}

/// A request held 2.5 s across the end of a one-second time-based run: the run ends
/// when it returns, does not count it (it completed after the window), and says that
/// the end waited on I/O in flight.
#[test]
fn a_stall_across_the_end_of_a_timed_run_is_said() {
    let Some(bench) = Bench::new(true) else {
        return;
    };
    let (fs, results) = (&bench.fs, bench.results.as_path());
    let how = ["--runtime", "1s", "--repeat", "1"];
    let a = bench.args("randread", "psync", true, &how);
    fs.stall(200..201, Duration::from_millis(2500));
    let (out, took) = run_bounded(&a, Duration::from_secs(20));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fs.stalled_at().is_some());
    assert!(took >= Duration::from_millis(2500), "{took:?}");
    let run = &read_json(results)["runs"][0];
    assert_eq!(run["status"], "complete");
    let lat_max = run["repetitions"][0]["read"]["lat_ns"]["max"]
        .as_u64()
        .unwrap();
    assert!(lat_max < 1_000_000_000, "not counted: {lat_max} ns");
    let said = slow_stop_warning(run).expect("a warning about the slow end");
    assert!(said.contains("stopping repetition 1 waited 1."), "{said}");
}

/// The run's warning that stopping waited on I/O in flight, if there is one.
fn slow_stop_warning(run: &Value) -> Option<String> {
    run["warnings"]
        .as_array()?
        .iter()
        .filter_map(|w| w.as_str())
        .find(|w| w.contains("for I/O in flight"))
        .map(str::to_string)
}

#[test]
fn a_stalled_read_and_sigint_psync() {
    stall_then_interrupt("psync");
}

#[test]
fn a_stalled_read_and_sigint_io_uring() {
    stall_then_interrupt("io_uring");
}

/// The file system vanishes (lazy unmount, connection aborted) during the second of three
/// one-second repetitions: exit 1 naming the error, no panic, the first repetition kept.
#[test]
fn the_target_vanishing_mid_run_keeps_the_results() {
    let Some(bench) = Bench::new(true) else {
        return;
    };
    let (fs, results) = (&bench.fs, bench.results.as_path());
    let how = ["--runtime", "1s", "--repeat", "3"];
    let a = bench.args("randread", "io_uring", true, &how);
    let mut child = spawn(&a);
    // The first repetition is saved when it ends; vanish half a second later.
    let t = Instant::now();
    while !results.exists() {
        assert!(t.elapsed() < Duration::from_secs(10), "no first repetition");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(500));
    let aborted = fs.vanish();
    let status = wait_bounded(&mut child, Duration::from_secs(10));
    let out = finish(child, status);
    let err = one_line(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("reading ") && err.contains("Transport endpoint is not connected"),
        "{err}"
    );
    let doc = read_json(results);
    let run = &doc["runs"][0];
    assert_eq!(run["status"], "interrupted", "{run:#}");
    let reps = run["repetitions"].as_array().unwrap();
    assert_eq!(reps.len(), 2, "{run:#}");
    assert_eq!(reps[0]["status"], "complete");
    assert!(reps[0]["read"]["ios"].as_u64().unwrap() > 0);
    assert_eq!(reps[1]["status"], "interrupted");
    assert!(run["error"].as_str().unwrap().contains("not connected"));
    eprintln!("vanished (connection aborted by the kernel: {aborted}): {err}");
}

/// A loop device over the served file is a block device that fails the same way: EIO
/// injected under it reaches iomark reading /dev/loopN as an error at iomark's offset.
#[test]
fn eio_under_a_loop_device() {
    let Some(bench) = Bench::new(true) else {
        return;
    };
    let (fs, results) = (&bench.fs, bench.results.as_path());
    // Declared after the file system, so dropped (detached) before it is unmounted.
    let Some(lo) = LoopDev::over(&fs.file(), 0) else {
        return;
    };
    let after = fs.requests() + IOS_PER_REP + 300;
    fs.fail(Dir::Read, after, 0..SIZE);
    let (out, took) = run_bounded(
        &args("randread", "psync", true, results, lo.path()),
        Duration::from_secs(20),
    );
    let err = one_line(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("reading {}", lo.path().display())),
        "{err}"
    );
    assert!(err.contains("Input/output error"), "{err}");
    let at = fs.failed_at().expect("the fault fired");
    assert!(
        err.contains(&format!("at offset {at} ")),
        "offset {at}: {err}"
    );
    check_kept(results, 1, "read");
    eprintln!("loop: {took:?}: {err}");
}

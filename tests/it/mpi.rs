//! Scale-out under MPI (`mpirun -np 3 iomark run …`, the `mpi` feature): three ranks on
//! three loop devices against the devices' own kernel counters, a shared file split into
//! segments that never overlap and cover the span (each rank reads its blocks back), and
//! a bad target on rank 2 that stops the job at once, naming rank 2. The binary under
//! test is this build's when it has the feature; otherwise the tests build one with
//! `cargo build --features mpi` into a directory of their own (once). They skip without
//! mpirun or root, and fail instead under IOMARK_REQUIRE_ALL=1.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{LoopDev, have, is_root, read_json, require, tmp};

/// An iomark binary built with the `mpi` feature, or why there is none.
pub(crate) fn mpi_bin() -> Result<PathBuf, String> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BIN.get_or_init(|| {
        if cfg!(feature = "mpi") {
            return Ok(crate::common::iomark_bin());
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpi-build");
        let out = Command::new(env!("CARGO"))
            .args(["build", "--features", "mpi", "--bin", "iomark", "--target-dir"])
            .arg(&dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cargo build --features mpi failed (libopenmpi-dev and libclang-dev installed?): {}",
                String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
            ));
        }
        Ok(dir.join("debug/iomark"))
    })
    .clone()
}

/// The binary when MPI tests can run here: mpirun, root (the launcher is told to allow
/// it) and an MPI build.
pub(crate) fn ready(needs_root: bool) -> Option<PathBuf> {
    if !require("mpirun (openmpi-bin)", have("mpirun")) {
        return None;
    }
    if needs_root && !require("root (loop devices)", is_root()) {
        return None;
    }
    match mpi_bin() {
        Ok(b) => Some(b),
        Err(why) => {
            require(
                &format!("an iomark built with --features mpi: {why}"),
                false,
            );
            None
        }
    }
}

/// `mpirun -np N BIN ARGS…`, as root if need be, ranks allowed to share this machine's
/// cores.
pub(crate) fn mpirun(bin: &Path, np: u32, args: &[&str]) -> Output {
    Command::new("mpirun")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env_remove("RUST_BACKTRACE")
        .args(["-np", &np.to_string()])
        .arg(bin)
        .args(args)
        .output()
        .expect("mpirun runs")
}

pub(crate) fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

pub(crate) fn within_1pct(what: &str, iomark: u64, kernel: u64) {
    let diff = (iomark as f64 - kernel as f64).abs();
    assert!(
        diff <= 0.01 * kernel.max(1) as f64,
        "{what}: iomark counted {iomark}, the kernel {kernel}"
    );
}

#[test]
fn three_ranks_on_three_loop_devices_add_up_to_the_kernel_counters() {
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(true) else { return };
    let devs: Vec<LoopDev> = (0..3)
        .filter_map(|_| LoopDev::new(32 << 20, true))
        .collect();
    if devs.len() < 3 {
        return;
    }
    // The template names a link per rank, each to its own loop device.
    let dir = tmp();
    for (r, d) in devs.iter().enumerate() {
        std::os::unix::fs::symlink(d.path(), dir.path().join(format!("dev{r}"))).unwrap();
    }
    let template = dir.path().join("dev{rank}").display().to_string();
    let doc_path = dir.path().join("r.json");
    let before: Vec<[u64; 4]> = devs.iter().map(LoopDev::stat).collect();
    let out = mpirun(
        &bin,
        3,
        &[
            "run",
            "--rw",
            "randwrite",
            "--bs",
            "64k",
            "--io-size",
            "8m",
            "--engine",
            "psync",
            "--allow-write-device",
            "-q",
            "-o",
            doc_path.to_str().unwrap(),
            &template,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after: Vec<[u64; 4]> = devs.iter().map(LoopDev::stat).collect();
    let doc = read_json(&doc_path);
    assert_eq!(
        doc["runs"].as_array().unwrap().len(),
        1,
        "one document, one run"
    );
    let run = &doc["runs"][0];
    assert_eq!(run["mpi"]["ranks"], 3);
    assert_eq!(run["mpi"]["layout"], "template");
    let rep = &run["repetitions"][0];
    let ranks = rep["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 3);
    let mut kernel_total = 0;
    for (r, t) in ranks.iter().enumerate() {
        assert_eq!(u(&t["rank"]), r as u64);
        assert_eq!(u(&t["write"]["ios"]), 128, "8 MiB in 64 KiB I/Os");
        let k = after[r][2] - before[r][2];
        kernel_total += k;
        within_1pct(&format!("rank {r} I/Os"), u(&t["write"]["ios"]), k);
        assert_eq!(t["device"]["name"], devs[r].name());
        within_1pct(
            &format!("rank {r} bytes"),
            u(&t["write"]["bytes"]),
            (after[r][3] - before[r][3]) * 512,
        );
    }
    let sum: u64 = ranks.iter().map(|t| u(&t["write"]["ios"])).sum();
    assert_eq!(
        u(&rep["write"]["ios"]),
        sum,
        "the aggregate is the ranks' sum"
    );
    within_1pct("aggregate I/Os vs kernel", sum, kernel_total);
    within_1pct(
        "aggregate device counters",
        u(&rep["device"]["write_ios"]),
        kernel_total,
    );
    // The window is the slowest rank's; IOPS are the total over it; the latencies come
    // from the merged histograms (their extremes are the ranks' extremes, the p99 lies
    // between the ranks' p99s; results::ranks' unit tests check the merge exactly).
    let elapsed = rep["elapsed_s"].as_f64().unwrap();
    let slowest = ranks
        .iter()
        .map(|t| t["elapsed_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(elapsed, slowest);
    let iops = rep["write"]["iops"].as_f64().unwrap();
    assert!((iops - sum as f64 / elapsed).abs() < 1e-6 * iops);
    let lat = |t: &Value, f: &str| u(&t["write"]["lat_ns"][f]);
    assert_eq!(
        lat(rep, "max"),
        ranks.iter().map(|t| lat(t, "max")).max().unwrap()
    );
    assert_eq!(
        lat(rep, "min"),
        ranks.iter().map(|t| lat(t, "min")).min().unwrap()
    );
    let p99s: Vec<u64> = ranks.iter().map(|t| lat(t, "p99")).collect();
    let p99 = lat(rep, "p99");
    assert!(p99 >= *p99s.iter().min().unwrap() && p99 <= *p99s.iter().max().unwrap());
    // One host here: its figures are the aggregate's, its device counters included.
    let hosts = rep["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 1, "{hosts:?}");
    let h = &hosts[0];
    assert_eq!(h["host"], ranks[0]["host"]);
    assert_eq!(h["ranks"], serde_json::json!([0, 1, 2]));
    for f in ["read", "write"] {
        assert_eq!(h[f], rep[f], "host {f} vs the aggregate");
    }
    assert_eq!(h["device"], rep["device"]);
    within_1pct(
        "host device writes vs kernel",
        u(&h["device"]["write_ios"]),
        kernel_total,
    );
    let notes = run["warnings"].to_string();
    assert!(
        notes.contains("slowest rank was rank") && notes.contains("the fastest rank"),
        "{notes}"
    );
    // The report: a row per rank, and a bar whose stacked ranks make the aggregate.
    let page = crate::common::report(&[&doc_path], &dir.path().join("r.html"));
    let html = scraper::Html::parse_document(&page);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    assert_eq!(
        html.select(&sel("table.ranks tr")).count(),
        4,
        "header and 3 ranks"
    );
    let bar = html
        .select(&sel("svg[data-kind=stacked] g.stack"))
        .next()
        .expect("a stacked bar");
    let total: f64 = bar.value().attr("data-total").unwrap().parse().unwrap();
    let want = u(&rep["write"]["bytes"]) as f64 / elapsed / 1e6;
    assert!(
        (total - want).abs() < 1e-6 * want,
        "bar {total}, aggregate {want}"
    );
    assert_eq!(bar.select(&sel("rect.segment")).count(), 3);
}

#[test]
fn a_shared_file_is_split_into_segments_that_never_overlap_and_cover_the_span() {
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(false) else { return };
    let dir = tmp();
    let f = dir.path().join("shared.dat");
    let fs = f.to_str().unwrap();
    // The shared file is made (and kept) by an ordinary run first: 3 ranks x 1 MiB.
    let made = crate::common::iomark()
        .args([
            "run",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--size",
            "3m",
            "--buffered",
            "--keep",
            "-q",
            fs,
        ])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let doc_path = dir.path().join("s.json");
    let out = mpirun(
        &bin,
        3,
        &[
            "run",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--size",
            "3m",
            "--buffered",
            "--verify",
            "--engine",
            "psync",
            "-q",
            "-o",
            doc_path.to_str().unwrap(),
            fs,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = read_json(&doc_path);
    let run = &doc["runs"][0];
    assert_eq!(run["mpi"]["layout"], "segmented");
    let rep = &run["repetitions"][0];
    // Each rank wrote its own 1 MiB once and read every block back as its own: a block
    // another rank had written (another seed) would read back stale or misplaced.
    for t in rep["ranks"].as_array().unwrap() {
        assert_eq!(u(&t["write"]["bytes"]), 1 << 20, "{t}");
    }
    let v = &rep["verify"];
    assert_eq!(
        u(&v["blocks"]),
        48,
        "the 3 MiB span in 64 KiB blocks, each once"
    );
    assert_eq!(u(&v["good"]), 48, "{v}");
    assert_eq!(
        u(&rep["write"]["bytes"]),
        3 << 20,
        "together they cover the span"
    );
    let _ = std::fs::remove_file(&f);
}

#[test]
fn a_bad_target_on_rank_2_stops_every_rank_naming_it() {
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(false) else { return };
    let dir = tmp();
    for r in 0..2 {
        std::fs::create_dir(dir.path().join(format!("d{r}"))).unwrap();
    }
    let template = dir.path().join("d{rank}/f.dat").display().to_string();
    let t0 = Instant::now();
    let out = mpirun(
        &bin,
        3,
        &[
            "run",
            "--rw",
            "write",
            "--size",
            "4m",
            "--buffered",
            "-q",
            &template,
        ],
    );
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("rank 2 on "), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(took < Duration::from_secs(30), "took {took:?}");
    for r in 0..2 {
        let d = dir.path().join(format!("d{r}"));
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            0,
            "rank {r} wrote nothing"
        );
    }
}

/// The pid of the rank `rank` of a job whose command line holds `marker`.
pub(crate) fn rank_pid(marker: &str, rank: u32) -> Option<i32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
        let env = std::fs::read(e.path().join("environ")).ok()?;
        let has = |hay: &[u8], s: &str| hay.windows(s.len()).any(|w| w == s.as_bytes());
        (has(&cmd, marker)
            && !has(&cmd, "mpirun")
            && env.split(|b| *b == 0).any(|v| v == want.as_bytes()))
        .then_some(pid)
    })
}

/// Three ranks of a 2 s buffered random-read run on files in `dir`; rank 2 is frozen
/// (SIGSTOP, as a hung node) 1.5 s into the run. The job and rank 2's pid.
fn three_ranks_with_rank_2_frozen(bin: &Path, dir: &Path) -> (std::process::Child, i32) {
    let template = dir.join("w{rank}.dat").display().to_string();
    let child = Command::new("mpirun")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env_remove("RUST_BACKTRACE")
        .args(["-np", "3"])
        .arg(bin)
        .args([
            "run",
            "--rw",
            "randread",
            "--size",
            "4m",
            "--buffered",
            "--runtime",
            "2s",
        ])
        .args(["--ramp", "0", "--engine", "psync", "-q", &template])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let marker = dir.display().to_string();
    let t0 = Instant::now();
    let pid = loop {
        if let Some(p) = rank_pid(&marker, 2) {
            break p;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "rank 2 never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: a signal to a process this test's mpirun started; no memory is involved.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    (child, pid)
}

#[test]
fn a_rank_that_stops_answering_ends_the_job_within_the_watchdogs_bound() {
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(false) else { return };
    let dir = tmp();
    let (child, pid) = three_ranks_with_rank_2_frozen(&bin, dir.path());
    let stopped_at = Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = stopped_at.elapsed();
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("rank 2"),
        "the waiting rank names rank 2: {err}"
    );
    assert!(err.contains("no word from the other ranks"), "{err}");
    // 2 s of runtime, the watchdog's 30 s slack, a few seconds for the launcher.
    assert!(took < Duration::from_secs(45), "took {took:?}");
    // The rank whose watchdog fired removed its file; rank 1, waiting too, removed its
    // own when the launcher's SIGTERM came (before, it waited on inside MPI until the
    // SIGKILL, and its file stayed). Rank 2 was frozen: its file stays, marked with its
    // dead process, and a later run takes it over (see docs/scale-out.md).
    for r in [0, 1] {
        assert!(
            !dir.path().join(format!("w{r}.dat")).exists(),
            "rank {r}'s file left behind: {err}"
        );
    }
}

#[test]
fn waiting_ranks_stopped_by_sigterm_end_at_once_and_remove_their_files() {
    // A cut while ranks 0 and 1 wait for a frozen rank 2 (the launcher's SIGTERM, sent
    // here to each): they end within the grace of 3 s instead of the watchdog's 30, say
    // why, and leave no file behind (the launcher's SIGKILL used to find them still
    // waiting inside MPI).
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(false) else { return };
    let dir = tmp();
    let (child, pid) = three_ranks_with_rank_2_frozen(&bin, dir.path());
    // Ranks 0 and 1 finish their 2 s and wait for rank 2's figures.
    std::thread::sleep(Duration::from_millis(1500));
    let marker = dir.path().display().to_string();
    let cut = Instant::now();
    for r in [0, 1] {
        let p = rank_pid(&marker, r).expect("ranks 0 and 1 wait");
        // SAFETY: a signal to a process this test's mpirun started; no memory is involved.
        unsafe { libc::kill(p, libc::SIGTERM) };
    }
    let out = child.wait_with_output().unwrap();
    let took = cut.elapsed();
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("stopped by SIGTERM"), "{err}");
    assert!(took < Duration::from_secs(15), "took {took:?}: {err}");
    for r in [0, 1] {
        assert!(
            !dir.path().join(format!("w{r}.dat")).exists(),
            "rank {r}'s file left behind: {err}"
        );
    }
}

/// A stonewalled repetition: the first finisher (part 0, not held back) moved all its
/// `io_size`, the others (throttled to 1 MiB/s, 8 s for 8 MiB) stopped early, the
/// repetition is complete (a stonewall is no stop), and the aggregate's window is the
/// last part's stop.
pub(crate) fn check_stonewalled(parts: &[Value], rep: &Value, io_size: u64) {
    assert_eq!(rep["status"], "complete", "{rep}");
    for (i, t) in parts.iter().enumerate() {
        let bytes = u(&t["write"]["bytes"]);
        if i == 0 {
            assert_eq!(bytes, io_size, "the unthrottled part did all its work");
        } else {
            assert!(bytes < io_size / 2, "part {i} was stopped early: {bytes}");
        }
    }
    let sum: u64 = parts.iter().map(|t| u(&t["write"]["bytes"])).sum();
    assert_eq!(u(&rep["write"]["bytes"]), sum, "the aggregate is the sum");
    let last = (parts.iter())
        .map(|t| t["elapsed_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(rep["elapsed_s"].as_f64().unwrap(), last);
}

/// What each part wrote over all `reps` equals what its device's counters saw.
pub(crate) fn check_kernel(reps: &[Value], key: &str, devs: &[LoopDev], before: &[[u64; 4]]) {
    for (i, d) in devs.iter().enumerate() {
        let after = d.stat();
        let sum = |f: &str| -> u64 { reps.iter().map(|r| u(&r[key][i]["write"][f])).sum() };
        assert_eq!(
            sum("ios"),
            after[2] - before[i][2],
            "part {i}: I/Os vs kernel"
        );
        assert_eq!(
            sum("bytes"),
            (after[3] - before[i][3]) * 512,
            "part {i}: bytes"
        );
    }
}

#[test]
fn stonewall_ends_every_rank_when_the_first_has_moved_its_io_size() {
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(true) else { return };
    let devs: Vec<LoopDev> = (0..3)
        .filter_map(|_| LoopDev::new(32 << 20, true))
        .collect();
    if devs.len() < 3 {
        return;
    }
    // Ranks 1 and 2 write at 1 MiB/s: 8 s for their 8 MiB; rank 0 is not held back.
    let Some(slow) = crate::common::Throttle::new(&[&devs[1], &devs[2]], 1 << 20) else {
        return;
    };
    let dir = tmp();
    for (r, d) in devs.iter().enumerate() {
        std::os::unix::fs::symlink(d.path(), dir.path().join(format!("dev{r}"))).unwrap();
    }
    let template = dir.path().join("dev{rank}").display().to_string();
    let doc_path = dir.path().join("r.json");
    let mut cmd = Command::new("mpirun");
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env_remove("RUST_BACKTRACE")
        .args(["-np", "3"])
        .arg(&bin)
        .args(["run", "--rw", "randwrite", "--bs", "64k", "--io-size", "8m"])
        .args(["--engine", "psync", "--allow-write-device", "--stonewall"])
        .args([
            "--repeat",
            "2",
            "-q",
            "-o",
            doc_path.to_str().unwrap(),
            &template,
        ]);
    let before: Vec<[u64; 4]> = devs.iter().map(LoopDev::stat).collect();
    let out = slow.wrap(&cmd).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = read_json(&doc_path);
    let run = &doc["runs"][0];
    let reps = run["repetitions"].as_array().unwrap();
    assert_eq!(
        reps.len(),
        2,
        "both repetitions ran (a stonewall is no stop)"
    );
    for rep in reps {
        check_stonewalled(rep["ranks"].as_array().unwrap(), rep, 8 << 20);
    }
    check_kernel(reps, "ranks", &devs, &before);
    let notes = run["warnings"].to_string();
    for i in 1..=2 {
        assert!(
            notes.contains(&format!("repetition {i}: stonewalled at "))
                && notes.contains("by rank 0 on "),
            "{notes}"
        );
    }
}

#[test]
fn a_rank_frozen_in_a_size_based_repetition_ends_the_job_within_the_bound() {
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(true) else { return };
    let devs: Vec<LoopDev> = (0..3)
        .filter_map(|_| LoopDev::new(32 << 20, true))
        .collect();
    if devs.len() < 3 {
        return;
    }
    // Rank 2 writes at 1 MiB/s (64 s for its 64 MiB); ranks 0 and 1 finish in moments
    // and wait for its figures, with no time bound a size-based run could give.
    let Some(slow) = crate::common::Throttle::new(&[&devs[2]], 1 << 20) else {
        return;
    };
    let dir = tmp();
    for (r, d) in devs.iter().enumerate() {
        std::os::unix::fs::symlink(d.path(), dir.path().join(format!("dev{r}"))).unwrap();
    }
    let template = dir.path().join("dev{rank}").display().to_string();
    let mut cmd = Command::new("mpirun");
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env_remove("RUST_BACKTRACE")
        .args(["-np", "3"])
        .arg(&bin)
        .args(["run", "--rw", "write", "--bs", "64k", "--io-size", "64m"])
        .args(["--engine", "psync", "--allow-write-device", "-q", &template]);
    let mut child = (slow.wrap(&cmd))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let marker = dir.path().display().to_string();
    let t0 = Instant::now();
    let pid = loop {
        if let Some(p) = rank_pid(&marker, 2) {
            break p;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "rank 2 never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::sleep(Duration::from_millis(2000));
    // SAFETY: a signal to a process this test's mpirun started; no memory is involved.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let stopped_at = Instant::now();
    // Without a bound the job would wait for rank 2 for ever: give up after 70 s.
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if stopped_at.elapsed() > Duration::from_secs(70) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let took = stopped_at.elapsed();
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    if status.is_none() {
        // SAFETY: as above; mpirun is this test's child, ended by its PID.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let status =
        status.unwrap_or_else(|| panic!("the job still ran 70 s after rank 2 froze: {err}"));
    assert!(!status.success(), "{err}");
    assert!(
        err.contains("rank 2 on "),
        "the waiting rank names rank 2: {err}"
    );
    assert!(err.contains("silent for"), "{err}");
    // The 30 s bound from when rank 0 began to wait, a few seconds for the launcher.
    assert!(took < Duration::from_secs(45), "took {took:?}");
}

//! Studies under MPI (`mpirun -np 3 iomark suite|fio …`): every run of a matrix and of a
//! fio job file with two groups is a synchronised, aggregated run of its own, each
//! rank's I/Os against the kernel counters of the loop device under it, the aggregate
//! their sum, one document written by rank 0; and the waits before the first
//! repetition are bounded: a rank whose target check hangs (a FUSE file system that
//! does not answer a lookup) stops every rank, named, within the check's bound.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{LoopDev, read_json, tmp};
use crate::mpi::{mpirun, rank_pid, ready, u, within_1pct};

/// `n` loop devices of 32 MiB (direct I/O), or none when they cannot be made.
fn loops(n: usize) -> Option<Vec<LoopDev>> {
    let devs: Vec<LoopDev> = (0..n)
        .filter_map(|_| LoopDev::new(32 << 20, true))
        .collect();
    (devs.len() == n).then_some(devs)
}

/// Links `dir/{prefix}{r}` to device r, for a `{rank}` template.
fn link(dir: &Path, prefix: &str, devs: &[LoopDev]) -> String {
    for (r, d) in devs.iter().enumerate() {
        std::os::unix::fs::symlink(d.path(), dir.join(format!("{prefix}{r}"))).unwrap();
    }
    dir.join(format!("{prefix}{{rank}}")).display().to_string()
}

/// One scaled-out run of the document: one rank per device, each writing `ios` I/Os
/// (size-based, exact), each equal to the device's counters iomark read over its
/// window, the aggregate their sum. Returns the ranks' write I/Os.
fn check_run(run: &Value, ios: u64, devs: &[LoopDev]) -> Vec<u64> {
    assert_eq!(run["mpi"]["ranks"], 3, "{}", run["name"]);
    let reps = run["repetitions"].as_array().unwrap();
    assert_eq!(reps.len(), 1);
    let rep = &reps[0];
    let ranks = rep["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 3);
    let mut each = Vec::new();
    for (r, t) in ranks.iter().enumerate() {
        assert_eq!(u(&t["rank"]), r as u64);
        assert_eq!(t["device"]["name"], devs[r].name(), "rank {r}");
        let w = u(&t["write"]["ios"]);
        assert_eq!(w, ios, "rank {r}: its io-size in its bs");
        within_1pct(&format!("rank {r}"), w, u(&t["device"]["write_ios"]));
        each.push(w);
    }
    let sum: u64 = each.iter().sum();
    assert_eq!(
        u(&rep["write"]["ios"]),
        sum,
        "the aggregate is the ranks' sum"
    );
    within_1pct("aggregate device", sum, u(&rep["device"]["write_ios"]));
    each
}

#[test]
fn a_matrix_under_mpirun_is_one_aggregated_run_per_point_against_the_kernel_counters() {
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(true) else { return };
    let Some(devs) = loops(3) else { return };
    let dir = tmp();
    let template = link(dir.path(), "dev", &devs);
    let matrix = dir.path().join("m.toml");
    std::fs::write(
        &matrix,
        "rw = \"randwrite\"\nengine = \"psync\"\nio-size = \"8m\"\n[vary]\nbs = [\"64k\", \"128k\"]\n",
    )
    .unwrap();
    let doc_path = dir.path().join("m.json");
    let before: Vec<[u64; 4]> = devs.iter().map(LoopDev::stat).collect();
    let out = mpirun(
        &bin,
        3,
        &[
            "suite",
            "matrix",
            matrix.to_str().unwrap(),
            "--allow-write-device",
            "-o",
            doc_path.to_str().unwrap(),
            &template,
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Rank 0 alone prints the study's table: one table, one row per point.
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("\n64k ").count(), 1, "{text}");
    let doc = read_json(&doc_path);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "one document, a run per point");
    let mut written = [0u64; 3];
    for (run, (bs, ios)) in runs.iter().zip([("64k", 128), ("128k", 64)]) {
        assert_eq!(run["study"]["value"], bs);
        assert_eq!(run["study"]["suite"], "matrix");
        for (r, w) in check_run(run, ios, &devs).into_iter().enumerate() {
            written[r] += w;
        }
    }
    // The kernel, read by the test: each device took exactly what its rank wrote in
    // the two runs (8 MiB in 64 KiB, then in 128 KiB).
    for (r, d) in devs.iter().enumerate() {
        let k = d.stat()[2] - before[r][2];
        within_1pct(&format!("device of rank {r}"), written[r], k);
    }
}

#[test]
fn a_fio_job_file_with_two_groups_under_mpirun_aggregates_each_group() {
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(true) else { return };
    let Some(devs) = loops(6) else { return };
    let dir = tmp();
    // Group 1 writes devices a0..a2, group 2 (after a stonewall) b0..b2: each run's
    // counters are its own devices', read by the test.
    let a = link(dir.path(), "a", &devs[..3]);
    let b = link(dir.path(), "b", &devs[3..]);
    let job = dir.path().join("two.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=psync\ndirect=1\nrw=randwrite\nio_size=8m\n\n[first]\nfilename={a}\nbs=64k\n\n[second]\nstonewall\nfilename={b}\nbs=128k\n"
        ),
    )
    .unwrap();
    let doc_path = dir.path().join("f.json");
    let before: Vec<[u64; 4]> = devs.iter().map(LoopDev::stat).collect();
    let out = mpirun(
        &bin,
        3,
        &[
            "fio",
            job.to_str().unwrap(),
            "--allow-write-device",
            "-o",
            doc_path.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc = read_json(&doc_path);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "a run per job, in one document");
    for (i, (run, ios)) in runs.iter().zip([128, 64]).enumerate() {
        let set = &devs[3 * i..3 * i + 3];
        let each = check_run(run, ios, set);
        for (r, d) in set.iter().enumerate() {
            let k = d.stat()[2] - before[3 * i + r][2];
            within_1pct(&format!("run {} rank {r} vs its device", i + 1), each[r], k);
        }
    }
    assert_eq!(runs[0]["study"]["suite"], "fio", "{}", runs[0]["study"]);
    assert!(
        runs[1]["study"].to_string().contains("second"),
        "{}",
        runs[1]["study"]
    );
}

/// What befalls rank 2 while its target check hangs.
#[derive(PartialEq)]
enum Then {
    /// Nothing: it refuses at the check's bound.
    Nothing,
    /// It is stopped (SIGSTOP) 3 s in, and falls silent.
    Frozen,
    /// It is killed (SIGKILL) 3 s in (its lookup let go, so that it can die).
    Killed,
}

/// Runs 3 ranks whose rank 2 checks a new file in a FUSE mount whose lookups are held
/// (its `stat` does not return), and `then` befalls it. Returns how long after the
/// start rank 0 ended, and the job's stderr; checks that it failed and that ranks 0 and
/// 1 wrote nothing.
fn hung_check(then: Then) -> Option<(Duration, String)> {
    let bin = ready(true)?;
    let fs = crate::faultfs::FaultFs::mount(1 << 20, false)?;
    let dir = tmp();
    for r in 0..2 {
        std::fs::create_dir(dir.path().join(format!("d{r}"))).unwrap();
    }
    let mount = fs.file().parent().unwrap().to_path_buf();
    std::os::unix::fs::symlink(&mount, dir.path().join("d2")).unwrap();
    fs.hold_lookups(true);
    let template = dir.path().join("d{rank}/f.dat").display().to_string();
    let t0 = Instant::now();
    let child = Command::new("mpirun")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env_remove("RUST_BACKTRACE")
        .args(["-np", "3"])
        .arg(&bin)
        .args(["run", "--rw", "write", "--size", "4m", "--buffered", "-q"])
        .arg(&template)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Rank 0 ends once the ranks have agreed on rank 2's refusal, or once rank 2 has
    // been silent too long; rank 2 itself cannot end while its thread waits in the
    // kernel for the file system (a FUSE request already taken is not interruptible),
    // so the test lets the lookups go then.
    let marker = dir.path().display().to_string();
    let (mut seen, mut stopped) = (false, None);
    let rank0_gone = loop {
        match rank_pid(&marker, 0) {
            Some(_) => seen = true,
            None if seen => break t0.elapsed(),
            None => {}
        }
        if then != Then::Nothing
            && stopped.is_none()
            && t0.elapsed() > Duration::from_secs(3)
            && let Some(p) = rank_pid(&marker, 2)
        {
            let sig = match then {
                Then::Killed => libc::SIGKILL,
                _ => libc::SIGSTOP,
            };
            // SAFETY: a signal to a process this test's mpirun started.
            unsafe { libc::kill(p, sig) };
            if then == Then::Killed {
                fs.hold_lookups(false);
            }
            stopped = Some(p);
        }
        if t0.elapsed() > Duration::from_secs(80) {
            break t0.elapsed();
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    fs.hold_lookups(false);
    if let Some(p) = stopped {
        // SAFETY: as above.
        unsafe { libc::kill(p, libc::SIGCONT) };
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{err}");
    for r in 0..2 {
        let d = dir.path().join(format!("d{r}"));
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0, "rank {r} wrote");
    }
    Some((rank0_gone, err))
}

#[test]
fn a_rank_whose_target_check_hangs_stops_every_rank_within_the_bound() {
    let _alone = crate::common::exclusive();
    let Some((took, err)) = hung_check(Then::Nothing) else {
        return;
    };
    // Rank 2 keeps beating while its check hangs, and refuses at the check's bound.
    assert!(err.contains("rank 2 on "), "{err}");
    assert!(err.contains("did not finish within 20 s"), "{err}");
    assert!(
        took < Duration::from_secs(30),
        "rank 0 ended after {took:?}: {err}"
    );
}

#[test]
fn a_rank_frozen_before_the_agreement_is_named_within_the_heartbeat_bound() {
    let _alone = crate::common::exclusive();
    let Some((took, err)) = hung_check(Then::Frozen) else {
        return;
    };
    // Frozen 3 s in, rank 2 falls silent; rank 0, waiting for its verdict, names it
    // 30 s after it began to wait.
    assert!(err.contains("no word from the other ranks"), "{err}");
    assert!(err.contains("rank 2 on "), "{err}");
    assert!(err.contains("verdict"), "{err}");
    assert!(
        took < Duration::from_secs(40),
        "rank 0 ended after {took:?}: {err}"
    );
}

#[test]
fn a_rank_killed_before_the_agreement_ends_the_job_at_once_naming_it() {
    let _alone = crate::common::exclusive();
    let Some((took, err)) = hung_check(Then::Killed) else {
        return;
    };
    // The launcher sees rank 2 die and ends the job, naming the rank and its node.
    assert!(
        err.contains("rank 2") && err.contains("on node ") && err.contains("signal 9"),
        "{err}"
    );
    assert!(
        took < Duration::from_secs(10),
        "rank 0 ended after {took:?}: {err}"
    );
}

#[test]
fn the_quick_benchmark_under_mpirun_gives_each_rank_a_file_of_its_own() {
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(false) else { return };
    let dir = tmp();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let doc_path = dir.path().join("q.json");
    let out = mpirun(
        &bin,
        2,
        &[
            "quick",
            "--size",
            "8m",
            "--runtime",
            "1s",
            "--ramp",
            "0",
            "-q",
            "-o",
            doc_path.to_str().unwrap(),
            work.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc = read_json(&doc_path);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(
        runs.len(),
        6,
        "the quick benchmark's six tests, in one document"
    );
    for run in runs {
        let rep = &run["repetitions"][0];
        let ranks = rep["ranks"].as_array().unwrap();
        for (r, t) in ranks.iter().enumerate() {
            let want = work.join(format!("iomark.{r}.dat"));
            assert_eq!(t["path"], want.display().to_string(), "{}", run["name"]);
        }
        let sum: u64 = (ranks.iter())
            .map(|t| u(&t["read"]["ios"]) + u(&t["write"]["ios"]))
            .sum();
        let agg = u(&rep["read"]["ios"]) + u(&rep["write"]["ios"]);
        assert_eq!(agg, sum, "{}: the aggregate is the ranks' sum", run["name"]);
        assert!(sum > 0, "{}", run["name"]);
    }
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "each rank removed its file"
    );
}

#[test]
fn a_launcher_whose_tasks_mpi_does_not_join_is_refused_before_any_io() {
    // MPI polls on every CPU while it starts: not beside the paced-job tests.
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(false) else { return };
    let dir = tmp();
    let f = dir.path().join("alone.dat");
    // A launcher (here only its variable) said 3 tasks; the MPI library, which cannot
    // talk to it, makes this process a job of its own: it would run alone.
    let out = Command::new(&bin)
        .env("PMI_SIZE", "3")
        .env_remove("RUST_BACKTRACE")
        .args(["run", "--rw", "write", "--size", "1m", "--buffered", "-q"])
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the launcher started 3 tasks but MPI joined this one to 1"),
        "{err}"
    );
    assert!(!f.exists(), "nothing was written");
}

#[test]
fn suite_steady_under_mpirun_decides_its_rounds_on_the_ranks_aggregate() {
    let _alone = crate::common::exclusive();
    let Some(bin) = ready(true) else { return };
    let Some(devs) = loops(3) else { return };
    let dir = tmp();
    let template = link(dir.path(), "dev", &devs);
    let doc_path = dir.path().join("s.json");
    let before: Vec<[u64; 4]> = devs.iter().map(LoopDev::stat).collect();
    let out = mpirun(
        &bin,
        3,
        &[
            "suite",
            "steady",
            "--round-time",
            "1s",
            "--max-rounds",
            "6",
            "--qd",
            "8",
            // Rank 0 plans before any rank has laid out its target: a preset cannot
            // see the devices behind the template, so their size is given.
            "--size",
            "32m",
            "--allow-write-device",
            "-o",
            doc_path.to_str().unwrap(),
            &template,
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc = read_json(&doc_path);
    assert_eq!(doc["purge"]["method"], "discard", "{}", doc["purge"]);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[0]["study"]["test"], "precondition");
    let rounds: Vec<&Value> = runs[1..].iter().collect();
    // Every rank ran every round (each run is the 3 ranks' aggregate), and the verdict
    // is the aggregate's: its rounds are the document's, its mean the aggregated IOPS
    // over its window.
    for (i, r) in rounds.iter().enumerate() {
        assert_eq!(r["study"]["test"], "round");
        assert_eq!(r["study"]["value"], (i + 1).to_string());
        assert_eq!(r["repetitions"][0]["ranks"].as_array().unwrap().len(), 3);
    }
    let s = &doc["steady_state"];
    assert_eq!(u(&s["rounds"]) as usize, rounds.len(), "{s}");
    let iops = |r: &Value| {
        r["summary"]["read"]["iops"]["mean"].as_f64().unwrap()
            + r["summary"]["write"]["iops"]["mean"].as_f64().unwrap()
    };
    if s["reached"] == true {
        let w = &s["window"];
        let (a, b) = (u(&w[0]) as usize, u(&w[1]) as usize);
        let mean = (a..=b).map(|k| iops(rounds[k - 1])).sum::<f64>() / (b - a + 1) as f64;
        let got = s["mean"].as_f64().unwrap();
        assert!(
            (got - mean).abs() < 1e-6 * mean,
            "verdict {got}, aggregate {mean}"
        );
    } else {
        assert_eq!(rounds.len(), 6, "runs to --max-rounds when not steady");
    }
    // What every rank wrote in the precondition and the rounds reached its device.
    for (r, d) in devs.iter().enumerate() {
        let wrote: u64 = (runs.iter())
            .map(|run| u(&run["repetitions"][0]["ranks"][r]["write"]["ios"]))
            .sum();
        within_1pct(&format!("rank {r}"), wrote, d.stat()[2] - before[r][2]);
    }
}

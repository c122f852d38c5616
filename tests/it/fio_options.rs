//! fio options once refused by `iomark fio` (issue 14, the rest): each is an iomark
//! option first, checked against what really happens (the device's blocks, the kernel's
//! counters, fio itself on the same job file), then mapped from fio's job file and
//! written back by `--as-fio`.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::*;

/// Shares of the 4 KiB blocks of `dev` that are not all zeros, in `[from, to)` (blocks).
fn touched(dev: &Path, zones: &[(usize, usize)]) -> Vec<f64> {
    let data = std::fs::read(dev).unwrap();
    let blocks: Vec<bool> = data
        .chunks(4096)
        .map(|b| b.iter().any(|&x| x != 0))
        .collect();
    zones
        .iter()
        .map(|&(a, b)| blocks[a..b].iter().filter(|&&t| t).count() as f64 / (b - a) as f64)
        .collect()
}

/// `zoned:60/10:40/` on a fresh (zeroed) loop device, 8192 random 4 KiB writes over its
/// 16384 blocks: the first 10% (1638 blocks) gets 60% of the writes, so a share
/// 1 - e^(-4915/1638) = 0.950 of its blocks is written, the rest 1 - e^(-3277/14746) =
/// 0.199 (uniform writes would touch 0.39 of each). iomark's run and fio's run of the
/// same job file touch the same shares.
#[test]
fn zoned_writes_land_in_their_zones_under_both_tools() {
    let job = "[zones]\nfilename=${DIR}\nrw=randwrite\nbs=4k\ndirect=1\nio_size=32m\n\
        norandommap\nrandom_distribution=zoned:60/10:40/\n";
    let want = [0.950, 0.199];
    let zones = [(0, 1638), (1638, 16384)];
    let dir = tmp();
    let file = dir.path().join("zones.fio");
    std::fs::write(&file, job).unwrap();
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let doc = iomark_fio_json(&file, dev.path(), &["--allow-write-device"]);
    let spec = &doc["runs"][0]["spec"];
    assert_eq!(
        spec["random_distribution"],
        json!({"kind": "zoned", "zones": [{"access": 60, "len": 10}, {"access": 40, "len": 0}]})
    );
    let got = touched(dev.path(), &zones);
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 0.03, "iomark: {got:?} against {want:?}");
    }
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    drop(dev);
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let out = std::process::Command::new("fio")
        .arg(&file)
        .arg("--output=/dev/null")
        .env("DIR", dev.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs = touched(dev.path(), &zones);
    for (g, w) in theirs.iter().zip(want) {
        assert!((g - w).abs() < 0.03, "fio: {theirs:?} against {want:?}");
    }
}

/// Zones (fio's units in `zoned_abs`, written as bytes), centers, and one set for reads
/// and writes: mapped, recorded, written back by `--as-fio` and read back the same; fio
/// parses what `--as-fio` wrote. Per-direction sets that differ are refused.
#[test]
fn zones_and_centers_map_and_round_trip() {
    let dir = tmp();
    let job = "[global]\ndirectory=${DIR}\nioengine=null\nsize=64m\nio_size=1m\n\
        [z]\nrw=randread\nrandom_distribution=zoned:60/10:30/20:10/\n\
        [za]\nstonewall\nrw=randwrite\nkb_base=1000\nrandom_distribution=zoned_abs:50/1MiB:50/2MB\n\
        [c]\nstonewall\nrw=randrw\nrandom_distribution=zipf:1.2:0.3,zipf:1.2:0.3\n\
        [n]\nstonewall\nrw=randread\nrandom_distribution=normal:5:0.25\n";
    let file = dir.path().join("d.fio");
    std::fs::write(&file, job).unwrap();
    let doc = iomark_fio_json(&file, dir.path(), &[]);
    let d = |i: usize| doc["runs"][i]["spec"]["random_distribution"].clone();
    assert_eq!(d(0)["zones"].as_array().unwrap().len(), 3);
    assert_eq!(
        d(1),
        json!({"kind": "zoned_abs", "zones": [{"access": 50, "len": 1_048_576}, {"access": 50, "len": 2_000_000}]})
    );
    assert_eq!(d(2), json!({"kind": "zipf", "param": 1.2, "center": 0.3}));
    assert_eq!(
        d(3),
        json!({"kind": "normal", "param": 5.0, "center": 0.25})
    );
    let t = dir.path().join("t.dat");
    for dist in [
        "zoned:60/10:30/20:10/",
        "zoned_abs:50/1048576:50/2097152",
        "zipf:1.2:0.3",
    ] {
        let out = stdout_of(&[
            "run",
            t.to_str().unwrap(),
            "--rw",
            "randread",
            "--size",
            "4m",
            "--random-distribution",
            dist,
            "--as-fio",
        ]);
        let text = String::from_utf8_lossy(&out).to_string();
        assert!(
            text.lines()
                .any(|l| l == format!("random_distribution={dist}")),
            "{dist}: {text}"
        );
        let back = dir.path().join("back.fio");
        std::fs::write(&back, &text).unwrap();
        let plan: Value = fio_plan(&back);
        let got = plan.to_string();
        let want = serde_json::to_string(&d_of(dist)).unwrap();
        assert!(
            got.contains(&want),
            "{dist}: {want} not in the plan read back"
        );
        if have("fio") {
            assert_fio_parses(&back);
        }
    }
    // zoned_abs zones longer than the span are refused before any I/O.
    let out = iomark()
        .args([
            "run",
            t.to_str().unwrap(),
            "--rw",
            "randread",
            "--size",
            "1m",
        ])
        .args(["--random-distribution", "zoned_abs:50/1m:50/1m", "-q"])
        .output()
        .unwrap();
    assert_refused(&out, "the zones cover 2 MiB");
    let odd = dir.path().join("odd.fio");
    std::fs::write(
        &odd,
        "[j]\nioengine=null\nsize=1m\nrw=randrw\nrandom_distribution=zipf:1.2,zipf:0.8\n",
    )
    .unwrap();
    let out = iomark()
        .args(["fio", odd.to_str().unwrap()])
        .output()
        .unwrap();
    assert_refused(&out, "one distribution for a job's reads and writes");
}

/// The document form of the distribution `text` in a few cases of the test above.
fn d_of(text: &str) -> Value {
    match text {
        "zoned:60/10:30/20:10/" => json!({"kind": "zoned", "zones": [
            {"access": 60, "len": 10}, {"access": 30, "len": 20}, {"access": 10, "len": 0}]}),
        "zoned_abs:50/1048576:50/2097152" => json!({"kind": "zoned_abs", "zones": [
            {"access": 50, "len": 1_048_576}, {"access": 50, "len": 2_097_152}]}),
        _ => json!({"kind": "zipf", "param": 1.2, "center": 0.3}),
    }
}

/// `--rate-iops-min` (fio's `rate_iops_min`): a job held to about 50 IOPS by a 200 KB/s
/// cap on 4 KiB reads (a think time that makes the minimum impossible is refused before
/// the run), with a minimum of 200 over each 1 s cycle, fails: exit status 1, one line naming
/// the rate measured and the minimum, the run and its repetition marked failed with the
/// I/Os measured so far kept (and seen by the kernel); fio fails the same job file. A
/// minimum of 1 passes. Loop device: the kernel's counters vouch for the I/Os kept.
#[test]
fn a_job_below_its_minimum_rate_fails_the_run_under_both_tools() {
    let Some(dev) = LoopDev::new(16 << 20, true) else {
        return;
    };
    let dir = tmp();
    let res = dir.path().join("r.json");
    let before = dev.stat();
    let out = iomark()
        .args([
            "run",
            "--rw",
            "randread",
            "--rate",
            "200k",
            "--runtime",
            "5",
        ])
        .args(["--rate-iops-min", "200", "--repeat", "2", "-q", "-o"])
        .arg(&res)
        .arg(dev.path())
        .output()
        .unwrap();
    let after = dev.stat();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().find(|l| l.starts_with("iomark:")).unwrap_or("");
    assert!(
        line.contains(" IOPS, below --rate-iops-min 200 over the "),
        "{err}"
    );
    let doc = read_json(&res);
    let run = &doc["runs"][0];
    assert_eq!(run["status"], "failed");
    assert!(
        run["error"]
            .as_str()
            .unwrap()
            .contains("--rate-iops-min 200")
    );
    let reps = run["repetitions"].as_array().unwrap();
    assert_eq!(reps.len(), 1, "the run stops at the failed repetition");
    assert_eq!(reps[0]["status"], "failed");
    let ios = reps[0]["read"]["ios"].as_u64().unwrap();
    assert!(ios > 0, "the I/Os measured are kept");
    assert!(
        after[0] - before[0] >= ios,
        "the kernel saw {} reads",
        after[0] - before[0]
    );
    // Failed at the first cycle's check, well before the 5 s planned.
    assert!(reps[0]["elapsed_s"].as_f64().unwrap() < 4.0);
    assert_eq!(run["spec"]["rate_iops_min"], 200);
    let ok = run_json(&[
        "run",
        dev.path().to_str().unwrap(),
        "--rw",
        "randread",
        "--rate",
        "200k",
        "--runtime",
        "2.5",
        "--rate-iops-min",
        "1",
        "--rate-cycle",
        "500ms",
    ]);
    assert_eq!(ok["runs"][0]["status"], "complete");
    assert_eq!(ok["runs"][0]["spec"]["rate_cycle_ms"], 500);
    // The same as a fio job file, under iomark and under fio.
    let job = dir.path().join("min.fio");
    std::fs::write(
        &job,
        "[slow]\nfilename=${DIR}\nrw=randread\ndirect=1\nrate=200k\nruntime=5\n\
         time_based\nrate_iops_min=200\nrate_cycle=1000\n",
    )
    .unwrap();
    let out = iomark()
        .arg("fio")
        .arg(&job)
        .args(["-q", "-o"])
        .arg(dir.path().join("f.json"))
        .env("DIR", dev.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let doc = read_json(&dir.path().join("f.json"));
    assert_eq!(doc["runs"][0]["status"], "failed");
    assert_eq!(doc["runs"][0]["spec"]["rate_cycle_ms"], 1000);
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let out = std::process::Command::new("fio")
        .arg(&job)
        .arg("--output=/dev/null")
        .env("DIR", dev.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rate_iops_min=200 not met"), "{err}");
}

/// fio's minimums map per side as its caps do, `rate_cycle` with them (a note without),
/// and `--as-fio` writes them back (a mix's split by the mix); a minimum above its cap is
/// refused, as fio refuses it.
#[test]
fn minimum_rates_map_and_round_trip() {
    let dir = tmp();
    let job = dir.path().join("m.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null\nsize=1m\n\
         [w]\nrw=randwrite\nrate_min=,2m\nrate_cycle=250\n\
         [m]\nstonewall\nrw=randrw\nrwmixread=75\nrate_iops_min=300,100\n\
         [c]\nstonewall\nrw=read\nrate_cycle=500\n",
    )
    .unwrap();
    let plan: Value = serde_json::from_slice(&stdout_of(&[
        "fio",
        job.to_str().unwrap(),
        "--dry-run",
        "--json",
    ]))
    .unwrap();
    let text = plan.to_string();
    let runs = plan["runs"].as_array().unwrap();
    let spec = |i: usize| runs[i]["spec"].clone();
    assert_eq!(spec(0)["rate_min_bps"], 2 << 20, "{text}");
    assert_eq!(spec(0)["rate_cycle_ms"], 250);
    assert_eq!(spec(1)["rate_iops_min"], 400);
    assert!(spec(2)["rate_cycle_ms"].is_null());
    assert!(
        text.contains("rate_cycle=500: fio averages its caps"),
        "{text}"
    );
    let t = dir.path().join("t.dat");
    let out = stdout_of(&[
        "run",
        t.to_str().unwrap(),
        "--rw",
        "randrw",
        "--rwmixread",
        "75",
        "--size",
        "1m",
        "--rate-iops-min",
        "400",
        "--rate-cycle",
        "2s",
        "--as-fio",
    ]);
    let text = String::from_utf8_lossy(&out);
    assert!(text.lines().any(|l| l == "rate_iops_min=300,100"), "{text}");
    assert!(text.lines().any(|l| l == "rate_cycle=2000"), "{text}");
    let out = iomark()
        .args([
            "run",
            t.to_str().unwrap(),
            "--size",
            "1m",
            "--rate-iops",
            "10",
        ])
        .args(["--rate-iops-min", "20"])
        .output()
        .unwrap();
    assert_refused(&out, "--rate-iops-min 20 is above --rate-iops 10");
}

/// `thinktime_spin` (and the other think-time options): a 2 ms pause after each I/O of
/// the null engine, asleep or spun. The share of the wall time the job's worker threads
/// spend on the CPU is compared as a ratio: spinning takes at least 5 times that of
/// sleeping. fio parses the job file and what `--as-fio` writes; it does not run it:
/// fio 3.33's spin, on a virtual machine, can overshoot the pause and then sleep until
/// the end of the job (axboe/fio#1588; here a 1.5 s job ran 11 s with a dozen I/Os).
#[test]
fn thinktime_spin_uses_the_cpu() {
    let _alone = exclusive();
    let dir = tmp();
    let job = dir.path().join("spin.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null\nsize=1g\nruntime=1500ms\ntime_based\nrw=randread\n\
         [sleep]\nthinktime=2ms\n\
         [spin]\nstonewall\nthinktime=2ms\nthinktime_spin=2ms\n\
         [issue]\nstonewall\nthinktime=2ms\nthinktime_spin=1000\nthinktime_blocks=4\n\
         thinktime_blocks_type=issue\niodepth=4\nthinktime_iotime=1\n",
    )
    .unwrap();
    let doc = iomark_fio_json(&job, dir.path(), &[]);
    let runs = doc["runs"].as_array().unwrap();
    let spec = |i: usize| runs[i]["spec"].clone();
    assert_eq!(spec(1)["thinktime_spin_us"], 2000);
    assert_eq!(spec(2)["thinktime_spin_us"], 1000);
    assert_eq!(spec(2)["thinktime_on_issue"], true);
    assert_eq!(spec(2)["thinktime_iotime_us"], 1_000_000);
    let share = |r: &Value| {
        let rep = &r["repetitions"][0];
        let w = &rep["cpu"]["workers"];
        (w["user_s"].as_f64().unwrap() + w["sys_s"].as_f64().unwrap())
            / rep["elapsed_s"].as_f64().unwrap()
    };
    let (slept, spun) = (share(&runs[0]), share(&runs[1]));
    assert!(spun > 5.0 * slept, "asleep {slept:.3}, spinning {spun:.3}");
    // --as-fio writes them back.
    let out = stdout_of(&[
        "run",
        "--engine",
        "null",
        "--size",
        "1m",
        "--thinktime",
        "2ms",
        "--thinktime-spin",
        "500us",
        "--thinktime-blocks-type",
        "issue",
        "--thinktime-iotime",
        "2s",
        "--as-fio",
    ]);
    let text = String::from_utf8_lossy(&out).to_string();
    for l in [
        "thinktime_spin=500",
        "thinktime_blocks_type=issue",
        "thinktime_iotime=2000000us",
    ] {
        assert!(text.lines().any(|x| x == l), "{l} in {text}");
    }
    let out = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "1m",
            "--thinktime",
            "1ms",
        ])
        .args(["--thinktime-spin", "2ms"])
        .output()
        .unwrap();
    assert_refused(
        &out,
        "--thinktime-spin 2ms is longer than the --thinktime pause",
    );
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let back = dir.path().join("back.fio");
    std::fs::write(&back, text.as_bytes()).unwrap();
    for file in [&job, &back] {
        assert_fio_parses(file);
    }
}

/// `rw=randwrite:8` with `rw_sequencer=identical`: each random offset written 8 times.
/// 8192 writes of 4 KiB on a fresh 16384-block loop device make 1024 runs, so
/// 16384 (1 - e^(-1024/16384)) = 993 distinct blocks (6.1%) are written, where the
/// default sequencer (runs following on) writes 8 blocks a run (39%); the kernel counts
/// the 8192 writes either way. iomark and fio, on the same job file, agree.
#[test]
fn identical_runs_rewrite_one_block_under_both_tools() {
    let job = "[same]\nfilename=${DIR}\nrw=randwrite:8\nrw_sequencer=identical\nbs=4k\n\
        direct=1\nio_size=32m\nnorandommap\n";
    let dir = tmp();
    let file = dir.path().join("same.fio");
    std::fs::write(&file, job).unwrap();
    let all = [(0, 16384)];
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let before = dev.stat();
    let doc = iomark_fio_json(&file, dev.path(), &["--allow-write-device"]);
    let writes = dev.stat()[2] - before[2];
    let spec = &doc["runs"][0]["spec"];
    assert_eq!(spec["random_run"], 8);
    assert_eq!(spec["rw_sequencer_identical"], true);
    let got = touched(dev.path(), &all)[0];
    assert!(
        (got - 0.0606).abs() < 0.01,
        "iomark: {got:.4} of the blocks written"
    );
    assert!(writes >= 8192, "the kernel counted {writes} writes");
    drop(dev);
    // The default sequencer, for contrast: runs follow on.
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    std::fs::write(&file, job.replace("rw_sequencer=identical\n", "")).unwrap();
    iomark_fio_json(&file, dev.path(), &["--allow-write-device"]);
    let seq = touched(dev.path(), &all)[0];
    assert!(
        seq > 0.3,
        "runs following on: {seq:.3} of the blocks written"
    );
    drop(dev);
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    std::fs::write(&file, job).unwrap();
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let out = std::process::Command::new("fio")
        .arg(&file)
        .arg("--output=/dev/null")
        .env("DIR", dev.path())
        .output()
        .unwrap();
    assert_success(&out);
    let theirs = touched(dev.path(), &all)[0];
    assert!(
        (theirs - 0.0606).abs() < 0.01,
        "fio: {theirs:.4} of the blocks written"
    );
}

/// The worker threads (`iomark-jobN`) of a running iomark and their
/// `Cpus_allowed_list`, read from /proc while it runs.
fn job_affinity(pid: u32) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
        let list = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .map(|l| l.trim().to_string());
        if let (true, Some(list)) = (comm.starts_with("iomark-job"), list) {
            out.push((comm.trim().to_string(), list));
        }
    }
    out.sort();
    out
}

/// Runs `iomark fio FILE` (null engine, 3 s) and reads its job threads' CPUs once the
/// run has been going for a second (the jobs pin themselves before the start gate).
fn affinity_of(job: &str) -> Vec<(String, String)> {
    let dir = tmp();
    let file = dir.path().join("cpus.fio");
    std::fs::write(&file, job).unwrap();
    let mut child = iomark_process()
        .arg("fio")
        .arg(&file)
        .arg("-q")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let seen = job_affinity(child.id());
    let _ = child.kill();
    let _ = child.wait();
    seen
}

/// `cpus_allowed` with `cpus_allowed_policy=shared` (fio's default: every job on any CPU
/// of the list) and `split` (job j on the j-th), as `--cpus` with `--cpus-policy`: each
/// worker thread's affinity, read from /proc while the job runs. `--as-fio` writes both,
/// and fio parses them.
#[test]
fn cpus_allowed_shared_and_split_pin_the_job_threads() {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !require("two CPUs (to tell shared from split)", n >= 2) {
        return;
    }
    let job = |policy: &str| {
        format!(
            "[j]\nioengine=null\nsize=1g\nruntime=3\ntime_based\nrw=randread\nnumjobs=2\n\
             thinktime=1ms\ncpus_allowed=0-1\n{policy}"
        )
    };
    let both = |l: &str| {
        vec![
            ("iomark-job0".into(), l.into()),
            ("iomark-job1".into(), l.into()),
        ]
    };
    assert_eq!(affinity_of(&job("")), both("0-1"), "fio's default: shared");
    // One CPU shared: pinned (not the process's 0-1).
    let one = job("").replace("cpus_allowed=0-1", "cpus_allowed=1");
    assert_eq!(affinity_of(&one), both("1"));
    assert_eq!(
        affinity_of(&job("cpus_allowed_policy=shared\n")),
        both("0-1")
    );
    assert_eq!(
        affinity_of(&job("cpus_allowed_policy=split\n")),
        vec![
            ("iomark-job0".to_string(), "0".to_string()),
            ("iomark-job1".to_string(), "1".to_string())
        ]
    );
    let out = stdout_of(&[
        "run",
        "--engine",
        "null",
        "--size",
        "1m",
        "--jobs",
        "2",
        "--cpus",
        "0-1",
        "--cpus-policy",
        "shared",
        "--as-fio",
    ]);
    let text = String::from_utf8_lossy(&out).to_string();
    assert!(text.lines().any(|l| l == "cpus_allowed=0-1"), "{text}");
    assert!(
        text.lines().any(|l| l == "cpus_allowed_policy=shared"),
        "{text}"
    );
    let out = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "1m",
            "--cpus-policy",
            "shared",
        ])
        .output()
        .unwrap();
    assert_refused(&out, "--cpus");
    if require_tool("fio", "fio (apt-get install fio)") {
        let dir = tmp();
        let back = dir.path().join("back.fio");
        std::fs::write(&back, text.as_bytes()).unwrap();
        assert_fio_parses(&back);
    }
}

/// `startdelay=1-2` (fio: each job its own delay drawn from the range): the jobs' delays
/// are drawn in the range (`measure::pace`'s unit test checks their spread), and the
/// measurement starts once every job has started: the command takes at least the range's
/// end plus the runtime, the measured window is the runtime. `--as-fio` writes the range
/// back and fio parses it.
#[test]
fn a_startdelay_range_delays_each_job_and_the_window_after_it() {
    let dir = tmp();
    let job = dir.path().join("sd.fio");
    std::fs::write(
        &job,
        "[j]\nioengine=null\nsize=1g\nruntime=1\ntime_based\nnumjobs=3\nrw=randread\n\
         startdelay=1-2\n",
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let doc = iomark_fio_json(&job, dir.path(), &[]);
    let wall = t0.elapsed().as_secs_f64();
    let run = &doc["runs"][0];
    assert_eq!(run["spec"]["startdelay_s"], 1.0);
    assert_eq!(run["spec"]["startdelay_max_s"], 2.0);
    assert!(wall >= 3.0, "the range's end and the runtime: {wall:.2} s");
    let elapsed = run["repetitions"][0]["elapsed_s"].as_f64().unwrap();
    assert!((0.9..1.5).contains(&elapsed), "measured {elapsed:.2} s");
    let out = stdout_of(&[
        "run",
        "--engine",
        "null",
        "--size",
        "1m",
        "--startdelay",
        "500ms-1.5s",
        "--as-fio",
    ]);
    let text = String::from_utf8_lossy(&out).to_string();
    assert!(
        text.lines().any(|l| l == "startdelay=500ms-1500ms"),
        "{text}"
    );
    let out = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "1m",
            "--startdelay",
            "3s-1s",
        ])
        .output()
        .unwrap();
    assert_refused(&out, "low end is above its high end");
    if require_tool("fio", "fio (apt-get install fio)") {
        let back = dir.path().join("back.fio");
        std::fs::write(&back, text.as_bytes()).unwrap();
        assert_fio_parses(&back);
    }
}

/// `size=50%` and `offset=25%` (fio: shares of the file's or device's length): random
/// writes on a fresh 64 MiB loop device land in its second and third quarters only, under
/// iomark and under fio, and the run records the span used. A new file is refused, as
/// fio refuses it.
#[test]
fn size_and_offset_as_shares_of_the_device_under_both_tools() {
    let job = "[pct]\nfilename=${DIR}\nrw=randwrite\nbs=4k\ndirect=1\nsize=50%\noffset=25%\n\
        io_size=16m\nnorandommap\n";
    let dir = tmp();
    let file = dir.path().join("pct.fio");
    std::fs::write(&file, job).unwrap();
    // Blocks of 4 KiB: the first quarter, the middle half, the last quarter.
    let parts = [(0, 4096), (4096, 12288), (12288, 16384)];
    let check = |who: &str, got: Vec<f64>| {
        assert_eq!(got[0], 0.0, "{who}: nothing before 25%: {got:?}");
        assert_eq!(got[2], 0.0, "{who}: nothing after 75%: {got:?}");
        // 4096 writes over 8192 blocks: 1 - e^(-0.5) = 39% written.
        assert!((got[1] - 0.393).abs() < 0.03, "{who}: {got:?}");
    };
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let doc = iomark_fio_json(&file, dev.path(), &["--allow-write-device"]);
    let run = &doc["runs"][0];
    assert_eq!(run["spec"]["size_pct"], 50.0);
    assert_eq!(run["spec"]["offset_pct"], 25.0);
    assert_eq!(
        run["target"]["span_bytes"],
        32u64 << 20,
        "{}",
        run["target"]
    );
    check("iomark", touched(dev.path(), &parts));
    drop(dev);
    let out = iomark()
        .args(["run", "--rw", "randwrite", "--size", "50%", "-q"])
        .arg(dir.path().join("new.dat"))
        .output()
        .unwrap();
    assert_refused(&out, "does not exist; give bytes");
    let out = stdout_of(&[
        "run",
        "/dev/null",
        "--rw",
        "read",
        "--size",
        "50%",
        "--offset",
        "25%",
        "--as-fio",
    ]);
    let text = String::from_utf8_lossy(&out).to_string();
    assert!(text.lines().any(|l| l == "size=50%"), "{text}");
    assert!(text.lines().any(|l| l == "offset=25%"), "{text}");
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let out = std::process::Command::new("fio")
        .arg(&file)
        .arg("--output=/dev/null")
        .env("DIR", dev.path())
        .output()
        .unwrap();
    assert_success(&out);
    check("fio", touched(dev.path(), &parts));
}

/// A minimum rate in a fio group: the slow job's run fails with the error naming it, the
/// other job of the group (stopped with it) is interrupted, and the exit status is 1.
#[test]
fn a_slow_job_in_a_group_fails_its_own_run() {
    let dir = tmp();
    let job = dir.path().join("g.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null\nsize=1g\nruntime=4\ntime_based\nrw=randread\n\
         [fast]\n\
         [slow]\nrate=200k\nrate_iops_min=200\n",
    )
    .unwrap();
    let res = dir.path().join("r.json");
    let out = iomark()
        .arg("fio")
        .arg(&job)
        .args(["-q", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let doc = read_json(&res);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[0]["status"], "interrupted", "{}", runs[0]["error"]);
    assert_eq!(runs[1]["status"], "failed");
    let e = runs[1]["error"].as_str().unwrap();
    assert!(e.contains("below --rate-iops-min 200"), "{e}");
    assert!(runs[1]["repetitions"][0]["read"]["ios"].as_u64() > Some(0));
}

/// fio's size-based `rw=…:N` ends at the end of the span (fio's `get_next_offset`: the
/// file is done), not wrapping as a time-based job does: `write:12k` over 1 MiB is 64
/// writes of 4 KiB under both tools (iomark wrote each block 4 times, 256 writes), and a
/// `randread:8` run that would follow on past the end ends the job (fewer reads than the
/// span's 1024 blocks, every one counted by the kernel; iomark read 1024). Device
/// counters under both tools.
#[test]
fn size_based_holes_and_runs_end_at_the_end_of_the_span() {
    let dir = tmp();
    let file = dir.path().join("h.fio");
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let hole = "[h]\nfilename=${DIR}\ndirect=1\nrw=write:12k\nbs=4k\nsize=1m\n";
    std::fs::write(&file, hole).unwrap();
    let before = dev.stat();
    let doc = iomark_fio_json(&file, dev.path(), &["--allow-write-device"]);
    let writes = dev.stat()[2] - before[2];
    assert_eq!(doc["runs"][0]["repetitions"][0]["write"]["ios"], 64);
    assert_eq!(writes, 64, "the kernel's writes");
    let run = "[r]\nfilename=${DIR}\ndirect=1\nrw=randread:8\nbs=4k\nsize=4m\n";
    std::fs::write(&file, run).unwrap();
    let before = dev.stat();
    let doc = iomark_fio_json(&file, dev.path(), &[]);
    let reads = dev.stat()[0] - before[0];
    let ios = doc["runs"][0]["repetitions"][0]["read"]["ios"]
        .as_u64()
        .unwrap();
    assert!(
        ios < 1024,
        "iomark read {ios} blocks: it did not end at the span's end"
    );
    assert_eq!(reads, ios, "the kernel's reads");
    // Time-based, the same job wraps and goes on.
    std::fs::write(&file, format!("{run}runtime=300ms\ntime_based\n")).unwrap();
    let doc = iomark_fio_json(&file, dev.path(), &[]);
    let timed = doc["runs"][0]["repetitions"][0]["read"]["ios"]
        .as_u64()
        .unwrap();
    assert!(timed > 1024, "time-based: {timed} reads");
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    std::fs::write(&file, hole).unwrap();
    let before = dev.stat();
    let out = std::process::Command::new("fio")
        .arg(&file)
        .arg("--output=/dev/null")
        .env("DIR", dev.path())
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(dev.stat()[2] - before[2], 64, "fio's writes");
    std::fs::write(&file, run).unwrap();
    let before = dev.stat();
    let out = std::process::Command::new("fio")
        .arg(&file)
        .arg("--output=/dev/null")
        .env("DIR", dev.path())
        .output()
        .unwrap();
    assert_success(&out);
    let theirs = dev.stat()[0] - before[0];
    assert!(theirs < 1024, "fio read {theirs} blocks");
}

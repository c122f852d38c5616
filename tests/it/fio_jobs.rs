//! fio job files run by iomark (issue 14, items 14–16): each job file here is run under
//! `iomark fio` and under fio itself, and the two documents have the same structure
//! (jobs, groups, rw, bs, qd, numjobs) and, for size-based jobs, the same I/O counts;
//! options iomark does not support are one error naming their lines; `--as-fio` writes
//! a job file that `iomark fio` reads back into the same plan and that fio runs.

use std::ffi::OsStr;
use std::path::Path;

use serde_json::Value;

use crate::common::*;

/// (name, group, rw, bs, qd, jobs) of every run.
type Shape = (String, u64, String, u64, u64, u64);

fn shape_of(s: &Value, name: &str, group: u64) -> Shape {
    (
        name.to_string(),
        group,
        s["rw"].as_str().unwrap().to_string(),
        s["bs"].as_u64().unwrap(),
        s["qd"].as_u64().unwrap(),
        s["jobs"].as_u64().unwrap(),
    )
}

/// The shape of an `iomark fio` document (or plan): the job name and group are the
/// study point's test and value.
fn iomark_shape(runs: &Value) -> Vec<Shape> {
    (runs.as_array().unwrap().iter())
        .map(|r| {
            let p = &r["study"];
            let group = p["value"].as_str().unwrap().parse().unwrap();
            shape_of(&r["spec"], p["test"].as_str().unwrap(), group)
        })
        .collect()
}

/// The shape of fio's own output, imported by `iomark report`.
fn fio_shape(doc: &Value) -> Vec<Shape> {
    (doc["runs"].as_array().unwrap().iter())
        .map(|r| {
            let f = &r["fio"];
            shape_of(
                &r["spec"],
                f["jobname"].as_str().unwrap(),
                f["groupid"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Total reads and writes a run moved, over all its repetitions.
fn ios(run: &Value) -> (u64, u64) {
    let reps = run["repetitions"].as_array().unwrap();
    let sum = |d: &str| reps.iter().map(|r| r[d]["ios"].as_u64().unwrap()).sum();
    (sum("read"), sum("write"))
}

/// Writes the job files, runs `iomark fio` (results in `dir/iomark.json`) and then fio
/// (its JSON imported by `iomark report`); `${DIR}` in the files is `dir`.
fn both(dir: &Path, files: &[(&str, &str)]) -> (Value, Value) {
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let job = dir.join(files[0].0);
    let doc = dir.join("iomark.json");
    let out = iomark_process()
        .env("DIR", dir)
        .arg("fio")
        .arg(&job)
        .args(["--quiet", "-o"])
        .arg(&doc)
        .output()
        .unwrap();
    assert_success(&out);
    let ours = read_json(&doc);
    let fio_out = std::process::Command::new("fio")
        // fio saves a verify job's state file in its working directory.
        .current_dir(job.parent().unwrap())
        .env("DIR", dir)
        .args(["--output-format=json"])
        .arg(&job)
        .output()
        .unwrap();
    assert_success(&fio_out);
    let fio_json = dir.join("fio.json");
    std::fs::write(&fio_json, &fio_out.stdout).unwrap();
    let report = [
        OsStr::new("report"),
        fio_json.as_os_str(),
        OsStr::new("--format"),
        OsStr::new("json"),
    ];
    let theirs: Value = serde_json::from_slice(&stdout_of(&report)).unwrap();
    (ours, theirs)
}

/// Runs both tools and checks the shapes are equal and size-based jobs moved the same.
pub(crate) fn same_as_fio(files: &[(&str, &str)], size_based: &[&str]) -> Value {
    let dir = tmp();
    let (ours, theirs) = both(dir.path(), files);
    assert_eq!(iomark_shape(&ours["runs"]), fio_shape(&theirs));
    for (a, b) in ours["runs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(theirs["runs"].as_array().unwrap())
    {
        let name = a["study"]["test"].as_str().unwrap();
        if size_based.contains(&name) {
            assert_eq!(ios(a), ios(b), "{name}: iomark's I/O count against fio's");
        }
    }
    ours
}

const INCLUDED: &str = "; shared by the layout test\nsize=1m\nioengine=psync\n";

#[test]
fn layout_units_groups_numjobs_and_loops_match_fio() {
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let layout = "# layout, units and groups\n[global]\ndirectory=${DIR}\ninclude inc.fio\n\
        [seq-read]\nrw=read\nbs=4KB ; 4096 in fio\n\
        [rand-read]\nrw=randread\nbs=4k,64k\nnumjobs=2\n\
        [seq-write]\nstonewall\nrw=write\nbs=4k,64k\nloops=2\nnumjobs=2\ngroup_reporting\n\
        [big]\nnew_group\nwait_for=seq-read\nkb_base=1000\nrw=randwrite\nbs=8KiB\nfilesize=512KiB\n";
    let doc = same_as_fio(
        &[("layout.fio", layout), ("inc.fio", INCLUDED)],
        &["seq-read", "rand-read", "seq-write", "big"],
    );
    let runs = doc["runs"].as_array().unwrap();
    // bs=4k,64k: the read side for reads, the write side for writes; kb_base=1000: 8KiB
    // is 8192 and filesize 512KiB the span.
    assert_eq!(runs[1]["spec"]["bs"], 4096);
    assert_eq!(runs[2]["spec"]["bs"], 65536);
    assert_eq!(runs[3]["spec"]["bs"], 8192);
    assert_eq!(runs[3]["spec"]["size"], 524288);
    // loops=2 is two repetitions; the jobs of one group run together, as in fio.
    assert_eq!(runs[2]["repetitions"].as_array().unwrap().len(), 2);
    let warned = |r: &Value, s: &str| r["warnings"].to_string().contains(s);
    assert!(runs.iter().all(|r| !warned(r, "one after another")));
    let together = serde_json::json!(["seq-read", "rand-read"]);
    assert_eq!(runs[0]["group"]["runs"], together);
    assert_eq!(runs[1]["group"]["runs"], together);
    assert!(runs[2]["group"].is_null());
    // fio's default is buffered I/O and psync.
    assert_eq!(runs[0]["spec"]["direct"], false);
    assert_eq!(runs[0]["spec"]["engine"], "psync");
    assert_eq!(
        runs[0]["target"]["path"]
            .as_str()
            .map(|p| p.ends_with("/seq-read.0.0")),
        Some(true)
    );
}

#[test]
fn engines_time_mixes_and_fsync_match_fio() {
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let probe = tmp();
    let f = probe.path().join("probe");
    let uring = iomark()
        .args(["run", "--engine", "io_uring", "--size", "64k"])
        .arg(&f)
        .output();
    if !require(
        "io_uring (refused here, e.g. by seccomp)",
        uring.unwrap().status.success(),
    ) {
        return;
    }
    let jobs = "[global]\ndirectory=${DIR}\nsize=2m\nthread\n\
        [sync-timed]\nioengine=sync\nrw=randread\nruntime=300ms\ntime_based\nramp_time=100ms\nnorandommap\n\
        [uring]\nstonewall\nioengine=io_uring\niodepth=4\ndirect=1\nrw=randwrite\nfsync=4\nend_fsync=1\nrandseed=42\n\
        [aio]\nstonewall\nioengine=libaio\niodepth=8\ndirect=1\nrw=randrw\nrwmixwrite=30\noffset=1m\nsize=1m\nio_size=512k\n\
        [nothing]\nstonewall\nioengine=null\nrw=read\nsize=1m\n";
    let doc = same_as_fio(&[("engines.fio", jobs)], &["uring", "nothing"]);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[0]["spec"]["runtime_s"], 0.3);
    assert_eq!(runs[0]["spec"]["ramp_s"], 0.1);
    assert_eq!(runs[1]["spec"]["seed"], 42);
    assert_eq!(runs[1]["spec"]["end_fsync"], true);
    assert!(runs[1]["repetitions"][0]["fsyncs"].as_u64().unwrap() >= 512 / 4);
    assert_eq!(runs[2]["spec"]["engine"], "libaio");
    assert_eq!(runs[2]["spec"]["rwmixread"], 70);
    assert_eq!(runs[2]["spec"]["io_size"], 524288);
    assert_eq!(runs[2]["target"]["offset"], 1048576);
    let (r, w) = ios(&runs[2]);
    assert_eq!(r + w, 128);
}

#[test]
fn data_options_match_fio() {
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let jobs = "[global]\ndirectory=${DIR}\nsize=1m\nrw=write\nbs=64k\n\
        [compress]\nbuffer_compress_percentage=50\nbuffer_compress_chunk=4k\nrefill_buffers\n\
        [dedupe]\nstonewall\ndedupe_percentage=30\nscramble_buffers=1\n\
        [zeros]\nstonewall\nzero_buffers\n\
        [pattern]\nstonewall\nbuffer_pattern=0xdeadbeef\n\
        [checked]\nstonewall\nverify=crc32c\n";
    let doc = same_as_fio(
        &[("data.fio", jobs)],
        &["compress", "dedupe", "zeros", "pattern", "checked"],
    );
    let runs = doc["runs"].as_array().unwrap();
    let data = |i: usize| &runs[i]["spec"]["data"];
    assert_eq!(data(0)["kind"], "compressible");
    assert_eq!(data(0)["compress"], 50.0);
    assert_eq!(data(0)["compress_chunk"], 4096);
    assert_eq!(data(0)["refill"], true);
    assert_eq!(data(1)["dedup"], 30.0);
    assert_eq!(data(1)["dedup_unit"], 65536);
    assert_eq!(data(2)["kind"], "zeros");
    assert_eq!(data(3)["pattern"], "deadbeef");
    assert_eq!(runs[4]["spec"]["verify"], true);
    // What was written, as iomark measured it: about half compressible, 30% repeated
    // blocks, zeros; and every verified block read back good.
    let measured = |i: usize, k: &str| runs[i]["repetitions"][0]["data"][k].as_f64().unwrap();
    assert!(
        (measured(0, "lz4_pct") - 50.0).abs() < 5.0,
        "{}",
        measured(0, "lz4_pct")
    );
    assert!(
        (measured(1, "dedup_pct") - 30.0).abs() < 10.0,
        "{}",
        measured(1, "dedup_pct")
    );
    assert!(measured(2, "lz4_pct") > 95.0);
    let v = &runs[4]["repetitions"][0]["verify"];
    assert_eq!(v["good"], v["blocks"], "{v}");
    assert_eq!(v["blocks"], 16);
}

#[test]
fn unsupported_options_are_one_error_naming_each_line() {
    let dir = tmp();
    let job = dir.path().join("odd.fio");
    std::fs::write(
        &job,
        "[global]\nrate_process=poisson\nsize=1m\n[a]\nioscheduler=none\nfilename_format=f\n\
         [b]\nrw=randtrim\npre_read=1\nfile_service_type=normal\nfrobnicate\n",
    )
    .unwrap();
    let out = iomark().arg("fio").arg(&job).output().unwrap();
    assert_refused(&out, "--ignore-unsupported");
    let err = String::from_utf8_lossy(&out.stderr);
    // randtrim is iomark's too now: not listed.
    assert!(!err.contains("rw=randtrim"), "{err}");
    for (line, what) in [
        (2, "rate_process=poisson"),
        (5, "ioscheduler=none"),
        (6, "filename_format=f"),
        (9, "pre_read=1"),
        (10, "file_service_type=normal"),
        (11, "frobnicate"),
    ] {
        assert!(
            err.contains(&format!("odd.fio:{line} {what}")),
            "{what}: {err}"
        );
    }
    // With --ignore-unsupported the jobs run without them, and the runs say so.
    let res = dir.path().join("r.json");
    let out = iomark_process()
        .current_dir(dir.path())
        .arg("fio")
        .arg(&job)
        .args(["--ignore-unsupported", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    let said = [out.stdout.as_slice(), &out.stderr].concat();
    assert!(String::from_utf8_lossy(&said).contains("ignored"));
    let doc = read_json(&res);
    let w = doc["runs"][0]["warnings"].to_string();
    assert!(
        w.contains("odd.fio:6 filename_format") && w.contains("odd.fio:2 rate_process"),
        "{w}"
    );
    assert!(!dir.path().join("a.0.0").exists() && !dir.path().join("b.0.0").exists());
}

#[test]
fn results_are_a_document_for_repeat_report_and_compare() {
    let dir = tmp();
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null\nsize=4m\n[r]\nrw=randread\n[w]\nstonewall\nrw=write\nbs=64k\n",
    )
    .unwrap();
    let res = dir.path().join("r.json");
    let args = |extra: &[&str]| {
        let mut v = vec!["fio".to_string(), job.display().to_string()];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    stdout_of(&args(&[
        "--repeat",
        "3",
        "--quiet",
        "-o",
        res.to_str().unwrap(),
    ]));
    let doc = read_json(&res);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(iomark_shape(&doc["runs"]).len(), 2);
    for r in runs {
        assert_eq!(r["repetitions"].as_array().unwrap().len(), 3);
        assert_eq!(
            ios(r).0 + ios(r).1,
            3 * (4 << 20) / r["spec"]["bs"].as_u64().unwrap()
        );
    }
    let md = String::from_utf8(stdout_of(&["report", res.to_str().unwrap()])).unwrap();
    assert!(md.contains("| r |") || md.contains("r ("), "{md}");
    compare_json(&[res.clone(), res.clone()]);
    // The plan: one run per job, with its group.
    let plan: Value = serde_json::from_slice(&stdout_of(&args(&["--dry-run", "--json"]))).unwrap();
    assert_eq!(iomark_shape(&plan["runs"]), iomark_shape(&doc["runs"]));
}

/// `--as-fio` from `run` and `suite` reads back into the same plan with `iomark fio`.
#[test]
fn as_fio_round_trips_through_iomark_fio() {
    let dir = tmp();
    let target = dir.path().join("t.dat");
    let t = target.to_str().unwrap();
    let args = ["corners", t, "--size", "4m", "--runtime", "1", "--qd", "2"];
    let suite: Value = dry_run(&args);
    let text = stdout_of(&[&["suite"][..], &args, &["--dry-run", "--as-fio"]].concat());
    let job = dir.path().join("qd.fio");
    std::fs::write(&job, &text).unwrap();
    let back: Value = fio_plan(&job);
    let strip = |runs: &Value| -> Vec<(String, u64, u64, u64, Value, bool)> {
        (runs.as_array().unwrap().iter())
            .map(|r| {
                let s = &r["spec"];
                let (_, _, rw, bs, qd, jobs) = shape_of(s, "", 0);
                (
                    rw,
                    bs,
                    qd,
                    jobs,
                    s["runtime_s"].clone(),
                    s["direct"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(strip(&suite["runs"]), strip(&back["runs"]));
    assert!(suite["runs"].as_array().unwrap().len() > 2);
    // A single run, with options fio spells differently.
    let text = stdout_of(&[
        "run",
        t,
        "--rw",
        "randrw",
        "--rwmixread",
        "70",
        "--bs",
        "16k",
        "--qd",
        "4",
        "--jobs",
        "2",
        "--size",
        "8m",
        "--compress",
        "40",
        "--buffered",
        "--as-fio",
    ]);
    let text = String::from_utf8(text).unwrap();
    for line in [
        "rwmixread=70",
        "bs=16384",
        "iodepth=4",
        "numjobs=2",
        "direct=0",
        "buffer_compress_percentage=40",
        "size=8388608",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in {text}");
    }
    assert!(!target.exists(), "--as-fio runs nothing");
}

/// fio runs what `--as-fio` wrote, and `iomark report` reads fio's output into the
/// same shape as the plan.
#[test]
fn fio_runs_what_as_fio_wrote() {
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let dir = tmp();
    let t = dir.path().join("t.dat");
    let t = t.to_str().unwrap();
    let text = stdout_of(&[
        "suite",
        "qd",
        t,
        "--size",
        "2m",
        "--rw",
        "randread",
        "--qd",
        "1,4",
        "--engine",
        "io_uring",
        "--dry-run",
        "--as-fio",
    ]);
    let job = dir.path().join("qd.fio");
    std::fs::write(&job, &text).unwrap();
    let plan: Value = fio_plan(&job);
    let fio_out = std::process::Command::new("fio")
        // fio saves a verify job's state file in its working directory.
        .current_dir(job.parent().unwrap())
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .unwrap();
    assert_success(&fio_out);
    let fio_json = dir.path().join("fio.json");
    std::fs::write(&fio_json, &fio_out.stdout).unwrap();
    let theirs: Value = serde_json::from_slice(&stdout_of(&[
        "report",
        fio_json.to_str().unwrap(),
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(iomark_shape(&plan["runs"]), fio_shape(&theirs));
    assert_eq!(fio_shape(&theirs).len(), 2);
}

/// On a loop device: the I/Os `iomark fio` reports are the ones the kernel counted, and
/// fio's own run of the same file has the same shape and counts.
#[test]
fn a_job_file_on_a_loop_device_moves_what_the_kernel_counts() {
    let Some(dev) = LoopDev::new(16 << 20, true) else {
        return;
    };
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let uring = iomark::io::engine::probe_io_uring().is_ok();
    if !require("io_uring", uring) {
        return;
    }
    let dir = tmp();
    let job = dir.path().join("dev.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=${DEV}\ndirect=1\nsize=4m\nbs=4k\n\
         [w]\nrw=randwrite\nioengine=psync\n\
         [r]\nstonewall\nrw=randread\nioengine=libaio\niodepth=8\nnumjobs=2\n",
    )
    .unwrap();
    let name = dev.dev.file_name().unwrap().to_str().unwrap().to_string();
    let before = block_stat(&name);
    let res = dir.path().join("r.json");
    let out = iomark_process()
        .env("DEV", &dev.dev)
        .arg("fio")
        .arg(&job)
        .args(["--allow-write-device", "--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    let after = block_stat(&name);
    let doc = read_json(&res);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(ios(&runs[0]), (0, 1024));
    assert_eq!(ios(&runs[1]), (2048, 0));
    // /sys/block/DEV/stat: reads completed is field 0, writes completed field 4. Over the
    // whole command the reads include the device guard's probe at the preflight and
    // before each run (libblkid and iomark's own look at the first and last blocks: a few
    // dozen reads each); inside each measured window iomark's own reading of the counters
    // must match within 1%.
    let (reads, writes) = (after[0] - before[0], after[4] - before[4]);
    assert!((2048..=2048 + 160).contains(&reads), "kernel reads {reads}");
    assert!(
        (1024..=1024 + 10).contains(&writes),
        "kernel writes {writes}"
    );
    for (run, dir, want) in [(0, "write", 1024.0), (1, "read", 2048.0)] {
        let d = &runs[run]["repetitions"][0]["device"];
        let k = d[format!("{dir}_ios")].as_f64().unwrap();
        assert!(
            (k - want).abs() <= 0.01 * want,
            "{dir}: the kernel counted {k} in the window"
        );
    }
    let fio_out = std::process::Command::new("fio")
        // fio saves a verify job's state file in its working directory.
        .current_dir(job.parent().unwrap())
        .env("DEV", &dev.dev)
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .unwrap();
    assert_success(&fio_out);
    let fio_json = dir.path().join("fio.json");
    std::fs::write(&fio_json, &fio_out.stdout).unwrap();
    let report = ["report", fio_json.to_str().unwrap(), "--format", "json"];
    let theirs: Value = serde_json::from_slice(&stdout_of(&report)).unwrap();
    assert_eq!(iomark_shape(&doc["runs"]), fio_shape(&theirs));
    let fio_runs = theirs["runs"].as_array().unwrap();
    assert_eq!(
        (ios(&fio_runs[0]), ios(&fio_runs[1])),
        ((0, 1024), (2048, 0))
    );
}

/// Several job files in one command: fio puts a stonewall between files, and so does
/// iomark; a `[global]` belongs to its own file; `name=` renames a job.
#[test]
fn several_job_files_are_groups_in_order_as_in_fio() {
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let dir = tmp();
    let a = dir.path().join("a.fio");
    let b = dir.path().join("b.fio");
    std::fs::write(
        &a,
        "[global]\nioengine=null\nsize=1m\nbs=64k\n[x]\nrw=read\n[y]\nrw=write\nname=renamed\n",
    )
    .unwrap();
    std::fs::write(&b, "[z]\nioengine=null\nsize=1m\nrw=randread\n").unwrap();
    let res = dir.path().join("r.json");
    let (a_s, b_s, r_s) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        res.to_str().unwrap(),
    );
    stdout_of(&["fio", a_s, b_s, "--quiet", "-o", r_s]);
    let doc = read_json(&res);
    let fio_out = std::process::Command::new("fio")
        // fio saves a verify job's state file in its working directory.
        .current_dir(dir.path())
        .arg("--output-format=json")
        .args([&a, &b])
        .output()
        .unwrap();
    assert_success(&fio_out);
    let fio_json = dir.path().join("fio.json");
    std::fs::write(&fio_json, &fio_out.stdout).unwrap();
    let report = ["report", fio_json.to_str().unwrap(), "--format", "json"];
    let theirs: Value = serde_json::from_slice(&stdout_of(&report)).unwrap();
    let ours = iomark_shape(&doc["runs"]);
    // fio's JSON of several job files has no "global options", so its import cannot see
    // a.fio's bs=64k (it reads fio's default): the block size is checked by the I/O
    // counts instead, which are fio's own.
    let no_bs = |v: Vec<Shape>| -> Vec<Shape> {
        v.into_iter()
            .map(|s| (s.0, s.1, s.2, 0, s.4, s.5))
            .collect()
    };
    assert_eq!(no_bs(ours.clone()), no_bs(fio_shape(&theirs)));
    let (r1, r2) = (
        doc["runs"].as_array().unwrap(),
        theirs["runs"].as_array().unwrap(),
    );
    for (x, y) in r1.iter().zip(r2) {
        assert_eq!(ios(x), ios(y), "{}", x["name"]);
    }
    assert_eq!(ios(&r1[0]), (16, 0));
    let names: Vec<(&str, u64)> = ours.iter().map(|s| (s.0.as_str(), s.1)).collect();
    assert_eq!(names, [("x", 0), ("renamed", 0), ("z", 1)]);
    // b.fio's job has fio's default block size, not a.fio's [global] one.
    assert_eq!(ours[2].3, 4096);
}

/// Every preset's `--as-fio` job file reads back into the same runs (rw, bs, qd, jobs,
/// direct, data) and, where fio is installed, fio parses it.
#[test]
fn every_preset_round_trips_and_fio_parses_it() {
    let dir = tmp();
    let t = dir.path().join("p.dat");
    let t = t.to_str().unwrap();
    let fio = have("fio");
    for study in [
        "quick", "corners", "compress", "qd", "bs", "cache", "steady", "wsat",
    ] {
        let args = [study, t, "--size", "64m"];
        let plan = dry_run(&args);
        let text = stdout_of(&[&["suite"][..], &args, &["--dry-run", "--as-fio"]].concat());
        let job = dir.path().join(format!("{study}.fio"));
        std::fs::write(&job, &text).unwrap();
        let back: Value = fio_plan(&job);
        let key = |runs: &Value| -> Vec<(Value, Value, Value, Value, Value, Value)> {
            (runs.as_array().unwrap().iter())
                .map(|r| {
                    let s = &r["spec"];
                    let d = &s["data"];
                    (
                        s["rw"].clone(),
                        s["bs"].clone(),
                        s["qd"].clone(),
                        s["jobs"].clone(),
                        s["direct"].clone(),
                        serde_json::json!([d["kind"], d["compress"], d["dedup"]]),
                    )
                })
                .collect()
        };
        assert_eq!(key(&plan["runs"]), key(&back["runs"]), "suite {study}");
        if fio {
            assert_fio_parses(&job);
        }
    }
    require_tool("fio", "fio (apt-get install fio), to parse the job files");
}

/// `bssplit` and `bsrange` (issue 14, item 14) on a loop device: each I/O takes a size
/// from the mix, so the average (bytes ÷ I/Os) is the mix's mean within a few percent;
/// the kernel's counters (/sys/block/DEV/stat, kept in the run's `device`) agree with
/// iomark's own; fio's run of the same file has the same jobs and a like average.
#[test]
fn bssplit_and_bsrange_move_the_mix_the_kernel_counts() {
    let Some(dev) = LoopDev::new(32 << 20, true) else {
        return;
    };
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let dir = tmp();
    let job = dir.path().join("mix.fio");
    std::fs::write(
        &job,
        // norandommap: with its random map fio shortens an I/O to the free blocks where
        // it lands (its average 4k/50:16k/30:64k/20 write was 11 KiB, not 19.6 KiB).
        "[global]\nfilename=${DEV}\ndirect=1\nsize=16m\nio_size=128m\nioengine=psync\nnorandommap\n\
         [split]\nrw=randwrite\nbssplit=4k/50:16k/30:64k/20\n\
         [range]\nstonewall\nrw=randread\nbsrange=4k-32k,8k-8k\n",
    )
    .unwrap();
    let res = dir.path().join("r.json");
    let out = iomark_process()
        .env("DEV", &dev.dev)
        .arg("fio")
        .arg(&job)
        .args(["--allow-write-device", "--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    let doc = read_json(&res);
    let runs = doc["runs"].as_array().unwrap();
    let split_mean = 4096.0 * 0.5 + 16384.0 * 0.3 + 65536.0 * 0.2;
    let range_mean = (4096.0 + 32768.0) / 2.0;
    for (run, dir, mean) in [(0, "write", split_mean), (1, "read", range_mean)] {
        let rep = &runs[run]["repetitions"][0];
        let (ios, bytes) = (
            rep[dir]["ios"].as_f64().unwrap(),
            rep[dir]["bytes"].as_f64().unwrap(),
        );
        let avg = bytes / ios;
        assert!(
            (avg / mean - 1.0).abs() < 0.03,
            "{dir}: average {avg} against the mix's {mean}"
        );
        // io_size: the I/Os that move it on average.
        assert!(
            (bytes / (128 << 20) as f64 - 1.0).abs() < 0.05,
            "{dir}: {bytes} bytes"
        );
        let d = &rep["device"];
        let (k_ios, k_bytes) = (
            d[format!("{dir}_ios")].as_f64().unwrap(),
            d[format!("{dir}_bytes")].as_f64().unwrap(),
        );
        assert!(
            (k_bytes / bytes - 1.0).abs() < 0.01,
            "{dir}: kernel bytes {k_bytes}, iomark {bytes}"
        );
        assert!(
            (k_ios / ios - 1.0).abs() < 0.01,
            "{dir}: kernel I/Os {k_ios}, iomark {ios}"
        );
    }
    assert!(
        runs[0]["name"].to_string().contains("4k/50:16k/30:64k/20")
            || runs[0]["spec"]["bs_mix"]["split"].is_array()
    );
    let fio_out = std::process::Command::new("fio")
        .current_dir(dir.path())
        .env("DEV", &dev.dev)
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .unwrap();
    assert_success(&fio_out);
    let fio_json = dir.path().join("fio.json");
    std::fs::write(&fio_json, &fio_out.stdout).unwrap();
    let report = ["report", fio_json.to_str().unwrap(), "--format", "json"];
    let theirs: Value = serde_json::from_slice(&stdout_of(&report)).unwrap();
    // The same jobs, groups, rw, qd and jobs; fio's bs is its average transfer, iomark's
    // the mix's largest size, so the averages are compared instead.
    let no_bs = |v: Vec<Shape>| {
        v.into_iter()
            .map(|s| (s.0, s.1, s.2, s.4, s.5))
            .collect::<Vec<_>>()
    };
    assert_eq!(no_bs(iomark_shape(&doc["runs"])), no_bs(fio_shape(&theirs)));
    for (run, mean) in [(0, split_mean), (1, range_mean)] {
        let avg = theirs["runs"][run]["spec"]["bs"].as_f64().unwrap();
        assert!(
            (avg / mean - 1.0).abs() < 0.05,
            "fio's average {avg} against {mean}"
        );
    }
}

/// A size-based sequential pass with `bssplit` moves exactly the span, as fio's does: its
/// last writes take sizes that fit before the end. iomark wrapped the write that did not
/// fit to the span's start (16 MiB and 16 KiB moved, the first 64 KiB written twice and
/// the last 48 KiB never, where fio moved 16 MiB).
#[test]
fn a_sequential_bssplit_pass_moves_the_span_as_fios() {
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let dir = tmp();
    let job = "[seq]\nfilename=${DIR}/seq.dat\nrw=write\nbssplit=4k/50:64k/50\nsize=16m\nioengine=psync\n";
    let (ours, theirs) = both(dir.path(), &[("seq.fio", job)]);
    let bytes = |d: &Value| d["runs"][0]["repetitions"][0]["write"]["bytes"].as_u64();
    assert_eq!(bytes(&theirs), Some(16 << 20), "fio's bytes");
    assert_eq!(bytes(&ours), bytes(&theirs), "iomark's bytes against fio's");
}

/// `--bssplit`/`--bsrange` in `run` and a study: `--as-fio` writes fio's `bssplit` and
/// `bsrange` (with `norandommap`, see above), `iomark fio` reads them back into the same
/// mixes, and fio parses the file; on the null engine a run's average I/O is the mix's
/// mean; bad mixes are refused in one line.
#[test]
fn block_size_mixes_round_trip_and_average_their_mean() {
    let dir = tmp();
    let t = dir.path().join("t.dat");
    let t = t.to_str().unwrap();
    let args = ["qd", t, "--size", "4m", "--runtime", "1", "--qd", "1,4"];
    for mix in [
        ["--bssplit", "4k/50:16k/30:64k/20"],
        ["--bsrange", "4k-32k"],
    ] {
        let args = [&args[..], &mix].concat();
        let plan = dry_run(&args);
        let text = stdout_of(&[&["suite"][..], &args, &["--dry-run", "--as-fio"]].concat());
        let text = String::from_utf8(text).unwrap();
        let want = match mix[0] {
            "--bssplit" => "bssplit=4096/50:16384/30:65536/20",
            _ => "bsrange=4096-32768",
        };
        assert!(text.lines().any(|l| l == want), "{want} in {text}");
        assert!(text.lines().any(|l| l == "norandommap"));
        let job = dir.path().join("mix.fio");
        std::fs::write(&job, &text).unwrap();
        let back: Value = fio_plan(&job);
        let mixes = |p: &Value| -> Vec<Value> {
            (p["runs"].as_array().unwrap().iter())
                .map(|r| r["spec"]["bs_mix"].clone())
                .collect()
        };
        assert_eq!(mixes(&plan), mixes(&back));
        assert!(mixes(&plan).iter().all(|m| m.is_object()), "{plan}");
        if require_tool("fio", "fio (apt-get install fio)") {
            assert_fio_parses(&job);
        }
    }
    // The null engine: bytes ÷ I/Os is the mix's mean (200k+ draws: within 1%).
    for (mix, mean) in [
        (["--bssplit", "4k/50:16k/30:64k/20"], 20070.4),
        (["--bsrange", "4k-32k"], 18432.0),
    ] {
        let doc = run_json(
            &[
                &["run", "--engine", "null", "--size", "1g", "--io-size", "4g"][..],
                &mix[..],
            ]
            .concat(),
        );
        let r = &doc["runs"][0]["repetitions"][0]["read"];
        let avg = r["bytes"].as_f64().unwrap() / r["ios"].as_f64().unwrap();
        assert!(
            (avg / mean - 1.0).abs() < 0.01,
            "{mix:?}: average {avg}, mean {mean}"
        );
    }
    for (args, needle) in [
        (&["--bssplit", "4k/60:8k/60"][..], "add up to 120"),
        (&["--bsrange", "4k-6k"][..], "multiple of the low end"),
        (&["--bssplit", "4k/50:1000/50"][..], "not a multiple of 512"),
        (
            &["--bssplit", "4k/50:8k/50", "--bs", "8k"][..],
            "give one of them",
        ),
    ] {
        let out = iomark()
            .args([&["run", t, "--size", "1m"][..], args].concat())
            .output()
            .unwrap();
        assert_refused(&out, needle);
    }
    let out = iomark()
        .args(["suite", "bs", t, "--bsrange", "4k-8k", "--dry-run"])
        .output()
        .unwrap();
    assert_refused(&out, "sweeps --bs");
}

/// `rate_iops` and `rate` (issue 14, item 14): the measured rate is the cap (at most 3%
/// above, at most 25% below under load; a cap is what is under test, not a speed: the null engine could go 100 times
/// faster), under `iomark fio` and under fio on the same file; a mixed job's caps in the
/// mix's proportion are their sum; `--rate 0` is refused.
#[test]
fn rate_and_rate_iops_cap_what_a_job_does() {
    let _alone = crate::common::exclusive();
    let dir = tmp();
    let job = dir.path().join("rate.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null\nsize=1g\nruntime=2\ntime_based\n\
         [iops]\nrw=randread\nrate_iops=2000\n\
         [bw]\nstonewall\nrw=write\nbs=64k\nrate=,8m\niodepth=4\n\
         [mix]\nstonewall\nrw=randrw\nrwmixread=70\nrate_iops=700,300\n",
    )
    .unwrap();
    let res = dir.path().join("r.json");
    let out = iomark_process()
        .current_dir(dir.path())
        .arg("fio")
        .arg(&job)
        .args(["--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    let doc = read_json(&res);
    let rate = |rep: &Value, dir: &str, what: &str| rep[dir][what].as_f64().unwrap();
    // Never above the cap (3% for the clock's edges); below it only as far as a loaded
    // machine may starve the job's thread (the whole suite on 2 CPUs: a generous 25%).
    let near = |got: f64, cap: f64| got <= cap * 1.03 && got >= cap * 0.75;
    let check = |who: &str, reps: [&Value; 3]| {
        let [iops, bw, mix] = reps;
        let r = rate(iops, "read", "iops");
        assert!(near(r, 2000.0), "{who}: {r} IOPS, cap 2000");
        let b = rate(bw, "write", "bw_bytes");
        assert!(near(b, (8 << 20) as f64), "{who}: {b} B/s, cap 8 MiB/s");
        let m = rate(mix, "read", "iops") + rate(mix, "write", "iops");
        assert!(near(m, 1000.0), "{who}: mix {m} IOPS, cap 1000");
    };
    let runs = doc["runs"].as_array().unwrap();
    let rep = |i: usize| &runs[i]["repetitions"][0];
    check("iomark", [rep(0), rep(1), rep(2)]);
    assert_eq!(runs[2]["spec"]["rate_iops"], 1000);
    assert_eq!(runs[1]["spec"]["rate_bps"], 8 << 20);
    if require_tool("fio", "fio (apt-get install fio)") {
        let fio_out = std::process::Command::new("fio")
            .current_dir(dir.path())
            .args(["--output-format=json"])
            .arg(&job)
            .output()
            .unwrap();
        assert_success(&fio_out);
        let j: Value = serde_json::from_slice(&fio_out.stdout).unwrap();
        let jobs = j["jobs"].as_array().unwrap();
        check("fio", [&jobs[0], &jobs[1], &jobs[2]]);
    }
    for (args, needle) in [
        (&["--rate", "0"][..], "--rate 0"),
        (&["--rate-iops", "0"][..], "--rate-iops 0"),
        (&["--rate-iops", "lots"][..], "--rate-iops"),
    ] {
        let out = iomark()
            .args([&["run", "--engine", "null", "--size", "1m"][..], args].concat())
            .output()
            .unwrap();
        assert_refused(&out, needle);
    }
    // In `run` and a study too: the cap is in the run's name.
    let doc = run_json(&[
        "run",
        "--engine",
        "null",
        "--size",
        "1g",
        "--runtime",
        "2s",
        "--rate-iops",
        "1500",
    ]);
    let r = &doc["runs"][0];
    let iops = r["repetitions"][0]["read"]["iops"].as_f64().unwrap();
    assert!(near(iops, 1500.0), "run: {iops} IOPS, cap 1500");
    assert!(
        r["name"].to_string().contains("rate 1500 IOPS"),
        "{}",
        r["name"]
    );
    let plan = dry_run(&["qd", "--engine", "null", "--size", "1g", "--rate", "4m"]);
    let runs = plan["runs"].as_array().unwrap();
    assert!(runs.iter().all(|r| r["spec"]["rate_bps"] == 4 << 20));
}

/// `thinktime` and `thinktime_blocks` (issue 14, item 14): after every N I/Os complete
/// the job pauses, so IOPS × thinktime ≤ N (theory: with the null engine the I/Os take
/// no time, and a sleep's overshoot only lowers it); at most N I/Os are in flight, so a
/// deeper `iodepth` changes nothing. fio's run of the same file obeys the same bound.
#[test]
fn thinktime_pauses_after_each_batch() {
    let _alone = crate::common::exclusive();
    let dir = tmp();
    let job = dir.path().join("think.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null\nsize=1g\nruntime=2\ntime_based\n\
         [one]\nrw=randread\nthinktime=1000\n\
         [four]\nstonewall\nrw=randread\nthinktime=1ms\nthinktime_blocks=4\niodepth=8\n",
    )
    .unwrap();
    let res = dir.path().join("r.json");
    let out = iomark_process()
        .current_dir(dir.path())
        .arg("fio")
        .arg(&job)
        .args(["--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    let doc = read_json(&res);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[0]["spec"]["thinktime_us"], 1000);
    assert_eq!(runs[1]["spec"]["thinktime_blocks"], 4);
    let bound = |who: &str, iops: [f64; 2]| {
        for (got, n) in iops.into_iter().zip([1.0, 4.0]) {
            // At most N per ms; at least a tenth of it (a 10 ms sleep overshoot).
            assert!(
                got <= n * 1000.0 * 1.01,
                "{who}: {got} IOPS, bound {}",
                n * 1000.0
            );
            assert!(
                got >= n * 100.0,
                "{who}: {got} IOPS, far below {}",
                n * 1000.0
            );
        }
    };
    let iops = |r: &Value| r["repetitions"][0]["read"]["iops"].as_f64().unwrap();
    bound("iomark", [iops(&runs[0]), iops(&runs[1])]);
    if require_tool("fio", "fio (apt-get install fio)") {
        let fio_out = std::process::Command::new("fio")
            .current_dir(dir.path())
            .args(["--output-format=json"])
            .arg(&job)
            .output()
            .unwrap();
        assert_success(&fio_out);
        let j: Value = serde_json::from_slice(&fio_out.stdout).unwrap();
        let f = |i: usize| j["jobs"][i]["read"]["iops"].as_f64().unwrap();
        bound("fio", [f(0), f(1)]);
    }
    let out = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "1m",
            "--thinktime",
            "100",
        ])
        .output()
        .unwrap();
    assert_refused(&out, "give a unit");
}

/// `startdelay` (issue 14, item 14), as fio's: the job starts that long after the others
/// could, and the delay is not in its runtime. Measured: the command takes the delay
/// longer, and the measured window is still the runtime, under iomark and under fio.
#[test]
fn startdelay_delays_the_job_and_is_not_measured() {
    let _alone = crate::common::exclusive();
    let dir = tmp();
    let job = dir.path().join("delay.fio");
    std::fs::write(
        &job,
        "[late]\nioengine=null\nsize=1g\nrw=randread\nruntime=1\ntime_based\nstartdelay=1500ms\n",
    )
    .unwrap();
    let res = dir.path().join("r.json");
    let t = std::time::Instant::now();
    let out = iomark_process()
        .current_dir(dir.path())
        .arg("fio")
        .arg(&job)
        .args(["--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    let wall = t.elapsed().as_secs_f64();
    assert_success(&out);
    assert!(
        wall >= 2.5,
        "the command took {wall} s: 1.5 s of delay + 1 s"
    );
    let doc = read_json(&res);
    let run = &doc["runs"][0];
    assert_eq!(run["spec"]["startdelay_s"], 1.5);
    let rep = &run["repetitions"][0];
    let elapsed = rep["elapsed_s"].as_f64().unwrap();
    assert!(
        (elapsed - 1.0).abs() < 0.05,
        "measured {elapsed} s, runtime 1 s"
    );
    let (ios, iops) = (
        rep["read"]["ios"].as_f64().unwrap(),
        rep["read"]["iops"].as_f64().unwrap(),
    );
    assert!(
        (ios / elapsed / iops - 1.0).abs() < 0.01,
        "{ios} I/Os in {elapsed} s at {iops}"
    );
    if require_tool("fio", "fio (apt-get install fio)") {
        let t = std::time::Instant::now();
        let fio_out = std::process::Command::new("fio")
            .current_dir(dir.path())
            .args(["--output-format=json"])
            .arg(&job)
            .output()
            .unwrap();
        assert_success(&fio_out);
        assert!(t.elapsed().as_secs_f64() >= 2.5, "fio waits too");
        let j: Value = serde_json::from_slice(&fio_out.stdout).unwrap();
        let rt = j["jobs"][0]["job_runtime"].as_f64().unwrap();
        assert!((rt - 1000.0).abs() < 50.0, "fio's runtime {rt} ms");
    }
    let out = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "1m",
            "--startdelay",
            "soon",
        ])
        .output()
        .unwrap();
    assert_refused(&out, "--startdelay");
}

/// `random_distribution` (issue 14, item 14): zipf, pareto and normal run under both
/// tools with the same structure, iomark records the distribution, and `--as-fio` writes
/// it back; a sequential job's distribution is ignored with a note, as fio ignores it.
/// (Zones and centers: `fio_options.rs`.) (The shares of the hottest blocks are checked against theory in
/// `workload::dist`'s unit tests.)
#[test]
fn random_distributions_run_under_both_tools() {
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let text = "[global]\nioengine=null\nsize=64m\nruntime=1\ntime_based\n\
        [zipf]\nrw=randread\nrandom_distribution=zipf:1.2\n\
        [pareto]\nstonewall\nrw=randwrite\nrandom_distribution=pareto:0.8\n\
        [normal]\nstonewall\nrw=randrw\nrandom_distribution=normal:5\n\
        [seq]\nstonewall\nrw=read\nrandom_distribution=zipf:1.1\n";
    let doc = same_as_fio(&[("dist.fio", text)], &[]);
    let runs = doc["runs"].as_array().unwrap();
    let d = |i: usize| runs[i]["spec"]["random_distribution"].clone();
    assert_eq!(d(0), serde_json::json!({"kind": "zipf", "param": 1.2}));
    assert_eq!(d(1), serde_json::json!({"kind": "pareto", "param": 0.8}));
    assert_eq!(d(2), serde_json::json!({"kind": "normal", "param": 5.0}));
    assert!(d(3).is_null());
    assert!(runs[3].to_string().contains("fio ignores it for rw=read"));
    assert!(
        runs[0]["name"].to_string().contains("zipf:1.2") || runs[0]["spec"]["label"].is_string()
    );
    let dir = tmp();
    let t = dir.path().join("t.dat");
    let out = stdout_of(&[
        "run",
        t.to_str().unwrap(),
        "--rw",
        "randread",
        "--size",
        "1m",
        "--random-distribution",
        "pareto:0.9",
        "--as-fio",
    ]);
    assert!(
        String::from_utf8_lossy(&out)
            .lines()
            .any(|l| l == "random_distribution=pareto:0.9")
    );
    for (args, needle) in [
        (
            &["--rw", "read", "--random-distribution", "zipf:1.2"][..],
            "sequential",
        ),
        (
            &["--rw", "randread", "--random-distribution", "zipf:0"][..],
            "θ must be",
        ),
        (
            &["--rw", "randread", "--random-distribution", "zoned:50/5"][..],
            "add up to 50%",
        ),
    ] {
        let out = iomark()
            .args([&["run", t.to_str().unwrap(), "--size", "1m"][..], args].concat())
            .output()
            .unwrap();
        assert_refused(&out, needle);
    }
}

/// `rw`'s `:N` suffix (issue 14, item 14), fio's meaning: `randread:N` seeks every N I/Os
/// (the others follow on), `write:SIZE` leaves SIZE between sequential I/Os. Both tools
/// run the file with the same structure and I/O counts; the offsets themselves are
/// checked in `workload::rng`'s unit test.
#[test]
fn rw_suffixes_seek_every_n_and_leave_holes() {
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let text = "[global]\ndirectory=${DIR}\nsize=1m\nioengine=psync\n\
        [runs]\nrw=randread:8\nio_size=256k\n\
        [holes]\nstonewall\nrw=write:4k\nio_size=256k\n";
    let doc = same_as_fio(&[("sfx.fio", text)], &["runs", "holes"]);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[0]["spec"]["random_run"], 8);
    assert_eq!(runs[1]["spec"]["hole"], 4096);
    assert_eq!(ios(&runs[0]), (64, 0));
    assert_eq!(ios(&runs[1]), (0, 64));
    let dir = tmp();
    let t = dir.path().join("t.dat");
    let out = stdout_of(&[
        "run",
        t.to_str().unwrap(),
        "--rw",
        "randread",
        "--size",
        "1m",
        "--random-run",
        "8",
        "--as-fio",
    ]);
    assert!(
        String::from_utf8_lossy(&out)
            .lines()
            .any(|l| l == "rw=randread:8")
    );
    for (args, needle) in [
        (
            &["--rw", "read", "--random-run", "8"][..],
            "--rw read is sequential",
        ),
        (&["--rw", "randread", "--hole", "4k"][..], "sequential I/Os"),
    ] {
        let out = iomark()
            .args([&["run", t.to_str().unwrap(), "--size", "1m"][..], args].concat())
            .output()
            .unwrap();
        assert_refused(&out, needle);
    }
}

/// fio's `ramp_time` in a job without `time_based` is part of `size`: fio moves `size` in
/// all and resets its stats when the ramp ends (fio 3.33, 4 MiB of 4 KiB reads at
/// `rate_iops=1000` with `ramp_time=500ms` on a loop device: 1024 reads at the device,
/// 523 measured). iomark refused such a job (its ramp came on top of the size: the
/// probe's j11, 26,384 device reads where fio did 16,384); session 14, item 8: it now
/// runs it as fio does, the ramp's I/Os counted towards the size (`spec.ramp_in_size`).
#[test]
fn ramp_time_in_a_size_based_job_is_part_of_size_as_in_fio() {
    let Some(dev) = LoopDev::new(16 << 20, true) else {
        return;
    };
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let dir = tmp();
    let job = dir.path().join("ramp.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=${DEV}\ndirect=1\nbs=4k\nsize=4m\nrate_iops=1000\nramp_time=500ms\n\
         [r]\nrw=randread\n[s]\nstonewall\nrw=read\n",
    )
    .unwrap();
    let name = dev.dev.file_name().unwrap().to_str().unwrap().to_string();
    let before = block_stat(&name);
    let fio_out = std::process::Command::new("fio")
        .env("DEV", &dev.dev)
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .unwrap();
    assert_success(&fio_out);
    let fio_reads = block_stat(&name)[0] - before[0];
    let fio: Value = serde_json::from_slice(&fio_out.stdout).unwrap();
    let fio_ios: Vec<u64> = (fio["jobs"].as_array().unwrap().iter())
        .map(|j| j["read"]["total_ios"].as_u64().unwrap())
        .collect();
    assert_eq!(fio_reads, 2048, "fio: size in all, ramp included");
    let res = dir.path().join("r.json");
    let before = block_stat(&name);
    let out = iomark_process()
        .env("DEV", &dev.dev)
        .arg("fio")
        .arg(&job)
        .args(["--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    let reads = block_stat(&name)[0] - before[0];
    assert!((2048..=2048 + 64).contains(&reads), "iomark: {reads} reads");
    let doc = read_json(&res);
    for (run, theirs) in doc["runs"].as_array().unwrap().iter().zip(&fio_ios) {
        let ours = run["repetitions"][0]["read"]["ios"].as_u64().unwrap();
        // About 1024 less the ramp's 500 at 1000 IOPS under both.
        assert!(
            ours.abs_diff(*theirs) <= 40 && (400..=650).contains(&ours),
            "{}: iomark measured {ours}, fio {theirs}",
            run["name"]
        );
        assert_eq!(run["spec"]["ramp_in_size"], true);
    }
}

/// A job file's refusals name its lines and keys, not iomark's flags: `bs=4KiB` says fio
/// reads it as 4000 bytes, and the fix is `direct=0`, not `--buffered`. An offset at the
/// end of a device is refused before anything is measured (the probe's j24: the first
/// job was measured, then `--offset 510 MiB plus --size 4 MiB` refused), and under
/// `--dry-run` too (a span that only runs past the end is run over what there is, as
/// fio runs it: `a_span_past_a_devices_end_runs_over_what_there_is_as_under_fio`).
#[test]
fn job_refusals_name_the_job_file_and_come_before_measuring() {
    let dir = tmp();
    let job = dir.path().join("k.fio");
    let t = dir.path().join("k.dat");
    let text = format!(
        "[m]\nfilename={}\ndirect=1\nrw=read\nbs=4KiB\nsize=1m\n",
        t.display()
    );
    std::fs::write(&job, text).unwrap();
    let out = iomark().arg("fio").arg(&job).output().unwrap();
    assert_refused(&out, ":5 [m]: bs=4KiB (4000 bytes");
    assert_refused(&out, "or direct=0");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("--"));
    let Some(dev) = LoopDev::new(64 << 20, true) else {
        return;
    };
    let d = dev.path().display();
    let text = format!(
        "[h]\nfilename={d}\ndirect=1\nrw=read\nbs=4k\nsize=4m\n\
         [s]\nstonewall\nfilename={d}\ndirect=1\nrw=read\nbs=4k\nsize=4m\noffset=64m\n"
    );
    std::fs::write(&job, text).unwrap();
    let o = dir.path().join("k.json");
    let before = dev.stat();
    for args in [&["--dry-run"][..], &["-o", o.to_str().unwrap()]] {
        let out = iomark().arg("fio").arg(&job).args(args).output().unwrap();
        assert_refused(
            &out,
            &format!("k.fio:14 [s]: offset=64m is at or past the end of {d} (64 MiB)"),
        );
        assert!(!String::from_utf8_lossy(&out.stderr).contains("--"));
    }
    assert!(!o.exists(), "nothing measured, nothing saved");
    assert_eq!(dev.stat()[0], before[0], "no read reached the device");
}

/// Session 14, item 9: a job whose `size` (or `offset` plus `size`) runs past the end of a
/// block device was refused, where fio runs it over what there is (fio 3.33 on a 16 MiB
/// loop device: `size=32m` reads 16 MiB, `offset=12m` with `size=8m` 4 MiB, silently).
/// iomark now runs the same bytes as fio, the kernel counts them, and the run says so.
#[test]
fn a_span_past_a_devices_end_runs_over_what_there_is_as_under_fio() {
    let Some(dev) = LoopDev::new(16 << 20, true) else {
        return;
    };
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let dir = tmp();
    let job = dir.path().join("p.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=${DEV}\ndirect=1\nrw=read\nbs=4k\n\
         [a]\nsize=32m\n[b]\nstonewall\noffset=12m\nsize=8m\n",
    )
    .unwrap();
    let fio_out = std::process::Command::new("fio")
        .env("DEV", &dev.dev)
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .unwrap();
    assert_success(&fio_out);
    let fio: Value = serde_json::from_slice(&fio_out.stdout).unwrap();
    let fio_bytes: Vec<u64> = (fio["jobs"].as_array().unwrap().iter())
        .map(|j| j["read"]["io_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(fio_bytes, [16 << 20, 4 << 20], "fio's clamp");
    let name = dev.dev.file_name().unwrap().to_str().unwrap().to_string();
    let res = dir.path().join("r.json");
    let before = block_stat(&name);
    let out = iomark_process()
        .env("DEV", &dev.dev)
        .arg("fio")
        .arg(&job)
        .args(["--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    let after = block_stat(&name);
    let doc = read_json(&res);
    let runs = doc["runs"].as_array().unwrap();
    let bytes: Vec<u64> = (runs.iter())
        .map(|r| r["repetitions"][0]["read"]["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(bytes, fio_bytes, "iomark moves what fio moves");
    // Sectors read (field 2): the 20 MiB, plus the guard's few probes.
    let sectors = after[2] - before[2];
    assert!(
        (40960..=40960 + 512).contains(&sectors),
        "kernel: {sectors} sectors read"
    );
    let d = dev.dev.display();
    let p = job.display();
    for (run, said) in [
        (
            0,
            format!(
                "size=32m ({p}:7) runs past the end of the device {d} (16 MiB): as fio does, the job runs over the 16 MiB there are"
            ),
        ),
        (
            1,
            format!(
                "size=8m ({p}:11) from offset=12m ({p}:10) runs past the end of the device {d} (16 MiB): as fio does, the job runs over the 4 MiB there are"
            ),
        ),
    ] {
        let warnings = runs[run]["warnings"].to_string();
        assert!(warnings.contains(&said), "{said}\n{warnings}");
    }
}

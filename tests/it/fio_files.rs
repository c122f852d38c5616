//! Several files per job (issue 14, item 14: `filename` lists, `directory` with
//! `nrfiles`): fio's job files run under `iomark fio` and under fio make the same files
//! with the same sizes and move the same I/Os to each file, counted by the kernel per
//! loop device; `iomark run A B --file-service` has one worker serve every target, each
//! file's I/Os as the service orders them (kernel counters per device), and each
//! target's own figures equal to its device's counters.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// Every regular file under `dir`: name → (size, allocated 512-byte blocks).
fn files_in(dir: &Path) -> BTreeMap<String, (u64, u64)> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let md = e.metadata().unwrap();
        if md.is_file() {
            let name = e.file_name().to_string_lossy().into_owned();
            out.insert(name, (md.len(), md.blocks()));
        }
    }
    out
}

/// Runs fio on `job` (in its folder, with `env`); its JSON.
fn fio(job: &Path, env: &[(&str, &Path)]) -> Value {
    let mut cmd = Command::new("fio");
    cmd.current_dir(job.parent().unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.arg("--output-format=json").arg(job).output().unwrap();
    assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `iomark fio` on `job` with `args` (with `env`); its results document.
fn iomark_fio(job: &Path, env: &[(&str, &Path)], args: &[&str]) -> Value {
    let res = job.with_extension("json");
    let mut cmd = iomark_process();
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .arg("fio")
        .arg(job)
        .args(args)
        .args(["--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    read_json(&res)
}

/// Each target's (path, writes, bytes written) in a run's first repetition.
fn per_target(run: &Value) -> Vec<(String, u64, u64)> {
    (run["repetitions"][0]["targets"].as_array().unwrap().iter())
        .map(|t| {
            (
                t["path"].as_str().unwrap().to_string(),
                t["write"]["ios"].as_u64().unwrap(),
                t["write"]["bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The writes each device completed while `f` ran (/sys/block/DEV/stat field 4), and
/// the sectors written (field 6).
///
/// The block layer may merge two adjacent writes in flight together into one: the
/// sectors are exact, the writes within 1% (`near`).
fn writes_during(devs: &[&LoopDev], f: impl FnOnce()) -> Vec<(u64, u64)> {
    let before: Vec<[u64; 4]> = devs.iter().map(|d| d.stat()).collect();
    f();
    (devs.iter().zip(before))
        .map(|(d, b)| {
            let a = d.stat();
            (a[2] - b[2], a[3] - b[3])
        })
        .collect()
}

/// Whether `got` writes are `want` within 1% (merged neighbours, see `writes_during`).
fn near(got: u64, want: u64) -> bool {
    got <= want && got * 100 >= want * 99
}

/// `nrfiles` (each copy its own files, `JOB.COPY.FILE`, `size` split between them, also
/// when it does not divide by the block size) and a `filename` list with `filesize`:
/// the same files with the same sizes and blocks under both tools, the same I/Os per
/// job, and iomark's per-file figures each file's share.
#[test]
fn nrfiles_and_filename_lists_make_the_files_fio_makes() {
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let dir = tmp();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let job = dir.path().join("files.fio");
    std::fs::write(
        &job,
        "[global]\ndirectory=${D}\nbs=4k\nioengine=psync\n\
         [n3]\nrw=write\nnrfiles=3\nsize=3m\nnumjobs=2\n\
         [odd]\nstonewall\nrw=write\nbs=64k\nnrfiles=3\nsize=1m\n\
         [ab]\nstonewall\nrw=randwrite\nfilename=a:b\nfilesize=1m\nsize=1m\n",
    )
    .unwrap();
    let env = [("D", d.as_path())];
    let theirs = fio(&job, &env);
    let fio_files = files_in(&d);
    for f in std::fs::read_dir(&d).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    let ours = iomark_fio(&job, &env, &["--keep"]);
    let our_files = files_in(&d);
    assert_eq!(our_files.len(), 11, "{our_files:?}");
    assert_eq!(
        our_files, fio_files,
        "names, sizes and blocks of the files made"
    );
    assert_eq!(our_files["odd.0.2"].0, 349525, "1m split in 3, as fio");
    // The I/Os of each job, against fio's (copies added up).
    let mut fio_writes: BTreeMap<String, u64> = BTreeMap::new();
    for j in theirs["jobs"].as_array().unwrap() {
        let n = j["jobname"].as_str().unwrap().to_string();
        *fio_writes.entry(n).or_default() += j["write"]["total_ios"].as_u64().unwrap();
    }
    let runs = ours["runs"].as_array().unwrap();
    for (run, name, per_file) in [(0, "n3", 256), (1, "odd", 5), (2, "ab", 128)] {
        let r = &runs[run];
        let total = r["repetitions"][0]["write"]["ios"].as_u64().unwrap();
        assert_eq!(
            total, fio_writes[name],
            "{name}: iomark's writes against fio's"
        );
        let t = per_target(r);
        assert!(
            t.iter().all(|(_, ios, _)| *ios == per_file),
            "{name}: {t:?}"
        );
        assert_eq!(t.iter().map(|x| x.1).sum::<u64>(), total);
    }
    assert_eq!(
        per_target(&runs[0])[3].0,
        d.join("n3.1.0").display().to_string()
    );
    assert_eq!(runs[2]["spec"]["file_service"]["kind"], "roundrobin");
    // The files share one filesystem: its device's counters are counted once.
    let dev = &runs[0]["repetitions"][0]["device"];
    assert!(
        dev.is_null() || !dev["name"].as_str().unwrap().contains('+'),
        "{dev}"
    );
}

/// Per file, on a loop device each: a `filename` list of two devices and `nrfiles=2`
/// with `numjobs=2` (fio's names `j.COPY.FILE` as links to four devices) move the same
/// writes to every device under both tools — roundrobin splits them evenly — and
/// iomark's per-target figures are the kernel's counts.
#[test]
fn each_file_gets_the_writes_fio_gives_it() {
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let devs: Vec<LoopDev> = (0..4)
        .filter_map(|_| LoopDev::new(16 << 20, true))
        .collect();
    if devs.len() < 4 {
        return;
    }
    let refs: Vec<&LoopDev> = devs.iter().collect();
    let dir = tmp();
    let links = dir.path().join("links");
    std::fs::create_dir(&links).unwrap();
    for (i, name) in ["j.0.0", "j.0.1", "j.1.0", "j.1.1"].iter().enumerate() {
        std::os::unix::fs::symlink(&devs[i].dev, links.join(name)).unwrap();
    }
    let list = dir.path().join("list.fio");
    std::fs::write(
        &list,
        "[l]\nfilename=${D0}:${D1}\nrw=randwrite\nbs=4k\nsize=8m\ndirect=1\nioengine=psync\n",
    )
    .unwrap();
    let nr = dir.path().join("nr.fio");
    std::fs::write(
        &nr,
        "[j]\ndirectory=${L}\nnrfiles=2\nnumjobs=2\nrw=randwrite\nbs=4k\nsize=4m\n\
         direct=1\nioengine=libaio\niodepth=4\n",
    )
    .unwrap();
    let env = [
        ("D0", devs[0].dev.as_path()),
        ("D1", devs[1].dev.as_path()),
        ("L", links.as_path()),
    ];
    for (job, used, want) in [(&list, 2, 1024u64), (&nr, 4, 512)] {
        let theirs = writes_during(&refs[..used], || {
            fio(job, &env);
        });
        let mut doc = Value::Null;
        let ours = writes_during(&refs[..used], || {
            doc = iomark_fio(job, &env, &["--allow-write-device"]);
        });
        for (i, ((ti, ts), (oi, os))) in theirs.iter().zip(&ours).enumerate() {
            let what = format!("device {i} of {job:?}: fio {ti} {ts}, iomark {oi} {os}");
            assert!(near(*ti, want) && *ts == want * 8, "{what}");
            assert!(near(*oi, want) && *os == want * 8, "{what}");
        }
        let t = per_target(&doc["runs"][0]);
        assert_eq!(t.len(), used);
        assert!(
            t.iter()
                .all(|(_, ios, b)| (*ios, *b) == (want, want * 4096)),
            "{t:?}"
        );
    }
}

/// `iomark run A B --file-service KIND --jobs 1`: one worker moves `--io-size` over both
/// devices (without the option each target's own worker moves it all), in the order the
/// service gives: roundrobin evenly, sequential the first device's span first, random
/// in runs of N. The kernel's counters per device against iomark's per-target figures,
/// on psync, libaio and io_uring.
#[test]
fn one_worker_serves_every_target_in_the_services_order() {
    let (Some(a), Some(b)) = (LoopDev::new(16 << 20, true), LoopDev::new(16 << 20, true)) else {
        return;
    };
    let uring = iomark::io::engine::probe_io_uring().is_ok();
    let mut engines = vec!["psync", "libaio"];
    if require("io_uring", uring) {
        engines.push("io_uring");
    }
    let dir = tmp();
    let res = dir.path().join("r.json");
    let (pa, pb) = (a.dev.to_str().unwrap(), b.dev.to_str().unwrap());
    let run = |extra: &[&str]| -> (Vec<(u64, u64)>, Value) {
        let mut doc = Value::Null;
        // Each run a new document (-o does not replace one that holds measurements).
        let _ = std::fs::remove_file(&res);
        let w = writes_during(&[&a, &b], || {
            let out = iomark_process()
                .args(["run", pa, pb, "--bs", "4k", "--size", "8m"])
                .args(if extra.contains(&"--jobs") {
                    &[][..]
                } else {
                    &["--jobs", "1"][..]
                })
                .args(["--allow-write-device", "--quiet", "-o"])
                .arg(&res)
                .args(extra)
                .output()
                .unwrap();
            assert_success(&out);
            doc = read_json(&res);
        });
        (w, doc)
    };
    for engine in &engines {
        let qd = if *engine == "psync" { "1" } else { "4" };
        let common = ["--engine", engine, "--qd", qd, "--io-size", "4m"];
        let (w, doc) = run(&[
            &common[..],
            &["--rw", "randwrite", "--file-service", "roundrobin"],
        ]
        .concat());
        let split = w
            .iter()
            .all(|(ios, sectors)| near(*ios, 512) && *sectors == 4096);
        assert!(split, "{engine}: roundrobin {w:?}");
        let t = per_target(&doc["runs"][0]);
        assert_eq!((t[0].1, t[1].1), (512, 512), "{engine}: {t:?}");
        assert_eq!(doc["runs"][0]["repetitions"][0]["write"]["ios"], 1024);
        // Without the option: a worker per target, each moving all of --io-size.
        let (w, _) = run(&[&common[..], &["--rw", "randwrite"]].concat());
        let each = w
            .iter()
            .all(|(ios, sectors)| near(*ios, 1024) && *sectors == 8192);
        assert!(each, "{engine}: a worker per target {w:?}");
    }
    // Sequential: all of the first device's 8 MiB span, then the second's first 4 MiB.
    let (w, doc) = run(&[
        "--rw",
        "write",
        "--io-size",
        "12m",
        "--file-service",
        "sequential",
        "--engine",
        "psync",
    ]);
    assert_eq!(w, vec![(2048, 16384), (1024, 8192)], "sequential");
    let t = per_target(&doc["runs"][0]);
    assert_eq!((t[0].1, t[1].1), (2048, 1024));
    // Two jobs moving 2 MiB each in sequence: both stay in the first device's span,
    // unless each has a device of its own (--split-targets).
    let seq = [
        "--rw",
        "write",
        "--io-size",
        "2m",
        "--file-service",
        "sequential",
    ];
    let (w, _) = run(&[&seq[..], &["--jobs", "2"]].concat());
    assert_eq!(w, vec![(1024, 8192), (0, 0)], "two jobs in sequence");
    let (w, doc) = run(&[&seq[..], &["--jobs", "2", "--split-targets"]].concat());
    assert_eq!(w, vec![(512, 4096), (512, 4096)], "a device per job");
    let t = per_target(&doc["runs"][0]);
    assert_eq!((t[0].1, t[1].1), (512, 512));
    // Random, switching every 8 I/Os: both devices, in whole runs of 8.
    let (w, doc) = run(&[
        "--rw",
        "randwrite",
        "--io-size",
        "4m",
        "--file-service",
        "random:8",
        "--engine",
        "psync",
    ]);
    assert_eq!(w[0].0 + w[1].0, 1024);
    assert!(
        w.iter().all(|(ios, _)| *ios > 100 && ios % 8 == 0),
        "random:8 {w:?}"
    );
    let t = per_target(&doc["runs"][0]);
    assert_eq!((t[0].1, t[1].1), (w[0].0, w[1].0));
}

/// `numjobs=N` without `filename` (one directory, `nrfiles=1`): fio gives each copy its
/// own file (`a.0.0`, `a.1.0`); iomark's copies shared `a.0.0`, so a buffered copy read
/// what the other had cached (37.6k IOPS "50% from cache" where fio read everything from
/// the device; 20.5k from the device under iomark now, 20.6k under fio, on the root
/// disk). A job gives each copy its own file as fio names it, alone in its group and
/// (session 14, item 7: they shared one there, with a note) in a group measured
/// together, whose runs now serve several files each as a run alone does. With
/// `nrfiles=2` each copy has its own files.
#[test]
fn numjobs_copies_have_their_own_files_as_under_fio() {
    let dir = tmp();
    let job = dir.path().join("n.fio");
    let text = format!(
        "[global]\ndirectory={}\nsize=4m\nioengine=psync\nbs=4k\n[a]\nrw=randread\nnumjobs=2\n",
        dir.path().display()
    );
    std::fs::write(&job, &text).unwrap();
    let doc = iomark_fio_json(&job, dir.path(), &[]);
    let run = &doc["runs"][0];
    let names = |run: &serde_json::Value| -> Vec<String> {
        (run["spec"]["targets"].as_array().unwrap().iter())
            .map(|t| t.as_str().unwrap().rsplit('/').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(run), ["a.0.0", "a.1.0"]);
    assert!(!run.to_string().contains("share one file"), "{run}");
    // Each copy read its own file: 1024 blocks of 4 KiB each.
    let reads: Vec<u64> = (run["repetitions"][0]["targets"].as_array().unwrap().iter())
        .map(|t| t["read"]["ios"].as_u64().unwrap())
        .collect();
    assert_eq!(reads, [1024, 1024], "{run}");
    // fio makes the same files for the same job.
    if require_tool("fio", "fio (apt-get install fio)") {
        let fio_dir = tmp();
        let fio_job = fio_dir.path().join("n.fio");
        std::fs::write(
            &fio_job,
            text.replace(
                &dir.path().display().to_string(),
                &fio_dir.path().display().to_string(),
            ),
        )
        .unwrap();
        let out = std::process::Command::new("fio")
            .arg(&fio_job)
            .arg("--output-format=json")
            .output()
            .unwrap();
        assert_success(&out);
        let mut made: Vec<String> = std::fs::read_dir(fio_dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("a."))
            .collect();
        made.sort();
        assert_eq!(made, names(run));
    }

    // With another job in its group, measured together: each copy its own file still,
    // each read whole, and b's own file beside them.
    std::fs::write(&job, format!("{text}[b]\nrw=randread\n")).unwrap();
    let doc = iomark_fio_json(&job, dir.path(), &[]);
    let run = &doc["runs"][0];
    assert_eq!(names(run), ["a.0.0", "a.1.0"]);
    assert!(!run.to_string().contains("share one file"), "{run}");
    let reads: Vec<u64> = (run["repetitions"][0]["targets"].as_array().unwrap().iter())
        .map(|t| t["read"]["ios"].as_u64().unwrap())
        .collect();
    assert_eq!(reads, [1024, 1024], "{run}");
    assert_eq!(run["repetitions"][0]["read"]["ios"], 2048);
    let b = &doc["runs"][1];
    assert_eq!(b["repetitions"][0]["read"]["ios"], 1024, "{b}");
    for r in [run, b] {
        assert_eq!(
            r["group"]["runs"],
            serde_json::json!(["a", "b"]),
            "measured together"
        );
        assert!(!r.to_string().contains("one after another"), "{r}");
    }
    // A group iomark runs one job after another (a verify job in it): their own files.
    let verify = "[b]\nrw=write\nverify=crc32c\nsize=1m\n";
    std::fs::write(&job, format!("{text}{verify}")).unwrap();
    let doc = iomark_fio_json(&job, dir.path(), &[]);
    assert_eq!(names(&doc["runs"][0]), ["a.0.0", "a.1.0"]);
    assert!(!doc["runs"][0].to_string().contains("share one file"));

    std::fs::write(&job, text.replace("numjobs=2", "numjobs=2\nnrfiles=2")).unwrap();
    let doc = iomark_fio_json(&job, dir.path(), &[]);
    let run = &doc["runs"][0];
    assert_eq!(names(run), ["a.0.0", "a.0.1", "a.1.0", "a.1.1"]);
    assert!(!run.to_string().contains("share one file"));
}

/// A job file's run gave its advice in iomark's flags ("to measure the device use --size
/// 48g (2x memory) or more, or --direct"), options a job file cannot hold: it names the
/// job file's keys now (`size=48g`, `direct=1`).
#[test]
fn a_job_files_advice_names_its_keys() {
    let dir = tmp();
    let job = dir.path().join("b.fio");
    let text = format!(
        "[global]\ndirectory={}\nsize=4m\nioengine=psync\nbs=4k\n[a]\nrw=randread\n",
        dir.path().display()
    );
    std::fs::write(&job, text).unwrap();
    let doc = iomark_fio_json(&job, dir.path(), &[]);
    let warnings: Vec<&str> = (doc["runs"][0]["warnings"].as_array().unwrap().iter())
        .map(|w| w.as_str().unwrap())
        .collect();
    let advice = (warnings.iter())
        .find(|w| w.contains("to measure the device use"))
        .unwrap_or_else(|| panic!("no page-cache advice in {warnings:?}"));
    assert!(
        advice.contains("size=") && advice.ends_with("or direct=1"),
        "{advice}"
    );
    assert!(warnings.iter().all(|w| !w.contains("--")), "{warnings:?}");
}

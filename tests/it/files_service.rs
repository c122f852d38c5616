//! One job serving several files (`--file-service`, fio's `filename=a:b` and `nrfiles`),
//! against the kernel: `--fsync N` flushes the file the service gives the I/O after
//! every N writes (fio's way: its sync takes a turn of the service), `--end-fsync`
//! every file once, trims go to the file the service picks, and `--verify` reads every
//! file's blocks back and names the file that lost a write. Each loop device's own
//! counters (/sys/block/DEV/stat: writes, discards, flushes) against iomark's per-target
//! figures, and against fio's on the same job where fio is installed.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// A device's (writes, discards, flushes) (/sys/block/DEV/stat fields 5, 12 and 16);
/// the kernel counts a flush as a write too: the writes here are the data writes.
fn counters(d: &LoopDev) -> [u64; 3] {
    let f = block_stat(&d.name());
    [f[4] - f[15], f[11], f[15]]
}

/// Each device's counters moved while `f` ran.
fn during(devs: &[&LoopDev], f: impl FnOnce()) -> Vec<[u64; 3]> {
    let before: Vec<[u64; 3]> = devs.iter().map(|d| counters(d)).collect();
    f();
    (devs.iter().zip(before))
        .map(|(d, b)| {
            let a = counters(d);
            [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
        })
        .collect()
}

/// `iomark run A B ARGS --allow-write-device` (with `--jobs 1` and `--file-service
/// roundrobin` unless ARGS say otherwise): its exit code, stderr and results document.
fn run(devs: &[&LoopDev], args: &[&str]) -> (i32, String, Value, String) {
    let dir = tmp();
    let res = dir.path().join("r.json");
    let unless = |opt: &str, default: &'static [&'static str]| match args.contains(&opt) {
        true => &[][..],
        false => default,
    };
    let out = iomark_process()
        .arg("run")
        .args(devs.iter().map(|d| &d.dev))
        .args(args)
        .args(unless("--jobs", &["--jobs", "1"]))
        .args(unless("--file-service", &["--file-service", "roundrobin"]))
        .args(["--allow-write-device", "--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    let doc = std::fs::read(&res)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), err, doc, text)
}

/// Each target's `field` (e.g. `fsyncs`, `trim.ios`) in a document's first repetition.
fn each_target(doc: &Value, field: &str) -> Vec<u64> {
    let targets = doc["runs"][0]["repetitions"][0]["targets"]
        .as_array()
        .unwrap();
    (targets.iter())
        .map(|t| field.split('.').fold(t, |v, k| &v[k]).as_u64().unwrap())
        .collect()
}

/// fio on the job file `text` (`${A}`, `${B}`: the devices), when fio is installed.
fn fio(dir: &Path, text: &str, a: &LoopDev, b: &LoopDev) -> bool {
    if !require_tool("fio", "fio (apt-get install fio)") {
        return false;
    }
    let job = dir.join("j.fio");
    std::fs::write(&job, text).unwrap();
    let out = Command::new("fio")
        .current_dir(dir)
        .env("A", &a.dev)
        .env("B", &b.dev)
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .unwrap();
    assert_success(&out);
    true
}

/// `iomark fio` on the same job file as `fio` ran.
fn iomark_fio(dir: &Path, a: &LoopDev, b: &LoopDev) -> Value {
    let res = dir.join("r.json");
    // Each call a new document (-o does not replace one that holds measurements).
    let _ = std::fs::remove_file(&res);
    let out = iomark_process()
        .env("A", &a.dev)
        .env("B", &b.dev)
        .arg("fio")
        .arg(dir.join("j.fio"))
        .args(["--allow-write-device", "--quiet", "-o"])
        .arg(&res)
        .output()
        .unwrap();
    assert_success(&out);
    read_json(&res)
}

/// `--fsync 4` over two devices, one worker, roundrobin: after every fourth write an
/// fsync of the file the service gives next, so each device gets a flush per four of
/// its writes but the last (on psync, libaio and io_uring); random spreads the flushes
/// over both, their sum a quarter of the writes; `--end-fsync` flushes each device once. fio on the same job
/// file gives each device the same flushes, and so does `iomark fio` on it.
#[test]
fn fsync_every_n_writes_and_end_fsync_flush_each_file() {
    let (Some(a), Some(b)) = (LoopDev::new(16 << 20, true), LoopDev::new(16 << 20, true)) else {
        return;
    };
    let devs = [&a, &b];
    let mut engines = vec![("psync", "1"), ("libaio", "4")];
    if require("io_uring", iomark::io::engine::probe_io_uring().is_ok()) {
        engines.push(("io_uring", "4"));
    }
    let common = [
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--size",
        "8m",
        "--io-size",
        "4m",
    ];
    for (engine, qd) in engines {
        let mut doc = Value::Null;
        let c = during(&devs, || {
            let args = [&common[..], &["--engine", engine, "--qd", qd]].concat();
            let (code, err, d, _) = run(&devs, &[&args[..], &["--fsync", "4"]].concat());
            assert_eq!(code, 0, "{err}");
            doc = d;
        });
        // None after the last write (fio's sync comes before the next I/O).
        assert_eq!(
            c,
            vec![[512, 0, 128], [512, 0, 127]],
            "{engine}: roundrobin"
        );
        assert_eq!(each_target(&doc, "fsyncs"), [128, 127], "{engine}");
        assert_eq!(doc["runs"][0]["repetitions"][0]["fsyncs"], 255);
    }
    let mut doc = Value::Null;
    let c = during(&devs, || {
        let args = ["--fsync", "4", "--file-service", "random"];
        let (code, err, d, _) = run(&devs, &[&common[..], &args[..]].concat());
        assert_eq!(code, 0, "{err}");
        doc = d;
    });
    assert_eq!(c[0][0] + c[1][0], 1024, "random: {c:?}");
    assert_eq!(c[0][2] + c[1][2], 255, "random: {c:?}");
    assert!(c.iter().all(|d| d[2] > 64), "both flushed: {c:?}");
    assert_eq!(each_target(&doc, "fsyncs"), [c[0][2], c[1][2]]);
    let c = during(&devs, || {
        let (code, err, _, _) = run(&devs, &[&common[..], &["--end-fsync"]].concat());
        assert_eq!(code, 0, "{err}");
    });
    assert_eq!(c, vec![[512, 0, 1], [512, 0, 1]], "end_fsync");
    // fio on the same job, then iomark's reading of it.
    let dir = tmp();
    let job = "[j]\nfilename=${A}:${B}\nrw=randwrite\nbs=4k\nsize=8m\nio_size=4m\n\
               fsync=4\ndirect=1\nioengine=psync\n";
    let mut ran = false;
    let theirs = during(&devs, || ran = fio(dir.path(), job, &a, &b));
    if !ran {
        return;
    }
    assert_eq!(theirs, vec![[512, 0, 128], [512, 0, 127]], "fio");
    let ours = during(&devs, || {
        iomark_fio(dir.path(), &a, &b);
    });
    assert_eq!(ours, theirs, "iomark fio against fio");
}

/// Trims over two devices, one worker: `randtrim` roundrobin discards half the trims on
/// each device, `trimwrite` with random service writes each block it trimmed on the same
/// device; each device's discards are its target's trims. fio's roundrobin discards the
/// same on each device.
#[test]
fn trims_go_to_the_file_the_service_picks() {
    let (Some(a), Some(b)) = (LoopDev::new(16 << 20, true), LoopDev::new(16 << 20, true)) else {
        return;
    };
    let devs = [&a, &b];
    let common = ["--bs", "64k", "--size", "8m", "--io-size", "4m"];
    let mut doc = Value::Null;
    let c = during(&devs, || {
        let (code, err, d, _) = run(&devs, &[&common[..], &["--rw", "randtrim"]].concat());
        assert_eq!(code, 0, "{err}");
        doc = d;
    });
    assert_eq!(c, vec![[0, 32, 0], [0, 32, 0]], "randtrim roundrobin");
    assert_eq!(each_target(&doc, "trim.ios"), [32, 32]);
    assert_eq!(each_target(&doc, "trim.bytes"), [32 << 16, 32 << 16]);
    let c = during(&devs, || {
        let args = ["--rw", "trimwrite", "--file-service", "random"];
        let (code, err, d, _) = run(&devs, &[&common[..], &args[..]].concat());
        assert_eq!(code, 0, "{err}");
        doc = d;
    });
    assert_eq!(c[0][1] + c[1][1], 64, "trimwrite: {c:?}");
    assert!(c.iter().all(|d| d[0] == d[1] && d[1] > 8), "{c:?}");
    assert_eq!(each_target(&doc, "trim.ios"), [c[0][1], c[1][1]]);
    assert_eq!(each_target(&doc, "write.ios"), [c[0][0], c[1][0]]);
    let dir = tmp();
    let job = "[t]\nfilename=${A}:${B}\nrw=randtrim\nbs=64k\nsize=8m\nio_size=4m\n\
               direct=1\nioengine=psync\n";
    let mut ran = false;
    let theirs = during(&devs, || ran = fio(dir.path(), job, &a, &b));
    if ran {
        assert_eq!(theirs, vec![[0, 32, 0], [0, 32, 0]], "fio");
    }
}

/// `--verify` over two devices: a clean run of two jobs reads every block written on
/// each device back good (each target's own report, the repetition's their sum), also
/// with a device per job (`--split-targets`, each job moving 2 MiB over its own); two
/// devices over overlapping parts of one file, written one after the other
/// (sequential service), lose the first's last 16 blocks to the second's first writes:
/// the run fails (exit 1) naming the first device, whose report has the 16 misplaced
/// blocks, while the second reads back good.
#[test]
fn verify_reads_back_each_file_and_names_the_one_that_lost_writes() {
    let (Some(a), Some(b)) = (LoopDev::new(16 << 20, true), LoopDev::new(16 << 20, true)) else {
        return;
    };
    let args = [
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--size",
        "1m",
        "--io-size",
        "2m",
        "--qd",
        "4",
        "--verify",
        "--jobs",
        "2",
    ];
    let (code, err, doc, _) = run(&[&a, &b], &args);
    assert_eq!(code, 0, "{err}");
    let rep = &doc["runs"][0]["repetitions"][0];
    let v = &rep["verify"];
    assert_eq!(v["good"], v["blocks"], "{v}");
    let each = each_target(&doc, "verify.blocks");
    assert_eq!(each_target(&doc, "verify.good"), each);
    assert_eq!(each[0] + each[1], v["blocks"].as_u64().unwrap());
    assert!(
        each.iter().all(|&n| n > 150),
        "random writes touch most blocks: {each:?}"
    );
    // A device per job (--split-targets): each job owns its device whole.
    let split = [&args[..], &["--split-targets"]].concat();
    let (code, err, doc, _) = run(&[&a, &b], &split);
    assert_eq!(code, 0, "{err}");
    let each = each_target(&doc, "verify.blocks");
    assert_eq!(each_target(&doc, "verify.good"), each);
    assert!(
        each.iter().all(|&n| n > 200),
        "2 MiB over each 1 MiB device: {each:?}"
    );

    // One file in /dev/shm under two devices: the second starts 64 KiB before the
    // first's first MiB ends.
    let backing = tempfile::NamedTempFile::new_in("/dev/shm").unwrap();
    backing.as_file().set_len(3 << 20).unwrap();
    let first = LoopDev::over(backing.path(), 0).unwrap();
    let second = LoopDev::over(backing.path(), (1 << 20) - (64 << 10)).unwrap();
    let args = [
        "--rw",
        "write",
        "--bs",
        "4k",
        "--size",
        "1m",
        "--verify",
        "--engine",
        "psync",
        "--file-service",
        "sequential",
    ];
    let (code, err, doc, text) = run(&[&first, &second], &args);
    assert_eq!(code, 1, "{err}");
    // The summary gives each file's own finding under the sum.
    let line = |dev: &LoopDev, what: &str| {
        let head = format!("    {}: ", dev.dev.display());
        text.lines()
            .any(|l| l.starts_with(&head) && l.contains(what))
    };
    assert!(
        line(&first, "16 misplaced") && line(&second, "256 good"),
        "{text}"
    );
    let named = format!("on {};", first.dev.display());
    assert!(
        err.contains(&named) && err.contains("16 misplaced"),
        "{err}"
    );
    assert!(!err.contains(second.dev.to_str().unwrap()), "{err}");
    assert_eq!(each_target(&doc, "verify.misplaced"), [16, 0]);
    assert_eq!(each_target(&doc, "verify.good"), [240, 256]);
    let bad = &doc["runs"][0]["repetitions"][0]["targets"][0]["verify"]["first_bad"];
    assert_eq!(bad[0]["offset"], (1 << 20) - (64 << 10), "{bad}");
    // The HTML report says it too: the sum as a warning, then each file's finding.
    let dir = tmp();
    let saved = write_json(dir.path(), "v.json", &doc);
    let html = report(&[&saved], &dir.path().join("v.html"));
    let item = |dev: &LoopDev, what: &str| {
        let head = format!("<li>{}: verify: ", dev.dev.display());
        html.split("</li>")
            .any(|l| l.contains(&head) && l.contains(what))
    };
    assert!(
        html.contains("<p class=\"warn\">repetition 1: verify: 512 blocks"),
        "{html}"
    );
    assert!(item(&first, "16 misplaced") && item(&second, "256 good"));
}

/// Each device's share of the data writes `f` made on `devs`.
fn shares(devs: &[&LoopDev], f: impl FnOnce()) -> Vec<f64> {
    let c = during(devs, f);
    let all: u64 = c.iter().map(|d| d[0]).sum();
    c.iter().map(|d| d[0] as f64 / all as f64).collect()
}

/// `--file-service zipf:1.2`, `pareto:0.8` and `normal:20` over four devices, one
/// worker, 4096 random writes: each device's share of the writes (its kernel counter)
/// is the distribution's over the files (zipf and pareto the first file the hottest,
/// normal the middle two) within 2 points, and iomark's per-target figures are the
/// kernel's. fio on the same job (`file_service_type=zipf:1.2`, and `pareto` with fio's
/// default h, which is iomark's pareto:0.8) gives the same shares, hottest first, within
/// 3 points (fio's hottest file is a seeded one, iomark's the first); `iomark fio` on
/// those jobs the shares iomark's own runs give; `--as-fio` writes the service back.
#[test]
fn skewed_file_services_spread_the_writes_as_their_distribution() {
    let devs: Vec<LoopDev> = (0..4).filter_map(|_| LoopDev::new(8 << 20, true)).collect();
    if devs.len() < 4 {
        return;
    }
    let refs: Vec<&LoopDev> = devs.iter().collect();
    let h = |n: u64| (1..=n).map(|k| (k as f64).powf(-1.2)).sum::<f64>();
    let zipf: Vec<f64> = (0..4)
        .map(|k| (h(1024 * (k + 1)) - h(1024 * k)) / h(4096))
        .collect();
    let c = 0.8f64.ln() / 0.2f64.ln();
    let pareto: Vec<f64> = (0..4)
        .map(|k| ((k + 1) as f64 / 4.0).powf(c) - (k as f64 / 4.0).powf(c))
        .collect();
    // normal:20: σ = 0.8 files around the middle, cut to the four files (Φ(1.25) and
    // Φ(2.5) from the tables).
    let (p1, p2) = (0.894_35 - 0.5, 0.993_79 - 0.5);
    let normal = [
        (p2 - p1) / (2.0 * p2),
        p1 / (2.0 * p2),
        p1 / (2.0 * p2),
        (p2 - p1) / (2.0 * p2),
    ];
    let common = [
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--size",
        "8m",
        "--io-size",
        "16m",
    ];
    let mut ours = Vec::new();
    for (service, want) in [
        ("zipf:1.2", &zipf[..]),
        ("pareto:0.8", &pareto),
        ("normal:20", &normal),
    ] {
        let mut doc = Value::Null;
        let got = shares(&refs, || {
            let (code, err, d, _) =
                run(&refs, &[&common[..], &["--file-service", service]].concat());
            assert_eq!(code, 0, "{err}");
            doc = d;
        });
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 0.02, "{service}: {got:?} against {want:?}");
        }
        let each = each_target(&doc, "write.ios");
        assert_eq!(each.iter().sum::<u64>(), 4096, "{service}");
        let per: Vec<f64> = each.iter().map(|&n| n as f64 / 4096.0).collect();
        assert_eq!(
            per, got,
            "{service}: iomark's per-target figures against the kernel's"
        );
        ours.push(got);
    }
    // --as-fio writes fio's spelling of the service.
    let dir = tmp();
    let out = iomark_process()
        .arg("run")
        .args(refs.iter().map(|d| &d.dev))
        .args(common)
        .args(["--file-service", "pareto:0.8", "--as-fio"])
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("file_service_type=pareto:0.2\n"), "{text}");
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    for (k, fst) in [(0, "zipf:1.2"), (1, "pareto")] {
        let job = format!(
            "[s]\nfilename=${{A}}:${{B}}:${{C}}:${{D}}\nrw=randwrite\nbs=4k\nsize=32m\n\
             io_size=16m\nfile_service_type={fst}\ndirect=1\nioengine=psync\n"
        );
        std::fs::write(dir.path().join("j.fio"), job).unwrap();
        let env = |mut c: Command| {
            for (v, d) in ["A", "B", "C", "D"].iter().zip(&refs) {
                c.env(v, &d.dev);
            }
            c
        };
        let theirs = shares(&refs, || {
            let out = env(Command::new("fio"))
                .current_dir(dir.path())
                .arg(dir.path().join("j.fio"))
                .output()
                .unwrap();
            assert_success(&out);
        });
        let mine = shares(&refs, || {
            // Each service a new document (-o does not replace one that holds runs).
            let _ = std::fs::remove_file(dir.path().join("r.json"));
            let out = env(iomark_process())
                .arg("fio")
                .arg(dir.path().join("j.fio"))
                .args(["--allow-write-device", "--quiet", "-o"])
                .arg(dir.path().join("r.json"))
                .output()
                .unwrap();
            assert_success(&out);
        });
        let sorted = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(|a, b| b.total_cmp(a));
            v
        };
        for (t, o) in sorted(&theirs).iter().zip(sorted(&mine)) {
            assert!(
                (t - o).abs() < 0.03,
                "{fst}: fio {theirs:?}, iomark fio {mine:?}"
            );
        }
        for (m, o) in mine.iter().zip(&ours[k]) {
            assert!(
                (m - o).abs() < 0.02,
                "{fst}: iomark fio {mine:?}, iomark {:?}",
                ours[k]
            );
        }
    }
}

/// `openfiles`: with as many open files as the job has, a job runs as without it, under
/// fio and `iomark fio` alike (the same writes on each device); with fewer, which fio
/// serves a few files at a time, `iomark fio` refuses the job (exit 2, one line naming
/// the option, its line and the fix) before writing anything.
#[test]
fn openfiles_as_many_as_the_files_runs_and_fewer_is_refused() {
    let (Some(a), Some(b)) = (LoopDev::new(16 << 20, true), LoopDev::new(16 << 20, true)) else {
        return;
    };
    let devs = [&a, &b];
    let dir = tmp();
    let job = |n: u32| {
        format!(
            "[o]\nfilename=${{A}}:${{B}}\nrw=randwrite\nbs=4k\nsize=8m\nio_size=4m\n\
             openfiles={n}\ndirect=1\nioengine=psync\n"
        )
    };
    std::fs::write(dir.path().join("j.fio"), job(1)).unwrap();
    let c = during(&devs, || {
        let out = iomark_process()
            .env("A", &a.dev)
            .env("B", &b.dev)
            .arg("fio")
            .arg(dir.path().join("j.fio"))
            .args(["--allow-write-device", "--quiet"])
            .output()
            .unwrap();
        assert_refused(
            &out,
            "j.fio:7 openfiles=1 (iomark keeps all of a job's files open",
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("give openfiles=2 or more"));
    });
    assert_eq!(c, vec![[0, 0, 0], [0, 0, 0]], "nothing written");
    std::fs::write(dir.path().join("j.fio"), job(2)).unwrap();
    let mut ran = false;
    let theirs = during(&devs, || ran = fio(dir.path(), &job(2), &a, &b));
    let ours = during(&devs, || {
        iomark_fio(dir.path(), &a, &b);
    });
    assert_eq!(ours, vec![[512, 0, 0], [512, 0, 0]]);
    if ran {
        assert_eq!(theirs, ours, "fio against iomark fio");
    }
}

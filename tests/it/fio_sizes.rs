//! A mix whose reads and writes differ in size (issue 14: fio's `bs=4k,64k` and the
//! read,write sides of `bssplit`): iomark's `--write-bs`, read from fio's job files,
//! written back by `--as-fio`, imported from fio's output; checked against the sizes the
//! kernel saw at the device under both tools.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;

/// The device's (reads, sectors read, writes, sectors written) moved by `f`.
fn moved(dev: &LoopDev, f: impl FnOnce()) -> [u64; 4] {
    let a = dev.stat();
    f();
    let b = dev.stat();
    std::array::from_fn(|i| b[i] - a[i])
}

/// Runs fio on `file` with `${DIR}` = `dev`'s path; its JSON output.
fn fio_on(file: &Path, dev: &LoopDev) -> Value {
    let out = Command::new("fio")
        .arg(file)
        .arg("--output-format=json")
        .env("DIR", dev.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
}

/// What iomark itself reads of `dev` around a job (the guard's and blkid's probes of a
/// block device): the device's counters moved by a one-write job.
fn probes(dev: &LoopDev, dir: &Path) -> [u64; 4] {
    let file = dir.join("probe.fio");
    std::fs::write(
        &file,
        "[probe]\nfilename=${DIR}\nrw=write\nbs=64k\ndirect=1\nio_size=64k\n",
    )
    .unwrap();
    let m = moved(dev, || {
        iomark_fio_json(&file, dev.path(), &["--allow-write-device"]);
    });
    assert_eq!((m[2], m[3]), (1, 128), "the probe job writes once: {m:?}");
    m
}

/// A job file holding `job` in a fresh directory, and a 64 MiB loop device (`None`:
/// skipped, the reason printed).
fn job_and_device(job: &str) -> Option<(tempfile::TempDir, std::path::PathBuf, LoopDev)> {
    let dir = tmp();
    let file = dir.path().join("job.fio");
    std::fs::write(&file, job).unwrap();
    let dev = LoopDev::new(64 << 20, true)?;
    Some((dir, file, dev))
}

/// `iomark fio` on `file` over `dev`: its document, and the device's counters it moved
/// less iomark's own probes.
fn iomark_moved(file: &Path, dev: &LoopDev, dir: &Path) -> (Value, [u64; 4]) {
    let p = probes(dev, dir);
    let mut doc = Value::Null;
    let m = moved(dev, || {
        doc = iomark_fio_json(file, dev.path(), &["--allow-write-device"])
    });
    (doc, [m[0] - p[0], m[1] - p[1], m[2], m[3]])
}

/// Sectors per request in each direction, and the writes' share of the requests.
fn shape(m: [u64; 4]) -> (f64, f64, f64) {
    let [r, rs, w, ws] = m.map(|x| x as f64);
    (rs / r, ws / w, w / (r + w))
}

#[test]
fn a_mix_with_different_read_and_write_sizes_runs_as_fio_runs_it() {
    // 4 KiB reads and 64 KiB writes, 70/30, direct, 16 MiB moved: at the device every
    // read is 8 sectors and every write 128, under iomark and under fio, and the writes
    // are 30% of the requests (± 5 points over ~750 requests).
    let job = "[mix]\nfilename=${DIR}\nrw=randrw\nrwmixread=70\nbs=4k,64k\ndirect=1\n\
        io_size=16m\nnorandommap\n";
    let Some((dir, file, dev)) = job_and_device(job) else {
        return;
    };
    let (doc, m) = iomark_moved(&file, &dev, dir.path());
    let run = &doc["runs"][0];
    assert_eq!(run["spec"]["bs"], 4096, "{}", run["spec"]);
    assert_eq!(run["spec"]["write_bs"]["bs"], 65536, "{}", run["spec"]);
    let rep = &run["repetitions"][0];
    for (d, bs) in [("read", 4096.0), ("write", 65536.0)] {
        let per = rep[d]["bytes"].as_f64().unwrap() / rep[d]["ios"].as_f64().unwrap();
        assert_eq!(per, bs, "iomark's {d}s");
    }
    let (r, w, share) = shape(m);
    assert_eq!((r, w), (8.0, 128.0), "iomark at the device: {m:?}");
    assert_eq!(
        [m[0], m[2]],
        [
            rep["read"]["ios"].as_u64().unwrap(),
            rep["write"]["ios"].as_u64().unwrap()
        ]
    );
    assert!((share - 0.3).abs() < 0.05, "iomark's writes: {share}");
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let mut out = Value::Null;
    let m = moved(&dev, || out = fio_on(&file, &dev));
    let (r, w, share) = shape(m);
    assert_eq!((r, w), (8.0, 128.0), "fio at the device: {m:?}");
    assert!((share - 0.3).abs() < 0.05, "fio's writes: {share}");
    // fio's output imported: the same sizes, so `compare` pairs it with iomark's run.
    let fio_doc = dir.path().join("fio.json");
    std::fs::write(&fio_doc, out.to_string()).unwrap();
    let mine = dir.path().join("mine.json");
    std::fs::write(&mine, doc.to_string()).unwrap();
    let c = compare_json(&[fio_doc, mine]);
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "one matched row: {c}");
    assert!(
        rows[0]["cells"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| !x.is_null()),
        "{c}"
    );
}

#[test]
fn bssplit_sides_size_reads_and_writes_apart() {
    // bssplit=4k/50:16k/50,64k: reads of 4 and 16 KiB (20 sectors on average, ±2 over
    // ~600 reads), writes of 64 KiB only; under iomark and fio.
    let job = "[sides]\nfilename=${DIR}\nrw=randrw\nbssplit=4k/50:16k/50,64k\ndirect=1\n\
        io_size=24m\nnorandommap\n";
    let Some((dir, file, dev)) = job_and_device(job) else {
        return;
    };
    let (doc, m) = iomark_moved(&file, &dev, dir.path());
    assert_eq!(
        doc["runs"][0]["spec"]["write_bs"],
        serde_json::json!({"bs": 65536})
    );
    let (r, w, _) = shape(m);
    assert!(
        (r - 20.0).abs() < 2.0 && w == 128.0,
        "iomark at the device: {m:?}"
    );
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let m = moved(&dev, || {
        fio_on(&file, &dev);
    });
    let (r, w, _) = shape(m);
    assert!(
        (r - 20.0).abs() < 2.0 && w == 128.0,
        "fio at the device: {m:?}"
    );
}

#[test]
fn write_bs_round_trips_through_as_fio() {
    // `--as-fio` writes the sides as fio reads them; `iomark fio` reads the job back to
    // the same sizes; fio accepts the file.
    let dir = tmp();
    let target = dir.path().join("t.dat");
    let split = json!({"split": [{"bs": 16384, "pct": 50}, {"bs": 65536, "pct": 50}]});
    let cases: [(&[&str], &str, Value); 3] = [
        (
            &["--bs", "4k", "--write-bs", "64k"],
            "bs=4096,65536",
            json!([4096, null, {"bs": 65536}]),
        ),
        (
            &["--bs", "4k", "--write-bs", "16k/50:64k/50"],
            "bssplit=4096/100,16384/50:65536/50",
            json!([4096, null, {"bs": 65536, "mix": split}]),
        ),
        (
            &["--bsrange", "4k-16k", "--write-bs", "64k"],
            "bsrange=4096-16384,65536-65536",
            json!([16384, {"range": {"lo": 4096, "hi": 16384}}, {"bs": 65536}]),
        ),
    ];
    for (sizes, line, want) in cases {
        let args = [
            &["run", "--rw", "randrw", "--size", "16m", "--as-fio"][..],
            sizes,
            &[target.to_str().unwrap()],
        ]
        .concat();
        let text = String::from_utf8(stdout_of(&args)).unwrap();
        assert!(
            text.lines().any(|l| l == line),
            "{sizes:?}: no {line} in\n{text}"
        );
        let job = dir.path().join("back.fio");
        std::fs::write(&job, &text).unwrap();
        let plan: Value = fio_plan(&job);
        let spec = &plan["runs"][0]["spec"];
        assert_eq!(
            json!([spec["bs"], spec["bs_mix"], spec["write_bs"]]),
            want,
            "{sizes:?}"
        );
        if have("fio") {
            assert_fio_parses(&job);
        }
    }
}

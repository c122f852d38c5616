//! The page cache and the random map (issue 14): `--fadvise` (fio's `fadvise_hint`),
//! `--invalidate` (fio's `invalidate`) and `--random-map` (fio's default, `norandommap`
//! off), checked by what the kernel does: the read requests a loop device receives
//! (/sys/block/loopN/stat), under iomark and under fio on the same job.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// Device reads and sectors read on `dev` while `f` runs.
fn reads_during(dev: &LoopDev, f: impl FnOnce()) -> (u64, u64) {
    let a = dev.stat();
    f();
    let b = dev.stat();
    (b[0] - a[0], b[1] - a[1])
}

/// `iomark run DEV --rw randread --bs 4k --buffered --engine psync ARGS --json`.
fn iomark_reads(dev: &Path, args: &[&str]) -> Value {
    let mut all = vec![
        "run",
        dev.to_str().unwrap(),
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--buffered",
        "--engine",
        "psync",
        "--size",
        "16m",
    ];
    all.extend_from_slice(args);
    run_json(&all)
}

/// fio on `job` (its `${DEV}` set to `dev`), output thrown away.
fn fio_on(job: &str, dev: &Path) {
    let dir = tmp();
    let file = dir.path().join("j.fio");
    std::fs::write(&file, job).unwrap();
    let out = Command::new("fio")
        .arg(&file)
        .arg("--output=/dev/null")
        .env("DEV", dev)
        .output()
        .unwrap();
    assert_success(&out);
}

/// `POSIX_FADV_RANDOM` turns readahead off: every 4 KiB buffered random read is one
/// 4 KiB request at the device (8 sectors). Without advice the kernel's readahead
/// reads around cached neighbours, so requests are larger on average. fio's default
/// (`fadvise_hint=1`) and `fadvise_hint=0` do the same on the same device.
#[test]
fn fadvise_random_makes_every_miss_one_block() {
    let _cache = page_cache_lock();
    let Some(dev) = LoopDev::new(64 << 20, false) else {
        return;
    };
    let size = |(r, s): (u64, u64)| s as f64 / r.max(1) as f64;
    for (hint, fio_hint) in [("random", "1"), ("auto", "1"), ("none", "0")] {
        let got = reads_during(&dev, || {
            iomark_reads(dev.path(), &["--io-size", "48m", "--fadvise", hint]);
        });
        match hint {
            "none" => assert!(size(got) > 8.5, "iomark --fadvise none: {got:?}"),
            _ => assert!((size(got) - 8.0).abs() < 0.05, "iomark {hint}: {got:?}"),
        }
        if !require_tool("fio", "fio (apt-get install fio)") {
            continue;
        }
        let job = format!(
            "[j]\nfilename=${{DEV}}\nrw=randread\nbs=4k\nsize=16m\nio_size=48m\nfadvise_hint={fio_hint}\n"
        );
        let theirs = reads_during(&dev, || fio_on(&job, dev.path()));
        match fio_hint {
            "0" => assert!(size(theirs) > 8.5, "fio fadvise_hint=0: {theirs:?}"),
            _ => assert!((size(theirs) - 8.0).abs() < 0.05, "fio: {theirs:?}"),
        }
    }
}

/// With the random map each block of the span is read once per pass: 16 MiB of 4 KiB
/// random reads over a 16 MiB span without readahead are 4096 device reads, as under
/// fio; drawn independently, about 1 - 1/e of them land on a block not read yet (the
/// others are served by the page cache).
#[test]
fn the_random_map_reads_every_block_once() {
    let _cache = page_cache_lock();
    let Some(dev) = LoopDev::new(64 << 20, false) else {
        return;
    };
    let args = ["--io-size", "16m", "--fadvise", "random"];
    let mapped = reads_during(&dev, || {
        iomark_reads(dev.path(), &[&args[..], &["--random-map"]].concat());
    });
    assert_eq!(mapped.0, 4096, "iomark --random-map: {mapped:?}");
    let drawn = reads_during(&dev, || {
        iomark_reads(dev.path(), &args);
    });
    let share = drawn.0 as f64 / 4096.0;
    assert!((0.58..0.68).contains(&share), "iomark: {drawn:?}");
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    let job = "[j]\nfilename=${DEV}\nrw=randread\nbs=4k\nsize=16m\n";
    let theirs = reads_during(&dev, || fio_on(job, dev.path()));
    assert_eq!(theirs.0, 4096, "fio: {theirs:?}");
}

/// `--invalidate`: `pass` drops the span's pages each time a job has gone over it (here
/// a size-based one, `--io-size` 8 passes: fio does so too), so every read misses (device reads ≈ the job's reads, as fio's default
/// `invalidate=1` does); `rep` only before the repetition (one pass of misses, then
/// the cache serves); `off` not even then (a warm span is read from memory).
#[test]
fn invalidate_per_pass_before_the_repetition_or_never() {
    let _cache = page_cache_lock();
    let Some(dev) = LoopDev::new(64 << 20, false) else {
        return;
    };
    // The kernel drops a block device's cached pages when its last user closes it:
    // holding it open keeps them between the runs.
    let _hold = std::fs::File::open(dev.path()).unwrap();
    // A 1 MiB span: 256 blocks, 8 passes (8 MiB of reads, whatever the machine's pace: a
    // run of 500 ms on a loaded machine once read fewer than 4 passes).
    let run = |inv: &str| {
        let mut ios = 0.0;
        let got = reads_during(&dev, || {
            let doc = run_json(&[
                "run",
                dev.path().to_str().unwrap(),
                "--rw",
                "randread",
                "--bs",
                "4k",
                "--buffered",
                "--engine",
                "psync",
                "--size",
                "1m",
                "--io-size",
                "8m",
                "--fadvise",
                "random",
                "--random-map",
                "--invalidate",
                inv,
            ]);
            ios = doc["runs"][0]["repetitions"][0]["read"]["ios"]
                .as_f64()
                .unwrap();
        });
        (got.0, ios)
    };
    let (dev_reads, ios) = run("pass");
    assert_eq!(ios, 2048.0, "8 passes");
    assert!(
        dev_reads as f64 >= 0.95 * ios,
        "pass: {dev_reads} device reads for {ios} reads"
    );
    let (dev_reads, ios) = run("rep");
    assert!(
        dev_reads <= 256 + 8 && ios == 2048.0,
        "rep: {dev_reads} device reads for {ios}"
    );
    // Warm: the span read once through the cache just before (the tests running beside
    // this one may have evicted some of its pages meanwhile: fio's warm run below once
    // read 22 blocks of the 256 in a full run). A warm span is read from memory: a few
    // blocks from the device at most, where one pass of misses is 256.
    let warm_up = || {
        let mut f = std::fs::File::open(dev.path()).unwrap();
        let mut span = vec![0u8; 1 << 20];
        std::io::Read::read_exact(&mut f, &mut span).unwrap();
    };
    // A warm span that the tests beside this one evicted in the middle (31 blocks once,
    // on a loaded machine) is tried again: an "off" that dropped the pages at the start
    // would read a pass (256) every time, one that dropped them at every pass thousands.
    let warm_reads = |step: &dyn Fn() -> u64| {
        let mut seen = Vec::new();
        for _ in 0..3 {
            warm_up();
            seen.push(step());
            if seen[seen.len() - 1] <= 16 {
                break;
            }
        }
        seen
    };
    let seen = warm_reads(&|| run("off").0);
    assert!(
        seen.last().is_some_and(|&n| n <= 16),
        "off, warm: device reads per try {seen:?}"
    );
    if !require_tool("fio", "fio (apt-get install fio)") {
        return;
    }
    // fio with invalidate=0 on the warm span reads next to nothing either, and with its
    // default drops the pages at every pass.
    let job = "[j]\nfilename=${DEV}\nrw=randread\nbs=4k\nsize=1m\nio_size=8m\n";
    let warm = format!("{job}invalidate=0\n");
    let seen = warm_reads(&|| reads_during(&dev, || fio_on(&warm, dev.path())).0);
    assert!(
        seen.last().is_some_and(|&n| n <= 16),
        "fio invalidate=0, warm: device reads per try {seen:?}"
    );
    let theirs = reads_during(&dev, || fio_on(job, dev.path()));
    assert!(theirs.0 >= 2000, "fio: 8 passes of misses: {theirs:?}");
}

/// fio's `fadvise_hint`, `invalidate` and `norandommap` (or its absence) map to
/// `--fadvise`, `--invalidate` and `--random-map`; `--as-fio` writes them back and they
/// read back the same; fio parses what it wrote. A bad hint is one line naming the
/// values, and `--random-map` with a block-size mix is refused.
#[test]
fn page_cache_options_map_and_round_trip() {
    let dir = tmp();
    let job = "[global]\nfilename=${DIR}/f\nsize=4m\nio_size=1m\n\
        [a]\nrw=randread\n\
        [b]\nstonewall\nrw=randread\nfadvise_hint=0\ninvalidate=0\nnorandommap\n\
        [c]\nstonewall\nrw=read\nfadvise_hint=random\n\
        [d]\nstonewall\nrw=randread\nbssplit=4k/50:8k/50\nfadvise_hint=sequential\n";
    let file = dir.path().join("c.fio");
    std::fs::write(&file, job).unwrap();
    let plan = |f: &Path| -> Value {
        let out = iomark()
            .arg("fio")
            .arg(f)
            .args(["--dry-run", "--json"])
            .env("DIR", dir.path())
            .output()
            .unwrap();
        assert_success(&out);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let cache = |s: &Value| {
        (
            s["cache"]["fadvise"].as_str().unwrap_or("none").to_string(),
            s["cache"]["invalidate"]
                .as_str()
                .unwrap_or("rep")
                .to_string(),
            s["random_map"].as_bool().unwrap_or(false),
        )
    };
    let doc = plan(&file);
    let want = [
        ("auto", "pass", true),
        ("none", "off", false),
        ("random", "pass", false),
        ("sequential", "pass", false),
    ];
    for (i, (f, inv, map)) in want.into_iter().enumerate() {
        let got = cache(&doc["runs"][i]["spec"]);
        assert_eq!(got, (f.to_string(), inv.to_string(), map), "job {i}");
    }
    let t = dir.path().join("t.dat");
    let t = t.to_str().unwrap();
    for (args, (f, inv, map)) in [
        (
            &[
                "--rw",
                "randread",
                "--random-map",
                "--fadvise",
                "auto",
                "--invalidate",
                "pass",
            ][..],
            ("auto", "pass", true),
        ),
        (
            &["--rw", "randread", "--invalidate", "off"],
            ("none", "off", false),
        ),
        (
            &["--rw", "read", "--fadvise", "random"],
            ("random", "pass", false),
        ),
    ] {
        let mut all = vec!["run", t, "--size", "4m", "--buffered"];
        all.extend_from_slice(args);
        all.push("--as-fio");
        let text = String::from_utf8(stdout_of(&all)).unwrap();
        let back = dir.path().join("back.fio");
        std::fs::write(&back, &text).unwrap();
        let got = cache(&plan(&back)["runs"][0]["spec"]);
        assert_eq!(
            got,
            (f.to_string(), inv.to_string(), map),
            "{args:?}: {text}"
        );
        if have("fio") {
            assert_fio_parses(&back);
        }
    }
    // iomark's default (before each repetition only) beside fio's invalidate=1 (also at
    // each pass) is said where the job goes over the span more than once: time-based or
    // moving more than it.
    for (more, once) in [
        (&["--io-size", "16m"][..], false),
        (&["--io-size", "4m"], true),
    ] {
        let mut all = vec!["run", t, "--size", "4m", "--buffered", "--rw", "randread"];
        all.extend_from_slice(more);
        all.push("--as-fio");
        let text = String::from_utf8(stdout_of(&all)).unwrap();
        let said = text.contains("# invalidate: iomark drops the file's cached pages");
        assert_eq!(said, !once, "{more:?}: {text}");
    }
    let bad = dir.path().join("bad.fio");
    std::fs::write(
        &bad,
        "[x]\nfilename=${DIR}/f\nsize=1m\nfadvise_hint=often\n",
    )
    .unwrap();
    let out = iomark()
        .arg("fio")
        .arg(&bad)
        .arg("--dry-run")
        .env("DIR", dir.path())
        .output()
        .unwrap();
    assert_refused(&out, "fadvise_hint=often: use 0, 1, random or sequential");
    let out = iomark()
        .args(["run", t, "--rw", "randread", "--bssplit", "4k/50:8k/50"])
        .arg("--random-map")
        .output()
        .unwrap();
    assert_refused(&out, "--random-map draws every block");
}

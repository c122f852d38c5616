//! The data iomark writes, checked with real tools: the external zstd, lz4 and gzip
//! commands, content hashing of dedup units, and a private zram device's own `mm_stat`.

use std::collections::HashSet;
use std::process::{Command, Stdio};

use crate::common::{
    Zram, assert_refused, assert_success, iomark, read_json, require_tool, run_json, stdout_of,
    tmp, warnings_where,
};

fn data_stream(args: &[&str]) -> Vec<u8> {
    stdout_of(&[&["data"], args, &["-o", "-", "-q"]].concat())
}

/// Percentage of space a command-line compressor saves on `data`.
fn saved_by(cmd: &str, level: &str, data: &[u8]) -> f64 {
    use std::io::Write;
    let mut child = Command::new(cmd)
        .args([level, "-c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = data.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{cmd} failed");
    100.0 * (1.0 - out.stdout.len() as f64 / data.len() as f64)
}

#[test]
fn compressibility_matches_external_compressors() {
    for tool in ["zstd", "lz4", "gzip"] {
        if !require_tool(tool, &format!("the {tool} command")) {
            return;
        }
    }
    let mut report = Vec::new();
    // (`repeat` in 512-byte chunks, one segment each: their copy leaves the opening word
    // out since 2026-11-29, and is as compressible as before.)
    let cases = [
        ("zerofill", "4k", 1.0),
        ("repeat", "4k", 3.0),
        ("repeat", "512", 1.0),
    ];
    for (method, chunk, tol) in cases {
        let targets = match chunk {
            "512" => &[50u32, 90][..],
            _ => &[0, 2, 25, 50, 75, 98],
        };
        for &target in targets {
            let t = target.to_string();
            let data = data_stream(&[
                "--compress",
                &t,
                "--compress-method",
                method,
                "--compress-chunk",
                chunk,
                "--size",
                "16m",
                "--bs",
                "128k",
            ]);
            assert_eq!(data.len(), 16 << 20);
            for (tool, level) in [("zstd", "-1"), ("lz4", "-1"), ("gzip", "-1")] {
                let got = saved_by(tool, level, &data);
                report.push(format!("{method} {chunk} {target}% {tool}: {got:.2}"));
                assert!(
                    (got - target as f64).abs() <= tol,
                    "{method} {chunk} {target}%: {tool} {level} saves {got:.2}% (all: {report:?})"
                );
            }
        }
    }
    eprintln!("{}", report.join("\n"));
}

fn dup_fraction(data: &[u8], unit: usize) -> f64 {
    let mut seen = HashSet::new();
    let mut dups = 0;
    for u in data.chunks(unit) {
        if !seen.insert(u.to_vec()) {
            dups += 1;
        }
    }
    100.0 * dups as f64 / (data.len() / unit) as f64
}

#[test]
fn dedup_fraction_matches_hashing_the_units() {
    for dedup in [0u32, 25, 50, 90] {
        for compress in ["0", "50"] {
            for bs in ["4k", "128k"] {
                let d = dedup.to_string();
                let data = data_stream(&[
                    "--dedup",
                    &d,
                    "--compress",
                    compress,
                    "--bs",
                    bs,
                    "--size",
                    "32m",
                ]);
                let got = dup_fraction(&data, 4096);
                assert!(
                    (got - dedup as f64).abs() <= 1.0,
                    "dedup {dedup}% compress {compress}% bs {bs}: {got:.2}% duplicate units"
                );
            }
        }
    }
}

#[test]
fn same_seed_same_stream_other_seed_other_stream() {
    let a = data_stream(&[
        "--compress",
        "50",
        "--dedup",
        "30",
        "--size",
        "4m",
        "--seed",
        "11",
    ]);
    let b = data_stream(&[
        "--compress",
        "50",
        "--dedup",
        "30",
        "--size",
        "4m",
        "--seed",
        "11",
    ]);
    let c = data_stream(&[
        "--compress",
        "50",
        "--dedup",
        "30",
        "--size",
        "4m",
        "--seed",
        "12",
    ]);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn data_stream_is_what_a_write_run_writes() {
    // `iomark data` reproduces the bytes of `run --rw write`: a sequential write of a
    // new, kept file with the same seed and options holds exactly that stream.
    let dir = tmp();
    let f = dir.path().join("w.dat");
    run_json(&[
        "run",
        "--rw",
        "write",
        "--bs",
        "64k",
        "--size",
        "2m",
        "--compress",
        "40",
        "--dedup",
        "20",
        "--seed",
        "3",
        "--keep",
        f.to_str().unwrap(),
    ]);
    let written = std::fs::read(&f).unwrap();
    let stream = data_stream(&[
        "--bs",
        "64k",
        "--size",
        "2m",
        "--compress",
        "40",
        "--dedup",
        "20",
        "--seed",
        "3",
    ]);
    assert!(written == stream, "the file differs from `iomark data`");
}

/// A buffered sequential write run with `shape` on a new, kept file: its document and
/// the file's bytes.
fn kept_write(shape: &[&str]) -> (serde_json::Value, Vec<u8>) {
    let dir = tmp();
    let f = dir.path().join("w.dat");
    let args = [
        &["run", "--rw", "write", "--buffered", "--keep"][..],
        shape,
        &[f.to_str().unwrap()],
    ]
    .concat();
    let doc = run_json(&args);
    (doc, std::fs::read(&f).unwrap())
}

#[test]
fn a_block_size_not_a_multiple_of_the_unit_writes_the_data_stream() {
    // A write of 6000 bytes is one whole 4 KiB unit and the start of the next: it used to
    // panic in the pool's copy (a source of 4096 bytes into 1904).
    let shape = ["--bs", "6000", "--size", "600000", "--seed", "4"];
    let (_, written) = kept_write(&shape);
    let stream = data_stream(&shape);
    assert_eq!(written.len(), 600000);
    assert!(written == stream, "the file differs from `iomark data`");
}

#[test]
fn a_size_not_a_multiple_of_the_block_gives_the_whole_writes_a_run_makes() {
    // `--bs 12k --size 40k`: a write run writes three whole blocks (36 KiB) and leaves
    // the span's last 4 KiB as it was laid out; `iomark data` printed 40 KiB, its tail
    // the start of a fourth write no run makes. It prints the three writes, and says so.
    let shape = ["--bs", "12k", "--size", "40k", "--seed", "5"];
    let (doc, written) = kept_write(&shape);
    let ios = &doc["runs"][0]["repetitions"][0]["write"]["ios"];
    assert_eq!(ios.as_u64(), Some(3), "{ios}");
    assert_eq!(written.len(), 40 << 10);
    let out = iomark()
        .args([&["data"][..], &shape, &["-o", "-"]].concat())
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(out.stdout.len(), 36 << 10, "the stream is the whole writes");
    assert!(
        out.stdout[..] == written[..36 << 10],
        "the file differs from `iomark data`"
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("3 whole writes of --bs 12 KiB") && said.contains("last 4096 B"),
        "{said}"
    );
    // One write's worth and a part: one whole write, said in the singular.
    let one = iomark()
        .args(["data", "--size", "5000", "-o", "-"])
        .output()
        .unwrap();
    assert_success(&one);
    let said = String::from_utf8_lossy(&one.stderr);
    assert!(
        said.contains("1 whole write of --bs 4 KiB (4096 B)"),
        "{said}"
    );
    // Fewer bytes than one write: no run writes anything, so no stream is made.
    let small = iomark()
        .args(["data", "--bs", "12k", "--size", "8k", "-o", "-"])
        .output()
        .unwrap();
    assert_refused(&small, "--bs 12 KiB is larger than --size 8 KiB");
}

#[test]
fn a_mix_of_block_sizes_is_the_data_stream_of_its_run() {
    // `iomark data` had --bs only: a --bssplit run's stream could not be made. And two
    // mixes of one largest size wrote the same units, cut apart differently (the mix was
    // not part of the stream's name), so a deduplicating device saw one test's data again
    // in the other's.
    let mix = |split| {
        [
            "--bssplit",
            split,
            "--size",
            "4m",
            "--seed",
            "6",
            "--compress",
            "30",
        ]
    };
    let shape = mix("4k/50:64k/50");
    let (doc, written) = kept_write(&[&shape[..], &["--io-size", "2m"]].concat());
    let bytes = doc["runs"][0]["repetitions"][0]["write"]["bytes"]
        .as_u64()
        .unwrap() as usize;
    let out = iomark()
        .args([&["data"][..], &shape, &["-o", "-"]].concat())
        .output()
        .unwrap();
    assert_success(&out);
    let stream = out.stdout;
    assert!(
        bytes > 1 << 20 && stream.len() >= bytes,
        "{bytes} {}",
        stream.len()
    );
    assert!(
        written[..bytes] == stream[..bytes],
        "the file differs from `iomark data`"
    );
    // The stream fills --size: its last writes fit in it, as a run's before its span's end.
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stream.len(), 4 << 20, "{said}");
    assert!(!said.contains("does not fit"), "{said}");
    // Another mix of the same largest size: none of its 4 KiB units is one of these.
    let other = data_stream(&mix("8k/90:64k/10"));
    let units: HashSet<&[u8]> = stream.chunks_exact(4096).collect();
    let shared = other
        .chunks_exact(4096)
        .filter(|u| units.contains(u))
        .count();
    assert_eq!(shared, 0, "units of one mix's stream in the other's");
    let both = iomark()
        .args([
            "data",
            "--bs",
            "8k",
            "--bssplit",
            "4k/50:8k/50",
            "--size",
            "1m",
        ])
        .output()
        .unwrap();
    assert_refused(&both, "--bs and a mix of sizes");
    let large = iomark()
        .args(["data", "--bsrange", "4k-64k", "--size", "32k", "-o", "-"])
        .output()
        .unwrap();
    assert_refused(
        &large,
        "--bsrange 4k-64k has blocks of 64 KiB, larger than --size 32 KiB",
    );
}

/// A size-based run with a mix of sizes moves the span's bytes, as fio's size is bytes,
/// and its last writes take sizes that fit before the span's end, as fio's do: the file
/// is the stream `iomark data` prints of those options, whole. It ended at the I/Os the
/// mix's mean would move (289 writes, 53 of 64 MiB), then (until 2026-11-29) wrapped the
/// write that did not fit to the span's start: the first KiB written twice, the last
/// never.
#[test]
fn a_size_based_mix_moves_the_spans_bytes() {
    for mix in [
        ["--bssplit", "4k/50:64k/30:1m/20"],
        ["--bsrange", "4k-64k"],
        ["--bssplit", "64k/50:4k/50"],
    ] {
        let shape = [&mix[..], &["--size", "16m", "--seed", "3"]].concat();
        let (doc, written) = kept_write(&shape);
        let w = &doc["runs"][0]["repetitions"][0]["write"];
        let (ios, bytes) = (w["ios"].as_u64().unwrap(), w["bytes"].as_u64().unwrap());
        let out = iomark()
            .args([&["data"][..], &shape, &["-o", "-"]].concat())
            .output()
            .unwrap();
        assert_success(&out);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!said.contains("does not fit"), "{mix:?}: {said}");
        let stream = out.stdout;
        assert_eq!(bytes, 16 << 20, "{mix:?}: bytes moved");
        assert_eq!(stream.len(), 16 << 20, "{mix:?}: the stream");
        let first_diff = written.iter().zip(&stream).position(|(a, b)| a != b);
        assert!(
            written.len() == stream.len() && first_diff.is_none(),
            "{mix:?}: the file differs from the stream at byte {first_diff:?} ({} B)",
            written.len()
        );
        assert!(ios > 16, "{mix:?}: {ios} writes");
    }
    // A span that is not a multiple of the smallest size: its whole blocks (1000 KiB of
    // 1001, as fio's 104 writes), the stream's; it wrapped a 12 KiB write to the start.
    let shape = [
        "--bssplit",
        "4k/30:12k/70",
        "--size",
        "1001k",
        "--seed",
        "2",
    ];
    let (doc, written) = kept_write(&shape);
    let bytes = doc["runs"][0]["repetitions"][0]["write"]["bytes"].as_u64();
    assert_eq!(bytes, Some(1000 << 10), "one pass of 1001k");
    let stream = data_stream(&shape);
    assert!(
        stream.len() == 1000 << 10 && written[..stream.len()] == stream[..],
        "the file's first 1000 KiB differ from the stream"
    );
    // Two jobs, each a pass from its own start (the second's ends where it began), and
    // two files served in turn (a mix's budget was one file's: half the bytes, where fio
    // moves both files').
    let dir = tmp();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    for (extra, files, want) in [
        (&["--jobs", "2"][..], 1, 2u64 << 20),
        (&["--file-service", "roundrobin"][..], 2, 2 << 20),
        (&["--file-service", "sequential"][..], 2, 2 << 20),
    ] {
        let targets = [a.to_str().unwrap(), b.to_str().unwrap()];
        let args = [
            &[
                "run",
                "--rw",
                "write",
                "--bssplit",
                "4k/50:64k/50",
                "--size",
                "1m",
            ][..],
            extra,
            &targets[..files],
        ]
        .concat();
        let doc = run_json(&args);
        let moved = doc["runs"][0]["repetitions"][0]["write"]["bytes"].as_u64();
        assert_eq!(moved, Some(want), "{extra:?}");
    }
    // Room for no size of the mix at the end: the whole writes, and the next one named.
    let out = iomark()
        .args([
            "data",
            "--bssplit",
            "12k/50:24k/50",
            "--size",
            "40k",
            "-o",
            "-",
        ])
        .output()
        .unwrap();
    assert_success(&out);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.stdout.len(), 36 << 10, "{said}");
    assert!(said.contains("does not fit in the last 4096 B"), "{said}");
}

#[test]
fn writes_sent_from_the_pool_are_the_data_stream() {
    // Without dedup or verify, writes are sent straight from the data pool (stamped in
    // place): with queue depth 8 on io_uring and libaio, over 40 MiB (two and a half
    // times round the 16 MiB pool), a sequential write still holds exactly the stream
    // `iomark data` prints, for random data and for a repeat-method profile; in writes of
    // many units and of one unit each (4 KiB: the pool's one-unit path); and for zeros
    // and a pattern, sent from the region filled once.
    let dir = tmp();
    for (engine, bs, data) in [
        ("io_uring", "128k", &["--seed", "9"][..]),
        ("io_uring", "4k", &["--seed", "9"][..]),
        (
            "libaio",
            "128k",
            &[
                "--seed",
                "9",
                "--compress",
                "60",
                "--compress-method",
                "repeat",
            ][..],
        ),
        ("psync", "128k", &["--seed", "9", "--compress", "30"][..]),
        // `repeat` chunks of one segment, stamped at the word their copy leaves out.
        (
            "io_uring",
            "128k",
            &[
                "--seed",
                "9",
                "--compress",
                "80",
                "--compress-method",
                "repeat",
                "--compress-chunk",
                "512",
            ][..],
        ),
        // Constant profiles, sent from one region filled once: a pattern of 9 bytes
        // (each write starts it over, as fio's buffer_pattern) and zeros.
        (
            "io_uring",
            "16k",
            &["--data", "pattern:0123456789abcdef01"][..],
        ),
        ("libaio", "128k", &["--data", "zeros"][..]),
    ] {
        let f = dir.path().join(format!("{engine}.dat"));
        let shape = ["--bs", bs, "--size", "40m"];
        let qd = if engine == "psync" { "1" } else { "8" };
        let args = [
            &[
                "run", "--rw", "write", "--engine", engine, "--qd", qd, "--keep",
            ][..],
            &shape,
            data,
            &[f.to_str().unwrap()],
        ]
        .concat();
        run_json(&args);
        let written = std::fs::read(&f).unwrap();
        let stream = data_stream(&[&shape[..], data].concat());
        assert_eq!(written.len(), stream.len(), "{engine}");
        let first_diff = written.iter().zip(&stream).position(|(a, b)| a != b);
        assert!(
            first_diff.is_none(),
            "{engine} {bs} {data:?}: differs from byte {first_diff:?}"
        );
        std::fs::remove_file(&f).unwrap();
    }
}

/// The document of a write run on the null engine with `opts`.
fn null_write(opts: &[&str]) -> serde_json::Value {
    run_json(&[&["run", "--engine", "null", "--rw", "write"][..], opts].concat())
}

#[test]
fn random_data_is_unique_in_every_unit_the_dedup_unit_names() {
    // `--dedup-unit 512` without --dedup: the stream was made of 4 KiB units stamped once
    // each, and their other 512-byte parts came back with the pool (16 MiB): a 64 MiB
    // stream was 65.6% duplicate 512-byte units, as iomark itself measured.
    let shape = [
        "--dedup-unit",
        "512",
        "--bs",
        "64k",
        "--size",
        "64m",
        "--seed",
        "8",
    ];
    let stream = data_stream(&shape);
    assert_eq!(dup_fraction(&stream, 512), 0.0);
    // A run writes the same stream.
    let small = [
        "--dedup-unit",
        "512",
        "--bs",
        "64k",
        "--size",
        "4m",
        "--seed",
        "8",
    ];
    let (_, written) = kept_write(&small);
    assert!(
        written == data_stream(&small),
        "the file differs from `iomark data`"
    );
}

#[test]
fn a_job_hashes_about_twice_the_allowance_whatever_its_length() {
    // The sampler halved its fraction once per doubling of the written bytes, each
    // doubling hashing half its allowance (32768 units) again: a 1 s null run of 128 KiB
    // writes (release build) hashed ~141000 units of ~2.9 million, and 8 s of 200 MB/s
    // 91526 of 409600. The job now says how
    // much it will write when the allowance is spent (by its size, or by its runtime),
    // and the fraction narrows at once: about twice the allowance in all, plus 1/1024 of
    // the units when the fraction is at its narrowest.
    // (Paced by time: a fast job's own rate depends on how much it hashes, so its first
    // answer, given while the allowance is hashed, is low; a device's is not.)
    for end in [
        &["--io-size", "2g"][..],
        &["--runtime", "8s", "--rate", "200m"],
    ] {
        let opts = [&["--bs", "128k", "--qd", "8", "--size", "1g"][..], end].concat();
        let rep = &null_write(&opts)["runs"][0]["repetitions"][0];
        let units = rep["write"]["bytes"].as_u64().unwrap() / 4096;
        let hashed = rep["data"]["dedup_sampled_units"].as_u64().unwrap();
        assert!(units >= 1 << 18, "{end:?}: {units} units written");
        assert!(
            hashed <= 2 * 32768 + units / 1024 + 4096,
            "{end:?}: {hashed} of {units} units hashed"
        );
        assert_eq!(rep["data"]["dedup_pct"].as_f64(), Some(0.0), "{end:?}");
    }
}

#[test]
fn a_pool_smaller_than_the_writes_in_flight_is_named() {
    // `--data-pool 1m` with 16 writes of 128 KiB in flight: most writes found their pool
    // units still lent and were copied (3.1 us of CPU per write on the null engine where
    // a 2 MiB pool gives 0.5), and nothing said so.
    let warned = |pool: &str| -> Vec<String> {
        let doc = null_write(&[
            "--bs",
            "128k",
            "--qd",
            "16",
            "--size",
            "1g",
            "--io-size",
            "64m",
            "--data-pool",
            pool,
        ]);
        warnings_where(&doc, |w| {
            w.starts_with("--data-pool") && w.contains("in flight")
        })
    };
    let small = warned("1m");
    assert!(
        small.len() == 1
            && small[0].contains("--qd 16 x 128 KiB = 2 MiB")
            && small[0].contains("give --data-pool 2m or more"),
        "{small:?}"
    );
    assert_eq!(warned("2m"), Vec::<String>::new());
    // A pool within a compressor's window is said in the run too; the default is not.
    let window = |opts: &[&str]| -> Vec<String> {
        let base = ["--bs", "128k", "--size", "1g", "--io-size", "16m"];
        let doc = null_write(&[&base[..], opts].concat());
        warnings_where(&doc, |w| w.contains("within the window"))
    };
    let said = window(&["--data-pool", "4m"]);
    assert!(
        said.len() == 1 && said[0].contains("the window of zstd -19 (8 MiB)"),
        "{said:?}"
    );
    assert_eq!(window(&[]), Vec::<String>::new());
    assert_eq!(window(&["--data-pool", "8m"]), Vec::<String>::new());
}

/// The default 16 MiB pool is beyond every window up to zstd -19's, but within those of
/// archivers run over a whole stream: `zstd --long` (128 MiB) saved 66% of a stream
/// iomark measured 0.0% of, chunk by chunk, and the help and docs/data.md said no
/// compressor saw a repeat. `iomark data` says so now, naming the windows and a pool
/// none of them sees the pool's repeats in (a dedup stream's copies repeat whatever the
/// pool: said too), and that pool holds: its stream, longer than the
/// pool, is not smaller under `zstd --long`. A stream no longer than the pool gets no
/// note, and a run's warnings stay quiet about the default pool (a device compresses
/// within far smaller windows).
#[test]
fn archivers_long_windows_see_the_default_pools_repeats() {
    if !require_tool("zstd", "the zstd command") {
        return;
    }
    let shape = ["--bs", "128k", "--size", "40m", "--seed", "4"];
    let long = saved_by("zstd", "--long=27", &data_stream(&shape));
    assert!(
        long > 50.0,
        "zstd --long saved {long:.1}% of the default pool's stream"
    );
    let said = |opts: &[&str]| -> String {
        let dir = tmp();
        let out = iomark()
            .current_dir(dir.path())
            .args([&["data", "-o", "s.bin"][..], opts].concat())
            .output()
            .unwrap();
        assert_success(&out);
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let note = said(&shape);
    assert!(
        note.contains("zstd-1 0.0%")
            && note.contains("note: --data-pool 16m (the default)")
            && note.contains("zstd --long and --ultra -22 (128 MiB)")
            && note.contains("xz -9")
            && !note.contains("zstd -19 (8 MiB)")
            && note
                .contains("--data-pool 256m for a stream none of them sees the pool's repeats in")
            && !note.contains("--dedup"),
        "{note}"
    );
    // A dedup stream's copies are repeats whatever the pool: said so.
    let dedup = said(&[&shape[..], &["--dedup", "30"]].concat());
    assert!(
        dedup.contains("(the --dedup 30% copies repeat whatever the pool, some within any window)"),
        "{dedup}"
    );
    let short = said(&["--bs", "128k", "--size", "16m"]);
    assert!(!short.contains("note: --data-pool"), "{short}");
    // The pool the note gives: a stream longer than it, and none of it found again.
    let far = ["--bs", "128k", "--size", "300m", "--data-pool", "256m"];
    let none = saved_by("zstd", "--long=27", &data_stream(&far));
    assert!(
        none < 1.0,
        "zstd --long saved {none:.1}% of a 256 MiB pool's stream"
    );
    let doc = null_write(&["--bs", "128k", "--size", "1g", "--io-size", "64m"]);
    assert_eq!(
        warnings_where(&doc, |w| w.starts_with("--data-pool")),
        Vec::<String>::new()
    );
}

#[test]
fn data_pool_is_the_distance_a_compressor_sees() {
    // `--data-pool` is the distance after which a unit's bytes (other than its stamp)
    // come back: zstd -3 (a 2 MiB window) finds them again in a 256 KiB pool's stream,
    // lz4 (64 KiB) does not, and neither finds anything in the default 16 MiB pool's.
    if !require_tool("zstd", "the zstd command") || !require_tool("lz4", "the lz4 command") {
        return;
    }
    let shape = ["--bs", "128k", "--size", "8m", "--seed", "4"];
    let small = data_stream(&[&shape[..], &["--data-pool", "256k"]].concat());
    let default = data_stream(&shape);
    let (z_small, z_default) = (
        saved_by("zstd", "-3", &small),
        saved_by("zstd", "-3", &default),
    );
    let l_small = saved_by("lz4", "-1", &small);
    assert!(
        z_small > 90.0,
        "zstd saved {z_small:.1}% of a 256 KiB pool's stream"
    );
    // ... which iomark's own figures, measured chunk by chunk, do not see: the 256 KiB
    // pool's stream says so and names zstd -3 among the compressors whose window holds
    // the repeats (lz4's does not); the default pool's says nothing. (Said nowhere
    // before: 0.0% measured beside 99% saved by zstd.)
    let said = |pool: &[&str]| -> (String, f64) {
        let dir = tmp();
        let out = iomark()
            .current_dir(dir.path())
            .args([&["data", "-o", "s.bin"][..], &shape, pool].concat())
            .output()
            .unwrap();
        assert_success(&out);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let zstd: f64 = (err.split("zstd-1 ").nth(1))
            .and_then(|t| t.split('%').next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no zstd figure in {err}"));
        (err, zstd)
    };
    let (note, measured) = said(&["--data-pool", "256k"]);
    assert!(
        measured < 1.0
            && note.contains("note: --data-pool 256k")
            && note.contains("zstd -3 (2 MiB)")
            && !note.contains("lz4 (64 KiB)"),
        "{note}"
    );
    let (quiet, _) = said(&[]);
    assert!(!quiet.contains("note: --data-pool"), "{quiet}");
    assert!(
        z_default < 1.0,
        "zstd saved {z_default:.1}% of a 16 MiB pool's stream"
    );
    assert!(
        l_small < 1.0,
        "lz4 saved {l_small:.1}% of a 256 KiB pool's stream"
    );

    // A run with a pool no larger than the writes in flight (QD 8 x 128 KiB = 1 MiB) still
    // writes that stream: units still lent are copied, not reused early.
    let dir = tmp();
    let f = dir.path().join("pool.dat");
    let pool = ["--data-pool", "1m"];
    run_json(
        &[
            &[
                "run", "--rw", "write", "--engine", "io_uring", "--qd", "8", "--keep",
            ][..],
            &shape,
            &pool,
            &[f.to_str().unwrap()],
        ]
        .concat(),
    );
    let written = std::fs::read(&f).unwrap();
    assert!(
        written == data_stream(&[&shape[..], &pool].concat()),
        "the run's bytes differ from `iomark data --data-pool 1m`"
    );
    assert!(
        written != default,
        "--data-pool 1m wrote the default pool's stream"
    );
}

#[test]
fn run_reports_measured_data_for_writes_only() {
    let dir = tmp();
    let f = dir.path().join("m.dat");
    let doc = run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--size",
        "8m",
        "--compress",
        "50",
        "--dedup",
        "25",
        f.to_str().unwrap(),
    ]);
    let d = &doc["runs"][0]["repetitions"][0]["data"];
    for (k, want) in [("lz4_pct", 50.0), ("zstd_pct", 50.0), ("dedup_pct", 25.0)] {
        let got = d[k].as_f64().unwrap();
        assert!((got - want).abs() < 2.0, "{k} {got}");
    }
    assert_eq!(doc["runs"][0]["spec"]["data"]["kind"], "compressible");
    let doc = run_json(&[
        "run",
        "--rw",
        "randread",
        "--size",
        "8m",
        f.to_str().unwrap(),
    ]);
    assert!(doc["runs"][0]["repetitions"][0]["data"].is_null());
}

#[test]
fn files_profile_writes_the_files_contents() {
    let dir = tmp();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    // Non-periodic content, so a 16-byte window locates its position uniquely.
    let mut x = 0x1234_5678u32;
    let a: Vec<u8> = (0..10_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    std::fs::write(src.join("a.bin"), &a).unwrap();
    let data = data_stream(&[
        "--data",
        &format!("files:{}", src.display()),
        "--size",
        "64k",
    ]);
    // The stream is the corpus cycled (from a seeded start): every byte follows its
    // predecessor as in the file.
    let pos = a
        .windows(16)
        .position(|w| w == &data[..16])
        .expect("starts inside the file");
    for (i, &b) in data.iter().enumerate() {
        assert_eq!(b, a[(pos + i) % a.len()], "byte {i}");
    }
}

#[test]
fn zram_stores_what_the_compressibility_says() {
    for (pct, check) in [(50u32, 0u8), (98, 1), (0, 2)] {
        let Some(z) = Zram::new("lz4", "512M") else {
            return;
        };
        let p = pct.to_string();
        let doc = run_json(&[
            "run",
            "--rw",
            "write",
            "--bs",
            "128k",
            "--qd",
            "4",
            "--io-size",
            "256m",
            "--compress",
            &p,
            "--allow-write-device",
            &z.dev(),
        ]);
        let (orig, compr) = z.mm_stat();
        assert!(orig >= 250 << 20, "zram holds {orig} bytes");
        let stored = 100.0 * compr as f64 / orig as f64;
        let lz4 = doc["runs"][0]["repetitions"][0]["data"]["lz4_pct"]
            .as_f64()
            .unwrap();
        eprintln!(
            "zram at {pct}%: stores {stored:.1}% of the bytes; iomark measured lz4 {lz4:.1}%"
        );
        match check {
            0 => assert!((stored - 50.0).abs() <= 5.0, "50%: stores {stored:.1}%"),
            1 => assert!(stored < 10.0, "98%: stores {stored:.1}%"),
            _ => assert!(stored > 99.0, "0%: stores {stored:.1}%"),
        }
        assert!(
            (100.0 - stored - lz4).abs() < 6.0,
            "zram and iomark's lz4 agree within 6 points"
        );
    }
}

/// `iomark data | head -c 10`: the reader goes, the stream stops with exit 141 and
/// nothing printed (the README's promise; it exited 0 and printed the measure of the
/// part it had written, as if that were the stream asked for).
#[test]
fn a_stream_whose_reader_goes_exits_141_quietly() {
    use std::io::Read;
    let mut child = crate::common::iomark_process()
        .args(["data", "--size", "256m"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe's read end is dropped here.
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(141));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes smaller than the dedup unit (`--bs 3`) hold no whole unit: equal 3-byte pieces
/// were counted as duplicate 4 KiB units (1% in random data). `iomark data` measures its
/// stream's units across its writes: the same figure as hashing the stream's 4 KiB units;
/// a run measures the whole units of its writes: none here, so none duplicate.
#[test]
fn writes_smaller_than_the_unit_are_not_duplicate_units() {
    let out = crate::common::iomark()
        .args(["data", "--bs", "3", "--size", "4m", "-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let want = dup_fraction(&out.stdout, 4096);
    let said: f64 = err
        .split("duplicate 4k-units ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|t| t.trim_end_matches('%').parse().ok())
        .unwrap_or_else(|| panic!("no dedup figure in {err}"));
    assert!(
        (said - want).abs() < 0.05,
        "iomark said {said}%, the stream has {want}%"
    );
    // A stream shorter than a unit holds no unit: no figure, as a run gives none (it
    // said 0.0% of one 3 KiB piece). A stream of one unit and a piece: that unit.
    for (size, holds) in [("3k", false), ("5k", true)] {
        let out = crate::common::iomark()
            .args(["data", "--bs", "1k", "--size", size, "-o", "-"])
            .output()
            .unwrap();
        assert_success(&out);
        let err = String::from_utf8_lossy(&out.stderr);
        let none = err.contains("no duplicate figure: the stream holds no whole 4k dedup unit");
        assert_eq!(none, !holds, "--size {size}: {err}");
        assert_eq!(
            err.contains("duplicate 4k-units 0.0%"),
            holds,
            "--size {size}: {err}"
        );
    }
    let doc = null_write(&[
        "--bs",
        "3",
        "--buffered",
        "--io-size",
        "3m",
        "--size",
        "16m",
    ]);
    let data = &doc["runs"][0]["repetitions"][0]["data"];
    // No whole unit, no figure: null, not a measured 0% (which it said until 2026-11-28).
    assert!(data["dedup_pct"].is_null(), "{data}");
    assert_eq!(data["dedup_sampled_units"].as_u64(), Some(0), "{data}");
    // The run's text says why it gives no duplicate figure (it left it out, silently,
    // even for zeros in 8 KiB units written 4 KiB at a time).
    let out = crate::common::iomark()
        .args([
            "run", "--engine", "null", "--rw", "write", "--data", "zeros",
        ])
        .args(["--dedup-unit", "8k", "--size", "1g", "--io-size", "4m"])
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("no duplicate figure: the writes (4k) hold no whole 8k dedup unit"),
        "{text}"
    );
}

/// A run's sampled dedup figure against the stream's truth (every repeat comes from the
/// `--dedup-set` first units, so the share is the one asked for), where it used to fail:
/// a thousand frequent contents found out of the sample were counted as themselves alone
/// (1.5% for 50%), ten as 37.5%. The null engine writes enough to narrow the sample to
/// 1/256 and pin what is frequent.
#[test]
fn a_runs_dedup_figure_holds_with_many_frequent_contents() {
    for set in ["10", "1000"] {
        let doc = run_json(&[
            "run",
            "--engine",
            "null",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--dedup",
            "50",
            "--dedup-set",
            set,
            "--runtime",
            "1",
            "--size",
            "16m",
        ]);
        let d = doc["runs"][0]["repetitions"][0]["data"]["dedup_pct"]
            .as_f64()
            .unwrap();
        assert!(
            (d - 50.0).abs() < 2.5,
            "--dedup 50 --dedup-set {set}: measured {d:.1}%"
        );
    }
}

/// A compress chunk larger than the dedup unit: each chunk's later units had no stamp of
/// their own, so they came back a pool later, duplicates (68.7% of 4 KiB units at
/// `--compress 60 --compress-chunk 16k`, where the zeros alone make 50%). Hashed in the
/// stream itself, and said in a note before the run.
#[test]
fn units_of_a_large_chunk_are_unique_but_for_its_zeros() {
    let shape = ["--compress", "60", "--compress-chunk", "16k", "--bs", "64k"];
    let data = data_stream(&[&shape[..], &["--size", "64m"]].concat());
    let got = dup_fraction(&data, 4096);
    assert!((got - 50.0).abs() < 0.5, "{got:.2}% duplicate 4 KiB units");
    let out = crate::common::iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--rw",
            "write",
            "--runtime",
            "0.2",
            "--size",
            "16m",
        ])
        .args(shape)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2 of its 4 4 KiB units are all zeros"),
        "{err}"
    );
}

/// A compress chunk larger than the dedup unit over more than 8 laps of the pool: the
/// chunks' stamps turned through their lines where the sampler read the 4 KiB units'
/// selectors at their own ids' turns, off the stamps, on bytes that came back every lap;
/// after 8 laps those were pinned as frequent and counted by the frequent contents'
/// sample: 256 MiB of `--compress 80 --compress-chunk 16k` measured 68.3% duplicates
/// (`--compress 50 --compress-chunk 8k` 45.4%) where the stream's units hash to 75.0%
/// (50.0%). Within a point of the stream's own units now.
#[test]
fn a_large_chunks_duplicates_hold_over_many_laps_of_the_pool() {
    for (compress, chunk) in [("80", "16k"), ("50", "8k")] {
        let shape = [
            "--compress",
            compress,
            "--compress-chunk",
            chunk,
            "--bs",
            "128k",
        ];
        let size = ["--size", "256m"];
        let truth = dup_fraction(&data_stream(&[&shape[..], &size[..]].concat()), 4096);
        let doc = null_write(&[&shape[..], &size[..]].concat());
        let got = doc["runs"][0]["repetitions"][0]["data"]["dedup_pct"]
            .as_f64()
            .unwrap();
        assert!(
            (got - truth).abs() < 1.0,
            "--compress {compress} --compress-chunk {chunk}: {got:.1}% for {truth:.1}%"
        );
    }
}

/// From 99.7% zerofill leaves no literal in a 4 KiB chunk: every unit is zeros, the
/// stream's units all duplicates of the first, and the run said nothing (its note counted
/// whole units of zeros from the percentage, none of a 4 KiB chunk). Said now, as it is
/// for larger chunks; 99.6% keeps literals, and no note.
#[test]
fn a_compress_share_that_leaves_only_zeros_is_said() {
    for (pct, zeros) in [("99.7", true), ("99.6", false)] {
        let shape = ["--compress", pct, "--bs", "128k", "--size", "8m"];
        let stream = data_stream(&shape);
        let dups = dup_fraction(&stream, 4096);
        let doc = null_write(&shape);
        let said = crate::common::warnings_where(&doc, |w| w.contains("all zeros"));
        match zeros {
            true => {
                assert!(dups > 99.9, "{pct}: {dups:.2}% duplicate units");
                assert!(
                    said.iter()
                        .any(|w| w.contains("every 4 KiB unit is all zeros")),
                    "{pct}: {said:?}"
                );
            }
            false => {
                assert!(dups < 0.1, "{pct}: {dups:.2}% duplicate units");
                assert!(said.is_empty(), "{pct}: {said:?}");
            }
        }
    }
    // 99.68% keeps one random byte a chunk, and its stamp is that wide: 256 chunks differ,
    // and the stream's units repeat after 1 MiB (75.3% of 1024 units were duplicates,
    // unsaid).
    let shape = ["--compress", "99.68", "--bs", "128k", "--size", "8m"];
    let dups = dup_fraction(&data_stream(&shape), 4096);
    assert!(dups > 80.0, "{dups:.2}% duplicate units");
    let said = crate::common::warnings_where(&null_write(&shape), |w| w.contains("units differ"));
    assert!(
        said.iter().any(|w| w.contains("leaves 1 random byte in each 4 KiB chunk: at most 256 4 KiB units differ (1 MiB), so duplicates come back before that much is written")),
        "{said:?}"
    );
    // The repeat method: from about 98.95% no literal is left in a 512-byte segment and
    // every unit is zeros (unsaid until 2026-11-29). At 98.8%, one literal a segment, the
    // first segment's alone was stamped until 2026-11-29 (256 x the pool's units
    // differed: a 64 KiB pool, 16 units, 4096 chunks, 16 MiB, said), now every segment's
    // but the opening one (which the copies repeat): no duplicates, nothing to say; in
    // 1 KiB chunks, two segments, both literals stamped: 65536 chunks differ (64 MiB),
    // duplicate 1 KiB units in a 64 MiB stream, said when the dedup unit is 1 KiB; in 4
    // KiB units, four chunks stamped apart, none (until 2026-11-29 the note spoke of the
    // chunks whatever the unit, and named zram, which stores 4 KiB pages).
    for (pct, chunk, dups_at_least, note) in [
        ("99.7", "4k", 99.9, "every 4 KiB unit is all zeros"),
        ("98.95", "4k", 99.9, "every 4 KiB unit is all zeros"),
        ("98.8", "4k", -1.0, ""),
        (
            "98.8",
            "1k:1k",
            20.0,
            "leaves 2 random bytes in each 1 KiB chunk: at most 65536 1 KiB units differ (64 MiB), so duplicates come back before that much is written",
        ),
        ("98.8", "1k", -1.0, ""),
        ("98.5", "4k", -1.0, ""),
    ] {
        let (chunk, unit) = chunk.split_once(':').unwrap_or((chunk, "4k"));
        let shape = [
            "--compress",
            pct,
            "--compress-method",
            "repeat",
            "--compress-chunk",
            chunk,
            "--dedup-unit",
            unit,
            "--data-pool",
            "64k",
            "--bs",
            "128k",
            "--size",
            "64m",
        ];
        let stream = data_stream(&shape);
        let (dups, chunk_dups) = (dup_fraction(&stream, 4096), dup_fraction(&stream, 1024));
        let said = crate::common::warnings_where(&null_write(&shape), |w| {
            w.contains("all zeros") || w.contains("units differ")
        });
        match note.is_empty() {
            false => {
                let d = dups.max(chunk_dups);
                assert!(d > dups_at_least, "{pct}/{chunk}: {d:.2}% duplicates");
                assert!(said.iter().any(|w| w.contains(note)), "{pct}: {said:?}");
            }
            true => {
                assert!(dups < 0.1, "{pct}: {dups:.2}% duplicate units");
                assert!(said.is_empty(), "{pct}: {said:?}");
            }
        }
    }
}

/// A run's dedup figure is estimated from the units it hashed (docs/data.md), but the
/// "data :" line read as a measurement of every unit, and a short run's sample was
/// small: "17.7% duplicate 16k units" (256 units allowed before the budget, 743 hashed)
/// for a 64 MiB file whose units hash to 20.0%. Every job may now hash 8192 units
/// before the budget applies (within 4 MiB and 256 MiB): that file's units are all
/// hashed and its figure is exact; a larger run's says what its estimate rests on, and
/// is within a point and a half of the stream's (`iomark data` hashes all of it).
#[test]
fn a_sampled_dedup_figure_says_it_is_an_estimate() {
    let dir = tmp();
    let file = dir.path().join("d.dat");
    let doc = dir.path().join("d.json");
    let out = iomark()
        .args([
            "run", "--rw", "write", "--size", "64m", "--bs", "64k", "--seed", "5",
        ])
        .args(["--dedup", "20", "--dedup-unit", "16k", "--keep", "-o"])
        .arg(&doc)
        .arg(&file)
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("data :"))
        .unwrap();
    assert!(!line.contains("estimated"), "{line}");
    let said = read_json(&doc)["runs"][0]["repetitions"][0]["data"]["dedup_pct"]
        .as_f64()
        .unwrap();
    let real = dup_fraction(&std::fs::read(&file).unwrap(), 16384);
    assert!(
        (said - real).abs() < 0.05,
        "said {said}, the file's units {real}"
    );

    // 256 MiB of 4 KiB units: 65536, of which a part is hashed (8192 units at least).
    let opts = ["--bs", "64k", "--seed", "5", "--dedup", "20"];
    let out = iomark()
        .args([
            "run", "--engine", "null", "--rw", "write", "--size", "256m", "-o",
        ])
        .arg(&doc)
        .arg("--force")
        .args(opts)
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let rep = &read_json(&doc)["runs"][0]["repetitions"][0];
    let hashed = rep["data"]["dedup_sampled_units"].as_u64().unwrap();
    let units = rep["write"]["bytes"].as_u64().unwrap() / 4096;
    assert!((8192..units).contains(&hashed), "{hashed} of {units}");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("data :"))
        .unwrap();
    assert!(
        line.contains(&format!(
            "(estimated from {hashed} of {units} units hashed)"
        )),
        "{line}"
    );
    let whole = iomark()
        .args(["data", "--size", "256m", "-o", "-", "-q"])
        .args(opts)
        .output()
        .unwrap();
    assert_success(&whole);
    // The stream's own share, by a 64-bit hash of each unit (not a copy of each).
    let mut seen = HashSet::new();
    let dups = (whole.stdout.chunks(4096))
        .filter(|u| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            u.hash(&mut h);
            !seen.insert(h.finish())
        })
        .count();
    let real = 100.0 * dups as f64 / units as f64;
    let said = rep["data"]["dedup_pct"].as_f64().unwrap();
    assert!(
        (said - real).abs() < 1.5,
        "estimated {said}, the stream's {real}"
    );
}

/// `iomark data -o /dev/null` told the user to remove /dev/null (probe 14b). The null
/// device takes the stream (the figures alone, the same as a file's); any other special
/// file is refused for what it is, never with advice to remove it.
#[test]
fn data_to_the_null_device_gives_the_figures_alone() {
    let dir = tmp();
    let file = dir.path().join("s.bin");
    let args = ["data", "--size", "4m", "--compress", "50", "--seed", "7"];
    let out = iomark().args(args).arg("-o").arg(&file).output().unwrap();
    assert_success(&out);
    let to_file = String::from_utf8_lossy(&out.stderr).replace(&file.display().to_string(), "X");
    let out = iomark()
        .args(args)
        .args(["-o", "/dev/null"])
        .output()
        .unwrap();
    assert_success(&out);
    let to_null = String::from_utf8_lossy(&out.stderr).replace("/dev/null", "X");
    assert_eq!(to_file, to_null, "the same stream, the same figures");
    assert!(std::path::Path::new("/dev/null").exists());
    for special in ["/dev/zero", "/dev"] {
        let out = iomark().args(args).args(["-o", special]).output().unwrap();
        assert_refused(&out, "is not a regular file");
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("remove it"),
            "{out:?}"
        );
    }
    // A dangling symbolic link was "not a regular file (a device, FIFO, socket or
    // directory)": it is said to be a link, and nothing is made where it points.
    let link = dir.path().join("link.bin");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
    let out = iomark().args(args).arg("-o").arg(&link).output().unwrap();
    assert_refused(&out, "is a symbolic link");
    assert!(!dir.path().join("nowhere").exists());
}

/// A `repeat` chunk below 512 bytes is one segment: `--compress-chunk 256` panicked with
/// a backtrace (exit status 101); now its stream is made, as large as asked, and a
/// null run writes it.
#[test]
fn a_repeat_chunk_below_512_bytes_is_one_segment() {
    for chunk in ["256", "64"] {
        let shape = [
            "--compress",
            "50",
            "--compress-method",
            "repeat",
            "--compress-chunk",
            chunk,
            "--size",
            "1m",
        ];
        let stream = data_stream(&shape);
        assert_eq!(stream.len(), 1 << 20, "{chunk}");
        let saved = saved_by("lz4", "-1", &stream);
        assert!(saved > 10.0, "{chunk}: lz4 saved {saved:.1}%");
        let doc = null_write(&shape);
        assert!(doc["runs"][0]["repetitions"][0]["write"]["ios"].as_u64() > Some(0));
    }
}

/// `--verify` writes a header at each block's start whose first word is the same in every
/// block: the sampler read the headed units' selectors there, took them for one frequent
/// content and counted them as its copies (16 MiB of 16 KiB writes: 1.4% duplicate units
/// measured for none, 42.6% for `--dedup 30`, whose file holds 17.8%: the headers make
/// the copies that open a block unique). Now the figure is the kept file's, by MD5 of
/// every 4 KiB unit, within a point.
#[test]
fn a_verify_runs_headers_are_not_counted_as_duplicates() {
    let dir = tmp();
    for extra in [&[][..], &["--dedup", "30"], &["--compress", "50"]] {
        let f = dir.path().join("v.dat");
        let f = f.to_str().unwrap();
        let args = [
            "run", "--rw", "write", "--bs", "16k", "--size", "16m", "--verify",
        ];
        let doc = run_json(&[&args[..], extra, &["--keep", f]].concat());
        let said = doc["runs"][0]["repetitions"][0]["data"]["dedup_pct"]
            .as_f64()
            .unwrap();
        let truth = dup_fraction(&std::fs::read(f).unwrap(), 4096);
        std::fs::remove_file(f).unwrap();
        assert!(
            (said - truth).abs() < 1.0,
            "{extra:?}: {said:.2}% said, {truth:.2}% in the file"
        );
    }
}

/// A run whose units are all zeros says so, and with `--verify` names the units its
/// headers set apart: each block's first, which the note said were zeros too (a 1 MiB
/// file of 16 KiB blocks at `--compress 99.8` holds 64 headed units that differ).
#[test]
fn the_zero_units_note_names_the_units_a_verify_header_sets_apart() {
    let dir = tmp();
    let f = dir.path().join("z.dat");
    let f = f.to_str().unwrap();
    let args = [
        "run",
        "--rw",
        "write",
        "--bs",
        "16k",
        "--size",
        "1m",
        "--compress",
        "99.8",
    ];
    let doc = run_json(&[&args[..], &["--verify", "--keep", f]].concat());
    let said = warnings_where(&doc, |w| w.contains("all zeros"));
    let distinct: HashSet<_> = std::fs::read(f)
        .unwrap()
        .chunks(4096)
        .map(<[u8]>::to_vec)
        .collect();
    std::fs::remove_file(f).unwrap();
    assert_eq!(distinct.len(), 65, "64 headed units and zeros");
    assert!(
        said.iter().any(|w| w.contains(
            "(with --verify, but for each block's first 4 KiB unit, which opens with the block's own header)"
        )),
        "{said:?}"
    );
    let plain = run_json(&[&args[..], &["--engine", "null"]].concat());
    let said = warnings_where(&plain, |w| w.contains("all zeros"));
    assert!(said.len() == 1 && !said[0].contains("--verify"), "{said:?}");
}

/// Chunks that say nothing of what they are (a helper's probe, session 30): zerofill in
/// 512-byte chunks at 99.4% writes nothing but zeros, every 4 KiB unit a duplicate, and
/// chunks below 512 bytes cannot be as compressible as asked chunk by chunk (`--compress
/// 50 --compress-chunk 8` measured 0.0%); both said nothing. Now a note each, in
/// `iomark data`'s output and in a run's, and none for 512-byte chunks at 50%.
#[test]
fn chunks_of_zeros_or_too_small_are_said() {
    for (args, note) in [
        (
            &["--compress", "99.4", "--compress-chunk", "512"][..],
            Some("every 4 KiB unit is all zeros"),
        ),
        (
            &["--compress", "50", "--compress-chunk", "8"][..],
            Some("--compress-chunk 8 B is below 512 B"),
        ),
        (
            &["--compress", "50", "--compress-chunk", "256"][..],
            Some("--compress-chunk 256 B is below 512 B"),
        ),
        (&["--compress", "50", "--compress-chunk", "512"][..], None),
    ] {
        let said = data_notes(&[&["--size", "1m"][..], args].concat());
        let run = crate::common::warnings_where(
            &null_write(&[&["--size", "1m"][..], args].concat()),
            |w| w.contains("all zeros") || w.contains("is below 512 B"),
        );
        said_or_not(&format!("{args:?}"), &said, &run, note, "note: --compress");
    }
}

/// What `iomark data -o /dev/null` with `args` says on stderr (its figures and notes).
fn data_notes(args: &[&str]) -> String {
    let out = iomark()
        .args([&["data", "-o", "/dev/null"][..], args].concat())
        .output()
        .unwrap();
    assert_success(&out);
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// That `iomark data`'s output (`said`) and a run's warnings (`run`, those the probe
/// picked) both give `note`, or, without one, that neither has a line with `absent`.
fn said_or_not(case: &str, said: &str, run: &[String], note: Option<&str>, absent: &str) {
    match note {
        Some(n) => {
            assert!(said.contains(n), "{case}: {said}");
            assert!(run.iter().any(|w| w.contains(n)), "{case}: {run:?}");
        }
        None => {
            assert!(!said.contains(absent), "{case}: {said}");
            assert!(run.is_empty(), "{case}: {run:?}");
        }
    }
}

/// A zerofill dedup unit of chunks with narrow stamps: 2 KiB chunks at 99.6% hold one
/// random byte each, so a 4 KiB unit has 65536 contents and 256 MiB of them are about a
/// third duplicates by chance (the note says so). The run read each unit's selector at
/// its first word, the first chunk's one byte: 256 selectors for 65536 contents, and it
/// measured 0.2% duplicate units where `iomark data`'s stream held 34.9% (a helper's
/// probe, session 30). Now within 2 points of the stream's.
#[test]
fn a_runs_dedup_figure_holds_for_units_of_narrow_stamped_chunks() {
    let shape = [
        "--compress",
        "99.6",
        "--compress-chunk",
        "2k",
        "--data-pool",
        "64k",
        "--bs",
        "128k",
        "--size",
        "256m",
    ];
    let truth = dup_fraction(&data_stream(&shape), 4096);
    let doc = null_write(&shape);
    let said = doc["runs"][0]["repetitions"][0]["data"]["dedup_pct"]
        .as_f64()
        .unwrap();
    assert!(truth > 20.0, "{truth:.1}% in the stream");
    assert!(
        (said - truth).abs() < 2.0,
        "said {said:.1}%, the stream's {truth:.1}%"
    );
}

/// Units a chunk larger than them leaves unstamped come back every lap of the pool, and
/// nothing said so (a helper's probe, session 30): a `repeat` chunk's first unit (its
/// literals are what every copy repeats), a zerofill chunk's unit where fewer than 8 of
/// its random bytes lie. Now a note with the share, which the stream's count matches;
/// and every note that applies is given (the zeros note of 8 KiB chunks at 99.7% hid
/// that their first units, of 2 random bytes, repeat too).
#[test]
fn units_a_larger_chunk_leaves_unstamped_are_said() {
    for (shape, unit, note, share) in [
        (
            &[
                "--compress",
                "97",
                "--compress-method",
                "repeat",
                "--compress-chunk",
                "8k",
                "--dedup-unit",
                "512",
            ][..],
            512,
            "leaves each chunk's first 512 B unit unstamped",
            6.25,
        ),
        (
            &["--compress", "49.81", "--compress-chunk", "8k"][..],
            4096,
            "leaves unstamped the 4 KiB unit where each chunk's random bytes end",
            50.0,
        ),
    ] {
        let args = [
            &["--data-pool", "1m", "--bs", "128k", "--size", "32m"][..],
            shape,
        ]
        .concat();
        let said = data_notes(&args);
        assert!(said.contains(note), "{shape:?}: {said}");
        let dups = dup_fraction(&data_stream(&args), unit);
        assert!(
            (dups - share).abs() < 2.0,
            "{shape:?}: {dups:.2}% duplicates"
        );
    }
    let out = iomark()
        .args([
            "data",
            "-o",
            "/dev/null",
            "--compress",
            "99.7",
            "--compress-chunk",
            "8k",
        ])
        .args(["--bs", "128k", "--size", "1m"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("1 of its 2 4 KiB units is all zeros"),
        "{said}"
    );
    assert!(
        said.contains("leaves 2 random bytes in each 8 KiB chunk"),
        "{said}"
    );
}

/// Random data in dedup units of a few bytes meets by chance (a helper's probe, session
/// 30): `--dedup-unit 1` measured 100% duplicate units, `--dedup-unit 3 --dedup 10` 11.7%
/// for 10%, and nothing said so. Now a note in `iomark data`'s output and a run's; none
/// for 512-byte units.
#[test]
fn random_units_too_small_to_differ_are_said() {
    for (unit, note) in [
        (
            "1",
            Some("--dedup-unit 1 B holds 1 random byte: 256 contents"),
        ),
        (
            "3",
            Some("--dedup-unit 3 B holds 3 random bytes: 16777216 contents"),
        ),
        ("512", None),
    ] {
        let args = ["--dedup-unit", unit, "--bs", "3k", "--size", "3m"];
        let said = data_notes(&args);
        let run =
            crate::common::warnings_where(&null_write(&args), |w| w.contains("meet by chance"));
        said_or_not(unit, &said, &run, note, "meet by chance");
    }
}

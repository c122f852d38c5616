//! Every bad command line in `tests/data/bad-commands.txt` gets a one-line error on stderr,
//! exit status 2, and no panic or backtrace.

use crate::common::{assert_refused, assert_success, iomark, tmp};

#[test]
fn bad_command_lines_exit_2_with_one_line() {
    let dir = tmp();
    let file = dir.path().join("foreign.dat");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let emptydir = dir.path().join("empty");
    std::fs::create_dir(&emptydir).unwrap();
    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"{"name": "some other tool", "results": []}"#).unwrap();
    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, r#"{"schema": "iomark/2", "runs": []}"#).unwrap();
    let table = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/bad-commands.txt"
    ));
    let mut checked = 0;
    for line in table
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let line = line
            .replace("{dir}", dir.path().to_str().unwrap())
            .replace("{file}", file.to_str().unwrap())
            .replace("{emptydir}", emptydir.to_str().unwrap())
            .replace("{other}", other.to_str().unwrap())
            .replace("{newer}", newer.to_str().unwrap());
        let args: Vec<&str> = line.split(' ').collect();
        let out = iomark()
            .env("RUST_BACKTRACE", "1")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "`iomark {line}` exit status; stderr: {err}"
        );
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "`iomark {line}` must print one line: {err}"
        );
        assert!(err.starts_with("iomark: "), "`iomark {line}`: {err}");
        if line.starts_with("report") || line.starts_with("compare") {
            let named = args
                .iter()
                .skip(1)
                .any(|a| a.contains('/') && err.contains(*a));
            assert!(named, "`iomark {line}` must name the file: {err}");
        }
        assert!(
            !err.contains("panicked") && !err.contains("backtrace"),
            "`iomark {line}`: {err}"
        );
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} bad command lines");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        vec![7u8; 1 << 20],
        "the foreign file is untouched"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 4, "nothing created: {leftovers:?}");
}

/// Messages that tell the truth (issue 11, item 10): each mistake is named as what it is,
/// with exit status 2, before anything is written.
/// A command line written as one string of words.
fn words(line: &str) -> Vec<&str> {
    line.split(' ').collect()
}

#[test]
fn each_mistake_is_named_for_what_it_is() {
    let dir = tmp();
    let d = dir.path().to_str().unwrap().to_string();
    let file = dir.path().join("foreign.dat");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let f = file.to_str().unwrap().to_string();
    let long = format!("{d}/{}", "n".repeat(300));
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "run",
                "--rw",
                "write",
                "--size",
                "999999t",
                &format!("{d}/big.dat"),
            ],
            "would need",
        ),
        (
            vec!["run", "--rw", "write", "--size", "1m", &long],
            "longer than the filesystem allows",
        ),
        (vec!["run", ""], "TARGET is empty"),
        (vec!["quick", &f], "is not a directory"),
        // An empty pattern was "not an even number of hex digits" (zero is even).
        (
            vec!["data", "--size", "4k", "--data", "pattern:"],
            "--data pattern:: no bytes given: write them in hex after the colon",
        ),
        (
            vec!["data", "--size", "4k", "--data", "pattern:zz"],
            "--data pattern:zz: not hex digits",
        ),
        (
            vec!["data", "--size", "4k", "--data", "pattern:abc"],
            "--data pattern:abc: an odd number of hex digits",
        ),
        // Parsed and ignored: random data has no compression method, and a bound on the
        // repeats of no --dedup bounds nothing.
        (
            words("run --engine null --rw write --compress-method repeat"),
            "--compress-method shapes compressible data (--compress PCT), not --data random",
        ),
        (
            words("data --size 4k --data zeros --compress-method repeat"),
            "not --data zeros; give --compress or drop --compress-method",
        ),
        (
            words("run --engine null --rw write --refill --data files:/usr/bin"),
            "--data files: copies the files' bytes into every write already: drop --refill",
        ),
        (
            words("run --engine null --rw write --dedup-set 100"),
            "--dedup-set bounds the repeats of --dedup PCT, which is not given",
        ),
        (
            vec![
                "run",
                "--direct",
                "--buffered",
                "--engine",
                "null",
                "--size",
                "1m",
            ],
            "--buffered and --direct contradict each other; give one of them",
        ),
        (
            vec![
                "run",
                "--rw",
                "read",
                "--rwmixread",
                "70",
                "--engine",
                "null",
                "--size",
                "1m",
            ],
            "applies to mixes",
        ),
        (
            vec![
                "suite",
                "corners",
                "--rwmixread",
                "70",
                "--engine",
                "null",
                "--size",
                "1m",
                "--dry-run",
            ],
            "runs none",
        ),
        (
            vec![
                "suite",
                "wsat",
                "--rw",
                "randread",
                "--engine",
                "null",
                "--size",
                "1m",
                "--dry-run",
            ],
            "does not write",
        ),
        (
            vec![
                "suite",
                "qd",
                "--qd",
                "4,4,4",
                "--engine",
                "null",
                "--size",
                "1m",
                "--dry-run",
            ],
            "more than once",
        ),
        (
            vec![
                "suite",
                "bs",
                "--bs",
                "4k,3",
                "--direct",
                "--size",
                "1m",
                "--dry-run",
                &format!("{d}/x.dat"),
            ],
            "not a multiple of 512",
        ),
        (
            vec![
                "run",
                "--rw",
                "write",
                "--size",
                "1m",
                "--verify",
                "--verify-state",
                &format!("{d}/s"),
                &format!("{d}/new.dat"),
            ],
            "add --keep",
        ),
    ]
    .into_iter()
    .map(|(a, n)| (a.into_iter().map(String::from).collect(), n))
    .collect();
    for (args, needle) in cases {
        let out = iomark().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {needle:?} not in {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    for leftover in ["big.dat", "new.dat", "x.dat", "s"] {
        assert!(
            !dir.path().join(leftover).exists(),
            "{leftover} was created"
        );
    }
    // verify on a directory: named as a directory, not as an O_DIRECT refusal.
    let target = dir.path().join("kept.dat");
    let state = dir.path().join("kept.state");
    iomark()
        .args([
            "run",
            "--rw",
            "write",
            "--size",
            "1m",
            "--verify",
            "--keep",
            "--buffered",
            "-q",
        ])
        .arg("--verify-state")
        .arg(&state)
        .arg(&target)
        .assert()
        .success();
    let out = iomark()
        .arg("verify")
        .arg("--state")
        .arg(&state)
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is a directory"), "{err}");
}

/// A read-only device is refused up front, not at its first write.
#[test]
fn a_read_only_device_is_refused_before_writing() {
    use crate::common::{LoopDev, is_root, require};
    if !require("root (loop devices)", is_root()) {
        return;
    }
    let Some(dev) = LoopDev::new(8 << 20, false) else {
        return;
    };
    let ro = |flag: &str| {
        std::process::Command::new("blockdev")
            .arg(flag)
            .arg(dev.path())
            .status()
            .unwrap()
            .success()
    };
    assert!(ro("--setro"));
    let out = iomark()
        .args([
            "run",
            "--rw",
            "write",
            "--allow-write-device",
            "--destroy-data",
        ])
        .args(["--runtime", "0.5", "-q"])
        .arg(dev.path())
        .output()
        .unwrap();
    assert!(ro("--setrw"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is read-only"), "{err}");
}

/// clap's errors read as one sentence and point at the subcommand's help; binary data is
/// not written to a terminal (issue 12, item 15).
#[test]
fn first_hour_messages() {
    let err = |args: &[&str]| {
        let out = iomark().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = err(&["data"]);
    assert!(e.contains("not provided: --size"), "{e}");
    assert!(e.contains("(see iomark data --help)"), "{e}");
    let e = err(&["run", "--qd"]);
    assert!(e.contains("(see iomark run --help)"), "{e}");
    if !crate::common::require_tool("script", "script (util-linux, for a terminal)") {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_iomark");
    let out = std::process::Command::new("script")
        .args(["-qec", &format!("{bin} data --size 1m"), "/dev/null"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("stdout is a terminal"), "{text}");
    assert!(text.len() < 400, "no binary was written to the terminal");
    assert_eq!(out.status.code(), Some(2));
}

/// One file under two names (a path and `./` the same, a symbolic link) is one target:
/// refused before any I/O, as the same name twice is.
#[test]
fn the_same_file_under_two_names_is_one_target() {
    let dir = tmp();
    let f = dir.path().join("f.dat");
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    let link = dir.path().join("link.dat");
    std::os::unix::fs::symlink(&f, &link).unwrap();
    let dotted = dir.path().join(".").join("f.dat");
    for other in [&dotted, &link] {
        let out = iomark()
            .args(["run", "--rw", "randread", "--runtime", "0.1"])
            .arg(&f)
            .arg(other)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("are the same file or device"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert_eq!(std::fs::read(&f).unwrap(), vec![7u8; 1 << 20]);
}

/// An empty file or an unbound loop device is said to be empty (it was "--offset 0 B is
/// at or past the end", with no --offset given).
#[test]
fn an_empty_target_is_said_to_be_empty() {
    let dir = tmp();
    let f = dir.path().join("empty.dat");
    std::fs::write(&f, b"").unwrap();
    let mut targets = vec![(f, "file")];
    let root = crate::common::require("root (an unbound loop device)", crate::common::is_root());
    if root && crate::common::require_tool("losetup", "losetup (util-linux)") {
        let free = std::process::Command::new("losetup")
            .arg("-f")
            .output()
            .unwrap();
        let dev = String::from_utf8_lossy(&free.stdout).trim().to_string();
        targets.push((dev.into(), "device"));
    }
    for (t, what) in targets {
        let out = iomark()
            .args(["run", "--rw", "read"])
            .arg(&t)
            .output()
            .unwrap();
        // Another test may have set the free loop device up meanwhile: it holds data then.
        let bound = || {
            let o = std::process::Command::new("losetup").arg(&t).output();
            o.is_ok_and(|o| o.status.success())
        };
        if what == "device" && bound() {
            continue;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("is empty (0 B); name a {what} that holds data")),
            "{err}"
        );
        assert!(!err.contains("--offset"), "{err}");
        // Only a device is told about loop devices (a file was too).
        assert_eq!(err.contains("losetup"), what == "device", "{err}");
    }
}

/// Under `ulimit -v` (RLIMIT_AS) a run whose pools cannot be mapped was not refused: the
/// allocation failed with a backtrace (exit 134) and left the file it was making. Now it
/// is refused before anything is made, naming the limit.
#[test]
fn a_run_larger_than_the_address_space_limit_is_refused() {
    let dir = crate::common::tmp();
    let target = dir.path().join("t.dat");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 3000000 && exec \"$0\" \"$@\"")
        .arg(crate::common::iomark_bin())
        .args(["run", "--rw", "write", "--data-pool", "1g", "--jobs", "4"])
        .args(["--size", "64m", "--runtime", "1"])
        .arg(&target)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("of address space this process may still map (ulimit -v)"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!target.exists());
}

/// A build without MPI started by mpirun ran each task alone, all on the same target and
/// `-o`, and exited 0 (docs/scale-out.md says iomark refuses to let tasks run alone): it
/// refuses now, before any I/O, naming the launcher's variable and the build that has
/// MPI; a launcher of one task, and the commands that measure nothing, go on.
#[test]
fn a_build_without_mpi_refuses_to_run_as_several_tasks() {
    if std::env::var_os("IOMARK_TEST_BIN").is_none() && cfg!(feature = "mpi") {
        return; // this build has MPI: the launcher's variables mean a real job
    }
    let dir = tmp();
    let out_json = dir.path().join("r.json");
    // A short null-engine run as a launcher would start it.
    let run_under = |var: &str, value: &str| {
        iomark()
            .env(var, value)
            .args([
                "run",
                "--engine",
                "null",
                "--size",
                "1m",
                "--runtime",
                "100ms",
                "-o",
            ])
            .arg(&out_json)
            .output()
            .unwrap()
    };
    for (var, value, named) in [
        (
            "OMPI_COMM_WORLD_SIZE",
            "2",
            "one of 2 tasks of an MPI launcher (OMPI_COMM_WORLD_SIZE=2)",
        ),
        (
            "PMI_SIZE",
            "4",
            "one of 4 tasks of an MPI launcher (PMI_SIZE=4)",
        ),
        ("PMIX_RANK", "0", "by an MPI launcher (PMIX_RANK is set)"),
    ] {
        let out = run_under(var, value);
        assert_refused(&out, named);
        assert_refused(&out, "this build of iomark has no MPI");
        assert!(!out_json.exists(), "nothing measured, nothing written");
    }
    assert_success(&run_under("OMPI_COMM_WORLD_SIZE", "1"));
    let data = iomark()
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .args(["data", "--size", "4k", "-q", "-o", "-"])
        .output()
        .unwrap();
    assert_success(&data);
}

/// Each refusal names the problem it is about, in words that do not contradict it: a
/// block one byte larger than the span was "4 KiB larger than 4.0 KiB"; `--random-run 0`
/// with randread blamed the pattern ("with a random --rw (not randread)") and
/// `--random-run 4` with a sequential one asked for "at least 1"; `[]` was "not JSON".
#[test]
fn refusals_name_the_problem_they_are_about() {
    let dir = tmp();
    let empty = dir.path().join("e.json");
    std::fs::write(&empty, "[]\n").unwrap();
    let file = dir.path().join("f.dat");
    let f = file.to_str().unwrap();
    let cases: [(&[&str], &str, &str); 5] = [
        (
            &["run", "--engine", "null", "--size", "4095"],
            "--bs 4096 bytes is larger than the span --size 4095 bytes",
            "4.0 KiB",
        ),
        (
            &[
                "run",
                "--rw",
                "randread",
                "--random-run",
                "0",
                "--size",
                "1m",
                f,
            ],
            "--random-run 0: give at least 1 I/O per seek",
            "not randread",
        ),
        (
            &[
                "run",
                "--rw",
                "read",
                "--random-run",
                "4",
                "--size",
                "1m",
                f,
            ],
            "--rw read is sequential",
            "at least 1",
        ),
        (
            &["report", empty.to_str().unwrap()],
            "is JSON but neither an iomark results document",
            "is not JSON",
        ),
        (
            &["compare", empty.to_str().unwrap(), empty.to_str().unwrap()],
            "is JSON but neither",
            "is not JSON",
        ),
    ];
    for (args, want, not) in cases {
        let out = iomark().args(args).output().unwrap();
        assert_refused(&out, want);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains(not), "`iomark {}`: {err}", args.join(" "));
    }
    assert!(!file.exists(), "a refused run creates nothing");
}

/// Writing an existing empty file without `--size` was told "use a smaller --bs or a
/// larger --size", where no --bs could help: now it is told to give a --size.
#[test]
fn writing_an_empty_file_asks_for_a_size() {
    let dir = tmp();
    let f = dir.path().join("empty.dat");
    std::fs::write(&f, b"").unwrap();
    let out = iomark()
        .args(["run", "--rw", "write", "--overwrite"])
        .arg(&f)
        .output()
        .unwrap();
    assert_refused(
        &out,
        "is empty (0 B), and without --size its length is the span; give a --size",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("smaller --bs"), "{err}");
}

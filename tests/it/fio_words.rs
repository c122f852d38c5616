//! Words iomark says about fio's job files and fio's own output (session 13, helper F):
//! each refusal, label and note says what the job file or fio's output says, in its
//! terms.

use std::path::Path;

use crate::common::*;

/// `iomark fio JOB` refused in one line: its stderr.
fn fio_refusal(job: &Path) -> String {
    let out = iomark()
        .current_dir(job.parent().unwrap())
        .arg("fio")
        .arg(job.file_name().unwrap())
        .args(["-o", "r.json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

/// Item 1: the memory and AIO checks named iomark's `--jobs`/`--qd` in a job file's
/// refusal (`--jobs 1 x iodepth=4096`, `numjobs=1000 x --qd 1`, `numjobs 10 x
/// iodepth 4096` with the section's line only): each is now the file's key with its
/// value and line, or fio's default named as such, and a group's refusal names the job
/// that asks most.
#[test]
fn job_file_memory_and_aio_refusals_name_the_files_keys_and_lines() {
    let dir = tmp();
    let d = dir.path().display();
    // 4096 x 16 MiB buffers: 64 GiB, refused where less than 128 GiB is available.
    if !require(
        "less than 128 GiB of memory available",
        mem_available() < 128 << 30,
    ) {
        return;
    }
    let job = dir.path().join("mem.fio");
    std::fs::write(
        &job,
        format!("[a]\nioengine=io_uring\niodepth=4096\nbs=16m\nfilename={d}/a.dat\nsize=16m\n"),
    )
    .unwrap();
    let err = fio_refusal(&job);
    assert!(
        err.contains("mem.fio:3 [a]: numjobs=1 (the default) x iodepth=4096 x bs")
            && err.contains("lower numjobs, iodepth or bs"),
        "{err}"
    );
    assert!(!err.contains("--"), "no iomark flag: {err}");
    // A group: the second job is the one refused, with its own lines and the global's.
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=io_uring\nbs=16m\nsize=16m\niodepth=4096\n\
             [a]\nfilename={d}/a.dat\niodepth=1\n[b]\nfilename={d}/b.dat\n"
        ),
    )
    .unwrap();
    let err = fio_refusal(&job);
    assert!(
        err.contains("mem.fio:5 [b]: numjobs=1 (the default) x iodepth=4096 x bs"),
        "{err}"
    );
    assert!(!err.contains("--"), "no iomark flag: {err}");

    // AIO events: jobs of QD 4096 past fs.aio-max-nr, the later job asking more.
    let read = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/fs/{f}"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    let (Some(max), Some(used)) = (read("aio-max-nr"), read("aio-nr")) else {
        require("/proc/sys/fs/aio-max-nr and aio-nr", false);
        return;
    };
    let jobs = max.saturating_sub(used) / 4096 + 1;
    if !require("at most 64 jobs of QD 4096 pass fs.aio-max-nr", jobs <= 64) {
        return;
    }
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=libaio\ndirect=1\nsize=1m\niodepth=4096\n\
             [a]\nfilename={d}/a.dat\n[b]\nfilename={d}/b.dat\nnumjobs={jobs}\n"
        ),
    )
    .unwrap();
    let err = fio_refusal(&job);
    assert!(
        err.contains(&format!(
            "mem.fio:10 [b]: numjobs={jobs} x iodepth=4096 (mem.fio:5) with ioengine=libaio (mem.fio:2) needs"
        )) && err.contains("lower numjobs or iodepth"),
        "{err}"
    );
    assert!(!err.contains("--"), "no iomark flag: {err}");
}

/// The cells of the HTML table row whose first cell is `first` (every such row).
fn html_rows(page: &str, first: &str) -> Vec<Vec<String>> {
    let start = format!("<tr><td>{first}</td>");
    page.match_indices(&start)
        .map(|(i, _)| {
            let row = &page[i..i + page[i..].find("</tr>").unwrap()];
            row.split("<td>")
                .skip(1)
                .map(|c| c.trim_end_matches("</td>").to_string())
                .collect()
        })
        .collect()
}

/// Item 2: the "(sum)" row of a reader and a writer measured together showed the
/// group's total IOPS beside the reads' latencies alone (probe 12, section 8). The sum
/// row now has no latency, and a row for each direction gives its own: the group's
/// reads are the reader's alone and its writes the writer's, so each direction's row has
/// that job's own percentiles.
#[test]
fn a_groups_sum_row_gives_each_directions_latencies_with_its_figures() {
    let dir = tmp();
    let job = dir.path().join("g.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=psync\nsize=4m\nbs=4k\nruntime=0.3\ntime_based\ngroup_reporting\n\
         [r]\nfilename=${DIR}/r.dat\nrw=randread\n[w]\nfilename=${DIR}/w.dat\nrw=randwrite\n",
    )
    .unwrap();
    let doc = iomark_fio_json(&job, dir.path(), &[]);
    let res = write_json(dir.path(), "g.json", &doc);
    let page = report(&[res.as_path()], &dir.path().join("g.html"));
    let sum = html_rows(&page, "group: r + w (sum)");
    assert_eq!(sum.len(), 2, "a sum row under each job");
    for row in &sum {
        assert_eq!((row[4].as_str(), row[5].as_str()), ("-", "-"), "{row:?}");
    }
    for (job, dir) in [("r", "read"), ("w", "write")] {
        let own = html_rows(&page, job);
        let own = own.iter().find(|r| r[1] != dir).expect("the job's own row");
        let by_dir = html_rows(&page, &format!("group: r + w (sum): {dir}"));
        assert_eq!(by_dir.len(), 2, "{dir} under each job");
        for row in &by_dir {
            // p50 and p99, and the I/Os iomark counted.
            assert_eq!(row[4..7], own[4..7], "{dir}: {row:?} vs {own:?}");
        }
    }
}

/// fio run on `job` (in its directory) with `--output-format=FORMAT` into `out`; `false`
/// (after `require`) without fio.
fn run_fio(job: &Path, format: &str, out: &Path) -> bool {
    if !require_tool("fio", "fio (apt install fio)") {
        return false;
    }
    let o = std::process::Command::new("fio")
        .current_dir(job.parent().unwrap())
        .arg(format!("--output-format={format}"))
        .arg("--output")
        .arg(out)
        .arg(job)
        .output()
        .unwrap();
    assert!(out.exists(), "fio wrote nothing: {o:?}");
    true
}

/// `iomark report FILE --format md` (expects success).
fn report_md(file: &Path) -> String {
    let md = stdout_of(&["report", file.to_str().unwrap(), "--format", "md"]);
    String::from_utf8(md).unwrap()
}

/// Item 3: a fio job that failed (its `error` 22: direct I/O of 1000-byte blocks) was
/// imported with the note "fio did not report p50, … (clat_percentiles=0 or a
/// percentile_list without them)": the job asked for them; it failed. The note says so,
/// with fio's error.
#[test]
fn a_failed_fio_jobs_missing_percentiles_are_put_down_to_its_failure() {
    let dir = tmp();
    let job = dir.path().join("f.fio");
    std::fs::write(
        &job,
        "[a]\nfilename=f.dat\nsize=1m\ndirect=1\nbs=1000\nrw=randread\nioengine=psync\n",
    )
    .unwrap();
    let out = dir.path().join("f.json");
    if !run_fio(&job, "json", &out) {
        return;
    }
    let err = read_json(&out)["jobs"][0]["error"].as_i64().unwrap();
    assert_ne!(err, 0, "fio's job failed");
    let md = report_md(&out);
    assert!(
        md.contains(&format!(
            "- a (fio): the job failed (fio error {err}: Invalid argument): fio reported no p50, p90, p99"
        )),
        "{md}"
    );
    assert!(!md.contains("clat_percentiles=0"), "{md}");
}

/// The cell of column `col` in the md table row of `run` and `dir`.
fn md_cell(md: &str, run: &str, dir: &str, col: &str) -> String {
    let header: Vec<&str> = (md.lines())
        .find(|l| l.starts_with("| run |"))
        .unwrap_or_else(|| panic!("{md}"))
        .split(" | ")
        .collect();
    let at = header
        .iter()
        .position(|h| h.trim_matches('|').trim() == col);
    let row = (md.lines())
        .find(|l| l.starts_with(&format!("| {run} | {dir} |")))
        .unwrap_or_else(|| panic!("no row {run} {dir}: {md}"));
    row.split(" | ").nth(at.unwrap()).unwrap().to_string()
}

/// Item 4: a `group_reporting` entry of different jobs, imported from
/// `--output-format=json,normal`, had 1 in its `jobs` column (the last job's numjobs)
/// although fio's normal text says how many jobs the group holds ("(groupid=0,
/// jobs=3)"): the column is that number now, and "?" from the JSON alone, which does not
/// say.
#[test]
fn a_group_reporting_entrys_jobs_are_fios_count_or_unknown() {
    let dir = tmp();
    let job = dir.path().join("g.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=psync\nsize=1m\nfilename=g.dat\ngroup_reporting\nbs=4k\n\
         [r]\nrw=randread\nnumjobs=2\n[w]\nrw=randwrite\n",
    )
    .unwrap();
    let both = dir.path().join("g.out");
    if !run_fio(&job, "json,normal", &both) {
        return;
    }
    let text = std::fs::read_to_string(&both).unwrap();
    let fios = text
        .split("(groupid=0, jobs=")
        .nth(1)
        .and_then(|t| t.split(')').next())
        .unwrap_or_else(|| panic!("fio's text names the group's jobs: {text}"));
    assert_eq!(fios, "3", "fio's own count: {text}");
    let md = report_md(&both);
    for dir in ["read", "write"] {
        assert_eq!(
            md_cell(&md, "group of 3 jobs: r, w (fio)", dir, "jobs"),
            fios
        );
    }
    let json = dir.path().join("g.json");
    run_fio(&job, "json", &json);
    let md = report_md(&json);
    for dir in ["read", "write"] {
        assert_eq!(md_cell(&md, "group of jobs: r, … (fio)", dir, "jobs"), "?");
    }
    assert!(md.contains("jobs shown as ?"), "{md}");
}

/// Item 6: fio's terse output names no options, yet its import showed "buffered", qd 1
/// and jobs 1 (iomark's defaults) as if known, against a job of direct=1, iodepth=4 and
/// numjobs=2: every report format now shows them unknown.
#[test]
fn terse_imports_show_what_terse_does_not_say_as_unknown() {
    let dir = tmp();
    let job = dir.path().join("t.fio");
    std::fs::write(
        &job,
        "[a]\nfilename=t.dat\nsize=1m\ndirect=1\niodepth=4\nioengine=libaio\nrw=randread\n\
         bs=4k\nnumjobs=2\ngroup_reporting\n",
    )
    .unwrap();
    let terse = dir.path().join("t.terse");
    if !run_fio(&job, "terse", &terse) {
        return;
    }
    let md = report_md(&terse);
    for (col, job_says) in [("qd", "4"), ("jobs", "2"), ("io", "direct")] {
        let cell = md_cell(&md, "a (fio)", "read", col);
        assert_eq!(cell, "?", "{col}: the job says {job_says}; {md}");
    }
    let csv = stdout_of(&["report", terse.to_str().unwrap(), "--format", "csv"]);
    let csv = String::from_utf8(csv).unwrap();
    let row = csv.lines().nth(1).unwrap();
    assert!(row.starts_with("a (fio),read,,,,read,4k,?,?,?,"), "{csv}");
    let json = stdout_of(&["report", terse.to_str().unwrap(), "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let fio = &doc["runs"][0]["fio"];
    assert_eq!(
        fio["unknown"],
        serde_json::json!(["target", "engine", "qd", "jobs", "direct", "data", "seed"])
    );
    assert_eq!(fio["ioengine"], "?", "{fio}");
    assert_eq!(
        doc["runs"][0]["target"]["kind"], "unknown",
        "not said: not file"
    );
    // Session 14, item 6: the JSON's spec held iomark's defaults (psync, qd 1, jobs 1,
    // buffered) as if fio had said them, against the job's libaio, 4, 2 and direct=1.
    let spec = &doc["runs"][0]["spec"];
    for k in ["engine", "qd", "jobs", "direct"] {
        assert!(spec[k].is_null(), "spec.{k} unknown: {spec}");
    }
    // The JSON reads back: report and compare show them unknown still.
    let back = write_json(dir.path(), "t.json", &doc);
    let md = report_md(&back);
    for col in ["qd", "jobs", "io"] {
        assert_eq!(md_cell(&md, "a (fio)", "read", col), "?", "{col}: {md}");
    }
    let cmp = compare_json(&[back.clone(), back.clone()]);
    assert!(cmp["rows"][0]["cells"][1]["differs"].is_array(), "{cmp}");
    let page = report(&[terse.as_path()], &dir.path().join("t.html"));
    assert!(
        page.contains("? on ? (file or device, not known, span unknown) · ? · 1 repetition(s)"),
        "the run's line: engine, file and direct unknown"
    );
    assert!(
        !page.contains("psync") && !page.contains("buffered ·"),
        "nothing invented"
    );
}

/// Item 5: a fio job without `filename` (fio names its files `a.0.0`, `a.1.0`, … after
/// the job, in `directory`) was imported as a run "on a" (the job's name): it is now
/// labelled with the files fio made, checked against the files fio left in the directory.
#[test]
fn a_fio_job_without_filename_is_labelled_with_the_files_fio_made() {
    let dir = tmp();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let job = dir.path().join("n.fio");
    std::fs::write(
        &job,
        "[global]\nsize=256k\nrw=randread\nbs=4k\n[a]\nnumjobs=2\n\
         [b]\nstonewall\ndirectory=sub\nnrfiles=2\n",
    )
    .unwrap();
    let out = dir.path().join("n.json");
    if !run_fio(&job, "json", &out) {
        return;
    }
    let page = report(&[out.as_path()], &dir.path().join("n.html"));
    for (run, files) in [
        ("a", vec!["a.0.0", "a.1.0"]),
        ("b", vec!["sub/b.0.0", "sub/b.0.1"]),
    ] {
        for f in &files {
            assert!(dir.path().join(f).is_file(), "fio made {f}");
        }
        let line = format!("psync on {} (file, span", files.join(", "));
        assert!(page.contains(&line), "{run}: {line} in the page");
    }
}

/// Item 7: `iomark fio --dry-run` said every file the study makes was the first job's
/// size ("… f1.dat, f2.dat is made for the study (16 MiB)") where `nrfiles=3` files are a
/// third of `size` each and `filename=f1:f2` files half of it: the plan now gives each
/// file with its length (in its text and as `files_made` in its JSON), and the real run
/// (with --keep) makes exactly those.
#[test]
fn the_dry_run_lists_each_file_with_the_length_the_run_makes_it() {
    let dir = tmp();
    let job = dir.path().join("s.fio");
    std::fs::write(
        &job,
        "[global]\ndirectory=${DIR}\nsize=1m\nioengine=psync\nbs=4k\n\
         [a]\nrw=randread\nnumjobs=2\n\
         [b]\nstonewall\nrw=write\nnrfiles=3\n\
         [c]\nstonewall\nrw=randwrite\nfilename=f1.dat:f2.dat\nsize=512k\n",
    )
    .unwrap();
    let plan = |json: bool| {
        let mut cmd = iomark();
        cmd.arg("fio")
            .arg(&job)
            .arg("--dry-run")
            .env("DIR", dir.path());
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert_success(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let doc: serde_json::Value = serde_json::from_str(&plan(true)).unwrap();
    let planned: Vec<(String, u64)> = (doc["files_made"].as_array())
        .unwrap_or_else(|| panic!("files_made in {doc}"))
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    let d = dir.path().display();
    let third = (1 << 20) / 3;
    // a's copies: one file or one each, as iomark runs them; each of size.
    for (path, len) in &planned {
        if path.contains("/a.") {
            assert_eq!(*len, 1 << 20, "{path}");
        }
    }
    let rest: Vec<(String, u64)> = planned
        .iter()
        .filter(|(p, _)| !p.contains("/a."))
        .cloned()
        .collect();
    let want = [
        (format!("{d}/b.0.0"), third),
        (format!("{d}/b.0.1"), third),
        (format!("{d}/b.0.2"), third),
        (format!("{d}/f1.dat"), 256 << 10),
        (format!("{d}/f2.dat"), 256 << 10),
    ];
    assert_eq!(rest, want);
    let text = plan(false);
    assert!(
        text.contains(&format!(
            "{d}/b.0.0, {d}/b.0.1, {d}/b.0.2 (341.3 KiB each), \
             {d}/f1.dat, {d}/f2.dat (256 KiB each) are made for the study"
        )),
        "{text}"
    );
    // The run makes what the plan said (ls -l).
    let out = iomark()
        .arg("fio")
        .arg(&job)
        .args(["--keep", "-q", "-o"])
        .arg(dir.path().join("r.json"))
        .env("DIR", dir.path())
        .output()
        .unwrap();
    assert_success(&out);
    let mut made: Vec<(String, u64)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| !["s.fio", "r.json"].contains(&e.file_name().to_str().unwrap()))
        .map(|e| (e.path().display().to_string(), e.metadata().unwrap().len()))
        .collect();
    made.sort();
    let mut planned = planned;
    planned.sort();
    assert_eq!(made, planned, "ls -l after the run against the plan");
}

/// Session 14, item 1: a `verify=` refusal said `--rw read` (an iomark flag, a value the
/// file did not give) and `verify` without the file's value: it names the file's
/// `verify=md5` at its line and `rw=read (the default)`, or the file's `rw` line.
#[test]
fn a_verify_refusal_names_the_files_verify_and_rw() {
    let dir = tmp();
    let job = dir.path().join("v.fio");
    let d = dir.path().display();
    std::fs::write(
        &job,
        format!("[global]\nsize=8m\nfilename={d}/v.dat\n\n[v]\nverify=md5\n"),
    )
    .unwrap();
    let err = fio_refusal(&job);
    assert!(
        err.contains(
            "v.fio:6 [v]: verify=md5 checks what a run writes, and rw=read (the default) writes nothing"
        ),
        "{err}"
    );
    assert!(!err.contains("--"), "no iomark flag: {err}");
    std::fs::write(
        &job,
        format!("[v]\nrw=trim\nsize=8m\nfilename={d}/v.dat\nverify=crc32c\n"),
    )
    .unwrap();
    let err = fio_refusal(&job);
    assert!(
        err.contains(
            "v.fio:5 [v]: verify=crc32c reads back what was written, and rw=trim (v.fio:2) discards blocks; drop verify=crc32c"
        ),
        "{err}"
    );
}

/// Session 14, item 3: a value iomark words otherwise than the file (`bs 16 MiB` for
/// `bs=16m`, `io_size=512 B` for `io_size=512`) was a bare key, or the file's text with
/// iomark's unit after it: each is the file's own `key=value`, and a block size the
/// file leaves unset is fio's default, named as such.
#[test]
fn job_file_refusals_give_values_as_the_file_writes_them() {
    let dir = tmp();
    let job = dir.path().join("s.fio");
    let d = dir.path().display();
    let cases = [
        (
            "bs=16m\nsize=8m\n",
            "s.fio:3 [a]: bs=16m is larger than the span size=8m (s.fio:4); use a smaller bs or a larger size",
        ),
        (
            "bs=1k\nio_size=512\nsize=8m\n",
            "s.fio:4 [a]: io_size=512 is smaller than bs=1k (s.fio:3); each job must move",
        ),
        (
            "rw=write\nbuffer_compress_percentage=50\nbuffer_compress_chunk=3k\nsize=8m\n",
            "s.fio:5 [a]: buffer_compress_chunk=3k does not divide bs=4k (the default);",
        ),
    ];
    for (lines, want) in cases {
        std::fs::write(&job, format!("[a]\nfilename={d}/a.dat\n{lines}")).unwrap();
        let err = fio_refusal(&job);
        assert!(err.contains(want), "{want}\n{err}");
        assert!(!err.contains("--"), "no iomark flag: {err}");
    }
}

/// Session 14, item 4: fio's output does not say whether a job's `filename` is a file or
/// a device, and an import said "file" of any name outside /dev. Now: the files fio
/// made for a job without `filename` are files (fio left them in the directory), a
/// `filename` in /dev/ is a device, any other name is not known, in the JSON and HTML.
#[test]
fn an_imported_targets_kind_is_what_its_name_says_or_unknown() {
    let dir = tmp();
    let job = dir.path().join("k.fio");
    let d = dir.path().display();
    std::fs::write(
        &job,
        format!("[global]\nsize=256k\nrw=randread\nbs=4k\n[own]\n[named]\nfilename={d}/f.dat\n"),
    )
    .unwrap();
    let out = dir.path().join("k.json");
    if !run_fio(&job, "json", &out) {
        return;
    }
    assert!(dir.path().join("own.0.0").is_file(), "fio made own.0.0");
    let kinds = |file: &Path| {
        let json = stdout_of(&["report", file.to_str().unwrap(), "--format", "json"]);
        let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let runs = doc["runs"].as_array().unwrap().clone();
        (runs.iter())
            .map(|r| r["target"]["kind"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds(&out), ["file", "unknown"]);
    let page = report(&[out.as_path()], &dir.path().join("k.html"));
    assert!(
        page.contains(&format!(
            "psync on {d}/f.dat (file or device, not known, span"
        )),
        "the named file's kind is not said to be file"
    );
    assert!(
        page.contains("psync on own.0.0 (file, span"),
        "fio's own file"
    );
    // The same output with the named file in /dev: a device; /dev/shm is a tmpfs.
    let text = std::fs::read_to_string(&out).unwrap();
    for (name, kind) in [
        ("/dev/loop9", "block_device"),
        ("/dev/shm/f.dat", "unknown"),
    ] {
        let moved = dir.path().join("dev.json");
        std::fs::write(&moved, text.replace(&format!("{d}/f.dat"), name)).unwrap();
        assert_eq!(kinds(&moved), ["file", kind], "{name}");
    }
}

/// Session 14, item 5: a job with several folders in `directory` (`d1:d2`) was labelled
/// `{d1:d2}/a.0.0, …`, and a job's `filename` without the `directory` fio opens it in:
/// each of fio's files is now named in the folder fio put it in (copy j in the j-th
/// folder, cycling; a `filename` in the first), checked against the files fio made.
#[test]
fn an_imported_jobs_files_are_in_the_folders_fio_put_them_in() {
    let dir = tmp();
    for d in ["d1", "d2"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    let job = dir.path().join("d.fio");
    std::fs::write(
        &job,
        "[global]\nsize=64k\nrw=read\nbs=4k\ndirectory=d1:d2\n\
         [a]\nnumjobs=3\n[n]\nfilename=f.dat\n",
    )
    .unwrap();
    let out = dir.path().join("d.json");
    if !run_fio(&job, "json", &out) {
        return;
    }
    let page = report(&[out.as_path()], &dir.path().join("d.html"));
    for (run, files) in [
        ("a", vec!["d1/a.0.0", "d2/a.1.0", "d1/a.2.0"]),
        ("n", vec!["d1/f.dat"]),
    ] {
        for f in &files {
            assert!(dir.path().join(f).is_file(), "fio made {f}");
        }
        let line = format!("psync on {} (", files.join(", "));
        assert!(page.contains(&line), "{run}: {line} in the page");
    }
    assert!(!page.contains("{d1:d2}"), "no folder list in a name");
}

/// The think-time and time_based words added this session, in a job file's run: the
/// refusal of a minimum the pauses make impossible names thinktime_blocks, and the note
/// of an io_size that time_based overrides names io_size and time_based (not iomark's
/// flags).
#[test]
fn think_time_and_time_based_words_are_the_files() {
    let dir = tmp();
    let slow = dir.path().join("slow.fio");
    std::fs::write(
        &slow,
        "[global]\nioengine=null\nsize=1g\nruntime=2\ntime_based\nrw=randread\n[slow]\nthinktime=20ms\nrate_iops_min=200\n",
    )
    .unwrap();
    let out = iomark().arg("fio").arg(&slow).output().unwrap();
    assert_refused(&out, "rate_iops_min=200 cannot be met");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("raise thinktime_blocks") && !err.contains("--"),
        "{err}"
    );
    let sized = dir.path().join("sized.fio");
    std::fs::write(
        &sized,
        "[global]\nioengine=null\nsize=64m\nbs=1m\nruntime=1\ntime_based\nio_size=16m\nrw=read\n[j]\n",
    )
    .unwrap();
    let out = iomark().arg("fio").arg(&sized).output().unwrap();
    assert_success(&out);
    let all =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        all.contains("does nothing with time_based") && all.contains("io_size="),
        "{all}"
    );
    assert!(
        !all.contains("--io-size") && !all.contains("--time-based"),
        "{all}"
    );
}

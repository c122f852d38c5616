//! Reading fio's output (issue 14, items 1–13): each case checked on fio output kept in
//! `tests/data/` (no fio needed) and on output fio writes now (skipped without fio unless
//! IOMARK_REQUIRE_ALL=1). Every imported figure is compared with fio's own numbers in the
//! same file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{compare_json, iomark, require_tool, stdout_of, tmp};

/// Runs fio in `dir` with `args`, its output to `<dir>/<name>.out`; `None` (skipped)
/// without fio. fio's exit status is not checked: a failing job is one of the cases.
fn fio(dir: &Path, name: &str, args: &[&str]) -> Option<PathBuf> {
    if !require_tool("fio", "fio (apt install fio)") {
        return None;
    }
    let out = dir.join(format!("{name}.out"));
    let o = Command::new("fio")
        .current_dir(dir)
        .args(args)
        .arg(format!("--output={}", out.display()))
        .output()
        .unwrap();
    assert!(
        out.exists(),
        "fio wrote nothing: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(out)
}

/// A job file in `dir`.
fn job_file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Every JSON report fio wrote in `path` (text around them skipped).
fn fio_reports(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    // Every line that starts with '{' may start a report.
    let starts = std::iter::once(0).chain(text.match_indices("\n{").map(|(i, _)| i + 1));
    let mut next = 0;
    for i in starts {
        if i < next || !text[i..].starts_with('{') {
            continue;
        }
        let mut it = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(v)) = it.next() {
            out.push(v);
            next = i + it.byte_offset();
        }
    }
    out
}

/// fio's job entries of the last report in `path`.
fn fio_jobs(path: &Path) -> Vec<Value> {
    let last = fio_reports(path).pop().expect("a fio JSON report");
    last.get("jobs")
        .or_else(|| last.get("client_stats"))
        .and_then(Value::as_array)
        .unwrap()
        .clone()
}

/// `iomark report PATH --format json`: the imported document.
fn import(path: &Path) -> Value {
    serde_json::from_slice(&stdout_of(&[
        "report",
        path.to_str().unwrap(),
        "--format",
        "json",
    ]))
    .unwrap()
}

fn markdown(path: &Path) -> String {
    String::from_utf8(stdout_of(&[
        "report",
        path.to_str().unwrap(),
        "--format",
        "md",
    ]))
    .unwrap()
}

fn html(path: &Path, dir: &Path) -> String {
    let page = dir.join("page.html");
    let o = iomark()
        .arg("report")
        .arg(path)
        .arg("-o")
        .arg(&page)
        .arg("--force")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(page).unwrap()
}

const PCT: [(&str, &str); 5] = [
    ("p50", "50.000000"),
    ("p90", "90.000000"),
    ("p99", "99.000000"),
    ("p999", "99.900000"),
    ("p9999", "99.990000"),
];

/// The run's figures of one direction equal fio's for that job: I/Os, bytes, IOPS,
/// bandwidth, and every latency figure from the section of the run's latency kind.
fn same_figures(run: &Value, job: &Value, dir: &str) {
    let ours = &run["repetitions"][0][dir];
    let f = &job[dir];
    assert_eq!(ours["ios"].as_u64(), f["total_ios"].as_u64(), "{dir} I/Os");
    assert_eq!(
        ours["bytes"].as_u64(),
        f["io_bytes"].as_u64(),
        "{dir} bytes"
    );
    assert_eq!(ours["iops"].as_f64(), f["iops"].as_f64(), "{dir} IOPS");
    assert_eq!(
        ours["bw_bytes"].as_f64(),
        f["bw_bytes"].as_f64(),
        "{dir} bandwidth"
    );
    let kind = run["latency_kind"].as_str().unwrap();
    let sec = &f[format!("{kind}_ns")];
    for k in ["min", "max"] {
        assert_eq!(
            ours["lat_ns"][k].as_u64(),
            sec[k].as_u64(),
            "{dir} {kind} {k}"
        );
    }
    assert_eq!(ours["lat_ns"]["mean"].as_f64(), sec["mean"].as_f64());
    let missing = &run["fio"]["missing_percentiles"];
    for (p, key) in PCT {
        match sec["percentile"][key].as_u64() {
            Some(v) => assert_eq!(ours["lat_ns"][p].as_u64(), Some(v), "{dir} {kind} {p}"),
            None => assert!(
                missing.as_array().is_some_and(|m| m.iter().any(|x| x == p)),
                "{dir} {p} absent in fio's output must be listed missing: {missing}"
            ),
        }
    }
}

fn runs(doc: &Value) -> &Vec<Value> {
    doc["runs"].as_array().unwrap()
}

// ---- item 1: engines -------------------------------------------------------------

fn check_engine(path: &Path, engine: &str, dir: &Path) {
    let doc = import(path);
    let run = &runs(&doc)[0];
    assert_eq!(run["fio"]["ioengine"], engine);
    same_figures(run, &fio_jobs(path)[0], "read");
    assert!(
        html(path, dir).contains(&format!("{engine} on ")),
        "the report names fio's engine {engine}"
    );
}

#[test]
fn engine_labels_are_fios() {
    let dir = tmp();
    check_engine(&data("fio-libaio.json"), "libaio", dir.path());
    for engine in ["sync", "mmap", "libaio", "posixaio"] {
        let Some(out) = fio(
            dir.path(),
            engine,
            &[
                "--name=e",
                "--filename=e.dat",
                "--size=1m",
                "--rw=randread",
                "--bs=4k",
                &format!("--ioengine={engine}"),
                "--output-format=json",
            ],
        ) else {
            return;
        };
        check_engine(&out, engine, dir.path());
    }
}

// ---- item 2: buffered=0 ----------------------------------------------------------

#[test]
fn buffered_0_is_direct_and_pairs_with_an_iomark_direct_run() {
    let dir = tmp();
    let Some(out) = fio(
        dir.path(),
        "b0",
        &[
            "--name=b0",
            "--filename=b.dat",
            "--size=4m",
            "--rw=randread",
            "--bs=4k",
            "--buffered=0",
            "--output-format=json",
        ],
    ) else {
        return;
    };
    let doc = import(&out);
    assert_eq!(runs(&doc)[0]["spec"]["direct"], true);
    same_figures(&runs(&doc)[0], &fio_jobs(&out)[0], "read");
    let target = dir.path().join("i.dat");
    let args = [
        "run",
        "--rw",
        "randread",
        "--size",
        "4m",
        target.to_str().unwrap(),
    ];
    pairs_in_compare(dir.path(), out, &args);
}

/// `compare` of fio's document `fio_doc` and an iomark run of `args` pairs them in one
/// row with figures on both sides.
fn pairs_in_compare(dir: &Path, fio_doc: PathBuf, args: &[&str]) {
    let mine = dir.join("mine.json");
    let o = iomark()
        .args(args)
        .args(["-q", "-o"])
        .arg(&mine)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = compare_json(&[fio_doc, mine]);
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "one matched row: {c}");
    let cells = rows[0]["cells"].as_array().unwrap();
    assert!(cells.iter().all(|x| !x.is_null()), "{c}");
}

// ---- items 3 and 4: block sizes and fio's units -----------------------------------

/// `spec.bs` is the average transfer fio did (bytes ÷ I/Os of the main direction; of the
/// reads, and `spec.write_bs` of the writes, in a mix whose sizes differ), and the
/// block-size label is `label`.
fn check_bs(path: &Path, label: &str) {
    let doc = import(path);
    let run = &runs(&doc)[0];
    let job = &fio_jobs(path)[0];
    let avg =
        |d: &Value| (d["io_bytes"].as_f64().unwrap() / d["total_ios"].as_f64().unwrap()).round();
    let pair = run["spec"].get("write_bs").is_some();
    let main = if pair || job["read"]["total_ios"].as_u64() >= job["write"]["total_ios"].as_u64() {
        &job["read"]
    } else {
        &job["write"]
    };
    assert_eq!(run["spec"]["bs"].as_f64(), Some(avg(main)), "{label}");
    if pair {
        assert_eq!(
            run["spec"]["write_bs"]["bs"].as_f64(),
            Some(avg(&job["write"])),
            "{label}"
        );
    }
    let got = run["fio"]["bs"].as_str().unwrap();
    assert!(got.starts_with(label), "{got} should start with {label}");
    for d in ["read", "write"] {
        if job[d]["total_ios"].as_u64() > Some(0) {
            same_figures(run, job, d);
        }
    }
    assert!(markdown(path).contains(label));
}

#[test]
fn an_imported_block_size_mix_pairs_with_iomarks_in_compare() {
    // fio's bssplit becomes iomark's block-size mix, so `compare` pairs the fio job with
    // an iomark run of the same mix (before: keyed by the average size, never paired).
    let fixture = data("fio-bssplit.json");
    let doc = import(&fixture);
    let mix = &runs(&doc)[0]["spec"]["bs_mix"];
    assert_eq!(mix["split"][1]["bs"], 65536, "{mix}");
    let dir = tmp();
    let args = [
        "run", "--engine", "null", "--rw", "randread", "--size", "4m",
    ];
    let mix = ["--bssplit", "4k/50:64k/50", "--buffered"];
    pairs_in_compare(dir.path(), fixture, &[&args[..], &mix].concat());
}

#[test]
fn block_size_mixes_and_fios_units() {
    check_bs(&data("fio-bssplit.json"), "bssplit 4k/50:64k/50");
    let dir = tmp();
    let cases: [(&str, &[&str], &str); 6] = [
        ("split", &["--bssplit=4k/50:64k/50"], "bssplit 4k/50:64k/50"),
        ("range", &["--bsrange=4k-16k"], "bsrange 4k-16k"),
        ("kib", &["--bs=4KiB"], "4000"),
        ("kb", &["--bs=64kb"], "64k"),
        ("big", &["--bs=4KB"], "4k"),
        ("pair", &["--bs=4k,64k", "--rw=randrw"], "4k,64k"),
    ];
    for (name, extra, label) in cases {
        let mut args = vec![
            "--name=b",
            "--ioengine=null",
            "--size=16m",
            "--rw=randread",
            "--output-format=json",
        ];
        args.extend(extra);
        let Some(out) = fio(dir.path(), name, &args) else {
            return;
        };
        check_bs(&out, label);
    }
    // kb_base=1000 in a job file: k is 1000 and KiB 1024.
    let jf = job_file(
        dir.path(),
        "kb.fio",
        "[global]\nkb_base=1000\nioengine=null\nsize=16m\n[a]\nbs=4k\n",
    );
    if let Some(out) = fio(dir.path(), "kb1000", &[&jf, "--output-format=json"]) {
        check_bs(&out, "4000");
    }
}

// ---- item 5: one name in several stonewall groups ---------------------------------

fn check_groups(path: &Path) {
    let doc = import(path);
    let jobs = fio_jobs(path);
    let rs = runs(&doc);
    assert_eq!(rs.len(), jobs.len(), "one run per group and name");
    for (run, job) in rs.iter().zip(&jobs) {
        let g = job["groupid"].as_u64().unwrap();
        assert_eq!(run["fio"]["groupid"].as_u64(), Some(g));
        assert!(
            run["name"]
                .as_str()
                .unwrap()
                .contains(&format!("group {g}"))
        );
        for d in ["read", "write"] {
            if job[d]["total_ios"].as_u64() > Some(0) {
                same_figures(run, job, d);
            }
        }
    }
}

#[test]
fn one_name_in_two_stonewall_groups_is_two_runs() {
    check_groups(&data("fio-stonewall.json"));
    let dir = tmp();
    let jf = job_file(
        dir.path(),
        "sg.fio",
        "[global]\nioengine=null\nsize=4m\n[a]\nrw=randread\nbs=4k\n[a]\nstonewall\nrw=randwrite\nbs=64k\n",
    );
    if let Some(out) = fio(dir.path(), "sg", &[&jf, "--output-format=json"]) {
        check_groups(&out);
    }
}

// ---- item 6: group_reporting over different jobs ----------------------------------

fn check_group_reporting(path: &Path, name: &str) {
    let doc = import(path);
    let run = &runs(&doc)[0];
    assert_eq!(runs(&doc).len(), 1);
    assert!(
        run["name"].as_str().unwrap().starts_with(name),
        "{} should start with {name}",
        run["name"]
    );
    assert!(
        run["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("last job's")),
        "{}",
        run["warnings"]
    );
    let job = &fio_jobs(path)[0];
    same_figures(run, job, "read");
    same_figures(run, job, "write");
    every_direction_shown(path, job);
}

/// Every direction of a group entry that did I/O is reported: a row each in md, csv
/// and HTML with fio's IOPS, and its latencies compared in `compare`.
fn every_direction_shown(path: &Path, job: &Value) {
    let dir = tmp();
    let md = markdown(path);
    let csv = String::from_utf8(stdout_of(&[
        "report",
        path.to_str().unwrap(),
        "--format",
        "csv",
    ]))
    .unwrap();
    let page = html(path, dir.path());
    let cmp = compare_json(&[path.to_path_buf(), path.to_path_buf()]);
    let tests = cmp["rows"][0]["cells"][0]["tests"].as_array().unwrap();
    for d in ["read", "write"] {
        assert!(job[d]["total_ios"].as_u64().unwrap() > 0, "fio did {d}s");
        let iops = format!("{:.0}", job[d]["iops"].as_f64().unwrap());
        assert!(
            md.lines()
                .any(|l| l.contains(&format!("| {d} |")) && l.contains(&format!("| {iops} |"))),
            "no {d} row with fio's {iops} IOPS in:\n{md}"
        );
        assert!(
            csv.lines()
                .any(|l| l.contains(&format!(",{d},")) && l.contains(&format!(",{iops},"))),
            "no {d} row in:\n{csv}"
        );
        assert!(
            page.contains(&format!("<td>{d}</td>")) && page.contains(&format!("<td>{iops}</td>")),
            "no {d} row in the HTML summary"
        );
        for f in ["lat_p50_ns", "lat_p99_ns"] {
            assert!(
                tests
                    .iter()
                    .any(|t| t["figure"] == f && t["direction"] == d),
                "compare has no {f} of {d}s: {tests:?}"
            );
        }
    }
}

#[test]
fn group_reporting_over_different_jobs_says_so() {
    check_group_reporting(
        &data("fio-group-reporting.out"),
        "group of 2 jobs: first, second",
    );
    let dir = tmp();
    let jf = job_file(
        dir.path(),
        "gr.fio",
        "[global]\nioengine=null\nsize=4m\ngroup_reporting=1\n[first]\nrw=randread\nbs=4k\n[second]\nrw=randwrite\nbs=64k\n",
    );
    let Some(j) = fio(dir.path(), "gr", &[&jf, "--output-format=json"]) else {
        return;
    };
    // JSON alone does not say how many jobs or which.
    check_group_reporting(&j, "group of jobs: first");
    let n = fio(dir.path(), "grn", &[&jf, "--output-format=json,normal"]).unwrap();
    check_group_reporting(&n, "group of 2 jobs: first, second");
    // --group_reporting on fio's command line is not in its JSON options at all.
    let c = fio(
        dir.path(),
        "grc",
        &[
            "--ioengine=null",
            "--size=4m",
            "--group_reporting",
            "--name=first",
            "--rw=randread",
            "--name=second",
            "--rw=randwrite",
            "--bs=64k",
            "--output-format=json",
        ],
    )
    .unwrap();
    check_group_reporting(&c, "group of jobs: first");
}

// ---- items 7 and 13: which latency, and missing percentiles -----------------------

fn check_latency(path: &Path, kind: &str, missing: &[&str], dir: &Path) {
    let doc = import(path);
    let run = &runs(&doc)[0];
    assert_eq!(run["latency_kind"], kind);
    let got: Vec<&str> = run["fio"]["missing_percentiles"]
        .as_array()
        .map(|a| a.iter().map(|x| x.as_str().unwrap()).collect())
        .unwrap_or_default();
    assert_eq!(got, missing);
    same_figures(run, &fio_jobs(path)[0], "read");
    let md = markdown(path);
    let row = md.lines().find(|l| l.contains("(fio)")).unwrap();
    assert_eq!(latency_cell(&md, row), kind, "{row}");
    if missing.contains(&"p99") {
        assert!(row.contains("| n/a |"), "{row}");
    }
    assert!(html(path, dir).contains(&format!("Latency percentiles ({kind}:")));
}

#[test]
fn latency_kind_and_missing_percentiles() {
    let dir = tmp();
    check_latency(&data("fio-randread.json"), "clat", &[], dir.path());
    check_latency(
        &data("fio-percentile-list.json"),
        "clat",
        &["p90", "p99", "p999", "p9999"],
        dir.path(),
    );
    let cases: [(&str, &str, &str, &[&str]); 3] = [
        ("lat", "--lat_percentiles=1", "lat", &[]),
        (
            "none",
            "--clat_percentiles=0",
            "lat",
            &["p50", "p90", "p99", "p999", "p9999"],
        ),
        (
            "list",
            "--percentile_list=50:95",
            "clat",
            &["p90", "p99", "p999", "p9999"],
        ),
    ];
    for (name, arg, kind, missing) in cases {
        let Some(out) = fio(
            dir.path(),
            name,
            &[
                "--name=l",
                "--ioengine=null",
                "--size=4m",
                "--rw=randread",
                arg,
                "--output-format=json",
            ],
        ) else {
            return;
        };
        check_latency(&out, kind, missing, dir.path());
    }
}

#[test]
fn an_iomark_document_without_latency_kind_still_loads_as_lat() {
    let dir = tmp();
    let mine = dir.path().join("mine.json");
    let o = iomark()
        .args(["run", "--rw", "randread", "--size", "1m", "-q", "-o"])
        .arg(&mine)
        .arg(dir.path().join("i.dat"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&mine).unwrap()).unwrap();
    assert_eq!(doc["runs"][0]["latency_kind"], "lat");
    doc["runs"][0]
        .as_object_mut()
        .unwrap()
        .remove("latency_kind");
    std::fs::write(&mine, doc.to_string()).unwrap();
    let md = markdown(&mine);
    let row = md.lines().find(|l| l.starts_with("| randread")).unwrap();
    assert_eq!(latency_cell(&md, row), "lat", "{md}");
}

/// The `latency` column's cell of a Markdown table's `row`.
fn latency_cell<'a>(md: &str, row: &'a str) -> &'a str {
    let header = md.lines().find(|l| l.starts_with("| run |")).unwrap();
    let at = (header.split('|').map(str::trim))
        .position(|h| h == "latency")
        .unwrap();
    row.split('|').map(str::trim).nth(at).unwrap()
}

// ---- item 8: verify --------------------------------------------------------------

fn check_verify(path: &Path) {
    let doc = import(path);
    let run = &runs(&doc)[0];
    let job = &fio_jobs(path)[0];
    assert!(job["read"]["total_ios"].as_u64() > Some(0), "fio read back");
    same_figures(run, job, "write");
    assert_eq!(run["repetitions"][0]["read"]["ios"], 0);
    let total = run["summary"]["read"]["iops"]["mean"].as_f64().unwrap()
        + run["summary"]["write"]["iops"]["mean"].as_f64().unwrap();
    assert_eq!(
        Some(total),
        job["write"]["iops"].as_f64(),
        "IOPS are the write phase's"
    );
    assert_eq!(
        run["summary"]["write"]["lat_p99_ns"]["mean"].as_f64(),
        job["write"]["clat_ns"]["percentile"]["99.000000"].as_f64()
    );
    assert!(
        run["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("verify phase"))
    );
}

#[test]
fn a_verify_jobs_write_and_verify_phases_are_not_added() {
    check_verify(&data("fio-verify.json"));
    let dir = tmp();
    if let Some(out) = fio(
        dir.path(),
        "v",
        &[
            "--name=v",
            "--filename=v.dat",
            "--size=4m",
            "--rw=randwrite",
            "--bs=4k",
            "--verify=crc32c",
            "--output-format=json",
        ],
    ) {
        check_verify(&out);
    }
}

// ---- item 9: a failed job ---------------------------------------------------------

fn check_failed(path: &Path, text: &str) {
    let doc = import(path);
    let run = &runs(&doc)[0];
    assert_eq!(run["status"], "failed");
    assert_eq!(run["repetitions"][0]["status"], "interrupted");
    let e = run["error"].as_str().unwrap();
    assert!(e.contains("fio error 22") && e.contains(text), "{e}");
    assert!(markdown(path).contains("(failed)"));
}

#[test]
fn a_failed_job_is_failed_with_fios_error() {
    check_failed(&data("fio-error.out"), "func=io_u error");
    let dir = tmp();
    let args = [
        "--name=e",
        "--filename=e.dat",
        "--size=4m",
        "--rw=read",
        "--bs=4k",
        "--offset=1",
        "--direct=1",
    ];
    let Some(j) = fio(
        dir.path(),
        "e",
        &[&args[..], &["--output-format=json"]].concat(),
    ) else {
        return;
    };
    check_failed(&j, "Invalid argument");
    let n = fio(
        dir.path(),
        "en",
        &[&args[..], &["--output-format=json,normal"]].concat(),
    )
    .unwrap();
    check_failed(&n, "func=io_u error");
}

// ---- item 10: trim ---------------------------------------------------------------

fn check_trim(path: &Path) {
    let doc = import(path);
    let rs = runs(&doc);
    let jobs = fio_jobs(path);
    assert_eq!(rs.len(), 2);
    same_figures(&rs[0], &jobs[0], "read");
    assert_eq!(rs[0]["status"], "complete");
    // iomark has trims now: the trim job is a run with fio's trim figures.
    assert_eq!(rs[1]["status"], "complete");
    assert_eq!(rs[1]["spec"]["rw"], "randtrim");
    assert!(jobs[1]["trim"]["total_ios"].as_u64() > Some(0));
    same_figures(&rs[1], &jobs[1], "trim");
    let md = markdown(path);
    assert!(
        md.lines()
            .any(|l| l.contains("| trim |") && l.contains("randtrim")),
        "{md}"
    );
    // A trim writes no data: its data cell is "-" (it was "random", iomark's default).
    let trim_row = md.lines().find(|l| l.contains("| trim |")).unwrap();
    assert_eq!(data_cell(&md, trim_row), "-", "{trim_row}");
}

/// The `data` cell of a row of a markdown run table.
fn data_cell<'a>(md: &str, row: &'a str) -> &'a str {
    let header = md.lines().find(|l| l.starts_with("| run |")).unwrap();
    let at = header.split('|').position(|c| c.trim() == "data").unwrap();
    row.split('|').nth(at).unwrap().trim()
}

/// What fio wrote is not measured, nor is iomark's seed fio's: an imported write showed
/// iomark's default data ("random") in every table and its default seed in the HTML's
/// full spec. They are unknown: "?" in the tables, `null` in the document's spec (listed
/// in `fio.unknown`), "?" in the full spec.
#[test]
fn an_imported_writes_data_and_seed_are_unknown() {
    let path = data("fio-write-jsonplus.json");
    let md = markdown(&path);
    let row = md.lines().find(|l| l.contains("| write |")).unwrap();
    assert_eq!(data_cell(&md, row), "?", "{row}");
    let doc = import(&path);
    let run = &runs(&doc)[0];
    assert!(run["spec"]["data"].is_null(), "{}", run["spec"]);
    assert!(run["spec"]["seed"].is_null(), "{}", run["spec"]);
    let unknown = run["fio"]["unknown"].to_string();
    assert!(
        unknown.contains("data") && unknown.contains("seed"),
        "{unknown}"
    );
    let dir = tmp();
    let page = html(&path, dir.path());
    let full = page.split("Full spec").nth(1).unwrap();
    assert!(
        full.contains("&quot;data&quot;: &quot;?&quot;") || full.contains("\"data\": \"?\""),
        "{full:.600}"
    );
    assert!(
        full.contains("&quot;seed&quot;: &quot;?&quot;") || full.contains("\"seed\": \"?\""),
        "{full:.600}"
    );
}

#[test]
fn a_trim_job_is_imported_with_its_trim_figures() {
    check_trim(&data("fio-trim.json"));
    let dir = tmp();
    let jf = job_file(
        dir.path(),
        "t.fio",
        "[global]\nioengine=null\nsize=1m\n[r]\nrw=randread\n[t]\nrw=randtrim\n",
    );
    if let Some(out) = fio(dir.path(), "t", &[&jf, "--output-format=json"]) {
        check_trim(&out);
    }
}

// ---- item 11: output formats ------------------------------------------------------

#[test]
fn status_interval_reports_import_the_last() {
    let dir = tmp();
    let Some(out) = fio(
        dir.path(),
        "si",
        &[
            "--name=si",
            "--ioengine=null",
            "--size=1g",
            "--rw=read",
            "--runtime=2",
            "--time_based",
            "--status-interval=1",
            "--output-format=json",
        ],
    ) else {
        return;
    };
    let n = fio_reports(&out).len();
    assert!(n >= 2, "{n} reports");
    let doc = import(&out);
    same_figures(&runs(&doc)[0], &fio_jobs(&out)[0], "read");
    assert!(
        runs(&doc)[0]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains(&format!("{n} fio reports")))
    );
}

#[test]
fn client_output_without_the_all_clients_total() {
    // Two fio servers on 127.0.0.1, one job each (kept: a test cannot rely on servers).
    let p = data("fio-client.out");
    let doc = import(&p);
    let jobs: Vec<Value> = fio_jobs(&p)
        .into_iter()
        .filter(|j| j["jobname"] != "All clients")
        .collect();
    assert_eq!(jobs.len(), 2);
    assert_eq!(runs(&doc).len(), 2, "the All clients total is not a run");
    for (run, job) in runs(&doc).iter().zip(&jobs) {
        same_figures(run, job, "read");
        assert_eq!(
            run["fio"]["host"].as_str().unwrap(),
            format!("{}:{}", job["hostname"].as_str().unwrap(), job["port"])
        );
    }
}

/// Terse and JSON from one fio run: the terse import agrees with fio's JSON (counts,
/// IOPS and bandwidth exactly as fio rounds them in terse; latencies to the microsecond).
fn check_terse(both: &Path, dir: &Path) {
    let text = std::fs::read_to_string(both).unwrap();
    let terse: String = text
        .lines()
        .filter(|l| l.starts_with("3;"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!terse.is_empty());
    let tp = dir.join("terse.txt");
    std::fs::write(&tp, terse).unwrap();
    let doc = import(&tp);
    let jobs = fio_jobs(both);
    assert_eq!(runs(&doc).len(), jobs.len());
    for (run, job) in runs(&doc).iter().zip(&jobs) {
        assert_eq!(run["fio"]["format"], "terse");
        for d in ["read", "write"] {
            let (ours, f) = (&run["repetitions"][0][d], &job[d]);
            // Terse has no I/O count: IOPS (which fio truncates) × runtime is within
            // one I/O per second of runtime of fio's count.
            let slack = f["runtime"].as_f64().unwrap() / 1000.0 + 0.5;
            let diff = ours["ios"].as_f64().unwrap() - f["total_ios"].as_f64().unwrap();
            assert!(diff.abs() <= slack, "{d} I/Os: {ours} against {f}");
            assert_eq!(
                ours["bytes"].as_u64(),
                Some(f["io_kbytes"].as_u64().unwrap() * 1024),
                "{d} bytes (KiB in terse)"
            );
            // fio prints whole IOPS in terse, truncated, and bandwidth in whole KiB/s.
            assert_eq!(
                ours["iops"].as_f64(),
                Some(f["iops"].as_f64().unwrap().floor())
            );
            assert_eq!(
                ours["bw_bytes"].as_f64(),
                Some(f["bw"].as_f64().unwrap() * 1024.0)
            );
            if f["total_ios"].as_u64() > Some(0) {
                let us = |v: &Value| (v.as_f64().unwrap() / 1000.0).floor();
                assert_eq!(
                    us(&ours["lat_ns"]["max"]),
                    us(&f["clat_ns"]["max"]),
                    "{d} clat max, µs"
                );
                assert!(
                    (ours["lat_ns"]["mean"].as_f64().unwrap()
                        - f["clat_ns"]["mean"].as_f64().unwrap())
                    .abs()
                        < 1.0,
                    "{d} clat mean"
                );
                assert_eq!(
                    us(&ours["lat_ns"]["p99"]),
                    us(&f["clat_ns"]["percentile"]["99.000000"])
                );
            }
        }
    }
}

#[test]
fn json_with_normal_or_terse_text_and_terse_alone() {
    let dir = tmp();
    check_terse(&data("fio-json-terse.out"), dir.path());
    // The JSON part of a json,terse file is what a report reads.
    let p = data("fio-json-terse.out");
    same_figures(&runs(&import(&p))[0], &fio_jobs(&p)[0], "read");
    let Some(out) = fio(
        dir.path(),
        "jt",
        &[
            "--name=t",
            "--filename=t.dat",
            "--size=4m",
            "--rw=randrw",
            "--bs=4k",
            "--output-format=json,terse",
        ],
    ) else {
        return;
    };
    check_terse(&out, dir.path());
    let n = fio(
        dir.path(),
        "jn",
        &[
            "--name=n",
            "--ioengine=null",
            "--size=4m",
            "--rw=randread",
            "--output-format=json,normal",
        ],
    )
    .unwrap();
    same_figures(&runs(&import(&n))[0], &fio_jobs(&n)[0], "read");
}

// ---- item 12: copies of a job -------------------------------------------------------

/// fio's percentile of a histogram (first bin where the running count reaches p%).
fn bins_pct(bins: &BTreeMap<u64, u64>, p: f64) -> u64 {
    let total: u64 = bins.values().sum();
    let mut sum = 0;
    for (&v, &n) in bins {
        sum += n;
        if sum as f64 >= p / 100.0 * total as f64 {
            return v;
        }
    }
    0
}

fn check_copies_merged(path: &Path) {
    let doc = import(path);
    let run = &runs(&doc)[0];
    let jobs = fio_jobs(path);
    assert!(jobs.len() > 1);
    assert_eq!(runs(&doc).len(), 1);
    assert_eq!(run["fio"]["percentiles"], "merged");
    assert_eq!(run["fio"]["copies"].as_u64(), Some(jobs.len() as u64));
    let mut bins = BTreeMap::new();
    let (mut ios, mut n, mut wsum) = (0, 0.0, 0.0);
    for j in &jobs {
        ios += j["read"]["total_ios"].as_u64().unwrap();
        let c = &j["read"]["clat_ns"];
        n += c["N"].as_f64().unwrap();
        wsum += c["N"].as_f64().unwrap() * c["mean"].as_f64().unwrap();
        for (k, v) in c["bins"].as_object().unwrap() {
            *bins.entry(k.parse::<u64>().unwrap()).or_insert(0) += v.as_u64().unwrap();
        }
        // On one copy, fio's own percentiles come out of its bins this way.
        let own: BTreeMap<u64, u64> = c["bins"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(
            Some(bins_pct(&own, 99.0)),
            c["percentile"]["99.000000"].as_u64()
        );
    }
    let l = &run["repetitions"][0]["read"];
    assert_eq!(l["ios"].as_u64(), Some(ios));
    assert!((l["lat_ns"]["mean"].as_f64().unwrap() - wsum / n).abs() < 1e-6);
    for (p, key) in PCT {
        assert_eq!(
            l["lat_ns"][p].as_u64(),
            Some(bins_pct(&bins, key.parse().unwrap())),
            "{p}"
        );
    }
}

#[test]
fn copies_of_a_job_merge_json_plus_bins_or_say_one_copy() {
    check_copies_merged(&data("fio-numjobs-jsonplus.json"));
    let dir = tmp();
    let args = [
        "--name=n",
        "--ioengine=null",
        "--size=4m",
        "--rw=randread",
        "--numjobs=3",
    ];
    let Some(plus) = fio(
        dir.path(),
        "np",
        &[&args[..], &["--output-format=json+"]].concat(),
    ) else {
        return;
    };
    check_copies_merged(&plus);
    let j = fio(
        dir.path(),
        "nj",
        &[&args[..], &["--output-format=json"]].concat(),
    )
    .unwrap();
    let doc = import(&j);
    let run = &runs(&doc)[0];
    assert_eq!(run["fio"]["percentiles"], "one copy");
    assert!(
        run["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("one copy's"))
    );
}

/// fio output for a device without `size` says nothing of the span: it is shown as
/// unknown (it was "file, span 0 B"), the target is a device, and `compare` does not
/// report a false "span 32 MiB vs 0 B" difference.
#[test]
fn an_unknown_span_is_unknown_and_not_a_difference() {
    let dir = tmp();
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(data("fio-randread.json")).unwrap()).unwrap();
    let known = dir.path().join("known.json");
    std::fs::write(&known, v.to_string()).unwrap();
    let o = &mut v["jobs"][0]["job options"];
    o["filename"] = "/dev/loop9".into();
    o.as_object_mut().unwrap().remove("size");
    let unknown = dir.path().join("unknown.json");
    std::fs::write(&unknown, v.to_string()).unwrap();
    let page = html(&unknown, dir.path());
    assert!(
        page.contains("span unknown"),
        "no 'span unknown' in the page"
    );
    assert!(!page.contains("span 0 B"));
    assert!(page.contains("block device, span"));
    let cmp = compare_json(&[known, unknown]);
    let cell = &cmp["rows"][0]["cells"][1];
    assert!(cell["differs"].is_array(), "the two runs pair: {cmp}");
    let differs = cell["differs"].to_string();
    assert!(!differs.contains("span"), "{differs}");
}

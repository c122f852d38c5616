//! Reports and comparisons: the HTML of a compress study and a qd study parsed and checked
//! against the results document, a real browser rendering it, Welch's test on synthetic
//! repetitions, fio's JSON imported with fio's own figures, and bad inputs.

use std::path::{Path, PathBuf};

use scraper::{Html, Selector};
use serde_json::Value;

use crate::common::{
    assert_success, compare_json, have, iomark, read_json, require, require_tool, run_json,
    stdout_of, tmp, write_json,
};

fn suite(dir: &Path, args: &[&str]) -> PathBuf {
    let out = dir.join(format!("{}.json", args[0]));
    let t = dir.join("t.dat");
    let o = iomark()
        .arg("suite")
        .args(args)
        .args([
            "--runtime",
            "400ms",
            "--ramp",
            "0",
            "--size",
            "16m",
            "--repeat",
            "2",
            "-q",
            "-o",
        ])
        .arg(&out)
        .arg(&t)
        .output()
        .unwrap();
    assert_success(&o);
    out
}

fn html_of(files: &[&Path], out: &Path) -> Html {
    Html::parse_document(&crate::common::report(files, out))
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn total_iops(run: &Value) -> f64 {
    run["summary"]["read"]["iops"]["mean"].as_f64().unwrap()
        + run["summary"]["write"]["iops"]["mean"].as_f64().unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

#[test]
fn html_report_of_a_compress_and_a_qd_study() {
    let dir = tmp();
    let comp = suite(dir.path(), &["compress", "--compress", "90,10"]);
    let qd = suite(dir.path(), &["qd", "--qd", "1,4,16"]);
    let page = dir.path().join("r.html");
    let html = html_of(&[&comp, &qd], &page);
    let cdoc = read_json(&comp);
    let qdoc = read_json(&qd);

    // Summary table: one row per run of both documents, plus the header.
    let rows = html.select(&sel("table.summary tr")).count();
    let n = cdoc["runs"].as_array().unwrap().len() + qdoc["runs"].as_array().unwrap().len();
    assert_eq!(rows, n + 1);

    // compress: a bar chart, test × level, each bar the run's mean IOPS.
    let bars: Vec<_> = html
        .select(&sel(
            "section.study[data-param=compress] svg[data-kind=bar] rect.bar",
        ))
        .collect();
    assert_eq!(bars.len(), 5 * 2, "fill + 4 corners, 2 levels");
    for run in cdoc["runs"].as_array().unwrap() {
        let st = &run["study"];
        let group = format!("compress {}", st["value"].as_str().unwrap());
        let bar = bars
            .iter()
            .find(|b| {
                b.value().attr("data-category") == st["test"].as_str()
                    && b.value().attr("data-group") == Some(group.as_str())
            })
            .expect("a bar for every run");
        let v: f64 = bar.value().attr("data-value").unwrap().parse().unwrap();
        assert!(close(v, total_iops(run)), "{v} vs {}", total_iops(run));
        // One repetition (the fill runs) has no spread: no error bar, data-err empty.
        let err = bar.value().attr("data-err").unwrap();
        if run["summary"]["write"]["iops"]["n"].as_u64().unwrap() < 2 {
            assert_eq!(err, "", "{}", st);
        } else {
            assert!(err.parse::<f64>().unwrap() >= 0.0);
        }
    }

    // qd: IOPS and latency line charts against QD, a point per test and depth.
    let charts: Vec<_> = html
        .select(&sel("section.study[data-param=qd] svg[data-kind=line]"))
        .collect();
    assert_eq!(charts.len(), 2);
    let points: Vec<_> = charts[0].select(&sel("circle.point")).collect();
    assert_eq!(points.len(), 2 * 3);
    for run in qdoc["runs"].as_array().unwrap() {
        let st = &run["study"];
        let p = points
            .iter()
            .find(|p| {
                p.value().attr("data-series") == st["test"].as_str()
                    && p.value().attr("data-x") == st["value"].as_str()
            })
            .expect("a point for every run");
        let y: f64 = p.value().attr("data-y").unwrap().parse().unwrap();
        assert!(close(y, total_iops(run)));
    }
    assert_eq!(
        charts[1].select(&sel("circle.point")).count(),
        2 * 2 * 3,
        "p50 and p99 per test"
    );

    // Every run has its time series and percentile charts, titled, with labelled axes.
    let runs = html.select(&sel("article.run")).count();
    assert_eq!(runs, n);
    for svg in html.select(&sel("svg.chart")) {
        assert!(svg.select(&sel("text.title")).next().is_some());
        assert!(svg.select(&sel("text.y-label")).next().is_some());
    }
    // Self-contained: no external references at all.
    for el in html.select(&sel("[src], [href]")) {
        for a in ["src", "href"] {
            if let Some(v) = el.value().attr(a) {
                assert!(
                    !v.starts_with("http://") && !v.starts_with("https://"),
                    "{a}={v}"
                );
            }
        }
    }
    assert!(html.select(&sel("script, link")).next().is_none());
}

#[test]
fn report_renders_in_a_real_browser() {
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| have(c));
    let Some(chromium) = chromium else {
        require("chromium (headless browser)", false);
        return;
    };
    let dir = tmp();
    let qd = suite(dir.path(), &["qd", "--qd", "1,8"]);
    let page = dir.path().join("r.html");
    html_of(&[&qd], &page);
    let run = |args: &[&str]| {
        std::process::Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .arg(format!(
                "--user-data-dir={}",
                dir.path().join("profile").display()
            ))
            .args(args)
            .output()
            .unwrap()
    };
    let dom = run(&["--dump-dom", &format!("file://{}", page.display())]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    let parsed = Html::parse_document(&dom);
    assert!(
        parsed.select(&sel("svg.chart")).count() >= 4,
        "the DOM the browser built holds the charts"
    );
    assert!(parsed.select(&sel("circle.point")).count() >= 4);
    let shot = dir.path().join("r.png");
    let blank_shot = dir.path().join("blank.png");
    run(&[
        "--window-size=1200,1600",
        &format!("--screenshot={}", shot.display()),
        &format!("file://{}", page.display()),
    ]);
    let blank = dir.path().join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    run(&[
        "--window-size=1200,1600",
        &format!("--screenshot={}", blank_shot.display()),
        &format!("file://{}", blank.display()),
    ]);
    let (a, b) = (
        std::fs::metadata(&shot).unwrap().len(),
        std::fs::metadata(&blank_shot).unwrap().len(),
    );
    // A blank page compresses to almost nothing; charts and tables do not.
    assert!(
        a > 5 * b && a > 20_000,
        "screenshot {a} bytes, blank page {b} bytes"
    );
}

fn with_iops(doc: &Value, iops: &[f64]) -> Value {
    let mut d = doc.clone();
    let reps = d["runs"][0]["repetitions"].as_array_mut().unwrap();
    for (r, v) in reps.iter_mut().zip(iops) {
        r["read"]["iops"] = Value::from(*v);
    }
    d
}

#[test]
fn compare_tells_significant_from_noise() {
    let dir = tmp();
    let f = dir.path().join("c.dat");
    let base = run_json(&[
        "run",
        "--rw",
        "randread",
        "--size",
        "1m",
        "--repeat",
        "5",
        f.to_str().unwrap(),
    ]);
    let a = [1000.0, 1010.0, 990.0, 1005.0, 995.0];
    let b: Vec<f64> = a.iter().map(|x| x * 1.2).collect();
    let c = [1003.0, 992.0, 1008.0, 997.0, 1001.0];
    let files: Vec<PathBuf> = [("a", &a[..]), ("b", &b[..]), ("c", &c[..])]
        .iter()
        .map(|(n, v)| write_json(dir.path(), n, &with_iops(&base, v)))
        .collect();
    let cmp = compare_json(&files);
    let cells = &cmp["rows"][0]["cells"];
    assert_eq!(cells[0]["verdict"]["verdict"], "baseline");
    assert_eq!(cells[1]["verdict"]["verdict"], "significant", "{cells}");
    assert!((cells[1]["ratio"].as_f64().unwrap() - 1.2).abs() < 1e-9);
    assert_eq!(cells[0]["incomplete"], false);
    assert_eq!(cells[2]["verdict"]["verdict"], "not_significant", "{cells}");
    // One repetition: no test.
    let single = dir.path().join("s.json");
    let mut one = with_iops(&base, &a);
    one["runs"][0]["repetitions"]
        .as_array_mut()
        .unwrap()
        .truncate(1);
    std::fs::write(&single, one.to_string()).unwrap();
    let out = iomark()
        .arg("compare")
        .arg(&files[0])
        .arg(&single)
        .args(["--format", "md"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("not enough repetitions"));
    // The HTML comparison has a grouped bar chart: one bar per document and run.
    let page = dir.path().join("cmp.html");
    assert!(
        iomark()
            .arg("compare")
            .args(&files)
            .arg("-o")
            .arg(&page)
            .output()
            .unwrap()
            .status
            .success()
    );
    let html = Html::parse_document(&std::fs::read_to_string(&page).unwrap());
    assert_eq!(html.select(&sel("svg[data-kind=bar] rect.bar")).count(), 3);
}

fn check_fio_import(fio_json: &Path) {
    let fio: Value = {
        let t = std::fs::read_to_string(fio_json).unwrap();
        serde_json::from_str(&t[t.find('{').unwrap()..]).unwrap()
    };
    let out = stdout_of(&["report", fio_json.to_str().unwrap(), "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out).unwrap();
    for (job, run) in fio["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(doc["runs"].as_array().unwrap())
    {
        let rep = &run["repetitions"][0];
        for dir in ["read", "write"] {
            let f = &job[dir];
            if f["total_ios"].as_u64().unwrap_or(0) == 0 {
                continue;
            }
            assert_eq!(
                rep[dir]["iops"].as_f64(),
                f["iops"].as_f64(),
                "{dir} IOPS as fio printed"
            );
            assert_eq!(rep[dir]["bw_bytes"].as_f64(), f["bw_bytes"].as_f64());
            assert_eq!(rep[dir]["ios"].as_u64(), f["total_ios"].as_u64());
            let pct = &f["clat_ns"]["percentile"];
            for (ours, theirs) in [
                ("p50", "50.000000"),
                ("p90", "90.000000"),
                ("p99", "99.000000"),
                ("p999", "99.900000"),
                ("p9999", "99.990000"),
            ] {
                assert_eq!(
                    rep[dir]["lat_ns"][ours].as_u64(),
                    pct[theirs].as_u64(),
                    "{dir} {ours}"
                );
            }
            assert_eq!(
                rep[dir]["lat_ns"]["max"].as_u64(),
                f["lat_ns"]["max"].as_u64()
            );
        }
        assert_eq!(
            run["spec"]["bs"].as_u64(),
            job["job options"]["bs"]
                .as_str()
                .and_then(|s| iomark::units::parse_size(s).ok())
        );
    }
}

#[test]
fn fio_fixtures_import_with_fios_figures() {
    for f in [
        "tests/data/fio-randread.json",
        "tests/data/fio-write-jsonplus.json",
    ] {
        check_fio_import(Path::new(env!("CARGO_MANIFEST_DIR")).join(f).as_path());
    }
}

#[test]
fn fio_run_now_imports_with_fios_figures() {
    if !require_tool("fio", "fio") {
        return;
    }
    let dir = tmp();
    let out = dir.path().join("fio.json");
    let st = std::process::Command::new("fio")
        .args([
            "--name=rr",
            "--size=16m",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=4",
            "--direct=1",
            "--runtime=1",
            "--time_based",
            "--output-format=json",
        ])
        .arg(format!("--filename={}", dir.path().join("f.dat").display()))
        .arg(format!("--output={}", out.display()))
        .status()
        .unwrap();
    assert!(st.success());
    check_fio_import(&out);
    // And beside iomark's own results in one report.
    let f = dir.path().join("i.dat");
    let mine = dir.path().join("i.json");
    assert!(
        iomark()
            .args(["run", "--rw", "randread", "--size", "4m", "-q", "-o"])
            .arg(&mine)
            .arg(&f)
            .output()
            .unwrap()
            .status
            .success()
    );
    let page = dir.path().join("both.html");
    let html = html_of(&[&out, &mine], &page);
    assert_eq!(html.select(&sel("table.summary tr")).count(), 3);
}

/// Issue 12 item 11: a mixed run's Markdown and CSV rows, one per direction; the
/// headers of imported fio output and of a null-engine run read as sentences.
#[test]
fn report_rows_per_direction_and_readable_headers() {
    let dir = tmp();
    let doc = dir.path().join("mix.json");
    let o = iomark()
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "4m",
            "--rw",
            "randrw",
            "--rwmixread",
            "75",
            "--runtime",
            "200ms",
            "-o",
        ])
        .arg(&doc)
        .output()
        .unwrap();
    assert_success(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    let first = text.lines().next().unwrap_or("");
    assert!(!first.contains("null on null"), "{text}");
    assert!(first.contains("null engine (no I/O)"), "{text}");
    let report_as = |file: &str, format: &str| {
        String::from_utf8(stdout_of(&["report", file, "--format", format])).unwrap()
    };
    let json = read_json(&doc);
    let sum = &json["runs"][0]["summary"];
    let csv = report_as(doc.to_str().unwrap(), "csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "a read row and a write row: {csv}");
    for (row, d) in rows.iter().zip(["read", "write"]) {
        assert_eq!(row[col("dir")], d);
        let iops: f64 = row[col("IOPS")].parse().unwrap();
        let want = sum[d]["iops"]["mean"].as_f64().unwrap();
        assert!((iops - want).abs() <= 0.5, "{d}: {iops} vs {want}");
    }
    let md = report_as(doc.to_str().unwrap(), "md");
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| randrw")).count(),
        2,
        "{md}"
    );

    let fio = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio-randread.json");
    let md = report_as(fio.to_str().unwrap(), "md");
    let line = md.lines().find(|l| l.starts_with("- `")).unwrap();
    assert!(
        !line.contains("on fio") && !line.contains("(, kernel )") && !line.contains("fio fio-"),
        "{line}"
    );
    assert!(
        line.contains("fio-3.33 output (imported; host not recorded)"),
        "{line}"
    );
}

//! Reports and comparisons: the HTML of a compress study and a qd study parsed and checked
//! against the results document, a real browser rendering it, Welch's test on synthetic
//! repetitions, fio's JSON imported with fio's own figures, and bad inputs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use scraper::{Html, Selector};
use serde_json::Value;

use crate::common::{
    assert_success, browse, chromium, compare_json, iomark, read_json, require, require_tool,
    run_json, screenshot, stdout_of, tmp, write_json,
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
    assert_eq!(
        bars.len(),
        4 * 2,
        "4 corners, 2 levels (the fill runs are not charted)"
    );
    for run in cdoc["runs"].as_array().unwrap() {
        let st = &run["study"];
        if st["test"] == "fill" {
            continue;
        }
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
        // One repetition has no spread: no error bar, data-err empty.
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
    let Some(chromium) = chromium() else {
        require("chromium (headless browser)", false);
        return;
    };
    let dir = tmp();
    let qd = suite(dir.path(), &["qd", "--qd", "1,8"]);
    let page = dir.path().join("r.html");
    html_of(&[&qd], &page);
    let dom = browse(
        chromium,
        dir.path(),
        &["--dump-dom", &format!("file://{}", page.display())],
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    let parsed = Html::parse_document(&dom);
    assert!(
        parsed.select(&sel("svg.chart")).count() >= 4,
        "the DOM the browser built holds the charts"
    );
    assert!(parsed.select(&sel("circle.point")).count() >= 4);
    let blank = dir.path().join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let (_, _, _, a) = screenshot(chromium, dir.path(), &page, 1200, 1600);
    let (_, _, _, b) = screenshot(chromium, dir.path(), &blank, 1200, 1600);
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
    // The HTML comparison has forest plots: a ratio per later document and run.
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
    assert_eq!(
        html.select(&sel("svg[data-kind=forest]"))
            .next()
            .unwrap()
            .select(&sel("circle.ratio"))
            .count(),
        2
    );
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
            // Every latency figure is of the run's kind: fio's clat unless lat_percentiles.
            let sec = &f[format!("{}_ns", run["latency_kind"].as_str().unwrap())];
            let pct = &sec["percentile"];
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
            assert_eq!(rep[dir]["lat_ns"]["max"].as_u64(), sec["max"].as_u64());
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
        .current_dir(dir.path())
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

/// Sets one repetition figure of run `run` to `values`, repetition by repetition.
fn set_reps(doc: &mut Value, run: usize, f: impl Fn(&mut Value, f64), values: &[f64]) {
    let reps = doc["runs"][run]["repetitions"].as_array_mut().unwrap();
    for (r, v) in reps.iter_mut().zip(values) {
        f(r, *v);
    }
}

/// Issue 12 item 12: `compare` tests MB/s and p50/p99 latency besides IOPS, warns when
/// paired runs differ in span, draws ratios with their 95% intervals one test a row (a
/// 350k-IOPS and a 2.6k-IOPS test side by side), and its Markdown fits 100 columns.
#[test]
fn compare_every_figure_as_a_forest_of_ratios() {
    let dir = tmp();
    let f = dir.path().join("c.dat");
    let base = run_json(&[
        "run",
        "--engine",
        "null",
        "--rw",
        "randread",
        "--size",
        "1m",
        "--repeat",
        "4",
        "--runtime",
        "100ms",
        f.to_str().unwrap(),
    ]);
    // Two tests: QD 1 near 2.6k IOPS and QD 32 near 350k.
    let mut a = base.clone();
    let mut second = a["runs"][0].clone();
    second["spec"]["qd"] = Value::from(32);
    a["runs"].as_array_mut().unwrap().push(second);
    let iops = |r: &mut Value, v: f64| {
        r["read"]["iops"] = Value::from(v);
        r["read"]["bw_bytes"] = Value::from(v * 4096.0);
    };
    let p99 = |r: &mut Value, v: f64| r["read"]["lat_ns"]["p99"] = Value::from(v as u64);
    set_reps(&mut a, 0, iops, &[2600.0, 2610.0, 2590.0, 2605.0]);
    set_reps(&mut a, 1, iops, &[350e3, 351e3, 349e3, 350.5e3]);
    set_reps(&mut a, 0, p99, &[400e3, 410e3, 390e3, 400e3]);
    set_reps(&mut a, 1, p99, &[90e3, 91e3, 89e3, 90e3]);
    let mut b = a.clone();
    set_reps(&mut b, 0, iops, &[2340.0, 2349.0, 2331.0, 2344.0]);
    set_reps(&mut b, 1, iops, &[420e3, 421.2e3, 418.8e3, 420.6e3]);
    // Same p99 in b's first test: not significant; 2x in the second.
    set_reps(&mut b, 1, p99, &[180e3, 182e3, 178e3, 180e3]);
    b["runs"][0]["target"]["span_bytes"] = Value::from(2u64 << 20);
    let files = [
        write_json(dir.path(), "a", &a),
        write_json(dir.path(), "b", &b),
    ];

    let cmp = compare_json(&files);
    let rows = cmp["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let tests = |row: usize| {
        cmp["rows"][row]["cells"][1]["tests"]
            .as_array()
            .unwrap()
            .clone()
    };
    let figures: Vec<&str> = ["iops", "bw_bytes", "lat_p50_ns", "lat_p99_ns", "cpu_ns"].to_vec();
    for row in 0..2 {
        let t = tests(row);
        assert_eq!(
            t.iter()
                .map(|x| x["figure"].as_str().unwrap())
                .collect::<Vec<_>>(),
            figures
        );
    }
    let t0 = tests(0);
    assert_eq!(t0[0]["verdict"]["verdict"], "significant");
    assert_eq!(t0[1]["verdict"]["verdict"], "significant", "MB/s tested");
    assert_eq!(t0[3]["verdict"]["verdict"], "not_significant", "p99 tested");
    assert_eq!(tests(1)[3]["verdict"]["verdict"], "significant");
    let ci = t0[0]["ratio_ci95"].as_array().unwrap();
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    assert!(lo < 0.9 && 0.9 < hi && hi < 0.95, "{lo}..{hi}");
    assert!(
        cmp["rows"][0]["cells"][1]["differs"][0]
            .as_str()
            .unwrap()
            .starts_with("span 2 MiB vs 1 MiB"),
        "{cmp}"
    );
    assert_eq!(
        cmp["rows"][1]["cells"][1]["differs"]
            .as_array()
            .unwrap()
            .len(),
        0
    );

    // Markdown: every figure, the warning, and no line wider than 100 columns.
    let md = String::from_utf8(stdout_of(&[
        OsStr::new("compare"),
        files[0].as_os_str(),
        files[1].as_os_str(),
    ]))
    .unwrap();
    for l in md.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    for fig in ["| IOPS |", "| MB/s |", "| p50 µs read |", "| p99 µs read |"] {
        assert_eq!(
            md.matches(fig).count(),
            2 * 2,
            "{fig} per test and file: {md}"
        );
    }
    assert!(md.contains("differs from A: span 2 MiB vs 1 MiB"), "{md}");

    // HTML: forest plots, a row per test, each ratio with its interval around it.
    let page = dir.path().join("cmp.html");
    assert_success(
        &iomark()
            .arg("compare")
            .args(&files)
            .arg("-o")
            .arg(&page)
            .output()
            .unwrap(),
    );
    let html = Html::parse_document(&std::fs::read_to_string(&page).unwrap());
    let forest = html
        .select(&sel("svg[data-kind=forest]"))
        .next()
        .expect("a forest plot");
    let rows: Vec<_> = forest.select(&sel("g.forest-row")).collect();
    assert_eq!(rows.len(), 2);
    let mut ys = Vec::new();
    for (row, want) in rows.iter().zip([0.9, 1.2]) {
        let dot = row.select(&sel("circle.ratio")).next().unwrap();
        let v = |k: &str| -> f64 { dot.value().attr(k).unwrap().parse().unwrap() };
        assert!(
            (v("data-ratio") - want).abs() < 0.005,
            "{}",
            v("data-ratio")
        );
        assert!(v("data-lo") < v("data-ratio") && v("data-ratio") < v("data-hi"));
        assert!(row.select(&sel("line.ci")).next().is_some());
        ys.push(v("cy"));
    }
    assert!(ys[1] - ys[0] >= 20.0, "rows apart: {ys:?}");
    // Readable axis: tick labels at least 40 units apart, the axis says what it is.
    let mut xs: Vec<f64> = forest
        .select(&sel("line.tick"))
        .map(|l| l.value().attr("x1").unwrap().parse().unwrap())
        .collect();
    xs.sort_by(f64::total_cmp);
    assert!(
        xs.len() >= 3 && xs.windows(2).all(|w| w[1] - w[0] >= 40.0),
        "{xs:?}"
    );
    let label = forest.select(&sel("text.x-label")).next().unwrap();
    assert!(
        label
            .text()
            .collect::<String>()
            .contains("ratio to the baseline")
    );
    assert!(html.select(&sel("p.differs")).next().is_some());
}

/// The text of an element.
fn text_of(e: &scraper::ElementRef) -> String {
    e.text().collect::<String>()
}

/// Every chart's legend lists every series: a legend entry per line or bar group.
fn check_legends(html: &Html) {
    for svg in html.select(&sel("svg[data-kind=line], svg[data-kind=bar]")) {
        let keys = svg.select(&sel("text.legend")).count();
        let series = if svg.value().attr("data-kind") == Some("line") {
            svg.select(&sel("polyline.series")).count()
        } else {
            let mut groups: Vec<&str> = svg
                .select(&sel("rect.bar"))
                .filter_map(|b| b.value().attr("data-group"))
                .collect();
            groups.dedup();
            groups.sort();
            groups.dedup();
            groups.len()
        };
        if series > 1 {
            assert_eq!(
                keys,
                series,
                "legend of {}",
                text_of(&svg.select(&sel("text.title")).next().unwrap())
            );
        }
    }
}

/// Issue 12 item 10: the HTML pages of a compress, a corners and a wsat study, fio's
/// output and a comparison, checked in the parsed DOM and in Chromium screenshots at
/// 1400 and 390 pixels wide.
#[test]
fn html_pages_read_like_a_lab_notebook() {
    let dir = tmp();
    let comp = suite(dir.path(), &["compress", "--compress", "90,10"]);
    let corners = suite(dir.path(), &["corners"]);
    let wsat = dir.path().join("wsat.json");
    assert_success(
        &iomark()
            .args([
                "suite",
                "wsat",
                "--size",
                "4m",
                "--io-size",
                "1g",
                "--runtime",
                "1200ms",
                "--interval",
                "200ms",
                "-q",
                "-o",
            ])
            .arg(&wsat)
            .arg(dir.path().join("w.dat"))
            .output()
            .unwrap(),
    );
    let mut pages = Vec::new();

    // compress: the fill runs are preparation, apart from the chart; headings unique;
    // the target's environment once.
    let page = dir.path().join("compress.html");
    let html = html_of(&[&comp], &page);
    pages.push(page);
    let bar_sel = sel("section.study[data-param=compress] rect.bar");
    let bars = html.select(&bar_sel);
    assert_eq!(
        bars.filter(|b| b.value().attr("data-category") == Some("fill"))
            .count(),
        0
    );
    assert_eq!(
        html.select(&sel("section.study[data-param=compress] rect.bar"))
            .count(),
        4 * 2
    );
    let prep = text_of(
        &html
            .select(&sel("section.study p.preparation"))
            .next()
            .expect("preparation named"),
    );
    assert!(
        prep.contains("fill at compress 90") && prep.contains("fill at compress 10"),
        "{prep}"
    );
    let headings: Vec<String> = html
        .select(&sel("article.run h3"))
        .map(|h| text_of(&h))
        .collect();
    let mut unique = headings.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), headings.len(), "{headings:?}");
    assert!(
        headings.iter().any(|h| h == "write 4k qd32, compress 10"),
        "{headings:?}"
    );
    assert_eq!(
        html.select(&sel("article.run table.env"))
            .filter(|t| text_of(t).contains("scheduler"))
            .count(),
        0
    );
    let envs: Vec<_> = html
        .select(&sel("section#environment table.env"))
        .filter(|t| text_of(t).contains("filesystem"))
        .collect();
    assert_eq!(envs.len(), 1, "one target, one environment table");
    // Runs of 400 ms at 1 s intervals draw no time series and say why.
    for a in html.select(&sel("article.run")) {
        let titles: Vec<String> = a
            .select(&sel("svg text.title"))
            .map(|t| text_of(&t))
            .collect();
        assert!(
            !titles.iter().any(|t| t.contains("over time")),
            "{titles:?}"
        );
        assert!(
            text_of(&a.select(&sel("p.no-series")).next().expect("says why"))
                .contains("at least 3")
        );
    }
    check_legends(&html);

    // corners: an overview, sequential in MB/s and random in IOPS, with error bars.
    let page = dir.path().join("corners.html");
    let html = html_of(&[&corners], &page);
    pages.push(page);
    let cdoc = read_json(&corners);
    let charts: Vec<_> = html
        .select(&sel("section.overview svg[data-kind=bar]"))
        .collect();
    assert_eq!(charts.len(), 2);
    assert_eq!(
        text_of(&charts[0].select(&sel("text.y-label")).next().unwrap()),
        "MB/s"
    );
    assert_eq!(
        text_of(&charts[1].select(&sel("text.y-label")).next().unwrap()),
        "IOPS"
    );
    assert!(
        html.select(&sel("section.study svg[data-kind=line]"))
            .next()
            .is_none(),
        "no IOPS line mixing 1m and 4k"
    );
    for run in cdoc["runs"].as_array().unwrap() {
        let random = run["spec"]["rw"].as_str().unwrap().starts_with("rand");
        let (chart, key, scale) = if random {
            (&charts[1], "iops", 1.0)
        } else {
            (&charts[0], "bw_bytes", 1e-6)
        };
        let want: f64 = ["read", "write"]
            .iter()
            .map(|d| run["summary"][d][key]["mean"].as_f64().unwrap())
            .sum::<f64>()
            * scale;
        let bar = chart
            .select(&sel("rect.bar"))
            .find(|b| {
                b.value()
                    .attr("data-category")
                    .is_some_and(|c| c.starts_with(run["name"].as_str().unwrap()))
            })
            .unwrap_or_else(|| panic!("a bar for {}", run["name"]));
        let v: f64 = bar.value().attr("data-value").unwrap().parse().unwrap();
        assert!(close(v, want), "{v} vs {want}");
        assert!(
            !bar.value().attr("data-err").unwrap().is_empty(),
            "two repetitions: an error bar"
        );
    }
    // An error bar wherever the spread is not zero (a run that moved nothing has none).
    let spread = html
        .select(&sel("section.overview rect.bar"))
        .filter(|b| b.value().attr("data-err").unwrap().parse::<f64>().unwrap() > 0.0)
        .count();
    assert!(spread >= 4, "{spread} bars with a spread");
    assert_eq!(
        html.select(&sel("section.overview path.error-bar")).count(),
        spread
    );
    check_legends(&html);

    // wsat: the write saturation chart and time axes from 0.
    let page = dir.path().join("wsat.html");
    let html = html_of(&[&wsat], &page);
    pages.push(page);
    let wdoc = read_json(&wsat);
    let n = wdoc["runs"][0]["repetitions"][0]["series"]
        .as_array()
        .unwrap()
        .len();
    assert!(n >= 3, "{n} intervals");
    let titles: Vec<String> = html
        .select(&sel("svg text.title"))
        .map(|t| text_of(&t))
        .collect();
    let sat = html
        .select(&sel("svg.chart"))
        .find(|s| {
            text_of(&s.select(&sel("text.title")).next().unwrap()).starts_with("Write saturation")
        })
        .unwrap_or_else(|| panic!("a write saturation chart among {titles:?}"));
    assert_eq!(sat.select(&sel("circle.point")).count(), n);
    for svg in html.select(&sel("svg[data-kind=line]")) {
        let title = text_of(&svg.select(&sel("text.title")).next().unwrap());
        if title.contains("over time") || title.starts_with("Write saturation") {
            let first = svg.select(&sel("text.x-tick")).next().map(|t| text_of(&t));
            assert_eq!(first.as_deref(), Some("0"), "{title}");
        }
    }
    check_legends(&html);

    // fio's output and a comparison render too.
    let fio = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio-randread.json");
    let page = dir.path().join("fio.html");
    html_of(&[&fio], &page);
    pages.push(page);
    let page = dir.path().join("cmp.html");
    assert_success(
        &iomark()
            .arg("compare")
            .arg(&corners)
            .arg(&corners)
            .arg("-o")
            .arg(&page)
            .output()
            .unwrap(),
    );
    pages.push(page);

    // Charts take the page's width, not a fixed 640 pixels.
    let style = text_of(&html.select(&sel("style")).next().unwrap());
    assert!(
        style.contains("svg.chart{") && style.contains("width:100%"),
        "{style}"
    );

    let Some(chromium) = chromium() else {
        require("chromium (headless browser)", false);
        return;
    };
    let blank = dir.path().join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    for width in [1400, 390] {
        let (_, _, _, empty) = screenshot(chromium, dir.path(), &blank, width, 2000);
        for page in &pages {
            let (png, w, h, size) = screenshot(chromium, dir.path(), page, width, 2000);
            assert_eq!((w, h), (width, 2000), "{}", png.display());
            assert!(
                size > 5 * empty && size > 20_000,
                "{}: {size} bytes, a blank page {empty}",
                png.display()
            );
        }
    }
}

/// The reports (md, csv, HTML) gave a run's data only as asked ("compressible 50%"),
/// never as measured: the lz4, zstd and dedup figures the run printed were in the JSON
/// alone. Each write row now has them (the JSON's mean over repetitions, checked here
/// against the written file under the zstd CLI), a read row "-".
#[test]
fn reports_give_the_data_as_measured() {
    let dir = tmp();
    let doc = dir.path().join("d.json");
    let file = dir.path().join("d.dat");
    let o = iomark()
        .args(["run", "--rw", "randrw", "--bs", "64k", "--size", "8m"])
        .args(["--compress", "60", "--dedup", "25", "--io-size", "16m"])
        .args(["--repeat", "2", "--keep", "-o"])
        .arg(&doc)
        .arg(&file)
        .output()
        .unwrap();
    assert_success(&o);
    let json = read_json(&doc);
    let reps = json["runs"][0]["repetitions"].as_array().unwrap();
    let mean = |k: &str| {
        reps.iter()
            .map(|r| r["data"][k].as_f64().unwrap())
            .sum::<f64>()
            / reps.len() as f64
    };
    let want = [mean("lz4_pct"), mean("zstd_pct"), mean("dedup_pct")];
    assert!(want[0] > 40.0 && want[2] > 10.0, "{want:?}");
    let csv = String::from_utf8(stdout_of(&[
        "report",
        doc.to_str().unwrap(),
        "--format",
        "csv",
    ]))
    .unwrap();
    // Fields split at commas outside quotes (the data cell holds one).
    let fields = |line: &str| -> Vec<String> {
        let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => out.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        out.push(cur);
        out
    };
    let mut lines = csv.lines();
    let header = fields(lines.next().unwrap());
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let rows: Vec<Vec<String>> = lines.map(fields).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for row in &rows {
        let cells = ["lz4 %", "zstd-1 %", "dedup %"].map(|c| row[col(c)].as_str());
        match row[col("dir")].as_str() {
            "write" => {
                for (cell, w) in cells.iter().zip(want) {
                    let v: f64 = cell.parse().unwrap();
                    assert!((v - w).abs() <= 0.05, "{cell} vs {w}: {csv}");
                }
            }
            // Nothing measured: "-" in the tables, an empty field in CSV.
            _ => assert_eq!(cells, [""; 3], "{csv}"),
        }
    }
    // The figure is the data's: zstd at level 1 over the file, 4 KiB chunk by chunk as
    // the run measures it, comes within a few points (the file holds the last writes).
    if require_tool("zstd", "zstd (apt-get install zstd)") {
        let bytes = std::fs::read(&file).unwrap();
        let (mut raw, mut packed) = (0usize, 0usize);
        for chunk in bytes.chunks(4096) {
            let p = std::fs::write(dir.path().join("c"), chunk).map(|_| {
                std::process::Command::new("zstd")
                    .args(["-1", "-q", "-c", "--no-check"])
                    .arg(dir.path().join("c"))
                    .output()
                    .unwrap()
                    .stdout
                    .len()
            });
            raw += chunk.len();
            packed += p.unwrap().min(chunk.len());
            if raw >= 1 << 20 {
                break;
            }
        }
        let zstd_pct = 100.0 * (1.0 - packed as f64 / raw as f64);
        assert!(
            (zstd_pct - want[1]).abs() < 6.0,
            "zstd CLI {zstd_pct:.1}% vs {want:?}"
        );
    }
    let md = String::from_utf8(stdout_of(&[
        "report",
        doc.to_str().unwrap(),
        "--format",
        "md",
    ]))
    .unwrap();
    assert!(md.contains("| lz4 % | zstd-1 % | dedup % |"), "{md}");
    assert!(
        md.contains("lz4 %, zstd-1 %, dedup %: how much smaller"),
        "{md}"
    );
    let html = dir.path().join("d.html");
    assert_success(
        &iomark()
            .args(["report", doc.to_str().unwrap(), "-o"])
            .arg(&html)
            .output()
            .unwrap(),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(&format!("{:.1}", want[0])),
        "lz4 figure missing from the HTML"
    );
}

/// `report --format md` of a study gave its runs alone: the study's table (the swept
/// value as rows) and its verdict were printed by the run and shown in the HTML, not in
/// Markdown. They are there now, the verdict word for word as the run printed it.
#[test]
fn markdown_reports_have_the_study_tables_and_verdicts() {
    let dir = tmp();
    let doc = dir.path().join("qd.json");
    let o = iomark()
        .args(["suite", "qd", "--engine", "null", "--qd", "1,4,16"])
        .args([
            "--rw",
            "randread",
            "--runtime",
            "200ms",
            "--size",
            "64m",
            "-o",
        ])
        .arg(&doc)
        .output()
        .unwrap();
    assert_success(&o);
    let printed = String::from_utf8_lossy(&o.stdout).to_string();
    let verdict = (printed.lines())
        .find(|l| l.starts_with("IOPS saturate") || l.starts_with("IOPS still growing"))
        .unwrap_or_else(|| panic!("no saturation verdict in {printed}"));
    let md = String::from_utf8(stdout_of(&[
        "report",
        doc.to_str().unwrap(),
        "--format",
        "md",
    ]))
    .unwrap();
    assert!(md.contains("\n## randread\n"), "{md}");
    assert!(md.contains("| qd | IOPS |"), "{md}");
    for qd in ["1", "4", "16"] {
        assert!(
            md.contains(&format!("\n| {qd} | ")),
            "no row for QD {qd}: {md}"
        );
    }
    assert!(md.contains(verdict), "{verdict} not in {md}");
}

#[test]
fn report_and_compare_carry_the_cpu_per_io_and_the_engine() {
    // The report's tables had no CPU figure (only the run's own output and its JSON), and
    // compare neither that nor a word that two runs' engines differ.
    let dir = tmp();
    let f = dir.path().join("c.dat");
    let f = f.to_str().unwrap();
    let mut docs = Vec::new();
    for engine in ["psync", "io_uring"] {
        let out = dir.path().join(format!("{engine}.json"));
        let o = iomark()
            .args([
                "run", f, "--engine", engine, "--rw", "randread", "--size", "4m",
            ])
            .args(["--runtime", "0.3s", "--repeat", "2", "-q", "-o"])
            .arg(&out)
            .output()
            .unwrap();
        assert_success(&o);
        docs.push(out);
    }
    let doc = read_json(&docs[0]);
    let reps = doc["runs"][0]["repetitions"].as_array().unwrap();
    let mean = |f: &dyn Fn(&Value) -> f64| reps.iter().map(f).sum::<f64>() / reps.len() as f64;
    let whole = mean(&|r| r["cpu"]["per_io_ns"].as_f64().unwrap());
    let workers = mean(&|r| r["cpu"]["workers"]["per_io_ns"].as_f64().unwrap());
    assert!(whole >= workers && workers > 0.0, "{whole} {workers}");
    let out = iomark().arg("report").arg(&docs[0]).output().unwrap();
    assert_success(&out);
    let md = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        md.contains("| dedup % | CPU ns/IO | job threads ns/IO |"),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with("| randread"))
        .expect("a run's row");
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let n = cells.len();
    assert_eq!(cells[n - 3], format!("{whole:.0}"), "{row}");
    assert_eq!(cells[n - 2], format!("{workers:.0}"), "{row}");
    let out = iomark().arg("compare").args(&docs).output().unwrap();
    assert_success(&out);
    let md = String::from_utf8_lossy(&out.stdout).into_owned();
    let cpu_rows = md
        .lines()
        .filter(|l| l.contains("| CPU ns/IO (job threads) |"));
    assert_eq!(cpu_rows.count(), 2, "{md}");
    assert!(md.contains("engine io_uring vs psync"), "{md}");
}

/// The latency percentile chart of a run of several repetitions showed the first one's
/// under the run's name (its p50 beside the tables' mean over the repetitions), and its
/// points' tooltips gave a position and no unit ("read: 0 → 48.1"). It now says which
/// repetition it is, as the charts over time do, and each point names its percentile
/// and its latency with a unit.
#[test]
fn a_runs_percentile_chart_names_its_repetition_and_units() {
    let dir = tmp();
    let doc = suite(dir.path(), &["qd", "--qd", "1", "--rw", "randread"]);
    let page = dir.path().join("p.html");
    let html = html_of(&[&doc], &page);
    let charts: Vec<_> = (html.select(&sel("svg.chart")))
        .filter(|c| {
            c.select(&sel("title"))
                .next()
                .is_some_and(|t| t.inner_html().starts_with("Latency percentiles"))
        })
        .collect();
    assert!(!charts.is_empty(), "no percentile chart");
    let p50 = read_json(&doc)["runs"][0]["repetitions"][0]["read"]["lat_ns"]["p50"]
        .as_f64()
        .unwrap();
    for c in charts {
        let title = c.select(&sel("title")).next().unwrap().inner_html();
        assert!(title.contains("repetition 1"), "{title}");
        let points: Vec<String> = (c.select(&sel("circle.point title")))
            .map(|t| t.inner_html())
            .collect();
        let first = points.first().expect("points");
        assert!(first.starts_with("read: p50 → "), "{first}");
        let shown = first.trim_start_matches("read: p50 → ");
        let (v, unit) = shown.split_once(' ').unwrap();
        let scale = match unit {
            "ns" => 1.0,
            "µs" => 1e3,
            "ms" => 1e6,
            _ => panic!("{shown}: no unit"),
        };
        let v: f64 = v.parse().unwrap();
        assert!(
            (v * scale - p50).abs() <= 0.01 * p50,
            "{shown} for p50 {p50} ns"
        );
    }
}

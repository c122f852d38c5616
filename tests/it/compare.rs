//! `iomark compare` against an adversarial reading: latencies compared direction by
//! direction on mixed runs, a verdict that agrees with its own interval, pairs whose
//! workloads differ in targets or offset noted, and labels that tell runs apart (in the
//! HTML forest plots too, measured by a real browser).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use scraper::{Html, Selector};
use serde_json::Value;

use crate::common::{
    assert_success, browse, chromium, compare_json, iomark, require, run_json, stdout_of, tmp,
    write_json,
};

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

/// A null-engine results document of `rw` with `reps` repetitions (its figures are then
/// set by the test).
fn null_doc(dir: &Path, rw: &str, reps: &str) -> Value {
    let f = dir.join("n.dat");
    run_json(&[
        "run",
        "--engine",
        "null",
        "--rw",
        rw,
        "--size",
        "1m",
        "--runtime",
        "50ms",
        "--repeat",
        reps,
        f.to_str().unwrap(),
    ])
}

/// Sets one direction's IOPS and p99 per repetition, and the summary's mean IOPS (which
/// says which direction "did most I/O").
fn set_dir(doc: &mut Value, dir: &str, iops: &[f64], p99_ns: &[u64]) {
    let reps = doc["runs"][0]["repetitions"].as_array_mut().unwrap();
    for (r, (i, p)) in reps.iter_mut().zip(iops.iter().zip(p99_ns)) {
        r[dir]["iops"] = Value::from(*i);
        r[dir]["bw_bytes"] = Value::from(*i * 4096.0);
        r[dir]["lat_ns"]["p99"] = Value::from(*p);
        r[dir]["lat_ns"]["p50"] = Value::from(*p / 2);
    }
    let mean = iops.iter().sum::<f64>() / iops.len() as f64;
    doc["runs"][0]["summary"][dir]["iops"]["mean"] = Value::from(mean);
}

/// `iomark compare files… --format F` (expects success).
fn compare_as(files: &[PathBuf], format: &str) -> String {
    let mut args: Vec<&OsStr> = vec![OsStr::new("compare")];
    args.extend(files.iter().map(|f| f.as_os_str()));
    args.extend([OsStr::new("--format"), OsStr::new(format)]);
    String::from_utf8(stdout_of(&args)).unwrap()
}

/// The tests of a comparison's `cell` in row `row`.
fn tests_of(cmp: &Value, row: usize, cell: usize) -> Vec<Value> {
    cmp["rows"][row]["cells"][cell]["tests"]
        .as_array()
        .unwrap()
        .clone()
}

/// Probe finding A: a 50/50 mix where A did slightly more writes and B more reads. The
/// old comparison set A's write p99 against B's read p99 (0.754x, "faster") where both
/// directions were slower; each direction is now compared with itself, and every format
/// names it.
#[test]
fn a_mixed_runs_compare_latency_direction_by_direction() {
    let dir = tmp();
    let base = null_doc(dir.path(), "randrw", "3");
    let mut a = base.clone();
    set_dir(
        &mut a,
        "read",
        &[990.0, 991.0, 989.0],
        &[1_250_000, 1_260_000, 1_240_000],
    );
    set_dir(
        &mut a,
        "write",
        &[1000.0, 1001.0, 999.0],
        &[2_048_000, 2_050_000, 2_046_000],
    );
    let mut b = base.clone();
    // Both directions slower in B: reads 1.23x, writes 1.63x; B did more reads.
    set_dir(
        &mut b,
        "read",
        &[1010.0, 1011.0, 1009.0],
        &[1_537_500, 1_549_800, 1_525_200],
    );
    set_dir(
        &mut b,
        "write",
        &[980.0, 981.0, 979.0],
        &[3_338_240, 3_341_500, 3_334_980],
    );
    let files = [
        write_json(dir.path(), "a", &a),
        write_json(dir.path(), "b", &b),
    ];
    let cmp = compare_json(&files);
    let t = tests_of(&cmp, 0, 1);
    let lat = |fig: &str, d: &str| {
        t.iter()
            .find(|x| x["figure"] == fig && x["direction"] == d)
            .unwrap_or_else(|| panic!("no {fig} {d} test: {t:?}"))
            .clone()
    };
    for (d, want) in [("read", 1.23), ("write", 1.63)] {
        let p99 = lat("lat_p99_ns", d);
        let r = p99["ratio"].as_f64().unwrap();
        assert!((r - want).abs() < 0.005, "{d} p99 ratio {r}, want {want}");
        assert_eq!(p99["verdict"]["verdict"], "significant", "{p99}");
        let p50 = lat("lat_p50_ns", d);
        assert!((p50["ratio"].as_f64().unwrap() - want).abs() < 0.005);
    }
    // Totals name no direction.
    assert!(t[0]["direction"].is_null(), "{}", t[0]);
    // The baseline has the same tests in the same order.
    let base_tests = tests_of(&cmp, 0, 0);
    assert_eq!(base_tests.len(), t.len());
    for (x, y) in base_tests.iter().zip(&t) {
        assert_eq!(
            (&x["figure"], &x["direction"]),
            (&y["figure"], &y["direction"])
        );
    }
    // The cell's own p50/p99 fields say their direction: reads on a 50/50 mix, both sides.
    for c in 0..2 {
        assert_eq!(cmp["rows"][0]["cells"][c]["latency_direction"], "read");
    }

    // Markdown, CSV and HTML name the direction of every latency row.
    let md = compare_as(&files, "md");
    for fig in [
        "| p99 µs read |",
        "| p99 µs write |",
        "| p50 µs read |",
        "| p50 µs write |",
    ] {
        assert_eq!(md.matches(fig).count(), 2, "{fig}: {md}");
    }
    assert!(!md.contains("| p99 µs |"), "{md}");
    assert!(!md.contains("did most I/O"), "{md}");
    let csv = compare_as(&files, "csv");
    assert!(csv.contains(",p99 µs write,"), "{csv}");
    assert!(csv.contains(",p99 µs read,"), "{csv}");
    let html = Html::parse_document(&compare_as(&files, "html"));
    let p99_forest = html
        .select(&sel("svg[data-kind=forest]"))
        .find(|s| {
            s.value()
                .attr("aria-label")
                .unwrap_or("")
                .starts_with("p99")
        })
        .expect("a p99 forest plot");
    let mut labels: Vec<String> = p99_forest
        .select(&sel("text.row-label"))
        .map(|l| l.text().collect())
        .collect();
    labels.sort();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(labels[0].ends_with("read latency"), "{labels:?}");
    assert!(labels[1].ends_with("write latency"), "{labels:?}");
    let ratios: Vec<f64> = p99_forest
        .select(&sel("circle.ratio"))
        .map(|c| c.value().attr("data-ratio").unwrap().parse().unwrap())
        .collect();
    assert!(ratios.iter().all(|r| *r > 1.2), "both slower: {ratios:?}");
    assert!(
        html.select(&sel("td"))
            .any(|td| td.text().collect::<String>() == "p99 µs write"),
        "the HTML table names the direction"
    );
}

/// Probe finding B: an interval clear of 1 next to "not significant". Logs of three
/// repetitions a side, 0, 0.5, 1 apart (sd 0.5), B's 1.2 higher: Welch's t on the logs
/// is 1.2 / √(2 · 0.25/3) = 2.939 with 4 degrees of freedom (equal variances and sizes),
/// p between 0.04 (t = 2.999) and 0.05 (t = 2.776); the ratio of geometric means is
/// e^1.2 = 3.320 and its interval e^(1.2 ± 2.776 · 0.4082) = 1.069–10.314. The old test on
/// the linear means said p = 0.12, not significant, beside an interval clear of 1.
#[test]
fn b_the_verdict_agrees_with_its_interval() {
    let dir = tmp();
    let base = null_doc(dir.path(), "randread", "3");
    let logs = [0.0f64, 0.5, 1.0];
    let p99 = |shift: f64| -> Vec<u64> {
        logs.iter()
            .map(|l| (100_000.0 * (l + shift).exp()).round() as u64)
            .collect()
    };
    let mut a = base.clone();
    set_dir(&mut a, "read", &[1000.0, 1000.0, 1000.0], &p99(0.0));
    let mut e = base.clone();
    set_dir(&mut e, "read", &[1000.0, 1000.0, 1000.0], &p99(1.2));
    let files = [
        write_json(dir.path(), "a", &a),
        write_json(dir.path(), "e", &e),
    ];
    let cmp = compare_json(&files);
    let t = tests_of(&cmp, 0, 1);
    let p99 = t.iter().find(|x| x["figure"] == "lat_p99_ns").unwrap();
    let r = p99["ratio"].as_f64().unwrap();
    assert!((r - 3.320).abs() < 0.002, "{p99}");
    let ci: Vec<f64> = p99["ratio_ci95"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(
        (ci[0] - 1.069).abs() < 0.002 && (ci[1] - 10.314).abs() < 0.01,
        "{ci:?}"
    );
    assert_eq!(p99["verdict"]["verdict"], "significant", "{p99}");
    let p = p99["verdict"]["p"].as_f64().unwrap();
    assert!(0.04 < p && p < 0.05, "p {p}");
    // Every test of every cell: significant exactly when the interval excludes 1.
    for row in cmp["rows"].as_array().unwrap() {
        for cell in row["cells"].as_array().unwrap() {
            for t in cell["tests"].as_array().unwrap() {
                let Some(ci) = t["ratio_ci95"].as_array() else {
                    continue;
                };
                let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
                let sig = t["verdict"]["verdict"] == "significant";
                assert_eq!(sig, lo > 1.0 || hi < 1.0, "{t}");
            }
        }
    }
}

/// Probe finding C: a two-target run (two jobs in total) paired with a one-target run
/// under "jobs=1", and a run at offset 32 MiB paired with one at 0, each without a note.
#[test]
fn c_pairs_that_differ_in_targets_or_offset_say_so() {
    let dir = tmp();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let run = |extra: &[&str], targets: &[String]| -> Value {
        let mut args = vec![
            "run",
            "--rw",
            "randread",
            "--size",
            "1m",
            "--runtime",
            "50ms",
            "--repeat",
            "2",
        ];
        args.extend_from_slice(extra);
        args.extend(targets.iter().map(String::as_str));
        run_json(&args)
    };
    let one = run(&[], &[p("f.dat")]);
    let two = run(&[], &[p("f.dat"), p("g.dat")]);
    let off = run(&["--offset", "32m"], &[p("h.dat")]);
    let files = [
        write_json(dir.path(), "one", &one),
        write_json(dir.path(), "two", &two),
        write_json(dir.path(), "off", &off),
    ];
    let cmp = compare_json(&files);
    assert_eq!(
        cmp["rows"].as_array().unwrap().len(),
        1,
        "still paired: {cmp}"
    );
    let differs = |c: usize| -> Vec<String> {
        cmp["rows"][0]["cells"][c]["differs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        differs(1).contains(&"targets 2 vs 1".to_string()),
        "{:?}",
        differs(1)
    );
    assert!(
        differs(1).contains(&"jobs in total 2 vs 1".to_string()),
        "{:?}",
        differs(1)
    );
    assert!(
        differs(2).contains(&"offset 32 MiB vs 0 B".to_string()),
        "{:?}",
        differs(2)
    );
    assert!(
        !differs(2).iter().any(|d| d.starts_with("targets")),
        "{:?}",
        differs(2)
    );
    let md = compare_as(&files, "md");
    assert!(md.contains("targets 2 vs 1"), "{md}");
    assert!(md.contains("offset 32 MiB vs 0 B"), "{md}");
    let csv = compare_as(&files, "csv");
    assert!(csv.contains("jobs in total 2 vs 1"), "{csv}");
    let html = compare_as(&files, "html");
    assert!(html.contains("offset 32 MiB vs 0 B"), "{html}");
}

/// A compress study (three levels) on a small file, its document's path.
fn compress_study(dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(format!("{name}.json"));
    let t = dir.join(format!("{name}.dat"));
    assert_success(
        &iomark()
            .args(["suite", "compress", "--runtime", "100ms", "--ramp", "0"])
            .args(["--size", "4m", "--repeat", "2", "--quiet", "-o"])
            .arg(&out)
            .arg(&t)
            .output()
            .unwrap(),
    );
    out
}

/// Probe finding D: in a compress study the three read runs were all "read bs=4k qd=32
/// jobs=1 direct", and the HTML forest plots cut long labels off on the left. Every row
/// is now named apart (the study's compress level), in every format, and a real browser
/// finds every forest label inside its chart, left of the plot.
#[test]
fn d_labels_tell_runs_apart_and_fit() {
    let dir = tmp();
    let files = [
        compress_study(dir.path(), "cs"),
        compress_study(dir.path(), "cs2"),
    ];
    let cmp = compare_json(&files);
    let keys: Vec<&str> = cmp["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 15, "3 levels × (fill + 4 corners): {keys:?}");
    let mut uniq = keys.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), keys.len(), "labels apart: {keys:?}");
    for level in ["98", "50", "2"] {
        assert!(
            keys.iter()
                .any(|k| k.starts_with("read ") && k.contains(&format!("compress={level}"))),
            "{keys:?}"
        );
    }
    // Every pair is the same level on both sides: nothing differs (but the other
    // processes busy beside one study and not the other, which the suite's own
    // parallel tests can be).
    for r in cmp["rows"].as_array().unwrap() {
        let differs: Vec<&str> = (r["cells"][1]["differs"].as_array().unwrap().iter())
            .map(|d| d.as_str().unwrap())
            .filter(|d| !d.starts_with("other processes busy"))
            .collect();
        assert_eq!(differs, Vec::<&str>::new(), "{r}");
    }
    let md = compare_as(&files, "md");
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with("## ")).collect();
    let mut hu = headings.clone();
    hu.sort();
    hu.dedup();
    assert_eq!(hu.len(), 15, "{headings:?}");

    // The forest plots in a browser: every row label inside the chart and left of the
    // plot area (x of the first tick line or the axis).
    let Some(chromium) = chromium() else {
        require(
            "chromium (headless browser), to measure the forest labels",
            false,
        );
        return;
    };
    let page = dir.path().join("cmp.html");
    let mut html = compare_as(&files, "html");
    // Measure each label where the browser put it, and write it into the DOM.
    html = html.replace(
        "</body>",
        "<script>for (const s of document.querySelectorAll('svg[data-kind=forest]')) { \
         const left = Math.min(...[...s.querySelectorAll('line.tick')].map(l => l.x1.baseVal.value)); \
         for (const t of s.querySelectorAll('text.row-label')) { const b = t.getBBox(); \
         t.setAttribute('data-bx', b.x); t.setAttribute('data-bw', b.width); \
         t.setAttribute('data-left', left); } }</script></body>",
    );
    std::fs::write(&page, &html).unwrap();
    let dom = browse(
        chromium,
        dir.path(),
        &["--dump-dom", &format!("file://{}", page.display())],
    );
    let dom = Html::parse_document(&String::from_utf8_lossy(&dom.stdout));
    let mut n = 0;
    for svg in dom.select(&sel("svg[data-kind=forest]")) {
        let mut seen = Vec::new();
        for t in svg.select(&sel("text.row-label")) {
            let v = |k: &str| -> f64 {
                t.value()
                    .attr(k)
                    .unwrap_or_else(|| panic!("{k} not measured"))
                    .parse()
                    .unwrap()
            };
            let text: String = t.text().collect();
            assert!(
                v("data-bx") >= 0.0,
                "{text} clipped on the left: x {}",
                v("data-bx")
            );
            assert!(
                v("data-bx") + v("data-bw") <= v("data-left"),
                "{text} runs into the plot: {} + {} > {}",
                v("data-bx"),
                v("data-bw"),
                v("data-left")
            );
            seen.push(text);
            n += 1;
        }
        let all = seen.len();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), all, "labels apart: {seen:?}");
    }
    assert!(n >= 30, "{n} labels measured");
}

/// A run stopped before its first repetition was measured (Ctrl-C during --ramp) has no
/// figures: it pairs with nothing, and the note says so, where it was compared as 0 IOPS
/// ("ratio 0.000").
#[test]
fn a_run_with_nothing_measured_is_no_figure() {
    let dir = tmp();
    let d = dir.path();
    let a = null_doc(d, "randread", "1");
    let mut b = a.clone();
    b["runs"][0]["repetitions"] = Value::Array(Vec::new());
    b["runs"][0]["status"] = Value::from("interrupted");
    let files = [write_json(d, "a", &a), write_json(d, "b", &b)];
    let cmp = compare_json(&files);
    let cells = cmp["rows"][0]["cells"].as_array().unwrap();
    assert!(cells[1].is_null(), "{}", cells[1]);
    let md = compare_as(&files, "md");
    assert!(
        md.contains("B (b.json) has no measured run like it"),
        "{md}"
    );
    assert!(!md.contains("0.000"), "{md}");
}

/// `compare a.json a.json` compared every run with itself (every ratio 1, nothing
/// significant) without a word: it now says the two are the same file. Two different
/// files are not.
#[test]
fn compare_says_when_one_file_is_given_twice() {
    let dir = tmp();
    let doc = run_json(&["run", "--engine", "null", "--rw", "read", "--size", "4m"]);
    let a = write_json(dir.path(), "a", &doc);
    let b = write_json(dir.path(), "b", &doc);
    let out = iomark().arg("compare").args([&a, &a]).output().unwrap();
    assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("are the same file"), "{err}");
    let out = iomark().arg("compare").args([&a, &b]).output().unwrap();
    assert_success(&out);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("same file"));
}

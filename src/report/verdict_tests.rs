//! The words around the figures, on hand-built documents (issue 12, items 1–6): page-cache
//! hits and device counters as measured, the queue-depth saturation verdict, no spread
//! claimed for one repetition, the data and write amplification of writing runs, and
//! notes that name the study value.

use crate::plan::spec::Rw;
use crate::report::tables::{QdPoint, Saturation, saturation};
use crate::report::{Format, compare, notes, report, tables, text};
use crate::results::env::DeviceDelta;
use crate::results::schema::{DataMeasure, WriteAmplification};
use crate::results::testdoc::{doc, run};

fn qd_points(p: &[(u64, f64)]) -> Vec<QdPoint> {
    p.iter()
        .map(|&(qd, mean)| QdPoint {
            qd,
            mean,
            ci95: None,
        })
        .collect()
}

// Item 2: one noisy dip must not end the search.
#[test]
fn saturation_is_the_smallest_depth_near_the_best_not_the_first_dip() {
    // The run: 102.8k at QD 2, a dip at QD 4, 165.5k at QD 32.
    let pts = qd_points(&[
        (1, 52_000.0),
        (2, 102_800.0),
        (4, 99_000.0),
        (8, 131_000.0),
        (16, 150_000.0),
        (32, 165_500.0),
        (64, 163_000.0),
    ]);
    assert_eq!(
        saturation(&pts),
        Some(Saturation::At {
            qd: 32,
            best_qd: 32,
            best: 165_500.0
        })
    );
    // Still growing at the deepest depth; too few depths for a verdict.
    let growing = qd_points(&[(1, 10.0), (2, 19.0), (4, 35.0)]);
    assert_eq!(saturation(&growing), Some(Saturation::Growing));
    assert_eq!(saturation(&growing[..2]), None);
    // Within 95% of the best mean, but its interval clearly below the best's: not reached.
    let mut pts = qd_points(&[(1, 50.0), (2, 96.0), (4, 100.0), (8, 99.0)]);
    pts[1].ci95 = Some(0.5);
    pts[2].ci95 = Some(0.5);
    pts[3].ci95 = Some(0.5);
    assert!(matches!(
        saturation(&pts),
        Some(Saturation::At { qd: 4, .. })
    ));
    // Overlapping intervals: QD 2 counts.
    pts[1].ci95 = Some(3.0);
    pts[2].ci95 = Some(2.0);
    assert!(matches!(
        saturation(&pts),
        Some(Saturation::At { qd: 2, .. })
    ));
}

#[test]
fn the_saturation_text_says_what_it_means_and_only_for_a_qd_sweep_of_one_workload() {
    let iops = [52e3, 102.8e3, 99e3, 131e3, 150e3, 165.5e3, 163e3];
    let runs = [1u32, 2, 4, 8, 16, 32, 64]
        .iter()
        .zip(iops)
        .map(|(&q, v)| {
            run(
                Rw::RandRead,
                q,
                &[v],
                Some(("randread", "qd", &q.to_string())),
            )
        })
        .collect();
    let out = text::study_tables(&doc(runs));
    assert!(
        out.contains("IOPS saturate at QD 32: the smallest depth reaching 95% of the best mean"),
        "{out}"
    );
    assert!(!out.contains("QD 2:"), "{out}");
    // corners: two depths of a test are two corners, not a sweep.
    let corners = doc(vec![
        run(Rw::RandRead, 1, &[9e3], Some(("randread", "qd", "1"))),
        run(Rw::RandRead, 32, &[90e3], Some(("randread", "qd", "32"))),
    ]);
    let out = text::study_tables(&corners);
    assert!(
        !out.contains("growing") && !out.contains("saturate"),
        "{out}"
    );
    // Depths of different workloads in one test: no verdict either.
    let mixed = doc(vec![
        run(Rw::RandRead, 1, &[9e3], Some(("t", "qd", "1"))),
        run(Rw::RandWrite, 2, &[20e3], Some(("t", "qd", "2"))),
        run(Rw::RandRead, 4, &[40e3], Some(("t", "qd", "4"))),
    ]);
    let out = text::study_tables(&mixed);
    assert!(
        !out.contains("growing") && !out.contains("saturate"),
        "{out}"
    );
}

// Item 4: one repetition has no spread, in every format.
#[test]
fn one_repetition_shows_no_stddev_in_any_format() {
    let one = doc(vec![
        run(Rw::RandRead, 1, &[1000.0], Some(("randread", "qd", "1"))),
        run(
            Rw::RandRead,
            4,
            &[3000.0, 3100.0],
            Some(("randread", "qd", "4")),
        ),
    ]);
    // Terminal study table: "± stddev" columns of the first row.
    let st = &tables::studies(&one)[0].table;
    assert_eq!(st.rows[0][2].text, "-");
    assert_eq!(st.rows[0][4].text, "-");
    assert_eq!(st.rows[0][8].text, "-", "CV");
    assert_ne!(st.rows[1][2].text, "-", "two repetitions have a stddev");
    let term = text::study_tables(&one);
    assert!(!term.contains(" 0.0 "), "{term}");
    // Markdown, CSV and HTML report tables (IOPS sd, MB/s sd).
    let docs = vec![("a.json".to_string(), one.clone())];
    let md = report(&docs, Format::Md);
    let row = md.lines().find(|l| l.contains("qd1")).unwrap();
    assert!(row.contains("| 1000 | - | 4.10 | - |"), "{row}");
    let csv = report(&docs, Format::Csv);
    let row = csv.lines().find(|l| l.contains("qd1")).unwrap();
    assert!(row.contains(",1000,,4.10,,"), "{row}");
    let html = report(&docs, Format::Html);
    assert!(
        html.contains("<td>1000</td><td>-</td><td>4.10</td><td>-</td>"),
        "no sd 0 in the summary table"
    );
    assert!(!html.contains("1000 ± 0"), "no ± 0 on a bar");
    // compare: both sides with one repetition.
    let c = compare::compare(&[("a".into(), one.clone()), ("b".into(), one)]);
    let t = tables::comparison(&c);
    let sd = t.header.iter().position(|h| h == "sd").unwrap();
    assert_eq!(t.rows[0][sd].text, "-", "{:?}", t.rows[0]);
    assert!(!crate::report::comparison(&c, Format::Html).contains("± 0<"));
}

// Item 6: the swept value names the run.
#[test]
fn notes_name_the_swept_value() {
    let runs = ["98", "50", "2"]
        .iter()
        .map(|c| {
            let mut r = run(Rw::Write, 32, &[1.0, 2.0], Some(("write", "compress", c)));
            r.warnings
                .push("write IOPS varied by 33.2% (coefficient of variation)".into());
            r
        })
        .collect();
    let out = notes::run_notes(&doc(runs));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines[0].starts_with("note (write 4k qd32, compress 98): write IOPS"),
        "{out}"
    );
    assert!(
        lines[2].starts_with("note (write 4k qd32, compress 2):"),
        "{out}"
    );
    // A value the name already shows is not repeated.
    let mut r = run(Rw::RandRead, 32, &[1.0], Some(("randread", "qd", "32")));
    r.warnings.push("x".into());
    assert_eq!(
        notes::run_notes(&doc(vec![r])),
        "note (randread 4k qd32): x\n"
    );
}

fn zram_amplification(r: &mut crate::results::schema::Run, stored_pct: f64) {
    let wa = WriteAmplification {
        source: "zram".into(),
        host_bytes: Some(100 << 20),
        device_bytes: Some(((100 << 20) as f64 * stored_pct / 100.0) as u64),
        ratio: Some(stored_pct / 100.0),
        note: "zram mm_stat after the run".into(),
        outside_bytes: None,
    };
    r.write_amplification = Some(wa.clone());
    r.write_amplification_sources = vec![
        WriteAmplification {
            source: "block_layer".into(),
            host_bytes: Some(100 << 20),
            device_bytes: Some(100 << 20),
            ratio: Some(1.0),
            note: "kernel counters".into(),
            outside_bytes: None,
        },
        wa,
    ];
}

// Item 5: what the data was and what the device stored.
#[test]
fn the_compress_table_and_run_text_show_measured_data_and_amplification() {
    let mut w = run(Rw::Write, 32, &[5000.0], Some(("write", "compress", "50")));
    w.repetitions[0].data = Some(DataMeasure {
        lz4_pct: 48.7,
        zstd_pct: 51.2,
        dedup_pct: Some(0.0),
        compress_sampled_bytes: 4 << 20,
        dedup_sampled_units: 1024,
    });
    zram_amplification(&mut w, 52.3);
    let r = run(Rw::Read, 32, &[9000.0], Some(("read", "compress", "50")));
    let d = doc(vec![w.clone(), r]);
    let out = text::study_tables(&d);
    for col in [
        "compress (asked)",
        "lz4 saves",
        "zstd saves",
        "device stored",
        "write ampl.",
    ] {
        assert!(out.contains(col), "{col} in {out}");
    }
    let st = tables::studies(&d);
    let row = &st[0].table.rows[0];
    let cells: Vec<&str> = row.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(cells[0], "50%");
    assert_eq!(
        &cells[10..],
        ["49%", "51%", "52%", "0.52 (zram)"],
        "{cells:?}"
    );
    let read_row: Vec<&str> = st[1].table.rows[0]
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(&read_row[10..], ["-", "-", "-", "-"]);
    // run's text reports write amplification, every source.
    let s = text::run_summary(&w);
    assert!(
        s.contains("write amplification (zram, best source): 0.523"),
        "{s}"
    );
    assert!(
        s.contains("write amplification (block_layer): 1.000"),
        "{s}"
    );
}

/// A zram figure blended with data outside the span is marked, with the span's share
/// below the table; the runs of one span narrow each other's bounds (a fill that
/// rewrote the span whole pins what lies outside, a random write after it does not).
#[test]
fn a_blended_zram_figure_is_marked_with_the_spans_share() {
    let mut fill = run(Rw::Write, 32, &[5000.0], Some(("fill", "compress", "98")));
    zram_amplification(&mut fill, 51.0);
    let mut rand = run(
        Rw::RandWrite,
        32,
        &[5000.0],
        Some(("randwrite", "compress", "98")),
    );
    zram_amplification(&mut rand, 51.0);
    let outside = |r: &mut crate::results::schema::Run, b: [u64; 2]| {
        for w in &mut r.write_amplification_sources {
            if w.source == "zram" {
                w.outside_bytes = Some(b);
            }
        }
    };
    // 100 MiB stored; 25 MiB outside the span (the fill knows), 0 to 60 (randwrite alone).
    outside(&mut fill, [25 << 20, 25 << 20]);
    outside(&mut rand, [0, 60 << 20]);
    let st = tables::studies(&doc(vec![fill.clone(), rand.clone()]));
    for t in &st {
        let cells: Vec<&str> = t.table.rows[0].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            &cells[12..],
            ["51% *", "0.51 (zram) *"],
            "{}: {cells:?}",
            t.test
        );
        assert_eq!(t.notes.len(), 1);
        assert!(t.notes[0].contains("by row: 98%: 75%."), "{}", t.notes[0]);
    }
    // The randwrite alone: a range.
    let st = tables::studies(&doc(vec![rand.clone()]));
    assert!(
        st[0].notes[0].contains("by row: 98%: 40%–100%."),
        "{}",
        st[0].notes[0]
    );
    // Nothing outside: no mark, no note.
    outside(&mut fill, [0, 0]);
    let st = tables::studies(&doc(vec![fill, rand]));
    assert!(st.iter().all(|t| t.notes.is_empty()), "{:?}", st[1].notes);
    assert_eq!(st[1].table.rows[0][12].text, "51%");
}

// Items 1 and 3: the page cache and the device counters, as measured.
#[test]
fn page_cache_hits_and_device_counters_are_reported_as_measured() {
    let mut r = run(Rw::RandRead, 1, &[25_000.0], None);
    r.spec.direct = false;
    let read = r.repetitions[0].read.bytes;
    // 38% of the bytes read reached the device; other processes wrote 6 GiB.
    let dev = DeviceDelta {
        name: "vda".into(),
        read_ios: 9500,
        read_bytes: read * 38 / 100,
        write_ios: 49810,
        write_bytes: 6 << 30,
        ..Default::default()
    };
    r.repetitions[0].page_cache_hit_pct = dev.page_cache_hit_pct(read);
    r.repetitions[0].device = Some(dev);
    let s = text::run_summary(&r);
    assert!(
        s.contains("cache: 62% of reads served from memory (page cache)"),
        "{s}"
    );
    assert!(
        s.contains("device vda (the whole device, all processes)"),
        "{s}"
    );
    assert!(
        s.contains("the device's writes were clearly more than iomark's"),
        "{s}"
    );
    assert!(!s.contains("reached the block layer"), "{s}");
    // The cache study labels rows by the measurement, not by "buffered".
    let mut cold = r.clone();
    cold.study = Some(crate::plan::StudyPoint {
        suite: "cache".into(),
        test: "randread 4k".into(),
        param: "cache".into(),
        value: "buffered".into(),
    });
    cold.repetitions[0].page_cache_hit_pct = Some(3.0);
    let mut warm = cold.clone();
    warm.study.as_mut().unwrap().value = "buffered warm".into();
    warm.repetitions[0].page_cache_hit_pct = Some(99.6);
    let mut direct = run(Rw::RandRead, 1, &[9e3], None);
    direct.study = cold.study.clone();
    direct.study.as_mut().unwrap().value = "direct".into();
    let st = tables::studies(&doc(vec![direct, cold, warm]));
    let labels: Vec<&str> = st[0]
        .table
        .rows
        .iter()
        .map(|r| r[0].text.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "direct",
            "buffered (3% from cache)",
            "buffered warm (100% from cache)"
        ]
    );
    // Buffered writes: what the device wrote in the window, by its counters, whether
    // nothing flushed them or the flush was in the window (--end-fsync, probe 14: the
    // label was missing though the device wrote 2%).
    let point = |value: &str| crate::plan::StudyPoint {
        suite: "cache".into(),
        test: "randwrite 4k".into(),
        param: "cache".into(),
        value: value.into(),
    };
    let written = |dev: u64, end_fsync: bool, value: &str| {
        let mut w = run(Rw::RandWrite, 1, &[1000.0], None);
        w.spec.direct = false;
        w.spec.end_fsync = end_fsync;
        w.study = Some(point(value));
        w.repetitions[0].device = Some(crate::results::env::DeviceDelta {
            name: "vdx".into(),
            write_bytes: dev,
            ..Default::default()
        });
        w
    };
    let st = tables::studies(&doc(vec![
        written(1_024_000, false, "buffered"),
        written(1_024, false, "buffered small"),
        written(2_048_000, true, "buffered flushed"),
    ]));
    let labels: Vec<&str> = (st[0].table.rows.iter())
        .map(|r| r[0].text.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "buffered (device wrote 25%)",
            "buffered small (device wrote under 0.1%)",
            "buffered flushed (device wrote 50%)"
        ]
    );
}

// A run cut before it measured anything (probe 7): no figures, not zeros, in the study
// table and the charts; a steady-state study cut before a window: no NaN.
#[test]
fn a_run_that_measured_nothing_shows_no_figures_and_no_point() {
    use crate::results::schema::Status;
    let mut cut = run(Rw::RandRead, 4, &[], Some(("randread", "qd", "4")));
    cut.status = Status::Interrupted;
    let d = doc(vec![
        run(Rw::RandRead, 1, &[9e3], Some(("randread", "qd", "1"))),
        cut,
        run(Rw::RandRead, 16, &[50e3], Some(("randread", "qd", "16"))),
    ]);
    let out = text::study_tables(&d);
    let row = (out.lines())
        .find(|l| l.contains("4 (interrupted)"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(!row.contains("0 ns") && !row.contains(" 0.0 "), "{row}");
    let html = report(&[("d".into(), d)], Format::Html);
    // The points of the study's charts (IOPS and latency against the queue depth).
    assert!(
        html.contains("<title>randread: 16 → "),
        "the measured runs have points"
    );
    assert!(
        !html.contains("<title>randread: 4 → "),
        "a point for the run that measured nothing"
    );
    let mut steady = doc(vec![]);
    steady.steady_state = Some(crate::results::steady::evaluate(
        &[1e3, 2e3],
        Default::default(),
    ));
    let v = notes::steady_verdict(&steady).unwrap();
    assert!(!v.contains("NaN") && v.contains("fewer than the 5"), "{v}");
}

// The report of a steady-state study says what the run printed (probe 11).
#[test]
fn the_report_of_a_steady_state_study_gives_its_verdict() {
    let iops = [50e3, 40e3, 41e3, 40.5e3, 40.8e3, 40.6e3];
    let runs = (iops.iter().enumerate())
        .map(|(i, &v)| {
            let round = (i + 1).to_string();
            run(Rw::RandWrite, 32, &[v], Some(("steady", "round", &round)))
        })
        .collect();
    let mut d = doc(runs);
    d.steady_state = Some(crate::results::steady::evaluate(&iops, Default::default()));
    let want = notes::steady_verdict(&d).unwrap();
    assert!(
        want.starts_with("steady state reached at round 6"),
        "{want}"
    );
    let md = report(&[("d".into(), d.clone())], Format::Md);
    assert!(md.contains(want.trim_end()), "{md}");
    // The CSV has it on every round's row (probe 14: no verdict in the CSV).
    let csv = report(&[("d".into(), d.clone())], Format::Csv);
    let mut r = ::csv::Reader::from_reader(csv.as_bytes());
    let at = (r.headers().unwrap().iter())
        .position(|h| h == "verdict")
        .unwrap_or_else(|| panic!("{csv}"));
    let rows: Vec<_> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), iops.len(), "{csv}");
    assert!(rows.iter().all(|row| &row[at] == want.trim()), "{csv}");
    let html = report(&[("d".into(), d)], Format::Html);
    assert!(html.contains(&format!("<p class=\"steady\">{}</p>", want.trim_end())));
}

// The HTML report has a study's tables and verdicts, as the text report does (the
// compress study's measured data and device columns were in the text alone).
#[test]
fn the_html_report_has_the_study_tables_and_verdicts() {
    let runs = [(1u32, 52e3), (4, 120e3), (16, 160e3), (64, 162e3)]
        .iter()
        .map(|&(q, v)| {
            let qd = q.to_string();
            run(Rw::RandRead, q, &[v], Some(("randread", "qd", &qd)))
        })
        .collect();
    let d = doc(runs);
    let text = text::study_tables(&d);
    let verdict = (text.lines())
        .find(|l| l.starts_with("IOPS saturate at QD 16"))
        .unwrap_or_else(|| panic!("{text}"))
        .to_string();
    let html = report(&[("d".into(), d)], Format::Html);
    let at = html
        .find("<section class=\"study\"")
        .expect("a study section");
    let section = &html[at..];
    assert!(section.contains("<table class=\"study\">"), "{section}");
    assert!(section.contains(&verdict), "{section}");
    // The latency chart's axis is logarithmic and its label says so, as the percentile
    // chart's does (probe 14: "latency (µs)" over ticks 10, 100, 1k).
    let chart = (section.split("<svg ").skip(1))
        .find(|c| c.contains("<title>Latency vs qd</title>"))
        .unwrap_or_else(|| panic!("{section}"));
    assert!(
        chart.contains(">latency (µs, log)</text>"),
        "{}",
        &chart[..600.min(chart.len())]
    );
}

// A qd sweep cut at its deepest queue (probe 13b): the cut run, partial, is not in the
// saturation verdict, and the verdict says so instead of leaving it to the table.
#[test]
fn a_saturation_verdict_names_the_depths_it_did_not_count() {
    use crate::results::schema::Status;
    let mut cut = run(Rw::RandRead, 16, &[120e3], Some(("randread", "qd", "16")));
    cut.status = Status::Interrupted;
    let d = doc(vec![
        run(Rw::RandRead, 1, &[20e3], Some(("randread", "qd", "1"))),
        run(Rw::RandRead, 4, &[60e3], Some(("randread", "qd", "4"))),
        run(Rw::RandRead, 8, &[95e3], Some(("randread", "qd", "8"))),
        cut,
    ]);
    let st = tables::studies(&d);
    let v = text::study_verdict(&st[0]).expect("a verdict over 3 complete depths");
    assert!(
        v.starts_with("IOPS still growing")
            && v.ends_with("(QD 16, not completed, is not counted)"),
        "{v}"
    );
    // Nothing left out: nothing said.
    let whole = doc(vec![
        run(Rw::RandRead, 1, &[20e3], Some(("randread", "qd", "1"))),
        run(Rw::RandRead, 4, &[60e3], Some(("randread", "qd", "4"))),
        run(Rw::RandRead, 8, &[95e3], Some(("randread", "qd", "8"))),
    ]);
    let v = text::study_verdict(&tables::studies(&whole)[0]).unwrap();
    assert!(!v.contains("not counted"), "{v}");
}

/// The write amplification's row in the reports (HTML, Markdown) gives the device's bytes
/// and the host's in the order its ratio divides them, saying which is which (it read
/// "1.002 (27374125056 of 27323793408 bytes) — bytes iomark wrote against bytes the
/// kernel sent", the reverse of its figures); the cache line rounds both shares as
/// `fmt_pct` does, so a 99.8% is not "100%" beside a device that read.
#[test]
fn amplification_rows_name_their_sides_and_cache_shares_do_not_round_to_all() {
    let mut r = run(Rw::Write, 1, &[25_000.0], None);
    r.write_amplification_sources = vec![WriteAmplification {
        source: "block_layer".into(),
        host_bytes: Some(1000),
        device_bytes: Some(1002),
        ratio: Some(1.002),
        note: "bytes the kernel sent to vda".into(),
        outside_bytes: None,
    }];
    let t = crate::report::tables_env::run_amplification(&r);
    assert_eq!(
        t.rows[0][1].text,
        "1.002 (1002 bytes on the device side for 1000 on the host side) — bytes the kernel sent to vda"
    );
    let mut r = run(Rw::RandRead, 1, &[25_000.0], None);
    r.spec.direct = false;
    let read = r.repetitions[0].read.bytes;
    let dev = DeviceDelta {
        name: "vda".into(),
        read_ios: 9,
        read_bytes: read * 2 / 1000,
        ..Default::default()
    };
    r.repetitions[0].page_cache_hit_pct = dev.page_cache_hit_pct(read);
    r.repetitions[0].device = Some(dev);
    let s = text::run_summary(&r);
    assert!(
        s.contains(
            "cache: 99.8% of reads served from memory (page cache), 0.2% reached the device"
        ),
        "{s}"
    );
}

/// A run cut before any repetition completed shows its one measured repetition (n = 1)
/// under a legend that said "over the complete repetitions": the legend now says what
/// such a row is averaged over, and the row is marked.
#[test]
fn the_legend_says_what_an_interrupted_runs_row_is_over() {
    use crate::results::schema::Status;
    let mut cut = run(Rw::RandRead, 1, &[9e3], None);
    cut.status = Status::Interrupted;
    cut.repetitions[0].status = Status::Interrupted;
    let md = report(&[("d".into(), doc(vec![cut]))], Format::Md);
    assert!(md.contains("(interrupted)"), "{md}");
    assert!(
        md.contains(
            "a run cut before any completed: over the ones it measured, its name marked interrupted"
        ),
        "{md}"
    );
}

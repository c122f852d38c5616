//! `suite compress` on a zram that holds other data: zram's `mm_stat` is the whole
//! device, so the "device stored" figure blends the study's data with what lies outside
//! its span. The text table marks each such figure and says the span's share of what
//! zram stored, checked against the data this test put outside the span; on a fresh
//! zram, or one the study's span covers whole, nothing is marked. Found by a probe: a
//! zram still holding 128 MiB said "98% → stored 27%" (a fresh one: 2%).

use std::path::Path;

use serde_json::Value;

use crate::common::{Zram, iomark, read_json, tmp, write_at};

/// `suite compress` at 98% and 2% on `dev` with `size`: the document and the text.
fn compress_study(dir: &Path, dev: &str, size: &str) -> (Value, String) {
    let out_file = dir.join(format!("c-{size}.json"));
    let out = iomark()
        .args([
            "suite",
            "compress",
            "--compress",
            "98,2",
            "--runtime",
            "1s",
            "--ramp",
            "0",
        ])
        .args(["--size", size, "--allow-write-device", dev, "--force", "-o"])
        .arg(&out_file)
        .output()
        .expect("iomark runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (read_json(&out_file), text)
}

/// Random bytes (not compressible, not same-filled: zram stores them whole).
fn random(len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Each run's zram source.
fn zram_sources(doc: &Value) -> Vec<(&str, &str, &Value)> {
    let runs = doc["runs"].as_array().unwrap();
    (runs.iter())
        .filter_map(|r| {
            let w = r["write_amplification_sources"].as_array()?;
            let z = w
                .iter()
                .find(|w| w["source"] == "zram" && w["ratio"].is_number())?;
            Some((
                r["study"]["test"].as_str()?,
                r["study"]["value"].as_str()?,
                z,
            ))
        })
        .collect()
}

#[test]
fn device_stored_on_a_zram_holding_other_data_is_marked_with_the_spans_share() {
    let Some(z) = Zram::new("lz4", "256M") else {
        return;
    };
    let dir = tmp();
    // 32 MiB of random bytes outside the study's span (64 MiB from offset 0).
    let outside: u64 = 32 << 20;
    write_at(Path::new(&z.dev()), 128 << 20, &random(outside as usize));
    assert_eq!(z.mm_stat().0, outside, "zram stores the outside data whole");
    let (doc, text) = compress_study(dir.path(), &z.dev(), "64m");
    let sources = zram_sources(&doc);
    assert!(sources.len() >= 6, "{sources:?}");
    for (test, value, w) in &sources {
        // What each run recorded brackets the bytes outside its span.
        let b = &w["outside_bytes"];
        let (lo, hi) = (b[0].as_u64().unwrap(), b[1].as_u64().unwrap());
        assert!(
            lo <= outside && outside <= hi,
            "{test} {value}: {b} against {outside}"
        );
        assert!(w["note"].as_str().unwrap().contains("blend of both"), "{w}");
    }
    // The fill table: both rows marked, and the share each states is the span's share of
    // what zram stored after the fill, from the bytes this test put outside.
    let fill = text.split("\nfill\n").nth(1).expect("a fill table");
    let fill = fill.split("\n\n").next().unwrap();
    let rows: Vec<&str> = fill
        .lines()
        .filter(|l| l.starts_with("98%") || l.starts_with("2% "))
        .collect();
    assert_eq!(rows.len(), 2, "{fill}");
    for row in &rows {
        assert!(row.contains("% *"), "a marked figure: {row}");
    }
    let note = (fill.lines())
        .find(|l| l.starts_with("* device stored"))
        .unwrap_or_else(|| panic!("a footnote under the fill table: {fill}"));
    for (test, value, w) in sources.iter().filter(|(t, _, _)| *t == "fill") {
        let stored = w["host_bytes"].as_u64().unwrap();
        let want = 100.0 * (stored - outside) as f64 / stored as f64;
        let said = note
            .split(&format!("{value}%: "))
            .nth(1)
            .and_then(|s| s.split('%').next())
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{test} {value}: no share in {note}"));
        assert!(
            (said - want).abs() <= 1.0,
            "{value}%: said {said}%, the span is {want:.1}%: {note}"
        );
    }
}

#[test]
fn device_stored_on_a_fresh_zram_or_one_covered_whole_is_not_marked() {
    // A fresh zram: the figures are the data's own.
    let Some(z) = Zram::new("lz4", "128M") else {
        return;
    };
    let dir = tmp();
    let (_, text) = compress_study(dir.path(), &z.dev(), "64m");
    assert!(
        !text.contains(" *") && !text.contains("* device stored"),
        "{text}"
    );
    drop(z);
    // A zram holding data that the study's span covers whole: its fill rewrites all of
    // it, and the figures are the study's again.
    let Some(z) = Zram::new("lz4", "64M") else {
        return;
    };
    write_at(Path::new(&z.dev()), 0, &random(32 << 20));
    let (doc, text) = compress_study(dir.path(), &z.dev(), "64m");
    assert!(
        !text.contains(" *") && !text.contains("* device stored"),
        "{text}"
    );
    let fill98 = zram_sources(&doc)
        .into_iter()
        .find(|(t, v, _)| *t == "fill" && *v == "98");
    let (_, _, w) = fill98.expect("the fill at 98% has a zram figure");
    assert!(
        w["ratio"].as_f64().unwrap() < 0.2,
        "98% compressible data stored small: {w}"
    );
    assert_eq!(w["outside_bytes"], serde_json::json!([0, 0]), "{w}");
}

//! Dirty drives: `suite steady` and `suite wsat` on real devices (a private zram device,
//! a loop device over /dev/shm), write amplification from zram's accounting and from the
//! block counters under ext4, and "not reported" where a device has no such counters.

use crate::common::{
    LoopDev, Mounted, Zram, assert_success, iomark, read_json, report, run_json, tmp,
};
use serde_json::Value;

fn steady(dev: &str, dir: &std::path::Path) -> Value {
    let out_json = dir.join("steady.json");
    // Each call a new document (-o does not replace one that holds measurements).
    let _ = std::fs::remove_file(&out_json);
    let out = iomark()
        .args([
            "suite",
            "steady",
            "--round-time",
            "1s",
            "--max-rounds",
            "6",
            "--qd",
            "8",
            "--allow-write-device",
            "-q",
            "-o",
        ])
        .arg(&out_json)
        .arg(dev)
        .output()
        .unwrap();
    assert_success(&out);
    let doc = read_json(&out_json);
    // Purge, precondition, rounds and a verdict.
    assert_eq!(doc["purge"]["method"], "discard");
    assert_eq!(doc["purge"]["supported"], true, "{}", doc["purge"]);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[0]["study"]["test"], "precondition");
    let pre = &runs[0]["repetitions"][0]["write"];
    let span = runs[0]["target"]["span_bytes"].as_u64().unwrap();
    assert_eq!(
        pre["bytes"].as_u64().unwrap(),
        2 * span,
        "the span written twice"
    );
    let rounds: Vec<&Value> = runs
        .iter()
        .filter(|r| r["study"]["test"] == "round")
        .collect();
    let s = &doc["steady_state"];
    assert_eq!(s["rounds"].as_u64().unwrap() as usize, rounds.len());
    if s["reached"] == true {
        assert_eq!(
            s["round"].as_u64().unwrap() as usize,
            rounds.len(),
            "stops at the steady round"
        );
        assert!(rounds.len() >= 5);
    } else {
        assert_eq!(rounds.len(), 6, "runs to --max-rounds when not steady");
    }
    // The HTML report shows the rounds with the window.
    let html = report(&[&out_json], &dir.join("steady.html"));
    assert!(html.contains("IOPS per round") && html.contains("class=\"band\""));
    doc
}

#[test]
fn steady_on_zram_and_on_a_loop_device() {
    let dir = tmp();
    if let Some(z) = Zram::new("lz4", "64M") {
        let doc = steady(&z.dev(), dir.path());
        let wa = &doc["runs"][0]["write_amplification"];
        assert_eq!(wa["source"], "zram");
    }
    if let Some(l) = LoopDev::new(64 << 20, true) {
        steady(l.path().to_str().unwrap(), dir.path());
    }
}

#[test]
fn wsat_writes_its_volume_and_charts_it() {
    let Some(l) = LoopDev::new(32 << 20, true) else {
        return;
    };
    let dir = tmp();
    let out_json = dir.path().join("wsat.json");
    let out = iomark()
        .args([
            "suite",
            "wsat",
            "--qd",
            "8",
            // 128 MiB on a loop device in memory takes about a second: sample often
            // enough that the chart has the 3 intervals it needs however fast it is.
            "--interval",
            "20ms",
            "--allow-write-device",
            "-q",
            "-o",
        ])
        .arg(&out_json)
        .arg(l.path())
        .output()
        .unwrap();
    assert_success(&out);
    let doc = read_json(&out_json);
    let rep = &doc["runs"][0]["repetitions"][0];
    assert_eq!(
        rep["write"]["bytes"].as_u64().unwrap(),
        4 * (32 << 20),
        "4x the span"
    );
    let html = report(&[&out_json], &dir.path().join("wsat.html"));
    assert!(html.contains("IOPS vs data written"));
}

#[test]
fn write_amplification_on_zram_follows_compressibility() {
    for (pct, lo, hi) in [("50", 0.44, 0.56), ("0", 0.98, 1.02)] {
        let Some(z) = Zram::new("lz4", "128M") else {
            return;
        };
        let doc = run_json(&[
            "run",
            "--rw",
            "write",
            "--bs",
            "128k",
            "--io-size",
            "64m",
            "--compress",
            pct,
            "--allow-write-device",
            &z.dev(),
        ]);
        let wa = &doc["runs"][0]["write_amplification"];
        assert_eq!(wa["source"], "zram");
        let r = wa["ratio"].as_f64().unwrap();
        assert!((lo..=hi).contains(&r), "compress {pct}%: ratio {r}");
        // zram has no SMART: said so, no number invented.
        let smart = doc["runs"][0]["write_amplification_sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["source"] == "smart")
            .unwrap()
            .clone();
        assert!(smart["ratio"].is_null() && smart["device_bytes"].is_null());
        assert!(
            smart["note"].as_str().unwrap().contains("not reported"),
            "{smart}"
        );
    }
}

#[test]
fn write_amplification_under_ext4_is_at_least_one() {
    let Some(l) = LoopDev::new(128 << 20, true) else {
        return;
    };
    let Some(m) = Mounted::ext4(l.path()) else {
        return;
    };
    let f = m.path().join("wa.dat");
    let doc = run_json(&[
        "run",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--size",
        "32m",
        "--io-size",
        "16m",
        "--qd",
        "8",
        f.to_str().unwrap(),
    ]);
    let all = doc["runs"][0]["write_amplification_sources"]
        .as_array()
        .unwrap();
    let bl = all.iter().find(|w| w["source"] == "block_layer").unwrap();
    assert_eq!(bl["host_bytes"].as_u64(), Some(16 << 20));
    let r = bl["ratio"].as_f64().unwrap();
    assert!(r >= 1.0, "ext4 on a loop device: ratio {r}");
    let smart = all.iter().find(|w| w["source"] == "smart").unwrap();
    assert!(smart["ratio"].is_null() && smart["note"].as_str().unwrap().contains("not reported"));
}

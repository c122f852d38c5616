use super::*;
use std::fs;

#[test]
fn timestamp_shape() {
    let t = now_rfc3339();
    assert_eq!(t.len(), 20, "{t}");
    assert!(t.starts_with("20") && t.ends_with('Z'));
}

#[test]
fn save_and_load_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.json");
    let doc = Document::new(Host::capture());
    doc.save(&p).unwrap();
    assert_eq!(Document::load(&p).unwrap(), doc);
    fs::write(&p, r#"{"schema":"iomark/9"}"#).unwrap();
    let err = Document::load(&p).unwrap_err();
    assert!(matches!(err, crate::error::Error::Document(_)), "{err:?}");
    assert!(err.to_string().contains("iomark/9"));
    // A bare number above 1 is a newer schema too, not a missing key.
    fs::write(&p, r#"{"schema": 999, "runs": []}"#).unwrap();
    let err = Document::load(&p).unwrap_err().to_string();
    assert!(
        err.contains("has schema version 999, newer than this iomark")
            && !err.contains("no \"schema\" key"),
        "{err}"
    );
    fs::write(&p, r#"{"schema": "other/1"}"#).unwrap();
    let err = Document::load(&p).unwrap_err().to_string();
    assert!(!err.contains("newer"), "{err}");
    fs::write(&p, "not json").unwrap();
    assert!(
        Document::load(&p)
            .unwrap_err()
            .to_string()
            .contains("not JSON")
    );
}

#[test]
fn the_page_cache_share_is_of_the_bytes_read() {
    use crate::plan::spec::Rw;
    // The probe's pair: a cold repetition that read 1 part at 38% from memory, a warm one
    // that read 25 parts all from memory. Of all the bytes, 97.6% came from memory.
    let mut run = crate::results::testdoc::run(Rw::RandRead, 1, &[1000.0, 25000.0], None);
    run.repetitions[0].page_cache_hit_pct = Some(38.0);
    run.repetitions[1].page_cache_hit_pct = Some(100.0);
    let hit = run.page_cache_hit_pct().unwrap();
    assert!((hit - (38.0 + 25.0 * 100.0) / 26.0).abs() < 1e-9, "{hit}");
    // An interrupted repetition does not count when a complete one does.
    run.repetitions[1].status = Status::Interrupted;
    assert_eq!(run.page_cache_hit_pct(), Some(38.0));
    run.repetitions[0].page_cache_hit_pct = None;
    run.repetitions[1].page_cache_hit_pct = None;
    assert_eq!(run.page_cache_hit_pct(), None);
}

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

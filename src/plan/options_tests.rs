//! Tests of the option table and `RunOptions`.

use super::*;
use crate::plan::suite::Opt;
use std::collections::BTreeSet;

#[test]
fn defaults_aliases_and_last_one_wins() {
    let o = RunOptions::from_opts(&[
        ("iodepth".into(), Some("8".into())),
        ("qd".into(), Some("16".into())),
        ("buffered".into(), None),
    ])
    .unwrap();
    assert_eq!(o.text("qd"), Some("16"));
    assert_eq!(o.text("bs"), Some("4k"));
    assert_eq!(o.text("size"), None);
    assert!(o.on("buffered") && !o.on("direct"));
    assert!(o.given("qd") && !o.given("bs"));
}

#[test]
fn refuses_unknown_names_values_and_shapes() {
    let err = |opts: &[Opt]| RunOptions::from_opts(opts).unwrap_err().to_string();
    assert!(err(&[("nope".into(), None)]).contains("--nope is not a run option"));
    assert!(err(&[("rw".into(), Some("sideways".into()))]).contains("use read, write"));
    assert!(err(&[("qd".into(), None)]).contains("needs a value"));
    assert!(err(&[("keep".into(), Some("yes".into()))]).contains("=1 / =0"));
    let fio = RunOptions::from_opts(&[
        ("ramp_time".into(), Some("5".into())),
        ("ioengine".into(), Some("psync".into())),
        ("direct".into(), Some("0".into())),
        ("keep".into(), Some("1".into())),
    ])
    .unwrap();
    assert_eq!(fio.text("ramp"), Some("5"));
    assert_eq!(fio.text("engine"), Some("psync"));
    assert!(fio.on("buffered") && !fio.on("direct") && fio.on("keep"));
    assert!(err(&[("direct".into(), None), ("buffered".into(), None)]).contains("contradict"));
    let o = RunOptions::from_opts(&[("verify-state".into(), Some("s".into()))]).unwrap();
    assert!(
        o.check_requires()
            .unwrap_err()
            .to_string()
            .contains("needs --verify")
    );
}

#[test]
fn every_name_is_unique() {
    let mut seen = BTreeSet::new();
    for d in table() {
        assert!(seen.insert(d.name), "{} twice", d.name);
        for a in d.alias {
            assert!(seen.insert(a), "{a} twice");
        }
        assert!(d.default.is_none() || d.takes_value(), "{}", d.name);
    }
}

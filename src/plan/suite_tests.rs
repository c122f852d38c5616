use super::*;

fn value_of(r: &PlannedRun, key: &str, user: &[Opt]) -> Option<String> {
    merge(r, user)
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| v.clone())
}

#[test]
fn preset_sizes() {
    let n = |name: &str| expand(name, &[], None, false).unwrap().len();
    assert_eq!(n("quick"), 6);
    assert_eq!(n("corners"), 6);
    assert_eq!(n("qd"), 2 * 9);
    assert_eq!(n("bs"), 4 * 16);
    assert_eq!(n("cache"), 8);
    assert_eq!(n("compress"), 3 * 5);
    assert!(matches!(
        expand("nope", &[], None, false),
        Err(crate::error::Error::Usage(_))
    ));
}

#[test]
fn user_lists_replace_the_sweep_and_add_dimensions() {
    let user = vec![o("qd", "1,4,16"), o("bs", "4k,64k"), o("runtime", "2s")];
    let runs = expand("qd", &user, None, false).unwrap();
    assert_eq!(runs.len(), 2 * 3 * 2);
    assert!(
        runs.iter()
            .all(|r| ["1", "4", "16"].contains(&r.value.as_str()))
    );
    assert_eq!(value_of(&runs[0], "runtime", &user).as_deref(), Some("2s"));
    assert_eq!(
        value_of(&runs[0], "qd", &user).as_deref(),
        Some(runs[0].value.as_str())
    );
    assert!(runs[0].test.contains("bs=4k"));
    assert_eq!(value_of(&runs[0], "bs", &user).as_deref(), Some("4k"));
}

#[test]
fn one_rw_runs_that_pattern_only() {
    // The tests of that pattern, labelled by it.
    let user = vec![o("rw", "randread"), o("qd", "1,2")];
    let runs = expand("qd", &user, None, false).unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r.test == "randread"));
    // A pattern the study has no test for: one test, under that pattern's name.
    let user = vec![o("rw", "randrw"), o("qd", "1,2")];
    let runs = expand("qd", &user, None, false).unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r.test == "randrw"));
    assert_eq!(value_of(&runs[0], "rw", &user).as_deref(), Some("randrw"));
}

#[test]
fn compress_fills_each_level_and_writes_carry_the_level() {
    let user = vec![o("compress", "80,20"), o("runtime", "1s")];
    let runs = expand("compress", &user, None, false).unwrap();
    assert_eq!(runs.len(), 10);
    assert_eq!(runs[0].test, "fill");
    assert_eq!(
        value_of(&runs[0], "runtime", &user),
        None,
        "the fill is size-based"
    );
    assert_eq!(value_of(&runs[1], "compress", &user).as_deref(), Some("80"));
    assert_eq!(
        value_of(&runs[2], "compress", &user),
        None,
        "reads carry no data options"
    );
    assert_eq!(runs[5].value, "20");
}

/// The cache study's tests are named by their block size: a user's --bs (or list)
/// replaces 4k and 128k, and the name says what runs; it sweeps direct and buffered
/// itself, so --direct or --buffered (which ran one under the other's name) is refused.
#[test]
fn cache_tests_are_named_by_what_they_run() {
    for (bs, sizes) in [("16k", vec!["16k"]), ("4k,64k", vec!["4k", "64k"])] {
        let user = vec![o("bs", bs)];
        let runs = expand("cache", &user, None, false).unwrap();
        assert_eq!(runs.len(), 2 * 2 * sizes.len(), "{bs}");
        for r in &runs {
            let size = value_of(r, "bs", &user).unwrap();
            assert!(sizes.contains(&size.as_str()), "{size}");
            assert!(
                r.test.ends_with(&format!(" {size}")),
                "{} runs {size}",
                r.test
            );
            let buffered = merge(r, &user).iter().any(|(k, _)| k == "buffered");
            assert_eq!(buffered, r.value == "buffered", "{}", r.value);
        }
    }
    for flag in ["direct", "buffered"] {
        let user = vec![(flag.to_string(), None)];
        match expand("cache", &user, None, false) {
            Err(crate::error::Error::Usage(m)) => {
                assert!(m.contains(&format!("drop --{flag}")), "{m}")
            }
            other => panic!("--{flag}: {other:?}"),
        }
    }
}

/// The wsat study is named by what it writes: 4x the span, the user's --io-size, and a
/// --runtime that may end it first (a 1 s run wrote 0.44x under the name "4x").
#[test]
fn wsat_is_named_by_its_volume_and_runtime() {
    let value = |user: Vec<Opt>| expand("wsat", &user, None, false).unwrap()[0].value.clone();
    assert_eq!(value(vec![]), "4x");
    assert_eq!(value(vec![o("io-size", "2x")]), "2x");
    assert_eq!(value(vec![o("runtime", "1s")]), "4x or 1s");
}

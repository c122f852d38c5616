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

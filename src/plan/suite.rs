//! Studies: a preset or a matrix file expanded into an ordered list of planned runs, each
//! a list of run options (as on the command line) and its place in the study (test,
//! swept parameter, value). Pure: no I/O but reading the matrix file's text, which the
//! caller hands in; the command line turns each planned run into a `Spec`.
//!
//! Precedence, lowest first: the preset's defaults, the test's options, the swept value,
//! then what the user gave on the command line. A user value for the swept parameter
//! replaces the preset's list (`suite qd --qd 1,4,16`); a comma list for any other option
//! adds a dimension (`suite qd --bs 4k,64k` runs the sweep once per block size).

use crate::error::{Error, Result};
pub use crate::plan::matrix::Matrix;
use crate::plan::matrix::matrix_runs;

/// One option: its long name without `--`, and its value (`None` for a flag).
pub(crate) type Opt = (String, Option<String>);

/// The presets `iomark suite` knows.
pub(crate) const PRESETS: [&str; 9] = [
    "quick", "corners", "compress", "qd", "bs", "cache", "steady", "wsat", "matrix",
];

/// A run of a study, before it is resolved into a spec.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlannedRun {
    pub test: String,
    pub param: String,
    pub value: String,
    /// Options, lowest precedence first.
    pub opts: Vec<Opt>,
    /// Options the user's command line must not change for this run (a preparation pass).
    pub protected: Vec<&'static str>,
}

pub(super) fn o(k: &str, v: &str) -> Opt {
    (k.to_string(), Some(v.to_string()))
}

fn flag(k: &str) -> Opt {
    (k.to_string(), None)
}

/// The user's value for `key`, split into a list on commas.
fn user_list(user: &[Opt], key: &str) -> Option<Vec<String>> {
    user.iter()
        .rev()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| v.as_ref())
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
}

fn powers(from: u64, to: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut x = from;
    while x <= to {
        v.push(x);
        x *= 2;
    }
    v
}

/// A test of a preset: fixed options, and the swept parameter with its default values.
#[derive(Clone)]
struct TestDef {
    name: String,
    fixed: Vec<Opt>,
    param: &'static str,
    values: Vec<String>,
}

/// A study whose tests differ in pattern, run with one `--rw`, runs that pattern only:
/// the tests of that pattern, or the first test under that pattern's name. (Otherwise a
/// "randwrite" row would read, and a device example would need a write flag for reads.)
fn only_users_pattern(tests: Vec<TestDef>, user: &[Opt]) -> (Vec<TestDef>, Option<String>) {
    let rw_of = |t: &TestDef| {
        t.fixed
            .iter()
            .find(|(k, _)| k == "rw")
            .and_then(|(_, v)| v.clone())
    };
    let user_rw = user
        .iter()
        .rev()
        .find(|(k, _)| k == "rw")
        .and_then(|(_, v)| v.clone())
        .filter(|v| !v.contains(','));
    let patterns: std::collections::BTreeSet<String> = tests.iter().filter_map(rw_of).collect();
    let Some(rw) = user_rw.filter(|_| patterns.len() > 1) else {
        return (tests, None);
    };
    let same: Vec<TestDef> = tests
        .iter()
        .filter(|t| rw_of(t).as_deref() == Some(rw.as_str()))
        .cloned()
        .collect();
    if same.is_empty() {
        (tests.into_iter().take(1).collect(), Some(rw))
    } else {
        (same, None)
    }
}

fn sweep(defaults: Vec<Opt>, tests: Vec<TestDef>, user: &[Opt]) -> Vec<PlannedRun> {
    let (tests, renamed) = only_users_pattern(tests, user);
    let mut out = Vec::new();
    for t in tests {
        let values = user_list(user, t.param).unwrap_or(t.values);
        for v in values {
            let mut opts = defaults.clone();
            opts.extend(t.fixed.iter().cloned());
            opts.push(param_opt(t.param, &v));
            out.push(PlannedRun {
                test: renamed.clone().unwrap_or_else(|| t.name.to_string()),
                param: t.param.to_string(),
                value: v,
                opts,
                protected: Vec::new(),
            });
        }
    }
    out
}

/// The option a swept value stands for (`cache` sweeps direct/buffered flags).
fn param_opt(param: &str, value: &str) -> Opt {
    if param == "cache" {
        flag(value)
    } else {
        o(param, value)
    }
}

fn corners_tests(qds: (&str, [&str; 2])) -> Vec<TestDef> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        TestDef {
            name: "read".into(),
            fixed: vec![o("rw", "read"), o("bs", "1m")],
            param: "qd",
            values: s(&[qds.0]),
        },
        TestDef {
            name: "write".into(),
            fixed: vec![o("rw", "write"), o("bs", "1m")],
            param: "qd",
            values: s(&[qds.0]),
        },
        TestDef {
            name: "randread".into(),
            fixed: vec![o("rw", "randread"), o("bs", "4k")],
            param: "qd",
            values: s(&qds.1),
        },
        TestDef {
            name: "randwrite".into(),
            fixed: vec![o("rw", "randwrite"), o("bs", "4k")],
            param: "qd",
            values: s(&qds.1),
        },
    ]
}

/// Options that shape the data written: they do not apply to read-only runs.
const DATA_KEYS: [&str; 7] = [
    "data",
    "compress",
    "compress-chunk",
    "compress-method",
    "dedup",
    "dedup-unit",
    "dedup-set",
];

/// Expands study `name` with the user's options (for `matrix`, `matrix` is the parsed
/// file). With `existing_target`, the presets' default `--size` (meant for the file a
/// study creates) is dropped, so an existing file or device is used whole.
pub(crate) fn expand(
    name: &str,
    user: &[Opt],
    matrix: Option<&Matrix>,
    existing_target: bool,
) -> Result<Vec<PlannedRun>> {
    let mut runs = match name {
        "matrix" => matrix_runs(matrix, user)?,
        _ => preset_runs(name, user)?,
    };
    if existing_target && name != "matrix" {
        for r in runs.iter_mut() {
            r.opts.retain(|(k, _)| k != "size");
        }
    }
    check_options_apply(name, user, &runs)?;
    mix_replaces_bs(name, user, &mut runs)?;
    cache_sweeps_its_own(user, &runs)?;
    check_single_workload(name, user)?;
    check_lists(user)?;
    if name == "cache" {
        // Each test keeps its own size: a --bs list became the tests, not a dimension.
        for r in runs.iter_mut() {
            r.protected.push("bs");
        }
    }
    let runs = multiply_by_user_lists(runs, user);
    if runs.is_empty() {
        return Err(Error::usage("the study has no runs; check the lists given"));
    }
    Ok(runs)
}

/// The planned runs of preset `name` (every study but `matrix`).
fn preset_runs(name: &str, user: &[Opt]) -> Result<Vec<PlannedRun>> {
    Ok(match name {
        "quick" => sweep(
            vec![o("size", "1g"), o("runtime", "3s"), o("ramp", "1s")],
            corners_tests(("8", ["32", "1"])),
            user,
        ),
        "corners" => sweep(
            vec![o("size", "1g"), o("runtime", "20s"), o("ramp", "5s")],
            corners_tests(("8", ["32", "1"])),
            user,
        ),
        "qd" => qd(user),
        "bs" => bs(user),
        "cache" => cache(user),
        "compress" => compress(user),
        "steady" => steady(),
        "wsat" => wsat(user),
        other => {
            return Err(Error::usage(format!(
                "unknown suite '{other}'; use one of {}",
                PRESETS.join(", ")
            )));
        }
    })
}

/// Queue depths 1 to 256 for random 4 KiB reads and writes.
fn qd(user: &[Opt]) -> Vec<PlannedRun> {
    let qds: Vec<String> = powers(1, 256).iter().map(|v| v.to_string()).collect();
    let tests = ["randread", "randwrite"]
        .iter()
        .map(|&rw| TestDef {
            name: rw.into(),
            fixed: vec![o("rw", rw)],
            param: "qd",
            values: qds.clone(),
        })
        .collect();
    let defaults = vec![
        o("size", "1g"),
        o("runtime", "10s"),
        o("ramp", "2s"),
        o("bs", "4k"),
    ];
    sweep(defaults, tests, user)
}

/// Block sizes 512 B to 16 MiB for the four corners at queue depth 8.
fn bs(user: &[Opt]) -> Vec<PlannedRun> {
    let sizes: Vec<String> = powers(512, 16 << 20)
        .iter()
        .map(|&v| crate::units::fmt_size_short(v))
        .collect();
    let tests = ["read", "write", "randread", "randwrite"]
        .iter()
        .map(|&rw| TestDef {
            name: rw.into(),
            fixed: vec![o("rw", rw)],
            param: "bs",
            values: sizes.clone(),
        })
        .collect();
    let defaults = vec![
        o("size", "1g"),
        o("runtime", "5s"),
        o("ramp", "1s"),
        o("qd", "8"),
    ];
    sweep(defaults, tests, user)
}

/// Direct against buffered I/O for random reads and writes at 4 KiB and 128 KiB, or at
/// the user's `--bs` (a list: each size), each test named by its size.
fn cache(user: &[Opt]) -> Vec<PlannedRun> {
    let modes = vec!["direct".to_string(), "buffered".to_string()];
    let sizes = user_list(user, "bs").unwrap_or_else(|| vec!["4k".into(), "128k".into()]);
    let mut tests = Vec::new();
    for rw in ["randread", "randwrite"] {
        for bs in &sizes {
            tests.push(TestDef {
                name: format!("{rw} {bs}"),
                fixed: vec![o("rw", rw), o("bs", bs)],
                param: "cache",
                values: modes.clone(),
            });
        }
    }
    let defaults = vec![
        o("size", "1g"),
        o("runtime", "10s"),
        o("ramp", "2s"),
        o("qd", "8"),
    ];
    sweep(defaults, tests, user)
}

/// SNIA PTS-style steady state: precondition (the span written twice sequentially,
/// 128 KiB, incompressible unless the data options say otherwise), then rounds of the test
/// workload; `main` runs the rounds until steady or the round limit.
fn steady() -> Vec<PlannedRun> {
    let precondition = PlannedRun {
        test: "precondition".into(),
        param: "pass".into(),
        value: "2x".into(),
        opts: vec![
            o("size", "1g"),
            o("rw", "write"),
            o("bs", "128k"),
            o("qd", "8"),
            o("io-size", "2x"),
        ],
        protected: vec![
            "rw",
            "bs",
            "io-size",
            "runtime",
            "ramp",
            "repeat",
            "qd",
            "rwmixread",
        ],
    };
    let round = PlannedRun {
        test: "round".into(),
        param: "round".into(),
        value: "1".into(),
        opts: vec![
            o("size", "1g"),
            o("rw", "randwrite"),
            o("bs", "4k"),
            o("qd", "32"),
            o("runtime", "1m"),
            o("ramp", "0"),
        ],
        protected: vec!["runtime", "repeat", "ramp"],
    };
    vec![precondition, round]
}

/// Write saturation: random 4 KiB writes over the span until 4x the span is written (or
/// --runtime passes), sampled every second.
fn wsat(user: &[Opt]) -> Vec<PlannedRun> {
    // Named by what it writes: 4x the span, or the user's --io-size; a --runtime may end
    // it first.
    let given = |key: &str| user_list(user, key).map(|v| v.join(","));
    let mut value = given("io-size").unwrap_or_else(|| "4x".into());
    if let Some(rt) = given("runtime") {
        value.push_str(&format!(" or {rt}"));
    }
    vec![PlannedRun {
        test: "wsat".into(),
        param: "volume".into(),
        value,
        opts: vec![
            o("size", "1g"),
            o("rw", "randwrite"),
            o("bs", "4k"),
            o("qd", "32"),
            o("io-size", "4x"),
            o("interval", "1s"),
        ],
        protected: vec!["repeat"],
    }]
}

/// An option the user gave that no run of this study can take is an error, not a silent
/// no-op (e.g. --runtime for steady, whose rounds use --round-time).
fn check_options_apply(name: &str, user: &[Opt], runs: &[PlannedRun]) -> Result<()> {
    for (k, _) in user {
        if !runs.is_empty() && runs.iter().all(|r| r.protected.contains(&k.as_str())) {
            return Err(Error::usage(format!(
                "--{k} does not apply to suite {name}{}",
                if name == "steady" && k == "runtime" {
                    "; use --round-time for the length of a round"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(())
}

/// The cache study sweeps direct and buffered I/O itself: a user's `--direct` or
/// `--buffered` would run one of them under the other's label.
fn cache_sweeps_its_own(user: &[Opt], runs: &[PlannedRun]) -> Result<()> {
    let Some((k, _)) = user.iter().find(|(k, _)| k == "direct" || k == "buffered") else {
        return Ok(());
    };
    if runs.iter().any(|r| r.param == "cache") {
        return Err(Error::usage(format!(
            "suite cache runs every test both direct and buffered, and --{k} would run one of them under the other's name; drop --{k}"
        )));
    }
    Ok(())
}

/// A user's `--bssplit`/`--bsrange` replaces the study's own `--bs` (a study sweeping
/// `--bs` is refused: every run would be the same).
fn mix_replaces_bs(name: &str, user: &[Opt], runs: &mut [PlannedRun]) -> Result<()> {
    let Some((k, _)) = user.iter().find(|(k, _)| k == "bssplit" || k == "bsrange") else {
        return Ok(());
    };
    if runs.iter().any(|r| r.param == "bs") {
        return Err(Error::usage(format!(
            "suite {name} sweeps --bs, and --{k} replaces every block size; drop --{k} or run another study"
        )));
    }
    for r in runs.iter_mut() {
        r.opts.retain(|(o, _)| o != "bs");
    }
    Ok(())
}

/// The dirty-drive studies run one workload: a comma list (but for --data) is an error.
fn check_single_workload(name: &str, user: &[Opt]) -> Result<()> {
    if matches!(name, "steady" | "wsat")
        && let Some((k, _)) = user
            .iter()
            .find(|(k, v)| k != "data" && v.as_deref().is_some_and(|v| v.contains(',')))
    {
        return Err(Error::usage(format!(
            "suite {name} runs one workload; --{k} takes one value here, not a list"
        )));
    }
    let rw = user.iter().rev().find(|(k, _)| k == "rw");
    if name == "wsat"
        && let Some((_, Some(rw))) = rw
        && matches!(rw.as_str(), "read" | "randread")
    {
        return Err(Error::usage(format!(
            "suite wsat measures how writes saturate the device; --rw {rw} does not write: use randwrite (the default), write or a mix"
        )));
    }
    Ok(())
}

/// A comma list names each value once: `--qd 4,4,4` would run the same test three times
/// under one label.
fn check_lists(user: &[Opt]) -> Result<()> {
    for (k, v) in user {
        let Some(v) = v.as_deref().filter(|v| v.contains(',') && k != "data") else {
            continue;
        };
        let items: Vec<&str> = v.split(',').map(str::trim).collect();
        if let Some(dup) = items
            .iter()
            .enumerate()
            .find(|(i, x)| items[..*i].contains(x))
            .map(|(_, x)| x)
        {
            return Err(Error::usage(format!(
                "--{k} {v} lists {dup} more than once; give each value once (use --repeat for repetitions)"
            )));
        }
    }
    Ok(())
}

/// The user's comma lists for options the study does not sweep multiply the plan: each
/// run is repeated once per value (preparation runs that protect the option run once).
fn multiply_by_user_lists(mut runs: Vec<PlannedRun>, user: &[Opt]) -> Vec<PlannedRun> {
    let swept: Vec<String> = runs.iter().map(|r| r.param.clone()).collect();
    for (key, value) in user {
        let Some(v) = value else { continue };
        if !v.contains(',') || swept.contains(key) || key == "data" {
            continue;
        }
        let list = user_list(user, key).unwrap_or_default();
        let mut more = Vec::new();
        for r in &runs {
            if r.protected.contains(&key.as_str()) {
                // A preparation run (e.g. the fill) keeps its own value: run it once.
                more.push(r.clone());
                continue;
            }
            for item in &list {
                let mut r2 = r.clone();
                r2.test = format!("{} {key}={item}", r.test);
                r2.opts.push(o(key, item));
                more.push(r2);
            }
        }
        runs = more;
    }
    runs
}

/// The SandForce study: for each level, fill the span with data of that level, then the
/// four corners at 4 KiB (data options only on the writes; reads read what is there).
fn compress(user: &[Opt]) -> Vec<PlannedRun> {
    let levels =
        user_list(user, "compress").unwrap_or_else(|| vec!["98".into(), "50".into(), "2".into()]);
    let defaults = vec![
        o("size", "1g"),
        o("runtime", "10s"),
        o("ramp", "2s"),
        o("bs", "4k"),
        o("qd", "32"),
    ];
    let mut out = Vec::new();
    for level in levels {
        let mut fill = defaults.clone();
        fill.retain(|(k, _)| k != "runtime" && k != "ramp");
        fill.extend([o("rw", "write"), o("bs", "128k"), o("compress", &level)]);
        out.push(PlannedRun {
            test: "fill".into(),
            param: "compress".into(),
            value: level.clone(),
            opts: fill,
            protected: vec![
                "rw", "bs", "runtime", "ramp", "repeat", "io-size", "compress",
            ],
        });
        for rw in ["write", "read", "randwrite", "randread"] {
            let mut opts = defaults.clone();
            opts.push(o("rw", rw));
            if rw.contains("write") {
                opts.push(o("compress", &level));
            }
            out.push(PlannedRun {
                test: rw.into(),
                param: "compress".into(),
                value: level.clone(),
                opts,
                protected: if rw.contains("write") {
                    vec![]
                } else {
                    vec!["compress"]
                },
            });
        }
    }
    out
}

/// Merges a planned run's options with the user's: the user's win, except on protected
/// options and the swept parameter (whose user value became the sweep).
pub(crate) fn merge(run: &PlannedRun, user: &[Opt]) -> Vec<Opt> {
    let mut opts = run.opts.clone();
    let reads_only = |opts: &[Opt], user: &[Opt]| {
        let rw = user
            .iter()
            .chain(opts.iter())
            .rev()
            .find(|(k, _)| k == "rw")
            .and_then(|(_, v)| v.clone());
        matches!(rw.as_deref(), Some("read") | Some("randread"))
    };
    let read_run = reads_only(&run.opts, &[]) && !user.iter().any(|(k, _)| k == "rw");
    for (k, v) in user {
        if run.protected.contains(&k.as_str()) || *k == run.param {
            continue;
        }
        if read_run && DATA_KEYS.contains(&k.as_str()) {
            continue; // reads write nothing: the data options shape the writes only
        }
        if v.as_deref().is_some_and(|v| v.contains(',')) && k != "data" {
            continue; // a list: already expanded into the plan
        }
        // The cache sweep is made of --direct/--buffered flags (a user's is refused).
        if run.param == "cache" && (k == "direct" || k == "buffered") {
            continue;
        }
        opts.push((k.clone(), v.clone()));
    }
    opts
}

/// Keeps the last value of each option (and the last of --direct/--buffered), in order.
pub(crate) fn dedup(opts: Vec<Opt>) -> Vec<Opt> {
    let mut out: Vec<Opt> = Vec::new();
    for (k, v) in opts {
        let same = |ok: &String| {
            *ok == k
                || (["direct", "buffered"].contains(&ok.as_str())
                    && ["direct", "buffered"].contains(&k.as_str()))
        };
        out.retain(|(ok, _)| !same(ok));
        out.push((k, v));
    }
    out
}

#[cfg(test)]
#[path = "suite_tests.rs"]
mod tests;

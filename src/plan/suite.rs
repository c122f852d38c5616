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

/// One option: its long name without `--`, and its value (`None` for a flag).
pub type Opt = (String, Option<String>);

/// The presets `iomark suite` knows.
pub const PRESETS: [&str; 9] = [
    "quick", "corners", "compress", "qd", "bs", "cache", "steady", "wsat", "matrix",
];

/// A run of a study, before it is resolved into a spec.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedRun {
    pub test: String,
    pub param: String,
    pub value: String,
    /// Options, lowest precedence first.
    pub opts: Vec<Opt>,
    /// Options the user's command line must not change for this run (a preparation pass).
    pub protected: Vec<&'static str>,
}

fn o(k: &str, v: &str) -> Opt {
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
struct TestDef {
    name: &'static str,
    fixed: Vec<Opt>,
    param: &'static str,
    values: Vec<String>,
}

fn sweep(defaults: Vec<Opt>, tests: Vec<TestDef>, user: &[Opt]) -> Vec<PlannedRun> {
    let mut out = Vec::new();
    for t in tests {
        let values = user_list(user, t.param).unwrap_or(t.values);
        for v in values {
            let mut opts = defaults.clone();
            opts.extend(t.fixed.iter().cloned());
            opts.push(param_opt(t.param, &v));
            out.push(PlannedRun {
                test: t.name.to_string(),
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
            name: "read",
            fixed: vec![o("rw", "read"), o("bs", "1m")],
            param: "qd",
            values: s(&[qds.0]),
        },
        TestDef {
            name: "write",
            fixed: vec![o("rw", "write"), o("bs", "1m")],
            param: "qd",
            values: s(&[qds.0]),
        },
        TestDef {
            name: "randread",
            fixed: vec![o("rw", "randread"), o("bs", "4k")],
            param: "qd",
            values: s(&qds.1),
        },
        TestDef {
            name: "randwrite",
            fixed: vec![o("rw", "randwrite"), o("bs", "4k")],
            param: "qd",
            values: s(&qds.1),
        },
    ]
}

/// Expands preset `name` with the user's options (for `matrix`, `matrix` is the parsed file).
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

/// Options a matrix file may not set: the safety switches (only the person running iomark
/// may allow destruction) and what belongs to the whole study.
pub const NOT_IN_MATRIX: [&str; 9] = [
    "overwrite",
    "allow-write-device",
    "destroy-data",
    "keep",
    "output",
    "json",
    "quiet",
    "verify-state",
    "resume",
];

/// Expands a study. With `existing_target`, the presets' default `--size` (meant for the
/// file a study creates) is dropped, so an existing file or device is used whole.
pub fn expand(
    name: &str,
    user: &[Opt],
    matrix: Option<&Matrix>,
    existing_target: bool,
) -> Result<Vec<PlannedRun>> {
    let mut runs = match name {
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
        "qd" => {
            let qds: Vec<String> = powers(1, 256).iter().map(|v| v.to_string()).collect();
            sweep(
                vec![
                    o("size", "1g"),
                    o("runtime", "10s"),
                    o("ramp", "2s"),
                    o("bs", "4k"),
                ],
                vec![
                    TestDef {
                        name: "randread",
                        fixed: vec![o("rw", "randread")],
                        param: "qd",
                        values: qds.clone(),
                    },
                    TestDef {
                        name: "randwrite",
                        fixed: vec![o("rw", "randwrite")],
                        param: "qd",
                        values: qds,
                    },
                ],
                user,
            )
        }
        "bs" => {
            let sizes: Vec<String> = powers(512, 16 << 20)
                .iter()
                .map(|&v| crate::units::fmt_size_short(v))
                .collect();
            let tests = ["read", "write", "randread", "randwrite"]
                .iter()
                .map(|&rw| TestDef {
                    name: rw,
                    fixed: vec![o("rw", rw)],
                    param: "bs",
                    values: sizes.clone(),
                })
                .collect();
            sweep(
                vec![
                    o("size", "1g"),
                    o("runtime", "5s"),
                    o("ramp", "1s"),
                    o("qd", "8"),
                ],
                tests,
                user,
            )
        }
        "cache" => {
            let modes = vec!["direct".to_string(), "buffered".to_string()];
            let tests = [
                ("randread 4k", "randread", "4k"),
                ("randread 128k", "randread", "128k"),
                ("randwrite 4k", "randwrite", "4k"),
                ("randwrite 128k", "randwrite", "128k"),
            ]
            .iter()
            .map(|&(name, rw, bs)| TestDef {
                name,
                fixed: vec![o("rw", rw), o("bs", bs)],
                param: "cache",
                values: modes.clone(),
            })
            .collect();
            sweep(
                vec![
                    o("size", "1g"),
                    o("runtime", "10s"),
                    o("ramp", "2s"),
                    o("qd", "8"),
                ],
                tests,
                user,
            )
        }
        "compress" => compress(user),
        // SNIA PTS-style steady state: precondition (the span written twice sequentially,
        // 128 KiB, incompressible unless the data options say otherwise), then rounds of
        // the test workload; `main` runs the rounds until steady or the round limit.
        "steady" => vec![
            PlannedRun {
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
            },
            PlannedRun {
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
            },
        ],
        // Write saturation: random 4 KiB writes over the span until 4x the span is written
        // (or --runtime passes), sampled every second.
        "wsat" => vec![PlannedRun {
            test: "wsat".into(),
            param: "volume".into(),
            value: "4x".into(),
            opts: vec![
                o("size", "1g"),
                o("rw", "randwrite"),
                o("bs", "4k"),
                o("qd", "32"),
                o("io-size", "4x"),
                o("interval", "1s"),
            ],
            protected: vec!["repeat"],
        }],
        "matrix" => {
            let m = matrix.ok_or_else(|| {
                Error::input("suite matrix needs a file: iomark suite matrix FILE.toml [TARGET]")
            })?;
            if let Some((k, _)) = user
                .iter()
                .find(|(k, _)| m.vary.iter().any(|(v, _)| v == k))
            {
                return Err(Error::input(format!(
                    "--{k} is varied by the matrix file; change its list there instead"
                )));
            }
            m.expand()
        }
        other => {
            return Err(Error::input(format!(
                "unknown suite '{other}'; use one of {}",
                PRESETS.join(", ")
            )));
        }
    };
    if existing_target && name != "matrix" {
        for r in runs.iter_mut() {
            r.opts.retain(|(k, _)| k != "size");
        }
    }
    // An option the user gave that no run of this study can take is an error, not a
    // silent no-op (e.g. --runtime for steady, whose rounds use --round-time).
    for (k, _) in user {
        if !runs.is_empty() && runs.iter().all(|r| r.protected.contains(&k.as_str())) {
            return Err(Error::input(format!(
                "--{k} does not apply to suite {name}{}",
                if name == "steady" && k == "runtime" {
                    "; use --round-time for the length of a round"
                } else {
                    ""
                }
            )));
        }
    }
    if matches!(name, "steady" | "wsat")
        && let Some((k, _)) = user
            .iter()
            .find(|(k, v)| k != "data" && v.as_deref().is_some_and(|v| v.contains(',')))
    {
        return Err(Error::input(format!(
            "suite {name} runs one workload; --{k} takes one value here, not a list"
        )));
    }
    // The user's other comma lists multiply the plan.
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
    if runs.is_empty() {
        return Err(Error::input("the study has no runs; check the lists given"));
    }
    Ok(runs)
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

/// A matrix file: fixed options and lists whose cartesian product is the study.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub target: Option<String>,
    pub fixed: Vec<Opt>,
    /// In file order; the last list is the swept parameter (the tables' rows).
    pub vary: Vec<(String, Vec<String>)>,
}

impl Matrix {
    /// Parses the TOML text of `path`. `kind(name)` says whether `name` is a run option
    /// and whether it takes a value (`Some(true)`), is a flag (`Some(false)`), or is
    /// unknown (`None`).
    pub fn parse(path: &str, text: &str, kind: &dyn Fn(&str) -> Option<bool>) -> Result<Matrix> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let msg = e.message().trim().to_string();
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1))
                .unwrap_or(1);
            Error::input(format!("{path} line {line}: {msg}"))
        })?;
        let line_of = |key: &str| -> usize {
            text.lines()
                .position(|l| {
                    let t = l.trim_start();
                    t.strip_prefix(key)
                        .is_some_and(|r| r.trim_start().starts_with('='))
                        || t.starts_with(&format!("[{key}]"))
                })
                .map_or(1, |i| i + 1)
        };
        let err =
            |key: &str, what: String| Error::input(format!("{path} line {}: {what}", line_of(key)));
        let mut m = Matrix {
            target: None,
            fixed: Vec::new(),
            vary: Vec::new(),
        };
        let scalar = |key: &str, v: &toml::Value| -> Result<Option<String>> {
            let name = key.replace('_', "-");
            if NOT_IN_MATRIX.contains(&name.as_str()) {
                return Err(err(
                    key,
                    format!(
                        "'{key}' cannot be set in a matrix file; give it on the command line (safety switches are for the person running iomark)"
                    ),
                ));
            }
            let takes_value = kind(&name).ok_or_else(|| {
                err(key, format!("unknown option '{key}'; use run option names such as rw, bs, qd, jobs, runtime, compress"))
            })?;
            match (v, takes_value) {
                (toml::Value::String(s), true) => Ok(Some(s.clone())),
                (toml::Value::Integer(i), true) => Ok(Some(i.to_string())),
                (toml::Value::Float(f), true) => Ok(Some(f.to_string())),
                (toml::Value::Boolean(b), false) => Ok(b.then(String::new)),
                (_, false) => Err(err(
                    key,
                    format!("'{key}' is a switch: write {key} = true or false"),
                )),
                (other, true) => Err(err(
                    key,
                    format!(
                        "'{key}' takes a string or a number, not {}",
                        other.type_str()
                    ),
                )),
            }
        };
        for (key, v) in &table {
            match (key.as_str(), v) {
                ("target", toml::Value::String(s)) => m.target = Some(s.clone()),
                ("target", _) => {
                    return Err(err(
                        "target",
                        "target must be a string (a file or device path)".into(),
                    ));
                }
                ("fixed", toml::Value::Table(t)) => {
                    for (k, v) in t {
                        if let Some(val) = scalar(k, v)? {
                            let name = k.replace('_', "-");
                            m.fixed
                                .push((name, if val.is_empty() { None } else { Some(val) }));
                        }
                    }
                }
                ("vary", toml::Value::Table(t)) => {
                    for (k, v) in t {
                        let toml::Value::Array(items) = v else {
                            return Err(err(
                                k,
                                format!("'{k}' under [vary] must be a list, e.g. {k} = [1, 8, 32]"),
                            ));
                        };
                        if items.is_empty() {
                            return Err(err(
                                k,
                                format!("'{k}' is an empty list; give at least one value"),
                            ));
                        }
                        let mut vals = Vec::new();
                        for it in items {
                            match scalar(k, it)? {
                                Some(s) if !s.is_empty() => vals.push(s),
                                _ => {
                                    return Err(err(
                                        k,
                                        format!(
                                            "'{k}' lists switches; a switch cannot be varied in a matrix"
                                        ),
                                    ));
                                }
                            }
                        }
                        m.vary.push((k.replace('_', "-"), vals));
                    }
                }
                ("fixed" | "vary", _) => return Err(err(key, format!("[{key}] must be a table"))),
                (k, v) => {
                    // Top-level options are fixed options too.
                    if let Some(val) = scalar(k, v)? {
                        let name = k.replace('_', "-");
                        m.fixed
                            .push((name, if val.is_empty() { None } else { Some(val) }));
                    }
                }
            }
        }
        if m.vary.is_empty() {
            return Err(Error::input(format!(
                "{path}: no [vary] lists; a matrix needs at least one list, e.g. [vary] qd = [1, 8, 32]"
            )));
        }
        Ok(m)
    }

    fn expand(&self) -> Vec<PlannedRun> {
        let (last_key, last_vals) = self.vary.last().expect("at least one list").clone();
        let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
        for (k, vals) in &self.vary[..self.vary.len() - 1] {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    vals.iter().map(move |v| {
                        let mut c2 = c.clone();
                        c2.push((k.clone(), v.clone()));
                        c2
                    })
                })
                .collect();
        }
        let mut out = Vec::new();
        for c in combos {
            let test = if c.is_empty() {
                "matrix".to_string()
            } else {
                c.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            for v in &last_vals {
                let mut opts = self.fixed.clone();
                opts.extend(c.iter().map(|(k, v)| o(k, v)));
                opts.push(o(&last_key, v));
                out.push(PlannedRun {
                    test: test.clone(),
                    param: last_key.clone(),
                    value: v.clone(),
                    opts,
                    protected: Vec::new(),
                });
            }
        }
        out
    }
}

/// Merges a planned run's options with the user's: the user's win, except on protected
/// options and the swept parameter (whose user value became the sweep).
pub fn merge(run: &PlannedRun, user: &[Opt]) -> Vec<Opt> {
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
        // The cache sweep is made of --direct/--buffered flags; a user flag overrides it.
        if run.param == "cache" && (k == "direct" || k == "buffered") {
            opts.retain(|(ok, _)| ok != "direct" && ok != "buffered");
        }
        opts.push((k.clone(), v.clone()));
    }
    opts
}

/// Keeps the last value of each option (and the last of --direct/--buffered), in order.
pub fn dedup(opts: Vec<Opt>) -> Vec<Opt> {
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

/// The queue depth where IOPS stops growing: the first depth after which the next deeper
/// queue measured adds less than 5% IOPS. `points` are (qd, IOPS) in any order.
pub fn saturation(points: &[(u64, f64)]) -> Option<u64> {
    let mut points = points.to_vec();
    points.sort_by_key(|p| p.0);
    for w in points.windows(2) {
        if w[1].1 < w[0].1 * 1.05 {
            return Some(w[0].0);
        }
    }
    None
}

#[cfg(test)]
mod tests {
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
        assert!(expand("nope", &[], None, false).is_err());
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

    #[test]
    fn matrix_file() {
        let kind = |n: &str| match n {
            "rw" | "bs" | "qd" | "runtime" => Some(true),
            "buffered" => Some(false),
            _ => None,
        };
        let text = "target = \"/tmp/x\"\nruntime = \"2s\"\n[fixed]\nbuffered = true\n[vary]\nrw = [\"randread\", \"randwrite\"]\nbs = [\"4k\", \"64k\"]\nqd = [1, 8, 32]\n";
        let m = Matrix::parse("m.toml", text, &kind).unwrap();
        let runs = m.expand();
        assert_eq!(runs.len(), 12);
        assert_eq!(runs[0].param, "qd");
        assert_eq!(runs[0].test, "rw=randread bs=4k");
        assert_eq!(m.target.as_deref(), Some("/tmp/x"));
        assert!(m.fixed.contains(&("buffered".to_string(), None)));
        let bad = [
            ("[vary]\nqd = []\n", "line 2", "empty list"),
            ("[vary]\nfoo = [1]\n", "line 2", "unknown option 'foo'"),
            (
                "runtime = 3\n[vary]\nqd = [true]\n",
                "line 3",
                "takes a string or a number",
            ),
            ("[vary]\nqd = 4\n", "line 2", "must be a list"),
            ("qd = [1\n", "line 1", ""),
            ("runtime = \"1s\"\n", "", "no [vary]"),
        ];
        for (t, line, needle) in bad {
            let e = Matrix::parse("m.toml", t, &kind).unwrap_err().to_string();
            assert!(
                e.contains(line) && e.contains(needle) && !e.contains('\n'),
                "{t:?}: {e}"
            );
        }
    }

    #[test]
    fn saturation_point() {
        let pts = [
            (1, 10_000.0),
            (2, 19_000.0),
            (4, 35_000.0),
            (8, 36_000.0),
            (16, 36_500.0),
        ];
        assert_eq!(saturation(&pts), Some(4));
        assert_eq!(saturation(&pts[..3]), None);
        let shuffled = [pts[3], pts[0], pts[4], pts[2], pts[1]];
        assert_eq!(saturation(&shuffled), Some(4));
    }
}

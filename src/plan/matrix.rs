//! Matrix files: the TOML text of `iomark suite matrix FILE.toml` parsed into fixed options
//! and lists, and expanded into the cartesian product of those lists as planned runs.
//! Responsible for the file's checks (known run options, value types, no safety switches,
//! at least one list) and for messages that name the offending line. It must not do I/O
//! (the caller reads the file and hands in its text); whether a name is a run option is
//! asked of the option table (`crate::plan::options`).

use crate::error::{Error, Result};
use crate::plan::suite::{Opt, PlannedRun, o};

/// Options a matrix file may not set: the safety switches (only the person running iomark
/// may allow destruction) and what belongs to the whole study.
pub(crate) const SAFETY_SWITCHES: [&str; 4] =
    ["overwrite", "allow-write-device", "destroy-data", "keep"];
pub(crate) const STUDY_WIDE: [&str; 5] = ["output", "json", "quiet", "verify-state", "resume"];

/// The largest matrix file read: 1 MiB. A matrix file is a few option lists written by
/// hand (a large one is a few KiB), and its product is a study of runs one after another.
pub(crate) const MATRIX_MAX: u64 = 1 << 20;

/// A matrix file: fixed options and lists whose cartesian product is the study.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub target: Option<String>,
    /// `target = ["a", "b"]`: several targets in every run (the first is `target`).
    pub targets: Vec<String>,
    pub fixed: Vec<Opt>,
    /// In file order; the last list is the swept parameter (the tables' rows).
    pub vary: Vec<(String, Vec<String>)>,
}

/// The planned runs of `suite matrix`: the file is required, and the user may not give an
/// option the file varies.
pub(super) fn matrix_runs(matrix: Option<&Matrix>, user: &[Opt]) -> Result<Vec<PlannedRun>> {
    let m = matrix.ok_or_else(|| {
        Error::usage("suite matrix needs a file: iomark suite matrix FILE.toml [TARGET]")
    })?;
    if let Some((k, _)) = user
        .iter()
        .find(|(k, _)| m.vary.iter().any(|(v, _)| v == k))
    {
        return Err(Error::usage(format!(
            "--{k} is varied by the matrix file; change its list there instead (a comma list on the command line replaces a preset's values, not a matrix file's)"
        )));
    }
    Ok(m.expand())
}

/// Parses the TOML text, turning a syntax error into a one-line message with its line.
fn parse_table(path: &str, text: &str) -> Result<toml::Table> {
    text.parse().map_err(|e: toml::de::Error| {
        let msg = e.message().trim().to_string();
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1))
            .unwrap_or(1);
        Error::document(format!("{path} line {line}: {msg}"))
    })
}

/// The line (from 1) where `key` is set or its table starts; 1 if not found.
fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            t.strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with('='))
                || t.starts_with(&format!("[{key}]"))
        })
        .map_or(1, |i| i + 1)
}

/// The line (from 1) where `key` is set in `table` (`None`: the top level, before any
/// table); 1 if not found.
fn line_in(text: &str, table: Option<&str>, key: &str) -> usize {
    let mut current: Option<&str> = None;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if let Some(h) = t.strip_prefix('[') {
            current = Some(h.split(']').next().unwrap_or("").trim());
            continue;
        }
        let is_key = (t.strip_prefix(key)).is_some_and(|r| r.trim_start().starts_with('='));
        if current == table && is_key {
            return i + 1;
        }
    }
    1
}

/// Where a matrix file sets an option: the top level, `[fixed]` or `[vary]`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    Top,
    Fixed,
    Vary,
}

impl Place {
    fn table(self) -> Option<&'static str> {
        match self {
            Place::Top => None,
            Place::Fixed => Some("fixed"),
            Place::Vary => Some("vary"),
        }
    }
    fn said(self) -> &'static str {
        match self {
            Place::Top => "at the top level",
            Place::Fixed => "under [fixed]",
            Place::Vary => "under [vary]",
        }
    }
}

/// The file being parsed: what its messages and checks need.
struct Parser<'a> {
    path: &'a str,
    text: &'a str,
}

impl Parser<'_> {
    /// An error about `key`, naming the file and the key's line.
    fn err(&self, key: &str, what: String) -> Error {
        Error::document(format!(
            "{} line {}: {what}",
            self.path,
            line_of(self.text, key)
        ))
    }

    /// One value of option `key`: `Some(text)` for a value, `Some("")` for a switch that is
    /// on, `None` for a switch that is off.
    fn scalar(&self, key: &str, v: &toml::Value) -> Result<Option<String>> {
        let name = key.replace('_', "-");
        let safety = SAFETY_SWITCHES.contains(&name.as_str());
        if safety || STUDY_WIDE.contains(&name.as_str()) {
            let why = match safety {
                true => "safety switches are for the person running iomark",
                false => "it belongs to the whole study, not to its runs",
            };
            return Err(self.err(
                key,
                format!(
                    "'{key}' cannot be set in a matrix file; give it on the command line ({why})"
                ),
            ));
        }
        let takes_value = crate::plan::options::kind(&name).ok_or_else(|| {
            self.err(key, format!("unknown option '{key}'; use run option names such as rw, bs, qd, jobs, runtime, compress"))
        })?;
        match (v, takes_value) {
            (toml::Value::String(s), true) => Ok(Some(s.clone())),
            (toml::Value::Integer(i), true) => Ok(Some(i.to_string())),
            (toml::Value::Float(f), true) => Ok(Some(f.to_string())),
            (toml::Value::Boolean(b), false) => Ok(b.then(String::new)),
            (_, false) => Err(self.err(
                key,
                format!("'{key}' is a switch: write {key} = true or false"),
            )),
            (other, true) => Err(self.err(
                key,
                format!(
                    "'{key}' takes a string or a number, not {}",
                    other.type_str()
                ),
            )),
        }
    }

    /// Adds a fixed option (top level or under `[fixed]`); a switch that is off adds nothing.
    fn push_fixed(&self, fixed: &mut Vec<Opt>, key: &str, v: &toml::Value) -> Result<()> {
        if let Some(val) = self.scalar(key, v)? {
            let name = key.replace('_', "-");
            fixed.push((name, if val.is_empty() { None } else { Some(val) }));
        }
        Ok(())
    }

    /// The values of a list under `[vary]`: a non-empty list of values, not switches.
    fn vary_list(&self, k: &str, v: &toml::Value) -> Result<Vec<String>> {
        let toml::Value::Array(items) = v else {
            // The example in the value's own kind (rw = "randread" was shown [1, 8, 32]).
            return Err(self.err(
                k,
                format!("'{k}' under [vary] must be a list, e.g. {k} = [{v}]; a single value goes under [fixed]"),
            ));
        };
        if items.is_empty() {
            return Err(self.err(
                k,
                format!("'{k}' is an empty list; give at least one value"),
            ));
        }
        let mut vals = Vec::new();
        for it in items {
            match self.scalar(k, it)? {
                Some(s) if !s.is_empty() => vals.push(s),
                _ => {
                    return Err(self.err(
                        k,
                        format!("'{k}' lists switches; a switch cannot be varied in a matrix"),
                    ));
                }
            }
        }
        Ok(vals)
    }

    /// Refuses an option set in two places (one would silently win) and a list that
    /// names a value twice (two identical runs).
    fn check_once(&self, table: &toml::Table) -> Result<()> {
        let mut seen: Vec<(String, &str, Place)> = Vec::new();
        for (key, v) in table {
            let (place, keys): (Place, Vec<&String>) = match (key.as_str(), v) {
                ("target", _) => continue,
                ("fixed", toml::Value::Table(t)) => (Place::Fixed, t.keys().collect()),
                ("vary", toml::Value::Table(t)) => (Place::Vary, t.keys().collect()),
                _ => (Place::Top, vec![key]),
            };
            for k in keys {
                let name = k.replace('_', "-");
                if let Some((_, k0, p0)) = seen.iter().find(|(n, _, _)| *n == name) {
                    let mut two = [(*k0, *p0), (k.as_str(), place)]
                        .map(|(k, p)| (k, p, line_in(self.text, p.table(), k)));
                    two.sort_by_key(|(_, _, line)| *line);
                    let [(k, a, la), (_, b, lb)] = two;
                    let why = match a == Place::Vary || b == Place::Vary {
                        true => "but its [vary] list gives every run its own value",
                        false => "but only one value can hold",
                    };
                    return Err(Error::document(format!(
                        "{} line {la}: '{k}' is set {} and {} (line {lb}), {why}; remove one of them",
                        self.path,
                        a.said(),
                        b.said(),
                    )));
                }
                seen.push((name, k.as_str(), place));
            }
        }
        if let Some(toml::Value::Table(t)) = table.get("vary") {
            for (k, v) in t {
                let Some(items) = v.as_array() else { continue };
                // "1" and 1 are one value to the option.
                let text = |x: &toml::Value| x.as_str().map_or(x.to_string(), str::to_string);
                let texts: Vec<String> = items.iter().map(text).collect();
                let twice = (texts.iter().enumerate()).find(|(i, x)| texts[..*i].contains(x));
                if let Some((_, x)) = twice {
                    let at = line_in(self.text, Some("vary"), k);
                    return Err(Error::document(format!(
                        "{} line {at}: '{k}' lists {x} twice, which makes two identical runs; list each value once (repetitions: --repeat N)",
                        self.path
                    )));
                }
            }
        }
        Ok(())
    }

    /// Reads the top-level entries of the file into a matrix (not yet checked for lists).
    fn read(&self, table: &toml::Table) -> Result<Matrix> {
        self.check_once(table)?;
        let mut m = Matrix {
            target: None,
            targets: Vec::new(),
            fixed: Vec::new(),
            vary: Vec::new(),
        };
        for (key, v) in table {
            match (key.as_str(), v) {
                ("target", toml::Value::String(s)) => m.target = Some(s.clone()),
                ("target", toml::Value::Array(a))
                    if !a.is_empty() && a.iter().all(toml::Value::is_str) =>
                {
                    m.targets = a
                        .iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect();
                    m.target = m.targets.first().cloned();
                }
                ("target", _) => {
                    return Err(self.err(
                        "target",
                        "target must be a string (a file or device path) or a list of them".into(),
                    ));
                }
                ("fixed", toml::Value::Table(t)) => {
                    for (k, v) in t {
                        self.push_fixed(&mut m.fixed, k, v)?;
                    }
                }
                ("vary", toml::Value::Table(t)) => {
                    for (k, v) in t {
                        let vals = self.vary_list(k, v)?;
                        m.vary.push((k.replace('_', "-"), vals));
                    }
                }
                ("fixed" | "vary", _) => {
                    return Err(self.err(key, format!("[{key}] must be a table")));
                }
                // Top-level options are fixed options too.
                (k, v) => self.push_fixed(&mut m.fixed, k, v)?,
            }
        }
        Ok(m)
    }
}

/// The cartesian product of `lists`, in order (the first list varies slowest).
fn combinations(lists: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (k, vals) in lists {
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
    combos
}

impl Matrix {
    /// Parses the TOML text of `path`.
    pub fn parse(path: &str, text: &str) -> Result<Matrix> {
        let table = parse_table(path, text)?;
        let m = Parser { path, text }.read(&table)?;
        if m.vary.is_empty() {
            return Err(Error::document(format!(
                "{path}: no [vary] lists; a matrix needs at least one list, e.g. [vary] qd = [1, 8, 32]"
            )));
        }
        Ok(m)
    }

    /// The runs: one test per combination of all lists but the last, which is swept.
    pub(super) fn expand(&self) -> Vec<PlannedRun> {
        let (last_key, last_vals) = self.vary.last().expect("at least one list").clone();
        let mut out = Vec::new();
        for c in combinations(&self.vary[..self.vary.len() - 1]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_file() {
        let text = "target = \"/tmp/x\"\nruntime = \"2s\"\n[fixed]\nbuffered = true\n[vary]\nrw = [\"randread\", \"randwrite\"]\nbs = [\"4k\", \"64k\"]\nqd = [1, 8, 32]\n";
        let m = Matrix::parse("m.toml", text).unwrap();
        let runs = m.expand();
        assert_eq!(runs.len(), 12);
        assert_eq!(runs[0].param, "qd");
        assert_eq!(runs[0].test, "rw=randread bs=4k");
        assert_eq!(m.target.as_deref(), Some("/tmp/x"));
        assert!(m.targets.is_empty());
        let two = Matrix::parse("m.toml", "target = [\"/a\", \"/b\"]\n[vary]\nqd = [1]\n").unwrap();
        assert_eq!((two.target.as_deref(), two.targets.len()), (Some("/a"), 2));
        let e = Matrix::parse("m.toml", "target = [1]\n[vary]\nqd = [1]\n").unwrap_err();
        assert!(e.to_string().contains("a list of them"), "{e}");
        assert!(m.fixed.contains(&("buffered".to_string(), None)));
        let bad = [
            ("[vary]\nqd = []\n", "line 2", "empty list"),
            ("[vary]\nfoo = [1]\n", "line 2", "unknown option 'foo'"),
            (
                "runtime = 3\n[vary]\nqd = [true]\n",
                "line 3",
                "takes a string or a number",
            ),
            (
                "[vary]\nqd = 4\n",
                "line 2",
                "must be a list, e.g. qd = [4]",
            ),
            // The example in the value's kind (a pattern was shown `rw = [1, 8, 32]`).
            (
                "[vary]\nrw = \"randread\"\n",
                "line 2",
                "e.g. rw = [\"randread\"]; a single value goes under [fixed]",
            ),
            // A study-wide option is not called a safety switch.
            (
                "output = \"r.json\"\n[vary]\nqd = [1]\n",
                "line 1",
                "(it belongs to the whole study, not to its runs)",
            ),
            ("qd = [1\n", "line 1", ""),
            ("runtime = \"1s\"\n", "", "no [vary]"),
            // An option in two places: one would silently win (found by a probe).
            (
                "qd = 4\n[vary]\nqd = [1, 4]\n",
                "line 1",
                "'qd' is set at the top level and under [vary] (line 3), but its [vary] list",
            ),
            (
                "[vary]\nbs = [\"4k\"]\n[fixed]\nbs = \"8k\"\n",
                "line 2",
                "'bs' is set under [vary] and under [fixed] (line 4)",
            ),
            (
                "runtime = \"1s\"\n[fixed]\nruntime = \"2s\"\n[vary]\nqd = [1]\n",
                "line 1",
                "'runtime' is set at the top level and under [fixed] (line 3), but only one value can hold; remove one of them",
            ),
            (
                "[vary]\nrw = [\"read\"]\nqd = [1, \"1\"]\n",
                "line 3",
                "'qd' lists 1 twice, which makes two identical runs",
            ),
        ];
        for (t, line, needle) in bad {
            let e = Matrix::parse("m.toml", t).unwrap_err();
            assert!(matches!(e, Error::Document(_)), "{t:?}: {e:?}");
            let e = e.to_string();
            assert!(
                e.contains(line) && e.contains(needle) && !e.contains('\n'),
                "{t:?}: {e}"
            );
        }
    }
}

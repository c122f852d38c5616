//! [`RunOptions`]: the text a user gave for the run options of `plan::options::table`,
//! defaults filled in, whichever way it arrived (the command line, a study's merged option
//! list, a fio job). Resolution into a `Spec` is `plan::resolve`.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::plan::options::{OptDef, find, table};
use crate::plan::suite::Opt;

/// The text given for every run option, defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    values: BTreeMap<&'static str, String>,
    switches: BTreeSet<&'static str>,
    /// The options set explicitly (not defaults).
    set: BTreeSet<&'static str>,
}

impl Default for RunOptions {
    fn default() -> Self {
        let values = table()
            .filter_map(|d| d.default.map(|v| (d.name, v.to_string())))
            .collect();
        RunOptions {
            values,
            switches: BTreeSet::new(),
            set: BTreeSet::new(),
        }
    }
}

impl RunOptions {
    /// The options of an option list (a study's merged run), over the defaults.
    pub(crate) fn from_opts(opts: &[Opt]) -> Result<RunOptions> {
        let mut o = RunOptions::default();
        for (k, v) in opts {
            o.set(k, v.as_deref())?;
        }
        Ok(o)
    }

    /// Sets one option; a later value replaces an earlier one.
    pub(crate) fn set(&mut self, name: &str, value: Option<&str>) -> Result<()> {
        let def = find(name).ok_or_else(|| {
            Error::usage(format!(
                "--{name} is not a run option; see iomark run --help"
            ))
        })?;
        match (def.value, value) {
            (Some(_), Some(v)) => {
                if !def.choices.is_empty() && !def.choices.contains(&v) {
                    return Err(Error::usage(format!(
                        "--{} {v} is unknown; use {}",
                        def.name,
                        one_of(def.choices)
                    )));
                }
                self.values.insert(def.name, v.to_string());
            }
            (Some(p), None) => {
                return Err(Error::usage(format!("--{} needs a value ({p})", def.name)));
            }
            (None, Some("1")) => return self.set(def.name, None),
            // fio's direct=0 is buffered, buffered=0 is direct: a pair each of which
            // names the other is two sides of one switch. Any other `=0` is off.
            (None, Some("0")) => match def.conflicts.filter(|o| complement(o) == Some(def.name)) {
                Some(other) => return self.set(other, None),
                None => {
                    self.switches.remove(def.name);
                }
            },
            (None, Some(v)) => {
                return Err(Error::usage(format!(
                    "--{} is a switch: give it alone, or =1 / =0 as fio does (got '{v}')",
                    def.name
                )));
            }
            (None, None) => {
                let named_by = |d: &&OptDef| d.conflicts == Some(def.name);
                let clash = (def.conflicts.filter(|o| self.switches.contains(o))).or_else(|| {
                    (table().filter(named_by))
                        .map(|d| d.name)
                        .find(|n| self.switches.contains(n))
                });
                if let Some(other) = clash {
                    return Err(Error::usage(format!(
                        "--{} and --{other} contradict each other; give one of them",
                        def.name
                    )));
                }
                self.switches.insert(def.name);
            }
        }
        self.set.insert(def.name);
        Ok(())
    }

    /// Refuses an option given without the one it needs.
    pub(crate) fn check_requires(&self) -> Result<()> {
        for d in table() {
            // A switch given `=0` is off: it needs nothing.
            let Some(needed) = d.requires else { continue };
            if !self.given(d.name) || !(d.takes_value() || self.on(d.name)) {
                continue;
            }
            // A switch it needs must be on, not only given (`--sqpoll=0`).
            let off = find(needed).is_some_and(|n| !n.takes_value()) && !self.on(needed);
            if !self.given(needed) {
                return Err(Error::usage(format!(
                    "--{} needs --{needed}; add it or drop --{}",
                    d.name, d.name
                )));
            }
            if off {
                return Err(Error::usage(format!(
                    "--{} needs --{needed}, which is off (--{needed}=0); turn it on or drop --{}",
                    d.name, d.name
                )));
            }
        }
        Ok(())
    }

    /// The text of a value option: given or default; `None` when neither.
    pub(crate) fn text(&self, name: &str) -> Option<&str> {
        debug_assert!(
            find(name).is_some_and(OptDef::takes_value),
            "{name} is not a value option"
        );
        self.values.get(name).map(String::as_str)
    }

    /// The text of a value option that has a default.
    pub(crate) fn text_or_default(&self, name: &str) -> &str {
        self.text(name)
            .unwrap_or_else(|| panic!("--{name} has a default in the table"))
    }

    /// Whether a switch is on.
    pub(crate) fn on(&self, name: &str) -> bool {
        debug_assert!(
            find(name).is_some_and(|d| !d.takes_value()),
            "{name} is not a switch"
        );
        self.switches.contains(name)
    }

    /// Whether an option was set explicitly (not a default).
    pub(crate) fn given(&self, name: &str) -> bool {
        self.set.contains(name)
    }
}

/// The option `name` contradicts, as its table entry says.
fn complement(name: &str) -> Option<&'static str> {
    find(name).and_then(|d| d.conflicts)
}

/// "a, b or c".
fn one_of(choices: &[&str]) -> String {
    match choices {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

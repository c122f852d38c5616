//! What one run option is ([`OptDef`]: its names, value, default, choices, help) and the
//! two ways the option table (`options.rs`) writes one down.

/// Where an option is listed in `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Group {
    /// The workload: pattern, sizes, depth, time, engine.
    Workload,
    /// What is written.
    Data,
    /// What iomark may do to the target.
    Target,
}

/// One run option.
#[derive(Debug)]
pub(crate) struct OptDef {
    /// The long name, without dashes.
    pub name: &'static str,
    /// fio's names for it, accepted as well (fio's underscores are accepted for every
    /// option: `ramp_time`, `io_size`).
    pub alias: &'static [&'static str],
    /// The value's placeholder (`SIZE`, `N`); `None` for a switch.
    pub value: Option<&'static str>,
    /// The value used when the option is not given.
    pub default: Option<&'static str>,
    /// The only values accepted, where there is a fixed set.
    pub choices: &'static [&'static str],
    /// A switch that contradicts this one: the two are refused together.
    pub conflicts: Option<&'static str>,
    /// This option needs that one.
    pub requires: Option<&'static str>,
    pub group: Group,
    /// One paragraph of help.
    pub help: &'static str,
}

impl OptDef {
    /// Whether the option takes a value (otherwise it is a switch).
    pub(crate) fn takes_value(&self) -> bool {
        self.value.is_some()
    }
}

pub(crate) const fn value(
    name: &'static str,
    placeholder: &'static str,
    default: Option<&'static str>,
    group: Group,
    help: &'static str,
) -> OptDef {
    OptDef {
        name,
        alias: &[],
        value: Some(placeholder),
        default,
        choices: &[],
        conflicts: None,
        requires: None,
        group,
        help,
    }
}

pub(crate) const fn switch(name: &'static str, group: Group, help: &'static str) -> OptDef {
    OptDef {
        name,
        alias: &[],
        value: None,
        default: None,
        choices: &[],
        conflicts: None,
        requires: None,
        group,
        help,
    }
}

/// The option called `name` (its long name or fio's alias, with `_` for `-` as fio
/// writes them).
pub(crate) fn find(name: &str) -> Option<&'static OptDef> {
    let name = name.replace('_', "-");
    crate::plan::options::table().find(|d| d.name == name || d.alias.contains(&name.as_str()))
}

/// Whether `name` is a run option: `Some(true)` takes a value, `Some(false)` is a switch.
pub(crate) fn kind(name: &str) -> Option<bool> {
    find(name).map(OptDef::takes_value)
}

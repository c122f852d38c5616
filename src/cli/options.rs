//! The run options on the command line: clap arguments built from the one option table
//! (`crate::plan::options::table`), and what was typed gathered back into a
//! [`RunOptions`]. Nothing is parsed here; resolution is the plan's.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches};

use crate::plan::options::{Group, OptDef, RunOptions, table};
use crate::plan::suite::Opt;

/// Every run option (`run`, `suite`).
#[derive(Debug, Clone, Default)]
pub struct RunOptionArgs(pub RunOptions);

/// The data options only (`data`).
#[derive(Debug, Clone, Default)]
pub struct DataOptionArgs(pub RunOptions);

fn heading(g: Group) -> &'static str {
    match g {
        Group::Workload => "Workload",
        Group::Data => "Data written",
        Group::Target => "Target safety and verification",
    }
}

fn arg(d: &'static OptDef) -> Arg {
    let mut a = Arg::new(d.name)
        .long(d.name)
        .help(d.help.strip_suffix('.').unwrap_or(d.help))
        .help_heading(heading(d.group));
    for alias in d.alias {
        a = a.visible_alias(*alias);
    }
    // fio writes ramp_time, io_size, end_fsync: accept the underscores everywhere.
    for n in std::iter::once(&d.name).chain(d.alias) {
        if n.contains('-') {
            // Built once per process, for clap's 'static names.
            a = a.alias(&*Box::leak(n.replace('-', "_").into_boxed_str()));
        }
    }
    match d.value {
        Some(placeholder) => {
            a = a
                .value_name(placeholder)
                .action(ArgAction::Set)
                .allow_hyphen_values(true);
            if let Some(v) = d.default {
                a = a.default_value(v);
            }
            if !d.choices.is_empty() {
                a = a.value_parser(d.choices.to_vec());
            }
        }
        None => {
            // A switch alone, or fio's --direct=1 / --direct=0.
            a = a
                .action(ArgAction::Set)
                .num_args(0..=1)
                .require_equals(true)
                .default_missing_value("1")
                .value_parser(["0", "1"])
                .hide_possible_values(true);
            // Contradictions and needs are checked by `RunOptions` (`set`,
            // `check_requires`), which tell `--x=0` from `--x` and say it in one line.
        }
    }
    a
}

fn augment(cmd: clap::Command, keep: fn(&OptDef) -> bool) -> clap::Command {
    cmd.args(table().filter(|d| keep(d)).map(arg))
}

/// The options of the table typed on the command line, in table order.
pub(crate) fn typed(m: &ArgMatches, keep: fn(&OptDef) -> bool) -> Vec<Opt> {
    let mut out = Vec::new();
    for d in table().filter(|d| keep(d)) {
        if m.value_source(d.name) != Some(ValueSource::CommandLine) {
            continue;
        }
        if d.takes_value() {
            if let Some(v) = m.get_raw(d.name).and_then(|mut v| v.next_back()) {
                out.push((d.name.to_string(), Some(v.to_string_lossy().into_owned())));
            }
        } else if let Some(v) = m.get_one::<String>(d.name) {
            out.push((d.name.to_string(), (v == "0").then(|| v.clone())));
        }
    }
    out
}

fn fill(m: &ArgMatches, keep: fn(&OptDef) -> bool) -> Result<RunOptions, clap::Error> {
    RunOptions::from_opts(&typed(m, keep))
        .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, e))
}

fn everything(_: &OptDef) -> bool {
    true
}

fn data_only(d: &OptDef) -> bool {
    d.group == Group::Data
}

impl FromArgMatches for RunOptionArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        fill(m, everything).map(RunOptionArgs)
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for RunOptionArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        augment(cmd, everything)
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        augment(cmd, everything)
    }
}

impl FromArgMatches for DataOptionArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        fill(m, data_only).map(DataOptionArgs)
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for DataOptionArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        augment(cmd, data_only)
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        augment(cmd, data_only)
    }
}

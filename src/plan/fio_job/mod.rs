//! fio job files: read (`ini.rs`), mapped onto iomark's run options (`map.rs`), ordered
//! into fio's groups and resolved into the runs of a study (here), and written back from
//! any iomark plan (`write.rs`, `--as-fio`). fio's units live in `units.rs`, shared with
//! the import of fio's results. No I/O: the caller hands in the files' text.
//!
//! The jobs of one fio group run together, as in fio ([`together`]); a group that cannot
//! (a verify job, a `wait_for` inside the group, different `loops`) runs its jobs one
//! after another, and every such run says so in its warnings, as `docs/fio.md` does.

mod blocks;
mod buffers;
mod cache;
mod engine;
mod files;
pub mod ini;
pub mod map;
mod pace;
pub mod units;
pub mod write;
mod write_files;

use crate::error::{Error, Result};
use crate::plan::option_def;
use crate::plan::options::RunOptions;
use crate::plan::suite::Opt;
use crate::plan::{Output, StudyPoint, StudyRun, System};
use map::MappedJob;

/// A job in its group (fio's `groupid`: a new one after `stonewall` or `new_group`).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupedJob {
    pub group: u32,
    pub job: MappedJob,
}

/// Maps every job, puts each in its group, and refuses the options iomark does not
/// support in one error that lists each with its line, unless `ignore` (then each job
/// notes what it runs without). `fresh_seed`: see [`map::map_job`].
pub fn plan_jobs(defs: &[ini::JobDef], ignore: bool, fresh_seed: u64) -> Result<Vec<GroupedJob>> {
    let mut jobs = Vec::new();
    let mut unsupported: Vec<String> = Vec::new();
    let (mut group, mut in_group) = (0u32, 0usize);
    for def in defs {
        let mut job = map::map_job(def, fresh_seed)?;
        if (job.stonewall || job.new_group) && in_group > 0 {
            group += 1;
            in_group = 0;
        }
        in_group += 1;
        if let Some((name, at)) = &job.wait_for {
            let earlier = jobs.iter().any(|g: &GroupedJob| &g.job.name == name);
            if !earlier {
                return Err(Error::usage(format!(
                    "{at}: wait_for={name} names no job before this one; name an earlier job's section"
                )));
            }
        }
        for u in &job.unsupported {
            if !unsupported.contains(u) {
                unsupported.push(u.clone());
            }
        }
        if ignore {
            let dropped = job.unsupported.iter();
            let dropped = dropped.map(|u| format!("ignored (--ignore-unsupported): {u}"));
            job.notes.extend(dropped);
        }
        jobs.push(GroupedJob { group, job });
    }
    // In file order: "FILE:LINE …".
    unsupported.sort_by_key(|u| {
        let at = u.split(' ').next().unwrap_or("");
        let (file, line) = at.rsplit_once(':').unwrap_or((at, "0"));
        (file.to_string(), line.parse::<u64>().unwrap_or(0))
    });
    if !unsupported.is_empty() && !ignore {
        let (what, them) = match unsupported.len() {
            1 => ("this option", "it"),
            _ => ("these options", "them"),
        };
        return Err(Error::usage(format!(
            "iomark does not support {what}: {}; remove {them}, or add --ignore-unsupported to run without {them}",
            unsupported.join("; ")
        )));
    }
    // fio's file per `numjobs` copy (a group measured together serves several files of
    // a job as a run alone does: `measure::group`).
    for j in &mut jobs {
        files::own_files(&mut j.job);
    }
    notes_on_groups(&mut jobs);
    Ok(jobs)
}

/// The jobs that run together, as ranges of `jobs`: every group of several jobs, unless
/// [`apart_because`] says why not.
pub fn together(jobs: &[GroupedJob]) -> Vec<std::ops::Range<usize>> {
    groups(jobs)
        .into_iter()
        .filter(|r| r.len() > 1 && apart_because(&jobs[r.clone()]).is_none())
        .collect()
}

/// Each group's jobs, as ranges of `jobs` (a group's jobs are consecutive).
fn groups(jobs: &[GroupedJob]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        match out.last_mut() {
            Some(r) if jobs[r.start].group == j.group => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// Why the jobs of one group cannot run together in iomark, if they cannot.
fn apart_because(group: &[GroupedJob]) -> Option<&'static str> {
    let opt = |j: &GroupedJob, key: &str| j.job.opt(key).map(str::to_string);
    if group.iter().any(|j| opt(j, "verify").is_some()) {
        return Some("a verify job reads its blocks back after its writes, on its own");
    }
    let names: Vec<&str> = group.iter().map(|j| j.job.name.as_str()).collect();
    if (group.iter()).any(|j| {
        j.job
            .wait_for
            .as_ref()
            .is_some_and(|(n, _)| names.contains(&n.as_str()))
    }) {
        return Some("a job waits for another of its group (wait_for)");
    }
    if group
        .iter()
        .any(|j| opt(j, "repeat") != opt(&group[0], "repeat"))
    {
        return Some("their loops differ");
    }
    None
}

/// What iomark does differently with fio's groups, said on every run it concerns.
fn notes_on_groups(jobs: &mut [GroupedJob]) {
    for r in groups(jobs) {
        let n = r.len();
        if n < 2 {
            continue;
        }
        let apart = apart_because(&jobs[r.clone()]);
        for j in &mut jobs[r] {
            let g = j.group;
            if let Some(why) = apart {
                j.job.notes.push(format!(
                    "fio runs the {n} jobs of group {g} at the same time, iomark one after another ({why})"
                ));
            }
            if j.job.group_reporting {
                j.job.notes.push(match apart {
                    None => format!(
                        "group_reporting: fio reports group {g} as one entry, iomark each job as its own run and the group's sum in its group figures"
                    ),
                    Some(_) => format!(
                        "group_reporting: fio reports group {g} as one entry, iomark each job as its own run"
                    ),
                });
            }
        }
    }
}

/// The runs of a study from the grouped jobs: each job's options, then `extra` (the
/// command line's `--repeat`, `--keep`, …), resolved as `iomark run` resolves them. A
/// refusal names the job and where its section starts.
pub fn study_runs(jobs: &[GroupedJob], extra: &[Opt], sys: &System) -> Result<Vec<StudyRun>> {
    let mut runs = Vec::new();
    // fio's split counts every job of the file (`EngineOpts::cpus_after`).
    let mut before = 0u32;
    for GroupedJob { group, job } in jobs {
        let named = |e: Error| match e {
            Error::Usage(m) => in_fio_terms(job, &m),
            other => other,
        };
        let opts: Vec<Opt> = job.opts.iter().chain(extra).cloned().collect();
        let mut plan = RunOptions::from_opts(&opts)
            .and_then(|o| o.resolve(job.target.as_deref(), Output::default(), sys))
            .map_err(named)?;
        // fio's ramp in a size-based job is part of its size (its stats are reset when
        // the ramp ends, and the job moves `size` in all).
        let spec = &plan.spec;
        let time_based =
            spec.runtime_s.is_some() && spec.io_size.is_none() && spec.io_spans.is_none();
        plan.spec.ramp_in_size = plan.spec.ramp_s > 0.0 && !time_based;
        if job.targets.len() > 1 {
            // A job with several files: its threads serve them all (--file-service).
            plan.spec.targets = job.targets.clone();
            plan.spec.validate_targets().map_err(named)?;
        }
        let o = &mut plan.spec.engine_opts;
        if !o.cpus.is_empty() && !o.cpus_shared {
            o.cpus_after = before;
        }
        before = before.saturating_add(plan.spec.jobs);
        if !job.notes.is_empty() {
            let all = plan.spec.engine_note.take().into_iter();
            let all: Vec<String> = all.chain(job.notes.iter().cloned()).collect();
            plan.spec.engine_note = Some(all.join("; "));
        }
        runs.push(StudyRun {
            plan,
            point: StudyPoint {
                suite: "fio".into(),
                test: job.name.clone(),
                param: "group".into(),
                value: group.to_string(),
            },
        });
    }
    Ok(runs)
}

/// A refusal of iomark's run options in the job file's terms: the first of iomark's
/// options it names that came from a line of the file is named as that line's fio option
/// (`--repeat 0` → `loops=0`, at its line); otherwise the job's section is named.
fn in_fio_terms(job: &MappedJob, msg: &str) -> Error {
    let named = |(ours, _, _): &&(String, String, String)| {
        let flag = format!("--{ours}");
        // The first mention of `--ours` as a whole word.
        msg.match_indices(&flag)
            .find(|(i, _)| {
                let after = msg[i + flag.len()..].chars().next();
                !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            })
            .map(|(i, _)| i)
    };
    let first = (job.sources.iter())
        .filter_map(|s| named(&s).map(|i| (i, s)))
        .min_by_key(|(i, _)| *i);
    let Some((_, (_, kv, at))) = first else {
        return Error::usage(format!("{} [{}]: {}", job.at, job.name, plain_flags(msg)));
    };
    let value = kv.split_once('=').map(|(_, v)| v);
    // Every option with its value as its line says it (and where, when another line):
    // `--repeat 0` is `loops=0`, `--bs 16 MiB` (iomark's words for the value) `bs=16m`,
    // a switch the line gives a value (`--verify`) `verify=md5`; a bare mention of an
    // option with a value (`use a smaller --size`) is its key.
    let mut text = msg.to_string();
    for (o, kv2, at2) in &job.sources {
        let k = kv2.split('=').next().unwrap_or(kv2);
        let valued = kv2.contains('=');
        let whole = match at2 == at {
            true => kv2.clone(),
            false => format!("{kv2} ({at2})"),
        };
        let flag = format!("--{o}");
        if valued {
            // The job's line where the message gives the job's value; where it gives
            // another (advice: "or --qd 1"), that value under the key.
            let given = job.opt(o);
            let by = |said: &str| match given.is_some_and(|g| same_value(said, g)) {
                true => whole.clone(),
                false => format!("{k}={}", said.replace(' ', "")),
            };
            text = replace_valued(&text, &flag, by);
            if let Some(v) = job.opt(o) {
                text = replace_flag(&text, &format!("{flag} {v}"), &whole);
            }
        }
        let switch = option_def::find(o).is_some_and(|d| !d.takes_value());
        text = replace_flag(&text, &flag, if switch && valued { &whole } else { k });
    }
    text = plain_flags(&text);
    // fio's `KiB`, `MiB`… are powers of 1000 (its own inversion): say so where the
    // size is refused, or `bs=4KiB is not a multiple of 512` reads as nonsense.
    if let Some(v) = value.filter(|v| v.to_ascii_lowercase().ends_with("ib"))
        && let Some(n) = units::fio_size(v, 1024)
        && text.contains("not a multiple")
    {
        text = text.replacen(
            kv,
            &format!("{kv} ({n} bytes: fio reads KiB, MiB… as powers of 1000)"),
            1,
        );
    }
    Error::usage(format!("{at} [{}]: {text}", job.name))
}

/// iomark's own flags that a job file says otherwise, in fio's words.
fn plain_flags(text: &str) -> String {
    let mut text = text.to_string();
    // Jobs and depth the file leaves at fio's default (1) are named as fio's keys.
    for (flag, key) in [("--jobs", "numjobs"), ("--qd", "iodepth")] {
        text = replace_flag(
            &text,
            &format!("{flag} 1"),
            &format!("{key}=1 (the default)"),
        );
        text = replace_flag(&text, flag, key);
    }
    // What the file leaves at fio's default, said in iomark's words.
    for (ours, theirs) in [
        ("--rw read", "rw=read (the default)"),
        ("--bs 4 KiB", "bs=4k (the default)"),
        ("--bs 4096", "bs=4k (the default)"),
    ] {
        text = replace_flag(&text, ours, theirs);
    }
    text = text.replace("--engine ", "ioengine=");
    for (flag, by) in [
        ("--buffered", "direct=0"),
        ("--direct", "direct=1"),
        ("--offset", "offset"),
        ("--size", "size"),
        ("--bssplit", "bssplit"),
        ("--bsrange", "bsrange"),
        ("--bs", "bs"),
        ("--thinktime-blocks", "thinktime_blocks"),
        ("--io-size", "io_size"),
        ("--time-based", "time_based"),
        // The engines' options ("sqthread_poll_cpu needs --sqpoll" to a job file).
        ("--sqpoll-cpu", "sqthread_poll_cpu"),
        ("--sqpoll", "sqthread_poll"),
        ("--hipri", "hipri"),
        ("--cpus-policy", "cpus_allowed_policy"),
        ("--cpus", "cpus_allowed"),
        ("--batch-submit", "iodepth_batch_submit"),
        ("--batch-complete", "iodepth_batch_complete_min"),
        ("--sync-mode", "sync"),
        ("--fsync", "fsync"),
    ] {
        text = replace_flag(&text, flag, by);
    }
    text
}

/// A run's advice (its warnings: "to measure the device use --size 48g … or --direct")
/// in a job file's words, for a run of `iomark fio`: iomark's flags as fio's keys
/// (`size=48g`, `direct=1`, `ramp_time`, `loops`), a flag's value after `=`.
pub fn in_job_words(text: &str) -> String {
    const AS_KEYS: [(&str, &str); 24] = [
        ("--sqpoll-cpu", "sqthread_poll_cpu"),
        ("--sqpoll", "sqthread_poll=1"),
        ("--hipri", "hipri=1"),
        ("--cpus-policy", "cpus_allowed_policy"),
        ("--cpus", "cpus_allowed"),
        ("--batch-submit", "iodepth_batch_submit"),
        ("--batch-complete", "iodepth_batch_complete_min"),
        ("--size", "size"),
        ("--offset", "offset"),
        ("--bs", "bs"),
        ("--qd", "iodepth"),
        ("--jobs", "numjobs"),
        ("--ramp", "ramp_time"),
        ("--runtime", "runtime"),
        ("--repeat", "loops"),
        ("--engine", "ioengine"),
        ("--direct", "direct=1"),
        ("--buffered", "direct=0"),
        ("--end-fsync", "end_fsync=1"),
        ("--fsync", "fsync"),
        ("--io-size", "io_size"),
        ("--time-based", "time_based"),
        ("--thinktime-blocks", "thinktime_blocks"),
        ("--thinktime", "thinktime"),
    ];
    let mut text = text.to_string();
    for (flag, key) in AS_KEYS {
        // `--size 48g`: the value follows as `size=48g` (a key that holds its own value,
        // `direct=1`, takes none).
        let valued = format!("{flag} ");
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(i) = rest.find(&valued) {
            let tail = &rest[i + valued.len()..];
            let value_len = tail
                .find(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == ')')
                .unwrap_or(tail.len());
            let value = &tail[..value_len];
            out.push_str(&rest[..i]);
            let is_value = value.starts_with(|c: char| c.is_ascii_digit())
                || (flag == "--engine" && map::engine_for(value).is_some());
            match (is_value, key.contains('=')) {
                (true, false) => {
                    out.push_str(&format!("{key}={value}"));
                    rest = &tail[value_len..];
                }
                _ => {
                    out.push_str(&valued);
                    rest = tail;
                }
            }
        }
        out.push_str(rest);
        text = replace_flag(&out, flag, key);
    }
    text
}

/// A refusal (`Usage` or `Target`) of the runs `at` of a study from fio job files
/// (`jobs`, one per run; empty for any other study) in the job file's terms: the line of
/// the option it names, else the job's section; with several jobs (a group measured
/// together), the first job that gave an option the message names. Anything else as it
/// is.
pub fn in_job_terms(jobs: &[MappedJob], at: std::ops::Range<usize>, e: Error) -> Error {
    let (msg, target) = match &e {
        // A failure while running: its advice in the file's words.
        Error::Runtime(m) if jobs.get(at.clone()).is_some_and(|g| !g.is_empty()) => {
            return Error::Runtime(in_job_words(m));
        }
        Error::Usage(m) => (m.clone(), false),
        Error::Target(m) => (m.clone(), true),
        _ => return e,
    };
    let Some(group) = jobs.get(at).filter(|g| !g.is_empty()) else {
        return e;
    };
    // A refusal about one run of a group starts with its name (`NAME: …`).
    let about = (group.iter()).find_map(|j| Some((j, msg.strip_prefix(&format!("{}: ", j.name))?)));
    let names =
        |j: &MappedJob| (j.sources.iter()).any(|(ours, _, _)| msg.contains(&format!("--{ours}")));
    let (job, msg) = match (group, about) {
        (_, Some((j, rest))) => (j, rest.to_string()),
        ([one], None) => (one, msg),
        (_, None) => match group.iter().find(|j| names(j)) {
            Some(j) => (j, msg),
            None => return e,
        },
    };
    match (in_fio_terms(job, &msg), target) {
        (Error::Usage(m), true) => Error::Target(m),
        (mapped, _) => mapped,
    }
}

/// `text` with every whole-word `flag` followed by a number in iomark's words (`--bs 16
/// MiB`, `--io-size 512 B`, `--runtime 1.5s`, `--rate 2 MB/s`) replaced by what `by`
/// makes of the number's text.
fn replace_valued(text: &str, flag: &str, by: impl Fn(&str) -> String) -> String {
    const UNITS: [&str; 16] = [
        "B", "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "kB", "MB", "GB", "TB", "s", "ms", "us",
        "IOPS", "%",
    ];
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(&format!("{flag} ")) {
        let tail = &rest[i + flag.len() + 1..];
        let digits = tail
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(tail.len());
        let whole_word = !rest[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '-');
        if digits == 0 || !whole_word {
            out.push_str(&rest[..i + flag.len()]);
            rest = &rest[i + flag.len()..];
            continue;
        }
        // The number, a unit joined to it or after one space, and a `/s`.
        let mut len = digits;
        let joined = tail[len..]
            .find(|c: char| !c.is_ascii_alphabetic() && c != '%')
            .unwrap_or(tail.len() - len);
        if joined > 0 {
            len += joined;
        } else if let Some(u) = tail[len..].strip_prefix(' ').and_then(|t| {
            let w = t.split([' ', ',', ';', ')', '/']).next().unwrap_or("");
            UNITS.contains(&w).then_some(w)
        }) {
            len += 1 + u.len();
        }
        if tail[len..].starts_with("/s") {
            len += 2;
        }
        let after = tail[len..].chars().next();
        if after.is_some_and(|c| c.is_ascii_alphanumeric()) {
            out.push_str(&rest[..i + flag.len()]);
            rest = &rest[i + flag.len()..];
            continue;
        }
        out.push_str(&rest[..i]);
        out.push_str(&by(&tail[..len]));
        rest = &tail[len..];
    }
    out.push_str(rest);
    out
}

/// Whether a value as a message says it (`16 MiB`, `1.5s`, `8`) is the option's value
/// as given (`16m`, `1500ms`, `8`): the same text, size or duration.
fn same_value(said: &str, given: &str) -> bool {
    let said = said.replace(' ', "");
    if said == given {
        return true;
    }
    match (
        crate::units::parse_size(&said),
        crate::units::parse_size(given),
    ) {
        (Ok(a), Ok(b)) => return a == b,
        (Ok(_), Err(_)) | (Err(_), Ok(_)) => return false,
        _ => {}
    }
    matches!(
        (crate::units::parse_duration(&said), crate::units::parse_duration(given)),
        (Ok(a), Ok(b)) if a == b
    )
}

/// `text` with every whole-word `flag` replaced by `by`.
fn replace_flag(text: &str, flag: &str, by: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(flag) {
        let after = rest[i + flag.len()..].chars().next();
        let whole = !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-');
        out.push_str(&rest[..i]);
        out.push_str(if whole { by } else { flag });
        rest = &rest[i + flag.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_write;

//! One fio job (all its copies) → one run of the document: its figures, status and name,
//! and the warnings that say how fio's output was read.

use serde_json::Value;

use super::latency::{direction, latency_kind};
use super::options::{job_bs, job_bs_mix, job_rw, job_spec, job_write_bs};
use super::text::TextInfo;
use super::{JobKey, Opts, num};
use crate::plan::spec::{Rw, Spec};
use crate::results::schema::{
    Cpu, DirStats, FioJob, LatencyKind, Repetition, Run, Status, Summary, TargetDesc, TargetKind,
};

/// One run of the document for a fio job (all its copies).
pub(super) fn job_run(
    key: &JobKey,
    copies: &[&Value],
    opts: &Opts,
    info: &TextInfo,
    several_groups: bool,
    version: &str,
) -> Run {
    let j = Job::new(key, copies, opts, info);
    let mut m = j.measure();
    let (bs_label, bs) = job_bs(opts, j.kb, &m.read, &m.write);
    let mut spec = job_spec(&key.2, opts, j.rw, bs, j.kb);
    spec.bs_mix = job_bs_mix(
        opts,
        j.kb,
        j.rw,
        m.read.ios >= m.write.ios && m.read.ios > 0,
    );
    if let Some((read_bs, w)) = job_write_bs(opts, j.kb, j.rw) {
        // A mix whose writes' sizes differ: `bs` is the reads' (`4k,64k`).
        spec.bs = read_bs.unwrap_or(spec.bs);
        spec.write_bs = Some(w);
    }
    let mut warnings = vec![format!(
        "imported from fio {version}: every latency figure is {}",
        m.kind.describe()
    )];
    let verifies = j.verifies();
    let runtime_dirs = drop_verify_phase(verifies, &mut m.read, &mut warnings);
    let (name, group_members, group_jobs) = j.group_name(spec.jobs, &m, verifies, &mut warnings);
    // An entry of different jobs is as many jobs as fio's text says, or an unknown number.
    // Nor what fio wrote (its buffers are not measured) or iomark's seed.
    let mut unknown = vec!["data".to_string(), "seed".to_string()];
    match group_jobs {
        Some(Some(n)) => spec.jobs = n,
        Some(None) => unknown.push("jobs".to_string()),
        None => {}
    }
    let (status, error) = j.status();
    // fio gives no percentiles of a job that failed before an I/O completed.
    let asked_none = j.opts.flag("clat_percentiles") == Some(false)
        || j.opts.flag("lat_percentiles") == Some(false)
        || j.opts.get("percentile_list").is_some();
    let failed = error
        .as_deref()
        .filter(|_| status == Status::Failed && !asked_none);
    let percentiles = percentiles_label(copies.len(), &m, failed, &mut warnings);
    let elapsed_s = j.elapsed_s(runtime_dirs, verifies);
    let Measured {
        kind,
        read,
        write,
        trim,
        missing,
        ..
    } = m;
    let reps = if status == Status::Unsupported {
        Vec::new()
    } else {
        vec![j.repetition(status, elapsed_s, [read, write, trim])]
    };
    let ioengine = opts.get("ioengine").unwrap_or("psync");
    spec.engine_note = Some(format!("imported from fio {version}: ioengine={ioengine}"));
    Run {
        name: format!("{name} ({})", j.place(several_groups)),
        status,
        target: target(&spec, opts.get("filename").is_some()),
        summary: Summary::of(&reps),
        repetitions: reps,
        warnings,
        error,
        repetitions_planned: 1,
        cache_bound: false,
        study: None,
        write_amplification: None,
        write_amplification_sources: Vec::new(),
        latency_kind: kind,
        fio: Some(FioJob {
            jobname: key.2.clone(),
            groupid: key.1,
            host: key.0.clone(),
            ioengine: ioengine.to_string(),
            rw: j.rw_s.to_string(),
            bs: bs_label,
            format: json_format(j.job).into(),
            group_members,
            copies: copies.len() as u32,
            percentiles,
            missing_percentiles: missing,
            error: num(j.job, "error") as i64,
            unknown,
        }),
        targets: Vec::new(),
        mpi: None,
        group: None,
        spec,
    }
}

/// A fio job as read for one run: its entries and what its options say.
struct Job<'a> {
    key: &'a JobKey,
    copies: &'a [&'a Value],
    opts: &'a Opts<'a>,
    info: &'a TextInfo,
    /// The first copy: its options and error stand for the job's.
    job: &'a Value,
    /// fio's `rw` as given, and as iomark's pattern (`None`: one iomark does not have).
    rw_s: &'a str,
    rw: Option<Rw>,
    /// fio's `kb_base`: 1000 or 1024.
    kb: u64,
}

/// The figures of a job's two directions over its copies.
struct Measured {
    kind: LatencyKind,
    read: DirStats,
    write: DirStats,
    trim: DirStats,
    /// The percentiles fio did not give, in any direction.
    missing: Vec<String>,
    /// Whether the percentiles were merged from the copies' json+ histograms.
    merged: bool,
}

impl<'a> Job<'a> {
    fn new(
        key: &'a JobKey,
        copies: &'a [&'a Value],
        opts: &'a Opts<'a>,
        info: &'a TextInfo,
    ) -> Job<'a> {
        let rw_s = opts
            .get("rw")
            .or_else(|| opts.get("readwrite"))
            .unwrap_or("read");
        let kb = match opts.get("kb_base") {
            Some("1000") => 1000,
            _ => 1024,
        };
        Job {
            key,
            copies,
            opts,
            info,
            job: copies[0],
            rw_s,
            rw: job_rw(rw_s),
            kb,
        }
    }

    /// Both directions over the copies, with latency of the kind fio's percentiles are.
    fn measure(&self) -> Measured {
        let kind = ["read", "write", "trim"]
            .iter()
            .filter_map(|d| self.job.get(*d))
            .filter(|d| num(d, "total_ios") > 0.0)
            .find_map(latency_kind)
            .unwrap_or(LatencyKind::Lat);
        let (read, mut missing, merged_r) = direction(self.copies, "read", kind);
        let (write, missing_w, merged_w) = direction(self.copies, "write", kind);
        let (trim, missing_t, merged_t) = direction(self.copies, "trim", kind);
        let trims = trim.ios > 0;
        for m in missing_w
            .into_iter()
            .chain(missing_t.into_iter().filter(|_| trims))
        {
            if !missing.contains(&m) {
                missing.push(m);
            }
        }
        Measured {
            kind,
            read,
            write,
            trim,
            missing,
            merged: merged_r || merged_w || (trims && merged_t),
        }
    }

    /// Whether fio verified the job's writes by reading them back.
    fn verifies(&self) -> bool {
        self.opts
            .get("verify")
            .is_some_and(|v| !matches!(v, "0" | "null" | ""))
            && self.opts.flag("do_verify") != Some(false)
            && matches!(self.rw, Some(Rw::Write | Rw::RandWrite))
    }

    /// The run's name (the job's, or the group's when fio's group_reporting merged
    /// different jobs into this entry), the group's members, and for such an entry how
    /// many jobs it covers (`Some(None)`: fio's JSON alone does not say); warns of the
    /// merging.
    fn group_name(
        &self,
        numjobs: u32,
        m: &Measured,
        verifies: bool,
        warnings: &mut Vec<String>,
    ) -> (String, Vec<String>, Option<Option<u32>>) {
        let (_, group, jobname) = self.key;
        let info = self.info;
        // group_reporting: one entry stands for every job of the group.
        let group_reporting =
            self.opts.flag("group_reporting") == Some(true) || info.jobs.contains_key(group);
        let members = info.members.get(group).cloned().unwrap_or_default();
        let n_jobs = info.jobs.get(group).copied();
        let mixed_dirs = match self.rw {
            Some(r) => {
                (r.read_pct(50) == 0 && m.read.ios > 0 && !verifies)
                    || (r.read_pct(50) == 100 && m.write.ios > 0)
            }
            None => false,
        };
        // A job whose rw does not do a direction it did I/O in can only be a group: fio's
        // `--group_reporting` on its command line is not in its JSON options.
        let different = members.len() > 1
            || (group_reporting && n_jobs.is_some_and(|n| n > numjobs))
            || mixed_dirs;
        if different {
            let count = n_jobs.map_or(String::new(), |n| format!("{n} "));
            let names = if members.is_empty() {
                format!("{jobname}, …")
            } else {
                members.join(", ")
            };
            warnings.push(format!(
                "fio's group_reporting merged different jobs into this entry ({}): the figures are the group's; rw, bs and the other options shown are only the last job's",
                match (members.is_empty(), n_jobs) {
                    (false, _) => members.join(", "),
                    (true, Some(_)) => "fio's JSON does not say which; its normal output does".to_string(),
                    (true, None) => "fio's JSON does not say which or how many: jobs shown as ?; its normal output does".to_string(),
                }
            ));
            return (
                format!("group of {count}jobs: {names}"),
                members,
                Some(n_jobs),
            );
        } else if group_reporting {
            warnings.push("fio's group_reporting: the figures are the whole group's".into());
        }
        (jobname.clone(), Vec::new(), None)
    }

    /// The run's status, and its error: a pattern iomark does not have, or the error
    /// fio reported.
    fn status(&self) -> (Status, Option<String>) {
        let job = self.job;
        if self.rw.is_none() {
            let error = format!(
                "unsupported: rw={} (not an access pattern iomark has)",
                self.rw_s
            );
            (Status::Unsupported, Some(error))
        } else if num(job, "error") != 0.0 {
            let error = error_text(num(job, "error") as i64, self.key, self.info);
            (Status::Failed, Some(error))
        } else {
            (Status::Complete, None)
        }
    }

    /// The longest runtime (s) of the given directions over the copies, or fio's
    /// `job_runtime` when longer (not for a verify job: it covers the verify phase).
    fn elapsed_s(&self, runtime_dirs: [&str; 2], verifies: bool) -> f64 {
        self.copies
            .iter()
            .map(|c| {
                runtime_dirs
                    .iter()
                    .map(|d| num(c.get(*d).unwrap_or(&Value::Null), "runtime"))
                    .fold(0.0, f64::max)
            })
            .fold(0.0, f64::max)
            .max(if verifies {
                0.0
            } else {
                num(self.job, "job_runtime")
            })
            / 1000.0
    }

    /// The run's one repetition: fio's figures, with CPU time from its percentages.
    fn repetition(
        &self,
        status: Status,
        elapsed_s: f64,
        [read, write, trim]: [DirStats; 3],
    ) -> Repetition {
        let cpu_s = |k: &str| {
            self.copies
                .iter()
                .map(|c| {
                    let rt = num(c, "job_runtime") / 1000.0;
                    num(c, k) / 100.0 * if rt > 0.0 { rt } else { elapsed_s }
                })
                .sum::<f64>()
        };
        let total = read.ios + write.ios + trim.ios;
        Repetition {
            index: 1,
            status: if status == Status::Complete {
                Status::Complete
            } else {
                Status::Interrupted
            },
            elapsed_s,
            read,
            write,
            trim,
            fsyncs: 0,
            cpu: Cpu {
                user_s: cpu_s("usr_cpu"),
                sys_s: cpu_s("sys_cpu"),
                per_io_ns: if total > 0 {
                    (cpu_s("usr_cpu") + cpu_s("sys_cpu")) * 1e9 / total as f64
                } else {
                    0.0
                },
                // fio's usr_cpu/sys_cpu are its job threads'.
                workers: crate::results::schema::CpuPart::new(
                    cpu_s("usr_cpu"),
                    cpu_s("sys_cpu"),
                    total,
                ),
                ..Cpu::default()
            },
            // fio records no spin (its waits sleep at once).
            spin_wait_ns: None,
            device: None,
            series: Vec::new(),
            data: None,
            verify: None,
            page_cache_hit_pct: None,
            targets: Vec::new(),
            ranks: Vec::new(),
            hosts: Vec::new(),
        }
    }

    /// Where the run came from, for its name: fio, the group when there are several,
    /// the client host.
    fn place(&self, several_groups: bool) -> String {
        let (host, group, _) = self.key;
        let mut where_ = vec!["fio".to_string()];
        if several_groups {
            where_.push(format!("group {group}"));
        }
        if let Some(h) = host {
            where_.push(format!("host {h}"));
        }
        where_.join(", ")
    }
}

/// A verify job's reads are its verify phase, not part of the workload: drops them
/// (with a warning). Returns the directions whose runtime is the run's.
fn drop_verify_phase(
    verifies: bool,
    read: &mut DirStats,
    warnings: &mut Vec<String>,
) -> [&'static str; 2] {
    if verifies && read.ios > 0 {
        warnings.push(format!(
            "fio verified this job's writes by reading them back: the verify phase ({} reads, {:.0} IOPS, p99 {} ns) is not part of the figures",
            read.ios, read.iops, read.lat_ns.p99
        ));
        *read = DirStats::default();
        return ["write", "write"];
    }
    ["read", "write"]
}

/// How the run's percentiles were had ("fio", "merged" or "one copy"), with warnings for
/// a job fio reported copy by copy and for percentiles fio did not give: because the job
/// failed (`failed`, fio's error) when it asked for them, else because it did not.
fn percentiles_label(
    copies: usize,
    m: &Measured,
    failed: Option<&str>,
    warnings: &mut Vec<String>,
) -> String {
    let label = if copies > 1 {
        if m.merged {
            warnings.push(format!(
                "fio reported {copies} copies of this job separately: counters added, percentiles from their json+ histograms merged"
            ));
            "merged"
        } else {
            warnings.push(format!(
                "fio reported {copies} copies of this job separately (numjobs without group_reporting): IOPS and bytes are their sum, min/mean/max merged, but the percentiles are one copy's (fio's json+ output has the histograms to merge)"
            ));
            "one copy"
        }
    } else {
        "fio"
    };
    match (m.missing.is_empty(), failed) {
        (true, _) => {}
        (false, Some(e)) => warnings.push(format!(
            "the job failed ({e}): fio reported no {} (none of a direction whose I/Os did not complete): shown as n/a",
            m.missing.join(", "),
        )),
        (false, None) => warnings.push(format!(
            "fio did not report {} (clat_percentiles=0 or a percentile_list without them): shown as n/a",
            m.missing.join(", ")
        )),
    }
    label.to_string()
}

/// fio's output format for a job: `json+` when its latency has histogram bins.
fn json_format(job: &Value) -> &'static str {
    if job
        .get("read")
        .and_then(|d| d.get("clat_ns").or_else(|| d.get("lat_ns")))
        .and_then(|s| s.get("bins"))
        .is_some()
    {
        "json+"
    } else {
        "json"
    }
}

/// The target of an imported run: the file fio's options name (`named`), or the files
/// fio made for the job.
fn target(spec: &Spec, named: bool) -> TargetDesc {
    TargetDesc {
        kind: target_kind(&spec.target, named),
        path: spec.target.clone(),
        offset: spec.offset,
        span_bytes: spec.size.unwrap_or(0),
        align: 1,
        created: false,
        device: None,
        filesystem: None,
    }
}

/// What an imported job's target is, as far as its name says: fio's output does not
/// say. The files fio made for a job without `filename` are files; a `filename` in
/// `/dev/` (but `/dev/shm/`, a tmpfs) is a device; any other name is unknown (a device
/// node may live anywhere, and a file may be named anything).
pub(super) fn target_kind(path: &str, named: bool) -> TargetKind {
    match path {
        _ if !named => TargetKind::File,
        p if p.starts_with("/dev/") && !p.starts_with("/dev/shm/") => TargetKind::BlockDevice,
        _ => TargetKind::Unknown,
    }
}

/// fio's error for a job in words: fio's own text when its normal output is in the
/// file, else the system's name for the error number.
fn error_text(code: i64, key: &JobKey, info: &TextInfo) -> String {
    let text = info.errors.get(&(key.1, key.2.clone())).cloned();
    let desc = i32::try_from(code).map_or(String::new(), |c| {
        let s = std::io::Error::from_raw_os_error(c).to_string();
        s.split(" (os error").next().unwrap_or(&s).to_string()
    });
    match text {
        Some(t) => format!("fio error {code} ({desc}): {t}"),
        None => format!("fio error {code}: {desc}"),
    }
}

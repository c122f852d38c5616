//! What tells paired runs apart: how a run differs from its baseline beyond the compared
//! parameters (the notes of a comparison), and the labels that name runs of one document
//! with the same parameters apart. Part of `compare.rs`; no statistics, no formatting.

use super::run_key;
use crate::results::schema::{Document, Run};

/// What differs between a run and its baseline beyond the compared parameters: the span,
/// the runtime (or size-based against timed), the data written, the amount moved, and the
/// settings of [`workload`] (targets and jobs in total, the offset, a rate cap, think time,
/// the offsets' distribution, syncs, fio's `clat` against iomark's `lat`, the study's
/// point).
pub(super) fn differences(run: &Run, base: &Run) -> Vec<String> {
    let mut out = Vec::new();
    let size = crate::units::fmt_size;
    // An unknown span (fio's output without `size`) differs from nothing.
    let known = crate::report::fmt::span_known;
    if run.target.span_bytes != base.target.span_bytes && known(run) && known(base) {
        out.push(format!(
            "span {} vs {}",
            size(run.target.span_bytes),
            size(base.target.span_bytes)
        ));
    }
    let rt = |r: &Run| {
        r.spec
            .runtime_s
            .map_or("size-based".to_string(), |s| format!("{s}s"))
    };
    if rt(run) != rt(base) {
        out.push(format!("runtime {} vs {}", rt(run), rt(base)));
    }
    // The engine and what was asked of it (io_uring against libaio, --sqpoll): the
    // CPU per I/O above all (a comparison of the three put them under one heading and
    // said nothing).
    // (The sync mode is its own difference below, for runs that write.)
    let engine = |r: &Run| (r.spec.engine_opts).with_name(r.engine_label(), &["--sync-mode"]);
    if engine(run) != engine(base) {
        out.push(format!("engine {} vs {}", engine(run), engine(base)));
    }
    // (What fio wrote is not known: "?".)
    let data = |r: &Run| crate::report::fmt::known_or(r, "data", r.spec.data.describe());
    if data(run) != data(base) {
        out.push(format!("data {} vs {}", data(run), data(base)));
    }
    if run.spec.runtime_s.is_none() && run.spec.io_size != base.spec.io_size {
        let io = |r: &Run| r.spec.io_size.map_or("the span".to_string(), size);
        out.push(format!("I/O size {} vs {}", io(run), io(base)));
    }
    // Measured beside busy other processes (or under a hypervisor's steal), one side
    // and not the other, or to another degree.
    if let (Some(a), Some(b)) = (busy_words(run), busy_words(base))
        && a != b
    {
        out.push(format!("other processes busy {a} vs {b}"));
    }
    for ((what, a), (_, b)) in workload(run).into_iter().zip(workload(base)) {
        // A study's run against a single run is no difference worth a note.
        let lone = what == "study point" && (a == "none" || b == "none");
        if a != b && !lone {
            out.push(format!("{what} {a} vs {b}"));
        }
    }
    out
}

/// How busy other processes kept the CPUs while `run` measured, as its notes name it
/// (`MachineCpu::others_busy`, `steal_high`): "up to 1.40 of 2 CPUs", with the steal,
/// or "no"; `None` where no repetition recorded the machine (fio imports, MPI ranks,
/// documents before 2026-11-30), which differs from nothing.
fn busy_words(run: &Run) -> Option<String> {
    use crate::results::schema::MachineCpu;
    let cpus = run.repetitions.iter().find_map(|r| r.cpu.machine)?.cpus;
    let most = |named: fn(&MachineCpu) -> bool, f: fn(&MachineCpu) -> f64| {
        (crate::results::cpu::named_reps(&run.repetitions, named, f).iter())
            .map(|r| r.1)
            .reduce(f64::max)
    };
    let busy = most(|m| m.others_busy(), |m| m.others_cpus());
    let steal = most(|m| m.steal_high(), |m| m.steal_cpus());
    Some(match (busy, steal) {
        (None, None) => "no".to_string(),
        (Some(b), None) => format!("up to {b:.2} of {cpus} CPUs"),
        (None, Some(s)) => format!("no (steal up to {s:.2} of {cpus} CPUs)"),
        (Some(b), Some(s)) => format!("up to {b:.2} of {cpus} CPUs (steal up to {s:.2})"),
    })
}

/// The settings that shape a run's I/O beyond `run_key` and change its figures when they
/// differ (how many targets and jobs in all, where the span starts, a rate cap, think time,
/// where random offsets fall, syncs), what its latency figures measure, and the study's
/// point; as (name, value) in a fixed order, each as a reader would write it.
fn workload(run: &Run) -> [(&'static str, String); 11] {
    let s = &run.spec;
    let none = || "none".to_string();
    let writes = s.writes();
    let targets = s.targets.len().max(1) as u64;
    // Each target has its own jobs, unless the jobs serve the targets; each MPI rank runs
    // the whole job set.
    let per_target = if s.file_service.is_some() { 1 } else { targets };
    let ranks = run.mpi.as_ref().map_or(1, |m| u64::from(m.ranks));
    [
        ("targets", targets.to_string()),
        (
            "jobs in total",
            (u64::from(s.jobs) * per_target * ranks).to_string(),
        ),
        ("offset", crate::units::fmt_size(run.target.offset)),
        (
            "rate",
            s.rate_bps
                .map_or_else(none, |b| format!("{}/s", crate::units::fmt_size(b))),
        ),
        ("IOPS cap", s.rate_iops.map_or_else(none, |n| n.to_string())),
        (
            "think time",
            s.thinktime_us.map_or_else(none, |us| {
                format!("{us} µs every {} I/Os", s.thinktime_blocks.unwrap_or(1))
            }),
        ),
        (
            "offsets",
            if s.rw.is_random() {
                s.random_distribution.text()
            } else {
                "sequential".into()
            },
        ),
        (
            "fsync",
            match (writes, s.fsync, s.end_fsync) {
                (false, ..) | (true, 0, false) => none(),
                (true, 0, true) => "at the end".into(),
                (true, n, end) => format!(
                    "every {n} writes{}",
                    if end { " and at the end" } else { "" }
                ),
            },
        ),
        (
            "sync mode",
            match s.engine_opts.sync_mode {
                crate::plan::engine::SyncMode::None => none(),
                crate::plan::engine::SyncMode::Sync => "O_SYNC".into(),
                crate::plan::engine::SyncMode::Dsync => "O_DSYNC".into(),
            },
        ),
        ("latency", run.latency_kind.label().into()),
        ("study point", study_point(run).unwrap_or_else(none)),
    ]
}

/// A study's point as "param=value" (`compress=98`), if the run is part of one.
fn study_point(run: &Run) -> Option<String> {
    run.study
        .as_ref()
        .map(|s| format!("{}={}", s.param, s.value))
}

/// The label of each run of `doc`: its [`run_key`], and where runs of the document share
/// one, what tells them apart, in this order, as far as needed: the study's point (the
/// compress study's reads differ by nothing else), the data, the offset, the span, the
/// number of targets, the run's name, and last its place among them (`#2`).
pub(crate) fn labels(doc: &Document) -> Vec<String> {
    let keys: Vec<String> = doc.runs.iter().map(run_key).collect();
    let size = crate::units::fmt_size;
    let tells: [&dyn Fn(&Run) -> String; 6] = [
        &|r| study_point(r).unwrap_or_default(),
        &|r| format!("data={}", r.spec.data.describe()),
        &|r| format!("offset={}", size(r.target.offset)),
        &|r| format!("span={}", size(r.target.span_bytes)),
        &|r| format!("targets={}", r.spec.targets.len().max(1)),
        &|r| format!("\"{}\"", r.name),
    ];
    let mut out = keys.clone();
    for (i, key) in keys.iter().enumerate() {
        let same: Vec<usize> = (0..keys.len()).filter(|&j| keys[j] == *key).collect();
        if same.len() < 2 {
            continue;
        }
        let mut parts: Vec<Vec<String>> = vec![Vec::new(); same.len()];
        for tell in tells {
            let vals: Vec<String> = same.iter().map(|&j| tell(&doc.runs[j])).collect();
            if vals.iter().any(|v| *v != vals[0]) {
                for (p, v) in parts.iter_mut().zip(vals) {
                    p.push(v);
                }
            }
            let mut u = parts.clone();
            u.sort();
            u.dedup();
            if u.len() == parts.len() {
                break;
            }
        }
        let me = same.iter().position(|&j| j == i).unwrap_or(0);
        let mut l = key.clone();
        for p in parts[me]
            .iter()
            .filter(|p| !p.is_empty() && !key.contains(p.as_str()))
        {
            l.push(' ');
            l.push_str(p);
        }
        let mut u = parts.clone();
        u.sort();
        u.dedup();
        if u.len() < parts.len() {
            l.push_str(&format!(" #{}", me + 1));
        }
        out[i] = l;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_paired_despite_a_rate_cap_or_think_time_say_so() {
        use crate::plan::distribution::Distribution;
        use crate::plan::spec::Rw;
        use crate::results::testdoc::run;
        let base = run(Rw::RandRead, 8, &[1000.0, 1010.0], None);
        let same = run(Rw::RandRead, 8, &[500.0, 510.0], None);
        assert_eq!(differences(&same, &base), Vec::<String>::new());
        let mut capped = same.clone();
        capped.spec.rate_iops = Some(5000);
        capped.spec.thinktime_us = Some(100);
        capped.spec.thinktime_blocks = Some(4);
        capped.spec.random_distribution = Distribution::Zipf(1.2, None);
        capped.latency_kind = crate::results::schema::LatencyKind::Clat;
        assert_eq!(run_key(&capped), run_key(&base), "still paired");
        assert_eq!(
            differences(&capped, &base),
            [
                "IOPS cap 5000 vs none",
                "think time 100 µs every 4 I/Os vs none",
                "offsets zipf:1.2 vs random",
                "latency clat vs lat",
            ]
        );
        // Syncs count only for runs that write.
        let mut w = run(Rw::RandWrite, 8, &[1000.0], None);
        let base_w = w.clone();
        w.spec.fsync = 1;
        w.spec.end_fsync = true;
        w.spec.engine_opts.sync_mode = crate::plan::engine::SyncMode::Dsync;
        w.spec.rate_bps = Some(1 << 20);
        assert_eq!(
            differences(&w, &base_w),
            [
                "rate 1 MiB/s vs none",
                "fsync every 1 writes and at the end vs none",
                "sync mode O_DSYNC vs none",
            ]
        );
        let mut r = base.clone();
        r.spec.fsync = 1;
        assert_eq!(differences(&r, &base), Vec::<String>::new());
    }

    /// A run measured beside busy other processes against one on an idle machine says
    /// so; two idle ones, or a side without the figure (fio, older documents), do not.
    #[test]
    fn runs_measured_beside_busy_processes_say_so() {
        use crate::plan::spec::Rw;
        use crate::results::schema::MachineCpu;
        use crate::results::testdoc::run;
        let with = |others: &[f64], steal: f64| {
            let mut r = run(Rw::RandRead, 8, &vec![1000.0; others.len()], None);
            for (rep, o) in r.repetitions.iter_mut().zip(others) {
                rep.cpu.machine = Some(MachineCpu {
                    cpus: 2,
                    window_s: 1.0,
                    others_user_s: *o,
                    steal_s: steal,
                });
            }
            r
        };
        let idle = with(&[0.01, 0.02], 0.0);
        let busy = with(&[0.01, 1.4], 0.0);
        assert_eq!(
            differences(&idle, &with(&[0.1, 0.0], 0.0)),
            Vec::<String>::new()
        );
        assert_eq!(
            differences(&busy, &idle),
            ["other processes busy up to 1.40 of 2 CPUs vs no"]
        );
        assert_eq!(
            differences(&idle, &with(&[0.0], 0.2)),
            ["other processes busy no vs no (steal up to 0.20 of 2 CPUs)"]
        );
        // Without the figure on one side: nothing to say.
        let old = run(Rw::RandRead, 8, &[1000.0, 1000.0], None);
        assert_eq!(differences(&busy, &old), Vec::<String>::new());
    }
}

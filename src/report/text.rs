//! Terminal text made from results: the summary of one run, the table after a plan, a
//! study's `--dry-run` listing and its per-test tables. Tables come from `tables.rs` and
//! are drawn by `table.rs`; this module adds the prose around them. Reads only the results
//! structs and the plan; never runs I/O or prints: it returns strings, the caller prints.

use std::fmt::Write;

// Re-exported for the callers that took them from here (the binary, `progress.rs`).
pub(crate) use crate::report::fmt::fmt_duration;
pub(crate) use crate::report::fmt::{fmt_count, fmt_mbps};
use crate::report::tables;
use crate::results::schema::{DirStats, Document, LatencyKind, Repetition, Run, Status};
use crate::results::stats::Spread;
use crate::units::{fmt_ns, fmt_size};

#[path = "text_cpu.rs"]
mod cpu;
use cpu::{cpu_line, empty_flush_writes};

fn dir_lines(out: &mut String, run: &Run, label: &str, d: &DirStats) {
    let _ = writeln!(
        out,
        "  {label}: {} IOPS, {} ({:.1} MiB/s), {} I/Os, {}",
        fmt_count(d.iops),
        fmt_mbps(d.bw_bytes),
        d.bw_bytes / (1u64 << 20) as f64,
        d.ios,
        fmt_size(d.bytes)
    );
    if d.ios == 0 {
        // Latencies of no I/O are not 0 ns: none was measured.
        let _ = writeln!(
            out,
            "         no I/O completed in the measured window: no latencies"
        );
        return;
    }
    let l = &d.lat_ns;
    let p = |name: &str, v: u64| {
        if run.has_percentile(name) {
            fmt_ns(v as f64)
        } else {
            "n/a".into()
        }
    };
    let _ = writeln!(
        out,
        "         {} min {}  mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}  max {}",
        match run.latency_kind {
            LatencyKind::Lat => "latency",
            LatencyKind::Clat => "clat   ",
        },
        fmt_ns(l.min as f64),
        fmt_ns(l.mean),
        p("p50", l.p50),
        p("p90", l.p90),
        p("p99", l.p99),
        p("p999", l.p999),
        p("p9999", l.p9999),
        fmt_ns(l.max as f64)
    );
}

fn pm(s: &Spread, f: fn(f64) -> String) -> String {
    if s.n > 1 {
        format!("{} ± {}", f(s.mean), f(s.stddev))
    } else {
        f(s.mean)
    }
}

/// The summary of one run, several lines.
pub fn run_summary(run: &Run) -> String {
    let mut out = String::new();
    let s = &run.spec;
    let _ = writeln!(
        out,
        "{}: {} ({} span, {}{}{})",
        run.name,
        crate::report::notes::engine_on_target(run),
        crate::report::notes::span_words(run),
        // (The null engine opens nothing: neither direct nor buffered.)
        match (run.target.kind, s.direct) {
            (crate::results::schema::TargetKind::None, _) => "",
            (_, true) => "direct, ",
            (_, false) => "buffered, ",
        },
        match s.runtime_s {
            Some(r) => format!("{r}s"),
            None => "size-based".into(),
        },
        match run.status {
            Status::Complete => "",
            Status::Interrupted => ", INTERRUPTED",
            Status::Failed => ", FAILED",
            Status::Unsupported => ", UNSUPPORTED",
        }
    );
    if let Some(e) = &run.error {
        let _ = writeln!(out, "  error: {e}");
    }
    for w in &run.warnings {
        let _ = writeln!(out, "  note: {w}");
    }
    for rep in &run.repetitions {
        repetition_lines(&mut out, run, rep);
    }
    if run.repetitions.len() > 1 {
        across_lines(&mut out, run);
    }
    if let Some(t) = crate::report::targets::run_targets(run) {
        out.push_str(&t.terminal());
        let _ = writeln!(out, "  ({})", crate::report::targets::AGGREGATE_NOTE);
    }
    out.push_str(&rank_lines(run));
    if let Some(t) = crate::report::targets::run_group(run) {
        out.push_str(&t.terminal());
        let _ = writeln!(out, "  ({})", crate::report::targets::GROUP_NOTE);
    }
    amplification_lines(&mut out, run);
    out
}

/// A run scaled out over MPI: the per-rank table, and the per-host one when it ran on
/// several hosts, each with what it means; empty for a run in one process.
pub(crate) fn rank_lines(run: &Run) -> String {
    use crate::report::targets::{HOSTS_NOTE, RANKS_NOTE, run_hosts, run_ranks};
    let mut out = String::new();
    if let Some(t) = run_ranks(run) {
        out.push_str(&t.terminal());
        let _ = writeln!(out, "  ({RANKS_NOTE})");
    }
    if let Some(t) = run_hosts(run) {
        out.push_str(&t.terminal());
        let _ = writeln!(out, "  ({HOSTS_NOTE})");
    }
    out
}

/// Why a run shows no device counters: the first target without a device says.
fn unseen_device(run: &Run) -> &'static str {
    let fs = (std::iter::once(&run.target).chain(run.targets.iter().map(|p| &p.target)))
        .find(|t| t.device.is_none())
        .and_then(|t| t.filesystem.as_ref());
    crate::results::env::FsInfo::unseen_device(fs)
}

/// What one repetition measured: time, each direction, CPU, data, verification, device.
fn repetition_lines(out: &mut String, run: &Run, rep: &Repetition) {
    let s = &run.spec;
    if run.repetitions.len() > 1 {
        let _ = writeln!(
            out,
            " repetition {}{}: {:.2} s",
            rep.index,
            if rep.status == Status::Interrupted {
                " (interrupted)"
            } else {
                ""
            },
            rep.elapsed_s
        );
    } else {
        let _ = writeln!(out, "  measured {:.2} s", rep.elapsed_s);
    }
    if rep.read.ios > 0 || s.reads() {
        dir_lines(out, run, "read ", &rep.read);
    }
    if rep.trim.ios > 0 || s.rw.trims() {
        dir_lines(out, run, "trim ", &rep.trim);
    }
    if rep.write.ios > 0 || (s.writes() && s.rw.writes_data()) {
        dir_lines(out, run, "write", &rep.write);
    }
    cpu_line(out, rep);
    if let Some(d) = &rep.data {
        let dd = &s.data;
        // The compression figures' sample, when it is not every byte written.
        let sampled = match d.compress_sampled_bytes < rep.write.bytes {
            true => format!(
                " (in {} sampled of {})",
                fmt_size(d.compress_sampled_bytes),
                fmt_size(rep.write.bytes)
            ),
            false => String::new(),
        };
        let mut line = format!(
            "  data : {} → measured lz4 {:.1}%, zstd-1 {:.1}% smaller{sampled}",
            dd.describe(),
            d.lz4_pct,
            d.zstd_pct
        );
        let dedup_pct = d.dedup_pct.unwrap_or(0.0);
        if d.dedup_pct.is_none() && rep.write.ios > 0 {
            // Writes smaller than the unit hold no whole unit: no figure, and why.
            line.push_str(&format!(
                "; no duplicate figure: the writes ({}) hold no whole {} dedup unit",
                crate::units::fmt_size_short(s.buf_bs()),
                crate::units::fmt_size_short(dd.dedup_unit)
            ));
        } else if dd.dedup > 0.0 || dedup_pct >= 0.05 {
            // An estimate from the units hashed, unless every unit written was.
            let units = rep.write.bytes / dd.dedup_unit.max(1);
            let sample = match d.dedup_sampled_units < units {
                true => format!(
                    " (estimated from {} of {units} units hashed)",
                    d.dedup_sampled_units
                ),
                false => String::new(),
            };
            line.push_str(&format!(
                "; {:.1}% duplicate {} units{sample}",
                dedup_pct,
                crate::units::fmt_size_short(dd.dedup_unit)
            ));
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some(v) = &rep.verify {
        let _ = writeln!(out, "  {}", v.describe());
        // Several files verified apart: each one's own finding under the sum.
        for t in rep.targets.iter().filter(|t| t.verify.is_some()) {
            let tv = t.verify.as_ref().expect("filtered");
            let _ = writeln!(out, "    {}: {}", t.path, tv.describe());
        }
    }
    if let Some(hit) = rep.page_cache_hit_pct {
        match rep
            .device
            .as_ref()
            .filter(|d| d.beyond(rep.read.bytes, rep.write.bytes).contains(&"reads"))
        {
            // The device read more than iomark asked: readahead or other processes; the
            // share served from memory cannot be told apart, only bounded.
            Some(d) => {
                let _ = writeln!(
                    out,
                    "  cache: at least {} of reads served from memory (page cache); the device read {} for iomark's {} (readahead, other processes)",
                    crate::units::fmt_pct(hit),
                    fmt_size(d.read_bytes),
                    fmt_size(rep.read.bytes)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "  cache: {} of reads served from memory (page cache), {} reached the device",
                    crate::units::fmt_pct(hit),
                    crate::units::fmt_pct(100.0 - hit)
                );
            }
        }
    }
    match &rep.device {
        Some(d) => {
            let discards = match d.discard_ios {
                0 => String::new(),
                n => format!(", {n} discards ({})", fmt_size(d.discard_bytes)),
            };
            let flushes = match d.flush_ios {
                0 => String::new(),
                n => format!(", {}", counted(n, "flush", "flushes")),
            };
            let _ = writeln!(
                out,
                "  device {} (the whole device, all processes): {} reads ({}), {} writes ({}){discards}{flushes}",
                d.name,
                d.read_ios,
                fmt_size(d.read_bytes),
                d.write_ios,
                fmt_size(d.write_bytes)
            );
            if let Some(line) = empty_flush_writes(d, rep.write.ios, rep.fsyncs) {
                let _ = writeln!(out, "         {line}");
            }
            let beyond = d.beyond(rep.read.bytes, rep.write.bytes);
            if !beyond.is_empty() {
                let _ = writeln!(
                    out,
                    "         the device's {} were clearly more than iomark's ({} read, {} written): other processes, filesystem metadata and writeback, readahead, or the kernel reading whole pages to change part of one (writes smaller than a page, mmap)",
                    beyond.join(" and "),
                    fmt_size(rep.read.bytes),
                    fmt_size(rep.write.bytes)
                );
            }
        }
        None if s.engine.caps().does_io => {
            let _ = writeln!(out, "  device: {}", unseen_device(run));
        }
        None => {}
    }
}

/// Write amplification of a writing run, a line per source: the best one first, then
/// the others with their figure or why they have none.
fn amplification_lines(out: &mut String, run: &Run) {
    if !run.spec.writes() || run.write_amplification_sources.is_empty() {
        return;
    }
    let best = run.write_amplification.as_ref().map(|w| w.source.as_str());
    let mut sources: Vec<_> = run.write_amplification_sources.iter().collect();
    sources.sort_by_key(|w| Some(w.source.as_str()) != best);
    for w in sources {
        // Without a figure the note says why.
        let figure = match w.ratio {
            Some(r) => format!(
                "{r:.3} ({} on the device side for {} on the host side); ",
                fmt_size(w.device_bytes.unwrap_or(0)),
                fmt_size(w.host_bytes.unwrap_or(0))
            ),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "  write amplification ({}{}): {figure}{}",
            w.source,
            if Some(w.source.as_str()) == best {
                ", best source"
            } else {
                ""
            },
            w.note
        );
    }
}

/// Mean ± sample stddev of each direction across the repetitions.
fn across_lines(out: &mut String, run: &Run) {
    let s = &run.spec;
    let sm = &run.summary;
    let _ = writeln!(
        out,
        " across {} repetitions (mean ± sample stddev):",
        sm.read.iops.n.max(sm.write.iops.n)
    );
    for (label, d, used) in [
        ("read ", &sm.read, s.reads()),
        ("trim ", &sm.trim, s.rw.trims()),
        ("write", &sm.write, s.writes() && s.rw.writes_data()),
    ] {
        if !used {
            continue;
        }
        let _ = writeln!(
            out,
            "  {label}: {} IOPS (min {}, max {}), {}, p99 {}",
            pm(&d.iops, fmt_count),
            fmt_count(d.iops.min),
            fmt_count(d.iops.max),
            pm(&d.bw_bytes, fmt_mbps),
            pm(&d.lat_p99_ns, fmt_ns)
        );
    }
}

/// One table row per run: test, IOPS, MB/s, mean, p50 and p99 latency (both directions
/// summed for mixes; latencies of the dominant direction).
pub fn plan_table(doc: &Document) -> String {
    tables::plan(doc).terminal()
}

/// What `--dry-run` prints: the JSON plan with `--json`, else the listing.
pub fn dry_run(plan: &crate::plan::SuitePlan) -> String {
    match plan.out.json {
        true => format!("{}\n", crate::report::notes::dry_run_json(plan)),
        false => plan_listing(plan),
    }
}

/// "1 run", "2 runs": a count and its noun, singular for one.
pub(crate) fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The `--dry-run` listing of a study: each run with its parameters and estimated time.
pub fn plan_listing(plan: &crate::plan::SuitePlan) -> String {
    let est = crate::plan::PlanEstimate::of(plan);
    let first = plan.runs.first().map(|r| &r.plan.spec);
    // The engines of the runs, each once (a job file's jobs may each have their own).
    let mut engines: Vec<&str> = Vec::new();
    for r in &plan.runs {
        let e = r.plan.spec.engine.name();
        if !engines.contains(&e) {
            engines.push(e);
        }
    }
    let mut out = format!(
        "suite {} on {}: {}, {} {}\n",
        plan.name,
        crate::plan::targets::plan_targets(&plan.runs).join(", "),
        counted(plan.runs.len() as u64, "run", "runs"),
        if engines.len() > 1 {
            "engines"
        } else {
            "engine"
        },
        if engines.is_empty() {
            "-".into()
        } else {
            engines.join(", ")
        }
    );
    let exists = |p: &str| std::path::Path::new(p).exists();
    let made = crate::plan::targets::made_files(&plan.runs, &exists);
    if let Some(s) = first.filter(|_| !made.is_empty()) {
        let _ = writeln!(
            out,
            "file: {} {} made for the study{} and {}",
            made_files_words(&made),
            if made.len() == 1 { "is" } else { "are" },
            match s.new_file {
                crate::plan::new_file::NewFile::Write => "",
                crate::plan::new_file::NewFile::Allocate => " (allocated: nothing written first)",
            },
            if plan.keep {
                "kept (--keep)"
            } else {
                "removed at the end"
            }
        );
    }
    // What options resolved to (--size 2xmem, fio's engine names), once each.
    let mut notes: Vec<&str> = Vec::new();
    for r in &plan.runs {
        for n in r.plan.spec.engine_note.iter().flat_map(|n| n.split("; ")) {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    for n in notes {
        let _ = writeln!(out, "note: {n}");
    }
    out.push_str(&tables::plan_listing(plan, &est).terminal());
    for g in &plan.together {
        let _ = writeln!(
            out,
            "runs {} to {} run together, behind one start gate (their time counts once)",
            g.start + 1,
            g.end
        );
    }
    let _ = writeln!(out, "estimated total: {}", estimate_words(&est));
    out
}

/// The files a study makes, each with its length, files of one length after each other
/// said once: "a.0.0 (16 MiB), b.0.0, b.0.1 (5.3 MiB each)".
fn made_files_words(made: &[(&str, u64)]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < made.len() {
        let len = made[i].1;
        let n = made[i..].iter().take_while(|(_, l)| *l == len).count();
        let names: Vec<&str> = made[i..i + n].iter().map(|(p, _)| *p).collect();
        let each = if n > 1 { " each" } else { "" };
        parts.push(format!("{} ({}{each})", names.join(", "), fmt_size(len)));
        i += n;
    }
    parts.join(", ")
}

/// "5:04 to 25:04 (5 to 25 rounds: it stops once steady), size-based runs at an assumed
/// 500 MB/s (~)": the reckoning of [`crate::plan::PlanEstimate`] in words.
pub(crate) fn estimate_words(est: &crate::plan::PlanEstimate) -> String {
    let mut line = match est.rounds {
        Some((lo, hi)) => format!(
            "{} to {} ({lo} to {hi} rounds: it stops once steady)",
            fmt_duration(est.low_s),
            fmt_duration(est.high_s),
        ),
        None => fmt_duration(est.low_s),
    };
    if est.assumed {
        line.push_str(&format!(
            ", size-based runs at an assumed {:.0} MB/s (~)",
            crate::plan::ASSUMED_BYTES_PER_S / 1e6
        ));
    }
    if est.unknown > 0 {
        line.push_str(&format!(
            ", plus {} size-based runs on a span not known until the target is opened",
            est.unknown
        ));
    }
    line
}

/// Write saturation per minute: IOPS and the total written by the end of each minute.
pub(crate) fn wsat_minutes(rep: &Repetition) -> String {
    format!(
        "\nwrite saturation per minute\n{}",
        tables::wsat_minutes(rep).terminal()
    )
}

/// One table per test of a study: the swept parameter as rows, mean ± stddev columns;
/// for a queue-depth sweep of one workload (three depths or more), where IOPS stop
/// growing and what that means.
pub(crate) fn study_tables(doc: &Document) -> String {
    let mut out = String::new();
    for st in tables::studies(doc) {
        let _ = writeln!(out, "\n{}", st.test);
        out.push_str(&st.table.terminal());
        for n in &st.notes {
            let _ = writeln!(out, "{n}");
        }
        if let Some(v) = study_verdict(&st) {
            let _ = writeln!(out, "{v}");
        }
    }
    group_lines(&mut out, doc);
    out
}

/// What a queue-depth sweep of one workload says about saturation, in a sentence.
pub(crate) fn study_verdict(st: &tables::StudyTable) -> Option<String> {
    use crate::report::tables::{Saturation, saturation};
    if st.param != "qd" || !st.one_workload {
        return None;
    }
    // Depths whose runs did not complete are not in the verdict: say which.
    let uncounted = match st.uncounted.as_slice() {
        [] => String::new(),
        [q] => format!(" (QD {q}, not completed, is not counted)"),
        qs => format!(
            " (QD {}, not completed, are not counted)",
            qs.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
        ),
    };
    let verdict = match saturation(&st.saturation) {
        Some(Saturation::At { qd, best_qd, best }) => Some(format!(
            "IOPS saturate at QD {qd}: the smallest depth reaching 95% of the best mean ({} IOPS at QD {best_qd}){}; deeper queues add less than 5%",
            fmt_count(best),
            if st.saturation.iter().any(|p| p.ci95.is_some()) {
                ", its 95% confidence interval overlapping the best's"
            } else {
                ""
            }
        )),
        Some(Saturation::Growing) => Some(
            "IOPS still growing: only the deepest queue measured reaches 95% of the best mean"
                .into(),
        ),
        None => None,
    };
    verdict.map(|v| format!("{v}{uncounted}"))
}

/// One line per group of runs measured together: the group's sum (fio's
/// `group_reporting` entry, beside iomark's run per job).
fn group_lines(out: &mut String, doc: &Document) {
    let firsts = (doc.runs.iter())
        .filter_map(|r| r.group.as_ref().filter(|g| g.runs.first() == Some(&r.name)));
    for g in firsts {
        let s = &g.summary;
        let dirs: Vec<String> = [("read", &s.read), ("write", &s.write), ("trim", &s.trim)]
            .into_iter()
            .filter(|(_, d)| d.iops.mean > 0.0)
            .map(|(n, d)| {
                format!(
                    "{n} {} IOPS, {}",
                    fmt_count(d.iops.mean),
                    fmt_mbps(d.bw_bytes.mean)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "\n{} measured together: {} (the sum over the common window)",
            g.runs.join(" + "),
            if dirs.is_empty() {
                "no I/O".to_string()
            } else {
                dirs.join("; ")
            }
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::spec::Rw;
    use crate::results::schema::CpuPart;

    #[test]
    fn a_cpu_part_below_a_nanosecond_is_not_said_to_be_none() {
        // Two null jobs: the rest 0.066 ns per I/O was printed "rest 0 ns".
        let run = crate::results::testdoc::run(Rw::Write, 1, &[1e6], None);
        let mut rep = run.repetitions[0].clone();
        rep.cpu.workers = CpuPart::new(0.068, 0.0, 1_000_000);
        rep.cpu.other = CpuPart::new(0.000_000_066, 0.0, 1_000_000);
        rep.cpu.per_io_ns = rep.cpu.workers.per_io_ns + rep.cpu.other.per_io_ns;
        let mut out = String::new();
        super::cpu_line(&mut out, &rep);
        assert!(out.contains("(job threads 68 ns, rest <1 ns)"), "{out}");
    }
}

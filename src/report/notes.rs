//! Short texts around a command's tables: the line that opens a study, the steady-state
//! verdict, write amplification across a study's runs, the notes runs earned, the
//! `--dry-run` plan as JSON, and the figures of `iomark data`. Reads plans and results
//! only; returns strings.

use crate::plan::{PlanEstimate, SuitePlan};
use crate::results::schema::{DataMeasure, Document, Run};
use crate::units::{fmt_size, fmt_size_short};

/// "iomark suite qd: 14 runs (14 to do) on /dev/x, about 3:20".
pub fn suite_header(plan: &SuitePlan, remaining: usize) -> String {
    format!(
        "iomark suite {}: {} ({} to do) on {}, about {}\n",
        plan.name,
        crate::report::text::counted(plan.runs.len() as u64, "run", "runs"),
        remaining,
        crate::plan::targets::plan_targets(&plan.runs).join(", "),
        crate::report::text::estimate_words(&PlanEstimate::of(plan)),
    )
}

/// The plan of `--dry-run --json`: each run's estimate and its basis, and the plan's
/// total as the listing reckons it (`estimate_s` at the least, `estimate_max_s` at the
/// most: a steady study's rounds).
pub fn dry_run_json(plan: &SuitePlan) -> String {
    let est = PlanEstimate::of(plan);
    let size_based = plan
        .runs
        .iter()
        .filter(|r| r.plan.spec.runtime_s.is_none())
        .count();
    // The files the study makes, each with the length it is made.
    let exists = |p: &str| std::path::Path::new(p).exists();
    let made: Vec<serde_json::Value> = crate::plan::targets::made_files(&plan.runs, &exists)
        .into_iter()
        .map(|(path, bytes)| serde_json::json!({"path": path, "bytes": bytes}))
        .collect();
    let runs: Vec<serde_json::Value> = plan
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            serde_json::json!({
                "index": i + 1,
                "study": r.point,
                "spec": r.plan.spec,
                "repeat": r.plan.repeat,
                "estimate_s": est.runs[i].map(|(e, _)| e),
                "estimate_basis": est.runs[i].map(|(_, b)| b),
                "memory_bytes": r.plan.spec.memory().total(),
                // The runs measured with this one (1-based), itself among them.
                "together": plan.together.iter().find(|g| g.contains(&i))
                    .map(|g| (g.start + 1..=g.end).collect::<Vec<_>>()),
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({
        "suite": plan.name,
        "target": plan.target,
        "files_made": made,
        "runs": runs,
        "estimate_s": est.low_s,
        "estimate_max_s": est.high_s,
        "rounds": est.rounds.map(|(lo, hi)| serde_json::json!({"min": lo, "max": hi})),
        "assumed_bytes_per_s": est.assumed.then_some(crate::plan::ASSUMED_BYTES_PER_S),
        "size_based_runs": size_based,
        "unestimated_runs": est.unknown,
    }))
    .expect("plan serializes")
}

/// A run's name with the study value it was measured at, unless the name already shows
/// it: "write 4k qd32, compress 98", "randread 4k qd32" (qd 32 is in the name).
pub(crate) fn run_label(r: &Run) -> String {
    let Some(p) = &r.study else {
        return r.name.clone();
    };
    let shown = r.name.split_whitespace().any(|w| {
        w == p.value
            || w == format!("{}{}", p.param, p.value)
            || w == format!("{}={}", p.param, p.value)
    });
    if shown || p.value.is_empty() {
        r.name.clone()
    } else {
        format!("{}, {} {}", r.name, p.param, p.value)
    }
}

/// What kind of target a run had, in words (the HTML's "(file, span 1 GiB)").
pub(crate) fn kind_words(kind: crate::results::schema::TargetKind) -> &'static str {
    use crate::results::schema::TargetKind;
    match kind {
        TargetKind::None => "none",
        TargetKind::File => "file",
        TargetKind::BlockDevice => "block device",
        // fio's output does not say whether its filename is a file or a device.
        TargetKind::Unknown => "file or device, not known",
    }
}

/// The engine as the header names it: fio's or iomark's name, with `--sqpoll` (and the
/// CPU its thread was pinned to) when the run polled its submission queue, as the run's
/// name carries `--sync-mode`, and the spin before a wait where the default chose it.
fn engine_words(r: &Run) -> String {
    let o = &r.spec.engine_opts;
    let mut with = o.words(false);
    match (o.sqpoll, o.sqpoll_cpu) {
        (false, _) => {}
        (true, None) => with.insert(0, "--sqpoll".into()),
        (true, Some(c)) => with.insert(0, format!("--sqpoll (its thread on CPU {c})")),
    }
    if o.spin_wait_ns.is_none() {
        with.extend(default_spin_words(r));
    }
    match with.is_empty() {
        true => r.engine_label().to_string(),
        false => format!("{} with {}", r.engine_label(), with.join(", ")),
    }
}

/// The spin the default gave the waits (`--spin-wait` not given), as the repetitions
/// record it: "a 1.5 µs spin before a wait (the default)", or that there was none because
/// the job threads took every CPU. `None` where the waits do not spin (psync, `--sqpoll`,
/// a run imported from fio) or the repetitions differ.
fn default_spin_words(r: &Run) -> Option<String> {
    let mut used = r.repetitions.iter().map(|rep| rep.spin_wait_ns);
    let first = used.next()??;
    if !used.all(|u| u == Some(first)) {
        return None;
    }
    Some(match first {
        0 => "no spin before a wait (the default where the job threads take every CPU)".into(),
        ns => format!(
            "a {} spin before a wait (the default)",
            crate::units::fmt_ns(ns as f64)
        ),
    })
}

/// What a run ran on, in words: "psync on /mnt/t.dat", "io_uring with --sqpoll on
/// /dev/nvme0n1", or for the null engine (which does no I/O and has no target) "the null
/// engine (no I/O)".
pub(crate) fn engine_on_target(r: &Run) -> String {
    if r.target.kind == crate::results::schema::TargetKind::None {
        return format!("the {} engine (no I/O)", r.engine_label());
    }
    let engine = engine_words(r);
    let jobs = match r.spec.file_service {
        None => format!("{} job(s) each", r.spec.jobs),
        Some(f) if f.split => format!(
            "{} job(s), each serving its share of the files ({})",
            r.spec.jobs,
            f.text()
        ),
        Some(f) => format!(
            "{} job(s), each serving every file ({})",
            r.spec.jobs,
            f.text()
        ),
    };
    match r.targets.len() {
        0 | 1 => format!("{engine} on {}", r.target.path),
        n => format!(
            "{engine} on {n} targets ({}), {jobs}",
            (r.targets.iter().map(|t| t.target.path.as_str()))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    }
}

/// The span a run covered: "64 MiB", or on several targets of different sizes each
/// one's, in the order of its targets ("64 MiB, 16 MiB").
pub(crate) fn span_words(r: &Run) -> String {
    let span = |t: &crate::results::targets::TargetPart| t.target.span_bytes;
    match r.targets.first().map(span) {
        Some(first) if r.targets.iter().any(|t| span(t) != first) => (r.targets.iter())
            .map(|t| fmt_size(span(t)))
            .collect::<Vec<_>>()
            .join(", "),
        _ => crate::report::fmt::span_text(r),
    }
}

/// Every warning of every run, one line each, naming the run and its study value.
pub(crate) fn run_notes(doc: &Document) -> String {
    let mut s = String::new();
    for r in &doc.runs {
        for w in &r.warnings {
            s.push_str(&format!("note ({}): {w}\n", run_label(r)));
        }
    }
    s
}

/// The steady-state verdict, when the document has one.
pub(crate) fn steady_verdict(doc: &Document) -> Option<String> {
    let s = doc.steady_state.as_ref()?;
    Some(match (s.reached, s.window) {
        (true, Some([a, b])) => format!(
            "steady state reached at round {}: rounds {a}-{b}, mean {:.0} IOPS, range {:.1}% (max {}%), slope {:.1}% (max {}%)\n",
            s.round.unwrap_or(0),
            s.mean.unwrap_or(0.0),
            s.range_pct.unwrap_or(0.0),
            s.criteria.max_range_pct,
            s.slope_pct.unwrap_or(0.0),
            s.criteria.max_slope_pct
        ),
        _ => match (s.range_pct, s.slope_pct) {
            (Some(range), Some(slope)) => format!(
                "steady state NOT reached in {} rounds (last window: range {range:.1}%, slope {slope:.1}%)\n",
                s.rounds
            ),
            // Cut before a round ended (in the precondition, say).
            _ if s.rounds == 0 => "steady state NOT reached: no round completed\n".to_string(),
            // Cut before a window's worth of rounds: nothing to judge.
            _ => format!(
                "steady state NOT reached: {} round(s), fewer than the {} of a window\n",
                s.rounds, s.criteria.window
            ),
        },
    })
}

/// Write amplification of every run that has a figure, with the source and its note.
pub(crate) fn amplification(doc: &Document) -> Option<String> {
    let first = doc
        .runs
        .iter()
        .find_map(|r| r.write_amplification.as_ref())?;
    let was: Vec<String> = doc
        .runs
        .iter()
        .filter_map(|r| {
            let w = r.write_amplification.as_ref()?;
            let label = r
                .study
                .as_ref()
                .map_or(r.name.clone(), |p| format!("{} {}", p.test, p.value));
            Some(format!("{label} {:.3}", w.ratio?))
        })
        .collect();
    Some(format!(
        "write amplification ({}; {}): {}\n",
        first.source,
        first.note,
        was.join(", ")
    ))
}

/// What `iomark data` measured of the stream it wrote, and where the stream ended when
/// it did not fill `--size`.
pub fn data_figures(
    plan: &crate::plan::DataPlan,
    m: &DataMeasure,
    end: &crate::plan::StreamEnd,
) -> String {
    let (output, data, dedup_unit) = (
        &plan.output,
        plan.spec.data.describe(),
        plan.spec.data.dedup_unit,
    );
    let crate::plan::StreamEnd {
        bytes,
        writes,
        next,
    } = *end;
    let dups = match m.dedup_pct {
        Some(p) => format!("duplicate {}-units {p:.1}%", fmt_size_short(dedup_unit)),
        None => format!(
            "no duplicate figure: the stream holds no whole {} dedup unit",
            fmt_size_short(dedup_unit)
        ),
    };
    let mut s = format!(
        "{output}: {} of {data}; measured chunk by chunk: lz4 {:.1}%, zstd-1 {:.1}% smaller; {dups}",
        fmt_size(m.compress_sampled_bytes),
        m.lz4_pct,
        m.zstd_pct,
    );
    if next > 0 {
        let left = plan.size - bytes;
        let writes = crate::report::text::counted(writes, "whole write", "whole writes");
        let what = match &plan.spec.bs_mix {
            None => format!(
                "{writes} of --bs {} ({} B), what a write run of --size {} ({} B) writes: it writes no partial block, so the last {left} B of its span are not written",
                fmt_size(plan.spec.bs),
                bytes,
                fmt_size(plan.size),
                plan.size,
            ),
            Some(mix) => format!(
                "{writes} of {} ({} B), what a write run's first pass over --size {} ({} B) writes: its next write ({} B) does not fit in the last {left} B, and a run that goes on writes it at the span's start",
                mix.opt(),
                bytes,
                fmt_size(plan.size),
                plan.size,
                next,
            ),
        };
        s.push_str(&format!("\n{output}: {what}"));
    }
    // Units of zeros, or chunks of so few literals that they repeat, or too small, as a
    // run says them (`iomark data` said neither).
    for n in plan.spec.data.shape_notes(false) {
        s.push_str(&format!("\nnote: {n}"));
    }
    // (A stream no longer than the pool has no unit come back.)
    if plan.size > plan.spec.data.pool_bytes() as u64
        && let Some(n) = plan.spec.data.pool_window_note(true)
    {
        s.push_str(&format!("\nnote: {n}"));
    }
    s
}

/// What a study prints after its runs: the purge, the tables, then for dirty-drive
/// studies the verdict, write amplification and (wsat) the per-minute table, for the
/// others the notes runs earned.
pub fn study_ending(doc: &Document, kind: crate::plan::StudyKind) -> String {
    let mut s = String::new();
    if let Some(p) = &doc.purge {
        s.push_str(&format!("purge: {} ({})\n", p.method, p.note));
    }
    s.push_str(&crate::report::text::study_tables(doc));
    if kind.is_dirty() {
        s.push_str(&steady_verdict(doc).unwrap_or_default());
        s.push_str(&amplification(doc).unwrap_or_default());
        if kind == crate::plan::StudyKind::Wsat
            && let Some(rep) = doc.runs.first().and_then(|r| r.repetitions.first())
        {
            s.push_str(&crate::report::text::wsat_minutes(rep));
        }
    } else {
        s.push_str(&run_notes(doc));
    }
    // A study scaled out over MPI: each run's ranks (and hosts).
    for run in doc.runs.iter().filter(|r| r.mpi.is_some()) {
        s.push_str(&format!("\n{}:\n", run.name));
        s.push_str(&crate::report::text::rank_lines(run));
    }
    s
}

/// "iomark quick benchmark: 6 tests of 4 s each on ./.iomark-quick-1.dat (1.0 GiB)".
pub fn quick_header(plan: &crate::plan::QuickPlan, place: Option<&str>) -> String {
    let first = &plan.runs[0].plan.spec;
    let total: f64 = plan
        .runs
        .iter()
        .filter_map(|r| crate::plan::estimate_s(&r.plan))
        .sum();
    // The null engine opens nothing: no file is made, and no I/O is direct or cached.
    let no_io = !first.engine.caps().needs_fd;
    let (layout, file, io) = match no_io {
        true => (
            "",
            "no file: --engine null does no I/O (the figures are iomark's own cost)".to_string(),
            "no I/O",
        ),
        false => (
            ", plus laying out the file",
            format!(
                "file {} ({}, made now and removed at the end){}",
                plan.file.display(),
                fmt_size(first.size.unwrap_or(0)),
                place.map_or(String::new(), |p| format!(" on {p}")),
            ),
            if first.direct {
                "direct I/O (O_DIRECT)"
            } else {
                "through the page cache"
            },
        ),
    };
    format!(
        "iomark quick benchmark: {} tests of {} s each, about {} in all{layout}\n{file}\nengine {}, {io}\n",
        plan.runs.len(),
        first.runtime_s.unwrap_or(0.0) + first.ramp_s,
        crate::report::fmt::fmt_duration(total),
        first.engine.name(),
    )
}

/// The end of the quick benchmark: its first note, how long it took, the file gone (or
/// none made: the null engine).
pub fn quick_ending(doc: &Document, elapsed_s: f64, file_left: bool) -> String {
    let mut out = String::new();
    if let Some(note) = doc.runs.first().and_then(|r| r.warnings.first()) {
        out.push_str(&format!("note: {note}\n"));
    }
    let no_io = doc
        .runs
        .first()
        .is_some_and(|r| !r.spec.engine.caps().needs_fd);
    out.push_str(&format!(
        "took {}; {}\n",
        crate::report::fmt::fmt_duration(elapsed_s),
        match (no_io, file_left) {
            (true, _) => "no test file was made",
            (false, true) => "the test file is still there",
            (false, false) => "the test file was removed",
        }
    ));
    out
}

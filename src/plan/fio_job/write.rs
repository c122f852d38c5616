//! `--as-fio`: any plan written as a fio job file, one job per run, every option spelled
//! out (sizes in bytes, so `kb_base` cannot change them), each job after a `stonewall`
//! because iomark runs its runs one after another. What fio cannot express is said in
//! `#` comments. `iomark fio` reads the file back into the same plan.

use crate::plan::StudyRun;
use crate::plan::bsmix::BsMix;
use crate::plan::cache::{Fadvise, Invalidate};
use crate::plan::data::{CompressMethod, DataKind};
use crate::plan::engine::{EngineKind, EngineOpts, SyncMode, fmt_spin};
use crate::plan::spec::Spec;

/// The job file of `runs`; `title` says where it came from (`iomark suite qd`).
pub fn job_file(title: &str, runs: &[StudyRun]) -> String {
    let mut out = format!(
        "# {title}, written by iomark {} as a fio job file (iomark --as-fio).\n\
         # One job per iomark run (a section per target of a run on several), in order;\n\
         # each run waits for the one before (stonewall).\n\
         # Sizes are in bytes. Run it with: fio --output-format=json FILE\n\
         [global]\nthread\ngroup_reporting\n",
        env!("CARGO_PKG_VERSION")
    );
    let mut names: Vec<String> = Vec::new();
    // The jobs of the sections before (fio's split of `cpus_allowed` counts them).
    let mut before = 0;
    for r in runs {
        let mut name = section_name(r);
        // fio keys jobs by name; keep them apart.
        let base = name.clone();
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        names.push(name.clone());
        // Several targets without --file-service: iomark runs a set of jobs on each, all
        // at once; fio does as a section per target, the later ones without a stonewall
        // (one group). Only the first target was written: fio ran a part of the run.
        let spec = &r.plan.spec;
        let parts = match spec.file_service {
            None if spec.target_count() > 1 => spec.per_target(),
            _ => vec![spec.clone()],
        };
        for (k, part) in parts.iter().enumerate() {
            let section = match parts.len() {
                1 => name.clone(),
                _ => format!("{name}-t{k}"),
            };
            out.push('\n');
            job(&mut out, &section, part, r.plan.repeat, before, k == 0);
            before += part.jobs;
        }
        if parts.len() > 1 && spec.stonewall {
            out.push_str("# --stonewall: iomark ends every target's jobs when the first target is done; fio has no such option\n");
        }
    }
    out
}

/// A section name fio accepts: the run's name with spaces as dashes.
fn section_name(r: &StudyRun) -> String {
    let name = match &r.plan.spec.label {
        Some(l) => l.clone(),
        None if r.point.suite.is_empty() => r.plan.spec.name(),
        None => format!("{} {}", r.point.test, r.plan.spec.name()),
    };
    let clean: String = name
        .chars()
        .map(|c| match c {
            ' ' | '[' | ']' | '#' | ';' | '=' | ':' | '/' => '-',
            c => c,
        })
        .collect();
    let mut s = clean.trim_matches('-').to_string();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    if s.is_empty() || s == "global" {
        s = format!("job-{s}");
    }
    s
}

/// One section; `first` of its run (the others are the run's other targets, measured
/// together with it).
fn job(out: &mut String, name: &str, s: &Spec, repeat: u32, before: u32, first: bool) {
    let mut w = |line: String| {
        out.push_str(&line);
        out.push('\n');
    };
    w(format!("[{name}]"));
    match first {
        true => w("stonewall".into()),
        false => w("# another target of the run: together with the section before".into()),
    }
    w(format!("name={name}"));
    w(format!("ioengine={}", s.engine.name()));
    super::write_files::files(&mut w, name, s);
    // fio's suffix: a random seek every N I/Os, or N bytes between sequential ones.
    match s.random_run.or(s.hole) {
        Some(n) => w(format!("rw={}:{n}", s.rw.name())),
        None => w(format!("rw={}", s.rw.name())),
    }
    if s.rw_sequencer_identical {
        w("rw_sequencer=identical".into());
    }
    if s.rw.trims() {
        w("# fio trims block devices only (BLKDISCARD; on a regular file its trims fail with ENOTTY); iomark punches holes in files".into());
    }
    if s.rw.is_mixed() {
        w(format!("rwmixread={}", s.rwmixread));
    }
    block_sizes(&mut w, s);
    timing_and_offsets(&mut w, s, repeat);
    w(format!("iodepth={}", s.qd));
    w(format!("numjobs={}", s.jobs));
    w(format!("direct={}", u8::from(s.direct)));
    // fio's size is the job's, split evenly between its files; iomark's is each file's.
    let files = match s.file_service {
        Some(f) if f.split => s.target_paths().len() as u64 / u64::from(s.jobs.max(1)),
        Some(_) => s.target_paths().len() as u64,
        None => 1,
    };
    match (s.size, s.size_pct) {
        (_, Some(p)) => w(format!("size={p}%")),
        (Some(size), None) => w(format!("size={}", size * files)),
        (None, None) => w("# size: the whole file or device (a new file is 1 GiB in iomark; fio needs size= for a new file)".into()),
    }
    if let Some(p) = s.offset_pct {
        w(format!("offset={p}%"));
    } else if s.offset > 0 {
        w(format!("offset={}", s.offset));
    }
    match (s.io_size, s.io_spans, s.size) {
        (Some(b), _, _) => w(format!("io_size={}", b / u64::from(s.io_share.max(1)))),
        (None, Some(n), Some(size)) => w(format!("io_size={}", (n * size as f64) as u64)),
        (None, Some(n), None) => w(format!("# io_size: {n} times the span (fio needs bytes)")),
        _ => {}
    }
    if let Some(rt) = s.runtime_s {
        w(format!("runtime={}ms", (rt * 1000.0).round() as u64));
        if s.io_size.is_none() && s.io_spans.is_none() {
            w("time_based".into());
        }
    }
    if s.ramp_s > 0.0 {
        w(format!(
            "ramp_time={}ms",
            (s.ramp_s * 1000.0).round() as u64
        ));
        let time_based = s.runtime_s.is_some() && s.io_size.is_none() && s.io_spans.is_none();
        if !time_based && !s.ramp_in_size {
            w(
                "# ramp_time: iomark's ramp came before the size it moved; fio's is part of size"
                    .into(),
            );
        }
    }
    if s.fsync > 0 {
        w(format!("fsync={}", s.fsync));
    }
    if s.end_fsync {
        w("end_fsync=1".into());
    }
    w(format!("randseed={}", s.seed));
    engine_opts(&mut w, &s.engine_opts, s.engine);
    cpus(&mut w, &s.engine_opts, s.jobs, before);
    if repeat > 1 {
        w(format!("loops={repeat}"));
        w("# loops: fio adds the passes into one result; iomark reports each repetition and their spread".into());
    }
    data(&mut w, s);
    if s.verify {
        w("verify=crc32c".into());
        w(
            "# verify: fio's own header and check, not iomark's (offset, seed, generation, CRC32C)"
                .into(),
        );
    }
    if s.pause_s > 0.0 {
        w(format!(
            "# pause: {} s of rest between runs (fio has none)",
            s.pause_s
        ));
    }
    if s.drop_caches && !s.direct {
        w("# drop-caches: iomark drops the page cache before each repetition (fio's invalidate=1, its default, drops only this file's pages)".into());
    }
    if s.io_share > 1 {
        w(format!(
            "# iomark emulated QD {} with {} psync jobs",
            s.io_share, s.jobs
        ));
    }
    if let Some(note) = &s.engine_note {
        w(format!("# iomark's note: {}", note.replace('\n', " ")));
    }
    w(format!(
        "# random offsets and data come from fio's generator, not iomark's (seed {} gives other offsets in fio)",
        s.seed
    ));
}

/// A job's pacing (rate, thinktime, startdelay) and the shape of its offsets
/// (distribution, random map).
fn timing_and_offsets(w: &mut impl FnMut(String), s: &Spec, repeat: u32) {
    rates(w, s);
    match &s.random_distribution {
        crate::plan::distribution::Distribution::Uniform => {}
        // fio refuses a zipf theta of 1.0 ("job dropped"); iomark's generator takes it.
        crate::plan::distribution::Distribution::Zipf(t, c) if *t == 1.0 => {
            w("# zipf:1: fio refuses theta 1.0; 1.001 is the nearest it takes".into());
            let center = c.map_or(String::new(), |c| format!(":{c}"));
            w(format!("random_distribution=zipf:1.001{center}"));
        }
        d => {
            if matches!(d, crate::plan::distribution::Distribution::Pareto(..)) {
                w("# pareto: fio's parameter is not iomark's (fio's pareto:0.8 is nearly uniform, iomark's the 80/20 rule; docs/fio.md)".into());
            }
            w(format!("random_distribution={}", d.text()));
        }
    }
    if s.startdelay_end_s() > 0.0 {
        let ms = |v: f64| (v * 1000.0).round() as u64;
        match s.startdelay_max_s {
            Some(hi) => w(format!("startdelay={}ms-{}ms", ms(s.startdelay_s), ms(hi))),
            None => w(format!("startdelay={}ms", ms(s.startdelay_s))),
        }
        if repeat > 1 {
            w(
                "# startdelay: iomark waits before every repetition, fio once before the job"
                    .into(),
            );
        }
    }
    if let Some(us) = s.thinktime_us {
        w(format!("thinktime={us}"));
        if let Some(spin) = s.thinktime_spin_us {
            w(format!("thinktime_spin={spin}"));
        }
        if s.thinktime_on_issue {
            w("thinktime_blocks_type=issue".into());
        }
        if let Some(io) = s.thinktime_iotime_us {
            w(format!("thinktime_iotime={io}us"));
        }
        if let Some(b) = s.thinktime_blocks {
            w(format!("thinktime_blocks={b}"));
        }
    }
    if (s.bs_mix.is_some() || s.write_bs.is_some()) && s.rw.is_random() {
        // With its random map fio shortens an I/O to the free blocks where it lands.
        w("norandommap".into());
        w("# norandommap: iomark keeps no random map for a block-size mix; with one, fio shortens mixed-size I/Os to the free blocks they land on".into());
    } else if s.rw.is_random() && !s.random_map {
        // iomark draws each offset on its own: fio's norandommap.
        w("norandommap".into());
    }
    page_cache(w, s);
}

/// `--fadvise` and `--invalidate` as fio's `fadvise_hint` and `invalidate` (fio's
/// defaults, `1` for both, are iomark's `auto` and `pass`).
fn page_cache(w: &mut impl FnMut(String), s: &Spec) {
    if s.direct {
        // Neither acts on direct I/O, in fio or in iomark.
        return;
    }
    match s.cache.fadvise {
        Fadvise::Auto => {}
        Fadvise::None => w("fadvise_hint=0".into()),
        other => w(format!("fadvise_hint={}", other.name())),
    }
    // fio's mmap engine takes any hint but 0 as "by the pattern".
    let random = s.rw.is_random();
    if s.engine == crate::plan::engine::EngineKind::Mmap
        && s.cache.advice(random).is_some_and(|r| r != random)
    {
        w(format!(
            "# fadvise_hint: fio's mmap engine advises its mapping by the pattern for any hint but 0 ({}); iomark advised {}",
            if random {
                "MADV_RANDOM"
            } else {
                "MADV_SEQUENTIAL"
            },
            if random {
                "MADV_SEQUENTIAL"
            } else {
                "MADV_RANDOM"
            },
        ));
    }
    match s.cache.invalidate {
        Invalidate::Pass => {}
        Invalidate::Off => w("invalidate=0".into()),
        Invalidate::Rep if !s.direct && more_than_one_pass(s) => w(
            "# invalidate: iomark drops the file's cached pages before each repetition only; fio (invalidate=1) also at each new pass over the file".into(),
        ),
        Invalidate::Rep => {}
    }
}

/// Whether a job may go over its span more than once: time-based, or moving more than
/// the span (`--io-size`, `--io-size Nx` above 1; a span of the whole file may be smaller
/// than the bytes, so it may).
fn more_than_one_pass(s: &Spec) -> bool {
    match (s.io_size, s.io_spans) {
        (Some(bytes), _) => s.size.is_none_or(|size| bytes > size),
        (None, Some(n)) => n > 1.0,
        (None, None) => s.runtime_s.is_some(),
    }
}

/// `bs`, `bssplit` or `bsrange`; with `--write-bs`, fio's `read,write` sides.
fn block_sizes(w: &mut impl FnMut(String), s: &Spec) {
    // One side as each of fio's three options writes it; `None` where it cannot.
    let as_bs = |bs: u64, mix: Option<&BsMix>| mix.is_none().then(|| bs.to_string());
    let as_split = |bs: u64, mix: Option<&BsMix>| match mix {
        None => Some(format!("{bs}/100")),
        Some(BsMix::Split(parts)) => Some(
            (parts.iter().map(|p| format!("{}/{}", p.bs, p.pct)))
                .collect::<Vec<_>>()
                .join(":"),
        ),
        Some(BsMix::Range { .. }) => None,
    };
    let as_range = |bs: u64, mix: Option<&BsMix>| match mix {
        None => Some(format!("{bs}-{bs}")),
        Some(BsMix::Range { lo, hi }) => Some(format!("{lo}-{hi}")),
        Some(BsMix::Split(_)) => None,
    };
    let reads = (s.bs, s.bs_mix.as_ref());
    let Some(wb) = &s.write_bs else {
        match reads.1 {
            None => w(format!("bs={}", s.bs)),
            Some(BsMix::Split(_)) => w(format!(
                "bssplit={}",
                as_split(reads.0, reads.1).unwrap_or_default()
            )),
            Some(BsMix::Range { lo, hi }) => w(format!("bsrange={lo}-{hi}")),
        }
        return;
    };
    let writes = (wb.bs, wb.mix.as_ref());
    let line = (as_bs(reads.0, reads.1).zip(as_bs(writes.0, writes.1)))
        .map(|(r, w)| format!("bs={r},{w}"))
        .or_else(|| {
            Some(format!(
                "bssplit={},{}",
                as_split(reads.0, reads.1)?,
                as_split(writes.0, writes.1)?
            ))
        })
        .or_else(|| {
            Some(format!(
                "bsrange={},{}",
                as_range(reads.0, reads.1)?,
                as_range(writes.0, writes.1)?
            ))
        });
    if let Some(line) = line {
        w(line);
        return;
    }
    // A split on one side and a range on the other: fio takes bssplit over bsrange, so
    // the range is written as a split of its sizes in equal shares.
    let range_as_split = |mix: Option<&BsMix>| match mix {
        Some(BsMix::Range { lo, hi }) => (1..=hi / lo)
            .map(|k| (k * lo).to_string())
            .collect::<Vec<_>>()
            .join(":"),
        _ => as_split(0, mix).unwrap_or_default(),
    };
    w(format!(
        "bssplit={},{}",
        range_as_split(reads.1),
        range_as_split(writes.1)
    ));
    w("# bssplit: fio has no bsrange side beside a bssplit side; the range is written as its sizes in equal shares (fio rounds the shares to whole percentages)".into());
}

fn engine_opts(w: &mut impl FnMut(String), o: &EngineOpts, engine: EngineKind) {
    match o.sync_mode {
        SyncMode::None => {}
        SyncMode::Sync => w("sync=sync".into()),
        SyncMode::Dsync => w("sync=dsync".into()),
    }
    if o.batch_submit > 1 {
        w(format!("iodepth_batch_submit={}", o.batch_submit));
    }
    if o.batch_complete > 1 {
        w(format!("iodepth_batch_complete_min={}", o.batch_complete));
    }
    if o.sqpoll {
        w("sqthread_poll=1".into());
    }
    if let Some(cpu) = o.sqpoll_cpu {
        w(format!("sqthread_poll_cpu={cpu}"));
    }
    if o.hipri {
        w("hipri=1".into());
    }
    // iomark's spin before a wait (`--spin-wait`): fio has none.
    if o.waits_spin(engine) && o.spin_wait_ns != Some(0) {
        let how = match o.spin_wait_ns {
            Some(ns) => format!(
                "spin-wait {}: iomark watches the ring that long",
                fmt_spin(ns)
            ),
            None => format!(
                "spin-wait: iomark watches the ring for up to {} where its jobs leave a CPU free",
                fmt_spin(crate::plan::engine::SPIN_WAIT_NS)
            ),
        };
        w(format!(
            "# {how} before each wait for one completion slept; fio sleeps at once (iomark's --spin-wait 0)"
        ));
    }
    // iomark's job threads' policy (`--sched-policy`): fio sets none.
    if o.sched_policy == crate::plan::engine::SchedPolicy::Batch {
        w("# sched-policy: iomark's job threads run SCHED_BATCH (woken, they do not preempt the thread completing their other requests); fio's run as started: chrt -b 0 fio ... to match, or iomark's --sched-policy normal".into());
    }
}

/// `cpus_allowed`: fio's split puts job j of a section after `before` jobs of the file on
/// the ((before + j) mod n)-th CPU of its set, in ascending order; iomark put it on the
/// ((cpus_after + j) mod n)-th of its list, each run from the list's start. Where they
/// differ, a section whose jobs all ran on one CPU names that one (a study's one-job
/// runs on `--cpus 0,1` all ran on CPU 0, where fio ran its second section on CPU 1);
/// otherwise a comment says which CPUs each tool takes.
fn cpus(w: &mut impl FnMut(String), o: &EngineOpts, jobs: u32, before: u32) {
    if o.cpus.is_empty() {
        return;
    }
    let fmt = crate::plan::engine::fmt_cpus;
    let policy = match o.cpus_shared {
        true => "cpus_allowed_policy=shared",
        false => "cpus_allowed_policy=split",
    };
    let mut set = o.cpus.clone();
    set.sort_unstable();
    set.dedup();
    let jobs = jobs.max(1);
    let mine: Vec<u32> = (0..jobs).map(|j| o.job_cpus(o.cpus_after + j)[0]).collect();
    let fios: Vec<u32> = (0..jobs)
        .map(|j| set[(before + j) as usize % set.len()])
        .collect();
    if o.cpus_shared || mine == fios {
        w(format!("cpus_allowed={}", fmt(&o.cpus)));
        w(policy.into());
    } else if mine.iter().all(|&c| c == mine[0]) {
        w(format!("cpus_allowed={}", mine[0]));
        w(policy.into());
    } else {
        w(format!("cpus_allowed={}", fmt(&o.cpus)));
        w(policy.into());
        let list = |c: &[u32]| {
            let t: Vec<String> = c.iter().map(u32::to_string).collect();
            t.join(",")
        };
        w(format!(
            "# cpus_allowed: fio's split takes the CPUs in ascending order and counts the {before} {} of the sections before this one: its jobs run on CPUs {} where iomark's run on {}",
            if before == 1 { "job" } else { "jobs" },
            list(&fios),
            list(&mine)
        ));
    }
}

fn data(w: &mut impl FnMut(String), s: &Spec) {
    let d = &s.data;
    match d.kind {
        DataKind::Random => {}
        DataKind::Zeros => w("zero_buffers=1".into()),
        DataKind::Pattern => w(format!(
            "buffer_pattern=0x{}",
            d.pattern.as_deref().unwrap_or("00")
        )),
        DataKind::Compressible => {
            w(format!("buffer_compress_percentage={}", d.compress.round()));
            w(format!("buffer_compress_chunk={}", d.compress_chunk));
            if d.compress_method == CompressMethod::Repeat {
                w("# compress-method repeat (literals and copies) has no fio equivalent; fio's zerofill is used".into());
            }
        }
        DataKind::Files => w(format!(
            "# data files:{}: fio cannot write a corpus's contents; it writes random data",
            d.files.as_deref().unwrap_or("")
        )),
    }
    if d.dedup > 0.0 {
        w(format!("dedupe_percentage={}", d.dedup.round()));
        if d.dedup_unit != s.write_bs.as_ref().map_or(s.bs, |w| w.bs) {
            w(format!(
                "# dedup unit: iomark's is {} bytes, fio's is the block size",
                d.dedup_unit
            ));
        }
    }
    if let Some(n) = d.dedup_set {
        w(format!(
            "# dedup-set {n}: fio has no bound on the distinct blocks repeated"
        ));
    }
    if d.refill {
        w("refill_buffers=1".into());
    } else if d.generated() && d.pool != crate::plan::data::POOL_BYTES as u64 {
        w(format!(
            "# data-pool {}: iomark's unit bytes recur after that many bytes; fio reuses its buffers, scrambling a few bytes of each write",
            d.pool
        ));
    }
}

/// `--rate`, `--rate-iops`, `--rate-min`, `--rate-iops-min` (and `--rate-cycle`): fio
/// holds each direction to its own, so a mix's value is split by its mix.
fn rates(w: &mut impl FnMut(String), s: &Spec) {
    let all = [
        ("rate", s.rate_bps),
        ("rate_iops", s.rate_iops),
        ("rate_min", s.rate_min_bps),
        ("rate_iops_min", s.rate_iops_min),
    ];
    if let Some(ms) = s.rate_cycle_ms {
        w(format!("rate_cycle={ms}"));
    }
    for (key, cap) in all {
        let Some(cap) = cap else { continue };
        // fio's rate_iops with a size mix caps bytes at N x the smallest size: iomark's
        // I/O cap is written as the bytes it comes to at the mix's mean size.
        let (key, cap) = match (key, &s.bs_mix) {
            ("rate_iops" | "rate_iops_min", Some(mix)) => {
                let bytes = (cap as f64 * mix.mean()).round() as u64;
                w(format!(
                    "# {key}={cap}: fio caps a size mix's bytes at N x its smallest size; iomark caps I/Os, here written as the bytes they come to at the mix's mean size"
                ));
                (
                    if key == "rate_iops" {
                        "rate"
                    } else {
                        "rate_min"
                    },
                    bytes,
                )
            }
            _ => (key, cap),
        };
        let side = |pct: u64| (cap * pct / 100).max(1);
        if s.rw == crate::plan::spec::Rw::TrimWrite {
            // Trims and writes alternate: half the cap for each, as fio caps each.
            w(format!("{key}=,{},{}", side(50), side(50)));
            continue;
        }
        match s.rw.is_mixed() {
            false => w(format!("{key}={cap}")),
            true => {
                let r = u64::from(s.rwmixread);
                w(format!("{key}={},{}", side(r), side(100 - r)));
                w(format!(
                    "# {key}: iomark holds reads and writes together to {cap}; fio holds each direction, so the value is split by the mix"
                ));
            }
        }
    }
}

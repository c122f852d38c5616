//! The run options: one table naming every option of a workload (shared by `run`, `suite`,
//! matrix files and the study presets), and [`RunOptions`] (in
//! `run_options.rs`), the text a user gave for them.
//!
//! The command line builds its `run`/`suite` arguments from [`table`] and fills a
//! [`RunOptions`] from what was typed; a study fills one from its merged option list with
//! [`RunOptions::from_opts`]. Both then go through the one resolution
//! (`crate::plan::resolve`), so an option is spelled, defaulted and checked in one place,
//! whichever way it arrived. Nothing here knows about clap.

pub use crate::plan::run_options::RunOptions;

pub(crate) use crate::plan::option_def::{Group, OptDef, find, kind};
use crate::plan::option_def::{switch, value};

use Group::Workload;

/// Every run option, in the order `--help` lists them: the workload's (here), then the
/// data written and the target's safety and checks (`options_data.rs`).
pub(crate) fn table() -> impl Iterator<Item = &'static OptDef> + Clone {
    WORKLOAD.iter().chain(crate::plan::options_data::DATA)
}

/// The workload's options, in the order `--help` lists them.
const WORKLOAD: &[OptDef] = &[
    OptDef {
        choices: &[
            "read",
            "write",
            "randread",
            "randwrite",
            "rw",
            "randrw",
            "trim",
            "randtrim",
            "trimwrite",
        ],
        alias: &["readwrite"],
        ..value(
            "rw",
            "RW",
            Some("read"),
            Workload,
            "Access pattern. trim and randtrim discard blocks (BLKDISCARD on a device, punched holes in a file), trimwrite discards each block and then writes it.",
        )
    },
    value(
        "rwmixread",
        "PCT",
        Some("50"),
        Workload,
        "Percentage of reads in a mix (--rw rw or randrw).",
    ),
    value(
        "rwmixwrite",
        "PCT",
        None,
        Workload,
        "Percentage of writes in a mix, as fio says it (100 - --rwmixread; with --rwmixread too, the two must add up to 100).",
    ),
    OptDef {
        alias: &["blocksize"],
        ..value(
            "bs",
            "SIZE",
            Some("4k"),
            Workload,
            "Block size: the size of every I/O (e.g. 512, 4k, 128KiB, 1m; 4KB is 4000 bytes, as in SI).",
        )
    },
    value(
        "bssplit",
        "SIZE/PCT:..",
        None,
        Workload,
        "Block sizes mixed by share of I/Os, as fio's bssplit (e.g. 4k/50:64k/30:1m/20; a size without /PCT shares what is left of 100); replaces --bs. Offsets are aligned to the smallest size.",
    ),
    OptDef {
        alias: &["blocksize-range"],
        ..value(
            "bsrange",
            "LOW-HIGH",
            None,
            Workload,
            "Block sizes drawn uniformly from LOW, 2×LOW, … HIGH (e.g. 4k-64k; fio's bsrange, whose sizes differ: see docs/fio.md); replaces --bs.",
        )
    },
    value(
        "write-bs",
        "SIZE|SPLIT|RANGE",
        None,
        Workload,
        "The writes' sizes in a mix (--rw rw or randrw) when they differ from the reads' (--bs, --bssplit or --bsrange), as fio's bs=4k,64k: a size (64k), a split (4k/50:64k/50) or a range (4k-64k). A pattern of one direction takes that direction's size: a writing one this, a reading one --bs (a note says this does nothing there); trimwrite needs it equal to --bs.",
    ),
    value(
        "size",
        "SIZE",
        None,
        Workload,
        "Span of the target used, from --offset, or a share of an existing file's or device's length such as 50% (fio's size=50%) [default: the whole device or existing file; 1g for a new file].",
    ),
    value(
        "offset",
        "SIZE",
        Some("0"),
        Workload,
        "Where the span starts in the target, or a share of an existing file's or device's length such as 25% (rounded down to a block).",
    ),
    OptDef {
        alias: &["iodepth"],
        ..value(
            "qd",
            "N",
            Some("1"),
            Workload,
            "I/Os in flight per job (queue depth).",
        )
    },
    OptDef {
        alias: &["numjobs"],
        ..value(
            "jobs",
            "N",
            Some("1"),
            Workload,
            "Worker threads. Each job works over the whole span, as fio's jobs do on one file, and moves --io-size on its own; sequential jobs start at evenly spaced offsets so they do not read the same blocks in lockstep.",
        )
    },
    OptDef {
        alias: &["file-service-type"],
        ..value(
            "file-service",
            "KIND[:N]",
            None,
            Workload,
            "Several TARGETs served by every job instead of --jobs jobs per target, as fio's jobs serve their files: each I/O goes to the file picked by roundrobin (the next file after every N I/Os, fio's default), sequential (one file until its span is done, then the next), random (a file drawn every N I/Os), or a file drawn for every I/O by zipf:THETA, pareto:H or normal:SIGMA over the files (as --random-distribution over blocks: the first file the hottest, pareto:H with H below 0.5 the last, normal's the middle ones; SIGMA a percentage of the files). Each file keeps its own offsets (a sequential pattern goes on where it left that file), --size is each file's span and --io-size what each job moves over all its files; the per-target figures count each file's I/Os.",
        )
    },
    OptDef {
        requires: Some("file-service"),
        ..switch(
            "split-targets",
            Workload,
            "With --file-service: each job serves its own equal share of the targets, in order (fio's nrfiles: every copy its own files), instead of all of them.",
        )
    },
    value(
        "runtime",
        "DURATION",
        None,
        Workload,
        "Run for this long after the ramp (e.g. 30s, 2m), going over the span as often as needed; without it the run is size-based. With --io-size too, whichever ends first.",
    ),
    value(
        "io-size",
        "SIZE",
        None,
        Workload,
        "Bytes each job moves in a size-based run, or a multiple of the span (2x) [default: the span once].",
    ),
    value(
        "rate",
        "SIZE",
        None,
        Workload,
        "Cap each job's bandwidth at SIZE bytes per second, reads and writes together (e.g. 50m; fio's rate): submissions are paced on the run's clock.",
    ),
    value(
        "rate-iops",
        "N",
        None,
        Workload,
        "Cap each job at N I/Os per second, reads and writes together (fio's rate_iops): submissions are paced on the run's clock.",
    ),
    value(
        "rate-min",
        "SIZE",
        None,
        Workload,
        "Fail the run when a job moves fewer than SIZE bytes per second over a --rate-cycle, reads and writes together (fio's rate_min): every job stops, the repetitions measured so far are kept, exit status 1.",
    ),
    value(
        "rate-iops-min",
        "N",
        None,
        Workload,
        "Fail the run when a job does fewer than N I/Os per second over a --rate-cycle (fio's rate_iops_min): every job stops, the repetitions measured so far are kept, exit status 1.",
    ),
    value(
        "rate-cycle",
        "DURATION",
        None,
        Workload,
        "The cycle over which --rate-min and --rate-iops-min are measured, from the end of the ramp (fio's rate_cycle) [default: 1s].",
    ),
    value(
        "random-distribution",
        "DIST",
        None,
        Workload,
        "How random offsets spread over the span, as fio's random_distribution: random (uniform, the default), zipf:THETA, pareto:H (a share H on the hottest 1-H of the blocks) or normal:SIGMA (% of the span), their hot blocks scattered over the span, each with an optional :CENTER (0-1: the most likely block at that fraction of the span, e.g. zipf:1.2:0.3); or zones in order from the span's start, uniform within each: zoned:60/10:30/20:10/ (60% of the I/Os on the first 10% of the span, 30% on the next 20%, 10% on the rest) or zoned_abs:60/10g:40/90g (sizes, each given).",
    ),
    value(
        "random-run",
        "N",
        None,
        Workload,
        "Random patterns: a new random offset every N I/Os, the others following on (fio's rw=randread:N). Without --runtime or --io-size the run ends, as fio's, when a run would pass the end of the span.",
    ),
    OptDef {
        requires: Some("random-run"),
        choices: &["sequential", "identical"],
        ..value(
            "rw-sequencer",
            "HOW",
            Some("sequential"),
            Workload,
            "How the I/Os of a --random-run follow its random offset: sequential (each after the one before) or identical (the same offset again) (fio's rw_sequencer).",
        )
    },
    value(
        "hole",
        "SIZE",
        None,
        Workload,
        "Sequential patterns: leave SIZE bytes between one I/O and the next (fio's rw=read:SIZE). Without --runtime or --io-size the run ends, as fio's, at the end of the span (else it wraps).",
    ),
    value(
        "startdelay",
        "DURATION",
        None,
        Workload,
        "Every job waits this long after the start before its first I/O (fio's startdelay); with a range such as 1s-3s each job waits its own time drawn from it. Not measured: the ramp and the runtime begin after it (after the range's end). Before each repetition.",
    ),
    value(
        "thinktime",
        "DURATION",
        None,
        Workload,
        "Pause this long (e.g. 100us) after an I/O completes before the next is issued, as fio's thinktime; with --thinktime-blocks N, after every N I/Os have completed (at most N in flight).",
    ),
    OptDef {
        requires: Some("thinktime"),
        ..value(
            "thinktime-blocks",
            "N",
            None,
            Workload,
            "I/Os issued between --thinktime pauses [default: 1, or none with --thinktime-iotime].",
        )
    },
    OptDef {
        requires: Some("thinktime"),
        ..value(
            "thinktime-spin",
            "DURATION",
            None,
            Workload,
            "Spend this much of each --thinktime pause spinning on the CPU (as if working on the data), and sleep the rest (fio's thinktime_spin).",
        )
    },
    OptDef {
        requires: Some("thinktime"),
        choices: &["complete", "issue"],
        ..value(
            "thinktime-blocks-type",
            "WHEN",
            Some("complete"),
            Workload,
            "When the --thinktime-blocks batch starts a pause: once its I/Os have completed (complete: at most N in flight), or once they have been issued (issue: the pause runs while they complete) (fio's thinktime_blocks_type).",
        )
    },
    OptDef {
        requires: Some("thinktime"),
        ..value(
            "thinktime-iotime",
            "DURATION",
            None,
            Workload,
            "Pause for --thinktime after issuing I/Os for this long (e.g. 9s of I/O, 1s of pause), or after --thinktime-blocks I/Os when that is given too, whichever comes first (fio's thinktime_iotime).",
        )
    },
    OptDef {
        alias: &["ramp-time"],
        ..value(
            "ramp",
            "DURATION",
            Some("0"),
            Workload,
            "Run this long before measuring; the ramp is excluded from every figure.",
        )
    },
    switch(
        "time-based",
        Workload,
        "fio's time_based, with --runtime: the run lasts the whole runtime, going over the span as often as it takes, and an --io-size does nothing (a note says so). Without it --runtime alone is time based too; --time-based=0 (fio's default) stops after one pass over the span (or --io-size) or the runtime, whichever comes first.",
    ),
    OptDef {
        conflicts: Some("buffered"),
        ..switch(
            "direct",
            Workload,
            "Bypass the page cache with O_DIRECT (the default).",
        )
    },
    OptDef {
        conflicts: Some("direct"),
        ..switch(
            "buffered",
            Workload,
            "Go through the page cache instead of O_DIRECT.",
        )
    },
    OptDef {
        choices: &[
            "io_uring", "libaio", "psync", "mmap", "null", "sync", "pvsync",
        ],
        alias: &["ioengine"],
        ..value(
            "engine",
            "ENGINE",
            None,
            Workload,
            "I/O engine: io_uring, libaio (io_submit/io_getevents; asynchronous only with O_DIRECT), psync (pread/pwrite), mmap (copies to and from the mapped span; buffered only) or null (no I/O) [default: io_uring where the kernel allows it, else psync]; fio's sync and pvsync run as psync. See docs/engines.md.",
        )
    },
    OptDef {
        choices: &["none", "sync", "dsync", "0", "1"],
        alias: &["sync"],
        ..value(
            "sync-mode",
            "MODE",
            None,
            Workload,
            "Open the target with O_SYNC (sync: each write returns once stable, IOzone's -o) or O_DSYNC (dsync: its data stable) [default: none]; fio's sync=1 is sync.",
        )
    },
    OptDef {
        alias: &["iodepth-batch-submit", "iodepth-batch"],
        ..value(
            "batch-submit",
            "N",
            Some("1"),
            Workload,
            "io_uring, libaio: hand requests to the kernel N at a time (1: each as soon as it is ready).",
        )
    },
    OptDef {
        alias: &["iodepth-batch-complete-min", "iodepth-batch-complete"],
        ..value(
            "batch-complete",
            "N",
            Some("1"),
            Workload,
            "io_uring, libaio: wait for N completions at a time, when N are in flight (1: go on at the first).",
        )
    },
    OptDef {
        alias: &["sqthread-poll"],
        ..switch(
            "sqpoll",
            Workload,
            "io_uring: a kernel thread polls the submission ring, so submitting takes no system call (its CPU is not the workers').",
        )
    },
    OptDef {
        alias: &["sqthread-poll-cpu"],
        requires: Some("sqpoll"),
        ..value(
            "sqpoll-cpu",
            "CPU",
            None,
            Workload,
            "io_uring with --sqpoll: pin the polling kernel thread to this CPU.",
        )
    },
    value(
        "spin-wait",
        "DURATION",
        None,
        Workload,
        "io_uring, libaio: before a wait for one completion sleeps, watch the ring this long (1.5us, 800ns; at most 1ms), while such spins find one; 0: sleep at once, as fio does [default: 1.5us while the jobs leave a CPU free, else 0]. See docs/engines.md.",
    ),
    OptDef {
        choices: &["batch", "normal"],
        ..value(
            "sched-policy",
            "POLICY",
            None,
            Workload,
            "The job threads' scheduling policy: batch (SCHED_BATCH: a job woken by a completion does not preempt the kernel thread completing its other requests, which then finish together) or normal (as the process started, fio's) [default: normal; batch starves the jobs where other work keeps the CPUs busy]. See docs/engines.md.",
        )
    },
    switch(
        "hipri",
        Workload,
        "io_uring: poll the device for completions (IOPOLL) instead of waiting for interrupts; direct I/O on a device with poll queues only (/sys/block/DEV/queue/io_poll).",
    ),
    value(
        "cpus",
        "LIST",
        None,
        Workload,
        "Pin job j to the j-th CPU of a list such as 0,1 or 0-3 (the jobs of every target counted in turn; cycling when there are more jobs than CPUs; fio's cpus_allowed with cpus_allowed_policy=split), or every job to all of them with --cpus-policy shared [default: no pinning].",
    ),
    OptDef {
        requires: Some("cpus"),
        choices: &["split", "shared"],
        alias: &["cpus-allowed-policy"],
        ..value(
            "cpus-policy",
            "POLICY",
            Some("split"),
            Workload,
            "How jobs share the --cpus list: split (job j on the j-th CPU) or shared (every job on any of them; fio's default cpus_allowed_policy).",
        )
    },
    value(
        "fsync",
        "N",
        Some("0"),
        Workload,
        "fsync after every N writes of each job, before its next I/O (0: never). With --file-service, of the file the service gives that turn, as fio does.",
    ),
    switch(
        "end-fsync",
        Workload,
        "Flush at the end of each job, inside the timed window (as IOzone's -e).",
    ),
    OptDef {
        alias: &["randseed"],
        ..value(
            "seed",
            "N",
            Some("1063500"),
            Workload,
            "Seed of every random choice; the same seed gives the same offsets and data.",
        )
    },
    value(
        "name",
        "NAME",
        None,
        Workload,
        "The run's name in tables and reports [default: pattern, block size and depth, e.g. randread 4k qd32].",
    ),
    value(
        "repeat",
        "N",
        Some("1"),
        Workload,
        "Run the workload N times; the summary gives mean, stddev, min and max.",
    ),
    value(
        "interval",
        "DURATION",
        Some("1s"),
        Workload,
        "Length of one interval of the time series.",
    ),
    value(
        "pause",
        "DURATION",
        None,
        Workload,
        "Rest between repetitions (and between the runs of a study), e.g. 5s.",
    ),
    switch(
        "drop-caches",
        Workload,
        "Drop the kernel's page cache before each buffered repetition (needs root).",
    ),
    OptDef {
        choices: &["none", "auto", "random", "sequential"],
        ..value(
            "fadvise",
            "HINT",
            Some("none"),
            Workload,
            "Advise the kernel how each file is read (posix_fadvise, buffered I/O): random (no readahead), sequential (more readahead), auto (random for a random --rw, sequential otherwise: fio's default fadvise_hint=1) or none (the kernel's own readahead). With --engine mmap, the madvise of its mapping, auto by default there.",
        )
    },
    OptDef {
        choices: &["rep", "pass", "off"],
        ..value(
            "invalidate",
            "WHEN",
            Some("rep"),
            Workload,
            "When the target's cached pages are dropped: rep (before each repetition), pass (also each time a job of a buffered run has gone over the span, as fio's invalidate=1) or off (never: fio's invalidate=0).",
        )
    },
    switch(
        "random-map",
        Workload,
        "Uniform random offsets as fio's random map (fio's default): each job touches every block of the span once per pass, in an order drawn afresh each pass, instead of drawing each offset independently (fio's norandommap). One block size only.",
    ),
];

#[cfg(test)]
#[path = "options_tests.rs"]
mod tests;

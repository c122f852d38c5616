//! Starting a worker: the closed set of engines and the one factory that builds the
//! worker's engine, waits at the gate and runs the loop, monomorphised per engine so the
//! engine calls inline. Also the message a failed I/O becomes.

use std::sync::atomic::Ordering;

use crate::error::{Error, describe_io};
use crate::io::clock::Clock;
use crate::io::engine::{
    BufferPool, LibaioEngine, MmapEngine, NullEngine, Op, PsyncEngine, UringEngine,
};
use crate::io::sys;
use crate::plan::engine::EngineOpts;
use std::os::fd::BorrowedFd;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;

use crate::io::env::{BlockDev, BlockStat};

use crate::measure::gate::Gate;
use crate::measure::interval::{LaneTx, Live};
use crate::measure::worker::{Worker, WorkerOut};
use crate::plan::data::DataSpec;
use crate::plan::spec::EngineKind;
use crate::plan::spec::Spec;
use crate::stop::StopFlag;
use crate::workload::data::DataGen;
use crate::workload::seed::{data_stream, job_stream};

/// A failed I/O, as a message that says where and what to try.
pub(crate) fn io_error(path: &str, op: Op, offset: u64, errno: i32) -> Error {
    let what = match op {
        Op::Read => "reading",
        Op::Write => "writing",
        Op::Fsync => "syncing",
    };
    let e = std::io::Error::from_raw_os_error(errno);
    let hint = match errno {
        sys::ENOSPC => "; free space or use a smaller --size",
        sys::EINVAL => {
            "; the target may not accept this block size or alignment (try --buffered or another --bs)"
        }
        sys::EIO => "; the device reported a hardware or media error",
        _ => "",
    };
    let at = if op == Op::Fsync {
        String::new()
    } else {
        format!(" at offset {offset}")
    };
    Error::runtime(format!(
        "{what} {path}{at} failed: {}{hint}",
        describe_io(&e)
    ))
}

/// The engines, closed: one factory ([`run_worker`]), one monomorphised loop per engine.
#[allow(clippy::large_enum_variant)] // one per worker, built once
enum AnyEngine<'fd> {
    Null(NullEngine),
    Psync(PsyncEngine<'fd>),
    Uring(UringEngine<'fd>),
    Libaio(LibaioEngine<'fd>),
    Mmap(MmapEngine),
}

/// The data generator of the worker of `ctx`: built before the starting gate, because
/// building its pool takes time that must not count.
pub(crate) fn worker_data(ctx: &WorkerCtx) -> DataGen {
    // A job that never writes data generates none: no pool for it.
    let refill = DataSpec {
        refill: true,
        ..ctx.spec.data.clone()
    };
    let mut data = DataGen::new(
        if ctx.spec.writes() {
            &ctx.spec.data
        } else {
            &refill
        },
        ctx.spec.seed,
        data_stream(job_stream(ctx.stream, ctx.job)),
        ctx.corpus.cloned(),
    );
    if ctx.spec.writes() {
        data.lend_constant(ctx.spec.buf_bs() as usize);
    }
    if crate::measure::worker::measures_data(ctx.spec) {
        data.prepare_pool_hashes();
    }
    data
}

/// Asks for the memory the data pool's writes are sent from to be backed by huge pages.
/// Each write stamps one line in every unit it sends: on 4 KiB pages that is a TLB miss
/// per unit; and a large write from 4 KiB pages is a segment per page.
fn back_pool(data: &DataGen) {
    if let Some((ptr, len)) = data.pool_backing() {
        sys::back_with_huge_pages(ptr, len);
    }
}

/// Builds the worker's engine, waits at the gate, runs the loop.
pub(crate) fn run_worker(ctx: &WorkerCtx) -> WorkerOut {
    let spec = ctx.spec;
    // Set up, then wait at the gate whatever happened, so the main thread never waits
    // for a worker that gave up.
    // The data first: the engine may send writes from its pool, so the pool must outlive
    // the engine (locals are dropped in reverse order; the Worker drops its engine first).
    let data = worker_data(ctx);
    back_pool(&data);
    // The spin before a wait, resolved for the job threads running beside this one.
    let spin = (spec.engine_opts).spin_used(spec.engine, ctx.workers as usize);
    let engine = pin(ctx).and_then(|()| policy(ctx)).and_then(|()| {
        let slots = crate::measure::worker::slots(spec);
        BufferPool::new(slots, spec.buf_bs() as usize, ctx.align as usize)
            .map_err(|e| Error::io("allocating I/O buffers", &e))
            .and_then(|pool| build_engine(ctx, pool, data.pool_region(), spin))
    });
    if engine.is_err() {
        ctx.halt.store(true, Ordering::Relaxed);
    }
    // The workers' clock measures its rate once per process: before time zero.
    Clock::prepare();
    if ctx.spec.thinktime_us.is_some()
        || ctx.spec.rate_bps.is_some()
        || ctx.spec.rate_iops.is_some()
    {
        // A paced job's pauses are its figures: with the default timer slack a 500 µs
        // think-time pause lasted 610 µs on a 2-CPU VM, fio's 518, with 1 ns 558.
        sys::precise_sleeps();
    }
    let Some(t0) = ctx.gate.arrive_and_wait() else {
        return WorkerOut::empty(engine.err());
    };
    let out = match engine {
        Ok(AnyEngine::Null(e)) => Worker::new(e, ctx, data, t0).run(),
        Ok(AnyEngine::Psync(e)) => Worker::new(e, ctx, data, t0).run(),
        Ok(AnyEngine::Uring(e)) => Worker::new(e, ctx, data, t0).run(),
        Ok(AnyEngine::Libaio(e)) => Worker::new(e, ctx, data, t0).run(),
        Ok(AnyEngine::Mmap(e)) => Worker::new(e, ctx, data, t0).run(),
        Err(e) => WorkerOut::empty(Some(e)),
    };
    let out = WorkerOut {
        spin_ns: spin,
        ..out
    };
    ctx.live.done.store(true, Ordering::Relaxed);
    out
}

/// Gives the worker's thread the run's scheduling policy (`--sched-policy`), before it
/// makes its engine (io_uring's io-wq workers take the policy of the thread that makes
/// them).
fn policy(ctx: &WorkerCtx) -> Result<(), Error> {
    match ctx.spec.engine_opts.sched_policy {
        crate::plan::engine::SchedPolicy::Normal => Ok(()),
        crate::plan::engine::SchedPolicy::Batch => sys::batch_thread()
            .map_err(|e| Error::io("making the job thread SCHED_BATCH (--sched-policy)", &e)),
    }
}

/// Pins the worker's thread to its CPU of `--cpus` (the run's job j, every target's jobs
/// counted: the j-th, cycling), or with `--cpus-policy shared` to all of them.
fn pin(ctx: &WorkerCtx) -> Result<(), Error> {
    let set = ctx.spec.engine_opts.job_cpus(ctx.slot);
    if set.is_empty() {
        return Ok(());
    }
    sys::pin_thread(set).map_err(|e| {
        Error::usage(format!(
            "--cpus: job {} cannot run on CPU {} ({}); use CPUs this process may use (see taskset -p $$ and nproc)",
            ctx.slot,
            crate::plan::engine::fmt_cpus(set),
            describe_io(&e)
        ))
    })
}

/// Refuses a `--cpus` list or a `--sqpoll-cpu` naming a CPU this process may not run on,
/// before anything runs. (The kernel refuses such an SQPOLL CPU with EINVAL from
/// `io_uring_setup`, which said only "setup failed" and exited 1 for the user's typo.)
pub(crate) fn check_cpus(spec: &Spec) -> Result<(), Error> {
    let Some(allowed) = sys::allowed_cpus() else {
        return Ok(()); // the thread's own pinning reports it then
    };
    let opts = &spec.engine_opts;
    let named = opts.cpus.iter().map(|&c| ("--cpus", c));
    let sq = opts
        .sqpoll_cpu
        .filter(|_| opts.sqpoll)
        .map(|c| ("--sqpoll-cpu", c));
    match named.chain(sq).find(|(_, c)| !allowed.contains(c)) {
        Some((opt, cpu)) => Err(Error::usage(format!(
            "{opt} names CPU {cpu} and this process may run on {} (the online CPUs of its cpuset); use those",
            crate::plan::engine::fmt_cpus(&allowed)
        ))),
        None => Ok(()),
    }
}

/// Refuses libaio runs whose AIO contexts the system would not grant: each libaio job
/// asks `io_setup` for its queue's events, and the kernel refuses (EAGAIN) once all the
/// processes' events would pass `fs.aio-max-nr`. `specs` are the runs started together.
pub(crate) fn check_aio(specs: &[&Spec]) -> Result<(), Error> {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/fs/{f}"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    match (read("aio-max-nr"), read("aio-nr")) {
        (Some(max), Some(used)) => aio_fits(specs, max, used),
        _ => Ok(()), // the setup's own error says it then
    }
}

/// The events the libaio jobs of `specs` ask for, against `max` of which `used` are taken.
/// Runs measured together are named by the one asking most (`NAME: …`), so a job file's
/// refusal can name that job's lines (`fio_job::in_job_terms`).
fn aio_fits(specs: &[&Spec], max: u64, used: u64) -> Result<(), Error> {
    let libaio: Vec<&&Spec> = (specs.iter())
        .filter(|s| s.engine == EngineKind::Libaio)
        .collect();
    let jobs = |s: &Spec| match s.serves_files() {
        true => u64::from(s.jobs),
        false => u64::from(s.jobs) * u64::from(s.target_count()),
    };
    // Each job's context holds its queue (one slot more when it prepares ahead).
    let events = |s: &Spec| jobs(s) * crate::measure::worker::slots(s).max(1) as u64;
    let need: u64 = libaio.iter().map(|s| events(s)).sum();
    let free = max.saturating_sub(used);
    let Some(s) = (libaio.iter().rev())
        .max_by_key(|s| events(s))
        .filter(|_| need > free)
    else {
        return Ok(());
    };
    let own = events(s);
    let asked = format!(
        "--jobs {} x --qd {} with --engine libaio needs {own} AIO events",
        jobs(s),
        s.qd
    );
    let asked = match (libaio.len() - 1, specs.len()) {
        (_, 1) => asked,
        (0, _) => format!("{}: {asked}", s.name()),
        (1, _) => format!(
            "{}: {asked}, {need} with the other libaio run measured with it,",
            s.name()
        ),
        (n, _) => format!(
            "{}: {asked}, {need} with the {n} other libaio runs measured with it,",
            s.name()
        ),
    };
    Err(Error::usage(format!(
        "{asked} and the system grants {free} more (fs.aio-max-nr {max}, {used} in use): lower --jobs or --qd, raise the limit (sysctl -w fs.aio-max-nr={}), or use --engine io_uring",
        (used + need).next_power_of_two()
    )))
}

/// What to do when an engine's setup failed with `errno` (`iomark fio` says it in the job
/// file's words: `fio_job::in_job_terms`).
fn setup_advice(engine: EngineKind, qd: u32, errno: Option<i32>) -> &'static str {
    // psync keeps one I/O in flight: advice only for a run that asks no more.
    match (engine, errno) {
        (EngineKind::Libaio, Some(sys::EAGAIN)) => {
            "; the jobs' AIO events (--jobs x --qd) pass fs.aio-max-nr: lower --jobs or --qd, raise the sysctl, or use --engine io_uring"
        }
        _ if qd <= 1 => "; try --engine psync",
        (EngineKind::Libaio, _) => "; try --engine io_uring",
        _ => "; try --engine libaio",
    }
}

/// The one engine factory. `data_pool` is the data generator's unit pool (start, length),
/// which writes may be sent from; it outlives the engine. `spin` is the spin before a
/// wait as resolved for this worker (`EngineOpts::spin_used`).
fn build_engine<'fd>(
    ctx: &WorkerCtx<'fd>,
    pool: BufferPool,
    data_pool: Option<(*const u8, usize)>,
    spin: Option<u32>,
) -> Result<AnyEngine<'fd>, Error> {
    let spec = ctx.spec;
    let qd = spec.qd as usize;
    // The spin as resolved (`EngineOpts::spin_used`; none where the waits do not spin).
    let opts = &EngineOpts {
        spin_wait_ns: Some(spin.unwrap_or(0)),
        ..spec.engine_opts.clone()
    };
    let setup = |what: &str, e: std::io::Error| {
        let fix = setup_advice(spec.engine, spec.qd, e.raw_os_error());
        Error::runtime(format!("{what} setup failed: {}{fix}", describe_io(&e)))
    };
    let Some(fd) = ctx.fd else {
        return match spec.engine {
            EngineKind::Null => Ok(AnyEngine::Null(NullEngine::new(pool, qd))),
            _ => Err(Error::runtime("no file descriptor for a real engine")),
        };
    };
    // A worker serving several files addresses each request's own (`Request::file`).
    let fds: Vec<BorrowedFd> = ctx.files.iter().filter_map(|f| f.fd).collect();
    let several = fds.len() > 1;
    Ok(match spec.engine {
        EngineKind::Null => AnyEngine::Null(NullEngine::new(pool, qd)),
        EngineKind::Psync => AnyEngine::Psync(PsyncEngine::new(fd, pool, qd).with_files(&fds)),
        EngineKind::IoUring => AnyEngine::Uring({
            let e = UringEngine::new(fd, pool, qd, opts, data_pool);
            let e = e.and_then(|e| if several { e.with_files(&fds) } else { Ok(e) });
            e.map_err(|e| setup("io_uring", e))?
        }),
        EngineKind::Libaio => AnyEngine::Libaio(
            LibaioEngine::new(fd, pool, qd, opts)
                .map_err(|e| setup("libaio (io_setup)", e))?
                .with_files(&fds),
        ),
        EngineKind::Mmap => AnyEngine::Mmap(mmap_engine(ctx, fd, pool)?),
    })
}

/// The mmap engine: a mapping of each file's span.
fn mmap_engine(ctx: &WorkerCtx, fd: BorrowedFd, pool: BufferPool) -> Result<MmapEngine, Error> {
    let spec = ctx.spec;
    let failed = |path: &str, e: std::io::Error| {
        Error::runtime(format!("mapping {path} failed: {}", describe_io(&e)))
    };
    let (writes, random) = (spec.writes(), spec.cache.advice(spec.rw.is_random()));
    let mut e = MmapEngine::new(fd, pool, ctx.base, ctx.span, writes, random)
        .map_err(|e| failed(ctx.path, e))?;
    for f in ctx.files.iter().skip(1) {
        if let Some(fd) = f.fd {
            e.add_file(fd, f.base, f.span)
                .map_err(|e| failed(f.path, e))?;
        }
    }
    Ok(e)
}

/// Everything a worker needs, borrowed from the repetition.
pub(crate) struct WorkerCtx<'a> {
    pub(crate) spec: &'a Spec,
    pub(crate) job: u32,
    /// Its index among the run's workers, every target's counted: the CPU of a split
    /// `--cpus` list it takes (as fio's split counts every job, not a section's).
    pub(crate) slot: u32,
    /// The job threads this process runs at once, every lane's (the default spin before
    /// a wait is off where they take every CPU: `EngineOpts::spin_ns`).
    pub(crate) workers: u32,
    pub(crate) rep: u32,
    /// Distinguishes the data and offset streams of this run and repetition.
    pub(crate) stream: u64,
    pub(crate) base: u64,
    pub(crate) span: u64,
    pub(crate) fd: Option<BorrowedFd<'a>>,
    pub(crate) align: u64,
    pub(crate) ramp_ns: u64,
    /// End of the measured window (ramp included), when time-based.
    pub(crate) end_ns: Option<u64>,
    /// I/Os to issue after the ramp, when size-based.
    pub(crate) ios_per_job: Option<u64>,
    /// Bytes to move after the ramp, when size-based with a block-size mix (its end
    /// then, rather than `ios_per_job`).
    pub(crate) bytes_per_job: Option<u64>,
    pub(crate) interval_ns: u64,
    pub(crate) stop: &'a StopFlag,
    /// Raised by a worker that failed, so the others stop too.
    pub(crate) halt: &'a AtomicBool,
    /// The lane's device counters at the ramp's end (its first job reads them).
    pub(crate) counters: &'a RampCounters<'a>,
    pub(crate) live: &'a Live,
    pub(crate) gate: &'a Gate,
    pub(crate) tx: LaneTx,
    pub(crate) path: &'a str,
    pub(crate) corpus: Option<&'a Arc<Vec<u8>>>,
    /// `--file-service`: every file this worker serves (`fd`, `base`, `span` and `path`
    /// above are the first one's); empty for a worker on one file.
    pub(crate) files: &'a [WorkFile<'a>],
}

/// A lane's device counters at the ramp's end, read by its first job as it crosses it:
/// the main thread woke up to milliseconds late, and the I/Os the workers counted in the
/// meantime were iomark's and not the device's. Once read, the lane's I/Os of the ramp
/// that complete are the device's and not iomark's (`Tally::unmeasured_read`).
pub(crate) struct RampCounters<'a> {
    device: Option<&'a BlockDev>,
    /// Without a ramp the main thread reads the counters before the first I/O.
    from_start: bool,
    before: OnceLock<Option<BlockStat>>,
}

impl<'a> RampCounters<'a> {
    pub(crate) fn new(device: Option<&'a BlockDev>, ramp_ns: u64) -> RampCounters<'a> {
        RampCounters {
            device,
            from_start: ramp_ns == 0,
            before: OnceLock::new(),
        }
    }

    /// Reads the counters now (the lane's first job, after a reap: what it took
    /// completed before the reading).
    pub(crate) fn read(&self) {
        let _ = self.before.set(self.device.and_then(BlockDev::stat));
    }

    /// Whether the counters' "before" has been read.
    pub(crate) fn is_open(&self) -> bool {
        self.from_start || self.before.get().is_some()
    }

    /// The reading at the ramp's end, if the first job took one.
    pub(crate) fn before(&self) -> Option<BlockStat> {
        self.before.get().copied().flatten()
    }
}

/// One of the files a worker serves with `--file-service`.
#[derive(Clone, Copy)]
pub(crate) struct WorkFile<'a> {
    pub(crate) fd: Option<BorrowedFd<'a>>,
    pub(crate) base: u64,
    pub(crate) span: u64,
    pub(crate) path: &'a str,
    /// Its index among the run's targets (whose figures its I/Os count in).
    pub(crate) target: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The huge pages (kB) of the mapping holding `at`, from `/proc/self/smaps`.
    /// Whether transparent huge pages may be used; a skip says why not (a failure
    /// under `IOMARK_REQUIRE_ALL=1`).
    fn thp_on() -> bool {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if thp.as_deref().is_ok_and(|t| !t.contains("[never]")) {
            return true;
        }
        assert!(
            std::env::var("IOMARK_REQUIRE_ALL").as_deref() != Ok("1"),
            "transparent huge pages off and IOMARK_REQUIRE_ALL=1"
        );
        eprintln!("skipped: transparent huge pages are off ({thp:?})");
        false
    }

    fn huge_kb_at(at: usize) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line
                .split_whitespace()
                .next()
                .and_then(|r| r.split_once('-'));
            if let Some((a, b)) = range
                && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
            {
                inside = (a..b).contains(&at);
            } else if inside && let Some(kb) = line.strip_prefix("AnonHugePages:") {
                return kb.trim().trim_end_matches("kB").trim().parse().ok();
            }
        }
        None
    }

    #[test]
    fn a_one_mib_data_pool_lies_in_a_huge_page() {
        // `--data-pool 1m` lay in 4 KiB pages (only whole 2 MiB pages inside the pool
        // were advised): its 128 KiB writes were 32 segments each, and a virtio disk
        // took them at half the rate of the default pool's.
        if !thp_on() {
            return;
        }
        for (pool, want) in [(1u64 << 20, 2048), (16 << 20, 16384)] {
            let spec = DataSpec {
                pool,
                ..DataSpec::default()
            };
            let data = DataGen::new(&spec, 7, 0, None);
            back_pool(&data);
            let (ptr, len) = data.pool_region().expect("a pool");
            assert_eq!(len as u64, pool);
            let huge = huge_kb_at(ptr as usize).expect("the pool's mapping");
            assert!(huge >= want, "a {pool}-byte pool: {huge} kB in huge pages");
        }
    }

    /// A sampler table given the advice a worker gives (`Sampler::with_huge_pages`) lies
    /// in huge pages once large (a dedup stream's tables were in 4 KiB pages, and the
    /// page walks of their random visits were half their cost).
    #[test]
    fn a_large_sampler_table_lies_in_huge_pages() {
        if !thp_on() {
            return;
        }
        use crate::workload::huge::TableMem;
        let advised = TableMem::<u64>::zeroed(512 << 10, Some(sys::back_with_huge_pages));
        let huge = huge_kb_at(advised.as_ptr() as usize).expect("the table's mapping");
        assert!(huge >= 4096, "a 4 MiB table: {huge} kB in huge pages");
    }

    #[test]
    fn libaio_jobs_past_the_aio_limit_are_refused_naming_the_sysctl() {
        let mut s = Spec::new("f");
        (s.engine, s.jobs, s.qd) = (EngineKind::Libaio, 20, 4096);
        let need = 20 * crate::measure::worker::slots(&s) as u64;
        let err = aio_fits(&[&s], 65536, 0).unwrap_err();
        assert!(matches!(err, Error::Usage(_)), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!(
                "--jobs 20 x --qd 4096 with --engine libaio needs {need} AIO events and the system grants 65536 more (fs.aio-max-nr 65536, 0 in use)"
            )) && msg.contains("sysctl -w fs.aio-max-nr=131072")
                && msg.ends_with("or use --engine io_uring"),
            "{msg}"
        );
        // Events others hold count against the limit.
        assert!(aio_fits(&[&s], 65536 + need, 65536).is_ok());
        assert!(aio_fits(&[&s], 65536 + need, 65537).is_err());
        // Runs started together add up; other engines ask for none.
        // Runs measured together: the one asking most names them.
        s.jobs = 10;
        let mut big = s.clone();
        (big.jobs, big.label) = (12, Some("big".into()));
        let own = 12 * crate::measure::worker::slots(&s) as u64;
        let err = aio_fits(&[&s, &big], 65536, 0).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("big: --jobs 12 x --qd 4096 with --engine libaio needs {own} AIO events, {} with the other libaio run measured with it, and the system grants", own + need / 2)),
            "{err}"
        );
        s.engine = EngineKind::IoUring;
        assert!(aio_fits(&[&s], 0, 0).is_ok());
    }

    /// A libaio setup refused with EAGAIN (the limit reached between the check and the
    /// setup) said `(--jobs x --qd)` in a job file's run too: there it names the file's
    /// keys, as `docs/fio.md` promises of a run's advice.
    #[test]
    fn setup_advice_in_a_job_files_run_names_the_files_keys() {
        let fix = setup_advice(EngineKind::Libaio, 64, Some(sys::EAGAIN));
        let e = Error::runtime(format!("libaio setup failed: EAGAIN{fix}"));
        let job = crate::plan::fio_job::map::MappedJob {
            name: "a".into(),
            at: "t.fio:1".into(),
            target: Some("a.0.0".into()),
            targets: Vec::new(),
            opts: vec![("qd".into(), Some("64".into()))],
            notes: Vec::new(),
            unsupported: Vec::new(),
            copy_files: Vec::new(),
            group_reporting: false,
            stonewall: false,
            new_group: false,
            wait_for: None,
            sources: vec![("qd".into(), "iodepth=64".into(), "t.fio:3".into())],
        };
        let said = crate::plan::fio_job::in_job_terms(&[job], 0..1, e);
        assert!(matches!(said, Error::Runtime(_)), "{said:?}");
        assert_eq!(
            said.to_string(),
            "libaio setup failed: EAGAIN; the jobs' AIO events (numjobs x iodepth) pass fs.aio-max-nr: lower numjobs or iodepth, raise the sysctl, or use ioengine=io_uring"
        );
        let psync = setup_advice(EngineKind::IoUring, 1, None);
        let e = crate::plan::fio_job::in_job_terms(&[], 0..0, Error::runtime(psync));
        assert_eq!(e.to_string(), "; try --engine psync", "no job: as it is");
    }
}

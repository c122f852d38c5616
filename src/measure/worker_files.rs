//! The files a worker serves: the offsets of a job over one file (every worker's), and
//! for a worker serving several (`--file-service`, fio's `file_service_type`) which file
//! each I/O goes to, each file keeping its own offsets (a sequential pattern goes on in
//! a file where it left it), each file's share of the figures (its target's own figures
//! are made of them), the fsyncs (one file's, on a free slot) and the final flush of every
//! file.

use super::{EndSync, Slot, Worker};
use crate::io::engine::Request;
use crate::io::engine::{Engine, Op};
use crate::measure::launch::WorkerCtx;
use crate::measure::worker_out::FileOut;
use crate::plan::files::{FileService, SLOTS_PER_FILE, Service};
use crate::results::stats::LatHist;
use crate::workload::dist::Skew;
use crate::workload::rng::{Offsets, Rng};
use crate::workload::seed::target_stream;

/// The offsets of the worker of `ctx` over `span` bytes of a file from `base` (`stream`:
/// the file's own), and the region they cover (its first byte and blocks) for --verify.
pub(super) fn offsets_of(
    ctx: &WorkerCtx,
    base: u64,
    span: u64,
    stream: u64,
) -> (Offsets, u64, u64) {
    let spec = ctx.spec;
    // Random offsets are whole grains: the block size, or a mix's smallest size.
    let grain = spec.grain();
    let blocks = (span / grain).max(1);
    let share = |j: u32| (blocks as u128 * j as u128 / spec.jobs as u128) as u64;
    // Jobs share the span (each starting at its own offset), except with --verify,
    // where each job owns a region so that no two writes to one block can race. A job
    // with files of its own (--split-targets) starts at their beginning, as fio's do,
    // and owns them whole.
    let own = spec.file_service.is_some_and(|f| f.split);
    let (region_base, region_blocks, start_block) = if spec.verify && spec.jobs > 1 && !own {
        let (a, b) = (share(ctx.job), share(ctx.job + 1));
        (base + a * grain, (b - a).max(1), 0)
    } else {
        (base, blocks, if own { 0 } else { share(ctx.job) })
    };
    let offsets = Offsets::new(
        region_base,
        region_blocks * grain,
        grain,
        spec.rw.is_random(),
        start_block,
        Rng::new(spec.seed, stream | 1),
    )
    .with_distribution(&spec.random_distribution, spec.seed)
    .with_runs_of(spec)
    .ending_at_span(one_pass(ctx));
    (offsets, region_base, region_blocks)
}

/// Whether the job makes one pass over its span, as fio's size-based job without an
/// `io_size`: not time-based, no volume given. (With an `io_size`, even one smaller than
/// the span, fio moves all of it, wrapping: 8192 writes of `rw=randwrite:8 io_size=32m`
/// on 64 MiB.)
fn one_pass(ctx: &WorkerCtx) -> bool {
    let spec = ctx.spec;
    ctx.ios_per_job.is_some() && spec.io_size.is_none() && spec.io_spans.is_none()
}

/// Which file comes next, by the service's rule (apart from the files, to be tested
/// alone).
pub(super) struct Order {
    kind: Service,
    every: u64,
    n: usize,
    cur: usize,
    /// I/Os and bytes issued to the current file since the job came to it.
    ios_here: u64,
    bytes_here: u64,
    started: bool,
    rng: Rng,
    /// The skewed kinds: the distribution over the files' slots.
    skew: Option<Skew>,
}

impl Order {
    pub(super) fn new(kind: Service, every: u32, n: usize, rng: Rng) -> Order {
        Order {
            kind,
            every: every.max(1) as u64,
            n: n.max(1),
            cur: 0,
            ios_here: 0,
            bytes_here: 0,
            started: false,
            rng,
            skew: None,
        }
    }

    /// A skewed service (zipf, pareto, normal) draws every I/O's file from its
    /// distribution over `n × SLOTS_PER_FILE` ranks, unscattered: a rank's file is
    /// rank / SLOTS_PER_FILE (the first files the hottest; normal's the middle ones).
    pub(super) fn with_skew(mut self, fs: &FileService, seed: u64) -> Order {
        self.skew = (fs.distribution())
            .and_then(|d| Skew::new(&d, self.n as u64 * SLOTS_PER_FILE, 1, seed));
        self
    }

    /// The file of the next I/O of `len` bytes; `spans[f]` is file f's span in bytes
    /// (sequential moves on once the current file's span has been issued).
    #[inline]
    pub(super) fn next(&mut self, len: u64, spans: &[u64]) -> usize {
        let switch = match self.kind {
            Service::Sequential => self.bytes_here >= spans[self.cur],
            _ => self.ios_here >= self.every,
        };
        if let Some(s) = &self.skew {
            self.cur = (s.rank(&mut self.rng) / SLOTS_PER_FILE) as usize;
            return self.cur;
        }
        if !self.started || switch {
            self.cur = match (self.kind, self.started) {
                (Service::Random, _) => self.rng.below(self.n as u64) as usize,
                (_, false) => 0,
                _ => (self.cur + 1) % self.n,
            };
            self.started = true;
            self.ios_here = 0;
            self.bytes_here = 0;
        }
        self.ios_here += 1;
        self.bytes_here += len;
        self.cur
    }
}

/// A worker's several files.
pub(super) struct Files {
    /// Each file's offsets while another is current (the current file's are the
    /// worker's own `offsets`; its entry here is a stale copy until it is swapped back).
    parked: Vec<Offsets>,
    /// Each file's span in bytes (the region its offsets cover).
    spans: Vec<u64>,
    cur: usize,
    order: Order,
    /// Each file's share of the worker's figures.
    tally: Vec<FileOut>,
    /// The final flush: the next file to flush.
    flush_next: usize,
    /// Each file's region for --verify: its first byte and blocks.
    pub(super) regions: Vec<(u64, u64)>,
}

impl Files {
    /// The files of the worker of `ctx` and the first one's offsets, when it serves
    /// several; `None` for a worker on one file.
    pub(super) fn of(ctx: &WorkerCtx, stream: u64) -> Option<(Files, Offsets)> {
        let fs = ctx.spec.file_service?;
        // One file of several targets (--split-targets, a job per target) is tallied
        // too: its figures are its target's.
        if ctx.files.is_empty() {
            return None;
        }
        let all: Vec<(Offsets, u64, u64)> = (ctx.files.iter())
            .map(|f| offsets_of(ctx, f.base, f.span, target_stream(stream, f.target as u32)))
            .collect();
        let grain = ctx.spec.grain();
        let first = all[0].0.clone();
        let order_rng = Rng::new(ctx.spec.seed, stream | 3);
        Some((
            Files {
                spans: all.iter().map(|(_, _, blocks)| blocks * grain).collect(),
                regions: all
                    .iter()
                    .map(|(_, base, blocks)| (*base, *blocks))
                    .collect(),
                parked: all.into_iter().map(|(o, _, _)| o).collect(),
                cur: 0,
                order: Order::new(fs.kind, fs.every, ctx.files.len(), order_rng)
                    .with_skew(&fs, ctx.spec.seed),
                tally: ctx.files.iter().map(|f| FileOut::new(f.target)).collect(),
                flush_next: 0,
            },
            first,
        ))
    }

    /// Counts a completed, measured I/O (or flush) of slot `sl` for its file.
    #[inline]
    pub(super) fn tally(&mut self, sl: &Slot, lat: u64) {
        let t = &mut self.tally[sl.file as usize];
        let (c, h) = match sl.op {
            Op::Read => (&mut t.read, &mut t.hist_read),
            Op::Write => (&mut t.write, &mut t.hist_write),
            Op::Fsync => {
                t.fsyncs += 1;
                return;
            }
        };
        c.ios += 1;
        c.bytes += sl.len as u64;
        h.get_or_insert_with(LatHist::precise).record(lat);
    }

    /// Counts a measured trim of `len` bytes in file `file`.
    pub(super) fn tally_trim(&mut self, file: u16, len: u32, lat: u64) {
        let t = &mut self.tally[file as usize];
        t.trim.ios += 1;
        t.trim.bytes += len as u64;
        (t.hist_trim.get_or_insert_with(LatHist::precise)).record(lat);
    }

    /// Each file's share, for the worker's output.
    pub(super) fn take_tally(&mut self) -> Vec<FileOut> {
        std::mem::take(&mut self.tally)
    }
}

impl<'a, E: Engine> Worker<'_, 'a, E> {
    /// The file of the next I/O of `len` bytes (0 for a worker on one file): switches to
    /// it, making its offsets the worker's.
    #[inline(always)]
    pub(super) fn pick_file(&mut self, len: u64) -> u16 {
        let Some(f) = self.files.as_mut() else {
            return 0;
        };
        let next = f.order.next(len, &f.spans);
        if next != f.cur {
            std::mem::swap(&mut self.offsets, &mut f.parked[f.cur]);
            std::mem::swap(&mut self.offsets, &mut f.parked[next]);
            f.cur = next;
        }
        next as u16
    }

    /// The file the last I/O went to (0 for a worker on one file).
    #[inline(always)]
    pub(super) fn current_file(&self) -> u16 {
        self.files.as_ref().map_or(0, |f| f.cur as u16)
    }

    /// The path of the worker's file `file`, for messages.
    pub(super) fn path_of(&self, file: u16) -> &'a str {
        match self.ctx.files.get(file as usize) {
            Some(f) => f.path,
            None => self.ctx.path,
        }
    }

    /// Issues an fsync of the worker's file `file` on a free slot.
    pub(super) fn issue_fsync(&mut self, file: u16) {
        let slot = self
            .free
            .pop()
            .expect("a free slot when nothing is in flight");
        self.slots[slot as usize] = Slot {
            op: Op::Fsync,
            file,
            ..Slot::IDLE
        };
        self.issue(Request {
            slot,
            op: Op::Fsync,
            offset: 0,
            len: 0,
            buf_off: 0,
            ext: None,
            file,
        });
    }

    /// Nothing is in flight: issues the final flush if one is due; false when the worker
    /// is done. A run that writes nothing makes none (its note says `--end-fsync` does
    /// nothing there, as in fio; a read run's flush was one write and one flush at the
    /// device).
    pub(super) fn start_end_sync(&mut self) -> bool {
        if self.ctx.spec.end_fsync
            && self.ctx.spec.writes()
            && self.end_sync == EndSync::NotYet
            && !self.interrupted
            && self.ctx.fd.is_some()
        {
            self.issue_fsync(self.flushing());
            self.end_sync = EndSync::InFlight;
            true
        } else {
            false
        }
    }

    /// `--end-fsync`: the file the final flush is for now.
    pub(super) fn flushing(&self) -> u16 {
        self.files.as_ref().map_or(0, |f| f.flush_next as u16)
    }

    /// `--end-fsync`: a file's final flush completed; whether another file is left.
    pub(super) fn flushed_one(&mut self) -> bool {
        self.files.as_mut().is_some_and(|f| {
            f.flush_next += 1;
            f.flush_next < f.spans.len()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(
        kind: Service,
        every: u32,
        n: usize,
        spans: &[u64],
        len: u64,
        ios: usize,
    ) -> Vec<usize> {
        let mut o = Order::new(kind, every, n, Rng::new(7, 3));
        (0..ios).map(|_| o.next(len, spans)).collect()
    }

    #[test]
    fn roundrobin_moves_on_after_every_n_ios() {
        let spans = [1 << 20; 3];
        assert_eq!(
            order(Service::RoundRobin, 1, 3, &spans, 4096, 7),
            [0, 1, 2, 0, 1, 2, 0]
        );
        assert_eq!(
            order(Service::RoundRobin, 2, 3, &spans, 4096, 7),
            [0, 0, 1, 1, 2, 2, 0]
        );
    }

    #[test]
    fn sequential_finishes_a_file_before_the_next() {
        // Spans of 2, 3 and 1 blocks of 4 KiB.
        let spans = [8192, 12288, 4096];
        assert_eq!(
            order(Service::Sequential, 1, 3, &spans, 4096, 8),
            [0, 0, 1, 1, 1, 2, 0, 0]
        );
    }

    /// Each file's share of `draws` I/Os under the skewed service `text` over `n` files.
    fn shares(text: &str, n: usize, draws: usize) -> Vec<f64> {
        let fs = FileService::parse(text).unwrap();
        let mut o = Order::new(fs.kind, fs.every, n, Rng::new(7, 3)).with_skew(&fs, 7);
        let mut counts = vec![0u32; n];
        (0..draws).for_each(|_| counts[o.next(4096, &[1 << 20; 8][..n])] += 1);
        counts.iter().map(|&c| c as f64 / draws as f64).collect()
    }

    #[test]
    fn skewed_services_give_each_file_its_share_in_theory() {
        // zipf:θ over 4 × 1024 ranks: file k gets ranks 1024k + 1 ..= 1024(k + 1).
        let h = |n: u64, s: f64| (1..=n).map(|k| (k as f64).powf(-s)).sum::<f64>();
        let zipf: Vec<f64> = (0..4)
            .map(|k| (h(1024 * (k + 1), 1.2) - h(1024 * k, 1.2)) / h(4096, 1.2))
            .collect();
        // pareto:0.8: P(rank < t) = t^(ln 0.8 / ln 0.2) at the files' bounds.
        let c = 0.8f64.ln() / 0.2f64.ln();
        let cdf = |t: f64| t.powf(c);
        let pareto: Vec<f64> = (0..4)
            .map(|k| cdf((k + 1) as f64 / 4.0) - cdf(k as f64 / 4.0))
            .collect();
        // normal:20: σ = 0.2 × 4 files around the middle, cut to the files.
        let phi = |z: f64| 0.5 * (1.0 + erf(z / std::f64::consts::SQRT_2));
        let inside = phi(2.0 / 0.8) - phi(-2.0 / 0.8);
        let normal: Vec<f64> = (0..4)
            .map(|k| (phi((k as f64 - 1.0) / 0.8) - phi((k as f64 - 2.0) / 0.8)) / inside)
            .collect();
        for (text, want) in [
            ("zipf:1.2", zipf),
            ("pareto:0.8", pareto),
            ("normal:20", normal),
        ] {
            let got = shares(text, 4, 100_000);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 0.006, "{text}: {got:?} against {want:?}");
            }
        }
        // The first file the hottest.
        assert!(shares("zipf", 3, 10_000)[0] > 0.8);
    }

    /// The error function (Abramowitz and Stegun 7.1.26, error below 1.5e-7).
    fn erf(x: f64) -> f64 {
        let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
        let p = t
            * (0.254_829_592
                + t * (-0.284_496_736
                    + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
        let y = 1.0 - p * (-x * x).exp();
        if x < 0.0 { -y } else { y }
    }

    #[test]
    fn random_draws_every_file_evenly_and_keeps_runs_of_n() {
        let spans = [1 << 20; 4];
        let picks = order(Service::Random, 1, 4, &spans, 4096, 40_000);
        let mut counts = [0u32; 4];
        picks.iter().for_each(|&f| counts[f] += 1);
        // Chi-square with 3 degrees of freedom below 16.3 (p = 0.001).
        let chi: f64 = counts
            .iter()
            .map(|&c| (c as f64 - 10_000.0).powi(2) / 10_000.0)
            .sum();
        assert!(chi < 16.3, "{counts:?}");
        let runs = order(Service::Random, 4, 4, &spans, 4096, 400);
        assert!(runs.chunks(4).all(|c| c.iter().all(|&f| f == c[0])));
        assert!(
            runs.chunks(4).any(|c| c[0] != runs[0]),
            "never left file {}",
            runs[0]
        );
    }
}

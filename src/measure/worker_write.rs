//! A write's data: lent from the data pool or written into the slot's buffer (with its
//! verify header under `--verify`), and shown to the job's sampler.

use std::ptr::NonNull;

use super::Worker;
use super::files::Files;
use crate::io::engine::Engine;
use crate::measure::launch::WorkerCtx;
use crate::workload::data::{DataGen, Lent};
use crate::workload::sampler::Sampler;

/// With `--verify`: what the worker wrote where.
pub(super) struct VerifyTrack {
    /// Each of the worker's files (one, or every file it serves): the first byte of its
    /// region and the generation last written to each block of the region.
    pub(super) regions: Vec<(u64, Vec<u64>)>,
    /// The block each slot is writing, as (file, offset) (`NOT_WRITING`: none), so that
    /// a block is never written twice at once (the newer write must be the one that
    /// lands).
    pub(super) writing: Vec<(u16, u64)>,
    pub(super) writes_issued: u64,
}

/// A slot that writes no block (`VerifyTrack::writing`).
pub(super) const NOT_WRITING: (u16, u64) = (u16::MAX, u64::MAX);

/// The sampler of a job whose writes `data` makes: told where its units' stamps lie and
/// what it may compose or skip (the pool's sums and stamps, a constant profile's unit,
/// `--verify`'s block headers).
pub(super) fn job_sampler(spec: &crate::plan::spec::Spec, data: &mut DataGen) -> Sampler {
    Sampler::new(&spec.data)
        .with_huge_pages(crate::io::sys::back_with_huge_pages)
        .with_stamp_turns(data.stamp_turns())
        .with_pool_hashes(data.take_pool_hashes())
        .with_lent_stamps(data.lent_stamps())
        .with_copied_stamps(data.copied_stamps())
        .with_uniform_unit(data.uniform_unit(spec.data.dedup_unit as usize))
        .with_block_headers(spec.verify.then(crate::measure::verify::header_word))
}

impl VerifyTrack {
    /// The track of a worker with `qd` slots over its `files` (their regions), or over
    /// one file's `region` (first byte, blocks).
    pub(super) fn new(files: Option<&Files>, region: (u64, u64), qd: usize) -> VerifyTrack {
        let one = [region];
        let regions = files.map_or(&one[..], |f| &f.regions);
        VerifyTrack {
            regions: (regions.iter())
                .map(|&(base, blocks)| (base, vec![0; blocks as usize]))
                .collect(),
            writing: vec![NOT_WRITING; qd],
            writes_issued: 0,
        }
    }
}

impl<E: Engine> Worker<'_, '_, E> {
    /// Prepares the next write's data: lent straight from the data pool (returned), or
    /// written into the free slot's buffer (with its verify header under --verify).
    pub(super) fn prepare_write(
        &mut self,
        slot: u32,
        offset: u64,
        len: u32,
        measuring: bool,
    ) -> Option<Lent> {
        let spec = self.ctx.spec;
        let file = self.current_file() as usize;
        // Safety: `slot` came off the free list, so no request on it is in flight: it is
        // pushed back only after its completion has been reaped.
        let buf = unsafe { &mut self.eng.buffer(slot)[..len as usize] };
        let first_id = self.data.next_id();
        // (Units copied out of the pool: the sampler asks for the lines it will visit
        // while they are copied.)
        let sampler = self.sampler.as_mut().filter(|_| measuring);
        let lent = self
            .data
            .next_write_with(buf, self.verify.is_none(), |ids| {
                if let Some(s) = sampler {
                    s.prefetch_ids(ids);
                }
            });
        self.writes_since_sync += 1;
        if let Some(l) = lent {
            if measuring && let Some(s) = self.sampler.as_mut() {
                let bytes = self.data.lent_bytes(l);
                s.observe_lent(bytes, first_id);
                answer(s, self.ctx, self.now, (self.work, self.budget));
            }
            return Some(l);
        }
        if let Some(v) = self.verify.as_mut() {
            v.writes_issued += 1;
            let generation = ((self.ctx.rep as u64 + 1) << 40)
                | (v.writes_issued * spec.jobs as u64 + self.ctx.job as u64);
            crate::measure::verify::stamp(buf, offset, spec.seed, generation);
            let (base, gens) = &mut v.regions[file];
            gens[((offset - *base) / spec.bs) as usize] = generation;
        }
        if measuring && let Some(s) = self.sampler.as_mut() {
            s.observe_from(buf, first_id);
            answer(s, self.ctx, self.now, (self.work, self.budget));
        }
        None
    }

    /// Where a write's bytes are when they are sent from the data pool (`lent`), for the
    /// request's `ext`; `None`: from the slot's own buffer.
    #[inline(always)]
    pub(super) fn ext_of(&self, lent: Option<Lent>) -> Option<NonNull<u8>> {
        lent.map(|l| NonNull::from(self.data.lent_bytes(l)).cast())
    }

    /// `--invalidate pass`: when the offset just picked begins a new pass over file
    /// `file`, its clean cached pages are dropped first (dirty ones queued for writeback,
    /// not waited for), as fio does in a buffered job that goes over its file again.
    pub(super) fn on_pass_end(&mut self, file: u16) {
        if !self.offsets.take_pass_end() {
            return;
        }
        let ctx = self.ctx;
        let (fd, base, span) = match ctx.files.get(file as usize) {
            Some(f) => (f.fd, f.base, f.span),
            None => (ctx.fd, ctx.base, ctx.span),
        };
        if let Some(fd) = fd {
            crate::io::sys::drop_file_cache(fd, base, span, false);
        }
    }
}

/// Answers the sampler, after it was shown a write, when it asks how much the job will
/// write.
#[inline(always)]
fn answer(s: &mut Sampler, ctx: &WorkerCtx, now: u64, work: (u64, u64)) {
    if s.wants_plan() {
        plan(s, ctx, now, work);
    }
}

/// Tells the sampler how many bytes the job will write in all, when it asks: what it has
/// written over the share of the window done so far (the runtime's or the size's,
/// whichever is further along). Not before any of the window has passed (it asks again
/// at the next write).
#[cold]
#[inline(never)]
/// `work`: the size budget's count so far and its end (`u64::MAX`: none).
fn plan(s: &mut Sampler, ctx: &WorkerCtx, now: u64, work: (u64, u64)) {
    let time = (ctx.end_ns).map(|end| {
        now.saturating_sub(ctx.ramp_ns) as f64 / end.saturating_sub(ctx.ramp_ns).max(1) as f64
    });
    let (done, budget) = work;
    let size = (budget < u64::MAX).then(|| done as f64 / budget.max(1) as f64);
    let done = time.into_iter().chain(size).fold(0.0, f64::max).min(1.0);
    if done > 0.0 {
        s.plan((s.written() as f64 / done) as u64);
    }
}

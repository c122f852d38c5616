//! When a repetition's measured window starts and ends: the ramp, the runtime, and a
//! size-based job's budget of I/Os or (with a block-size mix) bytes, for a job on one
//! file or serving several in turn.

use crate::measure::launch::WorkFile;
use crate::plan::spec::Spec;

/// When a repetition's measured window starts and ends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    pub(crate) ramp_ns: u64,
    /// End of the window (ramp included), when time-based.
    pub(crate) end_ns: Option<u64>,
    /// I/Os each job issues after the ramp, when size-based.
    pub(crate) ios_per_job: Option<u64>,
    /// Bytes each job moves after the ramp, when size-based with a block-size mix: its
    /// I/Os end there, not at `ios_per_job` (the mix's mean), as fio's size is bytes.
    pub(crate) bytes_per_job: Option<u64>,
}

impl Window {
    /// Time-based unless a volume was given too (`--io-size`, bytes or `Nx` the span):
    /// with both, whichever comes first ends it.
    pub(crate) fn of(spec: &Spec, span: u64) -> Window {
        // `--startdelay` comes first: no I/O, excluded like the ramp (`pace::start_delay`).
        let ramp_ns = ((spec.startdelay_end_s() + spec.ramp_s) * 1e9) as u64;
        let end_ns = spec.runtime_s.map(|r| ramp_ns + (r * 1e9) as u64);
        let sized = !(end_ns.is_some() && spec.io_size.is_none() && spec.io_spans.is_none());
        // One pass moves the span's whole blocks (of the smallest size with a mix: a span
        // of 1001 KiB in 4 KiB and 12 KiB writes is 1000 KiB, as fio's), never a
        // partial one.
        let whole = span / spec.grain().max(1) * spec.grain().max(1);
        let io = spec.io_size.unwrap_or(match spec.io_spans {
            Some(n) => (span as f64 * n) as u64,
            None => whole,
        });
        // Each block of `trimwrite` is trimmed, then written: `io` bytes of each, as in fio.
        let both = match spec.rw == crate::plan::spec::Rw::TrimWrite {
            true => 2,
            false => 1,
        };
        let share = spec.io_share.max(1) as u64;
        // With a block-size mix: the I/Os that move `io` bytes on average (for the
        // progress and the sampler's plan), and the bytes themselves, where the job ends
        // (counted by the mean, 290 writes of `--bssplit 4k/50:64k/30:1m/20` moved 53 of
        // a 64 MiB span's MiB: the sizes drawn were below the mean).
        let ios_per_job =
            sized.then(|| ((io as f64 / spec.mean_bs()) as u64 * both / share).max(1));
        let mix = spec.bs_mix.is_some() || spec.write_bs.is_some();
        let bytes_per_job = (sized && mix).then(|| (io * both / share).max(1));
        Window {
            ramp_ns,
            end_ns,
            ios_per_job,
            bytes_per_job,
        }
    }
}

/// The window of a worker serving `files` (`--file-service`): a size-based job moves
/// the whole blocks of all its files once (unless `--io-size` says otherwise).
pub(crate) fn files_window(spec: &Spec, files: &[WorkFile], win: Window) -> Window {
    let grain = spec.grain();
    let span: u64 = files.iter().map(|f| f.span / grain * grain).sum();
    // The bytes too (a mix's budget): they were one file's, and a job serving two files
    // in turn moved half of what fio moves.
    let all = Window::of(spec, span);
    Window {
        ios_per_job: all.ios_per_job,
        bytes_per_job: all.bytes_per_job,
        ..win
    }
}

//! Trims (`--rw trim`, `randtrim`, `trimwrite`): a worker discards a block at once, on
//! its own thread (BLKDISCARD on a block device, a punched hole in a file), as fio's
//! engines do their trims synchronously; each is counted as its own direction with its
//! latency. With `trimwrite` the block just trimmed is written next, through the engine.
//! A worker serving several files (`--file-service`) trims in the file the service gave
//! the I/O, and counts the trim in that file's share.

use super::Worker;
use crate::error::{Error, describe_io};
use crate::io::engine::Engine;
use crate::measure::launch::WorkerCtx;
use crate::plan::spec::Rw;

/// A trimming job's state.
pub(super) struct Trims {
    /// Whether each of the worker's files (its one target, or every file it serves) is a
    /// block device (BLKDISCARD) rather than a file.
    device: Vec<bool>,
    /// `trimwrite`: the block just trimmed (offset, length), to write next.
    pub(super) then_write: Option<(u64, u32)>,
}

impl Trims {
    /// The state of a job whose pattern trims; `None` otherwise.
    pub(super) fn of(ctx: &WorkerCtx) -> Option<Trims> {
        let block = |fd: Option<_>| fd.is_some_and(crate::io::sys::is_block_device);
        ctx.spec.rw.trims().then(|| Trims {
            device: match ctx.files.is_empty() {
                true => vec![block(ctx.fd)],
                false => ctx.files.iter().map(|f| block(f.fd)).collect(),
            },
            then_write: None,
        })
    }
}

/// A failed trim, as a message that says where and what to try.
fn trim_error(path: &str, offset: u64, e: &std::io::Error) -> Error {
    let hint = match e.raw_os_error() {
        Some(crate::io::sys::EOPNOTSUPP) => {
            "; the target does not support discard: use a device or filesystem that does, or another --rw"
        }
        Some(crate::io::sys::EINVAL) => {
            "; the device may need trims aligned to its discard granularity (try a larger --bs)"
        }
        _ => "",
    };
    Error::runtime(format!(
        "trimming {path} at offset {offset} failed: {}{hint}",
        describe_io(e)
    ))
}

impl<E: Engine> Worker<'_, '_, E> {
    /// `trimwrite`: the block to write now, when one was just trimmed.
    pub(super) fn trimmed_block(&mut self) -> Option<(u64, u32)> {
        self.trims.as_mut().and_then(|t| t.then_write.take())
    }

    /// Trims `len` bytes at `offset` of the current file now (the slot is only borrowed
    /// for it) and counts it when `measuring` and it completed inside the window. False
    /// when it failed.
    pub(super) fn trim_now(&mut self, slot: u32, offset: u64, len: u32, measuring: bool) -> bool {
        self.free.push(slot);
        if let Some(p) = self.pace.as_mut() {
            p.charge(self.clock.now_ns(), len as u64);
        }
        if self.budgeted(measuring) {
            self.count_issued(len);
        }
        let file = self.current_file();
        let device = (self.trims.as_ref()).is_some_and(|t| t.device[file as usize]);
        let fd = match self.ctx.files.get(file as usize) {
            Some(f) => f.fd,
            None => self.ctx.fd,
        };
        let start = self.clock.now_ns();
        let done = match fd {
            Some(fd) => crate::io::space::trim(fd, device, offset, len as u64),
            None => Ok(()), // the null engine: nothing to trim
        };
        self.now = self.clock.now_ns();
        if let Err(e) = done {
            self.fail(trim_error(self.path_of(file), offset, &e));
            return false;
        }
        if self.ctx.spec.rw == Rw::TrimWrite
            && let Some(t) = self.trims.as_mut()
        {
            t.then_write = Some((offset, len));
        }
        let (ramp, now) = (self.ctx.ramp_ns, self.now);
        if now >= ramp {
            // The interval the trim ended in.
            self.iv.roll(
                &self.ctx.tx,
                now - ramp,
                self.ctx.interval_ns,
                &mut self.out.tally,
            );
        }
        let in_window = now >= ramp && self.ctx.end_ns.is_none_or(|end| now <= end);
        if measuring && in_window {
            let lat = now.saturating_sub(start);
            self.out.tally.trim.ios += 1;
            self.out.tally.trim.bytes += len as u64;
            self.out.tally.hist_trim.record(lat);
            self.iv.sum.trim.ios += 1;
            self.iv.sum.trim.bytes += len as u64;
            self.iv.sum.lat_sum_ns += lat as u128;
            self.iv.sum.hist.record(lat);
            self.live.add(len as u64, lat);
            self.ctx.live.publish(self.live);
            if let Some(f) = self.files.as_mut() {
                f.tally_trim(file, len, lat);
            }
            self.last_counted_ns = now - ramp;
        }
        self.check_stop();
        true
    }
}

//! I/O engines: queue a request, submit what is queued, reap completions — the shape of
//! fio's `ioengine_ops`. An engine sees requests, buffers and one file descriptor only;
//! timing, statistics and the choice of offsets live in the runner. Engines never print.

mod libaio;
mod mmap;
mod null;
mod psync;
mod spin;
mod uring;

use std::io;

pub(crate) use crate::io::buffer::BufferPool;
pub(crate) use libaio::LibaioEngine;
pub(crate) use mmap::MmapEngine;
pub(crate) use null::NullEngine;
pub(crate) use psync::PsyncEngine;
pub(crate) use uring::UringEngine;

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
    /// Flush the file's data and metadata to stable storage.
    Fsync,
}

/// One I/O to issue. `slot` names the buffer (and is returned in the completion).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request {
    pub slot: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    /// Where in the slot's buffer (or in `ext`) the transfer starts (non-zero only when a
    /// short transfer is resumed).
    pub buf_off: u32,
    /// A write's data outside the slot's buffer (units lent by the data generator's
    /// pool): the engine sends `ext + buf_off .. + len` instead of the slot's bytes. The
    /// worker keeps that memory alive and unchanged until the completion is reaped.
    /// Never set on a read.
    pub ext: Option<std::ptr::NonNull<u8>>,
    /// Which of the engine's files the request goes to (0 unless the worker serves
    /// several: `--file-service`), an index into the list the engine was given.
    pub file: u16,
}

impl Request {
    /// The first byte of the transfer: in `ext` when set, else in the slot's buffer.
    #[inline(always)]
    pub(crate) fn addr(&self, pool: &BufferPool) -> *mut u8 {
        match self.ext {
            Some(p) => p.as_ptr(),
            None => pool.slot_ptr(self.slot),
        }
        .wrapping_add(self.buf_off as usize)
    }
}

/// A finished request: `result` is the bytes transferred, or a negative errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Completion {
    pub slot: u32,
    pub result: i64,
}

/// What `queue` did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Queued {
    /// The request is in the batch; it reaches the kernel at the next `submit`.
    Queued,
    /// The engine has no room (a full submission ring): `submit` what is queued, reap,
    /// and queue the request again.
    Busy,
}

/// An I/O engine. Methods are called from one worker thread only.
pub(crate) trait Engine {
    /// Adds a request to the batch, or says the engine is busy.
    fn queue(&mut self, req: Request) -> io::Result<Queued>;
    /// Issues the batch and returns once at least `wait_for` requests have completed
    /// (since the last `reap`). `ErrorKind::Interrupted` means a signal arrived: the batch
    /// is issued and the caller may call `submit` again.
    fn submit(&mut self, wait_for: usize) -> io::Result<()>;
    /// Moves every completion available now into `out`, without blocking.
    fn reap(&mut self, out: &mut Vec<Completion>);
    /// Has the kernel post the completions it holds back for this thread (io_uring's
    /// deferred task work), so that `reap` takes every I/O done by now.
    fn settle(&mut self) {}
    /// The buffer of `slot`, to fill before a write or to inspect after a read.
    ///
    /// # Safety
    ///
    /// No request on `slot` may be in flight (queued and not yet reaped): the kernel may
    /// be reading or writing that memory until the completion is reaped.
    unsafe fn buffer(&mut self, slot: u32) -> &mut [u8];
    /// Whether a flush (`Op::Fsync`) reaches anything: not with the null engine, which
    /// opens no target (its workers then make and count none).
    fn flushes(&self) -> bool {
        true
    }
}

/// An engine that carries out each request synchronously in `submit` (psync, mmap): it
/// says how to do one request; queueing, submitting and reaping are the same for all.
pub(crate) trait Synchronous {
    /// Carries out `req` now: the bytes transferred, or a negative errno.
    fn execute(&mut self, req: Request) -> i64;
    /// The requests queued and not yet carried out, and the completions not yet reaped.
    fn batch(&mut self) -> (&mut Vec<Request>, &mut Vec<Completion>);
    /// The buffers the requests name.
    fn pool(&mut self) -> &mut BufferPool;
}

impl<T: Synchronous> Engine for T {
    #[inline]
    fn queue(&mut self, req: Request) -> io::Result<Queued> {
        self.batch().0.push(req);
        Ok(Queued::Queued)
    }

    fn submit(&mut self, _wait_for: usize) -> io::Result<()> {
        let mut reqs = std::mem::take(self.batch().0);
        for req in reqs.drain(..) {
            let result = self.execute(req);
            self.batch().1.push(Completion {
                slot: req.slot,
                result,
            });
        }
        // Hand the (empty) vector back, keeping its capacity.
        *self.batch().0 = reqs;
        Ok(())
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<Completion>) {
        out.append(self.batch().1);
    }

    unsafe fn buffer(&mut self, slot: u32) -> &mut [u8] {
        // SAFETY: the caller guarantees that no request on `slot` is in flight.
        unsafe { self.pool().slot_mut(slot) }
    }
}

/// Checks whether this kernel (and any seccomp filter around us) lets us set up a ring.
/// Returns why not, when not.
pub fn probe_io_uring() -> Result<(), String> {
    match io_uring::IoUring::new(2) {
        Ok(_) => Ok(()),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ENOSYS) => "the kernel has no io_uring".to_string(),
            Some(libc::EPERM) => {
                "io_uring is forbidden here (a seccomp filter, e.g. a container's, or kernel.io_uring_disabled)".to_string()
            }
            _ => format!("io_uring setup failed: {}", crate::error::describe_io(&e)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// Conformance: every engine completes every queued request with the full length,
    /// and a write followed by a read returns the written bytes.
    fn conformance<E: Engine>(mut e: E, real_io: bool) {
        let len = 4096u32;
        for slot in 0..4u32 {
            // Safety: nothing is in flight on any slot between the batches of this test.
            let buf = unsafe { e.buffer(slot) };
            buf[..len as usize].fill(slot as u8 + 1);
            e.queue(Request {
                slot,
                op: Op::Write,
                offset: slot as u64 * len as u64,
                len,
                buf_off: 0,
                ext: None,
                file: 0,
            })
            .unwrap();
        }
        let mut got = Vec::new();
        while got.len() < 4 {
            e.submit(1).unwrap();
            e.reap(&mut got);
        }
        got.sort_by_key(|c| c.slot);
        assert!(got.iter().all(|c| c.result == len as i64), "{got:?}");
        for slot in 0..4u32 {
            // Safety: every request of the first batch has been reaped.
            unsafe { e.buffer(slot) }.fill(0);
            e.queue(Request {
                slot,
                op: Op::Read,
                offset: (3 - slot) as u64 * len as u64,
                len,
                buf_off: 0,
                ext: None,
                file: 0,
            })
            .unwrap();
        }
        let mut got = Vec::new();
        while got.len() < 4 {
            e.submit(4 - got.len()).unwrap();
            e.reap(&mut got);
        }
        assert_eq!(got.len(), 4);
        if real_io {
            for slot in 0..4u32 {
                let want = (3 - slot) as u8 + 1;
                // Safety: every request of the second batch has been reaped.
                let buf = unsafe { e.buffer(slot) };
                assert!(buf[..len as usize].iter().all(|&b| b == want));
            }
        }
    }

    fn scratch_file() -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(1 << 20).unwrap();
        f
    }

    #[test]
    fn psync_conforms() {
        let f = scratch_file();
        let pool = BufferPool::new(4, 4096, 4096).unwrap();
        conformance(PsyncEngine::new(f.as_file().as_fd(), pool, 4), true);
    }

    #[test]
    fn io_uring_conforms() {
        if let Err(why) = probe_io_uring() {
            assert!(
                std::env::var("IOMARK_REQUIRE_ALL").as_deref() != Ok("1"),
                "io_uring unavailable and IOMARK_REQUIRE_ALL=1: {why}"
            );
            eprintln!("skipped: {why}");
            return;
        }
        let f = scratch_file();
        let pool = BufferPool::new(4, 4096, 4096).unwrap();
        conformance(
            UringEngine::new(f.as_file().as_fd(), pool, 4, &Default::default(), None).unwrap(),
            true,
        );
    }

    #[test]
    fn io_uring_batched_conforms() {
        if probe_io_uring().is_err() {
            return; // io_uring_conforms says why
        }
        let f = scratch_file();
        let pool = BufferPool::new(4, 4096, 4096).unwrap();
        let opts = crate::plan::spec::EngineOpts {
            batch_submit: 3,
            batch_complete: 2,
            ..Default::default()
        };
        conformance(
            UringEngine::new(f.as_file().as_fd(), pool, 4, &opts, None).unwrap(),
            true,
        );
    }

    #[test]
    fn libaio_conforms() {
        for (batch_submit, batch_complete) in [(1, 1), (3, 2), (4, 4)] {
            let f = scratch_file();
            let pool = BufferPool::new(4, 4096, 4096).unwrap();
            let opts = crate::plan::spec::EngineOpts {
                batch_submit,
                batch_complete,
                ..Default::default()
            };
            conformance(
                LibaioEngine::new(f.as_file().as_fd(), pool, 4, &opts).unwrap(),
                true,
            );
        }
    }

    #[test]
    fn libaio_reports_a_refused_request_as_its_completion() {
        // A descriptor opened read-only: the kernel refuses the write at submission
        // (EBADF); the engine turns that into the request's completion, not a hang.
        let f = scratch_file();
        let ro = std::fs::File::open(f.path()).unwrap();
        let pool = BufferPool::new(1, 4096, 4096).unwrap();
        let mut e = LibaioEngine::new(ro.as_fd(), pool, 1, &Default::default()).unwrap();
        e.queue(Request {
            slot: 0,
            op: Op::Write,
            offset: 0,
            len: 4096,
            buf_off: 0,
            ext: None,
            file: 0,
        })
        .unwrap();
        e.submit(1).unwrap();
        let mut got = Vec::new();
        e.reap(&mut got);
        assert_eq!(
            got,
            vec![Completion {
                slot: 0,
                result: -(libc::EBADF as i64)
            }]
        );
    }

    #[test]
    fn mmap_conforms() {
        let f = scratch_file();
        let pool = BufferPool::new(4, 4096, 4096).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(f.path())
            .unwrap();
        conformance(
            MmapEngine::new(file.as_fd(), pool, 0, 1 << 20, true, Some(true)).unwrap(),
            true,
        );
        // What was stored into the mapping is what the file holds.
        let mut back = vec![0u8; 4096];
        crate::io::sys::read_full_at(&file, &mut back, 2 * 4096)
            .1
            .unwrap();
        assert!(back.iter().all(|&b| b == 3));
    }

    #[test]
    fn mmap_refuses_what_lies_outside_its_span() {
        let f = scratch_file();
        let pool = BufferPool::new(1, 4096, 4096).unwrap();
        // A span that starts off a page boundary: the mapping starts at the page before.
        let mut e =
            MmapEngine::new(f.as_file().as_fd(), pool, 6144, 8192, false, Some(false)).unwrap();
        for (op, offset, want) in [
            (Op::Read, 6144, 4096),
            (Op::Read, 12288, -(libc::EINVAL as i64)),
            (Op::Write, 6144, -(libc::EBADF as i64)),
        ] {
            e.queue(Request {
                slot: 0,
                op,
                offset,
                len: 4096,
                buf_off: 0,
                ext: None,
                file: 0,
            })
            .unwrap();
            e.submit(1).unwrap();
            let mut got = Vec::new();
            e.reap(&mut got);
            assert_eq!(got[0].result, want, "{op:?} at {offset}");
        }
    }

    #[test]
    fn null_conforms() {
        let pool = BufferPool::new(4, 4096, 4096).unwrap();
        conformance(NullEngine::new(pool, 4), false);
    }

    #[test]
    fn pool_is_aligned() {
        let mut p = BufferPool::new(3, 1000, 512).unwrap();
        for s in 0..3 {
            assert_eq!(p.slot_ptr(s) as usize % 4096, 0);
            // Safety: the pool is never handed to an engine.
            assert_eq!(unsafe { p.slot_mut(s) }.len(), 4096);
        }
    }
}

//! I/O engines: queue a request, submit what is queued, reap completions — the shape of
//! fio's `ioengine_ops`. An engine sees requests, buffers and one file descriptor only;
//! timing, statistics and the choice of offsets live in the runner. Engines never print.

mod null;
mod psync;
mod uring;

use std::io;

pub use null::NullEngine;
pub use psync::PsyncEngine;
pub use uring::UringEngine;

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    /// Flush the file's data and metadata to stable storage.
    Fsync,
}

/// One I/O to issue. `slot` names the buffer (and is returned in the completion).
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub slot: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    /// Where in the slot's buffer the transfer starts (non-zero only when a short transfer
    /// is resumed).
    pub buf_off: u32,
}

/// A finished request: `result` is the bytes transferred, or a negative errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    pub result: i64,
}

/// An I/O engine. Methods are called from one worker thread only.
pub trait Engine {
    /// Adds a request to the batch; it reaches the kernel at the next `submit`.
    fn queue(&mut self, req: Request) -> io::Result<()>;
    /// Issues the batch and returns once at least `wait_for` requests have completed
    /// (since the last `reap`). `ErrorKind::Interrupted` means a signal arrived: the batch
    /// is issued and the caller may call `submit` again.
    fn submit(&mut self, wait_for: usize) -> io::Result<()>;
    /// Moves every completion available now into `out`, without blocking.
    fn reap(&mut self, out: &mut Vec<Completion>);
    /// The buffer of `slot`, to fill before a write or to inspect after a read.
    fn buffer(&mut self, slot: u32) -> &mut [u8];
}

/// Page-aligned (or more) memory for `slots` buffers of `slot_len` bytes each, as direct
/// I/O requires. Freed on drop.
pub struct BufferPool {
    ptr: *mut u8,
    layout: std::alloc::Layout,
    slot_len: usize,
    slots: usize,
}

// Safety: the pool owns its allocation exclusively; moving it to another thread moves the
// only handle to that memory.
unsafe impl Send for BufferPool {}

impl BufferPool {
    /// Allocates zeroed buffers aligned to `align` (a power of two, at least 4096 is used).
    pub fn new(slots: usize, slot_len: usize, align: usize) -> io::Result<BufferPool> {
        let align = align.max(4096).next_power_of_two();
        let slot_len_aligned = slot_len.div_ceil(align) * align;
        let total = slot_len_aligned
            .checked_mul(slots.max(1))
            .ok_or_else(|| io::Error::other("buffer pool size overflows"))?;
        let layout = std::alloc::Layout::from_size_align(total, align)
            .map_err(|_| io::Error::other("invalid buffer layout"))?;
        // Safety: `layout` has a non-zero size (slots ≥ 1, slot_len ≥ 1 rounded up to align).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("cannot allocate {total} bytes of I/O buffers"),
            ));
        }
        Ok(BufferPool {
            ptr,
            layout,
            slot_len: slot_len_aligned,
            slots: slots.max(1),
        })
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Start of a slot's buffer.
    pub fn slot_ptr(&self, slot: u32) -> *mut u8 {
        assert!((slot as usize) < self.slots, "slot out of range");
        // Safety: slot < slots, so the offset stays inside the allocation.
        unsafe { self.ptr.add(slot as usize * self.slot_len) }
    }

    /// Length of each slot's buffer (the block size rounded up to the alignment).
    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    /// A slot's buffer.
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        // Safety: the slot lies inside our allocation, and `&mut self` guarantees no other
        // reference into the pool is alive on this side. The kernel may only touch the slot
        // while a request on it is in flight, and the runner never fills an in-flight slot.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(slot), self.slot_len) }
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // Safety: allocated in `new` with this very layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
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
    use std::os::fd::RawFd;

    /// Conformance: every engine completes every queued request with the full length,
    /// and a write followed by a read returns the written bytes.
    fn conformance<E: Engine>(mut e: E, real_io: bool) {
        let len = 4096u32;
        for slot in 0..4u32 {
            e.buffer(slot)[..len as usize].fill(slot as u8 + 1);
            e.queue(Request {
                slot,
                op: Op::Write,
                offset: slot as u64 * len as u64,
                len,
                buf_off: 0,
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
            e.buffer(slot).fill(0);
            e.queue(Request {
                slot,
                op: Op::Read,
                offset: (3 - slot) as u64 * len as u64,
                len,
                buf_off: 0,
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
                assert!(e.buffer(slot)[..len as usize].iter().all(|&b| b == want));
            }
        }
    }

    fn scratch_file() -> (tempfile::NamedTempFile, RawFd) {
        use std::os::fd::AsRawFd;
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(1 << 20).unwrap();
        let fd = f.as_file().as_raw_fd();
        (f, fd)
    }

    #[test]
    fn psync_conforms() {
        let (_f, fd) = scratch_file();
        let pool = BufferPool::new(4, 4096, 4096).unwrap();
        conformance(PsyncEngine::new(fd, pool, 4), true);
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
        let (_f, fd) = scratch_file();
        let pool = BufferPool::new(4, 4096, 4096).unwrap();
        conformance(UringEngine::new(fd, pool, 4).unwrap(), true);
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
            assert_eq!(p.slot_mut(s).len(), 4096);
        }
    }
}

//! The mmap engine: the job's span of the file or block device is mapped shared into
//! memory once; a read copies from the mapping into the slot's buffer, a write copies the
//! buffer into the mapping (the page cache; writeback happens later), and an fsync is an
//! `msync` of the whole mapping. One request at a time, done in `submit`, like psync.
//! Page faults are the I/O: `madvise` says whether the pattern is random or sequential, as
//! `--fadvise` asks (fio's `fadvise_hint`; none: the kernel's read-around).
//! A worker serving several files (`--file-service`) has a mapping per file.

use std::io;
use std::os::fd::BorrowedFd;

use super::{BufferPool, Completion, Op, Request, Synchronous};
use crate::io::sys;

/// One file's span, mapped.
struct Map {
    map: *mut u8,
    map_len: usize,
    /// The file offset the mapping starts at (the span's start rounded down to a page).
    map_start: u64,
}

impl Map {
    fn new(
        fd: BorrowedFd,
        base: u64,
        span: u64,
        writable: bool,
        random: Option<bool>,
    ) -> io::Result<Map> {
        let map_start = base - base % sys::page_size();
        let map_len = usize::try_from(span + (base - map_start))
            .map_err(|_| io::Error::other("the span is too large to map"))?;
        let map = sys::map_shared(fd, map_start, map_len, writable, random)?;
        Ok(Map {
            map,
            map_len,
            map_start,
        })
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `Map::new`; nothing uses it after the engine is gone.
        unsafe { sys::unmap(self.map, self.map_len) };
    }
}

pub(crate) struct MmapEngine {
    /// A mapping per file (`Request::file` indexes them).
    maps: Vec<Map>,
    writable: bool,
    /// The advice: `Some(true)` random, `Some(false)` sequential, `None` none.
    random: Option<bool>,
    pool: BufferPool,
    queued: Vec<Request>,
    done: Vec<Completion>,
}

impl MmapEngine {
    /// Maps `span` bytes of `fd` from `base`; writable when the workload writes.
    pub(crate) fn new(
        fd: BorrowedFd,
        pool: BufferPool,
        base: u64,
        span: u64,
        writable: bool,
        random: Option<bool>,
    ) -> io::Result<MmapEngine> {
        Ok(MmapEngine {
            maps: vec![Map::new(fd, base, span, writable, random)?],
            writable,
            random,
            pool,
            queued: Vec::with_capacity(1),
            done: Vec::with_capacity(1),
        })
    }

    /// Maps `span` bytes of another file from `base`: the next `Request::file`.
    pub(crate) fn add_file(&mut self, fd: BorrowedFd, base: u64, span: u64) -> io::Result<()> {
        let m = Map::new(fd, base, span, self.writable, self.random)?;
        self.maps.push(m);
        Ok(())
    }
}

impl Synchronous for MmapEngine {
    fn execute(&mut self, req: Request) -> i64 {
        let Some(map) = self.maps.get(req.file as usize) else {
            return -(libc::EBADF as i64);
        };
        if req.op == Op::Fsync {
            // SAFETY: the mapping made in `Map::new`, unmapped only when dropped.
            return unsafe { sys::msync(map.map, map.map_len) };
        }
        let at = req.offset.checked_sub(map.map_start).map(|a| a as usize);
        let len = req.len as usize;
        let Some(at) = at.filter(|a| a.checked_add(len).is_some_and(|e| e <= map.map_len)) else {
            return -(sys::EINVAL as i64);
        };
        if req.op == Op::Write && !self.writable {
            return -(libc::EBADF as i64);
        }
        let buf = req.addr(&self.pool);
        // SAFETY: `at..at+len` lies inside the mapping (checked above) and
        // `buf..buf+len` inside the slot (the worker never asks for more than a slot
        // holds) or inside the units lent for this write (`Request::ext`, a write, kept
        // alive until the completion); neither overlaps the mapping (both are heap
        // memory); the
        // request is synchronous, so nothing else touches the slot meanwhile. A file
        // shortened under us by someone else would raise SIGBUS here: the target keeps the
        // file at least as long as the span, and iomark refuses files in use by another run.
        unsafe {
            let m = map.map.add(at);
            match req.op {
                Op::Read => std::ptr::copy_nonoverlapping(m, buf, len),
                _ => std::ptr::copy_nonoverlapping(buf, m, len),
            }
        }
        req.len as i64
    }

    #[inline]
    fn batch(&mut self) -> (&mut Vec<Request>, &mut Vec<Completion>) {
        (&mut self.queued, &mut self.done)
    }

    #[inline]
    fn pool(&mut self) -> &mut BufferPool {
        &mut self.pool
    }
}

//! Aligned I/O buffers: one allocation, one slot per request in flight. Direct I/O needs
//! the buffer aligned to the device's logical block size; the pool aligns to at least a
//! page. The pool never decides what goes into a slot, only where the slot is.

use std::io;

/// Page-aligned (or more) memory for `slots` buffers of `slot_len` bytes each, as direct
/// I/O requires. Freed on drop.
pub(crate) struct BufferPool {
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
    ///
    /// Slots of 64 KiB or more lie in huge pages where the kernel gives them (the pool is
    /// then rounded up to whole 2 MiB pages): a slot is then physically contiguous, so a large transfer is one
    /// request to a device that limits the segments per request (a 1 MiB read from 4 KiB
    /// pages is 256 segments: two requests on a loop device or virtio disk, which take
    /// 128 or 254).
    pub(crate) fn new(slots: usize, slot_len: usize, align: usize) -> io::Result<BufferPool> {
        let shape = crate::plan::engine::buffer_shape(slots, slot_len, align)
            .ok_or_else(|| io::Error::other("buffer pool size overflows"))?;
        let (slot_len_aligned, align, total, huge) =
            (shape.slot, shape.align, shape.total, shape.huge);
        let layout = std::alloc::Layout::from_size_align(total, align)
            .map_err(|_| io::Error::other("invalid buffer layout"))?;
        // Safety: `layout` has a non-zero size (slots ≥ 1, slot_len ≥ 1 rounded up to align).
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("cannot allocate {total} bytes of I/O buffers"),
            ));
        }
        if huge {
            // Before the first touch, so the pages are huge from the start.
            crate::io::sys::back_with_huge_pages(ptr, total);
        }
        // Safety: `ptr` points to `total` bytes just allocated and not yet shared.
        unsafe { std::ptr::write_bytes(ptr, 0, total) };
        Ok(BufferPool {
            ptr,
            layout,
            slot_len: slot_len_aligned,
            slots: slots.max(1),
        })
    }

    /// Number of slots.
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// Start of a slot's buffer.
    pub(crate) fn slot_ptr(&self, slot: u32) -> *mut u8 {
        assert!((slot as usize) < self.slots, "slot out of range");
        // Safety: slot < slots, so the offset stays inside the allocation.
        unsafe { self.ptr.add(slot as usize * self.slot_len) }
    }

    /// Length of each slot's buffer (the block size rounded up to the alignment).
    pub(crate) fn slot_len(&self) -> usize {
        self.slot_len
    }

    /// A slot's buffer.
    ///
    /// # Safety
    ///
    /// No request on `slot` may be in flight: the kernel writes into (or reads from) a
    /// slot's memory until that request's completion has been reaped, and a slice handed
    /// out meanwhile would alias memory another party is changing.
    pub(crate) unsafe fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        // Safety: the slot lies inside our allocation, `&mut self` guarantees no other
        // reference into the pool is alive on this side, and the caller guarantees that
        // the kernel is not using the slot (no request on it in flight).
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(slot), self.slot_len) }
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // Safety: allocated in `new` with this very layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

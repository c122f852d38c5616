//! Memory for the sampler's tables (`workload::tracks`, `workload::seen`): a zeroed
//! slice that, from `plan::data::HUGE_TABLE_MIN` bytes on and when the job was given a
//! way to advise it (`Sampler::with_huge_pages`: `io::sys::back_with_huge_pages`, which
//! this layer may not call itself), lies in whole 2 MiB huge pages.
//!
//! Why: a dedup stream's tables are visited at random, a line or two per tracked or
//! sampled unit, and the pool's copies evict them between visits; in 4 KiB pages each
//! visit also walked the page tables (two levels of them in this guest). In huge pages
//! the prefetch of the tracking table's set fell from 0.7–1.0% of a null 4 KiB
//! `--dedup 50` write to 0.3–0.5%, and the lookup in the table of hashed contents from
//! 0.9–1.1% to 0.4–0.5% (docs/PERFORMANCE.md, session 25).

use std::alloc::Layout;
use std::ptr::NonNull;

use crate::plan::data::{HUGE_TABLE_MIN, table_backing};

/// Advises memory to be backed by huge pages (start, length): given by the measuring
/// layer.
pub(crate) type Advise = fn(*const u8, usize);

/// A type whose all-zero bytes are a valid value (a table's empty slot).
///
/// # Safety
///
/// Implement it only for types for which every byte zero is a valid value.
pub(crate) unsafe trait Zeroed: Copy {}

/// A zeroed slice of `T` in memory of its own: whole huge pages when it is large and
/// advice was given, else an allocation of its own size.
pub(crate) struct TableMem<T: Zeroed> {
    ptr: NonNull<T>,
    len: usize,
    layout: Layout,
    advise: Option<Advise>,
}

// SAFETY: a `TableMem` owns its allocation alone, as a `Box<[T]>` does; sending or
// sharing it is sending or sharing the `T`s.
unsafe impl<T: Zeroed + Send> Send for TableMem<T> {}
// SAFETY: as above: `&TableMem` gives only `&[T]`.
unsafe impl<T: Zeroed + Sync> Sync for TableMem<T> {}

impl<T: Zeroed> TableMem<T> {
    /// `len` zeroed `T`s (at least one).
    pub(crate) fn zeroed(len: usize, advise: Option<Advise>) -> TableMem<T> {
        let len = len.max(1);
        let bytes = len
            .checked_mul(size_of::<T>())
            .expect("a sampler table's size fits in memory");
        let huge = advise.is_some() && bytes >= HUGE_TABLE_MIN;
        let layout = match huge {
            true => Layout::from_size_align(table_backing(bytes), 2 << 20),
            false => Layout::array::<T>(len),
        }
        .expect("a valid layout");
        // SAFETY: the layout's size is non-zero (`len` ≥ 1 and `T` is a table slot, not
        // zero-sized: checked below before any use of the memory as `T`s).
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout);
        };
        assert!(size_of::<T>() > 0 && layout.size() >= bytes);
        if let (Some(a), true) = (advise, huge) {
            // Advised before the first touch, so that the zeroing faults in huge pages.
            a(raw, layout.size());
        }
        // SAFETY: `raw` points to `layout.size()` bytes just allocated and owned here.
        unsafe { std::ptr::write_bytes(raw, 0, layout.size()) };
        TableMem {
            ptr: ptr.cast(),
            len,
            layout,
            advise,
        }
    }

    /// The advice this memory was made with, for a table that grows.
    pub(crate) fn advise(&self) -> Option<Advise> {
        self.advise
    }
}

impl<T: Zeroed> std::ops::Deref for TableMem<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialised `T`s (zeroed, a valid `T` by `Zeroed`),
        // aligned (the layout's alignment is `T`'s or 2 MiB, a multiple of it), owned
        // by `self` for the borrow's life.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroed> std::ops::DerefMut for TableMem<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroed> Drop for TableMem<T> {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), self.layout) }
    }
}

impl<T: Zeroed> Clone for TableMem<T> {
    fn clone(&self) -> TableMem<T> {
        let mut c = TableMem::zeroed(self.len, self.advise);
        c.copy_from_slice(self);
        c
    }
}

impl<T: Zeroed> std::fmt::Debug for TableMem<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableMem")
            .field("len", &self.len)
            .field("bytes", &self.layout.size())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SAFETY: a `u64` of zero bytes is 0.
    unsafe impl Zeroed for u64 {}

    /// Small tables keep their size; large ones lie in whole 2 MiB pages when advised
    /// (the advice told exactly that memory), and the same size otherwise; every
    /// element starts at zero, and a clone is a copy in memory of its own.
    #[test]
    fn large_advised_tables_lie_in_whole_huge_pages() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static TOLD: AtomicUsize = AtomicUsize::new(0);
        fn advise(p: *const u8, len: usize) {
            assert_eq!(p as usize % (2 << 20), 0);
            TOLD.store(len, Ordering::Relaxed);
        }
        let small = TableMem::<u64>::zeroed(1024, Some(advise));
        assert_eq!(
            (small.layout.size(), TOLD.load(Ordering::Relaxed)),
            (8192, 0)
        );
        let mut big = TableMem::<u64>::zeroed(65536, Some(advise));
        assert_eq!(big.layout.size(), 2 << 20);
        assert_eq!(TOLD.load(Ordering::Relaxed), 2 << 20);
        assert!(big.iter().all(|&w| w == 0) && big.len() == 65536);
        big[65535] = 7;
        let copy = big.clone();
        assert_eq!((copy[65535], copy.as_ptr() != big.as_ptr()), (7, true));
        let plain = TableMem::<u64>::zeroed(65536, None);
        assert_eq!(plain.layout.size(), 512 << 10);
        // A size of whole huge pages already (4 MiB): advised as it is.
        TOLD.store(0, Ordering::Relaxed);
        let whole = TableMem::<u64>::zeroed(512 << 10, Some(advise));
        assert_eq!(whole.layout.size(), 4 << 20);
        assert_eq!(TOLD.load(Ordering::Relaxed), 4 << 20);
    }
}

//! The allocator of the `relay` binary, counting what it hands out: the
//! live heap (bytes asked for and not given back) and how many large
//! blocks were asked for. For the tests and benchmarks that measure
//! memory; a binary installs it as its global allocator:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: relay_allocator::counting::Counting = relay_allocator::counting::Counting;
//! ```
//!
//! The counters are process-wide, so a test that reads them should be the
//! only test of its binary (nothing else allocating meanwhile).

use crate::Mimalloc;
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

/// What counts as a large block: the size of a module's text, not of a
/// node (a tenth of the 10 MB module of the benchmarks).
pub const LARGE: usize = 1 << 20;

/// [`Mimalloc`] with counters (see the module docs).
pub struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static LARGE_BLOCKS: AtomicUsize = AtomicUsize::new(0);

fn allocated(size: usize) {
    LIVE.fetch_add(size as isize, Ordering::Relaxed);
    if size >= LARGE {
        LARGE_BLOCKS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded to mimalloc unchanged; only counters are
// updated besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        allocated(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { Mimalloc.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        allocated(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { Mimalloc.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { Mimalloc.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A block grown to a large size is a large block asked for.
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        allocated(new_size);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { Mimalloc.realloc(ptr, layout, new_size) }
    }
}

/// The live heap in bytes: what was asked of [`Counting`] and not given
/// back.
pub fn live_bytes() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// How many blocks of at least [`LARGE`] bytes were asked for so far
/// (allocated, or reallocated to that size).
pub fn large_blocks() -> usize {
    LARGE_BLOCKS.load(Ordering::Relaxed)
}

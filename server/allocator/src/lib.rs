//! The global allocator of the `relay` binary and of the benchmarks:
//! mimalloc, asked for plain blocks whenever the layout allows it.
//!
//! Syntax trees, IR nodes and types are many small blocks, so the allocator
//! is part of every measured time. The `mimalloc` crate sends every request
//! through `mi_malloc_aligned`, whose fast path only serves a block that
//! happens to be aligned and otherwise over-allocates; for the word-aligned
//! layouts that are nearly all of ours, `mi_malloc` serves the same blocks
//! directly (mimalloc's blocks are always word-aligned). InferType on a
//! real model runs about 7 % faster this way.
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: relay_allocator::Mimalloc = relay_allocator::Mimalloc;
//! relay_allocator::commit_lazily_before_main!();
//! ```
//!
//! [`counting::Counting`] is the same allocator counting what it hands out,
//! for the tests and benchmarks that measure the live heap.

pub mod census;
pub mod counting;
mod freed_block;

use libmimalloc_sys as ffi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

/// Every mimalloc block is aligned at least to a machine word.
const PLAIN_ALIGN: usize = std::mem::size_of::<usize>();

/// mimalloc as a [`GlobalAlloc`] (see the module docs).
pub struct Mimalloc;

// SAFETY: every block comes from mimalloc with at least the layout's
// alignment (plain calls only when the alignment is a word or less), and is
// released or resized by mimalloc.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= PLAIN_ALIGN {
            // SAFETY: the caller upholds `GlobalAlloc`'s contract for this call.
            unsafe { ffi::mi_malloc(layout.size()) as *mut u8 }
        } else {
            // SAFETY: the caller upholds `GlobalAlloc`'s contract for this call.
            unsafe { ffi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= PLAIN_ALIGN {
            // SAFETY: the caller upholds `GlobalAlloc`'s contract for this call.
            unsafe { ffi::mi_zalloc(layout.size()) as *mut u8 }
        } else {
            // SAFETY: the caller upholds `GlobalAlloc`'s contract for this call.
            unsafe { ffi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if purges_freed_blocks(layout.size()) {
            // SAFETY: the block is the caller's until `mi_free` below.
            unsafe { freed_block::purge(ptr, layout.size()) };
        }
        // SAFETY: the caller upholds `GlobalAlloc`'s contract for this call.
        unsafe { ffi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if purges_freed_blocks(layout.size()) {
            // mimalloc would free the old block itself, unpurged: move it
            // here, through `dealloc`.
            // SAFETY: the caller upholds `GlobalAlloc`'s contract; the new
            // layout is valid (`realloc`'s contract).
            unsafe {
                let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                let moved = self.alloc(new_layout);
                if !moved.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                return moved;
            }
        }
        if layout.align() <= PLAIN_ALIGN {
            // SAFETY: the caller upholds `GlobalAlloc`'s contract for this call.
            unsafe { ffi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8 }
        } else {
            // SAFETY: the caller upholds `GlobalAlloc`'s contract for this call.
            unsafe {
                ffi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

extern "C" {
    // Part of mimalloc's C library whatever the crate's features (the
    // crate declares them only with `extended`, and its option constants
    // are those of mimalloc 2's older numbering for the later options).
    fn mi_collect(force: bool);
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// `mi_option_arena_eager_commit` (the same position in mimalloc 2 and 3).
const MI_OPTION_ARENA_EAGER_COMMIT: std::ffi::c_int = 4;
/// `mi_option_purge_delay` (the same position in mimalloc 2 and 3).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Makes mimalloc commit its arena as pages are used rather than all at
/// once. With an eagerly committed arena (the default) a purge of free
/// pages only resets them (`MADV_FREE`), and they stay in the resident set
/// until the system runs short of memory; with a lazily committed one a
/// purge decommits them. The arena's commit mode is fixed when it is
/// reserved, at the first allocation of any size: call this before, from
/// a constructor that runs when the binary is loaded
/// ([`commit_lazily_before_main!`]).
pub fn commit_lazily() {
    // SAFETY: `mi_option_set` stores an option value, read by mimalloc when
    // it reserves an arena; callable at any time.
    unsafe { mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) }
}

/// [`commit_lazily`] as a load-time constructor (what
/// [`commit_lazily_before_main!`] registers).
pub extern "C" fn commit_lazily_at_load() {
    commit_lazily();
}

/// Calls [`commit_lazily`] when the binary is loaded, before `main` (the
/// runtime may allocate before `main` runs), so that memory mimalloc purges
/// leaves the resident set. Expanded in the binary's own crate: a
/// constructor left in this library could be dropped by the linker with
/// the object file that holds it.
#[macro_export]
macro_rules! commit_lazily_before_main {
    () => {
        #[cfg(target_os = "linux")]
        #[used]
        #[link_section = ".init_array"]
        static COMMIT_LAZILY_AT_LOAD: extern "C" fn() = $crate::commit_lazily_at_load;
    };
}

/// Makes mimalloc give free pages back to the system as soon as they fall
/// free, instead of after a delay (a second in mimalloc 3, and only while
/// the thread allocates). For a long-running process that replaces large
/// structures now and then (the language server); a short-lived command
/// would only pay the extra system calls. Together with [`commit_lazily`]
/// about 35 MB less resident memory for a 10 MB module open in the server
/// (229 → 195 MB).
///
/// It also makes freed blocks of 16–512 KiB leave the
/// resident set at once (see `purges_freed_blocks`).
pub fn return_memory_eagerly() {
    // SAFETY: as in `commit_lazily`; the delay is read at each purge.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) }
    PURGE_FREED_BLOCKS.store(true, Ordering::Relaxed);
}

/// Set by [`return_memory_eagerly`].
static PURGE_FREED_BLOCKS: AtomicBool = AtomicBool::new(false);

/// Whether a freed block of `size` bytes is purged before mimalloc takes it
/// back: the blocks mimalloc keeps in pages shared with other blocks (up to
/// 512 KiB, in pages of 512 KiB and 4 MiB) and that span whole system pages
/// besides their first. mimalloc purges a page only once all its blocks are
/// free, so the free space of a page that keeps one live block stays
/// resident: replaying edits of the 10 MB module as the language server
/// analyses them, the resident memory grew by 4.8 MB over the first hundred
/// edits (with a flat live heap), all of it free space in the pages of
/// 16–80 KiB blocks (the buffers of vectors and tables), where each edit's
/// long-lived blocks sit among the same edit's temporaries; with the purge,
/// by 0.4 MB (`relay_allocator::census`; the `analysis_memory` bench with
/// RELAY_BENCH_PAGES=1).
#[inline]
fn purges_freed_blocks(size: usize) -> bool {
    cfg!(target_os = "linux")
        && freed_block::PURGED.contains(&size)
        && PURGE_FREED_BLOCKS.load(Ordering::Relaxed)
}

/// Gives the free memory of the calling thread's heap (and free arena
/// memory) back to the system at once, instead of after mimalloc's purge
/// delay, which only passes while the thread allocates. For a thread that
/// has just dropped a large structure and is about to wait.
pub fn release_free_memory() {
    // SAFETY: `mi_collect` only inspects and releases the calling thread's
    // free pages; it is callable from any thread at any time.
    unsafe { mi_collect(true) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_have_the_requested_alignment_and_keep_their_bytes() {
        let allocator = Mimalloc;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 3, 8, 24, 40, 100, 1000, 70_000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero sizes; every block is used within its size
                // and freed once with the layout it was (re)allocated with.
                unsafe {
                    let p = allocator.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    p.write_bytes(0xab, size);
                    let q = allocator.realloc(p, layout, size * 2);
                    assert_eq!(q as usize % align, 0, "realloc: size {size} align {align}");
                    assert!((0..size).all(|i| *q.add(i) == 0xab));
                    allocator.dealloc(q, Layout::from_size_align(size * 2, align).unwrap());
                    let z = allocator.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0);
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    allocator.dealloc(z, layout);
                }
            }
        }
    }
}

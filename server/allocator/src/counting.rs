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
//!
//! With `RELAY_SYSTEM_ALLOCATOR=1` in the environment it forwards to the
//! system's allocator (glibc's malloc) instead: the control of the memory
//! benchmarks, which tells the allocator's share of a resident-memory
//! figure from the program's.

use crate::Mimalloc;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicU8, AtomicUsize, Ordering};

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

/// Which allocator [`Counting`] forwards to: not yet decided, mimalloc,
/// or the system's.
static BACKEND: AtomicU8 = AtomicU8::new(UNDECIDED);
const UNDECIDED: u8 = 0;
const MIMALLOC: u8 = 1;
const SYSTEM: u8 = 2;

extern "C" {
    // The C library's: reads the environment without allocating (the
    // choice is made at the first allocation, before `main`).
    fn getenv(name: *const std::ffi::c_char) -> *const std::ffi::c_char;
}

/// Whether blocks come from the system's allocator (see the module docs);
/// decided once, at the first allocation, so that every block is freed by
/// the allocator that made it.
fn system() -> bool {
    match BACKEND.load(Ordering::Relaxed) {
        MIMALLOC => false,
        SYSTEM => true,
        _ => {
            // SAFETY: a NUL-terminated name; the value is only tested
            // against null and read up to its NUL.
            let chosen = unsafe {
                let value = getenv(c"RELAY_SYSTEM_ALLOCATOR".as_ptr());
                !value.is_null() && *value == b'1' as std::ffi::c_char
            };
            let backend = if chosen { SYSTEM } else { MIMALLOC };
            // Before `main` there is one thread; a race would only
            // decide the same way twice.
            BACKEND.store(backend, Ordering::Relaxed);
            chosen
        }
    }
}

/// Gives the free memory of the calling thread back to the system:
/// [`crate::release_free_memory`], or with the system's allocator glibc's
/// `malloc_trim` (every arena of the process; nothing with another C
/// library).
pub fn release_free_memory() {
    if system() {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            extern "C" {
                fn malloc_trim(pad: usize) -> std::ffi::c_int;
            }
            // SAFETY: glibc's trim of its arenas; callable at any time.
            unsafe { malloc_trim(0) };
        }
    } else {
        crate::release_free_memory();
    }
}

// SAFETY: every call is forwarded unchanged to the one allocator chosen
// before the first allocation; only counters are updated besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        allocated(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe {
            if system() {
                System.alloc(layout)
            } else {
                Mimalloc.alloc(layout)
            }
        }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        allocated(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe {
            if system() {
                System.alloc_zeroed(layout)
            } else {
                Mimalloc.alloc_zeroed(layout)
            }
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe {
            if system() {
                System.dealloc(ptr, layout)
            } else {
                Mimalloc.dealloc(ptr, layout)
            }
        }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A block grown to a large size is a large block asked for.
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        allocated(new_size);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe {
            if system() {
                System.realloc(ptr, layout, new_size)
            } else {
                Mimalloc.realloc(ptr, layout, new_size)
            }
        }
    }
}

/// Whether [`Counting`] forwards to the system's allocator (see the module
/// docs).
pub fn uses_system_allocator() -> bool {
    system()
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

//! Purging a freed block: the system pages a block spans, except the one
//! holding its first word (where mimalloc links the free block into its
//! page's free list), are given back to the system before the block goes
//! back to mimalloc. They stay mapped and read as zeros when the block is
//! handed out again. Linux only (where `MADV_DONTNEED` drops the pages at
//! once); elsewhere nothing is purged.

use std::ops::RangeInclusive;
#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicUsize, Ordering};

/// The sizes of blocks worth purging: spanning at least four system pages
/// (one kept), and at most mimalloc's largest block that shares a page
/// with others (larger ones have pages of their own, purged by mimalloc
/// when they are freed).
pub const PURGED: RangeInclusive<usize> = (16 << 10)..=(512 << 10);

#[cfg(target_os = "linux")]
extern "C" {
    fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: std::ffi::c_int)
        -> std::ffi::c_int;
    fn sysconf(name: std::ffi::c_int) -> std::ffi::c_long;
}

#[cfg(target_os = "linux")]
/// `MADV_DONTNEED`: the pages leave the resident set at once (unlike
/// `MADV_FREE`, which waits until the system runs short).
const MADV_DONTNEED: std::ffi::c_int = 4;
#[cfg(target_os = "linux")]
/// `_SC_PAGESIZE` (Linux).
const SC_PAGESIZE: std::ffi::c_int = 30;

#[cfg(target_os = "linux")]
fn system_page_size() -> usize {
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    match PAGE.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: `sysconf` only reads a system constant.
            let size = unsafe { sysconf(SC_PAGESIZE) };
            let size = if size > 0 { size as usize } else { 4096 };
            PAGE.store(size, Ordering::Relaxed);
            size
        }
        size => size,
    }
}

/// Gives back the system pages of the block at `ptr` of `size` bytes but
/// the one holding its first word.
///
/// # Safety
/// The block must be the caller's (allocated and not yet freed) and unused
/// from here on: its bytes after the first system page become zeros.
pub unsafe fn purge(ptr: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    {
        let page = system_page_size();
        let start = (ptr as usize + std::mem::size_of::<usize>()).next_multiple_of(page);
        let end = (ptr as usize + size) & !(page - 1);
        if end > start {
            // SAFETY: whole system pages inside the caller's block; a failure
            // (which leaves the pages as they were) needs no handling.
            unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_DONTNEED) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, size);
}

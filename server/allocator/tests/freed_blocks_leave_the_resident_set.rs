//! A freed block of a purged size leaves the resident set even when its
//! page keeps other live blocks (the free space of such a page is what
//! made the language server's resident memory grow over edits). A binary
//! of its own: it reads the process's resident memory (Linux).

#![cfg(target_os = "linux")]

use relay_allocator::Mimalloc;
use std::alloc::{GlobalAlloc, Layout};

#[global_allocator]
static ALLOCATOR: Mimalloc = Mimalloc;

/// The process's resident memory in bytes (`/proc/self/statm`, Linux).
fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// Allocates 64 MB of 32 KiB blocks, writes every byte, frees all but one
/// block in eight (so every mimalloc page of such blocks, about fifteen of
/// them, keeps one or two) and returns how
/// much resident memory the frees gave back, with the kept blocks.
fn resident_given_back_by_frees() -> (usize, Vec<*mut u8>) {
    const SIZE: usize = 32 << 10;
    let layout = Layout::from_size_align(SIZE, 8).unwrap();
    let blocks: Vec<*mut u8> = (0..2048)
        .map(|_| {
            // SAFETY: a non-zero size; the block is written within its size.
            unsafe {
                let block = Mimalloc.alloc(layout);
                assert!(!block.is_null());
                block.write_bytes(0x5a, SIZE);
                block
            }
        })
        .collect();
    let before = resident();
    let mut kept = Vec::new();
    for (i, &block) in blocks.iter().enumerate() {
        if i % 8 == 0 {
            kept.push(block);
        } else {
            // SAFETY: each block freed once, with its layout.
            unsafe { Mimalloc.dealloc(block, layout) };
        }
    }
    relay_allocator::release_free_memory();
    (before.saturating_sub(resident()), kept)
}

#[test]
fn freed_blocks_in_pages_with_live_blocks_leave_the_resident_set() {
    relay_allocator::return_memory_eagerly();
    let (given_back, kept) = resident_given_back_by_frees();
    // 56 MB freed in pages that all keep live blocks: without the purge
    // none of it goes back; with it seven eighths (each freed block keeps
    // its first system page).
    assert!(
        given_back > 40 << 20,
        "the frees gave back only {:.1} MB",
        given_back as f64 / (1 << 20) as f64
    );
    // The kept blocks still hold what was written.
    for &block in &kept {
        // SAFETY: a live block of 32 KiB.
        unsafe { assert!((0..32 << 10).all(|i| *block.add(i) == 0x5a)) };
    }
    let layout = Layout::from_size_align(32 << 10, 8).unwrap();
    for block in kept {
        // SAFETY: the blocks not freed before.
        unsafe { Mimalloc.dealloc(block, layout) };
    }
    // A block of a purged size moved by `realloc` keeps its bytes.
    // SAFETY: non-zero sizes, each block used within its size and freed
    // once with its layout.
    unsafe {
        let block = Mimalloc.alloc(layout);
        block.write_bytes(3, 32 << 10);
        let grown = Mimalloc.realloc(block, layout, 64 << 10);
        assert!((0..32 << 10).all(|i| *grown.add(i) == 3));
        let shrunk = Mimalloc.realloc(
            grown,
            Layout::from_size_align(64 << 10, 8).unwrap(),
            20 << 10,
        );
        assert!((0..20 << 10).all(|i| *shrunk.add(i) == 3));
        Mimalloc.dealloc(shrunk, Layout::from_size_align(20 << 10, 8).unwrap());
    }
    // A purged block handed out again reads as written from then on.
    // SAFETY: a non-zero size, written and read within it, freed once.
    unsafe {
        let block = Mimalloc.alloc(layout);
        block.write_bytes(7, 32 << 10);
        assert!((0..32 << 10).all(|i| *block.add(i) == 7));
        Mimalloc.dealloc(block, layout);
    }
}

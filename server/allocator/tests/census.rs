//! The page census sees live blocks and the sparse pages frees leave
//! behind (a binary of its own: the census walks the heap while no other
//! thread allocates).

use relay_allocator::census::{page_census, PageCensus, SizeClass};
use relay_allocator::Mimalloc;
use std::alloc::{GlobalAlloc, Layout};

#[global_allocator]
static ALLOCATOR: Mimalloc = Mimalloc;

/// Blocks of 5,000 bytes: a size class nothing else here allocates.
const SIZE: usize = 5000;

fn class_of(census: &PageCensus) -> SizeClass {
    census
        .classes()
        .iter()
        .copied()
        .find(|c| (SIZE..SIZE + 512).contains(&c.block_size))
        .unwrap_or_default()
}

#[test]
fn counts_live_blocks_and_the_sparse_pages_frees_leave() {
    let layout = Layout::from_size_align(SIZE, 8).unwrap();
    let blocks: Vec<*mut u8> = (0..2048)
        // SAFETY: a non-zero size.
        .map(|_| unsafe { Mimalloc.alloc(layout) })
        .collect();
    let full = class_of(&page_census());
    assert!(full.used >= 2048 * SIZE, "{full:?}");
    assert!(full.committed >= full.used, "{full:?}");
    assert!(full.sparse_pages <= 1, "{full:?}");
    for (i, block) in blocks.iter().enumerate() {
        if i % 8 != 0 {
            // SAFETY: each block freed once, with its layout.
            unsafe { Mimalloc.dealloc(*block, layout) };
        }
    }
    let thinned = class_of(&page_census());
    assert!(thinned.used < full.used / 4, "{thinned:?}");
    assert!(
        thinned.pages > 1 && thinned.sparse_pages >= thinned.pages - 1,
        "{thinned:?}"
    );
    assert!(thinned.free() > 4 * thinned.used, "{thinned:?}");
    for block in blocks.iter().step_by(8) {
        // SAFETY: the blocks not freed above.
        unsafe { Mimalloc.dealloc(*block, layout) };
    }
    let census = page_census();
    assert_eq!(class_of(&census).used, 0);
    assert!(census.committed_from_system >= census.total().committed);
}

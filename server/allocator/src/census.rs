//! A census of mimalloc's pages: for every block size, how many pages hold
//! blocks, how many bytes of them are in use and how many are committed
//! (touched) but free, and how many pages are sparse (a quarter or less of
//! their blocks live). What the memory benchmarks print to tell a growing
//! resident set held by live blocks from one held by free space inside
//! pages that still hold a few live blocks (fragmentation), which no
//! purge can give back.
//!
//! The census walks every page of the process's heap without locking: call
//! it while no other thread allocates or frees (between two analyses, on
//! the thread that runs them, with the rayon pool idle).

use std::ffi::c_void;

/// What mimalloc reports of one page (`mi_heap_area_t`, mimalloc 3).
#[repr(C)]
struct HeapArea {
    blocks: *mut c_void,
    reserved: usize,
    committed: usize,
    used: usize,
    block_size: usize,
    full_block_size: usize,
    reserved1: *mut c_void,
}

type Visitor = extern "C" fn(
    heap: *const c_void,
    area: *const HeapArea,
    block: *mut c_void,
    block_size: usize,
    arg: *mut c_void,
) -> bool;

extern "C" {
    // In mimalloc's C library whatever the crate's features (as `mi_collect`).
    fn mi_heap_visit_blocks(
        heap: *mut c_void,
        visit_blocks: bool,
        visitor: Visitor,
        arg: *mut c_void,
    ) -> bool;
    fn mi_process_info(
        elapsed_msecs: *mut usize,
        user_msecs: *mut usize,
        system_msecs: *mut usize,
        current_rss: *mut usize,
        peak_rss: *mut usize,
        current_commit: *mut usize,
        peak_commit: *mut usize,
        page_faults: *mut usize,
    );
}

/// A page is sparse when at most this fraction of its blocks is live.
const SPARSE_PERCENT: usize = 25;

/// The pages of one block size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SizeClass {
    /// The size of a block (with mimalloc's padding).
    pub block_size: usize,
    /// Pages holding blocks of this size.
    pub pages: usize,
    /// Bytes in live blocks.
    pub used: usize,
    /// Bytes of blocks the pages have handed out at least once (touched,
    /// so resident unless the whole page is purged).
    pub committed: usize,
    /// Pages with at most a quarter of their touched blocks live.
    pub sparse_pages: usize,
    /// Touched bytes of those sparse pages.
    pub sparse_committed: usize,
}

impl SizeClass {
    /// Touched bytes not in a live block.
    pub fn free(&self) -> usize {
        self.committed - self.used
    }
}

/// mimalloc has fewer than 80 size classes (bins); a fixed table lets the
/// census run without allocating while it walks the heap.
const MAX_CLASSES: usize = 128;

/// The pages of the heap, by block size (see the module docs).
#[derive(Clone, Debug)]
pub struct PageCensus {
    classes: [SizeClass; MAX_CLASSES],
    len: usize,
    /// Bytes mimalloc has committed from the system (its own count).
    pub committed_from_system: usize,
}

impl PageCensus {
    /// The size classes that hold pages, smallest blocks first.
    pub fn classes(&self) -> &[SizeClass] {
        &self.classes[..self.len]
    }

    /// All size classes together.
    pub fn total(&self) -> SizeClass {
        self.classes()
            .iter()
            .fold(SizeClass::default(), |t, c| SizeClass {
                block_size: 0,
                pages: t.pages + c.pages,
                used: t.used + c.used,
                committed: t.committed + c.committed,
                sparse_pages: t.sparse_pages + c.sparse_pages,
                sparse_committed: t.sparse_committed + c.sparse_committed,
            })
    }

    fn add(&mut self, area: &HeapArea) {
        let size = area.full_block_size;
        let at = match self.classes[..self.len]
            .iter()
            .position(|c| c.block_size == size)
        {
            Some(at) => at,
            None if self.len < MAX_CLASSES => {
                self.len += 1;
                self.classes[self.len - 1].block_size = size;
                self.len - 1
            }
            None => return,
        };
        let class = &mut self.classes[at];
        let used = area.used * size;
        class.pages += 1;
        class.used += used;
        class.committed += area.committed;
        if used * 100 <= area.committed * SPARSE_PERCENT {
            class.sparse_pages += 1;
            class.sparse_committed += area.committed;
        }
    }
}

extern "C" fn visit_page(
    _heap: *const c_void,
    area: *const HeapArea,
    block: *mut c_void,
    _block_size: usize,
    arg: *mut c_void,
) -> bool {
    // Called once per page with no block (the census asks for no blocks).
    if block.is_null() && !area.is_null() {
        // SAFETY: `arg` is the census `page_census` passed, borrowed
        // mutably for the walk; `area` is valid during the call.
        unsafe { (*(arg as *mut PageCensus)).add(&*area) };
    }
    true
}

/// Counts the pages of the process's heap (see the module docs).
pub fn page_census() -> PageCensus {
    let mut census = PageCensus {
        classes: [SizeClass::default(); MAX_CLASSES],
        len: 0,
        committed_from_system: 0,
    };
    // SAFETY: the visitor only writes into `census`, which outlives the
    // walk, and allocates nothing; a null heap is the process's main heap.
    unsafe {
        mi_heap_visit_blocks(
            std::ptr::null_mut(),
            false,
            visit_page,
            &mut census as *mut PageCensus as *mut c_void,
        );
    }
    let mut unused = 0usize;
    let mut commit = 0usize;
    // SAFETY: every pointer is to a live local.
    unsafe {
        mi_process_info(
            &mut unused,
            &mut unused,
            &mut unused,
            &mut unused,
            &mut unused,
            &mut commit,
            &mut unused,
            &mut unused,
        );
    }
    census.committed_from_system = commit;
    census.classes[..census.len].sort_by_key(|c| c.block_size);
    census
}

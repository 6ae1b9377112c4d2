//! Where the memory of an open document goes: the live heap each part of
//! the server's state for one document holds (the text and its snapshot,
//! the syntax tree, the lowered and the typed module, the name index and
//! its lookup tables, the span index, the line index, what the incremental
//! checker keeps), counted by a global allocator that wraps the server's
//! own (mimalloc), and whether the live heap grows over many edits
//! analysed in process the way the server analyses them.
//!
//!     cargo bench -p relay-server --bench analysis_memory
//!
//! RELAY_BENCH_MEMORY_EDITS sets the number of edits analysed in process
//! on the 10 MB module (default 200), RELAY_BENCH_MEMORY_SITES the number
//! of places they go to (default 50, spread over the file),
//! RELAY_BENCH_MEMORY_REPORT_EVERY how often the live heap and the
//! resident memory are printed (default a fifth of the edits);
//! RELAY_BENCH_SKIP_RESNET=1 leaves out resnet152; RELAY_BENCH_PAGES=1
//! adds to each report a census of mimalloc's pages (live and touched
//! bytes, sparse pages, and the size classes whose touched bytes grew
//! most since the open: `relay_allocator::census`);
//! RELAY_SYSTEM_ALLOCATOR=1 runs the same edits on the system's allocator
//! (glibc's malloc, its free pages given back by `malloc_trim`), the
//! control that tells the allocator's share of the resident memory from
//! the program's. The edits are analysed
//! as the server analyses them: the newest analysis kept, the allocator
//! set up as `relay lsp` sets it and its free pages given back after each
//! edit, so the resident memory printed is comparable with the server's
//! (`lsp_latency`) less what only the server does (its threads, messages). After the edits it prints what each part of the state kept
//! between edits holds (dropped one after the other), and after the open a
//! census of the lowered and the typed module: nodes by kind, distinct
//! types and their dimensions, attrs objects and their fields, and the
//! sizes of the IR's node types (what to shrink first).
//!
//! The figures are live bytes (what was asked of the allocator and not
//! given back); resident memory adds the allocator's free pages and the
//! binary, see `lsp_latency` for the server's resident memory over stdio.

use relay_allocator::census::{page_census, PageCensus};
use relay_allocator::counting::{live_bytes, Counting};
use relay_passes::lower::LowerOptions;
use relay_server::lsp::analysis::{analyze_incrementally_with, Analysis, Incremental};
use relay_server::lsp::text::{Document, Encoding};
use std::sync::Arc;

/// The server's allocator, counting the bytes it has handed out.
#[global_allocator]
static ALLOCATOR: Counting = Counting;

// mimalloc set up as `relay lsp` sets it (arena committed lazily, before
// anything is allocated), so the resident memory printed along the edits
// is the server's.
relay_allocator::commit_lazily_before_main!();

fn live_mb() -> f64 {
    live_bytes() as f64 / (1 << 20) as f64
}

/// The process's resident memory in MB (Linux; 0 elsewhere).
fn resident_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// What the server's analysis thread does when it goes idle after an
/// analysis: its free pages and those of rayon's threads go back.
fn release_free_memory() {
    relay_allocator::counting::release_free_memory();
    rayon::broadcast(|_| relay_allocator::counting::release_free_memory());
}

/// With RELAY_BENCH_PAGES=1 (and mimalloc), the census of mimalloc's pages
/// and what grew since `base`.
fn print_pages(label: &str, base: Option<&PageCensus>) -> Option<PageCensus> {
    if std::env::var_os("RELAY_BENCH_PAGES").is_none()
        || relay_allocator::counting::uses_system_allocator()
    {
        return None;
    }
    let census = page_census();
    let total = census.total();
    let mb = |bytes: usize| bytes as f64 / (1 << 20) as f64;
    println!(
        "{label}:   pages {:>6}, live {:>7.1} MB, touched {:>7.1} MB, touched free {:>6.1} MB, sparse pages {:>5} ({:.1} MB touched), committed by mimalloc {:>7.1} MB",
        total.pages,
        mb(total.used),
        mb(total.committed),
        mb(total.free()),
        total.sparse_pages,
        mb(total.sparse_committed),
        mb(census.committed_from_system),
    );
    if let Some(base) = base {
        let before = |size: usize| {
            base.classes()
                .iter()
                .find(|c| c.block_size == size)
                .copied()
                .unwrap_or_default()
        };
        let mut grown: Vec<_> = census
            .classes()
            .iter()
            .map(|c| (c, before(c.block_size)))
            .filter(|(c, b)| c.committed != b.committed)
            .collect();
        grown.sort_by_key(|(c, b)| std::cmp::Reverse(c.committed as isize - b.committed as isize));
        for (c, b) in grown.iter().take(6) {
            println!(
                "{label}:     {:>7}-byte blocks: pages {:+}, live {:+.2} MB, touched {:+.2} MB (free {:.2} MB of {:.2}; {} sparse pages)",
                c.block_size,
                c.pages as isize - b.pages as isize,
                mb(c.used) - mb(b.used),
                mb(c.committed) - mb(b.committed),
                mb(c.free()),
                mb(c.committed),
                c.sparse_pages,
            );
        }
    }
    Some(census)
}

/// Prints the live heap `what` added since `before` and returns the new level.
fn step(label: &str, what: &str, before: f64) -> f64 {
    let now = live_mb();
    println!("{label}:   {what:<44} {:>8.1} MB", now - before);
    now
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What one open document holds, part by part, built as the server builds
/// it (one analysis, then the lazily built tables a first hover, a first
/// navigation request and a first completion add).
fn breakdown(label: &str, text: &str) -> (Document, Incremental, Analysis) {
    let start = live_mb();
    let document = Document::new(text, 1);
    let mut level = step(
        label,
        "text (the editor's copy, with its line starts)",
        start,
    );
    let snapshot: Arc<str> = document.text();
    level = step(label, "text snapshot (the same text: shared)", level);
    let kept = Incremental::default();
    let analysis = analyze_incrementally_with(
        label,
        snapshot,
        (1, Encoding::Utf16),
        &|| false,
        &kept,
        LowerOptions::LENIENT,
    )
    .expect("not obsolete");
    let analysed = live_mb();
    // The parts, measured by what dropping a clone of each gives back is
    // not possible (they share nodes), so each part is rebuilt alone.
    let parts = analysis_parts(label, &analysis);
    println!(
        "{label}:   {:<44} {:>8.1} MB  (parts built alone: {parts})",
        "one analysis, as kept by the server",
        analysed - level
    );
    level = analysed;
    let lowered_nodes = census(label, "lowered", &analysis.lowered, &Default::default());
    if let Some(typed) = &analysis.typed {
        census(label, "typed", typed, &lowered_nodes);
    }
    let _ = analysis.names.at(0.into());
    level = step(label, "name index lookup tables (navigation)", level);
    let _ = analysis.names.visible_at(0.into());
    level = step(label, "visible-name tables (completion)", level);
    let _ = analysis.index().len();
    level = step(label, "span index (hover)", level);
    println!(
        "{label}: total live heap for the document {:>8.1} MB ({} bytes of text)",
        level - start,
        text.len()
    );
    (document, kept, analysis)
}

/// The live heap of each part of an analysis when built on its own.
fn analysis_parts(label: &str, analysis: &Analysis) -> String {
    let mut out = Vec::new();
    let before = live_mb();
    let parse = relay_syntax::parse_module(analysis.text());
    out.push(format!("tree {:.1}", live_mb() - before));
    let before = live_mb();
    let lowered = relay_passes::lower::lower_parse(
        relay_passes::source::FileId(0),
        &parse,
        LowerOptions::LENIENT,
    )
    .expect("a source file");
    out.push(format!("lowered IR + names {:.1}", live_mb() - before));
    let before = live_mb();
    let names = lowered.names.clone();
    out.push(format!("names {:.1}", live_mb() - before));
    drop(names);
    let before = live_mb();
    let (typed, diagnostics) = relay_passes::infer::infer_module(&lowered.module);
    drop(diagnostics);
    out.push(format!("typed IR {:.1}", live_mb() - before));
    drop((typed, lowered, parse));
    let _ = label;
    out.join(", ")
}

/// Analyses `edits` edits (a space inserted and deleted again at sites
/// spread over the file), printing the live heap as it goes.
fn edits_in_process(
    label: &str,
    mut document: Document,
    kept: Incremental,
    mut last: Option<Analysis>,
    edits: usize,
) {
    use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};
    // Not a snapshot held over the edits: it would count as growth.
    let lines: Vec<u32> = document
        .text()
        .split('\n')
        .enumerate()
        .filter(|(_, l)| l.starts_with("  %"))
        .map(|(i, _)| i as u32)
        .collect();
    let site_count = env_usize("RELAY_BENCH_MEMORY_SITES", 50);
    let step_by = (lines.len() / site_count).max(1);
    let sites: Vec<u32> = lines
        .into_iter()
        .step_by(step_by)
        .take(site_count)
        .collect();
    release_free_memory();
    let (base, base_resident) = (live_mb(), resident_mb());
    println!(
        "{label}: after open: live heap {base:>8.1} MB, resident {base_resident:>8.1} MB ({} edit sites)",
        sites.len()
    );
    let base_pages = print_pages(label, None);
    let report_every = env_usize("RELAY_BENCH_MEMORY_REPORT_EVERY", (edits / 5).max(1));
    for i in 0..edits {
        let at = Position::new(sites[(i / 2) % sites.len()], 2);
        let change = TextDocumentContentChangeEvent {
            range: Some(if i % 2 == 0 {
                Range::new(at, at)
            } else {
                Range::new(at, Position::new(at.line, 3))
            }),
            range_length: None,
            text: if i % 2 == 0 {
                " ".into()
            } else {
                String::new()
            },
        };
        document.apply_change(&change, Encoding::Utf16);
        let analysis = analyze_incrementally_with(
            label,
            document.text(),
            (i as i32 + 2, Encoding::Utf16),
            &|| false,
            &kept,
            LowerOptions::LENIENT,
        )
        .expect("not obsolete");
        let _ = analysis.index().len();
        // The server keeps the newest analysis and drops the one before,
        // then, idle, gives free pages back.
        last = Some(analysis);
        release_free_memory();
        if (i + 1) % report_every == 0 {
            println!(
                "{label}: after {:>6} edits: live heap {:>8.1} MB ({:+.1}), resident {:>8.1} MB ({:+.1})",
                i + 1,
                live_mb(),
                live_mb() - base,
                resident_mb(),
                resident_mb() - base_resident,
            );
            print_pages(label, base_pages.as_ref());
        }
    }
    drop(last);
    teardown(label, "after the edits", document, kept);
}

/// What each part of a document's kept state holds: the live heap dropping
/// it gives back, part by part (the analysis itself already dropped).
fn teardown(label: &str, when: &str, document: Document, kept: Incremental) {
    let mut level = live_mb();
    let mut freed = |what: &str| {
        let now = live_mb();
        println!("{label}: {when}: {what:<40} holds {:>8.1} MB", level - now);
        level = now;
    };
    *kept.checker.lock().unwrap() = Default::default();
    freed("type checker (per-function results)");
    *kept.lowering.lock().unwrap() = Default::default();
    freed("incremental lowering");
    kept.clear();
    freed("last parse and line index");
    drop(document);
    freed("the editor's text");
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs benches as tests: nothing to do.
        return;
    }
    relay_allocator::return_memory_eagerly();
    let resnet = relay_test_support::tvm::expected_root().join("models/resnet152.relay");
    if std::env::var_os("RELAY_BENCH_SKIP_RESNET").is_none() {
        match std::fs::read_to_string(&resnet) {
            Ok(text) => {
                let (document, kept, analysis) = breakdown("resnet152", &text);
                edits_in_process("resnet152", document, kept, Some(analysis), 200);
            }
            Err(e) => println!(
                "!!!!!! SKIPPED resnet152: {} is not readable ({e})",
                resnet.display()
            ),
        }
    }
    let large = relay_test_support::generate::resnet_module_of_size(10 << 20);
    let (document, kept, analysis) = breakdown("generated-10MB", &large);
    drop(large);
    edits_in_process(
        "generated-10MB",
        document,
        kept,
        Some(analysis),
        env_usize("RELAY_BENCH_MEMORY_EDITS", 200),
    );
}

/// How many nodes, types and attribute fields a module holds (distinct
/// allocations, by address), with the size of each kind of object.
fn census(
    label: &str,
    which: &str,
    module: &relay_passes::ir::IRModule,
    before: &std::collections::HashSet<usize>,
) -> std::collections::HashSet<usize> {
    use relay_passes::ir::{AttrValue, Dim, ExprKind, ExprNode, Type, TypeKind};
    use std::collections::HashSet;
    use std::mem::size_of;
    let mut nodes = HashSet::new();
    let mut types = HashSet::new();
    let mut attrs = HashSet::new();
    let (mut fields, mut dims, mut by_kind) = (0usize, 0usize, [0usize; 8]);
    let (mut shared, mut op_func_types, mut var_type_shared) = (0, 0, 0);
    let mut type_of = |ty: &Type, dims: &mut usize| {
        if types.insert(type_addr(ty)) {
            if let TypeKind::Tensor(t) = ty.kind() {
                *dims += t.shape.len();
            }
            if let TypeKind::Tuple(fs) = ty.kind() {
                for f in fs {
                    if let TypeKind::Tensor(t) = f.kind() {
                        *dims += t.shape.len();
                    }
                }
            }
        }
    };
    let mut stack: Vec<_> = module.functions().map(|(_, f)| f.expr().clone()).collect();
    while let Some(e) = stack.pop() {
        if !nodes.insert(e.addr()) {
            continue;
        }
        if before.contains(&e.addr()) {
            shared += 1;
        }
        if let Some(t) = e.checked_type() {
            type_of(t, &mut dims);
            match (e.kind(), t.kind()) {
                (ExprKind::Op(_), TypeKind::Func(_)) => op_func_types += 1,
                (ExprKind::Var(v), _)
                    if v.type_annotation.as_ref().is_some_and(|a| a.ptr_eq(t)) =>
                {
                    var_type_shared += 1
                }
                _ => {}
            }
        }
        let k = match e.kind() {
            ExprKind::Var(v) => {
                if let Some(t) = &v.type_annotation {
                    type_of(t, &mut dims);
                }
                0
            }
            ExprKind::Call(c) => {
                if let Some(a) = &c.attrs {
                    if attrs.insert(a.fields().as_ptr() as usize) {
                        fields += a.fields().len();
                    }
                }
                1
            }
            ExprKind::TupleGetItem { .. } => 2,
            ExprKind::Op(_) => 3,
            ExprKind::Function(_) => 4,
            ExprKind::GlobalVar(_) => 5,
            ExprKind::Constant(_) => 6,
            _ => 7,
        };
        by_kind[k] += 1;
        relay_server::lsp::analysis::push_children(&e, &mut stack);
    }
    println!(
        "{label}: census {which}: {} nodes (var {}, call {}, tuple item {}, op {}, fn {}, global {}, const {}, other {}), {} types ({} dims), {} attrs objects ({} fields)",
        nodes.len(), by_kind[0], by_kind[1], by_kind[2], by_kind[3], by_kind[4], by_kind[5], by_kind[6], by_kind[7],
        types.len(), dims, attrs.len(), fields
    );
    println!("{label}: census {which}: {shared} nodes of the one before, {op_func_types} ops with a function type, {var_type_shared} vars typed by their annotation");
    println!(
        "{label}: census sizes: ExprNode {} ExprKind {} Option<Span> {} TypeKind {} Dim {} AttrValue {} field {}",
        size_of::<ExprNode>(), size_of::<ExprKind>(), size_of::<Option<relay_passes::source::Span>>(),
        size_of::<TypeKind>(), size_of::<Dim>(), size_of::<AttrValue>(), size_of::<(String, AttrValue)>()
    );
    nodes
}

fn type_addr(ty: &relay_passes::ir::Type) -> usize {
    ty.kind() as *const _ as usize
}

//! Editing a document does not make its analysis state grow: after every
//! function has been edited (and so re-parsed, lowered and inferred again)
//! once, more rounds of the same edits leave the live heap where the first
//! round left it. (The first round itself may end a little above the open:
//! the thread that analyses an edit builds its own bounded per-thread
//! caches, where the open inferred on rayon's threads, and a re-parsed
//! definition's green tree shares tokens and small nodes only within
//! itself, not with the rest of the tree as a full parse does; on the
//! 10 MB module of the `analysis_memory` bench the first round ends below
//! the open.)
//!
//! What the document keeps between edits ([`Incremental`]: the last parse
//! and line index, the lowering with its interner, the type checker's
//! per-function results) and the newest analysis are what the server
//! holds per open document; anything kept per version (old trees, old
//! results, maps that only grow) would show here. The live heap is counted
//! by a global allocator wrapping the server's; this file holds one test so
//! that nothing else allocates meanwhile.

use relay_allocator::counting::{live_bytes, Counting};
use relay_passes::lower::LowerOptions;
use relay_server::lsp::analysis::{analyze_incrementally_with, Analysis, Incremental};
use relay_server::lsp::text::{Document, Encoding};
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};

/// The server's allocator, counting the bytes it has handed out.
#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    live_bytes()
}

/// Analyses the document's current text as the server does, reading the
/// span index (hover) as a first request would.
fn analyse(document: &Document, kept: &Incremental) -> Analysis {
    let analysis = analyze_incrementally_with(
        "edits.relay",
        document.text(),
        (document.version, Encoding::Utf16),
        &|| false,
        kept,
        LowerOptions::LENIENT,
    )
    .expect("not obsolete");
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics.first());
    let _ = analysis.index().len();
    analysis
}

#[test]
fn repeated_edits_of_every_function_keep_the_live_heap_level() {
    const FUNCTIONS: usize = 6;
    let text = relay_test_support::generate::resnet_module(FUNCTIONS, [1, 1, 1, 1]);
    // One site per network: its first graph binding, where a space is
    // inserted and deleted again (the text is back where it was after
    // each pair).
    let lines: Vec<&str> = text.split('\n').collect();
    let sites: Vec<u32> = (0..lines.len())
        .filter(|&i| i > 0 && lines[i].starts_with("  %") && lines[i - 1].starts_with("def @net"))
        .map(|i| i as u32)
        .collect();
    assert_eq!(sites.len(), FUNCTIONS, "one site per network");

    drop(lines);
    let mut document = Document::new(&text, 1);
    drop(text);
    let kept = Incremental::default();
    let mut last = analyse(&document, &kept);
    let after_open = live();

    let round = |document: &mut Document, last: &mut Analysis| {
        for &line in &sites {
            for insert in [true, false] {
                let at = Position::new(line, 2);
                let change = TextDocumentContentChangeEvent {
                    range: Some(Range::new(
                        at,
                        if insert { at } else { Position::new(line, 3) },
                    )),
                    range_length: None,
                    text: if insert { " ".into() } else { String::new() },
                };
                document.apply_change(&change, Encoding::Utf16);
                document.version += 1;
                // The server keeps the newest analysis and drops the one
                // before.
                *last = analyse(document, &kept);
            }
        }
        live()
    };
    let after_first_round = round(&mut document, &mut last);
    let mut after_rounds = Vec::new();
    for _ in 0..3 {
        after_rounds.push(round(&mut document, &mut last));
    }
    let kib = |bytes: isize| bytes as f64 / 1024.0;
    let report =
        format!(
        "live heap: {:.1} KiB after the open, {:.1} KiB after one round of edits, then {:?} KiB",
        kib(after_open),
        kib(after_first_round),
        after_rounds.iter().map(|&b| kib(b).round()).collect::<Vec<_>>()
    );
    // Nothing accumulates per edit: every later round ends where the first
    // did (a few KiB of slack for lazily grown tables of their own size).
    for &level in &after_rounds {
        assert!(level <= after_first_round + 16 * 1024, "{report}");
    }
    drop(last);
    println!("{report}");
}

//! The editor's incremental analysis (re-parse, lowering and type inference
//! of only what an edit changed) equals a full analysis of the same text,
//! on random edits: the tree, every diagnostic, the name index, every IR
//! node's range and type (what hover and inlay hints read) and hover at
//! random places and at the edit. The name index, assembled from one part
//! per definition, also equals a whole lowering's (one part), in its
//! definitions, references and lookups by offset.
//!
//! Each edit applies to the text of the previous one, with the same kept
//! state, as in the editor. `RELAY_EQUIVALENCE_EDITS` sets the number of
//! edits per module (default 1,000; 3,000 were run for issue 19).

use relay_passes::lower::{lower_module_with, LowerOptions, NameIndex};
use relay_passes::printer::print_type;
use relay_passes::source::FileId;
use relay_server::lsp::analysis::{analyze, analyze_incrementally_with, Analysis, Incremental};
use relay_server::lsp::features::hover::hover;
use relay_server::lsp::text::Encoding;
use relay_syntax::TextSize;
use relay_test_support::edits::{ceil_char_boundary, keystroke, random_offset};
use relay_test_support::fixtures::HANDWRITTEN_MODULE as HANDWRITTEN;
use relay_test_support::rng::Rng;
use std::sync::{Arc, PoisonError};

/// What an edit inserts besides keystrokes: names, bindings, brackets,
/// whole definitions. Not `syntax/tests/reparse.rs`'s snippets, which break
/// tokens and definitions: most of these keep the syntax whole, so that
/// the lowering and inference of one definition are compared.
const SNIPPETS: &[&str] = &[
    "%0",
    "%4",
    "%x",
    "@id",
    "@main",
    "(",
    ")",
    "{",
    "}",
    ";",
    "add(%a, %b)",
    "let %v = 1;",
    "%9 = 1f;",
    "free_var %q: float32;",
    "def @g() { 1 }\n",
    "Cons(1, Nil)",
    "nn.relu(",
    "-> float32",
    "\n",
];

/// A random edit near a real keystroke: mostly one character typed or
/// deleted, sometimes a snippet, a paste or a longer deletion.
fn pick(rng: &mut Rng, text: &str) -> (std::ops::Range<usize>, String) {
    let choice = rng.below(10);
    if choice < 6 {
        // A character typed (two times in three) or deleted.
        return keystroke(rng, text);
    }
    let at = random_offset(rng, text);
    match choice {
        6..=7 => (at..at, SNIPPETS[rng.below(SNIPPETS.len())].to_string()),
        8 => {
            let from = random_offset(rng, text);
            let to = ceil_char_boundary(text, from + rng.below(120));
            (at..at, text[from..to].to_string())
        }
        _ => (
            at..ceil_char_boundary(text, at + rng.below(40) + 1),
            String::new(),
        ),
    }
}

/// Everything the editor reads of an analysis, in comparable form.
fn summary_of_index(analysis: &Analysis) -> Vec<(u32, u32, String)> {
    let mut entries: Vec<(u32, u32, String)> = analysis
        .index()
        .entries()
        .map(|(range, expr)| {
            let ty = expr
                .checked_type()
                .map_or_else(|| "-".to_string(), print_type);
            (range.start().into(), range.end().into(), ty)
        })
        .collect();
    entries.sort();
    entries
}

fn names_of(analysis: &Analysis) -> Vec<String> {
    describe_names(&analysis.names)
}

fn describe_names(names: &NameIndex) -> Vec<String> {
    names
        .definitions()
        .map(|(id, d)| format!("{d:?} {:?}", names.references(id)))
        .collect()
}

/// What navigation and completion read of a name index at `offset`.
fn lookups_at(names: &NameIndex, offset: TextSize) -> String {
    format!(
        "{:?} {:?}",
        names.at(offset),
        names.visible_names_at(offset).take(50).collect::<Vec<_>>()
    )
}

/// The name index of a whole lowering, as its recorder made it (one part;
/// the editor's is assembled from one part per definition, moved).
fn whole_lowering_names(analysis: &Analysis) -> Option<NameIndex> {
    let root = analysis.parse.source_file()?;
    let lowered = lower_module_with(FileId(0), &root, LowerOptions::LENIENT);
    Some(lowered.names)
}

/// Asserts the lists are equal, showing the first difference.
fn same<T: PartialEq + std::fmt::Debug>(a: &[T], b: &[T], what: &str, context: &str) {
    if a == b {
        return;
    }
    let i = (0..a.len().max(b.len()))
        .find(|&i| a.get(i) != b.get(i))
        .unwrap_or(0);
    panic!(
        "{context}: {what} differ at {i} (of {} and {})\nincremental: {:?}\nfull:        {:?}",
        a.len(),
        b.len(),
        a.get(i),
        b.get(i)
    );
}

fn check(incremental: &Analysis, full: &Analysis, rng: &mut Rng, edit_at: usize, context: &str) {
    assert!(
        incremental.parse == full.parse,
        "{context}: the trees differ"
    );
    let diagnostics =
        |a: &Analysis| -> Vec<String> { a.diagnostics.iter().map(|d| format!("{d:?}")).collect() };
    same(
        &diagnostics(incremental),
        &diagnostics(full),
        "the diagnostics",
        context,
    );
    same(
        &names_of(incremental),
        &names_of(full),
        "the name indexes",
        context,
    );
    let whole = whole_lowering_names(full);
    if let Some(whole) = &whole {
        same(
            &names_of(incremental),
            &describe_names(whole),
            "the name indexes (against a whole lowering's)",
            context,
        );
    }
    same(
        &summary_of_index(incremental),
        &summary_of_index(full),
        "the IR's ranges or types",
        context,
    );
    let text = full.text();
    let mut offsets = vec![edit_at.min(text.len())];
    offsets.extend((0..8).map(|_| rng.below(text.len() + 1)));
    for offset in offsets {
        let offset = TextSize::from(offset as u32);
        assert_eq!(
            hover(incremental, offset),
            hover(full, offset),
            "{context}: hover at {offset:?} differs"
        );
        if let Some(whole) = &whole {
            assert_eq!(
                lookups_at(&incremental.names, offset),
                lookups_at(whole, offset),
                "{context}: the names at {offset:?} differ"
            );
        }
    }
}

/// Replays `steps` random edits on `base` (from the base again every
/// `restart` edits); returns how many were lowered by definition.
fn run(base: &str, seed: u64, steps: usize, restart: usize) -> usize {
    let mut rng = Rng(seed);
    let mut text = base.to_string();
    let mut kept = Incremental::default();
    let mut by_definition = 0;
    let analyse = |text: &str, version: i32, kept: &Incremental| {
        analyze_incrementally_with(
            "m.relay",
            Arc::from(text),
            (version, Encoding::Utf16),
            &|| false,
            kept,
            LowerOptions::LENIENT,
        )
        .expect("an analysis")
    };
    analyse(&text, 0, &kept);
    for step in 0..steps {
        if step > 0 && step % restart == 0 {
            text = base.to_string();
            kept = Incremental::default();
            analyse(&text, 0, &kept);
        }
        let (range, insert) = pick(&mut rng, &text);
        let edit_at = range.start;
        let context = format!("seed {seed} step {step}: replace {range:?} with {insert:?}");
        text.replace_range(range, &insert);
        let version = step as i32 + 1;
        let incremental = analyse(&text, version, &kept);
        let relowered = kept
            .lowering
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last_relowered();
        if relowered.is_some() {
            by_definition += 1;
        }
        let full = analyze(
            "m.relay",
            Arc::from(text.as_str()),
            version,
            Encoding::Utf16,
            &|| false,
        )
        .expect("an analysis");
        check(&incremental, &full, &mut rng, edit_at, &context);
    }
    by_definition
}

fn edits() -> usize {
    std::env::var("RELAY_EQUIVALENCE_EDITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

#[test]
fn incremental_analysis_equals_full_on_a_handwritten_module() {
    let steps = edits();
    let by_definition = run(HANDWRITTEN, 19, steps, 8);
    println!("{steps} edits, {by_definition} lowered by definition");
    // Random keys in a small, dense module mostly break its syntax (then
    // it is parsed and lowered whole); enough stay inside a definition to
    // compare both paths.
    assert!(by_definition * 10 > steps, "{by_definition} of {steps}");
}

#[test]
fn incremental_analysis_equals_full_on_generated_networks() {
    let base = relay_test_support::generate::resnet_module(3, [1, 1, 1, 1]);
    let steps = edits();
    let by_definition = run(&base, 152, steps, 60);
    println!("{steps} edits, {by_definition} lowered by definition");
    // Most edits stay inside one definition: the incremental path is the
    // one mostly compared.
    assert!(by_definition * 3 > steps, "{by_definition} of {steps}");
}

/// An edit inside one definition lowers only that one, and the others keep
/// their IR nodes (the same `Function`), even those it moved.
#[test]
fn an_edit_inside_one_definition_lowers_only_it() {
    let base = relay_test_support::generate::resnet_module(3, [1, 1, 1, 1]);
    let kept = Incremental::default();
    let analyse = |text: &str, version: i32| {
        analyze_incrementally_with(
            "m.relay",
            Arc::from(text),
            (version, Encoding::Utf16),
            &|| false,
            &kept,
            LowerOptions::LENIENT,
        )
        .expect("an analysis")
    };
    let before = analyse(&base, 1);
    // A space in the first network's body: the two after it move.
    let at = base.find("\n  %").expect("a binding") + 3;
    let mut edited = base.clone();
    edited.insert(at, ' ');
    let after = analyse(&edited, 2);
    let relowered = kept
        .lowering
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .last_relowered();
    assert_eq!(relowered, Some(1));
    for name in ["net1", "net2", "main"] {
        let old = before.lowered.function(name).expect("the function");
        let new = after.lowered.function(name).expect("the function");
        assert!(old.expr().ptr_eq(new.expr()), "@{name} was lowered again");
    }
    let old = before.lowered.function("net0").expect("the function");
    let new = after.lowered.function("net0").expect("the function");
    assert!(!old.expr().ptr_eq(new.expr()));
}

//! Incremental re-parsing gives exactly what a full parse gives (tree and
//! errors), on random edits of realistic modules (11,000 in all): insertions of tokens and
//! of text that breaks tokens (quotes, comment openers, brackets),
//! deletions, pastes of other parts of the text, edits across definition
//! boundaries. Each edit is applied to the result of the previous one, so
//! errors carried over from earlier edits are checked too.

use relay_syntax::{
    parse_module, parse_with, reparse_module, reparse_module_with, Entry, Parse, ParseOptions,
    Reparsed, TextEdit, TextRange, TextSize,
};
use relay_test_support::edits::{ceil_char_boundary, keystroke, random_offset};
use relay_test_support::fixtures::HANDWRITTEN_MODULE as HANDWRITTEN;
/// Deterministic: a failure names its seed and step.
use relay_test_support::rng::Rng;

/// Text inserted by the edits: whole tokens, pieces that change how the
/// text around them lexes, and constructs that open or close definitions.
/// Not `server/tests/incremental_analysis.rs`'s snippets, which mostly keep
/// the syntax whole (the analysis of names and types is what they test).
const SNIPPETS: &[&str] = &[
    " ",
    "\n",
    "x",
    "%",
    "%x",
    "@main",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    "=",
    "\"",
    "/*",
    "*/",
    "//",
    "#[",
    "meta[",
    "1",
    "2.5f",
    "add(%x, %y)",
    "def",
    "def @g() { 1 }",
    "}\ndef @h(%q) {",
    "fn (%z) { %z }",
    "let %v = 1;",
    "match",
    "=>",
    "-> float32",
    "type",
    "extern type E",
    "#[metadata]\n{}",
    "\u{e9}",
    "free_var",
];

fn check(
    old_parse: &Parse,
    new_text: &str,
    edit: TextEdit,
    (options, context): (ParseOptions, &str),
) -> Reparsed {
    let (incremental, how) = reparse_module_with(old_parse, edit, new_text, options);
    let full = parse_with(new_text, Entry::Module, options);
    assert_eq!(
        incremental.leniencies(),
        full.leniencies(),
        "{context}: the leniencies differ"
    );
    assert_eq!(
        incremental.syntax_node().to_string(),
        new_text,
        "{context}: the incremental tree is not the text"
    );
    if incremental != full {
        let (a, b) = (incremental.debug_dump(), full.debug_dump());
        let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
        let first = (0..a.len().max(b.len()))
            .find(|&i| a.get(i) != b.get(i))
            .unwrap_or(0);
        let around = |lines: &[&str]| {
            lines[first.saturating_sub(3)..(first + 3).min(lines.len())].join("\n")
        };
        panic!(
            "{context} ({how:?}): incremental parse differs at dump line {first}\n--- incremental\n{}\n--- full\n{}",
            around(&a),
            around(&b)
        );
    }
    how
}

/// A random edit of `text` at character boundaries: what [`typing`] or
/// [`mangling`] picks.
type EditPicker = fn(&mut Rng, &str) -> (TextRange, String);

/// A keystroke: one character typed or deleted (spaces, names, digits,
/// punctuation of argument lists).
fn typing(rng: &mut Rng, text: &str) -> (TextRange, String) {
    let (range, insert) = keystroke(rng, text);
    (text_range(range), insert)
}

fn text_range(range: std::ops::Range<usize>) -> TextRange {
    TextRange::new(
        TextSize::from(range.start as u32),
        TextSize::from(range.end as u32),
    )
}

/// Anything: snippets, deletions, pastes, across boundaries.
fn mangling(rng: &mut Rng, text: &str) -> (TextRange, String) {
    let start = random_offset(rng, text);
    let (delete_end, insert) = match rng.below(10) {
        // Insert a snippet.
        0..=4 => (start, SNIPPETS[rng.below(SNIPPETS.len())].to_string()),
        // Delete a few bytes (or a long stretch, across definitions).
        5..=6 => {
            let len = if rng.below(4) == 0 {
                rng.below(400)
            } else {
                rng.below(8) + 1
            };
            (ceil_char_boundary(text, start + len), String::new())
        }
        // Paste another part of the text.
        7..=8 => {
            let from = random_offset(rng, text);
            let to = ceil_char_boundary(text, from + rng.below(200));
            (start, text[from..to].to_string())
        }
        // Replace a character.
        _ => (
            ceil_char_boundary(text, start + 1),
            SNIPPETS[rng.below(SNIPPETS.len())].to_string(),
        ),
    };
    (text_range(start..delete_end), insert)
}

/// Applies `steps` random edits to `base`, checking each; restarts from
/// `base` every `restart` steps so the text stays near a real module.
/// Returns how many edits were re-parsed incrementally.
fn run(base: &str, pick: EditPicker, seed: u64, steps: usize, restart: usize) -> usize {
    run_with(ParseOptions::STRICT, base, pick, seed, (steps, restart))
}

/// [`run`], parsing with `options`.
fn run_with(
    options: ParseOptions,
    base: &str,
    pick: EditPicker,
    seed: u64,
    (steps, restart): (usize, usize),
) -> usize {
    let mut rng = Rng(seed);
    let mut text = base.to_string();
    let mut parse = parse_with(&text, Entry::Module, options);
    let mut incremental = 0;
    for step in 0..steps {
        if step % restart == 0 {
            text = base.to_string();
            parse = parse_with(&text, Entry::Module, options);
        }
        let (range, insert) = pick(&mut rng, &text);
        let mut new_text = text.clone();
        new_text.replace_range(std::ops::Range::<usize>::from(range), &insert);
        let edit = TextEdit {
            delete: range,
            insert_len: TextSize::of(insert.as_str()),
        };
        let context = format!("seed {seed} step {step}: replace {range:?} with {insert:?}");
        let how = check(&parse, &new_text, edit, (options, &context));
        if matches!(how, Reparsed::Item { .. }) {
            incremental += 1;
        }
        // The server finds the edit by comparing texts: check that too.
        if let Some(found) = TextEdit::between(&text, &new_text) {
            check(
                &parse,
                &new_text,
                found,
                (options, &format!("{context} (edit found by diff)")),
            );
        }
        parse = reparse_module_with(&parse, edit, &new_text, options).0;
        text = new_text;
    }
    incremental
}

/// 6,000 random edits of a hand-written module with every kind of item.
#[test]
fn incremental_equals_full_parse_on_a_handwritten_module() {
    let mut incremental = 0;
    for seed in 0..6 {
        incremental += run(HANDWRITTEN, mangling, seed, 1000, 25);
    }
    // Random snippets break most definitions (and the breakage piles up
    // until the restart), so a good part of the edits are parsed in full;
    // the rest must still take the incremental path.
    assert!(
        incremental > 500,
        "only {incremental} of 6000 edits were incremental"
    );
}

/// 2,000 random edits of generated ResNet networks (graph bindings, type
/// comments, attributes).
#[test]
fn incremental_equals_full_parse_on_generated_networks() {
    let base = relay_test_support::generate::resnet_module(2, [1, 1, 1, 1]);
    let mut incremental = 0;
    for seed in 100..102 {
        incremental += run(&base, mangling, seed, 1000, 50);
    }
    assert!(
        incremental > 100,
        "only {incremental} of 2000 edits were incremental"
    );
}

/// 3,000 keystrokes (typed or deleted characters) in both modules: most
/// land inside a definition and keep its boundaries.
#[test]
fn incremental_equals_full_parse_on_keystrokes() {
    let generated = relay_test_support::generate::resnet_module(2, [1, 1, 1, 1]);
    let mut incremental = 0;
    for (seed, base) in [
        (200, HANDWRITTEN),
        (201, generated.as_str()),
        (202, HANDWRITTEN),
    ] {
        incremental += run(base, typing, seed, 1000, 40);
    }
    assert!(
        incremental > 1000,
        "only {incremental} of 3000 keystrokes were incremental"
    );
}

/// 2,000 edits read leniently (the editor's default): a clean module still
/// re-parses by definition; frontend-style names typed into it (`%conv1.w`),
/// a header removed, an old header — every leniency — come out as a full
/// lenient parse reports them.
#[test]
fn incremental_equals_full_parse_when_read_leniently() {
    let mut incremental = 0;
    for seed in 300..302 {
        incremental += run_with(
            ParseOptions::LENIENT,
            HANDWRITTEN,
            lenient_typing,
            seed,
            (1000, 40),
        );
    }
    // Once a leniency is in the text (one edit in five adds one), every
    // edit until the next restart is parsed in full: fewer incremental
    // re-parses than in the strict runs, but never none.
    assert!(
        incremental > 150,
        "only {incremental} of 2000 lenient edits were incremental"
    );
}

/// Keystrokes, and now and then text only a lenient reading accepts.
fn lenient_typing(rng: &mut Rng, text: &str) -> (TextRange, String) {
    const LENIENT_SNIPPETS: &[&str] = &[".weight", ":0", "%1_bn.gamma", "#[version = \"0.0.4\"]"];
    if rng.below(5) == 0 {
        let at = random_offset(rng, text);
        let snippet = LENIENT_SNIPPETS[rng.below(LENIENT_SNIPPETS.len())];
        return (text_range(at..at), snippet.to_string());
    }
    typing(rng, text)
}

#[test]
fn an_edit_inside_one_definition_reparses_only_it() {
    let text = "#[version = \"0.0.5\"]\ndef @a() { 1 }\ndef @b() { add(1, 2) }\ndef @c() { 3 }\n";
    let parse = parse_module(text);
    let at = text.find("add(1").unwrap() + 4;
    let new_text = format!("{}, 5{}", &text[..at + 1], &text[at + 1..]);
    let edit = TextEdit::between(text, &new_text).unwrap();
    let (reparsed, how) = reparse_module(&parse, edit, &new_text);
    let b = text.find("def @b").unwrap() as u32;
    assert_eq!(
        how,
        Reparsed::Item {
            old: TextRange::new(b.into(), (b + 22).into()),
            new: TextRange::new(b.into(), (b + 25).into()),
        }
    );
    assert_eq!(reparsed, parse_module(&new_text));
    // The other definitions are the very same green nodes.
    let old_defs: Vec<_> = parse.syntax_node().children().collect();
    let new_defs: Vec<_> = reparsed.syntax_node().children().collect();
    assert_eq!(old_defs[1].green(), new_defs[1].green());
    assert!(std::ptr::eq(old_defs[3].green(), new_defs[3].green()));
}

#[test]
fn an_edit_that_unbalances_a_body_is_parsed_in_full() {
    let text = "#[version = \"0.0.5\"]\ndef @a() { 1 }\ndef @b() { 2 }\n";
    let parse = parse_module(text);
    let at = text.find("{ 1").unwrap() + 1;
    let new_text = format!("{}{{{}", &text[..at], &text[at..]);
    let edit = TextEdit::between(text, &new_text).unwrap();
    let (reparsed, how) = reparse_module(&parse, edit, &new_text);
    assert_eq!(how, Reparsed::Full);
    assert_eq!(reparsed, parse_module(&new_text));
}

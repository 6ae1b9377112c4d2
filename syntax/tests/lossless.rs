//! The tree always gives back its input, byte for byte, and the parser never
//! panics, whatever the text:
//!
//! * property tests on random Unicode, random printable ASCII and random
//!   sequences of Relay-like fragments (at least 10 000 cases each);
//! * seeded random mutations of every corpus file in `../shared/tvm`.
//!
//! The nesting and length limits are tested in `limits.rs`.

use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence, RngAlgorithm};
use relay_syntax::{parse, tokenize, Entry, TextSize};
use std::path::{Path, PathBuf};

/// Parses `text` with both entry points and checks every invariant of the
/// result that does not depend on the input being valid.
fn check(text: &str) {
    let len = TextSize::of(text);
    for entry in [Entry::Module, Entry::Expr] {
        let parse = parse(text, entry);
        let root = parse.syntax_node();
        assert_eq!(
            root.to_string(),
            text,
            "{entry:?}: the tree lost or changed text"
        );
        assert_eq!(root.text_range().len(), len);
        let mut last = TextSize::from(0);
        for error in parse.errors() {
            let range = error.range();
            assert!(
                range.end() <= len,
                "{entry:?}: error past the end: {error:?}"
            );
            assert!(
                text.is_char_boundary(range.start().into())
                    && text.is_char_boundary(range.end().into()),
                "{entry:?}: error range splits a character: {error:?}"
            );
            assert!(range.start() >= last, "{entry:?}: errors are not sorted");
            assert!(!error.message().is_empty());
            last = range.start();
        }
    }
    let (tokens, errors) = tokenize(text);
    let mut offset = 0usize;
    for token in &tokens {
        assert!(token.len > TextSize::from(0), "empty token {token:?}");
        offset += usize::from(token.len);
        assert!(text.is_char_boundary(offset), "a token splits a character");
    }
    assert_eq!(offset, text.len(), "the tokens do not cover the text");
    for error in &errors {
        assert!(usize::from(error.range.end()) <= text.len());
    }
}

// ---- property tests ----

/// Pieces of Relay text, valid and broken, that make the parser take its
/// rarer paths when they are strung together at random.
#[rustfmt::skip]
const FRAGMENTS: &[&str] = &[
    "%x", "%y", "%0", "%1", "%12", "%a/b", "%", "@f", "@main", "@", "(", ")", "{", "}", "[", "]",
    ",", ";", ":", ".", "=", "=>", "= >", "->", "- >", "+", "-", "*", "/", "<", ">", "<=", ">=",
    "==", "!=", "!", "?", "_", "fn", "def", "let", "if", "else", "type", "extern", "match",
    "match?", "free_var", "ref", "ref_read", "ref_write", "True", "False", "None", "nullptr",
    "Tensor", "float32", "int8x4", "bool", "List", "Cons", "Nil", "nn.conv2d", "add", "axis",
    "relay.reshape_only", "Primitive", "virtual_device", "/*", "*/", "**/", "//", "\"", "\"s\"",
    "#", "#[", "#[version = \"0.0.5\"]", "#[version = \"0.0.4\"]", "#[metadata]", "#[foo]",
    "meta[", "meta[relay.Constant][0]", "meta[K][x]", "]", "1", "0", "-1", "--1", "1.5", "1-2",
    "2i64", "1i16", "70000i16", "1i8", "1i", "1f", "0.5f", "1e-05f", "1e999f", "3f16", "2.5f64",
    "1f8", "inff", "-inff", "inffoo", "99999999999999999999", " ", "  ", "\t", "\n", "\r\n", "\r",
    "é", "∀", "\u{0}", "$", "\\", "\"a\\\"b\"",
];

/// Letters, digits and the characters identifiers may hold.
const NAME_CHARS: &[char] = &['a', 'b', 'x', 'y', 'z', 'A', 'T', '_', '/', '0', '1', '9'];
/// Suffixes and tails of numeric literals, valid and not.
const NUMBER_TAILS: &[&str] = &[
    "", "", "i", "i16", "i32", "i64", "i8", "f", "f16", "f32", "f64", "f8", ".5", ".5f", "e5f",
    "e-05f", "E+3", ".", "-2", "i+", "f+",
];

/// A random identifier-like word (which may be a keyword or a dtype).
fn name() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(&["", "int", "float", "uint", "bool", "inf", "meta", "match"][..]),
        prop::collection::vec(proptest::sample::select(NAME_CHARS), 0..5),
    )
        .prop_map(|(prefix, chars)| prefix.chars().chain(chars).collect())
}

/// A random numeric literal, possibly with minus signs and a bad suffix.
fn number() -> impl Strategy<Value = String> {
    (
        0usize..3,
        any::<u64>(),
        0u32..20,
        proptest::sample::select(NUMBER_TAILS),
    )
        .prop_map(|(negs, value, digits, tail)| {
            let digits = if digits < 18 {
                value % 10u64.pow(digits % 6 + 1)
            } else {
                value
            };
            format!("{}{digits}{tail}", "-".repeat(negs))
        })
}

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        10 => proptest::sample::select(FRAGMENTS).prop_map(str::to_string),
        1 => name(),
        1 => number(),
    ]
}

fn relayish() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..48).prop_map(|parts| parts.concat())
}

/// Printable ASCII with tabs and line breaks.
fn ascii() -> impl Strategy<Value = String> {
    let chars: Vec<char> = (b' '..=b'~')
        .map(char::from)
        .chain(['\t', '\n', '\r'])
        .collect();
    prop::collection::vec(proptest::sample::select(chars), 0..160).prop_map(String::from_iter)
}

/// A valid program with random fragments spliced in at random places.
fn spliced() -> impl Strategy<Value = String> {
    const BASE: &str = "#[version = \"0.0.5\"]\n\
        type List[A] { Cons(A, List[A]), Nil }\n\
        def @main(%x: Tensor[(1, ?), float32], %l: List[int32], Primitive=1) -> (float32,) {\n\
        \x20 %0 = nn.conv2d(%x, meta[relay.Constant][0], strides=[1, 2], padding=[[0, 0]]);\n\
        \x20 let %y: float32 = %0.0 + 1f * 2f <= 3f;\n\
        \x20 match? (%l) { Cons(%h, _) => (%y,), (_, %z: int32) => if (%h) { %z } else { ref_read(ref(1)) } }\n\
        }\n";
    prop::collection::vec((0..BASE.len(), fragment(), 0usize..4), 1..6).prop_map(|edits| {
        let mut text = BASE.to_string();
        for (at, piece, delete) in edits {
            let mut at = at.min(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + delete).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            text.replace_range(at..end, &piece);
        }
        text
    })
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Failures are shrunk and printed; the test data stays hand-written.
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        // Much faster than the default ChaCha in unoptimised builds.
        rng_algorithm: RngAlgorithm::XorShift,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(10_000))]

    #[test]
    fn lossless_on_random_unicode(text in prop::collection::vec(any::<char>(), 0..100)
        .prop_map(String::from_iter))
    {
        check(&text);
    }

    #[test]
    fn lossless_on_random_ascii(text in ascii()) {
        check(&text);
    }

    #[test]
    fn lossless_on_relay_fragments(text in relayish()) {
        check(&text);
    }

}

proptest! {
    // Longer texts: fewer cases, for the same time.
    #![proptest_config(config(2_500))]

    #[test]
    fn lossless_on_spliced_programs(text in spliced()) {
        check(&text);
    }
}

// ---- mutations of the corpus ----

fn corpus_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (dir, ext) in [("models", "relay"), ("parser/ok", "relay"), ("std", "rly")] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            eprintln!("!!!!!!!! {dir} is missing from the corpus !!!!!!!!");
            continue;
        };
        files.extend(
            entries
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == ext)),
        );
    }
    files.sort();
    files
}

/// SplitMix64: a small deterministic generator, so that every run mutates
/// the same way.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A char boundary of `text`, at random.
    fn boundary(&mut self, text: &str) -> usize {
        let mut at = self.below(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    }
}

/// The end of the character that starts at `at` (or `at` at the end).
fn char_end(text: &str, at: usize) -> usize {
    text[at..].chars().next().map_or(at, |c| at + c.len_utf8())
}

fn mutate(text: &mut String, rng: &mut Rng) {
    match rng.below(8) {
        // Delete one character.
        0 => {
            let at = rng.boundary(text);
            let end = char_end(text, at);
            text.replace_range(at..end, "");
        }
        // Delete a run of up to 16 characters.
        1 => {
            let at = rng.boundary(text);
            let mut end = at;
            for _ in 0..=rng.below(16) {
                end = char_end(text, end);
            }
            text.replace_range(at..end, "");
        }
        // Insert a random ASCII byte (always valid UTF-8).
        2 => {
            let at = rng.boundary(text);
            let byte = rng.below(128) as u8;
            text.insert(at, byte as char);
        }
        // Insert a fragment of Relay text.
        3 | 4 => {
            let at = rng.boundary(text);
            let piece = FRAGMENTS[rng.below(FRAGMENTS.len())];
            text.insert_str(at, piece);
        }
        // Swap two characters.
        5 => {
            let a = rng.boundary(text);
            let b = rng.boundary(text);
            let (a, b) = (a.min(b), a.max(b));
            let (a_end, b_end) = (char_end(text, a), char_end(text, b));
            if a_end <= b && b < b_end {
                let first = text[a..a_end].to_string();
                let second = text[b..b_end].to_string();
                text.replace_range(b..b_end, &first);
                text.replace_range(a..a_end, &second);
            }
        }
        // Double a line.
        6 => {
            let at = rng.boundary(text);
            let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
            let line = text[start..end].to_string();
            text.insert_str(start, &line);
        }
        // Cut the text short.
        _ => {
            let at = rng.boundary(text);
            text.truncate(at);
        }
    }
}

/// Mutated variants per corpus file.
const VARIANTS: usize = 3;
/// Larger files are cut to a random window of whole lines of about this
/// size before mutating, so that the test stays quick in debug builds.
const WINDOW: usize = 6 * 1024;

/// A random run of whole lines of `text`, about `WINDOW` bytes long.
fn window<'t>(text: &'t str, rng: &mut Rng) -> &'t str {
    if text.len() <= WINDOW {
        return text;
    }
    let mut start = rng.below(text.len() - WINDOW);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let mut end = (start + WINDOW).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    &text[start..end]
}

#[test]
fn lossless_on_mutated_corpus() {
    let Some(root) = relay_test_support::tvm::root_or_skip("lossless corpus mutations") else {
        return;
    };
    let files = corpus_files(&root);
    assert!(
        !files.is_empty(),
        "no corpus files under {}",
        root.display()
    );
    let start = std::time::Instant::now();
    let mut rng = Rng(0x5EED_CAFE);
    let (mut variants, mut bytes) = (0usize, 0usize);
    for path in &files {
        let original = std::fs::read_to_string(path).unwrap();
        for _ in 0..VARIANTS {
            let mut text = window(&original, &mut rng).to_string();
            for _ in 0..=rng.below(3) {
                mutate(&mut text, &mut rng);
            }
            check(&text);
            variants += 1;
            bytes += text.len();
        }
    }
    eprintln!(
        "mutated corpus: {} files, {variants} variants, {:.1} MB parsed twice, in {:.2?}",
        files.len(),
        bytes as f64 / 1e6,
        start.elapsed()
    );
}

#[test]
fn mutations_keep_utf8_and_change_text() {
    let mut rng = Rng(1);
    let mut changed = 0;
    for _ in 0..1000 {
        let mut text = String::from("é∀ %x = add(%y, 1f); // ü\n{ () }");
        let before = text.clone();
        mutate(&mut text, &mut rng);
        changed += usize::from(text != before);
    }
    assert!(
        changed > 900,
        "only {changed} of 1000 mutations changed the text"
    );
}

//! Parses arbitrary text with both entry points and checks that the tree
//! gives back the input byte for byte, and that every error range lies
//! inside the text.
//!
//! Run with `cargo +nightly fuzz run parse` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;
use relay_syntax::{parse, Entry, TextSize};

fuzz_target!(|data: &[u8]| {
    // Invalid UTF-8 is made valid rather than skipped, so that every input
    // the fuzzer tries exercises the parser.
    let text = String::from_utf8_lossy(data);
    let len = TextSize::of(text.as_ref());
    for entry in [Entry::Module, Entry::Expr] {
        let parse = parse(&text, entry);
        let root = parse.syntax_node();
        assert_eq!(root.to_string(), text, "not lossless ({entry:?})");
        assert_eq!(root.text_range().end(), len);
        for error in parse.errors() {
            assert!(error.range().end() <= len, "error past the end: {error:?}");
            assert!(!error.message().is_empty());
        }
    }
});

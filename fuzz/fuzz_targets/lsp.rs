//! A language-server session of random edits and requests, in-process,
//! driven by the input bytes (`relay_tests::fuzz::lsp::lsp_target`).
//!
//! Run with `cargo +nightly fuzz run lsp` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    relay_tests::fuzz::lsp::lsp_target(data);
});

//! Lowers arbitrary text and runs InferType on it: diagnostics inside the
//! text, never a panic; what lowers prints as text that lowers again
//! (`relay_tests::fuzz::targets::infer_target`).
//!
//! Run with `cargo +nightly fuzz run infer` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    relay_tests::fuzz::targets::infer_target(data);
});

//! Parses arbitrary text with both entry points and checks that the tree
//! gives back the input byte for byte, and that every error range lies
//! inside the text (`relay_tests::fuzz::targets::parse_target`).
//!
//! Run with `cargo +nightly fuzz run parse` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| relay_tests::fuzz::targets::parse_target(data));

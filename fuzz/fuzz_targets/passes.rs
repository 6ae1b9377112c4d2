//! Every registered pass on a random well-typed module generated from the
//! input bytes: no panic, and each result type-checks and reads back from
//! its printed text (`relay_tests::fuzz::targets::passes_target`).
//!
//! Run with `cargo +nightly fuzz run passes` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;
use relay_tests::fuzz::targets::{campaign_limits, passes_target};

fuzz_target!(|data: &[u8]| {
    passes_target(data, campaign_limits());
});

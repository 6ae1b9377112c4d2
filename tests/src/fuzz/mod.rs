//! Fuzzing support: a generator of random well-typed Relay modules over the
//! whole operator table, and the bodies of the fuzz targets.
//!
//! It lives in this test-support crate (not in `relay-passes`) because it is
//! test code only: the cargo-fuzz binaries in `fuzz/` and the short stable
//! runs in `tests/tests/fuzz_smoke.rs` both call it, and neither the
//! library nor the `relay` binary should carry it.
//!
//! Every generator draws its choices from an [`Entropy`]: libFuzzer's bytes
//! in a campaign, a seeded sequence in a test loop.

pub mod calls;
pub mod entropy;
pub mod lsp;
pub mod panics;

pub mod program;
pub mod seeded;
pub mod targets;
pub mod typing;

pub use calls::Limits;
pub use entropy::Entropy;
pub use program::{generate, Generated};

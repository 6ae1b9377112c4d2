//! Helpers shared by the tests, examples and benchmarks of every crate of
//! the workspace, so that each concept has one home:
//!
//! * [`tvm`]: where the TVM v0.13 reference data (`../shared/tvm`) is, the
//!   loud skip when it is absent, and reading its pass records;
//! * [`text`]: comparing printed Relay the way
//!   `shared/tools/conformance.py` does (types stripped, trailing white
//!   space ignored, first differing line);
//! * [`files`]: reading and listing test files;
//! * [`run`]: running a built binary (the `relay` CLI) and capturing what
//!   it printed;
//! * [`compare`]: tallying our outputs against TVM's records;
//! * [`generate`]: large generated modules (ResNet networks) for scale
//!   benchmarks and tests;
//! * [`rng`]: the deterministic random numbers of the random-edit tests;
//! * [`edits`]: the random edits of those tests (offsets on character
//!   boundaries, keystrokes);
//! * [`fixtures`]: hand-written module text those tests edit.
//!
//! It depends on no crate of this workspace (only text and files), so any
//! crate can dev-depend on it; helpers that need the IR stay with the tests
//! of `relay-passes` (`passes/tests/common`).

pub mod compare;
pub mod edits;
pub mod files;
pub mod fixtures;
pub mod generate;
pub mod rng;
pub mod run;
pub mod text;
pub mod tvm;

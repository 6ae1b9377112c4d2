//! Relay IR, the operator registry, the printer and the pass infrastructure.
//!
//! Everything that analyses or rewrites Relay lives here; the CLI and the
//! language server in `relay-server` only call into this crate.

pub mod diagnostic;
pub mod dtype;
pub mod eval;
mod fxhash;
pub mod infer;
pub mod ir;
pub mod limits;
pub mod lower;
pub mod meta;
pub mod op;
pub mod printer;
pub mod project;
pub mod source;
pub mod transform;
pub mod transforms;
